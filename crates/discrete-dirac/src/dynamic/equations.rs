//! The oriented step equations of the run-time-sized Lagrange–Dirac
//! stepper (docs/theory.md §3.2–§3.4) and the buffers their solves use:
//! shared by the regular path (`lagrange_dirac`), the degenerate path
//! (`degenerate`) and the Hamiltonian stepper, and depending on none of
//! them.

use crate::linear::LinearSolver;
use crate::newton::Newton;
use diracvi_geometry::dynamic::{
    DynDiscreteLagrangian, DynLdJet, DynSystem, constraint_jacobian_dyn, evaluate_constraint_dyn,
};
use diracvi_geometry::{ConstraintDiscretization, GeometryError};
use nalgebra::{DMatrix, DVector};

/// The oriented step equations at fixed `(a, π_a, h)`, unknowns `x = (d, μ)`
/// with `b = a + d`.
pub(super) struct StepEquations<'s, Sy> {
    pub(super) ld: DynDiscreteLagrangian<'s, Sy>,
    pub(super) cd: ConstraintDiscretization,
    pub(super) a: &'s DVector<f64>,
    /// `u π_a`.
    pub(super) pi_a: &'s DVector<f64>,
    /// `A(a)`, row-major `m × n`.
    pub(super) a_forms: &'s [f64],
    pub(super) h: f64,
    pub(super) n: usize,
    pub(super) m: usize,
}

impl<Sy: DynSystem> StepEquations<'_, Sy> {
    /// Residual (and Jacobian) of the full equations at `x`; returns the
    /// equation scale.
    #[inline]
    pub(super) fn full(
        &self,
        x: &DVector<f64>,
        r: &mut DVector<f64>,
        jac: Option<&mut DMatrix<f64>>,
        bufs: &mut Buffers,
    ) -> Result<f64, GeometryError> {
        let (ld, a, h, n, m) = (&self.ld, self.a, self.h, self.n, self.m);
        let system = ld.system();
        bufs.d.copy_from(&x.rows(0, n));
        bufs.mu.copy_from(&x.rows(n, m));
        forms_transpose_times(self.a_forms, &bufs.mu, &mut bufs.force);
        match jac {
            Some(jac) => {
                ld.jet_increment(a, &bufs.d, h, &mut bufs.jet)?;
                bufs.cache_d.copy_from(&bufs.d);
                bufs.cache_pi_b.copy_from(&bufs.jet.d2);
                // column by column (the storage order of both)
                jac.view_mut((0, 0), (n, n)).copy_from(&bufs.jet.d12);
                for j in 0..m {
                    for i in 0..n {
                        jac[(i, n + j)] = -self.a_forms[j * n + i];
                    }
                }
                if m > 0 {
                    constraint_jacobian_dyn(
                        self.cd,
                        system,
                        ld.orientation(),
                        a,
                        &bufs.d,
                        h,
                        &mut bufs.omega,
                        &mut bufs.domega,
                    )?;
                    for i in 0..m {
                        r[n + i] = bufs.omega[i];
                        for j in 0..n {
                            jac[(n + i, j)] = bufs.domega[(i, j)];
                        }
                        for j in 0..m {
                            jac[(n + i, n + j)] = 0.0;
                        }
                    }
                }
                bufs.d1.copy_from(&bufs.jet.d1);
            }
            None => {
                // The same values without second derivatives.
                if m > 0 {
                    for i in 0..n {
                        bufs.b[i] = a[i] + bufs.d[i];
                    }
                    evaluate_constraint_dyn(
                        self.cd,
                        system,
                        ld.orientation(),
                        a.as_slice(),
                        bufs.b.as_slice(),
                        bufs.d.as_slice(),
                        h,
                        bufs.omega.as_mut_slice(),
                    )?;
                    for i in 0..m {
                        r[n + i] = bufs.omega[i];
                    }
                }
                ld.d1_increment(a, &bufs.d, h, &mut bufs.d1)?;
            }
        }
        for i in 0..n {
            r[i] = self.pi_a[i] + bufs.d1[i] - bufs.force[i];
        }
        // Equation scale: the momenta `|π_a|`, `|D1 L_d|` (and 1); see the
        // compile-time-sized stepper for why there is no floor for `ulp(b)`.
        Ok(self.pi_a.amax().max(bufs.d1.amax()).max(1.0))
    }
}

/// The mutable part of the run-time-sized Lagrange–Dirac stepper's solver
/// context: Newton, the degenerate path's buffers, the iterate, the kept
/// hidden-constraint basis and multipliers.
#[derive(Debug, Clone)]
pub(super) struct Work<LS: LinearSolver> {
    pub(super) ws: Newton<LS>,
    pub(super) scratch: Scratch,
    pub(super) x: DVector<f64>,
    pub(super) x_start: DVector<f64>,
    pub(super) bufs: Buffers,
    pub(super) hidden: Option<HiddenConstraints>,
    /// The last multipliers, in the units of the step equations (`unit · μ`).
    pub(super) last_mu: DVector<f64>,
}

/// Work vectors of the evaluations, and what they leave for later:
/// `(d, D2 L(a, a + d, h))` of the last one that computed it.
#[derive(Debug, Clone)]
pub(super) struct Buffers {
    pub(super) cache_d: DVector<f64>,
    pub(super) cache_pi_b: DVector<f64>,
    pub(super) d: DVector<f64>,
    pub(super) mu: DVector<f64>,
    pub(super) b: DVector<f64>,
    pub(super) c: DVector<f64>,
    pub(super) d1: DVector<f64>,
    pub(super) d1_next: DVector<f64>,
    pub(super) pi_b: DVector<f64>,
    pub(super) force: DVector<f64>,
    pub(super) omega: DVector<f64>,
    pub(super) domega: DMatrix<f64>,
    pub(super) forms: Vec<f64>,
    pub(super) jet: DynLdJet,
    pub(super) y_q: DVector<f64>,
}

/// `A(q)ᵀ μ` from the row-major `m × n` forms into `out`, summed over the
/// rows in order from the first term, as nalgebra's matrix–vector product
/// of the compile-time-sized stepper does (zeros when `m = 0`).
#[inline]
pub(super) fn forms_transpose_times(forms: &[f64], mu: &DVector<f64>, out: &mut DVector<f64>) {
    let n = out.len();
    let m = mu.len();
    for i in 0..n {
        out[i] = if m == 0 {
            0.0
        } else {
            (1..m).fold(forms[i] * mu[0], |s, r| s + forms[r * n + i] * mu[r])
        };
    }
}

/// The hidden-constraint basis of a degenerate step (docs/theory.md §3.9):
/// the range and the left null space of the step Jacobian.
#[derive(Debug, Clone)]
pub(super) struct HiddenConstraints {
    pub(super) range: DMatrix<f64>,
    pub(super) left_null: DMatrix<f64>,
}

/// Buffers for the degenerate path: the full equations and the next step's
/// residual.
#[derive(Debug, Clone)]
pub(super) struct Scratch {
    pub(super) full_r: DVector<f64>,
    pub(super) full_jac: DMatrix<f64>,
    pub(super) next_r: DVector<f64>,
}
