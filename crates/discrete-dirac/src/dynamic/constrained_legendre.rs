//! The constrained Legendre map of a run-time-sized system (docs/theory.md
//! §8.7, §11.4): the velocity `v` of a momentum `p` on the constraint
//! distribution, `∂L/∂v(q, v) = p + A(q)ᵀ ν`, `A(q) v = 0`, by Newton on
//! the KKT system `[[∂²L/∂v², −Aᵀ], [A, 0]]`, and the continuous energy and
//! constraint residual a composed step reports through it.
//!
//! The KKT matrix has the structure of the Lagrange–Dirac step Jacobian
//! `[[D12 L_d, −Aᵀ], [∂_b ω, 0]]` of the midpoint constraint: `∂²L/∂v²` is
//! supported on the terms' blocks `⋃_e S_e × S_e`, exactly as `D12 L_d`,
//! and `A(q)` on the declared row stencils. So the same choice applies
//! ([`StructuredLu::for_step`]): for a small or densely coupled system the
//! dense KKT solve (`(n + m)³` per iteration); for a large sparse one the
//! sparse LU over the step's pattern, the Hessian written term by term
//! into the pattern's values through the step's own layout
//! ([`legendre_jet_terms_dyn`] uses the slots of `D12`), the forms row by
//! row on their stencils, so that a solve costs time linear in the size
//! and nothing of size `n²` exists.

use super::sparse_step::{SparseLayout, fill_forms, forms_times_rows, forms_transpose_times_rows};
use crate::NewtonParams;
use crate::assembly::{JacobianStorage, StepJacobian};
use crate::linear::{Factorization, LinearSolver};
use crate::structured_lu::{Structure, StructuredLu};
use diracvi_geometry::dynamic::{
    DynSystem, energy_dyn, legendre_jet_dyn, legendre_jet_terms_dyn, velocity_from_momentum_dyn,
};
use diracvi_geometry::{ConstraintDiscretization, GeometryError};
use nalgebra::{DMatrix, DVector};

/// The velocity `v` and the multipliers `ν` the map solves for.
pub type VelocityAndMultipliers = (DVector<f64>, DVector<f64>);

/// Newton iterations of the constrained Legendre map before it gives up.
const ITERATIONS: usize = 30;

/// The constrained Legendre map of one system with the solver its
/// structure calls for: `∂L/∂v(q, v) = p + A(q)ᵀ ν`, `A(q) v = 0` by Newton
/// on the KKT system `[[∂²L/∂v², −Aᵀ], [A, 0]]` (docs/theory.md §8.7),
/// whose pattern is the midpoint step Jacobian's, so the dense LU for a
/// small or densely coupled system and the sparse LU over the step's
/// pattern for a large sparse one ([`StructuredLu::for_step`]). Built once
/// (the sparse pattern's analysis and the buffers), then solved at every
/// step without `n²` work.
#[derive(Debug, Clone)]
pub struct DynConstrainedLegendre {
    sparse: Option<Box<SparseKkt>>,
}

/// The sparse side: the LU over the step's pattern, where the entries go,
/// the KKT values and the work vectors.
#[derive(Debug, Clone)]
struct SparseKkt {
    lu: StructuredLu,
    layout: SparseLayout,
    jac: JacobianStorage,
    /// `A(q)` on the layout's rows (declared stencils, or row-major `m × n`).
    forms: Vec<f64>,
    pv: DVector<f64>,
    force: DVector<f64>,
    rhs: DVector<f64>,
    av: DVector<f64>,
    /// The KKT values whose factors `lu` holds (empty: none held), so that
    /// a KKT matrix equal to them bit for bit is not factored again: the
    /// second Newton iteration of a Lagrangian quadratic in `v`, and every
    /// solve of a system whose kinetic form and constraint rows do not
    /// depend on `q` (a circuit).
    factored: Vec<f64>,
}

impl DynConstrainedLegendre {
    /// The map for `system`: sparse when [`StructuredLu::for_step`] chooses
    /// the sparse LU for the midpoint step of `system` (and the step's
    /// layout applies), dense otherwise.
    pub fn new<Sy: DynSystem>(system: &Sy) -> Self {
        let midpoint = ConstraintDiscretization::Midpoint;
        let lu = StructuredLu::for_step(system, midpoint);
        if lu.structure() == Structure::Dense {
            return Self { sparse: None };
        }
        let jac = lu.new_jacobian();
        let layout = jac
            .sparse()
            .and_then(|j| SparseLayout::new(system, midpoint, j.pattern()).ok());
        let Some(layout) = layout else {
            return Self { sparse: None };
        };
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        Self {
            sparse: Some(Box::new(SparseKkt {
                lu,
                forms: vec![0.0; layout.forms_len],
                layout,
                jac,
                pv: DVector::zeros(n),
                force: DVector::zeros(n),
                rhs: DVector::zeros(n + m),
                av: DVector::zeros(m),
                factored: Vec::new(),
            })),
        }
    }

    /// The factorization the KKT solves use.
    pub fn structure(&self) -> Structure {
        match self.sparse {
            Some(_) => Structure::Sparse,
            None => Structure::Dense,
        }
    }

    /// The velocity of the momentum `p` at `q` on the constraint
    /// distribution, and the multipliers: `(v, ν)` (see
    /// [`dyn_constrained_velocity`]).
    ///
    /// # Errors
    /// [`GeometryError::LegendreNotInvertible`] when the KKT matrix is
    /// singular or Newton does not converge in 30 iterations;
    /// [`GeometryError::NonFinite`] for a non-finite `q` or `p`.
    pub fn velocity<Sy: DynSystem>(
        &mut self,
        system: &Sy,
        q: &DVector<f64>,
        p: &DVector<f64>,
    ) -> Result<VelocityAndMultipliers, GeometryError> {
        self.velocity_driven(system, q, p, &[])
    }

    /// [`velocity`](Self::velocity) on the driven constraints
    /// `A(q) v + ġ = 0`, `rate` the drives' `ġ` at the time of the state
    /// ([`DynSystem::constraint_drive`]; empty: none).
    ///
    /// # Errors
    /// As [`velocity`](Self::velocity).
    pub fn velocity_driven<Sy: DynSystem>(
        &mut self,
        system: &Sy,
        q: &DVector<f64>,
        p: &DVector<f64>,
        rate: &[f64],
    ) -> Result<VelocityAndMultipliers, GeometryError> {
        match &mut self.sparse {
            Some(kkt) => match kkt.velocity(system, q, p, rate)? {
                Some(solution) => Ok(solution),
                None => dense_velocity(system, q, p, rate),
            },
            None => dense_velocity(system, q, p, rate),
        }
    }

    /// The continuous energy `E(q, v)` at `(q, p)` with `v` from
    /// [`velocity`](Self::velocity), and the constraint residual
    /// `max_a |h (A(q) v)_a| / max(1, |q|)` (see
    /// [`dyn_continuous_measures`]).
    ///
    /// # Errors
    /// When the constrained Legendre map cannot be inverted.
    pub fn measures<Sy: DynSystem>(
        &mut self,
        system: &Sy,
        q: &DVector<f64>,
        p: &DVector<f64>,
        h: f64,
    ) -> Result<(f64, f64), GeometryError> {
        self.measures_driven(system, q, p, h, &[])
    }

    /// [`measures`](Self::measures) on the driven constraints
    /// `A(q) v + ġ = 0` (see [`velocity_driven`](Self::velocity_driven)):
    /// the residual is that of `A(q) v + ġ`.
    ///
    /// # Errors
    /// As [`measures`](Self::measures).
    pub fn measures_driven<Sy: DynSystem>(
        &mut self,
        system: &Sy,
        q: &DVector<f64>,
        p: &DVector<f64>,
        h: f64,
        rate: &[f64],
    ) -> Result<(f64, f64), GeometryError> {
        let (v, _) = self.velocity_driven(system, q, p, rate)?;
        let energy = energy_dyn(system, q, &v);
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        let av_max = if m == 0 {
            0.0
        } else if let Some(kkt) = self.sparse.as_mut() {
            // The forms at `q` (filled by the sparse solve even when it
            // handed over to the dense one).
            let rows = kkt.layout.rows(system);
            forms_times_rows(rows, &kkt.forms, &v, &mut kkt.av);
            add_rate(kkt.av.as_mut_slice(), rate);
            kkt.av.amax()
        } else {
            let mut rows = vec![0.0; m * n];
            system.constraint_forms(q.as_slice(), &mut rows);
            let mut av = DMatrix::from_row_slice(m, n, &rows) * v;
            add_rate(av.as_mut_slice(), rate);
            av.amax()
        };
        Ok((energy, av_max * h.abs() / q.norm().max(1.0)))
    }
}

impl SparseKkt {
    /// Newton on the KKT system in sparse storage; `Ok(None)` when the
    /// Hessian is not taken term by term (the caller solves densely).
    fn velocity<Sy: DynSystem>(
        &mut self,
        system: &Sy,
        q: &DVector<f64>,
        p: &DVector<f64>,
        rate: &[f64],
    ) -> Result<Option<VelocityAndMultipliers>, GeometryError> {
        diracvi_geometry::ensure_finite("q", q.as_slice())?;
        diracvi_geometry::ensure_finite("p", p.as_slice())?;
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        let Self {
            lu,
            layout,
            jac,
            forms,
            pv,
            force,
            rhs,
            av,
            factored,
        } = self;
        let rows = layout.rows(system);
        fill_forms(system, rows, q.as_slice(), forms);
        let threshold = NewtonParams::default().singular_threshold;
        let (mut v, mut nu) = (DVector::<f64>::zeros(n), DVector::<f64>::zeros(m));
        let scale = p.amax().max(1.0);
        let mut residual = f64::INFINITY;
        for iterations in 0..ITERATIONS {
            jac.zero();
            let Some(values) = jac.sparse_mut().map(|j| j.values_mut()) else {
                return Ok(None);
            };
            let termwise = legendre_jet_terms_dyn(system, q, &v, pv, |slot, x| {
                values[layout.d12[slot]] += x;
            });
            if !termwise {
                return Ok(None);
            }
            for (k, &at) in layout.column.iter().enumerate() {
                values[at] = -forms[k];
            }
            for (k, &at) in layout.row.iter().enumerate() {
                values[at] = forms[k];
            }
            forms_transpose_times_rows(rows, forms, &nu, force);
            forms_times_rows(rows, forms, &v, av);
            let mut r1_max = 0.0_f64;
            for i in 0..n {
                let r = pv[i] - p[i] - force[i];
                r1_max = if r.is_nan() {
                    f64::NAN
                } else {
                    r1_max.max(r.abs())
                };
                rhs[i] = r;
            }
            for i in 0..m {
                rhs[n + i] = av[i] + rate.get(i).copied().unwrap_or(0.0);
            }
            residual = r1_max / scale;
            // The held factors serve a KKT matrix equal to theirs bit for
            // bit (the same factors a new factorization would give).
            let inside = jac.sparse().filter(|j| j.outside().is_empty());
            let held = lu.factors().is_some()
                && inside.is_some_and(|j| bitwise_equal(j.values(), factored));
            if !held {
                factored.clear();
                if lu.factor(jac, threshold).is_err() {
                    break;
                }
                if let Some(j) = inside {
                    factored.extend_from_slice(j.values());
                }
            }
            let Some(factors) = lu.factors() else {
                break;
            };
            factors.solve_in_place(rhs);
            if !rhs.iter().all(|x| x.is_finite()) {
                break;
            }
            let mut dv_max = 0.0_f64;
            for i in 0..n {
                v[i] -= rhs[i];
                dv_max = dv_max.max(rhs[i].abs());
            }
            for i in 0..m {
                nu[i] -= rhs[n + i];
            }
            if dv_max <= 1e-14 * v.amax().max(1.0) && iterations > 0 {
                return Ok(Some((v, nu)));
            }
        }
        Err(GeometryError::LegendreNotInvertible {
            q: q.as_slice().to_vec(),
            residual,
            iterations: ITERATIONS,
        })
    }
}

/// The velocity of the momentum `p` on the constraint distribution (see
/// [`constrained_velocity`](crate::constrained_velocity)): `v` with
/// `∂L/∂v(q, v) = p + A(q)ᵀ ν`, `A(q) v = 0`. Returns `(v, ν)`. The KKT
/// solve follows the system's structure ([`DynConstrainedLegendre`]); to
/// solve repeatedly for one system, keep a [`DynConstrainedLegendre`].
///
/// # Errors
/// [`GeometryError::LegendreNotInvertible`] when the KKT matrix is
/// singular or Newton does not converge in 30 iterations.
pub fn dyn_constrained_velocity<Sy: DynSystem + ?Sized>(
    system: &Sy,
    q: &DVector<f64>,
    p: &DVector<f64>,
) -> Result<VelocityAndMultipliers, GeometryError> {
    DynConstrainedLegendre::new(&system).velocity(&system, q, p)
}

/// The continuous energy `E(q, v)` at `(q, p)` with `v` from
/// [`dyn_constrained_velocity`], and the constraint residual
/// `max_a |h (A(q) v)_a| / max(1, |q|)` (see
/// [`continuous_measures`](crate::continuous_measures)).
///
/// # Errors
/// When the constrained Legendre map cannot be inverted.
pub fn dyn_continuous_measures<Sy: DynSystem + ?Sized>(
    system: &Sy,
    q: &DVector<f64>,
    p: &DVector<f64>,
    h: f64,
) -> Result<(f64, f64), GeometryError> {
    DynConstrainedLegendre::new(&system).measures(&system, q, p, h)
}

/// The dense KKT solve of the constrained Legendre map.
fn dense_velocity<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
    p: &DVector<f64>,
    rate: &[f64],
) -> Result<VelocityAndMultipliers, GeometryError> {
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    if m == 0 {
        return Ok((
            velocity_from_momentum_dyn(system, q, p, &DVector::zeros(n))?,
            DVector::zeros(0),
        ));
    }
    diracvi_geometry::ensure_finite("p", p.as_slice())?;
    let mut rows = vec![0.0; m * n];
    system.constraint_forms(q.as_slice(), &mut rows);
    let forms = DMatrix::from_row_slice(m, n, &rows);
    let (mut v, mut nu) = (DVector::<f64>::zeros(n), DVector::<f64>::zeros(m));
    let size = n + m;
    let scale = p.amax().max(1.0);
    let mut residual = f64::INFINITY;
    for iterations in 0..ITERATIONS {
        let (pv, hess) = legendre_jet_dyn(system, q, &v);
        let r1 = pv - p - forms.transpose() * &nu;
        let mut r2 = &forms * &v;
        add_rate(r2.as_mut_slice(), rate);
        residual = r1.amax() / scale;
        let kkt = DMatrix::from_fn(size, size, |i, j| match (i < n, j < n) {
            (true, true) => hess[(i, j)],
            (true, false) => -forms[(j - n, i)],
            (false, true) => forms[(i - n, j)],
            (false, false) => 0.0,
        });
        let rhs = DVector::from_fn(size, |i, _| if i < n { r1[i] } else { r2[i - n] });
        let Some(dx) = kkt.lu().solve(&rhs) else {
            break;
        };
        if !dx.iter().all(|x| x.is_finite()) {
            break;
        }
        let dv = dx.rows(0, n).into_owned();
        v -= &dv;
        nu -= dx.rows(n, m);
        if dv.amax() <= 1e-14 * v.amax().max(1.0) && iterations > 0 {
            return Ok((v, nu));
        }
    }
    Err(GeometryError::LegendreNotInvertible {
        q: q.as_slice().to_vec(),
        residual,
        iterations: ITERATIONS,
    })
}

/// Whether `a` and `b` hold the same numbers bit for bit (`-0.0` and
/// `0.0` differ, a NaN is equal to itself), and are not empty.
fn bitwise_equal(a: &[f64], b: &[f64]) -> bool {
    !a.is_empty() && a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// `av += rate` (an empty rate: none).
fn add_rate(av: &mut [f64], rate: &[f64]) {
    for (x, r) in av.iter_mut().zip(rate) {
        *x += r;
    }
}
