//! `diracvi run --plot`: the SVG is parsed back — its panels (one per
//! coordinate, the x–y path with the walls for planar models, the optional
//! momenta, residual and phase panels), their axis labels, the impact lines
//! in every time panel, and tick labels free of round-off noise — for
//! catalogued models and model files; and `--plot-panels` refuses what it
//! cannot draw.

use crate::common;

use common::{Output, check_failure, run_in};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Stroke colour of the impact lines (`plot::IMPACT`).
const IMPACT: &str = "#D62728";
/// Stroke colour of the walls (`plot::WALL`).
const WALL: &str = "#604020";

/// The repository's model files.
fn model_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(name)
}

/// A parsed plot: the SVG and the run's JSON summary.
struct Plot {
    svg: String,
    summary: Value,
    stderr: String,
}

/// Run `diracvi run ARGS --plot p.svg --summary json` and read the plot.
fn plot(args: &[&str]) -> Plot {
    let dir = tempfile::tempdir().unwrap();
    let mut all: Vec<&str> = vec!["run"];
    all.extend(args);
    all.extend(["--plot", "p.svg", "--summary", "json"]);
    let out: Output = run_in(dir.path(), &all);
    assert_eq!(out.code, 0, "{args:?} failed: {}", out.stderr);
    let svg = std::fs::read_to_string(dir.path().join("p.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    Plot {
        svg,
        summary: serde_json::from_str(&out.stdout).expect("a JSON summary"),
        stderr: out.stderr,
    }
}

/// Undo plotters' escaping of text.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

impl Plot {
    /// Every `<text>` element: (attributes, content).
    fn texts(&self) -> Vec<(String, String)> {
        self.svg
            .split("<text")
            .skip(1)
            .map(|rest| {
                let (attrs, after) = rest.split_once('>').expect("a text tag");
                let (content, _) = after.split_once("</text>").expect("a closed text");
                (attrs.to_string(), unescape(content.trim()))
            })
            .collect()
    }

    /// The y-axis labels (the texts turned upright), in panel order.
    fn y_labels(&self) -> Vec<String> {
        self.texts()
            .into_iter()
            .filter(|(a, _)| a.contains("rotate(270"))
            .map(|(_, c)| c)
            .collect()
    }

    /// How many texts are exactly `s`.
    fn count_text(&self, s: &str) -> usize {
        self.texts().iter().filter(|(_, c)| c == s).count()
    }

    /// The numeric texts (tick labels).
    fn ticks(&self) -> Vec<f64> {
        self.texts()
            .iter()
            .filter_map(|(_, c)| c.parse::<f64>().ok())
            .collect()
    }

    /// The polylines stroked in `color`, as their point lists (pixels).
    fn polylines(&self, color: &str) -> Vec<Vec<(i64, i64)>> {
        let stroke = format!("stroke=\"{color}\"");
        self.svg
            .split("<polyline")
            .skip(1)
            .map(|rest| rest.split_once("/>").expect("a closed polyline").0)
            .filter(|attrs| attrs.contains(&stroke))
            .map(|attrs| {
                let points = attrs.split_once("points=\"").unwrap().1;
                let points = points.split_once('"').unwrap().0;
                points
                    .split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect()
            })
            .collect()
    }

    /// Number of impacts of the run.
    fn impacts(&self) -> usize {
        self.summary["impact_times"].as_array().unwrap().len()
    }

    /// Time panels (those with `t (s)` on their x axis).
    fn time_panels(&self) -> usize {
        self.count_text("t (s)")
    }

    /// No tick label is round-off noise: none is non-zero and below 1e-10
    /// in magnitude, and `0` is written `0`.
    fn assert_clean_ticks(&self) {
        let ticks = self.ticks();
        assert!(ticks.len() >= 10, "tick labels: {ticks:?}");
        for v in &ticks {
            assert!(
                *v == 0.0 || v.abs() >= 1e-10,
                "noise tick label {v:e} among {ticks:?}"
            );
        }
        for (_, c) in self.texts() {
            assert!(c != "-0" && !c.starts_with("0.000000000"), "tick {c}");
        }
    }

    /// One vertical impact line per impact in every time panel.
    fn assert_impact_lines(&self) {
        let lines = self.polylines(IMPACT);
        assert_eq!(
            lines.len(),
            self.impacts() * self.time_panels(),
            "{} impacts in {} time panels",
            self.impacts(),
            self.time_panels()
        );
        for line in &lines {
            assert_eq!(line.len(), 2);
            assert_eq!(line[0].0, line[1].0, "vertical: {line:?}");
            assert!((line[0].1 - line[1].1).abs() > 100, "panel-high: {line:?}");
        }
    }
}

/// The extent (px) of a polyline along one axis.
fn span(line: &[(i64, i64)], f: fn(&(i64, i64)) -> i64) -> i64 {
    line.iter().map(f).max().unwrap() - line.iter().map(f).min().unwrap()
}

#[test]
fn particle_has_a_panel_per_coordinate_and_the_floor_in_the_xy_panel() {
    let p = plot(&["particle", "--t-end", "3", "-q"]);
    // energy, x, y against time; then the path in the x–y plane.
    assert_eq!(p.y_labels(), ["E − E₀", "x", "y", "y"]);
    assert_eq!(p.time_panels(), 3);
    assert_eq!(p.count_text("coordinate x"), 1);
    assert_eq!(p.count_text("coordinate y"), 1);
    assert_eq!(
        p.count_text("path in the x–y plane, walls in brown"),
        1,
        "{:?}",
        p.texts()
    );
    assert!(p.impacts() >= 2, "the particle bounces: {}", p.impacts());
    p.assert_impact_lines();
    p.assert_clean_ticks();
    // The floor: one horizontal wall line across the panel.
    let walls = p.polylines(WALL);
    assert_eq!(walls.len(), 1, "{walls:?}");
    assert_eq!(walls[0].len(), 2);
    assert_eq!(walls[0][0].1, walls[0][1].1, "horizontal");
    assert!(walls[0][1].0 - walls[0][0].0 > 200, "across the panel");
    // The impact points are marked in the x–y panel too.
    let title = format!("particle: 300 steps, {} impacts (red lines)", p.impacts());
    assert_eq!(p.count_text(&title), 1, "{:?}", p.texts());
}

#[test]
fn ellipse_and_disk_table_panels_and_walls() {
    let e = plot(&["ellipse", "--t-end", "3", "-q"]);
    assert_eq!(e.y_labels(), ["E − E₀", "theta", "x", "y", "y"]);
    assert!(e.impacts() >= 1);
    e.assert_impact_lines();
    e.assert_clean_ticks();
    assert_eq!(e.polylines(WALL).len(), 1, "the floor");

    let d = plot(&["disk-table", "--t-end", "2", "-q"]);
    assert_eq!(d.y_labels(), ["E − E₀", "x", "y", "theta", "phi", "y"]);
    assert_eq!(d.time_panels(), 5);
    d.assert_impact_lines();
    d.assert_clean_ticks();
    // The table's rim: a closed curve of many points, drawn round (equal
    // scales: as wide as high on screen, within a pixel or two).
    let walls = d.polylines(WALL);
    assert_eq!(walls.len(), 1);
    let rim = &walls[0];
    assert!(rim.len() > 100);
    let (w, h) = (span(rim, |p| p.0), span(rim, |p| p.1));
    assert!(w > 50 && (w - h).abs() <= 2, "rim {w} × {h} px");
}

#[test]
fn a_circuit_has_no_xy_panel_and_no_impact_lines() {
    let p = plot(&["lc", "--steps", "300", "-q"]);
    assert_eq!(p.y_labels(), ["E − E₀", "q_l", "q_c1", "q_c2", "q_c3"]);
    assert_eq!(p.time_panels(), 5);
    assert_eq!(p.impacts(), 0);
    assert!(p.polylines(IMPACT).is_empty());
    assert!(p.polylines(WALL).is_empty());
    p.assert_clean_ticks();
    assert!(
        !p.texts().iter().any(|(_, c)| c.contains("impact")),
        "no impacts, no mention"
    );
}

#[test]
fn a_flat_coordinate_gets_a_symmetric_range_and_clean_ticks() {
    // x stays 0 (no horizontal velocity): its axis is −1..1 about 0.
    let p = plot(&["particle", "--t-end", "1", "--set", "v=0,0", "-q"]);
    assert_eq!(p.y_labels(), ["E − E₀", "x", "y", "y"]);
    p.assert_clean_ticks();
    let ticks = p.ticks();
    assert!(ticks.contains(&-1.0) && ticks.contains(&1.0), "{ticks:?}");
}

#[test]
fn a_model_file_sleigh_draws_its_arena_and_the_optional_panels() {
    let sleigh = model_file("sleigh.toml");
    let sleigh = sleigh.to_str().unwrap();
    let p = plot(&["--model-file", sleigh, "--t-end", "12", "-q"]);
    assert_eq!(p.y_labels(), ["E − E₀", "x", "y", "theta", "y"]);
    assert!(p.impacts() >= 1, "the sleigh reaches the rim");
    p.assert_impact_lines();
    p.assert_clean_ticks();
    // The arena's rim R² − x² − y² = 0, sampled into one closed curve,
    // round on screen (equal scales).
    let walls = p.polylines(WALL);
    assert_eq!(walls.len(), 1, "one rim");
    let rim = &walls[0];
    assert!(rim.len() > 100, "{} points", rim.len());
    let (first, last) = (rim[0], rim[rim.len() - 1]);
    assert!(
        (first.0 - last.0).abs() <= 1 && (first.1 - last.1).abs() <= 1,
        "closed: {first:?} … {last:?}"
    );
    let (w, h) = (span(rim, |p| p.0), span(rim, |p| p.1));
    assert!(w > 50 && (w - h).abs() <= 2, "rim {w} × {h} px");

    let all = plot(&[
        "--model-file",
        sleigh,
        "--t-end",
        "2",
        "--plot-panels",
        "phase,residual,momenta,coords",
        "-q",
    ]);
    assert_eq!(
        all.y_labels(),
        [
            "x",
            "y",
            "theta", // coords
            "p_x",
            "p_y",
            "p_theta", // momenta
            "log₁₀ |residual|",
            "p_x",
            "p_y",
            "p_theta", // phase portraits (q on the x axis)
        ]
    );
    assert_eq!(all.time_panels(), 7);
    assert_eq!(all.count_text("phase portrait (theta, p_theta)"), 1);
    assert!(all.polylines(WALL).is_empty(), "no xy panel asked for");
    all.assert_clean_ticks();
}

#[test]
fn a_model_file_draws_only_the_walls_of_x_and_y() {
    // particle.toml: g = y, the floor, found as one horizontal polyline.
    let p = plot(&[
        "--model-file",
        model_file("particle.toml").to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(p.y_labels(), ["E − E₀", "x", "y", "y"]);
    let walls = p.polylines(WALL);
    assert_eq!(walls.len(), 1, "{walls:?}");
    assert!(walls[0].iter().all(|q| q.1 == walls[0][0].1), "horizontal");
    assert!(span(&walls[0], |q| q.0) > 200, "across the panel");
    p.assert_impact_lines();
    // ellipse.toml: g depends on theta too, so its zero set is not drawn in
    // the x–y plane; the floor its `[[drawing.walls]]` declares is (as
    // `--animate` draws it): one horizontal line across the panel.
    let e = plot(&[
        "--model-file",
        model_file("ellipse.toml").to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(e.y_labels(), ["E − E₀", "theta", "x", "y", "y"]);
    let floor = e.polylines(WALL);
    assert_eq!(floor.len(), 1, "{floor:?}");
    assert_eq!(floor[0].len(), 2);
    assert_eq!(floor[0][0].1, floor[0][1].1, "horizontal");
    assert!(span(&floor[0], |q| q.0) > 200, "across the panel");
    assert_eq!(e.count_text("path in the x–y plane, walls in brown"), 1);
}

/// A particle in the disk `x² + y² ≤ R²`, its rim a circle of the drawing
/// (`walls`) and/or the zero set of its piece (`boundaries`: the
/// `[drawing] boundaries` line, or none for every piece over x and y).
fn billiard(walls: bool, boundaries: Option<&str>) -> String {
    let mut text = String::from(
        r#"[model]
name = "billiard"
description = "a free particle in a circular table"
coordinates = ["x", "y"]
lagrangian = "0.5*m*(x_dot^2 + y_dot^2)"
constraints = []
boundaries = ["R^2 - x^2 - y^2"]

[parameters]
m = 1.0
R = 2.0

[run]
h = 1e-2
t_end = 4.0

[initial]
q = [0.0, 0.5]
v = [1.0, 0.3]

[drawing]
"#,
    );
    if let Some(b) = boundaries {
        text.push_str(&format!("boundaries = {b}\n"));
    }
    if walls {
        text.push_str("\n[[drawing.walls]]\nkind = \"circle\"\nx = 0.0\ny = 0.0\nr = \"R\"\n");
    }
    text.push_str("\n[[drawing.body]]\nkind = \"point\"\nx = \"x\"\ny = \"y\"\n");
    text
}

/// Plot the model file `text`, with more arguments.
fn plot_model(text: &str, args: &[&str]) -> Plot {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.toml");
    std::fs::write(&path, text).unwrap();
    let mut all = vec!["--model-file", path.to_str().unwrap(), "-q"];
    all.extend(args);
    plot(&all)
}

/// Whether a polyline (pixels) is a circle about its centre, as wide as
/// high (equal scales), closed, of at least `wide` px.
fn assert_round(line: &[(i64, i64)], wide: i64) {
    assert!(line.len() > 100, "{} points", line.len());
    let (w, h) = (span(line, |p| p.0), span(line, |p| p.1));
    assert!(w > wide && (w - h).abs() <= 2, "{w} × {h} px");
    let (first, last) = (line[0], line[line.len() - 1]);
    assert!((first.0 - last.0).abs() <= 1 && (first.1 - last.1).abs() <= 1);
}

#[test]
fn a_model_files_drawing_walls_appear_in_the_xy_panel_as_in_the_animation() {
    // The rim as a circle of the drawing, its piece's zero set left out:
    // one round wall around the whole path, the impacts on it.
    let p = plot_model(&billiard(true, Some("[]")), &["--plot-panels", "xy"]);
    assert!(p.impacts() >= 1, "the particle reaches the rim");
    assert_eq!(p.count_text("path in the x–y plane, walls in brown"), 1);
    let walls = p.polylines(WALL);
    assert_eq!(walls.len(), 1, "the circle only");
    assert_round(&walls[0], 100);
    // The piece's zero set instead (`boundaries = [0]`): walls too (arcs
    // of the rim, sampled around the path), and with both (no `boundaries`
    // key: every piece over x and y) the circle and the arcs.
    let zero_set = plot_model(&billiard(false, Some("[0]")), &["--plot-panels", "xy"]);
    let arcs = zero_set.polylines(WALL).len();
    assert!(arcs >= 1, "the rim's zero set");
    let both = plot_model(&billiard(true, None), &["--plot-panels", "xy"]);
    assert_eq!(both.polylines(WALL).len(), arcs + 1);
    // Neither: no wall, and the caption does not promise one.
    let none = plot_model(&billiard(false, Some("[]")), &["--plot-panels", "xy"]);
    assert!(none.polylines(WALL).is_empty());
    assert_eq!(none.count_text("path in the x–y plane"), 1);
}

#[test]
fn a_model_without_walls_draws_none() {
    let free = r#"[model]
name = "free"
description = "a free particle: no walls"
coordinates = ["x", "y"]
lagrangian = "0.5*(x_dot^2 + y_dot^2)"
constraints = []

[run]
h = 1e-2
t_end = 1.0

[initial]
q = [0.0, 0.0]
v = [1.0, 0.5]
"#;
    let p = plot_model(free, &[]);
    assert_eq!(p.y_labels(), ["E − E₀", "x", "y", "y"]);
    assert_eq!(p.impacts(), 0);
    assert!(p.polylines(WALL).is_empty());
    assert!(
        !p.svg.contains(&format!("\"{WALL}\"")),
        "no wall element at all"
    );
    assert_eq!(p.count_text("path in the x–y plane"), 1);
}

#[test]
fn a_run_without_steps_plots_flat_curves() {
    let p = plot(&["particle", "--steps", "0", "-q"]);
    assert_eq!(p.y_labels(), ["E − E₀", "x", "y", "y"]);
    assert_eq!(p.count_text("energy deviation E − E₀: 0 throughout"), 1);
    p.assert_clean_ticks();
}

#[test]
fn a_large_system_draws_nine_coordinates_and_says_which() {
    let boxed = model_file("masses-in-a-box.toml");
    let p = plot(&["--model-file", boxed.to_str().unwrap(), "--t-end", "2"]);
    let shown = ["x1", "x2", "x3", "x5", "x6", "x7", "x9", "x10", "x12"];
    let mut expected = vec!["E − E₀"];
    expected.extend(shown);
    assert_eq!(p.y_labels(), expected);
    let list = shown.join(", ");
    assert_eq!(
        p.count_text(&format!(
            "coordinates drawn: 9 of 12 ({list}), evenly spread"
        )),
        1,
        "{:?}",
        p.texts()
    );
    assert!(
        p.stderr
            .contains(&format!("note: --plot draws 9 of 12 coordinates: {list}")),
        "stderr: {}",
        p.stderr
    );
    p.assert_impact_lines();
    p.assert_clean_ticks();
}

#[test]
fn plot_panels_refuses_what_it_cannot_draw() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Command-line errors: an `error:` line naming the value, a `hint:` line.
    let usage = |out: Output, needles: &[&str]| {
        assert_eq!(out.code, 2, "{}", out.stderr);
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 2, "error and hint: {}", out.stderr);
        assert!(lines[0].starts_with("error: ") && lines[1].starts_with("hint: "));
        for needle in needles {
            assert!(
                lines[0].contains(needle),
                "{} should name {needle}",
                lines[0]
            );
        }
    };
    let plot = |panels: &str, model: &str| {
        run_in(
            d,
            &["run", model, "--plot", "p.svg", "--plot-panels", panels],
        )
    };
    usage(
        plot("coords,bogus", "particle"),
        &[
            "'bogus'",
            "--plot-panels",
            "energy, coords, momenta, residual, xy, phase",
        ],
    );
    usage(
        run_in(d, &["run", "particle", "--plot-panels", "coords"]),
        &["required", "--plot <FILE.svg>"],
    );
    // Panels the model cannot have, asked for by name.
    check_failure(
        &plot("xy", "lc"),
        2,
        &["--plot-panels xy", "'lc'", "x and y", "q_l"],
    );
    check_failure(
        &plot("coords,residual", "particle"),
        2,
        &["--plot-panels residual", "'particle'", "no constraints"],
    );
    assert!(
        std::fs::read_dir(d).unwrap().next().is_none(),
        "nothing written"
    );
}
