//! The integration tests of this crate, compiled as one test binary: each
//! file of `tests/` is a module here (`autotests = false` in Cargo.toml).
//! One binary instead of one per file links the crate and its dependencies
//! once and compiles each generic instantiation the files share once (the
//! cold CI build, README "Set-up"). A new file of tests must be added below;
//! `every_test_file_is_a_module` (tests/tests/suite.rs) fails otherwise.

mod chaplygin_sphere;
mod composition;
mod contact_cases;
mod exactness;
mod gyroscopic;
mod hamiltonian_impacts;
mod impacts;
mod large_models;
mod model_defaults;
mod model_file_functions;
mod model_files;
mod particle;
mod reduction;
mod snapshots;
mod tunnelling;

/// Every `.rs` file of a `tests/` folder compiled as one binary (this one
/// and each crate's with a `suite.rs`) is declared in its `suite.rs`, so
/// none is left out of the tests that run.
#[test]
fn every_test_file_is_a_module() {
    use std::fs;
    use std::path::Path;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs = vec![root.join("tests/tests"), root.join("tests/long/tests")];
    for entry in fs::read_dir(root.join("crates")).unwrap() {
        let tests = entry.unwrap().path().join("tests");
        if tests.join("suite.rs").is_file() {
            dirs.push(tests);
        }
    }
    assert!(dirs.len() >= 8, "suites found: {dirs:?}");
    for dir in dirs {
        let suite = fs::read_to_string(dir.join("suite.rs")).unwrap();
        for entry in fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if let Some(module) = name.strip_suffix(".rs")
                && module != "suite"
            {
                assert!(
                    suite.contains(&format!("\nmod {module};\n")),
                    "{}/{name} is not a module of its suite.rs: add `mod {module};`",
                    dir.display()
                );
            }
        }
    }
}
