//! Extreme inputs end with a typed error, never with a non-finite result and
//! exit 0 (#19). Output, usage and limit cases are in `outputs.rs`.

use assert_cmd::Command;

/// Momenta whose energy overflows: both steppers exit 1 with a message
/// naming the step, and print no summary.
#[test]
fn infinite_energy_fails_for_both_steppers() {
    for stepper in ["lagrange", "hamiltonian"] {
        let out = Command::new(env!("CARGO_BIN_EXE_diracvi"))
            .args([
                "run",
                "particle",
                "--set",
                "v=1e200,0",
                "--stepper",
                stepper,
            ])
            .args(["-q", "--summary", "json"])
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stepper}: {stderr}");
        assert!(stderr.contains("step 0 at t = 0"), "{stepper}: {stderr}");
        assert!(stderr.contains("non-finite"), "{stepper}: {stderr}");
        assert!(out.stdout.is_empty(), "{stepper}: a summary was printed");
    }
}
