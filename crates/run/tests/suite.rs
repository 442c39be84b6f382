//! The integration tests of this crate, compiled as one test binary: each
//! file of `tests/` is a module here (`autotests = false` in Cargo.toml).
//! One binary instead of one per file links the crate and its dependencies
//! once and compiles each generic instantiation the files share once (the
//! cold CI build, README "Set-up"). A new file of tests must be added below;
//! `every_test_file_is_a_module` (tests/tests/suite.rs) fails otherwise.

mod bouncing_body;
mod circuits;
mod common;
mod forced;
mod method;
mod model_file_shorthands;
mod periodic;
mod run;
mod sensitivity;
mod tolerance;
