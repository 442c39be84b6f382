//! # diracvi-impact
//!
//! A trajectory integrator with elastic impacts against the boundary of the
//! admissible set `S = { q : g_j(q) ≥ 0 }` (\[VCI\] Algorithm 1 with the
//! readings of docs/theory.md §4). [`ImpactIntegrator`] is generic over the
//! one-step map (any [`SubStepper`](diracvi_discrete_dirac::SubStepper): the
//! (+) stepper forward in time, the (−) stepper backward) and over the
//! [`ImpactLaw`] of its family; it knows nothing of any model: it sees the
//! [`System`](diracvi_geometry::System) trait only.
//!
//! Per grid step (oriented as in [`diracvi_discrete_dirac::lagrange_dirac`]):
//! 1. take a sub-step `a → b`; accept it if every `g_j(b) ≥ 0` and no piece
//!    dips below zero inside it (a cubic Hermite test on `g_j` flags
//!    near-grazing steps, which are then searched);
//! 2. otherwise find the first crossing: `q̃(α)` solves the sub-step with size
//!    `α h` (trial solves that leave the steps' warm start untouched);
//!    `α ∈ (0, 1)` with `g_j(q̃(α)) = 0` is bracketed by sampling and refined
//!    with argmin's `BrentRoot`; the smallest `α` over the pieces wins;
//! 3. the law resolves the impact at `q̃` and returns the post-impact
//!    momentum and sub-step:
//!    * [`VciLaw`] (Lagrange–Dirac, \[VCI\] Theorem 3.1): solve for
//!      `(ṽ, λ̃)` from `D3 L_d(a, q̃, α h) = D3 L_d(q̃, ṽ, (1−α) h)`,
//!      `ι*(D1 L_d(q̃, ṽ, (1−α) h) − A(q̃)ᵀ λ̃) + ι*(D2 L_d(a, q̃, α h)) = 0`,
//!      `ω_d(q̃, ṽ) = 0`, reflected root `dg(q̃)·(ṽ − q̃) > 0`;
//!    * [`HamiltonianLaw`] (nonholonomic Hamiltonian steppers): the jump
//!      `p̃⁺ = p̃⁻ + ν dg/|dg|` with the discrete energy `∂H_{d+}/∂h` of the
//!      two sub-steps balanced, reflected root;
//!    * [`RejectCrossing`]: an error at the first crossing;
//! 4. continue from `(q̃, p̃⁺)` over the rest of the step; if the path is
//!    again inadmissible, repeat, at most
//!    [`ImpactParams::max_impacts_per_step`] times, then
//!    [`ImpactError::TooManyImpacts`].
//!
//! Every impact is recorded as an [`ImpactEvent`] with the momenta before and
//! after (consistent with `∂L/∂v`; the law's raw post-impact momentum, with
//! the impulsive constraint reaction, as `p_after_raw`).

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
