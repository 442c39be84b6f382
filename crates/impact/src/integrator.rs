//! The impact integrator.

use crate::elastic::ContinuousElasticLaw;
use crate::hamiltonian_law::HamiltonianLaw;
use crate::law::{ImpactLaw, ImpactSite};
use crate::path::{PathPoint, Sample};
use crate::vci::VciLaw;
use argmin::core::{CostFunction, State as _, TerminationReason};
use diracvi_discrete_dirac::newton::NewtonParams;
use diracvi_discrete_dirac::trajectory::StepOutput;
use diracvi_discrete_dirac::{
    Composed, Composition, Direction, DiscreteHamiltonian, LagrangeDirac, NonholonomicHamiltonian,
    OneStep, State, StepError, StepEvent, StepStats, SubStepper, SymplecticEuler,
};
use diracvi_geometry::boundary::{boundary_gradient, touch_band, violated_piece};
use diracvi_geometry::{
    BoundaryFrame, ConstraintDiscretization, DiscretizationMap, GeometryError, System,
};
use nalgebra::SVector;
use serde::Serialize;
use std::cell::RefCell;
use thiserror::Error;

/// Impact-time fraction at which the normal velocity of a path entering a
/// piece at `α = 0` is probed (with `2·RESTING_PROBE`): small enough that
/// the cubic term of `g(α)` is negligible, large enough that round-off in
/// `g` is (about `1e-16 / 1e-6` of the scale of `g`).
pub(crate) const RESTING_PROBE: f64 = 1e-6;

/// A path entering a piece at `α = 0` is resting contact when its normal
/// velocity term `c1` (over the sub-step) is below `RESTING_RATIO` times the
/// force term `c2`: e.g. `|v_n| < 5·10⁻⁶ · g h` for a particle on a floor.
pub(crate) const RESTING_RATIO: f64 = 1e-5;

/// A sub-step whose end points are admissible is still checked along its
/// discrete path (docs/theory.md §4.2) when `g_j(a) + g_j(b)`, the variation a
/// dip would need, is below this many step lengths `|dg_j|·|d|`.
pub(crate) const PATH_REACH: f64 = 2.0;

/// Parameters of impact handling.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ImpactParams {
    /// Impacts allowed inside one grid step before [`ImpactError::TooManyImpacts`].
    pub max_impacts_per_step: usize,
    /// Absolute tolerance on the impact-time fraction `α` (BrentRoot).
    pub alpha_tolerance: f64,
    /// Iteration bound of the root finder.
    pub max_root_iterations: u64,
    /// Samples of `g_j(q̃(α))` used to bracket the first crossing.
    pub bracket_samples: usize,
    /// Smallest fraction of a sub-step on either side of an impact (default
    /// 1e-9): an impact closer to a grid time is moved by at most this
    /// fraction of the step, so that neither sub-step is empty. (The
    /// sub-steps solve for their increments, so a short sub-step loses no
    /// digits in its velocity; the shift, `1e-9 h`, is far below the
    /// discretization error.)
    pub min_fraction: f64,
    /// Newton parameters of the post-impact solve.
    pub newton: NewtonParams,
}

impl Default for ImpactParams {
    fn default() -> Self {
        Self {
            max_impacts_per_step: 16,
            alpha_tolerance: 1e-15,
            max_root_iterations: 200,
            bracket_samples: 4,
            min_fraction: 1e-9,
            newton: NewtonParams::default().with_polish(2),
        }
    }
}

impl ImpactParams {
    /// With at most `n` impacts per grid step.
    pub fn with_max_impacts_per_step(mut self, n: usize) -> Self {
        self.max_impacts_per_step = n;
        self
    }

    /// With `n` samples to bracket the first crossing.
    pub fn with_bracket_samples(mut self, n: usize) -> Self {
        self.bracket_samples = n;
        self
    }
}

/// One impact, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ImpactEvent<const N: usize> {
    /// Index `k` of the grid step containing the impact (the driver labels
    /// the events of each step, [`StepEvent`]).
    pub step: usize,
    /// Impact time as a fraction of the grid step, from its start.
    pub alpha: f64,
    /// Impact time.
    pub t: f64,
    /// Impact point `q̃` on the boundary.
    pub q: SVector<f64, N>,
    /// Boundary piece hit.
    pub piece: usize,
    /// Momentum at `q̃` before the impact (Lagrange–Dirac:
    /// `D2 L_d(q_k, q̃, α h)`; Hamiltonian: the partial step's end momentum).
    pub p_before: SVector<f64, N>,
    /// Momentum at `q̃` after the impact, consistent with the post-impact
    /// velocity (`∂L/∂v` to the order of the discretization) and comparable
    /// with `p_before`: `p_after_raw` less the post-impact sub-step's
    /// constraint reaction `A(q̃)ᵀ λ̃` (Lagrange–Dirac: `−D1 L_d(q̃, ṽ, (1−α)h)`).
    pub p_after: SVector<f64, N>,
    /// The \[VCI\] Theorem 3.1 momentum at `q̃` after the impact,
    /// `−D1 L_d(q̃, ṽ, (1−α)h) + A(q̃)ᵀ λ̃`, from which the rest of the step
    /// continues. The Lagrange–Dirac momentum is only defined up to
    /// `A(q)ᵀ μ` (adding it shifts the multiplier of the next step), and
    /// this one carries the impulsive constraint reaction `A(q̃)ᵀ λ̃`;
    /// equal to `p_after` when the system has no constraints.
    pub p_after_raw: SVector<f64, N>,
    /// Discrete energy before, `−D3 L_d(q_k, q̃, α h)`.
    pub energy_before: f64,
    /// Discrete energy after, `−D3 L_d(q̃, ṽ, (1−α) h)`.
    pub energy_after: f64,
    /// A grazing impact: the discrete energy balance had no reflected root
    /// (normal kinetic energy below the O(h²) mismatch of the sub-steps'
    /// discrete energies), so the energy mismatch was minimised instead and
    /// `energy_after` differs from `energy_before` by that mismatch.
    pub grazing: bool,
}

impl<const N: usize> StepEvent for ImpactEvent<N> {
    fn set_step(&mut self, step: usize) {
        self.step = step;
    }
}

/// Why an impact step failed. Every variant names its time (`at t = …`);
/// the driver wraps it with the step index in a
/// [`Located`](diracvi_discrete_dirac::Located).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ImpactError {
    /// The smooth step failed.
    #[error(transparent)]
    Step(#[from] StepError),
    /// More impacts in one step than allowed (Zeno behaviour or chatter).
    #[error("at t = {t}: more than {max} impacts in one step (Zeno/chatter); reduce h")]
    TooManyImpacts {
        /// Time of the step start.
        t: f64,
        /// The bound.
        max: usize,
    },
    /// The discrete path of a step dips into a boundary piece between two
    /// admissible points (the step passes through a wall and comes back
    /// out), and no crossing could be located on it: the step is too large
    /// for the motion near the wall (docs/theory.md §4.2).
    #[error(
        "at t = {t}: the step passes through boundary piece {piece} (its path is inside at α = {alpha}) and the crossing cannot be located; reduce h"
    )]
    Tunnelling {
        /// Time of the sub-step start.
        t: f64,
        /// The boundary piece.
        piece: usize,
        /// A fraction of the sub-step at which the path is inside.
        alpha: f64,
    },
    /// The path presses into a boundary piece it touches with no normal
    /// velocity to reflect: resting (or sliding) contact, which elastic
    /// impacts do not model (docs/theory.md §4). Raised when a sub-step
    /// starting on the piece enters it at once and either the normal
    /// velocity is zero to round-off (a force pushes the path in) or an
    /// impact has just reflected it there.
    #[error(
        "at t = {t}: resting contact on boundary piece {piece}: the path presses into it with no normal velocity to reflect; elastic impacts do not model resting contact: start off the boundary or moving away from it"
    )]
    RestingContact {
        /// Time of the sub-step start.
        t: f64,
        /// Boundary piece.
        piece: usize,
        /// Estimated normal speed `|d g_j/dt|` at the start of the sub-step
        /// (0 after an impact that left no normal velocity).
        normal_speed: f64,
    },
    /// The impact-time fraction could not be located.
    #[error("at t = {t}: could not locate the impact on boundary piece {piece}: {reason}")]
    ImpactTime {
        /// Time of the step start.
        t: f64,
        /// Boundary piece.
        piece: usize,
        /// What went wrong.
        reason: String,
    },
    /// The post-impact equations could not be solved (or only the
    /// pass-through root was found).
    #[error("at t = {t}: post-impact solve failed on piece {piece}: {reason}")]
    PostImpact {
        /// Impact time.
        t: f64,
        /// Boundary piece.
        piece: usize,
        /// What went wrong.
        reason: String,
    },
    /// A boundary crossing with the [`RejectCrossing`](crate::RejectCrossing)
    /// law.
    #[error("at t = {t}: the path crosses boundary piece {piece}, and this run rejects impacts")]
    Crossing {
        /// Time of the crossing.
        t: f64,
        /// Boundary piece.
        piece: usize,
    },
    /// The state at the start of a step is outside the admissible set.
    #[error("at t = {t}: state outside the admissible set (g_{piece} = {g:e})")]
    Inadmissible {
        /// Time.
        t: f64,
        /// Boundary piece.
        piece: usize,
        /// Its value.
        g: f64,
    },
    /// A geometric evaluation failed.
    #[error("at t = {t}: {source}")]
    Geometry {
        /// Time.
        t: f64,
        /// The underlying error.
        #[source]
        source: GeometryError,
    },
}

impl ImpactError {
    /// The time the error names, where it has one.
    pub fn time(&self) -> Option<f64> {
        match self {
            ImpactError::Step(s) => s.time(),
            ImpactError::TooManyImpacts { t, .. }
            | ImpactError::Tunnelling { t, .. }
            | ImpactError::RestingContact { t, .. }
            | ImpactError::ImpactTime { t, .. }
            | ImpactError::PostImpact { t, .. }
            | ImpactError::Crossing { t, .. }
            | ImpactError::Inadmissible { t, .. }
            | ImpactError::Geometry { t, .. } => Some(*t),
        }
    }
}

/// A one-step map with elastic impacts: a [`SubStepper`] (the (+) stepper
/// forward in time, the (−) stepper backward) and the [`ImpactLaw`] of its
/// family.
#[derive(Debug, Clone)]
pub struct ImpactIntegrator<St, L, const N: usize, const M: usize> {
    stepper: St,
    law: L,
    params: ImpactParams,
    /// `(q, g_j(q), dg_j(q))` at the end of the last sub-step, per piece.
    grad_cache: Vec<Option<GradientAt<N>>>,
}

/// The Lagrange–Dirac steppers with the impact law of \[VCI\] Theorem 3.1.
pub type LagrangeDiracImpacts<Sy, Dm, const N: usize, const M: usize> =
    ImpactIntegrator<LagrangeDirac<Sy, Dm, N, M>, VciLaw, N, M>;

/// The nonholonomic Hamiltonian steppers with their impact law.
pub type HamiltonianImpacts<Sy, Dm, Hd, const N: usize, const M: usize> =
    ImpactIntegrator<NonholonomicHamiltonian<Sy, Dm, Hd, N, M>, HamiltonianLaw, N, M>;

type GradientAt<const N: usize> = (SVector<f64, N>, f64, SVector<f64, N>);

/// A sampled point `q̃(α)` of a sub-step's discrete path with the values
/// `g_j(q(α))` along the sub-step, for argmin: trial solves of size `α h`.
struct Crossing<'a, St, const N: usize> {
    stepper: &'a RefCell<&'a mut St>,
    a: SVector<f64, N>,
    pi_a: SVector<f64, N>,
    h: f64,
    increment: SVector<f64, N>,
    piece: usize,
    t: f64,
    failure: &'a RefCell<Option<StepError>>,
    evaluations: &'a RefCell<usize>,
}

impl<St, const N: usize> Crossing<'_, St, N> {
    fn g<const M: usize>(&self, alpha: f64) -> Result<f64, StepError>
    where
        St: SubStepper<N, M>,
    {
        let mut st = self.stepper.borrow_mut();
        if alpha <= 0.0 {
            return Ok(st.system().boundary(self.piece, &self.a));
        }
        *self.evaluations.borrow_mut() += 1;
        let guess = self.increment * alpha;
        let q = st
            .trial_step(self.t, &self.a, &self.pi_a, alpha * self.h, &guess)?
            .b;
        Ok(st.system().boundary(self.piece, &q))
    }
}

/// [`Crossing`] for one system size `M` (argmin needs a concrete impl).
struct CrossingCost<'a, St, const N: usize, const M: usize>(Crossing<'a, St, N>);

impl<St, const N: usize, const M: usize> CostFunction for CrossingCost<'_, St, N, M>
where
    St: SubStepper<N, M>,
{
    type Param = f64;
    type Output = f64;
    fn cost(&self, alpha: &f64) -> Result<f64, argmin::core::Error> {
        self.0.g::<M>(*alpha).map_err(|e| {
            let msg = e.to_string();
            *self.0.failure.borrow_mut() = Some(e);
            argmin::core::Error::msg(msg)
        })
    }
}

impl<Sy, Dm, const N: usize, const M: usize> LagrangeDiracImpacts<Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    /// Wrap a Lagrange–Dirac stepper ((+) integrates forward, (−) backward)
    /// with the law of \[VCI\] Theorem 3.1.
    pub fn new(stepper: LagrangeDirac<Sy, Dm, N, M>) -> Self {
        Self::with_law(stepper, VciLaw::default())
    }

    /// Forward (+) integrator for `system`.
    pub fn forward(system: Sy, map: Dm, constraint: ConstraintDiscretization) -> Self {
        Self::new(LagrangeDirac::plus(system, map, constraint))
    }

    /// Backward (−) integrator for `system`.
    pub fn backward(system: Sy, map: Dm, constraint: ConstraintDiscretization) -> Self {
        Self::new(LagrangeDirac::minus(system, map, constraint))
    }
}

/// The composed (order 4 or 6) symmetric Lagrange–Dirac integrator with the
/// continuous elastic law (docs/theory.md §9).
pub type ComposedImpacts<Sy, Dm, const N: usize, const M: usize> =
    ImpactIntegrator<Composed<LagrangeDirac<Sy, Dm, N, M>, N, M>, ContinuousElasticLaw, N, M>;

impl<Sy, Dm, const N: usize, const M: usize> ComposedImpacts<Sy, Dm, N, M>
where
    Sy: System<N, M> + Clone,
    Dm: DiscretizationMap<N> + Clone,
{
    /// The composition `scheme` of the symmetric Lagrange–Dirac step
    /// ([`Composed::lagrange_dirac`]) in `direction`, with impacts located on
    /// the composed path and resolved by [`ContinuousElasticLaw`]. Use the
    /// midpoint `L_d` and the midpoint constraint: only a self-adjoint basic
    /// step gains order by composition.
    pub fn composed(
        system: Sy,
        map: Dm,
        constraint: ConstraintDiscretization,
        direction: Direction,
        scheme: Composition,
    ) -> Self {
        Self::with_law(
            Composed::lagrange_dirac(system, map, constraint, direction, scheme),
            ContinuousElasticLaw,
        )
    }
}

impl<Sy, Dm, Hd, const N: usize, const M: usize> HamiltonianImpacts<Sy, Dm, Hd, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
    Hd: DiscreteHamiltonian<Sy, N, M>,
{
    /// Wrap a nonholonomic Hamiltonian stepper ((+) forward, (−) backward)
    /// with its impact law ([`HamiltonianLaw`]).
    pub fn hamiltonian(stepper: NonholonomicHamiltonian<Sy, Dm, Hd, N, M>) -> Self {
        Self::with_law(stepper, HamiltonianLaw)
    }
}

impl<Sy, Dm, const N: usize, const M: usize> HamiltonianImpacts<Sy, Dm, SymplecticEuler, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    /// The symplectic-Euler Hamiltonian integrator with impacts for
    /// `system`, in `direction`.
    pub fn symplectic_euler(
        system: Sy,
        map: Dm,
        constraint: ConstraintDiscretization,
        direction: Direction,
    ) -> Self {
        Self::hamiltonian(NonholonomicHamiltonian::new(
            system,
            map,
            constraint,
            SymplecticEuler,
            direction,
        ))
    }
}

impl<St, L, const N: usize, const M: usize> ImpactIntegrator<St, L, N, M>
where
    St: SubStepper<N, M>,
    L: ImpactLaw<St, N, M>,
{
    /// Wrap `stepper` with the impact law `law` (e.g.
    /// [`RejectCrossing`](crate::RejectCrossing) to forbid impacts).
    pub fn with_law(stepper: St, law: L) -> Self {
        Self {
            stepper,
            law,
            params: ImpactParams::default(),
            grad_cache: Vec::new(),
        }
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

    /// Whether `q` is where the last sub-step ended: a start the integrator
    /// left admissible (it resolved every crossing). Any other start (the
    /// first step of a run) is checked against the admissible set.
    fn continues_from(&self, q: &SVector<f64, N>) -> bool {
        !self.grad_cache.is_empty()
            && self
                .grad_cache
                .iter()
                .all(|c| c.is_some_and(|(end, _, _)| end == *q))
    }

    /// Pieces that may be crossed on the sub-step `a → b`: negative at `b`,
    /// or dipping below zero inside by the cubic Hermite estimate; and
    /// whether a wall is within [`PATH_REACH`] step lengths of either end
    /// (then the discrete path is sampled, [`path_dip`](Self::path_dip)).
    fn suspects(
        &mut self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
    ) -> Result<(Vec<usize>, bool), GeometryError> {
        let sys = self.stepper.system();
        let mut out = Vec::new();
        let mut near = false;
        let d = b - a;
        let count = sys.boundary_count();
        if self.grad_cache.len() != count {
            self.grad_cache = vec![None; count];
        }
        for j in 0..count {
            // g and dg at a are usually those computed at the previous step's b.
            let (g0, dg0) = match self.grad_cache[j] {
                Some((q, g, dg)) if q == *a => (g, dg),
                _ => boundary_gradient(sys, j, a)?,
            };
            let (g1, dg1) = boundary_gradient(sys, j, b)?;
            self.grad_cache[j] = Some((*b, g1, dg1));
            // Round-off level of g at b: touching to within it is not a crossing.
            let eps_g = touch_band(g1, &dg1, b);
            if g1 < -eps_g {
                out.push(j);
                continue;
            }
            // A dip below 0 takes g down by g0 and back up by g1: only a
            // path long enough can (a piece the sub-step starts on is left
            // to §4.3's test at α → 0).
            let reach = PATH_REACH * dg0.norm().max(dg1.norm()) * d.norm();
            near |= g0 > touch_band(g0, &dg0, a) && g0 + g1 < reach;
            let (s0, s1) = (dg0.dot(&d), dg1.dot(&d));
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
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        d: &SVector<f64, N>,
        stats: &mut StepStats,
    ) -> Result<Option<(usize, f64)>, ImpactError> {
        let count = self.stepper.system().boundary_count();
        let geo = |source| ImpactError::Geometry { t, source };
        // The path at α, or the piece it is inside.
        let at = |sys: &St::System, alpha: f64, q: &SVector<f64, N>| {
            let mut p = PathPoint {
                alpha,
                q: q.as_slice().to_vec(),
                g: Vec::with_capacity(count),
                dg: Vec::with_capacity(count * N),
            };
            for j in 0..count {
                let (g, dg) = boundary_gradient(sys, j, q).map_err(geo)?;
                if alpha > 0.0 && g < -touch_band(g, &dg, q) {
                    return Ok(Sample::Inside(j));
                }
                p.g.push(g);
                p.dg.extend_from_slice(dg.as_slice());
            }
            Ok(Sample::Outside(p))
        };
        crate::path::search(|alpha| {
            let b = if alpha <= 0.0 {
                *a
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
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        d: &SVector<f64, N>,
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
                a: *a,
                pi_a: *pi_a,
                h,
                increment: *d,
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
            let (g_a, dg_a) = boundary_gradient(cell.borrow().system(), piece, a)
                .map_err(|source| ImpactError::Geometry { t, source })?;
            // Round-off level of g: values within it are "on the surface".
            let eps_g = touch_band(g_a, &dg_a, a);
            let starts_on = just_hit == Some(piece) || g_a <= eps_g;
            let mut lo = if starts_on { None } else { Some(0.0) };
            let mut bracket = None;
            // A sub-step starting on the piece whose path is inside at the
            // first sample with a clear sign: it enters at (or near) α = 0.
            let mut enters_early = None;
            for i in 1..=samples {
                let hi = upper * i as f64 / samples as f64;
                let g_hi = cr.g::<M>(hi)?;
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
                    if cr.g::<M>(alpha)? > eps_g {
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
                    let (g1, g2) = (cr.g::<M>(a1)?, cr.g::<M>(2.0 * a1)?);
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
            let cost = CrossingCost::<St, N, M>(cr);
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

impl<St, L, const N: usize, const M: usize> OneStep<N> for ImpactIntegrator<St, L, N, M>
where
    St: SubStepper<N, M>,
    L: ImpactLaw<St, N, M>,
{
    type Event = ImpactEvent<N>;
    type Error = ImpactError;

    fn advance(
        &mut self,
        from: &State<N>,
        h: f64,
        events: &mut Vec<ImpactEvent<N>>,
    ) -> Result<StepOutput<N>, ImpactError> {
        let sign = self.stepper.direction().sign();
        let t0 = from.t;
        if !self.continues_from(&from.q)
            && let Some((piece, g)) = violated_piece(self.stepper.system(), &from.q)
                .map_err(|source| ImpactError::Geometry { t: t0, source })?
        {
            return Err(ImpactError::Inadmissible { t: t0, piece, g });
        }
        let mut a = from.q;
        let mut pi_a = from.p * sign;
        let mut hr = h;
        let mut elapsed = 0.0;
        let mut stats = StepStats::default();
        let mut residual_max: f64 = 0.0;
        let mut just_hit = None;
        for impacts in 0..=self.params.max_impacts_per_step {
            let t_sub = t0 + sign * elapsed;
            let sub = self.stepper.sub_step(t_sub, &a, &pi_a, hr)?;
            stats.absorb(&sub.stats);
            let b = sub.b;
            let geo = |source| ImpactError::Geometry { t: t_sub, source };
            let (suspects, near) = self.suspects(&a, &b).map_err(geo)?;
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
                let (energy, res) = self.stepper.measures(&a, &sub, hr).map_err(geo)?;
                residual_max = residual_max.max(res);
                return Ok(StepOutput {
                    to: State {
                        t: t0 + sign * h,
                        q: b,
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
            let alpha = alpha.clamp(delta, 1.0 - delta);
            let h1 = alpha * hr;
            let h2 = (1.0 - alpha) * hr;
            let before = self
                .stepper
                .trial_step(t_sub, &a, &pi_a, h1, &(sub.d * alpha))?;
            stats.absorb(&before.stats);
            let q_imp = before.b;
            let t_imp = t_sub + sign * h1;
            let geo = |source| ImpactError::Geometry { t: t_imp, source };
            let frame = BoundaryFrame::new(self.stepper.system(), piece, &q_imp).map_err(geo)?;
            let (_, res1) = self.stepper.measures(&a, &before, h1).map_err(geo)?;
            residual_max = residual_max.max(res1);
            let site = ImpactSite {
                t: t_imp,
                a,
                pi_a,
                h1,
                h2,
                before: &before,
                frame: &frame,
                pass_through: b - q_imp,
                newton: self.params.newton,
            };
            let rebound = self.law.rebound(&mut self.stepper, &site)?;
            stats.post_impact_iterations += rebound.iterations;
            events.push(ImpactEvent {
                step: 0,
                alpha: (elapsed + h1) / h,
                t: t_imp,
                q: q_imp,
                piece,
                p_before: before.pi_b * sign,
                p_after: (rebound.pi_after_raw - rebound.after.reaction) * sign,
                p_after_raw: rebound.pi_after_raw * sign,
                energy_before: rebound.energy_before,
                energy_after: rebound.energy_after,
                grazing: rebound.grazing,
            });
            self.stepper.reset_warm_start();
            a = q_imp;
            pi_a = rebound.pi_after_raw;
            elapsed += h1;
            hr = h2;
            just_hit = Some(piece);
        }
        Err(ImpactError::TooManyImpacts {
            t: t0,
            max: self.params.max_impacts_per_step,
        })
    }
}
