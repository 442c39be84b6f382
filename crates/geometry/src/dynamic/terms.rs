//! A Lagrangian written as a sum of terms over few coordinates
//! (docs/theory.md §11.4): the structure that makes the cost of a step
//! linear in the size of a sparsely coupled system.
//!
//! A chain of bodies, a gas of particles or a ladder of cells has
//! `L = Σ_e L_e(q_{S_e}, v_{S_e})`, each term reading the coordinates of
//! its *stencil* `S_e` only. Differentiating term by term costs
//! `Σ_e ⌈|S_e|/W⌉²` small evaluations instead of `⌈n/W⌉²` evaluations of
//! the whole `L`, and `∂²L_d/∂q0∂q1` is supported on `⋃_e S_e × S_e`, the
//! pattern a sparse LU factors in linear time for a chain.

use super::DynSystem;
use crate::{AdScalar, GeometryError};
use nalgebra::DMatrix;

/// The stencils of the terms of `L = Σ_e L_e(q_{S_e}, v_{S_e})`: for each
/// term, the increasing list of the coordinates it reads (see
/// [`DynSystem::lagrangian_terms`]).
///
/// # Example
/// ```
/// use diracvi_geometry::dynamic::LagrangianTerms;
/// // Three masses joined by two springs: {0, 1} and {1, 2}.
/// let terms = LagrangianTerms::new(3, [vec![0, 1], vec![1, 2]])?;
/// assert_eq!(terms.len(), 2);
/// assert_eq!(terms.stencil(1), &[1, 2]);
/// assert_eq!(terms.pattern().count(), 7);
/// # Ok::<(), diracvi_geometry::GeometryError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LagrangianTerms {
    n: usize,
    /// Term `e` reads `indices[offsets[e]..offsets[e + 1]]`.
    offsets: Vec<usize>,
    indices: Vec<usize>,
}

impl LagrangianTerms {
    /// The stencils of the terms of a Lagrangian of `n` coordinates.
    ///
    /// # Errors
    /// [`GeometryError::BadStencil`] when a stencil is not strictly
    /// increasing or names a coordinate `≥ n`.
    pub fn new<I, S>(n: usize, stencils: I) -> Result<Self, GeometryError>
    where
        I: IntoIterator<Item = S>,
        S: IntoIterator<Item = usize>,
    {
        let mut offsets = vec![0];
        let mut indices = Vec::new();
        for (term, stencil) in stencils.into_iter().enumerate() {
            let start = indices.len();
            for i in stencil {
                if i >= n {
                    return Err(GeometryError::BadStencil {
                        term,
                        reason: format!("coordinate {i} out of range (n = {n})"),
                    });
                }
                if indices.len() > start && indices[indices.len() - 1] >= i {
                    return Err(GeometryError::BadStencil {
                        term,
                        reason: "coordinates must be strictly increasing".to_owned(),
                    });
                }
                indices.push(i);
            }
            offsets.push(indices.len());
        }
        Ok(Self {
            n,
            offsets,
            indices,
        })
    }

    /// Number of coordinates `n` of the Lagrangian.
    pub fn coordinate_count(&self) -> usize {
        self.n
    }

    /// Number of terms.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are no terms (`L = 0`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The stencil of term `e` (increasing coordinate indices).
    ///
    /// # Panics
    /// If `e ≥ len()`.
    pub fn stencil(&self, e: usize) -> &[usize] {
        &self.indices[self.offsets[e]..self.offsets[e + 1]]
    }

    /// The size of the largest stencil.
    pub fn max_stencil(&self) -> usize {
        (0..self.len())
            .map(|e| self.stencil(e).len())
            .max()
            .unwrap_or(0)
    }

    /// `Σ_e |S_e|²`: the number of entries the terms' blocks of
    /// `∂²L_d/∂q0∂q1` write, and the measure of the work of a term-by-term
    /// Jacobian.
    pub fn block_entries(&self) -> usize {
        (0..self.len()).map(|e| self.stencil(e).len().pow(2)).sum()
    }

    /// The support `⋃_e S_e × S_e` of `∂²L_d/∂q0∂q1` (and of `∂²L/∂q∂v`),
    /// as distinct `(row, column)` pairs in increasing order.
    pub fn pattern(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let mut entries: Vec<(usize, usize)> = (0..self.len())
            .flat_map(|e| {
                let s = self.stencil(e);
                s.iter().flat_map(move |&i| s.iter().map(move |&j| (i, j)))
            })
            .collect();
        entries.sort_unstable();
        entries.dedup();
        entries.into_iter()
    }
}

/// Term `e` of a system's Lagrangian seen as a system of its own, on the
/// `|S_e|` coordinates of its stencil: the discrete Lagrangian and its
/// derivatives of one term are those of this system.
pub(crate) struct Term<'a, Sy> {
    pub(crate) system: &'a Sy,
    pub(crate) e: usize,
    pub(crate) k: usize,
}

impl<'a, Sy> Term<'a, Sy> {
    /// The terms of `terms` that read at least one coordinate, each with
    /// its stencil `S_e`, in order (a constant term has no derivative).
    pub(crate) fn nonempty(
        system: &'a Sy,
        terms: &'a LagrangianTerms,
    ) -> impl Iterator<Item = (&'a [usize], Term<'a, Sy>)> {
        (0..terms.len()).filter_map(move |e| {
            let s = terms.stencil(e);
            (!s.is_empty()).then_some((
                s,
                Term {
                    system,
                    e,
                    k: s.len(),
                },
            ))
        })
    }
}

impl<Sy: DynSystem> DynSystem for Term<'_, Sy> {
    fn coordinate_count(&self) -> usize {
        self.k
    }
    fn constraint_count(&self) -> usize {
        0
    }
    #[inline(always)]
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.system.lagrangian_term(self.e, q, v)
    }
    fn time_dependent(&self) -> bool {
        self.system.time_dependent()
    }
    #[inline(always)]
    fn lagrangian_at<S: AdScalar>(&self, q: &[S], v: &[S], t: f64) -> S {
        self.system.lagrangian_term_at(self.e, q, v, t)
    }
    fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
}

/// Where the terms' blocks of a matrix of second derivatives go (`D12 L_d`,
/// `∂²L/∂v²`; docs/theory.md §11.4): one loop over the terms writes either
/// into a dense `n × n` matrix or, slot by slot, into sparse storage.
pub(crate) trait BlockSink {
    /// Add `v` to entry `(s[i], s[j])`, of the block of the term with
    /// stencil `s` whose slots start at `offset` (`Σ_{f<e} |S_f|²`).
    fn add(&mut self, s: &[usize], offset: usize, i: usize, j: usize, v: f64);
}

/// A dense matrix: the entry at `(s[i], s[j])`.
impl BlockSink for DMatrix<f64> {
    #[inline(always)]
    fn add(&mut self, s: &[usize], _offset: usize, i: usize, j: usize, v: f64) {
        self[(s[i], s[j])] += v;
    }
}

/// Sparse storage: the entry handed on by slot, `offset + i |s| + j`.
pub(crate) struct Slots<F>(pub(crate) F);

impl<F: FnMut(usize, f64)> BlockSink for Slots<F> {
    #[inline(always)]
    fn add(&mut self, s: &[usize], offset: usize, i: usize, j: usize, v: f64) {
        (self.0)(offset + i * s.len() + j, v);
    }
}
