//! temporary timing scratch (to be deleted)
use diracvi_geometry::{AdScalar, DiscreteLagrangian, Discretization, SMatrix, SVector, System};
use std::f64::consts::PI;
use std::hint::black_box;
struct P;
impl System<2, 1> for P {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        let s = q[0].sin();
        (v[0] * v[0] + s * s * v[1] * v[1]) * 2.0 - q[0].cos() * 19.6
    }
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, 2>) -> SMatrix<S, 1, 2> {
        let c = q[0].cos();
        SMatrix::from([[c * c + PI], [S::from(-1.0)]])
    }
}
#[test]
#[ignore]
fn timing() {
    let n: usize = std::env::var("ITERS")
        .map(|s| s.parse().unwrap())
        .unwrap_or(1_000_000);
    let map = Discretization::Forward;
    let ld = DiscreteLagrangian::<_, _, 2, 1>::new(&P, &map);
    let q0 = SVector::from([0.75 * PI, 0.0]);
    let q1 = q0 + SVector::from([0.001, 0.002]);
    let t = std::time::Instant::now();
    let mut acc = 0.0;
    for _ in 0..n {
        acc += ld
            .jet(black_box(&q0), black_box(&q1), black_box(1e-3))
            .unwrap()
            .d12[0];
    }
    eprintln!(
        "jet: {:.1} ns/iter ({acc})",
        t.elapsed().as_nanos() as f64 / n as f64
    );
}
