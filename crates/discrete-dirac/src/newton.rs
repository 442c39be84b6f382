//! Newton's method for the per-step equations ([`Newton`]), over a
//! [`LinearSolver`] that owns the Jacobian's storage and its factors: by
//! default the dense LU [`DenseLu`] (partial pivoting, in place, no
//! allocation) with its rank-revealing fallback (faer SVD, minimum-norm step)
//! for singular Jacobians. The iteration (convergence test, simplified
//! Newton with kept factors, the last correction, polishing; docs/theory.md
//! §3.7) is the same for every linear solver.
//!
//! The factors a solve leaves are held by the solver as an explicit state
//! ([`LinearSolver::factors`]): a later [`Newton::solve_simplified`] starts
//! from them when they are there, [`Newton::clear_factors`] drops them, and a
//! factorization that finds the Jacobian singular leaves none.

use crate::linear::{DenseLu, Factorization, LinearSolver, Singular};
use diracvi_geometry::GeometryError;
use nalgebra::{DMatrix, DVector};

/// Parameters of the Newton solve.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct NewtonParams {
    /// Converged when `‖r‖∞ ≤ tolerance · scale`, where `scale` is the
    /// equation scale reported by the residual (default 1e-12).
    pub tolerance: f64,
    /// Bound on the iterations (default 40).
    pub max_iterations: usize,
    /// A pivot below `singular_threshold · max|J|` marks the Jacobian
    /// singular (default 1e-12).
    pub singular_threshold: f64,
    /// Extra iterations after convergence, kept while they reduce the
    /// residual (default 0): polishes a solution to the round-off floor.
    pub polish_iterations: usize,
}

impl Default for NewtonParams {
    fn default() -> Self {
        Self {
            tolerance: 1e-12,
            max_iterations: 40,
            singular_threshold: 1e-12,
            polish_iterations: 0,
        }
    }
}

impl NewtonParams {
    /// With the given residual tolerance.
    pub fn with_tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// With the given iteration bound.
    pub fn with_max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// With up to `n` polishing iterations after convergence.
    pub fn with_polish(mut self, n: usize) -> Self {
        self.polish_iterations = n;
        self
    }
}

/// Statistics of a converged solve.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct NewtonInfo {
    /// Newton iterations (linear solves) taken.
    pub iterations: usize,
    /// Final scaled residual `‖r‖∞ / scale`.
    pub residual: f64,
    /// How many iterations used the rank-revealing fallback.
    pub rank_deficient_iterations: usize,
    /// Jacobians evaluated by the solve (not counting one handed in by the
    /// caller); 0 when kept factors did all the work
    /// ([`Newton::solve_simplified`]).
    pub jacobian_evaluations: usize,
    /// Whether a last correction with the factors at hand followed the
    /// converged iterate (the returned solution is that corrected iterate,
    /// whose residual was not evaluated).
    pub final_correction: bool,
}

/// Why a solve failed (the stepper adds step index and time).
#[derive(Debug, Clone, PartialEq)]
pub enum NewtonFailure {
    /// Iteration bound reached.
    NoConvergence {
        /// Iterations taken.
        iterations: usize,
        /// Last scaled residual.
        residual: f64,
    },
    /// NaN or infinity in the residual or the iterate.
    NonFinite {
        /// What became non-finite.
        what: &'static str,
        /// Iterations taken.
        iterations: usize,
    },
    /// The residual could not be evaluated.
    Geometry(GeometryError),
}

/// [`Newton::solve_simplified`] stops at `SIMPLIFIED_MARGIN · tolerance` (or at the
/// round-off floor), not at the tolerance: the linear convergence of kept
/// factors would otherwise leave the solution less accurate than a Newton
/// solve, whose last step overshoots quadratically. (The degenerate
/// Lagrange–Dirac step uses it: its hidden-constraint rows carry a factor
/// `h`, so their tolerance alone would admit an `O(tolerance / h)` error in
/// the algebraic variables.)
pub const SIMPLIFIED_MARGIN: f64 = 1e-2;

/// Largest residual ratio `‖r_{k+1}‖ / ‖r_k‖` accepted from a step with
/// kept (older) Jacobian factors before [`Newton::solve_simplified`] evaluates the
/// Jacobian and continues with full Newton steps.
pub const SIMPLIFIED_CONTRACTION: f64 = 0.1;

/// Largest residual ratio `‖r_{k+1}‖ / ‖r_k‖` after a full Newton step for
/// which the next step reuses that step's Jacobian factors instead of
/// evaluating the Jacobian again (they then stay in use while they contract
/// by [`SIMPLIFIED_CONTRACTION`]). A ratio this small means the iteration is
/// in Newton's quadratic regime, where the Jacobian at the new iterate
/// differs from the factored one by `O(‖r_k‖)`: a step with the old factors
/// contracts almost as much as a fresh one, for a residual evaluation
/// instead of a Jacobian evaluation and a factorization. (A warm-started
/// step typically lands its first Newton step just at the tolerance: the
/// second step needs no new Jacobian.)
pub const REUSE_CONTRACTION: f64 = 1e-3;

/// A full Newton step that fails to halve the residual has met the
/// round-off floor of the residual's evaluation; the solve then accepts a
/// residual up to `STALL_BAND · tolerance` (and fails above it).
pub const STALL_BAND: f64 = 1e2;

/// Newton's method over a [`LinearSolver`]: the buffers of an `n`-unknown
/// solve (allocated once) and the solver, which holds the factors kept from
/// one solve to the next.
///
/// The residual functions write the Jacobian into [`Newton::jac`], whose
/// type the solver chooses ([`DMatrix<f64>`] for the default [`DenseLu`]);
/// the iteration itself never looks inside it.
#[derive(Debug, Clone)]
pub struct Newton<LS: LinearSolver = DenseLu> {
    /// Residual at the current iterate.
    pub r: DVector<f64>,
    /// Jacobian at the current iterate.
    pub jac: LS::Jacobian,
    solver: LS,
    dx: DVector<f64>,
    /// The best iterate of a polishing solve.
    best: DVector<f64>,
}

impl Newton<DenseLu> {
    /// Newton with a dense LU for `n` unknowns and `n` equations.
    pub fn new(n: usize) -> Self {
        Self::with_solver(DenseLu::new(n))
    }
}

impl<LS: LinearSolver> Newton<LS> {
    /// Newton over the given linear solver (of [`LinearSolver::size`]
    /// unknowns).
    pub fn with_solver(solver: LS) -> Self {
        let n = solver.size();
        Self {
            r: DVector::zeros(n),
            jac: solver.new_jacobian(),
            solver,
            dx: DVector::zeros(n),
            best: DVector::zeros(n),
        }
    }

    /// Number of unknowns.
    pub fn size(&self) -> usize {
        self.r.len()
    }

    /// The linear solver (and through it the factors it holds).
    pub fn solver(&self) -> &LS {
        &self.solver
    }

    /// Exchange the solver (and the factors it holds) with `other`, a
    /// solver of the same size and storage: a caller keeping the factors
    /// of several equations of the same form apart (the steps of the
    /// stages of a composition, one size each) swaps the right ones in.
    pub fn swap_solver(&mut self, other: &mut LS) {
        debug_assert_eq!(self.solver.size(), other.size(), "swap_solver: size");
        std::mem::swap(&mut self.solver, other);
    }

    /// Whether the solver holds factors (of the last Jacobian factored; see
    /// [`solve_simplified`](Self::solve_simplified)).
    pub fn has_factors(&self) -> bool {
        self.solver.factors().is_some()
    }

    /// Drop the factors the solver holds, so that
    /// [`solve_simplified`](Self::solve_simplified) cannot reuse them (call
    /// when the equations change, e.g. when their rows are recombined).
    pub fn clear_factors(&mut self) {
        self.solver.clear_factors();
    }

    /// Factor the Jacobian in [`jac`](Self::jac) and keep the factors, with
    /// `params.singular_threshold`; the factors serve a following
    /// [`solve_lazy`](Self::solve_lazy) with `factored`.
    ///
    /// # Errors
    /// [`Singular`] when the Jacobian is numerically singular by the pivot
    /// test (then no factors are held).
    pub fn factor(&mut self, params: &NewtonParams) -> Result<(), Singular> {
        self.solver
            .factor(&self.jac, params.singular_threshold)
            .map(|_| ())
    }

    /// Newton's method on `r(x) = 0`.
    ///
    /// `eval(x, r, jac)` writes the residual and Jacobian at `x` and returns
    /// the equation scale (convergence: `‖r‖∞ ≤ tolerance · scale`). If
    /// `evaluated` is `Some(scale)`, [`r`](Self::r)/[`jac`](Self::jac)
    /// already hold the evaluation at `x`.
    ///
    /// # Errors
    /// [`NewtonFailure`] when the iteration bound is reached, a value becomes
    /// non-finite, or the residual cannot be evaluated.
    pub fn solve<F>(
        &mut self,
        x: &mut DVector<f64>,
        params: &NewtonParams,
        evaluated: Option<f64>,
        eval: F,
    ) -> Result<NewtonInfo, NewtonFailure>
    where
        F: FnMut(&DVector<f64>, &mut DVector<f64>, &mut LS::Jacobian) -> Result<f64, GeometryError>,
    {
        let mut eval = eval;
        let start = match evaluated {
            Some(scale) => Start::Evaluated { scale },
            None => Start::Fresh,
        };
        self.iterate(x, params, start, false, &mut |x, r, j| match j {
            Some(j) => eval(x, r, j),
            None => unreachable!("`iterate` asks for the Jacobian on every evaluation"),
        })
    }

    /// [`solve`](Self::solve) for an `eval` that can skip the Jacobian:
    /// `eval(x, r, None)` writes only the residual (and returns the scale),
    /// `eval(x, r, Some(jac))` both, with the same residual and scale. The
    /// Jacobian is asked for only when a Newton step follows, so the final
    /// (converged) evaluation costs a residual only.
    ///
    /// `scale`: [`r`](Self::r)/[`jac`](Self::jac) already hold the
    /// evaluation at `x` with this equation scale. `factored`: moreover the
    /// solver holds the factors of that Jacobian, from
    /// [`factor`](Self::factor) (requires `scale`, and held factors).
    ///
    /// # Errors
    /// As [`solve`](Self::solve).
    ///
    /// # Panics
    /// When `factored` is claimed without `scale` or without held factors.
    pub fn solve_lazy<F>(
        &mut self,
        x: &mut DVector<f64>,
        params: &NewtonParams,
        scale: Option<f64>,
        factored: bool,
        eval: F,
    ) -> Result<NewtonInfo, NewtonFailure>
    where
        F: LazyEval<LS::Jacobian>,
    {
        let mut eval = eval;
        assert!(
            !factored || (scale.is_some() && self.has_factors()),
            "solve_lazy: `factored` needs the evaluation at x and its factors"
        );
        let start = match (scale, factored) {
            (Some(scale), true) => Start::Factored { scale },
            (Some(scale), false) => Start::Evaluated { scale },
            (None, _) => Start::Fresh,
        };
        self.iterate(x, params, start, true, &mut eval)
    }

    /// Simplified Newton (as in implicit Runge–Kutta codes):
    /// [`r`](Self::r) holds the residual at `x` with equation scale `scale`,
    /// and the solver may hold the factors of the Jacobian of an earlier
    /// solve of equations of the same form (the previous step's). Steps use
    /// those factors, with residual-only evaluations, as long as each
    /// reduces the residual by at least [`SIMPLIFIED_CONTRACTION`];
    /// otherwise the Jacobian is evaluated and the solve continues as
    /// [`solve_lazy`](Self::solve_lazy). Without held factors it is
    /// [`solve_lazy`](Self::solve_lazy) from an evaluated residual.
    /// Convergence is decided by the residual alone, which must reach
    /// [`SIMPLIFIED_MARGIN`]` · tolerance` (or stagnate at round-off).
    ///
    /// # Errors
    /// As [`solve`](Self::solve).
    pub fn solve_simplified<F>(
        &mut self,
        x: &mut DVector<f64>,
        params: &NewtonParams,
        scale: f64,
        eval: F,
    ) -> Result<NewtonInfo, NewtonFailure>
    where
        F: LazyEval<LS::Jacobian>,
    {
        let mut eval = eval;
        self.iterate(x, params, Start::Residual { scale }, true, &mut eval)
    }

    /// [`solve_simplified`](Self::solve_simplified) from the factors the
    /// solver holds and, should that fail while such factors were held, a
    /// fresh [`solve_lazy`](Self::solve_lazy) from `x` as it was (kept in
    /// `start`, a buffer of the same length): the steps that keep their
    /// factors from one step to the next (equations of the same form at
    /// the same `h`) and start again with full Newton when they no longer
    /// serve.
    ///
    /// # Errors
    /// As [`solve`](Self::solve).
    pub fn solve_kept<F>(
        &mut self,
        x: &mut DVector<f64>,
        start: &mut DVector<f64>,
        params: &NewtonParams,
        scale: f64,
        mut eval: F,
    ) -> Result<NewtonInfo, NewtonFailure>
    where
        F: LazyEval<LS::Jacobian>,
    {
        let kept = self.has_factors();
        start.copy_from(x);
        match self.solve_simplified(x, params, scale, &mut eval) {
            Err(_) if kept => {
                x.copy_from(start);
                self.clear_factors();
                self.solve_lazy(x, params, None, false, eval)
            }
            result => result,
        }
    }

    /// The iteration shared by the solves. `eval` comes as a trait object:
    /// the iteration is then compiled once per linear solver, not once per
    /// system, stepper and equation (an indirect call per evaluation, each
    /// of which differentiates the step equations).
    fn iterate(
        &mut self,
        x: &mut DVector<f64>,
        params: &NewtonParams,
        start: Start,
        lazy: bool,
        eval: &mut dyn LazyEval<LS::Jacobian>,
    ) -> Result<NewtonInfo, NewtonFailure> {
        let Self {
            r,
            jac,
            solver,
            dx,
            best: best_x,
        } = self;
        let mut info = NewtonInfo::default();
        let mut polish = 0;
        // The scaled residual of the best iterate of a polishing solve
        // (the iterate itself is in `best_x`).
        let mut best: Option<f64> = None;
        let held = solver.factors().is_some();
        let (mut evaluated, mut factors) = match start {
            Start::Fresh => (None, Factors::None),
            Start::Evaluated { scale } => (Some((scale, true)), Factors::None),
            Start::Factored { scale } => (Some((scale, true)), Factors::Current),
            Start::Residual { scale } if held => (Some((scale, false)), Factors::Kept),
            Start::Residual { scale } => (Some((scale, false)), Factors::None),
        };
        let mut previous_residual = f64::INFINITY;
        // Whether the solver holds factors belonging to this solve (of one
        // of its Jacobians, or the kept ones of a simplified solve).
        let mut factors_here = matches!(factors, Factors::Current | Factors::Kept);
        // Whether the last step used the factors of the Jacobian at its
        // iterate (a full Newton step), which converges quadratically.
        let mut last_step_exact = false;
        let strict = matches!(start, Start::Residual { .. });
        loop {
            let (scale, mut have_jacobian) = match evaluated.take() {
                Some(e) => e,
                None if lazy => (eval(x, r, None).map_err(NewtonFailure::Geometry)?, false),
                None => {
                    info.jacobian_evaluations += 1;
                    (
                        eval(x, r, Some(&mut *jac)).map_err(NewtonFailure::Geometry)?,
                        true,
                    )
                }
            };
            let (largest, finite) = max_abs_finite(r.as_slice());
            let res = largest / scale;
            if !res.is_finite() || !finite {
                return Err(NewtonFailure::NonFinite {
                    what: "residual",
                    iterations: info.iterations,
                });
            }
            if let Some(best_res) = best {
                // Polishing: keep going only while the residual shrinks.
                if res >= best_res || polish >= params.polish_iterations {
                    if res >= best_res {
                        x.copy_from(best_x);
                        info.residual = best_res;
                    } else {
                        info.residual = res;
                    }
                    return Ok(info);
                }
            }
            info.residual = res;
            // With kept factors the residual shrinks only linearly, so it
            // lands just under the tolerance where Newton's quadratic step
            // would have overshot to round-off: a simplified solve goes on to
            // `SIMPLIFIED_MARGIN · tolerance` (also after switching to
            // Newton), or until the residual stagnates at its round-off
            // floor.
            //
            // A full Newton step that no longer halves the residual has
            // reached the round-off floor of the equations' evaluation
            // (quadratic convergence would have overshot far below): accept
            // that floor if it is within `STALL_BAND` of the tolerance (e.g.
            // a Hamiltonian singular on a set the motion crosses). The
            // residual reported is the real one.
            let stalled = res > 0.5 * previous_residual;
            let converged = (res <= params.tolerance
                && (!strict || res <= SIMPLIFIED_MARGIN * params.tolerance || stalled))
                || (last_step_exact && stalled && res <= STALL_BAND * params.tolerance);
            if converged {
                if params.polish_iterations == 0 {
                    // One last correction with the factors at hand (of this
                    // solve's latest Jacobian, or the kept ones): no
                    // evaluation, one triangular solve. It takes the error of
                    // the accepted iterate, up to `tolerance`, down to about
                    // its square. A solve stopped at the tolerance leaves an
                    // error of the same sign step after step, which adds up
                    // linearly over a run (impact times of the midpoint
                    // pendulum lost their second order below h = 5e-5);
                    // corrected, what is left is round-off. (A later
                    // factorization that found the Jacobian singular has
                    // dropped the factors: then there is no correction.)
                    if factors_here
                        && res > 0.0
                        && let Some(f) = solver.factors()
                    {
                        dx.copy_from(r);
                        f.solve_in_place(dx);
                        if dx.iter().all(|v| v.is_finite()) {
                            *x -= &*dx;
                            info.final_correction = true;
                        }
                    }
                    return Ok(info);
                }
                if best.is_some() {
                    polish += 1;
                }
                best = Some(res);
                best_x.copy_from(x);
            }
            if info.iterations >= params.max_iterations {
                return Err(NewtonFailure::NoConvergence {
                    iterations: info.iterations,
                    residual: res,
                });
            }
            if factors == Factors::Kept && res > SIMPLIFIED_CONTRACTION * previous_residual {
                // The kept factors no longer contract fast enough: Newton.
                factors = Factors::None;
            }
            if last_step_exact
                && factors == Factors::None
                && res <= REUSE_CONTRACTION * previous_residual
                && solver.factors().is_some()
            {
                // Quadratic regime: the last step's factors serve the next.
                factors = Factors::Kept;
            }
            previous_residual = res;
            if factors == Factors::None && !have_jacobian {
                eval(x, r, Some(&mut *jac)).map_err(NewtonFailure::Geometry)?;
                info.jacobian_evaluations += 1;
                have_jacobian = true;
            }
            last_step_exact = factors != Factors::Kept;
            let at_hand = match factors {
                Factors::Kept => solver.factors(),
                Factors::Current => {
                    factors = Factors::None;
                    solver.factors()
                }
                Factors::None => solver.factor(jac, params.singular_threshold).ok(),
            };
            match at_hand {
                Some(f) => {
                    factors_here = true;
                    dx.copy_from(r);
                    f.solve_in_place(dx);
                }
                None => {
                    debug_assert!(have_jacobian);
                    info.rank_deficient_iterations += 1;
                    if !solver.solve_rank_deficient(jac, params.singular_threshold, r, dx) {
                        return Err(NewtonFailure::NonFinite {
                            what: "Jacobian",
                            iterations: info.iterations,
                        });
                    }
                }
            }
            let finite = subtract_finite(x.as_mut_slice(), dx.as_slice());
            info.iterations += 1;
            if !finite {
                return Err(NewtonFailure::NonFinite {
                    what: "iterate",
                    iterations: info.iterations,
                });
            }
        }
    }
}

/// An evaluator of equations that can skip the Jacobian: `eval(x, r, None)`
/// writes the residual at `x` into `r`, `eval(x, r, Some(jac))` also the
/// Jacobian (of the solver's storage type `J`), with the same residual; both
/// return the equation scale (convergence: `‖r‖∞ ≤ tolerance · scale`).
pub trait LazyEval<J = DMatrix<f64>>:
    FnMut(&DVector<f64>, &mut DVector<f64>, Option<&mut J>) -> Result<f64, GeometryError>
{
}

impl<J, F> LazyEval<J> for F where
    F: FnMut(&DVector<f64>, &mut DVector<f64>, Option<&mut J>) -> Result<f64, GeometryError>
{
}

/// What the workspace holds when a solve starts.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// Nothing: evaluate at `x` first.
    Fresh,
    /// Residual and Jacobian at `x`, with this scale.
    Evaluated { scale: f64 },
    /// As `Evaluated`, and the solver holds the factors of that Jacobian.
    Factored { scale: f64 },
    /// The residual at `x` (no Jacobian), and possibly kept older factors.
    Residual { scale: f64 },
}

/// The factors the solver holds, relative to the current iterate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Factors {
    /// None usable: factor the Jacobian before the next step.
    None,
    /// Of the Jacobian at the current iterate.
    Current,
    /// Of an older Jacobian (simplified Newton).
    Kept,
}

/// Statistics of one step, for the trajectory driver (sums over the
/// sub-steps and solves of a step with impacts).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct StepStats {
    /// Newton iterations.
    pub iterations: usize,
    /// Jacobian evaluations.
    pub jacobian_evaluations: usize,
    /// Final scaled residual (the largest over the step's solves).
    pub residual: f64,
    /// Whether the degenerate path was used.
    pub degenerate: bool,
    /// Iterations of the root finder locating impact times.
    pub root_iterations: usize,
    /// Newton iterations of the post-impact solves.
    pub post_impact_iterations: usize,
}

impl StepStats {
    /// The statistics of one Newton solve.
    pub fn from_newton(info: &NewtonInfo, degenerate: bool) -> Self {
        Self {
            iterations: info.iterations,
            jacobian_evaluations: info.jacobian_evaluations,
            residual: info.residual,
            degenerate,
            ..Self::default()
        }
    }

    /// The statistics of a step: its Newton solve, and `step_jacobians`
    /// Jacobians the stepper evaluated itself before the solve (not counted
    /// in `info`).
    pub fn from_step(info: &NewtonInfo, degenerate: bool, step_jacobians: usize) -> Self {
        let mut stats = Self::from_newton(info, degenerate);
        stats.jacobian_evaluations += step_jacobians;
        stats
    }

    /// Add the statistics of another solve of the same step.
    pub fn absorb(&mut self, other: &StepStats) {
        self.iterations += other.iterations;
        self.jacobian_evaluations += other.jacobian_evaluations;
        self.residual = self.residual.max(other.residual);
        self.degenerate |= other.degenerate;
        self.root_iterations += other.root_iterations;
        self.post_impact_iterations += other.post_impact_iterations;
    }
}

/// `max_i |v_i|` (NaN entries skipped, as nalgebra's `amax`) and whether
/// every entry is finite, in one pass with four independent accumulators
/// over the contiguous slice (nalgebra's `amax` walks a strided iterator
/// one compare-and-select at a time: 7 % of a large circuit's step). The
/// maximum is exact, so the result is that of `amax`.
#[inline]
pub(crate) fn max_abs_finite(v: &[f64]) -> (f64, bool) {
    let mut m = [0.0_f64; 4];
    // `x · 0` is NaN exactly when `x` is infinite or NaN.
    let mut probe = [0.0_f64; 4];
    let chunks = v.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        for k in 0..4 {
            m[k] = m[k].max(c[k].abs());
            probe[k] += c[k] * 0.0;
        }
    }
    for &x in tail {
        m[0] = m[0].max(x.abs());
        probe[0] += x * 0.0;
    }
    let finite = (probe[0] + probe[1] + probe[2] + probe[3]) == 0.0;
    (m[0].max(m[1]).max(m[2].max(m[3])), finite)
}

/// `x ← x − dx`, and whether every entry of the new `x` is finite, in one
/// pass over the contiguous slices (four independent accumulators).
#[inline]
fn subtract_finite(x: &mut [f64], dx: &[f64]) -> bool {
    let mut probe = [0.0_f64; 4];
    let mut xs = x.chunks_exact_mut(4);
    let mut ds = dx.chunks_exact(4);
    for (c, d) in (&mut xs).zip(&mut ds) {
        for k in 0..4 {
            c[k] -= d[k];
            probe[k] += c[k] * 0.0;
        }
    }
    for (xi, di) in xs.into_remainder().iter_mut().zip(ds.remainder()) {
        *xi -= di;
        probe[0] += *xi * 0.0;
    }
    (probe[0] + probe[1] + probe[2] + probe[3]) == 0.0
}

/// `max_i |v_i|` (see [`max_abs_finite`]).
#[inline]
pub(crate) fn max_abs(v: &[f64]) -> f64 {
    max_abs_finite(v).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    /// Solve `r(x) = A x + 0.1 sin(x) − c = 0` from `x0` with
    /// [`Newton::solve_simplified`] (kept factors: whatever `newton` holds).
    fn simplified<LS: LinearSolver<Jacobian = DMatrix<f64>>>(
        newton: &mut Newton<LS>,
        a: &DMatrix<f64>,
        c: &DVector<f64>,
        x0: &DVector<f64>,
    ) -> (DVector<f64>, NewtonInfo) {
        let eval = |x: &DVector<f64>, r: &mut DVector<f64>, j: Option<&mut DMatrix<f64>>| {
            r.copy_from(&(a * x + x.map(|v| 0.1 * v.sin()) - c));
            if let Some(j) = j {
                j.copy_from(&(a + DMatrix::from_diagonal(&x.map(|v| 0.1 * v.cos()))));
            }
            Ok(1.0)
        };
        let mut x = x0.clone();
        let scale = eval(&x, &mut newton.r, None).unwrap();
        let info = newton
            .solve_simplified(&mut x, &NewtonParams::default(), scale, eval)
            .unwrap();
        // beyond the tolerance: to the margin (these O(1) equations do not
        // stagnate above it)
        assert!(info.residual <= SIMPLIFIED_MARGIN * NewtonParams::default().tolerance);
        (x, info)
    }

    #[test]
    fn simplified_newton_reuses_kept_factors_and_falls_back() {
        let a = DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 2.0]);
        let c = DVector::from_vec(vec![1.0, 2.0, 3.0]);
        let zero = DVector::zeros(3);
        let mut newton = Newton::new(3);
        assert!(!newton.has_factors());
        // Without kept factors: Newton, one Jacobian per iteration until
        // the quadratic regime, whose factors serve the last iterations;
        // the factors are kept.
        let (x1, info) = simplified(&mut newton, &a, &c, &zero);
        assert!(info.iterations >= 2);
        assert!(info.jacobian_evaluations >= 1);
        assert!(info.jacobian_evaluations < info.iterations);
        assert!(newton.has_factors());
        // A nearby problem from there: the kept factors contract, and no
        // Jacobian is evaluated.
        let c2 = &c * 1.01;
        let (x2, info) = simplified(&mut newton, &a, &c2, &x1);
        assert_eq!(info.jacobian_evaluations, 0);
        // the same root as a fresh Newton solve
        let (exact, _) = simplified(&mut Newton::new(3), &a, &c2, &zero);
        assert_relative_eq!((&x2 - &exact).amax(), 0.0, epsilon = 1e-12);
        // Factors of a very different Jacobian do not contract: Newton takes
        // over and still converges.
        let far = DMatrix::from_row_slice(3, 3, &[-1.0, 5.0, 0.0, 2.0, 0.1, 3.0, 1.0, 0.0, -4.0]);
        simplified(&mut newton, &far, &c, &zero);
        let (x3, info) = simplified(&mut newton, &a, &c2, &zero);
        assert!(info.jacobian_evaluations >= 1);
        assert_relative_eq!((&x3 - &exact).amax(), 0.0, epsilon = 1e-12);
        // Dropped factors are not reused.
        newton.clear_factors();
        assert!(!newton.has_factors());
        let (_, info) = simplified(&mut newton, &a, &c2, &x1);
        assert!(info.jacobian_evaluations >= 1);
    }

    #[test]
    fn newton_converges_quadratically_and_reports_failure() {
        let mut newton = Newton::new(1);
        let mut x = DVector::from_vec(vec![1.0]);
        let info = newton
            .solve(&mut x, &NewtonParams::default(), None, |x, r, j| {
                r[0] = x[0] * x[0] - 2.0;
                j[(0, 0)] = 2.0 * x[0];
                Ok(2.0)
            })
            .unwrap();
        assert_relative_eq!(x[0], 2f64.sqrt(), epsilon = 1e-15);
        assert!(info.iterations <= 6);
        assert!(info.final_correction);
        // x² + 1 = 0 has no real root: bounded failure, not a hang
        let mut x = DVector::from_vec(vec![0.5]);
        let err = newton
            .solve(&mut x, &NewtonParams::default(), None, |x, r, j| {
                r[0] = x[0] * x[0] + 1.0;
                j[(0, 0)] = 2.0 * x[0];
                Ok(1.0)
            })
            .unwrap_err();
        assert!(matches!(
            err,
            NewtonFailure::NoConvergence { .. } | NewtonFailure::NonFinite { .. }
        ));
    }

    #[test]
    fn lazy_solve_starts_from_factors_and_polishing_keeps_the_best() {
        // r(x) = (x0² + x1 − 3, x0 − x1³ + 7) has the root (1, 2).
        let eval = |x: &DVector<f64>, r: &mut DVector<f64>, j: Option<&mut DMatrix<f64>>| {
            r[0] = x[0] * x[0] + x[1] - 3.0;
            r[1] = x[0] - x[1] * x[1] * x[1] + 7.0;
            if let Some(j) = j {
                j.copy_from_slice(&[2.0 * x[0], 1.0, 1.0, -3.0 * x[1] * x[1]]);
            }
            Ok(1.0)
        };
        let params = NewtonParams::default();
        let mut newton = Newton::new(2);
        let mut x = DVector::from_vec(vec![1.2, 1.8]);
        let scale = eval(&x, &mut newton.r, Some(&mut newton.jac)).unwrap();
        newton.factor(&params).unwrap();
        let info = newton
            .solve_lazy(&mut x, &params, Some(scale), true, eval)
            .unwrap();
        assert_relative_eq!(x[0], 1.0, epsilon = 1e-15);
        assert_relative_eq!(x[1], 2.0, epsilon = 1e-15);
        // the first step used the factors handed in, and the quadratic
        // regime reuses factors: at least one Jacobian fewer than steps
        assert!(info.jacobian_evaluations < info.iterations);
        // polishing returns an iterate at least as good as the converged one
        let mut y = DVector::from_vec(vec![1.2, 1.8]);
        let info = newton
            .solve_lazy(&mut y, &params.with_polish(2), None, false, eval)
            .unwrap();
        assert!(!info.final_correction);
        assert!(info.residual <= params.tolerance);
        assert_relative_eq!(y[0], 1.0, epsilon = 1e-14);
        assert_relative_eq!(y[1], 2.0, epsilon = 1e-14);
    }

    #[test]
    fn factors_are_reused_only_in_the_quadratic_regime() {
        // r(x) = x³ − 8 (root 2), scale 1, each iterate recorded with
        // whether its Jacobian was evaluated.
        let solve = |x0: f64| {
            let mut log: Vec<(f64, bool)> = Vec::new();
            let mut newton = Newton::new(1);
            let mut x = DVector::from_vec(vec![x0]);
            let info = newton
                .solve_lazy(&mut x, &NewtonParams::default(), None, false, |x, r, j| {
                    r[0] = x[0] * x[0] * x[0] - 8.0;
                    log.push((r[0].abs(), j.is_some()));
                    if let Some(j) = j {
                        j[(0, 0)] = 3.0 * x[0] * x[0];
                    }
                    Ok(1.0)
                })
                .unwrap();
            assert!((x[0] - 2.0).abs() <= 4.0 * f64::EPSILON, "{x0}: {}", x[0]);
            (info, log)
        };
        for x0 in [2.5, 6.0, 40.0] {
            let (info, log) = solve(x0);
            // Lazy: a residual, then the Jacobian at the same iterate when
            // the factors at hand cannot serve. The Jacobian is evaluated
            // again exactly while the last full step reduced the residual
            // less than `REUSE_CONTRACTION`-fold.
            let residuals: Vec<f64> = log.iter().filter(|e| !e.1).map(|e| e.0).collect();
            let fresh: Vec<bool> = log
                .iter()
                .enumerate()
                .filter(|(_, e)| !e.1)
                .map(|(i, _)| log.get(i + 1).is_some_and(|e| e.1))
                .collect();
            let mut exact = true;
            for k in 1..residuals.len() {
                if !fresh[k] && residuals[k] > NewtonParams::default().tolerance {
                    // a step with reused factors: the step before was exact
                    // and contracted by at least REUSE_CONTRACTION, or
                    // reused ones contracted tenfold
                    let ratio = residuals[k] / residuals[k - 1];
                    assert!(
                        ratio
                            <= if exact {
                                REUSE_CONTRACTION
                            } else {
                                SIMPLIFIED_CONTRACTION
                            },
                        "{x0}: {residuals:?}"
                    );
                }
                if fresh[k] && k + 1 < residuals.len() && exact {
                    assert!(residuals[k] / residuals[k - 1] > REUSE_CONTRACTION);
                }
                exact = fresh[k];
            }
            assert!(info.jacobian_evaluations >= 1, "{x0}");
        }
        // From 2.5 (error 0.5) Newton's first steps contract less than a
        // thousandfold, the last ones more: the solve ends on reused factors.
        let (info, _) = solve(2.5);
        assert!(info.jacobian_evaluations < info.iterations, "{info:?}");
        // Far away (40: x³ ≈ 6.4e4) the early steps contract about 1.5-fold
        // (Newton on x³ divides the error by about 3/2): each evaluates
        // the Jacobian.
        let (info, log) = solve(40.0);
        let first: Vec<bool> = log.iter().map(|e| e.1).take(12).collect();
        assert_eq!(
            first,
            [
                false, true, false, true, false, true, false, true, false, true, false, true
            ],
            "{info:?}"
        );
    }

    /// A toy linear solver for diagonal Jacobians, stored as the vector of
    /// the diagonal: the iteration does not depend on the dense LU.
    #[derive(Debug, Clone)]
    struct Diagonal {
        n: usize,
        factors: Option<DiagonalFactors>,
    }

    #[derive(Debug, Clone)]
    struct DiagonalFactors(DVector<f64>);

    impl Factorization for DiagonalFactors {
        fn solve_in_place(&self, rhs: &mut DVector<f64>) {
            rhs.component_div_assign(&self.0);
        }
    }

    impl LinearSolver for Diagonal {
        type Jacobian = DVector<f64>;
        type Factors = DiagonalFactors;

        fn size(&self) -> usize {
            self.n
        }

        fn new_jacobian(&self) -> DVector<f64> {
            DVector::zeros(self.n)
        }

        fn factor(
            &mut self,
            jac: &DVector<f64>,
            threshold: f64,
        ) -> Result<&DiagonalFactors, Singular> {
            self.factors = None;
            let scale = jac.amax();
            if let Some(step) = jac
                .iter()
                .position(|v| v.is_nan() || v.abs() <= threshold * scale)
            {
                return Err(Singular {
                    step,
                    pivot: jac[step].abs(),
                    scale,
                });
            }
            Ok(self.factors.insert(DiagonalFactors(jac.clone())))
        }

        fn factors(&self) -> Option<&DiagonalFactors> {
            self.factors.as_ref()
        }

        fn clear_factors(&mut self) {
            self.factors = None;
        }

        fn solve_rank_deficient(
            &mut self,
            _: &DVector<f64>,
            _: f64,
            _: &DVector<f64>,
            _: &mut DVector<f64>,
        ) -> bool {
            false
        }
    }

    /// The dense LU, counting its factorizations.
    #[derive(Debug, Clone)]
    struct Counting {
        inner: DenseLu,
        factorizations: usize,
    }

    impl LinearSolver for Counting {
        type Jacobian = DMatrix<f64>;
        type Factors = <DenseLu as LinearSolver>::Factors;

        fn size(&self) -> usize {
            self.inner.size()
        }

        fn new_jacobian(&self) -> DMatrix<f64> {
            self.inner.new_jacobian()
        }

        fn factor(
            &mut self,
            jac: &DMatrix<f64>,
            threshold: f64,
        ) -> Result<&Self::Factors, Singular> {
            self.factorizations += 1;
            self.inner.factor(jac, threshold)
        }

        fn factors(&self) -> Option<&Self::Factors> {
            self.inner.factors()
        }

        fn clear_factors(&mut self) {
            self.inner.clear_factors();
        }

        fn solve_rank_deficient(
            &mut self,
            jac: &DMatrix<f64>,
            threshold: f64,
            rhs: &DVector<f64>,
            out: &mut DVector<f64>,
        ) -> bool {
            self.inner.solve_rank_deficient(jac, threshold, rhs, out)
        }
    }

    #[test]
    fn newton_runs_over_another_linear_solver() {
        // r_i(x) = x_i³ + x_i − c_i, decoupled, with the roots (1, 2, −1/2)
        let c = DVector::from_vec(vec![2.0, 10.0, -0.625]);
        let mut newton = Newton::with_solver(Diagonal {
            n: 3,
            factors: None,
        });
        assert_eq!(newton.size(), 3);
        let mut x = DVector::from_vec(vec![0.5, 1.5, 0.0]);
        let info = newton
            .solve(&mut x, &NewtonParams::default(), None, |x, r, j| {
                for i in 0..3 {
                    r[i] = x[i] * x[i] * x[i] + x[i] - c[i];
                    j[i] = 3.0 * x[i] * x[i] + 1.0;
                }
                Ok(c.amax())
            })
            .unwrap();
        assert_relative_eq!(x[0], 1.0, epsilon = 1e-15);
        assert_relative_eq!(x[1], 2.0, epsilon = 1e-15);
        assert_relative_eq!(x[2], -0.5, epsilon = 1e-15);
        assert!((3..=8).contains(&info.iterations), "{info:?}");
        assert_eq!(info.jacobian_evaluations, info.iterations + 1);
        assert_eq!(info.rank_deficient_iterations, 0);
        assert!(info.final_correction);
        assert!(newton.has_factors());
        // A singular Jacobian, with no fallback: a typed failure.
        let mut x = DVector::from_vec(vec![1.0, 0.0]);
        let mut newton = Newton::with_solver(Diagonal {
            n: 2,
            factors: None,
        });
        let err = newton
            .solve(&mut x, &NewtonParams::default(), None, |x, r, j| {
                r[0] = x[0] - 3.0;
                r[1] = x[1] * x[1] - 4.0;
                j[0] = 1.0;
                j[1] = 2.0 * x[1];
                Ok(1.0)
            })
            .unwrap_err();
        assert_eq!(
            err,
            NewtonFailure::NonFinite {
                what: "Jacobian",
                iterations: 0
            }
        );
        assert!(!newton.has_factors());
    }

    #[test]
    fn a_wrapped_solver_gives_the_same_iterates_and_counts_factorizations() {
        let a = DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 2.0]);
        let c = DVector::from_vec(vec![1.0, 2.0, 3.0]);
        let zero = DVector::zeros(3);
        let mut dense = Newton::new(3);
        let mut counting = Newton::with_solver(Counting {
            inner: DenseLu::new(3),
            factorizations: 0,
        });
        let (x_dense, info_dense) = simplified(&mut dense, &a, &c, &zero);
        let (x_counting, info_counting) = simplified(&mut counting, &a, &c, &zero);
        // bit for bit the same solve
        assert_eq!(info_dense, info_counting);
        for (u, v) in x_dense.iter().zip(x_counting.iter()) {
            assert_eq!(u.to_bits(), v.to_bits());
        }
        // one factorization per Jacobian (the final correction reuses the
        // last factors)
        assert_eq!(
            counting.solver().factorizations,
            info_counting.jacobian_evaluations
        );
        // a nearby problem: the kept factors do all the work
        let before = counting.solver().factorizations;
        let (x2, info) = simplified(&mut counting, &a, &(&c * 1.01), &x_counting);
        assert_eq!(info.jacobian_evaluations, 0);
        assert_eq!(counting.solver().factorizations, before);
        let (exact, _) = simplified(&mut Newton::new(3), &a, &(&c * 1.01), &zero);
        assert_relative_eq!((&x2 - &exact).amax(), 0.0, epsilon = 1e-12);
    }
}
