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

use diracvi_geometry::lie::{body_angular_velocity, body_momentum, spatial_momentum};
use diracvi_geometry::{AdScalar, System};
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
    /// A top with the given parameters (not validated: a catalogue model
    /// would check `I_i > 0`, `m > 0`, `g ≥ 0`).
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
}
