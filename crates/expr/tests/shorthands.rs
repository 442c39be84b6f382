//! The shorthands of model files (docs/model-files.md, "Shorthands"):
//! `[definitions]`, parameters and initial data written as expressions,
//! velocities solved from the constraints, and the Legendre check of a
//! given Hamiltonian.

use approx::assert_relative_eq;
use diracvi_expr::{
    ExprErrorKind, InitialValue, ModelFile, ModelFileError, ModelFileErrorKind, Position,
};
use diracvi_geometry::num_dual::Dual64;
use std::f64::consts::PI;

fn top() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/top.toml"
    ))
    .unwrap()
}

fn read(source: &str) -> Result<ModelFile, ModelFileError> {
    ModelFile::from_toml_str(source, "test.toml")
}

fn located(e: &ModelFileError) -> (&str, usize, usize) {
    (e.key(), e.line(), e.column())
}

/// A sleigh written with every shorthand.
const SHORT: &str = r#"
[model]
name = "sleigh"
coordinates = ["x", "y", "theta"]
lagrangian = "0.5*m*(x_dot^2 + y_dot^2) + 0.5*J*theta_dot^2 + m*a*theta_dot*slip"
constraints = [["-sin(theta)", "cos(theta)", "0"]]
boundaries = ["R^2 - x^2 - y^2"]

[definitions]
slip = "cos(theta)*y_dot - sin(theta)*x_dot"
J = "I + m*a^2"

[parameters]
m = 1.0
I = "m*a^2/0.9"
a = 0.3
R = 2.0

[initial]
q = ["0.1", "-a/3", "pi/6"]
v = [1.0, "solve", 0.5]
"#;

#[test]
fn definitions_are_substituted_exactly() {
    let file = read(SHORT).unwrap();
    assert_eq!(file.definitions.len(), 2);
    let c = file.compile(&[]).unwrap();
    let (m, a) = (1.0, 0.3);
    let i = m * a * a / 0.9;
    let long = |q: [f64; 3], v: [f64; 3]| {
        0.5 * m * (v[0] * v[0] + v[1] * v[1])
            + 0.5 * (i + m * a * a) * v[2] * v[2]
            + m * a * v[2] * (q[2].cos() * v[1] - q[2].sin() * v[0])
    };
    for (q, v) in [
        ([0.1, -0.2, 0.7], [1.0, 0.3, -0.5]),
        ([0.0, 1.0, -2.0], [-0.4, 2.0, 1.5]),
    ] {
        assert_relative_eq!(c.lagrangian(&q, &v), long(q, v), max_relative = 1e-14);
        // the derivative sees through the definitions: dL/d(theta_dot)
        let qd = q.map(Dual64::from);
        let mut vd = v.map(Dual64::from);
        vd[2].eps = 1.0;
        let expected = (i + m * a * a) * v[2] + m * a * (q[2].cos() * v[1] - q[2].sin() * v[0]);
        assert_relative_eq!(c.lagrangian(&qd, &vd).eps, expected, max_relative = 1e-14);
    }
}

#[test]
fn parameters_follow_their_expressions_and_overrides() {
    let file = read(SHORT).unwrap();
    // `I` uses `a`, written after it
    let values = file.parameter_values(&[]).unwrap();
    assert_relative_eq!(values[1].1, 0.09 / 0.9, max_relative = 1e-15);
    assert_eq!(
        file.parameters, values,
        "the file's values are the evaluated ones"
    );
    // an override of `a` re-evaluates `I`; an override of `I` replaces its expression
    let c = file.compile(&[("a".into(), 0.6)]).unwrap();
    assert_relative_eq!(c.parameter("I").unwrap(), 0.36 / 0.9, max_relative = 1e-15);
    let c = file
        .compile(&[("a".into(), 0.6), ("I".into(), 0.25)])
        .unwrap();
    assert_eq!(c.parameter("I"), Some(0.25));
    // the top's chain I1c -> I1, I3
    let top = read(&top()).unwrap();
    let c = top.compile(&[("r".into(), 0.1)]).unwrap();
    assert_relative_eq!(
        c.parameter("I1c").unwrap(),
        0.5 * 0.01 / 4.0,
        max_relative = 1e-15
    );
    assert_relative_eq!(
        c.parameter("I1").unwrap(),
        0.5 * 0.01 / 4.0 + 0.5 * 0.04 * 0.04,
        max_relative = 1e-15
    );
    assert_relative_eq!(
        c.parameter("I3").unwrap(),
        0.5 * 0.01 / 2.0,
        max_relative = 1e-15
    );
}

#[test]
fn initial_data_evaluate_and_velocities_are_solved() {
    let file = read(SHORT).unwrap();
    let initial = file.initial.as_ref().unwrap();
    assert_eq!(initial.v[1], InitialValue::Solve);
    assert_eq!(initial.solved(), [1]);
    let c = file.compile(&[]).unwrap();
    let init = file.initial_values(&c, None).unwrap();
    assert_eq!(init.q[0].to_bits(), 0.1_f64.to_bits());
    assert_relative_eq!(init.q[1], -0.1, max_relative = 1e-15);
    assert_relative_eq!(init.q[2], PI / 6.0, max_relative = 1e-15);
    assert_eq!(init.solved, [1]);
    // -sin(theta) x_dot + cos(theta) y_dot = 0  =>  y_dot = tan(theta) x_dot
    assert_relative_eq!(init.v[1], (PI / 6.0).tan(), max_relative = 1e-14);
    assert_eq!((init.v[0], init.v[2]), (1.0, 0.5));
    // at another q (a scenario's `q=…`) the velocity is solved there
    let at = file.initial_values(&c, Some(&[0.0, 0.0, 1.0])).unwrap();
    assert_relative_eq!(at.v[1], 1.0_f64.tan(), max_relative = 1e-14);
    // expressions follow the parameters
    let c = file.compile(&[("a".into(), 0.6)]).unwrap();
    assert_relative_eq!(
        file.initial_values(&c, None).unwrap().q[1],
        -0.2,
        max_relative = 1e-15
    );
}

#[test]
fn velocities_that_the_constraints_do_not_determine_are_refused() {
    // theta = pi/2: the y_dot column of A is cos(pi/2) ~ 6e-17
    let e = read(&SHORT.replace(r#""pi/6"]"#, r#""pi/2"]"#)).unwrap_err();
    assert_eq!(e.key(), "initial.v");
    match e.kind() {
        ModelFileErrorKind::VelocitiesNotDetermined { names, q, reason } => {
            assert_eq!(names, &["y_dot"]);
            assert_relative_eq!(q[2], PI / 2.0, max_relative = 1e-15);
            assert!(reason.contains("singular"), "{reason}");
        }
        other => panic!("expected VelocitiesNotDetermined, got {other:?}"),
    }
    assert!(
        e.to_string()
            .contains("cannot solve A(q0) v0 = 0 for y_dot"),
        "{e}"
    );
    // two unknowns, one row
    let e = read(&SHORT.replace(
        r#"v = [1.0, "solve", 0.5]"#,
        r#"v = ["solve", "solve", 0.5]"#,
    ))
    .unwrap_err();
    match e.kind() {
        ModelFileErrorKind::VelocitiesNotDetermined { names, reason, .. } => {
            assert_eq!(names, &["x_dot", "y_dot"]);
            assert!(reason.contains("1 constraint row"), "{reason}");
        }
        other => panic!("expected VelocitiesNotDetermined, got {other:?}"),
    }
    // positions cannot be solved for
    let e = read(&SHORT.replace(r#"q = ["0.1""#, r#"q = ["solve""#)).unwrap_err();
    assert_eq!(e.key(), "initial.q");
    assert_eq!(e.kind(), &ModelFileErrorKind::SolveNotAllowed);
}

#[test]
fn definition_errors_name_the_definition() {
    let with = |defs: &str| SHORT.replace("slip = \"cos(theta)*y_dot - sin(theta)*x_dot\"", defs);
    // a cycle, found when checking the first definition of it
    let e = read(&with("slip = \"u\"\nu = \"2*slip\"")).unwrap_err();
    assert_eq!(e.key(), "definitions.slip");
    match e.kind() {
        ModelFileErrorKind::Expression(x) => assert_eq!(
            x.kind,
            ExprErrorKind::DefinitionCycle {
                cycle: vec!["slip".into(), "u".into(), "slip".into()]
            }
        ),
        other => panic!("expected a cycle, got {other:?}"),
    }
    assert!(e.to_string().contains("slip -> u -> slip"), "{e}");
    // a definition using itself
    let e = read(&with("slip = \"1 + slip\"")).unwrap_err();
    assert_eq!(e.key(), "definitions.slip");
    // an unknown name, placed at its character in the file
    let e = read(&with("slip = \"cos(theta)*y_dot - sin(thta)*x_dot\"")).unwrap_err();
    let line = SHORT.lines().position(|l| l.starts_with("slip")).unwrap() + 1;
    assert_eq!(located(&e), ("definitions.slip", line, 9 + 23));
    assert!(e.to_string().contains("unknown name `thta`"), "{e}");
    // a definition over momenta used in the Lagrangian: refused at the use
    let e = read(&with("slip = \"p_x\"")).unwrap_err();
    assert_eq!(e.key(), "model.lagrangian");
    match e.kind() {
        ModelFileErrorKind::Expression(x) => match &x.kind {
            ExprErrorKind::InDefinition { name, error } => {
                assert_eq!(name, "slip");
                assert!(
                    matches!(&error.kind, ExprErrorKind::UnknownName { name, .. } if name == "p_x")
                );
            }
            other => panic!("expected InDefinition, got {other:?}"),
        },
        other => panic!("expected an expression error, got {other:?}"),
    }
    // a definition clashing with a parameter
    let e = read(&with("slip = \"1\"\nm = \"2\"")).unwrap_err();
    assert!(
        matches!(e.kind(), ModelFileErrorKind::NameClash { .. }),
        "{e}"
    );
}

#[test]
fn parameter_cycles_are_refused() {
    let src = SHORT.replace("m = 1.0", "m = \"2*R0\"\nR0 = \"m/2\"");
    let e = read(&src).unwrap_err();
    match e.kind() {
        ModelFileErrorKind::ParameterCycle { cycle } => {
            assert_eq!(cycle.first(), cycle.last());
            assert_eq!(cycle.len(), 3);
            assert!(cycle.contains(&"m".to_string()) && cycle.contains(&"R0".to_string()));
        }
        other => panic!("expected ParameterCycle, got {other:?}"),
    }
    assert!(e.position().is_some());
    // an unknown name in a parameter expression is an ordinary expression error
    let e = read(&SHORT.replace("m = 1.0", "m = \"2*mass\"")).unwrap_err();
    assert_eq!(e.key(), "parameters.m");
    assert!(e.to_string().contains("unknown name `mass`"), "{e}");
}

#[test]
fn a_wrong_hamiltonian_is_refused_with_the_point_and_the_mismatch() {
    let good = top();
    let top = read(&good).unwrap();
    assert!(top.hamiltonian.is_some());
    let bad = good.replace("p_psi^2/(2*I3)", "p_psi^2/(3*I3)");
    assert_ne!(bad, good);
    let e = read(&bad).unwrap_err();
    assert_eq!(e.key(), "model.hamiltonian");
    let line = bad
        .lines()
        .position(|l| l.starts_with("hamiltonian"))
        .unwrap()
        + 1;
    assert_eq!(e.position(), Some(Position { line, column: 16 }));
    match e.kind() {
        ModelFileErrorKind::HamiltonianMismatch {
            q,
            v,
            p,
            hamiltonian,
            legendre,
        } => {
            // the initial point: theta = pi/6, spinning at 20 pi rad/s
            assert_eq!(q[0].to_bits(), 0.0_f64.to_bits());
            assert_relative_eq!(q[1], PI / 6.0, max_relative = 1e-15);
            assert_relative_eq!(v[2], 20.0 * PI, max_relative = 1e-15);
            // p_psi = I3 omega3 with I3 = 2 M r^2/4
            let i3 = 2.0 * 0.5 * 0.05 * 0.05 / 4.0;
            assert_relative_eq!(p[2], i3 * 20.0 * PI, max_relative = 1e-13);
            // the wrong term p_psi^2/(3 I3) instead of p_psi^2/(2 I3)
            let expected = -(p[2] * p[2]) / (6.0 * i3);
            assert_relative_eq!(hamiltonian - legendre, expected, max_relative = 1e-9);
            assert_relative_eq!(expected, -0.411_233_516_712_056_6, max_relative = 1e-9);
        }
        other => panic!("expected HamiltonianMismatch, got {other:?}"),
    }
    let text = e.to_string();
    assert!(text.contains("not the Legendre transform"), "{text}");
    assert!(text.contains("mismatch"), "{text}");
}

#[test]
fn shorthands_print_back_as_written() {
    for source in [SHORT.to_owned(), top()] {
        let file = read(&source).unwrap();
        let printed = file.to_toml_string();
        let again = read(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
        assert_eq!(again, file, "{printed}");
        assert!(printed.contains("[definitions]"), "{printed}");
    }
}
