//! The degenerate path of the run-time-sized Lagrange–Dirac step
//! (docs/theory.md §3.9; the counterpart of the compile-time-sized
//! `lagrange_dirac::degenerate`, operation for operation).
//!
//! When the step Jacobian `J = [[D12, −Aᵀ], [∂_b ω, 0]]` is singular, some
//! combinations `Yᵀ r` of the step equations (`Y` the left null space of `J`,
//! found by faer's SVD) do not involve the unknowns: they are constraints on
//! the *current* point. The step keeps the independent equations `U_rᵀ r = 0`
//! and replaces the redundant ones by the next step's hidden constraints
//! `Yᵀ r_{k+1}(b) = 0`, evaluated at the extrapolated next point; the current
//! step's own hidden constraints are checked (`StepError::Inconsistent`).
//! The hidden rows' Jacobian comes from Hessian–vector products
//! ([`DynDiscreteLagrangian::del_directional_increment`](diracvi_geometry::dynamic::DynDiscreteLagrangian::del_directional_increment))
//! and first-order duals seeded in chunks of directions; while `Y` stays
//! valid a step starts from the previous step's LU factors, still held by
//! the linear solver (simplified Newton).

// Blocks of derivative directions are indexed by their offsets.
#![allow(clippy::needless_range_loop)]

use super::equations::{Buffers, HiddenConstraints, Scratch, StepEquations, Work};
use super::sparse_step::forms_transpose_times;
use crate::StepError;
use crate::assembly::StepJacobian;
use crate::linear::{LinearSolver, SvdSplit};
use crate::newton::{NewtonFailure, NewtonInfo, NewtonParams};
use diracvi_geometry::GeometryError;
use diracvi_geometry::ad::DenseConstant;
use diracvi_geometry::dynamic::{DynSystem, evaluate_constraint_dyn};
use nalgebra::{DMatrix, DVector, Dim, Dyn, Matrix, Storage};
use num_dual::DualSVec;

/// Call `$body` with the const `$w` bound to the chunk width used for `$n`
/// directions (the widths of `diracvi_geometry::dynamic`).
macro_rules! with_width {
    ($n:expr, $w:ident => $body:expr) => {
        match $n {
            0 | 1 => {
                const $w: usize = 1;
                $body
            }
            2 => {
                const $w: usize = 2;
                $body
            }
            3 | 4 => {
                const $w: usize = 4;
                $body
            }
            _ => {
                const $w: usize = 8;
                $body
            }
        }
    };
}

/// Whether the hidden-constraint basis kept from an earlier step still
/// annihilates the Jacobian in `w` (then the step is degenerate in the same
/// way and the basis, and the kept factors, are reused).
pub(super) fn hidden_still_valid<LS>(w: &Work<LS>) -> bool
where
    LS: LinearSolver,
    LS::Jacobian: StepJacobian,
{
    let Some(jac) = w.ws.jac.dense() else {
        return false;
    };
    w.hidden
        .as_ref()
        .is_some_and(|hc| max_abs_transposed_product(&hc.left_null, jac) <= 1e-10 * jac.amax())
}

/// Solve the degenerate step: `w.ws` holds the full equations and their
/// Jacobian at the guess `w.x` (equation scale `scale0`).
///
/// # Errors
/// `StepError::Inconsistent` when the current point violates its hidden
/// constraints, `StepError::NonFinite` for a non-finite Jacobian,
/// `StepError::Unsupported` for sparse Jacobian storage (the hidden
/// constraints come from a dense SVD); the inner `Result` is Newton's.
#[allow(clippy::too_many_arguments)]
pub(super) fn solve<Sy, LS>(
    w: &mut Work<LS>,
    eq: &StepEquations<'_, Sy>,
    params: &NewtonParams,
    scale0: f64,
    hidden_still_valid: bool,
    t: f64,
) -> Result<Result<NewtonInfo, NewtonFailure>, StepError>
where
    Sy: DynSystem,
    LS: LinearSolver,
    LS::Jacobian: StepJacobian,
{
    let geo = |source| StepError::Geometry { t, source };
    let Some(jac) = w.ws.jac.dense() else {
        return Err(StepError::Unsupported(format!(
            "at t = {t}: the step is degenerate (a singular step Jacobian, docs/theory.md §3.9) \
             and the Jacobian is stored sparsely: the hidden constraints come from a dense SVD; \
             build the stepper with dense storage (StructuredLu::dense)"
        )));
    };
    if !hidden_still_valid {
        let split = SvdSplit::new(jac, params.singular_threshold).ok_or(StepError::NonFinite {
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
    let Work {
        ws,
        scratch,
        x,
        x_start,
        bufs,
        hidden,
        ..
    } = w;
    let Some(hc) = hidden.as_ref() else {
        return Err(StepError::NonFinite {
            t,
            what: "Jacobian",
            iterations: 0,
        });
    };
    // The current step's hidden constraints do not involve the unknowns.
    let hidden_now = max_abs_transposed_product(&hc.left_null, &ws.r) / scale0;
    if hidden_now > 1e3 * params.tolerance {
        return Err(StepError::Inconsistent {
            t,
            residual: hidden_now,
        });
    }
    // The full equations at the guess are in `ws`: assemble the
    // degenerate residual from them instead of evaluating them again.
    scratch.full_r.copy_from(&ws.r);
    if let Some(jac) = ws.jac.dense() {
        scratch.full_jac.copy_from(jac);
    }
    eq.degenerate(x, scratch, hc, bufs, &mut ws.r, None)
        .map_err(geo)?;
    let eval = |x: &DVector<f64>, r: &mut DVector<f64>, j: Option<&mut LS::Jacobian>| {
        // Dense storage (checked above): `dense_mut` is `Some`.
        let j = j.and_then(StepJacobian::dense_mut);
        let full_jac = j.is_some().then_some(&mut scratch.full_jac);
        let scale = eq.full(x, &mut scratch.full_r, full_jac, bufs)?;
        eq.degenerate(x, scratch, hc, bufs, r, j)?;
        Ok(scale)
    };
    // The degenerate equations keep their form from step to step
    // (same `U_r`, `Y`), so the previous step's factors serve as
    // the Jacobian while they contract (simplified Newton); if that
    // fails, start again from the guess with full Newton.
    Ok(ws.solve_kept(x, x_start, params, scale0, eval))
}

impl<Sy: DynSystem> StepEquations<'_, Sy> {
    /// The degenerate system `[U_rᵀ r; Yᵀ r_next(b)]` (and its Jacobian)
    /// from the full equations at `x` in `scratch.full_r`/`full_jac`
    /// (written by [`full`](Self::full)). A residual-only evaluation leaves
    /// `(b, D2 L(a, b, h))` in the cache of `bufs`, so the converged step
    /// need not evaluate its momentum again.
    fn degenerate(
        &self,
        x: &DVector<f64>,
        scratch: &mut Scratch,
        hc: &HiddenConstraints,
        bufs: &mut Buffers,
        r: &mut DVector<f64>,
        jac: Option<&mut DMatrix<f64>>,
    ) -> Result<(), GeometryError> {
        let (ld, a, h, cd, n, m) = (&self.ld, self.a, self.h, self.cd, self.n, self.m);
        let system = ld.system();
        let rank = hc.range.ncols();
        let size = n + m;
        bufs.d.copy_from(&x.rows(0, n));
        bufs.mu.copy_from(&x.rows(n, m));
        // Next step's residual at b, with the next point extrapolated by the
        // same increment, `c = b + d`.
        for i in 0..n {
            bufs.b[i] = a[i] + bufs.d[i];
        }
        for i in 0..n {
            bufs.c[i] = bufs.b[i] + bufs.d[i];
        }
        let Some(jac) = jac else {
            // Residual only: the same values from first derivatives.
            ld.d2_increment(a, &bufs.d, h, &mut bufs.pi_b)?;
            bufs.cache_d.copy_from(&bufs.d);
            bufs.cache_pi_b.copy_from(&bufs.pi_b);
            ld.d1_increment(&bufs.b, &bufs.d, h, &mut bufs.d1_next)?;
            system.constraint_forms(bufs.b.as_slice(), &mut bufs.forms);
            forms_transpose_times(&bufs.forms, &bufs.mu, &mut bufs.force);
            let next_r = &mut scratch.next_r;
            for i in 0..n {
                next_r[i] = bufs.pi_b[i] + bufs.d1_next[i] - bufs.force[i];
            }
            if m > 0 {
                evaluate_constraint_dyn(
                    cd,
                    system,
                    ld.orientation(),
                    bufs.b.as_slice(),
                    bufs.c.as_slice(),
                    bufs.d.as_slice(),
                    h,
                    bufs.omega.as_mut_slice(),
                )?;
                for i in 0..m {
                    next_r[n + i] = bufs.omega[i];
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
        // Range rows: r = U_rᵀ r_full, J = U_rᵀ J_full.
        for p in 0..rank {
            let u = hc.range.column(p);
            r[p] = u.dot(&scratch.full_r);
            for j in 0..size {
                let mut acc = 0.0;
                for i in 0..size {
                    acc += u[i] * scratch.full_jac[(i, j)];
                }
                jac[(p, j)] = acc;
            }
        }
        // Hidden rows `yᵀ r_next(b)`: the Lagrangian part by one
        // Hessian–vector product per left-null vector `y = (y_q, y_μ)` (no
        // full D22, D11), the first-order force and constraint parts from
        // dual evaluations seeded in chunks of directions.
        for p in 0..hc.left_null.ncols() {
            for i in 0..n {
                bufs.y_q[i] = hc.left_null[(i, p)];
            }
            let (value, gradient) =
                ld.del_directional_increment(a, &bufs.d, &bufs.d, h, &bufs.y_q)?;
            r[rank + p] = value;
            for j in 0..n {
                jac[(rank + p, j)] = gradient[j];
            }
        }
        with_width!(n, W => self.hidden_rows::<W>(hc, bufs, r, jac))
    }

    /// The force and constraint parts of the hidden rows (their values,
    /// their gradients in `b` and their `μ` columns), added to the
    /// Lagrangian parts already in `r`, `jac`, one block of `W` directions
    /// at a time. Per entry the terms are added in the order of the
    /// compile-time-sized stepper (force rows, then constraint rows).
    fn hidden_rows<const W: usize>(
        &self,
        hc: &HiddenConstraints,
        bufs: &Buffers,
        r: &mut DVector<f64>,
        jac: &mut DMatrix<f64>,
    ) -> Result<(), GeometryError> {
        let (ld, h, cd, n, m) = (&self.ld, self.h, self.cd, self.n, self.m);
        let system = ld.system();
        let rank = hc.range.ncols();
        let (b, c, d, mu) = (
            bufs.b.as_slice(),
            bufs.c.as_slice(),
            bufs.d.as_slice(),
            &bufs.mu,
        );
        let zero = DualSVec::<f64, W>::constant(0.0);
        let cdual: Vec<DualSVec<f64, W>> = c.iter().map(|&v| DualSVec::constant(v)).collect();
        let mut forms = vec![zero; m * n];
        let mut force = vec![zero; n];
        let mut omega = vec![zero; m];
        let hd = DualSVec::<f64, W>::constant(h);
        for (start, len) in (0..n).step_by(W).map(|s| (s, W.min(n - s))) {
            let mut bd: Vec<DualSVec<f64, W>> = b.iter().map(|&v| DualSVec::constant(v)).collect();
            for l in 0..len {
                if let Some(e) = bd[start + l].eps.0.as_mut() {
                    e[l] = 1.0;
                }
            }
            system.constraint_forms(&bd, &mut forms);
            for i in 0..n {
                // Summed from the first term, not from a (sparse) zero
                // constant (see `diracvi_geometry::ad`).
                force[i] = if m == 0 {
                    DualSVec::from(0.0)
                } else {
                    (1..m).fold(forms[i] * mu[0], |s, a| s + forms[a * n + i] * mu[a])
                };
            }
            if m > 0 {
                let inc: Vec<DualSVec<f64, W>> = bd
                    .iter()
                    .zip(&cdual)
                    .zip(d)
                    .map(|((&x, &y), &di)| {
                        let e = y - x;
                        e - e.re + di
                    })
                    .collect();
                evaluate_constraint_dyn(
                    cd,
                    system,
                    ld.orientation(),
                    &bd,
                    &cdual,
                    &inc,
                    hd,
                    &mut omega,
                )?;
            }
            for p in 0..hc.left_null.ncols() {
                let y = hc.left_null.column(p);
                if start == 0 {
                    let mut row_r = r[rank + p];
                    for i in 0..n {
                        row_r -= y[i] * force[i].re;
                    }
                    for i in 0..m {
                        row_r += y[n + i] * omega[i].re;
                    }
                    r[rank + p] = row_r;
                    for j in 0..m {
                        let mut acc = 0.0;
                        for i in 0..n {
                            acc -= y[i] * forms[j * n + i].re;
                        }
                        jac[(rank + p, n + j)] = acc;
                    }
                }
                for l in 0..len {
                    let mut acc = jac[(rank + p, start + l)];
                    for i in 0..n {
                        acc -= eps(&force[i], l) * y[i];
                    }
                    for i in 0..m {
                        acc += eps(&omega[i], l) * y[n + i];
                    }
                    jac[(rank + p, start + l)] = acc;
                }
            }
        }
        Ok(())
    }
}

/// Derivative part `l` of a dual (zero if it carries none).
#[inline(always)]
fn eps<const W: usize>(x: &DualSVec<f64, W>, l: usize) -> f64 {
    x.eps.0.as_ref().map_or(0.0, |e| e[l])
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
