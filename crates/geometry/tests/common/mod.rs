//! Shared test systems and numerical helpers for the geometry integration tests.
//!
//! Every system here is written once, generic over the AD scalar, exactly as a
//! model crate would write it.
#![allow(dead_code)]

use diracvi_geometry::{AdScalar, SMatrix, SVector, System};
use rand::Rng;
use rand::rngs::SmallRng;
use std::f64::consts::PI;

// ---------------------------------------------------------------------------
// Systems
// ---------------------------------------------------------------------------

/// \[VCI\] §4.1: `L = ½ m |v|² − m g y`, boundary `y ≥ 0`.
pub struct BouncingParticle {
    pub m: f64,
    pub g: f64,
}

impl Default for BouncingParticle {
    fn default() -> Self {
        Self { m: 1.3, g: 9.8 }
    }
}

impl System<2, 0> for BouncingParticle {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        v.dot(v) * (0.5 * self.m) - q[1] * (self.m * self.g)
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
        SMatrix::zeros()
    }
    fn boundary_count(&self) -> usize {
        1
    }
    fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 2>) -> S {
        q[1]
    }
    fn hamiltonian<S: AdScalar>(&self, q: &SVector<S, 2>, p: &SVector<S, 2>) -> Option<S> {
        Some(p.dot(p) * (0.5 / self.m) + q[1] * (self.m * self.g))
    }
}

/// \[VCI\] §4.3: nonholonomic spherical pendulum in a cylinder, `q = (θ, φ)`,
/// `L = ½ m ℓ² (θ̇² + sin²θ φ̇²) − m g ℓ cos θ`, constraint
/// `(π + cos²θ) dθ − dφ`, boundary `R² − ℓ² sin²θ ≥ 0`.
pub struct NonholonomicPendulum {
    pub m: f64,
    pub g: f64,
    pub l: f64,
    pub r: f64,
}

impl Default for NonholonomicPendulum {
    fn default() -> Self {
        Self {
            m: 1.0,
            g: 9.8,
            l: 2.0,
            r: 1.5,
        }
    }
}

impl System<2, 1> for NonholonomicPendulum {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        let s = q[0].sin();
        let ml2 = self.m * self.l * self.l;
        (v[0] * v[0] + s * s * v[1] * v[1]) * (0.5 * ml2) - q[0].cos() * (self.m * self.g * self.l)
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 2>) -> SMatrix<S, 1, 2> {
        let c = q[0].cos();
        SMatrix::from([[c * c + PI], [S::from(-1.0)]])
    }
    fn boundary_count(&self) -> usize {
        1
    }
    fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 2>) -> S {
        let s = q[0].sin();
        S::from(self.r * self.r) - s * s * (self.l * self.l)
    }
}

/// \[VCI\] §4.2: bouncing ellipse on SE(2), `q = (θ, x, y)`,
/// `L = ½ m (ẋ² + ẏ²) + ½ I θ̇² − m g y`, boundary `y − √(a² sin²θ + b² cos²θ) ≥ 0`.
pub struct BouncingEllipse {
    pub m: f64,
    pub g: f64,
    pub a: f64,
    pub b: f64,
    pub inertia: f64,
}

impl Default for BouncingEllipse {
    fn default() -> Self {
        let (m, a, b) = (1.0, 1.0, 0.5);
        Self {
            m,
            g: 9.8,
            a,
            b,
            inertia: m * (a * a + b * b) / 4.0,
        }
    }
}

impl BouncingEllipse {
    /// `φ(θ)` and `φ̇(θ)` by hand.
    pub fn phi(&self, theta: f64) -> (f64, f64) {
        let (s, c) = theta.sin_cos();
        let phi = (self.a * self.a * s * s + self.b * self.b * c * c).sqrt();
        (phi, (self.a * self.a - self.b * self.b) * s * c / phi)
    }
}

impl System<3, 0> for BouncingEllipse {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 3>, v: &SVector<S, 3>) -> S {
        (v[1] * v[1] + v[2] * v[2]) * (0.5 * self.m) + v[0] * v[0] * (0.5 * self.inertia)
            - q[2] * (self.m * self.g)
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 3>) -> SMatrix<S, 0, 3> {
        SMatrix::zeros()
    }
    fn boundary_count(&self) -> usize {
        1
    }
    fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 3>) -> S {
        let (s, c) = q[0].sin_cos();
        q[2] - (s * s * (self.a * self.a) + c * c * (self.b * self.b)).sqrt()
    }
}

/// \[VCI\] §4.2: four-point star, boundary `y ≥ l(|sin θ| + |cos θ|)` split into
/// the four smooth pieces `y − l(s1 sin θ + s2 cos θ) ≥ 0`, `s1, s2 = ±1`.
pub struct Star {
    pub m: f64,
    pub g: f64,
    pub l: f64,
}

impl Default for Star {
    fn default() -> Self {
        Self {
            m: 1.0,
            g: 9.8,
            l: 1.0,
        }
    }
}

impl Star {
    /// The signs `(s1, s2)` of piece `j`.
    pub fn signs(j: usize) -> (f64, f64) {
        [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)][j]
    }
}

impl System<3, 0> for Star {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 3>, v: &SVector<S, 3>) -> S {
        (v[1] * v[1] + v[2] * v[2]) * (0.5 * self.m)
            + v[0] * v[0] * (0.5 * self.m * self.l * self.l / 3.0)
            - q[2] * (self.m * self.g)
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 3>) -> SMatrix<S, 0, 3> {
        SMatrix::zeros()
    }
    fn boundary_count(&self) -> usize {
        4
    }
    fn boundary<S: AdScalar>(&self, j: usize, q: &SVector<S, 3>) -> S {
        let (s1, s2) = Self::signs(j);
        let (s, c) = q[0].sin_cos();
        q[2] - (s * s1 + c * s2) * self.l
    }
}

/// \[DDM\] §2.1: LC circuit, `q = (q^ℓ, q^{c1}, q^{c2}, q^{c3})`,
/// `L = ½ ℓ v_ℓ² − Σ q_c²/(2 c_i)` (degenerate), Kirchhoff rows
/// `[−1, 0, 1, 0]`, `[0, −1, 1, −1]`.
pub struct LcCircuit {
    pub inductance: f64,
    pub c: [f64; 3],
}

impl Default for LcCircuit {
    fn default() -> Self {
        Self {
            inductance: 0.75,
            c: [1.0, 2.0, 3.0],
        }
    }
}

impl System<4, 2> for LcCircuit {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 4>, v: &SVector<S, 4>) -> S {
        v[0] * v[0] * (0.5 * self.inductance)
            - q[1] * q[1] * (0.5 / self.c[0])
            - q[2] * q[2] * (0.5 / self.c[1])
            - q[3] * q[3] * (0.5 / self.c[2])
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 4>) -> SMatrix<S, 2, 4> {
        SMatrix::from_row_slice(&[-1.0, 0.0, 1.0, 0.0, 0.0, -1.0, 1.0, -1.0].map(S::from))
    }
}

/// A Lagrangian that is neither quadratic in `v` nor polynomial in `q`, with a
/// gyroscopic term, a `q`-dependent constraint form and its own discrete
/// constraint:
/// `L = ½(1+q₀²)v₀² + cos(q₁)v₀v₁ + ½v₁² + v₁⁴/12 + sin(q₁)v₀ − q₀⁴`,
/// `A(q) = [1 + q₁², sin q₀]`.
pub struct NonQuadratic;

impl NonQuadratic {
    /// `(p, E)` by hand.
    pub fn momentum_energy(q: &SVector<f64, 2>, v: &SVector<f64, 2>) -> (SVector<f64, 2>, f64) {
        let p0 = (1.0 + q[0] * q[0]) * v[0] + q[1].cos() * v[1] + q[1].sin();
        let p1 = q[1].cos() * v[0] + v[1] + v[1].powi(3) / 3.0;
        let e = 0.5 * (1.0 + q[0] * q[0]) * v[0] * v[0]
            + q[1].cos() * v[0] * v[1]
            + 0.5 * v[1] * v[1]
            + v[1].powi(4) / 4.0
            + q[0].powi(4);
        (SVector::from([p0, p1]), e)
    }

    /// The model discrete constraint by hand (see `discrete_constraint`).
    pub fn model_constraint_f64(q0: &SVector<f64, 2>, q1: &SVector<f64, 2>, h: f64) -> f64 {
        ((1.0 + q0[1] * q1[1]) * (q1[0] - q0[0])
            + 0.5 * (q0[0].sin() + q1[0].sin()) * (q1[1] - q0[1]))
            / h
    }
}

impl System<2, 1> for NonQuadratic {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        let v1sq = v[1] * v[1];
        (q[0] * q[0] + 1.0) * v[0] * v[0] * 0.5
            + q[1].cos() * v[0] * v[1]
            + v1sq * 0.5
            + v1sq * v1sq * (1.0 / 12.0)
            + q[1].sin() * v[0]
            - q[0].powi(4)
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 2>) -> SMatrix<S, 1, 2> {
        SMatrix::from([[q[1] * q[1] + 1.0], [q[0].sin()]])
    }
    /// A trapezoidal-type discretization of `ω`:
    /// `[(1 + q0₁ q1₁)(q1₀ − q0₀) + ½(sin q0₀ + sin q1₀)(q1₁ − q0₁)] / h`.
    fn discrete_constraint<S: AdScalar>(
        &self,
        q0: &SVector<S, 2>,
        q1: &SVector<S, 2>,
        h: S,
    ) -> Option<SVector<S, 1>> {
        let w = ((q0[1] * q1[1] + 1.0) * (q1[0] - q0[0])
            + (q0[0].sin() + q1[0].sin()) * (q1[1] - q0[1]) * 0.5)
            / h;
        Some(SVector::from([w]))
    }
}

/// The Chaplygin sled (knife edge) on SE(2), `q = (θ, x, y)`:
/// `L = ½ m (ẋ² + ẏ²) + ½ I θ̇²`, constraint `−sin θ dx + cos θ dy`.
pub struct KnifeEdge;

impl System<3, 1> for KnifeEdge {
    fn lagrangian<S: AdScalar>(&self, _q: &SVector<S, 3>, v: &SVector<S, 3>) -> S {
        (v[1] * v[1] + v[2] * v[2]) * 0.5 + v[0] * v[0] * 0.3
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 3>) -> SMatrix<S, 1, 3> {
        let (s, c) = q[0].sin_cos();
        SMatrix::from([[S::from(0.0)], [-s], [c]])
    }
}

/// A particle on the unit sphere S² ⊂ R³: `L = ½|v|² − g z + ½ z v_x`.
pub struct SphereParticle;

impl System<3, 0> for SphereParticle {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 3>, v: &SVector<S, 3>) -> S {
        v.dot(v) * 0.5 - q[2] * 9.8 + q[2] * v[0] * 0.5
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 3>) -> SMatrix<S, 0, 3> {
        SMatrix::zeros()
    }
}

// ---------------------------------------------------------------------------
// Random points
// ---------------------------------------------------------------------------

/// A vector with components uniform in `[-r, r]`.
pub fn rand_vec<const N: usize>(rng: &mut SmallRng, r: f64) -> SVector<f64, N> {
    SVector::from_fn(|_, _| rng.random_range(-r..=r))
}

/// A uniformly distributed point of the unit sphere S² ⊂ R³.
pub fn rand_unit(rng: &mut SmallRng) -> SVector<f64, 3> {
    loop {
        let x = rand_vec::<3>(rng, 1.0);
        let n = x.norm();
        if n > 0.1 && n <= 1.0 {
            return x / n;
        }
    }
}

/// A tangent vector at the unit vector `q` with norm in `[lo, hi]`.
pub fn rand_tangent(rng: &mut SmallRng, q: &SVector<f64, 3>, lo: f64, hi: f64) -> SVector<f64, 3> {
    loop {
        let x = rand_vec::<3>(rng, 1.0);
        let t = x - q * q.dot(&x);
        let n = t.norm();
        if n > 0.1 {
            return t * (rng.random_range(lo..=hi) / n);
        }
    }
}

/// A log-uniform time step in `[lo, hi]`.
pub fn rand_step(rng: &mut SmallRng, lo: f64, hi: f64) -> f64 {
    (rng.random_range(lo.ln()..=hi.ln())).exp()
}

// ---------------------------------------------------------------------------
// Finite differences (fourth-order central stencil)
// ---------------------------------------------------------------------------

/// `f'(x) ≈ [−f(x+2δ) + 8f(x+δ) − 8f(x−δ) + f(x−2δ)] / (12δ)`, truncation
/// error `δ⁴ f⁽⁵⁾/30`.
pub fn fd_scalar<F: Fn(f64) -> f64>(f: F, x: f64, delta: f64) -> f64 {
    (-f(x + 2.0 * delta) + 8.0 * f(x + delta) - 8.0 * f(x - delta) + f(x - 2.0 * delta))
        / (12.0 * delta)
}

/// Gradient of a scalar function by [`fd_scalar`] in each coordinate, step `δ`.
pub fn fd_gradient<const N: usize, F: Fn(&SVector<f64, N>) -> f64>(
    f: F,
    x: &SVector<f64, N>,
    delta: f64,
) -> SVector<f64, N> {
    SVector::from_fn(|i, _| {
        fd_scalar(
            |t| {
                let mut y = *x;
                y[i] = t;
                f(&y)
            },
            x[i],
            delta,
        )
    })
}

/// Jacobian `J[(i, j)] = ∂f_i/∂x_j` of a vector function by the same stencil, step `δ`.
pub fn fd_jacobian<const N: usize, const K: usize, F: Fn(&SVector<f64, N>) -> SVector<f64, K>>(
    f: F,
    x: &SVector<f64, N>,
    delta: f64,
) -> SMatrix<f64, K, N> {
    let mut jac = SMatrix::<f64, K, N>::zeros();
    for j in 0..N {
        let col = fd_vector(
            |t| {
                let mut y = *x;
                y[j] = t;
                f(&y)
            },
            x[j],
            delta,
        );
        jac.set_column(j, &col);
    }
    jac
}

/// Derivative of a vector function of one variable, step `δ`.
pub fn fd_vector<const K: usize, F: Fn(f64) -> SVector<f64, K>>(
    f: F,
    x: f64,
    delta: f64,
) -> SVector<f64, K> {
    (-f(x + 2.0 * delta) + f(x + delta) * 8.0 - f(x - delta) * 8.0 + f(x - 2.0 * delta))
        / (12.0 * delta)
}

/// Relative max-norm distance `‖a − b‖_∞ / max(‖a‖_∞, ‖b‖_∞, floor)`.
pub fn rel_err<const R: usize, const C: usize>(
    a: &SMatrix<f64, R, C>,
    b: &SMatrix<f64, R, C>,
    floor: f64,
) -> f64 {
    let scale = a.amax().max(b.amax()).max(floor);
    (a - b).amax() / scale
}

/// Assert `rel_err(ad, reference) ≤ tol` with a readable message.
#[track_caller]
pub fn assert_rel<const R: usize, const C: usize>(
    what: &str,
    ad: &SMatrix<f64, R, C>,
    reference: &SMatrix<f64, R, C>,
    tol: f64,
) {
    let e = rel_err(ad, reference, 1e-300);
    assert!(
        e <= tol,
        "{what}: relative error {e:e} > {tol:e}\n  computed  = {ad}\n  reference = {reference}"
    );
}

/// Scalar version of [`assert_rel`].
#[track_caller]
pub fn assert_rel_scalar(what: &str, ad: f64, reference: f64, tol: f64) {
    let scale = ad.abs().max(reference.abs()).max(1e-300);
    let e = (ad - reference).abs() / scale;
    assert!(
        e <= tol,
        "{what}: relative error {e:e} > {tol:e} (computed {ad:e}, reference {reference:e})"
    );
}
