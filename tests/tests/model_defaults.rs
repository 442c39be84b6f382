//! Every model runs its paper defaults to its end time (docs/theory.md §5, issue
//! "Model catalogue"): finite results, impacts where there is a boundary,
//! bounded energy deviation, constraint residuals at round-off.

use diracvi_discrete_dirac::Direction;
use diracvi_models::{ModelVisitor, NamedSystem, RunSetup, Scenario};
use diracvi_tests::run_model;

/// What a default run produced.
#[derive(Debug)]
struct Outcome {
    impacts: usize,
    boundary: bool,
    energy_dev_rel: f64,
    residual: f64,
    min_g: f64,
}

struct Runner;

impl ModelVisitor for Runner {
    type Output = Outcome;
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Outcome {
        let steps = (setup.t_end / setup.h).round() as usize;
        let traj = run_model(model, setup, setup.h, steps, 1, Direction::Forward)
            .unwrap_or_else(|e| panic!("{}: {e}", model.name()));
        let mut min_g = f64::INFINITY;
        for r in &traj.records {
            assert!(
                r.q.iter().chain(r.p.iter()).all(|x| x.is_finite()),
                "{}: non-finite state",
                model.name()
            );
            for j in 0..model.boundary_count() {
                min_g = min_g.min(model.boundary(j, &r.q));
            }
        }
        let s = traj.summary;
        Outcome {
            impacts: traj.events.len(),
            boundary: model.boundary_count() > 0,
            energy_dev_rel: s.max_abs_energy_deviation / s.initial_energy.abs().max(1e-300),
            residual: s.max_constraint_residual,
            min_g,
        }
    }
}

fn check(name: &str, energy_bound: f64) {
    let out = Scenario::defaults(name)
        .unwrap()
        .visit_compiled(Runner)
        .unwrap()
        .expect("a model of the compile-time core");
    eprintln!("{name}: {out:?}");
    if out.boundary {
        assert!(out.impacts > 0, "{name}: no impact");
        assert!(
            out.min_g >= -1e-10,
            "{name}: left the admissible set (g = {:e})",
            out.min_g
        );
    }
    assert!(
        out.residual <= 1e-12,
        "{name}: constraint residual {:e}",
        out.residual
    );
    assert!(
        out.energy_dev_rel <= energy_bound,
        "{name}: relative energy deviation {:e} > {energy_bound:e}",
        out.energy_dev_rel
    );
}

#[test]
fn particle_defaults() {
    check("particle", 5e-4);
}

#[test]
fn ellipse_defaults() {
    check("ellipse", 5e-4);
}

#[test]
fn star_defaults() {
    check("star", 5e-4);
}

#[test]
fn pendulum_defaults() {
    check("pendulum", 3e-2);
}

#[test]
fn disk_wall_defaults() {
    check("disk-wall", 5e-4);
}

#[test]
fn disk_table_defaults() {
    check("disk-table", 5e-4);
}

#[test]
fn lc_defaults() {
    check("lc", 1e-1);
}
