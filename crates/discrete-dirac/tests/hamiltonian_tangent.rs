//! The exact tangent map of a discrete nonholonomic Hamiltonian step
//! (docs/theory.md §12.7) against independent checks: fourth-order central
//! differences of the step itself (fresh solves at perturbed data), (+)
//! and (−), with and without constraint rows, and the symplecticity of an
//! unconstrained step's tangent map (`Tᵀ J T = J`: symplectic Euler).

use crate::common;

use common::{Kepler, Pendulum, Planar};
use diracvi_discrete_dirac::Direction;
use diracvi_discrete_dirac::dynamic::{DynNonholonomicHamiltonian, DynSubStep, DynSubStepper};
use diracvi_discrete_dirac::newton::NewtonParams;
use diracvi_geometry::dynamic::{Erased, Fixed};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization, System};
use nalgebra::{DMatrix, DVector, SMatrix, SVector};

/// A vertical rolling disk with a potential on the heading and its
/// Hamiltonian (`n = 4, m = 2`; the Legendre transform of the diagonal
/// kinetic energy).
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
    fn hamiltonian<S: AdScalar>(&self, q: &SVector<S, 4>, p: &SVector<S, 4>) -> Option<S> {
        Some(
            (p[0] * p[0] + p[1] * p[1]) * 0.5
                + p[2] * p[2]
                + p[3] * p[3] * 2.0
                + (q[3] * 2.0).sin() * 0.05
                + q[0].cos() * 0.2,
        )
    }
}

type Stepper = DynNonholonomicHamiltonian<Erased<'static>>;

fn tight() -> NewtonParams {
    NewtonParams::default().with_tolerance(1e-15).with_polish(3)
}

/// A stepper of `system` reached through `Erased` (as the runner reaches
/// models) and the oriented start `(a, π_a)` from the velocity `v`.
fn case<const N: usize, const M: usize, Sy: System<N, M> + Clone + Send + Sync + 'static>(
    system: Sy,
    cd: ConstraintDiscretization,
    direction: Direction,
    a: &[f64],
    v: &[f64],
) -> (Stepper, DVector<f64>, DVector<f64>) {
    let fixed: &'static Fixed<Sy, N, M> = Box::leak(Box::new(Fixed::<Sy, N, M>(system)));
    let erased: Erased<'static> = Erased::new(fixed);
    let a = DVector::from_column_slice(a);
    let v = DVector::from_column_slice(v);
    let p = diracvi_geometry::dynamic::momentum_dyn(&erased, &a, &v);
    let stepper = DynNonholonomicHamiltonian::new(erased, Discretization::Forward, cd, direction)
        .with_params(tight());
    (stepper, a, p * direction.sign())
}

/// The step from `(a, π_a)` with step `h`, solved afresh from `guess`.
fn solve(
    stepper: &mut Stepper,
    a: &DVector<f64>,
    pi_a: &DVector<f64>,
    h: f64,
    guess: Option<&DynSubStep>,
) -> DynSubStep {
    stepper
        .solve_oriented(true, 0.0, a, pi_a, h, guess.map(|g| (&g.d, &g.pi_b)))
        .unwrap()
}

/// The largest difference between the exact tangent (with `∂/∂h`) and the
/// fourth-order central difference of the step, in each of the `2n + 1`
/// data directions, relative to the largest entry.
fn check(stepper: &mut Stepper, a: &DVector<f64>, pi_a: &DVector<f64>, h: f64, delta: f64) -> f64 {
    let n = a.len();
    let s = solve(stepper, a, pi_a, h, None);
    let tangent = stepper.sub_step_tangent(0.0, a, &s, h).unwrap();
    let mut worst: f64 = 0.0;
    let mut scale: f64 = 0.0;
    for j in 0..=2 * n {
        let mut at = |e: f64| {
            let (mut a1, mut p1, mut h1) = (a.clone(), pi_a.clone(), h);
            if j < n {
                a1[j] += e;
            } else if j < 2 * n {
                p1[j - n] += e;
            } else {
                h1 += e;
            }
            let r = solve(stepper, &a1, &p1, h1, Some(&s));
            let mut out = DVector::zeros(2 * n);
            out.rows_mut(0, n).copy_from(&(&a1 + &r.d));
            out.rows_mut(n, n).copy_from(&r.pi_b);
            out
        };
        let fd =
            (at(-2.0 * delta) - at(2.0 * delta) + (at(delta) - at(-delta)) * 8.0) / (12.0 * delta);
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

/// (+) and (−) steps of the nonholonomic pendulum (`m = 1`) and the
/// rolling disk (`m = 2`), both constraint discretizations: the tangent
/// equals the differences to 1e-9 relative (measured: pendulum 1.7e-11,
/// disk 2.2e-13).
#[test]
fn hamiltonian_tangent_with_constraints_matches_central_differences() {
    use ConstraintDiscretization as C;
    for cd in [C::Retraction, C::Midpoint] {
        for direction in [Direction::Forward, Direction::Backward] {
            let (mut st, a, p) = case(Pendulum::default(), cd, direction, &[0.7, 0.2], &[0.4, 1.0]);
            let e = check(&mut st, &a, &p, 0.05, 1e-3);
            eprintln!("pendulum {cd:?} {direction:?}: {e:.2e}");
            assert!(e < 1e-9, "pendulum {cd:?} {direction:?}: {e:.2e}");
            let (mut st, a, p) = case(
                Disk,
                cd,
                direction,
                &[0.1, -0.3, 0.5, 0.8],
                &[0.6 * 0.8f64.cos(), 0.6 * 0.8f64.sin(), 0.6, 0.9],
            );
            let e = check(&mut st, &a, &p, 0.1, 1e-3);
            eprintln!("disk {cd:?} {direction:?}: {e:.2e}");
            assert!(e < 1e-9, "disk {cd:?} {direction:?}: {e:.2e}");
        }
    }
}

/// Unconstrained (+) and (−) steps (a planar pendulum, Kepler): the
/// tangent equals the differences to 1e-9 (measured: 6e-14, 6.6e-13) and,
/// between physical states, is symplectic to 1e-13.
#[test]
fn hamiltonian_tangent_without_constraints_matches_differences_and_is_symplectic() {
    for direction in [Direction::Forward, Direction::Backward] {
        let cd = ConstraintDiscretization::Midpoint;
        let (mut st, a, p) = case(Planar, cd, direction, &[0.9], &[0.7]);
        let e = check(&mut st, &a, &p, 0.1, 1e-3);
        eprintln!("planar {direction:?}: {e:.2e}");
        assert!(e < 1e-9, "planar {direction:?}: {e:.2e}");
        let (mut st, a, p) = case(Kepler, cd, direction, &[1.0, 0.2], &[0.1, 0.9]);
        let e = check(&mut st, &a, &p, 0.05, 1e-3);
        eprintln!("kepler {direction:?}: {e:.2e}");
        assert!(e < 1e-9, "kepler {direction:?}: {e:.2e}");
        let s = solve(&mut st, &a, &p, 0.05, None);
        let t = st
            .sub_step_tangent(0.0, &a, &s, 0.05)
            .unwrap()
            .physical(direction.sign());
        let n = 2;
        let mut j = DMatrix::zeros(2 * n, 2 * n);
        for i in 0..n {
            j[(i, n + i)] = 1.0;
            j[(n + i, i)] = -1.0;
        }
        let defect = (t.start.transpose() * &j * &t.start - &j).amax();
        assert!(
            defect < 1e-13,
            "kepler {direction:?}: TᵀJT − J = {defect:.2e}"
        );
    }
}
