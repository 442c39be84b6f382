//! Chunked forward-mode seeding for run-time sizes: dual numbers with a
//! compile-time number `W` of derivative directions, seeded with one block
//! of `W` coordinates at a time (see the module docs of
//! [`dynamic`](super)). Every number built here carries all of its
//! derivative parts, zeros included (see [`crate::ad`] for why).

use crate::ad::DenseConstant;
use num_dual::{DualSVec, HyperDualSVec64};

/// A scratch vector of numbers outside the evaluation kernels: on the
/// stack up to 8 entries (every system of the papers), on the heap beyond.
pub(crate) type Buf<S> = Scratch<S, 8>;

/// A scratch vector of `m × n` constraint-form entries (on the stack up to
/// the 3 × 8 of the largest systems of the papers).
pub(crate) type FormsBuf<S> = Scratch<S, 24>;

/// A scratch vector of `n` numbers: on the stack in an array of `K` when
/// `n ≤ K`, on the heap otherwise. The kernels take `K` = the chunk width,
/// so a system that fits in one chunk (every system of the papers)
/// evaluates without allocating, in arrays no larger than its size.
#[derive(Clone)]
pub(crate) enum Scratch<S: Copy, const K: usize> {
    /// `n ≤ K` entries on the stack.
    Inline([S; K], usize),
    /// More entries.
    Heap(Vec<S>),
}

impl<S: Copy, const K: usize> Scratch<S, K> {
    /// The `n` values `f(0), …, f(n − 1)`.
    #[inline(always)]
    pub(crate) fn from_fn(n: usize, mut f: impl FnMut(usize) -> S) -> Self {
        if n == 0 || n > K {
            return Scratch::Heap((0..n).map(f).collect());
        }
        let first = f(0);
        let mut a = [first; K];
        for (i, x) in a.iter_mut().enumerate().take(n).skip(1) {
            *x = f(i);
        }
        Scratch::Inline(a, n)
    }
}

impl<S: Copy, const K: usize> FromIterator<S> for Scratch<S, K> {
    /// The items in order: inline while they fit, on the heap otherwise.
    #[inline(always)]
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut it = iter.into_iter();
        let Some(first) = it.next() else {
            return Scratch::Heap(Vec::new());
        };
        if K == 0 {
            return Scratch::Heap(std::iter::once(first).chain(it).collect());
        }
        let mut a = [first; K];
        let mut n = 1;
        while let Some(x) = it.next() {
            if n == K {
                let mut v = a.to_vec();
                v.push(x);
                v.extend(it);
                return Scratch::Heap(v);
            }
            a[n] = x;
            n += 1;
        }
        Scratch::Inline(a, n)
    }
}

impl<'a, S: Copy, const K: usize> IntoIterator for &'a Scratch<S, K> {
    type Item = &'a S;
    type IntoIter = std::slice::Iter<'a, S>;
    #[inline(always)]
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<S: Copy, const K: usize> std::ops::Deref for Scratch<S, K> {
    type Target = [S];
    #[inline(always)]
    fn deref(&self) -> &[S] {
        match self {
            Scratch::Inline(a, n) => &a[..*n],
            Scratch::Heap(v) => v,
        }
    }
}

impl<S: Copy, const K: usize> std::ops::DerefMut for Scratch<S, K> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [S] {
        match self {
            Scratch::Inline(a, n) => &mut a[..*n],
            Scratch::Heap(v) => v,
        }
    }
}

/// Call `$body` with the const `$w` bound to the chunk width used for `$n`
/// directions: 1, 2, 4 or 8, the smallest that holds `n` up to 8 (wider
/// chunks are slower per evaluation than they save in evaluations).
///
/// Each width is a separate instantiation of every kernel for every
/// system type, so the set is kept small: widths 3 and 6 (for `n = 3`,
/// `5, 6`) cost a third more build time for a few per cent of speed on
/// those sizes. A padded direction is seeded with nothing and reads as
/// zero; the directions in use are computed exactly as in a chunk of their
/// own size (forward-mode directions do not mix).
macro_rules! with_width {
    ($n:expr, $w:ident => $body:expr) => {
        match $n {
            0 | 1 => {
                const $w: usize = 1;
                $body
            }
            2 => {
                const $w: usize = 2;
                $body
            }
            3 | 4 => {
                const $w: usize = 4;
                $body
            }
            _ => {
                const $w: usize = 8;
                $body
            }
        }
    };
}
pub(crate) use with_width;

/// The blocks `(start, len)` of `W` directions covering `0..n`.
pub(crate) fn blocks<const W: usize>(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).step_by(W).map(move |s| (s, W.min(n - s)))
}

/// `x` as constants.
#[inline(always)]
pub(crate) fn constants<T: DenseConstant, const K: usize>(x: &[f64]) -> Scratch<T, K> {
    Scratch::from_fn(x.len(), |i| T::constant(x[i]))
}

/// `x` as first-order duals, directions `0..len` seeded on `x[start..start + len]`.
#[inline(always)]
pub(crate) fn seed_block<const W: usize>(
    x: &[f64],
    (start, len): (usize, usize),
) -> Scratch<DualSVec<f64, W>, W> {
    let mut out: Scratch<DualSVec<f64, W>, W> = constants(x);
    for k in 0..len {
        if let Some(e) = out[start + k].eps.0.as_mut() {
            e[k] = 1.0;
        }
    }
    out
}

/// The derivative parts of a first-order dual, directions `0..len`.
pub(crate) fn read_block<const W: usize>(d: &DualSVec<f64, W>, len: usize, out: &mut [f64]) {
    match d.eps.0.as_ref() {
        Some(e) => out[..len].copy_from_slice(&e.as_slice()[..len]),
        None => out[..len].iter_mut().for_each(|o| *o = 0.0),
    }
}

/// `x` as hyper-duals, block `(start, len)` seeded in the first (`eps1`)
/// directions.
#[inline(always)]
pub(crate) fn seed_first<const A: usize, const B: usize>(
    x: &[f64],
    (start, len): (usize, usize),
) -> Scratch<HyperDualSVec64<A, B>, B> {
    let mut out: Scratch<HyperDualSVec64<A, B>, B> = constants(x);
    for k in 0..len {
        if let Some(e) = out[start + k].eps1.0.as_mut() {
            e[k] = 1.0;
        }
    }
    out
}

/// Seed block `(start, len)` of `x` in the second (`eps2`) directions.
pub(crate) fn seed_second_into<const A: usize, const B: usize>(
    x: &mut [HyperDualSVec64<A, B>],
    (start, len): (usize, usize),
) {
    for k in 0..len {
        if let Some(e) = x[start + k].eps2.0.as_mut() {
            e[k] = 1.0;
        }
    }
}

/// `x` as hyper-duals, block `(start, len)` seeded in the second (`eps2`)
/// directions.
#[inline(always)]
pub(crate) fn seed_second<const A: usize, const B: usize>(
    x: &[f64],
    block: (usize, usize),
) -> Scratch<HyperDualSVec64<A, B>, B> {
    let mut out: Scratch<HyperDualSVec64<A, B>, B> = constants(x);
    seed_second_into(&mut out, block);
    out
}

/// `(∂/∂eps1, ∂/∂eps2, ∂²/∂eps1∂eps2)` parts of a hyper-dual as slices
/// (zeros when a part is absent).
pub(crate) fn hyper_parts<const A: usize, const B: usize>(
    d: &HyperDualSVec64<A, B>,
) -> ([f64; A], [f64; B], [[f64; B]; A]) {
    let mut e1 = [0.0; A];
    let mut e2 = [0.0; B];
    let mut e12 = [[0.0; B]; A];
    if let Some(e) = d.eps1.0.as_ref() {
        e1.copy_from_slice(e.as_slice());
    }
    if let Some(e) = d.eps2.0.as_ref() {
        e2.copy_from_slice(e.as_slice());
    }
    if let Some(e) = d.eps1eps2.0.as_ref() {
        for (i, row) in e12.iter_mut().enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                *x = e[(i, j)];
            }
        }
    }
    (e1, e2, e12)
}
