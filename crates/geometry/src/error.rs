//! Errors of the geometry layer.

use thiserror::Error;

/// What went wrong in a geometric evaluation.
///
/// Every variant says what was wrong and carries the numbers needed to find it.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum GeometryError {
    /// A vector had the wrong length.
    #[error("dimension mismatch in {what}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// Which argument.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// A stencil of [`LagrangianTerms`](crate::dynamic::LagrangianTerms)
    /// is malformed.
    #[error("Lagrangian term {term}: bad stencil, {reason}")]
    BadStencil {
        /// The term.
        term: usize,
        /// What is wrong.
        reason: String,
    },
    /// An input or an intermediate value was NaN or infinite.
    #[error("non-finite value in {what} (component {index}: {value})")]
    NonFinite {
        /// Which quantity.
        what: &'static str,
        /// Index of the first offending component.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// The time step was not strictly positive (or not finite).
    #[error("time step h must be finite and > 0, got {h}")]
    NonPositiveStep {
        /// The rejected step.
        h: f64,
    },
    /// `R_q^{-1}(q1)` was asked for a point outside the retraction's chart.
    #[error("retraction {retraction}: inverse undefined, {reason}")]
    OutsideRetractionDomain {
        /// Name of the retraction.
        retraction: &'static str,
        /// What made the point inadmissible (with its number).
        reason: String,
    },
    /// The gradient of a boundary function vanished, so the boundary is not a
    /// smooth hypersurface there.
    #[error("boundary piece {piece}: dg vanishes (|dg| = {norm:e}) at q = {q:?}")]
    DegenerateBoundary {
        /// Boundary piece index.
        piece: usize,
        /// Norm of `dg`.
        norm: f64,
        /// The configuration.
        q: Vec<f64>,
    },
    /// The model-supplied discrete constraint was chosen, but the system
    /// does not provide one.
    #[error(
        "constraint discretization 'model' chosen, but the system supplies no discrete constraint"
    )]
    NoModelConstraint,
    /// Initial data outside the admissible set: `g_j(q0) < 0`.
    #[error(
        "initial configuration outside the admissible set: boundary piece {piece} has g = {g:e} < 0"
    )]
    InitialInadmissible {
        /// The most violated boundary piece.
        piece: usize,
        /// `g_j(q0)` (negative or NaN).
        g: f64,
    },
    /// An initial velocity outside the constraint distribution
    /// `Δ_Q(q0) = ker A(q0)`.
    #[error(
        "initial velocity violates constraint form {row}: |A(q0) v0|_{row} = {residual:e} > tolerance {tolerance:e}"
    )]
    InitialViolatesConstraint {
        /// The most violated constraint row.
        row: usize,
        /// `|Σ_i A_{ai}(q0) v0_i|`.
        residual: f64,
        /// The tolerance it exceeded.
        tolerance: f64,
    },
    /// The system's gyroscopic force works on the initial data
    /// (`⟨F(q0, v0), v0⟩ ≠ 0`, or not finite): it is not gyroscopic.
    #[error(
        "the gyroscopic force does work: ⟨F(q0, v0), v0⟩ = {power:e} exceeds tolerance {tolerance:e} (a gyroscopic force must satisfy ⟨F(q, v), v⟩ = 0)"
    )]
    ForceDoesWork {
        /// `⟨F(q0, v0), v0⟩`.
        power: f64,
        /// `1e-9 Σ_i |F_i v0_i|`.
        tolerance: f64,
    },
    /// A boundary piece index beyond the system's count.
    #[error("boundary piece {piece} does not exist (the system has {count})")]
    NoSuchBoundaryPiece {
        /// Requested piece.
        piece: usize,
        /// Number of pieces.
        count: usize,
    },
    /// The Legendre map `v ↦ ∂L/∂v(q, v)` could not be inverted at the
    /// given momentum (degenerate Lagrangian, or Newton did not converge).
    #[error(
        "Legendre map not invertible at q = {q:?}: residual {residual:e} after {iterations} Newton iterations"
    )]
    LegendreNotInvertible {
        /// The configuration.
        q: Vec<f64>,
        /// Final residual `|∂L/∂v(q, v) − p|` (relative to `max(1, |p|)`).
        residual: f64,
        /// Newton iterations taken.
        iterations: usize,
    },
}

/// Check that every component of a slice is finite.
pub fn ensure_finite(what: &'static str, xs: &[f64]) -> Result<(), GeometryError> {
    match xs.iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(index) => Err(GeometryError::NonFinite {
            what,
            index,
            value: xs[index],
        }),
    }
}

/// Check that a time step is finite and strictly positive.
pub fn ensure_step(h: f64) -> Result<(), GeometryError> {
    if h.is_finite() && h > 0.0 {
        Ok(())
    } else {
        Err(GeometryError::NonPositiveStep { h })
    }
}
