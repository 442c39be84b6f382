//! `insta` snapshots of every model's default run: 50 decimated records and
//! the impact list, rounded so they are stable across platforms (docs/theory.md §6).
//! Each test also asserts numbers, so a snapshot update cannot hide a
//! regression.
//!
//! The ellipse and star are chaotic (docs/theory.md §5 note): a perturbation of 1e-16
//! grows to ~1e-6 over 25 s, so their snapshots cover the first 5 s only.
//! Snapshots live in `tests/snapshots/`; review changes with `cargo insta review`.

use diracvi_discrete_dirac::Direction;
use diracvi_models::{ModelVisitor, NamedSystem, RunSetup, Scenario};
use diracvi_tests::run_model;
use std::fmt::Write;

/// Round to `digits` significant digits in scientific notation.
fn r(x: f64, digits: usize) -> String {
    let s = format!("{:.*e}", digits - 1, x);
    // "-0.000e0" and "0.000e0" are the same number
    if s.trim_start_matches('-')
        .starts_with(&format!("{:.*e}", digits - 1, 0.0))
    {
        format!("{:.*e}", digits - 1, 0.0)
    } else {
        s
    }
}

struct Snapshot {
    t_end: Option<f64>,
    digits: usize,
}

/// The snapshot text and a few numbers to assert.
struct Taken {
    text: String,
    impacts: usize,
    energy_dev_rel: f64,
    residual: f64,
    has_boundary: bool,
}

impl ModelVisitor for Snapshot {
    type Output = Taken;
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Taken {
        let t_end = self.t_end.unwrap_or(setup.t_end);
        let steps = (t_end / setup.h).round() as usize;
        let every = (steps / 50).max(1);
        let traj = run_model(model, setup, setup.h, steps, every, Direction::Forward).unwrap();
        let d = self.digits;
        let mut text = String::new();
        writeln!(
            text,
            "model {}  h {}  steps {steps}  every {every}",
            model.name(),
            r(setup.h, d)
        )
        .unwrap();
        writeln!(text, "# k t q[..] p[..] energy").unwrap();
        for rec in &traj.records {
            let q: Vec<String> = rec.q.iter().map(|x| r(*x, d)).collect();
            let p: Vec<String> = rec.p.iter().map(|x| r(*x, d)).collect();
            writeln!(
                text,
                "{} {} [{}] [{}] {}",
                rec.k,
                r(rec.t, d),
                q.join(" "),
                p.join(" "),
                r(rec.energy, d)
            )
            .unwrap();
        }
        writeln!(text, "# impacts: step alpha t piece q[..] energy_before").unwrap();
        for e in &traj.events {
            // Impact points lie on a boundary, where a coordinate may be
            // zero up to round-off (the particle's y ≈ 1e-17): components
            // below 1e-12 of |q̃| are written as 0, so the snapshot does
            // not record round-off.
            let scale = e.q.amax().max(1.0);
            let q: Vec<String> =
                e.q.iter()
                    .map(|x| r(if x.abs() < 1e-12 * scale { 0.0 } else { *x }, d))
                    .collect();
            writeln!(
                text,
                "{} {} {} {} [{}] {}",
                e.step,
                r(e.alpha, d.min(6)),
                r(e.t, d),
                e.piece,
                q.join(" "),
                r(e.energy_before, d)
            )
            .unwrap();
        }
        let s = traj.summary;
        Taken {
            text,
            impacts: traj.events.len(),
            energy_dev_rel: s.max_abs_energy_deviation / s.initial_energy.abs(),
            residual: s.max_constraint_residual,
            has_boundary: model.boundary_count() > 0,
        }
    }
}

fn snapshot(name: &str, t_end: Option<f64>, digits: usize, energy_bound: f64) {
    let taken = Scenario::defaults(name)
        .unwrap()
        .visit_compiled(Snapshot { t_end, digits })
        .unwrap()
        .expect("a model of the compile-time core");
    assert!(
        taken.residual <= 1e-12,
        "{name}: constraint residual {:e}",
        taken.residual
    );
    assert!(
        taken.energy_dev_rel <= energy_bound,
        "{name}: energy deviation {:e}",
        taken.energy_dev_rel
    );
    if taken.has_boundary {
        assert!(taken.impacts > 0, "{name}: no impact");
    }
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name.replace('-', "_"), taken.text);
    });
}

#[test]
fn particle() {
    snapshot("particle", None, 8, 5e-4);
}

#[test]
fn ellipse() {
    snapshot("ellipse", Some(5.0), 8, 5e-4);
}

#[test]
fn star() {
    snapshot("star", Some(5.0), 8, 5e-4);
}

#[test]
fn pendulum() {
    snapshot("pendulum", None, 8, 3e-2);
}

#[test]
fn disk_wall() {
    snapshot("disk-wall", None, 8, 5e-4);
}

#[test]
fn disk_table() {
    snapshot("disk-table", None, 8, 5e-4);
}

#[test]
fn lc() {
    snapshot("lc", None, 8, 1e-1);
}
