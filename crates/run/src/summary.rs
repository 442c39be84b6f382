//! The summary of a run as data: one structure with the keys of the
//! command line's `--summary json` and of Python's `RunResult.summary`
//! (both serialize this, so the two agree key for key), written down in
//! `docs/summary.schema.json`.

use crate::{ModelSummary, PartsAccounting, RunOutcome, ToleranceChoice, ToleranceJson};
use diracvi_models::Scenario;
use diracvi_system::AccountingReport;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// The default `--energy-tolerance`: a warning when the discrete energy
/// moves by more than 1 % of the energy scale.
pub const DEFAULT_ENERGY_TOLERANCE: f64 = 0.01;

/// The summary of a finished run (docs/summary.schema.json).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The model's name.
    pub model: String,
    /// Coordinate names, in order.
    pub coordinates: Vec<String>,
    /// The discretization that ran (`method.discretization`).
    pub discretization: &'static str,
    /// The discrete constraint that ran (`method.constraint`).
    pub constraint: &'static str,
    /// The stepper that ran (`method.stepper`).
    pub stepper: &'static str,
    /// The order of accuracy of the method that ran
    /// ([`Method::order_of_accuracy`](crate::Method::order_of_accuracy)).
    pub order: u32,
    /// The method that ran, whole.
    pub method: MethodJson,
    /// What a reduced run was reduced by; `None` for a full run.
    pub reduction: Option<ReductionJson>,
    /// `"forward"` or `"backward"`.
    pub direction: &'static str,
    /// The step (s), positive.
    pub h: f64,
    /// Steps taken.
    pub steps: usize,
    /// Signed end time: `± steps · h`.
    pub t_end: f64,
    /// Number of impacts.
    pub impacts: usize,
    /// Impact times, in order.
    pub impact_times: Vec<f64>,
    /// Discrete energy over the run.
    pub energy: EnergyJson,
    /// The model's known first integrals over the run, by name (empty for
    /// a model that declares none).
    pub invariants: InvariantsJson,
    /// The relative energy drift above which a warning is given.
    pub energy_tolerance: f64,
    /// What the run should be looked at for.
    pub warnings: Vec<String>,
    /// Largest constraint residual over the run.
    pub constraint_residual_max: f64,
    /// The last state.
    pub final_state: FinalStateJson,
    /// Solver statistics over the run.
    pub statistics: StatisticsJson,
    /// `∂(q_N, p_N)/∂(q_0, p_0)` of a run with `--jacobian`, `None`
    /// otherwise.
    pub jacobian: Option<JacobianJson>,
    /// `∂(q_N, p_N)/∂θ` for each parameter of a run with `--sensitivity`,
    /// `None` otherwise.
    pub sensitivity: Option<SensitivityJson>,
    /// How the step was chosen for a run with `--tol`
    /// ([`Summary::with_tolerance`]); `None` for a run with a given step.
    pub tolerance: Option<ToleranceJson>,
    /// Wall time of the integration (s).
    pub wall_time_s: f64,
    /// A system run's parts: their energies and the work their ports did
    /// on them ([`RunOutcome::accounting`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parts: Option<serde_json::Value>,
    /// A system run's ports: the work through each, its balance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ports: Option<serde_json::Value>,
    /// A system run's accounting: steps counted and skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accounting: Option<serde_json::Value>,
}

/// The Jacobian of the final state with respect to the initial one
/// (docs/theory.md §12), row-major.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JacobianJson {
    /// The final state's components: `q:<coordinate>` then `p:<coordinate>`.
    pub rows: Vec<String>,
    /// The initial state's components, named alike.
    pub cols: Vec<String>,
    /// `matrix[i][j] = ∂ rows[i] / ∂ cols[j]`.
    pub matrix: Vec<Vec<f64>>,
}

/// The derivatives of the final state with respect to parameters
/// (docs/theory.md §12.4): a JSON object from each parameter's name, in the
/// order asked, to `∂(q_N, p_N)/∂θ` (`2n` numbers, positions then momenta,
/// the order of the Jacobian's rows).
#[derive(Debug, Clone, PartialEq)]
pub struct SensitivityJson(pub Vec<(String, Vec<f64>)>);

impl Serialize for SensitivityJson {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, column) in &self.0 {
            map.serialize_entry(name, column)?;
        }
        map.end()
    }
}

/// `max |∂Φᵀ J ∂Φ − J| / max |∂Φ|²` with `J = [[0, I], [−I, 0]]`: how far
/// a Jacobian `∂Φ` (`2n × 2n`, positions then momenta) is from symplectic,
/// relative to its size (a round-off level for the flow of a regular,
/// unconstrained system, impacts included; docs/theory.md §12).
pub fn symplecticity_defect(jac: &nalgebra::DMatrix<f64>) -> f64 {
    let n = jac.nrows() / 2;
    let mut omega = nalgebra::DMatrix::zeros(2 * n, 2 * n);
    for i in 0..n {
        omega[(i, n + i)] = 1.0;
        omega[(n + i, i)] = -1.0;
    }
    let scale = jac.amax().powi(2);
    if scale == 0.0 {
        return 0.0;
    }
    (jac.transpose() * &omega * jac - &omega).amax() / scale
}

impl JacobianJson {
    /// The Jacobian `j` (`2n × 2n`) of a model with coordinates `names`.
    pub fn new(names: &[String], j: &nalgebra::DMatrix<f64>) -> Self {
        let labels: Vec<String> = ["q", "p"]
            .iter()
            .flat_map(|kind| names.iter().map(move |c| format!("{kind}:{c}")))
            .collect();
        JacobianJson {
            rows: labels.clone(),
            cols: labels,
            matrix: j.row_iter().map(|r| r.iter().copied().collect()).collect(),
        }
    }
}

/// [`Method`](crate::Method) in the summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MethodJson {
    /// `"lagrange"` or `"hamiltonian"`.
    pub stepper: &'static str,
    /// The order of accuracy: 1, 2, 4 or 6.
    pub order: u32,
    /// `"single"`, `"triple-jump"`, `"kahan-li6"`.
    pub composition: &'static str,
    /// `"forward"` or `"midpoint"`.
    pub discretization: &'static str,
    /// `"retraction"`, `"midpoint"` or `"model"`.
    pub constraint: &'static str,
    /// `"discrete-elastic"`, `"hamiltonian-elastic"`,
    /// `"continuous-elastic"` or `"reject"`.
    pub impact_law: &'static str,
    /// `"forward"` or `"backward"`.
    pub direction: &'static str,
    /// `"compile-time"` or `"run-time"`.
    pub core: &'static str,
}

/// [`ReductionSummary`](crate::ReductionSummary) in the summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReductionJson {
    /// `"Routh"` or `"Chaplygin"`.
    pub kind: &'static str,
    /// The cyclic coordinates.
    pub cyclic: Vec<String>,
    /// The conserved momenta of a Routh reduction.
    pub momentum: Vec<f64>,
    /// Whether the curvature enters as a gyroscopic force.
    pub curvature_force: bool,
}

/// The discrete energy over the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnergyJson {
    /// Energy of the first step.
    pub initial: f64,
    /// Energy of the last step.
    #[serde(rename = "final")]
    pub final_: f64,
    /// `max_k |E_k − E_0|`.
    pub max_abs_deviation: f64,
    /// `max(|E_0|, |⟨∂L/∂v, v⟩| + |L|)` at the initial state.
    pub scale: f64,
    /// `max_abs_deviation / scale`.
    pub max_relative_deviation: f64,
}

/// The model's first integrals over the run
/// ([`RunOutcome::invariants`]): a JSON object from each name, in the
/// model's order, to `{"initial", "final", "max_abs_deviation"}` (a
/// deviation that could not be evaluated is `null`).
#[derive(Debug, Clone, PartialEq)]
pub struct InvariantsJson(pub Vec<crate::InvariantRecord>);

impl Serialize for InvariantsJson {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        #[derive(Serialize)]
        struct One {
            initial: f64,
            #[serde(rename = "final")]
            final_: f64,
            max_abs_deviation: f64,
        }
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for r in &self.0 {
            map.serialize_entry(
                &r.name,
                &One {
                    initial: r.initial,
                    final_: r.final_,
                    max_abs_deviation: r.max_abs_deviation,
                },
            )?;
        }
        map.end()
    }
}

/// The last state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FinalStateJson {
    /// Time.
    pub t: f64,
    /// Configuration.
    pub q: Vec<f64>,
    /// Momentum.
    pub p: Vec<f64>,
}

/// Solver statistics over the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatisticsJson {
    /// Newton iterations.
    pub newton_iterations: usize,
    /// Jacobian evaluations.
    pub jacobian_evaluations: usize,
    /// Root-finder iterations locating impact times.
    pub root_iterations: usize,
    /// Iterations of the post-impact solves.
    pub post_impact_iterations: usize,
    /// Steps that took the degenerate path.
    pub degenerate_steps: usize,
}

impl Summary {
    /// The summary of `outcome`, a run of `scenario` (whose model `info`
    /// describes), with warnings for an energy drift above
    /// `energy_tolerance` (relative to the energy scale).
    pub fn new(
        scenario: &Scenario,
        info: &ModelSummary,
        outcome: &RunOutcome,
        energy_tolerance: f64,
    ) -> Summary {
        let mut summary = Summary::of_run(
            &scenario.model,
            info,
            scenario.h,
            scenario.t_end,
            outcome,
            energy_tolerance,
        );
        summary.warnings.extend(solved_velocities_note(scenario));
        summary
    }

    /// The summary of `outcome`, a run of the model named `model` (which
    /// `info` describes: [`describe_system`](crate::describe_system) for a
    /// system of the user's crate) with step `h` to end time `t_end`, with
    /// warnings for an energy drift above `energy_tolerance` (relative to
    /// the energy scale). For the same run it equals what [`Summary::new`]
    /// gives for a scenario of that name, but for the note on initial
    /// velocities solved from a model file's constraints (which a system
    /// given in Rust has not).
    pub fn of_run(
        model: &str,
        info: &ModelSummary,
        h: f64,
        t_end: f64,
        outcome: &RunOutcome,
        energy_tolerance: f64,
    ) -> Summary {
        let m = &outcome.method;
        let o = outcome;
        Summary {
            model: model.to_owned(),
            coordinates: info.coordinates.clone(),
            discretization: m.discretization.as_str(),
            constraint: m.constraint.as_str(),
            stepper: m.stepper.as_str(),
            order: m.order_of_accuracy(),
            method: MethodJson {
                stepper: m.stepper.as_str(),
                order: m.order_of_accuracy(),
                composition: m.composition.as_str(),
                discretization: m.discretization.as_str(),
                constraint: m.constraint.as_str(),
                impact_law: m.impact_law.as_str(),
                direction: m.direction_str(),
                core: m.core.as_str(),
            },
            reduction: o.reduction.as_ref().map(|r| ReductionJson {
                kind: r.kind,
                cyclic: r.cyclic.clone(),
                momentum: r.momentum.clone(),
                curvature_force: r.curvature_force,
            }),
            direction: m.direction_str(),
            h,
            steps: o.steps,
            t_end: m.direction.sign() * o.steps as f64 * h,
            impacts: o.impacts.len(),
            impact_times: o.impact_times(),
            energy: EnergyJson {
                initial: o.initial_energy,
                final_: o.final_energy,
                max_abs_deviation: o.max_abs_energy_deviation,
                scale: o.energy_scale,
                max_relative_deviation: o.max_relative_energy_deviation(),
            },
            invariants: InvariantsJson(o.invariants.clone()),
            energy_tolerance,
            warnings: warnings(o, energy_tolerance, h, t_end),
            constraint_residual_max: o.max_constraint_residual,
            final_state: FinalStateJson {
                t: o.final_t,
                q: o.final_q.clone(),
                p: o.final_p.clone(),
            },
            statistics: StatisticsJson {
                newton_iterations: o.newton_iterations,
                jacobian_evaluations: o.jacobian_evaluations,
                root_iterations: o.root_iterations,
                post_impact_iterations: o.post_impact_iterations,
                degenerate_steps: o.degenerate_steps,
            },
            jacobian: o
                .jacobian
                .as_ref()
                .map(|j| JacobianJson::new(&info.coordinates, j)),
            sensitivity: (!o.sensitivity.is_empty())
                .then(|| SensitivityJson(o.sensitivity.clone())),
            tolerance: None,
            wall_time_s: o.wall_time.as_secs_f64(),
            parts: None,
            ports: None,
            accounting: None,
        }
        .with_accounting(o.accounting.as_ref())
    }

    /// This summary with a system run's accounting: the keys `parts`,
    /// `ports` and `accounting`, or the warning saying why there is none.
    fn with_accounting(mut self, accounting: Option<&PartsAccounting>) -> Summary {
        match accounting {
            Some(PartsAccounting::Done(report)) => {
                self.parts = Some(parts_json(report));
                self.ports = Some(ports_json(report));
                self.accounting = Some(serde_json::json!({
                    "nodes": report.nodes,
                    "nodes_skipped": report.nodes_skipped,
                    "energy_sum_deviation_max": report.energy_sum_deviation_max,
                }));
            }
            Some(PartsAccounting::Skipped(why)) => self.warnings.push(why.clone()),
            None => {}
        }
        self
    }

    /// This summary with the record of a `--tol` choice, its warnings
    /// first.
    pub fn with_tolerance<P: crate::Rerun>(mut self, choice: &ToleranceChoice<P>) -> Summary {
        self.tolerance = Some(choice.to_json());
        let mut warnings = choice.warnings.clone();
        warnings.append(&mut self.warnings);
        self.warnings = warnings;
        self
    }
}

/// The note of a model-file scenario whose initial velocities marked
/// `"solve"` were solved from `A(q0) v0 = 0`: which, and their values.
pub fn solved_velocities_note(scenario: &Scenario) -> Option<String> {
    let solved = scenario.solved_velocities();
    if solved.is_empty() {
        return None;
    }
    let given: Vec<String> = info_velocity_names(scenario)
        .into_iter()
        .filter(|n| !solved.contains(n))
        .collect();
    Some(format!(
        "initial velocities {} were solved from A(q0) v0 = 0 given {} (initial.v marks them \"solve\"): v0 = {:?}",
        solved.join(", "),
        if given.is_empty() {
            "no other velocity".to_owned()
        } else {
            given.join(", ")
        },
        scenario.initial.v
    ))
}

/// The velocity names `<coord>_dot` of a model-file scenario.
fn info_velocity_names(scenario: &Scenario) -> Vec<String> {
    scenario
        .file
        .as_ref()
        .map(|f| f.velocity_names())
        .unwrap_or_default()
}

/// The warnings of a run: a discrete energy that moved by more than
/// `tolerance` of the energy scale (step `h`); an end time `t_end` below
/// half a step, so that the run took no step at all.
pub fn warnings(o: &RunOutcome, tolerance: f64, h: f64, t_end: f64) -> Vec<String> {
    let dev = o.max_abs_energy_deviation;
    let scale = o.energy_scale;
    let mut out = Vec::new();
    if o.steps == 0 && t_end > 0.0 && t_end < 0.5 * h {
        out.push(format!(
            "t_end = {t_end:?} is less than half the step h = {h:?}: the run took zero steps and reports the initial data; give a smaller --h or a larger --t-end"
        ));
    }
    if o.driven {
        if dev > 0.0 {
            out.push(format!(
                "the system is driven (forces, drives or sources): its energy is not conserved but changes by their work (max |E − E0| = {dev:.3e}), which measures no error"
            ));
        }
    } else if scale > 0.0 {
        let rel = dev / scale;
        if rel > tolerance {
            out.push(format!(
                "the discrete energy moved by {:.3} % of the energy scale {scale:.3e} (max |E − E0| = {dev:.3e}), more than --energy-tolerance {tolerance} ({:.3} %): the step h = {h} is probably too large, try a smaller --h",
                100.0 * rel,
                100.0 * tolerance
            ));
        }
    } else if dev > 0.0 {
        out.push(format!(
            "the discrete energy moved by {dev:.3e} from a state of zero energy scale (no relative measure): check the step h = {h}"
        ));
    }
    out
}

/// A list of `(name, value)` as a JSON object in that order.
struct Named<'a, T>(&'a [(String, T)]);

impl<T: Serialize> Serialize for Named<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// The summary's `parts`: by part name.
fn parts_json(report: &AccountingReport) -> serde_json::Value {
    serde_json::to_value(Named(&report.parts)).unwrap_or_default()
}

/// The summary's `ports`: by port name, the work by part name.
fn ports_json(report: &AccountingReport) -> serde_json::Value {
    let ports: Vec<(String, serde_json::Value)> = report
        .ports
        .iter()
        .map(|(name, p)| {
            let work: Vec<(String, f64)> = p
                .parts
                .iter()
                .cloned()
                .zip(p.work.iter().copied())
                .collect();
            let mut v = serde_json::to_value(p).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.remove("parts");
                o.insert(
                    "work".to_owned(),
                    serde_json::to_value(Named(&work)).unwrap_or_default(),
                );
            }
            (name.clone(), v)
        })
        .collect();
    serde_json::to_value(Named(&ports)).unwrap_or_default()
}
