//! Vertical rolling disk inside a circular table (\[NIC\] §5, \[RED\] §3.3).
//!
//! Same mechanics as [`DiskWall`](crate::DiskWall): `q = (x, y, θ, φ)`,
//! `L = ½ m (v_x² + v_y²) + ½ I θ̇² + ½ J φ̇²` (\[NIC\] §5: `I` with the rolling
//! angle `θ`, `J` with the heading `φ`), constraints
//! `dx − R cos φ dθ = 0`, `dy − R sin φ dθ = 0`.
//!
//! Admissible set (\[NIC\] §5, `C_±`): the two rim points
//! `(x ± R cos φ, y ± R sin φ)` in the disk's vertical plane must stay on the
//! table of radius `a` centred at the origin, giving two smooth pieces
//!
//! `g_0 = a² − (x + R cos φ)² − (y + R sin φ)² ≥ 0` (front, `C_+`),
//! `g_1 = a² − (x − R cos φ)² − (y − R sin φ)² ≥ 0` (rear, `C_−`).
//!
//! Defaults: `m = 1`, `I = 0.5`, `J = 0.25`, `R = 1`, `a = 5`, midpoint `L_d`
//! + midpoint discrete constraint (= \[NIC\]'s mid-angle constraint),
//!   `q(0) = (1, 0.5, 0, 0.4)`, `v_θ(0) = 2`, `v_φ(0) = 0.15`,
//!   `(v_x, v_y)(0) = R v_θ (cos φ, sin φ)`, `h = 1e-2`, `T = 50`.

use crate::disk_wall::{
    disk_body, disk_hamiltonian, disk_heading, disk_lagrangian, disk_parameters, rim_point,
    rolling_constraints, rolling_initial, validate_disk,
};
use crate::{Drawing, Heading, Model, ModelError, ParameterInfo, RunSetup, Shape, validate};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, System};
use nalgebra::{SMatrix, SVector};
use serde::{Deserialize, Serialize};

/// Parameters of [`DiskTable`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiskTableParams {
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
    /// Radius `a` of the table (m), `> R`. Default 5.
    pub a: f64,
}

impl Default for DiskTableParams {
    fn default() -> Self {
        DiskTableParams {
            m: 1.0,
            i: 0.5,
            j: 0.25,
            r: 1.0,
            a: 5.0,
        }
    }
}

/// A vertical disk rolling without slipping on a circular table of radius `a`.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskTable {
    params: DiskTableParams,
}

impl DiskTable {
    /// The sign `±` of boundary piece `j` (`+1` for `C_+`, `−1` for `C_−`).
    pub fn piece_sign(j: usize) -> f64 {
        if j == 0 { 1.0 } else { -1.0 }
    }
}

impl System<4, 2> for DiskTable {
    fn lagrangian<S: AdScalar>(&self, _q: &SVector<S, 4>, v: &SVector<S, 4>) -> S {
        let p = &self.params;
        disk_lagrangian(p.m, p.i, p.j, v)
    }

    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 4>) -> SMatrix<S, 2, 4> {
        rolling_constraints(self.params.r, q)
    }

    fn boundary_count(&self) -> usize {
        2
    }

    fn boundary<S: AdScalar>(&self, j: usize, q: &SVector<S, 4>) -> S {
        let p = &self.params;
        let sr = Self::piece_sign(j) * p.r;
        let x = q[0] + q[3].cos() * sr;
        let y = q[1] + q[3].sin() * sr;
        S::from(p.a * p.a) - x * x - y * y
    }

    fn hamiltonian<S: AdScalar>(&self, _q: &SVector<S, 4>, p: &SVector<S, 4>) -> Option<S> {
        let pr = &self.params;
        Some(disk_hamiltonian(pr.m, pr.i, pr.j, p))
    }
}

impl Model<4, 2> for DiskTable {
    type Params = DiskTableParams;
    const NAME: &'static str = "disk-table";
    const DESCRIPTION: &'static str = "vertical disk rolling without slipping inside a circular table, rim points (x ± R cosφ, y ± R sinφ) within radius a ([NIC] §5)";
    const PARAMETERS: &'static [ParameterInfo] = disk_parameters!(ParameterInfo::float(
        "a",
        "a",
        "m",
        "radius of the table (centred at the origin), > R"
    ));

    fn coordinate_names() -> [&'static str; 4] {
        ["x", "y", "theta", "phi"]
    }

    fn new(params: DiskTableParams) -> Result<Self, ModelError> {
        validate_disk(Self::NAME, params.m, params.i, params.j, params.r)?;
        validate::positive(Self::NAME, "a", params.a)?;
        if params.a <= params.r {
            return Err(ModelError::InvalidParameter {
                model: Self::NAME,
                parameter: "a",
                value: params.a,
                reason: format!(
                    "the table radius must exceed the disk radius r = {}",
                    params.r
                ),
            });
        }
        Ok(DiskTable { params })
    }

    fn params(&self) -> &DiskTableParams {
        &self.params
    }

    fn run_defaults(&self) -> RunSetup<4> {
        let (q0, v0) = rolling_initial(self.params.r, [1.0, 0.5, 0.0, 0.4], 2.0, 0.15);
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
            "table edge, front rim point (x + R cosφ)^2 + (y + R sinφ)^2 <= a^2".into()
        } else {
            "table edge, rear rim point (x - R cosφ)^2 + (y - R sinφ)^2 <= a^2".into()
        }
    }

    fn drawing(&self) -> Option<&dyn Drawing<4>> {
        Some(self)
    }
}

/// Seen from above: the table's edge (a circle of radius `a` about the
/// origin) and the disk: the segment between its rim points and its
/// contact point.
impl Drawing<4> for DiskTable {
    fn walls(&self) -> Vec<Shape> {
        vec![Shape::Circle {
            center: [0.0, 0.0],
            radius: self.params.a,
        }]
    }

    fn body(&self, q: &SVector<f64, 4>) -> Vec<Shape> {
        disk_body(self.params.r, q)
    }

    /// The rim point of piece `j`: `(x ± R cos φ, y ± R sin φ)`.
    fn contact(&self, q: &SVector<f64, 4>, piece: usize) -> [f64; 2] {
        rim_point(self.params.r, q, Self::piece_sign(piece))
    }

    /// The rolling direction `φ` from the contact point, `1.5 R` long.
    fn heading(&self, q: &SVector<f64, 4>) -> Option<Heading> {
        Some(disk_heading(self.params.r, q))
    }
}
