//! States of a trajectory and what the steppers share about them: the
//! direction of time, the momentum unit of the step equations, the
//! compensated position sums, and initial states from velocities or from a
//! pair of configurations.

use crate::StepError;
use diracvi_geometry::{DiscreteLagrangian, DiscretizationMap, GeometryError, Orientation, System};
use nalgebra::{DVector, SVector};
use serde::{Deserialize, Serialize};

/// A state of a run-time-sized system.
#[derive(Debug, Clone, PartialEq)]
pub struct DynState {
    /// Time.
    pub t: f64,
    /// Configuration.
    pub q: DVector<f64>,
    /// Momentum.
    pub p: DVector<f64>,
}

/// A point of a discrete trajectory: time `t_k`, configuration `q_k`,
/// momentum `p_k`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct State<const N: usize> {
    /// Time.
    pub t: f64,
    /// Configuration.
    pub q: SVector<f64, N>,
    /// Momentum (a covector).
    pub p: SVector<f64, N>,
}

/// Momenta below this size are solved for in other units (see
/// [`momentum_unit`]); at or above it the step equations are solved as they
/// are.
const SMALL_MOMENTUM: f64 = 1.0 / 1_048_576.0;

/// The units (a power of two, so exact) in which a stepper solves its step
/// equations, from the size `p0` of the momenta at its first solve
/// (docs/theory.md §3.7): the momentum rows and the multipliers are
/// multiplied by it (for the Lagrange–Dirac steppers this is `L → u L`,
/// which has the same motions).
///
/// The convergence test is `‖r‖∞ ≤ tolerance · max(|π|, |D1 L_d|, 1)`; the
/// floor 1 keeps momenta near zero (a pendulum at rest) from asking for more
/// than round-off. A system whose momenta are all far below 1 (a mass of
/// `1e-20` kg, an inductance of 1 nH in SI units) would then pass the test
/// at its first guess and freeze, and its Jacobian would look singular next
/// to the `O(1)` constraint columns. In units `u ≈ 1/p0` both are on the
/// scale of 1 again. `p0 ≥ 2⁻²⁰`, zero or non-finite: `1` (nothing changes).
pub fn momentum_unit(p0: f64) -> f64 {
    if !(p0 > 0.0 && p0 < SMALL_MOMENTUM) {
        return 1.0;
    }
    // 2^k with k = round(−log2 p0), at most 2^1000 (finite, with headroom).
    let k = (-p0.log2()).round().min(1000.0);
    2f64.powi(k as i32)
}

/// The unknowns of a step's Newton solve are blocks of one vector: the
/// Lagrange–Dirac steppers solve for `(d, μ)` (offsets `0, N`), the
/// Hamiltonian ones for `(d, p, μ)` (offsets `0, N, 2N`). Read the `K`
/// entries at `offset`.
#[inline(always)]
pub(crate) fn unpack<const K: usize>(x: &nalgebra::DVector<f64>, offset: usize) -> SVector<f64, K> {
    SVector::from_fn(|i, _| x[offset + i])
}

/// Write `v` into the `K` entries of `x` at `offset` (see [`unpack`]).
#[inline(always)]
pub(crate) fn pack<const K: usize>(
    x: &mut nalgebra::DVector<f64>,
    offset: usize,
    v: &SVector<f64, K>,
) {
    for i in 0..K {
        x[offset + i] = v[i];
    }
}

/// Compensated summation of the positions `q_{k+1} = q_k + d_k` (Kahan,
/// with Knuth's exact TwoSum): a stepper keeps the rounding error of its last
/// update and adds it to the next increment when the next step starts from
/// the point it returned. Adding the same increment again and again rounds
/// the same way each time (a constant-speed coordinate drifts by `K ulp(q)/2`
/// after `K` steps); with the carry the positions stay within about one
/// `ulp(q)` of the exactly summed increments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PositionCarry<const N: usize> {
    last: SVector<f64, N>,
    carry: SVector<f64, N>,
}

impl<const N: usize> PositionCarry<N> {
    pub(crate) fn new() -> Self {
        Self {
            last: SVector::repeat(f64::NAN),
            carry: SVector::zeros(),
        }
    }

    /// `q + d` with the carry of the previous update when `q` is the point
    /// that update returned (bit for bit); records the new carry.
    pub(crate) fn add(&mut self, q: &SVector<f64, N>, d: &SVector<f64, N>) -> SVector<f64, N> {
        let same = q
            .iter()
            .zip(self.last.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits());
        let mut out = SVector::zeros();
        for i in 0..N {
            let dd = if same { d[i] + self.carry[i] } else { d[i] };
            // TwoSum: s + e = q + dd exactly.
            let s = q[i] + dd;
            let bb = s - q[i];
            self.carry[i] = (q[i] - (s - bb)) + (dd - bb);
            out[i] = s;
        }
        self.last = out;
        out
    }
}

/// The checks every stepper makes on its input: a finite `h > 0` and a
/// finite start `(a, π_a)`.
pub(crate) fn validate_step<const N: usize>(
    t: f64,
    h: f64,
    a: &SVector<f64, N>,
    pi_a: &SVector<f64, N>,
) -> Result<(), StepError> {
    if !(h.is_finite() && h > 0.0) {
        return Err(StepError::BadStep { t, h });
    }
    if a.iter().chain(pi_a.iter()).any(|v| !v.is_finite()) {
        return Err(StepError::NonFinite {
            t,
            what: "state",
            iterations: 0,
        });
    }
    Ok(())
}

/// Direction of time of a stepper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Forward in time: the (+) equations.
    Forward,
    /// Backward in time: the (−) equations.
    Backward,
}

impl Direction {
    /// `+1` forward, `−1` backward.
    pub fn sign(self) -> f64 {
        match self {
            Direction::Forward => 1.0,
            Direction::Backward => -1.0,
        }
    }

    /// The orientation of `L_d` the direction's equations use.
    pub fn orientation(self) -> Orientation {
        match self {
            Direction::Forward => Orientation::Forward,
            Direction::Backward => Orientation::Reversed,
        }
    }
}

/// Initial state from continuous data: `q_0 = q(0)`, `p_0 = ∂L/∂v(q(0), v(0))`
/// (docs/theory.md §3), after checking the data with
/// [`diracvi_geometry::check_initial`]: `q(0)` admissible (`g_j ≥ 0`) and
/// `v(0) ∈ Δ_Q(q(0))`. A velocity outside the distribution is an error, not
/// projected: the first step would otherwise silently replace it by another
/// (with another energy).
///
/// # Errors
/// [`GeometryError::NonFinite`] for NaN or infinite input,
/// [`GeometryError::InitialInadmissible`] for `q(0)` outside the admissible
/// set, [`GeometryError::InitialViolatesConstraint`] for `A(q(0)) v(0) ≠ 0`.
pub fn state_from_velocity<Sy, const N: usize, const M: usize>(
    system: &Sy,
    t0: f64,
    q0: &SVector<f64, N>,
    v0: &SVector<f64, N>,
) -> Result<State<N>, GeometryError>
where
    Sy: System<N, M>,
{
    diracvi_geometry::ensure_finite("t0", &[t0])?;
    diracvi_geometry::check_initial(system, q0, v0)?;
    let p = system.momentum(q0, v0);
    diracvi_geometry::ensure_finite("p(0) = ∂L/∂v", p.as_slice())?;
    Ok(State { t: t0, q: *q0, p })
}

/// Initial state from a discrete pair `(q_0, q_1)`: `p_0 = −D1 L_d(q_0, q_1, h)`
/// (docs/theory.md §3; \[VCI\] Algorithm 1 prints `D2`, which is the momentum at `q_1`).
///
/// # Errors
/// When `L_d` cannot be evaluated or the input is not finite.
pub fn state_from_pair<Sy, Dm, const N: usize, const M: usize>(
    system: &Sy,
    map: &Dm,
    t0: f64,
    q0: &SVector<f64, N>,
    q1: &SVector<f64, N>,
    h: f64,
) -> Result<State<N>, GeometryError>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    diracvi_geometry::ensure_step(h)?;
    diracvi_geometry::ensure_finite("q_0", q0.as_slice())?;
    diracvi_geometry::ensure_finite("q_1", q1.as_slice())?;
    let ld = DiscreteLagrangian::<Sy, Dm, N, M>::new(system, map);
    Ok(State {
        t: t0,
        q: *q0,
        p: -ld.d1(q0, q1, h)?,
    })
}

/// The discrete pair of \[VCI\] §4.1 from continuous data:
/// `q_0 = q(0) − h/2 v(0)`, `q_1 = q(0) + h/2 v(0)` (this shifts the discrete
/// times by `h/2` against the continuous ones).
pub fn vci_pair<const N: usize>(
    q: &SVector<f64, N>,
    v: &SVector<f64, N>,
    h: f64,
) -> (SVector<f64, N>, SVector<f64, N>) {
    (q - v * (0.5 * h), q + v * (0.5 * h))
}

#[cfg(test)]
mod tests {
    use super::momentum_unit;

    /// Powers of two close to `1/p0` for tiny momenta, 1 otherwise.
    #[test]
    fn momentum_unit_is_a_power_of_two_near_the_inverse() {
        for p0 in [0.0, f64::NAN, f64::INFINITY, 1.0, 1e6, 2f64.powi(-20)] {
            assert_eq!(momentum_unit(p0).to_bits(), 1f64.to_bits(), "{p0}");
        }
        for p0 in [1e-7, 3e-20, 1e-200, 1e-308, 5e-324] {
            let u = momentum_unit(p0);
            assert_eq!(u.log2().fract().to_bits(), 0f64.to_bits(), "{p0}: {u}");
            assert!(u.is_finite() && u <= 2f64.powi(1000), "{p0}: {u}");
            if p0 > 1e-290 {
                assert!((0.7..=1.42).contains(&(u * p0)), "{p0}: {u}");
            }
        }
    }
}
