//! Helpers the test files share: a scenario run to a time at a step and
//! order, and the check that errors fall at an order when the step halves.

use diracvi_run::{Core, Order, RecordBuffer, RunOutcome, RunPlan, Scenario, execute};

/// `sc` with the step `h`, run to `t_end` at `order`, on the run-time core
/// (asserted).
pub(crate) fn run_to(sc: &Scenario, h: f64, t_end: f64, order: Order) -> RunOutcome {
    let mut sc = sc.clone();
    sc.h = h;
    let steps = (t_end / h).round() as usize;
    let o = execute(
        &sc,
        RunPlan::new(steps).order(order),
        &mut RecordBuffer::new(),
    )
    .unwrap();
    assert_eq!(o.method.core, Core::RunTime);
    o
}

/// Errors at successive halvings of the step fall at the order `expected`:
/// each fitted `log2(e_k / e_{k+1})` within `slack` of it.
pub(crate) fn assert_orders(errors: &[f64], expected: f64, slack: f64, what: &str) {
    for pair in errors.windows(2) {
        let fitted = (pair[0] / pair[1]).log2();
        assert!(
            (fitted - expected).abs() <= slack,
            "{what}: errors {errors:?}, fitted order {fitted}"
        );
    }
}
