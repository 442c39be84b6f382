//! Scenarios of circuits: a SPICE-subset netlist or the `lc-ladder`
//! generator, run on the sparse Lagrange–Dirac stepper (docs/theory.md §8)
//! through the same runner, outputs and summary as every model.
//!
//! A circuit scenario prints as TOML that reads back (`diracvi show`,
//! `run --scenario`): `lc-ladder` with its `[parameters]`, a netlist with
//! its text under `netlist`. Initial conditions come from the netlist's
//! `IC=` values (the ladder: from `mode` and `v0`); the scenario's
//! [`InitialData`] shows them (`q`: branch charges, `v`: branch currents)
//! and cannot be set.

use super::{
    InitialData, Scenario, check_end_time, check_step, parse_discretization, parse_number,
    set_run_key,
};
use crate::{ConstraintDiscretization, Discretization, ModelError};
use diracvi_circuit::netlist::{Kind, Netlist};
use diracvi_circuit::{Circuit, netlist};
use std::f64::consts::PI;
use std::fmt::Write as _;
use std::sync::Arc;
use toml::{Table, Value};

/// The name of the uniform LC ladder generator.
pub const LADDER: &str = "lc-ladder";

/// What `diracvi list` says of the ladder.
pub const LADDER_DESCRIPTION: &str = "uniform LC ladder of `cells` cells, shorted at both ends (run-time size: --set cells=N, l=, c=, mode=, v0=; on the run-time core at every order)";

/// The parameters of `lc-ladder`: name, default, meaning.
const LADDER_PARAMETERS: [(&str, f64, &str); 5] = [
    (
        "cells",
        10.0,
        "number of cells, 1..=10000000 (cells + 1 series inductors, one capacitor per node)",
    ),
    ("l", 1.0, "inductance of each series inductor (H, > 0)"),
    (
        "c",
        1.0,
        "capacitance of each node's capacitor to ground (F, > 0)",
    ),
    (
        "mode",
        1.0,
        "initial capacitor voltages v0 sin(j mode pi / (cells + 1)), j = 1..cells; 1..=cells",
    ),
    ("v0", 1.0, "amplitude of the initial capacitor voltages (V)"),
];

/// Largest ladder.
const MAX_CELLS: i64 = 10_000_000;

/// Where a circuit scenario's circuit comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum CircuitSource {
    /// A netlist, with its text (printed back by [`Scenario::to_toml`]).
    Netlist {
        /// The netlist as given.
        text: String,
        /// The parsed netlist.
        netlist: Netlist,
    },
    /// The `lc-ladder` generator; its parameters are the scenario's.
    Ladder,
}

/// The ladder's parameters, validated.
struct Ladder {
    cells: usize,
    l: f64,
    c: f64,
    mode: usize,
    v0: f64,
}

fn ladder_params(table: &Table) -> Result<Ladder, ModelError> {
    let names: Vec<String> = LADDER_PARAMETERS.iter().map(|p| p.0.to_string()).collect();
    if let Some(key) = table.keys().find(|k| !names.contains(k)) {
        return Err(ModelError::UnknownParameter {
            model: LADDER.into(),
            key: key.clone(),
            valid: names,
        });
    }
    let get = |name: &str, default: f64| -> Result<f64, ModelError> {
        match table.get(name) {
            None => Ok(default),
            Some(Value::Float(x)) => Ok(*x),
            Some(Value::Integer(i)) => Ok(*i as f64),
            Some(other) => Err(ModelError::IllTypedParameter {
                key: name.into(),
                value: other.to_string(),
                expected: "a number".into(),
            }),
        }
    };
    let count = |name: &'static str, default: f64, max: i64| -> Result<usize, ModelError> {
        let x = get(name, default)?;
        if x.fract() != 0.0 || !(1.0..=max as f64).contains(&x) {
            return Err(ModelError::InvalidParameter {
                model: LADDER,
                parameter: name,
                value: x,
                reason: format!("must be a whole number in 1..={max}"),
            });
        }
        Ok(x as usize)
    };
    let positive = |name: &'static str, default: f64| -> Result<f64, ModelError> {
        let x = get(name, default)?;
        if !(x.is_finite() && x > 0.0) {
            return Err(ModelError::InvalidParameter {
                model: LADDER,
                parameter: name,
                value: x,
                reason: "must be finite and > 0".into(),
            });
        }
        Ok(x)
    };
    let cells = count("cells", 10.0, MAX_CELLS)?;
    let mode = count("mode", 1.0, cells as i64)?;
    let v0 = get("v0", 1.0)?;
    if !v0.is_finite() {
        return Err(ModelError::InvalidParameter {
            model: LADDER,
            parameter: "v0",
            value: v0,
            reason: "must be finite".into(),
        });
    }
    Ok(Ladder {
        cells,
        l: positive("l", 1.0)?,
        c: positive("c", 1.0)?,
        mode,
        v0,
    })
}

/// The parameters as a table (every one, with its value).
fn ladder_table(p: &Ladder) -> Table {
    let mut t = Table::new();
    t.insert("cells".into(), Value::Integer(p.cells as i64));
    t.insert("l".into(), Value::Float(p.l));
    t.insert("c".into(), Value::Float(p.c));
    t.insert("mode".into(), Value::Integer(p.mode as i64));
    t.insert("v0".into(), Value::Float(p.v0));
    t
}

fn ladder_netlist(p: &Ladder) -> Netlist {
    let shape: Vec<f64> = (1..=p.cells)
        .map(|j| p.v0 * (j as f64 * p.mode as f64 * PI / (p.cells as f64 + 1.0)).sin())
        .collect();
    Netlist::ladder(p.cells, p.l, p.c, &shape)
}

/// The run defaults of the ladder: `h` gives 40 steps per period of the
/// fastest mode (`ω_max = 2/√(lc)`), 2000 steps.
fn ladder_run_defaults(p: &Ladder) -> (f64, f64) {
    let omega_max = 2.0 / (p.l * p.c).sqrt();
    let h = 2.0 * PI / omega_max / 40.0;
    (h, 2000.0 * h)
}

fn analyse(source_name: &str, netlist: Netlist) -> Result<Circuit, ModelError> {
    Circuit::new(netlist).map_err(|error| ModelError::Circuit {
        source_name: source_name.to_string(),
        error,
    })
}

/// The initial data a circuit starts from: branch charges, and branch
/// currents (the inductors' `IC=`, zero elsewhere).
fn initial_of(circuit: &Circuit) -> InitialData {
    let q = circuit.initial_state().q.as_slice().to_vec();
    let v = (0..circuit.coordinates())
        .map(|i| {
            let e = circuit.element_of(i);
            match (e.kind, e.ic) {
                (Kind::Inductor, Some(i0)) => i0,
                _ => 0.0,
            }
        })
        .collect();
    InitialData { q, v }
}

/// `lc-ladder` from a scenario document (`model = "lc-ladder"`).
pub(super) fn ladder_scenario(doc: &Table) -> Result<Scenario, ModelError> {
    const KEYS: [&str; 6] = ["model", "h", "tol", "t_end", "discretization", "parameters"];
    if let Some(key) = doc.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(ModelError::Scenario(format!(
            "unknown key '{key}' for {LADDER} (valid top-level keys: {})",
            KEYS.join(", ")
        )));
    }
    let empty = Table::new();
    let table = match doc.get("parameters") {
        None => &empty,
        Some(Value::Table(t)) => t,
        Some(other) => {
            return Err(ModelError::Scenario(format!(
                "'parameters' must be a table ([parameters]), got {other}"
            )));
        }
    };
    let p = ladder_params(table)?;
    let (h, t_end) = ladder_run_defaults(&p);
    let circuit = analyse(LADDER, ladder_netlist(&p))?;
    let mut sc = Scenario {
        model: LADDER.into(),
        h,
        t_end,
        tol: None,
        discretization: Discretization::Forward,
        constraint: ConstraintDiscretization::Midpoint,
        parameters: ladder_table(&p),
        initial: initial_of(&circuit),
        file: None,
        circuit: Some(Arc::new(CircuitSource::Ladder)),
        system: None,
    };
    run_keys(&mut sc, doc)?;
    Ok(sc)
}

/// A netlist scenario (see [`Scenario::from_netlist`]).
pub(super) fn netlist_scenario(
    name: &str,
    text: &str,
    h: f64,
    t_end: f64,
) -> Result<Scenario, ModelError> {
    check_step(h)?;
    check_end_time(t_end)?;
    let parsed = netlist::parse(text).map_err(|error| ModelError::Circuit {
        source_name: name.to_string(),
        error,
    })?;
    let circuit = analyse(name, parsed.clone())?;
    Ok(Scenario {
        model: name.to_string(),
        h,
        t_end,
        tol: None,
        discretization: Discretization::Forward,
        constraint: ConstraintDiscretization::Midpoint,
        parameters: Table::new(),
        initial: initial_of(&circuit),
        file: None,
        system: None,
        circuit: Some(Arc::new(CircuitSource::Netlist {
            text: text.to_string(),
            netlist: parsed,
        })),
    })
}

/// A netlist scenario from a scenario document with a `netlist` key.
pub(super) fn netlist_document(doc: &Table, model: &str) -> Result<Scenario, ModelError> {
    const KEYS: [&str; 6] = ["model", "netlist", "h", "tol", "t_end", "discretization"];
    if let Some(key) = doc.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(ModelError::Scenario(format!(
            "unknown key '{key}' for a netlist scenario (valid top-level keys: {})",
            KEYS.join(", ")
        )));
    }
    let Some(Value::String(text)) = doc.get("netlist") else {
        return Err(ModelError::Scenario(
            "'netlist' must be the netlist's text (a string)".into(),
        ));
    };
    let number = |key: &str| -> Result<f64, ModelError> {
        match doc.get(key) {
            Some(Value::Float(x)) => Ok(*x),
            Some(Value::Integer(i)) => Ok(*i as f64),
            Some(other) => Err(ModelError::IllTypedParameter {
                key: key.into(),
                value: other.to_string(),
                expected: "a number".into(),
            }),
            None => Err(ModelError::Scenario(format!(
                "a netlist scenario needs '{key}' (no default for a general circuit)"
            ))),
        }
    };
    let mut sc = netlist_scenario(model, text, number("h")?, number("t_end")?)?;
    run_keys(&mut sc, doc)?;
    Ok(sc)
}

/// Apply `discretization` (and `h`, `t_end`, `tol`) from a document. A
/// circuit's `tol` may come with `h` (a netlist has no default step): `h`
/// then seeds the pilot runs.
fn run_keys(sc: &mut Scenario, doc: &Table) -> Result<(), ModelError> {
    if let Some(v) = doc.get("tol") {
        let tol = match v {
            Value::Float(x) => *x,
            Value::Integer(i) => *i as f64,
            other => {
                return Err(ModelError::IllTypedParameter {
                    key: "tol".into(),
                    value: other.to_string(),
                    expected: "a number".into(),
                });
            }
        };
        sc.tol = Some(super::check_tolerance(tol)?);
    }
    for key in ["h", "t_end", "discretization"] {
        let Some(v) = doc.get(key) else { continue };
        let raw = match v {
            Value::String(s) => s.clone(),
            Value::Float(x) => format!("{x:?}"),
            Value::Integer(i) => i.to_string(),
            other => {
                return Err(ModelError::IllTypedParameter {
                    key: key.into(),
                    value: other.to_string(),
                    expected: if key == "discretization" {
                        "'forward' or 'midpoint'".into()
                    } else {
                        "a number".into()
                    },
                });
            }
        };
        set_run_key(sc, key, &raw, sc.initial.q.len())?;
    }
    Ok(())
}

/// The circuit of a circuit scenario.
pub(super) fn build(sc: &Scenario, source: &CircuitSource) -> Result<Circuit, ModelError> {
    check_step(sc.h)?;
    check_end_time(sc.t_end)?;
    match source {
        CircuitSource::Netlist { netlist, .. } => analyse(&sc.model, netlist.clone()),
        CircuitSource::Ladder => analyse(LADDER, ladder_netlist(&ladder_params(&sc.parameters)?)),
    }
}

/// Every key [`Scenario::set`] takes for a circuit scenario.
pub(super) fn keys(source: &CircuitSource) -> Vec<String> {
    let params: &[&str] = match source {
        CircuitSource::Ladder => &["cells", "l", "c", "mode", "v0"],
        CircuitSource::Netlist { .. } => &[],
    };
    params
        .iter()
        .chain(&["h", "tol", "t_end", "discretization"])
        .map(|s| s.to_string())
        .collect()
}

/// [`Scenario::set`] for a circuit scenario.
pub(super) fn set_key(
    sc: &Scenario,
    source: &CircuitSource,
    key: &str,
    value: &str,
) -> Result<Scenario, ModelError> {
    let raw = value.trim();
    let mut out = sc.clone();
    match key {
        "h" | "t_end" => {
            set_run_key(&mut out, key, raw, 0)?;
        }
        "discretization" => out.discretization = parse_discretization(raw)?,
        "constraint" => {
            return Err(ModelError::CircuitKey {
                model: sc.model.clone(),
                key: key.into(),
                hint: "Kirchhoff's current law is linear in the currents: every discrete constraint is the same".into(),
            });
        }
        "q" | "v" => {
            return Err(ModelError::CircuitKey {
                model: sc.model.clone(),
                key: key.into(),
                hint: match source {
                    CircuitSource::Ladder => "the ladder starts from `mode` and `v0`".into(),
                    CircuitSource::Netlist { .. } => {
                        "give initial conditions with IC= in the netlist".into()
                    }
                },
            });
        }
        _ if matches!(source, CircuitSource::Ladder)
            && LADDER_PARAMETERS.iter().any(|p| p.0 == key) =>
        {
            let x = parse_number(key, raw)?;
            let mut table = sc.parameters.clone();
            let v = if matches!(key, "cells" | "mode") && x.fract() == 0.0 && x.abs() < 1e15 {
                Value::Integer(x as i64)
            } else {
                Value::Float(x)
            };
            table.insert(key.into(), v);
            let p = ladder_params(&table)?;
            out.parameters = ladder_table(&p);
            // The run defaults follow the parameters while they are unchanged.
            let old = ladder_params(&sc.parameters).map(|p| ladder_run_defaults(&p));
            let (h, t_end) = ladder_run_defaults(&p);
            if let Ok((h0, t0)) = old {
                if sc.h.to_bits() == h0.to_bits() {
                    out.h = h;
                }
                if sc.t_end.to_bits() == t0.to_bits() {
                    out.t_end = t_end;
                }
            }
            out.initial = initial_of(&analyse(LADDER, ladder_netlist(&p))?);
        }
        other => {
            return Err(ModelError::UnknownParameter {
                model: sc.model.clone(),
                key: other.into(),
                valid: keys(source),
            });
        }
    }
    Ok(out)
}

/// [`Scenario::to_toml`] for a circuit scenario: reads back to an equal
/// scenario.
pub(super) fn to_toml(sc: &Scenario, source: &CircuitSource) -> String {
    let mut s = String::new();
    match source {
        CircuitSource::Ladder => {
            let _ = writeln!(s, "# diracvi scenario: {LADDER} — {LADDER_DESCRIPTION}");
        }
        CircuitSource::Netlist { .. } => {
            let _ = writeln!(
                s,
                "# diracvi scenario: the netlist '{}' (SPICE subset, docs: README \"Circuits\")",
                sc.model
            );
        }
    }
    let _ = writeln!(s, "model = {}", Value::String(sc.model.clone()));
    let _ = writeln!(s, "h = {} # time step (s)", Value::Float(sc.h));
    if let Some(tol) = sc.tol {
        let _ = writeln!(
            s,
            "tol = {} # error of the final state; diracvi chooses order and step (h seeds the pilots)",
            Value::Float(tol)
        );
    }
    let _ = writeln!(
        s,
        "t_end = {} # end time (s); runs start at t = 0",
        Value::Float(sc.t_end)
    );
    let _ = writeln!(
        s,
        "discretization = {} # forward | midpoint",
        Value::String(sc.discretization.to_string())
    );
    match source {
        CircuitSource::Ladder => {
            let _ = writeln!(s, "\n[parameters]");
            for (name, _, meaning) in LADDER_PARAMETERS {
                if let Some(v) = sc.parameters.get(name) {
                    let _ = writeln!(s, "# {meaning}\n{name} = {v}");
                }
            }
        }
        CircuitSource::Netlist { text, .. } => {
            let _ = writeln!(s, "netlist = {}", Value::String(text.clone()));
        }
    }
    s
}
