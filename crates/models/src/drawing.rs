//! A planar picture of a model, for animations (`diracvi run --animate`).
//!
//! A model that can be drawn in a plane describes, in that plane's
//! coordinates (metres, `y` up), its walls (the boundary of the admissible
//! set), its body at a configuration `q`, and the point where the body
//! touches a boundary piece. The vocabulary is a handful of [`Shape`]s; how
//! they are rendered (SVG, colours, sizes on screen) is the caller's
//! business. A model without a picture returns `None` from
//! [`Model::drawing`](crate::Model::drawing).

use nalgebra::SVector;

/// A point of the plane, `[x, y]` (m, `y` up).
pub type Point = [f64; 2];

/// One element of a picture, in plane coordinates.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A point (a point mass, a contact point): drawn as a dot of a fixed
    /// size on screen.
    Dot(Point),
    /// A circle of radius `radius` (m) about `center`.
    Circle {
        /// Centre.
        center: Point,
        /// Radius (m), `> 0`.
        radius: f64,
    },
    /// A polyline through `points`, closed back to the first point when
    /// `closed` (an outline).
    Polyline {
        /// The vertices, in order.
        points: Vec<Point>,
        /// Whether the last point joins the first.
        closed: bool,
    },
    /// The infinite straight line through `point` along `direction` (a
    /// floor, a wall): the renderer draws it across the whole view.
    Line {
        /// A point of the line.
        point: Point,
        /// Its direction (any non-zero length).
        direction: Point,
    },
}

/// The orientation of a body: a line from `center` along `angle` (rad,
/// counter-clockwise from the x-axis).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Heading {
    /// Where the line starts (the body's centre).
    pub center: Point,
    /// The heading angle (rad).
    pub angle: f64,
    /// The line's length (m); `None`: the renderer's choice.
    pub length: Option<f64>,
}

impl Heading {
    /// The line's far end, for a length `length` (when it has none).
    pub fn tip(&self, length: f64) -> Point {
        let l = self.length.unwrap_or(length);
        let (s, c) = self.angle.sin_cos();
        [self.center[0] + l * c, self.center[1] + l * s]
    }
}

/// The planar picture of a model with `N` coordinates.
///
/// Contract: [`body`](Self::body) returns, for every configuration, the
/// same number of shapes, of the same kinds in the same order, each
/// polyline with the same number of points (so a renderer can animate each
/// shape's coordinates between frames).
pub trait Drawing<const N: usize> {
    /// The boundary of the admissible set, sampled (a floor line, a wall
    /// line, a circle, …): drawn once, still.
    fn walls(&self) -> Vec<Shape>;

    /// The body at configuration `q` (seen in the plane of the picture).
    fn body(&self, q: &SVector<f64, N>) -> Vec<Shape>;

    /// Where the body touches boundary piece `piece` at a configuration `q`
    /// on that piece (an impact point).
    fn contact(&self, q: &SVector<f64, N>, piece: usize) -> Point;

    /// The body's orientation at `q`, for a model whose body has one (an
    /// angle in the plane); `None` (the default) otherwise.
    fn heading(&self, _q: &SVector<f64, N>) -> Option<Heading> {
        None
    }
    /// The names of the picture's horizontal and vertical axes (`x`, `y` by
    /// default; a view of space names what it shows, e.g. `X`, `Z`).
    fn axes(&self) -> [String; 2] {
        crate::Scene::xy_axes()
    }
}

/// `count` points of the ellipse with semi-axes `a` (along the body's first
/// axis) and `b`, rotated counter-clockwise by `angle` about `center`.
pub(crate) fn ellipse_outline(
    center: Point,
    a: f64,
    b: f64,
    angle: f64,
    count: usize,
) -> Vec<Point> {
    (0..count)
        .map(|k| {
            let s = std::f64::consts::TAU * k as f64 / count as f64;
            rotate(center, angle, [a * s.cos(), b * s.sin()])
        })
        .collect()
}

/// `center + R(angle) body`: a body-frame point placed in the plane.
pub(crate) fn rotate(center: Point, angle: f64, body: Point) -> Point {
    let (s, c) = angle.sin_cos();
    [
        center[0] + c * body[0] - s * body[1],
        center[1] + s * body[0] + c * body[1],
    ]
}

/// How far a receding `Y` moves a point right and up in the oblique
/// (cabinet) view of space, [`cabinet`].
pub(crate) const RECEDE: f64 = 0.35;

/// The oblique (cabinet) projection of space onto the picture:
/// `(X, Y, Z) ↦ (X + 0.35 Y, Z + 0.35 Y)`, gravity down the page (the heavy
/// top's drawing, and the default view of a body in space).
pub(crate) fn cabinet([x, y, z]: [f64; 3]) -> [f64; 2] {
    [x + RECEDE * y, z + RECEDE * y]
}

/// The floor `y = 0`.
pub(crate) const FLOOR: Shape = Shape::Line {
    point: [0.0, 0.0],
    direction: [1.0, 0.0],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Model, ModelTypeVisitor, catalogue, dispatch_type};

    /// Distance from `p` to a wall shape.
    fn distance(p: Point, shape: &Shape) -> f64 {
        let d = |a: Point, b: Point| (a[0] - b[0]).hypot(a[1] - b[1]);
        let to_segment = |a: Point, b: Point| {
            let ab = [b[0] - a[0], b[1] - a[1]];
            let len2 = ab[0] * ab[0] + ab[1] * ab[1];
            let s = if len2 > 0.0 {
                (((p[0] - a[0]) * ab[0] + (p[1] - a[1]) * ab[1]) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            d(p, [a[0] + s * ab[0], a[1] + s * ab[1]])
        };
        match shape {
            Shape::Dot(c) => d(p, *c),
            Shape::Circle { center, radius } => (d(p, *center) - radius).abs(),
            Shape::Polyline { points, closed } => {
                let mut edges: Vec<(Point, Point)> =
                    points.windows(2).map(|w| (w[0], w[1])).collect();
                if *closed && let (Some(&a), Some(&b)) = (points.last(), points.first()) {
                    edges.push((a, b));
                }
                edges
                    .iter()
                    .map(|&(a, b)| to_segment(a, b))
                    .fold(f64::INFINITY, f64::min)
            }
            Shape::Line { point, direction } => {
                let n = direction[0].hypot(direction[1]);
                ((p[0] - point[0]) * direction[1] - (p[1] - point[1]) * direction[0]).abs() / n
            }
        }
    }

    /// For every drawable model: the body keeps its shapes (kinds, point
    /// counts) from configuration to configuration, and at configurations
    /// on each boundary piece `g_j = 0` (found by bisection from the
    /// default initial data along each coordinate) the contact point lies
    /// on the drawn walls — tying the picture to the admissible set.
    #[test]
    fn contact_points_lie_on_the_walls_and_bodies_keep_their_shapes() {
        struct Check;
        impl ModelTypeVisitor for Check {
            type Output = usize;
            fn visit<const N: usize, const M: usize, Mo: Model<N, M>>(self) -> usize {
                let model = Mo::new(Mo::Params::default()).unwrap();
                let Some(drawing) = model.drawing() else {
                    return 0;
                };
                // Without a boundary by default (the heavy top: its walls
                // are reference lines, its cone is optional) no contact.
                if model.boundary_count() == 0 {
                    return 0;
                }
                let q0 = model.run_defaults().q0;
                let walls = drawing.walls();
                assert!(!walls.is_empty(), "{}: walls", Mo::NAME);
                let kinds = |q: &SVector<f64, N>| -> Vec<(std::mem::Discriminant<Shape>, usize)> {
                    drawing
                        .body(q)
                        .iter()
                        .map(|s| {
                            let n = match s {
                                Shape::Polyline { points, .. } => points.len(),
                                _ => 1,
                            };
                            (std::mem::discriminant(s), n)
                        })
                        .collect()
                };
                let mut found = 0;
                for j in 0..model.boundary_count() {
                    let g = |q: &SVector<f64, N>| model.boundary::<f64>(j, q);
                    for i in 0..N {
                        for sign in [1.0, -1.0] {
                            let at = |t: f64| {
                                let mut q = q0;
                                q[i] += sign * t;
                                q
                            };
                            // First sign change of g_j on a grid of t in (0, 20].
                            let grid: Vec<f64> = (0..=400).map(|k| 0.05 * k as f64).collect();
                            let Some(w) = grid
                                .windows(2)
                                .find(|w| g(&at(w[0])) > 0.0 && g(&at(w[1])) <= 0.0)
                            else {
                                continue;
                            };
                            let (mut lo, mut hi) = (w[0], w[1]);
                            for _ in 0..100 {
                                let mid = 0.5 * (lo + hi);
                                if g(&at(mid)) > 0.0 {
                                    lo = mid
                                } else {
                                    hi = mid
                                }
                            }
                            let q = at(0.5 * (lo + hi));
                            let c = drawing.contact(&q, j);
                            let gap = walls
                                .iter()
                                .map(|w| distance(c, w))
                                .fold(f64::INFINITY, f64::min);
                            assert!(
                                gap <= 1e-9,
                                "{}: piece {j} along q[{i}]: contact {c:?} is {gap:e} off the walls",
                                Mo::NAME
                            );
                            assert_eq!(kinds(&q), kinds(&q0), "{}: body shapes", Mo::NAME);
                            found += 1;
                        }
                    }
                }
                assert!(found > 0, "{}: no boundary configuration found", Mo::NAME);
                found
            }
        }
        let mut drawn = Vec::new();
        for info in catalogue() {
            if dispatch_type(info.name, Check).unwrap() > 0 {
                drawn.push(info.name);
            }
        }
        assert_eq!(
            drawn,
            [
                "particle",
                "ellipse",
                "star",
                "pendulum",
                "disk-wall",
                "disk-table",
                "chaplygin-sphere",
                "bouncing-body"
            ]
        );
    }
}
