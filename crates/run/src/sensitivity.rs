//! The data of a run's parameter sensitivities (docs/theory.md §12.4): the
//! direction of each parameter asked for in the system's parameter space
//! and the derivative of the initial state `(q_0, p_0)` along it, with
//! `p_0 = ∂L/∂v(q_0, v_0; θ)`.

use crate::RunError;
use diracvi_geometry::dynamic::DynSystem;
use diracvi_models::{DynRunSetup, NamedDynSystem, ParameterSeedError};
use nalgebra::DMatrix;
use num_dual::{Dual64, HyperDual64};

/// The catalogued models the repository ships a model file of, as
/// `models/<name>.toml` (checked by the tests of the run crate): the file
/// to run instead when a catalogued model is asked for sensitivities.
pub const MODEL_FILE_TWINS: &[&str] = &[
    "particle",
    "ellipse",
    "star",
    "pendulum",
    "disk-wall",
    "disk-table",
    "lc",
    "heavy-top",
    "chaplygin-sphere",
    "bouncing-body",
];

/// What the integrator needs to track the sensitivities: the parameter
/// directions `D` (`P × r`) and `∂(q_0, p_0)/∂θ · D` (`2n × r`).
pub(crate) struct Seeds {
    pub(crate) directions: DMatrix<f64>,
    pub(crate) initial: DMatrix<f64>,
}

/// The refusal for a system that cannot be differentiated in its
/// parameters.
fn not_differentiable(model: &str) -> RunError {
    let hint = if MODEL_FILE_TWINS.contains(&model) {
        format!(
            "; run its model file instead, e.g. `diracvi run --model-file models/{model}.toml \
             --sensitivity NAME`"
        )
    } else {
        "; write the model as a model file (docs/model-files.md) and run it with --model-file"
            .to_owned()
    };
    RunError::SensitivityUnsupported {
        model: model.to_owned(),
        what: format!(
            "for this model: its parameters are compiled-in numbers, not automatic-\
             differentiation variables (only model files, --model-file, can be differentiated \
             in their parameters){hint}"
        ),
    }
}

/// The seeds of the parameters `names` of `model` at the run's initial
/// data.
///
/// # Errors
/// [`RunError::SensitivityUnsupported`] for a system without
/// differentiable parameters (a catalogued model),
/// [`RunError::UnknownSensitivityParameter`] for a name it does not have
/// (listing the valid ones).
pub(crate) fn seeds<Mo: NamedDynSystem>(
    model: &Mo,
    setup: &DynRunSetup,
    names: &[String],
) -> Result<Seeds, RunError> {
    let n = model.coordinate_count();
    let p = model.parameter_count();
    let r = names.len();
    let mut directions = DMatrix::zeros(p, r);
    let mut initial = DMatrix::zeros(2 * n, r);
    for (k, name) in names.iter().enumerate() {
        let seed = model
            .parameter_seed(name, &setup.q0, &setup.v0)
            .map_err(|e| match e {
                ParameterSeedError::NotDifferentiable => not_differentiable(model.name()),
                ParameterSeedError::Unknown { valid } => RunError::UnknownSensitivityParameter {
                    model: model.name().to_owned(),
                    name: name.clone(),
                    valid,
                },
                ParameterSeedError::Undefined { reason } => RunError::SensitivityUnsupported {
                    model: model.name().to_owned(),
                    what: format!("for {name}: {reason}"),
                },
            })?;
        if seed.direction.len() != p || p == 0 {
            return Err(not_differentiable(model.name()));
        }
        for i in 0..p {
            directions[(i, k)] = seed.direction[i];
        }
        refuse_off_constraint(model, name, setup, &seed.q0, &seed.v0, &seed.direction)?;
        let dp = momentum_direction(
            model,
            setup.q0.as_slice(),
            setup.v0.as_slice(),
            &seed.q0,
            &seed.v0,
            &seed.direction,
        );
        for i in 0..n {
            initial[(i, k)] = seed.q0[i];
            initial[(n + i, k)] = dp[i];
        }
    }
    Ok(Seeds {
        directions,
        initial,
    })
}

/// Refuse a parameter whose direction `(dq, dv, dθ)` leaves the constraint
/// at the initial data: the rate `d/dε [A(q0 + ε dq; θ + ε dθ)(v0 + ε dv)]`
/// of some row is not zero (round-off aside), so every perturbed run would
/// start off the constraint — which a run with `--set` of that parameter
/// refuses as inadmissible. With the dependent velocities marked `"solve"`
/// (or written as expressions of the parameters) the direction stays on it.
fn refuse_off_constraint<Mo: NamedDynSystem>(
    model: &Mo,
    name: &str,
    setup: &DynRunSetup,
    dq: &[f64],
    dv: &[f64],
    dtheta: &[f64],
) -> Result<(), RunError> {
    let (n, m) = (model.coordinate_count(), model.constraint_count());
    if m == 0 {
        return Ok(());
    }
    let along = |x: &[f64], dx: &[f64]| -> Vec<Dual64> {
        x.iter().zip(dx).map(|(&a, &b)| Dual64::new(a, b)).collect()
    };
    let q = along(setup.q0.as_slice(), dq);
    let v = along(setup.v0.as_slice(), dv);
    let theta = along(&model.parameter_values(), dtheta);
    let mut forms = vec![Dual64::from(0.0); m * n];
    model.constraint_forms_with(&q, &theta, &mut forms);
    for a in 0..m {
        let row = &forms[a * n..(a + 1) * n];
        let value = row
            .iter()
            .zip(&v)
            .fold(Dual64::from(0.0), |acc, (x, y)| acc + *x * *y);
        // the size of the terms the rate is made of
        let scale = row
            .iter()
            .zip(&v)
            .map(|(x, y)| (x.re * y.eps).abs() + (x.eps * y.re).abs())
            .fold(0.0_f64, f64::max);
        if value.eps.abs() > 1e-9 * scale.max(1.0) {
            return Err(RunError::SensitivityUnsupported {
                model: model.name().to_owned(),
                what: format!(
                    "for `{name}`: it moves the constraint at the initial data — \
                     d/d{name} of {} at (q0, v0) is {:e}, not 0 — so the perturbed runs would \
                     start off the constraint (as `--set {name}=…` runs are refused); mark the \
                     dependent initial velocities \"solve\" in [initial] (or write them as \
                     expressions of the parameters) so that they follow `{name}` \
                     (docs/model-files.md)",
                    model.constraint_name(a),
                    value.eps
                ),
            });
        }
    }
    Ok(())
}

/// The change of `p = ∂L/∂v(q, v; θ)` along `(dq, dv, dθ)` at `(q, v, θ₀)`:
/// `∂²L/∂v∂q dq + ∂²L/∂v² dv + ∂²L/∂v∂θ dθ`, exact (hyper-dual numbers:
/// `ε₁` on `v_i`, `ε₂` along the change; one evaluation of `L` per `i`).
pub fn momentum_direction<Sy: DynSystem>(
    system: &Sy,
    q: &[f64],
    v: &[f64],
    dq: &[f64],
    dv: &[f64],
    dtheta: &[f64],
) -> Vec<f64> {
    let theta = system.parameter_values();
    let along = |x: &[f64], dx: &[f64]| -> Vec<HyperDual64> {
        x.iter()
            .zip(dx)
            .map(|(&a, &b)| HyperDual64::new(a, 0.0, b, 0.0))
            .collect()
    };
    let qd = along(q, dq);
    let td = along(&theta, dtheta);
    (0..q.len())
        .map(|i| {
            let mut vd = along(v, dv);
            vd[i].eps1 = 1.0;
            system.lagrangian_with(&qd, &vd, &td).eps1eps2
        })
        .collect()
}
