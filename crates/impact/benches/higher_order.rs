//! The higher-order target of docs/theory.md §9: the nonholonomic pendulum in
//! the cylinder over `[0, 5]` (3 impacts) to an error ≤ 1e-9 — the worst of
//! the first three impact times and `θ(5)`, against the independent Taylor
//! reference — in at most 5 ms of integration time. Kahan–Li (order 6) at
//! `h = 5/500 = 1e-2`; the composed triple jump at the same `h` for
//! comparison. The error and the best wall time of a few plain runs are
//! printed next to criterion's estimate.
//!
//! `cargo bench -p diracvi-impact --bench higher_order -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, criterion_group, criterion_main};
use diracvi_discrete_dirac::{
    Composition, Direction, RunOptions, State, Trajectory, integrate, state_from_velocity,
};
use diracvi_geometry::{ConstraintDiscretization, Discretization};
use diracvi_impact::{ComposedImpacts, ImpactEvent};
use diracvi_models::reference::{
    NonholonomicPendulumReference, PendulumReferenceParams, PendulumSolution,
};
use diracvi_models::{Model, Pendulum};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Horizon (s).
const T: f64 = 5.0;
/// Steps over `[0, T]` (h = 5/550 ≈ 9.1e-3).
const STEPS: usize = 550;
/// Error target.
const TARGET_ERROR: f64 = 1e-9;

/// The pendulum over `[0, T]` in `STEPS` steps with `scheme`.
fn run(model: &Pendulum, s0: State<2>, scheme: Composition) -> Trajectory<2, ImpactEvent<2>> {
    let mut integ = ComposedImpacts::composed(
        model.clone(),
        Discretization::Midpoint,
        ConstraintDiscretization::Midpoint,
        Direction::Forward,
        scheme,
    );
    integrate(
        &mut integ,
        s0,
        T / STEPS as f64,
        RunOptions::new(STEPS).every(0),
        |_| {},
        |_| {},
    )
    .unwrap_or_else(|e| panic!("{scheme}: {e}"))
}

/// Worst of the first three impact-time errors and the `θ(T)` error.
fn error(end: &State<2>, events: &[ImpactEvent<2>], reference: &PendulumSolution) -> f64 {
    assert_eq!(events.len(), reference.impact_times().len());
    events
        .iter()
        .zip(reference.impact_times())
        .take(3)
        .map(|(e, t)| (e.t - t).abs())
        .fold((end.q[0] - reference.theta_at(end.t)).abs(), f64::max)
}

fn bench(c: &mut Criterion) {
    let model = Pendulum::new(Default::default()).unwrap();
    let setup = model.run_defaults();
    let s0 = state_from_velocity(&model, 0.0, &setup.q0, &setup.v0).unwrap();
    let reference = NonholonomicPendulumReference::new(PendulumReferenceParams::default()).solve(T);
    let mut g = c.benchmark_group("pendulum_5s");
    g.sample_size(20);
    for scheme in [Composition::KahanLi6, Composition::TripleJump] {
        let traj = run(&model, s0, scheme);
        let err = error(&traj.summary.final_state, &traj.events, &reference);
        let sum = &traj.summary;
        let stages = (STEPS * scheme.coefficients().len()) as f64;
        let mut best = Duration::MAX;
        for _ in 0..20 {
            let t0 = Instant::now();
            black_box(run(&model, black_box(s0), scheme));
            best = best.min(t0.elapsed());
        }
        eprintln!(
            "pendulum [0, 5], {scheme}, h = {:.2e}: error {err:.2e}, best of 20 runs {:.3} ms; \
             per stage {:.2} Newton iterations, {:.2} Jacobians; {} root iterations",
            T / STEPS as f64,
            best.as_secs_f64() * 1e3,
            sum.newton_iterations as f64 / stages,
            sum.jacobian_evaluations as f64 / stages,
            sum.root_iterations,
        );
        if scheme == Composition::KahanLi6 {
            assert!(err <= TARGET_ERROR, "error {err:e} above {TARGET_ERROR:e}");
            eprintln!("target: error ≤ 1e-9 in ≤ 5 ms of integration time");
        }
        g.bench_function(format!("{scheme}_h1e-2"), |b| {
            b.iter(|| run(&model, black_box(s0), scheme))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
