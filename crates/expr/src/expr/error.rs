//! Errors of expression compilation and of scope building.

use thiserror::Error;

/// Why an expression did not compile, with the 1-based character column in
/// the expression source where the problem starts.
///
/// The column counts characters (not bytes) from the start of the source;
/// a line break inside the source counts as one character. Problems found at
/// the end of the input point one past the last character.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{kind} at column {column}")]
pub struct ExprError {
    /// What went wrong.
    pub kind: ExprErrorKind,
    /// 1-based character column in the expression source.
    pub column: usize,
}

impl ExprError {
    pub(crate) fn new(kind: ExprErrorKind, column: usize) -> Self {
        Self { kind, column }
    }
}

/// The kinds of [`ExprError`].
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ExprErrorKind {
    /// The source is empty or only whitespace.
    #[error("empty expression")]
    Empty,
    /// A character that starts no token.
    #[error("unexpected character `{0}`")]
    UnexpectedChar(char),
    /// A number that does not parse (e.g. `1e`).
    #[error("malformed number `{0}`")]
    MalformedNumber(String),
    /// A number literal too large to be finite (e.g. `1e999`).
    #[error("number `{0}` is not finite")]
    NonFiniteLiteral(String),
    /// A token where something else was needed.
    #[error("expected {expected}, found {found}")]
    Unexpected {
        /// What the grammar needed here.
        expected: &'static str,
        /// What was there (`` `)` ``, ``name `y` ``, `end of input`, …).
        found: String,
    },
    /// Tokens after a complete expression.
    #[error("unexpected {found} after the end of the expression (a missing operator?)")]
    Trailing {
        /// The first extra token.
        found: String,
    },
    /// A name that is neither a variable, a parameter nor `pi`.
    #[error("unknown name `{name}`{}", did_you_mean(suggestion.as_deref()))]
    UnknownName {
        /// The unknown name.
        name: String,
        /// The closest known name within edit distance 2, if any.
        suggestion: Option<String>,
    },
    /// A call of a name that is not a function.
    #[error("unknown function `{name}`{}", did_you_mean(suggestion.as_deref()))]
    UnknownFunction {
        /// The unknown function name.
        name: String,
        /// The closest function name within edit distance 2, if any.
        suggestion: Option<String>,
    },
    /// A variable, parameter or `pi` followed by `(`.
    #[error("`{name}` is not a function (write `*` for a product)")]
    NotAFunction {
        /// The name that was called.
        name: String,
    },
    /// A function name used as a value.
    #[error("function `{name}` needs its arguments in parentheses")]
    MissingArguments {
        /// The function name.
        name: String,
    },
    /// A function called with the wrong number of arguments.
    #[error("`{function}` takes {expected} argument{}, found {found}", plural(*expected))]
    Arity {
        /// The function.
        function: &'static str,
        /// How many arguments it takes.
        expected: usize,
        /// How many it was given.
        found: usize,
    },
    /// A subexpression of literals and parameters only evaluates to NaN or
    /// infinity (e.g. `1/0`, or `log(R)` with `R = 0`).
    #[error("this constant subexpression evaluates to {value}, which is not finite")]
    NonFiniteConstant {
        /// The folded value.
        value: f64,
    },
    /// A division by a constant zero (e.g. `x / (2*m)` with `m = 0`).
    #[error("division by zero (the divisor is a constant 0)")]
    DivisionByZero,
    /// `c ^ e` with a constant base `c ≤ 0` and an exponent depending on
    /// variables (evaluated as `exp(e ln c)`, undefined for `c ≤ 0`).
    #[error(
        "the constant base {base} of `^` must be positive when the exponent depends on variables"
    )]
    NonPositiveBase {
        /// The constant base.
        base: f64,
    },
    /// A derivative asked for through `abs`, `min` or `max` of something
    /// that depends on the variable ([`derivative`](super::derivative)).
    #[error(
        "`{function}` of the variable has no derivative everywhere: write the relation without it"
    )]
    NotDifferentiable {
        /// The function.
        function: String,
    },
    /// Parentheses, unary signs, powers or calls nested too deeply.
    #[error("expression nested too deeply (more than {limit} levels)")]
    TooDeep {
        /// The nesting limit.
        limit: usize,
    },
    /// A definition (`[definitions]` of a model file, or
    /// [`Scope::add_definition`](super::Scope::add_definition)) that does not
    /// compile where it is used (e.g. it uses a momentum `p_x` and is used in
    /// the Lagrangian). The column is that of the use.
    #[error("definition `{name}` does not compile here: {} (column {} of the definition)", .error.kind, .error.column)]
    InDefinition {
        /// The definition used.
        name: String,
        /// The error inside its text (column in the definition's text).
        error: Box<ExprError>,
    },
    /// Definitions that refer to each other in a cycle (`a` uses `b`, `b`
    /// uses `a`).
    #[error("definitions refer to each other in a cycle: {}", .cycle.join(" -> "))]
    DefinitionCycle {
        /// The cycle, its first name repeated at the end.
        cycle: Vec<String>,
    },
    /// The expression would need a longer evaluation stack than allowed.
    #[error(
        "expression needs an evaluation stack of {depth} values (limit {limit}); split it with fewer nested parentheses"
    )]
    StackTooDeep {
        /// Stack slots needed.
        depth: usize,
        /// The limit.
        limit: usize,
    },
}

fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion.map_or_else(String::new, |s| format!(" (did you mean `{s}`?)"))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Why a [`Scope`](super::Scope) rejected a name or a value.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ScopeError {
    /// Not an identifier (`[A-Za-z_][A-Za-z0-9_]*`).
    #[error("`{0}` is not a valid name (ASCII letters, digits and `_`, not starting with a digit)")]
    InvalidName(String),
    /// A function name or `pi`.
    #[error("`{0}` is reserved (a function name or the constant `pi`)")]
    Reserved(String),
    /// Already a variable or parameter of this scope.
    #[error("`{0}` is defined twice")]
    Duplicate(String),
    /// A parameter value that is NaN or infinite.
    #[error("parameter `{name}` = {value} is not finite")]
    NonFinite {
        /// The parameter.
        name: String,
        /// Its value.
        value: f64,
    },
    /// More variables than slot indices (`u32`) can address.
    #[error("too many variables ({0})")]
    TooManyVariables(usize),
}
