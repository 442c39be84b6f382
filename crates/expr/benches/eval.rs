//! Cost of evaluating a Lagrangian from a model file against the same
//! Lagrangian written in Rust (target: the tape within 3x).
//!
//! System: the Chaplygin sleigh of `tests/data/sleigh.toml`,
//! `L = ½ m (ẋ² + ẏ²) + ½ (I + m a²) θ̇² + m a θ̇ (cos θ ẏ − sin θ ẋ)`, at one
//! state, over `f64` (the value) and over `HyperDualSVec64<3, 3>` with `q`
//! seeded in the first and `v` in the second block (value, `∂L/∂q`,
//! `∂L/∂v`, `∂²L/∂q∂v` — what a Newton step of the steppers needs), and
//! over `DualSVec64<3>` and `DualSVec64<4>` with `q` seeded (a gradient
//! pass, `D₁L_d` or `D₂L_d`, in the compile-time core's width and in the
//! run-time core's chunk of four; tape and Rust agree bit for bit). Each
//! benchmark records its per-sample times; the medians and their ratio are
//! printed at the end, with the median of the ratios measured in pairs
//! (tape and Rust timed back to back in every sample), which is the robust
//! number on a busy machine.

use criterion::{BenchmarkGroup, Criterion, measurement::WallTime};
use diracvi_expr::{CompiledModel, ModelFile};
use diracvi_geometry::num_dual::DualSVec64;
use diracvi_geometry::{AdScalar, SVector, ad};
use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The sleigh Lagrangian written by hand, generic over the AD scalar.
fn sleigh_rust<S: AdScalar>(m: f64, inertia: f64, a: f64, q: &[S], v: &[S]) -> S {
    (v[0] * v[0] + v[1] * v[1]) * (0.5 * m)
        + v[2] * v[2] * (0.5 * (inertia + m * a * a))
        + v[2] * (m * a) * (q[2].cos() * v[1] - q[2].sin() * v[0])
}

/// Run one benchmark and return the median over its samples of the time
/// per iteration.
fn median_of<O>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    mut f: impl FnMut() -> O,
) -> f64 {
    let samples = RefCell::new(Vec::new());
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(f());
            }
            let elapsed = start.elapsed();
            samples
                .borrow_mut()
                .push(elapsed.as_secs_f64() / iters.max(1) as f64);
            elapsed
        })
    });
    // the last `sample_size` calls are the measurement (earlier: warm-up)
    let mut s = samples.into_inner();
    let keep = s.len().min(100);
    let mut s = s.split_off(s.len() - keep);
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The median ratio of the time per iteration of `a` to that of `b`, both
/// timed within each sample one after the other, so that both see the
/// same machine load (the medians of separate benchmarks drift apart on a
/// busy machine). Criterion's report for this benchmark is the time of `a`.
fn paired_ratio<A, B>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    mut a: impl FnMut() -> A,
    mut b: impl FnMut() -> B,
) -> f64 {
    let ratios = RefCell::new(Vec::new());
    group.bench_function(name, |bencher| {
        bencher.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(b());
            }
            let tb = start.elapsed();
            let start = Instant::now();
            for _ in 0..iters {
                black_box(a());
            }
            let ta = start.elapsed();
            ratios
                .borrow_mut()
                .push(ta.as_secs_f64() / tb.as_secs_f64().max(1e-12));
            ta
        })
    });
    let mut r = ratios.into_inner();
    let keep = r.len().min(100);
    let mut r = r.split_off(r.len() - keep);
    r.sort_by(f64::total_cmp);
    r.get(r.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Time the tape and the Rust Lagrangian over `S` at `(q, v)`: criterion's
/// figures in `group_name`, and the summary's row (scalar, tape, Rust,
/// paired ratio).
fn time_scalar<S: AdScalar>(
    c: &mut Criterion,
    scalar: &'static str,
    group_name: &str,
    model: &CompiledModel,
    (m, inertia, a): (f64, f64, f64),
    q: &[S],
    v: &[S],
) -> (&'static str, f64, f64, f64) {
    let mut group = c.benchmark_group(group_name);
    let tape_f = || model.lagrangian::<S>(black_box(q), black_box(v));
    let rust_f = || sleigh_rust(m, inertia, a, black_box(q), black_box(v));
    let tape = median_of(&mut group, "tape", tape_f);
    let rust = median_of(&mut group, "rust", rust_f);
    let ratio = paired_ratio(&mut group, "tape_paired_with_rust", tape_f, rust_f);
    group.finish();
    (scalar, tape, rust, ratio)
}

/// The gradient pass over the tape equals the Rust Lagrangian's bit for
/// bit (value and every derivative part).
fn same_bits<const W: usize>(
    model: &CompiledModel,
    (m, inertia, a): (f64, f64, f64),
    q: &[DualSVec64<W>],
    v: &[DualSVec64<W>],
) {
    let from_tape = model.lagrangian(q, v);
    let by_hand = sleigh_rust(m, inertia, a, q, v);
    assert_eq!(from_tape.re.to_bits(), by_hand.re.to_bits());
    assert_eq!(
        from_tape.eps, by_hand.eps,
        "the gradient pass over DualSVec64<{W}>: tape and Rust"
    );
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(100)
        .warm_up_time(Duration::from_secs(1))
        .configure_from_args();
    let file = ModelFile::from_toml_str(include_str!("../tests/data/sleigh.toml"), "sleigh.toml")
        .expect("the sleigh model file reads");
    let model = file.compile(&[]).expect("the sleigh model compiles");
    let p = |name| model.parameter(name).expect("parameter");
    let (m, inertia, a) = (p("m"), p("I"), p("a"));

    let q = SVector::from([0.3, -0.2, 0.7]);
    let v = SVector::from([1.0, 0.4, 0.5]);

    let params = (m, inertia, a);
    let mut rows = vec![time_scalar(
        &mut c,
        "f64",
        "sleigh_lagrangian_f64",
        &model,
        params,
        q.as_slice(),
        v.as_slice(),
    )];

    let qs = ad::seed_first::<3, 3>(&q);
    let vs = ad::seed_second::<3, 3>(&v);
    rows.push(time_scalar(
        &mut c,
        "HyperDualSVec64<3,3>",
        "sleigh_lagrangian_hyperdual33",
        &model,
        params,
        qs.as_slice(),
        vs.as_slice(),
    ));

    // a first-order pass as the steppers run it (`D_1 L_d`, `D_2 L_d`):
    // q seeded for the gradient, v dense constants
    let qg = ad::seed_gradient::<3>(&q);
    let vg: SVector<DualSVec64<3>, 3> = ad::constants(&v);
    rows.push(time_scalar(
        &mut c,
        "DualSVec64<3>",
        "sleigh_lagrangian_dualvec3",
        &model,
        params,
        qg.as_slice(),
        vg.as_slice(),
    ));
    same_bits(&model, params, qg.as_slice(), vg.as_slice());

    // the same in a chunk of four directions (the run-time core's width)
    let q4: SVector<DualSVec64<4>, 3> = SVector::from_fn(|i, _| {
        let mut x = <DualSVec64<4> as ad::DenseConstant>::constant(q[i]);
        x.eps.0.as_mut().expect("dense")[i] = 1.0;
        x
    });
    let v4: SVector<DualSVec64<4>, 3> = ad::constants(&v);
    rows.push(time_scalar(
        &mut c,
        "DualSVec64<4>",
        "sleigh_lagrangian_dualvec4",
        &model,
        params,
        q4.as_slice(),
        v4.as_slice(),
    ));
    same_bits(&model, params, q4.as_slice(), v4.as_slice());

    // the two agree
    let from_tape = model.lagrangian(qs.as_slice(), vs.as_slice());
    let by_hand = sleigh_rust(m, inertia, a, qs.as_slice(), vs.as_slice());
    let (l0, d1, d2, d12) = ad::partial_hessian_of(from_tape);
    let (r0, e1, e2, e12) = ad::partial_hessian_of(by_hand);
    let gap = (l0 - r0)
        .abs()
        .max((d1 - e1).amax())
        .max((d2 - e2).amax())
        .max((d12 - e12).amax());
    assert!(gap < 1e-14, "tape and Rust disagree by {gap:e}");

    c.final_summary();
    eprintln!("\nsleigh Lagrangian, median time per evaluation (target: tape within 3x of Rust)");
    eprintln!(
        "{:<22} {:>12} {:>12} {:>7} {:>14}",
        "scalar", "tape", "Rust", "ratio", "paired ratio"
    );
    for (scalar, tape, rust, paired) in rows {
        eprintln!(
            "{scalar:<22} {:>9.1} ns {:>9.1} ns {:>6.2}x {:>13.2}x",
            tape * 1e9,
            rust * 1e9,
            tape / rust,
            paired
        );
    }
}
