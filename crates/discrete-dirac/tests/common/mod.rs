//! Small systems shared by the stepper tests.
#![allow(dead_code, missing_docs)]

use diracvi_discrete_dirac::DynState;
use diracvi_discrete_dirac::dynamic::dyn_state_from_velocity;
use diracvi_geometry::dynamic::DynSystem;
use diracvi_geometry::{AdScalar, SMatrix, SVector, System};
use nalgebra::{DMatrix, DVector};
use std::f64::consts::PI;

/// LC circuit of \[DDM\] §2.1: q = (q^ℓ, q^{c1}, q^{c2}, q^{c3}).
#[derive(Clone, Copy)]
pub struct Lc {
    pub l: f64,
    pub c: [f64; 3],
}

impl Default for Lc {
    fn default() -> Self {
        Self {
            l: 0.75,
            c: [1.0, 2.0, 3.0],
        }
    }
}

impl Lc {
    pub fn omega(&self) -> f64 {
        let [c1, c2, c3] = self.c;
        ((c1 + c2 + c3) / (c2 * (c1 + c3) * self.l)).sqrt()
    }

    /// `q(0) = 0`, currents `(10, 2.5, 10, 7.5)` (consistent, equal
    /// capacitor voltages), `p_0 = ∂L/∂v`.
    pub fn start(&self) -> diracvi_discrete_dirac::State<4> {
        diracvi_discrete_dirac::state_from_velocity(
            self,
            0.0,
            &SVector::zeros(),
            &SVector::from([10.0, 2.5, 10.0, 7.5]),
        )
        .unwrap()
    }
}

impl System<4, 2> for Lc {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 4>, v: &SVector<S, 4>) -> S {
        v[0] * v[0] * (0.5 * self.l)
            - q[1] * q[1] * (0.5 / self.c[0])
            - q[2] * q[2] * (0.5 / self.c[1])
            - q[3] * q[3] * (0.5 / self.c[2])
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 4>) -> SMatrix<S, 2, 4> {
        let (o, z) = (S::from(1.0), S::from(0.0));
        SMatrix::from_row_slice(&[-o, z, o, z, z, -o, o, -o])
    }
}

/// Nonholonomic spherical pendulum of \[VCI\] §4.3 without its wall.
#[derive(Clone, Copy)]
pub struct Pendulum {
    pub m: f64,
    pub g: f64,
    pub l: f64,
    pub wall: Option<f64>,
}

impl Default for Pendulum {
    fn default() -> Self {
        Self {
            m: 1.0,
            g: 9.8,
            l: 2.0,
            wall: None,
        }
    }
}

pub fn f_pend<S: AdScalar>(th: S) -> S {
    let c = th.cos();
    c * c + std::f64::consts::PI
}

impl System<2, 1> for Pendulum {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        let s = q[0].sin();
        (v[0] * v[0] + s * s * v[1] * v[1]) * (0.5 * self.m * self.l * self.l)
            - q[0].cos() * (self.m * self.g * self.l)
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 2>) -> SMatrix<S, 1, 2> {
        SMatrix::from_row_slice(&[f_pend(q[0]), S::from(-1.0)])
    }
    fn boundary_count(&self) -> usize {
        usize::from(self.wall.is_some())
    }
    fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 2>) -> S {
        let r = self.wall.unwrap_or(f64::INFINITY);
        let s = q[0].sin();
        S::from(r * r) - s * s * (self.l * self.l)
    }
    fn hamiltonian<S: AdScalar>(&self, q: &SVector<S, 2>, p: &SVector<S, 2>) -> Option<S> {
        let ml2 = self.m * self.l * self.l;
        let s = q[0].sin();
        Some(
            p[0] * p[0] * (0.5 / ml2)
                + p[1] * p[1] / (s * s * (2.0 * ml2))
                + q[0].cos() * (self.m * self.g * self.l),
        )
    }
}

/// A planar pendulum on R (unconstrained, smooth): L = ½θ̇² + cos θ.
#[derive(Clone, Copy, Default)]
pub struct Planar;

impl System<1, 0> for Planar {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 1>, v: &SVector<S, 1>) -> S {
        v[0] * v[0] * 0.5 + q[0].cos()
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 1>) -> SMatrix<S, 0, 1> {
        SMatrix::zeros()
    }
    fn hamiltonian<S: AdScalar>(&self, q: &SVector<S, 1>, p: &SVector<S, 1>) -> Option<S> {
        Some(p[0] * p[0] * 0.5 - q[0].cos())
    }
}

/// A nonlinear degenerate Lagrangian: an oscillator `q⁰` coupled to an
/// algebraic variable `q¹` that carries no kinetic energy,
/// `L = ½ (v⁰)² − V(q)`, `V = ½ (q⁰)² + ½ (q¹)² + ¼ (q¹)⁴ − q⁰ q¹`
/// (degenerate_nonlinear.rs, tangent.rs).
#[derive(Clone, Copy)]
pub struct AlgebraicCoupling;

impl System<2, 0> for AlgebraicCoupling {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        let (x, y) = (q[0], q[1]);
        v[0] * v[0] * 0.5 - (x * x * 0.5 + y * y * 0.5 + y * y * y * y * 0.25 - x * y)
    }

    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
        SMatrix::zeros()
    }
}

/// The root `s` of `s + s³ = x`: the hidden constraint `∂V/∂q¹ = 0` of
/// [`AlgebraicCoupling`] solved for `q¹` (one real root, increasing in `x`).
pub fn slave(x: f64) -> f64 {
    let mut s = x.cbrt().min(x);
    for _ in 0..60 {
        s -= (s + s * s * s - x) / (1.0 + 3.0 * s * s);
    }
    s
}

/// Kepler problem in the plane, unit masses: L = ½|v|² + 1/|q|.
#[derive(Clone, Copy, Default)]
pub struct Kepler;

impl System<2, 0> for Kepler {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        v.dot(v) * 0.5 + S::from(1.0) / q.dot(q).sqrt()
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
        SMatrix::zeros()
    }
    fn hamiltonian<S: AdScalar>(&self, q: &SVector<S, 2>, p: &SVector<S, 2>) -> Option<S> {
        Some(p.dot(p) * 0.5 - S::from(1.0) / q.dot(q).sqrt())
    }
}

/// Least-squares slope of log(err) against log(h).
pub fn fitted_order(hs: &[f64], errs: &[f64]) -> f64 {
    let xs: Vec<f64> = hs.iter().map(|h| h.ln()).collect();
    let ys: Vec<f64> = errs.iter().map(|e| e.ln()).collect();
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    sxy / sxx
}

/// Least-squares line `y ≈ a + b x`; returns `(a, b)`.
pub fn linear_fit(xs: &[f64], ys: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let b = sxy / sxx;
    (my - b * mx, b)
}

/// Right-hand side of the reduced 1-DOF pendulum (docs/theory.md §5): `θ` follows
/// `L1 = ½mℓ²(1 + f(θ)² sin²θ) θ̇² − mgℓ cos θ`, `f = π + cos²θ`:
/// `θ̈ = [(g/ℓ) sinθ − sinθ cosθ (f² − 2 f sin²θ) θ̇²] / (1 + f² sin²θ)`.
pub fn reduced_pendulum_rhs(p: &Pendulum, th: f64, om: f64) -> f64 {
    let (s, c) = th.sin_cos();
    let f = std::f64::consts::PI + c * c;
    ((p.g / p.l) * s - s * c * (f * f - 2.0 * f * s * s) * om * om) / (1.0 + f * f * s * s)
}

/// Classical RK4 for the reduced pendulum from `(θ0, θ̇0)` over `[0, t]`
/// with `n` equal steps.
pub fn reduced_pendulum_rk4(p: &Pendulum, th0: f64, om0: f64, t: f64, n: usize) -> (f64, f64) {
    let dt = t / n as f64;
    let (mut th, mut om) = (th0, om0);
    for _ in 0..n {
        let k1 = (om, reduced_pendulum_rhs(p, th, om));
        let k2 = (
            om + 0.5 * dt * k1.1,
            reduced_pendulum_rhs(p, th + 0.5 * dt * k1.0, om + 0.5 * dt * k1.1),
        );
        let k3 = (
            om + 0.5 * dt * k2.1,
            reduced_pendulum_rhs(p, th + 0.5 * dt * k2.0, om + 0.5 * dt * k2.1),
        );
        let k4 = (
            om + dt * k3.1,
            reduced_pendulum_rhs(p, th + dt * k3.0, om + dt * k3.1),
        );
        th += dt / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0);
        om += dt / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1);
    }
    (th, om)
}

/// High-accuracy `θ(t)` of the reduced pendulum: RK4 at `n` and `2n` steps
/// with one Richardson extrapolation; returns `(θ, error estimate)`.
pub fn reduced_pendulum_reference(
    p: &Pendulum,
    th0: f64,
    om0: f64,
    t: f64,
    n: usize,
) -> (f64, f64) {
    let (a, _) = reduced_pendulum_rk4(p, th0, om0, t, n);
    let (b, _) = reduced_pendulum_rk4(p, th0, om0, t, 2 * n);
    ((16.0 * b - a) / 15.0, (b - a).abs() / 15.0)
}

/// Exact Kepler orbit (`GM = 1`) with semi-major axis `a` and eccentricity
/// `e`, at pericenter `(a(1−e), 0)` at `t = 0`, moving counter-clockwise:
/// position and velocity at time `t` via Kepler's equation `E − e sin E = n t`.
pub fn kepler_exact(a: f64, e: f64, t: f64) -> (SVector<f64, 2>, SVector<f64, 2>) {
    let n = a.powf(-1.5);
    let m = n * t;
    let mut ea = if e < 0.8 { m } else { std::f64::consts::PI };
    for _ in 0..100 {
        let d = (ea - e * ea.sin() - m) / (1.0 - e * ea.cos());
        ea -= d;
        if d.abs() < 1e-16 {
            break;
        }
    }
    let b = a * (1.0 - e * e).sqrt();
    let (s, c) = ea.sin_cos();
    let edot = n / (1.0 - e * c);
    (
        SVector::from([a * (c - e), b * s]),
        SVector::from([-a * s * edot, b * c * edot]),
    )
}

/// The eccentric orbit of the Kepler tests: semi-major axis and eccentricity.
pub const KEPLER_A: f64 = 1.0;
/// See [`KEPLER_A`].
pub const KEPLER_E: f64 = 0.5;

/// Initial data of [`kepler_exact`] at `t = 0`.
pub fn kepler_pericenter(a: f64, e: f64) -> (SVector<f64, 2>, SVector<f64, 2>) {
    kepler_exact(a, e, 0.0)
}

/// docs/theory.md §5 initial data: `q(0) = (0.75π, 0)`, `v(0) = (0.25π, f(θ0)·0.25π)`.
pub fn pendulum_initial() -> (SVector<f64, 2>, SVector<f64, 2>) {
    let th0 = 0.75 * PI;
    (
        SVector::from([th0, 0.0]),
        SVector::from([0.25 * PI, f_pend(th0) * 0.25 * PI]),
    )
}

/// A native run-time-sized system: `k` bodies on a line with nonlinear
/// nearest-neighbour springs and one nonholonomic row
/// `Σ_i cos(0.1 q_i) (1 + 0.01 i) q̇_i = 0`; no compile-time twin.
pub struct Chain {
    /// The number of bodies.
    pub k: usize,
}

impl DynSystem for Chain {
    fn coordinate_count(&self) -> usize {
        self.k
    }
    fn constraint_count(&self) -> usize {
        1
    }
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        let mut l = S::from(0.0);
        for i in 0..self.k {
            l += v[i] * v[i] * (1.0 + 0.01 * i as f64) * 0.5;
            if i + 1 < self.k {
                let s = q[i + 1] - q[i] - 1.0;
                l -= s * s * 0.5 + s.powi(4) * 0.25;
            }
        }
        l
    }
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        for (i, x) in a.iter_mut().enumerate() {
            *x = (q[i] * 0.1).cos() * (1.0 + i as f64 * 0.01);
        }
    }
}

/// The start of a chain of bodies on a line (any [`DynSystem`] whose
/// coordinates are the bodies' positions): near the integers, `v`
/// projected on the null space of `A(q0)` (one row: `v − a (a·v)/(a·a)`).
pub fn chain_start<Sy: DynSystem>(chain: &Sy) -> DynState {
    let (n, m) = (chain.coordinate_count(), chain.constraint_count());
    let q0 = DVector::from_fn(n, |i, _| i as f64 + 0.05 * (i as f64 * 0.9).sin());
    let mut forms = vec![0.0; m * n];
    chain.constraint_forms(q0.as_slice(), &mut forms);
    let v = DVector::from_fn(n, |i, _| 0.3 * (i as f64 * 0.37 + 1.0).cos());
    let v0 = match m {
        0 => v,
        1 => {
            let a = DVector::from_vec(forms);
            &v - &a * (a.dot(&v) / a.dot(&a))
        }
        _ => {
            let a = DMatrix::from_row_slice(m, n, &forms);
            let aat = &a * a.transpose();
            let y = aat.lu().solve(&(&a * &v)).unwrap();
            &v - a.transpose() * y
        }
    };
    dyn_state_from_velocity(chain, 0.0, &q0, &v0).unwrap()
}
