//! Periodic orbits through the runner's API (docs/theory.md §14): the
//! upright ellipse bouncing vertically as a fixed point of the impact
//! section map, checked by rerunning the plain simulation from it and by
//! finite differences of plain runs; a smooth normal mode of the double
//! pendulum over a whole number of steps; continuation in the ellipse's
//! semi-axis; the typed errors.

use diracvi_models::{ConstraintDiscretization, Discretization};
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

/// `sc` started at `(q, v)` (written to the last bit).
fn started_at(sc: &Scenario, q: &[f64], v: &[f64]) -> Scenario {
    let mut sc = sc.clone();
    let list = |x: &[f64]| {
        x.iter()
            .map(|c| format!("{c:.17e}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    sc.set("q", &list(q)).unwrap();
    sc.set("v", &list(v)).unwrap();
    sc
}

/// A plain run of `o.steps` steps from the orbit's point comes back to
/// it within 1e-12.
fn assert_plain_run_returns(sc: &Scenario, o: &PeriodicOrbit) {
    let rerun = started_at(sc, &o.q, &o.v);
    let r = execute(&rerun, RunPlan::new(o.steps), &mut Discard).unwrap();
    for (a, b) in [r.final_q, r.final_p]
        .concat()
        .iter()
        .zip([o.q.clone(), o.p.clone()].concat())
    {
        assert!((a - b).abs() <= 1e-12, "{a} vs {b}");
    }
}

/// The post-impact state of the first impact of a plain run from `(q, v)`.
fn first_return(sc: &Scenario, q: &[f64], v: &[f64], t: f64) -> Vec<f64> {
    let sc = started_at(sc, q, v);
    let steps = (t / sc.h).ceil() as usize + 1;
    let o = execute(&sc, RunPlan::new(steps), &mut Discard).unwrap();
    let i = &o.impacts[0];
    [i.q.clone(), i.p_after.clone()].concat()
}

/// The upright ellipse dropped from rest settles, after Newton's method
/// moves its energy so that the return takes 142.5 steps, on a vertical
/// bounce: residual below 1e-12, multipliers in reciprocal pairs, the
/// x-translation pair and the section's 0 identified, the verdict that of
/// the multipliers. Standing on its long axis the bounce is unstable
/// (rocking grows).
#[test]
fn the_upright_ellipse_bouncing_vertically_is_a_periodic_orbit() {
    let sc = upright_ellipse();
    let o = periodic_orbit(&sc, &section(), None).unwrap();
    assert!(o.residual <= 1e-12, "residual {:e}", o.residual);
    assert!(o.iterations <= 10, "{} iterations", o.iterations);
    // on the wall (y = a = 1 at θ = π/2), bouncing straight up
    assert!((o.q[0] - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
    assert!((o.q[2] - 1.0).abs() < 1e-12);
    assert!(o.p[0].abs() < 1e-12 && o.p[1].abs() < 1e-12 && o.p[2] > 6.0);
    // The discrete impact law balances the discrete energies of the
    // sub-steps α h and (1 − α) h: a fixed point needs α = 1/2, so the
    // return takes a whole number of steps and a half.
    let half = o.period / sc.h - 0.5;
    assert!((half - half.round()).abs() < 1e-9, "period {}", o.period);
    // exact flight: the return time is 2 v / g
    assert!((o.period - 2.0 * o.v[2] / 9.8).abs() < 1e-12);
    let kinds: Vec<&MultiplierKind> = o.multipliers.iter().map(|m| &m.kind).collect();
    let count = |k: &MultiplierKind| kinds.iter().filter(|x| **x == k).count();
    assert_eq!(
        count(&MultiplierKind::Symmetry {
            coordinate: "x".into()
        }),
        2
    );
    assert_eq!(count(&MultiplierKind::Section), 1);
    assert_eq!(count(&MultiplierKind::Energy), 1);
    let pair = nontrivial(&o);
    assert_eq!(pair.len(), 2, "{:?}", o.multipliers);
    // reciprocal pair, independently of the reported defect
    let (a, b) = (pair[0], pair[1]);
    let prod = (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0);
    assert!(
        (prod.0 - 1.0).abs() < 1e-8 && prod.1.abs() < 1e-8,
        "{pair:?}"
    );
    assert!(o.reciprocity_defect < 1e-8);
    // the verdict is the multipliers'
    let largest = pair.iter().map(|z| z.0.hypot(z.1)).fold(0.0, f64::max);
    assert!((o.max_modulus - largest).abs() <= 1e-12 * largest);
    assert_eq!(
        o.stability,
        if largest > 1.0 + 1e-6 {
            Stability::Unstable
        } else {
            Stability::Stable
        }
    );
    assert_eq!(o.stability, Stability::Unstable);
    // The energy multiplier is 1 − g h / (2 v) (docs/theory.md §14.3).
    let energy = o
        .multipliers
        .iter()
        .find(|m| m.kind == MultiplierKind::Energy)
        .unwrap();
    let expected = 1.0 - 9.8 * sc.h / (2.0 * o.v[2]);
    assert!(
        (energy.re - expected).abs() < 1e-9,
        "{} vs {expected}",
        energy.re
    );
}

/// The fixed point checked without Newton's method: a plain run (the
/// public `execute`, from `q*` and `v*` as scenario data) returns to it at
/// its first impact to 1e-12.
#[test]
fn a_plain_run_from_the_fixed_point_returns_to_it() {
    let sc = upright_ellipse();
    let o = periodic_orbit(&sc, &section(), None).unwrap();
    let back = first_return(&sc, &o.q, &o.v, o.period);
    let x: Vec<f64> = [o.q.clone(), o.p.clone()].concat();
    for (a, b) in back.iter().zip(&x) {
        assert!((a - b).abs() <= 1e-12, "{back:?} vs {x:?}");
    }
}

/// The exact Jacobian of the section map against central differences of
/// plain runs (the first impact's post-impact state) from perturbed initial
/// data, in every direction along the wall and the momenta (`p = M v`),
/// and a one-sided second-order difference off the wall (upwards).
#[test]
fn the_section_map_jacobian_matches_differences_of_plain_runs() {
    let sc = upright_ellipse();
    let o = periodic_orbit(&sc, &section(), None).unwrap();
    // p = diag(I, m, m) v with I = m (a² + b²)/4 = 0.3125, m = 1
    let mass = [0.3125, 1.0, 1.0];
    let x0: Vec<f64> = [o.q.clone(), o.v.clone()].concat();
    let at = |i: usize, e: f64| {
        let mut x = x0.clone();
        x[i] += if i >= 3 { e / mass[i - 3] } else { e };
        first_return(&sc, &x[..3], &x[3..], o.period + 0.1)
    };
    let delta = 1e-6;
    let scale = o.monodromy.amax();
    let mut differences = nalgebra::DMatrix::<f64>::zeros(6, 6);
    for col in [0, 1, 3, 4, 5] {
        let (plus, minus) = (at(col, delta), at(col, -delta));
        for row in 0..6 {
            let fd = (plus[row] - minus[row]) / (2.0 * delta);
            differences[(row, col)] = fd;
            let exact = o.monodromy[(row, col)];
            assert!(
                (fd - exact).abs() <= 1e-6 * scale,
                "∂{row}/∂{col}: exact {exact}, differences {fd}"
            );
        }
    }
    // y: off the wall only upwards (second-order one-sided difference)
    let (p1, p2, p0) = (at(2, delta), at(2, 2.0 * delta), at(2, 0.0));
    for row in 0..6 {
        let fd = (-3.0 * p0[row] + 4.0 * p1[row] - p2[row]) / (2.0 * delta);
        differences[(row, 2)] = fd;
        let exact = o.monodromy[(row, 2)];
        assert!(
            (fd - exact).abs() <= 1e-6 * scale,
            "∂{row}/∂y: exact {exact}, differences {fd}"
        );
    }
    // The multipliers of the differences' monodromy: each reported energy
    // and nontrivial multiplier has one within 1e-5 (relative) of it.
    let eig = differences.complex_eigenvalues();
    for m in o
        .multipliers
        .iter()
        .filter(|m| matches!(m.kind, MultiplierKind::Energy | MultiplierKind::Nontrivial))
    {
        let z = nalgebra::Complex::new(m.re, m.im);
        let closest = eig
            .iter()
            .map(|e| (e - z).norm())
            .fold(f64::INFINITY, f64::min);
        assert!(
            closest <= 1e-5 * z.norm().max(1.0),
            "{z}: differences' eigenvalues {eig:?}"
        );
    }
}

/// Continuation in the semi-axis `a` (the vertical one; `b = 0.5`) over
/// 22 values through the circle `a = b`, bouncing 0.6 m high: every point
/// converged, the branch smooth (the trace of the rocking pair grows
/// monotonically with `a`, the bounce keeps its speed) and both changes of
/// stability reported: a period-doubling one (trace −2) where the
/// restoring kick of the short axis gets too strong for the flight time,
/// and the circle `a = b` (trace 2), beyond which the ellipse stands on its
/// long axis and falls over.
#[test]
fn continuation_in_the_semi_axis_reports_the_change_of_stability() {
    let mut sc = upright_ellipse();
    sc.set("q", "1.5707963267948966,0,1.0").unwrap();
    let values = parameter_values(0.4, 0.6, 22);
    let branch = continue_orbit(&sc, "a", &values, &section(), None).unwrap();
    assert!(branch.stopped.is_none(), "{:?}", branch.stopped);
    assert_eq!(branch.points.len(), 22);
    let trace = |o: &PeriodicOrbit| nontrivial(o).iter().map(|z| z.0).sum::<f64>();
    let mut last_trace = f64::NEG_INFINITY;
    let speed = branch.points[0].orbit.p[2];
    for p in &branch.points {
        let o = &p.orbit;
        assert!(o.residual <= 1e-12, "a = {}: {:e}", p.value, o.residual);
        assert!((o.q[2] - p.value).abs() < 1e-12);
        assert!((o.p[2] - speed).abs() < 1e-9 * speed);
        assert!(o.reciprocity_defect < 1e-8, "a = {}", p.value);
        let t = trace(o);
        assert!(
            t > last_trace,
            "a = {}: trace {t} after {last_trace}",
            p.value
        );
        last_trace = t;
        let expected = if t.abs() <= 2.0 {
            Stability::Stable
        } else {
            Stability::Unstable
        };
        assert_eq!(o.stability, expected, "a = {}: trace {t}", p.value);
    }
    assert_eq!(branch.changes.len(), 2, "{:?}", branch.changes);
    let (flip, circle) = (&branch.changes[0], &branch.changes[1]);
    assert_eq!(
        (flip.from, flip.to),
        (Stability::Unstable, Stability::Stable)
    );
    assert_eq!(
        (circle.from, circle.to),
        (Stability::Stable, Stability::Unstable)
    );
    assert!(
        circle.from_value < 0.5 && 0.5 < circle.to_value,
        "{circle:?}"
    );
    for c in &branch.changes {
        assert!(c.from_value <= c.estimate && c.estimate <= c.to_value);
    }
    // the half-trace of the pair crosses 1 at the circle a = b
    assert!((circle.estimate - 0.5).abs() < 1e-3, "{circle:?}");
    let at_flip = |i: usize| trace(&branch.points[i].orbit);
    let i = branch
        .points
        .iter()
        .position(|p| p.value.to_bits() == flip.to_value.to_bits())
        .unwrap();
    assert!(at_flip(i - 1) < -2.0 && at_flip(i) >= -2.0);
}

/// A smooth motion closed after a whole number of steps: the in-phase
/// normal mode of the double pendulum (floor out of reach), from a guess
/// near the linear mode (θ₂ ≈ √2 θ₁) at an amplitude of 0.3 rad, with the
/// period found from the run's first close return (264 steps). The map
/// Φ^N is symplectic: every multiplier pairs with its reciprocal; the time
/// shift / energy pair is identified and within 1e-6 of 1 (a Jordan block
/// split by round-off), the other pair (the anti-phase mode) is on the
/// unit circle: stable. The period exceeds the linear one, 2π / √(g (2 −
/// √2)), as a softening pendulum's does, by less than 2 %. Smaller data
/// (0.05 rad) have no in-phase orbit of their rounded-down period: Newton's
/// method lands on the equilibrium, which is a typed error.
#[test]
fn a_normal_mode_of_the_double_pendulum_closes_after_whole_steps() {
    let mut sc = file("double-pendulum");
    sc.set("d", "2.5").unwrap();
    sc.set("h", "0.01").unwrap();
    sc.set("q", "0.3,0.4").unwrap();
    sc.set("v", "0,0").unwrap();
    sc.set("t_end", "4").unwrap();
    let o = periodic_orbit(&sc, &PeriodicOptions::new(Section::Steps(None)), None).unwrap();
    assert!(o.residual <= 1e-12, "{:e}", o.residual);
    assert!(o.q[0] > 0.2 && o.q[1] > 0.3, "{:?}", o.q);
    let linear = 2.0 * std::f64::consts::PI / (9.8 * (2.0 - 2f64.sqrt())).sqrt();
    assert!(
        o.period > linear && o.period < 1.02 * linear,
        "{} vs {linear}",
        o.period
    );
    assert!((o.steps as f64 * sc.h - o.period).abs() < 1e-9);
    let shift: Vec<_> = o
        .multipliers
        .iter()
        .filter(|m| m.kind == MultiplierKind::TimeShiftEnergy)
        .collect();
    assert_eq!(shift.len(), 2, "{:?}", o.multipliers);
    for m in &shift {
        assert!((m.re - 1.0).abs() < 1e-6 && m.im.abs() < 1e-6, "{m:?}");
    }
    let pair = nontrivial(&o);
    assert_eq!(pair.len(), 2);
    for z in &pair {
        assert!(
            (z.0.hypot(z.1) - 1.0).abs() < 1e-9 && z.1.abs() > 0.1,
            "{pair:?}"
        );
    }
    assert!(o.reciprocity_defect < 1e-8);
    assert_eq!(o.stability, Stability::Stable);
    // the plain run from the fixed point comes back after N steps
    assert_plain_run_returns(&sc, &o);
    sc.set("q", "0.05,0.0707").unwrap();
    let e = periodic_orbit(&sc, &PeriodicOptions::new(Section::Steps(None)), None).unwrap_err();
    assert!(matches!(e, PeriodicError::Equilibrium { .. }), "{e}");
}

/// A nonholonomic orbit through impacts, closed after whole steps: the
/// rolling disk crossing its circular table along a diameter and back
/// (two impacts in a period of 8 s, the wall 4 m from the centre). The flow is not symplectic and
/// its tangent map singular: the momentum along the two constraint forms
/// is absorbed at the first step, two multipliers 0 (`constraint`); a
/// time-shift / energy pair near 1 remains (energy is conserved by ideal
/// constraints). A plain run from the fixed point comes back after N steps.
#[test]
fn a_nonholonomic_bounce_has_constraint_multipliers() {
    let mut sc = Scenario::defaults("disk-table").unwrap();
    sc.set("q", "0,0,0,0").unwrap();
    sc.set("v", "2,0,2,0").unwrap();
    sc.set("t_end", "12").unwrap();
    let o = periodic_orbit(&sc, &PeriodicOptions::new(Section::Steps(Some(800))), None).unwrap();
    assert!(o.residual <= 1e-12, "{:e}", o.residual);
    assert_eq!(o.impacts, 2);
    let constraint: Vec<_> = o
        .multipliers
        .iter()
        .filter(|m| m.kind == MultiplierKind::Constraint)
        .collect();
    assert_eq!(constraint.len(), 2, "{:?}", o.multipliers);
    assert!(constraint.iter().all(|m| m.modulus < 1e-10));
    let shift = o
        .multipliers
        .iter()
        .filter(|m| m.kind == MultiplierKind::TimeShiftEnergy)
        .count();
    assert_eq!(shift, 2);
    assert_plain_run_returns(&sc, &o);
}

#[test]
fn what_has_no_orbit_is_a_typed_error() {
    let mut sc = upright_ellipse();
    sc.set("t_end", "0.5").unwrap();
    let e = periodic_orbit(&sc, &section(), None).unwrap_err();
    assert!(matches!(e, PeriodicError::NoReturn { found: 0, .. }), "{e}");
    assert!(e.is_numerical());
    let e = diracvi_run::section_piece(&sc, "7").unwrap_err();
    assert!(matches!(e, PeriodicError::UnknownSection { .. }), "{e}");
    assert!(e.to_string().contains("0 (") && !e.is_numerical(), "{e}");
    let mut few = section();
    few.max_iterations = 1;
    let e = periodic_orbit(&upright_ellipse(), &few, None).unwrap_err();
    assert!(
        matches!(e, PeriodicError::NotConverged { iterations: 1, .. }),
        "{e}"
    );
    // The message says which return map did not close and how to ask for
    // another.
    assert!(
        e.to_string()
            .contains("post-impact state at impact 1 with piece 0")
            && e.to_string().contains("--section"),
        "{e}"
    );
    let mut grid = PeriodicOptions::new(Section::Steps(Some(100)));
    grid.max_iterations = 1;
    let pendulum = Scenario::defaults("pendulum").unwrap();
    let e = periodic_orbit(&pendulum, &grid, None).unwrap_err();
    assert!(
        matches!(e, PeriodicError::NotConverged { iterations: 1, .. }),
        "{e}"
    );
    assert!(
        e.to_string().contains("the state after 100 steps")
            && e.to_string().contains("--steps or --period")
            && !e.to_string().contains("--section"),
        "{e}"
    );
    // Its default scheme (forward map, retraction constraint) drifts in
    // energy: `diracvi periodic pendulum` stalls at a residual of 3.4e-3,
    // where the midpoint scheme closes in 4 iterations. The message says so.
    assert!(
        e.to_string()
            .contains("--discretization midpoint --constraint midpoint"),
        "{e}"
    );
    let mut midpoint = pendulum.clone();
    midpoint.discretization = Discretization::Midpoint;
    midpoint.constraint = ConstraintDiscretization::Midpoint;
    let o = periodic_orbit(&midpoint, &PeriodicOptions::new(Section::Steps(None)), None).unwrap();
    assert_eq!(o.steps, 2632);
    assert!(o.residual <= 1e-12, "{}", o.residual);
    let e = continue_orbit(&upright_ellipse(), "h", &[0.01], &section(), None).unwrap_err();
    assert!(matches!(e, PeriodicError::Unsupported { .. }), "{e}");
    let pendulum = Scenario::defaults("pendulum").unwrap();
    let e = periodic_orbit(&pendulum, &section(), None).unwrap_err();
    assert!(e.to_string().contains("constrained"), "{e}");
}
