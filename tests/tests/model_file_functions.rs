//! The model files under `models/` (issue "Model files"): the catalogue is
//! shipped both ways, compiled and as text, so every catalogued model has a
//! file twin `models/<name>.toml` whose expressions evaluate like the
//! compiled model (Lagrangian, constraint one-forms, boundary pieces,
//! Hamiltonian) and whose `[run]`, `[initial]` and `[parameters]` are the
//! model's defaults. Every file — twins and the file-only systems (sleigh,
//! double pendulum) — reads, starts admissible and on its constraints, and
//! its Hamiltonian is the Legendre transform of its Lagrangian; the double
//! pendulum's default run hits its floor.

use diracvi_discrete_dirac::Direction;
use diracvi_expr::{CompiledModel, ModelFile};
use diracvi_geometry::dynamic::{energy_dyn, energy_scale_dyn, momentum_dyn};
use diracvi_models::{
    DynModelVisitor, DynRunSetup, FileModel, ModelVisitor, NamedDynSystem, NamedSystem, RunSetup,
    Scenario, catalogue,
};
use diracvi_tests::run_model_dyn;
use nalgebra::{DVector, SVector};
use std::path::PathBuf;
use std::sync::Arc;

/// The folder of the model files, relative to this crate.
const MODELS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/");

/// Random points per model.
const POINTS: usize = 50;

/// File twin against compiled model: the same formula, evaluated in a
/// different order (tape vs Rust code), differs by round-off only.
const TWIN_TOLERANCE: f64 = 1e-13;

/// Run settings and initial data written as decimal literals must round to
/// the compiled model's values.
const DATA_TOLERANCE: f64 = 1e-15;

/// `H(q, ∂L/∂v)` against `E(q, v)` (∂L/∂v by dual numbers).
const LEGENDRE_TOLERANCE: f64 = 1e-12;

/// `|A(q0) v0|` of the files' initial data.
const CONSTRAINT_TOLERANCE: f64 = 1e-12;

/// The file-only systems the issue asks for (no compiled twin).
const FILE_ONLY: [&str; 2] = ["sleigh", "double-pendulum"];

fn model_path(name: &str) -> PathBuf {
    PathBuf::from(format!("{MODELS_DIR}{name}.toml"))
}

/// Every `*.toml` under `models/`, sorted.
fn model_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(MODELS_DIR)
        .unwrap_or_else(|e| panic!("cannot list {MODELS_DIR}: {e}"))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

/// Read and compile `models/<name>.toml`; a catalogued model without a file
/// twin fails here, by name.
fn twin(name: &str) -> (ModelFile, CompiledModel) {
    let path = model_path(name);
    assert!(
        path.is_file(),
        "catalogued model '{name}' has no model-file twin {}: the catalogue is shipped \
         both ways, so write models/{name}.toml with the model's default parameters, \
         run and initial data",
        path.display()
    );
    let file = ModelFile::from_path(&path).unwrap_or_else(|e| panic!("{e}"));
    let compiled = file.compile(&[]).unwrap_or_else(|e| panic!("{e}"));
    (file, compiled)
}

/// SplitMix64: a small seeded generator, so the points are reproducible.
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * u
    }

    /// `center` plus a uniform perturbation of half-width `radius` per entry.
    fn near<const N: usize>(&mut self, center: &SVector<f64, N>, radius: f64) -> SVector<f64, N> {
        center.map(|c| c + self.uniform(-radius, radius))
    }

    /// [`near`](Self::near) at run-time size.
    fn near_dyn(&mut self, center: &DVector<f64>, radius: f64) -> DVector<f64> {
        center.map(|c| c + self.uniform(-radius, radius))
    }
}

/// Relative deviation, floored at magnitude 1 (an absolute deviation for
/// values below 1, e.g. the zeros of a constraint matrix).
fn deviation(a: f64, b: f64) -> f64 {
    let d = (a - b).abs() / a.abs().max(b.abs()).max(1.0);
    if d.is_nan() { f64::INFINITY } else { d }
}

/// Strict relative deviation (`0` when both are `0`).
fn relative(a: f64, b: f64) -> f64 {
    let scale = a.abs().max(b.abs());
    if scale == 0.0 {
        0.0
    } else {
        (a - b).abs() / scale
    }
}

/// The largest deviations of one twin from its compiled model.
#[derive(Debug, Default, Clone, Copy)]
struct Worst {
    lagrangian: f64,
    momentum: f64,
    constraint: f64,
    boundary: f64,
    hamiltonian: f64,
}

/// Compare a compiled model file against the catalogued model the scenario
/// builds, at random `(q, v, p)` near the default initial data.
struct Twin<'a> {
    file: &'a CompiledModel,
    seed: u64,
}

impl ModelVisitor for Twin<'_> {
    type Output = Worst;

    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Worst {
        let file = self.file;
        let name = model.name().to_string();
        assert_eq!(file.name(), name, "model.name of the twin");
        assert_eq!(
            file.coordinates(),
            &model.coordinates()[..],
            "{name}: coordinate names and order"
        );
        assert_eq!(file.n(), N, "{name}: number of coordinates");
        assert_eq!(file.m(), M, "{name}: number of constraint rows");
        assert_eq!(
            file.boundary_count(),
            model.boundary_count(),
            "{name}: number of boundary pieces"
        );
        let as_system = FileModel::new(Arc::new(file.clone()), Default::default());
        let dvec = |x: &SVector<f64, N>| DVector::from_column_slice(x.as_slice());

        let mut rng = SplitMix(self.seed);
        let mut worst = Worst::default();
        let check = |what: &str, k: usize, file_value: f64, model_value: f64| -> f64 {
            let d = deviation(file_value, model_value);
            assert!(
                d <= TWIN_TOLERANCE,
                "{name}: {what} at point {k}: file {file_value:e} vs compiled {model_value:e} \
                 (deviation {d:e} > {TWIN_TOLERANCE:e})"
            );
            d
        };
        for k in 0..POINTS {
            let q = rng.near(&setup.q0, 0.5);
            let v = rng.near(&setup.v0, 1.0);
            let (qs, vs) = (q.as_slice(), v.as_slice());

            let l = check("L", k, file.lagrangian(qs, vs), model.lagrangian(&q, &v));
            worst.lagrangian = worst.lagrangian.max(l);

            let p_model = model.momentum(&q, &v);
            let p_file = momentum_dyn(&as_system, &dvec(&q), &dvec(&v));
            for i in 0..N {
                let d = check(&format!("∂L/∂v_{i}"), k, p_file[i], p_model[i]);
                worst.momentum = worst.momentum.max(d);
            }

            let a = model.constraint_forms(&q);
            for row in 0..M {
                for col in 0..N {
                    let what = format!("A[{row}][{col}]");
                    let d = check(&what, k, file.constraint(row, col, qs), a[(row, col)]);
                    worst.constraint = worst.constraint.max(d);
                }
            }

            for j in 0..model.boundary_count() {
                let d = check(
                    &format!("g_{j}"),
                    k,
                    file.boundary(j, qs),
                    model.boundary(j, &q),
                );
                worst.boundary = worst.boundary.max(d);
            }

            let p = rng.near(&p_model, 1.0);
            match (
                file.hamiltonian(qs, p.as_slice()),
                model.hamiltonian(&q, &p),
            ) {
                (Some(hf), Some(hm)) => {
                    worst.hamiltonian = worst.hamiltonian.max(check("H", k, hf, hm));
                }
                (None, None) => {}
                (f, m) => panic!(
                    "{name}: the file {} a Hamiltonian, the compiled model {}",
                    if f.is_some() { "has" } else { "has no" },
                    if m.is_some() { "has one" } else { "has none" },
                ),
            }
        }
        worst
    }
}

#[test]
fn every_catalogued_model_has_a_file_twin() {
    let missing: Vec<String> = catalogue()
        .iter()
        .filter(|info| !model_path(info.name).is_file())
        .map(|info| format!("models/{}.toml", info.name))
        .collect();
    assert!(
        missing.is_empty(),
        "catalogued models without a model-file twin (the catalogue is shipped both ways): {}",
        missing.join(", ")
    );
}

#[test]
fn file_twins_evaluate_like_the_compiled_models() {
    let mut overall = Worst::default();
    for (index, info) in catalogue().iter().enumerate() {
        let (_, compiled) = twin(info.name);
        let worst = Scenario::defaults(info.name)
            .unwrap()
            .visit(Twin {
                file: &compiled,
                seed: 0x5EED_0000 + index as u64,
            })
            .unwrap_or_else(|e| panic!("{}: {e}", info.name));
        eprintln!("{}: {worst:?}", info.name);
        overall.lagrangian = overall.lagrangian.max(worst.lagrangian);
        overall.momentum = overall.momentum.max(worst.momentum);
        overall.constraint = overall.constraint.max(worst.constraint);
        overall.boundary = overall.boundary.max(worst.boundary);
        overall.hamiltonian = overall.hamiltonian.max(worst.hamiltonian);
    }
    eprintln!("all twins: {overall:?}");
}

#[test]
fn file_twins_carry_the_default_run_initial_data_and_parameters() {
    for info in catalogue() {
        let name = info.name;
        let (file, compiled) = twin(name);
        let defaults = Scenario::defaults(name).unwrap();
        assert!(!file.description.is_empty(), "{name}: description");

        let run = &file.run;
        let h = run.h.unwrap_or_else(|| panic!("{name}: run.h missing"));
        let t_end = run
            .t_end
            .unwrap_or_else(|| panic!("{name}: run.t_end missing"));
        assert!(
            relative(h, defaults.h) <= DATA_TOLERANCE,
            "{name}: run.h = {h:e}, default {:e}",
            defaults.h
        );
        assert!(
            relative(t_end, defaults.t_end) <= DATA_TOLERANCE,
            "{name}: run.t_end = {t_end:e}, default {:e}",
            defaults.t_end
        );
        assert_eq!(
            run.discretization.as_deref(),
            Some(defaults.discretization.to_string().as_str()),
            "{name}: run.discretization"
        );
        let constraint = defaults.constraint.to_string();
        assert!(
            diracvi_expr::model_file::CONSTRAINT_DISCRETIZATIONS.contains(&constraint.as_str()),
            "{name}: the default constraint '{constraint}' cannot be written in a model file"
        );
        assert_eq!(
            run.constraint.as_deref(),
            Some(constraint.as_str()),
            "{name}: run.constraint"
        );

        assert!(file.initial.is_some(), "{name}: [initial] missing");
        let initial = file
            .initial_values(&compiled, None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for (what, got, expected) in [
            ("q", &initial.q, &defaults.initial.q),
            ("v", &initial.v, &defaults.initial.v),
        ] {
            assert_eq!(got.len(), expected.len(), "{name}: initial.{what} length");
            for (i, (g, e)) in got.iter().zip(expected).enumerate() {
                assert!(
                    relative(*g, *e) <= DATA_TOLERANCE,
                    "{name}: initial.{what}[{i}] = {g:e}, default {e:e} (relative {:e})",
                    relative(*g, *e)
                );
            }
        }

        // Numeric parameters by name, both ways; a switch (a boolean such as
        // disk-wall's `rear_contact`) has no model-file form: the twin
        // writes out its default (the structure checks above compare the
        // resulting boundary pieces).
        for (key, value) in &defaults.parameters {
            let numeric = value
                .as_float()
                .or_else(|| value.as_integer().map(|i| i as f64));
            let expected = match numeric {
                Some(x) => x,
                None => {
                    assert!(
                        !file.parameters.iter().any(|(n, _)| n == key),
                        "{name}: non-numeric parameter '{key}' in the file"
                    );
                    continue;
                }
            };
            let got = file
                .parameters
                .iter()
                .find(|(n, _)| n == key)
                .unwrap_or_else(|| panic!("{name}: parameter '{key}' missing from the file"))
                .1;
            assert!(
                relative(got, expected) <= DATA_TOLERANCE,
                "{name}: parameters.{key} = {got:e}, default {expected:e}"
            );
        }
        for (key, _) in &file.parameters {
            assert!(
                defaults
                    .parameters
                    .get(key)
                    .is_some_and(|v| v.is_float() || v.is_integer()),
                "{name}: file parameter '{key}' is not a numeric parameter of the \
                 catalogued model (derived values belong in the expressions)"
            );
        }
    }
}

/// The initial data of a model file's scenario: every `g_j(q0)` and every
/// `(A(q0) v0)_a`.
struct InitialData;

impl DynModelVisitor for InitialData {
    type Output = (Vec<f64>, Vec<f64>);

    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Self::Output {
        let q0 = setup.q0.as_slice();
        let g = (0..model.boundary_count())
            .map(|j| model.boundary(j, q0))
            .collect();
        let (n, m) = (model.coordinate_count(), model.constraint_count());
        let mut a = vec![0.0; m * n];
        model.constraint_forms(q0, &mut a);
        let av = a
            .chunks(n.max(1))
            .take(m)
            .map(|row| row.iter().zip(setup.v0.iter()).map(|(x, v)| x * v).sum())
            .collect();
        (g, av)
    }
}

#[test]
fn every_model_file_reads_and_starts_admissible_on_its_constraints() {
    let files = model_files();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for expected in catalogue().iter().map(|i| i.name).chain(FILE_ONLY) {
        assert!(
            names.iter().any(|n| n == expected),
            "models/{expected}.toml missing"
        );
    }
    for (path, stem) in files.iter().zip(&names) {
        let file = ModelFile::from_path(path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&file.name, stem, "model.name of {}", path.display());
        assert!(file.initial.is_some(), "{stem}: [initial] missing");
        let (g, av) = Scenario::from_model_file(path)
            .unwrap_or_else(|e| panic!("{stem}: {e}"))
            .visit_dyn(InitialData)
            .unwrap_or_else(|e| panic!("{stem}: {e}"));
        for (j, g) in g.iter().enumerate() {
            assert!(*g >= 0.0, "{stem}: g_{j}(q0) = {g:e} < 0");
        }
        for (a, r) in av.iter().enumerate() {
            assert!(
                r.abs() <= CONSTRAINT_TOLERANCE,
                "{stem}: (A(q0) v0)_{a} = {r:e}"
            );
        }
        eprintln!("{stem}: g(q0) = {g:?}, A(q0) v0 = {av:?}");
    }
}

/// The worst relative deviation of `H(q, ∂L/∂v)` from
/// `E(q, v) = ⟨∂L/∂v, v⟩ − L` at random points near the initial data
/// (`None`: the model has no Hamiltonian). Relative to the energy scale
/// `|⟨∂L/∂v, v⟩| + |L|`, which stays meaningful where `E` is near zero.
struct Legendre {
    seed: u64,
}

impl DynModelVisitor for Legendre {
    type Output = Option<f64>;

    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Option<f64> {
        let mut rng = SplitMix(self.seed);
        let mut worst: Option<f64> = None;
        for k in 0..POINTS {
            let q = rng.near_dyn(&setup.q0, 1.0);
            let v = rng.near_dyn(&setup.v0, 2.0);
            let p = momentum_dyn(model, &q, &v);
            let h = model.hamiltonian(q.as_slice(), p.as_slice())?;
            let e = energy_dyn(model, &q, &v);
            let scale = e.abs().max(energy_scale_dyn(model, &q, &v));
            let d = (h - e).abs() / scale;
            assert!(
                d <= LEGENDRE_TOLERANCE,
                "{}: at point {k} (q = {:?}, v = {:?}) H(q, ∂L/∂v) = {h:e} but \
                 E(q, v) = {e:e} (relative {d:e})",
                model.name(),
                q.as_slice(),
                v.as_slice()
            );
            worst = Some(worst.unwrap_or(0.0).max(d));
        }
        worst
    }
}

#[test]
fn hamiltonians_are_legendre_transforms_of_the_lagrangians() {
    for (index, path) in model_files().iter().enumerate() {
        let scenario = Scenario::from_model_file(path).unwrap_or_else(|e| panic!("{e}"));
        let name = scenario.model.clone();
        let worst = scenario
            .visit_dyn(Legendre {
                seed: 0x1E6E_0000 + index as u64,
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: max |H(q, ∂L/∂v) − E| / scale = {worst:?}");
        if FILE_ONLY.contains(&name.as_str()) {
            assert!(worst.is_some(), "{name}: the file gives no Hamiltonian");
        }
    }
}

/// What the default run of a model file produced.
#[derive(Debug)]
struct Outcome {
    impacts: usize,
    min_g: f64,
    energy_deviation: f64,
}

struct DefaultRun;

impl DynModelVisitor for DefaultRun {
    type Output = Outcome;

    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Outcome {
        let steps = (setup.t_end / setup.h).round() as usize;
        let traj = run_model_dyn(model, setup, setup.h, steps, 1, Direction::Forward)
            .unwrap_or_else(|e| panic!("{}: {e}", model.name()));
        let min_g = traj
            .records
            .iter()
            .flat_map(|r| (0..model.boundary_count()).map(|j| model.boundary(j, r.q.as_slice())))
            .fold(f64::INFINITY, f64::min);
        let s = &traj.summary;
        Outcome {
            impacts: traj.events.len(),
            min_g,
            energy_deviation: s.max_abs_energy_deviation / s.initial_energy.abs(),
        }
    }
}

/// Released from rest with both rods raised, the double pendulum swings
/// through the bottom, where its lower bob would pass below the floor: it
/// must hit it several times in 10 s (a smooth-ODE simulation with elastic
/// reflections gives 10) and stay above it.
#[test]
fn double_pendulum_hits_its_floor() {
    let out = Scenario::from_model_file(model_path("double-pendulum"))
        .unwrap()
        .visit_dyn(DefaultRun)
        .unwrap();
    eprintln!("double-pendulum: {out:?}");
    assert!(out.impacts >= 5, "only {} impacts", out.impacts);
    assert!(out.min_g >= -1e-10, "below the floor: g = {:e}", out.min_g);
    assert!(
        out.energy_deviation <= 1e-3,
        "relative energy deviation {:e}",
        out.energy_deviation
    );
}
