//! Accuracy on request (`--tol`, docs/theory.md §13): over a ladder of
//! tolerances the achieved error of the final state and of the impact times
//! (componentwise `|Δx| / max(1, |x|)`, the norm the estimator uses) is
//! within 10× of the tolerance (for the constrained pendulum the final
//! configuration and impact times: its momentum is defined up to the
//! constraint reaction), against independent references: the
//! closed-form bouncing particle, and for the nonholonomic pendulum a
//! Kahan–Li (order 6) run at a step whose own error is below 1e-13.
//! Run with `-- --nocapture` for the table of achieved against requested
//! errors.

use diracvi_models::Scenario;
use diracvi_models::reference::BouncingParticle;
use diracvi_run::{
    Discard, Order, RunError, RunOutcome, RunPlan, choose_step, execute, execute_with_tolerance,
};

const LADDER: [f64; 8] = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10];

fn mixed(x: f64, reference: f64) -> f64 {
    (x - reference).abs() / reference.abs().max(1.0)
}

/// The mixed max-norm error of `o` against a final state and impact times
/// (`p` empty: the momentum is not compared, as for a constrained system,
/// whose momentum is defined up to the constraint reaction).
fn error(o: &RunOutcome, q: &[f64], p: &[f64], impacts: &[f64]) -> f64 {
    assert_eq!(o.impacts.len(), impacts.len(), "impact counts differ");
    let states = o
        .final_q
        .iter()
        .zip(q)
        .chain(o.final_p.iter().zip(p))
        .map(|(x, r)| mixed(*x, *r));
    let times = o.impacts.iter().zip(impacts).map(|(i, r)| mixed(i.t, *r));
    states.chain(times).fold(0.0, f64::max)
}

/// Run `scenario` for every tolerance of the ladder; print and check the
/// achieved errors.
fn ladder(name: &str, scenario: &Scenario, q: &[f64], p: &[f64], impacts: &[f64]) {
    println!("{name}: tol, achieved error, ratio, estimate, order, steps, pilots, warnings");
    let mut failures = Vec::new();
    for tol in LADDER {
        let (outcome, choice, sc) =
            execute_with_tolerance(scenario, RunPlan::new(0), tol, &mut Discard, &mut |_| {})
                .unwrap();
        let achieved = error(&outcome, q, p, impacts);
        println!(
            "{name}: {tol:.0e}  {achieved:.2e}  {:.2}  {:.2e}  {}  {}  {}  {:?}",
            achieved / tol,
            choice.error_estimate,
            choice.order,
            choice.steps,
            choice.pilot_runs,
            choice.warnings
        );
        assert_eq!(outcome.steps, choice.steps);
        assert_eq!(outcome.method.order_of_accuracy(), choice.order.get());
        assert!((sc.h * choice.steps as f64 - scenario.t_end).abs() < 1e-12 * scenario.t_end);
        assert!((outcome.final_t - scenario.t_end).abs() < 1e-9);
        if achieved > 10.0 * tol {
            failures.push(format!("tol {tol:e}: achieved {achieved:.3e}"));
        }
    }
    assert!(failures.is_empty(), "{name}: {failures:?}");
}

#[test]
fn pendulum_error_follows_the_tolerance() {
    let scenario = Scenario::defaults("pendulum").unwrap();
    // Reference: Kahan–Li at h = 5/4000 (error ~1e-15 by the fitted
    // constant of order 6; round-off ~1e-13).
    let mut reference = scenario.clone();
    let steps = 4000;
    reference.h = reference.t_end / steps as f64;
    let r = execute(
        &reference,
        RunPlan::new(steps).order(Order::Six),
        &mut Discard,
    )
    .unwrap();
    let times: Vec<f64> = r.impacts.iter().map(|i| i.t).collect();
    assert!(times.len() >= 3);
    // Constrained: the final configuration and the impact times (the
    // momentum converges at first order only, docs/theory.md §13).
    ladder("pendulum", &scenario, &r.final_q, &[], &times);
}

#[test]
fn particle_error_follows_the_tolerance() {
    let scenario = Scenario::defaults("particle").unwrap();
    let exact = BouncingParticle {
        g: scenario.parameters["g"].as_float().unwrap(),
        q0: [scenario.initial.q[0], scenario.initial.q[1]],
        v0: [scenario.initial.v[0], scenario.initial.v[1]],
    };
    let m = scenario.parameters["m"].as_float().unwrap();
    let (q, v) = exact.state_at(scenario.t_end);
    let p = [m * v[0], m * v[1]];
    let times = exact.impact_times(scenario.t_end);
    ladder("particle", &scenario, &q, &p, &times);
}

#[test]
fn the_choice_is_recorded_and_checked() {
    let mut scenario = Scenario::defaults("pendulum").unwrap();
    scenario.t_end = 1.0;
    let err = choose_step(&scenario, &RunPlan::new(0), -1.0).unwrap_err();
    assert!(matches!(err, RunError::InvalidTolerance { .. }), "{err}");
    assert!(matches!(
        choose_step(&scenario, &RunPlan::new(0), f64::NAN),
        Err(RunError::InvalidTolerance { .. })
    ));
    let choice = choose_step(&scenario, &RunPlan::new(0), 1e-7).unwrap();
    assert!(choice.pilot_runs >= 3);
    assert!(choice.error_estimate <= 1e-7);
    assert!(!choice.candidates.is_empty());
    let json = choice.to_json();
    assert_eq!(json.chosen_order, choice.order.get());
    assert_eq!(json.chosen_steps, choice.steps);
    // With derivatives tracked only order 2 (the midpoint scheme) runs.
    let d = choose_step(&scenario, &RunPlan::new(0).jacobian(true), 1e-5).unwrap();
    assert_eq!(d.order, Order::Two);
    // Zero steps: nothing to choose.
    scenario.t_end = 0.0;
    let z = choose_step(&scenario, &RunPlan::new(0), 1e-6).unwrap();
    assert_eq!((z.steps, z.pilot_runs), (0, 0));
}

#[test]
fn scenario_files_take_tol_instead_of_h() {
    let sc = Scenario::from_toml("model = \"pendulum\"\ntol = 1e-6\n").unwrap();
    assert_eq!(sc.tol, Some(1e-6));
    let back = Scenario::from_toml(&sc.to_toml()).unwrap();
    assert_eq!(back, sc);
    let err = Scenario::from_toml("model = \"pendulum\"\ntol = 1e-6\nh = 0.01\n").unwrap_err();
    assert!(err.to_string().contains("exclusive"), "{err}");
    assert!(Scenario::from_toml("model = \"pendulum\"\ntol = 0\n").is_err());
    let mut sc = sc;
    sc.set("h", "0.01").unwrap();
    assert_eq!(sc.tol, None, "h given: the step, not the tolerance");
    sc.set("tol", "1e-4").unwrap();
    assert_eq!(sc.tol, Some(1e-4));
    assert!(sc.set("tol", "-1").is_err());
    assert_eq!(sc.tol, Some(1e-4));
}
