//! # diracvi-example-own-model-python
//!
//! The bowl of `diracvi-example-own-model`, a model written in Rust, as the
//! Python module `diracvi_bowl` (`pip install ./examples/own-model/python`
//! after `pip install ./python`):
//!
//! ```python
//! import diracvi, diracvi_bowl
//! sc = diracvi_bowl.scenario(params={"R": 1.2}, v=[1.5, 0.5])
//! r = sc.run()                      # a diracvi.RunResult
//! e = diracvi.ensemble(sc, [{"R": 1.0}, {"R": 1.5}])
//! ```
//!
//! The whole exposure is [`diracvi_python::own::PythonModel`]: the model, its
//! default run, the function that runs it (the example crate's concrete
//! `run_with_energy_tolerance`, so the runner compiled there is not
//! compiled again here), its parameters, the wall `plot()` draws and its
//! periodic-orbit search (`diracvi.periodic_orbit`, `diracvi.continue_orbit`).

use diracvi_example_own_model::{Bowl, periodic_orbit, run_with_energy_tolerance};
use diracvi_python::own::PythonModel;
use pyo3::prelude::*;

/// `Err` unless `x` is finite and `> 0`.
fn positive(x: f64) -> Result<f64, String> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err("must be a finite number > 0".into())
    }
}

/// The module `diracvi_bowl`: `scenario(...)` and the class `RustScenario`.
#[pymodule]
fn diracvi_bowl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let bowl = Bowl::default();
    PythonModel::new(bowl, bowl.default_setup(), run_with_energy_tolerance)
        .parameters(
            |b| vec![("m".into(), b.m), ("g".into(), b.g), ("R".into(), b.r)],
            |b, name, x| {
                match name {
                    "m" => b.m = positive(x)?,
                    "R" => b.r = positive(x)?,
                    _ if x.is_finite() => b.g = x,
                    _ => return Err("must be finite".into()),
                }
                Ok(())
            },
        )
        .walls(|b| vec![b.rim()])
        .periodic(periodic_orbit)
        .add_to(m)
}
