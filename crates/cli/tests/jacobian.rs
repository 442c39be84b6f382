//! `diracvi run --jacobian` (docs/theory.md §12): the summary's Jacobian
//! against central differences of whole CLI runs from perturbed initial
//! data (`--set`), the symplectic identity through impacts, the same
//! numbers from a model file as from the catalogue, and refusals.

use crate::common;

use common::{final_state, numbers, root, run_in, summary};
use serde_json::Value;

fn matrix(s: &Value) -> Vec<Vec<f64>> {
    s["jacobian"]["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .map(numbers)
        .collect()
}

/// The particle bouncing on the floor (n = 2, no constraint, 4 impacts in
/// 5 s): the columns of ∂(q_N, p_N)/∂(q_0, p_0) for the initial momenta
/// against central differences of the CLI's own final states from
/// perturbed initial velocities (`--set v=…`; p = v for the unit mass).
#[test]
fn the_summary_jacobian_matches_differences_of_cli_runs() {
    let base = summary(&["run", "particle", "--t-end", "5", "--jacobian"]);
    assert_eq!(
        base["jacobian"]["rows"],
        serde_json::json!(["q:x", "q:y", "p:x", "p:y"])
    );
    assert_eq!(base["jacobian"]["cols"], base["jacobian"]["rows"]);
    assert!(base["impacts"].as_u64().unwrap() >= 3);
    let j = matrix(&base);
    let show = summary(&["run", "particle", "--t-end", "5"]);
    // The Jacobian run goes through the run-time core: the same final state.
    let (f0, f1) = (final_state(&base), final_state(&show));
    for (a, b) in f0.iter().zip(&f1) {
        assert!(
            (a - b).abs() <= 1e-13 * a.abs().max(1.0),
            "{f0:?} vs {f1:?}"
        );
    }
    let delta = 1e-6;
    // The catalogue's initial velocity is (1, 0).
    for col in [2, 3] {
        let at = |e: f64| {
            let mut v = [1.0, 0.0];
            v[col - 2] += e;
            let set = format!("v={:.17e},{:.17e}", v[0], v[1]);
            final_state(&summary(&[
                "run", "particle", "--t-end", "5", "--set", &set,
            ]))
        };
        let (plus, minus) = (at(delta), at(-delta));
        for i in 0..4 {
            let fd = (plus[i] - minus[i]) / (2.0 * delta);
            assert!(
                (fd - j[i][col]).abs() < 1e-7 * (1.0 + j[i][col].abs()),
                "∂{i}/∂{col}: exact {}, differences {fd}",
                j[i][col]
            );
        }
    }
}

/// A regular unconstrained system's discrete flow is symplectic through
/// every impact: the ellipse's Jacobian grows to 1e21 in 25 s (chaotic
/// bouncing, about two dozen impacts: 23 before 2026-12-07, 24 since, as
/// round-off moved), and ∂Φᵀ J ∂Φ = J still holds to 1e-13 of |∂Φ|².
/// The same at order 4 (composed steps, the continuous law at impacts;
/// measured 3.4e-15 and 1.6e-16 at 20 and 25 impacts).
#[test]
fn the_flow_through_impacts_is_symplectic() {
    for (model, t_end, order) in [
        ("particle", "25", "2"),
        ("ellipse", "25", "2"),
        ("particle", "25", "4"),
        ("ellipse", "25", "4"),
    ] {
        let s = summary(&[
            "run",
            model,
            "--t-end",
            t_end,
            "--jacobian",
            "--order",
            order,
        ]);
        let j = matrix(&s);
        let n = j.len() / 2;
        let scale = j.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
        let omega = |i: usize, k: usize| -> f64 {
            if k == i + n {
                1.0
            } else if i == k + n {
                -1.0
            } else {
                0.0
            }
        };
        let mut worst: f64 = 0.0;
        for a in 0..2 * n {
            for b in 0..2 * n {
                let mut x = 0.0;
                for i in 0..2 * n {
                    for k in 0..2 * n {
                        x += j[i][a] * omega(i, k) * j[k][b];
                    }
                }
                worst = worst.max((x - omega(a, b)).abs());
            }
        }
        assert!(
            worst / (scale * scale) < 1e-13,
            "{model}: defect {:.2e} at |J| {scale:.2e}",
            worst / (scale * scale)
        );
        let text = run_in(root(), &["run", model, "--t-end", t_end, "--jacobian"]).stdout;
        assert!(text.contains("symplectic to"), "{text}");
    }
}

/// The model file of the pendulum gives the catalogue's Jacobian (the same
/// Lagrangian, constraint and wall, through the same core).
#[test]
fn a_model_file_gives_the_catalogue_jacobian() {
    let a = matrix(&summary(&["run", "pendulum", "--t-end", "3", "--jacobian"]));
    let b = matrix(&summary(&[
        "run",
        "--model-file",
        "models/pendulum.toml",
        "--t-end",
        "3",
        "--jacobian",
    ]));
    for (ra, rb) in a.iter().zip(&b) {
        for (x, y) in ra.iter().zip(rb) {
            assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{x} vs {y}");
        }
    }
}

/// A degenerate Lagrangian (the LC circuit, docs/theory.md §12.8) gives a
/// `jacobian` block: 8 × 8, finite, and its first column exact. `L` does
/// not depend on the inductor's charge and Kirchhoff's rows only see
/// increments, so shifting `q^ℓ(0)` shifts `q^ℓ(T)` by as much and changes
/// nothing else (column `e₀`, to 1e-12).
#[test]
fn a_degenerate_lagrangian_gives_a_jacobian() {
    let out = summary(&["run", "lc", "--t-end", "3", "--jacobian"]);
    let rows = out["jacobian"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8, "{rows:?}");
    assert_eq!(rows[0], "q:q_l");
    let j = matrix(&out);
    assert_eq!(j.len(), 8);
    assert!(j.iter().flatten().all(|x| x.is_finite()));
    for (i, row) in j.iter().enumerate() {
        assert_eq!(row.len(), 8);
        let expected = if i == 0 { 1.0 } else { 0.0 };
        assert!(
            (row[0] - expected).abs() <= 1e-12,
            "∂x[{i}]/∂q_l: {}",
            row[0]
        );
    }
    // the dynamics are felt: the inductor's momentum moves the charges
    assert!(j[2][4].abs() > 1e-3, "∂q_c2/∂p_l = {}", j[2][4]);
}

#[test]
fn what_has_no_tangent_map_is_refused_with_a_usage_error() {
    for (args, needle) in [
        (
            &["run", "lc", "--jacobian", "--stepper", "hamiltonian"][..],
            "has no Hamiltonian",
        ),
        (
            &["run", "lc-ladder", "--sensitivity", "R1"][..],
            "no parameter `R1`",
        ),
        (
            &["run", "pendulum", "--jacobian", "--reduce"][..],
            "cannot be used with",
        ),
    ] {
        let out = run_in(root(), args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out.stderr.contains("panicked"), "{args:?}");
    }
}

/// The Hamiltonian stepper has a tangent map (docs/theory.md §12.7): the
/// particle through its bounces, forward and backward in time, gives a
/// `jacobian` block whose momentum columns equal central differences of
/// the CLI's own Hamiltonian runs from perturbed initial velocities
/// (relative 1e-7, as the Lagrange–Dirac check above).
#[test]
fn the_hamiltonian_stepper_gives_a_jacobian_matching_differences() {
    for backward in [false, true] {
        let mut args = vec![
            "run",
            "particle",
            "--t-end",
            "5",
            "--stepper",
            "hamiltonian",
        ];
        if backward {
            args.push("--backward");
        }
        let base = summary(&[&args[..], &["--jacobian"]].concat());
        assert_eq!(
            base["jacobian"]["rows"],
            serde_json::json!(["q:x", "q:y", "p:x", "p:y"])
        );
        assert!(base["impacts"].as_u64().unwrap() >= 3, "{backward}");
        let j = matrix(&base);
        let delta = 1e-6;
        for col in [2, 3] {
            let at = |e: f64| {
                let mut v = [1.0, 0.0];
                v[col - 2] += e;
                let set = format!("v={:.17e},{:.17e}", v[0], v[1]);
                final_state(&summary(&[&args[..], &["--set", &set]].concat()))
            };
            let (plus, minus) = (at(delta), at(-delta));
            for i in 0..4 {
                let fd = (plus[i] - minus[i]) / (2.0 * delta);
                assert!(
                    (fd - j[i][col]).abs() < 1e-7 * (1.0 + j[i][col].abs()),
                    "backward {backward}: ∂{i}/∂{col}: exact {}, differences {fd}",
                    j[i][col]
                );
            }
        }
    }
}

/// A circuit's sensitivities are in its element values (docs/theory.md
/// §12.8): the ladder of 4 cells (forward map) has capacitors `C1`…`C4`,
/// all of capacitance `c`, so the sum of the four sensitivities is the
/// derivative in `c` — checked against central differences of the CLI's
/// own runs with `--set c=1±1e-4` (each capacitor's initial charge `c V`
/// moves with it, as the seed says), relative 1e-6; and `--jacobian` gives
/// the rows named after the branch charges.
#[test]
fn a_circuit_differentiates_in_its_element_values() {
    let base = [
        "run",
        "lc-ladder",
        "--set",
        "cells=4",
        "--h",
        "0.1",
        "--steps",
        "80",
    ];
    let s = summary(&[&base[..], &["--jacobian", "--sensitivity", "C1,C2,C3,C4"]].concat());
    assert_eq!(s["jacobian"]["rows"][0], "q:q_L1");
    assert_eq!(matrix(&s).len(), 18);
    let sum: Vec<f64> = (1..=4)
        .map(|i| numbers(&s["sensitivity"][format!("C{i}")]))
        .fold(vec![0.0; 18], |acc, x| {
            acc.iter().zip(&x).map(|(a, b)| a + b).collect()
        });
    let delta = 1e-4;
    let at = |c: f64| {
        final_state(&summary(
            &[&base[..], &["--set", &format!("c={c}")]].concat(),
        ))
    };
    let (plus, minus) = (at(1.0 + delta), at(1.0 - delta));
    let scale = sum.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
    for i in 0..18 {
        let fd = (plus[i] - minus[i]) / (2.0 * delta);
        assert!(
            (fd - sum[i]).abs() <= 1e-6 * scale,
            "∂x[{i}]/∂c: {} vs {fd}",
            sum[i]
        );
    }
}
