//! The energy accounting of a system run (docs/systems.md, docs/theory.md
//! §15.1): a scenario assembled from a system file
//! ([`Scenario::from_system`]) keeps its parts and ports, and every run of
//! it — the CLI's, Python's, an ensemble member's — feeds each step to a
//! [`diracvi_system::Accounting`] and reports the parts' energies and the
//! ports' work in its outcome ([`RunOutcome::accounting`]) and summary
//! (keys `parts`, `ports`, `accounting`).
//!
//! The accounting reads every step of a run of the Lagrange–Dirac stepper
//! of order 2, forward or backward (its port impulses are the discrete
//! Legendre transforms of that step), and every stage of a composed run
//! (orders 4 and 6: the symmetric midpoint steps of signed durations
//! `γ_i h` it is made of, which the runner passes to the sink,
//! [`RecordSink::stage`]), not reduced; other runs say why they have none
//! ([`PartsAccounting::Skipped`]).

use crate::{RecordSink, RecordView, RunError, RunOutcome, RunPlan, StageView, Stepper};
use diracvi_discrete_dirac::Direction;
use diracvi_models::{Discretization, ModelError, Scenario};
use diracvi_system::{Accounting, AccountingReport, System};

/// What a system run reports of its parts and ports.
#[derive(Debug, Clone, PartialEq)]
pub enum PartsAccounting {
    /// The accounting of every step.
    Done(AccountingReport),
    /// Why the run has none (the summary's warning).
    Skipped(String),
}

/// Run `scenario` (a system's) as `plan` says, with the accounting of its
/// parts and ports when the method allows it: `run` is given the plan to
/// run (recording every step when accounting) and the sink to record to.
pub(crate) fn execute_accounted(
    system: &System,
    scenario: &Scenario,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
    run: impl FnOnce(RunPlan, &mut dyn RecordSink) -> Result<RunOutcome, RunError>,
) -> Result<RunOutcome, RunError> {
    let accounted = plan.stepper == Stepper::Lagrange && !plan.reduce;
    if !accounted {
        let mut outcome = run(plan, sink)?;
        outcome.accounting = Some(PartsAccounting::Skipped(
            "no energy accounting of the parts and ports (summary keys parts, ports): it \
             reads runs of the Lagrange–Dirac stepper, without --reduce"
                .to_owned(),
        ));
        return Ok(outcome);
    }
    // A composed run is read stage by stage: its stages are symmetric
    // midpoint steps, whatever the scenario's map.
    let composed = plan.order.is_composed();
    let overrides: Vec<(String, f64)> = scenario
        .parameters
        .iter()
        .filter_map(|(name, value)| value.as_float().map(|v| (name.clone(), v)))
        .collect();
    let midpoint = composed || scenario.discretization == Discretization::Midpoint;
    let backward = plan.direction == Direction::Backward;
    let accounting = Accounting::new(system, &overrides, scenario.h, midpoint, backward)
        .map_err(|e| RunError::Model(ModelError::from(e)))?;
    let every = plan.every;
    let steps = plan.steps;
    let mut tee = Tee {
        accounting,
        inner: sink,
        every,
        steps,
        composed,
        staged: false,
    };
    let plan = RunPlan {
        stages: composed,
        ..plan.every(1)
    };
    let mut outcome = run(plan, &mut tee)?;
    outcome.accounting = Some(PartsAccounting::Done(tee.accounting.report()));
    Ok(outcome)
}

/// Every step (every stage of a composed run) to the accounting; every
/// `every`-th record (and the last) to the inner sink, as the runner would
/// have given them (none for `every = 0`).
struct Tee<'a> {
    accounting: Accounting,
    inner: &'a mut dyn RecordSink,
    every: usize,
    steps: usize,
    /// A composed run: the accounting reads its stages, and a record
    /// reached without them (the start, the end of a step with an impact)
    /// starts a new chain of stages.
    composed: bool,
    /// Stages seen since the last record.
    staged: bool,
}

impl RecordSink for Tee<'_> {
    fn stage(&mut self, s: &StageView<'_>) {
        self.accounting.stage(s.tau, s.t, s.q, s.p);
        self.staged = true;
    }

    fn record(&mut self, r: &RecordView<'_>) {
        if !self.composed {
            self.accounting.record(r.k, r.t, r.q, r.p, r.energy);
        } else if !std::mem::take(&mut self.staged) {
            self.accounting.start(r.t, r.q, r.p);
        }
        if self.every > 0 && (r.k.is_multiple_of(self.every) || r.k == self.steps) {
            self.inner.record(r);
        }
    }
}
