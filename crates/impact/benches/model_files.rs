//! A model read from a file against the same model compiled from Rust: the
//! pendulum's and the ellipse's default runs through the impact integrator,
//! each both ways, and the ratio of their wall times (issue bar: ≤ 3×).
//!
//! `cargo bench -p diracvi-impact --bench model_files`

use criterion::{Criterion, criterion_group, criterion_main};
use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, RunOptions, integrate, state_from_velocity,
};
use diracvi_impact::ImpactIntegrator;
use diracvi_models::{ModelVisitor, NamedSystem, RunSetup, Scenario};
use std::time::Instant;

/// Run the scenario's default setup to `t_end`; returns the impact count.
fn full_run<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
    model: &Mo,
    setup: &RunSetup<N>,
    t_end: f64,
) -> usize {
    let mut integ = ImpactIntegrator::new(LagrangeDirac::new(
        model.clone(),
        setup.discretization,
        setup.constraint,
        Direction::Forward,
    ));
    let s0 = state_from_velocity(model, 0.0, &setup.q0, &setup.v0).unwrap();
    let steps = (t_end / setup.h).round() as usize;
    integrate(
        &mut integ,
        s0,
        setup.h,
        RunOptions::new(steps).every(0),
        |_| {},
        |_| {},
    )
    .unwrap()
    .events
    .len()
}

/// Benchmark one scenario; returns the best of five timed runs (s).
struct Bench<'a> {
    c: &'a mut Criterion,
    label: String,
    t_end: f64,
}

impl ModelVisitor for Bench<'_> {
    type Output = f64;
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> f64 {
        let mut g = self.c.benchmark_group("model_files");
        g.sample_size(10);
        g.bench_function(&self.label, |b| {
            b.iter(|| full_run(model, setup, self.t_end))
        });
        g.finish();
        (0..5)
            .map(|_| {
                let t0 = Instant::now();
                full_run(model, setup, self.t_end);
                t0.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    }
}

fn bench(c: &mut Criterion) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models");
    for (name, t_end) in [("pendulum", 5.0), ("ellipse", 25.0)] {
        let compiled = Scenario::defaults(name).unwrap();
        let file = Scenario::from_model_file(format!("{dir}/{name}.toml")).unwrap();
        let steps = (t_end / compiled.h).round();
        let mut time = |sc: &Scenario, how: &str| {
            sc.visit(Bench {
                c: &mut *c,
                label: format!("{name}_{how}"),
                t_end,
            })
            .unwrap()
        };
        let a = time(&compiled, "compiled");
        let b = time(&file, "file");
        eprintln!(
            "{name} {t_end} s ({steps} steps): compiled {:.3} µs/step, file {:.3} µs/step, ratio {:.2} (target ≤ 3)",
            a / steps * 1e6,
            b / steps * 1e6,
            b / a
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
