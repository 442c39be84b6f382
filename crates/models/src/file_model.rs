//! Models read from files: a [`CompiledModel`] (diracvi-expr) seen as a
//! [`DynSystem`], so it runs on the run-time-sized core (docs/theory.md §11)
//! whatever its number of coordinates `n` and constraint rows `m`.
//!
//! The expressions are compiled once to tapes and evaluated over the
//! automatic-differentiation scalar the integrators ask for, so every
//! derivative is exact; the core seeds them in chunks of directions, one
//! chunk for the small systems of the papers.

use crate::NamedDynSystem;
use diracvi_expr::CompiledModel;
use diracvi_geometry::AdScalar;
use diracvi_geometry::dynamic::{DynSystem, LagrangianTerms};
use std::sync::Arc;

/// A model read from a file: a [`DynSystem`] whose Lagrangian, constraint
/// one-forms, boundary pieces and Hamiltonian are the file's compiled
/// expressions.
///
/// Built by [`Scenario::visit_dyn`](crate::Scenario::visit_dyn) for a
/// scenario read with [`Scenario::from_model_file`](crate::Scenario::from_model_file);
/// [`FileModel::new`] builds one directly.
#[derive(Debug, Clone)]
pub struct FileModel {
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

impl FileModel {
    /// Wrap a compiled model; `text` gives the description and the boundary
    /// pieces as written.
    pub fn new(compiled: Arc<CompiledModel>, text: Arc<FileText>) -> Self {
        Self { compiled, text }
    }

    /// The compiled expressions.
    pub fn compiled(&self) -> &CompiledModel {
        &self.compiled
    }
}

impl DynSystem for FileModel {
    fn coordinate_count(&self) -> usize {
        self.compiled.n()
    }

    fn constraint_count(&self) -> usize {
        self.compiled.m()
    }

    #[inline]
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.compiled.lagrangian(q, v)
    }

    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        self.compiled.lagrangian_terms()
    }

    #[inline]
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        self.compiled.lagrangian_term(e, q, v)
    }

    #[inline]
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        let n = self.compiled.n();
        for (k, x) in a.iter_mut().enumerate() {
            *x = self.compiled.constraint(k / n, k % n, q);
        }
    }

    fn boundary_count(&self) -> usize {
        self.compiled.boundary_count()
    }

    #[inline]
    fn boundary<S: AdScalar>(&self, j: usize, q: &[S]) -> S {
        self.compiled.boundary(j, q)
    }

    #[inline]
    fn hamiltonian<S: AdScalar>(&self, q: &[S], p: &[S]) -> Option<S> {
        self.compiled.hamiltonian(q, p)
    }
}

impl NamedDynSystem for FileModel {
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
}

/// Constraint row `a` of a file model as its expression,
/// `model.constraints[a]: (-sin(theta))*x_dot + (cos(theta))*y_dot = 0`
/// (entries that are a constant zero left out; simple entries without
/// parentheses).
pub(crate) fn constraint_row_name(compiled: &CompiledModel, a: usize) -> String {
    let Some(row) = compiled.constraint_exprs().get(a) else {
        return format!("model.constraints[{a}]");
    };
    let terms: Vec<String> = row
        .iter()
        .zip(compiled.coordinates())
        .filter(|(e, _)| e.constant_value() != Some(0.0))
        .map(|(e, c)| {
            let text = e.source().trim();
            let simple = text
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.');
            match e.constant_value() {
                Some(1.0) => format!("{c}_dot"),
                _ if simple => format!("{text}*{c}_dot"),
                _ => format!("({text})*{c}_dot"),
            }
        })
        .collect();
    let sum = if terms.is_empty() {
        "0".to_owned()
    } else {
        terms.join(" + ")
    };
    format!("model.constraints[{a}]: {sum} = 0")
}
