//! Running any model on the run-time-sized core (docs/theory.md §11): the
//! named [`DynSystem`] a visitor receives, its run setup, and the visitor.
//!
//! [`Scenario::visit_dyn`](crate::Scenario::visit_dyn) hands a
//! [`DynModelVisitor`] a [`FileModel`](crate::FileModel) of any size for a
//! scenario read from a model file, and a catalogued model wrapped in
//! [`Fixed`] otherwise, so one visitor — one instantiation of the
//! integrators per model type — runs both.

use crate::{ModelError, NamedSystem};
use diracvi_geometry::dynamic::{DynSystem, Erased, ErasedSystem, Fixed, check_initial_dyn};
use diracvi_geometry::{ConstraintDiscretization, Discretization};
use nalgebra::{DVector, SVector};

/// A [`DynSystem`] with a name, coordinate names and boundary piece names
/// (the run-time-sized counterpart of [`NamedSystem`]).
pub trait NamedDynSystem: DynSystem + Clone + Send + Sync {
    /// The model's name (registry name or the file's `model.name`).
    fn name(&self) -> &str;
    /// One line describing the system.
    fn description(&self) -> &str;
    /// The names of the `n` coordinates, in order.
    fn coordinates(&self) -> Vec<String>;
    /// A readable description of boundary piece `j`.
    fn piece_name(&self, j: usize) -> String;
    /// A readable description of constraint row `a` of `A(q)` (for
    /// messages); the default is `row a`.
    fn constraint_name(&self, a: usize) -> String {
        format!("row {a}")
    }
    /// The names of the first integrals runs report in their summary
    /// ([`NamedSystem::invariant_names`]); none by default.
    fn invariant_names(&self) -> Vec<String> {
        Vec::new()
    }
    /// The first integrals of [`invariant_names`](Self::invariant_names) at
    /// the state `(q, p)` (`n` entries each), written to `out` (one entry
    /// per name; `NaN` where one cannot be evaluated).
    fn invariants(&self, _q: &[f64], _p: &[f64], _out: &mut [f64]) {}
    /// How a run's data move when parameter `name` changes on its own
    /// (docs/theory.md §12.4), for the sensitivities of a run: the change of
    /// every parameter `θ` ([`DynSystem::parameter_values`] order) and of
    /// the initial data `q(0)`, `v(0)` (the run's, `q0`, `v0`) per unit
    /// change of `name`.
    ///
    /// The default: `name` among [`DynSystem::parameter_names`] moves alone
    /// and the initial data do not move. A model file overrides it
    /// (parameters written as expressions of others follow them, and so do
    /// initial data written as expressions or solved from the constraints).
    ///
    /// # Errors
    /// [`ParameterSeedError::NotDifferentiable`] for a system without
    /// parameters it can be differentiated in (the default for
    /// [`Fixed`]: the catalogue's parameters are compiled-in numbers);
    /// [`ParameterSeedError::Unknown`] for a name the system does not have.
    fn parameter_seed(
        &self,
        name: &str,
        q0: &DVector<f64>,
        v0: &DVector<f64>,
    ) -> Result<ParameterSeed, ParameterSeedError> {
        if self.parameter_count() == 0 || self.parameter_names().len() != self.parameter_count() {
            return Err(ParameterSeedError::NotDifferentiable);
        }
        let (_, direction) = unit_direction(&self.parameter_names(), name)?;
        Ok(ParameterSeed {
            direction,
            q0: vec![0.0; q0.len()],
            v0: vec![0.0; v0.len()],
        })
    }
}

/// The index of parameter `name` among `names` and the unit direction
/// along it; [`ParameterSeedError::Unknown`] listing `names` otherwise.
fn unit_direction(names: &[String], name: &str) -> Result<(usize, Vec<f64>), ParameterSeedError> {
    let k = names
        .iter()
        .position(|n| n == name)
        .ok_or_else(|| ParameterSeedError::Unknown {
            valid: names.to_vec(),
        })?;
    let mut direction = vec![0.0; names.len()];
    direction[k] = 1.0;
    Ok((k, direction))
}

/// A [`NamedDynSystem`] as a trait object: an [`ErasedSystem`] with the
/// names. Implemented for every [`NamedDynSystem`].
pub trait ErasedNamed: ErasedSystem {
    /// [`NamedDynSystem::name`].
    fn erased_name(&self) -> &str;
    /// [`NamedDynSystem::description`].
    fn erased_description(&self) -> &str;
    /// [`NamedDynSystem::coordinates`].
    fn erased_coordinates(&self) -> Vec<String>;
    /// [`NamedDynSystem::piece_name`].
    fn erased_piece_name(&self, j: usize) -> String;
    /// [`NamedDynSystem::constraint_name`].
    fn erased_constraint_name(&self, a: usize) -> String;
    /// [`NamedDynSystem::invariant_names`].
    fn erased_invariant_names(&self) -> Vec<String>;
    /// [`NamedDynSystem::invariants`].
    fn erased_invariants(&self, q: &[f64], p: &[f64], out: &mut [f64]);
    /// [`NamedDynSystem::parameter_seed`].
    ///
    /// # Errors
    /// As [`NamedDynSystem::parameter_seed`].
    fn erased_parameter_seed(
        &self,
        name: &str,
        q0: &DVector<f64>,
        v0: &DVector<f64>,
    ) -> Result<ParameterSeed, ParameterSeedError>;
}

impl<T: NamedDynSystem> ErasedNamed for T {
    fn erased_name(&self) -> &str {
        self.name()
    }
    fn erased_description(&self) -> &str {
        self.description()
    }
    fn erased_coordinates(&self) -> Vec<String> {
        self.coordinates()
    }
    fn erased_piece_name(&self, j: usize) -> String {
        self.piece_name(j)
    }
    fn erased_constraint_name(&self, a: usize) -> String {
        self.constraint_name(a)
    }
    fn erased_invariant_names(&self) -> Vec<String> {
        self.invariant_names()
    }
    fn erased_invariants(&self, q: &[f64], p: &[f64], out: &mut [f64]) {
        self.invariants(q, p, out);
    }
    fn erased_parameter_seed(
        &self,
        name: &str,
        q0: &DVector<f64>,
        v0: &DVector<f64>,
    ) -> Result<ParameterSeed, ParameterSeedError> {
        self.parameter_seed(name, q0, v0)
    }
}

/// Any [`NamedDynSystem`] behind a pointer (docs/theory.md §11.5): the one
/// model type a [`DynModelVisitor`] is called with by
/// [`Scenario::visit_dyn`](crate::Scenario::visit_dyn), so the run-time core
/// is compiled once for every model. Build one with
/// `DynModel::new(&model)`.
pub type DynModel<'a> = Erased<'a, dyn ErasedNamed + 'a>;

impl NamedDynSystem for DynModel<'_> {
    fn name(&self) -> &str {
        self.system().erased_name()
    }
    fn description(&self) -> &str {
        self.system().erased_description()
    }
    fn coordinates(&self) -> Vec<String> {
        self.system().erased_coordinates()
    }
    fn piece_name(&self, j: usize) -> String {
        self.system().erased_piece_name(j)
    }
    fn constraint_name(&self, a: usize) -> String {
        self.system().erased_constraint_name(a)
    }
    fn invariant_names(&self) -> Vec<String> {
        self.system().erased_invariant_names()
    }
    fn invariants(&self, q: &[f64], p: &[f64], out: &mut [f64]) {
        self.system().erased_invariants(q, p, out);
    }
    fn parameter_seed(
        &self,
        name: &str,
        q0: &DVector<f64>,
        v0: &DVector<f64>,
    ) -> Result<ParameterSeed, ParameterSeedError> {
        self.system().erased_parameter_seed(name, q0, v0)
    }
}

/// How a run's data move with one parameter
/// ([`NamedDynSystem::parameter_seed`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterSeed {
    /// `dθ`: one entry per parameter of the system.
    pub direction: Vec<f64>,
    /// `dq(0)`.
    pub q0: Vec<f64>,
    /// `dv(0)`.
    pub v0: Vec<f64>,
}

/// Why a system cannot give a [`ParameterSeed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParameterSeedError {
    /// The system's parameters are not automatic-differentiation variables.
    NotDifferentiable,
    /// No parameter of this name; `valid` lists them.
    Unknown {
        /// The parameters the system has.
        valid: Vec<String>,
    },
    /// The parameter exists, but the run's data cannot follow it (e.g. a
    /// source's voltage on a loop of capacitors, tied to their initial
    /// voltages by the loop's voltage law); `reason` says why.
    Undefined {
        /// Why the derivative is not defined.
        reason: String,
    },
}

impl<Mo: NamedSystem<N, M>, const N: usize, const M: usize> NamedDynSystem for Fixed<Mo, N, M> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn description(&self) -> &str {
        self.0.description()
    }
    fn coordinates(&self) -> Vec<String> {
        self.0.coordinates()
    }
    fn piece_name(&self, j: usize) -> String {
        self.0.piece_name(j)
    }
    fn constraint_name(&self, a: usize) -> String {
        self.0.constraint_name(a)
    }
    fn invariant_names(&self) -> Vec<String> {
        self.0.invariant_names()
    }
    fn invariants(&self, q: &[f64], p: &[f64], out: &mut [f64]) {
        if q.len() == N && p.len() == N {
            self.0.invariants(
                &SVector::from_column_slice(q),
                &SVector::from_column_slice(p),
                out,
            );
        } else {
            out.fill(f64::NAN);
        }
    }
}

/// A circuit without current sources on the run-time core
/// ([`diracvi_circuit::Circuit::dyn_system`]): coordinates the branch
/// charges, constraint rows the Kirchhoff rows of the non-ground nodes, no
/// boundary.
impl NamedDynSystem for diracvi_circuit::CircuitSystem {
    fn name(&self) -> &str {
        diracvi_circuit::CircuitSystem::name(self)
    }
    fn description(&self) -> &str {
        "a circuit (branch charges, Kirchhoff rows)"
    }
    fn coordinates(&self) -> Vec<String> {
        self.coordinate_names().to_vec()
    }
    fn piece_name(&self, j: usize) -> String {
        format!("piece {j}")
    }
    fn constraint_name(&self, a: usize) -> String {
        format!("Kirchhoff row {a}")
    }
    /// The element values, with the netlist's initial voltages and
    /// currents held fixed (a capacitor's initial charge `c · V` moves with
    /// `c`: [`CircuitSystem::initial_charges_along`](diracvi_circuit::CircuitSystem::initial_charges_along));
    /// refused for a source's voltage on a loop of capacitors and voltage
    /// sources.
    fn parameter_seed(
        &self,
        name: &str,
        q0: &DVector<f64>,
        v0: &DVector<f64>,
    ) -> Result<ParameterSeed, ParameterSeedError> {
        let (k, direction) = unit_direction(&self.parameter_names(), name)?;
        let dq = self
            .initial_charges_along(k, q0.as_slice())
            .ok_or_else(|| ParameterSeedError::Undefined {
                reason: format!(
                    "the source {name} lies on a loop of capacitors and voltage sources, whose \
                     voltage law (Σ ± V_C = Σ ± E around it) ties it to the capacitors' initial \
                     voltages (IC=): {name} cannot change alone"
                ),
            })?;
        Ok(ParameterSeed {
            direction,
            q0: dq,
            v0: vec![0.0; v0.len()],
        })
    }
}

/// A run's setup at run-time sizes: continuous initial data, step, end time
/// and discretization choices (see [`RunSetup`](crate::RunSetup)).
#[derive(Debug, Clone, PartialEq)]
pub struct DynRunSetup {
    /// Initial configuration `q(0)` (`n` entries).
    pub q0: DVector<f64>,
    /// Initial velocity `v(0)`; runs start from `p_0 = ∂L/∂v(q(0), v(0))`.
    pub v0: DVector<f64>,
    /// Time step `h > 0` (s).
    pub h: f64,
    /// End time (s); runs start at `t = 0`.
    pub t_end: f64,
    /// Discretization map of the discrete Lagrangian.
    pub discretization: Discretization,
    /// Discrete constraint (irrelevant when `m = 0`).
    pub constraint: ConstraintDiscretization,
}

/// A generic operation on a model of any size and its run setup.
pub trait DynModelVisitor {
    /// What the visit produces.
    type Output;
    /// Called with the concrete model and the setup.
    fn visit<Mo: NamedDynSystem>(self, model: &Mo, setup: &DynRunSetup) -> Self::Output;
}

/// Check continuous initial data against a model of any size at `t = 0`,
/// where every run starts ([`check_initial_dyn`], with the boundary piece
/// named; see [`check_initial`](crate::check_initial)).
///
/// # Errors
/// [`ModelError::WrongLength`], [`ModelError::NonFiniteInitial`],
/// [`ModelError::InitialInadmissible`],
/// [`ModelError::InitialViolatesConstraint`].
pub fn check_initial_named<Mo: NamedDynSystem>(
    model: &Mo,
    q0: &DVector<f64>,
    v0: &DVector<f64>,
) -> Result<(), ModelError> {
    check_initial_dyn(model, 0.0, q0, v0).map_err(|e| {
        crate::initial_error(
            e,
            |piece| model.piece_name(piece),
            |row| model.constraint_name(row),
        )
    })
}
