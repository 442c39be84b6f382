//! The exact tangent map of a Lagrange–Dirac step (docs/theory.md §12)
//! against independent checks: fourth-order central differences of the
//! step itself (fresh solves at perturbed data), the symplecticity of the
//! tangent map of an unconstrained variational step (`Tᵀ J T = J`), and
//! degenerate steps (hidden constraints, docs/theory.md §12.8) along the
//! directions that keep them.

use crate::common;

use common::{AlgebraicCoupling, Lc, Pendulum, slave};
use diracvi_discrete_dirac::Direction;
use diracvi_discrete_dirac::dynamic::{DynLagrangeDirac, DynStepTangent};
use diracvi_discrete_dirac::newton::NewtonParams;
use diracvi_geometry::dynamic::{DynSystem, Erased, Fixed};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, System};
use nalgebra::{DMatrix, DVector, SMatrix, SVector};

/// A vertical rolling disk with a potential on the heading: `n = 4, m = 2`.
#[derive(Clone, Copy)]
struct Disk;

impl System<4, 2> for Disk {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 4>, v: &SVector<S, 4>) -> S {
        (v[0] * v[0] + v[1] * v[1]) * 0.5 + v[2] * v[2] * 0.25 + v[3] * v[3] * 0.125
            - (q[3] * 2.0).sin() * 0.05
            - q[0].cos() * 0.2
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 4>) -> SMatrix<S, 2, 4> {
        let (one, zero) = (S::from(1.0), S::from(0.0));
        let (s, c) = (q[3].sin(), q[3].cos());
        SMatrix::<S, 2, 4>::new(one, zero, -c, zero, zero, one, -s, zero)
    }
}

/// Ten coupled coordinates with velocity couplings, three nonholonomic
/// rows and a gyroscopic force: more variables (2n + 1 = 21) than one chunk.
#[derive(Clone, Copy)]
struct Coupled;

const K: usize = 10;

impl System<K, 3> for Coupled {
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
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, K>) -> SMatrix<S, 3, K> {
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
    fn gyroscopic_force<S: AdScalar>(
        &self,
        q: &SVector<S, K>,
        v: &SVector<S, K>,
    ) -> Option<SVector<S, K>> {
        let b = q[0].cos() + 1.0;
        Some(SVector::from_fn(|i, _| {
            (v[(i + 1) % K] - v[(i + K - 1) % K]) * b
        }))
    }
}

/// An anharmonic planar double well on R²: unconstrained, regular.
#[derive(Clone, Copy)]
struct Well;

impl System<2, 0> for Well {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        (v[0] * v[0] + v[1] * v[1] * 2.0) * 0.5 + v[0] * v[1] * q[0].sin() * 0.3
            - (q[0] * q[0] - 1.0).powi(2) * 0.25
            - q[0] * q[1] * 0.4
            - q[1].cos()
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
        SMatrix::zeros()
    }
}

struct Case<Sy> {
    stepper: DynLagrangeDirac<Sy>,
    a: DVector<f64>,
    pi_a: DVector<f64>,
    h: f64,
}

fn tight() -> NewtonParams {
    NewtonParams::default().with_tolerance(1e-15).with_polish(3)
}

/// The oriented step's `(b, π_b)` from `(a, π_a)` with step `h`, solved
/// afresh (from the unperturbed increment).
fn step<Sy: DynSystem>(
    stepper: &mut DynLagrangeDirac<Sy>,
    a: &DVector<f64>,
    pi_a: &DVector<f64>,
    h: f64,
    guess: &DVector<f64>,
) -> DVector<f64> {
    let s = stepper.solve_trial(0.0, a, pi_a, h, guess).unwrap();
    let n = a.len();
    let mut out = DVector::zeros(2 * n);
    out.rows_mut(0, n).copy_from(&(a + &s.d));
    out.rows_mut(n, n).copy_from(&s.pi_b);
    out
}

/// The exact tangent and the fourth-order central difference of the step
/// in each of the `2n + 1` data directions; returns the largest entry
/// difference relative to the largest entry (measured: 2e-13 to 1.4e-12;
/// dropping the `∂(A(a)ᵀμ)/∂a` term gives 2e-3 to 2e-2).
fn check<Sy: DynSystem>(case: &mut Case<Sy>, delta: f64) -> f64 {
    let Case {
        stepper,
        a,
        pi_a,
        h,
    } = case;
    let n = a.len();
    let s = stepper
        .solve_trial(0.0, a, pi_a, *h, &DVector::zeros(n))
        .unwrap();
    let tangent: DynStepTangent = stepper
        .oriented_tangent(0.0, a, &s.d, &s.reaction, *h)
        .unwrap();
    // With `h` held fixed: the same `∂(b, π_b)/∂(a, π_a)`, bit for bit, from
    // second derivatives in 2n directions instead of 2n + 1; no `∂/∂h`.
    let fixed = stepper
        .oriented_derivative(0.0, a, &s.d, &s.reaction, *h, None, false)
        .unwrap()
        .tangent;
    assert!(
        fixed
            .start
            .iter()
            .zip(tangent.start.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits() || (*x == 0.0 && *y == 0.0)),
        "fixed-h start {} vs {}",
        fixed.start,
        tangent.start
    );
    assert!(fixed.step.iter().all(|&x| x == 0.0), "{}", fixed.step);
    let guess = s.d.clone();
    let mut worst: f64 = 0.0;
    let mut scale: f64 = 0.0;
    for j in 0..=2 * n {
        let at = |e: f64, st: &mut DynLagrangeDirac<Sy>| {
            let (mut a1, mut p1, mut h1) = (a.clone(), pi_a.clone(), *h);
            if j < n {
                a1[j] += e;
            } else if j < 2 * n {
                p1[j - n] += e;
            } else {
                h1 += e;
            }
            step(st, &a1, &p1, h1, &guess)
        };
        let fd = (at(-2.0 * delta, stepper) - at(2.0 * delta, stepper)
            + (at(delta, stepper) - at(-delta, stepper)) * 8.0)
            / (12.0 * delta);
        let exact: DVector<f64> = if j < 2 * n {
            tangent.start.column(j).into_owned()
        } else {
            tangent.step.clone()
        };
        worst = worst.max((fd - &exact).amax());
        scale = scale.max(exact.amax());
    }
    worst / scale
}

/// The stepper reaches the system through `Erased`, as the runner reaches
/// models, so the stepper and its tangent are compiled once for every
/// system of this test (the few systems are leaked: they live for the test
/// binary's lifetime anyway).
fn case<const N: usize, const M: usize, Sy: System<N, M> + Clone + Send + Sync + 'static>(
    system: Sy,
    map: Discretization,
    cd: ConstraintDiscretization,
    direction: Direction,
    a: &[f64],
    v: &[f64],
    h: f64,
) -> Case<Erased<'static>> {
    let fixed: &'static Fixed<Sy, N, M> = Box::leak(Box::new(Fixed::<Sy, N, M>(system)));
    let erased: Erased<'static> = Erased::new(fixed);
    let a = DVector::from_column_slice(a);
    let v = DVector::from_column_slice(v);
    let p = diracvi_geometry::dynamic::momentum_dyn(&erased, &a, &v);
    let stepper = DynLagrangeDirac::new(erased, map, cd, direction).with_params(tight());
    let pi_a = p * direction.sign();
    Case {
        stepper,
        a,
        pi_a,
        h,
    }
}

#[test]
fn tangent_of_a_nonholonomic_step_matches_central_differences() {
    use ConstraintDiscretization as C;
    use Discretization as D;
    for map in [D::Forward, D::Midpoint] {
        for cd in [C::Retraction, C::Midpoint] {
            for direction in [Direction::Forward, Direction::Backward] {
                let mut c = case(
                    Pendulum::default(),
                    map,
                    cd,
                    direction,
                    &[0.7, 0.2],
                    &[0.4, 1.0],
                    0.05,
                );
                let e = check(&mut c, 1e-3);
                assert!(e < 1e-10, "pendulum {map:?} {cd:?} {direction:?}: {e:.2e}");
                let mut c = case(
                    Disk,
                    map,
                    cd,
                    direction,
                    &[0.1, -0.3, 0.5, 0.8],
                    &[0.6 * 0.8f64.cos(), 0.6 * 0.8f64.sin(), 0.6, 0.9],
                    0.1,
                );
                let e = check(&mut c, 1e-3);
                assert!(e < 1e-10, "disk {map:?} {cd:?} {direction:?}: {e:.2e}");
            }
        }
    }
}

#[test]
fn tangent_with_forces_over_several_chunks_and_the_symmetric_split() {
    let q: Vec<f64> = (0..K).map(|i| 0.1 * i as f64 - 0.3).collect();
    let v0: Vec<f64> = (0..K).map(|i| 0.05 * (i as f64).sin()).collect();
    // Velocities on the constraint distribution: A(q) v = 0 solved for the
    // first three components (an upper-triangular block) given the others.
    let fixed = Fixed::<Coupled, K, 3>(Coupled);
    let mut rows = vec![0.0; 3 * K];
    fixed.constraint_forms(&q, &mut rows);
    let a = DMatrix::from_row_slice(3, K, &rows);
    let solved = a.columns(0, 3).into_owned();
    let given = a.columns(3, K - 3).into_owned();
    let first = -solved
        .lu()
        .solve(&(given * DVector::from_column_slice(&v0[3..])))
        .unwrap();
    let mut v = v0.clone();
    v[..3].copy_from_slice(first.as_slice());
    for symmetric in [false, true] {
        let mut c = case(
            Coupled,
            Discretization::Midpoint,
            ConstraintDiscretization::Midpoint,
            Direction::Forward,
            &q,
            &v,
            0.02,
        );
        if symmetric {
            c.stepper = c.stepper.symmetric();
        }
        let e = check(&mut c, 1e-3);
        assert!(e < 1e-10, "coupled (symmetric: {symmetric}): {e:.2e}");
    }
}

#[test]
fn tangent_of_an_unconstrained_variational_step_is_symplectic() {
    for map in [Discretization::Forward, Discretization::Midpoint] {
        for direction in [Direction::Forward, Direction::Backward] {
            let mut c = case(
                Well,
                map,
                ConstraintDiscretization::Midpoint,
                direction,
                &[0.3, -0.4],
                &[1.1, 0.5],
                0.1,
            );
            let n = 2;
            let s = c
                .stepper
                .solve_trial(0.0, &c.a, &c.pi_a, c.h, &DVector::zeros(n))
                .unwrap();
            let t = c
                .stepper
                .oriented_tangent(0.0, &c.a, &s.d, &s.reaction, c.h)
                .unwrap()
                .physical(direction.sign());
            let mut j = DMatrix::zeros(2 * n, 2 * n);
            for i in 0..n {
                j[(i, n + i)] = 1.0;
                j[(n + i, i)] = -1.0;
            }
            let defect = (t.start.transpose() * &j * &t.start - &j).amax();
            assert!(
                defect < 1e-13,
                "{map:?} {direction:?}: TᵀJT − J = {defect:.2e}"
            );
            let e = check(&mut c, 1e-3);
            assert!(e < 1e-10, "well {map:?} {direction:?}: {e:.2e}");
        }
    }
}

/// An oriented stepper of `system` reached through `Erased` (leaked, as
/// in [`case`]).
fn erased_stepper<const N: usize, const M: usize, Sy>(
    system: Sy,
    map: Discretization,
    cd: ConstraintDiscretization,
) -> DynLagrangeDirac<Erased<'static>>
where
    Sy: System<N, M> + Clone + Send + Sync + 'static,
{
    let fixed: &'static Fixed<Sy, N, M> = Box::leak(Box::new(Fixed::<Sy, N, M>(system)));
    let erased: Erased<'static> = Erased::new(fixed);
    DynLagrangeDirac::new(erased, map, cd, Direction::Forward).with_params(tight())
}

/// The hidden constraint of a step solved for one momentum: `restore(a,
/// π, h)` sets that component of `π` so that `(a, π)` satisfies it.
type Restore = dyn Fn(&DVector<f64>, &mut DVector<f64>, f64);

/// `T δ` against the fourth-order central difference of fresh solves of
/// the step along each data direction `δ` (columns of `dirs`, over
/// `(a, π_a, h)`, tangent to the hidden constraint; each perturbed point is
/// put back on it by `restore`, a change of second order, which central
/// differences cancel); returns the largest difference relative to the
/// largest `|T δ|`.
fn check_along(
    stepper: &mut DynLagrangeDirac<Erased<'static>>,
    a: &DVector<f64>,
    pi_a: &DVector<f64>,
    h: f64,
    dirs: &DMatrix<f64>,
    delta: f64,
    restore: &Restore,
) -> f64 {
    let n = a.len();
    let s = stepper
        .solve_trial(0.0, a, pi_a, h, &DVector::zeros(n))
        .unwrap();
    assert!(s.degenerate, "the step took the degenerate path");
    let tangent = stepper
        .oriented_tangent(0.0, a, &s.d, &s.reaction, h)
        .unwrap();
    let mut t = DMatrix::zeros(2 * n, 2 * n + 1);
    t.view_mut((0, 0), (2 * n, 2 * n)).copy_from(&tangent.start);
    t.set_column(2 * n, &tangent.step);
    let (mut worst, mut scale): (f64, f64) = (0.0, 0.0);
    for dir in dirs.column_iter() {
        let at = |e: f64, st: &mut DynLagrangeDirac<Erased<'static>>| {
            let a1 = a + dir.rows(0, n) * e;
            let mut p1 = pi_a + dir.rows(n, n) * e;
            let h1 = h + dir[2 * n] * e;
            restore(&a1, &mut p1, h1);
            step(st, &a1, &p1, h1, &s.d)
        };
        let fd = (at(-2.0 * delta, stepper) - at(2.0 * delta, stepper)
            + (at(delta, stepper) - at(-delta, stepper)) * 8.0)
            / (12.0 * delta);
        let exact = &t * dir;
        worst = worst.max((fd - &exact).amax());
        scale = scale.max(exact.amax());
    }
    worst / scale
}

/// The directions of `(a, π_a, h)` (columns) that keep the LC circuit's
/// hidden constraint of a forward step, `π¹ − π³ = h (a¹/c₁ − a³/c₃)`
/// (the left null vector `(0, 1, 0, −1)` of the step Jacobian): eight of
/// the nine.
fn lc_admissible(lc: &Lc, a: &DVector<f64>, h: f64) -> DMatrix<f64> {
    let [c1, _, c3] = lc.c;
    let mut d = DMatrix::zeros(9, 8);
    let mut col = 0;
    let mut put = |entries: &[(usize, f64)]| {
        for &(i, v) in entries {
            d[(i, col)] = v;
        }
        col += 1;
    };
    put(&[(0, 1.0)]);
    put(&[(2, 1.0)]);
    put(&[(4, 1.0)]);
    put(&[(6, 1.0)]);
    put(&[(5, 1.0), (7, 1.0)]);
    put(&[(1, 1.0), (5, h / c1)]);
    put(&[(3, 1.0), (7, h / c3)]);
    put(&[(8, 1.0), (5, a[1] / c1 - a[3] / c3)]);
    d
}

/// `N` forward steps of `stepper` from `(a, π)`: the end state and, with
/// `tangent`, the product of the steps' tangent maps.
fn run_steps(
    stepper: &mut DynLagrangeDirac<Erased<'static>>,
    a: &DVector<f64>,
    pi: &DVector<f64>,
    h: f64,
    steps: usize,
    tangent: bool,
) -> (DVector<f64>, Option<DMatrix<f64>>) {
    let n = a.len();
    let (mut a, mut pi) = (a.clone(), pi.clone());
    let mut guess = DVector::zeros(n);
    let mut jac = tangent.then(|| DMatrix::identity(2 * n, 2 * n));
    for k in 0..steps {
        let t = k as f64 * h;
        let s = stepper.solve_oriented(t, &a, &pi, h, &guess).unwrap();
        if let Some(j) = &mut jac {
            let step = stepper
                .oriented_tangent(t, &a, &s.d, &s.reaction, h)
                .unwrap();
            *j = &step.start * &*j;
        }
        a = &a + &s.d;
        pi = s.pi_b;
        guess = s.d;
    }
    let mut x = DVector::zeros(2 * n);
    x.rows_mut(0, n).copy_from(&a);
    x.rows_mut(n, n).copy_from(&pi);
    (x, jac)
}

/// A degenerate step (the LC circuit: only the inductor carries kinetic
/// energy, docs/theory.md §3.9) has the tangent map of the equations it
/// solves, `U_rᵀ F = 0` and the next step's hidden constraints
/// `Yᵀ F_next = 0` (§12.8): against fourth-order central differences of
/// fresh solves along the eight directions of `(a, π_a, h)` that keep the
/// current step's hidden constraint, with both constraint
/// discretizations, from a state seven steps into the run. Measured:
/// 1.4e-12.
#[test]
fn tangent_of_a_degenerate_step_matches_differences_along_the_constraint() {
    let lc = Lc::default();
    let start = lc.start();
    let h = 2.0 * std::f64::consts::PI / 40.0;
    for cd in [
        ConstraintDiscretization::Retraction,
        ConstraintDiscretization::Midpoint,
    ] {
        let mut stepper = erased_stepper(lc, Discretization::Forward, cd);
        let a0 = DVector::from_column_slice(start.q.as_slice());
        let p0 = DVector::from_column_slice(start.p.as_slice());
        let (x, _) = run_steps(&mut stepper, &a0, &p0, h, 7, false);
        let (a, pi) = (x.rows(0, 4).into_owned(), x.rows(4, 4).into_owned());
        assert!(a.amax() > 1.0, "a state away from the start: {a}");
        let dirs = lc_admissible(&lc, &a, h);
        let [c1, _, c3] = lc.c;
        let restore = move |a: &DVector<f64>, p: &mut DVector<f64>, h: f64| {
            p[1] = p[3] + h * (a[1] / c1 - a[3] / c3);
        };
        let e = check_along(&mut stepper, &a, &pi, h, &dirs, 1e-4, &restore);
        eprintln!("LC {cd:?}: step tangent vs differences {e:.1e}");
        assert!(e < 1e-9, "{cd:?}: {e:.2e}");
    }
}

/// The LC circuit's map over 40 steps (one period) is linear: the product
/// of the step tangents equals central differences of whole runs (step
/// 1e-3, relative 1e-6 asked) and the exact change of the end state for a
/// unit change of the start (relative 1e-9 asked), along the seven
/// directions of `(q₀, p₀)` that keep the hidden constraint. Measured:
/// 4.4e-12 and 3.3e-14.
#[test]
fn degenerate_run_jacobian_matches_whole_runs_and_the_linear_map() {
    let lc = Lc::default();
    let start = lc.start();
    let h = 2.0 * std::f64::consts::PI / 40.0;
    let fresh = || {
        erased_stepper(
            lc,
            Discretization::Forward,
            ConstraintDiscretization::Retraction,
        )
    };
    let a0 = DVector::from_column_slice(start.q.as_slice());
    let p0 = DVector::from_column_slice(start.p.as_slice());
    let (x0, jac) = run_steps(&mut fresh(), &a0, &p0, h, 40, true);
    let jac = jac.unwrap();
    let dirs = lc_admissible(&lc, &a0, h).columns(0, 7).into_owned();
    let run_at = |dir: &DVector<f64>, e: f64| {
        let a = &a0 + dir.rows(0, 4) * e;
        let p = &p0 + dir.rows(4, 4) * e;
        run_steps(&mut fresh(), &a, &p, h, 40, false).0
    };
    let (mut fd_err, mut lin_err, mut scale): (f64, f64, f64) = (0.0, 0.0, 0.0);
    for dir in dirs.column_iter() {
        let dir: DVector<f64> = dir.rows(0, 8).into_owned();
        let exact = &jac * &dir;
        let fd = (run_at(&dir, 1e-3) - run_at(&dir, -1e-3)) / 2e-3;
        let linear = run_at(&dir, 1.0) - &x0;
        fd_err = fd_err.max((fd - &exact).amax());
        lin_err = lin_err.max((linear - &exact).amax());
        scale = scale.max(exact.amax());
    }
    let (fd_err, lin_err) = (fd_err / scale, lin_err / scale);
    eprintln!("LC run Jacobian: differences {fd_err:.1e}, linear map {lin_err:.1e}");
    assert!(fd_err <= 1e-6, "{fd_err:e}");
    assert!(lin_err <= 1e-9, "{lin_err:e}");
}

/// The nonlinear degenerate Lagrangian [`AlgebraicCoupling`]
/// (`L = ½ (v⁰)² − V(q)`, `V = ½ (q⁰)² + ½ (q¹)² + ¼ (q¹)⁴ − q⁰ q¹`, no
/// kinetic term for `q¹`): the next step's hidden constraint
/// `∂V/∂q¹(b) = 0` is nonlinear, so its derivative terms are exercised.
/// Against fourth-order central differences along the four directions of
/// `(a, π_a, h)` that keep `π¹ = h (q¹ + (q¹)³ − q⁰)`. Measured: 8.5e-13.
#[test]
fn tangent_of_a_nonlinear_degenerate_step_matches_differences() {
    let h = 0.05;
    let x: f64 = 0.8;
    let a = DVector::from_column_slice(&[x, slave(x)]);
    let pi = DVector::from_column_slice(&[0.7, 0.0]);
    let mut stepper = erased_stepper(
        AlgebraicCoupling,
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    );
    let v1 = a[1] + a[1].powi(3) - a[0];
    let dirs = DMatrix::from_columns(&[
        DVector::from_column_slice(&[1.0, 0.0, 0.0, -h, 0.0]),
        DVector::from_column_slice(&[0.0, 1.0, 0.0, h * (1.0 + 3.0 * a[1] * a[1]), 0.0]),
        DVector::from_column_slice(&[0.0, 0.0, 1.0, 0.0, 0.0]),
        DVector::from_column_slice(&[0.0, 0.0, 0.0, v1, 1.0]),
    ]);
    let restore = |a: &DVector<f64>, p: &mut DVector<f64>, h: f64| {
        p[1] = h * (a[1] + a[1].powi(3) - a[0]);
    };
    let e = check_along(&mut stepper, &a, &pi, h, &dirs, 1e-4, &restore);
    eprintln!("nonlinear degenerate step: tangent vs differences {e:.1e}");
    assert!(e < 1e-9, "{e:.2e}");
}
