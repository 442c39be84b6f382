//! The step equations of the run-time-sized Lagrange–Dirac stepper written
//! into sparse storage (docs/theory.md §11.4): where each entry of
//! `[[D12 L_d, −Aᵀ], [∂_b ω, 0]]` lives in the values of the pattern, and
//! the constraint forms stored row by row on their stencils.
//!
//! The constraint rows are either the system's declared stencils
//! ([`DynSystem::constraint_stencils`]; forms of `Σ_r |S_r|` entries, their
//! Jacobian from [`constraint_rows_dyn`]) or every coordinate (forms
//! row-major `m × n`, as the dense path stores them, for a system with few
//! dense rows).

use crate::sparse_lu::SparsePattern;
use crate::structured_lu::row_stencils;
use diracvi_geometry::dynamic::{DynSystem, LagrangianTerms, TERMWISE_ABOVE};
use diracvi_geometry::{ConstraintDiscretization, GeometryError};
use nalgebra::DVector;

/// Positions of the step Jacobian's entries in the values of a sparse
/// pattern, computed once.
#[derive(Debug, Clone)]
pub(super) struct SparseLayout {
    /// Whether the constraint rows are the declared stencils (else every
    /// coordinate: row-major `m × n` forms).
    pub(super) declared_rows: bool,
    /// Number of stored form entries: `Σ_r |S_r|`, or `m n`.
    pub(super) forms_len: usize,
    /// Position of each slot of the terms' `D12` blocks (see
    /// [`DynDiscreteLagrangian::jet_terms_increment`](diracvi_geometry::dynamic::DynDiscreteLagrangian::jet_terms_increment)).
    pub(super) d12: Vec<usize>,
    /// Position of `(S_r[k], n + r)` (the `−Aᵀ` column), per form entry.
    pub(super) column: Vec<usize>,
    /// Position of `(n + r, S_r[k])` (the `∂_b ω` row), per form entry.
    pub(super) row: Vec<usize>,
}

impl SparseLayout {
    /// The layout of the step Jacobian of `system` with `constraint` in
    /// `pattern`.
    ///
    /// # Errors
    /// A description when the system's `D12` is not taken term by term
    /// (no terms, at most `TERMWISE_ABOVE` coordinates) or the pattern lacks
    /// an entry of the step Jacobian.
    pub(super) fn new<Sy: DynSystem>(
        system: &Sy,
        constraint: ConstraintDiscretization,
        pattern: &SparsePattern,
    ) -> Result<Self, String> {
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        let terms = system
            .lagrangian_terms()
            .filter(|t| n > TERMWISE_ABOVE && t.coordinate_count() == n)
            .ok_or_else(|| {
                format!(
                    "sparse Jacobian storage needs a Lagrangian declared term by term over more \
                     than {TERMWISE_ABOVE} coordinates (docs/theory.md §11.4)"
                )
            })?;
        let at = |i: usize, j: usize| {
            pattern.position(i, j).ok_or_else(|| {
                format!("the sparse pattern lacks entry ({i}, {j}) of the step Jacobian")
            })
        };
        let mut d12 = Vec::with_capacity(terms.block_entries());
        for e in 0..terms.len() {
            let s = terms.stencil(e);
            for &i in s {
                for &j in s {
                    d12.push(at(i, j)?);
                }
            }
        }
        let rows = row_stencils(system, constraint);
        let (mut column, mut row) = (Vec::new(), Vec::new());
        for r in 0..m {
            let full: Vec<usize>;
            let s = match rows {
                Some(rows) => rows.stencil(r),
                None => {
                    full = (0..n).collect();
                    &full
                }
            };
            for &c in s {
                column.push(at(c, n + r)?);
                row.push(at(n + r, c)?);
            }
        }
        Ok(Self {
            declared_rows: rows.is_some(),
            forms_len: column.len(),
            d12,
            column,
            row,
        })
    }

    /// The declared row stencils, when they are in use.
    pub(super) fn rows<'s, Sy: DynSystem>(&self, system: &'s Sy) -> Option<&'s LagrangianTerms> {
        if self.declared_rows {
            system.constraint_stencils()
        } else {
            None
        }
    }
}

/// `A(q)` into `out`: row by row on the declared stencils `rows`
/// ([`DynSystem::constraint_row`]), or row-major `m × n`
/// ([`DynSystem::constraint_forms`]) without them.
pub(super) fn fill_forms<Sy: DynSystem>(
    system: &Sy,
    rows: Option<&LagrangianTerms>,
    q: &[f64],
    out: &mut [f64],
) {
    let Some(rows) = rows else {
        system.constraint_forms(q, out);
        return;
    };
    let mut offset = 0;
    let mut small = [0.0; 16];
    let mut large = Vec::new();
    for r in 0..rows.len() {
        let s = rows.stencil(r);
        let k = s.len();
        // A stencil of a few coordinates on the stack.
        let local: &mut [f64] = if k <= small.len() {
            &mut small[..k]
        } else {
            large.resize(k, 0.0);
            &mut large
        };
        for (l, &i) in local.iter_mut().zip(s) {
            *l = q[i];
        }
        system.constraint_row(r, local, &mut out[offset..offset + k]);
        offset += k;
    }
}

/// `A(q)ᵀ μ` from the row-major `m × n` forms into `out`, summed over the
/// rows in order from the first term, as nalgebra's matrix–vector product
/// of the compile-time-sized stepper does (zeros when `m = 0`).
#[inline]
pub(super) fn forms_transpose_times(forms: &[f64], mu: &DVector<f64>, out: &mut DVector<f64>) {
    let n = out.len();
    let m = mu.len();
    for i in 0..n {
        out[i] = if m == 0 {
            0.0
        } else {
            (1..m).fold(forms[i] * mu[0], |s, r| s + forms[r * n + i] * mu[r])
        };
    }
}

/// `A(q)ᵀ μ` into `out` from forms stored as [`fill_forms`] does.
pub(super) fn forms_transpose_times_rows(
    rows: Option<&LagrangianTerms>,
    forms: &[f64],
    mu: &DVector<f64>,
    out: &mut DVector<f64>,
) {
    let Some(rows) = rows else {
        forms_transpose_times(forms, mu, out);
        return;
    };
    out.fill(0.0);
    let out = out.as_mut_slice();
    let mut offset = 0;
    for (r, &mu_r) in mu.as_slice().iter().enumerate().take(rows.len()) {
        let s = rows.stencil(r);
        for (&c, &a) in s.iter().zip(&forms[offset..offset + s.len()]) {
            out[c] += a * mu_r;
        }
        offset += s.len();
    }
}

/// `A(q) v` into `out` from forms stored as [`fill_forms`] does.
pub(super) fn forms_times_rows(
    rows: Option<&LagrangianTerms>,
    forms: &[f64],
    v: &DVector<f64>,
    out: &mut DVector<f64>,
) {
    let Some(rows) = rows else {
        let n = v.len();
        for (r, o) in out.iter_mut().enumerate() {
            *o = (0..n).map(|c| forms[r * n + c] * v[c]).sum();
        }
        return;
    };
    let mut offset = 0;
    for r in 0..rows.len() {
        let s = rows.stencil(r);
        out[r] = s
            .iter()
            .enumerate()
            .map(|(k, &c)| forms[offset + k] * v[c])
            .sum();
        offset += s.len();
    }
}

/// The error of a sparse step whose `D12` is not taken term by term at
/// this point (a gyroscopic force couples every coordinate).
pub(super) fn not_termwise() -> GeometryError {
    GeometryError::BadStencil {
        term: 0,
        reason: "the step Jacobian is not supported on the terms' stencils here (a gyroscopic \
                 force couples every coordinate): use dense storage"
            .to_owned(),
    }
}
