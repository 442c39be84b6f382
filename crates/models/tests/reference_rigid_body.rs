//! Checks of the bouncing ellipse / star reference
//! (`diracvi_models::reference::rigid_body`).

use diracvi_models::reference::rigid_body::star_piece_signs;
use diracvi_models::reference::{RigidBodyReference, Shape};

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Exact flight, written out independently of the reference.
fn fly(g: f64, q: [f64; 3], v: [f64; 3], tau: f64) -> [f64; 3] {
    [
        q[0] + v[0] * tau,
        q[1] + v[1] * tau,
        q[2] + v[2] * tau - 0.5 * g * tau * tau,
    ]
}

/// Brute force: first time in `(0, t_max]` at which some piece becomes
/// negative, by sampling at `dt` and bisection; `None` if none.
fn brute_first_impact(
    body: &RigidBodyReference,
    q: [f64; 3],
    v: [f64; 3],
    t_max: f64,
    dt: f64,
) -> Option<f64> {
    let min_gap = |tau: f64| {
        let qt = fly(body.g, q, v, tau);
        (0..body.pieces())
            .map(|j| body.gap(j, qt))
            .fold(f64::INFINITY, f64::min)
    };
    // Skip the departure from the previous impact (gap ≈ 0, increasing).
    let mut a = 1e-9;
    while a < t_max {
        let b = (a + dt).min(t_max);
        if min_gap(b) < 0.0 {
            let (mut lo, mut hi) = (a, b);
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                if mid <= lo || mid >= hi {
                    break;
                }
                if min_gap(mid) < 0.0 {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            return Some(lo);
        }
        a = b;
    }
    None
}

fn check_body(body: RigidBodyReference, t_end: f64, n_brute: usize) {
    let traj = body.trajectory(t_end);
    let impacts = traj.impacts();
    assert!(impacts.len() >= 3, "too few impacts: {}", impacts.len());
    let e0 = body.energy(body.q0, body.v0);
    let (mut ts, mut qs, mut vs) = (0.0, body.q0, body.v0);
    for (i, imp) in impacts.iter().enumerate() {
        // Impact point on the boundary piece, all pieces admissible.
        assert!(body.gap(imp.piece, imp.q).abs() < 1e-12, "impact {i}: gap");
        for j in 0..body.pieces() {
            assert!(
                body.gap(j, imp.q) > -1e-12,
                "impact {i}: piece {j} violated"
            );
        }
        // The lowest point is the one hit: y = φ(θ).
        assert!((imp.q[2] - body.phi(imp.q[0])).abs() < 1e-12);
        // Elastic: energy equal before/after and along the flight.
        let eb = body.energy(imp.q, imp.v_before);
        let ea = body.energy(imp.q, imp.v_after);
        assert!(
            (eb - ea).abs() < 1e-12 * e0.abs(),
            "impact {i}: energy jump {}",
            ea - eb
        );
        assert!(
            (eb - e0).abs() < 1e-12 * e0.abs(),
            "impact {i}: energy drift"
        );
        // Normal velocity reversed, approaching before.
        let dg = body.gap_gradient(imp.piece, imp.q);
        assert!(dot(dg, imp.v_before) < 0.0);
        assert!((dot(dg, imp.v_after) + dot(dg, imp.v_before)).abs() < 1e-12);
        // Momentum jump along dg: tangential momentum p·w unchanged for w ⊥ dg.
        let m = [body.inertia, body.m, body.m];
        let dp: Vec<f64> = (0..3)
            .map(|k| m[k] * (imp.v_after[k] - imp.v_before[k]))
            .collect();
        assert!((dp[0] * dg[2] - dp[2] * dg[0]).abs() < 1e-12 && dp[1].abs() < 1e-15);
        // The flight to this impact matches an independent flight + brute search.
        let qi = fly(body.g, qs, vs, imp.t - ts);
        for (a, b) in qi.iter().zip(imp.q) {
            assert!((a - b).abs() < 1e-12);
        }
        if i < n_brute {
            let tb = brute_first_impact(&body, qs, vs, imp.t - ts + 0.01, 1e-4)
                .expect("brute force finds the impact");
            assert!(
                (ts + tb - imp.t).abs() < 1e-12,
                "impact {i}: {} vs {}",
                ts + tb,
                imp.t
            );
        }
        // Dense output is right-continuous.
        let (qd, vd) = traj.state_at(imp.t);
        for k in 0..3 {
            assert!((qd[k] - imp.q[k]).abs() < 1e-12);
            assert!((vd[k] - imp.v_after[k]).abs() < 1e-12);
        }
        (ts, qs, vs) = (imp.t, imp.q, imp.v_after);
    }
    // No impact missed after the last one either.
    assert!(brute_first_impact(&body, qs, vs, t_end - ts, 1e-4).is_none());
    // state_at (recomputing) agrees with the stored trajectory.
    let t = 0.5 * (impacts[1].t + impacts[2].t);
    let (q1, v1) = body.state_at(t);
    let (q2, v2) = traj.state_at(t);
    assert_eq!(q1.map(f64::to_bits), q2.map(f64::to_bits));
    assert_eq!(v1.map(f64::to_bits), v2.map(f64::to_bits));
}

#[test]
fn ellipse_impacts() {
    check_body(RigidBodyReference::ellipse(), 3.0, 5);
}

#[test]
fn star_impacts() {
    check_body(RigidBodyReference::star(), 3.0, 5);
}

#[test]
fn star_pieces_cover_phi() {
    let body = RigidBodyReference::star();
    let Shape::Star { l } = body.shape else {
        unreachable!()
    };
    for i in 0..1000 {
        let th = -7.0 + 14.0 * i as f64 / 1000.0;
        let max = (0..4)
            .map(|j| {
                let (s1, s2) = star_piece_signs(j);
                l * (s1 * th.sin() + s2 * th.cos())
            })
            .fold(f64::NEG_INFINITY, f64::max);
        assert!((max - body.phi(th)).abs() < 1e-15);
    }
}
