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

use crate::drawing::{FLOOR, ellipse_outline};
use crate::{Drawing, Heading, Model, ModelError, ParameterInfo, RunSetup, Shape, validate};
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

/// `L = ½ m (v_x² + v_y²) + ½ I v_θ² − m g y` of a planar rigid body in
/// coordinates `q = (θ, x, y)` (\[VCI\] §4.2), shared with [`Star`](crate::Star).
pub(crate) fn planar_rigid_lagrangian<S: AdScalar>(
    m: f64,
    g: f64,
    inertia: f64,
    q: &SVector<S, 3>,
    v: &SVector<S, 3>,
) -> S {
    (v[1] * v[1] + v[2] * v[2]) * (0.5 * m) + v[0] * v[0] * (0.5 * inertia) - q[2] * (m * g)
}

/// Its Hamiltonian `H = (p_x² + p_y²)/(2m) + p_θ²/(2I) + m g y`.
pub(crate) fn planar_rigid_hamiltonian<S: AdScalar>(
    m: f64,
    g: f64,
    inertia: f64,
    q: &SVector<S, 3>,
    p: &SVector<S, 3>,
) -> S {
    (p[1] * p[1] + p[2] * p[2]) * (0.5 / m) + p[0] * p[0] * (0.5 / inertia) + q[2] * (m * g)
}

/// The run both rigid bodies share (\[VCI\] §4.2): midpoint `L_d`,
/// `q(0) = (π/2, 0, 3.5)`, `v(0) = (−3, 2, 0)`, `h = 1e-2`, `T = 25`.
pub(crate) fn planar_rigid_defaults() -> RunSetup<3> {
    RunSetup {
        q0: SVector::from([PI / 2.0, 0.0, 3.5]),
        v0: SVector::from([-3.0, 2.0, 0.0]),
        h: 1e-2,
        t_end: 25.0,
        discretization: Discretization::Midpoint,
        constraint: ConstraintDiscretization::Midpoint,
    }
}

impl System<3, 0> for Ellipse {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 3>, v: &SVector<S, 3>) -> S {
        let p = &self.params;
        planar_rigid_lagrangian(p.m, p.g, self.inertia, q, v)
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
        Some(planar_rigid_hamiltonian(pr.m, pr.g, self.inertia, q, p))
    }
}

impl Model<3, 0> for Ellipse {
    type Params = EllipseParams;
    const NAME: &'static str = "ellipse";
    const DESCRIPTION: &'static str = "rigid ellipse rotating and bouncing on the floor y >= sqrt(a^2 sin^2θ + b^2 cos^2θ) ([VCI] §4.2)";
    const PARAMETERS: &'static [ParameterInfo] = &[
        ParameterInfo::mass("mass"),
        ParameterInfo::GRAVITY,
        ParameterInfo::float("a", "a", "m", "first semi-axis"),
        ParameterInfo::float("b", "b", "m", "second semi-axis"),
        ParameterInfo::optional_float(
            "inertia",
            "I_φ",
            "kg m^2",
            "moment of inertia about the centre (none: m (a^2 + b^2)/4)",
        ),
    ];

    fn coordinate_names() -> [&'static str; 3] {
        ["theta", "x", "y"]
    }

    fn new(params: EllipseParams) -> Result<Self, ModelError> {
        validate::positive(Self::NAME, "m", params.m)?;
        validate::non_negative(Self::NAME, "g", params.g)?;
        validate::positive(Self::NAME, "a", params.a)?;
        validate::positive(Self::NAME, "b", params.b)?;
        let inertia = validate::positive_or(
            Self::NAME,
            "inertia",
            params.inertia,
            params.m * (params.a * params.a + params.b * params.b) / 4.0,
        )?;
        Ok(Ellipse { params, inertia })
    }

    fn params(&self) -> &EllipseParams {
        &self.params
    }

    fn run_defaults(&self) -> RunSetup<3> {
        planar_rigid_defaults()
    }

    fn boundary_name(&self, _j: usize) -> String {
        "floor y >= sqrt(a^2 sin^2θ + b^2 cos^2θ)".into()
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

/// Points of the drawn ellipse outline.
const OUTLINE_POINTS: usize = 36;

/// Side view: the floor `y = 0`, the ellipse's outline (semi-axis `a`
/// along the body axis turned by `θ` from the `x`-axis) and its centre.
impl Drawing<3> for Ellipse {
    fn walls(&self) -> Vec<Shape> {
        vec![FLOOR]
    }

    fn body(&self, q: &SVector<f64, 3>) -> Vec<Shape> {
        let p = &self.params;
        let center = [q[1], q[2]];
        vec![
            Shape::Polyline {
                points: ellipse_outline(center, p.a, p.b, q[0], OUTLINE_POINTS),
                closed: true,
            },
            Shape::Dot(center),
        ]
    }

    /// The lowest point: `φ(θ)` below the centre, shifted sideways by
    /// `(b² − a²) sinθ cosθ / φ(θ)`.
    fn contact(&self, q: &SVector<f64, 3>, _piece: usize) -> [f64; 2] {
        let p = &self.params;
        let (s, c) = q[0].sin_cos();
        let phi = (p.a * p.a * s * s + p.b * p.b * c * c).sqrt();
        [q[1] + (p.b * p.b - p.a * p.a) * s * c / phi, q[2] - phi]
    }

    /// The body axis of semi-axis `a`, from the centre along `θ`.
    fn heading(&self, q: &SVector<f64, 3>) -> Option<Heading> {
        Some(Heading {
            center: [q[1], q[2]],
            angle: q[0],
            length: Some(self.params.a),
        })
    }
}
