//! Retractions `R_q(v)` and their inverses (\[DDM\] §9.1).
//!
//! A retraction satisfies `R_q(0) = q` and `dR_q(0) = id`. Here `R` does not
//! contain the time step: the forward discretization map built on it is
//! `Ψ_d^h(q0, q1) = (q0, R_{q0}^{-1}(q1) / h)` (\[DDM\] eq. 9.3 with
//! `R^h_q(v) = R_q(h v)`).
//!
//! | type | manifold | `R_q(v)` |
//! |---|---|---|
//! | [`Euclidean`] | `R^n` | `q + v` |
//! | [`Angles`] | torus `T^n` (every coordinate an angle) | `q + v`, inverse wrapped to `(−π, π)` |
//! | [`Se2`] | SE(2) in coordinates `(θ, x, y)` | `q · exp(ξ)`, `ξ` the body velocity |
//! | [`Sphere`] | S² ⊂ R³ | `(q + v)/|q + v|` |

use crate::{AdScalar, GeometryError};
use nalgebra::SVector;
use std::f64::consts::PI;

/// A retraction on an `N`-dimensional chart, with its inverse.
pub trait Retraction<const N: usize> {
    /// Short name for messages.
    fn name(&self) -> &'static str;

    /// `R_q(v)`.
    fn retract<S: AdScalar>(&self, q: &SVector<S, N>, v: &SVector<S, N>) -> SVector<S, N>;

    /// `R_q^{-1}(q1)`: the tangent vector at `q` that the retraction maps to `q1`.
    ///
    /// # Errors
    /// [`GeometryError::OutsideRetractionDomain`] where the inverse is undefined.
    fn inverse<S: AdScalar>(
        &self,
        q: &SVector<S, N>,
        q1: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError>;

    /// `R_q^{-1}(q1)` given also the chart increment `d = q1 − q` carried
    /// exactly (the steppers solve for `d`, and `q1 = q + d` is rounded).
    /// Retractions whose inverse is a function of `q1 − q` (R^n, angles)
    /// override this to use `d` itself, so that `R^{-1}` loses no digits to
    /// the cancellation in `q1 − q`; the default ignores `d`.
    ///
    /// # Errors
    /// As [`inverse`](Self::inverse).
    #[inline]
    fn inverse_step<S: AdScalar>(
        &self,
        q: &SVector<S, N>,
        q1: &SVector<S, N>,
        d: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        let _ = d;
        self.inverse(q, q1)
    }
}

/// The identity-chart retraction of `R^n`: `R_q(v) = q + v`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Euclidean;

impl<const N: usize> Retraction<N> for Euclidean {
    fn name(&self) -> &'static str {
        "euclidean"
    }
    fn retract<S: AdScalar>(&self, q: &SVector<S, N>, v: &SVector<S, N>) -> SVector<S, N> {
        q + v
    }
    fn inverse<S: AdScalar>(
        &self,
        q: &SVector<S, N>,
        q1: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        Ok(q1 - q)
    }
    #[inline]
    fn inverse_step<S: AdScalar>(
        &self,
        _q: &SVector<S, N>,
        _q1: &SVector<S, N>,
        d: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        Ok(*d)
    }
}

/// The torus `T^n = SO(2)^n`, every coordinate an angle in radians:
/// `R_q(v) = q + v`, and `R_q^{-1}(q1)` is the shortest signed angle from `q`
/// to `q1` component-wise, in `(−π, π)`.
///
/// The inverse is undefined where a component differs by exactly `π` (mod `2π`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Angles;

impl<const N: usize> Retraction<N> for Angles {
    fn name(&self) -> &'static str {
        "angles"
    }
    fn retract<S: AdScalar>(&self, q: &SVector<S, N>, v: &SVector<S, N>) -> SVector<S, N> {
        q + v
    }
    fn inverse<S: AdScalar>(
        &self,
        q: &SVector<S, N>,
        q1: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        wrap_angles(q1 - q)
    }
    fn inverse_step<S: AdScalar>(
        &self,
        _q: &SVector<S, N>,
        _q1: &SVector<S, N>,
        d: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        wrap_angles(*d)
    }
}

/// The angle differences `d` wrapped component-wise to `(−π, π)`.
fn wrap_angles<S: AdScalar, const N: usize>(
    mut d: SVector<S, N>,
) -> Result<SVector<S, N>, GeometryError> {
    for (i, di) in d.iter_mut().enumerate() {
        let x = di.re();
        let turns = (x / (2.0 * PI)).round();
        let wrapped = x - turns * 2.0 * PI;
        if !wrapped.is_finite() || wrapped.abs() >= PI * (1.0 - 1e-15) {
            return Err(GeometryError::OutsideRetractionDomain {
                retraction: "angles",
                reason: format!(
                    "component {i}: angle difference {x} is (nearly) π mod 2π, the cut locus"
                ),
            });
        }
        *di -= turns * 2.0 * PI;
    }
    Ok(d)
}

/// SE(2) in coordinates `q = (θ, x, y)` with the group exponential:
/// `R_q(v) = q · exp(ξ)`, where `ξ = (v_θ, Rot(−θ)(v_x, v_y))` is the body
/// velocity of the coordinate velocity `v`. Thus `dR_q(0) = id` in these
/// coordinates.
///
/// `θ` is a plain real coordinate: the inverse uses `ω = θ1 − θ` unwrapped and
/// is undefined when `ω` is a non-zero multiple of `2π` (the exponential's
/// translation part is singular there); it errors once `|ω| ≥ 2π − 1e-6`.
///
/// # Worked use
///
/// For a rigid body in the plane (or a vehicle: the Chaplygin sleigh, a
/// rolling disk's planar part) with coordinates `(θ, x, y)`, step with
/// [`RetractionForward`](crate::RetractionForward)`(Se2)`: the discrete
/// velocity `R_{q0}^{-1}(q1)/h` is then the coordinate velocity of the
/// group's one-parameter motion from `q0` to `q1` (a screw motion), so a
/// body moving at constant body velocity is reproduced exactly, and a
/// left-invariant Lagrangian gives a left-invariant discrete Lagrangian. A
/// knife-edge constraint `−sin θ ẋ + cos θ ẏ = 0` written in these
/// coordinates is respected by such motions.
///
/// ```
/// use diracvi_geometry::{Retraction, SVector, Se2};
/// // a quarter turn while moving along a circle of radius 2: body velocity (ω, u, 0) = (π/2, π, 0)
/// let q0 = SVector::from([0.0, 0.0, 0.0]);
/// let q1 = Se2.retract(&q0, &SVector::from([std::f64::consts::FRAC_PI_2, std::f64::consts::PI, 0.0]));
/// assert!((q1 - SVector::from([std::f64::consts::FRAC_PI_2, 2.0, 2.0])).amax() < 1e-14);
/// // and back: the inverse recovers the velocity
/// let v = Se2.inverse(&q0, &q1).unwrap();
/// assert!((v - SVector::from([std::f64::consts::FRAC_PI_2, std::f64::consts::PI, 0.0])).amax() < 1e-14);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Se2;

/// Below this `|ω|` the functions of [`se2_v`] are evaluated by their Taylor
/// series. The closed forms lose `ε/ω^k` absolutely in the `k`-th derivative
/// (`sin ω · (1/ω)` differentiated by AD), which the second-order jets of
/// `L_d` feel: at `|ω| = 1e-4` the Jacobian was off by ~3e-9.
const SE2_SERIES_BELOW: f64 = 0.25;

/// `(sin ω / ω, (1 − cos ω) / ω)`, accurate with their first and second
/// derivatives through `ω = 0`: Taylor series (through `ω^12`, `ω^13`) for
/// `|ω| < 0.25` — truncation below 1e-17 in value and second derivative —
/// and `sin ω / ω`, `2 sin²(ω/2) / ω` (no cancellation in `1 − cos ω`) above.
fn se2_v<S: AdScalar>(w: S) -> (S, S) {
    if w.re().abs() < SE2_SERIES_BELOW {
        // sin ω/ω = Σ (−1)^k ω^{2k}/(2k+1)!,  (1 − cos ω)/ω = ω Σ (−1)^k ω^{2k}/(2k+2)!
        const A: [f64; 7] = [
            1.0 / 6_227_020_800.0,
            -1.0 / 39_916_800.0,
            1.0 / 362_880.0,
            -1.0 / 5_040.0,
            1.0 / 120.0,
            -1.0 / 6.0,
            1.0,
        ];
        const B: [f64; 7] = [
            1.0 / 87_178_291_200.0,
            -1.0 / 479_001_600.0,
            1.0 / 3_628_800.0,
            -1.0 / 40_320.0,
            1.0 / 720.0,
            -1.0 / 24.0,
            0.5,
        ];
        let w2 = w * w;
        let horner = |coeffs: &[f64; 7]| {
            coeffs[2..]
                .iter()
                .fold(w2 * coeffs[0] + coeffs[1], |acc, &c| acc * w2 + c)
        };
        (horner(&A), horner(&B) * w)
    } else {
        let half = (w * 0.5).sin();
        (w.sin() / w, half * half * 2.0 / w)
    }
}

impl Retraction<3> for Se2 {
    fn name(&self) -> &'static str {
        "se2"
    }
    fn retract<S: AdScalar>(&self, q: &SVector<S, 3>, v: &SVector<S, 3>) -> SVector<S, 3> {
        let (s, c) = q[0].sin_cos();
        // body translation velocity u = Rot(−θ) v_xy
        let ux = c * v[1] + s * v[2];
        let uy = -s * v[1] + c * v[2];
        let (a, b) = se2_v(v[0]);
        // V(ω) u with V = [[a, −b], [b, a]]
        let wx = a * ux - b * uy;
        let wy = b * ux + a * uy;
        SVector::from([q[0] + v[0], q[1] + c * wx - s * wy, q[2] + s * wx + c * wy])
    }
    fn inverse<S: AdScalar>(
        &self,
        q: &SVector<S, 3>,
        q1: &SVector<S, 3>,
    ) -> Result<SVector<S, 3>, GeometryError> {
        let w = q1[0] - q[0];
        if !w.re().is_finite() || w.re().abs() >= 2.0 * PI - 1e-6 {
            return Err(GeometryError::OutsideRetractionDomain {
                retraction: "se2",
                reason: format!(
                    "rotation angle θ1 − θ = {} is not within (−2π, 2π): the exponential is singular",
                    w.re()
                ),
            });
        }
        let (s, c) = q[0].sin_cos();
        let dx = q1[1] - q[1];
        let dy = q1[2] - q[2];
        // Rot(−θ) Δt
        let bx = c * dx + s * dy;
        let by = -s * dx + c * dy;
        let (a, b) = se2_v(w);
        let det = a * a + b * b;
        // V^{-1} = [[a, b], [−b, a]] / det
        let ux = (a * bx + b * by) / det;
        let uy = (-b * bx + a * by) / det;
        Ok(SVector::from([w, c * ux - s * uy, s * ux + c * uy]))
    }
}

/// The unit sphere S² embedded in R³: `R_q(v) = (q + v)/|q + v|`,
/// `R_q^{-1}(q1) = q1/⟨q, q1⟩ − q`, defined for `⟨q, q1⟩ > 0` (the open
/// hemisphere centred at `q`).
///
/// # Worked use: the spherical pendulum on S² ⊂ R³
///
/// Write the system in the ambient coordinates `q ∈ R³` with the one
/// constraint form `A(q) = qᵀ` (velocities tangent to the sphere), and step
/// with [`RetractionForward`](crate::RetractionForward)`(Sphere)`: every
/// step lands on the sphere exactly, since `q_{k+1} = R_{q_k}(h v_k)`.
///
/// Pick the **midpoint** discrete constraint: `ω_d = ⟨(q0 + q1)/2, (q1 − q0)/h⟩
/// = (|q1|² − |q0|²)/(2h)` is a genuine condition. The **retraction** constraint
/// `⟨q0, R_{q0}^{-1}(q1)⟩ = 1 − |q0|²` vanishes identically on the sphere: its
/// row of the step Jacobian is zero and the step is singular (the retraction
/// already enforces what the form asks).
///
/// ```
/// use diracvi_geometry::{AdScalar, ConstraintDiscretization, RetractionForward, SMatrix, SVector, Sphere, System};
/// use diracvi_discrete_dirac::{Direction, LagrangeDirac, RunOptions, simulate, state_from_velocity};
///
/// /// A unit mass on the unit sphere under gravity 9.8 along −z.
/// struct SphericalPendulum;
/// impl System<3, 1> for SphericalPendulum {
///     fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 3>, v: &SVector<S, 3>) -> S {
///         v.dot(v) * 0.5 - q[2] * 9.8
///     }
///     fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 3>) -> SMatrix<S, 1, 3> {
///         q.transpose() // ⟨q, v⟩ = 0
///     }
/// }
///
/// let mut stepper = LagrangeDirac::new(
///     SphericalPendulum,
///     RetractionForward(Sphere),
///     ConstraintDiscretization::Midpoint,
///     Direction::Forward,
/// );
/// let q0 = SVector::from([1.0, 0.0, 0.0]);
/// let v0 = SVector::from([0.0, 1.5, 0.0]); // tangent: ⟨q0, v0⟩ = 0
/// let start = state_from_velocity(&SphericalPendulum, 0.0, &q0, &v0)?;
/// let run = simulate(&mut stepper, start, 1e-3, RunOptions::new(3000))?;
///
/// // on the sphere, and the vertical angular momentum x p_y − y p_x (the
/// // Noether quantity of the rotations about z, blind to the p + μ q
/// // ambiguity of the constraint force) is kept to round-off
/// let lz = |q: &SVector<f64, 3>, p: &SVector<f64, 3>| q[0] * p[1] - q[1] * p[0];
/// for r in &run.records {
///     assert!((r.q.norm() - 1.0).abs() < 1e-14);
///     assert!((lz(&r.q, &r.p) - 1.5).abs() < 1e-11); // ~1e-12 of accumulated round-off
/// }
/// // a forward map is first order: the energy error is O(h) (1.3e-2 here)
/// assert!(run.summary.max_abs_energy_deviation < 20.0 * 1e-3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sphere;

impl Retraction<3> for Sphere {
    fn name(&self) -> &'static str {
        "sphere"
    }
    fn retract<S: AdScalar>(&self, q: &SVector<S, 3>, v: &SVector<S, 3>) -> SVector<S, 3> {
        let w = q + v;
        let n = w.dot(&w).sqrt();
        w / n
    }
    fn inverse<S: AdScalar>(
        &self,
        q: &SVector<S, 3>,
        q1: &SVector<S, 3>,
    ) -> Result<SVector<S, 3>, GeometryError> {
        let d = q.dot(q1);
        // NaN fails this test too
        if d.re().is_nan() || d.re() <= 1e-12 {
            return Err(GeometryError::OutsideRetractionDomain {
                retraction: "sphere",
                reason: format!(
                    "⟨q, q1⟩ = {} must be > 0 (q1 in the hemisphere of q)",
                    d.re()
                ),
            });
        }
        Ok(q1 / d - q)
    }
}
