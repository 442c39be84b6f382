//! Starting a run from a momentum: the initial data `(q, v)` of a scenario
//! whose run starts from a given phase-space state `(q, p)` — a final
//! state run back in time (a forward/backward round trip), a state from
//! another program.

use crate::RunError;
use diracvi_discrete_dirac::dynamic::dyn_constrained_velocity;
use diracvi_models::{DynModelVisitor, DynRunSetup, ModelError, NamedDynSystem, Scenario};
use nalgebra::DVector;

/// A run that starts from the momentum `p` at `q`: the scenario to run and
/// the velocity and multipliers solved for it.
#[derive(Debug, Clone, PartialEq)]
pub struct StartFromMomentum {
    /// The scenario given, with `initial = (q, v)`: its run starts from
    /// `(q, p + A(q)ᵀ ν)`.
    pub scenario: Scenario,
    /// `v` on the constraint distribution, `A(q) v = 0`, with
    /// `∂L/∂v(q, v) = p + A(q)ᵀ ν`: set `scenario.initial = (q, v)`.
    pub v: Vec<f64>,
    /// The multipliers `ν` (one per constraint row): the run starts from
    /// `p₀ = ∂L/∂v(q, v) = p + A(q)ᵀ ν`, which is `p` itself when `ν = 0`
    /// (`p` in the image of the constrained Legendre map) and otherwise
    /// differs from it by a constraint force.
    pub multipliers: Vec<f64>,
}

/// A run of `scenario` that starts from the phase-space state `(q, p)`:
/// `q` set and `v` solved from the constrained Legendre map inverted at `q`
/// (docs/theory.md §8.7), `∂L/∂v(q, v) = p + A(q)ᵀ ν`, `A(q) v = 0`, by
/// Newton on the KKT system. It also covers degenerate Lagrangians whose
/// Hessian is regular on the constraint distribution (the rigid bodies
/// with a quaternion, whose `∂²L/∂v²` annihilates `q`). Runs start from
/// `p₀ = ∂L/∂v(q(0), v(0))`, so the returned scenario starts from
/// `(q, p + A(q)ᵀ ν)`. The model is built (and its initial data checked) at
/// `q` with `v = 0`, admissible whatever the constraints; the other fields
/// of `scenario` (parameters, step, …) are kept.
///
/// # Errors
/// [`RunError::CircuitUnsupported`] for a circuit (it starts from its
/// netlist's initial conditions); [`RunError::Model`] when the model cannot
/// be built at `q` ([`ModelError::WrongLength`] for a `q` or `p` of the
/// wrong length);
/// [`RunError::InitialState`] when the map cannot be inverted (singular KKT
/// matrix, no convergence, non-finite `q` or `p`).
pub fn start_from_momentum(
    scenario: &Scenario,
    q: &[f64],
    p: &[f64],
) -> Result<StartFromMomentum, RunError> {
    struct Invert<'a> {
        q: &'a [f64],
        p: &'a [f64],
    }
    impl DynModelVisitor for Invert<'_> {
        type Output = Result<(Vec<f64>, Vec<f64>), RunError>;
        fn visit<Mo: NamedDynSystem>(self, model: &Mo, _setup: &DynRunSetup) -> Self::Output {
            let (v, nu) = dyn_constrained_velocity(
                model,
                &DVector::from_column_slice(self.q),
                &DVector::from_column_slice(self.p),
            )
            .map_err(|error| RunError::InitialState { error })?;
            Ok((v.as_slice().to_vec(), nu.as_slice().to_vec()))
        }
    }
    if scenario.circuit.is_some() {
        return Err(RunError::CircuitUnsupported {
            model: scenario.model.clone(),
            what: "a start from a momentum (a circuit starts from its netlist's initial conditions)",
        });
    }
    let n = scenario.initial.q.len();
    for (what, x) in [("q", q), ("p", p)] {
        if x.len() != n {
            return Err(RunError::Model(ModelError::WrongLength {
                what,
                expected: n,
                got: x.len(),
            }));
        }
    }
    let mut started = scenario.clone();
    started.set("q", &list(q))?;
    started.set("v", &list(&vec![0.0; n]))?;
    let (v, multipliers) = started.visit_dyn(Invert { q, p })??;
    started.set("v", &list(&v))?;
    Ok(StartFromMomentum {
        scenario: started,
        v,
        multipliers,
    })
}

/// `x` as [`Scenario::set`] reads a list: comma-separated, each number
/// printed so that it parses back exactly.
fn list(x: &[f64]) -> String {
    x.iter()
        .map(|x| format!("{x:?}"))
        .collect::<Vec<_>>()
        .join(",")
}
