//! Bouncing ellipse (\[VCI\] §4.2).
//!
//! `Q = SE(2)` in coordinates `q = (θ, x, y)` (rotation angle, position of
//! the centre), `L = ½ m (v_x² + v_y²) + ½ I v_θ² − m g y`, no constraints.
//! The lowest point of an ellipse with semi-axes `a, b` rotated by `θ` lies
//! `φ(θ) = √(a² sin²θ + b² cos²θ)` below its centre, so the admissible set is
//! `y ≥ φ(θ)`: one smooth piece `g_0 = y − φ(θ)`. Hamiltonian
//! `H = (p_x² + p_y²)/(2m) + p_θ²/(2I) + m g y`.
//!
//! Defaults: `m = 1`, `g = 9.8`, `a = 1`, `b = 0.5`, `I = m(a² + b²)/4`
//! (the inertia of a uniform elliptic disk about its centre), midpoint
//! `L_d`, `q(0) = (π/2, 0, 3.5)`, `v(0) = (−3, 2, 0)`, `h = 1e-2`, `T = 25`.

use crate::{Model, ModelError, ParameterInfo, ParameterKind, RunSetup, validate};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, System};
use nalgebra::{SMatrix, SVector};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Parameters of [`Ellipse`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EllipseParams {
    /// Mass `m` (kg), `> 0`. Default 1.
    pub m: f64,
    /// Gravitational acceleration `g` (m/s²), `≥ 0`. Default 9.8.
    pub g: f64,
    /// Semi-axis `a` (m) along the body's first axis, `> 0`. Default 1.
    pub a: f64,
    /// Semi-axis `b` (m) along the body's second axis, `> 0`. Default 0.5.
    pub b: f64,
    /// Moment of inertia `I_φ` about the centre (kg·m²), `> 0`; `None`
    /// (the default) derives the uniform-disk value `m (a² + b²)/4`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inertia: Option<f64>,
}

impl Default for EllipseParams {
    fn default() -> Self {
        EllipseParams {
            m: 1.0,
            g: 9.8,
            a: 1.0,
            b: 0.5,
            inertia: None,
        }
    }
}

/// A rigid ellipse rotating about its centre and bouncing on the floor.
#[derive(Debug, Clone, PartialEq)]
pub struct Ellipse {
    params: EllipseParams,
    inertia: f64,
}

impl Ellipse {
    /// The moment of inertia in use (given, or `m (a² + b²)/4`).
    pub fn inertia(&self) -> f64 {
        self.inertia
    }
}

impl System<3, 0> for Ellipse {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 3>, v: &SVector<S, 3>) -> S {
        let p = &self.params;
        (v[1] * v[1] + v[2] * v[2]) * (0.5 * p.m) + v[0] * v[0] * (0.5 * self.inertia)
            - q[2] * (p.m * p.g)
    }

    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 3>) -> SMatrix<S, 0, 3> {
        SMatrix::zeros()
    }

    fn boundary_count(&self) -> usize {
        1
    }

    fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 3>) -> S {
        let p = &self.params;
        let (s, c) = (q[0].sin(), q[0].cos());
        q[2] - (s * s * (p.a * p.a) + c * c * (p.b * p.b)).sqrt()
    }

    fn hamiltonian<S: AdScalar>(&self, q: &SVector<S, 3>, p: &SVector<S, 3>) -> Option<S> {
        let pr = &self.params;
        Some(
            (p[1] * p[1] + p[2] * p[2]) * (0.5 / pr.m)
                + p[0] * p[0] * (0.5 / self.inertia)
                + q[2] * (pr.m * pr.g),
        )
    }
}

impl Model<3, 0> for Ellipse {
    type Params = EllipseParams;
    const NAME: &'static str = "ellipse";
    const DESCRIPTION: &'static str = "rigid ellipse rotating and bouncing on the floor y >= sqrt(a^2 sin^2θ + b^2 cos^2θ) ([VCI] §4.2)";
    const PARAMETERS: &'static [ParameterInfo] = &[
        ParameterInfo {
            name: "m",
            symbol: "m",
            unit: "kg",
            kind: ParameterKind::Float,
            description: "mass",
        },
        ParameterInfo {
            name: "g",
            symbol: "g",
            unit: "m/s^2",
            kind: ParameterKind::Float,
            description: "gravitational acceleration",
        },
        ParameterInfo {
            name: "a",
            symbol: "a",
            unit: "m",
            kind: ParameterKind::Float,
            description: "first semi-axis",
        },
        ParameterInfo {
            name: "b",
            symbol: "b",
            unit: "m",
            kind: ParameterKind::Float,
            description: "second semi-axis",
        },
        ParameterInfo {
            name: "inertia",
            symbol: "I_φ",
            unit: "kg m^2",
            kind: ParameterKind::OptionalFloat,
            description: "moment of inertia about the centre (none: m (a^2 + b^2)/4)",
        },
    ];

    fn coordinate_names() -> [&'static str; 3] {
        ["theta", "x", "y"]
    }

    fn new(params: EllipseParams) -> Result<Self, ModelError> {
        validate::positive(Self::NAME, "m", params.m)?;
        validate::non_negative(Self::NAME, "g", params.g)?;
        validate::positive(Self::NAME, "a", params.a)?;
        validate::positive(Self::NAME, "b", params.b)?;
        let inertia = match params.inertia {
            Some(i) => {
                validate::positive(Self::NAME, "inertia", i)?;
                i
            }
            None => params.m * (params.a * params.a + params.b * params.b) / 4.0,
        };
        Ok(Ellipse { params, inertia })
    }

    fn params(&self) -> &EllipseParams {
        &self.params
    }

    fn run_defaults(&self) -> RunSetup<3> {
        RunSetup {
            q0: SVector::from([PI / 2.0, 0.0, 3.5]),
            v0: SVector::from([-3.0, 2.0, 0.0]),
            h: 1e-2,
            t_end: 25.0,
            discretization: Discretization::Midpoint,
            constraint: ConstraintDiscretization::Midpoint,
        }
    }

    fn boundary_name(&self, _j: usize) -> String {
        "floor y >= sqrt(a^2 sin^2θ + b^2 cos^2θ)".into()
    }
}
