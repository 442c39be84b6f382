//! A convex rigid body bouncing on a plane (models/bouncing-body.toml, the ellipsoid,
//! models/bouncing-cube.toml; docs/theory.md §16.6): the momenta along the
//! plane's symmetries are kept to round-off through every impact, the body
//! never enters the plane, |q| = 1, the energy stays bounded. The invariants
//! are computed here from the records' (q, p), independently of the files'
//! `[invariants]`.

use diracvi_geometry::dynamic::{boundary_gradient_dyn, momentum_dyn};
use diracvi_models::{DynModelVisitor, ModelError};
use diracvi_run::{
    Direction, Discard, DynRunSetup, NamedDynSystem, Order, RecordBuffer, RunError, RunOutcome,
    RunPlan, Scenario, execute, start_from_momentum,
};
use nalgebra::DVector;

fn model(name: &str, beta: f64) -> Scenario {
    let path = format!("{}/../../models/{name}", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).unwrap();
    let src = src.replacen("beta = 0.0", &format!("beta = {beta:?}"), 1);
    Scenario::from_toml(&src).unwrap()
}

fn run(sc: &Scenario, steps: usize, order: Order) -> (RunOutcome, RecordBuffer) {
    let mut buf = RecordBuffer::new();
    let out = execute(sc, RunPlan::new(steps).order(order).every(1), &mut buf).unwrap();
    (out, buf)
}

/// The body axes in space (columns of R(q)), q = (w, x, y, z) unit.
fn axes(q: &[f64]) -> [[f64; 3]; 3] {
    let (w, x, y, z) = (q[0], q[1], q[2], q[3]);
    [
        [
            w * w + x * x - y * y - z * z,
            2.0 * (x * y + w * z),
            2.0 * (x * z - w * y),
        ],
        [
            2.0 * (x * y - w * z),
            w * w - x * x + y * y - z * z,
            2.0 * (y * z + w * x),
        ],
        [
            2.0 * (x * z + w * y),
            2.0 * (y * z - w * x),
            w * w - x * x - y * y + z * z,
        ],
    ]
}

/// Spatial angular momentum about the centre of mass along n: Π = ½ Im(q̄ ⊗ p_q)
/// (body), π = R(q) Π.
fn pi_n(q: &[f64], p: &[f64], n: [f64; 3]) -> f64 {
    let (w, x, y, z) = (q[0], q[1], q[2], q[3]);
    let (a, b, c, d) = (p[0], p[1], p[2], p[3]);
    // conj(q) ⊗ p, vector part
    let big_pi = [
        0.5 * (w * b - x * a - y * d + z * c),
        0.5 * (w * c - y * a + x * d - z * b),
        0.5 * (w * d - z * a - x * c + y * b),
    ];
    let e = axes(q);
    (0..3)
        .map(|i| big_pi[i] * (e[i][0] * n[0] + e[i][1] * n[1] + e[i][2] * n[2]))
        .sum()
}

/// The contact function of each file, recomputed.
fn gap(name: &str, q: &[f64], n: [f64; 3]) -> f64 {
    let e = axes(&q[3..7]);
    let en: Vec<f64> = e
        .iter()
        .map(|ei| ei[0] * n[0] + ei[1] * n[1] + ei[2] * n[2])
        .collect();
    let h = if name.contains("cube") {
        0.09 * (en[0].abs() + en[1].abs() + en[2].abs()) + 0.01
    } else {
        (0.09 * en[0] * en[0] + 0.04 * en[1] * en[1] + 0.01 * en[2] * en[2]).sqrt()
    };
    n[0] * q[0] + n[2] * q[2] - h
}

struct Checks {
    impacts: usize,
    px: f64,
    py: f64,
    pi: f64,
    energy: f64,
    min_gap: f64,
    norm: f64,
    x_drift: f64,
}

fn check(name: &str, beta: f64, steps: usize, order: Order) -> Checks {
    let sc = model(name, beta);
    let (out, buf) = run(&sc, steps, order);
    let n = [beta.sin(), 0.0, beta.cos()];
    let dim = buf.dimension;
    assert_eq!(dim, 7);
    let (q0, p0) = (&buf.q[..7], &buf.p[..7]);
    let pi0 = pi_n(&q0[3..], &p0[3..], n);
    let (mut px, mut py, mut pi, mut min_gap, mut norm) =
        (0.0_f64, 0.0_f64, 0.0_f64, f64::MAX, 0.0_f64);
    for i in 0..buf.len() {
        let (q, p) = (&buf.q[i * 7..i * 7 + 7], &buf.p[i * 7..i * 7 + 7]);
        px = px.max((p[0] - p0[0]).abs());
        py = py.max((p[1] - p0[1]).abs());
        pi = pi.max((pi_n(&q[3..], &p[3..], n) - pi0).abs() / pi0.abs().max(1e-300));
        min_gap = min_gap.min(gap(name, q, n));
        let nq = (q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]).sqrt();
        norm = norm.max((nq - 1.0).abs());
    }
    for imp in &out.impacts {
        min_gap = min_gap.min(gap(name, &imp.q, n));
    }
    let last = buf.len() - 1;
    let x_drift = buf.q[last * 7] - q0[0];
    Checks {
        impacts: out.impacts.len(),
        px: px / p0[0].abs(),
        py: py / p0[1].abs(),
        pi,
        energy: out.max_abs_energy_deviation / out.energy_scale,
        min_gap,
        norm,
        x_drift,
    }
}

fn flat(name: &str, steps: usize) -> Checks {
    let c = check(name, 0.0, steps, Order::Two);
    eprintln!(
        "{name}: {} impacts, p_X {:.1e}, p_Y {:.1e}, pi_z {:.1e}, energy {:.1e}, min g {:.1e}, |q|-1 {:.1e}",
        c.impacts, c.px, c.py, c.pi, c.energy, c.min_gap, c.norm
    );
    assert!(c.impacts >= 20, "{name}: {} impacts", c.impacts);
    assert!(
        c.px <= 1e-12 && c.py <= 1e-12,
        "{name}: p_X {:e} p_Y {:e}",
        c.px,
        c.py
    );
    assert!(c.pi <= 1e-12, "{name}: pi_z {:e}", c.pi);
    assert!(c.min_gap >= -1e-12, "{name}: min g {:e}", c.min_gap);
    assert!(c.norm <= 1e-13, "{name}: |q| - 1 = {:e}", c.norm);
    c
}

#[test]
fn ellipsoid_keeps_momenta_through_impacts() {
    let c = flat("bouncing-body.toml", 1500);
    assert!(c.energy < 1e-2, "energy {:e}", c.energy);
}

#[test]
fn cube_keeps_momenta_through_impacts() {
    let c = flat("bouncing-cube.toml", 4000);
    assert!(c.energy < 1e-2, "energy {:e}", c.energy);
}

#[test]
fn tilted_plane_keeps_p_y_and_slides_downhill() {
    let c = check("bouncing-body.toml", 0.3, 800, Order::Two);
    eprintln!(
        "tilted: {} impacts, p_Y {:.1e}, pi_n {:.1e}, X drift {:.3}",
        c.impacts, c.py, c.pi, c.x_drift
    );
    assert!(c.impacts >= 5);
    assert!(c.py <= 1e-12, "p_Y {:e}", c.py);
    assert!(c.pi <= 1e-12, "pi_n {:e}", c.pi);
    assert!(c.min_gap >= -1e-12);
    // the plane is Z = -X tan β: downhill is +X
    assert!(c.x_drift > 1.0, "X drift {}", c.x_drift);
}

#[test]
fn order_four_runs_through_impacts_with_smaller_energy_error() {
    let two = check("bouncing-body.toml", 0.0, 600, Order::Two);
    let four = check("bouncing-body.toml", 0.0, 600, Order::Four);
    eprintln!(
        "energy: order 2 {:.2e}, order 4 {:.2e} ({} / {} impacts)",
        two.energy, four.energy, two.impacts, four.impacts
    );
    assert!(four.impacts >= 5);
    assert!(
        four.energy < two.energy,
        "{:e} vs {:e}",
        four.energy,
        two.energy
    );
    assert!(four.py <= 1e-12 && four.pi <= 1e-12);
}

#[test]
fn tilted_plane_cube_keeps_p_y_and_pi_n() {
    let c = check("bouncing-cube.toml", 0.3, 800, Order::Two);
    eprintln!(
        "tilted cube: {} impacts, p_Y {:.1e}, pi_n {:.1e}, min g {:.1e}, |q|-1 {:.1e}, X drift {:.3}",
        c.impacts, c.py, c.pi, c.min_gap, c.norm, c.x_drift
    );
    assert!(c.impacts >= 5, "{} impacts", c.impacts);
    assert!(c.py <= 1e-12, "p_Y {:e}", c.py);
    assert!(c.pi <= 1e-12, "pi_n {:e}", c.pi);
    assert!(c.min_gap >= -1e-12, "min g {:e}", c.min_gap);
    assert!(c.norm <= 1e-13, "|q| - 1 = {:e}", c.norm);
    // downhill is +X
    assert!(c.x_drift > 0.5, "X drift {}", c.x_drift);
}

/// What a forward/backward round trip measured.
struct Trip {
    /// `max |q_back − q_0|`.
    miss_q: f64,
    /// `max |P(p_back − p_0)| / max |p_0|`, `P` removing the component
    /// along the constraint row `a = (0, 0, 0, q_0)`: the momenta
    /// (`p_X`, `p_Y`, `p_Z`, `Π = ½ Im(q̄ ⊗ p_q)`) are blind to it
    /// (docs/theory.md §16.6).
    miss_p: f64,
    /// `|(p_back − p_0) · a| / |a|`: the part along the row.
    along_row: f64,
    impacts: usize,
    /// `max |t_i^fwd − (T + t_{n−1−i}^back)|` over the impacts.
    worst_dt: f64,
    /// `|ν|` of the start from `(q_N, p_N)`: the constraint force by which
    /// the backward run's start differs from `p_N`.
    nu: f64,
}

/// `steps` steps forward from the file's initial data, then `steps` steps
/// backward in time from the final state `(q_N, p_N)` (started through
/// [`start_from_momentum`]), with the same order and step.
fn round_trip(name: &str, order: Order, steps: usize) -> Trip {
    let sc = model(name, 0.0);
    let plan = RunPlan::new(steps).order(order);
    let mut buf = RecordBuffer::new();
    let fwd = execute(&sc, plan.clone().every(steps), &mut buf).unwrap();
    let (q0, p0) = (buf.q[..7].to_vec(), buf.p[..7].to_vec());
    let start = start_from_momentum(&sc, &fwd.final_q, &fwd.final_p).unwrap();
    let back = execute(
        &start.scenario,
        plan.direction(Direction::Backward),
        &mut Discard,
    )
    .unwrap();
    assert!(
        (back.final_t + fwd.final_t).abs() <= 1e-9,
        "{}",
        back.final_t
    );
    let max_diff = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs()))
    };
    let p_scale = p0.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    assert_eq!(
        fwd.impacts.len(),
        back.impacts.len(),
        "{name} order {}: impacts forward and backward",
        order.get()
    );
    let n = fwd.impacts.len();
    let worst_dt = (0..n)
        .map(|i| (fwd.impacts[i].t - (fwd.final_t + back.impacts[n - 1 - i].t)).abs())
        .fold(0.0_f64, f64::max);
    // the difference of the momenta, split along the constraint row at q_0
    let dp: Vec<f64> = back.final_p.iter().zip(&p0).map(|(x, y)| x - y).collect();
    let a = [0.0, 0.0, 0.0, q0[3], q0[4], q0[5], q0[6]];
    let aa: f64 = a.iter().map(|x| x * x).sum();
    let along: f64 = dp.iter().zip(&a).map(|(x, y)| x * y).sum::<f64>() / aa;
    let projected: Vec<f64> = dp.iter().zip(&a).map(|(x, y)| x - along * y).collect();
    Trip {
        miss_q: max_diff(&back.final_q, &q0),
        miss_p: projected.iter().fold(0.0_f64, |m, x| m.max(x.abs())) / p_scale,
        along_row: along.abs() * aa.sqrt(),
        impacts: n,
        worst_dt,
        nu: start
            .multipliers
            .iter()
            .fold(0.0_f64, |m, x| m.max(x.abs())),
    }
}

fn check_round_trip(name: &str, order: Order, steps: usize, tol: f64) {
    let t = round_trip(name, order, steps);
    eprintln!(
        "{name} order {}: {steps} steps forward and back through {} impacts: miss q {:.1e}, p {:.1e} (relative, off the row; {:.1e} along it), impact times {:.1e}, |nu| {:.1e}",
        order.get(),
        t.impacts,
        t.miss_q,
        t.miss_p,
        t.along_row,
        t.worst_dt,
        t.nu
    );
    assert!(t.impacts >= 5, "{name}: {} impacts", t.impacts);
    assert!(t.miss_q <= tol, "{name}: q misses by {:e}", t.miss_q);
    assert!(t.miss_p <= tol, "{name}: p misses by {:e}", t.miss_p);
    assert!(t.worst_dt <= tol, "{name}: impact times {:e}", t.worst_dt);
}

#[test]
fn ellipsoid_round_trip_order_two() {
    check_round_trip("bouncing-body.toml", Order::Two, 600, 1e-8);
}

#[test]
fn cube_round_trip_order_two() {
    check_round_trip("bouncing-cube.toml", Order::Two, 1000, 1e-8);
}

#[test]
fn ellipsoid_round_trip_order_four() {
    check_round_trip("bouncing-body.toml", Order::Four, 600, 1e-8);
}

#[test]
fn cube_round_trip_order_four() {
    check_round_trip("bouncing-cube.toml", Order::Four, 1000, 1e-8);
}

/// The derivatives of the files' expressions the integrator uses, by AD,
/// against central differences (step 1e-6) at the given configurations:
/// the contact normal `∂g/∂q` that the impact law reflects the momentum
/// across, and the Legendre map `p = ∂L/∂v` at a velocity of each.
/// Returns the largest errors (gradient, momentum), relative to the
/// largest component, and how many points were compared.
struct Differences {
    points: Vec<Vec<f64>>,
}

impl DynModelVisitor for Differences {
    type Output = (f64, f64, usize);
    fn visit<Mo: NamedDynSystem>(self, model: &Mo, _setup: &DynRunSetup) -> (f64, f64, usize) {
        let d = 1e-6;
        let (mut worst_g, mut worst_p) = (0.0_f64, 0.0_f64);
        for (k, q) in self.points.iter().enumerate() {
            let (_, grad) =
                boundary_gradient_dyn(model, 0, &DVector::from_column_slice(q)).unwrap();
            let v: Vec<f64> = (0..7)
                .map(|i| (1.3 * i as f64 + 0.7 * k as f64).sin())
                .collect();
            let p = momentum_dyn(
                model,
                &DVector::from_column_slice(q),
                &DVector::from_column_slice(&v),
            );
            let shifted = |x: &[f64], i: usize, s: f64| {
                let mut y = x.to_vec();
                y[i] += s;
                y
            };
            let scale_g = grad.amax();
            let scale_p = p.amax();
            for i in 0..7 {
                let fd_g = (model.boundary(0, shifted(q, i, d).as_slice())
                    - model.boundary(0, shifted(q, i, -d).as_slice()))
                    / (2.0 * d);
                worst_g = worst_g.max((fd_g - grad[i]).abs() / scale_g);
                let fd_p = (model.lagrangian(q.as_slice(), shifted(&v, i, d).as_slice())
                    - model.lagrangian(q.as_slice(), shifted(&v, i, -d).as_slice()))
                    / (2.0 * d);
                worst_p = worst_p.max((fd_p - p[i]).abs() / scale_p);
            }
        }
        (worst_g, worst_p, self.points.len())
    }
}

#[test]
fn contact_normal_and_legendre_map_match_differences() {
    for name in ["bouncing-body.toml", "bouncing-cube.toml"] {
        for beta in [0.0, 0.3] {
            let sc = model(name, beta);
            let (out, buf) = run(&sc, 400, Order::Two);
            let n = [beta.sin(), 0.0, beta.cos()];
            // the impact points and every 20th recorded configuration, away
            // from the cube's kinks (a face perpendicular to the plane,
            // e_i . n = 0, where g has one-sided derivatives only)
            let points: Vec<Vec<f64>> = out
                .impacts
                .iter()
                .map(|imp| imp.q.clone())
                .chain(
                    (0..buf.len())
                        .step_by(20)
                        .map(|i| buf.q[i * 7..i * 7 + 7].to_vec()),
                )
                .filter(|q| {
                    axes(&q[3..7])
                        .iter()
                        .all(|e| (e[0] * n[0] + e[1] * n[1] + e[2] * n[2]).abs() > 1e-4)
                })
                .collect();
            let (g, p, count) = sc.visit_dyn(Differences { points }).unwrap();
            eprintln!(
                "{name} beta {beta}: {count} points ({} impacts), dg/dq {g:.1e}, dL/dv {p:.1e}",
                out.impacts.len()
            );
            assert!(count >= 15, "{count} points");
            assert!(g <= 1e-8, "{name}: contact normal off by {g:e}");
            assert!(p <= 1e-8, "{name}: Legendre map off by {p:e}");
        }
    }
}

/// The final state of `steps` steps of `sc` with its initial data moved to
/// `(q + e δq, v + e δv)`, the number of impacts, and the initial momentum
/// the run started from (`final_p` of a run of no steps).
fn moved(
    sc: &Scenario,
    steps: usize,
    dq: &[f64],
    dv: &[f64],
    e: f64,
) -> (Vec<f64>, usize, Vec<f64>) {
    let mut s = sc.clone();
    for (x, d) in s.initial.q.iter_mut().zip(dq) {
        *x += e * d;
    }
    for (x, d) in s.initial.v.iter_mut().zip(dv) {
        *x += e * d;
    }
    let p0 = execute(&s, RunPlan::new(0), &mut Discard).unwrap().final_p;
    let o = execute(&s, RunPlan::new(steps), &mut Discard).unwrap();
    ([o.final_q, o.final_p].concat(), o.impacts.len(), p0)
}

/// `--jacobian` and `--sensitivity` of the bouncing body, whose Lagrangian
/// is degenerate (`∂²L/∂v²` annihilates the quaternion direction; the
/// constraint row `q · q̇ = 0` makes its step Jacobian regular: 0
/// degenerate steps, docs/theory.md §12.8), through three impacts: `∂x_N/∂(q₀, p₀) (δq₀, δp₀)` along changes
/// of the initial `(q, v)` that keep `|q| = 1` and `q · v = 0` to first
/// order (the centre of mass, its velocity, a rotation of the body with
/// `δv = −(δq · v) q`), `δp₀` from central differences of the start, and
/// `∂x_N/∂g`, against central differences of whole runs, relative 1e-6.
/// Measured: 5.5e-8 and 1.7e-9.
#[test]
fn jacobian_and_sensitivity_through_impacts_match_differences_of_runs() {
    let mut sc = model("bouncing-cube.toml", 0.0);
    sc.initial.q[2] = 0.3;
    let steps = 300;
    let o = execute(
        &sc,
        RunPlan::new(steps).jacobian(true).sensitivity(["g"]),
        &mut Discard,
    )
    .unwrap();
    assert!(o.impacts.len() >= 2, "{} impacts", o.impacts.len());
    eprintln!(
        "bouncing cube: {} impacts, {} degenerate steps",
        o.impacts.len(),
        o.degenerate_steps
    );
    let j = o.jacobian.as_ref().unwrap();
    let (q, v) = (sc.initial.q.clone(), sc.initial.v.clone());
    // a rotation about the body x axis: δq = ½ q ⊗ (0, 1, 0, 0)
    let (w, x, y, z) = (q[3], q[4], q[5], q[6]);
    let dquat = [-0.5 * x, 0.5 * w, 0.5 * z, -0.5 * y];
    let along: f64 = (0..4).map(|i| dquat[i] * v[3 + i]).sum();
    let mut rot_q = [0.0; 7];
    let mut rot_v = [0.0; 7];
    for i in 0..4 {
        rot_q[3 + i] = dquat[i];
        rot_v[3 + i] = -along * q[3 + i];
    }
    let unit = |i: usize| {
        let mut e = [0.0; 7];
        e[i] = 1.0;
        e
    };
    let zero = [0.0; 7];
    let directions = [
        (unit(0), zero),
        (unit(2), zero),
        (zero, unit(1)),
        (zero, unit(2)),
        (rot_q, rot_v),
    ];
    let delta = 1e-5;
    let mut worst: f64 = 0.0;
    for (dq, dv) in &directions {
        let (plus, n_plus, p_plus) = moved(&sc, steps, dq, dv, delta);
        let (minus, n_minus, p_minus) = moved(&sc, steps, dq, dv, -delta);
        assert_eq!((n_plus, n_minus), (o.impacts.len(), o.impacts.len()));
        let dx0: Vec<f64> = dq
            .iter()
            .copied()
            .chain(
                p_plus
                    .iter()
                    .zip(&p_minus)
                    .map(|(a, b)| (a - b) / (2.0 * delta)),
            )
            .collect();
        let exact = j * DVector::from_column_slice(&dx0);
        let scale = exact.amax().max(1.0);
        for i in 0..14 {
            let fd = (plus[i] - minus[i]) / (2.0 * delta);
            worst = worst.max((fd - exact[i]).abs() / scale);
        }
    }
    eprintln!("bouncing cube Jacobian vs differences: {worst:.1e}");
    assert!(worst <= 1e-6, "{worst:e}");
    let (_, exact) = &o.sensitivity[0];
    let at = |e: f64| {
        let mut s = sc.clone();
        s.set("g", &format!("{:.17e}", 9.8 + e)).unwrap();
        moved(&s, steps, &zero, &zero, 0.0).0
    };
    let (plus, minus) = (at(delta), at(-delta));
    let scale = exact.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
    let mut worst_g: f64 = 0.0;
    for i in 0..14 {
        let fd = (plus[i] - minus[i]) / (2.0 * delta);
        worst_g = worst_g.max((fd - exact[i]).abs() / scale);
    }
    eprintln!("bouncing cube ∂x_N/∂g vs differences: {worst_g:.1e}");
    assert!(worst_g <= 1e-6, "{worst_g:e}");
}

/// `start_from_momentum` refuses a state of the wrong length and a
/// non-finite momentum with typed errors, and returns to the file's own
/// initial velocity from its initial momentum (`ν = 0`: that `p₀` is in the
/// image of the constrained Legendre map).
#[test]
fn start_from_momentum_inverts_the_start_and_refuses_bad_states() {
    let sc = model("bouncing-cube.toml", 0.0);
    let mut buf = RecordBuffer::new();
    execute(&sc, RunPlan::new(1).every(1), &mut buf).unwrap();
    let start = start_from_momentum(&sc, &buf.q[..7], &buf.p[..7]).unwrap();
    let worst = start
        .v
        .iter()
        .zip(&sc.initial.v)
        .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
    eprintln!("v from p0: {worst:.1e}, nu {:?}", start.multipliers);
    assert!(worst <= 1e-13, "{worst:e}");
    assert!(
        start.multipliers[0].abs() <= 1e-13,
        "{:?}",
        start.multipliers
    );
    let err = start_from_momentum(&sc, &buf.q[..3], &buf.p[..7]).unwrap_err();
    assert!(
        matches!(
            err,
            RunError::Model(ModelError::WrongLength {
                what: "q",
                expected: 7,
                got: 3
            })
        ),
        "{err:?}"
    );
    let mut p = buf.p[..7].to_vec();
    p[2] = f64::NAN;
    let err = start_from_momentum(&sc, &buf.q[..7], &p).unwrap_err();
    assert!(matches!(err, RunError::InitialState { .. }), "{err:?}");
}
