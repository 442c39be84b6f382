//! The (+) and (−) discrete nonholonomic Hamiltonian steppers (\[DDM\] 5.6b,
//! 5.12b).
//!
//! (+), forward: unknowns `(q_{k+1}, p_{k+1}, μ)` from
//! ```text
//! q_{k+1} = D2 H_{d+}(q_k, p_{k+1}),   p_k − D1 H_{d+}(q_k, p_{k+1}) = A(q_k)ᵀ μ,   ω_{d+}(q_k, q_{k+1}) = 0.
//! ```
//! (−), backward: unknowns `(q_k, p_k, μ)` from
//! ```text
//! q_k = −D1 H_{d−}(p_k, q_{k+1}),   p_{k+1} + D2 H_{d−}(p_k, q_{k+1}) = A(q_{k+1})ᵀ μ,   ω_{d−}(q_k, q_{k+1}) = 0.
//! ```
//! As for the Lagrange–Dirac steppers, (−) is solved as (+) in reversed
//! orientation: with `a = q_{k+1}`, `π = −p`, the generating function
//! `H^*_{d+}(a, π) = H_{d−}(−π, a)` satisfies the (+) equations.
//!
//! Generating functions are written in near-identity form,
//! `H_{d+}(q0, p1) = p1·q0 + h K_+(q0, p1)` and `H_{d−}(p0, q1) = −p0·q1 + h K_−(p0, q1)`,
//! and Newton solves for the increment `d = q_{k+1} − q_k`:
//! `d = h ∂K_+/∂p1`, `p_k = p_{k+1} + h ∂K_+/∂q0 + A(q_k)ᵀ μ`. So the
//! position equation never forms `q_k + h ∂K/∂p` and subtracts `q_k` again
//! (the cancellation that cost digits when `|q| ≫ h |v|`).
//!
//! [`SymplecticEuler`] takes `K_+(q0, p1) = H(q0, p1)` and
//! `K_−(p0, q1) = H(q1, p0)` from the system's Hamiltonian.
//! With the forward discretization and `H` the Legendre transform of a
//! hyperregular `L`, the (+) Hamiltonian and Lagrange–Dirac steppers are the
//! same scheme (nonholonomic symplectic Euler).

use crate::newton::{Newton, NewtonParams};
use crate::substep::{SubStep, SubStepper};
use crate::trajectory::StepOutput;
use crate::{Direction, OneStep, State, StepError, StepStats};
use diracvi_geometry::ad::{
    DenseConstant, constants, gradient_of, hessian_of, partial_hessian_of, seed_first,
    seed_gradient, seed_hessian, seed_second,
};
use diracvi_geometry::{
    AdScalar, ConstraintDiscretization, DiscretizationMap, GeometryError, Orientation, System,
};
use nalgebra::{DMatrix, DVector, SMatrix, SVector};
use num_dual::{Dual2SVec, DualSVec, HyperDualSVec64};

/// A pair of discrete Hamiltonians (generating functions of type II and III)
/// in near-identity form (the step `h` is generic so that the discrete
/// energy `E_d = ∂H_{d+}/∂h = K_+ + h ∂K_+/∂h` comes by automatic
/// differentiation): an implementor supplies `K_±` of
/// `H_{d+}(q0, p1; h) = p1·q0 + h K_+(q0, p1; h)` and
/// `H_{d−}(p0, q1; h) = −p0·q1 + h K_−(p0, q1; h)` (\[DDM\] 5.6b, 5.12b).
pub trait DiscreteHamiltonian<Sy, const N: usize, const M: usize> {
    /// `K_+(q0, p1; h)`, or `None` if unavailable.
    fn plus<S: AdScalar>(
        &self,
        system: &Sy,
        q0: &SVector<S, N>,
        p1: &SVector<S, N>,
        h: S,
    ) -> Option<S>;
    /// `K_−(p0, q1; h)`, or `None` if unavailable.
    fn minus<S: AdScalar>(
        &self,
        system: &Sy,
        p0: &SVector<S, N>,
        q1: &SVector<S, N>,
        h: S,
    ) -> Option<S>;
}

/// The symplectic-Euler generating functions built from the system's `H`
/// (docs/theory.md §3): `K_+(q0, p1) = H(q0, p1)`, `K_−(p0, q1) = H(q1, p0)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SymplecticEuler;

impl<Sy: System<N, M>, const N: usize, const M: usize> DiscreteHamiltonian<Sy, N, M>
    for SymplecticEuler
{
    fn plus<S: AdScalar>(
        &self,
        system: &Sy,
        q0: &SVector<S, N>,
        p1: &SVector<S, N>,
        h: S,
    ) -> Option<S> {
        let _ = h;
        system.hamiltonian(q0, p1)
    }
    fn minus<S: AdScalar>(
        &self,
        system: &Sy,
        p0: &SVector<S, N>,
        q1: &SVector<S, N>,
        h: S,
    ) -> Option<S> {
        let _ = h;
        system.hamiltonian(q1, p0)
    }
}

/// A discrete nonholonomic Hamiltonian stepper, (+) or (−).
#[derive(Debug, Clone)]
pub struct NonholonomicHamiltonian<Sy, Dm, Hd, const N: usize, const M: usize> {
    system: Sy,
    map: Dm,
    constraint: ConstraintDiscretization,
    generating: Hd,
    params: NewtonParams,
    direction: Direction,
    ws: Newton,
    /// Newton buffers of trial solves (event location).
    trial_ws: Newton,
    x: DVector<f64>,
    carry: crate::PositionCarry<N>,
    /// The units of the momentum rows and unknowns
    /// ([`crate::momentum_unit`]), fixed at the first solve.
    unit: Option<f64>,
}

/// The oriented kernel `K(a, π)`: `K_+` forward, `K_−(−π, a)` reversed
/// (`H^*_{d+}(a, π) = H_{d−}(−π, a) = π·a + h K_−(−π, a)`).
fn oriented<Sy, Hd, S, const N: usize, const M: usize>(
    hd: &Hd,
    system: &Sy,
    orientation: Orientation,
    a: &SVector<S, N>,
    pi: &SVector<S, N>,
    h: S,
) -> Option<S>
where
    Hd: DiscreteHamiltonian<Sy, N, M>,
    S: AdScalar,
{
    match orientation {
        Orientation::Forward => hd.plus(system, a, pi, h),
        Orientation::Reversed => hd.minus(system, &-pi, a, h),
    }
}

impl<Sy, Dm, Hd, const N: usize, const M: usize> NonholonomicHamiltonian<Sy, Dm, Hd, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
    Hd: DiscreteHamiltonian<Sy, N, M>,
{
    /// A stepper: (+) for `Direction::Forward`, (−) for `Direction::Backward`.
    pub fn new(
        system: Sy,
        map: Dm,
        constraint: ConstraintDiscretization,
        generating: Hd,
        direction: Direction,
    ) -> Self {
        let n = 2 * N + M;
        Self {
            system,
            map,
            constraint,
            generating,
            params: NewtonParams::default(),
            direction,
            ws: Newton::new(n),
            trial_ws: Newton::new(n),
            x: DVector::zeros(n),
            carry: crate::PositionCarry::new(),
            unit: None,
        }
    }

    /// Replace the Newton parameters.
    pub fn with_params(mut self, params: NewtonParams) -> Self {
        self.params = params;
        self
    }

    /// The system.
    pub fn system(&self) -> &Sy {
        &self.system
    }

    /// Direction of time: (+) forward, (−) backward.
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// The Newton parameters.
    pub fn params(&self) -> &NewtonParams {
        &self.params
    }

    /// One step from `state` (to `t + h` for (+), `t − h` for (−)).
    ///
    /// # Errors
    /// [`StepError`] naming the step and time; `Unsupported` if the
    /// generating function is unavailable (no Hamiltonian).
    pub fn step(&mut self, state: &State<N>, h: f64) -> Result<(State<N>, StepStats), StepError> {
        crate::substep::step_state(self, state, h)
    }

    /// Solve the oriented (+) equations from `(a, π_a)` with step `h`, in
    /// the steps' workspace or (`trial`) in a separate one; `guess` is an
    /// initial `(d, π_b)`, else the explicit part of symplectic Euler.
    ///
    /// # Errors
    /// As [`step`](Self::step).
    #[allow(clippy::too_many_arguments)]
    pub fn solve_oriented(
        &mut self,
        trial: bool,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        guess: Option<(&SVector<f64, N>, &SVector<f64, N>)>,
    ) -> Result<crate::SubStep<N>, StepError> {
        crate::validate_step(t, h, a, pi_a)?;
        let orientation = self.direction.orientation();
        if oriented::<Sy, Hd, f64, N, M>(&self.generating, &self.system, orientation, a, pi_a, h)
            .is_none()
        {
            return Err(StepError::Unsupported(
                "the system supplies no Hamiltonian, so the discrete Hamiltonian stepper cannot run (use the Lagrange–Dirac stepper)".into(),
            ));
        }
        if self.system.gyroscopic_force(a, pi_a).is_some() {
            return Err(StepError::Unsupported(
                "the system has a gyroscopic force, which the discrete Hamiltonian stepper does not take (use the Lagrange–Dirac stepper)".into(),
            ));
        }
        // Momenta and multipliers are solved for times `unit` (a power of
        // two; 1 unless the momenta at the first solve, `π_a` and the
        // impulse `h ∂K/∂a`, are tiny: docs/theory.md §3.7).
        let unit = match self.unit {
            Some(u) => u,
            None => {
                let k = oriented::<Sy, Hd, DualSVec<f64, N>, N, M>(
                    &self.generating,
                    &self.system,
                    orientation,
                    &seed_gradient(a),
                    &constants(pi_a),
                    DualSVec::constant(h),
                );
                let impulse = k.map_or(0.0, |k| h.abs() * gradient_of(k).amax());
                *self
                    .unit
                    .insert(crate::momentum_unit(pi_a.amax().max(impulse)))
            }
        };
        // Warm start: the given guess, or the explicit part of symplectic
        // Euler (no increment, unchanged momentum).
        let zero = SVector::zeros();
        let (d0, p0) = guess.unwrap_or((&zero, pi_a));
        let x = &mut self.x;
        crate::pack(x, 0, d0);
        crate::pack(x, N, &(p0 * unit));
        crate::pack(x, 2 * N, &SVector::<f64, M>::zeros());
        let (system, map, hd, cd) = (&self.system, &self.map, &self.generating, self.constraint);
        let a_forms: SMatrix<f64, M, N> = system.constraint_forms(a);
        let ws = if trial {
            &mut self.trial_ws
        } else {
            &mut self.ws
        };
        let info = ws
            .solve(x, &self.params, None, |x, r, j| {
                eval::<Sy, Dm, Hd, N, M>(
                    system,
                    map,
                    hd,
                    cd,
                    orientation,
                    a,
                    pi_a,
                    &a_forms,
                    h,
                    unit,
                    x,
                    r,
                    j,
                )
            })
            .map_err(|f| StepError::from_newton(f, t, self.params.tolerance))?;
        let d = crate::unpack::<N>(x, 0);
        let mu = crate::unpack::<M>(x, 2 * N) / unit;
        Ok(crate::SubStep {
            b: a + d,
            d,
            pi_b: crate::unpack::<N>(x, N) / unit,
            reaction: a_forms.transpose() * mu,
            stats: StepStats::from_newton(&info, false),
        })
    }

    /// `a + d` with the compensated summation of the steps taken.
    pub(crate) fn add_with_carry(
        &mut self,
        a: &SVector<f64, N>,
        d: &SVector<f64, N>,
    ) -> SVector<f64, N> {
        self.carry.add(a, d)
    }

    /// The discrete energy of the oriented step from `a` with end momentum
    /// `π_b`: `E_d = ∂H_{d+}/∂h = K + h ∂K/∂h` (for symplectic Euler
    /// `H(a, π_b)`, the energy at the step's start point and end momentum),
    /// and its gradient with respect to `π_b`.
    ///
    /// # Errors
    /// When the generating function is unavailable, and
    /// [`GeometryError::NonFinite`] when the energy is not finite.
    pub fn discrete_energy(
        &self,
        a: &SVector<f64, N>,
        pi_b: &SVector<f64, N>,
        h: f64,
    ) -> Result<(f64, SVector<f64, N>), GeometryError> {
        // Dual in h (first direction) and π_b: value, ∂/∂h, ∂/∂π, ∂²/∂h∂π.
        let hd = seed_first::<1, N>(&SVector::from([h]))[0];
        let ad: SVector<HyperDualSVec64<1, N>, N> = diracvi_geometry::ad::constants(a);
        let k = oriented::<Sy, Hd, HyperDualSVec64<1, N>, N, M>(
            &self.generating,
            &self.system,
            self.direction.orientation(),
            &ad,
            &seed_second::<1, N>(pi_b),
            hd,
        )
        .ok_or(GeometryError::NonFinite {
            what: "discrete Hamiltonian",
            index: 0,
            value: f64::NAN,
        })?;
        let (value, dh, dpi, dhpi) = partial_hessian_of(k);
        let energy = value + h * dh[0];
        if !energy.is_finite() {
            // Finite momenta whose energy overflows (e.g. |p| ~ 1e200): the
            // run cannot go on meaningfully, as for the Lagrange–Dirac
            // stepper, whose residual overflows.
            return Err(GeometryError::NonFinite {
                what: "discrete energy",
                index: 0,
                value: energy,
            });
        }
        let grad = dpi + dhpi.row(0).transpose() * h;
        Ok((energy, grad))
    }

    /// The constraint residual of the oriented step `a → a + d` (docs/theory.md §6).
    ///
    /// # Errors
    /// When the discrete constraint cannot be evaluated.
    pub fn constraint_residual(
        &self,
        a: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<f64, GeometryError> {
        if M == 0 {
            return Ok(0.0);
        }
        let b = a + d;
        let c: SVector<f64, M> = self.constraint.evaluate_step(
            &self.system,
            &self.map,
            self.direction.orientation(),
            a,
            &b,
            d,
            h,
        )?;
        Ok(c.amax() * h / b.norm().max(1.0))
    }
}

/// Residual and Jacobian of the oriented (+) equations at
/// `x = (d, u π_b, u μ)`, `b = a + d`:
/// ```text
/// d/h − ∂K/∂π(a, π_b) = 0,   u (π_a − π_b − h ∂K/∂a(a, π_b) − A(a)ᵀ μ) = 0,   ω_d(a, b) = 0.
/// ```
/// The position rows are divided by `h` (velocity units, like the
/// constraint rows), which leaves the Newton steps unchanged and makes the
/// stopping test relative to the increment, not to `|q|`. The momentum rows
/// and unknowns are in units of `1/u` ([`crate::momentum_unit`]; `u = 1`
/// unless the momenta are tiny).
#[allow(clippy::too_many_arguments)]
fn eval<Sy, Dm, Hd, const N: usize, const M: usize>(
    system: &Sy,
    map: &Dm,
    hd: &Hd,
    cd: ConstraintDiscretization,
    orientation: Orientation,
    a: &SVector<f64, N>,
    pi_a: &SVector<f64, N>,
    a_forms: &SMatrix<f64, M, N>,
    h: f64,
    unit: f64,
    x: &DVector<f64>,
    r: &mut DVector<f64>,
    jac: &mut DMatrix<f64>,
) -> Result<f64, GeometryError>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
    Hd: DiscreteHamiltonian<Sy, N, M>,
{
    let nan = || GeometryError::NonFinite {
        what: "discrete Hamiltonian",
        index: 0,
        value: f64::NAN,
    };
    let d = crate::unpack::<N>(x, 0);
    let pi_b = crate::unpack::<N>(x, N) / unit;
    let mu = crate::unpack::<M>(x, 2 * N);
    // ∂K/∂a, ∂K/∂π, ∂²K/∂a∂π in one pass; ∂²K/∂π² in another.
    let kk = oriented::<Sy, Hd, HyperDualSVec64<N, N>, N, M>(
        hd,
        system,
        orientation,
        &seed_first::<N, N>(a),
        &seed_second::<N, N>(&pi_b),
        HyperDualSVec64::<N, N>::constant(h),
    )
    .ok_or_else(nan)?;
    let (_, k_a, k_pi, k_api) = partial_hessian_of(kk);
    let a2: SVector<Dual2SVec<f64, N>, N> = diracvi_geometry::ad::constants(a);
    let k2 = oriented::<Sy, Hd, Dual2SVec<f64, N>, N, M>(
        hd,
        system,
        orientation,
        &a2,
        &seed_hessian(&pi_b),
        Dual2SVec::<f64, N>::constant(h),
    )
    .ok_or_else(nan)?;
    let (_, _, k_pipi) = hessian_of(k2);
    let n2 = 2 * N;
    let inv_h = h.recip();
    jac.fill(0.0);
    let force = a_forms.transpose() * mu;
    for i in 0..N {
        r[i] = d[i] * inv_h - k_pi[i];
        jac[(i, i)] = inv_h;
        for j in 0..N {
            jac[(i, N + j)] = -k_pipi[(i, j)] / unit;
        }
        r[N + i] = pi_a[i] * unit - x[N + i] - h * k_a[i] * unit - force[i];
        jac[(N + i, N + i)] = -1.0;
        for j in 0..N {
            jac[(N + i, N + j)] -= h * k_api[(i, j)];
        }
        for j in 0..M {
            jac[(N + i, n2 + j)] = -a_forms[(j, i)];
        }
    }
    if M > 0 {
        let (c, dc) = cd.jacobian_increment(system, map, orientation, a, &d, h)?;
        for i in 0..M {
            r[n2 + i] = c[i];
            for j in 0..N {
                jac[(n2 + i, j)] = dc[(i, j)];
            }
        }
    }
    Ok((pi_a.amax() * unit).max(k_pi.amax()).max(1.0))
}

impl<Sy, Dm, Hd, const N: usize, const M: usize> OneStep<N>
    for NonholonomicHamiltonian<Sy, Dm, Hd, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
    Hd: DiscreteHamiltonian<Sy, N, M>,
{
    type Event = ();
    type Error = StepError;

    /// The energy recorded is the discrete energy of the step,
    /// `E_d = ∂H_{d+}/∂h` ([`discrete_energy`](NonholonomicHamiltonian::discrete_energy); for
    /// symplectic Euler `H(q_k, p_{k+1})`, which equals the Lagrange–Dirac
    /// `E_d = −D3 L_d` of the forward discretization).
    fn advance(
        &mut self,
        from: &State<N>,
        h: f64,
        _events: &mut Vec<()>,
    ) -> Result<StepOutput<N>, StepError> {
        crate::substep::advance(self, from, h)
    }
}

// The impact integrator's view of this stepper (crate::substep).
impl<Sy, Dm, Hd, const N: usize, const M: usize> SubStepper<N, M>
    for NonholonomicHamiltonian<Sy, Dm, Hd, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
    Hd: DiscreteHamiltonian<Sy, N, M>,
{
    type System = Sy;

    fn system(&self) -> &Sy {
        NonholonomicHamiltonian::system(self)
    }

    fn direction(&self) -> Direction {
        NonholonomicHamiltonian::direction(self)
    }

    fn sub_step(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
    ) -> Result<SubStep<N>, StepError> {
        let mut s = self.solve_oriented(false, t, a, pi_a, h, None)?;
        s.b = self.add_with_carry(a, &s.d);
        Ok(s)
    }

    fn trial_step(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        guess: &SVector<f64, N>,
    ) -> Result<SubStep<N>, StepError> {
        self.solve_oriented(true, t, a, pi_a, h, Some((guess, pi_a)))
    }

    fn reset_warm_start(&mut self) {}

    fn measures(
        &self,
        a: &SVector<f64, N>,
        sub: &SubStep<N>,
        h: f64,
    ) -> Result<(f64, f64), GeometryError> {
        let (energy, _) = self.discrete_energy(a, &sub.pi_b, h)?;
        Ok((energy, self.constraint_residual(a, &sub.d, h)?))
    }
}
