//! The interpreter's arithmetic: what a tape instruction computes with.
//!
//! [`TapeScalar`] is the set of operations the instructions use, each
//! taking its operands by value; every [`AdScalar`] is one, through
//! num-dual's own operations (so the numbers are bit for bit those of
//! calling num-dual directly). With the instructions written over these
//! by-value methods, the compiler copies the large hyper-dual numbers of
//! the Jacobian passes (`HyperDualSVec64<3, 3>` is 16 doubles and three
//! tags) inline; written directly over num-dual's methods, which take
//! `&self`, it called `memcpy` for them, and a hyper-dual evaluation of
//! the sleigh's Lagrangian took 134–140 ns instead of 88–94 ns (`cargo
//! bench -p diracvi-expr --bench eval`, the two builds alternated).

use diracvi_geometry::AdScalar;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub};

/// What the interpreter computes with: the arithmetic of the tape's
/// instructions, operands by value. Every [`AdScalar`] is one
/// (num-dual's own operations).
pub(crate) trait TapeScalar:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Add<f64, Output = Self>
    + Sub<f64, Output = Self>
    + Mul<f64, Output = Self>
    + AddAssign
    + AddAssign<f64>
    + MulAssign<f64>
    + DivAssign<f64>
{
    /// A filler value (never read before it is written).
    fn filler() -> Self;
    /// The real part.
    fn real(&self) -> f64;
    /// `1/x`.
    fn inv(self) -> Self;
    /// `x^n`.
    fn pow_i(self, n: i32) -> Self;
    /// `x^e`.
    fn pow_f(self, e: f64) -> Self;
    /// `x^y`, both variable.
    fn pow_d(self, y: Self) -> Self;
    /// `√x`.
    fn root(self) -> Self;
    /// `sin x`.
    fn sine(self) -> Self;
    /// `cos x`.
    fn cosine(self) -> Self;
    /// `(sin x, cos x)`.
    fn sine_cosine(self) -> (Self, Self);
    /// `tan x`.
    fn tangent(self) -> Self;
    /// `eˣ`.
    fn exponential(self) -> Self;
    /// `ln x`.
    fn logarithm(self) -> Self;
    /// `atan x`.
    fn arctangent(self) -> Self;
}

impl<S: AdScalar> TapeScalar for S {
    #[inline(always)]
    fn filler() -> Self {
        S::zero()
    }
    #[inline(always)]
    fn real(&self) -> f64 {
        self.re()
    }
    #[inline(always)]
    fn inv(self) -> Self {
        self.recip()
    }
    #[inline(always)]
    fn pow_i(self, n: i32) -> Self {
        self.powi(n)
    }
    #[inline(always)]
    fn pow_f(self, e: f64) -> Self {
        self.powf(e)
    }
    #[inline(always)]
    fn pow_d(self, y: Self) -> Self {
        self.powd(y)
    }
    #[inline(always)]
    fn root(self) -> Self {
        self.sqrt()
    }
    #[inline(always)]
    fn sine(self) -> Self {
        self.sin()
    }
    #[inline(always)]
    fn cosine(self) -> Self {
        self.cos()
    }
    #[inline(always)]
    fn sine_cosine(self) -> (Self, Self) {
        self.sin_cos()
    }
    #[inline(always)]
    fn tangent(self) -> Self {
        self.tan()
    }
    #[inline(always)]
    fn exponential(self) -> Self {
        self.exp()
    }
    #[inline(always)]
    fn logarithm(self) -> Self {
        self.ln()
    }
    #[inline(always)]
    fn arctangent(self) -> Self {
        self.atan()
    }
}
