//! Integrating a reduced system of any size and reconstructing the full
//! trajectory (docs/theory.md §7, §11): the run-time-sized counterpart of
//! [`Reconstructing`](crate::Reconstructing).
//!
//! [`DynReconstructing`] wraps a one-step map of a
//! [`DynReduced`] system on shape space (a smooth stepper or a
//! [`DynImpactIntegrator`](super::DynImpactIntegrator)) into a one-step map
//! of the full system: after each reduced step it rebuilds the group
//! coordinates by quadrature along the discrete path, sub-step by sub-step
//! through every impact point (`g ← g + τ ġ(Ψ_d^τ(s_a, s_b))`), and reports
//! full configurations, full momenta `D2 L_d(q_a, q_b, τ)` of the last
//! sub-step and impact events in full coordinates.

use super::DynImpactEvent;
use crate::ImpactError;
use diracvi_discrete_dirac::dynamic::{DynOneStep, DynStepOutput};
use diracvi_discrete_dirac::{DynState, StepError};
use diracvi_geometry::Discretization;
use diracvi_geometry::dynamic::{DynDiscreteLagrangian, DynReduced, DynSystem};
use nalgebra::DVector;

/// A one-step map of the full system built from a one-step map `St` of its
/// reduction (forward in time).
#[derive(Debug, Clone)]
pub struct DynReconstructing<St, Sy> {
    inner: St,
    reduced: DynReduced<Sy>,
    map: Discretization,
    state: DynState,
    scratch: Vec<DynImpactEvent>,
}

impl<St, Sy> DynReconstructing<St, Sy>
where
    St: DynOneStep<Event = DynImpactEvent, Error = ImpactError>,
    Sy: DynSystem,
{
    /// Wrap `inner`, a forward one-step map of `reduced` with discretization
    /// `map`, starting from the reduced state `initial` (momentum
    /// `∂L_R/∂ṡ(s(0), ṡ(0))`, e.g. from
    /// [`dyn_state_from_velocity`](diracvi_discrete_dirac::dynamic::dyn_state_from_velocity)
    /// on the reduced system).
    pub fn new(inner: St, reduced: DynReduced<Sy>, map: Discretization, initial: DynState) -> Self {
        Self {
            inner,
            reduced,
            map,
            state: initial,
            scratch: Vec::new(),
        }
    }

    /// The reduced system.
    pub fn reduced(&self) -> &DynReduced<Sy> {
        &self.reduced
    }

    /// The current reduced state.
    pub fn reduced_state(&self) -> &DynState {
        &self.state
    }

    /// The wrapped reduced one-step map.
    pub fn inner(&self) -> &St {
        &self.inner
    }
}

impl<St, Sy> DynOneStep for DynReconstructing<St, Sy>
where
    St: DynOneStep<Event = DynImpactEvent, Error = ImpactError>,
    Sy: DynSystem,
{
    type Event = DynImpactEvent;
    type Error = ImpactError;

    /// One reduced step from the wrapper's reduced state (whose shape part
    /// is the shape part of `from.q`); the group coordinates of `from.q` are
    /// carried forward by quadrature.
    fn advance(
        &mut self,
        from: &DynState,
        h: f64,
        events: &mut Vec<DynImpactEvent>,
    ) -> Result<DynStepOutput, ImpactError> {
        self.scratch.clear();
        let out = self.inner.advance(&self.state, h, &mut self.scratch)?;
        let geometry = |t: f64| move |source| ImpactError::Geometry { t, source };
        let ld = DynDiscreteLagrangian::new(self.reduced.full(), self.map);
        let n = from.q.len();
        // The chain of sub-step end points: impact points, then q_{k+1}.
        let (mut qa, mut ta) = (from.q.clone(), from.t);
        let mut previous: Option<(usize, DVector<f64>, f64)> = None; // (event, q̃, t̃)
        for i in 0..=self.scratch.len() {
            let event = self.scratch.get(i);
            let (sb, tb) = event.map_or((&out.to.q, out.to.t), |e| (&e.q, e.t));
            let tau = tb - ta;
            let (qb, d) = self.reduced.lift_step(self.map, &qa, sb, tau);
            if let Some((j, q_imp, t_imp)) = previous.take() {
                let mut p_after = DVector::zeros(n);
                ld.d1_increment(&q_imp, &d, tau, &mut p_after)
                    .map_err(geometry(t_imp))?;
                p_after.neg_mut();
                events[j].p_after_raw = p_after.clone();
                events[j].p_after = p_after;
            }
            let mut p = DVector::zeros(n);
            ld.d2_increment(&qa, &d, tau, &mut p)
                .map_err(geometry(tb))?;
            match event {
                Some(e) => {
                    events.push(DynImpactEvent {
                        step: e.step,
                        alpha: e.alpha,
                        t: e.t,
                        q: qb.clone(),
                        piece: e.piece,
                        p_before: p.clone(),
                        p_after: p.clone(),
                        p_after_raw: p,
                        energy_before: e.energy_before,
                        energy_after: e.energy_after,
                        grazing: e.grazing,
                    });
                    previous = Some((events.len() - 1, qb.clone(), tb));
                    qa = qb;
                    ta = tb;
                }
                None => {
                    self.state = out.to.clone();
                    return Ok(DynStepOutput {
                        to: DynState { t: tb, q: qb, p },
                        energy: out.energy,
                        constraint_residual: out.constraint_residual,
                        stats: out.stats,
                    });
                }
            }
        }
        // The loop returns at its last iteration (no event left).
        Err(ImpactError::Step(StepError::BadStep { t: from.t, h }))
    }
}
