//! (−) inverts (+) for unconstrained systems (docs/theory.md §3), and the Lagrange–Dirac
//! and nonholonomic Hamiltonian steppers coincide for a hyperregular `L`
//! (symplectic Euler, \[DDM\] §5), with and without a nonholonomic constraint.

use crate::common;
use common::{Kepler, Pendulum, Planar, f_pend, kepler_pericenter};
use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, NewtonParams, NonholonomicHamiltonian, State, SymplecticEuler,
    state_from_velocity,
};
use diracvi_geometry::{ConstraintDiscretization, Discretization, EndPoint, SVector, System};
use std::f64::consts::PI;

/// Largest scaled difference of two states: `max(|Δq|∞, |Δp|∞) / max(1, |x|∞)`.
fn state_diff<const N: usize>(a: &State<N>, b: &State<N>) -> f64 {
    let dq = (a.q - b.q).amax() / a.q.amax().max(1.0);
    let dp = (a.p - b.p).amax() / a.p.amax().max(1.0);
    dq.max(dp)
}

/// Newton parameters that solve to the round-off floor: the default
/// tolerance 1e-12, then up to 3 polishing iterations while the residual
/// still shrinks. The identities below are properties of the schemes; with
/// the default stopping rule alone the accepted solver error (relative
/// 1e-12 in `b`, amplified by `M/h` in the momentum `p = D2 L_d` and
/// accumulated along the orbit) reaches 1e-9…1e-7 over 1000 steps.
fn tight() -> NewtonParams {
    NewtonParams::default().with_polish(3)
}

/// 1000 (+) steps then 1000 (−) steps; the scaled distance to the start.
fn round_trip<Sy, const N: usize>(
    system: Sy,
    disc: Discretization,
    s0: State<N>,
    h: f64,
    params: NewtonParams,
) -> f64
where
    Sy: System<N, 0> + Copy,
{
    let cd = ConstraintDiscretization::Retraction;
    let mut plus = LagrangeDirac::plus(system, disc, cd).with_params(params);
    let mut minus = LagrangeDirac::minus(system, disc, cd).with_params(params);
    let mut s = s0;
    for _ in 0..1000 {
        s = plus.step(&s, h).unwrap().0;
    }
    assert!(state_diff(&s0, &s) > 0.1, "the test should move the system");
    for _ in 0..1000 {
        s = minus.step(&s, h).unwrap().0;
    }
    assert!(s.t.abs() <= 1e-12, "time after the round trip {}", s.t);
    state_diff(&s0, &s)
}

/// One (−) step undoes one (+) step, and 1000 steps forward then 1000 back
/// return to the start.
fn check_inverse<Sy, const N: usize>(
    name: &str,
    system: Sy,
    q0: SVector<f64, N>,
    v0: SVector<f64, N>,
    h: f64,
) where
    Sy: System<N, 0> + Copy,
{
    let cd = ConstraintDiscretization::Retraction;
    let s0 = state_from_velocity(&system, 0.0, &q0, &v0).unwrap();
    for disc in Discretization::ALL {
        // One step, default tolerance.
        let mut plus = LagrangeDirac::plus(system, disc, cd);
        let mut minus = LagrangeDirac::minus(system, disc, cd);
        let (s1, _) = plus.step(&s0, h).unwrap();
        let (back, _) = minus.step(&s1, h).unwrap();
        let one = state_diff(&s0, &back);
        assert!(
            one <= 1e-12,
            "{name} {disc}: one (−) step misses the start by {one:e}"
        );
        assert!((back.t - s0.t).abs() <= 1e-15, "time {}", back.t);

        let default = round_trip(system, disc, s0, h, NewtonParams::default());
        let tight = round_trip(system, disc, s0, h, tight());
        eprintln!(
            "{name} {disc}: one-step inverse error {one:.2e}; 1000-step round trip {tight:.2e} (solved to round-off), {default:.2e} (default 1e-12)"
        );
        assert!(
            tight <= 1e-9,
            "{name} {disc}: round trip misses the start by {tight:e}"
        );
        assert!(
            default <= 1e-8,
            "{name} {disc}: round trip (default tolerance) misses by {default:e}"
        );
    }
}

#[test]
fn minus_inverts_plus_planar_pendulum() {
    check_inverse(
        "planar",
        Planar,
        SVector::from([1.0]),
        SVector::from([0.5]),
        0.01,
    );
}

#[test]
fn minus_inverts_plus_kepler() {
    let (q0, v0) = kepler_pericenter(1.0, 0.5);
    // An eccentric orbit (e = 0.5) through its pericenter.
    check_inverse("Kepler", Kepler, q0, v0, 0.01);
}

/// Runs `steps` steps of both steppers in `direction` from `s0` and returns
/// the largest scaled difference of the states along the way and the largest
/// constraint residual (docs/theory.md §6) of either.
fn compare_ld_hamiltonian<Sy, const N: usize, const M: usize>(
    system: Sy,
    direction: Direction,
    s0: State<N>,
    h: f64,
    steps: usize,
    params: NewtonParams,
) -> (f64, f64)
where
    Sy: System<N, M> + Copy,
{
    let cd = ConstraintDiscretization::Retraction;
    let mut ham = NonholonomicHamiltonian::new(
        system,
        Discretization::Forward,
        cd,
        SymplecticEuler,
        direction,
    )
    .with_params(params);
    let (mut worst, mut residual): (f64, f64) = (0.0, 0.0);
    let (mut a, mut b) = (s0, s0);
    // The step's own discrete constraint (ω_{d+} forward, ω_{d−} backward),
    // in the units of docs/theory.md §6.
    let constraint_residual = |from: &State<N>, to: &State<N>| {
        let c: SVector<f64, M> = cd
            .evaluate(
                &system,
                &Discretization::Forward,
                direction.orientation(),
                &from.q,
                &to.q,
                h,
            )
            .unwrap();
        c.amax() * h / to.q.amax().max(1.0)
    };
    let mut ld_plus = LagrangeDirac::plus(system, Discretization::Forward, cd).with_params(params);
    let mut ld_minus = LagrangeDirac::minus(system, EndPoint, cd).with_params(params);
    for _ in 0..steps {
        let a1 = match direction {
            Direction::Forward => ld_plus.step(&a, h).unwrap().0,
            Direction::Backward => ld_minus.step(&a, h).unwrap().0,
        };
        let b1 = ham.step(&b, h).unwrap().0;
        residual = residual
            .max(constraint_residual(&a, &a1))
            .max(constraint_residual(&b, &b1));
        (a, b) = (a1, b1);
        worst = worst.max(state_diff(&a, &b));
    }
    assert!((a.t - b.t).abs() <= 1e-12);
    assert!((a.q - s0.q).amax() > 0.1, "the test should move the system");
    (worst, residual)
}

#[test]
fn lagrange_dirac_and_hamiltonian_agree_nonholonomic_pendulum() {
    let pend = Pendulum::default();
    let th0 = 0.75 * PI;
    let q0 = SVector::from([th0, 0.0]);
    let v0 = SVector::from([0.25 * PI, f_pend(th0) * 0.25 * PI]);
    let s0 = state_from_velocity(&pend, 0.0, &q0, &v0).unwrap();
    // 800 steps forward: θ goes from 0.75π through π (sin θ = 0, where H is
    // singular and only the constrained motion keeps it finite) to ≈ 1.13π.
    for (h, steps) in [(1e-3, 800), (1e-4, 2000)] {
        for direction in [Direction::Forward, Direction::Backward] {
            let (d, res) =
                compare_ld_hamiltonian::<_, 2, 1>(pend, direction, s0, h, steps, tight());
            let (dd, _) = compare_ld_hamiltonian::<_, 2, 1>(
                pend,
                direction,
                s0,
                h,
                steps,
                NewtonParams::default(),
            );
            eprintln!(
                "pendulum h = {h:.0e} {direction:?}: max |LD − H| = {d:.2e} (solved to round-off), {dd:.2e} (default 1e-12); max constraint residual {res:.1e}"
            );
            assert!(
                d <= 1e-10,
                "{direction:?}: Lagrange–Dirac and Hamiltonian differ by {d:e}"
            );
            // With the default tolerance the Lagrange–Dirac solve may stop
            // after one warm-started iteration with b accurate to ~1e-12·|b|
            // (its equation scale includes |D12|·|b|); the error has the same
            // sign step after step and drifts the momentum by ~M·1e-12|b|/h
            // per step, ≈ 2e-7 over these 800 backward steps.
            assert!(
                dd <= 1e-6,
                "{direction:?}, default tolerance: differ by {dd:e}"
            );
            assert!(res <= 1e-12, "constraint residual {res:e}");
        }
    }
}

#[test]
fn lagrange_dirac_and_hamiltonian_agree_unconstrained() {
    let (q0, v0) = kepler_pericenter(1.0, 0.5);
    let sk = state_from_velocity(&Kepler, 0.0, &q0, &v0).unwrap();
    let sp =
        state_from_velocity(&Planar, 0.0, &SVector::from([1.0]), &SVector::from([0.5])).unwrap();
    for direction in [Direction::Forward, Direction::Backward] {
        let p = NewtonParams::default();
        let (dk, _) = compare_ld_hamiltonian::<_, 2, 0>(Kepler, direction, sk, 1e-2, 1000, p);
        let (dp, _) = compare_ld_hamiltonian::<_, 1, 0>(Planar, direction, sp, 1e-2, 1000, p);
        eprintln!(
            "Kepler {direction:?}: {dk:.2e}; planar {direction:?}: {dp:.2e} (default tolerance)"
        );
        assert!(dk <= 1e-10, "Kepler {direction:?}: {dk:e}");
        assert!(dp <= 1e-10, "planar {direction:?}: {dp:e}");
    }
}

/// The Hamiltonian stepper converges at small steps. Before its constraint
/// rows were measured in configuration units, Newton stalled at a round-off
/// floor `|A| ulp(q) / h` above the tolerance on about 20 % of the steps at
/// h = 1e-4 and most steps at h = 1e-5.
#[test]
fn hamiltonian_stepper_converges_at_small_steps() {
    let pend = Pendulum::default();
    let th0 = 0.75 * PI;
    let q0 = SVector::from([th0, 0.0]);
    let v0 = SVector::from([0.25 * PI, f_pend(th0) * 0.25 * PI]);
    let s0 = state_from_velocity(&pend, 0.0, &q0, &v0).unwrap();
    let cd = ConstraintDiscretization::Retraction;
    for (h, steps) in [(1e-4, 3000), (1e-5, 3000)] {
        let mut ham = NonholonomicHamiltonian::new(
            pend,
            Discretization::Forward,
            cd,
            SymplecticEuler,
            Direction::Forward,
        );
        let mut s = s0;
        for k in 0..steps {
            let s1 = ham
                .step(&s, h)
                .unwrap_or_else(|e| panic!("h = {h:e}: {e}"))
                .0;
            let r = cd
                .residual(&pend, &Discretization::Forward, &s.q, &s1.q, h)
                .unwrap();
            assert!(r <= 1e-12, "h = {h:e}, step {k}: constraint residual {r:e}");
            s = s1;
        }
    }
}
