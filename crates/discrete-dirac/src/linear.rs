//! Linear solvers for Newton's method ([`crate::newton::Newton`]): the
//! storage of the Jacobian, its factorization, solves with the factors, and
//! a fallback for singular Jacobians.
//!
//! # What a linear solver provides
//!
//! A [`LinearSolver`] owns
//!
//! * the **Jacobian's storage type** ([`LinearSolver::Jacobian`]), which the
//!   residual functions fill: [`DMatrix<f64>`] for [`DenseLu`]; a sparse
//!   solver would use its own (a fixed pattern with values, say);
//! * the **factors**, held as an explicit state: [`LinearSolver::factor`]
//!   replaces them by those of a new Jacobian (or drops them when it is
//!   singular), [`LinearSolver::factors`] hands out the handle
//!   ([`LinearSolver::Factors`], `None` when nothing is held) and
//!   [`LinearSolver::clear_factors`] drops them. Solves go through the
//!   handle ([`Factorization::solve_in_place`]), so nobody can solve with
//!   factors that are not there, and whoever keeps factors from one solve
//!   for the next (simplified Newton) asks the solver whether it holds any;
//! * a **rank-revealing fallback** ([`LinearSolver::solve_rank_deficient`])
//!   that gives a step when the Jacobian is singular, or declines.
//!
//! Factoring and solving must not allocate (buffers are sized once, by the
//! constructor): Newton calls them on every iteration of every step.
//!
//! # Threshold semantics
//!
//! [`LinearSolver::factor`] gets `threshold`
//! ([`NewtonParams::singular_threshold`](crate::NewtonParams::singular_threshold),
//! default `1e-12`) and reports the Jacobian singular ([`Singular`]) when a
//! pivot is at most `threshold · max|J|` in magnitude (or NaN), or when
//! `J` is zero or holds a NaN; `max|J|` is the largest entry in magnitude
//! of the whole Jacobian. The rank-revealing fallback reads the same
//! threshold relative to its own measure of size (for [`DenseLu`]: singular
//! values below `threshold · σ_max` count as zero).
//!
//! # Adding a sparse LU
//!
//! A sparse solver (e.g. faer's sparse LU, for large circuits) is another
//! implementation of [`LinearSolver`]: `Jacobian` a sparse matrix with a
//! fixed pattern (created by [`LinearSolver::new_jacobian`] from the pattern
//! the solver was built with, so the symbolic analysis is done once),
//! `Factors` its numeric factorization, `factor` the numeric factorization
//! into buffers kept from the last one. A stepper whose residual writes that
//! Jacobian then runs [`Newton<SparseLu>`](crate::newton::Newton); the
//! iteration logic of [`crate::newton`] is the same for every solver.

use nalgebra::{DMatrix, DVector};
use std::fmt::Debug;

/// A Jacobian found singular by [`LinearSolver::factor`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Singular {
    /// The elimination step (column) at which no acceptable pivot was found
    /// (0 when the Jacobian is zero or holds a NaN).
    pub step: usize,
    /// The magnitude of the best pivot candidate (NaN when none is
    /// comparable; 0 for a zero Jacobian).
    pub pivot: f64,
    /// The scale the pivot is measured against: `max|J|`.
    pub scale: f64,
}

impl std::fmt::Display for Singular {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "singular Jacobian: pivot {:e} at step {} against max|J| = {:e}",
            self.pivot, self.step, self.scale
        )
    }
}

impl std::error::Error for Singular {}

/// Factors of a Jacobian, as held by a [`LinearSolver`].
pub trait Factorization {
    /// Overwrite `rhs` (the right-hand side `b`) with the solution `x` of
    /// `J x = b`, for the `J` these factors are of. Must not allocate.
    fn solve_in_place(&self, rhs: &mut DVector<f64>);
}

/// A linear solver for Newton's method: Jacobian storage, factorization
/// held as an explicit state, solves with the factors, and a fallback for
/// singular Jacobians. See the [module documentation](self).
pub trait LinearSolver: Debug + Clone {
    /// Storage of the Jacobian the residual functions fill.
    type Jacobian: Debug + Clone;
    /// The handle of held factors.
    type Factors: Factorization;

    /// Number of unknowns (and equations).
    fn size(&self) -> usize;

    /// Zeroed Jacobian storage of the right size (and pattern).
    fn new_jacobian(&self) -> Self::Jacobian;

    /// Factor `jac`, replacing the held factors. On a singular Jacobian (see
    /// the [threshold semantics](self#threshold-semantics)) nothing is held
    /// afterwards. Must not allocate.
    ///
    /// # Errors
    /// [`Singular`] when a pivot is at most `threshold · max|J|`.
    fn factor(&mut self, jac: &Self::Jacobian, threshold: f64) -> Result<&Self::Factors, Singular>;

    /// The held factors: of the Jacobian last factored successfully, unless
    /// dropped since.
    fn factors(&self) -> Option<&Self::Factors>;

    /// Drop the held factors (e.g. when the equations change form, so that
    /// factors of the old ones are not reused).
    fn clear_factors(&mut self);

    /// A step for a singular `jac`: write into `out` a solution of
    /// `jac · out = rhs` in a rank-revealing sense (dense: minimum-norm least
    /// squares), with the same `threshold`. Returns `false` when there is
    /// none (a non-finite Jacobian, or no fallback); Newton then fails with
    /// [`NewtonFailure::NonFinite`](crate::newton::NewtonFailure::NonFinite)
    /// `{ what: "Jacobian", .. }`. Held factors are left alone. May allocate
    /// (it is the exceptional path).
    fn solve_rank_deficient(
        &mut self,
        jac: &Self::Jacobian,
        threshold: f64,
        rhs: &DVector<f64>,
        out: &mut DVector<f64>,
    ) -> bool;
}

/// Dense LU factors with partial pivoting: `P J = L U`, `L` unit lower
/// triangular below the diagonal of `lu`, `U` on and above it; `P` the row
/// interchanges `swaps` (at elimination step `k` rows `k` and `swaps[k]`
/// were exchanged).
#[derive(Debug, Clone)]
pub struct DenseFactors {
    lu: DMatrix<f64>,
    swaps: Vec<usize>,
}

impl DenseFactors {
    fn zeros(n: usize) -> Self {
        Self {
            lu: DMatrix::zeros(n, n),
            swaps: vec![0; n],
        }
    }

    /// Storage-less placeholder (does not allocate).
    fn placeholder() -> Self {
        Self {
            lu: DMatrix::zeros(0, 0),
            swaps: Vec::new(),
        }
    }

    /// In-place LU with partial pivoting of `a` into `self`.
    ///
    /// Column-oriented (right-looking) on the column-major storage, so the
    /// inner loops run over contiguous slices without bounds checks. Small
    /// sizes get their own copy of the kernel with the size a constant (the
    /// loops unrolled; the same operations in the same order, so the same
    /// bits): Newton factors a 3 × 3 Jacobian per step for the pendulum.
    fn factor_from(&mut self, a: &DMatrix<f64>, threshold: f64) -> Result<(), Singular> {
        let n = a.nrows();
        assert_eq!(a.shape(), self.lu.shape(), "factor_from: Jacobian size");
        // Contiguous column-major slices: a plain copy and a plain fold
        // (nalgebra's `copy_from` and `amax` walk the generic storage).
        self.lu.as_mut_slice().copy_from_slice(a.as_slice());
        let amax = amax_in_order(a.as_slice());
        if amax.is_nan() || amax <= 0.0 {
            return Err(Singular {
                step: 0,
                pivot: amax,
                scale: amax,
            });
        }
        let (data, swaps) = (self.lu.as_mut_slice(), &mut self.swaps[..]);
        let limit = threshold * amax;
        match n {
            1 => lu_in_place(data, swaps, 1, limit, amax),
            2 => lu_in_place(data, swaps, 2, limit, amax),
            3 => lu_in_place(data, swaps, 3, limit, amax),
            4 => lu_in_place(data, swaps, 4, limit, amax),
            5 => lu_in_place(data, swaps, 5, limit, amax),
            6 => lu_in_place(data, swaps, 6, limit, amax),
            _ => lu_in_place(data, swaps, n, limit, amax),
        }
    }
}

/// `max_i |v_i|` folded in storage order exactly as nalgebra's `amax` does
/// (`acc = if acc >= |v| { acc } else { |v| }` from `|v_0|`, `0` when
/// empty), so that a NaN is reported the same way.
#[inline(always)]
fn amax_in_order(v: &[f64]) -> f64 {
    let mut it = v.iter();
    let mut acc = it.next().map_or(0.0, |x| x.abs());
    for x in it {
        let b = x.abs();
        acc = if acc >= b { acc } else { b };
    }
    acc
}

/// The LU kernel of [`DenseFactors::factor_from`] on the `n × n`
/// column-major `data`: a pivot at most `limit` (`threshold · max|J|`, with
/// `amax = max|J|` for the report) is singular.
#[inline(always)]
fn lu_in_place(
    data: &mut [f64],
    swaps: &mut [usize],
    n: usize,
    limit: f64,
    amax: f64,
) -> Result<(), Singular> {
    for k in 0..n {
        let (left, right) = data.split_at_mut((k + 1) * n);
        let col_k = &mut left[k * n..];
        let mut piv = k;
        let mut best = col_k[k].abs();
        for (i, v) in col_k.iter().enumerate().skip(k + 1) {
            if v.abs() > best {
                best = v.abs();
                piv = i;
            }
        }
        if best.is_nan() || best <= limit {
            return Err(Singular {
                step: k,
                pivot: best,
                scale: amax,
            });
        }
        swaps[k] = piv;
        if piv != k {
            col_k.swap(k, piv);
            for j in 0..k {
                left.swap(j * n + k, j * n + piv);
            }
            for col in right.chunks_exact_mut(n) {
                col.swap(k, piv);
            }
        }
        let col_k = &mut left[k * n..];
        let d = col_k[k];
        for v in &mut col_k[k + 1..] {
            *v /= d;
        }
        let l = &col_k[k + 1..];
        for col in right.chunks_exact_mut(n) {
            let u = col[k];
            if u != 0.0 {
                for (c, &f) in col[k + 1..].iter_mut().zip(l) {
                    *c -= f * u;
                }
            }
        }
    }
    Ok(())
}

/// The solve of [`DenseFactors`] on the `n × n` column-major factors `data`
/// with row interchanges `swaps` (specialised by size like
/// [`lu_in_place`]).
#[inline(always)]
fn lu_solve_in_place(data: &[f64], swaps: &[usize], n: usize, x: &mut [f64]) {
    for (k, &p) in swaps[..n].iter().enumerate() {
        x.swap(k, p);
    }
    // L (unit diagonal), column by column
    for j in 0..n {
        let xj = x[j];
        if xj != 0.0 {
            for (xi, &l) in x[j + 1..n]
                .iter_mut()
                .zip(&data[j * n + j + 1..(j + 1) * n])
            {
                *xi -= l * xj;
            }
        }
    }
    // U, column by column from the last
    for j in (0..n).rev() {
        let col = &data[j * n..j * n + j + 1];
        let xj = x[j] / col[j];
        x[j] = xj;
        if xj != 0.0 {
            for (xi, &u) in x[..j].iter_mut().zip(&col[..j]) {
                *xi -= u * xj;
            }
        }
    }
}

impl Factorization for DenseFactors {
    /// Solve `L U x = P b` in place: the row interchanges, then the two
    /// triangular solves, column by column.
    fn solve_in_place(&self, rhs: &mut DVector<f64>) {
        let n = self.lu.nrows();
        let (data, swaps, x) = (self.lu.as_slice(), &self.swaps[..], rhs.as_mut_slice());
        match n {
            1 => lu_solve_in_place(data, swaps, 1, x),
            2 => lu_solve_in_place(data, swaps, 2, x),
            3 => lu_solve_in_place(data, swaps, 3, x),
            4 => lu_solve_in_place(data, swaps, 4, x),
            5 => lu_solve_in_place(data, swaps, 5, x),
            6 => lu_solve_in_place(data, swaps, 6, x),
            _ => lu_solve_in_place(data, swaps, n, x),
        }
    }
}

/// What a [`DenseLu`] holds.
#[derive(Debug, Clone)]
enum DenseState {
    /// No factors; the buffers are scratch for the next factorization.
    Empty(DenseFactors),
    /// The factors of the Jacobian last factored.
    Factored(DenseFactors),
}

/// Dense LU with partial pivoting (in place, buffers allocated once), with
/// the rank-revealing fallback of [`SvdSplit`] (faer SVD, minimum-norm
/// step). The Jacobian is a [`DMatrix<f64>`].
#[derive(Debug, Clone)]
pub struct DenseLu {
    n: usize,
    state: DenseState,
}

impl DenseLu {
    /// A solver for `n` unknowns, holding no factors.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            state: DenseState::Empty(DenseFactors::zeros(n)),
        }
    }

    /// The buffers, taken out of the state (which is left an empty
    /// placeholder; no allocation either way).
    fn take_buffers(&mut self) -> DenseFactors {
        match std::mem::replace(
            &mut self.state,
            DenseState::Empty(DenseFactors::placeholder()),
        ) {
            DenseState::Empty(f) | DenseState::Factored(f) => f,
        }
    }
}

impl LinearSolver for DenseLu {
    type Jacobian = DMatrix<f64>;
    type Factors = DenseFactors;

    fn size(&self) -> usize {
        self.n
    }

    fn new_jacobian(&self) -> DMatrix<f64> {
        DMatrix::zeros(self.n, self.n)
    }

    fn factor(&mut self, jac: &DMatrix<f64>, threshold: f64) -> Result<&DenseFactors, Singular> {
        let mut buffers = self.take_buffers();
        match buffers.factor_from(jac, threshold) {
            Ok(()) => {
                self.state = DenseState::Factored(buffers);
                match &self.state {
                    DenseState::Factored(f) => Ok(f),
                    DenseState::Empty(_) => unreachable!("just set"),
                }
            }
            Err(singular) => {
                self.state = DenseState::Empty(buffers);
                Err(singular)
            }
        }
    }

    fn factors(&self) -> Option<&DenseFactors> {
        match &self.state {
            DenseState::Factored(f) => Some(f),
            DenseState::Empty(_) => None,
        }
    }

    fn clear_factors(&mut self) {
        let buffers = self.take_buffers();
        self.state = DenseState::Empty(buffers);
    }

    fn solve_rank_deficient(
        &mut self,
        jac: &DMatrix<f64>,
        threshold: f64,
        rhs: &DVector<f64>,
        out: &mut DVector<f64>,
    ) -> bool {
        match SvdSplit::new(jac, threshold) {
            Some(svd) => {
                out.copy_from(&svd.solve(rhs));
                true
            }
            None => false,
        }
    }
}

/// Rank-revealing pieces of a square matrix from faer's SVD.
#[derive(Debug, Clone)]
pub struct SvdSplit {
    /// Numerical rank.
    pub rank: usize,
    /// Left singular vectors of the non-zero singular values (`n × rank`).
    pub range: DMatrix<f64>,
    /// Left singular vectors of the zero singular values (`n × (n − rank)`):
    /// the left null space.
    pub left_null: DMatrix<f64>,
    /// Minimum-norm solution of `a x = b` in the least-squares sense.
    pseudo_inverse: DMatrix<f64>,
}

impl SvdSplit {
    /// SVD of `a` (faer), splitting singular values at `threshold · σ_max`.
    pub fn new(a: &DMatrix<f64>, threshold: f64) -> Option<Self> {
        let n = a.nrows();
        let m = faer::Mat::<f64>::from_fn(n, a.ncols(), |i, j| a[(i, j)]);
        let svd = m.svd().ok()?;
        let s = svd.S().column_vector();
        let smax = if n > 0 { s[0] } else { 0.0 };
        let rank = (0..s.nrows()).filter(|&i| s[i] > threshold * smax).count();
        let u = svd.U();
        let v = svd.V();
        let range = DMatrix::from_fn(n, rank, |i, j| u[(i, j)]);
        let left_null = DMatrix::from_fn(n, n - rank, |i, j| u[(i, rank + j)]);
        let pseudo_inverse = DMatrix::from_fn(a.ncols(), n, |i, j| {
            (0..rank).map(|k| v[(i, k)] * u[(j, k)] / s[k]).sum()
        });
        Some(Self {
            rank,
            range,
            left_null,
            pseudo_inverse,
        })
    }

    /// The minimum-norm least-squares solution of `a x = b`.
    pub fn solve(&self, b: &DVector<f64>) -> DVector<f64> {
        &self.pseudo_inverse * b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn dense_solve(a: &DMatrix<f64>, b: &DVector<f64>, threshold: f64) -> Option<DVector<f64>> {
        let mut lu = DenseLu::new(a.nrows());
        let factors = lu.factor(a, threshold).ok()?;
        let mut x = b.clone();
        factors.solve_in_place(&mut x);
        Some(x)
    }

    #[test]
    fn lu_solves_a_pivoting_system() {
        let a = DMatrix::from_row_slice(3, 3, &[0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0]);
        let b = DVector::from_vec(vec![1.0, 2.0, 3.0]);
        let x = dense_solve(&a, &b, 1e-12).expect("regular");
        // x = (1.2, 0.8, −0.6)
        assert_relative_eq!(x[0], 1.2, epsilon = 1e-14);
        assert_relative_eq!(x[1], 0.8, epsilon = 1e-14);
        assert_relative_eq!(x[2], -0.6, epsilon = 1e-14);
        let r = &a * &x - &b;
        assert!(r.amax() < 1e-14, "residual {}", r.amax());
    }

    #[test]
    fn lu_matches_a_reference_solve_on_many_sizes() {
        // deterministic "random" matrices with every pivot order exercised
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for n in 1..=9 {
            for _ in 0..20 {
                let a = DMatrix::from_fn(n, n, |_, _| next());
                let b = DVector::from_fn(n, |_, _| next());
                let x = dense_solve(&a, &b, 1e-14).expect("regular");
                let reference = a.clone().lu().solve(&b).expect("regular");
                let cond = a.clone().svd(false, false).singular_values;
                let kappa = cond.max() / cond.min();
                assert!(
                    (&x - &reference).amax() <= 1e-14 * kappa * reference.amax().max(1.0),
                    "n = {n}: {x} vs {reference}"
                );
            }
        }
    }

    #[test]
    fn amax_in_order_is_nalgebras_amax() {
        let cases: [&[f64]; 7] = [
            &[],
            &[-3.0],
            &[1.0, -4.0, 2.0],
            &[f64::NAN, 2.0, -1.0],
            &[1.0, f64::NAN, -0.5],
            &[1.0, -0.5, f64::NAN],
            &[-0.0, 0.0, -0.0],
        ];
        for v in cases {
            let m = DMatrix::from_column_slice(v.len(), 1, v);
            let (ours, theirs) = (amax_in_order(v), m.amax());
            assert_eq!(ours.to_bits(), theirs.to_bits(), "{v:?}: {ours} {theirs}");
        }
    }

    #[test]
    fn singular_jacobians_are_reported_and_leave_no_factors() {
        let mut lu = DenseLu::new(2);
        let regular = DMatrix::from_row_slice(2, 2, &[2.0, 1.0, 1.0, 3.0]);
        assert!(lu.factor(&regular, 1e-12).is_ok());
        assert!(lu.factors().is_some());
        // rank 1: the second pivot is exactly zero after elimination
        let a = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]);
        let s = lu.factor(&a, 1e-12).unwrap_err();
        assert_eq!(s.step, 1);
        assert_relative_eq!(s.pivot, 0.0, epsilon = 0.0);
        assert_relative_eq!(s.scale, 4.0, epsilon = 0.0, max_relative = 0.0);
        assert!(lu.factors().is_none(), "failed factorization drops factors");
        // the zero matrix and a NaN
        let s = lu.factor(&DMatrix::zeros(2, 2), 1e-12).unwrap_err();
        assert_eq!(s.step, 0);
        assert_relative_eq!(s.pivot, 0.0, epsilon = 0.0);
        assert_relative_eq!(s.scale, 0.0, epsilon = 0.0);
        let mut nan = regular.clone();
        nan[(1, 0)] = f64::NAN;
        assert!(lu.factor(&nan, 1e-12).is_err());
        // the threshold is relative to max|J|: pivot 1e-6 against 1e6
        let graded = DMatrix::from_row_slice(2, 2, &[1e6, 0.0, 0.0, 1e-6]);
        assert!(lu.factor(&graded, 1e-12).is_err());
        assert!(lu.factor(&graded, 1e-13).is_ok());
        // cleared factors are gone; refactoring brings them back
        lu.clear_factors();
        assert!(lu.factors().is_none());
        let mut x = DVector::from_vec(vec![3.0, 4.0]);
        lu.factor(&regular, 1e-12).unwrap().solve_in_place(&mut x);
        assert_relative_eq!(x[0], 1.0, epsilon = 1e-15);
        assert_relative_eq!(x[1], 1.0, epsilon = 1e-15);
    }

    #[test]
    fn rank_deficient_fallback_gives_the_minimum_norm_step() {
        // a = [[1, 1], [1, 1]], b = (2, 2): minimum-norm solution (1, 1)
        let a = DMatrix::from_element(2, 2, 1.0);
        let b = DVector::from_vec(vec![2.0, 2.0]);
        let mut lu = DenseLu::new(2);
        assert!(lu.factor(&a, 1e-12).is_err());
        let mut out = DVector::zeros(2);
        assert!(lu.solve_rank_deficient(&a, 1e-12, &b, &mut out));
        assert_relative_eq!(out[0], 1.0, epsilon = 1e-14);
        assert_relative_eq!(out[1], 1.0, epsilon = 1e-14);
    }

    #[test]
    fn svd_split_finds_left_null_space() {
        // rows 1 and 2 equal: left null vector (0, 1, -1)/√2
        let a = DMatrix::from_row_slice(3, 3, &[1.0, 2.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]);
        let s = SvdSplit::new(&a, 1e-12).unwrap();
        assert_eq!(s.rank, 2);
        let y = s.left_null.column(0);
        assert_relative_eq!((y.transpose() * &a).amax(), 0.0, epsilon = 1e-14);
        assert_relative_eq!(y[1].abs(), std::f64::consts::FRAC_1_SQRT_2, epsilon = 1e-14);
    }
}
