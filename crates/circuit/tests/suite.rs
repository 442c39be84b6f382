//! The integration tests of this crate, compiled as one test binary: each
//! file of `tests/` is a module here (`autotests = false` in Cargo.toml).
//! A package of its own at opt-level 0 (its Cargo.toml); the 1000-cell
//! ladder over 10⁵ steps is in the long-horizon package (tests/long). A new
//! file of tests must be added below; `every_test_file_is_a_module`
//! (tests/tests/suite.rs) fails otherwise.

mod circuits;
