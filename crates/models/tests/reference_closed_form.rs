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
