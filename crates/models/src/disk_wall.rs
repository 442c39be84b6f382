//! Vertical rolling disk hitting a wall (\[INC\] §6, after Yoshimura–Marsden
//! 2006a §7.1).
//!
//! Coordinates `q = (x, y, θ, φ)`: `(x, y)` the contact point of the disk
//! with the ground, `θ` the rotation (rolling) angle, `φ` the heading angle
//! from the `x`-axis. \[INC\] §6:
//! `L = ½ m (v_x² + v_y²) + ½ (I v_θ² + J v_φ²)`, so `I` multiplies the
//! rolling rate `θ̇` (inertia about the axle) and `J` the heading rate `φ̇`
//! (inertia about the vertical diameter); for a thin uniform disk
//! `I = m R²/2`, `J = m R²/4`, which the defaults `I = 0.5`, `J = 0.25` with
//! `m = R = 1` match. Rolling without slipping:
//! `ω¹ = dx − R cos φ dθ`, `ω² = dy − R sin φ dθ`.
//!
//! Admissible set (one piece by default, as printed in \[INC\] §6):
//! `g_0 = wall − (y + R sin φ) ≥ 0`. The disk's plane is vertical and
//! contains the heading `(cos φ, sin φ)`, so `(x + R cos φ, y + R sin φ)` is
//! the ground projection of the disk's *front* rim point; the wall `y = wall`
//! is hit when that point reaches it. \[INC\] uses only this piece. Once the
//! heading turns past `φ = π` (`sin φ < 0`) the rear rim point
//! `(x − R cos φ, y − R sin φ)` is the one nearer the wall and could cross it
//! unnoticed; `rear_contact = true` adds it as a second piece
//! `g_1 = wall − (y − R sin φ) ≥ 0` (together: `y + R|sin φ| ≤ wall`, the
//! analogue of \[NIC\]'s two table pieces). Default `false`, as in the paper.
//! Hamiltonian
//! `H = (p_x² + p_y²)/(2m) + p_θ²/(2I) + p_φ²/(2J)`.
//!
//! Defaults: `m = 1`, `I = 0.5`, `J = 0.25`, `R = 1`, `wall = 10`, midpoint
//! `L_d` + midpoint discrete constraint (docs/theory.md §2–5),
//! `q(0) = (0, 0, 0, π/3)`, `v_θ(0) = 2`, `v_φ(0) = 0.1`,
//! `(v_x, v_y)(0) = R v_θ (cos φ, sin φ)` from the constraints,
//! `h = 1e-2`, `T = 50`.

use crate::{Drawing, Heading, Model, ModelError, ParameterInfo, RunSetup, Shape, validate};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, System};
use nalgebra::{SMatrix, SVector};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Parameters of [`DiskWall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiskWallParams {
    /// Mass `m` (kg), `> 0`. Default 1.
    pub m: f64,
    /// Moment of inertia `I` about the axle (kg·m²), multiplying `θ̇²`, `> 0`.
    /// Default 0.5.
    pub i: f64,
    /// Moment of inertia `J` about the vertical diameter (kg·m²),
    /// multiplying `φ̇²`, `> 0`. Default 0.25.
    pub j: f64,
    /// Radius `R` of the disk (m), `> 0`. Default 1.
    pub r: f64,
    /// Position of the wall `y = wall` (m); admissible iff
    /// `y + R sin φ ≤ wall`. Default 10.
    pub wall: f64,
    /// Also keep the rear rim point behind the wall (second piece
    /// `y − R sin φ ≤ wall`). Default `false` (\[INC\] §6 has one piece).
    pub rear_contact: bool,
}

impl Default for DiskWallParams {
    fn default() -> Self {
        DiskWallParams {
            m: 1.0,
            i: 0.5,
            j: 0.25,
            r: 1.0,
            wall: 10.0,
            rear_contact: false,
        }
    }
}

/// A vertical disk rolling without slipping on the plane, in front of the
/// wall `y = wall`.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskWall {
    params: DiskWallParams,
}

/// The rolling-disk Lagrangian shared by both disk models.
pub(crate) fn disk_lagrangian<S: AdScalar>(m: f64, i: f64, j: f64, v: &SVector<S, 4>) -> S {
    (v[0] * v[0] + v[1] * v[1]) * (0.5 * m) + v[2] * v[2] * (0.5 * i) + v[3] * v[3] * (0.5 * j)
}

/// The rolling-disk Hamiltonian shared by both disk models.
pub(crate) fn disk_hamiltonian<S: AdScalar>(m: f64, i: f64, j: f64, p: &SVector<S, 4>) -> S {
    (p[0] * p[0] + p[1] * p[1]) * (0.5 / m) + p[2] * p[2] * (0.5 / i) + p[3] * p[3] * (0.5 / j)
}

/// Rows `dx − R cos φ dθ` and `dy − R sin φ dθ`.
pub(crate) fn rolling_constraints<S: AdScalar>(r: f64, q: &SVector<S, 4>) -> SMatrix<S, 2, 4> {
    let (one, zero) = (S::from(1.0), S::from(0.0));
    let (s, c) = (q[3].sin(), q[3].cos());
    SMatrix::<S, 2, 4>::new(one, zero, -(c * r), zero, zero, one, -(s * r), zero)
}

/// The disk parameters `m, i, j, r` must be positive.
pub(crate) fn validate_disk(
    model: &'static str,
    m: f64,
    i: f64,
    j: f64,
    r: f64,
) -> Result<(), ModelError> {
    validate::positive(model, "m", m)?;
    validate::positive(model, "i", i)?;
    validate::positive(model, "j", j)?;
    validate::positive(model, "r", r)
}

/// Initial data with `(v_x, v_y) = R v_θ (cos φ, sin φ)`.
pub(crate) fn rolling_initial(
    r: f64,
    q0: [f64; 4],
    v_theta: f64,
    v_phi: f64,
) -> (SVector<f64, 4>, SVector<f64, 4>) {
    let phi = q0[3];
    (
        SVector::from(q0),
        SVector::from([
            r * v_theta * phi.cos(),
            r * v_theta * phi.sin(),
            v_theta,
            v_phi,
        ]),
    )
}

/// Parameter entries shared by both disk models.
macro_rules! disk_parameters {
    ($($extra:expr),* $(,)?) => {
        &[
            ParameterInfo::mass("mass of the disk"),
            ParameterInfo::float("i", "I", "kg m^2", "moment of inertia about the axle (multiplies the rolling rate θ')"),
            ParameterInfo::float("j", "J", "kg m^2", "moment of inertia about the vertical diameter (multiplies the heading rate φ')"),
            ParameterInfo::float("r", "R", "m", "radius of the disk"),
            $($extra),*
        ]
    };
}
pub(crate) use disk_parameters;

impl System<4, 2> for DiskWall {
    fn lagrangian<S: AdScalar>(&self, _q: &SVector<S, 4>, v: &SVector<S, 4>) -> S {
        let p = &self.params;
        disk_lagrangian(p.m, p.i, p.j, v)
    }

    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 4>) -> SMatrix<S, 2, 4> {
        rolling_constraints(self.params.r, q)
    }

    fn boundary_count(&self) -> usize {
        if self.params.rear_contact { 2 } else { 1 }
    }

    fn boundary<S: AdScalar>(&self, j: usize, q: &SVector<S, 4>) -> S {
        let sign = if j == 0 { 1.0 } else { -1.0 };
        S::from(self.params.wall) - q[1] - q[3].sin() * (sign * self.params.r)
    }

    fn hamiltonian<S: AdScalar>(&self, _q: &SVector<S, 4>, p: &SVector<S, 4>) -> Option<S> {
        let pr = &self.params;
        Some(disk_hamiltonian(pr.m, pr.i, pr.j, p))
    }
}

impl Model<4, 2> for DiskWall {
    type Params = DiskWallParams;
    const NAME: &'static str = "disk-wall";
    const DESCRIPTION: &'static str =
        "vertical disk rolling without slipping, hitting the wall y + R sinφ = wall ([INC] §6)";
    const PARAMETERS: &'static [ParameterInfo] = disk_parameters!(
        ParameterInfo::float(
            "wall",
            "y_wall",
            "m",
            "position of the wall y = wall (admissible iff y + R sinφ <= wall)"
        ),
        ParameterInfo::switch(
            "rear_contact",
            "also keep the rear rim point behind the wall, y - R sinφ <= wall (false: [INC]'s single piece)"
        ),
    );

    fn coordinate_names() -> [&'static str; 4] {
        ["x", "y", "theta", "phi"]
    }

    fn new(params: DiskWallParams) -> Result<Self, ModelError> {
        validate_disk(Self::NAME, params.m, params.i, params.j, params.r)?;
        validate::finite(Self::NAME, "wall", params.wall)?;
        Ok(DiskWall { params })
    }

    fn params(&self) -> &DiskWallParams {
        &self.params
    }

    fn run_defaults(&self) -> RunSetup<4> {
        let (q0, v0) = rolling_initial(self.params.r, [0.0, 0.0, 0.0, PI / 3.0], 2.0, 0.1);
        RunSetup {
            q0,
            v0,
            h: 1e-2,
            t_end: 50.0,
            discretization: Discretization::Midpoint,
            constraint: ConstraintDiscretization::Midpoint,
        }
    }

    fn boundary_name(&self, j: usize) -> String {
        if j == 0 {
            "wall, front rim point y + R sinφ <= wall".into()
        } else {
            "wall, rear rim point y - R sinφ <= wall".into()
        }
    }

    fn drawing(&self) -> Option<&dyn Drawing<4>> {
        Some(self)
    }
}

/// Seen from above: the disk (vertical, so a segment of length `2R` along
/// its heading, between the rim points `(x ± R cos φ, y ± R sin φ)`) and its
/// contact point `(x, y)`.
pub(crate) fn disk_body(r: f64, q: &SVector<f64, 4>) -> Vec<Shape> {
    vec![
        Shape::Polyline {
            points: vec![rim_point(r, q, -1.0), rim_point(r, q, 1.0)],
            closed: false,
        },
        Shape::Dot([q[0], q[1]]),
    ]
}

/// The disk's heading: from its contact point `(x, y)` along `φ`, `1.5 R`
/// long.
pub(crate) fn disk_heading(r: f64, q: &SVector<f64, 4>) -> Heading {
    Heading {
        center: [q[0], q[1]],
        angle: q[3],
        length: Some(1.5 * r),
    }
}

/// The rim point `(x + s R cos φ, y + s R sin φ)` (`s = +1` front, `−1` rear).
pub(crate) fn rim_point(r: f64, q: &SVector<f64, 4>, s: f64) -> [f64; 2] {
    let (sin, cos) = q[3].sin_cos();
    [q[0] + s * r * cos, q[1] + s * r * sin]
}

/// Seen from above: the wall `y = wall` and the disk (the segment between its
/// rim points, and its contact point).
impl Drawing<4> for DiskWall {
    fn walls(&self) -> Vec<Shape> {
        vec![Shape::Line {
            point: [0.0, self.params.wall],
            direction: [1.0, 0.0],
        }]
    }

    fn body(&self, q: &SVector<f64, 4>) -> Vec<Shape> {
        disk_body(self.params.r, q)
    }

    /// The front rim point (piece 0) or the rear one (piece 1).
    fn contact(&self, q: &SVector<f64, 4>, piece: usize) -> [f64; 2] {
        rim_point(self.params.r, q, if piece == 0 { 1.0 } else { -1.0 })
    }

    /// The rolling direction `φ` from the contact point, `1.5 R` long.
    fn heading(&self, q: &SVector<f64, 4>) -> Option<Heading> {
        Some(disk_heading(self.params.r, q))
    }
}
