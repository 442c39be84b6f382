//! The linear solver chosen by the structure of the step Jacobian: the
//! dense LU ([`DenseLu`]) or the sparse LU ([`SparseLu`]) behind one
//! [`LinearSolver`], whose Jacobian storage ([`JacobianStorage`]) follows
//! the same choice.
//!
//! When the system declares its Lagrangian term by term
//! ([`DynSystem::lagrangian_terms`]), `D12 L_d` is zero outside
//! `⋃_e S_e × S_e` (docs/theory.md §11.4); when it also declares the
//! stencils of its constraint rows ([`DynSystem::constraint_stencils`]),
//! the constraint rows and columns of the step Jacobian are zero outside
//! them. For sparse couplings (a chain, a gas of bodies, a circuit) the
//! whole Jacobian is then sparse, and [`StructuredLu::for_step`] builds
//! the sparse LU over that pattern (the fill-reducing ordering is computed
//! once) with sparse storage: the stepper writes the Jacobian's entries
//! straight into the pattern's values, and no `(n + m)²` buffer exists.
//!
//! The pattern is a promise of the system's, and a wrong one must not give
//! a wrong Newton step: an entry written outside the pattern is recorded
//! ([`SparseJacobian::outside`]) and that Jacobian is factored densely (the
//! dense buffers are allocated then, at the first such Jacobian). A dense
//! Jacobian handed to the sparse side is gathered, with the same check.
//!
//! Singularity follows the [threshold
//! semantics](crate::linear#threshold-semantics) of both solvers (the scale
//! `max|J|` is the same, since the Jacobian is zero outside the pattern);
//! the rank-revealing fallback is the dense one.

use crate::assembly::{JacobianStorage, StepJacobian};
use crate::linear::{DenseLu, Factorization, LinearSolver, Singular, SvdSplit};
use crate::sparse_lu::{SparseJacobian, SparseLu, SparsePattern};
use diracvi_geometry::ConstraintDiscretization;
use diracvi_geometry::dynamic::DynSystem;
use nalgebra::{DMatrix, DVector};

/// The sparse LU is used when the pattern holds at most this fraction of
/// the `(n + m)²` entries…
pub const SPARSE_DENSITY_AT_MOST: f64 = 0.25;

/// …and the Jacobian has at least this many rows (below it the dense LU's
/// plain loops win; measured with `cargo bench -p diracvi-discrete-dirac
/// --bench sizes`).
pub const SPARSE_SIZE_AT_LEAST: usize = 24;

/// The rank-revealing fallback of sparse storage (a dense SVD of the
/// Jacobian) is given up above this many unknowns: Newton then reports the
/// singular Jacobian instead of allocating `(n + m)²` entries.
pub const RANK_DEFICIENT_DENSE_AT_MOST: usize = 2000;

/// Which factorization a [`StructuredLu`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structure {
    /// The dense LU with partial pivoting, dense storage.
    Dense,
    /// The sparse LU over the declared pattern, sparse storage (with the
    /// dense LU for a Jacobian that leaves the pattern).
    Sparse,
}

/// The sparse side: the solver, the values gathered out of a dense
/// Jacobian, and — allocated at the first Jacobian that leaves the pattern
/// — the dense LU and a dense copy. At most one of the two LUs holds
/// factors (factoring with one clears the other).
#[derive(Debug, Clone)]
struct SparseSide {
    lu: SparseLu,
    values: SparseJacobian,
    dense: Option<Box<(DenseLu, DMatrix<f64>)>>,
}

impl SparseSide {
    /// The dense LU and its buffer (allocated once, when first needed).
    fn dense(&mut self) -> &mut (DenseLu, DMatrix<f64>) {
        let n = self.values.pattern().size();
        self.dense
            .get_or_insert_with(|| Box::new((DenseLu::new(n), DMatrix::zeros(n, n))))
    }

    fn dense_factors(&self) -> Option<&crate::linear::DenseFactors> {
        self.dense.as_ref().and_then(|d| d.0.factors())
    }
}

#[derive(Debug, Clone)]
enum Inner {
    Dense(DenseLu),
    Sparse(Box<SparseSide>),
}

/// The dense or the sparse LU behind one [`LinearSolver`], with dense or
/// sparse Jacobian storage ([`JacobianStorage`]), chosen by the Jacobian's
/// structure. See the [module documentation](self).
///
/// The [`Factorization`] handle is the solver itself: it solves with the
/// factors it holds (and is only handed out while it holds some).
#[derive(Debug, Clone)]
pub struct StructuredLu {
    n: usize,
    inner: Inner,
}

/// `jac` (dense or sparse with entries outside) written into `out`.
fn densify(jac: &SparseJacobian, out: &mut DMatrix<f64>) {
    out.fill(0.0);
    for (r, c, v) in jac.entries() {
        out[(r, c)] = v;
    }
    for &(r, c, v) in jac.outside() {
        out[(r, c)] += v;
    }
}

impl StructuredLu {
    /// The dense LU for `n` unknowns (dense storage).
    pub fn dense(n: usize) -> Self {
        Self {
            n,
            inner: Inner::Dense(DenseLu::new(n)),
        }
    }

    /// The sparse LU over `pattern` (sparse storage; the dense LU for
    /// Jacobians that leave the pattern). The diagonal is added to the
    /// pattern.
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
                dense: None,
            })),
        })
    }

    /// [`for_step`](Self::for_step) for the retraction or midpoint
    /// constraint.
    pub fn for_system<Sy: DynSystem>(system: &Sy) -> Self {
        Self::for_step(system, ConstraintDiscretization::Midpoint)
    }

    /// The solver for the Lagrange–Dirac step Jacobian of `system` with the
    /// discrete constraint `constraint` (`n + m` unknowns: `d`, then `μ`):
    /// sparse when [`step_pattern`](Self::step_pattern) gives a pattern, the
    /// Jacobian has at least [`SPARSE_SIZE_AT_LEAST`] rows and the pattern
    /// holds at most [`SPARSE_DENSITY_AT_MOST`] of its entries; dense
    /// otherwise.
    pub fn for_step<Sy: DynSystem>(system: &Sy, constraint: ConstraintDiscretization) -> Self {
        let size = system.coordinate_count() + system.constraint_count();
        let dense = || Self::dense(size);
        if size < SPARSE_SIZE_AT_LEAST {
            return dense();
        }
        let Some(pattern) = Self::step_pattern(system, constraint) else {
            return dense();
        };
        // Without the diagonal, which `sparse` adds.
        let nnz = pattern.len() + size;
        if nnz as f64 > SPARSE_DENSITY_AT_MOST * (size * size) as f64 {
            return dense();
        }
        Self::sparse(pattern, size).unwrap_or_else(|_| dense())
    }

    /// The sparse LU over [`step_pattern`](Self::step_pattern), whatever the
    /// size and density (e.g. to compare with the dense LU).
    ///
    /// # Errors
    /// [`Singular`] when the system declares no terms (there is no pattern,
    /// reported at step 0 with NaN pivot and scale) or faer cannot analyse
    /// the pattern.
    pub fn sparse_for_step<Sy: DynSystem>(
        system: &Sy,
        constraint: ConstraintDiscretization,
    ) -> Result<Self, Singular> {
        let size = system.coordinate_count() + system.constraint_count();
        let pattern = Self::step_pattern(system, constraint).ok_or(Singular {
            step: 0,
            pivot: f64::NAN,
            scale: f64::NAN,
        })?;
        Self::sparse(pattern, size)
    }

    /// The pattern of the step Jacobian `[[D12 L_d, −Aᵀ], [∂_b ω, 0]]` of
    /// `system` (without the diagonal): the terms' blocks `S_e × S_e`, and
    /// the constraint rows `(n + r, S_r)` and columns `(S_r, n + r)` on the
    /// declared row stencils (every coordinate when none are declared, or
    /// for the model's own discrete constraint). `None` when `D12 L_d` is
    /// not taken term by term: no terms declared, at most
    /// [`TERMWISE_ABOVE`](diracvi_geometry::dynamic::TERMWISE_ABOVE)
    /// coordinates, or a gyroscopic force (probed at `q = v = 0`), which
    /// couples every coordinate.
    pub fn step_pattern<Sy: DynSystem>(
        system: &Sy,
        constraint: ConstraintDiscretization,
    ) -> Option<Vec<(usize, usize)>> {
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        let terms = system.lagrangian_terms()?;
        if n <= diracvi_geometry::dynamic::TERMWISE_ABOVE || terms.coordinate_count() != n {
            return None;
        }
        let zeros = vec![0.0; n];
        if system.gyroscopic_force(&zeros, &zeros, &mut vec![0.0; n]) {
            return None;
        }
        let mut pattern: Vec<(usize, usize)> = terms.pattern().collect();
        match row_stencils(system, constraint) {
            Some(rows) => {
                for r in 0..m {
                    for &c in rows.stencil(r) {
                        pattern.extend([(n + r, c), (c, n + r)]);
                    }
                }
            }
            None => {
                for r in 0..m {
                    for c in 0..n {
                        pattern.extend([(n + r, c), (c, n + r)]);
                    }
                }
            }
        }
        Some(pattern)
    }

    /// The factorization in use.
    pub fn structure(&self) -> Structure {
        match self.inner {
            Inner::Dense(_) => Structure::Dense,
            Inner::Sparse(_) => Structure::Sparse,
        }
    }
}

/// The declared constraint-row stencils of `system` that the step with
/// `constraint` can use: `None` without a declaration, for the model's own
/// discrete constraint, or stencils of another shape.
pub(crate) fn row_stencils<Sy: DynSystem>(
    system: &Sy,
    constraint: ConstraintDiscretization,
) -> Option<&diracvi_geometry::dynamic::LagrangianTerms> {
    let rows = system.constraint_stencils()?;
    (constraint != ConstraintDiscretization::Model
        && rows.len() == system.constraint_count()
        && rows.coordinate_count() == system.coordinate_count())
    .then_some(rows)
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
                if let Some(f) = s.dense_factors() {
                    f.solve_in_place(rhs);
                } else if let Some(f) = s.lu.factors() {
                    f.solve_in_place(rhs);
                }
            }
        }
    }
}

impl LinearSolver for StructuredLu {
    type Jacobian = JacobianStorage;
    type Factors = StructuredLu;

    fn size(&self) -> usize {
        self.n
    }

    fn new_jacobian(&self) -> JacobianStorage {
        match &self.inner {
            Inner::Dense(_) => JacobianStorage::Dense(DMatrix::zeros(self.n, self.n)),
            Inner::Sparse(s) => JacobianStorage::Sparse(s.lu.new_jacobian()),
        }
    }

    fn factor(&mut self, jac: &JacobianStorage, threshold: f64) -> Result<&StructuredLu, Singular> {
        match (&mut self.inner, jac) {
            (Inner::Dense(lu), JacobianStorage::Dense(j)) => {
                lu.factor(j, threshold)?;
            }
            (Inner::Dense(lu), JacobianStorage::Sparse(j)) => {
                let mut d = DMatrix::zeros(self.n, self.n);
                densify(j, &mut d);
                lu.factor(&d, threshold)?;
            }
            (Inner::Sparse(s), JacobianStorage::Dense(j)) => {
                let SparseSide { lu, values, .. } = &mut **s;
                if gather(j, lu.pattern(), values.values_mut()) {
                    if let Some(d) = s.dense.as_mut() {
                        d.0.clear_factors();
                    }
                    s.lu.factor(&s.values, threshold)?;
                } else {
                    s.lu.clear_factors();
                    s.dense().0.factor(j, threshold)?;
                }
            }
            (Inner::Sparse(s), JacobianStorage::Sparse(j)) => {
                let same = std::ptr::eq(j.pattern(), &**s.lu.pattern())
                    || j.pattern() == &**s.lu.pattern();
                if same && j.outside().is_empty() {
                    if let Some(d) = s.dense.as_mut() {
                        d.0.clear_factors();
                    }
                    s.lu.factor(j, threshold)?;
                } else {
                    s.lu.clear_factors();
                    let (lu, d) = s.dense();
                    densify(j, d);
                    lu.factor(d, threshold)?;
                }
            }
        }
        Ok(self)
    }

    fn factors(&self) -> Option<&StructuredLu> {
        let held = match &self.inner {
            Inner::Dense(lu) => lu.factors().is_some(),
            Inner::Sparse(s) => s.dense_factors().is_some() || s.lu.factors().is_some(),
        };
        held.then_some(self)
    }

    fn clear_factors(&mut self) {
        match &mut self.inner {
            Inner::Dense(lu) => lu.clear_factors(),
            Inner::Sparse(s) => {
                s.lu.clear_factors();
                if let Some(d) = s.dense.as_mut() {
                    d.0.clear_factors();
                }
            }
        }
    }

    fn solve_rank_deficient(
        &mut self,
        jac: &JacobianStorage,
        threshold: f64,
        rhs: &DVector<f64>,
        out: &mut DVector<f64>,
    ) -> bool {
        let svd = match (jac.dense(), jac.sparse()) {
            (Some(j), _) => SvdSplit::new(j, threshold),
            // A dense copy of a large sparse Jacobian is not an option (its
            // SVD alone would take `(n + m)³`): no fallback there.
            (None, Some(_)) if self.n > RANK_DEFICIENT_DENSE_AT_MOST => None,
            (None, Some(j)) => {
                let mut d = DMatrix::zeros(self.n, self.n);
                densify(j, &mut d);
                SvdSplit::new(&d, threshold)
            }
            (None, None) => None,
        };
        match svd {
            Some(svd) => {
                out.copy_from(&svd.solve(rhs));
                true
            }
            None => false,
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
        lu.factor(&JacobianStorage::Dense(a.clone()), 1e-12)
            .expect("regular")
            .solve_in_place(&mut x);
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
        assert!(sparse.factor(&JacobianStorage::Dense(off), 1e-12).is_err());
        assert!(sparse.factors().is_none());
        // singular on the pattern: reported, nothing held; the fallback
        // gives the minimum-norm step
        let zero = JacobianStorage::Dense(DMatrix::zeros(n, n));
        assert!(sparse.factor(&zero, 1e-12).is_err());
        assert!(sparse.factors().is_none());
        let mut out = DVector::zeros(n);
        assert!(sparse.solve_rank_deficient(
            &JacobianStorage::Dense(a.clone()),
            1e-12,
            &b,
            &mut out
        ));
        assert!((&a * &out - &b).amax() < 1e-12);
        sparse.clear_factors();
        assert!(sparse.factors().is_none());
    }
}
