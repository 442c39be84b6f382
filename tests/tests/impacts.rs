//! Impacts of the ellipse, the star and the nonholonomic pendulum against
//! independent references (docs/theory.md §4–5).

use diracvi_discrete_dirac::Direction;
use diracvi_models::reference::{
    NonholonomicPendulumReference, PendulumReferenceParams, RigidBodyReference,
};
use diracvi_models::{Ellipse, Model, Pendulum, Star};
use diracvi_tests::{fitted_order, run_model};

fn rigid_first_impacts<Mo: Model<3, 0>>(
    model: &Mo,
    reference: &RigidBodyReference,
    h: f64,
) -> Vec<f64> {
    let setup = model.run_defaults();
    let t_end = 2.6;
    let steps = (t_end / h).round() as usize;
    let traj = run_model(model, &setup, h, steps, 1, Direction::Forward).unwrap();
    for r in &traj.records {
        let g = diracvi_geometry::min_boundary(model, &r.q).unwrap().1;
        assert!(g >= -1e-12, "penetration g = {g:e} at t = {}", r.t);
    }
    for e in &traj.events {
        let rel = (e.energy_after - e.energy_before).abs() / e.energy_before.abs();
        assert!(rel <= 1e-10, "discrete energy jump {rel:e} at t = {}", e.t);
    }
    let exact: Vec<f64> = reference.impacts(t_end, 10).iter().map(|i| i.t).collect();
    let got: Vec<f64> = traj.events.iter().map(|e| e.t).collect();
    eprintln!("h = {h}: impacts {got:?}\n   reference {exact:?}");
    got.iter()
        .zip(&exact)
        .take(3)
        .map(|(a, b)| (a - b).abs())
        .collect()
}

fn check_rigid<Mo: Model<3, 0>>(model: &Mo, reference: &RigidBodyReference) {
    let hs = [1e-2, 5e-3, 2.5e-3];
    let mut worst = vec![];
    for (i, h) in hs.into_iter().enumerate() {
        let errs = rigid_first_impacts(model, reference, h);
        assert_eq!(errs.len(), 3, "fewer than three impacts at h = {h}");
        if i == 0 {
            for e in &errs {
                assert!(*e <= 1e-3, "impact time error {e} > 1e-3 at h = 1e-2");
            }
        }
        worst.push(errs.iter().cloned().fold(0.0, f64::max));
    }
    let order = fitted_order(&hs, &worst);
    eprintln!("first three impact times: max errors {worst:?}, fitted order {order:.3}");
    assert!(order >= 1.8, "impact-time errors shrink with order {order}");
}

#[test]
fn ellipse_first_impacts_match_reference() {
    let model = Ellipse::new(Default::default()).unwrap();
    check_rigid(&model, &RigidBodyReference::ellipse());
}

#[test]
fn star_first_impacts_match_reference_without_penetration() {
    let model = Star::new(Default::default()).unwrap();
    check_rigid(&model, &RigidBodyReference::star());
}

#[test]
fn pendulum_theta_converges_to_reference_through_impacts() {
    let model = Pendulum::new(Default::default()).unwrap();
    let setup = model.run_defaults();
    let reference =
        NonholonomicPendulumReference::new(PendulumReferenceParams::default()).solve(5.0);
    let hs = [4e-3, 2e-3, 1e-3];
    let mut errs = vec![];
    let mut impact_errs = vec![];
    for h in hs {
        let steps = (5.0_f64 / h).round() as usize;
        let traj = run_model(&model, &setup, h, steps, 1, Direction::Forward).unwrap();
        assert!(
            traj.summary.max_constraint_residual <= 1e-12,
            "residual {}",
            traj.summary.max_constraint_residual
        );
        assert_eq!(traj.events.len(), reference.impact_times().len());
        for e in &traj.events {
            let rel = (e.energy_after - e.energy_before).abs() / e.energy_before.abs();
            assert!(rel <= 1e-10, "discrete energy jump {rel:e} at t = {}", e.t);
            assert!(
                e.p_before[0] * e.p_after[0] < 0.0,
                "θ momentum keeps its sign at t = {}",
                e.t
            );
        }
        // Impact times against the reference: first order, like θ, with an
        // error that grows by about one h per impact.
        for (i, (e, t_ref)) in traj.events.iter().zip(reference.impact_times()).enumerate() {
            let bound = (i + 1) as f64 * h;
            assert!(
                (e.t - t_ref).abs() <= bound,
                "impact {i} at {} vs reference {t_ref} (h = {h})",
                e.t
            );
        }
        impact_errs
            .push((traj.events.last().unwrap().t - reference.impact_times().last().unwrap()).abs());
        let last = traj.records.last().unwrap();
        let err = (last.q[0] - reference.theta_at(last.t)).abs();
        eprintln!(
            "pendulum h = {h}: θ(5) error {err:.3e}, impacts {:?}",
            traj.events.iter().map(|e| e.t).collect::<Vec<_>>()
        );
        errs.push(err);
    }
    let order = fitted_order(&hs, &errs);
    let impact_order = fitted_order(&hs, &impact_errs);
    eprintln!("pendulum θ(5) fitted order {order:.3}, last impact time order {impact_order:.3}");
    assert!(order >= 0.9, "order {order}");
    assert!(impact_order >= 0.9, "impact-time order {impact_order}");
}

/// Forward through impacts, then backward with the (−) stepper from the
/// final state, returns to the start.
fn round_trip<Mo: Model<N, 0>, const N: usize>(
    model: &Mo,
    h: f64,
    t_end: f64,
) -> (f64, usize, usize) {
    use diracvi_discrete_dirac::{LagrangeDirac, RunOptions, integrate, state_from_velocity};
    use diracvi_impact::ImpactIntegrator;
    let setup = model.run_defaults();
    let steps = (t_end / h).round() as usize;
    let s0 = state_from_velocity(model, 0.0, &setup.q0, &setup.v0).unwrap();
    let mut fwd = ImpactIntegrator::new(LagrangeDirac::new(
        model.clone(),
        setup.discretization,
        setup.constraint,
        Direction::Forward,
    ));
    let f = integrate(
        &mut fwd,
        s0,
        h,
        RunOptions::new(steps).every(0),
        |_| {},
        |_| {},
    )
    .unwrap();
    let mut bwd = ImpactIntegrator::new(LagrangeDirac::new(
        model.clone(),
        setup.discretization,
        setup.constraint,
        Direction::Backward,
    ));
    let b = integrate(
        &mut bwd,
        f.summary.final_state,
        h,
        RunOptions::new(steps).every(0),
        |_| {},
        |_| {},
    )
    .unwrap();
    let end = b.summary.final_state;
    let err = (end.q - s0.q).amax().max((end.p - s0.p).amax());
    (err, f.events.len(), b.events.len())
}

#[test]
fn particle_forward_then_backward_returns_to_start() {
    let (err, nf, nb) = round_trip(
        &diracvi_models::Particle::new(Default::default()).unwrap(),
        1e-2,
        3.0,
    );
    eprintln!("particle round trip error {err:e}, impacts {nf} forward, {nb} backward");
    assert_eq!(nf, nb);
    assert!(nf >= 2);
    assert!(err <= 1e-11, "round trip error {err:e}");
}

#[test]
fn ellipse_forward_then_backward_returns_to_start() {
    let (err, nf, nb) = round_trip(&Ellipse::new(Default::default()).unwrap(), 1e-2, 3.0);
    eprintln!("ellipse round trip error {err:e}, impacts {nf} forward, {nb} backward");
    assert_eq!(nf, nb);
    assert!(nf >= 2);
    assert!(err <= 1e-9, "round trip error {err:e}");
}
