//! The runner: recording interval, agreement of the records with the
//! summary, the error classes, and both steppers through impacts.

use diracvi_impact::ImpactError;
use diracvi_run::Located;
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
                error: Located {
                    error: ImpactError::Step(_),
                    ..
                },
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
                error: Located {
                    step: 63,
                    error: ImpactError::Crossing { piece: 0, .. },
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

#[test]
fn a_buffer_keeps_rows_and_a_fan_out_feeds_every_sink() {
    use diracvi_run::{RecordSink, RecordView};
    let mut a = RecordBuffer::new();
    let mut b = RecordBuffer::with_capacity(2, 2);
    let mut d = Discard;
    {
        let mut all: Vec<&mut dyn RecordSink> = vec![&mut a, &mut b, &mut d];
        for k in 0..2 {
            let x = k as f64;
            all.record(&RecordView {
                k,
                t: 0.5 * x,
                q: &[x, x + 1.0],
                p: &[-x, 2.0 * x],
                energy: 3.0,
                constraint_residual: 1e-16,
            });
        }
    }
    assert_eq!(a, b);
    assert_eq!(a.len(), 2);
    assert_eq!(a.dimension, 2);
    assert_eq!(a.k, [0, 1]);
    assert_eq!(a.t, [0.0, 0.5]);
    assert_eq!(a.q, [0.0, 1.0, 1.0, 2.0]);
    assert_eq!(a.p, [-0.0, 0.0, -1.0, 2.0]);
    assert!(!a.is_empty() && RecordBuffer::new().is_empty());
}

fn names(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

#[test]
fn output_columns_are_qualified_so_no_names_clash() {
    use diracvi_run::{impact_columns, trajectory_columns};
    use std::collections::HashSet;
    let c = names(&["alpha", "energy", "t"]);
    assert_eq!(
        trajectory_columns(&c).join(","),
        "k,t,q_alpha,q_energy,q_t,p_alpha,p_energy,p_t,energy,constraint_residual"
    );
    assert_eq!(
        impact_columns(&c).join(","),
        "step,alpha,t,piece,q_alpha,q_energy,q_t,p_before_alpha,p_before_energy,p_before_t,\
         p_after_alpha,p_after_energy,p_after_t,energy_before,energy_after"
    );
    // every column distinct, even for names made of other columns' parts
    for c in [
        names(&["p_x", "x", "before_x", "q_x"]),
        names(&["k", "step", "piece", "energy_before"]),
    ] {
        for cols in [trajectory_columns(&c), impact_columns(&c)] {
            let set: HashSet<&String> = cols.iter().collect();
            assert_eq!(set.len(), cols.len(), "{cols:?}");
        }
    }
    // names that cannot stand in a header: indices
    assert_eq!(
        trajectory_columns(&names(&["a,b", "c"])).join(","),
        "k,t,q_0,q_1,p_0,p_1,energy,constraint_residual"
    );
    assert_eq!(
        trajectory_columns(&names(&["x", "x"]))[2..4].join(","),
        "q_0,q_1"
    );
}

#[test]
fn the_writers_write_the_cli_formats() {
    use diracvi_run::{
        ImpactRecord, RecordSink, RecordView, TrajectoryFormat, TrajectoryWriter, write_impacts_csv,
    };
    let c = names(&["x"]);
    let mut csv = TrajectoryWriter::new(Vec::new(), TrajectoryFormat::Csv, "m", &c);
    let mut json = TrajectoryWriter::new(Vec::new(), TrajectoryFormat::Json, "m", &c);
    for w in [&mut csv, &mut json] {
        w.record(&RecordView {
            k: 0,
            t: 0.0,
            q: &[1.0],
            p: &[-0.5],
            energy: 2.0,
            constraint_residual: 0.0,
        });
    }
    let imp = ImpactRecord {
        step: 3,
        alpha: 0.25,
        t: 0.1,
        q: vec![0.0],
        piece: 0,
        p_before: vec![-1.0],
        p_after: vec![1.0],
        energy_before: 0.5,
        energy_after: 0.5,
    };
    assert_eq!(csv.records(), 1);
    let csv = String::from_utf8(csv.finish(&[]).unwrap()).unwrap();
    assert_eq!(
        csv,
        "k,t,q_x,p_x,energy,constraint_residual\n0,0.0,1.0,-0.5,2.0,0.0\n"
    );
    let json = String::from_utf8(json.finish(std::slice::from_ref(&imp)).unwrap()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["records"][0]["p"][0], -0.5);
    assert_eq!(v["impacts"][0]["alpha"], 0.25);
    let mut out = Vec::new();
    write_impacts_csv(&mut out, &c, &[imp]).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "step,alpha,t,piece,q_x,p_before_x,p_after_x,energy_before,energy_after\n\
         3,0.25,0.1,0,0.0,-1.0,1.0,0.5,0.5\n"
    );
}

/// A model file of `n` free unit masses with the `m` rows `ẋ_i = 0`
/// (`i < m`), moving at unit speed otherwise, from the origin.
fn free_masses(n: usize, m: usize) -> String {
    let xs: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
    let l: Vec<String> = xs.iter().map(|x| format!("0.5*{x}_dot^2")).collect();
    let rows: Vec<String> = (0..m)
        .map(|a| {
            let row: Vec<String> = (0..n)
                .map(|i| if i == a { "\"1\"" } else { "\"0\"" }.to_string())
                .collect();
            format!("[{}]", row.join(", "))
        })
        .collect();
    let quoted: Vec<String> = xs.iter().map(|x| format!("\"{x}\"")).collect();
    let v: Vec<&str> = (0..n).map(|i| if i < m { "0.0" } else { "1.0" }).collect();
    format!(
        "[model]\nname = \"free\"\ncoordinates = [{}]\nlagrangian = \"{}\"\nconstraints = [{}]\n\
         [run]\nh = 0.1\nt_end = 1.0\n[initial]\nq = [{}]\nv = [{}]\n",
        quoted.join(", "),
        l.join(" + "),
        rows.join(", "),
        vec!["0.0"; n].join(", "),
        v.join(", ")
    )
}

#[test]
fn small_model_files_take_the_compile_time_core_and_larger_ones_the_run_time_core() {
    use diracvi_models::FAST_FILE_SIZES;
    use diracvi_run::Core;
    for n in 1..=8 {
        for m in 0..n.min(5) {
            let sc = Scenario::from_toml(&free_masses(n, m)).unwrap();
            let o = execute(&sc, RunPlan::new(10), &mut Discard).unwrap();
            let want = if FAST_FILE_SIZES.contains(&(n, m)) {
                Core::CompileTime
            } else {
                Core::RunTime
            };
            assert_eq!(o.method.core, want, "n = {n}, m = {m}");
            // free flight: x_i(1) = v_i exactly (midpoint is exact on lines)
            for (i, x) in o.final_q.iter().enumerate() {
                let v = if i < m { 0.0 } else { 1.0 };
                assert!((x - v).abs() <= 1e-14, "n = {n}, m = {m}: q_{i} = {x}");
            }
        }
    }
}

/// `n` free unit masses with `m` rows `v_0 = 0`, a system of the user's
/// own crate (run through the run-time-sized core only here: the
/// compile-time dispatch of `execute_system` is exercised by
/// examples/own-model, where it is compiled once).
#[derive(Debug, Clone)]
struct Free {
    n: usize,
    m: usize,
}

impl diracvi_geometry::dynamic::DynSystem for Free {
    fn coordinate_count(&self) -> usize {
        self.n
    }
    fn constraint_count(&self) -> usize {
        self.m
    }
    fn lagrangian<S: diracvi_geometry::AdScalar>(&self, _q: &[S], v: &[S]) -> S {
        v.iter()
            .fold(S::from(0.0), |acc, &x| acc + S::from(0.5) * x * x)
    }
    fn constraint_forms<S: diracvi_geometry::AdScalar>(&self, _q: &[S], a: &mut [S]) {
        for (k, x) in a.iter_mut().enumerate() {
            *x = S::from(if k % self.n == k / self.n { 1.0 } else { 0.0 });
        }
    }
}

impl diracvi_run::NamedDynSystem for Free {
    fn name(&self) -> &str {
        "free"
    }
    fn description(&self) -> &str {
        "free unit masses"
    }
    fn coordinates(&self) -> Vec<String> {
        (0..self.n).map(|i| format!("x{i}")).collect()
    }
    fn piece_name(&self, j: usize) -> String {
        format!("g_{j}")
    }
}

fn free_setup(n: usize, m: usize) -> diracvi_run::DynRunSetup {
    use nalgebra::DVector;
    diracvi_run::DynRunSetup {
        q0: DVector::zeros(n),
        v0: DVector::from_fn(n, |i, _| if i < m { 0.0 } else { 1.0 }),
        h: 0.1,
        t_end: 1.0,
        discretization: diracvi_geometry::Discretization::Midpoint,
        constraint: diracvi_geometry::ConstraintDiscretization::Midpoint,
    }
}

#[test]
fn own_systems_of_any_size_run_on_the_run_time_core() {
    use diracvi_run::{Core, execute_system_run_time};
    for n in 1..=8 {
        for m in 0..n.min(5) {
            let o = execute_system_run_time(
                &Free { n, m },
                &free_setup(n, m),
                RunPlan::new(10),
                &mut Discard,
                &mut |_| {},
            )
            .unwrap();
            assert_eq!(o.method.core, Core::RunTime);
            for (i, x) in o.final_q.iter().enumerate() {
                let v = if i < m { 0.0 } else { 1.0 };
                assert!((x - v).abs() <= 1e-14, "n = {n}, m = {m}: q_{i} = {x}");
            }
        }
    }
}

#[test]
fn bad_setups_of_own_systems_are_refused_with_what_was_wrong() {
    use diracvi_models::ModelError;
    use diracvi_run::{AsSized, describe_system, execute_system_run_time};
    let run = |model: &Free, s: &diracvi_run::DynRunSetup, plan: RunPlan| {
        execute_system_run_time(model, s, plan, &mut Discard, &mut |_| {})
    };
    let model = Free { n: 2, m: 0 };
    let mut s = free_setup(2, 0);
    s.h = 0.0;
    let e = run(&model, &s, RunPlan::new(1)).unwrap_err();
    assert_eq!(e, RunError::Model(ModelError::InvalidStep { h: 0.0 }));
    let mut s = free_setup(2, 0);
    s.v0 = nalgebra::DVector::zeros(3);
    let e = describe_system(&model, &s).unwrap_err();
    assert_eq!(
        e,
        ModelError::WrongLength {
            what: "v",
            expected: 2,
            got: 3
        }
    );
    let e = run(&model, &free_setup(2, 0), RunPlan::new(1).reduce(true)).unwrap_err();
    assert!(matches!(e, RunError::ReductionUnsupported { .. }), "{e}");
    // v0 outside ker A
    let model = Free { n: 2, m: 1 };
    let mut s = free_setup(2, 1);
    s.v0 = nalgebra::DVector::from_vec(vec![1.0, 0.0]);
    let e = describe_system(&model, &s).unwrap_err();
    assert!(
        matches!(e, ModelError::InitialViolatesConstraint { index: 0, .. }),
        "{e}"
    );
    let sized = AsSized::<Free, 3, 0>::new(Free { n: 2, m: 0 }).unwrap_err();
    assert_eq!(
        sized.to_string(),
        "the system has 2 coordinates and 0 constraint rows, not the 3 and 0 asked for"
    );
}

/// A system file's scenario (parts joined through ports): the runner
/// accounts its parts and ports whatever records the caller asks for, and
/// the caller's records are the ones a run without the accounting gives.
#[test]
fn a_system_run_accounts_its_parts_and_ports_and_records_as_asked() {
    use diracvi_run::{PartsAccounting, Summary};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/systems/loudspeaker.toml"
    );
    let mut sc = Scenario::from_system(diracvi_system::System::from_path(path).unwrap()).unwrap();
    sc.set("t_end", "0.002").unwrap();
    let steps = step_count(&sc, None).unwrap();
    let (mut with, mut without) = (RecordBuffer::new(), RecordBuffer::new());
    let a = execute(&sc, RunPlan::new(steps).every(7), &mut with).unwrap();
    let b = execute(
        &sc,
        RunPlan::new(steps).every(7).account(false),
        &mut without,
    )
    .unwrap();
    assert_eq!(with, without);
    assert_eq!(with.k.last(), Some(&steps));
    assert_eq!(with.k[1], 7);
    assert_eq!(a.final_q, b.final_q);
    assert!(b.accounting.is_none());
    let Some(PartsAccounting::Done(report)) = &a.accounting else {
        panic!("no accounting: {:?}", a.accounting);
    };
    let parts: Vec<&str> = report.parts.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(parts, ["cone", "tank"]);
    assert_eq!(report.nodes + report.nodes_skipped, steps - 1);
    // the parts' energies add up to the discrete energy of every step
    let scale = a.energy_scale;
    assert!(
        report.energy_sum_deviation_max.unwrap() <= 1e-12 * scale,
        "{report:?}"
    );
    let info = describe(&sc).unwrap();
    let summary = serde_json::to_value(Summary::new(&sc, &info, &a, 0.01)).unwrap();
    assert!(summary["ports"]["coil"]["work"]["cone"].is_f64());
    assert_eq!(summary["accounting"]["nodes"], report.nodes);
    // a composed run is accounted stage by stage (three a step at order
    // 4), the caller's records unchanged; its summary has no comparison
    // with the runner's energy (that of the composed step, not of stages)
    let (mut with, mut without) = (RecordBuffer::new(), RecordBuffer::new());
    let plan = || RunPlan::new(steps).every(7).order(Order::Four);
    let c = execute(&sc, plan(), &mut with).unwrap();
    execute(&sc, plan().account(false), &mut without).unwrap();
    assert_eq!(with, without);
    let Some(PartsAccounting::Done(report)) = &c.accounting else {
        panic!("no accounting: {:?}", c.accounting);
    };
    assert_eq!(report.nodes + report.nodes_skipped, 3 * steps - 1);
    assert_eq!(report.energy_sum_deviation_max, None);
    let summary = serde_json::to_value(Summary::new(&sc, &info, &c, 0.01)).unwrap();
    assert!(summary["accounting"]["energy_sum_deviation_max"].is_null());
    assert!(summary["ports"]["coil"]["work"]["tank"].is_f64());
}

/// Composed runs (orders 4 and 6) are accounted over their stages: the
/// symmetric midpoint steps of signed lengths `γ_i h` form a variational
/// trajectory of varying step, read node by node (docs/theory.md §15.1).
/// On the loudspeaker without its stop (linear, no impact): the gyrator's
/// works cancel to round-off at every node; the total of the parts'
/// unaccounted energies closes to round-off (the midpoint stages keep the
/// quadratic energy), while its split between the parts moves by the
/// variable step's `O(h²)` (measured ratio 3.99–4.0 when h halves). The
/// relay at order 4: every node but the two around each impact step is
/// accounted, and its inductance port balances to a small fraction of
/// its work.
#[test]
fn composed_system_runs_are_accounted_stage_by_stage() {
    use diracvi_run::PartsAccounting;
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/systems");
    let system = |name: &str| {
        let path = format!("{dir}/{name}.toml");
        Scenario::from_system(diracvi_system::System::from_path(path).unwrap()).unwrap()
    };
    let report = |sc: &Scenario, order: Order| {
        let steps = step_count(sc, None).unwrap();
        let o = execute(sc, RunPlan::new(steps).order(order), &mut Discard).unwrap();
        let Some(PartsAccounting::Done(report)) = o.accounting else {
            panic!("no accounting: {:?}", o.accounting);
        };
        // the steps with an impact
        let mut hit: Vec<usize> = o.impacts.iter().map(|i| i.step).collect();
        hit.dedup();
        (steps, hit.len(), report)
    };
    for (order, stages) in [(Order::Four, 3), (Order::Six, 9)] {
        let mut split = Vec::new();
        for h in ["2e-5", "1e-5"] {
            let mut sc = system("loudspeaker");
            sc.set("cone.xmax", "1").unwrap();
            sc.set("t_end", "0.01").unwrap();
            sc.set("h", h).unwrap();
            let (steps, impacts, r) = report(&sc, order);
            assert_eq!(impacts, 0);
            assert_eq!((r.nodes, r.nodes_skipped), (stages * steps - 1, 0));
            assert_eq!(r.energy_sum_deviation_max, None);
            let (_, coil) = &r.ports[0];
            assert!(coil.work[0].abs() > 1e-5, "{coil:?}");
            assert!(
                (coil.work[0] + coil.work[1]).abs() <= 1e-14 * coil.work[0].abs(),
                "{order:?} h = {h}: {coil:?}"
            );
            assert!(coil.balance_max <= 1e-12 * coil.work_scale, "{coil:?}");
            let (cone, tank) = (&r.parts[0].1, &r.parts[1].1);
            let (uc, ut) = (cone.unaccounted.unwrap(), tank.unaccounted.unwrap());
            assert!(
                (uc + ut).abs() <= 1e-12 * coil.work[0].abs(),
                "{order:?} h = {h}: {uc:e} + {ut:e}"
            );
            assert!(uc.abs() <= 1e-4 * coil.work[0].abs(), "{uc:e}");
            split.push(uc);
        }
        let ratio = split[0] / split[1];
        assert!((3.6..4.4).contains(&ratio), "{order:?}: ratio {ratio}");
    }
    // each step with an impact is left out with the nodes at its ends
    let (steps, hit, r) = report(&system("relay"), Order::Four);
    assert!(hit >= 5, "{hit} steps with impacts");
    assert_eq!(r.nodes_skipped, 2 * hit, "{r:?}");
    assert_eq!(r.nodes + r.nodes_skipped, 3 * (steps - hit) - 1 + hit);
    let (_, gap) = &r.ports[0];
    assert!(gap.balance_max <= 1e-2 * gap.work_scale, "{gap:?}");
}

/// The accounting has no size limit: a chain of 70 oscillators (n = 70),
/// each joined to the next by a gyrator, a transformer or a joint, in turn
/// (23 groups of rows, solved group by group), balances every port to
/// round-off and adds the parts' energies up to the discrete energy.
#[test]
fn a_chain_of_seventy_oscillators_is_accounted_port_by_port() {
    use diracvi_run::PartsAccounting;
    let n = 70;
    let dir = tempfile::tempdir().unwrap();
    // x_i at rest, displaced so that every joint `x_i − x_{i+1} − c_i` holds
    let x0 = |i: usize| 0.1 * (1 + i % 5) as f64;
    let mut system = String::from("[system]\nname = \"chain\"\n");
    for i in 0..n {
        let (m, k) = (1.0 + 0.1 * i as f64, 1.0 + 0.05 * i as f64);
        std::fs::write(
            dir.path().join(format!("s{i}.toml")),
            format!(
                "[model]\nname = \"s{i}\"\ncoordinates = [\"x\"]\n\
                 lagrangian = \"0.5*m*x_dot^2 - 0.5*k*x^2\"\n\
                 [parameters]\nm = {m:?}\nk = {k:?}\n[initial]\nq = [{:?}]\nv = [0.0]\n",
                x0(i)
            ),
        )
        .unwrap();
        system += &format!("[[part]]\nname = \"p{i}\"\nmodel_file = \"s{i}.toml\"\n");
    }
    for i in 0..n - 1 {
        let (a, b) = (format!("p{i}.x"), format!("p{}.x", i + 1));
        system += &match i % 3 {
            0 => format!(
                "[[port]]\nname = \"g{i}\"\nkind = \"gyrator\"\na = \"{a}\"\nb = \"{b}\"\nBl = 0.7\n"
            ),
            1 => format!(
                "[[port]]\nname = \"t{i}\"\nkind = \"transformer\"\na = \"{a}\"\nb = \"{b}\"\nratio = 0.5\n"
            ),
            _ => format!(
                "[[port]]\nname = \"j{i}\"\nkind = \"joint\"\nrelation = \"{a} - {b} - c\"\nc = {:?}\n",
                x0(i) - x0(i + 1)
            ),
        };
    }
    system += "[run]\nh = 1e-3\nt_end = 0.3\n";
    let path = dir.path().join("chain.toml");
    std::fs::write(&path, system).unwrap();
    let sc = Scenario::from_system(diracvi_system::System::from_path(&path).unwrap()).unwrap();
    let steps = step_count(&sc, None).unwrap();
    let out = execute(&sc, RunPlan::new(steps), &mut Discard).unwrap();
    let Some(PartsAccounting::Done(report)) = &out.accounting else {
        panic!("no accounting: {:?}", out.accounting);
    };
    assert_eq!(report.parts.len(), n);
    assert_eq!(report.ports.len(), n - 1);
    assert_eq!((report.nodes, report.nodes_skipped), (steps - 1, 0));
    let scale = out.energy_scale;
    assert!(
        report.energy_sum_deviation_max.unwrap() <= 1e-12 * scale,
        "parts' energies against E_d: {:e}",
        report.energy_sum_deviation_max.unwrap()
    );
    let mut moved = 0;
    for (name, port) in &report.ports {
        assert!(
            port.balance_max <= 1e-12 * port.work_scale.max(scale),
            "{name}: balance {:e} of {:e}",
            port.balance_max,
            port.work_scale
        );
        assert!(
            (port.work[0] + port.work[1]).abs() <= 1e-12 * scale,
            "{name}: {:?}",
            port.work
        );
        moved += usize::from(port.work_scale > 1e-6 * scale);
    }
    // 32 of the 69 ports carry work above that level by t = 0.3
    assert!(moved >= 25, "only {moved} ports did work");
    let worst = report
        .parts
        .iter()
        .map(|(_, p)| p.unaccounted.unwrap().abs())
        .fold(0.0, f64::max);
    eprintln!("n = {n}: worst unaccounted {worst:e}, energy scale {scale:e}");
    assert!(worst <= 1e-13 * scale, "unaccounted {worst:e}");
}

/// Constraint rows on their stencils (docs/theory.md §11.4): the three
/// sleighs (n = 9 > 8, three rows over three coordinates each) evaluate
/// their rows on the stencils; the same file with every zero entry written
/// `0*x1` (rows that cannot be split, so the dense `m × n` forms) is the
/// same model. Both runs hit the arena's wall, keep the constraint to
/// round-off and agree to round-off.
#[test]
fn constraint_rows_on_stencils_agree_with_dense_rows() {
    let root = format!("{}/../../models", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(format!("{root}/three-sleighs.toml")).unwrap();
    let dense = text.replace("\"0\"", "\"0*x1\"");
    assert_ne!(dense, text);
    let dir = tempfile::tempdir().unwrap();
    let run = |text: &str, name: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        // the file's run: 10 s, two impacts with the arena
        let sc = Scenario::from_model_file(&path).unwrap();
        let steps = step_count(&sc, None).unwrap();
        execute(&sc, RunPlan::new(steps), &mut Discard).unwrap()
    };
    let (rows, full) = (run(&text, "rows.toml"), run(&dense, "dense.toml"));
    assert_eq!(rows.impacts.len(), 2, "impacts with the arena");
    assert_eq!(rows.impacts.len(), full.impacts.len());
    for out in [&rows, &full] {
        assert!(
            out.max_constraint_residual <= 1e-12,
            "{:e}",
            out.max_constraint_residual
        );
    }
    let worst = rows
        .final_q
        .iter()
        .chain(&rows.final_p)
        .zip(full.final_q.iter().chain(&full.final_p))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    eprintln!("rows on stencils against dense rows: {worst:e}");
    assert!(worst <= 1e-12, "final states differ by {worst:e}");
}

/// A shipped model file's scenario (`models/NAME.toml`).
fn shipped(name: &str) -> Scenario {
    let path = format!("{}/../../models/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    Scenario::from_model_file(path).unwrap()
}

fn max_abs_difference(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / x.abs().max(1.0))
        .fold(0.0, f64::max)
}

/// A model file that declares `[symmetry]` reduces on the run-time-sized
/// core: the file twins of the catalogue's symmetric models
/// (`models/particle.toml`, `pendulum.toml`, `disk-table.toml`) reproduce
/// the catalogue's reduced runs (compile-time core) to round-off — the same
/// reduction block, final state and impacts (measured: particle and
/// disk-table identical, pendulum final `q` within 1.6e-15, `p` within
/// 1.0e-14, impact time within 2.0e-15) — and the particle's conserved
/// `p_x` stays at `μ` to round-off.
#[test]
fn model_file_twins_reduce_as_the_catalogue() {
    for (model, t_end) in [("particle", "3"), ("pendulum", "1.5"), ("disk-table", "3")] {
        let by_name = scenario(model, &[("t_end", t_end)]);
        let mut file = shipped(model);
        file.set("t_end", t_end).unwrap();
        let steps = step_count(&by_name, None).unwrap();
        assert_eq!(steps, step_count(&file, None).unwrap());
        let a = execute(&by_name, RunPlan::new(steps).reduce(true), &mut Discard).unwrap();
        let b = execute(&file, RunPlan::new(steps).reduce(true), &mut Discard).unwrap();
        let (ra, rb) = (a.reduction.unwrap(), b.reduction.unwrap());
        assert_eq!(ra.kind, rb.kind, "{model}");
        assert_eq!(ra.cyclic, rb.cyclic, "{model}");
        assert_eq!(ra.curvature_force, rb.curvature_force, "{model}");
        assert_eq!(ra.momentum.len(), rb.momentum.len(), "{model}");
        assert!(
            max_abs_difference(&ra.momentum, &rb.momentum) < 1e-14,
            "{model}"
        );
        assert_eq!(a.impacts.len(), b.impacts.len(), "{model}");
        assert!(!a.impacts.is_empty(), "{model}: no impact to compare");
        for (x, y) in a.impacts.iter().zip(&b.impacts) {
            assert_eq!(x.piece, y.piece, "{model}");
            assert!(
                (x.t - y.t).abs() < 1e-12,
                "{model}: impact at {} vs {}",
                x.t,
                y.t
            );
            assert!(max_abs_difference(&x.q, &y.q) < 1e-12, "{model}");
            assert!(
                max_abs_difference(&x.p_after, &y.p_after) < 1e-11,
                "{model}"
            );
        }
        let dq = max_abs_difference(&a.final_q, &b.final_q);
        let dp = max_abs_difference(&a.final_p, &b.final_p);
        let dt = a
            .impacts
            .iter()
            .zip(&b.impacts)
            .map(|(x, y)| (x.t - y.t).abs())
            .fold(0.0, f64::max);
        eprintln!(
            "{model}: {} impacts, final q {dq:e}, p {dp:e}, impact times {dt:e}",
            a.impacts.len()
        );
        assert!(
            dq < 1e-12 && dp < 1e-11,
            "{model}: final states differ by {dq:e}, {dp:e}"
        );
        assert!((a.final_t - b.final_t).abs() < 1e-12);
        assert!((a.final_energy - b.final_energy).abs() < 1e-11 * a.energy_scale);
    }
    // the particle's p_x is the Routh momentum, kept through its impacts
    let mut file = shipped("particle");
    file.set("t_end", "3").unwrap();
    let out = execute(&file, RunPlan::new(300).reduce(true), &mut Discard).unwrap();
    let mu = out.reduction.unwrap().momentum[0];
    assert!(out.impacts.len() >= 2);
    let p_x = &out.invariants[0];
    assert_eq!(p_x.name, "p_x");
    assert!(
        (p_x.initial - mu).abs() <= 1e-15 && p_x.max_abs_deviation <= 1e-14,
        "{p_x:?}"
    );
    assert!((out.final_p[0] - mu).abs() <= 1e-14);
}

/// A model file of more than six coordinates reduces: the four carts with
/// pendulums (`models/carts-pendulums.toml`, n = 8, the four cart positions
/// cyclic) reduced on the four angles agree with the full run to solver
/// tolerance (Routh reduction reconstructs the full discrete momentum
/// equation; measured over T = 1, h = 1e-3, 3 impacts on the stops: records
/// within 2.2e-13 in `q` and 1.8e-13 in `p`, impact times within 3.0e-15),
/// and the four conserved momenta stay at their initial values to round-off
/// (measured: 8.9e-16).
#[test]
fn a_large_model_file_reduces_and_agrees_with_the_full_run() {
    let mut sc = shipped("carts-pendulums");
    sc.set("t_end", "1").unwrap();
    let steps = step_count(&sc, None).unwrap();
    let (mut full, mut red) = (RecordBuffer::new(), RecordBuffer::new());
    let a = execute(&sc, RunPlan::new(steps).every(100), &mut full).unwrap();
    let b = execute(&sc, RunPlan::new(steps).every(100).reduce(true), &mut red).unwrap();
    let r = b.reduction.as_ref().unwrap();
    assert_eq!(r.kind, "Routh");
    assert_eq!(r.cyclic, ["x1", "x2", "x3", "x4"]);
    // μ_i = (M + m) ẋ_i + m l cos θ_i θ̇_i at the initial data
    let v = [0.5, 1.5, -0.3, -2.0, 0.2, 1.0, 0.0, -1.2];
    let th: [f64; 4] = [0.3, -0.2, 0.1, 0.0];
    for i in 0..4 {
        let mu = 2.5 * v[2 * i] + 0.5 * 0.4 * th[i].cos() * v[2 * i + 1];
        assert!(
            (r.momentum[i] - mu).abs() < 1e-14,
            "μ_{i}: {} vs {mu}",
            r.momentum[i]
        );
    }
    assert_eq!(full.k, red.k);
    assert_eq!(red.dimension, 8);
    let dq = max_abs_difference(&full.q, &red.q);
    let dp = max_abs_difference(&full.p, &red.p);
    let dt = a
        .impacts
        .iter()
        .zip(&b.impacts)
        .map(|(x, y)| (x.t - y.t).abs())
        .fold(0.0, f64::max);
    let drift = b
        .invariants
        .iter()
        .map(|i| i.max_abs_deviation)
        .fold(0.0, f64::max);
    eprintln!(
        "carts-pendulums: {} impacts, records {dq:e} / {dp:e}, impact times {dt:e}, μ drift {drift:e}, full {:?} reduced {:?}",
        b.impacts.len(),
        a.wall_time,
        b.wall_time
    );
    assert!(dq < 1e-10 && dp < 1e-10, "records differ by {dq:e}, {dp:e}");
    assert_eq!(a.impacts.len(), b.impacts.len());
    assert!(b.impacts.len() >= 2, "{} impacts", b.impacts.len());
    for (x, y) in a.impacts.iter().zip(&b.impacts) {
        assert_eq!(x.piece, y.piece);
        assert!((x.t - y.t).abs() < 1e-10, "impact at {} vs {}", x.t, y.t);
    }
    assert_eq!(b.invariants.len(), 4);
    for (inv, mu) in b.invariants.iter().zip(&r.momentum) {
        assert!((inv.initial - mu).abs() < 1e-14, "{inv:?}");
        assert!(inv.max_abs_deviation < 1e-13, "{inv:?}");
    }
}

/// Declarations a reduced run refuses: a coordinate that is not cyclic
/// (named in the typed error), a file without `[symmetry]`, and the plans
/// the catalogue's reduced runs refuse, with the same errors.
#[test]
fn model_file_reductions_refuse_false_declarations_and_unsupported_plans() {
    let path = format!("{}/../../models/particle.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        Scenario::from_model_file(&p).unwrap()
    };
    // y is not cyclic: gravity and the floor see it
    let false_y = file(
        "y.toml",
        &text.replace("cyclic = [\"x\"]", "cyclic = [\"y\"]"),
    );
    let err = execute(&false_y, RunPlan::new(5).reduce(true), &mut Discard).unwrap_err();
    match &err {
        RunError::NotCyclic { coordinate, .. } => assert_eq!(coordinate, "y"),
        other => panic!("expected NotCyclic, got {other}"),
    }
    assert!(!err.is_numerical());
    assert!(
        err.to_string().contains("`y` is not a cyclic coordinate"),
        "{err}"
    );
    // no declaration
    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("[symmetry]") && !l.starts_with("cyclic"))
        .map(|l| format!("{l}\n"))
        .collect();
    let none = file("none.toml", &without);
    let err = execute(&none, RunPlan::new(5).reduce(true), &mut Discard).unwrap_err();
    assert!(
        matches!(&err, RunError::Model(e) if e.to_string().contains("[symmetry]")),
        "{err}"
    );
    let sc = shipped("pendulum");
    for plan in [
        RunPlan::new(10).reduce(true).direction(Direction::Backward),
        RunPlan::new(10).reduce(true).stepper(Stepper::Hamiltonian),
        RunPlan::new(10).reduce(true).order(Order::Four),
        RunPlan::new(10).reduce(true).order(Order::Six),
    ] {
        let by_file = execute(&sc, plan.clone(), &mut Discard).unwrap_err();
        let by_name = execute(&scenario("pendulum", &[]), plan, &mut Discard).unwrap_err();
        assert!(
            matches!(by_file, RunError::ReductionUnsupported { .. }),
            "{by_file}"
        );
        assert_eq!(by_file.to_string(), by_name.to_string());
    }
    let err = execute(
        &sc,
        RunPlan::new(10).reduce(true).jacobian(true),
        &mut Discard,
    )
    .unwrap_err();
    assert!(matches!(err, RunError::JacobianUnsupported { .. }), "{err}");
}

/// A system's netlist part keeps its sources (docs/systems.md): a `SIN`
/// voltage becomes a generalized force of time on its branch, a current
/// source a drive of its Kirchhoff row, so the assembled model file runs
/// the circuit the netlist runs: at orders 4 and 6 the final charges of the
/// system and of the netlist on its own agree to 1e-12 (measured: 1e-15);
/// the parts' accounting is skipped with a warning (the sources' work is
/// not read yet), never reported wrong.
#[test]
fn a_system_part_keeps_its_netlists_sources() {
    use diracvi_run::{Order, PartsAccounting};
    let dir = std::env::temp_dir().join(format!("diracvi-sources-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let net =
        "V1 1 0 SIN(0 1 0.3 0.2)\nL1 1 2 1\nC1 2 0 0.5\nI1 0 2 SIN(0 0.5 0.2 0 0 90)\nL2 2 0 2\n";
    std::fs::write(dir.join("driven.cir"), net).unwrap();
    std::fs::write(
        dir.join("driven.toml"),
        "[system]\nname = \"driven\"\n\n[[part]]\nname = \"net\"\nnetlist = \"driven.cir\"\n\n\
         [run]\nh = 0.05\nt_end = 2.0\n",
    )
    .unwrap();
    let system =
        Scenario::from_system(diracvi_system::System::from_path(dir.join("driven.toml")).unwrap())
            .unwrap();
    assert!(system.time_dependent());
    let netlist = Scenario::from_netlist("driven", net, 0.05, 2.0).unwrap();
    for order in [Order::Four, Order::Six] {
        let a = execute(
            &system,
            RunPlan::new(40).order(order),
            &mut RecordBuffer::new(),
        )
        .unwrap();
        let b = execute(
            &netlist,
            RunPlan::new(40).order(order),
            &mut RecordBuffer::new(),
        )
        .unwrap();
        assert_eq!(a.final_q.len(), b.final_q.len());
        let scale = b.final_q.iter().fold(1.0_f64, |m, x| m.max(x.abs()));
        for (x, y) in a.final_q.iter().zip(&b.final_q) {
            assert!((x - y).abs() <= 1e-12 * scale, "{order:?}: {x} vs {y}");
        }
    }
    // The sources' work in the accounting: the sine voltage (a force on
    // its branch) and the current source (a drive of its node's row). The
    // part is quadratic, so with the midpoint map its energy changes by
    // the sources' work to round-off; the forward map's energy error is
    // O(h) (it oscillates), so its unaccounted energy halves with h.
    let accounted = |discretization: &str, h: f64| {
        let mut scenario = system.clone();
        scenario.set("discretization", discretization).unwrap();
        scenario.set("h", &h.to_string()).unwrap();
        let steps = (2.0 / h).round() as usize;
        let o = execute(&scenario, RunPlan::new(steps), &mut RecordBuffer::new()).unwrap();
        let Some(PartsAccounting::Done(report)) = o.accounting else {
            panic!("no accounting: {:?}", o.accounting);
        };
        assert_eq!((report.nodes, report.nodes_skipped), (steps - 1, 0));
        assert!(
            report.energy_sum_deviation_max.unwrap() < 1e-14,
            "{report:?}"
        );
        let (_, net) = &report.parts[0];
        (net.source_work, net.unaccounted.unwrap())
    };
    for h in [0.05, 0.025] {
        let (work, unaccounted) = accounted("midpoint", h);
        assert!(work > 0.2, "{work}");
        assert!(unaccounted.abs() < 1e-14, "h = {h}: {unaccounted:e}");
    }
    let (_, coarse) = accounted("forward", 0.025);
    let (work, fine) = accounted("forward", 0.0125);
    assert!(fine.abs() < 5e-3 * work, "{fine:e} of {work}");
    let ratio = coarse / fine;
    assert!((1.7..2.8).contains(&ratio), "forward map: ratio {ratio}");
    // A driven tank joined to a mass–spring cone by a gyrator (the
    // loudspeaker without its stop): each part's balance of energy, port
    // work and source work closes to round-off, the gyrator's works cancel.
    std::fs::write(
        dir.join("cone.toml"),
        "[model]\nname = \"cone\"\ncoordinates = [\"x\"]\n\
         lagrangian = \"0.5*m*x_dot^2 - 0.5*k*x^2\"\n[parameters]\nm = 0.01\nk = 1000.0\n\
         [run]\nh = 1e-4\nt_end = 0.05\n[initial]\nq = [0.0]\nv = [0.0]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("tank.cir"),
        "L1 1 2 1m\nC1 2 0 1m IC=1\nV1 1 0 SIN(0 0.5 50)\nI1 0 2 SIN(0 0.2 30)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("speaker.toml"),
        "[system]\nname = \"speaker\"\n[[part]]\nname = \"cone\"\nmodel_file = \"cone.toml\"\n\
         [[part]]\nname = \"tank\"\nnetlist = \"tank.cir\"\n[[port]]\nname = \"coil\"\n\
         kind = \"gyrator\"\na = \"cone.x\"\nb = \"tank.L1\"\nBl = 5.0\n\
         [run]\nh = 1e-4\nt_end = 0.05\ndiscretization = \"midpoint\"\n",
    )
    .unwrap();
    let speaker =
        Scenario::from_system(diracvi_system::System::from_path(dir.join("speaker.toml")).unwrap())
            .unwrap();
    let o = execute(&speaker, RunPlan::new(500), &mut RecordBuffer::new()).unwrap();
    let Some(PartsAccounting::Done(report)) = o.accounting else {
        panic!("no accounting: {:?}", o.accounting);
    };
    assert!(
        report.energy_sum_deviation_max.unwrap() < 1e-15,
        "{report:?}"
    );
    let (_, tank) = &report.parts[1];
    assert!(
        tank.source_work > 1e-2 && tank.port_work.abs() > 1e-3,
        "{tank:?}"
    );
    for (name, part) in &report.parts {
        assert!(part.unaccounted.unwrap().abs() < 1e-15, "{name}: {part:?}");
    }
    let (_, coil) = &report.ports[0];
    assert!((coil.work[0] + coil.work[1]).abs() < 1e-15, "{coil:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A chain of `n` unit masses on springs as a model file; `massless` drops
/// one body's kinetic energy, `tie` adds the constraint row
/// `x_massless_dot − x_(massless−1)_dot = 0`.
fn chain_file(n: usize, massless: Option<usize>, tie: bool) -> String {
    let coords: Vec<String> = (1..=n).map(|i| format!("\"x{i}\"")).collect();
    let kinetic: Vec<String> = (1..=n)
        .filter(|&i| Some(i) != massless)
        .map(|i| format!("x{i}_dot^2"))
        .collect();
    let springs: Vec<String> = (1..n)
        .map(|i| format!("(x{} - x{i} - 1)^2", i + 1))
        .collect();
    let constraints = match (tie, massless) {
        (true, Some(k)) => {
            let row: Vec<String> = (1..=n)
                .map(|i| match i {
                    _ if i == k => "\"1\"".to_owned(),
                    _ if i + 1 == k => "\"-1\"".to_owned(),
                    _ => "\"0\"".to_owned(),
                })
                .collect();
            format!("constraints = [[{}]]\n", row.join(", "))
        }
        _ => String::new(),
    };
    let q: Vec<String> = (0..n).map(|i| format!("{i}.0")).collect();
    let v: Vec<String> = (0..n).map(|_| "0.0".to_owned()).collect();
    format!(
        "[model]\nname = \"chain\"\ncoordinates = [{}]\nlagrangian = \"0.5*({}) - 0.5*({})\"\n{constraints}\n\
         [run]\nh = 1e-3\nt_end = 1.0\n\n[initial]\nq = [{}]\nv = [{}]\n",
        coords.join(", "),
        kinetic.join(" + "),
        springs.join(" + "),
        q.join(", "),
        v.join(", ")
    )
}

/// Whether a model's Lagrangian is regular, on the whole space and on the
/// constraint distribution, is decided for a large sparse system by the
/// sparse KKT factorization of its constrained Legendre map (the dense
/// singular values took 14 s before every run of a 3 000-body chain), and
/// agrees with the dense test on the same systems at a size both take
/// (300 bodies, above the switch, against 200, below it): a chain is
/// regular; with one massless body it is degenerate with an algebraic
/// variable; tied by a constraint to its neighbour, that body moves with it
/// and the Lagrangian is regular on the constraint distribution only.
#[test]
fn large_sparse_systems_are_tested_for_regularity_sparsely() {
    for n in [200, 300] {
        for (massless, tie, regular, algebraic) in [
            (None, false, true, false),
            (Some(7), false, false, true),
            (Some(7), true, false, false),
        ] {
            let sc = Scenario::from_toml(&chain_file(n, massless, tie)).unwrap();
            let info = describe(&sc).unwrap();
            assert_eq!(
                (info.regular_lagrangian, info.algebraic_variables),
                (regular, algebraic),
                "{n} bodies, massless {massless:?}, tied {tie}"
            );
        }
    }
}
