//! Stepper benchmarks.
//!
//! * `pendulum_plus_step/*` — one warm-started (+) step of the nonholonomic
//!   spherical pendulum (n = 2, m = 1, \[VCI\] §4.3, no wall), h = 1e-3, along
//!   a trajectory (target ≤ 1 µs for the Lagrange–Dirac step);
//! * `lc_800_steps` — the LC circuit of \[DDM\] §6 (n = 4, m = 2, degenerate
//!   Lagrangian: hidden constraints from faer's SVD, computed once and
//!   cached; simplified Newton with the previous step's LU factors), 800
//!   steps of h = 2π/40 through the trajectory driver, stepper construction
//!   included (target ≤ 1 ms).
//!
//! `cargo bench -p diracvi-discrete-dirac --bench steppers -- --warm-up-time 1 --measurement-time 3`

#![allow(missing_docs)]

#[path = "../tests/common/mod.rs"]
mod common;

use common::{Lc, Pendulum, f_pend};
use criterion::{Criterion, criterion_group, criterion_main};
use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, NonholonomicHamiltonian, RunOptions, State, SymplecticEuler,
    integrate, state_from_velocity,
};
use diracvi_geometry::{ConstraintDiscretization, Discretization, SVector};
use std::f64::consts::PI;
use std::hint::black_box;

fn pendulum_start() -> State<2> {
    let pend = Pendulum::default();
    let th0 = 0.75 * PI;
    state_from_velocity(
        &pend,
        0.0,
        &SVector::from([th0, 0.0]),
        &SVector::from([0.25 * PI, f_pend(th0) * 0.25 * PI]),
    )
    .unwrap()
}

fn pendulum_step(c: &mut Criterion) {
    let pend = Pendulum::default();
    let h = 1e-3;
    let mut group = c.benchmark_group("pendulum_plus_step");
    for (name, disc, cd) in [
        (
            "lagrange_dirac_forward",
            Discretization::Forward,
            ConstraintDiscretization::Retraction,
        ),
        (
            "lagrange_dirac_midpoint",
            Discretization::Midpoint,
            ConstraintDiscretization::Midpoint,
        ),
    ] {
        let mut st = LagrangeDirac::plus(pend, disc, cd);
        let mut s = pendulum_start();
        let mut k = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                // Restart every 2000 steps (a typical smooth step): millions
                // of steps of the wall-less swing drift in energy (forward
                // map) until Newton fails near the top.
                if k % 2000 == 0 {
                    s = pendulum_start();
                }
                let (next, _) = st.step(black_box(&s), h).unwrap();
                s = next;
                k += 1;
            })
        });
    }
    let mut ham = NonholonomicHamiltonian::new(
        pend,
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
        SymplecticEuler,
        Direction::Forward,
    );
    let mut s = pendulum_start();
    let mut k = 0;
    group.bench_function("hamiltonian_symplectic_euler", |b| {
        b.iter(|| {
            // Restart every 2000 steps, as above (H is moreover singular at
            // sin θ = 0).
            if k % 2000 == 0 {
                s = pendulum_start();
            }
            let (next, _) = ham.step(black_box(&s), h).unwrap();
            s = next;
            k += 1;
        })
    });
    group.finish();
}

fn lc_800_steps(c: &mut Criterion) {
    let lc = Lc::default();
    let h = 2.0 * PI / lc.omega() / 40.0;
    let s0 = lc.start();
    c.bench_function("lc_800_steps", |b| {
        b.iter(|| {
            let mut st = LagrangeDirac::plus(
                lc,
                Discretization::Forward,
                ConstraintDiscretization::Retraction,
            );
            let traj = integrate(
                &mut st,
                black_box(s0),
                h,
                RunOptions::new(800).every(0),
                |_| {},
                |_| {},
            )
            .unwrap();
            black_box(traj.summary.final_state)
        })
    });
}

criterion_group!(benches, pendulum_step, lc_800_steps);
criterion_main!(benches);
