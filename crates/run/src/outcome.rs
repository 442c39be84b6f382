//! What a finished run reports: the summary over every step and the impacts.

use serde::Serialize;
use std::time::Duration;

/// One impact, dimension-erased (from `diracvi_impact::ImpactEvent`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImpactRecord {
    /// Index of the grid step containing the impact.
    pub step: usize,
    /// Impact-time fraction `α ∈ [0, 1]` of the grid step.
    pub alpha: f64,
    /// Impact time.
    pub t: f64,
    /// Impact point on the boundary.
    pub q: Vec<f64>,
    /// Boundary piece hit.
    pub piece: usize,
    /// Momentum before the impact.
    pub p_before: Vec<f64>,
    /// Momentum after the impact.
    pub p_after: Vec<f64>,
    /// Discrete energy before.
    pub energy_before: f64,
    /// Discrete energy after.
    pub energy_after: f64,
}

/// Statistics of a finished run (over every step, recorded or not),
/// dimension-erased.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// Steps taken.
    pub steps: usize,
    /// Energy of the first step.
    pub initial_energy: f64,
    /// Energy of the last step.
    pub final_energy: f64,
    /// `max_k |E_k − E_0|`.
    pub max_abs_energy_deviation: f64,
    /// The scale relative energy errors are measured in:
    /// `max(|E_0|, System::energy_scale(q(0), v(0)))`, meaningful when
    /// `E_0 ≈ 0`.
    pub energy_scale: f64,
    /// Largest constraint residual.
    pub max_constraint_residual: f64,
    /// Final time.
    pub final_t: f64,
    /// Final configuration.
    pub final_q: Vec<f64>,
    /// Final momentum.
    pub final_p: Vec<f64>,
    /// Newton iterations over the run.
    pub newton_iterations: usize,
    /// Jacobian evaluations over the run.
    pub jacobian_evaluations: usize,
    /// Root-finder iterations locating impact times.
    pub root_iterations: usize,
    /// Iterations of the post-impact solves.
    pub post_impact_iterations: usize,
    /// Steps that used the degenerate path.
    pub degenerate_steps: usize,
    /// Every impact, in order.
    pub impacts: Vec<ImpactRecord>,
    /// Wall time of the integration (including what the sink does).
    pub wall_time: Duration,
    /// The reduction of a reduced run ([`RunPlan::reduce`](crate::RunPlan::reduce)),
    /// `None` for a full run.
    pub reduction: Option<ReductionSummary>,
}

/// What a reduced run reduced by (docs/theory.md §7).
#[derive(Debug, Clone, PartialEq)]
pub struct ReductionSummary {
    /// `"Routh"` or `"Chaplygin"`.
    pub kind: &'static str,
    /// The names of the cyclic coordinates.
    pub cyclic: Vec<String>,
    /// The conserved momenta `∂L/∂ġ` of a Routh reduction (empty for
    /// Chaplygin).
    pub momentum: Vec<f64>,
    /// Whether the reduced system carries the Chaplygin curvature as a
    /// gyroscopic force.
    pub curvature_force: bool,
}

impl RunOutcome {
    /// `max |E − E0|` relative to the run's energy scale (the absolute
    /// deviation when the scale is 0, i.e. a system at rest with zero
    /// energy).
    pub fn max_relative_energy_deviation(&self) -> f64 {
        if self.energy_scale > 0.0 {
            self.max_abs_energy_deviation / self.energy_scale
        } else {
            self.max_abs_energy_deviation
        }
    }

    /// The impact times, in order.
    pub fn impact_times(&self) -> Vec<f64> {
        self.impacts.iter().map(|i| i.t).collect()
    }
}
