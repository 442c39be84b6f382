//! The continuous elastic-impact law at a located impact point, for the
//! composed (higher-order) steppers (docs/theory.md §9.3).
//!
//! At the impact point `q̃` with the momentum `p⁻` that reaches it
//! (`v⁻ = (∂L/∂v)⁻¹(q̃, p⁻)`), solve for `(v⁺, λ, ν)`:
//! ```text
//! ∂L/∂v(q̃, v⁺) = p⁻ + λ dg(q̃) + A(q̃)ᵀ ν        (jump in (T_{q̃}∂S)° + Δ°)
//! A(q̃) v⁺ = 0                                   (constraint)
//! E(q̃, v⁺) = E(q̃, v⁻)                           (energy)
//! ```
//! taking the reflected root. For `L = ½ vᵀ M(q) v − V(q)` (plus terms
//! linear in `v`) the root is explicit: with `(w, y)` solving
//! `M w + Aᵀ y = dg`, `A w = 0`,
//! `v⁺ = v⁻ − 2 (dg·v⁻)/(dg·w) w`; it starts Newton's method on the full
//! equations, which confirms it (or corrects it for a general `L`). The law
//! is exact: its error is only that of `(q̃, p⁻)`, so it keeps the order of
//! the composed step that located the impact, unlike the discrete law of
//! \[VCI\] Theorem 3.1 (second order).

use crate::ImpactError;
use crate::law::{ImpactLaw, ImpactSite, Rebound};
use diracvi_discrete_dirac::{StepStats, SubStep, SubStepper, constrained_velocity};
use diracvi_geometry::{GeometryError, System, legendre_jet};
use nalgebra::{DMatrix, DVector, SMatrix, SVector};

/// The continuous elastic-impact law (docs/theory.md §9.3), for any stepper
/// whose momentum approximates `∂L/∂v` to the order of the method (the
/// composed steppers, [`Composed`](diracvi_discrete_dirac::Composed)).
///
/// The [`Rebound::after`] sub-step it returns is empty (`q̃ → q̃`, no
/// reaction): the law jumps the momentum only, and the integrator goes on
/// from `(q̃, p⁺)` over the rest of the step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContinuousElasticLaw;

/// Newton iterations allowed to polish the reflected root.
const MAX_ITERATIONS: usize = 30;

impl<St, const N: usize, const M: usize> ImpactLaw<St, N, M> for ContinuousElasticLaw
where
    St: SubStepper<N, M>,
{
    fn rebound(
        &mut self,
        stepper: &mut St,
        site: &ImpactSite<'_, N>,
    ) -> Result<Rebound<N>, ImpactError> {
        let t = site.t;
        let piece = site.frame.piece;
        let geo = |source: GeometryError| ImpactError::Geometry { t, source };
        let fail = |reason: String| ImpactError::PostImpact { t, piece, reason };
        let sign = stepper.direction().sign();
        let sys = stepper.system();
        let q = site.before.b;
        let p_minus = site.before.pi_b * sign;
        // On the constraint distribution (the momentum is defined up to Aᵀν).
        let (v_minus, _) = constrained_velocity(sys, &q, &p_minus).map_err(geo)?;
        let e_minus = sys.energy(&q, &v_minus);
        let dg = site.frame.dg;
        let forms: SMatrix<f64, M, N> = sys.constraint_forms(&q);
        // Explicit root for a kinetic energy quadratic in v: the KKT system
        // [[H, Aᵀ], [A, 0]] (w, y) = (dg, 0).
        let (_, hess) = legendre_jet(sys, &q, &v_minus);
        let n = N + M;
        let mut kkt = DMatrix::<f64>::zeros(n, n);
        for i in 0..N {
            for j in 0..N {
                kkt[(i, j)] = hess[(i, j)];
            }
            for a in 0..M {
                kkt[(i, N + a)] = forms[(a, i)];
                kkt[(N + a, i)] = forms[(a, i)];
            }
        }
        let mut rhs = DVector::<f64>::zeros(n);
        for i in 0..N {
            rhs[i] = dg[i];
        }
        let wy = kkt
            .lu()
            .solve(&rhs)
            .ok_or_else(|| fail("singular impact system [[∂²L/∂v², Aᵀ], [A, 0]]".into()))?;
        let w = SVector::<f64, N>::from_fn(|i, _| wy[i]);
        let y = SVector::<f64, M>::from_fn(|a, _| wy[N + a]);
        let dgw = dg.dot(&w);
        if !(dgw.is_finite() && dgw > 0.0) {
            return Err(fail(format!(
                "the normal dg·w = {dgw:e} of the constrained inverse mass is not positive"
            )));
        }
        let c = dg.dot(&v_minus) / dgw;
        // Unknowns x = (v⁺, λ, ν).
        let mut x = DVector::<f64>::zeros(n + 1);
        for i in 0..N {
            x[i] = v_minus[i] - 2.0 * c * w[i];
        }
        x[N] = -2.0 * c;
        for a in 0..M {
            x[N + 1 + a] = 2.0 * c * y[a];
        }
        let p_scale = p_minus.amax().max(1.0);
        let e_scale = sys
            .energy_scale(&q, &v_minus)
            .max(e_minus.abs())
            .max(1e-300);
        let mut iterations = 0;
        let mut converged = false;
        let mut jac = DMatrix::<f64>::zeros(n + 1, n + 1);
        let mut r = DVector::<f64>::zeros(n + 1);
        while iterations < MAX_ITERATIONS {
            let v = SVector::<f64, N>::from_fn(|i, _| x[i]);
            let lam = x[N];
            let nu = SVector::<f64, M>::from_fn(|a, _| x[N + 1 + a]);
            let (pv, hv) = legendre_jet(sys, &q, &v);
            let f1 = pv - p_minus - dg * lam - forms.transpose() * nu;
            let f2 = forms * v;
            let f3 = sys.energy(&q, &v) - e_minus;
            let hvv = hv * v;
            jac.fill(0.0);
            for i in 0..N {
                r[i] = f1[i] / p_scale;
                for j in 0..N {
                    jac[(i, j)] = hv[(i, j)] / p_scale;
                }
                jac[(i, N)] = -dg[i] / p_scale;
                for a in 0..M {
                    jac[(i, N + 1 + a)] = -forms[(a, i)] / p_scale;
                }
            }
            // Energy row in place of the λ column's partner.
            r[N] = f3 / e_scale;
            for j in 0..N {
                jac[(N, j)] = hvv[j] / e_scale;
            }
            for a in 0..M {
                r[N + 1 + a] = f2[a] / v.amax().max(1e-300);
                for j in 0..N {
                    jac[(N + 1 + a, j)] = forms[(a, j)] / v.amax().max(1e-300);
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
        let v_plus = SVector::<f64, N>::from_fn(|i, _| x[i]);
        let (p_plus, _) = legendre_jet(sys, &q, &v_plus);
        let e_plus = sys.energy(&q, &v_plus);
        // Reflected: moving into the admissible set in the direction of
        // integration (a tangential approach has nothing to reflect).
        let grazing = dg.dot(&v_plus) * sign <= 0.0;
        let pi_plus = p_plus * sign;
        Ok(Rebound {
            after: SubStep {
                b: q,
                d: SVector::zeros(),
                pi_b: pi_plus,
                reaction: SVector::zeros(),
                stats: StepStats::default(),
            },
            pi_after_raw: pi_plus,
            energy_before: e_minus,
            energy_after: e_plus,
            grazing,
            iterations,
        })
    }
}
