//! Rotations in three dimensions: SO(3) through unit quaternions, SE(3) as
//! unit quaternion × R³, with group retractions (Cayley and the
//! exponential), their inverses, and a symmetric (midpoint) discretization
//! map on the group (docs/theory.md §16).
//!
//! **Chart.** An orientation is a unit quaternion `q = (w, x, y, z) ∈ S³ ⊂ R⁴`
//! (`q` and `−q` are the same rotation), stored as an `SVector<S, 4>` with
//! the scalar part first. Its chart velocity `v ∈ R⁴` is tangent to `S³`
//! (`⟨q, v⟩ = 0`) and carries the body angular velocity
//! `ω = 2 Im(q̄ ⊗ v)` and the spatial one `ω_s = 2 Im(v ⊗ q̄) = R(q) ω`. A
//! system written in this chart declares the one constraint form
//! `A(q) = qᵀ` (velocities tangent to `S³`) and steps with the midpoint
//! discrete constraint `⟨q0 + q1, q1 − q0⟩/(2h) = 0`, i.e. `|q1| = |q0|`
//! (as for [`Sphere`](crate::Sphere)).
//!
//! **Group retractions.** With the body increment `ξ = Im(q⁻¹ ⊗ v)` (a pure
//! quaternion, `ξ = h ω/2` for `v = h q̇`),
//!
//! | type | `R_q(v)` | inverse, `u = q⁻¹ ⊗ q1` |
//! |---|---|---|
//! | [`So3Cayley`] | `q ⊗ (1 + ξ)/√(1 + |ξ|²)` | `q ⊗ Im u / Re u` |
//! | [`So3Exp`] | `q ⊗ exp ξ = q ⊗ (cos|ξ|, sin|ξ| ξ/|ξ|)` | `q ⊗ log u`, `log u = atan2(|Im u|, Re u) Im u/|Im u|` |
//! | [`Se3`]`(R)` | `(R_q(v_q), x + v_x)` on `(q, x) ∈ S³ × R³` | componentwise |
//!
//! [`So3Cayley`] is the Cayley transform of rotation matrices,
//! `R(q1) = R(q) (I − ω̂h/2)^{-1}(I + ω̂h/2)`, written for quaternions; on
//! `S³` it coincides with the normalising retraction `(q + v)/|q + v|`.
//! [`So3Exp`] moves along the one-parameter subgroup: a body turning at
//! constant body angular velocity is reproduced exactly. Both inverses are
//! defined where `Re u > 0`, i.e. where the rotation from `q` to `q1` is by
//! an angle `< π` (the sign of `q1` picks the short way); elsewhere they
//! return [`GeometryError::OutsideRetractionDomain`].
//!
//! All formulas are written once for any [`AdScalar`], so the discrete
//! Lagrangian's derivatives through them are exact (num-dual). Where a
//! closed form divides by a small angle (`sin θ/θ`, `atan t/t`) a Taylor
//! series is used below a threshold, accurate with its first and second
//! derivatives.
//!
//! **Midpoint.** [`LieMidpoint`] is the symmetric discretization map of a
//! [`MidpointRetraction`]: `Ψ(q0, q1) = (q_m, q_m ⊗ ξ/h)` with the geodesic
//! midpoint `q_m = (q0 + q1)/|q0 + q1| = q0 ⊗ √(q0⁻¹ ⊗ q1)` and the body
//! increment `ξ = Im(q0⁻¹ ⊗ R_{q0}^{-1}(q1))`. It satisfies
//! `Ψ(q1, q0, −h) = Ψ(q0, q1, h)`, so `L_d = h L ∘ Ψ` is symmetric and the
//! stepper built on it (with the midpoint constraint and the symmetric
//! reaction splitting of `LagrangeDirac::symmetric`) is self-adjoint, of
//! order 2.

use crate::{AdScalar, DiscretizationMap, Euclidean, GeometryError, Retraction};
use nalgebra::SVector;

// ---------------------------------------------------------------------------
// Quaternion algebra (scalar part first)
// ---------------------------------------------------------------------------

/// The quaternion product `a ⊗ b`, scalar part first:
/// `(a0, a)(b0, b) = (a0 b0 − a·b, a0 b + b0 a + a × b)`.
#[inline]
pub fn quat_mul<S: AdScalar>(a: &SVector<S, 4>, b: &SVector<S, 4>) -> SVector<S, 4> {
    SVector::from([
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ])
}

/// The conjugate `q̄ = (w, −x, −y, −z)` (the inverse of a unit quaternion).
#[inline]
pub fn quat_conj<S: AdScalar>(q: &SVector<S, 4>) -> SVector<S, 4> {
    SVector::from([q[0], -q[1], -q[2], -q[3]])
}

/// The pure quaternion `(0, x)` of a vector of R³.
#[inline]
pub fn pure<S: AdScalar>(x: &SVector<S, 3>) -> SVector<S, 4> {
    SVector::from([S::from(0.0), x[0], x[1], x[2]])
}

/// The imaginary (vector) part of a quaternion.
#[inline]
pub fn imag<S: AdScalar>(q: &SVector<S, 4>) -> SVector<S, 3> {
    SVector::from([q[1], q[2], q[3]])
}

/// `R(q) x = Im(q ⊗ (0, x) ⊗ q̄)` for a unit quaternion `q` (for any `q` the
/// result is `|q|² R(q/|q|) x`).
#[inline]
pub fn rotate<S: AdScalar>(q: &SVector<S, 4>, x: &SVector<S, 3>) -> SVector<S, 3> {
    imag(&quat_mul(&quat_mul(q, &pure(x)), &quat_conj(q)))
}

/// The rotation matrix `R(q)` of a unit quaternion (columns: the body axes
/// in space).
pub fn rotation_matrix(q: &SVector<f64, 4>) -> nalgebra::SMatrix<f64, 3, 3> {
    nalgebra::SMatrix::from_fn(|i, j| {
        let mut e = SVector::<f64, 3>::zeros();
        e[j] = 1.0;
        rotate(q, &e)[i]
    })
}

/// The body angular velocity `ω = 2 Im(q̄ ⊗ v)` of the chart velocity `v` at
/// the unit quaternion `q`.
#[inline]
pub fn body_angular_velocity<S: AdScalar>(q: &SVector<S, 4>, v: &SVector<S, 4>) -> SVector<S, 3> {
    imag(&quat_mul(&quat_conj(q), v)) * S::from(2.0)
}

/// The spatial angular velocity `ω_s = 2 Im(v ⊗ q̄) = R(q) ω`.
#[inline]
pub fn spatial_angular_velocity<S: AdScalar>(
    q: &SVector<S, 4>,
    v: &SVector<S, 4>,
) -> SVector<S, 3> {
    imag(&quat_mul(v, &quat_conj(q))) * S::from(2.0)
}

/// The chart velocity `v = ½ q ⊗ (0, ω)` of the body angular velocity `ω`
/// (tangent at `q`: `⟨q, v⟩ = 0`).
pub fn velocity_from_body(q: &SVector<f64, 4>, omega: &SVector<f64, 3>) -> SVector<f64, 4> {
    quat_mul(q, &pure(omega)) * 0.5
}

/// The body angular momentum `Π = ½ Im(q̄ ⊗ p)` of a chart momentum
/// `p ∈ R⁴` at the unit quaternion `q` (the dual of `ω = 2 Im(q̄ ⊗ v)`:
/// `⟨p, v⟩ = Π·ω` for tangent `v`). Blind to the multiple of `q` by which
/// momenta of the constrained chart are defined (docs/theory.md §3.8).
pub fn body_momentum(q: &SVector<f64, 4>, p: &SVector<f64, 4>) -> SVector<f64, 3> {
    imag(&quat_mul(&quat_conj(q), p)) * 0.5
}

/// The spatial angular momentum `π = ½ Im(p ⊗ q̄) = R(q) Π`: the Noether
/// momentum of rotations of space, `⟨p, η ⊗ q⟩ = 2 π·η` for pure `η`.
pub fn spatial_momentum(q: &SVector<f64, 4>, p: &SVector<f64, 4>) -> SVector<f64, 3> {
    imag(&quat_mul(p, &quat_conj(q))) * 0.5
}

/// A unit quaternion of the rotation by `angle` (rad) about `axis` (any
/// non-zero length).
pub fn quat_from_axis_angle(axis: &SVector<f64, 3>, angle: f64) -> SVector<f64, 4> {
    let n = axis / axis.norm();
    let (s, c) = (0.5 * angle).sin_cos();
    SVector::from([c, s * n[0], s * n[1], s * n[2]])
}

/// Below this `|ξ|²` (resp. `(|Im u|/Re u)²`) the exponential (resp. the
/// logarithm) uses its Taylor series: the closed forms divide by `|ξ|`.
const SERIES_BELOW: f64 = 0.0625;

/// `(cos √t, sin √t / √t)` with exact first and second derivatives through
/// `t = 0`: series (truncation < 1e-18 for `t < 1/16`) below, closed form above.
fn cos_sinc_sqrt<S: AdScalar>(t: S) -> (S, S) {
    if t.re() < SERIES_BELOW {
        // Σ (−t)^k/(2k)!, Σ (−t)^k/(2k+1)!, k ≤ 8
        const C: [f64; 9] = [
            1.0 / 20_922_789_888_000.0,
            -1.0 / 87_178_291_200.0,
            1.0 / 479_001_600.0,
            -1.0 / 3_628_800.0,
            1.0 / 40_320.0,
            -1.0 / 720.0,
            1.0 / 24.0,
            -0.5,
            1.0,
        ];
        const D: [f64; 9] = [
            1.0 / 355_687_428_096_000.0,
            -1.0 / 1_307_674_368_000.0,
            1.0 / 6_227_020_800.0,
            -1.0 / 39_916_800.0,
            1.0 / 362_880.0,
            -1.0 / 5_040.0,
            1.0 / 120.0,
            -1.0 / 6.0,
            1.0,
        ];
        let horner = |k: &[f64; 9]| k[1..].iter().fold(S::from(k[0]), |acc, &c| acc * t + c);
        (horner(&C), horner(&D))
    } else {
        let th = t.sqrt();
        let (s, c) = th.sin_cos();
        (c, s / th)
    }
}

/// `atan(√t)/√t` with exact derivatives through `t = 0`: the series
/// `Σ (−t)^k/(2k+1)`, `k ≤ 20`, below `t = 1/16` (truncation below 1e-21
/// in value and second derivative), the closed form above.
fn atan_sqrt_over_sqrt<S: AdScalar>(t: S) -> S {
    if t.re() < SERIES_BELOW {
        let coefficient = |k: usize| {
            let sign = if k.is_multiple_of(2) { 1.0 } else { -1.0 };
            sign / (2 * k + 1) as f64
        };
        (0..20)
            .rev()
            .fold(S::from(coefficient(20)), |acc, k| acc * t + coefficient(k))
    } else {
        let s = t.sqrt();
        s.atan() / s
    }
}

/// `|q|²`.
#[inline]
fn norm2<S: AdScalar>(q: &SVector<S, 4>) -> S {
    q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]
}

/// The body increment `ξ = Im(q⁻¹ ⊗ v)`.
#[inline]
fn body_increment<S: AdScalar>(q: &SVector<S, 4>, v: &SVector<S, 4>) -> SVector<S, 3> {
    imag(&quat_mul(&quat_conj(q), v)) / norm2(q)
}

/// `u = q̄ ⊗ q1` from the exact increment `d = q1 − q`:
/// `(|q|², 0) + q̄ ⊗ d`, so that `Im u` is free of the cancellation in `q1 − q`.
#[inline]
fn relative<S: AdScalar>(q: &SVector<S, 4>, d: &SVector<S, 4>) -> SVector<S, 4> {
    let mut u = quat_mul(&quat_conj(q), d);
    u[0] += norm2(q);
    u
}

/// The domain check shared by both inverses: `Re u > 0` (rotation angle
/// from `q` to `q1` below `π`), relative to `|u|`.
fn check_domain<S: AdScalar>(name: &'static str, u: &SVector<S, 4>) -> Result<(), GeometryError> {
    let re = u[0].re();
    let size = (0..4).map(|i| u[i].re() * u[i].re()).sum::<f64>().sqrt();
    if re.is_nan() || !size.is_finite() || re <= 1e-12 * size {
        return Err(GeometryError::OutsideRetractionDomain {
            retraction: name,
            reason: format!(
                "Re(q̄ ⊗ q1) = {re} must be > 0 (rotation from q to q1 by less than π; |q̄ ⊗ q1| = {size})"
            ),
        });
    }
    Ok(())
}

/// A retraction on the unit quaternions of the form `R_q(v) = q ⊗ τ(ξ)`,
/// `ξ = Im(q⁻¹ ⊗ v)`, with `τ` a local diffeomorphism from pure quaternions
/// to unit quaternions near 1 (`τ(0) = 1`, `dτ(0) = id`). Implemented by
/// [`So3Cayley`] and [`So3Exp`]; [`Se3`] and [`LieMidpoint`] build on it.
pub trait QuaternionRetraction: Copy {
    /// Short name for messages.
    const NAME: &'static str;
    /// `τ(ξ)`, a unit quaternion.
    fn tau<S: AdScalar>(&self, xi: &SVector<S, 3>) -> SVector<S, 4>;
    /// `τ^{-1}(u/|u|)` for `Re u > 0` (checked by the caller).
    fn tau_inverse<S: AdScalar>(&self, u: &SVector<S, 4>) -> SVector<S, 3>;
}

/// SO(3) by unit quaternions with the Cayley retraction
/// `R_q(v) = q ⊗ (1 + ξ)/√(1 + |ξ|²)`, `ξ = Im(q⁻¹ ⊗ v)`
/// (the matrix Cayley transform `(I − ω̂/2)^{-1}(I + ω̂/2)`, `ω = 2ξ`; on
/// `S³` the same map as `(q + v)/|q + v|`). Inverse `q ⊗ Im u/Re u`,
/// `u = q̄ ⊗ q1`, for `Re u > 0`.
///
/// ```
/// use diracvi_geometry::{Retraction, SVector, So3Cayley};
/// use diracvi_geometry::lie::{body_angular_velocity, velocity_from_body};
/// let q = SVector::from([0.5, 0.5, 0.5, 0.5]); // a unit quaternion
/// let v = velocity_from_body(&q, &SVector::from([0.3, -0.1, 0.2]));
/// let q1 = So3Cayley.retract(&q, &v);
/// assert!((q1.norm() - 1.0).abs() < 1e-15); // on the group
/// let back = So3Cayley.inverse(&q, &q1).unwrap();
/// assert!((body_angular_velocity(&q, &back) - SVector::from([0.3, -0.1, 0.2])).amax() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct So3Cayley;

impl QuaternionRetraction for So3Cayley {
    const NAME: &'static str = "so3-cayley";
    fn tau<S: AdScalar>(&self, xi: &SVector<S, 3>) -> SVector<S, 4> {
        let n = (xi.dot(xi) + 1.0).sqrt();
        SVector::from([n.recip(), xi[0] / n, xi[1] / n, xi[2] / n])
    }
    fn tau_inverse<S: AdScalar>(&self, u: &SVector<S, 4>) -> SVector<S, 3> {
        imag(u) / u[0]
    }
}

/// SO(3) by unit quaternions with the group exponential
/// `R_q(v) = q ⊗ exp ξ`, `exp ξ = (cos|ξ|, sin|ξ| ξ/|ξ|)`,
/// `ξ = Im(q⁻¹ ⊗ v)`: the rotation at constant body angular velocity
/// `ω = 2ξ` for a unit time. Inverse `q ⊗ log u`,
/// `log u = atan(|Im u|/Re u) Im u/|Im u|`, `u = q̄ ⊗ q1`, for `Re u > 0`.
///
/// ```
/// use diracvi_geometry::{Retraction, SVector, So3Exp};
/// use diracvi_geometry::lie::{quat_from_axis_angle, velocity_from_body};
/// // turning at 2 rad/s about z for 0.5 s is a rotation by 1 rad about z
/// let id = SVector::from([1.0, 0.0, 0.0, 0.0]);
/// let q1 = So3Exp.retract(&id, &velocity_from_body(&id, &SVector::from([0.0, 0.0, 1.0])));
/// let want = quat_from_axis_angle(&SVector::from([0.0, 0.0, 1.0]), 1.0);
/// assert!((q1 - want).amax() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct So3Exp;

impl QuaternionRetraction for So3Exp {
    const NAME: &'static str = "so3-exp";
    fn tau<S: AdScalar>(&self, xi: &SVector<S, 3>) -> SVector<S, 4> {
        let (c, sinc) = cos_sinc_sqrt(xi.dot(xi));
        SVector::from([c, xi[0] * sinc, xi[1] * sinc, xi[2] * sinc])
    }
    fn tau_inverse<S: AdScalar>(&self, u: &SVector<S, 4>) -> SVector<S, 3> {
        // ξ = (Im u / Re u) · atan(t)/t with t = |Im u|/Re u
        let r = imag(u) / u[0];
        r * atan_sqrt_over_sqrt(r.dot(&r))
    }
}

/// `Retraction<4>` and `MidpointRetraction<4>` for a [`QuaternionRetraction`].
macro_rules! quaternion_retraction {
    ($t:ty) => {
        impl Retraction<4> for $t {
            fn name(&self) -> &'static str {
                <$t as QuaternionRetraction>::NAME
            }
            fn retract<S: AdScalar>(&self, q: &SVector<S, 4>, v: &SVector<S, 4>) -> SVector<S, 4> {
                quat_mul(q, &self.tau(&body_increment(q, v)))
            }
            fn inverse<S: AdScalar>(
                &self,
                q: &SVector<S, 4>,
                q1: &SVector<S, 4>,
            ) -> Result<SVector<S, 4>, GeometryError> {
                quaternion_inverse(self, q, &(q1 - q))
            }
            fn inverse_step<S: AdScalar>(
                &self,
                q: &SVector<S, 4>,
                _q1: &SVector<S, 4>,
                d: &SVector<S, 4>,
            ) -> Result<SVector<S, 4>, GeometryError> {
                quaternion_inverse(self, q, d)
            }
        }

        impl MidpointRetraction<4> for $t {
            fn midpoint_step<S: AdScalar>(
                &self,
                q0: &SVector<S, 4>,
                _q1: &SVector<S, 4>,
                d: &SVector<S, 4>,
            ) -> Result<(SVector<S, 4>, SVector<S, 4>), GeometryError> {
                quaternion_midpoint(self, q0, d)
            }
            fn midpoint_inverse(
                &self,
                q: &SVector<f64, 4>,
                w: &SVector<f64, 4>,
            ) -> (SVector<f64, 4>, SVector<f64, 4>) {
                quaternion_midpoint_inverse(self, q, w)
            }
        }
    };
}

/// `R_q^{-1}(q + d) = q ⊗ τ^{-1}(q̄ ⊗ (q + d))`, checked for `Re u > 0`.
fn quaternion_inverse<R: QuaternionRetraction, S: AdScalar>(
    r: &R,
    q: &SVector<S, 4>,
    d: &SVector<S, 4>,
) -> Result<SVector<S, 4>, GeometryError> {
    let u = relative(q, d);
    check_domain(R::NAME, &u)?;
    Ok(quat_mul(q, &pure(&r.tau_inverse(&u))))
}

quaternion_retraction!(So3Cayley);
quaternion_retraction!(So3Exp);

/// SE(3) in the coordinates `(q, x) ∈ S³ × R³` (7 numbers: the unit
/// quaternion of the orientation, then the position of a body point, e.g.
/// the centre of mass, in space), retracted as the product SO(3) × R³: the
/// orientation by the quaternion retraction `R` ([`So3Cayley`] or
/// [`So3Exp`]), the position by `x + v_x`. This is the structure under which
/// `½ m |ẋ|² + ½ ωᵀ I ω − V` is a Lagrangian on the product group.
///
/// A system in this chart declares the form `(q, 0)ᵀ` (first row) among its
/// constraint forms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Se3<R>(pub R);

/// The quaternion and position parts of a 7-vector.
#[inline]
fn split7<S: AdScalar>(q: &SVector<S, 7>) -> (SVector<S, 4>, SVector<S, 3>) {
    (
        SVector::from([q[0], q[1], q[2], q[3]]),
        SVector::from([q[4], q[5], q[6]]),
    )
}

#[inline]
fn join7<S: AdScalar>(q: &SVector<S, 4>, x: &SVector<S, 3>) -> SVector<S, 7> {
    SVector::from([q[0], q[1], q[2], q[3], x[0], x[1], x[2]])
}

impl<R: QuaternionRetraction> Retraction<7> for Se3<R> {
    fn name(&self) -> &'static str {
        match R::NAME {
            "so3-cayley" => "se3-cayley",
            "so3-exp" => "se3-exp",
            _ => "se3",
        }
    }
    fn retract<S: AdScalar>(&self, q: &SVector<S, 7>, v: &SVector<S, 7>) -> SVector<S, 7> {
        let ((qr, x), (vr, vx)) = (split7(q), split7(v));
        join7(
            &quat_mul(&qr, &self.0.tau(&body_increment(&qr, &vr))),
            &(x + vx),
        )
    }
    fn inverse<S: AdScalar>(
        &self,
        q: &SVector<S, 7>,
        q1: &SVector<S, 7>,
    ) -> Result<SVector<S, 7>, GeometryError> {
        self.inverse_step(q, q1, &(q1 - q))
    }
    fn inverse_step<S: AdScalar>(
        &self,
        q: &SVector<S, 7>,
        q1: &SVector<S, 7>,
        d: &SVector<S, 7>,
    ) -> Result<SVector<S, 7>, GeometryError> {
        let _ = q1;
        let ((qr, _), (dr, dx)) = (split7(q), split7(d));
        let w = quaternion_inverse(&self.0, &qr, &dr)?;
        Ok(join7(&w, &dx))
    }
}

/// A retraction with a symmetric midpoint: the point half-way from `q0` to
/// `q1` and the displacement `R_{q0}^{-1}(q1)` carried there, such that
/// exchanging `q0` and `q1` gives the same point and the opposite
/// displacement. [`LieMidpoint`] turns it into a discretization map.
pub trait MidpointRetraction<const N: usize>: Retraction<N> {
    /// `(q_m, w_m)` from `q0`, `q1` and the exact increment `d = q1 − q0`.
    ///
    /// # Errors
    /// Where the retraction inverse is undefined.
    fn midpoint_step<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        d: &SVector<S, N>,
    ) -> Result<(SVector<S, N>, SVector<S, N>), GeometryError>;

    /// `(q0, q1)` with midpoint `q` and displacement `w` (the inverse of
    /// [`midpoint_step`](Self::midpoint_step)).
    fn midpoint_inverse(
        &self,
        q: &SVector<f64, N>,
        w: &SVector<f64, N>,
    ) -> (SVector<f64, N>, SVector<f64, N>);
}

impl<const N: usize> MidpointRetraction<N> for Euclidean {
    fn midpoint_step<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        _q1: &SVector<S, N>,
        d: &SVector<S, N>,
    ) -> Result<(SVector<S, N>, SVector<S, N>), GeometryError> {
        Ok((SVector::from_fn(|i, _| q0[i] + d[i] * 0.5), *d))
    }
    fn midpoint_inverse(
        &self,
        q: &SVector<f64, N>,
        w: &SVector<f64, N>,
    ) -> (SVector<f64, N>, SVector<f64, N>) {
        (q - w * 0.5, q + w * 0.5)
    }
}

/// The geodesic midpoint `q_m = (2q0 + d)/|2q0 + d|` of two quaternions and
/// the body increment `ξ` of `R` from `q0` to `q1 = q0 + d`, carried to
/// `q_m` as `q_m ⊗ ξ`.
fn quaternion_midpoint<R: QuaternionRetraction, S: AdScalar>(
    r: &R,
    q0: &SVector<S, 4>,
    d: &SVector<S, 4>,
) -> Result<(SVector<S, 4>, SVector<S, 4>), GeometryError> {
    let u = relative(q0, d);
    check_domain(R::NAME, &u)?;
    let xi = r.tau_inverse(&u);
    let s = q0 * S::from(2.0) + d;
    let qm = s / norm2(&s).sqrt();
    Ok((qm, quat_mul(&qm, &pure(&xi))))
}

/// `(q ⊗ σ̄, q ⊗ σ)` with `σ = √(τ(ξ))`, `ξ = Im(q⁻¹ ⊗ w)`: the pair whose
/// midpoint is `q` and whose body increment is `ξ`.
fn quaternion_midpoint_inverse<R: QuaternionRetraction>(
    r: &R,
    q: &SVector<f64, 4>,
    w: &SVector<f64, 4>,
) -> (SVector<f64, 4>, SVector<f64, 4>) {
    let u = r.tau(&body_increment(q, w));
    // √u = (1 + u)/|1 + u| for a unit u with Re u > −1
    let mut s = u;
    s[0] += 1.0;
    let s = s / s.norm();
    (quat_mul(q, &quat_conj(&s)), quat_mul(q, &s))
}

impl<R: QuaternionRetraction> MidpointRetraction<7> for Se3<R> {
    fn midpoint_step<S: AdScalar>(
        &self,
        q0: &SVector<S, 7>,
        _q1: &SVector<S, 7>,
        d: &SVector<S, 7>,
    ) -> Result<(SVector<S, 7>, SVector<S, 7>), GeometryError> {
        let ((q0r, x0), (dr, dx)) = (split7(q0), split7(d));
        let (qm, wm) = quaternion_midpoint(&self.0, &q0r, &dr)?;
        Ok((join7(&qm, &(x0 + dx * S::from(0.5))), join7(&wm, &dx)))
    }
    fn midpoint_inverse(
        &self,
        q: &SVector<f64, 7>,
        w: &SVector<f64, 7>,
    ) -> (SVector<f64, 7>, SVector<f64, 7>) {
        let ((qr, x), (wr, wx)) = (split7(q), split7(w));
        let (a, b) = quaternion_midpoint_inverse(&self.0, &qr, &wr);
        (join7(&a, &(x - wx * 0.5)), join7(&b, &(x + wx * 0.5)))
    }
}

/// The symmetric discretization map of a [`MidpointRetraction`]:
/// `Ψ_d^h(q0, q1) = (q_m, w_m/h)` with `(q_m, w_m)` the midpoint and the
/// displacement carried there; `R̃^h(q, v)` is the pair with midpoint `q`
/// and displacement `h v`.
///
/// On unit quaternions (`So3Cayley`, `So3Exp`, and their [`Se3`]) `q_m` is
/// the geodesic midpoint `(q0 + q1)/|q0 + q1|` and the body velocity of
/// `w_m/h` is that of the retraction, `2 Im(q0⁻¹ ⊗ R_{q0}^{-1}(q1))/h`: the
/// discrete Lagrangian of `L = ½ ωᵀ I ω − V(q)` is
/// `h (½ ω_dᵀ I ω_d − V(q_m))`. Exchanging the ends and the sign of `h`
/// leaves `Ψ` unchanged, so `L_d(q1, q0, −h) = −L_d(q0, q1, h)`: with the
/// midpoint discrete constraint and the symmetric stepper the method is
/// self-adjoint and of order 2 (docs/theory.md §16). On [`Euclidean`] it is
/// [`Discretization::Midpoint`](crate::Discretization::Midpoint).
///
/// `Ψ` is invariant under left and right multiplication of both ends by a
/// unit quaternion (the point is equivariant, the body increment is
/// left-invariant and conjugated by right multiplication), so the discrete
/// Noether momenta of such symmetries of `L` are kept exactly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LieMidpoint<R>(pub R);

impl<const N: usize, R: MidpointRetraction<N>> DiscretizationMap<N> for LieMidpoint<R> {
    fn name(&self) -> &'static str {
        match self.0.name() {
            "so3-cayley" => "so3-cayley-midpoint",
            "so3-exp" => "so3-exp-midpoint",
            "se3-cayley" => "se3-cayley-midpoint",
            "se3-exp" => "se3-exp-midpoint",
            "euclidean" => "midpoint",
            _ => "lie-midpoint",
        }
    }
    fn psi<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        h: S,
    ) -> Result<(SVector<S, N>, SVector<S, N>), GeometryError> {
        self.psi_step(q0, q1, &(q1 - q0), h)
    }
    fn psi_step<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        d: &SVector<S, N>,
        h: S,
    ) -> Result<(SVector<S, N>, SVector<S, N>), GeometryError> {
        let (qm, wm) = self.0.midpoint_step(q0, q1, d)?;
        let inv_h = h.recip();
        Ok((qm, SVector::from_fn(|i, _| wm[i] * inv_h)))
    }
    fn psi_inverse(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        h: f64,
    ) -> Result<(SVector<f64, N>, SVector<f64, N>), GeometryError> {
        Ok(self.0.midpoint_inverse(q, &(v * h)))
    }
    fn displacement<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        self.0.inverse(q0, q1)
    }
    fn displacement_step<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        d: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        self.0.inverse_step(q0, q1, d)
    }
}
