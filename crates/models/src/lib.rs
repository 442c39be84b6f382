//! # diracvi-models
//!
//! Every system of the source papers (docs/theory.md §5), each with named parameters
//! defaulting to the paper's values, default initial data, step, end time and
//! discretization, its energy and its admissible set.
//!
//! | name | system | `N` | `M` | boundary pieces |
//! |---|---|---|---|---|
//! | [`particle`](Particle) | bouncing particle, \[VCI\] §4.1 | 2 `(x, y)` | 0 | 1: `y ≥ 0` |
//! | [`ellipse`](Ellipse) | bouncing ellipse, \[VCI\] §4.2 | 3 `(θ, x, y)` | 0 | 1: `y ≥ √(a² sin²θ + b² cos²θ)` |
//! | [`star`](Star) | four-point star, \[VCI\] §4.2 | 3 `(θ, x, y)` | 0 | 4: `y ≥ l(s₁ sinθ + s₂ cosθ)` |
//! | [`pendulum`](Pendulum) | nonholonomic spherical pendulum in a cylinder, \[VCI\] §4.3 | 2 `(θ, φ)` | 1 | 1: `R² − ℓ² sin²θ ≥ 0` |
//! | [`disk-wall`](DiskWall) | rolling disk hitting a wall, \[INC\] §6 | 4 `(x, y, θ, φ)` | 2 | 1: `y + R sinφ ≤ wall` |
//! | [`disk-table`](DiskTable) | rolling disk in a circular table, \[NIC\] §5 | 4 `(x, y, θ, φ)` | 2 | 2: `(x ± R cosφ)² + (y ± R sinφ)² ≤ a²` |
//! | [`lc`](Lc) | LC circuit (degenerate `L`), \[DDM\] §2.1, §6 | 4 `(q^ℓ, q^{c1}, q^{c2}, q^{c3})` | 2 | none |
//! | [`heavy-top`](HeavyTop) | heavy top about a fixed point (free rigid body at `g = 0`), docs/theory.md §16 | 4 `(w, x, y, z)`, a unit quaternion | 1 (`q·v = 0`) | none (optional `cone`: axis height `≥ u`) |
//! | [`chaplygin-sphere`](ChaplyginSphere) | Chaplygin sphere rolling between two walls, docs/theory.md §16.7 | 6 `(x, y, q_w, q_x, q_y, q_z)` | 3 (`q·q̇ = 0`, rolling) | 2: `wall − r ∓ x ≥ 0` |
//! | [`bouncing-body`](BouncingBody) | convex body (ellipsoid, rounded box) bouncing on a tilted plane, docs/theory.md §16.8 | 7 `(X, Y, Z, q_w, q_x, q_y, q_z)` | 1 (`q·q̇ = 0`) | 1: `n·X − h(n) ≥ 0` |
//!
//! The heavy top, the Chaplygin sphere and the bouncing body hold their
//! orientation in the unit-quaternion chart of SO(3); their known first
//! integrals (the top's momenta about the vertical and the symmetry axis, at
//! `g = 0` all of the spatial angular momentum; the sphere's angular momentum
//! about the contact point; the body's momenta along the plane and its
//! angular momentum about the plane's normal) are declared to the runner, which reports them in
//! the run summary. The group discretizations of `diracvi_geometry::lie` step
//! them from Rust.
//!
//! A model is a struct implementing [`System`] (the physics, from
//! `diracvi-geometry`) and [`Model`] (name, parameters, defaults). The
//! [`catalogue`] lists them; a [`Scenario`] is a model name plus parameters,
//! step, end time, discretization and initial data, readable from and
//! writable to TOML, overridable key by key ([`Scenario::set`]), and runnable
//! generically through a [`ModelVisitor`] — so callers (the CLI, tests) can
//! run any model without this crate depending on the integrators.
//!
//! ```
//! use diracvi_models::{ModelVisitor, NamedSystem, RunSetup, Scenario};
//! struct Dimensions;
//! impl ModelVisitor for Dimensions {
//!     type Output = (usize, usize);
//!     fn visit<const N: usize, const M: usize, Mo: NamedSystem<N, M>>(
//!         self,
//!         _model: &Mo,
//!         _setup: &RunSetup<N>,
//!     ) -> (usize, usize) {
//!         (N, M)
//!     }
//! }
//! let mut scenario = Scenario::defaults("disk-wall").unwrap();
//! scenario.set("r", "0.5").unwrap();
//! assert_eq!(scenario.visit(Dimensions).unwrap(), (4, 2));
//! ```
//!
//! Units are SI throughout (kg, m, s, rad; H, F, C for the circuit).
//!
//! ## Adding a model
//!
//! 1. Write a file `src/my_model.rs` with a parameter struct
//!    (`#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]`,
//!    `#[serde(default, deny_unknown_fields)]`, `Default` = the paper's
//!    values, every field documented with its unit) and a model struct.
//! 2. `impl System<N, M>` for it: the Lagrangian generic over
//!    [`AdScalar`](diracvi_geometry::AdScalar), the constraint forms, the
//!    boundary pieces `g_j ≥ 0`, the Hamiltonian if `L` is regular.
//! 3. `impl Model<N, M>`: `NAME`, `DESCRIPTION`, `PARAMETERS` (one
//!    [`ParameterInfo`] per field, same names as the serde keys, built with
//!    [`ParameterInfo::float`], [`ParameterInfo::mass`],
//!    [`ParameterInfo::GRAVITY`], …),
//!    `coordinate_names`, `new` (validate every parameter, returning
//!    [`ModelError::InvalidParameter`]), `params`, `run_defaults`.
//!    Optionally `drawing` (return `Some(self)` and implement
//!    [`Drawing`]: walls, body outline and contact points in a plane) so
//!    `diracvi run --animate` can draw it.
//! 4. Add `mod my_model; pub use my_model::*;` and one line
//!    `MyModel => (N, M),` to the `registry!` invocation in `registry.rs`:
//!    in its `compiled` list (every method on the compile-time-sized core,
//!    the fastest steps) or, for a large model whose compile-time copies
//!    would cost minutes of build for little speed, in `run_time` (every
//!    method on the run-time-sized core only; docs/theory.md §11.5).
//! 5. Write its twin as a model file `models/<name>.toml` at the repository
//!    root (docs/model-files.md): the catalogue ships both ways.
//!
//! The tests in `tests/` then exercise it automatically (defaults validate,
//! `H(q, ∂L/∂v) = E(q, v)`, scenario round trip, dispatch, the file twin
//! against the compiled model); their lists of names come from
//! [`catalogue`].
//!
//! ## Models from files
//!
//! [`Scenario::from_model_file`] reads a model file (docs/model-files.md) of
//! any size; [`Scenario::visit_dyn`] then hands a [`DynModelVisitor`] a
//! [`FileModel`], a run-time-sized [`DynSystem`](diracvi_geometry::dynamic::DynSystem)
//! evaluating the compiled expressions — and a catalogued model wrapped in
//! [`Fixed`](diracvi_geometry::dynamic::Fixed), so the same visitor runs
//! catalogued and file models on the core for every size (docs/theory.md §11).
//! [`Scenario::visit`] (compile-time sizes) serves the catalogue and the
//! small model files ([`FAST_FILE_SIZES`], as [`SizedFileModel`]), the
//! faster path the runner prefers where it exists.
//!
//! Papers: **\[VCI\]** variational collision integrators for nonholonomic
//! systems; **\[INC\]** implicit nonholonomic mechanics with collisions;
//! **\[NIC\]** nonholonomic systems with inequality constraints; **\[DDM\]**
//! discrete Dirac mechanics.
//!
#![doc = include_str!("../../../docs/dependent-profile.md")]

mod bouncing_body;
mod chaplygin_sphere;
mod disk_table;
mod disk_wall;
mod drawing;
mod dynamic;
mod ellipse;
mod error;
mod file_model;
mod heavy_top;
mod lc;
mod model;
mod particle;
mod pendulum;
pub mod reference;
mod registry;
mod scenario;
mod sized_file_model;
mod star;
mod symmetric;

pub use bouncing_body::{BodyShape, BouncingBody, BouncingBodyParams};
pub use chaplygin_sphere::{ChaplyginSphere, ChaplyginSphereParams};
pub use disk_table::{DiskTable, DiskTableParams};
pub use disk_wall::{DiskWall, DiskWallParams};
pub use drawing::{Drawing, Heading, Point, Shape};
pub use dynamic::{
    DynModel, DynModelVisitor, DynRunSetup, ErasedNamed, NamedDynSystem, ParameterSeed,
    ParameterSeedError, check_initial_named,
};
pub use ellipse::{Ellipse, EllipseParams};
pub use error::ModelError;
pub use file_model::{FileModel, FileText};
pub use heavy_top::{HeavyTop, HeavyTopParams};
pub use lc::{Lc, LcParams};
pub use particle::{Particle, ParticleParams};
pub use pendulum::{Pendulum, PendulumParams};
pub use scenario::{
    CircuitSource, InitialData, LADDER, LADDER_DESCRIPTION, PlaneWalls, Scenario, Scene,
};
pub use sized_file_model::{FAST_FILE_SIZES, SizedFileModel};
pub use star::{Star, StarParams};
pub use symmetric::{DynReducedModelVisitor, ReducedModelVisitor, SYMMETRIC_MODELS, Symmetric};

pub use diracvi_geometry::{ConstraintDiscretization, Discretization, System};

pub use model::{
    CONSTRAINT_TOLERANCE, Model, ModelInfo, ModelVisitor, NamedSystem, ParameterInfo,
    ParameterKind, RunSetup, check_initial,
};
pub(crate) use model::{initial_error, validate};
pub(crate) use registry::{ModelTypeVisitor, dispatch_type};
pub use registry::{catalogue, model_info, parameters, runs_on_compile_time_core};
