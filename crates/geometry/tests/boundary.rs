//! Boundary frames and `ι*` (issue #2, item 5).
//!
//! For the ellipse floor `g = y − √(a² sin²θ + b² cos²θ)` (a = 1, b = 0.5),
//! the cylinder `g = R² − ℓ² sin²θ` (R = 1.5, ℓ = 2) and the four star pieces
//! `g = y − l(s1 sin θ + s2 cos θ)`:
//! * `dg` by AD equals the hand gradient (1e-14 relative);
//! * the frame is orthogonal, `FᵀF = I` to 1e-14;
//! * column 0 is `dg/|dg|`, `dg · tangent(i) = 0` to 1e-14·|dg|;
//! * `iota_star(p) = Bᵀ p`, it annihilates `span(dg)` and is an isometry on `ker dg`;
//! * the error cases `DegenerateBoundary` and `NoSuchBoundaryPiece`.

use crate::common;

use approx::assert_relative_eq;
use common::*;
use diracvi_geometry::{
    BoundaryFrame, GeometryError, SMatrix, SVector, System, boundary_gradient, min_boundary,
};
use nalgebra::DVector;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::f64::consts::{FRAC_PI_2, PI};

const TOL: f64 = 1e-14;

/// Every frame property at `q` for piece `j`, with the expected `dg`.
#[track_caller]
fn check_frame<Sy, const N: usize, const M: usize>(
    what: &str,
    sys: &Sy,
    j: usize,
    q: &SVector<f64, N>,
    dg_hand: &SVector<f64, N>,
    rng: &mut SmallRng,
) where
    Sy: System<N, M>,
{
    let frame = BoundaryFrame::<N>::new::<Sy, M>(sys, j, q).expect("regular boundary point");
    assert_eq!(frame.piece, j);
    assert_relative_eq!(frame.g, sys.boundary(j, q), max_relative = 1e-15);
    assert_rel(&format!("{what}: dg (AD vs hand)"), &frame.dg, dg_hand, TOL);
    let (g, dg) = boundary_gradient::<Sy, N, M>(sys, j, q).unwrap();
    assert_relative_eq!(g, frame.g, max_relative = 1e-15);
    assert_relative_eq!(dg, frame.dg, max_relative = 1e-15);

    let f = frame.frame;
    let ftf = f.transpose() * f;
    let orth = (ftf - SMatrix::<f64, N, N>::identity()).amax();
    assert!(orth <= TOL, "{what}: |FᵀF − I|∞ = {orth:e}");

    let norm = frame.dg.norm();
    let n = frame.normal();
    assert_rel(
        &format!("{what}: column 0 = dg/|dg|"),
        &n,
        &(frame.dg / norm),
        TOL,
    );
    assert_relative_eq!(f.column(0).into_owned(), n);
    for i in 0..N - 1 {
        let t = frame.tangent(i);
        assert_relative_eq!(f.column(i + 1).into_owned(), t);
        let along = frame.dg.dot(&t).abs();
        assert!(
            along <= TOL * norm,
            "{what}: dg·tangent({i}) = {along:e} (|dg| = {norm:e})"
        );
    }

    // ι*(p) = Bᵀ p for random covectors p
    let b = f.columns(1, N - 1).into_owned();
    let mut out = vec![0.0; N - 1];
    for _ in 0..5 {
        let p = rand_vec::<N>(rng, 10.0);
        frame.iota_star(&p, &mut out);
        let want = b.transpose() * p;
        for (i, (o, w)) in out.iter().zip(want.iter()).enumerate() {
            assert!(
                (o - w).abs() <= TOL * p.norm(),
                "{what}: iota_star[{i}] = {o:e}, Bᵀp = {w:e}"
            );
        }
        assert_relative_eq!(
            frame.normal_component(&p),
            n.dot(&p),
            epsilon = TOL * p.norm()
        );
        // p = ⟨n, p⟩ n + B ι*(p): nothing lost
        let rebuilt = n * frame.normal_component(&p) + &b * DVector::from_column_slice(&out);
        assert!(
            (rebuilt - p).amax() <= TOL * p.norm(),
            "{what}: p ≠ n⟨n,p⟩ + Bι*(p)"
        );
        // ι* annihilates span(dg)
        let c: f64 = rng.random_range(-5.0..5.0);
        frame.iota_star(&(frame.dg * c), &mut out);
        let killed = out.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        assert!(
            killed <= TOL * (c * norm).abs(),
            "{what}: ι*(c dg) = {killed:e}"
        );
    }
}

#[test]
fn ellipse_floor() {
    let sys = BouncingEllipse::default();
    assert_eq!((sys.a, sys.b), (1.0, 0.5));
    let mut rng = SmallRng::seed_from_u64(0xE11);
    for k in 0..200 {
        let theta = rng.random_range(-7.0..7.0);
        let x = rng.random_range(-5.0..5.0);
        let (phi, phi_dot) = sys.phi(theta);
        // on the boundary, and (every other sample) above it: the frame is
        // defined wherever dg ≠ 0
        let y = if k % 2 == 0 {
            phi
        } else {
            phi + rng.random_range(0.0..3.0)
        };
        let q = SVector::from([theta, x, y]);
        let dg = SVector::from([-phi_dot, 0.0, 1.0]);
        check_frame::<_, 3, 0>("ellipse", &sys, 0, &q, &dg, &mut rng);
        if k % 2 == 0 {
            let (g, _) = boundary_gradient::<_, 3, 0>(&sys, 0, &q).unwrap();
            assert!(g.abs() <= 1e-15, "g on the boundary = {g:e}");
        }
        // [VCI] §4.2's tangent basis e1 = ∂x, e2 = ∂θ + φ̇ ∂y spans ker dg:
        // B Bᵀ e = e
        let frame = BoundaryFrame::new::<_, 0>(&sys, 0, &q).unwrap();
        let b = frame.frame.columns(1, 2).into_owned();
        for e in [
            SVector::from([0.0, 1.0, 0.0]),
            SVector::from([1.0, 0.0, phi_dot]),
        ] {
            let proj = &b * (b.transpose() * e);
            assert!(
                (proj - e).amax() <= TOL * e.norm(),
                "VCI tangent not in span B"
            );
        }
    }
}

#[test]
fn cylinder_wall() {
    let sys = NonholonomicPendulum::default();
    assert_eq!((sys.r, sys.l), (1.5, 2.0));
    let mut rng = SmallRng::seed_from_u64(0xC71);
    let l2 = sys.l * sys.l;
    let th0 = (sys.r / sys.l).asin();
    // the four boundary angles per turn (|ℓ sin θ| = R) and random interior points
    let mut thetas = vec![
        th0,
        PI - th0,
        PI + th0,
        2.0 * PI - th0,
        -th0,
        th0 + 4.0 * PI,
    ];
    thetas.extend((0..100).map(|_| rng.random_range(-7.0..7.0)));
    for theta in thetas {
        let (s, c) = f64::sin_cos(theta);
        if (s * c).abs() < 1e-3 {
            continue; // near a degenerate point, tested below
        }
        let q = SVector::from([theta, rng.random_range(-3.0..3.0)]);
        let dg = SVector::from([-2.0 * l2 * s * c, 0.0]);
        check_frame::<_, 2, 1>("cylinder", &sys, 0, &q, &dg, &mut rng);
        // in 2D: normal ±e_θ, tangent ±e_φ, ι*(p) = ±p_φ
        let frame = BoundaryFrame::new::<_, 1>(&sys, 0, &q).unwrap();
        assert_relative_eq!(frame.normal()[0].abs(), 1.0, epsilon = TOL);
        assert_relative_eq!(frame.tangent(0)[1].abs(), 1.0, epsilon = TOL);
        let p = SVector::from([3.0, -2.0]);
        let mut out = [0.0];
        frame.iota_star(&p, &mut out);
        assert_relative_eq!(out[0].abs(), 2.0, epsilon = TOL);
    }
}

#[test]
fn star_pieces() {
    let sys = Star::default();
    let mut rng = SmallRng::seed_from_u64(0x57A);
    for _ in 0..100 {
        let theta = rng.random_range(-7.0..7.0);
        let (s, c) = f64::sin_cos(theta);
        for j in 0..4 {
            let (s1, s2) = Star::signs(j);
            let y = sys.l * (s1 * s + s2 * c); // on piece j
            let q = SVector::from([theta, rng.random_range(-3.0..3.0), y]);
            let dg = SVector::from([-sys.l * (s1 * c - s2 * s), 0.0, 1.0]);
            check_frame::<_, 3, 0>(&format!("star piece {j}"), &sys, j, &q, &dg, &mut rng);
        }
        // the admissible-set test picks the smallest piece: l(|sin| + |cos|)
        let q = SVector::from([theta, 0.0, 2.0]);
        let (j, g) = min_boundary::<_, 3, 0>(&sys, &q).unwrap();
        assert_relative_eq!(g, 2.0 - sys.l * (s.abs() + c.abs()), epsilon = 1e-15);
        let (s1, s2) = Star::signs(j);
        assert!(s1 * s >= 0.0 && s2 * c >= 0.0, "piece {j} at θ = {theta}");
    }
}

#[test]
fn min_boundary_without_boundary() {
    assert_eq!(
        min_boundary::<_, 4, 2>(&LcCircuit::default(), &SVector::zeros()),
        None
    );
    let (j, g) =
        min_boundary::<_, 2, 0>(&BouncingParticle::default(), &SVector::from([1.0, -0.5])).unwrap();
    assert_eq!(j, 0);
    assert_relative_eq!(g, -0.5);
}

#[test]
fn degenerate_boundary() {
    let sys = NonholonomicPendulum::default();
    // θ = 0: sin θ = 0 exactly, so dg = (−2ℓ² sin θ cos θ, 0) = 0
    let q = SVector::from([0.0, 0.4]);
    match BoundaryFrame::new::<_, 1>(&sys, 0, &q) {
        Err(GeometryError::DegenerateBoundary { piece, norm, q: at }) => {
            assert_eq!(piece, 0);
            assert!(norm.abs() < f64::MIN_POSITIVE, "norm = {norm}");
            assert_eq!(at.len(), 2);
            assert_relative_eq!(at[1], 0.4);
        }
        other => panic!("expected DegenerateBoundary, got {other:?}"),
    }
    // θ = π/2: dg = 0 mathematically; in floating point cos(π/2) = 6.1e-17, so
    // AD returns a round-off-sized gradient. Document that size: any caller
    // building a frame there gets a meaningless normal.
    let q = SVector::from([FRAC_PI_2, 0.4]);
    let (_, dg) = boundary_gradient::<_, 2, 1>(&sys, 0, &q).unwrap();
    assert!(
        dg.norm() <= 1e-15 * sys.l * sys.l,
        "|dg| at θ = π/2: {:e}",
        dg.norm()
    );

    // non-finite dg: an ellipse with a = b = 0 has φ = √0 with an infinite
    // derivative, so dg_θ = ∞ · 0 = NaN
    let flat = BouncingEllipse {
        a: 0.0,
        b: 0.0,
        ..Default::default()
    };
    let q = SVector::from([0.3, 0.0, 0.0]);
    match BoundaryFrame::new::<_, 0>(&flat, 0, &q) {
        Err(GeometryError::DegenerateBoundary { piece: 0, norm, .. }) => {
            assert!(!norm.is_finite());
        }
        other => panic!("expected DegenerateBoundary, got {other:?}"),
    }
}

#[test]
fn no_such_boundary_piece() {
    let q3 = SVector::from([0.1, 0.0, 2.0]);
    for j in [4, 5, usize::MAX] {
        assert_eq!(
            BoundaryFrame::new::<_, 0>(&Star::default(), j, &q3).unwrap_err(),
            GeometryError::NoSuchBoundaryPiece { piece: j, count: 4 }
        );
        assert_eq!(
            boundary_gradient::<_, 3, 0>(&Star::default(), j, &q3).unwrap_err(),
            GeometryError::NoSuchBoundaryPiece { piece: j, count: 4 }
        );
    }
    assert_eq!(
        BoundaryFrame::new::<_, 0>(&BouncingParticle::default(), 1, &SVector::from([0.0, 1.0]))
            .unwrap_err(),
        GeometryError::NoSuchBoundaryPiece { piece: 1, count: 1 }
    );
    // a system without boundary has no piece 0
    assert_eq!(
        boundary_gradient::<_, 4, 2>(&LcCircuit::default(), 0, &SVector::zeros()).unwrap_err(),
        GeometryError::NoSuchBoundaryPiece { piece: 0, count: 0 }
    );
    let msg = GeometryError::NoSuchBoundaryPiece { piece: 7, count: 4 }.to_string();
    assert!(msg.contains('7') && msg.contains('4'), "{msg}");
}

/// `iota_star` is given an output slice of the wrong length: a programmer
/// error, which panics (documented).
#[test]
#[should_panic(expected = "N - 1")]
fn iota_star_wrong_length_panics() {
    let frame =
        BoundaryFrame::new::<_, 0>(&BouncingParticle::default(), 0, &SVector::from([0.0, 0.0]))
            .unwrap();
    let mut out = [0.0; 2];
    frame.iota_star(&SVector::from([1.0, 2.0]), &mut out);
}
