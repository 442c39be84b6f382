//! A convex rigid body in space bouncing elastically on a plane under
//! gravity (Tran & Leok, "Lie group variational collision integrators for a
//! class of hybrid systems", arXiv 2310.15356; docs/theory.md §16.8): a solid
//! ellipsoid, or a box with rounded edges and corners (a cube when its three
//! half sides are equal).
//!
//! Coordinates `q = (X, Y, Z, q_w, q_x, q_y, q_z) ∈ R³ × R⁴`: the centre of
//! mass and the unit quaternion of the body-to-space rotation `R(q)` (the
//! chart of §16.1, as in [`HeavyTop`](crate::HeavyTop)). With the body angular
//! velocity `ω = 2 Im(q̄ ⊗ q̇)`:
//! ```text
//! L = ½ M |Ẋ|² + ½ (I₁ ω₁² + I₂ ω₂² + I₃ ω₃²) − M g Z
//! ```
//! One constraint form, `qᵀ dq` (velocities tangent to `S³`; with the
//! midpoint discrete constraint every step keeps `|q|` exactly).
//!
//! The plane passes through the origin with unit normal
//! `n = (sin β, 0, cos β)` (tilted by `β` about the `Y` axis); gravity points
//! along `−Z` whatever the tilt. The admissible set is `g(X, q) ≥ 0` with `g`
//! the signed height of the body's lowest point above the plane,
//! `g = n·X − h(n)`, where `h` is the support function of the body in the
//! direction `n`, written with the body axes in space `e_i = R(q) E_i`:
//! ```text
//! ellipsoid, semi-axes a, b, c:        h = sqrt(a² (e₁·n)² + b² (e₂·n)² + c² (e₃·n)²)
//! box, half sides a, b, c, rounding ε: h = (a − ε)|e₁·n| + (b − ε)|e₂·n| + (c − ε)|e₃·n| + ε
//! ```
//! The ellipsoid's `g` is smooth. The rounded box is the Minkowski sum of the
//! box of half sides `a − ε, b − ε, c − ε` with a ball of radius `ε`; its `g`
//! has kinks where a body axis lies in the plane (`e_i·n = 0`), where the
//! derivative of `|x|` is taken as `+1` (as the model files' `abs`), so an
//! impact exactly there (of measure zero in the initial data) uses a
//! one-sided normal. The moments of inertia are those of the solid bodies of
//! mass `M` about their centre: `M(b² + c²)/5, …` for the ellipsoid,
//! `M(b² + c²)/3, …` for the sharp box (the rounding changes them at order
//! `ε/a`).
//!
//! First integrals kept exactly by the midpoint discretization, through the
//! impacts too (docs/theory.md §16.8): the momenta along translations of the
//! plane perpendicular to gravity (`p_Y` for every `β`, `p_X` too at `β = 0`)
//! and `π_n`, the spatial angular momentum about the centre of mass along `n`
//! (`L` and `g` are invariant under turning the body about `n`, an
//! orthogonal linear map of the quaternion chart, and `dg` annihilates the
//! generators). The energy is not kept exactly by the order-2 impacts (it
//! stays bounded).
//!
//! Catalogued as `bouncing-body` ([`Model`]): defaults the ellipsoid
//! `M = 1`, `(a, b, c) = (0.3, 0.2, 0.1)`, `g = 9.8`, `β = 0`, its centre
//! `0.5 m` above the plane, tilted by 0.6 rad about the axis `(0.6, 0.8, 0)`,
//! moving at `(0.3, 0.2, 0)` m/s and spinning at body `ω = (1, 0.5, 3)`
//! rad/s, `h = 5e-3` (`2e-3` for the box), `T = 10`, the midpoint map of the
//! ambient `R⁷` with the midpoint discrete constraint — the model-file twin
//! is `models/bouncing-body.toml`; `--set shape=box --set a=0.1 --set b=0.1
//! --set c=0.1` is `models/bouncing-cube.toml`. No Hamiltonian on `R⁷` (the
//! Lagrangian is degenerate along the quaternion): the Lagrange–Dirac stepper
//! runs it.

use crate::drawing::ellipse_outline;
use crate::{Drawing, Model, ModelError, ParameterInfo, RunSetup, Shape, validate};
use diracvi_geometry::lie::{body_angular_velocity, spatial_momentum, velocity_from_body};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, System};
use nalgebra::{SMatrix, SVector};
use serde::{Deserialize, Serialize};

/// The shape of a [`BouncingBody`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyShape {
    /// A solid ellipsoid with semi-axes `a, b, c` (smooth contact function).
    #[default]
    Ellipsoid,
    /// A solid box with half sides `a, b, c` whose edges and corners are
    /// rounded with the radius `eps` (a cube when `a = b = c`).
    Box,
}

/// Parameters of [`BouncingBody`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BouncingBodyParams {
    /// `"ellipsoid"` (default) or `"box"`.
    pub shape: BodyShape,
    /// Mass `M` (kg), `> 0`. Default 1.
    pub m: f64,
    /// Semi-axis (ellipsoid) or half side (box) along the body axis `e₁`
    /// (m), `> 0`. Default 0.3.
    pub a: f64,
    /// The same along `e₂` (m), `> 0`. Default 0.2.
    pub b: f64,
    /// The same along `e₃` (m), `> 0`. Default 0.1.
    pub c: f64,
    /// Radius of the rounding of the box's edges and corners (m),
    /// `0 ≤ eps ≤ min(a, b, c)`; unused by the ellipsoid. Default 0.01.
    pub eps: f64,
    /// Gravitational acceleration along `−Z` (m/s²), `≥ 0`. Default 9.8.
    pub g: f64,
    /// Tilt `β` of the plane about the `Y` axis (rad), `|β| < π/2`: its unit
    /// normal is `(sin β, 0, cos β)`. Default 0.
    pub beta: f64,
}

impl Default for BouncingBodyParams {
    fn default() -> Self {
        Self {
            shape: BodyShape::Ellipsoid,
            m: 1.0,
            a: 0.3,
            b: 0.2,
            c: 0.1,
            eps: 0.01,
            g: 9.8,
            beta: 0.0,
        }
    }
}

/// A convex body bouncing on a plane (`N = 7`, `M = 1`).
#[derive(Debug, Clone, PartialEq)]
pub struct BouncingBody {
    params: BouncingBodyParams,
    /// The principal moments `(I₁, I₂, I₃)` of the solid body.
    inertia: [f64; 3],
    /// The plane's unit normal `(sin β, 0, cos β)`.
    normal: [f64; 3],
}

/// The default body angular velocity `ω(0)` (rad/s).
const OMEGA0: [f64; 3] = [1.0, 0.5, 3.0];

/// Points of the drawn outline of the ellipsoid.
const OUTLINE_POINTS: usize = 48;

/// The body axes in space `e₁, e₂, e₃` (the columns of `R(q)`) of the
/// quaternion `(w, x, y, z)`, in the unnormalized form of the model files
/// (`e1x = w² + x² − y² − z²`, …).
fn axes<S: AdScalar>(w: S, x: S, y: S, z: S) -> [[S; 3]; 3] {
    let two = S::from(2.0);
    [
        [
            w * w + x * x - y * y - z * z,
            (x * y + w * z) * two,
            (x * z - w * y) * two,
        ],
        [
            (x * y - w * z) * two,
            w * w - x * x + y * y - z * z,
            (y * z + w * x) * two,
        ],
        [
            (x * z + w * y) * two,
            (y * z - w * x) * two,
            w * w - x * x - y * y + z * z,
        ],
    ]
}

/// `|x|` with the derivative `+1` at `0` (the branch of the real part).
fn abs<S: AdScalar>(x: S) -> S {
    if x.re() >= 0.0 { x } else { -x }
}

impl BouncingBody {
    /// The principal moments `(I₁, I₂, I₃)` about the centre of mass.
    pub fn inertia(&self) -> [f64; 3] {
        self.inertia
    }

    /// The plane's unit normal `n = (sin β, 0, cos β)`.
    pub fn normal(&self) -> [f64; 3] {
        self.normal
    }

    /// Whether the plane is horizontal (`β = 0`), where `p_X` is kept too.
    fn flat(&self) -> bool {
        self.params.beta.total_cmp(&0.0).is_eq()
    }

    /// The body axes in space at a configuration.
    fn axes_at(q: &SVector<f64, 7>) -> [[f64; 3]; 3] {
        axes(q[3], q[4], q[5], q[6])
    }

    /// The support function `h(n)` of the body, from the products `e_i·n`.
    fn support<S: AdScalar>(&self, en: [S; 3]) -> S {
        let p = &self.params;
        let half = [p.a, p.b, p.c];
        match p.shape {
            BodyShape::Ellipsoid => {
                let mut s = S::from(0.0);
                for (x, k) in en.into_iter().zip(half) {
                    s += x * x * (k * k);
                }
                s.sqrt()
            }
            BodyShape::Box => {
                let mut s = S::from(p.eps);
                for (x, k) in en.into_iter().zip(half) {
                    s += abs(x) * (k - p.eps);
                }
                s
            }
        }
    }

    /// The body's lowest point (the point of contact with the plane when
    /// `g = 0`) at a configuration, in space.
    pub fn lowest_point(&self, q: &SVector<f64, 7>) -> [f64; 3] {
        let p = &self.params;
        let n = self.normal;
        let e = Self::axes_at(q);
        let en = e.map(|ei| ei[0] * n[0] + ei[1] * n[1] + ei[2] * n[2]);
        let half = [p.a, p.b, p.c];
        let mut point = [q[0], q[1], q[2]];
        match p.shape {
            BodyShape::Ellipsoid => {
                // The support point in the direction n is S n / sqrt(nᵀ S n)
                // with S = R diag(a², b², c²) Rᵀ; minus it from the centre.
                let h = self.support(en);
                for (i, ei) in e.iter().enumerate() {
                    let w = half[i] * half[i] * en[i] / h;
                    for k in 0..3 {
                        point[k] -= w * ei[k];
                    }
                }
            }
            BodyShape::Box => {
                for (i, ei) in e.iter().enumerate() {
                    let w = (half[i] - p.eps) * if en[i] >= 0.0 { 1.0 } else { -1.0 };
                    for k in 0..3 {
                        point[k] -= w * ei[k];
                    }
                }
                for k in 0..3 {
                    point[k] -= p.eps * n[k];
                }
            }
        }
        point
    }
}

impl System<7, 1> for BouncingBody {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 7>, v: &SVector<S, 7>) -> S {
        let p = &self.params;
        let [i1, i2, i3] = self.inertia;
        let quat = SVector::from([q[3], q[4], q[5], q[6]]);
        let rate = SVector::from([v[3], v[4], v[5], v[6]]);
        let w = body_angular_velocity(&quat, &rate);
        (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) * (0.5 * p.m)
            + (w[0] * w[0] * i1 + w[1] * w[1] * i2 + w[2] * w[2] * i3) * 0.5
            - q[2] * (p.m * p.g)
    }

    /// The row `q_w dq_w + q_x dq_x + q_y dq_y + q_z dq_z` (tangent to `S³`).
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 7>) -> SMatrix<S, 1, 7> {
        let zero = S::from(0.0);
        SMatrix::<S, 1, 7>::from_row_slice(&[zero, zero, zero, q[3], q[4], q[5], q[6]])
    }

    fn boundary_count(&self) -> usize {
        1
    }

    /// `n·X − h(n)`: the signed height of the lowest point above the plane.
    fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 7>) -> S {
        let [n1, _, n3] = self.normal;
        let e = axes(q[3], q[4], q[5], q[6]);
        let en = e.map(|ei| ei[0] * n1 + ei[2] * n3);
        q[0] * n1 + q[2] * n3 - self.support(en)
    }
}

impl Model<7, 1> for BouncingBody {
    type Params = BouncingBodyParams;
    const NAME: &'static str = "bouncing-body";
    const DESCRIPTION: &'static str = "convex rigid body (solid ellipsoid, or box with rounded corners) bouncing elastically on a tilted plane under gravity, orientation as a unit quaternion (Tran & Leok; docs/theory.md §16.8)";
    const PARAMETERS: &'static [ParameterInfo] = &[
        ParameterInfo {
            name: "shape",
            symbol: "shape",
            unit: "1",
            kind: crate::ParameterKind::Text,
            description: "\"ellipsoid\" (semi-axes a, b, c) or \"box\" (half sides a, b, c, edges and corners rounded by eps; a cube when a = b = c)",
        },
        ParameterInfo::mass("mass of the body"),
        ParameterInfo::float(
            "a",
            "a",
            "m",
            "semi-axis (ellipsoid) or half side (box) along the body axis e1",
        ),
        ParameterInfo::float("b", "b", "m", "the same along e2"),
        ParameterInfo::float("c", "c", "m", "the same along e3"),
        ParameterInfo::float(
            "eps",
            "ε",
            "m",
            "radius of the rounding of the box's edges and corners, 0 <= eps <= min(a, b, c) (unused by the ellipsoid)",
        ),
        ParameterInfo {
            description: "gravitational acceleration along -Z",
            ..ParameterInfo::GRAVITY
        },
        ParameterInfo::float(
            "beta",
            "β",
            "rad",
            "tilt of the plane about the Y axis, |beta| < pi/2: unit normal (sin beta, 0, cos beta)",
        ),
    ];

    fn coordinate_names() -> [&'static str; 7] {
        ["X", "Y", "Z", "qw", "qx", "qy", "qz"]
    }

    fn new(params: BouncingBodyParams) -> Result<Self, ModelError> {
        let name = Self::NAME;
        validate::positive(name, "m", params.m)?;
        for (key, value) in [("a", params.a), ("b", params.b), ("c", params.c)] {
            validate::positive(name, key, value)?;
        }
        validate::non_negative(name, "g", params.g)?;
        validate::non_negative(name, "eps", params.eps)?;
        validate::finite(name, "beta", params.beta)?;
        if params.beta.abs() >= std::f64::consts::FRAC_PI_2 {
            return Err(ModelError::InvalidParameter {
                model: name,
                parameter: "beta",
                value: params.beta,
                reason: "must lie in (-pi/2, pi/2) (gravity must press the body onto the plane)"
                    .into(),
            });
        }
        let (a, b, c, m) = (params.a, params.b, params.c, params.m);
        let inertia = match params.shape {
            BodyShape::Ellipsoid => [
                m * (b * b + c * c) / 5.0,
                m * (a * a + c * c) / 5.0,
                m * (a * a + b * b) / 5.0,
            ],
            BodyShape::Box => {
                let smallest = a.min(b).min(c);
                if params.eps > smallest {
                    return Err(ModelError::InvalidParameter {
                        model: name,
                        parameter: "eps",
                        value: params.eps,
                        reason: format!(
                            "must not exceed the smallest half side min(a, b, c) = {smallest}"
                        ),
                    });
                }
                [
                    m * (b * b + c * c) / 3.0,
                    m * (a * a + c * c) / 3.0,
                    m * (a * a + b * b) / 3.0,
                ]
            }
        };
        let (s, co) = params.beta.sin_cos();
        Ok(Self {
            params,
            inertia,
            normal: [s, 0.0, co],
        })
    }

    fn params(&self) -> &BouncingBodyParams {
        &self.params
    }

    fn run_defaults(&self) -> RunSetup<7> {
        let (s, c) = 0.3_f64.sin_cos();
        let quat = SVector::from([c, 0.6 * s, 0.8 * s, 0.0]);
        let rate = velocity_from_body(&quat, &SVector::from(OMEGA0));
        RunSetup {
            q0: SVector::from([0.0, 0.0, 0.5, quat[0], quat[1], quat[2], quat[3]]),
            v0: SVector::from([0.3, 0.2, 0.0, rate[0], rate[1], rate[2], rate[3]]),
            h: match self.params.shape {
                BodyShape::Ellipsoid => 5e-3,
                BodyShape::Box => 2e-3,
            },
            t_end: 10.0,
            discretization: Discretization::Midpoint,
            constraint: ConstraintDiscretization::Midpoint,
        }
    }

    /// `p_X` (when `β = 0`), `p_Y` and `pi_n`, the spatial angular momentum
    /// about the centre of mass along the plane's normal.
    fn invariant_names(&self) -> Vec<String> {
        let mut names = Vec::with_capacity(3);
        if self.flat() {
            names.push("p_X");
        }
        names.extend(["p_Y", "pi_n"]);
        names.into_iter().map(String::from).collect()
    }

    /// From the chart momentum: `p_X = p[0]`, `p_Y = p[1]` and
    /// `π·n` with `π = ½ Im(p_q ⊗ q̄)` (blind to the reaction along `q`).
    fn invariant_values(&self, q: &SVector<f64, 7>, p: &SVector<f64, 7>, out: &mut [f64]) {
        let quat = SVector::from([q[3], q[4], q[5], q[6]]);
        let pq = SVector::from([p[3], p[4], p[5], p[6]]);
        let pi = spatial_momentum(&quat, &pq);
        let n = self.normal;
        let pi_n = pi[0] * n[0] + pi[1] * n[1] + pi[2] * n[2];
        let mut values = Vec::with_capacity(3);
        if self.flat() {
            values.push(p[0]);
        }
        values.extend([p[1], pi_n]);
        for (x, v) in out.iter_mut().zip(values) {
            *x = v;
        }
    }

    fn boundary_name(&self, _j: usize) -> String {
        format!(
            "plane through the origin with normal (sin beta, 0, cos beta), beta = {}: the body above it",
            self.params.beta
        )
    }

    fn drawing(&self) -> Option<&dyn Drawing<7>> {
        Some(self)
    }
}

/// Seen along `Y` (`X` to the right, `Z` up), as the model files draw it: the
/// plane edge-on; the ellipsoid's outline (the ellipse of the `X`–`Z` block of
/// `R diag(a², b², c²) Rᵀ`) with its semi-axes `a e₁, b e₂` and `c e₃` from
/// the centre, or the box's twelve edges (of the sharp box of half sides
/// `a, b, c`); the contact point is the lowest point.
impl Drawing<7> for BouncingBody {
    fn walls(&self) -> Vec<Shape> {
        let (s, c) = self.params.beta.sin_cos();
        vec![Shape::Line {
            point: [0.0, 0.0],
            direction: [c, -s],
        }]
    }

    fn body(&self, q: &SVector<f64, 7>) -> Vec<Shape> {
        let p = &self.params;
        let e = Self::axes_at(q);
        let centre = [q[0], q[2]];
        // A body point X + Σ k_i e_i, seen along Y.
        let at = |k: [f64; 3]| {
            let mut x = centre;
            for (ki, ei) in k.iter().zip(&e) {
                x[0] += ki * ei[0];
                x[1] += ki * ei[2];
            }
            x
        };
        match p.shape {
            BodyShape::Ellipsoid => {
                let sq = [p.a * p.a, p.b * p.b, p.c * p.c];
                let block =
                    |i: usize, j: usize| -> f64 { (0..3).map(|k| sq[k] * e[k][i] * e[k][j]).sum() };
                let (sxx, szz, sxz) = (block(0, 0), block(2, 2), block(0, 2));
                let mean = 0.5 * (sxx + szz);
                let spread = (0.25 * (sxx - szz).powi(2) + sxz * sxz).sqrt();
                let major = (mean + spread).sqrt();
                let minor = (mean - spread).max(0.0).sqrt();
                let angle = 0.5 * (2.0 * sxz).atan2(sxx - szz);
                vec![
                    Shape::Polyline {
                        points: ellipse_outline(centre, major, minor, angle, OUTLINE_POINTS),
                        closed: true,
                    },
                    Shape::Polyline {
                        points: vec![at([p.a, 0.0, 0.0]), centre, at([0.0, p.b, 0.0])],
                        closed: false,
                    },
                    Shape::Polyline {
                        points: vec![centre, at([0.0, 0.0, p.c])],
                        closed: false,
                    },
                ]
            }
            BodyShape::Box => {
                let corner = |i: f64, j: f64, k: f64| at([i * p.a, j * p.b, k * p.c]);
                let face = |k: f64| Shape::Polyline {
                    points: vec![
                        corner(1.0, 1.0, k),
                        corner(1.0, -1.0, k),
                        corner(-1.0, -1.0, k),
                        corner(-1.0, 1.0, k),
                    ],
                    closed: true,
                };
                let mut shapes = vec![face(1.0), face(-1.0)];
                for (i, j) in [(1.0, 1.0), (1.0, -1.0), (-1.0, -1.0), (-1.0, 1.0)] {
                    shapes.push(Shape::Polyline {
                        points: vec![corner(i, j, 1.0), corner(i, j, -1.0)],
                        closed: false,
                    });
                }
                shapes
            }
        }
    }

    fn contact(&self, q: &SVector<f64, 7>, _piece: usize) -> [f64; 2] {
        let x = self.lowest_point(q);
        [x[0], x[2]]
    }
    fn axes(&self) -> [String; 2] {
        ["X".to_owned(), "Z".to_owned()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(shape: BodyShape, beta: f64) -> BouncingBody {
        BouncingBody::new(BouncingBodyParams {
            shape,
            beta,
            ..BouncingBodyParams::default()
        })
        .unwrap()
    }

    /// The lowest point lies on the body's boundary, at height `g` above the
    /// plane along its normal, for both shapes, flat and tilted planes and
    /// orientations off the kinks.
    #[test]
    fn the_lowest_point_is_at_the_contact_height() {
        let quats = [
            [0.3_f64.cos(), 0.6 * 0.3_f64.sin(), 0.8 * 0.3_f64.sin(), 0.0],
            [0.5, 0.5, -0.5, 0.5],
            [0.9, -0.2, 0.3, 0.25],
        ];
        for shape in [BodyShape::Ellipsoid, BodyShape::Box] {
            for beta in [0.0, 0.3, -0.7] {
                let b = body(shape, beta);
                for quat in quats {
                    let norm = quat.iter().map(|x| x * x).sum::<f64>().sqrt();
                    let quat = quat.map(|x| x / norm);
                    let q = SVector::from([0.4, -0.2, 0.8, quat[0], quat[1], quat[2], quat[3]]);
                    let x = b.lowest_point(&q);
                    let n = b.normal();
                    let height = x[0] * n[0] + x[1] * n[1] + x[2] * n[2];
                    let g = b.boundary(0, &q);
                    assert!(
                        (height - g).abs() < 1e-14,
                        "{shape:?} {beta}: {height} vs {g}"
                    );
                    // In body coordinates the point is on the surface.
                    let e = BouncingBody::axes_at(&q);
                    let local: [f64; 3] =
                        std::array::from_fn(|i| (0..3).map(|k| (x[k] - q[k]) * e[i][k]).sum());
                    let p = &b.params;
                    let half = [p.a, p.b, p.c];
                    let on_surface = match shape {
                        BodyShape::Ellipsoid => {
                            (0..3).map(|i| (local[i] / half[i]).powi(2)).sum::<f64>() - 1.0
                        }
                        BodyShape::Box => {
                            // Distance from the inner box, minus eps.
                            let d: f64 = (0..3)
                                .map(|i| (local[i].abs() - (half[i] - p.eps)).max(0.0).powi(2))
                                .sum::<f64>()
                                .sqrt();
                            d - p.eps
                        }
                    };
                    assert!(on_surface.abs() < 1e-14, "{shape:?} {beta}: {on_surface}");
                }
            }
        }
    }

    /// Invalid parameters are refused by name.
    #[test]
    fn parameters_are_validated() {
        let bad = [
            BouncingBodyParams {
                beta: 1.6,
                ..Default::default()
            },
            BouncingBodyParams {
                shape: BodyShape::Box,
                eps: 0.2,
                ..Default::default()
            },
            BouncingBodyParams {
                c: 0.0,
                ..Default::default()
            },
        ];
        for (params, name) in bad.into_iter().zip(["beta", "eps", "c"]) {
            match BouncingBody::new(params) {
                Err(ModelError::InvalidParameter { parameter, .. }) => assert_eq!(parameter, name),
                other => panic!("{name}: {other:?}"),
            }
        }
        // The ellipsoid ignores eps.
        assert!(
            BouncingBody::new(BouncingBodyParams {
                eps: 5.0,
                ..Default::default()
            })
            .is_ok()
        );
    }
}
