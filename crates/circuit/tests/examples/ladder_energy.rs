//! Energy error and wall time of an LC ladder run, for the ngspice
//! comparison (`scripts/ngspice_ladder.sh`).
//!
//! `cargo run --release -p diracvi-circuit-tests --example ladder_energy -- CELLS MODE PERIODS STEPS_PER_PERIOD [forward|midpoint]`
//!
//! Prints one line: discretization, steps, h, the largest relative
//! deviation of the discrete energy from its first value over the run, the
//! relative change at the end, and the wall time (set-up + solve).

use diracvi_circuit::Circuit;
use diracvi_circuit::netlist::Netlist;
use diracvi_geometry::Discretization;
use std::f64::consts::PI;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |i: usize, default: f64| -> f64 {
        args.get(i)
            .map(|s| s.parse().expect("a number"))
            .unwrap_or(default)
    };
    let cells = get(0, 10.0) as usize;
    let mode = get(1, 1.0) as usize;
    let periods = get(2, 1e4);
    let per_period = get(3, 40.0);
    let disc = match args.get(4).map(String::as_str) {
        Some("midpoint") => Discretization::Midpoint,
        _ => Discretization::Forward,
    };
    let omega = 2.0 * (mode as f64 * PI / (2.0 * (cells as f64 + 1.0))).sin();
    let period = 2.0 * PI / omega;
    let h = period / per_period;
    let steps = (periods * per_period).round() as usize;
    let v0: Vec<f64> = (1..=cells)
        .map(|j| (j as f64 * mode as f64 * PI / (cells as f64 + 1.0)).sin())
        .collect();
    let t0 = Instant::now();
    let circuit = Circuit::new(Netlist::ladder(cells, 1.0, 1.0, &v0)).expect("ladder");
    let run = circuit
        .simulate(disc, h, steps, 0, |_| {})
        .expect("the run succeeds");
    let wall = t0.elapsed().as_secs_f64();
    let e0 = run.energy_initial;
    let dev = ((run.energy_max - e0).abs()).max((run.energy_min - e0).abs()) / e0;
    println!(
        "diracvi-{disc:?} steps={steps} h={h:.6} max_rel_energy_dev={dev:.3e} final_rel_energy_change={:.3e} wall_s={wall:.3}",
        (run.energy_final - e0) / e0
    );
}
