//! Storage of a step Jacobian that follows its structure (docs/theory.md
//! §11.4): the residual and Jacobian code of the run-time-sized steppers
//! writes through [`StepJacobian`] — "zero", "add entry `(i, j, v)`",
//! "largest entry" — into dense storage ([`DMatrix`]) or into the values
//! of a fixed sparse pattern ([`SparseJacobian`]), with
//! [`JacobianStorage`] the one the [`StructuredLu`](crate::StructuredLu)
//! chooses.
//!
//! Dense storage keeps the dense code path of the steppers, operation for
//! operation ([`StepJacobian::dense_mut`]); sparse storage has no `(n + m)²`
//! buffer anywhere. An entry written outside a sparse pattern is not
//! dropped: it is recorded ([`SparseJacobian::outside`]), and a solver
//! either factors that Jacobian densely ([`StructuredLu`](crate::StructuredLu))
//! or refuses it ([`SparseLu`](crate::SparseLu)), so a broken pattern
//! promise never gives a wrong Newton step.

use crate::sparse_lu::SparseJacobian;
use nalgebra::DMatrix;
use std::fmt::Debug;

/// A step Jacobian's storage, as the residual code writes it.
pub trait StepJacobian: Debug + Clone {
    /// Number of rows (and columns).
    fn size(&self) -> usize;

    /// Set every entry to zero (and forget entries recorded outside a
    /// sparse pattern).
    fn zero(&mut self);

    /// Add `v` to entry `(i, j)`. Sparse storage records a non-zero `v`
    /// outside its pattern instead of dropping it (an allocation: the
    /// exceptional path).
    fn add(&mut self, i: usize, j: usize, v: f64);

    /// The largest entry in magnitude (NaN if an entry is NaN).
    fn amax(&self) -> f64;

    /// The dense matrix, when the storage is dense.
    fn dense(&self) -> Option<&DMatrix<f64>>;

    /// The dense matrix for writing, when the storage is dense.
    fn dense_mut(&mut self) -> Option<&mut DMatrix<f64>>;

    /// The sparse values, when the storage is sparse.
    fn sparse(&self) -> Option<&SparseJacobian>;

    /// The sparse values for writing, when the storage is sparse.
    fn sparse_mut(&mut self) -> Option<&mut SparseJacobian>;
}

impl StepJacobian for DMatrix<f64> {
    fn size(&self) -> usize {
        self.nrows()
    }
    fn zero(&mut self) {
        self.fill(0.0);
    }
    #[inline]
    fn add(&mut self, i: usize, j: usize, v: f64) {
        self[(i, j)] += v;
    }
    fn amax(&self) -> f64 {
        DMatrix::amax(self)
    }
    fn dense(&self) -> Option<&DMatrix<f64>> {
        Some(self)
    }
    fn dense_mut(&mut self) -> Option<&mut DMatrix<f64>> {
        Some(self)
    }
    fn sparse(&self) -> Option<&SparseJacobian> {
        None
    }
    fn sparse_mut(&mut self) -> Option<&mut SparseJacobian> {
        None
    }
}

impl StepJacobian for SparseJacobian {
    fn size(&self) -> usize {
        self.pattern().size()
    }
    fn zero(&mut self) {
        self.fill_zero();
    }
    #[inline]
    fn add(&mut self, i: usize, j: usize, v: f64) {
        if !SparseJacobian::add(self, i, j, v) && v != 0.0 {
            self.record_outside(i, j, v);
        }
    }
    fn amax(&self) -> f64 {
        let outside =
            self.outside().iter().fold(
                0.0_f64,
                |m, &(_, _, v)| if v.is_nan() { f64::NAN } else { m.max(v.abs()) },
            );
        let inside = SparseJacobian::amax(self);
        if inside.is_nan() || outside.is_nan() {
            f64::NAN
        } else {
            inside.max(outside)
        }
    }
    fn dense(&self) -> Option<&DMatrix<f64>> {
        None
    }
    fn dense_mut(&mut self) -> Option<&mut DMatrix<f64>> {
        None
    }
    fn sparse(&self) -> Option<&SparseJacobian> {
        Some(self)
    }
    fn sparse_mut(&mut self) -> Option<&mut SparseJacobian> {
        Some(self)
    }
}

/// Dense or sparse storage, chosen at run time (by
/// [`StructuredLu`](crate::StructuredLu) from the system's structure).
#[derive(Debug, Clone)]
pub enum JacobianStorage {
    /// An `(n + m)²` matrix.
    Dense(DMatrix<f64>),
    /// Values on a fixed pattern.
    Sparse(SparseJacobian),
}

impl StepJacobian for JacobianStorage {
    fn size(&self) -> usize {
        match self {
            Self::Dense(j) => StepJacobian::size(j),
            Self::Sparse(j) => StepJacobian::size(j),
        }
    }
    fn zero(&mut self) {
        match self {
            Self::Dense(j) => j.zero(),
            Self::Sparse(j) => j.zero(),
        }
    }
    #[inline]
    fn add(&mut self, i: usize, j: usize, v: f64) {
        match self {
            Self::Dense(m) => StepJacobian::add(m, i, j, v),
            Self::Sparse(s) => StepJacobian::add(s, i, j, v),
        }
    }
    fn amax(&self) -> f64 {
        match self {
            Self::Dense(j) => StepJacobian::amax(j),
            Self::Sparse(j) => StepJacobian::amax(j),
        }
    }
    fn dense(&self) -> Option<&DMatrix<f64>> {
        match self {
            Self::Dense(j) => Some(j),
            Self::Sparse(_) => None,
        }
    }
    fn dense_mut(&mut self) -> Option<&mut DMatrix<f64>> {
        match self {
            Self::Dense(j) => Some(j),
            Self::Sparse(_) => None,
        }
    }
    fn sparse(&self) -> Option<&SparseJacobian> {
        match self {
            Self::Dense(_) => None,
            Self::Sparse(j) => Some(j),
        }
    }
    fn sparse_mut(&mut self) -> Option<&mut SparseJacobian> {
        match self {
            Self::Dense(_) => None,
            Self::Sparse(j) => Some(j),
        }
    }
}
