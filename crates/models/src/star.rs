//! Four-point star bouncing on the floor (\[VCI\] §4.2, after \[4, eq. (81)\]).
//!
//! `Q = SE(2)` in coordinates `q = (θ, x, y)`,
//! `L = ½ m (v_x² + v_y²) + ½ I v_θ² − m g y`, no constraints. The paper's
//! admissible set `y ≥ l(|sin θ| + |cos θ|)` has a non-smooth boundary; since
//! `|sin θ| + |cos θ| = max over s₁, s₂ ∈ {±1} of (s₁ sin θ + s₂ cos θ)`, it is
//! the intersection of four smooth pieces
//!
//! `g_j(q) = y − l (s₁ sin θ + s₂ cos θ) ≥ 0`, with
//! `j = 0: (+, +)`, `1: (−, +)`, `2: (+, −)`, `3: (−, −)`
//! (`s₁ = −1` iff bit 0 of `j` is set, `s₂ = −1` iff bit 1 is set).
//!
//! Defaults: `m = 1`, `g = 9.8`, `l = 1`, `I = m l²/3` (SPEC §5; the paper
//! prints no inertia for the star: `m l²/3` is that of two crossed thin rods
//! of length `2l` and total mass `m` about their centre), midpoint `L_d`,
//! and the ellipse's run: `q(0) = (π/2, 0, 3.5)`, `v(0) = (−3, 2, 0)`,
//! `h = 1e-2`, `T = 25`.

use crate::{Model, ModelError, ParameterInfo, ParameterKind, RunSetup, validate};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, System};
use nalgebra::{SMatrix, SVector};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Parameters of [`Star`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StarParams {
    /// Mass `m` (kg), `> 0`. Default 1.
    pub m: f64,
    /// Gravitational acceleration `g` (m/s²), `≥ 0`. Default 9.8.
    pub g: f64,
    /// Half-length `l` (m) of the star (its total length is `2l`), `> 0`.
    /// Default 1.
    pub l: f64,
    /// Moment of inertia about the centre (kg·m²), `> 0`; `None` (the
    /// default) derives `m l²/3`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inertia: Option<f64>,
}

impl Default for StarParams {
    fn default() -> Self {
        StarParams {
            m: 1.0,
            g: 9.8,
            l: 1.0,
            inertia: None,
        }
    }
}

/// A four-point star-shaped rigid body rotating about its centre and
/// bouncing on the floor.
#[derive(Debug, Clone, PartialEq)]
pub struct Star {
    params: StarParams,
    inertia: f64,
}

impl Star {
    /// The signs `(s₁, s₂)` of boundary piece `j`.
    pub fn piece_signs(j: usize) -> (f64, f64) {
        (
            if j & 1 == 0 { 1.0 } else { -1.0 },
            if j & 2 == 0 { 1.0 } else { -1.0 },
        )
    }

    /// The moment of inertia in use (given, or `m l²/3`).
    pub fn inertia(&self) -> f64 {
        self.inertia
    }
}

impl System<3, 0> for Star {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 3>, v: &SVector<S, 3>) -> S {
        let p = &self.params;
        (v[1] * v[1] + v[2] * v[2]) * (0.5 * p.m) + v[0] * v[0] * (0.5 * self.inertia)
            - q[2] * (p.m * p.g)
    }

    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 3>) -> SMatrix<S, 0, 3> {
        SMatrix::zeros()
    }

    fn boundary_count(&self) -> usize {
        4
    }

    fn boundary<S: AdScalar>(&self, j: usize, q: &SVector<S, 3>) -> S {
        let (s1, s2) = Self::piece_signs(j);
        let l = self.params.l;
        q[2] - q[0].sin() * (l * s1) - q[0].cos() * (l * s2)
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

impl Model<3, 0> for Star {
    type Params = StarParams;
    const NAME: &'static str = "star";
    const DESCRIPTION: &'static str = "four-point star rotating and bouncing on the floor y >= l(|sinθ| + |cosθ|), four smooth pieces ([VCI] §4.2)";
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
            name: "l",
            symbol: "l",
            unit: "m",
            kind: ParameterKind::Float,
            description: "half-length of the star (total length 2l)",
        },
        ParameterInfo {
            name: "inertia",
            symbol: "I_φ",
            unit: "kg m^2",
            kind: ParameterKind::OptionalFloat,
            description: "moment of inertia about the centre (none: m l^2/3)",
        },
    ];

    fn coordinate_names() -> [&'static str; 3] {
        ["theta", "x", "y"]
    }

    fn new(params: StarParams) -> Result<Self, ModelError> {
        validate::positive(Self::NAME, "m", params.m)?;
        validate::non_negative(Self::NAME, "g", params.g)?;
        validate::positive(Self::NAME, "l", params.l)?;
        let inertia = match params.inertia {
            Some(i) => {
                validate::positive(Self::NAME, "inertia", i)?;
                i
            }
            None => params.m * params.l * params.l / 3.0,
        };
        Ok(Star { params, inertia })
    }

    fn params(&self) -> &StarParams {
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

    fn boundary_name(&self, j: usize) -> String {
        let (s1, s2) = Self::piece_signs(j);
        let sign = |s: f64| if s > 0.0 { '+' } else { '-' };
        format!("floor y >= l({}sinθ {} cosθ)", sign(s1), sign(s2))
    }
}
