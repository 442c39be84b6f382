//! Behaviour of the model catalogue: defaults, Legendre transforms,
//! parameter validation, initial-data checks, admissible sets.

use diracvi_geometry::ad::{gradient_of, seed_gradient};
use diracvi_geometry::num_dual::DualSVec;
use diracvi_models::*;
use nalgebra::SVector;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::f64::consts::PI;

/// The catalogue's names: the tests cover whatever is registered, so adding
/// a model never breaks them.
fn names() -> Vec<&'static str> {
    catalogue().iter().map(|i| i.name).collect()
}

#[test]
fn catalogue_lists_every_model_once() {
    let mut names = names();
    assert!(names.len() >= 7, "the papers' seven systems: {names:?}");
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), catalogue().len(), "duplicate names");
    for info in catalogue() {
        assert!(!info.description.is_empty());
        assert_eq!(model_info(info.name).unwrap(), info);
    }
}

/// Every catalogued model is visited by `visit_catalogue`; `visit_compiled`
/// skips exactly those registered on the run-time-sized core only
/// (`bouncing-body`), which runs there (and in `visit_dyn`) all the same.
#[test]
fn compiled_visits_skip_the_run_time_only_models() {
    for name in names() {
        let sc = Scenario::defaults(name).unwrap();
        let all = sc.visit_catalogue(Shape).unwrap();
        let compiled = sc.visit_compiled(Shape).unwrap();
        assert_eq!(sc.fits_compile_time_core(), compiled.is_some(), "{name}");
        assert_eq!(
            runs_on_compile_time_core(name),
            compiled.is_some(),
            "{name}"
        );
        if let Some(c) = compiled {
            assert_eq!(c, all, "{name}");
        }
    }
    assert!(runs_on_compile_time_core("pendulum"));
    assert!(!runs_on_compile_time_core("bouncing-body"));
    assert!(!runs_on_compile_time_core("no-such-model"));
    let bouncing = Scenario::defaults("bouncing-body").unwrap();
    assert!(bouncing.visit_compiled(Shape).unwrap().is_none());
    assert_eq!(bouncing.visit_catalogue(Shape).unwrap().1, 7);
    let file = Scenario::from_model_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/pendulum.toml"
    ))
    .unwrap();
    assert!(matches!(
        file.visit_compiled(Shape),
        Err(ModelError::Scenario(_))
    ));
}

/// What the dispatch reached: name, dimensions, boundary pieces, Hamiltonian.
struct Shape;
impl ModelVisitor for Shape {
    type Output = (String, usize, usize, usize, bool);
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Self::Output {
        let p = model.momentum(&setup.q0, &setup.v0);
        (
            model.name().to_string(),
            N,
            M,
            model.boundary_count(),
            model.hamiltonian(&setup.q0, &p).is_some(),
        )
    }
}

#[test]
fn visitor_dispatch_reaches_the_right_model_and_dimensions() {
    let expected = [
        ("particle", 2, 0, 1, true),
        ("ellipse", 3, 0, 1, true),
        ("star", 3, 0, 4, true),
        ("pendulum", 2, 1, 1, true),
        ("disk-wall", 4, 2, 1, true),
        ("disk-table", 4, 2, 2, true),
        ("lc", 4, 2, 0, false),
        ("heavy-top", 4, 1, 0, false),
        ("chaplygin-sphere", 6, 3, 2, false),
        ("bouncing-body", 7, 1, 1, false),
    ];
    for e in expected {
        let got = Scenario::defaults(e.0)
            .unwrap()
            .visit_catalogue(Shape)
            .unwrap();
        assert_eq!(got, (e.0.to_string(), e.1, e.2, e.3, e.4), "model {}", e.0);
    }
}

/// Every default scenario validates (visit runs `check_initial`) and names
/// its coordinates and boundary pieces. (That the setup equals the model's
/// `run_defaults` is a unit test of the crate.)
struct DefaultsAgree;
impl ModelVisitor for DefaultsAgree {
    type Output = ();
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) {
        check_initial(model, &setup.q0, &setup.v0).unwrap();
        assert_eq!(model.coordinates().len(), N, "{}", model.name());
        assert!(!model.description().is_empty());
        for j in 0..model.boundary_count() {
            assert!(!model.piece_name(j).is_empty());
        }
    }
}

#[test]
fn every_default_constructs_and_validates() {
    for name in names() {
        Scenario::defaults(name)
            .unwrap()
            .visit_catalogue(DefaultsAgree)
            .unwrap();
    }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn defaults_are_the_papers() {
    let expect = |name: &str, q: &[f64], v: &[f64], h: f64, t: f64, d: Discretization, c| {
        let s = Scenario::defaults(name).unwrap();
        assert_eq!(s.initial.q.len(), q.len(), "{name}");
        for (a, b) in s.initial.q.iter().zip(q).chain(s.initial.v.iter().zip(v)) {
            assert!(close(*a, *b, 1e-14), "{name}: {a} vs {b}");
        }
        assert!(close(s.h, h, 1e-15) && close(s.t_end, t, 1e-15), "{name}");
        assert_eq!((s.discretization, s.constraint), (d, c), "{name}");
    };
    use ConstraintDiscretization as C;
    use Discretization as D;
    expect(
        "particle",
        &[0.0, 2.0],
        &[1.0, 0.0],
        1e-2,
        10.0,
        D::Midpoint,
        C::Midpoint,
    );
    expect(
        "ellipse",
        &[PI / 2.0, 0.0, 3.5],
        &[-3.0, 2.0, 0.0],
        1e-2,
        25.0,
        D::Midpoint,
        C::Midpoint,
    );
    expect(
        "star",
        &[PI / 2.0, 0.0, 3.5],
        &[-3.0, 2.0, 0.0],
        1e-2,
        25.0,
        D::Midpoint,
        C::Midpoint,
    );
    expect(
        "pendulum",
        &[0.75 * PI, 0.0],
        &[0.25 * PI, 0.25 * (PI + 0.5) * PI],
        1e-3,
        5.0,
        D::Forward,
        C::Retraction,
    );
    let s3 = 3f64.sqrt();
    expect(
        "disk-wall",
        &[0.0, 0.0, 0.0, PI / 3.0],
        &[1.0, s3, 2.0, 0.1],
        1e-2,
        50.0,
        D::Midpoint,
        C::Midpoint,
    );
    expect(
        "disk-table",
        &[1.0, 0.5, 0.0, 0.4],
        &[2.0 * 0.4f64.cos(), 2.0 * 0.4f64.sin(), 2.0, 0.15],
        1e-2,
        50.0,
        D::Midpoint,
        C::Midpoint,
    );
    expect(
        "lc",
        &[0.0; 4],
        &[10.0, 2.5, 10.0, 7.5],
        2.0 * PI / 40.0,
        10.0 * PI,
        D::Forward,
        C::Retraction,
    );
    // Tilted by 0.5 rad about e1, spinning at 4 rad/s about the body axis:
    // v = ½ q ⊗ (0, 0, 0, 4).
    let (s, c) = 0.25f64.sin_cos();
    expect(
        "heavy-top",
        &[c, s, 0.0, 0.0],
        &[0.0, 0.0, -2.0 * s, 2.0 * c],
        1e-2,
        20.0,
        D::Midpoint,
        C::Midpoint,
    );
    // The same tilt, turning at ω_s = (0, 1, 2): v_q = ½ (0, ω_s) ⊗ q,
    // rolling towards +x at ẋ = r ω_s,y = 1.
    expect(
        "chaplygin-sphere",
        &[0.0, 0.0, c, s, 0.0, 0.0],
        &[1.0, 0.0, 0.0, 0.0, 0.5 * c + s, c - 0.5 * s],
        1e-2,
        20.0,
        D::Midpoint,
        C::Midpoint,
    );
}

/// The bouncing body's defaults are the data of
/// `models/bouncing-body.toml` (its printed initial velocity,
/// `½ q ⊗ (0, ω)` with `ω = (1, 0.5, 3)`); `shape = "box"` takes the box's
/// step; the tilt must keep gravity pressing on the plane, the rounding fit
/// the box, and an unknown shape is refused by name.
#[test]
fn bouncing_body_defaults_shapes_and_parameters() {
    let (s, c) = 0.3f64.sin_cos();
    let q = [0.0, 0.0, 0.5, c, 0.6 * s, 0.8 * s, 0.0];
    let v = [
        0.3,
        0.2,
        0.0,
        -0.14776010333066977,
        0.8322924925564105,
        -0.027134063713804057,
        1.3591246820230742,
    ];
    let sc = Scenario::defaults("bouncing-body").unwrap();
    for (a, b) in sc
        .initial
        .q
        .iter()
        .zip(&q)
        .chain(sc.initial.v.iter().zip(&v))
    {
        assert!(close(*a, *b, 1e-15), "{a} vs {b}");
    }
    assert!(close(sc.h, 5e-3, 1e-15) && close(sc.t_end, 10.0, 1e-15));
    let mut boxed = sc.clone();
    boxed.set("shape", "box").unwrap();
    assert!(close(boxed.h, 2e-3, 1e-15));
    boxed.visit_catalogue(Shape).unwrap();
    for (key, value) in [
        ("beta", "1.6"),
        ("beta", "-1.5708"),
        ("eps", "-0.01"),
        ("eps", "nan"),
    ] {
        expect_invalid("bouncing-body", key, value);
    }
    // Rounding wider than the smallest half side c = 0.1: the box only.
    let mut wide = boxed.clone();
    assert!(wide.set("eps", "0.2").is_err());
    let mut e = sc.clone();
    e.set("eps", "0.2").unwrap();
    let err = e.set("shape", "sphere").unwrap_err().to_string();
    assert!(err.contains("sphere") && err.contains("shape"), "{err}");
}

/// The Chaplygin sphere's parameters: principal moments obeying the
/// triangle inequalities, walls farther than the radius; its two wall
/// pieces bound the centre to `|x| ≤ wall − r`; the rolling velocities
/// follow the radius.
#[test]
fn chaplygin_sphere_parameters_and_walls() {
    for (key, value) in [
        ("i3", "0.75"),
        ("i1", "0.95"),
        ("wall", "1"),
        ("wall", "0.5"),
    ] {
        expect_invalid("chaplygin-sphere", key, value);
    }
    let mut s = Scenario::defaults("chaplygin-sphere").unwrap();
    // I₃ = I₁ + I₂: a flat body, allowed.
    s.set("i3", "0.7").unwrap();
    let ball = ChaplyginSphere::new(ChaplyginSphereParams::default()).unwrap();
    let at = |x: f64| SVector::from([x, 5.0, 1.0, 0.0, 0.0, 0.0]);
    assert!(close(ball.boundary(0, &at(2.0)), 0.0, 1e-15));
    assert!(close(ball.boundary(1, &at(-2.0)), 0.0, 1e-15));
    assert!(close(ball.boundary(0, &at(-1.5)), 3.5, 1e-15));
    let (j, g) = inadmissible("chaplygin-sphere", "-2.5, 0, 1, 0, 0, 0");
    assert_eq!(j, 1);
    assert!(close(g, -0.5, 1e-15));
    s.set("r", "0.5").unwrap();
    assert!(close(s.initial.v[0], 0.5, 1e-15));
    s.visit_catalogue(Shape).unwrap();
}

/// The heavy top's optional cone: a wall of one piece, the axis height
/// above `u`, refused outside `(−1, 1)` and at an initial tilt below it.
#[test]
fn heavy_top_cone_is_one_wall_on_the_axis_height() {
    let mut s = Scenario::defaults("heavy-top").unwrap();
    for bad in ["1", "-1", "1.5"] {
        expect_invalid("heavy-top", "cone", bad);
    }
    s.set("cone", "0.7").unwrap();
    let (_, _, _, pieces, _) = s.visit_catalogue(Shape).unwrap();
    assert_eq!(pieces, 1);
    let top = HeavyTop::free([1.0, 1.0, 0.5]);
    let q = SVector::from([0.25f64.cos(), 0.25f64.sin(), 0.0, 0.0]);
    // Axis height cos 0.5 = 0.8776.
    let walled = HeavyTop::new(HeavyTopParams {
        cone: Some(0.7),
        ..top.params.clone()
    });
    assert!(close(walled.boundary(0, &q), 0.5f64.cos() - 0.7, 1e-15));
    assert_eq!(top.boundary_count(), 0);
    // A tilt of 1 rad puts the axis at cos 1 = 0.54 < 0.7: refused.
    s.set("q", "0.8775825618903728,0.479425538604203,0,0")
        .unwrap();
    assert!(matches!(
        s.visit_catalogue(Shape),
        Err(ModelError::InitialInadmissible { piece: 0, .. })
    ));
}

#[test]
fn default_parameters_are_the_papers() {
    let e = Ellipse::new(EllipseParams::default()).unwrap();
    assert!(close(e.inertia(), 1.25 / 4.0, 1e-15));
    let s = Star::new(StarParams::default()).unwrap();
    assert!(close(s.inertia(), 1.0 / 3.0, 1e-15));
    let i = Ellipse::new(EllipseParams {
        inertia: Some(0.7),
        ..Default::default()
    })
    .unwrap();
    assert!(close(i.inertia(), 0.7, 0.0));
    let lc = Lc::new(LcParams::default()).unwrap();
    assert!(close(lc.omega(), 1.0, 1e-15));
    let p = PendulumParams::default();
    assert!(close(p.l, 2.0, 0.0) && close(p.r, 1.5, 0.0) && close(p.f0, PI, 0.0));
    let w = DiskWallParams::default();
    assert!(close(w.i, 0.5, 0.0) && close(w.j, 0.25, 0.0) && close(w.wall, 10.0, 0.0));
    let t = DiskTableParams::default();
    assert!(close(t.a, 5.0, 0.0) && close(t.r, 1.0, 0.0));
}

/// On random states: `H(q, ∂L/∂v) = E(q, v)` and `∂H/∂p(q, ∂L/∂v) = v`;
/// returns `None` for a model without Hamiltonian.
struct Legendre(u64);
impl ModelVisitor for Legendre {
    type Output = Option<f64>;
    fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
        self,
        model: &Mo,
        setup: &RunSetup<N>,
    ) -> Option<f64> {
        let mut rng = SmallRng::seed_from_u64(self.0);
        let mut worst: f64 = 0.0;
        for _ in 0..200 {
            let q = setup.q0 + SVector::from_fn(|_, _| rng.random_range(-0.5..0.5));
            let v = SVector::<f64, N>::from_fn(|_, _| rng.random_range(-3.0..3.0));
            let p = model.momentum(&q, &v);
            let e = model.energy(&q, &v);
            let h = model.hamiltonian(&q, &p)?;
            let rel = (h - e).abs() / e.abs().max(1.0);
            assert!(
                rel <= 1e-12,
                "{}: H = {h}, E = {e} at q = {q:?}, v = {v:?}",
                model.name()
            );
            worst = worst.max(rel);
            let qd: SVector<DualSVec<f64, N>, N> = q.map(DualSVec::from_re);
            let dh = gradient_of(model.hamiltonian(&qd, &seed_gradient(&p)).unwrap());
            let err = (dh - v).amax() / v.amax().max(1.0);
            assert!(
                err <= 1e-12,
                "{}: dH/dp = {dh:?} but v = {v:?}",
                model.name()
            );
        }
        Some(worst)
    }
}

#[test]
fn hamiltonian_is_the_legendre_transform_of_every_regular_lagrangian() {
    for name in names() {
        let r = Scenario::defaults(name)
            .unwrap()
            .visit_catalogue(Legendre(7))
            .unwrap();
        // The lc circuit, the heavy top, the Chaplygin sphere and the
        // bouncing body (degenerate along the quaternion) have no Hamiltonian.
        assert_eq!(
            r.is_none(),
            ["lc", "heavy-top", "chaplygin-sphere", "bouncing-body"].contains(&name),
            "{name}"
        );
    }
}

#[test]
fn lc_is_degenerate_without_hamiltonian() {
    let lc = Lc::new(LcParams::default()).unwrap();
    let q = SVector::from([0.1, 0.2, 0.3, 0.4]);
    let p = SVector::from([1.0, 0.0, 0.0, 0.0]);
    assert!(lc.hamiltonian(&q, &p).is_none());
    let setup = lc.run_defaults();
    // Only p_0 = (ℓ·10, 0, 0, 0) enters the scheme.
    let p0 = lc.momentum(&setup.q0, &setup.v0);
    assert!((p0 - SVector::from([7.5, 0.0, 0.0, 0.0])).amax() < 1e-15);
    // The consistent currents satisfy Kirchhoff's law and equal voltages.
    let a = lc.constraint_forms(&setup.q0);
    assert!((a * setup.v0).amax() < 1e-15);
    assert!(close(setup.v0[1] / 1.0, setup.v0[3] / 3.0, 1e-15));
}

#[test]
fn printed_lc_currents_violate_kirchhoff() {
    let lc = Lc::new(LcParams::default()).unwrap();
    let err = check_initial(
        &lc,
        &SVector::zeros(),
        &SVector::from([10.0, 0.0, 10.0, 0.0]),
    )
    .unwrap_err();
    match err {
        ModelError::InitialViolatesConstraint {
            index, residual, ..
        } => {
            assert_eq!(index, 1);
            assert!(close(residual, 10.0, 1e-15));
        }
        e => panic!("wrong error {e:?}"),
    }
}

/// Parameters that must be strictly positive, per model.
const POSITIVE: [(&str, &[&str]); 10] = [
    ("particle", &["m"]),
    ("ellipse", &["m", "a", "b", "inertia"]),
    ("star", &["m", "l", "inertia"]),
    ("pendulum", &["m", "l", "r"]),
    ("disk-wall", &["m", "i", "j", "r"]),
    ("disk-table", &["m", "i", "j", "r", "a"]),
    ("lc", &["l", "c1", "c2", "c3"]),
    ("heavy-top", &["i1", "i2", "i3", "m"]),
    ("chaplygin-sphere", &["r", "m", "i1", "i2", "i3"]),
    ("bouncing-body", &["m", "a", "b", "c"]),
];

fn expect_invalid(name: &str, key: &str, value: &str) {
    let mut s = Scenario::defaults(name).unwrap();
    let before = s.clone();
    match s.set(key, value) {
        Err(ModelError::InvalidParameter {
            model, parameter, ..
        }) => {
            assert_eq!((model, parameter), (name, key), "{name}.{key} = {value}");
        }
        other => panic!("{name}.{key} = {value}: expected InvalidParameter, got {other:?}"),
    }
    assert_eq!(s, before, "a failed set must leave the scenario unchanged");
}

#[test]
fn non_positive_parameters_are_rejected_by_name() {
    for (name, keys) in POSITIVE {
        for key in keys {
            for value in ["0", "-1", "-0.0"] {
                expect_invalid(name, key, value);
            }
        }
    }
}

#[test]
fn negative_gravity_and_non_finite_parameters_are_rejected() {
    for name in [
        "particle",
        "ellipse",
        "star",
        "pendulum",
        "heavy-top",
        "bouncing-body",
    ] {
        expect_invalid(name, "g", "-9.8");
        let mut s = Scenario::defaults(name).unwrap();
        s.set("g", "0").unwrap();
    }
    for name in names() {
        for info in parameters(name).unwrap() {
            if !matches!(
                info.kind,
                ParameterKind::Float | ParameterKind::OptionalFloat
            ) {
                continue;
            }
            for value in ["nan", "inf", "-inf"] {
                expect_invalid(name, info.name, value);
            }
        }
    }
}

#[test]
fn invalid_parameters_are_rejected_by_direct_construction() {
    let err = Particle::new(ParticleParams {
        m: -1.0,
        ..Default::default()
    })
    .unwrap_err();
    assert!(matches!(
        err,
        ModelError::InvalidParameter { parameter: "m", value, .. } if value < 0.0
    ));
    let err = DiskTable::new(DiskTableParams {
        a: 0.5,
        ..Default::default()
    })
    .unwrap_err();
    assert!(matches!(
        err,
        ModelError::InvalidParameter { parameter: "a", .. }
    ));
    assert!(err.to_string().contains("exceed"), "{err}");
    let err = Lc::new(LcParams {
        c2: f64::NAN,
        ..Default::default()
    })
    .unwrap_err();
    assert!(matches!(
        err,
        ModelError::InvalidParameter {
            parameter: "c2",
            ..
        }
    ));
    let err = Pendulum::new(PendulumParams {
        f1: f64::INFINITY,
        ..Default::default()
    })
    .unwrap_err();
    assert!(matches!(
        err,
        ModelError::InvalidParameter {
            parameter: "f1",
            ..
        }
    ));
    let err = Star::new(StarParams {
        inertia: Some(0.0),
        ..Default::default()
    })
    .unwrap_err();
    assert!(matches!(
        err,
        ModelError::InvalidParameter {
            parameter: "inertia",
            ..
        }
    ));
    let err = DiskWall::new(DiskWallParams {
        wall: f64::NAN,
        ..Default::default()
    })
    .unwrap_err();
    assert!(matches!(
        err,
        ModelError::InvalidParameter {
            parameter: "wall",
            ..
        }
    ));
}

fn inadmissible(name: &str, q: &str) -> (usize, f64) {
    let mut s = Scenario::defaults(name).unwrap();
    s.set("q", q).unwrap();
    match s.visit_catalogue(Shape) {
        Err(ModelError::InitialInadmissible { piece, g, name: n }) => {
            assert!(!n.is_empty());
            (piece, g)
        }
        other => panic!("{name}: expected InitialInadmissible, got {other:?}"),
    }
}

#[test]
fn inadmissible_initial_configurations_report_piece_and_amount() {
    let (j, g) = inadmissible("particle", "0, -0.5");
    assert_eq!(j, 0);
    assert!(close(g, -0.5, 1e-15));
    let (j, g) = inadmissible("ellipse", "0, 0, 0.25");
    assert_eq!(j, 0);
    assert!(close(g, 0.25 - 0.5, 1e-15));
    let (j, g) = inadmissible("star", "0.3, 0, 0.5");
    assert_eq!(j, 0);
    assert!(close(g, 0.5 - (0.3f64.sin() + 0.3f64.cos()), 1e-14));
    let (j, g) = inadmissible("star", "-2.5, 0, 0.5");
    assert_eq!(j, 3, "the most violated piece is reported");
    assert!(close(g, 0.5 + (-2.5f64).sin() + (-2.5f64).cos(), 1e-14));
    let (j, g) = inadmissible("pendulum", "1.5707963267948966, 0");
    assert_eq!(j, 0);
    assert!(close(g, 2.25 - 4.0, 1e-14));
    let (j, g) = inadmissible("disk-wall", "0, 9.5, 0, 1.5707963267948966");
    assert_eq!(j, 0);
    assert!(close(g, -0.5, 1e-14));
    let (j, g) = inadmissible("disk-table", "4.5, 0, 0, 0");
    assert_eq!(j, 0);
    assert!(close(g, 25.0 - 5.5 * 5.5, 1e-14));
    let (j, g) = inadmissible("disk-table", "-4.5, 0, 0, 0");
    assert_eq!(j, 1);
    assert!(close(g, 25.0 - 5.5 * 5.5, 1e-14));
}

#[test]
fn initial_velocities_violating_the_constraints_report_row_and_residual() {
    let mut s = Scenario::defaults("disk-wall").unwrap();
    s.set("v", "1, 0, 2, 0.1").unwrap();
    match s.visit_catalogue(Shape) {
        Err(ModelError::InitialViolatesConstraint {
            index,
            name,
            residual,
            tolerance,
        }) => {
            assert_eq!(index, 1);
            assert_eq!(name, "row 1");
            assert!(close(residual, 3f64.sqrt(), 1e-14));
            assert!(tolerance > 0.0 && tolerance < 1e-8);
        }
        other => panic!("expected InitialViolatesConstraint, got {other:?}"),
    }
    let mut s = Scenario::defaults("pendulum").unwrap();
    s.set("v", &format!("{}, 0", 0.25 * PI)).unwrap();
    let err = s.visit_catalogue(Shape).unwrap_err();
    let f = PI + 0.5;
    assert!(
        matches!(err, ModelError::InitialViolatesConstraint { index: 0, residual, .. }
            if close(residual, f * 0.25 * PI, 1e-14)),
        "{err:?}"
    );
    assert!(err.to_string().contains("constraint row 0"), "{err}");
    // Tiny violations (round-off) are accepted.
    let model = Pendulum::new(PendulumParams::default()).unwrap();
    let d = model.run_defaults();
    check_initial(&model, &d.q0, &(d.v0 + SVector::from([0.0, 1e-12]))).unwrap();
    assert!(check_initial(&model, &d.q0, &(d.v0 + SVector::from([0.0, 1e-6]))).is_err());
}

#[test]
fn non_finite_initial_data_are_rejected() {
    let m = Particle::new(ParticleParams::default()).unwrap();
    let err = check_initial(&m, &SVector::from([0.0, f64::NAN]), &SVector::zeros()).unwrap_err();
    assert!(matches!(
        err,
        ModelError::NonFiniteInitial {
            what: "q",
            index: 1,
            ..
        }
    ));
    let err =
        check_initial(&m, &SVector::zeros(), &SVector::from([f64::INFINITY, 0.0])).unwrap_err();
    assert!(matches!(
        err,
        ModelError::NonFiniteInitial {
            what: "v",
            index: 0,
            ..
        }
    ));
    let mut s = Scenario::defaults("particle").unwrap();
    s.set("v", "nan, 1").unwrap();
    assert!(matches!(
        s.visit_catalogue(Shape),
        Err(ModelError::NonFiniteInitial {
            what: "v",
            index: 0,
            ..
        })
    ));
}

#[test]
fn disk_initial_velocities_satisfy_the_rolling_constraints() {
    let w = DiskWall::new(DiskWallParams::default()).unwrap();
    let d = w.run_defaults();
    assert!((w.constraint_forms(&d.q0) * d.v0).amax() < 1e-15);
    let t = DiskTable::new(DiskTableParams::default()).unwrap();
    let d = t.run_defaults();
    assert!((t.constraint_forms(&d.q0) * d.v0).amax() < 1e-15);
    // With another radius the default velocities follow the constraints.
    let w = DiskWall::new(DiskWallParams {
        r: 2.0,
        ..Default::default()
    })
    .unwrap();
    let d = w.run_defaults();
    assert!((w.constraint_forms(&d.q0) * d.v0).amax() < 1e-15);
    assert!(close(d.v0[0], 2.0, 1e-15));
    let mut s = Scenario::defaults("disk-table").unwrap();
    s.set("r", "0.5").unwrap();
    assert!(close(s.initial.v[0], 0.5 * 2.0 * 0.4f64.cos(), 1e-15));
    s.visit_catalogue(Shape).unwrap();
}

#[test]
fn pendulum_admissible_set_uses_sin_squared_on_both_sides() {
    let p = Pendulum::new(PendulumParams::default()).unwrap();
    for d in [0.1, 0.5, 0.8, 1.2] {
        let near = p.boundary(0, &SVector::from([PI - d, 0.0]));
        let far = p.boundary(0, &SVector::from([PI + d, 0.3]));
        assert!(close(near, far, 1e-14), "g must be even about θ = π");
        assert!(close(near, 2.25 - 4.0 * d.sin().powi(2), 1e-14));
    }
    // Far side, sin θ < 0 with ℓ|sin θ| > R: the printed ℓ sin θ ≤ R would
    // call this admissible; the cylinder does not.
    let theta = PI + 1.0;
    assert!(2.0 * theta.sin() <= 1.5);
    assert!(p.boundary(0, &SVector::from([theta, 0.0])) < 0.0);
}

#[test]
fn star_pieces_intersect_to_the_papers_non_smooth_set() {
    let star = Star::new(StarParams::default()).unwrap();
    let mut rng = SmallRng::seed_from_u64(3);
    for _ in 0..500 {
        let q = SVector::from([
            rng.random_range(-7.0..7.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(0.0..2.0),
        ]);
        let min = (0..4)
            .map(|j| star.boundary(j, &q))
            .fold(f64::INFINITY, f64::min);
        let paper = q[2] - (q[0].sin().abs() + q[0].cos().abs());
        assert!(close(min, paper, 1e-14));
    }
    assert_eq!(Star::piece_signs(0), (1.0, 1.0));
    assert_eq!(Star::piece_signs(3), (-1.0, -1.0));
}

#[test]
fn ellipse_and_disk_boundaries_have_the_intended_geometry() {
    let e = Ellipse::new(EllipseParams::default()).unwrap();
    assert!(close(
        e.boundary(0, &SVector::from([0.0, 0.0, 2.0])),
        1.5,
        1e-15
    ));
    assert!(close(
        e.boundary(0, &SVector::from([PI / 2.0, 0.0, 2.0])),
        1.0,
        1e-15
    ));
    let w = DiskWall::new(DiskWallParams::default()).unwrap();
    // Heading straight at the wall: the front rim point is R ahead.
    assert!(close(
        w.boundary(0, &SVector::from([0.0, 9.0, 0.0, PI / 2.0])),
        0.0,
        1e-15
    ));
    assert!(close(
        w.boundary(0, &SVector::from([3.0, 8.0, 1.0, 0.0])),
        2.0,
        1e-15
    ));
    // Heading away (sin φ < 0): only the optional rear piece sees the wall.
    let q = SVector::from([0.0, 9.5, 0.0, -PI / 2.0]);
    assert_eq!(w.boundary_count(), 1);
    assert!(w.boundary(0, &q) > 0.0);
    let rear = DiskWall::new(DiskWallParams {
        rear_contact: true,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(rear.boundary_count(), 2);
    assert!(close(rear.boundary(1, &q), -0.5, 1e-15));
    let mut s = Scenario::defaults("disk-wall").unwrap();
    s.set("rear_contact", "true").unwrap();
    assert_eq!(s.visit_catalogue(Shape).unwrap().3, 2);
    assert!(matches!(
        s.set("rear_contact", "yes"),
        Err(ModelError::IllTypedParameter { .. })
    ));
    let t = DiskTable::new(DiskTableParams::default()).unwrap();
    let q = SVector::from([0.0, 4.0, 0.0, PI / 2.0]);
    assert!(close(t.boundary(0, &q), 0.0, 1e-14));
    assert!(close(t.boundary(1, &q), 16.0, 1e-14));
}
