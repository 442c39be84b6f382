//! Large structure-preserving circuits: a SPICE-subset netlist
//! ([`netlist`]) becomes a degenerate Lagrangian on branch charges with
//! Kirchhoff current constraints ([`CircuitSystem`]), run by the (±)
//! Lagrange–Dirac steppers of the run-time core every model runs on
//! (sparse storage by the circuit's structure; docs/theory.md §8, §11).
//!
//! * **Coordinates**: one branch charge per inductor, capacitor and voltage
//!   source, in netlist order (current sources are not coordinates: their
//!   charge `∫ I dt` is prescribed).
//! * **Lagrangian**: `L = Σ_L ½ ℓ v² − Σ_C q²/(2c) − Σ_V E(t) q`, one element
//!   term per branch; a nonlinear capacitor (`ENERGY={U(q)}`,
//!   [`netlist`]) contributes `−U(q)`, evaluated through its compiled
//!   expression over the steppers' dual numbers (docs/theory.md §8.5).
//! * **Constraints**: Kirchhoff's current law at every node but the ground,
//!   `Σ_in v − Σ_out v + (current sources) = 0`.
//! * **Hidden constraints** (forward discretization): one per independent
//!   loop of capacitors and voltage sources, found from the circuit graph
//!   (fundamental cycles of a spanning forest); the loop's chord replaces
//!   its row ([`DynSystem::hidden_constraints`](diracvi_geometry::dynamic::DynSystem::hidden_constraints)).
//!   No dense SVD.
//! * **One core** ([`Circuit::dyn_system`], [`CircuitSystem`]): a circuit
//!   is a [`DynSystem`](diracvi_geometry::dynamic::DynSystem) like every
//!   model of any size (time-dependent when a source is not DC), and runs
//!   on the common Lagrange–Dirac stepper ([`Circuit::stepper`]) and its
//!   compositions (orders 4 and 6; docs/theory.md §8.7, §8.8).
//! * **Errors** ([`CircuitError`]): malformed lines (line numbers), bad
//!   `ENERGY={…}` expressions (line and column), floating nodes, loops of
//!   voltage sources only, cut-sets of current sources only, initial
//!   voltages no charge of a nonlinear capacitor has.
//!
//! ```
//! use diracvi_circuit::{Circuit, netlist};
//! use diracvi_geometry::Discretization;
//! let net = netlist::parse("L1 1 0 1 IC=1\nC1 1 0 1\n").unwrap();
//! let circuit = Circuit::new(net).unwrap();
//! let run = circuit.simulate(Discretization::Forward, 0.01, 628, 0, |_| {}).unwrap();
//! // One period of the LC tank (ω = 1): back near the start, energy ½.
//! assert!((run.final_state.q[0] - 0.0).abs() < 0.05);
//! assert!((run.energy_initial - 0.5).abs() < 0.01);
//! ```
#![doc = include_str!("../../../docs/dependent-profile.md")]

mod circuit;
mod element;
mod error;
pub mod netlist;
mod system;

pub use circuit::{Circuit, CircuitRun};
pub use element::{CircuitElement, CircuitStepper};
pub use error::CircuitError;
pub use system::CircuitSystem;
