//! What the planar picture of a model shows of a run ([`Scene`]): for a
//! catalogued model its [`Drawing`](crate::Drawing), for a model file its
//! `[drawing]` table (docs/model-files.md) or, without one, the default
//! view of its coordinates `x` and `y`.

use super::{Scenario, file};
use crate::drawing::ellipse_outline;
use crate::{Heading, ModelError, ModelVisitor, NamedSystem, Point, RunSetup, Shape};
use diracvi_expr::{CompiledDrawing, DrawingShape, Expr};
use nalgebra::SVector;

/// Points of the outline of an `ellipse` shape of a model file's drawing.
pub const FILE_ELLIPSE_POINTS: usize = 48;

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

impl Scenario {
    /// Whether the scenario's model has a planar picture: a catalogued model
    /// with a [`Drawing`](crate::Drawing), a model file with a `[drawing]`
    /// table or coordinates named `x` and `y`.
    ///
    /// # Errors
    /// As [`visit_catalogue`](Self::visit_catalogue) (parameters, initial
    /// data).
    pub fn has_picture(&self) -> Result<bool, ModelError> {
        if self.circuit.is_some() {
            return Ok(false);
        }
        match &self.file {
            Some(f) => Ok(f.drawing.is_some() || plane_coordinates(&f.coordinates).is_some()),
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
                    None => default_scene(&f.coordinates, frames, impacts),
                })
            }
            None => self.visit_catalogue(CatalogueScene { frames, impacts }),
        }
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
        walls: Vec::new(),
        plane_walls: Some(PlaneWalls { x, y, pieces: None }),
        bodies: frames.iter().map(|q| vec![Shape::Dot(at(q))]).collect(),
        headings: Vec::new(),
        contacts: impacts.iter().map(|(q, _)| at(q)).collect(),
    })
}
