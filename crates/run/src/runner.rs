//! The dimension-erased runner: a [`ModelVisitor`] that builds the stepper
//! and impact law a [`RunPlan`] asks for, drives it over the steps and
//! erases the dimension from the results.

use crate::drive::{Watch, drive_impacts, finish};
use crate::{Core, Impacts, Method, RecordSink, RunError, RunOutcome, RunPlan, Stepper};
use diracvi_discrete_dirac::{
    Composed, LagrangeDirac, NonholonomicHamiltonian, OneStep, RunOptions, State, SymplecticEuler,
    state_from_velocity,
};
use diracvi_impact::{
    ContinuousElasticLaw, HamiltonianLaw, ImpactError, ImpactEvent, ImpactIntegrator, OrReject,
    VciLaw,
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
    /// Whether the system has algebraic variables at the initial state:
    /// `∂²L/∂v²` singular on the constraint distribution `ker A(q)` (a loop
    /// of capacitors). Its midpoint step then carries a parasitic mode that
    /// round-off feeds, growing as `N^{3/2}` over `N` steps (docs/theory.md
    /// §3.9), which the tolerance chooser's round-off floor follows.
    pub algebraic_variables: bool,
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

/// Whether `∂²L/∂v²` is invertible at the setup's initial data, on the
/// whole tangent space and on the constraint distribution `ker A(q0)`.
fn regular_at<Mo: NamedSystem<N, M>, const N: usize, const M: usize>(
    model: &Mo,
    setup: &RunSetup<N>,
) -> (bool, bool) {
    let (_, hessian) = diracvi_geometry::legendre_jet::<Mo, N, M>(model, &setup.q0, &setup.v0);
    let forms: nalgebra::SMatrix<f64, M, N> = model.constraint_forms(&setup.q0);
    crate::error::regularity(
        nalgebra::DMatrix::from_fn(N, N, |i, j| hessian[(i, j)]),
        &nalgebra::DMatrix::from_fn(M, N, |i, j| forms[(i, j)]),
    )
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
            let (regular, regular_on_constraints) = regular_at::<Mo, N, M>(model, setup);
            ModelSummary {
                coordinates: model.coordinates(),
                boundary_names: (0..model.boundary_count())
                    .map(|j| model.piece_name(j))
                    .collect(),
                constraints: M,
                has_hamiltonian: model.hamiltonian(&setup.q0, &p0).is_some(),
                regular_lagrangian: regular,
                algebraic_variables: !regular_on_constraints,
            }
        }
    }
    scenario.visit(Describe)
}

/// Run a model of compile-time size as a [`RunPlan`] says, with every
/// stepper and impact law (the catalogue).
pub(crate) struct Runner<'a> {
    pub(crate) plan: RunPlan,
    pub(crate) sink: &'a mut dyn RecordSink,
    pub(crate) progress: &'a mut dyn FnMut(usize),
}

/// [`Runner`] compiled with the default method only: the Lagrange–Dirac
/// step of order 2 with the discrete elastic impact law. Model files of the
/// sizes of [`FAST_FILE_SIZES`](diracvi_models::FAST_FILE_SIZES) and
/// systems of the user's own crate take the compile-time-sized core through
/// it; their other methods (orders 4 and 6, rejected crossings, the
/// Hamiltonian stepper) run on the run-time-sized core. Each (stepper,
/// impact law) pair is a separate integrator type compiled for every size:
/// the default one alone keeps the fast path for the runs it pays for and
/// the build short (docs/theory.md §11.5).
pub(crate) struct LeanRunner<'a>(Runner<'a>);

impl<'a> LeanRunner<'a> {
    /// `runner` as a [`LeanRunner`] when its plan asks for the method the
    /// lean runner is compiled with (the Lagrange–Dirac stepper, order 2,
    /// elastic impacts, no derivatives, no reduction); `runner` back
    /// otherwise.
    pub(crate) fn new(runner: Runner<'a>) -> Result<Self, Runner<'a>> {
        let plan = &runner.plan;
        if plan.stepper == Stepper::Lagrange
            && !plan.order.is_composed()
            && plan.impacts == Impacts::Elastic
            && !plan.reduce
            && !plan.tracks_derivatives()
        {
            Ok(LeanRunner(runner))
        } else {
            Err(runner)
        }
    }
}

/// What every compile-time run starts from: the initial state, the options,
/// the method, the energy of a run of zero steps and the clock.
pub(crate) struct Start<const N: usize> {
    initial: State<N>,
    options: RunOptions,
    rest_energy: Option<f64>,
    pub(crate) method: Method,
    start: Instant,
}

impl<'a> Runner<'a> {
    pub(crate) fn start<Mo: NamedSystem<N, M>, const N: usize, const M: usize>(
        &self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Result<Start<N>, RunError> {
        let initial = state_from_velocity::<Mo, N, M>(model, 0.0, &setup.q0, &setup.v0)
            .map_err(|error| RunError::InitialState { error })?;
        let options = RunOptions::new(self.plan.steps)
            .every(self.plan.every)
            .discard_records();
        let start = Instant::now();
        // Without a step there is no discrete energy: a run of zero steps
        // reports the energy of the initial data, `E(q(0), v(0))` (equal to
        // `H(q(0), p(0))` where there is a Hamiltonian), in its summary and
        // its one record.
        let rest_energy = (self.plan.steps == 0).then(|| model.energy(&setup.q0, &setup.v0));
        let method = Method::planned(
            &self.plan,
            setup.discretization,
            setup.constraint,
            M > 0,
            Core::CompileTime,
        );
        method.check()?;
        Ok(Start {
            initial,
            options,
            rest_energy,
            method,
            start,
        })
    }

    /// Drive `integrator` from `st` and finish the outcome.
    pub(crate) fn drive<St, Mo: NamedSystem<N, M>, const N: usize, const M: usize>(
        self,
        integrator: &mut St,
        st: Start<N>,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Result<RunOutcome, RunError>
    where
        St: OneStep<N, Event = ImpactEvent<N>, Error = ImpactError>,
    {
        let eval = |q: &[f64], p: &[f64], out: &mut [f64]| {
            let at = nalgebra::SVector::<f64, N>::from_column_slice;
            model.invariants(&at(q), &at(p), out)
        };
        let mut watched = Watch::new(
            integrator,
            model.invariant_names(),
            &eval,
            st.initial.q.as_slice(),
            st.initial.p.as_slice(),
        );
        let (trajectory, impacts) = drive_impacts(
            &mut watched,
            st.initial,
            setup.h,
            st.options,
            st.rest_energy,
            st.method,
            self.sink,
            self.progress,
        )
        .map_err(|error| RunError::Integration {
            model: model.name().to_string(),
            error,
        })?;
        let invariants = watched.finish();
        Ok(RunOutcome {
            invariants,
            ..finish(
                trajectory,
                impacts,
                st.rest_energy,
                model.energy_scale(&setup.q0, &setup.v0),
                st.start,
            )
        })
    }
}

impl ModelVisitor for LeanRunner<'_> {
    type Output = Result<RunOutcome, RunError>;

    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Result<RunOutcome, RunError> {
        let runner = self.0;
        let st = runner.start::<Mo, N, M>(model, setup)?;
        let method = st.method;
        let stepper = LagrangeDirac::new(
            model.clone(),
            method.discretization,
            method.constraint,
            method.direction,
        );
        runner.drive(&mut ImpactIntegrator::new(stepper), st, model, setup)
    }
}

impl ModelVisitor for Runner<'_> {
    type Output = Result<RunOutcome, RunError>;

    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Result<RunOutcome, RunError> {
        let plan = self.plan.clone();
        self.run_model(model, setup)
            .map_err(|e| crate::error::composed_start(e, &plan))
    }
}

impl Runner<'_> {
    /// [`ModelVisitor::visit`] before its errors are classified.
    fn run_model<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Result<RunOutcome, RunError> {
        let st = self.start::<Mo, N, M>(model, setup)?;
        let method = st.method;
        // One integrator type per stepper: the impact law (the stepper
        // family's, or no impacts) is chosen at run time (`OrReject`).
        let reject = self.plan.impacts == Impacts::Reject;
        match method.stepper {
            Stepper::Lagrange if method.order.is_composed() => {
                let stepper = Composed::lagrange_dirac(
                    model.clone(),
                    method.discretization,
                    method.constraint,
                    method.direction,
                    method.composition,
                );
                let law = OrReject::new(ContinuousElasticLaw, reject);
                self.drive(
                    &mut ImpactIntegrator::with_law(stepper, law),
                    st,
                    model,
                    setup,
                )
            }
            Stepper::Lagrange => {
                let stepper = LagrangeDirac::new(
                    model.clone(),
                    method.discretization,
                    method.constraint,
                    method.direction,
                );
                let law = OrReject::new(VciLaw::default(), reject);
                self.drive(
                    &mut ImpactIntegrator::with_law(stepper, law),
                    st,
                    model,
                    setup,
                )
            }
            Stepper::Hamiltonian => {
                if model.hamiltonian(&st.initial.q, &st.initial.p).is_none() {
                    let (regular, _) = regular_at::<Mo, N, M>(model, setup);
                    return Err(crate::error::no_hamiltonian(model.name(), regular));
                }
                let stepper = NonholonomicHamiltonian::new(
                    model.clone(),
                    method.discretization,
                    method.constraint,
                    SymplecticEuler,
                    method.direction,
                );
                let law = OrReject::new(HamiltonianLaw, reject);
                self.drive(
                    &mut ImpactIntegrator::with_law(stepper, law),
                    st,
                    model,
                    setup,
                )
            }
        }
    }
}
