//! Closed forms for rigid bodies turning about a point: the free
//! asymmetric body (Euler top) by Jacobi elliptic functions, and the
//! nutation period of the symmetric heavy (Lagrange) top by a complete
//! elliptic integral (docs/theory.md §16).
//!
//! Jacobi's `sn, cn, dn` are computed by the arithmetic–geometric mean and
//! the descending Landen transformation (Abramowitz & Stegun 16.4), `K(m)`
//! by `π / (2 AGM(1, √(1 − m)))` (A&S 17.6). Parameter convention: `m = k²`.

use std::f64::consts::PI;

/// `(sn, cn, dn)(u | m)` for `0 ≤ m ≤ 1`, by the AGM scale and the
/// descending Landen recurrence: `a₀ = 1, b₀ = √(1−m), c₀ = √m`,
/// `a_{n+1} = (a_n + b_n)/2, b_{n+1} = √(a_n b_n), c_{n+1} = (a_n − b_n)/2`
/// until `c_N` is negligible; then `φ_N = 2^N a_N u` and
/// `φ_{n−1} = (φ_n + asin(c_n sin φ_n / a_n))/2`; `sn = sin φ₀`,
/// `cn = cos φ₀`, `dn = √((1 − m) + m cn²)`. Accurate to a few ulps of
/// the amplitude for `m < 1`; `m = 1` gives `(tanh, sech, sech)`.
///
/// # Panics
/// Never; `m` outside `[0, 1]` or non-finite input gives NaN.
pub fn jacobi_sn_cn_dn(u: f64, m: f64) -> (f64, f64, f64) {
    if !(0.0..=1.0).contains(&m) || !u.is_finite() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    if m == 0.0 {
        let (s, c) = u.sin_cos();
        return (s, c, 1.0);
    }
    if m >= 1.0 {
        let sech = 1.0 / u.cosh();
        return (u.tanh(), sech, sech);
    }
    let mut a = [0.0f64; 16];
    let mut c = [0.0f64; 16];
    a[0] = 1.0;
    let mut b = (1.0 - m).sqrt();
    c[0] = m.sqrt();
    let mut n = 0;
    while n + 1 < a.len() && c[n].abs() > f64::EPSILON * a[n] {
        a[n + 1] = 0.5 * (a[n] + b);
        c[n + 1] = 0.5 * (a[n] - b);
        b = (a[n] * b).sqrt();
        n += 1;
    }
    let mut phi = 2f64.powi(n as i32) * a[n] * u;
    for k in (1..=n).rev() {
        phi = 0.5 * (phi + (c[k] * phi.sin() / a[k]).asin());
    }
    let (s, cph) = phi.sin_cos();
    // dn = √(1 − m sn²) written as √((1 − m) + m cn²): a sum of two
    // non-negative terms, accurate where A&S's cos φ₀/cos(φ₁ − φ₀) is 0/0-like
    (s, cph, ((1.0 - m) + m * cph * cph).sqrt())
}

/// The arithmetic–geometric mean of `a, b > 0`.
pub fn agm(mut a: f64, mut b: f64) -> f64 {
    for _ in 0..64 {
        if (a - b).abs() <= f64::EPSILON * a {
            break;
        }
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    0.5 * (a + b)
}

/// The complete elliptic integral of the first kind
/// `K(m) = ∫₀^{π/2} dθ/√(1 − m sin²θ) = π / (2 AGM(1, √(1 − m)))`, `0 ≤ m < 1`.
pub fn elliptic_k(m: f64) -> f64 {
    PI / (2.0 * agm(1.0, (1.0 - m).sqrt()))
}

/// The free rigid body (Euler top) with principal moments
/// `I₁ < I₂ < I₃` from a body angular velocity `ω(0) = (A, 0, C)` with
/// `M² > 2 E I₂` (motion about the axis of the largest moment):
/// ```text
/// ω₁ = A cn(τ|m),   ω₂ = B sn(τ|m),   ω₃ = C dn(τ|m),   τ = λ t,
/// B = sgn(C)·√((2 E I₃ − M²)/(I₂ (I₃ − I₂))),
/// λ = sgn(A)·√((I₃ − I₂)(M² − 2 E I₁)/(I₁ I₂ I₃)),
/// m = (I₂ − I₁)(2 E I₃ − M²)/((I₃ − I₂)(M² − 2 E I₁))
/// ```
/// (Landau & Lifshitz, *Mechanics*, §37; the signs follow from Euler's
/// equations `I₁ ω̇₁ = (I₂ − I₃) ω₂ ω₃` and their cyclic versions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EulerTop {
    inertia: [f64; 3],
    amplitude: [f64; 3],
    rate: f64,
    m: f64,
}

impl EulerTop {
    /// The solution from `ω(0) = (A, 0, C)`, or `None` unless
    /// `0 < I₁ < I₂ < I₃`, `A ≠ 0`, `C ≠ 0`, `ω₂(0) = 0` and `M² > 2 E I₂`.
    pub fn new(inertia: [f64; 3], omega0: [f64; 3]) -> Option<Self> {
        let [i1, i2, i3] = inertia;
        let [a, b0, c] = omega0;
        if !(0.0 < i1 && i1 < i2 && i2 < i3) || a == 0.0 || c == 0.0 || b0 != 0.0 {
            return None;
        }
        let m2 = (i1 * a).powi(2) + (i3 * c).powi(2);
        let e2 = i1 * a * a + i3 * c * c;
        if m2 <= e2 * i2 {
            return None;
        }
        let b = c.signum() * ((e2 * i3 - m2) / (i2 * (i3 - i2))).sqrt();
        let rate = a.signum() * ((i3 - i2) * (m2 - e2 * i1) / (i1 * i2 * i3)).sqrt();
        let m = (i2 - i1) * (e2 * i3 - m2) / ((i3 - i2) * (m2 - e2 * i1));
        Some(Self {
            inertia,
            amplitude: [a, b, c],
            rate,
            m,
        })
    }

    /// The body angular velocity `ω(t)`.
    pub fn omega(&self, t: f64) -> [f64; 3] {
        let (sn, cn, dn) = jacobi_sn_cn_dn(self.rate * t, self.m);
        let [a, b, c] = self.amplitude;
        [a * cn, b * sn, c * dn]
    }

    /// The body angular momentum `Π(t) = I ω(t)`.
    pub fn body_momentum(&self, t: f64) -> [f64; 3] {
        let w = self.omega(t);
        [
            self.inertia[0] * w[0],
            self.inertia[1] * w[1],
            self.inertia[2] * w[2],
        ]
    }

    /// The elliptic parameter `m = k²`.
    pub fn parameter(&self) -> f64 {
        self.m
    }

    /// The period `4 K(m)/|λ|` of `ω(t)`.
    pub fn period(&self) -> f64 {
        4.0 * elliptic_k(self.m) / self.rate.abs()
    }
}

/// The nutation period of the symmetric heavy (Lagrange) top: moments
/// `A = I₁ = I₂` and `C = I₃` about the fixed point, `mgℓ` the weight times
/// the distance of the centre of mass, energy `E`, Noether momenta `p_φ`
/// (about the vertical) and `p_ψ` (about the symmetry axis).
///
/// With `u = cos θ` (θ the tilt of the axis), the energy gives
/// `u̇² = f(u) = (1 − u²)(α − β u) − (a − b u)²`, `α = (2E − p_ψ²/C)/A`,
/// `β = 2mgℓ/A`, `a = p_φ/A`, `b = p_ψ/A`, a cubic with roots
/// `u₁ ≤ u₂ ≤ 1 < u₃`; `u` oscillates in `[u₁, u₂]` with period
/// `T = 2∫_{u₁}^{u₂} du/√f = 4 K(m)/√(β (u₃ − u₁))`, `m = (u₂ − u₁)/(u₃ − u₁)`.
/// Returns `(T, u₁, u₂)`, or `None` when the cubic has no such roots
/// (`mgℓ ≤ 0`, or a steady precession `u₁ = u₂`).
pub fn lagrange_top_nutation(
    a_moment: f64,
    c_moment: f64,
    mgl: f64,
    energy: f64,
    p_phi: f64,
    p_psi: f64,
) -> Option<(f64, f64, f64)> {
    if !(mgl > 0.0 && a_moment > 0.0 && c_moment > 0.0) {
        return None;
    }
    let alpha = (2.0 * energy - p_psi * p_psi / c_moment) / a_moment;
    let beta = 2.0 * mgl / a_moment;
    let (a, b) = (p_phi / a_moment, p_psi / a_moment);
    let f = |u: f64| (1.0 - u * u) * (alpha - beta * u) - (a - b * u).powi(2);
    // f(±1) ≤ 0, f → +∞: one root above 1; the other two in [−1, 1]
    // around the maximum of f there. Locate by sampling, refine by bisection.
    let bisect = |mut lo: f64, mut hi: f64| {
        let rising = f(hi) > f(lo);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if (f(mid) > 0.0) == rising {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        0.5 * (lo + hi)
    };
    let samples = 4000;
    let (mut best, mut best_u) = (f64::NEG_INFINITY, 0.0);
    for k in 0..=samples {
        let u = -1.0 + 2.0 * k as f64 / samples as f64;
        if f(u) > best {
            (best, best_u) = (f(u), u);
        }
    }
    if best <= 0.0 {
        return None;
    }
    let u1 = bisect(-1.0, best_u);
    let u2 = bisect(1.0, best_u);
    let mut hi = 2.0;
    while f(hi) <= 0.0 {
        hi *= 2.0;
    }
    let u3 = bisect(1.0, hi);
    let m = (u2 - u1) / (u3 - u1);
    Some((4.0 * elliptic_k(m) / (beta * (u3 - u1)).sqrt(), u1, u2))
}
