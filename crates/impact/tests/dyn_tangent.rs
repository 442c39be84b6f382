//! The tangent map of the discrete flow through impacts (docs/theory.md
//! §12): the Jacobian `∂(q_N, p_N)/∂(q_0, p_0)` tracked by the impact
//! integrator, over runs with several impacts, against central differences
//! of whole runs from perturbed initial states (each a fresh integrator),
//! forward and backward in time; and the refusal of a law without a
//! derivative.

use diracvi_discrete_dirac::DynState;
use diracvi_discrete_dirac::dynamic::DynSubStepper;
use diracvi_discrete_dirac::dynamic::{
    DynComposed, DynLagrangeDirac, DynNonholonomicHamiltonian, DynOneStep, integrate_dyn,
};
use diracvi_discrete_dirac::{Composition, Direction, RunOptions, StepError};
use diracvi_geometry::{ConstraintDiscretization, Discretization};
use diracvi_impact::ImpactError;
use diracvi_impact::dynamic::{
    DynContinuousElasticLaw, DynHamiltonianLaw, DynImpactIntegrator, DynImpactLaw, DynImpactSite,
    DynRebound,
};
use diracvi_models::{DynModelVisitor, DynRunSetup, NamedDynSystem, Scenario};
use nalgebra::{DMatrix, DVector};

/// What a run through the tangent-tracking integrator gave.
struct Tracked {
    jacobian: DMatrix<f64>,
    impacts: usize,
    final_state: DVector<f64>,
}

/// Run `steps` steps of the scenario's model from `(q0, p0)` (a
/// Lagrange–Dirac stepper of the scenario's discretization with the
/// \[VCI\] law, or for a composition of order 4 or 6 the composed
/// symmetric midpoint step with the continuous law), tracking the Jacobian
/// or not.
struct Run {
    steps: usize,
    direction: Direction,
    start: Option<DVector<f64>>,
    track: bool,
    composition: Composition,
    /// The (±) nonholonomic Hamiltonian stepper with the Hamiltonian law
    /// instead (`composition` unused).
    hamiltonian: bool,
}

/// `integ` from `z` (`(q, p)`), with the Jacobian tracked or not.
fn run_from<I: DynOneStep<Error = ImpactError>>(
    integ: &mut I,
    z: &DVector<f64>,
    h: f64,
    steps: usize,
) -> Result<(usize, DVector<f64>), ImpactError> {
    let n = z.len() / 2;
    let s0 = DynState {
        t: 0.0,
        q: z.rows(0, n).into_owned(),
        p: z.rows(n, n).into_owned(),
    };
    let t = integrate_dyn(
        integ,
        s0,
        h,
        RunOptions::new(steps).every(0),
        |_| {},
        |_| {},
    )
    .map_err(|e| e.error)?;
    let f = &t.summary.final_state;
    let mut final_state = DVector::zeros(2 * n);
    final_state.rows_mut(0, n).copy_from(&f.q);
    final_state.rows_mut(n, n).copy_from(&f.p);
    Ok((t.events.len(), final_state))
}

impl DynModelVisitor for Run {
    type Output = Result<Tracked, ImpactError>;
    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Self::Output {
        let n = setup.q0.len();
        let z = self.start.clone().unwrap_or_else(|| {
            let p = diracvi_geometry::dynamic::momentum_dyn(model, &setup.q0, &setup.v0);
            let mut z = DVector::zeros(2 * n);
            z.rows_mut(0, n).copy_from(&setup.q0);
            z.rows_mut(n, n).copy_from(&p);
            z
        });
        let none = || DMatrix::zeros(0, 0);
        let ((impacts, final_state), jacobian) = if self.hamiltonian {
            let stepper = DynNonholonomicHamiltonian::new(
                model.clone(),
                setup.discretization,
                setup.constraint,
                self.direction,
            );
            let mut integ = DynImpactIntegrator::with_law(stepper, DynHamiltonianLaw);
            if self.track {
                integ = integ.track_jacobian();
            }
            let out = run_from(&mut integ, &z, setup.h, self.steps)?;
            (out, integ.jacobian().cloned().unwrap_or_else(none))
        } else if self.composition == Composition::Single {
            let stepper = DynLagrangeDirac::new(
                model.clone(),
                setup.discretization,
                setup.constraint,
                self.direction,
            );
            let mut integ = DynImpactIntegrator::new(stepper);
            if self.track {
                integ = integ.track_jacobian();
            }
            let out = run_from(&mut integ, &z, setup.h, self.steps)?;
            (out, integ.jacobian().cloned().unwrap_or_else(none))
        } else {
            let stepper = DynComposed::lagrange_dirac(
                model.clone(),
                Discretization::Midpoint,
                ConstraintDiscretization::Midpoint,
                self.direction,
                self.composition,
            );
            let mut integ = DynImpactIntegrator::with_law(stepper, DynContinuousElasticLaw);
            if self.track {
                integ = integ.track_jacobian();
            }
            let out = run_from(&mut integ, &z, setup.h, self.steps)?;
            (out, integ.jacobian().cloned().unwrap_or_else(none))
        };
        Ok(Tracked {
            jacobian,
            impacts,
            final_state,
        })
    }
}

/// The tracked Jacobian against second-order central differences of the
/// run's final state, for the composition `composition` of the symmetric
/// midpoint step (with the continuous law at impacts); returns (relative
/// difference, impacts, largest entry). Measured: 3e-9 to 6e-8 (dropping
/// the boundary Hessian term of the law gives 1e2 on the ellipse).
fn check_composed(
    model: &str,
    steps: usize,
    direction: Direction,
    delta: f64,
    composition: Composition,
) -> (f64, usize, f64) {
    check_run(model, steps, direction, delta, composition, false)
}

/// [`check_composed`], or with `hamiltonian` the Hamiltonian stepper and
/// law.
fn check_run(
    model: &str,
    steps: usize,
    direction: Direction,
    delta: f64,
    composition: Composition,
    hamiltonian: bool,
) -> (f64, usize, f64) {
    let scenario = Scenario::defaults(model).unwrap();
    let run_for = |steps: usize, start: Option<DVector<f64>>, track: bool| {
        scenario
            .visit_dyn(Run {
                steps,
                direction,
                start,
                track,
                composition,
                hamiltonian,
            })
            .unwrap()
            .unwrap()
    };
    let run = |start: Option<DVector<f64>>, track: bool| run_for(steps, start, track);
    let base = run(None, true);
    // The default initial state, read back from a run of zero steps.
    let z0 = run_for(0, None, false).final_state;
    let dim = z0.len();
    let mut worst: f64 = 0.0;
    for j in 0..dim {
        let at = |e: f64| {
            let mut z = z0.clone();
            z[j] += e;
            let r = run(Some(z), false);
            assert_eq!(
                r.impacts, base.impacts,
                "{model}: a perturbation changed the impacts"
            );
            r.final_state
        };
        let fd = (at(delta) - at(-delta)) / (2.0 * delta);
        worst = worst.max((fd - base.jacobian.column(j)).amax());
    }
    let scale = base.jacobian.amax();
    (worst / scale, base.impacts, scale)
}

/// Runs [`check_composed`] on every case (δ = 1e-6) and asserts that each
/// crosses at least `min_impacts` impacts and that its tangent map equals
/// the central differences to 3e-7, relative to the largest entry.
fn check_cases(cases: &[(&str, usize, Direction, Composition)], min_impacts: usize) {
    for &(model, steps, direction, composition) in cases {
        let (e, impacts, scale) = check_composed(model, steps, direction, 1e-6, composition);
        eprintln!(
            "{model} {direction:?} {composition:?}: {impacts} impacts, |J| {scale:.2e}, \
             relative {e:.2e}"
        );
        assert!(
            impacts >= min_impacts,
            "{model}: {impacts} impacts, the check needs {min_impacts}"
        );
        assert!(
            e < 3e-7,
            "{model} {direction:?} {composition:?}: relative difference {e:.2e}"
        );
    }
}

#[test]
fn jacobian_through_impacts_matches_central_differences_of_whole_runs() {
    // (model, steps, direction): impacts on a floor (particle, ellipse),
    // a nonholonomic pendulum on a cylinder, a rolling disk on a wall.
    // Central differences with δ = 1e-6 are good to ~1e-9 here; longer
    // ellipse runs grow |J| past 1e4 and the differences, not the tangent,
    // lose accuracy (at 300 steps: 6e-7 with δ = 1e-5, 6e-9 with 1e-6).
    check_cases(
        &[
            ("particle", 400, Direction::Forward, Composition::Single),
            ("particle", 400, Direction::Backward, Composition::Single),
            ("ellipse", 300, Direction::Forward, Composition::Single),
            ("pendulum", 1500, Direction::Forward, Composition::Single),
            ("pendulum", 1500, Direction::Backward, Composition::Single),
            ("disk-wall", 600, Direction::Forward, Composition::Single),
        ],
        1,
    );
}

/// Orders 4 and 6: the composed step's tangent map (the product of its
/// stages') and the continuous law's derivative (docs/theory.md §12.6),
/// against central differences of whole runs through impacts, forward and
/// backward.
#[test]
fn composed_jacobian_through_impacts_matches_central_differences_of_whole_runs() {
    check_cases(
        &[
            ("particle", 400, Direction::Forward, Composition::TripleJump),
            ("particle", 400, Direction::Backward, Composition::KahanLi6),
            ("ellipse", 300, Direction::Forward, Composition::TripleJump),
            ("ellipse", 300, Direction::Backward, Composition::TripleJump),
            (
                "pendulum",
                1500,
                Direction::Forward,
                Composition::TripleJump,
            ),
            ("pendulum", 1500, Direction::Backward, Composition::Suzuki5),
            (
                "disk-wall",
                600,
                Direction::Forward,
                Composition::TripleJump,
            ),
        ],
        1,
    );
}

#[test]
fn a_law_without_a_derivative_is_refused_at_the_first_impact() {
    /// The continuous law without its derivative: a law of a user's that
    /// implements `rebound` only.
    struct Plain;
    impl<St: DynSubStepper> DynImpactLaw<St> for Plain {
        fn rebound(
            &mut self,
            stepper: &mut St,
            site: &DynImpactSite<'_>,
        ) -> Result<DynRebound, ImpactError> {
            DynContinuousElasticLaw.rebound(stepper, site)
        }
    }
    struct Composed;
    impl DynModelVisitor for Composed {
        type Output = Result<(), ImpactError>;
        fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Self::Output {
            let stepper = DynLagrangeDirac::new(
                model.clone(),
                setup.discretization,
                setup.constraint,
                Direction::Forward,
            );
            let mut integ = DynImpactIntegrator::with_law(stepper, Plain).track_jacobian();
            let s0 = diracvi_discrete_dirac::dynamic::dyn_state_from_velocity(
                model, 0.0, &setup.q0, &setup.v0,
            )
            .unwrap();
            integrate_dyn(
                &mut integ,
                s0,
                setup.h,
                RunOptions::new(2000).every(0),
                |_| {},
                |_| {},
            )
            .map(|_| ())
            .map_err(|e| e.error)
        }
    }
    let scenario = Scenario::defaults("particle").unwrap();
    match scenario.visit_dyn(Composed).unwrap() {
        Err(ImpactError::Step(StepError::Unsupported(message))) => {
            assert!(message.contains("impact"), "{message}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Longer runs, each through at least five impacts, at orders 2 and 4,
/// forward and backward: the tangent map composed through many impacts
/// (each a saltation, docs/theory.md §12.3) still equals central
/// differences of whole runs. Measured: particle 16 impacts, 4.9e-9 and
/// 3.6e-9; pendulum 6 and 7 impacts, 1.1e-8 and 6.7e-8.
#[test]
fn jacobian_through_five_or_more_impacts_matches_central_differences() {
    check_cases(
        &[
            ("particle", 2000, Direction::Forward, Composition::Single),
            (
                "particle",
                2000,
                Direction::Backward,
                Composition::TripleJump,
            ),
            ("pendulum", 8000, Direction::Forward, Composition::Single),
            (
                "pendulum",
                8000,
                Direction::Backward,
                Composition::TripleJump,
            ),
        ],
        5,
    );
}

/// The (±) nonholonomic Hamiltonian stepper with the Hamiltonian law
/// (docs/theory.md §12.7): the step's tangent map, the impact time's
/// dependence on the data and the derivative of the energy-balanced normal
/// jump, against central differences (δ = 1e-6) of whole runs, forward and
/// backward, relative 3e-7 to the largest entry (measured: particle 3
/// impacts 2.2e-10, pendulum 1 and 2 impacts 2.3e-9 and 2.9e-9).
#[test]
fn hamiltonian_jacobian_through_impacts_matches_central_differences_of_whole_runs() {
    for (model, steps, direction, min_impacts) in [
        ("particle", 400, Direction::Forward, 2),
        ("particle", 400, Direction::Backward, 2),
        ("pendulum", 1500, Direction::Forward, 1),
        ("pendulum", 1500, Direction::Backward, 1),
    ] {
        let (e, impacts, scale) =
            check_run(model, steps, direction, 1e-6, Composition::Single, true);
        eprintln!(
            "hamiltonian {model} {direction:?}: {impacts} impacts, |J| {scale:.2e}, \
             relative {e:.2e}"
        );
        assert!(impacts >= min_impacts, "{model}: {impacts} impacts");
        assert!(e < 3e-7, "hamiltonian {model} {direction:?}: {e:.2e}");
    }
}
