//! `diracvi run --netlist FILE.cir` and `diracvi run lc-ladder`: circuits
//! of run-time size on the sparse Lagrange–Dirac steppers (crate
//! `diracvi-circuit`). Thin: parse, build, step, write the usual CSV/JSON
//! records and a summary. A malformed netlist exits 2 with its line number;
//! a failed step exits 1.

use crate::NumericalFailure;
use crate::args::{DiscretizationArg, RunArgs, SummaryFormat};
use crate::output::{self, OutTargets, TrajectoryWriter};
use anyhow::{Context, Result, anyhow, bail};
use diracvi_circuit::Circuit;
use diracvi_circuit::netlist::Netlist;
use diracvi_geometry::Discretization;
use diracvi_run::{Direction, RecordSink, RecordView};
use serde::Serialize;
use std::f64::consts::PI;
use std::time::Instant;

/// The catalogue line of `lc-ladder` (its size is a run-time parameter, so
/// it lives outside the const-generic model registry).
pub const LADDER_LINE: (&str, &str) = (
    "lc-ladder",
    "uniform LC ladder of `cells` cells, shorted at both ends (run-time size: --set cells=N, l=, c=, mode=, v0=; sparse stepper)",
);

/// Largest netlist read.
const MAX_NETLIST_BYTES: u64 = 64 << 20;

/// Whether `run` handles these arguments (a netlist, or `lc-ladder`).
pub fn handles(args: &RunArgs) -> bool {
    args.netlist.is_some() || args.model.as_deref() == Some(LADDER_LINE.0)
}

struct Ladder {
    cells: usize,
    l: f64,
    c: f64,
    mode: usize,
    v0: f64,
}

fn ladder(sets: &[String]) -> Result<Ladder> {
    let mut p = Ladder {
        cells: 10,
        l: 1.0,
        c: 1.0,
        mode: 1,
        v0: 1.0,
    };
    for kv in sets {
        let Some((key, value)) = kv.split_once('=') else {
            bail!("--set '{kv}': expected KEY=VALUE");
        };
        let float = || -> Result<f64> {
            let v: f64 = value
                .trim()
                .parse()
                .map_err(|_| anyhow!("--set {kv}: not a number"))?;
            if !v.is_finite() {
                bail!("--set {kv}: must be finite");
            }
            Ok(v)
        };
        let count = || -> Result<usize> {
            value
                .trim()
                .parse()
                .map_err(|_| anyhow!("--set {kv}: not a whole number"))
        };
        match key.trim() {
            "cells" => p.cells = count()?,
            "mode" => p.mode = count()?,
            "l" => p.l = float()?,
            "c" => p.c = float()?,
            "v0" => p.v0 = float()?,
            other => {
                bail!("--set {kv}: lc-ladder has no parameter '{other}' (cells, l, c, mode, v0)")
            }
        }
    }
    if p.cells == 0 || p.cells > 10_000_000 {
        bail!("lc-ladder: cells must be in 1..=10000000, got {}", p.cells);
    }
    if p.mode == 0 || p.mode > p.cells {
        bail!("lc-ladder: mode must be in 1..={}, got {}", p.cells, p.mode);
    }
    if !(p.l > 0.0 && p.c > 0.0) {
        bail!("lc-ladder: l and c must be > 0");
    }
    Ok(p)
}

/// The run defaults of `lc-ladder`: `h` gives 40 steps per period of the
/// fastest mode (`ω_max = 2/√(lc)`), 2000 steps.
fn ladder_defaults(p: &Ladder) -> (f64, usize) {
    let omega_max = 2.0 / (p.l * p.c).sqrt();
    (2.0 * PI / omega_max / 40.0, 2000)
}

/// `diracvi show lc-ladder`: its parameters with their defaults and
/// meaning, and the run defaults, as commented TOML (for reading: the
/// ladder takes its parameters from `--set`, not from a scenario file).
pub fn show_ladder() -> String {
    let p = ladder(&[]).expect("the defaults are valid");
    let (h, steps) = ladder_defaults(&p);
    let (name, description) = LADDER_LINE;
    [
        format!("# {name}: {description}"),
        format!("# Parameters: diracvi run {name} --set KEY=VALUE (no scenario file)."),
        format!("model = \"{name}\""),
        String::new(),
        "[parameters]".into(),
        "# number of cells, 1..=10000000 (cells + 1 series inductors, one capacitor per node)"
            .into(),
        format!("cells = {}", p.cells),
        "# inductance of each series inductor (> 0)".into(),
        format!("l = {:?}", p.l),
        "# capacitance of each node's capacitor to ground (> 0)".into(),
        format!("c = {:?}", p.c),
        "# initial capacitor voltages v0 sin(j mode pi / (cells + 1)), j = 1..cells".into(),
        format!("mode = {}", p.mode),
        format!("v0 = {:?}", p.v0),
        String::new(),
        "[run]".into(),
        "# defaults: 40 steps per period of the fastest mode, omega_max = 2 / sqrt(l c)".into(),
        format!("h = {h:?}"),
        format!("steps = {steps}"),
        "discretization = \"forward\"".into(),
        String::new(),
    ]
    .join("\n")
}

#[derive(Serialize)]
struct Summary {
    model: String,
    coordinates: usize,
    kirchhoff_rows: usize,
    capacitor_loops: usize,
    discretization: &'static str,
    direction: &'static str,
    h: f64,
    steps: usize,
    t_final: f64,
    energy_initial: f64,
    energy_min: f64,
    energy_max: f64,
    energy_final: f64,
    max_kirchhoff_residual: f64,
    newton_iterations: usize,
    jacobian_evaluations: usize,
    setup_seconds: f64,
    solve_seconds: f64,
    steps_per_second: f64,
}

/// Run a netlist or `lc-ladder`.
pub fn run(args: &RunArgs) -> Result<()> {
    if args.every == 0 {
        bail!("--every must be at least 1");
    }
    if args.model_file.is_some() || args.scenario.is_some() {
        bail!("--netlist and lc-ladder take neither --model-file nor --scenario");
    }
    let out_targets = args.out.as_deref().map(OutTargets::check).transpose()?;
    if args.plot.is_some() {
        bail!("--plot is not available for circuits");
    }
    let (name, circuit, h_default, t_default) = match &args.netlist {
        Some(path) => {
            if args.model.is_some() {
                bail!("give either a model or --netlist, not both");
            }
            if !args.sets.is_empty() {
                bail!("--set does not apply to --netlist (edit the netlist)");
            }
            let text = read(path).with_context(|| format!("--netlist '{}'", path.display()))?;
            let circuit =
                Circuit::parse(&text).with_context(|| format!("netlist '{}'", path.display()))?;
            (path.display().to_string(), circuit, None, None)
        }
        None => {
            let p = ladder(&args.sets)?;
            let shape: Vec<f64> = (1..=p.cells)
                .map(|j| p.v0 * (j as f64 * p.mode as f64 * PI / (p.cells as f64 + 1.0)).sin())
                .collect();
            let circuit = Circuit::new(Netlist::ladder(p.cells, p.l, p.c, &shape))?;
            let (h, steps) = ladder_defaults(&p);
            (
                LADDER_LINE.0.to_string(),
                circuit,
                Some(h),
                Some(steps as f64 * h),
            )
        }
    };
    let h = args
        .h
        .or(h_default)
        .ok_or_else(|| anyhow!("--netlist needs --h (and --t-end or --steps)"))?;
    if !(h.is_finite() && h > 0.0) {
        bail!("--h must be finite and > 0, got {h}");
    }
    let steps = match (args.steps, args.t_end.or(t_default)) {
        (Some(n), _) => n,
        (None, Some(t)) if t.is_finite() && t >= 0.0 => (t / h).round() as usize,
        (None, Some(t)) => bail!("--t-end must be finite and >= 0, got {t}"),
        (None, None) => bail!("--netlist needs --t-end or --steps"),
    };
    if steps as f64 > diracvi_run::MAX_STEPS {
        bail!(
            "{steps} steps exceed the limit of {}",
            diracvi_run::MAX_STEPS
        );
    }
    let discretization = match args.discretization.unwrap_or(DiscretizationArg::Forward) {
        DiscretizationArg::Forward => Discretization::Forward,
        DiscretizationArg::Midpoint => Discretization::Midpoint,
    };
    let direction = if args.backward {
        Direction::Backward
    } else {
        Direction::Forward
    };
    let names = circuit.coordinate_names();
    let mut writer = out_targets
        .as_ref()
        .map(|t| TrajectoryWriter::create(t, &name, &names))
        .transpose()?;

    let setup = Instant::now();
    let mut stepper = circuit.stepper(discretization, direction)?;
    let setup_seconds = setup.elapsed().as_secs_f64();
    let mut state = circuit.initial_state();
    let mut next = state.clone();
    let mut s = Summary {
        model: name.clone(),
        coordinates: circuit.coordinates(),
        kirchhoff_rows: circuit.node_count(),
        capacitor_loops: circuit.loop_count(),
        discretization: match discretization {
            Discretization::Forward => "forward",
            Discretization::Midpoint => "midpoint",
        },
        direction: if args.backward { "backward" } else { "forward" },
        h,
        steps,
        t_final: state.t,
        energy_initial: f64::NAN,
        energy_min: f64::INFINITY,
        energy_max: f64::NEG_INFINITY,
        energy_final: f64::NAN,
        max_kirchhoff_residual: 0.0,
        newton_iterations: 0,
        jacobian_evaluations: 0,
        setup_seconds,
        solve_seconds: 0.0,
        steps_per_second: 0.0,
    };
    let start = Instant::now();
    for k in 0..steps {
        let info = stepper
            .step_into(k, &state, h, &mut next)
            .map_err(|e| anyhow::Error::new(NumericalFailure(e.to_string())))?;
        std::mem::swap(&mut state, &mut next);
        if k == 0 {
            s.energy_initial = info.energy;
            if let Some(w) = writer.as_mut() {
                let first = circuit.initial_state();
                w.record(&RecordView {
                    k: 0,
                    t: first.t,
                    q: first.q.as_slice(),
                    p: first.p.as_slice(),
                    energy: info.energy,
                    constraint_residual: 0.0,
                });
            }
        }
        s.energy_min = s.energy_min.min(info.energy);
        s.energy_max = s.energy_max.max(info.energy);
        s.energy_final = info.energy;
        let residual = info.constraint_residual / state.q.amax().max(1.0);
        s.max_kirchhoff_residual = s.max_kirchhoff_residual.max(residual);
        s.newton_iterations += info.stats.iterations;
        s.jacobian_evaluations += info.stats.jacobian_evaluations;
        if let Some(w) = writer.as_mut()
            && ((k + 1) % args.every == 0 || k + 1 == steps)
        {
            w.record(&RecordView {
                k: k + 1,
                t: state.t,
                q: state.q.as_slice(),
                p: state.p.as_slice(),
                energy: info.energy,
                constraint_residual: residual,
            });
        }
        if k % 1024 == 0 {
            crate::signals::exit_if_interrupted();
        }
    }
    s.solve_seconds = start.elapsed().as_secs_f64();
    s.steps_per_second = steps as f64 / s.solve_seconds.max(1e-12);
    s.t_final = state.t;
    let staged = match writer {
        Some(w) => w.finish(&[])?,
        None => Vec::new(),
    };
    let summary = match args.summary {
        SummaryFormat::Json => format!("{}\n", serde_json::to_string_pretty(&s)?),
        SummaryFormat::Text => format!(
            "{} ({} coordinates, {} Kirchhoff rows, {} capacitor loops)\n\
             {} {} steps of h = {} to t = {}\n\
             energy: initial {:.12e}, min {:.12e}, max {:.12e}, final {:.12e}\n\
             max Kirchhoff residual {:.3e}; Newton iterations {}, Jacobians {}\n\
             set-up {:.3} s, solve {:.3} s ({:.0} steps/s)\n",
            s.model,
            s.coordinates,
            s.kirchhoff_rows,
            s.capacitor_loops,
            s.direction,
            s.steps,
            s.h,
            s.t_final,
            s.energy_initial,
            s.energy_min,
            s.energy_max,
            s.energy_final,
            s.max_kirchhoff_residual,
            s.newton_iterations,
            s.jacobian_evaluations,
            s.setup_seconds,
            s.solve_seconds,
            s.steps_per_second
        ),
    };
    crate::signals::exit_if_interrupted();
    let committed = output::commit(staged)?;
    if let Some(status) = crate::signals::pending() {
        drop(committed);
        crate::signals::exit(status);
    }
    if !args.quiet || args.summary == SummaryFormat::Json {
        crate::emit(&summary)?;
    }
    committed.finish();
    Ok(())
}

fn read(path: &std::path::Path) -> Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    if file.metadata()?.is_dir() {
        bail!("it is a directory");
    }
    let mut bytes = Vec::new();
    file.take(MAX_NETLIST_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_NETLIST_BYTES {
        bail!("larger than {MAX_NETLIST_BYTES} bytes");
    }
    String::from_utf8(bytes).map_err(|_| anyhow!("not UTF-8 text"))
}
