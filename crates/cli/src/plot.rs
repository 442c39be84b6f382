//! `--plot FILE.svg`: energy deviation `E − E₀` and the configuration
//! coordinates against time, impacts marked, drawn with plotters' SVG
//! backend (text as SVG `<text>` elements: no font files needed).

use crate::output::{AtomicFile, RecordSink, RecordView, extension};
use anyhow::{Result, anyhow, bail};
use plotters::prelude::*;
use std::io::Write;
use std::ops::Range;
use std::path::Path;

/// Points per curve above which the records are decimated.
const MAX_POINTS: usize = 4000;
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
/// energy (so no spike is lost), and always the last record.
#[derive(Debug)]
pub struct PlotCollector {
    stride: usize,
    count: usize,
    t: Vec<f64>,
    q: Vec<Vec<f64>>,
    energy: Vec<(f64, f64)>,
    bucket: Vec<(f64, f64)>,
    last: Option<(f64, Vec<f64>)>,
}

impl PlotCollector {
    /// A collector expecting about `expected` records.
    pub fn new(expected: usize) -> Self {
        Self {
            stride: expected.div_ceil(MAX_POINTS).max(1),
            count: 0,
            t: Vec::new(),
            q: Vec::new(),
            energy: Vec::new(),
            bucket: Vec::new(),
            last: None,
        }
    }

    fn flush_bucket(&mut self) {
        let finite = || {
            self.bucket
                .iter()
                .enumerate()
                .filter(|(_, p)| p.1.is_finite())
        };
        let lo = finite()
            .min_by(|a, b| a.1.1.total_cmp(&b.1.1))
            .map(|(i, _)| i);
        let hi = finite()
            .max_by(|a, b| a.1.1.total_cmp(&b.1.1))
            .map(|(i, _)| i);
        match (lo, hi) {
            (Some(lo), Some(hi)) => {
                let (a, b) = (lo.min(hi), lo.max(hi));
                self.energy.push(self.bucket[a]);
                if b != a {
                    self.energy.push(self.bucket[b]);
                }
            }
            _ => self.energy.extend(self.bucket.first().copied()),
        }
        self.bucket.clear();
    }

    fn finish(&mut self) {
        if !self.bucket.is_empty() {
            self.flush_bucket();
        }
        if let Some((t, q)) = self.last.take() {
            self.t.push(t);
            for (c, x) in self.q.iter_mut().zip(q) {
                c.push(x);
            }
        }
    }
}

impl RecordSink for PlotCollector {
    fn record(&mut self, r: &RecordView<'_>) {
        if self.q.is_empty() {
            self.q = vec![Vec::new(); r.q.len()];
        }
        if self.count.is_multiple_of(self.stride) {
            self.t.push(r.t);
            for (c, &x) in self.q.iter_mut().zip(r.q) {
                c.push(x);
            }
            self.last = None;
        } else {
            self.last = Some((r.t, r.q.to_vec()));
        }
        self.bucket.push((r.t, r.energy));
        if self.bucket.len() == self.stride {
            self.flush_bucket();
        }
        self.count += 1;
    }
}

/// Check `--plot`'s extension and create its temporary file.
pub fn create(path: &Path) -> Result<AtomicFile> {
    if extension(path).as_deref() != Some("svg") {
        bail!(
            "cannot plot to '{}': --plot writes SVG, use a .svg file",
            path.display()
        );
    }
    AtomicFile::create(path)
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

/// `lo..hi` covering the finite values, padded by 5 %, never empty.
fn padded_range(values: impl Iterator<Item = f64>) -> Range<f64> {
    let (lo, hi) = values
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    if lo > hi {
        return -1.0..1.0;
    }
    let span = hi - lo;
    let pad = if span > 0.0 {
        0.05 * span
    } else {
        (hi.abs() * 1e-3).max(1e-12)
    };
    (lo - pad)..(hi + pad)
}

fn plot_error<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("cannot draw the plot: {e}")
}

/// Draw the collected records into `file` and rename it into place.
pub fn render(
    mut collector: PlotCollector,
    info: &PlotInfo<'_>,
    mut file: AtomicFile,
) -> Result<()> {
    collector.finish();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (upper, lower) = root.split_vertically(SIZE.1 * 2 / 5);
        let t_range = padded_range(
            collector
                .t
                .iter()
                .chain(collector.energy.iter().map(|p| &p.0))
                .copied(),
        );
        let t_range = if t_range.start.is_finite() {
            t_range
        } else {
            0.0..1.0
        };

        // Energy deviation.
        let dev: Vec<(f64, f64)> = collector
            .energy
            .iter()
            .map(|&(t, e)| (t, e - info.e0))
            .filter(|p| p.1.is_finite())
            .collect();
        let e_range = padded_range(dev.iter().map(|p| p.1));
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
            .x_desc("t")
            .y_desc("E − E₀")
            .y_label_formatter(&|y| format!("{y:.2e}"))
            .draw()
            .map_err(plot_error)?;
        draw_impacts(&mut chart, info.impact_times, &e_range)?;
        chart
            .draw_series(LineSeries::new(dev, BLUE.stroke_width(1)))
            .map_err(plot_error)?;

        // Coordinates.
        let q_range = padded_range(collector.q.iter().flatten().copied());
        let mut chart = ChartBuilder::on(&lower)
            .caption("configuration q(t)", ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(35)
            .y_label_area_size(95)
            .build_cartesian_2d(t_range, q_range.clone())
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc("t")
            .y_desc("q")
            .draw()
            .map_err(plot_error)?;
        draw_impacts(&mut chart, info.impact_times, &q_range)?;
        for (i, coordinate) in collector.q.iter().enumerate() {
            let color = COLORS[i % COLORS.len()].to_rgba();
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
        .map_err(|e| anyhow!("cannot write '{}': {e}", target.display()))?;
    file.persist()
}

/// Vertical lines at the impact times.
fn draw_impacts<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    times: &[f64],
    y: &Range<f64>,
) -> Result<()> {
    let red = RED.mix(0.5);
    chart
        .draw_series(
            times
                .iter()
                .map(|&t| PathElement::new(vec![(t, y.start), (t, y.end)], red)),
        )
        .map_err(plot_error)?;
    Ok(())
}
