//! Model files with forces and drives (docs/model-files.md "Forces and
//! drives", docs/theory.md §8.8): a time-dependent Lagrangian and prescribed
//! flows through the constraint rows, on the run-time core at orders 2, 4
//! and 6; what needs an autonomous Lagrangian is refused, typed.

use crate::common::{assert_orders, run_to};
use diracvi_run::{
    Core, Direction, Order, RecordBuffer, RunError, RunPlan, Scenario, Stepper, execute,
};

/// `m ẍ + k x = F₀ cos ω t` from rest.
const FORCED: &str = r#"
[model]
name = "forced-oscillator"
coordinates = ["x"]
lagrangian = "0.5*m*x_dot^2 - 0.5*k*x^2"

[forces]
x = "F0*cos(w*t)"

[parameters]
m = 1.0
k = 4.0
F0 = 0.5
w = 1.3

[run]
h = 0.01
t_end = 10.0
discretization = "midpoint"
constraint = "midpoint"

[initial]
q = [0.0]
v = [0.0]
"#;

/// A forced oscillator converges to its exact solution
/// `x(t) = F₀/(m(ω₀² − ω²)) (cos ω t − cos ω₀ t)` at the order of the method:
/// at `t = 10`, over two halvings of `h = 0.1`, fitted orders within 0.3 of
/// 2, 4 and 6 (measured: errors 1.2e-2, 3.2e-3, 7.9e-4 (orders 1.98, 2.00);
/// 3.9e-4, 2.5e-5, 1.6e-6 (3.96, 3.99); 1.9e-8, 3.1e-10, 4.8e-12 (5.99,
/// 6.00)), on the run-time core (the compile-time core is autonomous).
#[test]
fn a_forced_oscillator_converges_at_orders_two_four_and_six() {
    let (w0, w, t_end) = (2.0_f64, 1.3_f64, 10.0);
    let exact = 0.5 / (w0 * w0 - w * w) * ((w * t_end).cos() - (w0 * t_end).cos());
    for (order, expected) in [(Order::Two, 2.0), (Order::Four, 4.0), (Order::Six, 6.0)] {
        let sc = Scenario::from_toml(FORCED).unwrap();
        let errors: Vec<f64> = [0.1, 0.05, 0.025]
            .iter()
            .map(|&h| (run_to(&sc, h, t_end, order).final_q[0] - exact).abs())
            .collect();
        assert_orders(&errors, expected, 0.3, &format!("{order:?}"));
    }
}

/// Two unit masses on springs whose difference is prescribed:
/// `ẋ − ẏ + ġ(t) = 0` with `g(t) = a sin(w t)`.
const DRIVEN: &str = r#"
[model]
name = "driven-pair"
coordinates = ["x", "y"]
lagrangian = "0.5*(x_dot^2 + y_dot^2) - 0.5*(x^2 + 2*y^2)"
constraints = [["1", "-1"]]
drives = ["a*sin(w*t)"]

[parameters]
a = 0.3
w = 2.0

[run]
h = 0.05
t_end = 4.0
discretization = "midpoint"
constraint = "midpoint"

[initial]
q = [1.0, 0.5]
v = [0.2, "solve"]
"#;

/// A drive passes exactly: `x − y + g(t)` keeps its initial value at every
/// order to round-off (measured ≤ 3e-16), the driven row's residual is at
/// round-off, and the velocity solved at the start passes `ġ(0) = a w`
/// (`ẏ(0) = ẋ(0) + a w = 0.8`). Orders 4 and 6 agree to the order-4 error.
#[test]
fn a_drive_passes_its_prescribed_displacement_exactly() {
    let sc = Scenario::from_toml(DRIVEN).unwrap();
    let (a, w, t_end) = (0.3_f64, 2.0_f64, 4.0);
    let steps = 80;
    let mut finals = Vec::new();
    for order in [Order::Two, Order::Four, Order::Six] {
        let mut records = RecordBuffer::new();
        let o = execute(&sc, RunPlan::new(steps).order(order), &mut records).unwrap();
        let kept = o.final_q[0] - o.final_q[1] + a * (w * t_end).sin();
        assert!((kept - 0.5).abs() <= 1e-14, "{order:?}: {kept}");
        assert!(
            o.max_constraint_residual <= 1e-14,
            "{}",
            o.max_constraint_residual
        );
        finals.push(o.final_q.clone());
    }
    assert!((finals[1][0] - finals[2][0]).abs() <= 1e-5);
    let o = execute(&sc, RunPlan::new(0), &mut RecordBuffer::new()).unwrap();
    assert!(o.max_constraint_residual <= 1e-15);
}

/// What needs an autonomous Lagrangian is refused with a typed error
/// naming the system: the Hamiltonian stepper, walls, reduction, the
/// sensitivities to a parameter of a drive (the drives are not
/// differentiated in the parameters; forces are); bad `[forces]` and
/// `model.drives` name their key.
#[test]
fn what_needs_an_autonomous_lagrangian_is_refused() {
    let sc = Scenario::from_toml(FORCED).unwrap();
    let run = |sc: &Scenario, plan: RunPlan| execute(sc, plan, &mut RecordBuffer::new());
    let e = run(&sc, RunPlan::new(3).stepper(Stepper::Hamiltonian)).unwrap_err();
    assert!(
        matches!(e, RunError::TimeDependentUnsupported { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("forced-oscillator"), "{e}");
    let driven = Scenario::from_toml(DRIVEN).unwrap();
    let e = run(&driven, RunPlan::new(3).sensitivity(["w"])).unwrap_err();
    assert!(matches!(e, RunError::SensitivityUnsupported { .. }), "{e}");
    assert!(e.to_string().contains("model.drives"), "{e}");
    let walled = FORCED.replace(
        "lagrangian = \"0.5*m*x_dot^2 - 0.5*k*x^2\"",
        "lagrangian = \"0.5*m*x_dot^2 - 0.5*k*x^2\"\nboundaries = [\"x + 1\"]",
    );
    let e = run(&Scenario::from_toml(&walled).unwrap(), RunPlan::new(3)).unwrap_err();
    assert!(e.to_string().contains("boundaries"), "{e}");
    let symmetric = DRIVEN.replace(
        "[parameters]",
        "[symmetry]\ncyclic = [\"x\"]\n\n[parameters]",
    );
    let e = run(
        &Scenario::from_toml(&symmetric).unwrap(),
        RunPlan::new(3).reduce(true),
    )
    .unwrap_err();
    assert!(e.to_string().contains("--reduce"), "{e}");
    let e = Scenario::from_toml(&FORCED.replace("x = \"F0", "z = \"F0")).unwrap_err();
    assert!(e.to_string().contains("forces.z"), "{e}");
    let e = Scenario::from_toml(
        &DRIVEN.replace("drives = [\"a*sin(w*t)\"]", "drives = [\"0\", \"t\"]"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("model.drives"), "{e}");
    assert!(e.to_string().contains("one per row"), "{e}");
}

/// The shipped `models/driven-pendulum.toml` (a pendulum under a periodic
/// torque) runs from its file at orders 4 and 6, which agree over its first
/// two seconds (it tumbles: θ reaches −5.8 rad) to 1e-6 (measured: 2.9e-7,
/// the order-4 error at `h = 0.01`), on the run-time core.
#[test]
fn the_shipped_driven_pendulum_runs() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/driven-pendulum.toml"
    );
    let sc = Scenario::from_model_file(path).unwrap();
    assert!(sc.time_dependent());
    let run = |order| {
        execute(
            &sc,
            RunPlan::new(200).order(order),
            &mut RecordBuffer::new(),
        )
        .unwrap()
    };
    let (four, six) = (run(Order::Four), run(Order::Six));
    assert_eq!(four.method.core, Core::RunTime);
    // The torque does work: the summary says the system is driven instead
    // of calling the energy change an error of the step.
    assert!(four.driven);
    let said = diracvi_run::warnings(&four, diracvi_run::DEFAULT_ENERGY_TOLERANCE, sc.h, 2.0);
    assert!(said.len() == 1 && said[0].contains("driven"), "{said:?}");
    assert!(
        (four.final_q[0] - six.final_q[0]).abs() <= 1e-6,
        "{} {}",
        four.final_q[0],
        six.final_q[0]
    );
}

/// The Jacobian of a forced run (docs/theory.md §12.8): each step is
/// differentiated with its Lagrangian at the step's own time. The forced
/// oscillator is linear, so its discrete flow is the free one plus a term
/// of time alone: its Jacobian equals the free oscillator's (the same file
/// without `[forces]`, an autonomous run) to round-off, 1e-13, at orders 2
/// and 4, forward and backward. The driven pendulum (nonlinear, tumbling)
/// against central differences of whole runs from perturbed initial data,
/// relative 1e-6 (measured ≤ 2e-8), and symplectic: its 2 × 2 Jacobian has
/// determinant 1 to 1e-12.
#[test]
fn forced_runs_have_their_jacobian() {
    let free_toml = FORCED.replace("[forces]\nx = \"F0*cos(w*t)\"\n", "");
    assert_ne!(free_toml, FORCED);
    let (forced, free) = (
        Scenario::from_toml(FORCED).unwrap(),
        Scenario::from_toml(&free_toml).unwrap(),
    );
    for (order, direction) in [
        (Order::Two, Direction::Forward),
        (Order::Four, Direction::Forward),
        (Order::Two, Direction::Backward),
    ] {
        let plan = || {
            RunPlan::new(500)
                .order(order)
                .direction(direction)
                .jacobian(true)
        };
        let a = execute(&forced, plan(), &mut RecordBuffer::new()).unwrap();
        let b = execute(&free, plan(), &mut RecordBuffer::new()).unwrap();
        assert!((a.final_q[0] - b.final_q[0]).abs() > 1e-3, "the force acts");
        let (ja, jb) = (a.jacobian.unwrap(), b.jacobian.unwrap());
        assert!((ja - jb).abs().max() <= 1e-13, "{order:?} {direction:?}");
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/driven-pendulum.toml"
    );
    let sc = Scenario::from_model_file(path).unwrap();
    for order in [Order::Two, Order::Four] {
        let steps = 500;
        let o = execute(
            &sc,
            RunPlan::new(steps).order(order).jacobian(true),
            &mut RecordBuffer::new(),
        )
        .unwrap();
        let j = o.jacobian.unwrap();
        let det = j[(0, 0)] * j[(1, 1)] - j[(0, 1)] * j[(1, 0)];
        assert!((det - 1.0).abs() <= 1e-12, "{order:?}: det {det}");
        let scale = j.abs().max();
        let delta = 1e-6;
        for (column, key, at) in [(0, "q", 0.2), (1, "v", 0.0)] {
            let end = |e: f64| {
                let mut s = sc.clone();
                s.set(key, &format!("[{:.17e}]", at + e)).unwrap();
                let o = execute(
                    &s,
                    RunPlan::new(steps).order(order),
                    &mut RecordBuffer::new(),
                )
                .unwrap();
                [o.final_q[0], o.final_p[0]]
            };
            let (plus, minus) = (end(delta), end(-delta));
            for i in 0..2 {
                // p = m l² v = v for the unit pendulum
                let fd = (plus[i] - minus[i]) / (2.0 * delta);
                assert!(
                    (fd - j[(i, column)]).abs() <= 1e-6 * scale,
                    "{order:?}: ∂x[{i}]/∂{key}: {} vs {fd}",
                    j[(i, column)]
                );
            }
        }
    }
}

/// `steps` steps of `sc` at `order` with the sensitivities to `names`:
/// each column against central differences of whole runs with the
/// parameter set to `value ± 1e-6 max(1, |value|)`, relative to the
/// column's largest entry (at least 1), within `tolerance`. Returns the
/// final state and the columns.
fn sensitivities_against_differences(
    sc: &Scenario,
    steps: usize,
    order: Order,
    params: &[(&str, f64)],
    tolerance: f64,
) -> (Vec<f64>, Vec<(String, Vec<f64>)>) {
    let names: Vec<&str> = params.iter().map(|(n, _)| *n).collect();
    let plan = || RunPlan::new(steps).order(order);
    let o = execute(sc, plan().sensitivity(names), &mut RecordBuffer::new()).unwrap();
    let state = [o.final_q.clone(), o.final_p.clone()].concat();
    for &(name, value) in params {
        let (_, exact) = o.sensitivity.iter().find(|(n, _)| n == name).unwrap();
        let delta = 1e-6 * value.abs().max(1.0);
        let at = |e: f64| {
            let mut s = sc.clone();
            s.set(name, &format!("{:.17e}", value + e)).unwrap();
            let o = execute(&s, plan(), &mut RecordBuffer::new()).unwrap();
            [o.final_q, o.final_p].concat()
        };
        let (plus, minus) = (at(delta), at(-delta));
        let scale = exact.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
        let mut worst = 0.0_f64;
        for i in 0..exact.len() {
            let fd = (plus[i] - minus[i]) / (2.0 * delta);
            worst = worst.max((fd - exact[i]).abs() / scale);
            assert!(
                (fd - exact[i]).abs() <= tolerance * scale,
                "{order:?} ∂x[{i}]/∂{name}: exact {} vs differences {fd} (scale {scale})",
                exact[i]
            );
        }
        eprintln!("{order:?} ∂x_N/∂{name}: against differences, relative {worst:e}");
    }
    (state, o.sensitivity)
}

/// Sensitivities of forced runs (docs/theory.md §12.4, §8.8): each step's
/// parameter columns take the forces `F_i(t; θ)` at the step's own time.
/// The forced oscillator from rest is linear in `F₀`, so its discrete run
/// is `F₀` times the run at `F₀ = 1`: `∂x_N/∂F₀ = x_N/F₀` up to the
/// Newton solves' round-off (1e-10 relative to the largest entry), an
/// exact identity at every order. Its `∂/∂w` (only in
/// the force), `∂/∂k` and `∂/∂m` (only in `L`), and the driven pendulum's
/// `∂/∂tau0`, `∂/∂w`, `∂/∂l` (3 s, tumbling: a nonlinear run), against
/// central differences of whole runs, relative 1e-6, at orders 2, 4 and 6
/// (the pendulum at 2 and 4; measured ≤ 2.5e-9; the identity: 7e-13,
/// 4.6e-12, 3.1e-12).
#[test]
fn forced_runs_have_parameter_sensitivities() {
    let sc = Scenario::from_toml(FORCED).unwrap();
    for order in [Order::Two, Order::Four, Order::Six] {
        let params = [("F0", 0.5), ("w", 1.3), ("k", 4.0), ("m", 1.0)];
        let (x, columns) = sensitivities_against_differences(&sc, 500, order, &params, 1e-6);
        let f0 = &columns.iter().find(|(n, _)| n == "F0").unwrap().1;
        let scale = x.iter().fold(0.0_f64, |m, xi| m.max(xi.abs())) / 0.5;
        let worst = f0
            .iter()
            .zip(&x)
            .fold(0.0_f64, |m, (d, xi)| m.max((d - xi / 0.5).abs()))
            / scale;
        eprintln!("{order:?}: ∂x_N/∂F0 against x_N/F0, relative {worst:e}");
        assert!(worst <= 1e-10, "{order:?}: {f0:?} vs {x:?} / F0");
    }
    let pendulum = Scenario::from_model_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/driven-pendulum.toml"
    ))
    .unwrap();
    for order in [Order::Two, Order::Four] {
        let params = [("tau0", 11.0), ("w", 2.0), ("l", 1.0)];
        sensitivities_against_differences(&pendulum, 300, order, &params, 1e-6);
    }
}

/// A forced file with a constraint row and a drive that does not depend on
/// the parameters: the sensitivities go through the lifted system (the
/// constraint rows and reactions differentiated too), and the drive is a
/// function of time alone. Against central differences of whole runs,
/// relative 1e-6, at orders 2 and 4 (measured ≤ 1.7e-9).
#[test]
fn forced_and_driven_constrained_runs_have_parameter_sensitivities() {
    let toml = DRIVEN
        .replace("drives = [\"a*sin(w*t)\"]", "drives = [\"0.3*sin(2*t)\"]")
        .replace(
            "[parameters]",
            "[forces]\nx = \"F0*cos(w*t)\"\n\n[parameters]\nF0 = 0.4",
        );
    let sc = Scenario::from_toml(&toml).unwrap();
    assert!(sc.time_dependent());
    for order in [Order::Two, Order::Four] {
        let params = [("F0", 0.4), ("w", 2.0)];
        sensitivities_against_differences(&sc, 80, order, &params, 1e-6);
    }
}
