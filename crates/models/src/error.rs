//! Errors of the model catalogue: unknown names, bad parameters, bad initial
//! data, malformed scenarios.

use thiserror::Error;

/// What went wrong while choosing, building or configuring a model.
///
/// Every variant carries the numbers (or names) a user needs to fix the input.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ModelError {
    /// No model of that name is registered.
    #[error("unknown model '{name}' (valid models: {})", .valid.join(", "))]
    UnknownModel {
        /// The requested name.
        name: String,
        /// Every registered model name.
        valid: Vec<String>,
    },
    /// `--reduce` asked for a model that declares no symmetry.
    #[error("model '{model}' declares no symmetry to reduce by (models with one: {})", .valid.join(", "))]
    NoSymmetry {
        /// The model's name.
        model: String,
        /// The models that declare a symmetry.
        valid: Vec<String>,
    },
    /// `--reduce` asked for a model file without a `[symmetry]` table.
    #[error(
        "model file '{path}' (model '{model}') declares no symmetry to reduce by: name its cyclic coordinates in a [symmetry] table, e.g. `cyclic = [\"x\"]` (docs/model-files.md)"
    )]
    FileNoSymmetry {
        /// The model's name.
        model: String,
        /// The file.
        path: String,
    },
    /// A parameter value is outside its physical range (non-positive mass,
    /// radius, length, inertia, capacitance or inductance; negative gravity;
    /// NaN or infinite values; …).
    #[error("model '{model}': invalid parameter {parameter} = {value}: {reason}")]
    InvalidParameter {
        /// The model's name.
        model: &'static str,
        /// The parameter's name (as in the scenario file).
        parameter: &'static str,
        /// The rejected value.
        value: f64,
        /// Why it was rejected.
        reason: String,
    },
    /// A scenario or `--set` names a key the model does not have.
    #[error("model '{model}' has no parameter '{key}' (valid keys: {})", .valid.join(", "))]
    UnknownParameter {
        /// The model's name.
        model: String,
        /// The unknown key.
        key: String,
        /// Every key that may be set.
        valid: Vec<String>,
    },
    /// A value could not be read as the type its key needs.
    #[error("'{key}' cannot be set to '{value}': expected {expected}")]
    IllTypedParameter {
        /// The key.
        key: String,
        /// The offending value, as given.
        value: String,
        /// What was expected instead.
        expected: String,
    },
    /// The initial configuration lies outside the admissible set.
    #[error(
        "initial configuration is outside the admissible set: boundary piece {piece} ({name}) \
         has g = {g:e} < 0 (violated by {:e})",
        -.g
    )]
    InitialInadmissible {
        /// The boundary piece `j` with `g_j(q0) < 0` (the most violated one).
        piece: usize,
        /// A readable description of the piece.
        name: String,
        /// `g_j(q0)` (negative; `-g` is the violation).
        g: f64,
    },
    /// The initial velocity does not lie in the constraint distribution
    /// `Δ_Q(q0) = ker A(q0)`.
    #[error(
        "initial velocity violates constraint {name}: this row of A(q0) v0 is {residual:e} in \
         absolute value, more than the tolerance {tolerance:e} (the velocities must satisfy \
         A(q0) v0 = 0)"
    )]
    InitialViolatesConstraint {
        /// The constraint row `a` (the most violated one).
        index: usize,
        /// A readable description of the row: for a model file, its
        /// expression `Σ_i A_ai(q) <coord_i>_dot = 0` (key
        /// `model.constraints[a]`); `row a` for a catalogued model.
        name: String,
        /// `|Σ_i A_{ai}(q0) v0_i|`, the residual of this one row.
        residual: f64,
        /// The tolerance it exceeded (`1e-9 · max(1, Σ_i |A_{ai} v0_i|)`).
        tolerance: f64,
    },
    /// Initial data contain NaN or infinity.
    #[error("initial {what} has a non-finite component {index}: {value}")]
    NonFiniteInitial {
        /// `"q"` or `"v"`.
        what: &'static str,
        /// The first offending component.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// A vector has the wrong number of components.
    #[error("{what} has {got} components, the model needs {expected}")]
    WrongLength {
        /// Which vector (`"q"`, `"v"`).
        what: &'static str,
        /// The model's dimension.
        expected: usize,
        /// The given length.
        got: usize,
    },
    /// The time step is not finite and positive.
    #[error("time step h must be finite and > 0, got {h}")]
    InvalidStep {
        /// The rejected step.
        h: f64,
    },
    /// The end time is negative or not finite.
    #[error("end time t_end must be finite and >= 0, got {t_end}")]
    InvalidEndTime {
        /// The rejected end time.
        t_end: f64,
    },
    /// The constraint discretization `model` was chosen, but the model
    /// supplies no discrete constraint of its own.
    #[error(
        "constraint discretization 'model' chosen, but model '{model}' supplies no discrete \
         constraint (use 'retraction' or 'midpoint')"
    )]
    NoModelConstraint {
        /// The model's name.
        model: String,
    },
    /// A netlist could not be read or analysed (line numbers, nodes and
    /// sources named by the circuit error).
    #[error("netlist '{source_name}': {error}")]
    Circuit {
        /// The netlist's file or name.
        source_name: String,
        /// What is wrong.
        error: diracvi_circuit::CircuitError,
    },
    /// A key that a circuit scenario does not take.
    #[error("{model}: {key} cannot be set for a circuit ({hint})")]
    CircuitKey {
        /// The circuit's name.
        model: String,
        /// The key given.
        key: String,
        /// What to do instead.
        hint: String,
    },
    /// A scenario file could not be read (TOML syntax, missing `model`,
    /// unknown top-level key, wrong table shape, …).
    #[error("scenario: {0}")]
    Scenario(String),
    /// A model file could not be read or compiled (the error names the
    /// file, the TOML key and the line and column).
    #[error(transparent)]
    ModelFile(#[from] diracvi_expr::ModelFileError),
}
