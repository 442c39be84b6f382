//! Order 2 on the two cores a circuit can run on: the sparse stepper of
//! `diracvi-discrete-dirac::sparse` (`Circuit::stepper`) and the run-time
//! core of every model (`DynLagrangeDirac` over `Circuit::dyn_system`,
//! sparse storage), the same ladder, step and map, each step with its
//! discrete energy as a run reports it. Prints µs per step (best of three
//! runs after one warm-up step) and the ratio run-time / sparse, for the
//! midpoint and the forward map (a ladder has no capacitor loop, so its
//! forward step is regular). The run-time core must reach the sparse one
//! before circuits at order 2 leave it (docs/theory.md §8).
//!
//! `cargo bench -p diracvi-circuit --bench cores` (with `CORES_ONLY=1` in
//! the environment the sparse stepper is skipped: for profiling the
//! run-time core alone).

#![allow(missing_docs)]

mod common;

use common::ladder;

use diracvi_circuit::Circuit;
use diracvi_discrete_dirac::Direction;
use diracvi_discrete_dirac::dynamic::{DynLagrangeDirac, DynOneStep};
use diracvi_geometry::{ConstraintDiscretization, Discretization};
use std::hint::black_box;
use std::time::Instant;

const H: f64 = 0.1;

/// Best time per step over three runs of `steps` steps, after one warm-up.
fn best(steps: usize, mut run: impl FnMut(usize)) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t0 = Instant::now();
        run(steps);
        best = best.min(t0.elapsed().as_secs_f64() / steps as f64);
    }
    best
}

fn main() {
    println!("order 2, µs per step: sparse stepper against the run-time core");
    println!("map       cells   sparse   run-time   ratio");
    for map in [Discretization::Midpoint, Discretization::Forward] {
        for cells in [10, 100, 1_000, 10_000] {
            let steps = (200_000 / cells).clamp(20, 20_000);
            let circuit = Circuit::new(ladder(cells)).unwrap();
            let only_core = std::env::var_os("CORES_ONLY").is_some();
            let sparse = if only_core {
                1.0
            } else {
                best(steps, |steps| {
                    let mut stepper = circuit.stepper(map, Direction::Forward).unwrap();
                    let mut state = circuit.initial_state();
                    let mut next = state.clone();
                    let mut energy = 0.0;
                    for k in 0..=steps {
                        energy += stepper.step_into(k, &state, H, &mut next).unwrap().energy;
                        std::mem::swap(&mut state, &mut next);
                    }
                    black_box((&state, energy));
                })
            };
            let system = circuit.dyn_system("ladder");
            let core = best(steps, |steps| {
                let mut stepper = DynLagrangeDirac::new(
                    system.clone(),
                    map,
                    ConstraintDiscretization::Midpoint,
                    Direction::Forward,
                );
                let mut state = circuit.initial_state();
                let mut energy = 0.0;
                for k in 0..=steps {
                    let out = stepper.advance(k, &state, H, &mut Vec::new()).unwrap();
                    energy += out.energy;
                    state = out.to;
                }
                black_box((&state, energy));
            });
            println!(
                "{:<9} {cells:>5} {:>8.2} {:>10.2} {:>7.2}",
                format!("{map:?}").to_lowercase(),
                sparse * 1e6,
                core * 1e6,
                core / sparse
            );
        }
    }
}
