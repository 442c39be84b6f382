//! The integration tests of this crate, compiled as one test binary: each
//! file of `tests/` is a module here (`autotests = false` in Cargo.toml).
//! One binary instead of one per file links the crate and its dependencies
//! once and compiles each generic instantiation the files share once (the
//! cold CI build, README "Set-up"). A new file of tests must be added below;
//! `every_test_file_is_a_module` (tests/tests/suite.rs) fails otherwise.

mod animate;
mod cli;
mod common;
mod contact;
mod extreme_inputs;
mod jacobian;
mod outputs;
mod periodic;
mod plot;
mod sensitivity;
mod start;
mod summary_schema;
mod system;
mod tolerance;
