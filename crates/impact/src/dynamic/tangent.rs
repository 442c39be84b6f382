//! The tangent map through impacts (docs/theory.md §12.3): the derivative
//! of the impact time and of the elastic law of \[VCI\] Theorem 3.1, from
//! which the integrator assembles the discrete saltation of a step.
//!
//! The law's tangential equations `ι*_{q̃}(D1 L_d(q̃, ṽ, h₂) − A(q̃)ᵀ λ̃ +
//! D2 L_d(a, q̃, h₁)) = 0` are differentiated in the equivalent form
//! `D1 L_d(q̃, ṽ, h₂) − A(q̃)ᵀ λ̃ + D2 L_d(a, q̃, h₁) = ν ∇g(q̃)` with one more
//! unknown `ν` (the normal impulse): the same solutions, and no derivative
//! of the boundary frame is needed, only the Hessian of `g`. The momentum
//! the step continues from is then `π⁺ = D2 L_d(a, q̃, h₁) − ν ∇g(q̃)`.

use super::{DynImpactIntegrator, DynImpactLaw, DynImpactSite, DynLawTangent, DynRebound};
use crate::ImpactError;
use diracvi_discrete_dirac::StepError;
use diracvi_discrete_dirac::dynamic::{
    DynLagrangeDirac, DynNonholonomicHamiltonian, DynStepTangent, DynSubStep, DynSubStepper,
    check_directions, dyn_constrained_velocity, implicit_derivative, multipliers_from_reaction,
    physical_tangent,
};
use diracvi_geometry::GeometryError;
use diracvi_geometry::dynamic::{
    DynDiscreteLagrangian, DynSystem, ParamLifted, boundary_gradient_dyn, boundary_hessian_dyn,
    constraint_second_dyn, forms_velocity_jacobian_dyn, hamiltonian_momentum_gradient_dyn,
    hamiltonian_position_gradient_dyn, lagrangian_second_dyn, reaction_jacobian_dyn,
};
use nalgebra::{DMatrix, DVector};

/// A law's derivative that does not exist at `site`: [`StepError::Unsupported`]
/// naming the step and time.
fn unsupported_at(site: &DynImpactSite<'_>, what: String) -> ImpactError {
    ImpactError::Step(StepError::Unsupported(format!("at t = {}: {what}", site.t)))
}

/// A grazing impact has no reflected root: the post-impact state is not a
/// differentiable function of the data there.
fn differentiable(site: &DynImpactSite<'_>, rebound: &DynRebound) -> Result<(), ImpactError> {
    if rebound.grazing {
        return Err(unsupported_at(
            site,
            "the impact is grazing (no reflected root): the post-impact state is not a \
             differentiable function of the data there, so it has no tangent map"
                .to_owned(),
        ));
    }
    Ok(())
}

/// `∂π⁺/∂(a, q̃, h₁, h₂)` (`n × (2n + 2)`) of the \[VCI\] Theorem 3.1 law.
pub(crate) fn vci_rebound_tangent<Sy: DynSystem>(
    stepper: &DynLagrangeDirac<Sy>,
    site: &DynImpactSite<'_>,
    rebound: &DynRebound,
) -> Result<DMatrix<f64>, ImpactError> {
    vci_rebound_over(stepper, stepper.system(), 0, site, rebound)
}

/// `∂π⁺/∂(a, q̃, h₁, h₂, s)` (`n × (2n + 2 + r)`) of the \[VCI\] Theorem
/// 3.1 law, `s` the parameter directions `directions` (`P × r`;
/// docs/theory.md §12.4).
pub(crate) fn vci_rebound_sensitivity<Sy: DynSystem>(
    stepper: &DynLagrangeDirac<Sy>,
    site: &DynImpactSite<'_>,
    rebound: &DynRebound,
    directions: &DMatrix<f64>,
) -> Result<DMatrix<f64>, ImpactError> {
    check_directions(stepper.system(), directions).map_err(ImpactError::Step)?;
    let lifted = ParamLifted::new(stepper.system(), directions);
    vci_rebound_over(stepper, &lifted, directions.ncols(), site, rebound)
}

/// `x` (`n` entries) followed by `r` zeros.
fn lift(x: &DVector<f64>, r: usize) -> DVector<f64> {
    let mut y = DVector::zeros(x.len() + r);
    y.rows_mut(0, x.len()).copy_from(x);
    y
}

/// The law's derivative with the second derivatives taken over `lifted`:
/// the system (`r = 0`) or its [`ParamLifted`] with `r` directions.
fn vci_rebound_over<Sy: DynSystem, Ly: DynSystem>(
    stepper: &DynLagrangeDirac<Sy>,
    lifted: &Ly,
    r: usize,
    site: &DynImpactSite<'_>,
    rebound: &DynRebound,
) -> Result<DMatrix<f64>, ImpactError> {
    let t = site.t;
    let unsupported = |what: String| unsupported_at(site, what);
    differentiable(site, rebound)?;
    let geo = |source: GeometryError| ImpactError::Geometry { t, source };
    let system = stepper.system();
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    let np = n + r;
    // lifted z' = (a, s_a, b, s_b, h): columns and rows of the second derivatives
    let (cb, csa, csb, ch) = (np, n, np + n, 2 * np);
    let rp2 = np;
    let ld = DynDiscreteLagrangian::new(lifted, stepper.map()).oriented(stepper.orientation());
    let (a, d1, q) = (&site.a, &site.before.d, &site.before.b);
    let (h1, h2) = (site.h1, site.h2);
    let e = &rebound.after.d;
    let (forms, lam) =
        multipliers_from_reaction(system, q, &rebound.after.reaction).ok_or_else(|| {
            unsupported("the constraint rows A(q̃) are dependent at the impact point".to_owned())
        })?;
    let (al, d1l, ql, el) = (lift(a, r), lift(d1, r), lift(q, r), lift(e, r));
    let s1 = ld.second_increment(&al, &d1l, h1).map_err(geo)?;
    let s2 = ld.second_increment(&ql, &el, h2).map_err(geo)?;
    let (_, w2) = constraint_second_dyn(stepper.constraint(), &ld, &ql, &el, h2).map_err(geo)?;
    let (_, dg_full, hg) = boundary_hessian_dyn(lifted, site.frame.piece, &ql).map_err(geo)?;
    let dg = dg_full.rows(0, n).into_owned();
    let reaction_q = reaction_jacobian_dyn(lifted, &ql, &lam).map_err(geo)?;
    // ν from the tangential equations' full form.
    let p1_after = s2.gradient.rows(0, n);
    let p2_before = s1.gradient.rows(rp2, n);
    let residual = p1_after - forms.transpose() * &lam + p2_before;
    let nu = dg.dot(&residual) / dg.norm_squared();
    let (j1, j2) = (&s1.jacobian, &s2.jacobian);
    let two = 2 * n;
    // Unknowns y = (e, λ, ν); data x = (a, q̃, h₁, h₂, s). Rows: energy,
    // momentum (n), constraint (m).
    let size = n + m + 1;
    let mut gy = DMatrix::zeros(size, size);
    let mut gx = DMatrix::zeros(size, two + 2 + r);
    for j in 0..n {
        // Energy: D3 L_d(a, q̃, h₁) − D3 L_d(q̃, q̃ + e, h₂).
        gy[(0, j)] = -j2[(ch, cb + j)];
        gx[(0, j)] = j1[(ch, j)];
        gx[(0, n + j)] = j1[(ch, cb + j)] - j2[(ch, j)] - j2[(ch, cb + j)];
    }
    gx[(0, two)] = j1[(ch, ch)];
    gx[(0, two + 1)] = -j2[(ch, ch)];
    for s in 0..r {
        gx[(0, two + 2 + s)] =
            j1[(ch, csa + s)] + j1[(ch, csb + s)] - j2[(ch, csa + s)] - j2[(ch, csb + s)];
    }
    for i in 0..n {
        for j in 0..n {
            gy[(1 + i, j)] = j2[(i, cb + j)];
            gx[(1 + i, j)] = j1[(rp2 + i, j)];
            gx[(1 + i, n + j)] = j1[(rp2 + i, cb + j)] + j2[(i, j)] + j2[(i, cb + j)]
                - reaction_q[(i, j)]
                - nu * hg[(i, j)];
        }
        for c in 0..m {
            gy[(1 + i, n + c)] = -forms[(c, i)];
        }
        gy[(1 + i, n + m)] = -dg[i];
        gx[(1 + i, two)] = j1[(rp2 + i, ch)];
        gx[(1 + i, two + 1)] = j2[(i, ch)];
        for s in 0..r {
            gx[(1 + i, two + 2 + s)] = j1[(rp2 + i, csa + s)]
                + j1[(rp2 + i, csb + s)]
                + j2[(i, csa + s)]
                + j2[(i, csb + s)]
                - reaction_q[(i, n + s)]
                - nu * hg[(i, n + s)];
        }
    }
    for c in 0..m {
        for j in 0..n {
            gy[(1 + n + c, j)] = w2[(c, cb + j)];
            gx[(1 + n + c, n + j)] = w2[(c, j)] + w2[(c, cb + j)];
        }
        gx[(1 + n + c, two + 1)] = w2[(c, ch)];
        for s in 0..r {
            gx[(1 + n + c, two + 2 + s)] = w2[(c, csa + s)] + w2[(c, csb + s)];
        }
    }
    let y = implicit_derivative(gy, &gx).map_err(|ratio| {
        unsupported(format!(
            "the post-impact equations are singular at this impact (pivot ratio {ratio:.1e})"
        ))
    })?;
    // π⁺ = D2 L_d(a, q̃, h₁) − ν ∇g(q̃).
    let mut out = DMatrix::zeros(n, two + 2 + r);
    for i in 0..n {
        for j in 0..n {
            out[(i, j)] = j1[(rp2 + i, j)];
            out[(i, n + j)] = j1[(rp2 + i, cb + j)] - nu * hg[(i, j)];
        }
        out[(i, two)] = j1[(rp2 + i, ch)];
        for s in 0..r {
            out[(i, two + 2 + s)] =
                j1[(rp2 + i, csa + s)] + j1[(rp2 + i, csb + s)] - nu * hg[(i, n + s)];
        }
    }
    let dnu = y.row(n + m);
    out -= &dg * dnu;
    Ok(out)
}

/// `∂π⁺/∂q̃` and `∂π⁺/∂π⁻` of the continuous elastic-impact law
/// (docs/theory.md §9.3, §12.6) at an impact at `q̃ = before.b` with the
/// momentum `π⁻ = before.π_b` (oriented, `p = σ π`): the implicit function
/// theorem on both of its solves, `y = (v⁻, ν⁻, v⁺, λ, ν)` from
/// `z = (q̃, p⁻)`,
/// ```text
/// ∂L/∂v(q̃, v⁻) − p⁻ − A(q̃)ᵀ ν⁻ = 0,      A(q̃) v⁻ = 0,
/// ∂L/∂v(q̃, v⁺) − p⁻ − λ dg(q̃) − A(q̃)ᵀ ν = 0,
/// E(q̃, v⁺) − E(q̃, v⁻) = 0,                A(q̃) v⁺ = 0,
/// ```
/// then `p⁺ = ∂L/∂v(q̃, v⁺)`. Every partial derivative is exact
/// (hyper-dual numbers): `∂²L/∂(q, v)²`, `∂(A(q)ᵀ ν)/∂q`, `∂(A(q) v)/∂q`,
/// the Hessian of `g`.
pub(crate) fn continuous_rebound_tangent<Sy: DynSystem>(
    system: &Sy,
    sign: f64,
    site: &DynImpactSite<'_>,
    rebound: &DynRebound,
) -> Result<DynLawTangent, ImpactError> {
    continuous_rebound_over(system, system, 0, sign, site, rebound)
}

/// [`continuous_rebound_tangent`] with the parameter columns: `∂π⁺/∂s` at
/// fixed `(q̃, π⁻)`, `s` the parameter directions `directions` (`P × r`;
/// docs/theory.md §12.6). `θ` enters every equation of the law: the
/// Lagrangian (`∂L/∂v`, `E`), the constraint forms `A(q̃)` and the wall's
/// normal `dg(q̃)`; their derivatives in `s` are those of the system lifted
/// by the directions ([`ParamLifted`]). The motion of the impact point and
/// time with `θ` (`∂g/∂θ`) is the integrator's ([`saltation`]).
pub(crate) fn continuous_rebound_sensitivity<Sy: DynSystem>(
    system: &Sy,
    sign: f64,
    site: &DynImpactSite<'_>,
    rebound: &DynRebound,
    directions: &DMatrix<f64>,
) -> Result<DynLawTangent, ImpactError> {
    check_directions(system, directions).map_err(ImpactError::Step)?;
    let lifted = ParamLifted::new(system, directions);
    continuous_rebound_over(system, &lifted, directions.ncols(), sign, site, rebound)
}

/// The continuous law's derivative with the second derivatives taken over
/// `lifted`: the system (`r = 0`) or its [`ParamLifted`] with `r`
/// directions (lifted coordinates `(q, s)`, velocities `(v, v_s)`).
fn continuous_rebound_over<Sy: DynSystem, Ly: DynSystem>(
    system: &Sy,
    lifted: &Ly,
    r: usize,
    sign: f64,
    site: &DynImpactSite<'_>,
    rebound: &DynRebound,
) -> Result<DynLawTangent, ImpactError> {
    let t = site.t;
    let unsupported = |what: String| unsupported_at(site, what);
    differentiable(site, rebound)?;
    let geo = |source: GeometryError| ImpactError::Geometry { t, source };
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    let np = n + r;
    let q = &site.before.b;
    let p_minus = &site.before.pi_b * sign;
    let p_plus = &rebound.pi_after_raw * sign;
    let (v_minus, nu_minus) = dyn_constrained_velocity(system, q, &p_minus).map_err(geo)?;
    let (v_plus, _) = dyn_constrained_velocity(system, q, &p_plus).map_err(geo)?;
    let ql = lift(q, r);
    let (_, dg_full, hg) = boundary_hessian_dyn(lifted, site.frame.piece, &ql).map_err(geo)?;
    let dg = dg_full.rows(0, n).into_owned();
    let mut rows = vec![0.0; m * n];
    system.constraint_forms(q.as_slice(), &mut rows);
    let forms = DMatrix::from_row_slice(m, n, &rows);
    // λ dg + A(q̃)ᵀ ν = p⁺ − p⁻ (the law's own equations), by least squares.
    let mut normal = DMatrix::zeros(n, m + 1);
    normal.set_column(0, &dg);
    for c in 0..m {
        normal.set_column(1 + c, &forms.row(c).transpose());
    }
    let multipliers = normal
        .clone()
        .svd(true, true)
        .solve(&(&p_plus - &p_minus), 1e-14)
        .map_err(|e| unsupported(format!("the impact's multipliers: {e}")))?;
    let lambda = multipliers[0];
    let nu = multipliers.rows(1, m).into_owned();
    let (vl_minus, vl_plus) = (lift(&v_minus, r), lift(&v_plus, r));
    let (_, g_minus, h_minus) = lagrangian_second_dyn(lifted, &ql, &vl_minus).map_err(geo)?;
    let (_, g_plus, h_plus) = lagrangian_second_dyn(lifted, &ql, &vl_plus).map_err(geo)?;
    // ∂²L/∂v², ∂(∂L/∂v)/∂q and ∂(∂L/∂v)/∂s at both velocities (lifted
    // Hessian over (q, s, v, v_s)); ∂E/∂v = ∂²L/∂v² v,
    // ∂E/∂q = (∂(∂L/∂v)/∂q)ᵀ v − ∂L/∂q, and likewise ∂E/∂s.
    let block = |h: &DMatrix<f64>, c: usize, w: usize| h.view((np, c), (n, w)).into_owned();
    let (vv_m, vq_m, vs_m) = (
        block(&h_minus, np, n),
        block(&h_minus, 0, n),
        block(&h_minus, n, r),
    );
    let (vv_p, vq_p, vs_p) = (
        block(&h_plus, np, n),
        block(&h_plus, 0, n),
        block(&h_plus, n, r),
    );
    let ev_m = &vv_m * &v_minus;
    let ev_p = &vv_p * &v_plus;
    let eq_m = vq_m.transpose() * &v_minus - g_minus.rows(0, n);
    let eq_p = vq_p.transpose() * &v_plus - g_plus.rows(0, n);
    let es_m = vs_m.transpose() * &v_minus - g_minus.rows(n, r);
    let es_p = vs_p.transpose() * &v_plus - g_plus.rows(n, r);
    let react_m = reaction_jacobian_dyn(lifted, &ql, &nu_minus).map_err(geo)?;
    let react_p = reaction_jacobian_dyn(lifted, &ql, &nu).map_err(geo)?;
    let forms_m = forms_velocity_jacobian_dyn(lifted, &ql, &vl_minus).map_err(geo)?;
    let forms_p = forms_velocity_jacobian_dyn(lifted, &ql, &vl_plus).map_err(geo)?;
    // y = (v⁻, ν⁻, v⁺, λ, ν); rows: E1 (n), E2 (m), E3 (n), E4 (1), E5 (m);
    // z = (q̃, p⁻, s).
    let (cv_m, cnu_m, cv_p, cl, cnu) = (0, n, n + m, 2 * n + m, 2 * n + m + 1);
    let (r2, r3, r4, r5) = (n, n + m, 2 * n + m, 2 * n + m + 1);
    let cs = 2 * n;
    let size = 2 * n + 2 * m + 1;
    let mut gy = DMatrix::zeros(size, size);
    let mut gz = DMatrix::zeros(size, 2 * n + r);
    gy.view_mut((0, cv_m), (n, n)).copy_from(&vv_m);
    gy.view_mut((r3, cv_p), (n, n)).copy_from(&vv_p);
    let hg_q = hg.view((0, 0), (n, n));
    gz.view_mut((0, 0), (n, n))
        .copy_from(&(&vq_m - react_m.view((0, 0), (n, n))));
    gz.view_mut((r3, 0), (n, n))
        .copy_from(&(&vq_p - hg_q * lambda - react_p.view((0, 0), (n, n))));
    for i in 0..n {
        gz[(i, n + i)] = -1.0;
        gz[(r3 + i, n + i)] = -1.0;
        gy[(r3 + i, cl)] = -dg[i];
        gy[(r4, cv_m + i)] = -ev_m[i];
        gy[(r4, cv_p + i)] = ev_p[i];
        gz[(r4, i)] = eq_p[i] - eq_m[i];
        for c in 0..m {
            gy[(i, cnu_m + c)] = -forms[(c, i)];
            gy[(r3 + i, cnu + c)] = -forms[(c, i)];
            gy[(r2 + c, cv_m + i)] = forms[(c, i)];
            gy[(r5 + c, cv_p + i)] = forms[(c, i)];
            gz[(r2 + c, i)] = forms_m[(c, i)];
            gz[(r5 + c, i)] = forms_p[(c, i)];
        }
        for s in 0..r {
            gz[(i, cs + s)] = vs_m[(i, s)] - react_m[(i, n + s)];
            gz[(r3 + i, cs + s)] = vs_p[(i, s)] - lambda * hg[(i, n + s)] - react_p[(i, n + s)];
        }
    }
    for s in 0..r {
        gz[(r4, cs + s)] = es_p[s] - es_m[s];
        for c in 0..m {
            gz[(r2 + c, cs + s)] = forms_m[(c, n + s)];
            gz[(r5 + c, cs + s)] = forms_p[(c, n + s)];
        }
    }
    let y = implicit_derivative(gy, &gz).map_err(|ratio| {
        unsupported(format!(
            "the continuous impact law's equations are singular at this impact (pivot ratio \
             {ratio:.1e})"
        ))
    })?;
    // p⁺ = ∂L/∂v(q̃, v⁺; θ): dp⁺ = ∂(∂L/∂v)/∂q dq̃ + ∂(∂L/∂v)/∂s ds
    // + ∂²L/∂v² dv⁺.
    let mut dp = &vv_p * y.rows(cv_p, n);
    let mut dq = dp.columns_mut(0, n);
    dq += &vq_p;
    let mut ds = dp.columns_mut(cs, r);
    ds += &vs_p;
    // Oriented: ∂π⁺/∂q̃ = σ ∂p⁺/∂q̃, ∂π⁺/∂s = σ ∂p⁺/∂s, ∂π⁺/∂π⁻ = ∂p⁺/∂p⁻.
    let mut data = DMatrix::zeros(n, 2 * n + 2 + r);
    data.columns_mut(n, n).copy_from(&(dp.columns(0, n) * sign));
    data.columns_mut(2 * n + 2, r)
        .copy_from(&(dp.columns(cs, r) * sign));
    Ok(DynLawTangent {
        data,
        momentum: Some(dp.columns(n, n).into_owned()),
    })
}

/// `∂g_j/∂θ · D` (`r` entries) at `q`: how the wall moves with the
/// parameter directions `directions` (`P × r`).
fn wall_sensitivity<Sy: DynSystem>(
    system: &Sy,
    piece: usize,
    q: &DVector<f64>,
    directions: &DMatrix<f64>,
) -> Result<DVector<f64>, GeometryError> {
    let n = q.len();
    let r = directions.ncols();
    let lifted = ParamLifted::new(system, directions);
    let (_, grad) = boundary_gradient_dyn(&lifted, piece, &lift(q, r))?;
    Ok(grad.rows(n, r).into_owned())
}

/// `X ← S X S'` for a `2n × (2n + r)` derivative with respect to
/// `(q, π, s)`: `S = diag(I, σ I)` on the rows, `S' = diag(I, σ I, I)` on
/// the columns (see [`physical_tangent`]).
fn physical_extended(x: &mut DMatrix<f64>, n: usize, sign: f64) {
    if sign < 0.0 {
        for i in 0..x.nrows() {
            for j in 0..x.ncols() {
                let col_momentum = (n..2 * n).contains(&j);
                if (i >= n) != col_momentum {
                    x[(i, j)] = -x[(i, j)];
                }
            }
        }
    }
}

/// `block` (`rows × r`) in the last `r` of `width` columns, zeros before.
fn in_parameter_columns(block: &DMatrix<f64>, width: usize) -> DMatrix<f64> {
    let r = block.ncols();
    let mut out = DMatrix::zeros(block.nrows(), width);
    out.columns_mut(width - r, r).copy_from(block);
    out
}

impl<St, L> DynImpactIntegrator<St, L>
where
    St: DynSubStepper,
    L: DynImpactLaw<St>,
{
    /// The parameter directions tracked, if any (`P × r`).
    fn direction_count(&self) -> usize {
        self.directions.as_ref().map_or(0, DMatrix::ncols)
    }

    /// The carry at the start of a step: `∂(a, π_a, h_r)/∂(q_k, π_k, s)`
    /// (`(2n + 1) × (2n + r)`), the identity on `(q_k, π_k)`.
    pub(super) fn start_carry(&self, n: usize) -> DMatrix<f64> {
        let mut c = DMatrix::zeros(2 * n + 1, 2 * n + self.direction_count());
        c.view_mut((0, 0), (2 * n, 2 * n)).fill_with_identity();
        c
    }

    /// Close a step that ended with the smooth sub-step `sub` from `a`
    /// (step `hr`), from the carry `c`: multiply the tracked Jacobian
    /// (and sensitivities) by the step's derivative between physical states.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn absorb_smooth(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        hr: f64,
        c: &DMatrix<f64>,
        sign: f64,
    ) -> Result<(), ImpactError> {
        let n = a.len();
        let width = c.ncols();
        // A step whose length is not carried (every step but the remainder
        // after an impact) needs no `∂/∂h`.
        let with_h = c.row(2 * n).iter().any(|&x| x != 0.0);
        let dirs = self.directions.as_ref();
        let s = self
            .stepper
            .sub_step_derivative(t, a, sub, hr, dirs, with_h)?;
        let (tangent, parameters) = (s.tangent, dirs.map(|_| s.parameters));
        let mut step = DMatrix::zeros(2 * n, 2 * n + 1);
        step.view_mut((0, 0), (2 * n, 2 * n))
            .copy_from(&tangent.start);
        step.set_column(2 * n, &tangent.step);
        let mut x = step * c;
        if let Some(p) = &parameters {
            x += in_parameter_columns(p, width);
        }
        if parameters.is_none() {
            physical_tangent(&mut x, sign);
        } else {
            physical_extended(&mut x, n, sign);
        }
        if let Some(tape) = &mut self.tape {
            tape.push(x.clone());
        }
        let xs = x.columns(0, 2 * n);
        if let Some(s) = &mut self.sensitivity {
            *s = xs * &*s + x.columns(2 * n, width - 2 * n);
        }
        if let Some(j) = &mut self.jacobian {
            *j = xs * &*j;
        }
        Ok(())
    }

    /// The carry after an impact at `site` (see [`saltation`]), from the
    /// carry `c` of the sub-step that crossed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn impact_carry(
        &self,
        t: f64,
        site: &DynImpactSite<'_>,
        rebound: &DynRebound,
        c: &DMatrix<f64>,
        clamped: Option<f64>,
    ) -> Result<DMatrix<f64>, ImpactError> {
        let (a, before, h1) = (&site.a, site.before, site.h1);
        let dg = &site.frame.dg;
        Ok(match &self.directions {
            None => {
                let before_tangent = self.stepper.sub_step_tangent(t, a, before, h1)?;
                let law = self.law.rebound_tangent(&self.stepper, site, rebound)?;
                saltation(c, &before_tangent, None, &law, dg, None, clamped)
            }
            Some(dirs) => {
                let b = self.stepper.sub_step_sensitivity(t, a, before, h1, dirs)?;
                let law = self
                    .law
                    .rebound_sensitivity(&self.stepper, site, rebound, dirs)?;
                let gs = wall_sensitivity(self.stepper.system(), site.frame.piece, &before.b, dirs)
                    .map_err(|source| ImpactError::Geometry { t: site.t, source })?;
                saltation(
                    c,
                    &b.tangent,
                    Some(&b.parameters),
                    &law,
                    dg,
                    Some(&gs),
                    clamped,
                )
            }
        })
    }
}

/// The data `(q̃, π⁺, h₂)` of the sub-step after an impact, differentiated
/// through the impact (docs/theory.md §12.3–12.4), from those of the
/// sub-step that crossed, `c = ∂(a, π_a, h_r)/∂(q_k, π_k, s)` (`(2n + 1) ×
/// (2n + r)`, `r` parameter directions, possibly none): the impact time
/// `h₁` follows from `g(q̃(a, π_a, h₁; s); s) = 0` (or is `α h_r` when the
/// impact fraction was clamped to `alpha`), `q̃` from the step to the wall
/// (`before`, with its parameter derivative `before_s`), `π⁺` from the
/// law's derivative `law = ∂π⁺/∂(a, q̃, h₁, h₂, s)` (and `∂π⁺/∂π⁻` with
/// `π⁻` the momentum `before` reaches the wall with, for a law that reads
/// it), and `h₂ = h_r − h₁`; `g_s = ∂g/∂s` at `q̃`.
fn saltation(
    c: &DMatrix<f64>,
    before: &DynStepTangent,
    before_s: Option<&DMatrix<f64>>,
    law: &DynLawTangent,
    dg: &DVector<f64>,
    g_s: Option<&DVector<f64>>,
    clamped: Option<f64>,
) -> DMatrix<f64> {
    let n = dg.len();
    let width = c.ncols();
    let z = c.rows(0, 2 * n);
    let hr = c.row(2 * n);
    // ∂q̃/∂(q_k, π_k, s) at a fixed h₁
    let mut qz = before.start.rows(0, n) * z;
    if let Some(bs) = before_s {
        qz += in_parameter_columns(&bs.rows(0, n).into_owned(), width);
    }
    let qh = before.step.rows(0, n);
    let dh1 = match clamped {
        Some(alpha) => hr * alpha,
        None => {
            let mut num = dg.transpose() * &qz;
            if let Some(gs) = g_s {
                let r = gs.len();
                for s in 0..r {
                    num[width - r + s] += gs[s];
                }
            }
            -num / dg.dot(&qh)
        }
    };
    let dq = &qz + qh * &dh1;
    let dh2 = hr - &dh1;
    let (momentum, law) = (&law.momentum, &law.data);
    let mut dpi = law.columns(0, n) * c.rows(0, n)
        + law.columns(n, n) * &dq
        + law.column(2 * n) * &dh1
        + law.column(2 * n + 1) * &dh2;
    let r = law.ncols() - (2 * n + 2);
    if r > 0 {
        dpi += in_parameter_columns(&law.columns(2 * n + 2, r).into_owned(), width);
    }
    if let Some(lp) = momentum {
        // π⁻ = π_b(a, π_a, h₁; s) of the sub-step to the wall
        let mut pz = before.start.rows(n, n) * z;
        if let Some(bs) = before_s {
            pz += in_parameter_columns(&bs.rows(n, n).into_owned(), width);
        }
        dpi += lp * (pz + before.step.rows(n, n) * &dh1);
    }
    let mut out = DMatrix::zeros(2 * n + 1, width);
    out.rows_mut(0, n).copy_from(&dq);
    out.rows_mut(n, n).copy_from(&dpi);
    out.row_mut(2 * n).copy_from(&dh2);
    out
}

/// `∂K/∂a` (with `∂K/∂s` after it over a lifted system) and `∂K/∂π` of the
/// kernel of a Hamiltonian step at `(q, π)`.
fn kernel_gradients<Ly: DynSystem>(
    lifted: &Ly,
    reversed: bool,
    q: &DVector<f64>,
    pi: &DVector<f64>,
) -> Option<(DVector<f64>, DVector<f64>)> {
    let position = hamiltonian_position_gradient_dyn(lifted, reversed, q, pi)?;
    let (_, momentum) = hamiltonian_momentum_gradient_dyn(lifted, reversed, q, pi)?;
    Some((position, momentum))
}

/// `∂π⁺/∂(a, q̃, h₁, h₂, s)` and `∂π⁺/∂π⁻` of the Hamiltonian law
/// (docs/theory.md §4.10, §12.7), `s` the parameter directions `directions`
/// (`P × r`) when given. The law is `π⁺ = π⁻ + ν n̂(q̃)` with `ν` the
/// reflected root of the energy balance
/// ```text
/// E(ν) = K(q̃, π_b'(q̃, π⁻ + ν n̂(q̃), h₂)) − K(a, π⁻) = 0,
/// ```
/// `π_b'` the end momentum of the post-impact sub-step: differentiated,
/// `dν = −(∂E/∂ν)⁻¹ (∂E/∂a da + ∂E/∂q̃ dq̃ + ∂E/∂π⁻ dπ⁻ + ∂E/∂h₂ dh₂ + ∂E/∂s ds)`
/// with the post-impact sub-step's own tangent map (and parameter columns)
/// for `∂π_b'/∂(q̃, π⁺, h₂, s)` and `∂n̂/∂q = (I − n̂n̂ᵀ) ∇²g / |∇g|`; then
/// `dπ⁺ = dπ⁻ + n̂ dν + ν dn̂`.
pub(crate) fn hamiltonian_rebound_tangent<Sy: DynSystem>(
    stepper: &DynNonholonomicHamiltonian<Sy>,
    site: &DynImpactSite<'_>,
    rebound: &DynRebound,
    directions: Option<&DMatrix<f64>>,
) -> Result<DynLawTangent, ImpactError> {
    differentiable(site, rebound)?;
    match directions {
        None => {
            let after = stepper
                .oriented_tangent(site.t, &site.before.b, &rebound.after, site.h2)
                .map_err(ImpactError::Step)?;
            let parameters = DMatrix::zeros(after.start.nrows(), 0);
            hamiltonian_rebound_over(
                stepper,
                stepper.system(),
                site,
                rebound,
                &after,
                &parameters,
            )
        }
        Some(dirs) => {
            check_directions(stepper.system(), dirs).map_err(ImpactError::Step)?;
            let after = stepper
                .oriented_sensitivity(site.t, &site.before.b, &rebound.after, site.h2, dirs)
                .map_err(ImpactError::Step)?;
            let lifted = ParamLifted::new(stepper.system(), dirs);
            hamiltonian_rebound_over(
                stepper,
                &lifted,
                site,
                rebound,
                &after.tangent,
                &after.parameters,
            )
        }
    }
}

/// The Hamiltonian law's derivative with the first and second derivatives
/// in `s` taken over `lifted` (the system, or its [`ParamLifted`] with
/// `r = parameters.ncols()` directions); `after` and `parameters` are the
/// post-impact sub-step's derivatives.
fn hamiltonian_rebound_over<Sy: DynSystem, Ly: DynSystem>(
    stepper: &DynNonholonomicHamiltonian<Sy>,
    lifted: &Ly,
    site: &DynImpactSite<'_>,
    rebound: &DynRebound,
    after: &DynStepTangent,
    parameters: &DMatrix<f64>,
) -> Result<DynLawTangent, ImpactError> {
    let t = site.t;
    let geo = |source: GeometryError| ImpactError::Geometry { t, source };
    let n = stepper.system().coordinate_count();
    let r = parameters.ncols();
    let reversed = stepper.direction().orientation() == diracvi_geometry::Orientation::Reversed;
    let q = &site.before.b;
    let pi_minus = &site.before.pi_b;
    let normal = site.frame.normal();
    let nu = normal.dot(&(&rebound.pi_after_raw - pi_minus));
    let no_hamiltonian = || {
        unsupported_at(
            site,
            "the system supplies no Hamiltonian, so the Hamiltonian law has no derivative"
                .to_owned(),
        )
    };
    // K at the end of the post-impact sub-step and at the end of the one
    // that reached the wall, over (q, s) and π.
    let (e_qs, g_b) =
        kernel_gradients(lifted, reversed, &lift(q, r), &lift(&rebound.after.pi_b, r))
            .ok_or_else(no_hamiltonian)?;
    let (f_as, f_pi) = kernel_gradients(lifted, reversed, &lift(&site.a, r), &lift(pi_minus, r))
        .ok_or_else(no_hamiltonian)?;
    let g_b = g_b.rows(0, n).into_owned();
    let f_pi = f_pi.rows(0, n).into_owned();
    // ∂n̂/∂(q, s) = (I − n̂n̂ᵀ) ∂∇g/∂(q, s) / |∇g|.
    let (_, dg, hg) = boundary_hessian_dyn(lifted, site.frame.piece, &lift(q, r)).map_err(geo)?;
    let norm = dg.rows(0, n).norm();
    let projector = DMatrix::identity(n, n) - &normal * normal.transpose();
    let dn = projector * hg.rows(0, n) / norm;
    // the post-impact sub-step: π_b' over (q̃, π⁺), h₂ and s
    let p_q = after.start.view((n, 0), (n, n));
    let p_pi = after.start.view((n, n), (n, n));
    let p_h = after.step.rows(n, n);
    let p_s = parameters.rows(n, n);
    let w = p_pi.transpose() * &g_b;
    let slope = w.dot(&normal);
    if !(slope.is_finite() && slope.abs() > 0.0) {
        return Err(unsupported_at(
            site,
            format!(
                "the discrete energy after the impact does not vary with the normal impulse \
                 (∂E/∂ν = {slope:e}): the law has no derivative there"
            ),
        ));
    }
    // ∂E/∂(…) at fixed ν, with π⁺ = π⁻ + ν n̂(q̃; s)
    let dn_q = dn.columns(0, n);
    let e_q = e_qs.rows(0, n) + p_q.transpose() * &g_b + dn_q.transpose() * &w * nu;
    let e_pi = &w - &f_pi;
    let e_h = g_b.dot(&p_h);
    let e_a = -f_as.rows(0, n);
    let mut data = DMatrix::zeros(n, 2 * n + 2 + r);
    // dπ⁺ = n̂ dν + ν dn̂ (+ dπ⁻, in `momentum`), dν = −dE/slope
    data.columns_mut(0, n)
        .copy_from(&(&normal * (e_a.transpose() * (-1.0 / slope))));
    data.columns_mut(n, n)
        .copy_from(&(&normal * (e_q.transpose() * (-1.0 / slope)) + dn_q * nu));
    data.column_mut(2 * n + 1)
        .copy_from(&(&normal * (-e_h / slope)));
    if r > 0 {
        let dn_s = dn.columns(n, r);
        let e_s =
            e_qs.rows(n, r) + p_s.transpose() * &g_b + dn_s.transpose() * &w * nu - f_as.rows(n, r);
        data.columns_mut(2 * n + 2, r)
            .copy_from(&(&normal * (e_s.transpose() * (-1.0 / slope)) + dn_s * nu));
    }
    let momentum = DMatrix::identity(n, n) + &normal * (e_pi.transpose() * (-1.0 / slope));
    Ok(DynLawTangent {
        data,
        momentum: Some(momentum),
    })
}
