//! The step Jacobian stored by structure (docs/theory.md §11.4): a system
//! with sparse couplings declared term by term is assembled straight into
//! the sparse pattern's values (no `(n + m)²` buffer), and its trajectory
//! equals the one with dense storage to round-off; a Jacobian that leaves
//! the declared pattern never gives a wrong Newton step (the structured LU
//! factors it densely, the sparse LU refuses it, the stepper refuses a
//! gyroscopic force or a degenerate step on sparse storage with a typed
//! error).

use crate::common::chain_start;
use diracvi_discrete_dirac::dynamic::{DynConstrainedLegendre, DynLagrangeDirac};
use diracvi_discrete_dirac::linear::Factorization;
use diracvi_discrete_dirac::{
    Direction, DynState, JacobianStorage, LinearSolver, SparseLu, SparsePattern, StepError,
    StepJacobian, Structure, StructuredLu,
};
use diracvi_geometry::dynamic::{DynSystem, LagrangianTerms};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization};
use nalgebra::{DMatrix, DVector};

/// `k` bodies with nonlinear nearest-neighbour springs, declared term by
/// term, and `rows` constraint rows `q̇_{3r} + cos(0.1 q_{3r+1}) q̇_{3r+1} = 0`
/// declared on their stencils `{3r, 3r + 1}` (with `g ≠ 0` a gyroscopic
/// force `F_{2j} = g v_{2j+1}`, `F_{2j+1} = −g v_{2j}`, probing the pattern
/// promise).
#[derive(Debug)]
struct Chain {
    k: usize,
    rows: usize,
    gyro: f64,
    terms: LagrangianTerms,
    row_stencils: LagrangianTerms,
}

impl Chain {
    fn new(k: usize, rows: usize, gyro: f64) -> Self {
        let terms = LagrangianTerms::new(
            k,
            (0..k).map(|i| if i + 1 < k { vec![i, i + 1] } else { vec![i] }),
        )
        .unwrap();
        let row_stencils = LagrangianTerms::new(k, (0..rows).map(|r| [3 * r, 3 * r + 1])).unwrap();
        Self {
            k,
            rows,
            gyro,
            terms,
            row_stencils,
        }
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
        self.rows
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
        a.fill(S::from(0.0));
        for r in 0..self.rows {
            a[r * self.k + 3 * r] = S::from(1.0);
            a[r * self.k + 3 * r + 1] = (q[3 * r + 1] * 0.1).cos();
        }
    }
    fn gyroscopic_force<S: AdScalar>(&self, _q: &[S], v: &[S], f: &mut [S]) -> bool {
        if self.gyro == 0.0 {
            return false;
        }
        // Workless: pairs (2j, 2j + 1) turned into each other.
        for j in 0..self.k / 2 {
            f[2 * j] = v[2 * j + 1] * self.gyro;
            f[2 * j + 1] = v[2 * j] * (-self.gyro);
        }
        true
    }
    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        Some(&self.terms)
    }
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        Self::term(e, e + 1 == self.k, q, v)
    }
    fn constraint_stencils(&self) -> Option<&LagrangianTerms> {
        Some(&self.row_stencils)
    }
    fn constraint_row<S: AdScalar>(&self, _r: usize, q: &[S], a: &mut [S]) {
        a[0] = S::from(1.0);
        a[1] = (q[1] * 0.1).cos();
    }
}

/// The default stepper of a 60-body chain with 10 declared constraint rows
/// stores its Jacobian sparsely, and follows the dense-storage stepper
/// (the same equations, dense LU) to 1e-13 relative over 200 steps, for the
/// plain and the symmetric step, forward and backward in time; likewise a
/// chain without constraints. Measured: at most ~3e-15.
#[test]
fn sparse_storage_follows_dense_storage_on_a_chain() {
    let mut worst: f64 = 0.0;
    for (k, rows) in [(60, 10), (40, 0)] {
        let chain = Chain::new(k, rows, 0.0);
        let size = k + rows;
        let s0 = chain_start(&chain);
        let cd = ConstraintDiscretization::Midpoint;
        for direction in [Direction::Forward, Direction::Backward] {
            for symmetric in [false, true] {
                let mut sparse =
                    DynLagrangeDirac::new(&chain, Discretization::Midpoint, cd, direction);
                assert_eq!(sparse.jacobian_structure(), Structure::Sparse);
                let mut dense = DynLagrangeDirac::with_linear_solver(
                    &chain,
                    Discretization::Midpoint,
                    cd,
                    direction,
                    StructuredLu::dense(size),
                )
                .unwrap();
                assert_eq!(dense.jacobian_structure(), Structure::Dense);
                if symmetric {
                    sparse = sparse.symmetric();
                    dense = dense.symmetric();
                }
                let (mut a, mut b) = (s0.clone(), s0.clone());
                for _ in 0..200 {
                    a = sparse.step(&a, 1e-2).unwrap().0;
                    b = dense.step(&b, 1e-2).unwrap().0;
                    let scale = b.q.amax().max(b.p.amax()).max(1.0);
                    worst = worst.max((&a.q - &b.q).amax() / scale);
                    worst = worst.max((&a.p - &b.p).amax() / scale);
                }
                assert!((&a.q - &s0.q).amax() > 0.05, "it moves");
                if rows > 0 {
                    // The constraints hold on the sparse side too.
                    let mu = sparse.last_multipliers();
                    assert_eq!(mu.len(), rows);
                    assert!(mu.iter().all(|v| v.is_finite()));
                }
            }
        }
    }
    eprintln!("sparse vs dense storage: max relative deviation {worst:.2e}");
    assert!(worst <= 1e-13, "relative deviation {worst:e}");
}

/// A gyroscopic force couples every coordinate: the structure then picks
/// dense storage (and the step runs); sparse storage forced on such a
/// system is refused with a typed error at the first step, not solved with
/// a Jacobian cut to the pattern.
#[test]
fn a_jacobian_outside_the_pattern_is_refused_or_stored_densely() {
    let chain = Chain::new(30, 0, 0.3);
    let cd = ConstraintDiscretization::Midpoint;
    let s0 = chain_start(&chain);
    let mut chosen =
        DynLagrangeDirac::new(&chain, Discretization::Midpoint, cd, Direction::Forward);
    assert_eq!(chosen.jacobian_structure(), Structure::Dense);
    let s1 = chosen.step(&s0, 1e-2).unwrap().0;
    assert!((&s1.q - &s0.q).amax() > 1e-4);
    assert!(StructuredLu::sparse_for_step(&chain, cd).is_err());
    let pattern: Vec<(usize, usize)> = chain.terms.pattern().collect();
    let forced = StructuredLu::sparse(pattern, 30).unwrap();
    let mut forced = DynLagrangeDirac::with_linear_solver(
        &chain,
        Discretization::Midpoint,
        cd,
        Direction::Forward,
        forced,
    )
    .unwrap();
    let e = forced.step(&s0, 1e-2).unwrap_err();
    assert!(e.to_string().contains("gyroscopic"), "{e}");
    // A pattern that lacks entries of the step Jacobian is refused when
    // the stepper is built.
    let diagonal = StructuredLu::sparse(std::iter::empty(), 30).unwrap();
    let e = DynLagrangeDirac::with_linear_solver(
        &Chain::new(30, 0, 0.0),
        Discretization::Midpoint,
        cd,
        Direction::Forward,
        diagonal,
    )
    .unwrap_err();
    assert!(matches!(e, StepError::Unsupported(_)), "{e}");
    assert!(e.to_string().contains("lacks entry"), "{e}");
}

/// Sparse storage records an entry written outside its pattern: the
/// structured LU then factors that Jacobian densely and solves it exactly
/// (against nalgebra's LU to 1e-13), the sparse LU refuses it; back on the
/// pattern the sparse factors are used again.
#[test]
fn entries_outside_the_pattern_fall_back_to_the_dense_lu() {
    let n = 30;
    let tridiagonal: Vec<(usize, usize)> =
        (0..n - 1).flat_map(|i| [(i, i + 1), (i + 1, i)]).collect();
    let mut lu = StructuredLu::sparse(tridiagonal.clone(), n).unwrap();
    assert_eq!(lu.structure(), Structure::Sparse);
    let mut jac = lu.new_jacobian();
    assert!(matches!(jac, JacobianStorage::Sparse(_)));
    let mut dense = DMatrix::zeros(n, n);
    let put = |jac: &mut JacobianStorage, dense: &mut DMatrix<f64>, i, j, v| {
        jac.add(i, j, v);
        dense[(i, j)] += v;
    };
    for i in 0..n {
        put(&mut jac, &mut dense, i, i, 4.0 + 0.1 * i as f64);
        if i + 1 < n {
            put(&mut jac, &mut dense, i, i + 1, -1.0);
            put(&mut jac, &mut dense, i + 1, i, -1.5);
        }
    }
    let b = DVector::from_fn(n, |i, _| (0.7 * i as f64).sin());
    let solve = |lu: &mut StructuredLu, jac: &JacobianStorage| {
        let mut x = b.clone();
        lu.factor(jac, 1e-12).unwrap().solve_in_place(&mut x);
        x
    };
    let on_pattern = solve(&mut lu, &jac);
    let exact = dense.clone().lu().solve(&b).unwrap();
    assert!((&on_pattern - &exact).amax() <= 1e-13 * exact.amax());
    // Outside the pattern: recorded, and solved densely.
    put(&mut jac, &mut dense, 0, n - 1, 0.8);
    put(&mut jac, &mut dense, n - 2, 3, -0.6);
    assert_eq!(jac.sparse().unwrap().outside().len(), 2);
    let x = solve(&mut lu, &jac);
    let exact = dense.clone().lu().solve(&b).unwrap();
    assert!(
        (&x - &exact).amax() <= 1e-13 * exact.amax(),
        "{}",
        (&x - &exact).amax()
    );
    assert!(
        (&x - &on_pattern).amax() > 1e-3,
        "a different matrix, a different solution"
    );
    assert!(StepJacobian::amax(&jac) >= 4.0);
    // The sparse LU alone refuses it.
    let mut sparse = SparseLu::new(SparsePattern::from_entries(
        n,
        tridiagonal.iter().copied().chain((0..n).map(|i| (i, i))),
    ))
    .unwrap();
    let JacobianStorage::Sparse(values) = &jac else {
        unreachable!("sparse storage")
    };
    assert!(sparse.factor(values, 1e-12).is_err());
    assert!(sparse.factors().is_none());
    // Zeroed, back on the pattern: the sparse factors again.
    jac.zero();
    assert!(jac.sparse().unwrap().outside().is_empty());
    assert!(StepJacobian::amax(&jac) <= 0.0);
}

/// A degenerate step (a singular step Jacobian: with the forward map, body
/// 0, which has no kinetic term and no coupling, has a zero `D12` row) on sparse storage is refused with
/// `StepError::Unsupported` (its hidden constraints need the dense SVD);
/// with dense storage the same step runs.
#[test]
fn a_degenerate_step_on_sparse_storage_is_refused() {
    #[derive(Debug)]
    struct Loose(LagrangianTerms);
    impl DynSystem for Loose {
        fn coordinate_count(&self) -> usize {
            30
        }
        fn constraint_count(&self) -> usize {
            0
        }
        fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
            (0..30).fold(S::from(0.0), |l, e| {
                l + self.lagrangian_term(e, &q[e..=e], &v[e..=e])
            })
        }
        fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
        fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
            Some(&self.0)
        }
        fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
            if e == 0 {
                -(q[0] * q[0]) * 0.5
            } else {
                (v[0] * v[0] - q[0] * q[0]) * 0.5
            }
        }
    }
    let system = Loose(LagrangianTerms::new(30, (0..30).map(|i| [i])).unwrap());
    let cd = ConstraintDiscretization::Midpoint;
    let q0 = DVector::from_fn(30, |i, _| if i == 0 { 0.0 } else { 0.1 * i as f64 });
    let s0 = DynState {
        t: 0.0,
        q: q0.clone(),
        p: DVector::from_fn(30, |i, _| if i == 0 { 0.0 } else { 0.2 }),
    };
    let sparse = StructuredLu::sparse_for_step(&system, cd).unwrap();
    let mut sparse = DynLagrangeDirac::with_linear_solver(
        &system,
        Discretization::Forward,
        cd,
        Direction::Forward,
        sparse,
    )
    .unwrap();
    assert_eq!(sparse.jacobian_structure(), Structure::Sparse);
    let e = sparse.step(&s0, 0.1).unwrap_err();
    assert!(matches!(e, StepError::Unsupported(_)), "{e}");
    assert!(e.to_string().contains("degenerate"), "{e}");
    let mut dense = DynLagrangeDirac::with_linear_solver(
        &system,
        Discretization::Forward,
        cd,
        Direction::Forward,
        StructuredLu::dense(30),
    )
    .unwrap();
    let (s1, stats) = dense.step(&s0, 0.1).unwrap();
    assert!(stats.degenerate);
    assert!((s1.q[5] - s0.q[5]).abs() > 1e-3);
}

/// The chain without its declared structure: dense storage and solves.
struct Whole<'a>(&'a Chain);

impl DynSystem for Whole<'_> {
    fn coordinate_count(&self) -> usize {
        self.0.coordinate_count()
    }
    fn constraint_count(&self) -> usize {
        self.0.constraint_count()
    }
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.0.lagrangian(q, v)
    }
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        self.0.constraint_forms(q, a)
    }
}

/// The constrained Legendre map (docs/theory.md §8.7) of a chain declared
/// term by term solves its KKT system with the sparse LU over the step's
/// pattern, and agrees with the dense KKT solve of the same chain without
/// its declared structure: from `p = ∂L/∂v(q, v0) − A(q)ᵀ ν0` it returns
/// `(v0, ν0)` to 1e-12, the two solves agree to 1e-13, and so do the
/// energies and residuals of the measure (measured: at most 7.6e-17).
#[test]
fn the_constrained_legendre_map_is_solved_sparsely_for_a_chain() {
    for (k, rows) in [(60, 10), (40, 0)] {
        let chain = Chain::new(k, rows, 0.0);
        let s0 = chain_start(&chain);
        let mut sparse = DynConstrainedLegendre::new(&chain);
        assert_eq!(sparse.structure(), Structure::Sparse);
        let whole = Whole(&chain);
        let mut dense = DynConstrainedLegendre::new(&whole);
        assert_eq!(dense.structure(), Structure::Dense);
        let mut forms = vec![0.0; rows * k];
        chain.constraint_forms(s0.q.as_slice(), &mut forms);
        let a = DMatrix::from_row_slice(rows, k, &forms);
        let nu0 = DVector::from_fn(rows, |r, _| 0.2 * (r as f64 + 1.0).sin());
        let p = &s0.p - a.transpose() * &nu0;
        let (v, nu) = sparse.velocity(&chain, &s0.q, &p).unwrap();
        let (vd, nud) = dense.velocity(&whole, &s0.q, &p).unwrap();
        // The start's own velocity, no reaction.
        let (v0, nu_free) = sparse.velocity(&chain, &s0.q, &s0.p).unwrap();
        let close = |x: &DVector<f64>, y: &DVector<f64>, tol: f64| {
            let d = (x - y).amax();
            assert!(d <= tol * x.amax().max(1.0), "{d:e} (tolerance {tol:e})");
            d
        };
        let worst = [
            close(&v, &vd, 1e-13),
            close(&nu, &nud, 1e-13),
            close(&v, &v0, 1e-12),
            close(&nu, &nu0, 1e-12),
            close(&nu_free, &DVector::zeros(rows), 1e-12),
        ]
        .into_iter()
        .fold(0.0_f64, f64::max);
        assert!((&a * &v).amax() <= 1e-14, "A v = {:e}", (&a * &v).amax());
        let (e, r) = sparse.measures(&chain, &s0.q, &p, 0.1).unwrap();
        let (ed, rd) = dense.measures(&whole, &s0.q, &p, 0.1).unwrap();
        assert!((e - ed).abs() <= 1e-13 * e.abs(), "{e} vs {ed}");
        assert!(r <= 1e-15 && rd <= 1e-15, "{r:e}, {rd:e}");
        assert!(worst <= 1e-12, "{worst:e}");
    }
}

/// The sparse constrained Legendre map keeps the factors of its KKT matrix
/// and reuses them only for a matrix equal to theirs bit for bit: one map
/// solving along a trajectory of states returns the velocities,
/// multipliers and measures of a new map per state (factoring afresh)
/// bit for bit. With constraint rows the KKT matrix changes with `q`
/// (`A(q)` has `cos(0.1 q)` entries), so factors kept from the last state
/// would give other bits (stale factors make Newton converge linearly to
/// a different last digit); without them it is constant, and every solve
/// after the first reuses the factors.
#[test]
fn the_legendre_map_reuses_its_factors_only_for_an_equal_kkt_matrix() {
    for (k, rows) in [(60, 10), (40, 0)] {
        let chain = Chain::new(k, rows, 0.0);
        let s0 = chain_start(&chain);
        let mut kept = DynConstrainedLegendre::new(&chain);
        assert_eq!(kept.structure(), Structure::Sparse);
        let mut stepper = DynLagrangeDirac::plus(
            &chain,
            Discretization::Midpoint,
            ConstraintDiscretization::Midpoint,
        );
        let mut s = s0;
        for step in 0..20 {
            let (v, nu) = kept.velocity(&chain, &s.q, &s.p).unwrap();
            let (vf, nuf) = DynConstrainedLegendre::new(&chain)
                .velocity(&chain, &s.q, &s.p)
                .unwrap();
            let bits = |x: &DVector<f64>| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&v), bits(&vf), "{k} bodies, step {step}: v");
            assert_eq!(bits(&nu), bits(&nuf), "{k} bodies, step {step}: ν");
            let (e, r) = kept.measures(&chain, &s.q, &s.p, 0.05).unwrap();
            let (ef, rf) = DynConstrainedLegendre::new(&chain)
                .measures(&chain, &s.q, &s.p, 0.05)
                .unwrap();
            assert_eq!((e.to_bits(), r.to_bits()), (ef.to_bits(), rf.to_bits()));
            s = stepper.step(&s, 0.05).unwrap().0;
        }
    }
}
