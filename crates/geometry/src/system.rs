//! The trait a user implements to describe a system.

use nalgebra::{SMatrix, SVector};
use num_dual::{DualNum, DualSVec};

/// A real scalar that automatic differentiation can push through: `f64`
/// itself or any num-dual number over `f64` (nested ones included).
///
/// Write model functions once, generic over `S: AdScalar`; every derivative
/// the integrators need is then exact.
///
/// # Constants: on the right
///
/// Arithmetic with plain `f64` works with the constant **on the right**:
/// `x * 0.5`, `x + 1.0`, `x / m`, `x.powi(2)`. Rust cannot offer `0.5 * x`
/// for a generic `S` (the impl of `Mul<S> for f64` would have to live in
/// the crate of `f64` or of `S`), so `0.5 * x` does not compile: write
/// `x * 0.5`, `-(x * c)` for `-c * x`, and `S::from(c) - x` (or `-x + c`)
/// for `c - x`. A constant standing alone is `S::from(c)`.
///
/// ```
/// use diracvi_geometry::AdScalar;
/// /// `½ m v² − m g y`, generic over the AD scalar.
/// fn energy_like<S: AdScalar>(v: S, y: S, m: f64, g: f64) -> S {
///     v * v * (0.5 * m) - y * (m * g) // the f64 factors are multiplied first
/// }
/// assert_eq!(energy_like(2.0, 1.0, 1.0, 9.8), 2.0 - 9.8);
/// ```
pub trait AdScalar: DualNum<Primitive = f64> + Copy + 'static {}
impl<T: DualNum<Primitive = f64> + Copy + 'static> AdScalar for T {}

/// A mechanical or electrical system with `N` configuration coordinates and
/// `M` constraint one-forms (`M = 0`: unconstrained).
///
/// A model supplies data and a few functions; everything else (discrete
/// Lagrangian, its derivatives, discrete constraints, boundary frames, the
/// steppers and the impact integrator) is derived.
///
/// # Example
/// ```
/// use diracvi_geometry::{AdScalar, SMatrix, SVector, System};
/// /// A unit-mass particle above the floor `y >= 0` under gravity 9.8.
/// struct Particle;
/// impl System<2, 0> for Particle {
///     fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
///         v.dot(v) * 0.5 - q[1] * 9.8
///     }
///     fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
///         SMatrix::zeros()
///     }
///     fn boundary_count(&self) -> usize { 1 }
///     fn boundary<S: AdScalar>(&self, _j: usize, q: &SVector<S, 2>) -> S { q[1] }
/// }
/// let e = Particle.energy(&SVector::from([0.0, 2.0]), &SVector::from([1.0, 0.0]));
/// assert!((e - (0.5 + 19.6)).abs() < 1e-12);
/// ```
pub trait System<const N: usize, const M: usize> {
    /// The Lagrangian `L(q, v)`, possibly degenerate.
    fn lagrangian<S: AdScalar>(&self, q: &SVector<S, N>, v: &SVector<S, N>) -> S;

    /// Constraint one-forms as the rows of `A(q)` (`M × N`): the admissible
    /// velocities are `Δ_Q(q) = ker A(q)`. Return `SMatrix::zeros()` when `M = 0`.
    fn constraint_forms<S: AdScalar>(&self, q: &SVector<S, N>) -> SMatrix<S, M, N>;

    /// Number of smooth pieces `g_j` of the admissible set
    /// `S = { q : g_j(q) ≥ 0 for all j }` (0: no boundary).
    fn boundary_count(&self) -> usize {
        0
    }

    /// The boundary function `g_j(q)`; `q` is admissible for piece `j` iff
    /// `g_j(q) ≥ 0`. Only called with `j < boundary_count()`.
    fn boundary<S: AdScalar>(&self, j: usize, q: &SVector<S, N>) -> S {
        let _ = (j, q);
        S::from(1.0)
    }

    /// The Hamiltonian `H(q, p)` (the Legendre transform of a regular `L`),
    /// or `None` when the system has none (degenerate `L`).
    fn hamiltonian<S: AdScalar>(&self, q: &SVector<S, N>, p: &SVector<S, N>) -> Option<S> {
        let _ = (q, p);
        None
    }

    /// A *gyroscopic* (workless) generalized force `F(q, v)`, or `None` (the
    /// default) for a system without one. The equations of motion are the
    /// Lagrange–d'Alembert equations `d/dt ∂L/∂v − ∂L/∂q = F(q, v) + A(q)ᵀ λ`.
    ///
    /// `F` must do no work, `⟨F(q, v), v⟩ = 0` for every `(q, v)` (for
    /// example `F = B(q, v) v` with `B` antisymmetric: a magnetic force, a
    /// Coriolis force, or the curvature term of a Chaplygin reduction,
    /// docs/theory.md §7.3), so the energy `E(q, v)` stays a conserved
    /// quantity and the elastic-impact law keeps its energy condition.
    /// [`check_initial`] rejects a force that works on the initial data.
    ///
    /// The discrete steppers take it through the discrete
    /// Lagrange–d'Alembert principle (docs/theory.md §2.4): the discrete
    /// Lagrangian's derivatives carry the discrete forces of
    /// [`DiscreteLagrangian`](crate::DiscreteLagrangian). The discrete
    /// Hamiltonian stepper refuses such a system.
    ///
    /// Return `Some` for every argument or `None` for every argument.
    fn gyroscopic_force<S: AdScalar>(
        &self,
        q: &SVector<S, N>,
        v: &SVector<S, N>,
    ) -> Option<SVector<S, N>> {
        let _ = (q, v);
        None
    }

    /// A model's own discrete constraint `ω_d(q0, q1)` (velocity units, `M`
    /// components), or `None` to use the generic choices of
    /// [`ConstraintDiscretization`](crate::ConstraintDiscretization).
    fn discrete_constraint<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        h: S,
    ) -> Option<SVector<S, M>> {
        let _ = (q0, q1, h);
        None
    }

    /// The energy `E(q, v) = ⟨∂L/∂v, v⟩ − L(q, v)` (by automatic
    /// differentiation unless overridden).
    fn energy(&self, q: &SVector<f64, N>, v: &SVector<f64, N>) -> f64 {
        let p = self.momentum(q, v);
        p.dot(v) - self.lagrangian(q, v)
    }

    /// A scale for energies at `(q, v)`, to report relative energy errors
    /// that stay meaningful when the energy itself is near zero:
    /// `|⟨∂L/∂v, v⟩| + |L(q, v)|` (for `L = T − V`: `2T + |T − V| ≥ T + |V|`
    /// up to a factor 2). It vanishes only at rest where `L = 0`; callers
    /// floor it by the energy itself.
    fn energy_scale(&self, q: &SVector<f64, N>, v: &SVector<f64, N>) -> f64 {
        let p = self.momentum(q, v);
        p.dot(v).abs() + self.lagrangian(q, v).abs()
    }

    /// The Legendre map `p = ∂L/∂v(q, v)` (by automatic differentiation).
    fn momentum(&self, q: &SVector<f64, N>, v: &SVector<f64, N>) -> SVector<f64, N> {
        let qd: SVector<DualSVec<f64, N>, N> = crate::ad::constants(q);
        let vd = crate::ad::seed_gradient(v);
        crate::ad::gradient_of(self.lagrangian(&qd, &vd))
    }
}

/// The momentum `p = ∂L/∂v(q, v)` and the velocity Hessian `∂²L/∂v²(q, v)`
/// (by automatic differentiation).
pub fn legendre_jet<Sy, const N: usize, const M: usize>(
    system: &Sy,
    q: &SVector<f64, N>,
    v: &SVector<f64, N>,
) -> (SVector<f64, N>, nalgebra::SMatrix<f64, N, N>)
where
    Sy: System<N, M> + ?Sized,
{
    let qd: SVector<num_dual::Dual2SVec<f64, N>, N> = crate::ad::constants(q);
    let vd = crate::ad::seed_hessian(v);
    let (_, p, hess) = crate::ad::hessian_of(system.lagrangian(&qd, &vd));
    (p, hess)
}

/// The inverse Legendre map: the velocity `v` with `∂L/∂v(q, v) = p`, by
/// Newton's method from `guess` (exact in one iteration for `L` quadratic in
/// `v`). Converged when the correction is below `1e-14 max(1, |v|)`.
///
/// # Errors
/// [`GeometryError::LegendreNotInvertible`](crate::GeometryError::LegendreNotInvertible)
/// when `∂²L/∂v²` is singular (a degenerate Lagrangian) or Newton does not
/// converge in 30 iterations; [`GeometryError::NonFinite`](crate::GeometryError::NonFinite)
/// for non-finite input.
pub fn velocity_from_momentum<Sy, const N: usize, const M: usize>(
    system: &Sy,
    q: &SVector<f64, N>,
    p: &SVector<f64, N>,
    guess: &SVector<f64, N>,
) -> Result<SVector<f64, N>, crate::GeometryError>
where
    Sy: System<N, M> + ?Sized,
{
    crate::ensure_finite("q", q.as_slice())?;
    crate::ensure_finite("p", p.as_slice())?;
    let mut v = if guess.iter().all(|x| x.is_finite()) {
        *guess
    } else {
        SVector::zeros()
    };
    let scale = p.amax().max(1.0);
    let mut residual = f64::INFINITY;
    for iterations in 0..30 {
        let (pv, hess) = legendre_jet(system, q, &v);
        let r = pv - p;
        residual = r.amax() / scale;
        // Generic `N`: nalgebra's static LU needs a type-level dimension.
        let dense = nalgebra::DMatrix::from_fn(N, N, |i, j| hess[(i, j)]);
        let rhs = nalgebra::DVector::from_fn(N, |i, _| r[i]);
        let Some(dv) = dense
            .lu()
            .solve(&rhs)
            .map(|x| SVector::<f64, N>::from_fn(|i, _| x[i]))
        else {
            return Err(crate::GeometryError::LegendreNotInvertible {
                q: q.as_slice().to_vec(),
                residual,
                iterations,
            });
        };
        if !dv.iter().all(|x| x.is_finite()) {
            break;
        }
        v -= dv;
        if dv.amax() <= 1e-14 * v.amax().max(1.0) {
            return Ok(v);
        }
    }
    Err(crate::GeometryError::LegendreNotInvertible {
        q: q.as_slice().to_vec(),
        residual,
        iterations: 30,
    })
}

/// Relative tolerance of [`check_initial`] on the constraint residual.
pub const CONSTRAINT_TOLERANCE: f64 = 1e-9;

/// Check continuous initial data `(q0, v0)` against a system:
///
/// * every component finite;
/// * `q0` admissible: `g_j(q0) ≥ 0` for every boundary piece, to within
///   its touching band ([`touch_band`](crate::touch_band): a point computed
///   to lie on a wall is accepted); the most violated piece is reported;
/// * `v0 ∈ Δ_Q(q0)`: `|Σ_i A_{ai}(q0) v0_i| ≤ 1e-9 · max(1, Σ_i |A_{ai}(q0) v0_i|)`
///   for every row `a` (the most violated row is reported);
/// * a [gyroscopic force](System::gyroscopic_force), if any, does no work:
///   `|⟨F(q0, v0), v0⟩| ≤ 1e-9 · Σ_i |F_i v0_i|`.
///
/// # Errors
/// [`GeometryError::NonFinite`](crate::GeometryError::NonFinite), [`GeometryError::InitialInadmissible`](crate::GeometryError::InitialInadmissible),
/// [`GeometryError::InitialViolatesConstraint`](crate::GeometryError::InitialViolatesConstraint),
/// [`GeometryError::ForceDoesWork`](crate::GeometryError::ForceDoesWork).
pub fn check_initial<Sy, const N: usize, const M: usize>(
    system: &Sy,
    q0: &SVector<f64, N>,
    v0: &SVector<f64, N>,
) -> Result<(), crate::GeometryError>
where
    Sy: System<N, M>,
{
    crate::ensure_finite("q(0)", q0.as_slice())?;
    crate::ensure_finite("v(0)", v0.as_slice())?;
    if let Some((piece, g)) = crate::violated_piece(system, q0)? {
        return Err(crate::GeometryError::InitialInadmissible { piece, g });
    }
    let a = system.constraint_forms(q0);
    let mut worst: Option<(usize, f64, f64, f64)> = None;
    for row in 0..M {
        let residual = (0..N).map(|i| a[(row, i)] * v0[i]).sum::<f64>().abs();
        let scale = (0..N)
            .map(|i| (a[(row, i)] * v0[i]).abs())
            .sum::<f64>()
            .max(1.0);
        let tolerance = CONSTRAINT_TOLERANCE * scale;
        let ratio = residual / tolerance;
        if (residual > tolerance || residual.is_nan()) && worst.is_none_or(|w| ratio > w.3) {
            worst = Some((row, residual, tolerance, ratio));
        }
    }
    if let Some((row, residual, tolerance, _)) = worst {
        return Err(crate::GeometryError::InitialViolatesConstraint {
            row,
            residual,
            tolerance,
        });
    }
    if let Some(force) = system.gyroscopic_force(q0, v0) {
        let power = force.dot(v0);
        let scale: f64 = force
            .iter()
            .zip(v0.iter())
            .map(|(f, v)| (f * v).abs())
            .sum();
        let tolerance = CONSTRAINT_TOLERANCE * scale;
        if power.is_nan() || power.abs() > tolerance {
            return Err(crate::GeometryError::ForceDoesWork { power, tolerance });
        }
    }
    Ok(())
}
