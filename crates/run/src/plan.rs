//! How to integrate: stepper, impact law, direction, number of steps,
//! recording interval.

use crate::RunError;
use diracvi_discrete_dirac::Direction;
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    pub order: u32,
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
            order: 2,
        }
    }

    /// Integrate with a method of order `order` (2, 4 or 6; others are
    /// rejected by the runner with [`RunError::UnsupportedOrder`]).
    pub fn order(mut self, order: u32) -> Self {
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

/// Number of steps: `steps` if given, otherwise `round(t_end / h)`.
///
/// # Errors
/// [`RunError::TooManySteps`] when `t_end / h` exceeds [`MAX_STEPS`],
/// [`RunError::StepsOverLimit`] when `steps` does.
pub fn step_count(scenario: &Scenario, steps: Option<usize>) -> Result<usize, RunError> {
    if let Some(n) = steps {
        if n as f64 > MAX_STEPS {
            return Err(RunError::StepsOverLimit {
                steps: n,
                max: MAX_STEPS,
            });
        }
        return Ok(n);
    }
    let n = (scenario.t_end / scenario.h).round();
    if !(n.is_finite() && n <= MAX_STEPS) {
        return Err(RunError::TooManySteps {
            t_end: scenario.t_end,
            h: scenario.h,
            steps: n,
            max: MAX_STEPS,
        });
    }
    // `n` is a non-negative integer at most 1e10: the conversion is exact.
    Ok(n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in [Stepper::Lagrange, Stepper::Hamiltonian] {
            assert_eq!(s.as_str().parse::<Stepper>(), Ok(s));
        }
        for i in [Impacts::Elastic, Impacts::Reject] {
            assert_eq!(i.to_string().parse::<Impacts>(), Ok(i));
        }
        let e = "euler".parse::<Stepper>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown stepper 'euler' (valid: lagrange, hamiltonian)"
        );
    }

    #[test]
    fn steps_from_end_time() {
        let mut sc = Scenario::defaults("particle").unwrap();
        sc.set("h", "0.01").unwrap();
        sc.set("t_end", "2.5").unwrap();
        assert_eq!(step_count(&sc, None).unwrap(), 250);
        assert_eq!(step_count(&sc, Some(7)).unwrap(), 7);
        sc.set("h", "1e-300").unwrap();
        let err = step_count(&sc, None).unwrap_err();
        assert!(matches!(err, RunError::TooManySteps { .. }), "{err}");
        // an explicit count is held to the same bound
        assert_eq!(
            step_count(&sc, Some(10_000_000_000)).unwrap(),
            10_000_000_000
        );
        let err = step_count(&sc, Some(10_000_000_001)).unwrap_err();
        assert!(matches!(err, RunError::StepsOverLimit { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            "10000000001 steps asked for; at most 1e10 are allowed"
        );
    }
}
