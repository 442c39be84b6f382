//! Running any model on the run-time-sized core (docs/theory.md §11): the
//! named [`DynSystem`] a visitor receives, its run setup, and the visitor.
//!
//! [`Scenario::visit_dyn`](crate::Scenario::visit_dyn) hands a
//! [`DynModelVisitor`] a [`FileModel`](crate::FileModel) of any size for a
//! scenario read from a model file, and a catalogued model wrapped in
//! [`Fixed`] otherwise, so one visitor — one instantiation of the
//! integrators per model type — runs both.

use crate::{ModelError, NamedSystem};
use diracvi_geometry::dynamic::{DynSystem, Fixed, check_initial_dyn};
use diracvi_geometry::{ConstraintDiscretization, Discretization};
use nalgebra::DVector;

/// A [`DynSystem`] with a name, coordinate names and boundary piece names
/// (the run-time-sized counterpart of [`NamedSystem`]).
pub trait NamedDynSystem: DynSystem + Clone + Send + Sync {
    /// The model's name (registry name or the file's `model.name`).
    fn name(&self) -> &str;
    /// One line describing the system.
    fn description(&self) -> &str;
    /// The names of the `n` coordinates, in order.
    fn coordinates(&self) -> Vec<String>;
    /// A readable description of boundary piece `j`.
    fn piece_name(&self, j: usize) -> String;
    /// A readable description of constraint row `a` of `A(q)` (for
    /// messages); the default is `row a`.
    fn constraint_name(&self, a: usize) -> String {
        format!("row {a}")
    }
}

impl<Mo: NamedSystem<N, M>, const N: usize, const M: usize> NamedDynSystem for Fixed<Mo, N, M> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn description(&self) -> &str {
        self.0.description()
    }
    fn coordinates(&self) -> Vec<String> {
        self.0.coordinates()
    }
    fn piece_name(&self, j: usize) -> String {
        self.0.piece_name(j)
    }
    fn constraint_name(&self, a: usize) -> String {
        self.0.constraint_name(a)
    }
}

/// A run's setup at run-time sizes: continuous initial data, step, end time
/// and discretization choices (see [`RunSetup`](crate::RunSetup)).
#[derive(Debug, Clone, PartialEq)]
pub struct DynRunSetup {
    /// Initial configuration `q(0)` (`n` entries).
    pub q0: DVector<f64>,
    /// Initial velocity `v(0)`; runs start from `p_0 = ∂L/∂v(q(0), v(0))`.
    pub v0: DVector<f64>,
    /// Time step `h > 0` (s).
    pub h: f64,
    /// End time (s); runs start at `t = 0`.
    pub t_end: f64,
    /// Discretization map of the discrete Lagrangian.
    pub discretization: Discretization,
    /// Discrete constraint (irrelevant when `m = 0`).
    pub constraint: ConstraintDiscretization,
}

/// A generic operation on a model of any size and its run setup.
pub trait DynModelVisitor {
    /// What the visit produces.
    type Output;
    /// Called with the concrete model and the setup.
    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Self::Output;
}

/// Check continuous initial data against a model of any size
/// ([`check_initial_dyn`], with the boundary piece named; see
/// [`check_initial`](crate::check_initial)).
///
/// # Errors
/// [`ModelError::WrongLength`], [`ModelError::NonFiniteInitial`],
/// [`ModelError::InitialInadmissible`],
/// [`ModelError::InitialViolatesConstraint`].
pub fn check_initial_named<Mo: NamedDynSystem>(
    model: &Mo,
    q0: &DVector<f64>,
    v0: &DVector<f64>,
) -> Result<(), ModelError> {
    check_initial_dyn(model, q0, v0).map_err(|e| {
        crate::initial_error(
            e,
            |piece| model.piece_name(piece),
            |row| model.constraint_name(row),
        )
    })
}
