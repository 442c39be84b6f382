//! Discrete constraints (docs/theory.md §2, \[DDM\] eq. 4.2, \[NIC\] §5).
//!
//! All discrete constraints here are in velocity units:
//! * retraction-based, forward: `ω_{d+}^a(q0, q1) = ⟨ω^a(q0), R_{q0}^{-1}(q1)⟩ / h`;
//! * retraction-based, backward: `ω_{d−}^a(q0, q1) = ⟨ω^a(q1), −R_{q1}^{-1}(q0)⟩ / h`;
//! * midpoint (symmetric): `ω_{d,mid}^a(q0, q1) = ⟨ω^a((q0+q1)/2), (q1 − q0)/h⟩`
//!   (= \[NIC\]'s mid-angle constraint for the rolling disk);
//! * the model's own, from [`System::discrete_constraint`].

use crate::ad::{gradient_of, seed_gradient};
use crate::discrete_lagrangian::Orientation;
use crate::{AdScalar, DiscretizationMap, GeometryError, System};
use nalgebra::{SMatrix, SVector};
use num_dual::DualSVec;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Which discrete constraint a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConstraintDiscretization {
    /// `ω_{d±}` through the discretization's retraction (\[DDM\] eq. 4.2).
    Retraction,
    /// The symmetric midpoint constraint.
    Midpoint,
    /// The model's own [`System::discrete_constraint`].
    Model,
}

impl ConstraintDiscretization {
    /// The name used in files, on the command line and in summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            ConstraintDiscretization::Retraction => "retraction",
            ConstraintDiscretization::Midpoint => "midpoint",
            ConstraintDiscretization::Model => "model",
        }
    }
}

impl fmt::Display for ConstraintDiscretization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ConstraintDiscretization {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "retraction" => Ok(Self::Retraction),
            "midpoint" => Ok(Self::Midpoint),
            "model" => Ok(Self::Model),
            other => Err(format!(
                "unknown constraint discretization '{other}' (expected retraction, midpoint or model)"
            )),
        }
    }
}

/// The retraction-based discrete constraint of a step with the forms
/// `A(a)` given: `ω_{d+}(a, b) = A(a) · Δ(a, b) / h` forward (`Δ` the map's
/// displacement `R_a^{-1}(b)`; \[DDM\] eq. 4.2, docs/theory.md §2.4), its
/// negative reversed.
#[inline(always)]
fn retraction_step<Dm, S, const N: usize, const M: usize>(
    forms: SMatrix<S, M, N>,
    map: &Dm,
    orientation: Orientation,
    a: &SVector<S, N>,
    b: &SVector<S, N>,
    d: &SVector<S, N>,
    h: S,
) -> Result<SVector<S, M>, GeometryError>
where
    Dm: DiscretizationMap<N>,
    S: AdScalar,
{
    let inv_h = h.recip();
    let c = forms * map.displacement_step(a, b, d)? * inv_h;
    Ok(match orientation {
        Orientation::Forward => c,
        Orientation::Reversed => -c,
    })
}

/// A discrete constraint `eval(a, b, d, h)` of the step `b = a + d` and its
/// Jacobian in `b` (`M × N`), by forward-mode differentiation: `a`, `h`
/// constant, `b` seeded, the increment `d` carried exactly.
#[allow(clippy::type_complexity)]
#[inline(always)]
fn jacobian_in_b<const N: usize, const M: usize>(
    a: &SVector<f64, N>,
    b: &SVector<f64, N>,
    d: &SVector<f64, N>,
    h: f64,
    eval: impl FnOnce(
        &SVector<DualSVec<f64, N>, N>,
        &SVector<DualSVec<f64, N>, N>,
        &SVector<DualSVec<f64, N>, N>,
        DualSVec<f64, N>,
    ) -> Result<SVector<DualSVec<f64, N>, M>, GeometryError>,
) -> Result<(SVector<f64, M>, SMatrix<f64, M, N>), GeometryError> {
    let ad: SVector<DualSVec<f64, N>, N> = crate::ad::constants(a);
    let bd = seed_gradient(b);
    let dd = crate::ad::increment(&ad, &bd, d);
    let c = eval(&ad, &bd, &dd, crate::ad::DenseConstant::constant(h))?;
    let value = c.map(|x| x.re);
    let jac = SMatrix::from_fn(|i, j| gradient_of(c[i])[j]);
    Ok((value, jac))
}

impl ConstraintDiscretization {
    /// The discrete constraint on the step between `a` (known) and `b`
    /// (unknown), oriented like the discrete Lagrangian: `Forward` evaluates
    /// `ω_{d+}(a, b)`, `Reversed` evaluates `ω_{d−}(b, a)` (so `a = q_{k+1}`).
    ///
    /// # Errors
    /// When the retraction inverse is undefined, or `Model` is chosen but the
    /// system supplies no discrete constraint.
    #[inline]
    pub fn evaluate<Sy, Dm, S, const N: usize, const M: usize>(
        &self,
        system: &Sy,
        map: &Dm,
        orientation: Orientation,
        a: &SVector<S, N>,
        b: &SVector<S, N>,
        h: S,
    ) -> Result<SVector<S, M>, GeometryError>
    where
        Sy: System<N, M>,
        Dm: DiscretizationMap<N>,
        S: AdScalar,
    {
        let d = SVector::from_fn(|i, _| b[i] - a[i]);
        self.evaluate_step(system, map, orientation, a, b, &d, h)
    }

    /// [`evaluate`](Self::evaluate) given also the exact chart increment
    /// `d = b − a` (the steppers' unknown), so that the displacement loses no
    /// digits to the cancellation in `b − a` ([`DiscretizationMap::psi_step`]).
    ///
    /// # Errors
    /// As [`evaluate`](Self::evaluate).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn evaluate_step<Sy, Dm, S, const N: usize, const M: usize>(
        &self,
        system: &Sy,
        map: &Dm,
        orientation: Orientation,
        a: &SVector<S, N>,
        b: &SVector<S, N>,
        d: &SVector<S, N>,
        h: S,
    ) -> Result<SVector<S, M>, GeometryError>
    where
        Sy: System<N, M>,
        Dm: DiscretizationMap<N>,
        S: AdScalar,
    {
        if M == 0 {
            return Ok(SVector::zeros());
        }
        let inv_h = h.recip();
        Ok(match (self, orientation) {
            (Self::Retraction, o) => {
                retraction_step(system.constraint_forms(a), map, o, a, b, d, h)?
            }
            (Self::Midpoint, o) => {
                let mid = SVector::from_fn(|i, _| a[i] + d[i] * 0.5);
                let c = system.constraint_forms(&mid) * d * inv_h;
                if o == Orientation::Forward { c } else { -c }
            }
            (Self::Model, o) => {
                let (q0, q1) = if o == Orientation::Forward {
                    (a, b)
                } else {
                    (b, a)
                };
                system
                    .discrete_constraint(q0, q1, h)
                    .ok_or(GeometryError::NoModelConstraint)?
            }
        })
    }

    /// [`evaluate_step`](Self::evaluate_step) at `f64` given `A(a)`
    /// (`a_forms`, the system's forms at the known end `a`). The
    /// retraction-based constraint reads the forms at `a` alone, so a solve,
    /// which keeps `a` fixed, evaluates them once per step instead of once
    /// per evaluation of its equations; the result is the same, bit for bit.
    /// The other discretizations read the forms elsewhere and evaluate as
    /// [`evaluate_step`](Self::evaluate_step).
    ///
    /// # Errors
    /// As [`evaluate`](Self::evaluate).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn evaluate_step_given_forms<Sy, Dm, const N: usize, const M: usize>(
        &self,
        system: &Sy,
        map: &Dm,
        orientation: Orientation,
        a_forms: &SMatrix<f64, M, N>,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<SVector<f64, M>, GeometryError>
    where
        Sy: System<N, M>,
        Dm: DiscretizationMap<N>,
    {
        match self {
            Self::Retraction if M > 0 => retraction_step(*a_forms, map, orientation, a, b, d, h),
            _ => self.evaluate_step(system, map, orientation, a, b, d, h),
        }
    }

    /// [`jacobian_increment`](Self::jacobian_increment) given `A(a)`
    /// (`a_forms`): for the retraction-based constraint the forms enter as
    /// constants and only the displacement is differentiated (see
    /// [`evaluate_step_given_forms`](Self::evaluate_step_given_forms)).
    ///
    /// # Errors
    /// As [`evaluate`](Self::evaluate).
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    pub fn jacobian_increment_given_forms<Sy, Dm, const N: usize, const M: usize>(
        &self,
        system: &Sy,
        map: &Dm,
        orientation: Orientation,
        a_forms: &SMatrix<f64, M, N>,
        a: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<(SVector<f64, M>, SMatrix<f64, M, N>), GeometryError>
    where
        Sy: System<N, M>,
        Dm: DiscretizationMap<N>,
    {
        if *self != Self::Retraction || M == 0 {
            return self.jacobian_increment(system, map, orientation, a, d, h);
        }
        let forms: SMatrix<DualSVec<f64, N>, M, N> =
            a_forms.map(crate::ad::DenseConstant::constant);
        jacobian_in_b(a, &(a + d), d, h, |ad, bd, dd, hd| {
            retraction_step(forms, map, orientation, ad, bd, dd, hd)
        })
    }

    /// The discrete constraint and its Jacobian with respect to the unknown
    /// endpoint `b` (`M × N`), by automatic differentiation.
    ///
    /// # Errors
    /// As [`evaluate`](Self::evaluate).
    #[allow(clippy::type_complexity)]
    pub fn jacobian<Sy, Dm, const N: usize, const M: usize>(
        &self,
        system: &Sy,
        map: &Dm,
        orientation: Orientation,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        h: f64,
    ) -> Result<(SVector<f64, M>, SMatrix<f64, M, N>), GeometryError>
    where
        Sy: System<N, M>,
        Dm: DiscretizationMap<N>,
    {
        self.jacobian_at(system, map, orientation, a, b, &(b - a), h)
    }

    /// [`jacobian`](Self::jacobian) at `b = a + d` from the exact increment
    /// `d` (the Jacobian with respect to `b` equals that with respect to `d`).
    ///
    /// # Errors
    /// As [`evaluate`](Self::evaluate).
    #[allow(clippy::type_complexity)]
    pub fn jacobian_increment<Sy, Dm, const N: usize, const M: usize>(
        &self,
        system: &Sy,
        map: &Dm,
        orientation: Orientation,
        a: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<(SVector<f64, M>, SMatrix<f64, M, N>), GeometryError>
    where
        Sy: System<N, M>,
        Dm: DiscretizationMap<N>,
    {
        self.jacobian_at(system, map, orientation, a, &(a + d), d, h)
    }

    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn jacobian_at<Sy, Dm, const N: usize, const M: usize>(
        &self,
        system: &Sy,
        map: &Dm,
        orientation: Orientation,
        a: &SVector<f64, N>,
        b: &SVector<f64, N>,
        d: &SVector<f64, N>,
        h: f64,
    ) -> Result<(SVector<f64, M>, SMatrix<f64, M, N>), GeometryError>
    where
        Sy: System<N, M>,
        Dm: DiscretizationMap<N>,
    {
        jacobian_in_b(a, b, d, h, |ad, bd, dd, hd| {
            self.evaluate_step(system, map, orientation, ad, bd, dd, hd)
        })
    }

    /// The per-step constraint residual of docs/theory.md §6:
    /// `max_a |h ω_d^a(q_k, q_{k+1})| / max(1, |q_{k+1}|)` (0 when `M = 0`).
    ///
    /// # Errors
    /// As [`evaluate`](Self::evaluate).
    pub fn residual<Sy, Dm, const N: usize, const M: usize>(
        &self,
        system: &Sy,
        map: &Dm,
        q0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        h: f64,
    ) -> Result<f64, GeometryError>
    where
        Sy: System<N, M>,
        Dm: DiscretizationMap<N>,
    {
        if M == 0 {
            return Ok(0.0);
        }
        let c: SVector<f64, M> = self.evaluate(system, map, Orientation::Forward, q0, q1, h)?;
        Ok(c.amax() * h / q1.norm().max(1.0))
    }
}
