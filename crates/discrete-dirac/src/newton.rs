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
            dx: DVector::zeros(n),
        }
    }

    /// Number of unknowns.
    pub fn size(&self) -> usize {
        self.r.len()
    }
}

/// In-place LU with partial pivoting of `a` into `lu`/`perm`.
/// Returns `false` when a pivot is below `threshold · max|a|`.
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
    for k in 0..n {
        let mut piv = k;
        let mut best = lu[(k, k)].abs();
        for i in k + 1..n {
            let v = lu[(i, k)].abs();
            if v > best {
                best = v;
                piv = i;
            }
        }
        if best.is_nan() || best <= threshold * amax {
            return false;
        }
        if piv != k {
            lu.swap_rows(k, piv);
            perm.swap(k, piv);
        }
        let d = lu[(k, k)];
        for i in k + 1..n {
            let f = lu[(i, k)] / d;
            lu[(i, k)] = f;
            if f != 0.0 {
                for j in k + 1..n {
                    let u = lu[(k, j)];
                    lu[(i, j)] -= f * u;
                }
            }
        }
    }
    true
}

/// Solve `LU x = P b` in place (`x` holds `b` on entry).
fn lu_solve(lu: &DMatrix<f64>, perm: &[usize], b: &DVector<f64>, x: &mut DVector<f64>) {
    let n = lu.nrows();
    for i in 0..n {
        x[i] = b[perm[i]];
    }
    for i in 0..n {
        let mut s = x[i];
        for j in 0..i {
            s -= lu[(i, j)] * x[j];
        }
        x[i] = s;
    }
    for i in (0..n).rev() {
        let mut s = x[i];
        for j in i + 1..n {
            s -= lu[(i, j)] * x[j];
        }
        x[i] = s / lu[(i, i)];
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
    solve_impl(x, ws, params, evaluated, false, false, |x, r, j| match j {
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
    F: FnMut(
        &DVector<f64>,
        &mut DVector<f64>,
        Option<&mut DMatrix<f64>>,
    ) -> Result<f64, GeometryError>,
{
    assert!(
        scale.is_some() || !factored,
        "solve_lazy: `factored` needs the evaluation at x"
    );
    solve_impl(x, ws, params, scale, factored, true, eval)
}

#[allow(clippy::too_many_arguments)]
fn solve_impl<F>(
    x: &mut DVector<f64>,
    ws: &mut NewtonWorkspace,
    params: &NewtonParams,
    mut evaluated: Option<f64>,
    mut factored: bool,
    lazy: bool,
    mut eval: F,
) -> Result<NewtonInfo, NewtonFailure>
where
    F: FnMut(
        &DVector<f64>,
        &mut DVector<f64>,
        Option<&mut DMatrix<f64>>,
    ) -> Result<f64, GeometryError>,
{
    let mut info = NewtonInfo::default();
    let mut polish = 0;
    let mut best: Option<(f64, DVector<f64>)> = None;
    loop {
        let (scale, have_jacobian) = match evaluated.take() {
            Some(s) => (s, true),
            None if lazy => (
                eval(x, &mut ws.r, None).map_err(NewtonFailure::Geometry)?,
                false,
            ),
            None => (
                eval(x, &mut ws.r, Some(&mut ws.jac)).map_err(NewtonFailure::Geometry)?,
                true,
            ),
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
        if res <= params.tolerance {
            if params.polish_iterations == 0 {
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
        if !have_jacobian {
            eval(x, &mut ws.r, Some(&mut ws.jac)).map_err(NewtonFailure::Geometry)?;
        }
        if std::mem::take(&mut factored)
            || lu_factor(&ws.jac, &mut ws.lu, &mut ws.perm, params.singular_threshold)
        {
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
    !lu_factor(&ws.jac, &mut ws.lu, &mut ws.perm, params.singular_threshold)
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
