//! `--plot FILE.svg`: energy deviation `E − E₀` and the configuration
//! coordinates against time, impacts marked, drawn with plotters' SVG
//! backend (text as SVG `<text>` elements: no font files needed).

use crate::output::{RecordSink, RecordView, Staged, Target, output_failure};
use anyhow::Result;
use plotters::prelude::*;
use std::io::Write;
use std::ops::Range;
use std::path::Path;

/// Points per curve above which the records are decimated.
const MAX_POINTS: usize = 4000;
/// Most coordinate curves drawn: a larger system (a chain, a ladder of a
/// million cells) shows this many, evenly spread over its coordinates, and
/// the caption says so.
const MAX_CURVES: usize = COLORS.len();
/// Curve colours (the tableau palette without its red, which marks impacts).
const COLORS: [RGBColor; 9] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
/// Picture size in pixels.
const SIZE: (u32, u32) = (1200, 900);

/// Collects (decimated) records for the plot: every `stride`-th record for
/// the coordinates, the minimum and maximum of each `stride` records for the
/// energy (so no spike is lost), and always the last record. Memory stays
/// bounded (about `3 MAX_POINTS` points) however many steps the run takes.
#[derive(Debug)]
pub struct PlotCollector {
    stride: usize,
    /// Indices of the coordinates drawn.
    shown: Vec<usize>,
    /// Number of coordinates of the system.
    total: usize,
    count: usize,
    t: Vec<f64>,
    q: Vec<Vec<f64>>,
    energy: Vec<(f64, f64)>,
    bucket: Bucket,
    last: Option<f64>,
    last_q: Vec<f64>,
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
    /// A collector expecting about `expected` records of `coordinates`
    /// coordinates.
    pub fn new(expected: usize, coordinates: usize) -> Self {
        Self {
            stride: expected.div_ceil(MAX_POINTS).max(1),
            shown: shown_coordinates(coordinates),
            total: coordinates,
            count: 0,
            t: Vec::new(),
            q: Vec::new(),
            energy: Vec::new(),
            bucket: Bucket::default(),
            last: None,
            last_q: Vec::new(),
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

    fn finish(&mut self) {
        if self.bucket.len > 0 {
            self.flush_bucket();
        }
        if let Some(t) = self.last.take() {
            self.t.push(t);
            for (c, &x) in self.q.iter_mut().zip(&self.last_q) {
                c.push(x);
            }
        }
    }
}

/// The coordinates drawn of `n`: all up to [`MAX_CURVES`], else that many
/// evenly spread, first and last included.
fn shown_coordinates(n: usize) -> Vec<usize> {
    if n <= MAX_CURVES {
        return (0..n).collect();
    }
    (0..MAX_CURVES)
        .map(|i| i * (n - 1) / (MAX_CURVES - 1))
        .collect()
}

impl RecordSink for PlotCollector {
    fn record(&mut self, r: &RecordView<'_>) {
        if self.q.is_empty() {
            self.q = vec![Vec::new(); self.shown.len()];
        }
        if self.count.is_multiple_of(self.stride) {
            self.t.push(r.t);
            for (c, &i) in self.q.iter_mut().zip(&self.shown) {
                c.push(r.q[i]);
            }
            self.last = None;
        } else {
            self.last = Some(r.t);
            self.last_q.clear();
            self.last_q.extend(self.shown.iter().map(|&i| r.q[i]));
        }
        self.bucket.push((r.t, r.energy));
        if self.bucket.len == self.stride {
            self.flush_bucket();
        }
        self.count += 1;
    }
}

/// Check `--plot`'s extension and path (before the run).
///
/// # Errors
/// A usage error naming the path.
pub fn check(path: &Path) -> Result<Target> {
    crate::output::check_svg(path, "--plot", "plot")
}

/// What the plot shows besides the records.
#[derive(Debug)]
pub struct PlotInfo<'a> {
    /// Model name (title).
    pub model: &'a str,
    /// Coordinate names (legend).
    pub coordinates: &'a [String],
    /// Impact times.
    pub impact_times: &'a [f64],
    /// Reference energy `E₀` (energy of the first step).
    pub e0: f64,
}

/// Largest magnitude an axis shows; values beyond are drawn clipped. The
/// axis code of plotters loops forever on a range whose width overflows.
const AXIS_LIMIT: f64 = 1e300;

/// An axis range: `lo..hi` covering the finite values, padded by 5 %,
/// never empty, never wider than `±AXIS_LIMIT` (the flag says whether
/// values were clamped), never narrower than `1e-9` of its magnitude (a
/// width below the values' resolution).
fn padded_range(values: impl Iterator<Item = f64>) -> (Range<f64>, bool) {
    let (lo, hi) = values
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    if lo > hi {
        return (-1.0..1.0, false);
    }
    let clamped = lo < -AXIS_LIMIT || hi > AXIS_LIMIT;
    let (lo, hi) = (
        lo.clamp(-AXIS_LIMIT, AXIS_LIMIT),
        hi.clamp(-AXIS_LIMIT, AXIS_LIMIT),
    );
    let magnitude = lo.abs().max(hi.abs());
    let span = hi - lo;
    if span > 1e-9 * magnitude {
        let pad = 0.05 * span;
        ((lo - pad)..(hi + pad), clamped)
    } else {
        let half = (magnitude * 1e-3).max(1e-12);
        let mid = 0.5 * lo + 0.5 * hi;
        ((mid - half)..(mid + half), clamped)
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

fn plot_error<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow::Error::new(crate::OutputFailure(format!("cannot draw the plot: {e}")))
}

/// Draw the collected records into `file` and flush it to disk, ready to
/// commit.
///
/// # Errors
/// An [`OutputFailure`](crate::OutputFailure) naming the file.
pub fn render(
    mut collector: PlotCollector,
    info: &PlotInfo<'_>,
    mut file: Staged,
) -> Result<Staged> {
    collector.finish();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (upper, lower) = root.split_vertically(SIZE.1 * 2 / 5);
        let (t_range, t_clamped) = padded_range(
            collector
                .t
                .iter()
                .chain(collector.energy.iter().map(|p| &p.0))
                .copied(),
        );

        // Energy deviation.
        let dev: Vec<(f64, f64)> = collector
            .energy
            .iter()
            .map(|&(t, e)| (t, e - info.e0))
            .filter(|p| p.1.is_finite())
            .collect();
        let (e_range, e_clamped) = padded_range(dev.iter().map(|p| p.1));
        let mut chart = ChartBuilder::on(&upper)
            .caption(
                format!(
                    "{}: energy deviation E − E₀ (E₀ = {:.10})",
                    info.model, info.e0
                ),
                ("sans-serif", 20),
            )
            .margin(12)
            .x_label_area_size(35)
            .y_label_area_size(95)
            .build_cartesian_2d(t_range.clone(), e_range.clone())
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc(axis_label("t", t_clamped))
            .y_desc(axis_label("E − E₀", e_clamped))
            .y_label_formatter(&|y| format!("{y:.2e}"))
            .draw()
            .map_err(plot_error)?;
        draw_impacts(&mut chart, info.impact_times, &t_range, &e_range)?;
        let dev = dev
            .into_iter()
            .map(|(t, e)| (clip(t, &t_range), clip(e, &e_range)));
        chart
            .draw_series(LineSeries::new(dev, BLUE.stroke_width(1)))
            .map_err(plot_error)?;

        // Coordinates.
        let (q_range, q_clamped) = padded_range(collector.q.iter().flatten().copied());
        let caption = if collector.shown.len() < collector.total {
            format!(
                "configuration q(t): {} of {} coordinates, evenly spread",
                collector.shown.len(),
                collector.total
            )
        } else {
            "configuration q(t)".to_string()
        };
        let mut chart = ChartBuilder::on(&lower)
            .caption(caption, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(35)
            .y_label_area_size(95)
            .build_cartesian_2d(t_range.clone(), q_range.clone())
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc(axis_label("t", t_clamped))
            .y_desc(axis_label("q", q_clamped))
            .draw()
            .map_err(plot_error)?;
        draw_impacts(&mut chart, info.impact_times, &t_range, &q_range)?;
        for (k, (coordinate, &i)) in collector.q.iter().zip(&collector.shown).enumerate() {
            let color = COLORS[k % COLORS.len()].to_rgba();
            let name = info
                .coordinates
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("q{i}"));
            let points: Vec<(f64, f64)> = collector
                .t
                .iter()
                .copied()
                .zip(coordinate.iter().copied())
                .filter(|p| p.1.is_finite())
                .map(|(t, x)| (clip(t, &t_range), clip(x, &q_range)))
                .collect();
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(2)))
                .map_err(plot_error)?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        if !info.impact_times.is_empty() {
            let red = RED.mix(0.5);
            chart
                .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())
                .map_err(plot_error)?
                .label(format!("impacts ({})", info.impact_times.len()))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x + 10, y - 7), (x + 10, y + 7)], red)
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(plot_error)?;
        root.present().map_err(plot_error)?;
    }
    let target = file.target().to_path_buf();
    file.file()
        .write_all(svg.as_bytes())
        .and_then(|()| file.file().flush())
        .map_err(|e| output_failure(&target, e))?;
    file.sync()?;
    Ok(file)
}

/// Vertical lines at the impact times.
fn draw_impacts<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    times: &[f64],
    t: &Range<f64>,
    y: &Range<f64>,
) -> Result<()> {
    let red = RED.mix(0.5);
    chart
        .draw_series(times.iter().filter(|t| t.is_finite()).map(|&time| {
            let time = clip(time, t);
            PathElement::new(vec![(time, y.start), (time, y.end)], red)
        }))
        .map_err(plot_error)?;
    Ok(())
}
