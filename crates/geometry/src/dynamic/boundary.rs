//! Boundary geometry of a [`DynSystem`]: `g_j`, `dg_j`, the touching band,
//! the most violated piece and the orthonormal boundary frame with `ι*`
//! (the run-time-sized counterparts of [`crate::boundary`]).

use super::DynSystem;
use super::chunk::{blocks, read_block, seed_block, with_width};
use crate::{GeometryError, TOUCH_TOLERANCE};
use nalgebra::{DMatrix, DVector};

/// `g_j(q)` and `dg_j(q)` by automatic differentiation.
///
/// # Errors
/// [`GeometryError::NoSuchBoundaryPiece`] for `j ≥ boundary_count()`.
pub fn boundary_gradient_dyn<Sy: DynSystem>(
    system: &Sy,
    j: usize,
    q: &DVector<f64>,
) -> Result<(f64, DVector<f64>), GeometryError> {
    let mut dg = DVector::zeros(q.len());
    let g = boundary_gradient_into(system, j, q.as_slice(), dg.as_mut_slice())?;
    Ok((g, dg))
}

/// [`boundary_gradient_dyn`] without allocating: `g_j(q)` returned, `dg_j(q)`
/// written into `dg` (of the length of `q`).
///
/// # Errors
/// [`GeometryError::NoSuchBoundaryPiece`] for a bad `j`;
/// [`GeometryError::DimensionMismatch`] when `dg` and `q` differ in length.
pub fn boundary_gradient_into<Sy: DynSystem>(
    system: &Sy,
    j: usize,
    q: &[f64],
    dg: &mut [f64],
) -> Result<f64, GeometryError> {
    let count = system.boundary_count();
    if j >= count {
        return Err(GeometryError::NoSuchBoundaryPiece { piece: j, count });
    }
    let n = q.len();
    if dg.len() != n {
        return Err(GeometryError::DimensionMismatch {
            what: "dg",
            expected: n,
            got: dg.len(),
        });
    }
    let mut g = 0.0;
    with_width!(n, W => {
        for blk in blocks::<W>(n) {
            let x = seed_block::<W>(q, blk);
            let value = system.boundary(j, &x);
            g = value.re;
            read_block(&value, blk.1, &mut dg[blk.0..]);
        }
    });
    Ok(g)
}

/// The touching band of `g` at `q` (see [`crate::touch_band`]).
pub fn touch_band_slice(g: f64, dg: &[f64], q: &[f64]) -> f64 {
    let spread: f64 = dg.iter().zip(q).map(|(d, x)| (d * x).abs()).sum();
    TOUCH_TOLERANCE * (1.0 + spread + g.abs())
}

/// The boundary piece `q` violates most beyond its touching band (see
/// [`crate::violated_piece`]).
///
/// # Errors
/// None in practice (every `j` is a valid piece).
pub fn violated_piece_dyn<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
) -> Result<Option<(usize, f64)>, GeometryError> {
    let mut worst: Option<(usize, f64)> = None;
    for j in 0..system.boundary_count() {
        let (g, dg) = boundary_gradient_dyn(system, j, q)?;
        let violated = g < -touch_band_slice(g, dg.as_slice(), q.as_slice()) || g.is_nan();
        if violated && worst.is_none_or(|(_, w)| g < w || g.is_nan()) {
            worst = Some((j, g));
        }
    }
    Ok(worst)
}

/// The smallest `g_j(q)` and its piece (`None` without a boundary).
pub fn min_boundary_dyn<Sy: DynSystem>(system: &Sy, q: &DVector<f64>) -> Option<(usize, f64)> {
    (0..system.boundary_count())
        .map(|j| (j, system.boundary(j, q.as_slice())))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// An orthonormal frame at a boundary point (see
/// [`BoundaryFrame`](crate::BoundaryFrame)): column 0 the unit normal
/// `dg/|dg|`, columns `1..n` an orthonormal basis of `ker dg`.
#[derive(Debug, Clone, PartialEq)]
pub struct DynBoundaryFrame {
    /// The boundary piece.
    pub piece: usize,
    /// `g_j(q)`.
    pub g: f64,
    /// `dg_j(q)`.
    pub dg: DVector<f64>,
    /// The orthogonal `n × n` frame.
    pub frame: DMatrix<f64>,
}

impl DynBoundaryFrame {
    /// The frame of piece `j` at `q`.
    ///
    /// # Errors
    /// [`GeometryError::DegenerateBoundary`] when `|dg| = 0` or not finite,
    /// [`GeometryError::NoSuchBoundaryPiece`] for a bad `j`.
    pub fn new<Sy: DynSystem>(
        system: &Sy,
        j: usize,
        q: &DVector<f64>,
    ) -> Result<Self, GeometryError> {
        let (g, dg) = boundary_gradient_dyn(system, j, q)?;
        let norm = dg.norm();
        if !(norm.is_finite() && norm > 0.0) {
            return Err(GeometryError::DegenerateBoundary {
                piece: j,
                norm,
                q: q.iter().copied().collect(),
            });
        }
        let frame = householder_frame(&(&dg / norm));
        Ok(Self {
            piece: j,
            g,
            dg,
            frame,
        })
    }

    /// The unit normal.
    pub fn normal(&self) -> DVector<f64> {
        self.frame.column(0).into_owned()
    }

    /// `ι*(p) = Bᵀ p` into `out` (length `n − 1`).
    ///
    /// # Panics
    /// If `out.len() != n − 1` (a programmer error inside the library).
    #[track_caller]
    pub fn iota_star(&self, p: &DVector<f64>, out: &mut [f64]) {
        assert_eq!(
            out.len(),
            self.frame.ncols() - 1,
            "iota_star output must have n - 1 entries"
        );
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.frame.column(i + 1).dot(p);
        }
    }

    /// `⟨n, p⟩`.
    pub fn normal_component(&self, p: &DVector<f64>) -> f64 {
        self.frame.column(0).dot(p)
    }
}

/// An orthogonal matrix whose first column is the unit vector `n` (one
/// Householder reflection, as [`crate::BoundaryFrame`]).
fn householder_frame(n: &DVector<f64>) -> DMatrix<f64> {
    let dim = n.len();
    let k = n.iamax();
    let s = if n[k] >= 0.0 { 1.0 } else { -1.0 };
    let mut u = n.clone();
    u[k] += s;
    let uu = u.dot(&u);
    let h = DMatrix::<f64>::identity(dim, dim) - &u * u.transpose() * (2.0 / uu);
    let mut f = DMatrix::<f64>::zeros(dim, dim);
    f.set_column(0, &(h.column(k) * (-s)));
    for (c, i) in (1..).zip((0..dim).filter(|&i| i != k)) {
        f.set_column(c, &h.column(i));
    }
    f
}
