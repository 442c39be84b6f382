//! How to integrate: stepper, impact law, direction, number of steps,
//! recording interval.

use crate::RunError;
use diracvi_discrete_dirac::{Composition, Direction};
use diracvi_models::Scenario;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Largest number of steps a run may ask for.
pub const MAX_STEPS: f64 = 1e10;

/// The one-step map (docs/theory.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Stepper {
    /// The (±) discrete Lagrange–Dirac stepper (\[DDM\] §5).
    #[default]
    Lagrange,
    /// The (±) discrete nonholonomic Hamiltonian stepper, symplectic Euler
    /// type (needs a Hamiltonian, i.e. a regular Lagrangian).
    Hamiltonian,
}

impl Stepper {
    /// The name used on the command line and in summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            Stepper::Lagrange => "lagrange",
            Stepper::Hamiltonian => "hamiltonian",
        }
    }
}

/// What happens when the path crosses a boundary piece (docs/theory.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Impacts {
    /// Elastic impacts: \[VCI\] Theorem 3.1 for the Lagrange–Dirac stepper,
    /// a normal momentum jump balancing the discrete energy for the
    /// Hamiltonian stepper.
    #[default]
    Elastic,
    /// No impacts: the run fails at the first crossing.
    Reject,
}

impl Impacts {
    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Impacts::Elastic => "elastic",
            Impacts::Reject => "reject",
        }
    }
}

/// The order of the method (docs/theory.md §9): the scenario's own
/// second-order discretization, or a symmetric composition of the midpoint
/// step of order 4 or 6. Parsed once, from the command line (`--order`) or
/// Python (`order=`), and carried as this type from there on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum Order {
    /// Order 2: the scenario's discretization alone.
    #[default]
    Two,
    /// Order 4: the triple jump of the symmetric midpoint step.
    Four,
    /// Order 6: Kahan and Li's nine-stage composition of the midpoint step.
    Six,
}

impl Order {
    /// Every order, ascending.
    pub const ALL: [Order; 3] = [Order::Two, Order::Four, Order::Six];

    /// The order as a number (2, 4 or 6).
    pub fn get(self) -> u32 {
        match self {
            Order::Two => 2,
            Order::Four => 4,
            Order::Six => 6,
        }
    }

    /// The composition scheme that gives this order
    /// ([`Composition::Single`] for order 2).
    pub fn composition(self) -> Composition {
        match self {
            Order::Two => Composition::Single,
            Order::Four => Composition::TripleJump,
            Order::Six => Composition::KahanLi6,
        }
    }

    /// Whether this order composes the midpoint step (4 and 6).
    pub fn is_composed(self) -> bool {
        self != Order::Two
    }
}

/// A number that is not an order of the methods (2, 4 or 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("{0} is not an order of the methods (2, 4 or 6)")]
pub struct NotAnOrder(pub i64);

impl TryFrom<i64> for Order {
    type Error = NotAnOrder;
    fn try_from(order: i64) -> Result<Self, NotAnOrder> {
        match order {
            2 => Ok(Order::Two),
            4 => Ok(Order::Four),
            6 => Ok(Order::Six),
            other => Err(NotAnOrder(other)),
        }
    }
}

impl FromStr for Order {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        s.parse::<i64>()
            .ok()
            .and_then(|n| Order::try_from(n).ok())
            .ok_or_else(|| format!("'{s}' is not an order of the methods (2, 4 or 6)"))
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.get())
    }
}

/// A name that is not one of the choices of [`Stepper`] or [`Impacts`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown {what} '{given}' (valid: {})", .valid.join(", "))]
pub struct UnknownChoice {
    /// What was being chosen (`"stepper"`, `"impact law"`).
    pub what: &'static str,
    /// The name given.
    pub given: String,
    /// The valid names.
    pub valid: Vec<&'static str>,
}

impl FromStr for Stepper {
    type Err = UnknownChoice;
    fn from_str(s: &str) -> Result<Self, UnknownChoice> {
        match s.trim() {
            "lagrange" => Ok(Stepper::Lagrange),
            "hamiltonian" => Ok(Stepper::Hamiltonian),
            other => Err(UnknownChoice {
                what: "stepper",
                given: other.to_string(),
                valid: vec!["lagrange", "hamiltonian"],
            }),
        }
    }
}

impl FromStr for Impacts {
    type Err = UnknownChoice;
    fn from_str(s: &str) -> Result<Self, UnknownChoice> {
        match s.trim() {
            "elastic" => Ok(Impacts::Elastic),
            "reject" => Ok(Impacts::Reject),
            other => Err(UnknownChoice {
                what: "impact law",
                given: other.to_string(),
                valid: vec!["elastic", "reject"],
            }),
        }
    }
}

impl fmt::Display for Stepper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Impacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How to integrate a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunPlan {
    /// One-step map.
    pub stepper: Stepper,
    /// Impact law: elastic, or reject crossings.
    pub impacts: Impacts,
    /// Direction of time.
    pub direction: Direction,
    /// Number of steps.
    pub steps: usize,
    /// Record every `every`-th step (and always the last) for the sink;
    /// 0 records none.
    pub every: usize,
    /// Integrate the reduced system on shape space by the model's declared
    /// symmetry and reconstruct the full states (docs/theory.md §7).
    pub reduce: bool,
    /// Order of the method (docs/theory.md §9): 2 is the scenario's own
    /// discretization with \[VCI\] Theorem 3.1 at impacts; 4 (triple jump)
    /// and 6 (Kahan–Li) compose the symmetric midpoint Lagrange–Dirac step
    /// (midpoint `L_d` and midpoint constraint, whatever the scenario's
    /// discretization) and resolve impacts with the continuous elastic law.
    pub order: Order,
    /// Track the tangent map of the flow and report
    /// `∂(q_N, p_N)/∂(q_0, p_0)` ([`RunOutcome::jacobian`](crate::RunOutcome::jacobian);
    /// docs/theory.md §12): the Lagrange–Dirac stepper of order 2 with
    /// the \[VCI\] law, regular Lagrangians, on the run-time-sized core.
    pub jacobian: bool,
    /// Parameters to differentiate the final state in:
    /// `∂(q_N, p_N)/∂θ` for each name
    /// ([`RunOutcome::sensitivity`](crate::RunOutcome::sensitivity);
    /// docs/theory.md §12.4); model files only, with the methods of
    /// [`jacobian`](Self::jacobian). Empty: none.
    pub sensitivity: Vec<String>,
    /// Keep each step's derivative ([`RunOutcome::tangents`](crate::RunOutcome::tangents)):
    /// per-step tangent maps, and the tape of a reverse (adjoint) sweep
    /// for gradients (docs/theory.md §12.5); the methods of
    /// [`jacobian`](Self::jacobian).
    pub tangents: bool,
    /// Account the energy of a system's parts and the work of its ports
    /// (a scenario of a system file; [`RunOutcome::accounting`](crate::RunOutcome::accounting)).
    /// `true` by default; the pilot runs of `--tol` leave it out.
    pub account: bool,
    /// Pass the stages of a composed step to the sink
    /// ([`RecordSink::stage`](crate::RecordSink::stage)): set by the energy
    /// accounting of a system's composed runs.
    pub(crate) stages: bool,
}

impl RunPlan {
    /// `steps` forward steps of the Lagrange–Dirac stepper with elastic
    /// impacts, recording nothing.
    pub fn new(steps: usize) -> Self {
        Self {
            stepper: Stepper::Lagrange,
            impacts: Impacts::Elastic,
            direction: Direction::Forward,
            steps,
            every: 0,
            reduce: false,
            order: Order::Two,
            jacobian: false,
            sensitivity: Vec::new(),
            tangents: false,
            account: true,
            stages: false,
        }
    }

    /// Account a system's parts and ports (`true`, the default): see
    /// [`RunPlan::account`](Self#structfield.account).
    pub fn account(mut self, account: bool) -> Self {
        self.account = account;
        self
    }

    /// Report the derivatives of the final state with respect to the
    /// parameters `names` (a model file's `[parameters]`).
    pub fn sensitivity<T: AsRef<str>>(mut self, names: impl IntoIterator<Item = T>) -> Self {
        self.sensitivity = names.into_iter().map(|n| n.as_ref().to_owned()).collect();
        self
    }

    /// Whether the run tracks derivatives (`--jacobian` or
    /// `--sensitivity`): then it runs on the run-time-sized core.
    pub fn tracks_derivatives(&self) -> bool {
        self.jacobian || self.tangents || !self.sensitivity.is_empty()
    }

    /// Keep each step's derivative (`true`): see [`RunPlan::tangents`](Self#structfield.tangents).
    pub fn tangents(mut self, tangents: bool) -> Self {
        self.tangents = tangents;
        self
    }

    /// Track the tangent map of the flow (`true`) and report the Jacobian
    /// of the final state with respect to the initial one.
    pub fn jacobian(mut self, jacobian: bool) -> Self {
        self.jacobian = jacobian;
        self
    }

    /// Integrate with a method of order `order` (4 and 6 only with the
    /// Lagrange–Dirac stepper; the runner rejects other combinations with
    /// [`RunError::UnsupportedOrder`]).
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Use `stepper`.
    pub fn stepper(mut self, stepper: Stepper) -> Self {
        self.stepper = stepper;
        self
    }

    /// Use the impact law `impacts`.
    pub fn impacts(mut self, impacts: Impacts) -> Self {
        self.impacts = impacts;
        self
    }

    /// Integrate in `direction`.
    pub fn direction(mut self, direction: Direction) -> Self {
        self.direction = direction;
        self
    }

    /// Run reduced by the model's symmetry (`true`), reconstructing the
    /// full states.
    pub fn reduce(mut self, reduce: bool) -> Self {
        self.reduce = reduce;
        self
    }

    /// Record every `every`-th step (and always the last); 0 records none.
    pub fn every(mut self, every: usize) -> Self {
        self.every = every;
        self
    }
}

/// Number of steps of `scenario`: `steps` if given, otherwise
/// `round(t_end / h)` ([`step_count_for`] with the scenario's step and end
/// time).
///
/// # Errors
/// [`RunError::TooManySteps`] when `t_end / h` exceeds [`MAX_STEPS`],
/// [`RunError::StepsOverLimit`] when `steps` does.
pub fn step_count(scenario: &Scenario, steps: Option<usize>) -> Result<usize, RunError> {
    step_count_for(scenario.h, scenario.t_end, steps)
}

/// Number of steps of a run of step `h` to `t_end`: `steps` if given,
/// otherwise `round(t_end / h)` (what `diracvi run` takes).
///
/// # Errors
/// [`RunError::TooManySteps`] when `t_end / h` exceeds [`MAX_STEPS`] or is
/// not finite, [`RunError::StepsOverLimit`] when `steps` exceeds it. A
/// negative `t_end` gives 0 steps (the runners refuse it).
pub fn step_count_for(h: f64, t_end: f64, steps: Option<usize>) -> Result<usize, RunError> {
    if let Some(n) = steps {
        if n as f64 > MAX_STEPS {
            return Err(RunError::StepsOverLimit {
                steps: n,
                max: MAX_STEPS,
            });
        }
        return Ok(n);
    }
    let n = (t_end / h).round();
    if !(n.is_finite() && n <= MAX_STEPS) {
        return Err(RunError::TooManySteps {
            t_end,
            h,
            steps: n,
            max: MAX_STEPS,
        });
    }
    // `n` is a non-negative integer at most 1e10: the conversion is exact.
    Ok(n as usize)
}
