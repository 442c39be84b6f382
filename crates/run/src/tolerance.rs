//! Accuracy on request (`--tol`): choose the order and a fixed step `h` so
//! that the error of the final state and of the impact times is about a
//! tolerance, from pilot runs (docs/theory.md §13).
//!
//! **Candidates.** Order 2 is the symmetric midpoint step (midpoint `L_d`
//! and midpoint constraint, whatever the scenario's discretization; never
//! the forward/retraction scheme, which drifts), 4 the triple jump and 6
//! Kahan–Li. Every pilot runs the whole interval `[0, t_end]` with `N`
//! steps (`h = t_end / N`, so it ends exactly at `t_end`) through
//! [`execute`](crate::execute), recording nothing.
//!
//! **Estimates.** Two pilots of order `p` at steps `h_1 > h_2` differ by
//! `d = ‖x_{h_1} − x_{h_2}‖ ≈ C (h_1^p − h_2^p)` when `e(h) ≈ C h^p`
//! (Richardson; `e(h_1) ≈ d / (1 − 2^{−p})` for a halved step), where `x`
//! is the final `(q, p)` together with the impact times (when both pilots
//! have the same number of impacts; for a constrained system the final `q`
//! and the impact times only, its momentum being defined up to the
//! constraint reaction `A(q)ᵀμ`), and `‖·‖` is the max norm of the
//! componentwise mixed error `|Δx_i| / max(1, |x_i|)`. Three pilots
//! `h_1 > h_2 > h_3` give the observed order `p̂`, the root of
//! `(h_1^p̂ − h_2^p̂) / (h_2^p̂ − h_3^p̂) = d_12 / d_23` (`log₂(d_12 / d_23)`
//! for halved steps); the order is *confirmed* when the three finest pilots
//! give `p̂ ∈ [p − 0.5, p + 1]`, and `C` is then taken from the finest
//! pair. A finest pair whose difference is at round-off (`32 ε √N`) means
//! the method is exact at the coarser step (a parabola under the midpoint
//! step): that step is taken as it is. So is the middle step of a finest
//! triple whose two differences are both within `TOL / 100` though their
//! observed order is off (noise: round-off amplified by impacts on a
//! method that is exact between them), with the larger difference as its
//! estimate.
//!
//! **The run is a pilot.** Once an order is confirmed, every pilot no
//! coarser than the coarsest of the confirming triple has the estimate
//! `C h^p`; the coarsest of them whose estimate is at most `TOL` is the run
//! at the chosen step, and it has already run
//! ([`ToleranceChoice::take_run`]). When none is, the next pilot is the
//! predicted step `h = (TOL / (2C))^{1/p}` (a safety factor of 2; at least
//! 1.25 times the finest pilot's steps) — the prospective run, which also
//! joins the next triple. An order whose run at its confirmed prediction
//! unsettles it (twice at most) keeps the estimate as it stands.
//!
//! **A ladder's pilots.** `N_0 = ⌈N_own / 16⌉` (at least 4, `N_own` the
//! scenario's own number of steps) and `2 N_0`; the third at the step the
//! pair predicts, clamped to `[N_0 / 2, 6 N_0]` (an unconfirmed prediction
//! is not followed further; `1.5 N_0` when it falls on a pilot); while the
//! order is not confirmed the ladder doubles its finest step. A pilot whose
//! step fails (Newton, tunnelling) drops the pilots no finer than it and
//! the ladder starts again twice as fine. At most 9 pilots per order.
//!
//! **Which orders run.** Order 2's pilots are the cheapest, so its pair
//! runs first. Its estimate `e_2(h_0) = C_2 h_0²` sets a time scale `τ` of
//! the error, `e_2(h) = (h/τ)²`, from which the other orders' steps are
//! modelled as `(h/τ)^q = TOL/2` (never coarser than `N_0` steps), and their
//! work as steps × midpoint stages (1, 3, 9) × order 2's Newton iterations
//! per stage. An order's pair runs only if its modelled work undercuts the
//! best prediction so far by more than the pair costs (`3 N_0` steps); the
//! model only decides which pilots to run, never an estimate. Then the
//! order of least predicted work runs its ladder to the run; another order
//! only while its prediction beats every confirmed one, and no pilot of it
//! costing four times that; a ladder pauses when first confirmed, before
//! chasing its predicted step, and an order without pilots starts its
//! ladder when every confirmed prediction costs more than four times its
//! modelled work and pair. Predicted work is steps × the pilots' Newton
//! iterations per step (at least the stages), a deterministic count. When
//! no order is confirmed (round-off floor, a chaotic system, impacts that
//! keep changing), every order's ladder runs to its end, the least-error
//! pilot is the run, and the choice carries a warning saying so. A ladder
//! that does not settle and whose differences, after reaching their least
//! value `d`, grow again at finer steps has met a floor (round-off
//! amplified by the dynamics, as in a chaotic run): a confirmed order's
//! estimate below `d` is raised to `d`, with a warning when the tolerance
//! itself is below it. No step count, predicted or modelled, exceeds the
//! one at which the truncation error `C h^p` meets the round-off level
//! `32 ε √N` (`RoundOff`): below that floor a finer step only adds
//! round-off and work, so a tolerance under it costs what the floor costs.
//! A system with algebraic variables (a loop of capacitors,
//! [`Rerun::algebraic_variables`]) has the level `4 ε N^{3/2}`: its
//! midpoint step turns each step's round-off into an alternation that grows
//! with the steps (docs/theory.md §3.9).
//!
//! **Accounting.** [`ToleranceChoice::pilot_runs`] and
//! [`ToleranceChoice::pilot_wall_time`] count every pilot; when the caller
//! keeps the pilot at the chosen step as its run
//! ([`ToleranceChoice::take_run`], done by [`execute_with_tolerance`] and
//! the CLI when nothing is recorded and no derivative tracked) that pilot
//! leaves both (its time is the run's own); a candidate's `pilot_runs`
//! counts all of its order's pilots.

use crate::{Discard, Order, RecordSink, RunError, RunOutcome, RunPlan, execute_with_progress};
use diracvi_models::{ConstraintDiscretization, Discretization, DynRunSetup, Scenario};
use serde::Serialize;
use std::time::{Duration, Instant};

/// Pilots per order at most, besides those at a confirmed prediction.
const MAX_PILOTS: usize = 9;

/// The coarsest pilot takes `1 / COARSEST_FRACTION` of the scenario's own
/// number of steps (its `h`), at least [`MIN_PILOT_STEPS`].
const COARSEST_FRACTION: usize = 16;

/// Pilots per order run at a confirmed prediction that then did not meet
/// the tolerance (the order's estimate is then taken as it stands).
const MAX_CHASES: usize = 2;

/// A run more than this many times finer than every other pilot of its
/// order stands on a long extrapolation of the pilots' error constant, and
/// the choice says so.
const EXTRAPOLATION_WARNED_ABOVE: usize = 16;

/// Fewest steps of a pilot.
const MIN_PILOT_STEPS: usize = 4;

/// Safety factor on the error: the step aims at `TOL / SAFETY`.
const SAFETY: f64 = 2.0;

/// Three pilots whose two differences are both within `AGREEMENT · TOL`
/// settle their order without a confirmed observed order (their
/// differences are then noise: round-off amplified by impacts, or a
/// method exact on the problem).
const AGREEMENT: f64 = 1e-2;

/// How round-off accumulates over a run's steps (docs/theory.md §13).
#[derive(Debug, Clone, Copy, PartialEq)]
enum RoundOff {
    /// A random walk: `32 ε √n` after `n` steps.
    Walk,
    /// A system with algebraic variables
    /// ([`Rerun::algebraic_variables`]): their midpoint step has a double
    /// root −1 (docs/theory.md §3.9), which turns each step's round-off
    /// into a growing alternation, `4 ε n^{3/2}` after `n` steps (measured
    /// 0.01–3.6 `ε n^{3/2}` on the LC circuit from 3 000 to 2·10⁶ steps).
    Alternation,
}

impl RoundOff {
    /// Round-off level of a pilot difference after `n` steps.
    fn level(self, n: usize) -> f64 {
        let n = n.max(1) as f64;
        match self {
            RoundOff::Walk => 32.0 * f64::EPSILON * n.sqrt(),
            RoundOff::Alternation => 4.0 * f64::EPSILON * n * n.sqrt(),
        }
    }

    /// The steps `n` over `[0, t_end]` at which a truncation error
    /// `c (t_end/n)^p` meets the round-off [`level`](Self::level):
    /// `n = (c t_end^p / 32 ε)^{1/(p + 1/2)}`, or
    /// `(c t_end^p / 4 ε)^{1/(p + 3/2)}` with algebraic variables (rounded
    /// up). More steps than that cannot lower the error.
    fn steps(self, c: f64, t_end: f64, p: f64) -> f64 {
        let (k, g) = match self {
            RoundOff::Walk => (32.0, 0.5),
            RoundOff::Alternation => (4.0, 1.5),
        };
        (c * t_end.powf(p) / (k * f64::EPSILON))
            .powf(1.0 / (p + g))
            .ceil()
    }
}

/// Midpoint stages per step of an order (1, 3, 9).
fn stages(order: Order) -> f64 {
    match order {
        Order::Two => 1.0,
        Order::Four => 3.0,
        Order::Six => 9.0,
    }
}

/// What one candidate order's pilots found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToleranceCandidate {
    /// The order (2, 4 or 6).
    pub order: u32,
    /// The step this order would take (s).
    pub h: f64,
    /// The steps this order would take.
    pub steps: usize,
    /// Its estimated error at that step.
    pub error_estimate: f64,
    /// The observed order of the last pilot triple (`None`: fewer than three
    /// comparable pilots).
    pub observed_order: Option<f64>,
    /// Whether the pilots confirmed the order (or reached round-off).
    pub confirmed: bool,
    /// Predicted cost: steps × Newton iterations per step.
    pub predicted_work: f64,
    /// Pilot runs of this order.
    pub pilot_runs: usize,
}

/// A run the tolerance chooser can repeat at another order and step: a
/// [`Scenario`], a system of your own crate with its setup
/// ([`SystemRerun`]), or anything else that runs a [`RunPlan`].
pub trait Rerun: Clone + PartialEq {
    /// The run's own step `h` (s).
    fn h(&self) -> f64;
    /// The end time (s).
    fn t_end(&self) -> f64;
    /// A copy for a run of `order`, with step `h` when given: the order-2
    /// candidate is the symmetric midpoint scheme (midpoint `L_d`,
    /// midpoint constraint), and the copy asks for no tolerance itself.
    fn configured(&self, order: Order, h: Option<f64>) -> Self;
    /// Whether the system has algebraic variables
    /// ([`ModelSummary::algebraic_variables`](crate::ModelSummary::algebraic_variables)):
    /// the round-off of its order-2 step then grows as `N^{3/2}`, not
    /// `√N`, and so does the floor the chooser respects (module docs).
    fn algebraic_variables(&self) -> bool;
    /// Run as `plan` says, recording to `sink`, calling `progress(k)` after
    /// step `k`.
    ///
    /// # Errors
    /// The run's [`RunError`].
    fn execute(
        &self,
        plan: RunPlan,
        sink: &mut dyn RecordSink,
        progress: &mut dyn FnMut(usize),
    ) -> Result<RunOutcome, RunError>;
}

impl Rerun for Scenario {
    fn h(&self) -> f64 {
        self.h
    }
    fn t_end(&self) -> f64 {
        self.t_end
    }
    fn configured(&self, order: Order, h: Option<f64>) -> Self {
        let mut sc = self.clone();
        sc.tol = None;
        configure(
            order,
            h,
            &mut sc.h,
            &mut sc.discretization,
            &mut sc.constraint,
        );
        sc
    }
    fn algebraic_variables(&self) -> bool {
        crate::describe(self).is_ok_and(|d| d.algebraic_variables)
    }
    fn execute(
        &self,
        plan: RunPlan,
        sink: &mut dyn RecordSink,
        progress: &mut dyn FnMut(usize),
    ) -> Result<RunOutcome, RunError> {
        execute_with_progress(self, plan, sink, progress)
    }
}

/// A system of your own crate with its setup, as the tolerance chooser
/// repeats it ([`execute_system_with_tolerance`](crate::execute_system_with_tolerance)):
/// runs through
/// [`execute_system_with_progress`](crate::execute_system_with_progress).
#[derive(Debug)]
pub struct SystemRerun<'a, Mo> {
    /// The system.
    pub model: &'a Mo,
    /// Its initial data, step, end time and discretization.
    pub setup: DynRunSetup,
}

impl<Mo> Clone for SystemRerun<'_, Mo> {
    fn clone(&self) -> Self {
        Self {
            model: self.model,
            setup: self.setup.clone(),
        }
    }
}

impl<Mo> PartialEq for SystemRerun<'_, Mo> {
    /// The same system (by address) with the same setup.
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.model, other.model) && self.setup == other.setup
    }
}

/// `setup` for a run of `order` with step `h` when given (see
/// [`Rerun::configured`]).
pub fn configured_setup(setup: &DynRunSetup, order: Order, h: Option<f64>) -> DynRunSetup {
    let mut s = setup.clone();
    configure(order, h, &mut s.h, &mut s.discretization, &mut s.constraint);
    s
}

/// The step `h` when given, and for order 2 the symmetric midpoint scheme
/// (midpoint `L_d`, midpoint constraint), into a run's own fields.
fn configure(
    order: Order,
    h: Option<f64>,
    step: &mut f64,
    discretization: &mut Discretization,
    constraint: &mut ConstraintDiscretization,
) {
    if order == Order::Two {
        *discretization = Discretization::Midpoint;
        *constraint = ConstraintDiscretization::Midpoint;
    }
    if let Some(h) = h {
        *step = h;
    }
}

impl<Mo: crate::NamedDynSystem> Rerun for SystemRerun<'_, Mo> {
    fn h(&self) -> f64 {
        self.setup.h
    }
    fn t_end(&self) -> f64 {
        self.setup.t_end
    }
    fn configured(&self, order: Order, h: Option<f64>) -> Self {
        Self {
            model: self.model,
            setup: configured_setup(&self.setup, order, h),
        }
    }
    fn algebraic_variables(&self) -> bool {
        crate::describe_system(self.model, &self.setup).is_ok_and(|d| d.algebraic_variables)
    }
    fn execute(
        &self,
        plan: RunPlan,
        sink: &mut dyn RecordSink,
        progress: &mut dyn FnMut(usize),
    ) -> Result<RunOutcome, RunError> {
        crate::execute_system_with_progress(self.model, &self.setup, plan, sink, progress)
    }
}

/// The choice of method and step for a tolerance, and how it was made
/// (for reruns of `P`: a [`Scenario`] unless said otherwise).
#[derive(Debug, Clone, PartialEq)]
pub struct ToleranceChoice<P = Scenario> {
    /// The tolerance asked for.
    pub requested: f64,
    /// The estimated error of the chosen run (final state and impact
    /// times, mixed norm).
    pub error_estimate: f64,
    /// The chosen order.
    pub order: Order,
    /// The chosen step: `t_end / steps`.
    pub h: f64,
    /// The chosen number of steps.
    pub steps: usize,
    /// Pilot runs made, over all orders.
    pub pilot_runs: usize,
    /// Wall time of the pilots.
    pub pilot_wall_time: Duration,
    /// What each order's pilots found (orders that could not run at all
    /// are absent).
    pub candidates: Vec<ToleranceCandidate>,
    /// Why the estimate may not hold (empty when it does).
    pub warnings: Vec<String>,
    /// The pilot at the chosen step, if one was run: the run itself when
    /// the caller's run would repeat it ([`take_run`](Self::take_run)).
    run: Option<Box<ChosenRun<P>>>,
}

/// A pilot at the chosen step, and how it ran.
#[derive(Debug, Clone, PartialEq)]
struct ChosenRun<P> {
    scenario: P,
    plan: RunPlan,
    outcome: RunOutcome,
}

/// [`ToleranceChoice`] in the summary (`"tolerance"`, docs/summary.schema.json).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToleranceJson {
    /// The tolerance asked for.
    pub requested: f64,
    /// The estimated error of the run.
    pub error_estimate: f64,
    /// The chosen order (2, 4 or 6).
    pub chosen_order: u32,
    /// The chosen step (s).
    pub chosen_h: f64,
    /// The chosen number of steps.
    pub chosen_steps: usize,
    /// Pilot runs made.
    pub pilot_runs: usize,
    /// Wall time of the pilots (s).
    pub pilot_wall_time_s: f64,
    /// What each order's pilots found.
    pub candidates: Vec<ToleranceCandidate>,
}

impl<P: Rerun> ToleranceChoice<P> {
    /// The summary's record of the choice.
    pub fn to_json(&self) -> ToleranceJson {
        ToleranceJson {
            requested: self.requested,
            error_estimate: self.error_estimate,
            chosen_order: self.order.get(),
            chosen_h: self.h,
            chosen_steps: self.steps,
            pilot_runs: self.pilot_runs,
            pilot_wall_time_s: self.pilot_wall_time.as_secs_f64(),
            candidates: self.candidates.clone(),
        }
    }

    /// `scenario` and `plan` set up for the chosen run: the step, the
    /// number of steps, the order, and for order 2 the midpoint
    /// discretization and constraint.
    pub fn apply(&self, scenario: &P, plan: RunPlan) -> (P, RunPlan) {
        let sc = scenario.configured(self.order, (self.steps > 0).then_some(self.h));
        let mut plan = plan.order(self.order);
        plan.steps = self.steps;
        (sc, plan)
    }

    /// The pilot run at the chosen step, when the run about to be made —
    /// `scenario` as `plan` says, from [`apply`](Self::apply) — would
    /// repeat it exactly (the same scenario and a plan that records nothing
    /// and tracks no derivatives): it then is the run, and its count and
    /// wall time leave [`pilot_runs`](Self::pilot_runs) and
    /// [`pilot_wall_time`](Self::pilot_wall_time). `None`, and the choice
    /// unchanged, otherwise.
    pub fn take_run(&mut self, scenario: &P, plan: &RunPlan) -> Option<RunOutcome> {
        let same = self
            .run
            .as_ref()
            .is_some_and(|r| r.scenario == *scenario && r.plan == *plan);
        if !same {
            return None;
        }
        let run = self.run.take()?;
        self.pilot_runs = self.pilot_runs.saturating_sub(1);
        self.pilot_wall_time = self.pilot_wall_time.saturating_sub(run.outcome.wall_time);
        Some(run.outcome)
    }
}

/// The mixed distance of two runs' final states and impact times; `None`
/// when their impact counts differ.
fn distance(a: &RunOutcome, b: &RunOutcome) -> Option<f64> {
    if a.impacts.len() != b.impacts.len() {
        return None;
    }
    let mixed = |x: f64, y: f64| (x - y).abs() / y.abs().max(1.0);
    // The momentum of a constrained system is defined up to the reaction
    // `A(q)ᵀμ` (docs/theory.md §9, `Method::order_of_accuracy`): it is not
    // a quantity the orders refer to, so only `q` is compared there.
    let momenta = if a.method.constrained {
        0
    } else {
        a.final_p.len()
    };
    let states = a
        .final_q
        .iter()
        .zip(&b.final_q)
        .chain(a.final_p.iter().zip(&b.final_p).take(momenta))
        .map(|(x, y)| mixed(*x, *y));
    let times = a
        .impacts
        .iter()
        .zip(&b.impacts)
        .map(|(x, y)| mixed(x.t, y.t));
    Some(states.chain(times).fold(0.0, f64::max))
}

/// `h_1^p − h_2^p` for `h_1 > h_2`, without cancellation for small `p`.
fn power_gap(h1: f64, h2: f64, p: f64) -> f64 {
    h1.powf(p) * -(-p * (h1 / h2).ln()).exp_m1()
}

/// The observed order `p̂` of three runs at steps `h1 > h2 > h3` whose
/// differences are `d12`, `d23`: the root of
/// `(h1^p̂ − h2^p̂) / (h2^p̂ − h3^p̂) = d12 / d23` (`log₂(d12 / d23)` for
/// halved steps); `None` unless both differences are positive.
fn observed_order(h1: f64, h2: f64, h3: f64, d12: f64, d23: f64) -> Option<f64> {
    if !(d12 > 0.0 && d23 > 0.0) {
        return None;
    }
    let (x, y) = ((h1 / h2).ln(), (h2 / h3).ln());
    // ln of the ratio at p: increasing in p, ln(x / y) at p = 0.
    let g = |p: f64| {
        if p.abs() < 1e-9 {
            (x / y).ln()
        } else {
            ((p * x).exp_m1() / -(-p * y).exp_m1()).ln()
        }
    };
    let target = (d12 / d23).ln();
    let (mut lo, mut hi) = (-64.0, 64.0);
    if target <= g(lo) {
        return Some(lo);
    }
    if target >= g(hi) {
        return Some(hi);
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if g(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(0.5 * (lo + hi))
}

/// An order whose observed order was confirmed: its runs from `coarsest`
/// steps on are in the asymptotic regime, `e(h) ≈ c h^p` (`c = 0`: the
/// finest pair agrees to round-off), and no estimate goes below `floor`.
#[derive(Debug, Clone, Copy)]
struct Confirmed {
    coarsest: usize,
    c: f64,
    floor: f64,
}

/// What a ladder does next.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Next {
    /// Run a pilot of this many steps.
    Run(usize),
    /// The run of index `.0` meets the tolerance, with estimate `.1`.
    Settled(usize, f64),
    /// Run the confirmed prediction of this many steps (a prospective
    /// run).
    Chase(usize),
    /// Nothing more to try.
    Done,
}

/// The pilot runs of one order.
struct Ladder {
    order: Order,
    /// The end time.
    t_end: f64,
    /// `AGREEMENT · TOL`.
    agreement: f64,
    /// `(steps, outcome)` of each pilot, coarsest first, since the last
    /// failure at a finer step.
    runs: Vec<(usize, RunOutcome)>,
    /// Every step count tried (run or failed): none is run twice.
    tried: Vec<usize>,
    /// Where the ladder starts (twice a failed step after a failure).
    start: usize,
    pilot_runs: usize,
    /// A non-numerical error: the order cannot run at all.
    unusable: bool,
    /// Refused by the work budget or out of pilots: nothing more is run.
    closed: bool,
    /// `Some((index, estimate))` once a run meets the tolerance.
    settled: Option<(usize, f64)>,
    /// Pilots run at a confirmed prediction.
    chases: usize,
    /// The fewest steps of a pilot that failed although finer than every
    /// pilot that ran, with its error: the step equations cannot be solved
    /// that finely (e.g. Newton's round-off floor of a degenerate step at a
    /// tiny `h`), so no step from half that count on is predicted.
    ceiling: Option<(usize, String)>,
    /// How round-off accumulates in this system's runs.
    round_off: RoundOff,
}

impl Ladder {
    fn new(order: Order, t_end: f64, start: usize, tol: f64, round_off: RoundOff) -> Self {
        Self {
            order,
            t_end,
            round_off,
            agreement: AGREEMENT * tol,
            runs: Vec::new(),
            tried: Vec::new(),
            start,
            pilot_runs: 0,
            unusable: false,
            closed: false,
            settled: None,
            chases: 0,
            ceiling: None,
        }
    }

    fn p(&self) -> f64 {
        f64::from(self.order.get())
    }

    fn h(&self, steps: usize) -> f64 {
        self.t_end / steps as f64
    }

    /// Whether the ladder may run more pilots.
    fn open(&self) -> bool {
        !(self.unusable || self.closed || self.settled.is_some())
    }

    /// Newton iterations per midpoint stage of the finest pilot (at least
    /// 1): the unit in which other orders' work is modelled.
    fn work_per_stage(&self) -> f64 {
        self.work_per_step() / stages(self.order)
    }

    /// Newton iterations per step of the finest pilot, at least the
    /// order's midpoint stages.
    fn work_per_step(&self) -> f64 {
        self.runs.last().map_or(stages(self.order), |(n, o)| {
            (o.newton_iterations as f64 / (*n).max(1) as f64).max(stages(self.order))
        })
    }

    /// `(d, c)` of runs `i` (coarser) and `j`: their distance and the
    /// constant of `e = c h^p` it gives, `c = d / (h_i^p − h_j^p)`; `None`
    /// when they are not comparable.
    fn pair(&self, i: usize, j: usize) -> Option<(f64, f64)> {
        let (ni, a) = &self.runs[i];
        let (nj, b) = &self.runs[j];
        let d = distance(a, b)?;
        Some((d, d / power_gap(self.h(*ni), self.h(*nj), self.p())))
    }

    /// The steps for which `c h^p = tol / SAFETY` (rounded up to whole
    /// steps; `usize::MAX` when out of range), but never more than
    /// [`round_off_steps`](Self::round_off_steps): below the round-off
    /// floor a finer step only adds round-off and work.
    fn target(&self, c: f64, tol: f64) -> usize {
        if c <= 0.0 {
            return 1;
        }
        let h = (tol / (SAFETY * c)).powf(1.0 / self.p());
        let mut n = (self.t_end / h).ceil().min(self.round_off_steps(c));
        if let Some((failed, _)) = &self.ceiling {
            n = n.min((failed / 2).max(1) as f64);
        }
        if n.is_finite() && n < 1e15 {
            (n as usize).max(1)
        } else {
            usize::MAX
        }
    }

    /// [`RoundOff::steps`] of this order over its interval.
    fn round_off_steps(&self, c: f64) -> f64 {
        self.round_off.steps(c, self.t_end, self.p())
    }

    /// The observed order of the three finest pilots.
    fn observed_order(&self) -> Option<f64> {
        let n = self.runs.len();
        if n < 3 {
            return None;
        }
        let (d12, _) = self.pair(n - 3, n - 2)?;
        let (d23, _) = self.pair(n - 2, n - 1)?;
        let h = |i: usize| self.h(self.runs[i].0);
        observed_order(h(n - 3), h(n - 2), h(n - 1), d12, d23)
    }

    /// Whether the finest pilots settle the error model: the finest pair at
    /// round-off (`c = 0`, the coarser step exact), or the observed order
    /// of the finest triple in `[p − 0.5, p + 1]` (`c` from the finest
    /// pair), or else the finest triple agreeing within
    /// [`AGREEMENT`]` · TOL` (`c = 0`, the middle step taken, its estimate
    /// the larger difference).
    fn confirmed(&self) -> Option<Confirmed> {
        let n = self.runs.len();
        if n < 2 {
            return None;
        }
        let (d, c) = self.pair(n - 2, n - 1)?;
        let round = self.round_off.level(self.runs[n - 1].0);
        if d <= round {
            return Some(Confirmed {
                coarsest: self.runs[n - 2].0,
                c: 0.0,
                floor: d.max(round),
            });
        }
        let p = self.p();
        let observed = self.observed_order()?;
        if observed >= p - 0.5 && observed <= p + 1.0 {
            return Some(Confirmed {
                coarsest: self.runs[n - 3].0,
                c,
                floor: round,
            });
        }
        let (d12, _) = self.pair(n - 3, n - 2)?;
        (d.max(d12) <= self.agreement).then_some(Confirmed {
            coarsest: self.runs[n - 2].0,
            c: 0.0,
            floor: d.max(d12),
        })
    }

    /// The constant of the finest comparable pair, confirmed or not.
    fn constant(&self) -> Option<f64> {
        let n = self.runs.len();
        (n >= 2).then(|| self.pair(n - 2, n - 1).map(|(_, c)| c))?
    }

    /// The steps this order is expected to need: the confirmed or (before
    /// confirmation) the finest pair's prediction, never coarser than the
    /// coarsest pilot that would confirm it; `None` without a comparable
    /// pair.
    fn predicted_steps(&self, tol: f64) -> Option<usize> {
        if let Some((i, _)) = self.settled {
            return Some(self.runs[i].0);
        }
        if let Some(conf) = self.confirmed() {
            return Some(self.target(conf.c, tol).max(conf.coarsest));
        }
        let c = self.constant()?;
        Some(self.target(c, tol).max(self.runs[0].0))
    }

    /// Predicted work of this order at `tol` (steps × work per step); ∞
    /// without a prediction.
    fn predicted_work(&self, tol: f64) -> f64 {
        self.predicted_steps(tol)
            .map_or(f64::INFINITY, |n| n as f64 * self.work_per_step())
    }

    /// The next step count, or what the ladder settled on.
    fn next(&self, tol: f64) -> Next {
        // Not tried, and coarser than a step that failed finer than every
        // pilot.
        let fresh = |n: usize| {
            !self.tried.contains(&n) && self.ceiling.as_ref().is_none_or(|(c, _)| n < *c)
        };
        let n = self.runs.len();
        if n == 0 {
            return if fresh(self.start) {
                Next::Run(self.start)
            } else {
                Next::Done
            };
        }
        let coarsest = self.runs[0].0;
        let finest = self.runs[n - 1].0;
        let doubled = finest.saturating_mul(2);
        let or_doubled = |m: usize| {
            if fresh(m) {
                Next::Run(m)
            } else if fresh(doubled) {
                Next::Run(doubled)
            } else {
                Next::Done
            }
        };
        if let Some(conf) = self.confirmed() {
            if conf.c == 0.0 {
                let i = self.runs.iter().position(|r| r.0 == conf.coarsest);
                return i.map_or(Next::Done, |i| Next::Settled(i, conf.floor));
            }
            // The coarsest certified pilot that meets the tolerance is the
            // run.
            let p = self.p();
            for (i, (steps, _)) in self.runs.iter().enumerate() {
                if *steps < conf.coarsest {
                    continue;
                }
                let estimate = (conf.c * self.h(*steps).powf(p)).max(conf.floor);
                if estimate <= tol {
                    return Next::Settled(i, estimate);
                }
            }
            let aim = self.target(conf.c, tol);
            let target = aim.max(finest.saturating_add(finest.div_ceil(4)));
            if self.chases >= MAX_CHASES || aim <= finest || !fresh(target) {
                // (`aim <= finest` with no pilot settled: the tolerance is
                // below the round-off floor, which the finest pilot has
                // already reached, or finer steps failed; a target already
                // tried or at a failed step count is not run again.)
                return Next::Done;
            }
            return Next::Chase(target);
        }
        if self.chases > 0 {
            // A run at the confirmed prediction unsettled the order.
            return Next::Done;
        }
        if n == 2
            && let Some(c) = self.constant()
            && c > 0.0
        {
            // The third run, which may confirm the order, at the predicted
            // step: down to half the coarsest, up to three times the finest
            // (an unconfirmed prediction is not followed further).
            let reach = finest.saturating_mul(3);
            let mut target = self.target(c, tol).clamp(coarsest.div_ceil(2), reach);
            if target == coarsest || target == finest {
                target = (3 * coarsest).div_ceil(2);
            }
            return or_doubled(target);
        }
        or_doubled(doubled)
    }

    /// Record a pilot of `steps` and its result (`Err`: the error of a pilot
    /// whose step failed).
    fn record(&mut self, steps: usize, result: Result<RunOutcome, String>) {
        self.tried.push(steps);
        match result {
            Ok(outcome) => {
                let at = self.runs.partition_point(|r| r.0 < steps);
                self.runs.insert(at, (steps, outcome));
            }
            Err(error) => match self.runs.last() {
                Some(&(finest, _)) if steps > finest => {
                    // Finer than every pilot that ran: the pilots stay, and
                    // no step this fine is predicted again.
                    if self.ceiling.as_ref().is_none_or(|(c, _)| steps < *c) {
                        self.ceiling = Some((steps, error));
                    }
                }
                _ => {
                    // Too coarse a step for the Newton solves or the impact
                    // location (or a non-finite end): start again finer.
                    self.runs.retain(|r| r.0 > steps);
                    if self.runs.is_empty() {
                        self.start = steps.saturating_mul(2);
                    }
                }
            },
        }
    }

    /// The pilots' measured floor: `Some(d)` when the ladder ran at least
    /// three comparable pilots and their differences, after reaching their
    /// least `d`, grew again by more than 2× at finer steps — round-off
    /// amplified by the dynamics (chaos), below which no step of any order
    /// gets (`None` while the differences still decrease).
    fn floor(&self) -> Option<f64> {
        let d: Vec<f64> = self
            .runs
            .windows(2)
            .filter_map(|w| distance(&w[0].1, &w[1].1))
            .collect();
        if d.len() < 2 {
            return None;
        }
        let (at, least) = d
            .iter()
            .copied()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        let grew = d[at + 1..].iter().any(|&x| x > 2.0 * least);
        (grew && least > 0.0).then_some(least)
    }

    /// The candidate the ladder ends with and the index of its run when
    /// a pilot is that run; `None` if no pilot ran.
    fn candidate(&self, tol: f64) -> Option<(ToleranceCandidate, Option<usize>)> {
        if self.runs.is_empty() {
            return None;
        }
        let p = self.p();
        let work_per_step = self.work_per_step();
        let observed = self.observed_order();
        let make = |steps: usize, error_estimate: f64, confirmed: bool| ToleranceCandidate {
            order: self.order.get(),
            h: self.t_end / steps as f64,
            steps,
            error_estimate,
            observed_order: observed,
            confirmed,
            predicted_work: steps as f64 * work_per_step,
            pilot_runs: self.pilot_runs,
        };
        if let Some((i, estimate)) = self.settled {
            return Some((make(self.runs[i].0, estimate, true), Some(i)));
        }
        if let Some(conf) = self.confirmed() {
            // Confirmed, but no pilot meets the tolerance (the budget or
            // the pilots ran out first): the step extrapolated from the
            // confirmed constant.
            let steps = self.target(conf.c, tol).max(conf.coarsest);
            let estimate = (conf.c * self.h(steps).powf(p)).max(conf.floor);
            let run = self.runs.iter().position(|r| r.0 == steps);
            return Some((make(steps, estimate, true), run));
        }
        // Unconfirmed: the pilot pair with the least difference.
        let best = (1..self.runs.len())
            .filter_map(|j| {
                let (d, _) = self.pair(j - 1, j)?;
                let ratio = self.runs[j - 1].0 as f64 / self.runs[j].0 as f64;
                Some((j - 1, d / -(-p * ratio.ln().abs()).exp_m1()))
            })
            .min_by(|a, b| a.1.total_cmp(&b.1));
        best.map(|(i, e)| (make(self.runs[i].0, e, false), Some(i)))
    }
}

/// The scenario and plan of a pilot of `order` with `steps` steps: the
/// caller's plan recording nothing and tracking no derivatives.
fn pilot<P: Rerun>(scenario: &P, plan: &RunPlan, order: Order, steps: usize) -> (P, RunPlan) {
    let sc = scenario.configured(order, Some(scenario.t_end() / steps as f64));
    let mut plan = plan.clone().order(order).jacobian(false).every(0);
    plan.sensitivity.clear();
    plan.steps = steps;
    (sc, plan)
}

/// Runs the pilots of every order: the shared state of
/// [`choose_step_with_progress`].
struct Pilots<'a, P> {
    scenario: &'a P,
    plan: &'a RunPlan,
    tol: f64,
    progress: &'a mut dyn FnMut(usize),
    first_error: Option<RunError>,
    /// The last pilot that failed (its step, or a non-finite end):
    /// `(order, steps, error)`.
    last_failure: Option<(Order, usize, String)>,
    pilot_runs: usize,
}

impl<P: Rerun> Pilots<'_, P> {
    /// Run one pilot of `ladder` with `steps` steps.
    fn run(&mut self, ladder: &mut Ladder, steps: usize) {
        if crate::step_count_for(ladder.h(steps), ladder.t_end, None).is_err() {
            ladder.closed = true;
            return;
        }
        let (sc, plan) = pilot(self.scenario, self.plan, ladder.order, steps);
        ladder.pilot_runs += 1;
        self.pilot_runs += 1;
        let result = match sc.execute(plan.account(false), &mut Discard, self.progress) {
            Ok(outcome) => {
                if ladder.order == Order::Two && outcome.method.order_of_accuracy() != 2 {
                    // Said when nothing else can run (e.g. the Hamiltonian
                    // stepper, whose orders 4 and 6 are refused as well).
                    self.first_error
                        .get_or_insert(RunError::ToleranceUnreachable {
                            tol: self.tol,
                            reason: format!(
                                "the order-2 candidate runs the {}, and --tol needs a method of order 2, 4 or 6",
                                outcome.method
                            ),
                        });
                    ladder.unusable = true;
                    return;
                }
                let finite = outcome
                    .final_q
                    .iter()
                    .chain(&outcome.final_p)
                    .all(|x| x.is_finite());
                if finite {
                    Ok(outcome)
                } else {
                    Err("a non-finite final state".to_owned())
                }
            }
            Err(e) if e.is_numerical() => Err(e.to_string()),
            Err(e) => {
                self.first_error.get_or_insert(e);
                ladder.unusable = true;
                return;
            }
        };
        if let Err(error) = &result {
            self.last_failure = Some((ladder.order, steps, error.clone()));
        }
        ladder.record(steps, result);
    }

    /// Run `ladder`'s pilots until `enough` holds or the ladder settles or
    /// closes: out of pilots ([`MAX_PILOTS`]), or its next pilot would cost
    /// more than `budget` (steps × work per step).
    fn drive(&mut self, ladder: &mut Ladder, budget: f64, enough: &dyn Fn(&Ladder) -> bool) {
        while ladder.open() && !enough(ladder) {
            match ladder.next(self.tol) {
                Next::Settled(i, estimate) => ladder.settled = Some((i, estimate)),
                Next::Done => ladder.closed = true,
                Next::Chase(steps) if !ladder.tried.contains(&steps) => {
                    ladder.chases += 1;
                    if steps as f64 * ladder.work_per_step() > budget {
                        ladder.closed = true;
                    } else {
                        self.run(ladder, steps);
                    }
                }
                Next::Chase(_) => ladder.closed = true,
                Next::Run(steps) => {
                    if ladder.pilot_runs >= MAX_PILOTS
                        || steps as f64 * ladder.work_per_step() > budget
                    {
                        ladder.closed = true;
                    } else {
                        self.run(ladder, steps);
                    }
                }
            }
        }
    }
}

/// The least predicted work of the orders whose estimate is confirmed.
fn confirmed_work(ladders: &[Ladder], tol: f64) -> f64 {
    ladders
        .iter()
        .filter(|l| l.settled.is_some() || l.confirmed().is_some())
        .map(|l| l.predicted_work(tol))
        .fold(f64::INFINITY, f64::min)
}

/// Which orders besides order 2 are worth a pilot pair, from the order-2
/// pilots (module docs, "Which orders run"): `(index, modelled work)` of
/// each, cheapest first, or `None` without an order-2 estimate.
fn modelled_orders(ladders: &[Ladder], tol: f64, first: usize) -> Option<Vec<(usize, f64)>> {
    let probe = ladders.iter().find(|l| l.order == Order::Two)?;
    let c = probe
        .confirmed()
        .map(|c| c.c)
        .or_else(|| probe.constant())?;
    let h_a = probe.h(probe.runs.first()?.0);
    // e₂(h_a) = (h_a/τ)²: the time scale τ of the error; e_q(h) ≈ (h/τ)^q.
    let e_a = c * h_a * h_a;
    let per_stage = probe.work_per_stage();
    let mut modelled: Vec<(usize, f64)> = ladders
        .iter()
        .enumerate()
        .filter(|(_, l)| l.order != Order::Two)
        .map(|(i, l)| {
            let q = l.p();
            let steps = if e_a > 0.0 {
                let h = h_a * (tol / SAFETY).powf(1.0 / q) / e_a.sqrt();
                // e_q(h) = c_q h^q with c_q = (√e_a / h_a)^q
                let c_q = (e_a.sqrt() / h_a).powf(q);
                (probe.t_end / h)
                    .ceil()
                    .min(probe.round_off.steps(c_q, probe.t_end, q))
                    .max(first as f64)
            } else {
                first as f64
            };
            (i, steps * stages(l.order) * per_stage)
        })
        .collect();
    modelled.sort_by(|a, b| a.1.total_cmp(&b.1));
    Some(modelled)
}

/// Choose the order and step for `tol` ([`choose_step_with_progress`]
/// without a callback).
///
/// # Errors
/// As [`choose_step_with_progress`].
pub fn choose_step<P: Rerun>(
    scenario: &P,
    plan: &RunPlan,
    tol: f64,
) -> Result<ToleranceChoice<P>, RunError> {
    choose_step_with_progress(scenario, plan, tol, &mut |_| {})
}

/// Choose the order (2, 4 or 6) and the fixed step for which the error of
/// `scenario`'s final state and impact times, run as `plan` says
/// (stepper, impact law, direction; its order and number of steps are
/// chosen here), is about `tol`, from pilot runs on the whole interval
/// (module docs). `progress(k)` is called after every pilot step. The
/// pilots track no derivatives, so a `plan` tracking them (`--jacobian`,
/// `--sensitivity`) gets the same choice, and the run at the chosen order
/// carries them (docs/theory.md §12.6 for orders 4 and 6). When a pilot is
/// the run at the chosen step, the choice keeps it
/// ([`ToleranceChoice::take_run`]).
///
/// # Errors
/// [`RunError::InvalidTolerance`] for a `tol` that is not finite and
/// positive; otherwise the error of the first pilot when no candidate order
/// could run at all (e.g. [`RunError::UnsupportedOrder`] for every order
/// with the Hamiltonian stepper's order 2 failing too).
pub fn choose_step_with_progress<P: Rerun>(
    scenario: &P,
    plan: &RunPlan,
    tol: f64,
    progress: &mut dyn FnMut(usize),
) -> Result<ToleranceChoice<P>, RunError> {
    if !(tol.is_finite() && tol > 0.0) {
        return Err(RunError::InvalidTolerance { tol });
    }
    let t_end = scenario.t_end();
    let started = Instant::now();
    let own_steps = crate::step_count_for(scenario.h(), t_end, None)?;
    if own_steps == 0 || t_end == 0.0 {
        return Ok(ToleranceChoice {
            requested: tol,
            error_estimate: 0.0,
            order: Order::Two,
            h: scenario.h(),
            steps: 0,
            pilot_runs: 0,
            pilot_wall_time: Duration::ZERO,
            candidates: Vec::new(),
            warnings: Vec::new(),
            run: None,
        });
    }
    let first = own_steps.div_ceil(COARSEST_FRACTION).max(MIN_PILOT_STEPS);
    let round_off = if scenario.algebraic_variables() {
        RoundOff::Alternation
    } else {
        RoundOff::Walk
    };
    let orders: &[Order] = &[Order::Two, Order::Four, Order::Six];
    let mut ladders: Vec<Ladder> = orders
        .iter()
        .map(|&o| Ladder::new(o, t_end, first, tol, round_off))
        .collect();
    let mut pilots = Pilots {
        scenario,
        plan,
        tol,
        progress,
        first_error: None,
        last_failure: None,
        pilot_runs: 0,
    };
    let has_pair = |l: &Ladder| l.predicted_steps(tol).is_some();
    // 1. The order-2 pilots up to their first comparable pair.
    pilots.drive(&mut ladders[0], f64::INFINITY, &has_pair);
    // 2. A pair of each other order whose modelled work could save more
    //    than the pair costs.
    let pair_cost = |l: &Ladder, per_stage: f64| 3.0 * first as f64 * stages(l.order) * per_stage;
    match modelled_orders(&ladders, tol, first) {
        Some(modelled) => {
            let per_stage = ladders[0].work_per_stage();
            for (i, work) in modelled {
                let best = ladders
                    .iter()
                    .map(|l| l.predicted_work(tol))
                    .fold(f64::INFINITY, f64::min);
                if best - work > pair_cost(&ladders[i], per_stage) {
                    pilots.drive(&mut ladders[i], f64::INFINITY, &has_pair);
                }
            }
        }
        None => {
            for l in ladders.iter_mut().rev() {
                pilots.drive(l, f64::INFINITY, &has_pair);
            }
        }
    }
    // 3. Settle the order of least predicted work; another only while its
    //    prediction beats every confirmed one, and no pilot of it costing
    //    more than four times that. A ladder pauses when its order is first
    //    confirmed, before chasing the predicted step: then an order whose
    //    pair did not run (its modelled work) starts its ladder if every
    //    confirmed prediction costs more than four times that and its pair.
    loop {
        let confirmed = confirmed_work(&ladders, tol);
        let modelled = modelled_orders(&ladders, tol, first).unwrap_or_default();
        let per_stage = ladders[0].work_per_stage();
        let next = ladders
            .iter()
            .enumerate()
            .filter(|(_, l)| l.open())
            .filter_map(|(i, l)| {
                if l.pilot_runs > 0 {
                    let w = l.predicted_work(tol);
                    let resumes = l.confirmed().is_some() && w <= confirmed;
                    (w < confirmed || resumes).then_some((i, w))
                } else {
                    let w = modelled.iter().find(|m| m.0 == i)?.1;
                    let starts =
                        confirmed.is_finite() && 4.0 * (w + pair_cost(l, per_stage)) < confirmed;
                    starts.then_some((i, w))
                }
            })
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let Some((i, _)) = next else { break };
        // An unconfirmed ladder pauses at its first confirmation.
        let pauses = ladders[i].confirmed().is_none();
        pilots.drive(&mut ladders[i], 4.0 * confirmed, &|l| {
            pauses && l.confirmed().is_some()
        });
    }
    // 4. Nothing confirmed: every order's ladder to its end.
    if confirmed_work(&ladders, tol).is_infinite() {
        for l in ladders.iter_mut().rev() {
            pilots.drive(l, f64::INFINITY, &|_| false);
        }
    }
    let Pilots {
        first_error,
        last_failure,
        pilot_runs,
        ..
    } = pilots;
    // The least measured floor of an unconfirmed ladder, and its order.
    let floor = ladders
        .iter()
        .filter(|l| l.settled.is_none() && l.confirmed().is_none())
        .filter_map(|l| l.floor().map(|f| (l.order, f)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let mut candidates = Vec::new();
    let mut runs = Vec::new();
    for l in &ladders {
        if let Some((c, run)) = l.candidate(tol) {
            runs.push(run.map(|i| (l.order, &l.runs[i])));
            candidates.push(c);
        }
    }
    let mut warnings = Vec::new();
    let confirmed = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.confirmed)
        .min_by(|a, b| a.1.predicted_work.total_cmp(&b.1.predicted_work));
    let (at, chosen) = match confirmed {
        Some((i, c)) => (i, c.clone()),
        None => {
            let Some((i, c)) = candidates
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.error_estimate.total_cmp(&b.1.error_estimate))
            else {
                return Err(first_error.unwrap_or_else(|| RunError::ToleranceUnreachable {
                    tol,
                    reason: match last_failure {
                        Some((order, steps, error)) => format!(
                            "no pilot run succeeded (every step tried failed; the last, of order {} with {steps} steps: {error})",
                            order.get()
                        ),
                        None => "no pilot run succeeded (every step tried failed)".to_owned(),
                    },
                }));
            };
            warnings.push(format!(
                "--tol {tol:e}: the pilots' error estimate does not decrease at the method's order for any order (observed {}): round-off, a chaotic run or impacts that change with the step; the run takes the least-error pilot step, estimated error {:.2e}, which is {}",
                candidates
                    .iter()
                    .map(|c| format!(
                        "order {}: {}",
                        c.order,
                        c.observed_order
                            .map_or("no comparable triple".to_owned(), |o| format!("{o:.2}"))
                    ))
                    .collect::<Vec<_>>()
                    .join(", "),
                c.error_estimate,
                if c.error_estimate <= tol {
                    "within the tolerance but unconfirmed"
                } else {
                    "above the tolerance: it cannot be reached this way"
                }
            ));
            (i, c.clone())
        }
    };
    let mut chosen = chosen;
    if chosen.confirmed
        && let Some((o, measured)) = floor
        && chosen.error_estimate < measured
    {
        // Another order's pilots stopped agreeing at `measured`: the
        // confirmed extrapolation below it is not to be believed.
        if tol < measured {
            warnings.push(format!(
                "--tol {tol:e}: the order-{} pilots stop converging at a difference of {measured:.2e} however fine the step (round-off amplified by the dynamics, e.g. chaos): an error below about that is not reachable, and the order-{} estimate {:.2e} is raised to it",
                o.get(),
                chosen.order,
                chosen.error_estimate
            ));
        }
        chosen.error_estimate = measured;
    }
    let chosen_ladder = ladders.iter().find(|l| l.order.get() == chosen.order);
    // A pilot of the chosen order failed finer than the others, and the
    // estimate misses the tolerance.
    let finer_failed = chosen_ladder
        .and_then(|l| l.ceiling.as_ref())
        .filter(|_| chosen.confirmed && chosen.error_estimate > tol);
    if let Some((failed, error)) = finer_failed {
        warnings.push(format!(
            "--tol {tol:e}: an order-{} pilot of {failed} steps failed ({error}): the run takes {} steps, whose estimated error {:.2e} is above the tolerance",
            chosen.order, chosen.steps, chosen.error_estimate
        ));
    }
    let others = chosen_ladder.and_then(|l| {
        l.runs
            .iter()
            .map(|r| r.0)
            .filter(|&n| n < chosen.steps)
            .max()
    });
    if chosen.confirmed
        && let Some(finest) = others
        && chosen.steps > EXTRAPOLATION_WARNED_ABOVE * finest
    {
        warnings.push(format!(
            "--tol {tol:e}: the estimate {:.2e} for {} steps extrapolates the order-{} error constant of pilots of at most {finest} steps: unchecked at that step (an error that stops falling as h^{} there, e.g. a drift of the method, would go unseen)",
            chosen.error_estimate, chosen.steps, chosen.order, chosen.order
        ));
    }
    let round = round_off.level(chosen.steps);
    if chosen.confirmed && tol < round && finer_failed.is_none() {
        warnings.push(format!(
            "--tol {tol:e} is below the round-off floor of about {round:.1e} for {} steps: the run's error is round-off, not the tolerance{}",
            chosen.steps,
            if round_off == RoundOff::Alternation {
                " (the system has algebraic variables, whose midpoint step turns round-off into an alternation that grows as N^1.5: docs/theory.md §3.9)"
            } else {
                ""
            }
        ));
    }
    let order = Order::try_from(i64::from(chosen.order)).unwrap_or(Order::Two);
    // The pilot at the chosen step, kept as the run.
    let run = runs[at].map(|(o, (steps, outcome))| {
        let (scenario, plan) = pilot(scenario, plan, o, *steps);
        Box::new(ChosenRun {
            scenario,
            plan,
            outcome: outcome.clone(),
        })
    });
    Ok(ToleranceChoice {
        requested: tol,
        error_estimate: chosen.error_estimate,
        order,
        h: chosen.h,
        steps: chosen.steps,
        pilot_runs,
        pilot_wall_time: started.elapsed(),
        candidates,
        warnings,
        run,
    })
}

/// Choose the step for `tol` ([`choose_step_with_progress`]) and run
/// `scenario` with it, recording to `sink` as `plan` says (its order and
/// number of steps are replaced by the choice). When `plan` records nothing
/// and tracks no derivatives, the pilot at the chosen step is the run
/// ([`ToleranceChoice::take_run`]).
///
/// # Errors
/// As [`choose_step_with_progress`] and [`execute`](crate::execute).
pub fn execute_with_tolerance<P: Rerun>(
    scenario: &P,
    plan: RunPlan,
    tol: f64,
    sink: &mut dyn RecordSink,
    progress: &mut dyn FnMut(usize),
) -> Result<(RunOutcome, ToleranceChoice<P>, P), RunError> {
    let mut choice = choose_step_with_progress(scenario, &plan, tol, progress)?;
    let (sc, plan) = choice.apply(scenario, plan);
    let outcome = match choice.take_run(&sc, &plan) {
        Some(outcome) => outcome,
        None => sc.execute(plan, sink, progress)?,
    };
    Ok((outcome, choice, sc))
}
