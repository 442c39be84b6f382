//! `diracvi.Scenario` and `diracvi.models()`.

use crate::convert::{
    has_plane, impact_table, indices, make, matrix, scenario_summary, set_text, shape_list,
    summary_dict, vector,
};
use crate::errors::{choice_error, model_error, model_type_error, run_error};
use diracvi_models::{ModelError, Scenario, Shape, catalogue};
use diracvi_run::{
    Direction, Impacts, Order, RecordBuffer, RecordSink, RunError, RunOutcome, RunPlan, Stepper,
    Summary, ToleranceChoice, describe, execute, execute_with_tolerance, step_count,
};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use std::path::PathBuf;
use toml::Value;

/// A model with its parameters, step, end time, discretization and initial
/// data: everything a run needs, as plain data (the scenario files of the
/// command-line program). Equal scenarios compare equal; they pickle
/// through their TOML.
#[pyclass(name = "Scenario", module = "diracvi", eq)]
#[derive(Clone, PartialEq)]
pub struct PyScenario {
    /// The Rust scenario.
    pub(crate) inner: Scenario,
}

/// How one run is asked for from Python.
#[derive(Clone, Copy)]
pub struct RunChoice {
    /// One-step map.
    pub stepper: Stepper,
    /// Impact law.
    pub impacts: Impacts,
    /// Direction of time.
    pub direction: Direction,
    /// Exactly this many steps, or `round(t_end / h)`.
    pub steps: Option<usize>,
    /// Record every `every`-th step (0: none).
    pub every: usize,
    /// Order of the method: 2 (the scenario's own scheme), 4 or 6 (the
    /// compositions of docs/theory.md §9).
    pub order: Order,
    /// Run reduced by the model's declared symmetry (docs/theory.md §7).
    pub reduce: bool,
    /// Track the tangent map and report the Jacobian (docs/theory.md §12).
    pub jacobian: bool,
    /// Keep every step's derivative (`RunResult.tangents`, docs/theory.md
    /// §12.5); `Scenario.run` only.
    pub tangents: bool,
    /// Relative energy drift above which the summary warns.
    pub energy_tolerance: f64,
    /// Accuracy on request (`diracvi run --tol`): choose the order and the
    /// step from pilot runs (docs/theory.md §13); a scenario's own `tol`
    /// applies when this is `None`.
    pub tol: Option<f64>,
    /// Account a system's parts and ports (the summary's `parts`, `ports`,
    /// `accounting`); ensembles that keep no summary leave it out.
    pub account: bool,
}

impl RunChoice {
    /// Parse the keyword arguments shared by `Scenario.run` and `ensemble`.
    #[allow(clippy::too_many_arguments)]
    pub fn parse(
        stepper: &str,
        impacts: &str,
        backward: bool,
        steps: Option<i64>,
        every: i64,
        order: i64,
        reduce: bool,
        jacobian: bool,
        energy_tolerance: f64,
        tol: Option<f64>,
    ) -> PyResult<Self> {
        if let Some(tol) = tol
            && !(tol.is_finite() && tol > 0.0)
        {
            return Err(PyValueError::new_err(format!(
                "tol must be a finite number > 0, got {tol}"
            )));
        }
        let steps = steps
            .map(|n| {
                usize::try_from(n)
                    .map_err(|_| PyValueError::new_err(format!("steps must be >= 0, got {n}")))
            })
            .transpose()?;
        let every = usize::try_from(every)
            .map_err(|_| PyValueError::new_err(format!("every must be >= 0, got {every}")))?;
        let order = Order::try_from(order)
            .map_err(|_| PyValueError::new_err(format!("order must be 2, 4 or 6, got {order}")))?;
        if !(energy_tolerance.is_finite() && energy_tolerance >= 0.0) {
            return Err(PyValueError::new_err(format!(
                "energy_tolerance must be finite and >= 0, got {energy_tolerance}"
            )));
        }
        Ok(Self {
            stepper: stepper.parse().map_err(choice_error)?,
            impacts: impacts.parse().map_err(choice_error)?,
            direction: if backward {
                Direction::Backward
            } else {
                Direction::Forward
            },
            steps,
            every,
            order,
            reduce,
            jacobian,
            tangents: false,
            energy_tolerance,
            tol,
            account: true,
        })
    }

    /// The tolerance a run of `scenario` takes: this choice's, else the
    /// scenario's `tol`. A tolerance chooses the order and the number of
    /// steps itself: `steps` or an order other than 2 with it is an error.
    pub fn tolerance(&self, scenario: &Scenario) -> PyResult<Option<f64>> {
        let tol = self.tol.or(scenario.tol);
        if let Some(tol) = tol
            && (self.steps.is_some() || self.order != Order::Two)
        {
            return Err(PyValueError::new_err(format!(
                "tol = {tol:e} chooses the order and the step: steps and order cannot be given with it"
            )));
        }
        Ok(tol)
    }

    /// Run `scenario` as asked, recording to `sink`: with a tolerance
    /// ([`tolerance`](Self::tolerance), checked before) the order and step
    /// are chosen by pilot runs first. Returns the scenario that ran (its
    /// step the chosen one), the outcome and the choice.
    pub fn execute(
        &self,
        scenario: &Scenario,
        names: &[String],
        sink: &mut dyn RecordSink,
    ) -> Result<(Scenario, RunOutcome, Option<ToleranceChoice>), RunError> {
        let mut sc = scenario.clone();
        if let Some(tol) = self.tol {
            sc.tol = Some(tol);
        }
        let plan = self.plan(&sc)?.sensitivity(names);
        match sc.tol {
            Some(tol) => {
                let (outcome, choice, chosen) =
                    execute_with_tolerance(&sc, plan, tol, sink, &mut |_| {})?;
                Ok((chosen, outcome, Some(choice)))
            }
            None => {
                let outcome = execute(&sc, plan, sink)?;
                Ok((sc, outcome, None))
            }
        }
    }

    /// The plan for `scenario`.
    pub fn plan(&self, scenario: &Scenario) -> Result<RunPlan, RunError> {
        Ok(self.plan_of(step_count(scenario, self.steps)?))
    }

    /// The plan of a run of `steps` steps.
    pub fn plan_of(&self, steps: usize) -> RunPlan {
        RunPlan::new(steps)
            .stepper(self.stepper)
            .impacts(self.impacts)
            .direction(self.direction)
            .every(self.every)
            .reduce(self.reduce)
            .jacobian(self.jacobian)
            .tangents(self.tangents)
            .account(self.account)
            .order(self.order)
    }
}

/// Apply `key = value` (a Python value) to `scenario`.
pub fn set_value(
    py: Python<'_>,
    scenario: &mut Scenario,
    key: &str,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let text = set_text(key, value)?;
    scenario.set(key, &text).map_err(|e| {
        // A string where a number is needed is a wrong type, not a wrong
        // value (`h="x"`); the string-valued keys take strings.
        let string_key = matches!(key.trim(), "discretization" | "constraint" | "model");
        if matches!(e, ModelError::IllTypedParameter { .. })
            && value.is_instance_of::<PyString>()
            && !string_key
        {
            model_type_error(py, e)
        } else {
            model_error(py, e)
        }
    })
}

/// A TOML value as a Python object.
fn toml_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Float(x) => x.into_pyobject(py)?.into_any(),
        Value::Integer(i) => i.into_pyobject(py)?.into_any(),
        Value::Boolean(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(xs) => {
            let items: PyResult<Vec<_>> = xs.iter().map(|x| toml_to_py(py, x)).collect();
            PyList::new(py, items?)?.into_any()
        }
        other => other.to_string().into_pyobject(py)?.into_any(),
    })
}

impl PyScenario {
    /// The defaults of `model` with the keyword overrides applied, in the
    /// order `params`, `q`, `v`, `h`, `t_end`, `discretization`,
    /// `constraint`.
    #[allow(clippy::too_many_arguments)]
    fn build(
        py: Python<'_>,
        mut scenario: Scenario,
        h: Option<&Bound<'_, PyAny>>,
        t_end: Option<&Bound<'_, PyAny>>,
        discretization: Option<&Bound<'_, PyAny>>,
        constraint: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyDict>>,
        q: Option<&Bound<'_, PyAny>>,
        v: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        if let Some(params) = params {
            for (key, value) in params.iter() {
                let key: String = key.extract()?;
                set_value(py, &mut scenario, &key, &value)?;
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
            if let Some(value) = value {
                set_value(py, &mut scenario, key, value)?;
            }
        }
        Ok(Self { inner: scenario })
    }
}

#[pymethods]
impl PyScenario {
    /// Scenario(model, *, h=None, t_end=None, discretization=None, constraint=None, params=None, q=None, v=None)
    ///
    /// The paper's defaults for ``model`` with the given overrides (see
    /// ``diracvi.scenario``). Raises ``ModelError`` for an unknown model or
    /// key or an invalid value, ``TypeError`` for a value of the wrong type.
    #[new]
    #[pyo3(signature = (model, *, h=None, t_end=None, discretization=None, constraint=None, params=None, q=None, v=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        model: &str,
        h: Option<&Bound<'_, PyAny>>,
        t_end: Option<&Bound<'_, PyAny>>,
        discretization: Option<&Bound<'_, PyAny>>,
        constraint: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyDict>>,
        q: Option<&Bound<'_, PyAny>>,
        v: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let scenario = Scenario::defaults(model).map_err(|e| model_error(py, e))?;
        Self::build(
            py,
            scenario,
            h,
            t_end,
            discretization,
            constraint,
            params,
            q,
            v,
        )
    }

    /// Read a scenario file's text (TOML, as ``diracvi show`` prints): only
    /// ``model`` is required, missing fields take the model's defaults.
    /// Raises ``ModelError`` for TOML syntax errors, unknown keys, invalid
    /// values.
    #[staticmethod]
    fn from_toml(py: Python<'_>, text: &str) -> PyResult<Self> {
        Scenario::from_toml(text)
            .map(|inner| Self { inner })
            .map_err(|e| model_error(py, e))
    }

    /// Read a scenario file or a model file (TOML; a model file is a
    /// document with a ``[model]`` table, docs/model-files.md). Raises
    /// ``OSError`` if it cannot be read, ``ModelError`` (naming the file,
    /// key, line and column for a model file) if it is invalid.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let text = std::fs::read_to_string(&path).map_err(|e| {
            PyErr::from(std::io::Error::new(
                e.kind(),
                format!("cannot read scenario file '{}': {e}", path.display()),
            ))
        })?;
        if looks_like_model_file(&text) {
            // Read from the path so that errors name the file.
            return Scenario::from_model_file(&path)
                .map(|inner| Self { inner })
                .map_err(|e| model_error(py, e));
        }
        Self::from_toml(py, &text)
    }

    /// from_system(path)
    ///
    /// A system file (parts joined through ports, docs/systems.md; ``diracvi
    /// run --system``): the assembled model as a model-file scenario, its
    /// ``[run]`` and ``[initial]`` the defaults, names ``part.name``. Raises
    /// ``ModelError`` (kind ``SystemFile``, naming the file, key, line and
    /// column — a part's own errors with the part's file) if it is invalid.
    #[staticmethod]
    fn from_system(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let system = diracvi_system::System::from_path(&path)
            .map_err(|e| crate::errors::system_error(py, &e))?;
        Scenario::from_system(system)
            .map(|inner| Self { inner })
            .map_err(|e| model_error(py, e))
    }

    /// from_netlist(path, *, h, t_end, discretization="forward")
    ///
    /// A circuit from a SPICE-subset netlist file (``diracvi run --netlist``;
    /// README "Circuits"), named after the file's stem, run on the sparse
    /// Lagrange–Dirac stepper through the same ``run``/``ensemble`` as every
    /// model. A general circuit has no default step: ``h`` and ``t_end`` are
    /// required (with ``run(tol=...)``, ``h`` is the step the pilot runs
    /// start from). Initial conditions are the netlist's ``IC=`` values. Raises
    /// ``ModelError`` (kind ``Circuit``, with the netlist's line number) for
    /// a file that cannot be read, a malformed or unsolvable netlist, or an
    /// invalid ``h``/``t_end``.
    #[staticmethod]
    #[pyo3(signature = (path, *, h, t_end, discretization="forward"))]
    fn from_netlist(
        py: Python<'_>,
        path: PathBuf,
        h: f64,
        t_end: f64,
        discretization: &str,
    ) -> PyResult<Self> {
        let mut inner =
            Scenario::from_netlist_file(&path, h, t_end).map_err(|e| model_error(py, e))?;
        inner
            .set("discretization", discretization)
            .map_err(|e| model_error(py, e))?;
        Ok(Self { inner })
    }

    /// from_netlist_text(text, *, h, t_end, name="netlist", discretization="forward")
    ///
    /// ``from_netlist`` for a netlist given as text, named ``name``.
    #[staticmethod]
    #[pyo3(signature = (text, *, h, t_end, name="netlist", discretization="forward"))]
    fn from_netlist_text(
        py: Python<'_>,
        text: &str,
        h: f64,
        t_end: f64,
        name: &str,
        discretization: &str,
    ) -> PyResult<Self> {
        let mut inner =
            Scenario::from_netlist(name, text, h, t_end).map_err(|e| model_error(py, e))?;
        inner
            .set("discretization", discretization)
            .map_err(|e| model_error(py, e))?;
        Ok(Self { inner })
    }

    /// Whether the scenario is a circuit (a netlist or ``lc-ladder``): it
    /// runs on the run-time core, as a system of branch charges.
    #[getter]
    fn is_circuit(&self) -> bool {
        self.inner.circuit.is_some()
    }

    /// The scenario as commented TOML (a scenario file for
    /// ``diracvi run --scenario``); ``Scenario.from_toml`` reads it back to
    /// an equal scenario, bit for bit.
    fn to_toml(&self) -> String {
        self.inner.to_toml()
    }

    /// Override one key in place, as ``diracvi run --set key=value``: a
    /// model parameter, or ``h``, ``t_end``, ``discretization``,
    /// ``constraint``, ``q``, ``v``. ``value`` is a number, bool, str,
    /// ``None`` (an optional parameter's derived value) or a sequence of
    /// numbers. On error the scenario is unchanged. Raises ``ModelError``
    /// or ``TypeError``.
    fn set(&mut self, py: Python<'_>, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        set_value(py, &mut self.inner, key, value)
    }

    /// A copy with overrides (same keywords and order as ``Scenario(...)``).
    #[pyo3(signature = (*, h=None, t_end=None, discretization=None, constraint=None, params=None, q=None, v=None))]
    #[allow(clippy::too_many_arguments)]
    fn replace(
        &self,
        py: Python<'_>,
        h: Option<&Bound<'_, PyAny>>,
        t_end: Option<&Bound<'_, PyAny>>,
        discretization: Option<&Bound<'_, PyAny>>,
        constraint: Option<&Bound<'_, PyAny>>,
        params: Option<&Bound<'_, PyDict>>,
        q: Option<&Bound<'_, PyAny>>,
        v: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Self::build(
            py,
            self.inner.clone(),
            h,
            t_end,
            discretization,
            constraint,
            params,
            q,
            v,
        )
    }

    /// start_from_momentum(q, p) -> (Scenario, multipliers)
    ///
    /// A copy that starts from the phase-space state ``(q, p)``: ``q`` set
    /// and ``v`` solved from the constrained Legendre map,
    /// ``∂L/∂v(q, v) = p + A(q)ᵀν`` with ``A(q) v = 0`` (docs/theory.md
    /// §8.7), as ``diracvi run --set q=… --start-p …`` does; and the
    /// multipliers ``ν`` (one per constraint row): the run starts from
    /// ``p + A(q)ᵀν``, which is ``p`` itself when ``p`` is a momentum of the
    /// constrained system (``ν = 0``), e.g. the final state of another run
    /// taken back with ``run(backward=True)``. Raises ``ModelError`` for a
    /// ``q`` or ``p`` of the wrong length, a circuit, or a state where the
    /// map cannot be inverted.
    fn start_from_momentum(
        &self,
        py: Python<'_>,
        q: Vec<f64>,
        p: Vec<f64>,
    ) -> PyResult<(Self, Vec<f64>)> {
        let start = py
            .detach(|| diracvi_run::start_from_momentum(&self.inner, &q, &p))
            .map_err(|e| run_error(py, &e, None))?;
        Ok((
            Self {
                inner: start.scenario,
            },
            start.multipliers,
        ))
    }

    /// A copy.
    fn copy(&self) -> Self {
        self.clone()
    }

    /// A copy.
    fn __copy__(&self) -> Self {
        self.clone()
    }

    /// A copy.
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
    }

    /// Pickle through the scenario's TOML (which parses back exactly).
    /// Pickle support: scenarios pickle through their TOML.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py.import("diracvi")?.getattr("_scenario_from_toml")?;
        PyTuple::new(
            py,
            [
                restore,
                PyTuple::new(py, [self.inner.to_toml()])?.into_any(),
            ],
        )
    }

    fn __repr__(&self) -> String {
        let sc = &self.inner;
        format!(
            "Scenario('{}', h={:?}, t_end={:?}, discretization='{}', constraint='{}', params={{{}}}, q={:?}, v={:?})",
            sc.model,
            sc.h,
            sc.t_end,
            sc.discretization,
            sc.constraint,
            sc.parameters
                .iter()
                .map(|(k, v)| format!("'{k}': {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            sc.initial.q,
            sc.initial.v
        )
    }

    /// Registry name of the model.
    #[getter]
    fn model(&self) -> String {
        self.inner.model.clone()
    }

    /// Time step (s).
    #[getter]
    fn h(&self) -> f64 {
        self.inner.h
    }

    /// End time (s); runs start at t = 0 and take round(t_end / h) steps.
    #[getter]
    fn t_end(&self) -> f64 {
        self.inner.t_end
    }

    /// Discretization map of the discrete Lagrangian: ``"forward"`` or
    /// ``"midpoint"``.
    #[getter]
    fn discretization(&self) -> String {
        self.inner.discretization.to_string()
    }

    /// Discrete constraint: ``"retraction"``, ``"midpoint"`` or ``"model"``.
    #[getter]
    fn constraint(&self) -> String {
        self.inner.constraint.to_string()
    }

    /// Model parameters by name (a new dict; change them with ``set``).
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.inner.parameters {
            d.set_item(k, toml_to_py(py, v)?)?;
        }
        Ok(d)
    }

    /// Initial configuration q(0).
    #[getter]
    fn q(&self) -> Vec<f64> {
        self.inner.initial.q.clone()
    }

    /// Initial velocity v(0) = dq/dt(0).
    #[getter]
    fn v(&self) -> Vec<f64> {
        self.inner.initial.v.clone()
    }

    /// Every key ``set`` accepts: the parameters, then h, t_end,
    /// discretization, constraint, q, v.
    #[getter]
    fn keys(&self) -> Vec<String> {
        self.inner.keys()
    }

    /// Whether the model was read from a model file (rather than the
    /// catalogue).
    #[getter]
    fn is_model_file(&self) -> bool {
        self.inner.file.is_some()
    }

    /// Names of the model's coordinates (builds the model: raises
    /// ``ModelError`` for invalid parameters or initial data).
    #[getter]
    fn coordinates(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        describe(&self.inner)
            .map(|d| d.coordinates)
            .map_err(|e| model_error(py, e))
    }

    /// run(*, stepper="lagrange", impacts="elastic", backward=False, steps=None, every=1, order=2, reduce=False, jacobian=False, sensitivity=(), energy_tolerance=0.01, tol=None, tangents=False)
    ///
    /// Integrate from t = 0 with the GIL released and return a
    /// ``RunResult`` (numpy arrays ``k, t, q, p, energy,
    /// constraint_residual`` of every ``every``-th step and the last, an
    /// ``ImpactTable``, the summary dict).
    ///
    /// ``stepper``: ``"lagrange"`` (discrete Lagrange–Dirac) or
    /// ``"hamiltonian"`` (nonholonomic Hamiltonian, symplectic Euler);
    /// ``impacts``: ``"elastic"`` or ``"reject"`` (fail at the first
    /// crossing); ``backward``: integrate backward in time with the (−)
    /// stepper; ``steps``: exactly this many steps instead of
    /// round(t_end / h); ``every=0`` records nothing; ``order``: 2 (the
    /// scenario's own discretization), 4 or 6 (the triple jump or Kahan–Li
    /// composition of the symmetric midpoint step with the continuous
    /// elastic law, ``diracvi run --order``; lagrange stepper only);
    /// ``reduce``: integrate the reduced system of the model's declared
    /// symmetry and reconstruct the full states (``diracvi run --reduce``);
    /// ``jacobian``: track the tangent map of the flow and report
    /// ``RunResult.jacobian``, ∂(q_N, p_N)/∂(q_0, p_0) exact through
    /// impacts (``diracvi run --jacobian``; the lagrange stepper of orders
    /// 2, 4 and 6 and the hamiltonian one, circuits and systems with forces
    /// and sources included; what has none raises ``ModelError`` of kind
    /// ``JacobianUnsupported``);
    /// ``sensitivity``: parameter names (a sequence of str, or one str
    /// with commas) of a model file, or a circuit's element values by
    /// their netlist names (``"L1"``, ``"C2"``); report ``RunResult.sensitivity``,
    /// ``{name: ∂(q_N, p_N)/∂name}`` exact through impacts
    /// (``diracvi run --sensitivity``, docs/theory.md §12.4; a catalogued
    /// model raises ``ModelError`` of kind ``SensitivityUnsupported``, an
    /// unknown name of kind ``UnknownSensitivityParameter``);
    /// ``energy_tolerance``: the summary's ``warnings`` name an energy
    /// drift above this fraction of the energy scale
    /// (``--energy-tolerance``);
    /// ``tol``: accuracy on request (``diracvi run --tol``, docs/theory.md
    /// §13): the order (2, 4 or 6) and a fixed step are chosen from pilot
    /// runs so that the error of the final state and the impact times is
    /// about ``tol``; the summary's ``"tolerance"`` records the choice (a
    /// scenario's own ``tol`` applies when not given; not with ``steps`` or
    /// ``order``);
    /// ``tangents``: keep every step's derivative,
    /// ``RunResult.tangents`` (``(N, 2n, 2n + r)``: ∂x_{k+1}/∂(x_k, θ), the
    /// ``r`` parameters of ``sensitivity`` last) and
    /// ``RunResult.tangent_initial`` (∂x_0/∂θ): per-step tangents, and the
    /// tape ``RunResult.gradient`` sweeps in reverse (docs/theory.md
    /// §12.5; the methods of ``jacobian``).
    ///
    /// Raises ``ModelError`` (invalid scenario, no Hamiltonian, too many
    /// steps), ``StepError`` / ``ImpactError`` (a failed step, with ``step``
    /// and ``t``), ``ValueError`` (bad ``stepper``, ``impacts``, ``steps``,
    /// ``every``, ``order``); ``ModelError`` with kind ``UnsupportedOrder``
    /// for order 4 or 6 with the hamiltonian stepper.
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
        let scenario = self.inner.clone();
        choice.tolerance(&scenario)?;
        let done = py.detach(move || {
            let info = describe(&scenario)?;
            let plan = choice.plan(&scenario)?;
            // Room for the records up front (bounded: a huge run grows as it goes).
            let expected = plan.steps.checked_div(plan.every).map_or(0, |n| n + 2);
            let mut records =
                RecordBuffer::with_capacity(expected.min(1 << 20), info.coordinates.len());
            let (scenario, outcome, tolerance) = choice.execute(&scenario, &names, &mut records)?;
            Ok::<_, RunError>((scenario, info, records, outcome, tolerance))
        });
        let (scenario, info, records, outcome, tolerance) =
            done.map_err(|e| run_error(py, &e, None))?;
        let summary = scenario_summary(
            &scenario,
            &info,
            &outcome,
            choice.energy_tolerance,
            tolerance.as_ref(),
        );
        run_result(
            py,
            &scenario.model,
            &info.coordinates,
            records,
            &outcome,
            &summary,
            Walls::of(&scenario, &info.coordinates),
        )
    }
}

/// The parameter names of `run(sensitivity=…)`: a sequence of str, or one
/// str of comma-separated names (as `--sensitivity`).
pub fn sensitivity_names(value: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    if value.is_none() {
        return Ok(Vec::new());
    }
    let names: Vec<String> = match value.extract::<String>() {
        Ok(text) => text.split(',').map(|s| s.trim().to_owned()).collect(),
        Err(_) => value.extract::<Vec<String>>().map_err(|_| {
            PyValueError::new_err("sensitivity must be a sequence of parameter names (str)")
        })?,
    };
    if names.iter().any(String::is_empty) {
        return Err(PyValueError::new_err(format!(
            "sensitivity: empty parameter name in {names:?}"
        )));
    }
    Ok(names)
}

/// Whether `text` is a model file: a TOML document whose `model` is a table.
fn looks_like_model_file(text: &str) -> bool {
    text.parse::<toml::Table>()
        .is_ok_and(|doc| matches!(doc.get("model"), Some(Value::Table(_))))
}

/// One parameter's description for Python.
struct ParameterRow {
    name: String,
    symbol: String,
    unit: String,
    kind: String,
    description: String,
}

/// A model's description as a dict (name, description, coordinates,
/// boundary pieces, number of constraint forms, parameters with their
/// defaults, the default scenario): what `diracvi.Model` is built from.
fn model_dict<'py>(
    py: Python<'py>,
    description: &str,
    rows: Vec<ParameterRow>,
    defaults: Scenario,
) -> PyResult<Bound<'py, PyDict>> {
    let info = describe(&defaults).map_err(|e| model_error(py, e))?;
    let params = PyList::empty(py);
    for p in rows {
        let d = PyDict::new(py);
        let default = match defaults.parameters.get(&p.name) {
            Some(v) => toml_to_py(py, v)?,
            None => py.None().into_bound(py),
        };
        d.set_item("name", p.name)?;
        d.set_item("symbol", p.symbol)?;
        d.set_item("unit", p.unit)?;
        d.set_item("kind", p.kind)?;
        d.set_item("description", p.description)?;
        d.set_item("default", default)?;
        params.append(d)?;
    }
    let d = PyDict::new(py);
    d.set_item("name", defaults.model.clone())?;
    d.set_item("description", description)?;
    d.set_item("coordinates", info.coordinates)?;
    d.set_item("boundary_pieces", info.boundary_names)?;
    d.set_item("constraints", info.constraints)?;
    d.set_item("parameters", params)?;
    d.set_item("defaults", Bound::new(py, PyScenario { inner: defaults })?)?;
    Ok(d)
}

/// The catalogue: one dict per model (name, description, coordinates,
/// parameters with their defaults, units and meanings), in registry order.
#[pyfunction]
pub fn models(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for m in catalogue() {
        let defaults = Scenario::defaults(m.name).map_err(|e| model_error(py, e))?;
        let rows = diracvi_models::parameters(m.name)
            .map_err(|e| model_error(py, e))?
            .iter()
            .map(|p| ParameterRow {
                name: p.name.to_string(),
                symbol: p.symbol.to_string(),
                unit: p.unit.to_string(),
                kind: p.kind.expected().to_string(),
                description: p.description.to_string(),
            })
            .collect();
        out.append(model_dict(py, m.description, rows, defaults)?)?;
    }
    Ok(out)
}

/// The model of a scenario read from a model file, as a dict like the
/// entries of [`models`], with the scenario as its defaults. Parameters of
/// a model file carry no symbol, unit or meaning: the name stands for all.
#[pyfunction]
pub fn file_model<'py>(py: Python<'py>, scenario: &PyScenario) -> PyResult<Bound<'py, PyDict>> {
    let Some(file) = scenario.inner.file.clone() else {
        return Err(PyValueError::new_err(format!(
            "scenario of '{}' was not read from a model file",
            scenario.inner.model
        )));
    };
    let rows = file
        .parameters
        .iter()
        .map(|(name, _)| ParameterRow {
            name: name.clone(),
            symbol: name.clone(),
            unit: String::new(),
            kind: "a number".to_string(),
            description: String::new(),
        })
        .collect();
    model_dict(py, &file.description, rows, scenario.inner.clone())
}

/// Where the walls of a result's x–y panel (`RunResult.walls`) come from.
pub enum Walls {
    /// Traced from the scenario on first access (a model file's curved
    /// boundary is traced on a grid around the path: work an ensemble
    /// member that is never drawn does not pay).
    Later(Scenario),
    /// Known already (none for a model without an x–y plane).
    Known(Vec<Shape>),
}

impl Walls {
    /// The walls of a run of `sc` over `coordinates`: later from the
    /// scenario when it has an x–y plane, none otherwise.
    pub fn of(sc: &Scenario, coordinates: &[String]) -> Self {
        if has_plane(sc, coordinates) {
            Walls::Later(sc.clone())
        } else {
            Walls::Known(Vec::new())
        }
    }
}

/// A full run as a `diracvi.RunResult`: the recorded steps as arrays, the
/// impact table, the summary and the walls of the x–y panel.
pub fn run_result<'py>(
    py: Python<'py>,
    model: &str,
    coordinates: &[String],
    records: RecordBuffer,
    outcome: &RunOutcome,
    summary: &Summary,
    walls: Walls,
) -> PyResult<Bound<'py, PyAny>> {
    let n = coordinates.len();
    let d = PyDict::new(py);
    match walls {
        Walls::Later(sc) => {
            d.set_item("_walls_scenario", Bound::new(py, PyScenario { inner: sc })?)?
        }
        Walls::Known(shapes) => d.set_item("_walls", shape_list(py, &shapes)?)?,
    }
    d.set_item("model", model)?;
    d.set_item("coordinates", coordinates)?;
    d.set_item("k", indices(py, records.k))?;
    d.set_item("t", vector(py, records.t))?;
    d.set_item("q", matrix(py, records.q, n)?)?;
    d.set_item("p", matrix(py, records.p, n)?)?;
    d.set_item("energy", vector(py, records.energy))?;
    d.set_item(
        "constraint_residual",
        vector(py, records.constraint_residual),
    )?;
    d.set_item("impacts", impact_table(py, &outcome.impacts, coordinates)?)?;
    d.set_item("summary", summary_dict(py, summary)?)?;
    if let Some(tape) = &outcome.tangents {
        let (rows, cols) = (
            tape.initial.nrows(),
            tape.initial.nrows() + tape.parameters.len(),
        );
        let mut flat: Vec<f64> = Vec::with_capacity(tape.steps.len() * rows * cols);
        for step in &tape.steps {
            for i in 0..rows {
                flat.extend(step.row(i).iter());
            }
        }
        let array = PyArray1::from_vec(py, flat).reshape([tape.steps.len(), rows, cols])?;
        d.set_item("tangents", array)?;
        let mut initial: Vec<f64> = Vec::with_capacity(rows * tape.parameters.len());
        for i in 0..rows {
            initial.extend(tape.initial.row(i).iter());
        }
        let initial = PyArray1::from_vec(py, initial).reshape([rows, tape.parameters.len()])?;
        d.set_item("tangent_initial", initial)?;
    }
    make(py, "RunResult", &d)
}
