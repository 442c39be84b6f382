//! Models on the run-time-sized core: model files of any size build and
//! pass their initial checks through `Scenario::visit_dyn`, and catalogued
//! models arrive wrapped in `Fixed` with their own sizes and names.

use diracvi_models::{DynModelVisitor, DynRunSetup, ModelError, NamedDynSystem, Scenario};

fn path(name: &str) -> String {
    format!("{}/../../models/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

/// `(n, m, boundary pieces, coordinate names, piece 0's name)`.
struct Shape;
impl DynModelVisitor for Shape {
    type Output = (usize, usize, usize, Vec<String>, String);
    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Self::Output {
        assert_eq!(setup.q0.len(), model.coordinate_count());
        (
            model.coordinate_count(),
            model.constraint_count(),
            model.boundary_count(),
            model.coordinates(),
            model.piece_name(0),
        )
    }
}

#[test]
fn model_files_of_any_size() {
    for (name, n, m, pieces) in [
        ("masses-in-a-box", 12, 0, 13),
        ("three-sleighs", 9, 3, 3),
        ("chain-50", 50, 0, 1),
        ("sleigh", 3, 1, 1),
        ("lc", 4, 2, 0),
    ] {
        let sc = Scenario::from_model_file(path(name)).unwrap();
        let (gn, gm, gp, coords, _) = sc.visit_dyn(Shape).unwrap();
        assert_eq!((gn, gm, gp), (n, m, pieces), "{name}");
        assert_eq!(coords.len(), n, "{name}");
    }
    let sc = Scenario::from_model_file(path("masses-in-a-box")).unwrap();
    assert_eq!(
        sc.visit_dyn(Shape).unwrap().4,
        "model.boundaries[0]: x1 >= 0"
    );
}

#[test]
fn catalogued_models_through_fixed() {
    let sc = Scenario::defaults("disk-table").unwrap();
    let (n, m, pieces, coords, _) = sc.visit_dyn(Shape).unwrap();
    assert_eq!((n, m, pieces), (4, 2, 2));
    assert_eq!(coords, ["x", "y", "theta", "phi"]);
}

#[test]
fn bad_initial_data_of_a_large_file_is_named() {
    let mut sc = Scenario::from_model_file(path("three-sleighs")).unwrap();
    // sideways velocity of the first sleigh's knife edge
    sc.set("v", "[1, 1, 0, 0, 0, 0, 0, 0, 0]").unwrap();
    match sc.visit_dyn(Shape) {
        Err(ModelError::InitialViolatesConstraint { index, .. }) => assert_eq!(index, 0),
        other => panic!("{other:?}"),
    }
    let mut sc = Scenario::from_model_file(path("masses-in-a-box")).unwrap();
    sc.set(
        "q",
        "[2, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5]",
    )
    .unwrap();
    match sc.visit_dyn(Shape) {
        Err(ModelError::InitialInadmissible { piece, name, .. }) => {
            assert_eq!(piece, 2);
            assert_eq!(name, "model.boundaries[2]: x2 - x1 >= 0");
        }
        other => panic!("{other:?}"),
    }
    // the compile-time-sized visit refuses a file scenario with a message
    struct Nothing;
    impl diracvi_models::ModelVisitor for Nothing {
        type Output = ();
        fn visit<const N: usize, const M: usize, Mo: diracvi_models::NamedSystem<N, M>>(
            self,
            _model: &Mo,
            _setup: &diracvi_models::RunSetup<N>,
        ) {
        }
    }
    let err = sc.visit(Nothing).unwrap_err();
    assert!(err.to_string().contains("visit_dyn"), "{err}");
}

/// What a reduced visit sees: the reduction's kind, the reduced system's
/// sizes and names, its momenta, and the reduced Lagrangian at a shape
/// state.
struct Reduce {
    s: Vec<f64>,
    sd: Vec<f64>,
}
type ReducedView = (
    diracvi_geometry::ReductionKind,
    usize,
    usize,
    Vec<String>,
    Vec<f64>,
    f64,
);
impl diracvi_models::DynReducedModelVisitor for Reduce {
    type Output = Result<ReducedView, diracvi_geometry::SymmetryError>;
    fn visit<Mo: NamedDynSystem>(
        self,
        model: &Mo,
        symmetry: diracvi_geometry::dynamic::DynCyclicSymmetry,
        setup: &DynRunSetup,
    ) -> Self::Output {
        use diracvi_geometry::dynamic::{DynReduced, DynSystem};
        let reduced = DynReduced::new(
            model.clone(),
            symmetry,
            setup.q0.as_slice(),
            setup.v0.as_slice(),
        )?;
        Ok((
            reduced.kind(),
            reduced.coordinate_count(),
            reduced.constraint_count(),
            reduced.coordinates(),
            reduced.momentum(),
            reduced.lagrangian(&self.s, &self.sd),
        ))
    }
}

/// A model file's `[symmetry]` reaches the reduced visit: the four carts
/// with pendulums (n = 8) reduce by Routh to their four angles with the
/// momenta `μ_i = (M + m) ẋ_i + m ℓ cos θ_i θ̇_i` and the Routhian
/// `Σ_i [½ m ℓ² θ̇_i² + m g ℓ cos θ_i − (μ_i − m ℓ cos θ_i θ̇_i)²/(2(M + m))] −
/// ½ k Σ (θ_{i+1} − θ_i)²` (to 1e-13); the pendulum's twin reduces by
/// Chaplygin to `½ m ℓ² (1 + f² sin²θ) θ̇² − m g ℓ cos θ` (docs/theory.md §7).
#[test]
fn model_files_reduce_by_their_declared_symmetry() {
    let (s, sd) = (vec![0.2, -0.1, 0.4, 0.0], vec![0.5, -1.0, 0.3, 2.0]);
    let sc = Scenario::from_model_file(path("carts-pendulums")).unwrap();
    assert!(sc.declares_file_symmetry());
    let (kind, nr, mr, names, mu, l) = sc
        .visit_dyn_reduced(Reduce {
            s: s.clone(),
            sd: sd.clone(),
        })
        .unwrap()
        .unwrap();
    assert_eq!(kind, diracvi_geometry::ReductionKind::Routh);
    assert_eq!((nr, mr), (4, 0));
    assert_eq!(names, ["th1", "th2", "th3", "th4"]);
    let (big_m, m, l_, g, k) = (2.0, 0.5, 0.4, 9.8, 1.5);
    let (q0, v0) = (
        [0.3, -0.2, 0.1, 0.0],
        [0.5, 1.5, -0.3, -2.0, 0.2, 1.0, 0.0, -1.2],
    );
    let mut routhian = 0.0;
    for i in 0..4 {
        let expected = (big_m + m) * v0[2 * i] + m * l_ * f64::cos(q0[i]) * v0[2 * i + 1];
        assert!((mu[i] - expected).abs() < 1e-14, "μ_{i}");
        let b = m * l_ * s[i].cos() * sd[i];
        routhian += 0.5 * m * l_ * l_ * sd[i] * sd[i] + m * g * l_ * s[i].cos()
            - (mu[i] - b).powi(2) / (2.0 * (big_m + m));
    }
    for i in 0..3 {
        routhian -= 0.5 * k * (s[i + 1] - s[i]).powi(2);
    }
    assert!((l - routhian).abs() < 1e-13, "R = {l} vs {routhian}");

    let sc = Scenario::from_model_file(path("pendulum")).unwrap();
    let (kind, nr, mr, names, _, l) = sc
        .visit_dyn_reduced(Reduce {
            s: vec![2.0],
            sd: vec![0.7],
        })
        .unwrap()
        .unwrap();
    assert_eq!(kind, diracvi_geometry::ReductionKind::Chaplygin);
    assert_eq!((nr, mr, names), (1, 0, vec!["theta".to_string()]));
    let (m, l_, g) = (1.0, 2.0, 9.8);
    let f = std::f64::consts::PI + f64::cos(2.0).powi(2);
    let expected = 0.5 * m * l_ * l_ * (1.0 + f * f * f64::sin(2.0).powi(2)) * 0.49
        - m * g * l_ * f64::cos(2.0);
    assert!((l - expected).abs() < 1e-12, "L_c = {l} vs {expected}");
}

/// `[symmetry]` is checked when the file is read (names of coordinates,
/// each once, not all of them; typed errors naming the entry), a file
/// without one is refused by a reduced visit, and a coordinate that is not
/// cyclic is named by the reduction's check.
#[test]
fn symmetry_declarations_are_checked() {
    use diracvi_expr::ModelFileErrorKind as K;
    let text = std::fs::read_to_string(path("particle")).unwrap();
    let with = |cyclic: &str| text.replace("cyclic = [\"x\"]", cyclic);
    let load = |cyclic: &str| {
        Scenario::from_model(
            diracvi_expr::ModelFile::from_toml_str(&with(cyclic), "p.toml")
                .map_err(ModelError::from)?,
        )
    };
    for (cyclic, key, what) in [
        ("cyclic = [\"z\"]", "symmetry.cyclic[0]", "not a coordinate"),
        (
            "cyclic = [\"x\", \"x\"]",
            "symmetry.cyclic[1]",
            "named twice",
        ),
        (
            "cyclic = [\"x\", \"y\"]",
            "symmetry.cyclic",
            "every coordinate",
        ),
        ("cyclic = []", "symmetry.cyclic", "must not be empty"),
        (
            "cyclic = [\"x\"]\nshift = 1",
            "symmetry.shift",
            "unknown key",
        ),
        ("cyclic = \"x\"", "symmetry.cyclic", "expected an array"),
    ] {
        match load(cyclic) {
            Err(ModelError::ModelFile(e)) => {
                assert_eq!(e.key(), key, "{e}");
                assert!(e.to_string().contains(what), "{e}");
                assert!(e.to_string().starts_with("p.toml:"), "{e}");
                if key == "symmetry.cyclic[0]" {
                    assert!(matches!(e.kind(), K::NotACoordinate { name, .. } if name == "z"));
                }
            }
            other => panic!("{cyclic}: {other:?}"),
        }
    }
    // a false declaration is read, and refused by the reduction naming `y`
    let sc = load("cyclic = [\"y\"]").unwrap();
    let err = sc
        .visit_dyn_reduced(Reduce {
            s: vec![0.0],
            sd: vec![0.0],
        })
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(
            err,
            diracvi_geometry::SymmetryError::NotCyclic { coordinate: 1, .. }
        ),
        "{err}"
    );
    // no declaration, and a catalogued model, are refused by the dynamic reduced visit
    let sc = Scenario::from_model_file(path("sleigh")).unwrap();
    assert!(!sc.declares_file_symmetry());
    let err = sc
        .visit_dyn_reduced(Reduce {
            s: vec![],
            sd: vec![],
        })
        .unwrap_err();
    assert!(matches!(err, ModelError::FileNoSymmetry { .. }), "{err}");
    assert!(err.to_string().contains("[symmetry]"), "{err}");
    let err = Scenario::defaults("particle")
        .unwrap()
        .visit_dyn_reduced(Reduce {
            s: vec![],
            sd: vec![],
        })
        .unwrap_err();
    assert!(matches!(err, ModelError::NoSymmetry { .. }), "{err}");
}
