//! The midpoint discretization on a smooth unconstrained system: the Kepler
//! problem against its exact solution (Kepler's equation). Second order in
//! `q` and `p`; the energy error stays bounded without drift over 10^6
//! steps.

use crate::common;
use common::{Kepler, fitted_order, kepler_exact, kepler_pericenter, linear_fit};
use diracvi_discrete_dirac::{LagrangeDirac, RunOptions, integrate, state_from_velocity};
use diracvi_geometry::{ConstraintDiscretization, Discretization, System};

const A: f64 = 1.0;
const E: f64 = 0.5;

#[test]
fn kepler_midpoint_is_second_order() {
    let (q0, v0) = kepler_pericenter(A, E);
    let s0 = state_from_velocity(&Kepler, 0.0, &q0, &v0).unwrap();
    // Not a whole period, so the error is not only a phase error at pericenter.
    let t_end = 5.0;
    let (q_ref, v_ref) = kepler_exact(A, E, t_end);
    let (mut hs, mut eq, mut ep) = (vec![], vec![], vec![]);
    for n in [250, 500, 1000, 2000] {
        let h = t_end / n as f64;
        let mut st = LagrangeDirac::plus(
            Kepler,
            Discretization::Midpoint,
            ConstraintDiscretization::Retraction,
        );
        let traj = integrate(&mut st, s0, h, RunOptions::new(n).every(0), |_| {}, |_| {}).unwrap();
        let end = traj.summary.final_state;
        assert!((end.t - t_end).abs() <= 1e-12);
        let (dq, dp) = ((end.q - q_ref).norm(), (end.p - v_ref).norm());
        eprintln!(
            "Kepler midpoint h = {h:.4}: |q − q_exact| = {dq:.3e}, |p − p_exact| = {dp:.3e}, max |E_d − E_d0| = {:.2e}",
            traj.summary.max_abs_energy_deviation
        );
        hs.push(h);
        eq.push(dq);
        ep.push(dp);
    }
    let (oq, op) = (fitted_order(&hs, &eq), fitted_order(&hs, &ep));
    eprintln!("Kepler midpoint fitted order: q {oq:.3}, p {op:.3}");
    assert!((oq - 2.0).abs() <= 0.1, "q order {oq}");
    assert!((op - 2.0).abs() <= 0.1, "p order {op}");
}

/// 10^6 midpoint steps of the eccentric Kepler orbit (h = 0.01, ≈ 1590
/// periods): the energy error oscillates, bounded, with no fitted drift.
/// Figures:
/// `cargo test --release -p diracvi-discrete-dirac --test suite midpoint_kepler:: -- --nocapture`.
#[test]
fn kepler_midpoint_energy_over_a_million_steps() {
    let (q0, v0) = kepler_pericenter(A, E);
    let s0 = state_from_velocity(&Kepler, 0.0, &q0, &v0).unwrap();
    let e_exact = Kepler.energy(&q0, &v0);
    let (h, steps) = (0.01, 1_000_000);
    let mut st = LagrangeDirac::plus(
        Kepler,
        Discretization::Midpoint,
        ConstraintDiscretization::Retraction,
    );
    // The continuous energy H(q_k, p_k) at every 100th step, besides the
    // discrete energy the driver reports.
    let (mut ts, mut hk, mut ed) = (vec![], vec![], vec![]);
    let clock = std::time::Instant::now();
    let traj = integrate(
        &mut st,
        s0,
        h,
        RunOptions::new(steps).every(100).discard_records(),
        |r| {
            ts.push(r.t);
            hk.push(Kepler.hamiltonian(&r.q, &r.p).unwrap() - e_exact);
            ed.push(r.energy);
        },
        |_| {},
    )
    .unwrap();
    let wall = clock.elapsed();
    let s = traj.summary;
    let ed: Vec<f64> = ed.iter().map(|e| e - s.initial_energy).collect();
    let (_, drift_h) = linear_fit(&ts, &hk);
    let (_, drift_d) = linear_fit(&ts, &ed);
    let max_h = hk.iter().fold(0.0f64, |m, e| m.max(e.abs()));
    let t_end = s.final_state.t;
    eprintln!(
        "Kepler midpoint h = {h}, {steps} steps (T = {t_end:.0}, {:.0} periods), {wall:.2?}, {:.2} Newton iterations/step",
        t_end / (2.0 * std::f64::consts::PI),
        s.newton_iterations as f64 / steps as f64
    );
    eprintln!(
        "  H(q_k, p_k) − E: max {max_h:.3e}, fitted drift {drift_h:.3e} per unit time ({:.2e} over the run)",
        drift_h * t_end
    );
    eprintln!(
        "  E_d − E_d0: max {:.3e}, fitted drift {drift_d:.3e} per unit time ({:.2e} over the run)",
        s.max_abs_energy_deviation,
        drift_d * t_end
    );
    assert!(max_h <= 1e-2, "energy error {max_h:e}");
    // No drift: what a linear trend would accumulate over the run is small
    // against the bounded oscillation.
    assert!(drift_h.abs() * t_end <= 0.05 * max_h, "drift {drift_h:e}");
    assert!(
        drift_d.abs() * t_end <= 0.05 * s.max_abs_energy_deviation,
        "drift {drift_d:e}"
    );
}
