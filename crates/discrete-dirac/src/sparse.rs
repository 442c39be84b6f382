//! Run-time-sized (±) Lagrange–Dirac steppers for large systems with sparse
//! structure (docs/theory.md §8).
//!
//! The Lagrangian is a sum of **element** terms, each on a few coordinates
//! (its stencil of `K` coordinates, [`Element`]), so the step Jacobian is
//! sparse and assembled exactly from small hyper-dual evaluations of each
//! element. The constraints are constant linear rows `A q̇ + ġ(t) = 0`, with
//! `A` sparse and `g` a sum of prescribed displacements ([`Drive`]; for a
//! circuit, current sources). Newton runs over [`SparseLu`]: the column
//! ordering is computed once, from the fixed pattern, and the factors are
//! kept from one step to the next (simplified Newton). Residual-only
//! evaluations (all but the rare Jacobian ones) use first-order duals, one
//! direction at a time; see docs/theory.md §8.6 for the cost of a step.
//!
//! **Degenerate systems without a dense SVD.** When the step Jacobian is
//! singular, the system supplies the left null space itself as
//! [`HiddenConstraint`]s: vectors `y` with `yᵀ J = 0` (for a circuit with the
//! forward map: one per independent capacitor/voltage-source loop, from the
//! circuit graph), each with the row it *replaces*. The step then solves the
//! full equations with those rows replaced by the next step's hidden
//! constraints `yᵀ r_{k+1}(b) = 0` — the same equations as the dense path of
//! [`crate::lagrange_dirac`], so the same trajectory. The current step's
//! hidden constraints `yᵀ r_k` are checked ([`StepError::Inconsistent`]),
//! and whether each `y` annihilates the Jacobian is verified on the first
//! step and after every change of `h`.

use crate::newton::{Newton, NewtonParams};
use crate::sparse_lu::{SparseJacobian, SparseLu, SparsePattern};
use crate::{Direction, StepError, StepStats};
use diracvi_geometry::ad::DenseConstant;
use diracvi_geometry::{AdScalar, Discretization, GeometryError};
use nalgebra::{DVector, SMatrix, SVector};
use num_dual::{Dual64, HyperDualSVec64};
use std::fmt::Debug;
use thiserror::Error;

/// One term of an element-sum Lagrangian `L(q, v, t) = Σ_e L_e(q_S, v_S, t)`,
/// depending on the `K` coordinates of its stencil `S` only.
pub trait Element<const K: usize>: Debug + Clone {
    /// The stencil: indices of the coordinates `L_e` depends on (distinct).
    fn coordinates(&self) -> [usize; K];

    /// `L_e(q_S, v_S, t)` over automatic-differentiation scalars.
    fn lagrangian<S: AdScalar>(&self, q: &[S; K], v: &[S; K], t: f64) -> S;
}

/// A prescribed displacement `g(t)` entering the constraint rows as `ġ`
/// (for a circuit: the charge `∫ I dt` through a current source).
pub trait Drive: Debug + Clone {
    /// `g(t)`.
    fn displacement(&self, t: f64) -> f64;
}

/// No drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoDrive;

impl Drive for NoDrive {
    fn displacement(&self, _t: f64) -> f64 {
        0.0
    }
}

/// A left-null vector `y = (y_q, y_μ)` of the step Jacobian, and the row of
/// the step equations its next-step hidden constraint replaces.
#[derive(Debug, Clone, PartialEq)]
pub struct HiddenConstraint {
    /// The replaced row (`< n + m`): must be in the support of `y` and in
    /// that of no other hidden constraint.
    pub replaces: usize,
    /// `y_q` as `(coordinate, coefficient)`.
    pub q: Vec<(usize, f64)>,
    /// `y_μ` as `(constraint row, coefficient)`.
    pub mu: Vec<(usize, f64)>,
}

/// Errors building an [`ElementSystem`].
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SparseSystemError {
    /// An index is out of range.
    #[error("{what} {index} out of range (size {size})")]
    OutOfRange {
        /// What the index refers to.
        what: &'static str,
        /// The index.
        index: usize,
        /// The size it must be below.
        size: usize,
    },
    /// A coefficient is not finite.
    #[error("non-finite coefficient in {what}")]
    NonFinite {
        /// Where.
        what: &'static str,
    },
    /// A hidden constraint's replaced row is not in its support, or also
    /// in another's.
    #[error(
        "hidden constraint {index}: replaced row {row} must carry a non-zero coefficient of it and of no other hidden constraint"
    )]
    BadReplacement {
        /// The hidden constraint.
        index: usize,
        /// Its replaced row.
        row: usize,
    },
    /// The structural pattern of the step Jacobian cannot be analysed.
    #[error("the step Jacobian is structurally singular")]
    StructurallySingular,
}

/// An element-sum Lagrangian with constant sparse linear constraints,
/// drives and hidden constraints.
#[derive(Debug, Clone)]
pub struct ElementSystem<E, D = NoDrive, const K: usize = 1> {
    n: usize,
    elements: Vec<E>,
    constraints: Vec<Vec<(usize, f64)>>,
    drives: Vec<(usize, f64, D)>,
    hidden: Vec<HiddenConstraint>,
}

impl<E: Element<K>, D: Drive, const K: usize> ElementSystem<E, D, K> {
    /// A system of `n` coordinates with the given elements, constraint rows
    /// `A` (each row as `(coordinate, coefficient)`), drives
    /// `(row, coefficient, g)` adding `coefficient · ġ(t)` to a constraint
    /// row, and hidden constraints (empty for a regular step Jacobian).
    ///
    /// # Errors
    /// [`SparseSystemError`] on out-of-range indices, non-finite
    /// coefficients or ill-placed replaced rows.
    pub fn new(
        n: usize,
        elements: Vec<E>,
        constraints: Vec<Vec<(usize, f64)>>,
        drives: Vec<(usize, f64, D)>,
        hidden: Vec<HiddenConstraint>,
    ) -> Result<Self, SparseSystemError> {
        let m = constraints.len();
        let range = |what, index, size| {
            if index < size {
                Ok(())
            } else {
                Err(SparseSystemError::OutOfRange { what, index, size })
            }
        };
        let finite = |what, v: f64| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(SparseSystemError::NonFinite { what })
            }
        };
        for e in &elements {
            for c in e.coordinates() {
                range("element coordinate", c, n)?;
            }
        }
        for row in &constraints {
            for &(c, v) in row {
                range("constraint coordinate", c, n)?;
                finite("constraint row", v)?;
            }
        }
        for (row, v, _) in &drives {
            range("drive row", *row, m)?;
            finite("drive", *v)?;
        }
        let coefficient = |y: &HiddenConstraint, row: usize| -> f64 {
            if row < n {
                y.q.iter().filter(|(i, _)| *i == row).map(|(_, v)| v).sum()
            } else {
                y.mu.iter()
                    .filter(|(j, _)| n + *j == row)
                    .map(|(_, v)| v)
                    .sum()
            }
        };
        for (p, y) in hidden.iter().enumerate() {
            range("replaced row", y.replaces, n + m)?;
            for &(i, v) in &y.q {
                range("hidden coordinate", i, n)?;
                finite("hidden constraint", v)?;
            }
            for &(j, v) in &y.mu {
                range("hidden multiplier", j, m)?;
                finite("hidden constraint", v)?;
            }
            let own = coefficient(y, y.replaces) != 0.0;
            let shared = hidden
                .iter()
                .enumerate()
                .any(|(o, z)| o != p && coefficient(z, y.replaces) != 0.0);
            if !own || shared {
                return Err(SparseSystemError::BadReplacement {
                    index: p,
                    row: y.replaces,
                });
            }
        }
        Ok(Self {
            n,
            elements,
            constraints,
            drives,
            hidden,
        })
    }

    /// Number of coordinates.
    pub fn coordinates(&self) -> usize {
        self.n
    }

    /// Number of constraint rows.
    pub fn constraint_count(&self) -> usize {
        self.constraints.len()
    }

    /// The elements.
    pub fn elements(&self) -> &[E] {
        &self.elements
    }

    /// The hidden constraints.
    pub fn hidden(&self) -> &[HiddenConstraint] {
        &self.hidden
    }

    /// The momentum `p = ∂L/∂v(q, v, t)`.
    pub fn momentum(&self, q: &DVector<f64>, v: &DVector<f64>, t: f64) -> DVector<f64> {
        let mut p = DVector::zeros(self.n);
        for e in &self.elements {
            let s = e.coordinates();
            for (k, &c) in s.iter().enumerate() {
                let qs: [Dual64; K] = std::array::from_fn(|i| Dual64::from(q[s[i]]));
                let vs: [Dual64; K] = std::array::from_fn(|i| {
                    let mut d = Dual64::from(v[s[i]]);
                    if i == k {
                        d.eps = 1.0;
                    }
                    d
                });
                p[c] += e.lagrangian(&qs, &vs, t).eps;
            }
        }
        p
    }

    /// The energy `E = ∂L/∂v · v − L` at `(q, v, t)`.
    pub fn energy(&self, q: &DVector<f64>, v: &DVector<f64>, t: f64) -> f64 {
        let mut e_total = 0.0;
        for e in &self.elements {
            let s = e.coordinates();
            let qs: [Dual64; K] = std::array::from_fn(|i| Dual64::from(q[s[i]]));
            // d/ds L(q, s v) at s = 1 is ∂L/∂v · v.
            let vs: [Dual64; K] = std::array::from_fn(|i| Dual64::new(v[s[i]], v[s[i]]));
            let l = e.lagrangian(&qs, &vs, t);
            e_total += l.eps - l.re;
        }
        e_total
    }

    /// `max_j |(A v)_j + ġ_j(t)|`: the constraint residual of velocities.
    pub fn constraint_residual(&self, v: &DVector<f64>, t: f64) -> f64 {
        let mut r: Vec<f64> = self
            .constraints
            .iter()
            .map(|row| row.iter().map(|&(c, a)| a * v[c]).sum())
            .collect();
        for (row, coef, g) in &self.drives {
            let dt = 1e-6 * t.abs().max(1.0);
            r[*row] += coef * (g.displacement(t + dt) - g.displacement(t - dt)) / (2.0 * dt);
        }
        r.iter().fold(0.0, |m, v| m.max(v.abs()))
    }
}

/// A state of a run-time-sized system.
#[derive(Debug, Clone, PartialEq)]
pub struct DynState {
    /// Time.
    pub t: f64,
    /// Configuration.
    pub q: DVector<f64>,
    /// Momentum.
    pub p: DVector<f64>,
}

/// What a step reports besides the new state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SparseStepInfo {
    /// Newton statistics.
    pub stats: StepStats,
    /// The discrete energy `E_d = −D3 L_d` of the step (docs/theory.md §2.3).
    pub energy: f64,
    /// `max_j |(A (q_{k+1} − q_k))_j + Δg_j|`: the discrete constraint residual
    /// of the step, in the units of the coordinates.
    pub constraint_residual: f64,
}

/// Where each hidden row's Jacobian contributions come from.
#[derive(Debug, Clone)]
struct HiddenPlan {
    /// Elements touching `supp y_q`.
    elements: Vec<usize>,
    /// Dense copy of `y_q` (length `n`), for lookups.
    yq: Vec<f64>,
    /// `(constraint row, −(A y_q)_j)`: the μ-columns of the row.
    mu_cols: Vec<(usize, f64)>,
    /// `(coordinate, Σ_j y_μj A_jc)`: the constraint part of the d-columns.
    d_cols: Vec<(usize, f64)>,
}

/// The sparse (±) Lagrange–Dirac stepper. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct SparseLagrangeDirac<E, D = NoDrive, const K: usize = 1> {
    system: ElementSystem<E, D, K>,
    discretization: Discretization,
    direction: Direction,
    params: NewtonParams,
    newton: Newton<SparseLu>,
    plans: Vec<HiddenPlan>,
    /// Storage positions of the replaced rows' entries in the pattern.
    replaced_positions: Vec<usize>,
    is_replaced: Vec<bool>,
    x: DVector<f64>,
    x_start: DVector<f64>,
    /// `D2 L_d(a, b)` at the last evaluation (the new oriented momentum).
    pi_b: DVector<f64>,
    d1: DVector<f64>,
    dg: DVector<f64>,
    dg_next: DVector<f64>,
    last_d: Option<(DVector<f64>, f64)>,
    previous_d: Option<(DVector<f64>, f64)>,
    /// The step `h` the hidden constraints were verified for.
    verified_h: Option<u64>,
}

/// Step data fixed during one Newton solve.
struct Frame<'a> {
    a: &'a DVector<f64>,
    pi_a: &'a DVector<f64>,
    /// `max |π_a|` (part of every evaluation's equation scale).
    pi_a_max: f64,
    h: f64,
    /// `+1` forward, `−1` reversed orientation.
    sigma: f64,
    /// Start of the grid interval `[t_lo, t_lo + h]`.
    t_lo: f64,
    /// Whether the hidden rows replace theirs (false: full equations).
    replace: bool,
}

impl<E: Element<K>, D: Drive, const K: usize> SparseLagrangeDirac<E, D, K> {
    /// A stepper for `system` with the forward or midpoint discretization
    /// (docs/theory.md §2.2), (+) for [`Direction::Forward`], (−) for
    /// [`Direction::Backward`]. Builds the Jacobian's pattern and its
    /// column ordering (once).
    ///
    /// # Errors
    /// [`SparseSystemError::StructurallySingular`] when faer cannot analyse
    /// the pattern.
    pub fn new(
        system: ElementSystem<E, D, K>,
        discretization: Discretization,
        direction: Direction,
    ) -> Result<Self, SparseSystemError> {
        let n = system.n;
        let m = system.constraints.len();
        let size = n + m;
        let mut entries: Vec<(usize, usize)> = Vec::new();
        for e in &system.elements {
            let s = e.coordinates();
            for &i in &s {
                for &j in &s {
                    entries.push((i, j));
                }
            }
        }
        for (j, row) in system.constraints.iter().enumerate() {
            for &(c, _) in row {
                entries.push((c, n + j));
                entries.push((n + j, c));
            }
        }
        let mut plans = Vec::new();
        for y in &system.hidden {
            let mut yq = vec![0.0; n];
            for &(i, v) in &y.q {
                yq[i] += v;
            }
            let elements: Vec<usize> = system
                .elements
                .iter()
                .enumerate()
                .filter(|(_, e)| e.coordinates().iter().any(|&c| yq[c] != 0.0))
                .map(|(k, _)| k)
                .collect();
            let mut mu_acc = vec![0.0; m];
            for (j, row) in system.constraints.iter().enumerate() {
                for &(c, a) in row {
                    mu_acc[j] -= a * yq[c];
                }
            }
            let mut d_acc = vec![0.0; n];
            for &(j, v) in &y.mu {
                for &(c, a) in &system.constraints[j] {
                    d_acc[c] += v * a;
                }
            }
            let r = y.replaces;
            for &k in &elements {
                for c in system.elements[k].coordinates() {
                    entries.push((r, c));
                }
            }
            // Structural μ-columns: every row meeting supp y_q (the values
            // may cancel, the pattern keeps them).
            for (j, row) in system.constraints.iter().enumerate() {
                if row.iter().any(|&(c, _)| yq[c] != 0.0) {
                    entries.push((r, n + j));
                }
            }
            let d_cols: Vec<(usize, f64)> = (0..n)
                .filter(|&c| d_acc[c] != 0.0)
                .map(|c| (c, d_acc[c]))
                .collect();
            for &(c, _) in &d_cols {
                entries.push((r, c));
            }
            plans.push(HiddenPlan {
                elements,
                yq,
                mu_cols: (0..m)
                    .filter(|&j| mu_acc[j] != 0.0)
                    .map(|j| (j, mu_acc[j]))
                    .collect(),
                d_cols,
            });
        }
        let pattern = SparsePattern::from_entries(size, entries);
        let mut is_replaced = vec![false; size];
        for y in &system.hidden {
            is_replaced[y.replaces] = true;
        }
        let replaced_positions: Vec<usize> = pattern
            .entries()
            .filter(|&(r, _, _)| is_replaced[r])
            .map(|(_, _, k)| k)
            .collect();
        let lu = SparseLu::new(pattern).map_err(|_| SparseSystemError::StructurallySingular)?;
        Ok(Self {
            system,
            discretization,
            direction,
            params: NewtonParams::default(),
            newton: Newton::with_solver(lu),
            plans,
            replaced_positions,
            is_replaced,
            x: DVector::zeros(size),
            x_start: DVector::zeros(size),
            pi_b: DVector::zeros(n),
            d1: DVector::zeros(n),
            dg: DVector::zeros(m),
            dg_next: DVector::zeros(m),
            last_d: None,
            previous_d: None,
            verified_h: None,
        })
    }

    /// Replace the Newton parameters.
    pub fn with_params(mut self, params: NewtonParams) -> Self {
        self.params = params;
        self
    }

    /// The system.
    pub fn system(&self) -> &ElementSystem<E, D, K> {
        &self.system
    }

    /// Number of non-zeros of the step Jacobian's pattern.
    pub fn jacobian_nnz(&self) -> usize {
        self.newton.solver().pattern().nnz()
    }

    /// The multipliers `μ` of the last step.
    pub fn last_multipliers(&self) -> &[f64] {
        &self.x.as_slice()[self.system.n..]
    }

    /// Forget the warm start (increments of the last steps).
    pub fn reset_warm_start(&mut self) {
        self.last_d = None;
        self.previous_d = None;
    }

    /// One step from `from` with step `h` (> 0): (+) to `t + h`, (−) to
    /// `t − h`, written into `to` (no allocation). `k` labels errors.
    ///
    /// # Errors
    /// [`StepError`]: bad `h` or data, non-convergence, inconsistent data
    /// for hidden constraints ([`StepError::Inconsistent`]), or a supplied
    /// hidden constraint that is not a left null vector of the step
    /// Jacobian ([`StepError::Unsupported`]).
    pub fn step_into(
        &mut self,
        k: usize,
        from: &DynState,
        h: f64,
        to: &mut DynState,
    ) -> Result<SparseStepInfo, StepError> {
        let n = self.system.n;
        let t = from.t;
        if !(h.is_finite() && h > 0.0) {
            return Err(StepError::BadStep { step: k, t, h });
        }
        if from.q.len() != n || from.p.len() != n || to.q.len() != n || to.p.len() != n {
            return Err(StepError::Unsupported(format!(
                "state of size {} / {} for a system of {n} coordinates",
                from.q.len(),
                from.p.len()
            )));
        }
        if from.q.iter().chain(from.p.iter()).any(|v| !v.is_finite()) || !t.is_finite() {
            return Err(StepError::NonFinite {
                step: k,
                t,
                what: "state",
                iterations: 0,
            });
        }
        let sigma = self.direction.sign();
        let t_lo = self.direction.orientation().interval_start(t, h);
        // Drives over this interval and the next.
        let next_lo = t_lo + sigma * h;
        self.dg.fill(0.0);
        self.dg_next.fill(0.0);
        for (row, coef, g) in &self.system.drives {
            self.dg[*row] += coef * (g.displacement(t_lo + h) - g.displacement(t_lo));
            self.dg_next[*row] += coef * (g.displacement(next_lo + h) - g.displacement(next_lo));
        }
        // Oriented momentum π_a = σ p.
        to.p.copy_from(&from.p);
        to.p *= sigma;
        let pi_a = std::mem::replace(&mut to.p, DVector::zeros(0));
        let result = self.solve(k, t, &from.q, &pi_a, h, sigma, t_lo);
        to.p = pi_a;
        let info = result?;
        let d = self.x.rows(0, n);
        for i in 0..n {
            to.q[i] = from.q[i] + d[i];
            to.p[i] = sigma * self.pi_b[i];
        }
        to.t = t + sigma * h;
        let d_owned = match self.previous_d.take() {
            Some((mut buf, _)) => {
                buf.copy_from(&d);
                buf
            }
            None => d.into_owned(),
        };
        self.previous_d = self.last_d.take();
        self.last_d = Some((d_owned, h));
        Ok(info)
    }

    #[allow(clippy::too_many_arguments)]
    fn solve(
        &mut self,
        k: usize,
        t: f64,
        a: &DVector<f64>,
        pi_a: &DVector<f64>,
        h: f64,
        sigma: f64,
        t_lo: f64,
    ) -> Result<SparseStepInfo, StepError> {
        let n = self.system.n;
        // Warm start: the last increment, extrapolated linearly.
        let same = |h1: f64| h1.to_bits() == h.to_bits();
        match (&self.last_d, &self.previous_d) {
            (Some((last, h1)), Some((prev, h0))) if same(*h1) && same(*h0) => {
                for i in 0..n {
                    self.x[i] = 2.0 * last[i] - prev[i];
                }
            }
            (Some((last, h1)), _) => {
                for i in 0..n {
                    self.x[i] = last[i] * (h / h1);
                }
            }
            (None, _) => self.x.rows_mut(0, n).fill(0.0),
        }
        let mut frame = Frame {
            a,
            pi_a,
            pi_a_max: max_abs(pi_a.as_slice()),
            h,
            sigma,
            t_lo,
            replace: false,
        };
        let hidden = !self.system.hidden.is_empty();
        if self.verified_h != Some(h.to_bits()) {
            self.newton.clear_factors();
            if hidden {
                self.verify_hidden(&frame, k, t)?;
            }
            self.verified_h = Some(h.to_bits());
        }
        frame.replace = hidden;
        let Self {
            system,
            discretization,
            params,
            newton,
            plans,
            replaced_positions,
            is_replaced,
            x,
            x_start,
            pi_b,
            d1,
            dg,
            dg_next,
            ..
        } = self;
        let mut eq = Equations {
            system,
            discretization: *discretization,
            plans,
            replaced_positions,
            is_replaced,
            pi_b,
            d1,
            dg,
            dg_next,
            hidden_now: 0.0,
        };
        let scale0 = eq
            .evaluate(&frame, x, &mut newton.r, None)
            .map_err(|source| StepError::Geometry { step: k, t, source })?;
        if hidden {
            let hidden_now = eq.hidden_now / scale0;
            if hidden_now > 1e3 * params.tolerance {
                return Err(StepError::Inconsistent {
                    step: k,
                    t,
                    residual: hidden_now,
                });
            }
        }
        x_start.copy_from(x);
        let kept = newton.has_factors();
        let mut eval = |x: &DVector<f64>, r: &mut DVector<f64>, j: Option<&mut SparseJacobian>| {
            eq.evaluate(&frame, x, r, j)
        };
        let result = match newton.solve_simplified(x, params, scale0, &mut eval) {
            Err(_) if kept => {
                x.copy_from(x_start);
                newton.clear_factors();
                newton.solve_lazy(x, params, None, false, &mut eval)
            }
            r => r,
        };
        let info = result.map_err(|f| StepError::from_newton(f, k, t, params.tolerance))?;
        // π_b at the solution (the last evaluation may predate the final
        // correction), and the energy.
        let energy = eq.finish(&frame, x);
        let mut kcl: f64 = 0.0;
        for (j, row) in eq.system.constraints.iter().enumerate() {
            let s: f64 = row.iter().map(|&(c, v)| v * x[c]).sum::<f64>() + sigma * eq.dg[j];
            kcl = kcl.max(s.abs());
        }
        Ok(SparseStepInfo {
            stats: StepStats::from_newton(&info, hidden),
            energy,
            constraint_residual: kcl,
        })
    }

    /// Check that every supplied `y` annihilates the full step Jacobian at
    /// the warm-start guess.
    fn verify_hidden(&mut self, frame: &Frame<'_>, k: usize, t: f64) -> Result<(), StepError> {
        let Self {
            system,
            discretization,
            newton,
            plans,
            replaced_positions,
            is_replaced,
            x,
            pi_b,
            d1,
            dg,
            dg_next,
            ..
        } = self;
        let mut eq = Equations {
            system,
            discretization: *discretization,
            plans,
            replaced_positions,
            is_replaced,
            pi_b,
            d1,
            dg,
            dg_next,
            hidden_now: 0.0,
        };
        eq.evaluate(frame, x, &mut newton.r, Some(&mut newton.jac))
            .map_err(|source| StepError::Geometry { step: k, t, source })?;
        let n = eq.system.n;
        let size = newton.r.len();
        let jmax = newton.jac.amax();
        for (p, y) in eq.system.hidden.iter().enumerate() {
            let mut dense = vec![0.0; size];
            for &(i, v) in &y.q {
                dense[i] += v;
            }
            for &(j, v) in &y.mu {
                dense[n + j] += v;
            }
            let mut prod = vec![0.0; size];
            for (r, c, v) in newton.jac.entries() {
                prod[c] += dense[r] * v;
            }
            let worst = prod.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            let ynorm = dense.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            if worst > 1e-10 * jmax * ynorm {
                return Err(StepError::Unsupported(format!(
                    "step {k} at t = {t}: hidden constraint {p} is not a left null vector of the step Jacobian (|yᵀJ| = {worst:e}); with this discretization the step may be regular: supply no hidden constraints"
                )));
            }
        }
        Ok(())
    }
}

/// The step equations over borrowed buffers.
struct Equations<'s, E, D, const K: usize> {
    system: &'s ElementSystem<E, D, K>,
    discretization: Discretization,
    plans: &'s [HiddenPlan],
    replaced_positions: &'s [usize],
    is_replaced: &'s [bool],
    pi_b: &'s mut DVector<f64>,
    d1: &'s mut DVector<f64>,
    dg: &'s DVector<f64>,
    dg_next: &'s DVector<f64>,
    /// `max_p |y_pᵀ r|` of the full equations at the last evaluation.
    hidden_now: f64,
}

type Hd<const K: usize> = HyperDualSVec64<K, K>;

/// `max_i |v_i|` with four independent accumulators (a single running
/// maximum is one long dependency chain; this runs on every evaluation).
/// NaN entries are skipped, as by `amax`: a NaN residual is caught by the
/// Newton iteration itself.
#[inline]
fn max_abs(v: &[f64]) -> f64 {
    let mut m = [0.0_f64; 4];
    let chunks = v.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        for k in 0..4 {
            m[k] = m[k].max(c[k].abs());
        }
    }
    for &x in tail {
        m[0] = m[0].max(x.abs());
    }
    m[0].max(m[1]).max(m[2].max(m[3]))
}

/// `h L_e(Ψ)` for the oriented discrete Lagrangian from `(a, d)`.
#[inline]
#[allow(clippy::too_many_arguments)]
fn element_ld<E: Element<K>, S: AdScalar, const K: usize>(
    e: &E,
    disc: Discretization,
    a: &[S; K],
    d: &[S; K],
    h: S,
    sigma: f64,
    t_lo: f64,
    h_re: f64,
) -> S {
    let v: [S; K] = std::array::from_fn(|i| d[i] * sigma / h);
    match disc {
        Discretization::Forward => {
            if sigma > 0.0 {
                e.lagrangian(a, &v, t_lo) * h
            } else {
                let q: [S; K] = std::array::from_fn(|i| a[i] + d[i]);
                e.lagrangian(&q, &v, t_lo) * h
            }
        }
        Discretization::Midpoint => {
            let q: [S; K] = std::array::from_fn(|i| a[i] + d[i] * 0.5);
            e.lagrangian(&q, &v, t_lo + 0.5 * h_re) * h
        }
    }
}

/// Seeds `x + s1 ε1 + s2 ε2` (per component, ε's of the same index).
#[inline]
fn seed<const K: usize>(x: &[f64; K], s1: f64, s2: f64) -> [Hd<K>; K] {
    std::array::from_fn(|i| {
        let mut v = Hd::<K>::constant(x[i]);
        if let Some(e) = v.eps1.0.as_mut() {
            e[i] = s1;
        }
        if let Some(e) = v.eps2.0.as_mut() {
            e[i] = s2;
        }
        v
    })
}

/// `(D1, D2)` of `h L_e` at `(a, b = a + d)` with first-order duals, one
/// direction at a time: `2K` evaluations over [`Dual64`] (`a_k ← a_k + ε,
/// d_k ← d_k − ε` for D1, `d_k ← d_k + ε` for D2). Far cheaper than the
/// hyper-dual with its `K × K` block when no Jacobian is wanted.
#[inline]
fn element_gradients<E: Element<K>, const K: usize>(
    e: &E,
    disc: Discretization,
    a_s: &[f64; K],
    d_s: &[f64; K],
    frame: &Frame<'_>,
) -> ([f64; K], [f64; K]) {
    let (h, sigma, t_lo) = (frame.h, frame.sigma, frame.t_lo);
    let hd = Dual64::from(h);
    let mut g1 = [0.0; K];
    let mut g2 = [0.0; K];
    for k in 0..K {
        let a: [Dual64; K] = std::array::from_fn(|i| Dual64::new(a_s[i], f64::from(i == k)));
        let d: [Dual64; K] = std::array::from_fn(|i| Dual64::new(d_s[i], -f64::from(i == k)));
        g1[k] = element_ld(e, disc, &a, &d, hd, sigma, t_lo, h).eps;
        let a: [Dual64; K] = std::array::from_fn(|i| Dual64::from(a_s[i]));
        let d: [Dual64; K] = std::array::from_fn(|i| Dual64::new(d_s[i], f64::from(i == k)));
        g2[k] = element_ld(e, disc, &a, &d, hd, sigma, t_lo, h).eps;
    }
    (g1, g2)
}

/// `(∂/∂ε1, ∂/∂ε2, ∂²/∂ε1∂ε2)` of a hyper-dual number.
#[inline]
fn parts<const K: usize>(v: &Hd<K>) -> (SVector<f64, K>, SVector<f64, K>, SMatrix<f64, K, K>) {
    let (_, e1, e2, e12) = diracvi_geometry::ad::partial_hessian_of(*v);
    (e1, e2, e12)
}

impl<E: Element<K>, D: Drive, const K: usize> Equations<'_, E, D, K> {
    /// Residual (and Jacobian) of the step equations at `x = (d, μ)`, with
    /// the hidden rows replacing theirs when `frame.replace`; returns the
    /// equation scale. Leaves `π_b = D2 L(a, b)` in `pi_b`.
    fn evaluate(
        &mut self,
        frame: &Frame<'_>,
        x: &DVector<f64>,
        r: &mut DVector<f64>,
        mut jac: Option<&mut SparseJacobian>,
    ) -> Result<f64, GeometryError> {
        let sys = self.system;
        let n = sys.n;
        let (h, sigma, t_lo) = (frame.h, frame.sigma, frame.t_lo);
        let hd = Hd::<K>::constant(h);
        self.d1.fill(0.0);
        self.pi_b.fill(0.0);
        if let Some(j) = jac.as_deref_mut() {
            j.fill_zero();
        }
        for e in &sys.elements {
            let s = e.coordinates();
            let a_s: [f64; K] = std::array::from_fn(|i| frame.a[s[i]]);
            let d_s: [f64; K] = std::array::from_fn(|i| x[s[i]]);
            if let Some(j) = jac.as_deref_mut() {
                // a ← a + ε1, d ← d − ε1 + ε2: ε1 is D1, ε2 is D2 (b = a + d).
                let ad = seed(&a_s, 1.0, 0.0);
                let dd = seed(&d_s, -1.0, 1.0);
                let l = element_ld(e, self.discretization, &ad, &dd, hd, sigma, t_lo, h);
                let (g1, g2, m12) = parts(&l);
                for i in 0..K {
                    self.d1[s[i]] += g1[i];
                    self.pi_b[s[i]] += g2[i];
                }
                for i in 0..K {
                    for c in 0..K {
                        j.add(s[i], s[c], m12[(i, c)]);
                    }
                }
            } else {
                // Residual only: first-order duals, one direction at a time
                // (far cheaper than the hyper-dual with its K × K block).
                let (g1, g2) = element_gradients(e, self.discretization, &a_s, &d_s, frame);
                for i in 0..K {
                    self.d1[s[i]] += g1[i];
                    self.pi_b[s[i]] += g2[i];
                }
            }
        }
        let mu = x.rows(n, sys.constraints.len());
        for i in 0..n {
            r[i] = frame.pi_a[i] + self.d1[i];
        }
        for (jrow, row) in sys.constraints.iter().enumerate() {
            let mut acc = sigma * self.dg[jrow];
            for &(c, v) in row {
                r[c] -= v * mu[jrow];
                acc += v * x[c];
            }
            r[n + jrow] = acc / h;
            if let Some(j) = jac.as_deref_mut() {
                for &(c, v) in row {
                    j.add(c, n + jrow, -v);
                    j.add(n + jrow, c, v / h);
                }
            }
        }
        let scale = frame
            .pi_a_max
            .max(max_abs(self.d1.as_slice()))
            .max(1.0)
            .max(max_abs(self.pi_b.as_slice()));
        if sys.hidden.is_empty() {
            return Ok(scale);
        }
        // The current step's hidden constraints (of the full equations).
        self.hidden_now = 0.0;
        for y in &sys.hidden {
            let mut s = 0.0;
            for &(i, v) in &y.q {
                s += v * r[i];
            }
            for &(j, v) in &y.mu {
                s += v * r[n + j];
            }
            self.hidden_now = self.hidden_now.max(s.abs());
        }
        if !frame.replace {
            return Ok(scale);
        }
        if let Some(j) = jac.as_deref_mut() {
            let values = j.values_mut();
            for &k in self.replaced_positions {
                values[k] = 0.0;
            }
        }
        debug_assert!(sys.hidden.iter().all(|y| self.is_replaced[y.replaces]));
        // Next step's hidden constraints at b, the next point extrapolated
        // as c = b + d.
        for (y, plan) in sys.hidden.iter().zip(self.plans) {
            let row = y.replaces;
            let mut value = 0.0;
            for &ek in &plan.elements {
                let e = &sys.elements[ek];
                let s = e.coordinates();
                let a_s: [f64; K] = std::array::from_fn(|i| frame.a[s[i]]);
                let d_s: [f64; K] = std::array::from_fn(|i| x[s[i]]);
                let b_s: [f64; K] = std::array::from_fn(|i| frame.a[s[i]] + x[s[i]]);
                // D2 L(a, b) and D22: a fixed, d ← d + ε1 + ε2.
                let l1 = element_ld(
                    e,
                    self.discretization,
                    &seed(&a_s, 0.0, 0.0),
                    &seed(&d_s, 1.0, 1.0),
                    hd,
                    sigma,
                    t_lo,
                    h,
                );
                // D1 L(b, c) and D11 + 2 D12: a' = b + ε1 + ε2, d' = d − ε1 + ε2.
                let l2 = element_ld(
                    e,
                    self.discretization,
                    &seed(&b_s, 1.0, 1.0),
                    &seed(&d_s, -1.0, 1.0),
                    hd,
                    sigma,
                    t_lo + sigma * h,
                    h,
                );
                let (p1, _, m1) = parts(&l1);
                let (q2, _, m2) = parts(&l2);
                for i in 0..K {
                    let yi = plan.yq[s[i]];
                    if yi == 0.0 {
                        continue;
                    }
                    value += yi * (p1[i] + q2[i]);
                    if let Some(j) = jac.as_deref_mut() {
                        for c in 0..K {
                            j.add(row, s[c], yi * (m1[(i, c)] + m2[(i, c)]));
                        }
                    }
                }
            }
            for &(jrow, v) in &plan.mu_cols {
                value += v * mu[jrow];
                if let Some(j) = jac.as_deref_mut() {
                    j.add(row, n + jrow, v);
                }
            }
            for &(jrow, v) in &y.mu {
                let acc: f64 = sys.constraints[jrow]
                    .iter()
                    .map(|&(c, a)| a * x[c])
                    .sum::<f64>()
                    + sigma * self.dg_next[jrow];
                value += v * acc / h;
            }
            if let Some(j) = jac.as_deref_mut() {
                for &(c, v) in &plan.d_cols {
                    j.add(row, c, v / h);
                }
            }
            r[row] = value;
        }
        Ok(scale)
    }

    /// At the solution: `π_b = D2 L_d(a, a + d)` into `pi_b`, and the
    /// discrete energy `E_d = −D3 L_d` of the step (returned); first-order
    /// duals, `K + 1` evaluations per element.
    fn finish(&mut self, frame: &Frame<'_>, x: &DVector<f64>) -> f64 {
        let mut total = 0.0;
        let (h, sigma, t_lo) = (frame.h, frame.sigma, frame.t_lo);
        let disc = self.discretization;
        self.pi_b.fill(0.0);
        for e in &self.system.elements {
            let s = e.coordinates();
            let a_s: [Dual64; K] = std::array::from_fn(|i| Dual64::from(frame.a[s[i]]));
            let l = element_ld(
                e,
                disc,
                &a_s,
                &std::array::from_fn(|i| Dual64::from(x[s[i]])),
                Dual64::new(h, 1.0),
                sigma,
                t_lo,
                h,
            );
            total -= l.eps;
            for k in 0..K {
                let d: [Dual64; K] =
                    std::array::from_fn(|i| Dual64::new(x[s[i]], f64::from(i == k)));
                let l = element_ld(e, disc, &a_s, &d, Dual64::from(h), sigma, t_lo, h);
                self.pi_b[s[k]] += l.eps;
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A coupled, nonlinear, time-dependent two-coordinate element.
    #[derive(Debug, Clone)]
    struct Pair;

    impl Element<2> for Pair {
        fn coordinates(&self) -> [usize; 2] {
            [0, 1]
        }

        fn lagrangian<S: AdScalar>(&self, q: &[S; 2], v: &[S; 2], t: f64) -> S {
            let dq = q[0] - q[1];
            v[0] * v[0] * 0.5 + v[1] * v[1] * 0.7 + v[0] * v[1] * 0.3 * q[1].cos()
                - dq * dq * dq * dq * 0.25
                - q[0].sin() * (1.0 + t)
        }
    }

    /// The residual-only first-order path (`element_gradients`) and the
    /// closing pass (`finish`) give the same `D1`, `D2` as the hyper-dual
    /// path of the Jacobian evaluations, and `D3` equal to a central
    /// difference in `h`, for both maps and both orientations.
    #[test]
    fn first_order_paths_match_the_hyper_dual_path() {
        let a = DVector::from_column_slice(&[0.3, -0.8]);
        let pi_a = DVector::zeros(2);
        let d = [0.05, -0.02];
        let x = DVector::from_column_slice(&d);
        let h = 0.1;
        for disc in [Discretization::Forward, Discretization::Midpoint] {
            for sigma in [1.0, -1.0] {
                let frame = Frame {
                    a: &a,
                    pi_a: &pi_a,
                    pi_a_max: 0.0,
                    h,
                    sigma,
                    t_lo: 0.4,
                    replace: false,
                };
                let a_s = [a[0], a[1]];
                let l = element_ld(
                    &Pair,
                    disc,
                    &seed(&a_s, 1.0, 0.0),
                    &seed(&d, -1.0, 1.0),
                    Hd::<2>::constant(h),
                    sigma,
                    0.4,
                    h,
                );
                let (g1, g2, _) = parts(&l);
                let (f1, f2) = element_gradients(&Pair, disc, &a_s, &d, &frame);
                for i in 0..2 {
                    assert!((g1[i] - f1[i]).abs() <= 1e-15, "{disc:?} {sigma}: D1");
                    assert!((g2[i] - f2[i]).abs() <= 1e-15, "{disc:?} {sigma}: D2");
                }
                let system: ElementSystem<Pair, NoDrive, 2> =
                    ElementSystem::new(2, vec![Pair], Vec::new(), Vec::new(), Vec::new()).unwrap();
                let mut pi_b = DVector::zeros(2);
                let mut d1 = DVector::zeros(2);
                let zero = DVector::zeros(0);
                let mut eq = Equations {
                    system: &system,
                    discretization: disc,
                    plans: &[],
                    replaced_positions: &[],
                    is_replaced: &[],
                    pi_b: &mut pi_b,
                    d1: &mut d1,
                    dg: &zero,
                    dg_next: &zero,
                    hidden_now: 0.0,
                };
                let energy = eq.finish(&frame, &x);
                for i in 0..2 {
                    assert!((eq.pi_b[i] - g2[i]).abs() <= 1e-15, "{disc:?} {sigma}: π_b");
                }
                // E_d = −∂(h L_e)/∂h at fixed (a, d): central difference.
                let ld = |hh: f64| element_ld(&Pair, disc, &a_s, &d, hh, sigma, 0.4, h);
                let eps = 1e-5;
                let fd = -(ld(h + eps) - ld(h - eps)) / (2.0 * eps);
                assert!(
                    (energy - fd).abs() <= 1e-8 * fd.abs().max(1.0),
                    "{energy} vs {fd}"
                );
            }
        }
    }
}
