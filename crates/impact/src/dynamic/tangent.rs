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

use super::{DynImpactSite, DynRebound};
use crate::ImpactError;
use diracvi_discrete_dirac::StepError;
use diracvi_discrete_dirac::dynamic::{
    DynLagrangeDirac, implicit_derivative, multipliers_from_reaction,
};
use diracvi_geometry::GeometryError;
use diracvi_geometry::dynamic::{
    DynSystem, boundary_hessian_dyn, constraint_second_dyn, reaction_jacobian_dyn,
};
use nalgebra::DMatrix;

/// `∂π⁺/∂(a, q̃, h₁, h₂)` (`n × (2n + 2)`) of the \[VCI\] Theorem 3.1 law.
pub(crate) fn vci_rebound_tangent<Sy: DynSystem>(
    stepper: &DynLagrangeDirac<Sy>,
    site: &DynImpactSite<'_>,
    rebound: &DynRebound,
) -> Result<DMatrix<f64>, ImpactError> {
    let (k, t) = (site.step, site.t);
    let unsupported = |what: String| {
        ImpactError::Step(StepError::Unsupported(format!(
            "step {k} at t = {t}: {what}"
        )))
    };
    if rebound.grazing {
        return Err(unsupported(
            "the impact is grazing (no reflected root): the post-impact state is not a \
             differentiable function of the data there, so it has no tangent map"
                .to_owned(),
        ));
    }
    let geo = |source: GeometryError| ImpactError::Geometry { step: k, t, source };
    let system = stepper.system();
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    let ld = stepper.discrete_lagrangian();
    let (a, d1, q) = (&site.a, &site.before.d, &site.before.b);
    let (h1, h2) = (site.h1, site.h2);
    let e = &rebound.after.d;
    let (forms, lam) =
        multipliers_from_reaction(system, q, &rebound.after.reaction).ok_or_else(|| {
            unsupported("the constraint rows A(q̃) are dependent at the impact point".to_owned())
        })?;
    let s1 = ld.second_increment(a, d1, h1).map_err(geo)?;
    let s2 = ld.second_increment(q, e, h2).map_err(geo)?;
    let (_, w2) = constraint_second_dyn(stepper.constraint(), &ld, q, e, h2).map_err(geo)?;
    let (_, dg, hg) = boundary_hessian_dyn(system, site.frame.piece, q).map_err(geo)?;
    let reaction_q = reaction_jacobian_dyn(system, q, &lam).map_err(geo)?;
    // ν from the tangential equations' full form.
    let p1_after = s2.gradient.rows(0, n);
    let p2_before = s1.gradient.rows(n, n);
    let residual = p1_after - forms.transpose() * &lam + p2_before;
    let nu = dg.dot(&residual) / dg.norm_squared();
    let (j1, j2) = (&s1.jacobian, &s2.jacobian);
    let two = 2 * n;
    // Unknowns y = (e, λ, ν); data x = (a, q̃, h₁, h₂). Rows: energy,
    // momentum (n), constraint (m).
    let size = n + m + 1;
    let mut gy = DMatrix::zeros(size, size);
    let mut gx = DMatrix::zeros(size, two + 2);
    for j in 0..n {
        // Energy: D3 L_d(a, q̃, h₁) − D3 L_d(q̃, q̃ + e, h₂).
        gy[(0, j)] = -j2[(two, n + j)];
        gx[(0, j)] = j1[(two, j)];
        gx[(0, n + j)] = j1[(two, n + j)] - j2[(two, j)] - j2[(two, n + j)];
    }
    gx[(0, two)] = j1[(two, two)];
    gx[(0, two + 1)] = -j2[(two, two)];
    for i in 0..n {
        for j in 0..n {
            gy[(1 + i, j)] = j2[(i, n + j)];
            gx[(1 + i, j)] = j1[(n + i, j)];
            gx[(1 + i, n + j)] = j1[(n + i, n + j)] + j2[(i, j)] + j2[(i, n + j)]
                - reaction_q[(i, j)]
                - nu * hg[(i, j)];
        }
        for r in 0..m {
            gy[(1 + i, n + r)] = -forms[(r, i)];
        }
        gy[(1 + i, n + m)] = -dg[i];
        gx[(1 + i, two)] = j1[(n + i, two)];
        gx[(1 + i, two + 1)] = j2[(i, two)];
    }
    for r in 0..m {
        for j in 0..n {
            gy[(1 + n + r, j)] = w2[(r, n + j)];
            gx[(1 + n + r, n + j)] = w2[(r, j)] + w2[(r, n + j)];
        }
        gx[(1 + n + r, two + 1)] = w2[(r, two)];
    }
    let y = implicit_derivative(gy, &gx).map_err(|ratio| {
        unsupported(format!(
            "the post-impact equations are singular at this impact (pivot ratio {ratio:.1e})"
        ))
    })?;
    // π⁺ = D2 L_d(a, q̃, h₁) − ν ∇g(q̃).
    let mut out = DMatrix::zeros(n, two + 2);
    for i in 0..n {
        for j in 0..n {
            out[(i, j)] = j1[(n + i, j)];
            out[(i, n + j)] = j1[(n + i, n + j)] - nu * hg[(i, j)];
        }
        out[(i, two)] = j1[(n + i, two)];
    }
    let dnu = y.row(n + m);
    out -= &dg * dnu;
    Ok(out)
}
