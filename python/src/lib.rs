//! # diracvi-python
//!
//! The native part of the Python package `diracvi` (module
//! `diracvi._diracvi`): a thin PyO3 layer over [`diracvi_models::Scenario`]
//! and [`diracvi_run::execute`] — the same runner as the command-line
//! program, so Python runs equal CLI runs bit for bit. No numerics live here:
//! this crate converts arguments, releases the GIL around runs, runs
//! ensembles on all cores with rayon and converts results to numpy arrays.
//!
//! The Python side (`python/diracvi/`) holds the result classes (plain data:
//! numpy arrays and dicts, so they pickle), the exception classes and the
//! type stubs; this module imports them by name.
//!
//! As a Rust library this crate serves the extension modules of other
//! crates: [`own`] exposes a model written in Rust to Python with the same
//! runs, results, ensembles and errors as the catalogue.
//!
//! ## An extension module of your own
//!
//! The crate of such a module (examples/own-model/python is one) is a
//! `cdylib` built by maturin; it depends on this crate and on PyO3 with the
//! package's stable-ABI feature:
//!
//! ```toml
//! [lib]
//! name = "my_models"               # the #[pymodule]'s name
//! crate-type = ["cdylib"]
//!
//! [dependencies]
//! diracvi-python = { path = "…/python" }
//! pyo3 = { version = "0.30", features = ["abi3-py39"] }
//! ```
//!
//! and its `pyproject.toml` names maturin as the build backend and
//! `diracvi` as a dependency (the runs return the package's classes).

#![doc = include_str!("../../docs/dependent-profile.md")]

mod convert;
mod ensemble;
mod errors;
pub mod own;
mod periodic;
mod scenario;

use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyList;

/// The native module `diracvi._diracvi`.
#[pymodule]
#[pyo3(name = "_diracvi")]
fn diracvi_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<scenario::PyScenario>()?;
    m.add_function(wrap_pyfunction!(scenario::models, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::file_model, m)?)?;
    m.add_function(wrap_pyfunction!(ensemble::ensemble, m)?)?;
    m.add_function(wrap_pyfunction!(columns, m)?)?;
    m.add_function(wrap_pyfunction!(plane_walls, m)?)?;
    m.add_function(wrap_pyfunction!(periodic::periodic_orbit, m)?)?;
    m.add_function(wrap_pyfunction!(periodic::continue_orbit, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// The columns of the trajectory CSV and of the impacts CSV for coordinates
/// named `coordinates` (`diracvi_run::trajectory_columns`,
/// `diracvi_run::impact_columns`): the one naming `to_pandas()` shares with
/// `diracvi run --out`.
#[pyfunction]
fn columns(coordinates: Vec<String>) -> (Vec<String>, Vec<String>) {
    (
        diracvi_run::trajectory_columns(&coordinates),
        diracvi_run::impact_columns(&coordinates),
    )
}

/// The walls of the x–y plane a run of `scenario` draws (`RunResult.walls`,
/// computed on its first access): `points` holds the recorded positions and
/// then the impact points, one row of `len(coordinates)` numbers each.
#[pyfunction]
fn plane_walls<'py>(
    py: Python<'py>,
    scenario: &scenario::PyScenario,
    coordinates: Vec<String>,
    points: PyReadonlyArray2<'py, f64>,
) -> PyResult<Bound<'py, PyList>> {
    if points.shape()[1] != coordinates.len() && points.shape()[0] > 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "points have {} columns, not one per coordinate ({})",
            points.shape()[1],
            coordinates.len()
        )));
    }
    let flat: Vec<f64> = points.as_array().iter().copied().collect();
    convert::plane_walls(py, &scenario.inner, &coordinates, &flat)
}
