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
