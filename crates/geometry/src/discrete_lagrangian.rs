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
use num_dual::{Dual2SVec, Dual64, DualSVec, HyperDualSVec64};
use std::marker::PhantomData;

/// Which way the discrete Lagrangian's arguments are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Orientation {
    /// `(a, b) = (q_k, q_{k+1})`: forward in time, the (+) equations.
    Forward,
    /// `(a, b) = (q_{k+1}, q_k)`: backward in time, the (−) equations.
    Reversed,
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
    /// `D12 L_d`, entry `(i, j) = ∂²L_d/∂a_i ∂b_j`.
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
    /// `D23 L_d`, entry `j = ∂²L_d/∂h ∂b_j`.
    pub d23: SVector<f64, N>,
}

/// A view `L_d = h L ∘ Ψ_d^h` of a system through a discretization map.
///
/// Cheap to build (two references); steppers build one per call.
pub struct DiscreteLagrangian<'a, Sy, Dm, const N: usize, const M: usize> {
    system: &'a Sy,
    map: &'a Dm,
    orientation: Orientation,
    /// `Some(u)`: `L_d` multiplied by `u` ([`in_units`](Self::in_units)).
    unit: Option<f64>,
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
            unit: None,
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
        Self {
            unit: (unit.to_bits() != 1f64.to_bits()).then_some(unit),
            ..self
        }
    }

    /// The factor set by [`in_units`](Self::in_units) (`1` unless set).
    pub fn unit(&self) -> f64 {
        self.unit.unwrap_or(1.0)
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
        Ok(match self.unit {
            None => l,
            Some(u) => l * u,
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
        let (value, d1, d2, d12) = partial_hessian_of(l);
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
        let (value, d3, d2, d32) = partial_hessian_of(l);
        Ok(LdTimeJet {
            value,
            d3: d3[0],
            d2,
            d23: d32.transpose(),
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
        Ok(gradient_of(l))
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
        Ok(gradient_of(l))
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

    /// `(D1 L_d, D11 L_d)` at `(a, b, h)`.
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
        Ok((g, hh))
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
    /// for the discrete action `S(b) = L_d(a, b) + L_d(b, c)`.
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
        Ok((dy[0], hy.transpose()))
    }

    /// `(D2 L_d, D22 L_d)` at `(a, b, h)`.
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
        Ok((g, hh))
    }
}
