//! Impact laws: what happens at the impact point, one per stepper family
//! (docs/theory.md §4.5, §4.10).
//!
//! The integrator locates the impact (the sub-step `a → q̃` of size `α h`
//! with `g_j(q̃) = 0`) and hands the law an [`ImpactSite`]; the law returns
//! the [`Rebound`]: the post-impact sub-step `q̃ → q_{k+1}` of size `(1 − α) h`
//! and the momentum at `q̃` after the impact, from which the rest of the step
//! continues.

use crate::ImpactError;
use diracvi_discrete_dirac::{NewtonParams, SubStep, SubStepper};
use diracvi_geometry::BoundaryFrame;
use nalgebra::SVector;

/// Where and how an impact happens (oriented quantities: `π = sign · p`).
#[derive(Debug, Clone, Copy)]
pub struct ImpactSite<'a, const N: usize> {
    /// Impact time.
    pub t: f64,
    /// Start of the sub-step that reaches the boundary.
    pub a: SVector<f64, N>,
    /// Oriented momentum at `a`.
    pub pi_a: SVector<f64, N>,
    /// Size of the sub-step to the impact, `α h`.
    pub h1: f64,
    /// Size of the rest of the sub-step, `(1 − α) h`.
    pub h2: f64,
    /// The sub-step `a → q̃` (its end `b` is the impact point, its `π_b` the
    /// momentum that reaches it).
    pub before: &'a SubStep<N>,
    /// The boundary frame at `q̃` (normal `dg/|dg|` into the admissible set,
    /// basis of `ker dg`).
    pub frame: &'a BoundaryFrame<N>,
    /// The increment from `q̃` to the end of the smooth step that crossed
    /// (the pass-through point), a starting guess.
    pub pass_through: SVector<f64, N>,
    /// Newton parameters for the law's solves.
    pub newton: NewtonParams,
}

/// The outcome of an impact.
#[derive(Debug, Clone, Copy)]
pub struct Rebound<const N: usize> {
    /// The post-impact sub-step `q̃ → q_{k+1}` (increment, oriented momentum
    /// at `q_{k+1}`, constraint reaction at `q̃`).
    pub after: SubStep<N>,
    /// The oriented momentum at `q̃` after the impact that the post-impact
    /// sub-step continues from (\[VCI\] Theorem 3.1: `−D1 L_d + A(q̃)ᵀ λ̃`;
    /// Hamiltonian: `p̃⁻ + ν dg`).
    pub pi_after_raw: SVector<f64, N>,
    /// Discrete energy of the sub-step before the impact.
    pub energy_before: f64,
    /// Discrete energy of the post-impact sub-step.
    pub energy_after: f64,
    /// No reflected root: the energy mismatch was minimised instead.
    pub grazing: bool,
    /// Iterations of the law's solves (Newton and root finding).
    pub iterations: usize,
}

/// An impact law for the steppers `St`.
pub trait ImpactLaw<St, const N: usize, const M: usize>
where
    St: SubStepper<N, M>,
{
    /// Resolve the impact at `site`.
    ///
    /// # Errors
    /// [`ImpactError`] naming the step, time and piece.
    fn rebound(
        &mut self,
        stepper: &mut St,
        site: &ImpactSite<'_, N>,
    ) -> Result<Rebound<N>, ImpactError>;
}

/// The law for users who want no impacts: any crossing of the boundary is an
/// error ([`ImpactError::Crossing`]) naming the step, time and piece.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RejectCrossing;

impl<St, const N: usize, const M: usize> ImpactLaw<St, N, M> for RejectCrossing
where
    St: SubStepper<N, M>,
{
    fn rebound(
        &mut self,
        _stepper: &mut St,
        site: &ImpactSite<'_, N>,
    ) -> Result<Rebound<N>, ImpactError> {
        Err(ImpactError::Crossing {
            t: site.t,
            piece: site.frame.piece,
        })
    }
}

/// A law chosen at run time: `law`, or [`RejectCrossing`] when `reject`.
///
/// Each (stepper, law) pair is its own integrator type, compiled again for
/// every system type; a runner that offers both "elastic" and "no impacts"
/// holds one `OrReject` instead of two integrators, and so compiles the
/// integrator once per stepper (docs/theory.md §11.5). The rebound is the
/// chosen law's, bit for bit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrReject<L> {
    /// The law used when crossings are not rejected.
    pub law: L,
    /// Refuse every crossing ([`RejectCrossing`]) instead of applying `law`.
    pub reject: bool,
}

impl<L> OrReject<L> {
    /// `law`, or [`RejectCrossing`] when `reject`.
    pub fn new(law: L, reject: bool) -> Self {
        Self { law, reject }
    }
}

impl<St, L, const N: usize, const M: usize> ImpactLaw<St, N, M> for OrReject<L>
where
    St: SubStepper<N, M>,
    L: ImpactLaw<St, N, M>,
{
    fn rebound(
        &mut self,
        stepper: &mut St,
        site: &ImpactSite<'_, N>,
    ) -> Result<Rebound<N>, ImpactError> {
        if self.reject {
            RejectCrossing.rebound(stepper, site)
        } else {
            self.law.rebound(stepper, site)
        }
    }
}
