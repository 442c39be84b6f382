//! Second derivatives of the step quantities of a [`DynSystem`] with
//! respect to *every* argument of a step — both end points and the step
//! length — for the tangent map of the discrete flow (docs/theory.md §12).
//!
//! The Newton solve of a step needs derivatives in the unknown end point
//! only (`D12 L_d`, `∂ω_d/∂q1`). Differentiating the *solution* of a step
//! with respect to its data (implicit function theorem) needs the rest:
//! `D11, D21, D22`, the mixed `h`-derivatives, the derivatives of the
//! discrete constraint in `q0` and `h`, of `A(q)ᵀ μ` in `q`, and the
//! gradient and Hessian of a boundary piece `g_j`. All are exact (hyper-dual
//! numbers seeded in chunks over `z = (a, b, h)`), and none is on the hot
//! path of a plain run.

use super::DynSystem;
use super::chunk::{Buf, Scratch, blocks, hyper_parts, read_block, with_width};
use super::constraint::evaluate_constraint_dyn;
use super::discrete_lagrangian::DynDiscreteLagrangian;
use super::terms::{LagrangianTerms, Term};
use crate::AdScalar;
use crate::ad::DenseConstant;
use crate::{ConstraintDiscretization, GeometryError};
use nalgebra::{DMatrix, DVector};
use num_dual::{DualSVec, HyperDualSVec64};

/// `L_d(a, b, h)` with its gradient and its second derivatives over all of
/// `z = (a, b, h)` (`2n + 1` variables), in the oriented discrete
/// Lagrangian's units.
///
/// Rows `0..n` of [`jacobian`](Self::jacobian) are the derivatives of the
/// forced momentum `P1 = D1 L_d + f_a`, rows `n..2n` those of
/// `P2 = D2 L_d + f_b`, row `2n` those of `D3 L_d = −E_d` (forces do not
/// enter it). Without a gyroscopic force the matrix is the symmetric Hessian
/// of `L_d`.
#[derive(Debug, Clone, PartialEq)]
pub struct DynLdSecond {
    /// `L_d(a, b, h)`.
    pub value: f64,
    /// `(P1, P2, D3 L_d)`: `2n + 1` entries.
    pub gradient: DVector<f64>,
    /// `∂(P1, P2, D3 L_d)/∂(a, b, h)`: `(2n + 1) × (2n + 1)`.
    pub jacobian: DMatrix<f64>,
}

impl DynLdSecond {
    /// Zero value, gradient and Jacobian over `nz = 2n + 1` variables.
    fn zeros(nz: usize) -> Self {
        Self {
            value: 0.0,
            gradient: DVector::zeros(nz),
            jacobian: DMatrix::zeros(nz, nz),
        }
    }
}

/// Numbers seeded over the variables `z`: entry `i` of `x` is variable
/// `offset + i`; directions of `eps1` cover block `bi`, those of `eps2`
/// block `bj`. On the stack in an array of the chunk width `W` (a
/// hyper-dual of width 4 is 25 numbers: an array of 8 would copy twice as
/// many for a system of `n ≤ 4`), on the heap beyond.
fn hyper_seeded<const W: usize>(
    x: &[f64],
    offset: usize,
    bi: (usize, usize),
    bj: (usize, usize),
) -> Scratch<HyperDualSVec64<W, W>, W> {
    x.iter()
        .enumerate()
        .map(|(i, &v)| hyper_seeded_one(v, offset + i, bi, bj))
        .collect()
}

/// Variable `z` of value `v` as a hyper-dual seeded as [`hyper_seeded`]
/// seeds it.
#[inline(always)]
fn hyper_seeded_one<const W: usize>(
    v: f64,
    z: usize,
    bi: (usize, usize),
    bj: (usize, usize),
) -> HyperDualSVec64<W, W> {
    let mut s = HyperDualSVec64::<W, W>::constant(v);
    if (bi.0..bi.0 + bi.1).contains(&z)
        && let Some(e) = s.eps1.0.as_mut()
    {
        e[z - bi.0] = 1.0;
    }
    if (bj.0..bj.0 + bj.1).contains(&z)
        && let Some(e) = s.eps2.0.as_mut()
    {
        e[z - bj.0] = 1.0;
    }
    s
}

/// First-order duals seeded over the variables `z` (see [`hyper_seeded`]).
fn seeded<const W: usize>(x: &[f64], offset: usize, blk: (usize, usize)) -> Buf<DualSVec<f64, W>> {
    x.iter()
        .enumerate()
        .map(|(i, &v)| {
            let mut s = DualSVec::<f64, W>::constant(v);
            let z = offset + i;
            if (blk.0..blk.0 + blk.1).contains(&z)
                && let Some(e) = s.eps.0.as_mut()
            {
                e[z - blk.0] = 1.0;
            }
            s
        })
        .collect()
}

impl<Sy: DynSystem> DynDiscreteLagrangian<'_, Sy> {
    /// `L_d`, `(P1, P2, D3 L_d)` and their derivatives in `(a, b, h)` at
    /// `(a, a + d, h)` (see [`DynLdSecond`]); `⌈(2n+1)/W⌉²` hyper-dual
    /// evaluations of the whole Lagrangian, or, for a large system that
    /// declares its terms, each term's over its own stencil.
    ///
    /// # Errors
    /// On a dimension mismatch.
    pub fn second_increment(
        &self,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
    ) -> Result<DynLdSecond, GeometryError> {
        self.second_over(a, d, h, true)
    }

    /// [`second_increment`](Self::second_increment), or (without `with_h`)
    /// with `h` held fixed: the derivatives in `(a, b)` only, the row and
    /// column of `h` left zero (the gradient's `D3 L_d` too). The other
    /// entries are the same bit for bit (each entry of a hyper-dual number
    /// is computed alone), at a fraction of the cost: `2n` directions
    /// instead of `2n + 1`, which for `n = 2` is one width-4 block instead
    /// of a width-8 one. For the steps of a run whose length does not
    /// depend on the state (all but those after an impact).
    ///
    /// # Errors
    /// On a dimension mismatch.
    pub fn second_over(
        &self,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
        with_h: bool,
    ) -> Result<DynLdSecond, GeometryError> {
        let n = self.system().coordinate_count();
        for (what, len) in [("a", a.len()), ("d", d.len())] {
            if len != n {
                return Err(GeometryError::DimensionMismatch {
                    what,
                    expected: n,
                    got: len,
                });
            }
        }
        if let Some(terms) = self.termwise(a.as_slice(), d.as_slice()) {
            return Ok(self.second_terms(terms, a, d, h, with_h));
        }
        Ok(self.second_dense(a, d, h, with_h))
    }

    /// [`second_over`](Self::second_over) of the whole `L` at once (`a`,
    /// `d` of the right length).
    fn second_dense(
        &self,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
        with_h: bool,
    ) -> DynLdSecond {
        let n = a.len();
        let b = a + d;
        let (a, b, d) = (a.as_slice(), b.as_slice(), d.as_slice());
        let nz = 2 * n + 1;
        // the variables differentiated in: `(a, b, h)`, or `(a, b)`
        let nv = if with_h { nz } else { 2 * n };
        let mut out = DynLdSecond::zeros(nz);
        with_width!(nv, W => {
            let zb: Vec<(usize, usize)> = blocks::<W>(nv).collect();
            for (ii, &bi) in zb.iter().enumerate() {
                for &bj in &zb[ii..] {
                    let x = hyper_seeded::<W>(a, 0, bi, bj);
                    let y = hyper_seeded::<W>(b, n, bi, bj);
                    let hd = hyper_seeded_one::<W>(h, 2 * n, bi, bj);
                    let l = self.value_duals::<_, W>(&x, &y, d, hd);
                    let (e1, _, e12) = hyper_parts(&l);
                    out.value = l.re;
                    if bj.0 == bi.0 {
                        for k in 0..bi.1 {
                            out.gradient[bi.0 + k] = e1[k];
                        }
                    }
                    for k in 0..bi.1 {
                        for l in 0..bj.1 {
                            out.jacobian[(bi.0 + k, bj.0 + l)] = e12[k][l];
                            out.jacobian[(bj.0 + l, bi.0 + k)] = e12[k][l];
                        }
                    }
                }
            }
            if self.forced(a, d) {
                let mut row = [0.0; W];
                for blk in blocks::<W>(nv) {
                    let x = seeded::<W>(a, 0, blk);
                    let y = seeded::<W>(b, n, blk);
                    let hd = seeded::<W>(&[h], 2 * n, blk)[0];
                    if let Some((f_a, f_b)) = self.forces(&x, &y, d, hd) {
                        for (offset, f) in [(0, &f_a), (n, &f_b)] {
                            for i in 0..n {
                                if blk.0 == 0 {
                                    out.gradient[offset + i] += f[i].re;
                                }
                                read_block(&f[i], blk.1, &mut row);
                                for l in 0..blk.1 {
                                    out.jacobian[(offset + i, blk.0 + l)] += row[l];
                                }
                            }
                        }
                    }
                }
            }
        });
        out
    }

    /// [`second_over`](Self::second_over) summed term by term (a system
    /// that declares its terms, docs/theory.md §11.4): each term's own
    /// second derivatives over its stencil's `(a_S, b_S, h)`, added into
    /// the rows and columns of its coordinates — `O(Σ_e |S_e|²)`
    /// evaluations' worth instead of the whole `L` over `⌈(2n+1)/W⌉²`
    /// blocks.
    fn second_terms(
        &self,
        terms: &LagrangianTerms,
        a: &DVector<f64>,
        d: &DVector<f64>,
        h: f64,
        with_h: bool,
    ) -> DynLdSecond {
        let n = a.len();
        let nz = 2 * n + 1;
        let mut out = DynLdSecond::zeros(nz);
        for e in 0..terms.len() {
            let s = terms.stencil(e);
            let k = s.len();
            let term = Term {
                system: self.system(),
                e,
                k,
            };
            let ae = DVector::from_fn(k, |i, _| a[s[i]]);
            let de = DVector::from_fn(k, |i, _| d[s[i]]);
            // A constant term (empty stencil) has its value, and its
            // derivatives in `h` only.
            let local = self.term(&term).second_dense(&ae, &de, h, with_h || k == 0);
            out.value += local.value;
            if k == 0 && !with_h {
                continue;
            }
            // local (a_S, b_S, h) → global (a, b, h)
            let at = |i: usize| match i {
                i if i < k => s[i],
                i if i < 2 * k => n + s[i - k],
                _ => 2 * n,
            };
            for i in 0..=2 * k {
                out.gradient[at(i)] += local.gradient[i];
                for j in 0..=2 * k {
                    out.jacobian[(at(i), at(j))] += local.jacobian[(i, j)];
                }
            }
        }
        out
    }
}

/// The oriented discrete constraint `ω(a, b, h)` of the step `a → a + d`
/// and its derivatives in `(a, b, h)`: `m` values and an `m × (2n + 1)`
/// matrix (see [`evaluate_constraint_dyn`]).
///
/// # Errors
/// As [`evaluate_constraint_dyn`]; on a dimension mismatch.
pub fn constraint_second_dyn<Sy: DynSystem>(
    cd: ConstraintDiscretization,
    ld: &DynDiscreteLagrangian<'_, Sy>,
    a: &DVector<f64>,
    d: &DVector<f64>,
    h: f64,
) -> Result<(DVector<f64>, DMatrix<f64>), GeometryError> {
    constraint_second_over(cd, ld, a, d, h, true)
}

/// [`constraint_second_dyn`], or (without `with_h`) with `h` held fixed:
/// the column of `h` left zero, the others the same bit for bit (see
/// [`DynDiscreteLagrangian::second_over`]).
///
/// # Errors
/// As [`constraint_second_dyn`].
pub fn constraint_second_over<Sy: DynSystem>(
    cd: ConstraintDiscretization,
    ld: &DynDiscreteLagrangian<'_, Sy>,
    a: &DVector<f64>,
    d: &DVector<f64>,
    h: f64,
    with_h: bool,
) -> Result<(DVector<f64>, DMatrix<f64>), GeometryError> {
    let system = ld.system();
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    for (what, len) in [("a", a.len()), ("d", d.len())] {
        if len != n {
            return Err(GeometryError::DimensionMismatch {
                what,
                expected: n,
                got: len,
            });
        }
    }
    let nz = 2 * n + 1;
    let mut value = DVector::zeros(m);
    let mut jac = DMatrix::zeros(m, nz);
    if m == 0 {
        return Ok((value, jac));
    }
    let nv = if with_h { nz } else { 2 * n };
    let b = a + d;
    let (a, b, d) = (a.as_slice(), b.as_slice(), d.as_slice());
    with_width!(nv, W => {
        let mut c = vec![DualSVec::<f64, W>::constant(0.0); m];
        let mut row = [0.0; W];
        for blk in blocks::<W>(nv) {
            let ad = seeded::<W>(a, 0, blk);
            let bd = seeded::<W>(b, n, blk);
            let hd = seeded::<W>(&[h], 2 * n, blk)[0];
            let dd: Buf<DualSVec<f64, W>> = (0..n)
                .map(|i| {
                    let e = bd[i] - ad[i];
                    e - e.re + d[i]
                })
                .collect();
            evaluate_constraint_dyn(cd, system, ld.orientation(), &ad, &bd, &dd, hd, &mut c)?;
            for (i, ci) in c.iter().enumerate() {
                value[i] = ci.re;
                read_block(ci, blk.1, &mut row);
                for l in 0..blk.1 {
                    jac[(i, blk.0 + l)] = row[l];
                }
            }
        }
    });
    Ok((value, jac))
}

/// `∂(A(q)ᵀ μ)/∂q` (`n × n`): the derivative of the constraint reaction
/// with the multipliers held fixed.
///
/// # Errors
/// On a dimension mismatch.
pub fn reaction_jacobian_dyn<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
    mu: &DVector<f64>,
) -> Result<DMatrix<f64>, GeometryError> {
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    for (what, expected, len) in [("q", n, q.len()), ("μ", m, mu.len())] {
        if len != expected {
            return Err(GeometryError::DimensionMismatch {
                what,
                expected,
                got: len,
            });
        }
    }
    Ok(forms_contracted(system, q, mu, false))
}

/// `q` and `v` of length `n`.
fn check_state(n: usize, q: &DVector<f64>, v: &DVector<f64>) -> Result<(), GeometryError> {
    for (what, len) in [("q", q.len()), ("v", v.len())] {
        if len != n {
            return Err(GeometryError::DimensionMismatch {
                what,
                expected: n,
                got: len,
            });
        }
    }
    Ok(())
}

/// The derivative in `q` of the constraint forms contracted with fixed
/// weights `w`: `∂(A(q)ᵀ w)/∂q` (`n × n`, `w ∈ R^m`) or, with
/// `over_columns`, `∂(A(q) w)/∂q` (`m × n`, `w ∈ R^n`). Lengths are the
/// caller's to check.
fn forms_contracted<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
    w: &DVector<f64>,
    over_columns: bool,
) -> DMatrix<f64> {
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    let (rows, len) = if over_columns { (m, n) } else { (n, m) };
    let mut jac = DMatrix::zeros(rows, n);
    if m == 0 {
        return jac;
    }
    with_width!(n, W => {
        let mut forms = vec![DualSVec::<f64, W>::constant(0.0); m * n];
        let mut row = [0.0; W];
        for blk in blocks::<W>(n) {
            let qd = seeded::<W>(q.as_slice(), 0, blk);
            system.constraint_forms(&qd, &mut forms);
            for out in 0..rows {
                let mut acc = DualSVec::<f64, W>::constant(0.0);
                for c in 0..len {
                    let f = if over_columns { forms[out * n + c] } else { forms[c * n + out] };
                    acc += f * w[c];
                }
                read_block(&acc, blk.1, &mut row);
                for l in 0..blk.1 {
                    jac[(out, blk.0 + l)] = row[l];
                }
            }
        }
    });
    jac
}

/// `g_j(q)`, its gradient and its Hessian (`n × n`).
///
/// # Errors
/// [`GeometryError::NoSuchBoundaryPiece`] for `j ≥ boundary_count()`,
/// [`GeometryError::DimensionMismatch`] for a `q` of the wrong length.
pub fn boundary_hessian_dyn<Sy: DynSystem>(
    system: &Sy,
    j: usize,
    q: &DVector<f64>,
) -> Result<(f64, DVector<f64>, DMatrix<f64>), GeometryError> {
    let count = system.boundary_count();
    if j >= count {
        return Err(GeometryError::NoSuchBoundaryPiece { piece: j, count });
    }
    let n = system.coordinate_count();
    if q.len() != n {
        return Err(GeometryError::DimensionMismatch {
            what: "q",
            expected: n,
            got: q.len(),
        });
    }
    Ok(scalar_second(q.as_slice(), &BoundaryFn(system, j)))
}

/// `L(q, v)`, its gradient and its Hessian over `z = (q, v)` (`2n`
/// variables, positions first): the second derivatives the continuous
/// elastic-impact law's tangent map needs (docs/theory.md §12.5).
///
/// # Errors
/// [`GeometryError::DimensionMismatch`] for a `q` or `v` of the wrong
/// length.
pub fn lagrangian_second_dyn<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
    v: &DVector<f64>,
) -> Result<(f64, DVector<f64>, DMatrix<f64>), GeometryError> {
    let n = system.coordinate_count();
    check_state(n, q, v)?;
    let z: Vec<f64> = q.iter().chain(v.iter()).copied().collect();
    Ok(scalar_second(&z, &LagrangianFn(system, n)))
}

/// `∂(A(q) v)/∂q` (`m × n`) at a fixed `v`: the derivative of the
/// constraint forms applied to a velocity.
///
/// # Errors
/// [`GeometryError::DimensionMismatch`] for a `q` or `v` of the wrong
/// length.
pub fn forms_velocity_jacobian_dyn<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
    v: &DVector<f64>,
) -> Result<DMatrix<f64>, GeometryError> {
    check_state(system.coordinate_count(), q, v)?;
    Ok(forms_contracted(system, q, v, true))
}

/// The symplectic-Euler kernel `K(a, π)` (`H(a, π)`, or `H(a, −π)` when
/// `reversed`; docs/theory.md §3.5), its gradient and its Hessian over
/// `z = (a, π)` (`2n` variables, positions first): the second derivatives
/// the tangent map of a discrete Hamiltonian step needs (docs/theory.md
/// §12.7). `None` when the system has no Hamiltonian.
///
/// # Errors
/// [`GeometryError::DimensionMismatch`] for an `a` or `π` of the wrong
/// length.
#[allow(clippy::type_complexity)]
pub fn hamiltonian_second_dyn<Sy: DynSystem>(
    system: &Sy,
    reversed: bool,
    a: &DVector<f64>,
    pi: &DVector<f64>,
) -> Result<Option<(f64, DVector<f64>, DMatrix<f64>)>, GeometryError> {
    let n = system.coordinate_count();
    for (what, len) in [("a", a.len()), ("π", pi.len())] {
        if len != n {
            return Err(GeometryError::DimensionMismatch {
                what,
                expected: n,
                got: len,
            });
        }
    }
    let mut p: Buf<f64> = pi.iter().copied().collect();
    if super::hamiltonian::kernel(system, reversed, a.as_slice(), &mut p).is_none() {
        return Ok(None);
    }
    let z: Vec<f64> = a.iter().chain(pi.iter()).copied().collect();
    Ok(Some(scalar_second(&z, &KernelFn(system, reversed, n))))
}

/// The kernel `K(a, π)`, `z = (a, π)` with `n` coordinates (a system with a
/// Hamiltonian: checked by the caller).
struct KernelFn<'a, Sy>(&'a Sy, bool, usize);

impl<Sy: DynSystem> ScalarFn for KernelFn<'_, Sy> {
    fn eval<S: AdScalar>(&self, z: &[S]) -> S {
        let mut p: Buf<S> = z[self.2..].iter().copied().collect();
        super::hamiltonian::kernel(self.0, self.1, &z[..self.2], &mut p)
            .unwrap_or_else(|| z[0] * 0.0 + f64::NAN)
    }
}

/// A scalar function of `z` over any AD scalar (see [`scalar_second`]).
trait ScalarFn {
    fn eval<S: AdScalar>(&self, z: &[S]) -> S;
}

/// The boundary piece `g_j(q)`, `z = q`.
struct BoundaryFn<'a, Sy>(&'a Sy, usize);

impl<Sy: DynSystem> ScalarFn for BoundaryFn<'_, Sy> {
    fn eval<S: AdScalar>(&self, z: &[S]) -> S {
        self.0.boundary(self.1, z)
    }
}

/// The Lagrangian `L(q, v)`, `z = (q, v)` with `n` coordinates.
struct LagrangianFn<'a, Sy>(&'a Sy, usize);

impl<Sy: DynSystem> ScalarFn for LagrangianFn<'_, Sy> {
    fn eval<S: AdScalar>(&self, z: &[S]) -> S {
        self.0.lagrangian(&z[..self.1], &z[self.1..])
    }
}

/// `f(z)`, its gradient and its Hessian, by hyper-dual numbers seeded in
/// blocks of directions (`⌈len/W⌉(⌈len/W⌉ + 1)/2` evaluations).
fn scalar_second<F: ScalarFn>(z: &[f64], f: &F) -> (f64, DVector<f64>, DMatrix<f64>) {
    let n = z.len();
    let mut value = 0.0;
    let mut grad = DVector::zeros(n);
    let mut hess = DMatrix::zeros(n, n);
    with_width!(n, W => {
        let zb: Vec<(usize, usize)> = blocks::<W>(n).collect();
        for (ii, &bi) in zb.iter().enumerate() {
            for &bj in &zb[ii..] {
                let x = hyper_seeded::<W>(z, 0, bi, bj);
                let g = f.eval(&x);
                let (e1, _, e12) = hyper_parts(&g);
                value = g.re;
                if bj.0 == bi.0 {
                    for k in 0..bi.1 {
                        grad[bi.0 + k] = e1[k];
                    }
                }
                for k in 0..bi.1 {
                    for l in 0..bj.1 {
                        hess[(bi.0 + k, bj.0 + l)] = e12[k][l];
                        hess[(bj.0 + l, bi.0 + k)] = e12[k][l];
                    }
                }
            }
        }
    });
    (value, grad, hess)
}
