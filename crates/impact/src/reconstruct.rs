//! Integrating a reduced system and reconstructing the full trajectory
//! (docs/theory.md §7).
//!
//! [`Reconstructing`] wraps any one-step map of a
//! [`Reduced`](diracvi_geometry::Reduced) system on shape space (a smooth
//! stepper or an [`ImpactIntegrator`](crate::ImpactIntegrator)) into a
//! one-step map of the *full* system: after each reduced step it rebuilds the
//! group coordinates by quadrature along the discrete path — sub-step by
//! sub-step through every impact point, `g ← g + τ ġ(Ψ_d^τ(s_a, s_b))` —
//! and reports full configurations, full momenta `D2 L_d(q_a, q_b, τ)` of
//! the last sub-step, and impact events in full coordinates. Outputs and
//! plots built for the full system then work unchanged.

use crate::{ImpactError, ImpactEvent};
use diracvi_discrete_dirac::trajectory::StepOutput;
use diracvi_discrete_dirac::{OneStep, State};
use diracvi_geometry::{DiscreteLagrangian, DiscretizationMap, Reduced, System};
use nalgebra::SVector;

/// A one-step map of the full system built from a one-step map `St` of its
/// reduction (forward in time).
#[derive(Debug, Clone)]
pub struct Reconstructing<
    St,
    Sy,
    Dm,
    const N: usize,
    const M: usize,
    const NR: usize,
    const MR: usize,
> {
    inner: St,
    reduced: Reduced<Sy, N, M, NR, MR>,
    map: Dm,
    state: State<NR>,
    scratch: Vec<ImpactEvent<NR>>,
}

impl<St, Sy, Dm, const N: usize, const M: usize, const NR: usize, const MR: usize>
    Reconstructing<St, Sy, Dm, N, M, NR, MR>
where
    St: OneStep<NR, Event = ImpactEvent<NR>, Error = ImpactError>,
    Sy: System<N, M>,
    Dm: DiscretizationMap<N> + DiscretizationMap<NR>,
{
    /// Wrap `inner`, a forward one-step map of `reduced` with discretization
    /// `map`, starting from the reduced state `initial` (momentum
    /// `∂L_R/∂ṡ(s(0), ṡ(0))`, e.g. from
    /// [`state_from_velocity`](diracvi_discrete_dirac::state_from_velocity)
    /// on the reduced system).
    pub fn new(inner: St, reduced: Reduced<Sy, N, M, NR, MR>, map: Dm, initial: State<NR>) -> Self {
        Self {
            inner,
            reduced,
            map,
            state: initial,
            scratch: Vec::new(),
        }
    }

    /// The reduced system.
    pub fn reduced(&self) -> &Reduced<Sy, N, M, NR, MR> {
        &self.reduced
    }

    /// The current reduced state.
    pub fn reduced_state(&self) -> &State<NR> {
        &self.state
    }

    /// The wrapped reduced one-step map.
    pub fn inner(&self) -> &St {
        &self.inner
    }
}

impl<St, Sy, Dm, const N: usize, const M: usize, const NR: usize, const MR: usize> OneStep<N>
    for Reconstructing<St, Sy, Dm, N, M, NR, MR>
where
    St: OneStep<NR, Event = ImpactEvent<NR>, Error = ImpactError>,
    Sy: System<N, M>,
    Dm: DiscretizationMap<N> + DiscretizationMap<NR>,
{
    type Event = ImpactEvent<N>;
    type Error = ImpactError;

    /// One reduced step from the wrapper's reduced state (whose shape part
    /// is the shape part of `from.q`); the group coordinates of `from.q` are
    /// carried forward by quadrature.
    fn advance(
        &mut self,
        from: &State<N>,
        h: f64,
        events: &mut Vec<ImpactEvent<N>>,
    ) -> Result<StepOutput<N>, ImpactError> {
        self.scratch.clear();
        let out = self.inner.advance(&self.state, h, &mut self.scratch)?;
        let geometry = |t: f64| move |source| ImpactError::Geometry { t, source };
        let ld = DiscreteLagrangian::new(self.reduced.full(), &self.map);
        // The chain of sub-step end points: impact points, then q_{k+1}.
        let (mut qa, mut ta) = (from.q, from.t);
        let mut previous: Option<(usize, SVector<f64, N>, f64)> = None; // (event, q̃, t̃)
        for i in 0..=self.scratch.len() {
            let event = self.scratch.get(i).copied();
            let (sb, tb) = event.map_or((out.to.q, out.to.t), |e| (e.q, e.t));
            let tau = tb - ta;
            let (qb, d) = self
                .reduced
                .lift_step(&self.map, &qa, &sb, tau)
                .map_err(geometry(ta))?;
            if let Some((j, q_imp, t_imp)) = previous.take() {
                let p_after = -ld.d1_increment(&q_imp, &d, tau).map_err(geometry(t_imp))?;
                events[j].p_after = p_after;
                events[j].p_after_raw = p_after;
            }
            let p = ld.d2_increment(&qa, &d, tau).map_err(geometry(tb))?;
            match event {
                Some(e) => {
                    events.push(ImpactEvent {
                        q: qb,
                        p_before: p,
                        p_after: p,
                        p_after_raw: p,
                        ..map_event(&e)
                    });
                    previous = Some((events.len() - 1, qb, tb));
                    qa = qb;
                    ta = tb;
                }
                None => {
                    self.state = out.to;
                    return Ok(StepOutput {
                        to: State { t: tb, q: qb, p },
                        energy: out.energy,
                        constraint_residual: out.constraint_residual,
                        stats: out.stats,
                    });
                }
            }
        }
        // The loop returns at its last iteration (no event left).
        Err(ImpactError::Step(
            diracvi_discrete_dirac::StepError::BadStep { t: from.t, h },
        ))
    }
}

/// The scalar fields of a reduced event, with zero vectors in full size.
fn map_event<const N: usize, const NR: usize>(e: &ImpactEvent<NR>) -> ImpactEvent<N> {
    ImpactEvent {
        step: e.step,
        alpha: e.alpha,
        t: e.t,
        q: SVector::zeros(),
        piece: e.piece,
        p_before: SVector::zeros(),
        p_after: SVector::zeros(),
        p_after_raw: SVector::zeros(),
        energy_before: e.energy_before,
        energy_after: e.energy_after,
        grazing: e.grazing,
    }
}
