//! Starting a run from a momentum: the initial data `(q, v)` of a scenario
//! whose run starts from a given phase-space state `(q, p)` — a final
//! state run back in time (a forward/backward round trip), a state from
//! another program.

use crate::RunError;
use diracvi_discrete_dirac::dynamic::dyn_constrained_velocity;
use diracvi_models::{DynModelVisitor, DynRunSetup, ModelError, NamedDynSystem, Scenario};
use nalgebra::DVector;

/// The velocity a run needs to start from the momentum `p` at `q`.
#[derive(Debug, Clone, PartialEq)]
pub struct StartFromMomentum {
    /// `v` on the constraint distribution, `A(q) v = 0`, with
    /// `∂L/∂v(q, v) = p + A(q)ᵀ ν`: set `scenario.initial = (q, v)`.
    pub v: Vec<f64>,
    /// The multipliers `ν` (one per constraint row): the run starts from
    /// `p₀ = ∂L/∂v(q, v) = p + A(q)ᵀ ν`, which is `p` itself when `ν = 0`
    /// (`p` in the image of the constrained Legendre map) and otherwise
    /// differs from it by a constraint force.
    pub multipliers: Vec<f64>,
}

/// The initial velocity of a run of `scenario` that starts from the
/// phase-space state `(q, p)`: the constrained Legendre map inverted at `q`
/// (docs/theory.md §8.7), `∂L/∂v(q, v) = p + A(q)ᵀ ν`, `A(q) v = 0`, by
/// Newton on the KKT system. It also covers degenerate Lagrangians whose
/// Hessian is regular on the constraint distribution (the rigid bodies
/// with a quaternion, whose `∂²L/∂v²` annihilates `q`). Runs start from
/// `p₀ = ∂L/∂v(q(0), v(0))`, so with `scenario.initial.q = q`,
/// `scenario.initial.v = v` a run starts from `(q, p + A(q)ᵀ ν)`.
///
/// # Errors
/// [`RunError::Model`] when the scenario's model cannot be built
/// ([`ModelError::WrongLength`] for a `q` or `p` of the wrong length);
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
        type Output = Result<StartFromMomentum, RunError>;
        fn visit<Mo: NamedDynSystem>(self, model: &Mo, _setup: &DynRunSetup) -> Self::Output {
            let n = model.coordinate_count();
            for (what, x) in [("q", self.q), ("p", self.p)] {
                if x.len() != n {
                    return Err(RunError::Model(ModelError::WrongLength {
                        what,
                        expected: n,
                        got: x.len(),
                    }));
                }
            }
            let (v, nu) = dyn_constrained_velocity(
                model,
                &DVector::from_column_slice(self.q),
                &DVector::from_column_slice(self.p),
            )
            .map_err(|error| RunError::InitialState { error })?;
            Ok(StartFromMomentum {
                v: v.as_slice().to_vec(),
                multipliers: nu.as_slice().to_vec(),
            })
        }
    }
    scenario.visit_dyn(Invert { q, p })?
}
