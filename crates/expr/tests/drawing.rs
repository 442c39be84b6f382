//! The `[drawing]` table of model files: what is read, its compiled values
//! at a configuration, the print/read round trip of the shipped files that
//! have one, and malformed tables with the key, line and column of each
//! error.

use diracvi_expr::{DrawingShape, ModelFile, ModelFileError, ModelFileErrorKind as K};

/// A planar model with a full drawing; the malformed cases edit it.
const BASE: &str = r#"[model]
name = "cart"
coordinates = ["x", "y", "theta"]
lagrangian = "0.5*m*(x_dot^2 + y_dot^2) + 0.5*theta_dot^2"
boundaries = ["R^2 - x^2 - y^2", "theta + 10"]

[parameters]
m = 1.0
R = 2.0
a = 0.5

[drawing]
unit = "m"
boundaries = [0]
contact = ["x", "y"]

[drawing.heading]
x = "x"
y = "y"
angle = "theta"
length = "2*a"

[[drawing.walls]]
kind = "line"
x = 0
y = "-R"
dx = 1.0
dy = 0.0

[[drawing.body]]
kind = "ellipse"
x = "x + a*cos(theta)"
y = "y + a*sin(theta)"
a = "a"
b = "a/2"
angle = "theta"

[[drawing.body]]
kind = "polyline"
points = [["x", "y"], ["x + a", "y"], [0, 1]]
closed = true

[[drawing.body]]
kind = "circle"
x = "x"
y = "y"
r = "a"

[[drawing.body]]
kind = "point"
x = "x"
y = "y"
"#;

fn fails(source: &str) -> ModelFileError {
    ModelFile::from_toml_str(source, "cart.toml").expect_err("a malformed drawing")
}

/// `BASE` with `old` replaced by `new` (which must be there once).
fn edit(old: &str, new: &str) -> String {
    assert_eq!(BASE.matches(old).count(), 1, "{old}");
    BASE.replace(old, new)
}

/// The 1-based line of the first occurrence of `needle` in `source`.
fn line_of(source: &str, needle: &str) -> usize {
    source[..source.find(needle).unwrap()].matches('\n').count() + 1
}

#[test]
fn a_drawing_reads_and_evaluates() {
    let file = ModelFile::from_toml_str(BASE, "cart.toml").unwrap();
    let d = file.drawing.as_ref().unwrap();
    assert_eq!(d.unit, "m");
    assert_eq!(d.axes, ["x", "y"], "the default names of the axes");
    assert_eq!(d.boundaries.as_deref(), Some(&[0][..]));
    assert_eq!(d.contact, Some(["x".to_string(), "y".to_string()]));
    let kinds: Vec<&str> = d.body.iter().map(DrawingShape::kind).collect();
    assert_eq!(kinds, ["ellipse", "polyline", "circle", "point"]);
    // Numbers keep their value as text (`0` reads as the float 0.0).
    match &d.walls[0] {
        DrawingShape::Line { x, y, dx, dy } => {
            assert_eq!(
                (x.as_str(), y.as_str(), dx.as_str(), dy.as_str()),
                ("0.0", "-R", "1.0", "0.0")
            );
        }
        other => panic!("a line, got {other:?}"),
    }
    // Compiled over the coordinates, with the parameters' values (and a
    // --set override): exact to round-off (1e-15).
    for (overrides, a) in [(vec![], 0.5_f64), (vec![("a".to_string(), 0.25)], 0.25)] {
        let compiled = file.compile(&overrides).unwrap();
        let c = compiled.drawing().unwrap();
        let q = [0.3_f64, -0.4, 0.7];
        let h = c.heading.as_ref().unwrap();
        assert_eq!(h.x.eval(&q).to_bits(), 0.3f64.to_bits(), "exactly x");
        assert_eq!(
            h.angle.eval(&q).to_bits(),
            0.7f64.to_bits(),
            "exactly theta"
        );
        assert!((h.length.as_ref().unwrap().eval(&q) - 2.0 * a).abs() <= 1e-15);
        match &c.body[0] {
            DrawingShape::Ellipse { x, y, b, .. } => {
                assert!((x.eval(&q) - (0.3 + a * 0.7f64.cos())).abs() <= 1e-15);
                assert!((y.eval(&q) - (-0.4 + a * 0.7f64.sin())).abs() <= 1e-15);
                assert!((b.eval(&q) - a / 2.0).abs() <= 1e-15);
            }
            other => panic!("an ellipse, got {other:?}"),
        }
        match &c.walls[0] {
            DrawingShape::Line { y, .. } => {
                assert_eq!(
                    y.constant_value().map(f64::to_bits),
                    Some((-2.0f64).to_bits())
                )
            }
            other => panic!("a line, got {other:?}"),
        }
    }
}

#[test]
fn drawings_print_and_read_back() {
    let models = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models");
    let mut with_drawing = 0;
    for entry in std::fs::read_dir(models).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let file = ModelFile::from_path(&path).unwrap();
        let printed = file.to_toml_string();
        let again = ModelFile::from_toml_str(&printed, "printed.toml")
            .unwrap_or_else(|e| panic!("{e}\n{printed}"));
        assert_eq!(again, file, "{}", path.display());
        assert_eq!(again.to_toml_string(), printed, "printing is stable");
        if file.drawing.is_some() {
            assert!(printed.contains("\n[drawing]\n"), "{printed}");
            with_drawing += 1;
        }
    }
    assert!(
        with_drawing >= 3,
        "sleigh, ellipse and double pendulum have drawings"
    );
    // Named axes print and read back (the bouncing bodies are seen along Y).
    let named = edit("unit = \"m\"", "unit = \"m\"\naxes = [\"X\", \"Z\"]");
    let file = ModelFile::from_toml_str(&named, "cart.toml").unwrap();
    assert_eq!(file.drawing.as_ref().unwrap().axes, ["X", "Z"]);
    assert!(file.to_toml_string().contains("axes = [\"X\", \"Z\"]"));
    let file = ModelFile::from_toml_str(BASE, "cart.toml").unwrap();
    let again = ModelFile::from_toml_str(&file.to_toml_string(), "again.toml").unwrap();
    assert_eq!(again, file);
    // A drawing is part of the system.
    let mut other = file.clone();
    other.drawing = None;
    assert!(!other.same_system(&file));
}

/// A malformed file, the key and the text its error points at, and a test
/// of the error's kind.
type Case = (String, &'static str, &'static str, fn(&K) -> bool);

#[test]
fn malformed_drawings_name_the_key_and_place() {
    let cases: Vec<Case> = vec![
        (
            edit("kind = \"circle\"", "kind = \"square\""),
            "drawing.body[2].kind",
            "kind = \"square\"",
            |k| matches!(k, K::InvalidChoice { .. }),
        ),
        (
            edit("r = \"a\"", "radius = \"a\""),
            "drawing.body[2].radius",
            "radius",
            |k| matches!(k, K::UnknownKey { .. }),
        ),
        (
            edit("contact = [\"x\", \"y\"]", "contact = [\"x\"]"),
            "drawing.contact",
            "[\"x\"]",
            |k| matches!(k, K::NotAPoint { found: 1 }),
        ),
        (
            edit(
                "points = [[\"x\", \"y\"], [\"x + a\", \"y\"], [0, 1]]",
                "points = [[\"x\", \"y\"]]",
            ),
            "drawing.body[1].points",
            "[[\"x\", \"y\"]]",
            |k| {
                matches!(
                    k,
                    K::TooFewPoints {
                        needed: 2,
                        found: 1
                    }
                )
            },
        ),
        (
            edit("boundaries = [0]", "boundaries = [2]"),
            "drawing.boundaries[0]",
            "2]",
            |k| matches!(k, K::NoSuchPiece { index: 2, count: 2 }),
        ),
        (
            edit("y = \"-R\"", "y = \"-R + y\""),
            "drawing.walls[0].y",
            "\"-R + y\"",
            |k| matches!(k, K::MovingWall),
        ),
        (
            edit("closed = true", "closed = \"yes\""),
            "drawing.body[1].closed",
            "\"yes\"",
            |k| matches!(k, K::WrongType { .. }),
        ),
        (
            edit("length = \"2*a\"", "length = \"2*aa\""),
            "drawing.heading.length",
            "aa\"",
            |k| matches!(k, K::Expression(_)),
        ),
        (
            edit("angle = \"theta\"\nlength", "angel = \"theta\"\nlength"),
            "drawing.heading.angel",
            "angel",
            |k| matches!(k, K::UnknownKey { .. }),
        ),
        (
            edit("unit = \"m\"", "unit = \"m\"\naxes = [\"X\"]"),
            "drawing.axes",
            "[\"X\"]",
            |k| matches!(k, K::WrongType { .. }),
        ),
        (
            edit("unit = \"m\"", "unit = \"m\"\naxes = [\"X\", \" \"]"),
            "drawing.axes[1]",
            "\" \"]",
            |k| matches!(k, K::Empty),
        ),
        (
            edit("unit = \"m\"", "units = \"m\""),
            "drawing.units",
            "units",
            |k| matches!(k, K::UnknownKey { .. }),
        ),
    ];
    for (source, key, at, kind) in cases {
        let e = fails(&source);
        assert_eq!(e.key(), key, "{e}");
        assert!(kind(e.kind()), "{key}: {e}");
        let line = line_of(&source, at);
        assert_eq!(e.line(), line, "{key}: {e}");
        assert!(
            e.to_string().starts_with(&format!("cart.toml:{line}:")),
            "{e}"
        );
    }
    // An unknown name in a body expression points at its character.
    let source = edit("x = \"x + a*cos(theta)\"", "x = \"x + b*cos(theta)\"");
    let e = fails(&source);
    assert_eq!(e.key(), "drawing.body[0].x");
    let line = line_of(&source, "x = \"x + b*");
    assert_eq!((e.line(), e.column()), (line, 10), "{e}");
    // No body.
    let cut = BASE.find("[[drawing.body]]").unwrap();
    let e = fails(&BASE[..cut]);
    assert_eq!(e.key(), "drawing.body");
    assert!(matches!(e.kind(), K::Missing), "{e}");
    // Pieces drawn by their zero sets need coordinates x and y.
    let source = edit(
        "coordinates = [\"x\", \"y\", \"theta\"]",
        "coordinates = [\"x\", \"z\", \"theta\"]",
    )
    .replace("y_dot", "z_dot")
    .replace("- y^2", "- z^2")
    .replace("\"y\"", "\"z\"")
    .replace("y + ", "z + ")
    .replace("= \"y\"", "= \"z\"");
    let e = fails(&source);
    assert_eq!(e.key(), "drawing.boundaries", "{e}");
    assert!(matches!(e.kind(), K::NoPlaneCoordinates), "{e}");
    assert!(e.to_string().contains("[[drawing.walls]]"), "{e}");
}
