//! The parameter derivatives of the step quantities without lifting
//! (docs/theory.md §12.4–12.5): the step equations' parameter columns
//! `∂(D1 L_d, D2 L_d, D3 L_d)/∂θ` from the mixed second derivatives
//! `∂²L/∂θ∂(q, v)` and `∂L/∂θ` of the Lagrangian at the step's node.
//!
//! [`ParamLifted`](super::ParamLifted) gets them from the Hessian of the
//! discrete Lagrangian of the system lifted by `r` coordinates: `(2n + 2r +
//! 1)²` second derivatives, most of which (`∂²/∂s²`) are thrown away. Here
//! only the `P × 2n` mixed block and the `P` first derivatives of `L` are
//! evaluated, by [`DynSystem::lagrangian_parameter_second`]: forward
//! hyper-duals by default (`⌈2n/W⌉ ⌈P/W⌉` evaluations), and a system may
//! supply them by reverse mode (a model file does: `2n` reverse sweeps over
//! its expression tape, whatever `P`).

use super::DynSystem;
use super::chunk::{blocks, hyper_parts, with_width};
use super::discrete_lagrangian::DynDiscreteLagrangian;
use crate::ad::DenseConstant;
use crate::{Discretization, GeometryError, Orientation};
use nalgebra::{DMatrix, DVector};
use num_dual::HyperDualSVec64;

/// The parameter derivatives of a Lagrangian at one point `(q, v)`, at the
/// system's parameter values ([`DynSystem::parameter_values`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LagrangianParamSecond {
    /// `∂L/∂θ` (`P` entries).
    pub theta: DVector<f64>,
    /// `∂²L/∂θ∂q` (`P × n`).
    pub theta_q: DMatrix<f64>,
    /// `∂²L/∂θ∂v` (`P × n`).
    pub theta_v: DMatrix<f64>,
}

/// [`LagrangianParamSecond`] by forward hyper-dual numbers through
/// [`DynSystem::lagrangian_with`]: `eps1` seeded over `(q, v)`, `eps2` over
/// `θ`, in blocks of `W` directions (the default of
/// [`DynSystem::lagrangian_parameter_second`]).
pub fn lagrangian_parameter_second_forward<Sy: DynSystem + ?Sized>(
    system: &Sy,
    q: &[f64],
    v: &[f64],
) -> LagrangianParamSecond {
    let n = q.len();
    let theta0 = system.parameter_values();
    let p = theta0.len();
    let mut out = LagrangianParamSecond {
        theta: DVector::zeros(p),
        theta_q: DMatrix::zeros(p, n),
        theta_v: DMatrix::zeros(p, n),
    };
    if p == 0 {
        return out;
    }
    with_width!((2 * n).max(p), W => {
        for bz in blocks::<W>(2 * n) {
            for bt in blocks::<W>(p) {
                let seed = |x: &[f64], offset: usize| -> Vec<HyperDualSVec64<W, W>> {
                    x.iter()
                        .enumerate()
                        .map(|(i, &value)| {
                            let mut s = HyperDualSVec64::<W, W>::constant(value);
                            let z = offset + i;
                            if (bz.0..bz.0 + bz.1).contains(&z)
                                && let Some(e) = s.eps1.0.as_mut()
                            {
                                e[z - bz.0] = 1.0;
                            }
                            s
                        })
                        .collect()
                };
                let (qs, vs) = (seed(q, 0), seed(v, n));
                let theta: Vec<HyperDualSVec64<W, W>> = theta0
                    .iter()
                    .enumerate()
                    .map(|(i, &value)| {
                        let mut s = HyperDualSVec64::<W, W>::constant(value);
                        if (bt.0..bt.0 + bt.1).contains(&i)
                            && let Some(e) = s.eps2.0.as_mut()
                        {
                            e[i - bt.0] = 1.0;
                        }
                        s
                    })
                    .collect();
                let l = system.lagrangian_with(&qs, &vs, &theta);
                let (_, e2, e12) = hyper_parts(&l);
                if bz.0 == 0 {
                    for t in 0..bt.1 {
                        out.theta[bt.0 + t] = e2[t];
                    }
                }
                for k in 0..bz.1 {
                    let z = bz.0 + k;
                    for t in 0..bt.1 {
                        if z < n {
                            out.theta_q[(bt.0 + t, z)] = e12[k][t];
                        } else {
                            out.theta_v[(bt.0 + t, z - n)] = e12[k][t];
                        }
                    }
                }
            }
        }
    });
    out
}

impl<Sy: DynSystem> DynDiscreteLagrangian<'_, Sy> {
    /// `∂(D1 L_d, D2 L_d, D3 L_d)/∂θ` at `(a, a + d, h)` in this
    /// orientation (`(2n + 1) × P`, rows as those of
    /// [`DynLdSecond::jacobian`](super::DynLdSecond::jacobian)), from the
    /// parameter derivatives of `L` at the step's node
    /// ([`DynSystem::lagrangian_parameter_second`]). Forces are not
    /// included (the caller checks there are none).
    ///
    /// With `L_d = u h L(q, v)`, `q = x₀ + c (x₁ − x₀)`, `v = (x₁ − x₀)/h`
    /// (`x₀, x₁ = a, b` forward, `b, a` reversed):
    /// `∂L_d/∂x₀ = u (h (1 − c) L_q − L_v)`, `∂L_d/∂x₁ = u (h c L_q + L_v)`,
    /// `∂L_d/∂h = u (L − L_v · v)`, each differentiated in `θ`.
    ///
    /// # Errors
    /// On a dimension mismatch.
    pub fn parameter_rows(
        &self,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
    ) -> Result<DMatrix<f64>, GeometryError> {
        let system = self.system();
        let n = system.coordinate_count();
        for (what, len) in [("a", a.len()), ("d", d.len())] {
            if len != n {
                return Err(GeometryError::DimensionMismatch {
                    what,
                    expected: n,
                    got: len,
                });
            }
        }
        let c = match self.map() {
            Discretization::Forward => 0.0,
            Discretization::Midpoint => 0.5,
        };
        let reversed = self.orientation() == Orientation::Reversed;
        // x0 and the step x1 − x0
        let (x0, step) = if reversed {
            (a + d, -d)
        } else {
            (a.clone(), d.clone())
        };
        let q: Vec<f64> = (0..n).map(|i| x0[i] + step[i] * c).collect();
        let v: Vec<f64> = (0..n).map(|i| step[i] / h).collect();
        let s = system.lagrangian_parameter_second(&q, &v);
        let p = s.theta.len();
        let u = self.unit();
        let mut out = DMatrix::zeros(2 * n + 1, p);
        // rows of ∂/∂x0 and ∂/∂x1, then ∂/∂h
        let (r0, r1) = if reversed { (n, 0) } else { (0, n) };
        for t in 0..p {
            let mut lv_v = 0.0;
            for i in 0..n {
                let (lq, lv) = (s.theta_q[(t, i)], s.theta_v[(t, i)]);
                out[(r0 + i, t)] = u * (h * (1.0 - c) * lq - lv);
                out[(r1 + i, t)] = u * (h * c * lq + lv);
                lv_v += lv * v[i];
            }
            out[(2 * n, t)] = u * (s.theta[t] - lv_v);
        }
        Ok(out)
    }
}
