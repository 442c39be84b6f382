//! Constant folding and lowering of the syntax tree to the tape.
//!
//! Folding evaluates every subexpression made of literals and parameters
//! only, with the same `f64` semantics the tape has. Lowering then turns
//! literals into immediate operands wherever an operation allows one
//! (`x + c`, `c - x`, `x * c`, `c / x`, `x ^ n`, `c ^ x`, `min(x, c)`, …), so
//! constants almost never become AD scalars, and fuses variable operands
//! (`acc * x[i]`).

use super::Func;
use super::error::{ExprError, ExprErrorKind};
use super::eval::{self, MAX_STACK, Op, PowPlan, SinCosFlags};
use super::parse::{ChainOp, Kind, Node};
use std::collections::HashMap;

/// Fold constant subexpressions bottom-up.
pub(crate) fn fold(node: Node) -> Result<Node, ExprError> {
    let col = node.col;
    let kind = match node.kind {
        k @ (Kind::Num(_) | Kind::Var(_)) => k,
        Kind::Neg(inner) => {
            let inner = fold(*inner)?;
            match inner.kind {
                Kind::Num(v) => Kind::Num(-v),
                Kind::Neg(x) => x.kind,
                _ => Kind::Neg(Box::new(inner)),
            }
        }
        Kind::Chain(terms) => {
            let mut folded = Vec::with_capacity(terms.len());
            for (op, t) in terms {
                folded.push((op, fold(t)?));
            }
            // fold the constant prefix (left to right, as evaluated)
            let mut prefix: Option<(f64, usize)> = None;
            for (op, t) in &folded {
                let Kind::Num(v) = t.kind else { break };
                prefix = Some(match prefix {
                    None => (v, 1),
                    Some((acc, n)) => (apply_chain(*op, acc, v), n + 1),
                });
            }
            match prefix {
                Some((value, n)) if n == folded.len() => finite(value, col)?,
                Some((value, n)) if n > 1 => {
                    let first_op = folded[0].0;
                    let first_col = folded[0].1.col;
                    let rest = folded.split_off(n);
                    let mut terms = vec![(
                        first_op,
                        Node {
                            kind: finite(value, first_col)?,
                            col: first_col,
                        },
                    )];
                    terms.extend(rest);
                    Kind::Chain(terms)
                }
                _ => Kind::Chain(folded),
            }
        }
        Kind::Pow(base, exponent) => {
            let base = fold(*base)?;
            let exponent = fold(*exponent)?;
            match (&base.kind, &exponent.kind) {
                (Kind::Num(b), Kind::Num(e)) => finite(PowPlan::for_exponent(*e).apply(*b), col)?,
                _ => Kind::Pow(Box::new(base), Box::new(exponent)),
            }
        }
        Kind::Call(func, args) => {
            let mut folded = Vec::with_capacity(args.len());
            for a in args {
                folded.push(fold(a)?);
            }
            let values: Option<Vec<f64>> = folded
                .iter()
                .map(|a| match a.kind {
                    Kind::Num(v) => Some(v),
                    _ => None,
                })
                .collect();
            match values {
                Some(v) => finite(apply_func(func, &v), col)?,
                None => Kind::Call(func, folded),
            }
        }
    };
    Ok(Node { kind, col })
}

fn finite(value: f64, col: usize) -> Result<Kind, ExprError> {
    if value.is_finite() {
        Ok(Kind::Num(value))
    } else {
        Err(ExprError::new(
            ExprErrorKind::NonFiniteConstant { value },
            col,
        ))
    }
}

fn apply_chain(op: ChainOp, a: f64, b: f64) -> f64 {
    match op {
        ChainOp::Add => a + b,
        ChainOp::Sub => a - b,
        ChainOp::Mul => a * b,
        ChainOp::Div => a / b,
    }
}

/// A function on constants, with the tape's semantics.
fn apply_func(func: Func, v: &[f64]) -> f64 {
    match (func, v) {
        (Func::Sqrt, [x]) => x.sqrt(),
        (Func::Sin, [x]) => x.sin(),
        (Func::Cos, [x]) => x.cos(),
        (Func::Tan, [x]) => x.tan(),
        (Func::Exp, [x]) => x.exp(),
        (Func::Log, [x]) => x.ln(),
        (Func::Abs, [x]) => eval::abs(*x),
        (Func::Min, [a, b]) => eval::min(*a, *b),
        (Func::Max, [a, b]) => eval::max(*a, *b),
        (Func::Atan2, [y, x]) => y.atan2(*x),
        // arity is checked by the parser
        _ => f64::NAN,
    }
}

/// The lowered program.
pub(crate) struct Program {
    pub ops: Vec<Op>,
    /// Slots of the evaluation array: registers, then the stack below the
    /// accumulator.
    pub slots: usize,
    /// Registers at the bottom of the array (where the stack starts).
    pub registers: usize,
}

/// At most this many variables get their `sin`/`cos` shared (two registers
/// each).
const MAX_SHARED_ANGLES: usize = 8;

/// Per variable: how often `sin(x)` and `cos(x)` occur, and where their
/// shared values live once computed.
#[derive(Clone, Copy, Debug, Default)]
struct Trig {
    sin: usize,
    cos: usize,
    registers: Option<u32>,
    computed: bool,
}

struct Lowerer {
    ops: Vec<Op>,
    /// Values alive (accumulator included).
    live: usize,
    max_live: usize,
    trig: HashMap<u32, Trig>,
}

fn count_trig(node: &Node, counts: &mut HashMap<u32, Trig>) {
    match &node.kind {
        Kind::Num(_) | Kind::Var(_) => {}
        Kind::Neg(x) => count_trig(x, counts),
        Kind::Chain(terms) => terms.iter().for_each(|(_, t)| count_trig(t, counts)),
        Kind::Pow(a, b) => {
            count_trig(a, counts);
            count_trig(b, counts);
        }
        Kind::Call(func, args) => {
            if let (Func::Sin | Func::Cos, [arg]) = (func, args.as_slice())
                && let Kind::Var(i) = arg.kind
            {
                let t = counts.entry(i).or_default();
                if *func == Func::Sin {
                    t.sin += 1;
                } else {
                    t.cos += 1;
                }
            }
            args.iter().for_each(|a| count_trig(a, counts));
        }
    }
}

/// Lower a folded, non-constant tree.
pub(crate) fn lower(node: &Node) -> Result<Program, ExprError> {
    let program = lower_with(node, MAX_SHARED_ANGLES)?;
    if program.slots <= MAX_STACK {
        return Ok(program);
    }
    // the shared sin/cos registers are an optimisation: never fail for them
    let program = lower_with(node, 0)?;
    if program.slots > MAX_STACK {
        return Err(ExprError::new(
            ExprErrorKind::StackTooDeep {
                depth: program.slots,
                limit: MAX_STACK,
            },
            node.col,
        ));
    }
    Ok(program)
}

fn lower_with(node: &Node, shared_angles: usize) -> Result<Program, ExprError> {
    let mut trig = HashMap::new();
    if shared_angles > 0 {
        count_trig(node, &mut trig);
    }
    // registers for the variables whose sin/cos occur more than once, in slot order
    let mut shared: Vec<u32> = trig
        .iter()
        .filter(|(_, t)| t.sin + t.cos >= 2)
        .map(|(&i, _)| i)
        .collect();
    shared.sort_unstable();
    shared.truncate(shared_angles);
    let mut registers = 0u32;
    for i in &shared {
        if let Some(t) = trig.get_mut(i) {
            t.registers = Some(registers);
            registers += 2;
        }
    }
    let mut l = Lowerer {
        ops: Vec::new(),
        live: 0,
        max_live: 0,
        trig,
    };
    l.node(node)?;
    let registers = registers as usize;
    Ok(Program {
        ops: fuse(l.ops),
        slots: registers + l.max_live.saturating_sub(1),
        registers,
    })
}

/// Peephole fusion of a variable load with the unary operation after it
/// (`x^2`, `sin(x)`, `cos(x)`: kinetic energies and rotations), which saves
/// copying the variable into the accumulator.
fn fuse(ops: Vec<Op>) -> Vec<Op> {
    let mut out = Vec::with_capacity(ops.len());
    let mut it = ops.into_iter().peekable();
    while let Some(op) = it.next() {
        let fused = match (op, it.peek()) {
            (Op::LoadVar(i), Some(Op::Square)) => Op::LoadSquareVar(i),
            (Op::PushVar(i), Some(Op::Square)) => Op::PushSquareVar(i),
            (Op::LoadVar(i), Some(Op::Sin)) => Op::LoadSinVar(i),
            (Op::PushVar(i), Some(Op::Sin)) => Op::PushSinVar(i),
            (Op::LoadVar(i), Some(Op::Cos)) => Op::LoadCosVar(i),
            (Op::PushVar(i), Some(Op::Cos)) => Op::PushCosVar(i),
            _ => {
                out.push(op);
                continue;
            }
        };
        it.next();
        out.push(fused);
    }
    out
}

fn is_leaf(node: &Node) -> bool {
    matches!(node.kind, Kind::Num(_) | Kind::Var(_))
}

impl Lowerer {
    fn leaf(&mut self, var: Option<u32>, c: f64) {
        let op = match (var, self.live) {
            (Some(i), 0) => Op::LoadVar(i),
            (Some(i), _) => Op::PushVar(i),
            (None, 0) => Op::LoadConst(c),
            (None, _) => Op::PushConst(c),
        };
        self.ops.push(op);
        self.live += 1;
        self.max_live = self.max_live.max(self.live);
    }

    fn binary(&mut self, op: Op) {
        self.ops.push(op);
        self.live -= 1;
    }

    fn node(&mut self, node: &Node) -> Result<(), ExprError> {
        match &node.kind {
            Kind::Num(c) => self.leaf(None, *c),
            Kind::Var(i) => self.leaf(Some(*i), 0.0),
            Kind::Neg(inner) => {
                self.node(inner)?;
                self.ops.push(Op::Neg);
            }
            Kind::Chain(terms) => self.chain(terms)?,
            Kind::Pow(base, exponent) => match (&base.kind, &exponent.kind) {
                (_, Kind::Num(e)) => {
                    self.node(base)?;
                    match PowPlan::for_exponent(*e) {
                        PowPlan::One => {
                            self.ops.push(Op::MulC(0.0));
                            self.ops.push(Op::AddC(1.0));
                        }
                        PowPlan::Identity => {}
                        PowPlan::Square => self.ops.push(Op::Square),
                        PowPlan::Sqrt => self.ops.push(Op::Sqrt),
                        PowPlan::Int(n) => self.ops.push(Op::PowI(n)),
                        PowPlan::Real(e) => self.ops.push(Op::PowF(e)),
                    }
                }
                (Kind::Num(c), _) => {
                    if *c <= 0.0 {
                        return Err(ExprError::new(
                            ExprErrorKind::NonPositiveBase { base: *c },
                            base.col,
                        ));
                    }
                    self.node(exponent)?;
                    self.ops.push(Op::ExpMulC(c.ln()));
                }
                _ => {
                    self.node(base)?;
                    self.node(exponent)?;
                    self.binary(Op::Pow);
                }
            },
            Kind::Call(func, args) => self.call(*func, args)?,
        }
        Ok(())
    }

    /// `sin(x[i])` or `cos(x[i])` when `x[i]` has shared registers: the
    /// first occurrence computes both with `sin_cos` and keeps what later
    /// occurrences need; the others read it back.
    fn shared_trig(&mut self, func: Func, i: u32) -> bool {
        let Some(t) = self.trig.get_mut(&i) else {
            return false;
        };
        let Some(base) = t.registers else {
            return false;
        };
        let is_cos = func == Func::Cos;
        let push = self.live > 0;
        let op = if t.computed {
            let r = base + u32::from(is_cos);
            if push { Op::PushReg(r) } else { Op::LoadReg(r) }
        } else {
            t.computed = true;
            let (sin_left, cos_left) = if is_cos {
                (t.sin, t.cos - 1)
            } else {
                (t.sin - 1, t.cos)
            };
            Op::SinCosVar {
                var: i,
                registers: base,
                flags: SinCosFlags {
                    cos: is_cos,
                    keep_sin: sin_left > 0,
                    keep_cos: cos_left > 0,
                    push,
                },
            }
        };
        self.ops.push(op);
        self.live += 1;
        self.max_live = self.max_live.max(self.live);
        true
    }

    fn call(&mut self, func: Func, args: &[Node]) -> Result<(), ExprError> {
        if let (Func::Sin | Func::Cos, [arg]) = (func, args)
            && let Kind::Var(i) = arg.kind
            && self.shared_trig(func, i)
        {
            return Ok(());
        }
        match (func, args) {
            (Func::Min | Func::Max, [a, b]) => {
                let with_const = match (&a.kind, &b.kind) {
                    (_, Kind::Num(c)) => Some((a, *c)),
                    (Kind::Num(c), _) => Some((b, *c)),
                    _ => None,
                };
                if let Some((x, c)) = with_const {
                    self.node(x)?;
                    self.ops.push(if func == Func::Min {
                        Op::MinC(c)
                    } else {
                        Op::MaxC(c)
                    });
                } else {
                    self.node(a)?;
                    self.node(b)?;
                    self.binary(if func == Func::Min { Op::Min } else { Op::Max });
                }
            }
            (Func::Atan2, [y, x]) => {
                self.node(y)?;
                self.node(x)?;
                self.binary(Op::Atan2);
            }
            (_, [x]) => {
                self.node(x)?;
                self.ops.push(match func {
                    Func::Sqrt => Op::Sqrt,
                    Func::Sin => Op::Sin,
                    Func::Cos => Op::Cos,
                    Func::Tan => Op::Tan,
                    Func::Exp => Op::Exp,
                    Func::Log => Op::Ln,
                    _ => Op::Abs,
                });
            }
            // arity is checked by the parser; nothing else reaches here
            _ => {}
        }
        Ok(())
    }

    /// `((t0 op1 t1) op2 t2) …` after folding: at most the first term is a
    /// constant, and then the second is not.
    fn chain(&mut self, terms: &[(ChainOp, Node)]) -> Result<(), ExprError> {
        let mut rest = terms.iter();
        if let (Some((_, t0)), Some((op1, t1))) = (terms.first(), terms.get(1)) {
            match (&t0.kind, op1) {
                // c op t1: evaluate t1, then apply c as an immediate
                (Kind::Num(c), _) => {
                    self.node(t1)?;
                    match op1 {
                        ChainOp::Add => self.ops.push(Op::AddC(*c)),
                        ChainOp::Sub => self.ops.push(Op::RSubC(*c)),
                        ChainOp::Mul => self.mul_const(*c),
                        ChainOp::Div => self.ops.push(Op::RDivC(*c)),
                    }
                    rest.nth(1);
                }
                // x + t1, x * t1 with t1 compound: t1 first, then fuse x (commutative)
                (Kind::Var(i), ChainOp::Add | ChainOp::Mul) if !is_leaf(t1) => {
                    self.node(t1)?;
                    self.ops.push(if *op1 == ChainOp::Add {
                        Op::AddVar(*i)
                    } else {
                        Op::MulVar(*i)
                    });
                    rest.nth(1);
                }
                _ => {
                    self.node(t0)?;
                    rest.next();
                }
            }
        }
        for (op, t) in rest {
            match t.kind {
                Kind::Num(c) => match op {
                    ChainOp::Add => self.add_const(c),
                    ChainOp::Sub => self.add_const(-c),
                    ChainOp::Mul => self.mul_const(c),
                    ChainOp::Div if c == 0.0 => {
                        return Err(ExprError::new(ExprErrorKind::DivisionByZero, t.col));
                    }
                    // `x / 1` is `x`, exactly
                    ChainOp::Div if c.to_bits() == 1f64.to_bits() => {}
                    ChainOp::Div => self.ops.push(Op::DivC(c)),
                },
                Kind::Var(i) => self.ops.push(match op {
                    ChainOp::Add => Op::AddVar(i),
                    ChainOp::Sub => Op::SubVar(i),
                    ChainOp::Mul => Op::MulVar(i),
                    ChainOp::Div => Op::DivVar(i),
                }),
                _ => {
                    self.node(t)?;
                    self.binary(match op {
                        ChainOp::Add => Op::Add,
                        ChainOp::Sub => Op::Sub,
                        ChainOp::Mul => Op::Mul,
                        ChainOp::Div => Op::Div,
                    });
                }
            }
        }
        Ok(())
    }

    fn mul_const(&mut self, c: f64) {
        // `x * 1` is `x`, exactly (a parameter set to 1: `f1*cos(q)^2`)
        if c.to_bits() != 1f64.to_bits() {
            self.ops.push(Op::MulC(c));
        }
    }

    fn add_const(&mut self, c: f64) {
        // `x + 0` is `x` (up to the sign of a zero)
        if c != 0.0 {
            self.ops.push(Op::AddC(c));
        }
    }
}
