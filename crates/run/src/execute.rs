//! Running a scenario: which core and runner a [`RunPlan`] takes for a
//! scenario (a circuit, a system with accounting, a reduced run, the
//! compile-time-sized or the run-time-sized core). Above the runners: they
//! do not know of each other.

use crate::dyn_runner::DynRunner;
use crate::reduced::{DynReducedRunner, ReducedRunner};
use crate::runner::{LeanRunner, Runner};
use crate::{RecordSink, RunError, RunOutcome, RunPlan};
use diracvi_models::Scenario;

/// Integrate `scenario` as `plan` says from `t = 0`, feeding every recorded
/// step to `sink`.
///
/// The initial state is `(0, q(0), ∂L/∂v(q(0), v(0)))`; the step and the
/// discretization choices are the scenario's, the number of steps the
/// plan's (see [`step_count`](crate::step_count)).
///
/// # Errors
/// [`RunError::Model`] for an invalid scenario, [`RunError::InitialState`],
/// [`RunError::NoHamiltonian`], and [`RunError::Integration`] for a step
/// that failed.
pub fn execute(
    scenario: &Scenario,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
) -> Result<RunOutcome, RunError> {
    execute_with_progress(scenario, plan, sink, &mut |_| {})
}

/// [`execute`], calling `progress(k)` after step `k` (`k = 1, …, steps`).
///
/// # Errors
/// As [`execute`].
pub fn execute_with_progress(
    scenario: &Scenario,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
    progress: &mut dyn FnMut(usize),
) -> Result<RunOutcome, RunError> {
    if let Some(circuit) = scenario.circuit() {
        return crate::circuit::execute(scenario, &circuit?, plan, sink, progress);
    }
    crate::start::check_consistent_start(scenario)?;
    if plan.account
        && let Some(system) = scenario.system.clone()
    {
        return crate::accounting::execute_accounted(
            &system,
            scenario,
            plan.account(false),
            sink,
            |plan, sink| execute_with_progress(scenario, plan, sink, progress),
        );
    }
    if (plan.jacobian || plan.tangents) && plan.reduce {
        return Err(RunError::JacobianUnsupported {
            model: scenario.model.clone(),
            what: "with --reduce (the reduced flow's tangent map is not built yet)".to_owned(),
        });
    }
    if !plan.sensitivity.is_empty() && plan.reduce {
        return Err(RunError::SensitivityUnsupported {
            model: scenario.model.clone(),
            what: "with --reduce (the reduced flow's tangent map is not built yet)".to_owned(),
        });
    }
    if plan.reduce && scenario.time_dependent() {
        return Err(RunError::TimeDependentUnsupported {
            model: scenario.model.clone(),
            what: "--reduce (reduction by a symmetry takes an autonomous Lagrangian)",
        });
    }
    if plan.reduce && scenario.is_model_file() {
        // model files reduce on the run-time-sized core, whatever their size
        return scenario.visit_dyn_reduced(DynReducedRunner {
            plan,
            sink,
            progress,
        })?;
    }
    if plan.reduce {
        return scenario.visit_reduced(ReducedRunner(Runner {
            plan,
            sink,
            progress,
        }))?;
    }
    // The catalogue (but for the models registered on the run-time-sized
    // core only, `runs_on_compile_time_core`) runs on the compile-time-sized
    // core with every method;
    // model files of the sizes of `FAST_FILE_SIZES` with the default method
    // only (`LeanRunner`); everything else — larger files, the other
    // methods of small files, runs that track derivatives (a catalogued
    // model runs there through `Fixed`) — on the run-time-sized core
    // (docs/theory.md §11.3, §11.5).
    if scenario.fits_compile_time_core() && !plan.tracks_derivatives() {
        let runner = Runner {
            plan: plan.clone(),
            sink,
            progress,
        };
        if !scenario.is_model_file() {
            if let Some(outcome) = scenario.visit_compiled(runner)? {
                return outcome;
            }
        } else if let Ok(lean) = LeanRunner::new(runner)
            && let Some(outcome) = scenario.visit_file(lean)?
        {
            return outcome;
        }
    }
    scenario.visit_dyn(DynRunner {
        plan,
        sink,
        progress,
        momentum: None,
    })?
}
