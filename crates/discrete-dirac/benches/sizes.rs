//! Cost of one Lagrange–Dirac step on the run-time-sized core against the
//! number of coordinates (issue #27): a densely coupled system of
//! n = 6, 12, 25, 50 coordinates (every coordinate interacts with every
//! other), and a chain of 10 and 100 bodies (nearest-neighbour springs:
//! sparse coupling), midpoint `L_d`, warm steps.
//!
//! `cargo bench -p diracvi-discrete-dirac --bench sizes`

use criterion::{Criterion, criterion_group, criterion_main};
use diracvi_discrete_dirac::dynamic::DynLagrangeDirac;
use diracvi_discrete_dirac::{Direction, DynState};
use diracvi_geometry::dynamic::{DynSystem, LagrangianTerms, momentum_dyn};
use diracvi_geometry::{AdScalar, ConstraintDiscretization, Discretization};
use nalgebra::DVector;
use std::time::Instant;

/// `L = Σ ½ v_i² − Σ_{i<j} ε cos(q_i − q_j) − Σ ½ q_i²`: every pair coupled.
struct Dense {
    n: usize,
}

impl DynSystem for Dense {
    fn coordinate_count(&self) -> usize {
        self.n
    }
    fn constraint_count(&self) -> usize {
        0
    }
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        let mut l = S::from(0.0);
        for i in 0..self.n {
            l += (v[i] * v[i] - q[i] * q[i]) * 0.5;
            for j in i + 1..self.n {
                l -= (q[i] - q[j]).cos() * 0.01;
            }
        }
        l
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
}

/// `L = Σ ½ v_i² − Σ ½ (q_{i+1} − q_i − 1)² − ¼ (…)⁴`: nearest neighbours,
/// declared term by term (term `i < n − 1`: `½ v_i²` and the spring
/// `(i, i + 1)`; the last term `½ v_{n−1}²`), so that the derivatives and
/// the linear solve follow the sparse coupling.
struct Chain {
    n: usize,
    terms: LagrangianTerms,
}

impl Chain {
    fn new(n: usize) -> Self {
        let stencils = (0..n).map(|i| if i + 1 < n { vec![i, i + 1] } else { vec![i] });
        let terms = LagrangianTerms::new(n, stencils).expect("valid stencils");
        Chain { n, terms }
    }

    fn term<S: AdScalar>(last: bool, q: &[S], v: &[S]) -> S {
        let mut l = v[0] * v[0] * 0.5;
        if !last {
            let s = q[1] - q[0] - 1.0;
            l -= s * s * 0.5 + s.powi(4) * 0.25;
        }
        l
    }
}

impl DynSystem for Chain {
    fn coordinate_count(&self) -> usize {
        self.n
    }
    fn constraint_count(&self) -> usize {
        0
    }
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        let mut l = S::from(0.0);
        for i in 0..self.n {
            let last = i + 1 == self.n;
            let k = if last { 1 } else { 2 };
            l += Self::term(last, &q[i..i + k], &v[i..i + k]);
        }
        l
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        Some(&self.terms)
    }
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        Self::term(e + 1 == self.n, q, v)
    }
}

/// Seconds per warm step, best of 3 runs of `steps` steps.
fn per_step<Sy: DynSystem + Clone>(
    system: Sy,
    q: DVector<f64>,
    v: DVector<f64>,
    steps: usize,
) -> f64 {
    let p = momentum_dyn(&system, &q, &v);
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let mut stepper = DynLagrangeDirac::new(
            system.clone(),
            Discretization::Midpoint,
            ConstraintDiscretization::Midpoint,
            Direction::Forward,
        );
        let mut s = DynState {
            t: 0.0,
            q: q.clone(),
            p: p.clone(),
        };
        // warm up the stepper's extrapolation and factors
        for _ in 0..3 {
            s = stepper.step(&s, 1e-2).unwrap().0;
        }
        let t0 = Instant::now();
        for _ in 0..steps {
            s = stepper.step(&s, 1e-2).unwrap().0;
        }
        best = best.min(t0.elapsed().as_secs_f64() / steps as f64);
    }
    best
}

impl Clone for Dense {
    fn clone(&self) -> Self {
        Dense { n: self.n }
    }
}
impl Clone for Chain {
    fn clone(&self) -> Self {
        Chain::new(self.n)
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("sizes");
    g.sample_size(10);
    for n in [6, 12, 25, 50] {
        let q = DVector::from_fn(n, |i, _| 0.1 * (i as f64).sin());
        let v = DVector::from_fn(n, |i, _| 0.3 * (i as f64).cos());
        let t = per_step(
            Dense { n },
            q.clone(),
            v.clone(),
            if n > 20 { 20 } else { 200 },
        );
        eprintln!("sizes: dense n = {n}: {:.1} µs/step", t * 1e6);
        g.bench_function(format!("dense_{n}"), |b| {
            b.iter(|| per_step(Dense { n }, q.clone(), v.clone(), 5))
        });
    }
    let mut chain = Vec::new();
    for n in [10, 100] {
        let q = DVector::from_fn(n, |i, _| i as f64 + 0.05 * (i as f64).sin());
        let v = DVector::from_fn(n, |i, _| 0.1 * (i as f64).cos());
        let t = per_step(Chain::new(n), q, v, if n > 20 { 20 } else { 200 });
        eprintln!("sizes: chain of {n}: {:.1} µs/step", t * 1e6);
        chain.push(t);
    }
    eprintln!(
        "sizes: chain of 100 / chain of 10 = {:.1} (issue target ≤ 12: linear cost for sparse coupling)",
        chain[1] / chain[0]
    );
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
