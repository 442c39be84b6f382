//! Checks of the closed-form references: bouncing particle and LC circuit.

use diracvi_models::reference::{BouncingParticle, LcCircuit};

#[test]
fn particle_impacts_and_energy() {
    let p = BouncingParticle::default();
    let times = p.impact_times(10.0);
    let t1 = (2.0 * 2.0 / 9.8f64).sqrt();
    let period = 2.0 * (2.0 * 9.8 * 2.0f64).sqrt() / 9.8;
    assert_eq!(times.len(), ((10.0 - t1) / period).floor() as usize + 1);
    let e0 = p.specific_energy(p.q0, p.v0);
    for (k, &t) in times.iter().enumerate() {
        assert!((t - (t1 + k as f64 * period)).abs() < 1e-13);
        let (q, v) = p.state_at(t);
        assert!(q[1].abs() < 1e-13, "on the floor at impact {k}");
        assert!(v[1] > 0.0, "post-impact velocity points up");
        // Just before: same speed, pointing down.
        let (qb, vb) = p.state_at(t - 1e-9);
        assert!(qb[1] > 0.0 && vb[1] < 0.0);
        assert!((vb[1] + v[1]).abs() < 1e-7);
    }
    for i in 0..=1000 {
        let t = 10.0 * i as f64 / 1000.0;
        let (q, v) = p.state_at(t);
        assert!(q[1] >= -1e-13);
        assert!((q[0] - t).abs() < 1e-13 && (v[0] - 1.0).abs() < 1e-15);
        assert!((p.specific_energy(q, v) - e0).abs() < 1e-12 * e0);
    }
}

#[test]
fn particle_launch_from_floor_and_downward() {
    // Starting on the floor going up: first impact after 2 v/g.
    let up = BouncingParticle {
        q0: [0.0, 0.0],
        v0: [0.0, 3.0],
        ..Default::default()
    };
    assert!((up.first_impact_time().unwrap() - 6.0 / 9.8).abs() < 1e-15);
    // Going down from height 1 with speed 2: y = 1 − 2t − 4.9t².
    let down = BouncingParticle {
        q0: [0.0, 1.0],
        v0: [0.0, -2.0],
        ..Default::default()
    };
    let t1 = down.first_impact_time().unwrap();
    assert!((1.0 - 2.0 * t1 - 4.9 * t1 * t1).abs() < 1e-15);
    // Resting on the floor: no impacts.
    let rest = BouncingParticle {
        q0: [0.0, 0.0],
        v0: [1.0, 0.0],
        ..Default::default()
    };
    assert!(rest.impact_times(5.0).is_empty());
    let (q, v) = rest.state_at(2.0);
    assert!((q[0] - 2.0).abs() < 1e-15 && q[1].abs() < 1e-15 && v[1].abs() < 1e-15);
}

#[test]
fn lc_solution_satisfies_circuit_equations() {
    let c = LcCircuit::default();
    assert!((c.omega() - 1.0).abs() < 1e-15);
    let w = c.omega();
    for i in 0..=200 {
        let t = 10.0 * std::f64::consts::PI * i as f64 / 200.0;
        let q = c.charges_at(t);
        let f = c.currents_at(t);
        // Kirchhoff current law (integrated, q(0) = 0) and its derivative.
        assert!((q[0] - q[2]).abs() < 1e-13 && (q[1] + q[3] - q[2]).abs() < 1e-13);
        assert!((f[0] - f[2]).abs() < 1e-13 && (f[1] + f[3] - f[2]).abs() < 1e-13);
        // Equal voltage on the parallel capacitors (μ₂).
        assert!((q[1] / c.c1 - q[3] / c.c3).abs() < 1e-13);
        // ṗ_ℓ = −μ₁ = −(q^{c2}/c₂ + q^{c1}/c₁), with q̈^ℓ = −ω² q^ℓ.
        let pdot = -c.inductance * w * w * q[0];
        assert!((pdot + q[2] / c.c2 + q[1] / c.c1).abs() < 1e-12);
        assert!((c.energy(q, f) - c.exact_energy()).abs() < 1e-12 * c.exact_energy());
        assert!((c.momenta_at(t)[0] - c.inductance * f[0]).abs() < 1e-15);
    }
    assert!((c.charges_at(0.5)[0] - 10.0 * 0.5f64.sin()).abs() < 1e-15);
    // Non-default capacitances still give ω² = (c₁+c₂+c₃)/(c₂(c₁+c₃)ℓ).
    let c2 = LcCircuit {
        inductance: 2.0,
        c1: 0.5,
        c2: 1.5,
        c3: 4.0,
        i0: 1.0,
    };
    let q = c2.charges_at(0.7);
    let w2 = c2.omega() * c2.omega();
    assert!((c2.inductance * w2 * q[0] - (q[2] / c2.c2 + q[1] / c2.c1)).abs() < 1e-13);
}

// ---------------------------------------------------------------------------
// Rigid bodies in space: Jacobi elliptic functions, the Euler top, the
// Lagrange top's nutation period (reference::rigid_body_3d)
// ---------------------------------------------------------------------------

use diracvi_models::reference::{EulerTop, elliptic_k, jacobi_sn_cn_dn, lagrange_top_nutation};

/// `sn, cn, dn` against values of SciPy's `ellipj` (Cephes, 17 digits
/// printed), the limits `m = 0, 1`, the quarter period and the identities.
#[test]
fn jacobi_elliptic_functions_known_values() {
    let table = [
        (
            0.5,
            0.5,
            [0.47075047365565736, 0.8822663948904402, 0.9429724257773857],
        ),
        (
            2.3,
            0.9,
            [0.996045443097323, 0.08884523220217022, 0.32726766989201883],
        ),
        (
            1.0,
            0.3,
            [0.8187707145344889, 0.5741206467465549, 0.8938033089590823],
        ),
        (
            -0.7,
            0.999,
            [-0.6044077895237213, 0.796675105650383, 0.7969043435313211],
        ),
        (
            10.0,
            1.0 / 3.0,
            [0.3893970441153297, -0.9210699984443332, 0.9744006605830824],
        ),
    ];
    for (u, m, want) in table {
        let (sn, cn, dn) = jacobi_sn_cn_dn(u, m);
        for (got, want) in [sn, cn, dn].into_iter().zip(want) {
            assert!((got - want).abs() < 3e-15, "({u}, {m}): {got} vs {want}");
        }
    }
    // K(m): K(1/2) = 1.854074677301372 (A&S table 17.1), SciPy's ellipk
    assert!((elliptic_k(0.5) - 1.854_074_677_301_371_9).abs() < 1e-15);
    assert!((elliptic_k(1.0 / 3.0) - 1.733916885257935).abs() < 1e-14);
    assert!((elliptic_k(0.9) - 2.5780921133481733).abs() < 1e-14);
    assert!((elliptic_k(0.0) - std::f64::consts::FRAC_PI_2).abs() < 1e-16);
    for m in [0.0, 1e-12, 0.1, 0.5, 0.9, 0.999_999] {
        let k = elliptic_k(m);
        // sn(K) = 1, cn(K) = 0, dn(K) = √(1 − m); sn(K/2) = 1/√(1 + √(1 − m))
        let (sn, cn, dn) = jacobi_sn_cn_dn(k, m);
        assert!((sn - 1.0).abs() < 1e-15 && cn.abs() < 1e-7 * (1.0 + k));
        assert!((dn - (1.0 - m).sqrt()).abs() < 1e-12, "m = {m}");
        let (sh, _, _) = jacobi_sn_cn_dn(0.5 * k, m);
        assert!((sh - 1.0 / (1.0 + (1.0 - m).sqrt()).sqrt()).abs() < 1e-15);
        for u in [-7.3, -1.0, 0.0, 0.3, 2.0, 25.0] {
            let (sn, cn, dn) = jacobi_sn_cn_dn(u, m);
            assert!((sn * sn + cn * cn - 1.0).abs() < 1e-15);
            assert!((dn * dn + m * sn * sn - 1.0).abs() < 1e-15);
            // sn' = cn dn, by central differences
            let e = 1e-5;
            let d = (jacobi_sn_cn_dn(u + e, m).0 - jacobi_sn_cn_dn(u - e, m).0) / (2.0 * e);
            assert!((d - cn * dn).abs() < 1e-9, "sn' at ({u}, {m})");
            // sn(u + 2K) = −sn(u)
            assert!((jacobi_sn_cn_dn(u + 2.0 * k, m).0 + sn).abs() < 1e-12 * (1.0 + u.abs()));
        }
    }
    // the limits
    let (sn, cn, dn) = jacobi_sn_cn_dn(0.8, 0.0);
    assert!(
        (sn - 0.8f64.sin()).abs() < 1e-16
            && (cn - 0.8f64.cos()).abs() < 1e-16
            && (dn - 1.0).abs() < 1e-16
    );
    let (sn, cn, _) = jacobi_sn_cn_dn(0.8, 1.0);
    assert!((sn - 0.8f64.tanh()).abs() < 1e-16 && (cn - 1.0 / 0.8f64.cosh()).abs() < 1e-16);
    assert!(jacobi_sn_cn_dn(0.8, 1.5).0.is_nan() && jacobi_sn_cn_dn(f64::NAN, 0.5).0.is_nan());
}

/// The Euler top satisfies Euler's equations (central differences of the
/// closed form), keeps `|Π|²` and `2E`, is periodic with `4K/λ`.
#[test]
fn euler_top_solves_eulers_equations() {
    let inertia = [1.0, 2.0, 3.0];
    for omega0 in [[1.0, 0.0, 1.0], [-0.7, 0.0, 1.3], [0.5, 0.0, -0.9]] {
        let top = EulerTop::new(inertia, omega0).expect("M² > 2 E I₂");
        let w0 = top.omega(0.0);
        for k in 0..3 {
            assert!((w0[k] - omega0[k]).abs() < 1e-15);
        }
        let measures = |w: [f64; 3]| {
            let m2: f64 = (0..3).map(|k| (inertia[k] * w[k]).powi(2)).sum();
            let e2: f64 = (0..3).map(|k| inertia[k] * w[k] * w[k]).sum();
            (m2, e2)
        };
        let (m20, e20) = measures(w0);
        for j in 0..200 {
            let t = 0.05 * j as f64;
            let w = top.omega(t);
            let (m2, e2) = measures(w);
            assert!((m2 - m20).abs() < 1e-13 * m20 && (e2 - e20).abs() < 1e-13 * e20);
            let e = 1e-5;
            let (wp, wm) = (top.omega(t + e), top.omega(t - e));
            let dw: Vec<f64> = (0..3).map(|k| (wp[k] - wm[k]) / (2.0 * e)).collect();
            let [i1, i2, i3] = inertia;
            let residual = [
                i1 * dw[0] - (i2 - i3) * w[1] * w[2],
                i2 * dw[1] - (i3 - i1) * w[2] * w[0],
                i3 * dw[2] - (i1 - i2) * w[0] * w[1],
            ];
            for r in residual {
                assert!(r.abs() < 1e-8, "Euler's equations at t = {t}: {residual:?}");
            }
        }
        let (t, w) = (top.period(), top.omega(top.period()));
        for k in 0..3 {
            assert!((w[k] - w0[k]).abs() < 1e-13, "period {t}");
        }
    }
    // the other side of the separatrix, and unsorted moments, are refused
    assert!(EulerTop::new(inertia, [1.0, 0.0, 0.3]).is_none());
    assert!(EulerTop::new([2.0, 1.0, 3.0], [1.0, 0.0, 1.0]).is_none());
}

/// The nutation period of the Lagrange top against a direct quadrature of
/// `T = 2 ∫ du/√f(u)` (substitution `u = u₁ + (u₂ − u₁) sin²s`, which
/// removes the square-root singularities; composite midpoint rule).
#[test]
fn lagrange_top_nutation_period_by_quadrature() {
    let (a, c, mgl) = (1.0, 0.5, 0.98);
    // released at the tilt θ₀ with θ̇ = 0, precession rate φ̇₀, spin ω₃
    for (theta0, phidot, omega3) in [(0.5, 0.0, 6.0), (1.0, 0.4, 3.0), (0.3, -0.5, 10.0)] {
        let (s0, c0) = f64::sin_cos(theta0);
        let p_psi = c * omega3;
        let p_phi = a * phidot * s0 * s0 + p_psi * c0;
        let energy = 0.5 * a * phidot * phidot * s0 * s0 + p_psi * p_psi / (2.0 * c) + mgl * c0;
        let (t, u1, u2) = lagrange_top_nutation(a, c, mgl, energy, p_phi, p_psi).unwrap();
        // the release point is a turning point
        assert!(
            (u2 - c0).abs() < 1e-9 || (u1 - c0).abs() < 1e-9,
            "{u1} {u2} {c0}"
        );
        let alpha = (2.0 * energy - p_psi * p_psi / c) / a;
        let (beta, pa, pb) = (2.0 * mgl / a, p_phi / a, p_psi / a);
        let f = |u: f64| (1.0 - u * u) * (alpha - beta * u) - (pa - pb * u).powi(2);
        assert!(f(u1).abs() < 1e-12 && f(u2).abs() < 1e-12 && u1 < u2);
        let n = 20_000;
        let mut sum = 0.0;
        for k in 0..n {
            let s = std::f64::consts::FRAC_PI_2 * (k as f64 + 0.5) / n as f64;
            let u = u1 + (u2 - u1) * s.sin().powi(2);
            // du = 2(u₂ − u₁) sin s cos s ds, f = β (u − u₁)(u₂ − u)(u₃ − u)
            let g = f(u) / ((u - u1) * (u2 - u));
            sum += 2.0 / g.sqrt();
        }
        let quad = 2.0 * sum * std::f64::consts::FRAC_PI_2 / n as f64;
        assert!((quad - t).abs() < 1e-10 * t, "T = {t}, quadrature {quad}");
    }
    assert!(lagrange_top_nutation(a, c, 0.0, 1.5, 0.3, 1.0).is_none());
}
