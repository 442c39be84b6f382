//! # diracvi-run
//!
//! Running a [`Scenario`] by name, or a system of your own crate
//! ([below](#your-own-model-in-rust)): the one place that turns a scenario and a
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
//! * [`choose_step`] / [`execute_with_tolerance`]: accuracy on request
//!   (`diracvi run --tol`, docs/theory.md §13): the order (2, 4 or 6) and a
//!   fixed step for an error of about a tolerance in the final state and
//!   the impact times, from Richardson estimates of pilot runs; the
//!   [`ToleranceChoice`] goes into the summary with
//!   [`Summary::with_tolerance`].
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
//!
//! ## Your own model in Rust
//!
//! A system written in your own crate gets everything a catalogued model or
//! a model file gets: implement
//! [`DynSystem`](diracvi_geometry::dynamic::DynSystem) (the Lagrangian
//! generic over the AD scalar, the constraint one-forms, the boundary
//! pieces, optionally the Hamiltonian) and [`NamedDynSystem`] (its name and
//! the names of its coordinates and boundary pieces), describe the run as a
//! [`DynRunSetup`] (initial `q` and `v`, `h`, `t_end`, discretization and
//! discrete constraint), and run it:
//!
//! * [`execute_system`] runs it as [`execute`] runs a scenario: the steppers
//!   and impact laws of the [`RunPlan`], the records to a [`RecordSink`], a
//!   [`RunOutcome`]. It checks the setup as a model file's is checked
//!   ([`describe_system`]: lengths, `h`, `t_end`, admissible initial data in
//!   `ker A(q0)`) and takes the core a model file of that size takes
//!   (compile-time-sized through [`AsSized`] for the sizes of
//!   [`FAST_FILE_SIZES`](diracvi_models::FAST_FILE_SIZES), run-time-sized
//!   otherwise), so a system and a model file computing the same
//!   expressions in the same order give the same outcome bit for bit;
//!   [`execute_system_run_time`] always takes the run-time-sized core (much
//!   less to compile);
//! * [`Summary::of_run`] builds the summary `diracvi run --summary json`
//!   prints (warnings included); [`run_system`] runs and summarises in one
//!   call; [`step_count_for`] is the CLI's number of steps
//!   `round(t_end / h)`;
//! * [`execute_system_with_tolerance`] chooses the order and step for an
//!   accuracy (`--tol`) by pilot runs of the system, as for a scenario
//!   (the chooser takes anything implementing [`Rerun`]);
//! * [`periodic_orbit_system`] finds a periodic orbit of the system and its
//!   multipliers (`diracvi periodic`), [`continue_with`] follows it along a
//!   parameter your closure sets;
//! * [`ensemble_system`] runs many members (one model value and one setup
//!   each: parameter and initial-state variations) on worker threads, each
//!   member's summary and outcome those of [`run_system`] alone, bit for
//!   bit ([`EnsembleOptions`]: threads, trajectories kept, energy
//!   tolerance);
//! * [`TrajectoryWriter`] and [`write_impacts_csv`] write the files of
//!   `diracvi run --out FILE.csv|FILE.json` (the CLI uses them), with the
//!   columns of [`trajectory_columns`] and [`impact_columns`].
//!
//! A system written with the compile-time [`System`](diracvi_geometry::System)
//! trait runs the same way wrapped in
//! [`Fixed`](diracvi_geometry::dynamic::Fixed) (a `NamedSystem` there is a
//! `NamedDynSystem`). `examples/own-model` in the repository is a complete
//! crate (a ball in a circular bowl) whose test checks summary and files
//! against `diracvi run --model-file` of the same model. From Python, the
//! same system runs through an extension module of your crate built on
//! `diracvi_python::own` (the `diracvi-python` crate, `python/` in the
//! repository; `examples/own-model/python` is one).
//!
//! ```
//! use diracvi_geometry::{AdScalar, Discretization, ConstraintDiscretization};
//! use diracvi_geometry::dynamic::DynSystem;
//! use diracvi_run::{
//!     DynRunSetup, NamedDynSystem, RecordBuffer, RunPlan, Summary, describe_system,
//!     execute_system, step_count_for,
//! };
//!
//! /// A particle falling on the floor y >= 0.
//! #[derive(Clone)]
//! struct Drop;
//! impl DynSystem for Drop {
//!     fn coordinate_count(&self) -> usize { 2 }
//!     fn constraint_count(&self) -> usize { 0 }
//!     fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
//!         (v[0] * v[0] + v[1] * v[1]) * 0.5 - q[1] * 9.8
//!     }
//!     fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
//!     fn boundary_count(&self) -> usize { 1 }
//!     fn boundary<S: AdScalar>(&self, _j: usize, q: &[S]) -> S { q[1] }
//! }
//! impl NamedDynSystem for Drop {
//!     fn name(&self) -> &str { "drop" }
//!     fn description(&self) -> &str { "a particle above the floor" }
//!     fn coordinates(&self) -> Vec<String> { vec!["x".into(), "y".into()] }
//!     fn piece_name(&self, _j: usize) -> String { "floor y >= 0".into() }
//! }
//!
//! let setup = DynRunSetup {
//!     q0: nalgebra::DVector::from_vec(vec![0.0, 2.0]),
//!     v0: nalgebra::DVector::from_vec(vec![1.0, 0.0]),
//!     h: 1e-2,
//!     t_end: 2.0,
//!     discretization: Discretization::Midpoint,
//!     constraint: ConstraintDiscretization::Midpoint,
//! };
//! let steps = step_count_for(setup.h, setup.t_end, None).unwrap();
//! let mut records = RecordBuffer::new();
//! let outcome = execute_system(&Drop, &setup, RunPlan::new(steps).every(10), &mut records).unwrap();
//! let info = describe_system(&Drop, &setup).unwrap();
//! let summary = Summary::of_run("drop", &info, setup.h, setup.t_end, &outcome, 0.01);
//! // it falls 2 m: the floor at t = sqrt(2·2/9.8) ≈ 0.639 s
//! assert!((summary.impact_times[0] - (4.0f64 / 9.8).sqrt()).abs() < 1e-3);
//! assert_eq!(summary.method.core, "compile-time");
//! assert_eq!(records.len(), 21);
//! ```
#![doc = include_str!("../../../docs/dependent-profile.md")]

mod accounting;
mod circuit;
mod drive;
mod dyn_runner;
mod ensemble;
mod error;
mod execute;
mod outcome;
mod periodic;
mod plan;
mod reduced;
mod runner;
mod sensitivity;
mod sink;
mod start;
mod summary;
mod system;
mod tolerance;
mod writer;

pub use accounting::PartsAccounting;
pub use diracvi_discrete_dirac::{Composition, Direction, Located, StepError};
pub use diracvi_impact::ImpactError;
pub use ensemble::{EnsembleOptions, SystemRun, ensemble_system, run_system};
pub use error::RunError;
pub use execute::{execute, execute_with_progress};
pub use outcome::{
    Core, Gradient, ImpactLaw, ImpactRecord, InvariantRecord, Method, ReductionSummary, RunOutcome,
    TangentTape,
};
pub use periodic::{
    Branch, BranchPoint, Multiplier, MultiplierKind, PeriodicError, PeriodicOptions, PeriodicOrbit,
    Section, Stability, StabilityChange, continue_orbit, continue_with, parameter_values,
    periodic_orbit, periodic_orbit_system, section_among, section_piece,
};
pub use plan::{
    Impacts, MAX_STEPS, NotAnOrder, Order, RunPlan, Stepper, UnknownChoice, step_count,
    step_count_for,
};
pub use runner::{ModelSummary, describe};
pub use sensitivity::{MODEL_FILE_TWINS, momentum_direction};
pub use sink::{Discard, RecordBuffer, RecordSink, RecordView, StageView};
pub use start::{StartFromMomentum, start_from_momentum};
pub use summary::{
    DEFAULT_ENERGY_TOLERANCE, EnergyJson, FinalStateJson, InvariantsJson, JacobianJson, MethodJson,
    ReductionJson, SensitivityJson, StatisticsJson, Summary, solved_velocities_note,
    symplecticity_defect, warnings,
};
pub use system::{
    AsSized, SizeMismatch, describe_system, execute_system, execute_system_run_time,
    execute_system_with_progress, execute_system_with_tolerance,
};
pub use tolerance::{
    Rerun, SystemRerun, ToleranceCandidate, ToleranceChoice, ToleranceJson, choose_step,
    choose_step_with_progress, configured_setup, execute_with_tolerance,
};
pub use writer::{
    IMPACT_FIXED, TRAJECTORY_FIXED, TrajectoryFormat, TrajectoryWriter, impact_columns,
    trajectory_columns, write_impacts_csv,
};

#[doc(no_inline)]
pub use diracvi_models::{DynRunSetup, NamedDynSystem, Scenario};
