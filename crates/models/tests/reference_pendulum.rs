//! Accuracy checks of the independent pendulum reference
//! (`diracvi_models::reference::pendulum`): self-convergence, energy,
//! event location, an independent quadrature of the impact times, and the
//! `f ≡ 0` plain pendulum against the elliptic-integral period.

use diracvi_models::reference::{
    NonholonomicPendulumReference, PendulumReferenceParams, PendulumSolution, TaylorOptions,
};
use std::f64::consts::PI;

fn solve(
    p: PendulumReferenceParams,
    step: f64,
    order: usize,
    tolerance: f64,
    t_end: f64,
) -> PendulumSolution {
    let options = TaylorOptions {
        step,
        order,
        tolerance,
        event_samples: 8,
    };
    NonholonomicPendulumReference::with_options(p, options).solve(t_end)
}

/// Gauss–Legendre nodes and weights on [−1, 1] (Newton on P_n).
fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
    (1..=n)
        .map(|i| {
            let mut x = (PI * (i as f64 - 0.25) / (n as f64 + 0.5)).cos();
            let mut dp = 0.0;
            for _ in 0..100 {
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=n {
                    let kf = k as f64;
                    let p2 = ((2.0 * kf - 1.0) * x * p1 - (kf - 1.0) * p0) / kf;
                    p0 = p1;
                    p1 = p2;
                }
                dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
                let dx = p1 / dp;
                x -= dx;
                if dx.abs() < 1e-16 {
                    break;
                }
            }
            (x, 2.0 / ((1.0 - x * x) * dp * dp))
        })
        .collect()
}

/// `∫_a^b f` by composite Gauss–Legendre (20 points, `m` panels).
fn integrate(f: impl Fn(f64) -> f64, a: f64, b: f64, m: usize) -> f64 {
    let gl = gauss_legendre(20);
    let w = (b - a) / m as f64;
    (0..m)
        .map(|i| {
            let mid = a + (i as f64 + 0.5) * w;
            gl.iter()
                .map(|&(x, wt)| wt * f(mid + 0.5 * w * x))
                .sum::<f64>()
                * 0.5
                * w
        })
        .sum()
}

#[test]
fn self_convergence_on_paper_horizon() {
    let p = PendulumReferenceParams::default();
    let a = NonholonomicPendulumReference::new(p).solve(5.0);
    // Finer: half the largest step, higher order, tolerance 1e-4 times smaller.
    let b = solve(p, 1.0 / 32.0, 34, 1e-22, 5.0);
    assert_eq!(a.impact_times().len(), b.impact_times().len());
    assert!(!a.impact_times().is_empty());
    for (ta, tb) in a.impact_times().iter().zip(b.impact_times()) {
        assert!((ta - tb).abs() < 1e-12, "impact {ta} vs {tb}");
    }
    let (mut dth, mut dom) = (0.0f64, 0.0f64);
    for i in 0..=2000 {
        let t = 5.0 * i as f64 / 2000.0;
        if a.impact_times().iter().any(|ti| (t - ti).abs() < 1e-9) {
            continue;
        }
        dth = dth.max((a.theta_at(t) - b.theta_at(t)).abs());
        dom = dom.max((a.theta_dot_at(t) - b.theta_dot_at(t)).abs());
    }
    assert!(dth < 1e-12, "theta self-convergence {dth:e}");
    assert!(dom < 1e-11, "theta_dot self-convergence {dom:e}");
    assert!(a.truncation_estimate() < 1e-17);
}

#[test]
fn energy_gap_and_constraint() {
    let p = PendulumReferenceParams::default();
    let sol = NonholonomicPendulumReference::new(p).solve(5.0);
    let e0 = p.energy(p.theta0, p.theta_dot0);
    let mut worst = 0.0f64;
    for i in 0..=5000 {
        let t = 5.0 * i as f64 / 5000.0;
        worst = worst.max((sol.energy_at(t) - e0).abs() / e0.abs());
        // No crossing missed: the dense output stays inside the cylinder.
        assert!(p.gap(sol.theta_at(t)) > -1e-12, "outside at t = {t}");
    }
    assert!(worst < 1e-12, "relative energy error {worst:e}");
    for imp in sol.impacts() {
        assert!(p.gap(imp.theta).abs() < 1e-13);
        assert!((p.ell * imp.theta.sin().abs() - p.radius).abs() < 1e-13);
        assert!((imp.theta_dot_after + imp.theta_dot_before).abs() < 1e-15);
        // Right-continuous dense output: θ̇ at the impact time is post-impact.
        assert!((sol.theta_dot_at(imp.t) - imp.theta_dot_after).abs() < 1e-12);
        assert!((sol.phi_at(imp.t) - imp.phi).abs() < 1e-12);
    }
    // φ − F(θ) is constant.
    let (th, _, ph) = sol.state_at(3.3);
    assert!((ph - p.big_f(th) - (p.phi0 - p.big_f(p.theta0))).abs() < 1e-12);
}

/// Impact times from an independent quadrature. The reduced motion is 1-DOF
/// with `E₁ > V` on the admissible arc (default data), so it shuttles between
/// the walls `θ_a = π − asin(R/ℓ)` and `θ_b = π + asin(R/ℓ)`:
/// `t₁ = ∫_{θ₀}^{θ_b} dθ/θ̇(θ)`, then every crossing takes `T = ∫_{θ_a}^{θ_b}`.
fn quadrature_impacts(p: &PendulumReferenceParams, t_end: f64) -> Vec<f64> {
    let e = p.energy(p.theta0, p.theta_dot0);
    let rate = |th: f64| (p.inertia(th) / (2.0 * (e - p.m * p.g * p.ell * th.cos()))).sqrt();
    let w = (p.radius / p.ell).asin();
    let (ta, tb) = (PI - w, PI + w);
    let t1 = integrate(rate, p.theta0, tb, 16);
    let period = integrate(rate, ta, tb, 32);
    // Quadrature converged: doubling the panels changes nothing.
    assert!((period - integrate(rate, ta, tb, 64)).abs() < 1e-14);
    assert!((t1 - integrate(rate, p.theta0, tb, 32)).abs() < 1e-14);
    (0..)
        .map(|k| t1 + k as f64 * period)
        .take_while(|&t| t <= t_end)
        .collect()
}

#[test]
fn impact_times_match_quadrature() {
    let p = PendulumReferenceParams::default();
    let expect = quadrature_impacts(&p, 20.0);
    let sol = NonholonomicPendulumReference::new(p).solve(20.0);
    assert_eq!(sol.impact_times().len(), expect.len());
    for (k, (ti, te)) in sol.impact_times().iter().zip(&expect).enumerate() {
        assert!((ti - te).abs() < 1e-12, "impact {k}: {ti} vs {te}");
    }
    // Dense output between impacts: the bob passes θ = π and θ = 2.9 at the
    // times given by the same quadrature.
    let e = p.energy(p.theta0, p.theta_dot0);
    let rate = |th: f64| (p.inertia(th) / (2.0 * (e - p.m * p.g * p.ell * th.cos()))).sqrt();
    for target in [PI, 2.9, 3.9] {
        let t = integrate(rate, p.theta0, target, 16);
        assert!(
            (sol.theta_at(t) - target).abs() < 1e-13,
            "θ({t}) vs {target}"
        );
        // Returning after the first impact at θ_b.
        let t_back = expect[0] + integrate(rate, target, PI + (p.radius / p.ell).asin(), 16);
        assert!((sol.theta_at(t_back) - target).abs() < 1e-13);
        assert!(sol.theta_dot_at(t_back) < 0.0);
    }
}

#[test]
fn plain_pendulum_period_matches_agm() {
    // f ≡ 0 and a wide cylinder: the plain pendulum θ̈ = (g/ℓ) sin θ about
    // θ = π, amplitude 1 rad, period 4 K(k)/√(g/ℓ), k = sin(1/2),
    // K(k) = π / (2 AGM(1, √(1 − k²))).
    let p = PendulumReferenceParams {
        f0: 0.0,
        f2: 0.0,
        radius: 10.0,
        theta0: PI - 1.0,
        theta_dot0: 0.0,
        ..PendulumReferenceParams::default()
    };
    let k = 0.5f64.sin();
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    for _ in 0..10 {
        let (a1, b1) = (0.5 * (a + b), (a * b).sqrt());
        a = a1;
        b = b1;
    }
    let big_k = PI / (2.0 * a);
    let period = 4.0 * big_k / (p.g / p.ell).sqrt();
    let sol = NonholonomicPendulumReference::new(p).solve(3.0 * period + 0.1);
    assert!(sol.impact_times().is_empty());
    for j in 1..=3 {
        let t = j as f64 * period;
        assert!(
            (sol.theta_at(t) - p.theta0).abs() < 1e-12,
            "theta after {j} periods"
        );
        assert!(sol.theta_dot_at(t).abs() < 1e-11);
        let half = t - 0.5 * period;
        assert!((sol.theta_at(half) - (PI + 1.0)).abs() < 1e-12);
    }
}

/// The reference on both paper horizons, [0, 5] and [0, 100]: independent of
/// the step, order and tolerance of the Taylor integrator (to 1e-13 on
/// [0, 5], 1e-11 over 100 s, where 76 impacts amplify round-off), energy
/// conserved to 1e-12, impact times equal to the quadrature ones. Figures:
/// `cargo test -p diracvi-models --test suite reference_pendulum:: -- --nocapture`.
#[test]
fn paper_horizons_self_convergence_energy_and_quadrature() {
    let p = PendulumReferenceParams::default();
    let r = NonholonomicPendulumReference::new(p);
    let s5 = r.solve(5.0);
    println!("impacts in [0,5]: {:?}", s5.impact_times());
    for (step, order, tol) in [
        (1.0 / 32.0, 34, 1e-22),
        (1.0 / 16.0, 24, 1e-18),
        (1.0 / 64.0, 30, 1e-20),
    ] {
        let f = solve(p, step, order, tol, 5.0);
        let (mut dth, mut dom) = (0.0f64, 0.0f64);
        for i in 0..=5000 {
            let t = i as f64 * 1e-3;
            dth = dth.max((s5.theta_at(t) - f.theta_at(t)).abs());
            dom = dom.max((s5.theta_dot_at(t) - f.theta_dot_at(t)).abs());
        }
        let di = s5
            .impact_times()
            .iter()
            .zip(f.impact_times())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!(
            "[0,5] default vs (step {step}, order {order}, tol {tol:e}; {} steps vs {}): theta {dth:e}, theta_dot {dom:e}, impacts {di:e}",
            f.steps(),
            s5.steps()
        );
        assert!(dth <= 1e-13 && dom <= 1e-12 && di <= 1e-13, "step {step}");
    }
    let t0 = std::time::Instant::now();
    let s100 = r.solve(100.0);
    let el = t0.elapsed();
    let e0 = p.energy(p.theta0, p.theta_dot0);
    let mut worst = 0.0f64;
    for i in 0..=100_000 {
        let t = i as f64 * 1e-3;
        worst = worst.max((s100.energy_at(t) - e0).abs() / e0.abs());
    }
    println!(
        "solve(100): {el:?}, {} steps, {} impacts, last {:?}, max rel energy error {worst:e}",
        s100.steps(),
        s100.impact_times().len(),
        s100.impact_times().last()
    );
    assert_eq!(s100.impact_times().len(), 76);
    assert!(worst <= 1e-12, "energy error {worst:e}");
    let fine = solve(p, 1.0 / 32.0, 34, 1e-22, 100.0);
    let di = s100
        .impact_times()
        .iter()
        .zip(fine.impact_times())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let mut dth = 0.0f64;
    for i in 0..=10_000 {
        let t = i as f64 * 1e-2;
        dth = dth.max((s100.theta_at(t) - fine.theta_at(t)).abs());
    }
    println!("100 s self-convergence: impacts {di:e}, theta {dth:e}");
    assert!(di <= 1e-11 && dth <= 1e-11);
    for (sol, t_end) in [(&s5, 5.0), (&s100, 100.0)] {
        let q = quadrature_impacts(&p, t_end);
        assert_eq!(q.len(), sol.impact_times().len());
        let d = q
            .iter()
            .zip(sol.impact_times())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!(
            "[0,{t_end}] vs quadrature: {} impacts, max |dt| {d:e}",
            q.len()
        );
        assert!(d <= 1e-13 * t_end, "[0, {t_end}]: {d:e}");
    }
    println!(
        "quadrature impacts [0,5]: {:?}",
        quadrature_impacts(&p, 5.0)
    );
}

/// The values the comparison scripts and Python tests copy
/// (scripts/tol_vs_scipy.py, scripts/work_precision.py,
/// python/tests/test_order.py, test_tolerance.py): the pendulum's first
/// three impact times and θ(5), the ellipse's impact times and q(3).
#[test]
fn the_values_the_scripts_copy_are_the_references() {
    let p = NonholonomicPendulumReference::new(PendulumReferenceParams::default()).solve(5.0);
    let impacts = [1.2326015969617883, 2.5485206497568043, 3.8644397025518202];
    for (a, b) in p.impact_times().iter().zip(impacts) {
        assert!((a - b).abs() <= 1e-15, "{a} vs {b}");
    }
    assert!((p.theta_at(5.0) - 2.436681453776506).abs() <= 1e-14);
    let e = diracvi_models::reference::RigidBodyReference::ellipse().trajectory(3.0);
    let times: Vec<f64> = e.impacts().iter().map(|i| i.t).collect();
    let expected = [0.750550251917011, 1.1525081230017626, 2.3244233169648503];
    assert_eq!(times.len(), 3);
    for (a, b) in times.iter().zip(expected) {
        assert!((a - b).abs() <= 1e-15, "{a} vs {b}");
    }
    let (q, _) = e.state_at(3.0);
    for (a, b) in q.iter().zip([11.190890277030913, 6.0, 3.411303574404841]) {
        assert!((a - b).abs() <= 1e-14, "{a} vs {b}");
    }
}
