//! Errors of a run: bad input, or a numerical failure during the integration.

use diracvi_discrete_dirac::Located;
use diracvi_geometry::GeometryError;
use diracvi_impact::ImpactError;
use diracvi_models::ModelError;
use thiserror::Error;

/// Why a run could not be done or did not finish.
///
/// Everything but [`Integration`](RunError::Integration) is an input error
/// (found before the first step); `Integration` is a failure of the numerics
/// during the run (a step that does not converge, too many impacts in one
/// step, …), and names the step and time.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RunError {
    /// The scenario is invalid: unknown model, bad parameter, bad initial
    /// data, non-positive step, …
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The initial momentum `p_0 = ∂L/∂v(q(0), v(0))` could not be computed.
    #[error("initial state: {error}")]
    InitialState {
        /// What failed.
        error: GeometryError,
    },
    /// The Hamiltonian stepper was asked for a model without a Hamiltonian
    /// (a degenerate Lagrangian).
    #[error(
        "model '{model}' has no Hamiltonian (degenerate Lagrangian): the Hamiltonian stepper is unavailable, use the Lagrange–Dirac stepper"
    )]
    NoHamiltonian {
        /// The model's name.
        model: String,
    },
    /// The Hamiltonian stepper was asked for a model whose Lagrangian is
    /// regular (`∂²L/∂v²` invertible at the initial data) but that gives no
    /// Hamiltonian (a model file without `model.hamiltonian`).
    #[error(
        "model '{model}' has a regular Lagrangian but no Hamiltonian was given: the Hamiltonian stepper needs H(q, p) (for a model file, add model.hamiltonian, the Legendre transform of L), or use the Lagrange–Dirac stepper"
    )]
    HamiltonianNotGiven {
        /// The model's name.
        model: String,
    },
    /// `t_end / h` asks for more steps than [`MAX_STEPS`](crate::MAX_STEPS)
    /// (or is not finite).
    #[error("t_end / h = {t_end} / {h} asks for {steps:e} steps; at most {max:e} are allowed")]
    TooManySteps {
        /// The end time.
        t_end: f64,
        /// The step.
        h: f64,
        /// `round(t_end / h)`.
        steps: f64,
        /// The bound.
        max: f64,
    },
    /// `--tol` given a value that is not a finite positive number.
    #[error("--tol must be a finite number > 0, got {tol}")]
    InvalidTolerance {
        /// The tolerance given.
        tol: f64,
    },
    /// No step could be chosen for a tolerance.
    #[error("--tol {tol:e}: no step could be chosen: {reason}")]
    ToleranceUnreachable {
        /// The tolerance asked for.
        tol: f64,
        /// Why.
        reason: String,
    },
    /// An explicit number of steps above [`MAX_STEPS`](crate::MAX_STEPS).
    #[error("{steps} steps asked for; at most {max:e} are allowed")]
    StepsOverLimit {
        /// The number of steps asked for.
        steps: usize,
        /// The bound.
        max: f64,
    },
    /// The model's declared symmetry does not give a reduction.
    #[error("{model}: cannot reduce: {error}")]
    Reduction {
        /// The model's name.
        model: String,
        /// What the symmetry check or the reduction found.
        error: diracvi_geometry::SymmetryError,
    },
    /// A coordinate a model file declares cyclic is not: shifting it
    /// changes the Lagrangian, a constraint form or a boundary piece.
    #[error("{model}: cannot reduce: `{coordinate}` is not a cyclic coordinate: {error}")]
    NotCyclic {
        /// The model's name.
        model: String,
        /// The coordinate's name.
        coordinate: String,
        /// What the symmetry check found (boxed: results stay small).
        error: Box<diracvi_geometry::SymmetryError>,
    },
    /// A reduced run was asked for with a plan it does not support.
    #[error("{model}: reduced run: {reason}")]
    ReductionUnsupported {
        /// The model's name.
        model: String,
        /// What is not supported.
        reason: &'static str,
    },
    /// A higher order asked of a stepper that is not composed
    /// (docs/theory.md §9).
    #[error(
        "order {order} is not available with the {stepper} stepper (orders: 2 with either stepper; 4 and 6 with the lagrange stepper)"
    )]
    UnsupportedOrder {
        /// The order asked for.
        order: crate::Order,
        /// The stepper's name.
        stepper: &'static str,
    },
    /// Order 4 or 6 asked of a Lagrangian that is degenerate on the
    /// constraint distribution at the start: the composed methods start from
    /// the velocity of the momentum on `ker A(q0)` (docs/theory.md §9.3),
    /// which hidden constraints leave undetermined.
    #[error(
        "{model}: order {order} is not available: the Lagrangian is degenerate on the constraint distribution at the start (∂²L/∂v² is singular on ker A(q0): hidden constraints, e.g. a loop of capacitors), and the composed methods start from the velocity of the momentum there (docs/theory.md §9.3); order 2 runs degenerate Lagrangians"
    )]
    DegenerateComposition {
        /// The model's name.
        model: String,
        /// The order asked for.
        order: crate::Order,
    },
    /// A run of a time-dependent system (a model file's forces or drives,
    /// a circuit's sources) asked for something that needs an autonomous
    /// Lagrangian (docs/theory.md §8.8).
    #[error(
        "{model}: not available for a time-dependent system (forces, drives or sources): {what}"
    )]
    TimeDependentUnsupported {
        /// The model's name.
        model: String,
        /// What was asked for and why it is refused.
        what: &'static str,
    },
    /// A circuit run was asked for with something circuits do not have
    /// (a symmetry, derivatives, composed steps through a capacitor loop).
    #[error("{model}: not available for circuits: {what}")]
    CircuitUnsupported {
        /// The circuit's name.
        model: String,
        /// What was asked for and why it is refused.
        what: &'static str,
    },
    /// `--jacobian` was asked for with a method or model whose tangent map
    /// is not available (docs/theory.md §12).
    #[error("{model}: --jacobian is not available {what}")]
    JacobianUnsupported {
        /// The model's name.
        model: String,
        /// What was asked for and why it is refused.
        what: String,
    },
    /// `--sensitivity` was asked for with a method or model whose parameter
    /// derivatives are not available (docs/theory.md §12.4): a catalogued
    /// model (its parameters are compiled-in numbers; `what` names its
    /// model file where the repository ships one), or a method without a
    /// tangent map.
    #[error("{model}: --sensitivity is not available {what}")]
    SensitivityUnsupported {
        /// The model's name.
        model: String,
        /// What was asked for and why it is refused.
        what: String,
    },
    /// `--sensitivity` named a parameter the model does not have.
    #[error("{model}: --sensitivity: no parameter `{name}`; the model's parameters are: {}", valid.join(", "))]
    UnknownSensitivityParameter {
        /// The model's name.
        model: String,
        /// The name given.
        name: String,
        /// The model's parameters.
        valid: Vec<String>,
    },
    /// A circuit's initial charges violate Kirchhoff's voltage law around
    /// a loop of capacitors and voltage sources (a hidden constraint of
    /// the degenerate Lagrangian, docs/theory.md §8.2), so its first step
    /// has no solution.
    #[error(
        "{model}: the initial charges violate Kirchhoff's voltage law around a loop of capacitors and voltage sources: {loops}; give the capacitors on it IC= voltages that satisfy the loop (no DC operating point is computed)"
    )]
    InconsistentLoop {
        /// The circuit's name.
        model: String,
        /// The violated loops: their branches' voltages along the loop and
        /// the sum.
        loops: String,
    },
    /// The initial data of a system with algebraic variables violate one
    /// of its hidden constraints (docs/theory.md §3.9), so no solution
    /// starts there: [`execute`](crate::execute) checks the start of every
    /// run (docs/theory.md §3.9, "Consistent initial data").
    #[error(
        "{model}: the initial data violate a hidden constraint by {residual:e} (relative to the momenta): the Lagrangian is degenerate on the constraint distribution, its algebraic variables are fixed by the other coordinates, and no solution starts here; project the initial data onto the consistent set"
    )]
    InconsistentStart {
        /// The model's name.
        model: String,
        /// The violation, relative to the scale of the step equations.
        residual: f64,
    },
    /// A step failed during the integration.
    #[error("{model}: {error}")]
    Integration {
        /// The model's name.
        model: String,
        /// What failed, located at its step (the error names its time;
        /// [`ImpactError::Step`] for a failed smooth step).
        error: Located<ImpactError>,
    },
}

impl RunError {
    /// Whether this is a failure of the numerics during the integration (as
    /// opposed to an input error).
    pub fn is_numerical(&self) -> bool {
        matches!(self, RunError::Integration { .. })
    }
}

/// Whether a velocity Hessian `∂²L/∂v²` is invertible: finite, with its
/// smallest singular value above `1e-10` of its largest.
pub(crate) fn is_regular(hessian: nalgebra::DMatrix<f64>) -> bool {
    hessian.iter().all(|x| x.is_finite()) && {
        let s = hessian.singular_values();
        let (largest, smallest) = (s.max(), s.min());
        largest > 0.0 && smallest > 1e-10 * largest
    }
}

/// Whether `∂²L/∂v²` is invertible on the constraint distribution
/// `ker A(q)`: `Zᵀ H Z` regular (as [`is_regular`]) for an orthonormal basis
/// `Z` of the null space of `forms` (`A(q)`, `m × n`). When it is not, some
/// admissible velocity carries no kinetic energy and the coordinate along it
/// is an algebraic variable (the charges' split around a loop of
/// capacitors, docs/theory.md §3.9).
pub(crate) fn is_regular_on(
    hessian: nalgebra::DMatrix<f64>,
    forms: &nalgebra::DMatrix<f64>,
) -> bool {
    if forms.nrows() == 0 || !forms.iter().all(|x| x.is_finite()) {
        return is_regular(hessian);
    }
    let eigen = (forms.transpose() * forms).symmetric_eigen();
    let largest = eigen.eigenvalues.amax();
    let free: Vec<_> = (0..forms.ncols())
        .filter(|&i| eigen.eigenvalues[i] <= 1e-12 * largest)
        .map(|i| eigen.eigenvectors.column(i).into_owned())
        .collect();
    if free.is_empty() {
        // No admissible velocity: nothing moves, nothing is algebraic.
        return true;
    }
    let z = nalgebra::DMatrix::from_columns(&free);
    is_regular(z.transpose() * hessian * z)
}

/// `(is_regular, is_regular_on)` of `hessian`: whether `∂²L/∂v²` is
/// invertible on the whole tangent space, and on `ker A(q)` (`forms`).
pub(crate) fn regularity(
    hessian: nalgebra::DMatrix<f64>,
    forms: &nalgebra::DMatrix<f64>,
) -> (bool, bool) {
    (is_regular(hessian.clone()), is_regular_on(hessian, forms))
}

/// `e` of a run of `plan`, with the start of a composed method that found
/// no velocity for the initial momentum (the constrained Legendre map not
/// invertible at the first step: a Lagrangian degenerate on `ker A(q0)`)
/// reported as [`RunError::DegenerateComposition`], an input error.
pub(crate) fn composed_start(e: RunError, plan: &crate::RunPlan) -> RunError {
    use diracvi_discrete_dirac::StepError;
    use diracvi_geometry::GeometryError;
    let composed = plan.order.is_composed() && plan.stepper == crate::Stepper::Lagrange;
    let at_start = |e: &Located<ImpactError>| {
        e.step == 0
            && matches!(
                e.error,
                ImpactError::Geometry {
                    source: GeometryError::LegendreNotInvertible { .. },
                    ..
                } | ImpactError::Step(StepError::Geometry {
                    source: GeometryError::LegendreNotInvertible { .. },
                    ..
                })
            )
    };
    match e {
        RunError::Integration { model, error } if composed && at_start(&error) => {
            RunError::DegenerateComposition {
                model,
                order: plan.order,
            }
        }
        e => e,
    }
}

/// The error for a Hamiltonian run of a model without a Hamiltonian:
/// [`RunError::HamiltonianNotGiven`] for a regular Lagrangian,
/// [`RunError::NoHamiltonian`] (a degenerate one) otherwise.
pub(crate) fn no_hamiltonian(model: &str, regular: bool) -> RunError {
    let model = model.to_owned();
    if regular {
        RunError::HamiltonianNotGiven { model }
    } else {
        RunError::NoHamiltonian { model }
    }
}
