//! Cost of the discrete-Lagrangian jets a Newton step needs (issue #2).
//!
//! * `jet`: `L_d, D1 L_d, D2 L_d` and the Jacobian `D12 L_d` in one
//!   hyper-dual pass — the (+) Lagrange–Dirac residual `p_k + D1 L_d(q_k, q)`
//!   and its Jacobian in `q`;
//! * `time_jet`: `L_d, D3 L_d, D2 L_d, D23 L_d` — the discrete energy and the
//!   impact equations.
//!
//! System: the nonholonomic spherical pendulum of \[VCI\] §4.3 (`m = 1`,
//! `g = 9.8`, `ℓ = 2`) with the forward discretization. Target: ≤ 100 ns per
//! `jet`.

use criterion::{Criterion, criterion_group, criterion_main};
use diracvi_geometry::dynamic::{DynDiscreteLagrangian, DynLdJet, Fixed};
use diracvi_geometry::{
    AdScalar, DiscreteLagrangian, Discretization, Orientation, SMatrix, SVector, System,
};
use nalgebra::DVector;
use std::f64::consts::PI;
use std::hint::black_box;

/// `L = ½ m ℓ² (θ̇² + sin²θ φ̇²) − m g ℓ cos θ`, constraint `(π + cos²θ) dθ − dφ`.
struct NonholonomicPendulum {
    m: f64,
    g: f64,
    l: f64,
}

impl System<2, 1> for NonholonomicPendulum {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        let s = q[0].sin();
        let ml2 = self.m * self.l * self.l;
        (v[0] * v[0] + s * s * v[1] * v[1]) * (0.5 * ml2) - q[0].cos() * (self.m * self.g * self.l)
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 2>) -> SMatrix<S, 1, 2> {
        let c = q[0].cos();
        SMatrix::from([[c * c + PI], [S::from(-1.0)]])
    }
}

fn bench(c: &mut Criterion) {
    eprintln!("discrete_lagrangian: target ≤ 100 ns per `jet` (pendulum, forward L_d)");
    let sys = NonholonomicPendulum {
        m: 1.0,
        g: 9.8,
        l: 2.0,
    };
    let map = Discretization::Forward;
    let ld = DiscreteLagrangian::<_, _, 2, 1>::new(&sys, &map);
    // one step of the paper's run: q(0) = (0.75π, 0), h = 1e-3
    let h = 1e-3;
    let q0 = SVector::from([0.75 * PI, 0.0]);
    let q1 = q0 + SVector::from([0.25 * PI, 0.25 * (PI + 0.5) * PI]) * h;

    let mut group = c.benchmark_group("pendulum_forward");
    group.bench_function("jet", |b| {
        b.iter(|| ld.jet(black_box(&q0), black_box(&q1), black_box(h)))
    });
    group.bench_function("time_jet", |b| {
        b.iter(|| ld.time_jet(black_box(&q0), black_box(&q1), black_box(h)))
    });
    let reversed = ld.oriented(Orientation::Reversed);
    group.bench_function("jet_reversed", |b| {
        b.iter(|| reversed.jet(black_box(&q1), black_box(&q0), black_box(h)))
    });
    // The same through the run-time-sized core (docs/theory.md §11).
    let fixed = Fixed::<_, 2, 1>(NonholonomicPendulum {
        m: 1.0,
        g: 9.8,
        l: 2.0,
    });
    let dld = DynDiscreteLagrangian::new(&fixed, map);
    let (a, d) = (
        DVector::from_column_slice(q0.as_slice()),
        DVector::from_column_slice((q1 - q0).as_slice()),
    );
    let mut jet = DynLdJet::zeros(2);
    group.bench_function("jet_dyn", |b| {
        b.iter(|| dld.jet_increment(black_box(&a), black_box(&d), black_box(h), &mut jet))
    });
    let mut g = DVector::zeros(2);
    group.bench_function("d1_dyn", |b| {
        b.iter(|| dld.d1_increment(black_box(&a), black_box(&d), black_box(h), &mut g))
    });
    group.bench_function("d1", |b| {
        b.iter(|| ld.d1(black_box(&q0), black_box(&q1), black_box(h)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
