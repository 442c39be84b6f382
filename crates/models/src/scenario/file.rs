//! Scenarios whose model was read from a model file: the file's parameters,
//! `[run]` and `[initial]` sections become the scenario's values, keys are
//! overridden as for catalogued models, and the scenario prints back as a
//! model file.

use super::{
    InitialData, RUN_KEYS, Scenario, check_end_time, check_length, check_step, parse_constraint,
    parse_discretization, parse_number, run_setup, set_run_key,
};
use crate::file_model::{FileModel, FileText};
use crate::sized_file_model::{self, FileModelVisitor, SizedFileModel};
use crate::{
    ConstraintDiscretization, Discretization, DynRunSetup, ModelError, ModelVisitor,
    check_initial_named,
};
use diracvi_expr::{CompiledModel, InitialState, InitialValues, ModelFile, RunSettings};
use nalgebra::DVector;
use std::sync::Arc;
use toml::{Table, Value};

/// Time step of a model file without `run.h` (s).
pub(super) const DEFAULT_H: f64 = 1e-3;
/// End time of a model file without `run.t_end` (s).
pub(super) const DEFAULT_T_END: f64 = 1.0;
/// Discretization of a model file without `run.discretization`: the
/// second-order, symmetric choice.
const DEFAULT_DISCRETIZATION: Discretization = Discretization::Midpoint;
/// Discrete constraint of a model file without `run.constraint`.
const DEFAULT_CONSTRAINT: ConstraintDiscretization = ConstraintDiscretization::Midpoint;

/// The scenario of a model file (see [`Scenario::from_model_file`]).
pub(super) fn scenario(file: ModelFile) -> Result<Scenario, ModelError> {
    let run = &file.run;
    let discretization = match &run.discretization {
        Some(d) => parse_discretization(d)?,
        None => DEFAULT_DISCRETIZATION,
    };
    let constraint = match &run.constraint {
        Some(c) => parse_constraint(c)?,
        None => DEFAULT_CONSTRAINT,
    };
    let compiled = file.compile(&[])?;
    let InitialValues { q, v, .. } = file.initial_values(&compiled, None)?;
    let initial = InitialData { q, v };
    Ok(Scenario {
        model: file.name.clone(),
        h: run.h.unwrap_or(DEFAULT_H),
        t_end: run.t_end.unwrap_or(DEFAULT_T_END),
        tol: run.tol,
        discretization,
        constraint,
        // a parameter written as an expression follows the others unless set
        parameters: file
            .parameters
            .iter()
            .filter(|(name, _)| !is_derived(&file, name))
            .map(|(name, value)| (name.clone(), Value::Float(*value)))
            .collect::<Table>(),
        initial,
        file: Some(Arc::new(file)),
        system: None,
        circuit: None,
    })
}

/// Whether parameter `name` is written as an expression in `file`.
fn is_derived(file: &ModelFile, name: &str) -> bool {
    file.parameter_expressions.iter().any(|(n, _)| n == name)
}

/// The file's initial data evaluated with the scenario's parameters (and
/// its velocities marked `"solve"` solved, at `q` when given), or `None`
/// when that fails.
fn file_initial(sc: &Scenario, file: &ModelFile, q: Option<&[f64]>) -> Option<InitialValues> {
    let compiled = file.compile(&overrides(sc)).ok()?;
    file.initial_values(&compiled, q).ok()
}

/// Whether the scenario's `q(0)` and `v(0)` are still the file's: `q` as
/// the file writes it, `v` as the file writes it at the scenario's `q`
/// (velocities marked `"solve"` solved there).
pub(crate) fn follows(sc: &Scenario, file: &ModelFile) -> (bool, bool) {
    let q = file_initial(sc, file, None).is_some_and(|i| i.q == sc.initial.q);
    let v = file_initial(sc, file, Some(&sc.initial.q)).is_some_and(|i| i.v == sc.initial.v);
    (q, v)
}

/// The velocities of a file scenario solved from `A(q0) v0 = 0` (names
/// `<coord>_dot`), when the scenario's `v(0)` is still the file's at its
/// `q(0)` (not replaced with `--set v=…`).
pub(super) fn solved_velocities(sc: &Scenario, file: &ModelFile) -> Vec<String> {
    let marked = file
        .initial
        .as_ref()
        .is_some_and(|i| !i.solved().is_empty());
    if !marked {
        return Vec::new();
    }
    match file_initial(sc, file, Some(&sc.initial.q)) {
        Some(init) if init.v == sc.initial.v => init
            .solved
            .iter()
            .map(|&i| format!("{}_dot", file.coordinates[i]))
            .collect(),
        _ => Vec::new(),
    }
}

/// The scenario's parameter values as compile overrides.
pub(crate) fn overrides(sc: &Scenario) -> Vec<(String, f64)> {
    sc.parameters
        .iter()
        .filter_map(|(name, value)| value.as_float().map(|v| (name.clone(), v)))
        .collect()
}

/// The file's expressions compiled with the scenario's parameters.
pub(super) fn compile(sc: &Scenario, file: &ModelFile) -> Result<Arc<CompiledModel>, ModelError> {
    Ok(Arc::new(file.compile(&overrides(sc))?))
}

/// [`Scenario::set`] for a model file.
pub(super) fn set_key(
    sc: &Scenario,
    file: &ModelFile,
    key: &str,
    value: &str,
) -> Result<Scenario, ModelError> {
    let mut out = sc.clone();
    let raw = value.trim();
    // which initial data still follow the file (not set with `q=…`, `v=…`)
    let (q_follows, v_follows) = follows(sc, file);
    if file.parameters.iter().any(|(name, _)| name == key) {
        let v = parse_number(key, raw)?;
        out.parameters.insert(key.to_string(), Value::Float(v));
        // the file's expressions must still compile (finite constants), and
        // initial data written as expressions or solved follow the parameters
        let compiled = compile(&out, file)?;
        if q_follows {
            out.initial.q = file.initial_values(&compiled, None)?.q;
        }
        if v_follows {
            out.initial.v = file.initial_values(&compiled, Some(&out.initial.q))?.v;
        }
        return Ok(out);
    }
    if key == "constraint" && parse_constraint(raw)? == ConstraintDiscretization::Model {
        return Err(ModelError::IllTypedParameter {
            key: key.to_string(),
            value: raw.to_string(),
            expected: "retraction or midpoint (a model file has no discrete constraint of its own)"
                .into(),
        });
    }
    if set_run_key(&mut out, key, raw, file.n())? {
        // velocities solved from the constraints are solved again at a new q
        let solves = file
            .initial
            .as_ref()
            .is_some_and(|i| !i.solved().is_empty());
        if key == "q" && v_follows && solves {
            let compiled = compile(&out, file)?;
            out.initial.v = file.initial_values(&compiled, Some(&out.initial.q))?.v;
        }
        return Ok(out);
    }
    Err(ModelError::UnknownParameter {
        model: sc.model.clone(),
        key: key.to_string(),
        valid: keys(file),
    })
}

/// The keys [`Scenario::set`] accepts for a model file.
pub(super) fn keys(file: &ModelFile) -> Vec<String> {
    file.parameters
        .iter()
        .map(|(name, _)| name.clone())
        .chain(RUN_KEYS.iter().map(|k| k.to_string()))
        .collect()
}

/// The model file with the scenario's parameters, run settings and initial
/// data (what [`Scenario::to_toml`] prints).
pub(super) fn to_model_file(sc: &Scenario, file: &ModelFile) -> ModelFile {
    let mut out = file.clone();
    let compiled = compile(sc, file).ok();
    for (name, value) in &mut out.parameters {
        if let Some(v) = sc.parameters.get(name.as_str()).and_then(Value::as_float) {
            *value = v;
            // set: the number replaces the expression
            out.parameter_expressions.retain(|(n, _)| n != name);
        } else if let Some(v) = compiled.as_ref().and_then(|c| c.parameter(name)) {
            *value = v;
        }
    }
    // `tol` and `h` are exclusive in a file: with a tolerance, `h` (which
    // only seeds the pilot runs) is left to its default
    out.run = RunSettings {
        h: sc.tol.is_none().then_some(sc.h),
        tol: sc.tol,
        t_end: Some(sc.t_end),
        discretization: Some(sc.discretization.to_string()),
        constraint: Some(sc.constraint.to_string()),
    };
    // initial data as the file writes them while they are still the file's
    let numbers = InitialState::numbers(&sc.initial.q, &sc.initial.v);
    out.initial = match &file.initial {
        Some(spec) => {
            let (q_follows, v_follows) = follows(sc, file);
            Some(InitialState {
                q: if q_follows { spec.q.clone() } else { numbers.q },
                v: if v_follows { spec.v.clone() } else { numbers.v },
            })
        }
        None => Some(numbers),
    };
    out
}

/// [`Scenario::visit_dyn`] for a model file: compile with the scenario's
/// parameters, check the setup (lengths, `h`, `t_end`, initial data), visit.
pub(super) fn with_dyn_model(
    sc: &Scenario,
    file: &ModelFile,
    f: &mut super::DynModelFn<'_>,
) -> Result<(), ModelError> {
    let (model, setup) = dyn_model(sc, file)?;
    f(&crate::DynModel::new(&model), &setup);
    Ok(())
}

/// The model file compiled with the scenario's parameters as a
/// [`FileModel`], and its checked setup (lengths, `h`, `t_end`, initial
/// data).
pub(crate) fn dyn_model(
    sc: &Scenario,
    file: &ModelFile,
) -> Result<(FileModel, DynRunSetup), ModelError> {
    let text = FileText {
        description: file.description.clone(),
        boundaries: file.boundaries.clone(),
    };
    let mut model = FileModel::new(compile(sc, file)?, Arc::new(text));
    if let Some(arc) = &sc.file {
        let (scenario, file) = (sc.clone(), arc.clone());
        model = model.with_parameters(
            arc.clone(),
            overrides(sc),
            Box::new(move || follows(&scenario, &file)),
        );
    }
    let n = file.n();
    check_length("q", n, sc.initial.q.len())?;
    check_length("v", n, sc.initial.v.len())?;
    check_step(sc.h)?;
    check_end_time(sc.t_end)?;
    let q0 = DVector::from_column_slice(&sc.initial.q);
    let v0 = DVector::from_column_slice(&sc.initial.v);
    check_initial_named(&model, &q0, &v0)?;
    let setup = DynRunSetup {
        q0,
        v0,
        h: sc.h,
        t_end: sc.t_end,
        discretization: sc.discretization,
        constraint: sc.constraint,
    };
    Ok((model, setup))
}

/// [`Scenario::visit`] for a model file of one of the sizes of
/// [`FAST_FILE_SIZES`](crate::FAST_FILE_SIZES): compile with the scenario's
/// parameters, check the setup, visit the [`SizedFileModel`]; `None` for
/// another size (it runs on the run-time-sized core only).
pub(super) fn visit<V: ModelVisitor>(
    sc: &Scenario,
    file: &ModelFile,
    visitor: V,
) -> Result<Option<V::Output>, ModelError> {
    struct Run<'a, V> {
        sc: &'a Scenario,
        visitor: V,
    }
    impl<V: ModelVisitor> FileModelVisitor for Run<'_, V> {
        type Output = Result<V::Output, ModelError>;
        fn visit<const N: usize, const M: usize>(
            self,
            model: SizedFileModel<N, M>,
        ) -> Self::Output {
            let setup = run_setup(&model, self.sc)?;
            Ok(self.visitor.visit(&model, &setup))
        }
    }
    // The compile-time core is autonomous: a file with forces or drives
    // runs on the run-time core (docs/theory.md §8.8).
    if !file.forces.is_empty() || !file.drives.is_empty() {
        return Ok(None);
    }
    let text = FileText {
        description: file.description.clone(),
        boundaries: file.boundaries.clone(),
    };
    sized_file_model::dispatch(compile(sc, file)?, Arc::new(text), Run { sc, visitor })?.transpose()
}
