//! One-step maps of run-time-sized systems ([`DynSystem`]): the core for
//! every size (docs/theory.md §11).
//!
//! The same steppers and the same driver as the compile-time-sized core,
//! with states and unknowns in run-time-sized vectors and every buffer
//! allocated once per stepper. A compiled model runs here through
//! [`Fixed`](diracvi_geometry::dynamic::Fixed) and produces the same
//! numbers as the compile-time-sized core, bit for bit.
//!
//! * [`DynSubStepper`] — what the impact integrator needs from a one-step
//!   map (the counterpart of [`SubStepper`](crate::SubStepper));
//! * [`DynLagrangeDirac`] — the (+) and (−) discrete Lagrange–Dirac
//!   steppers (\[DDM\] 5.3b, 5.9b), degenerate Lagrangians included;
//! * [`DynOneStep`] and [`integrate_dyn`] — the trajectory driver
//!   (the counterpart of [`integrate`](crate::integrate)).

mod composition;
mod constrained_legendre;
mod degenerate;
mod equations;
mod hamiltonian;
mod hamiltonian_tangent;
mod lagrange_dirac;
mod sparse_step;
mod supplied;
mod tangent;

pub use composition::{DynComposed, DynStage};
pub use constrained_legendre::{
    DynConstrainedLegendre, dyn_constrained_velocity, dyn_continuous_measures,
};
pub use hamiltonian::DynNonholonomicHamiltonian;
pub use lagrange_dirac::{DynLagrangeDirac, DynOrientedStep, dyn_step_measures};
pub use tangent::{
    DynStepSensitivity, DynStepTangent, check_directions, implicit_derivative,
    multipliers_from_reaction, physical_tangent,
};

use crate::{Direction, DynState, StepError, StepStats};
use diracvi_geometry::GeometryError;
use diracvi_geometry::dynamic::{DynSystem, check_initial_dyn, momentum_dyn};
use nalgebra::DVector;
use serde::Serialize;

/// `Σ_i x_i y_i` summed in index order, as nalgebra's products of small
/// fixed-size matrices do (the run-time core keeps their order of
/// operations, so that it reproduces the compile-time core bit for bit).
pub fn dot(x: impl Iterator<Item = f64>, y: impl Iterator<Item = f64>) -> f64 {
    let mut it = x.zip(y);
    let Some((a, b)) = it.next() else {
        return 0.0;
    };
    it.fold(a * b, |acc, (a, b)| acc + a * b)
}

/// One oriented sub-step `a → b = a + d` (see [`SubStep`](crate::SubStep)).
#[derive(Debug, Clone, PartialEq)]
pub struct DynSubStep {
    /// The end point (rounded `a + d`; steps taken sum with compensation).
    pub b: DVector<f64>,
    /// The increment, as solved for.
    pub d: DVector<f64>,
    /// The oriented momentum at `b`.
    pub pi_b: DVector<f64>,
    /// The constraint reaction `A(a)ᵀ μ` at the start (oriented).
    pub reaction: DVector<f64>,
    /// Solver statistics.
    pub stats: StepStats,
    /// The sub-step's tangent map, `∂(b, π_b)/∂(a, π_a)` and `∂(b, π_b)/∂h`,
    /// when the stepper builds it while stepping
    /// ([`DynSubStepper::carry_tangents`]: a composition, whose stages are
    /// not kept); `None` otherwise.
    pub tangent: Option<DynStepTangent>,
    /// The sub-step's derivative in the parameter directions,
    /// `∂(b, π_b)/∂θ · D` (`2n × r`), when the stepper builds it while
    /// stepping ([`DynSubStepper::carry_sensitivity`]); `None` otherwise.
    pub parameters: Option<nalgebra::DMatrix<f64>>,
}

/// A one-step map of a run-time-sized system that the impact integrator can
/// drive (see [`SubStepper`](crate::SubStepper); every momentum is
/// oriented, `π = sign · p`).
pub trait DynSubStepper {
    /// The system stepped.
    type System: DynSystem;

    /// The system.
    fn system(&self) -> &Self::System;

    /// Direction of time.
    fn direction(&self) -> Direction;

    /// The sub-step from `(a, π_a)` with step `h`, as a step taken
    /// (warm-started, updating the warm start). `t` is the time of `a`
    /// (a time-dependent system reads it; errors name it).
    ///
    /// # Errors
    /// The stepper's error.
    fn sub_step(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
    ) -> Result<DynSubStep, StepError>;

    /// The same solve from the increment guess `guess`, leaving the
    /// warm-start state of the steps taken untouched.
    ///
    /// # Errors
    /// The stepper's error.
    fn trial_step(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        guess: &DVector<f64>,
    ) -> Result<DynSubStep, StepError>;

    /// [`sub_step`](Self::sub_step) from the increment guess `guess` (a
    /// composed method's stage extrapolation); by default the guess is
    /// ignored.
    ///
    /// # Errors
    /// The stepper's error.
    fn sub_step_from(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        guess: &DVector<f64>,
    ) -> Result<DynSubStep, StepError> {
        let _ = guess;
        self.sub_step(t, a, pi_a, h)
    }

    /// Forget the warm start (after an impact).
    fn reset_warm_start(&mut self);

    /// Move the stages logged since the last call into `out`, in the
    /// order taken: the ends of the inner steps of a composed step, when
    /// the composition logs them ([`DynComposed::log_stages`]). A stepper
    /// with no inner steps logs none (the default).
    fn drain_stages(&mut self, out: &mut Vec<DynStage>) {
        let _ = out;
    }

    /// Build the tangent map of every sub-step from now on, as it is taken
    /// ([`DynSubStep::tangent`]), for a stepper that cannot build it
    /// afterwards from the sub-step's result alone (a composition: its
    /// stages are gone). Called by an integrator that tracks derivatives;
    /// by default there is nothing to do.
    fn carry_tangents(&mut self) {}

    /// As [`carry_tangents`](Self::carry_tangents), with the derivative in
    /// the parameter directions `directions` (`P × r`) built too
    /// ([`DynSubStep::parameters`]; docs/theory.md §12.4). By default
    /// nothing to do.
    fn carry_sensitivity(&mut self, directions: &nalgebra::DMatrix<f64>) {
        let _ = directions;
    }

    /// The tangent map of the sub-step `sub` taken from `a` with step `h`
    /// (docs/theory.md §12): `∂(b, π_b)/∂(a, π_a)` and `∂(b, π_b)/∂h`.
    /// `t` is the time of `a`. By default not available.
    ///
    /// # Errors
    /// [`StepError::Unsupported`] where the stepper has no tangent map (the
    /// default) or the step is degenerate; [`StepError::Geometry`] when a
    /// derivative cannot be evaluated.
    fn sub_step_tangent(
        &self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
    ) -> Result<DynStepTangent, StepError> {
        let _ = (t, a, sub, h);
        Err(StepError::Unsupported(
            "this stepper has no tangent map (--jacobian): it is built for the Lagrange–Dirac \
             stepper, its compositions (orders 2, 4 and 6) and the Hamiltonian stepper"
                .to_owned(),
        ))
    }

    /// [`sub_step_tangent`](Self::sub_step_tangent) together with the
    /// derivative of `(b, π_b)` in the parameter directions `directions`
    /// (`P × r`; docs/theory.md §12.4). By default not available.
    ///
    /// # Errors
    /// As [`sub_step_tangent`](Self::sub_step_tangent).
    fn sub_step_sensitivity(
        &self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
        directions: &nalgebra::DMatrix<f64>,
    ) -> Result<DynStepSensitivity, StepError> {
        let _ = (t, a, sub, h, directions);
        Err(StepError::Unsupported(
            "this stepper has no parameter sensitivities (--sensitivity): they are built for \
             the Lagrange–Dirac stepper, its compositions (orders 2, 4 and 6) and the \
             Hamiltonian stepper"
                .to_owned(),
        ))
    }

    /// The derivative of the sub-step: the tangent map
    /// ([`sub_step_tangent`](Self::sub_step_tangent)) and, with
    /// `directions`, the parameter columns
    /// ([`sub_step_sensitivity`](Self::sub_step_sensitivity); none
    /// without). Without `with_h` the sub-step's length does not depend on
    /// the state (every step but the remainder after an impact), so
    /// `∂(b, π_b)/∂h` is not needed and a stepper may leave it zero to save
    /// its cost; by default it is computed all the same.
    ///
    /// # Errors
    /// As [`sub_step_sensitivity`](Self::sub_step_sensitivity).
    #[allow(clippy::too_many_arguments)]
    fn sub_step_derivative(
        &self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
        directions: Option<&nalgebra::DMatrix<f64>>,
        with_h: bool,
    ) -> Result<DynStepSensitivity, StepError> {
        let _ = with_h;
        match directions {
            Some(directions) => self.sub_step_sensitivity(t, a, sub, h, directions),
            None => Ok(DynStepSensitivity {
                tangent: self.sub_step_tangent(t, a, sub, h)?,
                parameters: nalgebra::DMatrix::zeros(2 * a.len(), 0),
            }),
        }
    }

    /// The discrete energy and the constraint residual (docs/theory.md §6)
    /// of the sub-step `a → a + d` with end momentum `π_b`, which started
    /// at time `t` (a time-dependent system's energy is that at the
    /// discretization point).
    ///
    /// # Errors
    /// When a geometric evaluation fails.
    fn measures(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
    ) -> Result<(f64, f64), GeometryError>;
}

/// Compensated summation of positions (see the compile-time-sized
/// `PositionCarry`: Kahan with Knuth's TwoSum).
#[derive(Debug, Clone, PartialEq)]
pub struct DynPositionCarry {
    last: DVector<f64>,
    carry: DVector<f64>,
}

impl DynPositionCarry {
    /// No carry yet, for `n` coordinates.
    pub fn new(n: usize) -> Self {
        Self {
            last: DVector::from_element(n, f64::NAN),
            carry: DVector::zeros(n),
        }
    }

    /// `q + d` with the carry of the previous update when `q` is the point
    /// that update returned (bit for bit); records the new carry.
    pub fn add(&mut self, q: &DVector<f64>, d: &DVector<f64>) -> DVector<f64> {
        let mut out = DVector::zeros(q.len());
        self.add_into(q, d, &mut out);
        out
    }

    /// [`add`](Self::add) into `out` (of the length of `q`), without
    /// allocating.
    pub fn add_into(&mut self, q: &DVector<f64>, d: &DVector<f64>, out: &mut DVector<f64>) {
        let same = q
            .iter()
            .zip(self.last.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits());
        for i in 0..q.len() {
            let dd = if same { d[i] + self.carry[i] } else { d[i] };
            let s = q[i] + dd;
            let bb = s - q[i];
            self.carry[i] = (q[i] - (s - bb)) + (dd - bb);
            out[i] = s;
        }
        self.last.copy_from(out);
    }
}

/// The checks every stepper makes on its input: a finite `h > 0` and a
/// finite start `(a, π_a)`.
///
/// # Errors
/// [`StepError::BadStep`], [`StepError::NonFinite`].
pub fn validate_step_dyn(
    t: f64,
    h: f64,
    a: &DVector<f64>,
    pi_a: &DVector<f64>,
) -> Result<(), StepError> {
    if !(h.is_finite() && h > 0.0) {
        return Err(StepError::BadStep { t, h });
    }
    if a.iter().chain(pi_a.iter()).any(|v| !v.is_finite()) {
        return Err(StepError::NonFinite {
            t,
            what: "state",
            iterations: 0,
        });
    }
    Ok(())
}

/// Initial state from continuous data (see
/// [`state_from_velocity`](crate::state_from_velocity)): the data are
/// checked ([`check_initial_dyn`]) and `p_0 = ∂L/∂v(q(0), v(0))`.
///
/// # Errors
/// As [`check_initial_dyn`]; non-finite `t0` or momentum.
pub fn dyn_state_from_velocity<Sy: DynSystem>(
    system: &Sy,
    t0: f64,
    q0: &DVector<f64>,
    v0: &DVector<f64>,
) -> Result<DynState, GeometryError> {
    diracvi_geometry::ensure_finite("t0", &[t0])?;
    check_initial_dyn(system, t0, q0, v0)?;
    let p = momentum_dyn(system, q0, v0);
    diracvi_geometry::ensure_finite("p(0) = ∂L/∂v", p.as_slice())?;
    Ok(DynState {
        t: t0,
        q: q0.clone(),
        p,
    })
}

/// One step taken from a physical state (`p`, not `π`): the state at
/// `t ± h` and the solver statistics.
///
/// # Errors
/// The stepper's error.
pub fn dyn_step_state<St: DynSubStepper + ?Sized>(
    stepper: &mut St,
    state: &DynState,
    h: f64,
) -> Result<(DynState, StepStats), StepError> {
    let sign = stepper.direction().sign();
    let s = stepper.sub_step(state.t, &state.q, &(&state.p * sign), h)?;
    Ok((
        DynState {
            t: state.t + sign * h,
            q: s.b,
            p: s.pi_b * sign,
        },
        s.stats,
    ))
}

/// One step with its discrete energy and constraint residual: what a smooth
/// stepper's [`DynOneStep::advance`] does.
///
/// # Errors
/// The stepper's error; a failed measure as [`StepError::Geometry`].
pub fn dyn_advance<St: DynSubStepper + ?Sized>(
    stepper: &mut St,
    from: &DynState,
    h: f64,
) -> Result<DynStepOutput, StepError> {
    let sign = stepper.direction().sign();
    let flipped;
    let pi_a = if stepper.direction() == Direction::Forward {
        &from.p
    } else {
        flipped = &from.p * sign;
        &flipped
    };
    let s = stepper.sub_step(from.t, &from.q, pi_a, h)?;
    let (energy, constraint_residual) = stepper
        .measures(from.t, &from.q, &s, h)
        .map_err(|source| StepError::Geometry { t: from.t, source })?;
    // The momentum in place: no new vector, and forward no pass over it.
    let mut p = s.pi_b;
    if stepper.direction() == Direction::Backward {
        p *= sign;
    }
    Ok(DynStepOutput {
        to: DynState {
            t: from.t + sign * h,
            q: s.b,
            p,
        },
        energy,
        constraint_residual,
        stats: s.stats,
    })
}

/// One record of a trajectory (see [`Record`](crate::Record)).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DynRecord {
    /// Step index.
    pub k: usize,
    /// Time `t_k`.
    pub t: f64,
    /// Configuration `q_k`.
    pub q: DVector<f64>,
    /// Momentum `p_k`.
    pub p: DVector<f64>,
    /// Discrete energy of the step ending at `k`.
    pub energy: f64,
    /// Constraint residual of the step ending at `k`.
    pub constraint_residual: f64,
}

/// What one step produced.
#[derive(Debug, Clone, PartialEq)]
pub struct DynStepOutput {
    /// The new state.
    pub to: DynState,
    /// Discrete energy of the step (of its last sub-step after an impact).
    pub energy: f64,
    /// Constraint residual of the step.
    pub constraint_residual: f64,
    /// Solver statistics.
    pub stats: StepStats,
}

/// A one-step map the driver can iterate (see [`OneStep`](crate::OneStep)).
pub trait DynOneStep {
    /// Events a step may produce (impacts); `()` for smooth steppers.
    type Event: crate::StepEvent;
    /// The error a step may return.
    type Error: From<StepError>;

    /// Advance from `from` by one grid step `h`, pushing any events (the
    /// driver labels them and any error with the step index).
    ///
    /// # Errors
    /// Whatever the step fails with.
    fn advance(
        &mut self,
        from: &DynState,
        h: f64,
        events: &mut Vec<Self::Event>,
    ) -> Result<DynStepOutput, Self::Error>;

    /// Move the stages the last steps logged into `out`
    /// ([`DynSubStepper::drain_stages`]); none by default.
    fn drain_stages(&mut self, out: &mut Vec<DynStage>) {
        let _ = out;
    }
}

/// Statistics over every step of a run (see [`Summary`](crate::Summary)).
#[derive(Debug, Clone, PartialEq)]
pub struct DynSummary {
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
    pub final_state: DynState,
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
pub struct DynTrajectory<E> {
    /// The decimated records (empty if not kept).
    pub records: Vec<DynRecord>,
    /// Every event (impact) in order.
    pub events: Vec<E>,
    /// Statistics over every step.
    pub summary: DynSummary,
}

/// Iterate `stepper` for `options.steps` steps of size `h` from `initial`
/// (see [`integrate`](crate::integrate): the same records, summary and grid
/// times `t_k = t_0 ± k h`). `observer(record)` sees every recorded step;
/// `progress(k)` is called after each step.
///
/// # Errors
/// The first step error, located at its step.
pub fn integrate_dyn<St: DynOneStep + ?Sized>(
    stepper: &mut St,
    initial: DynState,
    h: f64,
    options: crate::RunOptions,
    mut observer: impl FnMut(&DynRecord),
    mut progress: impl FnMut(usize),
) -> Result<DynTrajectory<St::Event>, crate::Located<St::Error>> {
    let mut events = Vec::new();
    let mut records = Vec::new();
    let mut emit = |r: DynRecord, records: &mut Vec<DynRecord>| {
        observer(&r);
        if options.keep_records {
            records.push(r);
        }
    };
    let t0 = initial.t;
    let mut summary = DynSummary {
        steps: options.steps,
        initial_energy: f64::NAN,
        final_energy: f64::NAN,
        max_abs_energy_deviation: 0.0,
        max_constraint_residual: 0.0,
        final_state: initial.clone(),
        newton_iterations: 0,
        jacobian_evaluations: 0,
        root_iterations: 0,
        post_impact_iterations: 0,
        degenerate_steps: 0,
    };
    let mut state = initial;
    let wants =
        |k: usize| options.every > 0 && (k.is_multiple_of(options.every) || k == options.steps);
    if options.steps == 0 && options.every > 0 {
        emit(
            DynRecord {
                k: 0,
                t: state.t,
                q: state.q.clone(),
                p: state.p.clone(),
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
            .map_err(|e| crate::Located::new(k, e))?;
        for event in &mut events[before..] {
            crate::StepEvent::set_step(event, k);
        }
        if k == 0 {
            summary.initial_energy = out.energy;
            if wants(0) {
                emit(
                    DynRecord {
                        k: 0,
                        t: state.t,
                        q: state.q.clone(),
                        p: state.p.clone(),
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
        let sign = if out.to.t >= state.t { 1.0 } else { -1.0 };
        state = out.to;
        state.t = t0 + sign * ((k + 1) as f64 * h);
        if wants(k + 1) {
            emit(
                DynRecord {
                    k: k + 1,
                    t: state.t,
                    q: state.q.clone(),
                    p: state.p.clone(),
                    energy: out.energy,
                    constraint_residual: out.constraint_residual,
                },
                &mut records,
            );
        }
        progress(k + 1);
    }
    summary.final_state = state;
    Ok(DynTrajectory {
        records,
        events,
        summary,
    })
}
