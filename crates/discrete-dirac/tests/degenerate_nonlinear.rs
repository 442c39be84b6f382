//! A *nonlinear* degenerate Lagrangian, to exercise the generic degenerate
//! path beyond the (linear) LC circuit: an oscillator `q⁰` coupled to an
//! algebraic variable `q¹` that carries no kinetic energy,
//!
//! `L = ½ (v⁰)² − V(q)`, `V = ½ (q⁰)² + ½ (q¹)² + ¼ (q¹)⁴ − q⁰ q¹`.
//!
//! The hidden constraint `∂V/∂q¹ = q¹ + (q¹)³ − q⁰ = 0` fixes `q¹ = s(q⁰)`
//! (one real root, `s` increasing), and `q⁰` obeys the reduced equation
//! `q̈⁰ = −q⁰ + s(q⁰)`. The forward discretization is symplectic-Euler-like,
//! first order.
//!
//! Checked: the hidden constraint holds at every step (to the accuracy the
//! solver's residual bound implies, `1e-12 · scale / h`); every step of the stepper
//! (simplified Newton with the previous step's factors, whose hidden rows
//! now vary from step to step) equals a fresh full-Newton solve polished to
//! round-off (as closely); the kept factors save Jacobian evaluations; and `q⁰(T)` converges
//! to the reduced equation's solution (RK4, fine step) at order 1 ± 0.1.

use crate::common;
use common::{AlgebraicCoupling, fitted_order, slave};
use diracvi_discrete_dirac::{LagrangeDirac, NewtonParams, State, state_from_velocity};
use diracvi_geometry::{ConstraintDiscretization, Discretization, SVector};

/// `q⁰(t_end)` of the reduced equation by RK4 with `n` steps.
fn reduced_rk4(x0: f64, v0: f64, t_end: f64, n: usize) -> f64 {
    let f = |x: f64| -x + slave(x);
    let h = t_end / n as f64;
    let (mut x, mut v) = (x0, v0);
    for _ in 0..n {
        let (k1x, k1v) = (v, f(x));
        let (k2x, k2v) = (v + 0.5 * h * k1v, f(x + 0.5 * h * k1x));
        let (k3x, k3v) = (v + 0.5 * h * k2v, f(x + 0.5 * h * k2x));
        let (k4x, k4v) = (v + h * k3v, f(x + h * k3x));
        x += h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
        v += h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
    }
    x
}

const X0: f64 = 1.2;
const V0: f64 = 0.3;
const T_END: f64 = 4.0;

fn start() -> State<2> {
    let q0 = SVector::from([X0, slave(X0)]);
    state_from_velocity(&AlgebraicCoupling, 0.0, &q0, &SVector::from([V0, 0.0])).unwrap()
}

fn stepper() -> LagrangeDirac<AlgebraicCoupling, Discretization, 2, 0> {
    LagrangeDirac::plus(
        AlgebraicCoupling,
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    )
}

/// `q⁰(T_END)` with `n` steps; asserts the per-step checks on the way and
/// returns the Jacobians evaluated by the solves.
fn run(n: usize) -> (f64, usize) {
    let h = T_END / n as f64;
    let mut st = stepper();
    let mut s = start();
    let mut jacobians = 0;
    for k in 0..n {
        let guess = SVector::zeros();
        let step = st.solve_oriented(s.t, &s.q, &s.p, h, &guess).unwrap();
        assert!(step.degenerate, "step {k}");
        jacobians += step.info.jacobian_evaluations;
        let b = step.b;
        // The hidden-constraint row of the step equations is `h ∂V/∂q¹`,
        // solved to the tolerance 1e-12 of the equation scale (momenta, and
        // the round-off floor `64 ε |D12| |b| / tolerance` with `|D12| = 1/h`):
        // so `∂V/∂q¹` itself, and `q¹` (as `∂²V/∂(q¹)² ≥ 1`), are right to
        // `1e-12 · scale / h`.
        let scale =
            s.p.amax()
                .max(64.0 * f64::EPSILON * b.amax() / (h * 1e-12))
                .max(1.0);
        let bound = 1e-12 * scale / h;
        let hidden = b[1] + b[1].powi(3) - b[0];
        assert!(
            hidden.abs() <= bound,
            "step {k}: hidden constraint {hidden:e} > {bound:e}"
        );
        // the same step solved afresh by full Newton, polished to round-off
        let fresh = stepper()
            .with_params(NewtonParams::default().with_polish(3))
            .solve_oriented(s.t, &s.q, &s.p, h, &guess)
            .unwrap();
        assert!(
            (fresh.b - b).amax() <= bound && (fresh.pi_b - step.pi_b).amax() <= 1e-12 * scale,
            "step {k}: {} vs {}",
            b,
            fresh.b
        );
        s = State {
            t: s.t + h,
            q: b,
            p: step.pi_b,
        };
    }
    (s.q[0], jacobians)
}

#[test]
fn nonlinear_degenerate_system_converges_at_first_order() {
    let reference = reduced_rk4(X0, V0, T_END, 20_000);
    // RK4 self-check: halving its step changes nothing at this level
    assert!((reduced_rk4(X0, V0, T_END, 10_000) - reference).abs() < 1e-13);
    let ns = [100, 200, 400, 800];
    let mut hs = Vec::new();
    let mut errs = Vec::new();
    for n in ns {
        let (x, jacobians) = run(n);
        // The kept factors do most of the work: far fewer Jacobians than steps.
        assert!(
            jacobians * 2 < n,
            "n = {n}: {jacobians} Jacobian evaluations"
        );
        hs.push(T_END / n as f64);
        errs.push((x - reference).abs());
        println!(
            "n = {n}: error {:.3e}, Jacobians {jacobians}",
            (x - reference).abs()
        );
    }
    let order = fitted_order(&hs, &errs);
    println!("fitted order {order:.4}");
    assert!((order - 1.0).abs() <= 0.1, "order {order}");
}
