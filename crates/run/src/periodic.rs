//! Periodic orbits of the discrete flow and their stability
//! (docs/theory.md §14): Newton shooting with the exact tangent map of the
//! discrete flow (§12), through impacts.
//!
//! Two return maps, both of the (+) Lagrange–Dirac stepper of order 2 with
//! the \[VCI\] law (the methods `--jacobian` has):
//!
//! * **A section at impacts** ([`Section::Impact`]): `P(x)` is the
//!   post-impact state `(q̃, p⁺)` at the `count`-th impact with one wall
//!   piece of the run started from `x = (q, p)` (the run's grid starting at
//!   `x`). A fixed point is a state on the wall that the plain simulation
//!   started from it returns to exactly at that impact; the period is the
//!   impact time. The Jacobian of `P` is recovered from the tracked
//!   Jacobian of the grid step containing the impact and the tangent map of
//!   the rest of that step (§14.2).
//! * **A whole number of steps** ([`Section::Steps`]): `P = Φ^N`, the flow
//!   over `N` grid steps, for smooth motions (or any motion): the period
//!   is `N h` exactly, and `P` is symplectic for unconstrained systems, so
//!   its multipliers come in exact reciprocal pairs (§14.1).
//!
//! Newton's method solves `P(π(x)) = x` (`π` projects `q` onto the
//! section's wall) with a least-squares step (truncated singular value
//! decomposition): the directions the return map does not fix — the phase
//! along the orbit, a translation symmetry — are left where they are, and
//! the conserved momentum of a symmetry is matched to the guess's.
//! Nothing here knows a particular model: trivial multipliers are found
//! from the structure of the computed Jacobian and the model's energy.

use crate::RunError;
use diracvi_discrete_dirac::dynamic::{DynLagrangeDirac, DynOneStep, DynSubStepper};
use diracvi_discrete_dirac::{Direction, DynState, Located};
use diracvi_geometry::dynamic::{
    boundary_gradient_dyn, energy_dyn, legendre_jet_dyn, momentum_dyn, velocity_from_momentum_dyn,
};
use diracvi_impact::ImpactError;
use diracvi_impact::dynamic::{DynImpactEvent, DynImpactIntegrator};
use diracvi_models::{
    ConstraintDiscretization, Discretization, DynModelVisitor, DynRunSetup, NamedDynSystem,
    Scenario,
};
use nalgebra::{Complex, DMatrix, DVector};
use num_dual::Dual64;
use serde::Serialize;
use std::fmt;
use thiserror::Error;

/// Where the orbit closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The post-impact state at the `count`-th impact (`count ≥ 1`) with
    /// boundary piece `piece`.
    Impact {
        /// The boundary piece (index).
        piece: usize,
        /// Which impact with that piece closes the orbit.
        count: usize,
    },
    /// The state after exactly `steps` grid steps; `None`: the first close
    /// return of the guess's run (see [`PeriodicOptions::horizon`]).
    Steps(Option<usize>),
}

/// How to look for a periodic orbit.
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodicOptions {
    /// Where the orbit closes.
    pub section: Section,
    /// Converged when `max |P(x) − x| ≤ tolerance · max(1, max |x|)`.
    pub tolerance: f64,
    /// Newton iterations allowed.
    pub max_iterations: usize,
    /// Singular values of `∂P − I` below this fraction of the largest are
    /// treated as zero (the directions the return map does not fix).
    pub rank_tolerance: f64,
    /// A nontrivial multiplier with modulus above `1 + stability_tolerance`
    /// makes the orbit unstable.
    pub stability_tolerance: f64,
    /// Longest time searched for the return (`None`: the scenario's
    /// `t_end`).
    pub horizon: Option<f64>,
}

impl PeriodicOptions {
    /// Defaults: tolerance `1e-12`, 30 iterations, rank tolerance `1e-9`,
    /// stability tolerance `1e-6`, the scenario's `t_end` as horizon.
    pub fn new(section: Section) -> Self {
        Self {
            section,
            tolerance: 1e-12,
            max_iterations: 30,
            rank_tolerance: 1e-9,
            stability_tolerance: 1e-6,
            horizon: None,
        }
    }
}

/// What a Floquet multiplier is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum MultiplierKind {
    /// `0`, exactly: the return lies on the section's wall (the direction
    /// across the section; the time shift of the continuous orbit).
    Section,
    /// The pair near `1` of the time shift along the orbit and the energy
    /// (the grid map `Φ^N`); split from `1` by the discretization.
    TimeShiftEnergy,
    /// Near `1`: the energy (the section map); moved from `1` by the
    /// discrete impact law's dependence on the impact phase.
    Energy,
    /// `1`, exactly: a translation symmetry of a coordinate and its
    /// conserved momentum (two multipliers each).
    Symmetry {
        /// The cyclic coordinate.
        coordinate: String,
    },
    /// `0`: momentum along the constraint forms, absorbed by the
    /// multipliers of the next step.
    Constraint,
    /// Everything else: these decide the stability.
    Nontrivial,
}

impl MultiplierKind {
    /// Whether the multiplier is trivial.
    pub fn is_trivial(&self) -> bool {
        !matches!(self, MultiplierKind::Nontrivial)
    }

    /// A short label.
    pub fn label(&self) -> String {
        match self {
            MultiplierKind::Section => "section (time shift)".into(),
            MultiplierKind::TimeShiftEnergy => "time shift / energy".into(),
            MultiplierKind::Energy => "energy".into(),
            MultiplierKind::Symmetry { coordinate } => format!("symmetry ({coordinate})"),
            MultiplierKind::Constraint => "constraint".into(),
            MultiplierKind::Nontrivial => "nontrivial".into(),
        }
    }
}

/// One Floquet multiplier.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Multiplier {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
    /// Modulus.
    pub modulus: f64,
    /// What it is.
    #[serde(flatten)]
    pub kind: MultiplierKind,
}

/// The stability verdict, from the nontrivial multipliers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stability {
    /// Every nontrivial multiplier on or inside the unit circle (within
    /// the stability tolerance): linearly stable.
    Stable,
    /// A nontrivial multiplier outside the unit circle.
    Unstable,
    /// No nontrivial multiplier (a motion with one degree of freedom, or
    /// only symmetries): neutral.
    Neutral,
}

impl fmt::Display for Stability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stability::Stable => "stable",
            Stability::Unstable => "unstable",
            Stability::Neutral => "neutral",
        })
    }
}

/// A periodic orbit found by [`periodic_orbit`].
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodicOrbit {
    /// The model's name.
    pub model: String,
    /// Coordinate names.
    pub coordinates: Vec<String>,
    /// Where the orbit closes (with the number of steps found for
    /// [`Section::Steps`]`(None)`).
    pub section: Section,
    /// The name of the section's boundary piece, if any.
    pub piece_name: Option<String>,
    /// The fixed point's configuration.
    pub q: Vec<f64>,
    /// The fixed point's momentum.
    pub p: Vec<f64>,
    /// The fixed point's velocity (`p = ∂L/∂v(q, v)`), to run it:
    /// `diracvi run --set q=… --set v=…`.
    pub v: Vec<f64>,
    /// The energy `E(q, v)` at the fixed point.
    pub energy: f64,
    /// The period (the return time).
    pub period: f64,
    /// Grid steps begun in one period.
    pub steps: usize,
    /// Impacts (with any piece) in one period.
    pub impacts: usize,
    /// `max |P(x) − x|` at the fixed point.
    pub residual: f64,
    /// Newton iterations taken.
    pub iterations: usize,
    /// The residual before each iteration, and at the end.
    pub residual_history: Vec<f64>,
    /// `∂P/∂(q, p)` at the fixed point (`2n × 2n`, positions first): the
    /// monodromy (grid map) or the Poincaré map's Jacobian (section).
    pub monodromy: DMatrix<f64>,
    /// The eigenvalues of [`monodromy`](Self::monodromy), trivial first.
    pub multipliers: Vec<Multiplier>,
    /// `max |λ μ − 1|` over the nontrivial multipliers paired with their
    /// closest reciprocal (0 without any).
    pub reciprocity_defect: f64,
    /// Largest modulus of a nontrivial multiplier (0 without any).
    pub max_modulus: f64,
    /// The verdict.
    pub stability: Stability,
}

/// Why no periodic orbit was found.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PeriodicError {
    /// The scenario could not be run (an input error), or a run failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// `--section` named no boundary piece of the model.
    #[error("{model}: no boundary piece '{given}' for the section (valid: {})", if valid.is_empty() { "none: the model has no walls; leave out --section for a period of the smooth motion".to_owned() } else { valid.join(", ") })]
    UnknownSection {
        /// The model's name.
        model: String,
        /// What was given.
        given: String,
        /// The pieces, as `index (name)`.
        valid: Vec<String>,
    },
    /// Asked for something the periodic-orbit search does not do.
    #[error("{model}: periodic orbits are not available {what}")]
    Unsupported {
        /// The model's name.
        model: String,
        /// What and why.
        what: String,
    },
    /// The run from a guess did not reach the section.
    #[error(
        "{model}: no return: the run from the guess met piece {piece} {found} time(s) before t = {horizon} (impact {count} closes the orbit); raise --t-end or start from better data"
    )]
    NoReturn {
        /// The model's name.
        model: String,
        /// The section's piece.
        piece: usize,
        /// Which impact closes the orbit.
        count: usize,
        /// How many were met.
        found: usize,
        /// The time searched.
        horizon: f64,
    },
    /// No close return of the guess was found (to choose the period).
    #[error(
        "{model}: no period found: the run from the initial data does not come back near its start before t = {horizon}; give the period with --period T"
    )]
    NoPeriod {
        /// The model's name.
        model: String,
        /// The time searched.
        horizon: f64,
    },
    /// Newton's method converged to an equilibrium (a state the flow
    /// does not move), not to a periodic orbit.
    #[error(
        "{model}: Newton's method converged to an equilibrium (q = {q:?}), not to a periodic orbit: no orbit of this period near the guess; try another --period or larger initial data"
    )]
    Equilibrium {
        /// The model's name.
        model: String,
        /// The equilibrium's configuration.
        q: Vec<f64>,
    },
    /// Newton's method did not converge.
    #[error(
        "{model}: the periodic orbit did not converge: residual {residual:.3e} after {iterations} Newton iterations (tolerance {tolerance:.1e}){reason}"
    )]
    NotConverged {
        /// The model's name.
        model: String,
        /// Iterations taken.
        iterations: usize,
        /// The last residual.
        residual: f64,
        /// The tolerance asked for.
        tolerance: f64,
        /// Why it stopped, if known (`; …`).
        reason: String,
    },
}

impl PeriodicError {
    /// Whether this is a failure of the numerics (as opposed to an input
    /// error).
    pub fn is_numerical(&self) -> bool {
        match self {
            PeriodicError::Run(e) => e.is_numerical(),
            PeriodicError::NoReturn { .. }
            | PeriodicError::NoPeriod { .. }
            | PeriodicError::Equilibrium { .. }
            | PeriodicError::NotConverged { .. } => true,
            PeriodicError::UnknownSection { .. } | PeriodicError::Unsupported { .. } => false,
        }
    }
}

/// The index of the boundary piece `given` (an index or a piece's name) of
/// the scenario's model.
///
/// # Errors
/// [`PeriodicError::UnknownSection`], [`PeriodicError::Run`] for an
/// invalid scenario.
pub fn section_piece(scenario: &Scenario, given: &str) -> Result<usize, PeriodicError> {
    let summary = crate::describe(scenario).map_err(RunError::from)?;
    section_among(&scenario.model, &summary.boundary_names, given)
}

/// The index of the boundary piece `given` (an index or a piece's name)
/// among the pieces `names` of model `model` (a
/// [`ModelSummary::boundary_names`](crate::ModelSummary::boundary_names)).
///
/// # Errors
/// [`PeriodicError::UnknownSection`].
pub fn section_among(model: &str, names: &[String], given: &str) -> Result<usize, PeriodicError> {
    let trimmed = given.trim();
    if let Ok(j) = trimmed.parse::<usize>()
        && j < names.len()
    {
        return Ok(j);
    }
    if let Some(j) = names.iter().position(|n| n == trimmed) {
        return Ok(j);
    }
    Err(PeriodicError::UnknownSection {
        model: model.to_owned(),
        given: trimmed.to_owned(),
        valid: names
            .iter()
            .enumerate()
            .map(|(j, n)| format!("{j} ({n})"))
            .collect(),
    })
}

/// Find a periodic orbit of `scenario`'s discrete flow by Newton shooting
/// from `guess` (`(q, p)`), or from the scenario's initial data
/// (`p = ∂L/∂v(q(0), v(0))`); for a section at impacts the guess is first
/// carried to the section (the post-impact state of its run there).
///
/// # Errors
/// [`PeriodicError`]: input errors (the scenario's, an unknown section, a
/// model or method without a tangent map), no return to the section,
/// Newton's method not converging.
pub fn periodic_orbit(
    scenario: &Scenario,
    options: &PeriodicOptions,
    guess: Option<(&[f64], &[f64])>,
) -> Result<PeriodicOrbit, PeriodicError> {
    if scenario.circuit.is_some() {
        return Err(PeriodicError::Unsupported {
            model: scenario.model.clone(),
            what: "for circuits (a degenerate Lagrangian: its initial data are tied by hidden \
                   constraints, which the shooting Newton on (q_0, p_0) does not keep)"
                .into(),
        });
    }
    let guess = guess.map(|(q, p)| (q.to_vec(), p.to_vec()));
    scenario
        .visit_dyn(Search { options, guess })
        .map_err(RunError::from)?
}

/// [`periodic_orbit`] for a system of your own crate (see
/// [`execute_system`](crate::execute_system)) and its setup: the same
/// search on the run-time-sized core, from `guess` or the setup's initial
/// data.
///
/// # Errors
/// As [`periodic_orbit`]; [`PeriodicError::Run`] for a setup that fails
/// the checks of [`describe_system`](crate::describe_system).
pub fn periodic_orbit_system<Mo: NamedDynSystem>(
    model: &Mo,
    setup: &DynRunSetup,
    options: &PeriodicOptions,
    guess: Option<(&[f64], &[f64])>,
) -> Result<PeriodicOrbit, PeriodicError> {
    crate::describe_system(model, setup).map_err(RunError::from)?;
    let guess = guess.map(|(q, p)| (q.to_vec(), p.to_vec()));
    search(model, setup, options, guess)
}

/// The visitor doing the search on the run-time-sized core.
struct Search<'a> {
    options: &'a PeriodicOptions,
    guess: Option<(Vec<f64>, Vec<f64>)>,
}

impl DynModelVisitor for Search<'_> {
    type Output = Result<PeriodicOrbit, PeriodicError>;

    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Self::Output {
        search(model, setup, self.options, self.guess)
    }
}

/// One evaluation of the return map.
struct Return {
    /// `P(x)`.
    y: DVector<f64>,
    /// `∂P/∂x`.
    jacobian: DMatrix<f64>,
    /// The return time.
    period: f64,
    /// Grid steps begun.
    steps: usize,
    /// Impacts met (any piece).
    impacts: usize,
    /// States along the run (the whole grid, for the period search and the
    /// flow direction).
    states: Vec<DVector<f64>>,
}

/// The return map of one model.
struct Flow<'a, Mo> {
    model: &'a Mo,
    setup: &'a DynRunSetup,
    n: usize,
    horizon: f64,
}

impl<Mo: NamedDynSystem> Flow<'_, Mo> {
    fn name(&self) -> String {
        self.model.name().to_owned()
    }

    /// `error` of step `step` of the flow.
    fn failed(&self, step: usize, error: ImpactError) -> PeriodicError {
        PeriodicError::Run(RunError::Integration {
            model: self.name(),
            error: Located::new(step, error),
        })
    }

    fn stepper(&self) -> DynLagrangeDirac<Mo> {
        DynLagrangeDirac::new(
            self.model.clone(),
            self.setup.discretization,
            self.setup.constraint,
            Direction::Forward,
        )
    }

    fn max_steps(&self) -> usize {
        ((self.horizon / self.setup.h).ceil().max(1.0) as usize).min(crate::MAX_STEPS as usize)
    }

    fn state(&self, x: &DVector<f64>) -> DynState {
        DynState {
            t: 0.0,
            q: x.rows(0, self.n).into_owned(),
            p: x.rows(self.n, self.n).into_owned(),
        }
    }

    /// Run from `x` to the return `section` (tracking the Jacobian when
    /// `tangent`), keeping the grid states when `keep`.
    fn run(
        &self,
        x: &DVector<f64>,
        section: Section,
        tangent: bool,
        keep: bool,
    ) -> Result<Return, PeriodicError> {
        let h = self.setup.h;
        let mut integrator = DynImpactIntegrator::new(self.stepper());
        if tangent {
            integrator = integrator.track_jacobian();
        }
        let mut state = self.state(x);
        let mut events: Vec<DynImpactEvent> = Vec::new();
        let mut states = Vec::new();
        if keep {
            states.push(x.clone());
        }
        let mut met = 0;
        let limit = match section {
            Section::Steps(Some(steps)) => steps,
            _ => self.max_steps(),
        };
        for k in 0..limit {
            let before = events.len();
            let out = integrator
                .advance(&state, h, &mut events)
                .map_err(|e| self.failed(k, e))?;
            for event in &mut events[before..] {
                event.step = k;
            }
            state = out.to;
            let x_next = stack(&state.q, &state.p);
            if keep {
                states.push(x_next.clone());
            }
            if let Section::Impact { piece, count } = section {
                for i in before..events.len() {
                    if events[i].piece != piece {
                        continue;
                    }
                    met += 1;
                    if met < count {
                        continue;
                    }
                    if i + 1 != events.len() {
                        return Err(PeriodicError::Unsupported {
                            model: self.name(),
                            what: format!(
                                "with another impact after the section's in the same step \
                                 (step {k}, t = {}): take a smaller step h",
                                events[i].t
                            ),
                        });
                    }
                    let e = &events[i];
                    let y = stack(&e.q, &e.p_after_raw);
                    let jacobian = match integrator.jacobian() {
                        Some(grid) => self.impact_jacobian(k, e, &x_next, grid, piece)?,
                        None => DMatrix::zeros(0, 0),
                    };
                    return Ok(Return {
                        y,
                        jacobian,
                        period: e.t,
                        steps: k + 1,
                        impacts: events.len(),
                        states,
                    });
                }
            }
        }
        match section {
            Section::Impact { piece, count } => Err(PeriodicError::NoReturn {
                model: self.name(),
                piece,
                count,
                found: met,
                horizon: limit as f64 * h,
            }),
            Section::Steps(_) => Ok(Return {
                y: stack(&state.q, &state.p),
                jacobian: integrator
                    .jacobian()
                    .cloned()
                    .unwrap_or_else(|| DMatrix::zeros(0, 0)),
                period: state.t,
                steps: limit,
                impacts: events.len(),
                states,
            }),
        }
    }

    /// `∂(q̃, p⁺)/∂x_0` at the impact `e` of step `k`, from the grid
    /// Jacobian `grid = ∂x_{k+1}/∂x_0`: the rest of the step is the smooth
    /// sub-step `Ψ` of length `h₂` from `(q̃, p⁺)` to `x_{k+1}`, and `q̃`
    /// stays on the wall, so `DΨ dy + ∂Ψ/∂h dh₂ = grid dx_0` and
    /// `∇g(q̃)·dq̃ = 0` determine `dy` and `dh₂` (docs/theory.md §14.2).
    fn impact_jacobian(
        &self,
        k: usize,
        e: &DynImpactEvent,
        x_next: &DVector<f64>,
        grid: &DMatrix<f64>,
        piece: usize,
    ) -> Result<DMatrix<f64>, PeriodicError> {
        let n = self.n;
        let h2 = self.setup.h * (1.0 - e.alpha);
        let mut stepper = self.stepper();
        let sub = stepper
            .sub_step(e.t, &e.q, &e.p_after_raw, h2)
            .map_err(|s| self.failed(k, ImpactError::Step(s)))?;
        let scale = x_next.rows(0, n).amax().max(1.0);
        if (&sub.b - x_next.rows(0, n)).amax() > 1e-8 * scale {
            return Err(PeriodicError::Unsupported {
                model: self.name(),
                what: format!(
                    "here: the rest of the step after the section's impact (step {k}) could not \
                     be reproduced to find its tangent map"
                ),
            });
        }
        let tangent = stepper
            .sub_step_tangent(e.t, &e.q, &sub, h2)
            .map_err(|s| self.failed(k, ImpactError::Step(s)))?;
        let (_, dg) = boundary_gradient_dyn(self.model, piece, &e.q)
            .map_err(|source| self.failed(k, ImpactError::Geometry { t: e.t, source }))?;
        let size = 2 * n + 1;
        let mut a = DMatrix::zeros(size, size);
        a.view_mut((0, 0), (2 * n, 2 * n)).copy_from(&tangent.start);
        a.view_mut((0, 2 * n), (2 * n, 1)).copy_from(&tangent.step);
        for j in 0..n {
            a[(2 * n, j)] = dg[j];
        }
        let mut b = DMatrix::zeros(size, 2 * n);
        b.view_mut((0, 0), (2 * n, 2 * n)).copy_from(grid);
        let solved = a.lu().solve(&b).ok_or_else(|| PeriodicError::Unsupported {
            model: self.name(),
            what: format!(
                "here: the section's impact at t = {} is grazing or the step after it is \
                 singular (no tangent map of the return)",
                e.t
            ),
        })?;
        Ok(solved.rows(0, 2 * n).into_owned())
    }

    /// `x` with `q` moved onto the wall of `piece` along its gradient, and
    /// the projector `∂π/∂x` there.
    fn project(
        &self,
        x: &DVector<f64>,
        piece: usize,
    ) -> Result<(DVector<f64>, DMatrix<f64>), PeriodicError> {
        let n = self.n;
        let mut q = x.rows(0, n).into_owned();
        let geo = |source| self.failed(0, ImpactError::Geometry { t: 0.0, source });
        let mut dg = DVector::zeros(n);
        for _ in 0..8 {
            let (g, d) = boundary_gradient_dyn(self.model, piece, &q).map_err(geo)?;
            dg = d;
            let norm2 = dg.norm_squared();
            if norm2 == 0.0 || !g.is_finite() {
                break;
            }
            let step = &dg * (g / norm2);
            q -= &step;
            if g.abs() <= 1e-15 * (1.0 + q.amax()) {
                break;
            }
        }
        let mut out = x.clone();
        out.rows_mut(0, n).copy_from(&q);
        let mut proj = DMatrix::identity(2 * n, 2 * n);
        let norm2 = dg.norm_squared();
        if norm2 > 0.0 {
            let block = &dg * dg.transpose() / norm2;
            let mut view = proj.view_mut((0, 0), (n, n));
            view -= block;
        }
        Ok((out, proj))
    }

    /// `∇H = (−∂L/∂q, v)` at `(q, p)` (`v` from the inverse Legendre map).
    fn energy_gradient(&self, q: &DVector<f64>, v: &DVector<f64>) -> DVector<f64> {
        let n = self.n;
        let mut grad = DVector::zeros(2 * n);
        let vd: Vec<Dual64> = v.iter().map(|&x| Dual64::from(x)).collect();
        for i in 0..n {
            let qd: Vec<Dual64> = q
                .iter()
                .enumerate()
                .map(|(j, &x)| Dual64::new(x, if i == j { 1.0 } else { 0.0 }))
                .collect();
            grad[i] = -self.model.lagrangian(&qd, &vd).eps;
        }
        grad.rows_mut(n, n).copy_from(v);
        grad
    }
}

/// `(a, b)` stacked.
fn stack(a: &DVector<f64>, b: &DVector<f64>) -> DVector<f64> {
    let mut x = DVector::zeros(a.len() + b.len());
    x.rows_mut(0, a.len()).copy_from(a);
    x.rows_mut(a.len(), b.len()).copy_from(b);
    x
}

/// The first close return of a run's states to the first one: the index
/// `k` of the first local minimum of the scaled distance `|x_k − x_0|`
/// below 0.2 after it has exceeded 0.5 (each component scaled by its
/// range over the run).
fn first_return(states: &[DVector<f64>]) -> Option<usize> {
    let x0 = states.first()?;
    let dim = x0.len();
    let mut range = vec![0.0f64; dim];
    for x in states {
        for i in 0..dim {
            range[i] = range[i].max((x[i] - x0[i]).abs());
        }
    }
    let big = range.iter().fold(0.0f64, |m, &r| m.max(r));
    if big == 0.0 {
        return None;
    }
    let d: Vec<f64> = states
        .iter()
        .map(|x| {
            (0..dim)
                .filter(|&i| range[i] > 1e-9 * big)
                .map(|i| ((x[i] - x0[i]) / range[i]).abs())
                .fold(0.0, f64::max)
        })
        .collect();
    let mut left = false;
    for k in 1..d.len().saturating_sub(1) {
        if d[k] > 0.5 {
            left = true;
        }
        if left && d[k] < 0.2 && d[k] <= d[k - 1] && d[k] <= d[k + 1] {
            return Some(k);
        }
    }
    None
}

fn search<Mo: NamedDynSystem>(
    model: &Mo,
    setup: &DynRunSetup,
    options: &PeriodicOptions,
    guess: Option<(Vec<f64>, Vec<f64>)>,
) -> Result<PeriodicOrbit, PeriodicError> {
    let n = model.coordinate_count();
    let name = model.name().to_owned();
    let unsupported = |what: &str| PeriodicError::Unsupported {
        model: name.clone(),
        what: what.to_owned(),
    };
    if model.time_dependent() {
        return Err(unsupported(
            "for a time-dependent system (an orbit of a forced system returns after the \
             forcing's period, not at a section of an autonomous flow: not built)",
        ));
    }
    let (_, hessian) = legendre_jet_dyn(model, &setup.q0, &setup.v0);
    if !crate::error::is_regular(hessian) {
        return Err(unsupported(
            "for a degenerate Lagrangian (its initial data are tied by hidden constraints, \
             which the shooting Newton on (q_0, p_0) does not keep)",
        ));
    }
    if let Section::Impact { piece, count } = options.section {
        if piece >= model.boundary_count() {
            return Err(PeriodicError::UnknownSection {
                model: name,
                given: piece.to_string(),
                valid: (0..model.boundary_count())
                    .map(|j| format!("{j} ({})", model.piece_name(j)))
                    .collect(),
            });
        }
        if count == 0 {
            return Err(unsupported(
                "with impact count 0: the orbit closes at the first impact (1) or a later one",
            ));
        }
        if model.constraint_count() > 0 {
            return Err(unsupported(
                "with a section at impacts for a constrained system (the momentum there is \
                 defined up to the constraint reaction; the section map is built for \
                 unconstrained systems): leave out --section to close the orbit after a whole \
                 number of steps",
            ));
        }
    }
    if !(options.tolerance.is_finite() && options.tolerance > 0.0) {
        return Err(unsupported(&format!(
            "with tolerance {} (a finite number > 0 is needed)",
            options.tolerance
        )));
    }
    let flow = Flow {
        model,
        setup,
        n,
        horizon: options.horizon.unwrap_or(setup.t_end),
    };
    let mut x = match &guess {
        Some((q, p)) => {
            if q.len() != n || p.len() != n {
                return Err(unsupported(&format!(
                    "from a guess of {} positions and {} momenta ({n} coordinates)",
                    q.len(),
                    p.len()
                )));
            }
            stack(
                &DVector::from_column_slice(q),
                &DVector::from_column_slice(p),
            )
        }
        None => stack(&setup.q0, &momentum_dyn(model, &setup.q0, &setup.v0)),
    };
    // The section's number of steps, and the guess carried to the section.
    let section = match options.section {
        Section::Impact { .. } => {
            if guess.is_none() {
                x = flow.run(&x, options.section, false, false)?.y;
            }
            options.section
        }
        Section::Steps(Some(0)) => {
            return Err(unsupported("over 0 steps"));
        }
        Section::Steps(Some(steps)) => Section::Steps(Some(steps)),
        Section::Steps(None) => {
            let ret = flow.run(&x, Section::Steps(None), false, true)?;
            let steps = first_return(&ret.states).ok_or(PeriodicError::NoPeriod {
                model: name.clone(),
                horizon: flow.horizon,
            })?;
            Section::Steps(Some(steps))
        }
    };
    let piece = match section {
        Section::Impact { piece, .. } => Some(piece),
        Section::Steps(_) => None,
    };
    let at = |x: &DVector<f64>| -> Result<(DVector<f64>, DMatrix<f64>), PeriodicError> {
        match piece {
            Some(j) => flow.project(x, j),
            None => Ok((x.clone(), DMatrix::identity(2 * n, 2 * n))),
        }
    };
    let scale = |x: &DVector<f64>| x.amax().max(1.0);
    let dim = 2 * n;
    let mut history = Vec::new();
    let mut iterations = 0;
    let (xs, ret, residual) = loop {
        let (xs, proj) = at(&x)?;
        let ret = flow.run(&xs, section, true, false)?;
        let f = &ret.y - &x;
        let residual = (&ret.y - &xs).amax();
        let target = options.tolerance * scale(&xs);
        history.push(residual);
        if !residual.is_finite() {
            return Err(PeriodicError::NotConverged {
                model: name,
                iterations,
                residual,
                tolerance: options.tolerance,
                reason: "; the return map gave a non-finite state".into(),
            });
        }
        // Converged: one more Newton step is tried at once and kept if it
        // lowers the residual (quadratic convergence takes it to
        // round-off).
        let converged = residual <= target;
        if iterations >= options.max_iterations && !converged {
            // Which return map did not close, and how to ask for another.
            let reason = match section {
                Section::Steps(Some(steps)) => format!(
                    "; the return map was the state after {steps} steps ({:.6} s{}): an orbit of another period is asked for with --steps or --period{}",
                    steps as f64 * setup.h,
                    if options.section == Section::Steps(None) {
                        ", the start's first close return"
                    } else {
                        ""
                    },
                    if model.boundary_count() > 0 && model.constraint_count() == 0 {
                        ", one closing at a wall with --section"
                    } else {
                        ""
                    }
                ),
                Section::Impact { piece, count } => format!(
                    "; the return map was the post-impact state at impact {count} with piece {piece}: another is asked for with --section and --impact"
                ),
                Section::Steps(None) => String::new(),
            };
            // A constrained flow that is not the symmetric midpoint scheme
            // drifts in energy: it may have no periodic orbit at all.
            let symmetric = setup.discretization == Discretization::Midpoint
                && setup.constraint == ConstraintDiscretization::Midpoint;
            let reason = if model.constraint_count() > 0 && !symmetric {
                format!(
                    "{reason}; with constraints this scheme ({} map, {} constraint) is not symmetric and its energy drifts, so its discrete flow may have no periodic orbit: the symmetric midpoint scheme (--discretization midpoint --constraint midpoint) keeps them (docs/theory.md §14)",
                    setup.discretization, setup.constraint
                )
            } else {
                reason
            };
            return Err(PeriodicError::NotConverged {
                model: name,
                iterations,
                residual,
                tolerance: options.tolerance,
                reason,
            });
        }
        let df = &ret.jacobian * &proj - DMatrix::identity(dim, dim);
        let svd = df.svd(true, true);
        let cutoff = options.rank_tolerance * svd.singular_values.max();
        let Ok(step) = svd.solve(&f, cutoff) else {
            return Err(PeriodicError::NotConverged {
                model: name,
                iterations,
                residual,
                tolerance: options.tolerance,
                reason: "; the Newton step could not be solved".into(),
            });
        };
        let step = -step;
        // Damped: halve the step until the return exists and the residual
        // drops (at most 12 times); a converged point keeps itself if no
        // step improves it.
        let mut lambda = 1.0;
        let mut accepted = None;
        for _ in 0..12 {
            let trial = &x + &step * lambda;
            if let Ok((ts, _)) = at(&trial)
                && let Ok(r) = flow.run(&ts, section, false, false)
            {
                let res = (&r.y - &ts).amax();
                if res.is_finite() && res < residual {
                    accepted = Some(trial);
                    break;
                }
            }
            lambda *= 0.5;
        }
        iterations += 1;
        match accepted {
            Some(next) => {
                if converged {
                    let (ns, _) = at(&next)?;
                    let r = flow.run(&ns, section, true, false)?;
                    let res = (&r.y - &ns).amax();
                    history.push(res);
                    break (ns, r, res);
                }
                x = next;
            }
            None if converged => break (xs, ret, residual),
            None => {
                return Err(PeriodicError::NotConverged {
                    model: name,
                    iterations,
                    residual,
                    tolerance: options.tolerance,
                    reason: "; no Newton step (halved 12 times) lowered the residual".into(),
                });
            }
        }
    };
    // The flow direction at the fixed point, from the grid orbit (central
    // difference of its states before and after): for the grid map; a
    // state that does not move is an equilibrium.
    let q = xs.rows(0, n).into_owned();
    let p = xs.rows(n, n).into_owned();
    let v = velocity_from_momentum_dyn(model, &q, &p, &setup.v0)
        .map_err(|error| PeriodicError::Run(RunError::InitialState { error }))?;
    let energy = energy_dyn(model, &q, &v);
    let monodromy = ret.jacobian.clone();
    let flow_direction = match section {
        Section::Steps(Some(steps)) => {
            let orbit = flow.run(&xs, Section::Steps(Some(steps)), false, true)?;
            let after = &orbit.states[1];
            let before = &orbit.states[orbit.states.len().saturating_sub(2)];
            let moved = (after - &xs).amax().max((before - &xs).amax());
            if moved <= 1e-10 * scale(&xs) {
                return Err(PeriodicError::Equilibrium {
                    model: name,
                    q: q.as_slice().to_vec(),
                });
            }
            Some((after - before) / (2.0 * setup.h))
        }
        _ => None,
    };
    let context = Context {
        n,
        coordinates: model.coordinates(),
        constraints: model.constraint_count(),
        section_normal: match piece {
            Some(j) => Some(
                boundary_gradient_dyn(model, j, &q)
                    .map_err(|source| flow.failed(0, ImpactError::Geometry { t: 0.0, source }))?
                    .1,
            ),
            None => None,
        },
        energy_gradient: flow.energy_gradient(&q, &v),
        flow_direction,
        stability_tolerance: options.stability_tolerance,
    };
    let (multipliers, reciprocity_defect, max_modulus, stability) = classify(&monodromy, &context);
    Ok(PeriodicOrbit {
        model: name,
        coordinates: model.coordinates(),
        section,
        piece_name: piece.map(|j| model.piece_name(j)),
        q: q.as_slice().to_vec(),
        p: p.as_slice().to_vec(),
        v: v.as_slice().to_vec(),
        energy,
        period: ret.period,
        steps: ret.steps,
        impacts: ret.impacts,
        residual,
        iterations,
        residual_history: history,
        monodromy,
        multipliers,
        reciprocity_defect,
        max_modulus,
        stability,
    })
}

/// What the classification of the multipliers needs.
struct Context {
    n: usize,
    coordinates: Vec<String>,
    constraints: usize,
    /// `∇g` at the fixed point, for a section at impacts.
    section_normal: Option<DVector<f64>>,
    /// `∇H` at the fixed point.
    energy_gradient: DVector<f64>,
    /// The flow's direction at the fixed point (grid map).
    flow_direction: Option<DVector<f64>>,
    stability_tolerance: f64,
}

/// An orthonormal basis of the orthogonal complement of `span(vs)` within
/// `span(basis)` (columns), by Gram–Schmidt twice.
fn complement(basis: &[DVector<f64>], remove: &[DVector<f64>]) -> Vec<DVector<f64>> {
    let mut kept: Vec<DVector<f64>> = Vec::new();
    let mut against: Vec<DVector<f64>> = Vec::new();
    for r in remove {
        let mut v = r.clone();
        for _ in 0..2 {
            for a in &against {
                let c = a.dot(&v);
                v -= a * c;
            }
        }
        let norm = v.norm();
        if norm > 1e-12 {
            against.push(v / norm);
        }
    }
    for b in basis {
        let mut v = b.clone();
        for _ in 0..2 {
            for a in against.iter().chain(&kept) {
                let c = a.dot(&v);
                v -= a * c;
            }
        }
        let norm = v.norm();
        if norm > 1e-8 {
            kept.push(v / norm);
        }
    }
    kept
}

/// A right eigenvector of `m` for the eigenvalue `lambda`, by inverse
/// iteration (complex).
fn eigenvector(m: &DMatrix<f64>, lambda: Complex<f64>) -> DVector<Complex<f64>> {
    let k = m.nrows();
    let shift = lambda + Complex::new(1e-10 * (1.0 + lambda.norm()), 1e-11);
    let a = DMatrix::from_fn(k, k, |i, j| {
        Complex::new(m[(i, j)], 0.0)
            - if i == j {
                shift
            } else {
                Complex::new(0.0, 0.0)
            }
    });
    let lu = a.lu();
    let mut v = DVector::from_fn(k, |i, _| Complex::new(1.0 + 0.1 * i as f64, 0.3));
    for _ in 0..3 {
        match lu.solve(&v) {
            Some(w) => {
                let norm = w.norm();
                if norm > 0.0 && norm.is_finite() {
                    v = w / Complex::new(norm, 0.0);
                }
            }
            None => break,
        }
    }
    v
}

/// `|⟨u, v⟩| / (|u| |v|)` for a real `u` and a complex `v`.
fn alignment(u: &DVector<f64>, v: &DVector<Complex<f64>>) -> f64 {
    let dot: Complex<f64> = u
        .iter()
        .zip(v.iter())
        .map(|(a, b)| b * *a)
        .fold(Complex::new(0.0, 0.0), |s, x| s + x);
    let (nu, nv) = (u.norm(), v.norm());
    if nu == 0.0 || nv == 0.0 {
        0.0
    } else {
        dot.norm() / (nu * nv)
    }
}

/// The multipliers of `m`, classified; the reciprocity defect of the
/// nontrivial ones, their largest modulus and the verdict.
fn classify(m: &DMatrix<f64>, c: &Context) -> (Vec<Multiplier>, f64, f64, Stability) {
    let n = c.n;
    let dim = 2 * n;
    let unit = |i: usize| {
        let mut e = DVector::zeros(dim);
        e[i] = 1.0;
        e
    };
    let norm = m.amax().max(1.0);
    let exact = 1e-10 * norm;
    let mut out = Vec::new();
    let push = |out: &mut Vec<Multiplier>, z: Complex<f64>, kind: MultiplierKind| {
        out.push(Multiplier {
            re: z.re,
            im: z.im,
            modulus: z.norm(),
            kind,
        });
    };
    // Translation symmetries: column q_i of M is e_{q_i} and row p_i is
    // e_{p_i} (and the wall does not depend on q_i): det(M − λ) has the
    // factor (1 − λ)², and M with rows and columns q_i, p_i removed the
    // rest.
    let mut symmetric = Vec::new();
    for i in 0..n {
        let col = (m.column(i) - unit(i)).amax();
        let row = (m.row(n + i).transpose() - unit(n + i)).amax();
        let on_wall = c
            .section_normal
            .as_ref()
            .is_none_or(|g| g[i].abs() <= 1e-14 * g.amax());
        if col <= exact && row <= exact && on_wall {
            symmetric.push(i);
            for _ in 0..2 {
                push(
                    &mut out,
                    Complex::new(1.0, 0.0),
                    MultiplierKind::Symmetry {
                        coordinate: c.coordinates[i].clone(),
                    },
                );
            }
        }
    }
    // The reduced space: the section's tangent space (q-part ⟂ ∇g) less
    // the symmetric pairs.
    let mut basis: Vec<DVector<f64>> = Vec::new();
    let mut remove: Vec<DVector<f64>> = Vec::new();
    for i in 0..dim {
        let sym = symmetric.iter().any(|&s| s == i || s + n == i);
        if !sym {
            basis.push(unit(i));
        }
    }
    if let Some(g) = &c.section_normal {
        let mut l = DVector::zeros(dim);
        l.rows_mut(0, n).copy_from(g);
        remove.push(l);
        push(&mut out, Complex::new(0.0, 0.0), MultiplierKind::Section);
    }
    let b_vecs = complement(&basis, &remove);
    let k = b_vecs.len();
    let b = DMatrix::from_fn(dim, k, |i, j| b_vecs[j][i]);
    let reduced = b.transpose() * m * &b;
    let eig: Vec<Complex<f64>> = if k == 0 {
        Vec::new()
    } else {
        reduced.complex_eigenvalues().iter().copied().collect()
    };
    let vectors: Vec<DVector<Complex<f64>>> = eig
        .iter()
        .map(|&l| {
            let w = eigenvector(&reduced, l);
            let bc = b.map(|x| Complex::new(x, 0.0));
            bc * w
        })
        .collect();
    let mut kinds: Vec<Option<MultiplierKind>> = vec![None; eig.len()];
    // Constraint zeros (grid map of a constrained system): the m smallest.
    if c.section_normal.is_none() && c.constraints > 0 {
        let mut order: Vec<usize> = (0..eig.len()).collect();
        order.sort_by(|&a, &b| eig[a].norm().total_cmp(&eig[b].norm()));
        for &i in order.iter().take(c.constraints) {
            kinds[i] = Some(MultiplierKind::Constraint);
        }
    }
    let free = |kinds: &[Option<MultiplierKind>]| -> Vec<usize> {
        (0..kinds.len()).filter(|&i| kinds[i].is_none()).collect()
    };
    if c.section_normal.is_some() {
        // The energy: the eigenvector along which H changes most.
        if let Some(&best) = free(&kinds).iter().max_by(|&&a, &&b| {
            alignment(&c.energy_gradient, &vectors[a])
                .total_cmp(&alignment(&c.energy_gradient, &vectors[b]))
        }) {
            kinds[best] = Some(MultiplierKind::Energy);
        }
    } else if let Some(f) = &c.flow_direction {
        // The time shift: the eigenvector closest to the flow direction,
        // and its reciprocal partner (the energy).
        let candidates = free(&kinds);
        if let Some(&best) = candidates
            .iter()
            .max_by(|&&a, &&b| alignment(f, &vectors[a]).total_cmp(&alignment(f, &vectors[b])))
        {
            kinds[best] = Some(MultiplierKind::TimeShiftEnergy);
            let inv = Complex::new(1.0, 0.0) / eig[best];
            if let Some(&partner) = free(&kinds)
                .iter()
                .min_by(|&&a, &&b| (eig[a] - inv).norm().total_cmp(&(eig[b] - inv).norm()))
            {
                kinds[partner] = Some(MultiplierKind::TimeShiftEnergy);
            }
        }
    }
    let mut nontrivial: Vec<Complex<f64>> = Vec::new();
    let mut trivial_rest = Vec::new();
    for (i, z) in eig.iter().enumerate() {
        match kinds[i].take() {
            Some(kind) => trivial_rest.push((*z, kind)),
            None => nontrivial.push(*z),
        }
    }
    for (z, kind) in trivial_rest {
        push(&mut out, z, kind);
    }
    // Nontrivial: largest modulus first, then by imaginary part.
    nontrivial.sort_by(|a, b| b.norm().total_cmp(&a.norm()).then(b.im.total_cmp(&a.im)));
    let mut defect: f64 = 0.0;
    let mut paired = vec![false; nontrivial.len()];
    for i in 0..nontrivial.len() {
        if paired[i] {
            continue;
        }
        paired[i] = true;
        let best = (0..nontrivial.len())
            .filter(|&j| !paired[j])
            .min_by(|&a, &b| {
                (nontrivial[i] * nontrivial[a] - 1.0)
                    .norm()
                    .total_cmp(&(nontrivial[i] * nontrivial[b] - 1.0).norm())
            });
        if let Some(j) = best {
            paired[j] = true;
            defect = defect.max((nontrivial[i] * nontrivial[j] - 1.0).norm());
        }
    }
    let max_modulus = nontrivial.iter().fold(0.0f64, |m, z| m.max(z.norm()));
    let stability = if nontrivial.is_empty() {
        Stability::Neutral
    } else if max_modulus <= 1.0 + c.stability_tolerance {
        Stability::Stable
    } else {
        Stability::Unstable
    };
    for z in nontrivial {
        push(&mut out, z, MultiplierKind::Nontrivial);
    }
    (out, defect, max_modulus, stability)
}

/// One point of a branch of periodic orbits.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchPoint {
    /// The parameter's value.
    pub value: f64,
    /// The orbit there.
    pub orbit: PeriodicOrbit,
}

/// Where the verdict changes between two neighbouring points of a branch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StabilityChange {
    /// The parameter value of the last point before.
    pub from_value: f64,
    /// The parameter value of the first point after.
    pub to_value: f64,
    /// The verdict before.
    pub from: Stability,
    /// The verdict after.
    pub to: Stability,
    /// The parameter where the stability index crosses `1 + stability
    /// tolerance`, by linear interpolation between the two points: for
    /// multipliers in reciprocal pairs the largest `|Re(λ + 1/λ)| / 2`
    /// (the half-trace of a pair: at most 1 on the unit circle, smooth
    /// through both kinds of change), otherwise the largest modulus.
    pub estimate: f64,
}

/// A branch of periodic orbits over a parameter ([`continue_orbit`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Branch {
    /// The parameter continued in.
    pub parameter: String,
    /// The orbits found, in the order of the values.
    pub points: Vec<BranchPoint>,
    /// Where the stability changes.
    pub changes: Vec<StabilityChange>,
    /// Why the continuation stopped before the last value, if it did: the
    /// value and the error.
    pub stopped: Option<(f64, PeriodicError)>,
}

/// `n` values from `a` to `b` (both included; `a` alone for `n = 1`).
pub fn parameter_values(a: f64, b: f64, n: usize) -> Vec<f64> {
    match n {
        0 => Vec::new(),
        1 => vec![a],
        _ => (0..n)
            .map(|i| {
                if i + 1 == n {
                    b
                } else {
                    a + (b - a) * i as f64 / (n - 1) as f64
                }
            })
            .collect(),
    }
}

/// Natural-parameter continuation of a periodic orbit of `scenario` in the
/// model parameter `parameter` over `values`: the orbit at the first value
/// from the scenario's initial data (or `guess`), each next one from the
/// previous orbit extrapolated linearly through the last two (the previous
/// orbit itself if that fails). Stops at the first value where no orbit is
/// found, keeping the branch so far and the error.
///
/// # Errors
/// [`PeriodicError`] when `parameter` is not a parameter of the model or
/// the first orbit is not found.
pub fn continue_orbit(
    scenario: &Scenario,
    parameter: &str,
    values: &[f64],
    options: &PeriodicOptions,
    guess: Option<(&[f64], &[f64])>,
) -> Result<Branch, PeriodicError> {
    let parameter = parameter.trim();
    let run_keys = [
        "h",
        "t_end",
        "tol",
        "discretization",
        "constraint",
        "q",
        "v",
    ];
    if run_keys.contains(&parameter) || !scenario.keys().iter().any(|k| k == parameter) {
        let valid: Vec<String> = scenario
            .keys()
            .into_iter()
            .filter(|k| !run_keys.contains(&k.as_str()))
            .collect();
        return Err(PeriodicError::Unsupported {
            model: scenario.model.clone(),
            what: format!(
                "along '{parameter}': continuation is in a model parameter (valid: {})",
                valid.join(", ")
            ),
        });
    }
    continue_with(
        parameter,
        values,
        options,
        guess,
        |value, options, guess| {
            let mut sc = scenario.clone();
            sc.set(parameter, &format!("{value:e}"))
                .map_err(|e| PeriodicError::Run(RunError::Model(e)))?;
            periodic_orbit(&sc, options, guess)
        },
    )
}

/// Natural-parameter continuation over `values` of `parameter`, whatever
/// holds the model: `orbit_at(value, options, guess)` finds the orbit at one
/// value (see [`periodic_orbit`]) from `guess` (`None`: the run's own initial
/// data). Each orbit is searched from the linear prediction of the last
/// two, else the last one; the branch stops at the first value without an
/// orbit (an error at the first value is returned). [`continue_orbit`] is
/// this with a scenario's parameter set by [`Scenario::set`]; a system of
/// your own crate sets it on the model value and calls
/// [`periodic_orbit_system`].
///
/// # Errors
/// The first value's [`PeriodicError`].
pub fn continue_with(
    parameter: &str,
    values: &[f64],
    options: &PeriodicOptions,
    guess: Option<(&[f64], &[f64])>,
    mut orbit_at: impl FnMut(
        f64,
        &PeriodicOptions,
        Option<(&[f64], &[f64])>,
    ) -> Result<PeriodicOrbit, PeriodicError>,
) -> Result<Branch, PeriodicError> {
    let mut points: Vec<BranchPoint> = Vec::new();
    let mut stopped = None;
    // The first orbit's return (its number of steps, once found) for the
    // whole branch.
    let mut options = options.clone();
    for (i, &value) in values.iter().enumerate() {
        let previous = points.last().map(|p| stack_vec(&p.orbit.q, &p.orbit.p));
        let predicted = match points.as_slice() {
            [.., a, b] if (b.value - a.value) != 0.0 => {
                let xa = stack_vec(&a.orbit.q, &a.orbit.p);
                let xb = stack_vec(&b.orbit.q, &b.orbit.p);
                let s = (value - b.value) / (b.value - a.value);
                Some(&xb + (&xb - &xa) * s)
            }
            _ => None,
        };
        let n = scenario_dim(&points);
        let mut attempt = |x: Option<&DVector<f64>>| {
            let g = x.map(|x| (x.rows(0, n).into_owned(), x.rows(n, n).into_owned()));
            let g = g.as_ref().map(|(q, p)| (q.as_slice(), p.as_slice()));
            orbit_at(value, &options, if x.is_some() { g } else { guess })
        };
        let result = match (&predicted, &previous) {
            (Some(pr), Some(prev)) => attempt(Some(pr)).or_else(|_| attempt(Some(prev))),
            (None, Some(prev)) => attempt(Some(prev)),
            _ => attempt(None),
        };
        match result {
            Ok(orbit) => {
                options.section = orbit.section;
                points.push(BranchPoint { value, orbit });
            }
            Err(e) if i == 0 => return Err(e),
            Err(e) => {
                stopped = Some((value, e));
                break;
            }
        }
    }
    let changes = points
        .windows(2)
        .filter(|w| w[0].orbit.stability != w[1].orbit.stability)
        .map(|w| {
            let (a, b) = (&w[0], &w[1]);
            let threshold = 1.0 + options.stability_tolerance;
            let (ma, mb) = (stability_index(&a.orbit), stability_index(&b.orbit));
            let estimate = if (mb - ma).abs() > 0.0 {
                let s = ((threshold - ma) / (mb - ma)).clamp(0.0, 1.0);
                a.value + s * (b.value - a.value)
            } else {
                0.5 * (a.value + b.value)
            };
            StabilityChange {
                from_value: a.value,
                to_value: b.value,
                from: a.orbit.stability,
                to: b.orbit.stability,
                estimate,
            }
        })
        .collect();
    Ok(Branch {
        parameter: parameter.to_owned(),
        points,
        changes,
        stopped,
    })
}

/// The stability index of [`StabilityChange::estimate`].
fn stability_index(o: &PeriodicOrbit) -> f64 {
    let nontrivial = o.multipliers.iter().filter(|m| !m.kind.is_trivial());
    if o.reciprocity_defect < 1e-6 {
        nontrivial
            .filter(|m| m.modulus > 0.0)
            .map(|m| {
                let z = Complex::new(m.re, m.im);
                (z + Complex::new(1.0, 0.0) / z).re.abs() / 2.0
            })
            .fold(0.0, f64::max)
    } else {
        o.max_modulus
    }
}

fn stack_vec(q: &[f64], p: &[f64]) -> DVector<f64> {
    stack(
        &DVector::from_column_slice(q),
        &DVector::from_column_slice(p),
    )
}

fn scenario_dim(points: &[BranchPoint]) -> usize {
    points.last().map_or(0, |p| p.orbit.q.len())
}

impl PeriodicOrbit {
    /// The orbit as `diracvi periodic --summary json` prints it (and
    /// Python's `periodic_orbit` returns it): model, section, fixed point,
    /// period, residual, multipliers, verdict, monodromy.
    pub fn to_json(&self, h: f64) -> serde_json::Value {
        let section = match self.section {
            Section::Impact { piece, count } => serde_json::json!({
                "kind": "impact",
                "piece": piece,
                "piece_name": self.piece_name,
                "count": count,
            }),
            Section::Steps(steps) => serde_json::json!({"kind": "steps", "steps": steps}),
        };
        let names: Vec<String> = ["q", "p"]
            .iter()
            .flat_map(|k| self.coordinates.iter().map(move |c| format!("{k}:{c}")))
            .collect();
        let matrix: Vec<Vec<f64>> = self
            .monodromy
            .row_iter()
            .map(|r| r.iter().copied().collect())
            .collect();
        serde_json::json!({
            "model": self.model,
            "coordinates": self.coordinates,
            "section": section,
            "h": h,
            "period": self.period,
            "steps": self.steps,
            "impacts": self.impacts,
            "energy": self.energy,
            "fixed_point": {"q": self.q, "p": self.p, "v": self.v},
            "residual": self.residual,
            "iterations": self.iterations,
            "residual_history": self.residual_history,
            "multipliers": self.multipliers,
            "reciprocity_defect": self.reciprocity_defect,
            "max_modulus": self.max_modulus,
            "stability": self.stability,
            "monodromy": {"rows": names, "cols": names, "matrix": matrix},
        })
    }
}

impl Branch {
    /// The branch as JSON: the parameter, every point's value and orbit
    /// ([`PeriodicOrbit::to_json`]), the stability changes and why it
    /// stopped early, if it did.
    pub fn to_json(&self, h: f64) -> serde_json::Value {
        let points: Vec<serde_json::Value> = self
            .points
            .iter()
            .map(|p| serde_json::json!({"value": p.value, "orbit": p.orbit.to_json(h)}))
            .collect();
        serde_json::json!({
            "parameter": self.parameter,
            "points": points,
            "stability_changes": self.changes,
            "stopped": self.stopped.as_ref().map(|(value, e)| {
                serde_json::json!({"value": value, "error": e.to_string()})
            }),
        })
    }

    /// The branch table as CSV: one row per point — the parameter's
    /// value, period, steps, impacts, energy, residual, iterations,
    /// stability, largest nontrivial modulus, `q_<c>` and `p_<c>` of the
    /// fixed point, then each multiplier `m<i>_re`, `m<i>_im`, `m<i>_abs`,
    /// `m<i>_kind` in the order of [`PeriodicOrbit::multipliers`] (trivial
    /// first).
    pub fn to_csv(&self) -> String {
        let Some(first) = self.points.first() else {
            return format!("{}\n", self.parameter);
        };
        let coords = &first.orbit.coordinates;
        let mut header: Vec<String> = [
            self.parameter.as_str(),
            "period",
            "steps",
            "impacts",
            "energy",
            "residual",
            "iterations",
            "stability",
            "max_modulus",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        header.extend(coords.iter().map(|c| format!("q_{c}")));
        header.extend(coords.iter().map(|c| format!("p_{c}")));
        for i in 0..first.orbit.multipliers.len() {
            for part in ["re", "im", "abs", "kind"] {
                header.push(format!("m{i}_{part}"));
            }
        }
        let mut out = header.join(",");
        out.push('\n');
        for p in &self.points {
            let o = &p.orbit;
            let mut row: Vec<String> = vec![
                format!("{:e}", p.value),
                format!("{:e}", o.period),
                o.steps.to_string(),
                o.impacts.to_string(),
                format!("{:e}", o.energy),
                format!("{:e}", o.residual),
                o.iterations.to_string(),
                o.stability.to_string(),
                format!("{:e}", o.max_modulus),
            ];
            row.extend(o.q.iter().chain(&o.p).map(|x| format!("{x:e}")));
            for m in &o.multipliers {
                row.push(format!("{:e}", m.re));
                row.push(format!("{:e}", m.im));
                row.push(format!("{:e}", m.modulus));
                row.push(m.kind.label().replace(',', ";"));
            }
            out.push_str(&row.join(","));
            out.push('\n');
        }
        out
    }
}
