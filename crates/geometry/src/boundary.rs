//! Boundary geometry of the admissible set `S = { g_j ≥ 0 }` (docs/theory.md §2,
//! \[VCI\] §3): `dg_j(q)`, an orthonormal basis of `V_q = ker dg_j(q)` and the
//! restriction `ι*_q : T*_q Q → V_q*`, `ι*(p) = Bᵀ p`.
//!
//! The projection `π_S` of \[VCI\] does not enter the equations once `ι*` is
//! applied to both sides of the impact conditions, so no model supplies it.

use crate::ad::{gradient_of, seed_gradient};
use crate::{GeometryError, System};
use nalgebra::{SMatrix, SVector};

/// `g_j(q)` and `dg_j(q)` by automatic differentiation.
///
/// # Errors
/// [`GeometryError::NoSuchBoundaryPiece`] for `j ≥ boundary_count()`.
pub fn boundary_gradient<Sy, const N: usize, const M: usize>(
    system: &Sy,
    j: usize,
    q: &SVector<f64, N>,
) -> Result<(f64, SVector<f64, N>), GeometryError>
where
    Sy: System<N, M>,
{
    let count = system.boundary_count();
    if j >= count {
        return Err(GeometryError::NoSuchBoundaryPiece { piece: j, count });
    }
    let g = system.boundary(j, &seed_gradient(q));
    Ok((g.re, gradient_of(g)))
}

/// Relative band `|g| ≤ TOUCH_TOLERANCE · (1 + Σᵢ |∂ᵢg| |qᵢ| + |g|)` in which
/// a configuration counts as touching a boundary piece rather than crossing
/// it: the round-off level of `g` at `q`, with a wide margin. Only the
/// coordinates `g` depends on count: a floor `y ≥ 0` far out in `x`
/// (`x = 1e300`) keeps a band on the scale of `y`.
pub const TOUCH_TOLERANCE: f64 = 1e-12;

/// The touching band of `g_j` at `q` (see [`TOUCH_TOLERANCE`]): values of
/// `g` within `±touch_band` are "on the boundary".
pub fn touch_band<const N: usize>(g: f64, dg: &SVector<f64, N>, q: &SVector<f64, N>) -> f64 {
    let spread: f64 = dg.iter().zip(q.iter()).map(|(d, x)| (d * x).abs()).sum();
    TOUCH_TOLERANCE * (1.0 + spread + g.abs())
}

/// The boundary piece `q` violates most, beyond its touching band
/// ([`touch_band`]): `Some((j, g_j(q)))` when some `g_j(q) < −band`
/// (or is NaN). A configuration computed to lie on a boundary (e.g.
/// `y = wall − R sin φ`) is admissible even when round-off leaves
/// `g = −1e-15`.
///
/// # Errors
/// None in practice (every `j` is a valid piece).
pub fn violated_piece<Sy, const N: usize, const M: usize>(
    system: &Sy,
    q: &SVector<f64, N>,
) -> Result<Option<(usize, f64)>, GeometryError>
where
    Sy: System<N, M>,
{
    let mut worst: Option<(usize, f64)> = None;
    for j in 0..system.boundary_count() {
        let (g, dg) = boundary_gradient(system, j, q)?;
        let violated = g < -touch_band(g, &dg, q) || g.is_nan();
        if violated && worst.is_none_or(|(_, w)| g < w || g.is_nan()) {
            worst = Some((j, g));
        }
    }
    Ok(worst)
}

/// The smallest `g_j(q)` over all boundary pieces and the piece attaining it
/// (`None` when the system has no boundary).
pub fn min_boundary<Sy, const N: usize, const M: usize>(
    system: &Sy,
    q: &SVector<f64, N>,
) -> Option<(usize, f64)>
where
    Sy: System<N, M>,
{
    (0..system.boundary_count())
        .map(|j| (j, system.boundary(j, q)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// An orthonormal frame at a boundary point: the unit normal
/// `n = dg/|dg|` (pointing into `S`) and an orthonormal basis of
/// `ker dg(q)`, built from one Householder reflection (exact to round-off).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundaryFrame<const N: usize> {
    /// The boundary piece.
    pub piece: usize,
    /// `g_j(q)` at the frame's point (0 on the boundary).
    pub g: f64,
    /// `dg_j(q)`.
    pub dg: SVector<f64, N>,
    /// Orthogonal `N × N` matrix: column 0 is `n = dg/|dg|`, columns
    /// `1..N` are an orthonormal basis `B` of `ker dg(q)`.
    pub frame: SMatrix<f64, N, N>,
}

impl<const N: usize> BoundaryFrame<N> {
    /// The frame of boundary piece `j` at `q`.
    ///
    /// # Errors
    /// [`GeometryError::DegenerateBoundary`] when `|dg| = 0` (or not finite),
    /// [`GeometryError::NoSuchBoundaryPiece`] for a bad `j`.
    pub fn new<Sy, const M: usize>(
        system: &Sy,
        j: usize,
        q: &SVector<f64, N>,
    ) -> Result<Self, GeometryError>
    where
        Sy: System<N, M>,
    {
        let (g, dg) = boundary_gradient(system, j, q)?;
        let norm = dg.norm();
        if !(norm.is_finite() && norm > 0.0) {
            return Err(GeometryError::DegenerateBoundary {
                piece: j,
                norm,
                q: q.iter().copied().collect(),
            });
        }
        Ok(Self {
            piece: j,
            g,
            dg,
            frame: householder_frame(&(dg / norm)),
        })
    }

    /// The unit normal `dg/|dg|`.
    pub fn normal(&self) -> SVector<f64, N> {
        self.frame.column(0).into_owned()
    }

    /// The `i`-th basis vector of `ker dg` (`i < N − 1`).
    pub fn tangent(&self, i: usize) -> SVector<f64, N> {
        self.frame.column(i + 1).into_owned()
    }

    /// `ι*(p) = Bᵀ p`, written into `out` (length `N − 1`).
    ///
    /// # Panics
    /// If `out.len() != N − 1` (a programmer error inside the library).
    #[track_caller]
    pub fn iota_star(&self, p: &SVector<f64, N>, out: &mut [f64]) {
        assert_eq!(out.len(), N - 1, "iota_star output must have N - 1 entries");
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.frame.column(i + 1).dot(p);
        }
    }

    /// The component of `p` along the normal, `⟨n, p⟩`.
    pub fn normal_component(&self, p: &SVector<f64, N>) -> f64 {
        self.frame.column(0).dot(p)
    }
}

/// An orthogonal matrix whose first column is the unit vector `n`.
fn householder_frame<const N: usize>(n: &SVector<f64, N>) -> SMatrix<f64, N, N> {
    // k: largest |n_k|, so u = n + s e_k is far from zero.
    let k = n.iamax();
    let s = if n[k] >= 0.0 { 1.0 } else { -1.0 };
    let mut u = *n;
    u[k] += s;
    let uu = u.dot(&u);
    // H = I − 2 u uᵀ / uᵀu is orthogonal and symmetric with H e_k = −s n.
    let h = SMatrix::<f64, N, N>::identity() - u * u.transpose() * (2.0 / uu);
    let mut f = SMatrix::<f64, N, N>::zeros();
    f.set_column(0, &(h.column(k) * (-s)));
    for (c, i) in (1..).zip((0..N).filter(|&i| i != k)) {
        f.set_column(c, &h.column(i));
    }
    f
}
