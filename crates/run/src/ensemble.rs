//! Ensembles of a system written in the user's own crate: many runs of any
//! [`NamedDynSystem`] (parameter variations: one model value per member;
//! initial-state, step or end-time variations: one [`DynRunSetup`] per
//! member) on worker threads, each member's outcome and [`Summary`] those
//! of [`run_system`] on its own, bit for bit (members share nothing; the
//! wall time aside).
//!
//! The counterpart, for a user's system, of the Python package's
//! `diracvi.ensemble` over catalogue models and model files (which runs
//! [`Scenario`](crate::Scenario)s with rayon). This one spawns scoped
//! standard-library threads, so `diracvi-run` compiles no thread pool.

use crate::{
    DEFAULT_ENERGY_TOLERANCE, Discard, RecordBuffer, RecordSink, RunError, RunOutcome, RunPlan,
    Summary, describe_system, execute_system,
};
use diracvi_models::{DynRunSetup, NamedDynSystem};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Integrate a system of the user's own crate as `plan` says and summarise
/// the run as `diracvi run --summary json` does (warnings for an energy
/// drift above `energy_tolerance`, relative to the energy scale, included):
/// [`describe_system`], [`execute_system`] and [`Summary::of_run`] in one
/// call.
///
/// # Errors
/// As [`execute_system`].
pub fn run_system<Mo: NamedDynSystem>(
    model: &Mo,
    setup: &DynRunSetup,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
    energy_tolerance: f64,
) -> Result<(Summary, RunOutcome), RunError> {
    let info = describe_system(model, setup)?;
    let outcome = execute_system(model, setup, plan, sink)?;
    let summary = Summary::of_run(
        model.name(),
        &info,
        setup.h,
        setup.t_end,
        &outcome,
        energy_tolerance,
    );
    Ok((summary, outcome))
}

/// How [`ensemble_system`] runs its members.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnsembleOptions {
    /// Worker threads; 0: one per available core (at most one per member).
    pub threads: usize,
    /// Keep each member's recorded trajectory (the plan's `every` says
    /// which steps) in [`SystemRun::records`]; otherwise nothing is
    /// recorded.
    pub keep_trajectory: bool,
    /// The summaries' energy-drift warning threshold (relative).
    pub energy_tolerance: f64,
}

impl Default for EnsembleOptions {
    /// All cores, no trajectories, [`DEFAULT_ENERGY_TOLERANCE`].
    fn default() -> Self {
        Self {
            threads: 0,
            keep_trajectory: false,
            energy_tolerance: DEFAULT_ENERGY_TOLERANCE,
        }
    }
}

/// One member's run in an ensemble.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemRun {
    /// The summary, as [`run_system`] gives it.
    pub summary: Summary,
    /// The outcome: final state, impacts, energies, statistics.
    pub outcome: RunOutcome,
    /// The recorded trajectory, when [`EnsembleOptions::keep_trajectory`].
    pub records: Option<RecordBuffer>,
}

/// Run every member `(model, setup)` with `plan` on worker threads: result
/// `k` is member `k`'s, equal to [`run_system`] of that member alone (with
/// a [`RecordBuffer`] sink when trajectories are kept, [`Discard`]
/// otherwise). A member that fails does not stop the others.
///
/// Members are handed out one at a time to whichever thread is free, so
/// members of very different cost balance.
pub fn ensemble_system<Mo: NamedDynSystem>(
    members: &[(Mo, DynRunSetup)],
    plan: &RunPlan,
    options: EnsembleOptions,
) -> Vec<Result<SystemRun, RunError>> {
    let threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    }
    .min(members.len())
    .max(1);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<SystemRun, RunError>>>> =
        Mutex::new(members.iter().map(|_| None).collect());
    let work = || {
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some((model, setup)) = members.get(k) else {
                break;
            };
            let result = run_member(model, setup, plan, options);
            results
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)[k] = Some(result);
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(work);
        }
        work();
    });
    results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .into_iter()
        .map(|r| r.expect("every member was run"))
        .collect()
}

/// One member of [`ensemble_system`].
fn run_member<Mo: NamedDynSystem>(
    model: &Mo,
    setup: &DynRunSetup,
    plan: &RunPlan,
    options: EnsembleOptions,
) -> Result<SystemRun, RunError> {
    let mut plan = plan.clone();
    let mut buffer = RecordBuffer::new();
    let sink: &mut dyn RecordSink = if options.keep_trajectory {
        &mut buffer
    } else {
        plan.every = 0;
        &mut Discard
    };
    let (summary, outcome) = run_system(model, setup, plan, sink, options.energy_tolerance)?;
    Ok(SystemRun {
        summary,
        outcome,
        records: options.keep_trajectory.then_some(buffer),
    })
}
