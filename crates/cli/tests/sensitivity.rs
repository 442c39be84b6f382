//! `diracvi run --sensitivity` (docs/theory.md §12.4): the summary's
//! ∂(q_N, p_N)/∂θ against central differences of whole CLI runs with the
//! parameter changed (`--set θ=…`), through impacts, for one step and for
//! whole runs, for parameters entering only the Lagrangian, only a wall,
//! both, the constraints, a parameter written as an expression of others
//! and initial data written as expressions or solved from the
//! constraints; and the refusals.

use crate::common;

use common::{final_state, numbers, root, run_in, summary};

/// Relative tolerance of the comparison with central differences (of
/// step `1e-6 max(1, |θ|)`), against `max(1, max |∂x/∂θ|)`: the
/// differences' truncation and the Newton solves' round-off divided by
/// the step stay below it (measured: 2e-10 – 5e-8).
const TOLERANCE: f64 = 1e-6;

/// `args` run with `--sensitivity` for each of `params` (name, value in
/// the file): the exact columns against central differences of the CLI's
/// final states with `--set name=value ± δ`, the same number of impacts on
/// both sides. Returns the impacts of the base run.
fn check(args: &[&str], params: &[(&str, f64)]) -> u64 {
    let names: Vec<&str> = params.iter().map(|(n, _)| *n).collect();
    let list = names.join(",");
    let base = summary(&[args, &["--sensitivity", &list]].concat());
    let impacts = base["impacts"].as_u64().unwrap();
    let sens = &base["sensitivity"];
    let mut keys: Vec<&String> = sens.as_object().unwrap().keys().collect();
    let mut asked = names.clone();
    keys.sort();
    asked.sort_unstable();
    assert_eq!(keys, asked);
    // the tracked run is the plain run
    let plain = final_state(&summary(args));
    for (a, b) in final_state(&base).iter().zip(&plain) {
        assert!((a - b).abs() <= 1e-13 * a.abs().max(1.0), "{a} vs {b}");
    }
    for &(name, value) in params {
        let exact = numbers(&sens[name]);
        assert_eq!(exact.len(), plain.len());
        let delta = 1e-6 * value.abs().max(1.0);
        let at = |e: f64| {
            let set = format!("{name}={:.17e}", value + e);
            let s = summary(&[args, &["--set", &set]].concat());
            assert_eq!(
                s["impacts"].as_u64().unwrap(),
                impacts,
                "{args:?} {set}: the perturbed run must hit the walls as often"
            );
            final_state(&s)
        };
        let (plus, minus) = (at(delta), at(-delta));
        let scale = exact.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
        for i in 0..exact.len() {
            let fd = (plus[i] - minus[i]) / (2.0 * delta);
            assert!(
                (fd - exact[i]).abs() <= TOLERANCE * scale,
                "{args:?} ∂x[{i}]/∂{name}: exact {} vs differences {fd} (scale {scale})",
                exact[i]
            );
        }
    }
    impacts
}

/// One step (h = 0.01) of the particle model file from just above the
/// floor, moving down: the step crosses the floor, so the one-step map
/// goes through an impact whose time moves with g; and one step without
/// an impact.
#[test]
fn one_step_sensitivities_with_and_without_an_impact() {
    let through = [
        "run",
        "--model-file",
        "models/particle.toml",
        "--set",
        "t_end=0.01",
        "--set",
        "q=0,0.001",
        "--set",
        "v=1,-0.2",
    ];
    assert_eq!(check(&through, &[("g", 9.8), ("m", 1.0)]), 1);
    let smooth = [
        "run",
        "--model-file",
        "models/particle.toml",
        "--set",
        "t_end=0.01",
    ];
    assert_eq!(check(&smooth, &[("g", 9.8)]), 0);
}

/// Whole runs through impacts: the nonholonomic pendulum (g only in L,
/// r only in the wall: the impact time moves), the ellipse (a and b in
/// both L and the floor, 3 impacts), the Chaplygin sleigh (I in L, R the
/// arena) and the rolling disk (the wall's position, the inertias).
#[test]
fn whole_run_sensitivities_through_impacts_match_differences_of_cli_runs() {
    let pendulum = [
        "run",
        "--model-file",
        "models/pendulum.toml",
        "--set",
        "t_end=2.5",
    ];
    assert!(check(&pendulum, &[("g", 9.8), ("r", 1.5), ("m", 1.0)]) >= 1);
    let ellipse = [
        "run",
        "--model-file",
        "models/ellipse.toml",
        "--set",
        "t_end=3",
    ];
    assert!(check(&ellipse, &[("g", 9.8), ("a", 1.0), ("b", 0.5)]) >= 3);
    let sleigh = [
        "run",
        "--model-file",
        "models/sleigh.toml",
        "--set",
        "t_end=3",
    ];
    assert!(check(&sleigh, &[("I", 0.1), ("R", 2.0), ("a", 0.3)]) >= 1);
    let disk = [
        "run",
        "--model-file",
        "models/disk-wall.toml",
        "--set",
        "t_end=6",
    ];
    assert!(check(&disk, &[("wall", 10.0), ("i", 0.5)]) >= 1);
}

/// The backward (−) stepper: the same comparison.
#[test]
fn backward_runs_have_sensitivities_too() {
    let args = [
        "run",
        "--model-file",
        "models/particle.toml",
        "--set",
        "t_end=1",
        "--backward",
    ];
    assert!(check(&args, &[("g", 9.8)]) >= 1);
}

/// A model file whose wall is a parameter written as an expression of g
/// (`c = -g/40`, so it follows g unless set), whose initial height is an
/// expression of a parameter, and whose initial velocity is solved from
/// the constraint: all move with the parameters, as `--set` moves them.
#[test]
fn derived_parameters_and_initial_data_follow_the_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slide.toml");
    std::fs::write(
        &path,
        r#"
[model]
name = "slide"
coordinates = ["x", "y", "z"]
lagrangian = "0.5*m*(x_dot^2 + y_dot^2 + z_dot^2) - m*g*y"
constraints = [["k", "0", "-1"]]
boundaries = ["y - c"]
[parameters]
m = 1.0
g = 9.8
k = 0.5
h0 = 0.4
c = "-g/40"
[run]
h = 1e-2
t_end = 1.0
[initial]
q = [0.0, "h0", 0.0]
v = [1.0, 0.0, "solve"]
"#,
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let args = ["run", "--model-file", file];
    assert!(check(&args, &[("g", 9.8), ("h0", 0.4), ("k", 0.5)]) >= 1);
    // the derived parameter itself: set on its own, g fixed
    assert!(check(&args, &[("c", -9.8 / 40.0)]) >= 1);
}

/// A parameter of the constraint (the pendulum's `f0`, `f1`) with the
/// dependent velocity solved from the constraint: the direction stays on
/// the constraint and the columns match differences of runs whose `φ̇(0)`
/// is solved again at `f0 ± δ`.
#[test]
fn constraint_parameters_follow_a_solved_velocity() {
    let text = std::fs::read_to_string(root().join("models/pendulum.toml")).unwrap();
    let given = "v = [0.7853981633974483, 2.8601001819710636]";
    assert!(text.contains(given));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pendulum-solved.toml");
    std::fs::write(
        &path,
        text.replace(given, r#"v = [0.7853981633974483, "solve"]"#),
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let args = ["run", "--model-file", file, "--set", "t_end=1.5"];
    assert!(check(&args, &[("f0", std::f64::consts::PI), ("f1", 1.0)]) >= 1);
}

#[test]
fn the_text_summary_names_each_sensitivity() {
    let out = run_in(
        root(),
        &[
            "run",
            "--model-file",
            "models/pendulum.toml",
            "--set",
            "t_end=0.1",
            "--sensitivity",
            "g,r",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    for name in ["g", "r"] {
        assert!(
            out.stdout
                .contains(&format!("sensitivity: ∂(q_N, p_N)/∂{name}, 4 entries")),
            "{}",
            out.stdout
        );
    }
    // the JSON object's keys in the order asked
    let out = run_in(
        root(),
        &[
            "run",
            "--model-file",
            "models/pendulum.toml",
            "--set",
            "t_end=0.1",
            "--sensitivity",
            "r,g",
            "--summary",
            "json",
            "-q",
        ],
    );
    let (r, g) = (
        out.stdout.find("\"r\":[").unwrap(),
        out.stdout.find("\"g\":[").unwrap(),
    );
    assert!(r < g, "{}", out.stdout);
    // without --sensitivity the summary's key is null
    let plain = summary(&[
        "run",
        "--model-file",
        "models/pendulum.toml",
        "--set",
        "t_end=0.1",
    ]);
    assert!(plain["sensitivity"].is_null());
}

/// A file with `[forces]` (the driven pendulum: a torque `tau0 cos(w t)`):
/// the forces are differentiated in their parameters at each step's time,
/// against central differences of whole CLI runs.
#[test]
fn forced_files_have_sensitivities() {
    let args = [
        "run",
        "--model-file",
        "models/driven-pendulum.toml",
        "--set",
        "t_end=1.5",
    ];
    check(&args, &[("tau0", 11.0), ("w", 2.0), ("g", 9.81)]);
}

/// Refusals are usage errors (exit 2) that say what to do: a catalogued
/// model names its model file; an unknown name lists the parameters;
/// methods without a tangent map are named.
#[test]
fn what_cannot_be_differentiated_is_refused_with_a_usage_error() {
    let refused = |args: &[&str]| {
        let out = run_in(root(), args);
        assert_eq!(out.code, 2, "{args:?}: {}{}", out.stdout, out.stderr);
        assert!(out.stdout.is_empty(), "{}", out.stdout);
        out.stderr
    };
    let e = refused(&["run", "pendulum", "--t-end", "0.1", "--sensitivity", "g"]);
    assert!(
        e.contains("--sensitivity is not available")
            && e.contains("compiled-in")
            && e.contains("--model-file models/pendulum.toml"),
        "{e}"
    );
    let e = refused(&["run", "lc", "--t-end", "0.1", "--sensitivity", "L"]);
    assert!(e.contains("--sensitivity is not available"), "{e}");
    let pendulum = [
        "run",
        "--model-file",
        "models/pendulum.toml",
        "--set",
        "t_end=0.1",
    ];
    let e = refused(&[&pendulum[..], &["--sensitivity", "g,nope"]].concat());
    assert!(
        e.contains("no parameter `nope`") && e.contains("m, g, l, r, f0, f1"),
        "{e}"
    );
    // f0 with φ̇(0) given as a number: the perturbed runs would start off
    // the constraint (`--set f0=…` is refused as inadmissible)
    let e = refused(&[&pendulum[..], &["--sensitivity", "f0"]].concat());
    assert!(
        e.contains("moves the constraint at the initial data")
            && e.contains("model.constraints[0]")
            && e.contains("\"solve\""),
        "{e}"
    );
    // (orders 4 and 6 and the Hamiltonian stepper give sensitivities; a
    // Hamiltonian run of a model without a Hamiltonian is refused as such)
    let e = refused(&[
        "run",
        "--model-file",
        "models/lc.toml",
        "--set",
        "t_end=0.1",
        "--stepper",
        "hamiltonian",
        "--sensitivity",
        "l",
    ]);
    assert!(e.contains("has no Hamiltonian"), "{e}");
    // --reduce: a usage error of the command line
    refused(&["run", "pendulum", "--sensitivity", "g", "--reduce"]);
}

/// Orders 4 and 6: the composed step carries its parameter columns over
/// its stages and the continuous elastic law has its parameter derivative
/// (docs/theory.md §12.6), so `--sensitivity` equals central differences
/// of whole CLI runs (orders 4 and 6 forward, 4 backward) on the
/// nonholonomic pendulum's file, before its first impact and through it
/// (g only in L, r only in the wall: the impact time moves with both).
#[test]
fn composed_orders_have_sensitivities_through_impacts() {
    let pendulum = [
        "run",
        "--model-file",
        "models/pendulum.toml",
        "--set",
        "h=0.01",
    ];
    // (backward, the pendulum meets its wall at t ≈ −0.083)
    for extra in [
        &["--order", "4", "--set", "t_end=0.3"][..],
        &["--order", "6", "--set", "t_end=0.3"][..],
        &["--order", "4", "--set", "t_end=0.07", "--backward"][..],
    ] {
        let args = [&pendulum[..], extra].concat();
        let impacts = check(&args, &[("g", 9.8), ("l", 2.0), ("r", 1.5)]);
        assert_eq!(impacts, 0, "{args:?}");
    }
    for extra in [
        &["--order", "4", "--set", "t_end=2.5"][..],
        &["--order", "6", "--set", "t_end=2.5"][..],
        &["--order", "4", "--set", "t_end=0.5", "--backward"][..],
    ] {
        let args = [&pendulum[..], extra].concat();
        let impacts = check(&args, &[("g", 9.8), ("r", 1.5)]);
        assert!(impacts >= 1, "{args:?}: {impacts} impacts");
    }
}
