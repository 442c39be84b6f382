//! The impact integrator.

use argmin::core::{CostFunction, Executor, State as _, TerminationReason};
use argmin::solver::brent::{BrentOpt, BrentRoot};
use diracvi_discrete_dirac::lagrange_dirac::step_measures;
use diracvi_discrete_dirac::newton::{self, NewtonFailure, NewtonParams, NewtonWorkspace};
use diracvi_discrete_dirac::trajectory::StepOutput;
use diracvi_discrete_dirac::{Direction, LagrangeDirac, OneStep, State, StepError, StepStats};
use diracvi_geometry::boundary::boundary_gradient;
use diracvi_geometry::{
    BoundaryFrame, ConstraintDiscretization, DiscreteLagrangian, DiscretizationMap, GeometryError,
    System,
};
use nalgebra::{DVector, SMatrix, SVector};
use serde::Serialize;
use std::cell::RefCell;
use thiserror::Error;

/// Relative band `|g| ≤ TOUCH_TOLERANCE · (1 + |dg|·|q| + |g|)` in which a
/// configuration counts as touching a boundary piece rather than crossing it.
pub const TOUCH_TOLERANCE: f64 = 1e-12;

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
    /// Index `k` of the grid step containing the impact.
    pub step: usize,
    /// Impact-time fraction of the (sub-)step in which it happened.
    pub alpha: f64,
    /// Impact time.
    pub t: f64,
    /// Impact point `q̃` on the boundary.
    pub q: SVector<f64, N>,
    /// Boundary piece hit.
    pub piece: usize,
    /// Momentum at `q̃` before the impact, `D2 L_d(q_k, q̃, α h)`.
    pub p_before: SVector<f64, N>,
    /// Momentum at `q̃` after the impact, `−D1 L_d(q̃, ṽ, (1−α)h)`: the
    /// momentum consistent with the post-impact velocity (`∂L/∂v` to the
    /// order of the discretization), comparable with `p_before`.
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

/// Why an impact step failed. Every variant names the step and time.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ImpactError {
    /// The smooth step failed.
    #[error(transparent)]
    Step(#[from] StepError),
    /// More impacts in one step than allowed (Zeno behaviour or chatter).
    #[error("step {step} at t = {t}: more than {max} impacts in one step (Zeno/chatter); reduce h")]
    TooManyImpacts {
        /// Step index.
        step: usize,
        /// Time of the step start.
        t: f64,
        /// The bound.
        max: usize,
    },
    /// The impact-time fraction could not be located.
    #[error(
        "step {step} at t = {t}: could not locate the impact on boundary piece {piece}: {reason}"
    )]
    ImpactTime {
        /// Step index.
        step: usize,
        /// Time of the step start.
        t: f64,
        /// Boundary piece.
        piece: usize,
        /// What went wrong.
        reason: String,
    },
    /// The post-impact equations could not be solved (or only the
    /// pass-through root was found).
    #[error("step {step} at t = {t}: post-impact solve failed on piece {piece}: {reason}")]
    PostImpact {
        /// Step index.
        step: usize,
        /// Impact time.
        t: f64,
        /// Boundary piece.
        piece: usize,
        /// What went wrong.
        reason: String,
    },
    /// The state at the start of a step is outside the admissible set.
    #[error("step {step} at t = {t}: state outside the admissible set (g_{piece} = {g:e})")]
    Inadmissible {
        /// Step index.
        step: usize,
        /// Time.
        t: f64,
        /// Boundary piece.
        piece: usize,
        /// Its value.
        g: f64,
    },
    /// A geometric evaluation failed.
    #[error("step {step} at t = {t}: {source}")]
    Geometry {
        /// Step index.
        step: usize,
        /// Time.
        t: f64,
        /// The underlying error.
        #[source]
        source: GeometryError,
    },
}

/// The (+)/(−) Lagrange–Dirac stepper with elastic impacts.
#[derive(Debug, Clone)]
pub struct ImpactIntegrator<Sy, Dm, const N: usize, const M: usize> {
    stepper: LagrangeDirac<Sy, Dm, N, M>,
    params: ImpactParams,
    ws: NewtonWorkspace,
    /// `(q, g_j(q), dg_j(q))` at the end of the last sub-step, per piece.
    grad_cache: Vec<Option<GradientAt<N>>>,
}

type GradientAt<const N: usize> = (SVector<f64, N>, f64, SVector<f64, N>);

/// `g_j(q(α))` along the sub-step, for argmin.
struct Crossing<'a, Sy, Dm, const N: usize, const M: usize> {
    stepper: &'a RefCell<&'a mut LagrangeDirac<Sy, Dm, N, M>>,
    a: SVector<f64, N>,
    pi_a: SVector<f64, N>,
    h: f64,
    increment: SVector<f64, N>,
    piece: usize,
    k: usize,
    t: f64,
    failure: &'a RefCell<Option<StepError>>,
}

impl<Sy, Dm, const N: usize, const M: usize> Crossing<'_, Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    fn point(&self, alpha: f64) -> Result<SVector<f64, N>, StepError> {
        let guess = self.increment * alpha;
        let mut st = self.stepper.borrow_mut();
        Ok(st
            .solve_oriented(self.k, self.t, &self.a, &self.pi_a, alpha * self.h, &guess)?
            .b)
    }
    fn g(&self, alpha: f64) -> Result<f64, StepError> {
        if alpha <= 0.0 {
            return Ok(self.stepper.borrow().system().boundary(self.piece, &self.a));
        }
        let q = self.point(alpha)?;
        Ok(self.stepper.borrow().system().boundary(self.piece, &q))
    }
}

impl<Sy, Dm, const N: usize, const M: usize> CostFunction for Crossing<'_, Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    type Param = f64;
    type Output = f64;
    fn cost(&self, alpha: &f64) -> Result<f64, argmin::core::Error> {
        self.g(*alpha).map_err(|e| {
            let msg = e.to_string();
            *self.failure.borrow_mut() = Some(e);
            argmin::core::Error::msg(msg)
        })
    }
}

impl<Sy, Dm, const N: usize, const M: usize> ImpactIntegrator<Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    /// Wrap a stepper: (+) integrates forward, (−) backward.
    pub fn new(stepper: LagrangeDirac<Sy, Dm, N, M>) -> Self {
        Self {
            stepper,
            params: ImpactParams::default(),
            ws: NewtonWorkspace::new(N + M),
            grad_cache: Vec::new(),
        }
    }

    /// Forward (+) integrator for `system`.
    pub fn forward(system: Sy, map: Dm, constraint: ConstraintDiscretization) -> Self {
        Self::new(LagrangeDirac::plus(system, map, constraint))
    }

    /// Backward (−) integrator for `system`.
    pub fn backward(system: Sy, map: Dm, constraint: ConstraintDiscretization) -> Self {
        Self::new(LagrangeDirac::minus(system, map, constraint))
    }

    /// Replace the impact parameters.
    pub fn with_params(mut self, params: ImpactParams) -> Self {
        self.params = params;
        self
    }

    /// The wrapped stepper.
    pub fn stepper(&self) -> &LagrangeDirac<Sy, Dm, N, M> {
        &self.stepper
    }

    /// Direction of time.
    pub fn direction(&self) -> Direction {
        self.stepper.direction()
    }

    /// `min_j g_j(q)` and its piece.
    fn worst(&self, q: &SVector<f64, N>) -> Option<(usize, f64)> {
        diracvi_geometry::min_boundary(self.stepper.system(), q)
    }

    /// Pieces that may be crossed on the sub-step `a → b`: negative at `b`,
    /// or dipping below zero inside by the cubic Hermite estimate.
    fn suspects(
        &mut self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
    ) -> Result<Vec<usize>, GeometryError> {
        let sys = self.stepper.system();
        let mut out = Vec::new();
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
            let eps_g = TOUCH_TOLERANCE * (1.0 + dg1.amax() * b.amax() + g1.abs());
            if g1 < -eps_g {
                out.push(j);
                continue;
            }
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
        Ok(out)
    }

    /// The first crossing on the sub-step from `(a, π_a)` of size `h`:
    /// `(α, piece)`, or `None` when no suspect piece really crosses.
    #[allow(clippy::too_many_arguments)]
    fn first_crossing(
        &mut self,
        k: usize,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        b: &SVector<f64, N>,
        suspects: &[usize],
        just_hit: Option<usize>,
    ) -> Result<Option<(f64, usize)>, ImpactError> {
        let samples = self.params.bracket_samples.max(1);
        let failure = RefCell::new(None);
        let cell = RefCell::new(&mut self.stepper);
        let mut best: Option<(f64, usize)> = None;
        for &piece in suspects {
            let cr = Crossing {
                stepper: &cell,
                a: *a,
                pi_a: *pi_a,
                h,
                increment: b - a,
                piece,
                k,
                t,
                failure: &failure,
            };
            let upper = best.map_or(1.0, |(al, _)| al);
            // Bracket the first entry into g < 0 by sampling (0, upper]. A
            // piece the sub-step starts on (just hit, or touching to
            // round-off) only counts once the path has left it (g > 0).
            let (g_a, dg_a) = boundary_gradient(cell.borrow().system(), piece, a)
                .map_err(|source| ImpactError::Geometry { step: k, t, source })?;
            // Round-off level of g: values within it are "on the surface".
            let eps_g = TOUCH_TOLERANCE * (1.0 + dg_a.amax() * a.amax() + g_a.abs());
            let starts_on = just_hit == Some(piece) || g_a <= eps_g;
            let mut clearly_negative = false;
            let mut lo = if starts_on { None } else { Some(0.0) };
            let mut bracket = None;
            for i in 1..=samples {
                let hi = upper * i as f64 / samples as f64;
                let g_hi = cr.g(hi)?;
                if g_hi < -eps_g {
                    clearly_negative = true;
                    if let Some(l) = lo {
                        bracket = Some((l, hi));
                        break;
                    }
                } else if g_hi > eps_g {
                    lo = Some(hi);
                }
            }
            let Some((lo, hi)) = bracket else {
                if starts_on && lo.is_none() && clearly_negative {
                    // The path never leaves the piece it starts on: chatter.
                    return Err(ImpactError::TooManyImpacts {
                        step: k,
                        t,
                        max: self.params.max_impacts_per_step,
                    });
                }
                continue;
            };
            let solver = BrentRoot::new(lo, hi, self.params.alpha_tolerance);
            let res = Executor::new(cr, solver)
                .configure(|s| s.max_iters(self.params.max_root_iterations))
                .run();
            let reason = |r: String| ImpactError::ImpactTime {
                step: k,
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
            let state = res.state();
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
        Ok(best)
    }

    /// Solve the post-impact equations for `(ṽ, λ̃)`; the flag says whether
    /// the grazing fallback was used.
    #[allow(clippy::too_many_arguments)]
    fn post_impact(
        &mut self,
        k: usize,
        t_impact: f64,
        a: &SVector<f64, N>,
        d_imp: &SVector<f64, N>,
        q_imp: &SVector<f64, N>,
        h1: f64,
        h2: f64,
        frame: &BoundaryFrame<N>,
        pass_through: &SVector<f64, N>,
    ) -> Result<(SVector<f64, N>, SVector<f64, M>, bool), ImpactError> {
        // Returns the increment `ṽ − q̃` (solved for, so that the velocity of
        // the short sub-step loses no digits), the multipliers and the flag.
        let piece = frame.piece;
        let fail = |reason: String| ImpactError::PostImpact {
            step: k,
            t: t_impact,
            piece,
            reason,
        };
        let geo = |source| ImpactError::Geometry {
            step: k,
            t: t_impact,
            source,
        };
        let sys = self.stepper.system();
        let map = self.stepper.map();
        let ld =
            DiscreteLagrangian::<Sy, Dm, N, M>::new(sys, map).oriented(self.stepper.orientation());
        let before = ld.time_jet_increment(a, d_imp, h1).map_err(geo)?;
        let mut p_tan = SVector::<f64, N>::zeros();
        frame.iota_star(&before.d2, &mut p_tan.as_mut_slice()[..N - 1]);
        let forms: SMatrix<f64, M, N> = sys.constraint_forms(q_imp);
        let problem = PostImpact {
            ld,
            cd: self.stepper.constraint(),
            q_imp,
            h2,
            e_target: before.d3,
            p_tan,
            bt_at: frame.frame.transpose() * forms.transpose(),
            forms,
            frame,
            w: before.d2.amax().max(1.0) / before.d3.abs().max(1.0),
            scale_p: before.d2.amax().max(1.0),
        };
        let n_hat = frame.normal();
        // `pass_through`: the increment from q̃ to the smooth step's end.
        let d = *pass_through;
        let dn = n_hat.dot(&d);
        // Starting guesses for the reflected root, tried in turn: the mirror
        // image of the pass-through point; the time-reversed pass-through
        // point (better when constraints couple normal and tangential
        // motion); a point far out on the reflected side, from which Newton
        // descends monotonically even when both roots hug the vertex of the
        // energy (shallow impacts).
        let mirrored = d - n_hat * (2.0 * dn);
        let reversed = -d;
        let s_far = 2.0 * (dn.abs() + d.norm());
        let far_out = d - n_hat * dn + n_hat * s_far;
        let mut last_err = None;
        for guess in [mirrored, reversed, far_out] {
            let mut x = DVector::<f64>::zeros(N + M);
            x.rows_mut(0, N).copy_from(&guess);
            match newton::solve(
                &mut x,
                &mut self.ws,
                &self.params.newton,
                None,
                |x, r, j| problem.eval(None, x, r, j),
            ) {
                Ok(_) => {
                    let v = SVector::<f64, N>::from_fn(|i, _| x[i]);
                    let lam = SVector::<f64, M>::from_fn(|i, _| x[N + i]);
                    if frame.dg.dot(&v) > 0.0 {
                        return Ok((v, lam, false));
                    }
                    last_err = Some(fail(
                        "Newton converged to the pass-through root, not the reflected one".into(),
                    ));
                }
                Err(NewtonFailure::Geometry(source)) => return Err(geo(source)),
                Err(e) => last_err = Some(fail(format!("{e:?}"))),
            }
        }
        // Grazing: the energy balance has no reflected root when the normal
        // kinetic energy is below the O(h²) mismatch of the two sub-steps'
        // discrete energies. Minimise the energy mismatch along the family
        // of solutions of the other equations, parametrised by the normal
        // displacement s ∈ [0, s_far] (argmin's Brent minimiser).
        let ws = RefCell::new(&mut self.ws);
        let newton_params = self.params.newton;
        let solve_at = |s: f64| -> Result<DVector<f64>, NewtonFailure> {
            let mut x = DVector::<f64>::zeros(N + M);
            x.rows_mut(0, N).copy_from(&(d - n_hat * dn + n_hat * s));
            newton::solve(
                &mut x,
                &mut ws.borrow_mut(),
                &newton_params,
                None,
                |x, r, j| problem.eval(Some(s), x, r, j),
            )?;
            Ok(x)
        };
        let mismatch = Mismatch {
            solve_at: &solve_at,
            problem: &problem,
        };
        let solver = BrentOpt::new(0.0, s_far).set_tolerance(1e-10, 1e-14);
        let res = Executor::new(mismatch, solver)
            .configure(|st| st.max_iters(200))
            .run()
            .map_err(|e| fail(format!("grazing fallback: {e}; before that: {last_err:?}")))?;
        let s_best = *res
            .state()
            .get_best_param()
            .ok_or_else(|| fail("grazing fallback found no minimiser".into()))?;
        let x = solve_at(s_best).map_err(|e| fail(format!("grazing fallback: {e:?}")))?;
        let v = SVector::<f64, N>::from_fn(|i, _| x[i]);
        let lam = SVector::<f64, M>::from_fn(|i, _| x[N + i]);
        Ok((v, lam, true))
    }
}

impl<Sy, Dm, const N: usize, const M: usize> OneStep<N> for ImpactIntegrator<Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    type Event = ImpactEvent<N>;
    type Error = ImpactError;

    fn advance(
        &mut self,
        k: usize,
        from: &State<N>,
        h: f64,
        events: &mut Vec<ImpactEvent<N>>,
    ) -> Result<StepOutput<N>, ImpactError> {
        let sign = self.stepper.direction().sign();
        let t0 = from.t;
        if k == 0
            && let Some((piece, g)) = self.worst(&from.q)
            && g < 0.0
        {
            return Err(ImpactError::Inadmissible {
                step: k,
                t: t0,
                piece,
                g,
            });
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
            let (to, st) = self.stepper.step(
                k,
                &State {
                    t: t_sub,
                    q: a,
                    p: pi_a * sign,
                },
                hr,
            )?;
            stats.iterations += st.iterations;
            stats.residual = stats.residual.max(st.residual);
            stats.degenerate |= st.degenerate;
            let b = to.q;
            let geo = |source| ImpactError::Geometry {
                step: k,
                t: t_sub,
                source,
            };
            let suspects = self.suspects(&a, &b).map_err(geo)?;
            let crossing = if suspects.is_empty() {
                None
            } else {
                self.first_crossing(k, t_sub, &a, &pi_a, hr, &b, &suspects, just_hit)?
            };
            let Some((alpha, piece)) = crossing else {
                let ld = self.stepper.discrete_lagrangian();
                let d = self.stepper.last_increment().unwrap_or(b - a);
                let (energy, res) =
                    step_measures(&ld, self.stepper.constraint(), &a, &d, hr).map_err(geo)?;
                residual_max = residual_max.max(res);
                return Ok(StepOutput {
                    to: State {
                        t: t0 + sign * h,
                        q: b,
                        p: to.p,
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
            // moved there, so that neither sub-step has an empty
            // increment (never empty).
            let delta = self.params.min_fraction.min(0.25);
            let alpha = alpha.clamp(delta, 1.0 - delta);
            let h1 = alpha * hr;
            let h2 = (1.0 - alpha) * hr;
            let d_step = self.stepper.last_increment().unwrap_or(b - a);
            let imp = self
                .stepper
                .solve_oriented(k, t_sub, &a, &pi_a, h1, &(d_step * alpha))?;
            let q_imp = imp.b;
            let t_imp = t_sub + sign * h1;
            let geo = |source| ImpactError::Geometry {
                step: k,
                t: t_imp,
                source,
            };
            let frame = BoundaryFrame::new(self.stepper.system(), piece, &q_imp).map_err(geo)?;
            let pass_through = b - q_imp;
            let (e, lam, grazing) =
                self.post_impact(k, t_imp, &a, &imp.d, &q_imp, h1, h2, &frame, &pass_through)?;
            let ld = self.stepper.discrete_lagrangian();
            let (e_before, res1) =
                step_measures(&ld, self.stepper.constraint(), &a, &imp.d, h1).map_err(geo)?;
            let e_after = ld.energy_increment(&q_imp, &e, h2).map_err(geo)?;
            residual_max = residual_max.max(res1);
            let forms: SMatrix<f64, M, N> = self.stepper.system().constraint_forms(&q_imp);
            let pi_physical = -ld.d1_increment(&q_imp, &e, h2).map_err(geo)?;
            let pi_after = pi_physical + forms.transpose() * lam;
            events.push(ImpactEvent {
                step: k,
                alpha: (elapsed + h1) / h,
                t: t_imp,
                q: q_imp,
                piece,
                p_before: imp.pi_b * sign,
                p_after: pi_physical * sign,
                p_after_raw: pi_after * sign,
                energy_before: e_before,
                energy_after: e_after,
                grazing,
            });
            self.stepper.reset_warm_start();
            a = q_imp;
            pi_a = pi_after;
            elapsed += h1;
            hr = h2;
            just_hit = Some(piece);
        }
        Err(ImpactError::TooManyImpacts {
            step: k,
            t: t0,
            max: self.params.max_impacts_per_step,
        })
    }
}

/// The post-impact equations of \[VCI\] Theorem 3.1 at a fixed impact point.
struct PostImpact<'a, Sy, Dm, const N: usize, const M: usize> {
    ld: DiscreteLagrangian<'a, Sy, Dm, N, M>,
    cd: ConstraintDiscretization,
    q_imp: &'a SVector<f64, N>,
    h2: f64,
    e_target: f64,
    /// `ι*(D2 L_d(a, q̃, αh))` in the first `N − 1` entries.
    p_tan: SVector<f64, N>,
    forms: SMatrix<f64, M, N>,
    bt_at: SMatrix<f64, N, M>,
    frame: &'a BoundaryFrame<N>,
    w: f64,
    scale_p: f64,
}

impl<Sy, Dm, const N: usize, const M: usize> PostImpact<'_, Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    /// Residual and Jacobian at `x = (e, λ̃)`, `e = ṽ − q̃` the increment of
    /// the post-impact sub-step. Row 0 is the energy balance, or, with
    /// `normal = Some(s)`, `n·e = s`.
    fn eval(
        &self,
        normal: Option<f64>,
        x: &DVector<f64>,
        r: &mut DVector<f64>,
        jac: &mut nalgebra::DMatrix<f64>,
    ) -> Result<f64, GeometryError> {
        let v = SVector::<f64, N>::from_fn(|i, _| x[i]);
        let lam = SVector::<f64, M>::from_fn(|i, _| x[N + i]);
        let jet = self.ld.jet_increment(self.q_imp, &v, self.h2)?;
        jac.fill(0.0);
        let mut scale = self.scale_p.max(jet.d12.amax() * v.amax());
        match normal {
            None => {
                let tj = self.ld.time_jet_increment(self.q_imp, &v, self.h2)?;
                r[0] = (tj.d3 - self.e_target) * self.w;
                for j in 0..N {
                    jac[(0, j)] = tj.d23[j] * self.w;
                }
                scale = scale.max(tj.d23.amax() * v.amax() * self.w);
            }
            Some(s) => {
                let n = self.frame.frame.column(0);
                r[0] = (n.dot(&v) - s) * self.scale_p;
                for j in 0..N {
                    jac[(0, j)] = n[j] * self.scale_p;
                }
            }
        }
        let f = jet.d1 - self.forms.transpose() * lam;
        for i in 0..N - 1 {
            let bi = self.frame.frame.column(i + 1);
            r[1 + i] = bi.dot(&f) + self.p_tan[i];
            let row = bi.transpose() * jet.d12;
            for j in 0..N {
                jac[(1 + i, j)] = row[j];
            }
            for j in 0..M {
                jac[(1 + i, N + j)] = -self.bt_at[(i + 1, j)];
            }
        }
        if M > 0 {
            let (c, dc) = self.cd.jacobian_increment(
                self.ld.system(),
                self.ld.map(),
                self.ld.orientation(),
                self.q_imp,
                &v,
                self.h2,
            )?;
            for i in 0..M {
                r[N + i] = c[i];
                for j in 0..N {
                    jac[(N + i, j)] = dc[(i, j)];
                }
            }
        }
        Ok(scale)
    }
}

/// Squared energy mismatch along the normal family, for argmin.
struct Mismatch<'a, F, Sy, Dm, const N: usize, const M: usize> {
    solve_at: &'a F,
    problem: &'a PostImpact<'a, Sy, Dm, N, M>,
}

impl<F, Sy, Dm, const N: usize, const M: usize> CostFunction for Mismatch<'_, F, Sy, Dm, N, M>
where
    F: Fn(f64) -> Result<DVector<f64>, NewtonFailure>,
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    type Param = f64;
    type Output = f64;
    fn cost(&self, s: &f64) -> Result<f64, argmin::core::Error> {
        let x = (self.solve_at)(*s).map_err(|e| argmin::core::Error::msg(format!("{e:?}")))?;
        let v = SVector::<f64, N>::from_fn(|i, _| x[i]);
        let d3 = -self
            .problem
            .ld
            .energy_increment(self.problem.q_imp, &v, self.problem.h2)
            .map_err(|e| argmin::core::Error::msg(e.to_string()))?;
        Ok((d3 - self.problem.e_target).powi(2))
    }
}
