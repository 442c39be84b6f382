//! Near-grazing contacts, two walls in one step, and chatter (docs/theory.md §4 step 6).

use diracvi_discrete_dirac::{Located, OneStep, RunOptions, State, integrate, state_from_velocity};
use diracvi_geometry::{
    AdScalar, ConstraintDiscretization, Discretization, SMatrix, SVector, System,
};
use diracvi_impact::{ImpactError, ImpactIntegrator, ImpactParams};

/// Unit-mass particle in the quadrant x ≥ 0, y ≥ 0 with constant force
/// `(0, −gy)` (gy < 0 pushes it away from the floor).
#[derive(Clone, Copy)]
struct Corner {
    gy: f64,
}

impl System<2, 0> for Corner {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        v.dot(v) * 0.5 - q[1] * self.gy
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
        SMatrix::zeros()
    }
    fn boundary_count(&self) -> usize {
        2
    }
    fn boundary<S: AdScalar>(&self, j: usize, q: &SVector<S, 2>) -> S {
        q[1 - j]
    }
}

fn run(
    sys: Corner,
    q0: [f64; 2],
    v0: [f64; 2],
    h: f64,
    steps: usize,
) -> Result<(Vec<State<2>>, usize), ImpactError> {
    let mut integ = ImpactIntegrator::forward(
        sys,
        Discretization::Midpoint,
        ConstraintDiscretization::Midpoint,
    );
    let s0 = state_from_velocity(&sys, 0.0, &SVector::from(q0), &SVector::from(v0)).unwrap();
    let t = integrate(&mut integ, s0, h, RunOptions::new(steps), |_| {}, |_| {})
        .map_err(|e| e.error)?;
    let states = t
        .records
        .iter()
        .map(|r| State {
            t: r.t,
            q: r.q,
            p: r.p,
        })
        .collect();
    Ok((states, t.events.len()))
}

#[test]
fn two_walls_in_one_step_reflect_exactly() {
    // No force: hits x = 0 at t = 0.004 and y = 0 at t = 0.006, both in step 0.
    let (states, impacts) = run(Corner { gy: 0.0 }, [0.004, 0.006], [-1.0, -1.0], 0.01, 3).unwrap();
    assert_eq!(impacts, 2);
    let s1 = states[1];
    assert!(
        (s1.q[0] - 0.006).abs() <= 1e-12 && (s1.q[1] - 0.004).abs() <= 1e-12,
        "q1 = {:?}",
        s1.q
    );
    assert!(
        (s1.p[0] - 1.0).abs() <= 1e-12 && (s1.p[1] - 1.0).abs() <= 1e-12,
        "p1 = {:?}",
        s1.p
    );
}

#[test]
fn tangential_touch_and_shallow_dip_are_caught() {
    // Force pushing up (gy = −1): from y0 = 0.5 with v_y = −1 the apex of the
    // motion towards the floor is exactly y = 0 at t = 1 (tangential touch);
    // with v_y slightly larger it dips 1e-7 below the floor for ~1e-3 s,
    // inside one step of 1e-2, while both step ends stay above it.
    for (vy, must_hit) in [(-1.0, false), (-(1.0f64 + 2e-7).sqrt(), true)] {
        let (states, impacts) = run(Corner { gy: -1.0 }, [1.0, 0.5], [0.3, vy], 1e-2, 200).unwrap();
        let min_y = states.iter().map(|s| s.q[1]).fold(f64::INFINITY, f64::min);
        eprintln!("v_y = {vy}: {impacts} impacts, min y {min_y:e}");
        assert!(min_y >= -1e-12, "tunnelled: y = {min_y:e}");
        if must_hit {
            assert_eq!(impacts, 1, "the shallow dip must register one impact");
        }
        assert!(impacts <= 1);
    }
}

#[test]
fn too_many_impacts_in_one_step_is_a_typed_error() {
    let sys = Corner { gy: 0.0 };
    let params = ImpactParams::default().with_max_impacts_per_step(1);
    let mut integ = ImpactIntegrator::forward(
        sys,
        Discretization::Midpoint,
        ConstraintDiscretization::Midpoint,
    )
    .with_params(params);
    let s0 = state_from_velocity(
        &sys,
        0.0,
        &SVector::from([0.004, 0.006]),
        &SVector::from([-1.0, -1.0]),
    )
    .unwrap();
    let err = integrate(&mut integ, s0, 0.01, RunOptions::new(2), |_| {}, |_| {}).unwrap_err();
    assert!(
        matches!(
            err,
            Located {
                step: 0,
                error: ImpactError::TooManyImpacts { max: 1, .. }
            }
        ),
        "{err:?}"
    );
}

/// Resting on the floor, the midpoint scheme's discrete energy keeps a
/// kinetic part (g h/2)²/2, so the particle hops with height O(g h²), never
/// sinks below the floor and never errors.
#[test]
fn particle_released_on_the_floor_hops_at_order_h_squared() {
    let h = 1e-2;
    let (states, impacts) = run(Corner { gy: 9.8 }, [1.0, 1e-9], [0.0, 0.0], h, 100).unwrap();
    let max_y = states.iter().map(|s| s.q[1]).fold(0.0, f64::max);
    let min_y = states.iter().map(|s| s.q[1]).fold(f64::INFINITY, f64::min);
    eprintln!(
        "{impacts} impacts, max y {max_y:e}, g h²/8 = {:e}",
        9.8 * h * h / 8.0
    );
    assert!(impacts >= 1);
    assert!(min_y >= -1e-12);
    assert!(max_y <= 9.8 * h * h, "hop height {max_y:e}");
}

/// A start outside the admissible set is refused wherever it comes from:
/// at the first step of a run (located at step 0 by the driver), and when
/// a caller hands the one-step map a state that is not where its last step
/// ended (the map knows no step index; it checks every start it did not
/// reach itself).
#[test]
fn an_inadmissible_start_is_refused_at_any_step() {
    let sys = Corner { gy: 9.8 };
    let mut integ = ImpactIntegrator::forward(
        sys,
        Discretization::Midpoint,
        ConstraintDiscretization::Midpoint,
    );
    let inside = State {
        t: 0.0,
        q: SVector::from([1.0, -0.25]),
        p: SVector::zeros(),
    };
    let err = integrate(&mut integ, inside, 0.01, RunOptions::new(3), |_| {}, |_| {}).unwrap_err();
    match &err.error {
        ImpactError::Inadmissible { t, piece, g } => {
            assert_eq!((err.step, *piece), (0, 0), "{err}");
            assert_eq!((*t, *g), (0.0, -0.25), "{err}");
        }
        other => panic!("expected Inadmissible, got {other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("step 0 at t = 0: state outside"),
        "{err}"
    );

    // Five good steps, then a state the integrator did not reach.
    let good =
        state_from_velocity(&sys, 0.0, &SVector::from([1.0, 1.0]), &SVector::zeros()).unwrap();
    let t = integrate(&mut integ, good, 0.01, RunOptions::new(5), |_| {}, |_| {}).unwrap();
    let mut last = t.summary.final_state;
    let out = integ.advance(&last, 0.01, &mut Vec::new()).unwrap();
    last = out.to;
    let mut moved = last;
    moved.q[0] = -1e-3;
    match integ.advance(&moved, 0.01, &mut Vec::new()) {
        Err(ImpactError::Inadmissible { piece: 1, g, .. }) => {
            assert!((g + 1e-3).abs() < 1e-18, "{g}")
        }
        other => panic!("expected Inadmissible on piece 1, got {other:?}"),
    }
}
