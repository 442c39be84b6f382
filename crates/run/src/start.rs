//! Starting a run from a momentum: the initial data `(q, v)` of a scenario
//! whose run starts from a given phase-space state `(q, p)` — a final
//! state run back in time (a forward/backward round trip), a state from
//! another program.

use crate::RunError;
use diracvi_discrete_dirac::StepError;
use diracvi_discrete_dirac::dynamic::{
    DynLagrangeDirac, dyn_constrained_velocity, dyn_state_from_velocity,
};
use diracvi_geometry::{ConstraintDiscretization, Discretization};
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

/// Initial data violating a hidden constraint by more than this (relative
/// to the scale of the step equations: the momenta; for a circuit, of the
/// loop's largest voltage and 1 V) are refused before a run
/// ([`check_consistent_start`]).
pub const INCONSISTENT_START_ABOVE: f64 = 1e-6;

/// Refuse initial data that violate a hidden constraint of a system with
/// algebraic variables (a Lagrangian degenerate on the constraint
/// distribution, docs/theory.md §3.9): no solution starts there. The
/// forward map's (+) step checks its start against the hidden constraints
/// by itself (its first solve fails at the Newton tolerance); the (−) step
/// and the midpoint map do not (the (−) step's hidden constraint lives at
/// its end, the midpoint map's at midpoints), and from violated data they
/// would jump onto the consistent set, or carry the violation along as an
/// alternating mode, without a word. So the start of every run of a system
/// with algebraic variables (the regularity test of `describe`, sparse for
/// a large sparse system) is checked with one trial (+) step of the
/// forward map, and a violation above [`INCONSISTENT_START_ABOVE`] is
/// [`RunError::InconsistentStart`] (whatever the direction and the
/// scheme). Other failures of that trial step are left to the run itself.
///
/// # Errors
/// [`RunError::InconsistentStart`]; [`RunError::Model`] when the model
/// cannot be built.
pub(crate) fn check_consistent_start(scenario: &Scenario) -> Result<(), RunError> {
    struct Check;
    impl DynModelVisitor for Check {
        type Output = Option<f64>;
        fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Option<f64> {
            // Regular on `ker A(q0)`: no algebraic variables, no step.
            if crate::dyn_runner::regular_at_dyn(model, setup).1 {
                return None;
            }
            let start = dyn_state_from_velocity(model, 0.0, &setup.q0, &setup.v0).ok()?;
            let mut stepper = DynLagrangeDirac::plus(
                model,
                Discretization::Forward,
                ConstraintDiscretization::Retraction,
            );
            let guess = DVector::zeros(start.q.len());
            let residual = match stepper.solve_trial(0.0, &start.q, &start.p, setup.h, &guess) {
                Err(StepError::Inconsistent { residual, .. }) => residual,
                _ => return None,
            };
            (residual > INCONSISTENT_START_ABOVE).then_some(residual)
        }
    }
    match scenario.visit_dyn(Check)? {
        Some(residual) => Err(RunError::InconsistentStart {
            model: scenario.model.clone(),
            residual,
        }),
        None => Ok(()),
    }
}
