//! Symmetric composition of the symmetric Lagrange–Dirac step on the
//! run-time-sized core (docs/theory.md §9; the counterpart of
//! [`Composed`](crate::Composed)): orders 4 and 6 through the same
//! [`Composition`] coefficients, stage warm starts extrapolated from the
//! earlier stages' mean velocities.

use super::DynConstrainedLegendre;
use super::{
    DynLagrangeDirac, DynOneStep, DynPositionCarry, DynStepOutput, DynStepSensitivity,
    DynStepTangent, DynSubStep, DynSubStepper,
};
use crate::{Composition, Direction, DynState, StepError, StepStats};
use diracvi_geometry::dynamic::{AtTime, DynSystem, drive_rate_dyn};
use diracvi_geometry::{ConstraintDiscretization, Discretization, GeometryError};
use nalgebra::{DMatrix, DVector};

/// A symmetric composition of a self-adjoint stepper: `forward` takes the
/// stages with `γ_i > 0`, `adjoint` (the same map in the other direction of
/// time, i.e. its inverse) those with `γ_i < 0`.
#[derive(Debug, Clone)]
pub struct DynComposed<St> {
    forward: St,
    adjoint: St,
    scheme: Composition,
    carry: DynPositionCarry,
    history: StageHistory,
    /// Build each sub-step's tangent map as the product of its stages'
    /// ([`DynSubStepper::carry_tangents`]).
    tangents: bool,
    /// The parameter directions (`P × r`) in which each sub-step's
    /// derivative is built too, as `S ← T S + S_stage` over its stages
    /// ([`DynSubStepper::carry_sensitivity`]; docs/theory.md §12.4).
    directions: Option<DMatrix<f64>>,
    /// The constrained Legendre map through which each sub-step's energy
    /// is measured (dense or sparse KKT solves, as the system's structure
    /// calls for; docs/theory.md §8.7).
    legendre: DynConstrainedLegendre,
    /// The ends of the stages taken since they were last drained, when
    /// logged ([`log_stages`](Self::log_stages)).
    stages: Option<Vec<DynStage>>,
}

/// The end of one stage of a composed step, as taken: each stage is a
/// step of the symmetric Lagrange–Dirac map of signed duration `tau`
/// (`γ_i h` in the direction of the run; negative for a stage that goes
/// back in time), so the stages of a run form a variational trajectory
/// with steps of varying length and sign (docs/theory.md §15.1, the
/// energy accounting of composed runs).
#[derive(Debug, Clone, PartialEq)]
pub struct DynStage {
    /// Signed duration in time of the stage.
    pub tau: f64,
    /// Time at its end.
    pub t: f64,
    /// Configuration at its end.
    pub q: DVector<f64>,
    /// Physical momentum at its end (`p`, not the oriented `π`).
    pub p: DVector<f64>,
}

/// The mean velocities `d/τ` of the last two stages taken, with the times
/// of their midpoints (`τ` the stage's signed duration in time): the warm
/// start of the next stage (docs/theory.md §9.4).
#[derive(Debug, Clone, Default)]
struct StageHistory {
    last: Option<(DVector<f64>, f64)>,
    before: Option<(DVector<f64>, f64)>,
}

/// Largest ratio of the extrapolation distance to the distance between the
/// two stages it extrapolates from; beyond it the last velocity alone.
const MAX_EXTRAPOLATION: f64 = 4.0;

impl StageHistory {
    /// The increment guess of a stage of signed duration `tau` whose
    /// midpoint is at time `mid`: the last two mean velocities extrapolated
    /// linearly to `mid` (error `O(h²)` in the velocity, `O(h³)` in the
    /// increment on a smooth trajectory), times `tau`.
    fn guess(&self, mid: f64, tau: f64) -> Option<DVector<f64>> {
        let (u1, m1) = self.last.as_ref()?;
        let m1 = *m1;
        let u = match &self.before {
            Some((u0, m0)) if (m1 - *m0).abs() > 0.0 => {
                let r = (mid - m1) / (m1 - *m0);
                if r.abs() <= MAX_EXTRAPOLATION {
                    u1 + (u1 - u0) * r
                } else {
                    u1.clone()
                }
            }
            _ => u1.clone(),
        };
        Some(u * tau)
    }

    /// Record a stage taken: increment `d` over the signed duration `tau`
    /// with midpoint `mid`.
    fn push(&mut self, d: &DVector<f64>, mid: f64, tau: f64) {
        self.before = self.last.take();
        self.last = Some((d / tau, mid));
    }
}

impl<Sy: DynSystem + Clone> DynComposed<DynLagrangeDirac<Sy>> {
    /// The composition `scheme` of the symmetric Lagrange–Dirac step
    /// ([`DynLagrangeDirac::symmetric`]) with the discrete Lagrangian `map` and
    /// the discrete constraint `constraint`, integrating in `direction`.
    /// The order is raised only if the basic step is self-adjoint: a
    /// symmetric `L_d` (midpoint) and a symmetric constraint (midpoint).
    pub fn lagrange_dirac(
        system: Sy,
        map: Discretization,
        constraint: ConstraintDiscretization,
        direction: Direction,
        scheme: Composition,
    ) -> Self {
        let other = match direction {
            Direction::Forward => Direction::Backward,
            Direction::Backward => Direction::Forward,
        };
        let forward = DynLagrangeDirac::new(system.clone(), map, constraint, direction).symmetric();
        let adjoint = DynLagrangeDirac::new(system, map, constraint, other).symmetric();
        Self::new(forward, adjoint, scheme)
    }
}

impl<St: DynSubStepper> DynComposed<St> {
    /// Compose `forward` (the direction of time of the composition) with its
    /// `adjoint` (the same symmetric map in the other direction).
    ///
    /// # Panics
    /// When the two steppers run in the same direction (a programming error).
    #[track_caller]
    pub fn new(forward: St, adjoint: St, scheme: Composition) -> Self {
        assert!(
            forward.direction() != adjoint.direction(),
            "DynComposed::new: the adjoint stepper must run in the other direction of time"
        );
        let n = forward.system().coordinate_count();
        let legendre = DynConstrainedLegendre::new(forward.system());
        Self {
            forward,
            adjoint,
            scheme,
            carry: DynPositionCarry::new(n),
            history: StageHistory::default(),
            tangents: false,
            directions: None,
            legendre,
            stages: None,
        }
    }

    /// Log the end of every stage taken (not the trial solves) for
    /// [`DynSubStepper::drain_stages`] when `on`: what the energy
    /// accounting of a system's parts reads of a composed run.
    pub fn log_stages(mut self, on: bool) -> Self {
        self.stages = on.then(Vec::new);
        self
    }

    /// The scheme.
    pub fn scheme(&self) -> Composition {
        self.scheme
    }

    /// The stepper taking the forward stages.
    pub fn forward_stepper(&self) -> &St {
        &self.forward
    }

    /// One composed sub-step; `trial` selects side-effect-free inner solves
    /// (and a local copy of the position carry).
    #[allow(clippy::too_many_arguments)]
    fn compose(
        &mut self,
        trial: bool,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        guess: Option<&DVector<f64>>,
    ) -> Result<DynSubStep, StepError> {
        super::validate_step_dyn(t, h, a, pi_a)?;
        let sign = self.forward.direction().sign();
        let mut local_carry = self.carry.clone();
        let carry = if trial {
            &mut local_carry
        } else {
            &mut self.carry
        };
        let n = a.len();
        let mut x = a.clone();
        let mut pi = pi_a.clone();
        let mut total = DVector::<f64>::zeros(n);
        let mut stats = StepStats::default();
        let mut reaction = None;
        let mut elapsed = 0.0;
        // ∂(x, π)/∂(a, π_a) and ∂(x, π)/∂h over the stages taken so far.
        let mut tangent = self.tangents.then(|| DynStepTangent {
            start: DMatrix::identity(2 * n, 2 * n),
            step: DVector::zeros(2 * n),
        });
        // ∂(x, π)/∂θ · D over the stages taken so far.
        let mut parameters = self
            .directions
            .as_ref()
            .map(|dirs| DMatrix::zeros(2 * n, dirs.ncols()));
        for &g in self.scheme.coefficients() {
            let hi = g.abs() * h;
            let ti = t + sign * elapsed;
            // The stage's signed duration in time and its midpoint: the
            // warm start extrapolates the earlier stages' mean velocities
            // (the stages differ in size and alternate direction, so the
            // steppers' own warm starts, their last increment rescaled, are
            // only O(h²) guesses; docs/theory.md §9.4).
            let tau = sign * g * h;
            let mid = ti + 0.5 * tau;
            let extrapolated = self.history.guess(mid, tau);
            // A forward stage (g > 0) is the forward stepper's from (x, π);
            // a backward one the adjoint's from (x, −π), whose end momentum
            // and reaction come back negated: (x, π) ↦ (x, −π) ↦ the
            // adjoint's step ↦ (b, −π_b).
            let forward = g > 0.0;
            let (stepper, flip) = if forward {
                (&mut self.forward, 1.0)
            } else {
                (&mut self.adjoint, -1.0)
            };
            let back;
            let start = if forward {
                &pi
            } else {
                back = -&pi;
                &back
            };
            let mut s = match (trial, extrapolated, guess) {
                (false, Some(e), _) => stepper.sub_step_from(ti, &x, start, hi, &e)?,
                (false, None, _) => stepper.sub_step(ti, &x, start, hi)?,
                (true, Some(e), _) => stepper.trial_step(ti, &x, start, hi, &e)?,
                (true, None, Some(d)) => stepper.trial_step(ti, &x, start, hi, &(d * g))?,
                (true, None, None) => stepper.trial_step(ti, &x, start, hi, &DVector::zeros(n))?,
            };
            if let Some(acc) = &mut tangent {
                let carried = parameters.as_mut().zip(self.directions.as_ref());
                let taken = Taken {
                    t: ti,
                    x: &x,
                    s: &s,
                    h: hi,
                };
                chain_taken(stepper, taken, flip, g.abs(), acc, carried)?;
            }
            if !forward {
                s.pi_b = -&s.pi_b;
                s.reaction = -&s.reaction;
            }
            if !trial {
                self.history.push(&s.d, mid, tau);
            }
            elapsed += g * h;
            stats.absorb(&s.stats);
            total += &s.d;
            x = carry.add(&x, &s.d);
            reaction.get_or_insert(s.reaction);
            pi = s.pi_b;
            if !trial && let Some(log) = &mut self.stages {
                log.push(DynStage {
                    tau,
                    t: ti + tau,
                    q: x.clone(),
                    p: &pi * sign,
                });
            }
        }
        Ok(DynSubStep {
            b: x,
            d: total,
            pi_b: pi,
            reaction: reaction.unwrap_or_else(|| DVector::zeros(n)),
            stats,
            tangent,
            parameters,
        })
    }
}

/// A stage a stepper took: from `x` at time `t`, with step `h`,
/// giving `s`.
struct Taken<'a> {
    t: f64,
    x: &'a DVector<f64>,
    s: &'a DynSubStep,
    h: f64,
}

/// Chain the stage `taken` by `stepper` (weight `w` of the composed step;
/// `sign` −1 for an adjoint stage, whose momenta are reversed) into the
/// sub-step's tangent `acc` and, when parameter directions are carried
/// (`carried` = the columns so far and the directions), its parameter
/// columns: `S ← T_x S + S_stage` (`T_x = ∂/∂(x, π)` of the stage,
/// `S_stage` its own derivative in the directions; docs/theory.md §12.4).
fn chain_taken<St: DynSubStepper>(
    stepper: &St,
    taken: Taken<'_>,
    sign: f64,
    w: f64,
    acc: &mut DynStepTangent,
    carried: Option<(&mut DMatrix<f64>, &DMatrix<f64>)>,
) -> Result<(), StepError> {
    let Taken { t, x, s, h } = taken;
    // A time-dependent system's stages are differentiated at their times,
    // held fixed: `∂/∂h` is left zero (it would need the step's time as a
    // variable), which a run never reads (such a system has no boundary,
    // so no step has a length that moves with the state).
    let with_h = !stepper.system().time_dependent();
    let stage = stepper
        .sub_step_derivative(t, x, s, h, carried.as_ref().map(|(_, d)| *d), with_h)?
        .physical(sign);
    if let Some((acc_s, _)) = carried {
        *acc_s = &stage.tangent.start * &*acc_s + stage.parameters;
    }
    chain_stage(acc, stage.tangent, w);
    Ok(())
}

/// `acc ← T ∘ acc` for a stage of step `w h` with tangent map `stage = T`:
/// `∂/∂(a, π_a)` by the chain rule, `∂/∂h = T_x ∂acc/∂h + w T_h`.
fn chain_stage(acc: &mut DynStepTangent, stage: DynStepTangent, w: f64) {
    acc.step = &stage.start * &acc.step + stage.step * w;
    acc.start = &stage.start * &acc.start;
}

impl<St: DynSubStepper> DynSubStepper for DynComposed<St> {
    type System = St::System;

    fn system(&self) -> &St::System {
        self.forward.system()
    }

    fn direction(&self) -> Direction {
        self.forward.direction()
    }

    fn sub_step(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
    ) -> Result<DynSubStep, StepError> {
        self.compose(false, t, a, pi_a, h, None)
    }

    fn trial_step(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        guess: &DVector<f64>,
    ) -> Result<DynSubStep, StepError> {
        self.compose(true, t, a, pi_a, h, Some(guess))
    }

    fn drain_stages(&mut self, out: &mut Vec<DynStage>) {
        if let Some(log) = &mut self.stages {
            out.append(log);
        }
    }

    fn reset_warm_start(&mut self) {
        self.forward.reset_warm_start();
        self.adjoint.reset_warm_start();
        self.history = StageHistory::default();
    }

    fn carry_tangents(&mut self) {
        self.tangents = true;
        self.forward.carry_tangents();
        self.adjoint.carry_tangents();
    }

    fn carry_sensitivity(&mut self, directions: &DMatrix<f64>) {
        self.carry_tangents();
        self.directions = Some(directions.clone());
    }

    /// The product of the stages' tangent maps, built while the sub-step
    /// was taken ([`carry_tangents`](DynSubStepper::carry_tangents)).
    fn sub_step_tangent(
        &self,
        t: f64,
        _a: &DVector<f64>,
        sub: &DynSubStep,
        _h: f64,
    ) -> Result<DynStepTangent, StepError> {
        sub.tangent.clone().ok_or_else(|| {
            StepError::Unsupported(format!(
                "at t = {t}: the composed step's tangent map is built while stepping; \
                 call carry_tangents() before the step"
            ))
        })
    }

    /// The product of the stages' tangent maps with the parameter columns
    /// `S ← T S + S_stage` carried along, built while the sub-step was
    /// taken ([`carry_sensitivity`](DynSubStepper::carry_sensitivity)).
    fn sub_step_sensitivity(
        &self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
        directions: &DMatrix<f64>,
    ) -> Result<DynStepSensitivity, StepError> {
        let tangent = self.sub_step_tangent(t, a, sub, h)?;
        let same = self.directions.as_ref() == Some(directions);
        match &sub.parameters {
            Some(parameters) if same => Ok(DynStepSensitivity {
                tangent,
                parameters: parameters.clone(),
            }),
            _ => Err(StepError::Unsupported(format!(
                "at t = {t}: the composed step's parameter derivative is built while \
                 stepping, in the directions given to carry_sensitivity() before the step \
                 ({} asked here)",
                directions.ncols()
            ))),
        }
    }

    fn measures(
        &mut self,
        t: f64,
        _sub_start: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
    ) -> Result<(f64, f64), GeometryError> {
        let sign = self.forward.direction().sign();
        let p = &sub.pi_b * sign;
        // The energy at the sub-step's end, at its time.
        let (system, t_end) = (self.forward.system(), t + sign * h);
        let rate = drive_rate_dyn(system, t_end);
        self.legendre
            .measures_driven(&AtTime::new(system, t_end), &sub.b, &p, h, &rate)
    }
}

impl<St: DynSubStepper> DynOneStep for DynComposed<St> {
    type Event = ();
    type Error = StepError;

    fn advance(
        &mut self,
        from: &DynState,
        h: f64,
        _events: &mut Vec<()>,
    ) -> Result<DynStepOutput, StepError> {
        super::dyn_advance(self, from, h)
    }

    fn drain_stages(&mut self, out: &mut Vec<DynStage>) {
        DynSubStepper::drain_stages(self, out);
    }
}
