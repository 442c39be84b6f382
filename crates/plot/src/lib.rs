//! # diracvi-plot
//!
//! The figure of `diracvi run --plot FILE.svg`, for any model: a grid of
//! panels drawn with plotters' SVG backend (text as SVG `<text>` elements:
//! no font files needed). The command-line program draws it for the
//! catalogue, model files, systems and netlists; a model in a crate of its
//! own gets the same figure (examples/own-model):
//!
//! 1. [`PlotSpec::resolve`] the panels for the run's [`ModelSummary`];
//! 2. pass a [`PlotCollector`] as (one of) the run's [`RecordSink`]s;
//! 3. [`render`] it with the run's outcome ([`PlotInfo`]) into SVG text.
//!
//! The moving picture of `--animate` and the still strip of `--poster` are
//! in [`animate`]: an [`AnimationCollector`] records the run's frames and
//! [`render_animation`] draws them from the model's [`Drawing`].
//!
//! Which panels `--plot-panels` selects ([`PlotPanel`]); in this order:
//!
//! * `energy`: the energy deviation `E − E₀` against time;
//! * `coords`: one panel per coordinate against time (at most
//!   [`MAX_COORDINATES`], evenly spread over a larger system, named in the
//!   figure's title and on stderr);
//! * `momenta`: one panel per momentum `p_<name>` against time (same
//!   coordinates);
//! * `residual`: `log₁₀` of the constraint residual against time;
//! * `xy`: the path of the coordinates named `x` and `y` in their plane,
//!   with the walls and the impact points, at equal scales on both axes. The
//!   walls are those [`PlotInfo::walls`] gives for the box around the path
//!   (the command line: those `--animate` draws, `Scenario::walls_around`:
//!   a catalogued model's drawing; for a model file its `[[drawing.walls]]`
//!   shapes and the zero sets of its boundary pieces over `x` and `y` only,
//!   those `[drawing] boundaries` lists, every such piece without the key);
//! * `phase`: one phase portrait `(q_i, p_i)` per coordinate drawn.
//!
//! Every time panel has `t (s)` on its x axis, the quantity's name on its y
//! axis and a vertical line at every impact. Tick labels are rounded to the
//! axis's resolution, a tick within `1e-9` of the axis width of zero is
//! written `0`, and a series that does not vary beyond round-off is drawn
//! flat in the middle of a symmetric range.

pub mod animate;
mod raster;

pub use animate::{Animation, AnimationCollector, Drawing, PosterFormat, render_animation};
use diracvi_models::Shape;
use diracvi_run::{ImpactRecord, ModelSummary, RecordSink, RecordView};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::ops::Range;

/// Why a figure cannot be drawn.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    /// A panel asked for that the model cannot have (`xy` without
    /// coordinates `x` and `y`, `residual` without constraints): a usage
    /// error, found before the run.
    #[error("{0}")]
    Panel(String),
    /// The walls of the x–y panel could not be worked out.
    #[error("the walls of the x–y panel: {0}")]
    Walls(String),
    /// The drawing backend failed.
    #[error("cannot draw the plot: {0}")]
    Draw(String),
    /// The animation or poster could not be drawn ([`render_animation`]).
    #[error("cannot draw the animation: {0}")]
    Animation(String),
}

type Result<T> = std::result::Result<T, PlotError>;

/// The walls of the x–y panel around the points given (the path and the
/// impact points), or why they cannot be worked out.
pub type WallsAround<'a> = dyn Fn(&[[f64; 2]]) -> std::result::Result<Vec<Shape>, String> + 'a;

/// No walls: for [`PlotInfo::walls`] of a model that draws none.
pub fn no_walls(_: &[[f64; 2]]) -> std::result::Result<Vec<Shape>, String> {
    Ok(Vec::new())
}

/// A panel kind of `--plot-panels`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum PlotPanel {
    /// The energy deviation E − E₀ against time.
    Energy,
    /// One panel per coordinate against time.
    Coords,
    /// One panel per momentum (p_x, p_theta, …) against time.
    Momenta,
    /// log₁₀ of the constraint residual against time (constrained models).
    Residual,
    /// The path in the plane of the coordinates x and y, with the walls.
    Xy,
    /// One phase portrait (q, p) per coordinate.
    Phase,
}
/// Points per curve above which the records are decimated.
const MAX_POINTS: usize = 4000;
/// Most coordinates drawn: a larger system (a chain, a ladder of a million
/// cells) shows this many, evenly spread over its coordinates (first and
/// last included), and the figure's title names them.
pub const MAX_COORDINATES: usize = 9;
/// Curve colour.
const CURVE: RGBColor = RGBColor(31, 119, 180);
/// Colour of the impact lines and points (`#D62728`).
pub const IMPACT: RGBColor = RGBColor(214, 39, 40);
/// Colour of the walls in the x–y panel (`#604020`).
pub const WALL: RGBColor = RGBColor(96, 64, 32);
/// Colour of the start point in the x–y panel.
const START: RGBColor = RGBColor(44, 160, 44);
/// Width of the picture (px).
const WIDTH: u32 = 1200;
/// Height of one row of panels (px).
const ROW_HEIGHT: u32 = 300;
/// Height of the title above the panels (px).
const HEADER: u32 = 60;
/// Font sizes (plotters units; the SVG says `size / 1.24` px).
const TITLE_FONT: u32 = 22;
const CAPTION_FONT: u32 = 18;
const DESC_FONT: u32 = 17;
const TICK_FONT: u32 = 15;
/// Label areas and margin of a panel (px).
const X_LABEL_AREA: u32 = 48;
const Y_LABEL_AREA: u32 = 90;
const MARGIN: u32 = 10;
/// Largest magnitude an axis shows; values beyond are drawn clipped. The
/// axis code of plotters loops forever on a range whose width overflows.
const AXIS_LIMIT: f64 = 1e300;

/// What a plot will show, settled before the run.
#[derive(Debug, Clone)]
pub struct PlotSpec {
    /// The panels, in drawing order, each kind once.
    pub panels: Vec<PlotPanel>,
    /// Indices of the coordinates drawn.
    pub shown: Vec<usize>,
    /// Number of coordinates of the system.
    pub total: usize,
    /// Indices of the coordinates `x` and `y`, when the `xy` panel is drawn.
    pub xy: Option<(usize, usize)>,
}

/// The default panels: `energy`, `coords` and (for a model with
/// coordinates named `x` and `y`) `xy`.
pub const DEFAULT_PANELS: [PlotPanel; 3] = [PlotPanel::Energy, PlotPanel::Coords, PlotPanel::Xy];

/// The drawing order of the panels.
const ORDER: [PlotPanel; 6] = [
    PlotPanel::Energy,
    PlotPanel::Coords,
    PlotPanel::Momenta,
    PlotPanel::Residual,
    PlotPanel::Xy,
    PlotPanel::Phase,
];

impl PlotSpec {
    /// Settle the panels of `--plot-panels` (`None`: [`DEFAULT_PANELS`])
    /// for a model.
    ///
    /// # Errors
    /// A usage error for a panel asked for explicitly that the model cannot
    /// have: `xy` without coordinates named `x` and `y`, `residual` without
    /// constraints.
    pub fn resolve(
        requested: Option<&[PlotPanel]>,
        model: &str,
        info: &ModelSummary,
    ) -> Result<Self> {
        let names = &info.coordinates;
        let position = |name: &str| names.iter().position(|c| c == name);
        let xy = position("x").zip(position("y"));
        let panels: Vec<PlotPanel> = match requested {
            None => ORDER
                .into_iter()
                .filter(|p| DEFAULT_PANELS.contains(p) && (*p != PlotPanel::Xy || xy.is_some()))
                .collect(),
            Some(asked) => {
                if asked.contains(&PlotPanel::Xy) && xy.is_none() {
                    return Err(PlotError::Panel(format!(
                        "--plot-panels xy: model '{model}' has no coordinates named x and y (its coordinates: {})",
                        shorten(names)
                    )));
                }
                if asked.contains(&PlotPanel::Residual) && info.constraints == 0 {
                    return Err(PlotError::Panel(format!(
                        "--plot-panels residual: model '{model}' has no constraints, so no constraint residual"
                    )));
                }
                ORDER.into_iter().filter(|p| asked.contains(p)).collect()
            }
        };
        Ok(Self {
            xy: xy.filter(|_| panels.contains(&PlotPanel::Xy)),
            panels,
            shown: shown_coordinates(names.len()),
            total: names.len(),
        })
    }

    /// Whether the plot draws panel `p`.
    fn has(&self, p: PlotPanel) -> bool {
        self.panels.contains(&p)
    }

    /// The note for stderr when not every coordinate is drawn.
    pub fn note(&self, coordinates: &[String]) -> Option<String> {
        (self.has_coordinate_panels() && self.shown.len() < self.total).then(|| {
            format!(
                "note: --plot draws {} of {} coordinates: {}",
                self.shown.len(),
                self.total,
                shown_names(&self.shown, coordinates)
            )
        })
    }

    fn has_coordinate_panels(&self) -> bool {
        self.has(PlotPanel::Coords) || self.has(PlotPanel::Momenta) || self.has(PlotPanel::Phase)
    }
}

/// A list of names for a message, the middle elided when long.
fn shorten(names: &[String]) -> String {
    if names.len() <= 8 {
        names.join(", ")
    } else {
        format!(
            "{}, …, {} ({} in all)",
            names[..4].join(", "),
            names[names.len() - 2..].join(", "),
            names.len()
        )
    }
}

/// The names of the coordinates `shown`.
fn shown_names(shown: &[usize], coordinates: &[String]) -> String {
    shown
        .iter()
        .map(|&i| name_of(coordinates, i))
        .collect::<Vec<_>>()
        .join(", ")
}

fn name_of(coordinates: &[String], i: usize) -> String {
    coordinates
        .get(i)
        .cloned()
        .unwrap_or_else(|| format!("q{i}"))
}

/// The coordinates drawn of `n`: all up to [`MAX_COORDINATES`], else that
/// many evenly spread, first and last included.
fn shown_coordinates(n: usize) -> Vec<usize> {
    if n <= MAX_COORDINATES {
        return (0..n).collect();
    }
    (0..MAX_COORDINATES)
        .map(|i| i * (n - 1) / (MAX_COORDINATES - 1))
        .collect()
}

/// Collects (decimated) records for the plot: every `stride`-th record for
/// the coordinates and momenta, the minimum and maximum of each `stride`
/// records for the energy (so no spike is lost), the largest residual of
/// each `stride` records, and always the last record. Memory stays bounded
/// (about `3 MAX_POINTS` points per curve) however many steps the run takes.
#[derive(Debug)]
pub struct PlotCollector {
    stride: usize,
    /// Indices of the coordinates recorded (those drawn, and `x`, `y`).
    tracked: Vec<usize>,
    /// Whether the momenta of the tracked coordinates are recorded.
    momenta: bool,
    count: usize,
    t: Vec<f64>,
    q: Vec<Vec<f64>>,
    p: Vec<Vec<f64>>,
    residual: Vec<f64>,
    residual_max: f64,
    energy: Vec<(f64, f64)>,
    bucket: Bucket,
    last: Option<(f64, Vec<f64>, Vec<f64>)>,
}

/// The first, lowest and highest finite energy of the current `stride`
/// records, with their positions in the bucket.
#[derive(Debug, Default)]
struct Bucket {
    len: usize,
    first: Option<(f64, f64)>,
    lo: Option<(usize, (f64, f64))>,
    hi: Option<(usize, (f64, f64))>,
}

impl Bucket {
    fn push(&mut self, p: (f64, f64)) {
        if self.first.is_none() {
            self.first = Some(p);
        }
        if p.1.is_finite() {
            if self.lo.is_none_or(|(_, l)| p.1 < l.1) {
                self.lo = Some((self.len, p));
            }
            if self.hi.is_none_or(|(_, h)| p.1 > h.1) {
                self.hi = Some((self.len, p));
            }
        }
        self.len += 1;
    }
}

impl PlotCollector {
    /// A collector expecting about `expected` records, for the plot `spec`.
    pub fn new(expected: usize, spec: &PlotSpec) -> Self {
        let mut tracked = spec.shown.clone();
        if let Some((x, y)) = spec.xy {
            tracked.extend([x, y]);
        }
        tracked.sort_unstable();
        tracked.dedup();
        let momenta = spec.has(PlotPanel::Momenta) || spec.has(PlotPanel::Phase);
        Self {
            stride: expected.div_ceil(MAX_POINTS).max(1),
            q: vec![Vec::new(); tracked.len()],
            p: vec![Vec::new(); if momenta { tracked.len() } else { 0 }],
            tracked,
            momenta,
            count: 0,
            t: Vec::new(),
            residual: Vec::new(),
            residual_max: 0.0,
            energy: Vec::new(),
            bucket: Bucket::default(),
            last: None,
        }
    }

    fn flush_bucket(&mut self) {
        let b = std::mem::take(&mut self.bucket);
        match (b.lo, b.hi) {
            (Some((i, lo)), Some((j, hi))) => {
                let (a, b) = if i <= j { (lo, hi) } else { (hi, lo) };
                self.energy.push(a);
                if i != j {
                    self.energy.push(b);
                }
            }
            _ => self.energy.extend(b.first),
        }
    }

    fn push(&mut self, t: f64, q: &[f64], p: &[f64]) {
        self.t.push(t);
        for (c, &x) in self.q.iter_mut().zip(q) {
            c.push(x);
        }
        for (c, &x) in self.p.iter_mut().zip(p) {
            c.push(x);
        }
        self.residual.push(self.residual_max);
        self.residual_max = 0.0;
    }

    fn finish(&mut self) {
        if self.bucket.len > 0 {
            self.flush_bucket();
        }
        if let Some((t, q, p)) = self.last.take() {
            self.push(t, &q, &p);
        }
    }

    /// The recorded series of coordinate `i` (`q` or, with `momentum`, `p`).
    fn series(&self, i: usize, momentum: bool) -> &[f64] {
        let k = self
            .tracked
            .iter()
            .position(|&j| j == i)
            .expect("a drawn coordinate is tracked");
        if momentum { &self.p[k] } else { &self.q[k] }
    }
}

impl RecordSink for PlotCollector {
    fn record(&mut self, r: &RecordView<'_>) {
        let res = r.constraint_residual.abs();
        if res > self.residual_max || res.is_nan() {
            self.residual_max = res;
        }
        // The held-back record's buffers, reused (no allocation per step).
        let (mut q, mut p) = match self.last.take() {
            Some((_, q, p)) => (q, p),
            None => (Vec::new(), Vec::new()),
        };
        q.clear();
        q.extend(self.tracked.iter().map(|&i| r.q[i]));
        p.clear();
        if self.momenta {
            p.extend(self.tracked.iter().map(|&i| r.p[i]));
        }
        if self.count.is_multiple_of(self.stride) {
            self.push(r.t, &q, &p);
        } else {
            self.last = Some((r.t, q, p));
        }
        self.bucket.push((r.t, r.energy));
        if self.bucket.len == self.stride {
            self.flush_bucket();
        }
        self.count += 1;
    }
}

/// What the plot shows besides the records.
pub struct PlotInfo<'a> {
    /// The model's name (the title).
    pub model: &'a str,
    /// The walls of the x–y panel around the points given ([`no_walls`]
    /// for none).
    pub walls: &'a WallsAround<'a>,
    /// Coordinate names (axis labels).
    pub coordinates: &'a [String],
    /// The impacts.
    pub impacts: &'a [ImpactRecord],
    /// Reference energy `E₀` (energy of the first step).
    pub e0: f64,
    /// The run's energy scale (what a deviation is measured against).
    pub energy_scale: f64,
    /// Number of steps taken.
    pub steps: usize,
}

impl std::fmt::Debug for PlotInfo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlotInfo")
            .field("model", &self.model)
            .field("coordinates", &self.coordinates)
            .field("impacts", &self.impacts.len())
            .field("e0", &self.e0)
            .field("energy_scale", &self.energy_scale)
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

/// How an axis treats a series that does not vary: below `1e-9` of
/// `max(|values|, reference)` the series is flat, drawn at its middle
/// (snapped to 0 within `1e-9 reference`) in a range of half-width
/// `max(0.1 |middle|, zero_half)`.
#[derive(Debug, Clone, Copy)]
struct Flat {
    reference: f64,
    zero_half: f64,
}

/// Coordinates and momenta: variations below `1e-12` are flat, a flat
/// series at 0 gets the range `−1..1`.
const FLAT_COORDINATE: Flat = Flat {
    reference: 1e-3,
    zero_half: 1.0,
};

/// An axis range: `lo..hi` covering the finite values, padded by 5 %, never
/// empty, never wider than `±AXIS_LIMIT` (the flag says whether values were
/// clamped); a series varying by less than its resolution ([`Flat`]) gets a
/// symmetric range about its middle.
fn axis_range(values: impl Iterator<Item = f64>, flat: Flat) -> (Range<f64>, bool) {
    let (lo, hi) = values
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    if lo > hi {
        return (-flat.zero_half..flat.zero_half, false);
    }
    let clamped = lo < -AXIS_LIMIT || hi > AXIS_LIMIT;
    let (lo, hi) = (
        lo.clamp(-AXIS_LIMIT, AXIS_LIMIT),
        hi.clamp(-AXIS_LIMIT, AXIS_LIMIT),
    );
    let magnitude = lo.abs().max(hi.abs());
    let span = hi - lo;
    if span > 1e-9 * magnitude.max(flat.reference) {
        let pad = 0.05 * span;
        ((lo - pad)..(hi + pad), clamped)
    } else {
        let mut mid = 0.5 * lo + 0.5 * hi;
        if mid.abs() <= 1e-9 * flat.reference {
            mid = 0.0;
        }
        let half = (0.1 * mid.abs()).max(flat.zero_half);
        ((mid - half)..(mid + half), clamped)
    }
}

/// A tick label: `0` within `1e-9` of the axis width of zero; otherwise
/// rounded to a tenth of the axis width (trailing zeros dropped), in
/// scientific notation when the axis's magnitude is at least `1e5` or below
/// `1e-3`.
fn tick_label(v: f64, range: &Range<f64>) -> String {
    let width = range.end - range.start;
    if !(v.is_finite() && width.is_finite() && width > 0.0) {
        return format!("{v}");
    }
    if v.abs() <= 1e-9 * width {
        return "0".into();
    }
    let step_exp = (width / 10.0).log10().floor() as i32;
    let magnitude = range.start.abs().max(range.end.abs());
    let s = if !(1e-3..1e5).contains(&magnitude) {
        let exp = v.abs().log10().floor() as i32;
        let digits = (exp - step_exp).clamp(0, 12) as usize;
        let s = format!("{v:.digits$e}");
        match s.split_once('e') {
            Some((m, e)) => format!("{}e{e}", trim_zeros(m)),
            None => s,
        }
    } else {
        let decimals = (-step_exp).clamp(0, 15) as usize;
        trim_zeros(&format!("{v:.decimals$}")).to_string()
    };
    if s == "-0" { "0".into() } else { s }
}

/// `1.500` → `1.5`, `2.000` → `2`, `10` → `10`.
fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `x` moved into `range` widened by its width on both sides: off the
/// chart either way, but within what the backend maps to pixels without
/// overflowing.
fn clip(x: f64, range: &Range<f64>) -> f64 {
    let w = range.end - range.start;
    x.clamp(range.start - w, range.end + w)
}

/// The axis label, noting a clamped range.
fn axis_label(name: &str, clamped: bool) -> String {
    if clamped {
        format!("{name} (axis clipped at ±{AXIS_LIMIT:e})")
    } else {
        name.to_string()
    }
}

fn plot_error<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// One panel of the figure.
#[derive(Debug, Clone, Copy)]
enum Panel {
    Energy,
    Coordinate(usize),
    Momentum(usize),
    Residual,
    Xy(usize, usize),
    Phase(usize),
}

/// The panels of `spec`, in order.
fn panels(spec: &PlotSpec) -> Vec<Panel> {
    let mut out = Vec::new();
    for p in &spec.panels {
        match p {
            PlotPanel::Energy => out.push(Panel::Energy),
            PlotPanel::Coords => out.extend(spec.shown.iter().map(|&i| Panel::Coordinate(i))),
            PlotPanel::Momenta => out.extend(spec.shown.iter().map(|&i| Panel::Momentum(i))),
            PlotPanel::Residual => out.push(Panel::Residual),
            PlotPanel::Xy => out.extend(spec.xy.map(|(x, y)| Panel::Xy(x, y))),
            PlotPanel::Phase => out.extend(spec.shown.iter().map(|&i| Panel::Phase(i))),
        }
    }
    out
}

/// Columns of the grid for `n` panels.
fn columns(n: usize) -> usize {
    match n {
        0..=1 => 1,
        2..=6 => 2,
        _ => 3,
    }
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;
type Area<'b> = DrawingArea<SVGBackend<'b>, plotters::coord::Shift>;

/// The figure of the collected records, as SVG text.
///
/// # Errors
/// [`PlotError::Walls`] when [`PlotInfo::walls`] fails, [`PlotError::Draw`]
/// when the backend does.
pub fn render(
    mut collector: PlotCollector,
    spec: &PlotSpec,
    info: &PlotInfo<'_>,
) -> Result<String> {
    collector.finish();
    draw(&collector, spec, info)
}

/// The figure's title: model, steps, impacts, the coordinates drawn.
fn title(spec: &PlotSpec, info: &PlotInfo<'_>) -> (String, Option<String>) {
    let impacts = match info.impacts.len() {
        0 => String::new(),
        1 => ", 1 impact (red lines)".into(),
        n => format!(", {n} impacts (red lines)"),
    };
    let first = format!("{}: {} steps{impacts}", info.model, info.steps);
    let second = (spec.has_coordinate_panels() && spec.shown.len() < spec.total).then(|| {
        format!(
            "coordinates drawn: {} of {} ({}), evenly spread",
            spec.shown.len(),
            spec.total,
            shown_names(&spec.shown, info.coordinates)
        )
    });
    (first, second)
}

fn draw(c: &PlotCollector, spec: &PlotSpec, info: &PlotInfo<'_>) -> Result<String> {
    let list = panels(spec);
    let cols = columns(list.len());
    let rows = list.len().div_ceil(cols).max(1);
    let size = (WIDTH, HEADER + ROW_HEIGHT * rows as u32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (header, body) = root.split_vertically(HEADER);
        let (first, second) = title(spec, info);
        let style = TextStyle::from(("sans-serif", TITLE_FONT).into_font());
        header
            .draw_text(&first, &style, (MARGIN as i32, 8))
            .map_err(plot_error)?;
        if let Some(second) = second {
            let style = TextStyle::from(("sans-serif", DESC_FONT).into_font());
            header
                .draw_text(&second, &style, (MARGIN as i32, 34))
                .map_err(plot_error)?;
        }
        let areas = body.split_evenly((rows, cols));
        let (t_range, t_clamped) = axis_range(
            c.t.iter().chain(c.energy.iter().map(|p| &p.0)).copied(),
            FLAT_COORDINATE,
        );
        let t = TimeAxis {
            range: t_range,
            label: axis_label("t (s)", t_clamped),
            impacts: impact_lines(info.impacts, &t_range_of(c)),
        };
        for (panel, area) in list.iter().zip(&areas) {
            match *panel {
                Panel::Energy => energy_panel(area, c, info, &t)?,
                Panel::Coordinate(i) => {
                    let name = name_of(info.coordinates, i);
                    let series = c.series(i, false);
                    time_panel(area, &format!("coordinate {name}"), &name, &t, &c.t, series)?;
                }
                Panel::Momentum(i) => {
                    let name = format!("p_{}", name_of(info.coordinates, i));
                    let series = c.series(i, true);
                    time_panel(area, &format!("momentum {name}"), &name, &t, &c.t, series)?;
                }
                Panel::Residual => residual_panel(area, c, &t)?,
                Panel::Xy(x, y) => xy_panel(area, c, info, x, y)?,
                Panel::Phase(i) => phase_panel(area, c, info, i)?,
            }
        }
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// The time range of the records (for thinning the impact lines).
fn t_range_of(c: &PlotCollector) -> Range<f64> {
    let lo = c.t.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = c.t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    lo..hi
}

/// The impact times drawn as lines: every finite one, those closer than
/// 1/2000 of the run's duration to the previous one drawn left out (they
/// would share a pixel).
fn impact_lines(impacts: &[ImpactRecord], span: &Range<f64>) -> Vec<f64> {
    let resolution = (span.end - span.start).abs() / 2000.0;
    let mut times: Vec<f64> = impacts
        .iter()
        .map(|i| i.t)
        .filter(|t| t.is_finite())
        .collect();
    times.sort_by(f64::total_cmp);
    let mut out: Vec<f64> = Vec::with_capacity(times.len());
    for t in times {
        if out.last().is_none_or(|&last| (t - last).abs() > resolution) {
            out.push(t);
        }
    }
    out
}

/// The shared time axis of the time panels.
struct TimeAxis {
    range: Range<f64>,
    label: String,
    impacts: Vec<f64>,
}

/// `area` below its caption: the area of [`chart`].
fn titled<'b>(area: &Area<'b>, caption: &str) -> Result<Area<'b>> {
    area.titled(caption, ("sans-serif", CAPTION_FONT))
        .map_err(plot_error)
}

/// The size (px) of the plotting area of a [`chart`] on `area`.
fn plotting_size(area: &Area<'_>) -> (f64, f64) {
    let (w, h) = area.dim_in_pixel();
    (
        (f64::from(w) - f64::from(Y_LABEL_AREA + 2 * MARGIN)).max(1.0),
        (f64::from(h) - f64::from(X_LABEL_AREA + 2 * MARGIN)).max(1.0),
    )
}

/// A chart on `area` (below its caption, [`titled`]) with the house fonts,
/// ticks and labels.
fn chart<'a, 'b>(
    area: &'a Area<'b>,
    (x, x_desc): (&Range<f64>, &str),
    (y, y_desc): (&Range<f64>, &str),
) -> Result<Chart<'a, 'b>> {
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(x.clone(), y.clone())
        .map_err(plot_error)?;
    let x_fmt = |v: &f64| tick_label(*v, x);
    let y_fmt = |v: &f64| tick_label(*v, y);
    chart
        .configure_mesh()
        .x_labels(6)
        .y_labels(6)
        .max_light_lines(2)
        .label_style(("sans-serif", TICK_FONT))
        .axis_desc_style(("sans-serif", DESC_FONT))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .draw()
        .map_err(plot_error)?;
    Ok(chart)
}

/// A quantity against time, impacts marked.
fn time_panel(
    area: &Area<'_>,
    caption: &str,
    name: &str,
    t: &TimeAxis,
    times: &[f64],
    values: &[f64],
) -> Result<()> {
    let (y, clamped) = axis_range(values.iter().copied(), FLAT_COORDINATE);
    let area = titled(area, caption)?;
    let mut chart = chart(
        &area,
        (&t.range, &t.label),
        (&y, &axis_label(name, clamped)),
    )?;
    draw_impacts(&mut chart, &t.impacts, &t.range, &y)?;
    draw_curve(
        &mut chart,
        times.iter().copied().zip(values.iter().copied()),
        &t.range,
        &y,
    )
}

/// A curve, non-finite points left out, clipped.
fn draw_curve(
    chart: &mut Chart<'_, '_>,
    points: impl Iterator<Item = (f64, f64)>,
    x: &Range<f64>,
    y: &Range<f64>,
) -> Result<()> {
    let points: Vec<(f64, f64)> = points
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .map(|(a, b)| (clip(a, x), clip(b, y)))
        .collect();
    chart
        .draw_series(LineSeries::new(points, CURVE.stroke_width(2)))
        .map_err(plot_error)?;
    Ok(())
}

/// `E − E₀` against time. A deviation below `1e-10` of the energy scale is
/// round-off: drawn flat in `±1e-3` of the scale, and the caption says so.
fn energy_panel(
    area: &Area<'_>,
    c: &PlotCollector,
    info: &PlotInfo<'_>,
    t: &TimeAxis,
) -> Result<()> {
    let dev: Vec<(f64, f64)> = c
        .energy
        .iter()
        .map(|&(t, e)| (t, e - info.e0))
        .filter(|p| p.1.is_finite())
        .collect();
    let scale = if info.energy_scale.is_finite() && info.energy_scale > 0.0 {
        info.energy_scale
    } else {
        1.0
    };
    let max_dev = dev.iter().map(|p| p.1.abs()).fold(0.0, f64::max);
    let flat = Flat {
        reference: 0.1 * scale,
        zero_half: 1e-3 * scale,
    };
    let (y, clamped) = axis_range(dev.iter().map(|p| p.1), flat);
    let caption = if max_dev == 0.0 {
        "energy deviation E − E₀: 0 throughout".to_string()
    } else if max_dev <= 1e-10 * scale {
        format!("energy deviation E − E₀: max {max_dev:.1e}, round-off")
    } else {
        format!("energy deviation E − E₀ (E₀ = {})", significant(info.e0))
    };
    let area = titled(area, &caption)?;
    let mut chart = chart(
        &area,
        (&t.range, &t.label),
        (&y, &axis_label("E − E₀", clamped)),
    )?;
    draw_impacts(&mut chart, &t.impacts, &t.range, &y)?;
    draw_curve(&mut chart, dev.into_iter(), &t.range, &y)
}

/// A number with 8 significant digits.
fn significant(x: f64) -> String {
    if x != 0.0 && !(1e-3..1e6).contains(&x.abs()) {
        format!("{x:.7e}")
    } else {
        let decimals = (7 - x.abs().log10().floor().max(0.0) as i32).max(0) as usize;
        trim_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

/// `log₁₀` of the constraint residual against time (zero residuals left
/// out).
fn residual_panel(area: &Area<'_>, c: &PlotCollector, t: &TimeAxis) -> Result<()> {
    let points: Vec<(f64, f64)> =
        c.t.iter()
            .zip(&c.residual)
            .filter(|(_, r)| **r > 0.0)
            .map(|(&t, &r)| (t, r.log10()))
            .collect();
    let caption = if points.is_empty() {
        "constraint residual: 0 throughout".to_string()
    } else {
        "constraint residual".to_string()
    };
    let (y, _) = axis_range(
        points.iter().map(|p| p.1),
        Flat {
            reference: 1.0,
            zero_half: 1.0,
        },
    );
    let area = titled(area, &caption)?;
    let mut chart = chart(&area, (&t.range, &t.label), (&y, "log₁₀ |residual|"))?;
    draw_impacts(&mut chart, &t.impacts, &t.range, &y)?;
    draw_curve(&mut chart, points.into_iter(), &t.range, &y)
}

/// Phase portrait `(q_i, p_i)`, the start marked.
fn phase_panel(area: &Area<'_>, c: &PlotCollector, info: &PlotInfo<'_>, i: usize) -> Result<()> {
    let name = name_of(info.coordinates, i);
    let q = c.series(i, false);
    let p = c.series(i, true);
    let (x, xc) = axis_range(q.iter().copied(), FLAT_COORDINATE);
    let (y, yc) = axis_range(p.iter().copied(), FLAT_COORDINATE);
    let p_name = format!("p_{name}");
    let area = titled(area, &format!("phase portrait ({name}, {p_name})"))?;
    let mut chart = chart(
        &area,
        (&x, &axis_label(&name, xc)),
        (&y, &axis_label(&p_name, yc)),
    )?;
    draw_curve(&mut chart, q.iter().copied().zip(p.iter().copied()), &x, &y)?;
    if let (Some(&q0), Some(&p0)) = (q.first(), p.first())
        && q0.is_finite()
        && p0.is_finite()
    {
        chart
            .draw_series(std::iter::once(Circle::new(
                (clip(q0, &x), clip(p0, &y)),
                4,
                START.filled(),
            )))
            .map_err(plot_error)?;
    }
    Ok(())
}

/// Vertical lines at the impact times.
fn draw_impacts(
    chart: &mut Chart<'_, '_>,
    times: &[f64],
    t: &Range<f64>,
    y: &Range<f64>,
) -> Result<()> {
    chart
        .draw_series(times.iter().map(|&time| {
            let time = clip(time, t);
            PathElement::new(vec![(time, y.start), (time, y.end)], IMPACT.mix(0.6))
        }))
        .map_err(plot_error)?;
    Ok(())
}

/// The part of the line through `point` along `direction` inside the box,
/// if any (Liang–Barsky).
pub fn line_in_box(
    point: [f64; 2],
    direction: [f64; 2],
    x: &Range<f64>,
    y: &Range<f64>,
) -> Option<[(f64, f64); 2]> {
    let (mut s0, mut s1) = (f64::NEG_INFINITY, f64::INFINITY);
    for (p, d, r) in [(point[0], direction[0], x), (point[1], direction[1], y)] {
        if d == 0.0 {
            if p < r.start || p > r.end {
                return None;
            }
        } else {
            let (a, b) = ((r.start - p) / d, (r.end - p) / d);
            s0 = s0.max(a.min(b));
            s1 = s1.min(a.max(b));
        }
    }
    (s0 <= s1 && s0.is_finite() && s1.is_finite()).then(|| {
        let at = |s: f64| (point[0] + s * direction[0], point[1] + s * direction[1]);
        [at(s0), at(s1)]
    })
}

/// The finite points a wall shape must keep in view (a line: its point
/// closest to `near`).
fn wall_points(shape: &Shape, near: (f64, f64)) -> Vec<(f64, f64)> {
    match shape {
        Shape::Dot(p) => vec![(p[0], p[1])],
        Shape::Circle { center, radius } => vec![
            (center[0] - radius, center[1] - radius),
            (center[0] + radius, center[1] + radius),
        ],
        Shape::Polyline { points, .. } => points.iter().map(|p| (p[0], p[1])).collect(),
        Shape::Line { point, direction } => {
            let d2 = direction[0] * direction[0] + direction[1] * direction[1];
            if d2.is_nan() || d2 <= 0.0 {
                return Vec::new();
            }
            let s = ((near.0 - point[0]) * direction[0] + (near.1 - point[1]) * direction[1]) / d2;
            vec![(point[0] + s * direction[0], point[1] + s * direction[1])]
        }
    }
}

/// The box of `points` (finite ones), or `None`.
fn bounding_box(points: impl Iterator<Item = (f64, f64)>) -> Option<(Range<f64>, Range<f64>)> {
    let mut b: Option<(Range<f64>, Range<f64>)> = None;
    for (x, y) in points.filter(|p| p.0.is_finite() && p.1.is_finite()) {
        b = Some(match b {
            None => (x..x, y..y),
            Some((bx, by)) => (
                bx.start.min(x)..bx.end.max(x),
                by.start.min(y)..by.end.max(y),
            ),
        });
    }
    b
}

/// Ranges about the box `(x, y)`, padded by 5 % of its larger side (at
/// least 1 when it is a point) and widened so that both axes have the same
/// scale on a plotting area of `px` pixels.
fn equal_scale(x: &Range<f64>, y: &Range<f64>, px: (f64, f64)) -> (Range<f64>, Range<f64>) {
    let side = (x.end - x.start).max(y.end - y.start);
    let pad = if side > 0.0 { 0.05 * side } else { 1.0 };
    let (w, h) = (x.end - x.start + 2.0 * pad, y.end - y.start + 2.0 * pad);
    let per_px = (w / px.0).max(h / px.1);
    let (cx, cy) = (0.5 * (x.start + x.end), 0.5 * (y.start + y.end));
    let (hw, hh) = (0.5 * per_px * px.0, 0.5 * per_px * px.1);
    ((cx - hw)..(cx + hw), (cy - hh)..(cy + hh))
}

/// The path of `(x, y)` with the walls, the impact points and the start.
fn xy_panel(
    area: &Area<'_>,
    c: &PlotCollector,
    info: &PlotInfo<'_>,
    ix: usize,
    iy: usize,
) -> Result<()> {
    let xs = c.series(ix, false);
    let ys = c.series(iy, false);
    let path: Vec<(f64, f64)> = xs
        .iter()
        .copied()
        .zip(ys.iter().copied())
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .map(|(x, y)| {
            (
                x.clamp(-AXIS_LIMIT, AXIS_LIMIT),
                y.clamp(-AXIS_LIMIT, AXIS_LIMIT),
            )
        })
        .collect();
    let hits: Vec<(f64, f64)> = info
        .impacts
        .iter()
        .filter_map(|i| Some((*i.q.get(ix)?, *i.q.get(iy)?)))
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    let (bx, by) =
        bounding_box(path.iter().chain(&hits).copied()).unwrap_or((-1.0..1.0, -1.0..1.0));
    let centre = (0.5 * (bx.start + bx.end), 0.5 * (by.start + by.end));
    // The walls of the model's picture (those `--animate` draws), a model
    // file's zero sets sampled around the path.
    let around: Vec<[f64; 2]> = path.iter().chain(&hits).map(|&(x, y)| [x, y]).collect();
    let walls = (info.walls)(&around).map_err(PlotError::Walls)?;
    let wall_view: Vec<(f64, f64)> = walls.iter().flat_map(|s| wall_points(s, centre)).collect();
    let (vx, vy) = bounding_box(path.iter().chain(&hits).chain(&wall_view).copied())
        .unwrap_or((-1.0..1.0, -1.0..1.0));
    let (x_name, y_name) = (name_of(info.coordinates, ix), name_of(info.coordinates, iy));
    let caption = if !walls.is_empty() {
        format!("path in the {x_name}–{y_name} plane, walls in brown")
    } else {
        format!("path in the {x_name}–{y_name} plane")
    };
    let area = titled(area, &caption)?;
    let (x, y) = equal_scale(&vx, &vy, plotting_size(&area));
    let mut chart = chart(&area, (&x, &x_name), (&y, &y_name))?;
    for shape in &walls {
        draw_wall(&mut chart, shape, &x, &y)?;
    }
    draw_curve(&mut chart, path.iter().copied(), &x, &y)?;
    chart
        .draw_series(
            hits.iter()
                .map(|&p| Circle::new((clip(p.0, &x), clip(p.1, &y)), 4, IMPACT.filled())),
        )
        .map_err(plot_error)?;
    if let Some(&(x0, y0)) = path.first() {
        chart
            .draw_series(std::iter::once(Circle::new(
                (clip(x0, &x), clip(y0, &y)),
                5,
                START.filled(),
            )))
            .map_err(plot_error)?;
    }
    Ok(())
}

/// One wall shape of a drawing, within the view.
fn draw_wall(
    chart: &mut Chart<'_, '_>,
    shape: &Shape,
    x: &Range<f64>,
    y: &Range<f64>,
) -> Result<()> {
    let style = WALL.stroke_width(3);
    let points: Vec<(f64, f64)> = match shape {
        Shape::Line { point, direction } => match line_in_box(*point, *direction, x, y) {
            Some(s) => s.to_vec(),
            None => return Ok(()),
        },
        Shape::Circle { center, radius } => (0..=256)
            .map(|k| {
                let a = std::f64::consts::TAU * f64::from(k) / 256.0;
                (center[0] + radius * a.cos(), center[1] + radius * a.sin())
            })
            .collect(),
        Shape::Polyline { points, closed } => {
            let mut v: Vec<(f64, f64)> = points.iter().map(|p| (p[0], p[1])).collect();
            if *closed && let Some(&first) = v.first() {
                v.push(first);
            }
            v
        }
        Shape::Dot(p) => {
            chart
                .draw_series(std::iter::once(Circle::new(
                    (clip(p[0], x), clip(p[1], y)),
                    3,
                    WALL.filled(),
                )))
                .map_err(plot_error)?;
            return Ok(());
        }
    };
    let points: Vec<(f64, f64)> = points
        .into_iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .map(|(a, b)| (clip(a, x), clip(b, y)))
        .collect();
    chart
        .draw_series(std::iter::once(PathElement::new(points, style)))
        .map_err(plot_error)?;
    Ok(())
}
