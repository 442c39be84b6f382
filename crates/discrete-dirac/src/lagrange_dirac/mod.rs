//! The (+) and (−) discrete Lagrange–Dirac steppers (\[DDM\] eqs. 5.3b, 5.9b;
//! \[VCI\] eqs. (1), (2)).
//!
//! (+), forward in time: given `(q_k, p_k)` solve for `(q_{k+1}, μ)`
//! ```text
//! p_k + D1 L_d(q_k, q_{k+1}, h) = A(q_k)ᵀ μ,     ω_{d+}(q_k, q_{k+1}) = 0,
//! p_{k+1} = D2 L_d(q_k, q_{k+1}, h).
//! ```
//! (−), backward in time: given `(q_{k+1}, p_{k+1})` solve for `(q_k, μ)`
//! ```text
//! p_{k+1} − D2 L_d(q_k, q_{k+1}, h) = A(q_{k+1})ᵀ μ,   ω_{d−}(q_k, q_{k+1}) = 0,
//! p_k = −D1 L_d(q_k, q_{k+1}, h).
//! ```
//! Both are one *oriented* solve: with `L_d^*(a, b, h) = L_d(b, a, h)` and the
//! momentum negated, (−) is (+) for `L_d^*` (see
//! [`Orientation`]). The oriented equations are
//! `π_a + D1 L(a, b, h) − A(a)ᵀ μ = 0`, `ω(a, b) = 0`, `π_b = D2 L(a, b, h)`.
//!
//! **Degenerate Lagrangians** (docs/theory.md §3). When the step Jacobian
//! `J = [[D12, −Aᵀ], [∂_b ω, 0]]` is singular, some combinations `Yᵀ r` of the
//! step equations (`Y` the left null space of `J`, found by faer's SVD) do not
//! involve the unknowns: they are constraints on the *current* point, which was
//! the unknown of the previous step. So the step keeps the independent
//! equations `U_rᵀ r = 0` (`U_r` spanning the range of `J`) and replaces the
//! redundant ones by the next step's hidden constraints `Yᵀ r_{k+1}(b) = 0`,
//! evaluated at the extrapolated next point (exact when, as for the LC
//! circuit, `Yᵀ r_{k+1}` does not depend on the next unknowns). The current
//! step's own hidden constraints `Yᵀ r = 0` are then checked: violated
//! initial data is reported as [`StepError::Inconsistent`]. No model-specific
//! elimination is involved.
//!
//! The hidden rows' Jacobian needs `Yᵀ (D22 L(a, b) + D11 L(b, c))`, which
//! [`DiscreteLagrangian::del_directional`] gives as Hessian–vector products.
//! While `Y` stays valid the degenerate equations keep their form, so a step
//! starts with the previous step's LU factors, which the linear solver holds
//! from one step to the next (simplified Newton,
//! [`Newton::solve_simplified`]), and evaluates the Jacobian only when they
//! stop contracting; for the LC circuit (linear) no step after the first
//! evaluates it. Convergence is judged on the residual alone, to the same
//! tolerance.

mod degenerate;

use crate::newton::{Newton, NewtonInfo, NewtonParams};
use crate::substep::{SubStep, SubStepper};
use crate::{Direction, State, StepError, StepStats};
use degenerate::{HiddenConstraints, Scratch};
use diracvi_geometry::{
    ConstraintDiscretization, DiscreteLagrangian, DiscretizationMap, GeometryError, Orientation,
    System,
};
use nalgebra::{DMatrix, DVector, SMatrix, SVector};

/// Result of one oriented solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrientedStep<const N: usize, const M: usize> {
    /// The unknown endpoint `b = a + d` (rounded).
    pub b: SVector<f64, N>,
    /// The increment `d = b − a`, the unknown Newton solves for (exact: not
    /// the rounded difference `b − a`).
    pub d: SVector<f64, N>,
    /// The multipliers `μ`.
    pub mu: SVector<f64, M>,
    /// The constraint reaction `A(a)ᵀ μ` (docs/theory.md §3.8).
    pub reaction: SVector<f64, N>,
    /// The oriented momentum at `b`, `π_b = D2 L(a, b, h)`.
    pub pi_b: SVector<f64, N>,
    /// Newton statistics.
    pub info: NewtonInfo,
    /// Whether the degenerate (hidden-constraint) path was used.
    pub degenerate: bool,
    /// Jacobians the stepper evaluated itself before handing the solve to
    /// Newton (its first evaluation, which decides between the regular
    /// and the degenerate path), not counted in `info`.
    pub step_jacobians: usize,
}

/// A discrete Lagrange–Dirac stepper, (+) or (−).
#[derive(Debug, Clone)]
pub struct LagrangeDirac<Sy, Dm, const N: usize, const M: usize> {
    system: Sy,
    map: Dm,
    constraint: ConstraintDiscretization,
    params: NewtonParams,
    direction: Direction,
    /// The constraint reaction split symmetrically between the two ends of
    /// the step (docs/theory.md §9.1).
    symmetric: bool,
    /// Buffers and warm-start state of the steps taken.
    main: SolverContext<N, M>,
    /// The same for trial solves (event location), so that they leave the
    /// steps' warm start untouched.
    trial: SolverContext<N, M>,
    /// The last increment and the step it was taken with.
    last_increment: Option<(SVector<f64, N>, f64)>,
    /// The one before, for the extrapolated warm start.
    previous_increment: Option<(SVector<f64, N>, f64)>,
    carry: crate::PositionCarry<N>,
    /// The units of the step equations ([`crate::momentum_unit`]), fixed at
    /// the first solve.
    unit: Option<f64>,
    /// `(a, A(a))` of the last solve: the retraction-based constraint
    /// residual of the step's measures reads the forms from here when the
    /// step starts at that `a` (bit for bit the same forms).
    forms_at: Option<(SVector<f64, N>, SMatrix<f64, M, N>)>,
}

/// Newton buffers and the state a solve leaves for the next one: the kept
/// LU factors, the hidden-constraint basis, the last multipliers.
#[derive(Debug, Clone)]
struct SolverContext<const N: usize, const M: usize> {
    ws: Newton,
    scratch: Scratch,
    x: DVector<f64>,
    x_start: DVector<f64>,
    cache: EvalCache<N>,
    hidden: Option<HiddenConstraints>,
    /// The last multipliers, in the units of the step equations (`unit · μ`).
    last_mu: SVector<f64, M>,
}

impl<const N: usize, const M: usize> SolverContext<N, M> {
    fn new() -> Self {
        let n = N + M;
        Self {
            ws: Newton::new(n),
            scratch: Scratch {
                full_r: DVector::zeros(n),
                full_jac: DMatrix::zeros(n, n),
                next_r: DVector::zeros(n),
            },
            x: DVector::zeros(n),
            x_start: DVector::zeros(n),
            cache: EvalCache {
                d: SVector::repeat(f64::NAN),
                pi_b: SVector::zeros(),
            },
            hidden: None,
            last_mu: SVector::zeros(),
        }
    }
}

impl<Sy, Dm, const N: usize, const M: usize> LagrangeDirac<Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    /// The (+) stepper, forward in time (\[DDM\] 5.3b).
    pub fn plus(system: Sy, map: Dm, constraint: ConstraintDiscretization) -> Self {
        Self::new(system, map, constraint, Direction::Forward)
    }

    /// The (−) stepper, backward in time (\[DDM\] 5.9b).
    pub fn minus(system: Sy, map: Dm, constraint: ConstraintDiscretization) -> Self {
        Self::new(system, map, constraint, Direction::Backward)
    }

    /// A stepper for the given direction: (+) forward, (−) backward.
    pub fn new(
        system: Sy,
        map: Dm,
        constraint: ConstraintDiscretization,
        direction: Direction,
    ) -> Self {
        Self {
            system,
            map,
            constraint,
            params: NewtonParams::default(),
            direction,
            symmetric: false,
            main: SolverContext::new(),
            trial: SolverContext::new(),
            last_increment: None,
            previous_increment: None,
            carry: crate::PositionCarry::new(),
            unit: None,
            forms_at: None,
        }
    }

    /// Replace the Newton parameters.
    pub fn with_params(mut self, params: NewtonParams) -> Self {
        self.params = params;
        self
    }

    /// The symmetric (self-adjoint) variant (docs/theory.md §9.1): the
    /// constraint reaction is shared between the two ends of the step,
    /// ```text
    /// p_k + D1 L_d(q_k, q_{k+1}, h) = A(q_k)ᵀ μ,
    /// p_{k+1} = D2 L_d(q_k, q_{k+1}, h) − A(q_{k+1})ᵀ μ,   ω_d(q_k, q_{k+1}) = 0
    /// ```
    /// so that the reaction impulse of the step is `−(A(q_k) + A(q_{k+1}))ᵀ μ`,
    /// shared by its two ends (the plain stepper has `−A(q_k)ᵀ μ` only). With a
    /// symmetric discrete Lagrangian (`L_d(q_1, q_0, −h) = −L_d(q_0, q_1, h)`,
    /// e.g. [`Discretization::Midpoint`](diracvi_geometry::Discretization))
    /// and a symmetric discrete constraint
    /// ([`ConstraintDiscretization::Midpoint`]) the (−) step is then the
    /// exact inverse of the (+) step and the (+) step at `−h`: the map is
    /// self-adjoint, `Φ_{−h} ∘ Φ_h = id`, and symmetric composition
    /// ([`Composed`](crate::Composed)) raises its order. Without constraints
    /// it is the plain stepper.
    pub fn symmetric(mut self) -> Self {
        self.symmetric = true;
        self
    }

    /// Whether the constraint reaction is split symmetrically
    /// ([`symmetric`](Self::symmetric)).
    pub fn is_symmetric(&self) -> bool {
        self.symmetric
    }

    /// The Newton parameters.
    pub fn params(&self) -> &NewtonParams {
        &self.params
    }

    /// The system.
    pub fn system(&self) -> &Sy {
        &self.system
    }

    /// The discretization map.
    pub fn map(&self) -> &Dm {
        &self.map
    }

    /// The discrete constraint in use.
    pub fn constraint(&self) -> ConstraintDiscretization {
        self.constraint
    }

    /// Direction of time: (+) forward, (−) backward.
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// The orientation of `L_d` this stepper solves with.
    pub fn orientation(&self) -> Orientation {
        self.direction.orientation()
    }

    /// The oriented discrete Lagrangian.
    pub fn discrete_lagrangian(&self) -> DiscreteLagrangian<'_, Sy, Dm, N, M> {
        DiscreteLagrangian::new(&self.system, &self.map).oriented(self.orientation())
    }

    /// The increment `d = q_{k+1} − q_k` of the last step (exact, as solved
    /// for), or `None` before the first step or after
    /// [`reset_warm_start`](Self::reset_warm_start).
    pub fn last_increment(&self) -> Option<SVector<f64, N>> {
        self.last_increment.map(|(d, _)| d)
    }

    /// The multipliers `μ` of the last step taken.
    pub fn last_multipliers(&self) -> SVector<f64, M> {
        self.main.last_mu / self.unit.unwrap_or(1.0)
    }

    /// Forget warm-start data (call after a discontinuity such as an impact).
    pub fn reset_warm_start(&mut self) {
        self.last_increment = None;
        self.previous_increment = None;
    }

    /// One step from `state` with step `h`: (+) gives the state at `t + h`,
    /// (−) the state at `t − h`. `k` is the step index for error messages.
    /// Warm-started from the previous step's increment. Positions are summed
    /// with compensation: when `state.q` is the point the previous step
    /// returned, that step's rounding error is carried into this one.
    ///
    /// # Errors
    /// [`StepError`] with the step index and time.
    pub fn step(&mut self, state: &State<N>, h: f64) -> Result<(State<N>, StepStats), StepError> {
        crate::substep::step_state(self, state, h)
    }

    /// The oriented step from `(a, π_a)` as a step taken: warm-started from
    /// the last increments, and recording this one.
    pub(crate) fn step_oriented(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
    ) -> Result<OrientedStep<N, M>, StepError> {
        // Warm start: the last increment extrapolated linearly (error
        // O(h³) on a smooth trajectory, so one Newton iteration, or none,
        // reaches round-off), or the last one alone after a change of step.
        let same = |h1: f64| h1.to_bits() == h.to_bits();
        let guess = match (self.last_increment, self.previous_increment) {
            (Some((last, h1)), Some((previous, h0))) if same(h1) && same(h0) => {
                last * 2.0 - previous
            }
            (Some((last, h1)), _) => last * (h / h1),
            (None, _) => SVector::zeros(),
        };
        self.step_oriented_from(t, a, pi_a, h, &guess)
    }

    /// [`step_oriented`](Self::step_oriented) from the increment guess
    /// `guess` (a composed method's stage extrapolation) instead of the
    /// last increments; records this increment all the same.
    pub(crate) fn step_oriented_from(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        guess: &SVector<f64, N>,
    ) -> Result<OrientedStep<N, M>, StepError> {
        let s = self.solve_oriented(t, a, pi_a, h, guess)?;
        self.previous_increment = self.last_increment;
        self.last_increment = Some((s.d, h));
        Ok(s)
    }

    /// `a + d` with the compensated summation of the steps taken.
    pub(crate) fn add_with_carry(
        &mut self,
        a: &SVector<f64, N>,
        d: &SVector<f64, N>,
    ) -> SVector<f64, N> {
        self.carry.add(a, d)
    }

    /// Solve the oriented step equations for `b = a + d` given `(a, π_a)`,
    /// step `h` (possibly a fraction of the grid step), from the initial
    /// guess `guess` of the increment `d`; `t` is the time of `a` (errors name it).
    ///
    /// Newton's unknowns are the increment `d` and the multipliers, never the
    /// absolute position: the velocity `d/h` and the momentum `D2 L_d` are
    /// then computed without the cancellation in `b − a`, and round-off over
    /// many steps grows like a random walk in `ulp(q)` instead of a drift.
    ///
    /// # Errors
    /// [`StepError`] on bad `h`, non-convergence, inconsistency or a failed
    /// geometric evaluation.
    pub fn solve_oriented(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        guess: &SVector<f64, N>,
    ) -> Result<OrientedStep<N, M>, StepError> {
        self.solve_in(false, t, a, pi_a, h, guess)
    }

    /// [`solve_oriented`](Self::solve_oriented) in a separate context: the
    /// warm-start state of the steps (kept factors, hidden-constraint basis,
    /// multipliers, last increment, position carry) is left untouched, so
    /// trial solves (locating an impact) do not change later steps.
    ///
    /// # Errors
    /// As [`solve_oriented`](Self::solve_oriented).
    pub fn solve_trial(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        guess: &SVector<f64, N>,
    ) -> Result<OrientedStep<N, M>, StepError> {
        self.solve_in(true, t, a, pi_a, h, guess)
    }

    #[allow(clippy::too_many_arguments)]
    fn solve_in(
        &mut self,
        trial: bool,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        guess: &SVector<f64, N>,
    ) -> Result<OrientedStep<N, M>, StepError> {
        let orientation = self.orientation();
        let Self {
            system,
            map,
            constraint,
            params,
            main,
            trial: trial_context,
            unit,
            symmetric,
            forms_at,
            ..
        } = self;
        let symmetric = *symmetric && M > 0;
        let (system, map, constraint, params) = (&*system, &*map, *constraint, &*params);
        let w = if trial { trial_context } else { main };
        crate::validate_step(t, h, a, pi_a)?;
        let geo = |source| StepError::Geometry { t, source };
        let ld = DiscreteLagrangian::new(system, map).oriented(orientation);
        // The step equations are solved for `u L_d` (momenta and
        // multipliers times `u`, a power of two): `u = 1` unless the momenta
        // at the first solve are tiny (docs/theory.md §3.7).
        let unit = match *unit {
            Some(u) => u,
            None => {
                let d1 = ld.d1_increment(a, guess, h).map_err(geo)?;
                *unit.insert(crate::momentum_unit(pi_a.amax().max(d1.amax())))
            }
        };
        crate::pack(&mut w.x, 0, guess);
        crate::pack(&mut w.x, N, &w.last_mu);
        let eq = StepEquations {
            ld: ld.in_units(unit),
            cd: constraint,
            a: *a,
            pi_a: pi_a * unit,
            a_forms: system.constraint_forms(a),
            h,
        };
        if M > 0 {
            *forms_at = Some((*a, eq.a_forms));
        }
        // First evaluation decides regular vs degenerate.
        let scale0 = eq
            .full(&w.x, &mut w.ws.r, Some(&mut w.ws.jac), &mut w.cache)
            .map_err(geo)?;
        let hidden_still_valid = degenerate::hidden_still_valid(w);
        let degenerate = hidden_still_valid || w.ws.factor(params).is_err();

        let result = if !degenerate {
            w.hidden = None;
            let cache = &mut w.cache;
            // `factor` left the LU factors of this Jacobian in the solver.
            w.ws.solve_lazy(&mut w.x, params, Some(scale0), true, |x, r, j| {
                eq.full(x, r, j, cache)
            })
        } else {
            degenerate::solve(w, &eq, params, scale0, hidden_still_valid, t)?
        };
        let info = result.map_err(|f| StepError::from_newton(f, t, params.tolerance))?;
        let d = crate::unpack::<N>(&w.x, 0);
        let b = a + d;
        w.last_mu = crate::unpack::<M>(&w.x, N);
        let mu = w.last_mu / unit;
        // `D2 L(a, b, h)` came with the last evaluation, unless polishing
        // went back to an earlier iterate.
        let cached = d
            .iter()
            .zip(w.cache.d.iter())
            .all(|(u, v)| u.to_bits() == v.to_bits());
        let mut pi_b = if cached {
            w.cache.pi_b / unit
        } else {
            DiscreteLagrangian::<Sy, Dm, N, M>::new(system, map)
                .oriented(orientation)
                .d2_increment(a, &d, h)
                .map_err(geo)?
        };
        if symmetric {
            // The other half of the reaction impulse, at the end point:
            // `p_{k+1} − p_k = D1 L_d + D2 L_d − (A(q_k) + A(q_{k+1}))ᵀ μ`.
            let b_forms: SMatrix<f64, M, N> = system.constraint_forms(&b);
            pi_b -= b_forms.transpose() * mu;
        }
        if pi_b.iter().any(|v| !v.is_finite()) {
            return Err(StepError::NonFinite {
                t,
                what: "momentum",
                iterations: info.iterations,
            });
        }
        Ok(OrientedStep {
            b,
            d,
            mu,
            reaction: eq.a_forms.transpose() * mu,
            pi_b,
            info,
            degenerate,
            step_jacobians: 1,
        })
    }
}

/// What evaluations leave for later: `(d, D2 L(a, a + d, h))` of the last
/// one that computed it.
#[derive(Debug, Clone)]
struct EvalCache<const N: usize> {
    d: SVector<f64, N>,
    pi_b: SVector<f64, N>,
}

/// The oriented step equations at fixed `(a, π_a, h)`, unknowns `x = (d, μ)`
/// with `b = a + d`.
struct StepEquations<'s, Sy, Dm, const N: usize, const M: usize> {
    ld: DiscreteLagrangian<'s, Sy, Dm, N, M>,
    cd: ConstraintDiscretization,
    a: SVector<f64, N>,
    pi_a: SVector<f64, N>,
    /// `A(a)`.
    a_forms: SMatrix<f64, M, N>,
    h: f64,
}

impl<Sy, Dm, const N: usize, const M: usize> StepEquations<'_, Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    /// Residual (and Jacobian) of the full equations at `x`; returns the
    /// equation scale.
    #[inline]
    fn full(
        &self,
        x: &DVector<f64>,
        r: &mut DVector<f64>,
        jac: Option<&mut DMatrix<f64>>,
        cache: &mut EvalCache<N>,
    ) -> Result<f64, GeometryError> {
        let (ld, a, h) = (&self.ld, &self.a, self.h);
        let (system, map) = (ld.system(), ld.map());
        let d = crate::unpack::<N>(x, 0);
        let mu = crate::unpack::<M>(x, N);
        let force = self.a_forms.transpose() * mu;
        let d1 = match jac {
            Some(jac) => {
                let jet = ld.jet_increment(a, &d, h)?;
                (cache.d, cache.pi_b) = (d, jet.d2);
                for i in 0..N {
                    for j in 0..N {
                        jac[(i, j)] = jet.d12[(i, j)];
                    }
                    for j in 0..M {
                        jac[(i, N + j)] = -self.a_forms[(j, i)];
                    }
                }
                if M > 0 {
                    let (c, dc) = self.cd.jacobian_increment_given_forms(
                        system,
                        map,
                        ld.orientation(),
                        &self.a_forms,
                        a,
                        &d,
                        h,
                    )?;
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
                jet.d1
            }
            None => {
                // The same values without second derivatives (the real and
                // first-order parts of num-dual numbers are computed alike).
                if M > 0 {
                    let c: SVector<f64, M> = self.cd.evaluate_step_given_forms(
                        system,
                        map,
                        ld.orientation(),
                        &self.a_forms,
                        a,
                        &(a + d),
                        &d,
                        h,
                    )?;
                    for i in 0..M {
                        r[N + i] = c[i];
                    }
                }
                ld.d1_increment(a, &d, h)?
            }
        };
        for i in 0..N {
            r[i] = self.pi_a[i] + d1[i] - force[i];
        }
        // Equation scale: the momenta `|π_a|`, `|D1 L_d|` (and 1). With the
        // increment `d` as the unknown, `D1 L_d` is computed from `d/h`
        // without cancellation, so the momentum rows are resolved to
        // round-off of the momenta themselves: no floor for `ulp(b)` is
        // needed, and none is admitted (a floor relative to `|b|` let a
        // residual of one sign through every step, a drift that grew as
        // `K ε |q| / h`).
        Ok(self.pi_a.amax().max(d1.amax()).max(1.0))
    }
}

/// The discrete energy `E_d(a, b, h) = −D3 L(a, b, h)` and the constraint
/// residual `max_a |h ω^a(a, b)| / max(1, |b|)` of a step `b = a + d` (docs/theory.md
/// §6), for the oriented discrete Lagrangian and constraint, from the exact
/// increment `d`.
///
/// # Errors
/// When `L_d` or the discrete constraint cannot be evaluated.
pub fn step_measures<Sy, Dm, const N: usize, const M: usize>(
    ld: &DiscreteLagrangian<'_, Sy, Dm, N, M>,
    cd: ConstraintDiscretization,
    a: &SVector<f64, N>,
    d: &SVector<f64, N>,
    h: f64,
) -> Result<(f64, f64), GeometryError>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    measures_given_forms(ld, cd, None, a, d, h)
}

/// [`step_measures`] with `A(a)` at hand when `a_forms` is given (see
/// [`ConstraintDiscretization::evaluate_step_given_forms`]).
fn measures_given_forms<Sy, Dm, const N: usize, const M: usize>(
    ld: &DiscreteLagrangian<'_, Sy, Dm, N, M>,
    cd: ConstraintDiscretization,
    a_forms: Option<&SMatrix<f64, M, N>>,
    a: &SVector<f64, N>,
    d: &SVector<f64, N>,
    h: f64,
) -> Result<(f64, f64), GeometryError>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    let energy = ld.energy_increment(a, d, h)?;
    let b = a + d;
    let residual = if M == 0 {
        0.0
    } else {
        let (system, map, o) = (ld.system(), ld.map(), ld.orientation());
        let c: SVector<f64, M> = match a_forms {
            Some(forms) => cd.evaluate_step_given_forms(system, map, o, forms, a, &b, d, h)?,
            None => cd.evaluate_step(system, map, o, a, &b, d, h)?,
        };
        c.amax() * h / b.norm().max(1.0)
    };
    Ok((energy, residual))
}

impl<Sy, Dm, const N: usize, const M: usize> crate::OneStep<N> for LagrangeDirac<Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    type Event = ();
    type Error = StepError;

    fn advance(
        &mut self,
        from: &State<N>,
        h: f64,
        _events: &mut Vec<()>,
    ) -> Result<crate::trajectory::StepOutput<N>, StepError> {
        crate::substep::advance(self, from, h)
    }
}

// The impact integrator's view of this stepper (crate::substep).
/// A step taken by `stepper` from `a`: the end point summed with the
/// stepper's compensation (trial solves, which are not taken, do not sum).
fn taken<Sy, Dm, const N: usize, const M: usize>(
    stepper: &mut LagrangeDirac<Sy, Dm, N, M>,
    a: &SVector<f64, N>,
    s: OrientedStep<N, M>,
) -> SubStep<N>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    SubStep {
        b: stepper.add_with_carry(a, &s.d),
        d: s.d,
        pi_b: s.pi_b,
        reaction: s.reaction,
        stats: StepStats::from_step(&s.info, s.degenerate, s.step_jacobians),
    }
}

impl<Sy, Dm, const N: usize, const M: usize> SubStepper<N, M> for LagrangeDirac<Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    type System = Sy;

    fn system(&self) -> &Sy {
        LagrangeDirac::system(self)
    }

    fn direction(&self) -> Direction {
        LagrangeDirac::direction(self)
    }

    fn sub_step(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
    ) -> Result<SubStep<N>, StepError> {
        let s = self.step_oriented(t, a, pi_a, h)?;
        Ok(taken(self, a, s))
    }

    fn sub_step_from(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        guess: &SVector<f64, N>,
    ) -> Result<SubStep<N>, StepError> {
        let s = self.step_oriented_from(t, a, pi_a, h, guess)?;
        Ok(taken(self, a, s))
    }

    fn trial_step(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        guess: &SVector<f64, N>,
    ) -> Result<SubStep<N>, StepError> {
        let s = self.solve_trial(t, a, pi_a, h, guess)?;
        Ok(SubStep {
            b: s.b,
            d: s.d,
            pi_b: s.pi_b,
            reaction: s.reaction,
            stats: StepStats::from_step(&s.info, s.degenerate, s.step_jacobians),
        })
    }

    fn reset_warm_start(&mut self) {
        LagrangeDirac::reset_warm_start(self);
    }

    fn measures(
        &self,
        a: &SVector<f64, N>,
        sub: &SubStep<N>,
        h: f64,
    ) -> Result<(f64, f64), GeometryError> {
        // `A(a)` of the solve that started at `a`, if it was the last.
        let forms = self
            .forms_at
            .as_ref()
            .filter(|(at, _)| {
                at.iter()
                    .zip(a.iter())
                    .all(|(x, y)| x.to_bits() == y.to_bits())
            })
            .map(|(_, forms)| forms);
        measures_given_forms(
            &self.discrete_lagrangian(),
            self.constraint(),
            forms,
            a,
            &sub.d,
            h,
        )
    }
}
