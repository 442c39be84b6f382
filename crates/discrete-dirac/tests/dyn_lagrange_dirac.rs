//! The run-time-sized Lagrange–Dirac stepper (`DynLagrangeDirac`) against
//! the compile-time-sized one (`LagrangeDirac`): on `Fixed` twins of static
//! systems the two follow the same trajectory BIT FOR BIT, step after step
//! (positions, momenta, times, Newton statistics, discrete energies) — a
//! free particle, the nonholonomic pendulum of \[VCI\] §4.3, a rolling
//! disk, the degenerate LC circuit of \[DDM\] §6, the symmetric variant, the
//! (−) stepper backward in time and a coupled system of 12 coordinates with
//! 3 nonholonomic rows (two chunks of derivative directions). (A native
//! `DynSystem` chain of 50 bodies keeping its energy and its constraint is
//! in tests/long/tests/long_horizons.rs, at opt-level 2.)
//!
//! `cargo test -p diracvi-discrete-dirac-tests --test suite dyn_lagrange_dirac:: -- --nocapture`
//! prints the time per step of both cores.

use crate::common;

use common::{Lc, Pendulum, f_pend};
use diracvi_discrete_dirac::dynamic::{
    DynLagrangeDirac, DynSubStepper, dyn_step_measures, integrate_dyn,
};
use diracvi_discrete_dirac::lagrange_dirac::step_measures;
use diracvi_discrete_dirac::{
    Direction, DynState, LagrangeDirac, NewtonParams, RunOptions, State, StepError, StepStats,
    integrate, state_from_velocity,
};
use diracvi_geometry::dynamic::{Erased, Fixed};
use diracvi_geometry::{
    AdScalar, ConstraintDiscretization, Discretization, GeometryError, SMatrix, SVector, System,
};
use nalgebra::DVector;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------- systems

/// A particle in the plane under gravity and a soft periodic potential, far
/// from any wall (the bouncing particle between impacts): `n = 2, m = 0`.
#[derive(Clone, Copy)]
struct Particle;

impl System<2, 0> for Particle {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        (v[0] * v[0] + v[1] * v[1]) * 0.5 - q[1] * 9.81 + (q[0] * 2.0).cos() * 0.3
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
        SMatrix::zeros()
    }
}

/// A vertical disk rolling without slipping (\[INC\] §6 without its wall),
/// with a weak potential on the heading so that the motion is not trivial:
/// `n = 4, m = 2`.
#[derive(Clone, Copy)]
struct Disk;

impl System<4, 2> for Disk {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 4>, v: &SVector<S, 4>) -> S {
        (v[0] * v[0] + v[1] * v[1]) * 0.5 + v[2] * v[2] * 0.25 + v[3] * v[3] * 0.125
            - (q[3] * 2.0).sin() * 0.05
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 4>) -> SMatrix<S, 2, 4> {
        let (one, zero) = (S::from(1.0), S::from(0.0));
        let (s, c) = (q[3].sin(), q[3].cos());
        SMatrix::<S, 2, 4>::new(one, zero, -c, zero, zero, one, -s, zero)
    }
}

/// `K` coupled pendulum-like coordinates with nonlinear springs, a
/// velocity-dependent coupling, `M` nonholonomic rows and a workless
/// gyroscopic force (as in the geometry crate's dynamic tests): a system
/// larger than one chunk of derivative directions.
#[derive(Clone, Copy)]
struct Coupled<const K: usize, const M: usize>;

impl<const K: usize, const M: usize> System<K, M> for Coupled<K, M> {
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
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, K>) -> SMatrix<S, M, K> {
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
        // F = B(q) v with B antisymmetric: workless.
        let b = q[0].cos() + 1.0;
        Some(SVector::from_fn(|i, _| {
            let next = v[(i + 1) % K];
            let prev = v[(i + K - 1) % K];
            (next - prev) * b
        }))
    }
}

/// A *nonlinear* degenerate system over two chunks of directions: five
/// oscillators `x_j = q_{2j}` with kinetic energy, joined by springs, and
/// five algebraic variables `y_j = q_{2j+1}` without any, each held by its
/// hidden constraint `∂V/∂y_j = y_j + y_j³ − (x_j + x_{j+1})/2 = 0`
/// (`x_5 = 0`); two nonholonomic rows on the oscillators. `n = 10, m = 2`.
#[derive(Clone, Copy)]
struct Ladder;

impl Ladder {
    /// The value `y_j` that the hidden constraint fixes: the root of
    /// `y + y³ = c`.
    fn slave(c: f64) -> f64 {
        let mut y = c.cbrt().min(c);
        for _ in 0..60 {
            y -= (y + y * y * y - c) / (1.0 + 3.0 * y * y);
        }
        y
    }

    /// `y_j + y_j³ − (x_j + x_{j+1})/2` for every `j`, largest in magnitude.
    fn hidden_violation(q: &SVector<f64, 10>) -> f64 {
        (0..5)
            .map(|j| {
                let (x, y) = (q[2 * j], q[2 * j + 1]);
                let right = if j < 4 { q[2 * j + 2] } else { 0.0 };
                (y + y * y * y - (x + right) * 0.5).abs()
            })
            .fold(0.0, f64::max)
    }
}

impl System<10, 2> for Ladder {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 10>, v: &SVector<S, 10>) -> S {
        let mut l = S::from(0.0);
        for j in 0..5 {
            let (x, y) = (q[2 * j], q[2 * j + 1]);
            l += v[2 * j] * v[2 * j] * (0.5 + 0.1 * j as f64) - x * x * 0.5;
            let coupling = if j < 4 { x + q[2 * j + 2] } else { x };
            l -= y * y * 0.5 + y * y * y * y * 0.25 - y * coupling * 0.5;
            if j < 4 {
                l -= (q[2 * j + 2] - x) * (q[2 * j + 2] - x) * 0.3;
            }
        }
        l
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 10>) -> SMatrix<S, 2, 10> {
        SMatrix::from_fn(|r, c| {
            if c == 2 * r {
                q[2 * r + 2].cos() + 1.5
            } else if c == 2 * r + 4 {
                q[2 * r].sin()
            } else if c == 8 {
                S::from(-0.5)
            } else {
                S::from(0.0)
            }
        })
    }
}

// ---------------------------------------------------------------- helpers

/// Equal bits, or both zero (`−0.0 == 0.0`).
fn same(x: f64, y: f64) -> bool {
    x.to_bits() == y.to_bits() || (x == 0.0 && y == 0.0)
}

fn assert_bits(what: &str, k: usize, dynamic: &[f64], fixed: &[f64]) {
    assert_eq!(dynamic.len(), fixed.len(), "{what}: lengths");
    for (i, (x, y)) in dynamic.iter().zip(fixed).enumerate() {
        assert!(
            same(*x, *y),
            "step {k}: {what}[{i}]: dynamic {x:e} vs static {y:e} ({} ulp)",
            ulps(*x, *y)
        );
    }
}

/// Distance in units in the last place (same sign assumed).
fn ulps(x: f64, y: f64) -> u64 {
    (x.to_bits() as i64 - y.to_bits() as i64).unsigned_abs()
}

fn dvec<const N: usize>(x: &SVector<f64, N>) -> DVector<f64> {
    DVector::from_column_slice(x.as_slice())
}

fn dyn_state<const N: usize>(s: &State<N>) -> DynState {
    DynState {
        t: s.t,
        q: dvec(&s.q),
        p: dvec(&s.p),
    }
}

/// How a pair of steppers is set up.
#[derive(Clone, Copy)]
struct Setup {
    map: Discretization,
    cd: ConstraintDiscretization,
    direction: Direction,
    symmetric: bool,
    params: NewtonParams,
}

impl Setup {
    fn new(map: Discretization, cd: ConstraintDiscretization) -> Self {
        Self {
            map,
            cd,
            direction: Direction::Forward,
            symmetric: false,
            params: NewtonParams::default(),
        }
    }
    fn backward(self) -> Self {
        Self {
            direction: Direction::Backward,
            ..self
        }
    }
    fn symmetric(self) -> Self {
        Self {
            symmetric: true,
            ..self
        }
    }
    fn params(self, params: NewtonParams) -> Self {
        Self { params, ..self }
    }
}

/// What a compared run reports.
struct Outcome<const N: usize> {
    states: Vec<State<N>>,
    degenerate_steps: usize,
    newton_iterations: usize,
    jacobian_evaluations: usize,
    static_time: Duration,
    dynamic_time: Duration,
    max_residual_ulps: u64,
}

fn same_stats(k: usize, d: &StepStats, s: &StepStats) {
    assert_eq!(d.iterations, s.iterations, "step {k}: iterations");
    assert_eq!(
        d.jacobian_evaluations, s.jacobian_evaluations,
        "step {k}: Jacobian evaluations"
    );
    assert_eq!(d.degenerate, s.degenerate, "step {k}: degenerate");
    assert!(same(d.residual, s.residual), "step {k}: residual");
}

/// `steps` steps of both cores from `s0`: after every step the states (and
/// the Newton statistics, the increment, the multipliers and the discrete
/// energy) must be bit-equal; the constraint residual within 4 ulp (see
/// below).
fn compare<Sy, const N: usize, const M: usize>(
    name: &str,
    system: Sy,
    setup: Setup,
    s0: State<N>,
    h: f64,
    steps: usize,
) -> Outcome<N>
where
    Sy: System<N, M> + Copy + Send + Sync + 'static,
{
    let Setup {
        map,
        cd,
        direction,
        symmetric,
        params,
    } = setup;
    let mut fixed = LagrangeDirac::<Sy, Discretization, N, M>::new(system, map, cd, direction)
        .with_params(params);
    // Reached through `Erased`, as the runner reaches every model: the
    // run-time stepper is compiled once for all the systems of this test.
    let fixed_system = Fixed::<Sy, N, M>(system);
    let erased: Erased = Erased::new(&fixed_system);
    let mut dynamic = DynLagrangeDirac::new(erased, map, cd, direction).with_params(params);
    if symmetric {
        fixed = fixed.symmetric();
        dynamic = dynamic.symmetric();
    }
    assert_eq!(dynamic.is_symmetric(), symmetric);
    let (mut s, mut ds) = (s0, dyn_state(&s0));
    let mut out = Outcome {
        states: vec![s0],
        degenerate_steps: 0,
        newton_iterations: 0,
        jacobian_evaluations: 0,
        static_time: Duration::ZERO,
        dynamic_time: Duration::ZERO,
        max_residual_ulps: 0,
    };
    for k in 0..steps {
        let clock = Instant::now();
        let (next, stats) = fixed
            .step(&s, h)
            .unwrap_or_else(|e| panic!("{name}: static step {k}: {e}"));
        out.static_time += clock.elapsed();
        let clock = Instant::now();
        let (dnext, dstats) = dynamic
            .step(&ds, h)
            .unwrap_or_else(|e| panic!("{name}: dynamic step {k}: {e}"));
        out.dynamic_time += clock.elapsed();
        assert_bits(
            &format!("{name}: q"),
            k,
            dnext.q.as_slice(),
            next.q.as_slice(),
        );
        assert_bits(
            &format!("{name}: p"),
            k,
            dnext.p.as_slice(),
            next.p.as_slice(),
        );
        assert!(same(dnext.t, next.t), "{name}: step {k}: t");
        same_stats(k, &dstats, &stats);
        let d = fixed.last_increment().expect("a step was taken");
        let dd = dynamic.last_increment().expect("a step was taken");
        assert_bits(&format!("{name}: d"), k, dd.as_slice(), d.as_slice());
        assert_bits(
            &format!("{name}: μ"),
            k,
            dynamic.last_multipliers().as_slice(),
            fixed.last_multipliers().as_slice(),
        );
        let (energy, residual) =
            step_measures(&fixed.discrete_lagrangian(), cd, &s.q, &d, h).unwrap();
        let (denergy, dresidual) =
            dyn_step_measures(&dynamic.discrete_lagrangian(), cd, &ds.q, dd, h, &[]).unwrap();
        assert!(
            same(denergy, energy),
            "{name}: step {k}: energy {denergy:e} vs {energy:e}"
        );
        // The residual divides by `max(1, |b|)`; nalgebra sums `|b|²` of a
        // compile-time-sized vector of 8 or more entries in 8 interleaved
        // partial sums, the dynamic measure in index order: the last bits
        // may differ (the states do not).
        let u = if same(dresidual, residual) {
            0
        } else {
            ulps(dresidual, residual)
        };
        assert!(
            u <= 4,
            "{name}: step {k}: residual {dresidual:e} vs {residual:e}"
        );
        out.max_residual_ulps = out.max_residual_ulps.max(u);
        out.degenerate_steps += usize::from(stats.degenerate);
        out.newton_iterations += stats.iterations;
        out.jacobian_evaluations += stats.jacobian_evaluations;
        s = next;
        ds = dnext;
        out.states.push(s);
    }
    eprintln!(
        "{name}: {steps} steps bit-equal ({} Newton iterations, {} Jacobians, {} degenerate, residual measure ≤ {} ulp); µs/step static {:.1}, dynamic {:.1}",
        out.newton_iterations,
        out.jacobian_evaluations,
        out.degenerate_steps,
        out.max_residual_ulps,
        out.static_time.as_secs_f64() * 1e6 / steps as f64,
        out.dynamic_time.as_secs_f64() * 1e6 / steps as f64,
    );
    out
}

/// The scaled distance of two states.
fn state_diff<const N: usize>(a: &State<N>, b: &State<N>) -> f64 {
    let dq = (a.q - b.q).amax() / a.q.amax().max(1.0);
    let dp = (a.p - b.p).amax() / a.p.amax().max(1.0);
    dq.max(dp)
}

/// `v` projected onto `ker A` (least squares: `v − Aᵀ (A Aᵀ)⁻¹ A v`).
fn project<const N: usize, const M: usize>(
    a: &SMatrix<f64, M, N>,
    v: &SVector<f64, N>,
) -> SVector<f64, N> {
    let a = nalgebra::DMatrix::from_column_slice(M, N, a.as_slice());
    let v = dvec(v);
    let aat = &a * a.transpose();
    let lambda = aat.lu().solve(&(&a * &v)).expect("full rank");
    let out = v - a.transpose() * lambda;
    SVector::from_column_slice(out.as_slice())
}

fn pendulum_start(theta: f64, theta_dot: f64) -> State<2> {
    let q = SVector::from([theta, 0.0]);
    let v = SVector::from([theta_dot, f_pend(theta) * theta_dot]);
    state_from_velocity(&Pendulum::default(), 0.0, &q, &v).unwrap()
}

// ---------------------------------------------------------------- tests

#[test]
fn free_particle_midpoint_is_bit_equal() {
    let s0 = state_from_velocity(
        &Particle,
        0.0,
        &SVector::from([0.1, 5.0]),
        &SVector::from([1.3, 4.0]),
    )
    .unwrap();
    let setup = Setup::new(Discretization::Midpoint, ConstraintDiscretization::Midpoint);
    let out = compare::<_, 2, 0>("particle (midpoint)", Particle, setup, s0, 1e-3, 600);
    assert!(
        state_diff(&s0, out.states.last().unwrap()) > 0.1,
        "it moves"
    );
    // forward map too
    let setup = Setup::new(
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    );
    compare::<_, 2, 0>("particle (forward)", Particle, setup, s0, 1e-3, 600);
}

#[test]
fn nonholonomic_pendulum_forward_map_is_bit_equal() {
    let s0 = pendulum_start(1.0, 0.5);
    let setup = Setup::new(
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    );
    let out = compare::<_, 2, 1>(
        "pendulum (forward, retraction)",
        Pendulum::default(),
        setup,
        s0,
        1e-2,
        1000,
    );
    assert!(
        state_diff(&s0, out.states.last().unwrap()) > 0.1,
        "it moves"
    );
    assert_eq!(out.degenerate_steps, 0);
    // the trajectory drivers: the same records and summary
    let (map, cd) = (setup.map, setup.cd);
    let mut fixed = LagrangeDirac::plus(Pendulum::default(), map, cd);
    let mut dynamic = DynLagrangeDirac::plus(Fixed::<Pendulum, 2, 1>(Pendulum::default()), map, cd);
    let run = integrate(&mut fixed, s0, 1e-2, RunOptions::new(500), |_| {}, |_| {}).unwrap();
    let drun = integrate_dyn(
        &mut dynamic,
        dyn_state(&s0),
        1e-2,
        RunOptions::new(500),
        |_| {},
        |_| {},
    )
    .unwrap();
    assert_eq!(drun.records.len(), run.records.len());
    for (d, s) in drun.records.iter().zip(&run.records) {
        assert_bits("record q", d.k, d.q.as_slice(), s.q.as_slice());
        assert_bits("record p", d.k, d.p.as_slice(), s.p.as_slice());
        assert!(same(d.t, s.t) && same(d.energy, s.energy), "record {}", d.k);
        assert!(ulps(d.constraint_residual, s.constraint_residual) <= 4);
    }
    let (ds, ss) = (&drun.summary, &run.summary);
    assert!(same(
        ds.max_abs_energy_deviation,
        ss.max_abs_energy_deviation
    ));
    assert_eq!(ds.newton_iterations, ss.newton_iterations);
    assert_eq!(ds.jacobian_evaluations, ss.jacobian_evaluations);
    // with polishing (the momentum is then sometimes not the cached one)
    let setup = setup.params(NewtonParams::default().with_polish(3));
    compare::<_, 2, 1>(
        "pendulum (polished)",
        Pendulum::default(),
        setup,
        s0,
        1e-2,
        500,
    );
}

#[test]
fn rolling_disk_midpoint_is_bit_equal() {
    let disk = Disk;
    let q0 = SVector::from([0.0, 0.0, 0.0, std::f64::consts::FRAC_PI_3]);
    let v0 = project(
        &disk.constraint_forms(&q0),
        &SVector::from([0.0, 0.0, 2.0, 0.7]),
    );
    let s0 = state_from_velocity(&disk, 0.0, &q0, &v0).unwrap();
    let setup = Setup::new(Discretization::Midpoint, ConstraintDiscretization::Midpoint);
    let out = compare::<_, 4, 2>("rolling disk (midpoint)", disk, setup, s0, 1e-2, 600);
    assert!(
        state_diff(&s0, out.states.last().unwrap()) > 0.1,
        "it moves"
    );
}

#[test]
fn lc_circuit_takes_the_degenerate_path_bit_equal() {
    let lc = Lc::default();
    let h = 2.0 * std::f64::consts::PI / lc.omega() / 40.0;
    let setup = Setup::new(
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    );
    let out = compare::<_, 4, 2>("LC circuit (degenerate)", lc, setup, lc.start(), h, 600);
    assert_eq!(out.degenerate_steps, 600, "every step is degenerate");
    // Kirchhoff's laws and the hidden constraint (equal voltages on the
    // parallel capacitors 1 and 3) hold
    for s in &out.states {
        let scale = s.q.amax().max(1.0);
        assert!((s.q[2] - s.q[0]).abs() <= 1e-12 * scale, "KCL 1");
        assert!((s.q[2] - s.q[1] - s.q[3]).abs() <= 1e-12 * scale, "KCL 2");
        let (v1, v3) = (s.q[1] / lc.c[0], s.q[3] / lc.c[2]);
        assert!((v1 - v3).abs() <= 1e-12 * scale, "voltages {v1} vs {v3}");
    }
    // the (−) stepper on the degenerate path too
    let setup = setup.backward();
    let out = compare::<_, 4, 2>("LC circuit (−)", lc, setup, lc.start(), h, 500);
    assert_eq!(out.degenerate_steps, 500);
}

#[test]
fn nonlinear_degenerate_ladder_over_two_chunks_is_bit_equal() {
    let xs = [0.5, -0.3, 0.8, 0.1, -0.6];
    let q0 = SVector::<f64, 10>::from_fn(|i, _| {
        let j = i / 2;
        if i % 2 == 0 {
            xs[j]
        } else {
            Ladder::slave((xs[j] + if j < 4 { xs[j + 1] } else { 0.0 }) * 0.5)
        }
    });
    let v = SVector::<f64, 10>::from_fn(|i, _| {
        if i % 2 == 0 {
            0.4 * (i as f64 * 0.9 + 0.3).cos()
        } else {
            0.0
        }
    });
    let v0 = project(&Ladder.constraint_forms(&q0), &v);
    let s0 = state_from_velocity(&Ladder, 0.0, &q0, &v0).unwrap();
    let setup = Setup::new(
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    );
    let out = compare::<_, 10, 2>(
        "ladder 10×2 (degenerate, nonlinear)",
        Ladder,
        setup,
        s0,
        1e-2,
        500,
    );
    assert_eq!(out.degenerate_steps, 500, "every step is degenerate");
    assert!(
        out.jacobian_evaluations > 1,
        "the hidden rows' Jacobian is evaluated again"
    );
    assert!(
        state_diff(&s0, out.states.last().unwrap()) > 0.1,
        "it moves"
    );
    for (k, s) in out.states.iter().enumerate() {
        let violation = Ladder::hidden_violation(&s.q);
        assert!(
            violation <= 1e-10,
            "step {k}: hidden constraint violated by {violation:e}"
        );
    }
}

#[test]
fn inconsistent_lc_data_is_reported_alike() {
    let lc = Lc::default();
    let mut s0 = lc.start();
    s0.q[1] = 0.5; // capacitor voltages differ: a hidden constraint is violated
    let h = 0.05;
    let setup = Setup::new(
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    );
    let mut fixed =
        LagrangeDirac::<Lc, Discretization, 4, 2>::new(lc, setup.map, setup.cd, setup.direction);
    let mut dynamic =
        DynLagrangeDirac::new(Fixed::<Lc, 4, 2>(lc), setup.map, setup.cd, setup.direction);
    let e = fixed.step(&s0, h).unwrap_err();
    let de = dynamic.step(&dyn_state(&s0), h).unwrap_err();
    assert!(matches!(e, StepError::Inconsistent { .. }), "{e}");
    assert_eq!(de, e);
}

#[test]
fn symmetric_variant_with_constraints_is_bit_equal_and_self_adjoint() {
    let s0 = pendulum_start(1.0, 0.5);
    let setup =
        Setup::new(Discretization::Midpoint, ConstraintDiscretization::Midpoint).symmetric();
    let fwd = compare::<_, 2, 1>(
        "pendulum symmetric (+)",
        Pendulum::default(),
        setup,
        s0,
        1e-2,
        500,
    );
    let end = *fwd.states.last().unwrap();
    assert!(state_diff(&s0, &end) > 0.1, "it moves");
    // (−) from the end retraces the (+) trajectory: the map is self-adjoint
    let back = compare::<_, 2, 1>(
        "pendulum symmetric (−)",
        Pendulum::default(),
        setup.backward(),
        end,
        1e-2,
        500,
    );
    let miss = state_diff(&s0, back.states.last().unwrap());
    eprintln!("symmetric pendulum: 500 steps (+) then 500 (−) miss the start by {miss:.2e}");
    assert!(miss <= 1e-8, "round trip misses by {miss:e}");
    // the disk, symmetric
    let disk = Disk;
    let q0 = SVector::from([0.0, 0.0, 0.0, 0.4]);
    let v0 = project(
        &disk.constraint_forms(&q0),
        &SVector::from([0.0, 0.0, 1.0, -0.3]),
    );
    let s0 = state_from_velocity(&disk, 0.0, &q0, &v0).unwrap();
    compare::<_, 4, 2>("rolling disk symmetric", disk, setup, s0, 1e-2, 500);
}

#[test]
fn minus_stepper_retraces_plus_bit_equal() {
    let s0 = state_from_velocity(
        &Particle,
        0.0,
        &SVector::from([0.1, 5.0]),
        &SVector::from([1.3, 4.0]),
    )
    .unwrap();
    let h = 1e-3;
    for map in Discretization::ALL {
        let setup = Setup::new(map, ConstraintDiscretization::Retraction)
            .params(NewtonParams::default().with_polish(3));
        let fwd = compare::<_, 2, 0>(&format!("particle {map} (+)"), Particle, setup, s0, h, 500);
        let end = *fwd.states.last().unwrap();
        let back = compare::<_, 2, 0>(
            &format!("particle {map} (−)"),
            Particle,
            setup.backward(),
            end,
            h,
            500,
        );
        // the (−) trajectory is the (+) one, backwards
        for (k, s) in back.states.iter().enumerate() {
            let miss = state_diff(&fwd.states[500 - k], s);
            assert!(miss <= 1e-9, "{map}: step {k} back misses by {miss:e}");
        }
    }
}

#[test]
fn twelve_coordinates_three_rows_over_two_chunks_are_bit_equal() {
    type C = Coupled<12, 3>;
    let q0 = SVector::<f64, 12>::from_fn(|i, _| 0.3 * (i as f64 * 0.7).sin());
    let v = SVector::<f64, 12>::from_fn(|i, _| 0.5 * (i as f64 * 1.3 + 0.2).cos());
    let v0 = project(&C {}.constraint_forms(&q0), &v);
    let s0 = state_from_velocity(&C {}, 0.0, &q0, &v0).unwrap();
    for (map, cd) in [
        (
            Discretization::Forward,
            ConstraintDiscretization::Retraction,
        ),
        (Discretization::Midpoint, ConstraintDiscretization::Midpoint),
    ] {
        let setup = Setup::new(map, cd);
        // 2.5 s in 200 steps (the test crate runs unoptimised)
        let out = compare::<_, 12, 3>(
            &format!("coupled 12×3 ({map})"),
            C {},
            setup,
            s0,
            1.25e-2,
            200,
        );
        assert!(
            state_diff(&s0, out.states.last().unwrap()) > 0.05,
            "it moves"
        );
    }
    let setup = Setup::new(Discretization::Midpoint, ConstraintDiscretization::Midpoint);
    compare::<_, 12, 3>(
        "coupled 12×3 symmetric",
        C {},
        setup.symmetric(),
        s0,
        1.25e-2,
        200,
    );
}

#[test]
fn trial_solves_leave_the_steps_alone() {
    let s0 = pendulum_start(1.0, 0.5);
    let (map, cd) = (
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    );
    let system = Fixed::<Pendulum, 2, 1>(Pendulum::default());
    let mut a = DynLagrangeDirac::plus(system, map, cd);
    let mut b = DynLagrangeDirac::plus(system, map, cd);
    let (mut sa, mut sb) = (dyn_state(&s0), dyn_state(&s0));
    for k in 0..50 {
        if k % 7 == 3 {
            // a trial of half a step from elsewhere, on one of them only
            let guess = b.last_increment().cloned().unwrap_or(DVector::zeros(2));
            b.trial_step(sb.t, &(&sb.q * 1.01), &sb.p, 5e-3, &guess)
                .unwrap();
        }
        sa = a.step(&sa, 1e-2).unwrap().0;
        sb = b.step(&sb, 1e-2).unwrap().0;
        assert_bits("q", k, sb.q.as_slice(), sa.q.as_slice());
        assert_bits("p", k, sb.p.as_slice(), sa.p.as_slice());
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let system = Fixed::<Pendulum, 2, 1>(Pendulum::default());
    let mut st = DynLagrangeDirac::plus(
        system,
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    );
    let good = dyn_state(&pendulum_start(1.0, 0.5));
    let short = DynState {
        t: 0.0,
        q: DVector::zeros(1),
        p: DVector::zeros(1),
    };
    assert!(matches!(
        st.step(&short, 1e-2),
        Err(StepError::Geometry {
            source: GeometryError::DimensionMismatch { .. },
            ..
        })
    ));
    assert!(matches!(
        st.step(&good, 0.0),
        Err(StepError::BadStep { .. })
    ));
    let nan = DynState {
        p: DVector::from_element(2, f64::NAN),
        ..good.clone()
    };
    assert!(matches!(
        st.step(&nan, 1e-2),
        Err(StepError::NonFinite { .. })
    ));
    assert!(matches!(
        st.solve_oriented(0.0, &good.q, &good.p, 1e-2, &DVector::zeros(3)),
        Err(StepError::Geometry { .. })
    ));
    // still usable
    st.step(&good, 1e-2).unwrap();
    // a linear solver handed in: the same steps as the default one
    let mut own = DynLagrangeDirac::with_linear_solver(
        system,
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
        Direction::Forward,
        diracvi_discrete_dirac::DenseLu::new(3),
    )
    .unwrap();
    let mut default = DynLagrangeDirac::plus(
        system,
        Discretization::Forward,
        ConstraintDiscretization::Retraction,
    );
    let (mut a, mut b) = (good.clone(), good.clone());
    for k in 0..20 {
        a = own.step(&a, 1e-2).unwrap().0;
        b = default.step(&b, 1e-2).unwrap().0;
        assert_bits("q", k, a.q.as_slice(), b.q.as_slice());
    }
    // a linear solver of the wrong size
    assert!(
        DynLagrangeDirac::with_linear_solver(
            system,
            Discretization::Forward,
            ConstraintDiscretization::Retraction,
            Direction::Forward,
            diracvi_discrete_dirac::DenseLu::new(2),
        )
        .is_err()
    );
}
