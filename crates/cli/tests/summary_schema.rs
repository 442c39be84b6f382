//! Every run kind's `--summary json` validates against
//! `docs/summary.schema.json`: catalogue models, model files on both cores,
//! reduced, composed, Hamiltonian and backward runs, zero-step runs and
//! circuits. The validator below implements the part of JSON Schema the
//! schema uses (`type`, `enum`, `required`, `properties`,
//! `additionalProperties: false`, `items`, `oneOf`) and fails on any other
//! keyword, so the schema cannot grow past what is checked.

use crate::common;

use common::summary;
use serde_json::Value;
use std::path::Path;

fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/summary.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn type_matches(ty: &str, v: &Value) -> bool {
    match ty {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_u64() || v.is_i64(),
        other => panic!("schema type '{other}' is not checked"),
    }
}

/// The violations of `v` against `s`, with their JSON paths.
fn validate(s: &Value, v: &Value, path: &str, errors: &mut Vec<String>) {
    let s = s.as_object().expect("a schema is an object");
    for key in s.keys() {
        let known = [
            "$schema",
            "title",
            "description",
            "type",
            "enum",
            "required",
            "properties",
            "additionalProperties",
            "items",
            "oneOf",
        ];
        assert!(known.contains(&key.as_str()), "unchecked keyword '{key}'");
    }
    if let Some(ty) = s.get("type") {
        let ok = match ty {
            Value::String(t) => type_matches(t, v),
            Value::Array(ts) => ts.iter().any(|t| type_matches(t.as_str().unwrap(), v)),
            _ => panic!("bad type"),
        };
        if !ok {
            errors.push(format!("{path}: {v} is not of type {ty}"));
            return;
        }
    }
    if let Some(Value::Array(choices)) = s.get("enum")
        && !choices.contains(v)
    {
        errors.push(format!("{path}: {v} is not one of {choices:?}"));
    }
    if let Some(Value::Array(options)) = s.get("oneOf") {
        let matching = options
            .iter()
            .filter(|o| {
                let mut e = Vec::new();
                validate(o, v, path, &mut e);
                e.is_empty()
            })
            .count();
        if matching != 1 {
            errors.push(format!("{path}: {v} matches {matching} of oneOf"));
        }
    }
    if let Some(obj) = v.as_object() {
        if let Some(Value::Array(required)) = s.get("required") {
            for r in required {
                if !obj.contains_key(r.as_str().unwrap()) {
                    errors.push(format!("{path}: missing '{r}'"));
                }
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, x) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(sub) => validate(sub, x, &format!("{path}.{k}"), errors),
                None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errors.push(format!("{path}: unexpected key '{k}'"));
                }
                // a schema for every other key (the sensitivity's names)
                None => {
                    if let Some(sub) = s.get("additionalProperties").filter(|a| a.is_object()) {
                        validate(sub, x, &format!("{path}.{k}"), errors);
                    }
                }
            }
        }
    }
    if let (Some(items), Some(xs)) = (s.get("items"), v.as_array()) {
        for (i, x) in xs.iter().enumerate() {
            validate(items, x, &format!("{path}[{i}]"), errors);
        }
    }
}

#[test]
fn the_validator_rejects_what_the_schema_forbids() {
    let schema = schema();
    let good = summary(&["run", "particle", "--t-end", "0.5"]);
    let mut errors = Vec::new();
    validate(&schema, &good, "$", &mut errors);
    assert!(errors.is_empty(), "{errors:#?}");
    let mut bad = good.clone();
    bad["energy"]["initial"] = Value::from("x");
    bad["extra"] = Value::from(1);
    bad.as_object_mut().unwrap().remove("warnings");
    bad["method"]["core"] = Value::from("quantum");
    let mut errors = Vec::new();
    validate(&schema, &bad, "$", &mut errors);
    assert_eq!(errors.len(), 4, "{errors:#?}");
}

#[test]
fn every_run_kind_validates() {
    let schema = schema();
    let kinds: &[&[&str]] = &[
        &["run", "particle"],
        &["run", "pendulum", "--t-end", "1"],
        &["run", "pendulum", "--t-end", "1", "--backward"],
        &["run", "pendulum", "--t-end", "1", "--order", "4"],
        &["run", "pendulum", "--t-end", "1", "--order", "6"],
        &["run", "pendulum", "--t-end", "1", "--tol", "1e-6"],
        &["run", "particle", "--t-end", "2", "--tol", "1e-8"],
        &["run", "pendulum", "--t-end", "1", "--reduce"],
        &["run", "pendulum", "--t-end", "2", "--jacobian"],
        &[
            "run",
            "--model-file",
            "models/pendulum.toml",
            "--t-end",
            "2",
            "--jacobian",
            "--sensitivity",
            "g,r",
        ],
        &["run", "ellipse", "--t-end", "1", "--stepper", "hamiltonian"],
        // Started from a momentum (the "start" record).
        &["run", "pendulum", "--t-end", "0.5", "--start-p", "0.1,0.2"],
        &["run", "lc", "--steps", "0"],
        // Invariants: a catalogued model's, a model file's (both cores).
        &["run", "heavy-top", "--t-end", "0.5"],
        &[
            "run",
            "heavy-top",
            "--t-end",
            "0.2",
            "--order",
            "4",
            "--set",
            "g=0",
        ],
        &[
            "run",
            "--model-file",
            "models/heavy-top.toml",
            "--t-end",
            "0.5",
        ],
        &[
            "run",
            "--model-file",
            "models/heavy-top.toml",
            "--t-end",
            "0.2",
            "--order",
            "4",
        ],
        &[
            "run",
            "--model-file",
            "models/pendulum.toml",
            "--t-end",
            "1",
        ],
        &[
            "run",
            "--model-file",
            "models/masses-in-a-box.toml",
            "--t-end",
            "0.5",
        ],
        &[
            "run",
            "--model-file",
            "models/three-sleighs.toml",
            "--t-end",
            "0.2",
            "--order",
            "4",
        ],
        // Circuits: a netlist, the ladder (forward and backward, midpoint
        // map), and a run of zero steps.
        &[
            "run",
            "--netlist",
            "circuits/ddm-lc.cir",
            "--h",
            "0.05",
            "--steps",
            "40",
        ],
        &["run", "lc-ladder", "--set", "cells=40", "--steps", "30"],
        &[
            "run",
            "lc-ladder",
            "--steps",
            "30",
            "--backward",
            "--discretization",
            "midpoint",
        ],
        &["run", "lc-ladder", "--steps", "0"],
        // A circuit at order 4 (the run-time core), backward.
        &[
            "run",
            "lc-ladder",
            "--steps",
            "10",
            "--order",
            "4",
            "--backward",
        ],
        // Systems: with the parts' and ports' accounting (an impact, no
        // step, backward), and without it (order 4)
        &[
            "run",
            "--system",
            "models/systems/relay.toml",
            "--t-end",
            "0.003",
        ],
        &[
            "run",
            "--system",
            "models/systems/relay.toml",
            "--steps",
            "0",
        ],
        &[
            "run",
            "--system",
            "models/systems/loudspeaker.toml",
            "--t-end",
            "0.001",
            "--backward",
        ],
        &[
            "run",
            "--system",
            "models/systems/loudspeaker.toml",
            "--t-end",
            "0.001",
            "--order",
            "4",
        ],
    ];
    for args in kinds {
        let s = summary(args);
        // a system's runs are accounted, composed ones (`--order 4`) stage
        // by stage, with `energy_sum_deviation_max` null
        let accounted = args.contains(&"--system");
        assert_eq!(s.get("parts").is_some(), accounted, "{args:?}: parts");
        assert_eq!(s.get("ports").is_some(), accounted, "{args:?}: ports");
        let mut errors = Vec::new();
        if accounted {
            // (null too for a run of no step: nothing was compared)
            let none = args.contains(&"--order") || args.windows(2).any(|w| w == ["--steps", "0"]);
            let deviation = &s["accounting"]["energy_sum_deviation_max"];
            assert_eq!(deviation.is_null(), none, "{args:?}: {deviation}");
        }
        validate(&schema, &s, "$", &mut errors);
        assert!(errors.is_empty(), "{args:?}: {errors:#?}");
        // The top-level method keys repeat the method record.
        for key in [
            "stepper",
            "order",
            "discretization",
            "constraint",
            "direction",
        ] {
            assert_eq!(s[key], s["method"][key], "{args:?}: {key}");
        }
    }
}
