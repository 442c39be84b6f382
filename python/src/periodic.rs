//! `diracvi.periodic_orbit` and `diracvi.continue_orbit`: the periodic-orbit
//! search and continuation of `diracvi_run` (docs/theory.md §14), the CLI's
//! numbers; results cross as the JSON `diracvi periodic --summary json`
//! prints, which the Python wrappers turn into numpy arrays.

use crate::errors::run_error;
use crate::scenario::PyScenario;
use diracvi_run::{
    PeriodicError, PeriodicOptions, Section, continue_orbit as continue_rust,
    periodic_orbit as orbit_rust, section_piece,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A periodic-orbit error as a Python exception: a run's errors as `run`
/// raises them; no convergence, no return, no period, an equilibrium as
/// `diracvi.NumericalError`; an unknown section or an unsupported request
/// as `diracvi.ModelError` (`kind` the Rust variant's name).
pub fn periodic_error(py: Python<'_>, e: PeriodicError) -> PyErr {
    if let PeriodicError::Run(r) = &e {
        return run_error(py, r, None);
    }
    let kind = format!("{e:?}")
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect::<String>();
    let class = if e.is_numerical() {
        "NumericalError"
    } else {
        "ModelError"
    };
    let build = || -> PyResult<PyErr> {
        let attrs = PyDict::new(py);
        attrs.set_item("kind", kind)?;
        let cls = py.import("diracvi._errors")?.getattr(class)?;
        Ok(PyErr::from_value(cls.call((e.to_string(),), Some(&attrs))?))
    };
    build().unwrap_or_else(|err| err)
}

/// The keyword arguments that say where an orbit closes and when the
/// search has converged (those of ``diracvi.periodic_orbit``).
pub struct SectionArgs<'a, 'py> {
    /// A wall piece (index or name): the orbit closes at its impacts.
    pub section: Option<&'a Bound<'py, PyAny>>,
    /// Which impact with `section` closes the orbit.
    pub impact: usize,
    /// Without `section`: the period (s), rounded to steps.
    pub period: Option<f64>,
    /// Without `section`: the period in steps.
    pub steps: Option<usize>,
    /// Newton's tolerance.
    pub tolerance: f64,
    /// Newton's iterations.
    pub max_iterations: usize,
}

impl SectionArgs<'_, '_> {
    /// The search options for a run of step `h`; `piece` finds a wall
    /// piece by index or name.
    pub fn options(
        &self,
        py: Python<'_>,
        h: f64,
        piece: impl FnOnce(&str) -> Result<usize, PeriodicError>,
    ) -> PyResult<PeriodicOptions> {
        let section = match (self.section, self.period, self.steps) {
            (Some(given), _, _) => {
                let given = match given.extract::<usize>() {
                    Ok(j) => j.to_string(),
                    Err(_) => given.extract::<String>()?,
                };
                Section::Impact {
                    piece: piece(&given).map_err(|e| periodic_error(py, e))?,
                    count: self.impact,
                }
            }
            (None, Some(t), _) => {
                if !(t.is_finite() && t > 0.0) {
                    return Err(PyValueError::new_err(format!(
                        "period must be a finite time > 0, got {t}"
                    )));
                }
                Section::Steps(Some(((t / h).round() as usize).max(1)))
            }
            (None, None, steps) => Section::Steps(steps),
        };
        let mut o = PeriodicOptions::new(section);
        o.tolerance = self.tolerance;
        o.max_iterations = self.max_iterations;
        Ok(o)
    }

    /// The search options for `scenario`, its end time set to `t_end` when
    /// given.
    fn scenario_options(
        &self,
        py: Python<'_>,
        scenario: &mut diracvi_models::Scenario,
        t_end: Option<f64>,
    ) -> PyResult<PeriodicOptions> {
        if let Some(t) = t_end {
            scenario
                .set("t_end", &format!("{t:e}"))
                .map_err(|e| crate::errors::model_error(py, e))?;
        }
        let sc = &*scenario;
        self.options(py, sc.h, |given| section_piece(sc, given))
    }
}

/// The orbit as JSON text (see ``diracvi.periodic_orbit``).
#[pyfunction]
#[pyo3(signature = (scenario, *, section=None, impact=1, period=None, steps=None, tolerance=1e-12, max_iterations=30, t_end=None))]
#[allow(clippy::too_many_arguments)]
pub fn periodic_orbit(
    py: Python<'_>,
    scenario: PyRef<'_, PyScenario>,
    section: Option<&Bound<'_, PyAny>>,
    impact: usize,
    period: Option<f64>,
    steps: Option<usize>,
    tolerance: f64,
    max_iterations: usize,
    t_end: Option<f64>,
) -> PyResult<String> {
    let mut sc = scenario.inner.clone();
    let args = SectionArgs {
        section,
        impact,
        period,
        steps,
        tolerance,
        max_iterations,
    };
    let opts = args.scenario_options(py, &mut sc, t_end)?;
    let h = sc.h;
    let result = py.detach(|| orbit_rust(&sc, &opts, None));
    let orbit = result.map_err(|e| periodic_error(py, e))?;
    Ok(orbit.to_json(h).to_string())
}

/// The branch as JSON text (see ``diracvi.continue_orbit``).
#[pyfunction]
#[pyo3(signature = (scenario, parameter, values, *, section=None, impact=1, period=None, steps=None, tolerance=1e-12, max_iterations=30, t_end=None))]
#[allow(clippy::too_many_arguments)]
pub fn continue_orbit(
    py: Python<'_>,
    scenario: PyRef<'_, PyScenario>,
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
    let mut sc = scenario.inner.clone();
    let args = SectionArgs {
        section,
        impact,
        period,
        steps,
        tolerance,
        max_iterations,
    };
    let opts = args.scenario_options(py, &mut sc, t_end)?;
    let h = sc.h;
    let result = py.detach(|| continue_rust(&sc, parameter, &values, &opts, None));
    let branch = result.map_err(|e| periodic_error(py, e))?;
    Ok(branch.to_json(h).to_string())
}
