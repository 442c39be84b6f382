//! Bouncing particle (\[VCI\] §4.1).
//!
//! `Q = R²`, `q = (x, y)`, `L = ½ m (v_x² + v_y²) − m g y`, no constraints,
//! admissible set `y ≥ 0` (one piece, `g_0 = y`). Hamiltonian
//! `H = |p|²/(2m) + m g y`. Defaults: midpoint `L_d`, `q(0) = (0, 2)`,
//! `v(0) = (1, 0)`, `h = 1e-2`, `T = 10`.

use crate::drawing::FLOOR;
use crate::{Drawing, Model, ModelError, ParameterInfo, RunSetup, Shape, validate};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, System};
use nalgebra::{SMatrix, SVector};
use serde::{Deserialize, Serialize};

/// Parameters of [`Particle`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ParticleParams {
    /// Mass `m` (kg), `> 0`. Default 1.
    pub m: f64,
    /// Gravitational acceleration `g` (m/s²), `≥ 0`. Default 9.8.
    pub g: f64,
}

impl Default for ParticleParams {
    fn default() -> Self {
        ParticleParams { m: 1.0, g: 9.8 }
    }
}

/// A particle in the vertical plane falling onto the floor `y = 0`.
#[derive(Debug, Clone, PartialEq)]
pub struct Particle {
    params: ParticleParams,
}

impl System<2, 0> for Particle {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        let p = &self.params;
        v.dot(v) * (0.5 * p.m) - q[1] * (p.m * p.g)
    }

    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
        SMatrix::zeros()
    }

    fn boundary_count(&self) -> usize {
        1
    }

    fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 2>) -> S {
        q[1]
    }

    fn hamiltonian<S: AdScalar>(&self, q: &SVector<S, 2>, p: &SVector<S, 2>) -> Option<S> {
        let pr = &self.params;
        Some(p.dot(p) * (0.5 / pr.m) + q[1] * (pr.m * pr.g))
    }
}

impl Model<2, 0> for Particle {
    type Params = ParticleParams;
    const NAME: &'static str = "particle";
    const DESCRIPTION: &'static str =
        "bouncing particle on the floor y >= 0 under gravity ([VCI] §4.1)";
    const PARAMETERS: &'static [ParameterInfo] =
        &[ParameterInfo::mass("mass"), ParameterInfo::GRAVITY];

    fn coordinate_names() -> [&'static str; 2] {
        ["x", "y"]
    }

    fn new(params: ParticleParams) -> Result<Self, ModelError> {
        validate::positive(Self::NAME, "m", params.m)?;
        validate::non_negative(Self::NAME, "g", params.g)?;
        Ok(Particle { params })
    }

    fn params(&self) -> &ParticleParams {
        &self.params
    }

    fn run_defaults(&self) -> RunSetup<2> {
        RunSetup {
            q0: SVector::from([0.0, 2.0]),
            v0: SVector::from([1.0, 0.0]),
            h: 1e-2,
            t_end: 10.0,
            discretization: Discretization::Midpoint,
            constraint: ConstraintDiscretization::Midpoint,
        }
    }

    fn boundary_name(&self, _j: usize) -> String {
        "floor y >= 0".into()
    }

    /// The horizontal momentum `p_x = m ẋ`: `x` is cyclic in `L` and the
    /// floor `y ≥ 0`, so every run keeps it exactly, through impacts too
    /// (the impulse is along `dy`), and a reduced run fixes it (Routh
    /// reduction by `x`, docs/theory.md §7).
    fn invariant_names(&self) -> Vec<String> {
        vec!["p_x".into()]
    }

    fn invariant_values(&self, _q: &SVector<f64, 2>, p: &SVector<f64, 2>, out: &mut [f64]) {
        out[0] = p[0];
    }

    fn drawing(&self) -> Option<&dyn Drawing<2>> {
        Some(self)
    }
}

/// Side view: the floor `y = 0` and the particle as a dot at `(x, y)`.
impl Drawing<2> for Particle {
    fn walls(&self) -> Vec<Shape> {
        vec![FLOOR]
    }

    fn body(&self, q: &SVector<f64, 2>) -> Vec<Shape> {
        vec![Shape::Dot([q[0], q[1]])]
    }

    fn contact(&self, q: &SVector<f64, 2>, _piece: usize) -> [f64; 2] {
        [q[0], q[1]]
    }
}
