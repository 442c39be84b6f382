//! Driving a one-step map of compile-time size over the steps and erasing
//! the dimension from what it produced: the records streamed to a
//! [`RecordSink`], the summary as a [`RunOutcome`], the impact events as
//! [`ImpactRecord`]s. Shared by the catalogue runner, the model-file runner
//! and the reduced runner (it depends on none of them).

use crate::{ImpactRecord, InvariantRecord, Method, RecordSink, RecordView, RunOutcome};
use diracvi_discrete_dirac::dynamic::{DynOneStep, DynStage, DynStepOutput};
use diracvi_discrete_dirac::trajectory::StepOutput;
use diracvi_discrete_dirac::{
    DynState, Located, OneStep, Record, RunOptions, State, Trajectory, integrate,
};
use diracvi_impact::{ImpactError, ImpactEvent};
use std::time::{Duration, Instant};

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
) -> Result<(RunOutcome, Vec<ImpactRecord>), Located<ImpactError>>
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
pub(crate) fn drive<St: OneStep<N>, const N: usize>(
    stepper: &mut St,
    initial: State<N>,
    h: f64,
    options: RunOptions,
    rest_energy: Option<f64>,
    sink: &mut dyn RecordSink,
    progress: &mut dyn FnMut(usize),
) -> Result<Trajectory<N, St::Event>, Located<St::Error>> {
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
pub(crate) fn erase<const N: usize, E>(t: Trajectory<N, E>, method: Method) -> RunOutcome {
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
        wall_time: Duration::ZERO,
        reduction: None,
        method,
        jacobian: None,
        sensitivity: Vec::new(),
        tangents: None,
        accounting: None,
        invariants: Vec::new(),
    }
}

/// The first integrals of a model evaluated at a state `(q, p)` into a
/// slice (one entry per invariant).
pub(crate) type InvariantFn<'a> = &'a dyn Fn(&[f64], &[f64], &mut [f64]);

/// A one-step map that evaluates the model's first integrals at the state
/// after every step (impacts included), so the summary holds their
/// deviation over every step, recorded or not — as the energy's. It wraps
/// the integrators of both cores ([`OneStep`] and [`DynOneStep`]).
pub(crate) struct Watch<'a, St> {
    inner: &'a mut St,
    eval: InvariantFn<'a>,
    records: Vec<InvariantRecord>,
    values: Vec<f64>,
}

impl<'a, St> Watch<'a, St> {
    /// Watch `inner`'s steps for the invariants `names` (evaluated by
    /// `eval`), started at the initial state `(q, p)`.
    pub(crate) fn new(
        inner: &'a mut St,
        names: Vec<String>,
        eval: InvariantFn<'a>,
        q: &[f64],
        p: &[f64],
    ) -> Self {
        let mut values = vec![f64::NAN; names.len()];
        if !names.is_empty() {
            eval(q, p, &mut values);
        }
        Watch {
            inner,
            eval,
            records: InvariantRecord::start(names, &values),
            values,
        }
    }

    /// Evaluate the invariants at the state a step reached.
    fn observe(&mut self, q: &[f64], p: &[f64]) {
        if !self.records.is_empty() {
            (self.eval)(q, p, &mut self.values);
            InvariantRecord::observe(&mut self.records, &self.values);
        }
    }

    /// The invariants over the steps taken.
    pub(crate) fn finish(self) -> Vec<InvariantRecord> {
        self.records
    }
}

impl<St: OneStep<N>, const N: usize> OneStep<N> for Watch<'_, St> {
    type Event = St::Event;
    type Error = St::Error;

    fn advance(
        &mut self,
        from: &State<N>,
        h: f64,
        events: &mut Vec<Self::Event>,
    ) -> Result<StepOutput<N>, Self::Error> {
        let out = self.inner.advance(from, h, events)?;
        self.observe(out.to.q.as_slice(), out.to.p.as_slice());
        Ok(out)
    }
}

impl<St: DynOneStep> DynOneStep for Watch<'_, St> {
    type Event = St::Event;
    type Error = St::Error;

    fn advance(
        &mut self,
        from: &DynState,
        h: f64,
        events: &mut Vec<Self::Event>,
    ) -> Result<DynStepOutput, Self::Error> {
        let out = self.inner.advance(from, h, events)?;
        self.observe(out.to.q.as_slice(), out.to.p.as_slice());
        Ok(out)
    }

    fn drain_stages(&mut self, out: &mut Vec<DynStage>) {
        self.inner.drain_stages(out);
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
