//! Discrete constraints of a [`DynSystem`] (docs/theory.md §2; the
//! run-time-sized counterpart of [`ConstraintDiscretization`]'s methods).
//! With the maps of `R^n` the retraction displacement is the increment
//! itself, `R_{q0}^{-1}(q1) = q1 − q0`.

use super::chunk::{Buf, FormsBuf, Scratch, blocks, constants, read_block, seed_block, with_width};
use super::{DynSystem, LagrangianTerms};
use crate::ad::DenseConstant;
use crate::{AdScalar, ConstraintDiscretization, GeometryError, Orientation};
use nalgebra::{DMatrix, DVector};
use num_dual::DualSVec;

/// `A(q) x` row by row into `out` (`A` row-major `m × n`), summed in column
/// order as nalgebra's matrix–vector product does.
#[inline(always)]
fn forms_times<S: AdScalar>(forms: &[S], x: &[S], out: &mut [S]) {
    let n = x.len();
    for (r, o) in out.iter_mut().enumerate() {
        let row = &forms[r * n..(r + 1) * n];
        let mut acc = row[0] * x[0];
        for c in 1..n {
            acc += row[c] * x[c];
        }
        *o = acc;
    }
}

/// The discrete constraint of the step between `a` (known) and `b = a + d`
/// (unknown), oriented like the discrete Lagrangian (see
/// [`ConstraintDiscretization::evaluate_step`]), into `out` (`m` entries).
///
/// # Errors
/// [`GeometryError::NoModelConstraint`] when `Model` is chosen and the
/// system supplies none.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn evaluate_constraint_dyn<Sy: DynSystem, S: AdScalar>(
    cd: ConstraintDiscretization,
    system: &Sy,
    orientation: Orientation,
    a: &[S],
    b: &[S],
    d: &[S],
    h: S,
    out: &mut [S],
) -> Result<(), GeometryError> {
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    if m == 0 {
        return Ok(());
    }
    let inv_h = h.recip();
    let mut forms = FormsBuf::<S>::from_fn(m * n, |_| S::from(0.0));
    let sign = |x: S| {
        if orientation == Orientation::Forward {
            x
        } else {
            -x
        }
    };
    match cd {
        ConstraintDiscretization::Retraction => {
            system.constraint_forms(a, &mut forms);
            forms_times(&forms, d, out);
            for o in out.iter_mut() {
                *o = sign(*o * inv_h);
            }
        }
        ConstraintDiscretization::Midpoint => {
            let mid: Buf<S> = a.iter().zip(d).map(|(&x, &di)| x + di * 0.5).collect();
            system.constraint_forms(&mid, &mut forms);
            forms_times(&forms, d, out);
            for o in out.iter_mut() {
                *o = sign(*o * inv_h);
            }
        }
        ConstraintDiscretization::Model => {
            let (q0, q1) = if orientation == Orientation::Forward {
                (a, b)
            } else {
                (b, a)
            };
            if !system.discrete_constraint(q0, q1, h, out) {
                return Err(GeometryError::NoModelConstraint);
            }
        }
    }
    Ok(())
}

/// The discrete constraint at `b = a + d` and its Jacobian with respect to
/// `b` (`m × n`), into `value` and `jac`.
///
/// # Errors
/// As [`evaluate_constraint_dyn`].
#[allow(clippy::too_many_arguments)]
pub fn constraint_jacobian_dyn<Sy: DynSystem>(
    cd: ConstraintDiscretization,
    system: &Sy,
    orientation: Orientation,
    a: &DVector<f64>,
    d: &DVector<f64>,
    h: f64,
    value: &mut DVector<f64>,
    jac: &mut DMatrix<f64>,
) -> Result<(), GeometryError> {
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    if m == 0 {
        return Ok(());
    }
    let b: Buf<f64> = a.iter().zip(d.iter()).map(|(x, y)| x + y).collect();
    let (a, b, d) = (a.as_slice(), &b[..], d.as_slice());
    with_width!(n, W => {
        let ad: Scratch<DualSVec<f64, W>, W> = constants(a);
        let mut c = FormsBuf::<DualSVec<f64, W>>::from_fn(m, |_| DualSVec::<f64, W>::constant(0.0));
        let mut row = [0.0; W];
        for blk in blocks::<W>(n) {
            let bd = seed_block::<W>(b, blk);
            let dd = Scratch::<DualSVec<f64, W>, W>::from_fn(n, |i| {
                let e = bd[i] - ad[i];
                e - e.re + d[i]
            });
            evaluate_constraint_dyn(cd, system, orientation, &ad, &bd, &dd, DualSVec::constant(h), &mut c)?;
            for (i, ci) in c.iter().enumerate() {
                value[i] = ci.re;
                read_block(ci, blk.1, &mut row);
                for l in 0..blk.1 {
                    jac[(i, blk.0 + l)] = row[l];
                }
            }
        }
    });
    Ok(())
}

/// The discrete constraint of the step `a → b = a + d` row by row on the
/// declared stencils `S_r` of the constraint rows
/// ([`DynSystem::constraint_stencils`]), and, when `jac` is given, each
/// row's gradient in `b` on its stencil (`∂ω_r/∂b_{S_r[k]}` at
/// `jac[offset_r + k]`, `offset_r = Σ_{s<r} |S_s|`): the values of
/// [`evaluate_constraint_dyn`] and [`constraint_jacobian_dyn`] without an
/// `m × n` buffer, for the retraction and midpoint constraints. Each row
/// costs `⌈|S_r|/W⌉` evaluations of [`DynSystem::constraint_row`].
///
/// # Errors
/// [`GeometryError::BadStencil`] for the model's own discrete constraint
/// (it has no row stencils) or stencils of another number of rows or
/// coordinates; [`GeometryError::DimensionMismatch`] for input of the wrong
/// length.
#[allow(clippy::too_many_arguments)]
pub fn constraint_rows_dyn<Sy: DynSystem>(
    cd: ConstraintDiscretization,
    system: &Sy,
    stencils: &LagrangianTerms,
    orientation: Orientation,
    a: &[f64],
    d: &[f64],
    h: f64,
    value: &mut [f64],
    mut jac: Option<&mut [f64]>,
) -> Result<(), GeometryError> {
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    let bad = |reason: &str| GeometryError::BadStencil {
        term: 0,
        reason: reason.to_owned(),
    };
    if cd == ConstraintDiscretization::Model {
        return Err(bad("a model's own discrete constraint has no row stencils"));
    }
    if stencils.len() != m || stencils.coordinate_count() != n {
        return Err(bad(
            "the constraint stencils do not match m rows of n coordinates",
        ));
    }
    for (what, got, expected) in [("a", a.len(), n), ("d", d.len(), n), ("ω", value.len(), m)] {
        if got != expected {
            return Err(GeometryError::DimensionMismatch {
                what,
                expected,
                got,
            });
        }
    }
    let sign = if orientation == Orientation::Forward {
        1.0
    } else {
        -1.0
    };
    // Where the forms are evaluated: `a` (retraction) or the midpoint.
    let half = if cd == ConstraintDiscretization::Midpoint {
        0.5
    } else {
        0.0
    };
    let mut offset = 0;
    for r in 0..m {
        let s = stencils.stencil(r);
        let k = s.len();
        if k == 0 {
            value[r] = 0.0;
            continue;
        }
        match jac.as_deref_mut() {
            None => {
                let q = Buf::<f64>::from_fn(k, |i| a[s[i]] + d[s[i]] * half);
                let mut row = Buf::<f64>::from_fn(k, |_| 0.0);
                system.constraint_row(r, &q, &mut row);
                let acc = (0..k).fold(0.0, |acc, i| acc + row[i] * d[s[i]]);
                value[r] = acc * (sign / h);
            }
            Some(jac) => with_width!(k, W => {
                let mut part = [0.0; W];
                for blk in blocks::<W>(k) {
                    // `b` seeded on the block; `d = b − a` and the point of
                    // the forms carry its derivative.
                    let dd = Scratch::<DualSVec<f64, W>, W>::from_fn(k, |i| {
                        let mut x = DualSVec::<f64, W>::constant(d[s[i]]);
                        if i >= blk.0 && i < blk.0 + blk.1
                            && let Some(e) = x.eps.0.as_mut()
                        {
                            e[i - blk.0] = 1.0;
                        }
                        x
                    });
                    let q = Scratch::<DualSVec<f64, W>, W>::from_fn(k, |i| {
                        dd[i] * half + a[s[i]]
                    });
                    let mut row = Scratch::<DualSVec<f64, W>, W>::from_fn(k, |_| {
                        DualSVec::<f64, W>::constant(0.0)
                    });
                    system.constraint_row(r, &q, &mut row);
                    let mut acc = DualSVec::<f64, W>::constant(0.0);
                    for i in 0..k {
                        acc += row[i] * dd[i];
                    }
                    let w = acc * (sign / h);
                    if blk.0 == 0 {
                        value[r] = w.re;
                    }
                    read_block(&w, blk.1, &mut part);
                    jac[offset + blk.0..offset + blk.0 + blk.1].copy_from_slice(&part[..blk.1]);
                }
            }),
        }
        offset += k;
    }
    Ok(())
}

/// The per-step constraint residual `max_a |h ω_d^a(q_k, q_{k+1})| / max(1, |q_{k+1}|)`
/// of docs/theory.md §6 for the oriented discrete constraint of the step
/// `a → a + d` (0 when `m = 0`); row by row on the declared stencils
/// ([`constraint_rows_dyn`]) when the system declares them.
///
/// # Errors
/// As [`evaluate_constraint_dyn`].
pub fn constraint_residual_dyn<Sy: DynSystem>(
    cd: ConstraintDiscretization,
    system: &Sy,
    orientation: Orientation,
    a: &DVector<f64>,
    d: &DVector<f64>,
    h: f64,
) -> Result<f64, GeometryError> {
    constraint_residual_driven_dyn(cd, system, orientation, a, d, h, &[])
}

/// [`constraint_residual_dyn`] of a step whose discrete constraint carries
/// the drive `offset` (`m` entries, `(g(t_lo + h) − g(t_lo))/h`, see
/// [`DynSystem::constraint_drive`]; empty: none).
///
/// # Errors
/// As [`evaluate_constraint_dyn`].
pub fn constraint_residual_driven_dyn<Sy: DynSystem>(
    cd: ConstraintDiscretization,
    system: &Sy,
    orientation: Orientation,
    a: &DVector<f64>,
    d: &DVector<f64>,
    h: f64,
    offset: &[f64],
) -> Result<f64, GeometryError> {
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    if m == 0 {
        return Ok(0.0);
    }
    let b: Buf<f64> = a.iter().zip(d.iter()).map(|(x, y)| x + y).collect();
    let mut c = FormsBuf::<f64>::from_fn(m, |_| 0.0);
    // Declared row stencils: no `m × n` forms.
    if let Some(rows) = system.constraint_stencils().filter(|r| {
        cd != ConstraintDiscretization::Model && r.len() == m && r.coordinate_count() == n
    }) {
        constraint_rows_dyn(
            cd,
            system,
            rows,
            orientation,
            a.as_slice(),
            d.as_slice(),
            h,
            &mut c,
            None,
        )?;
        add_offset(&mut c, offset);
        return Ok(scaled_constraint_residual(&c, h, &b));
    }
    evaluate_constraint_dyn(
        cd,
        system,
        orientation,
        a.as_slice(),
        &b,
        d.as_slice(),
        h,
        &mut c,
    )?;
    add_offset(&mut c, offset);
    Ok(scaled_constraint_residual(&c, h, &b))
}

/// The per-step constraint residual `max_a |h ω^a| / max(1, |b|)` of
/// docs/theory.md §6 from the discrete constraint's values `ω` (drive
/// offset included) at the step's end point `b`: what
/// [`constraint_residual_driven_dyn`] reports, for a stepper that has `ω`
/// at hand (constant rows read once).
pub fn scaled_constraint_residual(omega: &[f64], h: f64, b: &[f64]) -> f64 {
    let amax = omega.iter().fold(0.0f64, |acc, x| acc.max(x.abs()));
    amax * h / norm(b).max(1.0)
}

/// `c += offset` (an empty offset: none).
fn add_offset(c: &mut [f64], offset: &[f64]) {
    for (x, o) in c.iter_mut().zip(offset) {
        *x += o;
    }
}

/// The Euclidean norm, summed in index order (deterministic for every
/// size; nalgebra's compile-time-sized `norm` may differ in the last bit).
pub(crate) fn norm(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |acc, v| acc + v * v).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two rows over 10 coordinates, declared on their stencils: row 0 on
    /// `{1, 4}` (`q̇_1 + sin(q_4) q̇_4`), row 1 on `{2, 3, 9}`
    /// (`q_3 q̇_2 − q̇_3 + 0.5 q̇_9`).
    struct Rows(LagrangianTerms);

    impl DynSystem for Rows {
        fn coordinate_count(&self) -> usize {
            10
        }
        fn constraint_count(&self) -> usize {
            2
        }
        fn lagrangian<S: AdScalar>(&self, _q: &[S], v: &[S]) -> S {
            v.iter().fold(S::from(0.0), |l, &x| l + x * x * 0.5)
        }
        fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
            a.fill(S::from(0.0));
            a[1] = S::from(1.0);
            a[4] = q[4].sin();
            a[10 + 2] = q[3];
            a[10 + 3] = S::from(-1.0);
            a[10 + 9] = S::from(0.5);
        }
        fn constraint_stencils(&self) -> Option<&LagrangianTerms> {
            Some(&self.0)
        }
    }

    /// The row-by-row constraint and its Jacobian on the stencils (through
    /// the default `constraint_row`, which reads `constraint_forms`) equal
    /// the dense evaluation, for both generic constraints and orientations.
    #[test]
    fn rows_on_stencils_equal_the_dense_constraint_and_jacobian() {
        let system = Rows(LagrangianTerms::new(10, [vec![1, 4], vec![2, 3, 9]]).unwrap());
        let a = DVector::from_fn(10, |i, _| 0.3 * i as f64 - 0.7);
        let d = DVector::from_fn(10, |i, _| 0.05 * (1.0 + i as f64).sin());
        let h = 0.1;
        for cd in [
            ConstraintDiscretization::Retraction,
            ConstraintDiscretization::Midpoint,
        ] {
            for orientation in [Orientation::Forward, Orientation::Reversed] {
                let (mut value, mut jac) = (DVector::zeros(2), DMatrix::zeros(2, 10));
                constraint_jacobian_dyn(cd, &system, orientation, &a, &d, h, &mut value, &mut jac)
                    .unwrap();
                let (mut rows, mut rows_jac) = ([0.0; 2], [0.0; 5]);
                constraint_rows_dyn(
                    cd,
                    &system,
                    &system.0,
                    orientation,
                    a.as_slice(),
                    d.as_slice(),
                    h,
                    &mut rows,
                    Some(&mut rows_jac),
                )
                .unwrap();
                let mut only = [0.0; 2];
                constraint_rows_dyn(
                    cd,
                    &system,
                    &system.0,
                    orientation,
                    a.as_slice(),
                    d.as_slice(),
                    h,
                    &mut only,
                    None,
                )
                .unwrap();
                for r in 0..2 {
                    assert!(
                        (rows[r] - value[r]).abs() <= 1e-15,
                        "{cd:?} {orientation:?}"
                    );
                    assert_eq!(rows[r].to_bits(), only[r].to_bits(), "same residual");
                }
                let entries = [(0, 1), (0, 4), (1, 2), (1, 3), (1, 9)];
                for (k, &(r, c)) in entries.iter().enumerate() {
                    assert!((rows_jac[k] - jac[(r, c)]).abs() <= 1e-14, "({r}, {c})");
                }
                // Nothing outside the stencils in the dense Jacobian.
                for r in 0..2 {
                    for c in 0..10 {
                        if !entries.contains(&(r, c)) {
                            assert!(jac[(r, c)].abs() <= 0.0, "({r}, {c}) outside");
                        }
                    }
                }
                assert!(entries.iter().all(|&(r, c)| jac[(r, c)].abs() > 0.1));
                let residual =
                    constraint_residual_dyn(cd, &system, orientation, &a, &d, h).unwrap();
                let b = &a + &d;
                let expected = value.amax() * h / b.norm().max(1.0);
                assert!((residual - expected).abs() <= 1e-15 * expected.max(1e-300));
            }
        }
        // The model's own constraint has no row stencils.
        let mut out = [0.0; 2];
        assert!(
            constraint_rows_dyn(
                ConstraintDiscretization::Model,
                &system,
                &system.0,
                Orientation::Forward,
                a.as_slice(),
                d.as_slice(),
                h,
                &mut out,
                None,
            )
            .is_err()
        );
    }
}
