//! The exact tangent map of a discrete nonholonomic Hamiltonian step
//! (docs/theory.md §12.7): the derivative of `(b, π_b)` with respect to the
//! step's data `(a, π_a, h)` and, through the system's `…_with` hooks, its
//! parameters, by the implicit function theorem on the step equations.
//!
//! The oriented (+) step (see [`DynNonholonomicHamiltonian`]) solves
//! `F(y; z) = 0` for `y = (d, π_b, μ)` given `z = (a, π_a, h)`:
//! ```text
//! F₁ = d − h ∂K/∂π(a, π_b) = 0,
//! F₂ = π_a − π_b − h ∂K/∂a(a, π_b) − A(a)ᵀ μ = 0,
//! F₃ = ω_d(a, a + d, h) = 0,
//! ```
//! (`F₁` is the Newton solve's first row times `h`: the same solutions,
//! rows of one scale) and `b = a + d`. Then `∂y/∂z = −(∂F/∂y)⁻¹ ∂F/∂z`;
//! `π_b` is one of the unknowns, so no chain rule follows. The partial
//! derivatives are exact (hyper-dual numbers): the Hessian of the kernel
//! `K` over `(a, π)`, `∂ω_d/∂(a, b, h)`, `∂(A(a)ᵀ μ)/∂a`.

use super::hamiltonian::DynNonholonomicHamiltonian;
use super::{DynStepSensitivity, DynStepTangent, DynSubStep, check_directions};
use super::{implicit_derivative, multipliers_from_reaction};
use crate::StepError;
use diracvi_geometry::GeometryError;
use diracvi_geometry::dynamic::{
    DynDiscreteLagrangian, DynSystem, ParamLifted, constraint_second_dyn, hamiltonian_second_dyn,
    reaction_jacobian_dyn,
};
use nalgebra::{DMatrix, DVector};

impl<Sy: DynSystem> DynNonholonomicHamiltonian<Sy> {
    /// The tangent map of the oriented step `sub` taken from `a` with step
    /// `h` (its increment `d`, end momentum `π_b` and reaction `A(a)ᵀ μ`):
    /// `∂(b, π_b)/∂(a, π_a)` and `∂(b, π_b)/∂h` (docs/theory.md §12.7).
    /// `t` is the time of `a` (errors name it).
    ///
    /// # Errors
    /// [`StepError::Unsupported`] without a Hamiltonian, with dependent
    /// constraint rows or a singular step Jacobian; [`StepError::Geometry`]
    /// when a derivative cannot be evaluated.
    pub fn oriented_tangent(
        &self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
    ) -> Result<DynStepTangent, StepError> {
        self.tangent_over(self.system(), 0, t, a, sub, h)
            .map(|s| s.tangent)
    }

    /// The tangent map of the oriented step (as
    /// [`oriented_tangent`](Self::oriented_tangent)) with the derivative of
    /// `(b, π_b)` in the parameter directions `directions` (`P × r`;
    /// docs/theory.md §12.4): the step equations differentiated in `θ`
    /// through the system's `…_with` hooks (`H`, `A`, `ω_d`), over the
    /// lifted system ([`ParamLifted`]).
    ///
    /// # Errors
    /// As [`oriented_tangent`](Self::oriented_tangent);
    /// [`StepError::Unsupported`] when `directions` does not have one row
    /// per parameter of the system.
    pub fn oriented_sensitivity(
        &self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
        directions: &DMatrix<f64>,
    ) -> Result<DynStepSensitivity, StepError> {
        check_directions(self.system(), directions)?;
        let lifted = ParamLifted::new(self.system(), directions);
        self.tangent_over(&lifted, directions.ncols(), t, a, sub, h)
    }

    /// The step's derivative in `(a, π_a, h)` and in `r` parameter
    /// directions, the second derivatives taken over `lifted`: the system
    /// itself (`r = 0`) or its [`ParamLifted`] (coordinates `(q, s)`, `s`
    /// held at `0`).
    #[allow(clippy::too_many_arguments)]
    fn tangent_over<Ly: DynSystem>(
        &self,
        lifted: &Ly,
        r: usize,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
    ) -> Result<DynStepSensitivity, StepError> {
        let geo = |source: GeometryError| StepError::Geometry { t, source };
        let system = self.system();
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        let np = n + r;
        let lift = |x: &DVector<f64>| {
            let mut y = DVector::zeros(np);
            y.rows_mut(0, n).copy_from(x);
            y
        };
        let (al, pl, dl) = (lift(a), lift(&sub.pi_b), lift(&sub.d));
        let orientation = self.direction().orientation();
        let reversed = orientation == diracvi_geometry::Orientation::Reversed;
        // K over z' = (a, s, π, π_s): gradient and Hessian at (a, π_b).
        let (_, grad, hess) = hamiltonian_second_dyn(lifted, reversed, &al, &pl)
            .map_err(geo)?
            .ok_or_else(|| {
                StepError::Unsupported(
                    "the system supplies no Hamiltonian, so the discrete Hamiltonian step has \
                     no tangent map"
                        .to_owned(),
                )
            })?;
        // ω_d over (a', b', h) of the lifted step.
        let ld = DynDiscreteLagrangian::new(lifted, self.map()).oriented(orientation);
        let (_, w) = constraint_second_dyn(self.constraint(), &ld, &al, &dl, h).map_err(geo)?;
        let (forms, mu) = multipliers_from_reaction(system, a, &sub.reaction).ok_or_else(|| {
            StepError::Unsupported(format!(
                "at t = {t}: the constraint rows A(q) are dependent; \
                 the tangent map needs independent rows"
            ))
        })?;
        let reaction_a = reaction_jacobian_dyn(lifted, &al, &mu).map_err(geo)?;
        // columns of z' and of the lifted ω_d: π at np, b' at np, h at 2np
        let (cpi, cb, ch) = (np, np, 2 * np);
        let size = 2 * n + m;
        let nz = 2 * n + 1 + r;
        let (col_h, col_s) = (2 * n, 2 * n + 1);
        let mut jy = DMatrix::zeros(size, size);
        let mut jz = DMatrix::zeros(size, nz);
        for i in 0..n {
            // F₁ = d − h K_π(a, π_b)
            jy[(i, i)] = 1.0;
            // F₂ = π_a − π_b − h K_a(a, π_b) − A(a)ᵀ μ
            jy[(n + i, n + i)] = -1.0;
            for j in 0..n {
                jy[(i, n + j)] = -h * hess[(cpi + i, cpi + j)];
                jy[(n + i, n + j)] -= h * hess[(i, cpi + j)];
                jz[(i, j)] = -h * hess[(cpi + i, j)];
                jz[(n + i, j)] = -h * hess[(i, j)] - reaction_a[(i, j)];
            }
            for c in 0..m {
                jy[(n + i, 2 * n + c)] = -forms[(c, i)];
            }
            jz[(n + i, n + i)] = 1.0;
            jz[(i, col_h)] = -grad[cpi + i];
            jz[(n + i, col_h)] = -grad[i];
            for s in 0..r {
                jz[(i, col_s + s)] = -h * hess[(cpi + i, n + s)];
                jz[(n + i, col_s + s)] = -h * hess[(i, n + s)] - reaction_a[(i, n + s)];
            }
        }
        // F₃ = ω_d(a, a + d, h): ∂/∂d = ∂/∂b, ∂/∂a = ∂/∂a + ∂/∂b
        for c in 0..m {
            let row = 2 * n + c;
            for j in 0..n {
                jy[(row, j)] = w[(c, cb + j)];
                jz[(row, j)] = w[(c, j)] + w[(c, cb + j)];
            }
            jz[(row, col_h)] = w[(c, ch)];
            for s in 0..r {
                jz[(row, col_s + s)] = w[(c, n + s)] + w[(c, cb + n + s)];
            }
        }
        let y = implicit_derivative(jy, &jz).map_err(|ratio| {
            StepError::Unsupported(format!(
                "at t = {t}: the Hamiltonian step's Jacobian is singular (pivot ratio \
                 {ratio:.1e}): its tangent map is not available"
            ))
        })?;
        // b = a + d; π_b is an unknown itself.
        let mut start = y.view((0, 0), (2 * n, 2 * n)).into_owned();
        for i in 0..n {
            start[(i, i)] += 1.0;
        }
        Ok(DynStepSensitivity {
            tangent: DynStepTangent {
                start,
                step: y.view((0, col_h), (2 * n, 1)).column(0).into_owned(),
            },
            parameters: y.view((0, col_s), (2 * n, r)).into_owned(),
        })
    }
}
