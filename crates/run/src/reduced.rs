//! Running a scenario reduced by its model's declared symmetry
//! (docs/theory.md §7): the reduced system on shape space is integrated by
//! the same Lagrange–Dirac stepper and impact integrator, and the full
//! states are reconstructed step by step, so records, impacts and summaries
//! have the full system's shape.
//!
//! The catalogue's symmetric models run on the compile-time-sized core
//! ([`ReducedRunner`]); model files that declare `[symmetry]`, of any
//! size, on the run-time-sized core ([`DynReducedRunner`]), with the same
//! refusals, summary block, records and impacts.

use crate::dyn_runner::DynStart;
use crate::runner::Runner;
use crate::{Impacts, RecordSink, ReductionSummary, RunError, RunOutcome, RunPlan, Stepper};
use diracvi_discrete_dirac::dynamic::{DynLagrangeDirac, dyn_state_from_velocity};
use diracvi_discrete_dirac::{Direction, LagrangeDirac, state_from_velocity};
use diracvi_geometry::dynamic::{DynCyclicSymmetry, DynReduced};
use diracvi_geometry::{CyclicSymmetry, Reduced, ReductionKind, SymmetryError};
use diracvi_impact::dynamic::{DynImpactIntegrator, DynReconstructing, DynVciLaw};
use diracvi_impact::{ImpactIntegrator, OrReject, Reconstructing, VciLaw};
use diracvi_models::{
    DynModel, DynReducedModelVisitor, DynRunSetup, NamedDynSystem, NamedSystem,
    ReducedModelVisitor, RunSetup,
};

/// The plans a reduced run refuses (both cores, the same messages):
/// backward runs, the composed orders 4 and 6, the Hamiltonian stepper.
fn refuse_plan(plan: &RunPlan, name: &str) -> Result<(), RunError> {
    let unsupported = |reason: &'static str| RunError::ReductionUnsupported {
        model: name.to_string(),
        reason,
    };
    if plan.direction == Direction::Backward {
        return Err(unsupported(
            "reduced runs integrate forward in time only (the reconstruction follows the (+) steps)",
        ));
    }
    if plan.order.is_composed() {
        return Err(unsupported(
            "reduced runs are second order (the scenario's discretization on shape space): the composed methods of order 4 and 6 do not run on the reduced system",
        ));
    }
    if plan.stepper == Stepper::Hamiltonian {
        return Err(unsupported(
            "the reduced system is a Lagrangian on shape space without a Hamiltonian: use the Lagrange–Dirac stepper",
        ));
    }
    Ok(())
}

/// The summary block of a reduction (both cores): its kind, the cyclic
/// coordinates by name, the conserved momenta `∂L/∂ġ` of a Routh reduction
/// (none for Chaplygin) and whether the curvature force is carried.
fn reduction_summary(
    kind: ReductionKind,
    cyclic: impl Iterator<Item = usize>,
    coordinates: &[String],
    momentum: impl FnOnce() -> Vec<f64>,
    curvature_force: bool,
) -> ReductionSummary {
    ReductionSummary {
        kind: kind.as_str(),
        cyclic: cyclic.map(|i| coordinates[i].clone()).collect(),
        momentum: match kind {
            ReductionKind::Routh => momentum(),
            ReductionKind::Chaplygin => Vec::new(),
        },
        curvature_force,
    }
}

/// [`Runner`]'s start and drive around the reduced stepper: the plan, the
/// sink and the progress of the run.
pub(crate) struct ReducedRunner<'a>(pub(crate) Runner<'a>);

impl ReducedModelVisitor for ReducedRunner<'_> {
    type Output = Result<RunOutcome, RunError>;

    fn visit<const N: usize, const M: usize, const NR: usize, const MR: usize, Mo>(
        self,
        model: &Mo,
        symmetry: CyclicSymmetry<N>,
        setup: &RunSetup<N>,
    ) -> Self::Output
    where
        Mo: NamedSystem<N, M>,
    {
        let runner = self.0;
        let plan = &runner.plan;
        let name = model.name();
        refuse_plan(plan, name)?;
        let reduced =
            Reduced::<Mo, N, M, NR, MR>::new(model.clone(), symmetry, &setup.q0, &setup.v0)
                .map_err(|error| RunError::Reduction {
                    model: name.to_string(),
                    error,
                })?;
        let st = runner.start::<Mo, N, M>(model, setup)?;
        let s0 = reduced.project(&setup.q0);
        let sd0 = reduced.project(&setup.v0);
        let initial_reduced = state_from_velocity(&reduced, 0.0, &s0, &sd0)
            .map_err(|error| RunError::InitialState { error })?;
        let method = st.method;
        let stepper = LagrangeDirac::new(
            reduced.clone(),
            method.discretization,
            method.constraint,
            method.direction,
        );
        let reduction = reduction_summary(
            reduced.kind(),
            symmetry.cyclic(),
            &model.coordinates(),
            || reduced.momentum(),
            reduced.is_gyroscopic(),
        );
        let law = OrReject::new(VciLaw::default(), plan.impacts == Impacts::Reject);
        let mut reconstructing = Reconstructing::new(
            ImpactIntegrator::with_law(stepper, law),
            reduced,
            setup.discretization,
            initial_reduced,
        );
        // the model's invariants are watched on the reconstructed full states
        let outcome = runner.drive(&mut reconstructing, st, model, setup)?;
        Ok(RunOutcome {
            reduction: Some(reduction),
            ..outcome
        })
    }
}

/// Run a model file that declares a symmetry, of any size, reduced on the
/// run-time-sized core: the reduced system [`DynReduced`] is integrated by
/// the run-time Lagrange–Dirac stepper and impact integrator (the same
/// instantiation as every run-time run, through [`DynModel`]) and the full
/// states are reconstructed step by step ([`DynReconstructing`]).
pub(crate) struct DynReducedRunner<'a> {
    pub(crate) plan: RunPlan,
    pub(crate) sink: &'a mut dyn RecordSink,
    pub(crate) progress: &'a mut dyn FnMut(usize),
}

/// The error of a reduction refused by its symmetry check or its
/// reduction: a coordinate that is not cyclic is named.
fn reduction_error<Mo: NamedDynSystem>(model: &Mo, error: SymmetryError) -> RunError {
    match error {
        SymmetryError::NotCyclic { coordinate, .. } => RunError::NotCyclic {
            model: model.name().to_string(),
            coordinate: model
                .coordinates()
                .get(coordinate)
                .cloned()
                .unwrap_or_else(|| format!("coordinate {coordinate}")),
            error: Box::new(error),
        },
        error => RunError::Reduction {
            model: model.name().to_string(),
            error,
        },
    }
}

impl DynReducedModelVisitor for DynReducedRunner<'_> {
    type Output = Result<RunOutcome, RunError>;

    fn visit<Mo: NamedDynSystem>(
        self,
        model: &Mo,
        symmetry: DynCyclicSymmetry,
        setup: &DynRunSetup,
    ) -> Self::Output {
        let DynReducedRunner {
            plan,
            sink,
            progress,
        } = self;
        let name = model.name();
        refuse_plan(&plan, name)?;
        let reduced = DynReduced::new(
            model.clone(),
            symmetry.clone(),
            setup.q0.as_slice(),
            setup.v0.as_slice(),
        )
        .map_err(|error| reduction_error(model, error))?;
        let start = DynStart::new(&plan, model, setup, None)?;
        let method = start.method;
        let s0 = reduced.project(setup.q0.as_slice());
        let sd0 = reduced.project(setup.v0.as_slice());
        // the reduced system behind the one pointer type the run-time core
        // is compiled for
        let shape_system = reduced.clone();
        let erased = DynModel::new(&shape_system);
        let initial_reduced = dyn_state_from_velocity(&erased, 0.0, &s0, &sd0)
            .map_err(|error| RunError::InitialState { error })?;
        let stepper = DynLagrangeDirac::new(
            erased,
            method.discretization,
            method.constraint,
            method.direction,
        );
        let reduction = reduction_summary(
            reduced.kind(),
            symmetry.cyclic(),
            &model.coordinates(),
            || reduced.momentum(),
            reduced.is_gyroscopic(),
        );
        let law = OrReject::new(DynVciLaw::default(), plan.impacts == Impacts::Reject);
        let mut reconstructing = DynReconstructing::new(
            DynImpactIntegrator::with_law(stepper, law),
            reduced,
            setup.discretization,
            initial_reduced,
        );
        // the model's invariants are watched on the reconstructed full states
        let outcome = start.drive(&mut reconstructing, model, setup, sink, progress)?;
        Ok(RunOutcome {
            reduction: Some(reduction),
            ..outcome
        })
    }
}
