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
//! Defaults: `m = 1`, `g = 9.8`, `l = 1`, `I = m l²/3` (docs/theory.md §5; the paper
//! prints no inertia for the star: `m l²/3` is that of two crossed thin rods
//! of length `2l` and total mass `m` about their centre), midpoint `L_d`,
//! and the ellipse's run: `q(0) = (π/2, 0, 3.5)`, `v(0) = (−3, 2, 0)`,
//! `h = 1e-2`, `T = 25`.

use crate::drawing::{FLOOR, rotate};
use crate::ellipse::{planar_rigid_defaults, planar_rigid_hamiltonian, planar_rigid_lagrangian};
use crate::{Drawing, Heading, Model, ModelError, ParameterInfo, RunSetup, Shape, validate};
use diracvi_geometry::{AdScalar, System};
use nalgebra::{SMatrix, SVector};
use serde::{Deserialize, Serialize};

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
        planar_rigid_lagrangian(p.m, p.g, self.inertia, q, v)
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
        Some(planar_rigid_hamiltonian(pr.m, pr.g, self.inertia, q, p))
    }
}

impl Model<3, 0> for Star {
    type Params = StarParams;
    const NAME: &'static str = "star";
    const DESCRIPTION: &'static str = "four-point star rotating and bouncing on the floor y >= l(|sinθ| + |cosθ|), four smooth pieces ([VCI] §4.2)";
    const PARAMETERS: &'static [ParameterInfo] = &[
        ParameterInfo::mass("mass"),
        ParameterInfo::GRAVITY,
        ParameterInfo::float("l", "l", "m", "half-length of the star (total length 2l)"),
        ParameterInfo::optional_float(
            "inertia",
            "I_φ",
            "kg m^2",
            "moment of inertia about the centre (none: m l^2/3)",
        ),
    ];

    fn coordinate_names() -> [&'static str; 3] {
        ["theta", "x", "y"]
    }

    fn new(params: StarParams) -> Result<Self, ModelError> {
        validate::positive(Self::NAME, "m", params.m)?;
        validate::non_negative(Self::NAME, "g", params.g)?;
        validate::positive(Self::NAME, "l", params.l)?;
        let inertia = validate::positive_or(
            Self::NAME,
            "inertia",
            params.inertia,
            params.m * params.l * params.l / 3.0,
        )?;
        Ok(Star { params, inertia })
    }

    fn params(&self) -> &StarParams {
        &self.params
    }

    fn run_defaults(&self) -> RunSetup<3> {
        planar_rigid_defaults()
    }

    fn boundary_name(&self, j: usize) -> String {
        let (s1, s2) = Self::piece_signs(j);
        let sign = |s: f64| if s > 0.0 { '+' } else { '-' };
        format!("floor y >= l({}sinθ {} cosθ)", sign(s1), sign(s2))
    }

    /// The horizontal momentum `p_x = m ẋ`: `x` is cyclic in `L` and in
    /// every floor piece, so every run keeps it exactly, through impacts
    /// too (the impulses have no `dx` component).
    fn invariant_names(&self) -> Vec<String> {
        vec!["p_x".into()]
    }

    fn invariant_values(&self, _q: &SVector<f64, 3>, p: &SVector<f64, 3>, out: &mut [f64]) {
        out[0] = p[1];
    }

    fn drawing(&self) -> Option<&dyn Drawing<3>> {
        Some(self)
    }
}

/// Side view: the floor `y = 0` and the star's outline: its four tips at
/// `−l (s₁, s₂)` in the body frame (the points the pieces `g_j` keep above
/// the floor), joined through inner corners at `l/3` on the body axes
/// (only the tips touch the floor; the inner corners are for the eye).
impl Drawing<3> for Star {
    fn walls(&self) -> Vec<Shape> {
        vec![FLOOR]
    }

    fn body(&self, q: &SVector<f64, 3>) -> Vec<Shape> {
        let l = self.params.l;
        let center = [q[1], q[2]];
        let inner = l / 3.0;
        let body = [
            [l, l],
            [0.0, inner],
            [-l, l],
            [-inner, 0.0],
            [-l, -l],
            [0.0, -inner],
            [l, -l],
            [inner, 0.0],
        ];
        vec![
            Shape::Polyline {
                points: body.iter().map(|&b| rotate(center, q[0], b)).collect(),
                closed: true,
            },
            Shape::Dot(center),
        ]
    }

    /// Tip `j`: `(x, y) + R(θ) (−l s₁, −l s₂)`, whose height is
    /// `y − l (s₁ sinθ + s₂ cosθ)` (`g_j` above the floor).
    fn contact(&self, q: &SVector<f64, 3>, piece: usize) -> [f64; 2] {
        let (s1, s2) = Self::piece_signs(piece);
        let l = self.params.l;
        rotate([q[1], q[2]], q[0], [-l * s1, -l * s2])
    }

    /// The body's first axis, from the centre along `θ`, `l` long.
    fn heading(&self, q: &SVector<f64, 3>) -> Option<Heading> {
        Some(Heading {
            center: [q[1], q[2]],
            angle: q[0],
            length: Some(self.params.l),
        })
    }
}
