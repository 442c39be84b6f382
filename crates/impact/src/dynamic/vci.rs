//! The discrete elastic-impact law of \[VCI\] Theorem 3.1 for the
//! Lagrange–Dirac steppers of the run-time-sized core (the counterpart of
//! [`VciLaw`](crate::VciLaw); docs/theory.md §4.4–4.7).
//!
//! At the impact point `q̃`, solve for the post-impact increment `e = ṽ − q̃`
//! and multipliers `λ̃`:
//! ```text
//! D3 L_d(a, q̃, α h) = D3 L_d(q̃, ṽ, (1−α) h)                      (energy)
//! ι*_{q̃}( D1 L_d(q̃, ṽ, (1−α) h) − A(q̃)ᵀ λ̃ ) + ι*_{q̃}( D2 L_d(a, q̃, α h) ) = 0
//! ω_d(q̃, ṽ) = 0
//! ```
//! taking the reflected root `dg(q̃)·e > 0`, or, when there is none
//! (grazing), the minimiser of the energy mismatch along the normal.

use super::{DynImpactLaw, DynImpactSite, DynLawTangent, DynRebound};
use crate::ImpactError;
use argmin::core::{CostFunction, State as _};
use diracvi_discrete_dirac::dynamic::{DynLagrangeDirac, DynSubStep, dot};
use diracvi_discrete_dirac::newton::{Newton, NewtonFailure};
use diracvi_discrete_dirac::{StepStats, momentum_unit};
use diracvi_geometry::dynamic::{
    DynBoundaryFrame, DynDiscreteLagrangian, DynLdJet, DynSystem, constraint_jacobian_dyn,
};
use diracvi_geometry::{ConstraintDiscretization, GeometryError};
use nalgebra::{DMatrix, DVector};
use std::cell::RefCell;

/// \[VCI\] Theorem 3.1 (i) forward with the (+) stepper, (ii) backward with
/// the (−) stepper, for [`DynLagrangeDirac`].
#[derive(Debug, Clone, Default)]
pub struct DynVciLaw {
    ws: Option<Newton>,
}

impl<Sy: DynSystem> DynImpactLaw<DynLagrangeDirac<Sy>> for DynVciLaw {
    fn rebound_tangent(
        &self,
        stepper: &DynLagrangeDirac<Sy>,
        site: &DynImpactSite<'_>,
        rebound: &DynRebound,
    ) -> Result<DynLawTangent, ImpactError> {
        super::tangent::vci_rebound_tangent(stepper, site, rebound).map(DynLawTangent::of_data)
    }

    fn rebound_sensitivity(
        &self,
        stepper: &DynLagrangeDirac<Sy>,
        site: &DynImpactSite<'_>,
        rebound: &DynRebound,
        directions: &DMatrix<f64>,
    ) -> Result<DynLawTangent, ImpactError> {
        super::tangent::vci_rebound_sensitivity(stepper, site, rebound, directions)
            .map(DynLawTangent::of_data)
    }

    fn rebound(
        &mut self,
        stepper: &mut DynLagrangeDirac<Sy>,
        site: &DynImpactSite<'_>,
    ) -> Result<DynRebound, ImpactError> {
        let (t_impact, a, h1, h2, frame) = (site.t, &site.a, site.h1, site.h2, site.frame);
        let (d_imp, q_imp) = (&site.before.d, &site.before.b);
        let pass_through = &site.pass_through;
        let sys = stepper.system();
        let (n, m) = (sys.coordinate_count(), sys.constraint_count());
        let ws = self.ws.get_or_insert_with(|| Newton::new(n + m));
        if ws.size() != n + m {
            *ws = Newton::new(n + m);
        }
        let mut iterations = 0;
        let piece = frame.piece;
        let fail = |reason: String| ImpactError::PostImpact {
            t: t_impact,
            piece,
            reason,
        };
        let geo = |source| ImpactError::Geometry {
            t: t_impact,
            source,
        };
        let before = stepper
            .discrete_lagrangian()
            .time_jet_increment(a, d_imp, h1)
            .map_err(geo)?;
        // Solved in units where the momenta are of order 1 (docs/theory.md §3.7).
        let unit = momentum_unit(before.d2.amax());
        let ld = stepper.discrete_lagrangian().in_units(unit);
        let (before_d3, before_d2) = (before.d3 * unit, &before.d2 * unit);
        let mut p_tan = DVector::<f64>::zeros(n);
        frame.iota_star(&before_d2, &mut p_tan.as_mut_slice()[..n - 1]);
        let mut rows = vec![0.0; m * n];
        sys.constraint_forms(q_imp.as_slice(), &mut rows);
        let forms = DMatrix::from_row_slice(m, n, &rows);
        // Bᵀ Aᵀ: entry (i, j) = Σ_l F_{l i} A_{j l}.
        let bt_at = DMatrix::from_fn(n, m, |i, j| {
            dot(
                frame.frame.column(i).iter().copied(),
                forms.row(j).iter().copied(),
            )
        });
        let problem = PostImpact {
            ld,
            cd: stepper.constraint(),
            q_imp,
            h2,
            e_target: before_d3,
            p_tan,
            bt_at,
            forms,
            frame,
            w: before_d2.amax().max(1.0) / before_d3.abs().max(1.0),
            scale_p: before_d2.amax().max(1.0),
            unit,
            n,
            m,
        };
        let n_hat = frame.normal();
        let d = pass_through.clone();
        let dn = dot(n_hat.iter().copied(), d.iter().copied());
        // Starting guesses for the reflected root, in turn: the mirror image
        // of the pass-through point, the time-reversed pass-through point,
        // a point far out on the reflected side.
        let mirrored = &d - &n_hat * (2.0 * dn);
        let reversed = -&d;
        let s_far = 2.0 * (dn.abs() + d.norm());
        let far_out = &d - &n_hat * dn + &n_hat * s_far;
        let mut last_err = None;
        for guess in [mirrored, reversed, far_out] {
            let mut x = DVector::<f64>::zeros(n + m);
            x.rows_mut(0, n).copy_from(&guess);
            match ws.solve(&mut x, &site.newton, None, |x, r, j| {
                problem.eval(None, x, r, j)
            }) {
                Ok(info) => {
                    iterations += info.iterations;
                    let v = x.rows(0, n).into_owned();
                    let lam = x.rows(n, m).into_owned();
                    if dot(frame.dg.iter().copied(), v.iter().copied()) > 0.0 {
                        return finish(&problem, site, v, lam, false, iterations);
                    }
                    last_err = Some(fail(
                        "Newton converged to the pass-through root, not the reflected one".into(),
                    ));
                }
                Err(NewtonFailure::Geometry(source)) => return Err(geo(source)),
                Err(e) => last_err = Some(fail(format!("{e:?}"))),
            }
        }
        // Grazing: minimise the energy mismatch along the normal family.
        let ws = RefCell::new(ws);
        let newton_params = site.newton;
        let solve_at = |s: f64| -> Result<DVector<f64>, NewtonFailure> {
            let mut x = DVector::<f64>::zeros(n + m);
            x.rows_mut(0, n).copy_from(&(&d - &n_hat * dn + &n_hat * s));
            ws.borrow_mut()
                .solve(&mut x, &newton_params, None, |x, r, j| {
                    problem.eval(Some(s), x, r, j)
                })?;
            Ok(x)
        };
        let mismatch = Mismatch {
            solve_at: &solve_at,
            problem: &problem,
        };
        let res = crate::brent::minimum(&|s| mismatch.cost(&s), 0.0, s_far, (1e-10, 1e-14), 200)
            .map_err(|e| fail(format!("grazing fallback: {e}; before that: {last_err:?}")))?;
        let s_best = *res
            .get_best_param()
            .ok_or_else(|| fail("grazing fallback found no minimiser".into()))?;
        iterations += res.get_iter() as usize;
        let x = solve_at(s_best).map_err(|e| fail(format!("grazing fallback: {e:?}")))?;
        let v = x.rows(0, n).into_owned();
        let lam = x.rows(n, m).into_owned();
        finish(&problem, site, v, lam, true, iterations)
    }
}

/// The post-impact sub-step and momenta from the solution `(e, λ̃)`.
fn finish<Sy: DynSystem>(
    problem: &PostImpact<'_, Sy>,
    site: &DynImpactSite<'_>,
    e: DVector<f64>,
    lam: DVector<f64>,
    grazing: bool,
    iterations: usize,
) -> Result<DynRebound, ImpactError> {
    let geo = |source| ImpactError::Geometry { t: site.t, source };
    let (ld, q_imp, h2, unit) = (&problem.ld, problem.q_imp, problem.h2, problem.unit);
    let mut jet = DynLdJet::zeros(problem.n);
    ld.jet_increment(q_imp, &e, h2, &mut jet).map_err(geo)?;
    // Back from the units of the solve (exact: `unit` is a power of two).
    let reaction = problem.reaction(&lam) / unit;
    Ok(DynRebound {
        after: DynSubStep {
            b: q_imp + &e,
            d: e.clone(),
            pi_b: &jet.d2 / unit,
            reaction: reaction.clone(),
            stats: StepStats::default(),
            tangent: None,
            parameters: None,
        },
        pi_after_raw: -&jet.d1 / unit + reaction,
        energy_before: -problem.e_target / unit,
        energy_after: ld.energy_increment(q_imp, &e, h2).map_err(geo)? / unit,
        grazing,
        iterations,
    })
}

/// The post-impact equations of \[VCI\] Theorem 3.1 at a fixed impact point.
struct PostImpact<'a, Sy> {
    ld: DynDiscreteLagrangian<'a, Sy>,
    cd: ConstraintDiscretization,
    q_imp: &'a DVector<f64>,
    h2: f64,
    e_target: f64,
    /// `ι*(D2 L_d(a, q̃, αh))` in the first `n − 1` entries.
    p_tan: DVector<f64>,
    /// `A(q̃)`, `m × n`.
    forms: DMatrix<f64>,
    /// `Fᵀ A(q̃)ᵀ` (`F` the boundary frame), `n × m`.
    bt_at: DMatrix<f64>,
    frame: &'a DynBoundaryFrame,
    w: f64,
    scale_p: f64,
    unit: f64,
    n: usize,
    m: usize,
}

impl<Sy: DynSystem> PostImpact<'_, Sy> {
    /// `A(q̃)ᵀ λ`, summed in the order of nalgebra's product.
    fn reaction(&self, lam: &DVector<f64>) -> DVector<f64> {
        DVector::from_fn(self.n, |i, _| {
            dot(self.forms.column(i).iter().copied(), lam.iter().copied())
        })
    }

    /// Residual and Jacobian at `x = (e, λ̃)`. Row 0 is the energy balance,
    /// or, with `normal = Some(s)`, `n·e = s`.
    fn eval(
        &self,
        normal: Option<f64>,
        x: &DVector<f64>,
        r: &mut DVector<f64>,
        jac: &mut DMatrix<f64>,
    ) -> Result<f64, GeometryError> {
        let (n, m) = (self.n, self.m);
        let v = x.rows(0, n).into_owned();
        let lam = x.rows(n, m).into_owned();
        let mut jet = DynLdJet::zeros(n);
        self.ld.jet_increment(self.q_imp, &v, self.h2, &mut jet)?;
        jac.fill(0.0);
        let mut scale = self.scale_p.max(jet.d12.amax() * v.amax());
        match normal {
            None => {
                let tj = self.ld.time_jet_increment(self.q_imp, &v, self.h2)?;
                r[0] = (tj.d3 - self.e_target) * self.w;
                for j in 0..n {
                    jac[(0, j)] = tj.d23[j] * self.w;
                }
                scale = scale.max(tj.d23.amax() * v.amax() * self.w);
            }
            Some(s) => {
                let nc = self.frame.frame.column(0);
                r[0] = (dot(nc.iter().copied(), v.iter().copied()) - s) * self.scale_p;
                for j in 0..n {
                    jac[(0, j)] = nc[j] * self.scale_p;
                }
            }
        }
        let f = &jet.d1 - self.reaction(&lam);
        for i in 0..n - 1 {
            let bi = self.frame.frame.column(i + 1);
            r[1 + i] = dot(bi.iter().copied(), f.iter().copied()) + self.p_tan[i];
            for j in 0..n {
                jac[(1 + i, j)] = dot(bi.iter().copied(), jet.d12.column(j).iter().copied());
            }
            for j in 0..m {
                jac[(1 + i, n + j)] = -self.bt_at[(i + 1, j)];
            }
        }
        if m > 0 {
            let mut c = DVector::zeros(m);
            let mut dc = DMatrix::zeros(m, n);
            constraint_jacobian_dyn(
                self.cd,
                self.ld.system(),
                self.ld.orientation(),
                self.q_imp,
                &v,
                self.h2,
                &mut c,
                &mut dc,
            )?;
            for i in 0..m {
                r[n + i] = c[i];
                for j in 0..n {
                    jac[(n + i, j)] = dc[(i, j)];
                }
            }
        }
        Ok(scale)
    }
}

/// Squared energy mismatch along the normal family, for argmin.
struct Mismatch<'a, F, Sy> {
    solve_at: &'a F,
    problem: &'a PostImpact<'a, Sy>,
}

impl<F, Sy> CostFunction for Mismatch<'_, F, Sy>
where
    F: Fn(f64) -> Result<DVector<f64>, NewtonFailure>,
    Sy: DynSystem,
{
    type Param = f64;
    type Output = f64;
    fn cost(&self, s: &f64) -> Result<f64, argmin::core::Error> {
        let x = (self.solve_at)(*s).map_err(|e| argmin::core::Error::msg(format!("{e:?}")))?;
        let v = x.rows(0, self.problem.n).into_owned();
        let d3 = -self
            .problem
            .ld
            .energy_increment(self.problem.q_imp, &v, self.problem.h2)
            .map_err(|e| argmin::core::Error::msg(e.to_string()))?;
        Ok((d3 - self.problem.e_target).powi(2))
    }
}
