//! `list`, `show` and `run`: scenario resolution, the summaries, and the
//! mapping of `diracvi-run`'s errors onto the exit codes. The integration
//! itself is `diracvi_run::execute`, shared with the Python package.

use crate::NumericalFailure;
use crate::animate::{self, AnimationCollector};
use crate::args::{ConstraintArg, DiscretizationArg, RunArgs, StepperArg, SummaryFormat};
use crate::output::{self, OutTargets, RecordSink, Staged, TrajectoryWriter};
use crate::plot::{self, PlotCollector, PlotInfo, PlotSpec};
use crate::progress::Progress;
use crate::signals;
use anyhow::{Context, Result, anyhow, bail};
use diracvi_models::{Scenario, catalogue};
use diracvi_run::{
    Direction, ModelSummary, PartsAccounting, ReductionSummary, RunError, RunOutcome, RunPlan,
    Stepper, Summary, ToleranceChoice, start_from_momentum,
};
use serde::Serialize;
use std::io::Read;
use std::path::Path;

/// Largest scenario file read (`--scenario`; model files have the same
/// bound in `diracvi-expr`).
const MAX_SCENARIO_BYTES: u64 = 1 << 20;

/// `diracvi list`.
pub fn list() -> Result<()> {
    let models = catalogue();
    let (ladder, ladder_description) = (diracvi_models::LADDER, diracvi_models::LADDER_DESCRIPTION);
    let width = models
        .iter()
        .map(|m| m.name.len())
        .chain([ladder.len()])
        .max()
        .unwrap_or(0);
    let mut lines: String = models
        .iter()
        .map(|m| format!("{:width$}  {}\n", m.name, m.description))
        .collect();
    lines.push_str(&format!("{ladder:width$}  {ladder_description}\n"));
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
            let text = read_bounded(path)
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

/// Read a text file of at most [`MAX_SCENARIO_BYTES`]: the size is checked
/// first, and at most one byte more is read (special files such as
/// `/dev/zero` report no size).
fn read_bounded(path: &Path) -> Result<String> {
    let file = std::fs::File::open(path)?;
    let too_large =
        || anyhow!("larger than 1 MiB ({MAX_SCENARIO_BYTES} bytes), the limit for a scenario file");
    let meta = file.metadata()?;
    if meta.is_dir() {
        bail!("it is a directory");
    }
    if meta.len() > MAX_SCENARIO_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(MAX_SCENARIO_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|_| anyhow!("not UTF-8 text"))
}

/// Apply the command line's `--h`, `--tol`, `--t-end`, `--discretization`
/// and `--constraint` to `scenario`, in this order (after `--set`).
pub fn apply_method_options(
    scenario: &mut Scenario,
    h: Option<f64>,
    tol: Option<f64>,
    t_end: Option<f64>,
    discretization: Option<DiscretizationArg>,
    constraint: Option<ConstraintArg>,
) -> Result<()> {
    if let Some(h) = h {
        scenario.set("h", &h.to_string()).context("--h")?;
    }
    if let Some(tol) = tol {
        scenario.set("tol", &tol.to_string()).context("--tol")?;
    }
    if let Some(t) = t_end {
        scenario.set("t_end", &t.to_string()).context("--t-end")?;
    }
    if let Some(d) = discretization {
        scenario.set("discretization", d.as_str())?;
    }
    if let Some(c) = constraint {
        scenario.set("constraint", c.as_str())?;
    }
    Ok(())
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

/// Where a run started with `--start-p` starts: the momentum given, the
/// velocity solved from it, and the multipliers `ν` of
/// `∂L/∂v(q, v) = p + A(q)ᵀν` (`"start"` in `--summary json`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct StartJson {
    /// The momentum given.
    pub p: Vec<f64>,
    /// The initial velocity solved from it.
    pub v: Vec<f64>,
    /// One per constraint row: the run starts from `p + A(q)ᵀν`.
    pub multipliers: Vec<f64>,
}

/// `--start-p P`: set the scenario's initial velocity to the one solved from
/// the momentum `p` at its `q` ([`start_from_momentum`]).
///
/// # Errors
/// A usage error when `--set v=...` gives the velocity too, for a circuit,
/// for a `p` of the wrong length, or when the constrained Legendre map
/// cannot be inverted at `(q, p)`.
pub fn start_from(scenario: &mut Scenario, p: &[f64], sets: &[String]) -> Result<StartJson> {
    let sets_v = sets
        .iter()
        .any(|kv| kv.split_once('=').is_some_and(|(k, _)| k.trim() == "v"));
    if sets_v {
        bail!("--start-p and --set v=... both give the initial velocity: give one of them");
    }
    let q = scenario.initial.q.clone();
    let start =
        start_from_momentum(scenario, &q, p).map_err(|e| cli_error(e).context("--start-p"))?;
    *scenario = start.scenario;
    Ok(StartJson {
        p: p.to_vec(),
        v: start.v,
        multipliers: start.multipliers,
    })
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
/// with a progress bar on stderr unless `quiet`. After every step the run
/// checks for a signal and for an output that could not be written, and
/// then ends at once (temporary files removed).
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
    let outcome = diracvi_run::execute_with_progress(scenario, plan, sink, &mut |k| {
        if signals::pending().is_some() {
            progress.finish();
            signals::exit_if_interrupted();
        }
        output::exit_if_write_failed();
        progress.tick(k);
    })
    .map_err(cli_error)?;
    progress.finish();
    Ok(outcome)
}

/// Choose the order and step for `--tol` (or a scenario's `tol`) from pilot
/// runs ([`diracvi_run::choose_step_with_progress`]); a signal ends the
/// pilots as it ends a run.
fn choose_step(
    scenario: &Scenario,
    plan: &RunPlan,
    tol: f64,
    quiet: bool,
) -> Result<ToleranceChoice> {
    if !quiet {
        crate::note_line(&format!(
            "--tol {tol:e}: pilot runs to choose the order and the step"
        ));
    }
    diracvi_run::choose_step_with_progress(scenario, plan, tol, &mut |_| {
        if signals::pending().is_some() {
            signals::exit_if_interrupted();
        }
    })
    .map_err(cli_error)
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
        RunError::HamiltonianNotGiven { model } => anyhow!(
            "model '{model}' has a regular Lagrangian but no Hamiltonian was given: --stepper hamiltonian needs H(q, p) (for a model file, add model.hamiltonian, the Legendre transform of L), or use --stepper lagrange"
        ),
        e @ (RunError::UnsupportedOrder { .. }
        | RunError::JacobianUnsupported { .. }
        | RunError::SensitivityUnsupported { .. }
        | RunError::UnknownSensitivityParameter { .. }) => {
            anyhow!("{e}")
        }
        e @ RunError::TooManySteps { steps, .. } => {
            anyhow!("{e} ({})", duration_estimate(steps))
        }
        e @ RunError::StepsOverLimit { steps, .. } => {
            anyhow!("{e} ({})", duration_estimate(steps as f64))
        }
        e if e.is_numerical() => anyhow::Error::new(NumericalFailure(e.to_string())),
        e => anyhow!("{e}"),
    }
}

/// How long `steps` steps take at least: at 0.4 µs a step (the fastest
/// step of the catalogue, docs: README "Performance").
fn duration_estimate(steps: f64) -> String {
    if !steps.is_finite() {
        return "a run that cannot end".into();
    }
    let seconds = steps * 0.4e-6;
    let (value, unit) = if seconds >= 86_400.0 * 365.0 {
        (seconds / (86_400.0 * 365.0), "years")
    } else if seconds >= 86_400.0 {
        (seconds / 86_400.0, "days")
    } else if seconds >= 3600.0 {
        (seconds / 3600.0, "hours")
    } else {
        (seconds, "seconds")
    };
    format!("at 0.4 µs a step, at least {value:.3} {unit}")
}

/// Outputs smaller than this are never refused for lack of space.
const MIN_REFUSED_BYTES: f64 = 64.0 * 1024.0 * 1024.0;

/// Refuse up front an `--out` file that cannot fit in the free space of its
/// file system (a lower bound on its size). Memory is not at stake: records
/// stream to the file, and the plot keeps a bounded number of points
/// whatever the number of steps.
fn check_resources(
    args: &RunArgs,
    out: Option<&OutTargets>,
    steps: usize,
    dimension: usize,
) -> Result<()> {
    let records = (steps / args.every) as f64 + 2.0;
    if let Some(out) = out
        && !out.trajectory().is_special()
        && let Some(free) = output::available_space(out.trajectory().dir())
    {
        let need = output::min_bytes(out.format(), records, dimension);
        // Small files are left to the write itself (a clean error if the
        // disk is full): only requests far beyond the disk are refused.
        if need > free as f64 && need > MIN_REFUSED_BYTES {
            bail!(
                "--out '{}': {records:.3e} records need about {} ({} free on its file system): record fewer steps with --every K, or take fewer steps",
                out.trajectory().path().display(),
                bytes(need),
                bytes(free as f64)
            );
        }
    }
    Ok(())
}

/// A byte count for messages.
fn bytes(b: f64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = b;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} bytes")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

/// A run whose summary would hold a non-finite number is a numerical
/// failure, not a result.
fn check_finite(o: &RunOutcome) -> Result<()> {
    let named = [
        ("initial energy", o.initial_energy),
        ("final energy", o.final_energy),
        ("max |E − E0|", o.max_abs_energy_deviation),
        ("energy scale", o.energy_scale),
        ("constraint residual", o.max_constraint_residual),
        ("final time", o.final_t),
    ];
    let bad = named
        .iter()
        .find(|(_, x)| !x.is_finite())
        .map(|(name, x)| format!("{name} = {x}"))
        .or_else(|| {
            o.final_q
                .iter()
                .chain(&o.final_p)
                .find(|x| !x.is_finite())
                .map(|x| format!("final state component = {x}"))
        });
    match bad {
        Some(what) => Err(anyhow::Error::new(NumericalFailure(format!(
            "the run produced a non-finite result ({what}) after {} steps: try a smaller --h",
            o.steps
        )))),
        None => Ok(()),
    }
}

/// `diracvi run`.
pub fn run(args: &RunArgs) -> Result<()> {
    if args.tol.is_some() && args.h.is_some() && args.netlist.is_none() {
        bail!(
            "the argument '--tol <TOL>' cannot be used with '--h <H>': the tolerance chooses the step \
             (only a netlist, which has no default step, takes --h with --tol, as the step its pilot runs start from)"
        );
    }
    if args.every == 0 {
        bail!("--every must be at least 1");
    }
    if !(args.energy_tolerance.is_finite() && args.energy_tolerance >= 0.0) {
        bail!(
            "--energy-tolerance must be a finite fraction >= 0, got {}",
            args.energy_tolerance
        );
    }
    // The output paths first: nothing is integrated for a run that could
    // not write its results.
    let out_targets = args.out.as_deref().map(OutTargets::check).transpose()?;
    let plot_target = args
        .plot
        .as_deref()
        .map(|path| crate::output::check_svg(path, "--plot", "plot"))
        .transpose()?;
    let animate_target = args.animate.as_deref().map(animate::check).transpose()?;
    let poster_target = args
        .poster
        .as_deref()
        .map(|p| animate::check_poster(p, args.animate.as_deref(), args.poster_frames))
        .transpose()?;

    let mut scenario = match (
        crate::circuit::netlist_scenario(args)?,
        &args.model_file,
        &args.system,
    ) {
        (Some(netlist), _, _) => apply_sets(netlist, &args.sets)?,
        (None, Some(path), _) => apply_sets(Scenario::from_model_file(path)?, &args.sets)?,
        (None, None, Some(path)) => apply_sets(crate::system::scenario(path)?, &args.sets)?,
        (None, None, None) => {
            resolve_scenario(args.model.as_deref(), args.scenario.as_deref(), &args.sets)?
        }
    };
    apply_method_options(
        &mut scenario,
        args.h,
        args.tol,
        args.t_end,
        args.discretization,
        args.constraint,
    )?;
    let start = args
        .start_p
        .as_deref()
        .map(|p| start_from(&mut scenario, p, &args.sets))
        .transpose()?;
    let mut steps = step_count(&scenario, args.steps).map_err(|e| match args.steps {
        Some(_) => e.context("--steps"),
        None => e,
    })?;
    let info = describe(&scenario)?;
    if args.stepper == StepperArg::Hamiltonian
        && let Some(e) = info.hamiltonian_error(&scenario.model)
    {
        return Err(cli_error(e));
    }
    let direction = if args.backward {
        Direction::Backward
    } else {
        Direction::Forward
    };
    let mut order = args.order.unwrap_or_default();
    // Accuracy on request: pilot runs choose the order and the step.
    let mut tolerance = match scenario.tol {
        Some(tol) => {
            let probe = RunPlan::new(steps)
                .stepper(args.stepper.into())
                .impacts(args.impacts.into())
                .direction(direction)
                .reduce(args.reduce)
                .jacobian(args.jacobian)
                .sensitivity(&args.sensitivity);
            let choice = choose_step(&scenario, &probe, tol, args.quiet)?;
            let (chosen, plan) = choice.apply(&scenario, probe);
            scenario = chosen;
            steps = plan.steps;
            order = plan.order;
            Some(choice)
        }
        None => None,
    };
    check_resources(args, out_targets.as_ref(), steps, info.coordinates.len())?;
    if animate_target.is_some() {
        animate::check_drawable(&scenario)?;
    }
    let plot_spec = plot_target
        .as_ref()
        .map(|_| PlotSpec::resolve(args.plot_panels.as_deref(), &scenario.model, &info))
        .transpose()?;

    // Staged files: temporaries next to the targets (this also checks that
    // the directories are writable), removed on any failure.
    let mut writer = out_targets
        .as_ref()
        .map(|t| TrajectoryWriter::create(t, &scenario.model, &info.coordinates))
        .transpose()?;
    let plot_file = plot_target.as_ref().map(Staged::create).transpose()?;
    let mut collector = plot_spec
        .as_ref()
        .filter(|_| plot_file.is_some())
        .map(|spec| PlotCollector::new(steps / args.every + 2, spec));
    let animation_file = animate_target.as_ref().map(Staged::create).transpose()?;
    let poster_file = poster_target.as_ref().map(Staged::create).transpose()?;
    let mut animation = animation_file
        .as_ref()
        .map(|_| AnimationCollector::new(steps / args.every + 2));
    let mut sinks: Vec<&mut dyn RecordSink> = Vec::new();
    if let Some(w) = writer.as_mut() {
        sinks.push(w);
    }
    if let Some(c) = collector.as_mut() {
        sinks.push(c);
    }
    if let Some(a) = animation.as_mut() {
        sinks.push(a);
    }
    let every = if sinks.is_empty() { 0 } else { args.every };
    let plan = RunPlan::new(steps)
        .stepper(args.stepper.into())
        .impacts(args.impacts.into())
        .direction(direction)
        .reduce(args.reduce)
        .jacobian(args.jacobian)
        .sensitivity(&args.sensitivity)
        .order(order)
        .every(every);
    // With --tol and nothing recorded, the pilot at the chosen step is this
    // very run (docs/theory.md §13).
    let outcome = match tolerance
        .as_mut()
        .and_then(|t| t.take_run(&scenario, &plan))
    {
        Some(outcome) => outcome,
        None => execute(&scenario, plan, args.quiet, &mut sinks)?,
    };
    drop(sinks);
    check_finite(&outcome)?;
    signals::exit_if_interrupted();

    let mut staged = match writer {
        Some(w) => w.finish(&outcome.impacts)?,
        None => Vec::new(),
    };
    if let (Some(c), Some(spec), Some(mut file)) = (collector, &plot_spec, plot_file) {
        // The walls `--animate` draws; a circuit has none.
        let walls = |around: &[[f64; 2]]| match scenario.circuit {
            Some(_) => Ok(Vec::new()),
            None => scenario
                .walls_around(around.iter().copied())
                .map_err(|e| e.to_string()),
        };
        let plot_info = PlotInfo {
            model: &scenario.model,
            walls: &walls,
            coordinates: &info.coordinates,
            impacts: &outcome.impacts,
            e0: outcome.initial_energy,
            energy_scale: outcome.energy_scale,
            steps: outcome.steps,
        };
        let svg = plot::render(c, spec, &plot_info).map_err(|e| match e {
            plot::PlotError::Draw(_) => anyhow::Error::new(crate::OutputFailure(e.to_string())),
            e => anyhow::anyhow!("--plot: {e}"),
        })?;
        let target = file.target().to_path_buf();
        std::io::Write::write_all(file.file(), svg.as_bytes())
            .and_then(|()| std::io::Write::flush(file.file()))
            .map_err(|e| crate::output::output_failure(&target, e))?;
        file.sync()?;
        staged.push(file);
        if !args.quiet
            && let Some(note) = spec.note(&info.coordinates)
        {
            crate::note_line(&note);
        }
    }
    if let (Some(a), Some(file)) = (animation, animation_file) {
        let poster = poster_file.map(|p| (p, args.poster_frames));
        staged.extend(animate::render(
            a,
            &scenario,
            &outcome.impacts,
            file,
            poster,
        )?);
    }

    let mut summary_data = Summary::new(&scenario, &info, &outcome, args.energy_tolerance);
    if let Some(choice) = &tolerance {
        summary_data = summary_data.with_tolerance(choice);
    }
    let summary = match args.summary {
        SummaryFormat::Json => {
            let json = SummaryJson {
                summary: &summary_data,
                start: start.as_ref(),
                out: args.out.as_ref().map(|p| p.display().to_string()),
                plot: args.plot.as_ref().map(|p| p.display().to_string()),
                animate: args.animate.as_ref().map(|p| p.display().to_string()),
                poster: args.poster.as_ref().map(|p| p.display().to_string()),
            };
            Some(format!("{}\n", serde_json::to_string(&json)?))
        }
        SummaryFormat::Text if !args.quiet => {
            let mut text = text_summary(&info, args, &outcome, &summary_data);
            if let Some(start) = &start {
                text.push_str(&start_line(start));
            }
            if let Some(PartsAccounting::Done(r)) = &outcome.accounting {
                text.push_str(&crate::system::text_lines(r));
            }
            Some(text)
        }
        SummaryFormat::Text => None,
    };

    // All or nothing: rename every file into place (under a lock), then
    // print the summary; an interruption or a summary that cannot be
    // printed undoes the renames (dropping `committed`).
    // The signal watcher waits while `commit` is held (and stops watching
    // once the commit went through): only these checks end a run here.
    signals::exit_if_interrupted();
    let commit = signals::commit_guard();
    let committed = output::commit(staged)?;
    if let Some(status) = signals::pending() {
        drop(committed);
        signals::exit(status);
    }
    if let Some(summary) = summary {
        crate::emit(&summary)?;
    }
    committed.finish();
    signals::mark_done();
    drop(commit);
    Ok(())
}

/// `--summary json`: the run's [`Summary`] (docs/summary.schema.json) and
/// the files written.
#[derive(Debug, Serialize)]
struct SummaryJson<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    start: Option<&'a StartJson>,
    out: Option<String>,
    plot: Option<String>,
    animate: Option<String>,
    poster: Option<String>,
}

/// The text summary's line for a reduced run.
fn reduction_line(r: &ReductionSummary) -> String {
    let mut line = format!(
        "reduced: {} reduction by {} (docs/theory.md §7), full states reconstructed",
        r.kind,
        r.cyclic.join(", ")
    );
    if !r.momentum.is_empty() {
        let mu: Vec<String> = r.momentum.iter().map(|m| format!("{m:.12e}")).collect();
        line += &format!("; conserved momentum {}", mu.join(", "));
    }
    if r.curvature_force {
        line += "; curvature taken as a gyroscopic force";
    }
    line
}

/// The text summary's line for a run started with `--start-p`.
fn start_line(start: &StartJson) -> String {
    let mut line = format!(
        "start: from p = {} (--start-p), v = {} solved",
        vector(&start.p),
        vector(&start.v)
    );
    if !start.multipliers.is_empty() {
        line += &format!(
            "; multipliers ν = {} (the run starts from p + A(q)ᵀν)",
            vector(&start.multipliers)
        );
    }
    line + "\n"
}

/// Most components the text summary prints of a vector; a longer one shows
/// its first and last ones and its length (`--summary json` has them all).
const MAX_SHOWN_COMPONENTS: usize = 12;

fn vector(xs: &[f64]) -> String {
    let show = |xs: &[f64]| -> String {
        xs.iter()
            .map(|x| format!("{x:.10}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if xs.len() <= MAX_SHOWN_COMPONENTS {
        return format!("[{}]", show(xs));
    }
    let head = MAX_SHOWN_COMPONENTS - 2;
    format!(
        "[{}, …, {}] ({} components; all in --summary json)",
        show(&xs[..head]),
        show(&xs[xs.len() - 2..]),
        xs.len()
    )
}

fn text_summary(info: &ModelSummary, args: &RunArgs, o: &RunOutcome, summary: &Summary) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let m = &o.method;
    let sign = match m.direction {
        Direction::Forward => "(+)",
        Direction::Backward => "(−)",
    };
    let stepper = match m.stepper {
        Stepper::Lagrange if info.boundary_names.is_empty() => {
            format!("{sign} Lagrange–Dirac stepper")
        }
        Stepper::Lagrange => format!("{sign} Lagrange–Dirac stepper with impacts"),
        Stepper::Hamiltonian => {
            format!("{sign} nonholonomic Hamiltonian stepper (symplectic Euler)")
        }
    };
    let constraint = if info.constraints > 0 {
        format!(", {} discrete constraint", m.constraint)
    } else {
        String::new()
    };
    let (model, steps, h, t_end) = (&summary.model, o.steps, summary.h, summary.t_end);
    if m.order.is_composed() {
        // docs/theory.md §9: the composed methods use the symmetric midpoint step.
        let _ = writeln!(
            s,
            "{model}: {steps} steps of h = {h:?} from t = 0 to t = {t_end:?} (order {}: {} of the symmetric midpoint step, {stepper}, continuous elastic law)",
            m.order, m.composition
        );
    } else {
        let _ = writeln!(
            s,
            "{model}: {steps} steps of h = {h:?} from t = 0 to t = {t_end:?} (order {}: {} discretization{constraint}, {stepper})",
            m.order_of_accuracy(),
            m.discretization
        );
    }
    if let Some(r) = &o.reduction {
        let _ = writeln!(s, "{}", reduction_line(r));
    }
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
    if !o.invariants.is_empty() {
        let shown: Vec<String> = o
            .invariants
            .iter()
            .map(|r| {
                format!(
                    "{} {:.12} (max |Δ| {:.3e})",
                    r.name, r.initial, r.max_abs_deviation
                )
            })
            .collect();
        let _ = writeln!(s, "invariants: {}", shown.join(", "));
    }
    if let Some(t) = &summary.tolerance {
        let _ = writeln!(
            s,
            "tolerance: {:e} requested; chose order {} with h = {:?} ({} steps), estimated error {:.2e}; {} pilot runs in {:.3} s",
            t.requested,
            t.chosen_order,
            t.chosen_h,
            t.chosen_steps,
            t.error_estimate,
            t.pilot_runs,
            t.pilot_wall_time_s
        );
    }
    for w in &summary.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    if info.constraints > 0 {
        let _ = writeln!(
            s,
            "constraint residual: max {:.3e}",
            o.max_constraint_residual
        );
    }
    if let Some(j) = &o.jacobian {
        let structure = if info.constraints == 0 {
            format!(
                "symplectic to {:.1e} (max |∂Φᵀ J ∂Φ − J| / max |∂Φ|²)",
                diracvi_run::symplecticity_defect(j)
            )
        } else {
            "not symplectic: the flow of a nonholonomic system is not".to_owned()
        };
        let _ = writeln!(
            s,
            "jacobian: ∂Φ = ∂(q_N, p_N)/∂(q_0, p_0), {}×{} in --summary json, max |entry| {:.3e}; {structure}",
            j.nrows(),
            j.ncols(),
            j.amax()
        );
    }
    for (name, column) in &o.sensitivity {
        let largest = column.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let _ = writeln!(
            s,
            "sensitivity: ∂(q_N, p_N)/∂{name}, {} entries in --summary json, max |entry| {largest:.3e}",
            column.len()
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
    if let Some(p) = &args.animate {
        files.push(p.display().to_string());
    }
    if let Some(p) = &args.poster {
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
