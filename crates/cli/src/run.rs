//! `list`, `show` and `run`: scenario resolution, the summaries, and the
//! mapping of `diracvi-run`'s errors onto the exit codes. The integration
//! itself is `diracvi_run::execute`, shared with the Python package.

use crate::NumericalFailure;
use crate::args::{RunArgs, StepperArg, SummaryFormat};
use crate::output::{RecordSink, TrajectoryWriter};
use crate::plot::{self, PlotCollector, PlotInfo};
use crate::progress::Progress;
use anyhow::{Context, Result, anyhow, bail};
use diracvi_models::{Scenario, catalogue};
use diracvi_run::{Direction, ModelSummary, RunError, RunOutcome, RunPlan};
use serde::Serialize;
use std::path::Path;

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
    diracvi_run::step_count(scenario, steps).map_err(cli_error)
}

/// Build the model (validating parameters and initial data) and describe it.
pub fn describe(scenario: &Scenario) -> Result<ModelSummary> {
    Ok(diracvi_run::describe(scenario)?)
}

/// Integrate `scenario` as `plan` says, feeding recorded steps to `sink`,
/// with a progress bar on stderr unless `quiet`.
///
/// Errors are usage errors except a failed step, which is a
/// [`NumericalFailure`].
pub fn execute(
    scenario: &Scenario,
    plan: RunPlan,
    quiet: bool,
    sink: &mut dyn RecordSink,
) -> Result<RunOutcome> {
    let mut progress = Progress::new(plan.steps, quiet);
    let outcome =
        diracvi_run::execute_with_progress(scenario, plan, sink, &mut |k| progress.tick(k))
            .map_err(cli_error)?;
    progress.finish();
    Ok(outcome)
}

/// The error of the `--stepper hamiltonian` check.
fn no_hamiltonian(model: &str) -> anyhow::Error {
    anyhow!(
        "model '{model}' has no Hamiltonian (degenerate Lagrangian): --stepper hamiltonian is unavailable, use --stepper lagrange"
    )
}

/// A run error as the CLI reports it: numerical failures exit with 1,
/// everything else with 2.
fn cli_error(e: RunError) -> anyhow::Error {
    match e {
        RunError::Model(m) => anyhow::Error::new(m),
        RunError::NoHamiltonian { model } => no_hamiltonian(&model),
        e if e.is_numerical() => anyhow::Error::new(NumericalFailure(e.to_string())),
        e => anyhow!("{e}"),
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
    if !(args.energy_tolerance.is_finite() && args.energy_tolerance >= 0.0) {
        bail!(
            "--energy-tolerance {}: expected a fraction >= 0 (e.g. 0.01)",
            args.energy_tolerance
        );
    }
    let steps = step_count(&scenario, args.steps)?;
    let info = describe(&scenario)?;
    if args.stepper == StepperArg::Hamiltonian && !info.has_hamiltonian {
        return Err(no_hamiltonian(&scenario.model));
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
    let plan = RunPlan::new(steps)
        .stepper(args.stepper.into())
        .impacts(args.impacts.into())
        .direction(direction)
        .every(if sinks.is_empty() { 0 } else { args.every });
    let outcome = execute(&scenario, plan, args.quiet, &mut sinks)?;
    drop(sinks);

    let impact_times = outcome.impact_times();
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
    let warnings = outcome.warnings(args.energy_tolerance);
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
                    max_relative_deviation: outcome.max_relative_energy_deviation(),
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
                warnings: &warnings,
            };
            crate::emit(&format!("{}\n", serde_json::to_string(&json)?))?;
        }
        SummaryFormat::Text if !args.quiet => {
            let mut text = text_summary(&scenario, &info, args, steps, t_end, &outcome);
            for w in &warnings {
                text.push_str(&format!("warning: {w}\n"));
            }
            crate::emit(&text)?;
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
    /// Warnings about the run's quality (energy drift).
    warnings: &'a [String],
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
    let rel = o.max_relative_energy_deviation();
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
