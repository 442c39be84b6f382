//! Parameters seen as extra coordinates that never move, so that the
//! derivatives of the step quantities in the parameters come from the same
//! code as those in the end points (docs/theory.md §12.4).
//!
//! Given a [`DynSystem`] with parameters `θ ∈ R^P` (its `…_with` hooks),
//! values `θ₀` and `r` directions `D` (`P × r`), [`ParamLifted`] is the
//! system on `R^{n+r}` with coordinates `(q, s)` and
//! ```text
//! L'(q, s, v, v_s) = L(q, v; θ₀ + D s),   A'(q, s) = [A(q; θ₀ + D s) | 0],
//! g'_j(q, s) = g_j(q; θ₀ + D s),           H'(q, s, p, p_s) = H(q, p; θ₀ + D s).
//! ```
//! `L'` does not depend on `v_s`. A step of the lifted system with
//! `s_a = s_b = 0` is the system's step at `θ₀`; every discretization map of
//! `R^n` evaluates `L` at an affine combination of the two end points with
//! weights summing to one, so moving `s_a` and `s_b` together by `δ` is
//! moving `θ` by `D δ`: `∂/∂s_a + ∂/∂s_b` of any step quantity (`D1 L_d`,
//! `D2 L_d`, `D3 L_d`, `ω_d`) is its derivative in the parameter direction,
//! and `∂/∂s` of `A'ᵀμ`, `g'` and `∇g'` are those of `A(q)ᵀμ`, `g` and `∇g`.

use super::{DynSystem, LagrangianTerms};
use crate::AdScalar;
use nalgebra::DMatrix;

/// A [`DynSystem`] with `r` parameter directions appended to its
/// coordinates (see the module documentation).
#[derive(Debug, Clone)]
pub struct ParamLifted<'a, Sy> {
    system: &'a Sy,
    theta: Vec<f64>,
    directions: DMatrix<f64>,
    /// The inner system's terms, each over its stencil and every direction
    /// `s`, when it gives its terms with parameters
    /// ([`DynSystem::parameter_terms`]).
    terms: Option<LagrangianTerms>,
}

impl<'a, Sy: DynSystem> ParamLifted<'a, Sy> {
    /// The lift of `system` at its own parameter values
    /// ([`DynSystem::parameter_values`]) along the columns of `directions`
    /// (`P × r`, `P = parameter_count()`).
    ///
    /// # Panics
    /// If `directions` does not have `P` rows.
    pub fn new(system: &'a Sy, directions: &DMatrix<f64>) -> Self {
        let theta = system.parameter_values();
        assert_eq!(
            directions.nrows(),
            theta.len(),
            "the parameter directions must have one row per parameter"
        );
        let (n, r) = (system.coordinate_count(), directions.ncols());
        let terms = system
            .lagrangian_terms()
            .filter(|_| system.parameter_terms())
            .map(|inner| {
                LagrangianTerms::new(
                    n + r,
                    (0..inner.len()).map(|e| {
                        inner
                            .stencil(e)
                            .iter()
                            .copied()
                            .chain(n..n + r)
                            .collect::<Vec<usize>>()
                    }),
                )
                .expect("an inner stencil, then the directions: increasing, in range")
            });
        Self {
            system,
            theta,
            directions: directions.clone(),
            terms,
        }
    }

    /// The number of directions `r`.
    pub fn direction_count(&self) -> usize {
        self.directions.ncols()
    }

    /// The lifted system's `n`.
    fn n(&self) -> usize {
        self.system.coordinate_count()
    }

    /// `θ₀ + D s` from the lifted coordinates' tail `s` (`r` entries). The
    /// constants are built from a variable (`s₀ · 0 + θ₀ᵢ`) so that their
    /// derivative parts are present (see [`crate::ad`]).
    fn theta<S: AdScalar>(&self, s: &[S]) -> Vec<S> {
        if s.is_empty() {
            return self.theta.iter().map(|&t| S::from(t)).collect();
        }
        (0..self.theta.len())
            .map(|i| {
                let mut acc = s[0] * 0.0 + self.theta[i];
                for (k, &sk) in s.iter().enumerate() {
                    let w = self.directions[(i, k)];
                    if w != 0.0 {
                        acc += sk * w;
                    }
                }
                acc
            })
            .collect()
    }
}

impl<Sy: DynSystem> DynSystem for ParamLifted<'_, Sy> {
    fn coordinate_count(&self) -> usize {
        self.n() + self.direction_count()
    }

    fn constraint_count(&self) -> usize {
        self.system.constraint_count()
    }

    /// As the inner system: a step of a time-dependent one evaluates
    /// [`lagrangian_at`](DynSystem::lagrangian_at), the inner
    /// [`lagrangian_with_at`](DynSystem::lagrangian_with_at).
    fn time_dependent(&self) -> bool {
        self.system.time_dependent()
    }

    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        let n = self.n();
        let theta = self.theta(&q[n..]);
        self.system.lagrangian_with(&q[..n], &v[..n], &theta)
    }

    fn lagrangian_at<S: AdScalar>(&self, q: &[S], v: &[S], t: f64) -> S {
        let n = self.n();
        let theta = self.theta(&q[n..]);
        self.system.lagrangian_with_at(&q[..n], &v[..n], &theta, t)
    }

    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        self.terms.as_ref()
    }

    /// Term `e` on its stencil: the inner term's coordinates, then the
    /// directions `s` (see [`DynSystem::parameter_terms`]).
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        self.lagrangian_term_at(e, q, v, 0.0)
    }

    fn lagrangian_term_at<S: AdScalar>(&self, e: usize, q: &[S], v: &[S], t: f64) -> S {
        let k = q.len() - self.direction_count();
        let theta = self.theta(&q[k..]);
        self.system
            .lagrangian_term_with(e, &q[..k], &v[..k], &theta, t)
    }

    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        let (n, m, w) = (self.n(), self.constraint_count(), self.coordinate_count());
        if m == 0 {
            return;
        }
        let theta = self.theta(&q[n..]);
        // The inner rows (stride n) at the front of `a`, then spread to
        // stride w from the last row back (w ≥ n: no row overwrites one not
        // yet moved), the directions' columns zero. No m × n scratch: over
        // hyper-duals that is megabytes a call for a large circuit.
        self.system
            .constraint_forms_with(&q[..n], &theta, &mut a[..m * n]);
        let zero = q[0] * 0.0;
        for r in (0..m).rev() {
            a.copy_within(r * n..(r + 1) * n, r * w);
            for x in &mut a[r * w + n..(r + 1) * w] {
                *x = zero;
            }
        }
    }

    fn boundary_count(&self) -> usize {
        self.system.boundary_count()
    }

    fn boundary<S: AdScalar>(&self, j: usize, q: &[S]) -> S {
        let n = self.n();
        let theta = self.theta(&q[n..]);
        self.system.boundary_with(j, &q[..n], &theta)
    }

    fn hamiltonian<S: AdScalar>(&self, q: &[S], p: &[S]) -> Option<S> {
        let n = self.n();
        let theta = self.theta(&q[n..]);
        self.system.hamiltonian_with(&q[..n], &p[..n], &theta)
    }

    fn gyroscopic_force<S: AdScalar>(&self, q: &[S], v: &[S], f: &mut [S]) -> bool {
        let n = self.n();
        let theta = self.theta(&q[n..]);
        for x in f[n..].iter_mut() {
            *x = q[0] * 0.0;
        }
        self.system
            .gyroscopic_force_with(&q[..n], &v[..n], &theta, &mut f[..n])
    }

    fn discrete_constraint<S: AdScalar>(&self, q0: &[S], q1: &[S], h: S, c: &mut [S]) -> bool {
        let n = self.n();
        // s is the same at both ends of a lifted step: read it at q0
        let theta = self.theta(&q0[n..]);
        self.system
            .discrete_constraint_with(&q0[..n], &q1[..n], h, &theta, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::Dual64;

    /// `L = ½ m v² − m g q`, `g(q) = q − c` with θ = (m, g, c).
    struct Drop;

    impl DynSystem for Drop {
        fn coordinate_count(&self) -> usize {
            1
        }
        fn constraint_count(&self) -> usize {
            0
        }
        fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
            self.lagrangian_with(q, v, &[q[0] * 0.0 + 2.0, q[0] * 0.0 + 9.8, q[0] * 0.0])
        }
        fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
        fn boundary_count(&self) -> usize {
            1
        }
        fn boundary<S: AdScalar>(&self, j: usize, q: &[S]) -> S {
            self.boundary_with(j, q, &[q[0] * 0.0 + 2.0, q[0] * 0.0 + 9.8, q[0] * 0.0])
        }
        fn parameter_count(&self) -> usize {
            3
        }
        fn parameter_values(&self) -> Vec<f64> {
            vec![2.0, 9.8, 0.0]
        }
        fn lagrangian_with<S: AdScalar>(&self, q: &[S], v: &[S], t: &[S]) -> S {
            t[0] * v[0] * v[0] * 0.5 - t[0] * t[1] * q[0]
        }
        fn boundary_with<S: AdScalar>(&self, _j: usize, q: &[S], t: &[S]) -> S {
            q[0] - t[2]
        }
    }

    #[test]
    fn lifted_derivatives_are_parameter_derivatives() {
        // direction: d(m, g, c) = (1, 0, 0.5)
        let d = DMatrix::from_column_slice(3, 1, &[1.0, 0.0, 0.5]);
        let lifted = ParamLifted::new(&Drop, &d);
        assert_eq!(lifted.coordinate_count(), 2);
        let (q, v) = (0.7, -1.3);
        let x = [Dual64::from(q), Dual64::from(0.0).derivative()];
        let l = lifted.lagrangian(&x, &[Dual64::from(v), Dual64::from(0.0)]);
        // ∂L/∂m = ½ v² − g q
        assert!((l.re - (v * v - 2.0 * 9.8 * q)).abs() < 1e-14);
        assert!((l.eps - (0.5 * v * v - 9.8 * q)).abs() < 1e-14);
        let g = lifted.boundary(0, &x);
        assert!((g.re - q).abs() < 1e-15 && (g.eps + 0.5).abs() < 1e-15);
    }
}
