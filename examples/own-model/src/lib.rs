//! # diracvi-example-own-model
//!
//! A model written in its own crate and run through the public API of
//! `diracvi-run`, which gives it everything `diracvi run` gives a
//! catalogued model or a model file: the same steppers and impact laws, the
//! summary (warnings included), the CSV/JSON trajectory writers, and the
//! `--plot` figure and `--animate` pictures (`diracvi-plot`).
//!
//! The model is a ball bouncing inside a circular bowl under gravity:
//! `q = (x, y)`, `L = ½ m (ẋ² + ẏ²) − m g y`, one wall `g₀(q) = R² − x² − y² ≥ 0`.
//! [`Bowl`] implements [`DynSystem`] (the physics, generic over the
//! automatic-differentiation scalar, so every derivative is exact) and
//! [`NamedDynSystem`] (its name and the names of its coordinates and wall);
//! [`run`] integrates it and returns the CLI's summary; [`run_with_pictures`]
//! also draws the figure of `diracvi run --plot` and the animation of
//! `--animate` (the bowl's picture: [`Bowl`] implements
//! [`diracvi_plot::Drawing`]); [`ensemble`] runs
//! many bowls (other radii, other initial states) on worker threads. `bowl.toml`, beside
//! this crate, is the same model as a model file: the test
//! `tests/cli_equivalence.rs` checks that `diracvi run --model-file bowl.toml`
//! writes the same summary and trajectory, bit for bit.
//!
//! ```
//! use diracvi_example_own_model::{Bowl, run};
//! use diracvi_run::{Discard, RunPlan, step_count_for};
//!
//! let bowl = Bowl::default();
//! let setup = bowl.default_setup();
//! let steps = step_count_for(setup.h, setup.t_end, None).unwrap();
//! let (summary, outcome) = run(&bowl, &setup, RunPlan::new(steps), &mut Discard).unwrap();
//! assert_eq!(summary.steps, 3000);
//! assert!(summary.impacts > 0);
//! assert_eq!(outcome.impacts.len(), summary.impacts);
//! // the midpoint scheme keeps the energy within 1e-3 of its scale
//! assert!(summary.energy.max_relative_deviation < 1e-3);
//! ```
//!
//! Within this workspace the crate inherits the workspace's build profiles;
//! a crate of your own should copy the profile notes of `diracvi-run`'s
//! documentation ("Build profile of a dependent crate").

use diracvi_geometry::AdScalar;
use diracvi_geometry::dynamic::DynSystem;
use diracvi_models::{ConstraintDiscretization, Discretization, DynRunSetup, NamedDynSystem};
use diracvi_models::{Scene, Shape};
use diracvi_plot::{
    Animation, AnimationCollector, Drawing, PlotCollector, PlotInfo, PlotPanel, PlotSpec,
    PosterFormat, render_animation,
};
use diracvi_run::{
    DEFAULT_ENERGY_TOLERANCE, EnsembleOptions, PeriodicError, PeriodicOptions, PeriodicOrbit,
    RecordSink, RunError, RunOutcome, RunPlan, Summary, SystemRun, describe_system,
    ensemble_system, execute_system_with_tolerance, periodic_orbit_system, run_system,
};
use nalgebra::DVector;

/// A ball bouncing inside a circular bowl of radius `r` under gravity.
///
/// Every expression is written in the order `bowl.toml` writes it, so that
/// the two compute the same floating-point operations (a model file is
/// evaluated left to right, with its constant factors folded first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bowl {
    /// Mass (kg).
    pub m: f64,
    /// Gravitational acceleration (m/s²).
    pub g: f64,
    /// Radius of the bowl (m).
    pub r: f64,
}

impl Default for Bowl {
    /// The values of `bowl.toml`: `m = 1`, `g = 9.8`, `R = 1`.
    fn default() -> Self {
        Self {
            m: 1.0,
            g: 9.8,
            r: 1.0,
        }
    }
}

impl Bowl {
    /// The run of `bowl.toml`: from the centre at `v = (1.5, 0.5)` m/s,
    /// `h = 1e-3` s to `t = 3` s, midpoint discretization.
    pub fn default_setup(&self) -> DynRunSetup {
        DynRunSetup {
            q0: DVector::from_vec(vec![0.0, 0.0]),
            v0: DVector::from_vec(vec![1.5, 0.5]),
            h: 1e-3,
            t_end: 3.0,
            discretization: Discretization::Midpoint,
            constraint: ConstraintDiscretization::Midpoint,
        }
    }
}

impl DynSystem for Bowl {
    fn coordinate_count(&self) -> usize {
        2
    }

    fn constraint_count(&self) -> usize {
        0
    }

    /// `½ m (ẋ² + ẏ²) − m g y`.
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        (v[0] * v[0] + v[1] * v[1]) * (0.5 * self.m) - q[1] * (self.m * self.g)
    }

    fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}

    fn boundary_count(&self) -> usize {
        1
    }

    /// `g₀ = R² − x² − y²`.
    fn boundary<S: AdScalar>(&self, _j: usize, q: &[S]) -> S {
        -(q[0] * q[0]) + self.r * self.r - q[1] * q[1]
    }

    /// `(p_x² + p_y²)/(2m) + m g y`, the Legendre transform of `L`.
    fn hamiltonian<S: AdScalar>(&self, q: &[S], p: &[S]) -> Option<S> {
        Some((p[0] * p[0] + p[1] * p[1]) / (2.0 * self.m) + q[1] * (self.m * self.g))
    }
}

impl NamedDynSystem for Bowl {
    fn name(&self) -> &str {
        "bowl"
    }

    fn description(&self) -> &str {
        "ball bouncing inside a circular bowl under gravity"
    }

    fn coordinates(&self) -> Vec<String> {
        vec!["x".into(), "y".into()]
    }

    fn piece_name(&self, _j: usize) -> String {
        "the bowl's wall R^2 - x^2 - y^2 >= 0".into()
    }
}

/// Run `model` from `setup` as `plan` says, feeding the recorded steps to
/// `sink`; the summary `diracvi run --summary json` prints for the same run
/// (energy tolerance [`DEFAULT_ENERGY_TOLERANCE`]) and the outcome (every
/// impact as an [`ImpactRecord`](diracvi_run::ImpactRecord)).
///
/// The function takes the concrete [`Bowl`], not any `NamedDynSystem`:
/// [`run_system`] (`describe_system`, `execute_system` and
/// `Summary::of_run` in one call) is generic in the model, so the runner is compiled
/// here once and the binary and the tests link that copy (a generic `run`
/// would be compiled again in each of them; about a minute of CPU each).
///
/// # Errors
/// Every [`RunError`] of [`diracvi_run::execute_system`] (bad initial data, a step that
/// fails, …).
pub fn run(
    model: &Bowl,
    setup: &DynRunSetup,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
) -> Result<(Summary, RunOutcome), RunError> {
    run_with_energy_tolerance(model, setup, plan, sink, DEFAULT_ENERGY_TOLERANCE)
}

/// [`run`] with the summary's energy-drift warning at `energy_tolerance`
/// (relative) instead of [`DEFAULT_ENERGY_TOLERANCE`]: the function the
/// Python module (`python/`, `diracvi_python::own::RunFn`) runs the bowl
/// with, so the runner compiled here serves it too.
///
/// # Errors
/// As [`run`].
pub fn run_with_energy_tolerance(
    model: &Bowl,
    setup: &DynRunSetup,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
    energy_tolerance: f64,
) -> Result<(Summary, RunOutcome), RunError> {
    run_system(model, setup, plan, sink, energy_tolerance)
}

/// [`run`] with the order (2, 4 or 6) and the fixed step chosen for an
/// error of about `tol` in the final state and the impact times
/// (`diracvi run --tol`): [`execute_system_with_tolerance`] and the summary
/// with the choice recorded (`"tolerance"`), as the command line prints it
/// for `bowl.toml`.
///
/// # Errors
/// As [`run`]; [`RunError::InvalidTolerance`] for a `tol` that is not
/// finite and positive.
pub fn run_to_tolerance(
    model: &Bowl,
    setup: &DynRunSetup,
    plan: RunPlan,
    tol: f64,
    sink: &mut dyn RecordSink,
) -> Result<(Summary, RunOutcome), RunError> {
    let (outcome, choice, ran) = execute_system_with_tolerance(model, setup, plan, tol, sink)?;
    let info = describe_system(model, &ran)?;
    let summary = Summary::of_run(
        model.name(),
        &info,
        ran.h,
        ran.t_end,
        &outcome,
        DEFAULT_ENERGY_TOLERANCE,
    )
    .with_tolerance(&choice);
    Ok((summary, outcome))
}

/// A periodic orbit of the bowl and its stability
/// ([`periodic_orbit_system`], the search of `diracvi periodic`), from
/// `guess` (`(q, p)`) or the setup's initial data: concrete in [`Bowl`] for
/// the reason [`run`] is (the Python module passes it on).
///
/// # Errors
/// [`PeriodicError`]: a bad setup, no return to the section, Newton's
/// method not converging.
pub fn periodic_orbit(
    model: &Bowl,
    setup: &DynRunSetup,
    options: &PeriodicOptions,
    guess: Option<(&[f64], &[f64])>,
) -> Result<PeriodicOrbit, PeriodicError> {
    periodic_orbit_system(model, setup, options, guess)
}

impl Bowl {
    /// The bowl's rim, the wall of its pictures.
    pub fn rim(&self) -> Shape {
        Shape::Circle {
            center: [0.0, 0.0],
            radius: self.r,
        }
    }
}

/// The picture of a run of the bowl (`--animate`, `--poster`): the rim,
/// the ball as a dot at `(x, y)`, a red mark at each impact point.
impl Drawing for Bowl {
    fn scene(
        &self,
        frames: &[&[f64]],
        impacts: &[(&[f64], usize)],
    ) -> Result<Option<Scene>, String> {
        Ok(Some(Scene {
            unit: "m".into(),
            axes: Scene::xy_axes(),
            walls: vec![self.rim()],
            plane_walls: None,
            bodies: frames
                .iter()
                .map(|q| vec![Shape::Dot([q[0], q[1]])])
                .collect(),
            headings: Vec::new(),
            contacts: impacts.iter().map(|(q, _)| [q[0], q[1]]).collect(),
        }))
    }
}

/// The pictures of a run ([`run_with_pictures`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Pictures {
    /// The figure of `--plot` (SVG text).
    pub plot: String,
    /// The animation of `--animate` (SVG) and a poster of `--poster` (PNG,
    /// six frames).
    pub animation: Animation,
}

/// [`run`] with every step recorded (`plan.every(1)`), also drawing the
/// figure `diracvi run --plot FILE.svg` draws and the animation of
/// `--animate FILE.svg --poster FILE.png`: the figure's panels `panels`
/// (`None`: energy, coordinates and the x–y path), the bowl's rim as the
/// wall. With the same panels and no x–y panel the figure is the one the
/// command line draws for `bowl.toml`, byte for byte.
///
/// # Errors
/// A [`RunError`] of [`run`]; a [`diracvi_plot::PlotError`] for a panel the
/// bowl cannot have (`residual`: it has no constraints) or a failed
/// drawing.
pub fn run_with_pictures(
    model: &Bowl,
    setup: &DynRunSetup,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
    panels: Option<&[PlotPanel]>,
) -> Result<(Summary, RunOutcome, Pictures), Box<dyn std::error::Error + Send + Sync>> {
    let info = describe_system(model, setup)?;
    let spec = PlotSpec::resolve(panels, model.name(), &info)?;
    let plan = plan.every(1);
    // As many records as the command line expects (`steps / every + 2`),
    // so that both decimate alike.
    let mut plot = PlotCollector::new(plan.steps + 2, &spec);
    let mut frames = AnimationCollector::new(plan.steps + 2);
    let mut sinks: Vec<&mut dyn RecordSink> = vec![sink, &mut plot, &mut frames];
    let (summary, outcome) = run(model, setup, plan, &mut sinks)?;
    let rim = |_: &[[f64; 2]]| Ok(vec![model.rim()]);
    let plot = diracvi_plot::render(
        plot,
        &spec,
        &PlotInfo {
            model: model.name(),
            walls: &rim,
            coordinates: &info.coordinates,
            impacts: &outcome.impacts,
            e0: outcome.initial_energy,
            energy_scale: outcome.energy_scale,
            steps: outcome.steps,
        },
    )?;
    let animation = render_animation(
        frames,
        model.name(),
        model,
        &outcome.impacts,
        Some((PosterFormat::Png, 6)),
    )?;
    Ok((summary, outcome, Pictures { plot, animation }))
}

/// Run an ensemble of bowls: each member a bowl (its parameters) and a
/// setup (its initial state, step, end time), on worker threads as
/// `options` says; result `k` equals [`run`] of member `k` alone (but for
/// the wall time). Concrete in [`Bowl`] for the reason [`run`] is.
pub fn ensemble(
    members: &[(Bowl, DynRunSetup)],
    plan: &RunPlan,
    options: EnsembleOptions,
) -> Vec<Result<SystemRun, RunError>> {
    ensemble_system(members, plan, options)
}
