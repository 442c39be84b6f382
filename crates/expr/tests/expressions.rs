//! Expressions: parsing, precedence, values, derivatives by AD against
//! finite differences, errors with their columns, robustness.

use approx::assert_relative_eq;
use diracvi_expr::{Expr, ExprError, ExprErrorKind, Scope, ScopeError};
use diracvi_geometry::num_dual::{Dual2_64, Dual64, DualSVec64, HyperDual64};
use diracvi_geometry::{SVector, ad};
use std::f64::consts::PI;

/// Variables `x, y` (slots 0, 1); parameters `a = 2`, `b = -0.5`.
fn scope() -> Scope {
    let mut s = Scope::with_variables(["x", "y"]).unwrap();
    s.add_parameter("a", 2.0).unwrap();
    s.add_parameter("b", -0.5).unwrap();
    s
}

fn compile(src: &str) -> Expr {
    Expr::compile(src, &scope()).unwrap_or_else(|e| panic!("`{src}`: {e}"))
}

fn value(src: &str, x: f64, y: f64) -> f64 {
    compile(src).eval(&[x, y])
}

fn error(src: &str) -> ExprError {
    match Expr::compile(src, &scope()) {
        Ok(_) => panic!("`{src}` compiled"),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------- syntax

#[test]
fn precedence_and_associativity() {
    // (source, expected) with x = 3, y = 0.5; exact in binary floating point
    // or to 1 ulp, asserted to 1e-15 relative
    let cases: &[(&str, f64)] = &[
        ("1 + 2 * 3", 7.0),
        ("(1 + 2) * 3", 9.0),
        ("10 - 4 - 3", 3.0),
        ("2 * 3 / 4", 1.5),
        ("12 / 3 / 2", 2.0),
        ("2 ^ 3 ^ 2", 512.0),
        ("(2 ^ 3) ^ 2", 64.0),
        ("-x^2", -9.0),
        ("(-x)^2", 9.0),
        ("-2^2", -4.0),
        ("2^-1", 0.5),
        ("2^-x", 0.125),
        ("x^-2^-1", 3f64.powf(-0.5)),
        ("--x", 3.0),
        ("+x - -y", 3.5),
        ("-x * y", -1.5),
        ("x - y*2 + 1", 3.0),
        ("x / y / 2", 3.0),
        ("2*x^2 - 3*x + 1", 10.0),
        ("a*x + b", 5.5),
        ("1e-3 * 1000", 1.0),
        ("2.5e+1 + .5 + 3.", 28.5),
        ("pi", PI),
        ("x^0", 1.0),
        ("x^1", 3.0),
        ("x^0.5", 3f64.sqrt()),
        ("x^1.5", 3f64.powf(1.5)),
        ("a^x", 8.0),
        ("x^y", 3f64.powf(0.5)),
        ("1 - x", -2.0),
        ("6 / x", 2.0),
        ("x * (y + 1) * 2", 9.0),
        ("min(x, y) + max(x, y)", 3.5),
        ("min(x, 1) + max(0, y) + min(5, x)", 4.5),
        ("abs(y - x)", 2.5),
        ("sqrt(x*x + 16)", 5.0),
        ("exp(log(x))", 3.0),
        ("atan2(y, x)", 0.5f64.atan2(3.0)),
        ("atan2(1, x)", 1f64.atan2(3.0)),
        ("tan(y) - sin(y)/cos(y)", 0.0),
        ("sin(x)^2 + cos(x)^2", 1.0),
        ("  x\t*\n y ", 1.5),
    ];
    for &(src, expected) in cases {
        let got = value(src, 3.0, 0.5);
        assert_relative_eq!(got, expected, max_relative = 1e-15, epsilon = 1e-15);
    }
}

#[test]
fn parameters_fold_to_constants() {
    let e = compile("0.5 * a * a^2 - b");
    assert_eq!(e.constant_value(), Some(4.5));
    assert_eq!(e.tape_len(), 0);
    // not constant, but the parameter product is one immediate
    let e = compile("a * b * x");
    assert!(e.constant_value().is_none());
    assert_eq!(e.tape_len(), 2);
    assert_relative_eq!(e.eval(&[3.0, 0.0]), -3.0, max_relative = 1e-15);
    // a recompiled scope bakes in the new value
    let mut s = scope();
    s = {
        let mut t = Scope::with_variables(s.variables()).unwrap();
        t.add_parameter("a", 10.0).unwrap();
        t.add_parameter("b", 1.0).unwrap();
        t
    };
    assert_relative_eq!(
        Expr::compile("a * b * x", &s).unwrap().eval(&[3.0, 0.0]),
        30.0,
        max_relative = 1e-15
    );
}

#[test]
fn constant_results_carry_dense_zero_derivatives() {
    let e = compile("a - 2");
    assert_eq!(e.constant_value(), Some(0.0));
    let q = ad::seed_gradient(&SVector::from([0.3, 0.7]));
    let r = e.eval(q.as_slice());
    assert!(r.eps.0.is_some(), "derivative part must be present");
    assert_eq!(ad::gradient_of(r), SVector::<f64, 2>::zeros());
    assert_relative_eq!(r.re, 0.0, epsilon = 1e-15);
    // with no variable at all, S::from(c)
    let none = Expr::compile("1 + 1", &Scope::new()).unwrap();
    assert_relative_eq!(none.eval::<f64>(&[]), 2.0, epsilon = 1e-15);
    // a constant argument of atan2 is built densely too
    let e = compile("atan2(1, x)");
    let r = e.eval(q.as_slice());
    assert!(r.eps.0.is_some());
    // d/dx atan2(1, x) = -1 / (1 + x²)
    assert_relative_eq!(ad::gradient_of(r)[0], -1.0 / 1.09, max_relative = 1e-15);
}

#[test]
fn eval_split_matches_eval() {
    let e = compile("x * sin(y) + y^3 / x");
    let (x, y) = (1.3_f64, -0.4_f64);
    let whole = e.eval(&[x, y]);
    assert_relative_eq!(e.eval_split(&[x], &[y]), whole, max_relative = 1e-15);
    assert_relative_eq!(e.eval_split(&[], &[x, y]), whole, max_relative = 1e-15);
    assert_relative_eq!(e.eval_split(&[x, y], &[]), whole, max_relative = 1e-15);
    assert_relative_eq!(whole, x * y.sin() + y.powi(3) / x, max_relative = 1e-15);
}

#[test]
fn shared_sin_cos_give_the_separate_values() {
    // sin/cos of the same variable are computed once (sin_cos) and reused
    let e = compile("cos(x)*y - sin(x)*x + sin(x)*cos(x) + cos(y)^2 + sin(y)");
    for &(x, y) in &[(0.3_f64, 1.1_f64), (-2.0, 0.0), (4.0, -3.0)] {
        let expected = x.cos() * y - x.sin() * x + x.sin() * x.cos() + y.cos().powi(2) + y.sin();
        assert_relative_eq!(e.eval(&[x, y]), expected, max_relative = 1e-14);
        let g = ad::gradient_of(e.eval(ad::seed_gradient(&SVector::from([x, y])).as_slice()));
        let dx = -x.sin() * y - x.cos() * x - x.sin() + (x.cos().powi(2) - x.sin().powi(2));
        let dy = x.cos() - 2.0 * y.cos() * y.sin() + y.cos();
        assert_relative_eq!(g[0], dx, max_relative = 1e-13, epsilon = 1e-15);
        assert_relative_eq!(g[1], dy, max_relative = 1e-13, epsilon = 1e-15);
    }
}

#[test]
fn abs_min_max_branch_on_the_real_part() {
    let d =
        |src: &str, x: f64| compile(src).eval(&[Dual64::from(x).derivative(), Dual64::from(0.0)]);
    assert_relative_eq!(d("abs(x)", -2.0).eps, -1.0, epsilon = 1e-15);
    assert_relative_eq!(d("abs(x)", 2.0).eps, 1.0, epsilon = 1e-15);
    assert_relative_eq!(d("min(x, 1)", 0.5).eps, 1.0, epsilon = 1e-15);
    assert_relative_eq!(d("min(x, 1)", 1.5).eps, 0.0, epsilon = 1e-15);
    assert_relative_eq!(d("max(x, 1)", 1.5).eps, 1.0, epsilon = 1e-15);
    assert_relative_eq!(d("max(2*x, x + 1)", 3.0).eps, 2.0, epsilon = 1e-15);
    assert_relative_eq!(d("max(2*x, x + 1)", 0.0).eps, 1.0, epsilon = 1e-15);
    assert_relative_eq!(d("min(2*x, x + 1)", 0.0).eps, 2.0, epsilon = 1e-15);
    assert_relative_eq!(d("min(x, 1)", 1.5).re, 1.0, epsilon = 1e-15);
}

// ---------------------------------------------------------------- derivatives

/// Central difference of `f` at `x`.
fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-6 * x.abs().max(1.0);
    (f(x + h) - f(x - h)) / (2.0 * h)
}

/// First derivatives by `Dual64` against central differences (relative 1e-7,
/// absolute floor 1e-8 where the derivative vanishes) for every function
/// and every lowering of `^`, at several points each.
#[test]
fn first_derivatives_match_finite_differences() {
    let single = Scope::with_variables(["x"]).unwrap();
    let cases: &[(&str, &[f64])] = &[
        ("sqrt(x)", &[0.3, 1.0, 7.5]),
        ("sin(x)", &[-2.0, 0.1, 3.0]),
        ("cos(x)", &[-2.0, 0.1, 3.0]),
        ("tan(x)", &[-1.2, 0.1, 1.0]),
        ("exp(x)", &[-3.0, 0.0, 2.5]),
        ("log(x)", &[0.2, 1.0, 40.0]),
        ("abs(x)", &[-1.5, 0.7]),
        ("min(x, x^2)", &[0.5, 2.0]),
        ("max(x, x^2)", &[0.5, 2.0]),
        ("min(x, 1.25)", &[0.5, 2.0]),
        ("max(1.25, x)", &[0.5, 2.0]),
        ("atan2(x, 2)", &[-3.0, 0.5]),
        ("atan2(2, x)", &[-3.0, 0.5]),
        ("x^2", &[-1.5, 0.3]),
        ("x^3", &[-1.5, 0.3]),
        ("x^-2", &[-1.5, 0.3]),
        ("x^0.5", &[0.4, 2.0]),
        ("x^2.7", &[0.4, 2.0]),
        ("x^-1.3", &[0.4, 2.0]),
        ("2.5^x", &[-1.0, 0.5, 2.0]),
        ("x^x", &[0.5, 1.7]),
        ("x^0 + x^1", &[-2.0, 3.0]),
        ("3 / x", &[-2.0, 0.25]),
        ("1 - x", &[0.0, 5.0]),
        ("x / (1 + x^2)", &[-1.0, 0.3]),
        ("sin(x)*cos(x) - sin(2*x)/2 + cos(x)^3", &[0.2, 1.9]),
        ("exp(-x^2/2) * log(1 + x^2)", &[-1.1, 0.6]),
    ];
    for &(src, points) in cases {
        let e = Expr::compile(src, &single).unwrap();
        for &x in points {
            let ad = e.eval(&[Dual64::from(x).derivative()]);
            let fd = central(|t| e.eval(&[t]), x);
            assert_relative_eq!(ad.re, e.eval(&[x]), max_relative = 1e-15);
            assert_relative_eq!(ad.eps, fd, max_relative = 1e-7, epsilon = 1e-8);
        }
    }
}

/// `atan2(y, x)` in all four quadrants and on the axes: value against
/// `f64::atan2` (1e-15) and gradient against the formula
/// `(−y, x)/(x² + y²)` (1e-14) and against central differences (1e-7).
#[test]
fn atan2_has_correct_derivatives_in_every_quadrant() {
    let e = compile("atan2(y, x)");
    let points = [
        (1.0, 0.5),   // quadrant I, |x| > |y|
        (0.3, 2.0),   // quadrant I, |y| > |x|
        (-1.0, 0.5),  // II
        (-0.2, 3.0),  // II, steep
        (-1.0, -0.5), // III
        (-0.3, -2.0), // III, steep
        (1.0, -0.5),  // IV
        (0.2, -3.0),  // IV, steep
        (0.0, 1.0),   // +y axis
        (0.0, -1.0),  // -y axis
        (-1.0, 0.0),  // -x axis (value +pi)
        (2.0, 0.0),   // +x axis
    ];
    for (x, y) in points {
        let g = e.eval(ad::seed_gradient(&SVector::from([x, y])).as_slice());
        assert_relative_eq!(g.re, y.atan2(x), max_relative = 1e-15, epsilon = 1e-15);
        let r2 = x * x + y * y;
        let grad = ad::gradient_of(g);
        assert_relative_eq!(grad[0], -y / r2, max_relative = 1e-14, epsilon = 1e-15);
        assert_relative_eq!(grad[1], x / r2, max_relative = 1e-14, epsilon = 1e-15);
        // finite differences away from the branch cut
        if !(x < 0.0 && y == 0.0) {
            let fx = central(|t| e.eval(&[t, y]), x);
            let fy = central(|t| e.eval(&[x, t]), y);
            assert_relative_eq!(grad[0], fx, max_relative = 1e-7, epsilon = 1e-8);
            assert_relative_eq!(grad[1], fy, max_relative = 1e-7, epsilon = 1e-8);
        }
    }
    // the branch cut: -pi just below the negative x axis
    assert_relative_eq!(e.eval(&[-1.0, -0.0]), -PI, max_relative = 1e-15);
    // at the origin: f64::atan2's value, zero derivatives
    let g = e.eval(ad::seed_gradient(&SVector::from([0.0, 0.0])).as_slice());
    assert_relative_eq!(g.re, 0.0, epsilon = 1e-15);
    assert_eq!(ad::gradient_of(g), SVector::<f64, 2>::zeros());
}

/// Second derivatives by `Dual2_64` against central differences of the
/// (AD) first derivative, relative 1e-7; mixed partials by `HyperDual64`
/// likewise.
#[test]
fn second_derivatives_match_finite_differences_of_the_first() {
    let single = Scope::with_variables(["x"]).unwrap();
    let cases: &[(&str, &[f64])] = &[
        ("sqrt(x)", &[0.3, 2.0]),
        ("sin(x) + cos(x)", &[-1.0, 0.4]),
        ("tan(x)", &[0.3, -1.0]),
        ("exp(x) * log(x)", &[0.5, 3.0]),
        ("x^3 - x^-2 + x^2.5", &[0.7, 1.9]),
        ("2^x + x^x", &[0.6, 1.4]),
        ("atan2(x, 0.5) + atan2(-1, x)", &[-2.0, -0.1, 0.3, 4.0]),
        ("1 / (1 + x^2)", &[-0.5, 2.0]),
    ];
    for &(src, points) in cases {
        let e = Expr::compile(src, &single).unwrap();
        let first = |t: f64| e.eval(&[Dual64::from(t).derivative()]).eps;
        for &x in points {
            let d2 = e.eval(&[Dual2_64::from(x).derivative()]);
            assert_relative_eq!(d2.v1, first(x), max_relative = 1e-14, epsilon = 1e-15);
            assert_relative_eq!(
                d2.v2,
                central(first, x),
                max_relative = 1e-7,
                epsilon = 1e-8
            );
        }
    }
    // mixed partial d²/dxdy with hyper-duals
    let e = compile("atan2(y, x) * exp(x*y) + x^2 * sin(y)");
    for (x, y) in [(0.5, 0.3), (-1.2, 0.8), (-0.4, -1.5), (0.9, -0.2)] {
        let h = e.eval(&[
            HyperDual64::from(x).derivative1(),
            HyperDual64::from(y).derivative2(),
        ]);
        let dx = |xx: f64, yy: f64| {
            e.eval(&[Dual64::from(xx).derivative(), Dual64::from(yy)])
                .eps
        };
        let fd = central(|t| dx(x, t), y);
        assert_relative_eq!(h.eps1, dx(x, y), max_relative = 1e-14);
        assert_relative_eq!(h.eps1eps2, fd, max_relative = 1e-7, epsilon = 1e-8);
    }
    // and the vector hyper-dual the steppers use agrees with the scalar one
    let q = ad::seed_first::<1, 1>(&SVector::from([0.5]));
    let v = ad::seed_second::<1, 1>(&SVector::from([0.3]));
    let hv = e.eval_split(q.as_slice(), v.as_slice());
    let (_, _, _, d12) = ad::partial_hessian_of(hv);
    let hs = e.eval(&[
        HyperDual64::from(0.5).derivative1(),
        HyperDual64::from(0.3).derivative2(),
    ]);
    assert_relative_eq!(d12[(0, 0)], hs.eps1eps2, max_relative = 1e-15);
    let _: DualSVec64<1> = ad::seed_gradient(&SVector::from([1.0]))[0];
}

// ---------------------------------------------------------------- errors

#[test]
fn syntax_errors_have_columns() {
    let e = error("x + * y");
    assert_eq!(e.column, 5);
    assert!(matches!(&e.kind, ExprErrorKind::Unexpected { found, .. } if found == "`*`"));
    assert_eq!(
        e.to_string(),
        "expected a number, a name or `(`, found `*` at column 5"
    );

    let e = error("(x + y");
    assert_eq!(e.column, 7);
    assert!(
        matches!(&e.kind, ExprErrorKind::Unexpected { found, expected } if found == "end of input" && *expected == "`)`")
    );

    let e = error("x + ");
    assert_eq!(e.column, 5);

    let e = error("2 * $x");
    assert_eq!(
        (e.kind.clone(), e.column),
        (ExprErrorKind::UnexpectedChar('$'), 5)
    );

    let e = error("1.5e+ * x");
    assert_eq!(e.column, 1);
    assert_eq!(e.kind, ExprErrorKind::MalformedNumber("1.5e+".into()));

    let e = error("x * 1e400");
    assert_eq!(
        (e.kind, e.column),
        (ExprErrorKind::NonFiniteLiteral("1e400".into()), 5)
    );
}

#[test]
fn unknown_names_suggest_the_closest() {
    let mut s = Scope::with_variables(["theta", "theta_dot"]).unwrap();
    s.add_parameter("mass", 1.0).unwrap();
    let e = Expr::compile("0.5 * mas * thta_dot^2", &s).unwrap_err();
    assert_eq!(e.column, 7);
    assert_eq!(
        e.kind,
        ExprErrorKind::UnknownName {
            name: "mas".into(),
            suggestion: Some("mass".into())
        }
    );
    assert_eq!(
        e.to_string(),
        "unknown name `mas` (did you mean `mass`?) at column 7"
    );
    let e = Expr::compile("0.5 * mass * thta_dot^2", &s).unwrap_err();
    assert_eq!(e.column, 14);
    assert_eq!(
        e.kind,
        ExprErrorKind::UnknownName {
            name: "thta_dot".into(),
            suggestion: Some("theta_dot".into())
        }
    );
    // nothing close: no suggestion
    let e = Expr::compile("theta + omega", &s).unwrap_err();
    assert_eq!(
        (e.kind, e.column),
        (
            ExprErrorKind::UnknownName {
                name: "omega".into(),
                suggestion: None
            },
            9
        )
    );
    // misspelt function
    let e = Expr::compile("sine(theta)", &s).unwrap_err();
    assert_eq!(
        (e.kind, e.column),
        (
            ExprErrorKind::UnknownFunction {
                name: "sine".into(),
                suggestion: Some("sin".into())
            },
            1
        )
    );
    // a variable called, a function not called
    let e = Expr::compile("2 + theta(1)", &s).unwrap_err();
    assert_eq!(
        (e.kind, e.column),
        (
            ExprErrorKind::NotAFunction {
                name: "theta".into()
            },
            5
        )
    );
    let e = Expr::compile("cos * theta", &s).unwrap_err();
    assert_eq!(
        (e.kind, e.column),
        (ExprErrorKind::MissingArguments { name: "cos".into() }, 1)
    );
}

#[test]
fn wrong_arity_is_reported_at_the_function() {
    let e = error("1 + atan2(y)");
    assert_eq!(e.column, 5);
    assert_eq!(
        e.kind,
        ExprErrorKind::Arity {
            function: "atan2",
            expected: 2,
            found: 1
        }
    );
    assert_eq!(
        e.to_string(),
        "`atan2` takes 2 arguments, found 1 at column 5"
    );
    let e = error("sin(x, y)");
    assert_eq!(
        (e.kind, e.column),
        (
            ExprErrorKind::Arity {
                function: "sin",
                expected: 1,
                found: 2
            },
            1
        )
    );
    let e = error("x * max()");
    assert_eq!(
        (e.kind, e.column),
        (
            ExprErrorKind::Arity {
                function: "max",
                expected: 2,
                found: 0
            },
            5
        )
    );
}

#[test]
fn trailing_tokens_and_empty_input() {
    let e = error("x + y )");
    assert_eq!(e.column, 7);
    assert_eq!(
        e.kind,
        ExprErrorKind::Trailing {
            found: "`)`".into()
        }
    );
    let e = error("2 x");
    assert_eq!(
        (e.kind, e.column),
        (
            ExprErrorKind::Trailing {
                found: "name `x`".into()
            },
            3
        )
    );
    let e = error("x, y");
    assert_eq!(e.column, 2);
    for empty in ["", "   ", "\t\n"] {
        let e = error(empty);
        assert_eq!((e.kind, e.column), (ExprErrorKind::Empty, 1));
    }
}

#[test]
fn constant_problems_are_compile_errors() {
    let e = error("x + 1/(a - 2)");
    assert_eq!(e.column, 5);
    assert!(matches!(e.kind, ExprErrorKind::NonFiniteConstant { value } if value.is_infinite()));
    let e = error("x * log(b)");
    assert_eq!(e.column, 5);
    assert!(matches!(e.kind, ExprErrorKind::NonFiniteConstant { value } if value.is_nan()));
    let e = error("y + b^x");
    assert_eq!(
        (e.kind, e.column),
        (ExprErrorKind::NonPositiveBase { base: -0.5 }, 5)
    );
}

#[test]
fn columns_count_characters() {
    let mut s = Scope::new();
    s.add_variable("x").unwrap();
    // the string has multi-byte characters before the error... in a comment-free
    // expression only whitespace can be non-ASCII
    let e = Expr::compile("x\u{a0}+\u{2003}y", &s).unwrap_err();
    assert_eq!(e.column, 5);
}

#[test]
fn scope_rejects_bad_names() {
    let mut s = Scope::new();
    assert_eq!(
        s.add_variable("sin"),
        Err(ScopeError::Reserved("sin".into()))
    );
    assert_eq!(s.add_variable("pi"), Err(ScopeError::Reserved("pi".into())));
    assert_eq!(
        s.add_variable("2x"),
        Err(ScopeError::InvalidName("2x".into()))
    );
    assert_eq!(
        s.add_variable("x y"),
        Err(ScopeError::InvalidName("x y".into()))
    );
    assert_eq!(s.add_variable(""), Err(ScopeError::InvalidName("".into())));
    assert_eq!(s.add_variable("x"), Ok(0));
    assert_eq!(s.add_variable("_y1"), Ok(1));
    assert_eq!(
        s.add_parameter("x", 1.0),
        Err(ScopeError::Duplicate("x".into()))
    );
    assert!(matches!(
        s.add_parameter("k", f64::INFINITY),
        Err(ScopeError::NonFinite { .. })
    ));
    assert_eq!(s.add_parameter("k", 1.0), Ok(()));
    assert_eq!(s.add_variable("k"), Err(ScopeError::Duplicate("k".into())));
}

// ---------------------------------------------------------------- robustness

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let s = scope();
    for src in [
        format!("{}x{}", "(".repeat(100_000), ")".repeat(100_000)),
        format!("{}x", "-".repeat(100_000)),
        format!("x{}", "^x".repeat(100_000)),
        format!("{}x{}", "sin(".repeat(100_000), ")".repeat(100_000)),
    ] {
        let e = Expr::compile(&src, &s).unwrap_err();
        assert!(
            matches!(e.kind, ExprErrorKind::TooDeep { limit: 100 }),
            "{e}"
        );
    }
    // nesting within the limit compiles, or asks for too deep a stack
    // (`x + (…)` would be evaluated inside-out with no stack: use `-`)
    let src = format!("{}x{}", "(x - ".repeat(90), ")".repeat(90));
    let e = Expr::compile(&src, &s).unwrap_err();
    assert!(
        matches!(
            e.kind,
            ExprErrorKind::StackTooDeep {
                depth: 89,
                limit: 64
            }
        ),
        "{e}"
    );
    let src = format!("{}x{}", "(x - ".repeat(60), ")".repeat(60));
    let e = Expr::compile(&src, &s).unwrap();
    assert_eq!(e.stack_depth(), 59);
    // x - (x - (… - x)) with an even number of minus signs is x
    assert_relative_eq!(e.eval(&[1.5, 0.0]), 1.5, max_relative = 1e-15);
    let src = format!("{}x{}", "(x + ".repeat(90), ")".repeat(90));
    assert_eq!(Expr::compile(&src, &s).unwrap().stack_depth(), 0);
    // long flat sums are iterative: no depth at all
    let src = vec!["x"; 200_000].join(" + ");
    let e = Expr::compile(&src, &s).unwrap();
    assert_eq!(e.stack_depth(), 0);
    assert_relative_eq!(e.eval(&[0.5, 0.0]), 100_000.0, max_relative = 1e-12);
}

/// Random garbage from the expression alphabet never panics (a small LCG,
/// deterministic).
#[test]
fn never_panics_on_garbage() {
    let alphabet: Vec<char> = "xyab0123.e+-*/^(),  sincoatn2qrplgmx_$é".chars().collect();
    let words = [
        "sin", "cos", "atan2", "min", "max", "pi", "sqrt", "log", "x", "y", "a", "1e", "1e-3",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) as usize) % n
    };
    let s = scope();
    let mut compiled = 0;
    for _ in 0..20_000 {
        let len = next(24);
        let mut src = String::new();
        for _ in 0..len {
            if next(4) == 0 {
                src.push_str(words[next(words.len())]);
            } else {
                src.push(alphabet[next(alphabet.len())]);
            }
        }
        if let Ok(e) = Expr::compile(&src, &s) {
            compiled += 1;
            let _ = e.eval(&[0.3, -1.7]);
            let _ = e.eval(&[Dual64::from(0.0).derivative(), Dual64::from(f64::NAN)]);
        } else if let Err(e) = Expr::compile(&src, &s) {
            // columns stay inside the source (or one past its end)
            assert!(
                e.column >= 1 && e.column <= src.chars().count() + 1,
                "{src:?}: {e}"
            );
        }
    }
    assert!(
        compiled > 100,
        "only {compiled} random expressions compiled"
    );
}
