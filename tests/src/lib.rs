//! Workspace-level helpers for the diracvi test suites: running a model's
//! defaults through the impact integrator and fitting convergence orders.

use diracvi_discrete_dirac::dynamic::{
    DynLagrangeDirac, DynTrajectory, dyn_state_from_velocity, integrate_dyn,
};
use diracvi_discrete_dirac::{
    Direction, LagrangeDirac, Located, RunOptions, Trajectory, integrate, state_from_velocity,
};
use diracvi_geometry::lie::quat_from_axis_angle;
use diracvi_impact::dynamic::{DynImpactEvent, DynImpactIntegrator};
use diracvi_impact::{ImpactError, ImpactEvent, ImpactIntegrator};
use diracvi_models::{
    DynRunSetup, HeavyTop, HeavyTopParams, NamedDynSystem, NamedSystem, RunSetup,
};
use nalgebra::SVector;

/// The symmetric heavy (Lagrange) top: `I₁ = I₂ = 1`, `I₃ = 0.5`,
/// `m g ℓ = 0.98` (the catalogue's defaults), released at a tilt of 0.5 rad
/// about `x` with spin `ω₃ = spin` about its symmetry axis and no tilt rate
/// (`models/heavy-top.toml` starts there with spin 4): the model, the unit
/// quaternion `q₀` and the body angular velocity.
pub fn lagrange_top_setup(spin: f64) -> (HeavyTop, SVector<f64, 4>, SVector<f64, 3>) {
    let top = HeavyTop::new(HeavyTopParams::default());
    let q0 = quat_from_axis_angle(&SVector::from([1.0, 0.0, 0.0]), 0.5);
    (top, q0, SVector::from([0.0, 0.0, spin]))
}

/// Least-squares slope of `ln(err)` against `ln(h)`.
pub fn fitted_order(hs: &[f64], errs: &[f64]) -> f64 {
    let xs: Vec<f64> = hs.iter().map(|h| h.ln()).collect();
    let ys: Vec<f64> = errs.iter().map(|e| e.ln()).collect();
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    sxy / sxx
}

/// Run `model` from `setup` with step `h` for `steps` steps through the impact
/// integrator, recording every `every` steps.
///
/// # Errors
/// The integrator's error.
pub fn run_model<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
    model: &Mo,
    setup: &RunSetup<N>,
    h: f64,
    steps: usize,
    every: usize,
    direction: Direction,
) -> Result<Trajectory<N, ImpactEvent<N>>, Located<ImpactError>> {
    let stepper = LagrangeDirac::new(
        model.clone(),
        setup.discretization,
        setup.constraint,
        direction,
    );
    let mut integ = ImpactIntegrator::new(stepper);
    let s0 = state_from_velocity(model, 0.0, &setup.q0, &setup.v0)
        .map_err(|source| Located::new(0, ImpactError::Geometry { t: 0.0, source }))?;
    integrate(
        &mut integ,
        s0,
        h,
        RunOptions::new(steps).every(every),
        |_| {},
        |_| {},
    )
}

/// [`run_model`] on the run-time-sized core (docs/theory.md §11), for
/// models of any size (model files) and catalogued models through `Fixed`.
///
/// # Errors
/// The integrator's error.
pub fn run_model_dyn<Mo: NamedDynSystem>(
    model: &Mo,
    setup: &DynRunSetup,
    h: f64,
    steps: usize,
    every: usize,
    direction: Direction,
) -> Result<DynTrajectory<DynImpactEvent>, Located<ImpactError>> {
    let stepper = DynLagrangeDirac::new(
        model.clone(),
        setup.discretization,
        setup.constraint,
        direction,
    );
    let mut integ = DynImpactIntegrator::new(stepper);
    let s0 = dyn_state_from_velocity(model, 0.0, &setup.q0, &setup.v0)
        .map_err(|source| Located::new(0, ImpactError::Geometry { t: 0.0, source }))?;
    integrate_dyn(
        &mut integ,
        s0,
        h,
        RunOptions::new(steps).every(every),
        |_| {},
        |_| {},
    )
}
