//! argmin's Brent solvers behind one concrete function type.
//!
//! The impact time `α`, the Hamiltonian law's `ν` and the grazing
//! fallbacks are scalar problems solved with argmin's `BrentRoot` and
//! `BrentOpt`. Handed their own cost-function types, argmin's executor and
//! solvers were compiled again for every stepper, law and system size (90
//! copies of `Executor::run` in `diracvi-run` alone, about a tenth of its
//! code). Here each solver is compiled once, over `&dyn Fn(f64)`; a call
//! through it costs nanoseconds beside a trial step's microseconds, and the
//! iterates are the same numbers as before.

use argmin::core::{CostFunction, Error, Executor, IterState};
use argmin::solver::brent::{BrentOpt, BrentRoot};

/// A scalar function of one real variable, as argmin evaluates it.
pub(crate) type Scalar<'a> = &'a dyn Fn(f64) -> Result<f64, Error>;

/// The state a Brent solve ends in (parameter, best parameter, iteration
/// count, termination reason).
pub(crate) type BrentState = IterState<f64, (), (), (), (), f64>;

struct Erased<'a>(Scalar<'a>);

impl CostFunction for Erased<'_> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, x: &f64) -> Result<f64, Error> {
        (self.0)(*x)
    }
}

/// A root of `f` in `[lo, hi]` (`f(lo)`, `f(hi)` of opposite signs) to the
/// absolute tolerance `tol`, in at most `max_iters` iterations.
///
/// # Errors
/// The first error of `f`, or argmin's.
pub(crate) fn root(
    f: Scalar<'_>,
    lo: f64,
    hi: f64,
    tol: f64,
    max_iters: u64,
) -> Result<BrentState, Error> {
    Ok(Executor::new(Erased(f), BrentRoot::new(lo, hi, tol))
        .configure(|s| s.max_iters(max_iters))
        .run()?
        .state)
}

/// A minimiser of `f` on `[lo, hi]` (Brent's method with the relative and
/// absolute tolerances `eps`, `t`), in at most `max_iters` iterations.
///
/// # Errors
/// The first error of `f`, or argmin's.
pub(crate) fn minimum(
    f: Scalar<'_>,
    lo: f64,
    hi: f64,
    (eps, t): (f64, f64),
    max_iters: u64,
) -> Result<BrentState, Error> {
    Ok(
        Executor::new(Erased(f), BrentOpt::new(lo, hi).set_tolerance(eps, t))
            .configure(|s| s.max_iters(max_iters))
            .run()?
            .state,
    )
}
