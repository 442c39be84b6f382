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

    /// The element's value when it is one number the term is
    /// differentiable in (docs/theory.md §12.4): an inductance, a linear
    /// capacitance, a DC source's voltage. `None` for a nonlinear
    /// capacitor and a source that varies in time.
    pub fn value(&self) -> Option<f64> {
        match self {
            CircuitElement::Inductor { l, .. } => Some(*l),
            CircuitElement::Capacitor { c, .. } => Some(*c),
            CircuitElement::VoltageSource {
                waveform: Waveform::Dc(e),
                ..
            } => Some(*e),
            CircuitElement::NonlinearCapacitor { .. } | CircuitElement::VoltageSource { .. } => {
                None
            }
        }
    }

    /// The term with the element's [`value`](Self::value) given as `value`
    /// (an automatic-differentiation scalar): `½ value v²`,
    /// `−q²/(2 value)`, `−value q`. Equal to
    /// [`lagrangian`](Self::lagrangian) at the element's own value; an
    /// element without a value ignores `value`.
    #[inline]
    pub fn lagrangian_with<S: AdScalar>(&self, q: S, v: S, t: f64, value: S) -> S {
        match self {
            CircuitElement::Inductor { .. } => v * v * value * 0.5,
            CircuitElement::Capacitor { .. } => -(q * q) * (value.recip() * 0.5),
            CircuitElement::VoltageSource {
                waveform: Waveform::Dc(_),
                ..
            } => -(q * value),
            CircuitElement::NonlinearCapacitor { .. } | CircuitElement::VoltageSource { .. } => {
                self.lagrangian(q, v, t)
            }
        }
    }
}

/// The (±) Lagrange–Dirac stepper of a circuit: the run-time core's, over
/// the circuit as a [`DynSystem`](diracvi_geometry::dynamic::DynSystem)
/// ([`Circuit::stepper`](crate::Circuit::stepper)).
pub type CircuitStepper = DynLagrangeDirac<CircuitSystem>;
