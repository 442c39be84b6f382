//! A new model in a few lines: a particle in a circular billiard of radius 1,
//! under gravity, bouncing elastically off the wall. Run with
//! `cargo run --release -p diracvi-impact --example circular_billiard`.

use diracvi_discrete_dirac::{RunOptions, integrate, state_from_velocity};
use diracvi_geometry::{
    AdScalar, ConstraintDiscretization, Discretization, SMatrix, SVector, System,
};
use diracvi_impact::ImpactIntegrator;

/// Unit mass in the disk x² + y² ≤ 1, gravity 9.8 along −y.
#[derive(Clone, Copy)]
struct Billiard;

impl System<2, 0> for Billiard {
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
        v.dot(v) * 0.5 - q[1] * 9.8
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
        SMatrix::zeros()
    }
    fn boundary_count(&self) -> usize {
        1
    }
    fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 2>) -> S {
        S::from(1.0) - q.dot(q)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (h, steps) = (1e-3, 5_000);
    let mut integrator = ImpactIntegrator::forward(
        Billiard,
        Discretization::Midpoint,
        ConstraintDiscretization::Midpoint,
    );
    let start = state_from_velocity(
        &Billiard,
        0.0,
        &SVector::from([0.0, 0.0]),
        &SVector::from([1.3, 0.4]),
    )?;
    let run = integrate(
        &mut integrator,
        start,
        h,
        RunOptions::new(steps).every(0),
        |_| {},
        |_| {},
    )?;
    println!(
        "{} impacts in {} s; energy deviation {:.2e}",
        run.events.len(),
        steps as f64 * h,
        run.summary.max_abs_energy_deviation
    );
    assert!(!run.events.is_empty());
    Ok(())
}
