//! Models written in Rust, run from Python.
//!
//! A model implemented in a crate of your own (a
//! [`diracvi_run::NamedDynSystem`]) reaches Python through
//! an extension module of that crate: its `#[pymodule]` hands the model, its
//! default run and the function that runs it to [`PythonModel::add_to`],
//! which adds
//!
//! - `scenario(*, h=None, t_end=None, discretization=None, constraint=None,
//!   params=None, q=None, v=None)`: the model's default run with overrides,
//!   a `RustScenario`;
//! - the class `RustScenario`: `run(...)` gives a `diracvi.RunResult` (the
//!   same result class, summary dict, impact table, `to_pandas()` and
//!   `plot()` as a catalogued model), `replace(...)` a copy with overrides,
//!   and `diracvi.ensemble(scenario, overrides, ...)` runs it in parallel on
//!   all cores into a `diracvi.EnsembleResult`.
//!
//! The summary is the one [`diracvi_run::run_system`] returns in Rust, and
//! `diracvi run` prints for a model file describing the same system, with
//! its warnings; errors are the package's `ModelError`, `StepError` and
//! `ImpactError` (bad values of the overrides raise `ValueError`, values of
//! the wrong type `TypeError`).
//!
//! ```ignore
//! use diracvi_python::own::PythonModel;
//! use pyo3::prelude::*;
//!
//! #[pymodule]
//! fn diracvi_bowl(m: &Bound<'_, PyModule>) -> PyResult<()> {
//!     let bowl = Bowl::default();
//!     PythonModel::new(bowl, bowl.default_setup(), diracvi_run::run_system::<Bowl>)
//!         .parameters(
//!             |b| vec![("m".into(), b.m), ("g".into(), b.g), ("R".into(), b.r)],
//!             |b, name, x| match name {
//!                 "m" => Ok(b.m = x),
//!                 "g" => Ok(b.g = x),
//!                 _ => Ok(b.r = x), // "R"
//!             },
//!         )
//!         .add_to(m)
//! }
//! ```
//!
//! The extension module is built with maturin like the package itself
//! (examples/own-model/python is a complete one); it needs the `diracvi`
//! package installed, whose result and error classes it returns.
//!
//! `run(tol=...)` chooses the order and step by pilot runs of the model's
//! run function, as `diracvi_run::execute_system_with_tolerance` does in
//! Rust. A `RustScenario` pickles (through its module's `scenario(...)`),
//! so ensembles of it run on Dask workers too. A model written in
//! Rust gets `diracvi.periodic_orbit` and `diracvi.continue_orbit` when
//! the module gives the search ([`PythonModel::periodic`]).

use crate::ensemble::{Keep, Kept, ensemble_dict, parse_threads, run_members, with_overrides};
use crate::errors::run_error;
use crate::periodic::{SectionArgs, periodic_error};
use crate::scenario::{RunChoice, Walls, run_result, sensitivity_names};
use diracvi_models::{ConstraintDiscretization, Discretization, Shape};
use diracvi_run::{
    DEFAULT_ENERGY_TOLERANCE, Discard, DynRunSetup, ModelSummary, NamedDynSystem, Order,
    PeriodicError, PeriodicOptions, PeriodicOrbit, RecordBuffer, RecordSink, Rerun, RunError,
    RunOutcome, RunPlan, Summary, configured_setup, continue_with, describe_system,
    execute_with_tolerance, section_among, step_count_for,
};
use nalgebra::DVector;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict, PyTuple};
use std::sync::Arc;

/// The function that runs a model: `(model, setup, plan, sink,
/// energy_tolerance) → (summary, outcome)`.
/// [`diracvi_run::run_system::<Mo>`](diracvi_run::run_system) is one; a
/// crate that already compiles it for its model (a concrete `run` of its
/// own, as examples/own-model does) passes that, so the runner is not
/// compiled again in the extension module.
pub type RunFn<Mo> = fn(
    &Mo,
    &DynRunSetup,
    RunPlan,
    &mut dyn RecordSink,
    f64,
) -> Result<(Summary, RunOutcome), RunError>;

/// The function that finds a periodic orbit of a model:
/// [`diracvi_run::periodic_orbit_system::<Mo>`](diracvi_run::periodic_orbit_system)
/// or a concrete wrapper of it.
pub type PeriodicFn<Mo> = fn(
    &Mo,
    &DynRunSetup,
    &PeriodicOptions,
    Option<(&[f64], &[f64])>,
) -> Result<PeriodicOrbit, PeriodicError>;

/// A model's named parameters: their names and values.
pub type GetParameters<Mo> = fn(&Mo) -> Vec<(String, f64)>;

/// Set one named parameter (a name among those of [`GetParameters`]);
/// `Err(reason)` for a value the model cannot take.
pub type SetParameter<Mo> = fn(&mut Mo, &str, f64) -> Result<(), String>;

/// A model written in Rust, as an extension module exposes it to Python
/// (see the [module docs](self)).
pub struct PythonModel<Mo> {
    model: Mo,
    setup: DynRunSetup,
    run: RunFn<Mo>,
    get: GetParameters<Mo>,
    set: SetParameter<Mo>,
    walls: fn(&Mo) -> Vec<Shape>,
    periodic: Option<PeriodicFn<Mo>>,
}

impl<Mo: NamedDynSystem + 'static> PythonModel<Mo> {
    /// `model` with its default run `setup` (initial data, step, end time,
    /// discretization), run by `run`; no parameters, no walls drawn.
    pub fn new(model: Mo, setup: DynRunSetup, run: RunFn<Mo>) -> Self {
        Self {
            model,
            setup,
            run,
            get: |_| Vec::new(),
            set: |_, name, _| Err(format!("no parameter '{name}'")),
            walls: |_| Vec::new(),
            periodic: None,
        }
    }

    /// The periodic-orbit search `diracvi.periodic_orbit` and
    /// `diracvi.continue_orbit` run for this model (without it they raise
    /// `ModelError`).
    pub fn periodic(mut self, periodic: PeriodicFn<Mo>) -> Self {
        self.periodic = Some(periodic);
        self
    }

    /// The model's named parameters (`params=` and ensemble overrides set
    /// them by name): `get` lists them with their values, `set` changes one
    /// (called only with a listed name).
    pub fn parameters(mut self, get: GetParameters<Mo>, set: SetParameter<Mo>) -> Self {
        self.get = get;
        self.set = set;
        self
    }

    /// The walls `RunResult.walls` and the x–y panel of `plot()` draw
    /// (for a model with coordinates named `x` and `y`).
    pub fn walls(mut self, walls: fn(&Mo) -> Vec<Shape>) -> Self {
        self.walls = walls;
        self
    }

    /// Add `scenario(...)` and the class `RustScenario` to `module`.
    ///
    /// # Errors
    /// A Python error when the module cannot take them, or when the
    /// default setup does not fit the model (`ValueError`).
    pub fn add_to(self, module: &Bound<'_, PyModule>) -> PyResult<()> {
        let py = module.py();
        let setup = self.setup.clone();
        let model: Arc<dyn ErasedModel> = Arc::new(self);
        let n = model.coordinate_count();
        check_setup(model.name(), n, &setup)?;
        let defaults = Py::new(
            py,
            RustScenario {
                model,
                setup,
                module: module.name()?.to_cow()?.into(),
            },
        )?;
        module.add_class::<RustScenario>()?;
        let scenario = PyCFunction::new_closure(
            py,
            Some(c"scenario"),
            Some(
                c"scenario(*, h=None, t_end=None, discretization=None, constraint=None, params=None, q=None, v=None)\n\nThe model's default run with overrides (a RustScenario).",
            ),
            move |args: &Bound<'_, PyTuple>, kwargs: Option<&Bound<'_, PyDict>>| {
                if !args.is_empty() {
                    return Err(PyTypeError::new_err(
                        "scenario() takes keyword arguments only",
                    ));
                }
                defaults
                    .bind(args.py())
                    .call_method("replace", (), kwargs)
                    .map(Bound::unbind)
            },
        )?;
        module.add("scenario", scenario)
    }
}

/// What the Python classes need of a model (with its parameter values),
/// whatever its type.
trait ErasedModel: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    fn coordinate_count(&self) -> usize;
    fn parameters(&self) -> Vec<(String, f64)>;
    /// The model with parameter `name` (one of [`parameters`](Self::parameters)) set to `value`.
    fn with_parameter(&self, name: &str, value: f64) -> Result<Arc<dyn ErasedModel>, String>;
    fn describe(&self, setup: &DynRunSetup) -> Result<ModelSummary, RunError>;
    fn run(
        &self,
        setup: &DynRunSetup,
        plan: RunPlan,
        sink: &mut dyn RecordSink,
        energy_tolerance: f64,
    ) -> Result<(Summary, RunOutcome), RunError>;
    fn walls(&self) -> Vec<Shape>;
    /// The orbit search, if the module gave one.
    fn periodic(
        &self,
        setup: &DynRunSetup,
        options: &PeriodicOptions,
        guess: Option<(&[f64], &[f64])>,
    ) -> Option<Result<PeriodicOrbit, PeriodicError>>;
}

impl<Mo: NamedDynSystem + 'static> ErasedModel for PythonModel<Mo> {
    fn name(&self) -> &str {
        self.model.name()
    }
    fn description(&self) -> &str {
        self.model.description()
    }
    fn coordinate_count(&self) -> usize {
        self.model.coordinate_count()
    }
    fn parameters(&self) -> Vec<(String, f64)> {
        (self.get)(&self.model)
    }
    fn with_parameter(&self, name: &str, value: f64) -> Result<Arc<dyn ErasedModel>, String> {
        let mut model = self.model.clone();
        (self.set)(&mut model, name, value)
            .map_err(|reason| format!("parameter '{name}' = {value}: {reason}"))?;
        Ok(Arc::new(PythonModel {
            model,
            setup: self.setup.clone(),
            ..*self
        }))
    }
    fn describe(&self, setup: &DynRunSetup) -> Result<ModelSummary, RunError> {
        Ok(describe_system(&self.model, setup)?)
    }
    fn run(
        &self,
        setup: &DynRunSetup,
        plan: RunPlan,
        sink: &mut dyn RecordSink,
        energy_tolerance: f64,
    ) -> Result<(Summary, RunOutcome), RunError> {
        (self.run)(&self.model, setup, plan, sink, energy_tolerance)
    }
    fn walls(&self) -> Vec<Shape> {
        (self.walls)(&self.model)
    }
    fn periodic(
        &self,
        setup: &DynRunSetup,
        options: &PeriodicOptions,
        guess: Option<(&[f64], &[f64])>,
    ) -> Option<Result<PeriodicOrbit, PeriodicError>> {
        self.periodic
            .map(|search| search(&self.model, setup, options, guess))
    }
}

/// `ValueError` unless `setup` fits a model of `n` coordinates: `q` and `v`
/// of length `n`, `h > 0` and `t_end ≥ 0` finite.
fn check_setup(model: &str, n: usize, setup: &DynRunSetup) -> PyResult<()> {
    for (what, x) in [("q", &setup.q0), ("v", &setup.v0)] {
        if x.len() != n {
            return Err(PyValueError::new_err(format!(
                "{model}: {what} has {} entries, the model has {n} coordinates",
                x.len()
            )));
        }
    }
    if !(setup.h.is_finite() && setup.h > 0.0) {
        return Err(PyValueError::new_err(format!(
            "{model}: h must be a finite number > 0, got {}",
            setup.h
        )));
    }
    if !(setup.t_end.is_finite() && setup.t_end >= 0.0) {
        return Err(PyValueError::new_err(format!(
            "{model}: t_end must be a finite number >= 0, got {}",
            setup.t_end
        )));
    }
    Ok(())
}

/// A [`RustScenario`] as the tolerance chooser repeats it at other orders
/// and steps (its energy tolerance only words a summary, which pilots do
/// not keep).
#[derive(Clone)]
struct Rerunnable(RustScenario);

impl PartialEq for Rerunnable {
    /// The same model value with the same setup.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0.model, &other.0.model) && self.0.setup == other.0.setup
    }
}

impl Rerun for Rerunnable {
    fn h(&self) -> f64 {
        self.0.setup.h
    }
    fn t_end(&self) -> f64 {
        self.0.setup.t_end
    }
    fn configured(&self, order: Order, h: Option<f64>) -> Self {
        Rerunnable(RustScenario {
            setup: configured_setup(&self.0.setup, order, h),
            ..self.0.clone()
        })
    }
    fn algebraic_variables(&self) -> bool {
        let s = &self.0;
        s.model
            .describe(&s.setup)
            .is_ok_and(|d| d.algebraic_variables)
    }
    fn execute(
        &self,
        plan: RunPlan,
        sink: &mut dyn RecordSink,
        _progress: &mut dyn FnMut(usize),
    ) -> Result<RunOutcome, RunError> {
        let s = &self.0;
        s.model
            .run(&s.setup, plan, sink, DEFAULT_ENERGY_TOLERANCE)
            .map(|(_, outcome)| outcome)
    }
}

/// A run of a model written in Rust: the model, its parameter values, its
/// initial data, step, end time and discretization (built by the extension
/// module's `scenario(...)`).
#[pyclass(name = "RustScenario", frozen)]
#[derive(Clone)]
pub struct RustScenario {
    model: Arc<dyn ErasedModel>,
    setup: DynRunSetup,
    /// The extension module that made it (for pickling).
    module: Arc<str>,
}

impl RustScenario {
    /// Apply `key = value`: a parameter name, `h`, `t_end`,
    /// `discretization`, `constraint`, `q` or `v` (the keys of
    /// `Scenario.set`).
    fn set(&mut self, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let name = self.model.name().to_owned();
        let number = |value: &Bound<'_, PyAny>| -> PyResult<f64> {
            value.extract::<f64>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{name}: '{key}' must be a number, got '{}'",
                    value
                        .get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })
        };
        let names: Vec<String> = self.model.parameters().into_iter().map(|p| p.0).collect();
        if names.iter().any(|p| p == key) {
            self.model = self
                .model
                .with_parameter(key, number(value)?)
                .map_err(|reason| PyValueError::new_err(format!("{name}: {reason}")))?;
            return Ok(());
        }
        match key {
            "h" => self.setup.h = number(value)?,
            "t_end" => self.setup.t_end = number(value)?,
            "q" | "v" => {
                let xs: Vec<f64> = value.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "{name}: '{key}' must be a sequence of numbers, got '{}'",
                        value
                            .get_type()
                            .name()
                            .map(|n| n.to_string())
                            .unwrap_or_default()
                    ))
                })?;
                let x = DVector::from_vec(xs);
                if key == "q" {
                    self.setup.q0 = x;
                } else {
                    self.setup.v0 = x;
                }
            }
            "discretization" | "constraint" => {
                let text: String = value
                    .extract()
                    .map_err(|_| PyTypeError::new_err(format!("{name}: '{key}' must be a str")))?;
                let bad = |e: String| PyValueError::new_err(format!("{name}: {e}"));
                if key == "discretization" {
                    self.setup.discretization = text.parse::<Discretization>().map_err(bad)?;
                } else {
                    self.setup.constraint =
                        text.parse::<ConstraintDiscretization>().map_err(bad)?;
                }
            }
            other => {
                let mut valid = names;
                valid.extend(
                    ["h", "t_end", "discretization", "constraint", "q", "v"].map(String::from),
                );
                return Err(PyValueError::new_err(format!(
                    "{name}: unknown key '{other}' (valid: {})",
                    valid.join(", ")
                )));
            }
        }
        check_setup(&name, self.model.coordinate_count(), &self.setup)
    }

    /// The plan of `choice` for this scenario. A tolerance chooses the
    /// order and the number of steps itself: `steps` or an order other
    /// than 2 with it is a `ValueError`.
    fn plan(&self, choice: &RunChoice) -> PyResult<RunPlan> {
        if let Some(tol) = choice.tol
            && (choice.steps.is_some() || choice.order != Order::Two)
        {
            return Err(PyValueError::new_err(format!(
                "tol = {tol:e} chooses the order and the step: steps and order cannot be given with it"
            )));
        }
        let steps = step_count_for(self.setup.h, self.setup.t_end, choice.steps)
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", self.model.name())))?;
        Ok(choice.plan_of(steps))
    }

    /// One run as `plan` says, recording to `sink`; with a tolerance, the
    /// order and step are chosen by pilot runs first
    /// ([`diracvi_run::execute_with_tolerance`]) and the summary records
    /// the choice, as `diracvi_run::execute_system_with_tolerance` and
    /// `Summary::of_run` give it in Rust.
    fn execute(
        &self,
        plan: RunPlan,
        energy_tolerance: f64,
        tol: Option<f64>,
        sink: &mut dyn RecordSink,
    ) -> Result<(Summary, RunOutcome, ModelSummary), RunError> {
        let Some(tol) = tol else {
            let info = self.model.describe(&self.setup)?;
            let (summary, outcome) = self.model.run(&self.setup, plan, sink, energy_tolerance)?;
            return Ok((summary, outcome, info));
        };
        let (outcome, choice, ran) =
            execute_with_tolerance(&Rerunnable(self.clone()), plan, tol, sink, &mut |_| {})?;
        let setup = &ran.0.setup;
        let info = self.model.describe(setup)?;
        let summary = Summary::of_run(
            self.model.name(),
            &info,
            setup.h,
            setup.t_end,
            &outcome,
            energy_tolerance,
        )
        .with_tolerance(&choice);
        Ok((summary, outcome, info))
    }

    /// A copy ending at `t_end` when given.
    fn with_end(&self, t_end: Option<f64>) -> PyResult<Self> {
        let mut sc = self.clone();
        if let Some(t) = t_end {
            sc.setup.t_end = t;
            check_setup(sc.model.name(), sc.model.coordinate_count(), &sc.setup)?;
        }
        Ok(sc)
    }

    /// The index of the wall piece `given` (an index or a piece's name).
    fn section_piece(&self, given: &str) -> Result<usize, PeriodicError> {
        let info = self.model.describe(&self.setup)?;
        section_among(self.model.name(), &info.boundary_names, given)
    }

    /// The orbit search of the module, from `guess`.
    fn orbit(
        &self,
        options: &PeriodicOptions,
        guess: Option<(&[f64], &[f64])>,
    ) -> Result<PeriodicOrbit, PeriodicError> {
        self.model
            .periodic(&self.setup, options, guess)
            .unwrap_or_else(|| {
                Err(PeriodicError::Unsupported {
                    model: self.model.name().to_owned(),
                    what: "for this model: its module gave no orbit search \
                           (diracvi_python::own::PythonModel::periodic)"
                        .to_owned(),
                })
            })
    }

    /// The walls of a result.
    fn result_walls(&self) -> Walls {
        Walls::Known(self.model.walls())
    }
}

#[pymethods]
impl RustScenario {
    /// A copy with overrides: ``params`` (a dict of parameter values) first,
    /// then ``q``, ``v``, ``h``, ``t_end``, ``discretization``,
    /// ``constraint``. Raises ``ValueError`` for a bad value or unknown
    /// parameter, ``TypeError`` for a value of the wrong type.
    #[pyo3(signature = (*, h=None, t_end=None, discretization=None, constraint=None, params=None, q=None, v=None))]
    #[allow(clippy::too_many_arguments)]
    fn replace(
        &self,
        h: Option<&Bound<'_, PyAny>>,
        t_end: Option<&Bound<'_, PyAny>>,
        discretization: Option<&Bound<'_, PyAny>>,
        constraint: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyAny>>,
        q: Option<&Bound<'_, PyAny>>,
        v: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut out = self.clone();
        if let Some(params) = params.filter(|p| !p.is_none()) {
            let params = params.cast::<PyDict>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "params must be a dict of parameter values, got '{}'",
                    params
                        .get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?;
            for (key, value) in params.iter() {
                let key: String = key
                    .extract()
                    .map_err(|_| PyTypeError::new_err("params: keys must be str"))?;
                out.set(&key, &value)?;
            }
        }
        let rest = [
            ("q", q),
            ("v", v),
            ("h", h),
            ("t_end", t_end),
            ("discretization", discretization),
            ("constraint", constraint),
        ];
        for (key, value) in rest {
            if let Some(value) = value.filter(|v| !v.is_none()) {
                out.set(key, value)?;
            }
        }
        Ok(out)
    }

    /// The model's name.
    #[getter]
    fn model(&self) -> String {
        self.model.name().to_owned()
    }

    /// One line describing the model.
    #[getter]
    fn description(&self) -> String {
        self.model.description().to_owned()
    }

    /// The parameters and their values.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, value) in self.model.parameters() {
            d.set_item(name, value)?;
        }
        Ok(d)
    }

    /// Time step (s).
    #[getter]
    fn h(&self) -> f64 {
        self.setup.h
    }

    /// End time (s).
    #[getter]
    fn t_end(&self) -> f64 {
        self.setup.t_end
    }

    /// Initial configuration.
    #[getter]
    fn q(&self) -> Vec<f64> {
        self.setup.q0.iter().copied().collect()
    }

    /// Initial velocity.
    #[getter]
    fn v(&self) -> Vec<f64> {
        self.setup.v0.iter().copied().collect()
    }

    /// Discretization map (``forward`` or ``midpoint``).
    #[getter]
    fn discretization(&self) -> String {
        self.setup.discretization.to_string()
    }

    /// Discrete constraint (``retraction``, ``midpoint`` or ``model``).
    #[getter]
    fn constraint(&self) -> String {
        self.setup.constraint.to_string()
    }

    /// The names of the coordinates.
    #[getter]
    fn coordinates(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.model
            .describe(&self.setup)
            .map(|info| info.coordinates)
            .map_err(|e| run_error(py, &e, None))
    }

    /// The orbit of ``diracvi.periodic_orbit(scenario, ...)`` (which
    /// documents the keywords) as JSON text.
    #[pyo3(signature = (*, section=None, impact=1, period=None, steps=None, tolerance=1e-12, max_iterations=30, t_end=None))]
    #[allow(clippy::too_many_arguments)]
    fn _periodic_orbit(
        &self,
        py: Python<'_>,
        section: Option<&Bound<'_, PyAny>>,
        impact: usize,
        period: Option<f64>,
        steps: Option<usize>,
        tolerance: f64,
        max_iterations: usize,
        t_end: Option<f64>,
    ) -> PyResult<String> {
        let sc = self.with_end(t_end)?;
        let args = SectionArgs {
            section,
            impact,
            period,
            steps,
            tolerance,
            max_iterations,
        };
        let opts = args.options(py, sc.setup.h, |given| sc.section_piece(given))?;
        let orbit = py
            .detach(|| sc.orbit(&opts, None))
            .map_err(|e| periodic_error(py, e))?;
        Ok(orbit.to_json(sc.setup.h).to_string())
    }

    /// The branch of ``diracvi.continue_orbit(scenario, parameter, values,
    /// ...)`` as JSON text: ``parameter`` is one of the model's parameters.
    #[pyo3(signature = (parameter, values, *, section=None, impact=1, period=None, steps=None, tolerance=1e-12, max_iterations=30, t_end=None))]
    #[allow(clippy::too_many_arguments)]
    fn _continue_orbit(
        &self,
        py: Python<'_>,
        parameter: &str,
        values: Vec<f64>,
        section: Option<&Bound<'_, PyAny>>,
        impact: usize,
        period: Option<f64>,
        steps: Option<usize>,
        tolerance: f64,
        max_iterations: usize,
        t_end: Option<f64>,
    ) -> PyResult<String> {
        let sc = self.with_end(t_end)?;
        let parameter = parameter.trim();
        let names: Vec<String> = sc.model.parameters().into_iter().map(|p| p.0).collect();
        if !names.iter().any(|n| n == parameter) {
            return Err(periodic_error(
                py,
                PeriodicError::Unsupported {
                    model: sc.model.name().to_owned(),
                    what: format!(
                        "along '{parameter}': continuation is in a model parameter (valid: {})",
                        names.join(", ")
                    ),
                },
            ));
        }
        let args = SectionArgs {
            section,
            impact,
            period,
            steps,
            tolerance,
            max_iterations,
        };
        let opts = args.options(py, sc.setup.h, |given| sc.section_piece(given))?;
        let branch = py
            .detach(|| {
                continue_with(parameter, &values, &opts, None, |value, options, guess| {
                    let model = sc
                        .model
                        .with_parameter(parameter, value)
                        .map_err(|reason| PeriodicError::Unsupported {
                            model: sc.model.name().to_owned(),
                            what: format!("at {reason}"),
                        })?;
                    RustScenario {
                        model,
                        ..sc.clone()
                    }
                    .orbit(options, guess)
                })
            })
            .map_err(|e| periodic_error(py, e))?;
        Ok(branch.to_json(sc.setup.h).to_string())
    }

    /// Pickle as the module's ``scenario(...)`` with this scenario's
    /// parameters, step, end time, discretization and initial data
    /// (``diracvi._rust_scenario`` imports the module and calls it), so
    /// scenarios travel to other processes (Dask workers) that have the
    /// module installed.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("params", self.params(py)?)?;
        kwargs.set_item("q", self.q())?;
        kwargs.set_item("v", self.v())?;
        kwargs.set_item("h", self.setup.h)?;
        kwargs.set_item("t_end", self.setup.t_end)?;
        kwargs.set_item("discretization", self.discretization())?;
        kwargs.set_item("constraint", self.constraint())?;
        let rebuild = py.import("diracvi")?.getattr("_rust_scenario")?;
        (rebuild, (&*self.module, kwargs)).into_pyobject(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "RustScenario(model={:?}, h={:?}, t_end={:?}, discretization={:?}, params={:?})",
            self.model.name(),
            self.setup.h,
            self.setup.t_end,
            self.setup.discretization.as_str(),
            self.model.parameters()
        )
    }

    /// Run and return a ``diracvi.RunResult``: the keywords of
    /// ``diracvi.Scenario.run``, with the same meaning and errors.
    #[pyo3(signature = (*, stepper="lagrange", impacts="elastic", backward=false, steps=None, every=1, order=2, reduce=false, jacobian=false, sensitivity=None, energy_tolerance=0.01, tol=None, tangents=false))]
    #[allow(clippy::too_many_arguments)]
    fn run<'py>(
        &self,
        py: Python<'py>,
        stepper: &str,
        impacts: &str,
        backward: bool,
        steps: Option<i64>,
        every: i64,
        order: i64,
        reduce: bool,
        jacobian: bool,
        sensitivity: Option<Bound<'py, PyAny>>,
        energy_tolerance: f64,
        tol: Option<f64>,
        tangents: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let names = sensitivity_names(sensitivity.as_ref())?;
        let mut choice = RunChoice::parse(
            stepper,
            impacts,
            backward,
            steps,
            every,
            order,
            reduce,
            jacobian,
            energy_tolerance,
            tol,
        )?;
        choice.tangents = tangents;
        let plan = self.plan(&choice)?.sensitivity(&names);
        let expected = plan.steps.checked_div(plan.every).map_or(0, |n| n + 2);
        let n = self.model.coordinate_count();
        let done = py.detach(|| {
            let mut records = RecordBuffer::with_capacity(expected.min(1 << 20), n);
            let (summary, outcome, info) =
                self.execute(plan, choice.energy_tolerance, choice.tol, &mut records)?;
            Ok::<_, RunError>((summary, outcome, info, records))
        });
        let (summary, outcome, info, records) = done.map_err(|e| run_error(py, &e, None))?;
        run_result(
            py,
            self.model.name(),
            &info.coordinates,
            records,
            &outcome,
            &summary,
            self.result_walls(),
        )
    }

    /// The runs of ``diracvi.ensemble(scenario, overrides, ...)`` (which
    /// documents the keywords; an override cannot set ``tol``): the fields of a
    /// ``diracvi.EnsembleResult``.
    #[pyo3(signature = (overrides, *, keep=None, threads=None, stepper="lagrange", impacts="elastic", backward=false, steps=None, every=1, order=2, reduce=false, energy_tolerance=0.01, tol=None))]
    #[allow(clippy::too_many_arguments)]
    fn _ensemble<'py>(
        &self,
        py: Python<'py>,
        overrides: &Bound<'py, PyAny>,
        keep: Option<&Bound<'py, PyAny>>,
        threads: Option<i64>,
        stepper: &str,
        impacts: &str,
        backward: bool,
        steps: Option<i64>,
        every: i64,
        order: i64,
        reduce: bool,
        energy_tolerance: f64,
        tol: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let keep = Keep::parse(keep)?;
        let mut choice = RunChoice::parse(
            stepper,
            impacts,
            backward,
            steps,
            every,
            order,
            reduce,
            false,
            energy_tolerance,
            tol,
        )?;
        if !keep.trajectory() {
            choice.every = 0;
        }
        choice.account = keep.summary();
        let scenarios = with_overrides(self, overrides, |sc, i, key, value| {
            sc.set(key, value).map_err(|e| {
                let prefixed = format!("run {i}: {}", e.value(py));
                if e.is_instance_of::<PyTypeError>(py) {
                    PyTypeError::new_err(prefixed)
                } else {
                    PyValueError::new_err(prefixed)
                }
            })
        })?;
        let members = scenarios
            .into_iter()
            .map(|sc| sc.plan(&choice).map(|plan| (sc, plan)))
            .collect::<PyResult<Vec<_>>>()?;
        let threads = parse_threads(threads)?;
        let runs = run_members(py, members, threads, |(sc, plan)| {
            let mut buffer = RecordBuffer::new();
            let sink: &mut dyn RecordSink = if keep.trajectory() {
                &mut buffer
            } else {
                &mut Discard
            };
            let (summary, outcome, info) =
                sc.execute(plan, choice.energy_tolerance, choice.tol, sink)?;
            let kept = Kept::new(keep, buffer, outcome, |_| summary, || sc.result_walls());
            Ok((kept, info))
        })?;
        let coordinates = self.coordinates(py)?;
        ensemble_dict(py, self.model.name(), &coordinates, keep, runs)
    }
}
