//! Round-off: the steppers solve for increments, so a run that is exact at
//! the grid points in exact arithmetic stays exact to a random walk of
//! `ulp(q)` (`√K · ε · |q|` after `K` steps), one step is solved to
//! round-off, and impact times keep their order down to small `h`
//! (docs/theory.md §3).

use diracvi_discrete_dirac::{Direction, LagrangeDirac, NewtonParams, State, state_from_velocity};
use diracvi_geometry::{ConstraintDiscretization, Discretization, GeometryError, System};
use diracvi_models::reference::{NonholonomicPendulumReference, PendulumReferenceParams};
use diracvi_models::{Model, Particle, Pendulum};
use diracvi_tests::{fitted_order, run_model};
use nalgebra::SVector;
use std::f64::consts::PI;

/// Free flight far from the origin: the midpoint scheme reproduces the
/// parabola at the grid points, so the whole error is round-off.
#[test]
fn free_flight_is_exact_at_grid_points_to_a_random_walk_of_round_off() {
    let model = Particle::new(Default::default()).unwrap();
    let g = 9.8;
    for q0 in [SVector::from([0.0, 100.0]), SVector::from([1e4, 1e3])] {
        for h in [1e-3_f64, 1e-4, 1e-5] {
            let mut setup = model.run_defaults();
            setup.q0 = q0;
            setup.v0 = SVector::from([1.0, 0.0]);
            let steps = (0.5_f64 / h).round() as usize;
            let traj = run_model(&model, &setup, h, steps, 1, Direction::Forward).unwrap();
            assert!(traj.events.is_empty());
            let scale = q0.amax();
            let mut worst: f64 = 0.0;
            for r in &traj.records {
                let t = r.k as f64 * h;
                let exact = SVector::from([q0[0] + t, q0[1] - 0.5 * g * t * t]);
                let err = (r.q - exact).amax();
                // random-walk bound of the rounding of q_{k+1} = q_k + d
                let bound = 8.0 * ((r.k + 1) as f64).sqrt() * f64::EPSILON * scale;
                assert!(
                    err <= bound,
                    "q0 = {q0:?}, h = {h:e}, k = {}: error {err:e} > {bound:e}",
                    r.k
                );
                // the momentum p_{k+1} = p_k − h m g is exact up to its
                // own rounding, which is not compensated (at most ε |p| per
                // step, linear in k)
                let p_exact = SVector::from([1.0, -g * t]);
                let ep = (r.p - p_exact).amax();
                let p_bound = 2.0 * (r.k + 1) as f64 * f64::EPSILON * p_exact.amax();
                assert!(
                    ep <= p_bound,
                    "k = {}: momentum error {ep:e} > {p_bound:e}",
                    r.k
                );
                worst = worst.max(err);
            }
            eprintln!(
                "free flight q0 = {q0:?}, h = {h:e}: max |q − q_exact| = {worst:.2e} ({:.2e} of |q|)",
                worst / scale
            );
            assert!(worst <= 1e-11 * scale, "h = {h:e}: {worst:e}");
        }
    }
}

/// One (+) step of the nonholonomic pendulum (forward `L_d`, retraction
/// constraint) has a closed form: with `v_φ = f v_θ` the `θ` equation is the
/// quadratic `h m ℓ² s c f² x² − m ℓ² (1 + s² f²) x + (p_θ + f p_φ + h m g ℓ s) = 0`
/// in `x = v_θ` (`s, c` of `θ_k`). Solved with polishing, the stepper agrees
/// to round-off; with the default tolerance, to 1e-11.
#[test]
fn pendulum_step_matches_closed_form_to_round_off() {
    let model = Pendulum::new(Default::default()).unwrap();
    let (m, g, l) = (1.0, 9.8, 2.0);
    let th = 0.75 * PI;
    let f = |t: f64| PI + t.cos().powi(2);
    let q = SVector::from([th, 0.3]);
    let v = SVector::from([0.25 * PI, f(th) * 0.25 * PI]);
    let s0 = state_from_velocity(&model, 0.0, &q, &v).unwrap();
    for (params, tol) in [
        (NewtonParams::default().with_polish(3), 4.0 * f64::EPSILON),
        (NewtonParams::default(), 1e-11),
    ] {
        for h in [1e-2, 1e-3, 1e-5] {
            let (s, c, fa) = (th.sin(), th.cos(), f(th));
            let ml2 = m * l * l;
            let a2 = h * ml2 * s * c * fa * fa;
            let b = ml2 * (1.0 + s * s * fa * fa);
            let cc = s0.p[0] + fa * s0.p[1] + h * m * g * l * s;
            let x = 2.0 * cc / (b + (b * b - 4.0 * a2 * cc).sqrt());
            let d_exact = SVector::from([h * x, h * fa * x]);
            let p_exact = SVector::from([ml2 * x, ml2 * s * s * fa * x]);
            let mut stepper = LagrangeDirac::plus(
                model.clone(),
                Discretization::Forward,
                ConstraintDiscretization::Retraction,
            )
            .with_params(params);
            let (next, _) = stepper.step(&s0, h).unwrap();
            let d = stepper.last_increment().unwrap();
            let ed = (d - d_exact).amax() / d_exact.amax();
            let ep = (next.p - p_exact).amax() / p_exact.amax();
            eprintln!("pendulum step h = {h:e}: relative errors d {ed:.1e}, p {ep:.1e}");
            assert!(
                ed <= tol && ep <= tol,
                "h = {h:e}: {ed:e}, {ep:e} > {tol:e}"
            );
            assert_eq!(next.q, s0.q + d);
        }
    }
}

/// Impact times of the midpoint pendulum converge at order 2 down to small
/// steps: no round-off floor above 1e-10.
#[test]
fn midpoint_pendulum_impact_times_converge_at_second_order_to_small_h() {
    let model = Pendulum::new(Default::default()).unwrap();
    let mut setup = model.run_defaults();
    setup.discretization = Discretization::Midpoint;
    setup.constraint = ConstraintDiscretization::Midpoint;
    let t_end = 3.0;
    let reference =
        NonholonomicPendulumReference::new(PendulumReferenceParams::default()).solve(t_end);
    let exact = reference.impact_times();
    assert!(exact.len() >= 2);
    let hs = [1e-3, 5e-4, 2.5e-4, 1e-4, 5e-5, 2.5e-5, 1.25e-5];
    let mut errs = vec![];
    for h in hs {
        let steps = (t_end / h).round() as usize;
        let traj = run_model(&model, &setup, h, steps, 0, Direction::Forward).unwrap();
        assert_eq!(traj.events.len(), exact.len(), "h = {h:e}");
        let err = traj
            .events
            .iter()
            .zip(exact)
            .map(|(e, t)| (e.t - t).abs())
            .fold(0.0, f64::max);
        let signed: Vec<String> = traj
            .events
            .iter()
            .zip(exact)
            .map(|(e, t)| format!("{:+.3e}", (e.t - t) / (h * h)))
            .collect();
        eprintln!(
            "midpoint pendulum h = {h:e}: impact-time error {err:.3e}, per impact / h²: {signed:?}"
        );
        errs.push(err);
    }
    let order = fitted_order(&hs, &errs);
    eprintln!("fitted order {order:.3}");
    assert!((order - 2.0).abs() <= 0.1, "order {order}");
    // and the smallest step is still on the line: no floor
    let last = errs[errs.len() - 1];
    let prev = errs[errs.len() - 2];
    assert!(last <= prev / 3.0, "floor: {prev:e} → {last:e}");
}

/// Every impact record carries momenta consistent with `∂L/∂v`:
/// `p_after_raw − p_after` is a constraint reaction `A(q̃)ᵀ λ̃`, and the
/// Hamiltonian evaluated from the records agrees before and after to the
/// order of the scheme. (The impact law balances the *discrete* energy
/// `E_d` exactly — checked to 1e-10 elsewhere; `H(q̃, ·)` of the discrete
/// momenta at `q̃` differs by the scheme's consistency error. For the
/// midpoint particle that difference has the closed form
/// `m g² ((1−α)² − α²) h² / 8`, checked to 1e-10.)
#[test]
fn impact_records_carry_physical_momenta() {
    let particle = Particle::new(Default::default()).unwrap();
    let setup = particle.run_defaults();
    let (m, g, h) = (1.0, 9.8, setup.h);
    let traj = run_model(&particle, &setup, h, 300, 0, Direction::Forward).unwrap();
    assert_eq!(traj.events.len(), 2);
    for e in &traj.events {
        let jump = particle.hamiltonian(&e.q, &e.p_after).unwrap()
            - particle.hamiltonian(&e.q, &e.p_before).unwrap();
        let a = e.alpha;
        let expected = m * g * g * ((1.0 - a).powi(2) - a * a) * h * h / 8.0;
        assert!(
            (jump - expected).abs() <= 1e-10 * e.energy_before.abs(),
            "t = {}: H jump {jump:e} vs {expected:e}",
            e.t
        );
    }
    fn check<Mo: Model<N, M>, const N: usize, const M: usize>(model: &Mo, t_end: f64, bound: f64) {
        let setup = model.run_defaults();
        let steps = (t_end / setup.h).round() as usize;
        let traj = run_model(model, &setup, setup.h, steps, 0, Direction::Forward).unwrap();
        assert!(!traj.events.is_empty(), "{}", Mo::NAME);
        let mut worst: f64 = 0.0;
        for e in &traj.events {
            let hb = model.hamiltonian(&e.q, &e.p_before).unwrap();
            let ha = model.hamiltonian(&e.q, &e.p_after).unwrap();
            worst = worst.max((ha - hb).abs() / hb.abs().max(1.0));
            // the raw momentum differs by a constraint reaction only
            let forms = model.constraint_forms(&e.q);
            let diff = e.p_after_raw - e.p_after;
            let lam = (forms * forms.transpose())
                .try_inverse()
                .map(|g| g * (forms * diff))
                .unwrap_or_else(nalgebra::SVector::zeros);
            let rest = diff - forms.transpose() * lam;
            assert!(rest.amax() <= 1e-9 * (1.0 + diff.amax()), "{}", Mo::NAME);
        }
        eprintln!(
            "{}: {} impacts, max |H(q̃, p_after) − H(q̃, p_before)| / |H| = {worst:.2e}",
            Mo::NAME,
            traj.events.len()
        );
        assert!(worst <= bound, "{}: {worst:e} > {bound:e}", Mo::NAME);
    }
    // midpoint, h = 1e-2: O(h²); the forward pendulum, h = 1e-3: O(h)
    check(&Particle::new(Default::default()).unwrap(), 3.0, 1e-4);
    check(
        &diracvi_models::Ellipse::new(Default::default()).unwrap(),
        3.0,
        1e-4,
    );
    check(
        &diracvi_models::Star::new(Default::default()).unwrap(),
        3.0,
        1e-4,
    );
    check(&Pendulum::new(Default::default()).unwrap(), 5.0, 1e-3);
}

/// Initial data are checked for any `System`, not only catalogue models.
#[test]
fn initial_velocity_outside_the_distribution_is_a_typed_error() {
    let model = Pendulum::new(Default::default()).unwrap();
    let q = SVector::from([0.75 * PI, 0.0]);
    // v_φ ≠ f(θ) v_θ
    let err = state_from_velocity(&model, 0.0, &q, &SVector::from([0.5, 0.0])).unwrap_err();
    assert!(
        matches!(err, GeometryError::InitialViolatesConstraint { row: 0, residual, .. } if (residual - 0.5 * (PI + 0.5)).abs() < 1e-12),
        "{err:?}"
    );
    // outside the cylinder: ℓ |sin θ| > R
    let err = state_from_velocity(
        &model,
        0.0,
        &SVector::from([0.5 * PI, 0.0]),
        &SVector::zeros(),
    )
    .unwrap_err();
    assert!(
        matches!(err, GeometryError::InitialInadmissible { piece: 0, g } if (g - (1.5f64.powi(2) - 4.0)).abs() < 1e-12),
        "{err:?}"
    );
    // admissible data pass
    let ok: State<2> =
        state_from_velocity(&model, 0.0, &q, &SVector::from([0.5, (PI + 0.5) * 0.5])).unwrap();
    assert!(ok.p.iter().all(|x| x.is_finite()));
}
