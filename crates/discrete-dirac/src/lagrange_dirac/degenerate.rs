//! The degenerate path of the Lagrange–Dirac step (docs/theory.md §3.9).
//!
//! When the step Jacobian `J = [[D12, −Aᵀ], [∂_b ω, 0]]` is singular, some
//! combinations `Yᵀ r` of the step equations (`Y` the left null space of `J`,
//! found by faer's SVD) do not involve the unknowns: they are constraints on
//! the *current* point. The step keeps the independent equations `U_rᵀ r = 0`
//! and replaces the redundant ones by the next step's hidden constraints
//! `Yᵀ r_{k+1}(b) = 0`, evaluated at the extrapolated next point; the current
//! step's own hidden constraints are checked (`StepError::Inconsistent`).
//! The hidden rows' Jacobian comes from Hessian–vector products
//! ([`DiscreteLagrangian::del_directional_increment`](diracvi_geometry::DiscreteLagrangian::del_directional_increment)), and while `Y` stays
//! valid a step starts from the previous step's LU factors, still held by
//! the linear solver (simplified Newton).

use super::{EvalCache, SolverContext, StepEquations};
use crate::StepError;
use crate::linear::SvdSplit;
use crate::newton::{NewtonFailure, NewtonInfo, NewtonParams};
use diracvi_geometry::ad::{DenseConstant, constants, gradient_of, increment, seed_gradient};
use diracvi_geometry::{AdScalar, DiscretizationMap, GeometryError, System};
use nalgebra::{DMatrix, DVector, Dim, Dyn, Matrix, SMatrix, SVector, Storage};
use num_dual::DualSVec;

#[derive(Debug, Clone)]
pub(super) struct HiddenConstraints {
    pub(super) range: DMatrix<f64>,
    pub(super) left_null: DMatrix<f64>,
}

/// Buffers for the degenerate path: the full equations and the next step's
/// residual.
#[derive(Debug, Clone)]
pub(super) struct Scratch {
    pub(super) full_r: DVector<f64>,
    pub(super) full_jac: DMatrix<f64>,
    pub(super) next_r: DVector<f64>,
}

/// Whether the hidden-constraint basis kept from an earlier step still
/// annihilates the Jacobian in `w` (then the step is degenerate in the same
/// way and the basis, and the kept factors, are reused).
pub(super) fn hidden_still_valid<const N: usize, const M: usize>(w: &SolverContext<N, M>) -> bool {
    w.hidden.as_ref().is_some_and(|hc| {
        max_abs_transposed_product(&hc.left_null, &w.ws.jac) <= 1e-10 * w.ws.jac.amax()
    })
}

/// Solve the degenerate step: `w.ws` holds the full equations and their
/// Jacobian at the guess `w.x` (equation scale `scale0`).
///
/// # Errors
/// `StepError::Inconsistent` when the current point violates its hidden
/// constraints, `StepError::NonFinite` for a non-finite Jacobian; the inner
/// `Result` is Newton's.
#[allow(clippy::too_many_arguments)]
pub(super) fn solve<Sy, Dm, const N: usize, const M: usize>(
    w: &mut SolverContext<N, M>,
    eq: &StepEquations<'_, Sy, Dm, N, M>,
    params: &NewtonParams,
    scale0: f64,
    hidden_still_valid: bool,
    t: f64,
) -> Result<Result<NewtonInfo, NewtonFailure>, StepError>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    let geo = |source| StepError::Geometry { t, source };
    let cache = &mut w.cache;
    if !hidden_still_valid {
        let split =
            SvdSplit::new(&w.ws.jac, params.singular_threshold).ok_or(StepError::NonFinite {
                t,
                what: "Jacobian",
                iterations: 0,
            })?;
        w.hidden = Some(HiddenConstraints {
            range: split.range,
            left_null: split.left_null,
        });
        // Factors of other equations must not be reused.
        w.ws.clear_factors();
    }
    let hc = w.hidden.as_ref().expect("set above");
    // The current step's hidden constraints do not involve the unknowns.
    let hidden_now = max_abs_transposed_product(&hc.left_null, &w.ws.r) / scale0;
    if hidden_now > 1e3 * params.tolerance {
        return Err(StepError::Inconsistent {
            t,
            residual: hidden_now,
        });
    }
    let scratch = &mut w.scratch;
    // The full equations at the guess are in `ws`: assemble the
    // degenerate residual from them instead of evaluating them again.
    scratch.full_r.copy_from(&w.ws.r);
    scratch.full_jac.copy_from(&w.ws.jac);
    eq.degenerate(&w.x, scratch, hc, cache, &mut w.ws.r, None)
        .map_err(geo)?;
    let eval = |x: &DVector<f64>, r: &mut DVector<f64>, j: Option<&mut DMatrix<f64>>| {
        let full_jac = j.is_some().then_some(&mut scratch.full_jac);
        let scale = eq.full(x, &mut scratch.full_r, full_jac, cache)?;
        eq.degenerate(x, scratch, hc, cache, r, j)?;
        Ok(scale)
    };
    // The degenerate equations keep their form from step to step
    // (same `U_r`, `Y`), so the previous step's factors serve as
    // the Jacobian while they contract (simplified Newton); if that
    // fails, start again from the guess with full Newton.
    Ok(w.ws.solve_kept(&mut w.x, &mut w.x_start, params, scale0, eval))
}

impl<Sy, Dm, const N: usize, const M: usize> StepEquations<'_, Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    /// The degenerate system `[U_rᵀ r; Yᵀ r_next(b)]` (and its Jacobian)
    /// from the full equations at `x` in `scratch.full_r`/`full_jac`
    /// (written by [`full`](Self::full)). A residual-only evaluation leaves
    /// `(b, D2 L(a, b, h))` in `cache`, so the converged step need not
    /// evaluate its momentum again.
    fn degenerate(
        &self,
        x: &DVector<f64>,
        scratch: &mut Scratch,
        hc: &HiddenConstraints,
        cache: &mut EvalCache<N>,
        r: &mut DVector<f64>,
        jac: Option<&mut DMatrix<f64>>,
    ) -> Result<(), GeometryError> {
        let (ld, a, h, cd) = (&self.ld, &self.a, self.h, self.cd);
        let (system, map) = (ld.system(), ld.map());
        let rank = hc.range.ncols();
        let n = N + M;
        let d = crate::unpack::<N>(x, 0);
        let b = a + d;
        let mu = crate::unpack::<M>(x, N);
        // Next step's residual at b, with the next point extrapolated by the
        // same increment, `c = b + d`.
        let c = b + d;
        let Some(jac) = jac else {
            // Residual only: the same values from first derivatives.
            let pi_b = ld.d2_increment(a, &d, h)?;
            (cache.d, cache.pi_b) = (d, pi_b);
            let d1_next = ld.d1_increment(&b, &d, h)?;
            let forms_b: SMatrix<f64, M, N> = system.constraint_forms(&b);
            let force_b = next_force(&forms_b, &mu);
            let next_r = &mut scratch.next_r;
            for i in 0..N {
                next_r[i] = pi_b[i] + d1_next[i] - force_b[i];
            }
            if M > 0 {
                let omega_next: SVector<f64, M> =
                    cd.evaluate_step(system, map, ld.orientation(), &b, &c, &d, h)?;
                for i in 0..M {
                    next_r[N + i] = omega_next[i];
                }
            }
            for (offset, basis, src) in [
                (0, &hc.range, &scratch.full_r),
                (rank, &hc.left_null, &scratch.next_r),
            ] {
                for p in 0..basis.ncols() {
                    r[offset + p] = basis.column(p).dot(src);
                }
            }
            return Ok(());
        };
        // Range rows: r = U_rᵀ r_full, J = U_rᵀ J_full (small: plain loops
        // beat the generic dynamic-size BLAS paths here).
        for p in 0..rank {
            let u = hc.range.column(p);
            r[p] = u.dot(&scratch.full_r);
            for j in 0..n {
                let mut acc = 0.0;
                for i in 0..n {
                    acc += u[i] * scratch.full_jac[(i, j)];
                }
                jac[(p, j)] = acc;
            }
        }
        // Hidden rows `yᵀ r_next(b)`: the Lagrangian part by one
        // Hessian–vector product per left-null vector `y = (y_q, y_μ)` (no
        // full D22, D11), the first-order force and constraint parts from one
        // dual evaluation.
        let bd = seed_gradient(&b);
        let cdual: SVector<DualSVec<f64, N>, N> = constants(&c);
        let forms_b: SMatrix<DualSVec<f64, N>, M, N> = system.constraint_forms(&bd);
        let force_b = next_force(&forms_b, &mu);
        let omega_next = if M > 0 {
            cd.evaluate_step(
                system,
                map,
                ld.orientation(),
                &bd,
                &cdual,
                &increment(&bd, &cdual, &d),
                DualSVec::constant(h),
            )?
        } else {
            SVector::zeros()
        };
        for p in 0..hc.left_null.ncols() {
            let y = hc.left_null.column(p);
            let y_q = SVector::<f64, N>::from_fn(|i, _| y[i]);
            let (value, gradient) = ld.del_directional_increment(a, &d, &d, h, &y_q)?;
            let mut row_r = value;
            let mut row_j = gradient;
            for i in 0..N {
                row_r -= y[i] * force_b[i].re;
                row_j -= gradient_of(force_b[i]) * y[i];
            }
            for i in 0..M {
                row_r += y[N + i] * omega_next[i].re;
                row_j += gradient_of(omega_next[i]) * y[N + i];
            }
            r[rank + p] = row_r;
            for j in 0..N {
                jac[(rank + p, j)] = row_j[j];
            }
            for j in 0..M {
                let mut acc = 0.0;
                for i in 0..N {
                    acc -= y[i] * forms_b[(j, i)].re;
                }
                jac[(rank + p, N + j)] = acc;
            }
        }
        Ok(())
    }
}

/// `max |Yᵀ B|` over the entries, without forming the product.
fn max_abs_transposed_product<C, S>(y: &DMatrix<f64>, b: &Matrix<f64, Dyn, C, S>) -> f64
where
    C: Dim,
    S: Storage<f64, Dyn, C>,
{
    let mut m: f64 = 0.0;
    for i in 0..y.ncols() {
        for j in 0..b.ncols() {
            let mut acc = 0.0;
            for k in 0..y.nrows() {
                acc += y[(k, i)] * b[(k, j)];
            }
            m = m.max(acc.abs());
        }
    }
    m
}

fn next_force<S: AdScalar, const N: usize, const M: usize>(
    forms: &SMatrix<S, M, N>,
    mu: &SVector<f64, M>,
) -> SVector<S, N> {
    if M == 0 {
        return SVector::from_element(S::from(0.0));
    }
    // Summed from the first term, not from a (sparse) zero constant: see
    // `diracvi_geometry::ad` on dense dual numbers.
    SVector::from_fn(|i, _| (1..M).fold(forms[(0, i)] * mu[0], |s, a| s + forms[(a, i)] * mu[a]))
}
