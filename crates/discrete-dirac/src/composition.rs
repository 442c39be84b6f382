//! Symmetric composition of a self-adjoint one-step map (docs/theory.md §9.2).
//!
//! For a symmetric method `Φ_h` (`Φ_{−h} = Φ_h^{−1}`) of order 2 the
//! composition
//! ```text
//! Ψ_h = Φ_{γ_s h} ∘ ⋯ ∘ Φ_{γ_1 h},     γ_i = γ_{s+1−i},
//! ```
//! is symmetric, and of order 4 when `Σ γ_i = 1`, `Σ γ_i³ = 0`, of order 6
//! when further `Σ γ_i⁵ = 0` and one condition on a fifth-order commutator
//! holds (Hairer–Lubich–Wanner, *Geometric Numerical Integration*, §II.4,
//! §V.3). A negative stage `γ_i < 0` is taken as the inverse of the map over
//! `|γ_i| h`: the (−) stepper of the same family, oriented the other way.
//!
//! [`Composed`] wraps a (+) and a (−) symmetric stepper (see
//! [`LagrangeDirac::symmetric`]) into one [`SubStepper`]: a sub-step of any
//! size `h` is the whole composition over `h`, so the impact integrator
//! locates impacts on the path `α ↦ Ψ_{α h}(x_k)` (the composed map of the
//! step `α h`, accurate to the composition's order) and continues with
//! `Ψ_{(1−α) h}` after the impact. The energy and constraint residual it
//! reports are the continuous ones at the end point, `E(q, v)` and
//! `|A(q) v|` with `v` from the inverse Legendre map: the discrete energies
//! of the stages only hold `E` to `O(h²)`.

use crate::lagrange_dirac::LagrangeDirac;
use crate::substep::SubStepper;
use crate::trajectory::StepOutput;
use crate::{Direction, PositionCarry, State, StepError, StepStats, SubStep};
use diracvi_geometry::{
    ConstraintDiscretization, DiscretizationMap, GeometryError, System, velocity_from_momentum,
};
use nalgebra::{SMatrix, SVector};
use std::fmt;
use std::str::FromStr;

/// `1/(2 − 2^{1/3})`.
const TJ_OUTER: f64 = 1.351_207_191_959_657_8;
/// `−2^{1/3}/(2 − 2^{1/3})`.
const TJ_INNER: f64 = -1.702_414_383_919_315_3;
/// `1/(4 − 4^{1/3})`.
const SY_OUTER: f64 = 0.414_490_771_794_375_74;
/// `−4^{1/3}/(4 − 4^{1/3})`.
const SY_INNER: f64 = -0.657_963_087_177_502_9;

/// The stages of the triple jump.
static TRIPLE_JUMP: [f64; 3] = [TJ_OUTER, TJ_INNER, TJ_OUTER];
/// The stages of Suzuki's five-stage fractal.
static SUZUKI_5: [f64; 5] = [SY_OUTER, SY_OUTER, SY_INNER, SY_OUTER, SY_OUTER];
/// Kahan & Li (1997), the nine-stage method of order 6 (`s9odr6a`, as in
/// Hairer–Lubich–Wanner eq. V.3.11), with the published digits (the
/// literal rounds to the nearest `f64`).
#[allow(clippy::excessive_precision)]
static KAHAN_LI_9: [f64; 9] = [
    0.392_161_444_007_314_139_279_250_56,
    0.332_599_136_789_359_438_599_748_64,
    -0.706_246_172_557_639_359_809_964_82,
    0.082_213_596_293_550_800_231_490_45,
    0.798_543_990_934_829_963_398_950_35,
    0.082_213_596_293_550_800_231_490_45,
    -0.706_246_172_557_639_359_809_964_82,
    0.332_599_136_789_359_438_599_748_64,
    0.392_161_444_007_314_139_279_250_56,
];
/// The basic method alone.
static SINGLE: [f64; 1] = [1.0];

/// A symmetric composition scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Composition {
    /// The basic symmetric method alone (order 2).
    #[default]
    Single,
    /// The triple jump (Creutz–Gocksch, Forest, Suzuki, Yoshida 1990), order 4,
    /// three stages `γ₁ = γ₃ = 1/(2 − 2^{1/3})`, `γ₂ = 1 − 2γ₁`.
    TripleJump,
    /// Suzuki's five-stage fractal (1990), order 4, `γ₁ = γ₂ = γ₄ = γ₅ =
    /// 1/(4 − 4^{1/3})`, `γ₃ = 1 − 4γ₁`: smaller error constant than the
    /// triple jump.
    Suzuki5,
    /// Kahan & Li's nine-stage composition of order 6 (1997).
    KahanLi6,
}

impl Composition {
    /// The scheme of order 2, 4 or 6 used by `--order` (the single step,
    /// the triple jump, Kahan–Li), or `None` for other orders.
    pub fn for_order(order: u32) -> Option<Self> {
        match order {
            2 => Some(Composition::Single),
            4 => Some(Composition::TripleJump),
            6 => Some(Composition::KahanLi6),
            _ => None,
        }
    }

    /// The stage coefficients `γ_1, …, γ_s` (palindromic, summing to 1).
    pub fn coefficients(self) -> &'static [f64] {
        match self {
            Composition::Single => &SINGLE,
            Composition::TripleJump => &TRIPLE_JUMP,
            Composition::Suzuki5 => &SUZUKI_5,
            Composition::KahanLi6 => &KAHAN_LI_9,
        }
    }

    /// The order of the composition of a symmetric method of order 2.
    pub fn order(self) -> u32 {
        match self {
            Composition::Single => 2,
            Composition::TripleJump | Composition::Suzuki5 => 4,
            Composition::KahanLi6 => 6,
        }
    }

    /// The name used on the command line and in summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            Composition::Single => "single",
            Composition::TripleJump => "triple-jump",
            Composition::Suzuki5 => "suzuki5",
            Composition::KahanLi6 => "kahan-li6",
        }
    }
}

impl fmt::Display for Composition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Composition {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "single" => Ok(Composition::Single),
            "triple-jump" => Ok(Composition::TripleJump),
            "suzuki5" => Ok(Composition::Suzuki5),
            "kahan-li6" => Ok(Composition::KahanLi6),
            other => Err(format!(
                "unknown composition '{other}' (expected single, triple-jump, suzuki5 or kahan-li6)"
            )),
        }
    }
}

/// A symmetric composition of a self-adjoint stepper: `forward` takes the
/// stages with `γ_i > 0`, `adjoint` (the same map in the other direction of
/// time, i.e. its inverse) those with `γ_i < 0`.
#[derive(Debug, Clone)]
pub struct Composed<St, const N: usize, const M: usize> {
    forward: St,
    adjoint: St,
    scheme: Composition,
    carry: PositionCarry<N>,
    history: StageHistory<N>,
}

/// The mean velocities `d/τ` of the last two stages taken, with the times
/// of their midpoints (`τ` the stage's signed duration in time): the warm
/// start of the next stage (docs/theory.md §9.4).
#[derive(Debug, Clone, Copy, Default)]
struct StageHistory<const N: usize> {
    last: Option<(SVector<f64, N>, f64)>,
    before: Option<(SVector<f64, N>, f64)>,
}

/// Largest ratio of the extrapolation distance to the distance between the
/// two stages it extrapolates from; beyond it the last velocity alone.
const MAX_EXTRAPOLATION: f64 = 4.0;

impl<const N: usize> StageHistory<N> {
    /// The increment guess of a stage of signed duration `tau` whose
    /// midpoint is at time `mid`: the last two mean velocities extrapolated
    /// linearly to `mid` (error `O(h²)` in the velocity, `O(h³)` in the
    /// increment on a smooth trajectory), times `tau`.
    fn guess(&self, mid: f64, tau: f64) -> Option<SVector<f64, N>> {
        let (u1, m1) = self.last?;
        let u = match self.before {
            Some((u0, m0)) if (m1 - m0).abs() > 0.0 => {
                let r = (mid - m1) / (m1 - m0);
                if r.abs() <= MAX_EXTRAPOLATION {
                    u1 + (u1 - u0) * r
                } else {
                    u1
                }
            }
            _ => u1,
        };
        Some(u * tau)
    }

    /// Record a stage taken: increment `d` over the signed duration `tau`
    /// with midpoint `mid`.
    fn push(&mut self, d: &SVector<f64, N>, mid: f64, tau: f64) {
        self.before = self.last;
        self.last = Some((d / tau, mid));
    }
}

impl<Sy, Dm, const N: usize, const M: usize> Composed<LagrangeDirac<Sy, Dm, N, M>, N, M>
where
    Sy: System<N, M> + Clone,
    Dm: DiscretizationMap<N> + Clone,
{
    /// The composition `scheme` of the symmetric Lagrange–Dirac step
    /// ([`LagrangeDirac::symmetric`]) with the discrete Lagrangian `map` and
    /// the discrete constraint `constraint`, integrating in `direction`.
    /// The order is raised only if the basic step is self-adjoint: a
    /// symmetric `L_d` (midpoint) and a symmetric constraint (midpoint).
    pub fn lagrange_dirac(
        system: Sy,
        map: Dm,
        constraint: ConstraintDiscretization,
        direction: Direction,
        scheme: Composition,
    ) -> Self {
        let other = match direction {
            Direction::Forward => Direction::Backward,
            Direction::Backward => Direction::Forward,
        };
        let forward =
            LagrangeDirac::new(system.clone(), map.clone(), constraint, direction).symmetric();
        let adjoint = LagrangeDirac::new(system, map, constraint, other).symmetric();
        Self::new(forward, adjoint, scheme)
    }
}

impl<St, const N: usize, const M: usize> Composed<St, N, M>
where
    St: SubStepper<N, M>,
{
    /// Compose `forward` (the direction of time of the composition) with its
    /// `adjoint` (the same symmetric map in the other direction).
    ///
    /// # Panics
    /// When the two steppers run in the same direction (a programming error).
    #[track_caller]
    pub fn new(forward: St, adjoint: St, scheme: Composition) -> Self {
        assert!(
            forward.direction() != adjoint.direction(),
            "Composed::new: the adjoint stepper must run in the other direction of time"
        );
        Self {
            forward,
            adjoint,
            scheme,
            carry: PositionCarry::new(),
            history: StageHistory::default(),
        }
    }

    /// The scheme.
    pub fn scheme(&self) -> Composition {
        self.scheme
    }

    /// The stepper taking the forward stages.
    pub fn forward_stepper(&self) -> &St {
        &self.forward
    }

    /// One composed sub-step; `trial` selects side-effect-free inner solves
    /// (and a local copy of the position carry).
    #[allow(clippy::too_many_arguments)]
    fn compose(
        &mut self,
        trial: bool,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        guess: Option<&SVector<f64, N>>,
    ) -> Result<SubStep<N>, StepError> {
        crate::validate_step(t, h, a, pi_a)?;
        let sign = self.forward.direction().sign();
        let mut local_carry = self.carry;
        let carry = if trial {
            &mut local_carry
        } else {
            &mut self.carry
        };
        let mut x = *a;
        let mut pi = *pi_a;
        let mut total = SVector::<f64, N>::zeros();
        let mut stats = StepStats::default();
        let mut reaction = None;
        let mut elapsed = 0.0;
        for &g in self.scheme.coefficients() {
            let hi = g.abs() * h;
            let ti = t + sign * elapsed;
            // The stage's signed duration in time and its midpoint: the
            // warm start extrapolates the earlier stages' mean velocities
            // (the stages differ in size and alternate direction, so the
            // steppers' own warm starts, their last increment rescaled, are
            // only O(h²) guesses; docs/theory.md §9.4).
            let tau = sign * g * h;
            let mid = ti + 0.5 * tau;
            let extrapolated = self.history.guess(mid, tau);
            let s = if g > 0.0 {
                match (trial, extrapolated, guess) {
                    (false, Some(e), _) => self.forward.sub_step_from(ti, &x, &pi, hi, &e)?,
                    (false, None, _) => self.forward.sub_step(ti, &x, &pi, hi)?,
                    (true, Some(e), _) => self.forward.trial_step(ti, &x, &pi, hi, &e)?,
                    (true, None, Some(d)) => self.forward.trial_step(ti, &x, &pi, hi, &(d * g))?,
                    (true, None, None) => {
                        self.forward
                            .trial_step(ti, &x, &pi, hi, &SVector::zeros())?
                    }
                }
            } else {
                let back = -pi;
                let mut s = match (trial, extrapolated, guess) {
                    (false, Some(e), _) => self.adjoint.sub_step_from(ti, &x, &back, hi, &e)?,
                    (false, None, _) => self.adjoint.sub_step(ti, &x, &back, hi)?,
                    (true, Some(e), _) => self.adjoint.trial_step(ti, &x, &back, hi, &e)?,
                    (true, None, Some(d)) => {
                        self.adjoint.trial_step(ti, &x, &back, hi, &(d * g))?
                    }
                    (true, None, None) => {
                        self.adjoint
                            .trial_step(ti, &x, &back, hi, &SVector::zeros())?
                    }
                };
                s.pi_b = -s.pi_b;
                s.reaction = -s.reaction;
                s
            };
            if !trial {
                self.history.push(&s.d, mid, tau);
            }
            elapsed += g * h;
            stats.absorb(&s.stats);
            reaction.get_or_insert(s.reaction);
            total += s.d;
            x = carry.add(&x, &s.d);
            pi = s.pi_b;
        }
        Ok(SubStep {
            b: x,
            d: total,
            pi_b: pi,
            reaction: reaction.unwrap_or_else(SVector::zeros),
            stats,
        })
    }
}

/// The velocity of the momentum `p` on the constraint distribution: `v`
/// with `∂L/∂v(q, v) = p + A(q)ᵀ ν`, `A(q) v = 0` (Newton's method on the
/// KKT system, exact in one iteration for `L` quadratic in `v`). The
/// Lagrange–Dirac momentum is defined only up to `A(q)ᵀ ν`, and this system
/// stays regular where `∂²L/∂v²` alone is singular but not on `ker A`
/// (the pendulum through `sin θ = 0`). Returns `(v, ν)`.
///
/// # Errors
/// [`GeometryError::LegendreNotInvertible`] when the KKT matrix is
/// singular or Newton does not converge in 30 iterations.
pub fn constrained_velocity<Sy, const N: usize, const M: usize>(
    system: &Sy,
    q: &SVector<f64, N>,
    p: &SVector<f64, N>,
) -> Result<(SVector<f64, N>, SVector<f64, M>), GeometryError>
where
    Sy: System<N, M> + ?Sized,
{
    if M == 0 {
        return Ok((
            velocity_from_momentum(system, q, p, &SVector::zeros())?,
            SVector::zeros(),
        ));
    }
    diracvi_geometry::ensure_finite("p", p.as_slice())?;
    let forms: SMatrix<f64, M, N> = system.constraint_forms(q);
    let (mut v, mut nu) = (SVector::<f64, N>::zeros(), SVector::<f64, M>::zeros());
    let n = N + M;
    let scale = p.amax().max(1.0);
    let mut residual = f64::INFINITY;
    for iterations in 0..30 {
        let (pv, hess) = diracvi_geometry::legendre_jet(system, q, &v);
        let r1 = pv - p - forms.transpose() * nu;
        let r2 = forms * v;
        residual = r1.amax() / scale;
        let kkt = nalgebra::DMatrix::from_fn(n, n, |i, j| match (i < N, j < N) {
            (true, true) => hess[(i, j)],
            (true, false) => -forms[(j - N, i)],
            (false, true) => forms[(i - N, j)],
            (false, false) => 0.0,
        });
        let rhs = nalgebra::DVector::from_fn(n, |i, _| if i < N { r1[i] } else { r2[i - N] });
        let Some(dx) = kkt.lu().solve(&rhs) else {
            break;
        };
        if !dx.iter().all(|x| x.is_finite()) {
            break;
        }
        let dv = SVector::<f64, N>::from_fn(|i, _| dx[i]);
        v -= dv;
        nu -= SVector::<f64, M>::from_fn(|a, _| dx[N + a]);
        if dv.amax() <= 1e-14 * v.amax().max(1.0) && iterations > 0 {
            return Ok((v, nu));
        }
    }
    Err(GeometryError::LegendreNotInvertible {
        q: q.as_slice().to_vec(),
        residual,
        iterations: 30,
    })
}

/// The continuous energy `E(q, v)` at `(q, p)`, `v` on the constraint
/// distribution from [`constrained_velocity`], and the constraint residual
/// `max_a |h (A(q) v)_a| / max(1, |q|)` of that velocity (round-off: the
/// inner stages of a composed step hold their discrete constraints to the
/// Newton tolerance) (docs/theory.md §9.2).
///
/// # Errors
/// When the constrained Legendre map cannot be inverted.
pub fn continuous_measures<Sy, const N: usize, const M: usize>(
    system: &Sy,
    q: &SVector<f64, N>,
    p: &SVector<f64, N>,
    h: f64,
) -> Result<(f64, f64), GeometryError>
where
    Sy: System<N, M> + ?Sized,
{
    let (v, _) = constrained_velocity(system, q, p)?;
    let energy = system.energy(q, &v);
    let residual = if M == 0 {
        0.0
    } else {
        let forms: SMatrix<f64, M, N> = system.constraint_forms(q);
        (forms * v).amax() * h.abs() / q.norm().max(1.0)
    };
    Ok((energy, residual))
}

impl<St, const N: usize, const M: usize> SubStepper<N, M> for Composed<St, N, M>
where
    St: SubStepper<N, M>,
{
    type System = St::System;

    fn system(&self) -> &St::System {
        self.forward.system()
    }

    fn direction(&self) -> Direction {
        self.forward.direction()
    }

    fn sub_step(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
    ) -> Result<SubStep<N>, StepError> {
        self.compose(false, t, a, pi_a, h, None)
    }

    fn trial_step(
        &mut self,
        t: f64,
        a: &SVector<f64, N>,
        pi_a: &SVector<f64, N>,
        h: f64,
        guess: &SVector<f64, N>,
    ) -> Result<SubStep<N>, StepError> {
        self.compose(true, t, a, pi_a, h, Some(guess))
    }

    fn reset_warm_start(&mut self) {
        self.forward.reset_warm_start();
        self.adjoint.reset_warm_start();
        self.history = StageHistory::default();
    }

    fn measures(
        &self,
        _sub_start: &SVector<f64, N>,
        sub: &SubStep<N>,
        h: f64,
    ) -> Result<(f64, f64), GeometryError> {
        let p = sub.pi_b * self.forward.direction().sign();
        continuous_measures(self.forward.system(), &sub.b, &p, h)
    }
}

impl<St, const N: usize, const M: usize> crate::OneStep<N> for Composed<St, N, M>
where
    St: SubStepper<N, M>,
{
    type Event = ();
    type Error = StepError;

    fn advance(
        &mut self,
        from: &State<N>,
        h: f64,
        _events: &mut Vec<()>,
    ) -> Result<StepOutput<N>, StepError> {
        crate::substep::advance(self, from, h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use diracvi_geometry::{AdScalar, Discretization};
    use nalgebra::DMatrix;

    /// A nonholonomic system with a configuration-dependent constraint
    /// (the pendulum's shape): `L = ½(v₀² + v₁² sin²q₀) − cos q₀`,
    /// `v₁ = (π + cos²q₀) v₀`.
    #[derive(Clone)]
    struct Knife;
    impl System<2, 1> for Knife {
        fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
            let s = q[0].sin();
            (v[0] * v[0] + v[1] * v[1] * s * s) * 0.5 - q[0].cos()
        }
        fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 2>) -> SMatrix<S, 1, 2> {
            let c = q[0].cos();
            SMatrix::<S, 1, 2>::new(c * c + std::f64::consts::PI, S::from(-1.0))
        }
    }

    /// The stage warm start: fed the exact increments of `x(t) = (sin t,
    /// e^t)` over the stages of Kahan–Li steps (sizes and directions
    /// alternating), it predicts each next stage's increment with an error
    /// `O(h³)` once two stages are known (two `h` halvings: fitted order
    /// within 0.3 of 3), where the last stage's velocity alone is only
    /// `O(h²)`.
    #[test]
    fn stage_warm_start_is_third_order() {
        let x = |t: f64| SVector::<f64, 2>::from([t.sin(), t.exp()]);
        let worst = |h: f64, extrapolate: bool| {
            let mut history = StageHistory::<2>::default();
            let (mut t, mut err) = (0.3, 0.0f64);
            for _ in 0..3 {
                for &g in Composition::KahanLi6.coefficients() {
                    let tau = g * h;
                    let mid = t + 0.5 * tau;
                    let d = x(t + tau) - x(t);
                    if !extrapolate {
                        history.before = None;
                    }
                    // (From the third stage on: two stages known.)
                    if let Some(guess) = history.guess(mid, tau)
                        && (history.before.is_some() || !extrapolate)
                    {
                        err = err.max((guess - d).amax());
                    }
                    history.push(&d, mid, tau);
                    t += tau;
                }
            }
            err
        };
        let hs = [0.04, 0.02, 0.01];
        for (extrapolate, expected) in [(true, 3.0), (false, 2.0)] {
            let e: Vec<f64> = hs.iter().map(|&h| worst(h, extrapolate)).collect();
            let order = (e[0] / e[2]).log2() / 2.0;
            assert!(
                (order - expected).abs() <= 0.3,
                "extrapolate {extrapolate}: errors {e:?}, order {order}"
            );
        }
    }

    /// `Φ_h` then its adjoint: back to the start, for the symmetric step;
    /// the plain step misses by the reaction `A(q_0)ᵀ μ`.
    #[test]
    fn symmetric_step_is_self_adjoint() {
        let (q0, v0) = (SVector::from([2.3, 0.1]), 0.7);
        let v = SVector::from([v0, (2.3f64.cos().powi(2) + std::f64::consts::PI) * v0]);
        let s0 = crate::state_from_velocity(&Knife, 0.0, &q0, &v).unwrap();
        let h = 0.05;
        let round_trip = |symmetric: bool| {
            let make = |d| {
                let st = LagrangeDirac::new(
                    Knife,
                    Discretization::Midpoint,
                    ConstraintDiscretization::Midpoint,
                    d,
                );
                if symmetric { st.symmetric() } else { st }
            };
            let (s1, _) = make(Direction::Forward).step(&s0, h).unwrap();
            let (back, _) = make(Direction::Backward).step(&s1, h).unwrap();
            (back.q - s0.q).amax().max((back.p - s0.p).amax())
        };
        let (sym, plain) = (round_trip(true), round_trip(false));
        assert!(
            sym <= 1e-14,
            "symmetric step: Φ_h⁻¹ ≠ Φ_(−h), error {sym:e}"
        );
        assert!(
            plain >= 1e-4,
            "plain step unexpectedly self-adjoint ({plain:e})"
        );
    }

    /// Three composed steps then three composed steps backward: the identity.
    #[test]
    fn composed_step_is_self_adjoint() {
        let q0 = SVector::from([2.3, 0.1]);
        let v = SVector::from([0.7, (2.3f64.cos().powi(2) + std::f64::consts::PI) * 0.7]);
        let s0 = crate::state_from_velocity(&Knife, 0.0, &q0, &v).unwrap();
        for scheme in [Composition::TripleJump, Composition::KahanLi6] {
            let make = |d| {
                Composed::lagrange_dirac(
                    Knife,
                    Discretization::Midpoint,
                    ConstraintDiscretization::Midpoint,
                    d,
                    scheme,
                )
            };
            let f = crate::simulate(
                &mut make(Direction::Forward),
                s0,
                0.1,
                crate::RunOptions::new(3).every(0),
            )
            .unwrap();
            let b = crate::simulate(
                &mut make(Direction::Backward),
                f.summary.final_state,
                0.1,
                crate::RunOptions::new(3).every(0),
            )
            .unwrap();
            let end = b.summary.final_state;
            let err = (end.q - s0.q).amax().max((end.p - s0.p).amax());
            assert!(err <= 1e-13, "{scheme}: {err:e}");
        }
    }

    /// The order conditions: palindromic, `Σγ = 1`, `Σγ³ = 0` (order 4),
    /// `Σγ⁵ = 0` (order 6); and the full conditions in the free Lie algebra:
    /// with `Φ_h = exp(hA + h³B + h⁵C)` (symmetric, order 2 for the flow
    /// `exp(hA)`) and non-commuting matrices, the composition's error must
    /// fall like `h^(p+1)`.
    #[test]
    fn coefficients_satisfy_the_order_conditions() {
        for scheme in [
            Composition::TripleJump,
            Composition::Suzuki5,
            Composition::KahanLi6,
        ] {
            let g = scheme.coefficients();
            let s = g.len();
            for i in 0..s {
                assert!(
                    (g[i] - g[s - 1 - i]).abs() <= 0.0,
                    "{scheme} not palindromic"
                );
            }
            let moment = |k: i32| g.iter().map(|x| x.powi(k)).sum::<f64>();
            assert!(
                (moment(1) - 1.0).abs() <= 1e-15,
                "{scheme}: Σγ = {}",
                moment(1)
            );
            assert!(moment(3).abs() <= 1e-15, "{scheme}: Σγ³ = {:e}", moment(3));
            if scheme.order() >= 6 {
                assert!(moment(5).abs() <= 1e-15, "{scheme}: Σγ⁵ = {:e}", moment(5));
            }
        }
        assert!((TJ_OUTER - 1.0 / (2.0 - 2f64.cbrt())).abs() <= 1e-15);
        assert!((SY_OUTER - 1.0 / (4.0 - 4f64.cbrt())).abs() <= 1e-15);
        let m = |seed: f64| DMatrix::from_fn(4, 4, |i, j| ((i * 4 + j) as f64 * seed).sin());
        let (a, b, c) = (m(1.3), m(2.9), m(0.7));
        let basic = |h: f64| (&a * h + &b * h.powi(3) + &c * h.powi(5)).exp();
        let error = |scheme: Composition, h: f64| {
            let mut psi = DMatrix::<f64>::identity(4, 4);
            for &g in scheme.coefficients() {
                psi = basic(g * h) * psi;
            }
            (psi - (&a * h).exp()).amax()
        };
        for (scheme, h) in [
            (Composition::TripleJump, 0.1),
            (Composition::Suzuki5, 0.1),
            (Composition::KahanLi6, 0.2),
        ] {
            let (e1, e2) = (error(scheme, h), error(scheme, h / 2.0));
            let order = (e1 / e2).log2() - 1.0;
            assert!(
                (order - f64::from(scheme.order())).abs() <= 0.3,
                "{scheme}: local order {order:.2} ({e1:e} → {e2:e})"
            );
        }
    }
}
