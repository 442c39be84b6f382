//! `diracvi run --tol` (docs/theory.md §13): the summary carries the
//! tolerance record and runs the chosen method and step; `--tol` with a
//! step, a number of steps or an order is a usage error (exit 2); a
//! scenario file's `tol`.

use crate::common;

use common::{check_failure, root, run_in, summary};

#[test]
fn the_summary_records_the_choice() {
    let s = summary(&["run", "pendulum", "--t-end", "2", "--tol", "1e-8"]);
    let t = &s["tolerance"];
    assert_eq!(t["requested"].as_f64(), Some(1e-8));
    let estimate = t["error_estimate"].as_f64().unwrap();
    assert!(estimate > 0.0 && estimate <= 1e-8, "{t}");
    let order = t["chosen_order"].as_u64().unwrap();
    assert!([2, 4, 6].contains(&order), "{t}");
    // The run is the chosen one: its method, step and steps.
    assert_eq!(s["order"].as_u64(), Some(order));
    assert_eq!(s["method"]["discretization"], "midpoint");
    assert_eq!(s["method"]["constraint"], "midpoint");
    assert_eq!(s["h"].as_f64(), t["chosen_h"].as_f64());
    assert_eq!(s["steps"].as_u64(), t["chosen_steps"].as_u64());
    let (h, steps) = (s["h"].as_f64().unwrap(), s["steps"].as_f64().unwrap());
    assert!((h * steps - 2.0).abs() < 1e-12, "t_end / h is whole");
    assert!(t["pilot_runs"].as_u64().unwrap() >= 3);
    assert!(t["pilot_wall_time_s"].as_f64().unwrap() >= 0.0);
    assert!(!t["candidates"].as_array().unwrap().is_empty());
    // A run with a step has none.
    let plain = summary(&["run", "pendulum", "--t-end", "0.5"]);
    assert!(plain["tolerance"].is_null());
}

#[test]
fn the_text_summary_names_the_choice() {
    let out = run_in(
        root(),
        &["run", "particle", "--t-end", "1", "--tol", "1e-6"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("tolerance: 1e-6 requested; chose order"),
        "{}",
        out.stdout
    );
}

#[test]
fn tol_excludes_a_step_steps_and_an_order() {
    for extra in [
        &["--h", "0.01"][..],
        &["--steps", "100"],
        &["--order", "4"],
        &["--discretization", "forward"],
    ] {
        let out = run_in(
            root(),
            &[&["run", "pendulum", "--tol", "1e-6"][..], extra].concat(),
        );
        assert_eq!(out.code, 2, "{extra:?}: {}", out.stderr);
        assert!(out.stderr.contains("cannot be used with"), "{}", out.stderr);
    }
    for bad in ["0", "-1e-6", "nan", "inf"] {
        let out = run_in(root(), &["run", "pendulum", &format!("--tol={bad}")]);
        check_failure(&out, 2, &["tol"]);
    }
}

/// A netlist has no default step: with `--tol` its `--h` is the step the
/// pilot runs start from, as a scenario file's `h` beside its `tol`. The
/// [DDM] circuit chooses as the catalogue's `lc` does (order 2, 22 620
/// steps at 1e-4) and ends within the tolerance of the closed form
/// (`q^ℓ(10π) = 0`); without `--h` it is a usage error that says so.
#[test]
fn a_netlist_takes_tol_with_its_h_as_the_pilots_start() {
    let net = [
        "run",
        "--netlist",
        "circuits/ddm-lc.cir",
        "--t-end",
        "31.41592653589793",
        "--tol",
        "1e-4",
    ];
    let s = summary(&[&net[..], &["--h", "0.15707963267948966"]].concat());
    let t = &s["tolerance"];
    assert_eq!(t["chosen_order"].as_u64(), Some(2), "{t}");
    assert_eq!(t["chosen_steps"].as_u64(), Some(22_620), "{t}");
    let q = common::numbers(&s["final_state"]["q"]);
    assert!(q[0].abs() <= 1e-4, "q_l(10π) = {}", q[0]);
    let out = run_in(root(), &net);
    check_failure(&out, 2, &["--netlist needs --h", "--tol"]);
}

#[test]
fn a_scenario_file_gives_tol() {
    let dir = std::env::temp_dir().join(format!("diracvi-tol-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tol.toml");
    std::fs::write(&file, "model = \"pendulum\"\ntol = 1e-7\nt_end = 1.0\n").unwrap();
    let path = file.to_str().unwrap();
    let s = summary(&["run", "--scenario", path]);
    assert_eq!(s["tolerance"]["requested"].as_f64(), Some(1e-7));
    // --h overrides the file's tol: a plain run.
    let s = summary(&["run", "--scenario", path, "--h", "0.01"]);
    assert!(s["tolerance"].is_null());
    assert_eq!(s["h"].as_f64(), Some(0.01));
    std::fs::write(&file, "model = \"pendulum\"\ntol = 1e-7\nh = 0.01\n").unwrap();
    let out = run_in(root(), &["run", "--scenario", path]);
    check_failure(&out, 2, &["exclusive"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_model_file_gives_tol_in_its_run_section() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("models/particle.toml")).unwrap();
    let with_tol = text.replace("h = 1e-2 ", "tol = 1e-8 ");
    assert_ne!(with_tol, text, "particle.toml has `h = 1e-2` in [run]");
    let file = dir.path().join("particle-tol.toml");
    std::fs::write(&file, &with_tol).unwrap();
    let path = file.to_str().unwrap();
    let s = summary(&["run", "--model-file", path, "--t-end", "2"]);
    let t = &s["tolerance"];
    assert_eq!(t["requested"].as_f64(), Some(1e-8), "{s}");
    let estimate = t["error_estimate"].as_f64().unwrap();
    assert!(estimate > 0.0 && estimate <= 1e-8, "{t}");
    assert_eq!(s["h"].as_f64(), t["chosen_h"].as_f64());
    // `show` prints it back as `[run] tol`, and that file runs the same
    let shown = run_in(root(), &["show", "--model-file", path]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(shown.stdout.contains("\ntol = 1e-8\n"), "{}", shown.stdout);
    assert!(!shown.stdout.contains("\nh = "), "{}", shown.stdout);
    let copy = dir.path().join("copy.toml");
    std::fs::write(&copy, &shown.stdout).unwrap();
    let again = summary(&[
        "run",
        "--model-file",
        copy.to_str().unwrap(),
        "--t-end",
        "2",
    ]);
    assert_eq!(again["tolerance"]["chosen_h"], t["chosen_h"]);
    assert_eq!(again["final_state"], s["final_state"]);
    // --h on the command line replaces the file's tol: a plain run
    let plain = summary(&["run", "--model-file", path, "--t-end", "2", "--h", "0.01"]);
    assert!(plain["tolerance"].is_null());
    // both `h` and `tol` in [run]: refused, naming the file and the key
    let both = dir.path().join("both.toml");
    std::fs::write(
        &both,
        with_tol.replace("tol = 1e-8 ", "h = 1e-2\ntol = 1e-8 "),
    )
    .unwrap();
    let out = run_in(root(), &["run", "--model-file", both.to_str().unwrap()]);
    check_failure(&out, 2, &["both.toml", "run.tol", "exclusive with `run.h`"]);
}
