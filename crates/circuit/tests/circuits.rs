//! Circuits from netlists on the sparse Lagrange–Dirac steppers: the [DDM]
//! circuit against the built-in dense `lc`, ladder normal modes, long-run
//! energy and Kirchhoff residuals, sources against exact solutions, and the
//! typed errors of bad netlists.

use diracvi_circuit::netlist::{self, Netlist};
use diracvi_circuit::{Circuit, CircuitError, CircuitSystem};
use diracvi_discrete_dirac::DynState;
use diracvi_discrete_dirac::dynamic::dyn_advance;
use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, Located, RunOptions, StepError, Structure, integrate,
};
use diracvi_geometry::dynamic::{DynSystem, HiddenConstraint};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization};
use diracvi_models::{Lc, LcParams, Model};
use std::f64::consts::PI;

const DDM: &str = include_str!("../../../circuits/ddm-lc.cir");

/// The [DDM] netlist reproduces the built-in `lc` (dense degenerate path,
/// SVD-found hidden constraint) to round-off, step by step, with the same
/// discretization (forward `L_d`, linear Kirchhoff constraints).
#[test]
fn ddm_netlist_reproduces_builtin_lc() {
    let circuit = Circuit::parse(DDM).unwrap();
    assert_eq!(circuit.coordinates(), 4);
    assert_eq!(circuit.loop_count(), 1);
    let lc = Lc::new(LcParams::default()).unwrap();
    let setup = lc.run_defaults();
    let steps = (setup.t_end / setup.h).round() as usize;
    let mut dense = LagrangeDirac::plus(
        lc.clone(),
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    );
    let s0 = diracvi_discrete_dirac::state_from_velocity(&lc, 0.0, &setup.q0, &setup.v0).unwrap();
    let traj = integrate(
        &mut dense,
        s0,
        setup.h,
        RunOptions::new(steps),
        |_| {},
        |_| {},
    )
    .unwrap();
    let mut sparse_states = Vec::new();
    let run = circuit
        .simulate(Discretization::Forward, setup.h, steps, 1, |s| {
            sparse_states.push(s.clone())
        })
        .unwrap();
    assert_eq!(sparse_states.len(), traj.records.len());
    let mut worst: f64 = 0.0;
    for (s, r) in sparse_states.iter().zip(&traj.records) {
        let scale = r.q.amax().max(r.p.amax()).max(1.0);
        for i in 0..4 {
            worst = worst.max((s.q[i] - r.q[i]).abs() / scale);
            worst = worst.max((s.p[i] - r.p[i]).abs() / scale);
        }
    }
    assert!(worst <= 1e-13, "netlist vs built-in lc: {worst:e}");
    assert!(run.max_kirchhoff_residual <= 1e-14);
    // The hidden constraint holds: equal voltages on c1 and c3.
    let last = &run.final_state;
    assert!((last.q[1] / 1.0 - last.q[3] / 3.0).abs() <= 1e-13);
}

/// Inconsistent initial charges on a capacitor loop are a typed error.
#[test]
fn inconsistent_capacitor_loop_is_reported() {
    let text = DDM.replace("C1 0 2 1", "C1 0 2 1 IC=1");
    let circuit = Circuit::parse(&text).unwrap();
    let err = circuit
        .simulate(Discretization::Forward, 0.1, 3, 0, |_| {})
        .unwrap_err();
    assert!(
        matches!(
            err,
            CircuitError::Step(Located {
                step: 0,
                error: StepError::Inconsistent { .. }
            })
        ),
        "{err}"
    );
}

/// The (−) stepper retraces the (+) one: forward then backward returns to
/// the start (to round-off), for the degenerate [DDM] circuit.
#[test]
fn backward_retraces_forward() {
    let circuit = Circuit::parse(DDM).unwrap();
    let h = 2.0 * PI / 40.0;
    let mut plus = circuit.stepper(Discretization::Forward, Direction::Forward);
    let mut minus = circuit.stepper(Discretization::Forward, Direction::Backward);
    let start = circuit.initial_state();
    let mut s = start.clone();
    for _ in 0..40 {
        s = plus.step(&s, h).unwrap().0;
    }
    for _ in 0..40 {
        s = minus.step(&s, h).unwrap().0;
    }
    assert!(s.t.abs() < 1e-12);
    assert!((&s.q - &start.q).amax() <= 1e-12, "{}", s.q);
    assert!((&s.p - &start.p).amax() <= 1e-12, "{}", s.p);
}

/// A circuit's hidden constraints supplied by the circuit graph
/// ([`DynSystem::hidden_constraints`]: one per loop of capacitors and
/// voltage sources, no SVD) give the steps the hidden constraints found by
/// the SVD of the dense step Jacobian (docs/theory.md §3.9, §8.2): the
/// [DDM] circuit (dense storage on both sides) and a 12-cell ladder with
/// two capacitors in each shunt (12 loops, sparse storage on the supplied
/// side), forward map, (+) and (−), 200 steps. The two solve for the same
/// solution with different equations (a row replaced, or the range rows
/// of the SVD) and Newton iterations, so they agree to Newton's
/// tolerance, relative to `max(1, |q|, |p|)`.
#[test]
fn supplied_hidden_constraints_follow_the_svd_path() {
    use diracvi_discrete_dirac::StructuredLu;
    use diracvi_discrete_dirac::dynamic::DynLagrangeDirac;
    let ddm = Circuit::parse(DDM).unwrap();
    let looped = Circuit::parse(&looped_ladder(12)).unwrap();
    assert_eq!(looped.loop_count(), 12);
    let mut worst: f64 = 0.0;
    for (circuit, h) in [(&ddm, 2.0 * PI / 40.0), (&looped, 0.1)] {
        let system = circuit.dyn_system("test");
        let size = system.coordinate_count() + system.constraint_count();
        for direction in [Direction::Forward, Direction::Backward] {
            let mut supplied = circuit.stepper(Discretization::Forward, direction);
            if circuit.coordinates() > 30 {
                assert_eq!(supplied.jacobian_structure(), Structure::Sparse);
            }
            let mut svd = DynLagrangeDirac::with_linear_solver(
                Supplying(system.clone(), Vec::new()),
                Discretization::Forward,
                ConstraintDiscretization::Midpoint,
                direction,
                StructuredLu::dense(size),
            )
            .unwrap();
            let mut a = circuit.initial_state();
            let mut b = a.clone();
            for _ in 0..200 {
                let (next, stats) = supplied.step(&a, h).unwrap();
                assert!(stats.degenerate);
                a = next;
                b = svd.step(&b, h).unwrap().0;
                let scale = a.q.amax().max(a.p.amax()).max(1.0);
                worst = worst.max((&a.q - &b.q).amax() / scale);
                worst = worst.max((&a.p - &b.p).amax() / scale);
            }
        }
    }
    assert!(
        worst <= 1e-12,
        "supplied vs SVD hidden constraints: {worst:e}"
    );
}

/// A sine voltage across a capacitor (a loop of a voltage source and a
/// capacitor: with the forward map the hidden constraint
/// `q_C1 = 0.5 E(t)` depends on time) feeding a tank, on the stepper of
/// the runs: the hidden constraint holds at every step to round-off; the
/// forward map converges at first order to the midpoint map's fine-step
/// solution (a regular step: no hidden constraints); (−) retraces (+)
/// (the momenta up to the constraint reaction); initial charges off the hidden constraint are refused at the first
/// step.
#[test]
fn a_driven_capacitor_loop_keeps_its_hidden_constraint() {
    let circuit = Circuit::parse(DRIVEN_LOOP).unwrap();
    assert_eq!(circuit.loop_count(), 1);
    let e = |t: f64| {
        if t < 0.5 {
            0.2
        } else {
            0.2 + (2.0 * PI * 0.3 * (t - 0.5)).sin()
        }
    };
    let t_end = 4.0;
    let run = |map, h: f64| {
        let mut stepper = circuit.stepper(map, Direction::Forward);
        let mut s = circuit.initial_state();
        let steps = (t_end / h).round() as usize;
        let mut worst: f64 = 0.0;
        for _ in 0..steps {
            let (next, stats) = stepper.step(&s, h).unwrap();
            assert_eq!(stats.degenerate, map == Discretization::Forward);
            s = next;
            if map == Discretization::Forward {
                worst = worst.max((s.q[1] - 0.5 * e(s.t)).abs());
            }
        }
        (s, worst)
    };
    let (reference, _) = run(Discretization::Midpoint, 1e-3);
    let mut errors = Vec::new();
    for h in [0.02, 0.01] {
        let (s, worst) = run(Discretization::Forward, h);
        assert!(worst <= 1e-14, "hidden constraint at h = {h}: {worst:e}");
        errors.push((&s.q - &reference.q).amax());
    }
    let ratio = errors[0] / errors[1];
    assert!((1.8..2.2).contains(&ratio), "{errors:?}: ratio {ratio}");
    // (−) retraces (+).
    let mut plus = circuit.stepper(Discretization::Forward, Direction::Forward);
    let mut minus = circuit.stepper(Discretization::Forward, Direction::Backward);
    let start = circuit.initial_state();
    let mut s = start.clone();
    for _ in 0..100 {
        s = plus.step(&s, 0.05).unwrap().0;
    }
    for _ in 0..100 {
        s = minus.step(&s, 0.05).unwrap().0;
    }
    assert!(s.t.abs() <= 1e-12);
    assert!((&s.q - &start.q).amax() <= 1e-12, "{}", s.q);
    // The momenta come back up to the first step's constraint reaction
    // `Aᵀ μ` (the (±) steps carry it at one end, docs/theory.md §3.8):
    // their difference lies in the range of `Aᵀ`.
    let system = circuit.dyn_system("loop");
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    let mut forms = vec![0.0; m * n];
    system.constraint_forms(&vec![0.0; n], &mut forms);
    let a = nalgebra::DMatrix::from_row_slice(m, n, &forms);
    let dp = &s.p - &start.p;
    let lambda = (&a * a.transpose()).lu().solve(&(&a * &dp)).unwrap();
    let off_range = &dp - a.transpose() * lambda;
    assert!(dp.amax() > 1e-3, "a reaction to test: {dp}");
    assert!(off_range.amax() <= 1e-12, "{off_range}");
    // Initial charges off the hidden constraint are refused.
    let off = Circuit::parse(&DRIVEN_LOOP.replace("IC=0.2", "IC=0.3")).unwrap();
    let err = off
        .stepper(Discretization::Forward, Direction::Forward)
        .step(&off.initial_state(), 0.01)
        .unwrap_err();
    assert!(
        matches!(err, StepError::Inconsistent { t: 0.0, .. }),
        "{err}"
    );
}

/// A ladder of `cells` cells whose shunt is two capacitors in parallel:
/// one loop of capacitors per cell (three branches per cell; the sparse
/// LU at 12 cells).
fn looped_ladder(cells: usize) -> String {
    let mut text = String::new();
    for j in 1..=cells {
        let ic = if j == 1 { " IC=1" } else { "" };
        text += &format!("L{j} {} {j} 1{ic}\n", j - 1);
        text += &format!("C{j} {j} 0 0.5\nCP{j} {j} 0 0.25\n");
    }
    text
}

/// A delayed sine voltage (`E(t) = 0.2` before `t = 0.5`, then
/// `0.2 + sin(2π 0.3 (t − 0.5))`) with a capacitor across it, feeding a
/// tank.
const DRIVEN_LOOP: &str =
    "V1 1 0 SIN(0.2 1 0.3 0.5)\nC1 1 0 0.5 IC=0.2\nL1 1 2 1 IC=0.3\nC2 2 0 1\n";

/// The run-time stepper stores a circuit's step Jacobian by its structure
/// (docs/theory.md §11.4): a 30-cell ladder (n + m = 91) declares its
/// branch terms and Kirchhoff rows, so its Jacobian is assembled straight
/// into the sparse pattern, and the trajectory equals the one with dense
/// storage (dense LU, the same equations) to 1e-13 relative over 200 steps,
/// both maps, (+) and (−), plain and symmetric step. Measured: at most
/// ~1e-15.
#[test]
fn sparse_storage_follows_dense_storage_on_a_ladder() {
    use diracvi_discrete_dirac::dynamic::DynLagrangeDirac;
    use diracvi_discrete_dirac::{Structure, StructuredLu};
    let cells = 30;
    let shape: Vec<f64> = (1..=cells)
        .map(|j| (j as f64 * PI / (cells as f64 + 1.0)).sin())
        .collect();
    let circuit = Circuit::new(Netlist::ladder(cells, 1.5, 0.5, &shape)).unwrap();
    let system = circuit.dyn_system("ladder");
    let size = 3 * cells + 1;
    let cd = ConstraintDiscretization::Midpoint;
    let mut worst: f64 = 0.0;
    for map in [Discretization::Forward, Discretization::Midpoint] {
        for direction in [Direction::Forward, Direction::Backward] {
            for symmetric in [false, true] {
                let mut sparse = DynLagrangeDirac::new(&system, map, cd, direction);
                assert_eq!(sparse.jacobian_structure(), Structure::Sparse);
                let mut dense = DynLagrangeDirac::with_linear_solver(
                    &system,
                    map,
                    cd,
                    direction,
                    StructuredLu::dense(size),
                )
                .unwrap();
                if symmetric {
                    sparse = sparse.symmetric();
                    dense = dense.symmetric();
                }
                let mut a = circuit.initial_state();
                let mut b = a.clone();
                for _ in 0..200 {
                    a = sparse.step(&a, 0.1).unwrap().0;
                    b = dense.step(&b, 0.1).unwrap().0;
                    let scale = b.q.amax().max(b.p.amax()).max(1.0);
                    worst = worst.max((&a.q - &b.q).amax() / scale);
                    worst = worst.max((&a.p - &b.p).amax() / scale);
                }
                assert!((&a.q - &circuit.initial_state().q).amax() > 0.1, "it moves");
            }
        }
    }
    eprintln!("ladder, sparse vs dense storage: {worst:.2e}");
    assert!(worst <= 1e-13, "sparse vs dense storage: {worst:e}");
}

/// Order 4 on the run-time core for a ladder of 200 cells (n + m = 601
/// unknowns, above the dense-storage sizes): the composed steps run on
/// sparse storage and retrace themselves, 3 steps (+) then 3 steps (−)
/// returning to the start to 1e-12 (measured ~1e-15).
#[test]
fn order_four_on_a_six_hundred_unknown_ladder_retraces_itself() {
    use diracvi_discrete_dirac::Composition;
    use diracvi_discrete_dirac::dynamic::{DynComposed, DynSubStepper};
    let cells = 200;
    // The fastest mode: alternating capacitor voltages.
    let shape: Vec<f64> = (1..=cells)
        .map(|j| if j % 2 == 0 { 0.5 } else { -0.5 })
        .collect();
    let circuit = Circuit::new(Netlist::ladder(cells, 1.0, 1.0, &shape)).unwrap();
    let system = circuit.dyn_system("ladder");
    let composed = |direction| {
        DynComposed::lagrange_dirac(
            system.clone(),
            Discretization::Midpoint,
            ConstraintDiscretization::Midpoint,
            direction,
            Composition::TripleJump,
        )
    };
    let (mut plus, mut minus) = (composed(Direction::Forward), composed(Direction::Backward));
    let start = circuit.initial_state();
    let h = 0.1;
    let (mut q, mut pi) = (start.q.clone(), start.p.clone());
    for k in 0..3 {
        let s = plus.sub_step(k as f64 * h, &q, &pi, h).unwrap();
        (q, pi) = (s.b, s.pi_b);
    }
    assert!((&q - &start.q).amax() > 1e-3, "it moves");
    pi = -pi;
    for k in 0..3 {
        let s = minus.sub_step((3 - k) as f64 * h, &q, &pi, h).unwrap();
        (q, pi) = (s.b, s.pi_b);
    }
    let p = -pi;
    let (dq, dp) = ((&q - &start.q).amax(), (&p - &start.p).amax());
    assert!(dq <= 1e-12 && dp <= 1e-12, "retrace: {dq:e} {dp:e}");
}

/// On the run-time core the composed order-4 step retraces itself: 40
/// steps (+) then 40 steps (−) from the end return a 12-cell ladder with
/// initial currents and a DC source to its start to round-off (measured
/// 9.9e-16 in `q`, 6.7e-16 in `p`).
#[test]
fn composed_run_time_steps_retrace_themselves() {
    use diracvi_discrete_dirac::Composition;
    use diracvi_discrete_dirac::dynamic::{DynComposed, DynSubStepper};
    let mut text = Netlist::ladder(12, 1.0, 1.0, &[0.5; 12]).to_text();
    text.push_str("V1 99 0 DC 0.5\nL99 99 1 2 IC=0.25\n");
    let circuit = Circuit::parse(&text).unwrap();
    let system = circuit.dyn_system("ladder");
    let composed = |direction| {
        DynComposed::lagrange_dirac(
            system.clone(),
            Discretization::Midpoint,
            ConstraintDiscretization::Midpoint,
            direction,
            Composition::TripleJump,
        )
    };
    let (mut plus, mut minus) = (composed(Direction::Forward), composed(Direction::Backward));
    let start = circuit.initial_state();
    let h = 0.1;
    let (mut q, mut pi) = (start.q.clone(), start.p.clone());
    for k in 0..40 {
        let s = plus.sub_step(k as f64 * h, &q, &pi, h).unwrap();
        (q, pi) = (s.b, s.pi_b);
    }
    // (−) steps take and return oriented momenta π = −p.
    pi = -pi;
    for k in 0..40 {
        let s = minus.sub_step((40 - k) as f64 * h, &q, &pi, h).unwrap();
        (q, pi) = (s.b, s.pi_b);
    }
    let p = -pi;
    assert!(
        (&q - &start.q).amax() <= 1e-12,
        "{}",
        (&q - &start.q).amax()
    );
    assert!(
        (&p - &start.p).amax() <= 1e-12,
        "{}",
        (&p - &start.p).amax()
    );
}

/// Capacitor voltages `v_j = q_{C_j}/c` of a ladder state.
fn modal_amplitude(circuit: &Circuit, s: &DynState, shape: &[f64]) -> f64 {
    (0..circuit.coordinates())
        .filter(|&i| circuit.element_of(i).name.starts_with('C'))
        .zip(shape)
        .map(|(i, w)| s.q[i] * w)
        .sum()
}

/// Normal modes of an N = 50 ladder: the frequency recovered from a run
/// (the modal amplitude obeys `x_{n+1} + x_{n−1} = 2 cos(ω_h h) x_n`) equals
/// the scheme's discrete dispersion `ω_h = (2/h) asin(ω_k h / 2)` to
/// round-off, and converges to `ω_k = (2/√(LC)) sin(kπ/(2(N+1)))` at the
/// scheme's order 2.
#[test]
fn ladder_normal_modes_at_second_order() {
    let n = 50;
    let (l, c) = (1.5, 0.5);
    for mode in [1usize, 17, 40] {
        let shape: Vec<f64> = (1..=n)
            .map(|j| (j as f64 * mode as f64 * PI / (n as f64 + 1.0)).sin())
            .collect();
        let circuit = Circuit::new(Netlist::ladder(n, l, c, &shape)).unwrap();
        let omega = 2.0 / (l * c).sqrt() * (mode as f64 * PI / (2.0 * (n as f64 + 1.0))).sin();
        let mut errors = Vec::new();
        let mut hs = Vec::new();
        for h in [0.08, 0.04] {
            let mut x = Vec::new();
            circuit
                .simulate(Discretization::Forward, h, 300, 1, |s| {
                    x.push(modal_amplitude(&circuit, s, &shape))
                })
                .unwrap();
            let (mut num, mut den) = (0.0, 0.0);
            for w in x.windows(3) {
                num += w[1] * (w[0] + w[2]);
                den += 2.0 * w[1] * w[1];
            }
            let omega_h = (num / den).acos() / h;
            let dispersion = 2.0 / h * (omega * h / 2.0).asin();
            assert!(
                (omega_h - dispersion).abs() <= 1e-8 * omega,
                "mode {mode}, h {h}: {omega_h} vs discrete {dispersion}"
            );
            errors.push((omega_h - omega).abs());
            hs.push(h);
        }
        let order = (errors[0] / errors[1]).ln() / (hs[0] / hs[1]).ln();
        assert!((order - 2.0).abs() < 0.05, "mode {mode}: order {order}");
    }
}

/// A DC source charging an LC series circuit: `q_C(t) = c E (1 − cos ωt)`,
/// at first order with the forward map (symplectic-Euler type) and second
/// order with the midpoint map; a current source into a capacitor:
/// `q_C = ∫ I dt` exactly (Kirchhoff's law with the source's exact charge).
#[test]
fn sources_against_exact_solutions() {
    let text = "V1 1 0 DC 2\nL1 1 2 0.5\nC1 2 0 2\n";
    let circuit = Circuit::parse(text).unwrap();
    let omega = 1.0;
    let t_end = 3.0;
    for (disc, expected, bound) in [
        (Discretization::Forward, 1.0, 2e-3),
        (Discretization::Midpoint, 2.0, 1e-5),
    ] {
        let mut errors = Vec::new();
        for steps in [300, 600] {
            let h = t_end / steps as f64;
            let run = circuit.simulate(disc, h, steps, 0, |_| {}).unwrap();
            let exact = 2.0 * 2.0 * (1.0 - (omega * t_end).cos());
            errors.push((run.final_state.q[2] - exact).abs());
        }
        let order = (errors[0] / errors[1]).log2();
        assert!(
            errors[1] < bound && (order - expected).abs() < 0.1,
            "{disc:?}: {errors:?} {order}"
        );
    }

    let text = "I1 0 1 SIN(0.1 1 0.5)\nC1 1 0 3\nL1 1 0 1e6\n";
    let circuit = Circuit::parse(text).unwrap();
    let run = circuit
        .simulate(Discretization::Forward, 0.01, 250, 0, |_| {})
        .unwrap();
    let t = 2.5;
    let w = 2.0 * PI * 0.5;
    let charge = 0.1 * t + (1.0 - (w * t).cos()) / w;
    // The inductor takes a tiny part (ℓ = 1e6): q_C + q_L = ∫ I.
    let sum = run.final_state.q[0] + run.final_state.q[1];
    assert!((sum - charge).abs() < 1e-12, "{sum} vs {charge}");
}

fn error_of(text: &str) -> CircuitError {
    Circuit::parse(text).unwrap_err()
}

/// Bad netlists are typed errors with line numbers.
#[test]
fn netlist_errors_are_typed() {
    assert!(matches!(
        error_of("* title\nL1 1 0 1\nC1 1 0 x\n"),
        CircuitError::Malformed { line: 3, .. }
    ));
    assert!(matches!(
        error_of("L1 1 0 1\nC1 1\n"),
        CircuitError::Malformed { line: 2, .. }
    ));
    assert!(matches!(
        error_of("L1 1 0 1\n\nR1 1 0 1\n"),
        CircuitError::Unsupported { line: 3, .. }
    ));
    assert!(matches!(
        error_of("L1 1 0 1\nC1 1 0 -2\n"),
        CircuitError::BadValue { line: 2, .. }
    ));
    assert!(matches!(
        error_of("L1 1 0 1\nl1 1 0 2\n"),
        CircuitError::DuplicateName {
            line: 2,
            first_line: 1,
            ..
        }
    ));
    assert!(matches!(
        error_of("V1 1 0 SIN(0 1 2 0 0.5)\nC1 1 0 1\n"),
        CircuitError::Unsupported { line: 1, .. }
    ));
    // Floating: nodes 2, 3 have no path to ground.
    match error_of("L1 1 0 1\nC1 1 0 1\nC2 2 3 1\nL2 3 2 1\n") {
        CircuitError::FloatingNode { node, line } => assert_eq!((node.as_str(), line), ("2", 3)),
        e => panic!("{e}"),
    }
    // A loop of voltage sources.
    match error_of("V1 1 0 1\nV2 2 1 1\nV3 0 2 2\nC1 1 0 1\n") {
        CircuitError::VoltageSourceLoop { names, line } => {
            assert_eq!(line, 3);
            assert_eq!(names.len(), 3);
        }
        e => panic!("{e}"),
    }
    // Node 2 is reached only through a current source.
    assert!(matches!(
        error_of("L1 1 0 1\nC1 1 0 1\nI1 1 2 1\n"),
        CircuitError::CurrentSourceCutSet { line: 3, .. }
    ));
    assert!(matches!(
        error_of("L1 1 1 1\n"),
        CircuitError::Shorted { line: 1, .. }
    ));
    assert!(matches!(error_of("* nothing\n"), CircuitError::Empty));
    // Comments, dot-commands, suffixes, `.end`.
    let c =
        Circuit::parse("* t\nL1 a 0 1m ; inline\n.tran 1 2\nC1 a gnd 2u IC=1\n.end\nbad line\n")
            .unwrap();
    assert_eq!(c.coordinates(), 2);
    assert_eq!(netlist::parse("C1 1 0 1\n").unwrap().elements[0].line, 1);
}

/// `ENERGY={…}` capacitors with the linear laws `U = q²/(2c)` reproduce
/// the constant capacitors step by step to round-off: the [DDM] circuit
/// (capacitor loop, hidden constraint through the expression's
/// hyper-dual derivatives) with the forward map, a charged ladder with the
/// midpoint map; `IC=` voltages become the same charges `c v0`.
#[test]
fn linear_energy_law_reproduces_constant_capacitors() {
    let nonlinear = DDM
        .replace("C1 0 2 1", "C1 0 2 ENERGY={q^2/2}")
        .replace("C2 2 1 2", "C2 2 1 ENERGY={ q * q / (2 * 2) }")
        .replace("C3 0 2 3", "C3 0 2 energy = {0.5*q^2/3}");
    let ladder = "L1 0 1 1.5\nC1 1 0 0.5 IC=0.3\nL2 1 2 1.5\nC2 2 0 0.5 IC=-1\nL3 2 0 1.5\n";
    let ladder_nl = ladder
        .replace("C1 1 0 0.5", "C1 1 0 ENERGY={q^2}")
        .replace("C2 2 0 0.5", "C2 2 0 ENERGY={q^2/(2*0.5)}");
    for (a, b, disc, h) in [
        (DDM, nonlinear.as_str(), Discretization::Forward, 0.05 * PI),
        (ladder, ladder_nl.as_str(), Discretization::Midpoint, 0.1),
    ] {
        let (ca, cb) = (Circuit::parse(a).unwrap(), Circuit::parse(b).unwrap());
        assert_eq!(ca.loop_count(), cb.loop_count());
        let (sa, sb) = (ca.initial_state(), cb.initial_state());
        assert!((&sa.q - &sb.q).amax() <= 1e-15, "{} vs {}", sa.q, sb.q);
        let (mut xa, mut xb) = (Vec::new(), Vec::new());
        let ra = ca
            .simulate(disc, h, 400, 1, |s| xa.push(s.clone()))
            .unwrap();
        let rb = cb
            .simulate(disc, h, 400, 1, |s| xb.push(s.clone()))
            .unwrap();
        let mut worst: f64 = 0.0;
        for (u, w) in xa.iter().zip(&xb) {
            let scale = u.q.amax().max(u.p.amax()).max(1.0);
            worst = worst.max((&u.q - &w.q).amax().max((&u.p - &w.p).amax()) / scale);
        }
        assert!(worst <= 1e-12, "{disc:?}: {worst:e}");
        assert!((ra.energy_max - rb.energy_max).abs() <= 1e-12 * ra.energy_max.abs());
        assert!(rb.max_kirchhoff_residual <= 1e-14);
    }
}

/// An anharmonic LC tank, `v(q) = q/c + β q³` (`U = q²/(2c) + β q⁴/4`),
/// midpoint map: the period measured from the run converges at order 2 to
/// the exact period from the energy integral, `T = 4 ∫₀^{π/2} √ℓ dθ /
/// √(1/c + β q₀² (1 + sin²θ)/2)` (with `q = q₀ sin θ`; computed here by the
/// midpoint rule, spectrally accurate for this smooth periodic integrand),
/// and the discrete energy stays bounded without drift over 10⁴ steps.
#[test]
fn nonlinear_capacitor_tank_period_and_energy() {
    let (l, c, beta, q0): (f64, f64, f64, f64) = (1.0, 1.0, 0.5, 1.2);
    let v0 = q0 / c + beta * q0.powi(3);
    let text = format!("L1 1 0 {l}\nC1 1 0 ENERGY={{q^2/(2*{c}) + {beta}*q^4/4}} IC={v0:.17e}\n");
    let circuit = Circuit::parse(&text).unwrap();
    let cap = 1;
    assert!((circuit.initial_state().q[cap] - q0).abs() <= 1e-14);
    let m = 4000;
    let exact: f64 = 4.0
        * (0..m)
            .map(|k| {
                let th = (k as f64 + 0.5) * (PI / 2.0) / m as f64;
                l.sqrt() / (1.0 / c + beta * q0 * q0 * (1.0 + th.sin().powi(2)) / 2.0).sqrt()
            })
            .sum::<f64>()
        * (PI / 2.0)
        / m as f64;
    let periods = 20.0;
    let mut errors = Vec::new();
    for per_period in [40.0, 80.0] {
        let h = exact / per_period;
        let steps = (periods * per_period) as usize + 2;
        let mut crossings = Vec::new();
        let mut last: Option<(f64, f64)> = None;
        circuit
            .simulate(Discretization::Midpoint, h, steps, 1, |s| {
                let q = s.q[cap];
                if let Some((t0, q_prev)) = last
                    && q_prev < 0.0
                    && q >= 0.0
                {
                    crossings.push(t0 + h * q_prev / (q_prev - q));
                }
                last = Some((s.t, q));
            })
            .unwrap();
        let n = crossings.len();
        assert!(n >= 19, "{n} upward crossings");
        let period = (crossings[n - 1] - crossings[0]) / (n - 1) as f64;
        errors.push((period - exact).abs() / exact);
    }
    let order = (errors[0] / errors[1]).log2();
    println!("anharmonic tank: exact T = {exact}, relative errors {errors:?}, order {order:.3}");
    assert!(errors[1] < 2e-3, "{errors:?}");
    assert!((order - 2.0).abs() < 0.1, "order {order}");

    // Long run: bounded discrete energy, no fitted drift.
    let h = exact / 40.0;
    let mut energies = Vec::new();
    let mut stepper = circuit.stepper(Discretization::Midpoint, Direction::Forward);
    let mut s = circuit.initial_state();
    for _ in 0..10_000 {
        let out = dyn_advance(&mut stepper, &s, h).unwrap();
        energies.push(out.energy);
        s = out.to;
    }
    let e0 = 0.5 * q0 * q0 / c + beta * q0.powi(4) / 4.0;
    let (lo, hi) = energies
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &e| {
            (a.min(e), b.max(e))
        });
    let nn = energies.len() as f64;
    let (tm, mean) = ((nn - 1.0) / 2.0, energies.iter().sum::<f64>() / nn);
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (k, e) in energies.iter().enumerate() {
        sxy += (k as f64 - tm) * (e - mean);
        sxx += (k as f64 - tm).powi(2);
    }
    let drift = sxy / sxx * nn / e0;
    println!(
        "energy: spread {:.3e}, fitted drift {drift:.3e}",
        (hi - lo) / e0
    );
    assert!((hi - lo) / e0 < 2e-2, "spread {}", (hi - lo) / e0);
    assert!((mean - e0).abs() / e0 < 1e-2);
    assert!(drift.abs() < 1e-5, "fitted drift {drift:e}");
}

/// Bad `ENERGY={…}` values: typed errors with the line and the column (in
/// the line) of the offending character; laws without a charge for `IC=`.
#[test]
fn energy_law_errors_are_typed() {
    match error_of("L1 1 0 1\n  C1 1 0 ENERGY={q^2 + * 2}\n") {
        CircuitError::Expression { line, column, .. } => assert_eq!((line, column), (2, 24)),
        e => panic!("{e}"),
    }
    match error_of("L1 1 0 1\nC1 1 0 ENERGY={q^2/2 + x}\n") {
        CircuitError::Expression {
            line,
            column,
            message,
        } => {
            assert_eq!((line, column), (2, 24), "{message}");
        }
        e => panic!("{e}"),
    }
    for text in [
        "L1 1 0 1\nC1 1 0 ENERGY={q^2\n",
        "L1 1 0 ENERGY={q^2}\nC1 1 0 1\n",
        "L1 1 0 1\nC1 1 0 2 ENERGY={q^2}\n",
        "L1 1 0 1\nC1 1 0 U={q^2}\n",
    ] {
        assert!(
            matches!(error_of(text), CircuitError::Malformed { line: 2 | 1, .. }),
            "{text}"
        );
    }
    // U′(q) = −q has no charge for IC = 1 by Newton (U″ < 0).
    assert!(matches!(
        error_of("L1 1 0 1\nC1 1 0 ENERGY={-q^2/2} IC=1\n"),
        CircuitError::InitialCharge { line: 2, .. }
    ));
    // `sin(` inside the braces is not a SIN source; round trip through text.
    let c = Circuit::parse("L1 1 0 1\nC1 1 0 ENERGY={1 - cos(q) + sin(q)^2} IC=0.5\n").unwrap();
    let back = netlist::parse(&c.netlist().to_text()).unwrap();
    assert_eq!(back.elements[1].value, c.netlist().elements[1].value);
}

/// A circuit supplying hidden constraints of its own choosing (none: the
/// step finds them by the SVD of its dense Jacobian).
#[derive(Debug, Clone)]
struct Supplying(CircuitSystem, Vec<HiddenConstraint>);

impl DynSystem for Supplying {
    fn coordinate_count(&self) -> usize {
        self.0.coordinate_count()
    }
    fn constraint_count(&self) -> usize {
        self.0.constraint_count()
    }
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.0.lagrangian(q, v)
    }
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        self.0.constraint_forms(q, a)
    }
    fn lagrangian_terms(&self) -> Option<&diracvi_geometry::dynamic::LagrangianTerms> {
        self.0.lagrangian_terms()
    }
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        self.0.lagrangian_term(e, q, v)
    }
    fn constant_constraint_forms(&self) -> bool {
        self.0.constant_constraint_forms()
    }
    fn hidden_constraints(&self, _map: Discretization) -> &[HiddenConstraint] {
        &self.1
    }
}

/// Hidden constraints a system supplies wrongly are refused at the first
/// step with what is wrong (`StepError::Unsupported`), never used: a
/// vector that does not annihilate the step Jacobian (the [DDM] loop with a
/// wrong sign), a replaced equation outside its own vector or out of range,
/// two vectors replacing one equation. The right one runs.
#[test]
fn wrongly_supplied_hidden_constraints_are_refused() {
    use diracvi_discrete_dirac::dynamic::DynLagrangeDirac;
    let ddm = Circuit::parse(DDM).unwrap();
    let system = ddm.dyn_system("ddm");
    let right = system.hidden_constraints(Discretization::Forward).to_vec();
    assert_eq!(right.len(), 1);
    let y = &right[0];
    let flipped = HiddenConstraint {
        q: y.q
            .iter()
            .map(|&(i, v)| (i, if i == y.replaces { -v } else { v }))
            .collect(),
        ..y.clone()
    };
    let outside = HiddenConstraint {
        replaces: (0..4).find(|i| y.q.iter().all(|e| e.0 != *i)).unwrap(),
        ..y.clone()
    };
    let out_of_range = HiddenConstraint {
        replaces: 99,
        ..y.clone()
    };
    let h = 2.0 * PI / 40.0;
    let first_step = |supplied: Vec<HiddenConstraint>| {
        let mut stepper = DynLagrangeDirac::new(
            Supplying(system.clone(), supplied),
            Discretization::Forward,
            ConstraintDiscretization::Midpoint,
            Direction::Forward,
        );
        stepper.step(&ddm.initial_state(), h).map(|_| ())
    };
    first_step(right.clone()).unwrap();
    for (supplied, says) in [
        (vec![flipped], "not a left null vector"),
        (vec![outside], "must carry a non-zero coefficient"),
        (vec![out_of_range], "out of range"),
        (vec![y.clone(), y.clone()], "must carry a zero coefficient"),
    ] {
        let err = first_step(supplied).unwrap_err();
        assert!(
            matches!(&err, StepError::Unsupported(m) if m.contains(says)),
            "{err}"
        );
    }
}
