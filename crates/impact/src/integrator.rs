//! The impact integrator.

use argmin::core::{CostFunction, Executor, State as _, TerminationReason};
use argmin::solver::brent::BrentRoot;
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
    /// 1e-7): an impact closer to a grid time is moved by at most this
    /// fraction, which keeps `(ṽ − q̃)/((1−α)h)` resolvable in floating point.
    pub min_fraction: f64,
    /// Shortest sub-step on either side of an impact, in time units
    /// (default 1e-8 ≈ √ε): balances the time shift of the impact against
    /// the round-off in `(ṽ − q̃)/((1−α)h)`.
    pub min_substep: f64,
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
            min_fraction: 1e-7,
            min_substep: 1e-8,
            newton: NewtonParams::default().with_polish(2),
        }
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
    /// Momentum at `q̃` after the impact, `−D1 L_d(q̃, ṽ, (1−α)h) + A(q̃)ᵀ λ̃`.
    pub p_after: SVector<f64, N>,
    /// Discrete energy before, `−D3 L_d(q_k, q̃, α h)`.
    pub energy_before: f64,
    /// Discrete energy after, `−D3 L_d(q̃, ṽ, (1−α) h)`.
    pub energy_after: f64,
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
}

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
        let guess = self.a + self.increment * alpha;
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
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
    ) -> Result<Vec<usize>, GeometryError> {
        let sys = self.stepper.system();
        let mut out = Vec::new();
        let d = b - a;
        for j in 0..sys.boundary_count() {
            let (g0, dg0) = boundary_gradient(sys, j, a)?;
            let (g1, dg1) = boundary_gradient(sys, j, b)?;
            if g1 < 0.0 {
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
                if (1..16).any(|i| p(i as f64 / 16.0) < 0.0) {
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
            // Bracket the first sign change by sampling (0, upper].
            let mut lo = if just_hit == Some(piece) {
                1e-9 * upper
            } else {
                0.0
            };
            let mut g_lo = if lo > 0.0 {
                cr.g(lo)?
            } else {
                cell.borrow().system().boundary(piece, a)
            };
            if g_lo < 0.0 {
                // Chatter: the piece just hit is crossed again immediately.
                return Err(ImpactError::TooManyImpacts {
                    step: k,
                    t,
                    max: self.params.max_impacts_per_step,
                });
            }
            let mut bracket = None;
            for i in 1..=samples {
                let hi = upper * i as f64 / samples as f64;
                let g_hi = cr.g(hi)?;
                if g_hi < 0.0 {
                    bracket = Some((lo, hi));
                    break;
                }
                lo = hi;
                g_lo = g_hi;
            }
            let _ = g_lo;
            let Some((lo, hi)) = bracket else { continue };
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

    /// Solve the post-impact equations for `(ṽ, λ̃)`.
    #[allow(clippy::too_many_arguments)]
    fn post_impact(
        &mut self,
        k: usize,
        t_impact: f64,
        a: &SVector<f64, N>,
        q_imp: &SVector<f64, N>,
        h1: f64,
        h2: f64,
        frame: &BoundaryFrame<N>,
        pass_through: &SVector<f64, N>,
    ) -> Result<(SVector<f64, N>, SVector<f64, M>), ImpactError> {
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
        let cd = self.stepper.constraint();
        let orientation = self.stepper.orientation();
        let ld = DiscreteLagrangian::<Sy, Dm, N, M>::new(sys, map).oriented(orientation);
        let before = ld.time_jet(a, q_imp, h1).map_err(geo)?;
        let e_target = before.d3;
        let mut p_tan = vec![0.0; N - 1];
        frame.iota_star(&before.d2, &mut p_tan);
        let forms: SMatrix<f64, M, N> = sys.constraint_forms(q_imp);
        // B^T A^T : (N−1) × M
        let bt_at = frame.frame.transpose() * forms.transpose();
        let n_hat = frame.normal();
        // Mirror image of the pass-through point as the starting guess.
        let d = pass_through - q_imp;
        // Starting guesses for the reflected root: the mirror image of the
        // pass-through point, then the time-reversed pass-through point
        // (better when constraints couple normal and tangential motion).
        let mirrored = q_imp + d - n_hat * (2.0 * n_hat.dot(&d));
        let reversed = q_imp - d;
        let scale_e = e_target.abs().max(1.0);
        let scale_p = before.d2.amax().max(1.0);
        let mut last_err = None;
        for guess in [mirrored, reversed] {
            let mut x = DVector::<f64>::zeros(N + M);
            for i in 0..N {
                x[i] = guess[i];
            }
            let outcome = newton::solve(
                &mut x,
                &mut self.ws,
                &self.params.newton,
                None,
                |x, r, jac| {
                    let v = SVector::<f64, N>::from_fn(|i, _| x[i]);
                    let lam = SVector::<f64, M>::from_fn(|i, _| x[N + i]);
                    let tj = ld.time_jet(q_imp, &v, h2)?;
                    let jet = ld.jet(q_imp, &v, h2)?;
                    // energy row, scaled to the momentum scale
                    let w = scale_p / scale_e;
                    r[0] = (tj.d3 - e_target) * w;
                    for j in 0..N {
                        jac[(0, j)] = tj.d23[j] * w;
                    }
                    for j in 0..M {
                        jac[(0, N + j)] = 0.0;
                    }
                    let f = jet.d1 - forms.transpose() * lam;
                    for i in 0..N - 1 {
                        let bi = frame.frame.column(i + 1);
                        r[1 + i] = bi.dot(&f) + p_tan[i];
                        let row = bi.transpose() * jet.d12;
                        for j in 0..N {
                            jac[(1 + i, j)] = row[j];
                        }
                        for j in 0..M {
                            jac[(1 + i, N + j)] = -bt_at[(i + 1, j)];
                        }
                    }
                    if M > 0 {
                        let (c, dc) = cd.jacobian(sys, map, orientation, q_imp, &v, h2)?;
                        for i in 0..M {
                            r[N + i] = c[i];
                            for j in 0..N {
                                jac[(N + i, j)] = dc[(i, j)];
                            }
                            for j in 0..M {
                                jac[(N + i, N + j)] = 0.0;
                            }
                        }
                    }
                    // Equation scale: the size of the cancelling terms (their
                    // round-off is the floor when the sub-step is short).
                    Ok(scale_p
                        .max(jet.d12.amax() * v.amax())
                        .max(tj.d23.amax() * v.amax() * w))
                },
            )
            .map_err(|f| match f {
                NewtonFailure::NoConvergence {
                    iterations,
                    residual,
                } => fail(format!(
                    "Newton did not converge in {iterations} iterations (scaled residual {residual:e})"
                )),
                NewtonFailure::NonFinite { what, iterations } => {
                    fail(format!("non-finite {what} after {iterations} iterations"))
                }
                NewtonFailure::Geometry(source) => geo(source),
            });
            match outcome {
                Ok(_) => {
                    let v = SVector::<f64, N>::from_fn(|i, _| x[i]);
                    let lam = SVector::<f64, M>::from_fn(|i, _| x[N + i]);
                    if frame.dg.dot(&(v - q_imp)) > 0.0 {
                        return Ok((v, lam));
                    }
                    last_err = Some(fail(
                        "Newton converged to the pass-through root, not the reflected one".into(),
                    ));
                }
                Err(e) => last_err = Some(e),
            }
        }
        Err(last_err.expect("at least one guess was tried"))
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
                let (energy, res) =
                    step_measures(&ld, self.stepper.constraint(), &a, &b, hr).map_err(geo)?;
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
            // moved there, so neither sub-step is too short to resolve its
            // velocity in floating point.
            let delta = self
                .params
                .min_fraction
                .max(self.params.min_substep / hr)
                .min(0.25);
            let alpha = alpha.clamp(delta, 1.0 - delta);
            let h1 = alpha * hr;
            let h2 = (1.0 - alpha) * hr;
            let guess = a + (b - a) * alpha;
            let imp = self
                .stepper
                .solve_oriented(k, t_sub, &a, &pi_a, h1, &guess)?;
            let q_imp = imp.b;
            let t_imp = t_sub + sign * h1;
            let geo = |source| ImpactError::Geometry {
                step: k,
                t: t_imp,
                source,
            };
            let frame = BoundaryFrame::new(self.stepper.system(), piece, &q_imp).map_err(geo)?;
            let pass_through = q_imp + (b - q_imp);
            let (v, lam) = self.post_impact(k, t_imp, &a, &q_imp, h1, h2, &frame, &pass_through)?;
            let ld = self.stepper.discrete_lagrangian();
            let (e_before, res1) =
                step_measures(&ld, self.stepper.constraint(), &a, &q_imp, h1).map_err(geo)?;
            let e_after = ld.energy(&q_imp, &v, h2).map_err(geo)?;
            residual_max = residual_max.max(res1);
            let forms: SMatrix<f64, M, N> = self.stepper.system().constraint_forms(&q_imp);
            let pi_after = -ld.d1(&q_imp, &v, h2).map_err(geo)? + forms.transpose() * lam;
            events.push(ImpactEvent {
                step: k,
                alpha: (elapsed + h1) / h,
                t: t_imp,
                q: q_imp,
                piece,
                p_before: imp.pi_b * sign,
                p_after: pi_after * sign,
                energy_before: e_before,
                energy_after: e_after,
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
