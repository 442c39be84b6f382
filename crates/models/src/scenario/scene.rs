//! What the planar picture of a model shows of a run ([`Scene`]): for a
//! catalogued model its [`Drawing`](crate::Drawing), for a model file its
//! `[drawing]` table (docs/model-files.md) or, without one, the default
//! view of its coordinates `x` and `y`.

use super::{Scenario, file};
use crate::drawing::{RECEDE, cabinet, ellipse_outline};
use crate::{
    DynModelVisitor, DynRunSetup, Heading, ModelError, ModelVisitor, NamedDynSystem, NamedSystem,
    Point, RunSetup, Shape,
};
use diracvi_expr::{CompiledDrawing, DrawingShape, Expr};
use nalgebra::SVector;
use std::ops::Range;

/// Points of the outline of an `ellipse` shape of a model file's drawing.
pub const FILE_ELLIPSE_POINTS: usize = 48;
/// Grid cells per side of the box over which a boundary piece drawn by its
/// zero set ([`PlaneWalls`]) is sampled.
const CONTOUR_CELLS: usize = 160;

/// Walls drawn as the zero sets of boundary pieces in the plane of the
/// coordinates `x` and `y` (a model file's walls; the renderer samples them
/// over the part of the plane it shows).
#[derive(Debug, Clone, PartialEq)]
pub struct PlaneWalls {
    /// Index of the coordinate `x`.
    pub x: usize,
    /// Index of the coordinate `y`.
    pub y: usize,
    /// The pieces drawn; `None`: every piece that depends on `x` and `y`
    /// only.
    pub pieces: Option<Vec<usize>>,
}

/// What a planar picture shows of a run, in plane coordinates: the still
/// walls, the body at every frame, its heading, and the impact points.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    /// The unit of the plane's axes (`m` for the catalogue).
    pub unit: String,
    /// The names of the horizontal and vertical axes (`x`, `y` unless a
    /// model file's `drawing.axes` says otherwise).
    pub axes: [String; 2],
    /// Still shapes.
    pub walls: Vec<Shape>,
    /// Boundary pieces drawn by their zero sets (model files).
    pub plane_walls: Option<PlaneWalls>,
    /// The body at every frame (same shapes in every frame).
    pub bodies: Vec<Vec<Shape>>,
    /// The body's heading at every frame; empty for a body without one.
    pub headings: Vec<Heading>,
    /// The point of each impact.
    pub contacts: Vec<Point>,
}

impl Scene {
    /// The names `x`, `y` of a plane's axes: what every picture but a
    /// model file's with `drawing.axes` labels its axes.
    pub fn xy_axes() -> [String; 2] {
        ["x".to_owned(), "y".to_owned()]
    }
}

impl Scenario {
    /// Whether the scenario's model has a planar picture: a catalogued model
    /// with a [`Drawing`](crate::Drawing), a model file with a `[drawing]`
    /// table, body axes in space (an orientation: the oblique view of its
    /// axes) or coordinates named `x` and `y`.
    ///
    /// # Errors
    /// As [`visit_catalogue`](Self::visit_catalogue) (parameters, initial
    /// data).
    pub fn has_picture(&self) -> Result<bool, ModelError> {
        if self.circuit.is_some() {
            return Ok(false);
        }
        match &self.file {
            Some(f) => Ok(f.drawing.is_some()
                || defines_body_axes(f)
                || plane_coordinates(&f.coordinates).is_some()),
            None => {
                struct Has;
                impl ModelVisitor for Has {
                    type Output = bool;
                    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
                        self,
                        model: &Mo,
                        _setup: &RunSetup<N>,
                    ) -> bool {
                        model.picture().is_some()
                    }
                }
                self.visit_catalogue(Has)
            }
        }
    }

    /// The picture of a run: `frames` are recorded configurations `q`,
    /// `impacts` the configuration and piece of each impact. `None` for a
    /// model without a picture ([`has_picture`](Self::has_picture)).
    ///
    /// # Errors
    /// As [`visit_catalogue`](Self::visit_catalogue); a model file's
    /// compile errors.
    pub fn scene(
        &self,
        frames: &[&[f64]],
        impacts: &[(&[f64], usize)],
    ) -> Result<Option<Scene>, ModelError> {
        if self.circuit.is_some() {
            return Ok(None);
        }
        match &self.file {
            Some(f) => {
                let compiled = file::compile(self, f)?;
                Ok(match compiled.drawing() {
                    Some(d) => Some(file_scene(d, &f.coordinates, frames, impacts)),
                    None => match body_axes(self, f)? {
                        Some(axes) => Some(axes_scene(&axes, &f.coordinates, frames, impacts)),
                        None => default_scene(&f.coordinates, frames, impacts),
                    },
                })
            }
            None => self.visit_catalogue(CatalogueScene { frames, impacts }),
        }
    }

    /// The still walls of the model's picture, as shapes: the scene's
    /// [`walls`](Scene::walls) and, for its [`plane_walls`](Scene::plane_walls),
    /// the zero sets of those boundary pieces sampled over the box
    /// `bx × by` (160 cells a side) and joined into open
    /// polylines. What every picture of a run draws as walls: `--animate`,
    /// `--poster`, the x–y panel of `--plot` and of Python's
    /// `RunResult.plot()`.
    ///
    /// # Errors
    /// As [`visit_dyn`](Self::visit_dyn) (a model file's compile errors).
    pub fn walls_in(
        &self,
        scene: &Scene,
        bx: Range<f64>,
        by: Range<f64>,
    ) -> Result<Vec<Shape>, ModelError> {
        let mut walls = scene.walls.clone();
        if let Some(plane) = &scene.plane_walls {
            let curves = self.visit_dyn(ContourWalls {
                x: plane.x,
                y: plane.y,
                bx,
                by,
                pieces: plane.pieces.clone(),
            })?;
            walls.extend(
                curves
                    .into_iter()
                    .filter(|c| c.len() >= 2)
                    .map(|c| Shape::Polyline {
                        points: c.into_iter().map(|(x, y)| [x, y]).collect(),
                        closed: false,
                    }),
            );
        }
        Ok(walls)
    }

    /// The walls of the model's picture around a path of the plane (the
    /// x–y path of a run and its impact points): [`walls_in`](Self::walls_in)
    /// the box of the path's finite points widened by half its larger side
    /// on every side (`−1..1` squared without such points). Empty for a
    /// model without a picture ([`has_picture`](Self::has_picture)).
    ///
    /// # Errors
    /// As [`scene`](Self::scene) and [`walls_in`](Self::walls_in).
    pub fn walls_around(
        &self,
        path: impl IntoIterator<Item = Point>,
    ) -> Result<Vec<Shape>, ModelError> {
        let Some(scene) = self.scene(&[], &[])? else {
            return Ok(Vec::new());
        };
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for p in path {
            if p[0].is_finite() && p[1].is_finite() {
                for i in 0..2 {
                    lo[i] = lo[i].min(p[i]);
                    hi[i] = hi[i].max(p[i]);
                }
            }
        }
        if lo[0] > hi[0] {
            (lo, hi) = ([-1.0; 2], [1.0; 2]);
        }
        let side = (hi[0] - lo[0]).max(hi[1] - lo[1]).max(1e-9);
        let grow = |i: usize| (lo[i] - 0.5 * side)..(hi[i] + 0.5 * side);
        self.walls_in(&scene, grow(0), grow(1))
    }
}

/// The indices of the coordinates named `x` and `y`.
fn plane_coordinates(coordinates: &[String]) -> Option<(usize, usize)> {
    let at = |name: &str| coordinates.iter().position(|c| c == name);
    at("x").zip(at("y"))
}

/// The scene of a catalogued model, from its [`Drawing`](crate::Drawing).
struct CatalogueScene<'a> {
    frames: &'a [&'a [f64]],
    impacts: &'a [(&'a [f64], usize)],
}

impl ModelVisitor for CatalogueScene<'_> {
    type Output = Option<Scene>;
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Option<Scene> {
        let drawing = model.picture()?;
        // A configuration of the model's size (records have `N` entries).
        let q = |v: &[f64]| {
            let mut q: SVector<f64, N> = setup.q0;
            for (qi, &vi) in q.iter_mut().zip(v) {
                *qi = vi;
            }
            q
        };
        let headings: Vec<Heading> = self
            .frames
            .iter()
            .map_while(|v| drawing.heading(&q(v)))
            .collect();
        Some(Scene {
            unit: "m".into(),
            axes: drawing.axes(),
            walls: drawing.walls(),
            plane_walls: None,
            bodies: self.frames.iter().map(|v| drawing.body(&q(v))).collect(),
            headings: if headings.len() == self.frames.len() {
                headings
            } else {
                Vec::new()
            },
            contacts: self
                .impacts
                .iter()
                .map(|(v, piece)| drawing.contact(&q(v), *piece))
                .collect(),
        })
    }
}

/// A shape of a file's drawing at `q`.
fn shape_at(shape: &DrawingShape<Expr>, q: &[f64]) -> Shape {
    let e = |x: &Expr| x.eval(q);
    match shape {
        DrawingShape::Point { x, y } => Shape::Dot([e(x), e(y)]),
        DrawingShape::Circle { x, y, r } => Shape::Circle {
            center: [e(x), e(y)],
            radius: e(r),
        },
        DrawingShape::Ellipse { x, y, a, b, angle } => Shape::Polyline {
            points: ellipse_outline([e(x), e(y)], e(a), e(b), e(angle), FILE_ELLIPSE_POINTS),
            closed: true,
        },
        DrawingShape::Polyline { points, closed } => Shape::Polyline {
            points: points.iter().map(|[x, y]| [e(x), e(y)]).collect(),
            closed: *closed,
        },
        DrawingShape::Line { x, y, dx, dy } => Shape::Line {
            point: [e(x), e(y)],
            direction: [e(dx), e(dy)],
        },
    }
}

/// The point a shape is anchored at (its centre, its first point).
fn anchor(shape: &Shape) -> Point {
    match shape {
        Shape::Dot(p) => *p,
        Shape::Circle { center, .. } => *center,
        Shape::Polyline { points, closed } => {
            if *closed && !points.is_empty() {
                let n = points.len() as f64;
                let sum = points
                    .iter()
                    .fold([0.0, 0.0], |a, p| [a[0] + p[0], a[1] + p[1]]);
                [sum[0] / n, sum[1] / n]
            } else {
                points.first().copied().unwrap_or([f64::NAN; 2])
            }
        }
        Shape::Line { point, .. } => *point,
    }
}

/// The scene of a model file with a `[drawing]` table.
fn file_scene(
    d: &CompiledDrawing,
    coordinates: &[String],
    frames: &[&[f64]],
    impacts: &[(&[f64], usize)],
) -> Scene {
    let body = |q: &[f64]| -> Vec<Shape> { d.body.iter().map(|s| shape_at(s, q)).collect() };
    let contact = |q: &[f64]| -> Point {
        match &d.contact {
            Some([x, y]) => [x.eval(q), y.eval(q)],
            None => body(q).first().map_or([f64::NAN; 2], anchor),
        }
    };
    // Walls are constants: any configuration evaluates them.
    let q0: Vec<f64> = frames
        .first()
        .map_or_else(|| vec![0.0; coordinates.len()], |f| f.to_vec());
    let plane_walls = plane_coordinates(coordinates).and_then(|(x, y)| {
        let pieces = d.boundaries.clone();
        (pieces.as_ref().is_none_or(|p| !p.is_empty())).then_some(PlaneWalls { x, y, pieces })
    });
    Scene {
        unit: d.unit.clone(),
        axes: d.axes.clone(),
        walls: d.walls.iter().map(|s| shape_at(s, &q0)).collect(),
        plane_walls,
        bodies: frames.iter().map(|q| body(q)).collect(),
        headings: match &d.heading {
            Some(h) => frames
                .iter()
                .map(|q| Heading {
                    center: [h.x.eval(q), h.y.eval(q)],
                    angle: h.angle.eval(q),
                    length: h.length.as_ref().map(|l| l.eval(q)),
                })
                .collect(),
            None => Vec::new(),
        },
        contacts: impacts.iter().map(|(q, _)| contact(q)).collect(),
    }
}

/// The names of the body axes in space a file with an orientation defines
/// (`model.orientation = "so3"`, or written out longhand).
const BODY_AXES: [&str; 9] = [
    "e1x", "e1y", "e1z", "e2x", "e2y", "e2z", "e3x", "e3y", "e3z",
];

/// Whether a model file defines every one of [`BODY_AXES`].
fn defines_body_axes(f: &diracvi_expr::ModelFile) -> bool {
    BODY_AXES
        .iter()
        .all(|name| f.definitions.iter().any(|(d, _)| d == name))
}

/// The body axes `e1x … e3z` of a model file that defines them, compiled
/// over `[q.., v..]` (they read `q` only); `None` without them.
fn body_axes(sc: &Scenario, f: &diracvi_expr::ModelFile) -> Result<Option<Vec<Expr>>, ModelError> {
    if !defines_body_axes(f) {
        return Ok(None);
    }
    let sources: Vec<(String, String)> = BODY_AXES
        .iter()
        .map(|name| (format!("definitions.{name}"), (*name).to_owned()))
        .collect();
    Ok(Some(f.compile_velocity_functions(
        &file::overrides(sc),
        &sources,
    )?))
}

/// The default view of a body in space (a model file with an orientation
/// and no `[drawing]`): the oblique view `(X + 0.35 Y, Z + 0.35 Y)` of its
/// centre (the coordinates `X, Y, Z`, or `x, y, z`; the origin without
/// them, a body turning about a fixed point) and of its body axes `e1, e2,
/// e3` from there, each a tenth of the larger side of the box of the
/// centre's path long (unit length for a fixed centre); impacts are marked
/// at the centre.
fn axes_scene(
    axes: &[Expr],
    coordinates: &[String],
    frames: &[&[f64]],
    impacts: &[(&[f64], usize)],
) -> Scene {
    let at = |name: &str| coordinates.iter().position(|c| c == name);
    let centre_of = ["X", "Y", "Z"]
        .map(at)
        .into_iter()
        .collect::<Option<Vec<usize>>>()
        .or_else(|| ["x", "y", "z"].map(at).into_iter().collect());
    let centre = |q: &[f64]| match &centre_of {
        Some(i) => cabinet([q[i[0]], q[i[1]], q[i[2]]]),
        None => [0.0, 0.0],
    };
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for q in frames {
        let c = centre(q);
        for i in 0..2 {
            lo[i] = lo[i].min(c[i]);
            hi[i] = hi[i].max(c[i]);
        }
    }
    let side = (hi[0] - lo[0]).max(hi[1] - lo[1]);
    let length = if side.is_finite() && side > 0.0 {
        0.1 * side
    } else {
        1.0
    };
    let zeros = vec![0.0; coordinates.len()];
    let body = |q: &[f64]| -> Vec<Shape> {
        let c = centre(q);
        let mut shapes: Vec<Shape> = (0..3)
            .map(|k| {
                let e = [0, 1, 2].map(|j| axes[3 * k + j].eval_split(q, &zeros));
                let d = cabinet(e);
                Shape::Polyline {
                    points: vec![c, [c[0] + length * d[0], c[1] + length * d[1]]],
                    closed: false,
                }
            })
            .collect();
        shapes.push(Shape::Dot(c));
        shapes
    };
    Scene {
        unit: "m".into(),
        axes: [format!("X + {RECEDE} Y"), format!("Z + {RECEDE} Y")],
        walls: Vec::new(),
        plane_walls: None,
        bodies: frames.iter().map(|q| body(q)).collect(),
        headings: Vec::new(),
        contacts: impacts.iter().map(|(q, _)| centre(q)).collect(),
    }
}

/// The default view of a model file without a `[drawing]`: a dot at
/// `(x, y)`, the pieces over `x` and `y` as walls; `None` without `x` and
/// `y`. (No heading: a coordinate's name does not tell an orientation.)
fn default_scene(
    coordinates: &[String],
    frames: &[&[f64]],
    impacts: &[(&[f64], usize)],
) -> Option<Scene> {
    let (x, y) = plane_coordinates(coordinates)?;
    let at = |q: &[f64]| [q[x], q[y]];
    Some(Scene {
        unit: "m".into(),
        axes: Scene::xy_axes(),
        walls: Vec::new(),
        plane_walls: Some(PlaneWalls { x, y, pieces: None }),
        bodies: frames.iter().map(|q| vec![Shape::Dot(at(q))]).collect(),
        headings: Vec::new(),
        contacts: impacts.iter().map(|(q, _)| at(q)).collect(),
    })
}

/// The zero sets, within a box, of a model file's boundary pieces that
/// depend on `x` and `y` only (checked by moving the other coordinates),
/// joined into polylines.
struct ContourWalls {
    /// Index of the coordinate drawn across.
    x: usize,
    /// Index of the coordinate drawn up.
    y: usize,
    /// The box sampled, across.
    bx: Range<f64>,
    /// The box sampled, up.
    by: Range<f64>,
    /// The pieces drawn (`None`: all; those not over `x` and `y` only are
    /// skipped either way).
    pieces: Option<Vec<usize>>,
}

impl DynModelVisitor for ContourWalls {
    type Output = Vec<Vec<(f64, f64)>>;
    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Self::Output {
        let q0: Vec<f64> = setup.q0.iter().copied().collect();
        let n = CONTOUR_CELLS;
        let gx = |i: usize| self.bx.start + (self.bx.end - self.bx.start) * i as f64 / n as f64;
        let gy = |j: usize| self.by.start + (self.by.end - self.by.start) * j as f64 / n as f64;
        let mut segments = Vec::new();
        for piece in 0..model.boundary_count() {
            if self.pieces.as_ref().is_some_and(|p| !p.contains(&piece)) {
                continue;
            }
            let g = |q: &[f64]| model.boundary::<f64>(piece, q);
            let at = |base: &[f64], x: f64, y: f64| {
                let mut q = base.to_vec();
                q[self.x] = x;
                q[self.y] = y;
                g(&q)
            };
            // Only x and y matter: the same values with the other
            // coordinates moved.
            let moved: Vec<f64> = q0
                .iter()
                .enumerate()
                .map(|(k, &v)| {
                    if k == self.x || k == self.y {
                        v
                    } else {
                        1.3 * v + 0.37
                    }
                })
                .collect();
            let planar = [(0, 0), (n / 3, n / 2), (n, n / 4), (n / 2, n)]
                .iter()
                .all(|&(i, j)| {
                    let (a, b) = (at(&q0, gx(i), gy(j)), at(&moved, gx(i), gy(j)));
                    a.is_finite() && (a - b).abs() <= 1e-12 * a.abs().max(1.0)
                });
            if !planar {
                continue;
            }
            let values: Vec<Vec<f64>> = (0..=n)
                .map(|j| (0..=n).map(|i| at(&q0, gx(i), gy(j))).collect())
                .collect();
            marching_squares(&values, &gx, &gy, &mut segments);
        }
        chain(segments)
    }
}

/// Join segments sharing end points (to `1e-9` of their length scale) into
/// polylines.
fn chain(segments: Vec<[(f64, f64); 2]>) -> Vec<Vec<(f64, f64)>> {
    use std::collections::HashMap;
    let scale = segments
        .iter()
        .flatten()
        .map(|p| p.0.abs().max(p.1.abs()))
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let key = |p: (f64, f64)| {
        let q = scale * 1e-9;
        ((p.0 / q).round() as i64, (p.1 / q).round() as i64)
    };
    // End point → segments ending there.
    let mut ends: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
    for (k, s) in segments.iter().enumerate() {
        for &p in s {
            ends.entry(key(p)).or_default().push(k);
        }
    }
    let mut used = vec![false; segments.len()];
    let mut out = Vec::new();
    for start in 0..segments.len() {
        if used[start] {
            continue;
        }
        used[start] = true;
        let mut line = vec![segments[start][0], segments[start][1]];
        // Grow forward from the last point, then backward from the first.
        for forward in [true, false] {
            loop {
                let tip = if forward {
                    line[line.len() - 1]
                } else {
                    line[0]
                };
                let next = ends
                    .get(&key(tip))
                    .and_then(|ks| ks.iter().copied().find(|&k| !used[k]));
                let Some(k) = next else { break };
                used[k] = true;
                let [a, b] = segments[k];
                let other = if key(a) == key(tip) { b } else { a };
                if forward {
                    line.push(other);
                } else {
                    line.insert(0, other);
                }
            }
        }
        out.push(line);
    }
    out
}

/// The segments of the zero set of the grid values `v[j][i]` at
/// `(gx(i), gy(j))`, by marching squares (saddles split arbitrarily).
fn marching_squares(
    v: &[Vec<f64>],
    gx: &dyn Fn(usize) -> f64,
    gy: &dyn Fn(usize) -> f64,
    out: &mut Vec<[(f64, f64); 2]>,
) {
    let n = v.len() - 1;
    for j in 0..n {
        for i in 0..n {
            let corners = [
                (gx(i), gy(j), v[j][i]),
                (gx(i + 1), gy(j), v[j][i + 1]),
                (gx(i + 1), gy(j + 1), v[j + 1][i + 1]),
                (gx(i), gy(j + 1), v[j + 1][i]),
            ];
            if corners.iter().any(|c| !c.2.is_finite()) {
                continue;
            }
            let mut crossings = Vec::with_capacity(4);
            for k in 0..4 {
                let (a, b) = (corners[k], corners[(k + 1) % 4]);
                if (a.2 < 0.0) != (b.2 < 0.0) {
                    let s = a.2 / (a.2 - b.2);
                    crossings.push((a.0 + s * (b.0 - a.0), a.1 + s * (b.1 - a.1)));
                }
            }
            for pair in crossings.chunks_exact(2) {
                out.push([pair[0], pair[1]]);
            }
        }
    }
}
