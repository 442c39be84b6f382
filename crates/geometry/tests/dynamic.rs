//! The run-time-sized geometry (`dynamic`) against the compile-time-sized
//! one: every derivative of a `Fixed` system equals, bit for bit, what the
//! static core computes — also when the sizes exceed one chunk of
//! directions (n = 10, 12: several blocks) — and a native `DynSystem`
//! of 50 coordinates against central finite differences.

use crate::common;

use common::*;
use diracvi_geometry::dynamic::{
    DynBoundaryFrame, DynDiscreteLagrangian, DynLdJet, DynSystem, Erased, Fixed, LagrangianTerms,
    boundary_gradient_dyn, boundary_hessian_dyn, check_initial_dyn, constraint_jacobian_dyn,
    constraint_residual_dyn, legendre_jet_dyn, momentum_dyn, velocity_from_momentum_dyn,
};
use diracvi_geometry::{
    AdScalar, BoundaryFrame, ConstraintDiscretization, DiscreteLagrangian, Discretization,
    GeometryError, Orientation, SMatrix, SVector, System, boundary_gradient, check_initial,
    legendre_jet,
};
use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand::rngs::SmallRng;

/// `k` coupled pendulum-like coordinates with nonlinear springs, a
/// velocity-dependent coupling, `M` nonholonomic rows and two walls: a
/// static system larger than one chunk.
#[derive(Clone, Copy)]
struct Coupled<const K: usize, const M: usize>;

impl<const K: usize, const M: usize> System<K, M> for Coupled<K, M> {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, K>, v: &SVector<S, K>) -> S {
        let mut l = S::from(0.0);
        for i in 0..K {
            l += v[i] * v[i] * (0.5 + 0.1 * i as f64) - q[i].cos() * 2.0;
            if i + 1 < K {
                l += (q[i + 1] - q[i]).sin() * v[i] * v[i + 1] * 0.3
                    - (q[i + 1] - q[i]).powi(4) * 0.05;
            }
        }
        l + v[0] * v[K - 1] * q[K / 2].cos() * 0.2
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, K>) -> SMatrix<S, M, K> {
        SMatrix::from_fn(|r, c| {
            if c == r {
                q[c + 1].cos() + 1.5
            } else if c == r + 2 {
                q[r].sin()
            } else if c == K - 1 {
                S::from(-0.5)
            } else {
                S::from(0.0)
            }
        })
    }
    fn boundary_count(&self) -> usize {
        2
    }
    fn boundary<S: AdScalar>(&self, j: usize, q: &SVector<S, K>) -> S {
        if j == 0 {
            S::from(25.0) - q.dot(q)
        } else {
            q[K - 1] + q[0] * q[1] + 3.0
        }
    }
    fn gyroscopic_force<S: AdScalar>(
        &self,
        q: &SVector<S, K>,
        v: &SVector<S, K>,
    ) -> Option<SVector<S, K>> {
        if M == 0 {
            return None;
        }
        // F = B(q) v with B antisymmetric: workless.
        let b = q[0].cos() + 1.0;
        Some(SVector::from_fn(|i, _| {
            let next = v[(i + 1) % K];
            let prev = v[(i + K - 1) % K];
            (next - prev) * b
        }))
    }
}

fn bits_equal(what: &str, a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            x.to_bits() == y.to_bits() || (*x == 0.0 && *y == 0.0),
            "{what}[{i}]: dynamic {x:e} vs static {y:e}"
        );
    }
}

fn dvec<const N: usize>(x: &SVector<f64, N>) -> DVector<f64> {
    DVector::from_column_slice(x.as_slice())
}

fn dmat<const R: usize, const C: usize>(x: &SMatrix<f64, R, C>) -> DMatrix<f64> {
    DMatrix::from_column_slice(R, C, x.as_slice())
}

/// Every derivative of `system` through both maps, both orientations and
/// two units at random points: dynamic = static, bit for bit.
fn compare<Sy: System<N, M> + Copy + Send + Sync + 'static, const N: usize, const M: usize>(
    system: Sy,
    seed: u64,
) {
    let mut rng = SmallRng::seed_from_u64(seed);
    // Reached through `Erased`, as the runner reaches every model: the
    // run-time core is then compiled once for all the systems of this test
    // instead of once per system (docs/theory.md §11.5).
    let fixed = Fixed::<Sy, N, M>(system);
    let dynamic: Erased = Erased::new(&fixed);
    for map in Discretization::ALL {
        for orientation in [Orientation::Forward, Orientation::Reversed] {
            for unit in [1.0, 0.25] {
                for _ in 0..4 {
                    let a = rand_vec::<N>(&mut rng, 1.0);
                    let d = rand_vec::<N>(&mut rng, 0.05);
                    let d2 = rand_vec::<N>(&mut rng, 0.05);
                    let y = rand_vec::<N>(&mut rng, 1.0);
                    let h = 0.01 + 0.05 * rand_vec::<1>(&mut rng, 1.0)[0].abs();
                    let st = DiscreteLagrangian::<Sy, Discretization, N, M>::new(&system, &map)
                        .oriented(orientation)
                        .in_units(unit);
                    let dy = DynDiscreteLagrangian::new(&dynamic, map)
                        .oriented(orientation)
                        .in_units(unit);
                    let (ad, dd) = (dvec(&a), dvec(&d));
                    let tag = format!("{} {orientation:?} u={unit}", map);

                    let jet = st.jet_increment(&a, &d, h).unwrap();
                    let mut out = DynLdJet::zeros(N);
                    dy.jet_increment(&ad, &dd, h, &mut out).unwrap();
                    bits_equal(&format!("{tag} L_d"), &[out.value], &[jet.value]);
                    bits_equal(&format!("{tag} D1"), out.d1.as_slice(), jet.d1.as_slice());
                    bits_equal(&format!("{tag} D2"), out.d2.as_slice(), jet.d2.as_slice());
                    bits_equal(
                        &format!("{tag} D12"),
                        out.d12.as_slice(),
                        jet.d12.as_slice(),
                    );

                    let tj = st.time_jet_increment(&a, &d, h).unwrap();
                    let dtj = dy.time_jet_increment(&ad, &dd, h).unwrap();
                    bits_equal(&format!("{tag} D3"), &[dtj.d3], &[tj.d3]);
                    bits_equal(&format!("{tag} tD2"), dtj.d2.as_slice(), tj.d2.as_slice());
                    bits_equal(&format!("{tag} D23"), dtj.d23.as_slice(), tj.d23.as_slice());

                    let mut g = DVector::zeros(N);
                    dy.d1_increment(&ad, &dd, h, &mut g).unwrap();
                    let d1 = st.d1_increment(&a, &d, h).unwrap();
                    bits_equal(&format!("{tag} d1"), g.as_slice(), d1.as_slice());
                    dy.d2_increment(&ad, &dd, h, &mut g).unwrap();
                    let d2v = st.d2_increment(&a, &d, h).unwrap();
                    bits_equal(&format!("{tag} d2"), g.as_slice(), d2v.as_slice());

                    let e = st.energy_increment(&a, &d, h).unwrap();
                    bits_equal(
                        &format!("{tag} E_d"),
                        &[dy.energy_increment(&ad, &dd, h).unwrap()],
                        &[e],
                    );

                    let b = a + d;
                    let (g1, h1) = st.hessian_first(&a, &b, h).unwrap();
                    let (dg1, dh1) = dy.hessian_first(&ad, &dvec(&b), h).unwrap();
                    bits_equal(&format!("{tag} H1 g"), dg1.as_slice(), g1.as_slice());
                    bits_equal(&format!("{tag} D11"), dh1.as_slice(), h1.as_slice());
                    let (g2, h2) = st.hessian_second(&a, &b, h).unwrap();
                    let (dg2, dh2) = dy.hessian_second(&ad, &dvec(&b), h).unwrap();
                    bits_equal(&format!("{tag} H2 g"), dg2.as_slice(), g2.as_slice());
                    bits_equal(&format!("{tag} D22"), dh2.as_slice(), h2.as_slice());

                    let (v, grad) = st.del_directional_increment(&a, &d, &d2, h, &y).unwrap();
                    let (dv, dgrad) = dy
                        .del_directional_increment(&ad, &dd, &dvec(&d2), h, &dvec(&y))
                        .unwrap();
                    bits_equal(&format!("{tag} del"), &[dv], &[v]);
                    bits_equal(
                        &format!("{tag} del grad"),
                        dgrad.as_slice(),
                        grad.as_slice(),
                    );

                    if M > 0 {
                        for cd in [
                            ConstraintDiscretization::Retraction,
                            ConstraintDiscretization::Midpoint,
                        ] {
                            let (c, jc) = cd
                                .jacobian_increment(&system, &map, orientation, &a, &d, h)
                                .unwrap();
                            let mut dc = DVector::zeros(M);
                            let mut djc = DMatrix::zeros(M, N);
                            constraint_jacobian_dyn(
                                cd,
                                &dynamic,
                                orientation,
                                &ad,
                                &dd,
                                h,
                                &mut dc,
                                &mut djc,
                            )
                            .unwrap();
                            bits_equal(&format!("{tag} {cd} ω"), dc.as_slice(), c.as_slice());
                            bits_equal(
                                &format!("{tag} {cd} ∂ω"),
                                djc.as_slice(),
                                dmat(&jc).as_slice(),
                            );
                        }
                        if orientation == Orientation::Forward {
                            let cd = ConstraintDiscretization::Midpoint;
                            // as the steppers measure it: from the exact increment
                            let c: SVector<f64, M> = cd
                                .evaluate_step(&system, &map, orientation, &a, &b, &d, h)
                                .unwrap();
                            let r = c.amax() * h / b.norm().max(1.0);
                            let dr =
                                constraint_residual_dyn(cd, &dynamic, orientation, &ad, &dd, h)
                                    .unwrap();
                            // a diagnostic: nalgebra's norm of a compile-time-sized
                            // vector may round differently in the last bit
                            assert!((r - dr).abs() <= 4e-16 * r.abs(), "{tag}: {r:e} vs {dr:e}");
                        }
                    }
                }
            }
        }
    }
    // The Legendre map and boundary frames.
    let q = rand_vec::<N>(&mut rng, 1.0);
    let v = rand_vec::<N>(&mut rng, 1.0);
    let (p, hess) = legendre_jet::<Sy, N, M>(&system, &q, &v);
    let (dp, dhess) = legendre_jet_dyn(&dynamic, &dvec(&q), &dvec(&v));
    bits_equal("legendre p", dp.as_slice(), p.as_slice());
    bits_equal("legendre H", dhess.as_slice(), hess.as_slice());
    bits_equal(
        "momentum",
        momentum_dyn(&dynamic, &dvec(&q), &dvec(&v)).as_slice(),
        system.momentum(&q, &v).as_slice(),
    );
    for j in 0..system.boundary_count() {
        let (g, dg) = boundary_gradient::<Sy, N, M>(&system, j, &q).unwrap();
        let (dgv, ddg) = boundary_gradient_dyn(&dynamic, j, &dvec(&q)).unwrap();
        bits_equal("g", &[dgv], &[g]);
        bits_equal("dg", ddg.as_slice(), dg.as_slice());
        let frame = BoundaryFrame::<N>::new::<Sy, M>(&system, j, &q).unwrap();
        let dframe = DynBoundaryFrame::new(&dynamic, j, &dvec(&q)).unwrap();
        bits_equal("frame", dframe.frame.as_slice(), frame.frame.as_slice());
    }
}

#[test]
fn fixed_systems_equal_the_static_core_bit_for_bit() {
    compare(BouncingParticleC, 1);
    compare(PendulumC, 2);
    compare(EllipseC, 3);
    compare(LcC, 4);
    compare(NonQuadraticC, 5);
    compare(KnifeEdgeC, 6);
}

#[test]
fn several_chunks_equal_the_static_core_bit_for_bit() {
    // one chunk of 6 with a spare direction, then 2 and 2 chunks of 8
    compare(Coupled::<5, 0>, 7);
    compare(Coupled::<10, 3>, 8);
    compare(Coupled::<12, 0>, 9);
    compare(Coupled::<12, 2>, 10);
}

// `Copy` wrappers of the shared test systems (which are not `Copy`).
macro_rules! copy_wrapper {
    ($name:ident, $inner:ty, $n:literal, $m:literal, $make:expr) => {
        #[derive(Clone, Copy)]
        struct $name;
        impl System<$n, $m> for $name {
            fn lagrangian<S: AdScalar>(&self, q: &SVector<S, $n>, v: &SVector<S, $n>) -> S {
                let s: $inner = $make;
                s.lagrangian(q, v)
            }
            fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, $n>) -> SMatrix<S, $m, $n> {
                let s: $inner = $make;
                s.constraint_forms(q)
            }
            fn boundary_count(&self) -> usize {
                let s: $inner = $make;
                s.boundary_count()
            }
            fn boundary<S: AdScalar>(&self, j: usize, q: &SVector<S, $n>) -> S {
                let s: $inner = $make;
                s.boundary(j, q)
            }
            fn discrete_constraint<S: AdScalar>(
                &self,
                q0: &SVector<S, $n>,
                q1: &SVector<S, $n>,
                h: S,
            ) -> Option<SVector<S, $m>> {
                let s: $inner = $make;
                s.discrete_constraint(q0, q1, h)
            }
        }
    };
}
copy_wrapper!(
    BouncingParticleC,
    BouncingParticle,
    2,
    0,
    BouncingParticle::default()
);
copy_wrapper!(
    PendulumC,
    NonholonomicPendulum,
    2,
    1,
    NonholonomicPendulum::default()
);
copy_wrapper!(EllipseC, BouncingEllipse, 3, 0, BouncingEllipse::default());
copy_wrapper!(LcC, LcCircuit, 4, 2, LcCircuit::default());
copy_wrapper!(NonQuadraticC, NonQuadratic, 2, 1, NonQuadratic);
copy_wrapper!(KnifeEdgeC, KnifeEdge, 3, 1, KnifeEdge);

/// A native run-time-sized system: a chain of `k` bodies with nonlinear
/// nearest-neighbour springs and a wall, no compile-time twin.
struct Chain {
    k: usize,
}

impl DynSystem for Chain {
    fn coordinate_count(&self) -> usize {
        self.k
    }
    fn constraint_count(&self) -> usize {
        1
    }
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        let mut l = S::from(0.0);
        for i in 0..self.k {
            l += v[i] * v[i] * (1.0 + 0.01 * i as f64) * 0.5;
            if i + 1 < self.k {
                let s = q[i + 1] - q[i] - 1.0;
                l -= s * s * 0.5 + s.powi(4) * 0.25;
            }
        }
        l
    }
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        for (i, x) in a.iter_mut().enumerate() {
            *x = (q[i] * 0.1).cos() * (1.0 + i as f64 * 0.01);
        }
    }
    fn boundary_count(&self) -> usize {
        1
    }
    fn boundary<S: AdScalar>(&self, _j: usize, q: &[S]) -> S {
        q[self.k - 1] * (-1.0) + self.k as f64 + 5.0
    }
}

/// [`Chain`] plus a wide coupling of its first 12 bodies and a constant,
/// declared as a sum of terms: kinetic + spring `{i, i+1}`, the last body's
/// kinetic term `{k-1}`, the wide term over 12 coordinates (more than one
/// chunk) and the constant (empty stencil).
struct TermChain {
    chain: Chain,
    terms: LagrangianTerms,
}

impl TermChain {
    fn new(k: usize) -> Self {
        let mut stencils: Vec<Vec<usize>> = (0..k - 1).map(|i| vec![i, i + 1]).collect();
        stencils.push(vec![k - 1]);
        stencils.push((0..12).collect());
        stencils.push(vec![]);
        Self {
            chain: Chain { k },
            terms: LagrangianTerms::new(k, stencils).unwrap(),
        }
    }
    fn kinetic<S: AdScalar>(i: usize, v: S) -> S {
        v * v * (1.0 + 0.01 * i as f64) * 0.5
    }
    fn spring<S: AdScalar>(q0: S, q1: S) -> S {
        let s = q1 - q0 - 1.0;
        s * s * 0.5 + s.powi(4) * 0.25
    }
    fn wide<S: AdScalar>(q: &[S], v: &[S]) -> S {
        (0..12).fold(S::from(0.0), |acc, i| acc + (q[i] * 0.3).cos() * v[i]) * 0.01
    }
}

impl DynSystem for TermChain {
    fn coordinate_count(&self) -> usize {
        self.chain.k
    }
    fn constraint_count(&self) -> usize {
        1
    }
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.chain.lagrangian(q, v) + Self::wide(q, v) + 3.0
    }
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        self.chain.constraint_forms(q, a)
    }
    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        Some(&self.terms)
    }
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        let k = self.chain.k;
        if e < k - 1 {
            Self::kinetic(e, v[0]) - Self::spring(q[0], q[1])
        } else if e == k - 1 {
            Self::kinetic(e, v[0])
        } else if e == k {
            Self::wide(q, v)
        } else {
            S::from(3.0)
        }
    }
}

#[test]
fn term_by_term_derivatives_equal_the_whole_lagrangians() {
    // The same system differentiated term by term and as a whole (the
    // terms hidden behind a wrapper that declares none): equal to round-off.
    struct Whole<'a>(&'a TermChain);
    impl DynSystem for Whole<'_> {
        fn coordinate_count(&self) -> usize {
            self.0.coordinate_count()
        }
        fn constraint_count(&self) -> usize {
            1
        }
        fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
            self.0.lagrangian(q, v)
        }
        fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
            self.0.constraint_forms(q, a)
        }
    }
    let system = TermChain::new(40);
    let n = 40;
    assert_eq!(system.terms.len(), 42);
    assert_eq!(system.terms.max_stencil(), 12);
    // 40 diagonal + 2·39 neighbour entries + the 12×12 block's new ones.
    assert_eq!(system.terms.pattern().count(), 40 + 78 + (144 - 12 - 22));
    let a = DVector::from_fn(n, |i, _| i as f64 + 0.1 * (i as f64).sin());
    let d = DVector::from_fn(n, |i, _| 0.01 * (0.3 * i as f64).cos());
    let h = 0.01;
    for map in Discretization::ALL {
        for orientation in [Orientation::Forward, Orientation::Reversed] {
            let by_terms = DynDiscreteLagrangian::new(&system, map)
                .oriented(orientation)
                .in_units(0.25);
            let whole_system = Whole(&system);
            let whole = DynDiscreteLagrangian::new(&whole_system, map)
                .oriented(orientation)
                .in_units(0.25);
            let (mut jt, mut jw) = (DynLdJet::zeros(n), DynLdJet::zeros(n));
            by_terms.jet_increment(&a, &d, h, &mut jt).unwrap();
            whole.jet_increment(&a, &d, h, &mut jw).unwrap();
            let close = |what: &str, x: &[f64], y: &[f64]| {
                let scale = y.iter().fold(1.0f64, |m, v| m.max(v.abs()));
                for (i, (u, w)) in x.iter().zip(y).enumerate() {
                    assert!(
                        (u - w).abs() <= 1e-13 * scale,
                        "{map} {orientation:?} {what}[{i}]: {u} vs {w}"
                    );
                }
            };
            close("value", &[jt.value], &[jw.value]);
            close("D1", jt.d1.as_slice(), jw.d1.as_slice());
            close("D2", jt.d2.as_slice(), jw.d2.as_slice());
            close("D12", jt.d12.as_slice(), jw.d12.as_slice());
            for (i, j) in (0..n).flat_map(|i| (0..n).map(move |j| (i, j))) {
                if jw.d12[(i, j)] != 0.0 {
                    assert!(system.terms.pattern().any(|e| e == (i, j)), "({i}, {j})");
                }
            }
            let (mut gt, mut gw) = (DVector::zeros(n), DVector::zeros(n));
            by_terms.d1_increment(&a, &d, h, &mut gt).unwrap();
            whole.d1_increment(&a, &d, h, &mut gw).unwrap();
            close("d1_increment", gt.as_slice(), gw.as_slice());
            by_terms.d2_increment(&a, &d, h, &mut gt).unwrap();
            whole.d2_increment(&a, &d, h, &mut gw).unwrap();
            close("d2_increment", gt.as_slice(), gw.as_slice());
            // The second derivatives over (a, b, h) of the tangent map.
            for with_h in [true, false] {
                let st = by_terms.second_over(&a, &d, h, with_h).unwrap();
                let sw = whole.second_over(&a, &d, h, with_h).unwrap();
                close("second value", &[st.value], &[sw.value]);
                close(
                    "second gradient",
                    st.gradient.as_slice(),
                    sw.gradient.as_slice(),
                );
                close(
                    "second jacobian",
                    st.jacobian.as_slice(),
                    sw.jacobian.as_slice(),
                );
            }
        }
    }
    // The Legendre map and its Hessian, term by term and whole.
    let whole = Whole(&system);
    let (pt, ht) = legendre_jet_dyn(&system, &a, &d);
    let (pw, hw) = legendre_jet_dyn(&whole, &a, &d);
    for (u, w) in pt.iter().chain(ht.iter()).zip(pw.iter().chain(hw.iter())) {
        assert!((u - w).abs() <= 1e-14, "Legendre: {u} vs {w}");
    }
    let (mt, mw) = (momentum_dyn(&system, &a, &d), momentum_dyn(&whole, &a, &d));
    assert!((&mt - &pw).amax() <= 1e-14 && (&mw - &pw).amax() <= 1e-14);
}

#[test]
fn malformed_stencils_are_refused() {
    let err = LagrangianTerms::new(3, [vec![0, 3]]).unwrap_err();
    assert!(
        matches!(err, GeometryError::BadStencil { term: 0, .. }),
        "{err}"
    );
    let err = LagrangianTerms::new(3, [vec![0], vec![2, 1]]).unwrap_err();
    assert!(
        err.to_string()
            .contains("term 1: bad stencil, coordinates must be strictly increasing"),
        "{err}"
    );
}

#[test]
fn a_fifty_body_chain_against_finite_differences() {
    let chain = Chain { k: 50 };
    let n = 50;
    let a = DVector::from_fn(n, |i, _| i as f64 + 0.1 * (i as f64).sin());
    let d = DVector::from_fn(n, |i, _| 0.01 * (0.3 * i as f64).cos());
    let h = 0.01;
    for map in Discretization::ALL {
        for orientation in [Orientation::Forward, Orientation::Reversed] {
            let ld = DynDiscreteLagrangian::new(&chain, map).oriented(orientation);
            let mut jet = DynLdJet::zeros(n);
            ld.jet_increment(&a, &d, h, &mut jet).unwrap();
            let value = |a: &DVector<f64>, d: &DVector<f64>| {
                ld.value_step(a.as_slice(), d.as_slice(), h).unwrap()
            };
            let delta = 1e-6;
            for i in [0, 7, 8, 31, 49] {
                // D1 at fixed b: move a, shrink d by the same amount.
                let e = DVector::from_fn(n, |j, _| if j == i { delta } else { 0.0 });
                let fd1 =
                    (value(&(&a + &e), &(&d - &e)) - value(&(&a - &e), &(&d + &e))) / (2.0 * delta);
                let fd2 = (value(&a, &(&d + &e)) - value(&a, &(&d - &e))) / (2.0 * delta);
                assert!(
                    (jet.d1[i] - fd1).abs() <= 1e-7 * jet.d1[i].abs().max(1.0),
                    "{map} D1[{i}] {} vs {fd1}",
                    jet.d1[i]
                );
                assert!(
                    (jet.d2[i] - fd2).abs() <= 1e-7 * jet.d2[i].abs().max(1.0),
                    "{map} D2[{i}] {} vs {fd2}",
                    jet.d2[i]
                );
                // column i of D12: D1 as b_i moves
                let mut plus = DVector::zeros(n);
                let mut minus = DVector::zeros(n);
                ld.d1_increment(&a, &(&d + &e), h, &mut plus).unwrap();
                ld.d1_increment(&a, &(&d - &e), h, &mut minus).unwrap();
                let col = (plus - minus) / (2.0 * delta);
                for j in 0..n {
                    assert!(
                        (jet.d12[(j, i)] - col[j]).abs() <= 1e-5 * jet.d12.amax(),
                        "{map} D12[{j},{i}] {} vs {}",
                        jet.d12[(j, i)],
                        col[j]
                    );
                }
            }
        }
    }
    // Legendre map: round trip, and the initial-data check.
    let v = DVector::from_fn(n, |i, _| 0.2 * (i as f64).cos());
    let p = momentum_dyn(&chain, &a, &v);
    let back = velocity_from_momentum_dyn(&chain, &a, &p, &DVector::zeros(n)).unwrap();
    assert!((back - &v).amax() <= 1e-13);
    let err = check_initial_dyn(&chain, 0.0, &a, &v).unwrap_err();
    assert!(
        matches!(err, GeometryError::InitialViolatesConstraint { row: 0, .. }),
        "{err}"
    );
    let err = check_initial_dyn(&chain, 0.0, &a, &DVector::zeros(3)).unwrap_err();
    assert!(
        matches!(
            err,
            GeometryError::DimensionMismatch {
                expected: 50,
                got: 3,
                ..
            }
        ),
        "{err}"
    );
    check_initial_dyn(&chain, 0.0, &a, &DVector::zeros(n)).unwrap();
    // the static check agrees with the dynamic one on a Fixed system
    let q = SVector::from([2.3, 0.1]);
    let v = SVector::from([0.4, 0.4 * (PendulumC.cos2(2.3) + std::f64::consts::PI)]);
    check_initial::<_, 2, 1>(&PendulumC, &q, &v).unwrap();
    check_initial_dyn(&Fixed::<_, 2, 1>(PendulumC), 0.0, &dvec(&q), &dvec(&v)).unwrap();
}

impl PendulumC {
    fn cos2(&self, theta: f64) -> f64 {
        theta.cos() * theta.cos()
    }
}

/// The second-derivative data of the tangent map (`second_increment`,
/// `boundary_hessian_dyn`) against fourth-order central differences of the
/// first-derivative functions, which are separate code (`d1_increment`,
/// `d2_increment`, `energy_increment`, `boundary_gradient_dyn`): a system
/// with a gyroscopic force over several chunks (2n + 1 = 21 variables), both
/// maps and orientations.
#[test]
fn second_derivatives_over_all_step_data_match_differences_of_the_first() {
    let sys = Fixed::<Coupled<10, 3>, 10, 3>(Coupled);
    let n = 10;
    let a = DVector::from_fn(n, |i, _| 0.3 * (i as f64).sin());
    let d = DVector::from_fn(n, |i, _| 0.01 * (1.0 + (i as f64).cos()));
    let h = 0.05;
    let first = |ld: &DynDiscreteLagrangian<'_, _>, a: &DVector<f64>, b: &DVector<f64>, h: f64| {
        let d = b - a;
        let mut g = DVector::zeros(2 * n + 1);
        let mut x = DVector::zeros(n);
        ld.d1_increment(a, &d, h, &mut x).unwrap();
        g.rows_mut(0, n).copy_from(&x);
        ld.d2_increment(a, &d, h, &mut x).unwrap();
        g.rows_mut(n, n).copy_from(&x);
        g[2 * n] = -ld.energy_increment(a, &d, h).unwrap();
        g
    };
    for map in [Discretization::Forward, Discretization::Midpoint] {
        for orientation in [Orientation::Forward, Orientation::Reversed] {
            let ld = DynDiscreteLagrangian::new(&sys, map).oriented(orientation);
            let second = ld.second_increment(&a, &d, h).unwrap();
            // `h` held fixed: the `(a, b)` entries bit for bit, `h`'s zero
            let fixed = ld.second_over(&a, &d, h, false).unwrap();
            for i in 0..=2 * n {
                for j in 0..=2 * n {
                    let (x, y) = (fixed.jacobian[(i, j)], second.jacobian[(i, j)]);
                    if i == 2 * n || j == 2 * n {
                        assert!(x == 0.0, "({i}, {j}): {x}");
                    } else {
                        assert_eq!(x.to_bits(), y.to_bits(), "({i}, {j})");
                    }
                }
            }
            let b = &a + &d;
            let g0 = first(&ld, &a, &b, h);
            assert!((&second.gradient - &g0).amax() < 1e-14 * g0.amax().max(1.0));
            let mut worst: f64 = 0.0;
            for j in 0..=2 * n {
                // `L_d` varies on the scale `h` in `h`, on the scale 1 in `(a, b)`.
                let delta = if j == 2 * n { 1e-3 * h } else { 1e-3 };
                let at = |e: f64| {
                    let (mut a1, mut b1, mut h1) = (a.clone(), b.clone(), h);
                    if j < n {
                        a1[j] += e;
                    } else if j < 2 * n {
                        b1[j - n] += e;
                    } else {
                        h1 += e;
                    }
                    first(&ld, &a1, &b1, h1)
                };
                let fd = (at(-2.0 * delta) - at(2.0 * delta) + (at(delta) - at(-delta)) * 8.0)
                    / (12.0 * delta);
                worst = worst.max((fd - second.jacobian.column(j)).amax());
            }
            let rel = worst / second.jacobian.amax();
            assert!(rel < 1e-9, "{map:?} {orientation:?}: {rel:.2e}");
        }
    }
    let q = DVector::from_fn(n, |i, _| 0.2 * i as f64 - 0.5);
    for j in 0..2 {
        let (g, grad, hess) = boundary_hessian_dyn(&sys, j, &q).unwrap();
        assert!((g - sys.boundary(j, q.as_slice())).abs() < 1e-15);
        let gradient = |q: &DVector<f64>| boundary_gradient_dyn(&sys, j, q).unwrap().1;
        assert!((&grad - gradient(&q)).amax() < 1e-15);
        let delta = 1e-3;
        for c in 0..n {
            let at = |e: f64| {
                let mut q1 = q.clone();
                q1[c] += e;
                gradient(&q1)
            };
            let fd = (at(-2.0 * delta) - at(2.0 * delta) + (at(delta) - at(-delta)) * 8.0)
                / (12.0 * delta);
            assert!(
                (fd - hess.column(c)).amax() < 1e-10,
                "piece {j}, column {c}"
            );
        }
        assert!((&hess - hess.transpose()).amax() == 0.0);
    }
    assert!(matches!(
        boundary_hessian_dyn(&sys, 2, &q),
        Err(GeometryError::NoSuchBoundaryPiece { piece: 2, count: 2 })
    ));
}

/// Three coordinates, eleven parameters entering `L` nonlinearly (masses,
/// couplings, a potential's coefficients): more parameters than one chunk.
struct Parametric;

impl Parametric {
    const THETA: [f64; 11] = [1.3, 0.7, 2.1, 0.4, 9.8, 0.25, 1.5, 0.6, 0.9, 0.35, 1.1];
}

impl DynSystem for Parametric {
    fn coordinate_count(&self) -> usize {
        3
    }
    fn constraint_count(&self) -> usize {
        0
    }
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        let t: Vec<S> = Self::THETA.iter().map(|&x| q[0] * 0.0 + x).collect();
        self.lagrangian_with(q, v, &t)
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
    fn parameter_count(&self) -> usize {
        Self::THETA.len()
    }
    fn parameter_values(&self) -> Vec<f64> {
        Self::THETA.to_vec()
    }
    fn lagrangian_with<S: AdScalar>(&self, q: &[S], v: &[S], t: &[S]) -> S {
        let kinetic = v[0] * v[0] * t[0] * 0.5
            + v[1] * v[1] * (t[1] + t[2] * q[0].cos().powi(2)) * 0.5
            + v[2] * v[2] * t[3] * 0.5
            + v[0] * v[2] * (q[1] * t[9]).sin() * t[10];
        let potential = t[4] * t[0] * (-q[0].cos())
            + t[5] * (q[1] - q[2] * t[6]).powi(2)
            + (q[2] * t[7]).exp() * t[8];
        kinetic - potential
    }
}

/// `∂(D1 L_d, D2 L_d, D3 L_d)/∂θ · D` from the mixed derivatives of `L`
/// alone (`parameter_rows`) equals the sum of the `s_a`, `s_b` columns of
/// the Hessian of the system lifted by the directions (`ParamLifted`), for
/// both maps and orientations.
#[test]
fn parameter_rows_equal_the_lifted_hessian() {
    use diracvi_geometry::dynamic::ParamLifted;
    let (n, p) = (3, Parametric::THETA.len());
    let a = DVector::from_column_slice(&[0.4, -0.3, 0.2]);
    let d = DVector::from_column_slice(&[0.05, 0.02, -0.04]);
    let h = 0.1;
    // two directions: a mix of all parameters, and one parameter
    let mut dirs = DMatrix::zeros(p, 2);
    for i in 0..p {
        dirs[(i, 0)] = 0.3 + 0.1 * i as f64;
    }
    dirs[(7, 1)] = 1.0;
    let lifted = ParamLifted::new(&Parametric, &dirs);
    let r = 2;
    let lift = |x: &DVector<f64>| {
        let mut y = DVector::zeros(n + r);
        y.rows_mut(0, n).copy_from(x);
        y
    };
    for map in [Discretization::Forward, Discretization::Midpoint] {
        for orientation in [Orientation::Forward, Orientation::Reversed] {
            let rows = DynDiscreteLagrangian::new(&Parametric, map)
                .oriented(orientation)
                .parameter_rows(&a, &d, h)
                .unwrap()
                * &dirs;
            let hess = DynDiscreteLagrangian::new(&lifted, map)
                .oriented(orientation)
                .second_increment(&lift(&a), &lift(&d), h)
                .unwrap()
                .jacobian;
            let np = n + r;
            for s in 0..r {
                for (row, lrow) in (0..n)
                    .map(|i| (i, i))
                    .chain((0..n).map(|i| (n + i, np + i)))
                    .chain([(2 * n, 2 * np)])
                {
                    let expected = hess[(lrow, n + s)] + hess[(lrow, np + n + s)];
                    assert!(
                        (rows[(row, s)] - expected).abs() <= 1e-13 * expected.abs().max(1.0),
                        "{map:?} {orientation:?} row {row} direction {s}: {} vs {expected}",
                        rows[(row, s)]
                    );
                }
            }
        }
    }
}

/// A driven unit mass, `L = ½ v² + F(t) q` with `F(t) = t`: the simplest
/// time-dependent system.
struct Driven;

impl DynSystem for Driven {
    fn coordinate_count(&self) -> usize {
        1
    }
    fn constraint_count(&self) -> usize {
        0
    }
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.lagrangian_at(q, v, 0.0)
    }
    fn time_dependent(&self) -> bool {
        true
    }
    fn lagrangian_at<S: AdScalar>(&self, q: &[S], v: &[S], t: f64) -> S {
        v[0] * v[0] * 0.5 + q[0] * t
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
}

/// The discrete Lagrangian samples a time-dependent `L` at the time of the
/// discretization point of the interval `[t_lo, t_lo + h]`, in both
/// orientations (docs/theory.md §8.8): for `L = ½ v² + t q`,
/// forward `D1 L_d(a, b) = −d/h + h t_lo`, midpoint
/// `D1 L_d = −d/h + (h/2)(t_lo + h/2)`; read reversed (the (−) step over
/// the same interval, `L_d^*(a, b) = L_d(b, a)`, `d = b − a`),
/// `D1 L_d^* = D2 L_d(b, a)`: `−d/h` (forward: the potential sits at `b`)
/// and `−d/h + (h/2)(t_lo + h/2)`.
/// Checked to 1e-15 against these closed forms.
#[test]
fn a_time_dependent_lagrangian_is_sampled_at_the_discretization_point() {
    let (t_lo, h) = (2.0, 0.5);
    let (a, d) = (DVector::from_element(1, 1.0), DVector::from_element(1, 0.3));
    let tm = t_lo + h / 2.0;
    for (map, orientation, expected) in [
        (
            Discretization::Forward,
            Orientation::Forward,
            -0.3 / h + h * t_lo,
        ),
        (
            Discretization::Midpoint,
            Orientation::Forward,
            -0.3 / h + h / 2.0 * tm,
        ),
        (Discretization::Forward, Orientation::Reversed, -0.3 / h),
        (
            Discretization::Midpoint,
            Orientation::Reversed,
            -0.3 / h + h / 2.0 * tm,
        ),
    ] {
        let ld = DynDiscreteLagrangian::new(&Driven, map)
            .oriented(orientation)
            .starting_at(t_lo);
        let mut d1 = DVector::zeros(1);
        ld.d1_increment(&a, &d, h, &mut d1).unwrap();
        assert!(
            (d1[0] - expected).abs() <= 1e-15,
            "{map:?} {orientation:?}: {} vs {expected}",
            d1[0]
        );
    }
    // Without a start the interval starts at 0; an autonomous system
    // ignores it.
    let ld = DynDiscreteLagrangian::new(&Driven, Discretization::Forward);
    let mut d1 = DVector::zeros(1);
    ld.d1_increment(&a, &d, h, &mut d1).unwrap();
    assert!((d1[0] + 0.3 / h).abs() <= 1e-15);
}
