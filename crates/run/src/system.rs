//! Running a system written in the user's own crate: any
//! [`NamedDynSystem`] (a [`DynSystem`] with names) with its initial data,
//! step and discretization as a [`DynRunSetup`], through the same runners
//! as `diracvi run --model-file`, so the outcome, the [`Summary`](crate::Summary)
//! and the written trajectory equal those of a model file describing the
//! same system.
//!
//! The choice of core is the model files' (docs/theory.md §11): a system of
//! one of the sizes of [`FAST_FILE_SIZES`](diracvi_models::FAST_FILE_SIZES) runs on the compile-time-sized
//! core (seen as a compile-time [`System`] through [`AsSized`]), any other
//! size on the run-time-sized core. [`execute_system_run_time`] always
//! takes the run-time-sized core: one instantiation of the integrators
//! instead of one per size of [`FAST_FILE_SIZES`](diracvi_models::FAST_FILE_SIZES), so a crate calling only
//! it compiles much faster, at the price of about 5× slower steps on small
//! systems and a summary whose `method.core` reads `run-time`.

use crate::dyn_runner::{DescribeDyn, DynRunner};
use crate::runner::{LeanRunner, Runner};
use crate::tolerance::{SystemRerun, ToleranceChoice, execute_with_tolerance};
use crate::{ModelSummary, RecordSink, RunError, RunOutcome, RunPlan};
use diracvi_geometry::dynamic::DynSystem;
use diracvi_geometry::{AdScalar, ConstraintDiscretization, System};
use diracvi_models::{
    DynModel, DynModelVisitor, DynRunSetup, ModelError, ModelVisitor, NamedDynSystem, NamedSystem,
    RunSetup, check_initial_named,
};
use nalgebra::{SMatrix, SVector};

/// A run-time-sized system seen as a compile-time-sized [`System`] of `N`
/// coordinates and `M` constraint rows: slices of the fixed-size vectors
/// are handed to the wrapped system's functions (the counterpart of
/// [`Fixed`](diracvi_geometry::dynamic::Fixed), and what a model file of a
/// size of [`FAST_FILE_SIZES`](diracvi_models::FAST_FILE_SIZES) becomes on the compile-time-sized core).
///
/// Build it with [`AsSized::new`], which checks the sizes.
#[derive(Debug, Clone)]
pub struct AsSized<D, const N: usize, const M: usize> {
    inner: D,
}

/// A system whose size is not the one asked of [`AsSized`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the system has {n} coordinates and {m} constraint rows, not the {expected_n} and {expected_m} asked for"
)]
pub struct SizeMismatch {
    /// The system's number of coordinates.
    pub n: usize,
    /// The system's number of constraint rows.
    pub m: usize,
    /// The number of coordinates asked for.
    pub expected_n: usize,
    /// The number of constraint rows asked for.
    pub expected_m: usize,
}

impl<D: DynSystem, const N: usize, const M: usize> AsSized<D, N, M> {
    /// Wrap `inner`.
    ///
    /// # Errors
    /// [`SizeMismatch`] when `inner` does not have `N` coordinates and `M`
    /// constraint rows.
    pub fn new(inner: D) -> Result<Self, SizeMismatch> {
        let (n, m) = (inner.coordinate_count(), inner.constraint_count());
        if (n, m) == (N, M) {
            Ok(Self { inner })
        } else {
            Err(SizeMismatch {
                n,
                m,
                expected_n: N,
                expected_m: M,
            })
        }
    }

    /// The wrapped system.
    pub fn inner(&self) -> &D {
        &self.inner
    }
}

impl<D: DynSystem, const N: usize, const M: usize> System<N, M> for AsSized<D, N, M> {
    #[inline]
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, N>, v: &SVector<S, N>) -> S {
        self.inner.lagrangian(q.as_slice(), v.as_slice())
    }

    #[inline]
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, N>) -> SMatrix<S, M, N> {
        // Column `r` of an N × M matrix, stored column-major, is row `r` of
        // the M × N matrix `A`: its storage is `A` row-major.
        let mut transposed = SMatrix::<S, N, M>::from_element(S::from(0.0));
        if M > 0 {
            self.inner
                .constraint_forms(q.as_slice(), transposed.as_mut_slice());
        }
        transposed.transpose()
    }

    fn boundary_count(&self) -> usize {
        self.inner.boundary_count()
    }

    #[inline]
    fn boundary<S: AdScalar>(&self, j: usize, q: &SVector<S, N>) -> S {
        self.inner.boundary(j, q.as_slice())
    }

    #[inline]
    fn hamiltonian<S: AdScalar>(&self, q: &SVector<S, N>, p: &SVector<S, N>) -> Option<S> {
        self.inner.hamiltonian(q.as_slice(), p.as_slice())
    }

    fn gyroscopic_force<S: AdScalar>(
        &self,
        q: &SVector<S, N>,
        v: &SVector<S, N>,
    ) -> Option<SVector<S, N>> {
        let mut f = SVector::<S, N>::from_element(S::from(0.0));
        self.inner
            .gyroscopic_force(q.as_slice(), v.as_slice(), f.as_mut_slice())
            .then_some(f)
    }

    fn discrete_constraint<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        h: S,
    ) -> Option<SVector<S, M>> {
        let mut c = SVector::<S, M>::from_element(S::from(0.0));
        self.inner
            .discrete_constraint(q0.as_slice(), q1.as_slice(), h, c.as_mut_slice())
            .then_some(c)
    }
}

impl<D: NamedDynSystem, const N: usize, const M: usize> NamedSystem<N, M> for AsSized<D, N, M> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn description(&self) -> &str {
        self.inner.description()
    }
    fn coordinates(&self) -> Vec<String> {
        self.inner.coordinates()
    }
    fn piece_name(&self, j: usize) -> String {
        self.inner.piece_name(j)
    }
    fn constraint_name(&self, a: usize) -> String {
        self.inner.constraint_name(a)
    }
}

/// Check a user system's setup as a model file's is checked: lengths of
/// `q0` and `v0`, the step, the end time, the initial data (admissible,
/// finite, satisfying the constraints) and the model's own discrete
/// constraint when the setup asks for it.
fn check_setup<Mo: NamedDynSystem>(model: &Mo, setup: &DynRunSetup) -> Result<(), ModelError> {
    let n = model.coordinate_count();
    for (what, got) in [("q", setup.q0.len()), ("v", setup.v0.len())] {
        if got != n {
            return Err(ModelError::WrongLength {
                what,
                expected: n,
                got,
            });
        }
    }
    if !(setup.h.is_finite() && setup.h > 0.0) {
        return Err(ModelError::InvalidStep { h: setup.h });
    }
    if !(setup.t_end.is_finite() && setup.t_end >= 0.0) {
        return Err(ModelError::InvalidEndTime { t_end: setup.t_end });
    }
    check_initial_named(model, &setup.q0, &setup.v0)?;
    let m = model.constraint_count();
    if m > 0 && setup.constraint == ConstraintDiscretization::Model {
        let q0 = setup.q0.as_slice();
        let mut c = vec![0.0; m];
        if !model.discrete_constraint(q0, q0, setup.h, &mut c) {
            return Err(ModelError::NoModelConstraint {
                model: model.name().to_string(),
            });
        }
    }
    Ok(())
}

/// Describe a user system at its setup's initial data (coordinates,
/// boundary pieces, constraints, whether it has a Hamiltonian), after the
/// checks of [`execute_system`].
///
/// # Errors
/// [`ModelError::WrongLength`], [`ModelError::InvalidStep`],
/// [`ModelError::InvalidEndTime`], the initial-data errors of
/// [`check_initial_named`], [`ModelError::NoModelConstraint`].
pub fn describe_system<Mo: NamedDynSystem>(
    model: &Mo,
    setup: &DynRunSetup,
) -> Result<ModelSummary, ModelError> {
    check_setup(model, setup)?;
    Ok(DescribeDyn.visit(&DynModel::new(model), setup))
}

/// Integrate a system of the user's own crate as `plan` says from `t = 0`,
/// feeding every recorded step to `sink`: the counterpart of
/// [`execute`](crate::execute) for a [`NamedDynSystem`] and its
/// [`DynRunSetup`] instead of a [`Scenario`](crate::Scenario).
///
/// The system runs exactly as a model file of its size would
/// (`diracvi run --model-file`): on the compile-time-sized core (through
/// [`AsSized`]) for the sizes of
/// [`FAST_FILE_SIZES`](diracvi_models::FAST_FILE_SIZES) with the default
/// method (the Lagrange–Dirac stepper of order 2, elastic impacts), on the
/// run-time-sized core otherwise; so a system and a model file computing
/// the same expressions in the same order give bit-equal outcomes. The number of
/// steps is the plan's ([`step_count_for`](crate::step_count_for) gives
/// `round(t_end / h)`).
///
/// # Errors
/// [`RunError::Model`] for a setup that fails the checks of
/// [`describe_system`]; [`RunError::ReductionUnsupported`] for a reduced
/// plan (a system given this way declares no symmetry);
/// [`RunError::InitialState`], [`RunError::NoHamiltonian`],
/// [`RunError::HamiltonianNotGiven`], [`RunError::UnsupportedOrder`]; and
/// [`RunError::Integration`] for a step that failed.
pub fn execute_system<Mo: NamedDynSystem>(
    model: &Mo,
    setup: &DynRunSetup,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
) -> Result<RunOutcome, RunError> {
    execute_system_with_progress(model, setup, plan, sink, &mut |_| {})
}

/// [`execute_system`], calling `progress(k)` after step `k`
/// (`k = 1, …, steps`).
///
/// # Errors
/// As [`execute_system`].
pub fn execute_system_with_progress<Mo: NamedDynSystem>(
    model: &Mo,
    setup: &DynRunSetup,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
    progress: &mut dyn FnMut(usize),
) -> Result<RunOutcome, RunError> {
    check_plan(model, &plan)?;
    check_setup(model, setup)?;
    let runner = Runner {
        plan: plan.clone(),
        sink,
        progress,
    };
    // The compile-time core is autonomous (docs/theory.md §8.8).
    if !model.time_dependent()
        && let Ok(lean) = LeanRunner::new(runner)
        && let Some(outcome) = dispatch_sized(model, setup, lean)
    {
        return outcome;
    }
    DynRunner {
        plan,
        sink,
        progress,
        momentum: None,
    }
    .visit(&DynModel::new(model), setup)
}

/// [`execute_system`] on the run-time-sized core whatever the system's size
/// (one instantiation of the integrators instead of one per size of
/// [`FAST_FILE_SIZES`](diracvi_models::FAST_FILE_SIZES): much less to compile,
/// slower steps on small systems, a summary whose `method.core` reads
/// `run-time`).
///
/// # Errors
/// As [`execute_system`].
pub fn execute_system_run_time<Mo: NamedDynSystem>(
    model: &Mo,
    setup: &DynRunSetup,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
    progress: &mut dyn FnMut(usize),
) -> Result<RunOutcome, RunError> {
    check_plan(model, &plan)?;
    check_setup(model, setup)?;
    DynRunner {
        plan,
        sink,
        progress,
        momentum: None,
    }
    .visit(&DynModel::new(model), setup)
}

/// [`execute_system`] with the order (2, 4 or 6) and the fixed step chosen
/// for an error of about `tol` in the final state and the impact times,
/// from pilot runs (`diracvi run --tol`, docs/theory.md §13; the plan's
/// order and number of steps are replaced by the choice). Returns the
/// outcome, the choice ([`ToleranceChoice::to_json`] and
/// [`Summary::with_tolerance`](crate::Summary::with_tolerance) put it in
/// the summary) and the setup that ran (its `h` the chosen step; for order
/// 2 the midpoint discretization and constraint).
///
/// # Errors
/// [`RunError::InvalidTolerance`] for a `tol` that is not finite and
/// positive; otherwise as [`execute_system`].
pub fn execute_system_with_tolerance<'a, Mo: NamedDynSystem>(
    model: &'a Mo,
    setup: &DynRunSetup,
    plan: RunPlan,
    tol: f64,
    sink: &mut dyn RecordSink,
) -> Result<
    (
        RunOutcome,
        ToleranceChoice<SystemRerun<'a, Mo>>,
        DynRunSetup,
    ),
    RunError,
> {
    let rerun = SystemRerun {
        model,
        setup: setup.clone(),
    };
    let (outcome, choice, ran) = execute_with_tolerance(&rerun, plan, tol, sink, &mut |_| {})?;
    Ok((outcome, choice, ran.setup))
}

fn check_plan<Mo: NamedDynSystem>(model: &Mo, plan: &RunPlan) -> Result<(), RunError> {
    if plan.reduce {
        return Err(RunError::ReductionUnsupported {
            model: model.name().to_string(),
            reason: "a system run with execute_system declares no symmetry to reduce by",
        });
    }
    Ok(())
}

/// Run `visitor` with `model` as an [`AsSized`] of its size, if that size
/// is one of [`FAST_FILE_SIZES`](diracvi_models::FAST_FILE_SIZES); `None` otherwise.
fn dispatch_sized<Mo: NamedDynSystem, V: ModelVisitor>(
    model: &Mo,
    setup: &DynRunSetup,
    visitor: V,
) -> Option<V::Output> {
    fn visit<Mo: NamedDynSystem, V: ModelVisitor, const N: usize, const M: usize>(
        model: &Mo,
        setup: &DynRunSetup,
        visitor: V,
    ) -> Option<V::Output> {
        let sized = AsSized::<Mo, N, M>::new(model.clone()).ok()?;
        let setup = RunSetup::<N> {
            q0: SVector::from_column_slice(setup.q0.as_slice()),
            v0: SVector::from_column_slice(setup.v0.as_slice()),
            h: setup.h,
            t_end: setup.t_end,
            discretization: setup.discretization,
            constraint: setup.constraint,
        };
        Some(visitor.visit(&sized, &setup))
    }
    macro_rules! sizes {
        ($(($n:literal, $m:literal)),* $(,)?) => {
            match (model.coordinate_count(), model.constraint_count()) {
                $(($n, $m) => visit::<Mo, V, $n, $m>(model, setup, visitor),)*
                _ => None,
            }
        };
    }
    sizes! {
        (1, 0),
        (2, 0), (2, 1),
        (3, 0), (3, 1), (3, 2),
        (4, 0), (4, 1), (4, 2), (4, 3),
        (5, 0), (5, 1), (5, 2), (5, 3),
        (6, 0), (6, 1), (6, 2), (6, 3),
    }
}
