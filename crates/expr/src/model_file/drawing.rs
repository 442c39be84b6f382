//! The optional `[drawing]` table of a model file: a planar picture of the
//! model for animations (`diracvi run --animate`), its shapes written as
//! expressions in the coordinates and parameters.
//!
//! ```toml
//! [drawing]
//! unit = "m"                       # optional; the unit of the plane's axes (default "m")
//! boundaries = [0]                 # optional; pieces drawn by their zero sets in the x–y plane
//! contact = ["x", "y"]             # optional; where an impact is marked (default: the first body shape)
//!
//! [drawing.heading]                # optional; the body's orientation, drawn as a line
//! x = "x"
//! y = "y"
//! angle = "theta"
//! length = "a"                     # optional
//!
//! [[drawing.walls]]                # still shapes: expressions of the parameters only
//! kind = "line"
//! x = 0.0
//! y = 0.0
//! dx = 1.0
//! dy = 0.0
//!
//! [[drawing.body]]                 # moving shapes: expressions of the coordinates
//! kind = "polyline"
//! points = [["x", "y"], ["x + a*cos(theta)", "y + a*sin(theta)"]]
//! ```
//!
//! Shape kinds and their keys: `point` (`x`, `y`), `circle` (`x`, `y`,
//! `r`), `ellipse` (`x`, `y`, `a`, `b`, `angle`: semi-axis `a` along the
//! direction `angle`), `polyline` (`points`, at least two `[x, y]` pairs;
//! `closed`, a boolean, default `false`), `line` (`x`, `y`, `dx`, `dy`: the
//! infinite line through `(x, y)` along `(dx, dy)`). Every value is a
//! number or an expression (a string).

use crate::expr::Expr;

/// The kinds of shapes of a `[drawing]` table.
pub const SHAPE_KINDS: &[&str] = &["point", "circle", "ellipse", "polyline", "line"];

/// The default unit of the plane's axes.
pub const DEFAULT_UNIT: &str = "m";

/// The names of a picture's axes when `drawing.axes` is absent.
pub const DEFAULT_AXES: [&str; 2] = ["x", "y"];

/// One shape of a drawing; `E` is an expression's text ([`String`]) in a
/// [`DrawingSpec`] as read, an [`Expr`] over the coordinates once compiled
/// ([`CompiledDrawing`]).
#[derive(Clone, Debug, PartialEq)]
pub enum DrawingShape<E> {
    /// A dot at `(x, y)`.
    Point {
        /// Abscissa.
        x: E,
        /// Ordinate.
        y: E,
    },
    /// The circle of radius `r` about `(x, y)`.
    Circle {
        /// Abscissa of the centre.
        x: E,
        /// Ordinate of the centre.
        y: E,
        /// Radius, `> 0`.
        r: E,
    },
    /// The ellipse about `(x, y)` with semi-axis `a` along the direction
    /// `angle` (rad, from the x-axis) and `b` across it.
    Ellipse {
        /// Abscissa of the centre.
        x: E,
        /// Ordinate of the centre.
        y: E,
        /// Semi-axis along `angle`.
        a: E,
        /// Semi-axis across `angle`.
        b: E,
        /// Direction of the first semi-axis (rad).
        angle: E,
    },
    /// The polyline through `points` (at least two), closed back to the
    /// first point when `closed`.
    Polyline {
        /// The vertices `[x, y]`.
        points: Vec<[E; 2]>,
        /// Whether the last point joins the first.
        closed: bool,
    },
    /// The infinite line through `(x, y)` along `(dx, dy)`.
    Line {
        /// Abscissa of a point of the line.
        x: E,
        /// Ordinate of a point of the line.
        y: E,
        /// Direction, abscissa.
        dx: E,
        /// Direction, ordinate.
        dy: E,
    },
}

impl<E> DrawingShape<E> {
    /// The shape's `kind` in the file (one of [`SHAPE_KINDS`]).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Point { .. } => "point",
            Self::Circle { .. } => "circle",
            Self::Ellipse { .. } => "ellipse",
            Self::Polyline { .. } => "polyline",
            Self::Line { .. } => "line",
        }
    }

    /// Every value with its key below the shape's (`x`, `points[1][0]`, …),
    /// in the file's order.
    pub fn values(&self) -> Vec<(String, &E)> {
        fn named<'a, E>(pairs: Vec<(&str, &'a E)>) -> Vec<(String, &'a E)> {
            pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
        }
        match self {
            Self::Point { x, y } => named(vec![("x", x), ("y", y)]),
            Self::Circle { x, y, r } => named(vec![("x", x), ("y", y), ("r", r)]),
            Self::Ellipse { x, y, a, b, angle } => named(vec![
                ("x", x),
                ("y", y),
                ("a", a),
                ("b", b),
                ("angle", angle),
            ]),
            Self::Polyline { points, .. } => points
                .iter()
                .enumerate()
                .flat_map(|(k, [x, y])| {
                    [
                        (format!("points[{k}][0]"), x),
                        (format!("points[{k}][1]"), y),
                    ]
                })
                .collect(),
            Self::Line { x, y, dx, dy } => named(vec![("x", x), ("y", y), ("dx", dx), ("dy", dy)]),
        }
    }

    /// The same shape with every value mapped by `f(key, value)`, `key`
    /// as in [`values`](Self::values).
    ///
    /// # Errors
    /// The first error of `f`.
    pub fn try_map<F, Er>(
        &self,
        mut f: impl FnMut(&str, &E) -> Result<F, Er>,
    ) -> Result<DrawingShape<F>, Er> {
        Ok(match self {
            Self::Point { x, y } => DrawingShape::Point {
                x: f("x", x)?,
                y: f("y", y)?,
            },
            Self::Circle { x, y, r } => DrawingShape::Circle {
                x: f("x", x)?,
                y: f("y", y)?,
                r: f("r", r)?,
            },
            Self::Ellipse { x, y, a, b, angle } => DrawingShape::Ellipse {
                x: f("x", x)?,
                y: f("y", y)?,
                a: f("a", a)?,
                b: f("b", b)?,
                angle: f("angle", angle)?,
            },
            Self::Polyline { points, closed } => DrawingShape::Polyline {
                points: points
                    .iter()
                    .enumerate()
                    .map(|(k, [x, y])| {
                        Ok([
                            f(&format!("points[{k}][0]"), x)?,
                            f(&format!("points[{k}][1]"), y)?,
                        ])
                    })
                    .collect::<Result<Vec<_>, Er>>()?,
                closed: *closed,
            },
            Self::Line { x, y, dx, dy } => DrawingShape::Line {
                x: f("x", x)?,
                y: f("y", y)?,
                dx: f("dx", dx)?,
                dy: f("dy", dy)?,
            },
        })
    }
}

/// The body's orientation: a line from `(x, y)` along `angle` (rad, from
/// the x-axis), `length` long (the renderer chooses when absent).
#[derive(Clone, Debug, PartialEq)]
pub struct DrawingHeading<E> {
    /// Abscissa of the line's start (the body's centre).
    pub x: E,
    /// Ordinate of the line's start.
    pub y: E,
    /// The heading angle (rad).
    pub angle: E,
    /// The line's length.
    pub length: Option<E>,
}

/// The `[drawing]` table of a model file (`E = String`, as read) or its
/// compiled form ([`CompiledDrawing`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DrawingSpec<E = String> {
    /// `drawing.unit`: the unit of the plane's axes ([`DEFAULT_UNIT`] when
    /// absent).
    pub unit: String,
    /// `drawing.axes`: the names of the picture's horizontal and vertical
    /// axes ([`DEFAULT_AXES`] when absent; e.g. `["X", "Z"]` for a body in
    /// space seen along `Y`).
    pub axes: [String; 2],
    /// `drawing.boundaries`: the boundary pieces drawn as walls by their
    /// zero sets in the plane of the coordinates `x` and `y`; `None`
    /// (absent) means every piece that depends on `x` and `y` only.
    pub boundaries: Option<Vec<usize>>,
    /// `[[drawing.walls]]`: still shapes (expressions of the parameters).
    pub walls: Vec<DrawingShape<E>>,
    /// `[[drawing.body]]`: the body, at least one shape.
    pub body: Vec<DrawingShape<E>>,
    /// `[drawing.heading]`.
    pub heading: Option<DrawingHeading<E>>,
    /// `drawing.contact`: where an impact is marked, `[x, y]`.
    pub contact: Option<[E; 2]>,
}

/// A [`DrawingSpec`] with every expression compiled over the coordinates
/// (slots `[q_0 … q_{n−1}]`); walls fold to constants.
pub type CompiledDrawing = DrawingSpec<Expr>;

impl<E> DrawingSpec<E> {
    /// Every value with its full TOML key (`drawing.body[0].x`,
    /// `drawing.heading.angle`, `drawing.contact[1]`), and whether it
    /// belongs to a wall.
    pub fn values(&self) -> Vec<(String, &E, bool)> {
        let mut out = Vec::new();
        for (group, shapes, wall) in [("walls", &self.walls, true), ("body", &self.body, false)] {
            for (i, s) in shapes.iter().enumerate() {
                for (k, v) in s.values() {
                    out.push((format!("drawing.{group}[{i}].{k}"), v, wall));
                }
            }
        }
        if let Some(h) = &self.heading {
            out.push(("drawing.heading.x".into(), &h.x, false));
            out.push(("drawing.heading.y".into(), &h.y, false));
            out.push(("drawing.heading.angle".into(), &h.angle, false));
            if let Some(l) = &h.length {
                out.push(("drawing.heading.length".into(), l, false));
            }
        }
        if let Some([x, y]) = &self.contact {
            out.push(("drawing.contact[0]".into(), x, false));
            out.push(("drawing.contact[1]".into(), y, false));
        }
        out
    }

    /// The same table with every value mapped by `f(full key, value)`.
    ///
    /// # Errors
    /// The first error of `f`.
    pub fn try_map<F, Er>(
        &self,
        mut f: impl FnMut(&str, &E) -> Result<F, Er>,
    ) -> Result<DrawingSpec<F>, Er> {
        let shapes = |group: &str,
                      shapes: &[DrawingShape<E>],
                      f: &mut dyn FnMut(&str, &E) -> Result<F, Er>| {
            shapes
                .iter()
                .enumerate()
                .map(|(i, s)| s.try_map(|k, v| f(&format!("drawing.{group}[{i}].{k}"), v)))
                .collect::<Result<Vec<_>, Er>>()
        };
        let walls = shapes("walls", &self.walls, &mut f)?;
        let body = shapes("body", &self.body, &mut f)?;
        let heading = match &self.heading {
            Some(h) => Some(DrawingHeading {
                x: f("drawing.heading.x", &h.x)?,
                y: f("drawing.heading.y", &h.y)?,
                angle: f("drawing.heading.angle", &h.angle)?,
                length: match &h.length {
                    Some(l) => Some(f("drawing.heading.length", l)?),
                    None => None,
                },
            }),
            None => None,
        };
        let contact = match &self.contact {
            Some([x, y]) => Some([f("drawing.contact[0]", x)?, f("drawing.contact[1]", y)?]),
            None => None,
        };
        Ok(DrawingSpec {
            unit: self.unit.clone(),
            axes: self.axes.clone(),
            boundaries: self.boundaries.clone(),
            walls,
            body,
            heading,
            contact,
        })
    }
}
