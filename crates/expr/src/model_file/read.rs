//! Reading the TOML document with spans (`toml::de::DeTable`), checking the
//! schema and recording where every expression string sits in the file.

use super::drawing::{
    DEFAULT_AXES, DEFAULT_UNIT, DrawingHeading, DrawingShape, DrawingSpec, SHAPE_KINDS,
};
use super::error::{ModelFileError, ModelFileErrorKind as K};
use super::orientation;
use super::position::Position;
use super::{
    CONSTRAINT_DISCRETIZATIONS, DISCRETIZATIONS, InitialState, InitialValue, ModelFile, Origin,
    RunSettings,
};
use crate::expr::{is_identifier, is_reserved};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

type Value<'i> = Spanned<DeValue<'i>>;
type Entry<'t, 'i> = (&'t Spanned<DeString<'i>>, &'t Value<'i>);

const TOP: &[&str] = &[
    "model",
    "definitions",
    "parameters",
    "run",
    "initial",
    "drawing",
    "invariants",
    "symmetry",
    "forces",
];
const SYMMETRY: &[&str] = &["cyclic"];
const DRAWING: &[&str] = &[
    "unit",
    "axes",
    "boundaries",
    "contact",
    "heading",
    "walls",
    "body",
];
const HEADING: &[&str] = &["x", "y", "angle", "length"];
const POINT: &[&str] = &["kind", "x", "y"];
const CIRCLE: &[&str] = &["kind", "x", "y", "r"];
const ELLIPSE: &[&str] = &["kind", "x", "y", "a", "b", "angle"];
const POLYLINE: &[&str] = &["kind", "points", "closed"];
const LINE: &[&str] = &["kind", "x", "y", "dx", "dy"];
const MODEL: &[&str] = &[
    "name",
    "description",
    "coordinates",
    "lagrangian",
    "constraints",
    "boundaries",
    "hamiltonian",
    "orientation",
    "drives",
];
const ORIENTATION: &[&str] = &["group", "coordinates"];
const RUN: &[&str] = &["h", "tol", "t_end", "discretization", "constraint"];
const INITIAL: &[&str] = &["q", "v", "attitude", "omega"];
const ATTITUDE: &[&str] = &["axis", "angle"];

struct Reader<'s> {
    path: &'s str,
    source: &'s str,
    strings: HashMap<String, (Range<usize>, String)>,
    /// The parameters' names, once read (the names the expressions of
    /// `initial.attitude` and `initial.omega` may use besides `pi`).
    parameter_names: Vec<String>,
}

type Result<T> = std::result::Result<T, ModelFileError>;

/// Read and check everything but the expressions themselves.
pub(super) fn read(source: &str, path: &str) -> Result<ModelFile> {
    let mut r = Reader {
        path,
        source,
        strings: HashMap::new(),
        parameter_names: Vec::new(),
    };
    let root = DeTable::parse(source).map_err(|e| {
        r.error(
            String::new(),
            e.span().map(|s| s.start),
            K::Syntax(e.message().to_owned()),
        )
    })?;
    let root = root.get_ref();
    r.check_keys("", root, TOP)?;

    let model_value =
        get(root, "model").ok_or_else(|| r.error("model".into(), None, K::Missing))?;
    let model = r.table("model", model_value)?;
    r.check_keys("model", model, MODEL)?;
    let table_start = Some(model_value.span().start);

    let name = r.string(
        "model.name",
        r.required(model, "model", "name", table_start)?,
    )?;
    if name.trim().is_empty() {
        let span = get(model, "name").map(|v| v.span().start);
        return Err(r.error("model.name".into(), span, K::Empty));
    }
    let description = match get(model, "description") {
        Some(v) => r.string("model.description", v)?,
        None => String::new(),
    };

    // coordinates and the names they reserve
    let coords_value = r.required(model, "model", "coordinates", table_start)?;
    let coords = r.array("model.coordinates", coords_value)?;
    // A body with an orientation alone (a top) declares none.
    if coords.is_empty() && get(model, "orientation").is_none() {
        return Err(r.error(
            "model.coordinates".into(),
            Some(coords_value.span().start),
            K::Empty,
        ));
    }
    let mut taken: HashMap<String, String> = HashMap::new();
    let mut coordinates = Vec::with_capacity(coords.len() + 4);
    for (i, v) in coords.iter().enumerate() {
        let key = format!("model.coordinates[{i}]");
        let name = r.string(&key, v)?;
        r.add_coordinate(
            &mut taken,
            &mut coordinates,
            key,
            Some(v.span().start),
            name,
        )?;
    }
    let declared = coordinates.len();
    // `model.orientation`: the quaternion's four coordinates after the
    // declared ones, and the names its definitions take.
    let quaternion = match get(model, "orientation") {
        Some(v) => Some(r.orientation(v, &mut taken, &mut coordinates)?),
        None => None,
    };
    let n = coordinates.len();

    let lagrangian = r.expression(
        "model.lagrangian",
        r.required(model, "model", "lagrangian", table_start)?,
    )?;
    let mut constraints = Vec::new();
    if let Some(rows_value) = get(model, "constraints") {
        for (i, row_value) in r.array("model.constraints", rows_value)?.iter().enumerate() {
            let key = format!("model.constraints[{i}]");
            let row = r.array(&key, row_value)?;
            // With an orientation, a row over the declared coordinates
            // only has zeros for the quaternion's.
            let short = quaternion.is_some() && row.len() == declared;
            if row.len() != n && !short {
                let found = row.len();
                let kind = match quaternion {
                    Some(_) => K::WrongLengthOrientation {
                        full: n,
                        declared,
                        found,
                    },
                    None => K::WrongLength { expected: n, found },
                };
                return Err(r.error(key, Some(row_value.span().start), kind));
            }
            let mut entries = Vec::with_capacity(n);
            for (j, v) in row.iter().enumerate() {
                entries.push(r.expression(&format!("{key}[{j}]"), v)?);
            }
            entries.resize(n, "0".to_owned());
            constraints.push(entries);
        }
    }
    let mut drives = Vec::new();
    if let Some(value) = get(model, "drives") {
        let items = r.array("model.drives", value)?;
        if items.len() != constraints.len() {
            return Err(r.error(
                "model.drives".into(),
                Some(value.span().start),
                K::DrivesLength {
                    rows: constraints.len(),
                    found: items.len(),
                },
            ));
        }
        for (i, v) in items.iter().enumerate() {
            drives.push(r.expression(&format!("model.drives[{i}]"), v)?);
        }
    }
    if let Some(q) = &quaternion {
        constraints.push(orientation::unit_row(declared, q));
        if !drives.is_empty() {
            drives.push("0".to_owned());
        }
    }
    let mut boundaries = Vec::new();
    if let Some(value) = get(model, "boundaries") {
        for (j, v) in r.array("model.boundaries", value)?.iter().enumerate() {
            boundaries.push(r.expression(&format!("model.boundaries[{j}]"), v)?);
        }
    }
    let hamiltonian = match get(model, "hamiltonian") {
        Some(v) => Some(r.expression("model.hamiltonian", v)?).filter(|h| !h.trim().is_empty()),
        None => None,
    };

    let mut parameters = Vec::new();
    let mut parameter_expressions = Vec::new();
    if let Some(value) = get(root, "parameters") {
        let table = r.table("parameters", value)?;
        for (k, v) in in_file_order(table) {
            let name = k.get_ref().to_string();
            let key = format!("parameters.{name}");
            let at = Some(k.span().start);
            r.check_name(&key, at, &name)?;
            if let Some(other) = taken.get(&name) {
                return Err(r.error(
                    key,
                    at,
                    K::NameClash {
                        name,
                        other: other.clone(),
                    },
                ));
            }
            if v.get_ref().as_str().is_some() {
                let text = r.expression(&key, v)?;
                parameter_expressions.push((name.clone(), text));
                // the value is computed once every parameter is read
                parameters.push((name, f64::NAN));
            } else {
                let value = r.finite_or(&key, v, "a number or a string (an expression)")?;
                parameters.push((name, value));
            }
        }
    }

    r.parameter_names = parameters.iter().map(|(name, _)| name.clone()).collect();
    let mut definitions: Vec<(String, String)> = quaternion
        .as_ref()
        .map(orientation::definitions)
        .unwrap_or_default();
    if let Some(value) = get(root, "definitions") {
        let table = r.table("definitions", value)?;
        for (k, v) in in_file_order(table) {
            let name = k.get_ref().to_string();
            let key = format!("definitions.{name}");
            let at = Some(k.span().start);
            r.check_name(&key, at, &name)?;
            if let Some(other) = taken.get(&name) {
                return Err(r.error(
                    key,
                    at,
                    K::NameClash {
                        name,
                        other: other.clone(),
                    },
                ));
            }
            if parameters.iter().any(|(p, _)| *p == name) {
                return Err(r.error(
                    key,
                    at,
                    K::NameClash {
                        other: format!("parameter `{name}`"),
                        name,
                    },
                ));
            }
            let text = r.expression(&key, v)?;
            definitions.push((name, text));
        }
    }

    let mut run = RunSettings::default();
    if let Some(value) = get(root, "run") {
        let table = r.table("run", value)?;
        r.check_keys("run", table, RUN)?;
        if let Some(v) = get(table, "h") {
            let h = r.finite("run.h", v)?;
            if h <= 0.0 {
                return Err(r.error(
                    "run.h".into(),
                    Some(v.span().start),
                    K::OutOfRange {
                        value: h,
                        requirement: "the time step must be > 0",
                    },
                ));
            }
            run.h = Some(h);
        }
        if let Some(v) = get(table, "tol") {
            let tol = r.finite("run.tol", v)?;
            if tol <= 0.0 {
                return Err(r.error(
                    "run.tol".into(),
                    Some(v.span().start),
                    K::OutOfRange {
                        value: tol,
                        requirement: "the tolerance must be > 0",
                    },
                ));
            }
            if run.h.is_some() {
                return Err(r.error(
                    "run.tol".into(),
                    Some(v.span().start),
                    K::Exclusive {
                        other: "run.h",
                        reason: "give the step, or the tolerance diracvi chooses the step for",
                    },
                ));
            }
            run.tol = Some(tol);
        }
        if let Some(v) = get(table, "t_end") {
            let t_end = r.finite("run.t_end", v)?;
            if t_end < 0.0 {
                return Err(r.error(
                    "run.t_end".into(),
                    Some(v.span().start),
                    K::OutOfRange {
                        value: t_end,
                        requirement: "the final time must be >= 0",
                    },
                ));
            }
            run.t_end = Some(t_end);
        }
        if let Some(v) = get(table, "discretization") {
            run.discretization = Some(r.choice("run.discretization", v, DISCRETIZATIONS)?);
        }
        if let Some(v) = get(table, "constraint") {
            run.constraint = Some(r.choice("run.constraint", v, CONSTRAINT_DISCRETIZATIONS)?);
        }
    }

    let initial = match get(root, "initial") {
        Some(value) => {
            let table = r.table("initial", value)?;
            r.check_keys("initial", table, INITIAL)?;
            let start = Some(value.span().start);
            let lengths = match quaternion {
                Some(_) => &[n, declared][..],
                None => &[n][..],
            };
            let q = r.initial_vector(
                "initial.q",
                r.required(table, "initial", "q", start)?,
                lengths,
                false,
            )?;
            let v = r.initial_vector(
                "initial.v",
                r.required(table, "initial", "v", start)?,
                lengths,
                true,
            )?;
            if q.contains(&InitialValue::Solve) {
                return Err(r.error("initial.q".into(), start, K::SolveNotAllowed));
            }
            let (q, v) = r.initial_orientation(table, q, v, quaternion.as_ref(), n)?;
            Some(InitialState { q, v })
        }
        None => None,
    };

    let mut invariants: Vec<(String, String)> = Vec::new();
    if let Some(value) = get(root, "invariants") {
        let table = r.table("invariants", value)?;
        for (k, v) in in_file_order(table) {
            let name = k.get_ref().to_string();
            let key = format!("invariants.{name}");
            r.check_name(&key, Some(k.span().start), &name)?;
            let text = r.expression(&key, v)?;
            invariants.push((name, text));
        }
    }

    let mut forces: Vec<(String, String)> = Vec::new();
    if let Some(value) = get(root, "forces") {
        let table = r.table("forces", value)?;
        for (k, v) in in_file_order(table) {
            let name = k.get_ref().to_string();
            let key = format!("forces.{name}");
            if !coordinates.contains(&name) {
                return Err(r.error(
                    key,
                    Some(k.span().start),
                    K::NotACoordinate {
                        name,
                        coordinates: coordinates.clone(),
                    },
                ));
            }
            let text = r.expression(&key, v)?;
            forces.push((name, text));
        }
    }

    let drawing = match get(root, "drawing") {
        Some(value) => Some(r.drawing(value, &coordinates, boundaries.len())?),
        None => None,
    };

    let symmetry = match get(root, "symmetry") {
        Some(value) => r.symmetry(value, &coordinates)?,
        None => Vec::new(),
    };

    Ok(ModelFile {
        path: path.to_owned(),
        name,
        description,
        coordinates,
        lagrangian,
        constraints,
        boundaries,
        hamiltonian,
        definitions,
        parameters,
        parameter_expressions,
        run,
        initial,
        drawing,
        invariants,
        symmetry,
        forces,
        drives,
        origin: Some(Arc::new(Origin {
            source: source.to_owned(),
            strings: r.strings,
        })),
    })
}

fn get<'t, 'i>(table: &'t DeTable<'i>, name: &str) -> Option<&'t Value<'i>> {
    table
        .iter()
        .find(|(k, _)| k.get_ref().as_ref() == name)
        .map(|(_, v)| v)
}

/// Entries sorted by where their key appears in the file.
fn in_file_order<'t, 'i>(table: &'t DeTable<'i>) -> Vec<Entry<'t, 'i>> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

impl Reader<'_> {
    fn error(&self, key: String, offset: Option<usize>, kind: K) -> ModelFileError {
        ModelFileError::new(
            self.path.to_owned(),
            key,
            offset.map(|o| Position::of_offset(self.source, o)),
            kind,
        )
    }

    fn wrong_type(&self, key: &str, v: &Value<'_>, expected: &'static str) -> ModelFileError {
        self.error(
            key.to_owned(),
            Some(v.span().start),
            K::WrongType {
                expected,
                found: v.get_ref().type_str(),
            },
        )
    }

    fn check_keys(
        &self,
        prefix: &str,
        table: &DeTable<'_>,
        allowed: &'static [&'static str],
    ) -> Result<()> {
        for (k, _) in in_file_order(table) {
            if !allowed.contains(&k.get_ref().as_ref()) {
                return Err(self.error(
                    join(prefix, k.get_ref()),
                    Some(k.span().start),
                    K::UnknownKey { allowed },
                ));
            }
        }
        Ok(())
    }

    fn required<'t, 'i>(
        &self,
        table: &'t DeTable<'i>,
        prefix: &str,
        name: &str,
        table_start: Option<usize>,
    ) -> Result<&'t Value<'i>> {
        get(table, name).ok_or_else(|| self.error(join(prefix, name), table_start, K::Missing))
    }

    fn table<'t, 'i>(&self, key: &str, v: &'t Value<'i>) -> Result<&'t DeTable<'i>> {
        v.get_ref()
            .as_table()
            .ok_or_else(|| self.wrong_type(key, v, "a table"))
    }

    fn array<'t, 'i>(&self, key: &str, v: &'t Value<'i>) -> Result<&'t [Value<'i>]> {
        match v.get_ref() {
            DeValue::Array(a) => Ok(a),
            _ => Err(self.wrong_type(key, v, "an array")),
        }
    }

    fn string(&self, key: &str, v: &Value<'_>) -> Result<String> {
        v.get_ref()
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.wrong_type(key, v, "a string"))
    }

    /// A string holding an expression; its span is recorded.
    fn expression(&mut self, key: &str, v: &Value<'_>) -> Result<String> {
        let text = self.string(key, v)?;
        self.strings
            .insert(key.to_owned(), (v.span(), text.clone()));
        Ok(text)
    }

    fn choice(&self, key: &str, v: &Value<'_>, allowed: &'static [&'static str]) -> Result<String> {
        let s = self.string(key, v)?;
        if allowed.contains(&s.as_str()) {
            Ok(s)
        } else {
            Err(self.error(
                key.to_owned(),
                Some(v.span().start),
                K::InvalidChoice { value: s, allowed },
            ))
        }
    }

    /// An integer or float, which must be finite.
    fn finite(&self, key: &str, v: &Value<'_>) -> Result<f64> {
        self.finite_or(key, v, "a number")
    }

    /// An integer or float, which must be finite; `expected` names what
    /// else was acceptable, for the wrong-type message.
    fn finite_or(&self, key: &str, v: &Value<'_>, expected: &'static str) -> Result<f64> {
        let at = Some(v.span().start);
        let value = match v.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .map(|i| i as f64)
                .map_err(|_| {
                    self.error(
                        key.to_owned(),
                        at,
                        K::OutOfRange {
                            value: f64::NAN,
                            requirement: "integers must fit in 64 bits",
                        },
                    )
                })?,
            DeValue::Float(f) => {
                let text = f.as_str();
                // TOML's `nan`/`inf` spellings are the ones Rust parses
                text.parse::<f64>().map_err(|_| {
                    self.error(
                        key.to_owned(),
                        at,
                        K::Syntax(format!("cannot read `{text}` as a number")),
                    )
                })?
            }
            _ => return Err(self.wrong_type(key, v, expected)),
        };
        if value.is_finite() {
            Ok(value)
        } else {
            Err(self.error(key.to_owned(), at, K::NonFinite { value }))
        }
    }

    /// An array of `n` initial values: finite numbers, expressions (strings)
    /// and, when `solve` allows it, the marker `"solve"` (spaces around it
    /// ignored); the marker is read as [`InitialValue::Solve`] and refused
    /// by the caller where it does not belong.
    fn initial_vector(
        &mut self,
        key: &str,
        v: &Value<'_>,
        lengths: &[usize],
        solve: bool,
    ) -> Result<Vec<InitialValue>> {
        let items = self.array(key, v)?;
        if !lengths.contains(&items.len()) {
            let kind = match lengths {
                [full, declared] => K::WrongLengthOrientation {
                    full: *full,
                    declared: *declared,
                    found: items.len(),
                },
                _ => K::WrongLength {
                    expected: lengths[0],
                    found: items.len(),
                },
            };
            return Err(self.error(key.to_owned(), Some(v.span().start), kind));
        }
        let n = items.len();
        let expected = if solve {
            "a number, a string (an expression) or \"solve\""
        } else {
            "a number or a string (an expression)"
        };
        let mut out = Vec::with_capacity(n);
        for (i, x) in items.iter().enumerate() {
            let entry_key = format!("{key}[{i}]");
            out.push(match x.get_ref().as_str() {
                Some(s) if s.trim() == InitialValue::SOLVE => InitialValue::Solve,
                Some(_) => InitialValue::Expression(self.expression(&entry_key, x)?),
                None => InitialValue::Number(self.finite_or(&entry_key, x, expected)?),
            });
        }
        Ok(out)
    }

    /// The `[drawing]` table (see [`DrawingSpec`]); `coordinates` and the
    /// number of boundary pieces check `drawing.boundaries`.
    fn drawing(
        &mut self,
        value: &Value<'_>,
        coordinates: &[String],
        pieces: usize,
    ) -> Result<DrawingSpec> {
        let table = self.table("drawing", value)?;
        self.check_keys("drawing", table, DRAWING)?;
        let start = Some(value.span().start);
        let unit = match get(table, "unit") {
            Some(v) => {
                let unit = self.string("drawing.unit", v)?;
                if unit.trim().is_empty() {
                    return Err(self.error("drawing.unit".into(), Some(v.span().start), K::Empty));
                }
                unit
            }
            None => DEFAULT_UNIT.to_owned(),
        };
        let axes = match get(table, "axes") {
            Some(v) => {
                let items = self.array("drawing.axes", v)?;
                if items.len() != 2 {
                    return Err(self.wrong_type(
                        "drawing.axes",
                        v,
                        "two names, [horizontal, vertical]",
                    ));
                }
                let mut names = [String::new(), String::new()];
                for (i, item) in items.iter().enumerate() {
                    let key = format!("drawing.axes[{i}]");
                    let name = self.string(&key, item)?;
                    if name.trim().is_empty() {
                        return Err(self.error(key, Some(item.span().start), K::Empty));
                    }
                    names[i] = name;
                }
                names
            }
            None => DEFAULT_AXES.map(str::to_owned),
        };
        let boundaries = match get(table, "boundaries") {
            Some(v) => {
                let mut out = Vec::new();
                for (i, item) in self.array("drawing.boundaries", v)?.iter().enumerate() {
                    let key = format!("drawing.boundaries[{i}]");
                    let at = Some(item.span().start);
                    let index = match item.get_ref() {
                        DeValue::Integer(n) => i64::from_str_radix(n.as_str(), n.radix()).ok(),
                        _ => {
                            return Err(self.wrong_type(
                                &key,
                                item,
                                "an integer (a piece's index)",
                            ));
                        }
                    };
                    match index.and_then(|n| usize::try_from(n).ok()) {
                        Some(n) if n < pieces => out.push(n),
                        _ => {
                            return Err(self.error(
                                key,
                                at,
                                K::NoSuchPiece {
                                    index: index.unwrap_or(i64::MAX),
                                    count: pieces,
                                },
                            ));
                        }
                    }
                }
                let planar = ["x", "y"]
                    .iter()
                    .all(|c| coordinates.iter().any(|k| k == c));
                if !out.is_empty() && !planar {
                    return Err(self.error(
                        "drawing.boundaries".into(),
                        Some(v.span().start),
                        K::NoPlaneCoordinates,
                    ));
                }
                Some(out)
            }
            None => None,
        };
        let contact = match get(table, "contact") {
            Some(v) => Some(self.drawing_point("drawing.contact", v)?),
            None => None,
        };
        let heading = match get(table, "heading") {
            Some(v) => {
                let h = self.table("drawing.heading", v)?;
                self.check_keys("drawing.heading", h, HEADING)?;
                let at = Some(v.span().start);
                let mut need = |name: &str| -> Result<String> {
                    let key = format!("drawing.heading.{name}");
                    let value = self.required(h, "drawing.heading", name, at)?;
                    self.drawing_value(&key, value)
                };
                let (x, y, angle) = (need("x")?, need("y")?, need("angle")?);
                let length = match get(h, "length") {
                    Some(l) => Some(self.drawing_value("drawing.heading.length", l)?),
                    None => None,
                };
                Some(DrawingHeading {
                    x,
                    y,
                    angle,
                    length,
                })
            }
            None => None,
        };
        let walls = match get(table, "walls") {
            Some(v) => self.drawing_shapes("drawing.walls", v)?,
            None => Vec::new(),
        };
        let body = match get(table, "body") {
            Some(v) => self.drawing_shapes("drawing.body", v)?,
            None => return Err(self.error("drawing.body".into(), start, K::Missing)),
        };
        if body.is_empty() {
            let at = get(table, "body").map(|v| v.span().start);
            return Err(self.error("drawing.body".into(), at, K::Empty));
        }
        Ok(DrawingSpec {
            unit,
            axes,
            boundaries,
            walls,
            body,
            heading,
            contact,
        })
    }

    /// The `[symmetry]` table: `cyclic`, a non-empty list of coordinate
    /// names, each once, not every coordinate.
    fn symmetry(&self, value: &Value<'_>, coordinates: &[String]) -> Result<Vec<String>> {
        let table = self.table("symmetry", value)?;
        self.check_keys("symmetry", table, SYMMETRY)?;
        let start = Some(value.span().start);
        let list = self.required(table, "symmetry", "cyclic", start)?;
        let items = self.array("symmetry.cyclic", list)?;
        if items.is_empty() {
            return Err(self.error("symmetry.cyclic".into(), Some(list.span().start), K::Empty));
        }
        let mut cyclic: Vec<String> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let key = format!("symmetry.cyclic[{i}]");
            let name = self.string(&key, item)?;
            let at = Some(item.span().start);
            if !coordinates.contains(&name) {
                return Err(self.error(
                    key,
                    at,
                    K::NotACoordinate {
                        name,
                        coordinates: coordinates.to_vec(),
                    },
                ));
            }
            if cyclic.contains(&name) {
                return Err(self.error(key, at, K::NamedTwice { name }));
            }
            cyclic.push(name);
        }
        if cyclic.len() == coordinates.len() {
            return Err(self.error(
                "symmetry.cyclic".into(),
                Some(list.span().start),
                K::NoShapeCoordinate,
            ));
        }
        Ok(cyclic)
    }

    /// A value of the drawing: a finite number (kept as its shortest
    /// round-trip text) or an expression (a string, span recorded).
    fn drawing_value(&mut self, key: &str, v: &Value<'_>) -> Result<String> {
        if v.get_ref().as_str().is_some() {
            self.expression(key, v)
        } else {
            let x = self.finite_or(key, v, "a number or a string (an expression)")?;
            Ok(format!("{x:?}"))
        }
    }

    /// A point `[x, y]` of the drawing.
    fn drawing_point(&mut self, key: &str, v: &Value<'_>) -> Result<[String; 2]> {
        let items = self.array(key, v)?;
        if items.len() != 2 {
            return Err(self.error(
                key.to_owned(),
                Some(v.span().start),
                K::NotAPoint { found: items.len() },
            ));
        }
        Ok([
            self.drawing_value(&format!("{key}[0]"), &items[0])?,
            self.drawing_value(&format!("{key}[1]"), &items[1])?,
        ])
    }

    /// An array of shape tables (`[[drawing.walls]]`, `[[drawing.body]]`).
    fn drawing_shapes(&mut self, key: &str, v: &Value<'_>) -> Result<Vec<DrawingShape<String>>> {
        let mut out = Vec::new();
        for (i, item) in self.array(key, v)?.iter().enumerate() {
            let key = format!("{key}[{i}]");
            let table = self.table(&key, item)?;
            let at = Some(item.span().start);
            let kind = self.choice(
                &format!("{key}.kind"),
                self.required(table, &key, "kind", at)?,
                SHAPE_KINDS,
            )?;
            let allowed = match kind.as_str() {
                "point" => POINT,
                "circle" => CIRCLE,
                "ellipse" => ELLIPSE,
                "polyline" => POLYLINE,
                _ => LINE,
            };
            self.check_keys(&key, table, allowed)?;
            let mut need = |name: &str| -> Result<String> {
                let value = self.required(table, &key, name, at)?;
                self.drawing_value(&format!("{key}.{name}"), value)
            };
            let shape = match kind.as_str() {
                "point" => DrawingShape::Point {
                    x: need("x")?,
                    y: need("y")?,
                },
                "circle" => DrawingShape::Circle {
                    x: need("x")?,
                    y: need("y")?,
                    r: need("r")?,
                },
                "ellipse" => DrawingShape::Ellipse {
                    x: need("x")?,
                    y: need("y")?,
                    a: need("a")?,
                    b: need("b")?,
                    angle: need("angle")?,
                },
                "line" => DrawingShape::Line {
                    x: need("x")?,
                    y: need("y")?,
                    dx: need("dx")?,
                    dy: need("dy")?,
                },
                _ => {
                    let points_key = format!("{key}.points");
                    let list = self.required(table, &key, "points", at)?;
                    let items = self.array(&points_key, list)?;
                    if items.len() < 2 {
                        return Err(self.error(
                            points_key,
                            Some(list.span().start),
                            K::TooFewPoints {
                                needed: 2,
                                found: items.len(),
                            },
                        ));
                    }
                    let mut points = Vec::with_capacity(items.len());
                    for (k, p) in items.iter().enumerate() {
                        points.push(self.drawing_point(&format!("{points_key}[{k}]"), p)?);
                    }
                    let closed = match get(table, "closed") {
                        Some(c) => match c.get_ref() {
                            DeValue::Boolean(b) => *b,
                            _ => {
                                return Err(self.wrong_type(
                                    &format!("{key}.closed"),
                                    c,
                                    "a boolean",
                                ));
                            }
                        },
                        None => false,
                    };
                    DrawingShape::Polyline { points, closed }
                }
            };
            out.push(shape);
        }
        Ok(out)
    }

    /// Add coordinate `name` (read at `key`), reserving its velocity
    /// `<name>_dot` and momentum `p_<name>`.
    fn add_coordinate(
        &self,
        taken: &mut HashMap<String, String>,
        coordinates: &mut Vec<String>,
        key: String,
        at: Option<usize>,
        name: String,
    ) -> Result<()> {
        self.check_name(&key, at, &name)?;
        if let Some(other) = taken.get(&name) {
            let kind = if coordinates.contains(&name) {
                K::Duplicate { name }
            } else {
                K::NameClash {
                    name,
                    other: other.clone(),
                }
            };
            return Err(self.error(key, at, kind));
        }
        for (derived, what) in [
            (
                format!("{name}_dot"),
                format!("the velocity of coordinate `{name}`"),
            ),
            (
                format!("p_{name}"),
                format!("the momentum of coordinate `{name}`"),
            ),
        ] {
            if coordinates.contains(&derived) {
                return Err(self.error(
                    key,
                    at,
                    K::NameClash {
                        name: derived.clone(),
                        other: format!("coordinate `{derived}` ({what})"),
                    },
                ));
            }
            taken.insert(derived, what);
        }
        taken.insert(name.clone(), format!("coordinate `{name}`"));
        coordinates.push(name);
        Ok(())
    }

    /// `model.orientation`: `"so3"`, or `{ group = "so3", coordinates =
    /// [w, x, y, z] }`. Adds the quaternion's coordinates and reserves the
    /// names of its definitions; returns the quaternion's names.
    fn orientation(
        &mut self,
        v: &Value<'_>,
        taken: &mut HashMap<String, String>,
        coordinates: &mut Vec<String>,
    ) -> Result<[String; 4]> {
        let at = Some(v.span().start);
        let (group, names) = match v.get_ref() {
            DeValue::String(_) => (
                self.choice("model.orientation", v, orientation::GROUPS)?,
                None,
            ),
            DeValue::Table(table) => {
                self.check_keys("model.orientation", table, ORIENTATION)?;
                let group = self.choice(
                    "model.orientation.group",
                    self.required(table, "model.orientation", "group", at)?,
                    orientation::GROUPS,
                )?;
                let names = match get(table, "coordinates") {
                    Some(list) => {
                        let key = "model.orientation.coordinates";
                        let items = self.array(key, list)?;
                        if items.len() != 4 {
                            return Err(self.error(
                                key.into(),
                                Some(list.span().start),
                                K::WrongLength {
                                    expected: 4,
                                    found: items.len(),
                                },
                            ));
                        }
                        let mut names = Vec::with_capacity(4);
                        for (i, x) in items.iter().enumerate() {
                            names.push((
                                format!("{key}[{i}]"),
                                Some(x.span().start),
                                self.string(&format!("{key}[{i}]"), x)?,
                            ));
                        }
                        Some(names)
                    }
                    None => None,
                };
                (group, names)
            }
            _ => {
                return Err(self.wrong_type(
                    "model.orientation",
                    v,
                    "a string (\"so3\") or a table { group, coordinates }",
                ));
            }
        };
        debug_assert_eq!(group, "so3");
        let names = names.unwrap_or_else(|| {
            orientation::DEFAULT_NAMES
                .iter()
                .map(|n| ("model.orientation".to_owned(), at, (*n).to_owned()))
                .collect()
        });
        let mut quaternion: [String; 4] = Default::default();
        for ((key, at, name), slot) in names.into_iter().zip(&mut quaternion) {
            slot.clone_from(&name);
            self.add_coordinate(taken, coordinates, key, at, name)?;
        }
        for (name, what) in orientation::DEFINED {
            if let Some(other) = taken.get(name) {
                return Err(self.error(
                    "model.orientation".into(),
                    at,
                    K::NameClash {
                        name: name.to_owned(),
                        other: other.clone(),
                    },
                ));
            }
            taken.insert(
                name.to_owned(),
                format!("`{name}`, {what} (defined by model.orientation)"),
            );
        }
        Ok(quaternion)
    }

    /// Complete `q(0)`, `v(0)` written over the declared coordinates with
    /// the quaternion of `initial.attitude` (the identity when absent) and
    /// its velocity `½ q ⊗ (0, ω)` from `initial.omega` (zero when absent).
    /// Those keys are refused where `q` or `v` lists every coordinate
    /// already, and without `model.orientation`.
    fn initial_orientation(
        &mut self,
        table: &DeTable<'_>,
        mut q: Vec<InitialValue>,
        mut v: Vec<InitialValue>,
        quaternion: Option<&[String; 4]>,
        n: usize,
    ) -> Result<(Vec<InitialValue>, Vec<InitialValue>)> {
        let attitude = get(table, "attitude");
        let omega = get(table, "omega");
        for (key, value, len, other) in [
            ("initial.attitude", attitude, q.len(), "initial.q"),
            ("initial.omega", omega, v.len(), "initial.v"),
        ] {
            let Some(value) = value else { continue };
            let kind = if quaternion.is_none() {
                K::NeedsOrientation
            } else if len == n {
                K::Exclusive {
                    other,
                    reason: "that list has the quaternion's entries already: give them there, or list the declared coordinates only",
                }
            } else {
                continue;
            };
            return Err(self.error(key.into(), Some(value.span().start), kind));
        }
        if quaternion.is_none() {
            return Ok((q, v));
        }
        if q.len() < n {
            let entries = match attitude {
                Some(value) => {
                    let table = self.table("initial.attitude", value)?;
                    self.check_keys("initial.attitude", table, ATTITUDE)?;
                    let at = Some(value.span().start);
                    let axis_value = self.required(table, "initial.attitude", "axis", at)?;
                    let axis = self.three("initial.attitude.axis", axis_value)?;
                    if axis.iter().all(|a| a.parse::<f64>() == Ok(0.0)) {
                        return Err(self.error(
                            "initial.attitude.axis".into(),
                            Some(axis_value.span().start),
                            K::OutOfRange {
                                value: 0.0,
                                requirement: "the axis of a turn must not be zero",
                            },
                        ));
                    }
                    let angle = self.initial_text(
                        "initial.attitude.angle",
                        self.required(table, "initial.attitude", "angle", at)?,
                    )?;
                    orientation::attitude(&axis, &angle).map(InitialValue::Expression)
                }
                None => [1.0, 0.0, 0.0, 0.0].map(InitialValue::Number),
            };
            q.extend(entries);
        }
        if v.len() < n {
            let entries = match omega {
                Some(value) => {
                    let omega = self.three("initial.omega", value)?;
                    let text = |x: &InitialValue| match x {
                        InitialValue::Number(x) => format!("{x:?}"),
                        InitialValue::Expression(t) => t.clone(),
                        InitialValue::Solve => unreachable!("q(0) has no solved entries"),
                    };
                    let quat = [0, 1, 2, 3].map(|i| text(&q[n - 4 + i]));
                    orientation::velocity(&quat, &omega).map(InitialValue::Expression)
                }
                None => [0.0; 4].map(InitialValue::Number),
            };
            v.extend(entries);
        }
        Ok((q, v))
    }

    /// Three entries (numbers or expressions) as expression texts.
    fn three(&mut self, key: &str, v: &Value<'_>) -> Result<[String; 3]> {
        let items = self.array(key, v)?;
        if items.len() != 3 {
            return Err(self.error(
                key.to_owned(),
                Some(v.span().start),
                K::WrongLength {
                    expected: 3,
                    found: items.len(),
                },
            ));
        }
        let mut out: [String; 3] = Default::default();
        for (i, (x, slot)) in items.iter().zip(&mut out).enumerate() {
            *slot = self.initial_text(&format!("{key}[{i}]"), x)?;
        }
        Ok(out)
    }

    /// A number (printed so that it reads back exactly) or an expression
    /// of the parameters and `pi` (checked here, so that an error names
    /// this key and its place rather than the entry of `q` or `v` it
    /// becomes part of), as an expression text.
    fn initial_text(&mut self, key: &str, v: &Value<'_>) -> Result<String> {
        if v.get_ref().as_str().is_some() {
            let text = self.expression(key, v)?;
            let mut scope = crate::expr::Scope::new();
            for name in &self.parameter_names {
                // names only (as variables: no value is folded in)
                let _ = scope.add_variable(name);
            }
            if let Err(e) = crate::expr::Expr::compile(&text, &scope) {
                let offset = super::position::string_char_offset(self.source, v.span(), e.column);
                return Err(ModelFileError::new(
                    self.path.to_owned(),
                    key.to_owned(),
                    Some(Position::of_offset(self.source, offset)),
                    K::Expression(e),
                ));
            }
            Ok(text)
        } else {
            Ok(format!(
                "{:?}",
                self.finite_or(key, v, "a number or a string (an expression)")?
            ))
        }
    }

    fn check_name(&self, key: &str, at: Option<usize>, name: &str) -> Result<()> {
        let reason = if name.is_empty() {
            "it is empty"
        } else if !is_identifier(name) {
            "names are ASCII letters, digits and `_`, not starting with a digit"
        } else if is_reserved(name) {
            "it is a function name or `pi`"
        } else {
            return Ok(());
        };
        Err(self.error(
            key.to_owned(),
            at,
            K::InvalidName {
                name: name.to_owned(),
                reason,
            },
        ))
    }
}
