//! Lexer and recursive-descent parser: source text to a syntax tree whose
//! names are already resolved (variables to slots, parameters and `pi` to
//! numbers).
//!
//! Grammar (lowest precedence first):
//!
//! ```text
//! sum     := product (('+' | '-') product)*
//! product := unary (('*' | '/') unary)*
//! unary   := ('-' | '+') unary | power
//! power   := primary ('^' unary)?          right-associative, binds tighter than unary minus
//! primary := number | name | name '(' sum (',' sum)* ')' | '(' sum ')'
//! ```

use super::error::{ExprError, ExprErrorKind};
use super::{Func, Scope};

/// Maximum nesting of parentheses, unary signs, powers and calls.
pub(crate) const MAX_NESTING: usize = 100;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'a> {
    Num(f64),
    Ident(&'a str),
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    LParen,
    RParen,
    Comma,
    End,
}

#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    tok: Tok<'a>,
    /// 1-based character column of the token's first character.
    col: usize,
    /// The token's text (empty at the end).
    text: &'a str,
}

fn describe(t: &Token<'_>) -> String {
    match t.tok {
        Tok::Num(_) => format!("number `{}`", t.text),
        Tok::Ident(name) => format!("name `{name}`"),
        Tok::End => "end of input".to_owned(),
        _ => format!("`{}`", t.text),
    }
}

fn lex(source: &str) -> Result<Vec<Token<'_>>, ExprError> {
    let mut tokens = Vec::new();
    let mut chars = source.char_indices().enumerate().peekable();
    while let Some((ci, (bi, c))) = chars.next() {
        let col = ci + 1;
        let single = |tok| Token {
            tok,
            col,
            text: &source[bi..bi + c.len_utf8()],
        };
        match c {
            c if c.is_whitespace() => {}
            '+' => tokens.push(single(Tok::Plus)),
            '-' => tokens.push(single(Tok::Minus)),
            '*' => tokens.push(single(Tok::Star)),
            '/' => tokens.push(single(Tok::Slash)),
            '^' => tokens.push(single(Tok::Caret)),
            '(' => tokens.push(single(Tok::LParen)),
            ')' => tokens.push(single(Tok::RParen)),
            ',' => tokens.push(single(Tok::Comma)),
            c if c.is_ascii_alphabetic() || c == '_' => {
                // a name, qualified or not: `x`, `cone.x` (a `.` joins two
                // names, so `x.5` stays a name followed by a number)
                let bytes = source.as_bytes();
                let mut end = bi + 1;
                while let Some(&(_, (b, d))) = chars.peek() {
                    let joins = d == '.'
                        && bytes
                            .get(b + 1)
                            .is_some_and(|&e| e.is_ascii_alphabetic() || e == b'_');
                    if d.is_ascii_alphanumeric() || d == '_' || joins {
                        end = b + 1;
                        chars.next();
                    } else {
                        break;
                    }
                }
                let text = &source[bi..end];
                tokens.push(Token {
                    tok: Tok::Ident(text),
                    col,
                    text,
                });
            }
            c if c.is_ascii_digit() || c == '.' => {
                // digits [. digits] [(e|E) [+|-] digits], or . digits ...
                let bytes = source.as_bytes();
                let mut end = bi;
                let digits = |mut i: usize| {
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                    i
                };
                end = digits(end);
                let mut mantissa_digits = end > bi;
                if end < bytes.len() && bytes[end] == b'.' {
                    let after = digits(end + 1);
                    mantissa_digits |= after > end + 1;
                    end = after;
                }
                let mut ok = mantissa_digits;
                if end < bytes.len() && (bytes[end] == b'e' || bytes[end] == b'E') {
                    let mut i = end + 1;
                    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
                        i += 1;
                    }
                    let after = digits(i);
                    ok &= after > i;
                    end = if after > i { after } else { i };
                }
                // the number token is ASCII: skip its remaining characters
                while chars.peek().is_some_and(|&(_, (b, _))| b < end) {
                    chars.next();
                }
                let text = &source[bi..end];
                if !ok {
                    return Err(ExprError::new(
                        ExprErrorKind::MalformedNumber(text.to_owned()),
                        col,
                    ));
                }
                let value: f64 = text.parse().map_err(|_| {
                    ExprError::new(ExprErrorKind::MalformedNumber(text.to_owned()), col)
                })?;
                if !value.is_finite() {
                    return Err(ExprError::new(
                        ExprErrorKind::NonFiniteLiteral(text.to_owned()),
                        col,
                    ));
                }
                tokens.push(Token {
                    tok: Tok::Num(value),
                    col,
                    text,
                });
            }
            other => {
                return Err(ExprError::new(ExprErrorKind::UnexpectedChar(other), col));
            }
        }
    }
    tokens.push(Token {
        tok: Tok::End,
        col: source.chars().count() + 1,
        text: "",
    });
    Ok(tokens)
}

/// `source` with every name `f` maps replaced (names `f` returns `None`
/// for, numbers, operators and spacing are kept as written).
pub(crate) fn rename(
    source: &str,
    mut f: impl FnMut(&str) -> Option<String>,
) -> Result<String, ExprError> {
    let mut out = String::with_capacity(source.len());
    let mut copied = 0;
    for t in lex(source)? {
        if let Tok::Ident(name) = t.tok
            && let Some(new) = f(name)
        {
            let start = name.as_ptr() as usize - source.as_ptr() as usize;
            out.push_str(&source[copied..start]);
            out.push_str(&new);
            copied = start + name.len();
        }
    }
    out.push_str(&source[copied..]);
    Ok(out)
}

/// `+` or `-` between the terms of a sum; `*` or `/` between the factors of
/// a product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChainOp {
    /// `+` (also the implicit operator of a sum's first term).
    Add,
    /// `-`.
    Sub,
    /// `*` (also the implicit operator of a product's first factor).
    Mul,
    /// `/`.
    Div,
}

/// A syntax-tree node with the column where its source text starts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    pub kind: Kind,
    pub col: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    Num(f64),
    Var(u32),
    Neg(Box<Node>),
    /// Evaluated left to right: `((t0 op1 t1) op2 t2) …`; at least two
    /// terms, the first one's operator is `Add` (sum) or `Mul` (product).
    Chain(Vec<(ChainOp, Node)>),
    Pow(Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
}

struct Parser<'s, 'a> {
    tokens: Vec<Token<'a>>,
    pos: usize,
    scope: &'s Scope,
    depth: usize,
    /// The definitions being expanded, outermost first (to refuse cycles).
    expanding: Vec<String>,
}

pub(crate) fn parse(source: &str, scope: &Scope) -> Result<Node, ExprError> {
    parse_nested(source, scope, Vec::new(), 0)
}

/// Parse the source of definition `name` on its own (as when checking the
/// definition itself): a use of `name` inside it is a cycle.
pub(crate) fn parse_definition(name: &str, scope: &Scope) -> Result<Node, ExprError> {
    let source = scope.definition(name).unwrap_or_default();
    parse_nested(source, scope, vec![name.to_owned()], 0)
}

/// Parse `source` inside the expansion of the definitions `expanding`, at
/// nesting `depth`.
fn parse_nested(
    source: &str,
    scope: &Scope,
    expanding: Vec<String>,
    depth: usize,
) -> Result<Node, ExprError> {
    let tokens = lex(source)?;
    if tokens.len() == 1 {
        return Err(ExprError::new(ExprErrorKind::Empty, 1));
    }
    let mut parser = Parser {
        tokens,
        pos: 0,
        scope,
        depth,
        expanding,
    };
    let node = parser.sum()?;
    let next = parser.peek();
    if next.tok != Tok::End {
        return Err(ExprError::new(
            ExprErrorKind::Trailing {
                found: describe(&next),
            },
            next.col,
        ));
    }
    Ok(node)
}

impl<'a> Parser<'_, 'a> {
    fn peek(&self) -> Token<'a> {
        self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn bump(&mut self) -> Token<'a> {
        let t = self.peek();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn sum(&mut self) -> Result<Node, ExprError> {
        let first = self.product()?;
        let col = first.col;
        let mut terms = vec![(ChainOp::Add, first)];
        loop {
            let op = match self.peek().tok {
                Tok::Plus => ChainOp::Add,
                Tok::Minus => ChainOp::Sub,
                _ => break,
            };
            self.bump();
            terms.push((op, self.product()?));
        }
        Ok(chain(terms, col))
    }

    fn product(&mut self) -> Result<Node, ExprError> {
        let first = self.unary()?;
        let col = first.col;
        let mut factors = vec![(ChainOp::Mul, first)];
        loop {
            let op = match self.peek().tok {
                Tok::Star => ChainOp::Mul,
                Tok::Slash => ChainOp::Div,
                _ => break,
            };
            self.bump();
            factors.push((op, self.unary()?));
        }
        Ok(chain(factors, col))
    }

    fn unary(&mut self) -> Result<Node, ExprError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(ExprError::new(
                ExprErrorKind::TooDeep { limit: MAX_NESTING },
                self.peek().col,
            ));
        }
        let t = self.peek();
        let node = match t.tok {
            Tok::Minus => {
                self.bump();
                let inner = self.unary()?;
                Node {
                    kind: Kind::Neg(Box::new(inner)),
                    col: t.col,
                }
            }
            Tok::Plus => {
                self.bump();
                let mut inner = self.unary()?;
                inner.col = t.col;
                inner
            }
            _ => self.power()?,
        };
        self.depth -= 1;
        Ok(node)
    }

    fn power(&mut self) -> Result<Node, ExprError> {
        let base = self.primary()?;
        if self.peek().tok == Tok::Caret {
            self.bump();
            let exponent = self.unary()?;
            let col = base.col;
            return Ok(Node {
                kind: Kind::Pow(Box::new(base), Box::new(exponent)),
                col,
            });
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<Node, ExprError> {
        let t = self.bump();
        match t.tok {
            Tok::Num(value) => Ok(Node {
                kind: Kind::Num(value),
                col: t.col,
            }),
            Tok::LParen => {
                let mut inner = self.sum()?;
                self.expect_close()?;
                inner.col = t.col;
                Ok(inner)
            }
            Tok::Ident(name) if self.peek().tok == Tok::LParen => self.call(name, t.col),
            Tok::Ident(name) => self.name(name, t.col),
            _ => Err(ExprError::new(
                ExprErrorKind::Unexpected {
                    expected: "a number, a name or `(`",
                    found: describe(&t),
                },
                t.col,
            )),
        }
    }

    fn expect_close(&mut self) -> Result<(), ExprError> {
        let t = self.peek();
        if t.tok == Tok::RParen {
            self.bump();
            return Ok(());
        }
        Err(ExprError::new(
            ExprErrorKind::Unexpected {
                expected: "`)`",
                found: describe(&t),
            },
            t.col,
        ))
    }

    fn call(&mut self, name: &str, col: usize) -> Result<Node, ExprError> {
        let Some(func) = Func::from_name(name) else {
            if self.scope.is_known_value(name) {
                return Err(ExprError::new(
                    ExprErrorKind::NotAFunction {
                        name: name.to_owned(),
                    },
                    col,
                ));
            }
            let suggestion = closest(name, Func::ALL.iter().map(|f| f.name()));
            return Err(ExprError::new(
                ExprErrorKind::UnknownFunction {
                    name: name.to_owned(),
                    suggestion,
                },
                col,
            ));
        };
        self.bump(); // `(`
        let mut args = Vec::new();
        if self.peek().tok != Tok::RParen {
            loop {
                args.push(self.sum()?);
                if self.peek().tok == Tok::Comma {
                    self.bump();
                } else {
                    break;
                }
            }
        }
        self.expect_close()?;
        if args.len() != func.arity() {
            return Err(ExprError::new(
                ExprErrorKind::Arity {
                    function: func.name(),
                    expected: func.arity(),
                    found: args.len(),
                },
                col,
            ));
        }
        Ok(Node {
            kind: Kind::Call(func, args),
            col,
        })
    }

    fn name(&mut self, name: &str, col: usize) -> Result<Node, ExprError> {
        let kind = if let Some(slot) = self.scope.slot(name) {
            // slot < u32::MAX is guaranteed by `Scope::add_variable`
            Kind::Var(u32::try_from(slot).unwrap_or(u32::MAX))
        } else if let Some(value) = self.scope.parameter(name) {
            Kind::Num(value)
        } else if name == "pi" {
            Kind::Num(std::f64::consts::PI)
        } else if let Some(source) = self.scope.definition(name) {
            return self.expand(name, source, col);
        } else if Func::from_name(name).is_some() {
            return Err(ExprError::new(
                ExprErrorKind::MissingArguments {
                    name: name.to_owned(),
                },
                col,
            ));
        } else {
            let known = self
                .scope
                .variables()
                .iter()
                .map(String::as_str)
                .chain(self.scope.parameters().iter().map(|(n, _)| n.as_str()))
                .chain(self.scope.definitions().iter().map(|(n, _)| n.as_str()))
                .chain(std::iter::once("pi"))
                .chain(Func::ALL.iter().map(|f| f.name()));
            return Err(ExprError::new(
                ExprErrorKind::UnknownName {
                    name: name.to_owned(),
                    suggestion: closest(name, known),
                },
                col,
            ));
        };
        Ok(Node { kind, col })
    }
}

impl Parser<'_, '_> {
    /// The syntax tree of definition `name` (source `source`) in place of
    /// its use at `col`: the definition is substituted, so it is
    /// differentiated and folded like text written in place. Every node of
    /// the substituted tree is placed at `col` (errors found later, e.g. a
    /// division by a constant zero, point at the use).
    fn expand(&mut self, name: &str, source: &str, col: usize) -> Result<Node, ExprError> {
        if let Some(start) = self.expanding.iter().position(|d| d == name) {
            let mut cycle = self.expanding[start..].to_vec();
            cycle.push(name.to_owned());
            return Err(ExprError::new(
                ExprErrorKind::DefinitionCycle { cycle },
                col,
            ));
        }
        let mut expanding = self.expanding.clone();
        expanding.push(name.to_owned());
        match parse_nested(source, self.scope, expanding, self.depth + 1) {
            Ok(mut node) => {
                relocate(&mut node, col);
                Ok(node)
            }
            // a cycle is reported as a whole, at the outermost use
            Err(ExprError {
                kind: kind @ ExprErrorKind::DefinitionCycle { .. },
                ..
            }) => Err(ExprError::new(kind, col)),
            Err(
                e @ ExprError {
                    kind: ExprErrorKind::InDefinition { .. } | ExprErrorKind::TooDeep { .. },
                    ..
                },
            ) => Err(ExprError { column: col, ..e }),
            Err(inner) => Err(ExprError::new(
                ExprErrorKind::InDefinition {
                    name: name.to_owned(),
                    error: Box::new(inner),
                },
                col,
            )),
        }
    }
}

/// Place every node of `node` at column `col`.
fn relocate(node: &mut Node, col: usize) {
    node.col = col;
    match &mut node.kind {
        Kind::Num(_) | Kind::Var(_) => {}
        Kind::Neg(inner) => relocate(inner, col),
        Kind::Chain(terms) => terms.iter_mut().for_each(|(_, t)| relocate(t, col)),
        Kind::Pow(base, exponent) => {
            relocate(base, col);
            relocate(exponent, col);
        }
        Kind::Call(_, args) => args.iter_mut().for_each(|a| relocate(a, col)),
    }
}

fn chain(mut terms: Vec<(ChainOp, Node)>, col: usize) -> Node {
    if terms.len() == 1
        && let Some((_, node)) = terms.pop()
    {
        return node;
    }
    Node {
        kind: Kind::Chain(terms),
        col,
    }
}

/// The candidate closest to `name` in edit distance, if that distance is at
/// most 2 and smaller than the length of `name` (so a one-letter typo is not
/// "corrected" into an unrelated one-letter name). Ties go to the earlier
/// candidate.
pub(crate) fn closest<'c>(name: &str, candidates: impl Iterator<Item = &'c str>) -> Option<String> {
    let limit = 2.min(name.chars().count().saturating_sub(1));
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(name, c);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c.to_owned())
}

/// Levenshtein distance over characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("theta", "thta"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            closest("thta", ["x", "theta", "th"].into_iter()),
            Some("theta".into())
        );
        // one-letter names are not "corrected"
        assert_eq!(closest("b", ["a"].into_iter()), None);
        assert_eq!(closest("xyzw", ["theta"].into_iter()), None);
    }

    #[test]
    fn lexes_qualified_names_and_renames_them() {
        let names = |src: &str| -> Vec<String> {
            lex(src)
                .unwrap()
                .iter()
                .filter_map(|t| match t.tok {
                    Tok::Ident(n) => Some(n.to_owned()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(names("cone.x_dot*2 + a.b.c"), ["cone.x_dot", "a.b.c"]);
        // a `.` before a digit or at the end does not join
        assert_eq!(names("x.5"), ["x"]);
        assert!(matches!(
            lex("x.").unwrap_err().kind,
            ExprErrorKind::MalformedNumber(_)
        ));
        let renamed = rename("0.5*m*x_dot^2 - k*x^2/2 + sin(x)", |n| {
            ["m", "x_dot", "k", "x"]
                .contains(&n)
                .then(|| format!("cone.{n}"))
        })
        .unwrap();
        assert_eq!(
            renamed,
            "0.5*cone.m*cone.x_dot^2 - cone.k*cone.x^2/2 + sin(cone.x)"
        );
        assert!(super::super::is_identifier("cone.x"));
        assert!(!super::super::is_identifier("cone..x"));
        assert!(!super::super::is_identifier("cone.1"));
        assert!(!super::super::is_identifier(".x"));
    }

    #[test]
    fn lexes_numbers() {
        let t = lex("1 2.5 1e-3 .5 3. 4E+2").unwrap();
        let nums: Vec<f64> = t
            .iter()
            .filter_map(|t| match t.tok {
                Tok::Num(v) => Some(v),
                _ => None,
            })
            .collect();
        assert_eq!(nums, vec![1.0, 2.5, 1e-3, 0.5, 3.0, 400.0]);
        assert_eq!(
            lex("2 + 1e").unwrap_err(),
            ExprError::new(ExprErrorKind::MalformedNumber("1e".into()), 5)
        );
        assert_eq!(
            lex("x + .").unwrap_err(),
            ExprError::new(ExprErrorKind::MalformedNumber(".".into()), 5)
        );
        assert_eq!(
            lex("1e400").unwrap_err(),
            ExprError::new(ExprErrorKind::NonFiniteLiteral("1e400".into()), 1)
        );
        // columns count characters, not bytes
        assert_eq!(
            lex("x + θ").unwrap_err(),
            ExprError::new(ExprErrorKind::UnexpectedChar('θ'), 5)
        );
        assert_eq!(
            lex("θ + $").unwrap_err(),
            ExprError::new(ExprErrorKind::UnexpectedChar('θ'), 1)
        );
    }
}
