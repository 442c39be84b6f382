//! Scenarios: a model name plus everything a run needs, as data.
//!
//! A scenario file is TOML; only `model` is required, everything else falls
//! back to the model's defaults (docs/theory.md §5), computed with the file's
//! parameters:
//!
//! ```toml
//! model = "disk-table"
//! h = 0.005                   # s
//! t_end = 20.0                # s
//! discretization = "midpoint" # forward | midpoint
//! constraint = "midpoint"     # retraction | midpoint | model
//!
//! [parameters]                # model parameters, SI units
//! a = 4.0
//!
//! [initial]                   # continuous initial data q(0), v(0)
//! q = [1.0, 0.5, 0.0, 0.4]
//! ```
//!
//! [`Scenario::to_toml`] writes every field (with comments giving units and
//! meanings) and parses back to an equal scenario.

use crate::{
    ConstraintDiscretization, Discretization, Model, ModelError, ModelTypeVisitor, ModelVisitor,
    NamedSystem, ParameterInfo, ParameterKind, RunSetup, check_initial, dispatch_type,
};
mod circuit;
mod file;
mod scene;
pub(crate) use file::dyn_model as file_dyn_model;

pub use circuit::{CircuitSource, LADDER, LADDER_DESCRIPTION};
pub use scene::{PlaneWalls, Scene};

use diracvi_expr::ModelFile;
use nalgebra::SVector;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use toml::{Table, Value};

/// Top-level keys of a scenario file.
const TOP_KEYS: [&str; 8] = [
    "model",
    "h",
    "tol",
    "t_end",
    "discretization",
    "constraint",
    "parameters",
    "initial",
];

/// Keys [`Scenario::set`] accepts besides the model's parameters.
const RUN_KEYS: [&str; 7] = [
    "h",
    "tol",
    "t_end",
    "discretization",
    "constraint",
    "q",
    "v",
];

/// Continuous initial data `q(0)`, `v(0)` (the model's coordinates, in order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitialData {
    /// Initial configuration `q(0)`.
    pub q: Vec<f64>,
    /// Initial velocity `v(0) = q̇(0)`.
    pub v: Vec<f64>,
}

/// A model with its parameters, step, end time, discretization and initial
/// data — everything a run needs, as plain data.
///
/// Equal scenarios run identically: equality compares every field, and of
/// two model files only the system they describe
/// ([`ModelFile::same_system`]; their values are the scenario's fields), so
/// a file scenario printed with [`to_toml`](Self::to_toml) and read back
/// is equal to the original.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scenario {
    /// Registry name of the model.
    pub model: String,
    /// Time step (s), `> 0`.
    pub h: f64,
    /// End time (s), `≥ 0`; runs start at `t = 0`.
    pub t_end: f64,
    /// Accuracy on request (`tol = …` in a scenario file, exclusive with
    /// `h`; `--tol` on the command line): the runner chooses the order and
    /// the step for an error of about `tol` in the final state and impact
    /// times (docs/theory.md §13), and `h` only seeds its pilot runs.
    /// `None`: run with `h`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tol: Option<f64>,
    /// Discretization map of the discrete Lagrangian.
    pub discretization: Discretization,
    /// Discrete constraint (irrelevant for unconstrained models).
    pub constraint: ConstraintDiscretization,
    /// Model parameters by name (every parameter with a value; an optional
    /// parameter left to its derived value is absent).
    pub parameters: Table,
    /// Continuous initial data.
    pub initial: InitialData,
    /// The model file, when the model was read from one
    /// ([`from_model_file`](Self::from_model_file)); `None` for the
    /// catalogue. Serde skips it: [`to_toml`](Self::to_toml) is the complete
    /// form of a file scenario.
    #[serde(skip)]
    pub file: Option<Arc<ModelFile>>,
    /// The circuit, for a netlist or `lc-ladder` scenario
    /// ([`from_netlist`](Self::from_netlist)); `None` otherwise.
    #[serde(skip)]
    pub circuit: Option<Arc<CircuitSource>>,
    /// The system file the model was assembled from
    /// ([`from_system`](Self::from_system)): its parts and ports, for the
    /// energy accounting of runs (docs/systems.md). `None` otherwise; a
    /// system scenario printed with [`to_toml`](Self::to_toml) reads back
    /// as the assembled model file alone.
    #[serde(skip)]
    pub system: Option<Arc<diracvi_system::System>>,
}

impl PartialEq for Scenario {
    fn eq(&self, other: &Self) -> bool {
        let same_file = match (&self.file, &other.file) {
            (None, None) => true,
            (Some(a), Some(b)) => a.same_system(b),
            _ => false,
        };
        same_file
            && self.circuit == other.circuit
            && self.system.is_some() == other.system.is_some()
            && self.model == other.model
            && self.h.to_bits() == other.h.to_bits()
            && self.t_end.to_bits() == other.t_end.to_bits()
            && self.tol.map(f64::to_bits) == other.tol.map(f64::to_bits)
            && self.discretization == other.discretization
            && self.constraint == other.constraint
            && self.parameters == other.parameters
            && self.initial == other.initial
    }
}

impl Scenario {
    /// The paper's defaults for `model` (docs/theory.md §5), as data.
    ///
    /// # Errors
    /// [`ModelError::UnknownModel`] listing the valid names.
    pub fn defaults(model: &str) -> Result<Scenario, ModelError> {
        Self::from_document(model, &Table::new())
    }

    /// Read a scenario from TOML. Only `model` is required; missing fields
    /// take the model's defaults computed with the given parameters.
    /// Integers are accepted where numbers are expected.
    ///
    /// A model file (a document with a `[model]` table, as
    /// [`to_toml`](Self::to_toml) prints a file scenario) is read as by
    /// [`from_model_file`](Self::from_model_file).
    ///
    /// # Errors
    /// [`ModelError::Scenario`] for TOML syntax errors, a missing `model`,
    /// unknown top-level keys or misshapen tables;
    /// [`ModelError::UnknownModel`], [`ModelError::UnknownParameter`],
    /// [`ModelError::IllTypedParameter`], [`ModelError::InvalidParameter`],
    /// [`ModelError::WrongLength`], [`ModelError::InvalidStep`],
    /// [`ModelError::InvalidEndTime`].
    pub fn from_toml(s: &str) -> Result<Scenario, ModelError> {
        let doc: Table = s
            .parse()
            .map_err(|e: toml::de::Error| ModelError::Scenario(e.to_string().trim().to_string()))?;
        if doc.contains_key("netlist") {
            let model = match doc.get("model") {
                Some(Value::String(name)) => name.clone(),
                _ => "netlist".to_string(),
            };
            return circuit::netlist_document(&doc, &model);
        }
        let model = match doc.get("model") {
            Some(Value::String(name)) => name.clone(),
            Some(Value::Table(_)) => {
                return Self::from_model(ModelFile::from_toml_str(s, "<scenario>")?);
            }
            Some(other) => {
                return Err(ModelError::IllTypedParameter {
                    key: "model".into(),
                    value: other.to_string(),
                    expected: "a model name (string)".into(),
                });
            }
            None => {
                return Err(ModelError::Scenario(
                    "missing required key 'model'".to_string(),
                ));
            }
        };
        Self::from_document(&model, &doc)
    }

    /// Write the scenario as commented TOML (what `diracvi show` prints). It
    /// parses back with [`from_toml`](Self::from_toml) to an equal scenario.
    pub fn to_toml(&self) -> String {
        if let Some(c) = &self.circuit {
            return circuit::to_toml(self, c);
        }
        if let Some(file) = &self.file {
            return file::to_model_file(self, file).to_toml_string();
        }
        struct Show<'a>(&'a Scenario);
        impl ModelTypeVisitor for Show<'_> {
            type Output = String;
            fn visit<const N: usize, const M: usize, Mo: Model<N, M>>(self) -> String {
                write_toml::<N, M, Mo>(self.0)
            }
        }
        dispatch_type(&self.model, Show(self)).unwrap_or_else(|_| {
            toml::to_string(self)
                .unwrap_or_else(|e| format!("# cannot write scenario as TOML: {e}\n"))
        })
    }

    /// Override one key (the CLI's `--set key=value`).
    ///
    /// `key` is a model parameter (parsed as its [`ParameterKind`]: a number,
    /// or `none` for an optional one), or `h`, `t_end`, `discretization`,
    /// `constraint`, `q`, `v` (comma-separated lists, brackets optional).
    ///
    /// Changing a parameter while the initial data are still the model's
    /// defaults recomputes them for the new parameters (e.g. the disks'
    /// `v_x, v_y` follow `R`); initial data set explicitly are kept.
    /// On error the scenario is unchanged.
    ///
    /// # Errors
    /// [`ModelError::UnknownParameter`] listing the valid keys,
    /// [`ModelError::IllTypedParameter`] for an unreadable value,
    /// [`ModelError::InvalidParameter`] for a value the model rejects,
    /// [`ModelError::WrongLength`], [`ModelError::InvalidStep`],
    /// [`ModelError::InvalidEndTime`], [`ModelError::UnknownModel`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ModelError> {
        match key.trim() {
            "tol" => {
                self.tol = Some(check_tolerance(parse_number("tol", value.trim())?)?);
                return Ok(());
            }
            "h" => {
                let tol = self.tol.take();
                let result = self.set_key(key, value);
                if result.is_err() {
                    self.tol = tol;
                }
                return result;
            }
            _ => {}
        }
        self.set_key(key, value)
    }

    /// [`set`](Self::set) of every key but `tol`.
    fn set_key(&mut self, key: &str, value: &str) -> Result<(), ModelError> {
        if let Some(c) = &self.circuit {
            *self = circuit::set_key(self, c, key.trim(), value)?;
            return Ok(());
        }
        if let Some(file) = &self.file {
            let updated = file::set_key(self, file, key.trim(), value)?;
            *self = updated;
            return Ok(());
        }
        struct Set<'a> {
            scenario: &'a Scenario,
            key: &'a str,
            value: &'a str,
        }
        impl ModelTypeVisitor for Set<'_> {
            type Output = Result<Scenario, ModelError>;
            fn visit<const N: usize, const M: usize, Mo: Model<N, M>>(self) -> Self::Output {
                set_key::<N, M, Mo>(self.scenario, self.key, self.value)
            }
        }
        let updated = dispatch_type(
            &self.model,
            Set {
                scenario: self,
                key: key.trim(),
                value,
            },
        )??;
        *self = updated;
        Ok(())
    }

    /// Every key [`set`](Self::set) accepts for `model`: its parameters, then
    /// `h`, `tol`, `t_end`, `discretization`, `constraint`, `q`, `v`.
    ///
    /// # Errors
    /// [`ModelError::UnknownModel`].
    pub fn settable_keys(model: &str) -> Result<Vec<String>, ModelError> {
        if model == LADDER {
            return Ok(circuit::keys(&CircuitSource::Ladder));
        }
        Ok(crate::parameters(model)?
            .iter()
            .map(|p| p.name)
            .chain(RUN_KEYS)
            .map(String::from)
            .collect())
    }

    /// Every key [`set`](Self::set) accepts for this scenario's model
    /// (catalogued or read from a file): its parameters, then `h`, `tol`,
    /// `t_end`, `discretization`, `constraint`, `q`, `v` (a circuit: its
    /// parameters, `h`, `tol`, `t_end`, `discretization`).
    pub fn keys(&self) -> Vec<String> {
        if let Some(c) = &self.circuit {
            return circuit::keys(c);
        }
        match &self.file {
            Some(file) => file::keys(file),
            None => Self::settable_keys(&self.model).unwrap_or_default(),
        }
    }

    /// The velocities `<coord>_dot` of a model-file scenario that were
    /// solved from `A(q0) v0 = 0` (marked `"solve"` in the file's
    /// `initial.v`, solved again at a `q` set with `q=…`); empty for other
    /// scenarios, and once `v` was set (`v=…`) to other values.
    pub fn solved_velocities(&self) -> Vec<String> {
        match &self.file {
            Some(file) => file::solved_velocities(self, file),
            None => Vec::new(),
        }
    }

    /// Read a model file (docs/model-files.md): the model, its parameters,
    /// and its `[run]` and `[initial]` sections as the scenario's values.
    /// Missing run settings default to `h = 1e-3`, `t_end = 1`, `midpoint`
    /// discretization and constraint; missing initial data to zeros.
    ///
    /// # Errors
    /// [`ModelError::ModelFile`] naming the file, key, line and column (I/O,
    /// TOML syntax, schema, names, lengths, expressions).
    pub fn from_model_file(path: impl AsRef<Path>) -> Result<Scenario, ModelError> {
        Self::from_model(ModelFile::from_path(path)?)
    }

    /// A scenario for a model file already read (see
    /// [`from_model_file`](Self::from_model_file)).
    ///
    /// # Errors
    /// As [`from_model_file`](Self::from_model_file).
    pub fn from_model(file: ModelFile) -> Result<Scenario, ModelError> {
        file::scenario(file)
    }

    /// The scenario of a system file (parts joined through ports,
    /// docs/systems.md): the assembled model file with its `[run]` and
    /// `[initial]` as the defaults, keeping the system so that runs account
    /// the energy of its parts and the work of its ports.
    ///
    /// # Errors
    /// As [`from_model_file`](Self::from_model_file), for the assembled
    /// model.
    pub fn from_system(system: diracvi_system::System) -> Result<Scenario, ModelError> {
        let mut scenario = Self::from_model(system.model().clone())?;
        scenario.system = Some(Arc::new(system));
        Ok(scenario)
    }

    /// Build the model from the parameters (validated), check the initial
    /// data (lengths, finiteness, admissibility, constraints), `h > 0` and
    /// `t_end ≥ 0` (finite), then call `visitor` with the concrete model and
    /// its [`RunSetup`] (compile-time sizes): a catalogued model, or a model
    /// file of one of the sizes of [`FAST_FILE_SIZES`](crate::FAST_FILE_SIZES)
    /// as a [`SizedFileModel`](crate::SizedFileModel).
    ///
    /// Every scenario, of any size, runs on the run-time-sized core through
    /// [`visit_dyn`](Self::visit_dyn); [`fits_compile_time_core`](Self::fits_compile_time_core)
    /// says whether this faster path exists.
    ///
    /// # Errors
    /// [`ModelError::UnknownModel`], parameter errors,
    /// [`ModelError::WrongLength`], [`ModelError::InvalidStep`],
    /// [`ModelError::InvalidEndTime`], [`ModelError::NonFiniteInitial`],
    /// [`ModelError::InitialInadmissible`],
    /// [`ModelError::InitialViolatesConstraint`],
    /// [`ModelError::NoModelConstraint`]; [`ModelError::Scenario`] for a
    /// model file of another size.
    pub fn visit<V: ModelVisitor>(&self, visitor: V) -> Result<V::Output, ModelError> {
        self.not_a_circuit()?;
        if let Some(file) = &self.file {
            return file::visit(self, file, visitor)?.ok_or_else(|| {
                ModelError::Scenario(format!(
                    "model file '{}' ({} coordinates, {} constraint rows{}) runs on the run-time-sized core only (Scenario::visit_dyn)",
                    self.model,
                    file.n(),
                    file.constraints.len(),
                    if file.forces.is_empty() && file.drives.is_empty() {
                        ""
                    } else {
                        ", forces or drives"
                    }
                ))
            });
        }
        self.visit_catalogue(visitor)
    }

    /// Whether [`visit`](Self::visit) can run this scenario on the
    /// compile-time-sized core: a catalogued model registered there
    /// ([`runs_on_compile_time_core`](crate::runs_on_compile_time_core)),
    /// or a model file of one of the sizes of
    /// [`FAST_FILE_SIZES`](crate::FAST_FILE_SIZES) without forces or
    /// drives.
    pub fn fits_compile_time_core(&self) -> bool {
        if self.circuit.is_some() {
            return false;
        }
        match &self.file {
            None => crate::runs_on_compile_time_core(&self.model),
            Some(file) => {
                // The compile-time core is autonomous (docs/theory.md §8.8).
                file.forces.is_empty()
                    && file.drives.is_empty()
                    && crate::FAST_FILE_SIZES.contains(&(file.n(), file.constraints.len()))
            }
        }
    }

    /// Whether the scenario's Lagrangian or constraints depend on time: a
    /// model file with `[forces]` or `model.drives` (docs/theory.md §8.8).
    /// Circuits with sources are driven too, but run on their own path.
    pub fn time_dependent(&self) -> bool {
        self.file
            .as_ref()
            .is_some_and(|f| !f.forces.is_empty() || !f.drives.is_empty())
    }

    /// Whether the scenario was read from a model file (not a catalogued
    /// model, not a circuit).
    pub fn is_model_file(&self) -> bool {
        self.file.is_some()
    }

    /// [`visit`](Self::visit) for a model file of one of the sizes of
    /// [`FAST_FILE_SIZES`](crate::FAST_FILE_SIZES) only: a visitor is then
    /// instantiated for those sizes alone, not for the catalogue too.
    /// `Ok(None)` for a catalogued model, a circuit or a model file of
    /// another size.
    ///
    /// # Errors
    /// As [`visit`](Self::visit).
    pub fn visit_file<V: ModelVisitor>(&self, visitor: V) -> Result<Option<V::Output>, ModelError> {
        match &self.file {
            Some(file) if self.circuit.is_none() => file::visit(self, file, visitor),
            _ => Ok(None),
        }
    }

    /// [`visit`](Self::visit) for a catalogued model only: a visitor that
    /// runs an integrator is then instantiated for the catalogue alone, not
    /// for every size of [`FAST_FILE_SIZES`](crate::FAST_FILE_SIZES) too
    /// (minutes of compile time per program). Every catalogued model is
    /// visited, those that run on the run-time-sized core only included:
    /// runners take [`visit_compiled`](Self::visit_compiled).
    ///
    /// # Errors
    /// As [`visit`](Self::visit); [`ModelError::Scenario`] for a scenario
    /// read from a model file.
    pub fn visit_catalogue<V: ModelVisitor>(&self, visitor: V) -> Result<V::Output, ModelError> {
        dispatch_type(&self.model, self.catalogue_run(visitor)?)?
    }

    /// [`visit_catalogue`](Self::visit_catalogue) for the catalogued models
    /// registered on the compile-time-sized core only
    /// ([`runs_on_compile_time_core`](crate::runs_on_compile_time_core)):
    /// `Ok(None)` for a model that runs on the run-time-sized core only, so
    /// that a visitor that runs an integrator is not instantiated for it.
    ///
    /// # Errors
    /// As [`visit_catalogue`](Self::visit_catalogue).
    pub fn visit_compiled<V: ModelVisitor>(
        &self,
        visitor: V,
    ) -> Result<Option<V::Output>, ModelError> {
        crate::registry::dispatch_compiled_type(&self.model, self.catalogue_run(visitor)?)?
            .transpose()
    }

    /// `visitor` as a visit of the catalogued model's type (built from
    /// this scenario), checking that the scenario is one of the catalogue.
    fn catalogue_run<V: ModelVisitor>(
        &self,
        visitor: V,
    ) -> Result<CatalogueRun<'_, V>, ModelError> {
        self.not_a_circuit()?;
        if self.file.is_some() {
            return Err(ModelError::Scenario(format!(
                "'{}' is read from a model file: use Scenario::visit or Scenario::visit_dyn",
                self.model
            )));
        }
        Ok(CatalogueRun {
            scenario: self,
            visitor,
        })
    }

    /// Build the model — a [`FileModel`](crate::FileModel) of any size for a
    /// scenario read from a model file, the catalogued model wrapped in
    /// [`Fixed`](diracvi_geometry::dynamic::Fixed) otherwise — check the
    /// scenario as [`visit`](Self::visit) does, and call `visitor` with the
    /// model and its [`DynRunSetup`](crate::DynRunSetup): the run-time-sized
    /// core (docs/theory.md §11).
    ///
    /// # Errors
    /// As [`visit`](Self::visit) (model files: the file's compile errors).
    pub fn visit_dyn<V: crate::DynModelVisitor>(
        &self,
        visitor: V,
    ) -> Result<V::Output, ModelError> {
        let mut visitor = Some(visitor);
        let mut output = None;
        self.with_dyn_model(&mut |model, setup| {
            if let Some(visitor) = visitor.take() {
                output = Some(visitor.visit(model, setup));
            }
        })?;
        output.ok_or_else(|| {
            ModelError::Scenario(format!("'{}': no model was built to visit", self.model))
        })
    }

    /// [`visit_dyn`](Self::visit_dyn) without its generic visitor: every
    /// model reaches `f` as the one type [`DynModel`](crate::DynModel), and
    /// this function — the only place a model's own functions are
    /// instantiated for the run-time core — is compiled once, here.
    fn with_dyn_model(&self, f: &mut DynModelFn<'_>) -> Result<(), ModelError> {
        self.not_a_circuit()?;
        if let Some(file) = &self.file {
            return file::with_dyn_model(self, file, f);
        }
        struct Run<'a, 'f> {
            scenario: &'a Scenario,
            f: &'f mut DynModelFn<'f>,
        }
        impl ModelTypeVisitor for Run<'_, '_> {
            type Output = Result<(), ModelError>;
            fn visit<const N: usize, const M: usize, Mo: Model<N, M>>(self) -> Self::Output {
                let (model, setup) = build::<N, M, Mo>(self.scenario)?;
                let setup = crate::DynRunSetup {
                    q0: nalgebra::DVector::from_column_slice(setup.q0.as_slice()),
                    v0: nalgebra::DVector::from_column_slice(setup.v0.as_slice()),
                    h: setup.h,
                    t_end: setup.t_end,
                    discretization: setup.discretization,
                    constraint: setup.constraint,
                };
                let model = diracvi_geometry::dynamic::Fixed::<Mo, N, M>(model);
                (self.f)(&crate::DynModel::new(&model), &setup);
                Ok(())
            }
        }
        dispatch_type(&self.model, Run { scenario: self, f })?
    }

    /// A circuit read from a SPICE-subset netlist (README "Circuits"),
    /// named `name`, with step `h` and end time `t_end` (a general circuit
    /// has no default step). The initial conditions are the netlist's
    /// `IC=` values; the discretization defaults to forward.
    ///
    /// # Errors
    /// [`ModelError::Circuit`] (with line numbers) for a malformed or
    /// unsolvable netlist; [`ModelError::InvalidStep`],
    /// [`ModelError::InvalidEndTime`].
    pub fn from_netlist(
        name: &str,
        text: &str,
        h: f64,
        t_end: f64,
    ) -> Result<Scenario, ModelError> {
        circuit::netlist_scenario(name, text, h, t_end)
    }

    /// [`from_netlist`](Self::from_netlist) for a file (at most 64 MiB of
    /// UTF-8 text), named after the file's stem.
    ///
    /// # Errors
    /// As [`from_netlist`](Self::from_netlist); [`ModelError::Circuit`] with
    /// an I/O message for a file that cannot be read.
    pub fn from_netlist_file(
        path: impl AsRef<Path>,
        h: f64,
        t_end: f64,
    ) -> Result<Scenario, ModelError> {
        use std::io::Read;
        const MAX_NETLIST_BYTES: u64 = 64 << 20;
        let path = path.as_ref();
        let shown = path.display().to_string();
        let io = |message: String| ModelError::Circuit {
            source_name: shown.clone(),
            error: diracvi_circuit::CircuitError::Malformed { line: 0, message },
        };
        let file = std::fs::File::open(path).map_err(|e| io(e.to_string()))?;
        if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
            return Err(io("it is a directory".into()));
        }
        let mut bytes = Vec::new();
        file.take(MAX_NETLIST_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| io(e.to_string()))?;
        if bytes.len() as u64 > MAX_NETLIST_BYTES {
            return Err(io(format!("larger than {MAX_NETLIST_BYTES} bytes")));
        }
        let text = String::from_utf8(bytes).map_err(|_| io("not UTF-8 text".into()))?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| shown.clone());
        circuit::netlist_scenario(&name, &text, h, t_end).map_err(|e| match e {
            ModelError::Circuit { error, .. } => ModelError::Circuit {
                source_name: shown.clone(),
                error,
            },
            other => other,
        })
    }

    /// The circuit of a netlist or `lc-ladder` scenario (built and
    /// analysed), `None` for a mechanical one.
    ///
    /// # Errors
    /// [`ModelError::Circuit`], parameter errors of the ladder,
    /// [`ModelError::InvalidStep`], [`ModelError::InvalidEndTime`].
    pub fn circuit(&self) -> Option<Result<diracvi_circuit::Circuit, ModelError>> {
        self.circuit.as_ref().map(|c| circuit::build(self, c))
    }

    /// A circuit scenario has no mechanical model to visit.
    fn not_a_circuit(&self) -> Result<(), ModelError> {
        match self.circuit {
            Some(_) => Err(ModelError::Scenario(format!(
                "'{}' is a circuit: it runs as its own DynSystem (Scenario::circuit)",
                self.model
            ))),
            None => Ok(()),
        }
    }

    /// Resolve the model name and build a scenario from a parsed document.
    fn from_document(model: &str, doc: &Table) -> Result<Scenario, ModelError> {
        if model == LADDER {
            return circuit::ladder_scenario(doc);
        }
        struct FromDoc<'a>(&'a Table);
        impl ModelTypeVisitor for FromDoc<'_> {
            type Output = Result<Scenario, ModelError>;
            fn visit<const N: usize, const M: usize, Mo: Model<N, M>>(self) -> Self::Output {
                scenario_from_document::<N, M, Mo>(self.0)
            }
        }
        dispatch_type(model, FromDoc(doc))?
    }
}

/// A [`ModelVisitor`] called with the catalogued model built from
/// `scenario` ([`Scenario::visit_catalogue`], [`Scenario::visit_compiled`]).
struct CatalogueRun<'a, V> {
    scenario: &'a Scenario,
    visitor: V,
}

impl<V: ModelVisitor> ModelTypeVisitor for CatalogueRun<'_, V> {
    type Output = Result<V::Output, ModelError>;
    fn visit<const N: usize, const M: usize, Mo: Model<N, M>>(self) -> Self::Output {
        let (model, setup) = build::<N, M, Mo>(self.scenario)?;
        Ok(self.visitor.visit(&model, &setup))
    }
}

/// Build the concrete model and its run setup, with every check of
/// [`Scenario::visit`].
pub(crate) fn build<const N: usize, const M: usize, Mo: Model<N, M>>(
    sc: &Scenario,
) -> Result<(Mo, RunSetup<N>), ModelError> {
    let model = Mo::new(params_from_table::<N, M, Mo>(&sc.parameters)?)?;
    let setup = run_setup(&model, sc)?;
    Ok((model, setup))
}

/// The run setup of `sc` for `model`, checked: lengths, `h`, `t_end`,
/// initial data ([`check_initial`]) and that a `model` constraint exists.
fn run_setup<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
    model: &Mo,
    sc: &Scenario,
) -> Result<RunSetup<N>, ModelError> {
    check_length("q", N, sc.initial.q.len())?;
    check_length("v", N, sc.initial.v.len())?;
    check_step(sc.h)?;
    check_end_time(sc.t_end)?;
    let q0 = SVector::<f64, N>::from_column_slice(&sc.initial.q);
    let v0 = SVector::<f64, N>::from_column_slice(&sc.initial.v);
    check_initial(model, &q0, &v0)?;
    if M > 0
        && sc.constraint == ConstraintDiscretization::Model
        && model.discrete_constraint(&q0, &q0, sc.h).is_none()
    {
        return Err(ModelError::NoModelConstraint {
            model: model.name().to_string(),
        });
    }
    Ok(RunSetup {
        q0,
        v0,
        h: sc.h,
        t_end: sc.t_end,
        discretization: sc.discretization,
        constraint: sc.constraint,
    })
}

fn scenario_from_document<const N: usize, const M: usize, Mo: Model<N, M>>(
    doc: &Table,
) -> Result<Scenario, ModelError> {
    if let Some(key) = doc.keys().find(|k| !TOP_KEYS.contains(&k.as_str())) {
        return Err(ModelError::Scenario(format!(
            "unknown key '{key}' (valid top-level keys: {})",
            TOP_KEYS.join(", ")
        )));
    }
    let empty = Table::new();
    let parameters = sub_table(doc, "parameters")?.unwrap_or(&empty);
    let params = params_from_table::<N, M, Mo>(parameters)?;
    let model = Mo::new(params.clone())?;
    let defaults = model.run_defaults();

    let h = doc
        .get("h")
        .map(|v| number("h", v))
        .transpose()?
        .unwrap_or(defaults.h);
    check_step(h)?;
    let tol = doc
        .get("tol")
        .map(|v| number("tol", v).and_then(check_tolerance))
        .transpose()?;
    if tol.is_some() && doc.contains_key("h") {
        return Err(ModelError::Scenario(
            "'tol' and 'h' are exclusive: give the step, or the tolerance the step is chosen for"
                .to_owned(),
        ));
    }
    let t_end = doc
        .get("t_end")
        .map(|v| number("t_end", v))
        .transpose()?
        .unwrap_or(defaults.t_end);
    check_end_time(t_end)?;
    let discretization = match doc.get("discretization") {
        None => defaults.discretization,
        Some(v) => parse_discretization(&text("discretization", v)?)?,
    };
    let constraint = match doc.get("constraint") {
        None => defaults.constraint,
        Some(v) => parse_constraint(&text("constraint", v)?)?,
    };

    let initial = sub_table(doc, "initial")?.unwrap_or(&empty);
    if let Some(key) = initial.keys().find(|k| *k != "q" && *k != "v") {
        return Err(ModelError::Scenario(format!(
            "unknown key '{key}' in [initial] (valid: q, v)"
        )));
    }
    let q = match initial.get("q") {
        Some(v) => numbers("q", v)?,
        None => defaults.q0.as_slice().to_vec(),
    };
    let v = match initial.get("v") {
        Some(v) => numbers("v", v)?,
        None => defaults.v0.as_slice().to_vec(),
    };
    check_length("q", N, q.len())?;
    check_length("v", N, v.len())?;

    Ok(Scenario {
        file: None,
        circuit: None,
        system: None,
        model: Mo::NAME.to_string(),
        h,
        t_end,
        tol,
        discretization,
        constraint,
        parameters: params_to_table(&params)?,
        initial: InitialData { q, v },
    })
}

fn set_key<const N: usize, const M: usize, Mo: Model<N, M>>(
    sc: &Scenario,
    key: &str,
    value: &str,
) -> Result<Scenario, ModelError> {
    let mut out = sc.clone();
    let raw = value.trim();
    if let Some(info) = Mo::PARAMETERS.iter().find(|p| p.name == key) {
        let mut table = sc.parameters.clone();
        match parse_parameter(info, raw)? {
            Some(v) => {
                table.insert(key.to_string(), v);
            }
            None => {
                table.remove(key);
            }
        }
        let params = params_from_table::<N, M, Mo>(&table)?;
        let new_model = Mo::new(params.clone())?;
        // Initial data, step and end time still at the old parameters'
        // defaults follow the new ones.
        let old_defaults = params_from_table::<N, M, Mo>(&sc.parameters)
            .and_then(Mo::new)
            .map(|m| m.run_defaults());
        if let Ok(old) = old_defaults {
            let new = new_model.run_defaults();
            if sc.initial.q.as_slice() == old.q0.as_slice()
                && sc.initial.v.as_slice() == old.v0.as_slice()
            {
                out.initial = InitialData {
                    q: new.q0.as_slice().to_vec(),
                    v: new.v0.as_slice().to_vec(),
                };
            }
            if sc.h.total_cmp(&old.h).is_eq() {
                out.h = new.h;
            }
            if sc.t_end.total_cmp(&old.t_end).is_eq() {
                out.t_end = new.t_end;
            }
        }
        out.parameters = params_to_table(&params)?;
        return Ok(out);
    }
    if set_run_key(&mut out, key, raw, N)? {
        return Ok(out);
    }
    Err(ModelError::UnknownParameter {
        model: Mo::NAME.to_string(),
        key: key.to_string(),
        valid: Mo::PARAMETERS
            .iter()
            .map(|p| p.name)
            .chain(RUN_KEYS)
            .map(String::from)
            .collect(),
    })
}

/// Apply one of [`RUN_KEYS`] but `tol` (which [`Scenario::set`] takes
/// itself) to `out` (`n` coordinates); `Ok(false)` when `key` is not one.
fn set_run_key(out: &mut Scenario, key: &str, raw: &str, n: usize) -> Result<bool, ModelError> {
    match key {
        "h" => {
            out.h = parse_number(key, raw)?;
            check_step(out.h)?;
        }
        "t_end" => {
            out.t_end = parse_number(key, raw)?;
            check_end_time(out.t_end)?;
        }
        "discretization" => out.discretization = parse_discretization(raw)?,
        "constraint" => out.constraint = parse_constraint(raw)?,
        "q" | "v" => {
            let list = parse_list(key, raw)?;
            let what = if key == "q" { "q" } else { "v" };
            check_length(what, n, list.len())?;
            if key == "q" {
                out.initial.q = list;
            } else {
                out.initial.v = list;
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn write_toml<const N: usize, const M: usize, Mo: Model<N, M>>(sc: &Scenario) -> String {
    let mut s = String::new();
    // `write!` into a String cannot fail.
    let _ = writeln!(s, "# diracvi scenario: {} — {}", Mo::NAME, Mo::DESCRIPTION);
    let _ = writeln!(s, "model = {}", Value::String(sc.model.clone()));
    match sc.tol {
        Some(tol) => {
            let _ = writeln!(
                s,
                "tol = {} # error of the final state and impact times; diracvi chooses order and step",
                Value::Float(tol)
            );
        }
        None => {
            let _ = writeln!(s, "h = {} # time step (s)", Value::Float(sc.h));
        }
    }
    let _ = writeln!(
        s,
        "t_end = {} # end time (s); runs start at t = 0",
        Value::Float(sc.t_end)
    );
    let _ = writeln!(
        s,
        "discretization = {} # forward | midpoint",
        Value::String(sc.discretization.to_string())
    );
    let unused = if M == 0 {
        " (unused: no constraints)"
    } else {
        ""
    };
    let _ = writeln!(
        s,
        "constraint = {} # retraction | midpoint | model{unused}",
        Value::String(sc.constraint.to_string())
    );
    let _ = writeln!(s, "\n[parameters]");
    for info in Mo::PARAMETERS {
        let note = format!("{} [{}]: {}", info.symbol, info.unit, info.description);
        match sc.parameters.get(info.name) {
            Some(v) => {
                let _ = writeln!(s, "{} = {v} # {note}", toml_key(info.name));
            }
            None => {
                let _ = writeln!(s, "# {} = none (derived) # {note}", toml_key(info.name));
            }
        }
    }
    for (key, v) in &sc.parameters {
        if !Mo::PARAMETERS.iter().any(|p| p.name == key) {
            let _ = writeln!(s, "{} = {v}", toml_key(key));
        }
    }
    let _ = writeln!(s, "\n[initial]");
    let _ = writeln!(
        s,
        "# coordinates ({}); v = dq/dt at t = 0",
        Mo::coordinate_names().join(", ")
    );
    let array = |xs: &[f64]| Value::Array(xs.iter().map(|&x| Value::Float(x)).collect());
    let _ = writeln!(s, "q = {}", array(&sc.initial.q));
    let _ = writeln!(s, "v = {}", array(&sc.initial.v));
    s
}

/// A key as TOML: bare when possible, quoted otherwise.
fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_string()
    } else {
        Value::String(key.to_string()).to_string()
    }
}

/// Check the keys and value types of a parameter table against the model's
/// [`ParameterInfo`]s (integers become floats where numbers are expected),
/// then deserialize it; missing keys take their defaults.
fn params_from_table<const N: usize, const M: usize, Mo: Model<N, M>>(
    table: &Table,
) -> Result<Mo::Params, ModelError> {
    let mut coerced = Table::new();
    for (key, value) in table {
        let Some(info) = Mo::PARAMETERS.iter().find(|p| p.name == key) else {
            return Err(ModelError::UnknownParameter {
                model: Mo::NAME.to_string(),
                key: key.clone(),
                valid: Mo::PARAMETERS.iter().map(|p| p.name.to_string()).collect(),
            });
        };
        let ok = match (info.kind, value) {
            (ParameterKind::Float | ParameterKind::OptionalFloat, Value::Integer(i)) => {
                Some(Value::Float(*i as f64))
            }
            (ParameterKind::Float | ParameterKind::OptionalFloat, Value::Float(_))
            | (ParameterKind::Integer, Value::Integer(_))
            | (ParameterKind::Bool, Value::Boolean(_))
            | (ParameterKind::Text, Value::String(_)) => Some(value.clone()),
            _ => None,
        };
        match ok {
            Some(v) => {
                coerced.insert(key.clone(), v);
            }
            None => {
                return Err(ModelError::IllTypedParameter {
                    key: key.clone(),
                    value: value.to_string(),
                    expected: info.kind.expected().to_string(),
                });
            }
        }
    }
    Value::Table(coerced)
        .try_into()
        .map_err(|e: toml::de::Error| {
            ModelError::Scenario(format!(
                "parameters of '{}': {}",
                Mo::NAME,
                e.to_string().trim()
            ))
        })
}

fn params_to_table<P: Serialize>(params: &P) -> Result<Table, ModelError> {
    Table::try_from(params)
        .map_err(|e| ModelError::Scenario(format!("cannot write parameters as TOML: {e}")))
}

/// Parse a `--set` value for a parameter; `None` means "unset" (optional
/// parameters only).
fn parse_parameter(info: &ParameterInfo, raw: &str) -> Result<Option<Value>, ModelError> {
    let ill = || ModelError::IllTypedParameter {
        key: info.name.to_string(),
        value: raw.to_string(),
        expected: info.kind.expected().to_string(),
    };
    Ok(Some(match info.kind {
        ParameterKind::OptionalFloat if raw.eq_ignore_ascii_case("none") => return Ok(None),
        ParameterKind::Float | ParameterKind::OptionalFloat => {
            Value::Float(raw.parse::<f64>().map_err(|_| ill())?)
        }
        ParameterKind::Integer => Value::Integer(raw.parse::<i64>().map_err(|_| ill())?),
        ParameterKind::Bool => Value::Boolean(raw.parse::<bool>().map_err(|_| ill())?),
        ParameterKind::Text => {
            let unquoted = raw
                .strip_prefix('"')
                .and_then(|r| r.strip_suffix('"'))
                .unwrap_or(raw);
            Value::String(unquoted.to_string())
        }
    }))
}

fn parse_number(key: &str, raw: &str) -> Result<f64, ModelError> {
    raw.parse::<f64>()
        .map_err(|_| ModelError::IllTypedParameter {
            key: key.to_string(),
            value: raw.to_string(),
            expected: "a number".into(),
        })
}

fn parse_list(key: &str, raw: &str) -> Result<Vec<f64>, ModelError> {
    let inner = raw
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(raw)
        .trim();
    if inner.is_empty() {
        return Ok(Vec::new());
    }
    inner
        .split(',')
        .map(|x| {
            x.trim()
                .parse::<f64>()
                .map_err(|_| ModelError::IllTypedParameter {
                    key: key.to_string(),
                    value: raw.to_string(),
                    expected: "a comma-separated list of numbers".into(),
                })
        })
        .collect()
}

fn parse_discretization(raw: &str) -> Result<Discretization, ModelError> {
    raw.parse().map_err(|_| ModelError::IllTypedParameter {
        key: "discretization".into(),
        value: raw.to_string(),
        expected: "'forward' or 'midpoint'".into(),
    })
}

fn parse_constraint(raw: &str) -> Result<ConstraintDiscretization, ModelError> {
    raw.parse().map_err(|_| ModelError::IllTypedParameter {
        key: "constraint".into(),
        value: raw.to_string(),
        expected: "'retraction', 'midpoint' or 'model'".into(),
    })
}

fn sub_table<'a>(doc: &'a Table, key: &str) -> Result<Option<&'a Table>, ModelError> {
    match doc.get(key) {
        None => Ok(None),
        Some(Value::Table(t)) => Ok(Some(t)),
        Some(other) => Err(ModelError::Scenario(format!(
            "'{key}' must be a table ([{key}]), got {other}"
        ))),
    }
}

fn number(key: &str, v: &Value) -> Result<f64, ModelError> {
    match v {
        Value::Float(x) => Ok(*x),
        Value::Integer(i) => Ok(*i as f64),
        other => Err(ModelError::IllTypedParameter {
            key: key.to_string(),
            value: other.to_string(),
            expected: "a number".into(),
        }),
    }
}

fn numbers(key: &str, v: &Value) -> Result<Vec<f64>, ModelError> {
    let ill = || ModelError::IllTypedParameter {
        key: key.to_string(),
        value: v.to_string(),
        expected: "an array of numbers".into(),
    };
    match v {
        Value::Array(xs) => xs
            .iter()
            .map(|x| number(key, x).map_err(|_| ill()))
            .collect(),
        _ => Err(ill()),
    }
}

fn text(key: &str, v: &Value) -> Result<String, ModelError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        other => Err(ModelError::IllTypedParameter {
            key: key.to_string(),
            value: other.to_string(),
            expected: "a string".into(),
        }),
    }
}

pub(super) fn check_length(
    what: &'static str,
    expected: usize,
    got: usize,
) -> Result<(), ModelError> {
    if expected == got {
        Ok(())
    } else {
        Err(ModelError::WrongLength {
            what,
            expected,
            got,
        })
    }
}

pub(super) fn check_step(h: f64) -> Result<(), ModelError> {
    if h.is_finite() && h > 0.0 {
        Ok(())
    } else {
        Err(ModelError::InvalidStep { h })
    }
}

/// A tolerance must be finite and positive.
pub(super) fn check_tolerance(tol: f64) -> Result<f64, ModelError> {
    if tol.is_finite() && tol > 0.0 {
        Ok(tol)
    } else {
        Err(ModelError::Scenario(format!(
            "tol must be a finite number > 0, got {tol}"
        )))
    }
}

pub(super) fn check_end_time(t_end: f64) -> Result<(), ModelError> {
    if t_end.is_finite() && t_end >= 0.0 {
        Ok(())
    } else {
        Err(ModelError::InvalidEndTime { t_end })
    }
}

/// What [`Scenario::with_dyn_model`] calls with the model and its setup.
type DynModelFn<'f> = dyn FnMut(&crate::DynModel<'_>, &crate::DynRunSetup) + 'f;
