//! Circuits through the runner: a netlist and `lc-ladder` are scenarios
//! like every model (same plan, records and outcome), run on the sparse
//! stepper at order 2 and on the run-time core at orders 4 and 6; what
//! cannot run is refused.

use crate::common::{assert_orders, run_to};
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
    assert_eq!(net.method.core, Core::RunTime);
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

/// What cannot run is refused with a typed error, never relabelled: the
/// Hamiltonian stepper, reduction; at orders 4 and 6 (the run-time core)
/// loops of capacitors and voltage sources.
#[test]
fn unsupported_combinations_are_refused() {
    let sc = Scenario::defaults("lc-ladder").unwrap();
    let run = |sc: &Scenario, plan: RunPlan| execute(sc, plan, &mut RecordBuffer::new());
    assert!(matches!(
        run(&sc, RunPlan::new(3).stepper(Stepper::Hamiltonian)),
        Err(RunError::NoHamiltonian { .. })
    ));
    assert!(matches!(
        run(
            &sc,
            RunPlan::new(3)
                .order(Order::Four)
                .stepper(Stepper::Hamiltonian)
        ),
        Err(RunError::NoHamiltonian { .. } | RunError::UnsupportedOrder { .. })
    ));
    assert!(matches!(
        run(&sc, RunPlan::new(3).reduce(true)),
        Err(RunError::CircuitUnsupported { .. })
    ));
    let ddm = Scenario::from_netlist("ddm-lc", DDM_LC, 0.1, 1.0).unwrap();
    let e = run(&ddm, RunPlan::new(3).order(Order::Four)).unwrap_err();
    assert!(matches!(e, RunError::CircuitUnsupported { .. }), "{e}");
    assert!(e.to_string().contains("loops"), "{e}");
    // The (−) stepper runs, and reports that it did.
    let o = run(&sc, RunPlan::new(3).direction(Direction::Backward)).unwrap();
    assert_eq!(o.method.direction, Direction::Backward);
}

/// Orders 4 and 6 take circuits of any size: a ladder of 1 000 cells
/// (3 001 coordinates + Kirchhoff rows, far above the 400 a dense KKT
/// solve of the energy once allowed) runs at order 4 on the run-time core,
/// its step and its energy measure (the constrained Legendre map, a sparse
/// KKT solve here; docs/theory.md §8.7, §11.4) linear in the size, and its
/// energy behaves: over 3 steps the order-4 energy stays at the initial
/// data's `c v0² (N + 1)/4` to 1e-12 relative (measured: 5.7e-16), at
/// least 1e4 times closer than the order-2 forward map's discrete energy
/// (measured: 1.8e-7), and the two runs' charges agree to 1e-3 (measured:
/// 2.9e-5).
#[test]
fn order_four_runs_a_ladder_above_the_old_cap() {
    let cells = 1000;
    let mut sc = Scenario::defaults("lc-ladder").unwrap();
    sc.set("cells", &cells.to_string()).unwrap();
    let steps = 3;
    let run = |plan: RunPlan| execute(&sc, plan, &mut RecordBuffer::new()).unwrap();
    let o4 = run(RunPlan::new(steps).order(Order::Four));
    let o2 = run(RunPlan::new(steps));
    assert_eq!(o4.method.core, Core::RunTime);
    assert_eq!(o4.method.order_of_accuracy(), 4);
    assert_eq!(o4.final_q.len(), 2 * cells + 1);
    let exact = (cells as f64 + 1.0) / 4.0;
    let e4 = (o4.final_energy - exact)
        .abs()
        .max(o4.max_abs_energy_deviation)
        / exact;
    let e2 = (o2.final_energy - exact).abs() / exact;
    let q = o2
        .final_q
        .iter()
        .zip(&o4.final_q)
        .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(e4 <= 1e-12, "order 4: relative energy error {e4:e}");
    assert!(e2 >= 1e4 * e4, "order 2: {e2:e}, order 4: {e4:e}");
    assert!(q <= 1e-3, "charges differ by {q:e}");
    assert!(
        o4.max_constraint_residual <= 1e-12,
        "{}",
        o4.max_constraint_residual
    );
}

/// A netlist with a DC voltage source, two meshes and no loop of
/// capacitors and sources.
const TWO_MESH: &str =
    "V1 3 0 DC 1\nL3 3 1 1 IC=0.3\nL1 1 0 1 IC=1\nC1 1 2 0.5\nL2 2 0 2\nC2 2 0 1 IC=0.5\n";

/// `lc-ladder` and a netlist at orders 4 and 6 run on the run-time core
/// (the summary says so) and converge at their order: the final-state
/// error against a run with half the step, at three step sizes, gives
/// fitted orders within 0.3 of 4 and 6 (measured: ladder 4.00, 4.00 and
/// 5.98, 5.99; netlist 3.91, 3.98 and 5.93, 5.98).
#[test]
fn composed_orders_converge_on_the_run_time_core() {
    let mut ladder = Scenario::defaults("lc-ladder").unwrap();
    ladder.set("cells", "8").unwrap();
    let net = Scenario::from_netlist("two-mesh", TWO_MESH, 0.1, 10.0).unwrap();
    let t_end = 3.2; // a whole number of every step below
    // Steps in the asymptotic range, errors above round-off (the ladder's
    // mode 1 is slow: ω₁ ≈ 0.35).
    for (sc, order, hs) in [
        (&ladder, Order::Four, [0.2, 0.1, 0.05]),
        (&net, Order::Four, [0.1, 0.05, 0.025]),
        (&ladder, Order::Six, [0.8, 0.4, 0.2]),
        (&net, Order::Six, [0.2, 0.1, 0.05]),
    ] {
        let final_q = |h: f64| {
            let o = run_to(sc, h, t_end, order);
            assert_eq!(o.method.order_of_accuracy(), order.get());
            assert!(
                o.max_constraint_residual <= 1e-12,
                "{}",
                o.max_constraint_residual
            );
            o.final_q
        };
        let errors: Vec<f64> = hs
            .iter()
            .map(|&h| {
                let (coarse, fine) = (final_q(h), final_q(h / 2.0));
                coarse
                    .iter()
                    .zip(&fine)
                    .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()))
            })
            .collect();
        let what = format!("{} order {}", sc.model, order.get());
        assert_orders(&errors, f64::from(order.get()), 0.3, &what);
    }
}

/// Initial charges that violate a loop's voltage law are an input error
/// naming the loop: a 1 V source across two capacitors in parallel, one of
/// them at 0.25 V and one at 0 V, sums to −0.75 V around the loop of the
/// first two and to −1 V around the other. The same circuit with IC=1 on
/// both capacitors runs, and so does one whose inconsistency is elsewhere
/// (none: the first step's error stays a numerical one only when no loop is
/// violated).
#[test]
fn initial_charges_off_a_loop_are_refused_with_the_loop() {
    let bad = "V1 1 0 DC 1\nC1 1 0 1 IC=0.25\nC2 1 0 2\nL1 1 0 1\n";
    let sc = Scenario::from_netlist("bad", bad, 0.1, 1.0).unwrap();
    let e = execute(&sc, RunPlan::new(5), &mut RecordBuffer::new()).unwrap_err();
    let RunError::InconsistentLoop { loops, .. } = &e else {
        panic!("{e}");
    };
    assert!(!e.is_numerical());
    let text = e.to_string();
    for part in ["C1", "C2", "V1", "-0.75 V", "-1 V", "IC="] {
        assert!(text.contains(part), "{part}: {text}");
    }
    assert_eq!(loops.matches("(sum").count(), 2, "{loops}");
    let good = "V1 1 0 DC 1\nC1 1 0 1 IC=1\nC2 1 0 2 IC=1\nL1 1 0 1\n";
    let sc = Scenario::from_netlist("good", good, 0.1, 1.0).unwrap();
    let o = execute(&sc, RunPlan::new(5), &mut RecordBuffer::new()).unwrap();
    assert!(o.max_constraint_residual <= 1e-12);
}

/// A composition's stages of different sizes each keep the factors of
/// their own step equations (sparse storage; docs/theory.md §9.4): a
/// ladder of 20 cells (61 unknowns, sparse) evaluates and factors its
/// (constant) step Jacobian once per distinct stage size over the whole
/// run — order 2 (the forward map, one size) once, the triple jump twice
/// (its outer stages forward, its inner one backward), Kahan–Li five
/// times (four forward sizes, one backward) — where it used to factor at
/// every change of size (7 of Kahan–Li's 9 stages per step). The summary
/// counts every Jacobian a step evaluates: a small circuit on dense
/// storage (the two-mesh netlist) evaluates one per stage.
#[test]
fn composed_stages_keep_the_factors_of_each_size() {
    let mut ladder = Scenario::defaults("lc-ladder").unwrap();
    ladder.set("cells", "20").unwrap();
    let steps = 40;
    for (order, jacobians) in [(Order::Two, 1), (Order::Four, 2), (Order::Six, 5)] {
        let o = execute(
            &ladder,
            RunPlan::new(steps).order(order),
            &mut RecordBuffer::new(),
        )
        .unwrap();
        assert_eq!(o.method.core, Core::RunTime);
        assert_eq!(
            o.jacobian_evaluations,
            jacobians,
            "order {}: {} Newton iterations",
            order.get(),
            o.newton_iterations
        );
    }
    let net = Scenario::from_netlist("two-mesh", TWO_MESH, 0.1, 10.0).unwrap();
    let o = execute(
        &net,
        RunPlan::new(steps).order(Order::Four),
        &mut RecordBuffer::new(),
    )
    .unwrap();
    assert_eq!(o.jacobian_evaluations, 3 * steps);
}

/// `--backward` at order 4: from the ladder's initial data (charges, no
/// currents) the (−) run is the mirror image of the (+) run, `q(−t) =
/// q(t)`, `p(−t) = −p(t)`, to round-off (the composed step is symmetric and
/// the Lagrangian even in the currents).
#[test]
fn backward_order_four_mirrors_forward() {
    let sc = Scenario::defaults("lc-ladder").unwrap();
    let plan = RunPlan::new(50).order(Order::Four);
    let f = execute(&sc, plan.clone(), &mut RecordBuffer::new()).unwrap();
    let b = execute(
        &sc,
        plan.direction(Direction::Backward),
        &mut RecordBuffer::new(),
    )
    .unwrap();
    assert_eq!(b.method.direction, Direction::Backward);
    assert!((f.final_t + b.final_t).abs() <= 1e-12);
    for (x, y) in f.final_q.iter().zip(&b.final_q) {
        assert!((x - y).abs() <= 1e-12, "{x} vs {y}");
    }
    for (x, y) in f.final_p.iter().zip(&b.final_p) {
        assert!((x + y).abs() <= 1e-12, "{x} vs {y}");
    }
}

/// Driven circuits against their exact solutions. A series LC driven by a
/// sine voltage, `L q̈ + q/C = E₀ sin ω t` from rest, has the capacitor
/// charge `q(t) = E₀/(L (ω₀² − ω²)) (sin ω t − (ω/ω₀) sin ω₀ t)`,
/// `ω₀ = 1/√(LC)`; a parallel LC pumped by a cosine current,
/// `L C ï + i = I₀ cos ω t` for the inductor current from rest, has the
/// inductor charge `I₀/(1 − ω²/ω₀²) (sin ω t/ω − sin ω₀ t/ω₀)`. At orders 4
/// and 6 (the run-time core: the voltage sampled at each stage's midpoint
/// time, the current source's charge driving the Kirchhoff row exactly;
/// docs/theory.md §8.8) the charges at `t = 3.2` converge at the order:
/// fitted orders within 0.3 of 4 and 6 over two halvings of `h` (measured:
/// voltage 8.9e-5, 5.6e-6, 3.5e-7 at `h = 0.1, 0.05, 0.025` (orders 3.98,
/// 4.00) and 1.7e-7, 2.7e-9, 4.2e-11 at `h = 0.2, 0.1, 0.05` (5.98, 6.00);
/// current 1.4e-4, 9.0e-6, 5.7e-7 (3.99, 4.00) and 2.4e-7, 3.8e-9,
/// 5.9e-11 (5.98, 5.99)). The current is a cosine because a composition's
/// backward stage samples the source before `t = 0`, where a `SIN` holds
/// its value: `sin ω t` would have a kink there (measured: order 3).
#[test]
fn driven_circuits_converge_at_orders_four_and_six_to_their_exact_charges() {
    let (l, c, f) = (1.0_f64, 0.5_f64, 0.3_f64);
    let (w0, w) = (1.0 / (l * c).sqrt(), 2.0 * std::f64::consts::PI * f);
    let t_end = 3.2;
    let cases = [
        (
            format!("V1 1 0 SIN(0 1 {f})\nL1 1 2 {l}\nC1 2 0 {c}\n"),
            "q_C1",
            1.0 / (l * (w0 * w0 - w * w)) * ((w * t_end).sin() - w / w0 * (w0 * t_end).sin()),
        ),
        (
            format!("I1 0 1 SIN(0 1 {f} 0 0 90)\nL1 1 0 {l}\nC1 1 0 {c}\n"),
            "q_L1",
            1.0 / (1.0 - w * w / (w0 * w0)) * ((w * t_end).sin() / w - (w0 * t_end).sin() / w0),
        ),
    ];
    for (net, coordinate, exact) in &cases {
        let sc = Scenario::from_netlist("driven", net, 0.1, t_end).unwrap();
        let i = describe(&sc)
            .unwrap()
            .coordinates
            .iter()
            .position(|n| n == coordinate)
            .unwrap();
        for (order, hs, expected) in [
            (Order::Four, [0.1, 0.05, 0.025], 4.0),
            (Order::Six, [0.2, 0.1, 0.05], 6.0),
        ] {
            let errors: Vec<f64> = hs
                .iter()
                .map(|&h| {
                    let o = run_to(&sc, h, t_end, order);
                    assert!(
                        o.max_constraint_residual <= 1e-15,
                        "{}",
                        o.max_constraint_residual
                    );
                    (o.final_q[i] - exact).abs()
                })
                .collect();
            assert_orders(&errors, expected, 0.3, &format!("{coordinate} {order:?}"));
            assert!(errors[0] <= 2e-4, "{coordinate} {order:?}: {errors:?}");
        }
    }
}

/// `--jacobian` and `--sensitivity` of a circuit (docs/theory.md §12.8):
/// the [DDM] circuit with charged capacitors, its parallel pair C1, C3 a
/// loop (with the forward map a degenerate step whose hidden constraint
/// the circuit supplies; with the midpoint map a regular one). The
/// derivatives in the element values L1, C1, C2, C3 (a capacitor's initial
/// charge `c · V` moving with `c`, its `IC=` voltage fixed) against central
/// differences of whole runs of the netlist with the value changed by
/// `1e-4` relative, and the Jacobian's column of the inductor's momentum
/// against runs with its `IC=` current changed: relative `1e-6` (the
/// differences' truncation is `~1e-8`; measured `≤ 3e-9` for the forward
/// map).
#[test]
fn circuit_derivatives_match_differences_of_runs() {
    let netlist = |v: [f64; 4], current: f64| {
        format!(
            "L1 1 0 {} IC={current}\nC1 0 2 {} IC=2\nC2 2 1 {} IC=-1\nC3 0 2 {} IC=2\n.end\n",
            v[0], v[1], v[2], v[3]
        )
    };
    let values = [0.75, 1.0, 2.0, 3.0];
    let steps = 300;
    for map in ["forward", "midpoint"] {
        let scenario = |v: [f64; 4], current: f64| {
            let mut sc =
                Scenario::from_netlist("ddm-charged", &netlist(v, current), 0.01, 3.0).unwrap();
            sc.set("discretization", map).unwrap();
            sc
        };
        let final_state = |sc: &Scenario| {
            let o = execute(sc, RunPlan::new(steps), &mut RecordBuffer::new()).unwrap();
            [o.final_q, o.final_p].concat()
        };
        let names = ["L1", "C1", "C2", "C3"];
        let o = execute(
            &scenario(values, 10.0),
            RunPlan::new(steps).jacobian(true).sensitivity(names),
            &mut RecordBuffer::new(),
        )
        .unwrap();
        let check = |what: &str, exact: &[f64], plus: Vec<f64>, minus: Vec<f64>, delta: f64| {
            let scale = exact.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
            for i in 0..exact.len() {
                let fd = (plus[i] - minus[i]) / (2.0 * delta);
                assert!(
                    (fd - exact[i]).abs() <= 1e-6 * scale,
                    "{map}: ∂x[{i}]/∂{what}: {} vs {fd}",
                    exact[i]
                );
            }
        };
        for (k, name) in names.iter().enumerate() {
            let (asked, exact) = &o.sensitivity[k];
            assert_eq!(asked, name);
            let delta = 1e-4 * values[k];
            let at = |e: f64| {
                let mut v = values;
                v[k] += e;
                final_state(&scenario(v, 10.0))
            };
            check(name, exact, at(delta), at(-delta), delta);
        }
        // p_L1 = L1 · i: the inductor's current moves its momentum alone.
        let jacobian = o.jacobian.as_ref().unwrap();
        let n = o.final_q.len();
        let column: Vec<f64> = jacobian.column(n).iter().copied().collect();
        let delta = 1e-4;
        let at = |e: f64| final_state(&scenario(values, 10.0 + e / values[0]));
        check("p_L1", &column, at(delta), at(-delta), delta);
    }
}

/// A source's voltage on a loop of capacitors and voltage sources is tied
/// to the capacitors' initial voltages, so its sensitivity is refused with
/// the reason; an unknown name lists the element values.
#[test]
fn circuit_sensitivities_that_are_not_defined_are_refused() {
    let run = |net: &str, plan: RunPlan| {
        let sc = Scenario::from_netlist("refused", net, 0.01, 0.1).unwrap();
        execute(&sc, plan, &mut RecordBuffer::new())
    };
    let on_loop = "V1 1 0 2\nC1 1 0 1 IC=2\nL1 1 2 1\nC2 2 0 1\n.end\n";
    let e = run(on_loop, RunPlan::new(10).sensitivity(["V1"])).unwrap_err();
    assert!(matches!(e, RunError::SensitivityUnsupported { .. }), "{e}");
    assert!(e.to_string().contains("V1 lies on a loop"), "{e}");
    // The other values of the same circuit can be differentiated in.
    let o = run(on_loop, RunPlan::new(10).sensitivity(["C1", "L1"])).unwrap();
    assert_eq!(o.sensitivity.len(), 2);
    assert!(o.sensitivity[1].1.iter().all(|x| x.is_finite()));
    let e = run(on_loop, RunPlan::new(10).sensitivity(["R9"])).unwrap_err();
    assert!(
        matches!(e, RunError::UnknownSensitivityParameter { ref valid, .. } if valid.len() == 4),
        "{e}"
    );
}

/// A circuit driven by a sine source (a time-dependent Lagrangian), the
/// source shunted by a capacitor (a driven loop: with the forward map a
/// degenerate step whose hidden constraint `q_C2 = C2 E(t)` moves in time):
/// the sensitivities in L1 and C1 against central differences of runs of
/// the edited netlist, relative 1e-6 (measured ≤ 9e-9), both maps.
#[test]
fn a_driven_circuit_differentiates_in_its_element_values() {
    let netlist = |l: f64, c: f64| {
        format!("V1 1 0 SIN(0 1 0.3)\nL1 1 2 {l} IC=0.5\nC1 2 0 {c} IC=0.2\nC2 1 0 0.5\n.end\n")
    };
    for map in ["forward", "midpoint"] {
        let scenario = |l: f64, c: f64| {
            let mut sc = Scenario::from_netlist("driven", &netlist(l, c), 0.01, 3.0).unwrap();
            sc.set("discretization", map).unwrap();
            sc
        };
        let steps = 300;
        let o = execute(
            &scenario(1.0, 1.0),
            RunPlan::new(steps).jacobian(true).sensitivity(["L1", "C1"]),
            &mut RecordBuffer::new(),
        )
        .unwrap();
        let end = |l: f64, c: f64| {
            let o = execute(
                &scenario(l, c),
                RunPlan::new(steps),
                &mut RecordBuffer::new(),
            )
            .unwrap();
            [o.final_q, o.final_p].concat()
        };
        let delta = 1e-4;
        for (k, (plus, minus)) in [
            (end(1.0 + delta, 1.0), end(1.0 - delta, 1.0)),
            (end(1.0, 1.0 + delta), end(1.0, 1.0 - delta)),
        ]
        .into_iter()
        .enumerate()
        {
            let (name, exact) = &o.sensitivity[k];
            let scale = exact.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
            for i in 0..exact.len() {
                let fd = (plus[i] - minus[i]) / (2.0 * delta);
                assert!(
                    (fd - exact[i]).abs() <= 1e-6 * scale,
                    "{map}: ∂x[{i}]/∂{name}: {} vs {fd}",
                    exact[i]
                );
            }
        }
    }
}

/// Which systems have algebraic variables (`∂²L/∂v²` singular on
/// `ker A(q0)`, docs/theory.md §3.9): a loop of capacitors, whether the
/// circuit is the catalogue's `lc`, its model file, or its netlist; not
/// `lc-ladder` or the two-mesh netlist, whose Lagrangians are degenerate
/// but whose capacitor currents Kirchhoff's law fixes; not a mechanical
/// model, the heavy top included, whose kinetic form on the quaternion's
/// `R⁴` is singular along `q` but regular on `ker A = {q · q̇ = 0}` (its
/// `--tol` choices are unchanged).
#[test]
fn algebraic_variables_are_found_on_every_core() {
    let file =
        Scenario::from_model_file(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/lc.toml"))
            .unwrap();
    let ddm = Scenario::from_netlist("ddm-lc", DDM_LC, 0.1, 1.0).unwrap();
    let two_mesh = Scenario::from_netlist("two-mesh", TWO_MESH, 0.1, 1.0).unwrap();
    let ladder = Scenario::defaults("lc-ladder").unwrap();
    let pendulum = Scenario::defaults("pendulum").unwrap();
    let lc = Scenario::defaults("lc").unwrap();
    let top = Scenario::defaults("heavy-top").unwrap();
    for (name, scenario, algebraic, regular) in [
        ("lc", &lc, true, false),
        ("models/lc.toml", &file, true, false),
        ("ddm-lc.cir", &ddm, true, false),
        ("two-mesh", &two_mesh, false, false),
        ("lc-ladder", &ladder, false, false),
        ("pendulum", &pendulum, false, true),
        ("heavy-top", &top, false, false),
    ] {
        let info = describe(scenario).unwrap();
        assert_eq!(info.algebraic_variables, algebraic, "{name}");
        assert_eq!(info.regular_lagrangian, regular, "{name}");
    }
}
