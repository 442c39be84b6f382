//! The discrete elastic-impact law of \[VCI\] Theorem 3.1 for the
//! Lagrange–Dirac steppers (docs/theory.md §4.4–4.7).
//!
//! At the impact point `q̃` (reached by the sub-step `a → q̃` of size `α h`),
//! solve for the post-impact increment `e = ṽ − q̃` and multipliers `λ̃`:
//! ```text
//! D3 L_d(a, q̃, α h) = D3 L_d(q̃, ṽ, (1−α) h)                      (energy)
//! ι*_{q̃}( D1 L_d(q̃, ṽ, (1−α) h) − A(q̃)ᵀ λ̃ ) + ι*_{q̃}( D2 L_d(a, q̃, α h) ) = 0
//! ω_d(q̃, ṽ) = 0
//! ```
//! taking the reflected root `dg(q̃)·e > 0` (Newton from three guesses), or,
//! when there is none (grazing), the minimiser of the energy mismatch along
//! the normal (argmin's `BrentOpt`).

use crate::ImpactError;
use crate::law::{ImpactLaw, ImpactSite, Rebound};
use argmin::core::{CostFunction, State as _};
use diracvi_discrete_dirac::newton::{Newton, NewtonFailure};
use diracvi_discrete_dirac::{LagrangeDirac, StepStats, SubStep, momentum_unit};
use diracvi_geometry::{
    BoundaryFrame, ConstraintDiscretization, DiscreteLagrangian, DiscretizationMap, GeometryError,
    LdTimeJet, System,
};
use nalgebra::{DVector, SMatrix, SVector};
use std::cell::RefCell;

/// \[VCI\] Theorem 3.1 (i) forward with the (+) stepper, (ii) backward with
/// the (−) stepper (the same equations in reversed orientation).
#[derive(Debug, Clone, Default)]
pub struct VciLaw {
    ws: Option<Newton>,
}

impl<Sy, Dm, const N: usize, const M: usize> ImpactLaw<LagrangeDirac<Sy, Dm, N, M>, N, M> for VciLaw
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    fn rebound(
        &mut self,
        stepper: &mut LagrangeDirac<Sy, Dm, N, M>,
        site: &ImpactSite<'_, N>,
    ) -> Result<Rebound<N>, ImpactError> {
        let (t_impact, a, h1, h2, frame) = (site.t, &site.a, site.h1, site.h2, site.frame);
        let (d_imp, q_imp) = (&site.before.d, &site.before.b);
        let pass_through = &site.pass_through;
        let ws = self.ws.get_or_insert_with(|| Newton::new(N + M));
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
        let sys = stepper.system();
        let before = stepper
            .discrete_lagrangian()
            .time_jet_increment(a, d_imp, h1)
            .map_err(geo)?;
        // Solved for `u L_d` (momenta, multipliers and energies times `u`, a
        // power of two), so that tiny momenta are resolved
        // (docs/theory.md §3.7); `u = 1` unless the momenta are tiny.
        let unit = momentum_unit(before.d2.amax());
        let ld = stepper.discrete_lagrangian().in_units(unit);
        let before = LdTimeJet {
            value: before.value * unit,
            d3: before.d3 * unit,
            d2: before.d2 * unit,
            d23: before.d23 * unit,
        };
        let mut p_tan = SVector::<f64, N>::zeros();
        frame.iota_star(&before.d2, &mut p_tan.as_mut_slice()[..N - 1]);
        let forms: SMatrix<f64, M, N> = sys.constraint_forms(q_imp);
        let problem = PostImpact {
            ld,
            cd: stepper.constraint(),
            q_imp,
            h2,
            e_target: before.d3,
            p_tan,
            bt_at: frame.frame.transpose() * forms.transpose(),
            forms,
            frame,
            w: before.d2.amax().max(1.0) / before.d3.abs().max(1.0),
            scale_p: before.d2.amax().max(1.0),
            unit,
        };
        let n_hat = frame.normal();
        // `pass_through`: the increment from q̃ to the smooth step's end.
        let d = *pass_through;
        let dn = n_hat.dot(&d);
        // Starting guesses for the reflected root, tried in turn: the mirror
        // image of the pass-through point; the time-reversed pass-through
        // point (better when constraints couple normal and tangential
        // motion); a point far out on the reflected side, from which Newton
        // descends monotonically even when both roots hug the vertex of the
        // energy (shallow impacts).
        let mirrored = d - n_hat * (2.0 * dn);
        let reversed = -d;
        let s_far = 2.0 * (dn.abs() + d.norm());
        let far_out = d - n_hat * dn + n_hat * s_far;
        let mut last_err = None;
        for guess in [mirrored, reversed, far_out] {
            let mut x = DVector::<f64>::zeros(N + M);
            x.rows_mut(0, N).copy_from(&guess);
            match ws.solve(&mut x, &site.newton, None, |x, r, j| {
                problem.eval(None, x, r, j)
            }) {
                Ok(info) => {
                    iterations += info.iterations;
                    let v = SVector::<f64, N>::from_fn(|i, _| x[i]);
                    let lam = SVector::<f64, M>::from_fn(|i, _| x[N + i]);
                    if frame.dg.dot(&v) > 0.0 {
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
        // Grazing: the energy balance has no reflected root when the normal
        // kinetic energy is below the O(h²) mismatch of the two sub-steps'
        // discrete energies. Minimise the energy mismatch along the family
        // of solutions of the other equations, parametrised by the normal
        // displacement s ∈ [0, s_far] (argmin's Brent minimiser).
        let ws = RefCell::new(ws);
        let newton_params = site.newton;
        let solve_at = |s: f64| -> Result<DVector<f64>, NewtonFailure> {
            let mut x = DVector::<f64>::zeros(N + M);
            x.rows_mut(0, N).copy_from(&(d - n_hat * dn + n_hat * s));
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
        let v = SVector::<f64, N>::from_fn(|i, _| x[i]);
        let lam = SVector::<f64, M>::from_fn(|i, _| x[N + i]);
        finish(&problem, site, v, lam, true, iterations)
    }
}

/// The post-impact sub-step and momenta from the solution `(e, λ̃)`.
fn finish<Sy, Dm, const N: usize, const M: usize>(
    problem: &PostImpact<'_, Sy, Dm, N, M>,
    site: &ImpactSite<'_, N>,
    e: SVector<f64, N>,
    lam: SVector<f64, M>,
    grazing: bool,
    iterations: usize,
) -> Result<Rebound<N>, ImpactError>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    let geo = |source| ImpactError::Geometry { t: site.t, source };
    let (ld, q_imp, h2, unit) = (&problem.ld, problem.q_imp, problem.h2, problem.unit);
    let jet = ld.jet_increment(q_imp, &e, h2).map_err(geo)?;
    // Back from the units of the solve (exact: `unit` is a power of two).
    let reaction = problem.forms.transpose() * lam / unit;
    Ok(Rebound {
        after: SubStep {
            b: q_imp + e,
            d: e,
            pi_b: jet.d2 / unit,
            reaction,
            stats: StepStats::default(),
        },
        pi_after_raw: -jet.d1 / unit + reaction,
        energy_before: -problem.e_target / unit,
        energy_after: ld.energy_increment(q_imp, &e, h2).map_err(geo)? / unit,
        grazing,
        iterations,
    })
}

/// The post-impact equations of \[VCI\] Theorem 3.1 at a fixed impact point.
struct PostImpact<'a, Sy, Dm, const N: usize, const M: usize> {
    ld: DiscreteLagrangian<'a, Sy, Dm, N, M>,
    cd: ConstraintDiscretization,
    q_imp: &'a SVector<f64, N>,
    h2: f64,
    e_target: f64,
    /// `ι*(D2 L_d(a, q̃, αh))` in the first `N − 1` entries.
    p_tan: SVector<f64, N>,
    forms: SMatrix<f64, M, N>,
    bt_at: SMatrix<f64, N, M>,
    frame: &'a BoundaryFrame<N>,
    w: f64,
    scale_p: f64,
    /// The units of the solve: `L_d`, momenta, `λ̃` and energies times this.
    unit: f64,
}

impl<Sy, Dm, const N: usize, const M: usize> PostImpact<'_, Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    /// Residual and Jacobian at `x = (e, λ̃)`, `e = ṽ − q̃` the increment of
    /// the post-impact sub-step. Row 0 is the energy balance, or, with
    /// `normal = Some(s)`, `n·e = s`.
    fn eval(
        &self,
        normal: Option<f64>,
        x: &DVector<f64>,
        r: &mut DVector<f64>,
        jac: &mut nalgebra::DMatrix<f64>,
    ) -> Result<f64, GeometryError> {
        let v = SVector::<f64, N>::from_fn(|i, _| x[i]);
        let lam = SVector::<f64, M>::from_fn(|i, _| x[N + i]);
        let jet = self.ld.jet_increment(self.q_imp, &v, self.h2)?;
        jac.fill(0.0);
        let mut scale = self.scale_p.max(jet.d12.amax() * v.amax());
        match normal {
            None => {
                let tj = self.ld.time_jet_increment(self.q_imp, &v, self.h2)?;
                r[0] = (tj.d3 - self.e_target) * self.w;
                for j in 0..N {
                    jac[(0, j)] = tj.d23[j] * self.w;
                }
                scale = scale.max(tj.d23.amax() * v.amax() * self.w);
            }
            Some(s) => {
                let n = self.frame.frame.column(0);
                r[0] = (n.dot(&v) - s) * self.scale_p;
                for j in 0..N {
                    jac[(0, j)] = n[j] * self.scale_p;
                }
            }
        }
        let f = jet.d1 - self.forms.transpose() * lam;
        for i in 0..N - 1 {
            let bi = self.frame.frame.column(i + 1);
            r[1 + i] = bi.dot(&f) + self.p_tan[i];
            let row = bi.transpose() * jet.d12;
            for j in 0..N {
                jac[(1 + i, j)] = row[j];
            }
            for j in 0..M {
                jac[(1 + i, N + j)] = -self.bt_at[(i + 1, j)];
            }
        }
        if M > 0 {
            let (c, dc) = self.cd.jacobian_increment(
                self.ld.system(),
                self.ld.map(),
                self.ld.orientation(),
                self.q_imp,
                &v,
                self.h2,
            )?;
            for i in 0..M {
                r[N + i] = c[i];
                for j in 0..N {
                    jac[(N + i, j)] = dc[(i, j)];
                }
            }
        }
        Ok(scale)
    }
}

/// Squared energy mismatch along the normal family, for argmin.
struct Mismatch<'a, F, Sy, Dm, const N: usize, const M: usize> {
    solve_at: &'a F,
    problem: &'a PostImpact<'a, Sy, Dm, N, M>,
}

impl<F, Sy, Dm, const N: usize, const M: usize> CostFunction for Mismatch<'_, F, Sy, Dm, N, M>
where
    F: Fn(f64) -> Result<DVector<f64>, NewtonFailure>,
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    type Param = f64;
    type Output = f64;
    fn cost(&self, s: &f64) -> Result<f64, argmin::core::Error> {
        let x = (self.solve_at)(*s).map_err(|e| argmin::core::Error::msg(format!("{e:?}")))?;
        let v = SVector::<f64, N>::from_fn(|i, _| x[i]);
        let d3 = -self
            .problem
            .ld
            .energy_increment(self.problem.q_imp, &v, self.problem.h2)
            .map_err(|e| argmin::core::Error::msg(e.to_string()))?;
        Ok((d3 - self.problem.e_target).powi(2))
    }
}
