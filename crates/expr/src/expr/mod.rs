//! Expressions: parse once into a flat tape, evaluate generically over the
//! AD scalar.
//!
//! ```
//! use diracvi_expr::{Expr, Scope};
//! use diracvi_geometry::num_dual::{Dual64, DualNum};
//!
//! let mut scope = Scope::new();
//! scope.add_variable("x")?;
//! scope.add_parameter("k", 3.0)?;
//! let e = Expr::compile("k * sin(x)^2", &scope)?;
//! assert!((e.eval(&[0.5_f64]) - 3.0 * 0.5_f64.sin().powi(2)).abs() < 1e-15);
//! // derivative by AD: d/dx k sin²x = 2k sin x cos x
//! let d = e.eval(&[Dual64::from(0.5).derivative()]);
//! assert!((d.eps - 3.0 * 0.5_f64.sin() * 0.5_f64.cos() * 2.0).abs() < 1e-15);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod diff;
mod error;
mod eval;
mod lower;
mod parse;
mod scalar;
mod terms;

pub use diff::derivative;
pub use error::{ExprError, ExprErrorKind, ScopeError};
pub use terms::{SplitRow, SplitSum};

use diracvi_geometry::AdScalar;
use eval::{One, Op, Two};
use std::collections::HashMap;
use std::fmt;

/// The functions an expression may call, with their arities.
pub const FUNCTIONS: [(&str, usize); 10] = [
    ("sqrt", 1),
    ("sin", 1),
    ("cos", 1),
    ("tan", 1),
    ("exp", 1),
    ("log", 1),
    ("abs", 1),
    ("min", 2),
    ("max", 2),
    ("atan2", 2),
];

/// Whether `name` is reserved: a function name or the constant `pi`.
pub fn is_reserved(name: &str) -> bool {
    name == "pi" || Func::from_name(name).is_some()
}

/// Whether `name` is an identifier: `[A-Za-z_][A-Za-z0-9_]*`, or several
/// joined by `.` (a qualified name such as `cone.x`, as an assembled
/// system names the coordinates and parameters of its parts).
pub fn is_identifier(name: &str) -> bool {
    name.split('.').all(|part| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `source` with its names renamed by `f` (a name `f` maps to `None` is
/// kept), everything else as written: how an assembled system qualifies a
/// part's expressions (`x` → `cone.x`).
///
/// # Errors
/// When `source` does not lex (an unexpected character or a malformed
/// number), with the column.
pub fn rename_names(
    source: &str,
    f: impl FnMut(&str) -> Option<String>,
) -> Result<String, ExprError> {
    parse::rename(source, f)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Func {
    Sqrt,
    Sin,
    Cos,
    Tan,
    Exp,
    Log,
    Abs,
    Min,
    Max,
    Atan2,
}

impl Func {
    pub(crate) const ALL: [Func; 10] = [
        Func::Sqrt,
        Func::Sin,
        Func::Cos,
        Func::Tan,
        Func::Exp,
        Func::Log,
        Func::Abs,
        Func::Min,
        Func::Max,
        Func::Atan2,
    ];

    pub(crate) fn name(self) -> &'static str {
        FUNCTIONS[self as usize].0
    }

    pub(crate) fn arity(self) -> usize {
        FUNCTIONS[self as usize].1
    }

    pub(crate) fn from_name(name: &str) -> Option<Func> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// The names an expression may use: variables, numbered by slot in the
/// order they were added (`0..variable_count()`); parameters with their
/// values, baked into the compiled expression as constants; and
/// definitions, named expressions substituted where they are used.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scope {
    variables: Vec<String>,
    parameters: Vec<(String, f64)>,
    definitions: Vec<(String, String)>,
    /// Every name to what it is: a look-up costs the same in a scope of
    /// ten names and of ten thousand (an assembled system of many parts).
    names: HashMap<String, Name>,
}

/// What a name of a [`Scope`] is, with its index in its list.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Name {
    Variable(usize),
    Parameter(usize),
    Definition(usize),
}

impl Scope {
    /// An empty scope.
    pub fn new() -> Self {
        Self::default()
    }

    /// A scope with these variables (slots `0, 1, …` in order) and no
    /// parameters.
    pub fn with_variables<T: AsRef<str>>(
        names: impl IntoIterator<Item = T>,
    ) -> Result<Self, ScopeError> {
        let mut scope = Self::new();
        for name in names {
            scope.add_variable(name.as_ref())?;
        }
        Ok(scope)
    }

    fn check_new_name(&self, name: &str) -> Result<(), ScopeError> {
        if !is_identifier(name) {
            return Err(ScopeError::InvalidName(name.to_owned()));
        }
        if is_reserved(name) {
            return Err(ScopeError::Reserved(name.to_owned()));
        }
        if self.names.contains_key(name) {
            return Err(ScopeError::Duplicate(name.to_owned()));
        }
        Ok(())
    }

    /// Add a variable; returns its slot index.
    ///
    /// # Errors
    /// The name is not an identifier, is reserved ([`is_reserved`]) or is
    /// already defined.
    pub fn add_variable(&mut self, name: &str) -> Result<usize, ScopeError> {
        self.check_new_name(name)?;
        if self.variables.len() >= u32::MAX as usize {
            return Err(ScopeError::TooManyVariables(self.variables.len() + 1));
        }
        self.names
            .insert(name.to_owned(), Name::Variable(self.variables.len()));
        self.variables.push(name.to_owned());
        Ok(self.variables.len() - 1)
    }

    /// Add a parameter with its value.
    ///
    /// # Errors
    /// The name is not an identifier, is reserved or already defined, or the
    /// value is not finite.
    pub fn add_parameter(&mut self, name: &str, value: f64) -> Result<(), ScopeError> {
        self.check_new_name(name)?;
        if !value.is_finite() {
            return Err(ScopeError::NonFinite {
                name: name.to_owned(),
                value,
            });
        }
        self.names
            .insert(name.to_owned(), Name::Parameter(self.parameters.len()));
        self.parameters.push((name.to_owned(), value));
        Ok(())
    }

    /// Add a definition: a named expression over this scope's names, which
    /// expressions (and other definitions) may use like a variable. It is
    /// substituted where it is used, so derivatives and constant folding see
    /// through it. Its text is only read when an expression using it is
    /// compiled: unknown names in it, and definitions that use each other in
    /// a cycle, are errors of that compilation
    /// ([`ExprErrorKind::InDefinition`], [`ExprErrorKind::DefinitionCycle`];
    /// [`Expr::compile_definition`] checks one definition on its own).
    ///
    /// # Errors
    /// The name is not an identifier, is reserved or is already defined.
    pub fn add_definition(&mut self, name: &str, source: &str) -> Result<(), ScopeError> {
        self.check_new_name(name)?;
        self.names
            .insert(name.to_owned(), Name::Definition(self.definitions.len()));
        self.definitions.push((name.to_owned(), source.to_owned()));
        Ok(())
    }

    /// Definitions (name, source) in the order they were added.
    pub fn definitions(&self) -> &[(String, String)] {
        &self.definitions
    }

    /// The source of a definition.
    pub fn definition(&self, name: &str) -> Option<&str> {
        match self.names.get(name) {
            Some(&Name::Definition(i)) => Some(self.definitions[i].1.as_str()),
            _ => None,
        }
    }

    /// Number of variable slots.
    pub fn variable_count(&self) -> usize {
        self.variables.len()
    }

    /// Variable names by slot.
    pub fn variables(&self) -> &[String] {
        &self.variables
    }

    /// Parameters with their values, in the order they were added.
    pub fn parameters(&self) -> &[(String, f64)] {
        &self.parameters
    }

    /// The slot of a variable.
    pub fn slot(&self, name: &str) -> Option<usize> {
        match self.names.get(name) {
            Some(&Name::Variable(i)) => Some(i),
            _ => None,
        }
    }

    /// The value of a parameter.
    pub fn parameter(&self, name: &str) -> Option<f64> {
        match self.names.get(name) {
            Some(&Name::Parameter(i)) => Some(self.parameters[i].1),
            _ => None,
        }
    }

    pub(crate) fn is_known_value(&self, name: &str) -> bool {
        name == "pi" || self.names.contains_key(name)
    }
}

/// A compiled expression: a flat tape over the variable slots of the
/// [`Scope`] it was compiled in, with parameters folded in as constants.
///
/// Evaluation ([`eval`](Self::eval)) is generic over [`AdScalar`], never
/// allocates and never panics for any values of the variables (NaN and
/// infinities propagate as in IEEE arithmetic).
#[derive(Clone, Debug)]
pub struct Expr {
    source: String,
    ops: Box<[Op]>,
    slots: usize,
    registers: usize,
    n_vars: usize,
    constant: Option<f64>,
}

impl Expr {
    /// Parse, resolve names, fold constants and lower to a tape.
    ///
    /// # Errors
    /// Syntax errors, unknown names (with the closest known name within edit
    /// distance 2 as a suggestion), wrong arities, trailing tokens, empty
    /// input, non-finite literals, constant subexpressions that are not
    /// finite, division by a constant zero, a non-positive constant base
    /// under a variable exponent, and expressions nested beyond the limits;
    /// each with its 1-based column.
    pub fn compile(source: &str, scope: &Scope) -> Result<Expr, ExprError> {
        Self::compile_tree(source, parse::parse(source, scope)?, scope)
    }

    /// Compile the definition `name` of `scope` on its own (its text, with
    /// a use of `name` inside it refused as a cycle): what checking a
    /// definition needs, with errors placed in the definition's text.
    ///
    /// # Errors
    /// As [`compile`](Self::compile), and
    /// [`ExprErrorKind::UnknownName`] (column 1) when `scope` has no
    /// definition `name`.
    pub fn compile_definition(name: &str, scope: &Scope) -> Result<Expr, ExprError> {
        let Some(source) = scope.definition(name) else {
            return Err(ExprError::new(
                ExprErrorKind::UnknownName {
                    name: name.to_owned(),
                    suggestion: None,
                },
                1,
            ));
        };
        Self::compile_tree(source, parse::parse_definition(name, scope)?, scope)
    }

    fn compile_tree(source: &str, tree: parse::Node, scope: &Scope) -> Result<Expr, ExprError> {
        Self::from_folded(
            source.to_owned(),
            lower::fold(tree)?,
            scope.variable_count(),
        )
    }

    /// The tape of a folded tree over `n_vars` slots (a constant when the
    /// tree folded to a number).
    fn from_folded(source: String, tree: parse::Node, n_vars: usize) -> Result<Expr, ExprError> {
        let (program, constant) = match tree.kind {
            parse::Kind::Num(c) => (
                lower::Program {
                    ops: Vec::new(),
                    slots: 0,
                    registers: 0,
                },
                Some(c),
            ),
            _ => (lower::lower(&tree)?, None),
        };
        Ok(Expr {
            source,
            ops: program.ops.into_boxed_slice(),
            slots: program.slots,
            registers: program.registers,
            n_vars,
            constant,
        })
    }

    /// The source text it was compiled from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Number of variable slots the expression is evaluated over (the
    /// scope's variable count).
    pub fn variable_count(&self) -> usize {
        self.n_vars
    }

    /// `Some(c)` when the expression does not depend on any variable
    /// (after folding parameters), so callers can skip evaluating it.
    pub fn constant_value(&self) -> Option<f64> {
        self.constant
    }

    /// Whether evaluation reads variable slot `slot`: whether the
    /// expression, after folding its parameters and definitions, depends on
    /// that variable at all (a structural test, exact).
    pub fn reads_variable(&self, slot: usize) -> bool {
        self.ops.iter().any(|op| match *op {
            Op::LoadVar(i)
            | Op::PushVar(i)
            | Op::LoadSquareVar(i)
            | Op::PushSquareVar(i)
            | Op::LoadSinVar(i)
            | Op::PushSinVar(i)
            | Op::LoadCosVar(i)
            | Op::PushCosVar(i)
            | Op::SinCosVar { var: i, .. }
            | Op::AddVar(i)
            | Op::SubVar(i)
            | Op::MulVar(i)
            | Op::DivVar(i) => i as usize == slot,
            _ => false,
        })
    }

    /// Number of tape instructions (0 for a constant).
    pub fn tape_len(&self) -> usize {
        self.ops.len()
    }

    /// Slots of the evaluation array: the values kept below the accumulator
    /// plus the registers sharing `sin x`/`cos x` of a variable between
    /// their occurrences.
    pub fn stack_depth(&self) -> usize {
        self.slots
    }

    /// Panics unless `n` is the number of variable slots (a programming
    /// error of the caller).
    #[track_caller]
    #[inline]
    fn check_slots(&self, n: usize) {
        assert_eq!(
            n, self.n_vars,
            "expression `{}` has {} variable slots",
            self.source, self.n_vars
        );
    }

    /// The value of a constant expression at the first variable `first`
    /// (`first * 0.0 + c`, see [`eval`](Self::eval)), `None` for the others.
    #[inline]
    fn constant_at<S: AdScalar>(&self, first: Option<&S>) -> Option<S> {
        self.constant
            .map(|c| first.map_or_else(|| S::from(c), |&t| t * 0.0 + c))
    }

    /// The value and the gradient in every variable slot, by reverse mode
    /// over the tape (one forward and one backward pass, whatever the
    /// number of slots; docs/theory.md §12.5). Over dual scalars the
    /// gradient's derivative parts are the second derivatives along the
    /// values' directions (reverse over forward).
    ///
    /// # Panics
    /// If `vars.len()` differs from [`variable_count`](Self::variable_count).
    #[track_caller]
    pub fn eval_gradient<S: AdScalar>(&self, vars: &[S]) -> (S, Vec<S>) {
        self.check_slots(vars.len());
        match self.constant_at(vars.first()) {
            Some(value) => (value, vec![S::zero(); vars.len()]),
            None => eval::reverse(&self.ops, self.registers, vars),
        }
    }

    /// Evaluate at `vars` (indexed by slot).
    ///
    /// A constant expression returns `vars[0] * 0.0 + c`, so its derivative
    /// parts are present and zero whenever those of `vars[0]` are (a num-dual
    /// constant from `S::from(c)` stores them as absent, see
    /// `diracvi_geometry::ad`); with no variables at all it returns
    /// `S::from(c)`. Constants needed inside an expression are built the same
    /// way; most never become scalars (they are immediate operands).
    ///
    /// # Panics
    /// If `vars.len()` differs from [`variable_count`](Self::variable_count)
    /// (a programming error of the caller).
    #[inline]
    #[track_caller]
    pub fn eval<S: AdScalar>(&self, vars: &[S]) -> S {
        self.check_slots(vars.len());
        match self.constant_at(vars.first()) {
            Some(value) => value,
            None => eval::run(&self.ops, self.slots, self.registers, &One(vars)),
        }
    }

    /// Evaluate with the slots split over two slices: slots
    /// `0..first.len()` from `first`, the others from `second` (e.g. `q`
    /// and `v` without copying them into one buffer).
    ///
    /// # Panics
    /// If `first.len() + second.len()` differs from
    /// [`variable_count`](Self::variable_count).
    #[inline]
    #[track_caller]
    pub fn eval_split<S: AdScalar>(&self, first: &[S], second: &[S]) -> S {
        self.check_slots(first.len() + second.len());
        match self.constant_at(first.first().or(second.first())) {
            Some(value) => value,
            None if first.is_empty() => {
                eval::run(&self.ops, self.slots, self.registers, &One(second))
            }
            None => eval::run(&self.ops, self.slots, self.registers, &Two(first, second)),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::eval::Op;
    use super::*;

    fn scope() -> Scope {
        let mut s = Scope::with_variables(["x", "y"]).unwrap();
        s.add_parameter("a", 2.0).unwrap();
        s
    }

    fn ops(src: &str) -> Vec<Op> {
        Expr::compile(src, &scope()).unwrap().ops.to_vec()
    }

    /// `reads_variable` sees every instruction that reads a variable (loads,
    /// pushes, squares, sines and cosines, in-place arithmetic), and a
    /// parameter (folded into a constant) is not a variable.
    #[test]
    fn reads_variable_sees_each_way_of_reading() {
        let reads = |src: &str| {
            let e = Expr::compile(src, &scope()).unwrap();
            (e.reads_variable(0), e.reads_variable(1))
        };
        for (src, expected) in [
            ("x", (true, false)),
            ("a + y", (false, true)),
            ("x^2 * a", (true, false)),
            ("sin(y) + cos(y)", (false, true)),
            ("cos(x) * 3", (true, false)),
            ("a * 2 + y", (false, true)),
            ("a - x * y", (true, true)),
            ("a / x", (true, false)),
            ("a", (false, false)),
            ("3 * a + 1", (false, false)),
        ] {
            assert_eq!(reads(src), expected, "{src}");
        }
    }

    /// The reverse sweep over dual values against forward hyper-duals: the
    /// gradient in every slot and its derivative along a direction, for
    /// every kind of instruction (stack, registers, immediates, branches).
    #[test]
    fn reverse_over_forward_matches_hyper_duals() {
        use num_dual::{Dual64, HyperDual64};
        let scope = Scope::with_variables(["x", "y", "z"]).unwrap();
        let (x, dir) = ([0.7, 1.3, -0.4], [0.3, -1.1, 0.6]);
        for src in [
            "sin(x)*cos(y) + x^2*y - y^3 + x/y - z*x*y",
            "sqrt(x^2 + y^2) + atan2(y, x) - atan2(x, z) + atan2(z, -y)",
            "exp(x*y) + log(x) - tan(y) + abs(x - y) + abs(z) + min(x, y)*max(x*y, z)",
            "min(x, 0.3) + max(z, 2) + min(z, 0) + max(0.5, y)",
            "x^y + 2^x + x^1.5 + (x + y)^-2 + 3/(x + y) - 1/z + (1 - z)^3",
            "-(x - y)*x/(y*2) + sin(x) + cos(x) + sin(x)*cos(x)*sin(z) + cos(z)^2",
            "0.5*(x + y)*(y - z)*(z + x*(y - 1/(1 + x^2)))",
        ] {
            let e = Expr::compile(src, &scope).unwrap();
            let duals: Vec<Dual64> = (0..3).map(|i| Dual64::new(x[i], dir[i])).collect();
            let (value, bars) = e.eval_gradient(&duals);
            for (k, bar) in bars.iter().enumerate() {
                let h: Vec<HyperDual64> = (0..3)
                    .map(|i| HyperDual64::new(x[i], f64::from(u8::from(i == k)), dir[i], 0.0))
                    .collect();
                let f = e.eval(&h);
                assert!(
                    (value.re - f.re).abs() <= 1e-14 * f.re.abs().max(1.0),
                    "{src}"
                );
                let tol = 1e-13 * f.eps1.abs().max(f.eps1eps2.abs()).max(1.0);
                assert!((bar.re - f.eps1).abs() <= tol, "{src}: ∂/∂x{k}");
                assert!(
                    (bar.eps - f.eps1eps2).abs() <= tol,
                    "{src}: ∂²/∂x{k}∂d {} vs {}",
                    bar.eps,
                    f.eps1eps2
                );
            }
        }
    }

    #[test]
    fn literals_and_parameters_become_immediates() {
        assert_eq!(ops("x * a"), vec![Op::LoadVar(0), Op::MulC(2.0)]);
        assert_eq!(ops("a * x"), vec![Op::LoadVar(0), Op::MulC(2.0)]);
        assert_eq!(ops("1 - x"), vec![Op::LoadVar(0), Op::RSubC(1.0)]);
        assert_eq!(ops("x - 1"), vec![Op::LoadVar(0), Op::AddC(-1.0)]);
        assert_eq!(ops("a / x"), vec![Op::LoadVar(0), Op::RDivC(2.0)]);
        assert_eq!(ops("x / a"), vec![Op::LoadVar(0), Op::DivC(2.0)]);
        // multiplying or dividing by one is exact: no instruction
        assert_eq!(ops("1 * x^2"), vec![Op::LoadSquareVar(0)]);
        assert_eq!(ops("(a - 1) * x"), vec![Op::LoadVar(0)]);
        assert_eq!(ops("x / 1"), vec![Op::LoadVar(0)]);
        assert_eq!(ops("1 / x"), vec![Op::LoadVar(0), Op::RDivC(1.0)]);
        assert_eq!(ops("x^2"), vec![Op::LoadSquareVar(0)]);
        assert_eq!(
            ops("(x+1)^2"),
            vec![Op::LoadVar(0), Op::AddC(1.0), Op::Square]
        );
        assert_eq!(ops("x^-3"), vec![Op::LoadVar(0), Op::PowI(-3)]);
        assert_eq!(ops("x^0.5"), vec![Op::LoadVar(0), Op::Sqrt]);
        assert_eq!(ops("x^1.5"), vec![Op::LoadVar(0), Op::PowF(1.5)]);
        assert_eq!(
            ops("a^x"),
            vec![Op::LoadVar(0), Op::ExpMulC(std::f64::consts::LN_2)]
        );
        assert_eq!(ops("min(x, 0)"), vec![Op::LoadVar(0), Op::MinC(0.0)]);
        assert_eq!(ops("max(1, x)"), vec![Op::LoadVar(0), Op::MaxC(1.0)]);
        // parameter-only subexpressions fold: 0.5*a*a = 2
        assert_eq!(
            ops("0.5*a*a*x*y"),
            vec![Op::LoadVar(0), Op::MulC(2.0), Op::MulVar(1)]
        );
        // x * (compound): compound first, then the fused variable
        assert_eq!(
            ops("x * (y + 1)"),
            vec![Op::LoadVar(1), Op::AddC(1.0), Op::MulVar(0)]
        );
        assert_eq!(
            ops("x*y - sin(x)"),
            vec![Op::LoadVar(0), Op::MulVar(1), Op::PushSinVar(0), Op::Sub]
        );
    }

    #[test]
    fn sin_and_cos_of_a_variable_are_computed_once() {
        use super::eval::SinCosFlags;
        let e = Expr::compile("cos(x)*y - sin(x)*x + sin(x) + cos(y)", &scope()).unwrap();
        assert_eq!(
            e.ops.to_vec(),
            vec![
                Op::SinCosVar {
                    var: 0,
                    registers: 0,
                    flags: SinCosFlags {
                        cos: true,
                        keep_sin: true,
                        keep_cos: false,
                        push: false
                    }
                },
                Op::MulVar(1),
                Op::PushReg(0),
                Op::MulVar(0),
                Op::Sub,
                Op::PushReg(0),
                Op::Add,
                Op::PushCosVar(1),
                Op::Add,
            ]
        );
        // two registers below a stack of one
        assert_eq!(e.stack_depth(), 3);
        let (x, y) = (0.7_f64, -1.3_f64);
        let expected = x.cos() * y - x.sin() * x + x.sin() + y.cos();
        assert!((e.eval(&[x, y]) - expected).abs() < 1e-15);
    }

    #[test]
    fn constants_fold_completely() {
        let e = Expr::compile("2*a^2 - sqrt(16) + cos(pi)", &scope()).unwrap();
        assert_eq!(e.constant_value(), Some(8.0 - 4.0 - 1.0));
        assert_eq!(e.tape_len(), 0);
        assert!(
            Expr::compile("x", &scope())
                .unwrap()
                .constant_value()
                .is_none()
        );
    }

    #[test]
    fn stack_depth_is_tight() {
        let e = Expr::compile("x", &scope()).unwrap();
        assert_eq!(e.stack_depth(), 0);
        let e = Expr::compile("x*y - sin(x)", &scope()).unwrap();
        assert_eq!(e.stack_depth(), 1);
        let e = Expr::compile("x - (y - (x - (y - x)))", &scope()).unwrap();
        assert_eq!(e.stack_depth(), 3);
    }
}
