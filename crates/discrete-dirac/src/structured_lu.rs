//! The linear solver chosen by the structure of the step Jacobian: the
//! dense LU ([`DenseLu`]) or the sparse LU ([`SparseLu`]) behind one
//! [`LinearSolver`] whose Jacobian storage is dense.
//!
//! The run-time-sized Lagrange–Dirac stepper writes its Jacobian
//! `[[D12 L_d, −Aᵀ], [∂ω, 0]]` into a [`DMatrix`]. When the system declares
//! its Lagrangian term by term ([`DynSystem::lagrangian_terms`]), `D12 L_d`
//! is zero outside `⋃_e S_e × S_e` (docs/theory.md §11.4), and for sparse
//! couplings (a chain, a gas of bodies) the whole Jacobian is sparse. Then
//! [`StructuredLu::for_system`] builds the sparse LU over that pattern (the
//! fill-reducing ordering is computed once) and every factorization gathers
//! the pattern's entries out of the dense storage: `O(nnz)` gathered, a
//! factorization of the cost of the fill instead of `(n + m)³/3`.
//!
//! The pattern is a promise of the system's, and a wrong one must not give
//! a wrong Newton step: every factorization checks that the Jacobian is
//! zero outside the pattern (a gyroscopic force, or the rows a degenerate
//! step replaces by hidden constraints, may fill it) and factors that
//! Jacobian densely when it is not. The check reads each entry once, as
//! the gather does, so the sparse path stays `O((n + m)²)` in memory
//! traffic and far below the dense factorization's `O((n + m)³)`.
//!
//! Singularity follows the [threshold
//! semantics](crate::linear#threshold-semantics) of both solvers (the scale
//! `max|J|` is the same, since the Jacobian is zero outside the pattern);
//! the rank-revealing fallback is the dense one.

use crate::linear::{DenseLu, Factorization, LinearSolver, Singular};
use crate::sparse_lu::{SparseJacobian, SparseLu, SparsePattern};
use diracvi_geometry::dynamic::DynSystem;
use nalgebra::{DMatrix, DVector};

/// The sparse LU is used when the pattern holds at most this fraction of
/// the `(n + m)²` entries…
pub const SPARSE_DENSITY_AT_MOST: f64 = 0.25;

/// …and the Jacobian has at least this many rows (below it the dense LU's
/// plain loops win; measured with `cargo bench -p diracvi-discrete-dirac
/// --bench sizes`).
pub const SPARSE_SIZE_AT_LEAST: usize = 24;

/// Which factorization a [`StructuredLu`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structure {
    /// The dense LU with partial pivoting.
    Dense,
    /// The sparse LU over the declared pattern (with the dense LU for a
    /// Jacobian that leaves it).
    Sparse,
}

/// The sparse side: the solver, the gathered values, and the dense LU for
/// Jacobians that leave the pattern. At most one of the two holds factors
/// (factoring with one clears the other).
#[derive(Debug, Clone)]
struct SparseSide {
    lu: SparseLu,
    values: SparseJacobian,
    dense: DenseLu,
}

#[derive(Debug, Clone)]
enum Inner {
    Dense(DenseLu),
    Sparse(Box<SparseSide>),
}

/// The dense or the sparse LU behind one [`LinearSolver`] with a dense
/// Jacobian ([`DMatrix<f64>`]), chosen by the Jacobian's structure. See the
/// [module documentation](self).
///
/// The [`Factorization`] handle is the solver itself: it solves with the
/// factors it holds (and is only handed out while it holds some).
#[derive(Debug, Clone)]
pub struct StructuredLu {
    n: usize,
    inner: Inner,
}

impl StructuredLu {
    /// The dense LU for `n` unknowns.
    pub fn dense(n: usize) -> Self {
        Self {
            n,
            inner: Inner::Dense(DenseLu::new(n)),
        }
    }

    /// The sparse LU over `pattern` (with the dense LU for Jacobians that
    /// leave it). The diagonal is added to the pattern.
    ///
    /// # Errors
    /// [`Singular`] when faer cannot analyse the pattern.
    pub fn sparse(
        pattern: impl IntoIterator<Item = (usize, usize)>,
        n: usize,
    ) -> Result<Self, Singular> {
        let pattern =
            SparsePattern::from_entries(n, pattern.into_iter().chain((0..n).map(|i| (i, i))));
        let lu = SparseLu::new(pattern)?;
        let values = lu.new_jacobian();
        Ok(Self {
            n,
            inner: Inner::Sparse(Box::new(SparseSide {
                lu,
                values,
                dense: DenseLu::new(n),
            })),
        })
    }

    /// The solver for the Lagrange–Dirac step Jacobian of `system` (`n + m`
    /// unknowns: `d`, then `μ`): sparse when the system declares its
    /// Lagrangian term by term, the Jacobian has at least
    /// [`SPARSE_SIZE_AT_LEAST`] rows and the pattern (the terms' blocks, the
    /// constraint rows and columns, the diagonal) holds at most
    /// [`SPARSE_DENSITY_AT_MOST`] of its entries; dense otherwise.
    pub fn for_system<Sy: DynSystem>(system: &Sy) -> Self {
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        let size = n + m;
        let dense = || Self::dense(size);
        let Some(terms) = system.lagrangian_terms() else {
            return dense();
        };
        if size < SPARSE_SIZE_AT_LEAST
            || n <= diracvi_geometry::dynamic::TERMWISE_ABOVE
            || terms.coordinate_count() != n
        {
            return dense();
        }
        let block: Vec<(usize, usize)> = terms.pattern().collect();
        let nnz = block.len() + 2 * n * m + size;
        if nnz as f64 > SPARSE_DENSITY_AT_MOST * (size * size) as f64 {
            return dense();
        }
        let constraints = (0..m).flat_map(|r| (0..n).flat_map(move |c| [(n + r, c), (c, n + r)]));
        Self::sparse(block.into_iter().chain(constraints), size).unwrap_or_else(|_| dense())
    }

    /// The factorization in use.
    pub fn structure(&self) -> Structure {
        match self.inner {
            Inner::Dense(_) => Structure::Dense,
            Inner::Sparse(_) => Structure::Sparse,
        }
    }
}

/// Gather `jac`'s entries on `pattern` into `out` (in pattern order);
/// `false` when `jac` has a non-zero (or NaN) entry outside the pattern.
fn gather(jac: &DMatrix<f64>, pattern: &SparsePattern, out: &mut [f64]) -> bool {
    let n = jac.nrows();
    let data = jac.as_slice();
    // The pattern's entries come column by column, rows increasing: their
    // column-major positions increase, and what lies between two of them
    // is outside the pattern.
    let mut next = 0;
    for (r, c, k) in pattern.entries() {
        let at = c * n + r;
        if data[next..at].iter().any(|&v| v != 0.0) {
            return false;
        }
        out[k] = data[at];
        next = at + 1;
    }
    data[next..].iter().all(|&v| v == 0.0)
}

impl Factorization for StructuredLu {
    fn solve_in_place(&self, rhs: &mut DVector<f64>) {
        match &self.inner {
            Inner::Dense(lu) => {
                if let Some(f) = lu.factors() {
                    f.solve_in_place(rhs);
                }
            }
            Inner::Sparse(s) => {
                if let Some(f) = s.dense.factors() {
                    f.solve_in_place(rhs);
                } else if let Some(f) = s.lu.factors() {
                    f.solve_in_place(rhs);
                }
            }
        }
    }
}

impl LinearSolver for StructuredLu {
    type Jacobian = DMatrix<f64>;
    type Factors = StructuredLu;

    fn size(&self) -> usize {
        self.n
    }

    fn new_jacobian(&self) -> DMatrix<f64> {
        DMatrix::zeros(self.n, self.n)
    }

    fn factor(&mut self, jac: &DMatrix<f64>, threshold: f64) -> Result<&StructuredLu, Singular> {
        match &mut self.inner {
            Inner::Dense(lu) => {
                lu.factor(jac, threshold)?;
            }
            Inner::Sparse(s) => {
                let SparseSide { lu, values, dense } = &mut **s;
                if gather(jac, lu.pattern(), values.values_mut()) {
                    dense.clear_factors();
                    lu.factor(values, threshold)?;
                } else {
                    lu.clear_factors();
                    dense.factor(jac, threshold)?;
                }
            }
        }
        Ok(self)
    }

    fn factors(&self) -> Option<&StructuredLu> {
        let held = match &self.inner {
            Inner::Dense(lu) => lu.factors().is_some(),
            Inner::Sparse(s) => s.dense.factors().is_some() || s.lu.factors().is_some(),
        };
        held.then_some(self)
    }

    fn clear_factors(&mut self) {
        match &mut self.inner {
            Inner::Dense(lu) => lu.clear_factors(),
            Inner::Sparse(s) => {
                s.lu.clear_factors();
                s.dense.clear_factors();
            }
        }
    }

    fn solve_rank_deficient(
        &mut self,
        jac: &DMatrix<f64>,
        threshold: f64,
        rhs: &DVector<f64>,
        out: &mut DVector<f64>,
    ) -> bool {
        match &mut self.inner {
            Inner::Dense(lu) => lu.solve_rank_deficient(jac, threshold, rhs, out),
            Inner::Sparse(s) => s.dense.solve_rank_deficient(jac, threshold, rhs, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    /// A tridiagonal-plus-border matrix of size `n` and its pattern.
    fn bordered(n: usize) -> (DMatrix<f64>, Vec<(usize, usize)>) {
        let mut a = DMatrix::zeros(n, n);
        let mut pattern = Vec::new();
        for i in 0..n {
            a[(i, i)] = 4.0 + i as f64 * 0.01;
            pattern.push((i, i));
            if i + 1 < n - 1 {
                a[(i, i + 1)] = -1.0;
                a[(i + 1, i)] = -1.5;
                pattern.extend([(i, i + 1), (i + 1, i)]);
            }
        }
        // a constraint-like last row and column (zero corner)
        a[(n - 1, n - 1)] = 0.0;
        for j in 0..n - 1 {
            a[(n - 1, j)] = 1.0 + 0.1 * j as f64;
            a[(j, n - 1)] = -(1.0 + 0.1 * j as f64);
            pattern.extend([(n - 1, j), (j, n - 1)]);
        }
        (a, pattern)
    }

    fn solve(lu: &mut StructuredLu, a: &DMatrix<f64>, b: &DVector<f64>) -> DVector<f64> {
        let mut x = b.clone();
        lu.factor(a, 1e-12).expect("regular").solve_in_place(&mut x);
        x
    }

    /// The sparse side solves a bordered (KKT-like, zero corner) system as
    /// the dense LU does, to round-off; a Jacobian that leaves the pattern
    /// is factored densely and solved exactly all the same.
    #[test]
    fn sparse_and_dense_agree_and_off_pattern_falls_back() {
        let n = 40;
        let (a, pattern) = bordered(n);
        let b = DVector::from_fn(n, |i, _| (i as f64 * 0.7).sin());
        let mut sparse = StructuredLu::sparse(pattern, n).unwrap();
        let mut dense = StructuredLu::dense(n);
        assert_eq!(sparse.structure(), Structure::Sparse);
        assert_eq!(dense.structure(), Structure::Dense);
        let xs = solve(&mut sparse, &a, &b);
        let xd = solve(&mut dense, &a, &b);
        assert!((&a * &xs - &b).amax() < 1e-13, "sparse residual");
        for i in 0..n {
            assert_relative_eq!(xs[i], xd[i], max_relative = 1e-12, epsilon = 1e-14);
        }
        // an entry outside the pattern (a gyroscopic force, a replaced row)
        let mut off = a.clone();
        off[(0, n - 3)] = 0.75;
        let xo = solve(&mut sparse, &off, &b);
        assert!((&off * &xo - &b).amax() < 1e-13, "fallback residual");
        assert!(sparse.factors().is_some());
        // back on the pattern: the sparse factors again
        let xs2 = solve(&mut sparse, &a, &b);
        assert_eq!(xs2, xs);
        // a NaN outside the pattern is a singular Jacobian, and no factors
        off[(0, n - 3)] = f64::NAN;
        assert!(sparse.factor(&off, 1e-12).is_err());
        assert!(sparse.factors().is_none());
        // singular on the pattern: reported, nothing held; the fallback
        // gives the minimum-norm step
        let zero = DMatrix::zeros(n, n);
        assert!(sparse.factor(&zero, 1e-12).is_err());
        assert!(sparse.factors().is_none());
        let mut out = DVector::zeros(n);
        assert!(sparse.solve_rank_deficient(&a, 1e-12, &b, &mut out));
        assert!((&a * &out - &b).amax() < 1e-12);
        sparse.clear_factors();
        assert!(sparse.factors().is_none());
    }
}
