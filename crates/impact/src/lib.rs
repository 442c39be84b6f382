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
//!    * [`ContinuousElasticLaw`] (the composed higher-order steppers,
//!      docs/theory.md §9.3): the exact elastic law of the continuous
//!      system at `q̃`, `p⁺ = p⁻ + λ dg + A(q̃)ᵀ ν` with `A(q̃) v⁺ = 0` and
//!      `E(q̃, v⁺) = E(q̃, v⁻)`, reflected root;
//!    * [`RejectCrossing`]: an error at the first crossing ([`OrReject`]
//!      chooses between a law and this one at run time);
//! 4. continue from `(q̃, p̃⁺)` over the rest of the step; if the path is
//!    again inadmissible, repeat, at most
//!    [`ImpactParams::max_impacts_per_step`] times, then
//!    [`ImpactError::TooManyImpacts`].
//!
//! Every impact is recorded as an [`ImpactEvent`] with the momenta before and
//! after (consistent with `∂L/∂v`; the law's raw post-impact momentum, with
//! the impulsive constraint reaction, as `p_after_raw`).
//!
//! ## Example
//!
//! A unit-mass particle dropped from `y = 2` onto the floor `y ≥ 0` under
//! gravity `9.8`, moving sideways at 1 m/s: from the model to the events and
//! the summary. The first impact is at `t* = √(2·2/9.8)`; with the midpoint
//! discretization and `h = 10⁻³` the impact time is found to `O(h²)`, the
//! particle flies back up, and the discrete energy is kept up to `O(h²)`.
//!
//! ```
//! use diracvi_discrete_dirac::{Direction, LagrangeDirac, RunOptions, simulate, state_from_velocity};
//! use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, SMatrix, SVector, System};
//! use diracvi_impact::ImpactIntegrator;
//!
//! /// q = (x, y), L = ½|v|² − 9.8 y, admissible set y ≥ 0.
//! #[derive(Clone)]
//! struct Particle;
//! impl System<2, 0> for Particle {
//!     fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
//!         v.dot(v) * 0.5 - q[1] * 9.8
//!     }
//!     fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
//!         SMatrix::zeros()
//!     }
//!     fn boundary_count(&self) -> usize { 1 }
//!     fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 2>) -> S { q[1] }
//! }
//!
//! // the (+) Lagrange–Dirac stepper, wrapped with its impact law (VCI Thm 3.1)
//! let stepper = LagrangeDirac::new(
//!     Particle,
//!     Discretization::Midpoint,
//!     ConstraintDiscretization::Midpoint,
//!     Direction::Forward,
//! );
//! let mut integrator = ImpactIntegrator::new(stepper);
//! let start = state_from_velocity(&Particle, 0.0, &SVector::from([0.0, 2.0]), &SVector::from([1.0, 0.0]))?;
//! let h = 1e-3;
//! let run = simulate(&mut integrator, start, h, RunOptions::new(1000).every(0))?;
//!
//! let t_star = (2.0 * 2.0 / 9.8f64).sqrt();
//! assert_eq!(run.events.len(), 1);
//! let impact = &run.events[0];
//! assert_eq!(impact.piece, 0);
//! assert!((impact.t - t_star).abs() < h * h);
//! assert!(impact.q[1].abs() < 1e-12);                 // on the floor
//! assert!(impact.p_before[1] < 0.0 && impact.p_after[1] > 0.0); // reflected
//! assert!((impact.p_after[0] - impact.p_before[0]).abs() < 1e-12); // tangential kept
//! assert!((impact.energy_after - impact.energy_before).abs() < 1e-12 * impact.energy_before.abs());
//! let s = &run.summary;
//! // the discrete energy moves by O(h²) at the impact step only (4.5e-7 relative here)
//! assert!(s.max_abs_energy_deviation < h * h * s.initial_energy.abs());
//! // at t = 1 the particle flies up again: y(1) = v⁺ (1 − t*) − 4.9 (1 − t*)²
//! let (v_up, dt) = (9.8 * t_star, 1.0 - t_star);
//! assert!((s.final_state.q[1] - (v_up * dt - 4.9 * dt * dt)).abs() < 1e-5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
#![doc = include_str!("../../../docs/dependent-profile.md")]

mod brent;
pub mod dynamic;
mod elastic;
mod hamiltonian_law;
mod integrator;
mod law;
mod path;
mod reconstruct;
mod vci;

pub use elastic::ContinuousElasticLaw;
pub use hamiltonian_law::HamiltonianLaw;
pub use integrator::{
    ComposedImpacts, HamiltonianImpacts, ImpactError, ImpactEvent, ImpactIntegrator, ImpactParams,
    LagrangeDiracImpacts,
};
pub use law::{ImpactLaw, ImpactSite, OrReject, Rebound, RejectCrossing};
pub use reconstruct::Reconstructing;
pub use vci::VciLaw;
