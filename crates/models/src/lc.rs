//! LC circuit with one inductor and three capacitors (\[DDM\] §2.1, §6;
//! Yoshimura–Marsden).
//!
//! Charges `q = (q^ℓ, q^{c1}, q^{c2}, q^{c3})` (C), currents `v = q̇` (A),
//! `L = ½ ℓ (v^ℓ)² − Σ_i (q^{ci})²/(2 c_i)` — degenerate (only the inductor
//! carries a kinetic term), so there is no Hamiltonian: [`System::hamiltonian`]
//! returns `None`. Kirchhoff's current law gives the constraint forms
//! (\[DDM\] eq. 2.3) `ω¹ = −dq^ℓ + dq^{c2}`, `ω² = −dq^{c1} + dq^{c2} − dq^{c3}`,
//! i.e. `A = [[−1, 0, 1, 0], [0, −1, 1, −1]]`. No admissible-set boundary.
//!
//! Defaults: `ℓ = 3/4`, `c = (1, 2, 3)`, forward `L_d` (symplectic Euler,
//! \[DDM\] eq. 6.2) with the retraction constraint `ω_{d+}`, `q(0) = 0`,
//! `h = 2π/40`, `T = 10π` (five periods; `ω = 1` with these values).
//!
//! Initial currents: \[DDM\] §6.2 prints `(10, 0, 10, 0)`, which violates
//! `ω²` (`v^{c1} + v^{c3} = v^{c2}`). We use the consistent currents
//! `v^ℓ = v^{c2} = 10`, `v^{c1} + v^{c3} = 10` split so that the capacitor
//! voltages stay equal (`v^{c1}/c1 = v^{c3}/c3`): with the defaults
//! `(10, 2.5, 10, 7.5)`. Only `q(0) = 0` and `p_0 = ∂L/∂v = (ℓ·10, 0, 0, 0)`
//! enter the scheme, so this choice does not change the discrete trajectory;
//! the exact solution is `q^ℓ(t) = (10/ω) sin ωt`,
//! `ω² = (c1 + c2 + c3)/(c2 (c1 + c3) ℓ)`.

use crate::{Model, ModelError, ParameterInfo, RunSetup, validate};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, System};
use nalgebra::{SMatrix, SVector};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Parameters of [`Lc`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LcParams {
    /// Inductance `ℓ` (H), `> 0`. Default 3/4.
    pub l: f64,
    /// Capacitance `c1` (F), `> 0`. Default 1.
    pub c1: f64,
    /// Capacitance `c2` (F), `> 0`. Default 2.
    pub c2: f64,
    /// Capacitance `c3` (F), `> 0`. Default 3.
    pub c3: f64,
}

impl Default for LcParams {
    fn default() -> Self {
        LcParams {
            l: 0.75,
            c1: 1.0,
            c2: 2.0,
            c3: 3.0,
        }
    }
}

/// The LC circuit of \[DDM\] Fig. 1: a degenerate Lagrangian with two
/// (holonomic) Kirchhoff constraints.
#[derive(Debug, Clone, PartialEq)]
pub struct Lc {
    params: LcParams,
}

impl Lc {
    /// Angular frequency `ω = √((c1 + c2 + c3)/(c2 (c1 + c3) ℓ))` of the
    /// circuit (1 rad/s with the defaults).
    pub fn omega(&self) -> f64 {
        let p = &self.params;
        ((p.c1 + p.c2 + p.c3) / (p.c2 * (p.c1 + p.c3) * p.l)).sqrt()
    }
}

impl System<4, 2> for Lc {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 4>, v: &SVector<S, 4>) -> S {
        let p = &self.params;
        v[0] * v[0] * (0.5 * p.l)
            - q[1] * q[1] * (0.5 / p.c1)
            - q[2] * q[2] * (0.5 / p.c2)
            - q[3] * q[3] * (0.5 / p.c3)
    }

    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 4>) -> SMatrix<S, 2, 4> {
        let (one, zero) = (S::from(1.0), S::from(0.0));
        SMatrix::<S, 2, 4>::new(-one, zero, one, zero, zero, -one, one, -one)
    }
}

impl Model<4, 2> for Lc {
    type Params = LcParams;
    const NAME: &'static str = "lc";
    const DESCRIPTION: &'static str = "LC circuit, one inductor and three capacitors: degenerate Lagrangian with Kirchhoff constraints ([DDM] §2.1, §6)";
    const PARAMETERS: &'static [ParameterInfo] = &[
        ParameterInfo::float("l", "ℓ", "H", "inductance"),
        ParameterInfo::float(
            "c1",
            "c₁",
            "F",
            "capacitance of capacitor 1 (parallel to capacitor 3)",
        ),
        ParameterInfo::float(
            "c2",
            "c₂",
            "F",
            "capacitance of capacitor 2 (in series with the inductor)",
        ),
        ParameterInfo::float(
            "c3",
            "c₃",
            "F",
            "capacitance of capacitor 3 (parallel to capacitor 1)",
        ),
    ];

    fn coordinate_names() -> [&'static str; 4] {
        ["q_l", "q_c1", "q_c2", "q_c3"]
    }

    fn new(params: LcParams) -> Result<Self, ModelError> {
        validate::positive(Self::NAME, "l", params.l)?;
        validate::positive(Self::NAME, "c1", params.c1)?;
        validate::positive(Self::NAME, "c2", params.c2)?;
        validate::positive(Self::NAME, "c3", params.c3)?;
        Ok(Lc { params })
    }

    fn params(&self) -> &LcParams {
        &self.params
    }

    fn run_defaults(&self) -> RunSetup<4> {
        let p = &self.params;
        let i = 10.0;
        let i1 = i * p.c1 / (p.c1 + p.c3);
        RunSetup {
            q0: SVector::zeros(),
            v0: SVector::from([i, i1, i, i - i1]),
            h: 2.0 * PI / 40.0,
            t_end: 10.0 * PI,
            discretization: Discretization::Forward,
            constraint: ConstraintDiscretization::Retraction,
        }
    }
}
