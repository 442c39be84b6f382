//! Discretization maps `Ψ_d^h = (R̃^h)^{-1} : (q0, q1) ↦ (q, v) ∈ TQ`
//! (docs/theory.md §2, \[DDM\] §9.1).

use crate::{AdScalar, Euclidean, GeometryError, Retraction};
use nalgebra::SVector;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A discretization map with its inverse and the displacement `R_{q0}^{-1}(q1)`
/// of its underlying retraction (which the discrete constraints `ω_{d±}` use).
pub trait DiscretizationMap<const N: usize> {
    /// Short name for messages and summaries.
    fn name(&self) -> &'static str;

    /// `Ψ_d^h(q0, q1) = (q, v)`.
    ///
    /// # Errors
    /// When the underlying retraction inverse is undefined at `(q0, q1)`.
    fn psi<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        h: S,
    ) -> Result<(SVector<S, N>, SVector<S, N>), GeometryError>;

    /// `Ψ_d^h(q0, q1)` given also the chart increment `d = q1 − q0` carried
    /// exactly. The steppers solve for `d` (not for `q1`, which is only known
    /// rounded to `ulp(q1)`), so the velocity `d/h` loses no digits to the
    /// cancellation in `q1 − q0`; the maps of `R^n` override this, the default
    /// ignores `d`.
    ///
    /// # Errors
    /// As [`psi`](Self::psi).
    #[inline(always)]
    fn psi_step<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        d: &SVector<S, N>,
        h: S,
    ) -> Result<(SVector<S, N>, SVector<S, N>), GeometryError> {
        let _ = d;
        self.psi(q0, q1, h)
    }

    /// `R̃^h(q, v) = (q0, q1)`, the inverse of [`psi`](Self::psi).
    ///
    /// # Errors
    /// When the underlying retraction is undefined.
    fn psi_inverse(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        h: f64,
    ) -> Result<(SVector<f64, N>, SVector<f64, N>), GeometryError>;

    /// `R_{q0}^{-1}(q1)` of the underlying retraction (a displacement, not
    /// divided by `h`).
    ///
    /// # Errors
    /// When the retraction inverse is undefined.
    fn displacement<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError>;

    /// [`displacement`](Self::displacement) given also the exact chart
    /// increment `d = q1 − q0` (see [`psi_step`](Self::psi_step)).
    ///
    /// # Errors
    /// As [`displacement`](Self::displacement).
    #[inline]
    fn displacement_step<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        d: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        let _ = d;
        self.displacement(q0, q1)
    }
}

/// The two discretizations of `R^n` in docs/theory.md §2, selectable at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Discretization {
    /// Symplectic-Euler type: `Ψ_d(q0, q1) = (q0, (q1 − q0)/h)` (\[DDM\] §6, \[VCI\] §4.3).
    Forward,
    /// `Ψ_d(q0, q1) = ((q0 + q1)/2, (q1 − q0)/h)` (\[VCI\] §4.1–4.2).
    Midpoint,
}

impl Discretization {
    /// Both choices, for listings.
    pub const ALL: [Discretization; 2] = [Discretization::Forward, Discretization::Midpoint];

    /// The name used in files, on the command line and in summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            Discretization::Forward => "forward",
            Discretization::Midpoint => "midpoint",
        }
    }
}

impl fmt::Display for Discretization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Discretization {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "forward" => Ok(Discretization::Forward),
            "midpoint" => Ok(Discretization::Midpoint),
            other => Err(format!(
                "unknown discretization '{other}' (expected 'forward' or 'midpoint')"
            )),
        }
    }
}

impl<const N: usize> DiscretizationMap<N> for Discretization {
    fn name(&self) -> &'static str {
        match self {
            Discretization::Forward => "forward",
            Discretization::Midpoint => "midpoint",
        }
    }

    // Component-wise on purpose: nalgebra's generic `Matrix * scalar` with a
    // dual-number scalar is not inlined and cost about half of a `jet`; with
    // this and `inline(always)` here and on `DiscreteLagrangian::{raw, value}`
    // the pendulum `jet` bench runs ~3–4× faster.
    #[inline(always)]
    fn psi<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        h: S,
    ) -> Result<(SVector<S, N>, SVector<S, N>), GeometryError> {
        self.psi_step(q0, q1, &SVector::from_fn(|i, _| q1[i] - q0[i]), h)
    }

    /// `v = d/h`; the midpoint is `q0 + d/2`.
    #[inline(always)]
    fn psi_step<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        _q1: &SVector<S, N>,
        d: &SVector<S, N>,
        h: S,
    ) -> Result<(SVector<S, N>, SVector<S, N>), GeometryError> {
        let inv_h = h.recip();
        let v = SVector::from_fn(|i, _| d[i] * inv_h);
        Ok(match self {
            Discretization::Forward => (*q0, v),
            Discretization::Midpoint => (SVector::from_fn(|i, _| q0[i] + d[i] * 0.5), v),
        })
    }

    fn psi_inverse(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        h: f64,
    ) -> Result<(SVector<f64, N>, SVector<f64, N>), GeometryError> {
        Ok(match self {
            Discretization::Forward => (*q, q + v * h),
            Discretization::Midpoint => (q - v * (0.5 * h), q + v * (0.5 * h)),
        })
    }

    #[inline]
    fn displacement<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        Euclidean.inverse(q0, q1)
    }

    #[inline]
    fn displacement_step<S: AdScalar>(
        &self,
        _q0: &SVector<S, N>,
        _q1: &SVector<S, N>,
        d: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        Ok(*d)
    }
}

/// The forward discretization through any retraction `R`:
/// `Ψ_d^h(q0, q1) = (q0, R_{q0}^{-1}(q1)/h)`, `R̃^h(q, v) = (q, R_q(h v))`
/// (\[DDM\] §9.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetractionForward<R>(pub R);

impl<const N: usize, R: Retraction<N>> DiscretizationMap<N> for RetractionForward<R> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    #[inline]
    fn psi<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        h: S,
    ) -> Result<(SVector<S, N>, SVector<S, N>), GeometryError> {
        let inv_h = h.recip();
        let d = self.0.inverse(q0, q1)?;
        Ok((*q0, SVector::from_fn(|i, _| d[i] * inv_h)))
    }
    #[inline]
    fn psi_step<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        d: &SVector<S, N>,
        h: S,
    ) -> Result<(SVector<S, N>, SVector<S, N>), GeometryError> {
        let inv_h = h.recip();
        let w = self.0.inverse_step(q0, q1, d)?;
        Ok((*q0, SVector::from_fn(|i, _| w[i] * inv_h)))
    }
    fn psi_inverse(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        h: f64,
    ) -> Result<(SVector<f64, N>, SVector<f64, N>), GeometryError> {
        Ok((*q, self.0.retract(q, &(v * h))))
    }
    fn displacement<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        self.0.inverse(q0, q1)
    }
    fn displacement_step<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        d: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        self.0.inverse_step(q0, q1, d)
    }
}

/// The forward discretization read at the end point (the other
/// symplectic-Euler variant): `Ψ_d^h(q0, q1) = (q1, (q1 − q0)/h)`,
/// `R̃^h(q, v) = (q − h v, q)`, on `R^n`.
///
/// With it the (−) Lagrange–Dirac equations are those of the (−)
/// symplectic-Euler Hamiltonian stepper (`H_{d−}(p0, q1) = −p0·q1 + h H(q1, p0)`),
/// as [`Discretization::Forward`] matches the (+) one (docs/theory.md §3.5,
/// §4.10).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EndPoint;

impl<const N: usize> DiscretizationMap<N> for EndPoint {
    fn name(&self) -> &'static str {
        "end-point"
    }
    fn psi<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        h: S,
    ) -> Result<(SVector<S, N>, SVector<S, N>), GeometryError> {
        self.psi_step(q0, q1, &SVector::from_fn(|i, _| q1[i] - q0[i]), h)
    }
    fn psi_step<S: AdScalar>(
        &self,
        _q0: &SVector<S, N>,
        q1: &SVector<S, N>,
        d: &SVector<S, N>,
        h: S,
    ) -> Result<(SVector<S, N>, SVector<S, N>), GeometryError> {
        let inv_h = h.recip();
        Ok((*q1, SVector::from_fn(|i, _| d[i] * inv_h)))
    }
    fn psi_inverse(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        h: f64,
    ) -> Result<(SVector<f64, N>, SVector<f64, N>), GeometryError> {
        Ok((q - v * h, *q))
    }
    fn displacement<S: AdScalar>(
        &self,
        q0: &SVector<S, N>,
        q1: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        Euclidean.inverse(q0, q1)
    }
    fn displacement_step<S: AdScalar>(
        &self,
        _q0: &SVector<S, N>,
        _q1: &SVector<S, N>,
        d: &SVector<S, N>,
    ) -> Result<SVector<S, N>, GeometryError> {
        Ok(*d)
    }
}
