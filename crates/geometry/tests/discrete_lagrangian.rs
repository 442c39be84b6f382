//! The discrete Lagrangian `L_d = h L ∘ Ψ_d^h` and its AD derivatives
//! (issue #2, items 3 and 4).
//!
//! Item 3: every derivative that [`DiscreteLagrangian`] offers (`jet`,
//! `time_jet`, `d1`, `d2`, `d3`, `energy`, `hessian_first`, `hessian_second`,
//! `del_directional`),
//! in both orientations, against fourth-order central finite differences
//! (`δ = 1e-3·clamp(|b − a|∞, 1e-2, 1)` in configuration — the scale on
//! which `L_d` varies is the step's displacement once a curved retraction is
//! involved — and `δ = 1e-3·h` in the step; observed FD errors are below 1e-9) on random
//! points, for several Lagrangians and discretizations. Tolerance: 1e-7
//! relative to the max-norm of the derivative. First derivatives are
//! differenced from `L_d` itself, second derivatives from the AD first
//! derivatives (themselves checked against `L_d`).
//!
//! Item 4: the bouncing particle's midpoint `L_d` of \[VCI\] §4.1 against its
//! closed form and hand derivatives, to 1e-13 relative.

use crate::common;

use common::*;
use diracvi_geometry::{
    Angles, DiscreteLagrangian, Discretization, DiscretizationMap, Orientation, RetractionForward,
    SMatrix, SVector, Se2, Sphere, System,
};
use rand::SeedableRng;
use rand::rngs::SmallRng;

/// AD against finite differences.
const FD_TOL: f64 = 1e-7;
/// AD against AD (the same derivative from two entry points).
const SAME_TOL: f64 = 1e-14;
/// Random points per (system, discretization).
const SAMPLES: usize = 25;

/// Checks every derivative of `L_d` at `(a, b, h)` in both orientations.
fn check_ld<Sy, Dm, const N: usize, const M: usize>(
    label: &str,
    system: &Sy,
    map: &Dm,
    a: &SVector<f64, N>,
    b: &SVector<f64, N>,
    h: f64,
) where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    let forward = DiscreteLagrangian::<Sy, Dm, N, M>::new(system, map);
    assert_eq!(forward.orientation(), Orientation::Forward);
    for orientation in [Orientation::Forward, Orientation::Reversed] {
        let ld = forward.oriented(orientation);
        assert_eq!(ld.orientation(), orientation);
        let what = |s: &str| format!("{label} [{}] {orientation:?}: {s}", map.name());
        let f = |x: &SVector<f64, N>, y: &SVector<f64, N>, t: f64| -> f64 {
            ld.value(x, y, t).expect("L_d defined")
        };
        let d1 = |x: &SVector<f64, N>, y: &SVector<f64, N>, t: f64| ld.d1(x, y, t).unwrap();
        let d2 = |x: &SVector<f64, N>, y: &SVector<f64, N>, t: f64| ld.d2(x, y, t).unwrap();
        let dt = 1e-3 * h;
        let dq = 1e-3 * (b - a).amax().clamp(1e-2, 1.0);

        // the reversed discrete Lagrangian is L_d(b, a, h)
        if orientation == Orientation::Reversed {
            let swapped = forward.value(b, a, h).unwrap();
            assert_rel_scalar(&what("L_d*(a,b) = L_d(b,a)"), f(a, b, h), swapped, 1e-15);
            let (jr, jf) = (ld.jet(a, b, h).unwrap(), forward.jet(b, a, h).unwrap());
            assert_rel(
                &what("D1 L_d* = D2 L_d (swapped)"),
                &jr.d1,
                &jf.d2,
                SAME_TOL,
            );
            assert_rel(
                &what("D2 L_d* = D1 L_d (swapped)"),
                &jr.d2,
                &jf.d1,
                SAME_TOL,
            );
            assert_rel(
                &what("D12 L_d* = D12 L_dᵀ"),
                &jr.d12,
                &jf.d12.transpose(),
                SAME_TOL,
            );
            let e = forward.energy(b, a, h).unwrap();
            assert_rel_scalar(
                &what("E_d* = E_d (swapped)"),
                ld.energy(a, b, h).unwrap(),
                e,
                SAME_TOL,
            );
        }

        let value = f(a, b, h);
        let jet = ld.jet(a, b, h).unwrap();
        let tj = ld.time_jet(a, b, h).unwrap();
        assert_rel_scalar(&what("jet.value"), jet.value, value, SAME_TOL);
        assert_rel_scalar(&what("time_jet.value"), tj.value, value, SAME_TOL);

        // first derivatives against FD of L_d
        let fd1 = fd_gradient(|x| f(x, b, h), a, dq);
        assert_rel(&what("D1 vs FD"), &jet.d1, &fd1, FD_TOL);
        assert_rel(&what("d1() = jet.d1"), &d1(a, b, h), &jet.d1, SAME_TOL);
        let fd2 = fd_gradient(|y| f(a, y, h), b, dq);
        assert_rel(&what("D2 vs FD"), &jet.d2, &fd2, FD_TOL);
        assert_rel(&what("d2() = jet.d2"), &d2(a, b, h), &jet.d2, SAME_TOL);
        assert_rel(&what("time_jet.d2 = jet.d2"), &tj.d2, &jet.d2, SAME_TOL);
        let fd3 = fd_scalar(|t| f(a, b, t), h, dt);
        let d3 = ld.d3(a, b, h).unwrap();
        assert_rel_scalar(&what("D3 vs FD"), d3, fd3, FD_TOL);
        assert_rel_scalar(&what("time_jet.d3 = d3()"), tj.d3, d3, SAME_TOL);
        assert_rel_scalar(
            &what("energy = −D3"),
            ld.energy(a, b, h).unwrap(),
            -d3,
            SAME_TOL,
        );

        // second derivatives against FD of the AD first derivatives
        let fd12 = fd_jacobian(|y| d1(a, y, h), b, dq); // (i, j) = ∂(D1)_i/∂b_j
        assert_rel(&what("D12 vs FD of D1"), &jet.d12, &fd12, FD_TOL);
        let fd21 = fd_jacobian(|x| d2(x, b, h), a, dq); // (j, i) = ∂(D2)_j/∂a_i
        assert_rel(
            &what("D12 vs FD of D2"),
            &jet.d12,
            &fd21.transpose(),
            FD_TOL,
        );
        let fd23 = fd_vector(|t| d2(a, b, t), h, dt);
        assert_rel(&what("D23 vs FD of D2"), &tj.d23, &fd23, FD_TOL);
        // D23 is also the b-gradient of D3
        let fd32 = fd_gradient(|y| ld.d3(a, y, h).unwrap(), b, dq);
        assert_rel(&what("D23 vs FD of D3"), &tj.d23, &fd32, FD_TOL);

        let (g11, h11) = ld.hessian_first(a, b, h).unwrap();
        assert_rel(&what("hessian_first gradient"), &g11, &jet.d1, SAME_TOL);
        assert_rel(
            &what("D11 vs FD of D1"),
            &h11,
            &fd_jacobian(|x| d1(x, b, h), a, dq),
            FD_TOL,
        );
        assert_rel(&what("D11 symmetric"), &h11, &h11.transpose(), SAME_TOL);
        let (g22, h22) = ld.hessian_second(a, b, h).unwrap();
        assert_rel(&what("hessian_second gradient"), &g22, &jet.d2, SAME_TOL);
        assert_rel(
            &what("D22 vs FD of D2"),
            &h22,
            &fd_jacobian(|y| d2(a, y, h), b, dq),
            FD_TOL,
        );
        assert_rel(&what("D22 symmetric"), &h22, &h22.transpose(), SAME_TOL);

        // the DEL Hessian–vector product against the full Hessians, with the
        // next point c = 2b − a and a direction y mixing all components
        let c = b * 2.0 - a;
        let y = SVector::<f64, N>::from_fn(|i, _| 1.0 - 0.37 * i as f64);
        let (dy, hy) = ld.del_directional(a, b, &c, h, &y).unwrap();
        let (g11c, h11c) = ld.hessian_first(b, &c, h).unwrap();
        // (the two terms nearly cancel near a discrete trajectory: errors
        // relative to the terms' size)
        let scale = y.abs().dot(&(g22.abs() + g11c.abs())).max(1e-300);
        let e = (dy - y.dot(&(g22 + g11c))).abs() / scale;
        assert!(e <= SAME_TOL, "{}: {e:e}", what("del_directional value"));
        let reference = (h22 + h11c) * y;
        let scale = ((h22.abs() + h11c.abs()) * y.abs()).amax().max(1e-300);
        let e = (hy - reference).amax() / scale;
        assert!(e <= SAME_TOL, "{}: {e:e}", what("del_directional gradient"));
    }
}

/// Random `(a, b, h)` with `b = R̃` of a random velocity at `a`, so that
/// `(b − a)/h` is a moderate velocity as in a real step, and every fifth
/// sample with an independent, far `b` (large velocities).
fn run_flat<Sy, Dm, const N: usize, const M: usize>(label: &str, system: &Sy, map: &Dm, seed: u64)
where
    Sy: System<N, M>,
    Dm: DiscretizationMap<N>,
{
    let mut rng = SmallRng::seed_from_u64(seed);
    for k in 0..SAMPLES {
        let h = rand_step(&mut rng, 1e-3, 0.1);
        let a = rand_vec::<N>(&mut rng, 2.0);
        let b = if k % 5 == 4 {
            a + rand_vec::<N>(&mut rng, 1.0)
        } else {
            let v = rand_vec::<N>(&mut rng, 4.0);
            map.psi_inverse(&a, &v, h).unwrap().1
        };
        check_ld::<Sy, Dm, N, M>(label, system, map, &a, &b, h);
    }
}

#[test]
fn bouncing_particle() {
    let sys = BouncingParticle::default();
    run_flat::<_, _, 2, 0>("particle", &sys, &Discretization::Forward, 1);
    run_flat::<_, _, 2, 0>("particle", &sys, &Discretization::Midpoint, 2);
}

#[test]
fn nonholonomic_pendulum() {
    let sys = NonholonomicPendulum::default();
    run_flat::<_, _, 2, 1>("pendulum", &sys, &Discretization::Forward, 3);
    run_flat::<_, _, 2, 1>("pendulum", &sys, &Discretization::Midpoint, 4);
    // through the angle retraction (inverse wrapped to (−π, π))
    run_flat::<_, _, 2, 1>("pendulum", &sys, &RetractionForward(Angles), 5);
}

#[test]
fn bouncing_ellipse() {
    let sys = BouncingEllipse::default();
    run_flat::<_, _, 3, 0>("ellipse", &sys, &Discretization::Forward, 6);
    run_flat::<_, _, 3, 0>("ellipse", &sys, &Discretization::Midpoint, 7);
}

/// Through the SE(2) exponential, with rotation angles `h v_θ` both in the
/// series branch (`< 0.25`) and in the closed-form branch.
#[test]
fn bouncing_ellipse_se2_retraction() {
    let sys = BouncingEllipse::default();
    let map = RetractionForward(Se2);
    let mut rng = SmallRng::seed_from_u64(8);
    for k in 0..4 * SAMPLES {
        let h = rand_step(&mut rng, 1e-3, 0.1);
        let a = rand_vec::<3>(&mut rng, 2.0);
        let mut v = rand_vec::<3>(&mut rng, 4.0);
        v[0] = match k % 4 {
            0 => v[0] * 1e-3,           // tiny rotation
            1 => 0.25 / h * v[0] / 4.0, // |ω| up to the switch
            2 => 2.0 / h * v[0] / 4.0,  // |ω| up to 2
            _ => v[0],
        };
        let b = map.psi_inverse(&a, &v, h).unwrap().1;
        check_ld::<_, _, 3, 0>("ellipse", &sys, &map, &a, &b, h);
    }
    let knife = KnifeEdge;
    for _ in 0..SAMPLES {
        let h = rand_step(&mut rng, 1e-3, 0.1);
        let a = rand_vec::<3>(&mut rng, 2.0);
        let b = map
            .psi_inverse(&a, &rand_vec::<3>(&mut rng, 4.0), h)
            .unwrap()
            .1;
        check_ld::<_, _, 3, 1>("knife edge", &knife, &map, &a, &b, h);
    }
}

#[test]
fn lc_circuit() {
    let sys = LcCircuit::default();
    run_flat::<_, _, 4, 2>("lc", &sys, &Discretization::Forward, 9);
    run_flat::<_, _, 4, 2>("lc", &sys, &Discretization::Midpoint, 10);
}

#[test]
fn non_quadratic() {
    run_flat::<_, _, 2, 1>("non-quadratic", &NonQuadratic, &Discretization::Forward, 11);
    run_flat::<_, _, 2, 1>(
        "non-quadratic",
        &NonQuadratic,
        &Discretization::Midpoint,
        12,
    );
}

/// Through the S² retraction (the derivatives are those of the formula on
/// R³ × R³, which is what the AD differentiates).
#[test]
fn sphere_particle() {
    let map = RetractionForward(Sphere);
    let mut rng = SmallRng::seed_from_u64(13);
    for _ in 0..SAMPLES {
        let h = rand_step(&mut rng, 1e-3, 0.1);
        let a = rand_unit(&mut rng);
        let v = rand_tangent(&mut rng, &a, 0.1, 4.0);
        let b = map.psi_inverse(&a, &v, h).unwrap().1;
        check_ld::<_, _, 3, 0>("sphere particle", &SphereParticle, &map, &a, &b, h);
    }
}

/// `Ψ_d` undefined ⇒ every entry point reports it instead of panicking.
#[test]
fn undefined_psi_is_an_error() {
    let sys = SphereParticle;
    let map = RetractionForward(Sphere);
    let ld = DiscreteLagrangian::<_, _, 3, 0>::new(&sys, &map);
    let a = SVector::from([0.0, 0.0, 1.0]);
    let b = SVector::from([0.0, 0.0, -1.0]);
    for o in [Orientation::Forward, Orientation::Reversed] {
        let ld = ld.oriented(o);
        assert!(ld.value(&a, &b, 0.1).is_err());
        assert!(ld.jet(&a, &b, 0.1).is_err());
        assert!(ld.time_jet(&a, &b, 0.1).is_err());
        assert!(ld.d1(&a, &b, 0.1).is_err());
        assert!(ld.d2(&a, &b, 0.1).is_err());
        assert!(ld.d3(&a, &b, 0.1).is_err());
        assert!(ld.energy(&a, &b, 0.1).is_err());
        assert!(ld.hessian_first(&a, &b, 0.1).is_err());
        assert!(ld.hessian_second(&a, &b, 0.1).is_err());
    }
}

// ---------------------------------------------------------------------------
// Item 4: [VCI] §4.1 by hand
// ---------------------------------------------------------------------------

/// \[VCI\] §4.1, with the paper's names `q = (x, y)`, `v = (v_x, v_y)` for the
/// two points: `L_d(q, v, h) = m/(2h) ((v_x−x)² + (v_y−y)²) − ½ h m g (y + v_y)`.
struct HandParticle {
    m: f64,
    g: f64,
}

impl HandParticle {
    fn value(&self, q: &SVector<f64, 2>, v: &SVector<f64, 2>, h: f64) -> f64 {
        let (dx, dy) = (v[0] - q[0], v[1] - q[1]);
        self.m / (2.0 * h) * (dx * dx + dy * dy) - 0.5 * h * self.m * self.g * (q[1] + v[1])
    }
    /// `D1 = (−m/h (v_x − x), −m/h (v_y − y) − ½ h m g)`.
    fn d1(&self, q: &SVector<f64, 2>, v: &SVector<f64, 2>, h: f64) -> SVector<f64, 2> {
        SVector::from([
            -self.m / h * (v[0] - q[0]),
            -self.m / h * (v[1] - q[1]) - 0.5 * h * self.m * self.g,
        ])
    }
    /// `D2 = (m/h (v_x − x), m/h (v_y − y) − ½ h m g)`.
    fn d2(&self, q: &SVector<f64, 2>, v: &SVector<f64, 2>, h: f64) -> SVector<f64, 2> {
        SVector::from([
            self.m / h * (v[0] - q[0]),
            self.m / h * (v[1] - q[1]) - 0.5 * h * self.m * self.g,
        ])
    }
    /// `D3 = −m/(2h²) |v − q|² − ½ m g (y + v_y)`.
    fn d3(&self, q: &SVector<f64, 2>, v: &SVector<f64, 2>, h: f64) -> f64 {
        let (dx, dy) = (v[0] - q[0], v[1] - q[1]);
        -self.m / (2.0 * h * h) * (dx * dx + dy * dy) - 0.5 * self.m * self.g * (q[1] + v[1])
    }
    /// `D23 = −m/h² (v − q) − ½ m g e_y`.
    fn d23(&self, q: &SVector<f64, 2>, v: &SVector<f64, 2>, h: f64) -> SVector<f64, 2> {
        SVector::from([
            -self.m / (h * h) * (v[0] - q[0]),
            -self.m / (h * h) * (v[1] - q[1]) - 0.5 * self.m * self.g,
        ])
    }
}

#[test]
fn bouncing_particle_midpoint_by_hand() {
    const TOL: f64 = 1e-13;
    let sys = BouncingParticle { m: 1.3, g: 9.8 };
    let hand = HandParticle { m: 1.3, g: 9.8 };
    let map = Discretization::Midpoint;
    let ld = DiscreteLagrangian::<_, _, 2, 0>::new(&sys, &map);
    let mut rng = SmallRng::seed_from_u64(41);
    for _ in 0..200 {
        let h = rand_step(&mut rng, 1e-3, 0.1);
        let q = rand_vec::<2>(&mut rng, 3.0);
        let v = q + rand_vec::<2>(&mut rng, 5.0) * h;
        assert_rel_scalar(
            "L_d",
            ld.value(&q, &v, h).unwrap(),
            hand.value(&q, &v, h),
            TOL,
        );
        let jet = ld.jet(&q, &v, h).unwrap();
        assert_rel_scalar("jet.value", jet.value, hand.value(&q, &v, h), TOL);
        assert_rel("D1", &jet.d1, &hand.d1(&q, &v, h), TOL);
        assert_rel("D2", &jet.d2, &hand.d2(&q, &v, h), TOL);
        let d12 = SMatrix::<f64, 2, 2>::identity() * (-hand.m / h);
        assert_rel("D12 = −m/h I", &jet.d12, &d12, TOL);
        assert_rel_scalar("D3", ld.d3(&q, &v, h).unwrap(), hand.d3(&q, &v, h), TOL);
        let tj = ld.time_jet(&q, &v, h).unwrap();
        assert_rel_scalar("time_jet.d3", tj.d3, hand.d3(&q, &v, h), TOL);
        assert_rel("time_jet.d2", &tj.d2, &hand.d2(&q, &v, h), TOL);
        assert_rel("D23", &tj.d23, &hand.d23(&q, &v, h), TOL);
        // E_d = m/(2h²)|v − q|² + ½ m g (y + v_y)
        assert_rel_scalar(
            "E_d",
            ld.energy(&q, &v, h).unwrap(),
            -hand.d3(&q, &v, h),
            TOL,
        );
        let (_, d11) = ld.hessian_first(&q, &v, h).unwrap();
        let (_, d22) = ld.hessian_second(&q, &v, h).unwrap();
        assert_rel("D11 = m/h I", &d11, &(-d12), TOL);
        assert_rel("D22 = m/h I", &d22, &(-d12), TOL);
        // reversed: D1 L_d*(v, q) = D2 L_d(q, v)
        let rev = ld.oriented(Orientation::Reversed).jet(&v, &q, h).unwrap();
        assert_rel("reversed D1", &rev.d1, &hand.d2(&q, &v, h), TOL);
        assert_rel("reversed D2", &rev.d2, &hand.d1(&q, &v, h), TOL);
    }
}

/// The paper's discrete initial data `q0 = q(0) − h/2 v(0)`, `q1 = q(0) + h/2 v(0)`
/// are `R̃` of the midpoint map, and `−D1 L_d(q0, q1)` is the continuous
/// momentum up to `O(h)` (exactly `m v(0) + ½ h m g e_y`).
#[test]
fn bouncing_particle_discrete_initial_data() {
    let sys = BouncingParticle { m: 1.3, g: 9.8 };
    let map = Discretization::Midpoint;
    let (q, v, h) = (SVector::from([0.0, 2.0]), SVector::from([1.0, 0.0]), 1e-2);
    let (q0, q1) = map.psi_inverse(&q, &v, h).unwrap();
    approx::assert_relative_eq!(q0, q - v * (h / 2.0), max_relative = 1e-15);
    approx::assert_relative_eq!(q1, q + v * (h / 2.0), max_relative = 1e-15);
    let ld = DiscreteLagrangian::<_, _, 2, 0>::new(&sys, &map);
    let p0 = -ld.d1(&q0, &q1, h).unwrap();
    let want = SVector::from([1.3, 0.5 * h * 1.3 * 9.8]);
    approx::assert_relative_eq!(p0, want, max_relative = 1e-13);
    approx::assert_relative_eq!(p0, sys.momentum(&q, &v), epsilon = h * 1.3 * 9.8);
}

/// A charge in the field `B(q) = 1 + 0.3 x + 0.2 y²` with a non-quadratic
/// kinetic term: the gyroscopic force `F = B(q) (v_y, −v_x)`.
struct Charged;

impl System<2, 0> for Charged {
    fn lagrangian<S: diracvi_geometry::AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        let k = v.dot(v);
        k * 0.5 + k * k * 0.05 - q[0] * q[1] * 0.3
    }
    fn constraint_forms<S: diracvi_geometry::AdScalar>(
        &self,
        _q: &SVector<S, 2>,
    ) -> SMatrix<S, 0, 2> {
        SMatrix::zeros()
    }
    fn gyroscopic_force<S: diracvi_geometry::AdScalar>(
        &self,
        q: &SVector<S, 2>,
        v: &SVector<S, 2>,
    ) -> Option<SVector<S, 2>> {
        let b = q[0] * 0.3 + q[1] * q[1] * 0.2 + 1.0;
        Some(SVector::from([v[1] * b, -v[0] * b]))
    }
}

impl Charged {
    /// The discrete forces of the raw step by hand: `h w_i F(q, v)` at the
    /// node `q = w0 q0 + w1 q1`, `v = (q1 − q0)/h`.
    fn forces(
        map: Discretization,
        q0: &SVector<f64, 2>,
        q1: &SVector<f64, 2>,
        h: f64,
    ) -> (SVector<f64, 2>, SVector<f64, 2>) {
        let (w0, w1) = match map {
            Discretization::Forward => (1.0, 0.0),
            Discretization::Midpoint => (0.5, 0.5),
        };
        let f = Charged
            .gyroscopic_force(&(q0 * w0 + q1 * w1), &((q1 - q0) / h))
            .unwrap();
        (f * (h * w0), f * (h * w1))
    }
}

/// With a gyroscopic force, every first derivative is `D L_d` plus the
/// discrete force (by hand), and every second derivative is the finite
/// difference of those sums (no longer symmetric), in both orientations;
/// `L_d` and `D3 L_d` are unchanged.
#[test]
fn gyroscopic_forces_enter_every_derivative() {
    let mut rng = SmallRng::seed_from_u64(17);
    for map in Discretization::ALL {
        let forward = DiscreteLagrangian::<_, _, 2, 0>::new(&Charged, &map);
        for orientation in [Orientation::Forward, Orientation::Reversed] {
            let ld = forward.oriented(orientation);
            for _ in 0..SAMPLES {
                let h = rand_step(&mut rng, 1e-3, 0.1);
                let a = rand_vec::<2>(&mut rng, 2.0);
                let b = a + rand_vec::<2>(&mut rng, 4.0) * h;
                let what = |s: &str| format!("charged [{map}] {orientation:?}: {s}");
                let dq = 1e-3 * (b - a).amax().clamp(1e-2, 1.0);
                let dt = 1e-3 * h;
                let f =
                    |x: &SVector<f64, 2>, y: &SVector<f64, 2>, t: f64| ld.value(x, y, t).unwrap();
                let d1 = |x: &SVector<f64, 2>, y: &SVector<f64, 2>, t: f64| ld.d1(x, y, t).unwrap();
                let d2 = |x: &SVector<f64, 2>, y: &SVector<f64, 2>, t: f64| ld.d2(x, y, t).unwrap();
                let (f_a, f_b) = match orientation {
                    Orientation::Forward => Charged::forces(map, &a, &b, h),
                    Orientation::Reversed => {
                        let (f0, f1) = Charged::forces(map, &b, &a, h);
                        (f1, f0)
                    }
                };
                let jet = ld.jet(&a, &b, h).unwrap();
                let tj = ld.time_jet(&a, &b, h).unwrap();
                let fd1 = fd_gradient(|x| f(x, &b, h), &a, dq) + f_a;
                let fd2 = fd_gradient(|y| f(&a, y, h), &b, dq) + f_b;
                assert_rel(&what("D1 + f_a"), &jet.d1, &fd1, FD_TOL);
                assert_rel(&what("D2 + f_b"), &jet.d2, &fd2, FD_TOL);
                assert_rel(&what("d1()"), &d1(&a, &b, h), &jet.d1, SAME_TOL);
                assert_rel(&what("d2()"), &d2(&a, &b, h), &jet.d2, SAME_TOL);
                assert_rel(&what("time_jet.d2"), &tj.d2, &jet.d2, SAME_TOL);
                let fd3 = fd_scalar(|t| f(&a, &b, t), h, dt);
                assert_rel_scalar(&what("D3 unchanged"), tj.d3, fd3, FD_TOL);
                let fd12 = fd_jacobian(|y| d1(&a, y, h), &b, dq);
                assert_rel(&what("∂(D1 + f_a)/∂b"), &jet.d12, &fd12, FD_TOL);
                let fd23 = fd_vector(|t| d2(&a, &b, t), h, dt);
                assert_rel(&what("∂(D2 + f_b)/∂h"), &tj.d23, &fd23, FD_TOL);
                let (g11, h11) = ld.hessian_first(&a, &b, h).unwrap();
                assert_rel(&what("hessian_first gradient"), &g11, &jet.d1, SAME_TOL);
                let fd11 = fd_jacobian(|x| d1(x, &b, h), &a, dq);
                assert_rel(&what("∂(D1 + f_a)/∂a"), &h11, &fd11, FD_TOL);
                let (g22, h22) = ld.hessian_second(&a, &b, h).unwrap();
                assert_rel(&what("hessian_second gradient"), &g22, &jet.d2, SAME_TOL);
                let fd22 = fd_jacobian(|y| d2(&a, y, h), &b, dq);
                assert_rel(&what("∂(D2 + f_b)/∂b"), &h22, &fd22, FD_TOL);
                // the forced DEL along y and its gradient in the middle point
                let c = b * 2.0 - a;
                let y = SVector::from([1.0, -0.37]);
                let del = |m: &SVector<f64, 2>| y.dot(&(d2(&a, m, h) + d1(m, &c, h)));
                let (value, gradient) = ld.del_directional(&a, &b, &c, h, &y).unwrap();
                let scale = y.abs().dot(&(jet.d2.abs() + d1(&b, &c, h).abs()));
                assert!(
                    (value - del(&b)).abs() <= SAME_TOL * scale,
                    "{}",
                    what("del_directional value")
                );
                assert_rel(
                    &what("del_directional gradient"),
                    &gradient,
                    &fd_gradient(del, &b, dq),
                    FD_TOL,
                );
            }
        }
    }
}
