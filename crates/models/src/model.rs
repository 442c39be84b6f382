//! What a catalogued model is ([`Model`], [`NamedSystem`]), what it
//! declares (parameters, defaults), how callers visit it generically
//! ([`ModelVisitor`]), and the checks of parameters and initial data the
//! models share.

use crate::{ConstraintDiscretization, Discretization, Drawing, ModelError, System};
#[cfg(doc)]
use crate::{FileModel, Scenario, catalogue};
use nalgebra::SVector;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A catalogued system: a [`System`] with a name, typed parameters (whose
/// `Default` is the paper's values) and the paper's default run.
pub trait Model<const N: usize, const M: usize>: System<N, M> + Clone + Send + Sync {
    /// The parameters. Serialized field names are the scenario keys; they
    /// must match [`PARAMETERS`](Self::PARAMETERS). `Default` = paper values.
    type Params: Serialize + DeserializeOwned + Clone + Default + std::fmt::Debug + PartialEq;

    /// Registry name (`"particle"`, `"ellipse"`, `"star"`, `"pendulum"`,
    /// `"disk-wall"`, `"disk-table"`, `"lc"`, `"heavy-top"`,
    /// `"chaplygin-sphere"`, `"bouncing-body"`).
    const NAME: &'static str;

    /// One line describing the system and its source.
    const DESCRIPTION: &'static str;

    /// Every parameter with its unit, type and meaning, in display order.
    const PARAMETERS: &'static [ParameterInfo];

    /// Names of the `N` coordinates, in order.
    fn coordinate_names() -> [&'static str; N];

    /// Build the model, validating every parameter.
    ///
    /// # Errors
    /// [`ModelError::InvalidParameter`] naming the first bad parameter
    /// (non-positive mass, radius, length, inertia, capacitance or
    /// inductance; negative gravity; non-finite values; inconsistent sizes).
    fn new(params: Self::Params) -> Result<Self, ModelError>;

    /// The parameters the model was built with.
    fn params(&self) -> &Self::Params;

    /// The paper's default run for these parameters (docs/theory.md §5). Initial
    /// velocities that the constraints determine are computed from the
    /// constraints with the model's actual parameters.
    fn run_defaults(&self) -> RunSetup<N>;

    /// A readable description of boundary piece `j` (for messages and
    /// impact records).
    fn boundary_name(&self, j: usize) -> String {
        format!("g_{j}")
    }

    /// The model's planar picture (walls, body, contact points) for
    /// animations, or `None` (the default) when it has none.
    fn drawing(&self) -> Option<&dyn Drawing<N>> {
        None
    }

    /// The names of the model's known first integrals for these parameters
    /// (Noether momenta of its symmetries, Casimirs, documented
    /// integrals), which runs report in their summary; none by default.
    /// [`invariant_values`](Self::invariant_values) evaluates them.
    fn invariant_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// The first integrals of [`invariant_names`](Self::invariant_names) at
    /// the state `(q, p)` (configuration and momentum, as the steppers carry
    /// them), written to `out` (one entry per name).
    fn invariant_values(&self, _q: &SVector<f64, N>, _p: &SVector<f64, N>, _out: &mut [f64]) {}
}

/// A run's setup: continuous initial data, step, end time and
/// discretization choices.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSetup<const N: usize> {
    /// Initial configuration `q(0)`.
    pub q0: SVector<f64, N>,
    /// Initial velocity `v(0)`; the integrators start from
    /// `p_0 = ∂L/∂v(q(0), v(0))` (docs/theory.md §3).
    pub v0: SVector<f64, N>,
    /// Time step `h > 0` (s).
    pub h: f64,
    /// End time (s); runs start at `t = 0`.
    pub t_end: f64,
    /// Discretization map of the discrete Lagrangian.
    pub discretization: Discretization,
    /// Discrete constraint (irrelevant when `M = 0`).
    pub constraint: ConstraintDiscretization,
}

/// The value type of a parameter, which [`Scenario::set`] parses to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParameterKind {
    /// A real number (TOML float; integers are accepted).
    Float,
    /// A real number or `none` (the model derives the value, e.g. an
    /// inertia from the body's shape).
    OptionalFloat,
    /// An integer.
    Integer,
    /// `true` / `false`.
    Bool,
    /// A string.
    Text,
}

impl ParameterKind {
    /// What a value of this kind looks like, for error messages.
    pub fn expected(self) -> &'static str {
        match self {
            ParameterKind::Float => "a number",
            ParameterKind::OptionalFloat => "a number or 'none'",
            ParameterKind::Integer => "an integer",
            ParameterKind::Bool => "true or false",
            ParameterKind::Text => "a string",
        }
    }
}

/// Description of one model parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParameterInfo {
    /// Scenario key (the serde field name).
    pub name: &'static str,
    /// The paper's symbol.
    pub symbol: &'static str,
    /// SI unit (`"1"` for dimensionless).
    pub unit: &'static str,
    /// Value type.
    pub kind: ParameterKind,
    /// Meaning, and the derived value when optional.
    pub description: &'static str,
}

impl ParameterInfo {
    /// A real parameter.
    pub const fn float(
        name: &'static str,
        symbol: &'static str,
        unit: &'static str,
        description: &'static str,
    ) -> Self {
        Self {
            name,
            symbol,
            unit,
            kind: ParameterKind::Float,
            description,
        }
    }

    /// An optional real parameter (`none` selects a derived value, which
    /// `description` names).
    pub const fn optional_float(
        name: &'static str,
        symbol: &'static str,
        unit: &'static str,
        description: &'static str,
    ) -> Self {
        Self {
            kind: ParameterKind::OptionalFloat,
            ..Self::float(name, symbol, unit, description)
        }
    }

    /// A boolean switch (dimensionless, no symbol).
    pub const fn switch(name: &'static str, description: &'static str) -> Self {
        Self {
            kind: ParameterKind::Bool,
            ..Self::float(name, "-", "1", description)
        }
    }

    /// The mass `m` (kg) of the body named in `description`.
    pub const fn mass(description: &'static str) -> Self {
        Self::float("m", "m", "kg", description)
    }

    /// The gravitational acceleration `g` (m/s²).
    pub const GRAVITY: Self = Self::float("g", "g", "m/s^2", "gravitational acceleration");
}

/// One entry of the [`catalogue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelInfo {
    /// Registry name.
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
}

/// What a run reports of a model besides its physics: its name, its
/// description and the names of its coordinates and boundary pieces.
///
/// Every catalogued [`Model`] has it (from its constants), and so has every
/// [`FileModel`] (from the file), so one [`ModelVisitor`] runs both.
pub trait NamedSystem<const N: usize, const M: usize>: System<N, M> + Clone + Send + Sync {
    /// The model's name (registry name or the file's `model.name`).
    fn name(&self) -> &str;
    /// One line describing the system.
    fn description(&self) -> &str;
    /// The names of the `N` coordinates, in order.
    fn coordinates(&self) -> Vec<String>;
    /// A readable description of boundary piece `j` (for messages and
    /// impact records).
    fn piece_name(&self, j: usize) -> String;
    /// A readable description of constraint row `a` of `A(q)` (for
    /// messages); the default is `row a`.
    fn constraint_name(&self, a: usize) -> String {
        format!("row {a}")
    }
    /// The planar picture for animations ([`Model::drawing`]); `None` (the
    /// default, and for model files) when the model has none.
    fn picture(&self) -> Option<&dyn Drawing<N>> {
        None
    }
    /// The names of the first integrals runs report in their summary
    /// ([`Model::invariant_names`]; a model file's `[invariants]`); none by
    /// default.
    fn invariant_names(&self) -> Vec<String> {
        Vec::new()
    }
    /// The first integrals of [`invariant_names`](Self::invariant_names) at
    /// the state `(q, p)`, written to `out` (one entry per name; `NaN` where
    /// one cannot be evaluated).
    fn invariants(&self, _q: &SVector<f64, N>, _p: &SVector<f64, N>, _out: &mut [f64]) {}
}

impl<const N: usize, const M: usize, T: Model<N, M>> NamedSystem<N, M> for T {
    fn name(&self) -> &str {
        T::NAME
    }
    fn description(&self) -> &str {
        T::DESCRIPTION
    }
    fn coordinates(&self) -> Vec<String> {
        T::coordinate_names()
            .iter()
            .map(|c| c.to_string())
            .collect()
    }
    fn piece_name(&self, j: usize) -> String {
        self.boundary_name(j)
    }
    fn picture(&self) -> Option<&dyn Drawing<N>> {
        self.drawing()
    }
    fn invariant_names(&self) -> Vec<String> {
        Model::invariant_names(self)
    }
    fn invariants(&self, q: &SVector<f64, N>, p: &SVector<f64, N>, out: &mut [f64]) {
        self.invariant_values(q, p, out);
    }
}

/// A generic operation on a model and its run setup, so callers can run any
/// model — catalogued or read from a file — without this crate depending on
/// the integrators.
pub trait ModelVisitor {
    /// What the visit produces.
    type Output;
    /// Called with the concrete model type, its dimensions and the setup.
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Self::Output;
}

pub use diracvi_geometry::CONSTRAINT_TOLERANCE;

/// Check continuous initial data `(q0, v0)` against a model
/// ([`diracvi_geometry::check_initial`], with the boundary piece named):
///
/// * every component finite;
/// * `q0` admissible: `g_j(q0) ≥ 0` for every boundary piece (the most
///   violated piece is reported);
/// * `v0 ∈ Δ_Q(q0)`: `|Σ_i A_{ai}(q0) v0_i| ≤ 1e-9 · max(1, Σ_i |A_{ai}(q0) v0_i|)`
///   for every row `a` (the most violated row is reported).
///
/// # Errors
/// [`ModelError::NonFiniteInitial`], [`ModelError::InitialInadmissible`],
/// [`ModelError::InitialViolatesConstraint`].
pub fn check_initial<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
    model: &Mo,
    q0: &SVector<f64, N>,
    v0: &SVector<f64, N>,
) -> Result<(), ModelError> {
    diracvi_geometry::check_initial(model, q0, v0).map_err(|e| {
        initial_error(
            e,
            |piece| model.piece_name(piece),
            |row| model.constraint_name(row),
        )
    })
}

/// A [`GeometryError`](diracvi_geometry::GeometryError) of an initial-data
/// check as the [`ModelError`] naming the violated piece (`piece_name`) or
/// constraint row (`constraint_name`).
pub(crate) fn initial_error(
    e: diracvi_geometry::GeometryError,
    piece_name: impl Fn(usize) -> String,
    constraint_name: impl Fn(usize) -> String,
) -> ModelError {
    use diracvi_geometry::GeometryError as G;
    match e {
        G::InitialInadmissible { piece, g } => ModelError::InitialInadmissible {
            piece,
            name: piece_name(piece),
            g,
        },
        G::InitialViolatesConstraint {
            row,
            residual,
            tolerance,
        } => ModelError::InitialViolatesConstraint {
            index: row,
            name: constraint_name(row),
            residual,
            tolerance,
        },
        G::NonFinite { what, index, value } => ModelError::NonFiniteInitial {
            what: if what.starts_with('q') { "q" } else { "v" },
            index,
            value,
        },
        G::DimensionMismatch {
            what,
            expected,
            got,
        } => ModelError::WrongLength {
            what: if what.starts_with('q') { "q" } else { "v" },
            expected,
            got,
        },
        other => ModelError::Scenario(other.to_string()),
    }
}

/// Parameter checks shared by the models' constructors.
pub(crate) mod validate {
    use crate::ModelError;

    /// `value` must be finite and `> 0`.
    pub fn positive(
        model: &'static str,
        parameter: &'static str,
        value: f64,
    ) -> Result<(), ModelError> {
        finite(model, parameter, value)?;
        if value > 0.0 {
            Ok(())
        } else {
            Err(ModelError::InvalidParameter {
                model,
                parameter,
                value,
                reason: "must be > 0".into(),
            })
        }
    }

    /// An optional positive parameter: the given value (validated) or
    /// `derived` when `None`.
    pub fn positive_or(
        model: &'static str,
        parameter: &'static str,
        value: Option<f64>,
        derived: f64,
    ) -> Result<f64, ModelError> {
        match value {
            Some(v) => positive(model, parameter, v).map(|()| v),
            None => Ok(derived),
        }
    }

    /// `value` must be finite and `≥ 0`.
    pub fn non_negative(
        model: &'static str,
        parameter: &'static str,
        value: f64,
    ) -> Result<(), ModelError> {
        finite(model, parameter, value)?;
        if value >= 0.0 {
            Ok(())
        } else {
            Err(ModelError::InvalidParameter {
                model,
                parameter,
                value,
                reason: "must be >= 0".into(),
            })
        }
    }

    /// `value` must be finite.
    pub fn finite(
        model: &'static str,
        parameter: &'static str,
        value: f64,
    ) -> Result<(), ModelError> {
        if value.is_finite() {
            Ok(())
        } else {
            Err(ModelError::InvalidParameter {
                model,
                parameter,
                value,
                reason: "must be finite".into(),
            })
        }
    }
}
