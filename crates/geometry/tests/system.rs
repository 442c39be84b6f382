//! `System` defaults (issue #2, item 7) and the error helpers (item 8).
//!
//! * `System::momentum` (AD of `∂L/∂v`) and `System::energy`
//!   (`⟨∂L/∂v, v⟩ − L`) against hand formulas, 1e-14 relative (energies
//!   relative to `|T| + |V|`, since `T + V` may cancel);
//! * the discrete energy `E_d = −D3 L_d` equals `E` at `Ψ_d(q0, q1)` for the
//!   forward and midpoint maps (`D3 [h L(q, Δ/h)] = L − ⟨∂L/∂v, v⟩`), 1e-12;
//! * trait defaults: no boundary, no Hamiltonian, no model constraint;
//! * `ensure_step` / `ensure_finite`.

use crate::common;

use approx::assert_relative_eq;
use common::*;
use diracvi_geometry::{
    AdScalar, DiscreteLagrangian, Discretization, DiscretizationMap, GeometryError, SMatrix,
    SVector, System, ensure_finite, ensure_step,
};
use rand::SeedableRng;
use rand::rngs::SmallRng;

const TOL: f64 = 1e-14;

/// Energies are sums `T + V` that may cancel: compare relative to `|T| + |V|`.
#[track_caller]
fn assert_energy(what: &str, got: f64, want: f64, kinetic: f64, potential: f64) {
    let scale = kinetic.abs() + potential.abs();
    assert!(
        (got - want).abs() <= TOL * scale,
        "{what}: {got:e} vs {want:e} (scale {scale:e})"
    );
}

#[test]
fn pendulum_momentum_and_energy() {
    let sys = NonholonomicPendulum::default();
    let ml2 = sys.m * sys.l * sys.l;
    let mut rng = SmallRng::seed_from_u64(0x5A);
    for _ in 0..200 {
        let (q, v) = (rand_vec::<2>(&mut rng, 4.0), rand_vec::<2>(&mut rng, 4.0));
        let s2 = q[0].sin().powi(2);
        let p = SVector::from([ml2 * v[0], ml2 * s2 * v[1]]);
        let (t, u) = (
            0.5 * ml2 * (v[0] * v[0] + s2 * v[1] * v[1]),
            sys.m * sys.g * sys.l * q[0].cos(),
        );
        assert_rel("pendulum p", &sys.momentum(&q, &v), &p, TOL);
        assert_energy("pendulum E", sys.energy(&q, &v), t + u, t, u);
    }
}

#[test]
fn particle_ellipse_momentum_energy_hamiltonian() {
    let particle = BouncingParticle::default();
    let ellipse = BouncingEllipse::default();
    let mut rng = SmallRng::seed_from_u64(0x5B);
    for _ in 0..200 {
        let (q, v) = (rand_vec::<2>(&mut rng, 4.0), rand_vec::<2>(&mut rng, 4.0));
        let (m, g) = (particle.m, particle.g);
        let p = v * m;
        let (t, u) = (0.5 * m * v.norm_squared(), m * g * q[1]);
        assert_rel("particle p", &particle.momentum(&q, &v), &p, TOL);
        assert_energy("particle E", particle.energy(&q, &v), t + u, t, u);
        // H(q, p(q, v)) = E(q, v) for the hyperregular particle
        let hamiltonian = particle.hamiltonian(&q, &p).expect("particle has H");
        assert_energy("particle H", hamiltonian, t + u, t, u);

        let (q, v) = (rand_vec::<3>(&mut rng, 4.0), rand_vec::<3>(&mut rng, 4.0));
        let (m, i) = (ellipse.m, ellipse.inertia);
        let p = SVector::from([i * v[0], m * v[1], m * v[2]]);
        let t = 0.5 * (i * v[0] * v[0] + m * (v[1] * v[1] + v[2] * v[2]));
        let u = m * ellipse.g * q[2];
        assert_rel("ellipse p", &ellipse.momentum(&q, &v), &p, TOL);
        assert_energy("ellipse E", ellipse.energy(&q, &v), t + u, t, u);
    }
}

#[test]
fn lc_and_non_quadratic_momentum_energy() {
    let lc = LcCircuit::default();
    let mut rng = SmallRng::seed_from_u64(0x5C);
    for _ in 0..200 {
        let (q, v) = (rand_vec::<4>(&mut rng, 4.0), rand_vec::<4>(&mut rng, 4.0));
        // degenerate: only the inductor carries momentum
        let p = SVector::from([lc.inductance * v[0], 0.0, 0.0, 0.0]);
        let t = 0.5 * lc.inductance * v[0] * v[0];
        let u = q[1] * q[1] / (2.0 * lc.c[0])
            + q[2] * q[2] / (2.0 * lc.c[1])
            + q[3] * q[3] / (2.0 * lc.c[2]);
        assert_rel("lc p", &lc.momentum(&q, &v), &p, TOL);
        assert_energy("lc E", lc.energy(&q, &v), t + u, t, u);

        // not quadratic in v, with a gyroscopic term that drops out of E
        let (q, v) = (rand_vec::<2>(&mut rng, 2.0), rand_vec::<2>(&mut rng, 3.0));
        let (p, e) = NonQuadratic::momentum_energy(&q, &v);
        assert_rel("non-quadratic p", &NonQuadratic.momentum(&q, &v), &p, TOL);
        let u = q[0].powi(4);
        assert_energy("non-quadratic E", NonQuadratic.energy(&q, &v), e, e - u, u);
    }
}

/// `E_d(q0, q1, h) = −D3 L_d = E(Ψ_d^h(q0, q1))` for the forward and
/// midpoint maps.
fn discrete_energy_is_energy<Sy, const N: usize, const M: usize>(label: &str, sys: &Sy, seed: u64)
where
    Sy: System<N, M>,
{
    let mut rng = SmallRng::seed_from_u64(seed);
    for map in Discretization::ALL {
        let ld = DiscreteLagrangian::<Sy, Discretization, N, M>::new(sys, &map);
        for _ in 0..50 {
            let h = rand_step(&mut rng, 1e-3, 0.1);
            let q0 = rand_vec::<N>(&mut rng, 2.0);
            let q1 = q0 + rand_vec::<N>(&mut rng, 3.0) * h;
            let (q, v) = map.psi(&q0, &q1, h).unwrap();
            let e_d = ld.energy(&q0, &q1, h).unwrap();
            assert_rel_scalar(
                &format!("{label} [{map}] E_d = E∘Ψ_d"),
                e_d,
                sys.energy(&q, &v),
                1e-12,
            );
        }
    }
}

#[test]
fn discrete_energy_matches_continuous_energy() {
    discrete_energy_is_energy::<_, 2, 0>("particle", &BouncingParticle::default(), 1);
    discrete_energy_is_energy::<_, 2, 1>("pendulum", &NonholonomicPendulum::default(), 2);
    discrete_energy_is_energy::<_, 3, 0>("ellipse", &BouncingEllipse::default(), 3);
    discrete_energy_is_energy::<_, 4, 2>("lc", &LcCircuit::default(), 4);
    discrete_energy_is_energy::<_, 2, 1>("non-quadratic", &NonQuadratic, 5);
}

#[test]
fn trait_defaults() {
    let lc = LcCircuit::default();
    let q = SVector::from([0.1, 0.2, 0.3, 0.4]);
    assert_eq!(lc.boundary_count(), 0);
    assert_relative_eq!(lc.boundary(0, &q), 1.0); // default: always admissible
    assert_eq!(lc.hamiltonian(&q, &q), None);
    assert_eq!(lc.discrete_constraint(&q, &q, 0.1), None);
    let sys = NonholonomicPendulum::default();
    let q = SVector::from([0.1, 0.2]);
    assert_eq!(sys.hamiltonian(&q, &q), None);
    assert_eq!(sys.discrete_constraint(&q, &q, 0.1), None);
    assert!(NonQuadratic.discrete_constraint(&q, &q, 0.1).is_some());
}

#[test]
fn ensure_step_errors() {
    for h in [1e-300, 1e-3, 0.5, 1e10] {
        assert_eq!(ensure_step(h), Ok(()));
    }
    for h in [
        0.0,
        -0.0,
        -1e-3,
        f64::NEG_INFINITY,
        f64::INFINITY,
        -f64::MIN_POSITIVE,
    ] {
        match ensure_step(h) {
            Err(GeometryError::NonPositiveStep { h: got }) => {
                assert_eq!(got.to_bits(), h.to_bits())
            }
            other => panic!("ensure_step({h}) = {other:?}"),
        }
    }
    match ensure_step(f64::NAN) {
        Err(GeometryError::NonPositiveStep { h }) => assert!(h.is_nan()),
        other => panic!("ensure_step(NaN) = {other:?}"),
    }
    let msg = ensure_step(-0.25).unwrap_err().to_string();
    assert!(msg.contains("-0.25"), "{msg}");
}

#[test]
fn ensure_finite_errors() {
    assert_eq!(ensure_finite("empty", &[]), Ok(()));
    assert_eq!(
        ensure_finite("q", &[1.0, -2.0, f64::MAX, f64::MIN_POSITIVE]),
        Ok(())
    );
    match ensure_finite("q", &[1.0, f64::NAN, f64::INFINITY]) {
        Err(GeometryError::NonFinite { what, index, value }) => {
            assert_eq!((what, index), ("q", 1));
            assert!(value.is_nan());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        ensure_finite("p", &[0.0, 1.0, f64::NEG_INFINITY]),
        Err(GeometryError::NonFinite {
            what: "p",
            index: 2,
            value: f64::NEG_INFINITY
        })
    );
    let msg = ensure_finite("momentum", &[0.0, f64::INFINITY])
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("momentum") && msg.contains('1') && msg.contains("inf"),
        "{msg}"
    );
}

/// `L = ½ v² + ½` at `v = 1` has energy `⟨∂L/∂v, v⟩ − L = 1 − 1 = 0`; its
/// energy scale `|⟨∂L/∂v, v⟩| + |L| = 2` keeps relative energy errors
/// meaningful.
#[test]
fn energy_scale_is_positive_where_the_energy_vanishes() {
    struct Shifted;
    impl System<1, 0> for Shifted {
        fn lagrangian<S: AdScalar>(&self, _q: &SVector<S, 1>, v: &SVector<S, 1>) -> S {
            v[0] * v[0] * 0.5 + 0.5
        }
        fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 1>) -> SMatrix<S, 0, 1> {
            SMatrix::zeros()
        }
    }
    let (q, v) = (SVector::from([3.0]), SVector::from([1.0]));
    approx::assert_abs_diff_eq!(Shifted.energy(&q, &v), 0.0, epsilon = 1e-15);
    approx::assert_abs_diff_eq!(Shifted.energy_scale(&q, &v), 2.0, epsilon = 1e-15);
}
