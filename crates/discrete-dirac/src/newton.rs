//! Newton's method for the per-step equations, with a dense LU (partial
//! pivoting, in place, no allocation) and a rank-revealing fallback (faer SVD,
//! minimum-norm step) for singular Jacobians.

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
    /// caller); 0 when kept factors did all the work ([`solve_simplified`]).
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

/// Buffers for an `n`-unknown Newton solve, allocated once.
#[derive(Debug, Clone)]
pub struct NewtonWorkspace {
    /// Residual at the current iterate.
    pub r: DVector<f64>,
    /// Jacobian at the current iterate.
    pub jac: DMatrix<f64>,
    lu: DMatrix<f64>,
    perm: Vec<usize>,
    /// Whether `lu`/`perm` hold the factors of some earlier Jacobian.
    lu_valid: bool,
    dx: DVector<f64>,
}

impl NewtonWorkspace {
    /// Workspace for `n` unknowns and `n` equations.
    pub fn new(n: usize) -> Self {
        Self {
            r: DVector::zeros(n),
            jac: DMatrix::zeros(n, n),
            lu: DMatrix::zeros(n, n),
            perm: vec![0; n],
            lu_valid: false,
            dx: DVector::zeros(n),
        }
    }

    /// Number of unknowns.
    pub fn size(&self) -> usize {
        self.r.len()
    }

    /// Whether LU factors from an earlier solve are kept (see
    /// [`solve_simplified`]).
    pub fn has_factors(&self) -> bool {
        self.lu_valid
    }

    /// Forget the LU factors kept from an earlier solve, so that
    /// [`solve_simplified`] cannot reuse them (call when the equations
    /// change, e.g. when their rows are recombined).
    pub fn invalidate_factors(&mut self) {
        self.lu_valid = false;
    }

    /// LU-factor `ws.jac` into the kept factors.
    fn factor(&mut self, threshold: f64) -> bool {
        self.lu_valid = lu_factor(&self.jac, &mut self.lu, &mut self.perm, threshold);
        self.lu_valid
    }
}

/// In-place LU with partial pivoting of `a` into `lu`/`perm`.
/// Returns `false` when a pivot is below `threshold · max|a|`.
///
/// Column-oriented (right-looking) on the column-major storage, so the inner
/// loops run over contiguous slices without bounds checks.
fn lu_factor(a: &DMatrix<f64>, lu: &mut DMatrix<f64>, perm: &mut [usize], threshold: f64) -> bool {
    let n = a.nrows();
    lu.copy_from(a);
    let amax = a.amax();
    if amax.is_nan() || amax <= 0.0 {
        return false;
    }
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i;
    }
    let data = lu.as_mut_slice();
    for k in 0..n {
        let (left, right) = data.split_at_mut((k + 1) * n);
        let col_k = &mut left[k * n..];
        let mut piv = k;
        let mut best = col_k[k].abs();
        for (i, v) in col_k.iter().enumerate().skip(k + 1) {
            if v.abs() > best {
                best = v.abs();
                piv = i;
            }
        }
        if best.is_nan() || best <= threshold * amax {
            return false;
        }
        if piv != k {
            perm.swap(k, piv);
            col_k.swap(k, piv);
            for j in 0..k {
                left.swap(j * n + k, j * n + piv);
            }
            for col in right.chunks_exact_mut(n) {
                col.swap(k, piv);
            }
        }
        let col_k = &mut left[k * n..];
        let d = col_k[k];
        for v in &mut col_k[k + 1..] {
            *v /= d;
        }
        let l = &col_k[k + 1..];
        for col in right.chunks_exact_mut(n) {
            let u = col[k];
            if u != 0.0 {
                for (c, &f) in col[k + 1..].iter_mut().zip(l) {
                    *c -= f * u;
                }
            }
        }
    }
    true
}

/// Solve `LU x = P b` (`x` is overwritten).
fn lu_solve(lu: &DMatrix<f64>, perm: &[usize], b: &DVector<f64>, x: &mut DVector<f64>) {
    let n = lu.nrows();
    let data = lu.as_slice();
    for (xi, &p) in x.iter_mut().zip(perm) {
        *xi = b[p];
    }
    let x = x.as_mut_slice();
    // L (unit diagonal), column by column
    for j in 0..n {
        let xj = x[j];
        if xj != 0.0 {
            for (xi, &l) in x[j + 1..].iter_mut().zip(&data[j * n + j + 1..(j + 1) * n]) {
                *xi -= l * xj;
            }
        }
    }
    // U, column by column from the last
    for j in (0..n).rev() {
        let col = &data[j * n..j * n + j + 1];
        let xj = x[j] / col[j];
        x[j] = xj;
        if xj != 0.0 {
            for (xi, &u) in x[..j].iter_mut().zip(&col[..j]) {
                *xi -= u * xj;
            }
        }
    }
}

/// Rank-revealing pieces of a square matrix from faer's SVD.
#[derive(Debug, Clone)]
pub struct SvdSplit {
    /// Numerical rank.
    pub rank: usize,
    /// Left singular vectors of the non-zero singular values (`n × rank`).
    pub range: DMatrix<f64>,
    /// Left singular vectors of the zero singular values (`n × (n − rank)`):
    /// the left null space.
    pub left_null: DMatrix<f64>,
    /// Minimum-norm solution of `a x = b` in the least-squares sense.
    pseudo_inverse: DMatrix<f64>,
}

impl SvdSplit {
    /// SVD of `a` (faer), splitting singular values at `threshold · σ_max`.
    pub fn new(a: &DMatrix<f64>, threshold: f64) -> Option<Self> {
        let n = a.nrows();
        let m = faer::Mat::<f64>::from_fn(n, a.ncols(), |i, j| a[(i, j)]);
        let svd = m.svd().ok()?;
        let s = svd.S().column_vector();
        let smax = if n > 0 { s[0] } else { 0.0 };
        let rank = (0..s.nrows()).filter(|&i| s[i] > threshold * smax).count();
        let u = svd.U();
        let v = svd.V();
        let range = DMatrix::from_fn(n, rank, |i, j| u[(i, j)]);
        let left_null = DMatrix::from_fn(n, n - rank, |i, j| u[(i, rank + j)]);
        let pseudo_inverse = DMatrix::from_fn(a.ncols(), n, |i, j| {
            (0..rank).map(|k| v[(i, k)] * u[(j, k)] / s[k]).sum()
        });
        Some(Self {
            rank,
            range,
            left_null,
            pseudo_inverse,
        })
    }

    /// The minimum-norm least-squares solution of `a x = b`.
    pub fn solve(&self, b: &DVector<f64>) -> DVector<f64> {
        &self.pseudo_inverse * b
    }
}

/// An evaluator of equations that can skip the Jacobian: `eval(x, r, None)`
/// writes the residual at `x` into `r`, `eval(x, r, Some(jac))` also the
/// Jacobian, with the same residual; both return the equation scale
/// (convergence: `‖r‖∞ ≤ tolerance · scale`).
pub trait LazyEval:
    FnMut(&DVector<f64>, &mut DVector<f64>, Option<&mut DMatrix<f64>>) -> Result<f64, GeometryError>
{
}

impl<F> LazyEval for F where
    F: FnMut(
        &DVector<f64>,
        &mut DVector<f64>,
        Option<&mut DMatrix<f64>>,
    ) -> Result<f64, GeometryError>
{
}

/// Newton's method on `r(x) = 0`.
///
/// `eval(x, r, jac)` writes the residual and Jacobian at `x` and returns the
/// equation scale (convergence: `‖r‖∞ ≤ tolerance · scale`). If `evaluated`
/// is true, `ws.r`/`ws.jac` already hold the evaluation at `x`.
///
/// # Errors
/// [`NewtonFailure`] when the iteration bound is reached, a value becomes
/// non-finite, or the residual cannot be evaluated.
pub fn solve<F>(
    x: &mut DVector<f64>,
    ws: &mut NewtonWorkspace,
    params: &NewtonParams,
    evaluated: Option<f64>,
    eval: F,
) -> Result<NewtonInfo, NewtonFailure>
where
    F: FnMut(&DVector<f64>, &mut DVector<f64>, &mut DMatrix<f64>) -> Result<f64, GeometryError>,
{
    let mut eval = eval;
    let start = match evaluated {
        Some(scale) => Start::Evaluated { scale },
        None => Start::Fresh,
    };
    solve_impl(x, ws, params, start, false, |x, r, j| match j {
        Some(j) => eval(x, r, j),
        None => unreachable!("solve_impl asks for the Jacobian on every evaluation"),
    })
}

/// [`solve`] for an `eval` that can skip the Jacobian: `eval(x, r, None)`
/// writes only the residual (and returns the scale), `eval(x, r, Some(jac))`
/// both, with the same residual and scale. The Jacobian is asked for only
/// when a Newton step follows, so the final (converged) evaluation costs a
/// residual only.
///
/// `scale`: `ws.r`/`ws.jac` already hold the evaluation at `x` with this
/// equation scale. `factored`: moreover `ws` holds the LU factors of
/// `ws.jac` from a call of [`is_singular`] that returned `false` (requires
/// `scale`).
///
/// # Errors
/// As [`solve`].
pub fn solve_lazy<F>(
    x: &mut DVector<f64>,
    ws: &mut NewtonWorkspace,
    params: &NewtonParams,
    scale: Option<f64>,
    factored: bool,
    eval: F,
) -> Result<NewtonInfo, NewtonFailure>
where
    F: LazyEval,
{
    assert!(
        scale.is_some() || !factored,
        "solve_lazy: `factored` needs the evaluation at x"
    );
    let start = match (scale, factored) {
        (Some(scale), true) => Start::Factored { scale },
        (Some(scale), false) => Start::Evaluated { scale },
        (None, _) => Start::Fresh,
    };
    solve_impl(x, ws, params, start, true, eval)
}

/// [`solve_simplified`] stops at `SIMPLIFIED_MARGIN · tolerance` (or at the
/// round-off floor), not at the tolerance: the linear convergence of kept
/// factors would otherwise leave the solution less accurate than a Newton
/// solve, whose last step overshoots quadratically. (The degenerate
/// Lagrange–Dirac step uses it: its hidden-constraint rows carry a factor
/// `h`, so their tolerance alone would admit an `O(tolerance / h)` error in
/// the algebraic variables.)
pub const SIMPLIFIED_MARGIN: f64 = 1e-2;

/// Largest residual ratio `‖r_{k+1}‖ / ‖r_k‖` accepted from a step with
/// kept (older) Jacobian factors before [`solve_simplified`] evaluates the
/// Jacobian and continues with full Newton steps.
pub const SIMPLIFIED_CONTRACTION: f64 = 0.1;

/// A full Newton step that fails to halve the residual has met the
/// round-off floor of the residual's evaluation; the solve then accepts a
/// residual up to `STALL_BAND · tolerance` (and fails above it).
pub const STALL_BAND: f64 = 1e2;

/// Simplified Newton (as in implicit Runge–Kutta codes): `ws.r` holds the
/// residual at `x` with equation scale `scale`, and `ws` keeps the LU
/// factors of the Jacobian of an earlier solve of equations of the same
/// form (the previous step's). Steps use those factors, with residual-only
/// evaluations, as long as each reduces the residual by at least
/// [`SIMPLIFIED_CONTRACTION`]; otherwise the Jacobian is evaluated and the
/// solve continues as [`solve_lazy`]. Without kept factors it is
/// [`solve_lazy`] from an evaluated residual. Convergence is decided by the
/// residual alone, which must reach [`SIMPLIFIED_MARGIN`]` · tolerance` (or
/// stagnate at round-off).
///
/// # Errors
/// As [`solve`].
pub fn solve_simplified<F>(
    x: &mut DVector<f64>,
    ws: &mut NewtonWorkspace,
    params: &NewtonParams,
    scale: f64,
    eval: F,
) -> Result<NewtonInfo, NewtonFailure>
where
    F: LazyEval,
{
    solve_impl(x, ws, params, Start::Residual { scale }, true, eval)
}

/// What the workspace holds when a solve starts.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// Nothing: evaluate at `x` first.
    Fresh,
    /// Residual and Jacobian at `x`, with this scale.
    Evaluated { scale: f64 },
    /// As `Evaluated`, and the LU factors of that Jacobian.
    Factored { scale: f64 },
    /// The residual at `x` (no Jacobian), and possibly kept older factors.
    Residual { scale: f64 },
}

/// The LU factors in the workspace, relative to the current iterate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Factors {
    /// None usable: factor the Jacobian before the next step.
    None,
    /// Of the Jacobian at the current iterate.
    Current,
    /// Of an older Jacobian (simplified Newton).
    Kept,
}

fn solve_impl<F>(
    x: &mut DVector<f64>,
    ws: &mut NewtonWorkspace,
    params: &NewtonParams,
    start: Start,
    lazy: bool,
    mut eval: F,
) -> Result<NewtonInfo, NewtonFailure>
where
    F: LazyEval,
{
    let mut info = NewtonInfo::default();
    let mut polish = 0;
    let mut best: Option<(f64, DVector<f64>)> = None;
    let (mut evaluated, mut factors) = match start {
        Start::Fresh => (None, Factors::None),
        Start::Evaluated { scale } => (Some((scale, true)), Factors::None),
        Start::Factored { scale } => (Some((scale, true)), Factors::Current),
        Start::Residual { scale } if ws.lu_valid => (Some((scale, false)), Factors::Kept),
        Start::Residual { scale } => (Some((scale, false)), Factors::None),
    };
    let mut previous_residual = f64::INFINITY;
    // Whether `ws` holds LU factors belonging to this solve (of one of its
    // Jacobians, or the kept ones of a simplified solve).
    let mut factors_here = matches!(factors, Factors::Current | Factors::Kept);
    // Whether the last step used the factors of the Jacobian at its iterate
    // (a full Newton step), which converges quadratically.
    let mut last_step_exact = false;
    let strict = matches!(start, Start::Residual { .. });
    loop {
        let (scale, mut have_jacobian) = match evaluated.take() {
            Some(e) => e,
            None if lazy => (
                eval(x, &mut ws.r, None).map_err(NewtonFailure::Geometry)?,
                false,
            ),
            None => {
                info.jacobian_evaluations += 1;
                (
                    eval(x, &mut ws.r, Some(&mut ws.jac)).map_err(NewtonFailure::Geometry)?,
                    true,
                )
            }
        };
        let res = ws.r.amax() / scale;
        // `amax` skips NaN entries (its comparisons are false), so test them.
        if !res.is_finite() || ws.r.iter().any(|v| !v.is_finite()) {
            return Err(NewtonFailure::NonFinite {
                what: "residual",
                iterations: info.iterations,
            });
        }
        if let Some((best_res, best_x)) = &best {
            // Polishing: keep going only while the residual shrinks.
            if res >= *best_res || polish >= params.polish_iterations {
                if res >= *best_res {
                    x.copy_from(best_x);
                    info.residual = *best_res;
                } else {
                    info.residual = res;
                }
                return Ok(info);
            }
        }
        info.residual = res;
        // With kept factors the residual shrinks only linearly, so it lands
        // just under the tolerance where Newton's quadratic step would have
        // overshot to round-off: a simplified solve goes on to
        // `SIMPLIFIED_MARGIN · tolerance` (also after switching to Newton),
        // or until the residual stagnates at its round-off floor.
        //
        // A full Newton step that no longer halves the residual has reached
        // the round-off floor of the equations' evaluation (quadratic
        // convergence would have overshot far below): accept that floor if
        // it is within `STALL_BAND` of the tolerance (e.g. a Hamiltonian
        // singular on a set the motion crosses). The residual reported is
        // the real one.
        let stalled = res > 0.5 * previous_residual;
        let converged = (res <= params.tolerance
            && (!strict || res <= SIMPLIFIED_MARGIN * params.tolerance || stalled))
            || (last_step_exact && stalled && res <= STALL_BAND * params.tolerance);
        if converged {
            if params.polish_iterations == 0 {
                // One last correction with the factors at hand (of this
                // solve's latest Jacobian, or the kept ones): no evaluation,
                // one triangular solve. It takes the error of the accepted
                // iterate, up to `tolerance`, down to about its square. A
                // solve stopped at the tolerance leaves an error of the same
                // sign step after step, which adds up linearly over a run
                // (impact times of the midpoint pendulum lost their second
                // order below h = 5e-5); corrected, what is left is round-off.
                if factors_here && res > 0.0 {
                    lu_solve(&ws.lu, &ws.perm, &ws.r, &mut ws.dx);
                    if ws.dx.iter().all(|v| v.is_finite()) {
                        *x -= &ws.dx;
                        info.final_correction = true;
                    }
                }
                return Ok(info);
            }
            if best.is_some() {
                polish += 1;
            }
            best = Some((res, x.clone()));
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
        previous_residual = res;
        if factors == Factors::None && !have_jacobian {
            eval(x, &mut ws.r, Some(&mut ws.jac)).map_err(NewtonFailure::Geometry)?;
            info.jacobian_evaluations += 1;
            have_jacobian = true;
        }
        last_step_exact = factors != Factors::Kept;
        let solved = match factors {
            Factors::Kept => true,
            Factors::Current => {
                factors = Factors::None;
                true
            }
            Factors::None => ws.factor(params.singular_threshold),
        };
        factors_here |= solved;
        debug_assert!(solved || have_jacobian);
        if solved {
            lu_solve(&ws.lu, &ws.perm, &ws.r, &mut ws.dx);
        } else {
            info.rank_deficient_iterations += 1;
            match SvdSplit::new(&ws.jac, params.singular_threshold) {
                Some(svd) => ws.dx.copy_from(&svd.solve(&ws.r)),
                None => {
                    return Err(NewtonFailure::NonFinite {
                        what: "Jacobian",
                        iterations: info.iterations,
                    });
                }
            }
        }
        *x -= &ws.dx;
        info.iterations += 1;
        if x.iter().any(|v| !v.is_finite()) {
            return Err(NewtonFailure::NonFinite {
                what: "iterate",
                iterations: info.iterations,
            });
        }
    }
}

/// Whether `a` is numerically singular by the LU pivot test.
pub fn is_singular(ws: &mut NewtonWorkspace, params: &NewtonParams) -> bool {
    !ws.factor(params.singular_threshold)
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn lu_solves_a_pivoting_system() {
        let a = DMatrix::from_row_slice(3, 3, &[0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0]);
        let b = DVector::from_vec(vec![1.0, 2.0, 3.0]);
        let mut lu = DMatrix::zeros(3, 3);
        let mut perm = vec![0; 3];
        assert!(lu_factor(&a, &mut lu, &mut perm, 1e-12));
        let mut x = DVector::zeros(3);
        lu_solve(&lu, &perm, &b, &mut x);
        let r = &a * &x - &b;
        assert!(r.amax() < 1e-14, "residual {}", r.amax());
    }

    #[test]
    fn lu_matches_a_reference_solve_on_many_sizes() {
        // deterministic "random" matrices with every pivot order exercised
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for n in 1..=9 {
            for _ in 0..20 {
                let a = DMatrix::from_fn(n, n, |_, _| next());
                let b = DVector::from_fn(n, |_, _| next());
                let mut lu = DMatrix::zeros(n, n);
                let mut perm = vec![0; n];
                assert!(lu_factor(&a, &mut lu, &mut perm, 1e-14));
                let mut x = DVector::zeros(n);
                lu_solve(&lu, &perm, &b, &mut x);
                let reference = a.clone().lu().solve(&b).expect("regular");
                let cond = a.clone().svd(false, false).singular_values;
                let kappa = cond.max() / cond.min();
                assert!(
                    (&x - &reference).amax() <= 1e-14 * kappa * reference.amax().max(1.0),
                    "n = {n}: {x} vs {reference}"
                );
            }
        }
        // a singular matrix is reported
        let a = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]);
        let (mut lu, mut perm) = (DMatrix::zeros(2, 2), vec![0; 2]);
        assert!(!lu_factor(&a, &mut lu, &mut perm, 1e-12));
    }

    /// Solve `r(x) = A x + 0.1 sin(x) − c = 0` from `x0` with
    /// [`solve_simplified`] (kept factors: whatever `ws` holds).
    fn simplified(
        ws: &mut NewtonWorkspace,
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
        let scale = eval(&x, &mut ws.r, None).unwrap();
        let info = solve_simplified(&mut x, ws, &NewtonParams::default(), scale, eval).unwrap();
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
        let mut ws = NewtonWorkspace::new(3);
        // Without kept factors: Newton, one Jacobian per iteration; the
        // factors are kept.
        let (x1, info) = simplified(&mut ws, &a, &c, &zero);
        assert!(info.iterations >= 2);
        assert_eq!(info.jacobian_evaluations, info.iterations);
        assert!(ws.has_factors());
        // A nearby problem from there: the kept factors contract, and no
        // Jacobian is evaluated.
        let c2 = &c * 1.01;
        let (x2, info) = simplified(&mut ws, &a, &c2, &x1);
        assert_eq!(info.jacobian_evaluations, 0);
        // the same root as a fresh Newton solve
        let (exact, _) = simplified(&mut NewtonWorkspace::new(3), &a, &c2, &zero);
        assert_relative_eq!((&x2 - &exact).amax(), 0.0, epsilon = 1e-12);
        // Factors of a very different Jacobian do not contract: Newton takes
        // over and still converges.
        let far = DMatrix::from_row_slice(3, 3, &[-1.0, 5.0, 0.0, 2.0, 0.1, 3.0, 1.0, 0.0, -4.0]);
        simplified(&mut ws, &far, &c, &zero);
        let (x3, info) = simplified(&mut ws, &a, &c2, &zero);
        assert!(info.jacobian_evaluations >= 1);
        assert_relative_eq!((&x3 - &exact).amax(), 0.0, epsilon = 1e-12);
        // Forgotten factors are not reused.
        ws.invalidate_factors();
        let (_, info) = simplified(&mut ws, &a, &c2, &x1);
        assert!(info.jacobian_evaluations >= 1);
    }

    #[test]
    fn svd_split_finds_left_null_space() {
        // rows 1 and 2 equal: left null vector (0, 1, -1)/√2
        let a = DMatrix::from_row_slice(3, 3, &[1.0, 2.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]);
        let s = SvdSplit::new(&a, 1e-12).unwrap();
        assert_eq!(s.rank, 2);
        let y = s.left_null.column(0);
        assert_relative_eq!((y.transpose() * &a).amax(), 0.0, epsilon = 1e-14);
        assert_relative_eq!(y[1].abs(), std::f64::consts::FRAC_1_SQRT_2, epsilon = 1e-14);
    }

    #[test]
    fn newton_converges_quadratically_and_reports_failure() {
        let mut ws = NewtonWorkspace::new(1);
        let mut x = DVector::from_vec(vec![1.0]);
        let info = solve(
            &mut x,
            &mut ws,
            &NewtonParams::default(),
            None,
            |x, r, j| {
                r[0] = x[0] * x[0] - 2.0;
                j[(0, 0)] = 2.0 * x[0];
                Ok(2.0)
            },
        )
        .unwrap();
        assert_relative_eq!(x[0], 2f64.sqrt(), epsilon = 1e-15);
        assert!(info.iterations <= 6);
        // x² + 1 = 0 has no real root: bounded failure, not a hang
        let mut x = DVector::from_vec(vec![0.5]);
        let err = solve(
            &mut x,
            &mut ws,
            &NewtonParams::default(),
            None,
            |x, r, j| {
                r[0] = x[0] * x[0] + 1.0;
                j[(0, 0)] = 2.0 * x[0];
                Ok(1.0)
            },
        )
        .unwrap_err();
        assert!(matches!(
            err,
            NewtonFailure::NoConvergence { .. } | NewtonFailure::NonFinite { .. }
        ));
    }
}
