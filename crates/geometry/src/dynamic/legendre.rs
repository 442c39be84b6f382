//! The Legendre map, energies and the initial-data check of a [`DynSystem`]
//! (the run-time-sized counterparts of the functions of [`System`](crate::System)).

use super::boundary::violated_piece_dyn;
use super::chunk::{
    Buf, Scratch, blocks, constants, hyper_parts, read_block, seed_block, with_width,
};
use super::terms::{BlockSink, Slots};
use super::{DynSystem, LagrangianTerms, TERMWISE_ABOVE, Term};
use crate::{CONSTRAINT_TOLERANCE, GeometryError};
use nalgebra::{DMatrix, DVector};
use num_dual::{DualSVec, HyperDualSVec64};

/// The terms to differentiate the Legendre map by, or `None` for the whole
/// `L` at once: as for the discrete Lagrangian, terms are used for systems
/// of more than [`TERMWISE_ABOVE`] coordinates that declare them
/// (docs/theory.md §11.4), so the cost is `Σ_e |S_e|` evaluations of small
/// terms instead of `⌈n/W⌉²` evaluations of the whole `L`.
fn termwise<Sy: DynSystem>(system: &Sy, n: usize) -> Option<&LagrangianTerms> {
    let terms = system.lagrangian_terms()?;
    (n > TERMWISE_ABOVE && terms.coordinate_count() == n).then_some(terms)
}

/// `x` on the stencil `s` (on the stack for a stencil of at most 8).
fn gather(x: &[f64], s: &[usize]) -> Buf<f64> {
    Buf::from_fn(s.len(), |i| x[s[i]])
}

/// The momentum `p = ∂L/∂v(q, v)` (term by term for a system of more than
/// [`TERMWISE_ABOVE`] coordinates that declares its terms).
pub fn momentum_dyn<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
    v: &DVector<f64>,
) -> DVector<f64> {
    let n = q.len();
    let mut p = DVector::zeros(n);
    let Some(terms) = termwise(system, n) else {
        momentum_into(system, q.as_slice(), v.as_slice(), p.as_mut_slice());
        return p;
    };
    for (s, term) in Term::nonempty(system, terms) {
        let mut pe = Buf::from_fn(s.len(), |_| 0.0);
        momentum_into(
            &term,
            &gather(q.as_slice(), s),
            &gather(v.as_slice(), s),
            &mut pe,
        );
        for (i, &c) in s.iter().enumerate() {
            p[c] += pe[i];
        }
    }
    p
}

/// [`momentum_dyn`] of the whole `L` into `p`, in chunks of directions.
fn momentum_into<Sy: DynSystem>(system: &Sy, q: &[f64], v: &[f64], p: &mut [f64]) {
    let n = q.len();
    with_width!(n, W => {
        let qd: Scratch<DualSVec<f64, W>, W> = constants(q);
        for blk in blocks::<W>(n) {
            let vd = seed_block::<W>(v, blk);
            let l = system.lagrangian(&qd, &vd);
            read_block(&l, blk.1, &mut p[blk.0..]);
        }
    });
}

/// The energy `E(q, v) = ⟨∂L/∂v, v⟩ − L(q, v)`.
pub fn energy_dyn<Sy: DynSystem>(system: &Sy, q: &DVector<f64>, v: &DVector<f64>) -> f64 {
    let p = momentum_dyn(system, q, v);
    p.dot(v) - system.lagrangian(q.as_slice(), v.as_slice())
}

/// The energy scale `|⟨∂L/∂v, v⟩| + |L(q, v)|` (see
/// [`System::energy_scale`](crate::System::energy_scale)).
pub fn energy_scale_dyn<Sy: DynSystem>(system: &Sy, q: &DVector<f64>, v: &DVector<f64>) -> f64 {
    let p = momentum_dyn(system, q, v);
    p.dot(v).abs() + system.lagrangian(q.as_slice(), v.as_slice()).abs()
}

/// `p = ∂L/∂v(q, v)` and `∂²L/∂v²(q, v)` (term by term for a system of
/// more than [`TERMWISE_ABOVE`] coordinates that declares its terms: the
/// Hessian is then assembled from the terms' blocks).
pub fn legendre_jet_dyn<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
    v: &DVector<f64>,
) -> (DVector<f64>, DMatrix<f64>) {
    let n = q.len();
    let mut p = DVector::zeros(n);
    let mut hess = DMatrix::zeros(n, n);
    match termwise(system, n) {
        Some(terms) => legendre_terms(system, terms, q.as_slice(), v.as_slice(), &mut p, &mut hess),
        None => legendre_jet_into(
            system,
            q.as_slice(),
            v.as_slice(),
            &mut Whole {
                p: &mut p,
                hess: &mut hess,
            },
        ),
    }
    (p, hess)
}

/// [`legendre_jet_dyn`] for sparse storage of the Hessian (docs/theory.md
/// §11.4): `p = ∂L/∂v(q, v)` into `p` and every term's block of
/// `∂²L/∂v²` handed entry by entry to `hess(slot, value)`, where entry
/// `(S_e[k], S_e[l])` of term `e` is at `slot = Σ_{f<e} |S_f|² + k |S_e| + l`
/// — the slots of
/// [`jet_terms_increment`](super::DynDiscreteLagrangian::jet_terms_increment),
/// so a layout of the step Jacobian's `D12` places the Hessian too
/// (several slots may name the same entry: their values add up). Returns
/// `false`, with nothing written, when the Legendre map is not taken term
/// by term (no terms declared, or at most [`TERMWISE_ABOVE`] coordinates).
pub fn legendre_jet_terms_dyn<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
    v: &DVector<f64>,
    p: &mut DVector<f64>,
    hess: impl FnMut(usize, f64),
) -> bool {
    let Some(terms) = termwise(system, q.len()) else {
        return false;
    };
    p.fill(0.0);
    legendre_terms(
        system,
        terms,
        q.as_slice(),
        v.as_slice(),
        p,
        &mut Slots(hess),
    );
    true
}

/// The terms' Legendre jets added into `p` and `hess` at their stencils.
fn legendre_terms<Sy: DynSystem, B: BlockSink>(
    system: &Sy,
    terms: &LagrangianTerms,
    q: &[f64],
    v: &[f64],
    p: &mut DVector<f64>,
    hess: &mut B,
) {
    let mut offset = 0;
    for (s, term) in Term::nonempty(system, terms) {
        let mut sink = TermBlock {
            p: &mut *p,
            s,
            offset,
            hess: &mut *hess,
        };
        legendre_jet_into(&term, &gather(q, s), &gather(v, s), &mut sink);
        offset += s.len() * s.len();
    }
}

/// Where the entries of a Legendre jet go.
trait LegendreSink {
    /// Entry `i` of `∂L/∂v` (given once).
    fn p(&mut self, i: usize, v: f64);
    /// Entry `(i, j)` of `∂²L/∂v²` (given once).
    fn hess(&mut self, i: usize, j: usize, v: f64);
}

/// The whole jet: each entry written.
struct Whole<'a> {
    p: &'a mut DVector<f64>,
    hess: &'a mut DMatrix<f64>,
}

impl LegendreSink for Whole<'_> {
    #[inline(always)]
    fn p(&mut self, i: usize, v: f64) {
        self.p[i] = v;
    }
    #[inline(always)]
    fn hess(&mut self, i: usize, j: usize, v: f64) {
        self.hess[(i, j)] = v;
    }
}

/// One term's jet, added at its stencil (the Hessian's block into a
/// [`BlockSink`]).
struct TermBlock<'a, B> {
    p: &'a mut DVector<f64>,
    s: &'a [usize],
    offset: usize,
    hess: &'a mut B,
}

impl<B: BlockSink> LegendreSink for TermBlock<'_, B> {
    #[inline(always)]
    fn p(&mut self, i: usize, v: f64) {
        self.p[self.s[i]] += v;
    }
    #[inline(always)]
    fn hess(&mut self, i: usize, j: usize, v: f64) {
        self.hess.add(self.s, self.offset, i, j, v);
    }
}

/// [`legendre_jet_dyn`] of the whole `L` into `sink`, in chunks of
/// directions.
fn legendre_jet_into<Sy: DynSystem, K: LegendreSink>(
    system: &Sy,
    q: &[f64],
    v: &[f64],
    sink: &mut K,
) {
    let n = q.len();
    with_width!(n, W => {
        let qd: Scratch<HyperDualSVec64<W, W>, W> = constants(q);
        for bi in blocks::<W>(n) {
            for bj in blocks::<W>(n) {
                let mut vd: Scratch<HyperDualSVec64<W, W>, W> = super::chunk::seed_first(v, bi);
                super::chunk::seed_second_into(&mut vd, bj);
                let l = system.lagrangian(&qd, &vd);
                let (e1, _, e12) = hyper_parts(&l);
                if bj.0 == 0 {
                    for k in 0..bi.1 {
                        sink.p(bi.0 + k, e1[k]);
                    }
                }
                for k in 0..bi.1 {
                    for l in 0..bj.1 {
                        sink.hess(bi.0 + k, bj.0 + l, e12[k][l]);
                    }
                }
            }
        }
    });
}

/// The inverse Legendre map by Newton's method from `guess` (see
/// [`velocity_from_momentum`](crate::velocity_from_momentum)).
///
/// # Errors
/// [`GeometryError::LegendreNotInvertible`], [`GeometryError::NonFinite`].
pub fn velocity_from_momentum_dyn<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
    p: &DVector<f64>,
    guess: &DVector<f64>,
) -> Result<DVector<f64>, GeometryError> {
    crate::ensure_finite("q", q.as_slice())?;
    crate::ensure_finite("p", p.as_slice())?;
    let mut v = if guess.iter().all(|x| x.is_finite()) {
        guess.clone()
    } else {
        DVector::zeros(q.len())
    };
    let scale = p.amax().max(1.0);
    let mut residual = f64::INFINITY;
    for iterations in 0..30 {
        let (pv, hess) = legendre_jet_dyn(system, q, &v);
        let r = pv - p;
        residual = r.amax() / scale;
        let Some(dv) = hess.lu().solve(&r) else {
            return Err(GeometryError::LegendreNotInvertible {
                q: q.as_slice().to_vec(),
                residual,
                iterations,
            });
        };
        if !dv.iter().all(|x| x.is_finite()) {
            break;
        }
        v -= &dv;
        if dv.amax() <= 1e-14 * v.amax().max(1.0) {
            return Ok(v);
        }
    }
    Err(GeometryError::LegendreNotInvertible {
        q: q.as_slice().to_vec(),
        residual,
        iterations: 30,
    })
}

/// Check continuous initial data `(q0, v0)` at time `t0` (see
/// [`check_initial`](crate::check_initial)): finite, admissible, `v0 ∈ Δ_Q(q0)`
/// (for a system with drives, `A(q0) v0 + ġ(t0) = 0`,
/// [`DynSystem::constraint_drive`]), a gyroscopic force that does no work.
///
/// # Errors
/// [`GeometryError::DimensionMismatch`], [`GeometryError::NonFinite`],
/// [`GeometryError::InitialInadmissible`],
/// [`GeometryError::InitialViolatesConstraint`], [`GeometryError::ForceDoesWork`].
pub fn check_initial_dyn<Sy: DynSystem>(
    system: &Sy,
    t0: f64,
    q0: &DVector<f64>,
    v0: &DVector<f64>,
) -> Result<(), GeometryError> {
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    for (what, len) in [("q(0)", q0.len()), ("v(0)", v0.len())] {
        if len != n {
            return Err(GeometryError::DimensionMismatch {
                what,
                expected: n,
                got: len,
            });
        }
    }
    crate::ensure_finite("q(0)", q0.as_slice())?;
    crate::ensure_finite("v(0)", v0.as_slice())?;
    if let Some((piece, g)) = violated_piece_dyn(system, q0)? {
        return Err(GeometryError::InitialInadmissible { piece, g });
    }
    // The rows on their declared stencils (no `m × n` forms for a large
    // sparse system; docs/theory.md §11.4), else the whole `A(q0)`.
    let stencils = system
        .constraint_stencils()
        .filter(|rows| rows.len() == m && rows.coordinate_count() == n);
    let a = match stencils {
        Some(_) => Vec::new(),
        None => {
            let mut a = vec![0.0; m * n];
            system.constraint_forms(q0.as_slice(), &mut a);
            a
        }
    };
    let rate = super::drive_rate_dyn(system, t0);
    let (mut q_row, mut a_row) = (Vec::new(), Vec::new());
    let mut worst: Option<(usize, f64, f64, f64)> = None;
    for row in 0..m {
        let (forms, columns) = match stencils {
            Some(rows) => {
                let s = rows.stencil(row);
                q_row.clear();
                q_row.extend(s.iter().map(|&i| q0[i]));
                a_row.clear();
                a_row.resize(s.len(), 0.0);
                system.constraint_row(row, &q_row, &mut a_row);
                (&a_row[..], Some(s))
            }
            None => (&a[row * n..(row + 1) * n], None),
        };
        let product = |k: usize| forms[k] * v0[columns.map_or(k, |s| s[k])];
        let drive = rate.get(row).copied().unwrap_or(0.0);
        let residual = ((0..forms.len()).map(product).sum::<f64>() + drive).abs();
        let scale = (0..forms.len())
            .map(|k| product(k).abs())
            .sum::<f64>()
            .max(drive.abs())
            .max(1.0);
        let tolerance = CONSTRAINT_TOLERANCE * scale;
        let ratio = residual / tolerance;
        if (residual > tolerance || residual.is_nan()) && worst.is_none_or(|w| ratio > w.3) {
            worst = Some((row, residual, tolerance, ratio));
        }
    }
    if let Some((row, residual, tolerance, _)) = worst {
        return Err(GeometryError::InitialViolatesConstraint {
            row,
            residual,
            tolerance,
        });
    }
    let mut force = vec![0.0; n];
    if system.gyroscopic_force(q0.as_slice(), v0.as_slice(), &mut force) {
        let power: f64 = force.iter().zip(v0.iter()).map(|(f, v)| f * v).sum();
        let scale: f64 = force
            .iter()
            .zip(v0.iter())
            .map(|(f, v)| (f * v).abs())
            .sum();
        let tolerance = CONSTRAINT_TOLERANCE * scale;
        if power.is_nan() || power.abs() > tolerance {
            return Err(GeometryError::ForceDoesWork { power, tolerance });
        }
    }
    Ok(())
}
