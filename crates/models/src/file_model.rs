//! Models read from files: a [`CompiledModel`] (diracvi-expr) seen as a
//! [`System`], so it runs through the same steppers and impact integrator as
//! the catalogue.
//!
//! The integrators are generic over the dimensions `N` (coordinates) and `M`
//! (constraint rows), which a file only reveals at run time. A file model of
//! size `(n, m)` is therefore dispatched to the compiled instantiation
//! `FileModel<n, m>`: every size in [`FILE_MODEL_SIZES`] has one, with its
//! dual numbers on the stack exactly like a model written in Rust, so a file
//! model costs only the tape interpretation of its expressions (the README's
//! performance table gives the ratio). Other sizes get
//! [`ModelError::UnsupportedFileSize`].
//!
//! The size table is the price of compile-time sizes: each entry is one more
//! monomorphization of the whole integrator stack in every program that
//! dispatches file models. It covers `n ≤ 6` coordinates with up to
//! `min(n − 1, 3)` constraint rows — the systems of the source papers and the
//! usual textbook nonholonomic examples (sleigh, rolling disk, snakeboard).

use crate::{ModelError, NamedSystem};
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
/// [`FileModel::new`] builds one directly.
#[derive(Debug, Clone)]
pub struct FileModel<const N: usize, const M: usize> {
    compiled: Arc<CompiledModel>,
    text: Arc<FileText>,
}

/// What a file says besides its expressions' tapes: for messages.
#[derive(Debug, Clone, Default)]
pub struct FileText {
    /// `model.description`.
    pub description: String,
    /// `model.boundaries`, as written.
    pub boundaries: Vec<String>,
}

impl<const N: usize, const M: usize> FileModel<N, M> {
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

impl<const N: usize, const M: usize> System<N, M> for FileModel<N, M> {
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

impl<const N: usize, const M: usize> NamedSystem<N, M> for FileModel<N, M> {
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
}

/// An operation on a file model once its size is known.
pub(crate) trait FileModelVisitor {
    type Output;
    fn visit<const N: usize, const M: usize>(self, model: FileModel<N, M>) -> Self::Output;
}

macro_rules! file_sizes {
    ($(($n:literal, $m:literal)),* $(,)?) => {
        /// The sizes `(n, m)` — coordinates, constraint rows — a model file
        /// may have: each has a compiled instantiation of the integrators
        /// (see [`FileModel`]).
        pub const FILE_MODEL_SIZES: &[(usize, usize)] = &[$(($n, $m)),*];

        /// Call `visitor` with `compiled` as the `FileModel` of its size.
        pub(crate) fn dispatch<V: FileModelVisitor>(
            compiled: Arc<CompiledModel>,
            text: Arc<FileText>,
            visitor: V,
        ) -> Result<V::Output, ModelError> {
            match (compiled.n(), compiled.m()) {
                $(($n, $m) => Ok(visitor.visit(FileModel::<$n, $m>::new(compiled, text)?)),)*
                (n, m) => Err(unsupported(compiled.name(), n, m)),
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

/// Whether a file model of `n` coordinates and `m` constraint rows can run.
pub(crate) fn check_size(name: &str, n: usize, m: usize) -> Result<(), ModelError> {
    if FILE_MODEL_SIZES.contains(&(n, m)) {
        Ok(())
    } else {
        Err(unsupported(name, n, m))
    }
}

fn unsupported(name: &str, n: usize, m: usize) -> ModelError {
    ModelError::UnsupportedFileSize {
        model: name.to_string(),
        n,
        m,
    }
}

/// The supported sizes, for messages: `n ≤ 6, m ≤ min(n − 1, 3)`.
pub(crate) fn supported_sizes() -> String {
    let n_max = FILE_MODEL_SIZES.iter().map(|s| s.0).max().unwrap_or(0);
    let m_max = FILE_MODEL_SIZES.iter().map(|s| s.1).max().unwrap_or(0);
    format!("n <= {n_max}, m <= min(n - 1, {m_max})")
}
