//! The cost of derivatives (issue #28 bars): a 10⁴-step pendulum run
//! (models/pendulum.toml, impacts on its cylinder) plain, with the full
//! Jacobian (forward mode), and with the per-step tape and a reverse
//! (adjoint) gradient; and a pendulum whose potential is a Fourier series
//! with 100 coefficients, its gradient with respect to all of them by the
//! forward sensitivities and by the reverse sweep. Prints the ratios to the
//! plain run (medians of interleaved repetitions, with their spread), then
//! the criterion groups.
//!
//! `cargo bench -p diracvi-run --bench derivatives --profile wheel` (with
//! `DERIVATIVES_ONLY_FOURIER=1` in the environment only 20 reverse
//! gradients of the Fourier pendulum run, with `DERIVATIVES_ONLY_JACOBIAN=1`
//! only 20 runs of the pendulum with its full Jacobian: for profiling).

use criterion::{Criterion, criterion_group, criterion_main};
use diracvi_run::{Discard, RunOutcome, RunPlan, Scenario, execute};
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

const STEPS: usize = 10_000;
const COEFFICIENTS: usize = 100;
/// Steps of the Fourier pendulum's runs (its sensitivities carry 100
/// columns, each step's built by reverse sweeps over the Lagrangian's tape,
/// docs/theory.md §12.5).
const FOURIER_STEPS: usize = 1_000;

fn pendulum() -> Scenario {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    Scenario::from_model_file(root.join("models/pendulum.toml")).unwrap()
}

/// A pendulum `½ θ̇² − Σ_k c_k cos(k θ)` with `c_1 = g/l` and small other
/// coefficients: one coordinate, 100 parameters, no walls.
fn fourier() -> Scenario {
    let mut text = String::from(
        "[model]\nname = \"fourier-pendulum\"\ncoordinates = [\"theta\"]\nlagrangian = \"0.5*theta_dot^2",
    );
    for k in 1..=COEFFICIENTS {
        text.push_str(&format!(" - c{k}*cos({k}*theta)"));
    }
    text.push_str("\"\n[parameters]\n");
    for k in 1..=COEFFICIENTS {
        let c = if k == 1 { 9.8 } else { 0.01 / (k * k) as f64 };
        text.push_str(&format!("c{k} = {c:?}\n"));
    }
    text.push_str("[run]\nh = 1e-3\nt_end = 1.0\n[initial]\nq = [0.5]\nv = [0.0]\n");
    let path = std::env::temp_dir().join(format!("diracvi-fourier-{}.toml", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let sc = Scenario::from_model_file(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    sc
}

fn run(sc: &Scenario, plan: RunPlan) -> RunOutcome {
    execute(sc, plan, &mut Discard).unwrap()
}

/// The reverse gradient of `F = Σ x_N` from a run with the tape.
fn reverse(sc: &Scenario, plan: RunPlan) -> f64 {
    let o = run(sc, plan.tangents(true));
    let tape = o.tangents.unwrap();
    let g = vec![1.0; tape.initial.nrows()];
    let gradient = tape.gradient(&g).unwrap();
    gradient.initial[0] + gradient.parameters.iter().map(|(_, v)| v).sum::<f64>()
}

/// A named timed job.
type Job<'a> = (&'static str, Box<dyn FnMut() + 'a>);

/// Median and range (s) of `reps` interleaved timings of each closure.
fn timings(reps: usize, jobs: &mut [Job<'_>]) -> Vec<(String, f64, f64, f64)> {
    let mut samples = vec![Vec::new(); jobs.len()];
    for _ in 0..reps {
        for (i, (_, job)) in jobs.iter_mut().enumerate() {
            let t = Instant::now();
            job();
            samples[i].push(t.elapsed().as_secs_f64());
        }
    }
    jobs.iter()
        .zip(samples)
        .map(|((name, _), mut s)| {
            s.sort_by(f64::total_cmp);
            (name.to_string(), s[s.len() / 2], s[0], s[s.len() - 1])
        })
        .collect()
}

fn report(title: &str, rows: &[(String, f64, f64, f64)]) {
    let base = rows[0].1;
    eprintln!("{title}");
    for (name, median, low, high) in rows {
        eprintln!(
            "  {name:<34} {:8.2} ms  (range {:.2}–{:.2})  {:5.2} × plain",
            median * 1e3,
            low * 1e3,
            high * 1e3,
            median / base
        );
    }
}

fn derivatives(c: &mut Criterion) {
    if std::env::var_os("DERIVATIVES_ONLY_FOURIER").is_some() {
        // For profiling the parameter gradient alone.
        let f = fourier();
        let names: Vec<String> = (1..=COEFFICIENTS).map(|k| format!("c{k}")).collect();
        for _ in 0..20 {
            black_box(reverse(&f, RunPlan::new(FOURIER_STEPS).sensitivity(&names)));
        }
        return;
    }
    let p = pendulum();
    if std::env::var_os("DERIVATIVES_ONLY_JACOBIAN").is_some() {
        // For profiling the pendulum's full Jacobian alone.
        for _ in 0..20 {
            drop(run(&p, RunPlan::new(STEPS).jacobian(true)));
        }
        return;
    }
    let params = ["m", "g", "l", "r"];
    let plain = RunPlan::new(STEPS);
    let rows = timings(
        7,
        &mut [
            ("plain run", Box::new(|| drop(run(&p, plain.clone())))),
            (
                "full Jacobian (forward)",
                Box::new(|| drop(run(&p, plain.clone().jacobian(true)))),
            ),
            (
                "tape + reverse gradient",
                Box::new(|| {
                    black_box(reverse(&p, plain.clone()));
                }),
            ),
            (
                "Jacobian + 4 parameters (forward)",
                Box::new(|| drop(run(&p, plain.clone().sensitivity(params)))),
            ),
            (
                "tape + reverse, 4 parameters",
                Box::new(|| {
                    black_box(reverse(&p, plain.clone().sensitivity(params)));
                }),
            ),
        ],
    );
    report(
        &format!("pendulum, {STEPS} steps (bars: Jacobian ≤ 5 × plain)"),
        &rows,
    );
    let f = fourier();
    let names: Vec<String> = (1..=COEFFICIENTS).map(|k| format!("c{k}")).collect();
    let short = RunPlan::new(FOURIER_STEPS);
    let rows = timings(
        7,
        &mut [
            ("plain run", Box::new(|| drop(run(&f, short.clone())))),
            (
                "forward, 100 parameters",
                Box::new(|| drop(run(&f, short.clone().sensitivity(&names)))),
            ),
            (
                "tape + reverse, 100 parameters",
                Box::new(|| {
                    black_box(reverse(&f, short.clone().sensitivity(&names)));
                }),
            ),
        ],
    );
    report(
        &format!(
            "Fourier pendulum, {COEFFICIENTS} parameters, {FOURIER_STEPS} steps (bar: reverse ≤ 5 × plain)"
        ),
        &rows,
    );

    let mut g = c.benchmark_group("derivatives");
    g.sample_size(10);
    g.bench_function("pendulum_plain", |b| b.iter(|| run(&p, plain.clone())));
    g.bench_function("pendulum_jacobian", |b| {
        b.iter(|| run(&p, plain.clone().jacobian(true)))
    });
    g.bench_function("pendulum_reverse", |b| {
        b.iter(|| reverse(&p, plain.clone()))
    });
    g.bench_function("fourier_reverse_100", |b| {
        b.iter(|| reverse(&f, short.clone().sensitivity(&names)))
    });
    g.finish();
}

criterion_group!(benches, derivatives);
criterion_main!(benches);
