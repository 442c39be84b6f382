//! Running a scenario reduced by its model's declared symmetry
//! (docs/theory.md §7): the reduced system on shape space is integrated by
//! the same Lagrange–Dirac stepper and impact integrator, and the full
//! states are reconstructed step by step, so records, impacts and summaries
//! have the full system's shape.

use crate::drive::{Watch, drive_impacts, finish};
use crate::{
    Core, Impacts, Method, RecordSink, ReductionSummary, RunError, RunOutcome, RunPlan, Stepper,
};
use diracvi_discrete_dirac::{Direction, LagrangeDirac, RunOptions, state_from_velocity};
use diracvi_geometry::{CyclicSymmetry, Reduced, ReductionKind};
use diracvi_impact::{ImpactError, ImpactIntegrator, OrReject, Reconstructing, VciLaw};
use diracvi_models::{NamedSystem, ReducedModelVisitor, RunSetup};
use std::time::Instant;

pub(crate) struct ReducedRunner<'a> {
    pub(crate) plan: RunPlan,
    pub(crate) sink: &'a mut dyn RecordSink,
    pub(crate) progress: &'a mut dyn FnMut(usize),
}

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
        let ReducedRunner {
            plan,
            sink,
            progress,
        } = self;
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
        let initial = state_from_velocity::<Mo, N, M>(model, 0.0, &setup.q0, &setup.v0)
            .map_err(|error| RunError::InitialState { error })?;
        let s0 = reduced.project(&setup.q0);
        let sd0 = reduced.project(&setup.v0);
        let initial_reduced = state_from_velocity(&reduced, 0.0, &s0, &sd0)
            .map_err(|error| RunError::InitialState { error })?;
        let options = RunOptions::new(plan.steps)
            .every(plan.every)
            .discard_records();
        let rest_energy = (plan.steps == 0).then(|| model.energy(&setup.q0, &setup.v0));
        let start = Instant::now();
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
        // the model's invariants, on the reconstructed full states
        let eval = |q: &[f64], p: &[f64], out: &mut [f64]| {
            let at = nalgebra::SVector::<f64, N>::from_column_slice;
            model.invariants(&at(q), &at(p), out)
        };
        let mut watched = Watch::new(
            &mut reconstructing,
            model.invariant_names(),
            &eval,
            initial.q.as_slice(),
            initial.p.as_slice(),
        );
        let (trajectory, impacts) = drive_impacts(
            &mut watched,
            initial,
            setup.h,
            options,
            rest_energy,
            method,
            sink,
            progress,
        )
        .map_err(failed)?;
        let invariants = watched.finish();
        Ok(RunOutcome {
            reduction: Some(reduction),
            invariants,
            ..finish(
                trajectory,
                impacts,
                rest_energy,
                model.energy_scale(&setup.q0, &setup.v0),
                start,
            )
        })
    }
}
