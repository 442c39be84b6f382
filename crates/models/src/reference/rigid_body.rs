//! Reference for the bouncing planar rigid bodies `ellipse` and `star`
//! (\[VCI\] §4.2, docs/theory.md §5).
//!
//! ## Model
//!
//! Configuration `q = (θ, x, y) ∈ SE(2)`, Lagrangian
//! `L = ½ m (ẋ² + ẏ²) + ½ I θ̇² − m g y`, mass matrix `M = diag(I, m, m)`.
//! Admissible set `y ≥ φ(θ)`:
//!
//! * ellipse (\[VCI\] §4.2 (2)): `φ(θ) = √(a² sin²θ + b² cos²θ)`, one smooth
//!   piece `g₀ = y − φ(θ)`; default `a = 1`, `b = 0.5`, `I = m (a² + b²)/4`;
//! * star (\[VCI\] §4.2 (1)): `φ(θ) = l (|sinθ| + |cosθ|)`
//!   `= max_{s₁,s₂ = ±1} l (s₁ sinθ + s₂ cosθ)`, so `y ≥ φ(θ)` is the
//!   intersection of four smooth pieces
//!   `g_{s₁,s₂} = y − l (s₁ sinθ + s₂ cosθ) ≥ 0`; default `l = 1`,
//!   `I = m l²/3`. Piece index `j` ↔ signs (see [`star_piece_signs`]):
//!   `0 ↔ (+,+)`, `1 ↔ (−,+)`, `2 ↔ (+,−)`, `3 ↔ (−,−)` (bit 0 of `j` flips
//!   `s₁`, bit 1 flips `s₂` — the numbering of the `star` model).
//!
//! ## Exact flight
//!
//! Between impacts `θ = θ_s + θ̇ τ`, `x = x_s + ẋ τ`,
//! `y = y_s + ẏ_s τ − ½ g τ²` (`τ = t − t_s`), exactly.
//!
//! ## Guaranteed first-root search
//!
//! Along a flight each gap `G_j(τ) = y(τ) − φ_j(θ(τ))` has a global bound
//! `|G_j''| ≤ K_j = g + θ̇² Φ₂` with `Φ₂ ≥ max |φ_j''|`
//! (star: `Φ₂ = √2 l`; ellipse: with `μ = min(a,b)`, `Δ = |a² − b²|`,
//! `|φ'| ≤ Δ/(2μ)` and `φ'' = ((a² − b²) cos 2θ − φ'²)/φ` give
//! `Φ₂ = (Δ + Δ²/(4μ²))/μ`). Hence `G_j(τ + s) ≥ G_j + G_j' s − ½ K_j s²`,
//! and `G_j` has no root before the first zero `s*` of that quadratic. The
//! search advances by `min_j s*_j` — a step that provably skips no root, and
//! that converges quadratically to a transversal root from the admissible
//! side. When a piece reaches `G_j ≤ 1e-13` while approaching
//! (`G_j' < 0`), the root is polished by Newton's method to round-off.
//!
//! ## Impact law
//!
//! Elastic and frictionless: the momentum jumps along `dg_j` and kinetic
//! energy is conserved,
//!
//! ```text
//! p⁺ = p⁻ − 2 (dg·M⁻¹p⁻)/(dg·M⁻¹dg) dg,   i.e.  v⁺ = v⁻ − 2 (dg·v⁻)/(dg·M⁻¹dg) M⁻¹dg,
//! dg_j = (−φ_j'(θ), 0, 1)  in the (θ, x, y) basis,
//! ```
//!
//! which reverses the normal velocity `dg·v` (docs/theory.md §4, \[INC\] (10)).
//! Simultaneous contact of two star pieces (a corner) is resolved
//! sequentially: after the first reflection the other piece, if still
//! approaching, is hit at the same time.

use serde::{Deserialize, Serialize};
use std::f64::consts::FRAC_PI_2;

/// Shape of the body: the function `φ(θ)` of the admissible set `y ≥ φ(θ)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Shape {
    /// Ellipse with semi-axes `a, b > 0` (m), `φ = √(a² sin²θ + b² cos²θ)`.
    Ellipse {
        /// Semi-axis `a` (m); vertical when `θ = π/2` (`φ(π/2) = a`).
        a: f64,
        /// Semi-axis `b` (m); vertical when `θ = 0` (`φ(0) = b`).
        b: f64,
    },
    /// Four-point star of length `2l` (m), `φ = l (|sinθ| + |cosθ|)`.
    Star {
        /// Half-length `l > 0` (m).
        l: f64,
    },
}

/// Signs `(s₁, s₂)` of star piece `j`: `g_j = y − l (s₁ sinθ + s₂ cosθ)`.
///
/// # Panics
/// If `j > 3`.
pub fn star_piece_signs(j: usize) -> (f64, f64) {
    match j {
        0 => (1.0, 1.0),
        1 => (-1.0, 1.0),
        2 => (1.0, -1.0),
        3 => (-1.0, -1.0),
        _ => panic!("star piece index {j} out of range 0..4"),
    }
}

/// Bouncing planar rigid body (exact flights, elastic impacts).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RigidBodyReference {
    /// The body's shape.
    pub shape: Shape,
    /// Mass `m > 0` (kg). Default 1.
    pub m: f64,
    /// Gravitational acceleration `g > 0` (m/s²). Default 9.8.
    pub g: f64,
    /// Moment of inertia about the centre `I > 0` (kg m²).
    /// Default `m(a²+b²)/4` (ellipse), `m l²/3` (star).
    pub inertia: f64,
    /// Initial configuration `(θ, x, y)` (rad, m, m). Default `(π/2, 0, 3.5)`.
    pub q0: [f64; 3],
    /// Initial velocity `(θ̇, ẋ, ẏ)` (rad/s, m/s, m/s). Default `(−3, 2, 0)`.
    pub v0: [f64; 3],
}

impl Default for RigidBodyReference {
    /// The ellipse of \[VCI\] §4.2.
    fn default() -> Self {
        Self::ellipse()
    }
}

/// One impact of the rigid body with the floor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RigidImpact {
    /// Impact time (s).
    pub t: f64,
    /// Configuration `(θ, x, y)` at the impact; `g_piece(q) = 0` to round-off.
    pub q: [f64; 3],
    /// Velocity `(θ̇, ẋ, ẏ)` just before the impact.
    pub v_before: [f64; 3],
    /// Velocity just after the impact.
    pub v_after: [f64; 3],
    /// Boundary piece hit: 0 for the ellipse, `0..4` for the star
    /// (see [`star_piece_signs`]).
    pub piece: usize,
}

/// A computed trajectory: impacts on `[0, t_end]` plus exact flights.
#[derive(Debug, Clone, PartialEq)]
pub struct RigidBodyTrajectory {
    body: RigidBodyReference,
    t_end: f64,
    impacts: Vec<RigidImpact>,
}

/// Gap threshold (m) below which an approaching piece is polished by Newton.
const GAP_TOL: f64 = 1e-13;

impl RigidBodyReference {
    /// The ellipse of \[VCI\] §4.2 with the paper's data
    /// (`a = 1`, `b = 0.5`, `m = 1`, `g = 9.8`, `I = m(a²+b²)/4`).
    pub fn ellipse() -> Self {
        let (a, b, m) = (1.0, 0.5, 1.0);
        Self {
            shape: Shape::Ellipse { a, b },
            m,
            g: 9.8,
            inertia: m * (a * a + b * b) / 4.0,
            q0: [FRAC_PI_2, 0.0, 3.5],
            v0: [-3.0, 2.0, 0.0],
        }
    }

    /// The four-point star of \[VCI\] §4.2 / docs/theory.md §5
    /// (`l = 1`, `m = 1`, `g = 9.8`, `I = m l²/3`), same initial data.
    pub fn star() -> Self {
        let (l, m) = (1.0, 1.0);
        Self {
            shape: Shape::Star { l },
            m,
            g: 9.8,
            inertia: m * l * l / 3.0,
            q0: [FRAC_PI_2, 0.0, 3.5],
            v0: [-3.0, 2.0, 0.0],
        }
    }

    /// Number of smooth boundary pieces (1 for the ellipse, 4 for the star).
    pub fn pieces(&self) -> usize {
        match self.shape {
            Shape::Ellipse { .. } => 1,
            Shape::Star { .. } => 4,
        }
    }

    /// `φ(θ)`: height of the lowest point of the body below its centre (m).
    pub fn phi(&self, theta: f64) -> f64 {
        match self.shape {
            Shape::Ellipse { a, b } => {
                let (s, c) = theta.sin_cos();
                (a * a * s * s + b * b * c * c).sqrt()
            }
            Shape::Star { l } => l * (theta.sin().abs() + theta.cos().abs()),
        }
    }

    /// `(φ_j(θ), φ_j'(θ))` of piece `j`.
    fn piece_phi(&self, j: usize, theta: f64) -> (f64, f64) {
        let (s, c) = theta.sin_cos();
        match self.shape {
            Shape::Ellipse { a, b } => {
                let phi = (a * a * s * s + b * b * c * c).sqrt();
                (phi, (a * a - b * b) * s * c / phi)
            }
            Shape::Star { l } => {
                let (s1, s2) = star_piece_signs(j);
                (l * (s1 * s + s2 * c), l * (s1 * c - s2 * s))
            }
        }
    }

    /// Bound `Φ₂ ≥ max_θ |φ_j''(θ)|` (1/m·m = m).
    fn phi2_bound(&self) -> f64 {
        match self.shape {
            Shape::Ellipse { a, b } => {
                let mu = a.abs().min(b.abs());
                let d = (a * a - b * b).abs();
                (d + d * d / (4.0 * mu * mu)) / mu
            }
            Shape::Star { l } => std::f64::consts::SQRT_2 * l.abs(),
        }
    }

    /// Gap `g_j(q) = y − φ_j(θ)` of piece `j` (m); the body is admissible
    /// iff every piece is `≥ 0`.
    pub fn gap(&self, piece: usize, q: [f64; 3]) -> f64 {
        q[2] - self.piece_phi(piece, q[0]).0
    }

    /// Gradient `dg_j = (−φ_j'(θ), 0, 1)` in the `(θ, x, y)` basis.
    pub fn gap_gradient(&self, piece: usize, q: [f64; 3]) -> [f64; 3] {
        [-self.piece_phi(piece, q[0]).1, 0.0, 1.0]
    }

    /// Energy `½ m (ẋ² + ẏ²) + ½ I θ̇² + m g y` (J).
    pub fn energy(&self, q: [f64; 3], v: [f64; 3]) -> f64 {
        0.5 * self.m * (v[1] * v[1] + v[2] * v[2])
            + 0.5 * self.inertia * v[0] * v[0]
            + self.m * self.g * q[2]
    }

    /// Elastic frictionless impact on piece `j` at `q`: returns `v⁺`.
    pub fn reflect(&self, piece: usize, q: [f64; 3], v: [f64; 3]) -> [f64; 3] {
        let dg = self.gap_gradient(piece, q);
        let minv = [1.0 / self.inertia, 1.0 / self.m, 1.0 / self.m];
        let w = [dg[0] * minv[0], dg[1] * minv[1], dg[2] * minv[2]];
        let vn = dg[0] * v[0] + dg[1] * v[1] + dg[2] * v[2];
        let den = dg[0] * w[0] + dg[1] * w[1] + dg[2] * w[2];
        let k = 2.0 * vn / den;
        [v[0] - k * w[0], v[1] - k * w[1], v[2] - k * w[2]]
    }

    /// State after flying `tau` from `(q, v)` (exact).
    fn fly(&self, q: [f64; 3], v: [f64; 3], tau: f64) -> ([f64; 3], [f64; 3]) {
        (
            [
                q[0] + v[0] * tau,
                q[1] + v[1] * tau,
                q[2] + tau * (v[2] - 0.5 * self.g * tau),
            ],
            [v[0], v[1], v[2] - self.g * tau],
        )
    }

    /// `(G_j, G_j')` at flight time `tau`.
    fn gap_rate(&self, j: usize, q: [f64; 3], v: [f64; 3], tau: f64) -> (f64, f64) {
        let (qt, vt) = self.fly(q, v, tau);
        let (phi, dphi) = self.piece_phi(j, qt[0]);
        (qt[2] - phi, vt[2] - dphi * vt[0])
    }

    /// First impact of the flight from `(q, v)` within `tau ≤ tau_max`:
    /// `(tau, piece)`.
    fn next_impact(&self, q: [f64; 3], v: [f64; 3], tau_max: f64) -> Option<(f64, usize)> {
        let k = self.g + v[0] * v[0] * self.phi2_bound();
        let np = self.pieces();
        let mut tau = 0.0f64;
        let mut iterations = 0usize;
        loop {
            iterations += 1;
            assert!(
                iterations < 10_000_000,
                "rigid-body root search did not terminate"
            );
            let mut step = f64::INFINITY;
            let mut hit: Option<(usize, f64, f64)> = None;
            for j in 0..np {
                let (gj, dj) = self.gap_rate(j, q, v, tau);
                if gj <= GAP_TOL && dj < 0.0 {
                    if hit.is_none_or(|(_, g0, _)| gj < g0) {
                        hit = Some((j, gj, dj));
                    }
                    continue;
                }
                let gp = gj.max(0.0);
                let sq = (dj * dj + 2.0 * k * gp).sqrt();
                let s = if dj >= 0.0 {
                    (dj + sq) / k
                } else {
                    2.0 * gp / (sq - dj)
                };
                step = step.min(s);
            }
            if let Some((j, _, _)) = hit {
                let t_root = self.polish(j, q, v, tau);
                if t_root > tau_max {
                    return None;
                }
                return Some((t_root, j));
            }
            // Never stall on an exact tangency (G = G' = 0).
            let step = step.max(1e-14 * (1.0 + tau));
            if tau >= tau_max {
                return None;
            }
            tau = (tau + step).min(tau_max);
        }
    }

    /// Newton polish of the root of piece `j` near `tau` (`G` tiny, `G' < 0`).
    fn polish(&self, j: usize, q: [f64; 3], v: [f64; 3], tau: f64) -> f64 {
        let mut t = tau;
        for _ in 0..8 {
            let (gj, dj) = self.gap_rate(j, q, v, t);
            if dj >= 0.0 {
                break;
            }
            let next = (t - gj / dj).max(0.0);
            let moved = (next - t).abs();
            t = next;
            if moved <= 2.0 * f64::EPSILON * t {
                break;
            }
        }
        t
    }

    /// Simulate on `[0, t_end]`, stopping after `max_impacts` impacts.
    /// Returns the impacts and the start `(t_s, q_s, v_s)` of the last flight.
    fn simulate(
        &self,
        t_end: f64,
        max_impacts: usize,
    ) -> (Vec<RigidImpact>, f64, [f64; 3], [f64; 3]) {
        for j in 0..self.pieces() {
            assert!(
                self.gap(j, self.q0) >= -1e-12,
                "initial configuration is not admissible (piece {j})"
            );
        }
        let mut out = Vec::new();
        let (mut ts, mut qs, mut vs) = (0.0, self.q0, self.v0);
        while out.len() < max_impacts {
            let Some((tau, j)) = self.next_impact(qs, vs, t_end - ts) else {
                break;
            };
            let (qi, vi) = self.fly(qs, vs, tau);
            let vp = self.reflect(j, qi, vi);
            out.push(RigidImpact {
                t: ts + tau,
                q: qi,
                v_before: vi,
                v_after: vp,
                piece: j,
            });
            ts += tau;
            qs = qi;
            vs = vp;
        }
        (out, ts, qs, vs)
    }

    /// Impacts in `[0, t_end]`, at most `max_impacts` of them, in time order.
    ///
    /// # Panics
    /// If the initial configuration is not admissible.
    pub fn impacts(&self, t_end: f64, max_impacts: usize) -> Vec<RigidImpact> {
        self.simulate(t_end, max_impacts).0
    }

    /// Compute the trajectory on `[0, t_end]` (all impacts) for repeated
    /// dense evaluation.
    pub fn trajectory(&self, t_end: f64) -> RigidBodyTrajectory {
        RigidBodyTrajectory {
            body: *self,
            t_end,
            impacts: self.impacts(t_end, usize::MAX),
        }
    }

    /// Configuration `(θ, x, y)` and velocity `(θ̇, ẋ, ẏ)` at time `t ≥ 0`
    /// (post-impact at an impact time). Recomputes the impacts up to `t`;
    /// use [`RigidBodyReference::trajectory`] for many evaluations.
    pub fn state_at(&self, t: f64) -> ([f64; 3], [f64; 3]) {
        let (_, ts, qs, vs) = self.simulate(t, usize::MAX);
        self.fly(qs, vs, t - ts)
    }
}

impl RigidBodyTrajectory {
    /// The body.
    pub fn body(&self) -> &RigidBodyReference {
        &self.body
    }

    /// End of the computed interval (s).
    pub fn t_end(&self) -> f64 {
        self.t_end
    }

    /// All impacts in `[0, t_end]`.
    pub fn impacts(&self) -> &[RigidImpact] {
        &self.impacts
    }

    /// State `(q, v)` at `t ∈ [0, t_end]` (post-impact at an impact time).
    pub fn state_at(&self, t: f64) -> ([f64; 3], [f64; 3]) {
        let i = self.impacts.partition_point(|imp| imp.t <= t);
        match i {
            0 => self.body.fly(self.body.q0, self.body.v0, t),
            _ => {
                let imp = &self.impacts[i - 1];
                self.body.fly(imp.q, imp.v_after, t - imp.t)
            }
        }
    }
}
