//! Abelian symmetries by coordinate shifts and the reduced system on shape
//! space, at run-time sizes (docs/theory.md §7, §11): the counterparts of
//! [`CyclicSymmetry`](crate::CyclicSymmetry) and [`Reduced`](crate::Reduced)
//! for a [`DynSystem`] of any number of coordinates — a model file that
//! declares `[symmetry] cyclic = [...]`.
//!
//! The equations are those of [`crate::symmetry`]: Routh reduction
//! (`A_C ≡ 0`, conserved `μ = ∂L/∂ġ`, the Routhian `L − μ·ġ` on shape
//! space) or Chaplygin reduction (`ġ = Γ(s) ṡ`, `L_c(s, ṡ) = L(s, Γ ṡ, ṡ)`,
//! at most one constraint left on shape space, the curvature force
//! `⟨J, Ω(ṡ, ·)⟩` as a gyroscopic force when it does not vanish), with the
//! same sample points, tolerances and linear algebra, so a
//! [`DynReduced`] of a system equals the [`Reduced`](crate::Reduced) of the
//! same system to round-off. [`DynReduced`] is itself a [`DynSystem`], so
//! the run-time-sized steppers and impact integrator run it unchanged;
//! [`DynReduced::lift_step`] reconstructs the group coordinates by the
//! quadrature of the discretization map.
//!
//! [`DynCyclicSymmetry::check`] shifts each declared coordinate on its own
//! before shifting them together, so a coordinate that is not cyclic is
//! named ([`SymmetryError::NotCyclic`]).

use super::{DynSystem, momentum_dyn};
use crate::symmetry::{CURVATURE_TOLERANCE, SYMMETRY_TOLERANCE};
use crate::{AdScalar, Discretization, Invariant, ReductionKind, SymmetryError};
use nalgebra::DVector;
use num_dual::{Dual, HyperDual};

/// The shifts of the three sample points of a symmetry check (the same as
/// [`CyclicSymmetry`](crate::CyclicSymmetry)'s).
const SHIFTS: [f64; 3] = [0.7, -1.9, 3.3];

/// A sample state of a check: `(q, v, shift)`.
type Sample = (Vec<f64>, Vec<f64>, Vec<f64>);

/// An abelian group `R^K` acting on the configurations of a system of `n`
/// coordinates by shifting the coordinates it names (see
/// [`CyclicSymmetry`](crate::CyclicSymmetry)).
///
/// ```
/// use diracvi_geometry::dynamic::{DynCyclicSymmetry, DynSystem};
/// use diracvi_geometry::AdScalar;
/// /// Free masses on a line above a floor in y.
/// struct Free;
/// impl DynSystem for Free {
///     fn coordinate_count(&self) -> usize { 3 }
///     fn constraint_count(&self) -> usize { 0 }
///     fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
///         (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) * 0.5 - q[2] * 9.8
///     }
///     fn constraint_forms<S: AdScalar>(&self, _q: &[S], _a: &mut [S]) {}
/// }
/// let (q0, v0) = ([0.0, 1.0, 2.0], [1.0, -1.0, 0.0]);
/// assert!(DynCyclicSymmetry::new(3, &[0, 1]).unwrap().check(&Free, &q0, &v0).is_ok());
/// // the height is not cyclic: gravity sees it
/// assert!(DynCyclicSymmetry::new(3, &[2]).unwrap().check(&Free, &q0, &v0).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynCyclicSymmetry {
    cyclic: Vec<bool>,
}

impl DynCyclicSymmetry {
    /// Declare the coordinates `indices` of a system of `n` coordinates
    /// cyclic.
    ///
    /// # Errors
    /// [`SymmetryError::BadDeclaration`] for an empty list, an index `≥ n`,
    /// a repeated index, or every coordinate cyclic (no shape space).
    pub fn new(n: usize, indices: &[usize]) -> Result<Self, SymmetryError> {
        let bad = |reason: String| Err(SymmetryError::BadDeclaration { reason });
        if indices.is_empty() {
            return bad("no cyclic coordinate named".into());
        }
        let mut cyclic = vec![false; n];
        for &i in indices {
            if i >= n {
                return bad(format!("coordinate {i} does not exist (n = {n})"));
            }
            if cyclic[i] {
                return bad(format!("coordinate {i} named twice"));
            }
            cyclic[i] = true;
        }
        if cyclic.iter().all(|&c| c) {
            return bad("every coordinate is cyclic: no shape space left".into());
        }
        Ok(Self { cyclic })
    }

    /// The number of coordinates `n` of the system.
    pub fn coordinate_count(&self) -> usize {
        self.cyclic.len()
    }

    /// Whether coordinate `i` is cyclic.
    pub fn is_cyclic(&self, i: usize) -> bool {
        self.cyclic.get(i).copied().unwrap_or(false)
    }

    /// The cyclic coordinates, in increasing order.
    pub fn cyclic(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.cyclic.len()).filter(|&i| self.cyclic[i])
    }

    /// The shape coordinates, in increasing order.
    pub fn shape(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.cyclic.len()).filter(|&i| !self.cyclic[i])
    }

    /// The dimension `K` of the group.
    pub fn dimension(&self) -> usize {
        self.cyclic.iter().filter(|&&c| c).count()
    }

    /// Sample states near `(q0, v0)` with the shifts of the coordinates
    /// `shifted` (the formulas of the compile-time-sized check).
    fn samples(&self, q0: &[f64], v0: &[f64], shifted: &dyn Fn(usize) -> bool) -> [Sample; 3] {
        let n = self.cyclic.len();
        std::array::from_fn(|r| {
            let rf = r as f64;
            let q = (0..n)
                .map(|i| q0[i] + 0.05 * rf * (1.3 * i as f64 + 0.7 * rf + 0.1).sin())
                .collect();
            let v = (0..n)
                .map(|i| v0[i] + 0.1 * rf * (0.9 * i as f64 + 1.1 * rf + 0.3).cos())
                .collect();
            let shift = (0..n)
                .map(|i| {
                    if shifted(i) {
                        SHIFTS[r] * (1.0 + 0.1 * i as f64)
                    } else {
                        0.0
                    }
                })
                .collect();
            (q, v, shift)
        })
    }

    /// Check that the declared shifts leave `L`, `A` and every `g_j`
    /// unchanged at sample states near `(q0, v0)`, with the points and the
    /// tolerance of [`CyclicSymmetry::check`](crate::CyclicSymmetry::check):
    /// first each cyclic coordinate shifted on its own, then (`K > 1`) all
    /// of them together.
    ///
    /// # Errors
    /// [`SymmetryError::NotCyclic`] naming the first coordinate whose shift
    /// changes a quantity; [`SymmetryError::NotInvariant`] when only the
    /// joint shift does; [`SymmetryError::NonFinite`];
    /// [`SymmetryError::BadDeclaration`] when `q0`, `v0` or the system do
    /// not have the declaration's `n` coordinates.
    pub fn check<Sy: DynSystem>(
        &self,
        system: &Sy,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<(), SymmetryError> {
        let n = self.cyclic.len();
        if system.coordinate_count() != n || q0.len() != n || v0.len() != n {
            return Err(SymmetryError::BadDeclaration {
                reason: format!(
                    "the declaration is for {n} coordinates, the system has {} (initial data of length {} and {})",
                    system.coordinate_count(),
                    q0.len(),
                    v0.len()
                ),
            });
        }
        for c in self.cyclic() {
            let samples = self.samples(q0, v0, &|i| i == c);
            self.check_samples(system, &samples).map_err(|e| match e {
                SymmetryError::NotInvariant {
                    quantity,
                    q,
                    shift,
                    difference,
                    tolerance,
                } => SymmetryError::NotCyclic {
                    coordinate: c,
                    quantity,
                    q,
                    shift: shift[c],
                    difference,
                    tolerance,
                },
                other => other,
            })?;
        }
        if self.dimension() > 1 {
            let samples = self.samples(q0, v0, &|i| self.cyclic[i]);
            self.check_samples(system, &samples)?;
        }
        Ok(())
    }

    fn check_samples<Sy: DynSystem>(
        &self,
        system: &Sy,
        samples: &[Sample; 3],
    ) -> Result<(), SymmetryError> {
        let n = self.cyclic.len();
        let m = system.constraint_count();
        let (mut a, mut b) = (vec![0.0; m * n], vec![0.0; m * n]);
        for (q, v, shift) in samples {
            let qs: Vec<f64> = q.iter().zip(shift).map(|(x, c)| x + c).collect();
            let compare = |quantity: Invariant, x: f64, y: f64| -> Result<(), SymmetryError> {
                if !(x.is_finite() && y.is_finite()) {
                    return Err(SymmetryError::NonFinite {
                        quantity,
                        q: q.clone(),
                    });
                }
                let tolerance = SYMMETRY_TOLERANCE * x.abs().max(1.0);
                let difference = (y - x).abs();
                if difference > tolerance {
                    return Err(SymmetryError::NotInvariant {
                        quantity,
                        q: q.clone(),
                        shift: shift.clone(),
                        difference,
                        tolerance,
                    });
                }
                Ok(())
            };
            compare(
                Invariant::Lagrangian,
                system.lagrangian(q, v),
                system.lagrangian(&qs, v),
            )?;
            if m > 0 {
                system.constraint_forms(q, &mut a);
                system.constraint_forms(&qs, &mut b);
            }
            for row in 0..m {
                for column in 0..n {
                    compare(
                        Invariant::ConstraintForm { row, column },
                        a[row * n + column],
                        b[row * n + column],
                    )?;
                }
            }
            for piece in 0..system.boundary_count() {
                compare(
                    Invariant::Boundary { piece },
                    system.boundary(piece, q),
                    system.boundary(piece, &qs),
                )?;
            }
        }
        Ok(())
    }
}

/// Solve `a x = b` (`a` of `k × k`, `b` of `k × columns`, both row-major
/// with row strides `k` and `columns`) by Gaussian elimination with partial
/// pivoting on the real parts — the elimination of the compile-time-sized
/// reduction, step for step; `None` when singular. Returns `x` and the
/// determinant of `a`.
fn solve_block<S: AdScalar>(
    mut a: Vec<S>,
    mut b: Vec<S>,
    k: usize,
    columns: usize,
) -> Option<(Vec<S>, S)> {
    let mut det = S::from(1.0);
    for c in 0..k {
        let p = (c..k).max_by(|&i, &j| {
            a[i * k + c]
                .re()
                .abs()
                .partial_cmp(&a[j * k + c].re().abs())
                .unwrap_or(std::cmp::Ordering::Equal)
        })?;
        let pivot_re = a[p * k + c].re();
        if pivot_re == 0.0 || !pivot_re.is_finite() {
            return None;
        }
        if p != c {
            for j in 0..k {
                a.swap(p * k + j, c * k + j);
            }
            for j in 0..columns {
                b.swap(p * columns + j, c * columns + j);
            }
            det = -det;
        }
        let pivot = a[c * k + c];
        det *= pivot;
        for i in 0..k {
            if i == c {
                continue;
            }
            let f = a[i * k + c] / pivot;
            for j in c..k {
                let x = a[c * k + j];
                a[i * k + j] -= f * x;
            }
            for j in 0..columns {
                let x = b[c * columns + j];
                b[i * columns + j] -= f * x;
            }
        }
    }
    for i in 0..k {
        let d = a[i * k + i];
        for j in 0..columns {
            b[i * columns + j] /= d;
        }
    }
    Some((b, det))
}

/// The reduced system on shape space of a [`DynSystem`] with a
/// [`DynCyclicSymmetry`] (see [`Reduced`](crate::Reduced)): `n − K` shape
/// coordinates, `m` (Routh) or `m − K` (Chaplygin, 0 or 1) constraint
/// forms, the same boundary pieces. A [`DynSystem`] itself.
#[derive(Debug, Clone)]
pub struct DynReduced<Sy> {
    system: Sy,
    symmetry: DynCyclicSymmetry,
    kind: ReductionKind,
    /// Full index of each shape coordinate.
    shape: Vec<usize>,
    /// Full index of each cyclic coordinate.
    group: Vec<usize>,
    /// Constraint rows of the full system.
    m: usize,
    /// Constraint rows of the reduced system.
    mr: usize,
    /// Reference configuration: its group coordinates fill the cyclic slots.
    reference: Vec<f64>,
    /// Conserved momenta (Routh), one per cyclic coordinate.
    momentum: Vec<f64>,
    /// Chaplygin with a curvature force that does not vanish.
    gyroscopic: bool,
}

/// `Γ` (`k × nr`, row-major) and the reduced constraint row (`nr` entries,
/// empty without one).
type Connection<S> = (Vec<S>, Vec<S>);

impl<Sy: DynSystem> DynReduced<Sy> {
    /// Reduce `system` by `symmetry`, with the initial data `(q0, v0)` of
    /// the full system (see [`Reduced::new`](crate::Reduced::new)).
    ///
    /// # Errors
    /// Every error of [`DynCyclicSymmetry::check`];
    /// [`SymmetryError::Unsupported`] when neither reduction applies (mixed
    /// cyclic columns, fewer constraint rows than cyclic coordinates for a
    /// Chaplygin reduction, more than one constraint left on shape space,
    /// rank-deficient `A_C`); [`SymmetryError::NotQuadratic`] (Routh).
    pub fn new(
        system: Sy,
        symmetry: DynCyclicSymmetry,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<Self, SymmetryError> {
        symmetry.check(&system, q0, v0)?;
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        let group: Vec<usize> = symmetry.cyclic().collect();
        let shape: Vec<usize> = symmetry.shape().collect();
        let k = group.len();
        // Which cyclic columns of A vanish, at every sample.
        let samples = symmetry.samples(q0, v0, &|i| symmetry.cyclic[i]);
        let mut zero_column = vec![true; k];
        let mut a = vec![0.0; m * n];
        for (q, _, _) in &samples {
            if m > 0 {
                system.constraint_forms(q, &mut a);
            }
            let scale = a.iter().fold(0.0f64, |s, x| s.max(x.abs())).max(1.0);
            for (b, &c) in group.iter().enumerate() {
                if (0..m).any(|r| a[r * n + c].abs() > 1e-12 * scale) {
                    zero_column[b] = false;
                }
            }
        }
        let zeros = zero_column.iter().filter(|&&z| z).count();
        let kind = if zeros == k {
            ReductionKind::Routh
        } else if zeros == 0 {
            ReductionKind::Chaplygin
        } else {
            return Err(SymmetryError::Unsupported {
                reason: format!(
                    "{zeros} of the {k} cyclic coordinates are free of the constraints and the others are not (mixed Routh/Chaplygin reduction is not implemented)"
                ),
            });
        };
        let mr = match kind {
            ReductionKind::Routh => m,
            ReductionKind::Chaplygin => {
                if m < k {
                    return Err(SymmetryError::Unsupported {
                        reason: format!(
                            "the {m} constraint rows cannot fix the velocities of the {k} cyclic coordinates (Chaplygin reduction needs at least as many rows)"
                        ),
                    });
                }
                m - k
            }
        };
        if kind == ReductionKind::Chaplygin && mr > 1 {
            return Err(SymmetryError::Unsupported {
                reason: format!(
                    "{mr} constraints would remain on shape space; only 0 or 1 are implemented"
                ),
            });
        }
        let p0 = momentum_dyn(
            &system,
            &DVector::from_column_slice(q0),
            &DVector::from_column_slice(v0),
        );
        let momentum = group.iter().map(|&c| p0[c]).collect();
        let mut reduced = Self {
            system,
            symmetry,
            kind,
            shape,
            group,
            m,
            mr,
            reference: q0.to_vec(),
            momentum,
            gyroscopic: false,
        };
        let mut gyroscopic = false;
        for (q, v, _) in &samples {
            let s = reduced.project_slice(q);
            let sd = reduced.project_slice(v);
            match kind {
                ReductionKind::Routh => reduced.check_quadratic(q, v)?,
                ReductionKind::Chaplygin => {
                    if reduced.connection(&s).is_none() {
                        return Err(SymmetryError::Unsupported {
                            reason: format!(
                                "the cyclic columns of A(q) are rank deficient at q = {q:?}: the constraints do not fix the group velocities"
                            ),
                        });
                    }
                    gyroscopic |= reduced.curvature_relative(&s, &sd) > CURVATURE_TOLERANCE;
                }
            }
        }
        reduced.gyroscopic = gyroscopic;
        Ok(reduced)
    }

    /// The reduction applied.
    pub fn kind(&self) -> ReductionKind {
        self.kind
    }

    /// Whether the reduced system carries the Chaplygin curvature force.
    pub fn is_gyroscopic(&self) -> bool {
        self.gyroscopic
    }

    /// The symmetry.
    pub fn symmetry(&self) -> &DynCyclicSymmetry {
        &self.symmetry
    }

    /// The full system.
    pub fn full(&self) -> &Sy {
        &self.system
    }

    /// Full index of each shape coordinate, in order.
    pub fn shape_indices(&self) -> &[usize] {
        &self.shape
    }

    /// The conserved momenta `μ = ∂L/∂ġ` (Routh), in the order of the cyclic
    /// coordinates; zeros for a Chaplygin reduction.
    pub fn momentum(&self) -> Vec<f64> {
        match self.kind {
            ReductionKind::Routh => self.momentum.clone(),
            ReductionKind::Chaplygin => vec![0.0; self.group.len()],
        }
    }

    /// The shape part `s` of a full vector (configuration or velocity).
    pub fn project(&self, q: &[f64]) -> DVector<f64> {
        DVector::from_iterator(self.shape.len(), self.shape.iter().map(|&i| q[i]))
    }

    fn project_slice<S: Copy>(&self, q: &[S]) -> Vec<S> {
        self.shape.iter().map(|&i| q[i]).collect()
    }

    /// The full configuration with shape `s` and the reference group
    /// coordinates.
    fn embed<S: AdScalar>(&self, s: &[S]) -> Vec<S> {
        let mut q: Vec<S> = self.reference.iter().map(|&x| S::from(x)).collect();
        for (a, &i) in self.shape.iter().enumerate() {
            q[i] = s[a];
        }
        q
    }

    /// `Γ(s)` of a Chaplygin reduction and the reduced constraint row
    /// `n(s)ᵀ A_S(s)` (when one constraint is left); `None` when `A_C` is
    /// singular.
    fn connection<S: AdScalar>(&self, s: &[S]) -> Option<Connection<S>> {
        let (n, m, k, nr) = (
            self.reference.len(),
            self.m,
            self.group.len(),
            self.shape.len(),
        );
        let mut a = vec![S::from(0.0); m * n];
        self.system.constraint_forms(&self.embed(s), &mut a);
        let at = |r: usize, c: usize| a[r * n + c];
        // Normal equations: (A_Cᵀ A_C) Γ = −A_Cᵀ A_S.
        let mut g = vec![S::from(0.0); k * k];
        let mut rhs = vec![S::from(0.0); k * nr];
        for i in 0..k {
            for j in 0..k {
                let mut x = S::from(0.0);
                for r in 0..m {
                    x += at(r, self.group[i]) * at(r, self.group[j]);
                }
                g[i * k + j] = x;
            }
            for beta in 0..nr {
                let mut x = S::from(0.0);
                for r in 0..m {
                    x -= at(r, self.group[i]) * at(r, self.shape[beta]);
                }
                rhs[i * nr + beta] = x;
            }
        }
        let scale = (0..k).fold(1.0f64, |s, i| s * g[i * k + i].re().abs().max(1e-300));
        let (gamma, det) = solve_block(g, rhs, k, nr)?;
        if det.re().abs() <= 1e-12 * scale {
            return None;
        }
        let mut row = Vec::new();
        if self.mr == 1 {
            row = vec![S::from(0.0); nr];
            // n_r = (−1)^r det(A_C without row r): spans the left null space
            // of the (k+1) × k matrix A_C, smoothly.
            for r in 0..m {
                let mut minor = vec![S::from(0.0); k * k];
                for (ii, rr) in (0..m).filter(|&rr| rr != r).enumerate() {
                    for j in 0..k {
                        minor[ii * k + j] = at(rr, self.group[j]);
                    }
                }
                let det = if k == 0 {
                    S::from(1.0)
                } else {
                    solve_block(minor, Vec::new(), k, 0).map_or(S::from(0.0), |(_, d)| d)
                };
                let normal = if r % 2 == 0 { det } else { -det };
                for beta in 0..nr {
                    row[beta] += normal * at(r, self.shape[beta]);
                }
            }
        }
        Some((gamma, row))
    }

    /// The group velocities `ġ(s, ṡ)`: `Γ(s) ṡ` (Chaplygin) or the solution
    /// of `∂L/∂ġ = μ` (Routh); NaN where these fail.
    fn group_velocity<S: AdScalar>(&self, s: &[S], sd: &[S]) -> Vec<S> {
        let (k, nr) = (self.group.len(), self.shape.len());
        let mut gd = vec![S::from(0.0); k];
        match self.kind {
            ReductionKind::Chaplygin => match self.connection(s) {
                Some((gamma, _)) => {
                    for b in 0..k {
                        for beta in 0..nr {
                            gd[b] += gamma[b * nr + beta] * sd[beta];
                        }
                    }
                }
                None => gd.fill(S::from(f64::NAN)),
            },
            ReductionKind::Routh => {
                let (b, h) = self.routh_jet(s, sd);
                let rhs = (0..k).map(|i| S::from(self.momentum[i]) - b[i]).collect();
                match solve_block(h, rhs, k, 1) {
                    Some((x, _)) => gd.copy_from_slice(&x),
                    None => gd.fill(S::from(f64::NAN)),
                }
            }
        }
        gd
    }

    /// The full `(q, v)` over the shape point `(s, ṡ)` with group
    /// velocities `gd`.
    fn full_state<S: AdScalar>(&self, s: &[S], sd: &[S], gd: &[S]) -> (Vec<S>, Vec<S>) {
        let q = self.embed(s);
        let mut v = vec![S::from(0.0); q.len()];
        for (a, &i) in self.shape.iter().enumerate() {
            v[i] = sd[a];
        }
        for (b, &i) in self.group.iter().enumerate() {
            v[i] = gd[b];
        }
        (q, v)
    }

    /// `b = ∂L/∂ġ` and `H = ∂²L/∂ġ²` at `ġ = 0` over `(s, ṡ)`.
    fn routh_jet<S: AdScalar>(&self, s: &[S], sd: &[S]) -> (Vec<S>, Vec<S>) {
        let zero = vec![S::from(0.0); self.group.len()];
        let (q, v) = self.full_state(s, sd, &zero);
        self.velocity_jet(&q, &v)
    }

    /// Gradient and Hessian (`k × k`, row-major) of `L` in the cyclic
    /// velocities at `(q, v)`.
    fn velocity_jet<S: AdScalar>(&self, q: &[S], v: &[S]) -> (Vec<S>, Vec<S>) {
        let k = self.group.len();
        let lift = |x: &S| HyperDual::new(*x, S::from(0.0), S::from(0.0), S::from(0.0));
        let qh: Vec<HyperDual<S>> = q.iter().map(lift).collect();
        let mut b = vec![S::from(0.0); k];
        let mut h = vec![S::from(0.0); k * k];
        for i in 0..k {
            for j in i..k {
                let mut vh: Vec<HyperDual<S>> = v.iter().map(lift).collect();
                vh[self.group[i]].eps1 = S::from(1.0);
                vh[self.group[j]].eps2 += S::from(1.0);
                let l = self.system.lagrangian(&qh, &vh);
                if j == i {
                    b[i] = l.eps1;
                }
                h[i * k + j] = l.eps1eps2;
                h[j * k + i] = l.eps1eps2;
            }
        }
        (b, h)
    }

    /// Routh: `∂L/∂ġ` affine in `ġ` with a regular Hessian, at a sample.
    fn check_quadratic(&self, q: &[f64], v: &[f64]) -> Result<(), SymmetryError> {
        let k = self.group.len();
        let mut v0 = v.to_vec();
        for &c in &self.group {
            v0[c] = 0.0;
        }
        let (b0, h) = self.velocity_jet(q, &v0);
        let (b1, _) = self.velocity_jet(q, v);
        let mut mismatch = 0.0f64;
        let mut scale = 1.0f64;
        for i in 0..k {
            let mut predicted = b0[i];
            for j in 0..k {
                predicted += h[i * k + j] * v[self.group[j]];
            }
            mismatch = mismatch.max((b1[i] - predicted).abs());
            scale = scale.max(b1[i].abs());
        }
        let diagonal: f64 = (0..k).map(|i| h[i * k + i].abs()).product();
        let singular =
            solve_block(h, Vec::new(), k, 0).is_none_or(|(_, det)| det.abs() <= 1e-14 * diagonal);
        if singular || mismatch.is_nan() || mismatch > 1e-9 * scale {
            return Err(SymmetryError::NotQuadratic {
                mismatch: if singular { f64::NAN } else { mismatch },
                q: q.to_vec(),
            });
        }
        Ok(())
    }

    /// Chaplygin: `|⟨J, Ω(u, w)⟩|` relative to `|J| |u| |w| (1 + max |Γ|)`
    /// at a sample (see [`Reduced`](crate::Reduced)).
    fn curvature_relative(&self, s: &[f64], sd: &[f64]) -> f64 {
        let nr = self.shape.len();
        if nr < 2 {
            return 0.0; // a 2-form on a line vanishes
        }
        let Some((gamma, row)) = self.connection(s) else {
            return 0.0;
        };
        let onto = |x: Vec<f64>| -> Vec<f64> {
            if self.mr == 0 {
                return x;
            }
            let rr: f64 = row.iter().map(|r| r * r).sum();
            if rr > 0.0 {
                let rx: f64 = row.iter().zip(&x).map(|(r, x)| r * x).sum();
                x.iter().zip(&row).map(|(x, r)| x - r * (rx / rr)).collect()
            } else {
                x
            }
        };
        let u = onto((0..nr).map(|a| sd[a] + (0.3 + 0.1 * a as f64)).collect());
        let w = onto((0..nr).map(|a| (1.7 * a as f64 + 0.4).cos()).collect());
        let force = self.curvature_force(s, &u);
        let value: f64 = force.iter().zip(&w).map(|(f, w)| f * w).sum();
        let gd = self.group_velocity(s, &u);
        let (q, v) = self.full_state(s, &u, &gd);
        let p = momentum_dyn(&self.system, &DVector::from_vec(q), &DVector::from_vec(v));
        let gamma_max = gamma.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        let j_norm: f64 = self.group.iter().map(|&c| p[c].abs()).sum();
        let norm = |x: &[f64]| x.iter().map(|y| y * y).sum::<f64>().sqrt();
        let scale = j_norm * norm(&u) * norm(&w) * (1.0 + gamma_max);
        if value == 0.0 {
            0.0
        } else {
            value.abs() / scale.max(f64::MIN_POSITIVE)
        }
    }

    /// The curvature force `F_β(s, ṡ) = Σ_b J_b Σ_α (∂_α Γ^b_β − ∂_β Γ^b_α) ṡ^α`
    /// of a Chaplygin reduction, for any scalar type; NaN where `A_C` is
    /// singular.
    fn curvature_force<S: AdScalar>(&self, s: &[S], sd: &[S]) -> Vec<S> {
        let (k, nr) = (self.group.len(), self.shape.len());
        let zero = S::from(0.0);
        // ∂Γ/∂s_α: entry (b, β) of dgamma[α].
        let mut dgamma = Vec::with_capacity(nr);
        for alpha in 0..nr {
            let mut x: Vec<Dual<S>> = s.iter().map(|&xi| Dual::new(xi, zero)).collect();
            x[alpha].eps = S::from(1.0);
            let Some((gamma, _)) = self.connection(&x) else {
                return vec![S::from(f64::NAN); nr];
            };
            dgamma.push(gamma.iter().map(|g| g.eps).collect::<Vec<S>>());
        }
        // J_b = ∂L/∂ġ_b at (s, Γ ṡ, ṡ).
        let gd = self.group_velocity(s, sd);
        let (q, v) = self.full_state(s, sd, &gd);
        let qd: Vec<Dual<S>> = q.iter().map(|&x| Dual::new(x, zero)).collect();
        let mut j = vec![zero; k];
        for (b, jb) in j.iter_mut().enumerate() {
            let mut vd: Vec<Dual<S>> = v.iter().map(|&x| Dual::new(x, zero)).collect();
            vd[self.group[b]].eps = S::from(1.0);
            *jb = self.system.lagrangian(&qd, &vd).eps;
        }
        (0..nr)
            .map(|beta| {
                let mut f = zero;
                for (b, &jb) in j.iter().enumerate() {
                    for alpha in 0..nr {
                        f += jb
                            * (dgamma[alpha][b * nr + beta] - dgamma[beta][b * nr + alpha])
                            * sd[alpha];
                    }
                }
                f
            })
            .collect()
    }

    /// The full configuration after one (sub-)step of the reduced
    /// trajectory and the full increment (see
    /// [`Reduced::lift_step`](crate::Reduced::lift_step)): shape `s1`,
    /// group coordinates `g0 + τ ġ(Ψ_d^τ(s0, s1))` with `s0, g0` read from
    /// `q0`; the increment's group part is `τ ġ` exactly.
    pub fn lift_step(
        &self,
        map: Discretization,
        q0: &DVector<f64>,
        s1: &DVector<f64>,
        tau: f64,
    ) -> (DVector<f64>, DVector<f64>) {
        let s0 = self.project(q0.as_slice());
        let ds = s1 - &s0;
        // Ψ_d^τ of the maps of R^n: v = d/τ, the node s0 + c d.
        let inv = tau.recip();
        let sd: Vec<f64> = ds.iter().map(|d| d * inv).collect();
        let s: Vec<f64> = match map {
            Discretization::Forward => s0.as_slice().to_vec(),
            Discretization::Midpoint => {
                s0.iter().zip(ds.iter()).map(|(a, d)| a + d * 0.5).collect()
            }
        };
        let gd = self.group_velocity(&s, &sd);
        let mut q1 = q0.clone();
        let mut d = DVector::zeros(q0.len());
        for (a, &i) in self.shape.iter().enumerate() {
            q1[i] = s1[a];
            d[i] = ds[a];
        }
        for (b, &i) in self.group.iter().enumerate() {
            d[i] = tau * gd[b];
            q1[i] = q0[i] + d[i];
        }
        (q1, d)
    }

    /// The full velocity over `(s, ṡ)`: shape velocities `ṡ`, group
    /// velocities `ġ(s, ṡ)`.
    pub fn lift_velocity(&self, s: &[f64], sd: &[f64]) -> DVector<f64> {
        let gd = self.group_velocity(s, sd);
        DVector::from_vec(self.full_state(s, sd, &gd).1)
    }
}

impl<Sy: DynSystem> DynSystem for DynReduced<Sy> {
    fn coordinate_count(&self) -> usize {
        self.shape.len()
    }

    fn constraint_count(&self) -> usize {
        self.mr
    }

    /// Reduction takes autonomous systems only; a reduced run of a
    /// time-dependent one is refused upstream, which this tells.
    fn time_dependent(&self) -> bool {
        self.system.time_dependent()
    }

    fn lagrangian<S: AdScalar>(&self, s: &[S], sd: &[S]) -> S {
        let gd = self.group_velocity(s, sd);
        let (q, v) = self.full_state(s, sd, &gd);
        let l = self.system.lagrangian(&q, &v);
        match self.kind {
            ReductionKind::Chaplygin => l,
            ReductionKind::Routh => {
                let mut r = l;
                for (b, &g) in gd.iter().enumerate() {
                    r -= g * self.momentum[b];
                }
                r
            }
        }
    }

    fn constraint_forms<S: AdScalar>(&self, s: &[S], out: &mut [S]) {
        let nr = self.shape.len();
        match self.kind {
            ReductionKind::Routh => {
                if self.m == 0 {
                    return;
                }
                let n = self.reference.len();
                let mut a = vec![S::from(0.0); self.m * n];
                self.system.constraint_forms(&self.embed(s), &mut a);
                for r in 0..self.m {
                    for (beta, &i) in self.shape.iter().enumerate() {
                        out[r * nr + beta] = a[r * n + i];
                    }
                }
            }
            ReductionKind::Chaplygin => {
                if self.mr == 0 {
                    return;
                }
                match self.connection(s) {
                    Some((_, row)) => out[..nr].copy_from_slice(&row),
                    None => out[..nr].fill(S::from(f64::NAN)),
                }
            }
        }
    }

    fn boundary_count(&self) -> usize {
        self.system.boundary_count()
    }

    fn boundary<S: AdScalar>(&self, j: usize, s: &[S]) -> S {
        self.system.boundary(j, &self.embed(s))
    }

    /// The Chaplygin curvature force when it does not vanish.
    fn gyroscopic_force<S: AdScalar>(&self, s: &[S], sd: &[S], f: &mut [S]) -> bool {
        if !self.gyroscopic {
            return false;
        }
        f.copy_from_slice(&self.curvature_force(s, sd));
        true
    }
}
