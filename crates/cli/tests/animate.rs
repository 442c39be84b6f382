//! `diracvi run … --animate FILE.svg`, end to end: the SVG is parsed (a
//! small strict XML reader below: the workspace has no XML parser) and
//! compared with the run's own CSV trajectory and impacts file — the walls,
//! the body's animated values at their key times against the recorded
//! configurations (through the plane geometry of each model, written out
//! here independently of the models' drawing code), one marker per impact
//! appearing at its impact time and lying on the wall it hit — plus the
//! refusals (no drawing, circuits, wrong extension) and that a failed run
//! leaves no file.

use crate::common;

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
    /// The text directly inside the element (entities left as written).
    text: String,
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

    /// Every descendant of class `class`.
    fn classes(&self, class: &str) -> Vec<&Element> {
        self.all()
            .into_iter()
            .filter(|e| e.attributes.get("class").map(String::as_str) == Some(class))
            .collect()
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
                text: String::new(),
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
    let mut text = String::new();
    loop {
        let lt = rest.find('<').expect("element closed");
        check_text(&rest[..lt]);
        text.push_str(&rest[..lt]);
        rest = &rest[lt..];
        if let Some(r) = rest.strip_prefix("</") {
            let gt = r.find('>').expect("end tag closed");
            assert_eq!(r[..gt].trim(), name, "end tag matches");
            let e = Element {
                name,
                attributes,
                children,
                text,
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
        let mut args = vec!["run", model];
        args.extend(extra);
        Self::with_args(&args).0
    }

    /// A run of `args` (with `--out r.csv --animate r.svg -q` added); also
    /// the poster (`p.svg`) when `args` ask for one.
    fn with_args(args: &[&str]) -> (Run, Option<Element>) {
        let dir = tempfile::tempdir().unwrap();
        let mut args = args.to_vec();
        args.extend(["--out", "r.csv", "--animate", "r.svg", "-q"]);
        let out = run_in(dir.path(), &args);
        let model = args.join(" ");
        assert_eq!(out.code, 0, "{model}: {}", out.stderr);
        let poster = std::fs::read_to_string(dir.path().join("p.svg"))
            .ok()
            .map(|t| parse(&t));
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
        let run = Run {
            svg,
            rows,
            impacts,
            dur,
        };
        (run, poster)
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
        self.check_animated(&self.svg.class("body").children[index], names, expected);
    }

    /// [`check_body`](Self::check_body) for any animated element.
    fn check_animated(
        &self,
        shape: &Element,
        names: &[&str],
        expected: impl Fn(&[f64]) -> Vec<f64>,
    ) {
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
    // A model file without [drawing] nor coordinates x and y: the message
    // says how to declare a drawing.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/pendulum.toml");
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
    check_failure(
        &out,
        2,
        &[
            "--animate",
            "pendulum.toml' has no [drawing] table, no orientation and no coordinates named x and y",
            "[[drawing.body]]",
            "docs/model-files.md",
        ],
    );
    let out = run_in(d, &["run", "particle", "--poster", "p.svg"]);
    assert_eq!(out.code, 2, "--poster without --animate: {}", out.stderr);
    // (poster file, further arguments, what the refusal says)
    for (poster, extra, message) in [
        (
            "a.svg",
            &[][..],
            "--poster 'a.svg' is also the --animate file",
        ),
        (
            "p.jpg",
            &[],
            "--poster writes SVG or PNG, use a .svg or .png file",
        ),
        ("no/p.png", &[], "no/p.png"),
        (
            "p.svg",
            &["--poster-frames", "0"],
            "--poster-frames must be between 1 and 24",
        ),
    ] {
        let mut args = vec!["run", "particle", "--animate", "a.svg", "--poster", poster];
        args.extend_from_slice(extra);
        let out = run_in(d, &args);
        check_failure(&out, 2, &[message]);
    }
    let out = run_in(d, &["run", "lc-ladder", "--animate", "a.svg"]);
    check_failure(&out, 2, &["--animate is not available for circuits"]);
    let out = run_in(d, &["run", "particle", "--animate", "a.png"]);
    check_failure(&out, 2, &["--animate writes SVG"]);
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "no file left");
}

#[test]
fn a_failed_run_leaves_no_animation() {
    for poster in ["p.svg", "p.png"] {
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
                "--poster",
                poster,
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
        assert_eq!(names, ["old.svg"], "{poster}: no temporary, no trajectory");
    }
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

// ------------------------------------------- every model, clock, poster

/// A heading line `[x1, y1, x2, y2]` from `q`.
type HeadingOf = fn(&[f64]) -> [f64; 4];

/// Where a model's moving dot is from `q` and which body shape draws it;
/// its heading line `[x1, y1, x2, y2]` when it has one. Written here from
/// each model's geometry, not from the drawing code.
struct Expected {
    /// `run` arguments naming the model.
    args: Vec<String>,
    /// Index of a dot of the body.
    dot: usize,
    position: fn(&[f64]) -> [f64; 2],
    heading: Option<HeadingOf>,
}

fn models_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models")
}

/// The heavy top's centre of mass `ℓ R(q) e3` (`ℓ = 0.1`, `q = (w, x, y,
/// z)`) in the cabinet projection `(X, Y, Z) ↦ (X + 0.35 Y, Z + 0.35 Y)`.
fn top_centre(q: &[f64]) -> [f64; 2] {
    let [w, x, y, z] = [q[0], q[1], q[2], q[3]];
    let axis = [
        2.0 * (x * z + w * y),
        2.0 * (y * z - w * x),
        w * w - x * x - y * y + z * z,
    ];
    [
        0.1 * (axis[0] + 0.35 * axis[1]),
        0.1 * (axis[2] + 0.35 * axis[1]),
    ]
}

/// The catalogue models with a drawing, and the shipped model files that
/// declare one: the model, its dot, its heading.
fn drawn_models() -> Vec<Expected> {
    let cat = |name: &str, dot, position, heading| Expected {
        args: vec![name.to_string()],
        dot,
        position,
        heading,
    };
    let file = |name: &str, dot, position, heading| Expected {
        args: vec![
            "--model-file".to_string(),
            models_dir().join(name).display().to_string(),
        ],
        dot,
        position,
        heading,
    };
    // A line from (x, y) along `angle`, `length` long.
    fn line(x: f64, y: f64, angle: f64, length: f64) -> [f64; 4] {
        [x, y, x + length * angle.cos(), y + length * angle.sin()]
    }
    vec![
        cat("particle", 0, |q| [q[0], q[1]], None),
        // θ, x, y; the heading is the body axis of semi-axis a = 1.
        cat(
            "ellipse",
            1,
            |q| [q[1], q[2]],
            Some(|q| line(q[1], q[2], q[0], 1.0)),
        ),
        // The star's heading: its first axis, l = 1.
        cat(
            "star",
            1,
            |q| [q[1], q[2]],
            Some(|q| line(q[1], q[2], q[0], 1.0)),
        ),
        // Seen from above: the bob at ℓ sinθ (cos φ, sin φ), ℓ = 2.
        cat(
            "pendulum",
            1,
            |q| {
                let r = 2.0 * q[0].sin();
                [r * q[1].cos(), r * q[1].sin()]
            },
            None,
        ),
        // x, y, θ, φ: the contact point, the heading along φ, 1.5 R (R = 1).
        cat(
            "disk-wall",
            1,
            |q| [q[0], q[1]],
            Some(|q| line(q[0], q[1], q[3], 1.5)),
        ),
        cat(
            "disk-table",
            1,
            |q| [q[0], q[1]],
            Some(|q| line(q[0], q[1], q[3], 1.5)),
        ),
        // x, y, θ: the knife edge, the heading 2a = 0.6 along θ.
        file(
            "sleigh.toml",
            1,
            |q| [q[0], q[1]],
            Some(|q| line(q[0], q[1], q[2], 0.6)),
        ),
        file(
            "ellipse.toml",
            1,
            |q| [q[1], q[2]],
            Some(|q| line(q[1], q[2], q[0], 1.0)),
        ),
        // θ1, θ2 with l1 = l2 = 1: the lower bob.
        file(
            "double-pendulum.toml",
            2,
            |q| [q[0].sin() + q[1].sin(), -q[0].cos() - q[1].cos()],
            None,
        ),
        // w, x, y, z: the centre of mass ℓ R(q) e3 (ℓ = 0.1) in the
        // cabinet projection (X, Y, Z) ↦ (X + 0.35 Y, Z + 0.35 Y).
        file("heavy-top.toml", 1, top_centre, None),
        cat("heavy-top", 1, top_centre, None),
        // x, y, qw, qx, qy, qz: seen from above, the centre of the ball.
        cat("chaplygin-sphere", 1, |q| [q[0], q[1]], None),
        file("chaplygin-sphere.toml", 1, |q| [q[0], q[1]], None),
    ]
}

/// The number in a clock's text `t = 1.25 s`.
fn clock_value(text: &str) -> f64 {
    text.strip_prefix("t = ")
        .and_then(|t| t.strip_suffix(" s"))
        .unwrap_or_else(|| panic!("clock text {text:?}"))
        .parse()
        .unwrap()
}

/// Decimals written in a clock's text.
fn clock_decimals(text: &str) -> i32 {
    let v = text.trim_start_matches("t = ").trim_end_matches(" s");
    v.split('.').nth(1).map_or(0, |d| d.len() as i32)
}

#[test]
fn every_drawn_model_animates_with_clock_heading_and_poster() {
    // Every shipped model file that declares a [drawing] is in the list.
    let mut declared: Vec<String> = std::fs::read_dir(models_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        // models/systems/ holds the parts of system files
        .filter(|p| p.is_file())
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .any(|l| l.trim() == "[drawing]")
        })
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    declared.sort();
    let models = drawn_models();
    let mut listed: Vec<String> = models
        .iter()
        .filter(|m| m.args[0] == "--model-file")
        .map(|m| {
            Path::new(&m.args[1])
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    listed.sort();
    assert_eq!(
        declared, listed,
        "the files with a [drawing] are all tested"
    );

    for m in &models {
        let mut args: Vec<&str> = vec!["run"];
        args.extend(m.args.iter().map(String::as_str));
        args.extend(["--t-end", "3", "--poster", "p.svg", "--poster-frames", "4"]);
        let (run, poster) = Run::with_args(&args);
        let name = &m.args[m.args.len() - 1];
        // Frames: one value per key time; one clock label per frame.
        let dot = &run.svg.class("body").children[m.dot];
        let keys = key_times(dot.animation("cx"));
        let labels = run.svg.classes("clock-frame");
        assert_eq!(labels.len(), keys.len(), "{name}: a clock label per frame");
        for (label, &f) in labels.iter().zip(&keys) {
            let t = label.num("data-t");
            let row = run.row_at(f);
            assert!((row[1] - t).abs() <= TOL, "{name}: label at t = {t}");
            // The text is t rounded to its decimals.
            let shown = clock_value(&label.text);
            let d = clock_decimals(&label.text);
            assert!(
                (shown - t).abs() <= 0.5 * 10f64.powi(-d) + 1e-12,
                "{name}: clock {:?} at t = {t}",
                label.text
            );
        }
        // The first label shows without SMIL, the others wait for their time.
        assert_eq!(labels[0].attr("visibility"), "visible");
        assert!(labels[1..].iter().all(|l| l.attr("visibility") == "hidden"));
        // Enough decimals to tell frames apart, no more than needed.
        assert!(
            same(clock_value(&labels[0].text), 0.0),
            "{name}: starts at 0"
        );
        let dt = run.t_end() / (labels.len() - 1) as f64;
        let d = clock_decimals(&labels[0].text);
        assert!(
            10f64.powi(-d) <= dt + 1e-12 && 10f64.powi(1 - d) > dt,
            "{name}: {d} decimals for frames {dt} s apart"
        );
        // Positions against the CSV (TOL: 7 decimals in the SVG).
        run.check_body(m.dot, &["cx", "cy"], |q| (m.position)(q).to_vec());
        // The heading line, where the model has one.
        let headings = run.svg.classes("heading");
        match m.heading {
            Some(h) => {
                assert_eq!(headings.len(), 1, "{name}: a heading");
                run.check_animated(&headings[0].children[0], &["x1", "y1", "x2", "y2"], |q| {
                    h(q).to_vec()
                });
            }
            None => assert!(headings.is_empty(), "{name}: no heading"),
        }
        // Axes: ticks in metres, inside the view, on both axes.
        let plane = run.svg.class("plane");
        let vb: Vec<f64> = plane
            .attr("viewBox")
            .split(' ')
            .map(|x| x.parse().unwrap())
            .collect();
        let ticks_x: Vec<f64> = run
            .svg
            .classes("tick-x")
            .iter()
            .map(|t| t.num("data-value"))
            .collect();
        let ticks_y: Vec<f64> = run
            .svg
            .classes("tick-y")
            .iter()
            .map(|t| t.num("data-value"))
            .collect();
        assert!(
            (3..=15).contains(&ticks_x.len()),
            "{name}: x ticks {ticks_x:?}"
        );
        assert!(
            (2..=15).contains(&ticks_y.len()),
            "{name}: y ticks {ticks_y:?}"
        );
        assert!(
            ticks_x
                .iter()
                .all(|&x| vb[0] - 1e-9 <= x && x <= vb[0] + vb[2] + 1e-9)
        );
        assert!(
            ticks_y
                .iter()
                .all(|&y| -vb[1] - vb[3] - 1e-9 <= y && y <= -vb[1] + 1e-9)
        );
        let labels: Vec<&str> = run
            .svg
            .classes("axis-label")
            .iter()
            .map(|l| l.text.as_str())
            .collect();
        assert_eq!(labels, ["x (m)", "y (m)"], "{name}");

        // The poster: 4 panels, first and last frame, each with its clock,
        // the body's dot where the CSV puts it, the impacts so far.
        let poster = poster.expect("a poster");
        let panels = poster.classes("frame");
        assert_eq!(panels.len(), 4, "{name}: poster panels");
        let times: Vec<f64> = panels.iter().map(|p| p.num("data-t")).collect();
        assert!(
            same(times[0], 0.0) && (times[3] - run.t_end()).abs() <= TOL,
            "{name}: {times:?}"
        );
        for p in &panels {
            let t = p.num("data-t");
            let clock = p.class("clock-frame");
            assert!(
                (clock_value(&clock.text) - t).abs()
                    <= 0.5 * 10f64.powi(-clock_decimals(&clock.text)) + 1e-12
            );
            assert!(
                p.all().iter().all(|e| e.name != "animate"),
                "{name}: a still poster"
            );
            let row = run.row_at(t / run.t_end());
            let n = (row.len() - 4) / 2;
            let want = (m.position)(&row[2..2 + n]);
            let dot = &p.class("body").children[m.dot];
            assert!(
                (dot.num("cx") - want[0]).abs() <= TOL && (dot.num("cy") - want[1]).abs() <= TOL,
                "{name}: poster dot at t = {t}"
            );
            let shown = p.class("impacts").children.len();
            let before = run.impacts.iter().filter(|i| i[2] <= t).count();
            assert_eq!(shown, before, "{name}: impacts up to t = {t}");
        }
    }
}

#[test]
fn the_view_fits_the_body_not_the_walls() {
    // The particle bounces along x over 10 m: the floor (an infinite line)
    // widens the view by at most 15 % of the path on each side, plus the
    // 8 % margin.
    let run = Run::new("particle", &[]);
    let xs: Vec<f64> = run.rows.iter().map(|r| r[2]).collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let vb: Vec<f64> = run
        .svg
        .class("plane")
        .attr("viewBox")
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    let path = hi - lo;
    assert!(
        vb[2] >= path && vb[2] <= path * (1.0 + 2.0 * 0.15) * 1.2,
        "view width {} for a {path} m path",
        vb[2]
    );
    // The disk rolling for 1 s stays far from its wall y = 10: the view
    // does not reach out to it.
    let run = Run::new("disk-wall", &["--t-end", "1"]);
    let ys: Vec<f64> = run.rows.iter().map(|r| r[3]).collect();
    let top = ys.iter().fold(f64::MIN, |a, &y| a.max(y));
    assert!(top + 1.5 < 5.0, "the disk stays below y = 5 (top {top})");
    let vb: Vec<f64> = run
        .svg
        .class("plane")
        .attr("viewBox")
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    // viewBox of the flipped plane: y from −(y0 + h) to −y0.
    assert!(
        -vb[1] < 10.0,
        "the view's top {} stays below the wall",
        -vb[1]
    );
    // The sleigh's arena (a zero set) is drawn near the sleigh.
    let sleigh = models_dir().join("sleigh.toml");
    let (run, _) = Run::with_args(&[
        "run",
        "--model-file",
        sleigh.to_str().unwrap(),
        "--t-end",
        "5",
    ]);
    let walls = run.walls();
    assert!(!walls.is_empty(), "the arena is drawn");
    for w in walls {
        assert_eq!(w.name, "polyline");
        for p in w.attr("points").split(' ') {
            let (x, y) = p.split_once(',').unwrap();
            let r = x.parse::<f64>().unwrap().hypot(y.parse().unwrap());
            // marching squares on a grid of 1/160 of the sampled box
            assert!((r - 2.0).abs() <= 0.05, "arena point at radius {r}");
        }
    }
}

// ------------------------------------------------------------ PNG poster

#[test]
fn png_poster_is_the_svg_poster_rasterised() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for poster in ["p.svg", "p.png"] {
        let out = run_in(
            d,
            &[
                "run",
                "ellipse",
                "--t-end",
                "6",
                "--animate",
                "a.svg",
                "--poster",
                poster,
                "--poster-frames",
                "4",
                "-q",
            ],
        );
        assert_eq!(out.code, 0, "{poster}: {}", out.stderr);
    }
    let svg = parse(&std::fs::read_to_string(d.join("p.svg")).unwrap());
    let bytes = std::fs::read(d.join("p.png")).unwrap();
    let (w, h, pixels) = decode_png(&bytes);
    // The same picture size, compressed (raw RGB would be 3 w h bytes).
    assert_eq!(
        (w, h),
        (
            svg.num("width").ceil() as usize,
            svg.num("height").ceil() as usize
        ),
        "PNG size = SVG size"
    );
    assert!(
        bytes.len() * 4 < 3 * w * h,
        "{} bytes for {w} x {h}",
        bytes.len()
    );
    let px = |x: f64, y: f64| {
        pixels[(y.max(0.0) as usize).min(h - 1) * w + (x.max(0.0) as usize).min(w - 1)]
    };
    // Pixels within `r` px of (x, y) for which `test` holds.
    let count = |x: f64, y: f64, r: f64, test: &dyn Fn([u8; 4]) -> bool| {
        let mut n = 0;
        let (x0, y0) = (x.floor() as i64, y.floor() as i64);
        let ri = r.ceil() as i64;
        for dy in -ri..=ri {
            for dx in -ri..=ri {
                if ((dx * dx + dy * dy) as f64) <= r * r
                    && test(px((x0 + dx) as f64, (y0 + dy) as f64))
                {
                    n += 1;
                }
            }
        }
        n
    };
    let blue = |p: [u8; 4]| p[2] > 140 && i32::from(p[2]) - i32::from(p[0]) > 80;
    let orange = |p: [u8; 4]| p[0] > 200 && p[1] > 90 && p[1] < 170 && p[2] < 80;
    let red = |p: [u8; 4]| p[0] > 180 && p[1] < 110 && p[2] < 110;
    let dark = |p: [u8; 4]| p[0] < 100 && p[1] < 100 && p[2] < 100;
    let panels = svg.classes("frame");
    assert_eq!(panels.len(), 4);
    let mut impacts_seen = 0;
    for p in &panels {
        let t = p.num("data-t");
        let plane = p.class("plane");
        let vb: Vec<f64> = plane
            .attr("viewBox")
            .split(' ')
            .map(|x| x.parse().unwrap())
            .collect();
        let scale = plane.num("data-scale");
        let (x, y, pw, ph) = (
            plane.num("x"),
            plane.num("y"),
            plane.num("width"),
            plane.num("height"),
        );
        let to_px = |u: f64, v: f64| (x + (u - vb[0]) * scale, y + (-v - vb[1]) * scale);
        // The ellipse's centre dot (radius 5 px) in the body's blue,
        // partly under the heading.
        let dot = &p.class("body").children[1];
        let (cx, cy) = to_px(dot.num("cx"), dot.num("cy"));
        let n = count(cx, cy, 4.0, &blue);
        assert!(n >= 15, "t = {t}: {n} blue pixels at the dot ({cx}, {cy})");
        // The heading: orange at its middle.
        let l = &p.class("heading").children[0];
        let (mx, my) = to_px(
            0.5 * (l.num("x1") + l.num("x2")),
            0.5 * (l.num("y1") + l.num("y2")),
        );
        let n = count(mx, my, 1.5, &orange);
        assert!(
            n >= 2,
            "t = {t}: {n} orange pixels at the heading's middle ({mx}, {my})"
        );
        // Each impact so far: a red marker.
        for i in p.class("impacts").children.iter() {
            let (ix, iy) = to_px(i.num("cx"), i.num("cy"));
            let n = count(ix, iy, 2.0, &red);
            assert!(n >= 5, "t = {t}: {n} red pixels at the impact ({ix}, {iy})");
            impacts_seen += 1;
        }
        // The walls: dark grey somewhere in the panel (#333333).
        let walls = (0..pw as usize)
            .flat_map(|i| (0..ph as usize).map(move |j| (i, j)))
            .filter(|&(i, j)| {
                let q = px(x + i as f64, y + j as f64);
                q[0] < 80 && q[0] == q[1] && q[1] == q[2]
            })
            .count();
        assert!(walls >= 100, "t = {t}: {walls} wall pixels");
        // The clock (bold, 14 px) above the panel and the x tick labels below.
        let clock: usize = (0..120)
            .map(|i| count(x + i as f64, y - 15.0, 6.0, &dark).min(1))
            .sum();
        assert!(clock >= 40, "t = {t}: clock drawn over {clock} columns");
        let labels = (0..pw as usize)
            .filter(|&i| {
                (0..14).any(|j| {
                    let q = px(x + i as f64, y + ph + 7.0 + j as f64);
                    q[0] < 140 && q[0] == q[1]
                })
            })
            .count();
        assert!(labels >= 20, "t = {t}: tick labels over {labels} columns");
        // Clipped to the panel: nothing blue just right of it.
        let outside = (1..30)
            .flat_map(|i| (0..ph as usize).map(move |j| (i, j)))
            .filter(|&(i, j)| blue(px(x + pw + 2.0 + i as f64, y + j as f64)))
            .count();
        assert_eq!(outside, 0, "t = {t}: body drawn outside its panel");
    }
    assert!(impacts_seen > 0, "the run has impacts to draw");
    // The title in the header, white elsewhere there.
    let header: Vec<[u8; 4]> = pixels[..30 * w].to_vec();
    let inked = header.iter().filter(|&&p| dark(p)).count();
    assert!(inked >= 200, "{inked} dark pixels in the title");
    let white = pixels.iter().filter(|p| p[..3] == [255, 255, 255]).count();
    assert!(
        2 * white > w * h && white < w * h,
        "{white} white of {}",
        w * h
    );
}

// ----------------------------------------------------- headless browser

/// A PNG's width, height and RGBA pixels (8-bit RGB or RGBA, not
/// interlaced: what Chromium's screenshots are).
fn decode_png(bytes: &[u8]) -> (usize, usize, Vec<[u8; 4]>) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG signature");
    let mut pos = 8;
    let (mut width, mut height, mut color) = (0, 0, 0);
    let mut data = Vec::new();
    while pos + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
        let kind = &bytes[pos + 4..pos + 8];
        let body = &bytes[pos + 8..pos + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(body[0..4].try_into().unwrap()) as usize;
                height = u32::from_be_bytes(body[4..8].try_into().unwrap()) as usize;
                assert_eq!(body[8], 8, "8-bit samples");
                color = body[9];
                assert!(
                    color == 2 || color == 6,
                    "RGB or RGBA, got colour type {color}"
                );
                assert_eq!(body[12], 0, "not interlaced");
            }
            b"IDAT" => data.extend_from_slice(body),
            b"IEND" => break,
            _ => {}
        }
        pos += 12 + len;
    }
    let raw = inflate(&data[2..]);
    let bpp = if color == 6 { 4 } else { 3 };
    let stride = width * bpp;
    assert_eq!(raw.len(), height * (stride + 1), "scanlines");
    let mut out = vec![0u8; height * stride];
    for y in 0..height {
        let filter = raw[y * (stride + 1)];
        let line = &raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)];
        for x in 0..stride {
            let a = if x >= bpp {
                out[y * stride + x - bpp] as i32
            } else {
                0
            };
            let b = if y > 0 {
                out[(y - 1) * stride + x] as i32
            } else {
                0
            };
            let c = if x >= bpp && y > 0 {
                out[(y - 1) * stride + x - bpp] as i32
            } else {
                0
            };
            let predictor = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => (a + b) / 2,
                4 => {
                    let p = a + b - c;
                    let (pa, pb, pc) = ((p - a).abs(), (p - b).abs(), (p - c).abs());
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("filter {f}"),
            };
            out[y * stride + x] = (line[x] as i32 + predictor) as u8;
        }
    }
    let pixels = out
        .chunks(bpp)
        .map(|p| [p[0], p[1], p[2], if bpp == 4 { p[3] } else { 255 }])
        .collect();
    (width, height, pixels)
}

/// Bits of a deflate stream, least significant first.
struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
    buffer: u32,
    count: u32,
}

impl Bits<'_> {
    fn take(&mut self, n: u32) -> u32 {
        while self.count < n {
            self.buffer |= u32::from(self.data[self.pos]) << self.count;
            self.pos += 1;
            self.count += 8;
        }
        let v = self.buffer & ((1u32 << n) - 1);
        self.buffer >>= n;
        self.count -= n;
        v
    }
}

/// A canonical Huffman code: codes per length, symbols in code order.
struct Huffman {
    counts: [u16; 16],
    symbols: Vec<u16>,
}

impl Huffman {
    fn new(lengths: &[u8]) -> Huffman {
        let mut counts = [0u16; 16];
        for &l in lengths {
            counts[l as usize] += 1;
        }
        counts[0] = 0;
        let mut offsets = [0u16; 16];
        for l in 1..16 {
            offsets[l] = offsets[l - 1] + counts[l - 1];
        }
        let mut symbols = vec![0u16; lengths.len()];
        for (s, &l) in lengths.iter().enumerate() {
            if l > 0 {
                symbols[offsets[l as usize] as usize] = s as u16;
                offsets[l as usize] += 1;
            }
        }
        Huffman { counts, symbols }
    }

    fn decode(&self, bits: &mut Bits<'_>) -> usize {
        let (mut code, mut first, mut index) = (0i32, 0i32, 0i32);
        for len in 1..16 {
            code |= bits.take(1) as i32;
            let count = i32::from(self.counts[len]);
            if code - count < first {
                return self.symbols[(index + code - first) as usize] as usize;
            }
            index += count;
            first += count;
            first <<= 1;
            code <<= 1;
        }
        panic!("bad Huffman code")
    }
}

/// A raw deflate stream (RFC 1951) decompressed.
fn inflate(data: &[u8]) -> Vec<u8> {
    const LBASE: [usize; 29] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
        131, 163, 195, 227, 258,
    ];
    const LEXT: [u32; 29] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ];
    const DBASE: [usize; 30] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
        2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ];
    const DEXT: [u32; 30] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12,
        13, 13,
    ];
    let mut bits = Bits {
        data,
        pos: 0,
        buffer: 0,
        count: 0,
    };
    let mut out: Vec<u8> = Vec::new();
    loop {
        let last = bits.take(1) == 1;
        match bits.take(2) {
            0 => {
                bits.buffer = 0;
                bits.count = 0;
                let p = bits.pos;
                let len = u16::from_le_bytes([data[p], data[p + 1]]) as usize;
                out.extend_from_slice(&data[p + 4..p + 4 + len]);
                bits.pos = p + 4 + len;
            }
            kind @ (1 | 2) => {
                let (lit, dist) = if kind == 1 {
                    let mut l = [8u8; 288];
                    l[144..256].fill(9);
                    l[256..280].fill(7);
                    (Huffman::new(&l), Huffman::new(&[5u8; 30]))
                } else {
                    let hlit = bits.take(5) as usize + 257;
                    let hdist = bits.take(5) as usize + 1;
                    let hclen = bits.take(4) as usize + 4;
                    const ORDER: [usize; 19] = [
                        16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
                    ];
                    let mut cl = [0u8; 19];
                    for &o in &ORDER[..hclen] {
                        cl[o] = bits.take(3) as u8;
                    }
                    let code = Huffman::new(&cl);
                    let mut lengths = Vec::with_capacity(hlit + hdist);
                    while lengths.len() < hlit + hdist {
                        match code.decode(&mut bits) {
                            s @ 0..=15 => lengths.push(s as u8),
                            16 => {
                                let prev = *lengths.last().expect("a length to repeat");
                                for _ in 0..3 + bits.take(2) {
                                    lengths.push(prev);
                                }
                            }
                            17 => lengths.extend(std::iter::repeat_n(0, 3 + bits.take(3) as usize)),
                            _ => lengths.extend(std::iter::repeat_n(0, 11 + bits.take(7) as usize)),
                        }
                    }
                    (
                        Huffman::new(&lengths[..hlit]),
                        Huffman::new(&lengths[hlit..]),
                    )
                };
                loop {
                    let s = lit.decode(&mut bits);
                    if s < 256 {
                        out.push(s as u8);
                    } else if s == 256 {
                        break;
                    } else {
                        let s = s - 257;
                        let len = LBASE[s] + bits.take(LEXT[s]) as usize;
                        let d = dist.decode(&mut bits);
                        let back = DBASE[d] + bits.take(DEXT[d]) as usize;
                        let start = out.len() - back;
                        for k in 0..len {
                            out.push(out[start + k]);
                        }
                    }
                }
            }
            k => panic!("bad block type {k}"),
        }
        if last {
            return out;
        }
    }
}

/// Chromium, where the test finds it.
const CHROMIUM: &str = "/usr/bin/chromium";

#[test]
fn chromium_renders_the_animation() {
    if std::env::var("DIRACVI_SKIP_BROWSER").as_deref() == Ok("1") {
        eprintln!("DIRACVI_SKIP_BROWSER=1: the browser test is skipped");
        return;
    }
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: install it (`apt-get install -y chromium`, as .ci/run does) or set DIRACVI_SKIP_BROWSER=1 to skip this test"
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The sleigh moves slowly (1 m/s, played in real time): wherever the
    // browser's clock is when it takes the screenshot, the body is near
    // its start.
    let sleigh = models_dir().join("sleigh.toml");
    let out = run_in(
        d,
        &[
            "run",
            "--model-file",
            sleigh.to_str().unwrap(),
            "--t-end",
            "20",
            "--animate",
            "a.svg",
            "-q",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let svg = parse(&std::fs::read_to_string(d.join("a.svg")).unwrap());
    let (w, h) = (
        svg.num("width").ceil() as usize,
        svg.num("height").ceil() as usize,
    );
    let profile = tempfile::tempdir().unwrap();
    let shot = d.join("shot.png");
    let status = std::process::Command::new("timeout")
        .arg("120")
        .arg(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--window-size={w},{h}"))
        .arg(format!("file://{}", d.join("a.svg").display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("chromium runs");
    assert!(status.success(), "chromium: {status}");
    let (pw, ph, pixels) = decode_png(&std::fs::read(&shot).expect("a screenshot"));
    assert_eq!((pw, ph), (w, h), "screenshot size");
    let mut colours: Vec<[u8; 4]> = pixels.clone();
    colours.sort();
    colours.dedup();
    assert!(colours.len() > 50, "{} distinct colours", colours.len());
    // The body near its start (1 s of motion at most 1 m from it, grown by
    // 10 px): pixels of the body's blue (#1f77b4) and the heading's orange
    // (#ff7f0e) are there.
    let plane = svg.class("plane");
    let vb: Vec<f64> = plane
        .attr("viewBox")
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    let scale = plane.num("data-scale");
    let to_px = |x: f64, y: f64| {
        (
            plane.num("x") + (x - vb[0]) * scale,
            plane.num("y") + (-y - vb[1]) * scale,
        )
    };
    let (cx, cy) = to_px(0.0, 0.0);
    let reach = 1.5 * scale + 10.0;
    let near = |i: usize| {
        let (x, y) = ((i % pw) as f64, (i / pw) as f64);
        (x - cx).abs() <= reach && (y - cy).abs() <= reach
    };
    let blue = pixels
        .iter()
        .enumerate()
        .filter(|&(i, p)| near(i) && p[2] > 140 && p[2] as i32 - p[0] as i32 > 80)
        .count();
    let orange = pixels
        .iter()
        .enumerate()
        .filter(|&(i, p)| near(i) && p[0] > 200 && p[2] < 80 && p[1] > 90)
        .count();
    assert!(blue >= 30, "{blue} blue pixels near the body");
    assert!(orange >= 10, "{orange} orange pixels of the heading");
    // The clock and the axes are drawn: dark pixels above and left of the plane.
    let dark_header = pixels[..(plane.num("y") as usize) * pw]
        .iter()
        .filter(|p| p[0] < 100 && p[1] < 100 && p[2] < 100)
        .count();
    assert!(
        dark_header >= 100,
        "{dark_header} dark pixels of the title and clock"
    );
}

/// A body in space drawn by its file (`models/bouncing-body.toml`),
/// and by the compiled `bouncing-body` (its default is that ellipsoid):
/// seen along `Y`, the axes named `X` and `Z` (the file's `drawing.axes`,
/// the model's `Drawing::axes`), the plane `Z = 0` edge-on. The outline is
/// the projected ellipsoid, whose lowest point lies `√S_zz` below the centre
/// (`S = R diag(a², b², c²) Rᵀ`, from the recorded quaternion; the 48-point
/// outline within 1 % of it, the picture's rounding aside), and every impact
/// is marked on the plane, at the lowest point.
#[test]
fn a_body_in_space_is_seen_along_y() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/bouncing-body.toml"
    );
    seen_along_y(&["--model-file", file]);
    seen_along_y(&["bouncing-body"]);
}

fn seen_along_y(model: &[&str]) {
    let (a, b, c) = (0.3_f64, 0.2_f64, 0.1_f64);
    let mut args = vec!["run"];
    args.extend(model);
    let (run, _) = Run::with_args(&[&args[..], &["--t-end", "3"]].concat());
    assert_horizontal_line(run.walls()[0], 0.0);
    let markers = &run.svg.class("impacts").children;
    assert!(markers.len() >= 5, "{} impacts", markers.len());
    assert_eq!(markers.len(), run.impacts.len());
    for m in markers.iter() {
        assert!(m.num("cy").abs() <= TOL, "on the plane: {}", m.num("cy"));
    }
    let outline = &run.svg.class("body").children[0];
    let keys = key_times(outline.animation("points"));
    for (f, points) in keys.iter().zip(frames(outline.animation("points"))) {
        let row = run.row_at(*f);
        let (z, w, x, y, zq) = (row[4], row[5], row[6], row[7], row[8]);
        let (e1z, e2z, e3z) = (
            2.0 * (x * zq - w * y),
            2.0 * (y * zq + w * x),
            1.0 - 2.0 * (x * x + y * y),
        );
        let reach = (a * a * e1z * e1z + b * b * e2z * e2z + c * c * e3z * e3z).sqrt();
        let lowest = points.chunks(2).map(|p| p[1]).fold(f64::INFINITY, f64::min);
        assert!(
            lowest >= z - reach - TOL && lowest <= z - 0.99 * reach,
            "lowest outline point {lowest}, centre {z}, reach {reach}"
        );
    }
    // The axes are named by the file or the model.
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[&args[..], &["--t-end", "0.1", "--animate", "r.svg", "-q"]].concat(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = std::fs::read_to_string(dir.path().join("r.svg")).unwrap();
    assert!(text.contains(">X (m)</text>") && text.contains(">Z (m)</text>"));
    assert!(!text.contains(">y (m)</text>"));
}

/// A file with an orientation and no `[drawing]` (the bouncing cube with
/// its drawing cut out) is drawn in the default oblique view: the centre at
/// `(X + 0.35 Y, Z + 0.35 Y)` in every frame, and from it the three body
/// axes, of one common length, whose directions are the projections of
/// the columns of `R(q)` from the recorded quaternion (to the picture's
/// rounding, 1e-5 relative).
#[test]
fn a_body_in_space_without_a_drawing_gets_the_oblique_view_of_its_axes() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/bouncing-cube.toml"
    ))
    .unwrap();
    let (start, end) = (text.find("[drawing]").unwrap(), text.find("[run]").unwrap());
    let cut = format!("{}{}", &text[..start], &text[end..]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cube.toml");
    std::fs::write(&file, cut).unwrap();
    let file = file.to_str().unwrap().to_owned();
    let (run, _) = Run::with_args(&["run", "--model-file", &file, "--t-end", "2"]);
    let project = |x: f64, y: f64, z: f64| [x + 0.35 * y, z + 0.35 * y];
    run.check_body(3, &["cx", "cy"], |q| project(q[0], q[1], q[2]).to_vec());
    let mut lengths = Vec::new();
    for k in 0..3 {
        let axis = &run.svg.class("body").children[k];
        let a = axis.animation("points");
        for (f, points) in key_times(a).iter().zip(frames(a)) {
            let row = run.row_at(*f);
            let q = &row[2..9];
            let c = project(q[0], q[1], q[2]);
            assert!((points[0] - c[0]).abs() <= TOL && (points[1] - c[1]).abs() <= TOL);
            // the body axis e_k: column k of R(q)
            let r = diracvi_geometry::lie::rotation_matrix(
                &diracvi_geometry::SVector::<f64, 4>::new(q[3], q[4], q[5], q[6]),
            );
            let e = [r[(0, k)], r[(1, k)], r[(2, k)]];
            let d = project(e[0], e[1], e[2]);
            let (u, v) = (points[2] - points[0], points[3] - points[1]);
            let length = u.hypot(v) / d[0].hypot(d[1]);
            assert!(
                (u * d[1] - v * d[0]).abs() <= 1e-5 * u.hypot(v).max(1e-3),
                "parallel"
            );
            assert!(u * d[0] + v * d[1] > 0.0, "same sense");
            lengths.push(length);
        }
    }
    let (lo, hi) = lengths
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(l, h), &x| (l.min(x), h.max(x)));
    assert!(
        hi - lo <= 1e-4 * hi,
        "one length for every axis: {lo} … {hi}"
    );
}
