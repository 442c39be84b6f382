//! The tape (flat bytecode) and its interpreter, generic over the AD scalar.
//!
//! The machine has an accumulator (the top of the stack) and a fixed-size
//! stack array on the Rust stack; the array length is chosen from the depth
//! the compiler computed, from a few size classes, so evaluation never
//! allocates and never initialises more stack than needed.

use super::scalar::TapeScalar;
use diracvi_geometry::AdScalar;
use std::f64::consts::{FRAC_PI_2, PI};

/// The longest evaluation stack an expression may need (values below the
/// accumulator).
pub(crate) const MAX_STACK: usize = 64;

/// One instruction. `acc` is the accumulator; "push" saves it on the stack
/// first; binary stack operations pop their left operand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Op {
    /// `acc = x[i]` (first instruction only).
    LoadVar(u32),
    /// `acc = c` (first instruction only), dense (see [`dense_constant`]).
    LoadConst(f64),
    /// push; `acc = x[i]`.
    PushVar(u32),
    /// push; `acc = c`, dense.
    PushConst(f64),
    /// `acc = x[i]²` (first instruction only).
    LoadSquareVar(u32),
    /// push; `acc = x[i]²`.
    PushSquareVar(u32),
    /// `acc = sin x[i]` (first instruction only).
    LoadSinVar(u32),
    /// push; `acc = sin x[i]`.
    PushSinVar(u32),
    /// `acc = cos x[i]` (first instruction only).
    LoadCosVar(u32),
    /// push; `acc = cos x[i]`.
    PushCosVar(u32),
    /// (push if `flags.push`;) `(s, c) = sin_cos(x[var])`; `acc = c` if
    /// `flags.cos`, else `s`; keep `s` in register `registers` and `c` in
    /// `registers + 1` as the flags say.
    SinCosVar {
        var: u32,
        registers: u32,
        flags: SinCosFlags,
    },
    /// `acc = register r` (first instruction only).
    LoadReg(u32),
    /// push; `acc = register r`.
    PushReg(u32),
    /// `acc = pop + acc`.
    Add,
    /// `acc = pop - acc`.
    Sub,
    /// `acc = pop * acc`.
    Mul,
    /// `acc = pop / acc`.
    Div,
    /// `acc = pop ^ acc` (both variable: `exp(acc ln pop)`).
    Pow,
    /// `acc = min(pop, acc)` by real part.
    Min,
    /// `acc = max(pop, acc)` by real part.
    Max,
    /// `acc = atan2(pop, acc)`.
    Atan2,
    /// `acc = acc + x[i]`.
    AddVar(u32),
    /// `acc = acc - x[i]`.
    SubVar(u32),
    /// `acc = acc * x[i]`.
    MulVar(u32),
    /// `acc = acc / x[i]`.
    DivVar(u32),
    /// `acc = acc + c` (also `acc - c` as `acc + (-c)`, which is exact).
    AddC(f64),
    /// `acc = acc * c`.
    MulC(f64),
    /// `acc = acc / c`.
    DivC(f64),
    /// `acc = c - acc`, computed as `(-acc) + c` (exact).
    RSubC(f64),
    /// `acc = c / acc`, computed as `recip(acc) * c`.
    RDivC(f64),
    /// `acc = acc^n`.
    PowI(i32),
    /// `acc = acc^e`.
    PowF(f64),
    /// `acc = exp(acc * k)`: `c^acc` with `k = ln c`.
    ExpMulC(f64),
    /// `acc = min(acc, c)`.
    MinC(f64),
    /// `acc = max(acc, c)`.
    MaxC(f64),
    /// `acc = -acc`.
    Neg,
    /// `acc = acc * acc`.
    Square,
    /// `acc = sqrt(acc)`.
    Sqrt,
    /// `acc = sin(acc)`.
    Sin,
    /// `acc = cos(acc)`.
    Cos,
    /// `acc = tan(acc)`.
    Tan,
    /// `acc = exp(acc)`.
    Exp,
    /// `acc = ln(acc)`.
    Ln,
    /// `acc = |acc|` by real part.
    Abs,
}

/// What [`Op::SinCosVar`] does with its two results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SinCosFlags {
    /// The accumulator gets the cosine (else the sine).
    pub cos: bool,
    /// Keep the sine for later.
    pub keep_sin: bool,
    /// Keep the cosine for later.
    pub keep_cos: bool,
    /// Push the accumulator first.
    pub push: bool,
}

/// How `x ^ e` with a constant exponent is evaluated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum PowPlan {
    /// `x^0 = 1` (built densely as `x * 0 + 1`).
    One,
    /// `x^1 = x`.
    Identity,
    /// `x * x`.
    Square,
    /// `sqrt(x)` for `e = 0.5`.
    Sqrt,
    /// `powi` for other integers in `i32` range.
    Int(i32),
    /// `powf` otherwise.
    Real(f64),
}

impl PowPlan {
    pub(crate) fn for_exponent(e: f64) -> Self {
        if e.to_bits() == 0.5f64.to_bits() {
            return Self::Sqrt;
        }
        if e.fract() == 0.0 && e.abs() <= f64::from(i32::MAX) {
            // exact: e is an integer within i32 range
            #[allow(clippy::cast_possible_truncation)]
            let n = e as i32;
            return match n {
                0 => Self::One,
                1 => Self::Identity,
                2 => Self::Square,
                n => Self::Int(n),
            };
        }
        Self::Real(e)
    }

    #[inline(always)]
    pub(crate) fn apply<S: TapeScalar>(self, x: S) -> S {
        match self {
            Self::One => x * 0.0 + 1.0,
            Self::Identity => x,
            Self::Square => x * x,
            Self::Sqrt => x.root(),
            Self::Int(n) => x.pow_i(n),
            Self::Real(e) => x.pow_f(e),
        }
    }
}

/// The constant `c` as a scalar whose derivative parts are present and zero
/// when `template`'s are: `template * 0 + c`.
#[inline(always)]
pub(crate) fn dense_constant<S: TapeScalar>(template: S, c: f64) -> S {
    template * 0.0 + c
}

/// `|x|`, choosing the branch by the real part (`abs'(0) = +1`).
#[inline(always)]
pub(crate) fn abs<S: TapeScalar>(x: S) -> S {
    if x.real() < 0.0 { -x } else { x }
}

/// `min(a, b)` by real part; ties return `a`.
#[inline(always)]
pub(crate) fn min<S: TapeScalar>(a: S, b: S) -> S {
    if b.real() < a.real() { b } else { a }
}

/// `max(a, b)` by real part; ties return `a`.
#[inline(always)]
pub(crate) fn max<S: TapeScalar>(a: S, b: S) -> S {
    if b.real() > a.real() { b } else { a }
}

/// `atan2(y, x)` with derivatives `(x dy − y dx)/(x² + y²)` in every quadrant.
///
/// Built from `atan` of the ratio with the smaller magnitude on top (so the
/// ratio never overflows, also on the `y` axis) plus the quadrant's constant
/// offset. At `(0, 0)` the derivative does not exist; the value of
/// `f64::atan2` is returned with zero derivative parts.
#[inline]
pub(crate) fn atan2<S: TapeScalar>(y: S, x: S) -> S {
    let (yr, xr) = (y.real(), x.real());
    if xr == 0.0 && yr == 0.0 {
        return dense_constant(x, yr.atan2(xr));
    }
    if xr.abs() >= yr.abs() {
        let t = (y / x).arctangent();
        if xr > 0.0 {
            t
        } else if yr.is_sign_negative() {
            t - PI
        } else {
            t + PI
        }
    } else {
        let t = (x / y).arctangent();
        if yr > 0.0 {
            -t + FRAC_PI_2
        } else {
            -t - FRAC_PI_2
        }
    }
}

/// Where the interpreter reads variable slots from.
pub(crate) trait Slots<S> {
    fn get(&self, i: usize) -> S;
}

/// Slots from one slice.
pub(crate) struct One<'a, S>(pub &'a [S]);

impl<S: Copy> Slots<S> for One<'_, S> {
    #[inline(always)]
    fn get(&self, i: usize) -> S {
        self.0[i]
    }
}

/// Slots `0..a.len()` from `a`, the rest from `b`.
pub(crate) struct Two<'a, S>(pub &'a [S], pub &'a [S]);

impl<S: Copy> Slots<S> for Two<'_, S> {
    #[inline(always)]
    fn get(&self, i: usize) -> S {
        match self.0.get(i) {
            Some(&x) => x,
            None => self.1[i - self.0.len()],
        }
    }
}

/// Run the tape `ops` needing `slots` array slots, the first `registers` of
/// them registers.
#[inline]
pub(crate) fn run<S: TapeScalar, V: Slots<S>>(
    ops: &[Op],
    slots: usize,
    registers: usize,
    vars: &V,
) -> S {
    match slots {
        0..=4 => exec::<S, V, 4>(ops, registers, vars),
        5..=16 => exec::<S, V, 16>(ops, registers, vars),
        _ => exec::<S, V, MAX_STACK>(ops, registers, vars),
    }
}

fn exec<S: TapeScalar, V: Slots<S>, const K: usize>(ops: &[Op], registers: usize, vars: &V) -> S {
    // Every slot is written before it is read (the compiler guarantees
    // it), so the initial values never enter the arithmetic: the cheapest
    // ones will do (num-dual's zero stores only the real part and the
    // absent-derivative tags, see `diracvi_geometry::ad`).
    let mut acc = S::filler();
    // registers at the bottom, then the stack
    let mut stack = [S::filler(); K];
    let mut sp = registers;
    macro_rules! push {
        ($value:expr) => {{
            stack[sp] = acc;
            sp += 1;
            acc = $value;
        }};
    }
    macro_rules! pop {
        () => {{
            sp -= 1;
            stack[sp]
        }};
    }
    for &op in ops {
        match op {
            Op::LoadVar(i) => acc = vars.get(i as usize),
            Op::LoadConst(c) => acc = dense_constant(vars.get(0), c),
            Op::PushVar(i) => push!(vars.get(i as usize)),
            Op::PushConst(c) => push!(dense_constant(vars.get(0), c)),
            Op::LoadSquareVar(i) => {
                let x = vars.get(i as usize);
                acc = x * x;
            }
            Op::PushSquareVar(i) => {
                let x = vars.get(i as usize);
                push!(x * x)
            }
            Op::LoadSinVar(i) => acc = vars.get(i as usize).sine(),
            Op::PushSinVar(i) => push!(vars.get(i as usize).sine()),
            Op::LoadCosVar(i) => acc = vars.get(i as usize).cosine(),
            Op::PushCosVar(i) => push!(vars.get(i as usize).cosine()),
            Op::SinCosVar {
                var,
                registers,
                flags,
            } => {
                if flags.push {
                    stack[sp] = acc;
                    sp += 1;
                }
                let (s, c) = vars.get(var as usize).sine_cosine();
                let r = registers as usize;
                if flags.keep_sin {
                    stack[r] = s;
                }
                if flags.keep_cos {
                    stack[r + 1] = c;
                }
                acc = if flags.cos { c } else { s };
            }
            Op::LoadReg(r) => acc = stack[r as usize],
            Op::PushReg(r) => {
                let value = stack[r as usize];
                push!(value)
            }
            Op::Add => acc = pop!() + acc,
            Op::Sub => acc = pop!() - acc,
            Op::Mul => acc = pop!() * acc,
            Op::Div => acc = pop!() / acc,
            Op::Pow => acc = pop!().pow_d(acc),
            Op::Min => acc = min(pop!(), acc),
            Op::Max => acc = max(pop!(), acc),
            Op::Atan2 => acc = atan2(pop!(), acc),
            Op::AddVar(i) => acc += vars.get(i as usize),
            Op::SubVar(i) => acc = acc - vars.get(i as usize),
            Op::MulVar(i) => acc = acc * vars.get(i as usize),
            Op::DivVar(i) => acc = acc / vars.get(i as usize),
            Op::AddC(c) => acc += c,
            Op::MulC(c) => acc *= c,
            Op::DivC(c) => acc /= c,
            Op::RSubC(c) => acc = -acc + c,
            Op::RDivC(c) => acc = acc.inv() * c,
            Op::PowI(n) => acc = acc.pow_i(n),
            Op::PowF(e) => acc = acc.pow_f(e),
            Op::ExpMulC(k) => acc = (acc * k).exponential(),
            Op::MinC(c) => {
                if acc.real() > c {
                    acc = dense_constant(acc, c);
                }
            }
            Op::MaxC(c) => {
                if acc.real() < c {
                    acc = dense_constant(acc, c);
                }
            }
            Op::Neg => acc = -acc,
            Op::Square => acc = acc * acc,
            Op::Sqrt => acc = acc.root(),
            Op::Sin => acc = acc.sine(),
            Op::Cos => acc = acc.cosine(),
            Op::Tan => acc = acc.tangent(),
            Op::Exp => acc = acc.exponential(),
            Op::Ln => acc = acc.logarithm(),
            Op::Abs => acc = abs(acc),
        }
    }
    acc
}

/// The value of the tape `ops` at `vars` and its gradient in every variable
/// slot, by reverse mode (docs/theory.md §12.5): one forward pass that
/// keeps the accumulator before each instruction and the operand each
/// binary instruction pops, then one backward pass carrying the adjoints
/// of the accumulator, the stack and the registers. Over dual scalars
/// (values `x + ε ẋ`), the adjoints are duals too: their `ε` parts are the
/// derivatives of the gradient along `ẋ` (reverse over forward).
///
/// The branches (`min`, `max`, `|x|`, clamps) are taken as in [`run`].
pub(crate) fn reverse<S: AdScalar>(ops: &[Op], registers: usize, vars: &[S]) -> (S, Vec<S>) {
    let zero = S::zero();
    let mut bars = vec![zero; vars.len()];
    if ops.is_empty() {
        return (zero, bars);
    }
    // forward, keeping acc before each op and each popped operand
    let mut before = Vec::with_capacity(ops.len());
    let mut popped = Vec::with_capacity(ops.len());
    let mut regs = vec![zero; registers];
    let mut stack: Vec<S> = Vec::with_capacity(16);
    let mut acc = zero;
    let var = |i: u32| vars[i as usize];
    for &op in ops {
        before.push(acc);
        let mut pop = zero;
        macro_rules! push {
            ($value:expr) => {{
                stack.push(acc);
                acc = $value;
            }};
        }
        macro_rules! pop {
            () => {{
                pop = stack.pop().unwrap_or(zero);
                pop
            }};
        }
        match op {
            Op::LoadVar(i) => acc = var(i),
            Op::LoadConst(c) => acc = dense_constant(vars[0], c),
            Op::PushVar(i) => push!(var(i)),
            Op::PushConst(c) => push!(dense_constant(vars[0], c)),
            Op::LoadSquareVar(i) => acc = var(i) * var(i),
            Op::PushSquareVar(i) => push!(var(i) * var(i)),
            Op::LoadSinVar(i) => acc = var(i).sin(),
            Op::PushSinVar(i) => push!(var(i).sin()),
            Op::LoadCosVar(i) => acc = var(i).cos(),
            Op::PushCosVar(i) => push!(var(i).cos()),
            Op::SinCosVar {
                var: v,
                registers: r,
                flags,
            } => {
                if flags.push {
                    stack.push(acc);
                }
                let (s, c) = var(v).sin_cos();
                let r = r as usize;
                if flags.keep_sin {
                    regs[r] = s;
                }
                if flags.keep_cos {
                    regs[r + 1] = c;
                }
                acc = if flags.cos { c } else { s };
            }
            Op::LoadReg(r) => acc = regs[r as usize],
            Op::PushReg(r) => push!(regs[r as usize]),
            Op::Add => acc = pop!() + acc,
            Op::Sub => acc = pop!() - acc,
            Op::Mul => acc = pop!() * acc,
            Op::Div => acc = pop!() / acc,
            Op::Pow => acc = pop!().powd(acc),
            Op::Min => acc = min(pop!(), acc),
            Op::Max => acc = max(pop!(), acc),
            Op::Atan2 => acc = atan2(pop!(), acc),
            Op::AddVar(i) => acc += var(i),
            Op::SubVar(i) => acc -= var(i),
            Op::MulVar(i) => acc *= var(i),
            Op::DivVar(i) => acc /= var(i),
            Op::AddC(c) => acc += c,
            Op::MulC(c) => acc *= c,
            Op::DivC(c) => acc /= c,
            Op::RSubC(c) => acc = -acc + c,
            Op::RDivC(c) => acc = acc.recip() * c,
            Op::PowI(n) => acc = acc.powi(n),
            Op::PowF(e) => acc = acc.powf(e),
            Op::ExpMulC(k) => acc = (acc * k).exp(),
            Op::MinC(c) => {
                if acc.re() > c {
                    acc = dense_constant(acc, c);
                }
            }
            Op::MaxC(c) => {
                if acc.re() < c {
                    acc = dense_constant(acc, c);
                }
            }
            Op::Neg => acc = -acc,
            Op::Square => acc = acc * acc,
            Op::Sqrt => acc = acc.sqrt(),
            Op::Sin => acc = acc.sin(),
            Op::Cos => acc = acc.cos(),
            Op::Tan => acc = acc.tan(),
            Op::Exp => acc = acc.exp(),
            Op::Ln => acc = acc.ln(),
            Op::Abs => acc = abs(acc),
        }
        popped.push(pop);
    }
    let value = acc;
    // backward: adjoints of the accumulator, the stack and the registers
    let mut abar = S::one();
    let mut sbar: Vec<S> = Vec::with_capacity(16);
    let mut rbar = vec![zero; registers];
    let mut after = value;
    for (idx, &op) in ops.iter().enumerate().rev() {
        let a = before[idx];
        let p = popped[idx];
        let res = after;
        // the adjoint of the accumulator saved by a push
        let unpush = |sbar: &mut Vec<S>| sbar.pop().unwrap_or(zero);
        match op {
            Op::LoadVar(i) => {
                bars[i as usize] += abar;
                abar = zero;
            }
            Op::LoadConst(_) => abar = zero,
            Op::PushVar(i) => {
                bars[i as usize] += abar;
                abar = unpush(&mut sbar);
            }
            Op::PushConst(_) => abar = unpush(&mut sbar),
            Op::LoadSquareVar(i) | Op::PushSquareVar(i) => {
                bars[i as usize] += abar * var(i) * 2.0;
                abar = if matches!(op, Op::PushSquareVar(_)) {
                    unpush(&mut sbar)
                } else {
                    zero
                };
            }
            Op::LoadSinVar(i) | Op::PushSinVar(i) => {
                bars[i as usize] += abar * var(i).cos();
                abar = if matches!(op, Op::PushSinVar(_)) {
                    unpush(&mut sbar)
                } else {
                    zero
                };
            }
            Op::LoadCosVar(i) | Op::PushCosVar(i) => {
                bars[i as usize] -= abar * var(i).sin();
                abar = if matches!(op, Op::PushCosVar(_)) {
                    unpush(&mut sbar)
                } else {
                    zero
                };
            }
            Op::SinCosVar {
                var: v,
                registers: r,
                flags,
            } => {
                let (s, c) = var(v).sin_cos();
                let r = r as usize;
                // adjoints of sin and cos: the accumulator's and the kept registers'
                let (mut s_bar, mut c_bar) = if flags.cos {
                    (zero, abar)
                } else {
                    (abar, zero)
                };
                if flags.keep_sin {
                    s_bar += rbar[r];
                    rbar[r] = zero;
                }
                if flags.keep_cos {
                    c_bar += rbar[r + 1];
                    rbar[r + 1] = zero;
                }
                bars[v as usize] += s_bar * c - c_bar * s;
                abar = if flags.push { unpush(&mut sbar) } else { zero };
            }
            Op::LoadReg(r) => {
                rbar[r as usize] += abar;
                abar = zero;
            }
            Op::PushReg(r) => {
                rbar[r as usize] += abar;
                abar = unpush(&mut sbar);
            }
            Op::Add => sbar.push(abar),
            Op::Sub => {
                sbar.push(abar);
                abar = -abar;
            }
            Op::Mul => {
                sbar.push(abar * a);
                abar *= p;
            }
            Op::Div => {
                sbar.push(abar / a);
                abar = -abar * res / a;
            }
            Op::Pow => {
                // res = p^a
                sbar.push(abar * a * p.powd(a - 1.0));
                abar = abar * res * p.ln();
            }
            Op::Min | Op::Max => {
                // `min(pop, acc)`/`max(pop, acc)` return the accumulator
                // when it wins strictly by real part, else the popped operand
                let acc_won = match op {
                    Op::Min => a.re() < p.re(),
                    _ => a.re() > p.re(),
                };
                if acc_won {
                    sbar.push(zero);
                } else {
                    sbar.push(abar);
                    abar = zero;
                }
            }
            Op::Atan2 => {
                // res = atan2(y = p, x = a)
                if a.re() == 0.0 && p.re() == 0.0 {
                    sbar.push(zero);
                    abar = zero;
                } else {
                    let r2 = a * a + p * p;
                    sbar.push(abar * a / r2);
                    abar = -abar * p / r2;
                }
            }
            Op::AddVar(i) => bars[i as usize] += abar,
            Op::SubVar(i) => bars[i as usize] -= abar,
            Op::MulVar(i) => {
                bars[i as usize] += abar * a;
                abar *= var(i);
            }
            Op::DivVar(i) => {
                let x = var(i);
                bars[i as usize] -= abar * res / x;
                abar /= x;
            }
            Op::AddC(_) => {}
            Op::MulC(c) => abar *= c,
            Op::DivC(c) => abar /= c,
            Op::RSubC(_) | Op::Neg => abar = -abar,
            Op::RDivC(_) => abar = -abar * res / a,
            Op::PowI(n) => abar = abar * a.powi(n - 1) * f64::from(n),
            Op::PowF(e) => abar = abar * a.powf(e - 1.0) * e,
            Op::ExpMulC(k) => abar = abar * res * k,
            Op::MinC(c) => {
                if a.re() > c {
                    abar = zero;
                }
            }
            Op::MaxC(c) => {
                if a.re() < c {
                    abar = zero;
                }
            }
            Op::Square => abar = abar * a * 2.0,
            Op::Sqrt => abar /= res * 2.0,
            Op::Sin => abar *= a.cos(),
            Op::Cos => abar = -abar * a.sin(),
            Op::Tan => abar *= res * res + 1.0,
            Op::Exp => abar *= res,
            Op::Ln => abar /= a,
            Op::Abs => {
                if a.re() < 0.0 {
                    abar = -abar;
                }
            }
        }
        after = a;
    }
    (value, bars)
}
