//! The long horizons of the discrete-dirac tests (10^6 steps of the Kepler
//! problem and of the nonholonomic pendulum without its wall, a chain of 50
//! bodies), here in the long-horizon test package at opt-level 2: the
//! discrete-dirac suite (`crates/discrete-dirac/tests`) compiles at
//! opt-level 0, where these would take minutes (workspace Cargo.toml, "Test
//! suites at opt-level 0"). The systems are that suite's
//! (`crates/discrete-dirac/tests/common`).

#[path = "../../../crates/discrete-dirac/tests/common/mod.rs"]
mod common;

use common::{
    Chain, KEPLER_A as A, KEPLER_E as E, Kepler, Pendulum, chain_start, kepler_pericenter,
    linear_fit, pendulum_initial,
};
use diracvi_discrete_dirac::dynamic::{DynLagrangeDirac, integrate_dyn};
use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, RunOptions, integrate, state_from_velocity,
};
use diracvi_geometry::{ConstraintDiscretization, Discretization, System};
use std::time::Instant;

/// 10^6 midpoint steps of the eccentric Kepler orbit (h = 0.01, ≈ 1590
/// periods): the energy error oscillates, bounded, with no fitted drift.
/// Figures:
/// `cargo test --release -p diracvi-long-tests --test suite long_horizons:: -- --nocapture`.
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

/// docs/theory.md §5 long run without the wall: the energy over 10^6 steps. The
/// forward (symplectic-Euler type, retraction constraint) scheme is not
/// symmetric and its energy drifts linearly, at a rate proportional to `h`
/// (upwards, as \[VCI\] Fig. 4 shows "a slight increase"); the midpoint scheme
/// (midpoint constraint) is shown for comparison. About 5 s in the test
/// profile; figures:
/// `cargo test --release -p diracvi-long-tests --test suite long_horizons:: -- --nocapture`.
#[test]
fn pendulum_without_wall_energy_over_a_million_steps() {
    let pend = Pendulum::default();
    let (q0, v0) = pendulum_initial();
    let s0 = state_from_velocity(&pend, 0.0, &q0, &v0).unwrap();
    let e_cont = pend.energy(&q0, &v0);
    let mut drifts = vec![];
    for (disc, cd, h) in [
        (
            Discretization::Forward,
            ConstraintDiscretization::Retraction,
            1e-3,
        ),
        (
            Discretization::Forward,
            ConstraintDiscretization::Retraction,
            1e-4,
        ),
        (
            Discretization::Midpoint,
            ConstraintDiscretization::Midpoint,
            1e-3,
        ),
    ] {
        let steps = 1_000_000;
        let mut st = LagrangeDirac::plus(pend, disc, cd);
        let (mut ts, mut es) = (vec![], vec![]);
        let clock = std::time::Instant::now();
        let traj = integrate(
            &mut st,
            s0,
            h,
            RunOptions::new(steps).every(100).discard_records(),
            |r| {
                ts.push(r.t);
                es.push(r.energy);
            },
            |_| {},
        )
        .unwrap();
        let wall = clock.elapsed();
        let s = traj.summary;
        let de: Vec<f64> = es.iter().map(|e| e - s.initial_energy).collect();
        let (_, drift) = linear_fit(&ts, &de);
        let t_end = s.final_state.t;
        eprintln!(
            "pendulum {disc}/{cd} h = {h:.0e}, {steps} steps (T = {t_end:.0}), {wall:.2?}, {:.2} Newton iterations/step: E_d0 = {:.10} (continuous E0 = {e_cont:.10}), max |E_d − E_d0| = {:.3e} ({:.2e} relative), fitted drift {drift:.3e} per unit time ({:.3e} over the run), final E_d − E_d0 = {:.3e}, max constraint residual {:.1e}",
            s.newton_iterations as f64 / steps as f64,
            s.initial_energy,
            s.max_abs_energy_deviation,
            s.max_abs_energy_deviation / s.initial_energy.abs(),
            drift * t_end,
            s.final_energy - s.initial_energy,
            s.max_constraint_residual,
        );
        assert!(s.max_constraint_residual <= 1e-12);
        drifts.push((drift, s.max_abs_energy_deviation, t_end));
    }
    // Forward: a first-order drift, upwards: 10× smaller step, 10× slower drift.
    let ratio = drifts[1].0 / drifts[0].0;
    eprintln!("forward drift ratio h = 1e-4 : 1e-3 = {ratio:.3}");
    assert!(drifts[0].0 > 0.0 && drifts[1].0 > 0.0);
    assert!((0.05..=0.2).contains(&ratio), "drift ratio {ratio}");
    // Midpoint: no drift to speak of over the same 10^6 steps.
    let (d, max_dev, t_end) = drifts[2];
    assert!(d.abs() * t_end <= 0.1 * max_dev, "midpoint drift {d:e}");
}

#[test]
fn a_fifty_body_chain_keeps_its_energy_and_constraint() {
    let chain = Chain { k: 50 };
    let s0 = chain_start(&chain);
    let mut st = DynLagrangeDirac::new(
        &chain,
        Discretization::Midpoint,
        ConstraintDiscretization::Midpoint,
        Direction::Forward,
    );
    let (h, steps) = (1e-2, 2000);
    let clock = Instant::now();
    let run = integrate_dyn(
        &mut st,
        s0.clone(),
        h,
        RunOptions::new(steps).every(0).discard_records(),
        |_| {},
        |_| {},
    )
    .unwrap();
    let elapsed = clock.elapsed();
    let sum = &run.summary;
    let e0 = sum.initial_energy;
    let band = sum.max_abs_energy_deviation / e0.abs();
    eprintln!(
        "chain of 50 (n = 50, m = 1, midpoint): {steps} steps, {:.0} µs/step, {} Newton iterations, {} Jacobians; E_0 = {e0:.6}, max |E − E_0| / |E_0| = {band:.2e}, max constraint residual {:.2e}",
        elapsed.as_secs_f64() * 1e6 / steps as f64,
        sum.newton_iterations,
        sum.jacobian_evaluations,
        sum.max_constraint_residual,
    );
    assert!((sum.final_state.q.clone() - &s0.q).amax() > 0.1, "it moves");
    // The midpoint rule does not conserve the energy of a nonholonomic
    // system exactly, but keeps it in a band of O(h²): measured 2.5e-7
    // relative; a drift or a wrong momentum leaves it at once.
    assert!(band <= 1e-5, "energy band {band:e}");
    assert!(
        sum.max_constraint_residual <= 1e-12,
        "constraint residual {:e}",
        sum.max_constraint_residual
    );
}

/// The LC circuit's midpoint step at small `h` (docs/theory.md §3.9, "The
/// midpoint map and algebraic variables"): the capacitors' voltage law
/// around the loop c1–c3, `e = q^{c1}/c1 − q^{c3}/c3 = 0`, enters the
/// midpoint step only through its values at midpoints,
/// `E_{k+1/2} = (e_k + e_{k+1})/2`, as the two-step recurrence
/// `E_{k−1/2} + E_{k+1/2} = 0`. Its characteristic root −1 is double, so the
/// round-off `δ` of each step grows at the nodes as `(−1)^k (a + b k)`,
/// about `δ N^{3/2}` after `N` steps, while the midpoint values stay at
/// round-off. The forward map imposes `e = 0` at the nodes and keeps it.
/// Figures:
/// `cargo test --release -p diracvi-long-tests --test suite long_horizons::lc -- --nocapture`.
#[test]
fn lc_midpoint_loop_voltage_alternates_at_the_nodes_and_holds_at_midpoints() {
    let lc = common::Lc::default();
    let [c1, _, c3] = lc.c;
    let steps = 200_000;
    let h = 10.0 * std::f64::consts::PI / steps as f64;
    let mut runs = vec![];
    for (disc, cd) in [
        (Discretization::Midpoint, ConstraintDiscretization::Midpoint),
        (
            Discretization::Forward,
            ConstraintDiscretization::Retraction,
        ),
    ] {
        let mut st = LagrangeDirac::plus(lc, disc, cd);
        let mut e = vec![];
        integrate(
            &mut st,
            lc.start(),
            h,
            RunOptions::new(steps).discard_records(),
            |r| e.push(r.q[1] / c1 - r.q[3] / c3),
            |_| {},
        )
        .unwrap();
        runs.push(e);
    }
    let largest = |x: &mut dyn Iterator<Item = f64>| x.fold(0.0f64, |m, v| m.max(v.abs()));
    let e = &runs[0];
    let nodes = largest(&mut e.iter().copied());
    let mids = largest(&mut e.windows(2).map(|w| 0.5 * (w[0] + w[1])));
    // Per step: the recurrence's residual, the round-off injected.
    let injected = largest(&mut e.windows(3).map(|w| 0.25 * (w[0] + 2.0 * w[1] + w[2])));
    let forward = largest(&mut runs[1].iter().copied());
    let n = steps as f64;
    eprintln!(
        "LC midpoint, {steps} steps of h = {h:.3e}: max |e_k| at the nodes {nodes:.2e} ({:.2} eps N^1.5), at midpoints {mids:.2e}, per-step recurrence residual {injected:.2e}; forward map: max |e_k| {forward:.2e}",
        nodes / (f64::EPSILON * n.powf(1.5))
    );
    // The midpoints hold the voltage law to round-off; each step's
    // recurrence holds to a few ulps of the charges (|q| ≤ 10).
    assert!(mids <= 1e-12, "midpoint values {mids:e}");
    assert!(injected <= 1e-14, "recurrence residual {injected:e}");
    // The nodes carry the parasitic mode: far above the midpoints,
    // alternating in sign over the last thousand steps, and within the
    // growth law of a double root fed by round-off.
    assert!(nodes >= 100.0 * mids, "nodes {nodes:e}, midpoints {mids:e}");
    assert!(
        e[e.len() - 1000..].windows(2).all(|w| w[0] * w[1] < 0.0),
        "the nodal voltage difference does not alternate"
    );
    assert!(
        nodes <= 8.0 * f64::EPSILON * n.powf(1.5),
        "nodes {nodes:e} beyond the double root's growth"
    );
    // The forward map: the law at the nodes, to a few ulps of the charges.
    assert!(forward <= 1e-14, "forward map {forward:e}");
}
