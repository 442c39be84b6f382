//! `diracvi convergence`: errors against the reference solutions of
//! `diracvi_models::reference` for a ladder of step sizes, and the fitted
//! order (least-squares slope of `log error` against `log h`).

use crate::args::{ConvergenceArgs, SummaryFormat};
use crate::output::{RecordSink, RecordView};
use crate::run::{execute, resolve_scenario, step_count};
use anyhow::{Context, Result, bail};
use diracvi_models::Scenario;
use diracvi_models::reference::{
    BouncingParticle, LcCircuit, NonholonomicPendulumReference, PendulumReferenceParams,
    PendulumSolution,
};
use diracvi_run::RunPlan;
use serde::Serialize;
use std::f64::consts::TAU;

/// Models with a reference solution.
const AVAILABLE: [&str; 3] = ["lc", "particle", "pendulum"];

/// A reference solution and how the error is measured against it.
enum Reference {
    /// Closed form; error of `q^ℓ` at the end.
    Lc(LcCircuit),
    /// Closed form; largest position error `|q_k − q(t_k)|` over the run.
    Particle(BouncingParticle),
    /// 1-DOF Taylor reference with reflections; error of `θ` at the end
    /// (solved lazily for the end time).
    Pendulum(PendulumReferenceParams),
}

/// How errors of the recorded steps are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    /// Error at the last step.
    Final,
    /// Largest error over every step.
    Max,
}

fn param(scenario: &Scenario, key: &str) -> Result<f64> {
    scenario
        .parameters
        .get(key)
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
        .with_context(|| {
            format!(
                "model '{}' has no numeric parameter '{key}'",
                scenario.model
            )
        })
}

impl Reference {
    fn for_scenario(sc: &Scenario) -> Result<Self> {
        let (q, v) = (&sc.initial.q, &sc.initial.v);
        Ok(match sc.model.as_str() {
            "lc" => {
                if q.iter().any(|&x| x != 0.0) {
                    bail!("the lc reference solution needs q(0) = 0 (all charges zero)");
                }
                Reference::Lc(LcCircuit {
                    inductance: param(sc, "l")?,
                    c1: param(sc, "c1")?,
                    c2: param(sc, "c2")?,
                    c3: param(sc, "c3")?,
                    i0: v[0],
                })
            }
            "particle" => Reference::Particle(BouncingParticle {
                g: param(sc, "g")?,
                q0: [q[0], q[1]],
                v0: [v[0], v[1]],
            }),
            "pendulum" => Reference::Pendulum(PendulumReferenceParams {
                m: param(sc, "m")?,
                g: param(sc, "g")?,
                ell: param(sc, "l")?,
                radius: param(sc, "r")?,
                f0: param(sc, "f0")?,
                f2: param(sc, "f1")?,
                theta0: q[0],
                phi0: q[1],
                theta_dot0: v[0],
            }),
            other => bail!(
                "no reference solution for {other}; available: {}",
                AVAILABLE.join(", ")
            ),
        })
    }

    fn default_t_end(&self) -> f64 {
        match self {
            Reference::Lc(_) => 5.0 * TAU,
            Reference::Particle(_) => 10.0,
            Reference::Pendulum(_) => 5.0,
        }
    }

    fn default_h_list(&self) -> Vec<f64> {
        match self {
            Reference::Lc(_) => [20.0, 40.0, 80.0, 160.0].map(|n| TAU / n).to_vec(),
            Reference::Particle(_) => vec![1e-2, 5e-3, 2.5e-3, 1.25e-3],
            Reference::Pendulum(_) => vec![4e-3, 2e-3, 1e-3, 5e-4],
        }
    }

    fn measure(&self) -> Measure {
        match self {
            Reference::Particle(_) => Measure::Max,
            Reference::Lc(_) | Reference::Pendulum(_) => Measure::Final,
        }
    }

    fn describe(&self) -> &'static str {
        match self {
            Reference::Lc(_) => "|q_l(t_N) − q_l_ref(t_N)|, closed form",
            Reference::Particle(_) => "max_k |q_k − q_ref(t_k)|, closed form with reflections",
            Reference::Pendulum(_) => {
                "|θ(t_N) − θ_ref(t_N)|, 1-DOF Taylor-series reference with reflections"
            }
        }
    }
}

/// The reference, ready to evaluate.
enum Solved<'a> {
    Lc(&'a LcCircuit),
    Particle(&'a BouncingParticle),
    Pendulum(PendulumSolution),
}

impl Solved<'_> {
    fn error(&self, t: f64, q: &[f64]) -> f64 {
        match self {
            Solved::Lc(c) => (q[0] - c.charges_at(t)[0]).abs(),
            Solved::Particle(p) => {
                let (r, _) = p.state_at(t);
                (q[0] - r[0]).hypot(q[1] - r[1])
            }
            Solved::Pendulum(s) => (q[0] - s.theta_at(t)).abs(),
        }
    }
}

/// Accumulates the error of the recorded steps.
struct ErrorSink<'a> {
    reference: &'a Solved<'a>,
    measure: Measure,
    error: f64,
}

impl RecordSink for ErrorSink<'_> {
    fn record(&mut self, r: &RecordView<'_>) {
        let e = self.reference.error(r.t, r.q);
        self.error = match self.measure {
            Measure::Final => e,
            Measure::Max => {
                if e.is_nan() {
                    e
                } else {
                    self.error.max(e)
                }
            }
        };
    }
}

/// Least-squares slope of `log e` against `log h` over the positive, finite
/// errors (NaN with fewer than two).
pub fn fitted_order(h: &[f64], e: &[f64]) -> f64 {
    let points: Vec<(f64, f64)> = h
        .iter()
        .zip(e)
        .filter(|(h, e)| e.is_finite() && **e > 0.0 && h.is_finite() && **h > 0.0)
        .map(|(h, e)| (h.ln(), e.ln()))
        .collect();
    if points.len() < 2 {
        return f64::NAN;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    if sxx > 0.0 { sxy / sxx } else { f64::NAN }
}

#[derive(Debug, Serialize)]
struct ConvergenceJson<'a> {
    model: &'a str,
    measure: &'a str,
    t_end: f64,
    h: &'a [f64],
    steps: &'a [usize],
    error: &'a [f64],
    /// The method's order asked for (`--order`).
    method_order: u32,
    /// The method: the scenario's discretization (order 2) or the composition.
    method: &'a str,
    order: f64,
}

/// `diracvi convergence`.
pub fn convergence(args: &ConvergenceArgs) -> Result<()> {
    let mut scenario = resolve_scenario(Some(&args.model), None, &args.sets)?;
    let reference = Reference::for_scenario(&scenario)?;
    let t_end = args.t_end.unwrap_or_else(|| reference.default_t_end());
    if !(t_end.is_finite() && t_end > 0.0) {
        bail!("--t-end must be finite and > 0, got {t_end}");
    }
    let h_list = args
        .h_list
        .clone()
        .unwrap_or_else(|| reference.default_h_list());
    if h_list.len() < 2 {
        bail!("--h-list needs at least two step sizes to fit an order");
    }
    if let Some(h) = h_list.iter().find(|h| !(h.is_finite() && **h > 0.0)) {
        bail!("--h-list: h must be finite and > 0, got {h}");
    }
    for (i, a) in h_list.iter().enumerate() {
        if let Some(b) = h_list[..i]
            .iter()
            .find(|b| (a - *b).abs() <= 1e-12 * a.abs())
        {
            bail!("--h-list: the step sizes must differ to fit an order, got {b} and {a}");
        }
    }
    scenario
        .set("t_end", &t_end.to_string())
        .context("--t-end")?;
    let mut steps = Vec::with_capacity(h_list.len());
    for &h in &h_list {
        scenario.set("h", &h.to_string()).context("--h-list")?;
        let n = step_count(&scenario, None)?;
        if n == 0 {
            bail!("--h-list: h = {h} is more than twice t_end = {t_end} (no step to take)");
        }
        steps.push(n);
    }
    // The scenario's initial data are validated by the first run.
    let solved = match &reference {
        Reference::Lc(c) => Solved::Lc(c),
        Reference::Particle(p) => Solved::Particle(p),
        Reference::Pendulum(p) => {
            let t_max = h_list
                .iter()
                .zip(&steps)
                .map(|(h, n)| h * *n as f64)
                .fold(t_end, f64::max);
            crate::run::describe(&scenario)?;
            Solved::Pendulum(NonholonomicPendulumReference::new(*p).solve(t_max))
        }
    };
    let mut errors = Vec::with_capacity(h_list.len());
    let mut ran = None;
    for (&h, &n) in h_list.iter().zip(&steps) {
        scenario.set("h", &h.to_string()).context("--h-list")?;
        let mut sink = ErrorSink {
            reference: &solved,
            measure: reference.measure(),
            error: 0.0,
        };
        let plan = RunPlan::new(n)
            .order(args.order)
            .every(match reference.measure() {
                Measure::Final => n,
                Measure::Max => 1,
            });
        ran = Some(execute(&scenario, plan, true, &mut sink)?.method);
        errors.push(sink.error);
    }
    let order = fitted_order(&h_list, &errors);
    if !order.is_finite() {
        let shown: Vec<String> = errors.iter().map(|e| format!("{e:e}")).collect();
        return Err(anyhow::Error::new(crate::NumericalFailure(format!(
            "cannot fit an order: fewer than two step sizes give a positive, finite error (errors: {})",
            shown.join(", ")
        ))));
    }
    // What ran (the runs all ran the same method).
    let ran = ran.ok_or_else(|| anyhow::anyhow!("--h-list is empty"))?;
    let method = if ran.order.is_composed() {
        format!(
            "order {}: {} composition of the symmetric midpoint step",
            ran.order, ran.composition
        )
    } else {
        format!("{} discretization", ran.discretization)
    };
    match args.summary {
        SummaryFormat::Json => {
            let json = ConvergenceJson {
                model: &scenario.model,
                measure: reference.describe(),
                t_end,
                h: &h_list,
                steps: &steps,
                error: &errors,
                method_order: ran.order.get(),
                method: &method,
                order,
            };
            crate::emit(&format!("{}\n", serde_json::to_string(&json)?))?;
        }
        SummaryFormat::Text => {
            use std::fmt::Write as _;
            let mut s = String::new();
            let _ = writeln!(
                s,
                "convergence of {} ({method}), t_end = {t_end}",
                scenario.model
            );
            let _ = writeln!(s, "measure: {}", reference.describe());
            let _ = writeln!(s, "{:>14}  {:>8}  {:>14}", "h", "steps", "error");
            for ((h, n), e) in h_list.iter().zip(&steps).zip(&errors) {
                let _ = writeln!(s, "{h:>14.6e}  {n:>8}  {e:>14.6e}");
            }
            let _ = writeln!(
                s,
                "fitted order: {order:.3} (least-squares slope of log error against log h)"
            );
            crate::emit(&s)?;
        }
    }
    Ok(())
}
