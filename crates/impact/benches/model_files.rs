//! A model read from a file against the same model compiled from Rust: the
//! pendulum's and the ellipse's default runs through the impact integrator,
//! four ways — compiled and from its file on the compile-time-sized core
//! (what the runner takes for these sizes), and both on the run-time-sized
//! core (docs/theory.md §11) — and the ratios of their wall times (issue #27
//! bar: file ≤ 1.3 × compiled).
//!
//! `cargo bench -p diracvi-impact --bench model_files`

use criterion::{Criterion, criterion_group, criterion_main};
use diracvi_discrete_dirac::dynamic::{DynLagrangeDirac, dyn_state_from_velocity, integrate_dyn};
use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, RunOptions, integrate, state_from_velocity,
};
use diracvi_impact::ImpactIntegrator;
use diracvi_impact::dynamic::DynImpactIntegrator;
use diracvi_models::{
    DynModelVisitor, DynRunSetup, ModelVisitor, NamedDynSystem, NamedSystem, RunSetup, Scenario,
};
use std::time::Instant;

/// Run the scenario's default setup to `t_end` on the compile-time-sized
/// core; returns the impact count.
fn static_run<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
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

/// The same on the run-time-sized core.
fn dyn_run<Mo: NamedDynSystem>(model: &Mo, setup: &DynRunSetup, t_end: f64) -> usize {
    let mut integ = DynImpactIntegrator::new(DynLagrangeDirac::new(
        model.clone(),
        setup.discretization,
        setup.constraint,
        Direction::Forward,
    ));
    let s0 = dyn_state_from_velocity(model, 0.0, &setup.q0, &setup.v0).unwrap();
    let steps = (t_end / setup.h).round() as usize;
    integrate_dyn(
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

/// Criterion's figure plus the best of five timed runs (s).
fn time(c: &mut Criterion, label: &str, mut run: impl FnMut() -> usize) -> (f64, usize) {
    let mut g = c.benchmark_group("model_files");
    g.sample_size(10);
    g.bench_function(label, |b| b.iter(&mut run));
    g.finish();
    let impacts = run();
    let best = (0..5)
        .map(|_| {
            let t0 = Instant::now();
            run();
            t0.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    (best, impacts)
}

struct Static<'a> {
    c: &'a mut Criterion,
    label: String,
    t_end: f64,
}

impl ModelVisitor for Static<'_> {
    type Output = (f64, usize);
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> (f64, usize) {
        time(self.c, &self.label, || static_run(model, setup, self.t_end))
    }
}

struct Dynamic<'a> {
    c: &'a mut Criterion,
    label: String,
    t_end: f64,
}

impl DynModelVisitor for Dynamic<'_> {
    type Output = (f64, usize);
    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> (f64, usize) {
        time(self.c, &self.label, || dyn_run(model, setup, self.t_end))
    }
}

fn bench(c: &mut Criterion) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models");
    for (name, t_end) in [("pendulum", 5.0), ("ellipse", 25.0)] {
        let compiled = Scenario::defaults(name).unwrap();
        let file = Scenario::from_model_file(format!("{dir}/{name}.toml")).unwrap();
        let steps = (t_end / compiled.h).round();
        let label = |how: &str| format!("{name}_{how}");
        let (a, na) = compiled
            .visit_compiled(Static {
                c: &mut *c,
                label: label("compiled"),
                t_end,
            })
            .unwrap()
            .expect("the pendulum and the ellipse run on the compile-time core");
        let (b, nb) = compiled
            .visit_dyn(Dynamic {
                c: &mut *c,
                label: label("compiled_dyn"),
                t_end,
            })
            .unwrap();
        let ((s, ns), (f, nf)) = file_on_both_cores(c, name, &file, t_end)
            .expect("the pendulum and the ellipse files have a compile-time instantiation");
        assert_eq!(
            (na, na, na),
            (nb, ns, nf),
            "{name}: the four runs find the same impacts"
        );
        let us = |x: f64| x / steps * 1e6;
        eprintln!(
            "{name} {t_end} s ({steps} steps, {na} impacts): compiled {:.3} µs/step; \
             file on the compile-time core (what the runner takes) {:.3} µs/step ({:.2}×); \
             on the run-time core: compiled {:.3} µs/step ({:.2}×), file {:.3} µs/step \
             ({:.2}× compiled; issue #27 target ≤ 1.3)",
            us(a),
            us(s),
            s / a,
            us(b),
            b / a,
            us(f),
            f / a
        );
    }
}

/// Best wall time (s) and impact count of a timed run.
type Timed = (f64, usize);

/// A model file's run to `t_end` timed on the compile-time-sized core (`None`
/// when its size has no instantiation there) and on the run-time-sized core.
fn file_on_both_cores(
    c: &mut Criterion,
    name: &str,
    file: &Scenario,
    t_end: f64,
) -> Option<(Timed, Timed)> {
    let label = |how: &str| format!("{name}_{how}");
    let sized = file
        .visit_file(Static {
            c: &mut *c,
            label: label("file_sized"),
            t_end,
        })
        .unwrap()?;
    let dynamic = file
        .visit_dyn(Dynamic {
            c,
            label: label("file"),
            t_end,
        })
        .unwrap();
    Some((sized, dynamic))
}

/// The fast path by size: each model file shipped in `models/` whose size
/// `(n, m)` is in [`FAST_FILE_SIZES`](diracvi_models::FAST_FILE_SIZES), on
/// the compile-time-sized core (what the runner takes) and on the
/// run-time-sized core, over at most 20 000 steps of its default run: what
/// the compile-time instantiation of that size buys (docs/theory.md §11.5).
fn by_size(c: &mut Criterion) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models");
    for name in [
        "driven-pendulum",
        "double-pendulum",
        "sleigh",
        "heavy-top",
        "disk-wall",
        "chaplygin-sphere",
    ] {
        let file = Scenario::from_model_file(format!("{dir}/{name}.toml")).unwrap();
        let t_end = file.t_end.min(file.h * 20_000.0);
        let steps = (t_end / file.h).round();
        let size = describe_size(&file);
        let Some(((s, ns), (f, nf))) = file_on_both_cores(c, name, &file, t_end) else {
            eprintln!("{name} {size:?}: no compile-time instantiation");
            continue;
        };
        assert_eq!(ns, nf, "{name}: the two cores find the same impacts");
        let us = |x: f64| x / steps * 1e6;
        eprintln!(
            "{name} (n, m) = {size:?}, {steps} steps, {ns} impacts: compile-time core {:.3} µs/step, \
             run-time core {:.3} µs/step ({:.2}×)",
            us(s),
            us(f),
            f / s
        );
    }
}

/// `(n, m)` of a model file's scenario.
fn describe_size(file: &Scenario) -> (usize, usize) {
    struct Size;
    impl DynModelVisitor for Size {
        type Output = (usize, usize);
        fn visit<Mo: NamedDynSystem>(self, model: &Mo, _setup: &DynRunSetup) -> (usize, usize) {
            (model.coordinate_count(), model.constraint_count())
        }
    }
    file.visit_dyn(Size).unwrap()
}

criterion_group!(benches, bench, by_size);
criterion_main!(benches);
