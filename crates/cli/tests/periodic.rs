//! `diracvi periodic` (docs/theory.md §14): the upright ellipse's vertical
//! bounce as a fixed point of the impact section map, checked by rerunning
//! it with `diracvi run` (its impacts file); continuation with a branch
//! table; the errors and their exit codes.

use crate::common;

use common::{check_failure, numbers, root, run_in, summary};
use serde_json::Value;

const UPRIGHT: [&str; 6] = [
    "--model-file",
    "models/ellipse.toml",
    "--set",
    "q=1.5707963267948966,0,2.0",
    "--set",
    "v=0,0,0",
];

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["periodic"];
    a.extend(UPRIGHT);
    a.extend(extra);
    a
}

/// The JSON summary: residual ≤ 1e-12, the nontrivial multipliers a
/// reciprocal pair to 1e-8 and the verdict theirs; the fixed point rerun by
/// `diracvi run` from its q and v returns to it at the first impact (the
/// impacts file's post-impact state) to 1e-12.
#[test]
fn the_upright_ellipse_bounce_is_found_and_returns_under_a_plain_run() {
    let s = summary(&args(&["--section", "0"]));
    assert!(s["residual"].as_f64().unwrap() <= 1e-12, "{s}");
    assert_eq!(s["section"]["kind"], "impact");
    let mults = s["multipliers"].as_array().unwrap();
    assert_eq!(mults.len(), 6);
    let nontrivial: Vec<(f64, f64)> = mults
        .iter()
        .filter(|m| m["kind"] == "nontrivial")
        .map(|m| (m["re"].as_f64().unwrap(), m["im"].as_f64().unwrap()))
        .collect();
    assert_eq!(nontrivial.len(), 2);
    let (a, b) = (nontrivial[0], nontrivial[1]);
    assert!((a.0 * b.0 - a.1 * b.1 - 1.0).abs() < 1e-8 && (a.0 * b.1 + a.1 * b.0).abs() < 1e-8);
    let largest = a.0.hypot(a.1).max(b.0.hypot(b.1));
    let verdict = if largest > 1.0 + 1e-6 {
        "unstable"
    } else {
        "stable"
    };
    assert_eq!(s["stability"], verdict);
    assert!(mults.iter().any(|m| m["kind"] == "section"));
    assert!(mults.iter().any(|m| m["kind"] == "energy"));
    assert_eq!(
        mults
            .iter()
            .filter(|m| m["kind"] == "symmetry" && m["coordinate"] == "x")
            .count(),
        2
    );
    let q = numbers(&s["fixed_point"]["q"]);
    let p = numbers(&s["fixed_point"]["p"]);
    let v = numbers(&s["fixed_point"]["v"]);
    let period = s["period"].as_f64().unwrap();
    let list = |x: &[f64]| {
        x.iter()
            .map(|c| format!("{c:.17e}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rerun.csv");
    let (qs, vs, t) = (
        format!("q={}", list(&q)),
        format!("v={}", list(&v)),
        format!("{}", period + 0.1),
    );
    let r = run_in(
        root(),
        &[
            "run",
            "--model-file",
            "models/ellipse.toml",
            "--set",
            &qs,
            "--set",
            &vs,
            "--t-end",
            &t,
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let impacts = std::fs::read_to_string(dir.path().join("rerun.impacts.csv")).unwrap();
    let mut lines = impacts.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<f64> = lines
        .next()
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert!((col("t") - period).abs() < 1e-9);
    for (i, c) in ["theta", "x", "y"].iter().enumerate() {
        assert!((col(&format!("q_{c}")) - q[i]).abs() <= 1e-12, "q_{c}");
        assert!(
            (col(&format!("p_after_{c}")) - p[i]).abs() <= 1e-12,
            "p_{c}"
        );
    }
    let text = run_in(root(), &args(&["--section", "0"])).stdout;
    for needle in [
        "stability: ",
        "energy",
        "symmetry (x)",
        "section (time shift)",
        "period: ",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
}

/// `--continue a=0.4:0.6:22`: 22 converged points in the CSV branch table,
/// both changes of stability reported (the period doubling of the short
/// axis, the circle a = b).
#[test]
fn continuation_writes_a_branch_table_and_reports_stability_changes() {
    let dir = tempfile::tempdir().unwrap();
    // the upright ellipse's bounce continued in `a`, the table to `out`
    let continuation = |out: &std::path::Path, extra: &[&str]| {
        let mut a = vec![
            "--set",
            "q=1.5707963267948966,0,1.0",
            "--section",
            "0",
            "--continue",
            "a=0.4:0.6:22",
            "--out",
            out.to_str().unwrap(),
        ];
        a.extend(extra);
        run_in(root(), &args(&a))
    };
    let csv = dir.path().join("branch.csv");
    let out = continuation(&csv, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout.matches("stability changes from").count(),
        2,
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("from stable to unstable"));
    let table = std::fs::read_to_string(&csv).unwrap();
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "a");
    assert!(header.contains(&"m5_kind") && header.contains(&"q_theta"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 22);
    let residual = header.iter().position(|h| *h == "residual").unwrap();
    for r in &rows {
        assert!(r[residual].parse::<f64>().unwrap() <= 1e-12);
    }
    let json = dir.path().join("branch.json");
    let out = continuation(&json, &["--quiet"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let b: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(b["points"].as_array().unwrap().len(), 22);
    assert_eq!(b["stability_changes"].as_array().unwrap().len(), 2);
}

#[test]
fn errors_name_what_is_wrong_with_their_exit_codes() {
    let out = run_in(root(), &args(&["--section", "3"]));
    check_failure(&out, 2, &["no boundary piece '3'", "0 ("]);
    let out = run_in(root(), &args(&["--section", "0", "--max-iterations", "1"]));
    check_failure(&out, 1, &["did not converge", "after 1 Newton iterations"]);
    let out = run_in(root(), &args(&["--section", "0", "--t-end", "0.1"]));
    check_failure(&out, 1, &["no return"]);
    let out = run_in(root(), &args(&["--continue", "a=1:2"]));
    check_failure(&out, 2, &["PARAM=a:b:n"]);
    let out = run_in(root(), &["periodic", "pendulum", "--section", "0"]);
    check_failure(&out, 2, &["constrained"]);
    let help = run_in(root(), &["periodic", "--help"]).stdout;
    for needle in ["--section", "--continue", "--period", "--impact"] {
        assert!(help.contains(needle), "{needle}");
    }
}
