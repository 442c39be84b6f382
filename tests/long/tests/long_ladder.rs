//! The 1000-cell LC ladder over 10⁵ steps (moved here from
//! crates/circuit/tests/circuits.rs, where it took 80–90 s at the circuit
//! package's opt-level 1). `Circuit::simulate` is generic over its observer,
//! so its step loop is compiled in the calling package: here, at opt-level 2.

use diracvi_circuit::Circuit;
use diracvi_circuit::netlist::Netlist;
use diracvi_geometry::Discretization;
use std::f64::consts::PI;

/// A 1000-cell ladder: the discrete energy stays bounded with no drift
/// (and the scheme's exactly conserved quadratic form, `Σ p_L²/(2ℓ) +
/// Σ q_C,k q_C,k+1/(2c)` for this linear circuit, is conserved to
/// round-off), Kirchhoff residuals ≤ 1e-12, over 10⁵ steps (about 40 s in
/// the dev profile on the slower 2-core machine, 0.4 ms per step, where a
/// release step takes about 0.16 ms: the longest test of the workspace;
/// docs/theory.md §8.6).
#[test]
fn long_ladder_energy_bounded_and_kirchhoff_exact() {
    let cells = 1000;
    let steps = 100_000;
    let (l, c, h) = (1.0, 1.0, 0.1);
    let v0: Vec<f64> = (1..=cells)
        .map(|j| {
            let x = j as f64 / (cells as f64 + 1.0);
            (3.0 * PI * x).sin() + 0.5 * (200.0 * PI * x).sin()
        })
        .collect();
    let circuit = Circuit::new(Netlist::ladder(cells, l, c, &v0)).unwrap();
    let caps: Vec<usize> = (0..circuit.coordinates())
        .filter(|&i| circuit.element_of(i).name.starts_with('C'))
        .collect();
    let inds: Vec<usize> = (0..circuit.coordinates())
        .filter(|&i| circuit.element_of(i).name.starts_with('L'))
        .collect();
    // Capacitor charges of the previous state.
    let mut previous: Option<Vec<f64>> = None;
    let mut modified = Vec::with_capacity(steps);
    let run = circuit
        .simulate(Discretization::Forward, h, steps, 1, |s| {
            let prev = previous.get_or_insert_with(|| caps.iter().map(|&i| s.q[i]).collect());
            let kinetic: f64 = inds.iter().map(|&i| s.p[i] * s.p[i] / (2.0 * l)).sum();
            let mut potential = 0.0;
            for (&i, qp) in caps.iter().zip(prev.iter_mut()) {
                potential += *qp * s.q[i] / (2.0 * c);
                *qp = s.q[i];
            }
            if s.t > 0.0 {
                modified.push(kinetic + potential);
            }
        })
        .unwrap();
    let e0 = run.energy_initial;
    let spread = (run.energy_max - run.energy_min) / e0;
    assert!(spread < 0.1, "energy spread {spread}");
    assert!(
        run.max_kirchhoff_residual <= 1e-12,
        "{}",
        run.max_kirchhoff_residual
    );
    // Least-squares drift of the conserved form over the run.
    let m = modified.len() as f64;
    let tm = (m - 1.0) / 2.0;
    let mean = modified.iter().sum::<f64>() / m;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (k, v) in modified.iter().enumerate() {
        sxy += (k as f64 - tm) * (v - mean);
        sxx += (k as f64 - tm).powi(2);
    }
    let drift = (sxy / sxx) * m / mean;
    let spread_modified = modified
        .iter()
        .fold(0.0_f64, |w, v| w.max((v - modified[0]).abs()))
        / mean;
    println!(
        "{cells} cells, {steps} steps: E_d spread {spread:.3e}, conserved form: fitted drift {drift:.3e}, spread {spread_modified:.3e}; Kirchhoff {:.3e}; solve {:.2} s",
        run.max_kirchhoff_residual,
        run.solve_time.as_secs_f64()
    );
    assert!(drift.abs() < 1e-11, "fitted relative drift {drift:e}");
    assert!(
        spread_modified < 1e-11,
        "modified energy spread {spread_modified:e}"
    );
    // The discrete energy itself: no drift beyond its bounded oscillation.
    let half = run.energy_final - e0;
    assert!(half.abs() / e0 < spread.max(1e-12), "{half}");
}
