//! # diracvi-impact
//!
//! A trajectory integrator with elastic impacts against the boundary of the
//! admissible set `S = { q : g_j(q) ≥ 0 }` (\[VCI\] Algorithm 1 and Theorem 3.1
//! with the readings of docs/theory.md §4). It wraps the (+) Lagrange–Dirac stepper
//! forward in time or the (−) stepper backward in time and knows nothing of
//! any model: it sees the [`System`](diracvi_geometry::System) trait only.
//!
//! Per grid step (oriented as in [`diracvi_discrete_dirac::lagrange_dirac`]):
//! 1. take a step `a → b`; accept it if every `g_j(b) ≥ 0` and no piece dips
//!    below zero inside the step (a cubic Hermite test on `g_j` flags
//!    near-grazing steps, which are then searched);
//! 2. otherwise find the first crossing: `q̃(α)` solves the step with size
//!    `α h`; `α ∈ (0, 1)` with `g_j(q̃(α)) = 0` is bracketed by sampling and
//!    refined with argmin's `BrentRoot`; the smallest `α` over the pieces wins;
//! 3. `p̃ = ι*_{q̃}(D2 L_d(a, q̃, α h))`;
//! 4. solve for `(ṽ, λ̃)`: `D3 L_d(a, q̃, α h) = D3 L_d(q̃, ṽ, (1−α) h)`,
//!    `ι*(D1 L_d(q̃, ṽ, (1−α) h) − A(q̃)ᵀ λ̃) + p̃ = 0`, `ω_d(q̃, ṽ) = 0`, taking
//!    the reflected root (`dg(q̃)·(ṽ − q̃) > 0`, Newton started from the
//!    mirror image of the pass-through point);
//! 5. `q_{k+1} = ṽ`, `p_{k+1} = D2 L_d(q̃, ṽ, (1−α) h)`;
//! 6. if `ṽ` is again inadmissible, repeat inside the remaining sub-step, at
//!    most [`ImpactParams::max_impacts_per_step`] times, then
//!    [`ImpactError::TooManyImpacts`].

mod hamiltonian_law;
mod integrator;
mod law;
mod vci;

pub use hamiltonian_law::HamiltonianLaw;
pub use integrator::{
    HamiltonianImpacts, ImpactError, ImpactEvent, ImpactIntegrator, ImpactParams,
    LagrangeDiracImpacts,
};
pub use law::{ImpactLaw, ImpactSite, Rebound, RejectCrossing};
pub use vci::VciLaw;
