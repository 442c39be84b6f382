//! The impact layer on the run-time-sized core (docs/theory.md §11): the
//! same integrator, laws and events as the compile-time-sized ones of this
//! crate ([`ImpactIntegrator`](crate::ImpactIntegrator), docs/theory.md
//! §4), over any [`DynSubStepper`] — event detection (end points, the
//! Hermite estimate, the sampled discrete path near walls), the impact-time
//! fraction `α` by argmin's `BrentRoot`, several impacts per step, forward
//! and backward — with vectors sized at run time. On a
//! [`Fixed`](diracvi_geometry::dynamic::Fixed) system it reproduces the
//! compile-time-sized integrator bit for bit (`tests/dyn_impacts.rs`).

mod elastic;
mod hamiltonian_law;
mod reconstruct;
mod tangent;
mod vci;

pub use elastic::DynContinuousElasticLaw;
pub use hamiltonian_law::DynHamiltonianLaw;
pub use reconstruct::DynReconstructing;
pub use vci::DynVciLaw;

use crate::integrator::{PATH_REACH, RESTING_PROBE, RESTING_RATIO};
use crate::path::{PathPoint, Sample};
use crate::{ImpactError, ImpactParams, OrReject};
use argmin::core::{CostFunction, State as _, TerminationReason};
use diracvi_discrete_dirac::dynamic::{
    DynLagrangeDirac, DynOneStep, DynStage, DynStepOutput, DynSubStep, DynSubStepper,
};
use diracvi_discrete_dirac::newton::NewtonParams;
use diracvi_discrete_dirac::{Direction, DynState, StepError, StepEvent, StepStats};
use diracvi_geometry::dynamic::{
    DynBoundaryFrame, DynSystem, boundary_gradient_dyn, boundary_gradient_into, touch_band_slice,
    violated_piece_dyn,
};
use diracvi_geometry::{ConstraintDiscretization, Discretization, GeometryError};
use nalgebra::{DMatrix, DVector};
use serde::Serialize;
use std::borrow::Cow;
use std::cell::RefCell;

/// One impact, as recorded (see [`ImpactEvent`](crate::ImpactEvent)).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DynImpactEvent {
    /// Index `k` of the grid step containing the impact (the driver labels
    /// the events of each step, [`StepEvent`]).
    pub step: usize,
    /// Impact time as a fraction of the grid step, from its start.
    pub alpha: f64,
    /// Impact time.
    pub t: f64,
    /// Impact point `q̃` on the boundary.
    pub q: DVector<f64>,
    /// Boundary piece hit.
    pub piece: usize,
    /// Momentum at `q̃` before the impact.
    pub p_before: DVector<f64>,
    /// Momentum at `q̃` after the impact, less the post-impact sub-step's
    /// constraint reaction (comparable with `p_before`).
    pub p_after: DVector<f64>,
    /// The law's momentum at `q̃` after the impact, from which the rest of
    /// the step continues (with the impulsive constraint reaction).
    pub p_after_raw: DVector<f64>,
    /// Discrete energy before.
    pub energy_before: f64,
    /// Discrete energy after.
    pub energy_after: f64,
    /// A grazing impact (no reflected root; the energy mismatch was
    /// minimised instead).
    pub grazing: bool,
}

impl StepEvent for DynImpactEvent {
    fn set_step(&mut self, step: usize) {
        self.step = step;
    }
}

/// Where and how an impact happens (see [`ImpactSite`](crate::ImpactSite);
/// oriented quantities, `π = sign · p`).
#[derive(Debug, Clone)]
pub struct DynImpactSite<'a> {
    /// Impact time.
    pub t: f64,
    /// Start of the sub-step that reaches the boundary.
    pub a: DVector<f64>,
    /// Oriented momentum at `a`.
    pub pi_a: DVector<f64>,
    /// Size of the sub-step to the impact, `α h`.
    pub h1: f64,
    /// Size of the rest of the sub-step, `(1 − α) h`.
    pub h2: f64,
    /// The sub-step `a → q̃`.
    pub before: &'a DynSubStep,
    /// The boundary frame at `q̃`.
    pub frame: &'a DynBoundaryFrame,
    /// The increment from `q̃` to the end of the smooth step that crossed.
    pub pass_through: DVector<f64>,
    /// Newton parameters for the law's solves.
    pub newton: NewtonParams,
}

/// The outcome of an impact (see [`Rebound`](crate::Rebound)).
#[derive(Debug, Clone)]
pub struct DynRebound {
    /// The post-impact sub-step `q̃ → q_{k+1}`.
    pub after: DynSubStep,
    /// The oriented momentum at `q̃` after the impact that the post-impact
    /// sub-step continues from.
    pub pi_after_raw: DVector<f64>,
    /// Discrete energy of the sub-step before the impact.
    pub energy_before: f64,
    /// Discrete energy of the post-impact sub-step.
    pub energy_after: f64,
    /// No reflected root: the energy mismatch was minimised instead.
    pub grazing: bool,
    /// Iterations of the law's solves.
    pub iterations: usize,
}

/// An impact law for the run-time-sized steppers `St`.
pub trait DynImpactLaw<St: DynSubStepper> {
    /// Resolve the impact at `site`.
    ///
    /// # Errors
    /// [`ImpactError`] naming the step, time and piece.
    fn rebound(
        &mut self,
        stepper: &mut St,
        site: &DynImpactSite<'_>,
    ) -> Result<DynRebound, ImpactError>;

    /// The derivative of the rebound's momentum `π⁺` (`pi_after_raw`) with
    /// respect to `(a, q̃, h1, h2)`: `n × (2n + 2)` (docs/theory.md §12.3),
    /// and, for a law that reads the momentum `π⁻` at the impact point, with
    /// respect to `π⁻` ([`DynLawTangent`]), for the tangent map through
    /// impacts. By default not available.
    ///
    /// # Errors
    /// [`ImpactError::Step`] with [`StepError::Unsupported`] where the law
    /// has no derivative (the default) or the impact is grazing.
    fn rebound_tangent(
        &self,
        stepper: &St,
        site: &DynImpactSite<'_>,
        rebound: &DynRebound,
    ) -> Result<DynLawTangent, ImpactError> {
        let _ = (stepper, rebound);
        Err(ImpactError::Step(StepError::Unsupported(format!(
            "at t = {}: the tangent map through an impact is available for the \
             laws of [VCI] Theorem 3.1, the continuous law of the composed orders and the \
             Hamiltonian law only",
            site.t
        ))))
    }

    /// The derivative of the rebound's momentum `π⁺` with respect to
    /// `(a, q̃, h1, h2, s)`, `s` the parameter directions `directions`
    /// (`P × r`): `n × (2n + 2 + r)` (docs/theory.md §12.4), and with
    /// respect to `π⁻` for a law that reads it. By default not available.
    ///
    /// # Errors
    /// As [`rebound_tangent`](Self::rebound_tangent).
    fn rebound_sensitivity(
        &self,
        stepper: &St,
        site: &DynImpactSite<'_>,
        rebound: &DynRebound,
        directions: &DMatrix<f64>,
    ) -> Result<DynLawTangent, ImpactError> {
        let _ = (stepper, rebound, directions);
        Err(ImpactError::Step(StepError::Unsupported(format!(
            "at t = {}: parameter sensitivities through an impact are available for \
             the laws of [VCI] Theorem 3.1, the continuous law of the composed orders and the \
             Hamiltonian law only",
            site.t
        ))))
    }
}

/// The derivative of an impact law's momentum `π⁺` (see
/// [`DynImpactLaw::rebound_tangent`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DynLawTangent {
    /// `∂π⁺/∂(a, q̃, h₁, h₂, s)`: `n × (2n + 2 + r)`, `r` parameter
    /// directions (possibly none).
    pub data: DMatrix<f64>,
    /// `∂π⁺/∂π⁻`, `π⁻` the momentum at the impact point of the sub-step
    /// that reached it (`n × n`), for a law that reads it (the continuous
    /// law); `None` for a law that does not (\[VCI\] Theorem 3.1, whose
    /// `π⁺` depends on the sub-step's end points and durations only).
    pub momentum: Option<DMatrix<f64>>,
}

impl DynLawTangent {
    /// The derivative of a law that does not read `π⁻`.
    pub fn of_data(data: DMatrix<f64>) -> Self {
        Self {
            data,
            momentum: None,
        }
    }
}

/// No impacts: any crossing is [`ImpactError::Crossing`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DynRejectCrossing;

impl<St: DynSubStepper> DynImpactLaw<St> for DynRejectCrossing {
    fn rebound(
        &mut self,
        _stepper: &mut St,
        site: &DynImpactSite<'_>,
    ) -> Result<DynRebound, ImpactError> {
        Err(ImpactError::Crossing {
            t: site.t,
            piece: site.frame.piece,
        })
    }
}

/// [`OrReject`]: the law `L` of a run-time-sized stepper, or
/// [`DynRejectCrossing`] when `reject`; the law's derivatives are its own.
impl<St: DynSubStepper, L: DynImpactLaw<St>> DynImpactLaw<St> for OrReject<L> {
    fn rebound(
        &mut self,
        stepper: &mut St,
        site: &DynImpactSite<'_>,
    ) -> Result<DynRebound, ImpactError> {
        if self.reject {
            DynRejectCrossing.rebound(stepper, site)
        } else {
            self.law.rebound(stepper, site)
        }
    }

    fn rebound_tangent(
        &self,
        stepper: &St,
        site: &DynImpactSite<'_>,
        rebound: &DynRebound,
    ) -> Result<DynLawTangent, ImpactError> {
        self.law.rebound_tangent(stepper, site, rebound)
    }

    fn rebound_sensitivity(
        &self,
        stepper: &St,
        site: &DynImpactSite<'_>,
        rebound: &DynRebound,
        directions: &DMatrix<f64>,
    ) -> Result<DynLawTangent, ImpactError> {
        self.law
            .rebound_sensitivity(stepper, site, rebound, directions)
    }
}

/// A one-step map of a run-time-sized system with elastic impacts: a
/// [`DynSubStepper`] and the [`DynImpactLaw`] of its family.
#[derive(Debug, Clone)]
pub struct DynImpactIntegrator<St, L> {
    stepper: St,
    law: L,
    params: ImpactParams,
    /// `(q, g_j(q), dg_j(q))` at the end of the last sub-step, per piece.
    grad_cache: Vec<GradientAt>,
    /// Work vectors of [`suspects`](Self::suspects): the increment and
    /// `dg_j` at the start (allocated once).
    suspect_work: (DVector<f64>, DVector<f64>),
    /// The product of the steps' tangent maps, when tracked
    /// ([`track_jacobian`](Self::track_jacobian)).
    jacobian: Option<DMatrix<f64>>,
    /// The parameter directions `D` (`P × r`) whose sensitivities are
    /// tracked ([`track_sensitivity`](Self::track_sensitivity)).
    directions: Option<DMatrix<f64>>,
    /// `∂(q_k, p_k)/∂θ · D` (`2n × r`), when tracked.
    sensitivity: Option<DMatrix<f64>>,
    /// Each step's own derivative, when kept
    /// ([`record_tangents`](Self::record_tangents)).
    tape: Option<Vec<DMatrix<f64>>>,
}

/// `g_j` and `dg_j` at `q`, when `valid` (buffers kept between steps).
#[derive(Debug, Clone)]
struct GradientAt {
    valid: bool,
    q: DVector<f64>,
    g: f64,
    dg: DVector<f64>,
}

/// `g_j(q(α))` along the sub-step, for argmin: trial solves of size `α h`.
struct Crossing<'a, St> {
    stepper: &'a RefCell<&'a mut St>,
    a: DVector<f64>,
    pi_a: DVector<f64>,
    h: f64,
    increment: DVector<f64>,
    piece: usize,
    t: f64,
    failure: &'a RefCell<Option<StepError>>,
    evaluations: &'a RefCell<usize>,
}

impl<St: DynSubStepper> Crossing<'_, St> {
    fn g(&self, alpha: f64) -> Result<f64, StepError> {
        let mut st = self.stepper.borrow_mut();
        if alpha <= 0.0 {
            return Ok(st.system().boundary(self.piece, self.a.as_slice()));
        }
        *self.evaluations.borrow_mut() += 1;
        let guess = &self.increment * alpha;
        let q = st
            .trial_step(self.t, &self.a, &self.pi_a, alpha * self.h, &guess)?
            .b;
        Ok(st.system().boundary(self.piece, q.as_slice()))
    }
}

/// [`Crossing`] as an argmin cost function.
struct CrossingCost<'a, St>(Crossing<'a, St>);

impl<St: DynSubStepper> CostFunction for CrossingCost<'_, St> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, alpha: &f64) -> Result<f64, argmin::core::Error> {
        self.0.g(*alpha).map_err(|e| {
            let msg = e.to_string();
            *self.0.failure.borrow_mut() = Some(e);
            argmin::core::Error::msg(msg)
        })
    }
}

/// The Lagrange–Dirac steppers of the run-time core with \[VCI\] Theorem 3.1.
pub type DynLagrangeDiracImpacts<Sy> = DynImpactIntegrator<DynLagrangeDirac<Sy>, DynVciLaw>;

impl<Sy: DynSystem> DynLagrangeDiracImpacts<Sy> {
    /// Wrap a Lagrange–Dirac stepper ((+) forward, (−) backward) with the
    /// law of \[VCI\] Theorem 3.1.
    pub fn new(stepper: DynLagrangeDirac<Sy>) -> Self {
        Self::with_law(stepper, DynVciLaw::default())
    }

    /// Forward (+) integrator for `system`.
    pub fn forward(system: Sy, map: Discretization, constraint: ConstraintDiscretization) -> Self {
        Self::new(DynLagrangeDirac::plus(system, map, constraint))
    }

    /// Backward (−) integrator for `system`.
    pub fn backward(system: Sy, map: Discretization, constraint: ConstraintDiscretization) -> Self {
        Self::new(DynLagrangeDirac::minus(system, map, constraint))
    }
}

impl<St, L> DynImpactIntegrator<St, L>
where
    St: DynSubStepper,
    L: DynImpactLaw<St>,
{
    /// Wrap `stepper` with the impact law `law`.
    pub fn with_law(stepper: St, law: L) -> Self {
        Self {
            stepper,
            law,
            params: ImpactParams::default(),
            grad_cache: Vec::new(),
            suspect_work: (DVector::zeros(0), DVector::zeros(0)),
            jacobian: None,
            directions: None,
            sensitivity: None,
            tape: None,
        }
    }

    /// Track the derivatives of the flow in the system's parameters
    /// (docs/theory.md §12.4) along the columns of `directions` (`P × r`,
    /// `P =` [`DynSystem::parameter_count`]), starting from `initial`
    /// (`2n × r`: `∂(q_0, p_0)/∂θ · D`, e.g. the dependence of the initial
    /// momentum on the parameters), and the tangent map with them: every
    /// [`advance`](DynOneStep::advance) sets `S ← ∂Φ/∂x S + ∂Φ/∂θ D`, impacts
    /// included (the impact time, point and law move with `θ`). A step
    /// whose derivative is not available fails with
    /// [`StepError::Unsupported`].
    ///
    /// # Errors
    /// [`StepError::Unsupported`] when the system has no parameters to
    /// differentiate in or the shapes do not match.
    pub fn track_sensitivity(
        self,
        directions: DMatrix<f64>,
        initial: DMatrix<f64>,
    ) -> Result<Self, StepError> {
        diracvi_discrete_dirac::dynamic::check_directions(self.stepper.system(), &directions)?;
        let n = self.stepper.system().coordinate_count();
        if initial.nrows() != 2 * n || initial.ncols() != directions.ncols() {
            return Err(StepError::Unsupported(format!(
                "the initial sensitivities must be 2n × r = {} × {}, not {} × {}",
                2 * n,
                directions.ncols(),
                initial.nrows(),
                initial.ncols()
            )));
        }
        let mut out = if self.jacobian.is_some() {
            self
        } else {
            self.track_jacobian()
        };
        out.stepper.carry_sensitivity(&directions);
        out.directions = Some(directions);
        out.sensitivity = Some(initial);
        Ok(out)
    }

    /// `∂(q_k, p_k)/∂θ · D` (`2n × r`) over the steps advanced since
    /// [`track_sensitivity`](Self::track_sensitivity), or `None` when not
    /// tracked.
    pub fn sensitivity(&self) -> Option<&DMatrix<f64>> {
        self.sensitivity.as_ref()
    }

    /// Track the tangent map of the flow (docs/theory.md §12): every
    /// [`advance`](DynOneStep::advance) from now on multiplies
    /// [`jacobian`](Self::jacobian) by the exact derivative of its step,
    /// `∂(q_{k+1}, p_{k+1})/∂(q_k, p_k)`, impacts included (the discrete
    /// saltation: the impact time's and the law's derivatives). A step
    /// whose derivative is not available fails with
    /// [`StepError::Unsupported`] rather than run without it.
    pub fn track_jacobian(mut self) -> Self {
        self.stepper.carry_tangents();
        let n = self.stepper.system().coordinate_count();
        self.jacobian = Some(DMatrix::identity(2 * n, 2 * n));
        self
    }

    /// Keep each step's own derivative too, `∂(q_{k+1}, p_{k+1})/∂(q_k,
    /// p_k, θ·D)` (`2n × (2n + r)`: the tangent map, then the tracked
    /// parameter directions), impacts included: the tape a reverse
    /// (adjoint) sweep runs over (docs/theory.md §12.5), and the per-step
    /// tangents. Tracks the Jacobian when nothing is tracked yet; call it
    /// after [`track_sensitivity`](Self::track_sensitivity) to tape the
    /// parameter columns. Memory: `2n (2n + r)` numbers per step.
    pub fn record_tangents(self) -> Self {
        let mut out = if self.jacobian.is_some() {
            self
        } else {
            self.track_jacobian()
        };
        out.tape = Some(Vec::new());
        out
    }

    /// The steps' derivatives kept since
    /// [`record_tangents`](Self::record_tangents), in order (taken: the
    /// tape starts again empty), or `None` when not kept.
    pub fn take_tangents(&mut self) -> Option<Vec<DMatrix<f64>>> {
        self.tape.as_mut().map(std::mem::take)
    }

    /// `∂(q_k, p_k)/∂(q_0, p_0)` over the steps advanced since
    /// [`track_jacobian`](Self::track_jacobian) (`2n × 2n`, positions
    /// first), or `None` when not tracked.
    pub fn jacobian(&self) -> Option<&DMatrix<f64>> {
        self.jacobian.as_ref()
    }

    /// Replace the impact parameters.
    pub fn with_params(mut self, params: ImpactParams) -> Self {
        self.params = params;
        self
    }

    /// The wrapped stepper.
    pub fn stepper(&self) -> &St {
        &self.stepper
    }

    /// Direction of time.
    pub fn direction(&self) -> Direction {
        self.stepper.direction()
    }

    /// Whether `q` is where the last sub-step ended (see the static
    /// integrator's `continues_from`): any other start is checked against
    /// the admissible set.
    fn continues_from(&self, q: &DVector<f64>) -> bool {
        !self.grad_cache.is_empty() && self.grad_cache.iter().all(|c| c.valid && c.q == *q)
    }

    /// Pieces that may be crossed on the sub-step `a → b`: negative at `b`,
    /// or dipping below zero inside by the cubic Hermite estimate; and
    /// whether a wall is within [`PATH_REACH`] step lengths of either end
    /// (then the discrete path is sampled, [`path_dip`](Self::path_dip)).
    fn suspects(
        &mut self,
        a: &DVector<f64>,
        b: &DVector<f64>,
    ) -> Result<(Vec<usize>, bool), GeometryError> {
        let sys = self.stepper.system();
        let mut out = Vec::new();
        let mut near = false;
        let n = a.len();
        let count = sys.boundary_count();
        if self.grad_cache.len() != count || self.suspect_work.0.len() != n {
            let fresh = GradientAt {
                valid: false,
                q: DVector::zeros(n),
                g: 0.0,
                dg: DVector::zeros(n),
            };
            self.grad_cache = vec![fresh; count];
            self.suspect_work = (DVector::zeros(n), DVector::zeros(n));
        }
        let (d, dg0) = &mut self.suspect_work;
        d.copy_from(b);
        *d -= a;
        let d = &*d;
        for j in 0..count {
            let cache = &mut self.grad_cache[j];
            // g and dg at a are usually those computed at the previous step's b.
            let g0 = if cache.valid && cache.q == *a {
                dg0.copy_from(&cache.dg);
                cache.g
            } else {
                boundary_gradient_into(sys, j, a.as_slice(), dg0.as_mut_slice())?
            };
            cache.valid = false;
            let g1 = boundary_gradient_into(sys, j, b.as_slice(), cache.dg.as_mut_slice())?;
            cache.q.copy_from(b);
            cache.g = g1;
            cache.valid = true;
            let dg1 = &cache.dg;
            let dg0 = &*dg0;
            // Round-off level of g at b: touching to within it is not a crossing.
            let eps_g = touch_band_slice(g1, dg1.as_slice(), b.as_slice());
            if g1 < -eps_g {
                out.push(j);
                continue;
            }
            // A dip below 0 takes g down by g0 and back up by g1: only a
            // path long enough can (a piece the sub-step starts on is left
            // to §4.3's test at α → 0).
            let reach = PATH_REACH * dg0.norm().max(dg1.norm()) * d.norm();
            near |= g0 > touch_band_slice(g0, dg0.as_slice(), a.as_slice()) && g0 + g1 < reach;
            let (s0, s1) = (dg0.dot(d), dg1.dot(d));
            // Hermite cubic p(τ) with p(0)=g0, p(1)=g1, p'(0)=s0, p'(1)=s1.
            if s0 < 0.0 && s1 > 0.0 {
                let p = |t: f64| {
                    let (t2, t3) = (t * t, t * t * t);
                    (2.0 * t3 - 3.0 * t2 + 1.0) * g0
                        + (t3 - 2.0 * t2 + t) * s0
                        + (-2.0 * t3 + 3.0 * t2) * g1
                        + (t3 - t2) * s1
                };
                if (1..16).any(|i| p(i as f64 / 16.0) < -eps_g) {
                    out.push(j);
                }
            }
        }
        Ok((out, near))
    }

    /// The first point of the discrete path of the sub-step from `(a, π_a)`
    /// of size `h` (increment `d`) found inside a piece: `(piece, α)`. Both
    /// ends of the sub-step are admissible, but a large step can pass a wall
    /// and come back out (tunnelling). `q̃(α)` is bisected where a dip
    /// cannot be excluded ([`crate::path`]; trial solves, side-effect free).
    #[allow(clippy::too_many_arguments)]
    fn path_dip(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        d: &DVector<f64>,
        stats: &mut StepStats,
    ) -> Result<Option<(usize, f64)>, ImpactError> {
        let count = self.stepper.system().boundary_count();
        let n = a.len();
        let geo = |source| ImpactError::Geometry { t, source };
        // The path at α, or the piece it is inside.
        let at = |sys: &St::System, alpha: f64, q: &DVector<f64>| {
            let mut p = PathPoint {
                alpha,
                q: q.as_slice().to_vec(),
                g: Vec::with_capacity(count),
                dg: vec![0.0; count * n],
            };
            for j in 0..count {
                let dg = &mut p.dg[j * n..(j + 1) * n];
                let g = boundary_gradient_into(sys, j, q.as_slice(), dg).map_err(geo)?;
                if alpha > 0.0 && g < -touch_band_slice(g, dg, q.as_slice()) {
                    return Ok(Sample::Inside(j));
                }
                p.g.push(g);
            }
            Ok(Sample::Outside(p))
        };
        crate::path::search(|alpha| {
            let b = if alpha <= 0.0 {
                a.clone()
            } else if alpha >= 1.0 {
                a + d
            } else {
                stats.root_iterations += 1;
                self.stepper
                    .trial_step(t, a, pi_a, alpha * h, &(d * alpha))?
                    .b
            };
            at(self.stepper.system(), alpha, &b)
        })
    }

    /// The first crossing on the sub-step from `(a, π_a)` of size `h`:
    /// `(α, piece)`, or `None` when no suspect piece really crosses.
    #[allow(clippy::too_many_arguments)]
    fn first_crossing(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        d: &DVector<f64>,
        suspects: &[usize],
        just_hit: Option<usize>,
        inside_at: Option<f64>,
        stats: &mut StepStats,
    ) -> Result<Option<(f64, usize)>, ImpactError> {
        let samples = self.params.bracket_samples.max(1);
        let failure = RefCell::new(None);
        let evaluations = RefCell::new(0);
        let cell = RefCell::new(&mut self.stepper);
        let mut best: Option<(f64, usize)> = None;
        for &piece in suspects {
            let cr = Crossing {
                stepper: &cell,
                a: a.clone(),
                pi_a: pi_a.clone(),
                h,
                increment: d.clone(),
                piece,
                t,
                failure: &failure,
                evaluations: &evaluations,
            };
            // Search up to the first crossing found so far, or to a path
            // point known to be inside.
            let upper = best.map_or(inside_at.unwrap_or(1.0), |(al, _)| al);
            // Bracket the first entry into g < 0 by sampling (0, upper]. A
            // piece the sub-step starts on (just hit, or touching to
            // round-off) only counts once the path has left it (g > 0).
            let (g_a, dg_a) = boundary_gradient_dyn(cell.borrow().system(), piece, a)
                .map_err(|source| ImpactError::Geometry { t, source })?;
            // Round-off level of g: values within it are "on the surface".
            let eps_g = touch_band_slice(g_a, dg_a.as_slice(), a.as_slice());
            let starts_on = just_hit == Some(piece) || g_a <= eps_g;
            let mut lo = if starts_on { None } else { Some(0.0) };
            let mut bracket = None;
            // A sub-step starting on the piece whose path is inside at the
            // first sample with a clear sign: it enters at (or near) α = 0.
            let mut enters_early = None;
            for i in 1..=samples {
                let hi = upper * i as f64 / samples as f64;
                let g_hi = cr.g(hi)?;
                if g_hi < -eps_g {
                    match lo {
                        Some(l) => bracket = Some((l, hi)),
                        None => enters_early = Some(hi),
                    }
                    break;
                } else if g_hi > eps_g {
                    lo = Some(hi);
                }
            }
            if let Some(first_inside) = enters_early {
                // Halve towards α = 0 until the path is outside: a crossing
                // after a short excursion; otherwise it enters at α = 0.
                let floor = self.params.min_fraction.min(0.25);
                let mut inside = first_inside;
                let mut alpha = first_inside / 2.0;
                while alpha >= floor {
                    if cr.g(alpha)? > eps_g {
                        bracket = Some((alpha, inside));
                        break;
                    }
                    inside = alpha;
                    alpha /= 2.0;
                }
                if bracket.is_none() {
                    let resting = |normal_speed: f64| ImpactError::RestingContact {
                        t,
                        piece,
                        normal_speed,
                    };
                    if just_hit == Some(piece) {
                        // Reflected here, and the path goes straight back in.
                        return Err(resting(0.0));
                    }
                    // g(α) ≈ c1 α + c2 α² near α = 0: c1 is the normal
                    // velocity times the sub-step, c2 the push of the forces.
                    // An entry carried by the forces alone is resting contact.
                    let a1 = RESTING_PROBE.min(first_inside / 4.0);
                    let (g1, g2) = (cr.g(a1)?, cr.g(2.0 * a1)?);
                    let c1 = (4.0 * g1 - g2) / (2.0 * a1);
                    let c2 = (g2 - 2.0 * g1) / (2.0 * a1 * a1);
                    if c1 >= -RESTING_RATIO * c2.abs() {
                        return Err(resting(c1.abs() / h.abs()));
                    }
                    if best.is_none_or(|(al, _)| al > 0.0) {
                        best = Some((0.0, piece));
                    }
                    continue;
                }
            }
            let Some((lo, hi)) = bracket else {
                continue;
            };
            let cost = CrossingCost::<St>(cr);
            let res = crate::brent::root(
                &|alpha| cost.cost(&alpha),
                lo,
                hi,
                self.params.alpha_tolerance,
                self.params.max_root_iterations,
            );
            let reason = |r: String| ImpactError::ImpactTime {
                t,
                piece,
                reason: r,
            };
            let res = match res {
                Ok(r) => r,
                Err(e) => {
                    if let Some(se) = failure.borrow_mut().take() {
                        return Err(se.into());
                    }
                    return Err(reason(e.to_string()));
                }
            };
            let state = &res;
            stats.root_iterations += state.get_iter() as usize;
            if state.get_termination_reason() != Some(&TerminationReason::SolverConverged) {
                return Err(reason(format!(
                    "BrentRoot stopped without converging ({:?})",
                    state.get_termination_reason()
                )));
            }
            let alpha = *state
                .get_best_param()
                .or(state.get_param())
                .ok_or_else(|| reason("no root".into()))?;
            if best.is_none_or(|(al, _)| alpha < al) {
                best = Some((alpha, piece));
            }
        }
        stats.root_iterations += *evaluations.borrow();
        Ok(best)
    }
}

impl<St, L> DynOneStep for DynImpactIntegrator<St, L>
where
    St: DynSubStepper,
    L: DynImpactLaw<St>,
{
    type Event = DynImpactEvent;
    type Error = ImpactError;

    fn advance(
        &mut self,
        from: &DynState,
        h: f64,
        events: &mut Vec<DynImpactEvent>,
    ) -> Result<DynStepOutput, ImpactError> {
        let sign = self.stepper.direction().sign();
        let t0 = from.t;
        let system = self.stepper.system();
        if system.boundary_count() > 0 && system.time_dependent() {
            // The impact law matches discrete energies through `∂L_d/∂h`,
            // which would have to see the time of the sub-steps move too.
            return Err(ImpactError::Step(StepError::Unsupported(
                "impacts of a system whose Lagrangian depends on time are not supported yet \
                 (the discrete energy of the impact law needs an autonomous Lagrangian)"
                    .to_owned(),
            )));
        }
        if !self.continues_from(&from.q)
            && let Some((piece, g)) = violated_piece_dyn(self.stepper.system(), &from.q)
                .map_err(|source| ImpactError::Geometry { t: t0, source })?
        {
            return Err(ImpactError::Inadmissible { t: t0, piece, g });
        }
        // Borrowed until an impact replaces them (no copy per smooth step).
        let mut a = Cow::Borrowed(&from.q);
        let mut pi_a = if self.stepper.direction() == Direction::Forward {
            Cow::Borrowed(&from.p)
        } else {
            Cow::Owned(&from.p * sign)
        };
        let mut hr = h;
        let mut elapsed = 0.0;
        let mut stats = StepStats::default();
        let mut residual_max: f64 = 0.0;
        let mut just_hit = None;
        // ∂(a, π_a, h_r)/∂(q_k, π_k) of the current sub-step's data, when
        // the tangent map is tracked.
        let n = a.len();
        let mut carry = self.jacobian.as_ref().map(|_| self.start_carry(n));
        for impacts in 0..=self.params.max_impacts_per_step {
            let t_sub = t0 + sign * elapsed;
            let sub = self.stepper.sub_step(t_sub, &a, &pi_a, hr)?;
            stats.absorb(&sub.stats);
            let geo = |source| ImpactError::Geometry { t: t_sub, source };
            let (suspects, near) = self.suspects(&a, &sub.b).map_err(geo)?;
            let mut crossing = if suspects.is_empty() {
                None
            } else {
                self.first_crossing(
                    t_sub, &a, &pi_a, hr, &sub.d, &suspects, just_hit, None, &mut stats,
                )?
            };
            // No crossing found, but a wall is near or the end-point estimates
            // suspected one: sample the discrete path; a dip into a piece
            // between admissible ends is searched before the first point
            // found inside (docs/theory.md §4.2).
            if crossing.is_none()
                && (near || !suspects.is_empty())
                && let Some((piece, alpha)) =
                    self.path_dip(t_sub, &a, &pi_a, hr, &sub.d, &mut stats)?
            {
                crossing = self.first_crossing(
                    t_sub,
                    &a,
                    &pi_a,
                    hr,
                    &sub.d,
                    &[piece],
                    just_hit,
                    Some(alpha),
                    &mut stats,
                )?;
                if crossing.is_none() {
                    return Err(ImpactError::Tunnelling {
                        t: t_sub,
                        piece,
                        alpha,
                    });
                }
            }
            let Some((alpha, piece)) = crossing else {
                let (energy, res) = self.stepper.measures(t_sub, &a, &sub, hr).map_err(geo)?;
                residual_max = residual_max.max(res);
                if let Some(c) = &carry {
                    self.absorb_smooth(t_sub, &a, &sub, hr, c, sign)?;
                }
                return Ok(DynStepOutput {
                    to: DynState {
                        t: t0 + sign * h,
                        q: sub.b,
                        p: sub.pi_b * sign,
                    },
                    energy,
                    constraint_residual: residual_max,
                    stats,
                });
            };
            if impacts == self.params.max_impacts_per_step {
                break;
            }
            // The impact point and the momentum that reaches it. An impact
            // closer than `min_fraction` to either end of the sub-step is
            // moved there, so that neither sub-step has an empty increment.
            let delta = self.params.min_fraction.min(0.25);
            let clamped = alpha < delta || alpha > 1.0 - delta;
            let alpha = alpha.clamp(delta, 1.0 - delta);
            let h1 = alpha * hr;
            let h2 = (1.0 - alpha) * hr;
            let before = self
                .stepper
                .trial_step(t_sub, &a, &pi_a, h1, &(&sub.d * alpha))?;
            stats.absorb(&before.stats);
            let q_imp = before.b.clone();
            let t_imp = t_sub + sign * h1;
            let geo = |source| ImpactError::Geometry { t: t_imp, source };
            let frame = DynBoundaryFrame::new(self.stepper.system(), piece, &q_imp).map_err(geo)?;
            let (_, res1) = self.stepper.measures(t_sub, &a, &before, h1).map_err(geo)?;
            residual_max = residual_max.max(res1);
            let site = DynImpactSite {
                t: t_imp,
                a: a.clone().into_owned(),
                pi_a: pi_a.clone().into_owned(),
                h1,
                h2,
                before: &before,
                frame: &frame,
                pass_through: &sub.b - &q_imp,
                newton: self.params.newton,
            };
            let rebound = self.law.rebound(&mut self.stepper, &site)?;
            stats.post_impact_iterations += rebound.iterations;
            if let Some(c) = &mut carry {
                *c = self.impact_carry(t_sub, &site, &rebound, c, clamped.then_some(alpha))?;
            }
            events.push(DynImpactEvent {
                step: 0,
                alpha: (elapsed + h1) / h,
                t: t_imp,
                q: q_imp.clone(),
                piece,
                p_before: &before.pi_b * sign,
                p_after: (&rebound.pi_after_raw - &rebound.after.reaction) * sign,
                p_after_raw: &rebound.pi_after_raw * sign,
                energy_before: rebound.energy_before,
                energy_after: rebound.energy_after,
                grazing: rebound.grazing,
            });
            self.stepper.reset_warm_start();
            a = Cow::Owned(q_imp);
            pi_a = Cow::Owned(rebound.pi_after_raw.clone());
            elapsed += h1;
            hr = h2;
            just_hit = Some(piece);
        }
        Err(ImpactError::TooManyImpacts {
            t: t0,
            max: self.params.max_impacts_per_step,
        })
    }

    /// The stepper's stages: of a step with an impact they include the
    /// sub-steps the impact cut short, so a reader of stages skips those
    /// steps (their events say which).
    fn drain_stages(&mut self, out: &mut Vec<DynStage>) {
        self.stepper.drain_stages(out);
    }
}
