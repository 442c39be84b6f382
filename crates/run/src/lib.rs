//! # diracvi-run
//!
//! Running a [`Scenario`] by name: the one place that turns a scenario and a
//! [`RunPlan`] (stepper, impact law, direction of time, number of steps,
//! recording interval) into an integration, for every catalogued model, and
//! hands back dimension-erased results. The command-line program and the
//! Python package both run through [`execute`], so the two agree bit for bit.
//!
//! * [`RunPlan`] says how to integrate: the one-step map ([`Stepper`]: the
//!   (±) discrete Lagrange–Dirac stepper or the (±) nonholonomic Hamiltonian
//!   stepper, docs/theory.md §3), the impact law ([`Impacts`]: the elastic
//!   law of the stepper's family, \[VCI\] Theorem 3.1 and its Hamiltonian
//!   counterpart, docs/theory.md §4, or an error at the first crossing), the
//!   [`Direction`] of time, the number of steps ([`step_count`]) and every
//!   how many steps a record is produced.
//! * Recorded steps stream into a [`RecordSink`] as they are produced
//!   ([`RecordBuffer`] keeps them in vectors, [`Discard`] drops them), so a
//!   long run needs no trajectory in memory unless asked (docs/theory.md §6).
//! * [`RunOutcome`] is the summary over *every* step (energies, constraint
//!   residual, final state, solver statistics) plus every impact as an
//!   [`ImpactRecord`].
//! * [`RunError`] separates input errors ([`RunError::Model`],
//!   [`RunError::NoHamiltonian`], [`RunError::TooManySteps`],
//!   [`RunError::StepsOverLimit`],
//!   [`RunError::InitialState`]) from numerical failures during the
//!   integration ([`RunError::Integration`]).
//!
//! ```
//! use diracvi_models::Scenario;
//! use diracvi_run::{RecordBuffer, RunPlan, execute, step_count};
//!
//! let mut scenario = Scenario::defaults("particle").unwrap();
//! scenario.set("t_end", "2").unwrap();
//! let steps = step_count(&scenario, None).unwrap();
//! let mut records = RecordBuffer::new();
//! let outcome = execute(&scenario, RunPlan::new(steps).every(100), &mut records).unwrap();
//! assert_eq!(outcome.steps, steps);
//! assert_eq!(records.len(), steps / 100 + 1);
//! assert!(!outcome.impacts.is_empty());
//! assert!((outcome.final_t - 2.0).abs() < 1e-12);
//! ```
#![doc = include_str!("../../../docs/dependent-profile.md")]

mod circuit;
mod drive;
mod dyn_runner;
mod error;
mod outcome;
mod plan;
mod reduced;
mod runner;
mod sink;
mod summary;

pub use diracvi_discrete_dirac::{Composition, Direction, StepError};
pub use diracvi_impact::ImpactError;
pub use error::RunError;
pub use outcome::{Core, ImpactLaw, ImpactRecord, Method, ReductionSummary, RunOutcome};
pub use plan::{
    Impacts, MAX_STEPS, NotAnOrder, Order, RunPlan, Stepper, UnknownChoice, step_count,
};
pub use runner::{ModelSummary, describe, execute, execute_with_progress};
pub use sink::{Discard, RecordBuffer, RecordSink, RecordView};
pub use summary::{
    DEFAULT_ENERGY_TOLERANCE, EnergyJson, FinalStateJson, JacobianJson, MethodJson, ReductionJson,
    StatisticsJson, Summary, solved_velocities_note, symplecticity_defect, warnings,
};

#[doc(no_inline)]
pub use diracvi_models::Scenario;
