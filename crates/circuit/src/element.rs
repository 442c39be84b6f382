//! The branch terms of the circuit Lagrangian (one term of
//! [`CircuitSystem`](crate::CircuitSystem) per branch).

use crate::CircuitSystem;
use crate::netlist::{EnergyLaw, Waveform};
use diracvi_discrete_dirac::dynamic::DynLagrangeDirac;
use diracvi_geometry::AdScalar;

/// One branch term of the circuit Lagrangian.
#[derive(Debug, Clone, PartialEq)]
pub enum CircuitElement {
    /// `½ ℓ v²`.
    Inductor {
        /// Branch coordinate.
        coord: usize,
        /// Inductance.
        l: f64,
    },
    /// `−q²/(2c)`.
    Capacitor {
        /// Branch coordinate.
        coord: usize,
        /// Capacitance.
        c: f64,
    },
    /// `−U(q)`: a nonlinear capacitor given by its stored energy.
    NonlinearCapacitor {
        /// Branch coordinate.
        coord: usize,
        /// `U(q)`.
        energy: EnergyLaw,
    },
    /// `−E(t) q`.
    VoltageSource {
        /// Branch coordinate.
        coord: usize,
        /// `E(t)`.
        waveform: Waveform,
    },
}

impl CircuitElement {
    /// The branch coordinate.
    pub fn coordinate(&self) -> usize {
        match self {
            CircuitElement::Inductor { coord, .. }
            | CircuitElement::Capacitor { coord, .. }
            | CircuitElement::NonlinearCapacitor { coord, .. }
            | CircuitElement::VoltageSource { coord, .. } => *coord,
        }
    }

    /// The term at the branch's charge `q`, current `v` and time `t`.
    #[inline]
    pub fn lagrangian<S: AdScalar>(&self, q: S, v: S, t: f64) -> S {
        match self {
            CircuitElement::Inductor { l, .. } => v * v * (0.5 * l),
            CircuitElement::Capacitor { c, .. } => -(q * q) * (0.5 / c),
            CircuitElement::NonlinearCapacitor { energy, .. } => -energy.energy(q),
            CircuitElement::VoltageSource { waveform, .. } => -(q * waveform.value(t)),
        }
    }
}

/// The (±) Lagrange–Dirac stepper of a circuit: the run-time core's, over
/// the circuit as a [`DynSystem`](diracvi_geometry::dynamic::DynSystem)
/// ([`Circuit::stepper`](crate::Circuit::stepper)).
pub type CircuitStepper = DynLagrangeDirac<CircuitSystem>;
