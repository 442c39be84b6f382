//! Accuracy on request (`--tol`): choose the order and a fixed step `h` so
//! that the error of the final state and of the impact times is about a
//! tolerance, from pilot runs (docs/theory.md §13).
//!
//! For each candidate order `p` — 2 (the symmetric midpoint step: midpoint
//! `L_d` and midpoint constraint, whatever the scenario's discretization;
//! never the forward/retraction scheme, which drifts), 4 (triple jump) and
//! 6 (Kahan–Li) — the pilots run the whole interval `[0, t_end]` with
//! `N, 2N, 4N, …` steps (`h_k = t_end / N_k`, so every pilot ends exactly at
//! `t_end`), through [`execute`](crate::execute). Two successive pilots
//! give the Richardson estimate of the coarser one's error
//!
//! ```text
//! e(h) ≈ ‖x_h − x_{h/2}‖ / (1 − 2^{−p}),
//! ```
//!
//! where `x` is the final `(q, p)` together with the impact times (when
//! both pilots have the same number of impacts; for a constrained system
//! the final `q` and the impact times only, its momentum being defined up
//! to the constraint reaction `A(q)ᵀμ`), and `‖·‖` is the max norm
//! of the componentwise mixed error `|Δx_i| / max(1, |x_i|)` (an absolute
//! error for components up to 1, a relative one above). Three successive
//! pilots give the observed order `log₂(d_k / d_{k+1})`; once it agrees
//! with `p` (within `[p − 0.5, p + 1]`) the error constant `C` of
//! `e ≈ C h^p` is fitted from the finest pair and the order's step is
//! `h = (TOL / (2C))^{1/p}` (a safety factor of 2 on the error), no coarser
//! than the coarsest pilot of the confirming triple, rounded down so that
//! `t_end / h` is a whole number of steps. A pair whose difference is at
//! round-off (`32 ε √N`) means the method is exact at that step (a parabola
//! under the midpoint step): the coarser step is taken as it is.
//!
//! Of the orders whose estimate was confirmed, the cheapest is chosen:
//! predicted cost = steps × work per step, the work per step being the
//! pilots' Newton iterations per step (at least the number of midpoint
//! stages: 1, 3, 9), a deterministic count rather than a timing. When no
//! order's estimate decreases at its order (round-off floor, a chaotic
//! system, impacts that keep changing), the least-error pilot step is taken
//! and the choice carries a warning saying so. A ladder that does not
//! settle and whose differences, after reaching their least value `d`,
//! grow again at finer steps has met a floor (round-off amplified by the
//! dynamics, as in a chaotic run): a confirmed order's estimate below `d`
//! is raised to `d`, with a warning when the tolerance itself is below it.

use crate::{Discard, Order, RecordSink, RunError, RunOutcome, RunPlan, execute_with_progress};
use diracvi_models::{ConstraintDiscretization, Discretization, Scenario};
use serde::Serialize;
use std::time::{Duration, Instant};

/// Pilots per order at most (the finest has `2^(MAX_PILOTS − 1)` times the
/// coarsest's steps).
const MAX_PILOTS: usize = 9;

/// The coarsest pilot takes `1 / COARSEST_FRACTION` of the scenario's own
/// number of steps (its `h`), at least [`MIN_PILOT_STEPS`].
const COARSEST_FRACTION: usize = 16;

/// Fewest steps of a pilot.
const MIN_PILOT_STEPS: usize = 4;

/// Safety factor on the error: the step aims at `TOL / SAFETY`.
const SAFETY: f64 = 2.0;

/// Round-off level of a pilot difference after `n` steps: `32 ε √n`.
fn round_off(n: usize) -> f64 {
    32.0 * f64::EPSILON * (n.max(1) as f64).sqrt()
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

/// The choice of method and step for a tolerance, and how it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToleranceChoice {
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

impl ToleranceChoice {
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
    pub fn apply(&self, scenario: &Scenario, plan: RunPlan) -> (Scenario, RunPlan) {
        let mut sc = configured(scenario, self.order);
        if self.steps > 0 {
            sc.h = self.h;
        }
        let mut plan = plan.order(self.order);
        plan.steps = self.steps;
        (sc, plan)
    }
}

/// `scenario` for a pilot or the run of `order`: the order-2 candidate is
/// the symmetric midpoint scheme (midpoint `L_d`, midpoint constraint).
fn configured(scenario: &Scenario, order: Order) -> Scenario {
    let mut sc = scenario.clone();
    sc.tol = None;
    if order == Order::Two {
        sc.discretization = Discretization::Midpoint;
        sc.constraint = ConstraintDiscretization::Midpoint;
    }
    sc
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

/// The pilot ladder of one order.
struct Ladder {
    order: Order,
    /// The end time.
    t_end: f64,
    /// `(steps, outcome)` of each pilot, coarsest first, since the last
    /// failure.
    runs: Vec<(usize, RunOutcome)>,
    pilot_runs: usize,
}

impl Ladder {
    /// The candidate the ladder ends with, or `None` if no pilot ran.
    fn candidate(
        &self,
        tol: f64,
        confirmed: Option<(usize, f64, f64)>,
    ) -> Option<ToleranceCandidate> {
        let p = f64::from(self.order.get());
        let t_end = self.t_end;
        let (n_last, last) = self.runs.last()?;
        let work_per_step =
            (last.newton_iterations as f64 / (*n_last).max(1) as f64).max(stages(self.order));
        let observed = self.observed_order();
        let make = |steps: usize, error_estimate: f64, confirmed: bool| ToleranceCandidate {
            order: self.order.get(),
            h: t_end / steps as f64,
            steps,
            error_estimate,
            observed_order: observed,
            confirmed,
            predicted_work: steps as f64 * work_per_step,
            pilot_runs: self.pilot_runs,
        };
        if let Some((n_coarsest, c, floor_error)) = confirmed {
            if c == 0.0 {
                // Round-off at the coarser step of the pair.
                return Some(make(n_coarsest, floor_error, true));
            }
            let h = (tol / (SAFETY * c)).powf(1.0 / p);
            let steps = ((t_end / h).ceil() as usize).max(n_coarsest);
            let h = t_end / steps as f64;
            return Some(make(steps, (c * h.powf(p)).max(floor_error), true));
        }
        // Unconfirmed: the pilot pair with the least difference.
        let best = self
            .runs
            .windows(2)
            .filter_map(|w| distance(&w[0].1, &w[1].1).map(|d| (w[0].0, d / (1.0 - 2f64.powf(-p)))))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        best.map(|(steps, e)| make(steps, e, false))
    }

    /// The observed order of the last three pilots.
    fn observed_order(&self) -> Option<f64> {
        let n = self.runs.len();
        if n < 3 {
            return None;
        }
        let d1 = distance(&self.runs[n - 3].1, &self.runs[n - 2].1)?;
        let d2 = distance(&self.runs[n - 2].1, &self.runs[n - 1].1)?;
        (d1 > 0.0 && d2 > 0.0).then(|| (d1 / d2).log2())
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

    /// Whether the last pilots settle the error model: `Some((coarsest
    /// steps, C, floor))` with `C = 0` for a pair at round-off.
    fn settled(&self) -> Option<(usize, f64, f64)> {
        let n = self.runs.len();
        let p = f64::from(self.order.get());
        if n >= 2 {
            let (n1, a) = &self.runs[n - 2];
            let (n2, b) = &self.runs[n - 1];
            let d = distance(a, b)?;
            if d <= round_off(*n2) {
                return Some((*n1, 0.0, d.max(round_off(*n2))));
            }
            let observed = self.observed_order()?;
            if observed >= p - 0.5 && observed <= p + 1.0 {
                let h1 = self.t_end / *n1 as f64;
                let e1 = d / (1.0 - 2f64.powf(-p));
                let n0 = self.runs[n - 3].0;
                return Some((n0, e1 / h1.powf(p), round_off(*n2)));
            }
        }
        None
    }
}

/// Choose the order and step for `tol` ([`choose_step_with_progress`]
/// without a callback).
///
/// # Errors
/// As [`choose_step_with_progress`].
pub fn choose_step(
    scenario: &Scenario,
    plan: &RunPlan,
    tol: f64,
) -> Result<ToleranceChoice, RunError> {
    choose_step_with_progress(scenario, plan, tol, &mut |_| {})
}

/// Choose the order (2, 4 or 6) and the fixed step for which the error of
/// `scenario`'s final state and impact times, run as `plan` says
/// (stepper, impact law, direction; its order and number of steps are
/// chosen here), is about `tol`, from pilot runs on the whole interval
/// (module docs). `progress(k)` is called after every pilot step. With
/// `plan` tracking derivatives (`--jacobian`, `--sensitivity`) only order 2
/// is a candidate.
///
/// # Errors
/// [`RunError::InvalidTolerance`] for a `tol` that is not finite and
/// positive; otherwise the error of the first pilot when no candidate order
/// could run at all (e.g. [`RunError::UnsupportedOrder`] for every order
/// with the Hamiltonian stepper's order 2 failing too).
pub fn choose_step_with_progress(
    scenario: &Scenario,
    plan: &RunPlan,
    tol: f64,
    progress: &mut dyn FnMut(usize),
) -> Result<ToleranceChoice, RunError> {
    if !(tol.is_finite() && tol > 0.0) {
        return Err(RunError::InvalidTolerance { tol });
    }
    let t_end = scenario.t_end;
    let started = Instant::now();
    let own_steps = crate::step_count_for(scenario.h, t_end, None)?;
    if own_steps == 0 || t_end == 0.0 {
        return Ok(ToleranceChoice {
            requested: tol,
            error_estimate: 0.0,
            order: Order::Two,
            h: scenario.h,
            steps: 0,
            pilot_runs: 0,
            pilot_wall_time: Duration::ZERO,
            candidates: Vec::new(),
            warnings: Vec::new(),
        });
    }
    let first_steps = own_steps.div_ceil(COARSEST_FRACTION).max(MIN_PILOT_STEPS);
    let orders: &[Order] = if plan.tracks_derivatives() {
        &[Order::Two]
    } else {
        &[Order::Six, Order::Four, Order::Two]
    };
    let mut candidates: Vec<ToleranceCandidate> = Vec::new();
    let mut first_error: Option<RunError> = None;
    let mut pilot_runs = 0;
    // The least measured floor of an unsettled ladder, and its order.
    let mut floor: Option<(Order, f64)> = None;
    for &order in orders {
        let sc = configured(scenario, order);
        let mut ladder = Ladder {
            order,
            t_end,
            runs: Vec::new(),
            pilot_runs: 0,
        };
        let mut steps = first_steps;
        let mut settled = None;
        let mut unusable = false;
        // The cheapest confirmed prediction so far bounds this ladder.
        let budget = candidates
            .iter()
            .filter(|c| c.confirmed)
            .map(|c| c.predicted_work)
            .fold(f64::INFINITY, f64::min);
        for _ in 0..MAX_PILOTS {
            if crate::step_count_for(t_end / steps as f64, t_end, None).is_err() {
                break;
            }
            if steps as f64 * stages(order) > 4.0 * budget {
                break;
            }
            let mut pilot_sc = sc.clone();
            pilot_sc.h = t_end / steps as f64;
            let mut pilot_plan = plan.clone().order(order).jacobian(false).every(0);
            pilot_plan.sensitivity.clear();
            pilot_plan.steps = steps;
            ladder.pilot_runs += 1;
            pilot_runs += 1;
            match execute_with_progress(&pilot_sc, pilot_plan, &mut Discard, progress) {
                Ok(outcome) => {
                    if order == Order::Two && outcome.method.order_of_accuracy() != 2 {
                        unusable = true;
                        break;
                    }
                    let finite = outcome
                        .final_q
                        .iter()
                        .chain(&outcome.final_p)
                        .all(|x| x.is_finite());
                    if finite {
                        ladder.runs.push((steps, outcome));
                    } else {
                        ladder.runs.clear();
                    }
                }
                // Too coarse a step for the Newton solves or the impact
                // location: start the ladder again finer.
                Err(e) if e.is_numerical() => ladder.runs.clear(),
                Err(e) => {
                    first_error.get_or_insert(e);
                    unusable = true;
                    break;
                }
            }
            settled = ladder.settled();
            if settled.is_some() {
                break;
            }
            steps *= 2;
        }
        if unusable {
            continue;
        }
        if settled.is_none()
            && let Some(f) = ladder.floor()
        {
            floor = Some(floor.map_or(
                (order, f),
                |(o, g): (Order, f64)| {
                    if f < g { (order, f) } else { (o, g) }
                },
            ));
        }
        if let Some(c) = ladder.candidate(tol, settled) {
            candidates.push(c);
        }
    }
    let pilot_wall_time = started.elapsed();
    let mut warnings = Vec::new();
    let confirmed = candidates
        .iter()
        .filter(|c| c.confirmed)
        .min_by(|a, b| a.predicted_work.total_cmp(&b.predicted_work));
    let chosen = match confirmed {
        Some(c) => c.clone(),
        None => {
            let Some(c) = candidates
                .iter()
                .min_by(|a, b| a.error_estimate.total_cmp(&b.error_estimate))
            else {
                return Err(first_error.unwrap_or(RunError::ToleranceUnreachable {
                    tol,
                    reason: "no pilot run succeeded (every step tried failed)".to_owned(),
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
            c.clone()
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
    let round = round_off(chosen.steps);
    if chosen.confirmed && tol < round {
        warnings.push(format!(
            "--tol {tol:e} is below the round-off floor of about {round:.1e} for {} steps: the run's error is round-off, not the tolerance",
            chosen.steps
        ));
    }
    let order = Order::try_from(i64::from(chosen.order)).unwrap_or(Order::Two);
    Ok(ToleranceChoice {
        requested: tol,
        error_estimate: chosen.error_estimate,
        order,
        h: chosen.h,
        steps: chosen.steps,
        pilot_runs,
        pilot_wall_time,
        candidates,
        warnings,
    })
}

/// Choose the step for `tol` ([`choose_step_with_progress`]) and run
/// `scenario` with it, recording to `sink` as `plan` says (its order and
/// number of steps are replaced by the choice).
///
/// # Errors
/// As [`choose_step_with_progress`] and [`execute`](crate::execute).
pub fn execute_with_tolerance(
    scenario: &Scenario,
    plan: RunPlan,
    tol: f64,
    sink: &mut dyn RecordSink,
    progress: &mut dyn FnMut(usize),
) -> Result<(RunOutcome, ToleranceChoice, Scenario), RunError> {
    let choice = choose_step_with_progress(scenario, &plan, tol, progress)?;
    let (sc, plan) = choice.apply(scenario, plan);
    let outcome = execute_with_progress(&sc, plan, sink, progress)?;
    Ok((outcome, choice, sc))
}
