//! Discretization maps `Ψ_d^h = (R̃^h)^{-1}` (issue #2, item 2):
//! `Ψ_d ∘ R̃ = id` on `TQ` and `R̃ ∘ Ψ_d = id` on `Q × Q`, on random points,
//! to 1e-12 relative (to `max(1, |q|, |q1|)` for points and to `|v|` for
//! velocities), for every map: `Forward`, `Midpoint`, and the forward map
//! through the SE(2), S² and angle retractions, and the symmetric midpoint
//! maps on unit quaternions ([`LieMidpoint`]): inverse pair, symmetry
//! `Ψ(q1, q0, −h) = Ψ(q0, q1, h)`, invariance under left and right
//! multiplication, the Euclidean case equal to `Midpoint`.

use crate::common;

use common::{rand_step, rand_tangent, rand_unit, rand_vec};
use diracvi_geometry::lie::{quat_mul, velocity_from_body};
use diracvi_geometry::{
    Angles, Discretization, DiscretizationMap, Euclidean, LieMidpoint, RetractionForward, SVector,
    Se2, Se3, So3Cayley, So3Exp, Sphere,
};
use rand::SeedableRng;
use rand::rngs::SmallRng;

const SAMPLES: usize = 300;
const TOL: f64 = 1e-12;

#[track_caller]
fn close<const N: usize>(what: &str, got: &SVector<f64, N>, want: &SVector<f64, N>, scale: f64) {
    let err = (got - want).amax();
    assert!(
        err <= TOL * scale,
        "{what}: |got − want|∞ = {err:e} > {TOL:e}·{scale:e}\n got  {got}\n want {want}"
    );
}

/// `Ψ_d(R̃(q, v)) = (q, v)`.
#[track_caller]
fn psi_after_rtilde<Dm: DiscretizationMap<N>, const N: usize>(
    map: &Dm,
    q: &SVector<f64, N>,
    v: &SVector<f64, N>,
    h: f64,
) {
    let (q0, q1) = map.psi_inverse(q, v, h).expect("R̃ defined");
    let (qq, vv) = map.psi(&q0, &q1, h).expect("Ψ_d defined");
    let name = map.name();
    close(&format!("{name}: Ψ_d∘R̃ (q)"), &qq, q, q.amax().max(1.0));
    // v is recovered from a difference of points of size |q|: relative to |v|
    // the error is ε|q|/(h|v|), small for the sampled h and |v|
    close(
        &format!("{name}: Ψ_d∘R̃ (v)"),
        &vv,
        v,
        v.amax().max(q.amax()),
    );
}

/// `R̃(Ψ_d(q0, q1)) = (q0, q1)`.
#[track_caller]
fn rtilde_after_psi<Dm: DiscretizationMap<N>, const N: usize>(
    map: &Dm,
    q0: &SVector<f64, N>,
    q1: &SVector<f64, N>,
    h: f64,
) {
    let (q, v) = map.psi(q0, q1, h).expect("Ψ_d defined");
    let (p0, p1) = map.psi_inverse(&q, &v, h).expect("R̃ defined");
    let s = q0.amax().max(q1.amax()).max(1.0);
    let name = map.name();
    close(&format!("{name}: R̃∘Ψ_d (q0)"), &p0, q0, s);
    close(&format!("{name}: R̃∘Ψ_d (q1)"), &p1, q1, s);
}

#[test]
fn forward_and_midpoint_are_inverse_pairs() {
    let mut rng = SmallRng::seed_from_u64(0xD15C);
    for map in Discretization::ALL {
        for _ in 0..SAMPLES {
            let h = rand_step(&mut rng, 1e-2, 0.5);
            let (q, v) = (rand_vec::<3>(&mut rng, 3.0), rand_vec::<3>(&mut rng, 5.0));
            psi_after_rtilde(&map, &q, &v, h);
            let (q0, q1) = (rand_vec::<4>(&mut rng, 3.0), rand_vec::<4>(&mut rng, 3.0));
            rtilde_after_psi(&map, &q0, &q1, h);
        }
    }
}

/// The forward and midpoint maps by hand, and their displacement `q1 − q0`.
#[test]
fn forward_and_midpoint_by_hand() {
    let q0 = SVector::from([1.0, -2.0]);
    let q1 = SVector::from([1.5, -1.0]);
    let h = 0.25;
    let (q, v) = Discretization::Forward.psi(&q0, &q1, h).unwrap();
    approx::assert_relative_eq!(q, q0);
    approx::assert_relative_eq!(v, SVector::from([2.0, 4.0]), max_relative = 1e-15);
    let (q, v) = Discretization::Midpoint.psi(&q0, &q1, h).unwrap();
    approx::assert_relative_eq!(q, SVector::from([1.25, -1.5]), max_relative = 1e-15);
    approx::assert_relative_eq!(v, SVector::from([2.0, 4.0]), max_relative = 1e-15);
    for map in Discretization::ALL {
        let d = map.displacement(&q0, &q1).unwrap();
        approx::assert_relative_eq!(d, SVector::from([0.5, 1.0]), max_relative = 1e-15);
    }
    // the forward map through the Euclidean retraction is `Forward`
    let rf = RetractionForward(Euclidean);
    let (a, b) = (
        rf.psi(&q0, &q1, h).unwrap(),
        Discretization::Forward.psi(&q0, &q1, h).unwrap(),
    );
    approx::assert_relative_eq!(a.0, b.0);
    approx::assert_relative_eq!(a.1, b.1, max_relative = 1e-15);
}

#[test]
fn se2_forward_is_an_inverse_pair() {
    let mut rng = SmallRng::seed_from_u64(0x5E2D);
    let map = RetractionForward(Se2);
    for k in 0..SAMPLES {
        let h = rand_step(&mut rng, 1e-2, 0.5);
        let q = rand_vec::<3>(&mut rng, 3.0);
        let mut v = rand_vec::<3>(&mut rng, 5.0);
        // |h v_θ| < 2.5 keeps θ1 − θ0 well inside (−2π, 2π); some tiny rotations
        v[0] = v[0].clamp(-2.5 / h, 2.5 / h) * if k % 5 == 0 { 1e-6 } else { 1.0 };
        psi_after_rtilde(&map, &q, &v, h);
        let q0 = rand_vec::<3>(&mut rng, 3.0);
        let mut q1 = rand_vec::<3>(&mut rng, 3.0);
        q1[0] = q0[0] + (q1[0] - q0[0]).clamp(-3.0, 3.0);
        rtilde_after_psi(&map, &q0, &q1, h);
    }
}

#[test]
fn sphere_forward_is_an_inverse_pair() {
    let mut rng = SmallRng::seed_from_u64(0x5F1D);
    let map = RetractionForward(Sphere);
    for _ in 0..SAMPLES {
        let h = rand_step(&mut rng, 1e-2, 0.5);
        let q = rand_unit(&mut rng);
        // Ψ_d∘R̃ = id on TS²: v ⟂ q
        let v = rand_tangent(&mut rng, &q, 0.5, 5.0);
        psi_after_rtilde(&map, &q, &v, h);
        let q1 = loop {
            let p = rand_unit(&mut rng);
            if q.dot(&p) > 0.05 {
                break p;
            }
        };
        rtilde_after_psi(&map, &q, &q1, h);
        // Ψ_d lands in TS²
        let (_, w) = map.psi(&q, &q1, h).unwrap();
        assert!(w.dot(&q).abs() <= 1e-14 * w.norm().max(1.0));
    }
}

#[test]
fn angles_forward_is_an_inverse_pair() {
    let mut rng = SmallRng::seed_from_u64(0xA261);
    let map = RetractionForward(Angles);
    for _ in 0..SAMPLES {
        let h = rand_step(&mut rng, 1e-2, 0.5);
        let q = rand_vec::<2>(&mut rng, 10.0);
        // |h v_i| < π: the displacement stays on the short side
        let v = rand_vec::<2>(&mut rng, 3.0) / h;
        psi_after_rtilde(&map, &q, &v, h);
        let q1 = q + rand_vec::<2>(&mut rng, 3.0);
        rtilde_after_psi(&map, &q, &q1, h);
    }
}

#[test]
fn names_and_parsing() {
    assert_eq!(
        DiscretizationMap::<2>::name(&Discretization::Forward),
        "forward"
    );
    assert_eq!(
        DiscretizationMap::<2>::name(&Discretization::Midpoint),
        "midpoint"
    );
    assert_eq!(DiscretizationMap::<3>::name(&RetractionForward(Se2)), "se2");
    for d in Discretization::ALL {
        assert_eq!(d.to_string().parse::<Discretization>(), Ok(d));
    }
    assert!("backward".parse::<Discretization>().is_err());
}

/// A uniformly distributed unit quaternion.
fn rand_quat(rng: &mut SmallRng) -> SVector<f64, 4> {
    loop {
        let x = rand_vec::<4>(rng, 1.0);
        let n = x.norm();
        if n > 0.1 && n <= 1.0 {
            return x / n;
        }
    }
}

fn check_lie_midpoint<Dm: DiscretizationMap<4>>(map: &Dm, seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    for _ in 0..SAMPLES {
        let h = rand_step(&mut rng, 1e-2, 0.5);
        let q = rand_quat(&mut rng);
        // body rates with h|ω| < 2 (rotations well below π per step)
        let v = velocity_from_body(&q, &(rand_vec::<3>(&mut rng, 1.1) / h));
        psi_after_rtilde(map, &q, &v, h);
        let (q0, q1) = map.psi_inverse(&q, &v, h).unwrap();
        assert!((q0.norm() - 1.0).abs() < 1e-15 && (q1.norm() - 1.0).abs() < 1e-15);
        rtilde_after_psi(map, &q0, &q1, h);
        // symmetric: Ψ(q1, q0, −h) = Ψ(q0, q1, h)
        let (a, va) = map.psi(&q0, &q1, h).unwrap();
        let (b, vb) = map.psi(&q1, &q0, -h).unwrap();
        close("Ψ symmetric (q)", &b, &a, 1.0);
        close("Ψ symmetric (v)", &vb, &va, va.amax().max(1.0));
        // equivariant under left and right multiplication
        let g = rand_quat(&mut rng);
        let (gl, vl) = map.psi(&quat_mul(&g, &q0), &quat_mul(&g, &q1), h).unwrap();
        close("left (q)", &gl, &quat_mul(&g, &a), 1.0);
        close("left (v)", &vl, &quat_mul(&g, &va), va.amax().max(1.0));
        let (gr, vr) = map.psi(&quat_mul(&q0, &g), &quat_mul(&q1, &g), h).unwrap();
        close("right (q)", &gr, &quat_mul(&a, &g), 1.0);
        close("right (v)", &vr, &quat_mul(&va, &g), va.amax().max(1.0));
    }
}

#[test]
fn lie_midpoint_is_a_symmetric_inverse_pair() {
    check_lie_midpoint(&LieMidpoint(So3Cayley), 0x11D1);
    check_lie_midpoint(&LieMidpoint(So3Exp), 0x11D2);
    // the geodesic midpoint of the exponential: q0 ⊗ exp(ξ/2)
    let q0: SVector<f64, 4> = SVector::from([1.0, 0.0, 0.0, 0.0]);
    let q1: SVector<f64, 4> = SVector::from([0.0, 0.0, 0.0, 1.0]); // nearly half a turn about z
    let q1 = (q1 * 0.999_999 + q0 * 1e-3).normalize();
    let (qm, _) = LieMidpoint(So3Exp).psi(&q0, &q1, 1.0).unwrap();
    let angle = 2.0 * q1[3].atan2(q1[0]);
    let want = SVector::from([(0.25 * angle).cos(), 0.0, 0.0, (0.25 * angle).sin()]);
    close("geodesic midpoint", &qm, &want, 1.0);
    // on R^n it is the midpoint map
    let mut rng = SmallRng::seed_from_u64(0x11D3);
    for _ in 0..SAMPLES {
        let h = rand_step(&mut rng, 1e-2, 0.5);
        let (a, b) = (rand_vec::<3>(&mut rng, 5.0), rand_vec::<3>(&mut rng, 5.0));
        let (q, v) = LieMidpoint(Euclidean).psi(&a, &b, h).unwrap();
        let (qq, vv) = Discretization::Midpoint.psi(&a, &b, h).unwrap();
        close("euclidean lie midpoint (q)", &q, &qq, 5.0);
        close("euclidean lie midpoint (v)", &v, &vv, vv.amax().max(1.0));
    }
    // SE(3): the quaternion part as SO(3), the position as the midpoint
    let map = LieMidpoint(Se3(So3Cayley));
    for _ in 0..SAMPLES {
        let h = rand_step(&mut rng, 1e-2, 0.5);
        let q = rand_quat(&mut rng);
        let vq = velocity_from_body(&q, &(rand_vec::<3>(&mut rng, 1.1) / h));
        let x = rand_vec::<3>(&mut rng, 5.0);
        let vx = rand_vec::<3>(&mut rng, 5.0);
        let p = SVector::from([q[0], q[1], q[2], q[3], x[0], x[1], x[2]]);
        let v = SVector::from([vq[0], vq[1], vq[2], vq[3], vx[0], vx[1], vx[2]]);
        psi_after_rtilde(&map, &p, &v, h);
        let (p0, p1) = map.psi_inverse(&p, &v, h).unwrap();
        rtilde_after_psi(&map, &p0, &p1, h);
    }
    assert_eq!(
        DiscretizationMap::<4>::name(&LieMidpoint(So3Exp)),
        "so3-exp-midpoint"
    );
}
