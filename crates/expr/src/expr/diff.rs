//! Symbolic partial derivatives of expressions, printed back as expression
//! text: how a holonomic relation `φ(q) = 0` becomes its differential, the
//! constraint row `∂φ/∂q` (a joint port of a system file).

use super::parse::{self, ChainOp, Kind, Node};
use super::{ExprError, ExprErrorKind, Func, Scope};

/// A derivative under construction: zero and one kept apart so that the
/// rows of relations linear in the coordinates come out as constants.
#[derive(Clone, Debug, PartialEq)]
enum D {
    Zero,
    One,
    Text(String),
}

fn text(d: &D) -> String {
    match d {
        D::Zero => "0".to_owned(),
        D::One => "1".to_owned(),
        D::Text(t) => t.clone(),
    }
}

fn mul(a: &D, b: &str) -> D {
    match a {
        D::Zero => D::Zero,
        D::One => D::Text(format!("({b})")),
        D::Text(t) => D::Text(format!("({t})*({b})")),
    }
}

fn add(a: D, sub: bool, b: D) -> D {
    match (a, b) {
        (a, D::Zero) => a,
        (D::Zero, b) if !sub => b,
        (D::Zero, b) => D::Text(format!("(-({}))", text(&b))),
        (a, b) => D::Text(format!(
            "({} {} {})",
            text(&a),
            if sub { "-" } else { "+" },
            text(&b)
        )),
    }
}

/// `node` printed as expression text over the variable names `names`
/// (fully parenthesised; numbers as Rust prints them, which the lexer reads
/// back to the same value).
fn print(node: &Node, names: &[String]) -> String {
    match &node.kind {
        Kind::Num(c) => {
            if *c < 0.0 {
                format!("({c:?})")
            } else {
                format!("{c:?}")
            }
        }
        Kind::Var(s) => names[*s as usize].clone(),
        Kind::Neg(x) => format!("(-{})", print(x, names)),
        Kind::Chain(terms) => {
            let mut out = String::from("(");
            for (i, (op, t)) in terms.iter().enumerate() {
                if i > 0 {
                    out.push_str(match op {
                        ChainOp::Add => " + ",
                        ChainOp::Sub => " - ",
                        ChainOp::Mul => "*",
                        ChainOp::Div => "/",
                    });
                }
                out.push_str(&print(t, names));
            }
            out.push(')');
            out
        }
        Kind::Pow(a, b) => format!("({}^{})", print(a, names), print(b, names)),
        Kind::Call(f, args) => {
            let args: Vec<String> = args.iter().map(|a| print(a, names)).collect();
            format!("{}({})", f.name(), args.join(", "))
        }
    }
}

fn derive(node: &Node, names: &[String], var: u32) -> Result<D, ExprError> {
    let p = |n: &Node| print(n, names);
    Ok(match &node.kind {
        Kind::Num(_) => D::Zero,
        Kind::Var(s) => {
            if *s == var {
                D::One
            } else {
                D::Zero
            }
        }
        Kind::Neg(x) => match derive(x, names, var)? {
            D::Zero => D::Zero,
            d => D::Text(format!("(-({}))", text(&d))),
        },
        Kind::Chain(terms) => {
            // a chain is a sum (first operator `+`) or a product (`*`)
            if matches!(terms.first(), Some((ChainOp::Mul, _))) {
                // left to right: u ∘ f with u the product so far
                let mut u = p(&terms[0].1);
                let mut du = derive(&terms[0].1, names, var)?;
                for (op, f) in &terms[1..] {
                    let fv = p(f);
                    let df = derive(f, names, var)?;
                    du = match op {
                        ChainOp::Div => add(
                            mul(&du, &format!("1/{fv}")),
                            true,
                            mul(&df, &format!("{u}/{fv}^2")),
                        ),
                        _ => add(mul(&du, &fv), false, mul(&df, &u)),
                    };
                    u = format!("({u}{}{fv})", if *op == ChainOp::Div { "/" } else { "*" });
                }
                du
            } else {
                let mut d = D::Zero;
                for (op, t) in terms {
                    d = add(d, *op == ChainOp::Sub, derive(t, names, var)?);
                }
                d
            }
        }
        Kind::Pow(a, b) => {
            let da = derive(a, names, var)?;
            let db = derive(b, names, var)?;
            let (av, bv) = (p(a), p(b));
            let first = mul(&da, &format!("{bv}*{av}^({bv} - 1)"));
            let second = mul(&db, &format!("{av}^{bv}*log({av})"));
            add(first, false, second)
        }
        Kind::Call(f, args) => {
            let a = p(&args[0]);
            let da = derive(&args[0], names, var)?;
            match f {
                Func::Sqrt => mul(&da, &format!("0.5/sqrt({a})")),
                Func::Sin => mul(&da, &format!("cos({a})")),
                Func::Cos => mul(&da, &format!("-sin({a})")),
                Func::Tan => mul(&da, &format!("1/cos({a})^2")),
                Func::Exp => mul(&da, &format!("exp({a})")),
                Func::Log => mul(&da, &format!("1/{a}")),
                Func::Atan2 => {
                    // atan2(y, x): (x dy − y dx)/(x² + y²)
                    let x = p(&args[1]);
                    let dx = derive(&args[1], names, var)?;
                    let r2 = format!("({a}^2 + {x}^2)");
                    add(
                        mul(&da, &format!("{x}/{r2}")),
                        true,
                        mul(&dx, &format!("{a}/{r2}")),
                    )
                }
                Func::Abs | Func::Min | Func::Max => {
                    let dependent = args
                        .iter()
                        .map(|a| derive(a, names, var))
                        .collect::<Result<Vec<_>, _>>()?
                        .iter()
                        .any(|d| *d != D::Zero);
                    if dependent {
                        return Err(ExprError::new(
                            ExprErrorKind::NotDifferentiable {
                                function: f.name().to_owned(),
                            },
                            node.col,
                        ));
                    }
                    D::Zero
                }
            }
        }
    })
}

/// The partial derivative `∂f/∂var` of the expression `source` over the
/// variables `names` (every name it uses must be one of them, or `pi`, or a
/// function), as expression text over the same names; `"0"` when `f` does
/// not depend on `var` (or `var` is not among `names`).
///
/// ```
/// use diracvi_expr::expr::derivative;
/// let names = ["a.x".to_owned(), "b.y".to_owned(), "r".to_owned()];
/// assert_eq!(derivative("a.x - r*b.y", &names, "a.x").unwrap(), "1");
/// assert_eq!(derivative("a.x - r*b.y", &names, "r").unwrap(), "(-((b.y)))");
/// ```
///
/// # Errors
/// The expression does not parse over `names`; it applies `abs`, `min` or
/// `max` to something that depends on `var` ([`ExprErrorKind::NotDifferentiable`]).
pub fn derivative(source: &str, names: &[String], var: &str) -> Result<String, ExprError> {
    let scope = Scope::with_variables(names).map_err(|e| {
        ExprError::new(
            ExprErrorKind::UnknownName {
                name: e.to_string(),
                suggestion: None,
            },
            1,
        )
    })?;
    let tree = parse::parse(source, &scope)?;
    let Some(slot) = names.iter().position(|n| n == var) else {
        return Ok("0".to_owned());
    };
    let slot = u32::try_from(slot).unwrap_or(u32::MAX);
    Ok(text(&derive(&tree, names, slot)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Expr;
    use num_dual::Dual64;

    /// Each derivative printed equals the forward-mode derivative of the
    /// expression at a point.
    #[test]
    fn printed_derivatives_agree_with_dual_numbers() {
        let names: Vec<String> = ["a.x", "b.y", "r"].iter().map(|s| s.to_string()).collect();
        let scope = Scope::with_variables(&names).unwrap();
        let point = [0.7, -0.4, 1.3];
        for source in [
            "a.x - 2*b.y",
            "a.x - r*sin(b.y) + pi",
            "a.x^2 + b.y^2 - r^2",
            "a.x/(1 + b.y^2)*r - exp(a.x*b.y)/r",
            "sqrt(1 + a.x^2)*cos(b.y) - log(r + a.x^2)",
            "atan2(b.y, a.x) - tan(0.3*r)",
            "-(a.x - b.y)^r + 2^b.y",
        ] {
            let f = Expr::compile(source, &scope).unwrap();
            for (i, name) in names.iter().enumerate() {
                let vars: Vec<Dual64> = point
                    .iter()
                    .enumerate()
                    .map(|(j, &x)| {
                        if j == i {
                            Dual64::from(x).derivative()
                        } else {
                            Dual64::from(x)
                        }
                    })
                    .collect();
                let expected = f.eval(&vars).eps;
                let text = derivative(source, &names, name).unwrap();
                let got = Expr::compile(&text, &scope).unwrap().eval(&point);
                assert!(
                    (got - expected).abs() <= 1e-13 * (1.0 + expected.abs()),
                    "d({source})/d{name} = {text}: {got} vs {expected}"
                );
            }
        }
        assert_eq!(
            derivative("a.x - 2*b.y", &names, "b.y").unwrap(),
            "(-((2.0)))"
        );
        assert_eq!(derivative("a.x + b.y", &names, "zzz").unwrap(), "0");
        // abs, min, max of what does not depend on the variable are constants
        assert_eq!(
            derivative("abs(r) + max(r, 2)*a.x", &names, "b.y").unwrap(),
            "0"
        );
        let err = derivative("abs(a.x)", &names, "a.x").unwrap_err();
        assert!(matches!(err.kind, ExprErrorKind::NotDifferentiable { .. }));
    }
}
