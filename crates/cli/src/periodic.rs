//! `diracvi periodic`: a periodic orbit by Newton shooting with the exact
//! tangent map (docs/theory.md §14), its Floquet multipliers and stability,
//! and `--continue PARAM=a:b:n` (natural-parameter continuation with a
//! branch table). The numerics are `diracvi_run::periodic_orbit` and
//! `diracvi_run::continue_orbit`, shared with Python.

use crate::NumericalFailure;
use crate::args::{PeriodicArgs, SummaryFormat};
use crate::run::{apply_method_options, apply_sets, resolve_scenario};
use anyhow::{Result, anyhow, bail};
use diracvi_models::Scenario;
use diracvi_run::{
    Branch, PeriodicError, PeriodicOptions, PeriodicOrbit, Section, continue_orbit,
    parameter_values, periodic_orbit, section_piece,
};
use std::path::Path;

/// A periodic-orbit error as the CLI reports it: numerical failures exit
/// with 1, input errors with 2.
fn cli_error(e: PeriodicError) -> anyhow::Error {
    if e.is_numerical() {
        anyhow::Error::new(NumericalFailure(e.to_string()))
    } else {
        anyhow!("{e}")
    }
}

/// `--continue PARAM=a:b:n`.
fn parse_continuation(text: &str) -> Result<(String, Vec<f64>)> {
    let bad = || {
        anyhow!(
            "--continue '{text}': expected PARAM=a:b:n (a model parameter, the first and last \
             value, the number of values n >= 2), e.g. a=0.4:0.6:21"
        )
    };
    let (name, range) = text.split_once('=').ok_or_else(bad)?;
    let parts: Vec<&str> = range.split(':').collect();
    let [a, b, n] = parts.as_slice() else {
        return Err(bad());
    };
    let a: f64 = a.trim().parse().map_err(|_| bad())?;
    let b: f64 = b.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if !(a.is_finite() && b.is_finite() && (2..=100_000).contains(&n)) {
        return Err(bad());
    }
    Ok((name.trim().to_owned(), parameter_values(a, b, n)))
}

/// `diracvi periodic`.
pub fn periodic(args: &PeriodicArgs) -> Result<()> {
    let continuation = args
        .continue_
        .as_deref()
        .map(parse_continuation)
        .transpose()?;
    if let Some(out) = &args.out {
        let ext = out.extension().and_then(|e| e.to_str());
        if !matches!(ext, Some("csv" | "json")) {
            bail!(
                "--out '{}': the branch table is written as .csv or .json",
                out.display()
            );
        }
        if continuation.is_none() {
            bail!("--out writes the branch table of --continue PARAM=a:b:n");
        }
    }
    let mut scenario = match &args.model_file {
        Some(path) => apply_sets(Scenario::from_model_file(path)?, &args.sets)?,
        None => resolve_scenario(args.model.as_deref(), args.scenario.as_deref(), &args.sets)?,
    };
    apply_method_options(
        &mut scenario,
        args.h,
        None,
        args.t_end,
        args.discretization,
        args.constraint,
    )?;
    let section = match (&args.section, args.period, args.steps) {
        (Some(piece), _, _) => Section::Impact {
            piece: section_piece(&scenario, piece).map_err(cli_error)?,
            count: args.impact,
        },
        (None, Some(t), _) => {
            if !(t.is_finite() && t > 0.0) {
                bail!("--period must be a finite time > 0, got {t}");
            }
            Section::Steps(Some(((t / scenario.h).round() as usize).max(1)))
        }
        (None, None, Some(n)) => Section::Steps(Some(n)),
        (None, None, None) => Section::Steps(None),
    };
    let mut options = PeriodicOptions::new(section);
    options.tolerance = args.tolerance;
    options.max_iterations = args.max_iterations;
    let h = scenario.h;
    match continuation {
        None => {
            let orbit = periodic_orbit(&scenario, &options, None).map_err(cli_error)?;
            let text = match args.summary {
                SummaryFormat::Json => format!("{:#}\n", orbit.to_json(h)),
                SummaryFormat::Text if args.quiet => String::new(),
                SummaryFormat::Text => orbit_text(&orbit, h),
            };
            crate::emit(&text)
        }
        Some((name, values)) => {
            let branch =
                continue_orbit(&scenario, &name, &values, &options, None).map_err(cli_error)?;
            if let Some(out) = &args.out {
                write_branch(out, &branch, h)?;
            }
            let text = match args.summary {
                SummaryFormat::Json => format!("{:#}\n", branch.to_json(h)),
                SummaryFormat::Text if args.quiet => String::new(),
                SummaryFormat::Text => branch_text(&branch),
            };
            crate::emit(&text)
        }
    }
}

/// Write the branch table (CSV or JSON by extension) through a temporary
/// file renamed into place.
fn write_branch(path: &Path, branch: &Branch, h: f64) -> Result<()> {
    let text = match path.extension().and_then(|e| e.to_str()) {
        Some("json") => format!("{:#}\n", branch.to_json(h)),
        _ => branch.to_csv(),
    };
    let tmp = path.with_extension("periodic-tmp");
    let failed = |e: std::io::Error| {
        anyhow::Error::new(crate::OutputFailure(format!(
            "cannot write '{}': {e}",
            path.display()
        )))
    };
    std::fs::write(&tmp, text).map_err(failed)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        failed(e)
    })
}

fn vector(xs: &[f64]) -> String {
    let items: Vec<String> = xs.iter().map(|x| format!("{x:.12}")).collect();
    format!("[{}]", items.join(", "))
}

fn orbit_text(o: &PeriodicOrbit, h: f64) -> String {
    let mut s = String::new();
    let closes = match o.section {
        Section::Impact { piece, count } => format!(
            "section: post-impact state at impact {count} with piece {piece} ({})",
            o.piece_name.as_deref().unwrap_or("")
        ),
        Section::Steps(steps) => format!(
            "closes after {} steps of h = {h} (the flow map Φ^N)",
            steps.unwrap_or(o.steps)
        ),
    };
    s.push_str(&format!("model: {}\n{closes}\n", o.model));
    s.push_str(&format!(
        "converged: residual {:.3e} after {} Newton iterations\n",
        o.residual, o.iterations
    ));
    s.push_str(&format!(
        "period: {:.12} s ({} steps begun, {} impacts)\nenergy: {:.12}\n",
        o.period, o.steps, o.impacts, o.energy
    ));
    s.push_str(&format!("coordinates: {}\n", o.coordinates.join(", ")));
    s.push_str(&format!(
        "fixed point: q = {}\n             p = {}\n             v = {}\n",
        vector(&o.q),
        vector(&o.p),
        vector(&o.v)
    ));
    s.push_str("multipliers:\n");
    for m in &o.multipliers {
        s.push_str(&format!(
            "  {:>+.9e} {:>+.9e}i  |λ| = {:.9e}  {}\n",
            m.re,
            m.im,
            m.modulus,
            m.kind.label()
        ));
    }
    s.push_str(&format!(
        "reciprocal pairs (nontrivial): max |λμ − 1| = {:.2e}\n",
        o.reciprocity_defect
    ));
    s.push_str(&format!(
        "stability: {} (largest nontrivial |λ| = {:.9})\n",
        o.stability, o.max_modulus
    ));
    s
}

fn branch_text(b: &Branch) -> String {
    let mut s = format!(
        "{:>14} {:>14} {:>10} {:>9} {:>16}\n",
        b.parameter, "period", "residual", "stability", "max |λ| (nontriv.)"
    );
    for p in &b.points {
        s.push_str(&format!(
            "{:>14.6e} {:>14.9} {:>10.2e} {:>9} {:>16.9}\n",
            p.value, p.orbit.period, p.orbit.residual, p.orbit.stability, p.orbit.max_modulus
        ));
    }
    for c in &b.changes {
        s.push_str(&format!(
            "stability changes from {} to {} between {} = {:.6e} and {:.6e} (estimate {:.6e})\n",
            c.from, c.to, b.parameter, c.from_value, c.to_value, c.estimate
        ));
    }
    if b.changes.is_empty() {
        s.push_str("stability does not change along the branch\n");
    }
    if let Some((value, e)) = &b.stopped {
        s.push_str(&format!("stopped at {} = {value:e}: {e}\n", b.parameter));
    }
    s
}
