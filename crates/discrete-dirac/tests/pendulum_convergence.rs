//! The nonholonomic spherical pendulum of \[VCI\] §4.3 without its cylinder
//! (docs/theory.md §5 `pendulum`): the constraint `f(θ) dθ − dφ` is integrable, so
//! `θ(t)` follows the 1-DOF Lagrangian `½mℓ²(1 + f² sin²θ) θ̇² − mgℓ cos θ`.
//! Both discretizations converge to it; the constraint holds to round-off.

use crate::common;
use common::{Pendulum, f_pend, fitted_order, linear_fit, reduced_pendulum_reference};
use diracvi_discrete_dirac::{LagrangeDirac, RunOptions, integrate, state_from_velocity};
use diracvi_geometry::{ConstraintDiscretization, Discretization, SVector, System};
use std::f64::consts::PI;

/// docs/theory.md §5 initial data: `q(0) = (0.75π, 0)`, `v(0) = (0.25π, f(θ0)·0.25π)`.
fn initial() -> (SVector<f64, 2>, SVector<f64, 2>) {
    let th0 = 0.75 * PI;
    (
        SVector::from([th0, 0.0]),
        SVector::from([0.25 * PI, f_pend(th0) * 0.25 * PI]),
    )
}

/// `θ(T)` error of the stepper at step `h`, and the largest constraint residual.
fn theta_error(
    disc: Discretization,
    cd: ConstraintDiscretization,
    h: f64,
    t_end: f64,
    th_ref: f64,
) -> (f64, f64) {
    let pend = Pendulum::default();
    let (q0, v0) = initial();
    let s0 = state_from_velocity(&pend, 0.0, &q0, &v0).unwrap();
    let steps = (t_end / h).round() as usize;
    assert!((steps as f64 * h - t_end).abs() <= 1e-12);
    let mut st = LagrangeDirac::plus(pend, disc, cd);
    let traj = integrate(
        &mut st,
        s0,
        h,
        RunOptions::new(steps).every(0),
        |_| {},
        |_| {},
    )
    .unwrap();
    let end = traj.summary.final_state;
    // The integrated constraint φ − F(θ) = const, F' = f: a check that the
    // discrete trajectory stays on the right leaf, to discretization accuracy.
    let big_f = |th: f64| PI * th + 0.5 * th + 0.25 * (2.0 * th).sin();
    let leaf = (end.q[1] - big_f(end.q[0])) - (q0[1] - big_f(q0[0]));
    assert!(leaf.abs() <= 50.0 * h, "{disc}: left the leaf by {leaf:e}");
    (
        (end.q[0] - th_ref).abs(),
        traj.summary.max_constraint_residual,
    )
}

#[test]
fn pendulum_without_wall_converges_to_reduced_dynamics() {
    let pend = Pendulum::default();
    let (q0, v0) = initial();
    let t_end = 2.0;
    let (th_ref, est) = reduced_pendulum_reference(&pend, q0[0], v0[0], t_end, 20_000);
    eprintln!("reference θ({t_end}) = {th_ref:.15} (Richardson error estimate {est:.1e})");
    assert!(est <= 1e-12, "reference not accurate enough: {est:e}");
    let hs = [4e-3, 2e-3, 1e-3, 5e-4];
    for (disc, cd) in [
        (
            Discretization::Forward,
            ConstraintDiscretization::Retraction,
        ),
        (Discretization::Midpoint, ConstraintDiscretization::Midpoint),
    ] {
        let mut errs = vec![];
        for &h in &hs {
            let (err, res) = theta_error(disc, cd, h, t_end, th_ref);
            eprintln!(
                "{disc}/{cd}: h = {h:.0e}: |θ − θ_ref| = {err:.3e}, max constraint residual {res:.1e}"
            );
            assert!(res <= 1e-12, "{disc}: constraint residual {res:e}");
            errs.push(err);
        }
        let order = fitted_order(&hs, &errs);
        eprintln!("{disc}/{cd}: fitted order {order:.3}");
        assert!(order >= 0.9, "{disc}: fitted order {order}");
        if disc == Discretization::Midpoint {
            // Measured: second order (see the report); keep a margin.
            assert!(order >= 1.8, "midpoint: fitted order {order}");
        }
    }
}

/// docs/theory.md §5 long run without the wall: the energy over 10^6 steps. The
/// forward (symplectic-Euler type, retraction constraint) scheme is not
/// symmetric and its energy drifts linearly, at a rate proportional to `h`
/// (upwards, as \[VCI\] Fig. 4 shows "a slight increase"); the midpoint scheme
/// (midpoint constraint) is shown for comparison. About 5 s in the test
/// profile; figures:
/// `cargo test --release -p diracvi-discrete-dirac --test suite pendulum_convergence:: -- --nocapture`.
#[test]
fn pendulum_without_wall_energy_over_a_million_steps() {
    let pend = Pendulum::default();
    let (q0, v0) = initial();
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
