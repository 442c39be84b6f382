//! The branch terms of the circuit Lagrangian and the prescribed charges
//! of current sources, as the sparse stepper's elements and drives.

use crate::netlist::{EnergyLaw, Waveform};
use diracvi_discrete_dirac::sparse::{Drive, Element, SparseLagrangeDirac};
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

impl Element<1> for CircuitElement {
    fn coordinates(&self) -> [usize; 1] {
        match self {
            CircuitElement::Inductor { coord, .. }
            | CircuitElement::Capacitor { coord, .. }
            | CircuitElement::NonlinearCapacitor { coord, .. }
            | CircuitElement::VoltageSource { coord, .. } => [*coord],
        }
    }

    #[inline]
    fn lagrangian<S: AdScalar>(&self, q: &[S; 1], v: &[S; 1], t: f64) -> S {
        match self {
            CircuitElement::Inductor { l, .. } => v[0] * v[0] * (0.5 * l),
            CircuitElement::Capacitor { c, .. } => -(q[0] * q[0]) * (0.5 / c),
            CircuitElement::NonlinearCapacitor { energy, .. } => -energy.energy(q[0]),
            CircuitElement::VoltageSource { waveform, .. } => -(q[0] * waveform.value(t)),
        }
    }
}

/// A current source's prescribed charge `∫ I dt`.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceCharge(pub Waveform);

impl Drive for SourceCharge {
    fn displacement(&self, t: f64) -> f64 {
        self.0.integral(t)
    }
}

/// The sparse stepper of a circuit.
pub type CircuitStepper = SparseLagrangeDirac<CircuitElement, SourceCharge, 1>;
