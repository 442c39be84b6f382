//! Systems whose size is known only at run time (docs/theory.md §11): the
//! vocabulary of the core that serves every size.
//!
//! [`DynSystem`] is [`System`] with the coordinates and constraint rows
//! counted at run time: the Lagrangian is still written once over any
//! automatic-differentiation scalar, on slices instead of fixed-size
//! vectors. Every compiled model becomes one through [`Fixed`]; a model
//! read from a file, a netlist or an assembled system implements it
//! directly.
//!
//! Derivatives stay exact. They are taken in *chunks*: a dual number with a
//! fixed number `W` of derivative directions (on the stack, `Copy`, no
//! allocation per operation) is seeded with `W` directions at a time, and
//! the blocks are assembled ([`discrete_lagrangian`]). A gradient of `n`
//! entries costs `⌈n/W⌉` evaluations, a mixed Hessian `⌈n/W⌉²`; for `n ≤ W`
//! it is one evaluation, exactly as in the compile-time-sized core.
//!
//! The discretization maps here are those of `R^n`
//! ([`Discretization::Forward`] and
//! [`Discretization::Midpoint`]), linear in
//! `(q0, q1)`: a discrete force is then `h c F` with the node weight `c`
//! of each end point (docs/theory.md §2.7).

// Blocks of derivative directions are indexed by their offsets.
#![allow(clippy::needless_range_loop)]

mod boundary;
mod chunk;
mod constraint;
pub mod discrete_lagrangian;
mod erased;
mod hamiltonian;
mod legendre;
mod lifted;
mod param_second;
mod reduced;
mod second;
mod terms;

pub use boundary::{
    DynBoundaryFrame, boundary_gradient_dyn, boundary_gradient_into, min_boundary_dyn,
    touch_band_slice, violated_piece_dyn,
};
pub use constraint::{
    constraint_jacobian_dyn, constraint_residual_driven_dyn, constraint_residual_dyn,
    constraint_rows_dyn, evaluate_constraint_dyn, scaled_constraint_residual,
};
pub use discrete_lagrangian::{DynDiscreteLagrangian, DynLdJet, DynLdTimeJet, TERMWISE_ABOVE};
pub use erased::{Erased, ErasedSystem, ScalarHooks};
pub use hamiltonian::{
    DynHamiltonianJet, hamiltonian_jet_dyn, hamiltonian_momentum_gradient_dyn,
    hamiltonian_position_gradient_dyn,
};
pub use legendre::{
    check_initial_dyn, energy_dyn, energy_scale_dyn, legendre_jet_dyn, legendre_jet_terms_dyn,
    momentum_dyn, velocity_from_momentum_dyn,
};
pub use lifted::ParamLifted;
pub use param_second::{LagrangianParamSecond, lagrangian_parameter_second_forward};
pub use reduced::{DynCyclicSymmetry, DynReduced};
pub use second::{
    DynLdSecond, boundary_hessian_dyn, constraint_second_dyn, constraint_second_over,
    forms_velocity_jacobian_dyn, hamiltonian_second_dyn, lagrangian_second_dyn,
    reaction_jacobian_dyn,
};
pub use terms::LagrangianTerms;

use crate::{AdScalar, Discretization, System};
use nalgebra::{SMatrix, SVector};
pub(crate) use terms::Term;

/// A mechanical or electrical system of `n` coordinates and `m` constraint
/// one-forms, both known at run time.
///
/// The same description as [`System`] (docs/theory.md §1): a possibly
/// degenerate Lagrangian `L(q, v)`, the rows of `A(q)` (`Δ_Q = ker A`), the
/// pieces `g_j(q) ≥ 0` of the admissible set, an optional Hamiltonian,
/// an optional gyroscopic force and an optional discrete constraint.
/// Slices passed in have length `n` (`q`, `v`, `p`); outputs are written
/// into the slices given.
///
/// # Example
/// ```
/// use diracvi_geometry::dynamic::{DynSystem, energy_dyn};
/// use diracvi_geometry::AdScalar;
/// use nalgebra::DVector;
/// /// `k` unit masses on a line joined by unit springs.
/// struct Chain { k: usize }
/// impl DynSystem for Chain {
///     fn coordinate_count(&self) -> usize { self.k }
///     fn constraint_count(&self) -> usize { 0 }
///     fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
///         let kinetic = v.iter().fold(S::from(0.0), |acc, &vi| acc + vi * vi * 0.5);
///         let potential = q.windows(2)
///             .fold(S::from(0.0), |acc, w| acc + (w[1] - w[0] - 1.0).powi(2) * 0.5);
///         kinetic - potential
///     }
///     fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
/// }
/// let chain = Chain { k: 12 };
/// let q = DVector::from_fn(12, |i, _| i as f64);
/// let v = DVector::from_element(12, 1.0);
/// assert!((energy_dyn(&chain, &q, &v) - 6.0).abs() < 1e-12);
/// ```
pub trait DynSystem {
    /// Number of configuration coordinates `n`.
    fn coordinate_count(&self) -> usize;

    /// Number of constraint one-forms `m` (0: unconstrained).
    fn constraint_count(&self) -> usize;

    /// The Lagrangian `L(q, v)`, possibly degenerate.
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S;

    /// The constraint one-forms: `A(q)` row-major into `a` (`m × n`
    /// entries, row `r` at `a[r n .. (r + 1) n]`).
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]);

    /// Whether the Lagrangian depends on time explicitly, `L(q, v, t)` (a
    /// driven system: a circuit's time-dependent voltage sources, a forced
    /// oscillator; docs/theory.md §8.8). `false` (the default): `L(q, v)`.
    /// A time-dependent system overrides
    /// [`lagrangian_at`](Self::lagrangian_at) (and
    /// [`lagrangian_term_at`](Self::lagrangian_term_at) when it declares
    /// terms); its [`lagrangian`](Self::lagrangian) is `L(q, v, 0)`. The
    /// steps evaluate `L` at the time of the discretization point (the
    /// interval's start for the forward map, its middle for the midpoint
    /// map) and report the energy `E(q, v, t)` there; what needs `∂/∂h` of
    /// the time as well (impacts, derivatives of a run) refuses such a
    /// system.
    fn time_dependent(&self) -> bool {
        false
    }

    /// `L(q, v, t)`; by default [`lagrangian`](Self::lagrangian) (an
    /// autonomous system). The time is a plain number: the steps freeze it
    /// at the discretization point.
    #[inline(always)]
    fn lagrangian_at<S: AdScalar>(&self, q: &[S], v: &[S], t: f64) -> S {
        let _ = t;
        self.lagrangian(q, v)
    }

    /// Prescribed flows through the constraint rows: the constraints read
    /// `A(q) v + ġ(t) = 0` with `g(t)` given (a circuit's current sources,
    /// whose charges `∫ I dt` a Kirchhoff row must pass; docs/theory.md
    /// §8.8). Writes `g(t)` into `g` and `ġ(t)` into `rate` (`m` entries
    /// each) and returns `true`; `false` (the default, outputs untouched):
    /// `A(q) v = 0`. A system with drives is time-dependent
    /// ([`time_dependent`](Self::time_dependent) must say so). A step over
    /// `[t_lo, t_lo + h]` adds `(g(t_lo + h) − g(t_lo))/h` to its discrete
    /// constraint (in velocity units), so the prescribed charge passes
    /// exactly.
    fn constraint_drive(&self, t: f64, g: &mut [f64], rate: &mut [f64]) -> bool {
        let _ = (t, g, rate);
        false
    }

    /// Number of smooth pieces `g_j` of the admissible set (0: no boundary).
    fn boundary_count(&self) -> usize {
        0
    }

    /// The boundary function `g_j(q)` (admissible iff `g_j(q) ≥ 0`); only
    /// called with `j < boundary_count()`.
    fn boundary<S: AdScalar>(&self, j: usize, q: &[S]) -> S {
        let _ = (j, q);
        S::from(1.0)
    }

    /// The Hamiltonian `H(q, p)`, or `None` (degenerate `L`).
    fn hamiltonian<S: AdScalar>(&self, q: &[S], p: &[S]) -> Option<S> {
        let _ = (q, p);
        None
    }

    /// A gyroscopic (workless) force `F(q, v)` written into `f`; `false`
    /// (the default, `f` untouched) for a system without one. See
    /// [`System::gyroscopic_force`].
    fn gyroscopic_force<S: AdScalar>(&self, q: &[S], v: &[S], f: &mut [S]) -> bool {
        let _ = (q, v, f);
        false
    }

    /// The model's own discrete constraint `ω_d(q0, q1)` (velocity units,
    /// `m` components) written into `c`; `false` (the default) to use the
    /// generic choices. See [`System::discrete_constraint`].
    fn discrete_constraint<S: AdScalar>(&self, q0: &[S], q1: &[S], h: S, c: &mut [S]) -> bool {
        let _ = (q0, q1, h, c);
        false
    }

    /// The Lagrangian as a sum of terms over few coordinates,
    /// `L = Σ_e L_e(q_{S_e}, v_{S_e})` (docs/theory.md §11.4), or `None`
    /// (the default: one term over every coordinate). When given, the
    /// derivatives of `L_d` are taken term by term
    /// ([`lagrangian_term`](Self::lagrangian_term)) for systems of more
    /// than 8 coordinates, and the step Jacobian gets the sparse pattern of
    /// the stencils; [`lagrangian`](Self::lagrangian) must still return the
    /// whole sum (energies and impacts use it).
    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        None
    }

    /// Term `e` of [`lagrangian_terms`](Self::lagrangian_terms), evaluated
    /// on the values of its stencil's coordinates (`q`, `v` of length
    /// `|S_e|`, in the stencil's order). The default, for a system without
    /// terms, is the whole Lagrangian.
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        let _ = e;
        self.lagrangian(q, v)
    }

    /// Term `e` at time `t` (see [`time_dependent`](Self::time_dependent));
    /// by default [`lagrangian_term`](Self::lagrangian_term).
    #[inline(always)]
    fn lagrangian_term_at<S: AdScalar>(&self, e: usize, q: &[S], v: &[S], t: f64) -> S {
        let _ = t;
        self.lagrangian_term(e, q, v)
    }

    /// The stencils of the constraint rows (docs/theory.md §11.4): row `r`
    /// of `A(q)` is zero outside its stencil `S_r` and depends on `q_{S_r}`
    /// only; or `None` (the default: every row over every coordinate). When
    /// given, a large system's step stores its constraint rows, and their
    /// Jacobian, on the stencils ([`constraint_row`](Self::constraint_row));
    /// [`constraint_forms`](Self::constraint_forms) must still write the
    /// whole `A(q)`.
    fn constraint_stencils(&self) -> Option<&LagrangianTerms> {
        None
    }

    /// Whether the rows of `A(q)` are the same at every `q` (Kirchhoff's
    /// law, linear holonomic constraints): a step with declared
    /// [`constraint_stencils`](Self::constraint_stencils) then reads them
    /// once and evaluates its discrete constraint `A (q_{k+1} − q_k)/h`
    /// from them (every point of the step gives the same rows, so the
    /// retraction and midpoint constraints agree). The default, `false`,
    /// is always correct.
    fn constant_constraint_forms(&self) -> bool {
        false
    }

    /// The hidden constraints of the step with `map`, when the system
    /// knows them (docs/theory.md §3.9, §8.2): combinations `yᵀ r` of the
    /// step equations that no unknown enters (`yᵀ J = 0` for the step
    /// Jacobian `J` at every point), each with the equation it *replaces*.
    /// A circuit knows them from its graph (one per loop of capacitors and
    /// voltage sources with the forward map). A step with supplied hidden
    /// constraints checks them on its first solve and then needs no
    /// singular value decomposition, so it runs on sparse storage and for
    /// time-dependent systems. They need constant constraint rows
    /// ([`constant_constraint_forms`](Self::constant_constraint_forms)) and
    /// declared [`lagrangian_terms`](Self::lagrangian_terms). The default,
    /// none, is always correct (a degenerate step then finds its hidden
    /// constraints itself, on dense storage).
    fn hidden_constraints(&self, map: Discretization) -> &[HiddenConstraint] {
        let _ = map;
        &[]
    }

    /// Row `r` of `A(q)` on its stencil (see
    /// [`constraint_stencils`](Self::constraint_stencils)): `q` the values
    /// of the stencil's coordinates, `a` the row's entries at them (both of
    /// length `|S_r|`, in the stencil's order). The default reads the row
    /// out of [`constraint_forms`](Self::constraint_forms) at `q` padded
    /// with zeros (allocating `m × n` entries): a system declaring stencils
    /// overrides it.
    fn constraint_row<S: AdScalar>(&self, r: usize, q: &[S], a: &mut [S]) {
        let (n, m) = (self.coordinate_count(), self.constraint_count());
        let all: Vec<usize>;
        let stencil = match self.constraint_stencils() {
            Some(s) => s.stencil(r),
            None => {
                all = (0..n).collect();
                &all
            }
        };
        let mut full = vec![S::from(0.0); n];
        for (k, &i) in stencil.iter().enumerate() {
            full[i] = q[k];
        }
        let mut forms = vec![S::from(0.0); m * n];
        self.constraint_forms(&full, &mut forms);
        for (k, &i) in stencil.iter().enumerate() {
            a[k] = forms[r * n + i];
        }
    }

    /// Number of parameters `θ` the system can be differentiated in
    /// (docs/theory.md §12.4): `0` (the default) for a system whose
    /// parameters are plain numbers. A system declaring `P > 0` evaluates
    /// every quantity it defines with `θ` as automatic-differentiation
    /// scalars through the `…_with` hooks below, which must agree with the
    /// plain methods at `θ =` [`parameter_values`](Self::parameter_values).
    fn parameter_count(&self) -> usize {
        0
    }

    /// The names of the parameters `θ` (`parameter_count()` entries).
    fn parameter_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// The values of the parameters `θ` the plain methods use.
    fn parameter_values(&self) -> Vec<f64> {
        Vec::new()
    }

    /// `L(q, v; θ)`; by default `L(q, v)` (no parameter dependence).
    fn lagrangian_with<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S]) -> S {
        let _ = theta;
        self.lagrangian(q, v)
    }

    /// `L(q, v, t; θ)` of a time-dependent system (see
    /// [`time_dependent`](Self::time_dependent)). By default
    /// `L(q, v; θ) + L(q, v, t) − L(q, v)`: exact when the part of `L` that
    /// varies in time does not depend on `θ` (a circuit's sine sources are
    /// not among its parameters); a system whose time-dependent part does
    /// overrides it, or refuses the sensitivities
    /// (`NamedDynSystem::parameter_seed`). For an autonomous system,
    /// [`lagrangian_with`](Self::lagrangian_with).
    fn lagrangian_with_at<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S], t: f64) -> S {
        let l = self.lagrangian_with(q, v, theta);
        if self.time_dependent() {
            l + (self.lagrangian_at(q, v, t) - self.lagrangian(q, v))
        } else {
            l
        }
    }

    /// Whether [`lagrangian_term_with`](Self::lagrangian_term_with) gives
    /// each declared term ([`lagrangian_terms`](Self::lagrangian_terms)) of
    /// `L(q, v, t; θ)`: the derivatives in the parameters are then taken
    /// term by term too, so a large system's sensitivities cost about what
    /// its tangent map does. `false` (the default): they take the whole
    /// `L` ([`lagrangian_with_at`](Self::lagrangian_with_at)), always correct.
    fn parameter_terms(&self) -> bool {
        false
    }

    /// Term `e` of `L(q, v, t; θ)` on its stencil's values (see
    /// [`parameter_terms`](Self::parameter_terms)); by default the term at
    /// `t` without `θ`, which only a system without parameters in its terms
    /// may keep.
    fn lagrangian_term_with<S: AdScalar>(
        &self,
        e: usize,
        q: &[S],
        v: &[S],
        theta: &[S],
        t: f64,
    ) -> S {
        let _ = theta;
        self.lagrangian_term_at(e, q, v, t)
    }

    /// `A(q; θ)`, row-major into `a`; by default `A(q)`.
    fn constraint_forms_with<S: AdScalar>(&self, q: &[S], theta: &[S], a: &mut [S]) {
        let _ = theta;
        self.constraint_forms(q, a)
    }

    /// `g_j(q; θ)`; by default `g_j(q)`.
    fn boundary_with<S: AdScalar>(&self, j: usize, q: &[S], theta: &[S]) -> S {
        let _ = theta;
        self.boundary(j, q)
    }

    /// `H(q, p; θ)`; by default `H(q, p)`.
    fn hamiltonian_with<S: AdScalar>(&self, q: &[S], p: &[S], theta: &[S]) -> Option<S> {
        let _ = theta;
        self.hamiltonian(q, p)
    }

    /// The gyroscopic force with parameters; by default without.
    fn gyroscopic_force_with<S: AdScalar>(
        &self,
        q: &[S],
        v: &[S],
        theta: &[S],
        f: &mut [S],
    ) -> bool {
        let _ = theta;
        self.gyroscopic_force(q, v, f)
    }

    /// The system's own discrete constraint with parameters; by default
    /// without.
    fn discrete_constraint_with<S: AdScalar>(
        &self,
        q0: &[S],
        q1: &[S],
        h: S,
        theta: &[S],
        c: &mut [S],
    ) -> bool {
        let _ = theta;
        self.discrete_constraint(q0, q1, h, c)
    }

    /// `∂L/∂θ`, `∂²L/∂θ∂q` and `∂²L/∂θ∂v` at `(q, v)` and the parameter
    /// values ([`parameter_values`](Self::parameter_values)): what the
    /// parameter columns of a step are made of (docs/theory.md §12.4). By
    /// default forward hyper-duals through
    /// [`lagrangian_with`](Self::lagrangian_with)
    /// ([`lagrangian_parameter_second_forward`], `⌈2n/W⌉ ⌈P/W⌉`
    /// evaluations); a system that can differentiate its Lagrangian in
    /// reverse mode overrides it (cost independent of `P`). Must agree with
    /// `lagrangian_with`.
    fn lagrangian_parameter_second(&self, q: &[f64], v: &[f64]) -> LagrangianParamSecond {
        lagrangian_parameter_second_forward(self, q, v)
    }
}

impl<T: DynSystem + ?Sized> DynSystem for &T {
    fn coordinate_count(&self) -> usize {
        (**self).coordinate_count()
    }
    fn constraint_count(&self) -> usize {
        (**self).constraint_count()
    }
    #[inline(always)]
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        (**self).lagrangian(q, v)
    }
    fn time_dependent(&self) -> bool {
        (**self).time_dependent()
    }
    fn constraint_drive(&self, t: f64, g: &mut [f64], rate: &mut [f64]) -> bool {
        (**self).constraint_drive(t, g, rate)
    }
    #[inline(always)]
    fn lagrangian_at<S: AdScalar>(&self, q: &[S], v: &[S], t: f64) -> S {
        (**self).lagrangian_at(q, v, t)
    }
    #[inline(always)]
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        (**self).constraint_forms(q, a)
    }
    fn boundary_count(&self) -> usize {
        (**self).boundary_count()
    }
    #[inline(always)]
    fn boundary<S: AdScalar>(&self, j: usize, q: &[S]) -> S {
        (**self).boundary(j, q)
    }
    fn hamiltonian<S: AdScalar>(&self, q: &[S], p: &[S]) -> Option<S> {
        (**self).hamiltonian(q, p)
    }
    fn gyroscopic_force<S: AdScalar>(&self, q: &[S], v: &[S], f: &mut [S]) -> bool {
        (**self).gyroscopic_force(q, v, f)
    }
    fn discrete_constraint<S: AdScalar>(&self, q0: &[S], q1: &[S], h: S, c: &mut [S]) -> bool {
        (**self).discrete_constraint(q0, q1, h, c)
    }
    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        (**self).lagrangian_terms()
    }
    #[inline(always)]
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        (**self).lagrangian_term(e, q, v)
    }
    #[inline(always)]
    fn lagrangian_term_at<S: AdScalar>(&self, e: usize, q: &[S], v: &[S], t: f64) -> S {
        (**self).lagrangian_term_at(e, q, v, t)
    }
    fn constraint_stencils(&self) -> Option<&LagrangianTerms> {
        (**self).constraint_stencils()
    }
    fn constant_constraint_forms(&self) -> bool {
        (**self).constant_constraint_forms()
    }
    fn hidden_constraints(&self, map: Discretization) -> &[HiddenConstraint] {
        (**self).hidden_constraints(map)
    }
    #[inline(always)]
    fn constraint_row<S: AdScalar>(&self, r: usize, q: &[S], a: &mut [S]) {
        (**self).constraint_row(r, q, a)
    }
    fn parameter_count(&self) -> usize {
        (**self).parameter_count()
    }
    fn parameter_names(&self) -> Vec<String> {
        (**self).parameter_names()
    }
    fn parameter_values(&self) -> Vec<f64> {
        (**self).parameter_values()
    }
    fn lagrangian_parameter_second(&self, q: &[f64], v: &[f64]) -> LagrangianParamSecond {
        (**self).lagrangian_parameter_second(q, v)
    }
    fn lagrangian_with<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S]) -> S {
        (**self).lagrangian_with(q, v, theta)
    }
    fn lagrangian_with_at<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S], t: f64) -> S {
        (**self).lagrangian_with_at(q, v, theta, t)
    }
    fn parameter_terms(&self) -> bool {
        (**self).parameter_terms()
    }
    fn lagrangian_term_with<S: AdScalar>(
        &self,
        e: usize,
        q: &[S],
        v: &[S],
        theta: &[S],
        t: f64,
    ) -> S {
        (**self).lagrangian_term_with(e, q, v, theta, t)
    }
    fn constraint_forms_with<S: AdScalar>(&self, q: &[S], theta: &[S], a: &mut [S]) {
        (**self).constraint_forms_with(q, theta, a)
    }
    fn boundary_with<S: AdScalar>(&self, j: usize, q: &[S], theta: &[S]) -> S {
        (**self).boundary_with(j, q, theta)
    }
    fn hamiltonian_with<S: AdScalar>(&self, q: &[S], p: &[S], theta: &[S]) -> Option<S> {
        (**self).hamiltonian_with(q, p, theta)
    }
    fn gyroscopic_force_with<S: AdScalar>(
        &self,
        q: &[S],
        v: &[S],
        theta: &[S],
        f: &mut [S],
    ) -> bool {
        (**self).gyroscopic_force_with(q, v, theta, f)
    }
    fn discrete_constraint_with<S: AdScalar>(
        &self,
        q0: &[S],
        q1: &[S],
        h: S,
        theta: &[S],
        c: &mut [S],
    ) -> bool {
        (**self).discrete_constraint_with(q0, q1, h, theta, c)
    }
}

/// The drives' rates `ġ(t)` of a system ([`DynSystem::constraint_drive`]),
/// `m` entries, or empty for a system without drives: what the driven
/// constraints `A(q) v + ġ(t) = 0` add to `A(q) v`.
pub fn drive_rate_dyn<Sy: DynSystem + ?Sized>(system: &Sy, t: f64) -> Vec<f64> {
    let m = system.constraint_count();
    if m == 0 || !system.time_dependent() {
        return Vec::new();
    }
    let (mut g, mut rate) = (vec![0.0; m], vec![0.0; m]);
    if system.constraint_drive(t, &mut g, &mut rate) {
        rate
    } else {
        Vec::new()
    }
}

/// A hidden constraint of a degenerate step, supplied by the system
/// ([`DynSystem::hidden_constraints`]): the left null vector
/// `y = (y_q, y_μ)` of the step Jacobian `[[D12 L_d, −Aᵀ], [∂_b ω, 0]]`
/// (entries `(coordinate, value)` and `(row of A, value)`; repeated
/// indices add up), and the equation it replaces. The step keeps the
/// other equations and solves, in place of equation `replaces`, the next
/// step's hidden constraint `yᵀ r_{k+1} = 0`; the current step's `yᵀ r_k`
/// is checked (docs/theory.md §3.9).
#[derive(Debug, Clone, PartialEq)]
pub struct HiddenConstraint {
    /// The equation replaced: a coordinate's momentum equation `i < n`, or
    /// constraint row `n + r`. Its coefficient in `y` must be non-zero, and
    /// zero in every other hidden constraint of the system.
    pub replaces: usize,
    /// `y_q`: coefficients of the momentum equations.
    pub q: Vec<(usize, f64)>,
    /// `y_μ`: coefficients of the constraint rows.
    pub mu: Vec<(usize, f64)>,
}

/// A system frozen at time `t`: its [`lagrangian`](DynSystem::lagrangian)
/// is `L(q, v, t)` ([`DynSystem::lagrangian_at`]), and the functions built
/// on it (energies, Legendre maps) read the system at that time. The same
/// system as the inner one for an autonomous system.
#[derive(Debug, Clone, Copy)]
pub struct AtTime<'a, Sy: ?Sized> {
    system: &'a Sy,
    t: f64,
}

impl<'a, Sy: DynSystem + ?Sized> AtTime<'a, Sy> {
    /// `system` at time `t`.
    pub fn new(system: &'a Sy, t: f64) -> Self {
        Self { system, t }
    }
}

impl<Sy: DynSystem + ?Sized> DynSystem for AtTime<'_, Sy> {
    fn coordinate_count(&self) -> usize {
        self.system.coordinate_count()
    }
    fn constraint_count(&self) -> usize {
        self.system.constraint_count()
    }
    #[inline(always)]
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.system.lagrangian_at(q, v, self.t)
    }
    fn constraint_drive(&self, t: f64, g: &mut [f64], rate: &mut [f64]) -> bool {
        self.system.constraint_drive(t, g, rate)
    }
    #[inline(always)]
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        self.system.constraint_forms(q, a)
    }
    fn boundary_count(&self) -> usize {
        self.system.boundary_count()
    }
    fn boundary<S: AdScalar>(&self, j: usize, q: &[S]) -> S {
        self.system.boundary(j, q)
    }
    fn gyroscopic_force<S: AdScalar>(&self, q: &[S], v: &[S], f: &mut [S]) -> bool {
        self.system.gyroscopic_force(q, v, f)
    }
    fn discrete_constraint<S: AdScalar>(&self, q0: &[S], q1: &[S], h: S, c: &mut [S]) -> bool {
        self.system.discrete_constraint(q0, q1, h, c)
    }
    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        self.system.lagrangian_terms()
    }
    #[inline(always)]
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        self.system.lagrangian_term_at(e, q, v, self.t)
    }
    fn constraint_stencils(&self) -> Option<&LagrangianTerms> {
        self.system.constraint_stencils()
    }
    fn constant_constraint_forms(&self) -> bool {
        self.system.constant_constraint_forms()
    }
    fn hidden_constraints(&self, map: Discretization) -> &[HiddenConstraint] {
        self.system.hidden_constraints(map)
    }
    #[inline(always)]
    fn constraint_row<S: AdScalar>(&self, r: usize, q: &[S], a: &mut [S]) {
        self.system.constraint_row(r, q, a)
    }
}

/// A compile-time-sized [`System`] seen as a [`DynSystem`]: slices are
/// copied into fixed-size vectors (on the stack) and the model's own
/// functions evaluated, so every compiled model runs on the run-time core
/// unchanged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fixed<T, const N: usize, const M: usize>(pub T);

impl<T, const N: usize, const M: usize> Fixed<T, N, M> {
    /// The wrapped system.
    pub fn inner(&self) -> &T {
        &self.0
    }
}

#[inline(always)]
fn fixed<S: AdScalar, const N: usize>(x: &[S]) -> SVector<S, N> {
    debug_assert_eq!(x.len(), N);
    SVector::from_fn(|i, _| x[i])
}

impl<T: System<N, M>, const N: usize, const M: usize> DynSystem for Fixed<T, N, M> {
    fn coordinate_count(&self) -> usize {
        N
    }
    fn constraint_count(&self) -> usize {
        M
    }
    #[inline(always)]
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.0.lagrangian(&fixed::<S, N>(q), &fixed::<S, N>(v))
    }
    #[inline(always)]
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        if M == 0 {
            return;
        }
        let forms: SMatrix<S, M, N> = self.0.constraint_forms(&fixed::<S, N>(q));
        for r in 0..M {
            for c in 0..N {
                a[r * N + c] = forms[(r, c)];
            }
        }
    }
    fn boundary_count(&self) -> usize {
        self.0.boundary_count()
    }
    #[inline(always)]
    fn boundary<S: AdScalar>(&self, j: usize, q: &[S]) -> S {
        self.0.boundary(j, &fixed::<S, N>(q))
    }
    fn hamiltonian<S: AdScalar>(&self, q: &[S], p: &[S]) -> Option<S> {
        self.0.hamiltonian(&fixed::<S, N>(q), &fixed::<S, N>(p))
    }
    fn gyroscopic_force<S: AdScalar>(&self, q: &[S], v: &[S], f: &mut [S]) -> bool {
        match self
            .0
            .gyroscopic_force(&fixed::<S, N>(q), &fixed::<S, N>(v))
        {
            Some(force) => {
                f.copy_from_slice(force.as_slice());
                true
            }
            None => false,
        }
    }
    fn discrete_constraint<S: AdScalar>(&self, q0: &[S], q1: &[S], h: S, c: &mut [S]) -> bool {
        match self
            .0
            .discrete_constraint(&fixed::<S, N>(q0), &fixed::<S, N>(q1), h)
        {
            Some(value) => {
                c.copy_from_slice(value.as_slice());
                true
            }
            None => false,
        }
    }
}
