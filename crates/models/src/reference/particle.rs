//! Exact solution of the bouncing particle (\[VCI\] §4.1, docs/theory.md §5 `particle`).
//!
//! Lagrangian `L = ½ m |v|² − m g y` on `Q = R²`, admissible set `y ≥ 0`,
//! elastic frictionless impacts with the floor. The mass drops out of the
//! motion, so it is not a parameter here.
//!
//! Between impacts the motion is a parabola,
//! `x(t) = x₀ + vₓ t`, `y(t) = y₀ + v_y t − ½ g t²`. The floor is reached at
//! the positive root of `y(t) = 0`,
//!
//! ```text
//! t₁ = (v_y + V) / g,   V = √(v_y² + 2 g y₀)   (the impact speed),
//! ```
//!
//! evaluated without cancellation as `t₁ = 2 y₀ / (V − v_y)` when `v_y < 0`.
//! The elastic law reflects `v_y → −v_y`, so every later flight leaves the
//! floor with vertical speed `V` and lasts the same time `T = 2V/g`. The
//! impact times are therefore `t_k = t₁ + k T` (`k = 0, 1, …`), each computed
//! directly (no accumulated sums), and on the flight starting at `t_k`
//! (`τ = t − t_k ∈ [0, T)`) the state is
//!
//! ```text
//! y = τ (V − ½ g τ),   v_y = V − g τ,   x = x₀ + vₓ t,   vₓ constant.
//! ```
//!
//! Everything is therefore exact up to floating-point round-off.
//! At an impact time the post-impact velocity is returned.

use serde::{Deserialize, Serialize};

/// Bouncing particle above the floor `y = 0` (closed form).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BouncingParticle {
    /// Gravitational acceleration `g > 0` (m/s²). Default 9.8.
    pub g: f64,
    /// Initial position `(x, y)` at `t = 0` (m), with `y ≥ 0`. Default `(0, 2)`.
    pub q0: [f64; 2],
    /// Initial velocity `(vₓ, v_y)` at `t = 0` (m/s). Default `(1, 0)`.
    pub v0: [f64; 2],
}

impl Default for BouncingParticle {
    fn default() -> Self {
        Self {
            g: 9.8,
            q0: [0.0, 2.0],
            v0: [1.0, 0.0],
        }
    }
}

impl BouncingParticle {
    /// Vertical speed `V = √(v_y² + 2 g y₀)` at every impact (m/s); the
    /// particle leaves the floor with vertical velocity `+V`.
    pub fn impact_speed(&self) -> f64 {
        let vy = self.v0[1];
        (vy * vy + 2.0 * self.g * self.q0[1]).sqrt()
    }

    /// Time of the first impact, `t₁ ≥ 0` (s), or `None` when the particle
    /// rests on the floor (`y₀ = 0`, `v_y = 0`) and never flies.
    ///
    /// If `y₀ = 0` and `v_y < 0` the first impact is at `t = 0`.
    pub fn first_impact_time(&self) -> Option<f64> {
        let vy = self.v0[1];
        let big_v = self.impact_speed();
        if big_v == 0.0 {
            return None;
        }
        if vy >= 0.0 {
            Some((vy + big_v) / self.g)
        } else {
            // (vy + V)/g = 2 y0 / (V − vy), free of cancellation for vy < 0.
            Some(2.0 * self.q0[1] / (big_v - vy))
        }
    }

    /// Duration `T = 2V/g` of every flight after the first impact (s).
    pub fn flight_period(&self) -> f64 {
        2.0 * self.impact_speed() / self.g
    }

    /// All impact times `t_k = t₁ + k T` in `[0, t_end]` (s), increasing.
    pub fn impact_times(&self, t_end: f64) -> Vec<f64> {
        let Some(t1) = self.first_impact_time() else {
            return Vec::new();
        };
        let period = self.flight_period();
        let mut out = Vec::new();
        let mut k = 0u64;
        loop {
            let t = t1 + (k as f64) * period;
            if t > t_end {
                break;
            }
            out.push(t);
            k += 1;
        }
        out
    }

    /// Position `(x, y)` (m) and velocity `(vₓ, v_y)` (m/s) at time `t ≥ 0`
    /// (post-impact velocity at an impact time). For `t < 0` the initial
    /// parabola is continued backwards.
    pub fn state_at(&self, t: f64) -> ([f64; 2], [f64; 2]) {
        let g = self.g;
        let x = self.q0[0] + self.v0[0] * t;
        let vx = self.v0[0];
        let first = self.first_impact_time();
        match first {
            None => ([x, self.q0[1]], [vx, 0.0]),
            Some(t1) if t < t1 => {
                let (y0, vy) = (self.q0[1], self.v0[1]);
                ([x, y0 + t * (vy - 0.5 * g * t)], [vx, vy - g * t])
            }
            Some(t1) => {
                let big_v = self.impact_speed();
                let period = self.flight_period();
                let mut k = ((t - t1) / period).floor();
                // Guard the floor() against round-off at flight boundaries.
                if t1 + (k + 1.0) * period <= t {
                    k += 1.0;
                }
                if k > 0.0 && t1 + k * period > t {
                    k -= 1.0;
                }
                let tau = t - (t1 + k * period);
                ([x, tau * (big_v - 0.5 * g * tau)], [vx, big_v - g * tau])
            }
        }
    }

    /// Energy per unit mass `½|v|² + g y` (J/kg); multiply by `m` for the
    /// energy of \[VCI\] §4.1. Constant along the exact solution.
    pub fn specific_energy(&self, q: [f64; 2], v: [f64; 2]) -> f64 {
        0.5 * (v[0] * v[0] + v[1] * v[1]) + self.g * q[1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_first_impact() {
        let p = BouncingParticle::default();
        let t1 = p.first_impact_time().unwrap();
        assert!((t1 - (4.0f64 / 9.8).sqrt()).abs() < 1e-15);
        let (q, v) = p.state_at(t1);
        assert!(q[1].abs() < 1e-15);
        assert!((v[1] - (2.0 * 9.8 * 2.0f64).sqrt()).abs() < 1e-14);
    }
}
