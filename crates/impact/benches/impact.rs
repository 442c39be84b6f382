//! Benchmarks of the impact integrator: one impact step (detection, α by
//! BrentRoot, post-impact solve), the ellipse's 25 s run and the pendulum's
//! 100 s run at h = 1e-4 (docs/theory.md §5 long run).
//!
//! `cargo bench -p diracvi-impact --bench impact`

use criterion::{Criterion, criterion_group, criterion_main};
use diracvi_discrete_dirac::trajectory::OneStep;
use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, RunOptions, State, integrate, state_from_velocity,
};
use diracvi_impact::{ImpactIntegrator, LagrangeDiracImpacts};
use diracvi_models::{Ellipse, Model, Particle, Pendulum, RunSetup};
use nalgebra::SVector;
use std::hint::black_box;
use std::time::Instant;

fn integrator<const N: usize, const M: usize, Mo: Model<N, M>>(
    model: &Mo,
    setup: &RunSetup<N>,
) -> LagrangeDiracImpacts<Mo, diracvi_geometry::Discretization, N, M> {
    ImpactIntegrator::new(LagrangeDirac::new(
        model.clone(),
        setup.discretization,
        setup.constraint,
        Direction::Forward,
    ))
}

/// Run to `t_end` at step `h`; returns (impacts, max |ΔE|).
fn full_run<const N: usize, const M: usize, Mo: Model<N, M>>(
    model: &Mo,
    h: f64,
    t_end: f64,
) -> (usize, f64) {
    let setup = model.run_defaults();
    let mut integ = integrator(model, &setup);
    let s0 = state_from_velocity(model, 0.0, &setup.q0, &setup.v0).unwrap();
    let steps = (t_end / h).round() as usize;
    let t = integrate(
        &mut integ,
        s0,
        h,
        RunOptions::new(steps).every(0),
        |_| {},
        |_| {},
    )
    .unwrap();
    (t.events.len(), t.summary.max_abs_energy_deviation)
}

fn bench(c: &mut Criterion) {
    // One impact step: the particle 1 mm above the floor, falling at 2 m/s.
    let particle = Particle::new(Default::default()).unwrap();
    let setup = particle.run_defaults();
    let mut integ = integrator(&particle, &setup);
    let s = State {
        t: 0.0,
        q: SVector::from([0.0, 0.001]),
        p: SVector::from([1.0, -2.0]),
    };
    let mut events = Vec::new();
    c.bench_function("impact_step_particle", |b| {
        b.iter(|| {
            events.clear();
            let out = integ.advance(black_box(&s), 1e-2, &mut events).unwrap();
            assert_eq!(events.len(), 1);
            out
        })
    });
    eprintln!("target: one impact step ≤ 20 µs");

    let ellipse = Ellipse::new(Default::default()).unwrap();
    let mut g = c.benchmark_group("runs");
    g.sample_size(10);
    g.bench_function("ellipse_25s_h1e-2", |b| {
        b.iter(|| full_run(&ellipse, 1e-2, 25.0))
    });
    eprintln!("target: ellipse 25 s ≤ 10 ms");
    let pendulum = Pendulum::new(Default::default()).unwrap();
    g.bench_function("pendulum_100s_h1e-4", |b| {
        b.iter(|| full_run(&pendulum, 1e-4, 100.0))
    });
    g.finish();
    let t0 = Instant::now();
    let (impacts, de) = full_run(&pendulum, 1e-4, 100.0);
    eprintln!(
        "pendulum 100 s at h = 1e-4: wall time {:.3} s, {impacts} impacts, max |ΔE_d| = {de:.3e} (target ≤ 1.5 s)",
        t0.elapsed().as_secs_f64()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
