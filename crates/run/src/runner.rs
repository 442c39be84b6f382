//! The dimension-erased runner: a [`ModelVisitor`] that builds the stepper
//! and impact law a [`RunPlan`] asks for, drives it over the steps and
//! erases the dimension from the results.

use crate::{
    Core, ImpactRecord, Impacts, Method, RecordSink, RecordView, RunError, RunOutcome, RunPlan,
    Stepper,
};
use diracvi_discrete_dirac::{
    Composed, LagrangeDirac, NonholonomicHamiltonian, OneStep, Record, RunOptions, State,
    SymplecticEuler, Trajectory, integrate, state_from_velocity,
};
use diracvi_impact::{
    ContinuousElasticLaw, HamiltonianImpacts, ImpactError, ImpactEvent, ImpactIntegrator,
    RejectCrossing,
};
use diracvi_models::{ModelError, ModelVisitor, NamedSystem, RunSetup, Scenario};
use std::time::{Duration, Instant};

/// What a caller needs to know about a scenario's model before running it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSummary {
    /// Coordinate names, in order.
    pub coordinates: Vec<String>,
    /// Names of the boundary pieces, in order.
    pub boundary_names: Vec<String>,
    /// Number of constraint forms `M`.
    pub constraints: usize,
    /// Whether the system has a Hamiltonian at the initial state (a regular
    /// Lagrangian).
    pub has_hamiltonian: bool,
}

/// Build the scenario's model (validating parameters and initial data) and
/// describe it.
///
/// # Errors
/// Every error of [`Scenario::visit`].
pub fn describe(scenario: &Scenario) -> Result<ModelSummary, ModelError> {
    if !scenario.fits_compile_time_core() {
        return scenario.visit_dyn(crate::dyn_runner::DescribeDyn);
    }
    struct Describe;
    impl ModelVisitor for Describe {
        type Output = ModelSummary;
        fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
            self,
            model: &Mo,
            setup: &RunSetup<N>,
        ) -> ModelSummary {
            let p0 = model.momentum(&setup.q0, &setup.v0);
            ModelSummary {
                coordinates: model.coordinates(),
                boundary_names: (0..model.boundary_count())
                    .map(|j| model.piece_name(j))
                    .collect(),
                constraints: M,
                has_hamiltonian: model.hamiltonian(&setup.q0, &p0).is_some(),
            }
        }
    }
    scenario.visit(Describe)
}

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
    if !scenario.fits_compile_time_core() && !plan.reduce {
        // Model files of any size run on the run-time-sized core; the small
        // ones (and the catalogue) take the compile-time-sized core, which
        // is faster for them (docs/theory.md §11.3).
        return scenario.visit_dyn(crate::dyn_runner::DynRunner {
            plan,
            sink,
            progress,
        })?;
    }
    if plan.reduce {
        return scenario.visit_reduced(crate::reduced::ReducedRunner {
            plan,
            sink,
            progress,
        })?;
    }
    scenario.visit(Runner {
        plan,
        sink,
        progress,
    })?
}

struct Runner<'a> {
    plan: RunPlan,
    sink: &'a mut dyn RecordSink,
    progress: &'a mut dyn FnMut(usize),
}

impl ModelVisitor for Runner<'_> {
    type Output = Result<RunOutcome, RunError>;

    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Result<RunOutcome, RunError> {
        let Runner {
            plan,
            sink,
            progress,
        } = self;
        let initial = state_from_velocity::<Mo, N, M>(model, 0.0, &setup.q0, &setup.v0)
            .map_err(|error| RunError::InitialState { error })?;
        let options = RunOptions::new(plan.steps)
            .every(plan.every)
            .discard_records();
        let start = Instant::now();
        let name = model.name();
        // Without a step there is no discrete energy: a run of zero steps
        // reports the energy of the initial data, `E(q(0), v(0))` (equal to
        // `H(q(0), p(0))` where there is a Hamiltonian), in its summary and
        // its one record.
        let rest_energy = (plan.steps == 0).then(|| model.energy(&setup.q0, &setup.v0));
        let failed = |error: ImpactError| RunError::Integration {
            model: name.to_string(),
            error,
        };
        let method = Method::planned(
            &plan,
            setup.discretization,
            setup.constraint,
            M > 0,
            Core::CompileTime,
        );
        method.check()?;
        // One integrator type per (stepper, impact law) pair.
        macro_rules! run {
            ($integrator:expr) => {
                drive_impacts(
                    &mut $integrator,
                    initial,
                    setup.h,
                    options,
                    rest_energy,
                    method,
                    sink,
                    progress,
                )
                .map_err(failed)?
            };
        }
        let (trajectory, impacts) = match method.stepper {
            Stepper::Lagrange if method.order.is_composed() => {
                let stepper = Composed::lagrange_dirac(
                    model.clone(),
                    method.discretization,
                    method.constraint,
                    method.direction,
                    method.composition,
                );
                match plan.impacts {
                    Impacts::Elastic => {
                        run!(ImpactIntegrator::with_law(stepper, ContinuousElasticLaw))
                    }
                    Impacts::Reject => run!(ImpactIntegrator::with_law(stepper, RejectCrossing)),
                }
            }
            Stepper::Lagrange => {
                let stepper = LagrangeDirac::new(
                    model.clone(),
                    method.discretization,
                    method.constraint,
                    method.direction,
                );
                match plan.impacts {
                    Impacts::Elastic => run!(ImpactIntegrator::new(stepper)),
                    Impacts::Reject => run!(ImpactIntegrator::with_law(stepper, RejectCrossing)),
                }
            }
            Stepper::Hamiltonian => {
                if model.hamiltonian(&initial.q, &initial.p).is_none() {
                    return Err(RunError::NoHamiltonian {
                        model: name.to_string(),
                    });
                }
                let stepper = NonholonomicHamiltonian::new(
                    model.clone(),
                    method.discretization,
                    method.constraint,
                    SymplecticEuler,
                    method.direction,
                );
                match plan.impacts {
                    Impacts::Elastic => run!(HamiltonianImpacts::hamiltonian(stepper)),
                    Impacts::Reject => run!(ImpactIntegrator::with_law(stepper, RejectCrossing)),
                }
            }
        };
        Ok(finish(
            trajectory,
            impacts,
            rest_energy,
            model.energy_scale(&setup.q0, &setup.v0),
            start,
        ))
    }
}

/// The outcome of a run: the impact records joined, the energy of a run of
/// no steps (`rest_energy`) taken as its initial and final energy, the energy
/// scale at least the model's at the initial state, the wall time since
/// `start`.
pub(crate) fn finish(
    mut trajectory: RunOutcome,
    impacts: Vec<ImpactRecord>,
    rest_energy: Option<f64>,
    model_scale: f64,
    start: Instant,
) -> RunOutcome {
    if let Some(e) = rest_energy {
        trajectory.initial_energy = e;
        trajectory.final_energy = e;
        trajectory.energy_scale = e.abs();
    }
    let energy_scale = trajectory.energy_scale.max(model_scale);
    RunOutcome {
        impacts,
        wall_time: start.elapsed(),
        energy_scale,
        ..trajectory
    }
}

/// [`drive`] an integrator with impacts; the summary (of `method`) and the
/// impact records.
#[allow(clippy::too_many_arguments)]
pub(crate) fn drive_impacts<St, const N: usize>(
    stepper: &mut St,
    initial: State<N>,
    h: f64,
    options: RunOptions,
    rest_energy: Option<f64>,
    method: Method,
    sink: &mut dyn RecordSink,
    progress: &mut dyn FnMut(usize),
) -> Result<(RunOutcome, Vec<ImpactRecord>), ImpactError>
where
    St: OneStep<N, Event = ImpactEvent<N>, Error = ImpactError>,
{
    let t = drive(stepper, initial, h, options, rest_energy, sink, progress)?;
    let impacts = t.events.iter().map(impact_record).collect();
    Ok((erase(t, method), impacts))
}

/// Run `integrate`, feeding every recorded step to `sink`; `rest_energy`
/// (runs of zero steps) stands in for the energy of the one record, which
/// has no step to take it from.
fn drive<St: OneStep<N>, const N: usize>(
    stepper: &mut St,
    initial: State<N>,
    h: f64,
    options: RunOptions,
    rest_energy: Option<f64>,
    sink: &mut dyn RecordSink,
    progress: &mut dyn FnMut(usize),
) -> Result<Trajectory<N, St::Event>, St::Error> {
    integrate(
        stepper,
        initial,
        h,
        options,
        |r: &Record<N>| {
            sink.record(&RecordView {
                k: r.k,
                t: r.t,
                q: r.q.as_slice(),
                p: r.p.as_slice(),
                energy: rest_energy.unwrap_or(r.energy),
                constraint_residual: r.constraint_residual,
            });
        },
        progress,
    )
}

/// The summary of a trajectory of `method`, without the events.
fn erase<const N: usize, E>(t: Trajectory<N, E>, method: Method) -> RunOutcome {
    let s = t.summary;
    RunOutcome {
        steps: s.steps,
        initial_energy: s.initial_energy,
        final_energy: s.final_energy,
        max_abs_energy_deviation: s.max_abs_energy_deviation,
        energy_scale: s.initial_energy.abs(),
        max_constraint_residual: s.max_constraint_residual,
        final_t: s.final_state.t,
        final_q: s.final_state.q.as_slice().to_vec(),
        final_p: s.final_state.p.as_slice().to_vec(),
        newton_iterations: s.newton_iterations,
        jacobian_evaluations: s.jacobian_evaluations,
        root_iterations: s.root_iterations,
        post_impact_iterations: s.post_impact_iterations,
        degenerate_steps: s.degenerate_steps,
        impacts: Vec::new(),
        wall_time: Duration::ZERO,
        reduction: None,
        method,
    }
}

fn impact_record<const N: usize>(e: &ImpactEvent<N>) -> ImpactRecord {
    ImpactRecord {
        step: e.step,
        alpha: e.alpha,
        t: e.t,
        q: e.q.as_slice().to_vec(),
        piece: e.piece,
        p_before: e.p_before.as_slice().to_vec(),
        p_after: e.p_after.as_slice().to_vec(),
        energy_before: e.energy_before,
        energy_after: e.energy_after,
    }
}
