//! The integration tests of this crate, compiled as one test binary: each
//! file of `tests/` is a module here (`autotests = false` in Cargo.toml).
//! One binary instead of one per file links the crate and its dependencies
//! once and compiles each generic instantiation the files share once (the
//! cold CI build, README "Set-up"). A new file of tests must be added below;
//! `every_test_file_is_a_module` fails otherwise.

mod boundary;
mod common;
mod constraint;
mod discrete_lagrangian;
mod discretization;
mod dynamic;
mod retraction;
mod system;

/// Every `.rs` file of `tests/` (but this one) is declared above, so none
/// is left out of the test binary.
#[test]
fn every_test_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let suite = include_str!("suite.rs");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(module) = name.strip_suffix(".rs")
            && module != "suite"
        {
            assert!(
                suite.contains(&format!("\nmod {module};\n")),
                "tests/{name} is not a module of tests/suite.rs: add `mod {module};`"
            );
        }
    }
}
