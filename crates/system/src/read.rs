//! Reading a system file (TOML with spans): the parts, the ports, `[run]`
//! and `[initial]`, every value checked for its type and placed in the file
//! for error messages.

use crate::error::{SystemFileError, SystemFileErrorKind as K};
use diracvi_expr::expr::{is_identifier, is_reserved};
use diracvi_expr::{Position, RunSettings};
use std::collections::HashMap;
use std::path::PathBuf;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

type Value<'i> = Spanned<DeValue<'i>>;

const TOP: &[&str] = &["system", "part", "port", "run", "initial"];
const SYSTEM: &[&str] = &["name", "description"];
const PART: &[&str] = &["name", "model_file", "netlist", "catalogue"];
const RUN: &[&str] = &["h", "tol", "t_end", "discretization", "constraint"];

/// The port kinds a system file may use.
pub const PORT_KINDS: &[&str] = &["gyrator", "transformer", "inductance", "joint"];

/// Where a part's model comes from (paths relative to the system file).
#[derive(Debug, Clone, PartialEq)]
pub enum PartSource {
    /// A model file (docs/model-files.md).
    ModelFile(PathBuf),
    /// A SPICE-subset netlist: its branch charges are the part's
    /// coordinates, named by element (`tank.L1`).
    Netlist(PathBuf),
}

/// One `[[part]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct PartSpec {
    /// The part's name, the prefix of its names (`cone` in `cone.x`).
    pub name: String,
    /// Its model.
    pub source: PartSource,
}

/// The kind of a port (docs/systems.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortKind {
    /// A moving coil or DC machine: the Lagrangian term `Bl · a · ḃ`, a
    /// force `Bl ḃ` on `a` and an electromotive force `Bl ȧ` in `b`.
    Gyrator,
    /// A lever, gear or ideal transformer: the constraint row
    /// `ȧ − ratio · ḃ = 0`.
    Transformer,
    /// A netlist inductor whose inductance `L(q)` is an expression of the
    /// coordinates: its term becomes `½ L(q) ḃ²`.
    Inductance,
    /// A holonomic relation `φ(q) = 0` between coordinates of parts: the
    /// constraint row `∂φ/∂q` (its differential), `φ(q0) = 0` checked.
    Joint,
}

impl PortKind {
    /// The name in system files.
    pub fn as_str(self) -> &'static str {
        match self {
            PortKind::Gyrator => "gyrator",
            PortKind::Transformer => "transformer",
            PortKind::Inductance => "inductance",
            PortKind::Joint => "joint",
        }
    }
}

/// One `[[port]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct PortSpec {
    /// The port's name, the prefix of its parameters (`coil.Bl`).
    pub name: String,
    /// Its kind.
    pub kind: PortKind,
    /// `a`: a coordinate `part.name` (gyrator, transformer).
    pub a: Option<String>,
    /// `b`: a coordinate `part.name` (for an inductance, a netlist inductor;
    /// empty for a joint).
    pub b: String,
    /// `L`: the inductance expression (inductance ports).
    pub inductance: Option<String>,
    /// `relation`: the expression `φ` of a joint's relation `φ = 0`, over
    /// coordinates `part.name` and the port's parameters.
    pub relation: Option<String>,
    /// Every other key: the port's parameters, in file order.
    pub parameters: Vec<(String, f64)>,
}

/// A system file as written (see the crate docs for the format).
#[derive(Debug, Clone, PartialEq)]
pub struct SystemSpec {
    /// The path given when reading (used in messages and to find the parts).
    pub path: String,
    /// `system.name`.
    pub name: String,
    /// `system.description` (empty when absent).
    pub description: String,
    /// The parts in file order.
    pub parts: Vec<PartSpec>,
    /// The ports in file order.
    pub ports: Vec<PortSpec>,
    /// `[run]` as written (checked when the assembled model is read).
    pub run: RunSettings,
    /// `[initial]`: `part.coordinate` (a position) or `part.coordinate_dot`
    /// (a velocity) = number.
    pub initial: Vec<(String, f64)>,
    /// Byte offsets of the keys, for messages.
    pub(crate) at: HashMap<String, usize>,
    pub(crate) source: String,
}

impl SystemSpec {
    /// An error at `key` (placed where the file has it).
    pub(crate) fn error(&self, key: &str, kind: K) -> SystemFileError {
        SystemFileError::new(
            self.path.clone(),
            key.to_owned(),
            self.at
                .get(key)
                .map(|&o| Position::of_offset(&self.source, o)),
            kind,
        )
    }
}

struct Reader<'s> {
    path: &'s str,
    source: &'s str,
    at: HashMap<String, usize>,
}

type Result<T> = std::result::Result<T, SystemFileError>;

fn get<'t, 'i>(table: &'t DeTable<'i>, name: &str) -> Option<&'t Value<'i>> {
    table
        .iter()
        .find(|(k, _)| k.get_ref().as_ref() == name)
        .map(|(_, v)| v)
}

impl Reader<'_> {
    fn error(&self, key: &str, offset: Option<usize>, kind: K) -> SystemFileError {
        SystemFileError::new(
            self.path.to_owned(),
            key.to_owned(),
            offset.map(|o| Position::of_offset(self.source, o)),
            kind,
        )
    }

    fn check_keys(
        &self,
        prefix: &str,
        table: &DeTable<'_>,
        allowed: &'static [&'static str],
    ) -> Result<()> {
        let mut entries: Vec<_> = table.iter().collect();
        entries.sort_by_key(|(k, _)| k.span().start);
        for (k, _) in entries {
            if !allowed.contains(&k.get_ref().as_ref()) {
                return Err(self.error(
                    &format!("{prefix}{}", k.get_ref()),
                    Some(k.span().start),
                    K::UnknownKey { allowed },
                ));
            }
        }
        Ok(())
    }

    fn table<'t, 'i>(&self, key: &str, v: &'t Value<'i>) -> Result<&'t DeTable<'i>> {
        v.get_ref().as_table().ok_or_else(|| {
            self.error(
                key,
                Some(v.span().start),
                K::WrongType {
                    expected: "a table",
                },
            )
        })
    }

    fn string(&mut self, key: &str, v: &Value<'_>) -> Result<String> {
        self.at.insert(key.to_owned(), v.span().start);
        v.get_ref().as_str().map(str::to_owned).ok_or_else(|| {
            self.error(
                key,
                Some(v.span().start),
                K::WrongType {
                    expected: "a string",
                },
            )
        })
    }

    fn number(&mut self, key: &str, v: &Value<'_>) -> Result<f64> {
        self.at.insert(key.to_owned(), v.span().start);
        let wrong = || {
            self.error(
                key,
                Some(v.span().start),
                K::WrongType {
                    expected: "a finite number",
                },
            )
        };
        let x = match v.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .map(|i| i as f64)
                .map_err(|_| wrong())?,
            DeValue::Float(f) => f.as_str().parse::<f64>().map_err(|_| wrong())?,
            _ => return Err(wrong()),
        };
        if x.is_finite() { Ok(x) } else { Err(wrong()) }
    }

    /// A name `[A-Za-z_][A-Za-z0-9_]*` (unqualified), not reserved.
    fn name(&mut self, key: &str, v: &Value<'_>) -> Result<String> {
        let name = self.string(key, v)?;
        let reason = if name.contains('.') || !is_identifier(&name) {
            Some("a part or port name is a plain identifier `[A-Za-z_][A-Za-z0-9_]*`")
        } else if is_reserved(&name) {
            Some("reserved (a function name or `pi`)")
        } else {
            None
        };
        match reason {
            Some(reason) => Err(self.error(
                key,
                Some(v.span().start),
                K::BadName {
                    name,
                    reason: reason.to_owned(),
                },
            )),
            None => Ok(name),
        }
    }

    fn items<'t, 'i>(&self, key: &str, v: &'t Value<'i>) -> Result<Vec<&'t DeTable<'i>>> {
        match v.get_ref() {
            DeValue::Array(a) => a.iter().map(|item| self.table(key, item)).collect(),
            _ => Err(self.error(
                key,
                Some(v.span().start),
                K::WrongType {
                    expected: "an array of tables",
                },
            )),
        }
    }
}

/// Read and check a system file's text; `path` names it in messages.
pub(crate) fn read(source: &str, path: &str) -> Result<SystemSpec> {
    let mut r = Reader {
        path,
        source,
        at: HashMap::new(),
    };
    let root = DeTable::parse(source).map_err(|e| {
        r.error(
            "",
            e.span().map(|s| s.start),
            K::Syntax(e.message().to_owned()),
        )
    })?;
    let root = root.get_ref();
    r.check_keys("", root, TOP)?;
    let system = get(root, "system").ok_or_else(|| r.error("system", None, K::Missing))?;
    let system_start = Some(system.span().start);
    let system = r.table("system", system)?;
    r.check_keys("system.", system, SYSTEM)?;
    let name = match get(system, "name") {
        Some(v) => r.string("system.name", v)?,
        None => return Err(r.error("system.name", system_start, K::Missing)),
    };
    let description = match get(system, "description") {
        Some(v) => r.string("system.description", v)?,
        None => String::new(),
    };

    let mut parts: Vec<PartSpec> = Vec::new();
    let part_items = match get(root, "part") {
        Some(v) => r.items("part", v)?,
        None => return Err(r.error("part", None, K::Missing)),
    };
    for (i, t) in part_items.into_iter().enumerate() {
        let key = format!("part[{i}]");
        r.check_keys(&format!("{key}."), t, PART)?;
        let start = t.iter().map(|(k, _)| k.span().start).min();
        let name = match get(t, "name") {
            Some(v) => r.name(&format!("{key}.name"), v)?,
            None => return Err(r.error(&format!("{key}.name"), start, K::Missing)),
        };
        if parts.iter().any(|p| p.name == name) {
            return Err(r.error(
                &format!("{key}.name"),
                get(t, "name").map(|v| v.span().start),
                K::BadName {
                    name,
                    reason: "another part has this name".to_owned(),
                },
            ));
        }
        let model_file = get(t, "model_file")
            .map(|v| r.string(&format!("{key}.model_file"), v))
            .transpose()?;
        let netlist = get(t, "netlist")
            .map(|v| r.string(&format!("{key}.netlist"), v))
            .transpose()?;
        let source = match (model_file, netlist, get(t, "catalogue")) {
            (_, _, Some(v)) => {
                return Err(r.error(
                    &format!("{key}.catalogue"),
                    Some(v.span().start),
                    K::PartSource {
                        extra: ": a catalogue model is compiled Rust, not expressions a system \
                                can join; use its model-file twin in models/ (e.g. \
                                models/pendulum.toml)"
                            .to_owned(),
                    },
                ));
            }
            (Some(f), None, None) => PartSource::ModelFile(PathBuf::from(f)),
            (None, Some(n), None) => PartSource::Netlist(PathBuf::from(n)),
            _ => {
                return Err(r.error(
                    &key,
                    start,
                    K::PartSource {
                        extra: String::new(),
                    },
                ));
            }
        };
        parts.push(PartSpec { name, source });
    }

    let mut ports: Vec<PortSpec> = Vec::new();
    if let Some(v) = get(root, "port") {
        for (i, t) in r.items("port", v)?.into_iter().enumerate() {
            let key = format!("port[{i}]");
            let start = t.iter().map(|(k, _)| k.span().start).min();
            let name = match get(t, "name") {
                Some(v) => r.name(&format!("{key}.name"), v)?,
                None => return Err(r.error(&format!("{key}.name"), start, K::Missing)),
            };
            if ports.iter().any(|p| p.name == name) || parts.iter().any(|p| p.name == name) {
                return Err(r.error(
                    &format!("{key}.name"),
                    get(t, "name").map(|v| v.span().start),
                    K::BadName {
                        name,
                        reason: "a part or another port has this name".to_owned(),
                    },
                ));
            }
            let kind_value =
                get(t, "kind").ok_or_else(|| r.error(&format!("{key}.kind"), start, K::Missing))?;
            let kind_text = r.string(&format!("{key}.kind"), kind_value)?;
            let kind = match kind_text.as_str() {
                "gyrator" => PortKind::Gyrator,
                "transformer" => PortKind::Transformer,
                "inductance" => PortKind::Inductance,
                "joint" => PortKind::Joint,
                _ => {
                    return Err(r.error(
                        &format!("{key}.kind"),
                        Some(kind_value.span().start),
                        K::UnknownPortKind {
                            kind: kind_text,
                            allowed: PORT_KINDS,
                        },
                    ));
                }
            };
            let mut entries: Vec<_> = t.iter().collect();
            entries.sort_by_key(|(k, _)| k.span().start);
            let (mut a, mut b, mut inductance, mut relation, mut parameters) =
                (None, None, None, None, Vec::new());
            for (k, v) in entries {
                let field = k.get_ref().to_string();
                let fkey = format!("{key}.{field}");
                match field.as_str() {
                    "name" | "kind" => {}
                    "a" => a = Some(r.string(&fkey, v)?),
                    "b" => b = Some(r.string(&fkey, v)?),
                    "L" if kind == PortKind::Inductance => inductance = Some(r.string(&fkey, v)?),
                    "relation" if kind == PortKind::Joint => relation = Some(r.string(&fkey, v)?),
                    _ => {
                        if !is_identifier(&field) || field.contains('.') || is_reserved(&field) {
                            return Err(r.error(
                                &fkey,
                                Some(k.span().start),
                                K::BadName {
                                    name: field,
                                    reason: "a port parameter is a plain identifier, not reserved"
                                        .to_owned(),
                                },
                            ));
                        }
                        let x = r.number(&fkey, v)?;
                        parameters.push((field, x));
                    }
                }
            }
            let need = |what: &str, present: bool, r: &Reader<'_>| -> Result<()> {
                if present {
                    Ok(())
                } else {
                    Err(r.error(&format!("{key}.{what}"), start, K::Missing))
                }
            };
            let has = |p: &str| parameters.iter().any(|(n, _)| n == p);
            match kind {
                PortKind::Gyrator => {
                    need("a", a.is_some(), &r)?;
                    need("Bl", has("Bl"), &r)?;
                }
                PortKind::Transformer => {
                    need("a", a.is_some(), &r)?;
                    need("ratio", has("ratio"), &r)?;
                }
                PortKind::Inductance => {
                    need("L", inductance.is_some(), &r)?;
                    if a.is_some() {
                        return Err(r.error(
                            &format!("{key}.a"),
                            r.at.get(&format!("{key}.a")).copied(),
                            K::PortMisuse(
                                "an inductance port has no `a`: its `L` expression names the \
                                 coordinates it depends on"
                                    .to_owned(),
                            ),
                        ));
                    }
                }
                PortKind::Joint => {
                    need("relation", relation.is_some(), &r)?;
                    if let Some(which) = ["a", "b"]
                        .into_iter()
                        .find(|w| r.at.contains_key(&format!("{key}.{w}")))
                    {
                        return Err(r.error(
                            &format!("{key}.{which}"),
                            r.at.get(&format!("{key}.{which}")).copied(),
                            K::PortMisuse(
                                "a joint port has no `a` or `b`: its `relation` names the \
                                 coordinates it ties"
                                    .to_owned(),
                            ),
                        ));
                    }
                }
            }
            if kind != PortKind::Joint {
                need("b", b.is_some(), &r)?;
            }
            ports.push(PortSpec {
                name,
                kind,
                a,
                b: b.unwrap_or_default(),
                inductance,
                relation,
                parameters,
            });
        }
    }

    let mut run = RunSettings::default();
    if let Some(v) = get(root, "run") {
        let t = r.table("run", v)?;
        r.check_keys("run.", t, RUN)?;
        for (k, v) in t.iter() {
            let field = k.get_ref().to_string();
            let fkey = format!("run.{field}");
            match field.as_str() {
                "h" => run.h = Some(r.number(&fkey, v)?),
                "tol" => run.tol = Some(r.number(&fkey, v)?),
                "t_end" => run.t_end = Some(r.number(&fkey, v)?),
                "discretization" => run.discretization = Some(r.string(&fkey, v)?),
                _ => run.constraint = Some(r.string(&fkey, v)?),
            }
        }
    }

    let mut initial = Vec::new();
    if let Some(v) = get(root, "initial") {
        let t = r.table("initial", v)?;
        let mut entries: Vec<_> = t.iter().collect();
        entries.sort_by_key(|(k, _)| k.span().start);
        for (k, v) in entries {
            let field = k.get_ref().to_string();
            // `cone.x = 0.2` (a dotted key: a table `cone`) or `"cone.x" = 0.2`
            let inner: Vec<(String, &Value<'_>, usize)> = match v.get_ref().as_table() {
                Some(t) => {
                    let mut e: Vec<_> = t.iter().collect();
                    e.sort_by_key(|(k, _)| k.span().start);
                    e.into_iter()
                        .map(|(k2, v2)| (format!("{field}.{}", k2.get_ref()), v2, k.span().start))
                        .collect()
                }
                None => vec![(field, v, k.span().start)],
            };
            for (name, v, start) in inner {
                let fkey = format!("initial.{name}");
                let x = r.number(&fkey, v)?;
                r.at.insert(fkey, start);
                initial.push((name, x));
            }
        }
    }

    Ok(SystemSpec {
        path: path.to_owned(),
        name,
        description,
        parts,
        ports,
        run,
        initial,
        at: r.at,
        source: source.to_owned(),
    })
}
