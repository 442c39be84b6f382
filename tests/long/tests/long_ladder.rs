//! The 1000-cell LC ladder over 10⁵ steps (moved here from
//! crates/circuit/tests/circuits.rs, where it took 80–90 s at the circuit
//! package's opt-level 1; here its stepper compiles at opt-level 2).

use diracvi_circuit::Circuit;
use diracvi_circuit::netlist::Netlist;
use diracvi_discrete_dirac::Direction;
use diracvi_discrete_dirac::dynamic::dyn_advance;
use diracvi_geometry::Discretization;
use std::f64::consts::PI;
use std::time::Instant;

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
    // The step loop of `Circuit::simulate`, written out so that the stepper
    // is instantiated (and optimised) in this package rather than run as
    // compiled in the circuit library at opt-level 1.
    let mut stepper = circuit.stepper(Discretization::Forward, Direction::Forward);
    let mut state = circuit.initial_state();
    // Capacitor charges of the previous state.
    let mut previous: Vec<f64> = caps.iter().map(|&i| state.q[i]).collect();
    let mut modified = Vec::with_capacity(steps);
    let (mut e0, mut e_min, mut e_max, mut e_last) =
        (f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::NAN);
    let mut kirchhoff: f64 = 0.0;
    let start = Instant::now();
    for k in 0..steps {
        let out = dyn_advance(&mut stepper, &state, h).unwrap();
        state = out.to;
        if k == 0 {
            e0 = out.energy;
        }
        (e_min, e_max, e_last) = (e_min.min(out.energy), e_max.max(out.energy), out.energy);
        kirchhoff = kirchhoff.max(out.constraint_residual);
        let s = &state;
        let kinetic: f64 = inds.iter().map(|&i| s.p[i] * s.p[i] / (2.0 * l)).sum();
        let mut potential = 0.0;
        for (&i, qp) in caps.iter().zip(previous.iter_mut()) {
            potential += *qp * s.q[i] / (2.0 * c);
            *qp = s.q[i];
        }
        modified.push(kinetic + potential);
    }
    let solve_time = start.elapsed();
    let spread = (e_max - e_min) / e0;
    assert!(spread < 0.1, "energy spread {spread}");
    assert!(kirchhoff <= 1e-12, "{kirchhoff}");
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
        kirchhoff,
        solve_time.as_secs_f64()
    );
    assert!(drift.abs() < 1e-11, "fitted relative drift {drift:e}");
    assert!(
        spread_modified < 1e-11,
        "modified energy spread {spread_modified:e}"
    );
    // The discrete energy itself: no drift beyond its bounded oscillation.
    let half = e_last - e0;
    assert!(half.abs() / e0 < spread.max(1e-12), "{half}");
}
