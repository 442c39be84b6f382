//! A model read from a file against the same model compiled from Rust: the
//! pendulum's and the ellipse's default runs through the impact integrator,
//! four ways — compiled and from its file on the compile-time-sized core
//! (what the runner takes for these sizes), and both on the run-time-sized
//! core (docs/theory.md §11) — and the ratios of their wall times (issue #27
//! bar: file ≤ 1.3 × compiled). After criterion's figures, the ways run in
//! interleaved rounds (order rotated each round), so that the machine's
//! drift falls on every way alike; the bench prints each way's median time
//! and the median and quartiles of the per-round ratios.
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

/// A run to `t_end` that returns its impact count.
type Run<'a> = &'a mut dyn FnMut() -> usize;

/// Interleaved rounds after criterion's runs: each round times every way
/// once, in an order rotated from round to round, so that the machine's
/// drift falls on all ways alike.
const ROUNDS: usize = 21;

/// Criterion's figure for each way, then [`ROUNDS`] interleaved timed
/// rounds; returns each way's wall times (s, one per round) and its impact
/// count.
fn interleaved(
    c: &mut Criterion,
    labels: &[String],
    runs: &mut [Run<'_>],
) -> Vec<(Vec<f64>, usize)> {
    let mut g = c.benchmark_group("model_files");
    g.sample_size(10);
    for (label, run) in labels.iter().zip(runs.iter_mut()) {
        g.bench_function(label, |b| b.iter(&mut **run));
    }
    g.finish();
    let mut out: Vec<(Vec<f64>, usize)> = runs.iter_mut().map(|r| (Vec::new(), r())).collect();
    for round in 0..ROUNDS {
        for i in 0..runs.len() {
            let w = (i + round) % runs.len();
            let t0 = Instant::now();
            runs[w]();
            out[w].0.push(t0.elapsed().as_secs_f64());
        }
    }
    out
}

/// The median of `x`.
fn median(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// `a ÷ b` round by round: the median of the per-round ratios and their
/// quartiles, `"1.23× [1.18–1.27]"`.
fn ratio(a: &[f64], b: &[f64]) -> String {
    let mut r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    r.sort_by(f64::total_cmp);
    let q = |f: f64| r[((r.len() - 1) as f64 * f).round() as usize];
    format!("{:.2}× [{:.2}–{:.2}]", q(0.5), q(0.25), q(0.75))
}

/// Hands the run of a model on the compile-time-sized core to `k`.
struct Static<'k> {
    t_end: f64,
    k: &'k mut dyn FnMut(Run<'_>),
}

impl ModelVisitor for Static<'_> {
    type Output = ();
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) {
        let t_end = self.t_end;
        (self.k)(&mut || static_run(model, setup, t_end))
    }
}

/// Hands the run of a model on the run-time-sized core to `k`.
struct Dynamic<'k> {
    t_end: f64,
    k: &'k mut dyn FnMut(Run<'_>),
}

impl DynModelVisitor for Dynamic<'_> {
    type Output = ();
    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) {
        let t_end = self.t_end;
        (self.k)(&mut || dyn_run(model, setup, t_end))
    }
}

fn bench(c: &mut Criterion) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models");
    for (name, t_end) in [("pendulum", 5.0), ("ellipse", 25.0)] {
        let compiled = Scenario::defaults(name).unwrap();
        let file = Scenario::from_model_file(format!("{dir}/{name}.toml")).unwrap();
        let steps = (t_end / compiled.h).round();
        let labels: Vec<String> = ["compiled", "compiled_dyn", "file_sized", "file"]
            .iter()
            .map(|how| format!("{name}_{how}"))
            .collect();
        let mut result = None;
        compiled
            .visit_compiled(Static {
                t_end,
                k: &mut |a| {
                    compiled
                        .visit_dyn(Dynamic {
                            t_end,
                            k: &mut |b| {
                                file.visit_file(Static {
                                    t_end,
                                    k: &mut |s| {
                                        file.visit_dyn(Dynamic {
                                            t_end,
                                            k: &mut |f| {
                                                result = Some(interleaved(
                                                    c,
                                                    &labels,
                                                    &mut [&mut *a, &mut *b, &mut *s, f],
                                                ));
                                            },
                                        })
                                        .unwrap();
                                    },
                                })
                                .unwrap()
                                .expect("the pendulum and the ellipse files have a compile-time instantiation");
                            },
                        })
                        .unwrap();
                },
            })
            .unwrap()
            .expect("the pendulum and the ellipse run on the compile-time core");
        let w = result.unwrap();
        let impacts: Vec<usize> = w.iter().map(|x| x.1).collect();
        assert!(
            impacts.iter().all(|&n| n == impacts[0]),
            "{name}: the four runs find the same impacts: {impacts:?}"
        );
        let us = |x: &[f64]| median(x) / steps * 1e6;
        let [a, b, s, f] = [&w[0].0, &w[1].0, &w[2].0, &w[3].0];
        eprintln!(
            "{name} {t_end} s ({steps} steps, {} impacts; medians of {ROUNDS} interleaved \
             rounds; ratios: median [quartiles] of the per-round ratios): compiled {:.3} µs/step; file on \
             the compile-time core (what the runner takes) {:.3} µs/step, {} (issue #27 \
             target ≤ 1.3); on the run-time core: compiled {:.3} µs/step, {}, file {:.3} \
             µs/step, {} compiled",
            impacts[0],
            us(a),
            us(s),
            ratio(s, a),
            us(b),
            ratio(b, a),
            us(f),
            ratio(f, a)
        );
    }
}

/// The fast path by size: each model file shipped in `models/` whose size
/// `(n, m)` is in [`FAST_FILE_SIZES`](diracvi_models::FAST_FILE_SIZES), on
/// the compile-time-sized core (what the runner takes) and on the
/// run-time-sized core, over at most 20 000 steps of its default run,
/// interleaved: what the compile-time instantiation of that size buys
/// (docs/theory.md §11.5).
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
        let labels = [format!("{name}_file_sized"), format!("{name}_file")];
        let mut result = None;
        let sized = file
            .visit_file(Static {
                t_end,
                k: &mut |s| {
                    file.visit_dyn(Dynamic {
                        t_end,
                        k: &mut |f| result = Some(interleaved(c, &labels, &mut [&mut *s, f])),
                    })
                    .unwrap();
                },
            })
            .unwrap();
        let (Some(()), Some(w)) = (sized, result) else {
            eprintln!("{name} {size:?}: no compile-time instantiation");
            continue;
        };
        assert_eq!(
            w[0].1, w[1].1,
            "{name}: the two cores find the same impacts"
        );
        let us = |x: &[f64]| median(x) / steps * 1e6;
        eprintln!(
            "{name} (n, m) = {size:?}, {steps} steps, {} impacts: compile-time core \
             {:.3} µs/step, run-time core {:.3} µs/step ({} the compile-time core; \
             medians of {ROUNDS} interleaved rounds)",
            w[0].1,
            us(&w[0].0),
            us(&w[1].0),
            ratio(&w[1].0, &w[0].0)
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
