//! The Legendre map, energies and the initial-data check of a [`DynSystem`]
//! (the run-time-sized counterparts of the functions of [`System`](crate::System)).

use super::boundary::violated_piece_dyn;
use super::chunk::{Scratch, blocks, constants, hyper_parts, read_block, seed_block, with_width};
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

/// Term `e` of `terms` and the values of `q`, `v` on its stencil.
fn term_data<'a, Sy: DynSystem>(
    system: &'a Sy,
    terms: &LagrangianTerms,
    e: usize,
    q: &DVector<f64>,
    v: &DVector<f64>,
) -> (Term<'a, Sy>, DVector<f64>, DVector<f64>) {
    let s = terms.stencil(e);
    let term = Term {
        system,
        e,
        k: s.len(),
    };
    let gather = |x: &DVector<f64>| DVector::from_fn(s.len(), |i, _| x[s[i]]);
    (term, gather(q), gather(v))
}

/// The momentum `p = ∂L/∂v(q, v)` (term by term for a system of more than
/// [`TERMWISE_ABOVE`] coordinates that declares its terms).
pub fn momentum_dyn<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
    v: &DVector<f64>,
) -> DVector<f64> {
    let n = q.len();
    if let Some(terms) = termwise(system, n) {
        let mut p = DVector::zeros(n);
        for e in 0..terms.len() {
            let s = terms.stencil(e);
            if s.is_empty() {
                continue;
            }
            let (term, qe, ve) = term_data(system, terms, e, q, v);
            let pe = momentum_whole(&term, &qe, &ve);
            for (i, &c) in s.iter().enumerate() {
                p[c] += pe[i];
            }
        }
        return p;
    }
    momentum_whole(system, q, v)
}

/// [`momentum_dyn`] of the whole `L`, in chunks of directions.
fn momentum_whole<Sy: DynSystem>(system: &Sy, q: &DVector<f64>, v: &DVector<f64>) -> DVector<f64> {
    let n = q.len();
    let mut p = DVector::zeros(n);
    with_width!(n, W => {
        let qd: Scratch<DualSVec<f64, W>, W> = constants(q.as_slice());
        for blk in blocks::<W>(n) {
            let vd = seed_block::<W>(v.as_slice(), blk);
            let l = system.lagrangian(&qd, &vd);
            read_block(&l, blk.1, &mut p.as_mut_slice()[blk.0..]);
        }
    });
    p
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
    if let Some(terms) = termwise(system, n) {
        let mut p = DVector::zeros(n);
        let mut hess = DMatrix::zeros(n, n);
        for e in 0..terms.len() {
            let s = terms.stencil(e);
            if s.is_empty() {
                continue;
            }
            let (term, qe, ve) = term_data(system, terms, e, q, v);
            let (pe, he) = legendre_jet_whole(&term, &qe, &ve);
            for (i, &r) in s.iter().enumerate() {
                p[r] += pe[i];
                for (j, &c) in s.iter().enumerate() {
                    hess[(r, c)] += he[(i, j)];
                }
            }
        }
        return (p, hess);
    }
    legendre_jet_whole(system, q, v)
}

/// [`legendre_jet_dyn`] of the whole `L`, in chunks of directions.
fn legendre_jet_whole<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
    v: &DVector<f64>,
) -> (DVector<f64>, DMatrix<f64>) {
    let n = q.len();
    let mut p = DVector::zeros(n);
    let mut hess = DMatrix::zeros(n, n);
    with_width!(n, W => {
        let qd: Scratch<HyperDualSVec64<W, W>, W> = constants(q.as_slice());
        for bi in blocks::<W>(n) {
            for bj in blocks::<W>(n) {
                let mut vd: Scratch<HyperDualSVec64<W, W>, W> = super::chunk::seed_first(v.as_slice(), bi);
                super::chunk::seed_second_into(&mut vd, bj);
                let l = system.lagrangian(&qd, &vd);
                let (e1, _, e12) = hyper_parts(&l);
                if bj.0 == 0 {
                    p.as_mut_slice()[bi.0..bi.0 + bi.1].copy_from_slice(&e1[..bi.1]);
                }
                for k in 0..bi.1 {
                    for l in 0..bj.1 {
                        hess[(bi.0 + k, bj.0 + l)] = e12[k][l];
                    }
                }
            }
        }
    });
    (p, hess)
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

/// Check continuous initial data `(q0, v0)` (see
/// [`check_initial`](crate::check_initial)): finite, admissible, `v0 ∈ Δ_Q(q0)`,
/// a gyroscopic force that does no work.
///
/// # Errors
/// [`GeometryError::DimensionMismatch`], [`GeometryError::NonFinite`],
/// [`GeometryError::InitialInadmissible`],
/// [`GeometryError::InitialViolatesConstraint`], [`GeometryError::ForceDoesWork`].
pub fn check_initial_dyn<Sy: DynSystem>(
    system: &Sy,
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
    let mut a = vec![0.0; m * n];
    system.constraint_forms(q0.as_slice(), &mut a);
    let mut worst: Option<(usize, f64, f64, f64)> = None;
    for row in 0..m {
        let forms = &a[row * n..(row + 1) * n];
        let residual = (0..n).map(|i| forms[i] * v0[i]).sum::<f64>().abs();
        let scale = (0..n)
            .map(|i| (forms[i] * v0[i]).abs())
            .sum::<f64>()
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
