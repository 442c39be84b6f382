//! Errors of the steppers.

use diracvi_geometry::GeometryError;
use thiserror::Error;

/// Why a step failed. Every variant with a time names it (`at t = …`);
/// the driver that knows the step index wraps the error in a [`Located`].
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum StepError {
    /// Newton's method did not reach the tolerance within its iteration bound.
    #[error(
        "at t = {t}: Newton did not converge in {iterations} iterations (scaled residual {residual:e}, tolerance {tolerance:e})"
    )]
    NoConvergence {
        /// Time `t_k`.
        t: f64,
        /// Iterations taken.
        iterations: usize,
        /// Last scaled residual norm (∞-norm / equation scale).
        residual: f64,
        /// The tolerance that was asked for.
        tolerance: f64,
    },
    /// An iterate or residual became NaN or infinite.
    #[error("at t = {t}: non-finite value in {what} after {iterations} Newton iterations")]
    NonFinite {
        /// Time `t_k`.
        t: f64,
        /// What became non-finite.
        what: &'static str,
        /// Iterations taken.
        iterations: usize,
    },
    /// The step equations are inconsistent: a combination of them that does
    /// not involve the unknowns is violated by the current state. Either a
    /// degenerate Lagrangian's hidden constraint is violated by the initial
    /// data, or the Lagrangian or a constraint form degenerates at the
    /// current configuration (docs/theory.md §3.9).
    #[error(
        "at t = {t}: the step equations are singular and inconsistent here (a combination of them that no unknown enters is violated by {residual:e}): the Lagrangian or a constraint form is degenerate at this point; at the start of a degenerate system (e.g. an LC circuit) the initial data violate a hidden constraint (project them onto the consistent set), later in a run the configuration is singular for the model (e.g. a pole of spherical coordinates, a vanishing constraint form)"
    )]
    Inconsistent {
        /// Time `t_k`.
        t: f64,
        /// Size of the violated combination (scaled).
        residual: f64,
    },
    /// The Jacobian is singular and no consistent solution could be found.
    #[error("at t = {t}: singular step Jacobian (rank {rank} of {size})")]
    Singular {
        /// Time `t_k`.
        t: f64,
        /// Numerical rank.
        rank: usize,
        /// Number of unknowns.
        size: usize,
    },
    /// The time step was not finite and positive.
    #[error("at t = {t}: time step h must be finite and > 0, got {h}")]
    BadStep {
        /// Time `t_k`.
        t: f64,
        /// The rejected step.
        h: f64,
    },
    /// The stepper needs something the system does not supply.
    #[error("{0}")]
    Unsupported(String),
    /// A geometric evaluation failed (e.g. a retraction inverse outside its domain).
    #[error("at t = {t}: {source}")]
    Geometry {
        /// Time `t_k`.
        t: f64,
        /// The underlying error.
        #[source]
        source: GeometryError,
    },
}

impl StepError {
    /// A Newton failure of the step at time `t`, solved to `tolerance`.
    pub fn from_newton(failure: crate::newton::NewtonFailure, t: f64, tolerance: f64) -> Self {
        use crate::newton::NewtonFailure;
        match failure {
            NewtonFailure::NoConvergence {
                iterations,
                residual,
            } => StepError::NoConvergence {
                t,
                iterations,
                residual,
                tolerance,
            },
            NewtonFailure::NonFinite { what, iterations } => StepError::NonFinite {
                t,
                what,
                iterations,
            },
            NewtonFailure::Geometry(source) => StepError::Geometry { t, source },
        }
    }

    /// The time the error names, where it has one.
    pub fn time(&self) -> Option<f64> {
        match self {
            StepError::NoConvergence { t, .. }
            | StepError::NonFinite { t, .. }
            | StepError::Inconsistent { t, .. }
            | StepError::Singular { t, .. }
            | StepError::BadStep { t, .. }
            | StepError::Geometry { t, .. } => Some(*t),
            StepError::Unsupported(_) => None,
        }
    }
}

/// An error of a run's step `step`: the error of a one-step map, located
/// by the driver that took the steps (the one-step maps themselves know
/// the time, not the step index).
///
/// It reads `step k at t = …: what` for an error that names its time and
/// `step k: what` otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct Located<E> {
    /// Index `k` of the grid step that failed (the step from `t_k`).
    pub step: usize,
    /// What failed.
    pub error: E,
}

impl<E> Located<E> {
    /// `error` at step `step`.
    pub fn new(step: usize, error: E) -> Self {
        Located { step, error }
    }

    /// The same location with the error mapped by `f`.
    pub fn map<F>(self, f: impl FnOnce(E) -> F) -> Located<F> {
        Located {
            step: self.step,
            error: f(self.error),
        }
    }
}

impl<E: std::fmt::Display> std::fmt::Display for Located<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = self.error.to_string();
        if what.starts_with("at t = ") {
            write!(f, "step {} {what}", self.step)
        } else {
            write!(f, "step {}: {what}", self.step)
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for Located<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error.source()
    }
}
