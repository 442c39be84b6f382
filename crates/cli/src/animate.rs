//! `--animate FILE.svg`: the motion of a planar model as one self-contained
//! animated SVG that a browser plays without script (SMIL `<animate>`).
//!
//! The model describes (its [`Drawing`]: walls, body at `q`, contact
//! points), this module renders: the walls drawn still, the body's shapes
//! moving through at most [`MAX_FRAMES`] recorded configurations evenly
//! spaced in time, each impact point appearing at its impact time, a bar
//! showing the elapsed time. Plane coordinates are the SVG user units of
//! the picture (`y` up: the picture is flipped), so the animation's values
//! are the model's numbers. The play length is the simulated time clamped
//! to [`MIN_PLAY_SECONDS`]–[`MAX_PLAY_SECONDS`], and the animation loops.

use crate::output::output_failure;
use crate::output::{ImpactRecord, RecordSink, RecordView, Staged, Target};
use anyhow::{Result, anyhow, bail};
use diracvi_models::{Drawing, ModelVisitor, NamedSystem, RunSetup, Scenario, Shape, catalogue};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// Most body frames in an animation (the first and last records always
/// among them); bounds the file size whatever the number of steps.
pub const MAX_FRAMES: usize = 600;
/// Shortest play length (s) of one loop.
pub const MIN_PLAY_SECONDS: f64 = 5.0;
/// Longest play length (s) of one loop.
pub const MAX_PLAY_SECONDS: f64 = 30.0;
/// Largest width and height (px) of the picture of the plane.
const VIEW: (f64, f64) = (800.0, 600.0);
/// Smallest width and height (px) of that picture.
const MIN_VIEW: f64 = 200.0;
/// Room (px) above the picture, for the title.
const HEADER: f64 = 36.0;
/// Room (px) below the picture, for the time bar.
const FOOTER: f64 = 36.0;
/// Room (px) on each side of the picture.
const SIDE: f64 = 12.0;
/// Radius (px) of a dot of the body.
const DOT_PX: f64 = 5.0;
/// Radius (px) of an impact marker.
const MARKER_PX: f64 = 4.0;

/// Check `--animate`'s extension and path (before the run).
///
/// # Errors
/// A usage error naming the path.
pub fn check(path: &Path) -> Result<Target> {
    crate::output::check_svg(path, "--animate", "animate")
}

/// Whether the model of a scenario has a planar drawing.
struct HasPicture;

impl ModelVisitor for HasPicture {
    type Output = bool;
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        _setup: &RunSetup<N>,
    ) -> bool {
        model.picture().is_some()
    }
}

/// Refuse `--animate` (a usage error) for a model without a drawing.
///
/// # Errors
/// A usage error naming the model and the models that can be animated.
pub fn check_drawable(scenario: &Scenario) -> Result<()> {
    if scenario.circuit.is_some() {
        return Err(no_circuits());
    }
    // Model files carry no drawing (they run on the run-time-sized core).
    if scenario.file.is_none() && scenario.visit(HasPicture)? {
        return Ok(());
    }
    let drawable: Vec<&str> = catalogue()
        .iter()
        .filter(|m| {
            Scenario::defaults(m.name)
                .and_then(|s| s.visit_catalogue(HasPicture))
                .unwrap_or(false)
        })
        .map(|m| m.name)
        .collect();
    bail!(
        "--animate: model '{}' has no planar drawing (models with one: {})",
        scenario.model,
        drawable.join(", ")
    )
}

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

/// What the model draws of a run: its walls, the body at every frame and
/// the impact points `(t, point)`.
struct Scene {
    walls: Vec<Shape>,
    bodies: Vec<Vec<Shape>>,
    impacts: Vec<(f64, [f64; 2])>,
}

/// The visitor asking the model for its [`Scene`].
struct Draw<'a> {
    frames: &'a [(f64, Vec<f64>)],
    impacts: &'a [ImpactRecord],
}

impl ModelVisitor for Draw<'_> {
    type Output = Option<Scene>;
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Option<Scene> {
        let drawing: &dyn Drawing<N> = model.picture()?;
        // A configuration vector of the model's size (the records' `q`
        // have `N` components).
        let q = |v: &[f64]| {
            let mut q = setup.q0;
            for (qi, &vi) in q.iter_mut().zip(v) {
                *qi = vi;
            }
            q
        };
        Some(Scene {
            walls: drawing.walls(),
            bodies: self
                .frames
                .iter()
                .map(|(_, v)| drawing.body(&q(v)))
                .collect(),
            impacts: self
                .impacts
                .iter()
                .map(|i| (i.t, drawing.contact(&q(&i.q), i.piece)))
                .collect(),
        })
    }
}

fn animation_error(message: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(crate::OutputFailure(format!(
        "cannot draw the animation: {message}"
    )))
}

/// Draw the collected frames and the impacts of `scenario`'s run into
/// `file` and flush it to disk, ready to commit.
///
/// # Errors
/// An [`OutputFailure`](crate::OutputFailure): a model whose body changes
/// shape between frames, a non-finite coordinate, a write that fails.
pub fn render(
    mut collector: AnimationCollector,
    scenario: &Scenario,
    impacts: &[ImpactRecord],
    mut file: Staged,
) -> Result<Staged> {
    collector.finish();
    let scene = scenario
        .visit(Draw {
            frames: &collector.frames,
            impacts,
        })?
        .ok_or_else(|| animation_error(format!("model '{}' has no drawing", scenario.model)))?;
    let times: Vec<f64> = collector.frames.iter().map(|f| f.0).collect();
    let svg = svg(&scenario.model, &times, &scene)?;
    let target = file.target().to_path_buf();
    file.file()
        .write_all(svg.as_bytes())
        .and_then(|()| file.file().flush())
        .map_err(|e| output_failure(&target, e))?;
    file.sync()?;
    Ok(file)
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

/// The points that must be in view of a shape (a line: its given point).
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

/// The plane box in view and the scale (px per metre).
#[derive(Debug, Clone, Copy)]
struct View {
    x0: f64,
    y0: f64,
    w: f64,
    h: f64,
    scale: f64,
}

impl View {
    /// The box around `points` with a margin of 8 % of its larger side
    /// (at least 1e-3 of the coordinates' magnitude, at least 1e-9 m), widened
    /// so that neither side is drawn smaller than [`MIN_VIEW`] px.
    fn around(points: impl Iterator<Item = [f64; 2]>) -> View {
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for p in points {
            for i in 0..2 {
                lo[i] = lo[i].min(p[i]);
                hi[i] = hi[i].max(p[i]);
            }
        }
        if lo[0] > hi[0] {
            (lo, hi) = ([-1.0; 2], [1.0; 2]);
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

/// The same kind of shape, with as many points (the [`Drawing`] contract).
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
/// lightly filled).
fn style(shape: &Shape, color: &str, view: &View) -> String {
    match shape {
        Shape::Dot(_) => format!(
            r#" r="{}" fill="{color}" stroke="none""#,
            num(DOT_PX / view.scale)
        ),
        Shape::Polyline { closed: true, .. } => format!(
            r#" fill="{color}" fill-opacity="0.15" stroke="{color}" stroke-width="2" stroke-linejoin="round" vector-effect="non-scaling-stroke""#
        ),
        _ => format!(
            r#" fill="none" stroke="{color}" stroke-width="2" stroke-linecap="round" vector-effect="non-scaling-stroke""#
        ),
    }
}

/// The SVG document.
fn svg(model: &str, times: &[f64], scene: &Scene) -> Result<String> {
    for w in &scene.walls {
        check_shape(w, "a wall")?;
    }
    let first = scene
        .bodies
        .first()
        .ok_or_else(|| animation_error("the run recorded no configuration"))?;
    for (body, &t) in scene.bodies.iter().zip(times) {
        let at = format!("the body at t = {t}");
        if body.len() != first.len() || body.iter().zip(first).any(|(a, b)| !same_structure(a, b)) {
            return Err(animation_error(format!(
                "{at} has other shapes than at t = {}: a drawing must keep its shapes",
                times[0]
            )));
        }
        for s in body {
            check_shape(s, &at)?;
        }
    }
    for &(t, p) in &scene.impacts {
        check_shape(&Shape::Dot(p), &format!("the impact point at t = {t}"))?;
    }
    let view = View::around(
        scene
            .walls
            .iter()
            .chain(scene.bodies.iter().flatten())
            .flat_map(shape_points)
            .chain(scene.impacts.iter().map(|i| i.1)),
    );

    // Time: fraction of the loop at each frame; play length.
    let (t0, t1) = (times[0], times[times.len() - 1]);
    let span = t1 - t0;
    let fraction = |t: f64| {
        if span == 0.0 {
            0.0
        } else {
            ((t - t0) / span).clamp(0.0, 1.0)
        }
    };
    let play = span.abs().clamp(MIN_PLAY_SECONDS, MAX_PLAY_SECONDS);
    let dur = format!("{}s", num(play));
    let animated = times.len() > 1 && span != 0.0;
    let key_times: String = {
        let mut k: Vec<String> = times.iter().map(|&t| key(fraction(t))).collect();
        if let (Some(a), true) = (k.first_mut(), animated) {
            *a = "0".into();
        }
        if let (Some(b), true) = (k.last_mut(), animated) {
            *b = "1".into();
        }
        k.join(";")
    };

    let (pw, ph) = (view.w * view.scale, view.h * view.scale);
    let (width, height) = (pw + 2.0 * SIDE, HEADER + ph + FOOTER);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif">
<title>{title}</title>
<rect width="{w}" height="{h}" fill="white"/>
<text x="{SIDE}" y="24" font-size="16">{title}</text>"#,
        w = num(width),
        h = num(height),
        title = escape(&format!(
            "{model}: t = {} … {} s, {} impact{} (played in {} s, looping)",
            num(t0),
            num(t1),
            scene.impacts.len(),
            if scene.impacts.len() == 1 { "" } else { "s" },
            num(play)
        )),
    );
    // The plane: user units are metres, y flipped up.
    let _ = writeln!(
        s,
        r#"<svg class="plane" x="{SIDE}" y="{HEADER}" width="{}" height="{}" viewBox="{} {} {} {}" data-scale="{}">
<g transform="scale(1,-1)">"#,
        num(pw),
        num(ph),
        num(view.x0),
        num(-(view.y0 + view.h)),
        num(view.w),
        num(view.h),
        num(view.scale),
    );
    s.push_str("<g class=\"walls\">\n");
    for w in &scene.walls {
        let (element, attributes) = geometry(w, &view);
        s.push('<');
        s.push_str(element);
        for (name, value) in &attributes {
            let _ = write!(s, r#" {name}="{value}""#);
        }
        let style = match w {
            Shape::Dot(_) => style(w, "#333333", &view),
            _ => r##" fill="none" stroke="#333333" stroke-width="3" vector-effect="non-scaling-stroke""##
                .to_string(),
        };
        let _ = writeln!(s, "{style}/>");
    }
    s.push_str("</g>\n<g class=\"body\">\n");
    for (i, shape) in first.iter().enumerate() {
        let (element, attributes) = geometry(shape, &view);
        s.push('<');
        s.push_str(element);
        for (name, value) in &attributes {
            let _ = write!(s, r#" {name}="{value}""#);
        }
        s.push_str(&style(shape, "#1f77b4", &view));
        if !animated {
            s.push_str("/>\n");
            continue;
        }
        s.push_str(">\n");
        // One <animate> per moving attribute, its values frame by frame.
        let frames: Vec<Vec<(&'static str, String)>> = scene
            .bodies
            .iter()
            .map(|body| geometry(&body[i], &view).1)
            .collect();
        for (a, (name, _)) in attributes.iter().enumerate() {
            let values: Vec<&str> = frames.iter().map(|f| f[a].1.as_str()).collect();
            let _ = writeln!(
                s,
                r#"<animate attributeName="{name}" dur="{dur}" repeatCount="indefinite" calcMode="linear" keyTimes="{key_times}" values="{}"/>"#,
                values.join(";")
            );
        }
        let _ = writeln!(s, "</{element}>");
    }
    s.push_str("</g>\n<g class=\"impacts\">\n");
    // Impact points: hidden until their time in every loop.
    for &(t, p) in &scene.impacts {
        let f = fraction(t);
        let _ = write!(
            s,
            r##"<circle class="impact" data-t="{t:?}" cx="{}" cy="{}" r="{}" fill="#d62728" fill-opacity="0.8""##,
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
    let bar_y = HEADER + ph + 14.0;
    let _ = writeln!(
        s,
        r##"<rect x="{SIDE}" y="{y}" width="{w}" height="6" fill="none" stroke="#999999"/>
<rect class="time" x="{SIDE}" y="{y}" width="{w0}" height="6" fill="#999999">"##,
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
    Ok(s)
}

/// The error of `--animate` with a circuit.
fn no_circuits() -> anyhow::Error {
    anyhow!("--animate is not available for circuits (a circuit has no planar drawing)")
}
