//! The oriented step equations of the run-time-sized Lagrange–Dirac
//! stepper (docs/theory.md §3.2–§3.4) and the buffers their solves use:
//! shared by the regular path (`lagrange_dirac`), the degenerate path
//! (`degenerate`) and the Hamiltonian stepper, and depending on none of
//! them.

use super::sparse_step::{SparseLayout, forms_transpose_times_rows, not_termwise};
use crate::assembly::StepJacobian;
use crate::linear::LinearSolver;
use crate::newton::{Newton, max_abs};
use diracvi_geometry::dynamic::{
    DynDiscreteLagrangian, DynLdJet, DynSystem, constraint_jacobian_dyn, constraint_rows_dyn,
    evaluate_constraint_dyn,
};
use diracvi_geometry::{ConstraintDiscretization, GeometryError, Orientation};
use nalgebra::{DMatrix, DVector};

/// The oriented step equations at fixed `(a, π_a, h)`, unknowns `x = (d, μ)`
/// with `b = a + d`.
pub(super) struct StepEquations<'s, Sy> {
    pub(super) ld: DynDiscreteLagrangian<'s, Sy>,
    pub(super) cd: ConstraintDiscretization,
    pub(super) a: &'s DVector<f64>,
    /// `u π_a`.
    pub(super) pi_a: &'s DVector<f64>,
    /// `max_i |u π_a|` (part of every evaluation's equation scale).
    pub(super) pi_a_max: f64,
    /// `A(a)`, row-major `m × n`, or on the declared row stencils of
    /// `layout`.
    pub(super) a_forms: &'s [f64],
    /// The drives' offsets of the constraint rows (empty: none).
    pub(super) drive: &'s [f64],
    pub(super) h: f64,
    pub(super) n: usize,
    pub(super) m: usize,
    /// Where the entries go in sparse storage (`None`: dense storage).
    pub(super) layout: Option<&'s SparseLayout>,
    /// Whether the rows on the layout's stencils are constant
    /// ([`DynSystem::constant_constraint_forms`]): `a_forms` then holds
    /// them at every point, and the residual's constraint rows are
    /// `A d · (±1/h)`, without evaluating the system's rows.
    pub(super) constant_rows: bool,
}

impl<Sy: DynSystem> StepEquations<'_, Sy> {
    /// Residual (and Jacobian) of the full equations at `x`; returns the
    /// equation scale. Dense storage is written as it always was; sparse
    /// storage entry by entry at the positions of the layout (no `(n + m)²`
    /// buffer).
    #[inline]
    pub(super) fn full<J: StepJacobian>(
        &self,
        x: &DVector<f64>,
        r: &mut DVector<f64>,
        jac: Option<&mut J>,
        bufs: &mut Buffers,
    ) -> Result<f64, GeometryError> {
        let (ld, a, h, n, m) = (&self.ld, self.a, self.h, self.n, self.m);
        let system = ld.system();
        let rows = self.layout.and_then(|l| l.rows(system));
        bufs.d.as_mut_slice().copy_from_slice(&x.as_slice()[..n]);
        bufs.mu
            .as_mut_slice()
            .copy_from_slice(&x.as_slice()[n..n + m]);
        // Constant rows on their stencils, residual only: `Aᵀ μ` and the
        // discrete constraint in one pass over the rows.
        let fused = jac.is_none() && self.constant_rows && m > 0;
        if !fused {
            forms_transpose_times_rows(rows, self.a_forms, &bufs.mu, &mut bufs.force);
        }
        match jac {
            Some(jac) => match (jac.dense_mut(), self.layout) {
                (Some(jac), _) => self.dense_jacobian(r, jac, bufs)?,
                (None, Some(layout)) => self.sparse_jacobian(r, jac, layout, bufs)?,
                (None, None) => return Err(not_termwise()),
            },
            None => {
                // The same values without second derivatives.
                if m > 0 {
                    match rows {
                        Some(rows) if self.constant_rows => constant_rows_both(
                            rows,
                            self.a_forms,
                            bufs.d.as_slice(),
                            bufs.mu.as_slice(),
                            ld.orientation(),
                            h,
                            bufs.force.as_mut_slice(),
                            bufs.omega.as_mut_slice(),
                        ),
                        Some(rows) => constraint_rows_dyn(
                            self.cd,
                            system,
                            rows,
                            ld.orientation(),
                            a.as_slice(),
                            bufs.d.as_slice(),
                            h,
                            bufs.omega.as_mut_slice(),
                            None,
                        )?,
                        None => {
                            for i in 0..n {
                                bufs.b[i] = a[i] + bufs.d[i];
                            }
                            evaluate_constraint_dyn(
                                self.cd,
                                system,
                                ld.orientation(),
                                a.as_slice(),
                                bufs.b.as_slice(),
                                bufs.d.as_slice(),
                                h,
                                bufs.omega.as_mut_slice(),
                            )?;
                        }
                    }
                    for i in 0..m {
                        r[n + i] = bufs.omega[i];
                    }
                    self.add_drive(r);
                }
                ld.d1_increment(a, &bufs.d, h, &mut bufs.d1)?;
            }
        }
        for (((ri, &p), &g), &f) in r.as_mut_slice()[..n]
            .iter_mut()
            .zip(self.pi_a.as_slice())
            .zip(bufs.d1.as_slice())
            .zip(bufs.force.as_slice())
        {
            *ri = p + g - f;
        }
        // Equation scale: the momenta `|π_a|`, `|D1 L_d|` (and 1); see the
        // compile-time-sized stepper for why there is no floor for `ulp(b)`.
        Ok(self.pi_a_max.max(max_abs(bufs.d1.as_slice())).max(1.0))
    }

    /// The constraint rows of the residual and the Jacobian into dense
    /// storage (and `D1 L_d` into `bufs.d1`).
    #[inline]
    fn dense_jacobian(
        &self,
        r: &mut DVector<f64>,
        jac: &mut DMatrix<f64>,
        bufs: &mut Buffers,
    ) -> Result<(), GeometryError> {
        let (ld, a, h, n, m) = (&self.ld, self.a, self.h, self.n, self.m);
        ld.jet_increment(a, &bufs.d, h, &mut bufs.jet)?;
        bufs.cache_d.copy_from(&bufs.d);
        bufs.cache_pi_b.copy_from(&bufs.jet.d2);
        // column by column (the storage order of both)
        jac.view_mut((0, 0), (n, n)).copy_from(&bufs.jet.d12);
        for j in 0..m {
            for i in 0..n {
                jac[(i, n + j)] = -self.a_forms[j * n + i];
            }
        }
        if m > 0 {
            constraint_jacobian_dyn(
                self.cd,
                ld.system(),
                ld.orientation(),
                a,
                &bufs.d,
                h,
                &mut bufs.omega,
                &mut bufs.domega,
            )?;
            for i in 0..m {
                r[n + i] = bufs.omega[i];
                for j in 0..n {
                    jac[(n + i, j)] = bufs.domega[(i, j)];
                }
                for j in 0..m {
                    jac[(n + i, n + j)] = 0.0;
                }
            }
            self.add_drive(r);
        }
        bufs.d1.copy_from(&bufs.jet.d1);
        Ok(())
    }

    /// The same into sparse storage: `D12` term by term, `−Aᵀ` and `∂_b ω`
    /// row by row, each entry at its position in the pattern's values.
    fn sparse_jacobian<J: StepJacobian>(
        &self,
        r: &mut DVector<f64>,
        jac: &mut J,
        layout: &SparseLayout,
        bufs: &mut Buffers,
    ) -> Result<(), GeometryError> {
        let (ld, a, h, n, m) = (&self.ld, self.a, self.h, self.n, self.m);
        let system = ld.system();
        jac.zero();
        let Some(sparse) = jac.sparse_mut() else {
            return Err(not_termwise());
        };
        let values = sparse.values_mut();
        let termwise = ld.jet_terms_increment(a, &bufs.d, h, &mut bufs.jet, |slot, v| {
            values[layout.d12[slot]] += v;
        })?;
        if !termwise {
            return Err(not_termwise());
        }
        bufs.cache_d.copy_from(&bufs.d);
        bufs.cache_pi_b.copy_from(&bufs.jet.d2);
        for (k, &p) in layout.column.iter().enumerate() {
            values[p] = -self.a_forms[k];
        }
        if m > 0 {
            match layout.rows(system) {
                Some(rows) => {
                    // `∂_b ω` on the stencils, in the order of the forms.
                    constraint_rows_dyn(
                        self.cd,
                        system,
                        rows,
                        ld.orientation(),
                        a.as_slice(),
                        bufs.d.as_slice(),
                        h,
                        bufs.omega.as_mut_slice(),
                        Some(bufs.forms.as_mut_slice()),
                    )?;
                    for (k, &p) in layout.row.iter().enumerate() {
                        values[p] = bufs.forms[k];
                    }
                }
                None => {
                    constraint_jacobian_dyn(
                        self.cd,
                        system,
                        ld.orientation(),
                        a,
                        &bufs.d,
                        h,
                        &mut bufs.omega,
                        &mut bufs.domega,
                    )?;
                    for i in 0..m {
                        for j in 0..n {
                            values[layout.row[i * n + j]] = bufs.domega[(i, j)];
                        }
                    }
                }
            }
            for i in 0..m {
                r[n + i] = bufs.omega[i];
            }
            self.add_drive(r);
        }
        bufs.d1.copy_from(&bufs.jet.d1);
        Ok(())
    }

    /// The drives' offsets added to the constraint rows of `r` (none for a
    /// system without drives).
    #[inline]
    fn add_drive(&self, r: &mut DVector<f64>) {
        for (i, o) in self.drive.iter().enumerate() {
            r[self.n + i] += o;
        }
    }
}

/// `ω_r = ±(1/h) Σ_i A_{r, S_r[i]} d_{S_r[i]}` for every row `r` (`−` for
/// the reversed orientation), with the forms on the rows' stencils (in
/// their order): the discrete constraint of constant rows, summed and
/// scaled as [`constraint_rows_dyn`] does it.
pub(super) fn constant_rows_times(
    rows: &diracvi_geometry::dynamic::LagrangianTerms,
    forms: &[f64],
    d: &[f64],
    orientation: Orientation,
    h: f64,
    omega: &mut [f64],
) {
    rows_pass(rows, forms, d, orientation, h, omega, |_, _, _| {});
}

/// [`constant_rows_times`] and, in the same pass over the rows, the
/// reaction `force = Aᵀ μ` (summed row by row from zero, as
/// [`forms_transpose_times_rows`] does: the same values).
#[allow(clippy::too_many_arguments)]
fn constant_rows_both(
    rows: &diracvi_geometry::dynamic::LagrangianTerms,
    forms: &[f64],
    d: &[f64],
    mu: &[f64],
    orientation: Orientation,
    h: f64,
    force: &mut [f64],
    omega: &mut [f64],
) {
    force.fill(0.0);
    rows_pass(rows, forms, d, orientation, h, omega, |r, i, a| {
        force[i] += a * mu[r];
    });
}

/// `ω_r = ±(1/h) Σ A_{r,i} d_i` over the rows' stencils, handing every
/// entry `(r, i, A_{r,i})` to `each` on the way.
#[inline(always)]
fn rows_pass(
    rows: &diracvi_geometry::dynamic::LagrangianTerms,
    forms: &[f64],
    d: &[f64],
    orientation: Orientation,
    h: f64,
    omega: &mut [f64],
    mut each: impl FnMut(usize, usize, f64),
) {
    let sign = if orientation == Orientation::Forward {
        1.0
    } else {
        -1.0
    };
    let scale = sign / h;
    let mut offset = 0;
    for (r, w) in omega.iter_mut().enumerate() {
        let s = rows.stencil(r);
        let mut acc = 0.0;
        for (&i, &a) in s.iter().zip(&forms[offset..offset + s.len()]) {
            acc += a * d[i];
            each(r, i, a);
        }
        *w = acc * scale;
        offset += s.len();
    }
}

/// The mutable part of the run-time-sized Lagrange–Dirac stepper's solver
/// context: Newton, the degenerate path's buffers, the iterate, the kept
/// hidden-constraint basis and multipliers.
#[derive(Debug, Clone)]
pub(super) struct Work<LS: LinearSolver> {
    pub(super) ws: Newton<LS>,
    pub(super) scratch: Scratch,
    pub(super) x: DVector<f64>,
    pub(super) x_start: DVector<f64>,
    pub(super) bufs: Buffers,
    pub(super) hidden: Option<HiddenConstraints>,
    /// The last multipliers, in the units of the step equations (`unit · μ`).
    pub(super) last_mu: DVector<f64>,
}

/// Work vectors of the evaluations, and what they leave for later:
/// `(d, D2 L(a, a + d, h))` of the last one that computed it.
#[derive(Debug, Clone)]
pub(super) struct Buffers {
    pub(super) cache_d: DVector<f64>,
    pub(super) cache_pi_b: DVector<f64>,
    pub(super) d: DVector<f64>,
    pub(super) mu: DVector<f64>,
    pub(super) b: DVector<f64>,
    pub(super) c: DVector<f64>,
    pub(super) d1: DVector<f64>,
    pub(super) d1_next: DVector<f64>,
    pub(super) pi_b: DVector<f64>,
    pub(super) force: DVector<f64>,
    pub(super) omega: DVector<f64>,
    pub(super) domega: DMatrix<f64>,
    pub(super) forms: Vec<f64>,
    pub(super) jet: DynLdJet,
    pub(super) y_q: DVector<f64>,
}

/// The hidden-constraint basis of a degenerate step (docs/theory.md §3.9):
/// the range and the left null space of the step Jacobian.
#[derive(Debug, Clone)]
pub(super) struct HiddenConstraints {
    pub(super) range: DMatrix<f64>,
    pub(super) left_null: DMatrix<f64>,
}

/// Buffers for the degenerate path: the full equations and the next step's
/// residual.
#[derive(Debug, Clone)]
pub(super) struct Scratch {
    pub(super) full_r: DVector<f64>,
    pub(super) full_jac: DMatrix<f64>,
    pub(super) next_r: DVector<f64>,
}
