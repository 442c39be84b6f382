//! Work-precision study (docs/theory.md §9): error against integration wall
//! time for diracvi's orders 2, 4 and 6 on the nonholonomic pendulum in the
//! cylinder and on the bouncing ellipse, both measured against the
//! independent references of `diracvi_models::reference`.
//!
//! ```text
//! cargo run --release -p diracvi-cli --example work_precision -- \
//!     --out docs/work-precision.svg --csv docs/work-precision.csv \
//!     [--scipy docs/work-precision-scipy.csv] [--repeats 7] [--quick]
//! ```
//!
//! * **pendulum** over `[0, 5]` (3 impacts): error = the worst of the first
//!   three impact times and `|θ(5) − θ_ref(5)|`, against the 30th-order
//!   Taylor reference with event location;
//! * **ellipse** over `[0, 3]` (3 impacts): error = the worst of the impact
//!   times and `max |q(3) − q_ref(3)|`, against the exact flights and
//!   root-found impact times of `RigidBodyReference::ellipse()`.
//!
//! Order 2 is the midpoint `L_d` with the midpoint constraint and the
//! discrete impact law of \[VCI\] Theorem 3.1 (`diracvi run … --discretization
//! midpoint --constraint midpoint`); orders 4 and 6 are the triple jump and
//! Kahan–Li compositions of the symmetric midpoint step with the continuous
//! elastic law (`--order 4|6`). Time is the wall time of the integration
//! alone (building the integrator, the reference and the error are outside
//! the clock), the best of several repeats. A table goes to stdout, the
//! points to the CSV, and a log-log picture (one panel per model) to the
//! SVG. If `--scipy FILE` names an existing CSV written by
//! `scripts/work_precision_scipy.py` (columns `model,method,tol,error,
//! time_s`), its points are drawn as an extra, labelled curve.

use anyhow::{Context, Result, anyhow, bail};
use diracvi_discrete_dirac::trajectory::OneStep;
use diracvi_discrete_dirac::{
    Composition, Direction, LagrangeDirac, RunOptions, State, integrate, state_from_velocity,
};
use diracvi_geometry::{ConstraintDiscretization, Discretization};
use diracvi_impact::{ComposedImpacts, ImpactEvent, ImpactIntegrator};
use diracvi_models::reference::{
    NonholonomicPendulumReference, PendulumReferenceParams, RigidBodyReference,
};
use diracvi_models::{Ellipse, Model, Pendulum};
use plotters::prelude::*;
use std::fmt::Display;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Pendulum horizon (s).
const PENDULUM_T: f64 = 5.0;
/// Ellipse horizon (s).
const ELLIPSE_T: f64 = 3.0;

/// One measured point.
#[derive(Debug, Clone)]
struct Point {
    model: &'static str,
    method: String,
    h: f64,
    error: f64,
    time: f64,
}

/// Command-line options.
struct Options {
    out: Option<PathBuf>,
    csv: Option<PathBuf>,
    scipy: Option<PathBuf>,
    repeats: usize,
    quick: bool,
}

fn parse_args() -> Result<Options> {
    let mut o = Options {
        out: None,
        csv: None,
        scipy: None,
        repeats: 7,
        quick: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| anyhow!("{name} needs a value"));
        match a.as_str() {
            "--out" => o.out = Some(value("--out")?.into()),
            "--csv" => o.csv = Some(value("--csv")?.into()),
            "--scipy" => o.scipy = Some(value("--scipy")?.into()),
            "--repeats" => {
                o.repeats = value("--repeats")?
                    .parse()
                    .context("--repeats: a positive integer")?;
                if o.repeats == 0 {
                    bail!("--repeats must be at least 1");
                }
            }
            "--quick" => o.quick = true,
            "-h" | "--help" => {
                println!(
                    "work_precision [--out FILE.svg] [--csv FILE.csv] [--scipy DOP853.csv] [--repeats N] [--quick]"
                );
                std::process::exit(0);
            }
            other => bail!("unknown argument '{other}' (see --help)"),
        }
    }
    Ok(o)
}

/// Run `make()`'s integrator `steps` steps of `h` from `start`, best wall
/// time of up to `repeats` runs (fewer when one run takes over a second).
fn timed<St, const N: usize>(
    make: impl Fn() -> St,
    start: State<N>,
    h: f64,
    steps: usize,
    repeats: usize,
) -> Result<(State<N>, Vec<ImpactEvent<N>>, f64)>
where
    St: OneStep<N, Event = ImpactEvent<N>>,
    St::Error: Display,
{
    let mut best = Duration::MAX;
    let mut total = Duration::ZERO;
    let mut out = None;
    for _ in 0..repeats {
        let mut integ = make();
        let t0 = Instant::now();
        let traj = integrate(
            &mut integ,
            start,
            h,
            RunOptions::new(steps).every(0),
            |_| {},
            |_| {},
        );
        let dt = t0.elapsed();
        let traj = traj.map_err(|e| anyhow!("h = {h}: {e}"))?;
        best = best.min(dt);
        total += dt;
        out = Some((traj.summary.final_state, traj.events));
        if total > Duration::from_secs(1) {
            break;
        }
    }
    let (end, events) = out.ok_or_else(|| anyhow!("no run"))?;
    Ok((end, events, best.as_secs_f64()))
}

/// Step counts `n` (h = T/n) from `n0` growing geometrically by `factor`
/// up to `n1`.
/// One timed run of `order`: the midpoint `L_d` and constraint with the
/// discrete law of \[VCI\] Theorem 3.1 (order 2), or `scheme` composed with
/// the continuous law (orders 4 and 6).
fn run_order<Mo, const N: usize, const M: usize>(
    model: &Mo,
    order: u32,
    scheme: Composition,
    s0: State<N>,
    h: f64,
    n: usize,
    repeats: usize,
) -> Result<(State<N>, Vec<ImpactEvent<N>>, f64)>
where
    Mo: Model<N, M>,
{
    let (disc, constraint) = (Discretization::Midpoint, ConstraintDiscretization::Midpoint);
    if order == 2 {
        timed(
            || {
                ImpactIntegrator::new(LagrangeDirac::new(
                    model.clone(),
                    disc,
                    constraint,
                    Direction::Forward,
                ))
            },
            s0,
            h,
            n,
            repeats,
        )
    } else {
        timed(
            || {
                ComposedImpacts::composed(
                    model.clone(),
                    disc,
                    constraint,
                    Direction::Forward,
                    scheme,
                )
            },
            s0,
            h,
            n,
            repeats,
        )
    }
}

fn ladder(n0: f64, n1: f64, factor: f64) -> Vec<usize> {
    let mut v = vec![];
    let mut n = n0;
    while n <= n1 * 1.0001 {
        let k = n.round() as usize;
        if v.last() != Some(&k) {
            v.push(k);
        }
        n *= factor;
    }
    v
}

/// The label of an order.
fn method(order: u32) -> String {
    match order {
        2 => "order 2 (midpoint + [VCI] law)".into(),
        4 => "order 4 (triple jump)".into(),
        _ => "order 6 (Kahan–Li)".into(),
    }
}

/// The step-count ladders per order: (first n, last n).
fn ladders(model: &str, order: u32, quick: bool) -> Vec<usize> {
    let f = if quick { 2.0 } else { 1.5 };
    match (model, order) {
        ("pendulum", 2) => ladder(100.0, if quick { 2e4 } else { 4e5 }, f),
        ("pendulum", 4) => ladder(100.0, if quick { 2e3 } else { 1e4 }, f),
        ("pendulum", _) => ladder(100.0, if quick { 1e3 } else { 2e3 }, f),
        ("ellipse", 2) => ladder(30.0, if quick { 1e4 } else { 3e5 }, f),
        (_, _) => ladder(30.0, if quick { 1e3 } else { 3e3 }, f),
    }
}

/// The points of `name` at orders 2, 4, 6 over its ladder of steps up to
/// `t_end`: `error` of each run's end state and impacts (a run that fails
/// is reported and skipped).
#[allow(clippy::too_many_arguments)]
fn model_points<Mo, const N: usize, const M: usize>(
    name: &'static str,
    model: &Mo,
    s0: State<N>,
    t_end: f64,
    o: &Options,
    points: &mut Vec<Point>,
    error: impl Fn(&State<N>, &[ImpactEvent<N>]) -> f64,
) -> Result<()>
where
    Mo: Model<N, M>,
{
    for order in [2u32, 4, 6] {
        let scheme = Composition::for_order(order).ok_or_else(|| anyhow!("order {order}"))?;
        for n in ladders(name, order, o.quick) {
            let h = t_end / n as f64;
            match run_order(model, order, scheme, s0, h, n, o.repeats) {
                Ok((end, events, time)) => points.push(Point {
                    model: name,
                    method: method(order),
                    h,
                    error: error(&end, &events),
                    time,
                }),
                Err(e) => eprintln!("skipped: order {order}: {e}"),
            }
        }
    }
    Ok(())
}

fn pendulum_points(o: &Options, points: &mut Vec<Point>) -> Result<()> {
    let model = Pendulum::new(Default::default())?;
    let setup = model.run_defaults();
    let reference =
        NonholonomicPendulumReference::new(PendulumReferenceParams::default()).solve(PENDULUM_T);
    let s0 = state_from_velocity(&model, 0.0, &setup.q0, &setup.v0)?;
    eprintln!(
        "pendulum reference: impact times {:?}, θ(5) = {:?}",
        reference.impact_times(),
        reference.theta_at(PENDULUM_T)
    );
    model_points(
        "pendulum",
        &model,
        s0,
        PENDULUM_T,
        o,
        points,
        |end, events| {
            if events.len() < 3 {
                f64::INFINITY
            } else {
                events
                    .iter()
                    .zip(reference.impact_times())
                    .take(3)
                    .map(|(e, t)| (e.t - t).abs())
                    .fold((end.q[0] - reference.theta_at(end.t)).abs(), f64::max)
            }
        },
    )
}

fn ellipse_points(o: &Options, points: &mut Vec<Point>) -> Result<()> {
    let model = Ellipse::new(Default::default())?;
    let setup = model.run_defaults();
    let reference = RigidBodyReference::ellipse().trajectory(ELLIPSE_T);
    let s0 = state_from_velocity(&model, 0.0, &setup.q0, &setup.v0)?;
    let (q_ref, _) = reference.state_at(ELLIPSE_T);
    eprintln!(
        "ellipse reference: impact times {:?}, q(3) = {q_ref:?}",
        reference.impacts().iter().map(|i| i.t).collect::<Vec<_>>()
    );
    model_points(
        "ellipse",
        &model,
        s0,
        ELLIPSE_T,
        o,
        points,
        |end, events| {
            if events.len() != reference.impacts().len() {
                f64::INFINITY
            } else {
                events
                    .iter()
                    .zip(reference.impacts())
                    .map(|(e, r)| (e.t - r.t).abs())
                    .fold(
                        end.q
                            .iter()
                            .zip(q_ref)
                            .map(|(a, b)| (a - b).abs())
                            .fold(0.0, f64::max),
                        f64::max,
                    )
            }
        },
    )
}

/// Points of the SciPy CSV (`model,method,tol,error,time_s`).
fn read_scipy(path: &PathBuf) -> Result<Vec<Point>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let mut out = vec![];
    for (i, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 5 {
            bail!("{}:{}: expected 5 fields", path.display(), i + 1);
        }
        let num = |s: &str| -> Result<f64> {
            s.trim()
                .parse()
                .with_context(|| format!("{}:{}: '{s}'", path.display(), i + 1))
        };
        let model = match f[0].trim() {
            "pendulum" => "pendulum",
            "ellipse" => "ellipse",
            other => bail!("{}:{}: unknown model '{other}'", path.display(), i + 1),
        };
        out.push(Point {
            model,
            method: f[1].trim().to_string(),
            h: num(f[2])?,
            error: num(f[3])?,
            time: num(f[4])?,
        });
    }
    Ok(out)
}

const COLORS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
];

fn plot(path: &PathBuf, points: &[Point]) -> Result<()> {
    let err = |e: &dyn Display| anyhow!("plot: {e}");
    let root = SVGBackend::new(path, (1300, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let panels = root.split_evenly((1, 2));
    for (area, model) in panels.iter().zip(["pendulum", "ellipse"]) {
        let pts: Vec<&Point> = points
            .iter()
            .filter(|p| p.model == model && p.error.is_finite() && p.error > 0.0)
            .collect();
        if pts.is_empty() {
            continue;
        }
        let (tmin, tmax) = pts.iter().fold((f64::MAX, 0.0f64), |(a, b), p| {
            (a.min(p.time), b.max(p.time))
        });
        let (emin, emax) = pts.iter().fold((f64::MAX, 0.0f64), |(a, b), p| {
            (a.min(p.error), b.max(p.error))
        });
        let title = match model {
            "pendulum" => "pendulum in the cylinder, [0, 5], 3 impacts",
            _ => "bouncing ellipse, [0, 3], 3 impacts",
        };
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 20))
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (tmin / 2.0..tmax * 2.0).log_scale(),
                (emin / 3.0..emax * 3.0).log_scale(),
            )
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("integration wall time (s)")
            .y_desc("error (impact times, final state)")
            .x_label_formatter(&|x| format!("{x:.0e}"))
            .y_label_formatter(&|y| format!("{y:.0e}"))
            .draw()
            .map_err(|e| err(&e))?;
        let mut methods: Vec<&str> = vec![];
        for p in &pts {
            if !methods.contains(&p.method.as_str()) {
                methods.push(&p.method);
            }
        }
        for (i, m) in methods.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let mut line: Vec<(f64, f64)> = pts
                .iter()
                .filter(|p| p.method == *m)
                .map(|p| (p.time, p.error))
                .collect();
            line.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(*m)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(line.into_iter().map(|c| Circle::new(c, 3, color.filled())))
                .map_err(|e| err(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

fn main() -> Result<()> {
    let o = parse_args()?;
    let mut points = vec![];
    pendulum_points(&o, &mut points)?;
    ellipse_points(&o, &mut points)?;
    println!(
        "{:<9} {:<32} {:>11} {:>11} {:>11}",
        "model", "method", "h / tol", "error", "time (s)"
    );
    for p in &points {
        println!(
            "{:<9} {:<32} {:>11.4e} {:>11.3e} {:>11.3e}",
            p.model, p.method, p.h, p.error, p.time
        );
    }
    if let Some(csv) = &o.csv {
        let mut text = String::from("model,method,h,error,time_s\n");
        for p in &points {
            text += &format!(
                "{},{},{:e},{:e},{:e}\n",
                p.model, p.method, p.h, p.error, p.time
            );
        }
        std::fs::write(csv, text).with_context(|| format!("{}", csv.display()))?;
    }
    if let Some(path) = &o.scipy {
        if path.exists() {
            let scipy = read_scipy(path)?;
            for p in &scipy {
                println!(
                    "{:<9} {:<32} {:>11.1e} {:>11.3e} {:>11.3e}",
                    p.model, p.method, p.h, p.error, p.time
                );
            }
            points.extend(scipy);
        } else {
            eprintln!("{} not found: no SciPy curve", path.display());
        }
    }
    if let Some(out) = &o.out {
        plot(out, &points)?;
        eprintln!("wrote {}", out.display());
    }
    Ok(())
}
