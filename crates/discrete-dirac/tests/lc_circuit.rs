//! The LC circuit of \[DDM\] §6: a degenerate Lagrangian with holonomic
//! constraints, stepped by the generic (+) and (−) Lagrange–Dirac steppers.

use crate::common;
use common::{Lc, fitted_order};
use diracvi_discrete_dirac::{Direction, LagrangeDirac, RunOptions, State, StepError, integrate};
use diracvi_geometry::{ConstraintDiscretization, Discretization, SVector};
use std::f64::consts::PI;

fn run(lc: Lc, per_period: usize, periods: usize) -> (Vec<State<4>>, f64) {
    let t_period = 2.0 * PI / lc.omega();
    let h = t_period / per_period as f64;
    let mut st = LagrangeDirac::plus(
        lc,
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    );
    let s0 = lc.start();
    let mut states = vec![s0];
    let traj = integrate(
        &mut st,
        s0,
        h,
        RunOptions::new(per_period * periods),
        |_| {},
        |_| {},
    )
    .unwrap();
    states.extend(traj.records.iter().skip(1).map(|r| State {
        t: r.t,
        q: r.q,
        p: r.p,
    }));
    assert!(
        traj.summary.max_constraint_residual <= 1e-12,
        "Kirchhoff residual {}",
        traj.summary.max_constraint_residual
    );
    (states, h)
}

#[test]
fn lc_converges_at_second_order_with_kirchhoff_and_equal_voltages() {
    let lc = Lc::default();
    let w = lc.omega();
    let mut hs = vec![];
    let mut errs = vec![];
    for n in [20, 40, 80, 160] {
        let (states, h) = run(lc, n, 5);
        let last = states.last().unwrap();
        let exact = 10.0 / w * (w * last.t).sin();
        let err = (last.q[0] - exact).abs();
        for s in &states {
            // Kirchhoff's laws (integrated, q(0) = 0) and equal capacitor voltages.
            let scale = s.q.amax().max(1.0);
            assert!(
                (s.q[2] - s.q[0]).abs() <= 1e-12 * scale,
                "KCL 1 at t={}",
                s.t
            );
            assert!(
                (s.q[2] - s.q[1] - s.q[3]).abs() <= 1e-12 * scale,
                "KCL 2 at t={}",
                s.t
            );
            assert!(
                (s.q[1] / lc.c[0] - s.q[3] / lc.c[2]).abs() <= 1e-12 * scale,
                "voltages differ at t={}: {} vs {}",
                s.t,
                s.q[1] / lc.c[0],
                s.q[3] / lc.c[2]
            );
        }
        eprintln!("LC N={n}: h={h:.5} error at 5T = {err:.3e}");
        hs.push(h);
        errs.push(err);
    }
    let order = fitted_order(&hs, &errs);
    eprintln!("LC fitted order {order:.4}");
    assert!((order - 2.0).abs() <= 0.1, "order {order}");
}

#[test]
fn lc_inconsistent_initial_voltage_is_reported() {
    let lc = Lc::default();
    let mut st = LagrangeDirac::plus(
        lc,
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    );
    // q^{c1}/c1 = 0.1 but q^{c3}/c3 = 0: a hidden constraint is violated.
    let s0 = State {
        t: 0.0,
        q: SVector::from([0.1, 0.1, 0.1, 0.0]),
        p: SVector::from([7.5, 0.0, 0.0, 0.0]),
    };
    let err = st.step(&s0, 0.1).unwrap_err();
    assert!(
        matches!(err, StepError::Inconsistent { t: 0.0, residual } if residual > 1e-4),
        "{err:?}"
    );
}

/// The degenerate equations keep their form along the run, so after the
/// first step the kept LU factors do all the Newton work (simplified Newton):
/// no Jacobian is evaluated, one or two iterations per step (the circuit is
/// linear), the residual ends at round-off, and the result equals a fresh
/// full-Newton solve of every step.
#[test]
fn lc_steps_reuse_the_kept_factors() {
    let lc = Lc::default();
    let h = 2.0 * PI / lc.omega() / 40.0;
    let new_stepper = || {
        LagrangeDirac::plus(
            lc,
            Discretization::Forward,
            ConstraintDiscretization::Retraction,
        )
    };
    let mut st = new_stepper();
    let s0 = lc.start();
    let (mut s, mut guess_increment) = (s0, SVector::<f64, 4>::zeros());
    for k in 0..100 {
        let step = st
            .solve_oriented(s.t, &s.q, &s.p, h, &guess_increment)
            .unwrap();
        assert!(step.degenerate);
        if k > 0 {
            assert_eq!(step.info.jacobian_evaluations, 0, "step {k}");
            // one step solves the linear equations; a second, when taken,
            // only finds the residual at its round-off floor
            assert!(step.info.iterations <= 2, "step {k}");
            assert!(step.info.residual <= 1e-14, "step {k}");
        }
        // a fresh stepper (no kept factors, full Newton) agrees
        let fresh = new_stepper()
            .solve_oriented(s.t, &s.q, &s.p, h, &guess_increment)
            .unwrap();
        assert!(fresh.info.jacobian_evaluations >= 1);
        let scale = step.b.amax().max(1.0);
        assert!(
            (step.b - fresh.b).amax() <= 1e-13 * scale,
            "step {k}: {} vs {}",
            step.b,
            fresh.b
        );
        guess_increment = step.b - s.q;
        s = State {
            t: s.t + h,
            q: step.b,
            p: step.pi_b,
        };
    }
}

/// The (−) stepper inverts the (+) stepper on the degenerate circuit too:
/// 400 steps forward then 400 back return to the start, to 1e-12 relative
/// (measured 4e-14; the backward steps find their own hidden constraints
/// and reuse their own factors).
#[test]
fn lc_forward_then_backward_returns_to_the_start() {
    let lc = Lc::default();
    let h = 2.0 * PI / lc.omega() / 40.0;
    let s0 = lc.start();
    let run = |direction, from: State<4>| {
        let mut st = LagrangeDirac::new(
            lc,
            Discretization::Forward,
            ConstraintDiscretization::Retraction,
            direction,
        );
        let traj = integrate(
            &mut st,
            from,
            h,
            RunOptions::new(400).every(0),
            |_| {},
            |_| {},
        )
        .unwrap();
        assert_eq!(traj.summary.degenerate_steps, 400);
        traj.summary.final_state
    };
    let there = run(Direction::Forward, s0);
    let back = run(Direction::Backward, there);
    println!(
        "LC 400 steps there and back: |Δq| = {:.2e}, |Δp| = {:.2e}, |Δt| = {:.2e}",
        (back.q - s0.q).amax(),
        (back.p - s0.p).amax(),
        (back.t - s0.t).abs()
    );
    assert!((back.q - s0.q).amax() <= 1e-12 * there.q.amax().max(1.0));
    assert!((back.p - s0.p).amax() <= 1e-12 * there.p.amax().max(s0.p.amax()));
    assert!((back.t - s0.t).abs() <= 1e-12);
}
