//! Failing steps return the typed [`StepError`] (never a panic, never NaN):
//! bad step sizes, non-finite states, Newton failures, and a failure in the
//! middle of a run, which names its step and time.

use crate::common;
use common::{Kepler, Pendulum, f_pend};
use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, NonholonomicHamiltonian, RunOptions, State, StepError,
    SymplecticEuler, integrate, state_from_velocity,
};
use diracvi_geometry::{
    AdScalar, ConstraintDiscretization, Discretization, SMatrix, SVector, System,
};
use std::f64::consts::PI;

fn kepler_near_origin() -> State<2> {
    State {
        t: 0.0,
        q: SVector::from([1e-3, 0.0]),
        p: SVector::from([0.0, 1.0]),
    }
}

fn is_newton_failure(e: &StepError) -> bool {
    matches!(
        e,
        StepError::NoConvergence { .. } | StepError::NonFinite { .. }
    )
}

#[test]
fn bad_step_sizes_are_rejected() {
    let s = kepler_near_origin();
    let cd = ConstraintDiscretization::Retraction;
    for h in [0.0, -1e-3, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for direction in [Direction::Forward, Direction::Backward] {
            for disc in Discretization::ALL {
                let mut ld = LagrangeDirac::new(Kepler, disc, cd, direction);
                let err = ld.step(&s, h).unwrap_err();
                assert!(
                    matches!(err, StepError::BadStep { .. }),
                    "LD {direction:?} {disc} h = {h}: {err:?}"
                );
            }
            let mut ham = NonholonomicHamiltonian::new(
                Kepler,
                Discretization::Forward,
                cd,
                SymplecticEuler,
                direction,
            );
            let err = ham.step(&s, h).unwrap_err();
            assert!(
                matches!(err, StepError::BadStep { .. }),
                "Hamiltonian {direction:?} h = {h}: {err:?}"
            );
            // The driver locates it at its step.
            let mut ld = LagrangeDirac::new(Kepler, Discretization::Midpoint, cd, direction);
            let err = integrate(&mut ld, s, h, RunOptions::new(3), |_| {}, |_| {}).unwrap_err();
            assert_eq!(err.step, 0, "{err}");
            assert!(matches!(err.error, StepError::BadStep { .. }), "{err}");
            assert!(err.to_string().starts_with("step 0 at t = 0: "), "{err}");
        }
    }
}

#[test]
fn non_finite_states_are_rejected() {
    let pend = Pendulum::default();
    let cd = ConstraintDiscretization::Retraction;
    let good = state_from_velocity(
        &pend,
        0.0,
        &SVector::from([0.75 * PI, 0.0]),
        &SVector::from([0.25 * PI, f_pend(0.75 * PI) * 0.25 * PI]),
    )
    .unwrap();
    let mut bad = vec![];
    for i in 0..2 {
        for v in [f64::NAN, f64::INFINITY] {
            let mut s = good;
            s.q[i] = v;
            bad.push(s);
            let mut s = good;
            s.p[i] = v;
            bad.push(s);
        }
    }
    for s in &bad {
        for direction in [Direction::Forward, Direction::Backward] {
            let mut ld = LagrangeDirac::new(pend, Discretization::Forward, cd, direction);
            let err = ld.step(s, 1e-3).unwrap_err();
            assert!(
                matches!(err, StepError::NonFinite { .. }),
                "LD {direction:?} {s:?}: {err:?}"
            );
            let mut ham = NonholonomicHamiltonian::new(
                pend,
                Discretization::Forward,
                cd,
                SymplecticEuler,
                direction,
            );
            let err = ham.step(s, 1e-3).unwrap_err();
            assert!(
                matches!(err, StepError::NonFinite { .. }),
                "Hamiltonian {direction:?} {s:?}: {err:?}"
            );
        }
    }
    // Continuous initial data are checked too.
    let err = state_from_velocity(&pend, 0.0, &SVector::from([f64::NAN, 0.0]), &good.p);
    assert!(err.is_err());
}

#[test]
fn absurd_steps_fail_with_a_typed_error() {
    // Kepler 1e-3 from the singularity at the origin, midpoint discretization,
    // h from 0.3 to 10 (orbital period there ≈ 2e-4): the step equations have
    // no root Newton can reach; measured NoConvergence after 40 iterations.
    let s = kepler_near_origin();
    let cd = ConstraintDiscretization::Retraction;
    for h in [0.3, 1.0, 3.0, 10.0] {
        for direction in [Direction::Forward, Direction::Backward] {
            let mut ld = LagrangeDirac::new(Kepler, Discretization::Midpoint, cd, direction);
            let e = ld.step(&s, h).unwrap_err();
            eprintln!("LD {direction:?} midpoint h = {h}: {e}");
            assert!(is_newton_failure(&e), "{e:?}");
            assert_eq!(e.time(), Some(0.0));
            if let StepError::NoConvergence { residual, t, .. } = e {
                assert!(residual.is_finite() && residual > 1e-12);
                assert!(t.abs() <= 0.0);
            }
            // The stepper is still usable afterwards.
            let (q0, v0) = common::kepler_pericenter(1.0, 0.5);
            let good = state_from_velocity(&Kepler, 0.0, &q0, &v0).unwrap();
            ld.reset_warm_start();
            assert!(ld.step(&good, 0.01).is_ok());
        }
    }
    // Huge steps: whatever Newton does (it may find a far-away root), the
    // outcome is a typed error or a finite, converged state.
    for h in [1e3, 1e6] {
        for direction in [Direction::Forward, Direction::Backward] {
            for disc in Discretization::ALL {
                let mut ld = LagrangeDirac::new(Kepler, disc, cd, direction);
                match ld.step(&s, h) {
                    Err(e) => {
                        eprintln!("LD {direction:?} {disc} h = {h:e}: {e}");
                        assert!(is_newton_failure(&e), "{e:?}");
                        assert_eq!(e.time(), Some(0.0));
                    }
                    Ok((s1, stats)) => {
                        assert!(s1.q.iter().chain(s1.p.iter()).all(|v| v.is_finite()));
                        assert!(stats.residual <= 1e-12);
                    }
                }
            }
            let pend = Pendulum::default();
            let sp = state_from_velocity(
                &pend,
                0.0,
                &SVector::from([0.75 * PI, 0.0]),
                &SVector::from([0.25 * PI, f_pend(0.75 * PI) * 0.25 * PI]),
            )
            .unwrap();
            let mut ham = NonholonomicHamiltonian::new(
                pend,
                Discretization::Forward,
                cd,
                SymplecticEuler,
                direction,
            );
            match ham.step(&sp, h) {
                Err(e) => {
                    eprintln!("Hamiltonian {direction:?} h = {h:e}: {e}");
                    assert!(is_newton_failure(&e), "{e:?}");
                }
                Ok((s1, stats)) => {
                    assert!(s1.q.iter().chain(s1.p.iter()).all(|v| v.is_finite()));
                    assert!(stats.residual <= 1e-12);
                }
            }
        }
    }
}

#[test]
fn newton_iteration_bound_gives_no_convergence() {
    // One iteration cannot solve a nonlinear step from a cold start.
    let (q0, v0) = common::kepler_pericenter(1.0, 0.5);
    let s = state_from_velocity(&Kepler, 0.0, &q0, &v0).unwrap();
    let params = diracvi_discrete_dirac::NewtonParams::default().with_max_iterations(1);
    let mut ld = LagrangeDirac::plus(
        Kepler,
        Discretization::Midpoint,
        ConstraintDiscretization::Retraction,
    )
    .with_params(params);
    let err = ld.step(&s, 0.1).unwrap_err();
    match err {
        StepError::NoConvergence {
            t,
            iterations,
            residual,
            tolerance,
        } => {
            assert_eq!((t, iterations), (0.0, 1));
            assert!(residual.is_finite() && residual > tolerance);
        }
        other => panic!("expected NoConvergence, got {other:?}"),
    }
}

/// A particle falling onto a region where its Lagrangian is undefined
/// (`√(1 − q)` for `q > 1`): the run stops at the step that enters it, with
/// a typed error naming that step and its time.
#[derive(Clone, Copy)]
struct Cliff;

impl System<1, 0> for Cliff {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 1>, v: &SVector<S, 1>) -> S {
        // Gravity 10 towards +q; the last term is 0 where it is defined.
        v[0] * v[0] * 0.5 + q[0] * 10.0 + (S::from(1.0) - q[0]).sqrt() * 0.0
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 1>) -> SMatrix<S, 0, 1> {
        SMatrix::zeros()
    }
}

#[test]
fn a_failure_mid_run_names_its_step() {
    let s0 = State {
        t: 0.0,
        q: SVector::from([0.0]),
        p: SVector::from([0.0]),
    };
    let h = 0.01;
    for disc in Discretization::ALL {
        let mut ld = LagrangeDirac::plus(Cliff, disc, ConstraintDiscretization::Retraction);
        let mut last = 0;
        let err =
            integrate(&mut ld, s0, h, RunOptions::new(1000), |_| {}, |k| last = k).unwrap_err();
        eprintln!("{disc}: {err}");
        // q = 5 t² reaches 1 at t ≈ 0.447.
        let k = err.step;
        assert!((40..=50).contains(&k), "failed at step {k}");
        assert_eq!(k, last, "the error names the step after the last good one");
        assert!(
            err.to_string().starts_with(&format!("step {k} at t = ")),
            "{err}"
        );
        match err.error {
            StepError::NonFinite { t, .. } | StepError::NoConvergence { t, .. } => {
                assert!((t - k as f64 * h).abs() <= 1e-12, "t = {t}");
            }
            other => panic!("{other:?}"),
        }
    }
}
