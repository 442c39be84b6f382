//! Hidden constraints supplied by the system (docs/theory.md §3.9, §8.2;
//! [`DynSystem::hidden_constraints`]): the degenerate step of a system that
//! knows the left null space of its step Jacobian (a circuit: one vector
//! per loop of capacitors and voltage sources with the forward map).
//!
//! Each supplied `y = (y_q, y_μ)` replaces one equation of the step by the
//! next step's hidden constraint `yᵀ r_{k+1} = 0`, evaluated at the next
//! point extrapolated by the same increment, `c = b + d`:
//! ```text
//! y_qᵀ (D2 L_d(a, b) + D1 L_d⁺(b, c) − Aᵀ μ) + y_μᵀ (±A d / h + g⁺),
//! ```
//! with `L_d⁺` over the next step's interval and `g⁺` its drive offset. The
//! rows of `A` are constant, so the `μ` and drive parts are linear with
//! coefficients computed once; the Lagrangian part is summed over the
//! terms the hidden constraint meets ([`DynDiscreteLagrangian::next_hidden_term`]),
//! exact in `d` (`D22 + D11 + 2 D12`). The current step's own `yᵀ r_k`
//! does not involve the unknowns and is checked; whether each `y`
//! annihilates the step Jacobian is verified on the first solve with each
//! `h`. No singular value decomposition: the step runs on sparse storage,
//! and for time-dependent systems.

use super::equations::StepEquations;
use crate::StepError;
use crate::assembly::StepJacobian;
use diracvi_geometry::dynamic::{DynSystem, HiddenConstraint};
use diracvi_geometry::{Discretization, GeometryError};
use nalgebra::DVector;

/// One supplied hidden constraint, prepared for the step.
#[derive(Debug, Clone)]
struct HiddenRow {
    /// The equation it replaces.
    row: usize,
    /// `y_q` and `y_μ`, repeated indices merged.
    y_q: Vec<(usize, f64)>,
    y_mu: Vec<(usize, f64)>,
    /// The terms `y_q` meets, each with `y_q` on its stencil.
    terms: Vec<(usize, Vec<f64>)>,
    /// `−(A y_q)_j`: the coefficient of `μ_j`.
    mu_cols: Vec<(usize, f64)>,
    /// `(Aᵀ y_μ)_c`: the coefficient of `±d_c / h`.
    d_cols: Vec<(usize, f64)>,
}

/// A system's supplied hidden constraints for one map, prepared once.
#[derive(Debug, Clone)]
pub(super) struct SuppliedHidden {
    rows: Vec<HiddenRow>,
    /// The replaced equations.
    replaced: Vec<usize>,
    /// Positions of the replaced equations' entries in sparse storage
    /// (filled by [`locate`](Self::locate); empty for dense storage).
    positions: Vec<usize>,
    /// Whether some `y_μ` is non-zero (the next step's drive offset is
    /// then needed).
    needs_drive: bool,
    /// Largest stencil of a term met (the gradient buffer's length).
    widest: usize,
}

/// Merge repeated indices, dropping zeros; `Err` names an index out of
/// range or a non-finite coefficient.
fn merged(
    entries: &[(usize, f64)],
    bound: usize,
    what: &str,
    p: usize,
) -> Result<Vec<(usize, f64)>, String> {
    let mut out: Vec<(usize, f64)> = Vec::with_capacity(entries.len());
    for &(i, v) in entries {
        if i >= bound {
            return Err(format!(
                "hidden constraint {p}: {what} index {i} is out of range (0..{bound})"
            ));
        }
        if !v.is_finite() {
            return Err(format!(
                "hidden constraint {p}: the coefficient of {what} {i} is {v}"
            ));
        }
        match out.iter_mut().find(|e| e.0 == i) {
            Some(e) => e.1 += v,
            None => out.push((i, v)),
        }
    }
    out.retain(|e| e.1 != 0.0);
    out.sort_by_key(|e| e.0);
    Ok(out)
}

impl SuppliedHidden {
    /// The hidden constraints `system` supplies for `map`, prepared;
    /// `Ok(None)` when it supplies none.
    ///
    /// # Errors
    /// A description of what the system supplies that the step cannot
    /// use: rows that are not constant, no declared terms, a gyroscopic
    /// force, an index out of range, a replaced equation missing from its
    /// `y` or shared with another.
    pub(super) fn new<Sy: DynSystem>(
        system: &Sy,
        map: Discretization,
    ) -> Result<Option<Self>, String> {
        let hidden: &[HiddenConstraint] = system.hidden_constraints(map);
        if hidden.is_empty() {
            return Ok(None);
        }
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        if m > 0 && !system.constant_constraint_forms() {
            return Err("supplied hidden constraints need constant constraint rows \
                        (DynSystem::constant_constraint_forms)"
                .to_owned());
        }
        let terms = system
            .lagrangian_terms()
            .filter(|t| t.coordinate_count() == n)
            .ok_or("supplied hidden constraints need the Lagrangian declared term by term")?;
        let zeros = vec![0.0; n];
        if system.gyroscopic_force(&zeros, &zeros, &mut vec![0.0; n]) {
            return Err(
                "supplied hidden constraints are not supported with a gyroscopic force".to_owned(),
            );
        }
        // The terms at each coordinate, and the constant rows by column.
        let mut at: Vec<Vec<usize>> = vec![Vec::new(); n];
        for e in 0..terms.len() {
            for &i in terms.stencil(e) {
                at[i].push(e);
            }
        }
        let mut columns: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        match system.constraint_stencils().filter(|s| s.len() == m) {
            Some(stencils) => {
                for r in 0..m {
                    let s = stencils.stencil(r);
                    let mut row = vec![0.0; s.len()];
                    system.constraint_row(r, &vec![0.0; s.len()], &mut row);
                    for (&c, &v) in s.iter().zip(&row) {
                        if v != 0.0 {
                            columns[c].push((r, v));
                        }
                    }
                }
            }
            None => {
                let mut forms = vec![0.0; m * n];
                system.constraint_forms(&zeros, &mut forms);
                for r in 0..m {
                    for c in 0..n {
                        let v = forms[r * n + c];
                        if v != 0.0 {
                            columns[c].push((r, v));
                        }
                    }
                }
            }
        }
        let mut rows = Vec::with_capacity(hidden.len());
        let mut widest = 0;
        for (p, y) in hidden.iter().enumerate() {
            let y_q = merged(&y.q, n, "coordinate", p)?;
            let y_mu = merged(&y.mu, m, "constraint row", p)?;
            if y.replaces >= n + m {
                return Err(format!(
                    "hidden constraint {p}: the replaced equation {} is out of range (0..{})",
                    y.replaces,
                    n + m
                ));
            }
            let mut met: Vec<usize> = y_q
                .iter()
                .flat_map(|&(i, _)| at[i].iter().copied())
                .collect();
            met.sort_unstable();
            met.dedup();
            let term_rows = met
                .into_iter()
                .map(|e| {
                    let s = terms.stencil(e);
                    widest = widest.max(s.len());
                    let local = s
                        .iter()
                        .map(|&c| y_q.iter().find(|x| x.0 == c).map_or(0.0, |x| x.1))
                        .collect();
                    (e, local)
                })
                .collect();
            let mut mu_cols: Vec<(usize, f64)> = Vec::new();
            for &(c, v) in &y_q {
                for &(r, a) in &columns[c] {
                    mu_cols.push((r, -a * v));
                }
            }
            let mut d_cols: Vec<(usize, f64)> = Vec::new();
            if !y_mu.is_empty() {
                for (c, col) in columns.iter().enumerate() {
                    let s: f64 = col
                        .iter()
                        .filter_map(|&(r, a)| y_mu.iter().find(|x| x.0 == r).map(|x| a * x.1))
                        .sum();
                    if s != 0.0 {
                        d_cols.push((c, s));
                    }
                }
            }
            rows.push(HiddenRow {
                row: y.replaces,
                mu_cols: merged(&mu_cols, m, "constraint row", p)?,
                d_cols,
                terms: term_rows,
                y_q,
                y_mu,
            });
        }
        // How many hidden constraints each equation enters (one pass over
        // their entries, not a pass over all of them per constraint).
        let mut holders = vec![0_u32; n + m];
        for y in &rows {
            for (i, _) in y.equations(n) {
                holders[i] += 1;
            }
        }
        for (p, y) in rows.iter().enumerate() {
            if !y.equations(n).any(|(i, _)| i == y.row) {
                return Err(format!(
                    "hidden constraint {p}: the replaced equation {} must carry a non-zero \
                     coefficient in it",
                    y.row
                ));
            }
            if holders[y.row] > 1 {
                let o = (0..rows.len())
                    .find(|&o| o != p && rows[o].equations(n).any(|(i, _)| i == y.row))
                    .unwrap_or(p);
                return Err(format!(
                    "hidden constraints {p} and {o}: equation {} is replaced by {p} and \
                     must carry a zero coefficient in {o}",
                    y.row
                ));
            }
        }
        Ok(Some(Self {
            needs_drive: rows.iter().any(|y| !y.y_mu.is_empty()),
            replaced: rows.iter().map(|y| y.row).collect(),
            positions: Vec::new(),
            widest,
            rows,
        }))
    }

    /// The entries the replaced equations add to the step Jacobian's
    /// pattern.
    pub(super) fn entries<'s, Sy: DynSystem>(
        &'s self,
        system: &'s Sy,
    ) -> impl Iterator<Item = (usize, usize)> + 's {
        let n = system.coordinate_count();
        let terms = system.lagrangian_terms();
        self.rows.iter().flat_map(move |y| {
            let stencils = y
                .terms
                .iter()
                .flat_map(move |(e, _)| terms.map_or(&[][..], |t| t.stencil(*e)).iter())
                .map(move |&c| (y.row, c));
            let mu = y.mu_cols.iter().map(move |&(j, _)| (y.row, n + j));
            let d = y.d_cols.iter().map(move |&(c, _)| (y.row, c));
            stencils.chain(mu).chain(d)
        })
    }

    /// Record where the replaced equations' entries are in sparse storage
    /// `jac` (nothing for dense storage).
    pub(super) fn locate<J: StepJacobian>(&mut self, jac: &J) {
        self.positions.clear();
        if let Some(sparse) = jac.sparse() {
            let mut replaced = vec![false; jac.size()];
            for &r in &self.replaced {
                replaced[r] = true;
            }
            self.positions.extend(
                sparse
                    .pattern()
                    .entries()
                    .filter(|&(r, _, _)| replaced[r])
                    .map(|(_, _, k)| k),
            );
        }
    }

    /// Whether the next step's drive offset enters.
    pub(super) fn needs_drive(&self) -> bool {
        self.needs_drive
    }

    /// `max_p |y_pᵀ r|` over the full equations `r` (the current step's
    /// hidden constraints).
    pub(super) fn current(&self, r: &DVector<f64>, n: usize) -> f64 {
        self.rows
            .iter()
            .map(|y| y.equations(n).map(|(i, v)| v * r[i]).sum::<f64>().abs())
            .fold(0.0, f64::max)
    }

    /// Check that every `y` annihilates the full step Jacobian in `jac`.
    ///
    /// # Errors
    /// [`StepError::Unsupported`] naming the first that does not.
    pub(super) fn verify<J: StepJacobian>(
        &self,
        jac: &J,
        n: usize,
        t: f64,
    ) -> Result<(), StepError> {
        let size = jac.size();
        let jmax = jac.amax();
        // The Jacobian's rows that some `y` weighs, gathered once (one pass
        // over the entries), so that each `yᵀ J` costs the rows it meets.
        let mut weighed = vec![false; size];
        for y in &self.rows {
            for (i, _) in y.equations(n) {
                weighed[i] = true;
            }
        }
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); size];
        match (jac.sparse(), jac.dense()) {
            (Some(sparse), _) => {
                for (r, c, v) in sparse.entries() {
                    if weighed[r] {
                        rows[r].push((c, v));
                    }
                }
            }
            (None, Some(dense)) => {
                for (r, row) in rows.iter_mut().enumerate().filter(|(r, _)| weighed[*r]) {
                    row.extend((0..size).map(|c| (c, dense[(r, c)])));
                }
            }
            (None, None) => {}
        }
        let mut product = vec![0.0; size];
        for (p, y) in self.rows.iter().enumerate() {
            let mut ynorm: f64 = 0.0;
            for (i, v) in y.equations(n) {
                ynorm = ynorm.max(v.abs());
                for &(c, jv) in &rows[i] {
                    product[c] += v * jv;
                }
            }
            let (mut worst, mut nan): (f64, bool) = (0.0, false);
            for (i, _) in y.equations(n) {
                for &(c, _) in &rows[i] {
                    worst = worst.max(product[c].abs());
                    nan |= product[c].is_nan();
                    product[c] = 0.0;
                }
            }
            if nan || worst > 1e-10 * jmax * ynorm {
                return Err(StepError::Unsupported(format!(
                    "at t = {t}: supplied hidden constraint {p} is not a left null \
                     vector of the step Jacobian (|yᵀJ| = {worst:e} against |J| = {jmax:e}); \
                     with this discretization the step may be regular: supply none for it"
                )));
            }
        }
        Ok(())
    }

    /// Replace the hidden constraints' equations in `r` (and `jac`), which
    /// hold the full equations at `x`, by the next step's hidden
    /// constraints: the next interval starts at `next_start`, its drive
    /// offset is `next_drive` (empty: none). `gradient` is a work buffer.
    ///
    /// # Errors
    /// When a term cannot be evaluated.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn replace<Sy: DynSystem, J: StepJacobian>(
        &self,
        eq: &StepEquations<'_, Sy>,
        x: &DVector<f64>,
        next_start: f64,
        next_drive: &[f64],
        r: &mut DVector<f64>,
        mut jac: Option<&mut J>,
        gradient: &mut Vec<f64>,
    ) -> Result<(), GeometryError> {
        let (n, h) = (eq.n, eq.h);
        let a = eq.a.as_slice();
        let d = &x.as_slice()[..n];
        let mu = &x.as_slice()[n..];
        let sign = match eq.ld.orientation() {
            diracvi_geometry::Orientation::Forward => 1.0,
            diracvi_geometry::Orientation::Reversed => -1.0,
        };
        let terms = eq
            .ld
            .system()
            .lagrangian_terms()
            .ok_or_else(|| GeometryError::BadStencil {
                term: 0,
                reason: "the system no longer declares its Lagrangian terms".to_owned(),
            })?;
        if let Some(j) = jac.as_deref_mut() {
            match j.sparse_mut() {
                Some(sparse) => {
                    let values = sparse.values_mut();
                    for &p in &self.positions {
                        values[p] = 0.0;
                    }
                }
                None => {
                    if let Some(dense) = j.dense_mut() {
                        for &row in &self.replaced {
                            dense.row_mut(row).fill(0.0);
                        }
                    }
                }
            }
        }
        gradient.resize(self.widest, 0.0);
        for y in &self.rows {
            let mut value = 0.0;
            for (e, local) in &y.terms {
                let s = terms.stencil(*e);
                let g = &mut gradient[..s.len()];
                value += eq.ld.next_hidden_term(*e, next_start, a, d, local, h, g)?;
                if let Some(j) = jac.as_deref_mut() {
                    for (&c, &v) in s.iter().zip(g.iter()) {
                        j.add(y.row, c, v);
                    }
                }
            }
            for &(jr, v) in &y.mu_cols {
                value += v * mu[jr];
            }
            for &(c, v) in &y.d_cols {
                value += v * sign * d[c] / h;
            }
            for &(jr, v) in &y.y_mu {
                value += v * next_drive.get(jr).copied().unwrap_or(0.0);
            }
            if let Some(j) = jac.as_deref_mut() {
                for &(jr, v) in &y.mu_cols {
                    j.add(y.row, n + jr, v);
                }
                for &(c, v) in &y.d_cols {
                    j.add(y.row, c, v * sign / h);
                }
            }
            r[y.row] = value;
        }
        Ok(())
    }
}

impl HiddenRow {
    /// The entries of `y` by equation: `y_q` on `0..n`, `y_μ` on `n..n + m`.
    fn equations(&self, n: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let q = self.y_q.iter().copied();
        q.chain(self.y_mu.iter().map(move |&(j, v)| (n + j, v)))
    }
}
