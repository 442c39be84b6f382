//! One instantiation of the run-time core for every system (docs/theory.md
//! §11.5): a [`DynSystem`] seen through an object-safe trait.
//!
//! The run-time core is generic over the system; left alone, every model
//! type a program runs gets its own copy of the steppers, the impact
//! integrator, the laws and the tangent code. [`Erased`] is one concrete
//! [`DynSystem`] that holds any system behind a pointer: the core is
//! compiled once for `Erased`, and a model contributes only its own
//! functions (Lagrangian, constraint forms, boundary pieces, Hamiltonian,
//! …), each instantiated for the closed set of scalar types the core
//! evaluates systems over ([`ScalarHooks`]).
//!
//! A call through [`Erased`] costs one indirect call per evaluation of a
//! model function; the evaluation itself (an AD pass over the Lagrangian)
//! is far larger. Results are bit for bit those of the system called
//! directly: the same function runs on the same numbers.

use super::{DynSystem, HiddenConstraint, LagrangianParamSecond, LagrangianTerms};
use crate::{AdScalar, Discretization};
use num_dual::{Dual64, DualSVec, HyperDual64, HyperDualSVec64};
use std::any::TypeId;

/// The model functions of a [`DynSystem`] over one scalar type `S`, in a
/// form a trait object can carry (each method is
/// the [`DynSystem`] method of the same name without the `erased_`).
///
/// Implemented for every [`DynSystem`]; [`ErasedSystem`] gathers it for
/// every scalar type the run-time core uses.
pub trait ScalarHooks<S> {
    /// [`DynSystem::lagrangian_at`] (the plain Lagrangian at `t = 0`).
    fn erased_lagrangian_at(&self, q: &[S], v: &[S], t: f64) -> S;
    /// [`DynSystem::constraint_forms`].
    fn erased_constraint_forms(&self, q: &[S], a: &mut [S]);
    /// [`DynSystem::boundary`].
    fn erased_boundary(&self, j: usize, q: &[S]) -> S;
    /// [`DynSystem::hamiltonian`].
    fn erased_hamiltonian(&self, q: &[S], p: &[S]) -> Option<S>;
    /// [`DynSystem::gyroscopic_force`].
    fn erased_gyroscopic_force(&self, q: &[S], v: &[S], f: &mut [S]) -> bool;
    /// [`DynSystem::discrete_constraint`].
    fn erased_discrete_constraint(&self, q0: &[S], q1: &[S], h: S, c: &mut [S]) -> bool;
    /// [`DynSystem::lagrangian_term_at`].
    fn erased_lagrangian_term_at(&self, e: usize, q: &[S], v: &[S], t: f64) -> S;
    /// [`DynSystem::constraint_row`].
    fn erased_constraint_row(&self, r: usize, q: &[S], a: &mut [S]);
    /// [`DynSystem::lagrangian_with`].
    fn erased_lagrangian_with(&self, q: &[S], v: &[S], theta: &[S]) -> S;
    /// [`DynSystem::lagrangian_with_at`].
    fn erased_lagrangian_with_at(&self, q: &[S], v: &[S], theta: &[S], t: f64) -> S;
    /// [`DynSystem::constraint_forms_with`].
    fn erased_constraint_forms_with(&self, q: &[S], theta: &[S], a: &mut [S]);
    /// [`DynSystem::boundary_with`].
    fn erased_boundary_with(&self, j: usize, q: &[S], theta: &[S]) -> S;
    /// [`DynSystem::hamiltonian_with`].
    fn erased_hamiltonian_with(&self, q: &[S], p: &[S], theta: &[S]) -> Option<S>;
    /// [`DynSystem::gyroscopic_force_with`].
    fn erased_gyroscopic_force_with(&self, q: &[S], v: &[S], theta: &[S], f: &mut [S]) -> bool;
    /// [`DynSystem::discrete_constraint_with`].
    fn erased_discrete_constraint_with(
        &self,
        q0: &[S],
        q1: &[S],
        h: S,
        theta: &[S],
        c: &mut [S],
    ) -> bool;
}

impl<T: DynSystem, S: AdScalar> ScalarHooks<S> for T {
    fn erased_lagrangian_at(&self, q: &[S], v: &[S], t: f64) -> S {
        self.lagrangian_at(q, v, t)
    }
    fn erased_constraint_forms(&self, q: &[S], a: &mut [S]) {
        self.constraint_forms(q, a)
    }
    fn erased_boundary(&self, j: usize, q: &[S]) -> S {
        self.boundary(j, q)
    }
    fn erased_hamiltonian(&self, q: &[S], p: &[S]) -> Option<S> {
        self.hamiltonian(q, p)
    }
    fn erased_gyroscopic_force(&self, q: &[S], v: &[S], f: &mut [S]) -> bool {
        self.gyroscopic_force(q, v, f)
    }
    fn erased_discrete_constraint(&self, q0: &[S], q1: &[S], h: S, c: &mut [S]) -> bool {
        self.discrete_constraint(q0, q1, h, c)
    }
    fn erased_lagrangian_term_at(&self, e: usize, q: &[S], v: &[S], t: f64) -> S {
        self.lagrangian_term_at(e, q, v, t)
    }
    fn erased_constraint_row(&self, r: usize, q: &[S], a: &mut [S]) {
        self.constraint_row(r, q, a)
    }
    fn erased_lagrangian_with(&self, q: &[S], v: &[S], theta: &[S]) -> S {
        self.lagrangian_with(q, v, theta)
    }
    fn erased_lagrangian_with_at(&self, q: &[S], v: &[S], theta: &[S], t: f64) -> S {
        self.lagrangian_with_at(q, v, theta, t)
    }
    fn erased_constraint_forms_with(&self, q: &[S], theta: &[S], a: &mut [S]) {
        self.constraint_forms_with(q, theta, a)
    }
    fn erased_boundary_with(&self, j: usize, q: &[S], theta: &[S]) -> S {
        self.boundary_with(j, q, theta)
    }
    fn erased_hamiltonian_with(&self, q: &[S], p: &[S], theta: &[S]) -> Option<S> {
        self.hamiltonian_with(q, p, theta)
    }
    fn erased_gyroscopic_force_with(&self, q: &[S], v: &[S], theta: &[S], f: &mut [S]) -> bool {
        self.gyroscopic_force_with(q, v, theta, f)
    }
    fn erased_discrete_constraint_with(
        &self,
        q0: &[S],
        q1: &[S],
        h: S,
        theta: &[S],
        c: &mut [S],
    ) -> bool {
        self.discrete_constraint_with(q0, q1, h, theta, c)
    }
}

/// Call `$m!` with the scalar types the run-time core evaluates systems
/// over: `f64`, `Dual64` (time derivatives), `HyperDual64` (a directional
/// second derivative, for the sensitivities of the initial momentum), and the chunked first-order
/// and hyper-dual numbers at the chunk widths 1, 2, 4, 8 (docs/theory.md
/// §11.2: `DualSVec<W>` for gradients, `HyperDualSVec64<W, W>` for
/// Hessian blocks, `HyperDualSVec64<1, W>` for mixed time-and-state
/// derivatives).
macro_rules! core_scalars {
    ($m:ident ! ( $($args:tt)* )) => {
        $m! {
            [
                f64,
                Dual64,
                HyperDual64,
                DualSVec<f64, 1>,
                DualSVec<f64, 2>,
                DualSVec<f64, 4>,
                DualSVec<f64, 8>,
                HyperDualSVec64<1, 1>,
                HyperDualSVec64<2, 2>,
                HyperDualSVec64<4, 4>,
                HyperDualSVec64<8, 8>,
                HyperDualSVec64<1, 2>,
                HyperDualSVec64<1, 4>,
                HyperDualSVec64<1, 8>
            ]
            $($args)*
        }
    };
}

macro_rules! erased_system_trait {
    ([$($t:ty),*]) => {
        /// A [`DynSystem`] as a trait object: its sizes and parameters, and
        /// its model functions over every scalar type of the run-time core
        /// ([`ScalarHooks`]). Implemented for every [`DynSystem`] that is
        /// `Send + Sync`; hold one in an [`Erased`] to run it.
        pub trait ErasedSystem: $(ScalarHooks<$t> +)* Send + Sync {
            /// [`DynSystem::coordinate_count`].
            fn erased_coordinate_count(&self) -> usize;
            /// [`DynSystem::constraint_count`].
            fn erased_constraint_count(&self) -> usize;
            /// [`DynSystem::boundary_count`].
            fn erased_boundary_count(&self) -> usize;
            /// [`DynSystem::time_dependent`].
            fn erased_time_dependent(&self) -> bool;
            /// [`DynSystem::constraint_drive`].
            fn erased_constraint_drive(&self, t: f64, g: &mut [f64], rate: &mut [f64]) -> bool;
            /// [`DynSystem::lagrangian_terms`].
            fn erased_lagrangian_terms(&self) -> Option<&LagrangianTerms>;
            /// [`DynSystem::constraint_stencils`].
            fn erased_constraint_stencils(&self) -> Option<&LagrangianTerms>;
            /// [`DynSystem::constant_constraint_forms`].
            fn erased_constant_constraint_forms(&self) -> bool;
            /// [`DynSystem::hidden_constraints`].
            fn erased_hidden_constraints(&self, map: Discretization) -> &[HiddenConstraint];
            /// [`DynSystem::parameter_count`].
            fn erased_parameter_count(&self) -> usize;
            /// [`DynSystem::parameter_names`].
            fn erased_parameter_names(&self) -> Vec<String>;
            /// [`DynSystem::parameter_values`].
            fn erased_parameter_values(&self) -> Vec<f64>;
            /// [`DynSystem::lagrangian_parameter_second`].
            fn erased_lagrangian_parameter_second(
                &self,
                q: &[f64],
                v: &[f64],
            ) -> LagrangianParamSecond;
        }
    };
}
core_scalars!(erased_system_trait!());

impl<T: DynSystem + Send + Sync> ErasedSystem for T {
    fn erased_coordinate_count(&self) -> usize {
        self.coordinate_count()
    }
    fn erased_constraint_count(&self) -> usize {
        self.constraint_count()
    }
    fn erased_boundary_count(&self) -> usize {
        self.boundary_count()
    }
    fn erased_time_dependent(&self) -> bool {
        self.time_dependent()
    }
    fn erased_constraint_drive(&self, t: f64, g: &mut [f64], rate: &mut [f64]) -> bool {
        self.constraint_drive(t, g, rate)
    }
    fn erased_lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        self.lagrangian_terms()
    }
    fn erased_constraint_stencils(&self) -> Option<&LagrangianTerms> {
        self.constraint_stencils()
    }
    fn erased_constant_constraint_forms(&self) -> bool {
        self.constant_constraint_forms()
    }
    fn erased_hidden_constraints(&self, map: Discretization) -> &[HiddenConstraint] {
        self.hidden_constraints(map)
    }
    fn erased_parameter_count(&self) -> usize {
        self.parameter_count()
    }
    fn erased_parameter_names(&self) -> Vec<String> {
        self.parameter_names()
    }
    fn erased_parameter_values(&self) -> Vec<f64> {
        self.parameter_values()
    }
    fn erased_lagrangian_parameter_second(&self, q: &[f64], v: &[f64]) -> LagrangianParamSecond {
        self.lagrangian_parameter_second(q, v)
    }
}

/// Any [`DynSystem`] behind a pointer: the one system type the run-time
/// core is compiled for (docs/theory.md §11.5).
///
/// ```
/// use diracvi_geometry::dynamic::{DynSystem, Erased, energy_dyn};
/// use diracvi_geometry::AdScalar;
/// use nalgebra::DVector;
/// struct Spring;
/// impl DynSystem for Spring {
///     fn coordinate_count(&self) -> usize { 1 }
///     fn constraint_count(&self) -> usize { 0 }
///     fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
///         v[0] * v[0] * 0.5 - q[0] * q[0] * 0.5
///     }
///     fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
/// }
/// let (q, v) = (DVector::from_element(1, 1.0), DVector::from_element(1, 2.0));
/// let erased: Erased = Erased::new(&Spring);
/// assert_eq!(energy_dyn(&erased, &q, &v), energy_dyn(&Spring, &q, &v));
/// ```
///
/// `O` is the trait object behind the pointer: [`ErasedSystem`] or a
/// trait extending it (a crate adding names to systems erases those too,
/// and implements its own traits for `Erased<'_, dyn ItsTrait>`).
pub struct Erased<'a, O: ?Sized = dyn ErasedSystem>(&'a O);

impl<'a, O: ?Sized> Erased<'a, O> {
    /// Erase `system` (`&model` coerces to `&dyn ErasedSystem`).
    pub fn new(system: &'a O) -> Self {
        Erased(system)
    }

    /// The system behind the pointer.
    pub fn system(&self) -> &'a O {
        self.0
    }
}

impl<O: ?Sized> Clone for Erased<'_, O> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<O: ?Sized> Copy for Erased<'_, O> {}

impl<O: ErasedSystem + ?Sized> std::fmt::Debug for Erased<'_, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Erased")
            .field("coordinates", &self.0.erased_coordinate_count())
            .field("constraints", &self.0.erased_constraint_count())
            .finish()
    }
}

/// `x` as a slice of `T`, which is `S`.
#[inline(always)]
fn cast<S: 'static, T: 'static>(x: &[S]) -> &[T] {
    assert!(TypeId::of::<S>() == TypeId::of::<T>());
    // SAFETY: `S` and `T` are the same type (checked above).
    unsafe { &*(x as *const [S] as *const [T]) }
}

/// `x` as a mutable slice of `T`, which is `S`.
#[inline(always)]
fn cast_mut<S: 'static, T: 'static>(x: &mut [S]) -> &mut [T] {
    assert!(TypeId::of::<S>() == TypeId::of::<T>());
    // SAFETY: `S` and `T` are the same type (checked above).
    unsafe { &mut *(x as *mut [S] as *mut [T]) }
}

/// `x`, a `T`, as the `S` it is.
#[inline(always)]
fn back<T: Copy + 'static, S: Copy + 'static>(x: T) -> S {
    assert!(TypeId::of::<S>() == TypeId::of::<T>());
    // SAFETY: `S` and `T` are the same (`Copy`) type (checked above).
    unsafe { std::mem::transmute_copy(&x) }
}

/// A scalar type outside [`core_scalars`]: a call the core never makes.
#[cold]
fn outside_core<S>() -> ! {
    panic!(
        "Erased: the run-time core evaluated a system over {}, which is not one of its scalar \
         types (geometry::dynamic::erased::core_scalars)",
        std::any::type_name::<S>()
    )
}

/// Run `$body` with the type alias `$t` naming the scalar type `$s` is, out
/// of [`core_scalars`].
macro_rules! dispatch {
    ([$($ty:ty),*] $s:ty, $t:ident => $body:expr) => {{
        $(
            if TypeId::of::<$s>() == TypeId::of::<$ty>() {
                #[allow(dead_code)]
                type $t = $ty;
                return $body;
            }
        )*
        outside_core::<$s>()
    }};
}

impl<O: ErasedSystem + ?Sized> DynSystem for Erased<'_, O> {
    fn coordinate_count(&self) -> usize {
        self.0.erased_coordinate_count()
    }
    fn constraint_count(&self) -> usize {
        self.0.erased_constraint_count()
    }
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.lagrangian_at(q, v, 0.0)
    }
    fn time_dependent(&self) -> bool {
        self.0.erased_time_dependent()
    }
    fn lagrangian_at<S: AdScalar>(&self, q: &[S], v: &[S], t: f64) -> S {
        core_scalars!(dispatch!(S, T => back::<T, S>(
            ScalarHooks::<T>::erased_lagrangian_at(self.0, cast(q), cast(v), t)
        )))
    }
    fn constraint_drive(&self, t: f64, g: &mut [f64], rate: &mut [f64]) -> bool {
        self.0.erased_constraint_drive(t, g, rate)
    }
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        core_scalars!(dispatch!(S, T => ScalarHooks::<T>::erased_constraint_forms(
            self.0,
            cast(q),
            cast_mut(a)
        )))
    }
    fn boundary_count(&self) -> usize {
        self.0.erased_boundary_count()
    }
    fn boundary<S: AdScalar>(&self, j: usize, q: &[S]) -> S {
        core_scalars!(dispatch!(S, T => back::<T, S>(
            ScalarHooks::<T>::erased_boundary(self.0, j, cast(q))
        )))
    }
    fn hamiltonian<S: AdScalar>(&self, q: &[S], p: &[S]) -> Option<S> {
        core_scalars!(dispatch!(S, T => ScalarHooks::<T>::erased_hamiltonian(
            self.0,
            cast(q),
            cast(p)
        )
        .map(back::<T, S>)))
    }
    fn gyroscopic_force<S: AdScalar>(&self, q: &[S], v: &[S], f: &mut [S]) -> bool {
        core_scalars!(dispatch!(S, T => ScalarHooks::<T>::erased_gyroscopic_force(
            self.0,
            cast(q),
            cast(v),
            cast_mut(f)
        )))
    }
    fn discrete_constraint<S: AdScalar>(&self, q0: &[S], q1: &[S], h: S, c: &mut [S]) -> bool {
        core_scalars!(
            dispatch!(S, T => ScalarHooks::<T>::erased_discrete_constraint(
                self.0,
                cast(q0),
                cast(q1),
                back::<S, T>(h),
                cast_mut(c)
            ))
        )
    }
    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        self.0.erased_lagrangian_terms()
    }
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        self.lagrangian_term_at(e, q, v, 0.0)
    }
    fn lagrangian_term_at<S: AdScalar>(&self, e: usize, q: &[S], v: &[S], t: f64) -> S {
        core_scalars!(dispatch!(S, T => back::<T, S>(
            ScalarHooks::<T>::erased_lagrangian_term_at(self.0, e, cast(q), cast(v), t)
        )))
    }
    fn constraint_stencils(&self) -> Option<&LagrangianTerms> {
        self.0.erased_constraint_stencils()
    }
    fn constant_constraint_forms(&self) -> bool {
        self.0.erased_constant_constraint_forms()
    }
    fn hidden_constraints(&self, map: Discretization) -> &[HiddenConstraint] {
        self.0.erased_hidden_constraints(map)
    }
    fn constraint_row<S: AdScalar>(&self, r: usize, q: &[S], a: &mut [S]) {
        core_scalars!(dispatch!(S, T => ScalarHooks::<T>::erased_constraint_row(
            self.0,
            r,
            cast(q),
            cast_mut(a)
        )))
    }
    fn parameter_count(&self) -> usize {
        self.0.erased_parameter_count()
    }
    fn parameter_names(&self) -> Vec<String> {
        self.0.erased_parameter_names()
    }
    fn parameter_values(&self) -> Vec<f64> {
        self.0.erased_parameter_values()
    }
    fn lagrangian_parameter_second(&self, q: &[f64], v: &[f64]) -> LagrangianParamSecond {
        self.0.erased_lagrangian_parameter_second(q, v)
    }
    fn lagrangian_with<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S]) -> S {
        core_scalars!(dispatch!(S, T => back::<T, S>(
            ScalarHooks::<T>::erased_lagrangian_with(self.0, cast(q), cast(v), cast(theta))
        )))
    }
    fn lagrangian_with_at<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S], t: f64) -> S {
        core_scalars!(dispatch!(S, T => back::<T, S>(
            ScalarHooks::<T>::erased_lagrangian_with_at(
                self.0,
                cast(q),
                cast(v),
                cast(theta),
                t
            )
        )))
    }
    fn constraint_forms_with<S: AdScalar>(&self, q: &[S], theta: &[S], a: &mut [S]) {
        core_scalars!(
            dispatch!(S, T => ScalarHooks::<T>::erased_constraint_forms_with(
                self.0,
                cast(q),
                cast(theta),
                cast_mut(a)
            ))
        )
    }
    fn boundary_with<S: AdScalar>(&self, j: usize, q: &[S], theta: &[S]) -> S {
        core_scalars!(dispatch!(S, T => back::<T, S>(
            ScalarHooks::<T>::erased_boundary_with(self.0, j, cast(q), cast(theta))
        )))
    }
    fn hamiltonian_with<S: AdScalar>(&self, q: &[S], p: &[S], theta: &[S]) -> Option<S> {
        core_scalars!(dispatch!(S, T => ScalarHooks::<T>::erased_hamiltonian_with(
            self.0,
            cast(q),
            cast(p),
            cast(theta)
        )
        .map(back::<T, S>)))
    }
    fn gyroscopic_force_with<S: AdScalar>(
        &self,
        q: &[S],
        v: &[S],
        theta: &[S],
        f: &mut [S],
    ) -> bool {
        core_scalars!(
            dispatch!(S, T => ScalarHooks::<T>::erased_gyroscopic_force_with(
                self.0,
                cast(q),
                cast(v),
                cast(theta),
                cast_mut(f)
            ))
        )
    }
    fn discrete_constraint_with<S: AdScalar>(
        &self,
        q0: &[S],
        q1: &[S],
        h: S,
        theta: &[S],
        c: &mut [S],
    ) -> bool {
        core_scalars!(
            dispatch!(S, T => ScalarHooks::<T>::erased_discrete_constraint_with(
                self.0,
                cast(q0),
                cast(q1),
                back::<S, T>(h),
                cast(theta),
                cast_mut(c)
            ))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ad::DenseConstant as _;

    /// A system using every hook, with values that depend on every input.
    struct Everything;
    impl DynSystem for Everything {
        fn coordinate_count(&self) -> usize {
            2
        }
        fn constraint_count(&self) -> usize {
            1
        }
        fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
            (v[0] * v[0] + v[1] * v[1] * 3.0) * 0.5 - q[0].cos() * q[1]
        }
        fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
            a[0] = q[1].sin();
            a[1] = q[0] * 2.0;
        }
        fn boundary_count(&self) -> usize {
            2
        }
        fn boundary<S: AdScalar>(&self, j: usize, q: &[S]) -> S {
            q[j] * q[j] + 0.5
        }
        fn hamiltonian<S: AdScalar>(&self, q: &[S], p: &[S]) -> Option<S> {
            Some((p[0] * p[0] + p[1] * p[1] / 3.0) * 0.5 + q[0].cos() * q[1])
        }
        fn gyroscopic_force<S: AdScalar>(&self, _q: &[S], v: &[S], f: &mut [S]) -> bool {
            f[0] = v[1] * 0.25;
            f[1] = -(v[0] * 0.25);
            true
        }
        fn discrete_constraint<S: AdScalar>(&self, q0: &[S], q1: &[S], h: S, c: &mut [S]) -> bool {
            c[0] = (q1[0] - q0[0]) / h;
            true
        }
        fn parameter_count(&self) -> usize {
            1
        }
        fn parameter_names(&self) -> Vec<String> {
            vec!["k".into()]
        }
        fn parameter_values(&self) -> Vec<f64> {
            vec![0.7]
        }
        fn lagrangian_with<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S]) -> S {
            self.lagrangian(q, v) * theta[0]
        }
        fn lagrangian_with_at<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S], t: f64) -> S {
            self.lagrangian_with(q, v, theta) + q[0] * theta[0] * t
        }
        fn boundary_with<S: AdScalar>(&self, j: usize, q: &[S], theta: &[S]) -> S {
            self.boundary(j, q) - theta[0]
        }
    }

    /// Every hook through [`Erased`] over the scalar type `S` gives the
    /// bits of the direct call.
    fn agrees<S: AdScalar + PartialEq + std::fmt::Debug>() {
        let direct = Everything;
        let erased: Erased = Erased::new(&direct);
        let x = |a: f64| S::from(a);
        let (q, v, p, th) = (
            [x(0.3), x(-1.1)],
            [x(0.7), x(0.2)],
            [x(1.5), x(-0.4)],
            [x(0.7)],
        );
        assert_eq!(erased.lagrangian(&q, &v), direct.lagrangian(&q, &v));
        assert_eq!(erased.hamiltonian(&q, &p), direct.hamiltonian(&q, &p));
        assert_eq!(erased.boundary(1, &q), direct.boundary(1, &q));
        assert_eq!(erased.lagrangian_term(0, &q, &v), direct.lagrangian(&q, &v));
        assert_eq!(
            erased.lagrangian_with(&q, &v, &th),
            direct.lagrangian_with(&q, &v, &th)
        );
        assert_eq!(
            erased.lagrangian_with_at(&q, &v, &th, 0.4),
            direct.lagrangian_with_at(&q, &v, &th, 0.4)
        );
        assert_eq!(
            erased.boundary_with(0, &q, &th),
            direct.boundary_with(0, &q, &th)
        );
        let (mut a, mut b) = ([x(0.0); 2], [x(0.0); 2]);
        erased.constraint_forms(&q, &mut a);
        direct.constraint_forms(&q, &mut b);
        assert_eq!(a, b);
        assert!(erased.gyroscopic_force(&q, &v, &mut a));
        assert!(direct.gyroscopic_force(&q, &v, &mut b));
        assert_eq!(a, b);
        let (mut c, mut d) = ([x(0.0)], [x(0.0)]);
        assert!(erased.discrete_constraint(&q, &v, x(0.1), &mut c));
        assert!(direct.discrete_constraint(&q, &v, x(0.1), &mut d));
        assert_eq!(c, d);
    }

    #[test]
    fn every_core_scalar_reaches_the_system_unchanged() {
        macro_rules! each {
            ([$($t:ty),*]) => { $(agrees::<$t>();)* };
        }
        core_scalars!(each!());
        let erased: Erased = Erased::new(&Everything);
        assert_eq!(erased.coordinate_count(), 2);
        assert_eq!(erased.constraint_count(), 1);
        assert_eq!(erased.boundary_count(), 2);
        assert_eq!(erased.parameter_names(), vec!["k".to_string()]);
        assert_eq!(erased.parameter_values(), vec![0.7]);
    }

    #[test]
    #[should_panic(expected = "not one of its scalar types")]
    fn a_scalar_outside_the_core_is_a_loud_internal_error() {
        let erased: Erased = Erased::new(&Everything);
        let q = [DualSVec::<f64, 3>::constant(0.1); 2];
        erased.lagrangian(&q, &q);
    }
}
