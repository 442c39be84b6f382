//! The runner on the run-time-sized core (docs/theory.md §11): a
//! [`DynModelVisitor`] that builds the stepper and impact law a [`RunPlan`]
//! asks for over any [`NamedDynSystem`] — a model file of a size the
//! compile-time-sized core has no instantiation for (the others take that
//! faster path) — drives it over the steps and erases the results into a
//! [`RunOutcome`].

use crate::drive::{Watch, finish};
use crate::{
    Core, ImpactRecord, Impacts, Method, ModelSummary, RecordSink, RecordView, RunError,
    RunOutcome, RunPlan, StageView, Stepper,
};
use diracvi_discrete_dirac::dynamic::{
    DynComposed, DynLagrangeDirac, DynNonholonomicHamiltonian, DynOneStep, DynRecord, DynStage,
    DynStepOutput, DynTrajectory, dyn_state_from_velocity, integrate_dyn,
};
use diracvi_discrete_dirac::{DynState, Located, RunOptions};
use diracvi_geometry::AdScalar;
use diracvi_geometry::GeometryError;
use diracvi_geometry::dynamic::{
    DynSystem, LagrangianTerms, energy_dyn, energy_scale_dyn, momentum_dyn,
};
use diracvi_impact::dynamic::{
    DynContinuousElasticLaw, DynHamiltonianLaw, DynImpactEvent, DynImpactIntegrator, DynVciLaw,
};
use diracvi_impact::{ImpactError, OrReject};
use diracvi_models::{DynModelVisitor, DynRunSetup, NamedDynSystem};
use nalgebra::{DMatrix, DVector};
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// Describe a model of any size (see [`describe`](crate::describe)).
pub(crate) struct DescribeDyn;

impl DynModelVisitor for DescribeDyn {
    type Output = ModelSummary;
    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> ModelSummary {
        let p0 = momentum_dyn(model, &setup.q0, &setup.v0);
        let (regular, regular_on_constraints) = regular_at_dyn(model, setup);
        ModelSummary {
            coordinates: model.coordinates(),
            boundary_names: (0..model.boundary_count())
                .map(|j| model.piece_name(j))
                .collect(),
            constraints: model.constraint_count(),
            has_hamiltonian: model
                .hamiltonian(setup.q0.as_slice(), p0.as_slice())
                .is_some(),
            regular_lagrangian: regular,
            algebraic_variables: !regular_on_constraints,
        }
    }
}

/// Above this many coordinates, a system whose constrained Legendre map is
/// solved sparsely ([`DynConstrainedLegendre`]) has its regularity decided
/// by that sparse KKT factorization instead of the dense singular values
/// (cubic in the size: 14 s for a 3 000-body chain before every run).
const DENSE_REGULARITY_AT_MOST: usize = 256;

/// Whether `∂²L/∂v²` is invertible at the setup's initial data, on the
/// whole tangent space and on the constraint distribution `ker A(q0)`:
/// by its singular values (as [`crate::error::regularity`]), or for a large
/// sparse system by whether the sparse LU of the KKT matrix
/// `[[∂²L/∂v², −Aᵀ], [A, 0]]` (of `∂²L/∂v²` alone for the whole space)
/// meets no pivot below `1e-12` of the largest entry — the constrained
/// Legendre map's own test of invertibility.
pub(crate) fn regular_at_dyn<Mo: NamedDynSystem>(model: &Mo, setup: &DynRunSetup) -> (bool, bool) {
    if model.coordinate_count() > DENSE_REGULARITY_AT_MOST
        && let Some(regularity) = sparse_regularity(model, setup)
    {
        return regularity;
    }
    let (_, hessian) = diracvi_geometry::dynamic::legendre_jet_dyn(model, &setup.q0, &setup.v0);
    let (n, m) = (model.coordinate_count(), model.constraint_count());
    let mut forms = vec![0.0; m * n];
    model.constraint_forms(setup.q0.as_slice(), &mut forms);
    crate::error::regularity(hessian, &nalgebra::DMatrix::from_row_slice(m, n, &forms))
}

/// [`regular_at_dyn`] by sparse KKT factorizations, `None` when the
/// constrained Legendre map of `model` (or of `model` without its
/// constraints) is not solved sparsely.
fn sparse_regularity<Mo: NamedDynSystem>(model: &Mo, setup: &DynRunSetup) -> Option<(bool, bool)> {
    use diracvi_discrete_dirac::Structure;
    use diracvi_discrete_dirac::dynamic::DynConstrainedLegendre;
    let p0 = momentum_dyn(model, &setup.q0, &setup.v0);
    let mut on = DynConstrainedLegendre::new(model);
    if on.structure() != Structure::Sparse {
        return None;
    }
    let regular_on = on.velocity(model, &setup.q0, &p0).is_ok();
    if model.constraint_count() == 0 {
        return Some((regular_on, regular_on));
    }
    let free = Unconstrained(model);
    let mut whole = DynConstrainedLegendre::new(&free);
    if whole.structure() != Structure::Sparse {
        return None;
    }
    let regular = whole.velocity(&free, &setup.q0, &p0).is_ok();
    Some((regular, regular_on))
}

/// A system without its constraints: its Lagrangian (term by term) and
/// nothing else, for the regularity of `∂²L/∂v²` on the whole space.
struct Unconstrained<'a, Sy>(&'a Sy);

impl<Sy: DynSystem> DynSystem for Unconstrained<'_, Sy> {
    fn coordinate_count(&self) -> usize {
        self.0.coordinate_count()
    }
    fn constraint_count(&self) -> usize {
        0
    }
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.0.lagrangian(q, v)
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        self.0.lagrangian_terms()
    }
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        self.0.lagrangian_term(e, q, v)
    }
}

/// What a run on the run-time-sized core starts from (the plain runner
/// and [`DynReducedRunner`](crate::reduced::DynReducedRunner)): the full
/// initial state, the driver's options, the clock, the energy a run of
/// zero steps reports, and the method that will run (checked).
pub(crate) struct DynStart {
    pub(crate) initial: DynState,
    pub(crate) options: RunOptions,
    pub(crate) clock: Instant,
    pub(crate) rest_energy: Option<f64>,
    pub(crate) method: Method,
}

impl DynStart {
    /// The start of `plan` over `model` from `setup`'s initial data.
    ///
    /// # Errors
    /// [`RunError::InitialState`] when the initial state cannot be formed;
    /// the method's refusal ([`Method::check`]).
    pub(crate) fn new<Mo: NamedDynSystem>(
        plan: &RunPlan,
        model: &Mo,
        setup: &DynRunSetup,
        momentum: Option<&DVector<f64>>,
    ) -> Result<Self, RunError> {
        if model.time_dependent() {
            let refused = |what| RunError::TimeDependentUnsupported {
                model: model.name().to_owned(),
                what,
            };
            if plan.stepper == crate::Stepper::Hamiltonian {
                return Err(refused(
                    "the Hamiltonian stepper (it steps an autonomous H(q, p)); use the lagrange stepper",
                ));
            }
            if model.boundary_count() > 0 {
                return Err(refused(
                    "boundaries (the impact law matches discrete energies, which needs an autonomous Lagrangian)",
                ));
            }
        }
        let initial = match momentum {
            // The momentum given (a circuit: its capacitor currents are not
            // initial data).
            Some(p) => {
                let error = |error| RunError::InitialState { error };
                if p.len() != setup.q0.len() {
                    return Err(error(GeometryError::DimensionMismatch {
                        what: "p(0)",
                        expected: setup.q0.len(),
                        got: p.len(),
                    }));
                }
                diracvi_geometry::ensure_finite("p(0)", p.as_slice()).map_err(error)?;
                DynState {
                    t: 0.0,
                    q: setup.q0.clone(),
                    p: p.clone(),
                }
            }
            None => dyn_state_from_velocity(model, 0.0, &setup.q0, &setup.v0)
                .map_err(|error| RunError::InitialState { error })?,
        };
        let options = RunOptions::new(plan.steps)
            .every(plan.every)
            .discard_records();
        let clock = Instant::now();
        // A run of zero steps reports the energy of the initial data.
        let rest_energy = (plan.steps == 0).then(|| energy_dyn(model, &setup.q0, &setup.v0));
        let method = Method::planned(
            plan,
            setup.discretization,
            setup.constraint,
            model.constraint_count() > 0,
            Core::RunTime,
        );
        method.check()?;
        Ok(Self {
            initial,
            options,
            clock,
            rest_energy,
            method,
        })
    }

    /// Drive `integrator` from this start over the plan's steps, watching
    /// `model`'s invariants on the states it reaches, feeding every recorded
    /// step to `sink`, and finish the outcome (energy scale, wall time,
    /// impacts, invariants).
    ///
    /// # Errors
    /// [`RunError::Integration`] for a step that failed.
    pub(crate) fn drive<St, Mo: NamedDynSystem>(
        self,
        integrator: &mut St,
        model: &Mo,
        setup: &DynRunSetup,
        sink: &mut dyn RecordSink,
        progress: &mut dyn FnMut(usize),
    ) -> Result<RunOutcome, RunError>
    where
        St: DynOneStep<Event = DynImpactEvent, Error = ImpactError>,
    {
        let eval = |q: &[f64], p: &[f64], out: &mut [f64]| model.invariants(q, p, out);
        let mut watched = Watch::new(
            integrator,
            model.invariant_names(),
            &eval,
            self.initial.q.as_slice(),
            self.initial.p.as_slice(),
        );
        let (trajectory, impacts) = drive_impacts(
            &mut watched,
            self.initial,
            setup.h,
            self.options,
            self.rest_energy,
            self.method,
            sink,
            progress,
        )
        .map_err(|error| RunError::Integration {
            model: model.name().to_string(),
            error,
        })?;
        let invariants = watched.finish();
        Ok(RunOutcome {
            invariants,
            driven: model.time_dependent(),
            ..finish(
                trajectory,
                impacts,
                self.rest_energy,
                energy_scale_dyn(model, &setup.q0, &setup.v0),
                self.clock,
            )
        })
    }
}

/// Run a model of any size as a [`RunPlan`] says.
pub(crate) struct DynRunner<'a> {
    pub(crate) plan: RunPlan,
    pub(crate) sink: &'a mut dyn RecordSink,
    pub(crate) progress: &'a mut dyn FnMut(usize),
    /// The initial momentum, when it is given rather than `∂L/∂v` of the
    /// setup's velocity (a circuit at order 2: the netlist gives charges
    /// and inductor currents, Kirchhoff's law leaves a loop's capacitor
    /// currents open).
    pub(crate) momentum: Option<DVector<f64>>,
}

impl DynModelVisitor for DynRunner<'_> {
    type Output = Result<RunOutcome, RunError>;

    fn visit<Mo: NamedDynSystem>(
        self,
        model: &Mo,
        setup: &DynRunSetup,
    ) -> Result<RunOutcome, RunError> {
        let plan = self.plan.clone();
        self.run_model(model, setup)
            .map_err(|e| crate::error::composed_start(e, &plan))
    }
}

impl DynRunner<'_> {
    /// [`DynModelVisitor::visit`] before its errors are classified.
    fn run_model<Mo: NamedDynSystem>(
        self,
        model: &Mo,
        setup: &DynRunSetup,
    ) -> Result<RunOutcome, RunError> {
        let DynRunner {
            plan,
            sink,
            progress,
            momentum,
        } = self;
        let start = DynStart::new(&plan, model, setup, momentum.as_ref())?;
        let method = start.method;
        let name = model.name();
        // a failure before the first step (setting up the derivatives)
        let failed = |error: ImpactError| RunError::Integration {
            model: name.to_string(),
            error: Located::new(0, error),
        };
        // the parameters' directions and the initial data's derivatives
        // (refusals naming the model before the method's)
        let seeds = if plan.sensitivity.is_empty() {
            None
        } else {
            Some(crate::sensitivity::seeds(model, setup, &plan.sensitivity)?)
        };
        // Derivatives of every Lagrange–Dirac step: a degenerate
        // Lagrangian's steps have the tangent map of the equations they solve,
        // the next step's hidden constraints among them (docs/theory.md
        // §12.8). The Hamiltonian stepper's steps solve for (d, π_b, μ) from
        // H (§12.7); a model without a Hamiltonian is refused below as for
        // any Hamiltonian run.
        let (jacobian, sensitivity, tape);
        // the integrator with the derivatives the plan asks for tracked
        macro_rules! tracked {
            ($integrator:expr) => {{
                let integrator = $integrator;
                let integrator = match &seeds {
                    Some(s) => integrator
                        .track_sensitivity(s.directions.clone(), s.initial.clone())
                        .map_err(|e| failed(ImpactError::Step(e)))?,
                    None => integrator.track_jacobian(),
                };
                if plan.tangents {
                    integrator.record_tangents()
                } else {
                    integrator
                }
            }};
        }
        // One integrator type per stepper: the impact law (the stepper
        // family's, or no impacts) is chosen at run time (`OrReject`), and
        // the same type runs with or without derivatives tracked.
        let reject = plan.impacts == Impacts::Reject;
        let tracks = plan.tracks_derivatives();
        macro_rules! run_with {
            ($stepper:expr, $law:expr) => {{
                let mut integrator =
                    DynImpactIntegrator::with_law($stepper, OrReject::new($law, reject));
                if tracks {
                    integrator = tracked!(integrator);
                }
                let out = start.drive(&mut integrator, model, setup, sink, progress)?;
                jacobian = integrator.jacobian().cloned();
                sensitivity = integrator.sensitivity().cloned();
                tape = integrator.take_tangents();
                out
            }};
        }
        let outcome = match method.stepper {
            Stepper::Lagrange if method.order.is_composed() => run_with!(
                DynComposed::lagrange_dirac(
                    model.clone(),
                    method.discretization,
                    method.constraint,
                    method.direction,
                    method.composition,
                )
                .log_stages(plan.stages),
                DynContinuousElasticLaw
            ),
            Stepper::Lagrange => run_with!(
                DynLagrangeDirac::new(
                    model.clone(),
                    method.discretization,
                    method.constraint,
                    method.direction,
                ),
                DynVciLaw::default()
            ),
            Stepper::Hamiltonian => {
                if model
                    .hamiltonian(start.initial.q.as_slice(), start.initial.p.as_slice())
                    .is_none()
                {
                    let (regular, _) = regular_at_dyn(model, setup);
                    return Err(crate::error::no_hamiltonian(name, regular));
                }
                run_with!(
                    DynNonholonomicHamiltonian::new(
                        model.clone(),
                        method.discretization,
                        method.constraint,
                        method.direction,
                    ),
                    DynHamiltonianLaw
                )
            }
        };
        let sensitivity = match sensitivity {
            Some(s) => plan
                .sensitivity
                .iter()
                .zip(s.column_iter())
                .map(|(name, c)| (name.clone(), c.iter().copied().collect()))
                .collect(),
            None => Vec::new(),
        };
        let n = model.coordinate_count();
        let tangents = tape.map(|steps| crate::TangentTape {
            steps,
            initial: seeds
                .as_ref()
                .map_or_else(|| DMatrix::zeros(2 * n, 0), |s| s.initial.clone()),
            parameters: plan.sensitivity.clone(),
        });
        Ok(RunOutcome {
            jacobian: if plan.jacobian { jacobian } else { None },
            sensitivity,
            tangents,
            accounting: None,
            ..outcome
        })
    }
}

/// Drive an integrator with impacts, feeding every recorded step to `sink`;
/// the summary (of `method`) and the impact records.
#[allow(clippy::too_many_arguments)]
fn drive_impacts<St>(
    stepper: &mut St,
    initial: DynState,
    h: f64,
    options: RunOptions,
    rest_energy: Option<f64>,
    method: Method,
    sink: &mut dyn RecordSink,
    progress: &mut dyn FnMut(usize),
) -> Result<(RunOutcome, Vec<ImpactRecord>), Located<ImpactError>>
where
    St: DynOneStep<Event = DynImpactEvent, Error = ImpactError>,
{
    // The stages of composed steps, for a sink that reads them (the
    // accounting of a system's parts): passed on before the record of the
    // step they make up; a step with an impact passes none.
    let stages = RefCell::new(Vec::new());
    let mut staged = Staged {
        inner: stepper,
        out: &stages,
        scratch: Vec::new(),
    };
    let t = integrate_dyn(
        &mut staged,
        initial,
        h,
        options,
        |r: &DynRecord| {
            // (the record of the start comes after the first step: its
            // stages wait for the next record)
            if r.k > 0 {
                for s in stages.borrow_mut().drain(..) {
                    sink.stage(&StageView {
                        tau: s.tau,
                        t: s.t,
                        q: s.q.as_slice(),
                        p: s.p.as_slice(),
                    });
                }
            }
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
    )?;
    let impacts = t.events.iter().map(impact_record).collect();
    Ok((erase(t, method), impacts))
}

/// A one-step map whose smooth steps' stages go to `out`.
struct Staged<'a, St> {
    inner: &'a mut St,
    out: &'a RefCell<Vec<DynStage>>,
    scratch: Vec<DynStage>,
}

impl<St: DynOneStep> DynOneStep for Staged<'_, St> {
    type Event = St::Event;
    type Error = St::Error;

    fn advance(
        &mut self,
        from: &DynState,
        h: f64,
        events: &mut Vec<Self::Event>,
    ) -> Result<DynStepOutput, Self::Error> {
        let before = events.len();
        let out = self.inner.advance(from, h, events)?;
        self.scratch.clear();
        self.inner.drain_stages(&mut self.scratch);
        if events.len() == before {
            self.out.borrow_mut().append(&mut self.scratch);
        }
        Ok(out)
    }
}

/// The summary of a trajectory of `method`, without the events.
fn erase<E>(t: DynTrajectory<E>, method: Method) -> RunOutcome {
    let s = t.summary;
    RunOutcome {
        steps: s.steps,
        initial_energy: s.initial_energy,
        final_energy: s.final_energy,
        max_abs_energy_deviation: s.max_abs_energy_deviation,
        energy_scale: s.initial_energy.abs(),
        driven: false,
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
        invariants: Vec::new(),
        wall_time: Duration::ZERO,
        reduction: None,
        method,
        jacobian: None,
        sensitivity: Vec::new(),
        tangents: None,
        accounting: None,
    }
}

fn impact_record(e: &DynImpactEvent) -> ImpactRecord {
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
