//! The runner: recording interval, agreement of the records with the
//! summary, the error classes, and both steppers through impacts.

use diracvi_impact::ImpactError;
use diracvi_run::{
    Direction, Discard, Impacts, Order, RecordBuffer, RunError, RunPlan, Scenario, Stepper,
    describe, execute, execute_with_progress, step_count,
};

fn scenario(model: &str, sets: &[(&str, &str)]) -> Scenario {
    let mut sc = Scenario::defaults(model).unwrap();
    for (k, v) in sets {
        sc.set(k, v).unwrap();
    }
    sc
}

#[test]
fn records_every_kth_step_and_the_last() {
    let sc = scenario("particle", &[("t_end", "1.05")]);
    let steps = step_count(&sc, None).unwrap();
    assert_eq!(steps, 105);
    let mut buf = RecordBuffer::new();
    let mut ticks = Vec::new();
    let out = execute_with_progress(&sc, RunPlan::new(steps).every(10), &mut buf, &mut |k| {
        ticks.push(k)
    })
    .unwrap();
    let expected: Vec<usize> = (0..=100).step_by(10).chain([105]).collect();
    assert_eq!(buf.k, expected);
    assert_eq!(ticks, (1..=105).collect::<Vec<_>>());
    assert_eq!(buf.dimension, 2);
    assert_eq!(buf.q.len(), 2 * buf.len());
    // The last record is the final state, bit for bit.
    let last = buf.len() - 1;
    assert_eq!(buf.t[last].to_bits(), out.final_t.to_bits());
    assert_eq!(&buf.q[2 * last..], out.final_q.as_slice());
    assert_eq!(&buf.p[2 * last..], out.final_p.as_slice());
    assert_eq!(buf.energy[last].to_bits(), out.final_energy.to_bits());
    assert!((out.final_t - 1.05).abs() < 1e-12);
    // One bounce of the default particle (first impact at t ≈ 0.6388).
    assert_eq!(out.impacts.len(), 1);
    let i = &out.impacts[0];
    assert!((i.t - 0.6388).abs() < 1e-3, "{}", i.t);
    assert!((0.0..=1.0).contains(&i.alpha));
    assert_eq!(i.step, 63);
    assert_eq!(i.piece, 0);
    assert!(i.p_before[1] < 0.0 && i.p_after[1] > 0.0);
    assert!((i.energy_after - i.energy_before).abs() < 1e-9 * i.energy_before.abs());
    assert_eq!(out.impact_times(), vec![i.t]);
}

#[test]
fn every_zero_records_nothing_and_changes_nothing() {
    let sc = scenario("ellipse", &[("t_end", "3")]);
    let steps = step_count(&sc, None).unwrap();
    let mut buf = RecordBuffer::new();
    let a = execute(&sc, RunPlan::new(steps), &mut buf).unwrap();
    assert!(buf.is_empty());
    let b = execute(&sc, RunPlan::new(steps).every(1), &mut Discard).unwrap();
    assert_eq!(a.final_q, b.final_q);
    assert_eq!(a.final_p, b.final_p);
    assert_eq!(a.impacts, b.impacts);
    assert!(!a.impacts.is_empty());
}

#[test]
fn hamiltonian_stepper_agrees_with_lagrange_dirac_forward() {
    // With the forward map the two are one scheme (README: ≤ 7e-13).
    let sc = scenario("particle", &[("discretization", "forward"), ("t_end", "2")]);
    let steps = step_count(&sc, None).unwrap();
    let l = execute(&sc, RunPlan::new(steps), &mut Discard).unwrap();
    let h = execute(
        &sc,
        RunPlan::new(steps).stepper(Stepper::Hamiltonian),
        &mut Discard,
    )
    .unwrap();
    assert_eq!(l.impacts.len(), h.impacts.len());
    for (a, b) in l.final_q.iter().zip(&h.final_q) {
        assert!((a - b).abs() < 1e-11, "{a} vs {b}");
    }
}

#[test]
fn backward_runs_to_negative_times() {
    let sc = scenario("pendulum", &[("t_end", "0.5")]);
    let steps = step_count(&sc, None).unwrap();
    let mut buf = RecordBuffer::new();
    let out = execute(
        &sc,
        RunPlan::new(steps)
            .direction(Direction::Backward)
            .every(100),
        &mut buf,
    )
    .unwrap();
    assert!((out.final_t + 0.5).abs() < 1e-12, "{}", out.final_t);
    assert!(buf.t.windows(2).all(|w| w[1] < w[0]));
}

#[test]
fn error_classes() {
    // Input errors.
    let lc = Scenario::defaults("lc").unwrap();
    let err = execute(
        &lc,
        RunPlan::new(3).stepper(Stepper::Hamiltonian),
        &mut Discard,
    )
    .unwrap_err();
    assert!(matches!(err, RunError::NoHamiltonian { ref model } if model == "lc"));
    assert!(!err.is_numerical());
    let mut bad = Scenario::defaults("particle").unwrap();
    bad.initial.q = vec![0.0, -1.0];
    let err = execute(&bad, RunPlan::new(3), &mut Discard).unwrap_err();
    assert!(matches!(err, RunError::Model(_)), "{err}");
    assert!(
        err.to_string().contains("outside the admissible set"),
        "{err}"
    );
    assert!(describe(&bad).is_err());

    // Numerical failures name the model, the step and the time.
    let sc = scenario("pendulum", &[("h", "0.5")]);
    let err = execute(&sc, RunPlan::new(10), &mut Discard).unwrap_err();
    assert!(err.is_numerical());
    assert!(
        matches!(
            err,
            RunError::Integration {
                error: ImpactError::Step(_),
                ..
            }
        ),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.starts_with("pendulum: step"), "{msg}");
    assert!(msg.contains("Newton did not converge"), "{msg}");

    let err = execute(
        &Scenario::defaults("particle").unwrap(),
        RunPlan::new(100).impacts(Impacts::Reject),
        &mut Discard,
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            RunError::Integration {
                error: ImpactError::Crossing {
                    step: 63,
                    piece: 0,
                    ..
                },
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn describe_names_coordinates_and_pieces() {
    let d = describe(&Scenario::defaults("pendulum").unwrap()).unwrap();
    assert_eq!(d.coordinates.len(), 2);
    assert_eq!(d.boundary_names.len(), 1);
    assert_eq!(d.constraints, 1);
    assert!(d.has_hamiltonian);
    let lc = describe(&Scenario::defaults("lc").unwrap()).unwrap();
    assert!(!lc.has_hamiltonian);
    assert!(lc.boundary_names.is_empty());
}

/// `RunPlan::reduce`: the reduced runs reconstruct full records (full
/// coordinates and momenta) that agree with the full runs; models without
/// a declared symmetry and unsupported plans are input errors.
#[test]
fn reduced_runs_reconstruct_the_full_records() {
    for (model, tol) in [
        ("particle", 1e-10),
        ("pendulum", 1e-5),
        ("disk-table", 1e-3),
    ] {
        let sc = scenario(
            model,
            &[
                ("discretization", "midpoint"),
                ("constraint", "midpoint"),
                ("t_end", "3"),
            ],
        );
        let steps = step_count(&sc, None).unwrap();
        let (mut full, mut red) = (RecordBuffer::new(), RecordBuffer::new());
        let a = execute(&sc, RunPlan::new(steps).every(50), &mut full).unwrap();
        let b = execute(&sc, RunPlan::new(steps).every(50).reduce(true), &mut red).unwrap();
        assert_eq!(full.k, red.k, "{model}");
        assert_eq!(full.dimension, red.dimension, "{model}");
        assert_eq!(a.impacts.len(), b.impacts.len(), "{model}");
        assert!(!b.impacts.is_empty(), "{model}");
        let dq = full
            .q
            .iter()
            .zip(&red.q)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(dq < tol, "{model}: records differ by {dq:e}");
        for (x, y) in a.impacts.iter().zip(&b.impacts) {
            assert!(
                (x.t - y.t).abs() < tol,
                "{model}: impact {} vs {}",
                x.t,
                y.t
            );
            assert_eq!(x.q.len(), y.q.len());
        }
        assert!((a.initial_energy - b.initial_energy).abs() < 1e-6 * a.energy_scale);
    }
    let sc = scenario("ellipse", &[]);
    let err = execute(&sc, RunPlan::new(10).reduce(true), &mut Discard).unwrap_err();
    assert!(
        matches!(err, RunError::Model(_)) && !err.is_numerical(),
        "{err}"
    );
    let sc = scenario("pendulum", &[]);
    for plan in [
        RunPlan::new(10).reduce(true).direction(Direction::Backward),
        RunPlan::new(10).reduce(true).stepper(Stepper::Hamiltonian),
        // the reduced run is second order: order 4 would be a relabel
        RunPlan::new(10).reduce(true).order(Order::Four),
        RunPlan::new(10).reduce(true).order(Order::Six),
    ] {
        let err = execute(&sc, plan, &mut Discard).unwrap_err();
        assert!(
            matches!(err, RunError::ReductionUnsupported { .. }),
            "{err}"
        );
    }
}
