//! Assembling the parts and ports of a system into one model file
//! (docs/systems.md, docs/theory.md §15): the parts' names qualified by the
//! part (`x` → `cone.x`), their Lagrangians summed with the ports' terms,
//! their constraint rows padded with zeros and joined by the ports' rows,
//! their walls and initial data concatenated.

use crate::error::{SystemFileError, SystemFileErrorKind as K};
use crate::read::{PartSource, PortKind, PortSpec, SystemSpec};
use diracvi_circuit::Circuit;
use diracvi_circuit::netlist::{Kind, Value, Waveform};
use diracvi_expr::expr::{derivative, is_reserved, rename_names};
use diracvi_expr::model_file::read_text;
use diracvi_expr::{InitialState, InitialValue, ModelFile};
use std::collections::HashSet;
use std::path::Path;

/// A part's model with its names qualified.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    pub(crate) name: String,
    /// Local coordinate names (unqualified).
    pub(crate) coordinates: Vec<String>,
    /// Whether the part is a netlist (its coordinates are branch charges).
    pub(crate) netlist: bool,
    /// The coordinates of a netlist part's inductors whose term has not
    /// been replaced by an inductance port.
    inductors: HashSet<usize>,
    /// Netlist Lagrangian terms by coordinate (to substitute inductances).
    terms: Vec<String>,
    lagrangian: String,
    constraints: Vec<Vec<String>>,
    boundaries: Vec<String>,
    definitions: Vec<(String, String)>,
    /// Parameter values, and the ones written as expressions (as in
    /// [`ModelFile`]).
    parameters: Vec<(String, f64)>,
    parameter_expressions: Vec<(String, String)>,
    q0: Vec<InitialValue>,
    v0: Vec<InitialValue>,
    /// Generalized forces of time on the part's coordinates (qualified
    /// coordinate, expression of `t`): a model file's `[forces]`, a
    /// netlist's time-dependent voltage sources.
    forces: Vec<(String, String)>,
    /// Prescribed displacements of the part's constraint rows (one per
    /// row, `"0"` for none; empty: no drive): a model file's
    /// `model.drives`, a netlist's current sources.
    drives: Vec<String>,
}

fn qualify(part: &str, name: &str) -> String {
    format!("{part}.{name}")
}

impl Part {
    /// The part's names that its expressions may use.
    fn local_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for c in &self.coordinates {
            names.push(c.clone());
            names.push(format!("{c}_dot"));
        }
        names.extend(self.definitions.iter().map(|(n, _)| n.clone()));
        names.extend(self.parameters.iter().map(|(n, _)| n.clone()));
        names
    }

    /// `source` with the part's names qualified.
    fn rename(
        &self,
        source: &str,
        spec: &SystemSpec,
        key: &str,
    ) -> Result<String, SystemFileError> {
        let local = self.local_names();
        rename_names(source, |n| {
            local.iter().any(|l| l == n).then(|| qualify(&self.name, n))
        })
        .map_err(|e| {
            spec.error(
                key,
                K::Unsupported {
                    part: self.name.clone(),
                    what: format!("expression `{source}`: {e}"),
                },
            )
        })
    }

    fn from_model_file(
        name: &str,
        file: ModelFile,
        spec: &SystemSpec,
        key: &str,
    ) -> Result<Part, SystemFileError> {
        // The Hamiltonian and the drawing are not taken: the coupled system
        // has its own Legendre transform, and no picture of the whole.
        let n = file.n();
        let mut part = Part {
            name: name.to_owned(),
            coordinates: file.coordinates.clone(),
            netlist: false,
            inductors: HashSet::new(),
            terms: Vec::new(),
            lagrangian: String::new(),
            constraints: Vec::new(),
            boundaries: Vec::new(),
            definitions: file.definitions.clone(),
            parameters: file.parameters.clone(),
            parameter_expressions: Vec::new(),
            q0: Vec::new(),
            v0: Vec::new(),
            forces: Vec::new(),
            drives: Vec::new(),
        };
        let r = |s: &str| part.rename(s, spec, key);
        let lagrangian = r(&file.lagrangian)?;
        let constraints = file
            .constraints
            .iter()
            .map(|row| row.iter().map(|e| r(e)).collect::<Result<Vec<_>, _>>())
            .collect::<Result<Vec<_>, _>>()?;
        let boundaries = file
            .boundaries
            .iter()
            .map(|b| r(b))
            .collect::<Result<Vec<_>, _>>()?;
        let definitions = file
            .definitions
            .iter()
            .map(|(d, text)| Ok((qualify(name, d), r(text)?)))
            .collect::<Result<Vec<_>, SystemFileError>>()?;
        let parameters = file
            .parameters
            .iter()
            .map(|(p, x)| (qualify(name, p), *x))
            .collect();
        let parameter_expressions = file
            .parameter_expressions
            .iter()
            .map(|(p, text)| Ok((qualify(name, p), r(text)?)))
            .collect::<Result<Vec<_>, SystemFileError>>()?;
        let initial =
            |values: Option<&Vec<InitialValue>>| -> Result<Vec<InitialValue>, SystemFileError> {
                match values {
                    None => Ok(vec![InitialValue::Number(0.0); n]),
                    Some(vs) => vs
                        .iter()
                        .map(|v| {
                            Ok(match v {
                                InitialValue::Expression(e) => InitialValue::Expression(r(e)?),
                                other => other.clone(),
                            })
                        })
                        .collect(),
                }
            };
        let q0 = initial(file.initial.as_ref().map(|i| &i.q))?;
        let v0 = initial(file.initial.as_ref().map(|i| &i.v))?;
        let forces = file
            .forces
            .iter()
            .map(|(c, text)| Ok((qualify(name, c), r(text)?)))
            .collect::<Result<Vec<_>, SystemFileError>>()?;
        let drives = file
            .drives
            .iter()
            .map(|text| r(text))
            .collect::<Result<Vec<_>, _>>()?;
        part.forces = forces;
        part.drives = drives;
        part.lagrangian = lagrangian;
        part.constraints = constraints;
        part.boundaries = boundaries;
        part.definitions = definitions;
        part.parameters = parameters;
        part.parameter_expressions = parameter_expressions;
        part.q0 = q0;
        part.v0 = v0;
        Ok(part)
    }

    fn from_netlist(
        name: &str,
        circuit: &Circuit,
        spec: &SystemSpec,
        key: &str,
    ) -> Result<Part, SystemFileError> {
        let unsupported = |what: String| {
            spec.error(
                key,
                K::Unsupported {
                    part: name.to_owned(),
                    what,
                },
            )
        };
        let n = circuit.coordinates();
        let coordinates: Vec<String> = (0..n).map(|i| circuit.element_of(i).name.clone()).collect();
        let mut forces = Vec::new();
        let state = circuit.initial_state();
        let mut inductors = HashSet::new();
        let mut terms = Vec::with_capacity(n);
        let mut v0 = Vec::with_capacity(n);
        for (i, coordinate) in coordinates.iter().enumerate() {
            let e = circuit.element_of(i);
            let x = qualify(name, coordinate);
            let (term, v) = match (e.kind, &e.value) {
                (Kind::Inductor, &Value::Number(l)) => {
                    inductors.insert(i);
                    (
                        format!("0.5*{l:?}*{x}_dot^2"),
                        InitialValue::Number(state.p[i] / l),
                    )
                }
                (Kind::Capacitor, &Value::Number(c)) => {
                    (format!("-{x}^2/(2*{c:?})"), InitialValue::Solve)
                }
                (Kind::Capacitor, Value::Energy(law)) => {
                    let u = rename_names(law.source(), |v| (v == "q").then(|| x.clone()))
                        .map_err(|err| unsupported(format!("{}: {err}", e.name)))?;
                    (format!("-({u})"), InitialValue::Solve)
                }
                (Kind::VoltageSource, Value::Source(Waveform::Dc(volts))) => {
                    (format!("-{volts:?}*{x}"), InitialValue::Solve)
                }
                // `−E(t) q`: the generalized force `−E(t)` on the branch.
                (Kind::VoltageSource, Value::Source(w)) => {
                    forces.push((x.clone(), format!("-({})", w.value_expression())));
                    ("0".to_owned(), InitialValue::Solve)
                }
                _ => {
                    return Err(unsupported(format!(
                        "element `{}` (line {}): not a branch term of a system",
                        e.name, e.line
                    )));
                }
            };
            terms.push(term);
            v0.push(v);
        }
        let constraints = circuit
            .kirchhoff_rows()
            .iter()
            .map(|row| {
                let mut dense = vec!["0".to_owned(); n];
                for &(j, a) in row {
                    dense[j] = format!("{a:?}");
                }
                dense
            })
            .collect();
        // Current sources: their charges `∫ I dt` drive the Kirchhoff rows.
        let mut drives = vec![String::new(); circuit.kirchhoff_rows().len()];
        for (row, coefficient, charge) in circuit.drives() {
            let term = format!("({coefficient:?})*({})", charge.integral_expression());
            let text = &mut drives[*row];
            if text.is_empty() {
                *text = term;
            } else {
                text.push_str(" + ");
                text.push_str(&term);
            }
        }
        let drives = if drives.iter().all(String::is_empty) {
            Vec::new()
        } else {
            drives
                .into_iter()
                .map(|d| if d.is_empty() { "0".to_owned() } else { d })
                .collect()
        };
        Ok(Part {
            name: name.to_owned(),
            coordinates,
            netlist: true,
            inductors,
            terms,
            lagrangian: String::new(),
            constraints,
            boundaries: Vec::new(),
            definitions: Vec::new(),
            parameters: Vec::new(),
            parameter_expressions: Vec::new(),
            q0: state.q.iter().map(|&q| InitialValue::Number(q)).collect(),
            v0,
            forces,
            drives,
        })
    }
}

/// Read the parts of `spec` (paths relative to the system file's folder).
pub(crate) fn load_parts(spec: &SystemSpec) -> Result<Vec<Part>, SystemFileError> {
    let base = Path::new(&spec.path).parent().unwrap_or(Path::new(""));
    spec.parts
        .iter()
        .enumerate()
        .map(|(i, p)| match &p.source {
            PartSource::ModelFile(f) => {
                let key = format!("part[{i}].model_file");
                let file = ModelFile::from_path(base.join(f)).map_err(|source| {
                    spec.error(
                        &key,
                        K::ModelFile {
                            part: p.name.clone(),
                            source,
                        },
                    )
                })?;
                Part::from_model_file(&p.name, file, spec, &key)
            }
            PartSource::Netlist(f) => {
                let key = format!("part[{i}].netlist");
                let path = base.join(f);
                let shown = path.display().to_string();
                let text = read_text(&path)
                    .map_err(|e| spec.error(&key, K::Io(format!("{shown}: {e}"))))?;
                let circuit = Circuit::parse(&text).map_err(|source| {
                    spec.error(
                        &key,
                        K::Netlist {
                            part: p.name.clone(),
                            path: shown,
                            source,
                        },
                    )
                })?;
                Part::from_netlist(&p.name, &circuit, spec, &key)
            }
        })
        .collect()
}

/// `(part index, coordinate index)` of a qualified coordinate name.
fn locate(
    parts: &[Part],
    spec: &SystemSpec,
    key: &str,
    name: &str,
) -> Result<(usize, usize), SystemFileError> {
    let Some((part, coordinate)) = name.split_once('.') else {
        return Err(spec.error(
            key,
            K::BadName {
                name: name.to_owned(),
                reason: "expected `part.coordinate`".to_owned(),
            },
        ));
    };
    let Some(p) = parts.iter().position(|p| p.name == part) else {
        return Err(spec.error(
            key,
            K::UnknownPart {
                part: part.to_owned(),
                parts: parts.iter().map(|p| p.name.clone()).collect(),
            },
        ));
    };
    match parts[p].coordinates.iter().position(|c| c == coordinate) {
        Some(c) => Ok((p, c)),
        None => Err(spec.error(
            key,
            K::UnknownCoordinate {
                part: part.to_owned(),
                name: coordinate.to_owned(),
                available: parts[p].coordinates.clone(),
            },
        )),
    }
}

/// An expression of `port` (an inductance's `L`, a joint's relation) with
/// its parameters qualified and its coordinates checked; the coordinates it
/// names (qualified, in order of first use).
fn port_expression(
    port: &PortSpec,
    text: &str,
    parts: &[Part],
    spec: &SystemSpec,
    key: &str,
) -> Result<(String, Vec<String>), SystemFileError> {
    let mut bad = None;
    let mut used: Vec<String> = Vec::new();
    let out = rename_names(text, |n| {
        if port.parameters.iter().any(|(p, _)| p == n) {
            return Some(qualify(&port.name, n));
        }
        if n.contains('.') {
            match locate(parts, spec, key, n) {
                Ok(_) => {
                    if !used.iter().any(|u| u == n) {
                        used.push(n.to_owned());
                    }
                }
                Err(e) => {
                    bad.get_or_insert(e);
                }
            }
        } else if !is_reserved(n) {
            bad.get_or_insert(spec.error(
                key,
                K::BadName {
                    name: n.to_owned(),
                    reason: format!(
                        "not a parameter of port `{}` nor a coordinate `part.name`",
                        port.name
                    ),
                },
            ));
        }
        None
    })
    .map_err(|e| spec.error(key, K::PortMisuse(format!("`{text}` does not read: {e}"))))?;
    match bad {
        Some(e) => Err(e),
        None => Ok((out, used)),
    }
}

/// One piece of the assembled Lagrangian and constraints, for the energy
/// accounting (docs/systems.md): a part (its own Lagrangian and rows) or a
/// port (its Lagrangian term — the gyrator's `Bl·a·ḃ`, the inductance's
/// magnetic co-energy `½ L(q) ḃ²` — or its constraint rows).
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    /// The part's or port's name.
    pub name: String,
    /// `None` for a part, the kind for a port.
    pub port: Option<PortKind>,
    /// Its Lagrangian term over the assembled names (`"0"` when none).
    pub lagrangian: String,
    /// The indices of its rows in the assembled constraint matrix.
    pub rows: Vec<usize>,
    /// The parts it touches (indices; for a part, itself).
    pub parts: Vec<usize>,
}

/// What assembling gives: the model, the accounting's components, and the
/// joints to check at the initial state.
#[derive(Debug, Clone)]
pub(crate) struct Assembly {
    pub(crate) model: ModelFile,
    pub(crate) components: Vec<Component>,
    /// The coordinate range of each part in the assembled list.
    pub(crate) ranges: Vec<std::ops::Range<usize>>,
    /// `(port index, qualified relation)` of each joint.
    pub(crate) joints: Vec<(usize, String)>,
    /// `(port index, row index)` of each port row (transformers, joints).
    pub(crate) port_rows: Vec<(usize, usize)>,
}

/// The assembled model (to print with [`ModelFile::to_toml_string`] and
/// read back, which checks it), with its components.
pub(crate) fn assemble(
    spec: &SystemSpec,
    mut parts: Vec<Part>,
) -> Result<Assembly, SystemFileError> {
    // offsets of each part's coordinates in the assembled list
    let mut offset = Vec::with_capacity(parts.len());
    let mut n = 0;
    for p in &parts {
        offset.push(n);
        n += p.coordinates.len();
    }
    let ranges: Vec<std::ops::Range<usize>> = parts
        .iter()
        .zip(&offset)
        .map(|(p, &o)| o..o + p.coordinates.len())
        .collect();
    let global = |(p, c): (usize, usize)| offset[p] + c;
    let part_count = parts.iter().map(|p| p.constraints.len()).sum::<usize>();
    let mut coupling = Vec::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut port_parameters = Vec::new();
    let mut port_components = Vec::new();
    let mut joints = Vec::new();
    let mut port_rows = Vec::new();
    let mut magnetic = HashSet::new();
    for (i, port) in spec.ports.iter().enumerate() {
        let key = |f: &str| format!("port[{i}].{f}");
        for (p, x) in &port.parameters {
            port_parameters.push((qualify(&port.name, p), *x));
        }
        let param = |p: &str| qualify(&port.name, p);
        let mut component = Component {
            name: port.name.clone(),
            port: Some(port.kind),
            lagrangian: "0".to_owned(),
            rows: Vec::new(),
            parts: Vec::new(),
        };
        let touch = |c: &mut Component, part: usize| {
            if !c.parts.contains(&part) {
                c.parts.push(part);
            }
        };
        match port.kind {
            PortKind::Gyrator | PortKind::Transformer => {
                let b = locate(&parts, spec, &key("b"), &port.b)?;
                let a_name = port.a.as_deref().unwrap_or_default();
                let a = locate(&parts, spec, &key("a"), a_name)?;
                if a == b {
                    return Err(spec.error(
                        &key("b"),
                        K::PortMisuse(format!("port `{}` joins `{a_name}` to itself", port.name)),
                    ));
                }
                touch(&mut component, a.0);
                touch(&mut component, b.0);
                if port.kind == PortKind::Gyrator {
                    let term = format!("{}*{}*{}_dot", param("Bl"), a_name, port.b);
                    component.lagrangian = term.clone();
                    coupling.push(term);
                } else {
                    let mut row = vec!["0".to_owned(); n];
                    row[global(a)] = "1".to_owned();
                    row[global(b)] = format!("-{}", param("ratio"));
                    component.rows.push(part_count + rows.len());
                    port_rows.push((i, part_count + rows.len()));
                    rows.push(row);
                }
            }
            PortKind::Inductance => {
                let b = locate(&parts, spec, &key("b"), &port.b)?;
                if !parts[b.0].inductors.remove(&b.1) {
                    return Err(spec.error(
                        &key("b"),
                        K::PortMisuse(format!(
                            "an inductance port acts on a netlist inductor; `{}` is not one",
                            port.b
                        )),
                    ));
                }
                let text = port.inductance.as_deref().unwrap_or_default();
                let (l, used) = port_expression(port, text, &parts, spec, &key("L"))?;
                touch(&mut component, b.0);
                for u in &used {
                    touch(&mut component, locate(&parts, spec, &key("L"), u)?.0);
                }
                let x = &port.b;
                let term = format!("0.5*({l})*{x}_dot^2");
                // in the assembled Lagrangian in the inductor's place; in the
                // accounting the magnetic co-energy is the port's
                parts[b.0].terms[b.1] = term.clone();
                magnetic.insert(b);
                component.lagrangian = term;
            }
            PortKind::Joint => {
                let text = port.relation.as_deref().unwrap_or_default();
                let (phi, used) = port_expression(port, text, &parts, spec, &key("relation"))?;
                let mut names = Vec::new();
                for u in &used {
                    let at = locate(&parts, spec, &key("relation"), u)?;
                    touch(&mut component, at.0);
                    names.push((u.clone(), global(at)));
                }
                if component.parts.len() < 2 {
                    return Err(spec.error(
                        &key("relation"),
                        K::PortMisuse(format!(
                            "a joint ties coordinates of two parts; `{text}` names {} (a \
                             relation inside one part belongs in its model file)",
                            if used.is_empty() {
                                "no coordinate".to_owned()
                            } else {
                                format!(
                                    "only coordinates of part `{}`",
                                    parts[component.parts[0]].name
                                )
                            }
                        )),
                    ));
                }
                let scope_names: Vec<String> = used
                    .iter()
                    .cloned()
                    .chain(port.parameters.iter().map(|(p, _)| param(p)))
                    .collect();
                let mut row = vec!["0".to_owned(); n];
                for (name, at) in &names {
                    row[*at] = derivative(&phi, &scope_names, name).map_err(|e| {
                        spec.error(
                            &key("relation"),
                            K::PortMisuse(format!("the relation `{text}` has no row: {e}")),
                        )
                    })?;
                }
                component.rows.push(part_count + rows.len());
                port_rows.push((i, part_count + rows.len()));
                joints.push((i, phi));
                rows.push(row);
            }
        }
        port_components.push(component);
    }

    let mut components = Vec::new();
    let mut lagrangian: Vec<String> = Vec::new();
    let mut row_at = 0;
    for (k, p) in parts.iter().enumerate() {
        let own = if p.netlist {
            lagrangian.extend(p.terms.iter().cloned());
            let terms: Vec<String> = (0..p.terms.len())
                .filter(|&c| !magnetic.contains(&(k, c)))
                .map(|c| p.terms[c].clone())
                .collect();
            if terms.is_empty() {
                "0".to_owned()
            } else {
                terms.join(" + ")
            }
        } else {
            lagrangian.push(format!("({})", p.lagrangian));
            p.lagrangian.clone()
        };
        components.push(Component {
            name: p.name.clone(),
            port: None,
            lagrangian: own,
            rows: (row_at..row_at + p.constraints.len()).collect(),
            parts: vec![k],
        });
        row_at += p.constraints.len();
    }
    components.extend(port_components);
    lagrangian.extend(coupling);
    let mut constraints: Vec<Vec<String>> = Vec::new();
    let mut drives: Vec<String> = Vec::new();
    for (k, p) in parts.iter().enumerate() {
        for (r, row) in p.constraints.iter().enumerate() {
            let mut full = vec!["0".to_owned(); n];
            full[offset[k]..offset[k] + row.len()].clone_from_slice(row);
            constraints.push(full);
            drives.push(p.drives.get(r).cloned().unwrap_or_else(|| "0".to_owned()));
        }
    }
    drives.extend(rows.iter().map(|_| "0".to_owned()));
    constraints.extend(rows);

    let coordinates: Vec<String> = parts
        .iter()
        .flat_map(|p| p.coordinates.iter().map(|c| qualify(&p.name, c)))
        .collect();
    let mut q0: Vec<InitialValue> = parts.iter().flat_map(|p| p.q0.iter().cloned()).collect();
    let mut v0: Vec<InitialValue> = parts.iter().flat_map(|p| p.v0.iter().cloned()).collect();
    for (k, x) in &spec.initial {
        let key = format!("initial.{k}");
        let (name, velocity) = match k.strip_suffix("_dot") {
            Some(c) if !coordinates.iter().any(|q| q == k) => (c, true),
            _ => (k.as_str(), false),
        };
        let at = global(locate(&parts, spec, &key, name)?);
        if velocity {
            v0[at] = InitialValue::Number(*x);
        } else {
            q0[at] = InitialValue::Number(*x);
        }
    }

    let mut model = ModelFile::new(&spec.name);
    model.description = spec.description.clone();
    model.coordinates = coordinates;
    model.lagrangian = if lagrangian.is_empty() {
        "0".to_owned()
    } else {
        lagrangian.join(" + ")
    };
    model.constraints = constraints;
    if parts.iter().any(|p| !p.drives.is_empty()) {
        model.drives = drives;
    }
    for p in parts {
        model.forces.extend(p.forces);
        model.boundaries.extend(p.boundaries);
        model.definitions.extend(p.definitions);
        model.parameters.extend(p.parameters);
        model.parameter_expressions.extend(p.parameter_expressions);
    }
    model.parameters.extend(port_parameters);
    model.run = spec.run.clone();
    model.initial = Some(InitialState { q: q0, v: v0 });
    Ok(Assembly {
        model,
        components,
        ranges,
        joints,
        port_rows,
    })
}
