//! The continuous elastic-impact law at a located impact point, for the
//! composed (higher-order) steppers of the run-time-sized core (the
//! counterpart of [`ContinuousElasticLaw`](crate::ContinuousElasticLaw);
//! docs/theory.md §9.3): `∂L/∂v(q̃, v⁺) = p⁻ + λ dg(q̃) + A(q̃)ᵀ ν`,
//! `A(q̃) v⁺ = 0`, `E(q̃, v⁺) = E(q̃, v⁻)`, reflected root.

use super::{DynImpactLaw, DynImpactSite, DynLawTangent, DynRebound};
use crate::ImpactError;
use diracvi_discrete_dirac::StepStats;
use diracvi_discrete_dirac::dynamic::{DynSubStep, DynSubStepper, dyn_constrained_velocity};
use diracvi_geometry::GeometryError;
use diracvi_geometry::dynamic::{DynSystem, energy_dyn, energy_scale_dyn, legendre_jet_dyn};
use nalgebra::{DMatrix, DVector};

/// The continuous elastic-impact law (docs/theory.md §9.3), for any stepper
/// whose momentum approximates `∂L/∂v` to the order of the method (the
/// composed steppers, [`DynComposed`](diracvi_discrete_dirac::dynamic::DynComposed)).
///
/// The [`DynRebound::after`] sub-step it returns is empty (`q̃ → q̃`, no
/// reaction): the law jumps the momentum only, and the integrator goes on
/// from `(q̃, p⁺)` over the rest of the step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DynContinuousElasticLaw;

/// Newton iterations allowed to polish the reflected root.
const MAX_ITERATIONS: usize = 30;

impl<St: DynSubStepper> DynImpactLaw<St> for DynContinuousElasticLaw {
    /// `∂π⁺/∂q̃` and `∂π⁺/∂π⁻` (docs/theory.md §12.6); the law reads
    /// neither the sub-step's start nor its durations.
    fn rebound_tangent(
        &self,
        stepper: &St,
        site: &DynImpactSite<'_>,
        rebound: &DynRebound,
    ) -> Result<DynLawTangent, ImpactError> {
        super::tangent::continuous_rebound_tangent(
            stepper.system(),
            stepper.direction().sign(),
            site,
            rebound,
        )
    }

    /// `∂π⁺/∂q̃`, `∂π⁺/∂π⁻` and `∂π⁺/∂s` at fixed `(q̃, π⁻)`, `s` the
    /// parameter directions (docs/theory.md §12.6): `θ` moves `∂L/∂v`, `E`,
    /// `A(q̃)` and the wall's normal `dg(q̃)` in the law's equations.
    fn rebound_sensitivity(
        &self,
        stepper: &St,
        site: &DynImpactSite<'_>,
        rebound: &DynRebound,
        directions: &DMatrix<f64>,
    ) -> Result<DynLawTangent, ImpactError> {
        super::tangent::continuous_rebound_sensitivity(
            stepper.system(),
            stepper.direction().sign(),
            site,
            rebound,
            directions,
        )
    }

    fn rebound(
        &mut self,
        stepper: &mut St,
        site: &DynImpactSite<'_>,
    ) -> Result<DynRebound, ImpactError> {
        let t = site.t;
        let piece = site.frame.piece;
        let geo = |source: GeometryError| ImpactError::Geometry { t, source };
        let fail = |reason: String| ImpactError::PostImpact { t, piece, reason };
        let sign = stepper.direction().sign();
        let sys = stepper.system();
        let (nn, mm) = (sys.coordinate_count(), sys.constraint_count());
        let q = site.before.b.clone();
        let p_minus = &site.before.pi_b * sign;
        // On the constraint distribution (the momentum is defined up to Aᵀν).
        let (v_minus, _) = dyn_constrained_velocity(sys, &q, &p_minus).map_err(geo)?;
        let e_minus = energy_dyn(&sys, &q, &v_minus);
        let dg = site.frame.dg.clone();
        let mut rows = vec![0.0; mm * nn];
        sys.constraint_forms(q.as_slice(), &mut rows);
        let forms = DMatrix::from_row_slice(mm, nn, &rows);
        // Explicit root for a kinetic energy quadratic in v: the KKT system
        // [[H, Aᵀ], [A, 0]] (w, y) = (dg, 0).
        let (_, hess) = legendre_jet_dyn(&sys, &q, &v_minus);
        let n = nn + mm;
        let mut kkt = DMatrix::<f64>::zeros(n, n);
        for i in 0..nn {
            for j in 0..nn {
                kkt[(i, j)] = hess[(i, j)];
            }
            for a in 0..mm {
                kkt[(i, nn + a)] = forms[(a, i)];
                kkt[(nn + a, i)] = forms[(a, i)];
            }
        }
        let mut rhs = DVector::<f64>::zeros(n);
        for i in 0..nn {
            rhs[i] = dg[i];
        }
        let wy = kkt
            .lu()
            .solve(&rhs)
            .ok_or_else(|| fail("singular impact system [[∂²L/∂v², Aᵀ], [A, 0]]".into()))?;
        let w = wy.rows(0, nn).into_owned();
        let y = wy.rows(nn, mm).into_owned();
        let dgw = dg.dot(&w);
        if !(dgw.is_finite() && dgw > 0.0) {
            return Err(fail(format!(
                "the normal dg·w = {dgw:e} of the constrained inverse mass is not positive"
            )));
        }
        let c = dg.dot(&v_minus) / dgw;
        // Unknowns x = (v⁺, λ, ν).
        let mut x = DVector::<f64>::zeros(n + 1);
        for i in 0..nn {
            x[i] = v_minus[i] - 2.0 * c * w[i];
        }
        x[nn] = -2.0 * c;
        for a in 0..mm {
            x[nn + 1 + a] = 2.0 * c * y[a];
        }
        let p_scale = p_minus.amax().max(1.0);
        let e_scale = energy_scale_dyn(&sys, &q, &v_minus)
            .max(e_minus.abs())
            .max(1e-300);
        let mut iterations = 0;
        let mut converged = false;
        let mut jac = DMatrix::<f64>::zeros(n + 1, n + 1);
        let mut r = DVector::<f64>::zeros(n + 1);
        while iterations < MAX_ITERATIONS {
            let v = x.rows(0, nn).into_owned();
            let lam = x[nn];
            let nu = x.rows(nn + 1, mm).into_owned();
            let (pv, hv) = legendre_jet_dyn(&sys, &q, &v);
            let f1 = pv - &p_minus - &dg * lam - forms.transpose() * &nu;
            let f2 = &forms * &v;
            let f3 = energy_dyn(&sys, &q, &v) - e_minus;
            let hvv = &hv * &v;
            jac.fill(0.0);
            for i in 0..nn {
                r[i] = f1[i] / p_scale;
                for j in 0..nn {
                    jac[(i, j)] = hv[(i, j)] / p_scale;
                }
                jac[(i, nn)] = -dg[i] / p_scale;
                for a in 0..mm {
                    jac[(i, nn + 1 + a)] = -forms[(a, i)] / p_scale;
                }
            }
            // Energy row in place of the λ column's partner.
            r[nn] = f3 / e_scale;
            for j in 0..nn {
                jac[(nn, j)] = hvv[j] / e_scale;
            }
            for a in 0..mm {
                r[nn + 1 + a] = f2[a] / v.amax().max(1e-300);
                for j in 0..nn {
                    jac[(nn + 1 + a, j)] = forms[(a, j)] / v.amax().max(1e-300);
                }
            }
            let res = r.amax();
            if !res.is_finite() {
                return Err(fail("non-finite residual".into()));
            }
            if res <= 1e-14 {
                converged = true;
                break;
            }
            let dx = jac
                .clone()
                .lu()
                .solve(&r)
                .ok_or_else(|| fail("singular Jacobian of the impact equations".into()))?;
            x -= &dx;
            iterations += 1;
            if dx.amax() <= 1e-15 * x.amax().max(1.0) {
                converged = true;
                break;
            }
        }
        if !converged {
            return Err(fail(format!(
                "Newton did not converge in {MAX_ITERATIONS} iterations (residual {:e})",
                r.amax()
            )));
        }
        let v_plus = x.rows(0, nn).into_owned();
        let (p_plus, _) = legendre_jet_dyn(&sys, &q, &v_plus);
        let e_plus = energy_dyn(&sys, &q, &v_plus);
        // Reflected: moving into the admissible set in the direction of
        // integration (a tangential approach has nothing to reflect).
        let grazing = dg.dot(&v_plus) * sign <= 0.0;
        let pi_plus = p_plus * sign;
        Ok(DynRebound {
            after: DynSubStep {
                b: q,
                d: DVector::zeros(nn),
                pi_b: pi_plus.clone(),
                reaction: DVector::zeros(nn),
                stats: StepStats::default(),
                tangent: None,
                parameters: None,
            },
            pi_after_raw: pi_plus,
            energy_before: e_minus,
            energy_after: e_plus,
            grazing,
            iterations,
        })
    }
}
