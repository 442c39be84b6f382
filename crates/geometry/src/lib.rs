//! # diracvi-geometry
//!
//! The vocabulary every other diracvi crate speaks:
//!
//! * [`System`] — the trait a user implements to describe a mechanical or
//!   electrical system: a Lagrangian `L(q, v)` written once and generic over
//!   an automatic-differentiation scalar ([`AdScalar`]), the constraint
//!   one-forms `ω^a(q) = A^a_i(q) dq^i` (`m × n`, `m` may be 0), the pieces
//!   `g_j(q) ≥ 0` of the admissible set, an optional Hamiltonian.
//! * [`retraction`] — retractions `R_q(v)` on `R^n`, angles, SE(2) and S²,
//!   each with its inverse (\[DDM\] §9.1).
//! * [`lie`] — rotations in space: SO(3) by unit quaternions `q ∈ S³ ⊂ R⁴`
//!   with the group retractions [`So3Cayley`] and [`So3Exp`]
//!   (`R_q(v) = q ⊗ τ(Im(q⁻¹ ⊗ v))`, inverses defined for rotations by less
//!   than `π`), SE(3) as quaternion × R³ ([`Se3`]), the symmetric
//!   discretization map [`LieMidpoint`] (geodesic midpoint, order 2 with the
//!   symmetric stepper), and quaternion helpers (body and spatial angular
//!   velocity and momentum, `R(q) x`).
//! * [`discretization`] — discretization maps `Ψ_d^h = (R̃^h)^{-1}` (forward
//!   and midpoint, or forward through any retraction).
//! * [`discrete_lagrangian`] — `L_d(q0, q1, h) = h L(Ψ_d^h(q0, q1))` with exact
//!   first and second derivatives `D1, D2, D3, D12, D22, D23, …` from
//!   automatic differentiation (num-dual), never finite differences.
//! * [`constraint`] — discrete constraints `ω_{d±}` (\[DDM\] eq. 4.2), the
//!   symmetric midpoint constraint, or a model's own.
//! * [`boundary`] — `dg_j(q)`, an orthonormal basis of `ker dg_j(q)` and
//!   `ι*` (\[VCI\] §3).
//! * [`dynamic`] — the same for systems whose size is known only at run time
//!   ([`dynamic::DynSystem`]; every [`System`] is one through
//!   [`dynamic::Fixed`]), with derivatives in chunks of directions.
//! * [`symmetry`] — abelian symmetries by coordinate shifts
//!   ([`CyclicSymmetry`], checked) and the reduced system on shape space
//!   ([`Reduced`]: Routh or Chaplygin, \[RED\] §4), with reconstruction.
//!
//! Papers: **\[DDM\]** Leok & Ohsawa, *Variational and geometric structures of
//! discrete Dirac mechanics*; **\[VCI\]** *Variational collision integrators for
//! nonholonomic systems*; **\[NIC\]** *Nonholonomic systems with inequality
//! constraints*.
//!
//! Conventions: configurations live in a retraction-compatible chart, so `q` is
//! a vector in `R^n`; angles are plain real coordinates (never wrapped inside
//! the numerics). Time is in the model's time unit; `h > 0` always.
//!
#![doc = include_str!("../../../docs/dependent-profile.md")]

pub mod ad;
pub mod boundary;
pub mod constraint;
pub mod discrete_lagrangian;
pub mod discretization;
pub mod dynamic;
mod error;
pub mod lie;
pub mod retraction;
pub mod symmetry;
mod system;

pub use boundary::{
    BoundaryFrame, TOUCH_TOLERANCE, boundary_gradient, min_boundary, touch_band, violated_piece,
};
pub use constraint::ConstraintDiscretization;
pub use discrete_lagrangian::{DiscreteLagrangian, LdJet, LdTimeJet, Orientation};
pub use discretization::{Discretization, DiscretizationMap, EndPoint, RetractionForward};
pub use error::{GeometryError, ensure_finite, ensure_step};
pub use lie::{LieMidpoint, MidpointRetraction, QuaternionRetraction, Se3, So3Cayley, So3Exp};
pub use retraction::{Angles, Euclidean, Retraction, Se2, Sphere};
pub use symmetry::{CyclicSymmetry, Invariant, Reduced, ReductionKind, SymmetryError};
pub use system::{
    AdScalar, CONSTRAINT_TOLERANCE, System, check_initial, legendre_jet, velocity_from_momentum,
};

pub use nalgebra::{SMatrix, SVector};
/// The automatic-differentiation crate used for all derivatives.
pub use num_dual;
