//! `diracvi run … --animate FILE.svg`, end to end: the SVG is parsed (a
//! small strict XML reader below: the workspace has no XML parser) and
//! compared with the run's own CSV trajectory and impacts file — the walls,
//! the body's animated values at their key times against the recorded
//! configurations (through the plane geometry of each model, written out
//! here independently of the models' drawing code), one marker per impact
//! appearing at its impact time and lying on the wall it hit — plus the
//! refusals (no drawing, circuits, wrong extension) and that a failed run
//! leaves no file.

mod common;

use common::{check_failure, run_in};
use std::collections::HashMap;
use std::path::Path;

/// Numbers in the SVG carry 7 decimals, key times 9.
const TOL: f64 = 1e-6;

/// Bit-for-bit equality (numbers that are printed exactly: the shortest
/// round-trip form, or a constant).
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits()
}

// ------------------------------------------------------------- XML reader

/// An element: name, attributes, children.
#[derive(Debug)]
struct Element {
    name: String,
    attributes: HashMap<String, String>,
    children: Vec<Element>,
}

impl Element {
    fn attr(&self, name: &str) -> &str {
        self.attributes
            .get(name)
            .unwrap_or_else(|| panic!("<{}> has no attribute {name}", self.name))
    }

    fn num(&self, name: &str) -> f64 {
        self.attr(name).parse().expect("a number")
    }

    /// Every element below (and including) this one, depth first.
    fn all(&self) -> Vec<&Element> {
        let mut out = vec![self];
        for c in &self.children {
            out.extend(c.all());
        }
        out
    }

    /// The first descendant `<g>` (or other element) of class `class`.
    fn class(&self, class: &str) -> &Element {
        self.all()
            .into_iter()
            .find(|e| e.attributes.get("class").map(String::as_str) == Some(class))
            .unwrap_or_else(|| panic!("no element of class {class}"))
    }

    /// The `<animate>` child moving `attribute`.
    fn animation(&self, attribute: &str) -> &Element {
        self.children
            .iter()
            .find(|c| c.name == "animate" && c.attr("attributeName") == attribute)
            .unwrap_or_else(|| panic!("<{}> has no animation of {attribute}", self.name))
    }
}

/// Parse a whole XML document strictly: one root element, every tag
/// closed in order, attributes quoted and not repeated, only the five
/// predefined entities; text content is skipped.
fn parse(xml: &str) -> Element {
    let mut rest = xml.trim_start();
    if let Some(after) = rest.strip_prefix("<?xml") {
        rest = &after[after.find("?>").expect("declaration closed") + 2..];
    }
    let (root, tail) = element(rest.trim_start());
    assert!(tail.trim().is_empty(), "content after the root: {tail:.80}");
    root
}

fn check_text(text: &str) {
    let mut s = text;
    while let Some(i) = s.find('&') {
        let entity = &s[i..s[i..].find(';').map(|j| i + j + 1).expect("entity closed")];
        assert!(
            ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"].contains(&entity),
            "unknown entity {entity}"
        );
        s = &s[i + entity.len()..];
    }
    assert!(!text.contains('<'), "stray '<' in {text:.80}");
}

/// One element starting at `s` (which begins with `<`); returns it and the
/// rest.
fn element(s: &str) -> (Element, &str) {
    let s = s.strip_prefix('<').expect("an element");
    let end = s
        .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
        .expect("tag name");
    let name = s[..end].to_string();
    assert!(!name.is_empty(), "empty tag name");
    let mut rest = &s[end..];
    let mut attributes = HashMap::new();
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("/>") {
            let e = Element {
                name,
                attributes,
                children: Vec::new(),
            };
            return (e, r);
        }
        if let Some(r) = rest.strip_prefix('>') {
            rest = r;
            break;
        }
        let eq = rest.find('=').expect("attribute =");
        let key = rest[..eq].trim().to_string();
        assert!(
            !key.is_empty() && !key.contains(char::is_whitespace),
            "bad attribute name {key:?}"
        );
        let r = rest[eq + 1..].trim_start();
        let quote = r.chars().next().expect("attribute value");
        assert!(quote == '"' || quote == '\'', "unquoted attribute {key}");
        let close = r[1..].find(quote).expect("attribute closed") + 1;
        let value = &r[1..close];
        check_text(value);
        assert!(
            attributes.insert(key.clone(), value.to_string()).is_none(),
            "attribute {key} repeated in <{name}>"
        );
        rest = &r[close + 1..];
    }
    let mut children = Vec::new();
    loop {
        let lt = rest.find('<').expect("element closed");
        check_text(&rest[..lt]);
        rest = &rest[lt..];
        if let Some(r) = rest.strip_prefix("</") {
            let gt = r.find('>').expect("end tag closed");
            assert_eq!(r[..gt].trim(), name, "end tag matches");
            let e = Element {
                name,
                attributes,
                children,
            };
            return (e, &r[gt + 1..]);
        }
        let (child, r) = element(rest);
        children.push(child);
        rest = r;
    }
}

#[test]
fn the_xml_reader_rejects_malformed_documents() {
    for bad in [
        "<a><b></a>",
        "<a x=1/>",
        "<a x=\"1\" x=\"2\"/>",
        "<a>&nbsp;</a>",
        "<a></a><b/>",
        "<a>",
    ] {
        let caught = std::panic::catch_unwind(|| parse(bad));
        assert!(caught.is_err(), "accepted {bad}");
    }
    let ok = parse("<?xml version=\"1.0\"?>\n<a k='v &amp; w'><b/>text<c x=\"1\"></c></a>");
    assert_eq!(ok.children.len(), 2);
    assert_eq!(ok.attr("k"), "v &amp; w");
}

// ------------------------------------------------------------ the runs

/// A CSV file as rows of numbers (header dropped).
fn csv(path: &Path) -> Vec<Vec<f64>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect()
}

/// `values` of an animation: one list of numbers per frame (`points`
/// flattened).
fn frames(animation: &Element) -> Vec<Vec<f64>> {
    animation
        .attr("values")
        .split(';')
        .map(|v| {
            v.split([' ', ','])
                .filter(|x| !x.is_empty())
                .map(|x| x.parse().unwrap())
                .collect()
        })
        .collect()
}

fn key_times(animation: &Element) -> Vec<f64> {
    animation
        .attr("keyTimes")
        .split(';')
        .map(|x| x.parse().unwrap())
        .collect()
}

/// What a run drew, read back, next to its CSV files.
struct Run {
    svg: Element,
    /// Trajectory rows: `k, t, q…, p…, energy, residual`.
    rows: Vec<Vec<f64>>,
    /// Impact rows: `step, alpha, t, piece, q…, …`.
    impacts: Vec<Vec<f64>>,
    /// One loop's play length (s).
    dur: f64,
}

impl Run {
    fn new(model: &str, extra: &[&str]) -> Run {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["run", model, "--out", "r.csv", "--animate", "r.svg", "-q"];
        args.extend(extra);
        let out = run_in(dir.path(), &args);
        assert_eq!(out.code, 0, "{model}: {}", out.stderr);
        let text = std::fs::read_to_string(dir.path().join("r.svg")).unwrap();
        assert!(text.len() < 1 << 20, "file size bounded: {}", text.len());
        let svg = parse(&text);
        assert_eq!(svg.name, "svg");
        assert_eq!(svg.attr("xmlns"), "http://www.w3.org/2000/svg");
        let rows = csv(&dir.path().join("r.csv"));
        let impacts = csv(&dir.path().join("r.impacts.csv"));
        let t_end = rows.last().unwrap()[1];
        let body = svg.class("body");
        let dur: f64 = body.children[0].children[0]
            .attr("dur")
            .strip_suffix('s')
            .unwrap()
            .parse()
            .unwrap();
        assert!(same(dur, t_end.abs().clamp(5.0, 30.0)), "play length {dur}");
        Run {
            svg,
            rows,
            impacts,
            dur,
        }
    }

    fn t_end(&self) -> f64 {
        self.rows.last().unwrap()[1]
    }

    /// The recorded row at key time `f` (the run starts at t = 0).
    fn row_at(&self, f: f64) -> &[f64] {
        let t = f * self.t_end();
        let row = self
            .rows
            .iter()
            .min_by(|a, b| (a[1] - t).abs().total_cmp(&(b[1] - t).abs()))
            .unwrap();
        assert!(
            (row[1] - t).abs() <= TOL,
            "key time {f} is t = {t}, no record there (nearest {})",
            row[1]
        );
        row
    }

    /// Check every animation of body shape `index` (its attributes
    /// `names`): common key times evenly spaced in time (the last may be
    /// closer), first 0 and last 1, at most 600 frames; then `expected`
    /// (the attribute values from a recorded configuration `q`) against
    /// every frame.
    fn check_body(&self, index: usize, names: &[&str], expected: impl Fn(&[f64]) -> Vec<f64>) {
        let shape = &self.svg.class("body").children[index];
        let n = (self.rows[0].len() - 4) / 2;
        let mut all: Vec<Vec<Vec<f64>>> = Vec::new();
        let mut keys = None;
        for name in names {
            let a = shape.animation(name);
            assert_eq!(a.attr("repeatCount"), "indefinite");
            assert_eq!(a.attr("dur"), format!("{}s", self.dur));
            let k = key_times(a);
            if let Some(first) = &keys {
                assert_eq!(&k, first, "one set of key times");
            }
            let f = frames(a);
            assert_eq!(f.len(), k.len(), "a value per key time");
            all.push(f);
            keys = Some(k);
        }
        let keys = keys.unwrap();
        assert!((2..=600).contains(&keys.len()), "{} frames", keys.len());
        assert_eq!((keys[0], *keys.last().unwrap()), (0.0, 1.0));
        let step = keys[1] - keys[0];
        for w in keys[..keys.len() - 1].windows(2) {
            assert!((w[1] - w[0] - step).abs() <= 1e-8, "even frames");
        }
        for (i, &f) in keys.iter().enumerate() {
            let row = self.row_at(f);
            let want = expected(&row[2..2 + n]);
            let got: Vec<f64> = all.iter().flat_map(|a| a[i].clone()).collect();
            assert_eq!(got.len(), want.len(), "numbers per frame");
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() <= TOL,
                    "at t = {}: {got:?} vs {want:?}",
                    row[1]
                );
            }
        }
    }

    /// Markers: one per impact, at its time (in the loop and as `data-t`),
    /// where `contact` (from the impact's row: piece, q) puts it.
    fn check_impacts(&self, contact: impl Fn(usize, &[f64]) -> [f64; 2]) {
        let n = (self.rows[0].len() - 4) / 2;
        let markers: Vec<&Element> = self
            .svg
            .class("impacts")
            .children
            .iter()
            .filter(|e| e.attr("class") == "impact")
            .collect();
        assert!(!self.impacts.is_empty(), "the run has impacts");
        assert_eq!(markers.len(), self.impacts.len(), "a marker per impact");
        for (m, imp) in markers.iter().zip(&self.impacts) {
            let t = imp[2];
            assert!(same(m.num("data-t"), t), "data-t is the impact time {t}");
            assert_eq!(m.attr("visibility"), "hidden");
            let a = m.animation("visibility");
            assert_eq!(a.attr("calcMode"), "discrete");
            assert_eq!(a.attr("values"), "hidden;visible");
            assert_eq!(a.attr("dur"), format!("{}s", self.dur));
            let k = key_times(a);
            assert_eq!(k.len(), 2);
            assert!(same(k[0], 0.0), "key times from 0");
            assert!((k[1] * self.t_end() - t).abs() <= TOL, "appears at t = {t}");
            let c = contact(imp[3] as usize, &imp[4..4 + n]);
            assert!(
                (m.num("cx") - c[0]).abs() <= TOL && (m.num("cy") - c[1]).abs() <= TOL,
                "marker at ({}, {}), contact {c:?}",
                m.num("cx"),
                m.num("cy")
            );
        }
    }

    fn walls(&self) -> Vec<&Element> {
        self.svg.class("walls").children.iter().collect()
    }
}

/// A wall drawn as a horizontal line `y = y0` across the whole view.
fn assert_horizontal_line(wall: &Element, y0: f64) {
    assert_eq!(wall.name, "line");
    assert_eq!((wall.num("y1"), wall.num("y2")), (y0, y0));
    assert!(wall.num("x2") - wall.num("x1") > 0.0);
}

#[test]
fn particle_animation_follows_the_trajectory() {
    let run = Run::new("particle", &[]);
    let walls = run.walls();
    assert_eq!(walls.len(), 1);
    assert_horizontal_line(walls[0], 0.0);
    // The floor spans the view.
    let plane = run.svg.class("plane");
    let vb: Vec<f64> = plane
        .attr("viewBox")
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(walls[0].num("x1") <= vb[0] && walls[0].num("x2") >= vb[0] + vb[2]);
    // Every recorded position is in view (y flipped).
    for r in &run.rows {
        assert!(vb[0] < r[2] && r[2] < vb[0] + vb[2], "x in view");
        assert!(vb[1] < -r[3] && -r[3] < vb[1] + vb[3], "y in view");
    }
    run.check_body(0, &["cx", "cy"], |q| vec![q[0], q[1]]);
    // The particle hits the floor where it is.
    run.check_impacts(|_, q| [q[0], q[1]]);
    for imp in &run.impacts {
        assert!(imp[5].abs() <= 1e-9, "impact on the floor: y = {}", imp[5]);
    }
}

#[test]
fn long_runs_are_cut_to_at_most_600_frames() {
    // 20 000 records: still at most 600 evenly spaced frames, the last
    // record the last frame.
    let run = Run::new("particle", &["--h", "1e-3", "--t-end", "20"]);
    assert_eq!(run.rows.len(), 20_001);
    run.check_body(0, &["cx", "cy"], |q| vec![q[0], q[1]]);
    assert!(same(run.dur, 20.0), "a 20 s run plays in 20 s");
}

#[test]
fn pendulum_is_seen_from_above() {
    let (l, r) = (2.0, 1.5);
    let run = Run::new("pendulum", &[]);
    let walls = run.walls();
    assert_eq!(walls.len(), 1);
    assert_eq!(walls[0].name, "circle");
    assert_eq!(
        (walls[0].num("cx"), walls[0].num("cy"), walls[0].num("r")),
        (0.0, 0.0, r)
    );
    let bob = |q: &[f64]| [l * q[0].sin() * q[1].cos(), l * q[0].sin() * q[1].sin()];
    // The rod from the pivot, then the bob.
    run.check_body(0, &["points"], |q| {
        let b = bob(q);
        vec![0.0, 0.0, b[0], b[1]]
    });
    run.check_body(1, &["cx", "cy"], |q| bob(q).to_vec());
    run.check_impacts(|_, q| bob(q));
    // Independently: every impact point lies on the cylinder.
    for m in run.svg.class("impacts").children.iter() {
        assert!((m.num("cx").hypot(m.num("cy")) - r).abs() <= TOL);
    }
}

#[test]
fn disk_table_rolls_inside_the_table() {
    let (radius, a) = (1.0, 5.0);
    let run = Run::new("disk-table", &["--t-end", "20"]);
    let walls = run.walls();
    assert_eq!(walls.len(), 1);
    assert!(same(walls[0].num("r"), a), "the table's radius");
    let rim = |q: &[f64], s: f64| {
        [
            q[0] + s * radius * q[3].cos(),
            q[1] + s * radius * q[3].sin(),
        ]
    };
    run.check_body(0, &["points"], |q| {
        let (r0, r1) = (rim(q, -1.0), rim(q, 1.0));
        vec![r0[0], r0[1], r1[0], r1[1]]
    });
    run.check_body(1, &["cx", "cy"], |q| vec![q[0], q[1]]);
    run.check_impacts(|piece, q| rim(q, if piece == 0 { 1.0 } else { -1.0 }));
    for m in run.svg.class("impacts").children.iter() {
        assert!(
            (m.num("cx").hypot(m.num("cy")) - a).abs() <= TOL,
            "on the edge"
        );
    }
}

#[test]
fn disk_wall_hits_the_wall() {
    let run = Run::new("disk-wall", &["--t-end", "10"]);
    let walls = run.walls();
    assert_eq!(walls.len(), 1);
    assert_horizontal_line(walls[0], 10.0);
    run.check_impacts(|piece, q| {
        let s = if piece == 0 { 1.0 } else { -1.0 };
        [q[0] + s * q[3].cos(), q[1] + s * q[3].sin()]
    });
    for m in run.svg.class("impacts").children.iter() {
        assert!((m.num("cy") - 10.0).abs() <= TOL, "on the wall");
    }
}

#[test]
fn ellipse_outline_is_the_ellipse() {
    let (a, b) = (1.0, 0.5);
    let run = Run::new("ellipse", &["--t-end", "6"]);
    assert_horizontal_line(run.walls()[0], 0.0);
    let outline = &run.svg.class("body").children[0];
    assert_eq!(outline.name, "polygon");
    let frames = frames(outline.animation("points"));
    let keys = key_times(outline.animation("points"));
    for (f, points) in keys.iter().zip(&frames) {
        let row = run.row_at(*f);
        let (theta, x, y) = (row[2], row[3], row[4]);
        assert!(points.len() >= 16);
        // Every outline point, turned back by −θ about the centre, lies on
        // (u/a)² + (w/b)² = 1.
        for p in points.chunks(2) {
            let (dx, dy) = (p[0] - x, p[1] - y);
            let (s, c) = theta.sin_cos();
            let (u, w) = (c * dx + s * dy, -s * dx + c * dy);
            let e = (u / a).powi(2) + (w / b).powi(2);
            assert!((e - 1.0).abs() <= 1e-5, "off the ellipse: {e}");
        }
    }
    run.check_body(1, &["cx", "cy"], |q| vec![q[1], q[2]]);
    // The impact points are on the floor and on the ellipse.
    let markers = &run.svg.class("impacts").children;
    assert_eq!(markers.len(), run.impacts.len());
    for (m, imp) in markers.iter().zip(&run.impacts) {
        let (theta, x, y) = (imp[4], imp[5], imp[6]);
        let (dx, dy) = (m.num("cx") - x, m.num("cy") - y);
        let (s, c) = theta.sin_cos();
        let (u, w) = (c * dx + s * dy, -s * dx + c * dy);
        assert!(((u / a).powi(2) + (w / b).powi(2) - 1.0).abs() <= 1e-5);
        assert!(m.num("cy").abs() <= TOL, "on the floor");
    }
}

#[test]
fn star_touches_the_floor_with_its_tips() {
    let run = Run::new("star", &["--t-end", "6"]);
    let markers = &run.svg.class("impacts").children;
    assert!(!markers.is_empty());
    assert_eq!(markers.len(), run.impacts.len());
    for m in markers.iter() {
        assert!(m.num("cy").abs() <= TOL, "a tip on the floor");
    }
    // The tips are at distance l√2 from the centre in every frame.
    let outline = &run.svg.class("body").children[0];
    let keys = key_times(outline.animation("points"));
    for (f, points) in keys.iter().zip(frames(outline.animation("points"))) {
        let row = run.row_at(*f);
        for tip in points.chunks(2).step_by(2) {
            let d = (tip[0] - row[3]).hypot(tip[1] - row[4]);
            assert!((d - 2f64.sqrt()).abs() <= TOL);
        }
    }
}

#[test]
fn models_without_a_drawing_and_circuits_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = run_in(d, &["run", "lc", "--animate", "a.svg"]);
    check_failure(
        &out,
        2,
        &["--animate", "model 'lc' has no planar drawing", "particle"],
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/particle.toml");
    let out = run_in(
        d,
        &[
            "run",
            "--model-file",
            root.to_str().unwrap(),
            "--animate",
            "a.svg",
        ],
    );
    check_failure(&out, 2, &["--animate", "has no planar drawing"]);
    let out = run_in(d, &["run", "lc-ladder", "--animate", "a.svg"]);
    check_failure(&out, 2, &["--animate is not available for circuits"]);
    let out = run_in(d, &["run", "particle", "--animate", "a.png"]);
    check_failure(&out, 2, &["--animate writes SVG"]);
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "no file left");
}

#[test]
fn a_failed_run_leaves_no_animation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("old.svg"), "old\n").unwrap();
    let out = run_in(
        d,
        &[
            "run",
            "pendulum",
            "--h",
            "0.5",
            "--steps",
            "10",
            "--animate",
            "old.svg",
            "--out",
            "f.csv",
        ],
    );
    check_failure(&out, 1, &[]);
    assert_eq!(std::fs::read_to_string(d.join("old.svg")).unwrap(), "old\n");
    let names: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["old.svg"], "no temporary, no trajectory");
}

#[test]
fn summaries_name_the_animation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = run_in(
        d,
        &[
            "run",
            "particle",
            "--t-end",
            "1",
            "--animate",
            "a.svg",
            "--summary",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["animate"], "a.svg");
    let out = run_in(
        d,
        &["run", "particle", "--t-end", "1", "--animate", "b.svg"],
    );
    assert!(out.stdout.contains("wrote: b.svg"), "{}", out.stdout);
}
