//! The discrete Lagrangian `L_d(q0, q1, h) = h · L(Ψ_d^h(q0, q1))` and its
//! exact derivatives (docs/theory.md §2; \[DDM\] eq. 6.2, \[VCI\] §2).
//!
//! Derivatives come from automatic differentiation of the user's `L`:
//! * [`DiscreteLagrangian::jet`] — `L_d, D1, D2, D12` in one hyper-dual pass;
//! * [`DiscreteLagrangian::time_jet`] — `L_d, D3, D2, D23` (`D3 = ∂/∂h`), for
//!   the discrete energy `E_d = −D3 L_d` and the impact equations of \[VCI\]
//!   Theorem 3.1;
//! * [`DiscreteLagrangian::hessian_first`] / [`hessian_second`](DiscreteLagrangian::hessian_second)
//!   — `D11`, `D22`;
//! * [`DiscreteLagrangian::del_directional`] — the discrete Euler–Lagrange
//!   expression along a direction and its Hessian–vector product, for the
//!   hidden constraints of degenerate systems.
//!
//! A system with a [gyroscopic force](System::gyroscopic_force) `F(q, v)`
//! adds the discrete Lagrange–d'Alembert forces to the first derivatives
//! (docs/theory.md §2.7): with `(q, v) = Ψ_d^h(q0, q1)`,
//! ```text
//! f_d^−(q0, q1) = h (∂q/∂q0)ᵀ F(q, v),    f_d^+(q0, q1) = h (∂q/∂q1)ᵀ F(q, v)
//! ```
//! (`(h/2) F` each for the midpoint map), and every `D1`, `D2` below is
//! `D1 L_d + f_d^−`, `D2 L_d + f_d^+`, with the second derivatives of these
//! sums; `L_d` itself and `D3 L_d` (the discrete energy) do not change.
//!
//! An [`Orientation`] lets the same code serve forward and backward time:
//! the reversed discrete Lagrangian is `L_d^*(a, b, h) = L_d(b, a, h)`. With
//! momenta negated, the (−) equations of \[DDM\] (5.9b) for `L_d` are the (+)
//! equations (5.3b) for `L_d^*`, and the (−) impact conditions of \[VCI\]
//! Theorem 3.1(ii) are the (+) ones of 3.1(i).

use crate::ad::{
    DenseConstant, constants, gradient_of, hessian_of, increment, partial_hessian_of, seed_first,
    seed_gradient, seed_hessian, seed_second,
};
use crate::{AdScalar, DiscretizationMap, GeometryError, System};
use nalgebra::{SMatrix, SVector};
use num_dual::{Dual, Dual2SVec, Dual64, DualSVec, HyperDualSVec64};
use std::marker::PhantomData;

/// Which way the discrete Lagrangian's arguments are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Orientation {
    /// `(a, b) = (q_k, q_{k+1})`: forward in time, the (+) equations.
    Forward,
    /// `(a, b) = (q_{k+1}, q_k)`: backward in time, the (−) equations.
    Reversed,
}

impl Orientation {
    /// The earlier end `t_lo` of the interval in time of a step of length
    /// `h > 0` from time `t` read in this orientation: `t` forward,
    /// `t − h` reversed (where a time-dependent system's `L` and drives
    /// are sampled from, docs/theory.md §8.8).
    pub fn interval_start(self, t: f64, h: f64) -> f64 {
        match self {
            Orientation::Forward => t,
            Orientation::Reversed => t - h,
        }
    }
}

/// `L_d` with first and mixed second derivatives with respect to its two
/// configuration arguments `(a, b)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LdJet<const N: usize> {
    /// `L_d(a, b, h)`.
    pub value: f64,
    /// `D1 L_d = ∂L_d/∂a`.
    pub d1: SVector<f64, N>,
    /// `D2 L_d = ∂L_d/∂b`.
    pub d2: SVector<f64, N>,
    /// `D12 L_d`, entry `(i, j) = ∂²L_d/∂a_i ∂b_j`. With a gyroscopic
    /// force, `∂(D1 L_d + f_d^−)_i/∂b_j`: the Jacobian of the (+) momentum
    /// equation in the unknown `b` (no longer the transpose of `∂D2/∂a`).
    pub d12: SMatrix<f64, N, N>,
}

/// `L_d` with its time-step derivative and the mixed derivative with the
/// second configuration argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LdTimeJet<const N: usize> {
    /// `L_d(a, b, h)`.
    pub value: f64,
    /// `D3 L_d = ∂L_d/∂h`; the discrete energy is `E_d = −D3 L_d`.
    pub d3: f64,
    /// `D2 L_d = ∂L_d/∂b`.
    pub d2: SVector<f64, N>,
    /// `D23 L_d`, entry `j = ∂²L_d/∂h ∂b_j` (with a gyroscopic force,
    /// `∂(D2 L_d + f_d^+)_j/∂h`).
    pub d23: SVector<f64, N>,
}

/// A view `L_d = h L ∘ Ψ_d^h` of a system through a discretization map.
///
/// Cheap to build (two references); steppers build one per call.
pub struct DiscreteLagrangian<'a, Sy, Dm, const N: usize, const M: usize> {
    system: &'a Sy,
    map: &'a Dm,
    orientation: Orientation,
    /// `L_d` is multiplied by `unit` ([`in_units`](Self::in_units)); `1` by
    /// default. A plain `f64`, not an `Option`: the payload of an
    /// `Option<f64>`'s `None` is uninitialized, and the multiplication the
    /// optimiser performs speculatively on stale subnormal bits costs a
    /// microcode assist (measured: `D1` of the pendulum 18 or 47 ns
    /// depending on what was on the stack before; see [`crate::ad`]).
    unit: f64,
    _m: PhantomData<[(); M]>,
}

impl<Sy, Dm, const N: usize, const M: usize> Clone for DiscreteLagrangian<'_, Sy, Dm, N, M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<Sy, Dm, const N: usize, const M: usize> Copy for DiscreteLagrangian<'_, Sy, Dm, N, M> {}

impl<'a, Sy, Dm, const N: usize, const M: usize> DiscreteLagrangian<'a, Sy, Dm, N, M>
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    /// The forward-oriented discrete Lagrangian of `system` through `map`.
    pub fn new(system: &'a Sy, map: &'a Dm) -> Self {
        Self {
            system,
            map,
            orientation: Orientation::Forward,
            unit: 1.0,
            _m: PhantomData,
        }
    }

    /// The same discrete Lagrangian read with the given orientation.
    pub fn oriented(self, orientation: Orientation) -> Self {
        Self {
            orientation,
            ..self
        }
    }

    /// The same discrete Lagrangian multiplied by `unit`, which must be a
    /// power of two so that the product is exact (`1`: unchanged).
    ///
    /// `c L` has the same equations of motion as `L`, with momenta,
    /// multipliers and energies multiplied by `c`. Steppers solve in such
    /// units when a system's momenta are far below 1 (a mass of `1e-20`),
    /// so that the equations are neither resolved below round-off nor
    /// declared solved at the first guess (docs/theory.md §3.7).
    pub fn in_units(self, unit: f64) -> Self {
        Self { unit, ..self }
    }

    /// The factor set by [`in_units`](Self::in_units) (`1` unless set).
    pub fn unit(&self) -> f64 {
        self.unit
    }

    /// The orientation in use.
    pub fn orientation(&self) -> Orientation {
        self.orientation
    }

    /// The system.
    pub fn system(&self) -> &'a Sy {
        self.system
    }

    /// The discretization map.
    pub fn map(&self) -> &'a Dm {
        self.map
    }

    /// `h · L(Ψ_d^h(q0, q1))` in the raw (forward) argument order, with the
    /// exact increment `d = q1 − q0`.
    #[inline(always)]
    fn raw<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        d: &SVector<S, N>,
        h: S,
    ) -> Result<S, GeometryError> {
        let (q, v) = self.map.psi_step(q0, q1, d, h)?;
        let l = self.system.lagrangian(&q, &v) * h;
        Ok(if self.unit.to_bits() == 1f64.to_bits() {
            l
        } else {
            l * self.unit
        })
    }

    /// `L_d(a, b, h)` in this orientation, for any scalar type.
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, b)`.
    #[inline(always)]
    pub fn value<S: AdScalar>(
        &self,
        a: &SVector<S, N>,
        b: &SVector<S, N>,
        h: S,
    ) -> Result<S, GeometryError> {
        self.value_step(a, b, &SVector::from_fn(|i, _| b[i] - a[i]), h)
    }

    /// `L_d(a, b, h)` given also the exact chart increment `d = b − a` (the
    /// unknown the steppers solve for; `b = a + d` is only known rounded).
    /// The discretization map takes the velocity from `d`
    /// ([`DiscretizationMap::psi_step`]).
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, b)`.
    #[inline(always)]
    pub fn value_step<S: AdScalar>(
        &self,
        a: &SVector<S, N>,
        b: &SVector<S, N>,
        d: &SVector<S, N>,
        h: S,
    ) -> Result<S, GeometryError> {
        match self.orientation {
            Orientation::Forward => self.raw(a, b, d, h),
            Orientation::Reversed => self.raw(b, a, &d.map(|x| -x), h),
        }
    }

    /// The discrete forces of the raw (forward) step `(q0, q1)`:
    /// `f_i = h (∂q/∂q_i)ᵀ F(q, v)` (times the unit) at
    /// `(q, v) = Ψ_d^h(q0, q1)`, `None` without a gyroscopic force. The
    /// node's derivatives `∂q/∂q_i` come from one more dual layer over `S`,
    /// with `d` moved along (`d = q1 − q0`).
    #[allow(clippy::type_complexity)]
    fn raw_forces<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        d: &SVector<S, N>,
        h: S,
    ) -> Result<Option<(SVector<S, N>, SVector<S, N>)>, GeometryError> {
        let (q, v) = self.map.psi_step(q0, q1, d, h)?;
        let Some(force) = self.system.gyroscopic_force(&q, &v) else {
            return Ok(None);
        };
        let weight = force * (h * self.unit());
        let zero = S::from(0.0);
        let lift = |x: &SVector<S, N>| x.map(|xi| Dual::<S>::new(xi, zero));
        let (x, y, dd, hd) = (lift(q0), lift(q1), lift(d), Dual::<S>::new(h, zero));
        let mut forces = [SVector::<S, N>::from_element(zero); 2];
        for (end, f) in forces.iter_mut().enumerate() {
            for i in 0..N {
                let (mut x, mut y, mut dd) = (x, y, dd);
                if end == 0 {
                    x[i].eps = S::from(1.0);
                    dd[i].eps = S::from(-1.0);
                } else {
                    y[i].eps = S::from(1.0);
                    dd[i].eps = S::from(1.0);
                }
                let (node, _) = self.map.psi_step(&x, &y, &dd, hd)?;
                f[i] = (0..N).fold(zero, |acc, j| acc + weight[j] * node[j].eps);
            }
        }
        Ok(Some((forces[0], forces[1])))
    }

    /// The discrete forces `(f_a, f_b)` on the two arguments in this
    /// orientation (`f_d^−`, `f_d^+` forward; swapped reversed, as `D1` and
    /// `D2` are), `None` without a gyroscopic force.
    #[allow(clippy::type_complexity)]
    #[inline(always)]
    fn forces_step<S: AdScalar>(
        &self,
        a: &SVector<S, N>,
        b: &SVector<S, N>,
        d: &SVector<S, N>,
        h: S,
    ) -> Result<Option<(SVector<S, N>, SVector<S, N>)>, GeometryError> {
        match self.orientation {
            Orientation::Forward => self.raw_forces(a, b, d, h),
            Orientation::Reversed => Ok(self
                .raw_forces(b, a, &d.map(|x| -x), h)?
                .map(|(f_b, f_a)| (f_a, f_b))),
        }
    }

    /// Whether the system has a gyroscopic force (evaluated at `(a, b)`).
    #[inline(always)]
    fn forced(&self, a: &SVector<f64, N>, b: &SVector<f64, N>) -> bool {
        self.system.gyroscopic_force(a, &(b - a)).is_some()
    }

    /// `L_d, D1, D2, D12` at `(a, b, h)` in one hyper-dual pass.
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, b)`.
    #[inline]
    pub fn jet(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        h: f64,
    ) -> Result<LdJet<N>, GeometryError> {
        self.jet_at(a, b, &(b - a), h)
    }

    /// [`jet`](Self::jet) at `(a, a + d, h)` from the exact increment `d`.
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, a + d)`.
    #[inline]
    pub fn jet_increment(
        &self,
        a: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<LdJet<N>, GeometryError> {
        self.jet_at(a, &(a + d), d, h)
    }

    #[inline(always)]
    fn jet_at(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<LdJet<N>, GeometryError> {
        let hd = HyperDualSVec64::<N, N>::constant(h);
        let (x, y) = (seed_first::<N, N>(a), seed_second::<N, N>(b));
        let l = self.value_step(&x, &y, &increment(&x, &y, d), hd)?;
        let (value, mut d1, mut d2, mut d12) = partial_hessian_of(l);
        if self.forced(a, b) {
            let x: SVector<DualSVec<f64, N>, N> = constants(a);
            let y = seed_gradient(b);
            if let Some((f_a, f_b)) =
                self.forces_step(&x, &y, &increment(&x, &y, d), DualSVec::constant(h))?
            {
                (d1, d12) = add_force_jacobian(d1, d12, Some(f_a));
                d2 += f_b.map(|f| f.re);
            }
        }
        Ok(LdJet { value, d1, d2, d12 })
    }

    /// `L_d, D3, D2, D23` at `(a, b, h)` in one hyper-dual pass.
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, b)`.
    pub fn time_jet(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        h: f64,
    ) -> Result<LdTimeJet<N>, GeometryError> {
        self.time_jet_at(a, b, &(b - a), h)
    }

    /// [`time_jet`](Self::time_jet) at `(a, a + d, h)` from the exact increment `d`.
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, a + d)`.
    pub fn time_jet_increment(
        &self,
        a: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<LdTimeJet<N>, GeometryError> {
        self.time_jet_at(a, &(a + d), d, h)
    }

    fn time_jet_at(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<LdTimeJet<N>, GeometryError> {
        let hd = seed_first::<1, N>(&SVector::from([h]))[0];
        let x: SVector<HyperDualSVec64<1, N>, N> = constants(a);
        let y = seed_second::<1, N>(b);
        let l = self.value_step(&x, &y, &increment(&x, &y, d), hd)?;
        let (value, d3, mut d2, d32) = partial_hessian_of(l);
        let mut d23 = d32.transpose();
        if self.forced(a, b) {
            let (x, y) = (a.map(Dual64::from_re), b.map(Dual64::from_re));
            let dd = d.map(Dual64::from_re);
            if let Some((_, f_b)) =
                self.forces_step(&x, &y, &dd, Dual64::from_re(h).derivative())?
            {
                for j in 0..N {
                    d2[j] += f_b[j].re;
                    d23[j] += f_b[j].eps;
                }
            }
        }
        Ok(LdTimeJet {
            value,
            d3: d3[0],
            d2,
            d23,
        })
    }

    /// `D1 L_d(a, b, h)` alone.
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, b)`.
    pub fn d1(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        h: f64,
    ) -> Result<SVector<f64, N>, GeometryError> {
        self.d1_at(a, b, &(b - a), h)
    }

    /// `D1 L_d(a, a + d, h)` from the exact increment `d`.
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, a + d)`.
    pub fn d1_increment(
        &self,
        a: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<SVector<f64, N>, GeometryError> {
        self.d1_at(a, &(a + d), d, h)
    }

    fn d1_at(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<SVector<f64, N>, GeometryError> {
        let x = seed_gradient(a);
        let y: SVector<DualSVec<f64, N>, N> = constants(b);
        let l = self.value_step(&x, &y, &increment(&x, &y, d), DualSVec::constant(h))?;
        let mut d1 = gradient_of(l);
        if self.forced(a, b)
            && let Some((f_a, _)) = self.forces_step(a, b, d, h)?
        {
            d1 += f_a;
        }
        Ok(d1)
    }

    /// `D2 L_d(a, b, h)` alone.
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, b)`.
    pub fn d2(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        h: f64,
    ) -> Result<SVector<f64, N>, GeometryError> {
        self.d2_at(a, b, &(b - a), h)
    }

    /// `D2 L_d(a, a + d, h)` from the exact increment `d`.
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, a + d)`.
    pub fn d2_increment(
        &self,
        a: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<SVector<f64, N>, GeometryError> {
        self.d2_at(a, &(a + d), d, h)
    }

    fn d2_at(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<SVector<f64, N>, GeometryError> {
        let x: SVector<DualSVec<f64, N>, N> = constants(a);
        let y = seed_gradient(b);
        let l = self.value_step(&x, &y, &increment(&x, &y, d), DualSVec::constant(h))?;
        let mut d2 = gradient_of(l);
        if self.forced(a, b)
            && let Some((_, f_b)) = self.forces_step(a, b, d, h)?
        {
            d2 += f_b;
        }
        Ok(d2)
    }

    /// `D3 L_d(a, b, h) = ∂L_d/∂h`.
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, b)`.
    pub fn d3(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        h: f64,
    ) -> Result<f64, GeometryError> {
        self.d3_at(a, b, &(b - a), h)
    }

    fn d3_at(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<f64, GeometryError> {
        let x: SVector<Dual64, N> = a.map(Dual64::from_re);
        let y: SVector<Dual64, N> = b.map(Dual64::from_re);
        let dd: SVector<Dual64, N> = d.map(Dual64::from_re);
        Ok(self
            .value_step(&x, &y, &dd, Dual64::from_re(h).derivative())?
            .eps)
    }

    /// The discrete energy `E_d(a, b, h) = −D3 L_d(a, b, h)` (\[VCI\] Thm 3.1).
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, b)`.
    pub fn energy(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        h: f64,
    ) -> Result<f64, GeometryError> {
        Ok(-self.d3(a, b, h)?)
    }

    /// The discrete energy `E_d(a, a + d, h)` from the exact increment `d`.
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, a + d)`.
    pub fn energy_increment(
        &self,
        a: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<f64, GeometryError> {
        Ok(-self.d3_at(a, &(a + d), d, h)?)
    }

    /// `(D1 L_d, D11 L_d)` at `(a, b, h)` (with a gyroscopic force,
    /// `D1 L_d + f_a` and its Jacobian in `a`, row `i` the gradient of
    /// component `i`).
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, b)`.
    pub fn hessian_first(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        h: f64,
    ) -> Result<(SVector<f64, N>, SMatrix<f64, N, N>), GeometryError> {
        let x = seed_hessian(a);
        let y: SVector<Dual2SVec<f64, N>, N> = constants(b);
        let (_, g, hh) = hessian_of(self.value(&x, &y, Dual2SVec::constant(h))?);
        if !self.forced(a, b) {
            return Ok((g, hh));
        }
        let (x, y): (_, SVector<DualSVec<f64, N>, N>) = (seed_gradient(a), constants(b));
        let forces = self.forces_step(&x, &y, &(y - x), DualSVec::constant(h))?;
        Ok(add_force_jacobian(g, hh, forces.map(|(f_a, _)| f_a)))
    }

    /// The discrete Euler–Lagrange expression `D2 L_d(a, b, h) + D1 L_d(b, c, h)`
    /// (\[DDM\] eq. 5.3b with the momentum eliminated; \[VCI\] eq. (1))
    /// contracted with a direction `y`, and its gradient with respect to the
    /// middle point `b`:
    /// ```text
    /// ( yᵀ (D2 L_d(a, b) + D1 L_d(b, c)),  (D22 L_d(a, b) + D11 L_d(b, c)) y )
    /// ```
    /// — a Hessian–vector product, in one hyper-dual pass with `1 + N`
    /// derivative directions instead of the `N²` of
    /// [`hessian_first`](Self::hessian_first) + [`hessian_second`](Self::hessian_second).
    /// Both Hessians are symmetric, so the gradient of `yᵀ ∇_b S` is `∇²_b S y`
    /// for the discrete action `S(b) = L_d(a, b) + L_d(b, c)`. With a
    /// gyroscopic force the expression gains `yᵀ (f_b(a, b) + f_a(b, c))` and
    /// the gradient is that of the whole scalar in `b` (what the hidden
    /// constraints of degenerate systems need).
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, b)` or `(b, c)`.
    pub fn del_directional(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        c: &SVector<f64, N>,
        h: f64,
        y: &SVector<f64, N>,
    ) -> Result<(f64, SVector<f64, N>), GeometryError> {
        self.del_directional_at(a, b, c, &(b - a), &(c - b), h, y)
    }

    /// [`del_directional`](Self::del_directional) at `b = a + d_ab`,
    /// `c = b + d_bc` from the exact increments.
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, b)` or `(b, c)`.
    pub fn del_directional_increment(
        &self,
        a: &SVector<f64, N>,
        d_ab: &SVector<f64, N>,
        d_bc: &SVector<f64, N>,
        h: f64,
        y: &SVector<f64, N>,
    ) -> Result<(f64, SVector<f64, N>), GeometryError> {
        let b = a + d_ab;
        self.del_directional_at(a, &b, &(b + d_bc), d_ab, d_bc, h, y)
    }

    #[allow(clippy::too_many_arguments)]
    fn del_directional_at(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        c: &SVector<f64, N>,
        d_ab: &SVector<f64, N>,
        d_bc: &SVector<f64, N>,
        h: f64,
        y: &SVector<f64, N>,
    ) -> Result<(f64, SVector<f64, N>), GeometryError> {
        let mut mid = seed_second::<1, N>(b);
        for (m, yi) in mid.iter_mut().zip(y.iter()) {
            if let Some(e) = m.eps1.0.as_mut() {
                e[0] = *yi;
            }
        }
        let hd = HyperDualSVec64::<1, N>::constant(h);
        let (ad, cd) = (constants(a), constants(c));
        let s = self.value_step(&ad, &mid, &increment(&ad, &mid, d_ab), hd)?
            + self.value_step(&mid, &cd, &increment(&mid, &cd, d_bc), hd)?;
        let (_, dy, _, hy) = partial_hessian_of(s);
        let (mut value, mut gradient) = (dy[0], hy.transpose());
        if self.forced(a, b) {
            // yᵀ (f_d^+(a, b) + f_d^−(b, c)) and its gradient in `b`.
            let bd = seed_gradient(b);
            let (ad, cd): (SVector<DualSVec<f64, N>, N>, _) = (constants(a), constants(c));
            let hd = DualSVec::constant(h);
            let before = self.forces_step(&ad, &bd, &increment(&ad, &bd, d_ab), hd)?;
            let after = self.forces_step(&bd, &cd, &increment(&bd, &cd, d_bc), hd)?;
            if let (Some((_, f_b)), Some((f_a, _))) = (before, after) {
                for i in 0..N {
                    let f = f_b[i] + f_a[i];
                    value += y[i] * f.re;
                    gradient += gradient_of(f) * y[i];
                }
            }
        }
        Ok((value, gradient))
    }

    /// `(D2 L_d, D22 L_d)` at `(a, b, h)` (with a gyroscopic force,
    /// `D2 L_d + f_b` and its Jacobian in `b`).
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(a, b)`.
    pub fn hessian_second(
        &self,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        h: f64,
    ) -> Result<(SVector<f64, N>, SMatrix<f64, N, N>), GeometryError> {
        let x: SVector<Dual2SVec<f64, N>, N> = constants(a);
        let y = seed_hessian(b);
        let (_, g, hh) = hessian_of(self.value(&x, &y, Dual2SVec::constant(h))?);
        if !self.forced(a, b) {
            return Ok((g, hh));
        }
        let (x, y): (SVector<DualSVec<f64, N>, N>, _) = (constants(a), seed_gradient(b));
        let forces = self.forces_step(&x, &y, &(y - x), DualSVec::constant(h))?;
        Ok(add_force_jacobian(g, hh, forces.map(|(_, f_b)| f_b)))
    }
}

/// `(g + f, H + ∂f)` for a discrete force `f` carrying its gradient in the
/// seeded argument (row `i` of `∂f` is the gradient of `f_i`).
fn add_force_jacobian<const N: usize>(
    mut g: SVector<f64, N>,
    mut hh: SMatrix<f64, N, N>,
    force: Option<SVector<DualSVec<f64, N>, N>>,
) -> (SVector<f64, N>, SMatrix<f64, N, N>) {
    if let Some(f) = force {
        for i in 0..N {
            g[i] += f[i].re;
            let row = gradient_of(f[i]);
            for j in 0..N {
                hh[(i, j)] += row[j];
            }
        }
    }
    (g, hh)
}
