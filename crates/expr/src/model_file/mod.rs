//! Model files: a mechanical system written as TOML, read into a
//! [`ModelFile`] (the raw data) and compiled into a [`CompiledModel`]
//! (expressions ready to evaluate over any AD scalar).
//!
//! ```toml
//! [model]
//! name = "sleigh"
//! description = "Chaplygin sleigh in a circular arena"     # optional
//! coordinates = ["x", "y", "theta"]          # velocities x_dot, y_dot, theta_dot
//! lagrangian = "0.5*m*(x_dot^2 + y_dot^2) + 0.5*(I + m*a^2)*theta_dot^2 + m*a*theta_dot*(cos(theta)*y_dot - sin(theta)*x_dot)"
//! constraints = [["-sin(theta)", "cos(theta)", "0"]]   # rows of A(q), n entries each; [] or omitted: none
//! boundaries = ["R^2 - x^2 - y^2"]           # pieces g_j(q) >= 0; [] or omitted: none
//! hamiltonian = ""                           # optional, over q and momenta p_x, p_y, p_theta; "" = none
//! [definitions]                              # optional; named expressions, substituted where used
//! slip = "cos(theta)*y_dot - sin(theta)*x_dot"
//! [parameters]                               # optional; finite numbers, or expressions (strings)
//! m = 1.0
//! I = "m*a^2/0.9"                            # computed from the other parameters and pi
//! a = 0.3
//! R = 2.0
//! [run]                                      # optional, every key optional
//! h = 1e-3                                   # > 0
//! # tol = 1e-8                               # > 0, instead of h: diracvi chooses order and step
//! t_end = 20.0                               # >= 0
//! discretization = "midpoint"                # "forward" | "midpoint"
//! constraint = "midpoint"                    # "retraction" | "midpoint"
//! [initial]                                  # optional; both keys required when present
//! q = [0.0, 0.0, "pi/6"]                     # numbers or expressions of the parameters
//! v = [1.0, "solve", 0.5]                    # "solve": solved from A(q0) v0 = 0
//! [invariants]                               # optional; first integrals the run reports
//! momentum = "m*(x_dot + a*sin(theta)*theta_dot)" # over q, velocities and parameters
//! [symmetry]                                 # optional; coordinates the model does not depend on
//! cyclic = ["x"]                             # (reduced runs, docs/theory.md §7)
//! [drawing]                                  # optional; a planar picture (see [`drawing`])
//! contact = ["x", "y"]
//! [[drawing.body]]
//! kind = "point"
//! x = "x"
//! y = "y"
//! ```
//!
//! Slots: the Lagrangian is compiled over `[q_0 … q_{n−1}, v_0 … v_{n−1}]`
//! (velocity names `<coord>_dot`), constraint entries and boundaries over
//! `[q_0 … q_{n−1}]`, the Hamiltonian over `[q_0 … q_{n−1}, p_0 … p_{n−1}]`
//! (momentum names `p_<coord>`), the invariants over `[q.., v..]`.
//! Parameters are constants of the compiled
//! model; [`ModelFile::compile`] takes overrides, and computes the parameters
//! written as expressions from them ([`ModelFile::parameter_values`]).
//! Definitions are substituted into every expression that uses them
//! ([`Scope::add_definition`]). [`ModelFile::initial_values`] evaluates the
//! initial data and solves the velocities marked `"solve"`. A Hamiltonian is
//! checked against the Legendre transform of the Lagrangian when compiling
//! ([`LEGENDRE_TOLERANCE`]).

mod derived;
pub mod drawing;
mod error;
mod orientation;
mod parametric;
mod position;
mod read;
mod write;

pub use derived::LEGENDRE_TOLERANCE;
pub use drawing::{CompiledDrawing, DrawingHeading, DrawingShape, DrawingSpec};
pub use error::{ModelFileError, ModelFileErrorKind};
pub use parametric::ParametricModel;
pub use position::Position;

use crate::expr::{Expr, ExprError, Scope, ScopeError};
use diracvi_geometry::AdScalar;
use diracvi_geometry::dynamic::LagrangianTerms;
use std::collections::HashMap;
use std::io::Read;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// Files larger than this (1 MiB) are rejected without being read.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The text of the file at `path`, read only when it has at most
/// [`MAX_FILE_BYTES`] (at most one byte more is ever read, so a file that
/// grows or a special file cannot make it read more).
///
/// # Errors
/// [`ModelFileErrorKind::Io`] (I/O, not UTF-8 text),
/// [`ModelFileErrorKind::TooLarge`].
pub fn read_text(path: &Path) -> Result<String, ModelFileErrorKind> {
    let io = |e: std::io::Error| ModelFileErrorKind::Io(e.to_string());
    let too_large = |bytes| ModelFileErrorKind::TooLarge {
        bytes,
        limit: MAX_FILE_BYTES,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len > MAX_FILE_BYTES {
        return Err(too_large(len));
    }
    // the size can change, and special files report none: read at most one byte more
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        ModelFileErrorKind::Io(format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The allowed values of `run.discretization`.
pub const DISCRETIZATIONS: &[&str] = &["forward", "midpoint"];

/// The allowed values of `run.constraint`.
pub const CONSTRAINT_DISCRETIZATIONS: &[&str] = &["retraction", "midpoint"];

/// The optional `[run]` section: defaults for a run of the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunSettings {
    /// Time step, finite and `> 0`.
    pub h: Option<f64>,
    /// Accuracy on request, finite and `> 0`, exclusive with `h`: the
    /// runner chooses the order and the step for an error of about `tol`
    /// in the final state and impact times (`--tol`).
    pub tol: Option<f64>,
    /// Final time, finite and `≥ 0`.
    pub t_end: Option<f64>,
    /// One of [`DISCRETIZATIONS`].
    pub discretization: Option<String>,
    /// One of [`CONSTRAINT_DISCRETIZATIONS`].
    pub constraint: Option<String>,
}

impl RunSettings {
    fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// One entry of `initial.q` or `initial.v`.
#[derive(Clone, Debug, PartialEq)]
pub enum InitialValue {
    /// A number.
    Number(f64),
    /// An expression over the parameters and `pi` (a TOML string, e.g.
    /// `"pi/6"`), evaluated with the parameter values of the run.
    Expression(String),
    /// `"solve"` (velocities only): the entry is solved from
    /// `A(q0) v0 = 0` given the other entries.
    Solve,
}

impl InitialValue {
    /// The marker of a solved velocity in a model file.
    pub const SOLVE: &'static str = "solve";
}

/// The optional `[initial]` section: `q(0)` and `v(0)`, `n` entries each,
/// as written (numbers, expressions, velocities to solve for); see
/// [`ModelFile::initial_values`] for the numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct InitialState {
    /// Initial configuration.
    pub q: Vec<InitialValue>,
    /// Initial velocity.
    pub v: Vec<InitialValue>,
}

impl InitialState {
    /// Initial data given as numbers.
    pub fn numbers(q: &[f64], v: &[f64]) -> Self {
        Self {
            q: q.iter().map(|&x| InitialValue::Number(x)).collect(),
            v: v.iter().map(|&x| InitialValue::Number(x)).collect(),
        }
    }

    /// The indices of the velocities marked `"solve"`.
    pub fn solved(&self) -> Vec<usize> {
        (0..self.v.len())
            .filter(|&i| self.v[i] == InitialValue::Solve)
            .collect()
    }
}

/// The initial data of a model file as numbers
/// ([`ModelFile::initial_values`]).
#[derive(Clone, Debug, PartialEq)]
pub struct InitialValues {
    /// `q(0)`.
    pub q: Vec<f64>,
    /// `v(0)`, the velocities marked `"solve"` solved from `A(q0) v0 = 0`.
    pub v: Vec<f64>,
    /// The indices of the solved velocities (empty when none was marked).
    pub solved: Vec<usize>,
}

/// Where the expressions of a model file came from, to place errors found
/// when compiling.
#[derive(Debug)]
struct Origin {
    source: String,
    /// TOML key → (span of the string value, its decoded text).
    strings: HashMap<String, (Range<usize>, String)>,
}

/// A model file as written: names, expression sources, parameter values,
/// run settings and initial state, validated (schema, names, lengths,
/// finiteness, and every expression compiles with the file's parameters).
///
/// Equality compares the model data only, not the path or source positions,
/// so a model printed with [`to_toml_string`](Self::to_toml_string) and read
/// back is equal to the original.
#[derive(Clone, Debug)]
pub struct ModelFile {
    /// The path given when reading (used in error messages).
    pub path: String,
    /// `model.name`.
    pub name: String,
    /// `model.description` (empty when absent).
    pub description: String,
    /// `model.coordinates`.
    pub coordinates: Vec<String>,
    /// `model.lagrangian`.
    pub lagrangian: String,
    /// `model.constraints`: `m` rows of `n` expressions.
    pub constraints: Vec<Vec<String>>,
    /// `model.boundaries`.
    pub boundaries: Vec<String>,
    /// `model.hamiltonian` (`None` when absent or blank).
    pub hamiltonian: Option<String>,
    /// `[definitions]` in file order: named expressions (name, text) that
    /// every expression of the model, and later or earlier definitions, may
    /// use; substituted where they are used.
    pub definitions: Vec<(String, String)>,
    /// `[parameters]` in file order, with their values; a parameter written
    /// as an expression has here its value computed from the file's values
    /// (see [`parameter_expressions`](Self::parameter_expressions)).
    pub parameters: Vec<(String, f64)>,
    /// The parameters written as expressions (name, text), in file order;
    /// [`compile`](Self::compile) evaluates them from the other parameters
    /// (after overrides), unless they are overridden themselves.
    pub parameter_expressions: Vec<(String, String)>,
    /// `[run]`.
    pub run: RunSettings,
    /// `[initial]`.
    pub initial: Option<InitialState>,
    /// `[drawing]`: the planar picture of the model for animations.
    pub drawing: Option<DrawingSpec>,
    /// `[invariants]` in file order: named expressions over the
    /// coordinates, velocities and parameters — the model's known first
    /// integrals, which a run reports in its summary.
    pub invariants: Vec<(String, String)>,
    /// `symmetry.cyclic`: the coordinates declared cyclic (the group
    /// `R^K` acting by shifting them, docs/theory.md §7), by name, as
    /// written; empty when the file declares no symmetry. Checked when read
    /// (coordinates of the model, each once, not all of them); whether they
    /// are cyclic is checked when a run is reduced.
    pub symmetry: Vec<String>,
    /// `[forces]` in file order: generalized forces of time on coordinates
    /// (coordinate name, expression of `t` and the parameters): the
    /// Lagrangian gains `Σ_i F_i(t) q_i` (a driven system, docs/theory.md
    /// §8.8; docs/model-files.md "Forces and drives").
    pub forces: Vec<(String, String)>,
    /// `model.drives`: one prescribed displacement `g_r(t)` per row of
    /// `model.constraints` (an expression of `t` and the parameters, `"0"`
    /// for an undriven row), or empty: the constraints read
    /// `A(q) v + ġ(t) = 0` (docs/theory.md §8.8).
    pub drives: Vec<String>,
    origin: Option<Arc<Origin>>,
}

impl PartialEq for ModelFile {
    fn eq(&self, other: &Self) -> bool {
        self.same_system(other)
            && self.parameters == other.parameters
            && self.run == other.run
            && self.initial == other.initial
    }
}

impl ModelFile {
    /// An empty model named `name` (no coordinates, no expressions), for a
    /// program that builds a model in code — an assembled system — and
    /// prints it with [`to_toml_string`](Self::to_toml_string); reading that
    /// text back with [`from_toml_str`](Self::from_toml_str) checks it.
    pub fn new(name: &str) -> ModelFile {
        ModelFile {
            path: String::new(),
            name: name.to_owned(),
            description: String::new(),
            coordinates: Vec::new(),
            lagrangian: String::new(),
            constraints: Vec::new(),
            boundaries: Vec::new(),
            hamiltonian: None,
            definitions: Vec::new(),
            parameters: Vec::new(),
            parameter_expressions: Vec::new(),
            run: RunSettings::default(),
            initial: None,
            drawing: None,
            invariants: Vec::new(),
            symmetry: Vec::new(),
            forces: Vec::new(),
            drives: Vec::new(),
            origin: None,
        }
    }

    /// Whether the two files describe the same system: name, description,
    /// coordinates, expressions and parameter names agree; parameter
    /// values, `[run]` and `[initial]` may differ.
    pub fn same_system(&self, other: &Self) -> bool {
        self.name == other.name
            && self.description == other.description
            && self.coordinates == other.coordinates
            && self.lagrangian == other.lagrangian
            && self.constraints == other.constraints
            && self.boundaries == other.boundaries
            && self.hamiltonian == other.hamiltonian
            && self.definitions == other.definitions
            && self.parameter_expressions == other.parameter_expressions
            && self.drawing == other.drawing
            && self.invariants == other.invariants
            && self.symmetry == other.symmetry
            && self.forces == other.forces
            && self.drives == other.drives
            && self.parameters.len() == other.parameters.len()
            && self
                .parameters
                .iter()
                .zip(&other.parameters)
                .all(|((a, _), (b, _))| a == b)
    }

    /// Read a model from TOML text; `path` is only used in error messages.
    ///
    /// # Errors
    /// TOML syntax errors, schema violations (unknown or missing keys, wrong
    /// types), invalid or clashing names, wrong lengths, non-finite or
    /// out-of-range numbers, expressions and definitions that do not
    /// compile, parameters in a cycle, initial data that do not evaluate or
    /// solve, and a Hamiltonian that is not the Legendre transform of the
    /// Lagrangian — each with the key, line and column (see
    /// [`ModelFileError`]).
    pub fn from_toml_str(source: &str, path: &str) -> Result<ModelFile, ModelFileError> {
        let mut model = read::read(source, path)?;
        model.parameters = model.parameter_values(&[])?;
        let compiled = model.compile(&[])?;
        // the initial data must evaluate (and the marked velocities solve)
        model.initial_values(&compiled, None)?;
        Ok(model)
    }

    /// Read a model file from disk (at most [`MAX_FILE_BYTES`]).
    ///
    /// # Errors
    /// As [`from_toml_str`](Self::from_toml_str), plus I/O errors, files
    /// that are not UTF-8, and files over the size limit (not read).
    pub fn from_path(path: impl AsRef<Path>) -> Result<ModelFile, ModelFileError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let source = read_text(path)
            .map_err(|kind| ModelFileError::new(shown.clone(), String::new(), None, kind))?;
        Self::from_toml_str(&source, &shown)
    }

    /// The model as TOML; reading it back gives an equal [`ModelFile`].
    pub fn to_toml_string(&self) -> String {
        write::write(self)
    }

    /// Number of coordinates `n`.
    pub fn n(&self) -> usize {
        self.coordinates.len()
    }

    /// The velocity names `<coord>_dot`.
    pub fn velocity_names(&self) -> Vec<String> {
        self.coordinates
            .iter()
            .map(|c| format!("{c}_dot"))
            .collect()
    }

    /// The momentum names `p_<coord>`.
    pub fn momentum_names(&self) -> Vec<String> {
        self.coordinates.iter().map(|c| format!("p_{c}")).collect()
    }

    fn error(&self, key: String, kind: ModelFileErrorKind) -> ModelFileError {
        ModelFileError::new(self.path.clone(), key, None, kind)
    }

    /// An error about the value of `key`, placed at that value in the file
    /// when it is a string read from there.
    fn located_error(&self, key: &str, kind: ModelFileErrorKind) -> ModelFileError {
        let position = self.origin.as_ref().and_then(|o| {
            o.strings.get(key).map(|(span, _)| {
                Position::of_offset(
                    &o.source,
                    position::string_char_offset(&o.source, span.clone(), 1),
                )
            })
        });
        ModelFileError::new(self.path.clone(), key.to_owned(), position, kind)
    }

    /// An expression error placed at its character in the file, when the
    /// expression is still the one read from there.
    fn expression_error(&self, key: String, text: &str, e: ExprError) -> ModelFileError {
        let position = self.origin.as_ref().and_then(|o| {
            o.strings
                .get(&key)
                .filter(|(_, t)| t == text)
                .map(|(span, _)| {
                    let offset = position::string_char_offset(&o.source, span.clone(), e.column);
                    Position::of_offset(&o.source, offset)
                })
        });
        ModelFileError::new(
            self.path.clone(),
            key,
            position,
            ModelFileErrorKind::Expression(e),
        )
    }

    /// Compile every expression with the file's parameters, changed by
    /// `overrides` (name, value; later entries win; parameters written as
    /// expressions are evaluated from the values after the overrides, see
    /// [`parameter_values`](Self::parameter_values)).
    ///
    /// A Hamiltonian is checked against the Legendre transform of the
    /// Lagrangian at the initial point and two points near it
    /// ([`LEGENDRE_TOLERANCE`]).
    ///
    /// # Errors
    /// An override naming no parameter (the error lists the known ones) or
    /// with a non-finite value; parameter expressions that do not evaluate or
    /// use each other in a cycle; an expression or a definition that does
    /// not compile with these values (e.g. a constant subexpression that is
    /// not finite, an unknown name, definitions in a cycle); initial data
    /// that do not evaluate (when a Hamiltonian is given);
    /// [`ModelFileErrorKind::HamiltonianMismatch`].
    pub fn compile(&self, overrides: &[(String, f64)]) -> Result<CompiledModel, ModelFileError> {
        let parameters = self.parameter_values(overrides)?;
        let scope = |second: &[String]| self.scope_over(&parameters, second);
        // each definition on its own, over every variable a definition may use
        let all = scope(
            &self
                .velocity_names()
                .into_iter()
                .chain(self.momentum_names())
                .collect::<Vec<_>>(),
        )?;
        for (name, text) in &self.definitions {
            Expr::compile_definition(name, &all)
                .map_err(|e| self.expression_error(format!("definitions.{name}"), text, e))?;
        }
        let n = self.n();
        let ModelExpressions {
            lagrangian,
            constraints,
            boundaries,
            hamiltonian,
            q_scope,
            qv_scope,
        } = self.compile_model_expressions(scope)?;
        let compile = |key: String, text: &str, scope: &Scope| {
            Expr::compile(text, scope).map_err(|e| self.expression_error(key, text, e))
        };
        let terms = lagrangian_terms(&self.lagrangian, &qv_scope, n);
        let rows = row_stencils(&self.constraints, &q_scope, n);
        let drawing = match &self.drawing {
            Some(spec) => Some(spec.try_map(|key, text| compile(key.to_owned(), text, &q_scope))?),
            None => None,
        };
        if let Some(d) = &drawing {
            for (key, expr, wall) in d.values() {
                if wall && expr.constant_value().is_none() {
                    return Err(self.located_error(&key, ModelFileErrorKind::MovingWall));
                }
            }
        }
        let mut invariants = Vec::with_capacity(self.invariants.len());
        for (name, text) in &self.invariants {
            invariants.push((
                name.clone(),
                compile(format!("invariants.{name}"), text, &qv_scope)?,
            ));
        }
        let (forces, drives) = self.compile_forcing(&parameters)?;
        // A force joins the first term whose stencil holds its coordinate;
        // a force on a coordinate in no term: no terms.
        let terms = terms.filter(|(t, _)| {
            forces
                .iter()
                .all(|(i, _)| (0..t.len()).any(|e| t.stencil(e).contains(i)))
        });
        let compiled = CompiledModel {
            invariants,
            forces,
            drives,
            name: self.name.clone(),
            coordinates: self.coordinates.clone(),
            parameters,
            lagrangian,
            terms,
            constraints,
            rows,
            boundaries,
            hamiltonian,
            drawing,
        };
        if compiled.hamiltonian.is_some() {
            let initial = self.initial_values(&compiled, None)?;
            self.check_hamiltonian(&compiled, &initial.q, &initial.v)?;
        }
        Ok(compiled)
    }
}

impl ModelFile {
    /// Further functions of `(q, v)`, each `(key, text)`, compiled over the
    /// slots `[q.., v..]` of the Lagrangian's scope (the parameters with
    /// `overrides` applied, the definitions), which is built once for all
    /// of them: e.g. the Lagrangians of a system's parts and ports
    /// (docs/theory.md §15.1). Evaluate them with [`Expr::eval_split`].
    ///
    /// # Errors
    /// What [`compile`](Self::compile) reports for the parameters and the
    /// scope; an expression that does not compile, located at its `key`.
    pub fn compile_velocity_functions(
        &self,
        overrides: &[(String, f64)],
        sources: &[(String, String)],
    ) -> Result<Vec<Expr>, ModelFileError> {
        let parameters = self.parameter_values(overrides)?;
        let scope = self.scope_over(&parameters, &self.velocity_names())?;
        sources
            .iter()
            .map(|(key, text)| {
                Expr::compile(text, &scope).map_err(|e| self.expression_error(key.clone(), text, e))
            })
            .collect()
    }
}

/// `[forces]` as (coordinate, `F(t)`) and `model.drives` as `g_r(t)`,
/// compiled over the slot `[t]`.
pub(crate) type Forcing = (Vec<(usize, Expr)>, Vec<Expr>);

impl ModelFile {
    /// `[forces]` and `model.drives` compiled over the one variable `t`
    /// (the parameters with their values, the definitions).
    fn compile_forcing(&self, parameters: &[(String, f64)]) -> Result<Forcing, ModelFileError> {
        self.compile_forcing_over(&[], parameters)
    }

    /// `[forces]` and `model.drives` compiled over the variables `t` and
    /// then `theta` (parameters as variables: the parametric compilation),
    /// with `parameters` as values and the definitions.
    pub(crate) fn compile_forcing_over(
        &self,
        theta: &[String],
        parameters: &[(String, f64)],
    ) -> Result<Forcing, ModelFileError> {
        if self.forces.is_empty() && self.drives.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let scope_error = |e: ScopeError| self.error("forces".into(), ModelFileErrorKind::Scope(e));
        let mut scope =
            Scope::with_variables(std::iter::once("t").chain(theta.iter().map(String::as_str)))
                .map_err(scope_error)?;
        for (name, value) in parameters {
            scope.add_parameter(name, *value).map_err(scope_error)?;
        }
        for (name, text) in &self.definitions {
            scope.add_definition(name, text).map_err(scope_error)?;
        }
        let compile = |key: String, text: &str| {
            Expr::compile(text, &scope).map_err(|e| self.expression_error(key, text, e))
        };
        let mut forces = Vec::with_capacity(self.forces.len());
        for (name, text) in &self.forces {
            let i = self
                .coordinates
                .iter()
                .position(|c| c == name)
                .expect("forces name coordinates (checked when read)");
            forces.push((i, compile(format!("forces.{name}"), text)?));
        }
        let mut drives = Vec::with_capacity(self.drives.len());
        for (r, text) in self.drives.iter().enumerate() {
            drives.push(compile(format!("model.drives[{r}]"), text)?);
        }
        Ok((forces, drives))
    }

    /// The scope of the coordinates and the variables `second` (velocities,
    /// momenta or none), with the parameter values `parameters` and the
    /// definitions.
    fn scope_over(
        &self,
        parameters: &[(String, f64)],
        second: &[String],
    ) -> Result<Scope, ModelFileError> {
        let scope_error =
            |e: ScopeError| self.error("model.coordinates".into(), ModelFileErrorKind::Scope(e));
        let mut scope =
            Scope::with_variables(self.coordinates.iter().chain(second)).map_err(scope_error)?;
        for (name, value) in parameters {
            scope.add_parameter(name, *value).map_err(scope_error)?;
        }
        for (name, text) in &self.definitions {
            scope.add_definition(name, text).map_err(scope_error)?;
        }
        Ok(scope)
    }
}

/// The model's own expressions compiled ([`ModelFile::compile_model_expressions`]),
/// with the position and position–velocity scopes they were compiled in.
pub(crate) struct ModelExpressions {
    pub(crate) lagrangian: Expr,
    pub(crate) constraints: Vec<Vec<Expr>>,
    pub(crate) boundaries: Vec<Expr>,
    pub(crate) hamiltonian: Option<Expr>,
    pub(crate) q_scope: Scope,
    pub(crate) qv_scope: Scope,
}

impl ModelFile {
    /// `L`, the rows of `A`, the walls and `H` compiled in the scopes
    /// `scope(extra)` builds over the coordinates and `extra` (the
    /// velocities for `L`, the momenta for `H`, nothing for `A` and the
    /// walls): shared by [`compile`](Self::compile) (parameters as
    /// constants) and [`compile_parametric`](Self::compile_parametric)
    /// (parameters as variables). A constraint row of the wrong length is
    /// an error.
    pub(crate) fn compile_model_expressions(
        &self,
        scope: impl Fn(&[String]) -> Result<Scope, ModelFileError>,
    ) -> Result<ModelExpressions, ModelFileError> {
        let n = self.n();
        let q_scope = scope(&[])?;
        let qv_scope = scope(&self.velocity_names())?;
        let compile = |key: String, text: &str, scope: &Scope| {
            Expr::compile(text, scope).map_err(|e| self.expression_error(key, text, e))
        };
        let lagrangian = compile("model.lagrangian".into(), &self.lagrangian, &qv_scope)?;
        let mut constraints = Vec::with_capacity(self.constraints.len());
        for (i, row) in self.constraints.iter().enumerate() {
            if row.len() != n {
                return Err(self.error(
                    format!("model.constraints[{i}]"),
                    ModelFileErrorKind::WrongLength {
                        expected: n,
                        found: row.len(),
                    },
                ));
            }
            let mut exprs = Vec::with_capacity(n);
            for (j, text) in row.iter().enumerate() {
                exprs.push(compile(
                    format!("model.constraints[{i}][{j}]"),
                    text,
                    &q_scope,
                )?);
            }
            constraints.push(exprs);
        }
        let mut boundaries = Vec::with_capacity(self.boundaries.len());
        for (j, text) in self.boundaries.iter().enumerate() {
            boundaries.push(compile(format!("model.boundaries[{j}]"), text, &q_scope)?);
        }
        let hamiltonian = match &self.hamiltonian {
            Some(text) => {
                let qp_scope = scope(&self.momentum_names())?;
                Some(compile("model.hamiltonian".into(), text, &qp_scope)?)
            }
            None => None,
        };
        Ok(ModelExpressions {
            lagrangian,
            constraints,
            boundaries,
            hamiltonian,
            q_scope,
            qv_scope,
        })
    }
}

/// The Lagrangian's terms over coordinate stencils (docs/theory.md §11.4),
/// when declaring them pays: more than
/// [`TERMWISE_ABOVE`](diracvi_geometry::dynamic::TERMWISE_ABOVE)
/// coordinates and blocks covering at most half of `n²`.
fn lagrangian_terms(source: &str, scope: &Scope, n: usize) -> Option<(LagrangianTerms, Vec<Expr>)> {
    if n <= diracvi_geometry::dynamic::TERMWISE_ABOVE {
        return None;
    }
    let split = Expr::split_terms(source, scope, n).ok()?;
    if split.stencils.len() < 2 || 2 * split.block_entries() > n * n {
        return None;
    }
    let terms = LagrangianTerms::new(n, split.stencils).ok()?;
    Some((terms, split.exprs))
}

/// The constraint rows on their stencils (docs/theory.md §11.4), when
/// declaring them pays: more than
/// [`TERMWISE_ABOVE`](diracvi_geometry::dynamic::TERMWISE_ABOVE)
/// coordinates and stencils covering at most half of the `m × n` entries.
fn row_stencils(
    constraints: &[Vec<String>],
    scope: &Scope,
    n: usize,
) -> Option<(LagrangianTerms, Vec<Vec<Expr>>)> {
    if n <= diracvi_geometry::dynamic::TERMWISE_ABOVE || constraints.is_empty() {
        return None;
    }
    let mut stencils = Vec::with_capacity(constraints.len());
    let mut exprs = Vec::with_capacity(constraints.len());
    for row in constraints {
        let split = Expr::compile_row(row, scope).ok()?;
        stencils.push(split.stencil);
        exprs.push(split.exprs);
    }
    let entries: usize = stencils.iter().map(Vec::len).sum();
    if 2 * entries > constraints.len() * n {
        return None;
    }
    let rows = LagrangianTerms::new(n, stencils).ok()?;
    Some((rows, exprs))
}

/// A model with every expression compiled: `n` coordinates, `m` constraint
/// rows, the boundary pieces and an optional Hamiltonian, evaluated
/// generically over [`AdScalar`] without allocating.
#[derive(Clone, Debug)]
pub struct CompiledModel {
    name: String,
    coordinates: Vec<String>,
    parameters: Vec<(String, f64)>,
    lagrangian: Expr,
    /// `L` as a sum of terms over coordinate stencils, when that pays.
    terms: Option<(LagrangianTerms, Vec<Expr>)>,
    constraints: Vec<Vec<Expr>>,
    /// The rows of `A` on their stencils, when that pays.
    rows: Option<(LagrangianTerms, Vec<Vec<Expr>>)>,
    boundaries: Vec<Expr>,
    hamiltonian: Option<Expr>,
    drawing: Option<CompiledDrawing>,
    /// `[invariants]` over slots `[q.., v..]`.
    invariants: Vec<(String, Expr)>,
    /// `[forces]`: (coordinate, `F(t)` over the slot `[t]`).
    forces: Vec<(usize, Expr)>,
    /// `model.drives`: `g_r(t)` over the slot `[t]`, one per row, or none.
    drives: Vec<Expr>,
}

impl CompiledModel {
    /// The names of the file's `[invariants]`, in file order.
    pub fn invariant_names(&self) -> impl Iterator<Item = &str> {
        self.invariants.iter().map(|(n, _)| n.as_str())
    }

    /// Number of `[invariants]`.
    pub fn invariant_count(&self) -> usize {
        self.invariants.len()
    }

    /// Invariant `i` at `(q, v)`.
    ///
    /// # Panics
    /// If `i` is not below [`invariant_count`](Self::invariant_count) or
    /// `q`, `v` do not have `n` entries.
    #[inline]
    #[track_caller]
    pub fn invariant<S: AdScalar>(&self, i: usize, q: &[S], v: &[S]) -> S {
        assert_eq!(q.len(), self.n(), "q must have n entries");
        self.invariants[i].1.eval_split(q, v)
    }

    /// The file's `[drawing]`, compiled over slots `[q..]` (walls are
    /// constants), if the file has one.
    pub fn drawing(&self) -> Option<&CompiledDrawing> {
        self.drawing.as_ref()
    }

    /// The model's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of coordinates.
    pub fn n(&self) -> usize {
        self.coordinates.len()
    }

    /// Number of constraint rows.
    pub fn m(&self) -> usize {
        self.constraints.len()
    }

    /// Number of boundary pieces `g_j`.
    pub fn boundary_count(&self) -> usize {
        self.boundaries.len()
    }

    /// Coordinate names.
    pub fn coordinates(&self) -> &[String] {
        &self.coordinates
    }

    /// The parameter values used (file values with overrides applied), in
    /// file order.
    pub fn parameters(&self) -> &[(String, f64)] {
        &self.parameters
    }

    /// The value of one parameter.
    pub fn parameter(&self, name: &str) -> Option<f64> {
        self.parameters
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, v)| v)
    }

    /// `L` over slots `[q.., v..]`.
    pub fn lagrangian_expr(&self) -> &Expr {
        &self.lagrangian
    }

    /// `A(q)` as `m` rows of `n` expressions over slots `[q..]`; use
    /// [`Expr::constant_value`] to skip constant entries.
    pub fn constraint_exprs(&self) -> &[Vec<Expr>] {
        &self.constraints
    }

    /// The pieces `g_j` over slots `[q..]`.
    pub fn boundary_exprs(&self) -> &[Expr] {
        &self.boundaries
    }

    /// `H` over slots `[q.., p..]`, if the file gives one.
    pub fn hamiltonian_expr(&self) -> Option<&Expr> {
        self.hamiltonian.as_ref()
    }

    /// `L(q, v)` (without the forces: see
    /// [`lagrangian_at`](Self::lagrangian_at)).
    ///
    /// # Panics
    /// If `q` or `v` does not have `n` entries.
    #[inline]
    #[track_caller]
    pub fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        assert_eq!(q.len(), self.n(), "q must have n entries");
        self.lagrangian.eval_split(q, v)
    }

    /// Whether the file gives forces or drives (its `L` or its constraints
    /// depend on time).
    pub fn time_dependent(&self) -> bool {
        !self.forces.is_empty() || !self.drives.is_empty()
    }

    /// `L(q, v) + Σ_i F_i(t) q_i`.
    ///
    /// # Panics
    /// As [`lagrangian`](Self::lagrangian).
    #[inline]
    #[track_caller]
    pub fn lagrangian_at<S: AdScalar>(&self, q: &[S], v: &[S], t: f64) -> S {
        let l = self.lagrangian(q, v);
        self.forces
            .iter()
            .fold(l, |acc, (i, f)| acc + q[*i] * f.eval(&[t]))
    }

    /// The generalized forces `F_i(t)` of `[forces]`, summed per coordinate,
    /// into `out` (`n` entries, zero on coordinates without a force);
    /// `false`, with `out` untouched, for a file without forces.
    ///
    /// # Panics
    /// When `out` has fewer than `n` entries.
    pub fn force_values(&self, t: f64, out: &mut [f64]) -> bool {
        if self.forces.is_empty() {
            return false;
        }
        out[..self.n()].fill(0.0);
        for (i, f) in &self.forces {
            out[*i] += f.eval(&[t]);
        }
        true
    }

    /// Whether constraint row `r` has a drive `g_r(t)` (`model.drives`,
    /// a row other than `"0"`).
    pub fn row_driven(&self, r: usize) -> bool {
        self.drives
            .get(r)
            .is_some_and(|e| e.constant_value() != Some(0.0))
    }

    /// `g(t)` and `ġ(t)` of the drives into `g`, `rate` (`m` entries);
    /// `false` without drives.
    pub fn constraint_drive(&self, t: f64, g: &mut [f64], rate: &mut [f64]) -> bool {
        if self.drives.is_empty() {
            return false;
        }
        for (r, e) in self.drives.iter().enumerate() {
            let (value, gradient) = e.eval_gradient(&[t]);
            g[r] = value;
            rate[r] = gradient[0];
        }
        true
    }

    /// The stencils of `L`'s terms, when the Lagrangian is evaluated term
    /// by term (more than 8 coordinates and a sparse coupling;
    /// docs/theory.md §11.4).
    pub fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        self.terms.as_ref().map(|(t, _)| t)
    }

    /// Term `e` of `L` at the values of its stencil's coordinates.
    ///
    /// # Panics
    /// Without terms, for `e` out of range, or when `q`, `v` do not have
    /// the stencil's length.
    #[inline]
    #[track_caller]
    pub fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        let (_, exprs) = self.terms.as_ref().expect("the Lagrangian has terms");
        exprs[e].eval_split(q, v)
    }

    /// Term `e` with the forces whose coordinate's first term it is
    /// (`F_i(t) q_i` joins the first term whose stencil holds `i`).
    ///
    /// # Panics
    /// As [`lagrangian_term`](Self::lagrangian_term).
    #[inline]
    #[track_caller]
    pub fn lagrangian_term_at<S: AdScalar>(&self, e: usize, q: &[S], v: &[S], t: f64) -> S {
        let l = self.lagrangian_term(e, q, v);
        if self.forces.is_empty() {
            return l;
        }
        let (terms, _) = self.terms.as_ref().expect("the Lagrangian has terms");
        let stencil = terms.stencil(e);
        self.forces.iter().fold(l, |acc, (i, f)| {
            let home = (0..e).all(|earlier| !terms.stencil(earlier).contains(i));
            match stencil.iter().position(|c| c == i) {
                Some(k) if home => acc + q[k] * f.eval(&[t]),
                _ => acc,
            }
        })
    }

    /// The stencils of the rows of `A`, when they are evaluated on them
    /// (more than 8 coordinates and sparse rows; docs/theory.md §11.4).
    pub fn row_stencils(&self) -> Option<&LagrangianTerms> {
        self.rows.as_ref().map(|(r, _)| r)
    }

    /// Row `r` of `A` on its stencil: `a[k]` is the entry at column
    /// `S_r[k]`, `q` the values of the stencil's coordinates.
    ///
    /// # Panics
    /// Without row stencils, for `r` out of range, or when `q`, `a` do not
    /// have the stencil's length.
    #[inline]
    #[track_caller]
    pub fn constraint_row<S: AdScalar>(&self, r: usize, q: &[S], a: &mut [S]) {
        let (_, exprs) = self.rows.as_ref().expect("the rows have stencils");
        for (x, e) in a.iter_mut().zip(exprs[r].iter()) {
            *x = e.eval(q);
        }
    }

    /// `A(q)[row][col]`.
    ///
    /// # Panics
    /// If `row ≥ m`, `col ≥ n` or `q` does not have `n` entries.
    #[inline]
    #[track_caller]
    pub fn constraint<S: AdScalar>(&self, row: usize, col: usize, q: &[S]) -> S {
        self.constraints[row][col].eval(q)
    }

    /// `g_j(q)` (admissible where `≥ 0`).
    ///
    /// # Panics
    /// If `j` is not below [`boundary_count`](Self::boundary_count) or `q`
    /// does not have `n` entries.
    #[inline]
    #[track_caller]
    pub fn boundary<S: AdScalar>(&self, j: usize, q: &[S]) -> S {
        self.boundaries[j].eval(q)
    }

    /// `H(q, p)`, or `None` when the file gives no Hamiltonian.
    ///
    /// # Panics
    /// If `q` or `p` does not have `n` entries.
    #[inline]
    #[track_caller]
    pub fn hamiltonian<S: AdScalar>(&self, q: &[S], p: &[S]) -> Option<S> {
        let h = self.hamiltonian.as_ref()?;
        assert_eq!(q.len(), self.n(), "q must have n entries");
        Some(h.eval_split(q, p))
    }
}
