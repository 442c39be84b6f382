//! Retraction axioms, round trips and domain errors (issue #2, item 1).
//!
//! * `R_q(0) = q` exactly (to 1e-15 relative);
//! * `dR_q(0) = id` by forward-mode AD (`v` seeded as `DualSVec64`, Jacobian
//!   read at `v = 0`), to 1e-15; on the sphere `dR_q(0) = I − q qᵀ`, the
//!   identity on `T_q S² = q^⊥`;
//! * `R_q(R_q^{-1}(q1)) = q1` and `R_q^{-1}(R_q(v)) = v` on random points, to
//!   1e-12 relative to the size of the data;
//! * the documented domain errors.

mod common;

use approx::assert_relative_eq;
use common::{rand_tangent, rand_unit, rand_vec};
use diracvi_geometry::{
    Angles, Euclidean, GeometryError, Retraction, SMatrix, SVector, Se2, Sphere,
};
use nalgebra::{Const, U1};
use num_dual::{Dual2SVec64, DualSVec64};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::f64::consts::PI;

const SAMPLES: usize = 200;
/// Round-trip tolerance, relative to `max(1, |q|, |q1|, |v|)`.
const ROUND_TRIP_TOL: f64 = 1e-12;

/// `dR_q(v)` at `v` by forward-mode AD.
fn jacobian_at<R: Retraction<N>, const N: usize>(
    r: &R,
    q: &SVector<f64, N>,
    v: &SVector<f64, N>,
) -> SMatrix<f64, N, N> {
    let qd: SVector<DualSVec64<N>, N> = q.map(DualSVec64::from_re);
    let vd: SVector<DualSVec64<N>, N> =
        SVector::from_fn(|i, _| DualSVec64::from_re(v[i]).derivative(i));
    let out = r.retract(&qd, &vd);
    SMatrix::from_fn(|i, j| out[i].eps.unwrap_generic(Const::<N>, U1)[j])
}

/// `d(R_q^{-1})(q1)` by forward-mode AD (derivative in `q1`).
fn inverse_jacobian_at<R: Retraction<N>, const N: usize>(
    r: &R,
    q: &SVector<f64, N>,
    q1: &SVector<f64, N>,
) -> SMatrix<f64, N, N> {
    let qd: SVector<DualSVec64<N>, N> = q.map(DualSVec64::from_re);
    let q1d: SVector<DualSVec64<N>, N> =
        SVector::from_fn(|i, _| DualSVec64::from_re(q1[i]).derivative(i));
    let out = r.inverse(&qd, &q1d).expect("inside the domain");
    SMatrix::from_fn(|i, j| out[i].eps.unwrap_generic(Const::<N>, U1)[j])
}

fn scale<const N: usize>(xs: &[&SVector<f64, N>]) -> f64 {
    xs.iter().map(|x| x.amax()).fold(1.0, f64::max)
}

#[track_caller]
fn assert_close<const N: usize>(what: &str, got: &SVector<f64, N>, want: &SVector<f64, N>, s: f64) {
    let err = (got - want).amax();
    assert!(
        err <= ROUND_TRIP_TOL * s,
        "{what}: |got − want|∞ = {err:e} > {ROUND_TRIP_TOL:e}·{s}\n got  {got}\n want {want}"
    );
}

/// `R_q(0) = q` and `dR_q(0) = id` (and `d(R_q^{-1})(q) = id`).
fn check_axioms_flat<R: Retraction<N>, const N: usize>(r: &R, q: &SVector<f64, N>) {
    let zero = SVector::<f64, N>::zeros();
    assert_relative_eq!(r.retract(q, &zero), *q, max_relative = 1e-15);
    let id = SMatrix::<f64, N, N>::identity();
    let jac = jacobian_at(r, q, &zero);
    assert_relative_eq!(jac, id, epsilon = 1e-15);
    let inv = r.inverse(q, q).expect("R_q^{-1}(q) is defined");
    assert_relative_eq!(inv, zero, epsilon = 1e-15);
    assert_relative_eq!(inverse_jacobian_at(r, q, q), id, epsilon = 1e-14);
}

#[test]
fn euclidean_axioms_and_round_trips() {
    let mut rng = SmallRng::seed_from_u64(0xE0C1);
    for _ in 0..SAMPLES {
        let q2 = rand_vec::<2>(&mut rng, 10.0);
        check_axioms_flat(&Euclidean, &q2);
        let q3 = rand_vec::<3>(&mut rng, 10.0);
        check_axioms_flat(&Euclidean, &q3);

        let (q1, v) = (rand_vec::<3>(&mut rng, 10.0), rand_vec::<3>(&mut rng, 5.0));
        let d = Euclidean.inverse(&q3, &q1).unwrap();
        assert_close(
            "euclidean R(R⁻¹(q1))",
            &Euclidean.retract(&q3, &d),
            &q1,
            scale(&[&q3, &q1]),
        );
        let back = Euclidean.inverse(&q3, &Euclidean.retract(&q3, &v)).unwrap();
        assert_close("euclidean R⁻¹(R(v))", &back, &v, scale(&[&q3, &v]));
        // the Jacobian is the identity everywhere, not only at 0
        assert_relative_eq!(
            jacobian_at(&Euclidean, &q3, &v),
            SMatrix::identity(),
            epsilon = 1e-15
        );
    }
}

#[test]
fn angles_axioms_round_trips_and_wrapping() {
    let mut rng = SmallRng::seed_from_u64(0xA27);
    for _ in 0..SAMPLES {
        let q = rand_vec::<2>(&mut rng, 10.0);
        check_axioms_flat(&Angles, &q);
        let q3 = rand_vec::<3>(&mut rng, 10.0);
        check_axioms_flat(&Angles, &q3);

        // displacement d in (−π, π), shifted by whole turns k
        let d = rand_vec::<2>(&mut rng, 3.0);
        let turns = SVector::<f64, 2>::from_fn(|_, _| f64::from(rng.random_range(-3_i32..=3)));
        let q1 = q + d + turns * (2.0 * PI);
        let inv = Angles.inverse(&q, &q1).unwrap();
        assert_close("angles shortest angle", &inv, &d, scale(&[&q, &q1]));
        // R_q(R_q^{-1}(q1)) = q1 modulo whole turns
        let r = Angles.retract(&q, &inv);
        assert_close(
            "angles R(R⁻¹(q1))",
            &r,
            &(q1 - turns * (2.0 * PI)),
            scale(&[&q, &q1]),
        );
        // R_q^{-1}(R_q(v)) = v for |v_i| < π
        let back = Angles.inverse(&q, &Angles.retract(&q, &d)).unwrap();
        assert_close("angles R⁻¹(R(v))", &back, &d, scale(&[&q, &d]));
    }
}

#[test]
fn se2_axioms_and_round_trips() {
    let mut rng = SmallRng::seed_from_u64(0x5E2);
    for k in 0..SAMPLES {
        let q = rand_vec::<3>(&mut rng, 5.0);
        check_axioms_flat(&Se2, &q);
        // rotation angles spread over (−3, 3) and, every fourth sample, inside
        // the series branch |ω| < 1e-4 of (sin ω/ω, (1 − cos ω)/ω)
        let mut v = rand_vec::<3>(&mut rng, 3.0);
        if k % 4 == 0 {
            v[0] *= 3e-5;
        }
        let r = Se2.retract(&q, &v);
        let back = Se2.inverse(&q, &r).unwrap();
        assert_close("se2 R⁻¹(R(v))", &back, &v, scale(&[&q, &v]));

        let mut q1 = rand_vec::<3>(&mut rng, 5.0);
        q1[0] = q[0] + rng.random_range(-3.0..3.0) * if k % 4 == 1 { 3e-5 } else { 1.0 };
        let d = Se2.inverse(&q, &q1).unwrap();
        assert_close(
            "se2 R(R⁻¹(q1))",
            &Se2.retract(&q, &d),
            &q1,
            scale(&[&q, &q1]),
        );
    }
}

/// SE(2) in coordinates is the group exponential: a pure rotation moves along
/// a circular arc; one hand value.
#[test]
fn se2_exponential_by_hand() {
    // from the identity, ξ = (ω, u): exp(ξ) = (ω, V(ω) u), V = [[s/ω, −(1−c)/ω], [(1−c)/ω, s/ω]]
    let w: f64 = 1.2;
    let (s, c) = w.sin_cos();
    let r = Se2.retract(
        &SVector::from([0.0, 0.0, 0.0]),
        &SVector::from([w, 2.0, 0.0]),
    );
    let want = SVector::from([w, 2.0 * s / w, 2.0 * (1.0 - c) / w]);
    assert_relative_eq!(r, want, max_relative = 1e-15);
    // left-invariance: at q = (θ, x, y) the displacement is rotated by θ and shifted
    let q = SVector::from([0.7, -1.0, 3.0]);
    let (s7, c7) = 0.7_f64.sin_cos();
    let v = SVector::from([w, c7 * 2.0, s7 * 2.0]); // Rot(θ) u
    let r = Se2.retract(&q, &v);
    let want = SVector::from([
        0.7 + w,
        -1.0 + c7 * (2.0 * s / w) - s7 * (2.0 * (1.0 - c) / w),
        3.0 + s7 * (2.0 * s / w) + c7 * (2.0 * (1.0 - c) / w),
    ]);
    assert_relative_eq!(r, want, max_relative = 1e-14);
}

/// Hessians `∂²R_q(v)_k/∂v∂v` of every output component by second-order AD.
fn hessians_at<R: Retraction<N>, const N: usize>(
    r: &R,
    q: &SVector<f64, N>,
    v: &SVector<f64, N>,
) -> Vec<SMatrix<f64, N, N>> {
    let qd: SVector<Dual2SVec64<N>, N> = q.map(Dual2SVec64::from_re);
    let vd: SVector<Dual2SVec64<N>, N> =
        SVector::from_fn(|i, _| Dual2SVec64::from_re(v[i]).derivative(i));
    let out = r.retract(&qd, &vd);
    out.iter()
        .map(|o| o.v2.unwrap_generic(Const::<N>, Const::<N>))
        .collect()
}

/// `R_q(v)` uses `(sin ω/ω, (1 − cos ω)/ω)`, `ω = v_θ`, by a Taylor series for
/// small `|ω|` and in closed form above; value, AD Jacobian and AD Hessian
/// must join across the switch (and be smooth where the switch used to be,
/// `|ω| = 1e-4`: the closed form's Jacobian was off by 3e-9 there).
#[test]
fn se2_series_branch_is_continuous() {
    let q = SVector::from([0.3, 1.0, -2.0]);
    for w0 in [0.25, -0.25, 1e-4, -1e-4, 1e-2] {
        let below = SVector::from([w0 * (1.0 - 1e-15), 0.8, -0.4]);
        let above = SVector::from([w0 * (1.0 + 1e-15), 0.8, -0.4]);
        // true differences are O(1e-15 · |v|); both sides must be accurate to ~1e-15
        let (rb, ra) = (Se2.retract(&q, &below), Se2.retract(&q, &above));
        assert!(
            (rb - ra).amax() < 1e-14,
            "ω = {w0}: value jump {:e}",
            (rb - ra).amax()
        );
        let (jb, ja) = (jacobian_at(&Se2, &q, &below), jacobian_at(&Se2, &q, &above));
        assert!(
            (jb - ja).amax() < 1e-14,
            "ω = {w0}: Jacobian jump {:e}",
            (jb - ja).amax()
        );
        let (hb, ha) = (hessians_at(&Se2, &q, &below), hessians_at(&Se2, &q, &above));
        for (k, (b, a)) in hb.iter().zip(&ha).enumerate() {
            assert!(
                (b - a).amax() < 1e-13,
                "ω = {w0}: Hessian[{k}] jump {:e}",
                (b - a).amax()
            );
        }
    }
}

#[test]
fn sphere_axioms_and_round_trips() {
    let mut rng = SmallRng::seed_from_u64(0x5A7);
    for _ in 0..SAMPLES {
        let q = rand_unit(&mut rng);
        let zero = SVector::<f64, 3>::zeros();
        assert_relative_eq!(Sphere.retract(&q, &zero), q, max_relative = 1e-15);
        // dR_q(0) = (I − q qᵀ)/|q| = I − q qᵀ: the identity on T_q S² = q^⊥
        let proj = SMatrix::<f64, 3, 3>::identity() - q * q.transpose();
        let jac = jacobian_at(&Sphere, &q, &zero);
        assert_relative_eq!(jac, proj, epsilon = 1e-15);
        let v = rand_tangent(&mut rng, &q, 0.01, 3.0);
        assert_relative_eq!(jac * v, v, epsilon = 2e-15 * v.norm());
        // d(R_q^{-1})(q) = I − q qᵀ as well
        assert_relative_eq!(inverse_jacobian_at(&Sphere, &q, &q), proj, epsilon = 1e-14);

        // round trips
        let r = Sphere.retract(&q, &v);
        assert_relative_eq!(r.norm(), 1.0, epsilon = 1e-15);
        let back = Sphere.inverse(&q, &r).unwrap();
        assert_close("sphere R⁻¹(R(v))", &back, &v, scale(&[&q, &v]));
        // q1 in the open hemisphere of q
        let q1 = loop {
            let p = rand_unit(&mut rng);
            if q.dot(&p) > 0.05 {
                break p;
            }
        };
        let d = Sphere.inverse(&q, &q1).unwrap();
        assert!(
            d.dot(&q).abs() < 1e-14 * d.norm().max(1.0),
            "R⁻¹ is tangent"
        );
        assert_close("sphere R(R⁻¹(q1))", &Sphere.retract(&q, &d), &q1, 1.0);
    }
}

#[track_caller]
fn assert_outside<T: std::fmt::Debug>(r: Result<T, GeometryError>, name: &str) {
    match r {
        Err(GeometryError::OutsideRetractionDomain { retraction, reason }) => {
            assert_eq!(retraction, name);
            assert!(!reason.is_empty());
        }
        other => panic!("expected OutsideRetractionDomain from {name}, got {other:?}"),
    }
}

#[test]
fn domain_errors() {
    // sphere: ⟨q, q1⟩ ≤ 0
    let q = SVector::from([0.0, 0.6, 0.8]);
    assert_outside(Sphere.inverse(&q, &(-q)), "sphere");
    assert_outside(
        Sphere.inverse(&q, &SVector::from([1.0, 0.0, 0.0])),
        "sphere",
    ); // ⟨q,q1⟩ = 0
    assert_outside(
        Sphere.inverse(&q, &SVector::from([0.0, 0.8, -0.6])),
        "sphere",
    ); // = 0 exactly
    assert_outside(
        Sphere.inverse(&q, &SVector::from([0.6, -0.8, 0.0])),
        "sphere",
    ); // < 0
    assert!(
        Sphere
            .inverse(&q, &SVector::from([0.0, 0.8, -0.59]))
            .is_ok()
    );

    // SE(2): |θ1 − θ| ≥ 2π
    let q = SVector::from([0.4, 1.0, 2.0]);
    for w in [2.0 * PI, -2.0 * PI, 7.0, -9.5, 4.0 * PI] {
        let q1 = SVector::from([0.4 + w, 3.0, -1.0]);
        assert_outside(Se2.inverse(&q, &q1), "se2");
    }
    assert!(
        Se2.inverse(&q, &SVector::from([0.4 + 6.0, 3.0, -1.0]))
            .is_ok()
    );

    // angles: a component difference of π (mod 2π) is the cut locus
    let q = SVector::from([0.0, 1.3]);
    for (d0, d1) in [
        (PI, 0.0),
        (-PI, 0.5),
        (0.1, PI),
        (3.0 * PI, 0.0),
        (0.2, -3.0 * PI),
    ] {
        let q1 = SVector::from([q[0] + d0, q[1] + d1]);
        assert_outside(Angles.inverse(&q, &q1), "angles");
    }
    // just inside the cut locus is fine, and wraps to the short side
    let q1 = SVector::from([PI - 1e-9, 1.3 + PI + 1e-9]);
    let d = Angles.inverse(&q, &q1).unwrap();
    assert_relative_eq!(
        d,
        SVector::from([PI - 1e-9, -PI + 1e-9]),
        max_relative = 1e-14
    );

    // non-finite input is outside every chart that checks it
    let q = SVector::from([0.0, 0.0]);
    assert_outside(
        Angles.inverse(&q, &SVector::from([f64::NAN, 0.0])),
        "angles",
    );
    assert_outside(
        Se2.inverse(
            &SVector::<f64, 3>::zeros(),
            &SVector::from([f64::INFINITY, 0.0, 0.0]),
        ),
        "se2",
    );
    assert_outside(
        Sphere.inverse(
            &SVector::from([0.0, 0.0, 1.0]),
            &SVector::from([0.0, 0.0, f64::NAN]),
        ),
        "sphere",
    );
}

#[test]
fn names() {
    assert_eq!(Retraction::<2>::name(&Euclidean), "euclidean");
    assert_eq!(Retraction::<2>::name(&Angles), "angles");
    assert_eq!(Se2.name(), "se2");
    assert_eq!(Sphere.name(), "sphere");
}
