//! LC-ladder scaling (the protocol of the published RC-ladder scaling
//! benchmarks: set-up and solve timed separately).
//!
//! * `ladder_setup/{cells}` — netlist analysis, the circuit's `DynSystem`,
//!   the Jacobian pattern and its column ordering (once per circuit);
//! * `ladder_step/{cells}` — one warm (+) step (forward map) on the ladder
//!   with its discrete energy, as a run takes it (`dyn_advance` on the
//!   run-time core's Lagrange–Dirac stepper, sparse storage from 10 cells
//!   on), after the first step has factored the Jacobian (kept factors,
//!   simplified Newton).
//!
//! Afterwards a plain timing of 200 steps per size prints steps/s, the
//! fitted scaling exponent `t_step ∝ cells^α` and the ratio of the time per
//! step at 10 000 and 1 000 cells (required ≤ 15), the same ratio from
//! interleaved rounds of the two sizes (median and quartiles; issue #27:
//! ≤ 11), and the time per step
//! of the order-4 composition on the run-time core (`Circuit::dyn_system`,
//! docs/theory.md §8.7), with its energy measure, from 10 to 10 000 cells.
//!
//! `cargo bench -p diracvi-circuit --bench ladder -- --warm-up-time 1 --measurement-time 3`

#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use diracvi_circuit::Circuit;
use diracvi_circuit::netlist::Netlist;
use diracvi_discrete_dirac::Direction;
use diracvi_discrete_dirac::dynamic::dyn_advance;
use diracvi_geometry::Discretization;
use std::f64::consts::PI;
use std::hint::black_box;
use std::time::Instant;

/// The LC ladder of `cells` cells (unit elements) started in its first
/// mode: capacitor voltages `sin(jπ/(cells + 1))`.
fn ladder(cells: usize) -> Netlist {
    let v0: Vec<f64> = (1..=cells)
        .map(|j| (j as f64 * PI / (cells as f64 + 1.0)).sin())
        .collect();
    Netlist::ladder(cells, 1.0, 1.0, &v0)
}

const SIZES: [usize; 4] = [10, 100, 1_000, 10_000];
const H: f64 = 0.1;

fn setup(net: &Netlist) -> diracvi_circuit::CircuitStepper {
    Circuit::new(net.clone())
        .unwrap()
        .stepper(Discretization::Forward, Direction::Forward)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("ladder_setup");
    for cells in SIZES {
        let net = ladder(cells);
        group.bench_with_input(BenchmarkId::from_parameter(cells), &net, |b, net| {
            b.iter(|| black_box(setup(net)))
        });
    }
    group.finish();
    let mut group = c.benchmark_group("ladder_step");
    for cells in SIZES {
        let circuit = Circuit::new(ladder(cells)).unwrap();
        let mut stepper = circuit.stepper(Discretization::Forward, Direction::Forward);
        let mut state = circuit.initial_state();
        let mut k = 0;
        group.bench_function(BenchmarkId::from_parameter(cells), |b| {
            b.iter(|| {
                state = dyn_advance(&mut stepper, &state, H).unwrap().to;
                k += 1;
            })
        });
    }
    group.finish();
    scaling();
}

/// Plain timings: set-up once, then 200 steps (after one warm-up step),
/// the best of three runs.
fn scaling() {
    let steps = 200;
    let mut per_step = Vec::new();
    println!("\ncells    coords   set-up [ms]   step [µs]   steps/s");
    for cells in SIZES {
        let net = ladder(cells);
        let (mut best_setup, mut best_step) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..3 {
            let t0 = Instant::now();
            let circuit = Circuit::new(net.clone()).unwrap();
            let mut stepper = circuit.stepper(Discretization::Forward, Direction::Forward);
            best_setup = best_setup.min(t0.elapsed().as_secs_f64());
            let mut state = circuit.initial_state();
            state = dyn_advance(&mut stepper, &state, H).unwrap().to;
            let t1 = Instant::now();
            for _ in 1..=steps {
                state = dyn_advance(&mut stepper, &state, H).unwrap().to;
            }
            best_step = best_step.min(t1.elapsed().as_secs_f64() / steps as f64);
            black_box(&state);
        }
        println!(
            "{cells:>6} {:>8} {:>13.3} {:>11.2} {:>9.0}",
            2 * cells + 1,
            best_setup * 1e3,
            best_step * 1e6,
            1.0 / best_step
        );
        per_step.push(best_step);
    }
    // Least-squares slope of log t_step against log cells (100 and up:
    // 10 cells is dominated by fixed costs).
    let xs: Vec<f64> = SIZES[1..].iter().map(|&c| (c as f64).ln()).collect();
    let ys: Vec<f64> = per_step[1..].iter().map(|t| t.ln()).collect();
    let (mx, my) = (
        xs.iter().sum::<f64>() / xs.len() as f64,
        ys.iter().sum::<f64>() / ys.len() as f64,
    );
    let slope = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| (x - mx) * (y - my))
        .sum::<f64>()
        / xs.iter().map(|x| (x - mx).powi(2)).sum::<f64>();
    println!(
        "scaling exponent (100..10000 cells): {slope:.3}; t_step(10000)/t_step(1000) = {:.2} (required <= 15)",
        per_step[3] / per_step[2]
    );
    interleaved_ratio();
    composed();
}

/// The ratio of the time per step at 10 000 and 1 000 cells from
/// interleaved rounds (issue #27 bar: ≤ 11): each round times 100 steps of
/// the 1 000-cell ladder and 10 of the 10 000-cell one, in an order that
/// alternates from round to round, so that the machine's drift falls on
/// both sizes alike. Prints the median times and the median and quartiles
/// of the per-round ratios.
fn interleaved_ratio() {
    const ROUNDS: usize = 21;
    let sizes = [(1_000, 100), (10_000, 10)];
    let mut runs: Vec<_> = sizes
        .iter()
        .map(|&(cells, _)| {
            let circuit = Circuit::new(ladder(cells)).unwrap();
            let mut stepper = circuit.stepper(Discretization::Forward, Direction::Forward);
            let state = circuit.initial_state();
            let state = dyn_advance(&mut stepper, &state, H).unwrap().to;
            (stepper, state, Vec::with_capacity(ROUNDS))
        })
        .collect();
    for round in 0..ROUNDS {
        for i in 0..sizes.len() {
            let w = (i + round) % sizes.len();
            let steps = sizes[w].1;
            let (stepper, state, times) = &mut runs[w];
            let t0 = Instant::now();
            for _ in 0..steps {
                *state = dyn_advance(stepper, state, H).unwrap().to;
            }
            times.push(t0.elapsed().as_secs_f64() / steps as f64);
            black_box(&*state);
        }
    }
    let median = |x: &[f64]| {
        let mut v = x.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (small, large) = (&runs[0].2, &runs[1].2);
    let mut ratios: Vec<f64> = large.iter().zip(small).map(|(l, s)| l / s).collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "interleaved ({ROUNDS} rounds): {:.1} µs/step at 1 000 cells, {:.1} µs/step at 10 000; \
         per-round ratio: median {:.2} [quartiles {:.2}–{:.2}] (issue #27: <= 11)",
        median(small) * 1e6,
        median(large) * 1e6,
        ratios[ROUNDS / 2],
        ratios[ROUNDS / 4],
        ratios[3 * ROUNDS / 4]
    );
}

/// The order-4 composition (triple jump of the symmetric midpoint step) on
/// the run-time core, with the composed step's energy as a run reports it:
/// time per step, best of three runs of 50 steps.
fn composed() {
    use diracvi_discrete_dirac::Composition;
    use diracvi_discrete_dirac::dynamic::{DynComposed, DynOneStep};
    use diracvi_geometry::ConstraintDiscretization;
    println!("\norder 4 on the run-time core\ncells  coords + rows   step [µs]");
    for cells in [10, 40, 130] {
        let circuit = Circuit::new(ladder(cells)).unwrap();
        let system = circuit.dyn_system("ladder");
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let mut stepper = DynComposed::lagrange_dirac(
                system.clone(),
                Discretization::Midpoint,
                ConstraintDiscretization::Midpoint,
                Direction::Forward,
                Composition::TripleJump,
            );
            let mut state = circuit.initial_state();
            let steps = 50;
            let t0 = Instant::now();
            for _ in 0..steps {
                state = stepper.advance(&state, H, &mut Vec::new()).unwrap().to;
            }
            best = best.min(t0.elapsed().as_secs_f64() / steps as f64);
            black_box(&state);
        }
        println!("{cells:>5} {:>15} {:>11.1}", 3 * cells + 1, best * 1e6);
    }
    composed_steps();
}

/// The order-4 composed step on large ladders, alone
/// (`DynSubStepper::sub_step`) and with the energy measure as a run reports
/// it (`DynOneStep::advance`: the constrained Legendre map, a sparse KKT
/// solve for a large circuit): both are linear in the size, the step
/// Jacobian and the KKT matrix stored sparsely (docs/theory.md §8.7,
/// §11.4). Best of three runs of 5 steps each, after one warm-up step.
fn composed_steps() {
    use diracvi_discrete_dirac::dynamic::{DynComposed, DynOneStep, DynSubStepper};
    use diracvi_discrete_dirac::{Composition, DynState};
    use diracvi_geometry::ConstraintDiscretization;
    println!(
        "\norder-4 composed step on large ladders\ncells  coords + rows   step alone [µs]   with energy [µs]"
    );
    let mut times = Vec::new();
    for cells in [1_000, 10_000] {
        let circuit = Circuit::new(ladder(cells)).unwrap();
        let system = circuit.dyn_system("ladder");
        let (mut alone, mut measured) = (f64::INFINITY, f64::INFINITY);
        let steps = 5;
        for _ in 0..3 {
            let new = || {
                DynComposed::lagrange_dirac(
                    system.clone(),
                    Discretization::Midpoint,
                    ConstraintDiscretization::Midpoint,
                    Direction::Forward,
                    Composition::TripleJump,
                )
            };
            let mut stepper = new();
            let start = circuit.initial_state();
            let (mut q, mut p) = (start.q.clone(), start.p.clone());
            // One warm-up step (the first factorization, the units).
            let s = stepper.sub_step(0.0, &q, &p, H).unwrap();
            (q, p) = (s.b, s.pi_b);
            let t0 = Instant::now();
            for k in 1..=steps {
                let s = stepper.sub_step(k as f64 * H, &q, &p, H).unwrap();
                (q, p) = (s.b, s.pi_b);
            }
            alone = alone.min(t0.elapsed().as_secs_f64() / steps as f64);
            black_box(&q);
            let mut stepper = new();
            let mut state: DynState = start;
            state = stepper.advance(&state, H, &mut Vec::new()).unwrap().to;
            let t0 = Instant::now();
            for _ in 1..=steps {
                state = stepper.advance(&state, H, &mut Vec::new()).unwrap().to;
            }
            measured = measured.min(t0.elapsed().as_secs_f64() / steps as f64);
            black_box(&state);
        }
        println!(
            "{cells:>5} {:>15} {:>17.1} {:>18.1}",
            3 * cells + 1,
            alone * 1e6,
            measured * 1e6
        );
        times.push((alone, measured));
    }
    println!(
        "order 4: t_step(10000)/t_step(1000) = {:.2} alone, {:.2} with the energy",
        times[1].0 / times[0].0,
        times[1].1 / times[0].1
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
