//! Models larger than any compile-time size, from model files, through the
//! runner every user path takes (`diracvi_run::execute`): the run-time-sized
//! core (docs/theory.md §11).
//!
//! * Twelve equal point masses on a line in a box (n = 12, 13 boundary
//!   pieces): an elastic collision of two equal masses exchanges their
//!   velocities, so the multiset of speeds is invariant — the sorted `|p|`
//!   at the end equals the initial one, after ≥ 80 impacts, and the energy
//!   is kept. The same with six masses.
//! * Three Chaplygin sleighs joined by springs in an arena (n = 9, m = 3):
//!   constraints to round-off, energy bounded, impacts resolved, never
//!   outside the arena.
//! * A chain of fifty masses bouncing on a wall (n = 50).

use diracvi_expr::ModelFile;
use diracvi_run::{RecordBuffer, RunPlan, Scenario, execute, step_count};

fn model_file(name: &str) -> String {
    format!("{}/../models/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

fn sorted_abs(p: &[f64]) -> Vec<f64> {
    let mut s: Vec<f64> = p.iter().map(|x| x.abs()).collect();
    s.sort_by(f64::total_cmp);
    s
}

/// `k` equal masses in a box of length `k`, spread evenly, distinct speeds
/// (the generator of `models/masses-in-a-box.toml`, at any `k`).
fn masses_in_a_box(k: usize) -> Scenario {
    let xs: Vec<String> = (1..=k).map(|i| format!("x{i}")).collect();
    let kinetic: Vec<String> = xs.iter().map(|x| format!("{x}_dot^2")).collect();
    let mut boundaries = vec![xs[0].clone(), format!("L - {}", xs[k - 1])];
    boundaries.extend((0..k - 1).map(|i| format!("{} - {}", xs[i + 1], xs[i])));
    let quote = |v: &[String]| {
        v.iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let length = k as f64;
    let q0: Vec<String> = (0..k)
        .map(|i| format!("{:?}", 0.5 + (length - 1.0) * i as f64 / (k - 1) as f64))
        .collect();
    let v0: Vec<String> = (0..k)
        .map(|i| {
            format!(
                "{:?}",
                (1.7 * i as f64 + 0.3).sin() * (1.0 + 0.05 * i as f64)
            )
        })
        .collect();
    let text = format!(
        "[model]\nname = \"masses-{k}\"\ncoordinates = [{}]\nlagrangian = \"0.5*m*({})\"\n\
         boundaries = [{}]\n[parameters]\nm = 1.0\nL = {length:?}\n\
         [run]\nh = 1e-3\nt_end = 15.0\n[initial]\nq = [{}]\nv = [{}]\n",
        quote(&xs),
        kinetic.join(" + "),
        quote(&boundaries),
        q0.join(", "),
        v0.join(", ")
    );
    Scenario::from_model(ModelFile::from_toml_str(&text, "masses.toml").unwrap()).unwrap()
}

/// `(outcome, initial p, records)` of the scenario's default run.
fn run(sc: &Scenario, plan: RunPlan) -> (diracvi_run::RunOutcome, RecordBuffer) {
    let mut records = RecordBuffer::new();
    let outcome = execute(sc, plan, &mut records).unwrap_or_else(|e| panic!("{e}"));
    (outcome, records)
}

fn speeds_are_permuted(sc: &Scenario, min_impacts: usize) -> (usize, f64, f64) {
    let steps = step_count(sc, None).unwrap();
    let (out, records) = run(sc, RunPlan::new(steps).every(steps));
    let n = out.final_q.len();
    let p0 = &records.p[..n];
    let (a, b) = (sorted_abs(p0), sorted_abs(&out.final_p));
    let speed_err = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    let energy_err = out.max_abs_energy_deviation / out.initial_energy.abs();
    assert!(
        out.impacts.len() >= min_impacts,
        "{} impacts",
        out.impacts.len()
    );
    assert!(speed_err <= 1e-9, "sorted |p| moved by {speed_err:e}");
    assert!(energy_err <= 1e-12, "energy moved by {energy_err:e}");
    // no body ever passes another or a wall
    for rec in records.q.chunks(n) {
        assert!(rec.windows(2).all(|w| w[1] - w[0] >= -1e-12), "{rec:?}");
    }
    (out.impacts.len(), speed_err, energy_err)
}

#[test]
fn twelve_masses_in_a_box_permute_their_speeds() {
    let sc = Scenario::from_model_file(model_file("masses-in-a-box")).unwrap();
    let (impacts, speed, energy) = speeds_are_permuted(&sc, 80);
    eprintln!("12 masses: {impacts} impacts, sorted |p| {speed:e}, energy {energy:e}");
    // the shipped file is the generator's k = 12 case
    let generated = masses_in_a_box(12);
    assert_eq!(generated.initial, sc.initial);
}

#[test]
fn six_masses_in_a_box_permute_their_speeds() {
    let (impacts, speed, energy) = speeds_are_permuted(&masses_in_a_box(6), 20);
    eprintln!("6 masses: {impacts} impacts, sorted |p| {speed:e}, energy {energy:e}");
}

#[test]
fn three_coupled_sleighs_keep_their_constraints_and_energy() {
    let sc = Scenario::from_model_file(model_file("three-sleighs")).unwrap();
    let steps = step_count(&sc, None).unwrap();
    let (out, records) = run(&sc, RunPlan::new(steps).every(10));
    let rel = out.max_relative_energy_deviation();
    eprintln!(
        "three sleighs: {} impacts, energy deviation {rel:e}, constraint residual {:e}",
        out.impacts.len(),
        out.max_constraint_residual
    );
    assert!(!out.impacts.is_empty(), "no impact with the arena");
    assert!(out.max_constraint_residual <= 1e-12);
    assert!(rel <= 1e-3, "energy deviation {rel:e}");
    // every recorded contact point inside the arena (R = 2)
    for rec in records.q.chunks(9) {
        for s in 0..3 {
            let r2 = rec[3 * s].powi(2) + rec[3 * s + 1].powi(2);
            assert!(r2 <= 4.0 + 1e-9, "sleigh {s} outside: r² = {r2}");
        }
    }
}

#[test]
fn a_fifty_body_chain_runs() {
    let sc = Scenario::from_model_file(model_file("chain-50")).unwrap();
    let steps = step_count(&sc, None).unwrap();
    let (out, _) = run(&sc, RunPlan::new(steps));
    let rel = out.max_relative_energy_deviation();
    eprintln!(
        "chain of 50: {} steps, {} impacts, energy deviation {rel:e}, {:.2} µs/step",
        out.steps,
        out.impacts.len(),
        out.wall_time.as_secs_f64() / out.steps as f64 * 1e6
    );
    assert_eq!(out.final_q.len(), 50);
    assert!(!out.impacts.is_empty(), "the first mass hits the wall");
    assert!(rel <= 1e-3, "energy deviation {rel:e}");
}

/// The chain's Lagrangian from the file is split into its 49 springs (the
/// kinetic energies joined to them), so its derivatives are taken term by
/// term and its steps factor with the sparse LU (docs/theory.md §11.4);
/// the run follows, to round-off, the one of the same Lagrangian written so
/// that it cannot be split (`(L)*(1 + 0*x1)`: equal values and
/// derivatives, whole-Lagrangian derivatives and the dense LU).
#[test]
fn a_chain_from_a_file_is_split_into_terms_and_follows_the_whole_lagrangian() {
    use diracvi_discrete_dirac::{Structure, StructuredLu};
    use diracvi_models::FileModel;
    use std::sync::Arc;

    let file = ModelFile::from_path(model_file("chain-50")).unwrap();
    let compiled = Arc::new(file.compile(&[]).unwrap());
    let terms = compiled.lagrangian_terms().expect("split into terms");
    assert_eq!(terms.len(), 49);
    assert_eq!(terms.max_stencil(), 2);
    let model = FileModel::new(compiled, Arc::default());
    assert_eq!(
        StructuredLu::for_system(&model).structure(),
        Structure::Sparse
    );

    let mut whole = file.clone();
    whole.lagrangian = format!("({})*(1 + 0*x1)", whole.lagrangian);
    assert!(whole.compile(&[]).unwrap().lagrangian_terms().is_none());
    let split = Scenario::from_model(file).unwrap();
    let whole = Scenario::from_model(whole).unwrap();
    let steps = step_count(&split, None).unwrap();
    let (a, _) = run(&split, RunPlan::new(steps));
    let (b, _) = run(&whole, RunPlan::new(steps));
    assert_eq!(a.impacts.len(), b.impacts.len());
    let dq = a
        .final_q
        .iter()
        .zip(&b.final_q)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    let dp = a
        .final_p
        .iter()
        .zip(&b.final_p)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "chain of 50, terms + sparse LU against whole L + dense LU: |Δq| {dq:.1e}, |Δp| {dp:.1e}; {:.1} against {:.1} µs/step",
        a.wall_time.as_secs_f64() / a.steps as f64 * 1e6,
        b.wall_time.as_secs_f64() / b.steps as f64 * 1e6
    );
    // the two differ by the rounding of sums taken in another order only
    assert!(dq <= 1e-11 && dp <= 1e-11, "|Δq| {dq:e}, |Δp| {dp:e}");
}
