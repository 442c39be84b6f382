//! Parameter sensitivities through the runner's API (docs/theory.md §12.4):
//! `RunPlan::sensitivity` on a model file against central differences of
//! `execute` with the parameter set, the typed refusals, and the list of
//! catalogued models with a model file the refusal names.

use diracvi_models::catalogue;
use diracvi_run::{Direction, Discard, MODEL_FILE_TWINS, RunError, RunPlan, Scenario, execute};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn file(name: &str) -> Scenario {
    Scenario::from_model_file(root().join("models").join(format!("{name}.toml"))).unwrap()
}

fn final_state(sc: &Scenario, steps: usize) -> (Vec<f64>, usize) {
    let o = execute(sc, RunPlan::new(steps), &mut Discard).unwrap();
    ([o.final_q, o.final_p].concat(), o.impacts.len())
}

/// The ellipse dropped on the floor (3 impacts in 300 steps): ∂x_N/∂a,
/// the semi-axis entering both the inertia in L and the floor g(q; a),
/// against central differences of whole runs, relative 1e-6.
#[test]
fn api_sensitivity_matches_differences_of_runs() {
    let sc = file("ellipse");
    let steps = 300;
    let o = execute(
        &sc,
        RunPlan::new(steps).sensitivity(["a", "g"]),
        &mut Discard,
    )
    .unwrap();
    assert!(o.impacts.len() >= 3);
    assert_eq!(o.jacobian, None, "only the sensitivities were asked for");
    assert_eq!(o.sensitivity.len(), 2);
    for (name, value) in [("a", 1.0), ("g", 9.8)] {
        let (asked, exact) = o.sensitivity.iter().find(|(n, _)| n == name).unwrap();
        assert_eq!(asked, name);
        let delta = 1e-6 * f64::max(1.0, value);
        let at = |e: f64| {
            let mut s = sc.clone();
            s.set(name, &format!("{:.17e}", value + e)).unwrap();
            let (x, impacts) = final_state(&s, steps);
            assert_eq!(impacts, o.impacts.len());
            x
        };
        let (plus, minus) = (at(delta), at(-delta));
        let scale = exact.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
        for i in 0..exact.len() {
            let fd = (plus[i] - minus[i]) / (2.0 * delta);
            assert!(
                (fd - exact[i]).abs() <= 1e-6 * scale,
                "∂x[{i}]/∂{name}: {} vs {fd}",
                exact[i]
            );
        }
    }
}

/// The tape of the ellipse's steps through its impacts: the per-step
/// tangents multiply to the tracked Jacobian, and the reverse sweep gives
/// `Jᵀ g` and the sensitivities' `g·∂x_N/∂θ` of the forward mode.
#[test]
fn the_reverse_sweep_over_the_tape_equals_the_forward_mode() {
    let sc = file("ellipse");
    let o = execute(
        &sc,
        RunPlan::new(300)
            .jacobian(true)
            .sensitivity(["a", "g"])
            .tangents(true),
        &mut Discard,
    )
    .unwrap();
    assert!(o.impacts.len() >= 3);
    let tape = o.tangents.as_ref().expect("the tape was asked for");
    assert_eq!(tape.steps.len(), 300);
    assert_eq!((tape.steps[0].nrows(), tape.steps[0].ncols()), (6, 8));
    assert_eq!(tape.parameters, ["a", "g"]);
    let j = o.jacobian.as_ref().unwrap();
    let last = tape.cumulative().pop().unwrap();
    let scale = j.amax();
    assert!(
        (&last - j).amax() <= 1e-13 * scale,
        "{}",
        (&last - j).amax()
    );
    let g = [0.3, -1.2, 0.7, 2.0, 0.1, -0.5];
    let gradient = tape.gradient(&g).unwrap();
    let (dx0, dtheta) = (&gradient.initial, &gradient.parameters);
    let forward = j.tr_mul(&nalgebra::DVector::from_column_slice(&g));
    for i in 0..6 {
        assert!(
            (dx0[i] - forward[i]).abs() <= 1e-12 * forward.amax(),
            "∂F/∂x0[{i}]"
        );
    }
    for ((name, reverse), (asked, column)) in dtheta.iter().zip(&o.sensitivity) {
        assert_eq!(name, asked);
        let forward: f64 = column.iter().zip(&g).map(|(a, b)| a * b).sum();
        assert!(
            (reverse - forward).abs() <= 1e-12 * forward.abs().max(1.0),
            "∂F/∂{name}: {reverse} vs {forward}"
        );
    }
    assert_eq!(
        tape.gradient(&g[..5]),
        None,
        "a gradient of the wrong length"
    );
}

#[test]
fn refusals_are_typed() {
    let plan = || RunPlan::new(10).sensitivity(["g"]);
    let e = execute(
        &Scenario::defaults("pendulum").unwrap(),
        plan(),
        &mut Discard,
    )
    .unwrap_err();
    match &e {
        RunError::SensitivityUnsupported { model, what } => {
            assert_eq!(model, "pendulum");
            assert!(what.contains("models/pendulum.toml"), "{what}");
        }
        other => panic!("{other:?}"),
    }
    let e = execute(
        &file("particle"),
        RunPlan::new(10).sensitivity(["k"]),
        &mut Discard,
    )
    .unwrap_err();
    match &e {
        RunError::UnknownSensitivityParameter { name, valid, .. } => {
            assert_eq!(name, "k");
            assert_eq!(valid, &["m", "g"]);
        }
        other => panic!("{other:?}"),
    }
    // the Hamiltonian stepper of a model without a Hamiltonian (the LC
    // circuit's file: a degenerate Lagrangian)
    let e = execute(
        &file("lc"),
        RunPlan::new(10)
            .sensitivity(["l"])
            .stepper(diracvi_run::Stepper::Hamiltonian),
        &mut Discard,
    )
    .unwrap_err();
    assert!(matches!(e, RunError::NoHamiltonian { .. }), "{e:?}");
}

/// `∂(q_N, p_N)/∂θ` of a composed run (order 4 or 6: `S ← T S + S_stage`
/// over the stages, docs/theory.md §12.4; through impacts the continuous
/// law's parameter derivative, §12.6) against fourth-order central
/// differences of whole runs with the parameter set (step `1e-5 max(1,
/// |θ|)`), relative 1e-6 of the column's largest entry (at least 1); at
/// least `min_impacts` impacts, the same number in every run. Prints and
/// returns the largest relative error.
fn composed_against_differences(
    name: &str,
    params: &[(&str, f64)],
    steps: usize,
    order: diracvi_run::Order,
    direction: Direction,
    min_impacts: usize,
) -> f64 {
    composed_scenario_against_differences(
        name,
        &file(name),
        params,
        steps,
        order,
        direction,
        min_impacts,
    )
}

/// [`composed_against_differences`] on the scenario `sc` (named `name`).
fn composed_scenario_against_differences(
    name: &str,
    sc: &Scenario,
    params: &[(&str, f64)],
    steps: usize,
    order: diracvi_run::Order,
    direction: Direction,
    min_impacts: usize,
) -> f64 {
    let plan = RunPlan::new(steps).order(order).direction(direction);
    plan_against_differences(name, sc, params, plan, min_impacts)
}

/// [`composed_scenario_against_differences`] for any `plan` (its stepper,
/// order and direction).
fn plan_against_differences(
    name: &str,
    sc: &Scenario,
    params: &[(&str, f64)],
    plan: RunPlan,
    min_impacts: usize,
) -> f64 {
    let (order, direction) = (plan.order, plan.direction);
    let names: Vec<&str> = params.iter().map(|(n, _)| *n).collect();
    let o = execute(sc, plan.clone().sensitivity(&names), &mut Discard).unwrap();
    assert!(
        o.impacts.len() >= min_impacts,
        "{} impacts",
        o.impacts.len()
    );
    let mut worst = 0.0_f64;
    for (k, &(param, value)) in params.iter().enumerate() {
        let (asked, exact) = &o.sensitivity[k];
        assert_eq!(asked, param);
        // fourth-order differences: truncation (δ⁴) and the solves'
        // round-off (divided by δ) both far below the tolerance
        let delta = 1e-5 * f64::max(1.0, value);
        let at = |e: f64| {
            let mut s = sc.clone();
            s.set(param, &format!("{:.17e}", value + e)).unwrap();
            let r = execute(&s, plan.clone(), &mut Discard).unwrap();
            assert_eq!(r.impacts.len(), o.impacts.len());
            [r.final_q, r.final_p].concat()
        };
        let (plus, minus) = (at(delta), at(-delta));
        let (plus2, minus2) = (at(2.0 * delta), at(-2.0 * delta));
        let scale = exact.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
        for i in 0..exact.len() {
            let fd = (8.0 * (plus[i] - minus[i]) - (plus2[i] - minus2[i])) / (12.0 * delta);
            let err = (fd - exact[i]).abs() / scale;
            worst = worst.max(err);
            assert!(
                err <= 1e-6,
                "{name} {order:?} {direction:?} ∂x[{i}]/∂{param}: {} vs {fd}",
                exact[i]
            );
        }
    }
    eprintln!(
        "{name} {order:?} {direction:?}, {} impacts: max relative error {worst:.2e}",
        o.impacts.len()
    );
    worst
}

/// The ellipse in flight (60 steps, before its first impact at t ≈ 0.75)
/// at orders 4 and 6, forward and backward in time: ∂/∂a (the inertia)
/// and ∂/∂g.
#[test]
fn composed_orders_match_differences_in_flight() {
    use diracvi_run::Order;
    for order in [Order::Four, Order::Six] {
        for direction in [Direction::Forward, Direction::Backward] {
            composed_against_differences(
                "ellipse",
                &[("a", 1.0), ("g", 9.8)],
                60,
                order,
                direction,
                0,
            );
        }
    }
}

/// Through impacts at orders 4 and 6 (the continuous elastic law's
/// parameter derivative, docs/theory.md §12.6): the particle's file
/// (h = 0.02, 5 bounces in 6 s; g moves every impact time, m the momenta)
/// forward at orders 4 and 6 and backward at order 4 (from the apex, the
/// mirror image), against differences of whole runs, relative 1e-6
/// (measured: 1e-10 to 5e-9).
#[test]
fn composed_orders_match_differences_through_impacts() {
    use diracvi_run::Order;
    let mut sc = file("particle");
    sc.set("h", "0.02").unwrap();
    let params = [("g", 9.8), ("m", 1.0)];
    // backward in time from the apex: the mirror image, 5 bounces in 6 s
    for (order, direction) in [
        (Order::Four, Direction::Forward),
        (Order::Six, Direction::Forward),
        (Order::Four, Direction::Backward),
    ] {
        composed_scenario_against_differences("particle", &sc, &params, 300, order, direction, 5);
    }
}

/// The ellipse through 5 impacts (h = 0.02, 160 steps, from lying flat at
/// y = 1.5 with a slow spin) at orders 4 and 6 forward and 4 backward: a
/// enters the inertia and the floor `g(q; a, b)`, b the floor alone, g the
/// flight, so the law's own parameter columns (∂π⁺/∂θ through `∂L/∂v` and
/// the wall's normal) and the impact point's motion with the wall
/// (`∂g/∂θ`) are all exercised. Measured: 1.4e-7 at every order, the
/// differences' own accuracy on this sensitive run (order 2, [VCI]
/// Theorem 3.1, run alongside for reference: 1.5e-7).
#[test]
fn composed_orders_match_differences_with_a_moving_wall() {
    use diracvi_run::Order;
    let mut sc = file("ellipse");
    for (key, value) in [("h", "0.02"), ("q", "0,0,1.5"), ("v", "0.3,1,0")] {
        sc.set(key, value).unwrap();
    }
    let params = [("a", 1.0), ("b", 0.5), ("g", 9.8)];
    for (order, direction) in [
        (Order::Four, Direction::Forward),
        (Order::Six, Direction::Forward),
        (Order::Four, Direction::Backward),
        (Order::Two, Direction::Forward),
    ] {
        composed_scenario_against_differences("ellipse", &sc, &params, 160, order, direction, 5);
    }
}

/// The nonholonomic pendulum through 3 impacts (h = 0.01, 5 s) at orders 4
/// and 6, with `φ̇(0)` solved from the constraint so that its parameter
/// `f1` can move: f1 enters the constraint forms `A(q; θ)` of the steps
/// and of the law (∂π⁺/∂θ through `A(q̃)ᵀ ν` and `A(q̃) v⁺ = 0`), r the
/// wall alone.
#[test]
fn composed_orders_match_differences_through_impacts_with_constraints() {
    use diracvi_run::Order;
    let text = std::fs::read_to_string(root().join("models/pendulum.toml")).unwrap();
    let given = "v = [0.7853981633974483, 2.8601001819710636]";
    assert!(text.contains(given));
    let path = std::env::temp_dir().join(format!(
        "diracvi-pendulum-solved-{}.toml",
        std::process::id()
    ));
    std::fs::write(
        &path,
        text.replace(given, r#"v = [0.7853981633974483, "solve"]"#),
    )
    .unwrap();
    let mut sc = Scenario::from_model_file(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    sc.set("h", "0.01").unwrap();
    let params = [("f1", 1.0), ("r", 1.5)];
    for order in [Order::Four, Order::Six] {
        composed_scenario_against_differences(
            "pendulum",
            &sc,
            &params,
            500,
            order,
            Direction::Forward,
            3,
        );
    }
}

/// The (±) nonholonomic Hamiltonian stepper (docs/theory.md §12.7): the
/// step's parameter columns over the lifted Hamiltonian `H(q, p; θ)` and
/// the Hamiltonian law's (the energy balance and the wall's normal moving
/// with θ), against differences of whole runs, relative 1e-6: the
/// particle's file through 5 bounces (g moves every impact time, m the
/// momenta; forward, and backward from the apex), the nonholonomic
/// pendulum's file in flight (g, l in H) and through two impacts with its
/// cylinder (g, l, and r, the wall). Measured: 3.5e-10 (particle, both
/// directions), 3.0e-11 (pendulum in flight), 6.3e-10 (pendulum, 2 impacts).
#[test]
fn hamiltonian_stepper_matches_differences_through_impacts() {
    use diracvi_run::Stepper;
    let mut sc = file("particle");
    sc.set("h", "0.02").unwrap();
    for direction in [Direction::Forward, Direction::Backward] {
        let plan = RunPlan::new(300)
            .stepper(Stepper::Hamiltonian)
            .direction(direction);
        plan_against_differences("particle", &sc, &[("g", 9.8), ("m", 1.0)], plan, 5);
    }
    let plan = RunPlan::new(100).stepper(Stepper::Hamiltonian);
    plan_against_differences(
        "pendulum",
        &file("pendulum"),
        &[("g", 9.8), ("l", 2.0)],
        plan,
        0,
    );
    // Through impacts on a constrained model: the nonholonomic pendulum
    // hits its cylinder (g, l in H; r moves the wall).
    let plan = RunPlan::new(3200).stepper(Stepper::Hamiltonian);
    plan_against_differences(
        "pendulum",
        &file("pendulum"),
        &[("g", 9.8), ("l", 2.0), ("r", 1.5)],
        plan,
        2,
    );
}

/// The constrained pendulum (smooth) at order 6: ∂/∂g and ∂/∂l.
#[test]
fn order_six_matches_differences_on_a_smooth_model() {
    composed_against_differences(
        "pendulum",
        &[("g", 9.8), ("l", 2.0)],
        200,
        diracvi_run::Order::Six,
        Direction::Forward,
        0,
    );
}

/// Every name of [`MODEL_FILE_TWINS`] is a catalogued model with a file
/// `models/<name>.toml` of the same `model.name`, and every catalogued
/// model with such a file is listed.
#[test]
fn the_model_file_twins_exist() {
    let names: Vec<&str> = catalogue().iter().map(|m| m.name).collect();
    for twin in MODEL_FILE_TWINS {
        assert!(names.contains(twin), "{twin} is not catalogued");
        assert_eq!(file(twin).model, *twin);
    }
    for name in names {
        let has_file = root().join("models").join(format!("{name}.toml")).exists();
        assert_eq!(has_file, MODEL_FILE_TWINS.contains(&name), "{name}");
    }
}

/// A pendulum whose potential is a sum of 12 terms in 12 parameters
/// `c1…c12` (trigonometric, powers, roots, quotients, `atan2`, `exp`): its
/// steps' parameter columns come from the derivatives of `L` in `θ` alone,
/// by reverse sweeps over the Lagrangian's tape (docs/theory.md §12.5).
/// The forward sensitivities and the reverse sweep over the tape against
/// fourth-order central differences of whole runs, forward and backward in
/// time, relative 1e-6 of the column's largest entry (at least 1e-3), and
/// against each other to round-off.
#[test]
fn many_parameters_by_reverse_sweeps_match_differences_of_runs() {
    let mut text = String::from(
        "[model]\nname = \"series\"\ncoordinates = [\"theta\"]\nlagrangian = \
         \"0.5*(1 + c12^2/10)*theta_dot^2 - c1*cos(theta) - c2*sin(2*theta)^2 \
         - c3*theta_dot*sin(theta) - sqrt(c4 + theta^2) - c5*exp(-theta^2/c6) \
         - atan2(c7*theta, c8) - c9*theta^2/(c10 + theta_dot^2) - c11^2*cos(3*theta)*theta\"\n\
         [parameters]\n",
    );
    let values = [
        9.8, 0.05, 0.02, 0.3, 0.1, 0.7, 0.04, 1.2, 0.2, 2.0, 0.1, 0.5,
    ];
    for (k, c) in values.iter().enumerate() {
        text.push_str(&format!("c{} = {c:?}\n", k + 1));
    }
    text.push_str("[run]\nh = 0.01\nt_end = 1.0\n[initial]\nq = [0.6]\nv = [0.1]\n");
    let path = std::env::temp_dir().join(format!("diracvi-series-{}.toml", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let sc = Scenario::from_model_file(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let names: Vec<String> = (1..=values.len()).map(|k| format!("c{k}")).collect();
    let steps = 100;
    for direction in [Direction::Forward, Direction::Backward] {
        series_against_differences(&sc, &names, &values, steps, direction);
    }
}

fn series_against_differences(
    sc: &Scenario,
    names: &[String],
    values: &[f64],
    steps: usize,
    direction: Direction,
) {
    let plan = RunPlan::new(steps).direction(direction);
    let o = execute(
        sc,
        plan.clone().sensitivity(names).tangents(true),
        &mut Discard,
    )
    .unwrap();
    let g = [0.8, -1.3];
    let gradient = o.tangents.as_ref().unwrap().gradient(&g).unwrap();
    for (k, name) in names.iter().enumerate() {
        let (asked, exact) = &o.sensitivity[k];
        assert_eq!(asked, name);
        let value = values[k];
        // fourth-order differences: a step large next to the solver's
        // tolerance, a truncation error (δ⁴) far below the tolerance here
        let delta = 1e-3 * value.abs().max(0.1);
        let at = |e: f64| {
            let mut s = sc.clone();
            s.set(name, &format!("{:.17e}", value + e)).unwrap();
            let o = execute(&s, plan.clone(), &mut Discard).unwrap();
            [o.final_q, o.final_p].concat()
        };
        let (plus, minus) = (at(delta), at(-delta));
        let (plus2, minus2) = (at(2.0 * delta), at(-2.0 * delta));
        let scale = exact.iter().fold(1e-3_f64, |m, x| m.max(x.abs()));
        for i in 0..2 {
            let fd = (8.0 * (plus[i] - minus[i]) - (plus2[i] - minus2[i])) / (12.0 * delta);
            assert!(
                (fd - exact[i]).abs() <= 1e-6 * scale,
                "{direction:?} ∂x[{i}]/∂{name}: {} vs {fd}",
                exact[i]
            );
        }
        let forward = exact[0] * g[0] + exact[1] * g[1];
        let (_, reverse) = &gradient.parameters[k];
        assert!(
            (reverse - forward).abs() <= 1e-12 * forward.abs().max(1.0),
            "∂F/∂{name}: {reverse} vs {forward}"
        );
    }
}

/// The final state of `steps` steps of `sc` with its initial data moved to
/// `(q + e δq, v + e δv)`, and the initial momentum the run started from
/// (`final_p` of a run of no steps).
fn moved(sc: &Scenario, steps: usize, dq: &[f64], dv: &[f64], e: f64) -> (Vec<f64>, Vec<f64>) {
    let mut s = sc.clone();
    for (x, d) in s.initial.q.iter_mut().zip(dq) {
        *x += e * d;
    }
    for (x, d) in s.initial.v.iter_mut().zip(dv) {
        *x += e * d;
    }
    let p0 = execute(&s, RunPlan::new(0), &mut Discard).unwrap().final_p;
    (final_state(&s, steps).0, p0)
}

/// A degenerate Lagrangian through the runner (the LC circuit: only the
/// inductor carries kinetic energy; docs/theory.md §12.8): the run's
/// Jacobian over 40 steps (one period) times the change of the initial
/// data `(δq₀, δp₀)` of a change of the initial `(q, v)` that keeps the
/// hidden constraint (the capacitor voltages `q¹/c₁ = q³/c₃` stay equal)
/// against central differences of whole runs (step 1e-3, relative 1e-6
/// asked) and, the map being linear, against the exact change of the end
/// state for a unit change (relative 1e-9 asked). Measured: 1.4e-12 and
/// 9.6e-15.
#[test]
fn a_degenerate_run_jacobian_matches_whole_runs_and_the_linear_map() {
    let sc = Scenario::defaults("lc").unwrap();
    let steps = 40;
    let o = execute(&sc, RunPlan::new(steps).jacobian(true), &mut Discard).unwrap();
    assert_eq!(o.degenerate_steps, steps, "every step is degenerate");
    let j = o.jacobian.as_ref().unwrap();
    let x0 = [o.final_q.clone(), o.final_p.clone()].concat();
    let z = [0.0; 4];
    let directions: [([f64; 4], [f64; 4]); 4] = [
        ([1.0, 0.0, 0.0, 0.0], z),
        ([0.0, 0.0, 1.0, 0.0], z),
        ([0.0, 1.0, 0.0, 3.0], z),
        (z, [1.0, 0.5, 1.0, 0.5]),
    ];
    let (mut fd_err, mut lin_err, mut scale): (f64, f64, f64) = (0.0, 0.0, 0.0);
    for (dq, dv) in &directions {
        let (_, p_base) = moved(&sc, 0, dq, dv, 0.0);
        let (unit, p_unit) = moved(&sc, steps, dq, dv, 1.0);
        let dx0: Vec<f64> = dq
            .iter()
            .copied()
            .chain(p_unit.iter().zip(&p_base).map(|(a, b)| a - b))
            .collect();
        let exact = j * nalgebra::DVector::from_column_slice(&dx0);
        let (plus, _) = moved(&sc, steps, dq, dv, 1e-3);
        let (minus, _) = moved(&sc, steps, dq, dv, -1e-3);
        for i in 0..8 {
            fd_err = fd_err.max(((plus[i] - minus[i]) / 2e-3 - exact[i]).abs());
            lin_err = lin_err.max((unit[i] - x0[i] - exact[i]).abs());
        }
        scale = scale.max(exact.amax());
    }
    let (fd_err, lin_err) = (fd_err / scale, lin_err / scale);
    eprintln!("LC run Jacobian: differences {fd_err:.1e}, linear map {lin_err:.1e}");
    assert!(fd_err <= 1e-6, "{fd_err:e}");
    assert!(lin_err <= 1e-9, "{lin_err:e}");
}

/// The LC circuit's file (a degenerate Lagrangian): `∂x_N/∂θ` for the
/// inductance (which also moves `p₀ = ℓ v₀`) and a capacitance (in the
/// hidden constraint `π¹ − π³ = h (q¹/c₁ − q³/c₃)`) against central
/// differences of whole runs, relative 1e-6. Measured: 1.3e-9.
#[test]
fn degenerate_sensitivities_match_differences_of_runs() {
    let sc = file("lc");
    let steps = 40;
    let o = execute(
        &sc,
        RunPlan::new(steps).sensitivity(["l", "c1"]),
        &mut Discard,
    )
    .unwrap();
    assert!(o.degenerate_steps > 0);
    let mut worst: f64 = 0.0;
    for (name, value) in [("l", 0.75), ("c1", 1.0)] {
        let (_, exact) = o.sensitivity.iter().find(|(n, _)| n == name).unwrap();
        let delta = 1e-6;
        let at = |e: f64| {
            let mut s = sc.clone();
            s.set(name, &format!("{:.17e}", value + e)).unwrap();
            final_state(&s, steps).0
        };
        let (plus, minus) = (at(delta), at(-delta));
        let scale = exact.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
        for i in 0..exact.len() {
            let fd = (plus[i] - minus[i]) / (2.0 * delta);
            worst = worst.max((fd - exact[i]).abs() / scale);
        }
    }
    eprintln!("LC sensitivities vs differences: {worst:.1e}");
    assert!(worst <= 1e-6, "{worst:e}");
}
