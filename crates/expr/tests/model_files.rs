//! Model files: the sleigh and a double pendulum against the same models
//! written in Rust, overrides, the print/read round trip, and malformed
//! files with the key, line and column of each error.

use approx::assert_relative_eq;
use diracvi_expr::model_file::{CONSTRAINT_DISCRETIZATIONS, DISCRETIZATIONS, MAX_FILE_BYTES};
use diracvi_expr::{
    ExprErrorKind, InitialState, ModelFile, ModelFileError, ModelFileErrorKind, Position,
};
use diracvi_geometry::num_dual::{DualSVec64, HyperDualSVec64};
use diracvi_geometry::{AdScalar, SVector, ad};

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

// ---------------------------------------------------------------- the sleigh

/// The sleigh, written in Rust (`m = 1, I = 0.1, a = 0.3, R = 2`).
fn sleigh_l<S: AdScalar>(q: &[S], v: &[S]) -> S {
    let (m, inertia, a) = (1.0, 0.1, 0.3);
    (v[0] * v[0] + v[1] * v[1]) * (0.5 * m)
        + v[2] * v[2] * (0.5 * (inertia + m * a * a))
        + v[2] * (m * a) * (q[2].cos() * v[1] - q[2].sin() * v[0])
}

#[test]
fn sleigh_reads_with_every_field() {
    let file = ModelFile::from_path(data("sleigh.toml")).unwrap();
    assert_eq!(file.name, "sleigh");
    assert_eq!(file.description, "Chaplygin sleigh in a circular arena");
    assert_eq!(file.coordinates, ["x", "y", "theta"]);
    assert_eq!(file.velocity_names(), ["x_dot", "y_dot", "theta_dot"]);
    assert_eq!(file.momentum_names(), ["p_x", "p_y", "p_theta"]);
    assert_eq!(file.constraints, [["-sin(theta)", "cos(theta)", "0"]]);
    assert_eq!(file.boundaries, ["R^2 - x^2 - y^2"]);
    assert_eq!(file.hamiltonian, None, "an empty hamiltonian is none");
    let names: Vec<&str> = file.parameters.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["m", "I", "a", "R"], "file order");
    assert_relative_eq!(file.parameters[1].1, 0.1, epsilon = 1e-15);
    assert_eq!(file.run.h, Some(1e-3));
    assert_eq!(file.run.t_end, Some(20.0));
    assert_eq!(file.run.discretization.as_deref(), Some("midpoint"));
    assert_eq!(file.run.constraint.as_deref(), Some("midpoint"));
    let initial = file.initial.as_ref().unwrap();
    assert_eq!(*initial, InitialState::numbers(&[0.0; 3], &[1.0, 0.0, 0.5]));
    assert!(
        DISCRETIZATIONS.contains(&"forward") && CONSTRAINT_DISCRETIZATIONS.contains(&"retraction")
    );
}

/// The compiled sleigh against the Rust sleigh at a point, over `f64`
/// (1e-14 relative) and over the hyper-dual numbers of the steppers'
/// Jacobians (value, ∂L/∂q, ∂L/∂v, ∂²L/∂q∂v; 1e-14 absolute on entries of
/// order 1).
#[test]
fn sleigh_matches_the_rust_formula() {
    let model = ModelFile::from_path(data("sleigh.toml"))
        .unwrap()
        .compile(&[])
        .unwrap();
    assert_eq!((model.n(), model.m(), model.boundary_count()), (3, 1, 1));
    assert_eq!(model.parameter("a"), Some(0.3));
    for (q, v) in [
        ([0.3_f64, -0.2, 0.7], [1.0_f64, 0.4, 0.5]),
        ([-1.1, 0.5, -2.9], [-0.3, 2.0, -1.5]),
    ] {
        let l = model.lagrangian(&q, &v);
        assert_relative_eq!(l, sleigh_l(&q, &v), max_relative = 1e-14);
        // A(q) = (-sin θ, cos θ, 0), g = R² - x² - y²
        assert_relative_eq!(
            model.constraint(0, 0, &q),
            -q[2].sin(),
            max_relative = 1e-14
        );
        assert_relative_eq!(model.constraint(0, 1, &q), q[2].cos(), max_relative = 1e-14);
        assert_relative_eq!(model.constraint(0, 2, &q), 0.0, epsilon = 1e-15);
        assert_relative_eq!(
            model.boundary(0, &q),
            4.0 - q[0] * q[0] - q[1] * q[1],
            max_relative = 1e-14
        );
        // derivatives
        let qs = ad::seed_first::<3, 3>(&SVector::from(q));
        let vs = ad::seed_second::<3, 3>(&SVector::from(v));
        let tape = ad::partial_hessian_of(model.lagrangian(qs.as_slice(), vs.as_slice()));
        let rust = ad::partial_hessian_of(sleigh_l(qs.as_slice(), vs.as_slice()));
        assert_relative_eq!(tape.0, rust.0, max_relative = 1e-14);
        assert!((tape.1 - rust.1).amax() < 1e-14);
        assert!((tape.2 - rust.2).amax() < 1e-14);
        assert!((tape.3 - rust.3).amax() < 1e-14);
        let g = model.boundary(0, ad::seed_gradient(&SVector::from(q)).as_slice());
        assert!(
            (ad::gradient_of(g) - SVector::from([-2.0 * q[0], -2.0 * q[1], 0.0])).amax() < 1e-14
        );
    }
    // the zero entry is a known constant, and evaluates densely
    let zero = &model.constraint_exprs()[0][2];
    assert_eq!(zero.constant_value(), Some(0.0));
    let q = ad::seed_gradient(&SVector::from([0.1, 0.2, 0.3]));
    let a02: DualSVec64<3> = model.constraint(0, 2, q.as_slice());
    assert!(a02.eps.0.is_some());
    assert!(model.hamiltonian::<f64>(&[0.0; 3], &[0.0; 3]).is_none());
}

// ---------------------------------------------------------------- double pendulum

/// The double pendulum with a floor, written in Rust.
struct DoublePendulum {
    m1: f64,
    m2: f64,
    l1: f64,
    l2: f64,
    g: f64,
    d: f64,
}

impl DoublePendulum {
    /// `L = T - V`, angles from the downward vertical.
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        let Self {
            m1, m2, l1, l2, g, ..
        } = *self;
        v[0] * v[0] * (0.5 * (m1 + m2) * l1 * l1)
            + v[1] * v[1] * (0.5 * m2 * l2 * l2)
            + v[0] * v[1] * (q[0] - q[1]).cos() * (m2 * l1 * l2)
            + q[0].cos() * ((m1 + m2) * g * l1)
            + q[1].cos() * (m2 * g * l2)
    }

    /// Height of bob 2 above the floor `y = -d`.
    fn floor<S: AdScalar>(&self, q: &[S]) -> S {
        -(q[0].cos() * self.l1) - q[1].cos() * self.l2 + self.d
    }
}

#[test]
fn double_pendulum_matches_the_rust_formula() {
    let file = ModelFile::from_path(data("double_pendulum.toml")).unwrap();
    assert_eq!(file.coordinates, ["th1", "th2"]);
    assert!(file.constraints.is_empty());
    let model = file.compile(&[]).unwrap();
    assert_eq!((model.n(), model.m(), model.boundary_count()), (2, 0, 1));
    let rust = DoublePendulum {
        m1: 1.0,
        m2: 0.5,
        l1: 1.0,
        l2: 0.7,
        g: 9.81,
        d: 1.5,
    };
    for (q, v) in [([0.5, -0.3], [0.2, -1.0]), ([2.5, 1.0], [-3.0, 0.7])] {
        assert_relative_eq!(
            model.lagrangian(&q, &v),
            rust.lagrangian(&q, &v),
            max_relative = 1e-14
        );
        assert_relative_eq!(model.boundary(0, &q), rust.floor(&q), max_relative = 1e-14);
        let qs = ad::seed_first::<2, 2>(&SVector::from(q));
        let vs = ad::seed_second::<2, 2>(&SVector::from(v));
        let tape: HyperDualSVec64<2, 2> = model.lagrangian(qs.as_slice(), vs.as_slice());
        let (t0, t1, t2, t12) = ad::partial_hessian_of(tape);
        let (r0, r1, r2, r12) =
            ad::partial_hessian_of(rust.lagrangian(qs.as_slice(), vs.as_slice()));
        assert_relative_eq!(t0, r0, max_relative = 1e-14);
        assert!((t1 - r1).amax() < 1e-13 && (t2 - r2).amax() < 1e-14 && (t12 - r12).amax() < 1e-14);
        // second derivatives of the floor
        let h = ad::hessian_of(model.boundary(0, ad::seed_hessian(&SVector::from(q)).as_slice()));
        let hr = ad::hessian_of(rust.floor(ad::seed_hessian(&SVector::from(q)).as_slice()));
        assert!((h.1 - hr.1).amax() < 1e-14 && (h.2 - hr.2).amax() < 1e-14);
    }
}

#[test]
fn hamiltonian_and_overrides() {
    let src = r#"
[model]
name = "particle"
coordinates = ["x", "y"]
lagrangian = "0.5*m*(x_dot^2 + y_dot^2) - m*g*y"
boundaries = ["y"]
hamiltonian = "(p_x^2 + p_y^2)/(2*m) + m*g*y"
[parameters]
m = 2
g = 9.8
"#;
    let file = ModelFile::from_toml_str(src, "particle.toml").unwrap();
    assert_eq!(
        file.parameters,
        [("m".to_string(), 2.0), ("g".to_string(), 9.8)]
    );
    assert_eq!(file.run, Default::default());
    assert!(file.initial.is_none());
    let model = file.compile(&[]).unwrap();
    let (q, p) = ([0.5, 3.0], [1.0, -4.0]);
    assert_relative_eq!(
        model.hamiltonian(&q, &p).unwrap(),
        17.0 / 4.0 + 2.0 * 9.8 * 3.0,
        max_relative = 1e-15
    );
    // overrides: later entries win, the rest keep their file values
    let moon = file
        .compile(&[("g".into(), 9.8), ("g".into(), 1.62)])
        .unwrap();
    assert_eq!(moon.parameters()[1], ("g".to_string(), 1.62));
    assert_relative_eq!(
        moon.lagrangian(&q, &[0.0, 1.0]),
        1.0 - 2.0 * 1.62 * 3.0,
        max_relative = 1e-15
    );
    let e = file.compile(&[("G".into(), 1.0)]).unwrap_err();
    assert_eq!(e.key(), "parameters.G");
    assert_eq!(e.position(), None);
    assert_eq!(
        e.kind(),
        &ModelFileErrorKind::UnknownParameter {
            name: "G".into(),
            known: vec!["m".into(), "g".into()]
        }
    );
    assert_eq!(
        e.to_string(),
        "particle.toml: parameters.G: unknown parameter `G` (the model's parameters: m, g)"
    );
    let e = file.compile(&[("m".into(), f64::NAN)]).unwrap_err();
    assert!(matches!(e.kind(), ModelFileErrorKind::NonFinite { value } if value.is_nan()));
    // an override can make a constant subexpression non-finite: located in the file
    let e = file.compile(&[("m".into(), 0.0)]).unwrap_err();
    assert_eq!(e.key(), "model.hamiltonian");
    assert_eq!((e.line(), e.column()), (7, 32));
    assert!(matches!(
        e.kind(),
        ModelFileErrorKind::Expression(x) if x.kind == ExprErrorKind::DivisionByZero
    ));
    let e = file
        .compile(&[("g".into(), 1e300), ("m".into(), 1e10)])
        .unwrap_err();
    assert_eq!(e.key(), "model.lagrangian");
    assert!(matches!(
        e.kind(),
        ModelFileErrorKind::Expression(x) if matches!(x.kind, ExprErrorKind::NonFiniteConstant { .. })
    ));
}

// ---------------------------------------------------------------- round trip

#[test]
fn printing_and_reading_back_gives_the_same_model() {
    let tricky = r#"
model.name = "tricky \"one\""
model.description = '''a\b "quoted"
not really'''
model.coordinates = ["q"]
model.lagrangian = """
0.5*k*q_dot^2 -
  0.5*q^2"""
model.constraints = []
model.hamiltonian = "0.5*(p_q^2/k + q^2)"
parameters = { k = 3, big = 1.5e300, tiny = -2e-310, "z_9" = 0x10 }
run.t_end = 0
run.constraint = "retraction"
"#;
    for (source, path) in [
        (
            std::fs::read_to_string(data("sleigh.toml")).unwrap(),
            "sleigh.toml",
        ),
        (
            std::fs::read_to_string(data("double_pendulum.toml")).unwrap(),
            "dp.toml",
        ),
        (tricky.to_owned(), "tricky.toml"),
    ] {
        let file = ModelFile::from_toml_str(&source, path).unwrap();
        let printed = file.to_toml_string();
        let again = ModelFile::from_toml_str(&printed, "printed.toml")
            .unwrap_or_else(|e| panic!("{e}\n{printed}"));
        assert_eq!(again, file, "{printed}");
        assert_eq!(again.to_toml_string(), printed, "printing is stable");
        // and the numbers are bit-identical
        for ((_, a), (_, b)) in file.parameters.iter().zip(&again.parameters) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
    }
    let file = ModelFile::from_toml_str(tricky, "tricky.toml").unwrap();
    assert_eq!(file.name, "tricky \"one\"");
    assert_eq!(file.description, "a\\b \"quoted\"\nnot really");
    assert_eq!(file.parameters[3], ("z_9".to_string(), 16.0));
    assert_eq!(file.run.t_end, Some(0.0));
    let printed = file.to_toml_string();
    assert!(
        printed.starts_with("[model]\nname = \"tricky \\\"one\\\"\"\n"),
        "{printed}"
    );
}

// ---------------------------------------------------------------- malformed files

/// A small valid model; the malformed cases change one line of it.
///
/// ```text
///  1 [model]
///  2 name = "m"
///  3 coordinates = ["x", "y", "theta"]
///  4 lagrangian = "0.5*m*(x_dot^2 + y_dot^2)"
///  5 constraints = [["-sin(theta)", "cos(theta)", "0"]]
///  6 boundaries = []
///  7 [parameters]
///  8 m = 1.0
///  9 [initial]
/// 10 q = [0.0, 0.0, 0.0]
/// 11 v = [1.0, 0.0, 0.5]
/// ```
const BASE: &str = r#"[model]
name = "m"
coordinates = ["x", "y", "theta"]
lagrangian = "0.5*m*(x_dot^2 + y_dot^2)"
constraints = [["-sin(theta)", "cos(theta)", "0"]]
boundaries = []
[parameters]
m = 1.0
[initial]
q = [0.0, 0.0, 0.0]
v = [1.0, 0.0, 0.5]
"#;

/// `BASE` with line `line` (1-based) replaced.
fn with_line(line: usize, text: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    lines[line - 1] = text;
    lines.join("\n") + "\n"
}

fn fails(source: &str) -> ModelFileError {
    match ModelFile::from_toml_str(source, "bad.toml") {
        Ok(_) => panic!("read:\n{source}"),
        Err(e) => e,
    }
}

fn located(e: &ModelFileError) -> (&str, usize, usize) {
    (e.key(), e.line(), e.column())
}

#[test]
fn the_base_model_is_valid() {
    let model = ModelFile::from_toml_str(BASE, "base.toml").unwrap();
    assert_eq!(model.n(), 3);
}

#[test]
fn toml_syntax_error() {
    let e = fails(&with_line(3, r#"coordinates = ["x", "y" "theta"]"#));
    assert_eq!(located(&e), ("", 3, 25));
    assert!(matches!(e.kind(), ModelFileErrorKind::Syntax(_)));
    assert!(
        e.to_string()
            .starts_with("bad.toml:3:25: TOML syntax error: "),
        "{e}"
    );
    let e = fails(&with_line(8, "m = 1.0.0"));
    assert_eq!((e.line(), e.column()), (8, 8));
}

#[test]
fn unknown_key() {
    let e = fails(&with_line(6, "boundary = []"));
    assert_eq!(located(&e), ("model.boundary", 6, 1));
    assert!(
        matches!(e.kind(), ModelFileErrorKind::UnknownKey { allowed } if allowed.contains(&"boundaries"))
    );
    let e = fails(&(BASE.to_owned() + "[solver]\ntol = 1e-9\n"));
    assert_eq!(located(&e), ("solver", 12, 2));
    let e = fails(&with_line(11, "v = [1.0, 0.0, 0.5]\nw = 1"));
    assert_eq!(located(&e), ("initial.w", 12, 1));
}

#[test]
fn wrong_constraint_row_length() {
    let e = fails(&with_line(
        5,
        r#"constraints = [["-sin(theta)", "cos(theta)"]]"#,
    ));
    assert_eq!(located(&e), ("model.constraints[0]", 5, 16));
    assert_eq!(
        e.kind(),
        &ModelFileErrorKind::WrongLength {
            expected: 3,
            found: 2
        }
    );
    assert_eq!(
        e.to_string(),
        "bad.toml:5:16: model.constraints[0]: expected 3 entries (one per coordinate), found 2"
    );
}

#[test]
fn unknown_name_in_an_expression_points_at_the_character() {
    let e = fails(&with_line(
        4,
        r#"lagrangian = "0.5*m*(x_dot^2 + y_dot^2) + thta""#,
    ));
    assert_eq!(located(&e), ("model.lagrangian", 4, 43));
    match e.kind() {
        ModelFileErrorKind::Expression(x) => {
            assert_eq!(x.column, 29);
            assert_eq!(
                x.kind,
                ExprErrorKind::UnknownName {
                    name: "thta".into(),
                    suggestion: Some("theta".into())
                }
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        e.to_string(),
        "bad.toml:4:43: model.lagrangian: unknown name `thta` (did you mean `theta`?) (column 29 of the expression)"
    );
    // a literal string
    let e = fails(&with_line(4, "lagrangian = '0.5*m + thta'"));
    assert_eq!(located(&e), ("model.lagrangian", 4, 23));
    // an escape before the error: `\u0030` is one character of the expression
    let e = fails(&with_line(4, r#"lagrangian = "\u0030.5*m + thta""#));
    assert_eq!(located(&e), ("model.lagrangian", 4, 28));
    // a multi-line string: the error is on the string's third line
    let e = fails(&with_line(
        4,
        "lagrangian = \"\"\"\n0.5*m*x_dot^2\n  + sin(theta, x)\"\"\"",
    ));
    assert_eq!(located(&e), ("model.lagrangian", 6, 5));
    assert!(
        matches!(e.kind(), ModelFileErrorKind::Expression(x) if matches!(x.kind, ExprErrorKind::Arity { .. }))
    );
    // the end of an expression is its closing quote
    let e = fails(&with_line(
        5,
        r#"constraints = [["-sin(theta)", "cos(theta)", "0 +"]]"#,
    ));
    assert_eq!(located(&e), ("model.constraints[0][2]", 5, 50));
    // velocities are not in scope for constraints
    let e = fails(&with_line(5, r#"constraints = [["x_dot", "0", "0"]]"#));
    assert_eq!(located(&e), ("model.constraints[0][0]", 5, 18));
}

#[test]
fn non_finite_parameter() {
    let e = fails(&with_line(8, "m = inf"));
    assert_eq!(located(&e), ("parameters.m", 8, 5));
    assert!(matches!(e.kind(), ModelFileErrorKind::NonFinite { value } if value.is_infinite()));
    let e = fails(&with_line(8, "m = -nan"));
    assert_eq!(located(&e), ("parameters.m", 8, 5));
    // a string is an expression: an unknown name in it is located inside it
    let e = fails(&with_line(8, "m = \"heavy\""));
    assert_eq!(located(&e), ("parameters.m", 8, 6));
    assert!(matches!(
        e.kind(),
        ModelFileErrorKind::Expression(x) if matches!(&x.kind, ExprErrorKind::UnknownName { name, .. } if name == "heavy")
    ));
    let e = fails(&with_line(8, "m = true"));
    assert_eq!(located(&e), ("parameters.m", 8, 5));
    assert_eq!(
        e.kind(),
        &ModelFileErrorKind::WrongType {
            expected: "a number or a string (an expression)",
            found: "boolean"
        }
    );
}

#[test]
fn wrong_initial_length() {
    let e = fails(&with_line(10, "q = [0.0, 0.0]"));
    assert_eq!(located(&e), ("initial.q", 10, 5));
    assert_eq!(
        e.kind(),
        &ModelFileErrorKind::WrongLength {
            expected: 3,
            found: 2
        }
    );
    let e = fails(&with_line(11, "v = [1.0, nan, 0.5]"));
    assert_eq!(located(&e), ("initial.v[1]", 11, 11));
    let e = fails(&with_line(11, "# no v"));
    assert_eq!(located(&e), ("initial.v", 9, 1));
    assert_eq!(e.kind(), &ModelFileErrorKind::Missing);
}

#[test]
fn schema_and_name_errors() {
    // missing required key: the table's header
    let e = fails(&with_line(4, "# no lagrangian"));
    assert_eq!(located(&e), ("model.lagrangian", 1, 1));
    // missing [model]
    let e = fails("[parameters]\nm = 1\n");
    assert_eq!((e.key(), e.position()), ("model", None));
    // wrong types
    let e = fails(&with_line(3, r#"coordinates = "x""#));
    assert_eq!(located(&e), ("model.coordinates", 3, 15));
    let e = fails(&with_line(3, r#"coordinates = ["x", 2, "theta"]"#));
    assert_eq!(located(&e), ("model.coordinates[1]", 3, 21));
    let e = fails(&with_line(3, "coordinates = []"));
    assert_eq!(
        (located(&e), e.kind()),
        (("model.coordinates", 3, 15), &ModelFileErrorKind::Empty)
    );
    // names
    let e = fails(&with_line(3, r#"coordinates = ["x", "sin", "theta"]"#));
    assert_eq!(located(&e), ("model.coordinates[1]", 3, 21));
    assert!(matches!(e.kind(), ModelFileErrorKind::InvalidName { .. }));
    let e = fails(&with_line(3, r#"coordinates = ["x", "y", "x"]"#));
    assert_eq!(located(&e), ("model.coordinates[2]", 3, 26));
    assert_eq!(
        e.kind(),
        &ModelFileErrorKind::Duplicate { name: "x".into() }
    );
    let e = fails(&with_line(3, r#"coordinates = ["x", "x_dot", "theta"]"#));
    assert_eq!(located(&e), ("model.coordinates[1]", 3, 21));
    assert!(matches!(e.kind(), ModelFileErrorKind::NameClash { name, .. } if name == "x_dot"));
    let e = fails(&with_line(3, r#"coordinates = ["x_dot", "x", "theta"]"#));
    assert_eq!(located(&e), ("model.coordinates[1]", 3, 25));
    let e = fails(&with_line(3, r#"coordinates = ["x", "y", "2theta"]"#));
    assert_eq!(located(&e), ("model.coordinates[2]", 3, 26));
    let e = fails(&with_line(8, "theta_dot = 1.0"));
    assert_eq!(located(&e), ("parameters.theta_dot", 8, 1));
    assert!(matches!(e.kind(), ModelFileErrorKind::NameClash { .. }));
    let e = fails(&with_line(8, "pi = 3.0"));
    assert_eq!(located(&e), ("parameters.pi", 8, 1));
    // run settings
    let run = |line: &str| fails(&(BASE.to_owned() + "[run]\n" + line + "\n"));
    let e = run("h = 0");
    assert_eq!(located(&e), ("run.h", 13, 5));
    assert!(matches!(e.kind(), ModelFileErrorKind::OutOfRange { .. }));
    let e = run("t_end = -1.0");
    assert_eq!(located(&e), ("run.t_end", 13, 9));
    let e = run("h = inf");
    assert!(matches!(e.kind(), ModelFileErrorKind::NonFinite { .. }));
    let e = run("discretization = \"euler\"");
    assert_eq!(located(&e), ("run.discretization", 13, 18));
    assert_eq!(
        e.to_string(),
        "bad.toml:13:18: run.discretization: `euler` is not one of: forward, midpoint"
    );
    let e = run("constraint = true");
    assert!(matches!(
        e.kind(),
        ModelFileErrorKind::WrongType {
            found: "boolean",
            ..
        }
    ));
    // a tolerance instead of a step: finite, > 0, never with `h`
    let e = run("tol = 0");
    assert_eq!(located(&e), ("run.tol", 13, 7));
    assert!(matches!(e.kind(), ModelFileErrorKind::OutOfRange { .. }));
    let e = run("tol = nan");
    assert!(matches!(e.kind(), ModelFileErrorKind::NonFinite { .. }));
    let e = fails(&(BASE.to_owned() + "[run]\ntol = 1e-8\nh = 1e-3\n"));
    assert_eq!(located(&e), ("run.tol", 13, 7));
    assert_eq!(
        e.kind(),
        &ModelFileErrorKind::Exclusive {
            other: "run.h",
            reason: "give the step, or the tolerance diracvi chooses the step for"
        }
    );
    assert!(
        e.to_string()
            .starts_with("bad.toml:13:7: run.tol: exclusive with `run.h`"),
        "{e}"
    );
    let file =
        ModelFile::from_toml_str(&(BASE.to_owned() + "[run]\ntol = 1e-8\n"), "ok.toml").unwrap();
    assert_eq!((file.run.tol, file.run.h), (Some(1e-8), None));
    let printed = file.to_toml_string();
    assert!(printed.contains("\n[run]\ntol = 1e-8\n"), "{printed}");
    assert_eq!(
        ModelFile::from_toml_str(&printed, "again.toml").unwrap(),
        file
    );
}

#[test]
fn files_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    // too large: rejected before reading
    let big = dir.path().join("big.toml");
    std::fs::write(&big, vec![b'#'; MAX_FILE_BYTES as usize + 1]).unwrap();
    let e = ModelFile::from_path(&big).unwrap_err();
    assert_eq!(
        e.kind(),
        &ModelFileErrorKind::TooLarge {
            bytes: MAX_FILE_BYTES + 1,
            limit: MAX_FILE_BYTES
        }
    );
    assert!(e.path().ends_with("big.toml"));
    // missing, not UTF-8
    let e = ModelFile::from_path(dir.path().join("none.toml")).unwrap_err();
    assert!(matches!(e.kind(), ModelFileErrorKind::Io(_)));
    let binary = dir.path().join("binary.toml");
    std::fs::write(&binary, b"[model]\nname = \"\xff\"\n").unwrap();
    assert!(
        matches!(ModelFile::from_path(&binary).unwrap_err().kind(), ModelFileErrorKind::Io(m) if m.contains("UTF-8"))
    );
    // errors name the path as given
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, with_line(8, "m = inf")).unwrap();
    let e = ModelFile::from_path(&bad).unwrap_err();
    assert_eq!(e.path(), bad.display().to_string());
    assert_eq!(e.position(), Some(Position { line: 8, column: 5 }));
}

/// Random edits of a valid file (deleting, duplicating or inserting
/// characters) never panic, and every error position lies inside the file.
#[test]
fn random_edits_never_panic() {
    let inserts: Vec<char> = "[]{}\"'=,.\n #\\x0-+*^()eu".chars().collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) as usize) % n
    };
    let base: Vec<char> = BASE.chars().collect();
    let mut ok = 0;
    for _ in 0..3000 {
        let mut text = base.clone();
        for _ in 0..1 + next(3) {
            let at = next(text.len());
            match next(3) {
                0 => {
                    text.remove(at);
                }
                1 => text.insert(at, text[at]),
                _ => text.insert(at, inserts[next(inserts.len())]),
            }
        }
        let source: String = text.into_iter().collect();
        match ModelFile::from_toml_str(&source, "edit.toml") {
            Ok(file) => {
                ok += 1;
                let again = ModelFile::from_toml_str(&file.to_toml_string(), "again.toml").unwrap();
                assert_eq!(again, file);
            }
            Err(e) => {
                if let Some(p) = e.position() {
                    let lines = source.lines().count().max(1);
                    assert!(p.line >= 1 && p.line <= lines + 1, "{e}\n{source}");
                    assert!(p.column >= 1, "{e}");
                }
                assert!(!e.to_string().is_empty());
            }
        }
    }
    assert!(ok > 50, "only {ok} edited files read");
}

/// `[invariants]`: named expressions over `q`, `v` and the parameters,
/// compiled and evaluated in file order, printed back and read again;
/// a bad expression or name is reported at its key.
#[test]
fn invariants_table() {
    let source =
        format!("{BASE}[invariants]\nmomentum = \"m*x_dot\"\nspin = \"theta*y_dot + 2\"\n");
    let file = ModelFile::from_toml_str(&source, "inv.toml").unwrap();
    assert_eq!(
        file.invariants,
        [
            ("momentum".to_owned(), "m*x_dot".to_owned()),
            ("spin".to_owned(), "theta*y_dot + 2".to_owned())
        ]
    );
    let compiled = file.compile(&[("m".to_owned(), 3.0)]).unwrap();
    assert_eq!(
        compiled.invariant_names().collect::<Vec<_>>(),
        ["momentum", "spin"]
    );
    let (q, v) = ([0.0, 0.0, 0.5], [2.0, 4.0, 0.0]);
    assert_relative_eq!(compiled.invariant(0, &q, &v), 6.0, epsilon = 1e-15);
    assert_relative_eq!(compiled.invariant(1, &q, &v), 4.0, epsilon = 1e-15);
    let printed = file.to_toml_string();
    assert!(
        printed.contains("[invariants]\nmomentum = \"m*x_dot\"\n"),
        "{printed}"
    );
    assert_eq!(
        ModelFile::from_toml_str(&printed, "again.toml").unwrap(),
        file
    );
    let e = fails(&format!("{BASE}[invariants]\nmomentum = \"m*p_x\"\n"));
    assert_eq!(e.key(), "invariants.momentum", "{e}");
    let e = fails(&format!("{BASE}[invariants]\n2x = \"m\"\n"));
    assert_eq!(e.key(), "invariants.2x", "{e}");
}

/// `[forces]` and `model.drives` (docs/model-files.md "Forces and drives"):
/// read, compiled over `t` and the parameters, evaluated as the Lagrangian's
/// `Σ F_i(t) q_i` and the drives' `g(t)`, `ġ(t)` (the rate by reverse mode),
/// and written back.
#[test]
fn forces_and_drives_are_read_compiled_and_written_back() {
    let text = r#"
[model]
name = "driven"
coordinates = ["x", "y"]
lagrangian = "0.5*(x_dot^2 + y_dot^2)"
constraints = [["1", "-1"]]
drives = ["a*sin(w*t)"]

[forces]
y = "F*t^2"

[parameters]
a = 0.3
w = 2.0
F = 1.5
"#;
    let file = ModelFile::from_toml_str(text, "d.toml").unwrap();
    assert_eq!(file.forces, vec![("y".to_owned(), "F*t^2".to_owned())]);
    assert_eq!(file.drives, vec!["a*sin(w*t)".to_owned()]);
    let model = file.compile(&[]).unwrap();
    assert!(model.time_dependent());
    let (q, v) = ([0.5, -2.0], [1.0, 3.0]);
    let t = 0.7;
    let expected = 0.5 * (1.0 + 9.0) + 1.5 * t * t * -2.0;
    assert_relative_eq!(
        model.lagrangian_at(&q, &v, t),
        expected,
        max_relative = 1e-15
    );
    assert_relative_eq!(model.lagrangian(&q, &v), 5.0, max_relative = 1e-15);
    let (mut g, mut rate) = ([0.0], [0.0]);
    assert!(model.constraint_drive(t, &mut g, &mut rate));
    assert_relative_eq!(g[0], 0.3 * (2.0 * t).sin(), max_relative = 1e-15);
    assert_relative_eq!(rate[0], 0.6 * (2.0 * t).cos(), max_relative = 1e-15);
    let back = ModelFile::from_toml_str(&file.to_toml_string(), "back.toml").unwrap();
    assert_eq!(back.forces, file.forces);
    assert_eq!(back.drives, file.drives);
    // A force on a name that is not a coordinate, and drives that do not
    // match the rows, are refused with their keys.
    let e = ModelFile::from_toml_str(&text.replace("y = \"F", "z = \"F"), "d.toml").unwrap_err();
    assert!(e.to_string().contains("forces.z"), "{e}");
    let e = ModelFile::from_toml_str(
        &text.replace("drives = [\"a*sin(w*t)\"]", "drives = []"),
        "d.toml",
    )
    .unwrap_err();
    assert!(e.to_string().contains("model.drives"), "{e}");
    let plain =
        ModelFile::from_toml_str(&text.replace("drives = [\"a*sin(w*t)\"]\n", ""), "p.toml")
            .unwrap()
            .compile(&[])
            .unwrap();
    assert!(
        plain.time_dependent(),
        "forces alone make it time-dependent"
    );
}

/// With more than 8 coordinates the Lagrangian is evaluated term by term
/// (docs/theory.md §11.4); each force joins the first term holding its
/// coordinate, so the terms at time `t` sum to `L(q, v, t)` with the forces
/// (to 1e-13 at a point of a 10-mass chain with forces on three masses).
#[test]
fn forces_join_the_terms_of_a_large_lagrangian() {
    let k = 10;
    let coordinates: Vec<String> = (1..=k).map(|i| format!("\"x{i}\"")).collect();
    let kinetic: Vec<String> = (1..=k).map(|i| format!("x{i}_dot^2")).collect();
    let springs: Vec<String> = (1..k)
        .map(|i| format!("(x{} - x{i} - 1)^2", i + 1))
        .collect();
    let text = format!(
        "[model]\nname = \"chain\"\ncoordinates = [{}]\nlagrangian = \"0.5*({}) - 0.5*c*({})\"\n\n\
         [forces]\nx1 = \"sin(t)\"\nx5 = \"2*cos(3*t)\"\nx10 = \"c*t\"\n\n[parameters]\nc = 2.0\n",
        coordinates.join(", "),
        kinetic.join(" + "),
        springs.join(" + ")
    );
    let model = ModelFile::from_toml_str(&text, "chain.toml")
        .unwrap()
        .compile(&[])
        .unwrap();
    let terms = model
        .lagrangian_terms()
        .expect("a chain of 10 is split into terms");
    let q: Vec<f64> = (0..k)
        .map(|i| i as f64 * 1.1 + 0.05 * (i as f64).sin())
        .collect();
    let v: Vec<f64> = (0..k).map(|i| (0.7 * i as f64).cos()).collect();
    let t = 0.9;
    let sum: f64 = (0..terms.len())
        .map(|e| {
            let s = terms.stencil(e);
            let (qs, vs): (Vec<f64>, Vec<f64>) = s.iter().map(|&i| (q[i], v[i])).unzip();
            model.lagrangian_term_at(e, &qs, &vs, t)
        })
        .sum();
    let whole = model.lagrangian_at(&q, &v, t);
    assert!(
        (sum - whole).abs() <= 1e-13 * whole.abs().max(1.0),
        "{sum} vs {whole}"
    );
    let forces = 0.9_f64.sin() * q[0] + 2.0 * 2.7_f64.cos() * q[4] + 2.0 * t * q[9];
    assert!((whole - model.lagrangian(&q, &v) - forces).abs() <= 1e-13);
}
