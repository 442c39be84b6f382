//! Nonholonomic spherical pendulum hitting a cylindrical surface (\[VCI\] §4.3).
//!
//! `Q = S²` in spherical coordinates `q = (θ, φ)` (polar angle from the
//! upward vertical, azimuth),
//! `L = ½ m ℓ² (v_θ² + v_φ² sin²θ) − m g ℓ cos θ`,
//! one constraint form `ω¹ = f(θ) dθ − dφ` (`v_φ = f(θ) v_θ`) with
//! `f(θ) = f₀ + f₁ cos²θ` (the paper: `f₀ = π`, `f₁ = 1`).
//!
//! Admissible set (docs/theory.md §5 note): the bob hangs near `θ = π` and swings
//! through it, where `sin θ < 0`; the cylinder of radius `R` bounds the
//! horizontal distance `ℓ |sin θ|`. \[VCI\] prints `ℓ sin θ ≤ R`, which misses
//! every impact on the far side, so we use the smooth one-piece
//! `g_0(θ) = R² − ℓ² sin²θ ≥ 0` (both sides of the axis).
//!
//! Hamiltonian (regular for `sin θ ≠ 0`):
//! `H = p_θ²/(2mℓ²) + p_φ²/(2mℓ² sin²θ) + m g ℓ cos θ`.
//!
//! Defaults: `m = 1`, `g = 9.8`, `ℓ = 2`, `R = 1.5`, forward `L_d`,
//! retraction-based constraint `ω_{d+}`, `q(0) = (0.75π, 0)`,
//! `v(0) = (0.25π, f(θ(0)) · 0.25π)` (= the paper's `0.25(π + 0.5)π` up to
//! rounding, computed from the constraint so that it holds for any `f`),
//! `h = 1e-3`, `T = 5` (the paper's long run: `h = 1e-4`, `T = 100`).

use crate::{Drawing, Model, ModelError, ParameterInfo, RunSetup, Shape, validate};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, System};
use nalgebra::{SMatrix, SVector};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Parameters of [`Pendulum`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PendulumParams {
    /// Mass `m` of the bob (kg), `> 0`. Default 1.
    pub m: f64,
    /// Gravitational acceleration `g` (m/s²), `≥ 0`. Default 9.8.
    pub g: f64,
    /// Length `ℓ` of the pendulum (m), `> 0`. Default 2.
    pub l: f64,
    /// Radius `R` of the cylinder around the vertical axis (m), `> 0`.
    /// Default 1.5.
    pub r: f64,
    /// Constant term `f₀` of `f(θ) = f₀ + f₁ cos²θ` (dimensionless). Default π.
    pub f0: f64,
    /// Coefficient `f₁` of `f(θ) = f₀ + f₁ cos²θ` (dimensionless). Default 1.
    pub f1: f64,
}

impl Default for PendulumParams {
    fn default() -> Self {
        PendulumParams {
            m: 1.0,
            g: 9.8,
            l: 2.0,
            r: 1.5,
            f0: PI,
            f1: 1.0,
        }
    }
}

/// A spherical pendulum whose azimuthal and polar velocities are tied by
/// `v_φ = f(θ) v_θ`, inside a vertical cylinder.
#[derive(Debug, Clone, PartialEq)]
pub struct Pendulum {
    params: PendulumParams,
}

impl Pendulum {
    /// `f(θ) = f₀ + f₁ cos²θ`.
    pub fn f<S: AdScalar>(&self, theta: S) -> S {
        let c = theta.cos();
        c * c * self.params.f1 + self.params.f0
    }
}

impl System<2, 1> for Pendulum {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        let p = &self.params;
        let s = q[0].sin();
        (v[0] * v[0] + v[1] * v[1] * s * s) * (0.5 * p.m * p.l * p.l)
            - q[0].cos() * (p.m * p.g * p.l)
    }

    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 2>) -> SMatrix<S, 1, 2> {
        SMatrix::<S, 1, 2>::new(self.f(q[0]), S::from(-1.0))
    }

    fn boundary_count(&self) -> usize {
        1
    }

    fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 2>) -> S {
        let p = &self.params;
        let s = q[0].sin();
        S::from(p.r * p.r) - s * s * (p.l * p.l)
    }

    fn hamiltonian<S: AdScalar>(&self, q: &SVector<S, 2>, p: &SVector<S, 2>) -> Option<S> {
        let pr = &self.params;
        let ml2 = pr.m * pr.l * pr.l;
        let s = q[0].sin();
        Some(
            p[0] * p[0] * (0.5 / ml2)
                + p[1] * p[1] / (s * s) * (0.5 / ml2)
                + q[0].cos() * (pr.m * pr.g * pr.l),
        )
    }
}

impl Model<2, 1> for Pendulum {
    type Params = PendulumParams;
    const NAME: &'static str = "pendulum";
    const DESCRIPTION: &'static str = "nonholonomic spherical pendulum (v_φ = f(θ) v_θ) hitting a cylinder R^2 - l^2 sin^2θ >= 0 ([VCI] §4.3)";
    const PARAMETERS: &'static [ParameterInfo] = &[
        ParameterInfo::mass("mass of the bob"),
        ParameterInfo::GRAVITY,
        ParameterInfo::float("l", "ℓ", "m", "length of the pendulum"),
        ParameterInfo::float("r", "R", "m", "radius of the cylinder"),
        ParameterInfo::float(
            "f0",
            "f₀",
            "1",
            "constant term of f(θ) = f0 + f1 cos^2θ in the constraint v_φ = f(θ) v_θ",
        ),
        ParameterInfo::float(
            "f1",
            "f₁",
            "1",
            "cos^2θ coefficient of f(θ) = f0 + f1 cos^2θ",
        ),
    ];

    fn coordinate_names() -> [&'static str; 2] {
        ["theta", "phi"]
    }

    fn new(params: PendulumParams) -> Result<Self, ModelError> {
        validate::positive(Self::NAME, "m", params.m)?;
        validate::non_negative(Self::NAME, "g", params.g)?;
        validate::positive(Self::NAME, "l", params.l)?;
        validate::positive(Self::NAME, "r", params.r)?;
        validate::finite(Self::NAME, "f0", params.f0)?;
        validate::finite(Self::NAME, "f1", params.f1)?;
        Ok(Pendulum { params })
    }

    fn params(&self) -> &PendulumParams {
        &self.params
    }

    fn run_defaults(&self) -> RunSetup<2> {
        let theta0 = 0.75 * PI;
        let v_theta = 0.25 * PI;
        RunSetup {
            q0: SVector::from([theta0, 0.0]),
            v0: SVector::from([v_theta, self.f(theta0) * v_theta]),
            h: 1e-3,
            t_end: 5.0,
            discretization: Discretization::Forward,
            constraint: ConstraintDiscretization::Retraction,
        }
    }

    fn boundary_name(&self, _j: usize) -> String {
        "cylinder R^2 - l^2 sin^2θ >= 0".into()
    }

    fn drawing(&self) -> Option<&dyn Drawing<2>> {
        Some(self)
    }
}

impl Pendulum {
    /// The bob seen from above: `ℓ sinθ (cos φ, sin φ)`.
    fn bob(&self, q: &SVector<f64, 2>) -> [f64; 2] {
        let r = self.params.l * q[0].sin();
        [r * q[1].cos(), r * q[1].sin()]
    }
}

/// Seen from above: the cylinder (a circle of radius `R` about the pivot's
/// axis), the rod from the pivot to the bob and the bob at
/// `ℓ sinθ (cos φ, sin φ)`.
impl Drawing<2> for Pendulum {
    fn walls(&self) -> Vec<Shape> {
        vec![Shape::Circle {
            center: [0.0, 0.0],
            radius: self.params.r,
        }]
    }

    fn body(&self, q: &SVector<f64, 2>) -> Vec<Shape> {
        let bob = self.bob(q);
        vec![
            Shape::Polyline {
                points: vec![[0.0, 0.0], bob],
                closed: false,
            },
            Shape::Dot(bob),
        ]
    }

    fn contact(&self, q: &SVector<f64, 2>, _piece: usize) -> [f64; 2] {
        self.bob(q)
    }
}
