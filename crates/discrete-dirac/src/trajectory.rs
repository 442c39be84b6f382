//! A trajectory driver over `N` steps, forward or backward, recording
//! decimated `(k, t, q, p, energy, constraint residual)` (docs/theory.md §6) and
//! summary statistics over *every* step, without storing every step unless
//! asked.

use crate::{Located, State, StepError, StepStats};
use nalgebra::SVector;
use serde::Serialize;

/// One record of a trajectory.
///
/// `energy` and `constraint_residual` belong to the step that ends at `k`
/// (for `k = 0`, to the first step): the discrete energy
/// `E_d = −D3 L_d(q_{k−1}, q_k, h)` and `max_a |h ω_d^a(q_{k−1}, q_k)| / max(1, |q_k|)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Record<const N: usize> {
    /// Step index.
    pub k: usize,
    /// Time `t_k`.
    pub t: f64,
    /// Configuration `q_k`.
    pub q: SVector<f64, N>,
    /// Momentum `p_k`.
    pub p: SVector<f64, N>,
    /// Discrete energy of the step ending at `k`.
    pub energy: f64,
    /// Constraint residual of the step ending at `k`.
    pub constraint_residual: f64,
}

/// What one step produced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepOutput<const N: usize> {
    /// The new state.
    pub to: State<N>,
    /// Discrete energy of the step (of its last sub-step after an impact).
    pub energy: f64,
    /// Constraint residual of the step (docs/theory.md §6).
    pub constraint_residual: f64,
    /// Solver statistics.
    pub stats: StepStats,
}

/// A one-step map the driver can iterate: the smooth steppers and the impact
/// integrator implement it.
pub trait OneStep<const N: usize> {
    /// Events a step may produce (impacts); `()` for smooth steppers.
    type Event: StepEvent;
    /// The error a step may return.
    type Error: From<StepError>;

    /// Advance from `from` by one grid step `h`, pushing any events (the
    /// driver labels them and any error with the step index).
    ///
    /// # Errors
    /// Whatever the step fails with.
    fn advance(
        &mut self,
        from: &State<N>,
        h: f64,
        events: &mut Vec<Self::Event>,
    ) -> Result<StepOutput<N>, Self::Error>;
}

/// An event of a one-step map (an impact), labelled by the driver with
/// the index of the grid step it happened in.
pub trait StepEvent: Clone {
    /// Label the event with grid step `step`.
    fn set_step(&mut self, step: usize);
}

impl StepEvent for () {
    fn set_step(&mut self, _: usize) {}
}

/// What to record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunOptions {
    /// Number of steps.
    pub steps: usize,
    /// Record every `every`-th step (and always the last); 0 records none.
    pub every: usize,
    /// Keep the records in the returned trajectory (otherwise only the
    /// observer sees them).
    pub keep_records: bool,
}

impl RunOptions {
    /// `steps` steps, recording every step.
    pub fn new(steps: usize) -> Self {
        Self {
            steps,
            every: 1,
            keep_records: true,
        }
    }

    /// Record every `every`-th step only.
    pub fn every(mut self, every: usize) -> Self {
        self.every = every;
        self
    }

    /// Do not keep records in memory.
    pub fn discard_records(mut self) -> Self {
        self.keep_records = false;
        self
    }
}

/// Statistics over every step of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary<const N: usize> {
    /// Steps taken.
    pub steps: usize,
    /// Energy of the first step.
    pub initial_energy: f64,
    /// Energy of the last step.
    pub final_energy: f64,
    /// `max_k |E_k − E_0|`.
    pub max_abs_energy_deviation: f64,
    /// `max_k` constraint residual.
    pub max_constraint_residual: f64,
    /// The final state.
    pub final_state: State<N>,
    /// Newton iterations over the run.
    pub newton_iterations: usize,
    /// Jacobian evaluations over the run.
    pub jacobian_evaluations: usize,
    /// Root-finder iterations locating impact times.
    pub root_iterations: usize,
    /// Iterations of the post-impact solves.
    pub post_impact_iterations: usize,
    /// Steps that used the degenerate (hidden-constraint) path.
    pub degenerate_steps: usize,
}

/// A run's records, events and summary.
#[derive(Debug, Clone)]
pub struct Trajectory<const N: usize, E> {
    /// The decimated records (empty if not kept).
    pub records: Vec<Record<N>>,
    /// Every event (impact) in order.
    pub events: Vec<E>,
    /// Statistics over every step.
    pub summary: Summary<N>,
}

/// [`integrate`] without observers: take `options.steps` steps of size `h`
/// from `initial` and return the trajectory (records as `options` says,
/// every event, the summary).
///
/// # Errors
/// The first step error, which names its step and time.
pub fn simulate<St, const N: usize>(
    stepper: &mut St,
    initial: State<N>,
    h: f64,
    options: RunOptions,
) -> Result<Trajectory<N, St::Event>, Located<St::Error>>
where
    St: OneStep<N>,
{
    integrate(stepper, initial, h, options, |_| {}, |_| {})
}

/// Iterate `stepper` for `options.steps` steps of size `h` from `initial`.
/// `observer(record)` sees every recorded step as it is produced;
/// `progress(k)` is called after each step.
///
/// # Errors
/// The first step error, located at its step.
pub fn integrate<St, const N: usize>(
    stepper: &mut St,
    initial: State<N>,
    h: f64,
    options: RunOptions,
    mut observer: impl FnMut(&Record<N>),
    mut progress: impl FnMut(usize),
) -> Result<Trajectory<N, St::Event>, Located<St::Error>>
where
    St: OneStep<N>,
{
    let mut events = Vec::new();
    let mut records = Vec::new();
    let mut emit = |r: Record<N>, records: &mut Vec<Record<N>>| {
        observer(&r);
        if options.keep_records {
            records.push(r);
        }
    };
    let mut state = initial;
    let mut summary = Summary {
        steps: options.steps,
        initial_energy: f64::NAN,
        final_energy: f64::NAN,
        max_abs_energy_deviation: 0.0,
        max_constraint_residual: 0.0,
        final_state: initial,
        newton_iterations: 0,
        jacobian_evaluations: 0,
        root_iterations: 0,
        post_impact_iterations: 0,
        degenerate_steps: 0,
    };
    let wants =
        |k: usize| options.every > 0 && (k.is_multiple_of(options.every) || k == options.steps);
    if options.steps == 0 && options.every > 0 {
        emit(
            Record {
                k: 0,
                t: state.t,
                q: state.q,
                p: state.p,
                energy: f64::NAN,
                constraint_residual: 0.0,
            },
            &mut records,
        );
    }
    for k in 0..options.steps {
        let before = events.len();
        let out = stepper
            .advance(&state, h, &mut events)
            .map_err(|e| Located::new(k, e))?;
        for event in &mut events[before..] {
            event.set_step(k);
        }
        if k == 0 {
            summary.initial_energy = out.energy;
            if wants(0) {
                emit(
                    Record {
                        k: 0,
                        t: state.t,
                        q: state.q,
                        p: state.p,
                        energy: out.energy,
                        constraint_residual: out.constraint_residual,
                    },
                    &mut records,
                );
            }
        }
        summary.final_energy = out.energy;
        summary.max_abs_energy_deviation = summary
            .max_abs_energy_deviation
            .max((out.energy - summary.initial_energy).abs());
        summary.max_constraint_residual =
            summary.max_constraint_residual.max(out.constraint_residual);
        summary.newton_iterations += out.stats.iterations;
        summary.jacobian_evaluations += out.stats.jacobian_evaluations;
        summary.root_iterations += out.stats.root_iterations;
        summary.post_impact_iterations += out.stats.post_impact_iterations;
        summary.degenerate_steps += usize::from(out.stats.degenerate);
        // Times on the grid `t_k = t_0 ± k h`, not accumulated: adding the
        // same `h` again and again rounds the same way each time (a drift of
        // `K ulp(t)/2`, 1e-7 after 10⁷ steps at t ≈ 50).
        let sign = if out.to.t >= state.t { 1.0 } else { -1.0 };
        state = out.to;
        state.t = initial.t + sign * ((k + 1) as f64 * h);
        if wants(k + 1) {
            emit(
                Record {
                    k: k + 1,
                    t: state.t,
                    q: state.q,
                    p: state.p,
                    energy: out.energy,
                    constraint_residual: out.constraint_residual,
                },
                &mut records,
            );
        }
        progress(k + 1);
    }
    summary.final_state = state;
    Ok(Trajectory {
        records,
        events,
        summary,
    })
}
