//! Helpers shared by the CLI's integration tests.
// Each test binary uses a part of these helpers.
#![allow(dead_code)]

/// What a run of the binary produced.
pub struct Output {
    /// Exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Output {
    /// A finished process's output; stdout and stderr as UTF-8 (lossy).
    pub fn lossy(out: std::process::Output) -> Self {
        Output {
            code: out.status.code().expect("exited normally"),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// The `diracvi` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_diracvi");

/// Run the binary with `args` in `dir`.
pub fn run_in<S: AsRef<std::ffi::OsStr>>(dir: &std::path::Path, args: &[S]) -> Output {
    let out = std::process::Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs");
    Output::lossy(out)
}

/// Check a failure: exit code, one `error: ` line naming every needle,
/// nothing on stdout, no panic. Returns the message.
pub fn check_failure(out: &Output, code: i32, needles: &[&str]) -> String {
    assert_eq!(
        out.code, code,
        "expected exit {code}, got {}; stderr: {}",
        out.code, out.stderr
    );
    assert!(out.stdout.is_empty(), "stdout on failure: {}", out.stdout);
    let err = out.stderr.trim_end();
    assert!(err.starts_with("error: "), "message: {err}");
    assert_eq!(err.lines().count(), 1, "one-line message: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    for needle in needles {
        assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    }
    err.to_string()
}

/// The repository root (model files and scenarios are named from there).
pub fn root() -> &'static std::path::Path {
    std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The JSON summary of `diracvi <args> --summary json -q`, run from the
/// repository root; the run must succeed.
pub fn summary(args: &[&str]) -> serde_json::Value {
    let out = run_in(root(), &[args, &["--summary", "json", "-q"]].concat());
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    serde_json::from_str(&out.stdout).expect("the summary is JSON")
}

/// The numbers of a JSON array (each must be a number).
pub fn numbers(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .expect("a JSON array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// A summary's final state `(q_N, p_N)` as one vector, q first.
pub fn final_state(s: &serde_json::Value) -> Vec<f64> {
    let f = &s["final_state"];
    ["q", "p"].iter().flat_map(|k| numbers(&f[k])).collect()
}
