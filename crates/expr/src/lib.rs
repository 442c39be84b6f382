//! # diracvi-expr
//!
//! The expression engine and model-file reader behind
//! `diracvi run --model-file FILE.toml`: a model written as text (Lagrangian,
//! constraint one-forms, boundary pieces, optional Hamiltonian) is parsed
//! once into flat tapes ([`Expr`]) that evaluate generically over the AD
//! scalars of `diracvi-geometry` ([`diracvi_geometry::AdScalar`]: `f64`,
//! `Dual64`, `DualSVec`, `Dual2SVec`, `HyperDualSVec64`, …), so every
//! derivative the integrators need stays exact.
//!
//! * [`expr`] — syntax, [`Scope`], compilation to a tape, evaluation.
//! * [`model_file`] — the TOML schema, [`ModelFile`] (raw data, printing
//!   back; definitions, parameters and initial data as expressions,
//!   velocities solved from the constraints, the Legendre check of a given
//!   Hamiltonian), [`CompiledModel`] (evaluation helpers), located errors.
//!
//! ## Syntax
//!
//! * Numbers `1`, `2.5`, `.5`, `1e-3`; names `[A-Za-z_][A-Za-z0-9_]*`; the
//!   constant `pi`.
//! * Operators `+ - * /` (left-associative) and `^` (right-associative,
//!   binding tighter than unary minus: `-x^2 = -(x^2)`, `2^-1 = 0.5`,
//!   `2^3^2 = 512`); parentheses; unary `-` and `+`.
//! * Functions `sqrt sin cos tan exp log abs` (one argument; `log` is the
//!   natural logarithm) and `min max atan2` (two; `atan2(y, x)`).
//! * `abs`, `min` and `max` choose their branch by the real part of the
//!   scalar (ties: the first argument; a constant argument loses ties to a
//!   variable one); `atan2` has the derivative `(x dy − y dx)/(x² + y²)` in
//!   every quadrant, including on the axes.
//!
//! ## Slots
//!
//! A [`Scope`] numbers the variables `0..n_vars` in the order they are
//! added and holds parameter values; [`Expr::eval`] takes the variables as
//! a slice indexed by slot ([`Expr::eval_split`] as two slices). Model
//! files use `[q_0 … q_{n−1}, v_0 … v_{n−1}]` for the Lagrangian (velocity
//! names `<coord>_dot`), `[q …]` for constraints and boundaries, and
//! `[q …, p …]` for the Hamiltonian (momentum names `p_<coord>`).
//! Parameters are compile-time constants: a model with other parameter
//! values is compiled again ([`ModelFile::compile`] takes overrides).
//!
//! ## Error positions
//!
//! [`ExprError`] carries the 1-based *character* column in the expression
//! (one past the end for "unexpected end of input"). [`ModelFileError`]
//! names the file, the TOML key (`model.constraints[0][2]`,
//! `parameters.m`, …) and the 1-based line and column of the offending
//! value; for an error inside an expression, of the exact character in the
//! file (escape sequences counted as the character they decode to). TOML
//! syntax errors are located the same way.
//!
//! ## Performance
//!
//! * Compilation resolves names, folds every subexpression of literals and
//!   parameters (reporting a constant that is not finite, e.g. `log(R)`
//!   with `R = 0`, and a division by a constant zero), and lowers to a tape with an accumulator: literals become
//!   immediate `f64` operands (`x * c`, `x + c`, `c - x`, `c / x`,
//!   `x ^ n` by `powi`, `x ^ e` by `powf`, `x^2` as `x * x`, `x^0.5` as
//!   `sqrt`, `c ^ x` as `exp(x ln c)`, `min(x, c)`), and variable operands
//!   are fused (`acc * x[i]`).
//!   Loads of a variable followed by `^2`, `sin` or `cos` are fused, and
//!   when `sin x` and `cos x` of one variable occur more than once (rotations
//!   in a Lagrangian), they are computed once with `sin_cos` and kept in
//!   registers.
//! * Evaluation never allocates: the stack (and those registers) is an array
//!   on the Rust stack whose size class (4, 16 or 64 values) is chosen from
//!   the depth computed at compile time; expressions needing more than 64
//!   are rejected, as is nesting deeper than 100 levels.
//! * num-dual stores a derivative part known to be zero as `None`, and
//!   arithmetic on such sparse constants can stall on stale subnormal bits
//!   (see `diracvi_geometry::ad`). So constants are immediate operands
//!   wherever possible; a constant that must be a scalar (an argument of
//!   `atan2`, a constant result) is built as `x * 0.0 + c` from a variable,
//!   so its derivative parts are present and zero. Callers can test
//!   [`Expr::constant_value`] to skip constant entries (zeros of a
//!   constraint matrix) altogether.
//! * `cargo bench -p diracvi-expr --bench eval` compares the sleigh
//!   Lagrangian from a model file with the same function written in Rust,
//!   over `f64` and `HyperDualSVec64<3, 3>`.
#![doc = include_str!("../../../docs/dependent-profile.md")]

pub mod expr;
pub mod model_file;

pub use expr::{Expr, ExprError, ExprErrorKind, Scope, ScopeError};
pub use model_file::{
    CompiledDrawing, CompiledModel, DrawingHeading, DrawingShape, DrawingSpec, InitialState,
    InitialValue, InitialValues, ModelFile, ModelFileError, ModelFileErrorKind, ParametricModel,
    Position, RunSettings,
};
