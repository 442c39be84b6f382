//! The dimension-erased runner: a [`ModelVisitor`] that builds the stepper
//! and impact law a [`RunPlan`] asks for, drives it over the steps and
//! erases the dimension from the results.

use crate::drive::{drive_impacts, finish};
use crate::{Core, Impacts, Method, RecordSink, RunError, RunOutcome, RunPlan, Stepper};
use diracvi_discrete_dirac::{
    Composed, LagrangeDirac, NonholonomicHamiltonian, RunOptions, SymplecticEuler,
    state_from_velocity,
};
use diracvi_impact::{
    ContinuousElasticLaw, HamiltonianImpacts, ImpactError, ImpactIntegrator, RejectCrossing,
};
use diracvi_models::{ModelError, ModelVisitor, NamedSystem, RunSetup, Scenario};
use std::time::Instant;

/// What a caller needs to know about a scenario's model before running it.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSummary {
    /// Coordinate names, in order.
    pub coordinates: Vec<String>,
    /// Names of the boundary pieces, in order.
    pub boundary_names: Vec<String>,
    /// Number of constraint forms `M`.
    pub constraints: usize,
    /// Whether the system has a Hamiltonian at the initial state.
    pub has_hamiltonian: bool,
    /// Whether the Lagrangian is regular at the initial state (`∂²L/∂v²`
    /// invertible); a regular Lagrangian may still come without a
    /// Hamiltonian (a model file without `model.hamiltonian`).
    pub regular_lagrangian: bool,
}

impl ModelSummary {
    /// Why the Hamiltonian stepper cannot run this model, if it cannot:
    /// [`RunError::NoHamiltonian`] for a degenerate Lagrangian,
    /// [`RunError::HamiltonianNotGiven`] for a regular one without a
    /// Hamiltonian; `None` when the model has a Hamiltonian.
    pub fn hamiltonian_error(&self, model: &str) -> Option<RunError> {
        (!self.has_hamiltonian)
            .then(|| crate::error::no_hamiltonian(model, self.regular_lagrangian))
    }
}

/// Whether `∂²L/∂v²` is invertible at the setup's initial data.
fn regular_at<Mo: NamedSystem<N, M>, const N: usize, const M: usize>(
    model: &Mo,
    setup: &RunSetup<N>,
) -> bool {
    let (_, hessian) = diracvi_geometry::legendre_jet::<Mo, N, M>(model, &setup.q0, &setup.v0);
    crate::error::is_regular(nalgebra::DMatrix::from_fn(N, N, |i, j| hessian[(i, j)]))
}

/// Build the scenario's model (validating parameters and initial data) and
/// describe it.
///
/// # Errors
/// Every error of [`Scenario::visit`].
pub fn describe(scenario: &Scenario) -> Result<ModelSummary, ModelError> {
    if let Some(circuit) = scenario.circuit() {
        return Ok(crate::circuit::describe(&circuit?));
    }
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
                regular_lagrangian: regular_at::<Mo, N, M>(model, setup),
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
    if let Some(circuit) = scenario.circuit() {
        return crate::circuit::execute(scenario, &circuit?, plan, sink, progress);
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
    // The tangent map is built on the run-time-sized core (a catalogued
    // model runs there through `Fixed`).
    if (!scenario.fits_compile_time_core() || plan.tracks_derivatives()) && !plan.reduce {
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

/// Run a model of compile-time size as a [`RunPlan`] says.
pub(crate) struct Runner<'a> {
    pub(crate) plan: RunPlan,
    pub(crate) sink: &'a mut dyn RecordSink,
    pub(crate) progress: &'a mut dyn FnMut(usize),
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
                    let regular = regular_at::<Mo, N, M>(model, setup);
                    return Err(crate::error::no_hamiltonian(name, regular));
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
