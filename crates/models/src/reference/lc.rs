//! Exact solution of the LC circuit of \[DDM\] §2.1 and §6 (docs/theory.md §5 `lc`).
//!
//! Charges `q = (q^ℓ, q^{c1}, q^{c2}, q^{c3})`, Lagrangian (\[DDM\] 2.1)
//!
//! ```text
//! L(q, f) = ½ ℓ (f^ℓ)² − (q^{c1})²/(2c₁) − (q^{c2})²/(2c₂) − (q^{c3})²/(2c₃),
//! ```
//!
//! Kirchhoff current law (\[DDM\] 2.3): `ω¹ = −dq^ℓ + dq^{c2}`,
//! `ω² = −dq^{c1} + dq^{c2} − dq^{c3}`. Both one-forms are exact, so with
//! `q(0) = 0` the charges satisfy for all `t`
//!
//! ```text
//! q^{c2} = q^ℓ,        q^{c1} + q^{c3} = q^{c2}.
//! ```
//!
//! The Lagrange–Dirac equations (\[DDM\] 2.12b) with `p_{c_i} = 0` give
//! `q^{c1}/c₁ = −μ₂ = q^{c3}/c₃` (the parallel capacitors `c₁`, `c₃` carry the
//! same voltage), so the charge `q^{c2}` splits in proportion to capacity:
//!
//! ```text
//! q^{c1} = c₁/(c₁+c₃) · q^ℓ,     q^{c3} = c₃/(c₁+c₃) · q^ℓ.
//! ```
//!
//! Finally `ṗ_ℓ = −μ₁ = −(q^{c2}/c₂ + q^{c1}/c₁)`, i.e.
//! `ℓ q̈^ℓ = −(1/c₂ + 1/(c₁+c₃)) q^ℓ`, a harmonic oscillator with
//!
//! ```text
//! ω² = (c₁ + c₂ + c₃) / (c₂ (c₁ + c₃) ℓ)       (= 1 for ℓ = 3/4, c = (1, 2, 3)),
//! q^ℓ(t) = (I₀/ω) sin ωt                       (q(0) = 0, inductor current I₀).
//! ```
//!
//! This is \[DDM\] §6.2's exact solution (`I₀ = 10`). Only `q(0) = 0` and the
//! inductor current enter: the capacitor currents are then forced,
//! `f^{c1}(0) = c₁ I₀/(c₁+c₃)`, `f^{c3}(0) = c₃ I₀/(c₁+c₃)` — \[DDM\]'s printed
//! `f^{c1}(0) = f^{c3}(0) = 0` violates Kirchhoff's law (docs/theory.md §5 note).
//! Momenta: `p_ℓ = ℓ f^ℓ`, `p_{c_i} = 0`. Energy `E = ½ ℓ (f^ℓ)² + Σ (q^{c_i})²/(2c_i) = ½ ℓ I₀²`.

use serde::{Deserialize, Serialize};

/// LC circuit with one inductor and three capacitors (closed form).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LcCircuit {
    /// Inductance `ℓ > 0` (H). Default `3/4`.
    pub inductance: f64,
    /// Capacitance `c₁ > 0` (F). Default 1.
    pub c1: f64,
    /// Capacitance `c₂ > 0` (F). Default 2.
    pub c2: f64,
    /// Capacitance `c₃ > 0` (F). Default 3.
    pub c3: f64,
    /// Inductor current `I₀ = f^ℓ(0)` (A) with all charges zero at `t = 0`.
    /// Default 10.
    pub i0: f64,
}

impl Default for LcCircuit {
    fn default() -> Self {
        Self {
            inductance: 0.75,
            c1: 1.0,
            c2: 2.0,
            c3: 3.0,
            i0: 10.0,
        }
    }
}

impl LcCircuit {
    /// Angular frequency `ω = √((c₁+c₂+c₃)/(c₂(c₁+c₃)ℓ))` (rad/s).
    pub fn omega(&self) -> f64 {
        ((self.c1 + self.c2 + self.c3) / (self.c2 * (self.c1 + self.c3) * self.inductance)).sqrt()
    }

    /// Period `2π/ω` (s).
    pub fn period(&self) -> f64 {
        std::f64::consts::TAU / self.omega()
    }

    /// Fractions `(c₁/(c₁+c₃), 1, 1, c₃/(c₁+c₃))` with which each charge
    /// follows `q^ℓ`; ordering `(ℓ, c1, c2, c3)` except the first entry is 1.
    fn split(&self) -> [f64; 4] {
        let s = self.c1 + self.c3;
        [1.0, self.c1 / s, 1.0, self.c3 / s]
    }

    /// Charges `(q^ℓ, q^{c1}, q^{c2}, q^{c3})` at time `t` (C).
    pub fn charges_at(&self, t: f64) -> [f64; 4] {
        let w = self.omega();
        let q = self.i0 / w * (w * t).sin();
        self.split().map(|r| r * q)
    }

    /// Currents `(f^ℓ, f^{c1}, f^{c2}, f^{c3}) = q̇` at time `t` (A).
    pub fn currents_at(&self, t: f64) -> [f64; 4] {
        let i = self.i0 * (self.omega() * t).cos();
        self.split().map(|r| r * i)
    }

    /// Momenta `p = ∂L/∂f = (ℓ f^ℓ, 0, 0, 0)` at time `t` (V·s).
    pub fn momenta_at(&self, t: f64) -> [f64; 4] {
        [self.inductance * self.currents_at(t)[0], 0.0, 0.0, 0.0]
    }

    /// Energy `½ ℓ (f^ℓ)² + Σ_i (q^{c_i})²/(2c_i)` of a charge/current state (J).
    pub fn energy(&self, q: [f64; 4], f: [f64; 4]) -> f64 {
        0.5 * self.inductance * f[0] * f[0]
            + q[1] * q[1] / (2.0 * self.c1)
            + q[2] * q[2] / (2.0 * self.c2)
            + q[3] * q[3] / (2.0 * self.c3)
    }

    /// The conserved energy `½ ℓ I₀²` of the exact solution (J).
    pub fn exact_energy(&self) -> f64 {
        0.5 * self.inductance * self.i0 * self.i0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_omega_is_one() {
        assert!((LcCircuit::default().omega() - 1.0).abs() < 1e-15);
    }
}
