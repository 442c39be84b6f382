//! Extreme inputs end with a typed error, never with a non-finite result and
//! exit 0 (#19). Output, usage and limit cases are in `outputs.rs`.

use assert_cmd::Command;

use crate::common;

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

/// The impact times of `diracvi run ARGS` (read from the `.impacts.csv`
/// sibling of a CSV output) and the JSON summary.
fn impact_times(args: &[&str]) -> (Vec<f64>, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.csv");
    let run = Command::new(env!("CARGO_BIN_EXE_diracvi"))
        .arg("run")
        .args(args)
        .args(["-q", "--summary", "json", "--out"])
        .arg(&out)
        .output()
        .expect("the binary runs");
    let run = common::Output::lossy(run);
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    let summary: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let text = std::fs::read_to_string(dir.path().join("t.impacts.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "t").unwrap();
    let times = lines
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap())
        .collect();
    (times, summary)
}

/// Scaling the Lagrangian by a constant changes no motion, so a tiny mass
/// must move like a unit mass. Before the step equations were solved in
/// units of the momenta (docs/theory.md §3.7), a pendulum of mass 1e-20
/// froze and the ellipse lost 4 of its 23 impacts.
///
/// A mass of 2⁻⁶⁶ (≈ 1.4e-20) scales every number by a power of two, so
/// the runs agree to round-off (only the solvers' stopping points can
/// differ); with 1e-20 and 1e-308 the rounding differs too. The ellipse's
/// impacts amplify a round-off difference about tenfold per impact, so its
/// first five are compared.
#[test]
fn tiny_masses_move_like_unit_masses() {
    const POW2: &str = "m=1.3552527156068805e-20"; // 2^-66, printed exactly
    let cases: [(&[&str], &str, usize, f64); 8] = [
        (&["pendulum"], POW2, usize::MAX, 1e-12),
        (
            &["pendulum", "--stepper", "hamiltonian"],
            POW2,
            usize::MAX,
            1e-12,
        ),
        (&["ellipse"], POW2, 5, 1e-12),
        (&["ellipse", "--stepper", "hamiltonian"], POW2, 5, 1e-12),
        (&["pendulum"], "m=1e-20", usize::MAX, 1e-10),
        (&["ellipse"], "m=1e-20", 5, 1e-10),
        (
            &["ellipse", "--stepper", "hamiltonian"],
            "m=1e-20",
            5,
            1e-10,
        ),
        (&["particle"], "m=1e-308", usize::MAX, 1e-10),
    ];
    for (args, setting, compared, tol) in cases {
        let (unit_times, unit_summary) = impact_times(args);
        let scaled: Vec<&str> = args.iter().copied().chain(["--set", setting]).collect();
        let (times, summary) = impact_times(&scaled);
        assert!(unit_times.len() >= 3, "{args:?}: {unit_times:?}");
        let n = unit_times.len().min(compared);
        assert!(
            times.len() >= n,
            "{scaled:?}: {} impacts, want {n}",
            times.len()
        );
        if compared == usize::MAX {
            assert_eq!(times.len(), unit_times.len(), "{scaled:?}");
        }
        for (i, (a, b)) in unit_times.iter().zip(&times).take(n).enumerate() {
            assert!(
                (a - b).abs() <= tol,
                "{scaled:?}: impact {i} at {b}, unit mass {a}"
            );
        }
        // The relative energy deviation is a property of the motion (of all
        // of it: not compared once the ellipse's runs have parted).
        let dev = |s: &serde_json::Value| s["energy"]["max_relative_deviation"].as_f64().unwrap();
        let (a, b) = (dev(&unit_summary), dev(&summary));
        if compared == usize::MAX {
            assert!((a - b).abs() <= 1e-6 * a, "{scaled:?}: {b} vs {a}");
        } else {
            assert!(b.is_finite() && b < 0.1, "{scaled:?}: energy deviation {b}");
        }
    }
}

/// An inductance so small that the circuit oscillates ~1e15 times per step
/// cannot be resolved at the paper's h: a typed error naming the step, not a
/// trajectory frozen at its initial charges with exit 0.
#[test]
fn unresolvable_inductance_is_an_error() {
    for l in ["l=1e-30", "l=1e-300"] {
        let out = Command::new(env!("CARGO_BIN_EXE_diracvi"))
            .args(["run", "lc", "--set", l, "-q", "--summary", "json"])
            .output()
            .expect("the binary runs");
        let out = common::Output::lossy(out);
        common::check_failure(&out, 1, &["lc: step 0 at t = 0"]);
    }
}

/// A particle far out in x (1e300) still bounces on the floor y ≥ 0: the
/// touching band of g = y scales with y, not with |q| (before, the band was
/// 1e288 wide and the particle fell through the floor with no impact).
#[test]
fn huge_unrelated_coordinate_keeps_the_floor() {
    let (far, _) = impact_times(&["particle", "--set", "q=1e300,1"]);
    let (near, _) = impact_times(&["particle", "--set", "q=0,1"]);
    assert!(near.len() >= 3, "{near:?}");
    assert_eq!(far.len(), near.len());
    for (a, b) in near.iter().zip(&far) {
        assert!((a - b).abs() <= 1e-12, "{far:?} vs {near:?}");
    }
}
