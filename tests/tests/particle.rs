//! Bouncing particle (\[VCI\] §4.1, docs/theory.md §5) against the closed-form solution.

use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, RunOptions, integrate, state_from_pair, vci_pair,
};
use diracvi_impact::ImpactIntegrator;
use diracvi_models::reference::BouncingParticle;
use diracvi_models::{Model, Particle};
use diracvi_tests::{fitted_order, run_model};

const LADDER: [f64; 4] = [1e-2, 5e-3, 2.5e-3, 1.25e-3];

/// Max position error over [0, 10] ≤ C h² on the ladder (not a slope between
/// neighbours: after impacts the error is O(h²) but not monotone, docs/theory.md §5).
#[test]
fn particle_position_error_is_bounded_by_c_h_squared() {
    const C: f64 = 25.0;
    let model = Particle::new(Default::default()).unwrap();
    let setup = model.run_defaults();
    let exact = BouncingParticle::default();
    for h in LADDER {
        let steps = (setup.t_end / h).round() as usize;
        let traj = run_model(&model, &setup, h, steps, 1, Direction::Forward).unwrap();
        let mut err: f64 = 0.0;
        for r in &traj.records {
            let (q, _) = exact.state_at(r.t);
            err = err.max((r.q[0] - q[0]).hypot(r.q[1] - q[1]));
            assert!(
                r.q[1] >= 0.0,
                "below the floor at t = {}: y = {}",
                r.t,
                r.q[1]
            );
        }
        eprintln!(
            "particle h = {h:e}: max position error {err:.3e} = {:.3} h², {} impacts",
            err / (h * h),
            traj.events.len()
        );
        assert!(err <= C * h * h, "h = {h}: error {err} > {C} h²");
        assert_eq!(traj.events.len(), exact.impact_times(setup.t_end).len());
        for e in &traj.events {
            let rel = (e.energy_after - e.energy_before).abs() / e.energy_before.abs();
            assert!(rel <= 1e-10, "discrete energy jump {rel:e} at t = {}", e.t);
        }
    }
}

/// With the discrete-pair initial data of \[VCI\] §4.1 the discrete times are
/// shifted by h/2; the first impact time, corrected for the shift, converges
/// at second order.
#[test]
fn particle_first_impact_time_is_second_order() {
    let model = Particle::new(Default::default()).unwrap();
    let setup = model.run_defaults();
    let t_exact = BouncingParticle::default().first_impact_time().unwrap();
    let mut errs = vec![];
    for h in LADDER {
        let (q0, q1) = vci_pair(&setup.q0, &setup.v0, h);
        let s0 = state_from_pair(&model, &setup.discretization, 0.0, &q0, &q1, h).unwrap();
        let mut integ = ImpactIntegrator::new(LagrangeDirac::new(
            model.clone(),
            setup.discretization,
            setup.constraint,
            Direction::Forward,
        ));
        let steps = (1.0 / h).round() as usize;
        let traj = integrate(
            &mut integ,
            s0,
            h,
            RunOptions::new(steps).every(0),
            |_| {},
            |_| {},
        )
        .unwrap();
        let t_first = traj.events[0].t - 0.5 * h;
        errs.push((t_first - t_exact).abs());
    }
    let order = fitted_order(&LADDER, &errs);
    eprintln!("first impact time errors {errs:?}, fitted order {order:.3}");
    assert!((order - 2.0).abs() <= 0.1, "order {order}");
}
