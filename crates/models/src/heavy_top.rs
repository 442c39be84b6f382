//! The heavy top: a rigid body turning about a fixed point under gravity,
//! in the unit-quaternion chart of SO(3) (docs/theory.md §16); the free
//! rigid body (Euler top) is its case `g = 0`.
//!
//! `Q = SO(3)`, configurations `q = (w, x, y, z) ∈ S³ ⊂ R⁴` (the body-to-space
//! rotation `R(q)`), chart velocities `v ∈ T_q S³` with the body angular
//! velocity `ω = 2 Im(q̄ ⊗ v)` ([`diracvi_geometry::lie`]):
//! ```text
//! L(q, v) = ½ (I₁ ω₁² + I₂ ω₂² + I₃ ω₃²) − m g ℓ (R(q) e₃)·e₃,
//! ```
//! with `I₁, I₂, I₃` the principal moments of inertia **about the fixed
//! point**, `ℓ` the distance from the fixed point to the centre of mass,
//! which lies on the body axis `e₃`, and gravity along `−e₃` of space.
//! `(R(q) e₃)·e₃` is written as the quadratic form `w² − x² − y² + z²`
//! (equal on `S³`, homogeneous off it). One constraint form `A(q) = qᵀ`
//! keeps velocities tangent to `S³`; step with a quaternion discretization
//! map ([`RetractionForward`](diracvi_geometry::RetractionForward)`(`[`So3Cayley`](diracvi_geometry::So3Cayley)`)`,
//! [`LieMidpoint`](diracvi_geometry::LieMidpoint)) and the **midpoint**
//! discrete constraint `|q1| = |q0|` (the retraction constraint
//! `⟨q0, R_{q0}^{-1}(q1)⟩` vanishes identically, as on the sphere).
//!
//! The symmetric (Lagrange) top is `I₁ = I₂`. Its two Noether momenta:
//! rotations of space about the vertical give `π₃ = (½ Im(p ⊗ q̄))₃`
//! ([`HeavyTop::vertical_momentum`]); rotations of the body about its axis
//! (`I₁ = I₂`) give `Π₃ = (½ Im(q̄ ⊗ p))₃` ([`HeavyTop::axial_momentum`]).
//! With `g = 0` all of the spatial angular momentum `π = R(q) I ω` is kept.
//! Both are blind to the `p + ν q` ambiguity of momenta in this chart.
//!
//! Catalogued as `heavy-top` ([`Model`]): defaults `I = (1, 1, 0.5)`,
//! `m = 1`, `g = 9.8`, `ℓ = 0.1`, the axis tilted by 0.5 rad about `e₁`
//! (`q(0) = (cos ¼, sin ¼, 0, 0)`) and spinning at 4 rad/s about it
//! (`v(0) = ½ q(0) ⊗ (0, 0, 0, 4)`), `h = 1e-2`, `T = 20` (four nutation
//! periods of 4.996 s), the midpoint map of the ambient `R⁴` with the
//! midpoint constraint (second order; keeps both momenta and `|q|` to
//! round-off, docs/theory.md §16.4). No wall by default; `cone = u` keeps
//! the axis above the height `u` (`(R(q) e₃)·e₃ ≥ u`, the cone of §16.4).
//! No Hamiltonian on `R⁴` (the Lagrangian is degenerate along `q`): the
//! Lagrange–Dirac stepper runs it, orders 2, 4 and 6.

use crate::{Drawing, Model, ModelError, ParameterInfo, RunSetup, Shape, validate};
use diracvi_geometry::lie::{
    body_angular_velocity, body_momentum, rotation_matrix, spatial_momentum,
};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, System};
use nalgebra::{SMatrix, SVector};
use serde::{Deserialize, Serialize};

/// Parameters of [`HeavyTop`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HeavyTopParams {
    /// Principal moment of inertia `I₁` about the fixed point (kg m²), `> 0`.
    /// Default 1.
    pub i1: f64,
    /// Principal moment of inertia `I₂` (kg m²), `> 0`. Default 1 (a
    /// symmetric top).
    pub i2: f64,
    /// Principal moment of inertia `I₃` about the symmetry axis `e₃`
    /// (kg m²), `> 0`. Default 0.5.
    pub i3: f64,
    /// Mass `m` (kg), `> 0`. Default 1.
    pub m: f64,
    /// Gravitational acceleration `g` (m/s²), `≥ 0`; `0` is the free rigid
    /// body. Default 9.8.
    pub g: f64,
    /// Distance `ℓ` from the fixed point to the centre of mass along `e₃`
    /// (m). Default 0.1.
    pub l: f64,
    /// Lowest height `u ∈ (−1, 1)` of the body axis, `(R(q) e₃)·e₃ ≥ u`
    /// (a cone about the vertical the axis bounces off, docs/theory.md
    /// §16.4), dimensionless; `None` (the default): no wall.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cone: Option<f64>,
}

impl Default for HeavyTopParams {
    fn default() -> Self {
        Self {
            i1: 1.0,
            i2: 1.0,
            i3: 0.5,
            m: 1.0,
            g: 9.8,
            l: 0.1,
            cone: None,
        }
    }
}

/// The heavy top in the unit-quaternion chart (`N = 4`, `M = 1`).
#[derive(Debug, Clone, PartialEq)]
pub struct HeavyTop {
    /// The parameters.
    pub params: HeavyTopParams,
}

impl HeavyTop {
    /// A top with the given parameters, not validated (the catalogue's
    /// [`Model::new`] checks `I_i > 0`, `m > 0`, `g ≥ 0`, `−1 < cone < 1`).
    pub fn new(params: HeavyTopParams) -> Self {
        Self { params }
    }

    /// The free rigid body with principal moments `inertia` (the case `g = 0`).
    pub fn free(inertia: [f64; 3]) -> Self {
        Self::new(HeavyTopParams {
            i1: inertia[0],
            i2: inertia[1],
            i3: inertia[2],
            g: 0.0,
            ..HeavyTopParams::default()
        })
    }

    /// The principal moments `(I₁, I₂, I₃)`.
    pub fn inertia(&self) -> SVector<f64, 3> {
        SVector::from([self.params.i1, self.params.i2, self.params.i3])
    }

    /// The body angular momentum `Π = ½ Im(q̄ ⊗ p)` of a chart momentum.
    pub fn body_momentum(q: &SVector<f64, 4>, p: &SVector<f64, 4>) -> SVector<f64, 3> {
        body_momentum(q, p)
    }

    /// The spatial angular momentum `π = ½ Im(p ⊗ q̄) = R(q) Π`.
    pub fn spatial_momentum(q: &SVector<f64, 4>, p: &SVector<f64, 4>) -> SVector<f64, 3> {
        spatial_momentum(q, p)
    }

    /// The Noether momentum of rotations about the vertical, `π₃`.
    pub fn vertical_momentum(q: &SVector<f64, 4>, p: &SVector<f64, 4>) -> f64 {
        spatial_momentum(q, p)[2]
    }

    /// The Noether momentum of rotations about the body axis `e₃`, `Π₃`
    /// (conserved when `I₁ = I₂`).
    pub fn axial_momentum(q: &SVector<f64, 4>, p: &SVector<f64, 4>) -> f64 {
        body_momentum(q, p)[2]
    }

    /// The energy `½ Πᵀ I⁻¹ Π + m g ℓ (R(q) e₃)·e₃` of a chart momentum
    /// (the Hamiltonian of the constrained system on `T*S³`).
    pub fn energy_of_momentum(&self, q: &SVector<f64, 4>, p: &SVector<f64, 4>) -> f64 {
        let pi = body_momentum(q, p);
        let i = self.inertia();
        let kinetic: f64 = (0..3).map(|k| pi[k] * pi[k] / i[k]).sum::<f64>() * 0.5;
        kinetic + self.potential(q)
    }

    /// `V(q) = m g ℓ (w² − x² − y² + z²)`.
    pub fn potential<S: AdScalar>(&self, q: &SVector<S, 4>) -> S {
        let p = &self.params;
        (q[0] * q[0] - q[1] * q[1] - q[2] * q[2] + q[3] * q[3]) * (p.m * p.g * p.l)
    }
}

impl System<4, 1> for HeavyTop {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 4>, v: &SVector<S, 4>) -> S {
        let p = &self.params;
        let w = body_angular_velocity(q, v);
        (w[0] * w[0] * p.i1 + w[1] * w[1] * p.i2 + w[2] * w[2] * p.i3) * 0.5 - self.potential(q)
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 4>) -> SMatrix<S, 1, 4> {
        q.transpose()
    }

    fn boundary_count(&self) -> usize {
        usize::from(self.params.cone.is_some())
    }

    /// `w² − x² − y² + z² − u |q|²`: the height of the axis above `u`,
    /// written homogeneous of degree 2 so that its gradient is tangent to
    /// `S³` on the wall.
    fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 4>) -> S {
        let u = self.params.cone.unwrap_or(-1.0);
        q[0] * q[0] - q[1] * q[1] - q[2] * q[2] + q[3] * q[3] - q.dot(q) * u
    }
}

impl Model<4, 1> for HeavyTop {
    type Params = HeavyTopParams;
    const NAME: &'static str = "heavy-top";
    const DESCRIPTION: &'static str = "heavy top about a fixed point, orientation as a unit quaternion (w, x, y, z); free rigid body at g = 0 (docs/theory.md §16)";
    const PARAMETERS: &'static [ParameterInfo] = &[
        ParameterInfo::float(
            "i1",
            "I₁",
            "kg m^2",
            "principal moment of inertia about the fixed point, body axis e1",
        ),
        ParameterInfo::float(
            "i2",
            "I₂",
            "kg m^2",
            "principal moment about e2 (I1 = I2: the symmetric top)",
        ),
        ParameterInfo::float(
            "i3",
            "I₃",
            "kg m^2",
            "principal moment about the symmetry axis e3",
        ),
        ParameterInfo::mass("mass of the top"),
        ParameterInfo {
            description: "gravitational acceleration (0: the free rigid body)",
            ..ParameterInfo::GRAVITY
        },
        ParameterInfo::float(
            "l",
            "ℓ",
            "m",
            "distance from the fixed point to the centre of mass along e3",
        ),
        ParameterInfo::optional_float(
            "cone",
            "u",
            "1",
            "lowest height of the body axis, (R(q) e3).e3 >= u, a wall the axis bounces off (none: no wall)",
        ),
    ];

    fn coordinate_names() -> [&'static str; 4] {
        ["w", "x", "y", "z"]
    }

    fn new(params: HeavyTopParams) -> Result<Self, ModelError> {
        validate::positive(Self::NAME, "i1", params.i1)?;
        validate::positive(Self::NAME, "i2", params.i2)?;
        validate::positive(Self::NAME, "i3", params.i3)?;
        validate::positive(Self::NAME, "m", params.m)?;
        validate::non_negative(Self::NAME, "g", params.g)?;
        validate::finite(Self::NAME, "l", params.l)?;
        if let Some(u) = params.cone {
            validate::finite(Self::NAME, "cone", u)?;
            if !(u > -1.0 && u < 1.0) {
                return Err(ModelError::InvalidParameter {
                    model: Self::NAME,
                    parameter: "cone",
                    value: u,
                    reason: "must lie in (-1, 1) (the height of a unit axis)".into(),
                });
            }
        }
        Ok(Self { params })
    }

    fn params(&self) -> &HeavyTopParams {
        &self.params
    }

    fn run_defaults(&self) -> RunSetup<4> {
        let (s, c) = 0.25_f64.sin_cos();
        RunSetup {
            q0: SVector::from([c, s, 0.0, 0.0]),
            v0: SVector::from([0.0, 0.0, -2.0 * s, 2.0 * c]),
            h: 1e-2,
            t_end: 20.0,
            discretization: Discretization::Midpoint,
            constraint: ConstraintDiscretization::Midpoint,
        }
    }

    /// `pi_z` (the momentum about the vertical, `π₃`) always; `Pi_3` (about
    /// the body axis, `Π₃`) when `I₁ = I₂`; `pi_x`, `pi_y` too when
    /// `g = 0` (the free body keeps all of `π`).
    fn invariant_names(&self) -> Vec<String> {
        let p = &self.params;
        let mut names = Vec::with_capacity(4);
        if p.g.total_cmp(&0.0).is_eq() {
            names.extend(["pi_x", "pi_y"]);
        }
        names.push("pi_z");
        if p.i1.total_cmp(&p.i2).is_eq() {
            names.push("Pi_3");
        }
        names.into_iter().map(String::from).collect()
    }

    fn invariant_values(&self, q: &SVector<f64, 4>, p: &SVector<f64, 4>, out: &mut [f64]) {
        // In the order of `invariant_names`.
        let pi = spatial_momentum(q, p);
        let params = &self.params;
        let mut values = Vec::with_capacity(4);
        if params.g.total_cmp(&0.0).is_eq() {
            values.extend([pi[0], pi[1]]);
        }
        values.push(pi[2]);
        if params.i1.total_cmp(&params.i2).is_eq() {
            values.push(body_momentum(q, p)[2]);
        }
        for (x, v) in out.iter_mut().zip(values) {
            *x = v;
        }
    }

    fn boundary_name(&self, _j: usize) -> String {
        format!(
            "cone: axis height (R(q) e3).e3 >= {}",
            self.params.cone.unwrap_or(-1.0)
        )
    }

    fn drawing(&self) -> Option<&dyn Drawing<4>> {
        Some(self)
    }
}

/// [`cabinet`](crate::drawing::cabinet) of a vector in space.
fn cabinet(x: &SVector<f64, 3>) -> [f64; 2] {
    crate::drawing::cabinet([x[0], x[1], x[2]])
}

/// The top in space, as `models/heavy-top.toml` draws it: the symmetry
/// axis from the fixed point to `2ℓ`, the centre of mass at `ℓ` on it, and
/// the body axes `e₁` (`±0.8ℓ`) and `e₂` (`±0.4ℓ`) crossed at the centre of
/// mass, in the cabinet projection, so that precession, nutation and spin
/// all show; still: the horizontal plane and the vertical through the fixed
/// point.
impl Drawing<4> for HeavyTop {
    fn walls(&self) -> Vec<Shape> {
        let l = self.params.l;
        vec![
            Shape::Line {
                point: [0.0, 0.0],
                direction: [1.0, 0.0],
            },
            Shape::Polyline {
                points: vec![[0.0, 0.0], [0.0, 2.0 * l]],
                closed: false,
            },
        ]
    }

    fn body(&self, q: &SVector<f64, 4>) -> Vec<Shape> {
        let l = self.params.l;
        let r = rotation_matrix(&(q / q.norm()));
        let (e1, e2, e3) = (r.column(0), r.column(1), r.column(2));
        let centre = cabinet(&(e3 * l));
        let arm = |e: SVector<f64, 3>, s: f64| {
            let [a, b] = [cabinet(&(e3 * l - e * s)), cabinet(&(e3 * l + e * s))];
            Shape::Polyline {
                points: vec![a, b],
                closed: false,
            }
        };
        vec![
            Shape::Polyline {
                points: vec![[0.0, 0.0], cabinet(&(e3 * (2.0 * l)))],
                closed: false,
            },
            Shape::Dot(centre),
            arm(e1.into_owned(), 0.8 * l),
            arm(e2.into_owned(), 0.4 * l),
        ]
    }

    fn contact(&self, q: &SVector<f64, 4>, _piece: usize) -> [f64; 2] {
        let r = rotation_matrix(&(q / q.norm()));
        cabinet(&(r.column(2) * self.params.l).into_owned())
    }
}
