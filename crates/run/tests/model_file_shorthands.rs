//! Model files written with the shorthands of docs/model-files.md
//! (`[definitions]`, parameters and initial data as expressions, velocities
//! solved from the constraints) run exactly like the same model written out
//! longhand; velocities solved are noted in the summary; a Hamiltonian run
//! of a regular Lagrangian without a Hamiltonian says so.

use approx::assert_relative_eq;
use diracvi_models::ModelError;
use diracvi_run::{
    DEFAULT_ENERGY_TOLERANCE, Discard, RunError, RunPlan, Scenario, Stepper, Summary, describe,
    execute,
};
use std::f64::consts::PI;

/// The sleigh in a circular arena with every shorthand.
const SHORT: &str = r#"
[model]
name = "sleigh"
coordinates = ["x", "y", "theta"]
lagrangian = "0.5*m*(x_dot^2 + y_dot^2) + 0.5*J*theta_dot^2 + m*a*theta_dot*slip"
constraints = [["-sin(theta)", "cos(theta)", "0"]]
boundaries = ["R^2 - x^2 - y^2"]
hamiltonian = "(p_x^2 + p_y^2)/(2*m) + L_cm^2/(2*I)"

[definitions]
slip = "cos(theta)*y_dot - sin(theta)*x_dot"
J = "I + m*a^2"
L_cm = "p_theta - a*(cos(theta)*p_y - sin(theta)*p_x)"

[parameters]
m = 1.0
I = "m*a^2/0.9"
a = 0.3
R = "4*a"

[run]
h = 0.01
t_end = 1.5

[initial]
q = ["0.1", "-a/3", "pi/6"]
v = [1.0, "solve", 0.5]
"#;

/// The same model, longhand, with the values the shorthand computes
/// (`I = m a^2/0.9`, `R = 4a`, `q0`, and `y_dot = tan(theta) x_dot`).
fn longhand() -> String {
    let (m, a) = (1.0_f64, 0.3_f64);
    let i = m * a * a / 0.9;
    let r = 4.0 * a;
    let theta = PI / 6.0;
    format!(
        r#"
[model]
name = "sleigh"
coordinates = ["x", "y", "theta"]
lagrangian = "0.5*m*(x_dot^2 + y_dot^2) + 0.5*(I + m*a^2)*theta_dot^2 + m*a*theta_dot*(cos(theta)*y_dot - sin(theta)*x_dot)"
constraints = [["-sin(theta)", "cos(theta)", "0"]]
boundaries = ["R^2 - x^2 - y^2"]
hamiltonian = "(p_x^2 + p_y^2)/(2*m) + (p_theta - a*(cos(theta)*p_y - sin(theta)*p_x))^2/(2*I)"

[parameters]
m = {m:?}
I = {i:?}
a = {a:?}
R = {r:?}

[run]
h = 0.01
t_end = 1.5

[initial]
q = [0.1, {q1:?}, {theta:?}]
v = [1.0, {v1:?}, 0.5]
"#,
        q1 = -a / 3.0,
        v1 = theta.sin() / theta.cos(),
    )
}

fn final_state(sc: &Scenario, stepper: Stepper) -> (Vec<f64>, Vec<f64>, usize) {
    let steps = diracvi_run::step_count(sc, None).unwrap();
    let out = execute(sc, RunPlan::new(steps).stepper(stepper), &mut Discard).unwrap();
    assert_eq!(out.steps, 150);
    (
        out.final_q.as_slice().to_vec(),
        out.final_p.as_slice().to_vec(),
        out.impacts.len(),
    )
}

#[test]
fn shorthand_runs_like_longhand() {
    let short = Scenario::from_toml(SHORT).unwrap();
    let long = Scenario::from_toml(&longhand()).unwrap();
    // the initial data agree to round-off (the solve against tan)
    for (a, b) in short.initial.q.iter().zip(&long.initial.q) {
        assert_relative_eq!(a, b, max_relative = 1e-15);
    }
    for (a, b) in short.initial.v.iter().zip(&long.initial.v) {
        assert_relative_eq!(a, b, max_relative = 1e-14);
    }
    for stepper in [Stepper::Lagrange, Stepper::Hamiltonian] {
        let (qs, ps, impacts_s) = final_state(&short, stepper);
        let (ql, pl, impacts_l) = final_state(&long, stepper);
        assert_eq!(impacts_s, impacts_l, "{stepper:?}");
        for (a, b) in qs.iter().zip(&ql).chain(ps.iter().zip(&pl)) {
            assert!(
                (a - b).abs() <= 1e-11 * (1.0 + b.abs()),
                "{stepper:?}: {a} against {b}"
            );
        }
    }
    // the run moved: not a comparison of two initial states
    let (q, _, _) = final_state(&short, Stepper::Lagrange);
    assert!((q[0] - 0.1).abs() > 0.1, "{q:?}");
}

#[test]
fn solved_velocities_are_noted_and_follow_the_scenario() {
    let mut sc = Scenario::from_toml(SHORT).unwrap();
    assert_eq!(sc.solved_velocities(), ["y_dot"]);
    let info = describe(&sc).unwrap();
    let steps = diracvi_run::step_count(&sc, None).unwrap();
    let out = execute(&sc, RunPlan::new(steps), &mut Discard).unwrap();
    let summary = Summary::new(&sc, &info, &out, DEFAULT_ENERGY_TOLERANCE);
    let note = summary
        .warnings
        .iter()
        .find(|w| w.contains("solved"))
        .unwrap_or_else(|| panic!("no note in {:?}", summary.warnings));
    assert!(
        note.contains("y_dot were solved from A(q0) v0 = 0 given x_dot, theta_dot"),
        "{note}"
    );
    // a new q: y_dot is solved again there
    sc.set("q", "0, 0, 1").unwrap();
    assert_relative_eq!(sc.initial.v[1], 1.0_f64.tan(), max_relative = 1e-14);
    assert_eq!(sc.solved_velocities(), ["y_dot"]);
    // a parameter: q written as expressions follows it (q was set: it stays)
    let mut fresh = Scenario::from_toml(SHORT).unwrap();
    fresh.set("a", "0.6").unwrap();
    assert_relative_eq!(fresh.initial.q[1], -0.2, max_relative = 1e-15);
    sc.set("a", "0.6").unwrap();
    assert_eq!(sc.initial.q, [0.0, 0.0, 1.0]);
    // v set explicitly: nothing is solved any more
    sc.set("v", "0, 0, 2").unwrap();
    assert!(sc.solved_velocities().is_empty());
    // printed back: the expressions and the marker while they hold
    let printed = fresh.to_toml();
    assert!(
        printed.contains(r#"q = ["0.1", "-a/3", "pi/6"]"#),
        "{printed}"
    );
    assert!(printed.contains(r#"v = [1.0, "solve", 0.5]"#), "{printed}");
    assert!(printed.contains(r#"R = "4*a""#), "{printed}");
    assert!(printed.contains("a = 0.6"), "{printed}");
    assert_eq!(Scenario::from_toml(&printed).unwrap(), fresh);
}

#[test]
fn a_set_parameter_overrides_its_expression_and_its_dependents_follow() {
    let mut sc = Scenario::from_toml(SHORT).unwrap();
    sc.set("a", "0.5").unwrap();
    sc.set("I", "0.2").unwrap();
    let file = sc.file.clone().unwrap();
    let compiled = file
        .compile(&[("a".into(), 0.5), ("I".into(), 0.2)])
        .unwrap();
    assert_eq!(compiled.parameter("I"), Some(0.2));
    assert_relative_eq!(compiled.parameter("R").unwrap(), 2.0, max_relative = 1e-15);
    let printed = sc.to_toml();
    assert!(printed.contains("I = 0.2"), "{printed}");
    assert!(printed.contains(r#"R = "4*a""#), "{printed}");
}

#[test]
fn a_regular_lagrangian_without_hamiltonian_is_not_called_degenerate() {
    let src = SHORT.replace(
        r#"hamiltonian = "(p_x^2 + p_y^2)/(2*m) + L_cm^2/(2*I)""#,
        "",
    );
    let sc = Scenario::from_toml(&src).unwrap();
    let info = describe(&sc).unwrap();
    assert!(!info.has_hamiltonian && info.regular_lagrangian);
    let err = execute(
        &sc,
        RunPlan::new(3).stepper(Stepper::Hamiltonian),
        &mut Discard,
    )
    .unwrap_err();
    assert!(
        matches!(err, RunError::HamiltonianNotGiven { ref model } if model == "sleigh"),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("regular Lagrangian but no Hamiltonian was given"),
        "{text}"
    );
    assert!(!text.contains("degenerate"), "{text}");
    assert!(matches!(
        info.hamiltonian_error("sleigh"),
        Some(RunError::HamiltonianNotGiven { .. })
    ));
    // the LC circuit's Lagrangian is degenerate
    let lc = describe(&Scenario::defaults("lc").unwrap()).unwrap();
    assert!(!lc.regular_lagrangian);
    assert!(matches!(
        lc.hamiltonian_error("lc"),
        Some(RunError::NoHamiltonian { .. })
    ));
}

#[test]
fn a_violated_constraint_is_named_by_its_expression() {
    let mut sc = Scenario::from_toml(SHORT).unwrap();
    sc.set("v", "1, 0, 0.5").unwrap();
    let err = execute(&sc, RunPlan::new(3), &mut Discard).unwrap_err();
    match &err {
        RunError::Model(ModelError::InitialViolatesConstraint {
            index,
            name,
            residual,
            ..
        }) => {
            assert_eq!(*index, 0);
            assert_eq!(
                name,
                "model.constraints[0]: (-sin(theta))*x_dot + (cos(theta))*y_dot = 0"
            );
            // |-sin(pi/6) * 1| = 0.5
            assert_relative_eq!(*residual, 0.5, max_relative = 1e-14);
        }
        other => panic!("expected InitialViolatesConstraint, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("(-sin(theta))*x_dot + (cos(theta))*y_dot = 0"),
        "{text}"
    );
    assert!(!text.contains("|A(q0) v0|"), "{text}");
}
