//! Runs that start on a wall (#19): a start moving into a boundary piece is
//! an impact at α = 0 (reflect and go on, energy kept), a start in resting
//! contact is a typed error naming the piece, and a configuration computed
//! to lie on a wall (round-off below it) is accepted.

use assert_cmd::Command;
use serde_json::Value;

/// `diracvi run <args> -q --summary json`: exit code, summary, stderr.
fn run(args: &[&str]) -> (i32, Option<Value>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_diracvi"))
        .arg("run")
        .args(args)
        .args(["-q", "--summary", "json"])
        .output()
        .expect("the binary runs");
    let code = out.status.code().expect("exited normally");
    let summary = serde_json::from_slice(&out.stdout).ok();
    (
        code,
        summary,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A run that succeeds: its summary.
fn bounces(args: &[&str]) -> Value {
    let (code, summary, stderr) = run(args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    summary.expect("a JSON summary")
}

fn times(s: &Value) -> Vec<f64> {
    s["impact_times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect()
}

fn relative_energy_drift(s: &Value) -> f64 {
    s["energy"]["max_relative_deviation"].as_f64().unwrap()
}

/// The particle on the floor moving down at 1 m/s reflects at t = 0 and
/// comes back after 2 v / g (the midpoint scheme is exact for constant
/// gravity up to the O(h²) discrete-energy mismatch of the impact law,
/// (g h / 2)² / 2 ≈ 1.2e-3 of the speed here; symplectic Euler is first
/// order).
#[test]
fn particle_starting_on_the_floor_moving_down_bounces() {
    for stepper in ["lagrange", "hamiltonian"] {
        let s = bounces(&[
            "particle",
            "--set",
            "q=0,0",
            "--set",
            "v=0,-1",
            "--stepper",
            stepper,
        ]);
        let t = times(&s);
        assert!(t.len() >= 40, "{stepper}: {} impacts", t.len());
        assert!(t[0] <= 1e-9 * 0.01, "{stepper}: first impact at {:e}", t[0]);
        // Second order (midpoint Lagrange–Dirac) vs first order
        // (symplectic-Euler Hamiltonian) in h = 0.01.
        let tolerance = if stepper == "lagrange" { 1e-3 } else { 2e-2 };
        let period = 2.0 / 9.8;
        assert!((t[1] - period).abs() < tolerance, "{stepper}: {t:?}");
        // Energy: the schemes' usual drift through 49 impacts (first
        // order for symplectic Euler).
        let drift = if stepper == "lagrange" { 1e-2 } else { 0.1 };
        assert!(
            relative_energy_drift(&s) < drift,
            "{stepper}: {}",
            s["energy"]
        );
        // The α = 0 impact is the limit of impacts just after the start: a
        // start 1e-12 above the floor ends 1e-12-close (measured: 7e-12).
        let above = bounces(&[
            "particle",
            "--set",
            "q=0,1e-12",
            "--set",
            "v=0,-1",
            "--stepper",
            stepper,
        ]);
        assert_eq!(above["impacts"], s["impacts"]);
        for key in ["q", "p"] {
            for i in 0..2 {
                let (a, b) = (&s["final_state"][key][i], &above["final_state"][key][i]);
                let d = (a.as_f64().unwrap() - b.as_f64().unwrap()).abs();
                assert!(d < 1e-10, "{stepper}: final {key}[{i}] {a} vs {b}");
            }
        }
    }
}

/// The same start backward in time: the (−) stepper reflects too.
#[test]
fn backward_start_on_the_floor_moving_down_bounces() {
    let s = bounces(&[
        "particle",
        "--set",
        "q=0,0",
        "--set",
        "v=0,-1",
        "--backward",
    ]);
    let t = times(&s);
    assert!(t.len() >= 40);
    assert!((t[0] + 2.0 / 9.8).abs() < 1e-3, "{t:?}");
    assert!(relative_energy_drift(&s) < 1e-2);
}

/// Rigid bodies touching the floor and falling onto it, and the rolling
/// disk touching the wall and rolling into it (its y computed as
/// wall − R sin φ, 1e-15 beyond the wall by round-off).
#[test]
fn bodies_touching_a_wall_and_moving_into_it_bounce() {
    let half_pi = "1.5707963267948966";
    let cases: [(&str, Vec<String>); 3] = [
        (
            "ellipse",
            vec![format!("q={half_pi},0,1"), "v=0,0,-1".into()],
        ),
        (
            "star",
            vec![format!("q={half_pi},0,1"), "v=0.5,0,-1".into()],
        ),
        (
            "disk-wall",
            vec![format!(
                "q=0,{},0,1.0471975511965976",
                10.0 - (1.0471975511965976f64).sin()
            )],
        ),
    ];
    for (model, sets) in &cases {
        let mut args = vec![model.to_string()];
        for s in sets {
            args.extend(["--set".to_string(), s.clone()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let s = bounces(&args);
        let t = times(&s);
        assert!(!t.is_empty() && t[0] <= 1e-9 * 0.01, "{model}: {t:?}");
        assert!(relative_energy_drift(&s) < 1e-2, "{model}: {}", s["energy"]);
    }
}

/// At rest on the floor, or sliding along it, under gravity: resting
/// contact, outside elastic impact mechanics — exit 1 with a message that
/// names the piece and does not ask for a smaller step.
#[test]
fn resting_contact_at_the_start_is_a_typed_error() {
    let half_pi = "1.5707963267948966";
    let cases: [&[&str]; 4] = [
        &["particle", "--set", "q=0,0", "--set", "v=0,0"],
        &["particle", "--set", "q=0,0", "--set", "v=1,0"],
        &[
            "particle",
            "--set",
            "q=0,0",
            "--set",
            "v=1,0",
            "--stepper",
            "hamiltonian",
        ],
        &[
            "ellipse",
            "--set",
            &format!("q={half_pi},0,1"),
            "--set",
            "v=0,0,0",
        ],
    ];
    for args in cases {
        let (code, _, stderr) = run(args);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("resting contact on boundary piece 0"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("reduce h"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

/// Starting on the floor moving away from it is an ordinary start, and a
/// start clearly below the floor is still refused (exit 2).
#[test]
fn leaving_the_wall_is_free_and_below_it_is_refused() {
    let s = bounces(&[
        "particle", "--set", "q=0,0", "--set", "v=0,1", "--t-end", "0.1",
    ]);
    assert!(times(&s).is_empty());
    let (code, _, stderr) = run(&["particle", "--set", "q=0,-1e-9", "--set", "v=0,1"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("outside the admissible set"), "{stderr}");
}
