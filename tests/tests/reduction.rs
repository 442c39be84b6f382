//! Symmetry reduction with collisions (docs/theory.md §7): reduced runs on
//! shape space against full runs, the 1-DOF reference, conservation of the
//! Routh momentum, and rejection of wrong declarations.

use approx::assert_abs_diff_eq;
use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, RunOptions, State, Trajectory, simulate, state_from_velocity,
};
use diracvi_geometry::{
    AdScalar, ConstraintDiscretization, CyclicSymmetry, Discretization, Invariant, Reduced,
    ReductionKind, SMatrix, SVector, SymmetryError, System,
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

/// The largest difference of impact times between two runs, which must
/// see the same impacts, at least two.
fn impact_time_difference<const N: usize>(
    a: &Trajectory<N, ImpactEvent<N>>,
    b: &Trajectory<N, ImpactEvent<N>>,
    what: &str,
) -> f64 {
    assert_eq!(a.events.len(), b.events.len(), "{what}");
    assert!(a.events.len() >= 2, "{what}: the run must see impacts");
    a.events
        .iter()
        .zip(&b.events)
        .map(|(x, y)| (x.t - y.t).abs())
        .fold(0.0, f64::max)
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
        let di = impact_time_difference(&full, &red, &format!("h = {h}"));
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

/// The nonholonomic particle `ż = c(y) ẋ`, `c(y) = y + κ y³`, in the
/// harmonic well `V = ½ (x² + y²)`, inside the cylinder `x² + y² ≤ R²`
/// (unit masses): Chaplygin in `z` with a curvature that does not vanish
/// (`Γ = (c(y), 0)`, `Ω(u, w) = c'(y) (u_y w_x − u_x w_y)`).
#[derive(Debug, Clone, Copy)]
struct NonholonomicParticle {
    radius: f64,
    kappa: f64,
}

impl NonholonomicParticle {
    fn c<S: AdScalar>(&self, y: S) -> S {
        y + y * y * y * self.kappa
    }
}

impl System<3, 1> for NonholonomicParticle {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 3>, v: &SVector<S, 3>) -> S {
        v.dot(v) * 0.5 - (q[0] * q[0] + q[1] * q[1]) * 0.5
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 3>) -> SMatrix<S, 1, 3> {
        SMatrix::from_row_slice(&[-self.c(q[1]), S::from(0.0), S::from(1.0)])
    }
    fn boundary_count(&self) -> usize {
        1
    }
    fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 3>) -> S {
        -(q[0] * q[0] + q[1] * q[1]) + self.radius * self.radius
    }
}

/// Unit-radius cylinder, started inside with `ż = c(y) ẋ`.
fn nonholonomic_particle(kappa: f64) -> (NonholonomicParticle, SVector<f64, 3>, SVector<f64, 3>) {
    let model = NonholonomicParticle { radius: 1.0, kappa };
    let q0 = SVector::from([0.3, 0.5, 0.0]);
    let v0 = SVector::from([1.0, 0.4, model.c(0.5) * 1.0]);
    (model, q0, v0)
}

/// The reduced particle's gyroscopic force is the curvature term of the
/// closed form `F = J Ω(ṡ, ·) = c'(y) J (ẏ, −ẋ)` with `J = ż = c(y) ẋ`,
/// and does no work.
#[test]
fn chaplygin_curvature_force_is_the_closed_form() {
    let (model, q0, v0) = nonholonomic_particle(1.0);
    let reduced =
        Reduced::<_, 3, 1, 2, 0>::new(model, CyclicSymmetry::new(&[2]).unwrap(), &q0, &v0).unwrap();
    assert_eq!(reduced.kind(), ReductionKind::Chaplygin);
    assert!(reduced.is_gyroscopic());
    for (s, sd) in [
        ([0.3, 0.5], [1.0, 0.4]),
        ([-0.7, 0.2], [0.3, -1.1]),
        ([0.1, -0.9], [2.0, 0.5]),
    ] {
        let (s, sd) = (SVector::from(s), SVector::from(sd));
        let f = reduced.gyroscopic_force(&s, &sd).unwrap();
        let (y, xd, yd) = (s[1], sd[0], sd[1]);
        let j = model.c(y) * xd;
        let dc = 1.0 + 3.0 * y * y;
        assert_abs_diff_eq!(f[0], dc * j * yd, epsilon = 1e-14);
        assert_abs_diff_eq!(f[1], -dc * j * xd, epsilon = 1e-14);
        assert_abs_diff_eq!(f.dot(&sd), 0.0, epsilon = 1e-14);
    }
    // the pendulum (NR = 1) and the disk's rolling angle carry no force
    let (pendulum, q0, v0) = pendulum();
    let r = Reduced::<_, 2, 1, 1, 0>::new(pendulum, CyclicSymmetry::new(&[1]).unwrap(), &q0, &v0)
        .unwrap();
    assert!(!r.is_gyroscopic());
    let disk = DiskTable::new(DiskTableParams::default()).unwrap();
    let setup = disk.run_defaults();
    let r = Reduced::<_, 4, 2, 3, 1>::new(
        disk,
        CyclicSymmetry::new(&[2]).unwrap(),
        &setup.q0,
        &setup.v0,
    )
    .unwrap();
    assert!(!r.is_gyroscopic());
}

/// The same reduced system without its curvature force (a plain
/// Lagrangian on shape space): the wrong dynamics, to show the force
/// matters.
#[derive(Debug, Clone)]
struct WithoutForce<Sy>(Sy);

impl<Sy: System<2, 0>> System<2, 0> for WithoutForce<Sy> {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        self.0.lagrangian(q, v)
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
        self.0.constraint_forms(q)
    }
    fn boundary_count(&self) -> usize {
        self.0.boundary_count()
    }
    fn boundary<S: AdScalar>(&self, j: usize, q: &SVector<S, 2>) -> S {
        self.0.boundary(j, q)
    }
}

/// Reduced against full midpoint runs of the nonholonomic particle to
/// `T = 3` (two impacts) at `h`: the largest differences of impact times, `(x, y)` and
/// the reconstructed `z`, and the reduced run's energy deviation.
fn particle_differences(kappa: f64, h: f64) -> ([f64; 3], f64) {
    let (model, q0, v0) = nonholonomic_particle(kappa);
    let steps = (3.0 / h).round() as usize;
    let full = full_run(&model, q0, v0, h, steps);
    let (red, reduced) =
        reduced_run::<_, 3, 1, 2, 0>(&model, CyclicSymmetry::new(&[2]).unwrap(), q0, v0, h, steps);
    assert!(reduced.is_gyroscopic());
    let di = impact_time_difference(&full, &red, &format!("κ = {kappa}, h = {h}"));
    let (mut ds, mut dz) = (0.0f64, 0.0f64);
    for (a, b) in full.records.iter().zip(&red.records) {
        ds = ds.max((a.q[0] - b.q[0]).abs().max((a.q[1] - b.q[1]).abs()));
        dz = dz.max((a.q[2] - b.q[2]).abs());
    }
    eprintln!(
        "κ = {kappa}, h = {h:e}: {} impacts, differences {di:e} {ds:e} {dz:e}, energy deviation reduced {:e}, full {:e}",
        red.events.len(),
        red.summary.max_abs_energy_deviation,
        full.summary.max_abs_energy_deviation
    );
    ([di, ds, dz], red.summary.max_abs_energy_deviation)
}

/// With `c(y) = y` (`Γ` affine in the shape) the reduced midpoint scheme
/// with the discrete curvature forces `(h/2) F` is the full midpoint
/// scheme exactly (docs/theory.md §7): the x-rows of the two discrete
/// Euler–Lagrange equations are identical after eliminating the multiplier.
/// So reduced and full runs agree to round-off through the impacts, and
/// the energy error is the full run's O(h²).
#[test]
fn reduced_particle_with_affine_connection_is_the_full_scheme() {
    let hs = [4e-3, 2e-3, 1e-3];
    let mut energy = vec![];
    for &h in &hs {
        let (d, e) = particle_differences(0.0, h);
        for (name, x) in ["impact times", "(x, y)", "z"].iter().zip(d) {
            assert!(x < 1e-11, "h = {h}: {name} differ by {x:e}");
        }
        energy.push(e);
    }
    let order = fitted_order(&hs, &energy);
    assert!(
        (order - 2.0).abs() < 0.2,
        "energy order {order} ({energy:?})"
    );
}

/// With `c(y) = y + y³` the reduced and full schemes differ, by O(h²):
/// impact times, `(x, y)` and the reconstructed `z` (largest differences
/// over the run, fitted order 2 ± 0.1 over five steps: the three-step fits
/// at the largest steps wander by ±0.15 as the place of the largest
/// difference moves). Dropping the curvature force gives O(1) errors
/// instead.
#[test]
fn reduced_particle_with_curvature_agrees_with_full_run_to_second_order() {
    let hs = [4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4];
    let mut diffs = [vec![], vec![], vec![]];
    for &h in &hs {
        let (d, e) = particle_differences(1.0, h);
        assert!(e < 50.0 * h * h, "energy deviation {e:e}");
        for (list, x) in diffs.iter_mut().zip(d) {
            list.push(x);
        }
    }
    for (name, es) in ["impact times", "(x, y)", "z"].iter().zip(&diffs) {
        let order = fitted_order(&hs, es);
        eprintln!("{name}: fitted order {order}");
        assert!(
            (order - 2.0).abs() < 0.1,
            "{name}: fitted order {order} ({es:?})"
        );
    }
    // without the curvature force the shape dynamics is wrong at O(1)
    let (model, q0, v0) = nonholonomic_particle(1.0);
    let (h, steps) = (1e-3, 3000);
    let full = full_run(&model, q0, v0, h, steps);
    let reduced =
        Reduced::<_, 3, 1, 2, 0>::new(model, CyclicSymmetry::new(&[2]).unwrap(), &q0, &v0).unwrap();
    let shape = |q: &SVector<f64, 3>| SVector::from([q[0], q[1]]);
    let wrong = full_run(&WithoutForce(reduced), shape(&q0), shape(&v0), h, steps);
    let worst = full
        .records
        .iter()
        .zip(&wrong.records)
        .map(|(a, b)| (a.q[0] - b.q[0]).abs().max((a.q[1] - b.q[1]).abs()))
        .fold(0.0, f64::max);
    assert!(
        worst > 1e-2,
        "dropping the force changed (x, y) by only {worst:e}"
    );
}
