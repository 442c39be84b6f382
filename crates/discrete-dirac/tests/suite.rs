//! The integration tests of this crate, compiled as one test binary: each
//! file of `tests/` is a module here (`autotests = false` in Cargo.toml).
//! One binary instead of one per file links the crate and its dependencies
//! once and compiles each generic instantiation the files share once (the
//! cold CI build, README "Set-up"). A new file of tests must be added below;
//! `every_test_file_is_a_module` (tests/tests/suite.rs) fails otherwise.

mod common;
mod degenerate_nonlinear;
mod dyn_lagrange_dirac;
mod hamiltonian_tangent;
mod inverse_and_hamiltonian;
mod lc_circuit;
mod midpoint_kepler;
mod pendulum_convergence;
mod sparse_storage;
mod step_errors;
mod structured_lu;
mod tangent;
