//! # Independent reference solutions
//!
//! Exact or high-accuracy solutions of the catalogue's continuous problems
//! (docs/theory.md §5, "Exact or high-accuracy references"), used by the tests and the
//! CLI to measure the errors of the variational integrators.
//!
//! They are deliberately independent of the rest of diracvi: plain `f64`
//! arithmetic, closed forms where they exist, and otherwise this module's own
//! ODE integrator (a high-order Taylor-series method) and root finders. None
//! of them calls the discrete Dirac steppers, the impact algorithm, the
//! automatic differentiation or the model structs, so an agreement between a
//! reference and an integrator is a genuine check of both.
//!
//! | module | system | method |
//! |---|---|---|
//! | [`particle`] | bouncing particle, \[VCI\] §4.1 | closed-form parabolas, exact reflections |
//! | [`lc`] | LC circuit, \[DDM\] §2.1, §6 | closed-form harmonic oscillation |
//! | [`pendulum`] | nonholonomic spherical pendulum in a cylinder, \[VCI\] §4.3 | reduced 1-DOF Lagrangian, Taylor series (order ≈ 30), event location |
//! | [`rigid_body`] | bouncing ellipse / star, \[VCI\] §4.2 | exact flights, guaranteed first-root search, elastic impact law |
//! | [`rigid_body_3d`] | free rigid body (Euler top), symmetric heavy (Lagrange) top | Jacobi elliptic functions (AGM, descending Landen), nutation period by `K(m)` |
//!
//! Every parameter struct has plain `f64` fields with documented units and a
//! `Default` equal to the paper's values (docs/theory.md §5). Angles are in radians,
//! lengths in metres, times in seconds, masses in kilograms, charges in
//! coulombs (any consistent unit system works).
//!
//! Conventions shared by all references:
//! * at an impact time the state returned is the **post-impact** state
//!   (trajectories are right-continuous);
//! * impact times are reported in increasing order, each one once.

pub mod lc;
pub mod particle;
pub mod pendulum;
pub mod rigid_body;
pub mod rigid_body_3d;

pub use lc::LcCircuit;
pub use particle::BouncingParticle;
pub use pendulum::{
    NonholonomicPendulumReference, PendulumImpact, PendulumReferenceParams, PendulumSolution,
    TaylorOptions,
};
pub use rigid_body::{RigidBodyReference, RigidBodyTrajectory, RigidImpact, Shape};
pub use rigid_body_3d::{EulerTop, elliptic_k, jacobi_sn_cn_dn, lagrange_top_nutation};
