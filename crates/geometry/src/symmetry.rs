//! Abelian symmetries acting by coordinate shifts, and the reduced system on
//! shape space (docs/theory.md §7; \[RED\] §4).
//!
//! A [`CyclicSymmetry`] declares that some coordinates `g = (q^c)_{c ∈ C}` of a
//! [`System`] are *cyclic*: the group `G = R^K` acts by `g ↦ g + c`, and the
//! Lagrangian, the constraint forms `A(q)` and every boundary piece `g_j(q)`
//! are unchanged (the tangent lift of a shift is the identity on velocities,
//! so invariance of the distribution `ker A(q)` follows from `A(q + c) = A(q)`).
//! [`CyclicSymmetry::check`] evaluates the three on shifted points near given
//! initial data and rejects a declaration that is not a symmetry.
//!
//! [`Reduced`] is the system on the shape space `Σ = Q/G` (the remaining
//! `NR = N − K` coordinates `s`), itself a [`System`], so every stepper and
//! the impact integrator run it unchanged. Which reduction applies is read
//! from the columns `A_C` of `A` along the cyclic coordinates:
//!
//! * **Routh** (`A_C ≡ 0`): the constraints do not see `ġ`, so the momenta
//!   `μ = ∂L/∂ġ` are conserved; `ġ(s, ṡ)` solves `∂L/∂ġ(s, ġ, ṡ) = μ` (`L`
//!   must be quadratic in `ġ`, checked) and the Routhian
//!   `R(s, ṡ) = L(s, ġ, ṡ) − μ·ġ` is the reduced Lagrangian; the constraint
//!   forms are `A_S(s)` (`MR = M`).
//! * **Chaplygin** (`A_C` of full column rank `K`, every cyclic column
//!   non-zero): the constraints fix the group velocities by the shape
//!   velocities, `ġ = Γ(s) ṡ` with `Γ = −(A_Cᵀ A_C)^{-1} A_Cᵀ A_S`; the
//!   reduced Lagrangian is `L_c(s, ṡ) = L(s, Γ ṡ, ṡ)`. With `M = K` the shape
//!   velocities are free (`MR = 0`); with `M = K + 1` one constraint remains
//!   on shape space, `n(s)ᵀ A_S(s) ṡ = 0`, `n` the cofactor vector spanning
//!   the left null space of `A_C` (`MR = 1`). The reduced Lagrange–d'Alembert
//!   equations carry the curvature (gyroscopic) force
//!   `F(s, ṡ) = ⟨J, Ω(ṡ, ·)⟩`, `J = ∂L/∂ġ` at `ġ = Γ ṡ`,
//!   `Ω(u, w) = (D_u Γ) w − (D_w Γ) u` the curvature of the connection
//!   (\[RED\] (4.8), abelian): `d/dt ∂L_c/∂ṡ − ∂L_c/∂s = F + reaction`.
//!   [`Reduced`] supplies it as its [gyroscopic force](System::gyroscopic_force)
//!   (it does no work: `Ω` is antisymmetric), computed by automatic
//!   differentiation of `Γ`. [`Reduced::new`] decides at the samples whether
//!   it vanishes (always when `NR = 1`, and for the rolling disk's rolling
//!   angle); then the reduced system has no force and costs nothing extra.
//!
//! Reconstruction ([`Reduced::lift_step`]): the group coordinates follow by
//! quadrature, `g_{k+1} = g_k + τ ġ(Ψ_d^τ(s_k, s_{k+1}))` with the run's
//! discretization map (the midpoint rule for the midpoint map: second order).
//! For the Routh case this is exactly the full discrete momentum equation, so
//! a reduced run reconstructs the full run to solver tolerance; for the
//! Chaplygin case it is exactly the full midpoint (or retraction) discrete
//! constraint.

use crate::{AdScalar, DiscretizationMap, GeometryError, System};
use nalgebra::{SMatrix, SVector};
use num_dual::{Dual, HyperDual};
use thiserror::Error;

/// Relative tolerance of the invariance checks of [`CyclicSymmetry::check`].
pub const SYMMETRY_TOLERANCE: f64 = 1e-10;

/// Relative size of the Chaplygin curvature term above which a reduced
/// system carries it as a gyroscopic force (below: identically zero up to
/// round-off).
pub(crate) const CURVATURE_TOLERANCE: f64 = 1e-9;

/// What a symmetry check compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Invariant {
    /// The Lagrangian `L(q, v)`.
    Lagrangian,
    /// The entry `A_{row, column}(q)` of the constraint forms.
    ConstraintForm {
        /// Constraint row.
        row: usize,
        /// Coordinate column.
        column: usize,
    },
    /// The boundary function `g_piece(q)`.
    Boundary {
        /// Boundary piece.
        piece: usize,
    },
}

impl std::fmt::Display for Invariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Invariant::Lagrangian => write!(f, "the Lagrangian L(q, v)"),
            Invariant::ConstraintForm { row, column } => {
                write!(f, "constraint form entry A[{row}][{column}](q)")
            }
            Invariant::Boundary { piece } => write!(f, "boundary piece g_{piece}(q)"),
        }
    }
}

/// Why a symmetry declaration or a reduction was rejected.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SymmetryError {
    /// A declared cyclic coordinate does not exist, is repeated, or the
    /// declaration leaves no shape coordinate.
    #[error("bad symmetry declaration: {reason}")]
    BadDeclaration {
        /// What is wrong.
        reason: String,
    },
    /// The declared shifts do not leave the system unchanged.
    #[error(
        "not a symmetry: {quantity} changes by {difference:e} (tolerance {tolerance:e}) under the shift {shift:?} at q = {q:?}"
    )]
    NotInvariant {
        /// What changed.
        quantity: Invariant,
        /// The sample configuration.
        q: Vec<f64>,
        /// The shift of every coordinate (zero on shape coordinates).
        shift: Vec<f64>,
        /// `|value(q + shift) − value(q)|`.
        difference: f64,
        /// The tolerance it exceeded.
        tolerance: f64,
    },
    /// Shifting one declared cyclic coordinate on its own changes the
    /// system ([`DynCyclicSymmetry::check`](crate::dynamic::DynCyclicSymmetry::check)):
    /// the coordinate is not cyclic.
    #[error(
        "coordinate {coordinate} is not cyclic: {quantity} changes by {difference:e} (tolerance {tolerance:e}) when it is shifted by {shift} at q = {q:?}"
    )]
    NotCyclic {
        /// The coordinate's index.
        coordinate: usize,
        /// What changed.
        quantity: Invariant,
        /// The sample configuration.
        q: Vec<f64>,
        /// The shift of the coordinate.
        shift: f64,
        /// `|value(q + shift) − value(q)|`.
        difference: f64,
        /// The tolerance it exceeded.
        tolerance: f64,
    },
    /// A value of the system was NaN or infinite at a sample point.
    #[error("non-finite {quantity} at q = {q:?}")]
    NonFinite {
        /// What was evaluated.
        quantity: Invariant,
        /// The sample configuration.
        q: Vec<f64>,
    },
    /// The reduced sizes given as const parameters do not fit the
    /// symmetry and the constraints.
    #[error(
        "reduced sizes: expected NR = {expected_nr}, MR = {expected_mr} for this {kind} reduction, the type says NR = {nr}, MR = {mr}"
    )]
    SizeMismatch {
        /// `"Routh"` or `"Chaplygin"`.
        kind: &'static str,
        /// `N − K`.
        expected_nr: usize,
        /// `M` (Routh) or `M − K` (Chaplygin).
        expected_mr: usize,
        /// The `NR` of the type.
        nr: usize,
        /// The `MR` of the type.
        mr: usize,
    },
    /// The constraints fit neither reduction: some cyclic columns of `A`
    /// vanish and others do not, `A_C` is rank deficient, or more than one
    /// constraint would remain on shape space.
    #[error("no reduction applies: {reason}")]
    Unsupported {
        /// Why.
        reason: String,
    },
    /// Routh reduction needs `L` quadratic in the cyclic velocities (so that
    /// `∂L/∂ġ = μ` is solved exactly) with a regular Hessian.
    #[error(
        "Routh reduction: ∂L/∂ġ is not affine in the cyclic velocities (mismatch {mismatch:e} at q = {q:?}) or ∂²L/∂ġ² is singular"
    )]
    NotQuadratic {
        /// The largest mismatch of `∂L/∂ġ(ġ) − (b + H ġ)` (NaN: singular `H`).
        mismatch: f64,
        /// The sample configuration.
        q: Vec<f64>,
    },
    /// A geometric evaluation failed.
    #[error(transparent)]
    Geometry(#[from] GeometryError),
}

/// An abelian group `R^K` acting on `Q` by shifting the coordinates it
/// names (the *cyclic* coordinates).
///
/// ```
/// use diracvi_geometry::{AdScalar, CyclicSymmetry, SMatrix, SVector, System};
/// struct Free;
/// impl System<2, 0> for Free {
///     fn lagrangian<S: AdScalar>(&self, q: &SVector<S, 2>, v: &SVector<S, 2>) -> S {
///         v.dot(v) * 0.5 - q[1] * 9.8
///     }
///     fn constraint_forms<S: AdScalar>(&self, _q: &SVector<S, 2>) -> SMatrix<S, 0, 2> {
///         SMatrix::zeros()
///     }
/// }
/// let (q0, v0) = (SVector::from([0.0, 2.0]), SVector::from([1.0, 0.0]));
/// assert!(CyclicSymmetry::<2>::new(&[0]).unwrap().check::<_, 0>(&Free, &q0, &v0).is_ok());
/// // y is not cyclic: gravity sees it
/// assert!(CyclicSymmetry::<2>::new(&[1]).unwrap().check::<_, 0>(&Free, &q0, &v0).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CyclicSymmetry<const N: usize> {
    cyclic: [bool; N],
}

impl<const N: usize> CyclicSymmetry<N> {
    /// Declare the coordinates `indices` cyclic.
    ///
    /// # Errors
    /// [`SymmetryError::BadDeclaration`] for an empty list, an index `≥ N`,
    /// a repeated index, or every coordinate cyclic (no shape space).
    pub fn new(indices: &[usize]) -> Result<Self, SymmetryError> {
        let bad = |reason: String| Err(SymmetryError::BadDeclaration { reason });
        if indices.is_empty() {
            return bad("no cyclic coordinate named".into());
        }
        let mut cyclic = [false; N];
        for &i in indices {
            if i >= N {
                return bad(format!("coordinate {i} does not exist (N = {N})"));
            }
            if cyclic[i] {
                return bad(format!("coordinate {i} named twice"));
            }
            cyclic[i] = true;
        }
        if cyclic.iter().all(|&c| c) {
            return bad("every coordinate is cyclic: no shape space left".into());
        }
        Ok(Self { cyclic })
    }

    /// Whether coordinate `i` is cyclic.
    pub fn is_cyclic(&self, i: usize) -> bool {
        self.cyclic[i]
    }

    /// The cyclic coordinates, in increasing order.
    pub fn cyclic(&self) -> impl Iterator<Item = usize> + '_ {
        (0..N).filter(|&i| self.cyclic[i])
    }

    /// The shape coordinates, in increasing order.
    pub fn shape(&self) -> impl Iterator<Item = usize> + '_ {
        (0..N).filter(|&i| !self.cyclic[i])
    }

    /// The dimension `K` of the group.
    pub fn dimension(&self) -> usize {
        self.cyclic.iter().filter(|&&c| c).count()
    }

    /// Sample states near `(q0, v0)` with shifts of the cyclic coordinates:
    /// `(q, v, shift)`, deterministic.
    fn samples(
        &self,
        q0: &SVector<f64, N>,
        v0: &SVector<f64, N>,
    ) -> [(SVector<f64, N>, SVector<f64, N>, SVector<f64, N>); 3] {
        const SHIFTS: [f64; 3] = [0.7, -1.9, 3.3];
        std::array::from_fn(|r| {
            let rf = r as f64;
            let q = SVector::from_fn(|i, _| {
                q0[i] + 0.05 * rf * (1.3 * i as f64 + 0.7 * rf + 0.1).sin()
            });
            let v =
                SVector::from_fn(|i, _| v0[i] + 0.1 * rf * (0.9 * i as f64 + 1.1 * rf + 0.3).cos());
            let shift = SVector::from_fn(|i, _| {
                if self.cyclic[i] {
                    SHIFTS[r] * (1.0 + 0.1 * i as f64)
                } else {
                    0.0
                }
            });
            (q, v, shift)
        })
    }

    /// Check that the declared shifts leave `L`, `A` and every `g_j`
    /// unchanged at sample states near `(q0, v0)` (three points, shifts of
    /// up to a few units): `|f(q + c) − f(q)| ≤ 1e-10 · max(1, |f(q)|)`.
    ///
    /// # Errors
    /// [`SymmetryError::NotInvariant`] naming the first quantity that changes
    /// and by how much; [`SymmetryError::NonFinite`].
    pub fn check<Sy: System<N, M>, const M: usize>(
        &self,
        system: &Sy,
        q0: &SVector<f64, N>,
        v0: &SVector<f64, N>,
    ) -> Result<(), SymmetryError> {
        for (q, v, shift) in self.samples(q0, v0) {
            let qs = q + shift;
            let compare = |quantity: Invariant, a: f64, b: f64| -> Result<(), SymmetryError> {
                if !(a.is_finite() && b.is_finite()) {
                    return Err(SymmetryError::NonFinite {
                        quantity,
                        q: q.as_slice().to_vec(),
                    });
                }
                let tolerance = SYMMETRY_TOLERANCE * a.abs().max(1.0);
                let difference = (b - a).abs();
                if difference > tolerance {
                    return Err(SymmetryError::NotInvariant {
                        quantity,
                        q: q.as_slice().to_vec(),
                        shift: shift.as_slice().to_vec(),
                        difference,
                        tolerance,
                    });
                }
                Ok(())
            };
            compare(
                Invariant::Lagrangian,
                system.lagrangian(&q, &v),
                system.lagrangian(&qs, &v),
            )?;
            let (a, b) = (system.constraint_forms(&q), system.constraint_forms(&qs));
            for row in 0..M {
                for column in 0..N {
                    compare(
                        Invariant::ConstraintForm { row, column },
                        a[(row, column)],
                        b[(row, column)],
                    )?;
                }
            }
            for piece in 0..system.boundary_count() {
                compare(
                    Invariant::Boundary { piece },
                    system.boundary(piece, &q),
                    system.boundary(piece, &qs),
                )?;
            }
        }
        Ok(())
    }
}

/// Which reduction a [`Reduced`] system is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReductionKind {
    /// Conserved momenta `μ = ∂L/∂ġ`; the reduced Lagrangian is the Routhian.
    Routh,
    /// Group velocities fixed by the shape velocities, `ġ = Γ(s) ṡ`; the
    /// reduced Lagrangian is `L(s, Γ ṡ, ṡ)`.
    Chaplygin,
}

impl ReductionKind {
    /// `"Routh"` or `"Chaplygin"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReductionKind::Routh => "Routh",
            ReductionKind::Chaplygin => "Chaplygin",
        }
    }
}

/// The reduced system on shape space `Σ = Q/G` of a [`System`] with a
/// [`CyclicSymmetry`]: `NR = N − K` shape coordinates, `MR` constraint forms
/// (`M` for Routh, `M − K` for Chaplygin), the same boundary pieces
/// (evaluated at the reference group coordinates, on which they do not
/// depend). See the module documentation for the equations.
#[derive(Debug, Clone)]
pub struct Reduced<Sy, const N: usize, const M: usize, const NR: usize, const MR: usize> {
    system: Sy,
    symmetry: CyclicSymmetry<N>,
    kind: ReductionKind,
    /// Full index of shape coordinate `a`.
    shape: [usize; NR],
    /// Full index of cyclic coordinate `b` (first `k` entries).
    group: [usize; N],
    k: usize,
    /// Reference configuration: its group coordinates fill the cyclic slots.
    reference: SVector<f64, N>,
    /// Conserved momenta (Routh; first `k` entries).
    momentum: [f64; N],
    /// Chaplygin with a curvature force that does not vanish.
    gyroscopic: bool,
}

/// Solve `a x = b` for the leading `k × k` block by Gaussian elimination
/// with partial pivoting on the real parts; `None` when singular. Returns
/// also the determinant.
fn solve_block<S: AdScalar, const N: usize>(
    mut a: SMatrix<S, N, N>,
    mut b: SMatrix<S, N, N>,
    k: usize,
    columns: usize,
) -> Option<(SMatrix<S, N, N>, S)> {
    let mut det = S::from(1.0);
    for c in 0..k {
        let p = (c..k).max_by(|&i, &j| {
            a[(i, c)]
                .re()
                .abs()
                .partial_cmp(&a[(j, c)].re().abs())
                .unwrap_or(std::cmp::Ordering::Equal)
        })?;
        let pivot_re = a[(p, c)].re();
        if pivot_re == 0.0 || !pivot_re.is_finite() {
            return None;
        }
        if p != c {
            a.swap_rows(p, c);
            b.swap_rows(p, c);
            det = -det;
        }
        let pivot = a[(c, c)];
        det *= pivot;
        for i in 0..k {
            if i == c {
                continue;
            }
            let f = a[(i, c)] / pivot;
            for j in c..k {
                let x = a[(c, j)];
                a[(i, j)] -= f * x;
            }
            for j in 0..columns {
                let x = b[(c, j)];
                b[(i, j)] -= f * x;
            }
        }
    }
    for i in 0..k {
        let d = a[(i, i)];
        for j in 0..columns {
            b[(i, j)] /= d;
        }
    }
    Some((b, det))
}

impl<Sy, const N: usize, const M: usize, const NR: usize, const MR: usize> Reduced<Sy, N, M, NR, MR>
where
    Sy: System<N, M>,
{
    /// Reduce `system` by `symmetry`, with the initial data `(q0, v0)` of
    /// the full system (the reference group coordinates, the conserved
    /// momenta `μ = ∂L/∂ġ(q0, v0)` of a Routh reduction, and the sample
    /// states of the checks).
    ///
    /// # Errors
    /// Every error of [`CyclicSymmetry::check`]; [`SymmetryError::Unsupported`]
    /// when neither reduction applies; [`SymmetryError::SizeMismatch`] when
    /// `NR`, `MR` do not fit; [`SymmetryError::NotQuadratic`] (Routh).
    pub fn new(
        system: Sy,
        symmetry: CyclicSymmetry<N>,
        q0: &SVector<f64, N>,
        v0: &SVector<f64, N>,
    ) -> Result<Self, SymmetryError> {
        symmetry.check::<Sy, M>(&system, q0, v0)?;
        let k = symmetry.dimension();
        let mut group = [0; N];
        for (slot, i) in group.iter_mut().zip(symmetry.cyclic()) {
            *slot = i;
        }
        let mut shape = [0; NR];
        if NR != N - k {
            return Err(SymmetryError::SizeMismatch {
                kind: "symmetry",
                expected_nr: N - k,
                expected_mr: MR,
                nr: NR,
                mr: MR,
            });
        }
        for (slot, i) in shape.iter_mut().zip(symmetry.shape()) {
            *slot = i;
        }
        // Which cyclic columns of A vanish, at every sample.
        let samples = symmetry.samples(q0, v0);
        let mut zero_column = [true; N];
        for (q, _, _) in &samples {
            let a = system.constraint_forms(q);
            let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1.0);
            for (b, &c) in group[..k].iter().enumerate() {
                if (0..M).any(|r| a[(r, c)].abs() > 1e-12 * scale) {
                    zero_column[b] = false;
                }
            }
        }
        let zeros = zero_column[..k].iter().filter(|&&z| z).count();
        let kind = if zeros == k {
            ReductionKind::Routh
        } else if zeros == 0 {
            ReductionKind::Chaplygin
        } else {
            return Err(SymmetryError::Unsupported {
                reason: format!(
                    "{zeros} of the {k} cyclic coordinates are free of the constraints and the others are not (mixed Routh/Chaplygin reduction is not implemented)"
                ),
            });
        };
        let expected_mr = match kind {
            ReductionKind::Routh => M,
            ReductionKind::Chaplygin => M.saturating_sub(k),
        };
        if MR != expected_mr || (kind == ReductionKind::Chaplygin && M < k) {
            return Err(SymmetryError::SizeMismatch {
                kind: kind.as_str(),
                expected_nr: N - k,
                expected_mr,
                nr: NR,
                mr: MR,
            });
        }
        if kind == ReductionKind::Chaplygin && MR > 1 {
            return Err(SymmetryError::Unsupported {
                reason: format!(
                    "{MR} constraints would remain on shape space; only 0 or 1 are implemented"
                ),
            });
        }
        let p0 = system.momentum(q0, v0);
        let mut momentum = [0.0; N];
        for b in 0..k {
            momentum[b] = p0[group[b]];
        }
        let mut reduced = Self {
            system,
            symmetry,
            kind,
            shape,
            group,
            k,
            reference: *q0,
            momentum,
            gyroscopic: false,
        };
        let mut gyroscopic = false;
        for (q, v, _) in &samples {
            let s = reduced.project(q);
            let sd = reduced.project(v);
            match kind {
                ReductionKind::Routh => reduced.check_quadratic(q, v)?,
                ReductionKind::Chaplygin => {
                    if reduced.connection(&s).is_none() {
                        return Err(SymmetryError::Unsupported {
                            reason: format!(
                                "the cyclic columns of A(q) are rank deficient at q = {:?}: the constraints do not fix the group velocities",
                                q.as_slice()
                            ),
                        });
                    }
                    gyroscopic |= reduced.curvature_relative(&s, &sd) > CURVATURE_TOLERANCE;
                }
            }
        }
        reduced.gyroscopic = gyroscopic;
        Ok(reduced)
    }

    /// The reduction applied.
    pub fn kind(&self) -> ReductionKind {
        self.kind
    }

    /// Whether the reduced system carries the Chaplygin curvature force
    /// (its [`gyroscopic_force`](System::gyroscopic_force) is `Some`).
    pub fn is_gyroscopic(&self) -> bool {
        self.gyroscopic
    }

    /// The symmetry.
    pub fn symmetry(&self) -> &CyclicSymmetry<N> {
        &self.symmetry
    }

    /// The full system.
    pub fn full(&self) -> &Sy {
        &self.system
    }

    /// The conserved momenta `μ = ∂L/∂ġ` (Routh), in the order of the cyclic
    /// coordinates; zeros for a Chaplygin reduction (where `∂L/∂ġ` is not
    /// conserved).
    pub fn momentum(&self) -> Vec<f64> {
        match self.kind {
            ReductionKind::Routh => self.momentum[..self.k].to_vec(),
            ReductionKind::Chaplygin => vec![0.0; self.k],
        }
    }

    /// The shape part `s` of a full vector (configuration or velocity).
    pub fn project<S: AdScalar>(&self, q: &SVector<S, N>) -> SVector<S, NR> {
        SVector::from_fn(|a, _| q[self.shape[a]])
    }

    /// The full configuration with shape `s` and the reference group
    /// coordinates.
    fn embed<S: AdScalar>(&self, s: &SVector<S, NR>) -> SVector<S, N> {
        let mut q = self.reference.map(S::from);
        for a in 0..NR {
            q[self.shape[a]] = s[a];
        }
        q
    }

    /// `Γ(s)` (`ġ = Γ ṡ`, rows `0..k` of the result) of a Chaplygin
    /// reduction, and the reduced constraint row `n(s)ᵀ A_S(s)` (first row
    /// of the second result, when `MR = 1`); `None` when `A_C` is singular.
    #[allow(clippy::type_complexity)]
    fn connection<S: AdScalar>(
        &self,
        s: &SVector<S, NR>,
    ) -> Option<(SMatrix<S, N, N>, SMatrix<S, MR, NR>)> {
        let a = self.system.constraint_forms(&self.embed(s));
        let k = self.k;
        // Normal equations: (A_Cᵀ A_C) Γ = −A_Cᵀ A_S.
        let mut g = SMatrix::<S, N, N>::from_element(S::from(0.0));
        let mut rhs = SMatrix::<S, N, N>::from_element(S::from(0.0));
        for i in 0..k {
            for j in 0..k {
                let mut x = S::from(0.0);
                for r in 0..M {
                    x += a[(r, self.group[i])] * a[(r, self.group[j])];
                }
                g[(i, j)] = x;
            }
            for beta in 0..NR {
                let mut x = S::from(0.0);
                for r in 0..M {
                    x -= a[(r, self.group[i])] * a[(r, self.shape[beta])];
                }
                rhs[(i, beta)] = x;
            }
        }
        let (gamma, det) = solve_block(g, rhs, k, NR)?;
        let scale = (0..k).fold(1.0f64, |m, i| m * g[(i, i)].re().abs().max(1e-300));
        if det.re().abs() <= 1e-12 * scale {
            return None;
        }
        let mut row = SMatrix::<S, MR, NR>::from_element(S::from(0.0));
        if MR == 1 {
            // n_r = (−1)^r det(A_C without row r): spans the left null space
            // of the (k+1) × k matrix A_C, smoothly.
            for r in 0..M {
                let mut minor = SMatrix::<S, N, N>::from_element(S::from(0.0));
                for (ii, rr) in (0..M).filter(|&rr| rr != r).enumerate() {
                    for j in 0..k {
                        minor[(ii, j)] = a[(rr, self.group[j])];
                    }
                }
                let det = if k == 0 {
                    S::from(1.0)
                } else {
                    solve_block(minor, SMatrix::from_element(S::from(0.0)), k, 0)
                        .map_or(S::from(0.0), |(_, d)| d)
                };
                let n = if r % 2 == 0 { det } else { -det };
                for beta in 0..NR {
                    row[(0, beta)] += n * a[(r, self.shape[beta])];
                }
            }
        }
        Some((gamma, row))
    }

    /// The group velocities `ġ(s, ṡ)` (first `k` entries): `Γ(s) ṡ`
    /// (Chaplygin) or the solution of `∂L/∂ġ = μ` (Routh).
    fn group_velocity<S: AdScalar>(
        &self,
        s: &SVector<S, NR>,
        sd: &SVector<S, NR>,
    ) -> SVector<S, N> {
        let mut gd = SVector::<S, N>::from_element(S::from(0.0));
        match self.kind {
            ReductionKind::Chaplygin => {
                if let Some((gamma, _)) = self.connection(s) {
                    for b in 0..self.k {
                        for beta in 0..NR {
                            gd[b] += gamma[(b, beta)] * sd[beta];
                        }
                    }
                } else {
                    gd = gd.map(|_| S::from(f64::NAN));
                }
            }
            ReductionKind::Routh => {
                let (b, h) = self.routh_jet(s, sd);
                let mut rhs = SMatrix::<S, N, N>::from_element(S::from(0.0));
                for i in 0..self.k {
                    rhs[(i, 0)] = S::from(self.momentum[i]) - b[i];
                }
                match solve_block(h, rhs, self.k, 1) {
                    Some((x, _)) => {
                        for i in 0..self.k {
                            gd[i] = x[(i, 0)];
                        }
                    }
                    None => gd = gd.map(|_| S::from(f64::NAN)),
                }
            }
        }
        gd
    }

    /// The full `(q, v)` over the shape point `(s, ṡ)` with group velocities
    /// `gd` (first `k` entries).
    fn full_state<S: AdScalar>(
        &self,
        s: &SVector<S, NR>,
        sd: &SVector<S, NR>,
        gd: &SVector<S, N>,
    ) -> (SVector<S, N>, SVector<S, N>) {
        let q = self.embed(s);
        let mut v = SVector::<S, N>::from_element(S::from(0.0));
        for a in 0..NR {
            v[self.shape[a]] = sd[a];
        }
        for b in 0..self.k {
            v[self.group[b]] = gd[b];
        }
        (q, v)
    }

    /// `b = ∂L/∂ġ` and `H = ∂²L/∂ġ²` at `ġ = 0` over `(s, ṡ)`.
    fn routh_jet<S: AdScalar>(
        &self,
        s: &SVector<S, NR>,
        sd: &SVector<S, NR>,
    ) -> (SVector<S, N>, SMatrix<S, N, N>) {
        let zero = SVector::<S, N>::from_element(S::from(0.0));
        let (q, v) = self.full_state(s, sd, &zero);
        self.velocity_jet(&q, &v)
    }

    /// Gradient and Hessian of `L` in the cyclic velocities at `(q, v)`.
    fn velocity_jet<S: AdScalar>(
        &self,
        q: &SVector<S, N>,
        v: &SVector<S, N>,
    ) -> (SVector<S, N>, SMatrix<S, N, N>) {
        let lift = |x: S| HyperDual::new(x, S::from(0.0), S::from(0.0), S::from(0.0));
        let qh = q.map(lift);
        let mut b = SVector::<S, N>::from_element(S::from(0.0));
        let mut h = SMatrix::<S, N, N>::from_element(S::from(0.0));
        for i in 0..self.k {
            for j in i..self.k {
                let mut vh = v.map(lift);
                vh[self.group[i]].eps1 = S::from(1.0);
                vh[self.group[j]].eps2 += S::from(1.0);
                let l = self.system.lagrangian(&qh, &vh);
                if j == i {
                    b[i] = l.eps1;
                }
                h[(i, j)] = l.eps1eps2;
                h[(j, i)] = l.eps1eps2;
            }
        }
        (b, h)
    }

    /// Routh: `∂L/∂ġ` affine in `ġ` with a regular Hessian, at a sample.
    fn check_quadratic(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
    ) -> Result<(), SymmetryError> {
        let mut v0 = *v;
        for b in 0..self.k {
            v0[self.group[b]] = 0.0;
        }
        let (b0, h) = self.velocity_jet(q, &v0);
        let (b1, _) = self.velocity_jet(q, v);
        let mut mismatch = 0.0f64;
        let mut scale = 1.0f64;
        for i in 0..self.k {
            let mut predicted = b0[i];
            for j in 0..self.k {
                predicted += h[(i, j)] * v[self.group[j]];
            }
            mismatch = mismatch.max((b1[i] - predicted).abs());
            scale = scale.max(b1[i].abs());
        }
        let singular = solve_block(h, SMatrix::zeros(), self.k, 0).is_none_or(|(_, det)| {
            det.abs() <= 1e-14 * (0..self.k).map(|i| h[(i, i)].abs()).product::<f64>()
        });
        if singular || mismatch.is_nan() || mismatch > 1e-9 * scale {
            return Err(SymmetryError::NotQuadratic {
                mismatch: if singular { f64::NAN } else { mismatch },
                q: q.as_slice().to_vec(),
            });
        }
        Ok(())
    }

    /// Chaplygin: `|⟨J, Ω(u, w)⟩|` relative to `|J| |u| |w| (1 + max |Γ|)`
    /// for `u, w` in the shape distribution near `ṡ`, at a sample (0 when it
    /// vanishes identically).
    fn curvature_relative(&self, s: &SVector<f64, NR>, sd: &SVector<f64, NR>) -> f64 {
        if NR < 2 {
            return 0.0; // a 2-form on a line vanishes
        }
        let Some((_, row)) = self.connection(s) else {
            return 0.0;
        };
        // Two directions in the shape distribution ker(row).
        let onto = |x: SVector<f64, NR>| -> SVector<f64, NR> {
            if MR == 0 {
                return x;
            }
            let r: SVector<f64, NR> = SVector::from_fn(|a, _| row[(0, a)]);
            let rr = r.dot(&r);
            if rr > 0.0 {
                x - r * (r.dot(&x) / rr)
            } else {
                x
            }
        };
        let u = onto(*sd + SVector::from_fn(|a, _| 0.3 + 0.1 * a as f64));
        let w = onto(SVector::from_fn(|a, _| (1.7 * a as f64 + 0.4).cos()));
        // ⟨J, Ω(u, w)⟩ = F(s, u)·w.
        let value = self.curvature_force(s, &u).dot(&w);
        let gd = self.group_velocity(s, &u);
        let (q, v) = self.full_state(s, &u, &gd);
        let p = self.system.momentum(&q, &v);
        // Scale: |J| |u| |w| (1 + max |Γ|), so that round-off in a term that
        // vanishes identically is not mistaken for curvature.
        let gamma_max = self.connection(s).map_or(0.0, |(gamma, _)| {
            (0..self.k)
                .flat_map(|b| (0..NR).map(move |beta| (b, beta)))
                .fold(0.0f64, |m, (b, beta)| m.max(gamma[(b, beta)].abs()))
        });
        let j_norm: f64 = (0..self.k).map(|b| p[self.group[b]].abs()).sum();
        let scale = j_norm * u.norm() * w.norm() * (1.0 + gamma_max);
        if value == 0.0 {
            0.0
        } else {
            value.abs() / scale.max(f64::MIN_POSITIVE)
        }
    }

    /// The curvature force `F_β(s, ṡ) = Σ_b J_b Σ_α (∂_α Γ^b_β − ∂_β Γ^b_α) ṡ^α`
    /// of a Chaplygin reduction (docs/theory.md §7), for any scalar type:
    /// `∂Γ` by one more dual layer over `S`, `J = ∂L/∂ġ` at the full state
    /// over `(s, ṡ)` likewise. NaN where `A_C` is singular.
    fn curvature_force<S: AdScalar>(
        &self,
        s: &SVector<S, NR>,
        sd: &SVector<S, NR>,
    ) -> SVector<S, NR> {
        let zero = S::from(0.0);
        // ∂Γ/∂s_α: entry (b, β) of dgamma[α].
        let mut dgamma = [SMatrix::<S, N, N>::from_element(zero); NR];
        for (alpha, slot) in dgamma.iter_mut().enumerate() {
            let mut x = s.map(|xi| Dual::<S>::new(xi, zero));
            x[alpha].eps = S::from(1.0);
            let Some((gamma, _)) = self.connection(&x) else {
                return SVector::from_element(S::from(f64::NAN));
            };
            *slot = gamma.map(|g| g.eps);
        }
        // J_b = ∂L/∂ġ_b at (s, Γ ṡ, ṡ).
        let gd = self.group_velocity(s, sd);
        let (q, v) = self.full_state(s, sd, &gd);
        let qd = q.map(|x| Dual::<S>::new(x, zero));
        let mut j = [zero; N];
        for (b, jb) in j.iter_mut().enumerate().take(self.k) {
            let mut vd = v.map(|x| Dual::<S>::new(x, zero));
            vd[self.group[b]].eps = S::from(1.0);
            *jb = self.system.lagrangian(&qd, &vd).eps;
        }
        SVector::from_fn(|beta, _| {
            let mut f = zero;
            for (b, &jb) in j.iter().enumerate().take(self.k) {
                for alpha in 0..NR {
                    f += jb * (dgamma[alpha][(b, beta)] - dgamma[beta][(b, alpha)]) * sd[alpha];
                }
            }
            f
        })
    }

    /// The full configuration after one (sub-)step of the reduced
    /// trajectory, and the full increment: shape `s1`, group coordinates
    /// `g0 + τ ġ(Ψ_d^τ(s0, s1))` where `s0, g0` are read from `q0` and `τ`
    /// is the signed duration of the step (the quadrature of the
    /// reconstruction equation with the discretization map's node: the
    /// midpoint rule for the midpoint map). The increment's group part is
    /// `τ ġ` exactly (not the rounded difference of the positions).
    ///
    /// # Errors
    /// When `Ψ_d` is undefined at `(s0, s1)`.
    pub fn lift_step<Dm: DiscretizationMap<NR>>(
        &self,
        map: &Dm,
        q0: &SVector<f64, N>,
        s1: &SVector<f64, NR>,
        tau: f64,
    ) -> Result<(SVector<f64, N>, SVector<f64, N>), GeometryError> {
        let s0 = self.project(q0);
        let (s, sd) = map.psi(&s0, s1, tau)?;
        let gd = self.group_velocity(&s, &sd);
        let mut q1 = *q0;
        let mut d = SVector::<f64, N>::zeros();
        for a in 0..NR {
            q1[self.shape[a]] = s1[a];
            d[self.shape[a]] = s1[a] - s0[a];
        }
        for b in 0..self.k {
            d[self.group[b]] = tau * gd[b];
            q1[self.group[b]] = q0[self.group[b]] + d[self.group[b]];
        }
        Ok((q1, d))
    }

    /// The full velocity over `(s, ṡ)`: shape velocities `ṡ`, group
    /// velocities `ġ(s, ṡ)`.
    pub fn lift_velocity(&self, s: &SVector<f64, NR>, sd: &SVector<f64, NR>) -> SVector<f64, N> {
        let gd = self.group_velocity(s, sd);
        self.full_state(s, sd, &gd).1
    }
}

impl<Sy, const N: usize, const M: usize, const NR: usize, const MR: usize> System<NR, MR>
    for Reduced<Sy, N, M, NR, MR>
where
    Sy: System<N, M>,
{
    fn lagrangian<S: AdScalar>(&self, s: &SVector<S, NR>, sd: &SVector<S, NR>) -> S {
        let gd = self.group_velocity(s, sd);
        let (q, v) = self.full_state(s, sd, &gd);
        let l = self.system.lagrangian(&q, &v);
        match self.kind {
            ReductionKind::Chaplygin => l,
            ReductionKind::Routh => {
                let mut r = l;
                for b in 0..self.k {
                    r -= gd[b] * self.momentum[b];
                }
                r
            }
        }
    }

    fn constraint_forms<S: AdScalar>(&self, s: &SVector<S, NR>) -> SMatrix<S, MR, NR> {
        match self.kind {
            ReductionKind::Routh => {
                let a = self.system.constraint_forms(&self.embed(s));
                SMatrix::from_fn(|r, beta| a[(r, self.shape[beta])])
            }
            ReductionKind::Chaplygin => self
                .connection(s)
                .map_or(SMatrix::from_element(S::from(f64::NAN)), |(_, row)| row),
        }
    }

    fn boundary_count(&self) -> usize {
        self.system.boundary_count()
    }

    /// The Chaplygin curvature force when it does not vanish, else `None`.
    fn gyroscopic_force<S: AdScalar>(
        &self,
        s: &SVector<S, NR>,
        sd: &SVector<S, NR>,
    ) -> Option<SVector<S, NR>> {
        self.gyroscopic.then(|| self.curvature_force(s, sd))
    }

    fn boundary<S: AdScalar>(&self, j: usize, s: &SVector<S, NR>) -> S {
        self.system.boundary(j, &self.embed(s))
    }
}
