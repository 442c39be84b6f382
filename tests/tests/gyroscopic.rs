//! Gyroscopic (workless) forces through the discrete Lagrange–d'Alembert
//! principle (docs/theory.md §2.7): a charged particle in a magnetic field,
//! against its exact discrete and continuous solutions, reversed in time,
//! composed to order 4, bouncing off a wall; and the refusals.

use approx::assert_abs_diff_eq;
use diracvi_discrete_dirac::{
    Composition, Direction, LagrangeDirac, NonholonomicHamiltonian, RunOptions, State, StepError,
    SymplecticEuler, simulate, state_from_velocity,
};
use diracvi_geometry::{
    AdScalar, ConstraintDiscretization, Discretization, GeometryError, SMatrix, SVector, System,
    check_initial,
};
use diracvi_impact::{ComposedImpacts, ImpactIntegrator};
use diracvi_tests::fitted_order;
use std::f64::consts::PI;

const MID: Discretization = Discretization::Midpoint;
const MIDC: ConstraintDiscretization = ConstraintDiscretization::Midpoint;

/// A unit charge of unit mass in the plane with the uniform magnetic field
/// `B`: `L = ½ |v|²`, Lorentz force `F = B (v_y, −v_x)`; above the floor
/// `y ≥ floor` if `floor` is finite. `H = ½ |p|²` is offered so that the
/// Hamiltonian stepper's refusal is the force's.
#[derive(Debug, Clone, Copy)]
struct Cyclotron {
    b: f64,
    floor: f64,
}

impl System<2, 0> for Cyclotron {
    fn lagrangian<S: AdScalar>(&self, _q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        v.dot(v) * 0.5
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
        SMatrix::zeros()
    }
    fn boundary_count(&self) -> usize {
        usize::from(self.floor.is_finite())
    }
    fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 2>) -> S {
        q[1] - self.floor
    }
    fn hamiltonian<S: AdScalar>(&self, _q: &SVector<S, 2>, p: &SVector<S, 2>) -> Option<S> {
        Some(p.dot(p) * 0.5)
    }
    fn gyroscopic_force<S: AdScalar>(
        &self,
        _q: &SVector<S, 2>,
        v: &SVector<S, 2>,
    ) -> Option<SVector<S, 2>> {
        Some(SVector::from([v[1] * self.b, -v[0] * self.b]))
    }
}

/// From the origin with velocity `(1, 0)`: the exact motion is the circle
/// `q(t) = (sin Bt, cos Bt − 1)/B`, `v(t) = (cos Bt, −sin Bt)`.
fn exact(b: f64, t: f64) -> SVector<f64, 2> {
    SVector::from([(b * t).sin() / b, ((b * t).cos() - 1.0) / b])
}

fn start(system: &Cyclotron) -> State<2> {
    state_from_velocity(system, 0.0, &SVector::zeros(), &SVector::from([1.0, 0.0])).unwrap()
}

/// The midpoint step with the discrete forces `(h/2) F` on a quadratic `L`
/// is the Cayley transform of the rotation generator: each increment
/// `d_k = q_{k+1} − q_k` is the previous one turned by exactly
/// `θ_d = 2 atan(hB/2)` (clockwise), with its length kept. Checked step by
/// step to round-off; the energy is exact.
#[test]
fn midpoint_step_is_the_exact_discrete_rotation() {
    let system = Cyclotron {
        b: 1.3,
        floor: f64::INFINITY,
    };
    let h = 0.05;
    let mut stepper = LagrangeDirac::new(system, MID, MIDC, Direction::Forward);
    let run = simulate(&mut stepper, start(&system), h, RunOptions::new(400)).unwrap();
    let theta = 2.0 * (h * system.b / 2.0).atan();
    let (c, s) = (theta.cos(), theta.sin());
    let d: Vec<SVector<f64, 2>> = run.records.windows(2).map(|w| w[1].q - w[0].q).collect();
    let mut worst = 0.0f64;
    for w in d.windows(2) {
        // clockwise: (x, y) ↦ (c x + s y, −s x + c y)
        let turned = SVector::from([c * w[0][0] + s * w[0][1], -s * w[0][0] + c * w[0][1]]);
        worst = worst.max((w[1] - turned).amax() / w[0].amax());
    }
    eprintln!("cyclotron: discrete rotation exact to {worst:e}");
    assert!(worst < 1e-13, "{worst:e}");
    assert!(
        run.summary.max_abs_energy_deviation < 1e-14,
        "{:e}",
        run.summary.max_abs_energy_deviation
    );
}

/// Against the continuous circle over one turn: second order with the
/// midpoint step, fourth order with the triple jump of it and its adjoint
/// (which runs the force in reversed orientation).
#[test]
fn cyclotron_converges_at_orders_two_and_four() {
    let system = Cyclotron {
        b: 1.0,
        floor: f64::INFINITY,
    };
    let t_end = 2.0 * PI;
    for (scheme, expected) in [(Composition::Single, 2.0), (Composition::TripleJump, 4.0)] {
        let hs = [2.0 * PI / 100.0, 2.0 * PI / 200.0, 2.0 * PI / 400.0];
        let mut errors = vec![];
        for &h in &hs {
            let steps = (t_end / h).round() as usize;
            let mut integ =
                ComposedImpacts::composed(system, MID, MIDC, Direction::Forward, scheme);
            let run = simulate(
                &mut integ,
                start(&system),
                h,
                RunOptions::new(steps).every(0),
            )
            .unwrap();
            errors.push((run.summary.final_state.q - exact(system.b, t_end)).amax());
        }
        let order = fitted_order(&hs, &errors);
        eprintln!("cyclotron {scheme}: errors {errors:?}, order {order}");
        assert!((order - expected).abs() < 0.1, "{scheme}: order {order}");
    }
}

/// The (−) stepper runs the forces in reversed orientation: forward then
/// backward returns to the initial state, through impacts on the floor.
#[test]
fn forward_then_backward_returns_through_impacts() {
    let system = Cyclotron {
        b: 1.0,
        floor: -1.5,
    };
    let (h, steps) = (1e-2, 1000);
    let s0 = start(&system);
    let mut forward =
        ImpactIntegrator::new(LagrangeDirac::new(system, MID, MIDC, Direction::Forward));
    let run = simulate(&mut forward, s0, h, RunOptions::new(steps).every(0)).unwrap();
    assert!(run.events.len() >= 2, "{} impacts", run.events.len());
    let mut backward =
        ImpactIntegrator::new(LagrangeDirac::new(system, MID, MIDC, Direction::Backward));
    let back = simulate(
        &mut backward,
        run.summary.final_state,
        h,
        RunOptions::new(steps).every(0),
    )
    .unwrap();
    assert_eq!(back.events.len(), run.events.len());
    let end = back.summary.final_state;
    let err = (end.q - s0.q).amax().max((end.p - s0.p).amax());
    eprintln!(
        "cyclotron: {} impacts, back to the start within {err:e}",
        run.events.len()
    );
    assert!(err < 1e-10, "{err:e}");
}

/// Bouncing on the floor `y ≥ −1.5`: the first impact is at
/// `cos t = −1/2`, `t = 2π/3`, reached at second order; the discrete
/// impact law keeps the energy to round-off across every impact (the force
/// does no work, so its energy condition is unchanged), and the energy
/// error of the run is O(h²).
#[test]
fn impact_time_second_order_and_energy_through_impacts() {
    let system = Cyclotron {
        b: 1.0,
        floor: -1.5,
    };
    let hs = [4e-3, 2e-3, 1e-3];
    let mut errors = vec![];
    for &h in &hs {
        let steps = (10.0f64 / h).round() as usize;
        let mut integ =
            ImpactIntegrator::new(LagrangeDirac::new(system, MID, MIDC, Direction::Forward));
        let run = simulate(
            &mut integ,
            start(&system),
            h,
            RunOptions::new(steps).every(0),
        )
        .unwrap();
        assert!(run.events.len() >= 2);
        for e in &run.events {
            assert!(
                (e.energy_after - e.energy_before).abs() < 1e-13,
                "energy jump at t = {}",
                e.t
            );
        }
        eprintln!(
            "h = {h}: {} impacts, energy deviation {:e}, jumps {:?}",
            run.events.len(),
            run.summary.max_abs_energy_deviation,
            run.events
                .iter()
                .map(|e| e.energy_after - e.energy_before)
                .collect::<Vec<_>>()
        );
        // between impacts the energy is exact; the shorter sub-step into
        // an impact point changes it by O(h²) (a step-size change with a
        // velocity-dependent force), and it does not drift
        assert!(run.summary.max_abs_energy_deviation < 0.2 * h * h);
        errors.push((run.events[0].t - 2.0 * PI / 3.0).abs());
    }
    let order = fitted_order(&hs, &errors);
    eprintln!("cyclotron: first impact time errors {errors:?}, order {order}");
    assert!((order - 2.0).abs() < 0.1, "order {order}");
}

/// The Hamiltonian stepper refuses a system with a gyroscopic force, with
/// a typed error that says so.
#[test]
fn hamiltonian_stepper_refuses_a_gyroscopic_force() {
    let system = Cyclotron {
        b: 1.0,
        floor: f64::INFINITY,
    };
    let mut stepper = NonholonomicHamiltonian::new(
        system,
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
        SymplecticEuler,
        Direction::Forward,
    );
    match stepper.step(&start(&system), 1e-2).map(|(s, _)| s) {
        Err(StepError::Unsupported(reason)) => assert!(reason.contains("gyroscopic"), "{reason}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// A "gyroscopic" force that works (a damping) is rejected at the initial
/// data with the power it develops.
#[test]
fn a_force_that_works_is_rejected() {
    #[derive(Debug, Clone, Copy)]
    struct Damped;
    impl System<1, 0> for Damped {
        fn lagrangian<S: AdScalar>(&self, _q: &SVector<S, 1>, v: &SVector<S, 1>) -> S {
            v[0] * v[0] * 0.5
        }
        fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 1>) -> SMatrix<S, 0, 1> {
            SMatrix::zeros()
        }
        fn gyroscopic_force<S: AdScalar>(
            &self,
            _q: &SVector<S, 1>,
            v: &SVector<S, 1>,
        ) -> Option<SVector<S, 1>> {
            Some(SVector::from([v[0] * -0.5]))
        }
    }
    let err = check_initial(&Damped, &SVector::from([0.0]), &SVector::from([2.0])).unwrap_err();
    match err {
        GeometryError::ForceDoesWork { power, .. } => {
            assert_abs_diff_eq!(power, -2.0, epsilon = 1e-15)
        }
        other => panic!("unexpected {other}"),
    }
    assert!(
        state_from_velocity(&Damped, 0.0, &SVector::from([0.0]), &SVector::from([2.0])).is_err()
    );
}
