//! Periodic orbits through the runner's API (docs/theory.md §14): the
//! upright ellipse bouncing vertically as a fixed point of the impact
//! section map, checked by rerunning the plain simulation from it and by
//! finite differences of plain runs; a smooth normal mode of the double
//! pendulum over a whole number of steps; continuation in the ellipse's
//! semi-axis; the typed errors.

use diracvi_run::{
    Discard, MultiplierKind, PeriodicError, PeriodicOptions, PeriodicOrbit, RunPlan, Scenario,
    Section, Stability, continue_orbit, execute, parameter_values, periodic_orbit,
};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn file(name: &str) -> Scenario {
    Scenario::from_model_file(root().join("models").join(format!("{name}.toml"))).unwrap()
}

/// The ellipse standing on its long axis (θ = π/2: the semi-axis `a`
/// vertical), dropped from rest.
fn upright_ellipse() -> Scenario {
    let mut sc = file("ellipse");
    sc.set("q", "1.5707963267948966,0,3.5").unwrap();
    sc.set("v", "0,0,0").unwrap();
    sc.set("t_end", "5").unwrap();
    sc
}

fn section() -> PeriodicOptions {
    PeriodicOptions::new(Section::Impact { piece: 0, count: 1 })
}

fn nontrivial(o: &PeriodicOrbit) -> Vec<(f64, f64)> {
    o.multipliers
        .iter()
        .filter(|m| !m.kind.is_trivial())
        .map(|m| (m.re, m.im))
        .collect()
}

/// The post-impact state of the first impact of a plain run from `(q, v)`.
fn first_return(sc: &Scenario, q: &[f64], v: &[f64], t: f64) -> Vec<f64> {
    let mut sc = sc.clone();
    let list = |x: &[f64]| {
        x.iter()
            .map(|c| format!("{c:.17e}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    sc.set("q", &list(q)).unwrap();
    sc.set("v", &list(v)).unwrap();
    let steps = (t / sc.h).ceil() as usize + 1;
    let o = execute(&sc, RunPlan::new(steps), &mut Discard).unwrap();
    let i = &o.impacts[0];
    [i.q.clone(), i.p_after.clone()].concat()
}

#[test]
fn the_upright_ellipse_bouncing_vertically_is_a_periodic_orbit() {
    let sc = upright_ellipse();
    let o = periodic_orbit(&sc, &section(), None).unwrap();
    eprintln!("{o:#?}");
    assert!(o.residual <= 1e-12, "residual {:e}", o.residual);
}
