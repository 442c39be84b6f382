//! Errors of model files.

use super::position::Position;
use crate::expr::{ExprError, ScopeError};
use thiserror::Error;

/// A model file problem, located: the file, the TOML key of the offending
/// value (e.g. `model.constraints[0][2]`, empty when no key applies) and its
/// 1-based line and column.
///
/// For an error inside an expression the position is the exact character in
/// the file: the string value's start, plus its opening quote(s), plus the
/// column inside the expression (escape sequences in basic strings count as
/// the one character they decode to, a line-ending backslash as none).
/// There is no position when nothing in the file is to blame (I/O, parameter
/// overrides, or data changed after reading).
///
/// Displayed as `path:line:column: key: message`. (Boxed, so results stay
/// small.)
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{}{}: {}{}", .0.path, at(.0.position.as_ref()), key_prefix(&.0.key), .0.kind)]
pub struct ModelFileError(Box<Inner>);

#[derive(Debug, Clone, PartialEq)]
struct Inner {
    path: String,
    key: String,
    position: Option<Position>,
    kind: ModelFileErrorKind,
}

impl ModelFileError {
    pub(crate) fn new(
        path: String,
        key: String,
        position: Option<Position>,
        kind: ModelFileErrorKind,
    ) -> Self {
        Self(Box::new(Inner {
            path,
            key,
            position,
            kind,
        }))
    }

    /// The file's path as given.
    pub fn path(&self) -> &str {
        &self.0.path
    }

    /// The TOML key of the offending value (empty when none applies).
    pub fn key(&self) -> &str {
        &self.0.key
    }

    /// Where in the file, if anywhere.
    pub fn position(&self) -> Option<Position> {
        self.0.position
    }

    /// 1-based line (0 when there is no position).
    pub fn line(&self) -> usize {
        self.0.position.map_or(0, |p| p.line)
    }

    /// 1-based character column (0 when there is no position).
    pub fn column(&self) -> usize {
        self.0.position.map_or(0, |p| p.column)
    }

    /// What went wrong.
    pub fn kind(&self) -> &ModelFileErrorKind {
        &self.0.kind
    }
}

fn at(position: Option<&Position>) -> String {
    position.map_or_else(String::new, |p| format!(":{}:{}", p.line, p.column))
}

fn key_prefix(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("{key}: ")
    }
}

/// The kinds of [`ModelFileError`].
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ModelFileErrorKind {
    /// The file could not be read.
    #[error("cannot read the file: {0}")]
    Io(String),
    /// The file is larger than the limit (it is not read).
    #[error("the file has {bytes} bytes, more than the limit of {limit} bytes")]
    TooLarge {
        /// Size of the file.
        bytes: u64,
        /// The limit ([`MAX_FILE_BYTES`](super::MAX_FILE_BYTES)).
        limit: u64,
    },
    /// Not valid TOML.
    #[error("TOML syntax error: {0}")]
    Syntax(String),
    /// A key the schema does not know.
    #[error("unknown key (expected one of: {})", allowed.join(", "))]
    UnknownKey {
        /// The keys allowed here.
        allowed: &'static [&'static str],
    },
    /// A required key is missing (the position is its table's).
    #[error("missing required key")]
    Missing,
    /// A value of the wrong TOML type.
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// The type the schema needs.
        expected: &'static str,
        /// The type found.
        found: &'static str,
    },
    /// An empty name or an empty list where one is needed.
    #[error("must not be empty")]
    Empty,
    /// A coordinate or parameter name that is not usable in expressions.
    #[error("`{name}` cannot be used as a name: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// Why not.
        reason: &'static str,
    },
    /// A name defined twice.
    #[error("`{name}` is defined twice")]
    Duplicate {
        /// The name.
        name: String,
    },
    /// A name that is also a coordinate, a velocity `<coord>_dot` or a
    /// momentum `p_<coord>`.
    #[error("`{name}` clashes with {other}")]
    NameClash {
        /// The name.
        name: String,
        /// What it clashes with.
        other: String,
    },
    /// `model.drives` of the wrong length.
    #[error("expected {rows} entries (one per row of model.constraints), found {found}")]
    DrivesLength {
        /// The number of rows of `model.constraints`.
        rows: usize,
        /// Actual length.
        found: usize,
    },
    /// A list of the wrong length.
    #[error("expected {expected} entries (one per coordinate), found {found}")]
    WrongLength {
        /// Needed length.
        expected: usize,
        /// Actual length.
        found: usize,
    },
    /// A constraint row or an initial `q` or `v` of a model with an
    /// orientation whose length is neither the declared coordinates' nor
    /// every coordinate's.
    #[error(
        "expected {declared} entries (the declared coordinates; model.orientation completes the quaternion's) or {full} (every coordinate, the quaternion's included), found {found}"
    )]
    WrongLengthOrientation {
        /// Every coordinate, the quaternion's included.
        full: usize,
        /// The coordinates of `model.coordinates`.
        declared: usize,
        /// Actual length.
        found: usize,
    },
    /// `initial.attitude` or `initial.omega` in a file without
    /// `model.orientation`.
    #[error("only for a model with an orientation (model.orientation = \"so3\")")]
    NeedsOrientation,
    /// A number that is NaN or infinite.
    #[error("value {value} is not finite")]
    NonFinite {
        /// The value.
        value: f64,
    },
    /// A number outside its allowed range.
    #[error("value {value} is out of range: {requirement}")]
    OutOfRange {
        /// The value.
        value: f64,
        /// What is required.
        requirement: &'static str,
    },
    /// A key given together with another it excludes (e.g. `run.tol` with
    /// `run.h`); the error's key is this one, `other` the key it excludes.
    #[error("exclusive with `{other}`: {reason}")]
    Exclusive {
        /// The other key (full TOML path, e.g. `run.h`).
        other: &'static str,
        /// Why only one of the two may be given.
        reason: &'static str,
    },
    /// A string that is not one of the allowed choices.
    #[error("`{value}` is not one of: {}", allowed.join(", "))]
    InvalidChoice {
        /// The value.
        value: String,
        /// The allowed values.
        allowed: &'static [&'static str],
    },
    /// An expression that does not compile.
    #[error("{} (column {} of the expression)", .0.kind, .0.column)]
    Expression(ExprError),
    /// A parameter override naming no parameter of the model.
    #[error("unknown parameter `{name}` (the model's parameters: {})", list(known))]
    UnknownParameter {
        /// The name given.
        name: String,
        /// The model's parameter names.
        known: Vec<String>,
    },
    /// `"solve"` in `initial.q`: only velocities are solved for.
    #[error(
        "only velocities (initial.v) can be marked \"solve\"; give q(0) as numbers or expressions"
    )]
    SolveNotAllowed,
    /// Parameters written as expressions that use each other in a cycle.
    #[error("parameters refer to each other in a cycle: {}", .cycle.join(" -> "))]
    ParameterCycle {
        /// The cycle, its first name repeated at the end.
        cycle: Vec<String>,
    },
    /// Velocities marked `"solve"` that `A(q0) v0 = 0` does not determine.
    #[error("cannot solve A(q0) v0 = 0 for {} at q0 = {q:?}: {reason}", names.join(", "))]
    VelocitiesNotDetermined {
        /// The velocities marked `"solve"` (`<coord>_dot`).
        names: Vec<String>,
        /// The initial configuration.
        q: Vec<f64>,
        /// Why not.
        reason: String,
    },
    /// The given Hamiltonian is not the Legendre transform of the
    /// Lagrangian at a checked point.
    #[error(
        "the Hamiltonian is not the Legendre transform of the Lagrangian: at q = {q:?}, v = {v:?}, \
         p = dL/dv = {p:?}: H(q, p) = {hamiltonian:e} but p·v - L(q, v) = {legendre:e} \
         (mismatch {:e})",
        .hamiltonian - .legendre
    )]
    HamiltonianMismatch {
        /// The configuration.
        q: Vec<f64>,
        /// The velocity.
        v: Vec<f64>,
        /// `∂L/∂v(q, v)`.
        p: Vec<f64>,
        /// `H(q, p)` as given.
        hamiltonian: f64,
        /// `p·v − L(q, v)`.
        legendre: f64,
    },
    /// `drawing.boundaries` names a piece the model does not have.
    #[error("no boundary piece {index}: the model has {count} (model.boundaries, counted from 0)")]
    NoSuchPiece {
        /// The index given.
        index: i64,
        /// The number of pieces.
        count: usize,
    },
    /// `drawing.boundaries` for a model without coordinates named `x` and
    /// `y` (the plane in which pieces are drawn by their zero sets).
    #[error(
        "boundary pieces are drawn by their zero sets in the plane of the coordinates named x and y, which this model does not have: draw its walls as [[drawing.walls]] shapes instead"
    )]
    NoPlaneCoordinates,
    /// A point of the drawing that is not a pair `[x, y]`.
    #[error("expected a point [x, y] (2 entries), found {found} entries")]
    NotAPoint {
        /// The number of entries found.
        found: usize,
    },
    /// A polyline with too few points.
    #[error("a polyline needs at least {needed} points, found {found}")]
    TooFewPoints {
        /// The least number of points.
        needed: usize,
        /// The number found.
        found: usize,
    },
    /// A wall of the drawing whose value depends on the coordinates.
    #[error(
        "walls are drawn still: this value must not depend on the coordinates (use [[drawing.body]] for moving shapes)"
    )]
    MovingWall,
    /// `symmetry.cyclic` names something that is not a coordinate.
    #[error(
        "`{name}` is not a coordinate of the model (its coordinates: {})",
        list(coordinates)
    )]
    NotACoordinate {
        /// The name given.
        name: String,
        /// The model's coordinates.
        coordinates: Vec<String>,
    },
    /// `symmetry.cyclic` names a coordinate twice.
    #[error("coordinate `{name}` is named twice")]
    NamedTwice {
        /// The coordinate.
        name: String,
    },
    /// `symmetry.cyclic` names every coordinate: nothing is left to
    /// integrate on shape space.
    #[error(
        "every coordinate is declared cyclic: a reduced run needs at least one shape coordinate left"
    )]
    NoShapeCoordinate,
    /// Names rejected when building an expression scope (only for model
    /// data changed after reading).
    #[error(transparent)]
    Scope(ScopeError),
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}
