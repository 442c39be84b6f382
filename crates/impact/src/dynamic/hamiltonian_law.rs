//! The elastic-impact law for the discrete nonholonomic Hamiltonian steppers
//! of the run-time-sized core (the counterpart of
//! [`HamiltonianLaw`](crate::HamiltonianLaw); docs/theory.md §4.10): a
//! normal momentum jump `π̃⁺ = π̃⁻ + ν n̂` with the discrete energy of the two
//! sub-steps balanced, reflected root by argmin's `BrentRoot`, grazing by
//! `BrentOpt`.

use super::{DynImpactLaw, DynImpactSite, DynLawTangent, DynRebound};
use crate::ImpactError;
use argmin::core::{State as _, TerminationReason};
use diracvi_discrete_dirac::dynamic::{DynNonholonomicHamiltonian, DynSubStep, DynSubStepper};
use diracvi_discrete_dirac::{StepError, momentum_unit};
use diracvi_geometry::dynamic::DynSystem;
use nalgebra::{DMatrix, DVector};
use std::cell::RefCell;

/// The Hamiltonian impact law: a normal momentum jump with the discrete
/// energy balanced, reflected root.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DynHamiltonianLaw;

/// The post-impact sub-step and its energy mismatch as functions of `ν`.
struct Jump<'a, St> {
    stepper: &'a RefCell<&'a mut St>,
    site: &'a DynImpactSite<'a>,
    energy_before: f64,
    failure: &'a RefCell<Option<StepError>>,
    evaluations: &'a RefCell<usize>,
}

impl<Sy: DynSystem> Jump<'_, DynNonholonomicHamiltonian<Sy>> {
    /// The momentum after the jump.
    fn pi_after(&self, nu: f64) -> DVector<f64> {
        &self.site.before.pi_b + self.site.frame.normal() * nu
    }

    /// The post-impact sub-step for `ν` and its energy mismatch.
    fn solve(&self, nu: f64) -> Result<(DynSubStep, f64), StepError> {
        let site = self.site;
        let q = &site.before.b;
        let mut st = self.stepper.borrow_mut();
        *self.evaluations.borrow_mut() += 1;
        // From the explicit guess (no increment): for a given momentum the
        // sub-step is an ordinary smooth step.
        let after = st.trial_step(
            site.t,
            q,
            &self.pi_after(nu),
            site.h2,
            &DVector::zeros(q.len()),
        )?;
        let (energy, _) = st
            .discrete_energy(q, &after.pi_b, site.h2)
            .map_err(|source| StepError::Geometry { t: site.t, source })?;
        Ok((after, energy - self.energy_before))
    }

    fn mismatch(&self, nu: f64) -> Result<f64, argmin::core::Error> {
        self.solve(nu).map(|(_, f)| f).map_err(|e| {
            let msg = e.to_string();
            *self.failure.borrow_mut() = Some(e);
            argmin::core::Error::msg(msg)
        })
    }
}

impl<Sy: DynSystem> DynImpactLaw<DynNonholonomicHamiltonian<Sy>> for DynHamiltonianLaw {
    fn rebound(
        &mut self,
        stepper: &mut DynNonholonomicHamiltonian<Sy>,
        site: &DynImpactSite<'_>,
    ) -> Result<DynRebound, ImpactError> {
        let (t, piece) = (site.t, site.frame.piece);
        let fail = |reason: String| ImpactError::PostImpact { t, piece, reason };
        let (energy_before, _) = stepper
            .discrete_energy(&site.a, &site.before.pi_b, site.h1)
            .map_err(|source| ImpactError::Geometry { t, source })?;
        let failure = RefCell::new(None);
        let evaluations = RefCell::new(0);
        let cell = RefCell::new(stepper);
        let jump = Jump {
            stepper: &cell,
            site,
            energy_before,
            failure: &failure,
            evaluations: &evaluations,
        };
        let step_failed = |e: StepError| ImpactError::Step(e);
        let n_hat = site.frame.normal();
        // The normal displacement of the post-impact sub-step grows with ν
        // at the rate h2 n̂ᵀ ∂²K/∂π² n̂ > 0; the reflected root mirrors the
        // pass-through displacement s(0) < 0.
        let (s0_step, _) = jump.solve(0.0).map_err(step_failed)?;
        let s0 = n_hat.dot(&s0_step.d);
        // Momenta far below 1 (a tiny mass) are measured against their own
        // size, not against 1 (docs/theory.md §3.7; `floor = 1` otherwise).
        let floor = momentum_unit(site.before.pi_b.amax()).recip();
        let probe = site.before.pi_b.amax().max(floor) * 1e-3;
        let (s1_step, _) = jump.solve(probe).map_err(step_failed)?;
        let slope = (n_hat.dot(&s1_step.d) - s0) / probe;
        if !(slope.is_finite() && slope > 0.0) {
            return Err(fail(format!(
                "the normal displacement does not grow with the normal momentum (slope {slope:e})"
            )));
        }
        let nu_est = (-2.0 * s0 / slope).max(probe);
        // Bracket the reflected root: below the energy at half the jump (the
        // vertex of the energy parabola), above it further out.
        let (lo, f_lo) = (0.5 * nu_est, jump.mismatch(0.5 * nu_est));
        let mut hi = 1.5 * nu_est;
        let mut f_hi = jump.mismatch(hi);
        for _ in 0..40 {
            match f_hi {
                Ok(f) if f > 0.0 => break,
                _ => {
                    hi *= 2.0;
                    f_hi = jump.mismatch(hi);
                }
            }
        }
        let take_failure = |e: argmin::core::Error| match failure.borrow_mut().take() {
            Some(se) => ImpactError::Step(se),
            None => fail(e.to_string()),
        };
        let f_lo = f_lo.map_err(take_failure)?;
        let f_hi = f_hi.map_err(take_failure)?;
        let scale = energy_before.abs().max(floor);
        let (nu, grazing, solver_iters) = if f_lo < 0.0 && f_hi > 0.0 {
            let res = crate::brent::root(&|nu| jump.mismatch(nu), lo, hi, 1e-15 * hi.abs(), 200)
                .map_err(take_failure)?;
            let state = &res;
            if state.get_termination_reason() != Some(&TerminationReason::SolverConverged) {
                return Err(fail(format!(
                    "BrentRoot stopped without converging ({:?})",
                    state.get_termination_reason()
                )));
            }
            let nu = *state
                .get_best_param()
                .or(state.get_param())
                .ok_or_else(|| fail("no root".into()))?;
            (nu, false, state.get_iter() as usize)
        } else {
            // Grazing: the energy mismatch of the sub-steps (O(h)) exceeds
            // the normal kinetic energy; minimise it over the reflected side.
            let res = crate::brent::minimum(
                &|nu| jump.mismatch(nu).map(|f| f * f),
                0.0,
                hi,
                (1e-10, 1e-14 * scale),
                200,
            )
            .map_err(take_failure)?;
            let state = &res;
            let nu = *state
                .get_best_param()
                .ok_or_else(|| fail("grazing fallback found no minimiser".into()))?;
            (nu, true, state.get_iter() as usize)
        };
        let (after, mismatch) = jump.solve(nu).map_err(step_failed)?;
        if !grazing && n_hat.dot(&after.d) <= 0.0 {
            return Err(fail(
                "the energy balance converged to the pass-through root, not the reflected one"
                    .into(),
            ));
        }
        let iterations = solver_iters + *evaluations.borrow();
        Ok(DynRebound {
            after,
            pi_after_raw: jump.pi_after(nu),
            energy_before,
            energy_after: energy_before + mismatch,
            grazing,
            iterations,
        })
    }

    /// The law's derivative (docs/theory.md §12.7): the energy balance
    /// differentiated through the post-impact sub-step's tangent map.
    fn rebound_tangent(
        &self,
        stepper: &DynNonholonomicHamiltonian<Sy>,
        site: &DynImpactSite<'_>,
        rebound: &DynRebound,
    ) -> Result<DynLawTangent, ImpactError> {
        super::tangent::hamiltonian_rebound_tangent(stepper, site, rebound, None)
    }

    /// The law's derivative with the parameter columns (docs/theory.md
    /// §12.4, §12.7).
    fn rebound_sensitivity(
        &self,
        stepper: &DynNonholonomicHamiltonian<Sy>,
        site: &DynImpactSite<'_>,
        rebound: &DynRebound,
        directions: &DMatrix<f64>,
    ) -> Result<DynLawTangent, ImpactError> {
        super::tangent::hamiltonian_rebound_tangent(stepper, site, rebound, Some(directions))
    }
}
