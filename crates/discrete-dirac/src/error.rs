//! Errors of the steppers.

use diracvi_geometry::GeometryError;
use thiserror::Error;

/// Why a step failed. Every variant names the step index and time.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum StepError {
    /// Newton's method did not reach the tolerance within its iteration bound.
    #[error(
        "step {step} at t = {t}: Newton did not converge in {iterations} iterations (scaled residual {residual:e}, tolerance {tolerance:e})"
    )]
    NoConvergence {
        /// Step index `k` (the step from `t_k`).
        step: usize,
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
    #[error(
        "step {step} at t = {t}: non-finite value in {what} after {iterations} Newton iterations"
    )]
    NonFinite {
        /// Step index.
        step: usize,
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
        "step {step} at t = {t}: the step equations are singular and inconsistent here (a combination of them that no unknown enters is violated by {residual:e}): the Lagrangian or a constraint form is degenerate at this point; at the start of a degenerate system (e.g. an LC circuit) the initial data violate a hidden constraint (project them onto the consistent set), later in a run the configuration is singular for the model (e.g. a pole of spherical coordinates, a vanishing constraint form)"
    )]
    Inconsistent {
        /// Step index.
        step: usize,
        /// Time `t_k`.
        t: f64,
        /// Size of the violated combination (scaled).
        residual: f64,
    },
    /// The Jacobian is singular and no consistent solution could be found.
    #[error("step {step} at t = {t}: singular step Jacobian (rank {rank} of {size})")]
    Singular {
        /// Step index.
        step: usize,
        /// Time `t_k`.
        t: f64,
        /// Numerical rank.
        rank: usize,
        /// Number of unknowns.
        size: usize,
    },
    /// The time step was not finite and positive.
    #[error("step {step} at t = {t}: time step h must be finite and > 0, got {h}")]
    BadStep {
        /// Step index.
        step: usize,
        /// Time `t_k`.
        t: f64,
        /// The rejected step.
        h: f64,
    },
    /// The stepper needs something the system does not supply.
    #[error("{0}")]
    Unsupported(String),
    /// A geometric evaluation failed (e.g. a retraction inverse outside its domain).
    #[error("step {step} at t = {t}: {source}")]
    Geometry {
        /// Step index.
        step: usize,
        /// Time `t_k`.
        t: f64,
        /// The underlying error.
        #[source]
        source: GeometryError,
    },
}

impl StepError {
    /// A Newton failure of step `step` at time `t`, solved to `tolerance`.
    pub fn from_newton(
        failure: crate::newton::NewtonFailure,
        step: usize,
        t: f64,
        tolerance: f64,
    ) -> Self {
        use crate::newton::NewtonFailure;
        match failure {
            NewtonFailure::NoConvergence {
                iterations,
                residual,
            } => StepError::NoConvergence {
                step,
                t,
                iterations,
                residual,
                tolerance,
            },
            NewtonFailure::NonFinite { what, iterations } => StepError::NonFinite {
                step,
                t,
                what,
                iterations,
            },
            NewtonFailure::Geometry(source) => StepError::Geometry { step, t, source },
        }
    }

    /// The step index the error refers to, where it has one.
    pub fn step(&self) -> Option<usize> {
        match self {
            StepError::NoConvergence { step, .. }
            | StepError::NonFinite { step, .. }
            | StepError::Inconsistent { step, .. }
            | StepError::Singular { step, .. }
            | StepError::BadStep { step, .. }
            | StepError::Geometry { step, .. } => Some(*step),
            StepError::Unsupported(_) => None,
        }
    }
}
