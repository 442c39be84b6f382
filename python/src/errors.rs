//! Rust errors as the Python exceptions of `diracvi._errors`.
//!
//! | Rust | Python |
//! |---|---|
//! | `ModelError` (any variant), `RunError::{NoHamiltonian, TooManySteps, StepsOverLimit, InitialState}` | `diracvi.ModelError` (a `ValueError`) |
//! | `ModelError::IllTypedParameter` for a Python `str` where a number is needed | `diracvi.ModelTypeError` (a `ModelError` and a `TypeError`) |
//! | `RunError::Integration` with `ImpactError::Step` | `diracvi.StepError` (a `NumericalError`) |
//! | `RunError::Integration`, any other `ImpactError` | `diracvi.ImpactError` (a `NumericalError`) |
//!
//! Every exception carries `kind` (the Rust variant's name), `step` and `t`
//! (for numerical failures) and `run_index` (in ensembles), `None` where
//! they do not apply.

use diracvi_models::ModelError;
use diracvi_run::RunError;
use diracvi_run::UnknownChoice;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::fmt::Debug;

/// The name of an enum variant, from its `Debug` form (`NoConvergence {..}`
/// → `"NoConvergence"`).
fn variant<E: Debug>(e: &E) -> String {
    format!("{e:?}")
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// An instance of `diracvi._errors.<class>` with `message` and keyword
/// attributes, as a `PyErr` (or the error met while building it).
fn raise(py: Python<'_>, class: &str, message: String, attrs: &Bound<'_, PyDict>) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = py.import("diracvi._errors")?.getattr(class)?;
        let instance = cls.call((message,), Some(attrs))?;
        Ok(PyErr::from_value(instance))
    };
    build().unwrap_or_else(|e| e)
}

/// A run error as a Python exception; `run_index` (ensembles) prefixes the
/// message with `run i: ` and is stored on the exception.
pub fn run_error(py: Python<'_>, e: &RunError, run_index: Option<usize>) -> PyErr {
    run_error_as(py, e, run_index, None)
}

/// [`run_error`], raised as `class` instead of the class the error maps to
/// when `as_class` is given.
fn run_error_as(
    py: Python<'_>,
    e: &RunError,
    run_index: Option<usize>,
    as_class: Option<&str>,
) -> PyErr {
    let attrs = PyDict::new(py);
    let message = match run_index {
        Some(i) => format!("run {i}: {e}"),
        None => e.to_string(),
    };
    let (class, kind, step, t) = match e {
        RunError::Model(m) => ("ModelError", variant(m), None, None),
        RunError::Integration { error, .. } => {
            let (step, t) = (Some(error.step), error.error.time());
            match &error.error {
                diracvi_run::ImpactError::Step(s) => ("StepError", variant(s), step, t),
                other => ("ImpactError", variant(other), step, t),
            }
        }
        other => ("ModelError", variant(other), None, None),
    };
    let filled = attrs
        .set_item("kind", kind)
        .and_then(|()| attrs.set_item("step", step))
        .and_then(|()| attrs.set_item("t", t))
        .and_then(|()| attrs.set_item("run_index", run_index));
    if let Err(err) = filled {
        return err;
    }
    raise(py, as_class.unwrap_or(class), message, &attrs)
}

/// A scenario error as `diracvi.ModelError`.
pub fn model_error(py: Python<'_>, e: ModelError) -> PyErr {
    run_error(py, &RunError::Model(e), None)
}

/// A scenario error for a value of the wrong type as
/// `diracvi.ModelTypeError` (a `ModelError` and a `TypeError`).
pub fn model_type_error(py: Python<'_>, e: ModelError) -> PyErr {
    run_error_as(py, &RunError::Model(e), None, Some("ModelTypeError"))
}

/// A bad stepper or impact-law name as `ValueError`.
pub fn choice_error(e: UnknownChoice) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A system file error as `diracvi.ModelError` (kind `SystemFile`).
pub fn system_error(py: Python<'_>, e: &diracvi_system::SystemFileError) -> PyErr {
    let attrs = PyDict::new(py);
    let filled = attrs
        .set_item("kind", "SystemFile")
        .and_then(|()| attrs.set_item("step", None::<usize>))
        .and_then(|()| attrs.set_item("t", None::<f64>))
        .and_then(|()| attrs.set_item("run_index", None::<usize>));
    if let Err(err) = filled {
        return err;
    }
    raise(py, "ModelError", e.to_string(), &attrs)
}
