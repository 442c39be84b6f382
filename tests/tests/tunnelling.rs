//! No tunnelling (#18): with large steps and grazing starts, the discrete
//! path of a step — the end points `q̃(α)` of its sub-steps of size `α h`,
//! docs/theory.md §4.2 — never goes below a wall without a recorded impact.
//! Each run either records its impacts or stops with a typed error; it never
//! passes through a wall.

use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, OneStep, State, SubStepper, state_from_velocity,
};
use diracvi_impact::ImpactIntegrator;
use diracvi_models::{DiskTable, DiskWall, Ellipse, Model, Particle, Pendulum, Star};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Points of the discrete path sampled per step.
const SAMPLES: usize = 24;

/// What the runs of one model did.
#[derive(Debug, Default)]
struct Tally {
    runs: usize,
    steps: usize,
    impacts: usize,
    /// Runs stopped by a typed error (e.g. "reduce h").
    refused: usize,
}

/// Run `model` from `s0` with step `h`, checking after every step without an
/// impact that the sampled path stays admissible (`g ≥ −tol`).
fn check_run<Mo: Model<N, M>, const N: usize, const M: usize>(
    model: &Mo,
    s0: State<N>,
    h: f64,
    steps: usize,
    tally: &mut Tally,
) {
    let setup = model.run_defaults();
    let stepper = || {
        LagrangeDirac::new(
            model.clone(),
            setup.discretization,
            setup.constraint,
            Direction::Forward,
        )
    };
    let mut integ = ImpactIntegrator::new(stepper());
    let mut probe = stepper();
    let mut state = s0;
    let mut events = Vec::new();
    tally.runs += 1;
    for k in 0..steps {
        let before = events.len();
        let out = match integ.advance(&state, h, &mut events) {
            Ok(out) => out,
            Err(_) => {
                tally.refused += 1;
                return;
            }
        };
        tally.steps += 1;
        let next = out.to;
        for j in 0..model.boundary_count() {
            let g = model.boundary(j, &next.q);
            assert!(
                g >= -1e-9,
                "{}: h = {h}, step {k}: grid point below piece {j} (g = {g:e})",
                Mo::NAME
            );
        }
        if events.len() == before {
            let d = next.q - state.q;
            for i in 1..SAMPLES {
                let alpha = i as f64 / SAMPLES as f64;
                // A sample whose solve fails has no path point to check.
                let Ok(sub) =
                    probe.trial_step(state.t, &state.q, &state.p, alpha * h, &(d * alpha))
                else {
                    continue;
                };
                for j in 0..model.boundary_count() {
                    let g = model.boundary(j, &sub.b);
                    assert!(
                        g >= -1e-6,
                        "{}: h = {h}, step {k} at t = {}: the path at α = {alpha} is below piece {j} (g = {g:e}) and no impact was recorded",
                        Mo::NAME,
                        state.t
                    );
                }
            }
        }
        tally.impacts += events.len() - before;
        state = next;
    }
}

/// Random large steps (10 to 100 times the default) and speeds (0.2 to 3
/// times the default velocity, either direction: constraint forms are
/// linear in the velocity, so the scaled velocity is admissible).
fn randomized<Mo: Model<N, M>, const N: usize, const M: usize>(model: Mo, seed: u64) -> Tally {
    let setup = model.run_defaults();
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut tally = Tally::default();
    for run in 0..16 {
        let h = setup.h * 10f64.powf(rng.random_range(1.0..2.0));
        let sign = if run % 2 == 1 { -1.0 } else { 1.0 };
        let v = setup.v0 * (sign * rng.random_range(0.2..3.0));
        let Ok(s0) = state_from_velocity(&model, 0.0, &setup.q0, &v) else {
            continue;
        };
        let steps = ((setup.t_end / h).ceil() as usize).clamp(5, 60);
        check_run(&model, s0, h, steps, &mut tally);
    }
    tally
}

macro_rules! tunnelling_test {
    ($name:ident, $model:expr, $seed:expr) => {
        #[test]
        fn $name() {
            let tally = randomized($model, $seed);
            eprintln!("{}: {tally:?}", stringify!($name));
            assert!(tally.steps > 100 && tally.impacts > 0, "{tally:?}");
            assert!(tally.refused < tally.runs, "{tally:?}");
        }
    };
}

tunnelling_test!(
    particle_never_tunnels,
    Particle::new(Default::default()).unwrap(),
    1
);
tunnelling_test!(
    ellipse_never_tunnels,
    Ellipse::new(Default::default()).unwrap(),
    2
);
tunnelling_test!(
    star_never_tunnels,
    Star::new(Default::default()).unwrap(),
    3
);
tunnelling_test!(
    pendulum_never_tunnels,
    Pendulum::new(Default::default()).unwrap(),
    4
);
tunnelling_test!(
    disk_wall_never_tunnels,
    DiskWall::new(Default::default()).unwrap(),
    5
);
tunnelling_test!(
    disk_table_never_tunnels,
    DiskTable::new(Default::default()).unwrap(),
    6
);
