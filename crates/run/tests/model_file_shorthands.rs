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

/// The twelve definitions `model.orientation = "so3"` stands for, written
/// out over the quaternion `[w, x, y, z]` as the repository's files did by
/// hand before it existed.
fn quaternion_definitions(w: &str, x: &str, y: &str, z: &str) -> String {
    format!(
        r#"omega1 = "2*({w}*{x}_dot - {x}*{w}_dot - {y}*{z}_dot + {z}*{y}_dot)"
omega2 = "2*({w}*{y}_dot - {y}*{w}_dot + {x}*{z}_dot - {z}*{x}_dot)"
omega3 = "2*({w}*{z}_dot - {z}*{w}_dot - {x}*{y}_dot + {y}*{x}_dot)"
e1x = "{w}^2 + {x}^2 - {y}^2 - {z}^2"
e1y = "2*({x}*{y} + {w}*{z})"
e1z = "2*({x}*{z} - {w}*{y})"
e2x = "2*({x}*{y} - {w}*{z})"
e2y = "{w}^2 - {x}^2 + {y}^2 - {z}^2"
e2z = "2*({y}*{z} + {w}*{x})"
e3x = "2*({x}*{z} + {w}*{y})"
e3y = "2*({y}*{z} - {w}*{x})"
e3z = "{w}^2 - {x}^2 - {y}^2 + {z}^2"
"#
    )
}

/// A body in space above a floor, sliding along x only (`Y_dot = 0`, a
/// row over the declared coordinates), its lowest point `Z - c|e3z|`:
/// `[model]` and `[definitions]` with `model.orientation` or longhand.
fn body(model: &str, definitions: &str, initial: &str) -> String {
    format!(
        r#"
[model]
name = "body"
lagrangian = "0.5*M*(X_dot^2 + Y_dot^2 + Z_dot^2) + 0.5*(I1*omega1^2 + I2*omega2^2 + I3*omega3^2) - M*g*Z"
boundaries = ["Z - c*sqrt(e3z^2 + 1e-4)"]
{model}
[definitions]
{definitions}
[invariants]
pi_z = "e1z*I1*omega1 + e2z*I2*omega2 + e3z*I3*omega3"

[parameters]
M = 1.0
I1 = 0.02
I2 = 0.03
I3 = 0.04
c = 0.2
g = 9.8

[run]
h = 2e-3
t_end = 2.0
discretization = "midpoint"
constraint = "midpoint"

[initial]
{initial}
"#
    )
}

const SHORT_MODEL: &str = r#"coordinates = ["X", "Y", "Z"]
orientation = "so3"
constraints = [["0", "1", "0"]]"#;

const LONG_MODEL: &str = r#"coordinates = ["X", "Y", "Z", "qw", "qx", "qy", "qz"]
constraints = [["0", "1", "0", "0", "0", "0", "0"], ["0", "0", "0", "qw", "qx", "qy", "qz"]]"#;

/// The turn by `angle` about `axis` and `q̇ = ½ q ⊗ (0, ω)`, computed here.
fn quaternion_start(axis: [f64; 3], angle: f64, omega: [f64; 3]) -> ([f64; 4], [f64; 4]) {
    let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    let (s, c) = (0.5 * angle).sin_cos();
    let q = [c, s * axis[0] / n, s * axis[1] / n, s * axis[2] / n];
    let [w, x, y, z] = q;
    let [o1, o2, o3] = omega;
    let v = [
        -0.5 * (x * o1 + y * o2 + z * o3),
        0.5 * (w * o1 + y * o3 - z * o2),
        0.5 * (w * o2 + z * o1 - x * o3),
        0.5 * (w * o3 + x * o2 - y * o1),
    ];
    (q, v)
}

fn list(x: &[f64]) -> String {
    x.iter()
        .map(|x| format!("{x:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The final states of two runs are equal bit for bit.
fn same_final_state(a: &diracvi_run::RunOutcome, b: &diracvi_run::RunOutcome) {
    let pairs = a.final_q.iter().zip(&b.final_q);
    for (x, y) in pairs.chain(a.final_p.iter().zip(&b.final_p)) {
        assert_eq!(x.to_bits(), y.to_bits(), "{x} against {y}");
    }
}

fn outcome(sc: &Scenario) -> diracvi_run::RunOutcome {
    let steps = diracvi_run::step_count(sc, None).unwrap();
    execute(sc, RunPlan::new(steps), &mut Discard).unwrap()
}

/// `model.orientation = "so3"` is the quaternion chart written out: with
/// the same initial numbers, a file using it and its longhand twin run bit
/// for bit alike (impacts, final state, invariants).
#[test]
fn orientation_so3_runs_bit_for_bit_like_its_longhand() {
    let (q, v) = quaternion_start([0.6, 0.8, 0.0], 0.6, [1.0, 0.5, 3.0]);
    let initial = format!(
        "q = [0.0, 0.0, 0.5, {}]\nv = [0.3, 0.0, 0.0, {}]",
        list(&q),
        list(&v)
    );
    let short = Scenario::from_toml(&body(SHORT_MODEL, "", &initial)).unwrap();
    let defs = quaternion_definitions("qw", "qx", "qy", "qz");
    let long = Scenario::from_toml(&body(LONG_MODEL, &defs, &initial)).unwrap();
    assert_eq!(short.initial, long.initial);
    let (a, b) = (outcome(&short), outcome(&long));
    assert!(a.impacts.len() >= 2, "{} impacts", a.impacts.len());
    assert_eq!(a.impacts.len(), b.impacts.len());
    same_final_state(&a, &b);
    // |q| stays 1 and Y stays 0 (the padded row)
    let quat = &a.final_q[3..];
    let norm = quat.iter().map(|x| x * x).sum::<f64>().sqrt();
    assert!((norm - 1.0).abs() <= 1e-13, "|q| = {norm}");
    assert!(a.final_q[1].abs() <= 1e-13, "Y = {}", a.final_q[1]);
}

/// `initial.attitude` and `initial.omega` give the quaternion of a turn
/// about an axis (any length) and its velocity from the body angular
/// velocity: the same start as the numbers computed here, to round-off.
#[test]
fn initial_attitude_and_omega_give_the_quaternion_and_its_velocity() {
    let initial = r#"q = [0.0, 0.0, 0.5]
v = [0.3, 0.0, 0.0]
attitude = { axis = [3.0, 4.0, 0.0], angle = "0.2*3" }
omega = [1.0, "I1*25", 3.0]"#;
    let short = Scenario::from_toml(&body(SHORT_MODEL, "", initial)).unwrap();
    let (q, v) = quaternion_start([0.6, 0.8, 0.0], 0.6, [1.0, 0.5, 3.0]);
    for (a, b) in short.initial.q[3..].iter().zip(&q) {
        assert!((a - b).abs() <= 2e-16, "{a} against {b}");
    }
    for (a, b) in short.initial.v[3..].iter().zip(&v) {
        assert!((a - b).abs() <= 4e-16, "{a} against {b}");
    }
    // the bouncing cube's velocity numbers were this very start
    let cube = [
        -0.14776010333066977,
        0.8322924925564105,
        -0.027134063713804057,
        1.3591246820230742,
    ];
    for (a, b) in short.initial.v[3..].iter().zip(&cube) {
        assert!((a - b).abs() <= 4e-16, "{a} against {b}");
    }
    // no attitude: the identity, no omega: at rest
    let rest = Scenario::from_toml(&body(
        SHORT_MODEL,
        "",
        "q = [0.0, 0.0, 0.5]\nv = [0.0, 0.0, 0.0]",
    ))
    .unwrap();
    assert_eq!(rest.initial.q[3..], [1.0, 0.0, 0.0, 0.0]);
    assert_eq!(rest.initial.v[3..], [0.0; 4]);
}

/// The quaternion's coordinates may be named: the heavy top of
/// models/heavy-top.toml (coordinates `w, x, y, z`, written longhand) with
/// `orientation = { group = "so3", coordinates = [...] }` and no declared
/// coordinate runs bit for bit like the file.
#[test]
fn a_named_orientation_alone_is_the_heavy_top() {
    let path = format!("{}/../../models/heavy-top.toml", env!("CARGO_MANIFEST_DIR"));
    let long_text = std::fs::read_to_string(path).unwrap();
    let model_start = long_text.find("[model]").unwrap();
    let definitions = long_text.find("[definitions]").unwrap();
    let invariants = long_text.find("[invariants]").unwrap();
    let short_text = format!(
        "{}[model]
name = \"heavy-top\"
coordinates = []
orientation = {{ group = \"so3\", coordinates = [\"w\", \"x\", \"y\", \"z\"] }}
lagrangian = \"0.5*(i1*omega1^2 + i2*omega2^2 + i3*omega3^2) - m*g*l*(w^2 - x^2 - y^2 + z^2)\"
{}",
        &long_text[..model_start],
        &long_text[invariants..]
    );
    assert!(long_text[definitions..invariants].contains("omega1"));
    let short = Scenario::from_toml(&short_text).unwrap();
    let long = Scenario::from_model_file(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/heavy-top.toml"),
    )
    .unwrap();
    let (a, b) = (outcome(&short), outcome(&long));
    same_final_state(&a, &b);
}

/// What `model.orientation` refuses, each naming the key: an unknown
/// group, a name it defines taken by the file, a row of neither length,
/// `initial.attitude` with a `q` that lists the quaternion already, and
/// `initial.omega` without an orientation.
#[test]
fn orientation_refusals_name_the_key() {
    let ok_initial = "q = [0.0, 0.0, 0.5]\nv = [0.0, 0.0, 0.0]";
    let cases: Vec<(String, &[&str])> = vec![
        (
            body(&SHORT_MODEL.replace("so3", "so2"), "", ok_initial),
            &["model.orientation", "so3"],
        ),
        (
            body(SHORT_MODEL, "omega2 = \"1\"", ok_initial),
            &["definitions.omega2", "model.orientation"],
        ),
        (
            body(
                &SHORT_MODEL.replace(r#"[["0", "1", "0"]]"#, r#"[["0", "1", "0", "0"]]"#),
                "",
                ok_initial,
            ),
            &["model.constraints[0]", "3", "7", "found 4"],
        ),
        (
            body(
                SHORT_MODEL,
                "",
                "q = [0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0]\nv = [0.0, 0.0, 0.0]\nattitude = { axis = [0.0, 0.0, 1.0], angle = 1.0 }",
            ),
            &["initial.attitude", "exclusive", "initial.q"],
        ),
        (
            body(
                LONG_MODEL,
                &quaternion_definitions("qw", "qx", "qy", "qz"),
                "q = [0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0]\nv = [0.0; 7]\nomega = [1.0, 0.0, 0.0]"
                    .replace("[0.0; 7]", "[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]")
                    .as_str(),
            ),
            &["initial.omega", "model.orientation"],
        ),
    ];
    for (text, needles) in cases {
        let err = Scenario::from_toml(&text).unwrap_err();
        let message = err.to_string();
        for needle in needles {
            assert!(message.contains(needle), "{needle:?} not in: {message}");
        }
    }
}

/// The expressions of `initial.attitude` and `initial.omega` are checked
/// where they are written: an error names that key, not the entry of `q`
/// or `v` they become part of; a zero axis is refused.
#[test]
fn attitude_errors_name_the_attitude() {
    let cases: [(&str, &[&str]); 3] = [
        (
            r#"attitude = { axis = [0.0, 0.0, 1.0], angle = "I1*bad" }"#,
            &["initial.attitude.angle", "unknown name `bad`"],
        ),
        (r#"omega = [1.0, "2*", 0.0]"#, &["initial.omega[1]"]),
        (
            "attitude = { axis = [0, 0.0, 0], angle = 1.0 }",
            &["initial.attitude.axis", "must not be zero"],
        ),
    ];
    for (line, needles) in cases {
        let initial = format!("q = [0.0, 0.0, 0.5]\nv = [0.0, 0.0, 0.0]\n{line}");
        let err = Scenario::from_toml(&body(SHORT_MODEL, "", &initial)).unwrap_err();
        let message = err.to_string();
        for needle in needles {
            assert!(message.contains(needle), "{needle:?} not in: {message}");
        }
    }
    // checked by names only: no value is folded in before the parameters
    // are known (`I3 - 1` would be 0 with a placeholder value 1)
    let initial = "q = [0.0, 0.0, 0.5]\nv = [0.0, 0.0, 0.0]\nattitude = { axis = [0.0, 0.0, 1.0], angle = \"1/(I3 - 1)\" }";
    let sc = Scenario::from_toml(&body(SHORT_MODEL, "", initial)).unwrap();
    let expected = (0.5 / (0.04 - 1.0_f64)).cos();
    assert!(
        (sc.initial.q[3] - expected).abs() <= 1e-15,
        "{}",
        sc.initial.q[3]
    );
}
