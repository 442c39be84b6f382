//! End-to-end tests of how `diracvi` treats its outputs and inputs: all or
//! nothing (temporary files renamed together at the end, old files kept on
//! failure), paths checked before the run, non-UTF-8 names, signals, two
//! runs on one path, write errors (full disk, file-size limit, full
//! stdout), limits on requests and input files, no non-finite result with
//! exit 0, the energy warning, one-line usage errors with a hint, and CSV
//! headers named after the coordinates.

use crate::common;

use assert_cmd::Command;
use common::{BIN, Output, check_failure, run_in};
use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::time::{Duration, Instant};

/// Run `script` with `sh -c` in `dir`, `$D` being the binary.
fn sh_in(dir: &Path, script: &str) -> Output {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("D", BIN)
        .current_dir(dir)
        .output()
        .expect("sh runs");
    Output::lossy(out)
}

/// Check a failure: exit code, one `error: ` line naming every needle,
/// nothing on stdout, no panic.
fn fails_in<S: AsRef<OsStr>>(dir: &Path, code: i32, args: &[S], needles: &[&str]) -> String {
    let out = run_in(dir, args);
    check_failure(&out, code, needles)
}

/// Succeed (exit 0, nothing on stderr) and return stdout.
fn ok_in<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> String {
    let out = run_in(dir, args);
    assert_eq!(out.code, 0, "failed: {}", out.stderr);
    assert!(out.stderr.is_empty(), "unexpected stderr: {}", out.stderr);
    out.stdout
}

fn json_in(dir: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--summary", "json"]);
    serde_json::from_str(&ok_in(dir, &all)).expect("a JSON summary")
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<OsString> {
    let mut v: Vec<OsString> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    v.sort();
    v
}

/// Assert `dir` holds exactly `expected` (no temporaries, backups or lock
/// files besides).
fn assert_names(dir: &Path, expected: &[&str]) {
    let mut want: Vec<OsString> = expected.iter().map(OsString::from).collect();
    want.sort();
    assert_eq!(names(dir), want, "directory contents");
}

fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn header(path: impl AsRef<Path>) -> String {
    read(path).lines().next().unwrap_or_default().to_string()
}

// ------------------------------------------------------- 1. all or nothing

#[cfg(unix)]
#[test]
fn a_failing_plot_leaves_no_trajectory_and_keeps_existing_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("t.csv"), "old trajectory\n").unwrap();
    std::fs::write(d.join("t.impacts.csv"), "old impacts\n").unwrap();
    // The plot goes to /dev/full (written in place): it fails after the
    // trajectory and its impacts were written to their temporaries.
    std::os::unix::fs::symlink("/dev/full", d.join("full.svg")).unwrap();
    fails_in(
        d,
        1,
        &[
            "run", "particle", "--t-end", "2", "--out", "t.csv", "--plot", "full.svg", "-q",
        ],
        &["cannot write 'full.svg'", "No space left"],
    );
    assert_eq!(read(d.join("t.csv")), "old trajectory\n");
    assert_eq!(read(d.join("t.impacts.csv")), "old impacts\n");
    assert_names(d, &["full.svg", "t.csv", "t.impacts.csv"]);

    // The same with a file-size limit: the CSV is small, the SVG is not.
    std::fs::remove_file(d.join("full.svg")).unwrap();
    let out = sh_in(
        d,
        "ulimit -f 20; exec \"$D\" run particle --every 1000 --out t.csv --plot p.svg -q",
    );
    check_failure(&out, 1, &["cannot write 'p.svg'", "File too large"]);
    assert_eq!(read(d.join("t.csv")), "old trajectory\n");
    assert_eq!(read(d.join("t.impacts.csv")), "old impacts\n");
    assert_names(d, &["t.csv", "t.impacts.csv"]);
}

#[test]
fn a_numerical_failure_keeps_existing_files_and_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("f.csv"), "old\n").unwrap();
    std::fs::write(d.join("f.svg"), "old svg\n").unwrap();
    fails_in(
        d,
        1,
        &[
            "run", "pendulum", "--h", "0.5", "--steps", "10", "--out", "f.csv", "--plot", "f.svg",
        ],
        &["did not converge"],
    );
    assert_eq!(read(d.join("f.csv")), "old\n");
    assert_eq!(read(d.join("f.svg")), "old svg\n");
    assert_names(d, &["f.csv", "f.svg"]);
}

#[cfg(unix)]
#[test]
fn a_summary_that_cannot_be_printed_undoes_the_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("t.csv"), "old trajectory\n").unwrap();
    for summary in ["text", "json"] {
        let out = sh_in(
            d,
            &format!(
                "exec \"$D\" run particle --t-end 2 --out t.csv --plot t.svg --summary {summary} > /dev/full"
            ),
        );
        assert_ne!(out.code, 0, "{summary}: {}", out.stderr);
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert!(
            out.stderr.contains("cannot write to stdout"),
            "{}",
            out.stderr
        );
        // The old trajectory is back, the files the run created are gone.
        assert_eq!(read(d.join("t.csv")), "old trajectory\n");
        assert_names(d, &["t.csv"]);
    }
    // The same run with a working stdout replaces the file and adds the rest.
    ok_in(
        d,
        &[
            "run", "particle", "--t-end", "2", "--out", "t.csv", "--plot", "t.svg",
        ],
    );
    assert!(header(d.join("t.csv")).starts_with("k,t,q_x,q_y"));
    assert_names(d, &["t.csv", "t.impacts.csv", "t.svg"]);
}

// ------------------------------------------------------- 2. paths checked first

#[cfg(unix)]
#[test]
fn output_paths_are_checked_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("t.impacts.csv"), "not the run's\n").unwrap();
    std::fs::create_dir(d.join("adir.csv")).unwrap();
    std::fs::create_dir(d.join("adir.svg")).unwrap();
    std::fs::create_dir(d.join("b.impacts.csv")).unwrap();
    std::fs::write(d.join("file"), "").unwrap();
    // The run itself would fail with exit 1 (Newton): exit 2 shows the path
    // was refused before integrating.
    let failing = ["run", "pendulum", "--h", "0.5", "--steps", "10"];
    let cases: [(&[&str], &[&str]); 9] = [
        (&["--out", "t.csv/"], &["--out 't.csv/'", "trailing slash"]),
        (
            &["--out", "t.csv/."],
            &["--out 't.csv/.'", "trailing slash"],
        ),
        (&["--out", "sub/"], &["'sub/'"]),
        (
            &["--out", "nodir/t.csv"],
            &["--out 'nodir/t.csv'", "directory 'nodir' does not exist"],
        ),
        (
            &["--out", "file/t.csv"],
            &["--out 'file/t.csv'", "'file' is not a directory"],
        ),
        (
            &["--out", "adir.csv"],
            &["--out 'adir.csv'", "is a directory"],
        ),
        (
            &["--plot", "adir.svg"],
            &["--plot 'adir.svg'", "is a directory"],
        ),
        (&["--out", "b.csv"], &["'b.impacts.csv'", "is a directory"]),
        (&["--out", "t.txt"], &["t.txt", ".csv or .json"]),
    ];
    for (extra, needles) in cases {
        let mut args = failing.to_vec();
        args.extend(extra);
        fails_in(d, 2, &args, needles);
    }
    // A directory where no file can be created (sysfs, even for root).
    #[cfg(target_os = "linux")]
    {
        let mut args = failing.to_vec();
        args.extend(["--out", "/sys/x.csv"]);
        fails_in(
            d,
            2,
            &args,
            &["--out '/sys/x.csv'", "cannot create a file in '/sys'"],
        );
    }
    // Nothing was created, and the impacts file of `t.csv` was not touched
    // (an `--out t.csv/` run used to replace and then remove it).
    assert_eq!(read(d.join("t.impacts.csv")), "not the run's\n");
    assert_names(
        d,
        &[
            "adir.csv",
            "adir.svg",
            "b.impacts.csv",
            "file",
            "t.impacts.csv",
        ],
    );
}

// ------------------------------------------------------- 3. non-UTF-8 names

#[cfg(target_os = "linux")]
#[test]
fn the_impacts_file_keeps_a_non_utf8_name() {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = OsStr::from_bytes(b"traj-\xff\xfe.csv");
    let args: Vec<&OsStr> = ["run", "particle", "--t-end", "2", "-q", "--out"]
        .iter()
        .map(OsStr::new)
        .chain([name])
        .collect();
    ok_in(d, &args);
    let mut want = vec![
        OsString::from_vec(b"traj-\xff\xfe.csv".to_vec()),
        OsString::from_vec(b"traj-\xff\xfe.impacts.csv".to_vec()),
    ];
    want.sort();
    assert_eq!(names(d), want);
    let impacts = read(d.join(OsStr::from_bytes(b"traj-\xff\xfe.impacts.csv")));
    assert_eq!(impacts.lines().count(), 1 + 2, "header and two impacts");
}

// ------------------------------------------------------- 4. signals

/// Start a long run writing `X.csv` in `dir`, wait for its temporary file,
/// send `signal` with `kill`, and return the exit status.
#[cfg(unix)]
fn interrupt(dir: &Path, signal: &str) -> std::process::ExitStatus {
    let child = std::process::Command::new(BIN)
        .args([
            "run", "pendulum", "--t-end", "1e5", "--out", "X.csv", "--plot", "X.svg", "-q",
        ])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !names(dir)
        .iter()
        .any(|n| n.to_string_lossy().ends_with(".tmp"))
    {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no temporary file appeared"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let killed = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("interrupted by SIG"), "{err}");
    out.status
}

#[cfg(unix)]
#[test]
fn a_signal_removes_the_temporaries_and_leaves_no_target() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let status = interrupt(d, "-TERM");
    assert!(!status.success());
    assert_eq!(status.code(), Some(143));
    assert_names(d, &[]);
    let status = interrupt(d, "-INT");
    assert_eq!(status.code(), Some(130));
    assert_names(d, &[]);
    // An existing target is left as it was.
    std::fs::write(d.join("X.csv"), "old\n").unwrap();
    let status = interrupt(d, "-TERM");
    assert_eq!(status.code(), Some(143));
    assert_eq!(read(d.join("X.csv")), "old\n");
    assert_names(d, &["X.csv"]);
}

/// A signal during the setup of a large run (building a 10⁶-cell ladder
/// takes seconds before the first step, with no step loop to check the
/// flag) ends it within a second: exit 143, no output, no temporary.
#[cfg(unix)]
#[test]
fn a_signal_during_a_long_setup_ends_the_run_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut child = std::process::Command::new(BIN)
        .args([
            "run",
            "lc-ladder",
            "--set",
            "cells=1000000",
            "--out",
            "big.csv",
            "-q",
        ])
        .current_dir(d)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended before the signal: it no longer tests the setup"
    );
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let signalled = Instant::now();
    assert!(killed.success());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if signalled.elapsed() > Duration::from_secs(2) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running 2 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = signalled.elapsed();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(143), "{err}");
    assert!(
        err.contains("interrupted by SIGTERM: no output written"),
        "{err}"
    );
    assert!(took < Duration::from_secs(2), "took {took:?}");
    eprintln!("SIGTERM during setup: exited after {took:?}");
    assert_names(d, &[]);
}

// ------------------------------------------------------- 5. concurrent runs

#[cfg(unix)]
#[test]
fn two_runs_on_one_path_never_leave_a_mixed_pair() {
    // Run A pauses 300 ms between renaming its impacts file and its
    // trajectory; run B starts 120 ms later and commits within A's pause.
    // Without the lock B's pair would land in between and A's trajectory
    // would end beside B's impacts.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spawn = |model: &str, t_end: &str, pause: u64| {
        std::process::Command::new(BIN)
            .args([
                "run",
                model,
                "--t-end",
                t_end,
                "--out",
                "t.csv",
                "--summary",
                "json",
            ])
            .env("DIRACVI_TEST_COMMIT_PAUSE_MS", pause.to_string())
            .current_dir(d)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let runs = [("particle", "2"), ("ellipse", "1.5")];
    for i in 0..4 {
        let (first, second) = if i % 2 == 0 {
            (runs[0], runs[1])
        } else {
            (runs[1], runs[0])
        };
        let a = spawn(first.0, first.1, 300);
        std::thread::sleep(Duration::from_millis(120));
        let b = spawn(second.0, second.1, 0);
        let mut summaries = Vec::new();
        for child in [a, b] {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let s: Value = serde_json::from_slice(&out.stdout).unwrap();
            summaries.push(s);
        }
        // The trajectory says which run it is (its coordinates); its
        // impacts file must be the same run's.
        let traj = header(d.join("t.csv"));
        let imps = read(d.join("t.impacts.csv"));
        let model = if traj.contains(",q_theta,") {
            "ellipse"
        } else {
            "particle"
        };
        let s = summaries.iter().find(|s| s["model"] == model).unwrap();
        let coordinates: Vec<&str> = s["coordinates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let imp_header = imps.lines().next().unwrap();
        assert_eq!(
            imp_header,
            format!(
                "step,alpha,t,piece,{},{},{},energy_before,energy_after",
                coordinates
                    .iter()
                    .map(|c| format!("q_{c}"))
                    .collect::<Vec<_>>()
                    .join(","),
                coordinates
                    .iter()
                    .map(|c| format!("p_before_{c}"))
                    .collect::<Vec<_>>()
                    .join(","),
                coordinates
                    .iter()
                    .map(|c| format!("p_after_{c}"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            "iteration {i}: trajectory of {model} beside another run's impacts"
        );
        assert_eq!(
            imps.lines().count() - 1,
            s["impacts"].as_u64().unwrap() as usize,
            "iteration {i}: impact count of {model}"
        );
        assert_names(d, &["t.csv", "t.impacts.csv"]);
    }
}

// ------------------------------------------------------- 6. write errors

#[cfg(unix)]
#[test]
fn write_errors_exit_1_naming_the_path_and_leave_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Disk full: the trajectory goes to /dev/full through a path.
    std::os::unix::fs::symlink("/dev/full", d.join("full.csv")).unwrap();
    fails_in(
        d,
        1,
        &["run", "particle", "--out", "full.csv", "-q"],
        &["cannot write 'full.csv'", "No space left on device"],
    );
    assert_names(d, &["full.csv"]);
    std::fs::remove_file(d.join("full.csv")).unwrap();

    // A file-size limit (SIGXFSZ is ignored, the write fails with EFBIG).
    for out in ["big.csv", "big.json"] {
        let r = sh_in(
            d,
            &format!("ulimit -f 1; exec \"$D\" run particle --out {out} -q"),
        );
        check_failure(&r, 1, &[&format!("cannot write '{out}'"), "File too large"]);
        assert_names(d, &[]);
    }
    // The impacts file fails, the (small) trajectory does not: neither is
    // left.
    let r = sh_in(
        d,
        "ulimit -f 2; exec \"$D\" run ellipse --t-end 25 --every 100000 --out t.csv -q",
    );
    check_failure(&r, 1, &["cannot write 't.impacts.csv'", "File too large"]);
    assert_names(d, &[]);
    // An existing file is kept as it was.
    std::fs::write(d.join("big.csv"), "old\n").unwrap();
    let r = sh_in(d, "ulimit -f 1; exec \"$D\" run particle --out big.csv -q");
    check_failure(&r, 1, &["cannot write 'big.csv'"]);
    assert_eq!(read(d.join("big.csv")), "old\n");
    assert_names(d, &["big.csv"]);
}

#[cfg(unix)]
#[test]
fn a_full_stdout_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for cmd in [
        "--help",
        "--version",
        "run --help",
        "list",
        "show particle",
        "run particle --steps 3",
        "run particle --steps 3 --summary json",
        "convergence particle --t-end 0.5 --h-list 0.01,0.005",
    ] {
        let out = sh_in(d, &format!("exec \"$D\" {cmd} > /dev/full"));
        assert_ne!(out.code, 0, "diracvi {cmd} > /dev/full succeeded");
        assert_eq!(out.code, 1, "diracvi {cmd}: {}", out.stderr);
        assert!(
            out.stderr
                .starts_with("error: cannot write to stdout: No space left"),
            "diracvi {cmd}: {}",
            out.stderr
        );
    }
    // A reader that stops early is not an error.
    let out = sh_in(d, "\"$D\" list | head -c 1 > /dev/null; echo $?");
    assert_eq!(out.code, 0);
}

// ------------------------------------------------------- 7. limits

#[test]
fn requests_over_the_limits_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let start = Instant::now();
    fails_in(
        d,
        2,
        &[
            "run",
            "particle",
            "--steps",
            "1000000000001",
            "--plot",
            "x.svg",
        ],
        &["--steps", "1000000000001 steps", "at most 1e10", "days"],
    );
    fails_in(
        d,
        2,
        &["run", "particle", "--h", "1e-300", "--t-end", "1"],
        &["at most 1e10", "years"],
    );
    // 10^10 records cannot fit on the disk: refused before the first step.
    fails_in(
        d,
        2,
        &[
            "run",
            "particle",
            "--steps",
            "10000000000",
            "--out",
            "x.csv",
        ],
        &["--out 'x.csv'", "GiB", "free on its file system", "--every"],
    );
    fails_in(
        d,
        2,
        &[
            "run",
            "disk-table",
            "--steps",
            "10000000000",
            "--out",
            "x.json",
        ],
        &["--out 'x.json'", "TiB", "free on its file system"],
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_names(d, &[]);
}

#[test]
fn plotting_huge_values_ends() {
    // x runs from −1.7e308 to 3e307: the width of the axis overflows, which
    // made the axis code loop forever. The range is clipped, and said so.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("huge.toml"),
        "[model]\nname = \"huge\"\ncoordinates = [\"x\"]\n\
         lagrangian = \"0.5*(1e-300*x_dot)*x_dot\"\n\
         [run]\nh = 1e8\nt_end = 2e8\n[initial]\nq = [-1.7e308]\nv = [1e300]\n",
    )
    .unwrap();
    let start = Instant::now();
    ok_in(
        d,
        &["run", "--model-file", "huge.toml", "--plot", "h.svg", "-q"],
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    let svg = read(d.join("h.svg"));
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(
        svg.contains("clipped at ±1e300"),
        "the clipped axis is named"
    );
}

#[cfg(unix)]
#[test]
fn input_files_over_1_mib_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fails_in(
        d,
        2,
        &["run", "--scenario", "/dev/zero"],
        &["scenario file '/dev/zero'", "larger than 1 MiB"],
    );
    fails_in(
        d,
        2,
        &["run", "--model-file", "/dev/zero"],
        &["/dev/zero", "more than the limit"],
    );
    fails_in(
        d,
        2,
        &["show", "--model-file", "/dev/zero"],
        &["/dev/zero", "more than the limit"],
    );
    // A regular file is refused by its size, before it is read.
    let big = d.join("big.toml");
    let mut text = String::from("model = \"particle\"\n");
    while text.len() <= 1 << 20 {
        text.push_str("# padding padding padding padding padding padding padding\n");
    }
    std::fs::write(&big, text).unwrap();
    fails_in(
        d,
        2,
        &["run", "--scenario", "big.toml"],
        &["big.toml", "larger than 1 MiB"],
    );
}

// ------------------------------------------------------- 8. finite results

#[test]
fn zero_steps_report_the_initial_energy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // E = ½ m |v|² + m g y = ½ + 9.8 · 2 for the particle's defaults.
    let s = json_in(d, &["run", "particle", "--steps", "0", "--out", "z.csv"]);
    for key in ["initial", "final"] {
        let e = s["energy"][key]
            .as_f64()
            .unwrap_or_else(|| panic!("energy.{key} is a number: {s}"));
        assert!((e - 20.1).abs() < 1e-12, "energy.{key} = {e}");
    }
    assert_eq!(s["energy"]["max_abs_deviation"], 0.0);
    let csv = read(d.join("z.csv"));
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let energy: f64 = row[6].parse().unwrap();
    assert!((energy - 20.1).abs() < 1e-12, "record energy {energy}");
    let text = ok_in(d, &["run", "particle", "--steps", "0"]);
    assert!(text.contains("energy: initial 20.1000"), "{text}");
    assert!(!text.to_lowercase().contains("nan"), "{text}");
    // The Hamiltonian stepper too.
    let s = json_in(
        d,
        &[
            "run",
            "pendulum",
            "--steps",
            "0",
            "--stepper",
            "hamiltonian",
        ],
    );
    assert!(s["energy"]["initial"].is_f64(), "{s}");
}

#[test]
fn convergence_needs_distinct_positive_step_sizes_and_a_fit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (h_list, needle) in [
        ("0.01,0.01", "must differ"),
        ("0.01,0.005,0.01", "must differ"),
        ("0.01", "at least two"),
        ("0.01,0", "h must be finite and > 0"),
        ("0.01,-0.005", "h must be finite and > 0"),
    ] {
        let err = fails_in(
            d,
            2,
            &["convergence", "particle", "--h-list", h_list],
            &["--h-list", needle],
        );
        assert!(!err.contains("NaN"), "{err}");
    }
    // Errors that are all zero give no order: a failure, not "NaN".
    fails_in(
        d,
        1,
        &[
            "convergence",
            "lc",
            "--set",
            "v=0,0,0,0",
            "--h-list",
            "0.1,0.05",
            "--t-end",
            "1",
        ],
        &["cannot fit an order", "errors: 0e0, 0e0"],
    );
}

// ------------------------------------------------------- 9. energy warning

#[test]
fn a_drifting_energy_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = json_in(d, &["run", "disk-wall", "--h", "0.5"]);
    let warnings = s["warnings"].as_array().expect("a warnings array");
    assert_eq!(warnings.len(), 1, "{s}");
    let w = warnings[0].as_str().unwrap();
    for needle in [
        "discrete energy",
        "%",
        "h = 0.5",
        "--energy-tolerance",
        "smaller --h",
    ] {
        assert!(w.contains(needle), "{w:?} should mention {needle:?}");
    }
    assert_eq!(s["energy_tolerance"], 0.01);
    let text = ok_in(d, &["run", "disk-wall", "--h", "0.5"]);
    let line = text
        .lines()
        .find(|l| l.starts_with("warning: "))
        .unwrap_or_else(|| panic!("a warning line: {text}"));
    assert!(line.contains("h = 0.5"), "{line}");
    // The paper's step: no warning; a loose tolerance: none either.
    let s = json_in(d, &["run", "disk-wall"]);
    assert_eq!(s["warnings"], serde_json::json!([]), "{s}");
    let s = json_in(
        d,
        &[
            "run",
            "disk-wall",
            "--h",
            "0.5",
            "--energy-tolerance",
            "100",
        ],
    );
    assert_eq!(s["warnings"], serde_json::json!([]));
    assert!(!ok_in(d, &["run", "particle", "--t-end", "1"]).contains("warning"));
    // A zero energy scale (at rest, L = 0) is no reason for a NaN or a
    // warning.
    let s = json_in(d, &["run", "lc", "--set", "v=0,0,0,0", "--steps", "3"]);
    assert_eq!(s["energy"]["scale"], 0.0);
    assert_eq!(s["energy"]["max_relative_deviation"], 0.0);
    assert_eq!(s["warnings"], serde_json::json!([]));
    for bad in ["-0.1", "nan", "inf"] {
        fails_in(
            d,
            2,
            &["run", "particle", "--energy-tolerance", bad],
            &["--energy-tolerance"],
        );
    }
}

// ------------------------------------------------------- 10. usage errors

#[test]
fn usage_errors_are_one_line_and_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: [(&[&str], &str, &str); 12] = [
        (
            &["run", "particle", "--frob"],
            "unexpected argument '--frob'",
            "diracvi run",
        ),
        (
            &["run", "particle", "--t-nd", "1"],
            "'--t-nd'",
            "diracvi run",
        ),
        (
            &["run", "particle", "--h"],
            "a value is required for '--h",
            "diracvi run",
        ),
        (
            &["run", "particle", "--h", "abc"],
            "invalid value 'abc'",
            "diracvi run",
        ),
        (
            &["run", "particle", "--stepper", "rk4"],
            "possible values: lagrange, hamiltonian",
            "diracvi run",
        ),
        (&["run", "particle", "--steps", "-3"], "'-3'", "diracvi run"),
        (
            &["frobnicate"],
            "unrecognized subcommand 'frobnicate'",
            "diracvi",
        ),
        (
            &["run", "particle", "--steps", "5", "--t-end", "1"],
            "cannot be used with",
            "diracvi run",
        ),
        (&[], "needs a command", "diracvi"),
        (&["convergence"], "required", "diracvi convergence"),
        (&["show"], "required", "diracvi show"),
        (
            &["list", "extra"],
            "unexpected argument 'extra'",
            "diracvi list",
        ),
    ];
    for (args, needle, command) in cases {
        let out = run_in(d, args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: error and hint: {}", out.stderr);
        assert!(lines[0].starts_with("error: "), "{}", lines[0]);
        assert!(lines[0].contains(needle), "{args:?}: {}", lines[0]);
        assert!(lines[1].starts_with("hint: "), "{}", lines[1]);
        assert!(
            lines[1].ends_with(&format!("see `{command} --help`")),
            "{args:?}: {}",
            lines[1]
        );
    }
    // Suggestions go to the hint.
    let out = run_in(d, &["run", "particle", "--t-nd", "1"]);
    assert!(
        out.stderr
            .contains("hint: a similar argument exists: '--t-end'")
    );
    // --help and --version print in full.
    let help = ok_in(d, &["run", "--help"]);
    for needle in [
        "Usage: diracvi run",
        "--energy-tolerance",
        "--out",
        "--steps",
    ] {
        assert!(help.contains(needle), "run --help shows {needle}");
    }
    assert!(ok_in(d, &["--help"]).contains("Commands:"));
    assert!(ok_in(d, &["--version"]).starts_with("diracvi "));
}

// ------------------------------------------------------- 11. CSV headers

#[test]
fn csv_headers_name_the_coordinates() {
    // One rule (crates/run/src/writer.rs): coordinate c gives q_c and p_c
    // in the trajectory, q_c, p_before_c and p_after_c in the impacts; the
    // other columns are fixed names, so no coordinate can clash with them.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok_in(
        d,
        &["run", "ellipse", "--t-end", "1.5", "--out", "e.csv", "-q"],
    );
    assert_eq!(
        header(d.join("e.csv")),
        "k,t,q_theta,q_x,q_y,p_theta,p_x,p_y,energy,constraint_residual"
    );
    assert_eq!(
        header(d.join("e.impacts.csv")),
        "step,alpha,t,piece,q_theta,q_x,q_y,p_before_theta,p_before_x,p_before_y,\
         p_after_theta,p_after_x,p_after_y,energy_before,energy_after"
    );
    ok_in(d, &["run", "lc", "--steps", "3", "--out", "l.csv", "-q"]);
    assert_eq!(
        header(d.join("l.csv")),
        "k,t,q_q_l,q_q_c1,q_q_c2,q_q_c3,p_q_l,p_q_c1,p_q_c2,p_q_c3,energy,constraint_residual"
    );
    // A model file whose coordinates are named like the fixed columns
    // (`alpha`, `t`, `energy`), with a wall so that the impacts file has
    // rows: every column keeps its coordinate's name.
    std::fs::write(
        d.join("m.toml"),
        "[model]\nname = \"m\"\ncoordinates = [\"alpha\", \"t\", \"energy\"]\n\
         lagrangian = \"0.5*(alpha_dot^2 + t_dot^2 + energy_dot^2)\"\n\
         boundaries = [\"0.95 - alpha\"]\n\
         [run]\nh = 0.1\n\
         [initial]\nq = [0.0, 0.0, 0.0]\nv = [1.0, 2.0, 3.0]\n",
    )
    .unwrap();
    let r = run_in(
        d,
        &[
            "run",
            "--model-file",
            "m.toml",
            "--steps",
            "15",
            "--out",
            "m.csv",
            "--summary",
            "json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let summary: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(summary["impacts"], 1, "alpha reaches the wall at t = 0.95");
    let traj = read(d.join("m.csv"));
    let mut lines = traj.lines();
    assert_eq!(
        lines.next().unwrap(),
        "k,t,q_alpha,q_t,q_energy,p_alpha,p_t,p_energy,energy,constraint_residual"
    );
    // the row of step 5: t = 0.5, q = (0.5, 1, 1.5), p = v, E = 7
    let row: Vec<f64> = lines
        .nth(5)
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    let want = [5.0, 0.5, 0.5, 1.0, 1.5, 1.0, 2.0, 3.0, 7.0, 0.0];
    for (got, want) in row.iter().zip(want) {
        assert!((got - want).abs() <= 1e-12, "{row:?}");
    }
    let impacts = read(d.join("m.impacts.csv"));
    let mut lines = impacts.lines();
    assert_eq!(
        lines.next().unwrap(),
        "step,alpha,t,piece,q_alpha,q_t,q_energy,p_before_alpha,p_before_t,p_before_energy,\
         p_after_alpha,p_after_t,p_after_energy,energy_before,energy_after"
    );
    let imp: Vec<f64> = lines
        .next()
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    // The impact-time fraction and the coordinate alpha are distinct
    // columns: alpha reaches 0.95 at t = 0.95, half-way through the step
    // 0.9 → 1.0 (free flight, which the midpoint step integrates exactly;
    // the root finder locates it to 1e-9), and its momentum is reversed.
    assert!((imp[0] - 9.0).abs() < 0.5, "step {}", imp[0]);
    assert!((imp[1] - 0.5).abs() < 1e-9, "fraction {}", imp[1]);
    assert!((imp[2] - 0.95).abs() < 1e-9, "t = {}", imp[2]);
    assert!((imp[4] - 0.95).abs() < 1e-9, "q_alpha = {}", imp[4]);
    assert!(
        (imp[7] - 1.0).abs() < 1e-9 && (imp[10] + 1.0).abs() < 1e-9,
        "{imp:?}"
    );
}
