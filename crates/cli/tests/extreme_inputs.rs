//! Extreme inputs end with a typed error, never with a non-finite result and
//! exit 0 (#19).

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

/// Run the binary with `args`, stdout redirected to `stdout` if given.
fn diracvi(args: &[&str], stdout: Option<std::fs::File>) -> (Option<i32>, String, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_diracvi"));
    cmd.args(args);
    if let Some(f) = stdout {
        cmd.stdout(f);
    }
    let out = cmd.output().expect("the binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Help, version, listings and summaries written to a full device fail
/// with a message instead of exiting 0.
#[test]
fn writing_to_a_full_stdout_fails() {
    for args in [
        &["--help"][..],
        &["--version"],
        &["run", "--help"],
        &["list"],
        &["show", "pendulum"],
        &[
            "run",
            "particle",
            "--t-end",
            "0.1",
            "-q",
            "--summary",
            "json",
        ],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full exists on Linux");
        let (code, _, stderr) = diracvi(args, Some(full));
        assert_ne!(code, Some(0), "{args:?}");
        assert!(
            stderr.contains("cannot write to stdout"),
            "{args:?}: {stderr}"
        );
    }
    // Help to a working stdout is still complete, exit 0.
    let (code, stdout, _) = diracvi(&["run", "--help"], None);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("--energy-tolerance") && stdout.lines().count() > 20);
}

/// Every parse error is one line: the message, the parser's tip, and the
/// help to read; exit 2.
#[test]
fn usage_errors_are_one_line_with_a_hint() {
    for (args, needle, hint) in [
        (
            &["run", "--foo"][..],
            "unexpected argument '--foo'",
            "`diracvi run --help`",
        ),
        (
            &["run", "pendulum", "--h", "abc"],
            "invalid value 'abc'",
            "`diracvi run --help`",
        ),
        (
            &["run", "--h"],
            "a value is required for '--h <H>'",
            "`diracvi run --help`",
        ),
        (
            &["frobnicate"],
            "unrecognized subcommand 'frobnicate'",
            "`diracvi --help`",
        ),
        (
            &["show", "a", "--model-file", "b"],
            "cannot be used with",
            "`diracvi show --help`",
        ),
        (
            &["convergence", "--h-list"],
            "a value is required",
            "`diracvi convergence --help`",
        ),
    ] {
        let (code, _, stderr) = diracvi(args, None);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(needle),
            "{stderr}"
        );
        assert!(stderr.trim_end().ends_with(hint), "{args:?}: {stderr}");
    }
}

/// `--steps` is held to the same limit as `t_end / h`, before any work.
#[test]
fn steps_beyond_the_limit_are_refused() {
    let (code, _, stderr) = diracvi(&["run", "particle", "--steps", "2000000000000"], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("2000000000000 steps requested; at most 1e12"),
        "{stderr}"
    );
}

/// Zero steps: the summary reports the energy of the initial data, not null.
#[test]
fn zero_steps_report_the_initial_energy() {
    let (code, stdout, stderr) = diracvi(
        &["run", "particle", "--steps", "0", "-q", "--summary", "json"],
        None,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let s: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // E = m |v|²/2 + m g y = 0.5 + 9.8 · 2 for the defaults.
    for key in ["initial", "final"] {
        let e = s["energy"][key].as_f64().expect("a number");
        assert!((e - 20.1).abs() < 1e-12, "{key}: {e}");
    }
}

/// A large energy drift is flagged in both summaries, pointing at h; the
/// paper's default run of the same model is not.
#[test]
fn energy_drift_beyond_the_tolerance_is_a_warning() {
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.extend(["-q", "--summary", "json"]);
        let (code, stdout, stderr) = diracvi(&all, None);
        assert_eq!(code, Some(0), "{stderr}");
        serde_json::from_str(&stdout).unwrap()
    };
    let coarse = json(&["disk-wall", "--h", "0.5"]);
    let w = coarse["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1, "{coarse}");
    assert!(w[0].as_str().unwrap().contains("smaller h"), "{w:?}");
    assert!(coarse["energy"]["max_relative_deviation"].as_f64().unwrap() > 1.0);
    let fine = json(&["disk-wall"]);
    assert!(fine["warnings"].as_array().unwrap().is_empty(), "{fine}");
    // The threshold is the user's: 25x the drift silences it.
    let drift = coarse["energy"]["max_relative_deviation"].as_f64().unwrap();
    let tol = format!("{}", 25.0 * drift);
    let relaxed = json(&["disk-wall", "--h", "0.5", "--energy-tolerance", &tol]);
    assert!(relaxed["warnings"].as_array().unwrap().is_empty());
    // The text summary carries it as a `warning:` line.
    let (_, text, _) = diracvi(&["run", "disk-wall", "--h", "0.5"], None);
    assert!(
        text.lines()
            .any(|l| l.starts_with("warning: the discrete energy moved")),
        "{text}"
    );
    let (code, _, stderr) = diracvi(&["run", "particle", "--energy-tolerance", "-1", "-q"], None);
    assert_eq!(code, Some(2), "{stderr}");
}
