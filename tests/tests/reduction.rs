//! Symmetry reduction with collisions (docs/theory.md §7): reduced runs on
//! shape space against full runs, the 1-DOF reference, conservation of the
//! Routh momentum, and rejection of wrong declarations.

use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, RunOptions, State, Trajectory, simulate, state_from_velocity,
};
use diracvi_geometry::{
    ConstraintDiscretization, CyclicSymmetry, Discretization, Invariant, Reduced, ReductionKind,
    SVector, SymmetryError, System,
};
use diracvi_impact::{ImpactEvent, ImpactIntegrator, Reconstructing};
use diracvi_models::reference::{NonholonomicPendulumReference, PendulumReferenceParams};
use diracvi_models::{
    DiskTable, DiskTableParams, Model, Particle, ParticleParams, Pendulum, PendulumParams,
};

const MID: Discretization = Discretization::Midpoint;
const MIDC: ConstraintDiscretization = ConstraintDiscretization::Midpoint;

/// A full midpoint run with impacts.
fn full_run<Sy: System<N, M> + Clone, const N: usize, const M: usize>(
    system: &Sy,
    q0: SVector<f64, N>,
    v0: SVector<f64, N>,
    h: f64,
    steps: usize,
) -> Trajectory<N, ImpactEvent<N>> {
    let stepper = LagrangeDirac::new(system.clone(), MID, MIDC, Direction::Forward);
    let mut integrator = ImpactIntegrator::new(stepper);
    let start = state_from_velocity(system, 0.0, &q0, &v0).unwrap();
    simulate(&mut integrator, start, h, RunOptions::new(steps)).unwrap()
}

/// The reduced run of `system` by `symmetry`, reconstructed to full states.
fn reduced_run<Sy, const N: usize, const M: usize, const NR: usize, const MR: usize>(
    system: &Sy,
    symmetry: CyclicSymmetry<N>,
    q0: SVector<f64, N>,
    v0: SVector<f64, N>,
    h: f64,
    steps: usize,
) -> (Trajectory<N, ImpactEvent<N>>, Reduced<Sy, N, M, NR, MR>)
where
    Sy: System<N, M> + Clone,
{
    let reduced = Reduced::<Sy, N, M, NR, MR>::new(system.clone(), symmetry, &q0, &v0).unwrap();
    let s0 = reduced.project(&q0);
    let sd0 = reduced.project(&v0);
    let start_reduced = state_from_velocity(&reduced, 0.0, &s0, &sd0).unwrap();
    let stepper = LagrangeDirac::new(reduced.clone(), MID, MIDC, Direction::Forward);
    let mut integrator = Reconstructing::new(
        ImpactIntegrator::new(stepper),
        reduced.clone(),
        MID,
        start_reduced,
    );
    let start = State {
        t: 0.0,
        q: q0,
        p: system.momentum(&q0, &v0),
    };
    let run = simulate(&mut integrator, start, h, RunOptions::new(steps)).unwrap();
    (run, reduced)
}

fn pendulum() -> (Pendulum, SVector<f64, 2>, SVector<f64, 2>) {
    let p = Pendulum::new(PendulumParams::default()).unwrap();
    let setup = p.run_defaults();
    (p, setup.q0, setup.v0)
}

/// Least-squares slope of `log e` against `log h`.
fn fitted_order(hs: &[f64], es: &[f64]) -> f64 {
    let xs: Vec<f64> = hs.iter().map(|h| h.ln()).collect();
    let ys: Vec<f64> = es.iter().map(|e| e.ln()).collect();
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

/// The reduced pendulum (φ cyclic, Chaplygin) against the full midpoint
/// run: impact times, θ(t) and the reconstructed φ(t) differ by O(h²).
#[test]
fn reduced_pendulum_agrees_with_full_run_to_second_order() {
    let (model, q0, v0) = pendulum();
    let symmetry = CyclicSymmetry::new(&[1]).unwrap();
    let t_end: f64 = 3.0;
    let hs = [4e-3, 2e-3, 1e-3];
    let (mut e_impact, mut e_theta, mut e_phi) = (vec![], vec![], vec![]);
    for &h in &hs {
        let steps = (t_end / h).round() as usize;
        let full = full_run(&model, q0, v0, h, steps);
        let (red, reduced) = reduced_run::<_, 2, 1, 1, 0>(&model, symmetry, q0, v0, h, steps);
        assert_eq!(reduced.kind(), ReductionKind::Chaplygin);
        assert_eq!(full.events.len(), red.events.len(), "h = {h}");
        assert!(full.events.len() >= 2, "the run must see impacts");
        let di = full
            .events
            .iter()
            .zip(&red.events)
            .map(|(a, b)| (a.t - b.t).abs())
            .fold(0.0, f64::max);
        let (mut dt, mut dp) = (0.0f64, 0.0f64);
        for (a, b) in full.records.iter().zip(&red.records) {
            assert_eq!(a.k, b.k);
            dt = dt.max((a.q[0] - b.q[0]).abs());
            dp = dp.max((a.q[1] - b.q[1]).abs());
        }
        // the reconstructed path satisfies the full midpoint constraint
        for w in red.records.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            if red.events.iter().any(|e| e.step + 1 == b.k) {
                continue;
            }
            let mid = (a.q + b.q) * 0.5;
            let r = model.f(mid[0]) * (b.q[0] - a.q[0]) - (b.q[1] - a.q[1]);
            assert!(r.abs() < 1e-12, "k = {}: midpoint constraint {r:e}", b.k);
        }
        // discrete energy: conserved to O(h²) in both
        eprintln!(
            "h = {h:e}: energy deviation reduced {:e}, full {:e}",
            red.summary.max_abs_energy_deviation, full.summary.max_abs_energy_deviation
        );
        assert!(red.summary.max_abs_energy_deviation < 400.0 * h * h);
        e_impact.push(di);
        e_theta.push(dt);
        e_phi.push(dp);
    }
    eprintln!("impact {e_impact:?}\ntheta {e_theta:?}\nphi {e_phi:?}");
    for (name, es) in [("impact times", &e_impact), ("θ", &e_theta), ("φ", &e_phi)] {
        let order = fitted_order(&hs, es);
        assert!(
            (order - 2.0).abs() < 0.1,
            "{name}: fitted order {order} ({es:?})"
        );
    }
}

/// The reduced pendulum against the 1-DOF high-accuracy reference at
/// h = 1e-3: θ(t), φ(t) and the impact times to 1e-5.
#[test]
fn reduced_pendulum_matches_reference() {
    let (model, q0, v0) = pendulum();
    let (h, t_end): (f64, f64) = (1e-3, 3.0);
    let steps = (t_end / h).round() as usize;
    let (red, _) =
        reduced_run::<_, 2, 1, 1, 0>(&model, CyclicSymmetry::new(&[1]).unwrap(), q0, v0, h, steps);
    let params = PendulumReferenceParams::default();
    let reference = NonholonomicPendulumReference::new(params).solve(t_end);
    // (θ error, φ error, drift of the constraint's first integral φ − F(θ))
    let mut worst = (0.0f64, 0.0f64, 0.0f64);
    let c0 = q0[1] - params.big_f(q0[0]);
    for r in &red.records {
        worst.0 = worst.0.max((r.q[0] - reference.theta_at(r.t)).abs());
        worst.1 = worst.1.max((r.q[1] - reference.phi_at(r.t)).abs());
        worst.2 = worst.2.max((r.q[1] - params.big_f(r.q[0]) - c0).abs());
    }
    let times = reference.impact_times();
    assert!(times.len() >= 2);
    assert_eq!(times.len(), red.events.len());
    let di = times
        .iter()
        .zip(&red.events)
        .map(|(a, b)| (a - b.t).abs())
        .fold(0.0, f64::max);
    eprintln!(
        "reference: θ {:e}, φ {:e}, φ − F(θ) drift {:e}, impact times {di:e}",
        worst.0, worst.1, worst.2
    );
    // θ and the impact times to 1e-5; φ = F(θ) + c carries the θ error
    // times f ≤ f₀ + f₁ ≈ 4.1, and the quadrature adds O(h²) to φ − F(θ).
    assert!(
        worst.0 < 1e-5 && di < 1e-5,
        "θ {:e}, impact times {di:e}",
        worst.0
    );
    assert!(worst.1 < 4.2e-5, "φ {:e}", worst.1);
    assert!(worst.2 < 5e-6, "φ − F(θ) {:e}", worst.2);
}

/// Routh reduction of the bouncing particle by its horizontal translation:
/// the momentum p_x is exact in the reduced run, and the reconstruction is
/// the full run (the discrete Routhian of the midpoint L_d is the midpoint
/// discretization of the continuous Routhian).
#[test]
fn routh_particle_momentum_exact_and_reconstruction_equals_full_run() {
    let model = Particle::new(ParticleParams::default()).unwrap();
    let (q0, v0) = (SVector::from([0.3, 2.0]), SVector::from([1.25, 0.5]));
    let (h, steps) = (1e-2, 400);
    let full = full_run(&model, q0, v0, h, steps);
    let (red, reduced) =
        reduced_run::<_, 2, 0, 1, 0>(&model, CyclicSymmetry::new(&[0]).unwrap(), q0, v0, h, steps);
    assert_eq!(reduced.kind(), ReductionKind::Routh);
    assert_eq!(reduced.momentum(), vec![1.25]);
    assert!(red.events.len() >= 3);
    assert_eq!(full.events.len(), red.events.len());
    for r in &red.records {
        assert!(
            (r.p[0] - 1.25).abs() <= 1e-14,
            "k = {}: p_x = {}",
            r.k,
            r.p[0]
        );
    }
    for e in &red.events {
        assert!((e.p_before[0] - 1.25).abs() <= 1e-14 && (e.p_after[0] - 1.25).abs() <= 1e-14);
    }
    let mut worst = 0.0f64;
    for (a, b) in full.records.iter().zip(&red.records) {
        worst = worst.max((a.q - b.q).amax()).max((a.p - b.p).amax() * h);
    }
    for (a, b) in full.events.iter().zip(&red.events) {
        worst = worst.max((a.t - b.t).abs()).max((a.q - b.q).amax());
    }
    eprintln!("Routh particle: reconstruction vs full {worst:e}");
    assert!(
        worst < 1e-11,
        "reconstruction differs from the full run by {worst:e}"
    );
}

/// The rolling disk in the circular table reduced by its rolling angle θ
/// (Chaplygin with one constraint left on shape space): the reconstruction
/// agrees with the full run to O(h²) and keeps the energy.
#[test]
fn disk_table_reduced_by_rolling_angle() {
    let model = DiskTable::new(DiskTableParams::default()).unwrap();
    let setup = model.run_defaults();
    let (h, steps) = (1e-2, 600);
    let full = full_run(&model, setup.q0, setup.v0, h, steps);
    let (red, reduced) = reduced_run::<_, 4, 2, 3, 1>(
        &model,
        CyclicSymmetry::new(&[2]).unwrap(),
        setup.q0,
        setup.v0,
        h,
        steps,
    );
    assert_eq!(reduced.kind(), ReductionKind::Chaplygin);
    assert!(!full.events.is_empty());
    assert_eq!(full.events.len(), red.events.len());
    let mut worst = 0.0f64;
    for (a, b) in full.records.iter().zip(&red.records) {
        worst = worst.max((a.q - b.q).amax());
    }
    eprintln!(
        "disk-table: reduced vs full {worst:e}, energy {:e}",
        red.summary.max_abs_energy_deviation
    );
    assert!(worst < 1e-2, "{worst:e}");
    assert!(red.summary.max_abs_energy_deviation < 1e-3);
}

/// Declarations that are not symmetries are rejected with a typed error
/// naming what changed.
#[test]
fn wrong_symmetry_declarations_are_rejected() {
    let (model, q0, v0) = pendulum();
    // θ is not cyclic: L (through sin²θ, cos θ) and the wall see it.
    let err = CyclicSymmetry::<2>::new(&[0])
        .unwrap()
        .check::<_, 1>(&model, &q0, &v0)
        .unwrap_err();
    match err {
        SymmetryError::NotInvariant {
            quantity,
            difference,
            tolerance,
            ..
        } => {
            assert_eq!(quantity, Invariant::Lagrangian);
            assert!(difference > 1e3 * tolerance, "{difference:e}");
        }
        other => panic!("unexpected {other}"),
    }
    // the particle's height: L changes (gravity) by m g |shift|
    let particle = Particle::new(ParticleParams::default()).unwrap();
    let r = Reduced::<_, 2, 0, 1, 0>::new(
        particle,
        CyclicSymmetry::new(&[1]).unwrap(),
        &SVector::from([0.0, 2.0]),
        &SVector::from([1.0, 0.0]),
    );
    assert!(matches!(
        r,
        Err(SymmetryError::NotInvariant {
            quantity: Invariant::Lagrangian,
            ..
        })
    ));
    // disk-table: x is not cyclic (the table's wall sees it; L and A do not)
    let disk = DiskTable::new(DiskTableParams::default()).unwrap();
    let setup = disk.run_defaults();
    let err = CyclicSymmetry::<4>::new(&[0])
        .unwrap()
        .check::<_, 2>(&disk, &setup.q0, &setup.v0)
        .unwrap_err();
    assert!(
        matches!(
            err,
            SymmetryError::NotInvariant {
                quantity: Invariant::Boundary { .. },
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("boundary piece"), "{err}");
    // bad declarations and wrong reduced sizes
    assert!(matches!(
        CyclicSymmetry::<2>::new(&[2]),
        Err(SymmetryError::BadDeclaration { .. })
    ));
    assert!(matches!(
        CyclicSymmetry::<2>::new(&[0, 1]),
        Err(SymmetryError::BadDeclaration { .. })
    ));
    let (model, q0, v0) = pendulum();
    let r = Reduced::<_, 2, 1, 1, 1>::new(model, CyclicSymmetry::new(&[1]).unwrap(), &q0, &v0);
    assert!(matches!(
        r,
        Err(SymmetryError::SizeMismatch { expected_mr: 0, .. })
    ));
}
