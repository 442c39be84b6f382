//! Small helpers to seed and read num-dual numbers with compile-time sizes.

use nalgebra::{Const, SMatrix, SVector, U1};
use num_dual::{Dual2SVec, DualSVec, HyperDualSVec64};

/// `x` as dual numbers seeded for the gradient with respect to all of `x`.
pub fn seed_gradient<const N: usize>(x: &SVector<f64, N>) -> SVector<DualSVec<f64, N>, N> {
    SVector::from_fn(|i, _| DualSVec::from_re(x[i]).derivative(i))
}

/// The gradient carried by a dual number (zero if it carries none).
pub fn gradient_of<const N: usize>(d: DualSVec<f64, N>) -> SVector<f64, N> {
    d.eps.unwrap_generic(Const::<N>, U1)
}

/// `x` seeded for the second derivatives with respect to all of `x`.
pub fn seed_hessian<const N: usize>(x: &SVector<f64, N>) -> SVector<Dual2SVec<f64, N>, N> {
    SVector::from_fn(|i, _| Dual2SVec::from_re(x[i]).derivative(i))
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
pub fn seed_first<const A: usize, const B: usize>(
    x: &SVector<f64, A>,
) -> SVector<HyperDualSVec64<A, B>, A> {
    SVector::from_fn(|i, _| HyperDualSVec64::from_re(x[i]).derivative1(i))
}

/// Seed `x` as the second (`eps2`) variable block of a hyper-dual vector.
pub fn seed_second<const A: usize, const B: usize>(
    x: &SVector<f64, B>,
) -> SVector<HyperDualSVec64<A, B>, B> {
    SVector::from_fn(|i, _| HyperDualSVec64::from_re(x[i]).derivative2(i))
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
