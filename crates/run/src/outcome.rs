//! What a finished run reports: the summary over every step and the impacts.

use crate::{Impacts, Order, RunError, RunPlan, Stepper};
use diracvi_discrete_dirac::{Composition, Direction};
use diracvi_geometry::{ConstraintDiscretization, Discretization};
use serde::Serialize;
use std::fmt;
use std::time::Duration;

/// The law applied where the path crosses the boundary (docs/theory.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImpactLaw {
    /// The discrete elastic-impact conditions of \[VCI\] Theorem 3.1 for the
    /// Lagrange–Dirac step (impact-time fraction α, discrete energy balance).
    DiscreteElastic,
    /// The normal momentum jump balancing the discrete energy of the
    /// Hamiltonian stepper.
    HamiltonianElastic,
    /// The continuous elastic law (reflection of the momentum in the
    /// kinetic metric) at the impact point located inside a composed step.
    ContinuousElastic,
    /// No impact law: the run fails at the first crossing.
    Reject,
}

impl ImpactLaw {
    /// The name in summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            ImpactLaw::DiscreteElastic => "discrete-elastic",
            ImpactLaw::HamiltonianElastic => "hamiltonian-elastic",
            ImpactLaw::ContinuousElastic => "continuous-elastic",
            ImpactLaw::Reject => "reject",
        }
    }
}

/// Which implementation of the core ran the steps (docs/theory.md §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Core {
    /// Sizes known at compile time: the catalogue and small model files.
    CompileTime,
    /// Sizes known at run time, dense or sparse storage by the system's
    /// structure: model files of any size, circuits, assembled systems.
    RunTime,
}

impl Core {
    /// The name in summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            Core::CompileTime => "compile-time",
            Core::RunTime => "run-time",
        }
    }
}

/// The method a run actually ran: built by the runner before the stepper,
/// which is then constructed from these values, so the record the summary
/// prints is the method whose steps were taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Method {
    /// The one-step map.
    pub stepper: Stepper,
    /// The order asked for (`--order`): the scheme, whose order of accuracy
    /// is [`order_of_accuracy`](Self::order_of_accuracy).
    pub order: Order,
    /// The composition scheme ([`Composition::Single`] at order 2).
    pub composition: Composition,
    /// The discretization map of the discrete Lagrangian (always midpoint
    /// for the composed orders).
    pub discretization: Discretization,
    /// The discrete constraint (always midpoint for the composed orders).
    pub constraint: ConstraintDiscretization,
    /// The impact law.
    pub impact_law: ImpactLaw,
    /// The direction of time.
    pub direction: Direction,
    /// The core that ran it.
    pub core: Core,
    /// Whether the system has constraint forms (the discrete constraint is
    /// then part of the scheme).
    pub constrained: bool,
}

impl Method {
    /// The method `plan` asks for with the scenario's `discretization` and
    /// `constraint`: order 2 runs them with the stepper's own elastic law;
    /// orders 4 and 6 compose the symmetric midpoint step (midpoint `L_d`,
    /// midpoint constraint) and resolve impacts with the continuous elastic
    /// law (docs/theory.md §9).
    pub fn planned(
        plan: &RunPlan,
        discretization: Discretization,
        constraint: ConstraintDiscretization,
        constrained: bool,
        core: Core,
    ) -> Method {
        let composed = plan.order.is_composed();
        let impact_law = match (plan.impacts, plan.stepper, composed) {
            (Impacts::Reject, _, _) => ImpactLaw::Reject,
            (Impacts::Elastic, _, true) => ImpactLaw::ContinuousElastic,
            (Impacts::Elastic, Stepper::Lagrange, false) => ImpactLaw::DiscreteElastic,
            (Impacts::Elastic, Stepper::Hamiltonian, false) => ImpactLaw::HamiltonianElastic,
        };
        Method {
            stepper: plan.stepper,
            order: plan.order,
            composition: plan.order.composition(),
            discretization: if composed {
                Discretization::Midpoint
            } else {
                discretization
            },
            constraint: if composed {
                ConstraintDiscretization::Midpoint
            } else {
                constraint
            },
            impact_law,
            direction: plan.direction,
            core,
            constrained,
        }
    }

    /// The order of accuracy of the method: 4 and 6 for the compositions;
    /// otherwise 2 for the symmetric scheme (midpoint `L_d`, and the midpoint
    /// discrete constraint when the system is constrained), 1 for the
    /// forward map, the retraction constraint or the symplectic-Euler
    /// Hamiltonian step (docs/theory.md §3, §9; measured per combination in
    /// `crates/run/tests/method.rs`). It is the order of the configuration
    /// (and velocity); the momentum of a constrained system is defined up to
    /// the constraint reaction `A(q)ᵀμ`, and the order-2 (±) steps carry the
    /// whole reaction at one end of the step, so their `p` agrees with the
    /// continuous momentum at first order only.
    pub fn order_of_accuracy(&self) -> u32 {
        if self.order.is_composed() {
            return self.order.get();
        }
        let symmetric = self.discretization == Discretization::Midpoint
            && (!self.constrained || self.constraint == ConstraintDiscretization::Midpoint);
        if self.stepper == Stepper::Lagrange && symmetric {
            2
        } else {
            1
        }
    }

    /// Refuse a combination the runners cannot run: orders 4 and 6 compose
    /// the Lagrange–Dirac step only.
    ///
    /// # Errors
    /// [`RunError::UnsupportedOrder`].
    pub fn check(&self) -> Result<(), RunError> {
        if self.order.is_composed() && self.stepper != Stepper::Lagrange {
            return Err(RunError::UnsupportedOrder {
                order: self.order,
                stepper: self.stepper.as_str(),
            });
        }
        Ok(())
    }

    /// `"forward"` or `"backward"`.
    pub fn direction_str(&self) -> &'static str {
        match self.direction {
            Direction::Forward => "forward",
            Direction::Backward => "backward",
        }
    }
}

impl fmt::Display for Method {
    /// One line, e.g. `(+) lagrange stepper, order 4 (triple-jump of the
    /// symmetric midpoint step), midpoint constraint, continuous-elastic
    /// impact law`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = match self.direction {
            Direction::Forward => "(+)",
            Direction::Backward => "(−)",
        };
        write!(
            f,
            "{sign} {} stepper, order {}",
            self.stepper,
            self.order_of_accuracy()
        )?;
        if self.order.is_composed() {
            write!(f, " ({} of the symmetric midpoint step)", self.composition)?;
        } else {
            write!(f, " ({} discretization)", self.discretization)?;
        }
        write!(
            f,
            ", {} constraint, {} impact law",
            self.constraint,
            self.impact_law.as_str()
        )
    }
}

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
    /// Whether the system is driven: its Lagrangian or constraints depend
    /// on time (forces, drives, a circuit's sources; docs/theory.md §8.8),
    /// so its energy changes by their work and is no measure of error.
    pub driven: bool,
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
    /// The method that ran.
    pub method: Method,
    /// `∂(q_N, p_N)/∂(q_0, p_0)` (`2n × 2n`, positions then momenta) of a
    /// run with [`RunPlan::jacobian`](crate::RunPlan::jacobian), `None`
    /// otherwise.
    pub jacobian: Option<nalgebra::DMatrix<f64>>,
    /// `∂(q_N, p_N)/∂θ` (`2n` entries, positions then momenta) for each
    /// parameter of [`RunPlan::sensitivity`](crate::RunPlan::sensitivity),
    /// in the order asked; empty otherwise.
    pub sensitivity: Vec<(String, Vec<f64>)>,
    /// Each step's derivative, of a run with
    /// [`RunPlan::tangents`](crate::RunPlan::tangents); `None` otherwise.
    pub tangents: Option<TangentTape>,
    /// The energy accounting of a system's parts and ports (a scenario of a
    /// system file, [`RunPlan::account`](crate::RunPlan::account)); `None`
    /// for other scenarios.
    pub accounting: Option<crate::PartsAccounting>,
    /// The model's known first integrals
    /// ([`NamedSystem::invariant_names`](diracvi_models::NamedSystem::invariant_names)),
    /// each over every step; empty for a model that declares none (and for
    /// reduced runs and circuits).
    pub invariants: Vec<InvariantRecord>,
}

/// One first integral of the model over a run: its value at the initial
/// state `(q_0, p_0)`, at the last one, and its largest deviation over
/// every step (recorded or not, impacts included).
#[derive(Debug, Clone, PartialEq)]
pub struct InvariantRecord {
    /// Its name, as the model declares it.
    pub name: String,
    /// The value at the initial state.
    pub initial: f64,
    /// The value at the final state.
    pub final_: f64,
    /// `max_k |I_k − I_0|`.
    pub max_abs_deviation: f64,
}

impl InvariantRecord {
    /// The records of `names`, started at the `initial` values.
    pub(crate) fn start(names: Vec<String>, initial: &[f64]) -> Vec<InvariantRecord> {
        names
            .into_iter()
            .zip(initial)
            .map(|(name, &x)| InvariantRecord {
                name,
                initial: x,
                final_: x,
                max_abs_deviation: 0.0,
            })
            .collect()
    }

    /// Take the values `values` of a new state into `records` (a `NaN`
    /// value makes the deviation `NaN`).
    pub(crate) fn observe(records: &mut [InvariantRecord], values: &[f64]) {
        for (r, &x) in records.iter_mut().zip(values) {
            r.final_ = x;
            let d = (x - r.initial).abs();
            r.max_abs_deviation = if d.is_nan() || r.max_abs_deviation.is_nan() {
                f64::NAN
            } else {
                r.max_abs_deviation.max(d)
            };
        }
    }
}

/// The gradient of a scalar function of the final state
/// ([`TangentTape::gradient`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Gradient {
    /// `∂F/∂(q_0, p_0)` (`2n`, positions then momenta).
    pub initial: Vec<f64>,
    /// `∂F/∂θ` for each parameter of the tape, in order.
    pub parameters: Vec<(String, f64)>,
}

/// The derivatives of every step of a run (docs/theory.md §12.5): the
/// per-step tangent maps and the parameter columns, enough for the
/// Jacobian at every step and for gradients by a reverse (adjoint) sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct TangentTape {
    /// `∂x_{k+1}/∂(x_k, θ)` for `k = 0 … N−1` (`x = (q, p)`): `2n × (2n + r)`,
    /// the tangent map then one column per parameter of
    /// [`parameters`](Self::parameters), impacts included.
    pub steps: Vec<nalgebra::DMatrix<f64>>,
    /// `∂x_0/∂θ` (`2n × r`): how the initial state moves with the
    /// parameters (the initial momentum `p_0 = ∂L/∂v(q_0, v_0; θ)`).
    pub initial: nalgebra::DMatrix<f64>,
    /// The parameters of the last `r` columns, in order.
    pub parameters: Vec<String>,
}

impl TangentTape {
    /// The gradient of `F(x_N)` from `grad = ∇F(x_N)` (`2n`) by the
    /// reverse sweep `λ_k = ∂x_{k+1}/∂x_kᵀ λ_{k+1}`, `λ_N = ∇F`:
    /// `∂F/∂x_0 = λ_0` and, per parameter,
    /// `∂F/∂θ = Σ_k ∂x_{k+1}/∂θᵀ λ_{k+1} + ∂x_0/∂θᵀ λ_0`. One
    /// matrix–vector product per step, whatever the number of inputs.
    /// `None` when `grad` does not have the `2n` entries of the state.
    pub fn gradient(&self, grad: &[f64]) -> Option<Gradient> {
        let m = self.initial.nrows();
        if grad.len() != m || self.steps.iter().any(|s| s.nrows() != m) {
            return None;
        }
        let r = self.parameters.len();
        let mut lambda = nalgebra::DVector::from_column_slice(grad);
        let mut theta = nalgebra::DVector::zeros(r);
        for step in self.steps.iter().rev() {
            if r > 0 {
                theta += step.columns(m, r).tr_mul(&lambda);
            }
            lambda = step.columns(0, m).tr_mul(&lambda);
        }
        if r > 0 {
            theta += self.initial.tr_mul(&lambda);
        }
        Some(Gradient {
            initial: lambda.as_slice().to_vec(),
            parameters: self
                .parameters
                .iter()
                .cloned()
                .zip(theta.iter().copied())
                .collect(),
        })
    }

    /// `∂x_k/∂x_0` for `k = 1 … N` (the per-step tangents of the run).
    pub fn cumulative(&self) -> Vec<nalgebra::DMatrix<f64>> {
        let m = self.initial.nrows();
        let mut j = nalgebra::DMatrix::identity(m, m);
        self.steps
            .iter()
            .map(|s| {
                j = s.columns(0, m) * &j;
                j.clone()
            })
            .collect()
    }
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
