//! The impact layer on the run-time-sized core against the compile-time
//! one: every catalogued model through `Fixed` finds the same impacts and
//! the same states, forward and backward; and a system no compile-time size
//! was made for — twelve equal masses in a box — keeps its speeds through
//! the collisions.

use diracvi_discrete_dirac::StepError;
use diracvi_discrete_dirac::dynamic::{
    DynLagrangeDirac, DynNonholonomicHamiltonian, DynTrajectory, dyn_state_from_velocity,
    integrate_dyn,
};
use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, RunOptions, Trajectory, integrate, state_from_velocity,
};
use diracvi_geometry::AdScalar;
use diracvi_geometry::dynamic::DynSystem;
use diracvi_impact::ImpactError;
use diracvi_impact::dynamic::{DynHamiltonianLaw, DynImpactEvent, DynImpactIntegrator};
use diracvi_impact::{HamiltonianImpacts, ImpactEvent, ImpactIntegrator};
use diracvi_models::{
    DynModelVisitor, DynRunSetup, ModelVisitor, NamedDynSystem, NamedSystem, RunSetup, Scenario,
    catalogue, runs_on_compile_time_core,
};
use nalgebra::DVector;

/// One impact: (step, α, t, piece, q̃, p⁻, p⁺, E⁻, E⁺).
type Event = (
    usize,
    f64,
    f64,
    usize,
    Vec<f64>,
    Vec<f64>,
    Vec<f64>,
    f64,
    f64,
);

/// Everything a run produced, dimension-erased.
#[derive(Debug, PartialEq)]
struct Run {
    q: Vec<f64>,
    p: Vec<f64>,
    events: Vec<Event>,
    energy: (f64, f64, f64),
}

fn from_static<const N: usize>(t: &Trajectory<N, ImpactEvent<N>>) -> Run {
    let s = &t.summary;
    Run {
        q: s.final_state.q.as_slice().to_vec(),
        p: s.final_state.p.as_slice().to_vec(),
        events: t
            .events
            .iter()
            .map(|e| {
                (
                    e.step,
                    e.alpha,
                    e.t,
                    e.piece,
                    e.q.as_slice().to_vec(),
                    e.p_before.as_slice().to_vec(),
                    e.p_after.as_slice().to_vec(),
                    e.energy_before,
                    e.energy_after,
                )
            })
            .collect(),
        energy: (s.initial_energy, s.final_energy, s.max_abs_energy_deviation),
    }
}

fn from_dyn(t: &DynTrajectory<DynImpactEvent>) -> Run {
    let s = &t.summary;
    Run {
        q: s.final_state.q.as_slice().to_vec(),
        p: s.final_state.p.as_slice().to_vec(),
        events: t
            .events
            .iter()
            .map(|e| {
                (
                    e.step,
                    e.alpha,
                    e.t,
                    e.piece,
                    e.q.as_slice().to_vec(),
                    e.p_before.as_slice().to_vec(),
                    e.p_after.as_slice().to_vec(),
                    e.energy_before,
                    e.energy_after,
                )
            })
            .collect(),
        energy: (s.initial_energy, s.final_energy, s.max_abs_energy_deviation),
    }
}

struct Static {
    t_end: f64,
    direction: Direction,
    hamiltonian: bool,
}

impl ModelVisitor for Static {
    type Output = Run;
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Run {
        let s0 = state_from_velocity(model, 0.0, &setup.q0, &setup.v0).unwrap();
        let steps = (self.t_end / setup.h).round() as usize;
        let options = RunOptions::new(steps).every(0);
        let t = if self.hamiltonian {
            let mut integ = HamiltonianImpacts::symplectic_euler(
                model.clone(),
                setup.discretization,
                setup.constraint,
                self.direction,
            );
            integrate(&mut integ, s0, setup.h, options, |_| {}, |_| {})
        } else {
            let mut integ = ImpactIntegrator::new(LagrangeDirac::new(
                model.clone(),
                setup.discretization,
                setup.constraint,
                self.direction,
            ));
            integrate(&mut integ, s0, setup.h, options, |_| {}, |_| {})
        }
        .unwrap_or_else(|e| panic!("{}: {e}", model.name()));
        from_static(&t)
    }
}

struct Dynamic {
    t_end: f64,
    direction: Direction,
    hamiltonian: bool,
}

impl DynModelVisitor for Dynamic {
    type Output = Run;
    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Run {
        let s0 = dyn_state_from_velocity(model, 0.0, &setup.q0, &setup.v0).unwrap();
        let steps = (self.t_end / setup.h).round() as usize;
        let options = RunOptions::new(steps).every(0);
        let t = if self.hamiltonian {
            let mut integ = DynImpactIntegrator::with_law(
                DynNonholonomicHamiltonian::new(
                    model.clone(),
                    setup.discretization,
                    setup.constraint,
                    self.direction,
                ),
                DynHamiltonianLaw,
            );
            integrate_dyn(&mut integ, s0, setup.h, options, |_| {}, |_| {})
        } else {
            let mut integ = DynImpactIntegrator::new(DynLagrangeDirac::new(
                model.clone(),
                setup.discretization,
                setup.constraint,
                self.direction,
            ));
            integrate_dyn(&mut integ, s0, setup.h, options, |_| {}, |_| {})
        }
        .unwrap_or_else(|e| panic!("{}: {e}", model.name()));
        from_dyn(&t)
    }
}

/// Whether the impact sequences (steps, pieces) agree, and the largest
/// relative difference over every number of the two runs.
fn compare(a: &Run, b: &Run) -> (bool, f64) {
    let rel = |x: f64, y: f64| {
        if x.to_bits() == y.to_bits() {
            0.0
        } else {
            (x - y).abs() / x.abs().max(y.abs()).max(1e-300)
        }
    };
    let vecs = |x: &[f64], y: &[f64]| {
        x.iter()
            .zip(y)
            .map(|(u, v)| rel(*u, *v))
            .fold(0.0, f64::max)
    };
    let same_events = a.events.len() == b.events.len()
        && a.events
            .iter()
            .zip(&b.events)
            .all(|(x, y)| x.0 == y.0 && x.3 == y.3);
    let mut worst = vecs(&a.q, &b.q).max(vecs(&a.p, &b.p));
    for (x, y) in a.events.iter().zip(&b.events) {
        worst = worst
            .max(vecs(&[x.1, x.2, x.7, x.8], &[y.1, y.2, y.7, y.8]))
            .max(vecs(&x.4, &y.4))
            .max(vecs(&x.5, &y.5))
            .max(vecs(&x.6, &y.6));
    }
    (same_events, worst)
}

/// Every catalogued model of the compile-time core (the others have no
/// compile-time run to compare with): the run-time core through `Fixed`
/// against the compile-time core, forward over 5 s (or the default run) and backward,
/// with the Lagrange–Dirac stepper and (models with a Hamiltonian) the
/// Hamiltonian one.
#[test]
fn catalogue_runs_equal_the_static_core() {
    let mut bit_equal = 0;
    let mut runs = 0;
    for info in catalogue() {
        let sc = Scenario::defaults(info.name).unwrap();
        let t_end = sc.t_end.min(5.0);
        let with_h = diracvi_run_has_hamiltonian(&sc);
        for (direction, hamiltonian) in [
            (Direction::Forward, false),
            (Direction::Backward, false),
            (Direction::Forward, true),
            (Direction::Backward, true),
        ] {
            if hamiltonian && !with_h {
                continue;
            }
            let Some(a) = sc
                .visit_compiled(Static {
                    t_end,
                    direction,
                    hamiltonian,
                })
                .unwrap()
            else {
                // registered on the run-time-sized core only: nothing to compare
                assert!(!runs_on_compile_time_core(info.name), "{}", info.name);
                continue;
            };
            let b = sc
                .visit_dyn(Dynamic {
                    t_end,
                    direction,
                    hamiltonian,
                })
                .unwrap();
            let (same, worst) = compare(&a, &b);
            eprintln!(
                "{} {direction:?}{}: {} impacts, largest relative difference {worst:e}",
                info.name,
                if hamiltonian { " (Hamiltonian)" } else { "" },
                a.events.len()
            );
            assert!(same, "{}: impact sequences differ", info.name);
            assert!(worst <= 1e-12, "{}: {worst:e}", info.name);
            bit_equal += usize::from(a == b);
            runs += 1;
        }
    }
    eprintln!("{bit_equal} of {runs} runs bit-equal");
}

/// Whether the scenario's model has a Hamiltonian at its initial data.
fn diracvi_run_has_hamiltonian(sc: &Scenario) -> bool {
    struct HasH;
    impl DynModelVisitor for HasH {
        type Output = bool;
        fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> bool {
            let p = diracvi_geometry::dynamic::momentum_dyn(model, &setup.q0, &setup.v0);
            model
                .hamiltonian(setup.q0.as_slice(), p.as_slice())
                .is_some()
        }
    }
    sc.visit_dyn(HasH).unwrap()
}

/// `k` equal unit masses in the box `[0, k]`, no forces (n = k, k + 1
/// pieces: two walls and the gaps).
#[derive(Clone)]
struct Box1d {
    k: usize,
}

impl DynSystem for Box1d {
    fn coordinate_count(&self) -> usize {
        self.k
    }
    fn constraint_count(&self) -> usize {
        0
    }
    fn lagrangian<S: AdScalar>(&self, _q: &[S], v: &[S]) -> S {
        v.iter().fold(S::from(0.0), |acc, &x| acc + x * x * 0.5)
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
    fn boundary_count(&self) -> usize {
        self.k + 1
    }
    fn boundary<S: AdScalar>(&self, j: usize, q: &[S]) -> S {
        match j {
            0 => q[0],
            1 => q[self.k - 1] * (-1.0) + self.k as f64,
            _ => q[j - 1] - q[j - 2],
        }
    }
}

/// Equal-mass elastic collisions exchange velocities: the sorted speeds are
/// invariant; the discrete energy is exact for free flight (midpoint).
fn box_run(k: usize, t_end: f64) -> (usize, f64, f64) {
    let sys = Box1d { k };
    let q0 = DVector::from_fn(k, |i, _| 0.5 + (k as f64 - 1.0) * i as f64 / (k - 1) as f64);
    let v0 = DVector::from_fn(k, |i, _| {
        (1.7 * i as f64 + 0.3).sin() * (1.0 + 0.05 * i as f64)
    });
    let mut integ = DynImpactIntegrator::new(DynLagrangeDirac::new(
        sys.clone(),
        diracvi_geometry::Discretization::Midpoint,
        diracvi_geometry::ConstraintDiscretization::Midpoint,
        Direction::Forward,
    ));
    let s0 = dyn_state_from_velocity(&sys, 0.0, &q0, &v0).unwrap();
    let h = 1e-3;
    let t = integrate_dyn(
        &mut integ,
        s0.clone(),
        h,
        RunOptions::new((t_end / h).round() as usize).every(0),
        |_| {},
        |_| {},
    )
    .unwrap();
    let sorted = |p: &DVector<f64>| {
        let mut s: Vec<f64> = p.iter().map(|x| x.abs()).collect();
        s.sort_by(f64::total_cmp);
        s
    };
    let (a, b) = (sorted(&s0.p), sorted(&t.summary.final_state.p));
    let speeds = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    let energy = t.summary.max_abs_energy_deviation / t.summary.initial_energy;
    (t.events.len(), speeds, energy)
}

#[test]
fn twelve_masses_in_a_box_keep_their_speeds() {
    let (impacts, speeds, energy) = box_run(12, 15.0);
    eprintln!("12 masses: {impacts} impacts, sorted |p| {speeds:e}, energy {energy:e}");
    assert!(impacts >= 80, "{impacts} impacts");
    assert!(speeds <= 1e-9, "{speeds:e}");
    assert!(energy <= 1e-12, "{energy:e}");
    let (impacts, speeds, energy) = box_run(6, 10.0);
    eprintln!("6 masses: {impacts} impacts, sorted |p| {speeds:e}, energy {energy:e}");
    assert!(impacts >= 20, "{impacts} impacts");
    assert!(speeds <= 1e-9 && energy <= 1e-12);
}

/// The composed methods (orders 4 and 6) with the continuous elastic law:
/// the run-time core through `Fixed` against the compile-time one.
#[test]
fn composed_runs_equal_the_static_core() {
    use diracvi_discrete_dirac::Composition;
    use diracvi_discrete_dirac::dynamic::DynComposed;
    use diracvi_geometry::{ConstraintDiscretization, Discretization};
    use diracvi_impact::ComposedImpacts;
    use diracvi_impact::dynamic::DynContinuousElasticLaw;

    struct S(Composition, Direction);
    impl ModelVisitor for S {
        type Output = Run;
        fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
            self,
            model: &Mo,
            setup: &RunSetup<N>,
        ) -> Run {
            let mut integ = ComposedImpacts::composed(
                model.clone(),
                Discretization::Midpoint,
                ConstraintDiscretization::Midpoint,
                self.1,
                self.0,
            );
            let s0 = state_from_velocity(model, 0.0, &setup.q0, &setup.v0).unwrap();
            let options = RunOptions::new((2.0 / setup.h).round() as usize).every(0);
            from_static(&integrate(&mut integ, s0, setup.h, options, |_| {}, |_| {}).unwrap())
        }
    }
    struct D(Composition, Direction);
    impl DynModelVisitor for D {
        type Output = Run;
        fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Run {
            let mut integ = DynImpactIntegrator::with_law(
                DynComposed::lagrange_dirac(
                    model.clone(),
                    Discretization::Midpoint,
                    ConstraintDiscretization::Midpoint,
                    self.1,
                    self.0,
                ),
                DynContinuousElasticLaw,
            );
            let s0 = dyn_state_from_velocity(model, 0.0, &setup.q0, &setup.v0).unwrap();
            let options = RunOptions::new((2.0 / setup.h).round() as usize).every(0);
            from_dyn(&integrate_dyn(&mut integ, s0, setup.h, options, |_| {}, |_| {}).unwrap())
        }
    }
    for name in ["particle", "ellipse", "pendulum", "disk-table"] {
        let sc = Scenario::defaults(name).unwrap();
        for scheme in [Composition::TripleJump, Composition::KahanLi6] {
            for direction in [Direction::Forward, Direction::Backward] {
                let a = sc.visit_compiled(S(scheme, direction)).unwrap().unwrap();
                let b = sc.visit_dyn(D(scheme, direction)).unwrap();
                let (same, worst) = compare(&a, &b);
                eprintln!(
                    "{name} {scheme} {direction:?}: {} impacts, largest relative difference {worst:e}",
                    a.events.len()
                );
                assert!(same, "{name} {scheme}: impact sequences differ");
                assert!(worst <= 1e-12, "{name} {scheme}: {worst:e}");
            }
        }
    }
}

/// A unit mass pushed against the wall `q ≥ 0` by a force growing in time,
/// `L = ½ v² − t q`.
#[derive(Clone)]
struct PushedMass;

impl DynSystem for PushedMass {
    fn coordinate_count(&self) -> usize {
        1
    }
    fn constraint_count(&self) -> usize {
        0
    }
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.lagrangian_at(q, v, 0.0)
    }
    fn time_dependent(&self) -> bool {
        true
    }
    fn lagrangian_at<S: AdScalar>(&self, q: &[S], v: &[S], t: f64) -> S {
        v[0] * v[0] * 0.5 - q[0] * t
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
    fn boundary_count(&self) -> usize {
        1
    }
    fn boundary<S: AdScalar>(&self, _j: usize, q: &[S]) -> S {
        q[0]
    }
}

/// Impacts of a time-dependent system are refused with a typed error (the
/// impact law's discrete energy needs an autonomous `L`), never run with
/// the wrong energy; the same system without walls steps.
#[test]
fn impacts_of_a_time_dependent_system_are_refused() {
    let mut integ = DynImpactIntegrator::new(DynLagrangeDirac::new(
        PushedMass,
        diracvi_geometry::Discretization::Midpoint,
        diracvi_geometry::ConstraintDiscretization::Midpoint,
        Direction::Forward,
    ));
    let s0 = dyn_state_from_velocity(
        &PushedMass,
        0.0,
        &DVector::from_element(1, 1.0),
        &DVector::from_element(1, 0.0),
    )
    .unwrap();
    let e = integrate_dyn(&mut integ, s0, 0.1, RunOptions::new(3), |_| {}, |_| {}).unwrap_err();
    assert!(
        matches!(e.error, ImpactError::Step(StepError::Unsupported(ref m)) if m.contains("depends on time")),
        "{e}"
    );
    // located at its step; an error without a time reads `step k: what`
    assert_eq!(e.step, 0);
    assert_eq!(e.error.time(), None);
    assert!(
        e.to_string().starts_with("step 0: impacts of a system"),
        "{e}"
    );
}
