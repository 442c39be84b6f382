//! `L_d(q0, q1, h) = h · L(Ψ_d^h(q0, q1))` of a [`DynSystem`] and its exact
//! derivatives, in chunks of directions (docs/theory.md §2, §11).
//!
//! The same quantities as [`DiscreteLagrangian`](crate::DiscreteLagrangian)
//! — `jet` (`L_d, D1, D2, D12`), `time_jet` (`L_d, D3, D2, D23`), `D1`, `D2`,
//! the discrete energy `E_d = −D3 L_d`, `D11`, `D22` and the directional
//! discrete Euler–Lagrange expression — with the same discrete
//! Lagrange–d'Alembert forces of a gyroscopic system and the same
//! [`Orientation`]. Forward-mode derivatives are computed direction by
//! direction, so the chunked blocks equal, bit for bit, what one evaluation
//! with every direction gives: a [`Fixed`](super::Fixed) system here
//! reproduces the compile-time-sized core exactly.

use super::chunk::{
    Buf, Scratch, blocks, constants, hyper_parts, read_block, seed_block, seed_first, seed_second,
    seed_second_into, with_width,
};
use super::terms::{BlockSink, Slots};
use super::{DynSystem, LagrangianTerms, Term};
use crate::ad::DenseConstant;
use crate::{AdScalar, Discretization, GeometryError, Orientation};
use nalgebra::{DMatrix, DVector};
use num_dual::{Dual64, DualSVec, HyperDualSVec64};

/// `L_d` with `D1`, `D2` and `D12` (see [`LdJet`](crate::LdJet)).
#[derive(Debug, Clone, PartialEq)]
pub struct DynLdJet {
    /// `L_d(a, b, h)`.
    pub value: f64,
    /// `D1 L_d` (plus the discrete force on `a`).
    pub d1: DVector<f64>,
    /// `D2 L_d` (plus the discrete force on `b`).
    pub d2: DVector<f64>,
    /// `∂(D1 L_d + f_a)_i / ∂b_j`.
    pub d12: DMatrix<f64>,
}

impl DynLdJet {
    /// A jet of `n` coordinates, zero.
    pub fn zeros(n: usize) -> Self {
        Self {
            value: 0.0,
            d1: DVector::zeros(n),
            d2: DVector::zeros(n),
            d12: DMatrix::zeros(n, n),
        }
    }
}

/// `L_d` with `D3`, `D2` and `D23` (see [`LdTimeJet`](crate::LdTimeJet)).
#[derive(Debug, Clone, PartialEq)]
pub struct DynLdTimeJet {
    /// `L_d(a, b, h)`.
    pub value: f64,
    /// `D3 L_d = ∂L_d/∂h` (`E_d = −D3 L_d`).
    pub d3: f64,
    /// `D2 L_d` (plus the discrete force on `b`).
    pub d2: DVector<f64>,
    /// `∂(D2 L_d + f_b)_j / ∂h`.
    pub d23: DVector<f64>,
}

/// The discrete Lagrangian of a [`DynSystem`] through a discretization map
/// of `R^n`, read in an [`Orientation`], optionally in other units.
pub struct DynDiscreteLagrangian<'a, Sy> {
    system: &'a Sy,
    map: Discretization,
    orientation: Orientation,
    /// The factor of [`in_units`](Self::in_units), `1` by default. A plain
    /// `f64`, not an `Option`: an `Option<f64>`'s `None` leaves its payload
    /// uninitialized, and a multiplication the optimiser performs
    /// speculatively on stale subnormal bits costs a microcode assist
    /// (measured: a third of the time of a `D1` evaluation; see
    /// [`crate::ad`]).
    unit: f64,
    /// The start `t_lo` of the step's interval in time (the earlier end,
    /// whatever the orientation), for a time-dependent system
    /// ([`DynSystem::time_dependent`]); `0` by default.
    start: f64,
}

impl<Sy> Clone for DynDiscreteLagrangian<'_, Sy> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<Sy> Copy for DynDiscreteLagrangian<'_, Sy> {}

/// The increment `y − x` with its real part replaced by the exact `d` (see
/// [`crate::ad::increment`]).
#[inline(always)]
fn increment<S: AdScalar, const K: usize>(x: &[S], y: &[S], d: &[f64]) -> Scratch<S, K> {
    Scratch::from_fn(x.len(), |i| {
        let e = y[i] - x[i];
        e - e.re() + d[i]
    })
}

/// `a + d` on the stack (for the systems of the papers).
#[inline(always)]
fn sum(a: &DVector<f64>, d: &DVector<f64>) -> Buf<f64> {
    a.iter().zip(d.iter()).map(|(x, y)| x + y).collect()
}

/// Terms whose stencils have at most this many coordinates have their
/// gradients taken one direction at a time with plain dual numbers
/// (`DynDiscreteLagrangian::gradient_directions`).
const TERM_DIRECTIONS: usize = 4;

impl<'a, Sy: DynSystem> DynDiscreteLagrangian<'a, Sy> {
    /// The forward-oriented discrete Lagrangian of `system` through `map`.
    pub fn new(system: &'a Sy, map: Discretization) -> Self {
        Self {
            system,
            map,
            orientation: Orientation::Forward,
            unit: 1.0,
            start: 0.0,
        }
    }

    /// The same for the step whose interval in time starts at `t_lo` (its
    /// earlier end, whatever the orientation): a time-dependent system's
    /// `L` is evaluated at the time of the discretization point, `t_lo` for
    /// the forward map, `t_lo + h/2` for the midpoint map
    /// (docs/theory.md §8.8). No effect on an autonomous system.
    pub fn starting_at(self, t_lo: f64) -> Self {
        Self {
            start: t_lo,
            ..self
        }
    }

    /// The start of the step's interval set by
    /// [`starting_at`](Self::starting_at).
    pub fn start(&self) -> f64 {
        self.start
    }

    /// The same, read with `orientation`.
    pub fn oriented(self, orientation: Orientation) -> Self {
        Self {
            orientation,
            ..self
        }
    }

    /// The same multiplied by `unit`, a power of two (see
    /// [`DiscreteLagrangian::in_units`](crate::DiscreteLagrangian::in_units)).
    pub fn in_units(self, unit: f64) -> Self {
        Self { unit, ..self }
    }

    /// The factor set by [`in_units`](Self::in_units).
    pub fn unit(&self) -> f64 {
        self.unit
    }

    /// The orientation.
    pub fn orientation(&self) -> Orientation {
        self.orientation
    }

    /// The system.
    pub fn system(&self) -> &'a Sy {
        self.system
    }

    /// The discretization map.
    pub fn map(&self) -> Discretization {
        self.map
    }

    /// The node weight of `q1` in `Ψ_d`: `q = q0 + c (q1 − q0)`.
    fn node_weight(&self) -> f64 {
        match self.map {
            Discretization::Forward => 0.0,
            Discretization::Midpoint => 0.5,
        }
    }

    /// `h L(Ψ_d^h(q0, q0 + d))` (times the unit) in the raw argument order.
    #[inline(always)]
    fn raw<S: AdScalar, const K: usize>(&self, q0: &[S], d: &[S], h: S) -> S {
        let inv_h = h.recip();
        let v = Scratch::<S, K>::from_fn(d.len(), |i| d[i] * inv_h);
        let t = self.start + self.node_weight() * h.re();
        let l = match self.map {
            Discretization::Forward => self.system.lagrangian_at(q0, &v, t),
            Discretization::Midpoint => {
                let q = Scratch::<S, K>::from_fn(d.len(), |i| q0[i] + d[i] * 0.5);
                self.system.lagrangian_at(&q, &v, t)
            }
        } * h;
        if self.unit.to_bits() == 1f64.to_bits() {
            l
        } else {
            l * self.unit
        }
    }

    /// `L_d(a, b, h)` in this orientation from the exact increment `d = b − a`
    /// (`b` enters only through `d` for the maps of `R^n`).
    ///
    /// # Errors
    /// On a dimension mismatch.
    #[inline(always)]
    pub fn value_step<S: AdScalar>(&self, a: &[S], d: &[S], h: S) -> Result<S, GeometryError> {
        self.check("a", a.len())?;
        self.check("d", d.len())?;
        Ok(match self.orientation {
            Orientation::Forward => self.raw::<S, 8>(a, d, h),
            Orientation::Reversed => {
                let b: Buf<S> = a.iter().zip(d).map(|(&x, &di)| x + di).collect();
                let minus: Buf<S> = d.iter().map(|&di| -di).collect();
                self.raw::<S, 8>(&b, &minus, h)
            }
        })
    }

    /// [`value_step`](Self::value_step) with dual endpoints `x`, `y` whose
    /// real parts are `a`, `a + d`: the increment carries the derivative
    /// parts of `y − x` and the exact real part `d`.
    #[inline(always)]
    pub(super) fn value_duals<S: AdScalar, const K: usize>(
        &self,
        x: &[S],
        y: &[S],
        d: &[f64],
        h: S,
    ) -> S {
        let mut dd = increment::<S, K>(x, y, d);
        match self.orientation {
            Orientation::Forward => self.raw::<S, K>(x, &dd, h),
            Orientation::Reversed => {
                for di in dd.iter_mut() {
                    *di = -*di;
                }
                self.raw::<S, K>(y, &dd, h)
            }
        }
    }

    fn check(&self, what: &'static str, got: usize) -> Result<(), GeometryError> {
        let expected = self.system.coordinate_count();
        if got == expected {
            Ok(())
        } else {
            Err(GeometryError::DimensionMismatch {
                what,
                expected,
                got,
            })
        }
    }

    /// The discrete forces `(f_a, f_b)` of the step `x → y` (increment
    /// carrying `d`) in this orientation, or `None` without a gyroscopic
    /// force: `f = h u c F(Ψ_d)` with the node weights `c` of the two ends.
    #[allow(clippy::type_complexity)]
    pub(super) fn forces<S: AdScalar>(
        &self,
        x: &[S],
        y: &[S],
        d: &[f64],
        h: S,
    ) -> Option<(Buf<S>, Buf<S>)> {
        let dd: Buf<S> = increment::<S, 8>(x, y, d);
        let (q0, step): (&[S], Buf<S>) = match self.orientation {
            Orientation::Forward => (x, dd),
            Orientation::Reversed => (y, dd.iter().map(|&di| -di).collect()),
        };
        let inv_h = h.recip();
        let v: Buf<S> = step.iter().map(|&di| di * inv_h).collect();
        let c1 = self.node_weight();
        let q: Buf<S> = match self.map {
            Discretization::Forward => q0.iter().copied().collect(),
            Discretization::Midpoint => q0.iter().zip(&step).map(|(&a, &s)| a + s * 0.5).collect(),
        };
        let mut force = Buf::<S>::from_fn(q.len(), |_| S::from(0.0));
        if !self.system.gyroscopic_force(&q, &v, &mut force) {
            return None;
        }
        let scale = h * self.unit();
        let (w0, w1) = (1.0 - c1, c1);
        let raw0: Buf<S> = force.iter().map(|&f| f * scale * w0).collect();
        let raw1: Buf<S> = force.iter().map(|&f| f * scale * w1).collect();
        Some(match self.orientation {
            Orientation::Forward => (raw0, raw1),
            Orientation::Reversed => (raw1, raw0),
        })
    }

    pub(super) fn forced(&self, a: &[f64], d: &[f64]) -> bool {
        let mut f = Scratch::<f64, 8>::from_fn(a.len(), |_| 0.0);
        self.system.gyroscopic_force(a, d, &mut f)
    }

    /// `L_d, D1, D2, D12` at `(a, a + d, h)` into `out`.
    ///
    /// # Errors
    /// On a dimension mismatch.
    pub fn jet_increment(
        &self,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
        out: &mut DynLdJet,
    ) -> Result<(), GeometryError> {
        self.check("a", a.len())?;
        self.check("d", d.len())?;
        let b = sum(a, d);
        if let Some(terms) = self.termwise(a.as_slice(), d.as_slice()) {
            out.d12.fill(0.0);
            // The dense `D12` is the terms' blocks' destination.
            let mut d12 = std::mem::replace(&mut out.d12, DMatrix::zeros(0, 0));
            self.jet_terms(terms, a.as_slice(), &b, d.as_slice(), h, out, &mut d12);
            out.d12 = d12;
            return Ok(());
        }
        with_width!(a.len(), W => self.jet_w::<W>(a.as_slice(), &b, d.as_slice(), h, out));
        Ok(())
    }

    fn jet_w<const W: usize>(&self, a: &[f64], b: &[f64], d: &[f64], h: f64, out: &mut DynLdJet) {
        let n = a.len();
        self.jet_blocks::<W, _>(a, b, d, h, out);
        if self.forced(a, d) {
            let x: Scratch<DualSVec<f64, W>, W> = constants(a);
            let mut g = [0.0; W];
            for bj in blocks::<W>(n) {
                let y = seed_block::<W>(b, bj);
                if let Some((f_a, f_b)) = self.forces(&x, &y, d, DualSVec::constant(h)) {
                    for i in 0..n {
                        read_block(&f_a[i], bj.1, &mut g);
                        for l in 0..bj.1 {
                            out.d12[(i, bj.0 + l)] += g[l];
                        }
                        if bj.0 == 0 {
                            out.d1[i] += f_a[i].re;
                            out.d2[i] += f_b[i].re;
                        }
                    }
                }
            }
        }
    }

    /// The blocks of `L_d, D1, D2, D12` (without forces) into `sink`.
    #[inline(always)]
    fn jet_blocks<const W: usize, K: JetSink>(
        &self,
        a: &[f64],
        b: &[f64],
        d: &[f64],
        h: f64,
        sink: &mut K,
    ) {
        let n = a.len();
        let hd = HyperDualSVec64::<W, W>::constant(h);
        for bi in blocks::<W>(n) {
            let x = seed_first::<W, W>(a, bi);
            for bj in blocks::<W>(n) {
                let y = seed_second::<W, W>(b, bj);
                let l = self.value_duals::<_, W>(&x, &y, d, hd);
                let (e1, e2, e12) = hyper_parts(&l);
                if bi.0 == 0 && bj.0 == 0 {
                    sink.value(l.re);
                }
                if bj.0 == 0 {
                    for k in 0..bi.1 {
                        sink.d1(bi.0 + k, e1[k]);
                    }
                }
                if bi.0 == 0 {
                    for l in 0..bj.1 {
                        sink.d2(bj.0 + l, e2[l]);
                    }
                }
                for k in 0..bi.1 {
                    for l in 0..bj.1 {
                        sink.d12(bi.0 + k, bj.0 + l, e12[k][l]);
                    }
                }
            }
        }
    }

    /// The stencils to differentiate term by term at `(a, a + d)`, or
    /// `None` for the whole `L` at once: terms are used for systems of more
    /// than [`TERMWISE_ABOVE`] coordinates that declare them and have no
    /// gyroscopic force (docs/theory.md §11.4).
    pub(super) fn termwise(&self, a: &[f64], d: &[f64]) -> Option<&'a LagrangianTerms> {
        let terms = self.system.lagrangian_terms()?;
        (a.len() > TERMWISE_ABOVE && terms.coordinate_count() == a.len() && !self.forced(a, d))
            .then_some(terms)
    }

    /// Term `e`'s discrete Lagrangian (same map, orientation and unit).
    pub(super) fn term<'t>(
        &self,
        term: &'t Term<'a, Sy>,
    ) -> DynDiscreteLagrangian<'t, Term<'a, Sy>> {
        DynDiscreteLagrangian {
            system: term,
            map: self.map,
            orientation: self.orientation,
            unit: self.unit,
            start: self.start,
        }
    }

    /// [`jet_increment`](Self::jet_increment) summed term by term: `L_d`,
    /// `D1`, `D2` into `out` (its `d12` is not touched), the terms' blocks
    /// of `D12` into `d12` (a dense matrix, or sparse storage by slot).
    #[allow(clippy::too_many_arguments)]
    fn jet_terms<B: BlockSink>(
        &self,
        terms: &LagrangianTerms,
        a: &[f64],
        b: &[f64],
        d: &[f64],
        h: f64,
        out: &mut DynLdJet,
        d12: &mut B,
    ) {
        out.value = 0.0;
        out.d1.fill(0.0);
        out.d2.fill(0.0);
        let mut offset = 0;
        for e in 0..terms.len() {
            let s = terms.stencil(e);
            let term = Term {
                system: self.system,
                e,
                k: s.len(),
            };
            let ld = self.term(&term);
            if s.is_empty() {
                out.value += ld.raw::<f64, 1>(&[], &[], h);
                continue;
            }
            let gather = |x: &[f64]| Scratch::<f64, 8>::from_fn(s.len(), |i| x[s[i]]);
            let (ae, be, de) = (gather(a), gather(b), gather(d));
            let mut sink = TermSink {
                jet: &mut *out,
                s,
                offset,
                d12: &mut *d12,
            };
            with_width!(s.len(), W => ld.jet_blocks::<W, _>(&ae, &be, &de, h, &mut sink));
            offset += s.len() * s.len();
        }
    }

    /// [`jet_increment`](Self::jet_increment) for sparse storage of
    /// `D12`: `L_d`, `D1`, `D2` into `out` (its `d12` is not touched and
    /// may be empty) and every term's block of `D12` handed entry by entry
    /// to `d12(slot, value)`, where entry `(S_e[k], S_e[l])` of term `e` is
    /// at `slot = Σ_{f<e} |S_f|² + k |S_e| + l` (several slots may name the
    /// same entry of `D12`: their values add up). Returns `Ok(false)`, with
    /// nothing written, when the derivatives are not taken term by term
    /// (no terms declared, at most [`TERMWISE_ABOVE`] coordinates, or a
    /// gyroscopic force): `D12` is then not supported on the stencils.
    ///
    /// # Errors
    /// On a dimension mismatch.
    pub fn jet_terms_increment(
        &self,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
        out: &mut DynLdJet,
        d12: impl FnMut(usize, f64),
    ) -> Result<bool, GeometryError> {
        self.check("a", a.len())?;
        self.check("d", d.len())?;
        let Some(terms) = self.termwise(a.as_slice(), d.as_slice()) else {
            return Ok(false);
        };
        let b = sum(a, d);
        self.jet_terms(
            terms,
            a.as_slice(),
            &b,
            d.as_slice(),
            h,
            out,
            &mut Slots(d12),
        );
        Ok(true)
    }

    /// `L_d, D3, D2, D23` at `(a, a + d, h)`.
    ///
    /// # Errors
    /// On a dimension mismatch.
    pub fn time_jet_increment(
        &self,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
    ) -> Result<DynLdTimeJet, GeometryError> {
        self.check("a", a.len())?;
        self.check("d", d.len())?;
        let b = a + d;
        let n = a.len();
        let mut out = DynLdTimeJet {
            value: 0.0,
            d3: 0.0,
            d2: DVector::zeros(n),
            d23: DVector::zeros(n),
        };
        with_width!(n, W => self.time_jet_w::<W>(a.as_slice(), b.as_slice(), d.as_slice(), h, &mut out));
        Ok(out)
    }

    fn time_jet_w<const W: usize>(
        &self,
        a: &[f64],
        b: &[f64],
        d: &[f64],
        h: f64,
        out: &mut DynLdTimeJet,
    ) {
        let n = a.len();
        let mut hd = HyperDualSVec64::<1, W>::constant(h);
        if let Some(e) = hd.eps1.0.as_mut() {
            e[0] = 1.0;
        }
        let x: Scratch<HyperDualSVec64<1, W>, W> = constants(a);
        for bj in blocks::<W>(n) {
            let y = seed_second::<1, W>(b, bj);
            let l = self.value_duals::<_, W>(&x, &y, d, hd);
            let (e1, e2, e12) = hyper_parts(&l);
            out.value = l.re;
            out.d3 = e1[0];
            for k in 0..bj.1 {
                out.d2[bj.0 + k] = e2[k];
                out.d23[bj.0 + k] = e12[0][k];
            }
        }
        if self.forced(a, d) {
            let x: Buf<Dual64> = a.iter().map(|&v| Dual64::from_re(v)).collect();
            let y: Buf<Dual64> = b.iter().map(|&v| Dual64::from_re(v)).collect();
            if let Some((_, f_b)) = self.forces(&x, &y, d, Dual64::from_re(h).derivative()) {
                for j in 0..n {
                    out.d2[j] += f_b[j].re;
                    out.d23[j] += f_b[j].eps;
                }
            }
        }
    }

    /// `D1 L_d(a, a + d, h)` (plus the force on `a`) into `out`.
    ///
    /// # Errors
    /// On a dimension mismatch.
    pub fn d1_increment(
        &self,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
        out: &mut DVector<f64>,
    ) -> Result<(), GeometryError> {
        self.gradient_increment(a, d, h, true, out)
    }

    /// `D2 L_d(a, a + d, h)` (plus the force on `b`) into `out`.
    ///
    /// # Errors
    /// On a dimension mismatch.
    pub fn d2_increment(
        &self,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
        out: &mut DVector<f64>,
    ) -> Result<(), GeometryError> {
        self.gradient_increment(a, d, h, false, out)
    }

    fn gradient_increment(
        &self,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
        first: bool,
        out: &mut DVector<f64>,
    ) -> Result<(), GeometryError> {
        self.check("a", a.len())?;
        self.check("d", d.len())?;
        let (a, d) = (a.as_slice(), d.as_slice());
        let n = a.len();
        if let Some(terms) = self.termwise(a, d) {
            out.fill(0.0);
            for (s, term) in Term::nonempty(self.system, terms) {
                if s.len() <= TERM_DIRECTIONS {
                    self.term(&term).gradient_directions(s, a, d, h, first, out);
                    continue;
                }
                let gather = |x: &[f64]| Scratch::<f64, 8>::from_fn(s.len(), |i| x[s[i]]);
                let (ae, de) = (gather(a), gather(d));
                let be = Scratch::<f64, 8>::from_fn(s.len(), |i| ae[i] + de[i]);
                with_width!(s.len(), W => self.term(&term).gradient_blocks::<W>(
                    &ae, &be, &de, h, first, |i, v| out[s[i]] += v));
            }
            return Ok(());
        }
        let b = Scratch::<f64, 8>::from_fn(n, |i| a[i] + d[i]);
        with_width!(n, W => self.gradient_blocks::<W>(a, &b, d, h, first, |i, v| out[i] = v));
        if self.forced(a, d)
            && let Some((f_a, f_b)) = self.forces(a, &b, d, h)
        {
            let f = if first { f_a } else { f_b };
            for (o, fi) in out.iter_mut().zip(f.iter()) {
                *o += fi;
            }
        }
        Ok(())
    }

    /// `D1 L_d` (`first`) or `D2 L_d` of a term with stencil `s` (at most
    /// [`TERM_DIRECTIONS`] coordinates; no forces) added into `out` at the
    /// stencil's entries: one evaluation with a plain dual number per
    /// direction, its arguments built on the stack from `(a, b, d)`. For the
    /// small stencils of a large system (a circuit's branches, a chain's
    /// links) this costs a fraction of the chunked evaluations, whose
    /// vector duals carry their derivative parts behind an `Option`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn gradient_directions(
        &self,
        s: &[usize],
        a: &[f64],
        d: &[f64],
        h: f64,
        first: bool,
        out: &mut DVector<f64>,
    ) {
        let k = s.len();
        let zero = Dual64::from_re(0.0);
        let hd = Dual64::from_re(h);
        let inv_h = num_dual::DualNum::recip(&hd);
        let t = self.start + self.node_weight() * h;
        // The seeds of `a` and `b` (the unknown end carries `1`), and the
        // increment's derivative `ε_b − ε_a`, as `value_duals` forms them.
        let (seed_a, seed_b) = if first { (1.0, 0.0) } else { (0.0, 1.0) };
        for (j, &c) in s.iter().enumerate() {
            let (mut q, mut v) = ([zero; TERM_DIRECTIONS], [zero; TERM_DIRECTIONS]);
            for (i, &ci) in s.iter().enumerate() {
                let (ea, eb) = if i == j { (seed_a, seed_b) } else { (0.0, 0.0) };
                let (base, dd) = match self.orientation {
                    Orientation::Forward => (Dual64::new(a[ci], ea), Dual64::new(d[ci], eb - ea)),
                    Orientation::Reversed => {
                        (Dual64::new(a[ci] + d[ci], eb), -Dual64::new(d[ci], eb - ea))
                    }
                };
                v[i] = dd * inv_h;
                q[i] = match self.map {
                    Discretization::Forward => base,
                    Discretization::Midpoint => base + dd * 0.5,
                };
            }
            let l = self.system.lagrangian_at(&q[..k], &v[..k], t) * hd;
            let l = if self.unit.to_bits() == 1f64.to_bits() {
                l
            } else {
                l * self.unit
            };
            out[c] += l.eps;
        }
    }

    /// The blocks of `D1 L_d` (`first`) or `D2 L_d` (without forces), each
    /// entry handed to `put(index, value)`.
    #[inline(always)]
    fn gradient_blocks<const W: usize>(
        &self,
        a: &[f64],
        b: &[f64],
        d: &[f64],
        h: f64,
        first: bool,
        mut put: impl FnMut(usize, f64),
    ) {
        let n = a.len();
        let hd = DualSVec::<f64, W>::constant(h);
        let mut part = [0.0; W];
        for blk in blocks::<W>(n) {
            let l = if first {
                let x = seed_block::<W>(a, blk);
                let y: Scratch<DualSVec<f64, W>, W> = constants(b);
                self.value_duals::<_, W>(&x, &y, d, hd)
            } else {
                let x: Scratch<DualSVec<f64, W>, W> = constants(a);
                let y = seed_block::<W>(b, blk);
                self.value_duals::<_, W>(&x, &y, d, hd)
            };
            read_block(&l, blk.1, &mut part);
            for k in 0..blk.1 {
                put(blk.0 + k, part[k]);
            }
        }
    }

    /// The discrete energy `E_d(a, a + d, h) = −D3 L_d`.
    ///
    /// # Errors
    /// On a dimension mismatch.
    pub fn energy_increment(
        &self,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
    ) -> Result<f64, GeometryError> {
        self.check("a", a.len())?;
        self.check("d", d.len())?;
        let hd = Dual64::from_re(h).derivative();
        if let Some(terms) = self
            .termwise(a.as_slice(), d.as_slice())
            .filter(|t| t.max_stencil() <= 8)
        {
            // Term by term, each on the stack: `−Σ_e ∂_h L_d^e`.
            let mut energy = 0.0;
            let zero = Dual64::from_re(0.0);
            for e in 0..terms.len() {
                let s = terms.stencil(e);
                let (mut x, mut dd) = ([zero; 8], [zero; 8]);
                for (i, &c) in s.iter().enumerate() {
                    (x[i], dd[i]) = match self.orientation {
                        Orientation::Forward => (Dual64::from_re(a[c]), Dual64::from_re(d[c])),
                        Orientation::Reversed => {
                            (Dual64::from_re(a[c] + d[c]), Dual64::from_re(-d[c]))
                        }
                    };
                }
                let term = Term {
                    system: self.system,
                    e,
                    k: s.len(),
                };
                energy += self
                    .term(&term)
                    .raw::<Dual64, 8>(&x[..s.len()], &dd[..s.len()], hd)
                    .eps;
            }
            return Ok(-energy);
        }
        let x: Buf<Dual64> = a.iter().map(|&v| Dual64::from_re(v)).collect();
        let dd: Buf<Dual64> = d.iter().map(|&v| Dual64::from_re(v)).collect();
        Ok(-self.value_step(&x, &dd, hd)?.eps)
    }

    /// `(D1 L_d, D11 L_d)` at `(a, b, h)` (with a force, `D1 L_d + f_a` and
    /// its Jacobian in `a`).
    ///
    /// # Errors
    /// On a dimension mismatch.
    pub fn hessian_first(
        &self,
        a: &DVector<f64>,
        b: &DVector<f64>,
        h: f64,
    ) -> Result<(DVector<f64>, DMatrix<f64>), GeometryError> {
        self.hessian_end(a, b, h, true)
    }

    /// `(D2 L_d, D22 L_d)` at `(a, b, h)` (with a force, `D2 L_d + f_b` and
    /// its Jacobian in `b`).
    ///
    /// # Errors
    /// On a dimension mismatch.
    pub fn hessian_second(
        &self,
        a: &DVector<f64>,
        b: &DVector<f64>,
        h: f64,
    ) -> Result<(DVector<f64>, DMatrix<f64>), GeometryError> {
        self.hessian_end(a, b, h, false)
    }

    fn hessian_end(
        &self,
        a: &DVector<f64>,
        b: &DVector<f64>,
        h: f64,
        first: bool,
    ) -> Result<(DVector<f64>, DMatrix<f64>), GeometryError> {
        self.check("a", a.len())?;
        self.check("b", b.len())?;
        let n = a.len();
        let d = b - a;
        let (a, b, d) = (a.as_slice(), b.as_slice(), d.as_slice());
        let mut g = DVector::zeros(n);
        let mut hh = DMatrix::zeros(n, n);
        with_width!(n, W => {
            let hd = HyperDualSVec64::<W, W>::constant(h);
            let (seeded, other) = if first { (a, b) } else { (b, a) };
            let fixed: Scratch<HyperDualSVec64<W, W>, W> = constants(other);
            for bi in blocks::<W>(n) {
                for bj in blocks::<W>(n) {
                    let mut s = seed_first::<W, W>(seeded, bi);
                    seed_second_into(&mut s, bj);
                    let l = if first {
                        self.value_duals::<_, W>(&s, &fixed, d, hd)
                    } else {
                        self.value_duals::<_, W>(&fixed, &s, d, hd)
                    };
                    let (e1, _, e12) = hyper_parts(&l);
                    if bj.0 == 0 {
                        g.as_mut_slice()[bi.0..bi.0 + bi.1].copy_from_slice(&e1[..bi.1]);
                    }
                    for k in 0..bi.1 {
                        for l in 0..bj.1 {
                            hh[(bi.0 + k, bj.0 + l)] = e12[k][l];
                        }
                    }
                }
            }
            if self.forced(a, d) {
                let mut row = [0.0; W];
                for blk in blocks::<W>(n) {
                    let (x, y): (Scratch<DualSVec<f64, W>, W>, Scratch<DualSVec<f64, W>, W>) = if first {
                        (seed_block::<W>(a, blk), constants(b))
                    } else {
                        (constants(a), seed_block::<W>(b, blk))
                    };
                    if let Some((f_a, f_b)) = self.forces(&x, &y, d, DualSVec::constant(h)) {
                        let f = if first { f_a } else { f_b };
                        for i in 0..n {
                            if blk.0 == 0 {
                                g[i] += f[i].re;
                            }
                            read_block(&f[i], blk.1, &mut row);
                            for l in 0..blk.1 {
                                hh[(i, blk.0 + l)] += row[l];
                            }
                        }
                    }
                }
            }
        });
        Ok((g, hh))
    }

    /// The discrete Euler–Lagrange expression `yᵀ(D2 L_d(a, b) + D1 L_d(b, c))`
    /// at `b = a + d_ab`, `c = b + d_bc`, and its gradient in `b` (see
    /// [`DiscreteLagrangian::del_directional`](crate::DiscreteLagrangian::del_directional)).
    ///
    /// # Errors
    /// On a dimension mismatch.
    pub fn del_directional_increment(
        &self,
        a: &DVector<f64>,
        d_ab: &DVector<f64>,
        d_bc: &DVector<f64>,
        h: f64,
        y: &DVector<f64>,
    ) -> Result<(f64, DVector<f64>), GeometryError> {
        for (what, len) in [
            ("a", a.len()),
            ("d_ab", d_ab.len()),
            ("d_bc", d_bc.len()),
            ("y", y.len()),
        ] {
            self.check(what, len)?;
        }
        let n = a.len();
        let b = a + d_ab;
        let c = &b + d_bc;
        let mut value = 0.0;
        let mut gradient = DVector::zeros(n);
        let (a, b, c) = (a.as_slice(), b.as_slice(), c.as_slice());
        let (d_ab, d_bc, ys) = (d_ab.as_slice(), d_bc.as_slice(), y.as_slice());
        with_width!(n, W => {
            let hd = HyperDualSVec64::<1, W>::constant(h);
            let (ad, cd): (Scratch<HyperDualSVec64<1, W>, W>, Scratch<HyperDualSVec64<1, W>, W>) =
                (constants(a), constants(c));
            for blk in blocks::<W>(n) {
                let mut mid = seed_second::<1, W>(b, blk);
                for (m, yi) in mid.iter_mut().zip(ys) {
                    if let Some(e) = m.eps1.0.as_mut() {
                        e[0] = *yi;
                    }
                }
                let s = self.value_duals::<_, W>(&ad, &mid, d_ab, hd) + self.value_duals::<_, W>(&mid, &cd, d_bc, hd);
                let (e1, _, e12) = hyper_parts(&s);
                value = e1[0];
                for k in 0..blk.1 {
                    gradient[blk.0 + k] = e12[0][k];
                }
            }
            if self.forced(a, d_ab) {
                let mut row = [0.0; W];
                let (ad, cd): (Scratch<DualSVec<f64, W>, W>, Scratch<DualSVec<f64, W>, W>) =
                    (constants(a), constants(c));
                for blk in blocks::<W>(n) {
                    let bd = seed_block::<W>(b, blk);
                    let hd = DualSVec::constant(h);
                    let before = self.forces(&ad, &bd, d_ab, hd);
                    let after = self.forces(&bd, &cd, d_bc, hd);
                    if let (Some((_, f_b)), Some((f_a, _))) = (before, after) {
                        for i in 0..n {
                            let f = f_b[i] + f_a[i];
                            if blk.0 == 0 {
                                value += ys[i] * f.re;
                            }
                            read_block(&f, blk.1, &mut row);
                            for l in 0..blk.1 {
                                gradient[blk.0 + l] += row[l] * ys[i];
                            }
                        }
                    }
                }
            }
        });
        Ok((value, gradient))
    }

    /// Term `e`'s part of the next step's hidden constraint
    /// (docs/theory.md §3.9): `yᵀ (D2 L_e(a, b) + D1 L_e⁺(b, c))` at
    /// `b = a + d` and the next point extrapolated by the same increment,
    /// `c = b + d`, where `L_e⁺` is the term over the next step's interval
    /// (starting at `next_start`), and its gradient in `d`,
    /// `yᵀ (D22 L_e(a, b) + D11 L_e⁺(b, c) + 2 D12 L_e⁺(b, c))`, written
    /// into `gradient` on the term's stencil. `a`, `d` are the whole
    /// configuration; `y` and `gradient` are on the stencil (in its order).
    /// One hyper-dual evaluation of the term per block of its stencil: the
    /// cost is that of the terms the hidden constraint meets, not of `L`.
    ///
    /// # Errors
    /// When the system declares no terms, `e` is not one, or a length does
    /// not match.
    #[allow(clippy::too_many_arguments)]
    pub fn next_hidden_term(
        &self,
        e: usize,
        next_start: f64,
        a: &[f64],
        d: &[f64],
        y: &[f64],
        h: f64,
        gradient: &mut [f64],
    ) -> Result<f64, GeometryError> {
        self.check("a", a.len())?;
        self.check("d", d.len())?;
        let terms = self
            .system
            .lagrangian_terms()
            .ok_or(GeometryError::BadStencil {
                term: e,
                reason: "the system declares no Lagrangian terms".to_owned(),
            })?;
        if e >= terms.len() {
            return Err(GeometryError::BadStencil {
                term: e,
                reason: format!("the system declares {} terms", terms.len()),
            });
        }
        let s = terms.stencil(e);
        let k = s.len();
        for (what, len) in [("y", y.len()), ("gradient", gradient.len())] {
            if len != k {
                return Err(GeometryError::DimensionMismatch {
                    what,
                    expected: k,
                    got: len,
                });
            }
        }
        if k == 0 {
            return Ok(0.0);
        }
        let term = Term {
            system: self.system,
            e,
            k,
        };
        let now = self.term(&term);
        let next = DynDiscreteLagrangian {
            start: next_start,
            ..now
        };
        let gather = |x: &[f64]| Scratch::<f64, 8>::from_fn(k, |i| x[s[i]]);
        let (as_, ds) = (gather(a), gather(d));
        let bs = Scratch::<f64, 8>::from_fn(k, |i| as_[i] + ds[i]);
        let cs = Scratch::<f64, 8>::from_fn(k, |i| bs[i] + ds[i]);
        let mut value = 0.0;
        with_width!(k, W => {
            type Hd = HyperDualSVec64<1, W>;
            let hd = Hd::constant(h);
            let x: Scratch<Hd, W> = constants(&as_);
            for blk in blocks::<W>(k) {
                // b moves along y (ε1) and along the block (ε2); c = b + d
                // moves twice as far along the block, and not along y.
                let mut b = seed_second::<1, W>(&bs, blk);
                for (bi, yi) in b.iter_mut().zip(y) {
                    if let Some(e1) = bi.eps1.0.as_mut() {
                        e1[0] = *yi;
                    }
                }
                let mut c: Scratch<Hd, W> = constants(&cs);
                for l in 0..blk.1 {
                    if let Some(e2) = c[blk.0 + l].eps2.0.as_mut() {
                        e2[l] = 2.0;
                    }
                }
                let total = now.value_duals::<_, W>(&x, &b, &ds, hd)
                    + next.value_duals::<_, W>(&b, &c, &ds, hd);
                let (e1, _, e12) = hyper_parts(&total);
                value = e1[0];
                gradient[blk.0..blk.0 + blk.1].copy_from_slice(&e12[0][..blk.1]);
            }
        });
        Ok(value)
    }
}

/// Systems of at most this many coordinates are differentiated as a whole
/// even when they declare [`LagrangianTerms`]: one chunk of directions
/// already covers them, and the result stays bit for bit that of the
/// compile-time-sized core.
pub const TERMWISE_ABOVE: usize = 8;

/// Where the blocks of a jet go.
trait JetSink {
    fn value(&mut self, v: f64);
    fn d1(&mut self, i: usize, v: f64);
    fn d2(&mut self, j: usize, v: f64);
    fn d12(&mut self, i: usize, j: usize, v: f64);
}

/// The whole jet: each entry written once.
impl JetSink for DynLdJet {
    #[inline(always)]
    fn value(&mut self, v: f64) {
        self.value = v;
    }
    #[inline(always)]
    fn d1(&mut self, i: usize, v: f64) {
        self.d1[i] = v;
    }
    #[inline(always)]
    fn d2(&mut self, j: usize, v: f64) {
        self.d2[j] = v;
    }
    #[inline(always)]
    fn d12(&mut self, i: usize, j: usize, v: f64) {
        self.d12[(i, j)] = v;
    }
}

/// One term's block: value and gradients added into the jet at its
/// stencil, `D12` into a [`BlockSink`] (the whole jet's dense `D12`, or
/// sparse storage by slot, see
/// [`DynDiscreteLagrangian::jet_terms_increment`]).
struct TermSink<'j, B> {
    jet: &'j mut DynLdJet,
    s: &'j [usize],
    offset: usize,
    d12: &'j mut B,
}

impl<B: BlockSink> JetSink for TermSink<'_, B> {
    #[inline(always)]
    fn value(&mut self, v: f64) {
        self.jet.value += v;
    }
    #[inline(always)]
    fn d1(&mut self, i: usize, v: f64) {
        self.jet.d1[self.s[i]] += v;
    }
    #[inline(always)]
    fn d2(&mut self, j: usize, v: f64) {
        self.jet.d2[self.s[j]] += v;
    }
    #[inline(always)]
    fn d12(&mut self, i: usize, j: usize, v: f64) {
        self.d12.add(self.s, self.offset, i, j, v);
    }
}
