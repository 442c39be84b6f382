//! `list`, `show` and `run`: scenario resolution, the integration driver and
//! the summaries.

use crate::NumericalFailure;
use crate::args::{ImpactsArg, RunArgs, StepperArg, SummaryFormat};
use crate::output::{ImpactRecord, RecordSink, RecordView, TrajectoryWriter};
use crate::plot::{self, PlotCollector, PlotInfo};
use crate::progress::Progress;
use anyhow::{Context, Result, anyhow, bail};
use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, NonholonomicHamiltonian, OneStep, Record, RunOptions, State,
    SymplecticEuler, Trajectory, integrate, state_from_velocity,
};
use diracvi_impact::{
    HamiltonianImpacts, ImpactError, ImpactEvent, ImpactIntegrator, RejectCrossing,
};
use diracvi_models::{ModelVisitor, NamedSystem, RunSetup, Scenario, catalogue};
use serde::Serialize;
use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Largest number of steps a run may ask for.
const MAX_STEPS: f64 = 1e12;

/// `diracvi list`.
pub fn list() -> Result<()> {
    let models = catalogue();
    let width = models.iter().map(|m| m.name.len()).max().unwrap_or(0);
    let lines: String = models
        .iter()
        .map(|m| format!("{:width$}  {}\n", m.name, m.description))
        .collect();
    crate::emit(&lines)
}

/// `diracvi show <model>` / `diracvi show --model-file FILE`.
pub fn show(model: Option<&str>, model_file: Option<&Path>) -> Result<()> {
    let scenario = match (model, model_file) {
        (_, Some(path)) => Scenario::from_model_file(path)?,
        (Some(name), None) => Scenario::defaults(name)?,
        (None, None) => {
            bail!("no model given: name one (see `diracvi list`) or pass --model-file FILE.toml")
        }
    };
    crate::emit(&scenario.to_toml())
}

/// Read `--model-file`, or `--scenario` (if any) or the model's defaults,
/// check that the two agree on the model, then apply the `--set key=value`
/// overrides in order.
pub fn resolve_scenario(
    model: Option<&str>,
    file: Option<&Path>,
    sets: &[String],
) -> Result<Scenario> {
    let scenario = match (model, file) {
        (None, None) => {
            bail!(
                "no model given: name one (see `diracvi list`), or pass --scenario FILE.toml or --model-file FILE.toml"
            )
        }
        (Some(name), None) => Scenario::defaults(name)?,
        (name, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read scenario file '{}'", path.display()))?;
            let scenario = Scenario::from_toml(&text)
                .with_context(|| format!("invalid scenario file '{}'", path.display()))?;
            if let Some(name) = name
                && name != scenario.model
            {
                bail!(
                    "model '{name}' given, but scenario file '{}' is for model '{}'",
                    path.display(),
                    scenario.model
                );
            }
            scenario
        }
    };
    apply_sets(scenario, sets)
}

/// Apply `--set key=value` overrides in order.
pub fn apply_sets(mut scenario: Scenario, sets: &[String]) -> Result<Scenario> {
    for kv in sets {
        let Some((key, value)) = kv.split_once('=') else {
            bail!("--set '{kv}': expected KEY=VALUE");
        };
        scenario
            .set(key, value)
            .with_context(|| format!("--set {kv}"))?;
    }
    Ok(scenario)
}

/// Number of steps: `--steps N`, or `round(t_end / h)`.
pub fn step_count(scenario: &Scenario, steps: Option<usize>) -> Result<usize> {
    if let Some(n) = steps {
        return Ok(n);
    }
    let n = (scenario.t_end / scenario.h).round();
    if !(n.is_finite() && n <= MAX_STEPS) {
        bail!(
            "t_end / h = {} / {} asks for {n:e} steps; at most {MAX_STEPS:e} are allowed",
            scenario.t_end,
            scenario.h
        );
    }
    // `n` is a non-negative integer below 1e12: the conversion is exact.
    Ok(n as usize)
}

/// What the CLI needs to know about a model before running it.
#[derive(Debug, Clone)]
pub struct ModelSummary {
    /// Coordinate names.
    pub coordinates: Vec<String>,
    /// Names of the boundary pieces.
    pub boundary_names: Vec<String>,
    /// Number of constraint forms.
    pub constraints: usize,
    /// Whether the system has a Hamiltonian at the initial state.
    pub has_hamiltonian: bool,
}

/// Build the model (validating parameters and initial data) and describe it.
pub fn describe(scenario: &Scenario) -> Result<ModelSummary> {
    struct Describe;
    impl ModelVisitor for Describe {
        type Output = ModelSummary;
        fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
            self,
            model: &Mo,
            setup: &RunSetup<N>,
        ) -> ModelSummary {
            let p0 = model.momentum(&setup.q0, &setup.v0);
            ModelSummary {
                coordinates: model.coordinates(),
                boundary_names: (0..model.boundary_count())
                    .map(|j| model.piece_name(j))
                    .collect(),
                constraints: M,
                has_hamiltonian: model.hamiltonian(&setup.q0, &p0).is_some(),
            }
        }
    }
    Ok(scenario.visit(Describe)?)
}

/// How to integrate.
#[derive(Debug, Clone, Copy)]
pub struct RunPlan {
    /// One-step map.
    pub stepper: StepperArg,
    /// Impact law: elastic, or reject crossings.
    pub impacts: ImpactsArg,
    /// Direction of time.
    pub direction: Direction,
    /// Number of steps.
    pub steps: usize,
    /// Record every `every`-th step for the sink (0: none).
    pub every: usize,
    /// No progress bar.
    pub quiet: bool,
}

/// Statistics of a finished run, dimension-erased.
#[derive(Debug, Clone)]
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
    /// Every impact.
    pub impacts: Vec<ImpactRecord>,
    /// Wall time of the integration (including streaming output).
    pub wall_time: Duration,
}

/// Integrate `scenario` as `plan` says, feeding recorded steps to `sink`.
///
/// Errors are usage errors except a failed step, which is a
/// [`NumericalFailure`].
pub fn execute(
    scenario: &Scenario,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
) -> Result<RunOutcome> {
    scenario.visit(Runner { plan, sink })?
}

struct Runner<'a> {
    plan: RunPlan,
    sink: &'a mut dyn RecordSink,
}

impl ModelVisitor for Runner<'_> {
    type Output = Result<RunOutcome>;

    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Result<RunOutcome> {
        let Runner { plan, sink } = self;
        let initial = state_from_velocity::<Mo, N, M>(model, 0.0, &setup.q0, &setup.v0)
            .map_err(|e| anyhow!("initial state: {e}"))?;
        let options = RunOptions::new(plan.steps)
            .every(plan.every)
            .discard_records();
        let mut progress = Progress::new(plan.steps, plan.quiet);
        let start = Instant::now();
        let failed = |e: &dyn fmt::Display| {
            anyhow::Error::new(NumericalFailure(format!("{}: {e}", model.name())))
        };
        // One integrator type per (stepper, impact law) pair.
        macro_rules! run {
            ($integrator:expr) => {
                drive_impacts(
                    &mut $integrator,
                    initial,
                    setup.h,
                    options,
                    sink,
                    &mut progress,
                )
                .map_err(|e| failed(&e))?
            };
        }
        let (trajectory, impacts) = match plan.stepper {
            StepperArg::Lagrange => {
                let stepper = LagrangeDirac::new(
                    model.clone(),
                    setup.discretization,
                    setup.constraint,
                    plan.direction,
                );
                match plan.impacts {
                    ImpactsArg::Elastic => run!(ImpactIntegrator::new(stepper)),
                    ImpactsArg::Reject => run!(ImpactIntegrator::with_law(stepper, RejectCrossing)),
                }
            }
            StepperArg::Hamiltonian => {
                if model.hamiltonian(&initial.q, &initial.p).is_none() {
                    bail!(
                        "model '{}' has no Hamiltonian (degenerate Lagrangian): --stepper hamiltonian is unavailable, use --stepper lagrange",
                        model.name()
                    );
                }
                let stepper = NonholonomicHamiltonian::new(
                    model.clone(),
                    setup.discretization,
                    setup.constraint,
                    SymplecticEuler,
                    plan.direction,
                );
                match plan.impacts {
                    ImpactsArg::Elastic => run!(HamiltonianImpacts::hamiltonian(stepper)),
                    ImpactsArg::Reject => run!(ImpactIntegrator::with_law(stepper, RejectCrossing)),
                }
            }
        };
        progress.finish();
        let energy_scale = trajectory
            .energy_scale
            .max(model.energy_scale(&setup.q0, &setup.v0));
        Ok(RunOutcome {
            impacts,
            wall_time: start.elapsed(),
            energy_scale,
            ..trajectory
        })
    }
}

/// [`drive`] an integrator with impacts; the summary and the impact records.
fn drive_impacts<St, const N: usize>(
    stepper: &mut St,
    initial: State<N>,
    h: f64,
    options: RunOptions,
    sink: &mut dyn RecordSink,
    progress: &mut Progress,
) -> Result<(RunOutcome, Vec<ImpactRecord>), ImpactError>
where
    St: OneStep<N, Event = ImpactEvent<N>, Error = ImpactError>,
{
    let t = drive(stepper, initial, h, options, sink, progress)?;
    let impacts = t.events.iter().map(impact_record).collect();
    Ok((erase(t), impacts))
}

/// Run `integrate`, feeding every recorded step to `sink`.
fn drive<St: OneStep<N>, const N: usize>(
    stepper: &mut St,
    initial: State<N>,
    h: f64,
    options: RunOptions,
    sink: &mut dyn RecordSink,
    progress: &mut Progress,
) -> Result<Trajectory<N, St::Event>, St::Error> {
    integrate(
        stepper,
        initial,
        h,
        options,
        |r: &Record<N>| {
            sink.record(&RecordView {
                k: r.k,
                t: r.t,
                q: r.q.as_slice(),
                p: r.p.as_slice(),
                energy: r.energy,
                constraint_residual: r.constraint_residual,
            });
        },
        |k| progress.tick(k),
    )
}

/// The summary of a trajectory, without the events.
fn erase<const N: usize, E>(t: Trajectory<N, E>) -> RunOutcome {
    let s = t.summary;
    RunOutcome {
        steps: s.steps,
        initial_energy: s.initial_energy,
        final_energy: s.final_energy,
        max_abs_energy_deviation: s.max_abs_energy_deviation,
        energy_scale: s.initial_energy.abs(),
        max_constraint_residual: s.max_constraint_residual,
        final_t: s.final_state.t,
        final_q: s.final_state.q.as_slice().to_vec(),
        final_p: s.final_state.p.as_slice().to_vec(),
        newton_iterations: s.newton_iterations,
        jacobian_evaluations: s.jacobian_evaluations,
        root_iterations: s.root_iterations,
        post_impact_iterations: s.post_impact_iterations,
        degenerate_steps: s.degenerate_steps,
        impacts: Vec::new(),
        wall_time: Duration::ZERO,
    }
}

fn impact_record<const N: usize>(e: &ImpactEvent<N>) -> ImpactRecord {
    ImpactRecord {
        step: e.step,
        alpha: e.alpha,
        t: e.t,
        q: e.q.as_slice().to_vec(),
        piece: e.piece,
        p_before: e.p_before.as_slice().to_vec(),
        p_after: e.p_after.as_slice().to_vec(),
        energy_before: e.energy_before,
        energy_after: e.energy_after,
    }
}

/// `diracvi run`.
pub fn run(args: &RunArgs) -> Result<()> {
    if args.every == 0 {
        bail!("--every must be at least 1");
    }
    let mut scenario = match &args.model_file {
        Some(path) => apply_sets(Scenario::from_model_file(path)?, &args.sets)?,
        None => resolve_scenario(args.model.as_deref(), args.scenario.as_deref(), &args.sets)?,
    };
    if let Some(h) = args.h {
        scenario.set("h", &h.to_string()).context("--h")?;
    }
    if let Some(t) = args.t_end {
        scenario.set("t_end", &t.to_string()).context("--t-end")?;
    }
    if let Some(d) = args.discretization {
        scenario.set("discretization", d.as_str())?;
    }
    if let Some(c) = args.constraint {
        scenario.set("constraint", c.as_str())?;
    }
    let steps = step_count(&scenario, args.steps)?;
    let info = describe(&scenario)?;
    if args.stepper == StepperArg::Hamiltonian && !info.has_hamiltonian {
        bail!(
            "model '{}' has no Hamiltonian (degenerate Lagrangian): --stepper hamiltonian is unavailable, use --stepper lagrange",
            scenario.model
        );
    }
    let direction = if args.backward {
        Direction::Backward
    } else {
        Direction::Forward
    };

    let mut writer = args
        .out
        .as_deref()
        .map(|p| TrajectoryWriter::create(p, &scenario.model, &info.coordinates))
        .transpose()?;
    let plot_file = args.plot.as_deref().map(plot::create).transpose()?;
    let mut collector = plot_file
        .as_ref()
        .map(|_| PlotCollector::new(steps / args.every + 2));
    let mut sinks: Vec<&mut dyn RecordSink> = Vec::new();
    if let Some(w) = writer.as_mut() {
        sinks.push(w);
    }
    if let Some(c) = collector.as_mut() {
        sinks.push(c);
    }
    let plan = RunPlan {
        stepper: args.stepper,
        impacts: args.impacts,
        direction,
        steps,
        every: if sinks.is_empty() { 0 } else { args.every },
        quiet: args.quiet,
    };
    let outcome = execute(&scenario, plan, &mut sinks)?;
    drop(sinks);

    let impact_times: Vec<f64> = outcome.impacts.iter().map(|i| i.t).collect();
    if let Some(w) = writer {
        w.finish(info.coordinates.len(), &outcome.impacts)?;
    }
    if let (Some(c), Some(file)) = (collector, plot_file) {
        plot::render(
            c,
            &PlotInfo {
                model: &scenario.model,
                coordinates: &info.coordinates,
                impact_times: &impact_times,
                e0: outcome.initial_energy,
            },
            file,
        )?;
    }

    let t_end = direction.sign() * steps as f64 * scenario.h;
    match args.summary {
        SummaryFormat::Json => {
            let json = SummaryJson {
                model: &scenario.model,
                coordinates: &info.coordinates,
                discretization: scenario.discretization.to_string(),
                constraint: scenario.constraint.to_string(),
                stepper: args.stepper.as_str(),
                direction: if args.backward { "backward" } else { "forward" },
                h: scenario.h,
                steps: outcome.steps,
                t_end,
                impacts: outcome.impacts.len(),
                impact_times: &impact_times,
                energy: EnergyJson {
                    initial: outcome.initial_energy,
                    final_: outcome.final_energy,
                    max_abs_deviation: outcome.max_abs_energy_deviation,
                    scale: outcome.energy_scale,
                    max_relative_deviation: relative_energy_deviation(&outcome),
                },
                constraint_residual_max: outcome.max_constraint_residual,
                final_state: FinalStateJson {
                    t: outcome.final_t,
                    q: &outcome.final_q,
                    p: &outcome.final_p,
                },
                newton_iterations: outcome.newton_iterations,
                degenerate_steps: outcome.degenerate_steps,
                statistics: StatisticsJson {
                    newton_iterations: outcome.newton_iterations,
                    jacobian_evaluations: outcome.jacobian_evaluations,
                    root_iterations: outcome.root_iterations,
                    post_impact_iterations: outcome.post_impact_iterations,
                    degenerate_steps: outcome.degenerate_steps,
                },
                wall_time_s: outcome.wall_time.as_secs_f64(),
                out: args.out.as_ref().map(|p| p.display().to_string()),
                plot: args.plot.as_ref().map(|p| p.display().to_string()),
            };
            crate::emit(&format!("{}\n", serde_json::to_string(&json)?))?;
        }
        SummaryFormat::Text if !args.quiet => {
            crate::emit(&text_summary(
                &scenario, &info, args, steps, t_end, &outcome,
            ))?;
        }
        SummaryFormat::Text => {}
    }
    Ok(())
}

/// `--summary json`.
#[derive(Debug, Serialize)]
struct SummaryJson<'a> {
    model: &'a str,
    coordinates: &'a [String],
    discretization: String,
    constraint: String,
    stepper: &'a str,
    direction: &'a str,
    h: f64,
    steps: usize,
    t_end: f64,
    impacts: usize,
    impact_times: &'a [f64],
    energy: EnergyJson,
    constraint_residual_max: f64,
    final_state: FinalStateJson<'a>,
    newton_iterations: usize,
    degenerate_steps: usize,
    statistics: StatisticsJson,
    wall_time_s: f64,
    out: Option<String>,
    plot: Option<String>,
}

/// Solver statistics over the run.
#[derive(Debug, Serialize)]
struct StatisticsJson {
    newton_iterations: usize,
    jacobian_evaluations: usize,
    root_iterations: usize,
    post_impact_iterations: usize,
    degenerate_steps: usize,
}

#[derive(Debug, Serialize)]
struct EnergyJson {
    initial: f64,
    #[serde(rename = "final")]
    final_: f64,
    max_abs_deviation: f64,
    /// `max(|E_0|, |⟨∂L/∂v, v⟩| + |L|)` at the initial state.
    scale: f64,
    /// `max_abs_deviation / scale`.
    max_relative_deviation: f64,
}

/// `max |E − E0|` relative to the run's energy scale (0 when the scale is 0,
/// i.e. a system at rest with zero energy, where any deviation is absolute).
fn relative_energy_deviation(o: &RunOutcome) -> f64 {
    if o.energy_scale > 0.0 {
        o.max_abs_energy_deviation / o.energy_scale
    } else {
        o.max_abs_energy_deviation
    }
}

#[derive(Debug, Serialize)]
struct FinalStateJson<'a> {
    t: f64,
    q: &'a [f64],
    p: &'a [f64],
}

fn vector(xs: &[f64]) -> String {
    let parts: Vec<String> = xs.iter().map(|x| format!("{x:.10}")).collect();
    format!("[{}]", parts.join(", "))
}

fn text_summary(
    scenario: &Scenario,
    info: &ModelSummary,
    args: &RunArgs,
    steps: usize,
    t_end: f64,
    o: &RunOutcome,
) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let sign = if args.backward { "(−)" } else { "(+)" };
    let stepper = match args.stepper {
        StepperArg::Lagrange if info.boundary_names.is_empty() => {
            format!("{sign} Lagrange–Dirac stepper")
        }
        StepperArg::Lagrange => format!("{sign} Lagrange–Dirac stepper with impacts"),
        StepperArg::Hamiltonian => {
            format!("{sign} nonholonomic Hamiltonian stepper (symplectic Euler)")
        }
    };
    let constraint = if info.constraints > 0 {
        format!(", {} discrete constraint", scenario.constraint)
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "{}: {steps} steps of h = {} from t = 0 to t = {t_end} ({} discretization{constraint}, {stepper})",
        scenario.model, scenario.h, scenario.discretization
    );
    if !info.boundary_names.is_empty() {
        let shown: Vec<String> = o
            .impacts
            .iter()
            .take(6)
            .map(|i| format!("{:.6}", i.t))
            .collect();
        let more = if o.impacts.len() > shown.len() {
            ", …"
        } else {
            ""
        };
        if o.impacts.is_empty() {
            let _ = writeln!(s, "impacts: none");
        } else {
            let _ = writeln!(
                s,
                "impacts: {} at t = {}{more}",
                o.impacts.len(),
                shown.join(", ")
            );
        }
    }
    let rel = relative_energy_deviation(o);
    let _ = writeln!(
        s,
        "energy: initial {:.12}, final {:.12}, max |E − E0| = {:.3e} (relative {:.3e} of the energy scale {:.3e})",
        o.initial_energy, o.final_energy, o.max_abs_energy_deviation, rel, o.energy_scale
    );
    if info.constraints > 0 {
        let _ = writeln!(
            s,
            "constraint residual: max {:.3e}",
            o.max_constraint_residual
        );
    }
    let _ = writeln!(
        s,
        "final state: t = {}, q = {}, p = {}",
        o.final_t,
        vector(&o.final_q),
        vector(&o.final_p)
    );
    let mut files = Vec::new();
    if let Some(p) = &args.out {
        files.push(p.display().to_string());
        if crate::output::extension(p).as_deref() == Some("csv") {
            files.push(crate::output::impacts_path(p).display().to_string());
        }
    }
    if let Some(p) = &args.plot {
        files.push(p.display().to_string());
    }
    if !files.is_empty() {
        let _ = writeln!(s, "wrote: {}", files.join(", "));
    }
    let _ = writeln!(
        s,
        "wall time: {:.3} s ({} Newton iterations)",
        o.wall_time.as_secs_f64(),
        o.newton_iterations
    );
    s
}
