//! Models written as files run through the same integrators as compiled
//! ones: every catalogued model's twin under `models/` reproduces it, and
//! the systems that exist only as files (the Chaplygin sleigh in an arena,
//! a double pendulum above a floor) keep their energy, their constraints and
//! their admissible set, and are reversible.

use diracvi_discrete_dirac::dynamic::{DynLagrangeDirac, dyn_state_from_velocity, integrate_dyn};
use diracvi_discrete_dirac::{Direction, RunOptions};
use diracvi_geometry::dynamic::energy_dyn;
use diracvi_impact::dynamic::DynImpactIntegrator;
use diracvi_models::{
    DynModelVisitor, DynRunSetup, ModelVisitor, NamedDynSystem, NamedSystem, RunSetup, Scenario,
    catalogue,
};
use diracvi_tests::run_model_dyn;
use nalgebra::DMatrix;

fn model_file(name: &str) -> String {
    format!("{}/../models/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

/// A run with its dimensions erased.
#[derive(Debug)]
struct Run {
    name: String,
    q: Vec<f64>,
    p: Vec<f64>,
    /// (time, piece) of every impact.
    impacts: Vec<(f64, usize)>,
    energy0: f64,
    max_energy_deviation: f64,
    max_constraint_residual: f64,
    /// Smallest `g_j` over every recorded state and piece.
    min_g: f64,
}

struct RunDefaults {
    /// End time, or the default one.
    t_end: Option<f64>,
}

impl DynModelVisitor for RunDefaults {
    type Output = Run;
    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Run {
        let steps = (self.t_end.unwrap_or(setup.t_end) / setup.h).round() as usize;
        let traj = run_model_dyn(model, setup, setup.h, steps, 1, Direction::Forward)
            .unwrap_or_else(|e| panic!("{}: {e}", model.name()));
        let min_g = traj
            .records
            .iter()
            .flat_map(|r| (0..model.boundary_count()).map(move |j| (&r.q, j)))
            .map(|(q, j)| model.boundary(j, q.as_slice()))
            .fold(f64::INFINITY, f64::min);
        let s = &traj.summary;
        Run {
            name: model.name().to_string(),
            q: s.final_state.q.as_slice().to_vec(),
            p: s.final_state.p.as_slice().to_vec(),
            impacts: traj.events.iter().map(|e| (e.t, e.piece)).collect(),
            energy0: s.initial_energy,
            max_energy_deviation: s.max_abs_energy_deviation,
            max_constraint_residual: s.max_constraint_residual,
            min_g,
        }
    }
}

fn max_rel_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / x.abs().max(1.0))
        .fold(0.0, f64::max)
}

/// Horizon of the twin comparison (s): the default runs of the bouncing
/// bodies are chaotic over 25 s, so round-off differences between an
/// expression tape and Rust code (last-bit differences in `L`, `g`) grow past
/// 1e-10 there.
const HORIZON: f64 = 5.0;

/// Shorter horizons of models whose impacts amplify round-off faster: the
/// body in space (`bouncing-body`) turns at each impact by an amount that
/// depends on its orientation, so tape and Rust code, 1.7e-14 apart after
/// 1 s (4 impacts), are 6.5e-12 apart after 2 s (9 impacts) and 1.1e-10
/// after 2.5 s (measured with the debug CLI, `--t-end`).
const SHORT_HORIZONS: [(&str, f64); 1] = [("bouncing-body", 2.0)];

/// Every catalogued model and its file twin agree on the default run (up to
/// [`HORIZON`], or the model's [`SHORT_HORIZONS`]): same impacts (pieces; times to 1e-10), same final state
/// (1e-10).
#[test]
fn every_catalogue_model_is_reproduced_by_its_model_file() {
    for info in catalogue() {
        let compiled = Scenario::defaults(info.name).unwrap();
        let file = Scenario::from_model_file(model_file(info.name))
            .unwrap_or_else(|e| panic!("{}: {e}", info.name));
        assert_eq!(file.model, compiled.model);
        assert_eq!(file.initial, compiled.initial, "{}", info.name);
        assert_eq!(
            (file.h, file.t_end, file.discretization, file.constraint),
            (
                compiled.h,
                compiled.t_end,
                compiled.discretization,
                compiled.constraint
            ),
            "{}",
            info.name
        );
        let limit = SHORT_HORIZONS
            .iter()
            .find(|(name, _)| *name == info.name)
            .map_or(HORIZON, |(_, t)| *t);
        let horizon = Some(compiled.t_end.min(limit));
        let a = compiled.visit_dyn(RunDefaults { t_end: horizon }).unwrap();
        let b = file.visit_dyn(RunDefaults { t_end: horizon }).unwrap();
        assert_eq!(a.name, b.name);
        assert_eq!(
            a.impacts.len(),
            b.impacts.len(),
            "{}: impact counts",
            a.name
        );
        let mut worst_t: f64 = 0.0;
        for (x, y) in a.impacts.iter().zip(&b.impacts) {
            assert_eq!(x.1, y.1, "{}: pieces", a.name);
            worst_t = worst_t.max((x.0 - y.0).abs());
        }
        let dq = max_rel_diff(&a.q, &b.q);
        let dp = max_rel_diff(&a.p, &b.p);
        eprintln!(
            "{}: {} impacts, impact times differ by {worst_t:e}, final q by {dq:e}, p by {dp:e}",
            a.name,
            a.impacts.len()
        );
        assert!(worst_t <= 1e-10, "{}: impact times {worst_t:e}", a.name);
        assert!(dq <= 1e-10 && dp <= 1e-10, "{}: {dq:e} {dp:e}", a.name);
    }
}

/// The systems that exist only as files: energy bounded, constraints to
/// round-off, never outside the admissible set, several impacts.
#[test]
fn sleigh_and_double_pendulum_files_behave() {
    for (name, min_impacts, energy_bound) in [("sleigh", 3, 1e-6), ("double-pendulum", 5, 1e-3)] {
        let sc = Scenario::from_model_file(model_file(name)).unwrap();
        assert!(matches!(
            sc.visit_catalogue(Nothing),
            Err(diracvi_models::ModelError::Scenario(_))
        ));
        let r = sc.visit_dyn(RunDefaults { t_end: None }).unwrap();
        let rel = r.max_energy_deviation / r.energy0.abs().max(1.0);
        eprintln!(
            "{name}: {} impacts, energy deviation {rel:e}, constraint residual {:e}, min g {:e}",
            r.impacts.len(),
            r.max_constraint_residual,
            r.min_g
        );
        assert!(r.impacts.len() >= min_impacts, "{name}: {r:?}");
        assert!(rel <= energy_bound, "{name}: energy deviation {rel:e}");
        assert!(r.max_constraint_residual <= 1e-12, "{name}");
        assert!(
            r.min_g >= -1e-12,
            "{name}: left the admissible set, g = {:e}",
            r.min_g
        );
    }
}

/// A compile-time-sized visit that does nothing (model files refuse it).
struct Nothing;

impl ModelVisitor for Nothing {
    type Output = ();
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        _model: &Mo,
        _setup: &RunSetup<N>,
    ) {
    }
}

/// Forward through impacts with the (+) stepper, then back with the (−)
/// stepper from the final state, returns to the start: `q` exactly, `p` up
/// to the constraint co-distribution (the sleigh's `p` comes back shifted
/// by `A(q0)ᵀμ` with `μ = O(h)`, independent of the horizon).
struct RoundTrip {
    t_end: f64,
}

impl DynModelVisitor for RoundTrip {
    type Output = (f64, usize, usize);
    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> (f64, usize, usize) {
        let h = setup.h;
        let steps = (self.t_end / h).round() as usize;
        let s0 = dyn_state_from_velocity(model, 0.0, &setup.q0, &setup.v0).unwrap();
        let run = |direction, from| {
            let mut integrator = DynImpactIntegrator::new(DynLagrangeDirac::new(
                model.clone(),
                setup.discretization,
                setup.constraint,
                direction,
            ));
            integrate_dyn(
                &mut integrator,
                from,
                h,
                RunOptions::new(steps).every(0),
                |_| {},
                |_| {},
            )
            .unwrap()
        };
        let f = run(Direction::Forward, s0.clone());
        let b = run(Direction::Backward, f.summary.final_state.clone());
        let end = b.summary.final_state;
        // p is defined up to A(q)ᵀμ (docs/theory.md §3.8): compare the part
        // of the momentum difference orthogonal to the rows of A(q0).
        let mut dp = &end.p - &s0.p;
        let (n, m) = (model.coordinate_count(), model.constraint_count());
        if m > 0 {
            let mut rows = vec![0.0; m * n];
            model.constraint_forms(s0.q.as_slice(), &mut rows);
            let a = DMatrix::from_row_slice(m, n, &rows);
            let mu = (&a * a.transpose()).try_inverse().unwrap() * (&a * &dp);
            dp -= a.transpose() * mu;
        }
        let err = (&end.q - &s0.q).amax().max(dp.amax());
        (err, f.events.len(), b.events.len())
    }
}

#[test]
fn sleigh_and_double_pendulum_files_are_reversible() {
    for (name, t_end) in [("sleigh", 8.0), ("double-pendulum", 2.0)] {
        let sc = Scenario::from_model_file(model_file(name)).unwrap();
        let (err, forward, backward) = sc.visit_dyn(RoundTrip { t_end }).unwrap();
        eprintln!(
            "{name}: round trip error {err:e}, impacts {forward} forward, {backward} backward"
        );
        assert!(forward >= 1, "{name}: no impact to reverse");
        assert_eq!(forward, backward, "{name}");
        assert!(err <= 1e-9, "{name}: round trip error {err:e}");
    }
}

/// A file scenario prints back as a model file that reads to an equal
/// scenario, with `--set` overrides (parameters, run keys, initial data)
/// carried along.
#[test]
fn file_scenarios_round_trip_through_toml_with_overrides() {
    let mut sc = Scenario::from_model_file(model_file("sleigh")).unwrap();
    sc.set("m", "2.5").unwrap();
    sc.set("h", "0.002").unwrap();
    sc.set("v", "0.5, 0, 0.1").unwrap();
    let text = sc.to_toml();
    let back = Scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.parameters, sc.parameters);
    assert_eq!((back.h, back.t_end), (0.002, sc.t_end));
    assert_eq!(back.initial, sc.initial);
    assert_eq!(back.to_toml(), text);
    assert_eq!(back, sc, "equal scenarios: same system, same values");
    let other = Scenario::from_model_file(model_file("double-pendulum")).unwrap();
    assert_ne!(back, other);
    let mut moved = back.clone();
    moved.set("m", "2.25").unwrap();
    assert_ne!(moved, sc);
    // the override reaches the physics: the kinetic energy doubles with m … 2.5
    struct Energy;
    impl DynModelVisitor for Energy {
        type Output = f64;
        fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> f64 {
            energy_dyn(model, &setup.q0, &setup.v0)
        }
    }
    let mut unit = Scenario::from_model_file(model_file("sleigh")).unwrap();
    unit.set("v", "0.5, 0, 0.1").unwrap();
    let (e1, e25) = (
        unit.visit_dyn(Energy).unwrap(),
        sc.visit_dyn(Energy).unwrap(),
    );
    // E = ½ m |v|² + ½ (I + m a²) ω² + m a ω (…) with (ẏ = 0, θ = 0): m a ω ẏ = 0
    let expect = |m: f64| 0.5 * m * 0.25 + 0.5 * (0.1 + m * 0.09) * 0.01;
    approx::assert_relative_eq!(e1, expect(1.0), max_relative = 1e-14);
    approx::assert_relative_eq!(e25, expect(2.5), max_relative = 1e-14);
}

/// Bad overrides of a file scenario are typed errors naming the key.
#[test]
fn bad_overrides_of_a_file_scenario_are_typed_errors() {
    let sc = Scenario::from_model_file(model_file("sleigh")).unwrap();
    let err = |key: &str, value: &str| {
        let mut s = sc.clone();
        let e = s.set(key, value).unwrap_err();
        assert_eq!(s, sc, "a failed set leaves the scenario unchanged");
        e.to_string()
    };
    let msg = err("mass", "1");
    assert!(
        msg.contains("'mass'") && msg.contains("valid keys: m, I, a, R"),
        "{msg}"
    );
    assert!(err("m", "heavy").contains("expected a number"));
    let msg = err("m", "inf");
    assert!(msg.contains("parameters.m"), "{msg}");
    assert!(err("q", "1, 2").contains("q has 2 components, the model needs 3"));
    assert!(err("constraint", "model").contains("no discrete constraint of its own"));
}

/// The model file `models/heavy-top.toml` (the same top as [`HeavyTop`]'s
/// defaults, written in the unit-quaternion chart) runs through the public
/// runner as any model file does (`diracvi run --model-file
/// models/heavy-top.toml`), with the ambient midpoint map: both Noether
/// momenta and `|q|` are kept over its 2 000 steps, and the final state
/// agrees with the compiled `HeavyTop` stepped by the same (+) midpoint
/// stepper.
#[test]
fn heavy_top_model_file_runs_and_keeps_its_momenta() {
    use diracvi_discrete_dirac::{LagrangeDirac, State, state_from_velocity};
    use diracvi_geometry::lie::velocity_from_body;
    use diracvi_geometry::{ConstraintDiscretization, Discretization};
    use diracvi_models::HeavyTop;
    use diracvi_run::{Discard, RunPlan, Scenario, execute, step_count};
    use nalgebra::SVector;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/heavy-top.toml");
    let scenario = Scenario::from_model_file(std::path::Path::new(path)).unwrap();
    let steps = step_count(&scenario, None).unwrap();
    let outcome = execute(&scenario, RunPlan::new(steps), &mut Discard).unwrap();
    let q = SVector::<f64, 4>::from_column_slice(&outcome.final_q);
    let p = SVector::<f64, 4>::from_column_slice(&outcome.final_p);
    // the compiled twin from the same initial data (the file's: tilted by
    // 0.5 about x, spinning at 4 about the symmetry axis)
    let (top, q0, omega0) = diracvi_tests::lagrange_top_setup(4.0);
    let v0 = velocity_from_body(&q0, &omega0);
    let start: State<4> = state_from_velocity(&top, 0.0, &q0, &v0).unwrap();
    let mut stepper = LagrangeDirac::new(
        top.clone(),
        Discretization::Midpoint,
        ConstraintDiscretization::Midpoint,
        Direction::Forward,
    );
    let mut state = start;
    for _ in 0..steps {
        state = stepper.step(&state, 1e-2).unwrap().0;
    }
    let dv = (HeavyTop::vertical_momentum(&q, &p)
        - HeavyTop::vertical_momentum(&start.q, &start.p))
    .abs();
    let da =
        (HeavyTop::axial_momentum(&q, &p) - HeavyTop::axial_momentum(&start.q, &start.p)).abs();
    let twin = (q - state.q).amax();
    eprintln!(
        "models/heavy-top.toml: {steps} steps, |Δπ₃| {dv:.2e}, |ΔΠ₃| {da:.2e}, ||q|−1| {:.2e}, \
         |ΔE| {:.2e}, vs compiled twin {twin:.2e}",
        (q.norm() - 1.0).abs(),
        outcome.max_abs_energy_deviation
    );
    assert_eq!(steps, 2000);
    assert!(dv < 1e-11 && da < 1e-11, "momenta {dv:e} {da:e}");
    assert!((q.norm() - 1.0).abs() < 1e-13);
    assert!(twin < 1e-10, "file vs compiled: {twin:e}");
}
