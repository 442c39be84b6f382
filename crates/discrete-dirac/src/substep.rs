//! What the impact integrator needs from a one-step map (docs/theory.md §4):
//! the oriented (+) step from `(a, π_a)` over any fraction of the grid step,
//! warm-started for the steps taken and side-effect-free for trial solves,
//! and the discrete energy and constraint residual of a sub-step.
//!
//! Orientation: a (−) stepper is solved as the (+) equations of the reversed
//! discrete Lagrangian (or generating function) with the momentum negated,
//! `π = sign · p` (docs/theory.md §3.4); every momentum here is oriented.
//!
//! The steppers implement the trait next to their equations
//! (`lagrange_dirac`, `hamiltonian`, `composition`); this module knows none
//! of them.

use crate::trajectory::StepOutput;
use crate::{Direction, State, StepError, StepStats};
use diracvi_geometry::{GeometryError, System};
use nalgebra::SVector;

/// One oriented sub-step `a → b = a + d`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubStep<const N: usize> {
    /// The end point (rounded `a + d`; the steps taken add the increment
    /// with compensation).
    pub b: SVector<f64, N>,
    /// The increment, as solved for.
    pub d: SVector<f64, N>,
    /// The oriented momentum at `b`.
    pub pi_b: SVector<f64, N>,
    /// The constraint reaction `A(a)ᵀ μ` at the start point (oriented): the
    /// part of `π_a` that the sub-step absorbs as a multiplier
    /// (docs/theory.md §3.8).
    pub reaction: SVector<f64, N>,
    /// Solver statistics.
    pub stats: StepStats,
}

/// A one-step map the impact integrator can drive.
pub trait SubStepper<const N: usize, const M: usize> {
    /// The system stepped.
    type System: System<N, M>;

    /// The system.
    fn system(&self) -> &Self::System;

    /// Direction of time.
    fn direction(&self) -> Direction;

    /// The sub-step from `(a, π_a)` with step `h`, as a step taken:
    /// warm-started from the last one, and updating the warm start.
    /// `t` is the time of `a` (errors name it).
    ///
    /// # Errors
    /// The stepper's error.
    fn sub_step(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
    ) -> Result<SubStep<N>, StepError>;

    /// The same solve from the increment guess `guess`, without touching
    /// the warm-start state of the steps taken.
    ///
    /// # Errors
    /// The stepper's error.
    fn trial_step(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        guess: &SVector<f64, N>,
    ) -> Result<SubStep<N>, StepError>;

    /// [`sub_step`](Self::sub_step) started from the increment guess
    /// `guess` instead of the stepper's own warm start (a composed method
    /// extrapolates it from its earlier stages, docs/theory.md §9.4): a step
    /// taken, updating the warm start. By default the guess is ignored.
    ///
    /// # Errors
    /// The stepper's error.
    fn sub_step_from(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        guess: &SVector<f64, N>,
    ) -> Result<SubStep<N>, StepError> {
        let _ = guess;
        self.sub_step(t, a, pi_a, h)
    }

    /// Forget the warm start (after an impact).
    fn reset_warm_start(&mut self);

    /// The discrete energy and the constraint residual (docs/theory.md §6) of
    /// the sub-step `a → a + d` with end momentum `π_b`.
    ///
    /// # Errors
    /// When a geometric evaluation fails.
    fn measures(
        &self,
        sub_start: &SVector<f64, N>,
        sub: &SubStep<N>,
        h: f64,
    ) -> Result<(f64, f64), GeometryError>;
}

/// One step taken from a physical state (`p`, not `π`): the state at
/// `t ± h` and the solver statistics. The steppers' `step` methods.
pub(crate) fn step_state<St, const N: usize, const M: usize>(
    stepper: &mut St,
    state: &State<N>,
    h: f64,
) -> Result<(State<N>, StepStats), StepError>
where
    St: SubStepper<N, M>,
{
    let sign = stepper.direction().sign();
    let s = stepper.sub_step(state.t, &state.q, &(state.p * sign), h)?;
    Ok((
        State {
            t: state.t + sign * h,
            q: s.b,
            p: s.pi_b * sign,
        },
        s.stats,
    ))
}

/// One step with its discrete energy and constraint residual, for the
/// trajectory driver (the smooth steppers' `OneStep::advance`).
pub(crate) fn advance<St, const N: usize, const M: usize>(
    stepper: &mut St,
    from: &State<N>,
    h: f64,
) -> Result<StepOutput<N>, StepError>
where
    St: SubStepper<N, M>,
{
    let sign = stepper.direction().sign();
    let s = stepper.sub_step(from.t, &from.q, &(from.p * sign), h)?;
    let (energy, constraint_residual) = stepper
        .measures(&from.q, &s, h)
        .map_err(|source| StepError::Geometry { t: from.t, source })?;
    Ok(StepOutput {
        to: State {
            t: from.t + sign * h,
            q: s.b,
            p: s.pi_b * sign,
        },
        energy,
        constraint_residual,
        stats: s.stats,
    })
}
