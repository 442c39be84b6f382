//! The (+) and (−) discrete Lagrange–Dirac steppers of a run-time-sized
//! system (\[DDM\] eqs. 5.3b, 5.9b; \[VCI\] eqs. (1), (2)): the counterpart of
//! [`LagrangeDirac`](crate::LagrangeDirac) for a [`DynSystem`].
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
//! Both are one oriented solve (see [`Orientation`]):
//! `π_a + D1 L(a, b, h) − A(a)ᵀ μ = 0`, `ω(a, b) = 0`, `π_b = D2 L(a, b, h)`.
//!
//! The numerics are those of the compile-time-sized stepper, operation for
//! operation: momentum units ([`momentum_unit`](crate::momentum_unit)), the
//! extrapolated warm start, the increment `d = b − a` as Newton's unknown,
//! the regular path (lazy Newton from the factored first Jacobian), the
//! degenerate path (hidden constraints from the left null space of the step
//! Jacobian, simplified Newton with kept factors; docs/theory.md §3.9), the
//! symmetric reaction split, the cached `D2 L_d` momentum and compensated
//! position sums. A [`Fixed`](diracvi_geometry::dynamic::Fixed) system
//! therefore follows the same trajectory, bit for bit. Every buffer of the
//! Newton solve is allocated once, by the constructor.

use super::degenerate;
use super::equations::{Buffers, Scratch, StepEquations, Work, constant_rows_times};
use super::sparse_step::{SparseLayout, fill_forms, forms_transpose_times_rows};
use super::supplied::SuppliedHidden;
use super::{
    DynOneStep, DynPositionCarry, DynStepOutput, DynSubStep, DynSubStepper, dyn_advance,
    dyn_step_state, validate_step_dyn,
};
use crate::assembly::StepJacobian;
use crate::linear::LinearSolver;
use crate::newton::{Newton, NewtonInfo, NewtonParams};
use crate::structured_lu::{Structure, StructuredLu};
use crate::{Direction, DynState, StepError, StepStats};
use diracvi_geometry::dynamic::{
    DynDiscreteLagrangian, DynLdJet, DynSystem, constraint_residual_driven_dyn,
    scaled_constraint_residual,
};
use diracvi_geometry::{ConstraintDiscretization, Discretization, GeometryError, Orientation};
use nalgebra::{DMatrix, DVector};

/// Result of one oriented solve (see [`OrientedStep`](crate::OrientedStep)).
#[derive(Debug, Clone, PartialEq)]
pub struct DynOrientedStep {
    /// The unknown endpoint `b = a + d` (rounded).
    pub b: DVector<f64>,
    /// The increment `d = b − a`, the unknown Newton solves for (exact: not
    /// the rounded difference `b − a`).
    pub d: DVector<f64>,
    /// The multipliers `μ`.
    pub mu: DVector<f64>,
    /// The constraint reaction `A(a)ᵀ μ` (docs/theory.md §3.8).
    pub reaction: DVector<f64>,
    /// The oriented momentum at `b`, `π_b = D2 L(a, b, h)`.
    pub pi_b: DVector<f64>,
    /// Newton statistics.
    pub info: NewtonInfo,
    /// Whether the degenerate (hidden-constraint) path was used.
    pub degenerate: bool,
    /// Jacobians the stepper evaluated itself before handing the solve to
    /// Newton (see [`OrientedStep`](crate::OrientedStep)): 1, or 0 when the
    /// solve started from kept factors.
    pub step_jacobians: usize,
}

/// A discrete Lagrange–Dirac stepper of a run-time-sized system, (+)
/// (\[DDM\] 5.3b) or (−) (\[DDM\] 5.9b): [`LagrangeDirac`](crate::LagrangeDirac)
/// for a [`DynSystem`], with the maps of `R^n` ([`Discretization`]).
///
/// Newton's linear algebra goes through the [`LinearSolver`] `LS`, and the
/// step Jacobian is written into its storage ([`StepJacobian`]): by
/// default [`StructuredLu`], chosen by the system's structure
/// ([`StructuredLu::for_step`]) — the dense LU with a dense Jacobian, or,
/// for a system that declares its Lagrangian term by term (and its
/// constraint rows by their stencils) with sparse couplings, the sparse LU
/// with the Jacobian assembled straight into the pattern's values: no
/// `(n + m)²` buffer in its step (docs/theory.md §11.4). Dense storage can
/// be asked for with [`with_linear_solver`](Self::with_linear_solver) and
/// [`StructuredLu::dense`]. A degenerate step whose hidden constraints the
/// system supplies ([`DynSystem::hidden_constraints`]: a circuit's loops)
/// solves with them on either storage (docs/theory.md §8.2). With sparse
/// storage a degenerate step without them (its hidden constraints would
/// come from a dense SVD) is refused with [`StepError::Unsupported`], as is
/// a point where `D12 L_d` is not taken term by term (a gyroscopic force).
///
/// # Example
/// A harmonic oscillator `L = ½ v² − ½ q²`, midpoint rule, 1 000 steps.
/// ```
/// use diracvi_discrete_dirac::dynamic::{DynLagrangeDirac, dyn_state_from_velocity};
/// use diracvi_discrete_dirac::Direction;
/// use diracvi_geometry::dynamic::DynSystem;
/// use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization};
/// use nalgebra::DVector;
///
/// struct Oscillator;
/// impl DynSystem for Oscillator {
///     fn coordinate_count(&self) -> usize { 1 }
///     fn constraint_count(&self) -> usize { 0 }
///     fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
///         (v[0] * v[0] - q[0] * q[0]) * 0.5
///     }
///     fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
/// }
///
/// let mut stepper = DynLagrangeDirac::new(
///     Oscillator,
///     Discretization::Midpoint,
///     ConstraintDiscretization::Midpoint,
///     Direction::Forward,
/// );
/// let q0 = DVector::from_element(1, 1.0);
/// let v0 = DVector::zeros(1);
/// let mut state = dyn_state_from_velocity(&Oscillator, 0.0, &q0, &v0)?;
/// for k in 0..1000 {
///     state = stepper.step(&state, 0.01)?.0;
/// }
/// assert!((state.q[0] - state.t.cos()).abs() < 1e-4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct DynLagrangeDirac<Sy, LS: LinearSolver = StructuredLu> {
    system: Sy,
    map: Discretization,
    constraint: ConstraintDiscretization,
    params: NewtonParams,
    direction: Direction,
    /// The constraint reaction split symmetrically between the two ends of
    /// the step (docs/theory.md §9.1).
    symmetric: bool,
    /// `n`, `m` of the system, read once.
    n: usize,
    m: usize,
    /// Buffers and warm-start state of the steps taken.
    main: SolverContext<LS>,
    /// The same for trial solves (event location), so that they leave the
    /// steps' warm start untouched.
    trial: SolverContext<LS>,
    /// The last increment and the step it was taken with.
    last_increment: Option<(DVector<f64>, f64)>,
    /// The one before, for the extrapolated warm start.
    previous_increment: Option<(DVector<f64>, f64)>,
    /// Storage of the warm-start guess of the steps taken.
    guess: DVector<f64>,
    carry: DynPositionCarry,
    /// The units of the step equations ([`crate::momentum_unit`]), fixed at
    /// the first solve.
    unit: Option<f64>,
    /// The hidden constraints the system supplies for the map
    /// ([`DynSystem::hidden_constraints`]), prepared; `Err` says why the
    /// step cannot use them.
    supplied: Result<Option<SuppliedHidden>, String>,
}

/// The data of the step equations that stay fixed during one solve.
#[derive(Debug, Clone)]
struct StepData {
    /// `u π_a`.
    pi_a: DVector<f64>,
    /// `A(a)`, row-major `m × n`.
    a_forms: Vec<f64>,
    /// The drive's offset of each constraint row this step (see
    /// [`drive_offset`]); empty for a system without drives.
    drive: Vec<f64>,
    /// `g(t_lo)` and `ġ` for [`drive_offset`].
    drive_scratch: [Vec<f64>; 2],
    /// Whether `a_forms` holds constant rows, read once
    /// ([`DynSystem::constant_constraint_forms`]).
    forms_constant: bool,
    /// The next step's drive offset (supplied hidden constraints with a
    /// `y_μ`; else empty).
    drive_next: Vec<f64>,
    /// Work buffer of the supplied hidden constraints' term gradients.
    gradient: Vec<f64>,
}

/// The offset `(g(t_lo + h) − g(t_lo))/h` a system's drives
/// ([`DynSystem::constraint_drive`]) add to the discrete constraint of the
/// step over `[t_lo, t_lo + h]`, written into `offset` (resized to `m`);
/// `offset` left empty for a system without drives.
/// `scratch` holds `g(t_lo)` and `ġ` (no allocation after the first step).
pub(super) fn drive_offset<Sy: DynSystem + ?Sized>(
    system: &Sy,
    t_lo: f64,
    h: f64,
    offset: &mut Vec<f64>,
    scratch: &mut [Vec<f64>; 2],
) {
    let m = system.constraint_count();
    offset.clear();
    if m == 0 || !system.time_dependent() {
        return;
    }
    let [g_lo, rate] = scratch;
    for v in [&mut *g_lo, &mut *rate] {
        v.clear();
        v.resize(m, 0.0);
    }
    if !system.constraint_drive(t_lo, g_lo, rate) {
        return;
    }
    offset.resize(m, 0.0);
    system.constraint_drive(t_lo + h, offset, rate);
    for (o, g) in offset.iter_mut().zip(g_lo.iter()) {
        *o = (*o - g) / h;
    }
}

/// Newton buffers and the state a solve leaves for the next one: the kept
/// LU factors, the hidden-constraint basis, the last multipliers.
#[derive(Debug, Clone)]
struct SolverContext<LS: LinearSolver> {
    data: StepData,
    work: Work<LS>,
    /// Where the entries go in sparse storage (`None`: dense storage).
    layout: Option<SparseLayout>,
    /// With sparse storage or supplied hidden constraints: the step `h`
    /// (bits) of the equations whose Jacobian factors the solver holds,
    /// kept for the next solve with the same `h` (simplified Newton); with
    /// supplied hidden constraints also the `h` they were verified for.
    kept_h: Option<u64>,
    /// With sparse storage: solvers holding the factors of the equations
    /// at other step sizes (bits of `h`), parked while the current one
    /// serves `kept_h` (see [`SolverContext::recall`]).
    parked: Vec<(u64, LS)>,
}

/// Factors of at most this many other step sizes are parked
/// ([`SolverContext::recall`]): enough for every composition's distinct
/// stage sizes (Kahan–Li's forward stages take four, its backward ones
/// one).
const PARKED_AT_MOST: usize = 4;

/// Factors are parked only for systems of at most this many unknowns
/// (`n + m`): above it, each set of sparse factors is large enough that
/// holding five of them would be felt, and a composed step refactors at
/// every change of stage size instead.
const PARK_SIZE_AT_MOST: usize = 1 << 20;

/// The sparse layout of the step Jacobian in `solver`'s storage, `None`
/// for dense storage.
///
/// # Errors
/// As [`SparseLayout::new`].
fn layout_for<Sy, LS>(
    system: &Sy,
    constraint: ConstraintDiscretization,
    solver: &LS,
) -> Result<Option<SparseLayout>, String>
where
    Sy: DynSystem,
    LS: LinearSolver,
    LS::Jacobian: StepJacobian,
{
    match solver.new_jacobian().sparse() {
        None => Ok(None),
        Some(j) => SparseLayout::new(system, constraint, j.pattern()).map(Some),
    }
}

impl<LS> SolverContext<LS>
where
    LS: LinearSolver,
    LS::Jacobian: StepJacobian,
{
    fn new(n: usize, m: usize, solver: LS, layout: Option<SparseLayout>) -> Self {
        let size = n + m;
        // Sparse storage: the forms on the row stencils, no `n × n` or
        // `(n + m)²` buffer (the degenerate path, which needs them, is
        // refused).
        let (forms_len, dense_size, d12, domega) = match &layout {
            None => (m * n, size, n, (m, n)),
            Some(l) if l.declared_rows => (l.forms_len, 0, 0, (0, 0)),
            Some(l) => (l.forms_len, 0, 0, (m, n)),
        };
        Self {
            data: StepData {
                pi_a: DVector::zeros(n),
                a_forms: vec![0.0; forms_len],
                drive: Vec::new(),
                drive_scratch: [Vec::new(), Vec::new()],
                forms_constant: false,
                drive_next: Vec::new(),
                gradient: Vec::new(),
            },
            layout,
            kept_h: None,
            parked: Vec::new(),
            work: Work {
                ws: Newton::with_solver(solver),
                scratch: Scratch {
                    full_r: DVector::zeros(size),
                    full_jac: DMatrix::zeros(dense_size, dense_size),
                    next_r: DVector::zeros(size),
                },
                x: DVector::zeros(size),
                x_start: DVector::zeros(size),
                bufs: Buffers {
                    cache_d: DVector::from_element(n, f64::NAN),
                    cache_pi_b: DVector::zeros(n),
                    d: DVector::zeros(n),
                    mu: DVector::zeros(m),
                    b: DVector::zeros(n),
                    c: DVector::zeros(n),
                    d1: DVector::zeros(n),
                    d1_next: DVector::zeros(n),
                    pi_b: DVector::zeros(n),
                    force: DVector::zeros(n),
                    omega: DVector::zeros(m),
                    domega: DMatrix::zeros(domega.0, domega.1),
                    forms: vec![0.0; forms_len],
                    jet: DynLdJet {
                        value: 0.0,
                        d1: DVector::zeros(n),
                        d2: DVector::zeros(n),
                        d12: DMatrix::zeros(d12, d12),
                    },
                    y_q: DVector::zeros(n),
                },
                hidden: None,
                last_mu: DVector::zeros(m),
            },
        }
    }
}

impl<LS: LinearSolver> SolverContext<LS> {
    /// Before a solve at step `h` (bits) with sparse storage: bring back
    /// the factors of the equations at `h` if they are parked, parking the
    /// current ones (of `kept_h`) in their place, so that a composition's
    /// stages of different sizes (docs/theory.md §9.4) each start from the
    /// factors of their own size instead of factoring at every change of
    /// size. Factors met for the first time at a new size park the current
    /// ones (a copy) while there is room; the solve then factors at `h`.
    /// Simplified Newton checks that parked factors still contract, as it
    /// does for kept ones, and factors afresh when they do not.
    fn recall(&mut self, h: u64) {
        let Self {
            work,
            kept_h,
            parked,
            ..
        } = self;
        if *kept_h == Some(h) || work.ws.size() > PARK_SIZE_AT_MOST {
            return;
        }
        let slot = parked.iter().position(|(k, _)| *k == h);
        match (*kept_h, slot) {
            (Some(k), Some(i)) => {
                work.ws.swap_solver(&mut parked[i].1);
                parked[i].0 = k;
                *kept_h = Some(h);
            }
            (None, Some(i)) => {
                let (_, mut solver) = parked.swap_remove(i);
                work.ws.swap_solver(&mut solver);
                *kept_h = Some(h);
            }
            (Some(k), None) if parked.len() < PARKED_AT_MOST && work.ws.has_factors() => {
                parked.push((k, work.ws.solver().clone()));
            }
            _ => {}
        }
    }
}

impl<Sy: DynSystem> DynLagrangeDirac<Sy> {
    /// The (+) stepper, forward in time (\[DDM\] 5.3b).
    pub fn plus(system: Sy, map: Discretization, constraint: ConstraintDiscretization) -> Self {
        Self::new(system, map, constraint, Direction::Forward)
    }

    /// The (−) stepper, backward in time (\[DDM\] 5.9b).
    pub fn minus(system: Sy, map: Discretization, constraint: ConstraintDiscretization) -> Self {
        Self::new(system, map, constraint, Direction::Backward)
    }

    /// A stepper for the given direction: (+) forward, (−) backward, with
    /// the linear solver and the Jacobian's storage chosen by the step
    /// Jacobian's structure ([`StructuredLu::for_step`]).
    pub fn new(
        system: Sy,
        map: Discretization,
        constraint: ConstraintDiscretization,
        direction: Direction,
    ) -> Self {
        let mut solver = StructuredLu::for_step(&system, constraint);
        let supplied = SuppliedHidden::new(&system, map);
        if let (Structure::Sparse, Ok(Some(hidden))) = (solver.structure(), &supplied) {
            // The replaced equations' entries join the pattern.
            let size = system.coordinate_count() + system.constraint_count();
            if let Some(mut pattern) = StructuredLu::step_pattern(&system, constraint) {
                pattern.extend(hidden.entries(&system));
                solver = StructuredLu::sparse(pattern, size)
                    .unwrap_or_else(|_| StructuredLu::dense(size));
            }
        }
        let layout = layout_for(&system, constraint, &solver).unwrap_or_else(|_| {
            // The structure's pattern always holds the step's entries;
            // dense storage should it not.
            solver = StructuredLu::dense(system.coordinate_count() + system.constraint_count());
            None
        });
        Self::build(system, map, constraint, direction, solver, layout, supplied)
    }
}

impl<Sy, LS> DynLagrangeDirac<Sy, LS>
where
    Sy: DynSystem,
    LS: LinearSolver,
    LS::Jacobian: StepJacobian,
{
    /// A stepper whose Newton solves go through `solver` (for `n + m`
    /// unknowns; the trial solves get a clone), writing the step Jacobian
    /// into the solver's storage.
    ///
    /// # Errors
    /// [`StepError::Unsupported`] when the solver's size is not `n + m`, or
    /// its storage is sparse and the system's step Jacobian cannot be
    /// assembled into it (no terms declared, or the pattern lacks an entry
    /// of the step Jacobian).
    pub fn with_linear_solver(
        system: Sy,
        map: Discretization,
        constraint: ConstraintDiscretization,
        direction: Direction,
        solver: LS,
    ) -> Result<Self, StepError> {
        let size = system.coordinate_count() + system.constraint_count();
        if solver.size() != size {
            return Err(StepError::Unsupported(format!(
                "the linear solver is for {} unknowns, the step has n + m = {size}",
                solver.size()
            )));
        }
        let layout = layout_for(&system, constraint, &solver).map_err(StepError::Unsupported)?;
        let supplied = SuppliedHidden::new(&system, map);
        Ok(Self::build(
            system, map, constraint, direction, solver, layout, supplied,
        ))
    }

    fn build(
        system: Sy,
        map: Discretization,
        constraint: ConstraintDiscretization,
        direction: Direction,
        solver: LS,
        layout: Option<SparseLayout>,
        mut supplied: Result<Option<SuppliedHidden>, String>,
    ) -> Self {
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        if let Ok(Some(hidden)) = &mut supplied {
            hidden.locate(&solver.new_jacobian());
        }
        Self {
            system,
            map,
            constraint,
            params: NewtonParams::default(),
            direction,
            symmetric: false,
            n,
            m,
            main: SolverContext::new(n, m, solver.clone(), layout.clone()),
            trial: SolverContext::new(n, m, solver, layout),
            last_increment: None,
            previous_increment: None,
            guess: DVector::zeros(n),
            carry: DynPositionCarry::new(n),
            unit: None,
            supplied,
        }
    }

    /// Replace the Newton parameters.
    pub fn with_params(mut self, params: NewtonParams) -> Self {
        self.params = params;
        self
    }

    /// The symmetric (self-adjoint) variant (docs/theory.md §9.1; see
    /// [`LagrangeDirac::symmetric`](crate::LagrangeDirac::symmetric)): the
    /// constraint reaction is shared between the two ends of the step,
    /// ```text
    /// p_k + D1 L_d(q_k, q_{k+1}, h) = A(q_k)ᵀ μ,
    /// p_{k+1} = D2 L_d(q_k, q_{k+1}, h) − A(q_{k+1})ᵀ μ,   ω_d(q_k, q_{k+1}) = 0.
    /// ```
    /// With the midpoint map and constraint the map is self-adjoint. Without
    /// constraints it is the plain stepper.
    pub fn symmetric(mut self) -> Self {
        self.symmetric = true;
        self
    }

    /// Whether the constraint reaction is split symmetrically
    /// ([`symmetric`](Self::symmetric)).
    pub fn is_symmetric(&self) -> bool {
        self.symmetric
    }

    /// How the step Jacobian is stored and factored: [`Structure::Sparse`]
    /// when it is assembled into a sparse pattern's values (no `(n + m)²`
    /// buffer), [`Structure::Dense`] otherwise.
    pub fn jacobian_structure(&self) -> Structure {
        if self.main.layout.is_some() {
            Structure::Sparse
        } else {
            Structure::Dense
        }
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
    pub fn map(&self) -> Discretization {
        self.map
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
    pub fn discrete_lagrangian(&self) -> DynDiscreteLagrangian<'_, Sy> {
        DynDiscreteLagrangian::new(&self.system, self.map).oriented(self.orientation())
    }

    /// The increment `d = q_{k+1} − q_k` of the last step (exact, as solved
    /// for), or `None` before the first step or after
    /// [`reset_warm_start`](Self::reset_warm_start).
    pub fn last_increment(&self) -> Option<&DVector<f64>> {
        self.last_increment.as_ref().map(|(d, _)| d)
    }

    /// The multipliers `μ` of the last step taken.
    pub fn last_multipliers(&self) -> DVector<f64> {
        &self.main.work.last_mu / self.unit.unwrap_or(1.0)
    }

    /// Forget warm-start data (call after a discontinuity such as an impact).
    pub fn reset_warm_start(&mut self) {
        self.last_increment = None;
        self.previous_increment = None;
    }

    /// One step from `state` with step `h`: (+) gives the state at `t + h`,
    /// (−) the state at `t − h`. `k` is the step index for error messages.
    /// Warm-started from the previous step's increment; positions are summed
    /// with compensation (see [`LagrangeDirac::step`](crate::LagrangeDirac::step)).
    ///
    /// # Errors
    /// [`StepError`] with the step index and time.
    pub fn step(&mut self, state: &DynState, h: f64) -> Result<(DynState, StepStats), StepError> {
        dyn_step_state(self, state, h)
    }

    /// The oriented step from `(a, π_a)` as a step taken: warm-started from
    /// the last increments, and recording this one.
    ///
    /// # Errors
    /// As [`solve_oriented`](Self::solve_oriented).
    pub fn step_oriented(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
    ) -> Result<DynOrientedStep, StepError> {
        // Warm start: the last increment extrapolated linearly, or the last
        // one alone after a change of step.
        let same = |h1: f64| h1.to_bits() == h.to_bits();
        let mut guess = std::mem::take(&mut self.guess);
        guess.resize_vertically_mut(self.n, 0.0);
        match (&self.last_increment, &self.previous_increment) {
            (Some((last, h1)), Some((previous, h0))) if same(*h1) && same(*h0) => {
                for i in 0..self.n {
                    guess[i] = last[i] * 2.0 - previous[i];
                }
            }
            (Some((last, h1)), _) => {
                let r = h / h1;
                for i in 0..self.n {
                    guess[i] = last[i] * r;
                }
            }
            (None, _) => guess.fill(0.0),
        }
        let s = self.step_oriented_from(t, a, pi_a, h, &guess);
        self.guess = guess;
        s
    }

    /// [`step_oriented`](Self::step_oriented) from the increment guess
    /// `guess` (a composed method's stage extrapolation) instead of the
    /// last increments; records this increment all the same.
    ///
    /// # Errors
    /// As [`solve_oriented`](Self::solve_oriented).
    pub fn step_oriented_from(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        guess: &DVector<f64>,
    ) -> Result<DynOrientedStep, StepError> {
        let s = self.solve_oriented(t, a, pi_a, h, guess)?;
        // Rotate the two kept increments, reusing the older one's storage.
        let mut kept = match self.previous_increment.take() {
            Some((v, _)) if v.len() == s.d.len() => v,
            _ => DVector::zeros(s.d.len()),
        };
        kept.copy_from(&s.d);
        self.previous_increment = self.last_increment.replace((kept, h));
        Ok(s)
    }

    /// `a + d` with the compensated summation of the steps taken (`a`, `d`
    /// of `n` entries; otherwise the plain sum of the common entries, with
    /// no carry).
    pub fn add_with_carry(&mut self, a: &DVector<f64>, d: &DVector<f64>) -> DVector<f64> {
        if a.len() != self.n || d.len() != self.n {
            return DVector::from_iterator(
                a.len().min(d.len()),
                a.iter().zip(d.iter()).map(|(x, y)| x + y),
            );
        }
        self.carry.add(a, d)
    }

    /// [`add_with_carry`](Self::add_with_carry) into `out` (the plain sum
    /// `a + d` there already is replaced), for inputs of `n` entries.
    fn add_with_carry_into(&mut self, a: &DVector<f64>, d: &DVector<f64>, out: &mut DVector<f64>) {
        if a.len() != self.n || d.len() != self.n || out.len() != self.n {
            *out = self.add_with_carry(a, d);
            return;
        }
        self.carry.add_into(a, d, out);
    }

    /// Solve the oriented step equations for `b = a + d` given `(a, π_a)`,
    /// step `h` (possibly a fraction of the grid step), from the initial
    /// guess `guess` of the increment `d`; `t` is the time of `a` (errors name it).
    /// Newton's unknowns are the increment `d` and the multipliers (see
    /// [`LagrangeDirac::solve_oriented`](crate::LagrangeDirac::solve_oriented)).
    ///
    /// # Errors
    /// [`StepError`] on bad `h`, input of the wrong length, non-convergence,
    /// inconsistency or a failed geometric evaluation.
    pub fn solve_oriented(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        guess: &DVector<f64>,
    ) -> Result<DynOrientedStep, StepError> {
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
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        guess: &DVector<f64>,
    ) -> Result<DynOrientedStep, StepError> {
        self.solve_in(true, t, a, pi_a, h, guess)
    }

    #[allow(clippy::too_many_arguments)]
    fn solve_in(
        &mut self,
        trial: bool,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        guess: &DVector<f64>,
    ) -> Result<DynOrientedStep, StepError> {
        let orientation = self.orientation();
        let (n, m) = (self.n, self.m);
        let Self {
            system,
            map,
            constraint,
            params,
            main,
            trial: trial_context,
            unit,
            symmetric,
            supplied,
            ..
        } = self;
        let symmetric = *symmetric && m > 0;
        let (system, map, constraint, params) = (&*system, *map, *constraint, &*params);
        let w = if trial { trial_context } else { main };
        validate_step_dyn(t, h, a, pi_a)?;
        let geo = |source| StepError::Geometry { t, source };
        for (what, len) in [("a", a.len()), ("π_a", pi_a.len()), ("guess", guess.len())] {
            if len != n {
                return Err(geo(GeometryError::DimensionMismatch {
                    what,
                    expected: n,
                    got: len,
                }));
            }
        }
        if n == 0 {
            return Err(StepError::Unsupported(
                "a system without coordinates has no step".to_owned(),
            ));
        }
        let t_lo = orientation.interval_start(t, h);
        let ld = DynDiscreteLagrangian::new(system, map)
            .oriented(orientation)
            .starting_at(t_lo);
        // Trial solves (locating an impact) take sizes that do not recur.
        if !trial && w.layout.is_some() && supplied.as_ref().is_ok_and(|s| s.is_none()) {
            w.recall(h.to_bits());
        }
        let SolverContext {
            data,
            work,
            layout,
            kept_h,
            ..
        } = w;
        let layout = layout.as_ref();
        let rows = layout.and_then(|l| l.rows(system));
        // The step equations are solved for `u L_d` (momenta and
        // multipliers times `u`, a power of two): `u = 1` unless the momenta
        // at the first solve are tiny (docs/theory.md §3.7).
        let unit = match *unit {
            Some(u) => u,
            None => {
                let d1 = &mut work.bufs.d1;
                ld.d1_increment(a, guess, h, d1).map_err(geo)?;
                *unit.insert(crate::momentum_unit(pi_a.amax().max(d1.amax())))
            }
        };
        work.x.rows_mut(0, n).copy_from(guess);
        work.x.rows_mut(n, m).copy_from(&work.last_mu);
        for i in 0..n {
            data.pi_a[i] = pi_a[i] * unit;
        }
        // Constant rows on their stencils are read once.
        let constant_rows = rows.is_some()
            && constraint != ConstraintDiscretization::Model
            && system.constant_constraint_forms();
        if !(constant_rows && data.forms_constant) {
            fill_forms(system, rows, a.as_slice(), &mut data.a_forms);
            data.forms_constant = constant_rows;
        }
        drive_offset(system, t_lo, h, &mut data.drive, &mut data.drive_scratch);
        let eq = StepEquations {
            ld: ld.in_units(unit),
            cd: constraint,
            a,
            pi_a: &data.pi_a,
            pi_a_max: crate::newton::max_abs(data.pi_a.as_slice()),
            a_forms: &data.a_forms,
            drive: &data.drive,
            h,
            n,
            m,
            layout,
            constant_rows,
        };
        let supplied = match supplied {
            Ok(supplied) => supplied.as_ref(),
            Err(why) => {
                return Err(StepError::Unsupported(format!("at t = {t}: {why}")));
            }
        };
        let mut step_jacobians = 0;
        let (result, degenerate) = if let Some(hidden) = supplied {
            // The system supplies the hidden constraints: the replaced
            // equations, checked once per `h`, with kept factors.
            let next_start = match orientation {
                Orientation::Forward => t_lo + h,
                Orientation::Reversed => t_lo - h,
            };
            if hidden.needs_drive() {
                drive_offset(
                    system,
                    next_start,
                    h,
                    &mut data.drive_next,
                    &mut data.drive_scratch,
                );
            }
            if *kept_h != Some(h.to_bits()) {
                eq.full(
                    &work.x,
                    &mut work.ws.r,
                    Some(&mut work.ws.jac),
                    &mut work.bufs,
                )
                .map_err(geo)?;
                step_jacobians += 1;
                hidden.verify(&work.ws.jac, n, t)?;
                work.ws.clear_factors();
                *kept_h = Some(h.to_bits());
            }
            let (bufs, gradient, drive_next) =
                (&mut work.bufs, &mut data.gradient, &data.drive_next);
            let scale0 = eq
                .full::<LS::Jacobian>(&work.x, &mut work.ws.r, None, bufs)
                .map_err(geo)?;
            let current = hidden.current(&work.ws.r, n) / scale0;
            if current > 1e3 * params.tolerance {
                return Err(StepError::Inconsistent {
                    t,
                    residual: current,
                });
            }
            hidden
                .replace::<_, LS::Jacobian>(
                    &eq,
                    &work.x,
                    next_start,
                    drive_next,
                    &mut work.ws.r,
                    None,
                    gradient,
                )
                .map_err(geo)?;
            let eval =
                |x: &DVector<f64>, r: &mut DVector<f64>, mut j: Option<&mut LS::Jacobian>| {
                    let scale = eq.full(x, r, j.as_deref_mut(), bufs)?;
                    hidden.replace(&eq, x, next_start, drive_next, r, j, gradient)?;
                    Ok(scale)
                };
            let result = work
                .ws
                .solve_kept(&mut work.x, &mut work.x_start, params, scale0, eval);
            (result, true)
        } else {
            // Sparse storage, the same `h` as the solve whose factors are held:
            // simplified Newton from those factors, residual-only evaluations
            // while they contract (no Jacobian and no factorization for a
            // linear system); a fresh solve should they fail.
            let simplified =
                layout.is_some() && *kept_h == Some(h.to_bits()) && work.ws.has_factors();
            if simplified {
                let bufs = &mut work.bufs;
                let scale0 = eq
                    .full::<LS::Jacobian>(&work.x, &mut work.ws.r, None, bufs)
                    .map_err(geo)?;
                let eval =
                    |x: &DVector<f64>, r: &mut DVector<f64>, j: Option<&mut LS::Jacobian>| {
                        eq.full(x, r, j, bufs)
                    };
                let result =
                    work.ws
                        .solve_kept(&mut work.x, &mut work.x_start, params, scale0, eval);
                (result, false)
            } else {
                // First evaluation decides regular vs degenerate.
                step_jacobians += 1;
                let scale0 = eq
                    .full(
                        &work.x,
                        &mut work.ws.r,
                        Some(&mut work.ws.jac),
                        &mut work.bufs,
                    )
                    .map_err(geo)?;
                let hidden_still_valid = degenerate::hidden_still_valid(work);
                let degenerate = hidden_still_valid || work.ws.factor(params).is_err();

                let result = if !degenerate {
                    work.hidden = None;
                    let bufs = &mut work.bufs;
                    // `factor` left the LU factors of this Jacobian in the solver.
                    work.ws
                        .solve_lazy(&mut work.x, params, Some(scale0), true, |x, r, j| {
                            eq.full(x, r, j, bufs)
                        })
                } else if system.time_dependent() {
                    // The next step's hidden constraints would need `L_d` over the
                    // next interval as well.
                    return Err(StepError::Unsupported(format!(
                        "at t = {t}: the step Jacobian is singular (a degenerate Lagrangian) \
                         and the Lagrangian depends on time; degenerate steps of time-dependent \
                         systems are not supported yet"
                    )));
                } else {
                    degenerate::solve(work, &eq, params, scale0, hidden_still_valid, t)?
                };
                *kept_h = (layout.is_some() && !degenerate).then_some(h.to_bits());
                (result, degenerate)
            }
        };
        let info = result.map_err(|f| StepError::from_newton(f, t, params.tolerance))?;
        let d: DVector<f64> = work.x.rows(0, n).into_owned();
        let b = a + &d;
        work.last_mu.copy_from(&work.x.rows(n, m));
        let mu = &work.last_mu / unit;
        // `D2 L(a, b, h)` came with the last evaluation, unless polishing
        // went back to an earlier iterate.
        let bufs = &mut work.bufs;
        let cached = d
            .iter()
            .zip(bufs.cache_d.iter())
            .all(|(u, v)| u.to_bits() == v.to_bits());
        let mut pi_b = if cached {
            &bufs.cache_pi_b / unit
        } else {
            let mut out = DVector::zeros(n);
            DynDiscreteLagrangian::new(system, map)
                .oriented(orientation)
                .starting_at(t_lo)
                .d2_increment(a, &d, h, &mut out)
                .map_err(geo)?;
            out
        };
        if symmetric {
            // The other half of the reaction impulse, at the end point:
            // `p_{k+1} − p_k = D1 L_d + D2 L_d − (A(q_k) + A(q_{k+1}))ᵀ μ`.
            fill_forms(system, rows, b.as_slice(), &mut bufs.forms);
            forms_transpose_times_rows(rows, &bufs.forms, &mu, &mut bufs.force);
            pi_b -= &bufs.force;
        }
        if pi_b.iter().any(|v| !v.is_finite()) {
            return Err(StepError::NonFinite {
                t,
                what: "momentum",
                iterations: info.iterations,
            });
        }
        let mut reaction = DVector::zeros(n);
        forms_transpose_times_rows(rows, eq.a_forms, &mu, &mut reaction);
        Ok(DynOrientedStep {
            b,
            d,
            mu,
            reaction,
            pi_b,
            info,
            degenerate,
            step_jacobians,
        })
    }
}

/// The discrete energy `E_d(a, b, h) = −D3 L(a, b, h)` and the constraint
/// residual `max_a |h ω^a(a, b)| / max(1, |b|)` of a step `b = a + d`
/// (docs/theory.md §6), for the oriented discrete Lagrangian and constraint,
/// from the exact increment `d` (see [`step_measures`](crate::lagrange_dirac::step_measures)),
/// the constraint carrying the step's `drive` offset (see
/// [`DynSystem::constraint_drive`]; empty: none).
///
/// # Errors
/// When `L_d` or the discrete constraint cannot be evaluated (e.g. input of
/// the wrong length).
pub fn dyn_step_measures<Sy: DynSystem>(
    ld: &DynDiscreteLagrangian<'_, Sy>,
    cd: ConstraintDiscretization,
    a: &DVector<f64>,
    d: &DVector<f64>,
    h: f64,
    drive: &[f64],
) -> Result<(f64, f64), GeometryError> {
    let energy = ld.energy_increment(a, d, h)?;
    let residual =
        constraint_residual_driven_dyn(cd, ld.system(), ld.orientation(), a, d, h, drive)?;
    Ok((energy, residual))
}

/// A step taken by `stepper` from `a`: the end point summed with the
/// stepper's compensation (trial solves, which are not taken, do not sum).
fn taken<Sy, LS>(
    stepper: &mut DynLagrangeDirac<Sy, LS>,
    a: &DVector<f64>,
    mut s: DynOrientedStep,
) -> DynSubStep
where
    Sy: DynSystem,
    LS: LinearSolver,
    LS::Jacobian: StepJacobian,
{
    stepper.add_with_carry_into(a, &s.d, &mut s.b);
    DynSubStep {
        b: s.b,
        stats: StepStats::from_step(&s.info, s.degenerate, s.step_jacobians),
        tangent: None,
        parameters: None,
        d: s.d,
        pi_b: s.pi_b,
        reaction: s.reaction,
    }
}

impl<Sy, LS> DynSubStepper for DynLagrangeDirac<Sy, LS>
where
    Sy: DynSystem,
    LS: LinearSolver,
    LS::Jacobian: StepJacobian,
{
    type System = Sy;

    fn system(&self) -> &Sy {
        DynLagrangeDirac::system(self)
    }

    fn direction(&self) -> Direction {
        DynLagrangeDirac::direction(self)
    }

    fn sub_step(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
    ) -> Result<DynSubStep, StepError> {
        let s = self.step_oriented(t, a, pi_a, h)?;
        Ok(taken(self, a, s))
    }

    fn sub_step_from(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        guess: &DVector<f64>,
    ) -> Result<DynSubStep, StepError> {
        let s = self.step_oriented_from(t, a, pi_a, h, guess)?;
        Ok(taken(self, a, s))
    }

    fn trial_step(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        guess: &DVector<f64>,
    ) -> Result<DynSubStep, StepError> {
        let s = self.solve_trial(t, a, pi_a, h, guess)?;
        Ok(DynSubStep {
            stats: StepStats::from_step(&s.info, s.degenerate, s.step_jacobians),
            tangent: None,
            parameters: None,
            b: s.b,
            d: s.d,
            pi_b: s.pi_b,
            reaction: s.reaction,
        })
    }

    fn reset_warm_start(&mut self) {
        DynLagrangeDirac::reset_warm_start(self);
    }

    fn sub_step_tangent(
        &self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
    ) -> Result<super::DynStepTangent, StepError> {
        self.oriented_tangent(t, a, &sub.d, &sub.reaction, h)
    }

    fn sub_step_sensitivity(
        &self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
        directions: &nalgebra::DMatrix<f64>,
    ) -> Result<super::DynStepSensitivity, StepError> {
        self.oriented_sensitivity(t, a, &sub.d, &sub.reaction, h, directions)
    }

    fn sub_step_derivative(
        &self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
        directions: Option<&nalgebra::DMatrix<f64>>,
        with_h: bool,
    ) -> Result<super::DynStepSensitivity, StepError> {
        self.oriented_derivative(t, a, &sub.d, &sub.reaction, h, directions, with_h)
    }

    fn measures(
        &mut self,
        t: f64,
        a: &DVector<f64>,
        sub: &DynSubStep,
        h: f64,
    ) -> Result<(f64, f64), GeometryError> {
        let t_lo = self.orientation().interval_start(t, h);
        let (mut offset, mut scratch) = (Vec::new(), [Vec::new(), Vec::new()]);
        drive_offset(&self.system, t_lo, h, &mut offset, &mut scratch);
        let ld = DynDiscreteLagrangian::new(&self.system, self.map)
            .oriented(self.orientation())
            .starting_at(t_lo);
        let rows = self.main.layout.as_ref().and_then(|l| l.rows(&self.system));
        let (Some(rows), true) = (rows, self.main.data.forms_constant) else {
            return dyn_step_measures(&ld, self.constraint, a, &sub.d, h, &offset);
        };
        // Constant rows, read once: `ω = ±A d / h` from them.
        let energy = ld.energy_increment(a, &sub.d, h)?;
        let bufs = &mut self.main.work.bufs;
        for ((b, x), y) in bufs.b.iter_mut().zip(a.iter()).zip(sub.d.iter()) {
            *b = x + y;
        }
        let omega = bufs.omega.as_mut_slice();
        constant_rows_times(
            rows,
            &self.main.data.a_forms,
            sub.d.as_slice(),
            self.direction.orientation(),
            h,
            omega,
        );
        for (w, o) in omega.iter_mut().zip(&offset) {
            *w += o;
        }
        Ok((
            energy,
            scaled_constraint_residual(omega, h, bufs.b.as_slice()),
        ))
    }
}

impl<Sy, LS> DynOneStep for DynLagrangeDirac<Sy, LS>
where
    Sy: DynSystem,
    LS: LinearSolver,
    LS::Jacobian: StepJacobian,
{
    type Event = ();
    type Error = StepError;

    fn advance(
        &mut self,
        from: &DynState,
        h: f64,
        _events: &mut Vec<()>,
    ) -> Result<DynStepOutput, StepError> {
        dyn_advance(self, from, h)
    }
}
