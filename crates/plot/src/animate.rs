//! The picture of `diracvi run --animate FILE.svg`: the motion of a planar
//! model as one self-contained animated SVG that a browser plays without
//! script (SMIL `<animate>`), and of `--poster FILE.svg` or `FILE.png`: a
//! still strip of frames of the same picture for viewers without SMIL (the
//! PNG drawn by a small rasteriser of this crate).
//!
//! The model describes (its [`Scene`] through a [`Drawing`]: walls, body at
//! each frame, heading, impact points — for a [`Scenario`],
//! `Scenario::scene`, from a catalogued model's drawing or a model file's
//! `[drawing]` table; a model of your own crate builds its own), this
//! module renders ([`render_animation`]): the walls drawn
//! still (a model file's boundary pieces by their zero sets, sampled near
//! the body), the body's shapes and its heading moving through at most
//! [`MAX_FRAMES`] recorded configurations evenly spaced in time, each
//! impact point appearing at its impact time, a clock (`t = … s`), axes
//! with ticks in the scene's unit, and a bar showing the elapsed time. The
//! view is fitted to the body's path and the walls near it
//! (with a margin). Plane coordinates are the SVG user units of the picture
//! (`y` up: the picture is flipped), so the animation's values are the
//! model's numbers. The play length is the simulated time clamped to
//! [`MIN_PLAY_SECONDS`]–[`MAX_PLAY_SECONDS`], and the animation loops.

use crate::raster::{Anchor, Canvas, Rgb, TextStyle, rgb};
use crate::{PlotError, line_in_box};
use diracvi_models::{Heading, Scenario, Scene, Shape};
use diracvi_run::{ImpactRecord, RecordSink, RecordView};
use std::fmt::Write as _;
use std::ops::Range;

type Result<T> = std::result::Result<T, PlotError>;

/// What the picture of a run draws, from the model: its [`Scene`] for the
/// recorded configurations, and its still walls in a box of the plane.
/// Implemented for [`Scenario`] (the command line's models); a model of
/// your own crate implements it for its own picture.
pub trait Drawing {
    /// The scene of the configurations `frames` and the impacts (the
    /// configuration at each and its boundary piece), `None` for a model
    /// without a planar picture.
    ///
    /// # Errors
    /// Why the scene cannot be worked out.
    fn scene(
        &self,
        frames: &[&[f64]],
        impacts: &[(&[f64], usize)],
    ) -> std::result::Result<Option<Scene>, String>;

    /// The still walls of `scene` to draw in the box `bx × by`: its
    /// [`walls`](Scene::walls), and whatever else the model draws there
    /// (a model file's boundary pieces by their zero sets).
    ///
    /// # Errors
    /// Why the walls cannot be worked out.
    fn walls_in(
        &self,
        scene: &Scene,
        bx: Range<f64>,
        by: Range<f64>,
    ) -> std::result::Result<Vec<Shape>, String> {
        let _ = (bx, by);
        Ok(scene.walls.clone())
    }
}

impl Drawing for Scenario {
    fn scene(
        &self,
        frames: &[&[f64]],
        impacts: &[(&[f64], usize)],
    ) -> std::result::Result<Option<Scene>, String> {
        Scenario::scene(self, frames, impacts).map_err(|e| e.to_string())
    }

    fn walls_in(
        &self,
        scene: &Scene,
        bx: Range<f64>,
        by: Range<f64>,
    ) -> std::result::Result<Vec<Shape>, String> {
        Scenario::walls_in(self, scene, bx, by).map_err(|e| e.to_string())
    }
}

/// Most body frames in an animation (the first and last records always
/// among them); bounds the file size whatever the number of steps.
pub const MAX_FRAMES: usize = 600;
/// Shortest play length (s) of one loop.
pub const MIN_PLAY_SECONDS: f64 = 5.0;
/// Longest play length (s) of one loop.
pub const MAX_PLAY_SECONDS: f64 = 30.0;
/// Frames of a poster unless `--poster-frames` says otherwise.
pub const DEFAULT_POSTER_FRAMES: usize = 6;
/// Most frames of a poster.
pub const MAX_POSTER_FRAMES: usize = 24;
/// Largest width and height (px) of the picture of the plane.
const VIEW: (f64, f64) = (800.0, 600.0);
/// Smallest width and height (px) of that picture.
const MIN_VIEW: f64 = 200.0;
/// Room (px) above the picture: the title and the clock.
const HEADER: f64 = 60.0;
/// Room (px) left of the picture: the y tick labels and axis label.
const LEFT: f64 = 70.0;
/// Room (px) right of the picture.
const RIGHT: f64 = 16.0;
/// Room (px) below the picture: the x tick labels and axis label.
const BELOW: f64 = 44.0;
/// Room (px) below those, for the time bar.
const BAR: f64 = 26.0;
/// Radius (px) of a dot of the body.
const DOT_PX: f64 = 5.0;
/// Radius (px) of an impact marker.
const MARKER_PX: f64 = 4.0;
/// Length (px) of a tick mark.
const TICK_PX: f64 = 6.0;
/// Walls are kept in view within this fraction of the larger side of the
/// body's box beyond it (for a body at rest: of the box's magnitude, at
/// least 1).
const NEAR: f64 = 0.15;
/// Length of a heading without one, as a fraction of the larger side of
/// the body's box.
const HEADING_FRACTION: f64 = 0.1;
/// Colours: the body, the walls, the heading, the impacts.
const BODY: &str = "#1f77b4";
const WALL: &str = "#333333";
const HEADING: &str = "#ff7f0e";
const IMPACT: &str = "#d62728";
/// Width (px) of one panel of the plane in a poster.
const POSTER_PANEL: f64 = 320.0;
/// Panels per row of a poster.
const POSTER_COLUMNS: usize = 3;
/// Room (px) left of a poster's first column and above its first row.
const POSTER_LEFT: f64 = 64.0;
const POSTER_TOP: f64 = 56.0;

/// Collects the frames of the animation: every `stride`-th record and the
/// last one, at most about [`MAX_FRAMES`] whatever the number of steps.
#[derive(Debug)]
pub struct AnimationCollector {
    stride: usize,
    count: usize,
    frames: Vec<(f64, Vec<f64>)>,
    last: Option<f64>,
    last_q: Vec<f64>,
}

impl AnimationCollector {
    /// A collector expecting about `expected` records.
    pub fn new(expected: usize) -> Self {
        Self {
            stride: expected.div_ceil(MAX_FRAMES - 1).max(1),
            count: 0,
            frames: Vec::new(),
            last: None,
            last_q: Vec::new(),
        }
    }

    fn finish(&mut self) {
        if let Some(t) = self.last.take() {
            self.frames.push((t, std::mem::take(&mut self.last_q)));
        }
    }
}

impl RecordSink for AnimationCollector {
    fn record(&mut self, r: &RecordView<'_>) {
        if self.count.is_multiple_of(self.stride) {
            self.frames.push((r.t, r.q.to_vec()));
            self.last = None;
        } else {
            self.last = Some(r.t);
            self.last_q.clear();
            self.last_q.extend_from_slice(r.q);
        }
        self.count += 1;
    }
}

fn animation_error(message: impl std::fmt::Display) -> PlotError {
    PlotError::Animation(message.to_string())
}

/// The format of a poster: SVG, or PNG (drawn by this crate's rasteriser).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PosterFormat {
    /// An SVG strip of frames.
    Svg,
    /// The same strip as a PNG image.
    Png,
}

/// The pictures of a run: the animated SVG and, when asked for, a poster.
#[derive(Debug, Clone, PartialEq)]
pub struct Animation {
    /// The animated SVG (SMIL), self-contained.
    pub svg: String,
    /// The poster, in the format asked for.
    pub poster: Option<Vec<u8>>,
}

/// Draw the collected frames and the impacts of a run of model `model`,
/// pictured by `drawing`: the animation and, with `poster = Some((format,
/// k))`, a still strip of `k` frames (at most [`MAX_POSTER_FRAMES`]).
///
/// # Errors
/// [`PlotError::Animation`]: a model without a picture, a body that
/// changes shape between frames, a non-finite coordinate, the drawing's own
/// errors.
pub fn render_animation(
    mut collector: AnimationCollector,
    model: &str,
    drawing: &dyn Drawing,
    impacts: &[ImpactRecord],
    poster: Option<(PosterFormat, usize)>,
) -> Result<Animation> {
    collector.finish();
    let frames: Vec<&[f64]> = collector.frames.iter().map(|f| f.1.as_slice()).collect();
    let hits: Vec<(&[f64], usize)> = impacts.iter().map(|i| (i.q.as_slice(), i.piece)).collect();
    let scene = drawing
        .scene(&frames, &hits)
        .map_err(animation_error)?
        .ok_or_else(|| animation_error(format!("model '{model}' has no drawing")))?;
    let times: Vec<f64> = collector.frames.iter().map(|f| f.0).collect();
    let impact_times: Vec<f64> = impacts.iter().map(|i| i.t).collect();
    let picture = Picture::new(drawing, &times, &impact_times, &scene)?;
    let poster = poster.map(|(format, count)| match format {
        PosterFormat::Png => picture.poster_png(model, count),
        PosterFormat::Svg => picture.poster(model, count).into_bytes(),
    });
    Ok(Animation {
        svg: picture.animation(model),
        poster,
    })
}

/// The opening of a picture `width × height` on white: the `<svg>`
/// element, its `<title>` and the title in 16-point type at `at`.
fn svg_open(s: &mut String, width: f64, height: f64, at: (f64, f64), title: &str) {
    let title = escape(title);
    let _ = writeln!(
        s,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif">
<title>{title}</title>
<rect width="{w}" height="{h}" fill="white"/>
<text x="{x}" y="{y}" font-size="16">{title}</text>"#,
        w = num(width),
        h = num(height),
        x = at.0,
        y = at.1,
    );
}

/// A number for the SVG: at most 7 decimals (so within `5e-8` of the
/// value), trailing zeros dropped.
fn num(x: f64) -> String {
    let mut s = format!("{x:.7}");
    if s.contains('.') {
        let trimmed = s.trim_end_matches('0').trim_end_matches('.').len();
        s.truncate(trimmed);
    }
    if s == "-0" { "0".into() } else { s }
}

/// A fraction of the loop (a key time): 9 decimals, trailing zeros
/// dropped.
fn key(f: f64) -> String {
    let s = format!("{f:.9}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Escape text for XML content and attribute values.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The points that must be in view of a body shape (a line: its given
/// point).
fn shape_points(shape: &Shape) -> Vec<[f64; 2]> {
    match shape {
        Shape::Dot(p) => vec![*p],
        Shape::Circle { center, radius } => vec![
            [center[0] - radius, center[1] - radius],
            [center[0] + radius, center[1] + radius],
        ],
        Shape::Polyline { points, .. } => points.clone(),
        Shape::Line { point, .. } => vec![*point],
    }
}

/// A box `[lo, hi]` of the plane.
type Bounds = ([f64; 2], [f64; 2]);

/// The box of `points`, `None` when there are none.
fn bounds(points: impl Iterator<Item = [f64; 2]>) -> Option<Bounds> {
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in points {
        for i in 0..2 {
            lo[i] = lo[i].min(p[i]);
            hi[i] = hi[i].max(p[i]);
        }
    }
    (lo[0] <= hi[0]).then_some((lo, hi))
}

fn inside(p: [f64; 2], b: &Bounds) -> bool {
    (b.0[0]..=b.1[0]).contains(&p[0]) && (b.0[1]..=b.1[1]).contains(&p[1])
}

/// The points of a wall shape inside the box `near` (a circle sampled every
/// half degree, a polyline's edges clipped, a line clipped).
fn wall_points_near(shape: &Shape, near: &Bounds) -> Vec<[f64; 2]> {
    let (bx, by) = (near.0[0]..near.1[0], near.0[1]..near.1[1]);
    let segment = |a: [f64; 2], b: [f64; 2]| -> Vec<[f64; 2]> {
        let d = [b[0] - a[0], b[1] - a[1]];
        if d[0] == 0.0 && d[1] == 0.0 {
            return if inside(a, near) { vec![a] } else { Vec::new() };
        }
        match line_in_box(a, d, &bx, &by) {
            // The line's part in the box, kept to the segment.
            Some([p, q]) => {
                let along = |p: (f64, f64)| {
                    ((p.0 - a[0]) * d[0] + (p.1 - a[1]) * d[1]) / (d[0] * d[0] + d[1] * d[1])
                };
                let (s0, s1) = (along(p).max(0.0), along(q).min(1.0));
                if s0 > s1 {
                    return Vec::new();
                }
                let at = |s: f64| [a[0] + s * d[0], a[1] + s * d[1]];
                vec![at(s0), at(s1)]
            }
            None => Vec::new(),
        }
    };
    match shape {
        Shape::Dot(p) => {
            if inside(*p, near) {
                vec![*p]
            } else {
                Vec::new()
            }
        }
        Shape::Circle { center, radius } => (0..720)
            .map(|k| {
                let s = std::f64::consts::TAU * k as f64 / 720.0;
                [center[0] + radius * s.cos(), center[1] + radius * s.sin()]
            })
            .filter(|p| inside(*p, near))
            .collect(),
        Shape::Polyline { points, closed } => {
            let mut edges: Vec<([f64; 2], [f64; 2])> =
                points.windows(2).map(|w| (w[0], w[1])).collect();
            if *closed && let (Some(&a), Some(&b)) = (points.last(), points.first()) {
                edges.push((a, b));
            }
            edges.into_iter().flat_map(|(a, b)| segment(a, b)).collect()
        }
        Shape::Line { point, direction } => line_in_box(*point, *direction, &bx, &by)
            .map(|[p, q]| vec![[p.0, p.1], [q.0, q.1]])
            .unwrap_or_default(),
    }
}

/// Every number a shape is drawn with must be finite; a line's direction
/// must not vanish.
fn check_shape(shape: &Shape, what: &str) -> Result<()> {
    let finite = |p: &[f64; 2]| p[0].is_finite() && p[1].is_finite();
    let ok = match shape {
        Shape::Dot(p) => finite(p),
        Shape::Circle { center, radius } => finite(center) && radius.is_finite() && *radius > 0.0,
        Shape::Polyline { points, .. } => !points.is_empty() && points.iter().all(finite),
        Shape::Line { point, direction } => {
            finite(point) && finite(direction) && direction[0].hypot(direction[1]) > 0.0
        }
    };
    if ok {
        Ok(())
    } else {
        Err(animation_error(format!("{what}: unusable shape {shape:?}")))
    }
}

/// The plane box in view and the scale (px per unit).
#[derive(Debug, Clone, Copy)]
struct View {
    x0: f64,
    y0: f64,
    w: f64,
    h: f64,
    scale: f64,
}

impl View {
    /// The box around the body's points `body` and the wall points `walls`
    /// within reach of them ([`NEAR`]), with a margin of 8 % of its larger
    /// side (at least 1e-3 of the coordinates' magnitude, at least 1e-9),
    /// widened so that neither side is drawn smaller than [`MIN_VIEW`] px.
    fn fit(body: &Bounds, walls: &[[f64; 2]]) -> View {
        let (mut lo, mut hi) = *body;
        for p in walls {
            for i in 0..2 {
                lo[i] = lo[i].min(p[i]);
                hi[i] = hi[i].max(p[i]);
            }
        }
        let magnitude = lo.iter().chain(&hi).fold(0.0_f64, |m, x| m.max(x.abs()));
        let span = (hi[0] - lo[0]).max(hi[1] - lo[1]);
        let margin = (0.08 * span).max(1e-3 * magnitude).max(1e-9);
        let (mut w, mut h) = (hi[0] - lo[0] + 2.0 * margin, hi[1] - lo[1] + 2.0 * margin);
        let scale = (VIEW.0 / w).min(VIEW.1 / h);
        let (cx, cy) = (0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]));
        w = w.max(MIN_VIEW / scale);
        h = h.max(MIN_VIEW / scale);
        View {
            x0: cx - 0.5 * w,
            y0: cy - 0.5 * h,
            w,
            h,
            scale,
        }
    }

    /// A line through `point` along `direction` as a segment crossing the
    /// whole view.
    fn segment(&self, point: [f64; 2], direction: [f64; 2]) -> [[f64; 2]; 2] {
        let norm = direction[0].hypot(direction[1]);
        let d = [direction[0] / norm, direction[1] / norm];
        let (cx, cy) = (self.x0 + 0.5 * self.w, self.y0 + 0.5 * self.h);
        // Bounded, so that no end point overflows to infinity.
        let reach =
            (2.0 * (self.w.hypot(self.h) + (point[0] - cx).hypot(point[1] - cy))).min(1e300);
        [
            [point[0] - reach * d[0], point[1] - reach * d[1]],
            [point[0] + reach * d[0], point[1] + reach * d[1]],
        ]
    }

    /// The `viewBox` of the flipped plane (`y` up).
    fn view_box(&self) -> String {
        format!(
            "{} {} {} {}",
            num(self.x0),
            num(-(self.y0 + self.h)),
            num(self.w),
            num(self.h)
        )
    }
}

/// The attributes of a shape that an animation moves, with their values
/// (`points` for a polyline, `cx`/`cy`/`r` for dots and circles,
/// `x1`…`y2` for lines); plus the element's name.
fn geometry(shape: &Shape, view: &View) -> (&'static str, Vec<(&'static str, String)>) {
    match shape {
        Shape::Dot(p) => ("circle", vec![("cx", num(p[0])), ("cy", num(p[1]))]),
        Shape::Circle { center, radius } => (
            "circle",
            vec![
                ("cx", num(center[0])),
                ("cy", num(center[1])),
                ("r", num(*radius)),
            ],
        ),
        Shape::Polyline { points, closed } => {
            let list: Vec<String> = points
                .iter()
                .map(|p| format!("{},{}", num(p[0]), num(p[1])))
                .collect();
            (
                if *closed { "polygon" } else { "polyline" },
                vec![("points", list.join(" "))],
            )
        }
        Shape::Line { point, direction } => {
            let [a, b] = view.segment(*point, *direction);
            (
                "line",
                vec![
                    ("x1", num(a[0])),
                    ("y1", num(a[1])),
                    ("x2", num(b[0])),
                    ("y2", num(b[1])),
                ],
            )
        }
    }
}

/// The same kind of shape, with as many points (the
/// [`Drawing`](diracvi_models::Drawing) contract).
fn same_structure(a: &Shape, b: &Shape) -> bool {
    match (a, b) {
        (Shape::Dot(_), Shape::Dot(_))
        | (Shape::Circle { .. }, Shape::Circle { .. })
        | (Shape::Line { .. }, Shape::Line { .. }) => true,
        (
            Shape::Polyline {
                points: p,
                closed: c,
            },
            Shape::Polyline {
                points: q,
                closed: d,
            },
        ) => p.len() == q.len() && c == d,
        _ => false,
    }
}

/// The style of a shape: dots filled, the rest stroked (a closed outline
/// lightly filled); `scale` is px per unit (dots keep their size on screen).
fn style(shape: &Shape, color: &str, scale: f64) -> String {
    match shape {
        Shape::Dot(_) => format!(
            r#" r="{}" fill="{color}" stroke="none""#,
            num(DOT_PX / scale)
        ),
        Shape::Polyline { closed: true, .. } => format!(
            r#" fill="{color}" fill-opacity="0.15" stroke="{color}" stroke-width="2" stroke-linejoin="round" vector-effect="non-scaling-stroke""#
        ),
        _ => format!(
            r#" fill="none" stroke="{color}" stroke-width="2" stroke-linecap="round" vector-effect="non-scaling-stroke""#
        ),
    }
}

/// One still element of a shape.
fn element(shape: &Shape, view: &View, style: &str) -> String {
    let (name, attributes) = geometry(shape, view);
    let mut s = format!("<{name}");
    for (a, v) in &attributes {
        let _ = write!(s, r#" {a}="{v}""#);
    }
    let _ = writeln!(s, "{style}/>");
    s
}

/// The style of a wall.
fn wall_style(shape: &Shape, scale: f64) -> String {
    match shape {
        Shape::Dot(_) => style(shape, WALL, scale),
        _ => format!(
            r#" fill="none" stroke="{WALL}" stroke-width="3" vector-effect="non-scaling-stroke""#
        ),
    }
}

/// The heading line's end points `[x1, y1, x2, y2]`.
fn heading_line(h: &Heading, length: f64) -> [f64; 4] {
    let tip = h.tip(length);
    [h.center[0], h.center[1], tip[0], tip[1]]
}

/// A tick step of about a sixth of `span`: 1, 2 or 5 times a power of ten.
fn tick_step(span: f64) -> f64 {
    let raw = span / 6.0;
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let nice = if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * p
}

/// The ticks of `[lo, lo + span]`: (value, label).
fn ticks(lo: f64, span: f64) -> Vec<(f64, String)> {
    let step = tick_step(span);
    if !(step.is_finite() && step > 0.0) {
        return Vec::new();
    }
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let first = (lo / step).ceil() as i64;
    let last = ((lo + span) / step).floor() as i64;
    (first..=last)
        .map(|k| {
            let v = k as f64 * step;
            let mut label = format!("{v:.decimals$}");
            if label
                .trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.')
            {
                label = "0".into();
            }
            (v, label)
        })
        .collect()
}

/// Decimals of the clock: enough to tell frames `dt` apart (0 to 6).
fn clock_decimals(dt: f64) -> usize {
    if dt.is_finite() && dt > 0.0 {
        ((-dt.log10()).ceil().max(0.0) as usize).min(6)
    } else {
        3
    }
}

/// Everything drawn, checked and placed: the scene, the view, the times.
struct Picture<'a> {
    scene: &'a Scene,
    view: View,
    times: &'a [f64],
    impact_times: &'a [f64],
    /// The length of a heading that has none.
    heading_length: f64,
    /// The walls, a model file's zero sets joined into polylines among them.
    walls: Vec<Shape>,
}

impl<'a> Picture<'a> {
    /// Check the scene's shapes and fit the view.
    fn new(
        drawing: &dyn Drawing,
        times: &'a [f64],
        impact_times: &'a [f64],
        scene: &'a Scene,
    ) -> Result<Picture<'a>> {
        for w in &scene.walls {
            check_shape(w, "a wall")?;
        }
        let first = scene
            .bodies
            .first()
            .ok_or_else(|| animation_error("the run recorded no configuration"))?;
        for (body, &t) in scene.bodies.iter().zip(times) {
            let at = format!("the body at t = {t}");
            if body.len() != first.len()
                || body.iter().zip(first).any(|(a, b)| !same_structure(a, b))
            {
                return Err(animation_error(format!(
                    "{at} has other shapes than at t = {}: a drawing must keep its shapes",
                    times[0]
                )));
            }
            for s in body {
                check_shape(s, &at)?;
            }
        }
        for (p, t) in scene.contacts.iter().zip(impact_times) {
            check_shape(&Shape::Dot(*p), &format!("the impact point at t = {t}"))?;
        }
        let body_box = bounds(
            scene
                .bodies
                .iter()
                .flatten()
                .flat_map(shape_points)
                .chain(scene.contacts.iter().copied())
                .chain(scene.headings.iter().map(|h| h.center)),
        )
        .unwrap_or(([-1.0; 2], [1.0; 2]));
        let side = (body_box.1[0] - body_box.0[0]).max(body_box.1[1] - body_box.0[1]);
        let magnitude = body_box
            .0
            .iter()
            .chain(&body_box.1)
            .fold(0.0_f64, |m, x| m.max(x.abs()));
        let heading_length = if side > 0.0 {
            HEADING_FRACTION * side
        } else {
            HEADING_FRACTION * magnitude.max(1.0)
        };
        for (h, &t) in scene.headings.iter().zip(times) {
            let [x1, y1, x2, y2] = heading_line(h, heading_length);
            if ![x1, y1, x2, y2].iter().all(|x| x.is_finite()) {
                return Err(animation_error(format!(
                    "the heading at t = {t}: unusable {h:?}"
                )));
            }
        }
        let with_headings = bounds(
            [body_box.0, body_box.1]
                .into_iter()
                .chain(scene.headings.iter().map(|h| h.tip(heading_length))),
        )
        .unwrap_or(body_box);
        let reach = if side > 0.0 {
            NEAR * side
        } else {
            NEAR * magnitude.max(1.0)
        };
        let near: Bounds = (
            [with_headings.0[0] - reach, with_headings.0[1] - reach],
            [with_headings.1[0] + reach, with_headings.1[1] + reach],
        );
        // A model file's zero sets sampled beyond the view (which the
        // margins and the aspect ratio widen), so that the curves cross it
        // whole.
        let grow = (near.1[0] - near.0[0]).max(near.1[1] - near.0[1]);
        let walls = drawing
            .walls_in(
                scene,
                (near.0[0] - grow)..(near.1[0] + grow),
                (near.0[1] - grow)..(near.1[1] + grow),
            )
            .map_err(animation_error)?;
        let near_walls: Vec<[f64; 2]> = walls
            .iter()
            .flat_map(|w| wall_points_near(w, &near))
            .collect();
        let view = View::fit(&with_headings, &near_walls);
        Ok(Picture {
            scene,
            view,
            times,
            impact_times,
            heading_length,
            walls,
        })
    }

    /// The first and last frame times.
    fn span(&self) -> (f64, f64) {
        (self.times[0], self.times[self.times.len() - 1])
    }

    /// The fraction of the loop at time `t`.
    fn fraction(&self, t: f64) -> f64 {
        let (t0, t1) = self.span();
        let span = t1 - t0;
        if span == 0.0 {
            0.0
        } else {
            ((t - t0) / span).clamp(0.0, 1.0)
        }
    }

    /// The clock's text at `t`.
    fn clock(&self, t: f64) -> String {
        let dt = if self.times.len() > 1 {
            let (t0, t1) = self.span();
            (t1 - t0).abs() / (self.times.len() - 1) as f64
        } else {
            0.0
        };
        let d = clock_decimals(dt);
        format!("t = {t:.d$} s")
    }

    /// The walls, still, in a plane of `scale` px per unit.
    fn walls_svg(&self, scale: f64) -> String {
        let mut s = String::from("<g class=\"walls\">\n");
        for w in &self.walls {
            s.push_str(&element(w, &self.view, &wall_style(w, scale)));
        }
        s.push_str("</g>\n");
        s
    }

    /// The axes: a frame round the plane at (`x`, `y`) px of `pw` × `ph`
    /// px, ticks and labels in the scene's unit.
    fn axes_svg(&self, x: f64, y: f64, pw: f64, ph: f64, font: f64) -> String {
        let v = &self.view;
        let scale = pw / v.w;
        let unit = escape(&self.scene.unit);
        let mut s = format!(
            r##"<g class="axes" font-size="{f}" fill="#555555">
<rect x="{x}" y="{y}" width="{pw}" height="{ph}" fill="none" stroke="#999999"/>
"##,
            f = num(font),
            x = num(x),
            y = num(y),
            pw = num(pw),
            ph = num(ph),
        );
        for (value, label) in ticks(v.x0, v.w) {
            let px = x + (value - v.x0) * scale;
            let _ = writeln!(
                s,
                r##"<line class="tick-x" data-value="{value:?}" x1="{px}" y1="{b}" x2="{px}" y2="{t}" stroke="#999999"/><text class="tick-label-x" x="{px}" y="{ty}" text-anchor="middle">{label}</text>"##,
                px = num(px),
                b = num(y + ph),
                t = num(y + ph + TICK_PX),
                ty = num(y + ph + TICK_PX + font + 1.0),
            );
        }
        for (value, label) in ticks(v.y0, v.h) {
            let py = y + ph - (value - v.y0) * scale;
            let _ = writeln!(
                s,
                r##"<line class="tick-y" data-value="{value:?}" x1="{l}" y1="{py}" x2="{x}" y2="{py}" stroke="#999999"/><text class="tick-label-y" x="{tx}" y="{ty}" text-anchor="end">{label}</text>"##,
                py = num(py),
                l = num(x - TICK_PX),
                x = num(x),
                tx = num(x - TICK_PX - 2.0),
                ty = num(py + 0.35 * font),
            );
        }
        let _ = writeln!(
            s,
            r#"<text class="axis-label" x="{cx}" y="{by}" text-anchor="middle">{ax} ({unit})</text>
<text class="axis-label" transform="translate({lx},{cy}) rotate(-90)" text-anchor="middle">{ay} ({unit})</text>
</g>"#,
            ax = escape(&self.scene.axes[0]),
            ay = escape(&self.scene.axes[1]),
            cx = num(x + 0.5 * pw),
            by = num(y + ph + TICK_PX + 2.0 * font + 6.0),
            lx = num(x - TICK_PX - 4.0 * font),
            cy = num(y + 0.5 * ph),
        );
        s
    }

    /// The animated SVG document.
    fn animation(&self, model: &str) -> String {
        let scene = self.scene;
        let view = &self.view;
        let times = self.times;
        let (t0, t1) = self.span();
        let span = t1 - t0;
        let play = span.abs().clamp(MIN_PLAY_SECONDS, MAX_PLAY_SECONDS);
        let dur = format!("{}s", num(play));
        let animated = times.len() > 1 && span != 0.0;
        let fractions: Vec<String> = {
            let mut k: Vec<String> = times.iter().map(|&t| key(self.fraction(t))).collect();
            if let (Some(a), true) = (k.first_mut(), animated) {
                *a = "0".into();
            }
            if let (Some(b), true) = (k.last_mut(), animated) {
                *b = "1".into();
            }
            k
        };
        let key_times = fractions.join(";");
        let animate = |s: &mut String, name: &str, values: &[String]| {
            let _ = writeln!(
                s,
                r#"<animate attributeName="{name}" dur="{dur}" repeatCount="indefinite" calcMode="linear" keyTimes="{key_times}" values="{}"/>"#,
                values.join(";")
            );
        };

        let (pw, ph) = (view.w * view.scale, view.h * view.scale);
        let (width, height) = (LEFT + pw + RIGHT, HEADER + ph + BELOW + BAR);
        let impacts = scene.contacts.len();
        let mut s = String::new();
        let title = format!(
            "{model}: t = {} … {} s, {impacts} impact{} (played in {} s, looping)",
            num(t0),
            num(t1),
            if impacts == 1 { "" } else { "s" },
            num(play)
        );
        svg_open(&mut s, width, height, (LEFT, 22.0), &title);
        // The clock: one label per frame, each shown until the next frame.
        let _ = writeln!(
            s,
            r#"<g class="clock" font-size="16" font-family="monospace" font-weight="bold">"#
        );
        for (i, &t) in times.iter().enumerate() {
            let visible = i == 0;
            let _ = write!(
                s,
                r#"<text class="clock-frame" data-t="{t:?}" x="{LEFT}" y="48" visibility="{}">{}"#,
                if visible { "visible" } else { "hidden" },
                escape(&self.clock(t))
            );
            if animated {
                let (keys, values) = match (i, fractions.get(i + 1)) {
                    (0, Some(next)) => (format!("0;{next}"), "visible;hidden"),
                    (0, None) => (String::new(), ""),
                    (_, Some(next)) => (
                        format!("0;{};{next}", fractions[i]),
                        "hidden;visible;hidden",
                    ),
                    (_, None) => (format!("0;{}", fractions[i]), "hidden;visible"),
                };
                if !keys.is_empty() {
                    let _ = write!(
                        s,
                        r#"<animate attributeName="visibility" dur="{dur}" repeatCount="indefinite" calcMode="discrete" keyTimes="{keys}" values="{values}"/>"#
                    );
                }
            }
            s.push_str("</text>\n");
        }
        s.push_str("</g>\n");
        s.push_str(&self.axes_svg(LEFT, HEADER, pw, ph, 12.0));
        // The plane: user units are the model's, y flipped up.
        let _ = writeln!(
            s,
            r#"<svg class="plane" x="{LEFT}" y="{HEADER}" width="{}" height="{}" viewBox="{}" data-scale="{}">
<g transform="scale(1,-1)">"#,
            num(pw),
            num(ph),
            view.view_box(),
            num(view.scale),
        );
        s.push_str(&self.walls_svg(view.scale));
        s.push_str("<g class=\"body\">\n");
        let first = &scene.bodies[0];
        for (i, shape) in first.iter().enumerate() {
            let (element, attributes) = geometry(shape, view);
            s.push('<');
            s.push_str(element);
            for (name, value) in &attributes {
                let _ = write!(s, r#" {name}="{value}""#);
            }
            s.push_str(&style(shape, BODY, view.scale));
            if !animated {
                s.push_str("/>\n");
                continue;
            }
            s.push_str(">\n");
            // One <animate> per moving attribute, its values frame by frame.
            let frames: Vec<Vec<(&'static str, String)>> = scene
                .bodies
                .iter()
                .map(|body| geometry(&body[i], view).1)
                .collect();
            for (a, (name, _)) in attributes.iter().enumerate() {
                let values: Vec<String> = frames.iter().map(|f| f[a].1.clone()).collect();
                animate(&mut s, name, &values);
            }
            let _ = writeln!(s, "</{element}>");
        }
        s.push_str("</g>\n");
        if let Some(h0) = scene.headings.first() {
            let line = heading_line(h0, self.heading_length);
            let _ = write!(
                s,
                r#"<g class="heading"><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{HEADING}" stroke-width="3" stroke-linecap="round" vector-effect="non-scaling-stroke""#,
                num(line[0]),
                num(line[1]),
                num(line[2]),
                num(line[3])
            );
            if animated {
                s.push_str(">\n");
                let lines: Vec<[f64; 4]> = scene
                    .headings
                    .iter()
                    .map(|h| heading_line(h, self.heading_length))
                    .collect();
                for (k, name) in ["x1", "y1", "x2", "y2"].iter().enumerate() {
                    let values: Vec<String> = lines.iter().map(|l| num(l[k])).collect();
                    animate(&mut s, name, &values);
                }
                s.push_str("</line></g>\n");
            } else {
                s.push_str("/></g>\n");
            }
        }
        s.push_str("<g class=\"impacts\">\n");
        // Impact points: hidden until their time in every loop.
        for (&p, &t) in scene.contacts.iter().zip(self.impact_times) {
            let f = self.fraction(t);
            let _ = write!(
                s,
                r#"<circle class="impact" data-t="{t:?}" cx="{}" cy="{}" r="{}" fill="{IMPACT}" fill-opacity="0.8""#,
                num(p[0]),
                num(p[1]),
                num(MARKER_PX / view.scale),
            );
            if !animated || f == 0.0 {
                s.push_str(" visibility=\"visible\"/>\n");
            } else {
                let _ = writeln!(
                    s,
                    r#" visibility="hidden"><animate attributeName="visibility" dur="{dur}" repeatCount="indefinite" calcMode="discrete" keyTimes="0;{}" values="hidden;visible"/></circle>"#,
                    key(f)
                );
            }
        }
        s.push_str("</g>\n</g>\n</svg>\n");
        // The elapsed time: a bar filling in one loop.
        let bar_y = HEADER + ph + BELOW + 8.0;
        let _ = writeln!(
            s,
            r##"<rect x="{LEFT}" y="{y}" width="{w}" height="6" fill="none" stroke="#999999"/>
<rect class="time" x="{LEFT}" y="{y}" width="{w0}" height="6" fill="#999999">"##,
            y = num(bar_y),
            w = num(pw),
            w0 = if animated { "0".to_string() } else { num(pw) },
        );
        if animated {
            let _ = writeln!(
                s,
                r#"<animate attributeName="width" dur="{dur}" repeatCount="indefinite" values="0;{}"/>"#,
                num(pw)
            );
        }
        s.push_str("</rect>\n</svg>\n");
        s
    }

    /// The frames a poster of `count` panels shows: evenly spread over the
    /// animation's frames, first and last included.
    fn poster_frames(&self, count: usize) -> Vec<usize> {
        let n = self.times.len();
        let count = count.clamp(1, n);
        if count == 1 {
            return vec![0];
        }
        let mut out: Vec<usize> = (0..count)
            .map(|k| ((k * (n - 1)) as f64 / (count - 1) as f64).round() as usize)
            .collect();
        out.dedup();
        out
    }

    /// Where a poster of `count` panels puts what.
    fn poster_layout(&self, model: &str, count: usize) -> PosterLayout {
        let view = &self.view;
        let frames = self.poster_frames(count);
        let scale = POSTER_PANEL / view.w.max(view.h * VIEW.0 / VIEW.1);
        let (pw, ph) = (view.w * scale, view.h * scale);
        let (gap_x, gap_y) = (72.0, 64.0);
        let columns = frames.len().min(POSTER_COLUMNS);
        let rows = frames.len().div_ceil(POSTER_COLUMNS);
        let origins = (0..frames.len())
            .map(|k| {
                [
                    POSTER_LEFT + (k % POSTER_COLUMNS) as f64 * (pw + gap_x),
                    POSTER_TOP + (k / POSTER_COLUMNS) as f64 * (ph + gap_y),
                ]
            })
            .collect();
        let (t0, t1) = self.span();
        let impacts = self.scene.contacts.len();
        PosterLayout {
            title: format!(
                "{model}: {} frames of t = {} … {} s, {impacts} impact{}",
                frames.len(),
                num(t0),
                num(t1),
                if impacts == 1 { "" } else { "s" }
            ),
            width: POSTER_LEFT + columns as f64 * (pw + gap_x),
            height: POSTER_TOP + rows as f64 * (ph + gap_y),
            frames,
            scale,
            pw,
            ph,
            origins,
        }
    }

    /// The poster: a still strip of panels, each the plane at one frame
    /// (walls, the body's path so far, the body, its heading, the impacts
    /// so far) with its clock and axes.
    fn poster(&self, model: &str, count: usize) -> String {
        let scene = self.scene;
        let view = &self.view;
        let layout = self.poster_layout(model, count);
        let (scale, pw, ph) = (layout.scale, layout.pw, layout.ph);
        let mut s = String::new();
        svg_open(
            &mut s,
            layout.width,
            layout.height,
            (POSTER_LEFT, 24.0),
            &layout.title,
        );
        for (&i, &[x, y]) in layout.frames.iter().zip(&layout.origins) {
            let t = self.times[i];
            let _ = writeln!(
                s,
                r#"<g class="frame" data-t="{t:?}" data-index="{i}">
<text class="clock-frame" x="{}" y="{}" font-size="14" font-family="monospace" font-weight="bold">{}</text>"#,
                num(x),
                num(y - 8.0),
                escape(&self.clock(t))
            );
            s.push_str(&self.axes_svg(x, y, pw, ph, 10.0));
            let _ = writeln!(
                s,
                r#"<svg class="plane" x="{}" y="{}" width="{}" height="{}" viewBox="{}" data-scale="{}">
<g transform="scale(1,-1)">"#,
                num(x),
                num(y),
                num(pw),
                num(ph),
                view.view_box(),
                num(scale)
            );
            s.push_str(&self.walls_svg(scale));
            s.push_str("<g class=\"path\">\n");
            for (j, _) in scene.bodies[0].iter().enumerate() {
                let points: Vec<String> = scene.bodies[..=i]
                    .iter()
                    .map(|b| {
                        let p = poster_anchor(&b[j]);
                        format!("{},{}", num(p[0]), num(p[1]))
                    })
                    .collect();
                let _ = writeln!(
                    s,
                    r##"<polyline points="{}" fill="none" stroke="#aaaaaa" stroke-width="1" vector-effect="non-scaling-stroke"/>"##,
                    points.join(" ")
                );
            }
            s.push_str("</g>\n<g class=\"body\">\n");
            for shape in &scene.bodies[i] {
                s.push_str(&element(shape, view, &style(shape, BODY, scale)));
            }
            s.push_str("</g>\n");
            if let Some(h) = scene.headings.get(i) {
                let l = heading_line(h, self.heading_length);
                let _ = writeln!(
                    s,
                    r#"<g class="heading"><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{HEADING}" stroke-width="3" stroke-linecap="round" vector-effect="non-scaling-stroke"/></g>"#,
                    num(l[0]),
                    num(l[1]),
                    num(l[2]),
                    num(l[3])
                );
            }
            s.push_str("<g class=\"impacts\">\n");
            for (&p, &ti) in scene.contacts.iter().zip(self.impact_times) {
                if ti <= t {
                    let _ = writeln!(
                        s,
                        r#"<circle class="impact" data-t="{ti:?}" cx="{}" cy="{}" r="{}" fill="{IMPACT}" fill-opacity="0.8"/>"#,
                        num(p[0]),
                        num(p[1]),
                        num(MARKER_PX / scale)
                    );
                }
            }
            s.push_str("</g>\n</g>\n</svg>\n</g>\n");
        }
        s.push_str("</svg>\n");
        s
    }

    /// The poster as a PNG: the panels of [`Picture::poster`] at the same
    /// places and sizes (1 px per SVG unit), rasterised by
    /// [`crate::raster`]; its text in the built-in bitmap font.
    fn poster_png(&self, model: &str, count: usize) -> Vec<u8> {
        let scene = self.scene;
        let view = &self.view;
        let layout = self.poster_layout(model, count);
        let (scale, pw, ph) = (layout.scale, layout.pw, layout.ph);
        let mut c = Canvas::new(layout.width.ceil() as usize, layout.height.ceil() as usize);
        let style = |size, anchor, bold, color: &str| TextStyle {
            size,
            anchor,
            bold,
            color: rgb(color),
        };
        let title = style(16.0, Anchor::Start, false, "#000000");
        c.text([POSTER_LEFT, 24.0], &layout.title, title);
        for (&i, &[x, y]) in layout.frames.iter().zip(&layout.origins) {
            let t = self.times[i];
            let clock = style(14.0, Anchor::Start, true, "#000000");
            c.text([x, y - 8.0], &self.clock(t), clock);
            self.axes_png(&mut c, [x, y, pw, ph], 10.0);
            c.clip(Some([x, y, pw, ph]));
            let px = |p: [f64; 2]| {
                [
                    x + (p[0] - view.x0) * scale,
                    y + ph - (p[1] - view.y0) * scale,
                ]
            };
            for w in &self.walls {
                draw_shape(&mut c, w, view, &px, scale, rgb(WALL), true);
            }
            for (j, _) in scene.bodies[0].iter().enumerate() {
                let path: Vec<[f64; 2]> = scene.bodies[..=i]
                    .iter()
                    .map(|b| px(poster_anchor(&b[j])))
                    .collect();
                for pair in path.windows(2) {
                    c.line(pair[0], pair[1], 1.0, rgb("#aaaaaa"), 1.0);
                }
            }
            for shape in &scene.bodies[i] {
                draw_shape(&mut c, shape, view, &px, scale, rgb(BODY), false);
            }
            if let Some(h) = scene.headings.get(i) {
                let l = heading_line(h, self.heading_length);
                c.line(px([l[0], l[1]]), px([l[2], l[3]]), 3.0, rgb(HEADING), 1.0);
            }
            for (&p, &ti) in scene.contacts.iter().zip(self.impact_times) {
                if ti <= t {
                    c.fill_circle(px(p), MARKER_PX, rgb(IMPACT), 0.8);
                }
            }
            c.clip(None);
        }
        c.png()
    }

    /// The axes of [`Picture::axes_svg`] drawn on a canvas: the frame
    /// `[x, y, pw, ph]` (px), ticks and labels in the scene's unit.
    fn axes_png(&self, c: &mut Canvas, [x, y, pw, ph]: [f64; 4], font: f64) {
        let v = &self.view;
        let scale = pw / v.w;
        let frame = rgb("#999999");
        let label = |anchor| TextStyle {
            size: font,
            anchor,
            bold: false,
            color: rgb("#555555"),
        };
        let corners = [[x, y], [x + pw, y], [x + pw, y + ph], [x, y + ph]];
        for (k, &a) in corners.iter().enumerate() {
            c.line(a, corners[(k + 1) % 4], 1.0, frame, 1.0);
        }
        for (value, text) in ticks(v.x0, v.w) {
            let px = x + (value - v.x0) * scale;
            c.line([px, y + ph], [px, y + ph + TICK_PX], 1.0, frame, 1.0);
            let ty = y + ph + TICK_PX + font + 1.0;
            c.text([px, ty], &text, label(Anchor::Middle));
        }
        for (value, text) in ticks(v.y0, v.h) {
            let py = y + ph - (value - v.y0) * scale;
            c.line([x - TICK_PX, py], [x, py], 1.0, frame, 1.0);
            let (tx, ty) = (x - TICK_PX - 2.0, py + 0.35 * font);
            c.text([tx, ty], &text, label(Anchor::End));
        }
        let unit = &self.scene.unit;
        let by = y + ph + TICK_PX + 2.0 * font + 6.0;
        let x_label = format!("{} ({unit})", self.scene.axes[0]);
        c.text([x + 0.5 * pw, by], &x_label, label(Anchor::Middle));
        let lx = x - TICK_PX - 4.0 * font;
        c.text_up(
            lx,
            y + 0.5 * ph,
            font,
            &format!("{} ({unit})", self.scene.axes[1]),
            rgb("#555555"),
        );
    }
}

/// Where a poster puts what: the frames shown, the title, the document's
/// size (px), the plane's scale (px per unit), a panel's size (px) and the
/// top-left corner of each panel's plane.
struct PosterLayout {
    frames: Vec<usize>,
    title: String,
    width: f64,
    height: f64,
    scale: f64,
    pw: f64,
    ph: f64,
    origins: Vec<[f64; 2]>,
}

/// The point of a body shape whose path a poster draws: a dot's or a
/// circle's centre, a closed outline's vertex mean, an open polyline's
/// last point, a line's given point.
fn poster_anchor(shape: &Shape) -> [f64; 2] {
    match shape {
        Shape::Dot(p) => *p,
        Shape::Circle { center, .. } => *center,
        Shape::Polyline {
            points,
            closed: true,
        } => {
            let n = points.len() as f64;
            let sum = points
                .iter()
                .fold([0.0, 0.0], |a, p| [a[0] + p[0], a[1] + p[1]]);
            [sum[0] / n, sum[1] / n]
        }
        Shape::Polyline { points, .. } => points[points.len() - 1],
        Shape::Line { point, .. } => *point,
    }
}

/// Draw a shape on a canvas as [`style`] (a body) or [`wall_style`] (a
/// wall) draws it in SVG: dots filled, the rest stroked 2 px (walls 3 px),
/// a body's closed outline lightly filled; `px` maps the plane to pixels,
/// `scale` px per unit.
fn draw_shape(
    c: &mut Canvas,
    shape: &Shape,
    view: &View,
    px: &dyn Fn([f64; 2]) -> [f64; 2],
    scale: f64,
    color: Rgb,
    wall: bool,
) {
    let width = if wall { 3.0 } else { 2.0 };
    match shape {
        Shape::Dot(p) => c.fill_circle(px(*p), DOT_PX, color, 1.0),
        Shape::Circle { center, radius } => {
            c.stroke_circle(px(*center), radius * scale, width, color);
        }
        Shape::Polyline { points, closed } => {
            let p: Vec<[f64; 2]> = points.iter().map(|&q| px(q)).collect();
            if *closed && !wall {
                c.fill_polygon(&p, color, 0.15);
            }
            for pair in p.windows(2) {
                c.line(pair[0], pair[1], width, color, 1.0);
            }
            if *closed && let (Some(&a), Some(&b)) = (p.last(), p.first()) {
                c.line(a, b, width, color, 1.0);
            }
        }
        Shape::Line { point, direction } => {
            let [a, b] = view.segment(*point, *direction);
            c.line(px(a), px(b), width, color, 1.0);
        }
    }
}
