//! Scenarios: TOML round trips, `--set` overrides and their errors.

use diracvi_models::*;

/// The catalogue's names (so adding a model never breaks these tests).
fn names() -> Vec<&'static str> {
    catalogue().iter().map(|i| i.name).collect()
}

#[test]
fn to_toml_parses_back_to_an_equal_scenario_for_every_model() {
    for name in names() {
        let s = Scenario::defaults(name).unwrap();
        let text = s.to_toml();
        let back = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert_eq!(back, s, "{name}:\n{text}");
        // Every parameter is documented in the output.
        for info in parameters(name).unwrap() {
            assert!(
                text.contains(info.name) && text.contains(info.unit),
                "{name}: {text}"
            );
        }
    }
}

#[test]
fn round_trip_survives_overrides() {
    let mut s = Scenario::defaults("ellipse").unwrap();
    s.set("inertia", "0.4").unwrap();
    s.set("q", "[1.0, 0.25, 3.0]").unwrap();
    s.set("h", "0.003").unwrap();
    s.set("discretization", "forward").unwrap();
    s.set("t_end", "0").unwrap();
    let back = Scenario::from_toml(&s.to_toml()).unwrap();
    assert_eq!(back, s);
    assert_eq!(
        back.parameters.get("inertia").and_then(|v| v.as_float()),
        Some(0.4)
    );
    s.set("inertia", "none").unwrap();
    assert!(!s.parameters.contains_key("inertia"));
    assert_eq!(Scenario::from_toml(&s.to_toml()).unwrap(), s);
}

#[test]
fn a_minimal_file_is_the_defaults() {
    for name in names() {
        let s = Scenario::from_toml(&format!("model = \"{name}\"\n")).unwrap();
        assert_eq!(s, Scenario::defaults(name).unwrap());
    }
}

#[test]
fn missing_fields_fall_back_to_defaults_for_the_given_parameters() {
    let s = Scenario::from_toml(
        r#"
model = "disk-wall"
t_end = 5            # integers are numbers
[parameters]
r = 2
"#,
    )
    .unwrap();
    assert_eq!(s.t_end.to_bits(), 5f64.to_bits());
    assert_eq!(s.h.to_bits(), 1e-2f64.to_bits());
    // v_x = R v_θ cos φ with the file's R.
    assert!((s.initial.v[0] - 2.0).abs() < 1e-15);
    assert_eq!(s.parameters.get("r").and_then(|v| v.as_float()), Some(2.0));
    assert_eq!(s.parameters.get("m").and_then(|v| v.as_float()), Some(1.0));
}

#[test]
fn unknown_model_lists_the_valid_names() {
    let err = Scenario::defaults("bouncing-ball").unwrap_err();
    match &err {
        ModelError::UnknownModel { name, valid } => {
            assert_eq!(name, "bouncing-ball");
            assert_eq!(
                valid,
                &names().into_iter().map(String::from).collect::<Vec<_>>()
            );
        }
        e => panic!("{e:?}"),
    }
    let msg = err.to_string();
    for name in names() {
        assert!(msg.contains(name), "{msg}");
    }
    assert!(matches!(
        Scenario::from_toml("model = \"nope\""),
        Err(ModelError::UnknownModel { .. })
    ));
    assert!(matches!(
        parameters("nope"),
        Err(ModelError::UnknownModel { .. })
    ));
}

#[test]
fn set_with_an_unknown_key_lists_the_valid_keys() {
    let mut s = Scenario::defaults("pendulum").unwrap();
    let err = s.set("length", "3").unwrap_err();
    match &err {
        ModelError::UnknownParameter { model, key, valid } => {
            assert_eq!((model.as_str(), key.as_str()), ("pendulum", "length"));
            for k in ["m", "g", "l", "r", "f0", "f1", "h", "t_end", "q", "v"] {
                assert!(valid.iter().any(|v| v == k), "{k} missing from {valid:?}");
            }
            assert_eq!(valid, &Scenario::settable_keys("pendulum").unwrap());
        }
        e => panic!("{e:?}"),
    }
    assert!(err.to_string().contains("t_end"), "{err}");
}

#[test]
fn set_with_an_ill_typed_value_is_an_error() {
    let mut s = Scenario::defaults("particle").unwrap();
    let before = s.clone();
    for (key, value) in [
        ("m", "heavy"),
        ("m", "none"),
        ("h", "small"),
        ("discretization", "euler"),
        ("constraint", "rigid"),
        ("q", "0, two"),
    ] {
        match s.set(key, value) {
            Err(ModelError::IllTypedParameter {
                key: k,
                value: v,
                expected,
            }) => {
                assert_eq!((k.as_str(), v.as_str()), (key, value));
                assert!(!expected.is_empty());
            }
            other => panic!("{key}={value}: {other:?}"),
        }
    }
    assert!(matches!(
        s.set("q", "1, 2, 3"),
        Err(ModelError::WrongLength {
            what: "q",
            expected: 2,
            got: 3
        })
    ));
    assert!(matches!(
        s.set("h", "-0.1"),
        Err(ModelError::InvalidStep { .. })
    ));
    assert!(matches!(
        s.set("h", "0"),
        Err(ModelError::InvalidStep { .. })
    ));
    assert!(matches!(
        s.set("t_end", "-1"),
        Err(ModelError::InvalidEndTime { .. })
    ));
    assert!(matches!(
        s.set("t_end", "inf"),
        Err(ModelError::InvalidEndTime { .. })
    ));
    assert_eq!(s, before);
}

#[test]
fn malformed_files_are_errors() {
    assert!(matches!(
        Scenario::from_toml("h = 0.1"),
        Err(ModelError::Scenario(_))
    ));
    assert!(matches!(
        Scenario::from_toml("model = "),
        Err(ModelError::Scenario(_))
    ));
    assert!(matches!(
        Scenario::from_toml("model = \"lc\"\nsteps = 3"),
        Err(ModelError::Scenario(m)) if m.contains("steps")
    ));
    assert!(matches!(
        Scenario::from_toml("model = \"lc\"\n[parameters]\nL = 1.0"),
        Err(ModelError::UnknownParameter { key, .. }) if key == "L"
    ));
    assert!(matches!(
        Scenario::from_toml("model = \"lc\"\n[parameters]\nl = \"big\""),
        Err(ModelError::IllTypedParameter { key, .. }) if key == "l"
    ));
    assert!(matches!(
        Scenario::from_toml("model = \"lc\"\n[parameters]\nl = -1.0"),
        Err(ModelError::InvalidParameter { parameter: "l", .. })
    ));
    assert!(matches!(
        Scenario::from_toml("model = \"lc\"\n[initial]\nq = [0.0]"),
        Err(ModelError::WrongLength {
            what: "q",
            expected: 4,
            got: 1
        })
    ));
    assert!(matches!(
        Scenario::from_toml("model = \"lc\"\ndiscretization = \"rk4\""),
        Err(ModelError::IllTypedParameter { key, .. }) if key == "discretization"
    ));
    assert!(matches!(
        Scenario::from_toml("model = \"lc\"\nh = -1"),
        Err(ModelError::InvalidStep { .. })
    ));
    assert!(matches!(
        Scenario::from_toml("model = 3"),
        Err(ModelError::IllTypedParameter { key, .. }) if key == "model"
    ));
}

#[test]
fn explicit_initial_data_are_kept_when_parameters_change() {
    let mut s = Scenario::defaults("disk-wall").unwrap();
    s.set("v", "0.5, 0.8660254037844386, 1, 0").unwrap();
    let v = s.initial.v.clone();
    s.set("r", "2").unwrap();
    assert_eq!(s.initial.v, v);
    // … and then violate the constraints for the new radius.
    assert!(matches!(
        s.visit_catalogue(Probe),
        Err(ModelError::InitialViolatesConstraint { .. })
    ));
}

struct Probe;
impl ModelVisitor for Probe {
    type Output = usize;
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        _model: &Mo,
        _setup: &RunSetup<N>,
    ) -> usize {
        N
    }
}

#[test]
fn visit_checks_the_run_settings() {
    let mut s = Scenario::defaults("particle").unwrap();
    s.h = f64::NAN;
    assert!(matches!(
        s.visit_catalogue(Probe),
        Err(ModelError::InvalidStep { .. })
    ));
    let mut s = Scenario::defaults("particle").unwrap();
    s.initial.v.push(0.0);
    assert!(matches!(
        s.visit_catalogue(Probe),
        Err(ModelError::WrongLength {
            what: "v",
            expected: 2,
            got: 3
        })
    ));
    let mut s = Scenario::defaults("lc").unwrap();
    s.set("constraint", "model").unwrap();
    assert!(matches!(
        s.visit_catalogue(Probe),
        Err(ModelError::NoModelConstraint { model }) if model == "lc"
    ));
    // Unconstrained models ignore the constraint choice.
    let mut s = Scenario::defaults("star").unwrap();
    s.set("constraint", "model").unwrap();
    assert_eq!(s.visit_catalogue(Probe).unwrap(), 3);
}

#[test]
fn parameter_descriptions_match_the_serialized_keys() {
    for name in names() {
        let infos = parameters(name).unwrap();
        let s = Scenario::defaults(name).unwrap();
        for key in s.parameters.keys() {
            assert!(
                infos.iter().any(|p| p.name == key),
                "{name}: {key} undocumented"
            );
        }
        for info in infos {
            let present = s.parameters.contains_key(info.name);
            assert_eq!(
                present,
                info.kind != ParameterKind::OptionalFloat,
                "{name}.{}",
                info.name
            );
            assert!(!info.description.is_empty() && !info.unit.is_empty());
            // Every documented key can be set to its own value.
            let mut t = s.clone();
            if let Some(v) = s.parameters.get(info.name) {
                t.set(info.name, &v.to_string()).unwrap();
                assert_eq!(t, s);
            } else {
                t.set(info.name, "0.3").unwrap();
                t.set(info.name, "none").unwrap();
                assert_eq!(t, s);
            }
        }
    }
}

#[test]
fn tol_is_a_key_of_every_scenario_and_survives_round_trips() {
    // the catalogue
    for name in names() {
        let mut s = Scenario::defaults(name).unwrap();
        assert!(
            s.keys().iter().any(|k| k == "tol"),
            "{name}: {:?}",
            s.keys()
        );
        s.set("tol", "1e-7").unwrap();
        let back = Scenario::from_toml(&s.to_toml()).unwrap();
        assert_eq!(back.tol, Some(1e-7), "{name}");
        assert_eq!(back, s, "{name}");
    }
    // a model file: `[run] tol` becomes the scenario's, and prints back
    let file = format!("{}/../../models/particle.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&file).unwrap();
    let mut s = Scenario::from_model_file(&file).unwrap();
    assert_eq!(s.tol, None);
    assert!(s.keys().iter().any(|k| k == "tol"), "{:?}", s.keys());
    let with_tol = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("h =") {
                "tol = 1e-9".to_owned()
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(with_tol, text, "particle.toml has a [run] h");
    let from_file = Scenario::from_toml(&with_tol).unwrap();
    assert_eq!(from_file.tol, Some(1e-9));
    s.set("h", "1e-3").unwrap(); // the default step a file with `tol` gets
    s.set("tol", "1e-9").unwrap();
    assert_eq!(from_file, s);
    let printed = s.to_toml();
    assert!(
        printed.contains("\ntol = 1e-9\n") && !printed.contains("\nh = "),
        "{printed}"
    );
    assert_eq!(Scenario::from_toml(&printed).unwrap(), s);
    // `--set h=…` replaces the tolerance again
    s.set("h", "0.002").unwrap();
    assert_eq!(s.tol, None);
    assert!(s.to_toml().contains("\nh = 0.002\n"));
    // both in a file: the file and the key
    let both = with_tol.replace("tol = 1e-9", "h = 1e-3\ntol = 1e-9");
    let err = Scenario::from_toml(&both).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("run.tol") && message.contains("run.h"),
        "{message}"
    );
    // a circuit: `tol` is a key and round-trips with its `h`
    let mut s = Scenario::from_toml("model = \"lc-ladder\"\n").unwrap();
    assert!(s.keys().iter().any(|k| k == "tol"), "{:?}", s.keys());
    s.set("tol", "1e-6").unwrap();
    assert_eq!(Scenario::from_toml(&s.to_toml()).unwrap(), s);
}
