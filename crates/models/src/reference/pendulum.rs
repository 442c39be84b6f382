//! High-accuracy reference for the nonholonomic spherical pendulum in a
//! cylinder (\[VCI\] §4.3, docs/theory.md §5 `pendulum`).
//!
//! ## The reduced problem
//!
//! Spherical coordinates `q = (θ, φ)`, Lagrangian (\[VCI\] eq. 6)
//! `L = ½ m ℓ² (θ̇² + φ̇² sin²θ) − m g ℓ cos θ`, constraint one-form
//! `ω¹ = f(θ) dθ − dφ` with `f(θ) = f₀ + f₂ cos²θ` (the paper: `f₀ = π`,
//! `f₂ = 1`). The constraint is integrable: `φ − F(θ)` is constant with
//!
//! ```text
//! F(θ) = f₀ θ + f₂ (θ/2 + sin 2θ / 4),     F' = f,
//! φ(t) = φ(0) + F(θ(t)) − F(θ(0)).
//! ```
//!
//! For a holonomic constraint the Lagrange–d'Alembert equations are the
//! Euler–Lagrange equations of the restricted Lagrangian
//!
//! ```text
//! L₁(θ, θ̇) = ½ M(θ) θ̇² − m g ℓ cos θ,    M(θ) = m ℓ² (1 + f(θ)² sin²θ),
//! ```
//!
//! that is `M θ̈ + ½ M'(θ) θ̇² − m g ℓ sin θ = 0`, with
//! `½ M' = m ℓ² sinθ cosθ (f² − 2 f₂ f sin²θ)` (using `f' = −2 f₂ sinθ cosθ`):
//!
//! ```text
//! θ̈ = [ (g/ℓ) sin θ − sinθ cosθ (f² − 2 f₂ f sin²θ) θ̇² ] / (1 + f² sin²θ).
//! ```
//!
//! The energy `E₁ = ½ M(θ) θ̇² + m g ℓ cos θ` is conserved between impacts.
//! The bob hangs near `θ = π` (potential `m g ℓ cos θ`).
//!
//! ## Impacts
//!
//! The cylinder bounds the horizontal distance `ℓ |sin θ| ≤ R`; we use the
//! smooth gap `g(θ) = R² − ℓ² sin²θ = (R − ℓ sinθ)(R + ℓ sinθ) ≥ 0`, which
//! sees both sides of the cylinder (docs/theory.md §5 note; \[VCI\] prints `ℓ sinθ ≤ R`).
//! At an impact the momentum jump lies in `(T∂S)° + Δ° = T*Q`, the velocity
//! must stay in `Δ = span{∂θ + f ∂φ}` and the energy is conserved, so the
//! reflected root is `θ̇ → −θ̇` (and `φ̇ = f θ̇ → −φ̇`).
//!
//! ## Numerical method
//!
//! The ODE is integrated by a **Taylor-series method** of high order
//! (default 30): on every step the Taylor coefficients of `θ(t)` and `θ̇(t)`
//! are generated exactly (to round-off) by the standard recurrences of
//! automatic Taylor arithmetic (products by Cauchy convolution, `sin`/`cos`
//! by their coupled recurrence, the quotient by series division) — plain
//! `f64`, no dependency on diracvi's steppers or AD. The step is the largest
//! one (≤ 1/16 s) whose last two Taylor terms stay below `1e-18` (Jorba–Zou
//! rule; the radius of convergence is limited by the complex zeros of
//! `1 + f² sin²θ`, about 0.1 s away, so steps are ≈ 0.02–0.06 s). The state
//! is accumulated in double-word (compensated) arithmetic and step lengths
//! are made exactly representable, so rounding does not build up over long
//! horizons. The Taylor polynomials of each step are kept: a dense output
//! with the accuracy of the method.
//!
//! Events: on each step `g(θ(τ))` is sampled at `event_samples + 1` points;
//! the first sub-interval where `g` goes from `≥ 0` to `< 0` — or where `g`
//! has an interior minimum below zero (detected by the sign change of
//! `dg/dt`) — is refined by safeguarded Newton/bisection on the polynomial to
//! round-off. The step is cut at the impact time, `θ̇` is reversed and
//! integration restarts from the impact point.
//!
//! Accuracy (see `tests/reference_pendulum.rs`): on `[0, 5]`, halving the
//! largest step with order 34 and tolerance `1e-22` changes `θ` by < 1e-13
//! and the impact times by ~1e-15; `E₁` is conserved to ~1e-14 relative;
//! impact times agree with an independent quadrature of `dt = dθ/θ̇(θ)` to
//! ~1e-15 (1.4e-13 after 100 s); with `f ≡ 0` the period matches the
//! elliptic-integral (AGM) formula to < 1e-12. `solve(100.0)` takes about
//! 20 ms in release, 0.5 s in debug builds.

use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Physical parameters and initial data of the pendulum (paper defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PendulumReferenceParams {
    /// Mass `m > 0` (kg). Default 1. (It cancels from the motion.)
    pub m: f64,
    /// Gravitational acceleration `g > 0` (m/s²). Default 9.8.
    pub g: f64,
    /// Pendulum length `ℓ > 0` (m). Default 2.
    pub ell: f64,
    /// Cylinder radius `R > 0` (m). Default 1.5.
    pub radius: f64,
    /// Constant part `f₀` of `f(θ) = f₀ + f₂ cos²θ` (dimensionless). Default `π`.
    pub f0: f64,
    /// `cos²` coefficient `f₂` of `f(θ) = f₀ + f₂ cos²θ`. Default 1.
    pub f2: f64,
    /// Initial polar angle `θ(0)` (rad). Default `0.75 π`.
    pub theta0: f64,
    /// Initial azimuth `φ(0)` (rad). Default 0.
    pub phi0: f64,
    /// Initial polar velocity `θ̇(0)` (rad/s). Default `0.25 π`. The azimuthal
    /// velocity follows from the constraint: `φ̇(0) = f(θ(0)) θ̇(0)`
    /// (`= 0.25 (π + 0.5) π` with the defaults, as in \[VCI\]).
    pub theta_dot0: f64,
}

impl Default for PendulumReferenceParams {
    fn default() -> Self {
        Self {
            m: 1.0,
            g: 9.8,
            ell: 2.0,
            radius: 1.5,
            f0: PI,
            f2: 1.0,
            theta0: 0.75 * PI,
            phi0: 0.0,
            theta_dot0: 0.25 * PI,
        }
    }
}

impl PendulumReferenceParams {
    /// `f(θ) = f₀ + f₂ cos²θ`, the ratio `φ̇ / θ̇` imposed by the constraint.
    pub fn f(&self, theta: f64) -> f64 {
        let c = theta.cos();
        self.f0 + self.f2 * c * c
    }

    /// Antiderivative `F(θ) = f₀ θ + f₂ (θ/2 + sin 2θ / 4)` of `f`, `F(0) = 0`.
    pub fn big_f(&self, theta: f64) -> f64 {
        self.f0 * theta + self.f2 * (0.5 * theta + 0.25 * (2.0 * theta).sin())
    }

    /// Reduced inertia `M(θ) = m ℓ² (1 + f(θ)² sin²θ)` (kg m²).
    pub fn inertia(&self, theta: f64) -> f64 {
        let f = self.f(theta);
        let s = theta.sin();
        self.m * self.ell * self.ell * (1.0 + f * f * s * s)
    }

    /// Gap `g(θ) = R² − ℓ² sin²θ` (m²), `≥ 0` inside the cylinder; evaluated
    /// as `(R − ℓ sinθ)(R + ℓ sinθ)` for accuracy near the wall.
    pub fn gap(&self, theta: f64) -> f64 {
        let ls = self.ell * theta.sin();
        (self.radius - ls) * (self.radius + ls)
    }

    /// Energy `E₁ = ½ M(θ) θ̇² + m g ℓ cos θ` (J).
    pub fn energy(&self, theta: f64, theta_dot: f64) -> f64 {
        0.5 * self.inertia(theta) * theta_dot * theta_dot + self.m * self.g * self.ell * theta.cos()
    }

    /// Right-hand side `θ̈(θ, θ̇)` of the reduced Euler–Lagrange equation
    /// (rad/s²), in plain `f64`.
    pub fn theta_ddot(&self, theta: f64, theta_dot: f64) -> f64 {
        let (s, c) = theta.sin_cos();
        let f = self.f0 + self.f2 * c * c;
        let d = f * f - 2.0 * self.f2 * f * s * s;
        ((self.g / self.ell) * s - s * c * d * theta_dot * theta_dot) / (1.0 + f * f * s * s)
    }

    /// Initial azimuthal velocity `φ̇(0) = f(θ(0)) θ̇(0)` (rad/s).
    pub fn phi_dot0(&self) -> f64 {
        self.f(self.theta0) * self.theta_dot0
    }
}

/// Options of the Taylor-series integrator.
///
/// The step on each Taylor expansion is
/// `h = min(step, t_end − t, (tol/|c_N|)^{1/N}, (tol/|c_{N−1}|)^{1/(N−1)})`
/// over the last two coefficients `c` of both `θ` and `θ̇` (the Jorba–Zou
/// step-size rule), so the last retained terms are below `tolerance`; it is
/// shortened further only at impacts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TaylorOptions {
    /// Largest step (s). Default `1/16`.
    pub step: f64,
    /// Order `N ≥ 4` of the Taylor polynomials. Default 30.
    pub order: usize,
    /// Bound on the size of the last two Taylor terms on a step (rad, rad/s).
    /// Default `1e-18`.
    pub tolerance: f64,
    /// Number of sub-intervals per step on which the gap is sampled for
    /// event detection (≥ 1). Default 8.
    pub event_samples: usize,
}

impl Default for TaylorOptions {
    fn default() -> Self {
        Self {
            step: 1.0 / 16.0,
            order: 30,
            tolerance: 1e-18,
            event_samples: 8,
        }
    }
}

/// One impact with the cylinder.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PendulumImpact {
    /// Impact time (s).
    pub t: f64,
    /// Polar angle at the impact (rad); `ℓ |sin θ| = R` to round-off.
    pub theta: f64,
    /// Azimuth at the impact (rad).
    pub phi: f64,
    /// `θ̇` just before the impact (rad/s).
    pub theta_dot_before: f64,
    /// `θ̇` just after the impact (`= −θ̇_before`) (rad/s).
    pub theta_dot_after: f64,
}

/// The reference integrator: parameters plus numerical options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct NonholonomicPendulumReference {
    /// Physical parameters and initial data.
    pub params: PendulumReferenceParams,
    /// Integrator options.
    pub options: TaylorOptions,
}

/// One step of the dense output: the Taylor polynomials of `θ` and `θ̇`
/// in `τ = t − t0`, valid from `t0` to the next segment's `t0`.
#[derive(Debug, Clone)]
struct Segment {
    t0: f64,
    theta: Vec<f64>,
    omega: Vec<f64>,
}

/// A computed reference trajectory on `[0, t_end]` with dense output.
#[derive(Debug, Clone)]
pub struct PendulumSolution {
    params: PendulumReferenceParams,
    t_end: f64,
    segments: Vec<Segment>,
    impacts: Vec<PendulumImpact>,
    impact_times: Vec<f64>,
    truncation: f64,
}

/// Knuth's error-free sum: `a + b = s + e` exactly.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

fn horner(c: &[f64], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &ck| acc * x + ck)
}

fn conv(a: &[f64], b: &[f64], k: usize) -> f64 {
    (0..=k).map(|j| a[j] * b[k - j]).sum()
}

/// Work arrays of the Taylor recurrences (all of length `order + 1`).
struct TaylorWork {
    theta: Vec<f64>,
    omega: Vec<f64>,
    s: Vec<f64>,
    c: Vec<f64>,
    f: Vec<f64>,
    ff: Vec<f64>,
    s2: Vec<f64>,
    sc: Vec<f64>,
    d: Vec<f64>,
    den: Vec<f64>,
    w: Vec<f64>,
    p: Vec<f64>,
    q: Vec<f64>,
}

impl TaylorWork {
    fn new(order: usize) -> Self {
        let z = vec![0.0; order + 1];
        Self {
            theta: z.clone(),
            omega: z.clone(),
            s: z.clone(),
            c: z.clone(),
            f: z.clone(),
            ff: z.clone(),
            s2: z.clone(),
            sc: z.clone(),
            d: z.clone(),
            den: z.clone(),
            w: z.clone(),
            p: z.clone(),
            q: z,
        }
    }

    /// Taylor coefficients (in `τ`) of `θ` and `θ̇` up to `order` from
    /// `(θ, θ̇)` at `τ = 0`.
    ///
    /// `theta_lo` is the low part of a double-word `θ = theta + theta_lo`;
    /// it enters `sin θ`, `cos θ` to first order (it is below half an ulp).
    fn expand(&mut self, pp: &PendulumReferenceParams, theta: f64, theta_lo: f64, omega: f64) {
        let n = self.theta.len() - 1;
        let g_over_l = pp.g / pp.ell;
        self.theta[0] = theta;
        self.omega[0] = omega;
        for k in 0..n {
            if k == 0 {
                let (s, c) = theta.sin_cos();
                self.s[0] = s + c * theta_lo;
                self.c[0] = c - s * theta_lo;
            } else {
                // d/dt sin θ = cos θ θ̇, d/dt cos θ = −sin θ θ̇.
                let kf = k as f64;
                let mut ss = 0.0;
                let mut cc = 0.0;
                for j in 1..=k {
                    let jt = j as f64 * self.theta[j];
                    ss += jt * self.c[k - j];
                    cc += jt * self.s[k - j];
                }
                self.s[k] = ss / kf;
                self.c[k] = -cc / kf;
            }
            // f = f0 + f2 c²
            self.f[k] = pp.f2 * conv(&self.c, &self.c, k) + if k == 0 { pp.f0 } else { 0.0 };
            self.ff[k] = conv(&self.f, &self.f, k);
            self.s2[k] = conv(&self.s, &self.s, k);
            self.sc[k] = conv(&self.s, &self.c, k);
            // D = f² − 2 f2 f s²
            self.d[k] = self.ff[k] - 2.0 * pp.f2 * conv(&self.f, &self.s2, k);
            // den = 1 + f² s²
            self.den[k] = conv(&self.ff, &self.s2, k) + if k == 0 { 1.0 } else { 0.0 };
            // w = θ̇², p = sinθ cosθ D
            self.w[k] = conv(&self.omega, &self.omega, k);
            self.p[k] = conv(&self.sc, &self.d, k);
            let num = g_over_l * self.s[k] - conv(&self.p, &self.w, k);
            // q = num / den
            let mut acc = num;
            for j in 1..=k {
                acc -= self.den[j] * self.q[k - j];
            }
            self.q[k] = acc / self.den[0];
            let k1 = (k + 1) as f64;
            self.theta[k + 1] = self.omega[k] / k1;
            self.omega[k + 1] = self.q[k] / k1;
        }
    }
}

impl NonholonomicPendulumReference {
    /// A reference with the given parameters and default [`TaylorOptions`].
    pub fn new(params: PendulumReferenceParams) -> Self {
        Self {
            params,
            options: TaylorOptions::default(),
        }
    }

    /// A reference with explicit integrator options.
    pub fn with_options(params: PendulumReferenceParams, options: TaylorOptions) -> Self {
        Self { params, options }
    }

    /// Integrate on `[0, t_end]`, locating every impact.
    ///
    /// # Panics
    /// If `t_end < 0`, the options are invalid (`step ≤ 0`, `order < 4`,
    /// `tolerance ≤ 0`, `event_samples = 0`), or the initial angle lies outside the cylinder
    /// (`g(θ₀) < −1e-12 R²`).
    pub fn solve(&self, t_end: f64) -> PendulumSolution {
        let pp = self.params;
        let opt = self.options;
        assert!(t_end >= 0.0, "t_end must be non-negative");
        assert!(opt.step > 0.0 && opt.order >= 4 && opt.tolerance > 0.0 && opt.event_samples >= 1);
        assert!(
            pp.gap(pp.theta0) >= -1e-12 * pp.radius * pp.radius,
            "initial angle outside the cylinder"
        );
        let n = opt.order;
        let mut work = TaylorWork::new(n);
        let mut segments = Vec::new();
        let mut impacts = Vec::new();
        let mut truncation = 0.0f64;
        // The state is carried in double-word form `hi + lo` (compensated
        // summation of the per-step increments), so that rounding does not
        // accumulate over long horizons; the time grid is exact by construction.
        let (mut t, mut theta, mut omega) = (0.0f64, pp.theta0, pp.theta_dot0);
        let (mut theta_lo, mut omega_lo) = (0.0f64, 0.0f64);
        let t_tol = 1e-15 * t_end.max(1.0);
        while t_end - t > t_tol {
            work.expand(&pp, theta, theta_lo, omega);
            let mut h = opt.step.min(t_end - t);
            for (c, k) in [
                (work.theta[n], n),
                (work.omega[n], n),
                (work.theta[n - 1], n - 1),
                (work.omega[n - 1], n - 1),
            ] {
                if c != 0.0 {
                    h = h.min((opt.tolerance / c.abs()).powf(1.0 / k as f64));
                }
            }
            // Make the step exactly representable as a difference of times,
            // so that `t` carries no accumulated rounding.
            let h = (t + h) - t;
            // A-posteriori size of the last two terms on the step.
            let hn1 = h.powi(n as i32 - 1);
            let est = (work.theta[n - 1].abs() + work.omega[n - 1].abs()) * hn1
                + (work.theta[n].abs() + work.omega[n].abs()) * hn1 * h;
            truncation = truncation.max(est);
            let event = find_event(&pp, &work.theta, &work.omega, h, opt.event_samples)
                .map(|tau| (t + tau) - t);
            let len = event.unwrap_or(h);
            segments.push(Segment {
                t0: t,
                theta: work.theta.clone(),
                omega: work.omega.clone(),
            });
            // Increments Σ_{k≥1} c_k len^k (θ̇'s low part advances θ too).
            let d_theta = horner(&work.theta[1..], len) * len + omega_lo * len;
            let d_omega = horner(&work.omega[1..], len) * len;
            (theta, theta_lo) = two_sum(theta, theta_lo + d_theta);
            (omega, omega_lo) = two_sum(omega, omega_lo + d_omega);
            t += len;
            if event.is_some() {
                impacts.push(PendulumImpact {
                    t,
                    theta,
                    phi: pp.phi0 + pp.big_f(theta) - pp.big_f(pp.theta0),
                    theta_dot_before: omega,
                    theta_dot_after: -omega,
                });
                omega = -omega;
                omega_lo = -omega_lo;
            }
        }
        if segments.is_empty() {
            // t_end = 0: keep a degenerate segment for the dense output.
            work.expand(&pp, theta, 0.0, omega);
            segments.push(Segment {
                t0: 0.0,
                theta: work.theta.clone(),
                omega: work.omega.clone(),
            });
        }
        let impact_times = impacts.iter().map(|i| i.t).collect();
        PendulumSolution {
            params: pp,
            t_end,
            segments,
            impacts,
            impact_times,
            truncation,
        }
    }
}

/// `(g(θ(τ)), dg/dτ)` on the step polynomials.
fn gap_and_rate(pp: &PendulumReferenceParams, th: &[f64], om: &[f64], tau: f64) -> (f64, f64) {
    let theta = horner(th, tau);
    let omega = horner(om, tau);
    let (s, c) = theta.sin_cos();
    (pp.gap(theta), -2.0 * pp.ell * pp.ell * s * c * omega)
}

/// First `τ ∈ (0, h]` where the gap crosses from `≥ 0` to `< 0`, if any.
fn find_event(
    pp: &PendulumReferenceParams,
    th: &[f64],
    om: &[f64],
    h: f64,
    samples: usize,
) -> Option<f64> {
    let mut a = 0.0;
    let (mut ga, mut da) = gap_and_rate(pp, th, om, a);
    for i in 1..=samples {
        let b = if i == samples {
            h
        } else {
            h * i as f64 / samples as f64
        };
        let (gb, db) = gap_and_rate(pp, th, om, b);
        if ga >= 0.0 && gb < 0.0 {
            return Some(refine_root(pp, th, om, a, b));
        }
        if ga >= 0.0 && gb >= 0.0 && da < 0.0 && db > 0.0 {
            // Interior minimum of the gap: locate it by bisection on dg/dτ.
            let (mut lo, mut hi) = (a, b);
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                if mid <= lo || mid >= hi {
                    break;
                }
                if gap_and_rate(pp, th, om, mid).1 < 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            if gap_and_rate(pp, th, om, lo).0 < 0.0 {
                return Some(refine_root(pp, th, om, a, lo));
            }
        }
        a = b;
        ga = gb;
        da = db;
    }
    None
}

/// Root of the gap in `[a, b]` with `g(a) ≥ 0 > g(b)`: Newton safeguarded by
/// bisection, to round-off.
fn refine_root(
    pp: &PendulumReferenceParams,
    th: &[f64],
    om: &[f64],
    mut a: f64,
    mut b: f64,
) -> f64 {
    let mut x = 0.5 * (a + b);
    for _ in 0..200 {
        let (gx, dx) = gap_and_rate(pp, th, om, x);
        if gx >= 0.0 {
            a = x;
        } else {
            b = x;
        }
        let newton = x - gx / dx;
        let next = if dx != 0.0 && newton > a && newton < b {
            newton
        } else {
            0.5 * (a + b)
        };
        let moved = (next - x).abs();
        x = next;
        if moved <= 2.0 * f64::EPSILON * x.abs() || b - a <= 2.0 * f64::EPSILON * b.abs() {
            // Converged to round-off (or the bracket is one ulp wide).
            return x;
        }
    }
    x
}

impl PendulumSolution {
    /// The parameters this solution was computed with.
    pub fn params(&self) -> &PendulumReferenceParams {
        &self.params
    }

    /// End of the computed interval (s).
    pub fn t_end(&self) -> f64 {
        self.t_end
    }

    /// Impact times in `(0, t_end]` (s), increasing.
    pub fn impact_times(&self) -> &[f64] {
        &self.impact_times
    }

    /// Impact records (time, angles, `θ̇` before/after).
    pub fn impacts(&self) -> &[PendulumImpact] {
        &self.impacts
    }

    /// Largest a-posteriori size of the last two Taylor terms over all steps
    /// (a proxy for the local truncation error per step).
    pub fn truncation_estimate(&self) -> f64 {
        self.truncation
    }

    /// Number of Taylor steps taken.
    pub fn steps(&self) -> usize {
        self.segments.len()
    }

    fn segment(&self, t: f64) -> (&Segment, f64) {
        let i = self
            .segments
            .partition_point(|s| s.t0 <= t)
            .saturating_sub(1);
        let seg = &self.segments[i];
        (seg, t - seg.t0)
    }

    /// `θ(t)` (rad), dense output. Meant for `t ∈ [0, t_end]`; outside it the
    /// nearest step's polynomial is extrapolated.
    pub fn theta_at(&self, t: f64) -> f64 {
        let (seg, tau) = self.segment(t);
        horner(&seg.theta, tau)
    }

    /// `θ̇(t)` (rad/s), post-impact value at an impact time.
    pub fn theta_dot_at(&self, t: f64) -> f64 {
        let (seg, tau) = self.segment(t);
        horner(&seg.omega, tau)
    }

    /// `φ(t) = φ(0) + F(θ(t)) − F(θ(0))` (rad).
    pub fn phi_at(&self, t: f64) -> f64 {
        let p = &self.params;
        p.phi0 + p.big_f(self.theta_at(t)) - p.big_f(p.theta0)
    }

    /// `(θ, θ̇, φ)` at time `t`.
    pub fn state_at(&self, t: f64) -> (f64, f64, f64) {
        let (seg, tau) = self.segment(t);
        let theta = horner(&seg.theta, tau);
        let p = &self.params;
        (
            theta,
            horner(&seg.omega, tau),
            p.phi0 + p.big_f(theta) - p.big_f(p.theta0),
        )
    }

    /// Configuration `(θ, φ)` and velocity `(θ̇, φ̇ = f(θ) θ̇)` at time `t`.
    pub fn configuration_velocity_at(&self, t: f64) -> ([f64; 2], [f64; 2]) {
        let (theta, omega, phi) = self.state_at(t);
        ([theta, phi], [omega, self.params.f(theta) * omega])
    }

    /// Energy `E₁(t)` of the dense output (J); constant for the exact motion.
    pub fn energy_at(&self, t: f64) -> f64 {
        let (theta, omega, _) = self.state_at(t);
        self.params.energy(theta, omega)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taylor_second_coefficient_matches_rhs() {
        let pp = PendulumReferenceParams::default();
        let mut w = TaylorWork::new(8);
        w.expand(&pp, 2.5, 0.0, -0.7);
        let expect = pp.theta_ddot(2.5, -0.7);
        assert!((2.0 * w.theta[2] - expect).abs() < 1e-14 * expect.abs().max(1.0));
        assert!((w.omega[1] - expect).abs() < 1e-14 * expect.abs().max(1.0));
    }
}
