//! # diracvi-discrete-dirac
//!
//! One-step maps of discrete Dirac mechanics (\[DDM\] Leok & Ohsawa) for any
//! [`System`](diracvi_geometry::System):
//!
//! * [`LagrangeDirac`] — the (+) discrete Lagrange–Dirac stepper forward in
//!   time (\[DDM\] 5.3b) and the (−) stepper backward in time (\[DDM\] 5.9b), with
//!   or without nonholonomic constraints, degenerate Lagrangians (the LC
//!   circuit of \[DDM\] §6) included;
//! * [`NonholonomicHamiltonian`] — the (+) and (−) discrete nonholonomic
//!   Hamiltonian steppers (\[DDM\] 5.6b, 5.12b) with the symplectic-Euler
//!   generating functions `H_{d±}` built from `H`, or user-supplied ones;
//! * [`newton`] — the shared Newton solver ([`Newton`]: AD Jacobians,
//!   simplified Newton with kept factors, statistics in [`NewtonInfo`]) over
//!   a [`LinearSolver`] from [`linear`] (today [`DenseLu`], a dense LU with a
//!   rank-revealing faer fallback; a sparse LU plugs in as another
//!   implementation);
//! * [`dynamic`] — the same steppers and driver for systems sized at run
//!   time ([`diracvi_geometry::dynamic::DynSystem`]);
//! * [`trajectory`] — a driver over `N` steps recording decimated
//!   `(k, t, q, p, energy, constraint residual)`.
//!
//! A stepper knows nothing of impacts; `diracvi-impact` wraps it.
//!
//! ## Example
//!
//! A harmonic oscillator `L = ½ v² − ½ q²` with the midpoint discrete
//! Lagrangian (second order, symplectic): 1 000 steps of `h = 0.01` from
//! `q = 1, v = 0` stay within `h²/8` of the exact `cos t` and keep the
//! energy `½` to round-off relative to its `O(h²)` oscillation.
//!
//! ```
//! use diracvi_discrete_dirac::{Direction, LagrangeDirac, RunOptions, simulate, state_from_velocity};
//! use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, SMatrix, SVector, System};
//!
//! struct Oscillator;
//! impl System<1, 0> for Oscillator {
//!     fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 1>, v: &SVector<S, 1>) -> S {
//!         (v[0] * v[0] - q[0] * q[0]) * 0.5
//!     }
//!     fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 1>) -> SMatrix<S, 0, 1> {
//!         SMatrix::zeros()
//!     }
//! }
//!
//! let mut stepper = LagrangeDirac::new(
//!     Oscillator,
//!     Discretization::Midpoint,
//!     ConstraintDiscretization::Midpoint, // unused: no constraints
//!     Direction::Forward,
//! );
//! let start = state_from_velocity(&Oscillator, 0.0, &SVector::from([1.0]), &SVector::from([0.0]))?;
//! let (h, steps) = (0.01, 1000);
//! let run = simulate(&mut stepper, start, h, RunOptions::new(steps))?;
//! let end = run.summary.final_state;
//! assert!((end.t - 10.0).abs() < 1e-12);
//! assert!((end.q[0] - 10f64.cos()).abs() < h * h);
//! // the discrete energy oscillates by O(h²) and does not drift
//! assert!(run.summary.max_abs_energy_deviation < h * h);
//! assert_eq!(run.records.len(), steps + 1); // k = 0, 1, …, 1000
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![doc = include_str!("../../../docs/dependent-profile.md")]

pub mod assembly;
pub mod composition;
pub mod dynamic;
pub mod error;
pub mod hamiltonian;
pub mod lagrange_dirac;
pub mod linear;
pub mod newton;
pub mod sparse_lu;
mod state;
pub mod structured_lu;
pub mod substep;
pub mod trajectory;

pub use assembly::{JacobianStorage, StepJacobian};
pub use composition::{Composed, Composition, constrained_velocity, continuous_measures};
pub use error::{Located, StepError};
pub use hamiltonian::{DiscreteHamiltonian, NonholonomicHamiltonian, SymplecticEuler};
pub use lagrange_dirac::{LagrangeDirac, OrientedStep};
pub use linear::{DenseLu, LinearSolver};
pub use newton::{Newton, NewtonInfo, NewtonParams, StepStats};
pub use sparse_lu::{SparseJacobian, SparseLu, SparsePattern};
pub use state::{
    Direction, DynState, State, momentum_unit, state_from_pair, state_from_velocity, vci_pair,
};
pub(crate) use state::{PositionCarry, pack, unpack, validate_step};
pub use structured_lu::{Structure, StructuredLu};
pub use substep::{SubStep, SubStepper};
pub use trajectory::{
    OneStep, Record, RunOptions, StepEvent, Summary, Trajectory, integrate, simulate,
};
