//! Running a scenario reduced by its model's declared symmetry
//! (docs/theory.md §7): the reduced system on shape space is integrated by
//! the same Lagrange–Dirac stepper and impact integrator, and the full
//! states are reconstructed step by step, so records, impacts and summaries
//! have the full system's shape.

use crate::runner::Runner;
use crate::{Impacts, ReductionSummary, RunError, RunOutcome, Stepper};
use diracvi_discrete_dirac::{Direction, LagrangeDirac, state_from_velocity};
use diracvi_geometry::{CyclicSymmetry, Reduced, ReductionKind};
use diracvi_impact::{ImpactIntegrator, OrReject, Reconstructing, VciLaw};
use diracvi_models::{NamedSystem, ReducedModelVisitor, RunSetup};

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
        let coordinates = model.coordinates();
        let reduction = ReductionSummary {
            kind: reduced.kind().as_str(),
            cyclic: symmetry.cyclic().map(|i| coordinates[i].clone()).collect(),
            momentum: match reduced.kind() {
                ReductionKind::Routh => reduced.momentum(),
                ReductionKind::Chaplygin => Vec::new(),
            },
            curvature_force: reduced.is_gyroscopic(),
        };
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
