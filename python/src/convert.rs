//! Conversions between Python values and the Rust types: override values to
//! the strings `Scenario::set` parses, run results to numpy arrays and dicts
//! (wrapped in the result classes of `diracvi._results`).

use crate::errors::model_error;
use diracvi_models::{Scenario, Shape};
use diracvi_run::{ImpactRecord, ModelSummary, RunOutcome, Summary, ToleranceChoice};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

/// A float as `Scenario::set` reads it back exactly (`{:?}` is the shortest
/// representation that round-trips).
fn float_text(x: f64) -> String {
    format!("{x:?}")
}

/// A Python value as the text `Scenario::set(key, text)` parses: `None` →
/// `none`, `bool` → `true`/`false`, `int` → digits, `float` (and anything
/// with `__float__`) → its exact shortest form, `str` as is, a sequence of
/// numbers (list, tuple, 1-d array) → `[x, y, …]`.
///
/// # Errors
/// `TypeError` for anything else.
pub fn set_text(key: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    if value.is_none() {
        return Ok("none".into());
    }
    if value.is_instance_of::<PyBool>() {
        return Ok(if value.is_truthy()? { "true" } else { "false" }.into());
    }
    if value.is_instance_of::<PyString>() {
        return value.extract::<String>();
    }
    if value.is_instance_of::<PyInt>() {
        return Ok(value.str()?.to_string());
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(float_text(value.extract::<f64>()?));
    }
    if let Ok(x) = value.extract::<f64>() {
        return Ok(float_text(x));
    }
    if let Ok(xs) = value.extract::<Vec<f64>>() {
        let parts: Vec<String> = xs.into_iter().map(float_text).collect();
        return Ok(format!("[{}]", parts.join(", ")));
    }
    // numpy arrays and other iterables of numbers.
    if let Ok(iter) = value.try_iter() {
        let xs: PyResult<Vec<f64>> = iter.map(|x| x.and_then(|x| x.extract::<f64>())).collect();
        if let Ok(xs) = xs {
            let parts: Vec<String> = xs.into_iter().map(float_text).collect();
            return Ok(format!("[{}]", parts.join(", ")));
        }
    }
    Err(PyTypeError::new_err(format!(
        "'{key}': cannot use a value of type '{}' (expected a number, bool, str, None or a sequence of numbers)",
        value.get_type().name()?
    )))
}

/// A `(rows, cols)` float array from row-major data.
pub fn matrix<'py>(py: Python<'py>, data: Vec<f64>, cols: usize) -> PyResult<Bound<'py, PyAny>> {
    let rows = data.len().checked_div(cols).unwrap_or(0);
    Ok(PyArray1::from_vec(py, data)
        .reshape([rows, cols])?
        .into_any())
}

/// A 1-d float array.
pub fn vector<'py>(py: Python<'py>, data: Vec<f64>) -> Bound<'py, PyAny> {
    PyArray1::from_vec(py, data).into_any()
}

/// A 1-d int64 array.
pub fn indices<'py>(py: Python<'py>, data: impl IntoIterator<Item = usize>) -> Bound<'py, PyAny> {
    let v: Vec<i64> = data
        .into_iter()
        .map(|k| i64::try_from(k).unwrap_or(i64::MAX))
        .collect();
    PyArray1::from_vec(py, v).into_any()
}

/// Call `diracvi._results.<class>(**kwargs)`.
pub fn make<'py>(
    py: Python<'py>,
    class: &str,
    kwargs: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    py.import("diracvi._results")?
        .getattr(class)?
        .call((), Some(kwargs))
}

/// The impacts as a `diracvi.ImpactTable`.
pub fn impact_table<'py>(
    py: Python<'py>,
    impacts: &[ImpactRecord],
    coordinates: &[String],
) -> PyResult<Bound<'py, PyAny>> {
    let n = coordinates.len();
    let d = PyDict::new(py);
    d.set_item("coordinates", coordinates)?;
    d.set_item("step", indices(py, impacts.iter().map(|i| i.step)))?;
    d.set_item("t", vector(py, impacts.iter().map(|i| i.t).collect()))?;
    d.set_item(
        "alpha",
        vector(py, impacts.iter().map(|i| i.alpha).collect()),
    )?;
    d.set_item("piece", indices(py, impacts.iter().map(|i| i.piece)))?;
    let rows = |f: fn(&ImpactRecord) -> &[f64]| -> Vec<f64> {
        impacts.iter().flat_map(|i| f(i).iter().copied()).collect()
    };
    d.set_item("q", matrix(py, rows(|i| &i.q), n)?)?;
    d.set_item("p_before", matrix(py, rows(|i| &i.p_before), n)?)?;
    d.set_item("p_after", matrix(py, rows(|i| &i.p_after), n)?)?;
    d.set_item(
        "energy_before",
        vector(py, impacts.iter().map(|i| i.energy_before).collect()),
    )?;
    d.set_item(
        "energy_after",
        vector(py, impacts.iter().map(|i| i.energy_after).collect()),
    )?;
    make(py, "ImpactTable", &d)
}

/// The summary of a run of `sc`: the CLI's `--summary json` less `out`,
/// `plot` and `animate`, with the choice of a run with a tolerance.
pub fn scenario_summary(
    sc: &Scenario,
    info: &ModelSummary,
    o: &RunOutcome,
    energy_tolerance: f64,
    tolerance: Option<&ToleranceChoice>,
) -> Summary {
    let data = Summary::new(sc, info, o, energy_tolerance);
    match tolerance {
        Some(choice) => data.with_tolerance(choice),
        None => data,
    }
}

/// A run summary as a dict (the CLI's and `diracvi_run::run_system`'s
/// serialization of `diracvi_run::Summary`: the shortest round-trip float
/// text reads back to the same bits).
pub fn summary_dict<'py>(py: Python<'py>, data: &Summary) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(data)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// Whether a run of `sc` over `coordinates` has walls to draw in the x–y
/// plane: coordinates named `x` and `y`, not a circuit (the walls
/// themselves are computed on first access to `RunResult.walls`).
pub fn has_plane(sc: &Scenario, coordinates: &[String]) -> bool {
    sc.circuit.is_none()
        && coordinates.iter().any(|c| c == "x")
        && coordinates.iter().any(|c| c == "y")
}

/// The walls of the x–y panel of `RunResult.plot()`, as dicts: those the
/// CLI's `--plot` and `--animate` draw ([`Scenario::walls_around`] the
/// recorded path of the coordinates `x` and `y` and the impact points), one
/// dict per shape — `{"kind": "line", "point": [x, y], "direction": [dx,
/// dy]}`, `{"kind": "circle", "center": [x, y], "radius": r}`, `{"kind":
/// "polyline", "points": [[x, y], …], "closed": bool}`, `{"kind": "dot",
/// "point": [x, y]}`. Empty for a model without coordinates `x` and `y`,
/// or without walls. `q` holds the recorded rows, then the impact points,
/// `coordinates.len()` numbers each.
pub fn plane_walls<'py>(
    py: Python<'py>,
    sc: &Scenario,
    coordinates: &[String],
    q: &[f64],
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    if !has_plane(sc, coordinates) {
        return Ok(list);
    }
    let at = |name: &str| coordinates.iter().position(|c| c == name);
    let (Some(ix), Some(iy)) = (at("x"), at("y")) else {
        return Ok(list);
    };
    let n = coordinates.len();
    let path = q.chunks_exact(n).map(|row| [row[ix], row[iy]]);
    let walls = sc.walls_around(path).map_err(|e| model_error(py, e))?;
    shape_list(py, &walls)
}

/// Shapes as the dicts of `RunResult.walls` (see [`plane_walls`]).
pub fn shape_list<'py>(py: Python<'py>, shapes: &[Shape]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for w in shapes {
        let d = PyDict::new(py);
        match w {
            Shape::Line { point, direction } => {
                d.set_item("kind", "line")?;
                d.set_item("point", point.to_vec())?;
                d.set_item("direction", direction.to_vec())?;
            }
            Shape::Circle { center, radius } => {
                d.set_item("kind", "circle")?;
                d.set_item("center", center.to_vec())?;
                d.set_item("radius", radius)?;
            }
            Shape::Polyline { points, closed } => {
                d.set_item("kind", "polyline")?;
                let points: Vec<Vec<f64>> = points.iter().map(|p| p.to_vec()).collect();
                d.set_item("points", points)?;
                d.set_item("closed", closed)?;
            }
            Shape::Dot(point) => {
                d.set_item("kind", "dot")?;
                d.set_item("point", point.to_vec())?;
            }
        }
        list.append(d)?;
    }
    Ok(list)
}
