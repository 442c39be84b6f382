//! The linear solver chosen by structure (`StructuredLu`) in the
//! run-time-sized Lagrange–Dirac stepper: a chain of 60 bodies with one
//! nonholonomic row, its Lagrangian declared term by term, gets the sparse
//! LU, and its trajectory equals — to round-off — the one with the dense
//! LU and the one of the same system without declared terms (whole-
//! Lagrangian derivatives, dense LU). Small or densely coupled systems keep
//! the dense LU.

use crate::common::chain_start;
use diracvi_discrete_dirac::dynamic::DynLagrangeDirac;
use diracvi_discrete_dirac::{Direction, Structure, StructuredLu};
use diracvi_geometry::dynamic::{DynSystem, LagrangianTerms};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization};

/// `k` bodies with nonlinear nearest-neighbour springs and the row
/// `Σ_i cos(0.1 q_i) (1 + 0.01 i) q̇_i = 0`; term `i`: the kinetic energy
/// of body `i` and the spring `(i, i + 1)` (the last: body `k − 1` alone).
struct Chain {
    k: usize,
    terms: Option<LagrangianTerms>,
}

impl Chain {
    fn new(k: usize, declared: bool) -> Self {
        let terms = declared.then(|| {
            LagrangianTerms::new(
                k,
                (0..k).map(|i| if i + 1 < k { vec![i, i + 1] } else { vec![i] }),
            )
            .unwrap()
        });
        Self { k, terms }
    }

    fn term<S: AdScalar>(i: usize, last: bool, q: &[S], v: &[S]) -> S {
        let mut l = v[0] * v[0] * (1.0 + 0.01 * i as f64) * 0.5;
        if !last {
            let s = q[1] - q[0] - 1.0;
            l -= s * s * 0.5 + s.powi(4) * 0.25;
        }
        l
    }
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
            let last = i + 1 == self.k;
            let w = if last { 1 } else { 2 };
            l += Self::term(i, last, &q[i..i + w], &v[i..i + w]);
        }
        l
    }
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        for (i, x) in a.iter_mut().enumerate() {
            *x = (q[i] * 0.1).cos() * (1.0 + i as f64 * 0.01);
        }
    }
    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        self.terms.as_ref()
    }
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        Self::term(e, e + 1 == self.k, q, v)
    }
}

#[test]
fn a_declared_chain_takes_the_sparse_lu_and_follows_the_dense_trajectory() {
    let k = 60;
    let declared = Chain::new(k, true);
    let whole = Chain::new(k, false);
    assert_eq!(
        StructuredLu::for_system(&declared).structure(),
        Structure::Sparse
    );
    assert_eq!(
        StructuredLu::for_system(&whole).structure(),
        Structure::Dense
    );
    // small: the dense LU's plain loops win
    assert_eq!(
        StructuredLu::for_system(&Chain::new(12, true)).structure(),
        Structure::Dense
    );
    // a dense pattern (every pair coupled): dense
    let all = LagrangianTerms::new(30, [(0..30).collect::<Vec<_>>()]).unwrap();
    struct Blob(LagrangianTerms);
    impl DynSystem for Blob {
        fn coordinate_count(&self) -> usize {
            30
        }
        fn constraint_count(&self) -> usize {
            0
        }
        fn lagrangian<S: AdScalar>(&self, _q: &[S], v: &[S]) -> S {
            v.iter().fold(S::from(0.0), |s, &x| s + x * x)
        }
        fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
        fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
            Some(&self.0)
        }
    }
    assert_eq!(
        StructuredLu::for_system(&Blob(all)).structure(),
        Structure::Dense
    );

    let s0 = chain_start(&declared);
    let (map, cd) = (Discretization::Midpoint, ConstraintDiscretization::Midpoint);
    let mut sparse = DynLagrangeDirac::new(&declared, map, cd, Direction::Forward);
    let mut dense = DynLagrangeDirac::with_linear_solver(
        &declared,
        map,
        cd,
        Direction::Forward,
        StructuredLu::dense(k + 1),
    )
    .unwrap();
    let mut reference = DynLagrangeDirac::new(&whole, map, cd, Direction::Forward);
    let (mut a, mut b, mut c) = (s0.clone(), s0.clone(), s0.clone());
    let mut worst: f64 = 0.0;
    // 1.5 s in 60 steps (the test crate runs unoptimised)
    for _ in 0..60 {
        a = sparse.step(&a, 2.5e-2).unwrap().0;
        b = dense.step(&b, 2.5e-2).unwrap().0;
        c = reference.step(&c, 2.5e-2).unwrap().0;
        for (x, y) in [(&a, &b), (&a, &c)] {
            let dq = (&x.q - &y.q).amax() / y.q.amax();
            let dp = (&x.p - &y.p).amax() / y.p.amax();
            worst = worst.max(dq).max(dp);
        }
    }
    // Newton stops at its tolerance (1e-12 of the equation scale) and
    // corrects once; the three solves differ by the rounding of their
    // linear algebra and derivative sums only. Measured: ~1e-14.
    eprintln!("sparse vs dense vs whole-L: max relative deviation {worst:.2e}");
    assert!(worst <= 1e-11, "relative deviation {worst:e}");
    assert!((&a.q - &s0.q).amax() > 0.1, "it moves");
}
