//! A sparse LU [`LinearSolver`] (faer's simplicial sparse LU with partial
//! pivoting) for Jacobians with a fixed sparsity pattern.
//!
//! The pattern is given once ([`SparsePattern`]); the fill-reducing column
//! ordering (COLAMD) is computed from it once, in [`SparseLu::new`]. Every
//! [`LinearSolver::factor`] is a numeric factorization into the buffers of
//! the previous one (they only grow when partial pivoting needs more fill
//! than any factorization before); the triangular factors are then copied
//! once into plain compressed-row arrays, and every solve is two row sweeps
//! over them with a work vector sized by the constructor (no allocation).
//! Singularity follows the [threshold
//! semantics](crate::linear#threshold-semantics) of the dense LU: a pivot of
//! `U` at most `threshold · max|J|` marks the Jacobian singular.
//!
//! A Jacobian with entries recorded outside the pattern
//! ([`SparseJacobian::outside`]) is refused as singular (pivot NaN): its
//! factors over the pattern would be those of another matrix.
//!
//! There is no rank-revealing fallback ([`LinearSolver::solve_rank_deficient`]
//! declines): a user of the sparse solver removes singularities before it
//! factors (a degenerate step of [`crate::dynamic`] on sparse storage
//! replaces the redundant rows by the hidden constraints its system
//! supplies, docs/theory.md §8.2).

use crate::linear::{Factorization, LinearSolver, Singular};
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::perm::PermRef;
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::linalg::lu::{
    LuSymbolicParams, factorize_symbolic_lu,
    simplicial::{self, SimplicialLu},
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};

use nalgebra::DVector;
use std::cell::RefCell;
use std::sync::Arc;

/// A square sparsity pattern in compressed sparse column form (row indices
/// sorted and unique within each column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparsePattern {
    n: usize,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
}

impl SparsePattern {
    /// The `n × n` pattern holding the given `(row, column)` entries
    /// (duplicates merged). Entries outside `n × n` are dropped and counted
    /// in the returned `usize` (a caller treats a non-zero count as a bug).
    pub fn from_entries(n: usize, entries: impl IntoIterator<Item = (usize, usize)>) -> Self {
        let mut by_col: Vec<(usize, usize)> = entries
            .into_iter()
            .filter(|&(r, c)| r < n && c < n)
            .map(|(r, c)| (c, r))
            .collect();
        by_col.sort_unstable();
        by_col.dedup();
        let mut col_ptr = vec![0; n + 1];
        for &(c, _) in &by_col {
            col_ptr[c + 1] += 1;
        }
        for c in 0..n {
            col_ptr[c + 1] += col_ptr[c];
        }
        let row_idx = by_col.into_iter().map(|(_, r)| r).collect();
        Self {
            n,
            col_ptr,
            row_idx,
        }
    }

    /// Number of rows (and columns).
    pub fn size(&self) -> usize {
        self.n
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// The storage position of entry `(row, col)`, if it is in the pattern.
    #[inline]
    pub fn position(&self, row: usize, col: usize) -> Option<usize> {
        let (start, end) = (self.col_ptr[col], self.col_ptr[col + 1]);
        self.row_idx[start..end]
            .binary_search(&row)
            .ok()
            .map(|k| start + k)
    }

    /// `(row, col, storage position)` of every entry, column by column.
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
        (0..self.n).flat_map(move |c| {
            (self.col_ptr[c]..self.col_ptr[c + 1]).map(move |k| (self.row_idx[k], c, k))
        })
    }

    fn symbolic(&self) -> SymbolicSparseColMatRef<'_, usize> {
        SymbolicSparseColMatRef::new_checked(self.n, self.n, &self.col_ptr, None, &self.row_idx)
    }
}

/// A sparse Jacobian: a shared [`SparsePattern`] and its values.
#[derive(Debug, Clone)]
pub struct SparseJacobian {
    pattern: Arc<SparsePattern>,
    values: Vec<f64>,
    /// Non-zero entries written outside the pattern (see
    /// [`outside`](Self::outside)).
    outside: Vec<(usize, usize, f64)>,
}

impl SparseJacobian {
    /// Zero values on `pattern`.
    pub fn zeros(pattern: Arc<SparsePattern>) -> Self {
        let values = vec![0.0; pattern.nnz()];
        Self {
            pattern,
            values,
            outside: Vec::new(),
        }
    }

    /// The pattern.
    pub fn pattern(&self) -> &SparsePattern {
        &self.pattern
    }

    /// Set every stored value to zero (and forget the entries recorded
    /// outside the pattern).
    pub fn fill_zero(&mut self) {
        self.values.fill(0.0);
        self.outside.clear();
    }

    /// Record entry `(row, col)` of value `v` outside the pattern (the
    /// assembly of [`StepJacobian`](crate::assembly::StepJacobian) does so
    /// for a non-zero entry [`add`](Self::add) cannot store): a solver then
    /// factors the Jacobian densely or refuses it.
    pub fn record_outside(&mut self, row: usize, col: usize, v: f64) {
        self.outside.push((row, col, v));
    }

    /// The entries recorded outside the pattern since the last
    /// [`fill_zero`](Self::fill_zero) (empty when the pattern promise holds).
    pub fn outside(&self) -> &[(usize, usize, f64)] {
        &self.outside
    }

    /// Add `v` to entry `(row, col)`. Returns `false` (and changes nothing)
    /// when the entry is not in the pattern.
    #[inline]
    pub fn add(&mut self, row: usize, col: usize, v: f64) -> bool {
        match self.pattern.position(row, col) {
            Some(k) => {
                self.values[k] += v;
                true
            }
            None => false,
        }
    }

    /// Entry `(row, col)` (zero outside the pattern).
    pub fn get(&self, row: usize, col: usize) -> f64 {
        self.pattern
            .position(row, col)
            .map_or(0.0, |k| self.values[k])
    }

    /// The stored values, in pattern order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The stored values, in pattern order, for writing (positions from
    /// [`SparsePattern::position`]).
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }

    /// `(row, col, value)` of every stored entry.
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        let p = &*self.pattern;
        (0..p.n).flat_map(move |c| {
            (p.col_ptr[c]..p.col_ptr[c + 1]).map(move |k| (p.row_idx[k], c, self.values[k]))
        })
    }

    /// Largest stored value in magnitude (NaN if any value is NaN).
    pub fn amax(&self) -> f64 {
        let mut m: f64 = 0.0;
        for &v in &self.values {
            if v.is_nan() {
                return f64::NAN;
            }
            m = m.max(v.abs());
        }
        m
    }

    fn as_faer(&self) -> SparseColMatRef<'_, usize, f64> {
        SparseColMatRef::new(self.pattern.symbolic(), &self.values)
    }
}

/// A scratch buffer of a fixed requirement (a clone allocates its own).
struct Scratch {
    req: StackReq,
    buffer: MemBuffer,
}

impl Scratch {
    fn new(req: StackReq) -> Self {
        Self {
            req,
            buffer: MemBuffer::new(req),
        }
    }
}

impl Clone for Scratch {
    fn clone(&self) -> Self {
        Self::new(self.req)
    }
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratch").field("req", &self.req).finish()
    }
}

/// One triangular factor in compressed sparse **row** form (columns
/// ascending within a row), its diagonal apart: the solves then accumulate
/// each row in a register (a column sweep would chain every update through
/// memory).
#[derive(Debug, Clone, Default)]
struct Triangle {
    row_ptr: Vec<usize>,
    col_idx: Vec<usize>,
    values: Vec<f64>,
    diagonal: Vec<f64>,
    /// `1 / diagonal` (a multiplication in the solves' dependency chain
    /// instead of a division).
    inverse_diagonal: Vec<f64>,
    /// Fill cursor of each row (building only).
    cursor: Vec<usize>,
}

impl Triangle {
    /// Copy a factor of faer's (compressed columns, rows unsorted),
    /// transposing its off-diagonal part; buffers are reused, grown only
    /// when the fill grows. The diagonal goes to `diagonal` (zero if absent).
    fn copy_from(&mut self, f: SparseColMatRef<'_, usize, f64>) {
        let n = f.ncols();
        self.diagonal.clear();
        self.diagonal.resize(n, 0.0);
        self.row_ptr.clear();
        self.row_ptr.resize(n + 1, 0);
        for j in 0..n {
            for &i in f.row_idx_of_col_raw(j) {
                if i != j {
                    self.row_ptr[i + 1] += 1;
                }
            }
        }
        for i in 0..n {
            self.row_ptr[i + 1] += self.row_ptr[i];
        }
        let nnz = self.row_ptr[n];
        self.col_idx.resize(nnz, 0);
        self.values.resize(nnz, 0.0);
        self.cursor.clear();
        self.cursor.extend_from_slice(&self.row_ptr[..n]);
        for j in 0..n {
            for (&i, &v) in f.row_idx_of_col_raw(j).iter().zip(f.val_of_col(j)) {
                if i == j {
                    self.diagonal[j] = v;
                } else {
                    let k = self.cursor[i];
                    self.col_idx[k] = j;
                    self.values[k] = v;
                    self.cursor[i] += 1;
                }
            }
        }
        self.inverse_diagonal.clear();
        self.inverse_diagonal
            .extend(self.diagonal.iter().map(|d| d.recip()));
    }

    /// Divide every row by its diagonal (`T_ij / T_ii` for `j ≠ i`), for
    /// the backward sweep.
    fn scale_rows(&mut self) {
        for (i, &d) in self.inverse_diagonal.iter().enumerate() {
            for v in &mut self.values[self.row_ptr[i]..self.row_ptr[i + 1]] {
                *v *= d;
            }
        }
    }
}

/// Factors held by [`SparseLu`]: `P_r J P_c = L U`.
///
/// The factors are copied out of faer's into plain compressed rows once
/// per factorization, and the solves are plain loops over them: faer's
/// generic solve (permutation checks, a scratch stack, views) costs several
/// times the arithmetic for the banded factors of a large circuit.
#[derive(Debug, Clone)]
pub struct SparseFactors {
    lu: SimplicialLu<usize, f64>,
    row_perm: Vec<usize>,
    row_perm_inv: Vec<usize>,
    col_perm: Vec<usize>,
    col_perm_inv: Vec<usize>,
    /// `L` (unit diagonal) and `U`.
    l: Triangle,
    u: Triangle,
    /// Work vector of the solves (sized once).
    work: RefCell<Vec<f64>>,
}

impl SparseFactors {
    /// Copy the triangular factors out of faer's.
    fn extract(&mut self) {
        self.l.copy_from(self.lu.l_factor_unsorted());
        self.u.copy_from(self.lu.u_factor_unsorted());
        self.u.scale_rows();
    }
}

impl Factorization for SparseFactors {
    // `inline`: compiled with the caller (a circuit crate's optimised
    // profile), not only here.
    #[inline]
    fn solve_in_place(&self, rhs: &mut DVector<f64>) {
        // J = P_rᵀ L U P_cᵀ: y = P_r b, L z = y, U w = z, x = P_c w.
        let x = rhs.as_mut_slice();
        let mut work = self.work.borrow_mut();
        let y = work.as_mut_slice();
        for (yi, &p) in y.iter_mut().zip(&self.row_perm) {
            *yi = x[p];
        }
        // Each row accumulates from its own entry, the latest unknown
        // (the nearest column) last: one multiply-subtract between the
        // rows of a banded factor's dependency chain.
        // (Plain index loops: iterator adapters are not inlined in the
        // lightly optimised dev profile.)
        let (l, u) = (&self.l, &self.u);
        for i in 0..y.len() {
            let mut acc = y[i];
            let mut k = l.row_ptr[i];
            while k < l.row_ptr[i + 1] {
                acc -= l.values[k] * y[l.col_idx[k]];
                k += 1;
            }
            y[i] = acc;
        }
        for i in (0..y.len()).rev() {
            let mut acc = y[i] * u.inverse_diagonal[i];
            let mut k = u.row_ptr[i + 1];
            while k > u.row_ptr[i] {
                k -= 1;
                acc -= u.values[k] * y[u.col_idx[k]];
            }
            y[i] = acc;
        }
        for (xi, &p) in x.iter_mut().zip(&self.col_perm_inv) {
            *xi = y[p];
        }
    }
}

/// Sparse LU over a fixed pattern: column ordering once, numeric
/// factorizations into kept buffers. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct SparseLu {
    pattern: Arc<SparsePattern>,
    factors: SparseFactors,
    held: bool,
    factor_mem: Scratch,
}

impl SparseLu {
    /// A solver for Jacobians with the given pattern: computes the
    /// fill-reducing column ordering and sizes the scratch buffers.
    ///
    /// # Errors
    /// [`Singular`] (at step 0) when the pattern is structurally empty in
    /// some column, or faer cannot analyse it.
    pub fn new(pattern: SparsePattern) -> Result<Self, Singular> {
        let n = pattern.n;
        let structural = Singular {
            step: 0,
            pivot: 0.0,
            scale: 0.0,
        };
        let params = LuSymbolicParams {
            supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
            ..Default::default()
        };
        let symbolic = factorize_symbolic_lu(pattern.symbolic(), params).map_err(|_| structural)?;
        let (fwd, inv) = symbolic.col_perm().arrays();
        let (col_perm, col_perm_inv) = (fwd.to_vec(), inv.to_vec());
        let factor_req = simplicial::factorize_simplicial_numeric_lu_scratch::<usize, f64>(n, n);
        Ok(Self {
            pattern: Arc::new(pattern),
            factors: SparseFactors {
                lu: SimplicialLu::new(),
                row_perm: vec![0; n],
                row_perm_inv: vec![0; n],
                col_perm,
                col_perm_inv,
                l: Triangle::default(),
                u: Triangle::default(),
                work: RefCell::new(vec![0.0; n]),
            },
            held: false,
            factor_mem: Scratch::new(factor_req),
        })
    }

    /// The pattern the solver was built for.
    pub fn pattern(&self) -> &Arc<SparsePattern> {
        &self.pattern
    }
}

impl LinearSolver for SparseLu {
    type Jacobian = SparseJacobian;
    type Factors = SparseFactors;

    fn size(&self) -> usize {
        self.pattern.n
    }

    fn new_jacobian(&self) -> SparseJacobian {
        SparseJacobian::zeros(self.pattern.clone())
    }

    fn factor(&mut self, jac: &SparseJacobian, threshold: f64) -> Result<&SparseFactors, Singular> {
        self.held = false;
        if !jac.outside().is_empty() {
            // Entries outside the pattern: these factors would be of
            // another matrix. Refused (no pivot is comparable).
            return Err(Singular {
                step: 0,
                pivot: f64::NAN,
                scale: f64::NAN,
            });
        }
        let amax = jac.amax();
        if amax.is_nan() || amax <= 0.0 {
            return Err(Singular {
                step: 0,
                pivot: amax,
                scale: amax,
            });
        }
        let f = &mut self.factors;
        let n = self.pattern.n;
        let stack = MemStack::new(&mut self.factor_mem.buffer);
        let col_perm = PermRef::new_checked(&f.col_perm, &f.col_perm_inv, n);
        if let Err(e) = simplicial::factorize_simplicial_numeric_lu(
            &mut f.row_perm,
            &mut f.row_perm_inv,
            &mut f.lu,
            jac.as_faer(),
            col_perm,
            stack,
        ) {
            let step = match e {
                faer::sparse::linalg::LuError::SymbolicSingular { index } => index,
                faer::sparse::linalg::LuError::Generic(_) => 0,
            };
            return Err(Singular {
                step,
                pivot: 0.0,
                scale: amax,
            });
        }
        f.extract();
        // Pivots: the diagonal of U.
        for j in 0..n {
            let pivot = f.u.diagonal[j].abs();
            if pivot.is_nan() || pivot <= threshold * amax {
                return Err(Singular {
                    step: j,
                    pivot,
                    scale: amax,
                });
            }
        }
        self.held = true;
        Ok(&self.factors)
    }

    fn factors(&self) -> Option<&SparseFactors> {
        self.held.then_some(&self.factors)
    }

    fn clear_factors(&mut self) {
        self.held = false;
    }

    fn solve_rank_deficient(
        &mut self,
        _jac: &SparseJacobian,
        _threshold: f64,
        _rhs: &DVector<f64>,
        _out: &mut DVector<f64>,
    ) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    fn jacobian(a: &DMatrix<f64>) -> (SparseLu, SparseJacobian) {
        let n = a.nrows();
        let entries = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .filter(|&(i, j)| a[(i, j)] != 0.0);
        let lu = SparseLu::new(SparsePattern::from_entries(n, entries)).unwrap();
        let mut jac = lu.new_jacobian();
        for i in 0..n {
            for j in 0..n {
                if a[(i, j)] != 0.0 {
                    assert!(jac.add(i, j, a[(i, j)]));
                }
            }
        }
        (lu, jac)
    }

    /// The sparse LU solves a sparse system that needs row pivoting, to
    /// round-off against the dense solution, and reuses its buffers.
    #[test]
    fn solves_like_dense_lu_and_refactors() {
        #[rustfmt::skip]
        let a = DMatrix::from_row_slice(5, 5, &[
            0.0, 2.0, 0.0, 0.0, 1.0,
            3.0, 0.0, 0.0, 1.0, 0.0,
            0.0, 1.0, 4.0, 0.0, 0.0,
            1.0, 0.0, 0.0, 0.0, 2.0,
            0.0, 0.0, 1.0, 5.0, 0.0,
        ]);
        let b = DVector::from_column_slice(&[1.0, -2.0, 0.5, 3.0, 1.5]);
        let (mut lu, mut jac) = jacobian(&a);
        let exact = a.clone().lu().solve(&b).unwrap();
        let mut x = b.clone();
        lu.factor(&jac, 1e-12).unwrap().solve_in_place(&mut x);
        assert!((&x - &exact).amax() <= 1e-14 * exact.amax());
        // A new numeric factorization with other values on the same pattern.
        jac.fill_zero();
        let a2 = &a * 2.0;
        for (i, j, _) in jacobian(&a).1.entries().collect::<Vec<_>>() {
            jac.add(i, j, a2[(i, j)]);
        }
        let mut x2 = b.clone();
        lu.factor(&jac, 1e-12).unwrap().solve_in_place(&mut x2);
        assert!((&x2 * 2.0 - &exact).amax() <= 1e-14 * exact.amax());
        assert!(lu.factors().is_some());
        lu.clear_factors();
        assert!(lu.factors().is_none());
    }

    /// A larger unsymmetric sparse matrix (band, scattered entries, a zero
    /// diagonal to force row pivoting): the solves over the copied
    /// compressed-row factors agree with the dense LU to round-off, also
    /// after refactoring new values on the same pattern.
    #[test]
    fn banded_and_scattered_against_dense() {
        let n = 60;
        let mut a = DMatrix::zeros(n, n);
        for i in 0..n {
            let x = i as f64;
            if i % 7 != 3 {
                a[(i, i)] = 2.0 + (0.37 * x).sin();
            }
            if i + 1 < n {
                a[(i, i + 1)] = -1.0 + 0.1 * (1.3 * x).cos();
                a[(i + 1, i)] = -0.8 + 0.2 * (0.7 * x).sin();
            }
            a[(i, (7 * i + 11) % n)] += 0.3 + 0.01 * x;
        }
        let b = DVector::from_fn(n, |i, _| (0.9 * i as f64).cos());
        let (mut lu, mut jac) = jacobian(&a);
        for scale in [1.0, -3.0] {
            jac.fill_zero();
            for i in 0..n {
                for j in 0..n {
                    if a[(i, j)] != 0.0 {
                        jac.add(i, j, scale * a[(i, j)]);
                    }
                }
            }
            let exact = (&a * scale).lu().solve(&b).unwrap();
            let mut x = b.clone();
            lu.factor(&jac, 1e-12).unwrap().solve_in_place(&mut x);
            let err = (&x - &exact).amax() / exact.amax();
            assert!(err <= 1e-13, "scale {scale}: {err:e}");
        }
    }

    /// A numerically singular matrix is reported with the threshold of the
    /// dense LU, and no factors are held.
    #[test]
    fn singular_by_threshold() {
        #[rustfmt::skip]
        let a = DMatrix::from_row_slice(3, 3, &[
            1.0, 2.0, 0.0,
            2.0, 4.0, 0.0,
            0.0, 0.0, 1.0,
        ]);
        let (mut lu, jac) = jacobian(&a);
        let err = lu.factor(&jac, 1e-12).unwrap_err();
        assert!(err.pivot <= 1e-12 * 4.0, "{err}");
        assert!(lu.factors().is_none());
        assert!(!lu.solve_rank_deficient(&jac, 1e-12, &DVector::zeros(3), &mut DVector::zeros(3)));
    }
}
