//! The fast path of small model files: a [`CompiledModel`] seen as a
//! compile-time-sized [`System`], so that it runs on the compile-time-sized
//! core with its dual numbers on the stack, like a model written in Rust.
//!
//! Every model file runs on the run-time-sized core ([`FileModel`](crate::FileModel),
//! docs/theory.md §11); the small ones — `n ≤ 6` coordinates with up to
//! `min(n − 1, 3)` constraint rows, [`FAST_FILE_SIZES`] — also have this
//! instantiation, which the runner prefers because it is faster (measured
//! with `cargo bench -p diracvi-impact --bench model_files`: the pendulum's
//! file 0.7 µs per step here against 3.3 µs on the run-time core). The size
//! table is invisible to users: a file of any other size runs all the same,
//! on the run-time core.

use crate::{FileText, ModelError, NamedSystem};
use diracvi_expr::CompiledModel;
use diracvi_geometry::{AdScalar, System};
use nalgebra::{SMatrix, SVector};
use std::sync::Arc;

/// A model read from a file, with its size fixed at compile time: a
/// [`System`] whose Lagrangian, constraint one-forms, boundary pieces and
/// Hamiltonian are the file's compiled expressions, evaluated over the AD
/// scalar the integrators ask for (so every derivative is exact).
///
/// Built by [`Scenario::visit`](crate::Scenario::visit) for a scenario read
/// with [`Scenario::from_model_file`](crate::Scenario::from_model_file);
/// [`SizedFileModel::new`] builds one directly.
#[derive(Debug, Clone)]
pub struct SizedFileModel<const N: usize, const M: usize> {
    compiled: Arc<CompiledModel>,
    text: Arc<FileText>,
}

impl<const N: usize, const M: usize> SizedFileModel<N, M> {
    /// Wrap a compiled model of `N` coordinates and `M` constraint rows;
    /// `text` gives the description and the boundary pieces as written.
    ///
    /// # Errors
    /// [`ModelError::WrongLength`] when the compiled model's `n` or `m`
    /// differs from `N` or `M`.
    pub fn new(compiled: Arc<CompiledModel>, text: Arc<FileText>) -> Result<Self, ModelError> {
        if compiled.n() != N {
            return Err(ModelError::WrongLength {
                what: "coordinates",
                expected: N,
                got: compiled.n(),
            });
        }
        if compiled.m() != M {
            return Err(ModelError::WrongLength {
                what: "constraint rows",
                expected: M,
                got: compiled.m(),
            });
        }
        Ok(Self { compiled, text })
    }

    /// The compiled expressions.
    pub fn compiled(&self) -> &CompiledModel {
        &self.compiled
    }
}

impl<const N: usize, const M: usize> System<N, M> for SizedFileModel<N, M> {
    #[inline]
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, N>, v: &SVector<S, N>) -> S {
        self.compiled.lagrangian(q.as_slice(), v.as_slice())
    }

    #[inline]
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, N>) -> SMatrix<S, M, N> {
        SMatrix::from_fn(|row, col| self.compiled.constraint(row, col, q.as_slice()))
    }

    fn boundary_count(&self) -> usize {
        self.compiled.boundary_count()
    }

    #[inline]
    fn boundary<S: AdScalar>(&self, j: usize, q: &SVector<S, N>) -> S {
        self.compiled.boundary(j, q.as_slice())
    }

    #[inline]
    fn hamiltonian<S: AdScalar>(&self, q: &SVector<S, N>, p: &SVector<S, N>) -> Option<S> {
        self.compiled.hamiltonian(q.as_slice(), p.as_slice())
    }
}

impl<const N: usize, const M: usize> NamedSystem<N, M> for SizedFileModel<N, M> {
    fn name(&self) -> &str {
        self.compiled.name()
    }
    fn description(&self) -> &str {
        &self.text.description
    }
    fn coordinates(&self) -> Vec<String> {
        self.compiled.coordinates().to_vec()
    }
    fn piece_name(&self, j: usize) -> String {
        match self.text.boundaries.get(j) {
            Some(g) => format!("model.boundaries[{j}]: {g} >= 0"),
            None => format!("model.boundaries[{j}]"),
        }
    }
    fn constraint_name(&self, a: usize) -> String {
        crate::file_model::constraint_row_name(&self.compiled, a)
    }
    fn invariant_names(&self) -> Vec<String> {
        self.compiled.invariant_names().map(String::from).collect()
    }
    fn invariants(&self, q: &SVector<f64, N>, p: &SVector<f64, N>, out: &mut [f64]) {
        if self.compiled.invariant_count() == 0 {
            return;
        }
        let model = crate::FileModel::new(self.compiled.clone(), self.text.clone());
        crate::file_model::file_invariants(&model, q.as_slice(), p.as_slice(), out);
    }
}

/// An operation on a file model once its size is known.
pub(crate) trait FileModelVisitor {
    type Output;
    fn visit<const N: usize, const M: usize>(self, model: SizedFileModel<N, M>) -> Self::Output;
}

macro_rules! file_sizes {
    ($(($n:literal, $m:literal)),* $(,)?) => {
        /// The sizes `(n, m)` — coordinates, constraint rows — of the model
        /// files that also run on the compile-time-sized core (see
        /// [`SizedFileModel`]).
        pub const FAST_FILE_SIZES: &[(usize, usize)] = &[$(($n, $m)),*];

        /// Call `visitor` with `compiled` as the `SizedFileModel` of its
        /// size, or `None` when the size has no instantiation.
        pub(crate) fn dispatch<V: FileModelVisitor>(
            compiled: Arc<CompiledModel>,
            text: Arc<FileText>,
            visitor: V,
        ) -> Result<Option<V::Output>, ModelError> {
            match (compiled.n(), compiled.m()) {
                $(($n, $m) => Ok(Some(visitor.visit(SizedFileModel::<$n, $m>::new(compiled, text)?))),)*
                _ => Ok(None),
            }
        }
    };
}

file_sizes! {
    (1, 0),
    (2, 0), (2, 1),
    (3, 0), (3, 1), (3, 2),
    (4, 0), (4, 1), (4, 2), (4, 3),
    (5, 0), (5, 1), (5, 2), (5, 3),
    (6, 0), (6, 1), (6, 2), (6, 3),
}
