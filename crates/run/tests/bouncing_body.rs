//! A convex rigid body bouncing on a plane (models/bouncing-ellipsoid.toml,
//! models/bouncing-cube.toml; docs/theory.md §16.6): the momenta along the
//! plane's symmetries are kept to round-off through every impact, the body
//! never enters the plane, |q| = 1, the energy stays bounded. The invariants
//! are computed here from the records' (q, p), independently of the files'
//! `[invariants]`.

use diracvi_run::{Order, RecordBuffer, RunOutcome, RunPlan, Scenario, execute};

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
    let h = if name.contains("ellipsoid") {
        (0.09 * en[0] * en[0] + 0.04 * en[1] * en[1] + 0.01 * en[2] * en[2]).sqrt()
    } else {
        0.09 * (en[0].abs() + en[1].abs() + en[2].abs()) + 0.01
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
    let c = flat("bouncing-ellipsoid.toml", 1500);
    assert!(c.energy < 1e-2, "energy {:e}", c.energy);
}

#[test]
fn cube_keeps_momenta_through_impacts() {
    let c = flat("bouncing-cube.toml", 4000);
    assert!(c.energy < 1e-2, "energy {:e}", c.energy);
}

#[test]
fn tilted_plane_keeps_p_y_and_slides_downhill() {
    let c = check("bouncing-ellipsoid.toml", 0.3, 800, Order::Two);
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
    let two = check("bouncing-ellipsoid.toml", 0.0, 600, Order::Two);
    let four = check("bouncing-ellipsoid.toml", 0.0, 600, Order::Four);
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
