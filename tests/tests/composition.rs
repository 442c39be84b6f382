//! Symmetric composition through impacts (docs/theory.md §9): fitted orders 4
//! and 6 of impact times and final states against the independent
//! references, forward and backward in time, and several impacts per step.

use diracvi_discrete_dirac::{
    Composition, Direction, RunOptions, State, integrate, state_from_velocity,
};
use diracvi_geometry::{ConstraintDiscretization, Discretization, System};
use diracvi_impact::{ComposedImpacts, ImpactEvent};
use diracvi_models::reference::{
    BouncingParticle, NonholonomicPendulumReference, PendulumReferenceParams, PendulumSolution,
};
use diracvi_models::{Model, Particle, Pendulum};
use diracvi_tests::fitted_order;
use nalgebra::SVector;

/// The composed integrator over `steps` steps of `h` from `start`.
fn run<Sy: System<N, M> + Clone, const N: usize, const M: usize>(
    system: &Sy,
    scheme: Composition,
    direction: Direction,
    start: State<N>,
    h: f64,
    steps: usize,
) -> (State<N>, Vec<ImpactEvent<N>>) {
    let mut integ = ComposedImpacts::composed(
        system.clone(),
        Discretization::Midpoint,
        ConstraintDiscretization::Midpoint,
        direction,
        scheme,
    );
    let traj = integrate(
        &mut integ,
        start,
        h,
        RunOptions::new(steps).every(0),
        |_| {},
        |_| {},
    )
    .unwrap_or_else(|e| panic!("{scheme} h = {h}: {e}"));
    for e in &traj.events {
        let rel = (e.energy_after - e.energy_before).abs() / e.energy_before.abs();
        assert!(
            rel <= 1e-12,
            "energy jump {rel:e} at the impact t = {}",
            e.t
        );
        assert!(!e.grazing, "grazing impact at t = {}", e.t);
    }
    (traj.summary.final_state, traj.events)
}

/// Forward over [0, 5]: worst error of the first three impact times, and
/// the error of θ(5).
fn pendulum_forward(scheme: Composition, h: f64, reference: &PendulumSolution) -> (f64, f64) {
    let model = Pendulum::new(Default::default()).unwrap();
    let setup = model.run_defaults();
    let s0 = state_from_velocity(&model, 0.0, &setup.q0, &setup.v0).unwrap();
    let steps = (5.0 / h).round() as usize;
    let (end, events) = run(&model, scheme, Direction::Forward, s0, h, steps);
    assert_eq!(events.len(), reference.impact_times().len(), "h = {h}");
    let t_err = events
        .iter()
        .zip(reference.impact_times())
        .take(3)
        .map(|(e, t)| (e.t - t).abs())
        .fold(0.0, f64::max);
    (t_err, (end.q[0] - reference.theta_at(end.t)).abs())
}

/// Backward from the reference state at t = 5 to t = 0: worst error of the
/// impact times met, and the error of θ(0).
fn pendulum_backward(scheme: Composition, h: f64, reference: &PendulumSolution) -> (f64, f64) {
    let model = Pendulum::new(Default::default()).unwrap();
    let (q, v) = reference.configuration_velocity_at(5.0);
    let s5 = state_from_velocity(&model, 5.0, &SVector::from(q), &SVector::from(v)).unwrap();
    let steps = (5.0 / h).round() as usize;
    let (end, events) = run(&model, scheme, Direction::Backward, s5, h, steps);
    assert_eq!(events.len(), reference.impact_times().len(), "h = {h}");
    let t_err = events
        .iter()
        .zip(reference.impact_times().iter().rev())
        .map(|(e, t)| (e.t - t).abs())
        .fold(0.0, f64::max);
    assert!(end.t.abs() < 1e-12);
    (t_err, (end.q[0] - 0.75 * std::f64::consts::PI).abs())
}

fn check_order(what: &str, hs: &[f64], f: impl Fn(f64) -> (f64, f64), order: f64, tolerance: f64) {
    let (mut te, mut qe) = (vec![], vec![]);
    for &h in hs {
        let (t, q) = f(h);
        eprintln!("{what} h = {h:.4e}: impact-time error {t:.3e}, θ error {q:.3e}");
        te.push(t);
        qe.push(q);
    }
    let (ot, oq) = (fitted_order(hs, &te), fitted_order(hs, &qe));
    eprintln!("{what}: fitted orders {ot:.3} (impact times), {oq:.3} (θ)");
    assert!(
        (ot - order).abs() <= tolerance,
        "{what}: impact-time order {ot}"
    );
    assert!((oq - order).abs() <= tolerance, "{what}: θ order {oq}");
}

const LADDER_4: [f64; 3] = [1e-2, 5e-3, 2.5e-3];
const LADDER_6: [f64; 6] = [2e-2, 1.8e-2, 1e-2, 9e-3, 5e-3, 4.5e-3];

#[test]
fn pendulum_triple_jump_is_fourth_order_through_impacts() {
    let reference =
        NonholonomicPendulumReference::new(PendulumReferenceParams::default()).solve(5.0);
    let s = Composition::TripleJump;
    check_order(
        "pendulum triple jump forward",
        &LADDER_4,
        |h| pendulum_forward(s, h, &reference),
        4.0,
        0.2,
    );
    check_order(
        "pendulum triple jump backward",
        &LADDER_4,
        |h| pendulum_backward(s, h, &reference),
        4.0,
        0.2,
    );
}

#[test]
fn pendulum_kahan_li_is_sixth_order_through_impacts() {
    let reference =
        NonholonomicPendulumReference::new(PendulumReferenceParams::default()).solve(5.0);
    let s = Composition::KahanLi6;
    check_order(
        "pendulum Kahan–Li forward",
        &LADDER_6,
        |h| pendulum_forward(s, h, &reference),
        6.0,
        0.3,
    );
}

/// The midpoint step is exact on the particle's parabolas, and so is every
/// composition of it and the continuous law: no order to fit, the errors are
/// round-off — with two or three impacts inside every (large) step, forward
/// and then backward to the start.
#[test]
fn particle_composed_is_exact_with_several_impacts_per_step() {
    let exact = BouncingParticle {
        g: 9.8,
        q0: [0.0, 0.05],
        v0: [1.0, 0.0],
    };
    let model = Particle::new(Default::default()).unwrap();
    let (h, t_end) = (0.5f64, 3.0);
    let steps = (t_end / h).round() as usize;
    let s0 = state_from_velocity(
        &model,
        0.0,
        &SVector::from(exact.q0),
        &SVector::from(exact.v0),
    )
    .unwrap();
    let times = exact.impact_times(t_end);
    for scheme in [Composition::TripleJump, Composition::KahanLi6] {
        let (end, events) = run(&model, scheme, Direction::Forward, s0, h, steps);
        assert_eq!(events.len(), times.len(), "{scheme}");
        let per_step = events.iter().filter(|e| e.step == 1).count();
        assert!(per_step >= 2, "{scheme}: {per_step} impacts in step 1");
        let t_err = events
            .iter()
            .zip(&times)
            .map(|(e, t)| (e.t - t).abs())
            .fold(0.0, f64::max);
        let (q, v) = exact.state_at(t_end);
        let q_err = (end.q - SVector::from(q)).amax();
        let p_err = (end.p - SVector::from(v)).amax();
        eprintln!(
            "particle {scheme}: {} impacts, impact-time error {t_err:.2e}, q error {q_err:.2e}, p error {p_err:.2e}",
            events.len()
        );
        assert!(t_err <= 1e-12 && q_err <= 1e-12 && p_err <= 1e-11);
        let (back, back_events) = run(&model, scheme, Direction::Backward, end, h, steps);
        assert_eq!(back_events.len(), times.len());
        let err = (back.q - s0.q).amax().max((back.p - s0.p).amax());
        eprintln!("particle {scheme}: back to the start within {err:.2e}");
        assert!(err <= 1e-11);
    }
}
