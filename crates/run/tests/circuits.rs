//! Circuits through the runner: a netlist and `lc-ladder` are scenarios
//! like every model (same plan, records and outcome), run on the sparse
//! stepper; what it cannot run is refused.

use diracvi_run::{
    Core, Direction, Order, RecordBuffer, RunError, RunPlan, Scenario, Stepper, describe, execute,
};

const DDM_LC: &str = include_str!("../../../circuits/ddm-lc.cir");

/// The [DDM] netlist (coordinates in the built-in `lc`'s order) on the
/// sparse core agrees with the built-in `lc` on the compiled dense core:
/// same method, same trajectory to round-off, over 200 steps.
#[test]
fn the_ddm_netlist_runs_as_the_built_in_lc() {
    let built_in = Scenario::defaults("lc").unwrap();
    let netlist = Scenario::from_netlist("ddm-lc", DDM_LC, built_in.h, built_in.t_end).unwrap();
    let steps = 200;
    let mut a = RecordBuffer::new();
    let mut b = RecordBuffer::new();
    let lc = execute(&built_in, RunPlan::new(steps).every(50), &mut a).unwrap();
    let net = execute(&netlist, RunPlan::new(steps).every(50), &mut b).unwrap();
    assert_eq!(net.method.core, Core::Sparse);
    assert_eq!(
        net.method.order_of_accuracy(),
        lc.method.order_of_accuracy()
    );
    assert_eq!(a.k, b.k);
    let scale = lc.final_q.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
    for (x, y) in lc.final_q.iter().zip(&net.final_q) {
        assert!((x - y).abs() <= 1e-11 * scale, "{x} vs {y}");
    }
    for (x, y) in a.q.iter().zip(&b.q) {
        assert!((x - y).abs() <= 1e-11 * scale, "{x} vs {y}");
    }
    assert!((lc.initial_energy - net.initial_energy).abs() <= 1e-12 * lc.energy_scale);
    assert!(net.max_constraint_residual <= 1e-14);
    let info = describe(&netlist).unwrap();
    assert_eq!(info.coordinates.len(), 4);
    assert!(!info.has_hamiltonian);
}

/// A run of zero steps reports the energy of the initial data: for the
/// ladder's mode `m` of `N` cells, `½ c v0² Σ sin²(j m π/(N+1)) = c v0² (N+1)/4`.
#[test]
fn zero_steps_report_the_initial_energy() {
    for (cells, mode) in [(10, 1), (37, 5)] {
        let mut sc = Scenario::defaults("lc-ladder").unwrap();
        sc.set("cells", &cells.to_string()).unwrap();
        sc.set("mode", &mode.to_string()).unwrap();
        sc.set("v0", "2").unwrap();
        let mut buf = RecordBuffer::new();
        let o = execute(&sc, RunPlan::new(0).every(1), &mut buf).unwrap();
        let exact = 4.0 * (cells as f64 + 1.0) / 4.0;
        assert!(
            (o.initial_energy - exact).abs() <= 1e-12 * exact,
            "{}",
            o.initial_energy
        );
        assert_eq!(buf.len(), 1);
        assert_eq!(buf.q.len(), 2 * cells + 1);
        // The discrete energy of the first step is O(h) from it (forward map).
        let o = execute(&sc, RunPlan::new(1), &mut RecordBuffer::new()).unwrap();
        assert!((o.initial_energy - exact).abs() <= 0.05 * exact);
    }
}

/// What the sparse stepper does not run is refused with a typed error, never
/// relabelled: the Hamiltonian stepper, reduction, the composed orders.
#[test]
fn unsupported_combinations_are_refused() {
    let sc = Scenario::defaults("lc-ladder").unwrap();
    let run = |plan: RunPlan| execute(&sc, plan, &mut RecordBuffer::new());
    assert!(matches!(
        run(RunPlan::new(3).stepper(Stepper::Hamiltonian)),
        Err(RunError::NoHamiltonian { .. })
    ));
    assert!(matches!(
        run(RunPlan::new(3).reduce(true)),
        Err(RunError::CircuitUnsupported { .. })
    ));
    for order in [Order::Four, Order::Six] {
        let e = run(RunPlan::new(3).order(order)).unwrap_err();
        assert!(matches!(e, RunError::CircuitUnsupported { .. }), "{e}");
        assert!(e.to_string().contains("order"), "{e}");
    }
    // The (−) stepper runs, and reports that it did.
    let o = run(RunPlan::new(3).direction(Direction::Backward)).unwrap();
    assert_eq!(o.method.direction, Direction::Backward);
}
