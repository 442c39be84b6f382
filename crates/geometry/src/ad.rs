//! Small helpers to seed and read num-dual numbers with compile-time sizes.
//!
//! **Dense seeding.** num-dual stores a derivative part that is known to be
//! zero as `None`. The payload of a `None` is uninitialized memory, and the
//! optimiser may compute on it speculatively (a branchless select between
//! the `Some` and `None` results). When those stale bits happen to encode
//! subnormal doubles — small integers left on the stack do — every such
//! operation takes a microcode assist of ~100 cycles: one Hessian–vector
//! product of the LC circuit measured 1.7 µs instead of 0.2 µs, and the
//! `D12` jet 138 ns instead of 49 ns, depending on what was on the stack.
//! So every number these helpers build carries all of its derivative parts,
//! zeros included ([`DenseConstant`]); only constants created inside a
//! user's Lagrangian (`S::from(c)`) stay sparse.

use nalgebra::{Const, SMatrix, SVector, U1};
use num_dual::{Derivative, Dual2SVec, DualSVec, HyperDualSVec64};

/// A dual number type whose constants can be built with every derivative
/// part present and zero (see the module docs for why this matters).
pub trait DenseConstant: nalgebra::Scalar + Copy {
    /// The constant `re` with zero (but present) derivative parts.
    fn constant(re: f64) -> Self;
}

impl<const N: usize> DenseConstant for DualSVec<f64, N> {
    #[inline(always)]
    fn constant(re: f64) -> Self {
        DualSVec::new(re, Derivative::some(SVector::zeros()))
    }
}

impl<const N: usize> DenseConstant for Dual2SVec<f64, N> {
    #[inline(always)]
    fn constant(re: f64) -> Self {
        Dual2SVec::new(
            re,
            Derivative::some(SMatrix::zeros()),
            Derivative::some(SMatrix::zeros()),
        )
    }
}

impl<const A: usize, const B: usize> DenseConstant for HyperDualSVec64<A, B> {
    #[inline(always)]
    fn constant(re: f64) -> Self {
        HyperDualSVec64::new(
            re,
            Derivative::some(SVector::zeros()),
            Derivative::some(SMatrix::zeros()),
            Derivative::some(SMatrix::zeros()),
        )
    }
}

/// `x` as constants of a dual number type (derivative parts zero, present).
#[inline(always)]
pub fn constants<T: DenseConstant, const N: usize>(x: &SVector<f64, N>) -> SVector<T, N> {
    x.map(T::constant)
}

/// `x` as dual numbers seeded for the gradient with respect to all of `x`.
#[inline(always)]
pub fn seed_gradient<const N: usize>(x: &SVector<f64, N>) -> SVector<DualSVec<f64, N>, N> {
    SVector::from_fn(|i, _| {
        let mut d = DualSVec::constant(x[i]);
        if let Some(e) = d.eps.0.as_mut() {
            e[i] = 1.0;
        }
        d
    })
}

/// The chart increment `y − x` as dual numbers whose real part is the exact
/// increment `d` (a step's unknown) instead of the rounded difference of the
/// real parts: the derivative parts are those of `y − x`, so derivatives with
/// respect to the endpoints seeded in `x` and `y` come out right, while the
/// value loses no digits to cancellation (the velocity `d/h` of a short step
/// far from the origin).
#[inline(always)]
pub fn increment<S: crate::AdScalar, const N: usize>(
    x: &SVector<S, N>,
    y: &SVector<S, N>,
    d: &SVector<f64, N>,
) -> SVector<S, N> {
    SVector::from_fn(|i, _| {
        let e = y[i] - x[i];
        // real part: (e.re − e.re) + d = d exactly; derivative parts kept
        e - e.re() + d[i]
    })
}

/// The gradient carried by a dual number (zero if it carries none).
pub fn gradient_of<const N: usize>(d: DualSVec<f64, N>) -> SVector<f64, N> {
    d.eps.unwrap_generic(Const::<N>, U1)
}

/// `x` seeded for the second derivatives with respect to all of `x`.
#[inline(always)]
pub fn seed_hessian<const N: usize>(x: &SVector<f64, N>) -> SVector<Dual2SVec<f64, N>, N> {
    SVector::from_fn(|i, _| {
        let mut d = Dual2SVec::constant(x[i]);
        if let Some(e) = d.v1.0.as_mut() {
            e[i] = 1.0;
        }
        d
    })
}

/// `(value, gradient, Hessian)` carried by a second-order dual number.
pub fn hessian_of<const N: usize>(
    d: Dual2SVec<f64, N>,
) -> (f64, SVector<f64, N>, SMatrix<f64, N, N>) {
    (
        d.re,
        d.v1.unwrap_generic(U1, Const::<N>).transpose(),
        d.v2.unwrap_generic(Const::<N>, Const::<N>),
    )
}

/// Seed `x` as the first (`eps1`) variable block of a hyper-dual vector.
#[inline(always)]
pub fn seed_first<const A: usize, const B: usize>(
    x: &SVector<f64, A>,
) -> SVector<HyperDualSVec64<A, B>, A> {
    SVector::from_fn(|i, _| {
        let mut d = HyperDualSVec64::constant(x[i]);
        if let Some(e) = d.eps1.0.as_mut() {
            e[i] = 1.0;
        }
        d
    })
}

/// Seed `x` as the second (`eps2`) variable block of a hyper-dual vector.
#[inline(always)]
pub fn seed_second<const A: usize, const B: usize>(
    x: &SVector<f64, B>,
) -> SVector<HyperDualSVec64<A, B>, B> {
    SVector::from_fn(|i, _| {
        let mut d = HyperDualSVec64::constant(x[i]);
        if let Some(e) = d.eps2.0.as_mut() {
            e[i] = 1.0;
        }
        d
    })
}

/// `(value, ∂/∂x, ∂/∂y, ∂²/∂x∂y)` carried by a hyper-dual vector number.
pub fn partial_hessian_of<const A: usize, const B: usize>(
    d: HyperDualSVec64<A, B>,
) -> (f64, SVector<f64, A>, SVector<f64, B>, SMatrix<f64, A, B>) {
    (
        d.re,
        d.eps1.unwrap_generic(Const::<A>, U1),
        d.eps2.unwrap_generic(U1, Const::<B>).transpose(),
        d.eps1eps2.unwrap_generic(Const::<A>, Const::<B>),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every number the helpers build carries all its derivative parts
    /// (see the module docs: a `None` part is a performance hazard).
    #[test]
    fn seeds_and_constants_are_dense() {
        let x = SVector::from([0.5, -1.0, 2.0]);
        for d in constants::<DualSVec<f64, 3>, 3>(&x)
            .iter()
            .chain(&seed_gradient(&x))
        {
            assert!(d.eps.0.is_some());
        }
        for d in constants::<Dual2SVec<f64, 3>, 3>(&x)
            .iter()
            .chain(&seed_hessian(&x))
        {
            assert!(d.v1.0.is_some() && d.v2.0.is_some());
        }
        let hyper = constants::<HyperDualSVec64<3, 3>, 3>(&x);
        for d in hyper.iter().chain(&seed_first(&x)).chain(&seed_second(&x)) {
            assert!(d.eps1.0.is_some() && d.eps2.0.is_some() && d.eps1eps2.0.is_some());
        }
        // and they seed the right directions
        let g = seed_gradient(&x);
        assert_eq!(gradient_of(g[1]), SVector::from([0.0, 1.0, 0.0]));
        let (_, d1, d2, d12) =
            partial_hessian_of(seed_first::<3, 3>(&x)[2] * seed_second::<3, 3>(&x)[0]);
        assert_eq!(d1, SVector::from([0.0, 0.0, 0.5]));
        assert_eq!(d2, SVector::from([2.0, 0.0, 0.0]));
        let unit = SMatrix::<f64, 3, 3>::from_fn(|i, j| if (i, j) == (2, 0) { 1.0 } else { 0.0 });
        assert_eq!(d12, unit);
    }
}
