//! Command-line arguments (clap derive).

use crate::plot::PlotPanel;
use clap::{Args, Parser, Subcommand, ValueEnum};
use diracvi_run::Order;
use std::path::PathBuf;

/// Discrete Dirac mechanics and variational collision integrators.
///
/// Runs the systems of the source papers (bouncing particle, ellipse and
/// star, nonholonomic pendulum in a cylinder, rolling disks, LC circuit)
/// with the discrete Lagrange–Dirac integrators and elastic impacts.
#[derive(Debug, Parser)]
#[command(name = "diracvi", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the models: name and one-line description.
    List,
    /// Print a model's default scenario as TOML (a valid scenario file), or
    /// a model file as read (a valid model file).
    Show {
        /// Model name (see `diracvi list`).
        #[arg(
            required_unless_present_any = ["model_file", "system"],
            conflicts_with_all = ["model_file", "system"]
        )]
        model: Option<String>,
        /// A model file (TOML; see docs/model-files.md) to print back.
        #[arg(long, value_name = "FILE.toml", conflicts_with = "system")]
        model_file: Option<PathBuf>,
        /// A system file (parts joined through ports; docs/systems.md): its
        /// parts and ports, then the assembled model file.
        #[arg(long, value_name = "FILE.toml")]
        system: Option<PathBuf>,
    },
    /// Integrate a model (its paper defaults unless told otherwise).
    Run(Box<RunArgs>),
    /// Error against a reference solution for a ladder of step sizes, and
    /// the fitted order of convergence.
    Convergence(ConvergenceArgs),
    /// Find a periodic orbit of the discrete flow by Newton shooting with
    /// its exact tangent map, print its Floquet multipliers and stability;
    /// with --continue, follow it along a model parameter
    /// (docs/theory.md §14).
    Periodic(Box<PeriodicArgs>),
}

/// Options of `diracvi periodic`.
///
/// The orbit closes either at a section at impacts (--section PIECE: the
/// post-impact state at the K-th impact with that wall piece, from which
/// the plain simulation returns to it exactly) or after a whole number of
/// steps (no --section: the flow map Φ^N over the period, N from --period
/// T, --steps N, or the first close return of the run from the initial
/// data). The initial data are the guess (for a section, first carried to
/// it). Newton's method takes least-squares steps, so the directions the
/// return map does not fix (the phase along the orbit, a translation
/// symmetry) are left alone. Printed: the fixed point (q, p and v, to rerun
/// it with `diracvi run --set q=… --set v=…`), the period, the residual
/// max |P(x) − x|, the multipliers (eigenvalues of ∂P) with the trivial
/// ones named — section (0), energy or time shift / energy (near 1),
/// symmetry (a cyclic coordinate: 1, 1), constraint (0) — and the verdict
/// from the others: stable when none lies outside the unit circle. The
/// Lagrange–Dirac stepper of order 2 with regular Lagrangians (the methods
/// of `run --jacobian`); a section needs an unconstrained system.
#[derive(Debug, Args)]
pub struct PeriodicArgs {
    /// Model name; may be omitted when --scenario names the model.
    pub model: Option<String>,
    /// Scenario file (TOML, as printed by `diracvi show`).
    #[arg(long, value_name = "FILE.toml", conflicts_with = "model_file")]
    pub scenario: Option<PathBuf>,
    /// Model file (TOML; docs/model-files.md).
    #[arg(long, value_name = "FILE.toml", conflicts_with = "model")]
    pub model_file: Option<PathBuf>,
    /// Override a scenario key (a model parameter, h, t_end, q, v, …).
    /// Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Time step (s).
    #[arg(long, value_name = "H", allow_negative_numbers = true)]
    pub h: Option<f64>,
    /// How long to search for the return (s; default the scenario's
    /// t_end).
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    pub t_end: Option<f64>,
    /// Discretization map of the discrete Lagrangian.
    #[arg(long, value_enum)]
    pub discretization: Option<DiscretizationArg>,
    /// Discrete constraint.
    #[arg(long, value_enum)]
    pub constraint: Option<ConstraintArg>,
    /// The section: a boundary piece (its index or name, see `diracvi
    /// show`); the orbit closes at its post-impact state.
    #[arg(long, value_name = "PIECE", conflicts_with_all = ["period", "steps"])]
    pub section: Option<String>,
    /// With --section: the K-th impact with the piece closes the orbit
    /// (other pieces' impacts in between are part of it).
    #[arg(long, value_name = "K", default_value_t = 1, requires = "section")]
    pub impact: usize,
    /// Without --section: the period (s), rounded to a whole number of
    /// steps.
    #[arg(
        long,
        value_name = "T",
        conflicts_with = "steps",
        allow_negative_numbers = true
    )]
    pub period: Option<f64>,
    /// Without --section: the period as a number of steps.
    #[arg(long, value_name = "N")]
    pub steps: Option<usize>,
    /// Converged when max |P(x) − x| <= TOL · max(1, max |x|).
    #[arg(long, value_name = "TOL", default_value_t = 1e-12)]
    pub tolerance: f64,
    /// Newton iterations allowed.
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub max_iterations: usize,
    /// Natural-parameter continuation: n values of the model parameter
    /// PARAM from a to b, each orbit from the previous ones (linear
    /// extrapolation through the last two); prints the branch (period,
    /// residual, verdict, largest nontrivial |λ| per value) and where the
    /// stability changes. Stops at the first value without an orbit.
    #[arg(long = "continue", value_name = "PARAM=a:b:n")]
    pub continue_: Option<String>,
    /// With --continue: write the branch table, CSV (one row per value:
    /// the value, period, steps, impacts, energy, residual, iterations,
    /// stability, max_modulus, q_NAME and p_NAME per coordinate, then
    /// mK_re, mK_im, mK_abs, mK_kind per multiplier K = 0, 1, …) or JSON
    /// (every orbit as --summary json prints one, and the stability
    /// changes).
    #[arg(long, value_name = "FILE.csv|FILE.json")]
    pub out: Option<PathBuf>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = SummaryFormat::Text)]
    pub summary: SummaryFormat,
    /// No text output.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Options of `diracvi run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Model name; may be omitted when --scenario names the model.
    pub model: Option<String>,
    /// Scenario file (TOML, as printed by `diracvi show`; at most 1 MiB).
    #[arg(long, value_name = "FILE.toml", conflicts_with = "model_file")]
    pub scenario: Option<PathBuf>,
    /// Model file: a system written as expressions (TOML; see
    /// docs/model-files.md and the examples under models/). Its `[run]` and
    /// `[initial]` sections are the defaults; every other option applies.
    #[arg(long, value_name = "FILE.toml", conflicts_with = "model")]
    pub model_file: Option<PathBuf>,
    /// A SPICE-subset netlist (L, C, V, I; ground 0) to run as a circuit:
    /// order 2 on the sparse Lagrange–Dirac stepper, --order 4|6 on the
    /// run-time core (needs --h and --t-end or --steps).
    #[arg(long, value_name = "FILE.cir", conflicts_with_all = ["model", "model_file", "scenario"])]
    pub netlist: Option<PathBuf>,
    /// A system file: parts (model files, netlists) joined through ports
    /// (gyrator, transformer, inductance), assembled into one model
    /// (docs/systems.md). Names are `part.name` (`--set cone.m=0.02`,
    /// `--set coil.Bl=2`); its `[run]` and `[initial]` are the defaults.
    #[arg(long, value_name = "FILE.toml", conflicts_with_all = ["model", "model_file", "scenario", "netlist"])]
    pub system: Option<PathBuf>,
    /// Override a scenario key: a model parameter, or h, t_end,
    /// discretization, constraint, q, v (lists comma-separated). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Start from the momentum P (comma-separated, one entry per
    /// coordinate) at the scenario's q (--set q=... changes it) instead of
    /// from a velocity: v is solved from the constrained Legendre map,
    /// ∂L/∂v(q, v) = P + A(q)ᵀν with A(q) v = 0 (docs/theory.md §8.7), so
    /// the run starts from P + A(q)ᵀν — P itself when it is a momentum of
    /// the constrained system (ν = 0), such as the final state of another
    /// run (`final_state` of --summary json) taken back with --backward.
    /// The summary reports v and ν ("start" in --summary json). Not with
    /// --set v=..., nor for circuits.
    #[arg(
        long,
        value_name = "P,...",
        value_delimiter = ',',
        allow_hyphen_values = true
    )]
    pub start_p: Option<Vec<f64>>,
    /// Time step (s); overrides the scenario and --set (and a scenario's
    /// `tol`).
    #[arg(long, value_name = "H", allow_negative_numbers = true)]
    pub h: Option<f64>,
    /// Accuracy on request: diracvi chooses the method (order 2: the
    /// midpoint scheme, 4: triple jump or 6: Kahan–Li; never the drifting
    /// forward scheme) and a fixed step h = t_end / N so that the error of
    /// the final state and of the impact times is about TOL (componentwise
    /// |Δx| / max(1, |x|)), from pilot runs at N, 2N, 4N, … steps
    /// (Richardson estimate, the order checked, the cheapest order chosen;
    /// docs/theory.md §13), then runs with that step. The summary reports
    /// the choice ("tolerance" in --summary json), and a warning when the
    /// estimate did not decrease at the method's order (round-off floor,
    /// chaos). Exclusive with --h (except with --netlist, which has no
    /// default step: there --h is the step the pilot runs start from),
    /// --steps, --order, --discretization and --constraint. A scenario file
    /// may give `tol` instead of `h`.
    #[arg(
        long,
        value_name = "TOL",
        allow_negative_numbers = true,
        conflicts_with_all = ["steps", "order", "discretization", "constraint"]
    )]
    pub tol: Option<f64>,
    /// End time (s): take round(T/h) steps.
    #[arg(
        long,
        value_name = "T",
        conflicts_with = "steps",
        allow_negative_numbers = true
    )]
    pub t_end: Option<f64>,
    /// Take exactly N steps (instead of the end time); at most 1e10, like
    /// round(T/h).
    #[arg(long, value_name = "N")]
    pub steps: Option<usize>,
    /// Discretization map of the discrete Lagrangian.
    #[arg(long, value_enum)]
    pub discretization: Option<DiscretizationArg>,
    /// Discrete constraint.
    #[arg(long, value_enum)]
    pub constraint: Option<ConstraintArg>,
    /// One-step map.
    #[arg(long, value_enum, default_value_t = StepperArg::Lagrange)]
    pub stepper: StepperArg,
    /// Integrate backward in time from the initial data with the (−) stepper.
    #[arg(long)]
    pub backward: bool,
    /// Integrate the reduced system on shape space by the model's declared
    /// symmetry (particle: x, Routh; pendulum: φ, Chaplygin; disk-table:
    /// the rolling angle θ, Chaplygin; a model file: the coordinates of its
    /// `[symmetry] cyclic = [...]` table, any size) and reconstruct the full
    /// states, so every output and plot is that of the full system
    /// (docs/theory.md §7).
    #[arg(long, conflicts_with = "backward")]
    pub reduce: bool,
    /// Report the Jacobian of the final state with respect to the initial
    /// one, ∂(q_N, p_N)/∂(q_0, p_0), exact through impacts (the tangent map
    /// of the discrete flow, docs/theory.md §12): in `--summary json` as
    /// "jacobian": {"rows", "cols", "matrix"} (row-major; components named
    /// `q:NAME` then `p:NAME` after the coordinates), and in the text
    /// summary how far it is from symplectic (systems without
    /// constraints). The Lagrange–Dirac stepper at orders 2, 4 and 6, and
    /// at order 2 for degenerate Lagrangians (the equations a degenerate step
    /// solves differentiated, its next step's hidden constraints among
    /// them, docs/theory.md §12.8), and the Hamiltonian stepper (its step
    /// and its impact law differentiated, docs/theory.md §12.7); circuits
    /// too (a capacitor loop's hidden constraint from the circuit graph in
    /// place of the equation it replaces), and systems with forces or
    /// sources that vary in time (each step differentiated at its own time,
    /// docs/theory.md §8.8); --reduce is refused.
    #[arg(long, conflicts_with = "reduce")]
    pub jacobian: bool,
    /// Report the derivatives of the final state with respect to model
    /// parameters, ∂(q_N, p_N)/∂θ, exact through impacts (the impact time,
    /// point and law move with θ; docs/theory.md §12.4), for the
    /// comma-separated names of a model file's `[parameters]`: in
    /// `--summary json` as "sensitivity": {"NAME": [2n numbers], …}
    /// (positions then momenta, the order of the Jacobian's rows; a
    /// parameter written as an expression of others follows them, and so
    /// do initial data written as expressions of the parameters or solved
    /// from the constraints), and in the text summary the largest entry of
    /// each. Model files (--model-file: the catalogue's parameters are
    /// compiled-in numbers; `[forces]` are differentiated too, not a drive
    /// that depends on a parameter) and circuits (the element values
    /// by their netlist names, e.g. L1,C2; a capacitor's initial charge c·V
    /// moves with c), with the methods --jacobian accepts, at
    /// orders 2, 4 and 6, through impacts at every order (at --order 4 and
    /// 6 the continuous impact law differentiated in θ; measured against
    /// differences of whole runs: 2e-9 to 1.4e-7 relative).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "NAME,...",
        conflicts_with = "reduce"
    )]
    pub sensitivity: Vec<String>,
    /// Order of the method: 2 (the scenario's discretization, VCI paper,
    /// Theorem 3.1 at impacts), 4 (triple jump) or 6 (Kahan–Li) of the
    /// symmetric midpoint Lagrange–Dirac step with the continuous elastic
    /// law at impacts (docs/theory.md §9; with --stepper lagrange).
    /// Default 2.
    #[arg(long, value_name = "2|4|6")]
    pub order: Option<Order>,
    /// What happens at a wall: the elastic impact law of the stepper's
    /// family, or an error at the first crossing.
    #[arg(long, value_enum, default_value_t = ImpactsArg::Elastic)]
    pub impacts: ImpactsArg,
    /// Write the trajectory (format from the extension: .csv or .json). CSV
    /// columns: a coordinate c gives q_c and p_c (k, t, q_theta, q_x, …,
    /// p_theta, p_x, …, energy, constraint_residual); the impacts go to a
    /// sibling file STEM.impacts.csv (step, alpha = the impact-time
    /// fraction of the step, t, piece, q_c…, p_before_c…, p_after_c…,
    /// energy_before, energy_after); Python's to_pandas() uses the same
    /// names, and no coordinate name can clash with a fixed column. Output files appear only when the whole
    /// run succeeded (written to temporary files, renamed at the end); a
    /// failed or interrupted run leaves none and changes no existing file.
    #[arg(long, value_name = "FILE.csv|FILE.json")]
    pub out: Option<PathBuf>,
    /// Record every K-th step (and always the last).
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub every: usize,
    /// Plot the run (SVG): a grid of panels, chosen with --plot-panels
    /// (default: energy deviation, one panel per coordinate, and the x–y
    /// path with the walls for a model with coordinates x and y); impacts
    /// are red lines in every time panel.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Panels of --plot, comma-separated, drawn in the order energy,
    /// coords, momenta, residual, xy, phase (default: energy,coords,xy —
    /// xy only when the model has coordinates x and y). At most 9
    /// coordinates are drawn, evenly spread over a larger system.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        value_name = "PANEL,...",
        requires = "plot"
    )]
    pub plot_panels: Option<Vec<PlotPanel>>,
    /// Animate the motion (an SVG a browser plays, looping): the walls, the
    /// body and its heading moving through at most 600 recorded frames, the
    /// impact points, a clock and axes with ticks, the view fitted to the
    /// body's path and the walls near it. Planar models only: the catalogue
    /// models with a drawing, and model files with a `[drawing]` table or
    /// coordinates x and y (a dot at (x, y)). One loop lasts the simulated
    /// time, clamped to 5–30 s.
    #[arg(long, value_name = "FILE.svg")]
    pub animate: Option<PathBuf>,
    /// With --animate: also write a still poster (no animation: for viewers
    /// without SMIL), a strip of --poster-frames panels evenly spread in
    /// time, each with its clock, axes, the body, its path so far and the
    /// impacts so far. FILE.svg writes SVG; FILE.png the same strip as a
    /// PNG (same size in px; its text in a built-in 5x7 bitmap font,
    /// ASCII only: other characters are drawn as '?').
    #[arg(long, value_name = "FILE.svg|FILE.png", requires = "animate")]
    pub poster: Option<PathBuf>,
    /// Panels of --poster (1 to 24).
    #[arg(long, value_name = "K", default_value_t = crate::animate::DEFAULT_POSTER_FRAMES, requires = "poster")]
    pub poster_frames: usize,
    /// Summary format on stdout.
    #[arg(long, value_enum, default_value_t = SummaryFormat::Text)]
    pub summary: SummaryFormat,
    /// Warn in the summary when the discrete energy moved by more than this
    /// fraction of the run's energy scale (`max |E − E0| / scale`; 0.01 =
    /// 1 %): usually a sign that the step h is too large.
    #[arg(
        long,
        value_name = "FRACTION",
        default_value_t = 0.01,
        allow_negative_numbers = true
    )]
    pub energy_tolerance: f64,
    /// No text summary, no progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Options of `diracvi convergence`.
#[derive(Debug, Args)]
pub struct ConvergenceArgs {
    /// Model name: lc, particle or pendulum (the models with a reference).
    pub model: String,
    /// Step sizes, comma-separated: at least two different ones, each > 0
    /// (default: depends on the model).
    #[arg(
        long,
        value_name = "H1,H2,...",
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    pub h_list: Option<Vec<f64>>,
    /// End time (s) (default: depends on the model).
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    pub t_end: Option<f64>,
    /// Override a model parameter or the initial data (KEY=VALUE). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Order of the method, as for `run` (2, 4 or 6).
    #[arg(long, value_name = "2|4|6", default_value_t = Order::Two)]
    pub order: Order,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = SummaryFormat::Text)]
    pub summary: SummaryFormat,
}

/// `--discretization`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiscretizationArg {
    /// Ψ_d(q0, q1) = (q0, (q1 − q0)/h), symplectic-Euler type.
    Forward,
    /// Ψ_d(q0, q1) = ((q0 + q1)/2, (q1 − q0)/h).
    Midpoint,
}

impl DiscretizationArg {
    /// The scenario value.
    pub fn as_str(self) -> &'static str {
        match self {
            DiscretizationArg::Forward => "forward",
            DiscretizationArg::Midpoint => "midpoint",
        }
    }
}

/// `--constraint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConstraintArg {
    /// ω_{d±} through the discretization's retraction (DDM eq. 4.2).
    Retraction,
    /// The symmetric midpoint constraint.
    Midpoint,
    /// The model's own discrete constraint.
    Model,
}

impl ConstraintArg {
    /// The scenario value.
    pub fn as_str(self) -> &'static str {
        match self {
            ConstraintArg::Retraction => "retraction",
            ConstraintArg::Midpoint => "midpoint",
            ConstraintArg::Model => "model",
        }
    }
}

/// `--stepper`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StepperArg {
    /// Discrete Lagrange–Dirac (with impacts).
    Lagrange,
    /// Discrete nonholonomic Hamiltonian, symplectic Euler (with its
    /// impact law: a normal momentum jump balancing the discrete energy).
    Hamiltonian,
}

/// `--impacts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImpactsArg {
    /// Elastic impacts (VCI paper, Theorem 3.1, or its Hamiltonian
    /// counterpart).
    Elastic,
    /// No impacts: the run stops with an error at the first crossing.
    Reject,
}

impl From<StepperArg> for diracvi_run::Stepper {
    fn from(s: StepperArg) -> Self {
        match s {
            StepperArg::Lagrange => diracvi_run::Stepper::Lagrange,
            StepperArg::Hamiltonian => diracvi_run::Stepper::Hamiltonian,
        }
    }
}

impl From<ImpactsArg> for diracvi_run::Impacts {
    fn from(i: ImpactsArg) -> Self {
        match i {
            ImpactsArg::Elastic => diracvi_run::Impacts::Elastic,
            ImpactsArg::Reject => diracvi_run::Impacts::Reject,
        }
    }
}

impl StepperArg {
    /// Name for summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            StepperArg::Lagrange => "lagrange",
            StepperArg::Hamiltonian => "hamiltonian",
        }
    }
}

/// `--summary`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SummaryFormat {
    /// A few human-readable lines.
    Text,
    /// One JSON object.
    Json,
}
