//! The nonholonomic spherical pendulum of \[VCI\] §4.3 without its cylinder
//! (docs/theory.md §5 `pendulum`): the constraint `f(θ) dθ − dφ` is integrable, so
//! `θ(t)` follows the 1-DOF Lagrangian `½mℓ²(1 + f² sin²θ) θ̇² − mgℓ cos θ`.
//! Both discretizations converge to it; the constraint holds to round-off.

use crate::common;
use common::{Pendulum, fitted_order, pendulum_initial, reduced_pendulum_reference};
use diracvi_discrete_dirac::{LagrangeDirac, RunOptions, integrate, state_from_velocity};
use diracvi_geometry::{ConstraintDiscretization, Discretization};
use std::f64::consts::PI;

/// `θ(T)` error of the stepper at step `h`, and the largest constraint residual.
fn theta_error(
    disc: Discretization,
    cd: ConstraintDiscretization,
    h: f64,
    t_end: f64,
    th_ref: f64,
) -> (f64, f64) {
    let pend = Pendulum::default();
    let (q0, v0) = pendulum_initial();
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
    let (q0, v0) = pendulum_initial();
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
