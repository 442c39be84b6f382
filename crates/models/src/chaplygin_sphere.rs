//! The Chaplygin sphere: a ball whose centre of mass is its geometric
//! centre, with unequal principal moments, rolling without slipping on the
//! horizontal plane between two vertical walls (docs/theory.md §16.7).
//!
//! Coordinates `q = (x, y, q_w, q_x, q_y, q_z) ∈ R² × R⁴`: the centre of the
//! ball at `(x, y, r)` and the unit quaternion `(q_w, q_x, q_y, q_z)` of its
//! body-to-space rotation `R` (the chart of §16.1, as in [`HeavyTop`](crate::HeavyTop)).
//! With the body angular velocity `ω = 2 Im(q̄ ⊗ q̇)`:
//! ```text
//! L = ½ m (ẋ² + ẏ²) + ½ (I₁ ω₁² + I₂ ω₂² + I₃ ω₃²)
//! ```
//! (`I_k` about the centre; gravity does no work on a ball whose centre stays
//! at height `r`, so there is no potential). Three constraint forms:
//! `qᵀ dq` (velocities tangent to `S³`) and rolling without slipping — the
//! material point at the contact, `(x, y, 0)`, is at rest,
//! `(ẋ, ẏ, 0) + ω_s × (−r e_z) = 0` with the spatial angular velocity
//! `ω_s = 2 Im(q̇ ⊗ q̄)`:
//! ```text
//! ẋ − r ω_s,y = 0,    ẏ + r ω_s,x = 0,
//! ```
//! both linear in `q̇` ([`ChaplyginSphere::constraint_forms`] writes the rows
//! out). Walls at `x = ±wall`: two pieces `g₀ = wall − r − x ≥ 0` (right),
//! `g₁ = wall − r + x ≥ 0` (left); the ball bounces between them by the
//! elastic law of §4 with the rolling constraint active throughout.
//!
//! First integrals: the energy, and the angular momentum about the contact
//! point, a vector of space,
//! `K = I_s ω_s + m r² (ω_s − (ω_s·e_z) e_z)` with `I_s = R I Rᵀ`
//! ([`ChaplyginSphere::contact_momentum`]), constant between impacts — the
//! Noether momentum of turning the ball about an axis through the contact
//! point, which the constraints allow, so the discrete step keeps it exactly
//! too; at an impact only `K_y` jumps (the wall's impulse, along `x` through
//! the centre, has a moment along `y` about the contact point).
//!
//! Catalogued as `chaplygin-sphere` ([`Model`]): defaults `r = 1`, `m = 1`,
//! `I = (0.3, 0.4, 0.5)`, walls at `x = ±3`, the ball tilted by 0.5 rad
//! about `e₁` (`q = (cos ¼, sin ¼, 0, 0)`) turning at `ω_s = (0, 1, 2)` rad/s
//! (rolling towards `+x` at 1 m/s, spinning about the vertical), `h = 1e-2`,
//! `T = 20` (five impacts), the midpoint map of the ambient `R⁶` with the
//! midpoint discrete constraint. No Hamiltonian on `R⁶` (the Lagrangian is
//! degenerate along the quaternion): the Lagrange–Dirac stepper runs it.

use crate::{Drawing, Model, ModelError, ParameterInfo, RunSetup, Shape, validate};
use diracvi_geometry::lie::{body_angular_velocity, rotation_matrix, spatial_momentum};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, System};
use nalgebra::{SMatrix, SVector};
use serde::{Deserialize, Serialize};

/// Parameters of [`ChaplyginSphere`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChaplyginSphereParams {
    /// Radius `r` of the ball (m), `> 0`. Default 1.
    pub r: f64,
    /// Mass `m` (kg), `> 0`. Default 1.
    pub m: f64,
    /// Principal moment of inertia `I₁` about the centre, body axis `e₁`
    /// (kg m²), `> 0`. Default 0.3.
    pub i1: f64,
    /// Principal moment `I₂` about `e₂` (kg m²), `> 0`. Default 0.4.
    pub i2: f64,
    /// Principal moment `I₃` about `e₃` (kg m²), `> 0`. Default 0.5.
    pub i3: f64,
    /// The walls `x = ±wall` (m), `> r`; admissible iff `|x| + r ≤ wall`.
    /// Default 3.
    pub wall: f64,
}

impl Default for ChaplyginSphereParams {
    fn default() -> Self {
        Self {
            r: 1.0,
            m: 1.0,
            i1: 0.3,
            i2: 0.4,
            i3: 0.5,
            wall: 3.0,
        }
    }
}

/// The Chaplygin sphere between two walls (`N = 6`, `M = 3`).
#[derive(Debug, Clone, PartialEq)]
pub struct ChaplyginSphere {
    params: ChaplyginSphereParams,
}

/// The default spatial angular velocity `ω_s(0)` (rad/s): rolling towards
/// `+x` (`ẋ = r ω_s,y`) and spinning about the vertical.
const OMEGA0: [f64; 3] = [0.0, 1.0, 2.0];

impl ChaplyginSphere {
    /// The principal moments `(I₁, I₂, I₃)`.
    pub fn inertia(&self) -> SVector<f64, 3> {
        SVector::from([self.params.i1, self.params.i2, self.params.i3])
    }

    /// The unit quaternion `(q_w, q_x, q_y, q_z)` of a configuration.
    pub fn orientation<S: AdScalar>(q: &SVector<S, 6>) -> SVector<S, 4> {
        SVector::from([q[2], q[3], q[4], q[5]])
    }

    /// The angular momentum about the contact point,
    /// `K = I_s ω_s + m r² (ω_s − (ω_s·e_z) e_z)`, from a chart momentum
    /// `p` (docs/theory.md §16.7): `K·η = ⟨p, ζ_η(q)⟩` with `ζ_η` the
    /// turning of the ball about the axis `η` through the contact point,
    /// `(ẋ, ẏ) = (η × r e_z)_{x,y}`, `q̇ = ½ (0, η) ⊗ q`, so
    /// `K = π + r (−p_y, p_x, 0)` (`π = ½ Im(p_q ⊗ q̄)`). `ζ_η` satisfies
    /// the constraints, so `K` is blind to the reactions `A(q)ᵀμ` by which
    /// the momenta of the constrained chart are defined.
    pub fn contact_momentum(&self, q: &SVector<f64, 6>, p: &SVector<f64, 6>) -> SVector<f64, 3> {
        let r = self.params.r;
        let pi = spatial_momentum(&Self::orientation(q), &Self::orientation(p));
        SVector::from([pi[0] - r * p[1], pi[1] + r * p[0], pi[2]])
    }

    /// `K` from a velocity on the constraints: `I_s ω_s + m r² (ω_s,x, ω_s,y, 0)`
    /// with `I_s = R I Rᵀ`.
    pub fn contact_momentum_of_velocity(
        &self,
        q: &SVector<f64, 6>,
        v: &SVector<f64, 6>,
    ) -> SVector<f64, 3> {
        let quat = Self::orientation(q);
        let rot = rotation_matrix(&(quat / quat.norm()));
        let omega = body_angular_velocity(&quat, &Self::orientation(v));
        let spatial = rot * omega;
        let body = rot * SVector::from([0, 1, 2].map(|k| self.inertia()[k] * omega[k]));
        let mr2 = self.params.m * self.params.r * self.params.r;
        body + SVector::from([mr2 * spatial[0], mr2 * spatial[1], 0.0])
    }
}

impl System<6, 3> for ChaplyginSphere {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 6>, v: &SVector<S, 6>) -> S {
        let p = &self.params;
        let w = body_angular_velocity(&Self::orientation(q), &Self::orientation(v));
        (v[0] * v[0] + v[1] * v[1]) * (0.5 * p.m)
            + (w[0] * w[0] * p.i1 + w[1] * w[1] * p.i2 + w[2] * w[2] * p.i3) * 0.5
    }

    /// Rows `q_w dq_w + q_x dq_x + q_y dq_y + q_z dq_z` (tangent to `S³`),
    /// `dx − r ω_s,y` and `dy + r ω_s,x`, with
    /// `ω_s,x = 2(−q_x q̇_w + q_w q̇_x − q_z q̇_y + q_y q̇_z)` and
    /// `ω_s,y = 2(−q_y q̇_w + q_z q̇_x + q_w q̇_y − q_x q̇_z)` (`2 Im(q̇ ⊗ q̄)`).
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 6>) -> SMatrix<S, 3, 6> {
        let (one, zero) = (S::from(1.0), S::from(0.0));
        let d = 2.0 * self.params.r;
        let (w, a, b, c) = (q[2], q[3], q[4], q[5]);
        SMatrix::<S, 3, 6>::from_row_slice(&[
            zero,
            zero,
            w,
            a,
            b,
            c,
            one,
            zero,
            b * d,
            -(c * d),
            -(w * d),
            a * d,
            zero,
            one,
            -(a * d),
            w * d,
            -(c * d),
            b * d,
        ])
    }

    fn boundary_count(&self) -> usize {
        2
    }

    /// `wall − r − x` (piece 0, the right wall) and `wall − r + x` (piece 1,
    /// the left wall).
    fn boundary<S: AdScalar>(&self, j: usize, q: &SVector<S, 6>) -> S {
        let p = &self.params;
        let gap = S::from(p.wall - p.r);
        if j == 0 { gap - q[0] } else { gap + q[0] }
    }
}

impl Model<6, 3> for ChaplyginSphere {
    type Params = ChaplyginSphereParams;
    const NAME: &'static str = "chaplygin-sphere";
    const DESCRIPTION: &'static str = "Chaplygin sphere (ball, centre of mass at its centre, unequal moments) rolling without slipping between the walls x = ±wall, orientation as a unit quaternion (docs/theory.md §16.7)";
    const PARAMETERS: &'static [ParameterInfo] = &[
        ParameterInfo::float("r", "r", "m", "radius of the ball"),
        ParameterInfo::mass("mass of the ball"),
        ParameterInfo::float(
            "i1",
            "I₁",
            "kg m^2",
            "principal moment of inertia about the centre, body axis e1",
        ),
        ParameterInfo::float("i2", "I₂", "kg m^2", "principal moment about e2"),
        ParameterInfo::float("i3", "I₃", "kg m^2", "principal moment about e3"),
        ParameterInfo::float(
            "wall",
            "X_w",
            "m",
            "walls at x = ±wall (admissible iff |x| + r <= wall)",
        ),
    ];

    fn coordinate_names() -> [&'static str; 6] {
        ["x", "y", "qw", "qx", "qy", "qz"]
    }

    fn new(params: ChaplyginSphereParams) -> Result<Self, ModelError> {
        let name = Self::NAME;
        validate::positive(name, "r", params.r)?;
        validate::positive(name, "m", params.m)?;
        let moments = [("i1", params.i1), ("i2", params.i2), ("i3", params.i3)];
        for (key, value) in moments {
            validate::positive(name, key, value)?;
        }
        // A rigid body's principal moments satisfy the triangle
        // inequalities, I_k ≤ I_i + I_j (I_i + I_j − I_k = 2 ∫ x_k² dm).
        let total: f64 = moments.iter().map(|(_, i)| i).sum();
        for (key, value) in moments {
            if value > total - value {
                return Err(ModelError::InvalidParameter {
                    model: name,
                    parameter: key,
                    value,
                    reason:
                        "must not exceed the sum of the other two principal moments (a rigid body)"
                            .into(),
                });
            }
        }
        validate::finite(name, "wall", params.wall)?;
        if params.wall <= params.r {
            return Err(ModelError::InvalidParameter {
                model: name,
                parameter: "wall",
                value: params.wall,
                reason: format!(
                    "must exceed the radius r = {} (room for the ball)",
                    params.r
                ),
            });
        }
        Ok(Self { params })
    }

    fn params(&self) -> &ChaplyginSphereParams {
        &self.params
    }

    fn run_defaults(&self) -> RunSetup<6> {
        let r = self.params.r;
        let (s, c) = 0.25_f64.sin_cos();
        let [a, b, d] = OMEGA0;
        // v_q = ½ (0, ω_s) ⊗ q for q = (c, s, 0, 0); (ẋ, ẏ) = r (ω_s,y, −ω_s,x).
        RunSetup {
            q0: SVector::from([0.0, 0.0, c, s, 0.0, 0.0]),
            v0: SVector::from([
                r * b,
                -r * a,
                -0.5 * a * s,
                0.5 * a * c,
                0.5 * (b * c + d * s),
                0.5 * (d * c - b * s),
            ]),
            h: 1e-2,
            t_end: 20.0,
            discretization: Discretization::Midpoint,
            constraint: ConstraintDiscretization::Midpoint,
        }
    }

    /// The three components of `K`, the angular momentum about the contact
    /// point (constant between impacts; `K_x`, `K_z` through impacts too).
    fn invariant_names(&self) -> Vec<String> {
        ["K_x", "K_y", "K_z"].map(String::from).to_vec()
    }

    fn invariant_values(&self, q: &SVector<f64, 6>, p: &SVector<f64, 6>, out: &mut [f64]) {
        let k = self.contact_momentum(q, p);
        for (x, v) in out.iter_mut().zip(k.iter()) {
            *x = *v;
        }
    }

    fn boundary_name(&self, j: usize) -> String {
        if j == 0 {
            format!("right wall: x + r <= {}", self.params.wall)
        } else {
            format!("left wall: x - r >= -{}", self.params.wall)
        }
    }

    fn drawing(&self) -> Option<&dyn Drawing<6>> {
        Some(self)
    }
}

/// Seen from above, as `models/chaplygin-sphere.toml` draws it: the walls
/// `x = ±wall`; the ball's outline (radius `r` about `(x, y)`), its centre,
/// and its body axes `e₁` (a diameter, `±r`) and `e₂` (`±r/2`) projected on
/// the plane, so the rolling and the spin show.
impl Drawing<6> for ChaplyginSphere {
    fn walls(&self) -> Vec<Shape> {
        let w = self.params.wall;
        [w, -w]
            .map(|x| Shape::Line {
                point: [x, 0.0],
                direction: [0.0, 1.0],
            })
            .to_vec()
    }

    fn body(&self, q: &SVector<f64, 6>) -> Vec<Shape> {
        let r = self.params.r;
        let quat = Self::orientation(q);
        let rot = rotation_matrix(&(quat / quat.norm()));
        let centre = [q[0], q[1]];
        let axis = |k: usize, s: f64| Shape::Polyline {
            points: vec![
                [q[0] - s * rot[(0, k)], q[1] - s * rot[(1, k)]],
                [q[0] + s * rot[(0, k)], q[1] + s * rot[(1, k)]],
            ],
            closed: false,
        };
        vec![
            Shape::Circle {
                center: centre,
                radius: r,
            },
            Shape::Dot(centre),
            axis(0, r),
            axis(1, 0.5 * r),
        ]
    }

    /// The point of the ball touching the right wall (piece 0) or the left
    /// one (piece 1), at the height of the centre.
    fn contact(&self, q: &SVector<f64, 6>, piece: usize) -> [f64; 2] {
        let s = if piece == 0 { 1.0 } else { -1.0 };
        [q[0] + s * self.params.r, q[1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use diracvi_geometry::lie::spatial_angular_velocity;

    /// The rows of `A(q)` are `qᵀ` and `ẋ − r ω_s,y`, `ẏ + r ω_s,x` with
    /// `ω_s` from the geometry crate; `K` from the momentum equals `K`
    /// from the velocity; the default velocity rolls.
    #[test]
    fn rows_and_contact_momentum_agree_with_their_definitions() {
        let ball = ChaplyginSphere::new(ChaplyginSphereParams {
            r: 0.7,
            ..Default::default()
        })
        .unwrap();
        let quat = SVector::<f64, 4>::from([0.3, -0.5, 0.6, 0.2]).normalize();
        let q = SVector::from([0.4, -1.1, quat[0], quat[1], quat[2], quat[3]]);
        let mut v = SVector::<f64, 6>::from([0.3, 0.2, 0.5, -0.7, 0.1, 0.9]);
        let a = ball.constraint_forms(&q);
        let ws = spatial_angular_velocity(&quat, &ChaplyginSphere::orientation(&v));
        let expect: [f64; 3] = [
            quat.dot(&ChaplyginSphere::orientation(&v)),
            v[0] - 0.7 * ws[1],
            v[1] + 0.7 * ws[0],
        ];
        for (row, e) in expect.iter().enumerate() {
            assert!(((a.row(row) * v)[0] - e).abs() < 1e-15, "row {row}");
        }
        // Project v onto ker A(q) and compare the two formulas for K.
        let at = a.transpose();
        let mu = (a * at).try_inverse().unwrap() * (a * v);
        v -= at * mu;
        assert!((a * v).amax() < 1e-15);
        let p = ball.momentum(&q, &v);
        let from_p = ball.contact_momentum(&q, &p);
        let from_v = ball.contact_momentum_of_velocity(&q, &v);
        assert!((from_p - from_v).amax() < 1e-14, "{from_p} {from_v}");
        // Blind to the reactions.
        let shifted = p + at * SVector::from([0.3, -2.0, 1.5]);
        assert!((ball.contact_momentum(&q, &shifted) - from_p).amax() < 1e-14);
        let d = ball.run_defaults();
        assert!((ball.constraint_forms(&d.q0) * d.v0).amax() < 1e-15);
    }
}
