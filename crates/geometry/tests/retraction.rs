//! Retraction axioms, round trips and domain errors (issue #2, item 1).
//!
//! * `R_q(0) = q` exactly (to 1e-15 relative);
//! * `dR_q(0) = id` by forward-mode AD (`v` seeded as `DualSVec64`, Jacobian
//!   read at `v = 0`), to 1e-15; on the sphere `dR_q(0) = I − q qᵀ`, the
//!   identity on `T_q S² = q^⊥`;
//! * `R_q(R_q^{-1}(q1)) = q1` and `R_q^{-1}(R_q(v)) = v` on random points, to
//!   1e-12 relative to the size of the data;
//! * the documented domain errors;
//! * SO(3) by unit quaternions ([`So3Cayley`], [`So3Exp`]) and SE(3) as
//!   quaternion × R³ ([`Se3`]): the same axioms on the tangent space
//!   `T_q S³ = q^⊥` (AD against central finite differences), round trips,
//!   closed forms (the exponential turns at constant body rate, Cayley is
//!   the normalising map on `S³`), the series branches joined in value,
//!   Jacobian and Hessian, the domain `Re(q̄ ⊗ q1) > 0`.

use crate::common;

use approx::assert_relative_eq;
use common::{rand_tangent, rand_unit, rand_vec};
use diracvi_geometry::lie::{
    body_angular_velocity, quat_conj, quat_from_axis_angle, quat_mul, velocity_from_body,
};
use diracvi_geometry::{
    Angles, Euclidean, GeometryError, Retraction, SMatrix, SVector, Se2, Se3, So3Cayley, So3Exp,
    Sphere,
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

// ---------------------------------------------------------------------------
// SO(3) and SE(3)
// ---------------------------------------------------------------------------

/// A uniformly distributed unit quaternion.
fn rand_quat(rng: &mut SmallRng) -> SVector<f64, 4> {
    loop {
        let x = rand_vec::<4>(rng, 1.0);
        let n = x.norm();
        if n > 0.1 && n <= 1.0 {
            return x / n;
        }
    }
}

/// The chart velocity at `q` of a random body angular velocity of norm
/// in `[lo, hi]` (tangent: `⟨q, v⟩ = 0`).
fn rand_quat_tangent(rng: &mut SmallRng, q: &SVector<f64, 4>, lo: f64, hi: f64) -> SVector<f64, 4> {
    let w = rand_vec::<3>(rng, 1.0);
    let w = w * (rng.random_range(lo..=hi) / w.norm().max(1e-3));
    velocity_from_body(q, &(w * 2.0))
}

/// `dR_q(v)` by central finite differences (step `1e-6`).
fn jacobian_fd<R: Retraction<N>, const N: usize>(
    r: &R,
    q: &SVector<f64, N>,
    v: &SVector<f64, N>,
) -> SMatrix<f64, N, N> {
    let e = 1e-6;
    SMatrix::from_fn(|i, j| {
        let mut vp = *v;
        let mut vm = *v;
        vp[j] += e;
        vm[j] -= e;
        (r.retract(q, &vp)[i] - r.retract(q, &vm)[i]) / (2.0 * e)
    })
}

/// The projection `I − q qᵀ` onto `T_q S³`.
fn tangent_projection(q: &SVector<f64, 4>) -> SMatrix<f64, 4, 4> {
    SMatrix::<f64, 4, 4>::identity() - q * q.transpose()
}

/// Axioms and round trips of a quaternion retraction on random data.
fn check_quaternion_retraction<R: Retraction<4>>(r: &R, seed: u64, max_rate: f64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    for _ in 0..SAMPLES {
        let q = rand_quat(&mut rng);
        let zero = SVector::<f64, 4>::zeros();
        assert_relative_eq!(r.retract(&q, &zero), q, epsilon = 1e-15);
        // dR_q(0) = I − q qᵀ: the identity on T_q S³ (AD), and the same by
        // finite differences
        let proj = tangent_projection(&q);
        let jac = jacobian_at(r, &q, &zero);
        assert_relative_eq!(jac, proj, epsilon = 2e-15);
        assert_relative_eq!(jacobian_fd(r, &q, &zero), proj, epsilon = 1e-9);
        let v = rand_quat_tangent(&mut rng, &q, 0.01, max_rate);
        assert!(q.dot(&v).abs() < 2e-15 * v.norm().max(1.0));
        assert_relative_eq!(jac * v, v, epsilon = 4e-15 * v.norm().max(1.0));
        // d(R_q^{-1})(q) = I − q qᵀ
        assert_relative_eq!(inverse_jacobian_at(r, &q, &q), proj, epsilon = 2e-15);
        // AD against finite differences away from 0
        let (ad, fd) = (jacobian_at(r, &q, &v), jacobian_fd(r, &q, &v));
        assert!(
            (ad - fd).amax() < 1e-8,
            "{}: AD vs FD Jacobian {:e}",
            r.name(),
            (ad - fd).amax()
        );

        // on the group, and back
        let q1 = r.retract(&q, &v);
        assert!(
            (q1.norm() - 1.0).abs() < 4e-16,
            "{}: |R_q(v)| − 1",
            r.name()
        );
        let back = r.inverse(&q, &q1).unwrap();
        assert_close("quaternion R⁻¹(R(v))", &back, &v, scale(&[&q, &v]));
        // any q1 within a rotation by less than π of q (Re(q̄ q1) > 0)
        let mut q1 = rand_quat(&mut rng);
        if q.dot(&q1) < 0.0 {
            q1 = -q1;
        }
        if q.dot(&q1) > 0.05 {
            let d = r.inverse(&q, &q1).unwrap();
            assert!(
                d.dot(&q).abs() < 1e-14 * d.norm().max(1.0),
                "R⁻¹ is tangent"
            );
            assert_close("quaternion R(R⁻¹(q1))", &r.retract(&q, &d), &q1, 1.0);
        }
    }
}

#[test]
fn so3_axioms_and_round_trips() {
    // Cayley: any body increment; the exponential: rotation angles below π
    // (|ξ| < π/2) for R⁻¹(R(v)) = v
    check_quaternion_retraction(&So3Cayley, 0x50C, 20.0);
    check_quaternion_retraction(&So3Exp, 0x50E, 1.5);
}

/// The closed forms: the exponential is the rotation at constant body rate,
/// left-invariant; Cayley is `(q + v)/|q + v|` on `S³` with rotation angle
/// `2 atan(|ω|/2)`.
#[test]
fn so3_closed_forms() {
    let mut rng = SmallRng::seed_from_u64(0xC105);
    for _ in 0..SAMPLES {
        let q = rand_quat(&mut rng);
        let axis = rand_vec::<3>(&mut rng, 1.0);
        let angle = rng.random_range(-3.0..3.0);
        let n = axis / axis.norm();
        let v = velocity_from_body(&q, &(n * angle));
        // exp: q ⊗ (rotation by `angle` about the body axis n)
        let want = quat_mul(&q, &quat_from_axis_angle(&n, angle));
        assert_relative_eq!(So3Exp.retract(&q, &v), want, epsilon = 2e-15);
        // Cayley: the normalising map, rotation by 2 atan(angle/2)
        let w = q + v;
        assert_relative_eq!(So3Cayley.retract(&q, &v), w / w.norm(), epsilon = 2e-15);
        let want = quat_mul(&q, &quat_from_axis_angle(&n, 2.0 * (0.5 * angle).atan()));
        assert_relative_eq!(So3Cayley.retract(&q, &v), want, epsilon = 2e-15);
        // the inverse gives the body angular velocity back
        let q1 = So3Exp.retract(&q, &v);
        let omega = body_angular_velocity(&q, &So3Exp.inverse(&q, &q1).unwrap());
        assert_relative_eq!(omega, n * angle, epsilon = 1e-14);
        // left invariance: R_{g q}(g v) = g R_q(v)
        let g = rand_quat(&mut rng);
        for (a, b) in [
            (
                So3Exp.retract(&quat_mul(&g, &q), &quat_mul(&g, &v)),
                quat_mul(&g, &So3Exp.retract(&q, &v)),
            ),
            (
                So3Cayley.retract(&quat_mul(&g, &q), &quat_mul(&g, &v)),
                quat_mul(&g, &So3Cayley.retract(&q, &v)),
            ),
        ] {
            assert_relative_eq!(a, b, epsilon = 4e-15);
        }
        // the inverse of the rotation back is the opposite body increment
        let back = So3Cayley.inverse(&So3Cayley.retract(&q, &v), &q).unwrap();
        let q1 = So3Cayley.retract(&q, &v);
        assert_relative_eq!(
            body_angular_velocity(&q1, &back),
            -body_angular_velocity(&q, &So3Cayley.inverse(&q, &q1).unwrap()),
            epsilon = 1e-13
        );
        assert!((quat_mul(&quat_conj(&q), &q)[0] - 1.0).abs() < 1e-15);
    }
}

/// `exp` and `log` switch to Taylor series below `|ξ|² = 1/16`; value, AD
/// Jacobian and AD Hessian must join across the switch and be smooth at
/// small rates.
#[test]
fn so3_exp_series_branch_is_continuous() {
    let q = quat_from_axis_angle(&SVector::from([1.0, -2.0, 0.5]), 0.7);
    let dir = SVector::from([0.3, -0.5, 0.8]);
    let dir = dir / dir.norm();
    for rate in [0.25, 1e-3, 0.1] {
        let at = |s: f64| velocity_from_body(&q, &(dir * (2.0 * rate * s)));
        let (below, above) = (at(1.0 - 1e-15), at(1.0 + 1e-15));
        let (rb, ra) = (So3Exp.retract(&q, &below), So3Exp.retract(&q, &above));
        assert!((rb - ra).amax() < 1e-14, "rate {rate}: value jump");
        let (jb, ja) = (
            jacobian_at(&So3Exp, &q, &below),
            jacobian_at(&So3Exp, &q, &above),
        );
        assert!(
            (jb - ja).amax() < 1e-14,
            "rate {rate}: Jacobian jump {:e}",
            (jb - ja).amax()
        );
        let (hb, ha) = (
            hessians_at(&So3Exp, &q, &below),
            hessians_at(&So3Exp, &q, &above),
        );
        for (k, (b, a)) in hb.iter().zip(&ha).enumerate() {
            assert!(
                (b - a).amax() < 1e-13,
                "rate {rate}: Hessian[{k}] jump {:e}",
                (b - a).amax()
            );
        }
        // the logarithm across its switch (|Im u|/Re u = 1/4 at rate
        // atan(1/4)): inverse Jacobians on both sides agree
        let rb1 = So3Exp.retract(&q, &at(1.0 - 1e-15));
        let ra1 = So3Exp.retract(&q, &at(1.0 + 1e-15));
        let (ib, ia) = (
            inverse_jacobian_at(&So3Exp, &q, &rb1),
            inverse_jacobian_at(&So3Exp, &q, &ra1),
        );
        assert!(
            (ib - ia).amax() < 1e-13,
            "rate {rate}: log Jacobian jump {:e}",
            (ib - ia).amax()
        );
    }
    // the log's switch itself: |Im u|/Re u = 1/4, i.e. |ξ| = atan(1/4)
    let rate = 0.25f64.atan();
    let at = |s: f64| So3Exp.retract(&q, &velocity_from_body(&q, &(dir * (2.0 * rate * s))));
    let (ib, ia) = (
        inverse_jacobian_at(&So3Exp, &q, &at(1.0 - 1e-14)),
        inverse_jacobian_at(&So3Exp, &q, &at(1.0 + 1e-14)),
    );
    assert!(
        (ib - ia).amax() < 1e-13,
        "log switch: Jacobian jump {:e}",
        (ib - ia).amax()
    );
}

#[test]
fn se3_axioms_and_round_trips() {
    let mut rng = SmallRng::seed_from_u64(0x5E3);
    for r in [Se3(So3Cayley).name(), Se3(So3Exp).name()] {
        assert!(r.starts_with("se3-"));
    }
    for k in 0..SAMPLES {
        let q = rand_quat(&mut rng);
        let x = rand_vec::<3>(&mut rng, 5.0);
        let p = SVector::from([q[0], q[1], q[2], q[3], x[0], x[1], x[2]]);
        let vq = rand_quat_tangent(&mut rng, &q, 0.01, 1.5);
        let vx = rand_vec::<3>(&mut rng, 3.0);
        let v = SVector::from([vq[0], vq[1], vq[2], vq[3], vx[0], vx[1], vx[2]]);
        let zero = SVector::<f64, 7>::zeros();
        let mut proj = SMatrix::<f64, 7, 7>::identity();
        proj.fixed_view_mut::<4, 4>(0, 0)
            .copy_from(&tangent_projection(&q));
        if k % 2 == 0 {
            let r = Se3(So3Cayley);
            assert_relative_eq!(r.retract(&p, &zero), p, epsilon = 1e-15);
            assert_relative_eq!(jacobian_at(&r, &p, &zero), proj, epsilon = 2e-15);
            assert_relative_eq!(jacobian_fd(&r, &p, &zero), proj, epsilon = 1e-9);
            let p1 = r.retract(&p, &v);
            assert_close(
                "se3 R⁻¹(R(v))",
                &r.inverse(&p, &p1).unwrap(),
                &v,
                scale(&[&p, &v]),
            );
            // the position moves by v_x, the orientation as So3Cayley
            assert_relative_eq!(p1.fixed_rows::<3>(4).into_owned(), x + vx, epsilon = 1e-14);
            assert_relative_eq!(
                p1.fixed_rows::<4>(0).into_owned(),
                So3Cayley.retract(&q, &vq),
                epsilon = 1e-15
            );
        } else {
            let r = Se3(So3Exp);
            assert_relative_eq!(r.retract(&p, &zero), p, epsilon = 1e-15);
            assert_relative_eq!(jacobian_at(&r, &p, &zero), proj, epsilon = 2e-15);
            assert_relative_eq!(jacobian_fd(&r, &p, &zero), proj, epsilon = 1e-9);
            let p1 = r.retract(&p, &v);
            assert_close(
                "se3 R⁻¹(R(v))",
                &r.inverse(&p, &p1).unwrap(),
                &v,
                scale(&[&p, &v]),
            );
            assert_relative_eq!(
                p1.fixed_rows::<4>(0).into_owned(),
                So3Exp.retract(&q, &vq),
                epsilon = 1e-15
            );
        }
    }
}

#[test]
fn so3_domain_errors() {
    let q = quat_from_axis_angle(&SVector::from([0.0, 1.0, 1.0]), 0.4);
    // the same orientation with the other sign (rotation by 2π in S³), a
    // rotation by exactly π, by more than π, and NaN
    let half_turn = quat_mul(&q, &SVector::from([0.0, 1.0, 0.0, 0.0]));
    let beyond = quat_mul(
        &q,
        &quat_from_axis_angle(&SVector::from([0.0, 0.0, 1.0]), 3.5),
    );
    let nan = SVector::from([f64::NAN, 0.0, 0.0, 1.0]);
    for q1 in [-q, half_turn, beyond, nan] {
        assert_outside(So3Cayley.inverse(&q, &q1), "so3-cayley");
        assert_outside(So3Exp.inverse(&q, &q1), "so3-exp");
        let p = SVector::from([q[0], q[1], q[2], q[3], 0.0, 1.0, 2.0]);
        let p1 = SVector::from([q1[0], q1[1], q1[2], q1[3], 3.0, 1.0, 2.0]);
        assert_outside(Se3(So3Cayley).inverse(&p, &p1), "so3-cayley");
        assert_outside(Se3(So3Exp).inverse(&p, &p1), "so3-exp");
    }
    // just inside: a rotation by π − 1e-6, whose other-signed twin is outside
    let inside = quat_mul(
        &q,
        &quat_from_axis_angle(&SVector::from([0.0, 0.0, 1.0]), PI - 1e-6),
    );
    let d = So3Exp.inverse(&q, &inside).unwrap();
    assert_relative_eq!(
        body_angular_velocity(&q, &d),
        SVector::from([0.0, 0.0, PI - 1e-6]),
        epsilon = 1e-9
    );
    assert!(So3Cayley.inverse(&q, &inside).is_ok());
    assert_outside(So3Exp.inverse(&q, &(-inside)), "so3-exp");
    assert_eq!(So3Cayley.name(), "so3-cayley");
    assert_eq!(So3Exp.name(), "so3-exp");
}
