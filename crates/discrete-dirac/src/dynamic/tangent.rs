//! The exact tangent map of a step of the discrete flow (docs/theory.md
//! §12): the derivative of the step's result with respect to its data, by
//! the implicit function theorem on the step equations.
//!
//! A Lagrange–Dirac step solves `F(y; z) = 0` for `y = (b, μ)` given
//! `z = (a, π_a, h)` (oriented form, see [`DynLagrangeDirac`]):
//! ```text
//! F₁ = π_a + P₁(a, b, h) − A(a)ᵀ μ = 0,     F₂ = ω(a, b, h) = 0,
//! π_b = P₂(a, b, h)   [− A(b)ᵀ μ for the symmetric variant],
//! ```
//! with `P₁ = D1 L_d + f_a`, `P₂ = D2 L_d + f_b`. Differentiating,
//! `∂y/∂z = −(∂F/∂y)⁻¹ ∂F/∂z` and `∂π_b/∂z` by the chain rule. Every
//! partial derivative is exact (hyper-dual numbers; see
//! [`DynDiscreteLagrangian::second_increment`](diracvi_geometry::dynamic::DynDiscreteLagrangian::second_increment)),
//! so the tangent map is exact up to the solve's round-off — checked
//! against central differences of the step in the tests.
//!
//! A degenerate step (singular `∂F/∂y`, docs/theory.md §3.9) solves
//! `G = [U_rᵀ F; Yᵀ F_next] = 0` instead (the independent rows and the next
//! step's hidden constraints); its tangent map is the implicit function
//! theorem on `G`, with `U_r`, `Y` from the SVD at the solution held fixed
//! (docs/theory.md §12.8). A step whose hidden constraints the system
//! supplies (a circuit's loops, docs/theory.md §8.2) solved `F` with the
//! equation each `y` replaces swapped for `yᵀ F_next`, and gets the
//! tangent map of those equations.

use super::lagrange_dirac::DynLagrangeDirac;
use crate::StepError;
use crate::linear::{LinearSolver, SvdSplit};
use diracvi_geometry::dynamic::{
    DynDiscreteLagrangian, DynLdSecond, DynSystem, ParamLifted, constraint_second_over,
    reaction_jacobian_dyn,
};
use diracvi_geometry::{GeometryError, Orientation};
use nalgebra::{DMatrix, DVector};

/// The derivative of one oriented step `(a, π_a; h) ↦ (b, π_b)`.
#[derive(Debug, Clone, PartialEq)]
pub struct DynStepTangent {
    /// `∂(b, π_b)/∂(a, π_a)`: `2n × 2n`, positions first, then momenta.
    pub start: DMatrix<f64>,
    /// `∂(b, π_b)/∂h`: `2n` entries.
    pub step: DVector<f64>,
}

impl DynStepTangent {
    /// The same derivative between physical states `(q, p)`, `p = σ π`
    /// with `σ = ±1` the direction of time: `S T S`, `S = diag(I, σ I)`,
    /// and `S ∂/∂h`.
    pub fn physical(mut self, sign: f64) -> Self {
        physical_tangent(&mut self.start, sign);
        if sign < 0.0 {
            let n = self.step.len() / 2;
            for i in n..2 * n {
                self.step[i] = -self.step[i];
            }
        }
        self
    }
}

/// `X ← S X S`, `S = diag(I, σ I)`: an oriented tangent map (`π = σ p`,
/// `2n × 2n`, positions first) between physical states.
pub fn physical_tangent(x: &mut DMatrix<f64>, sign: f64) {
    if sign < 0.0 {
        let n = x.nrows() / 2;
        for i in 0..2 * n {
            for j in 0..2 * n {
                if (i < n) != (j < n) {
                    x[(i, j)] = -x[(i, j)];
                }
            }
        }
    }
}

/// `A(q)` (`m × n`) and the multipliers `μ` of a reaction `A(q)ᵀ μ`, or
/// `None` when the rows of `A(q)` are dependent.
pub fn multipliers_from_reaction<Sy: DynSystem>(
    system: &Sy,
    q: &DVector<f64>,
    reaction: &DVector<f64>,
) -> Option<(DMatrix<f64>, DVector<f64>)> {
    let (n, m) = (system.coordinate_count(), system.constraint_count());
    let mut rows = vec![0.0; m * n];
    system.constraint_forms(q.as_slice(), &mut rows);
    let forms = DMatrix::from_row_slice(m, n, &rows);
    if m == 0 {
        return Some((forms, DVector::zeros(0)));
    }
    let mu = (&forms * forms.transpose())
        .lu()
        .solve(&(&forms * reaction))?;
    Some((forms, mu))
}

/// Pivots of the step Jacobian below this fraction of the largest mark it
/// singular: the step's solution is then not a smooth function of its data
/// along some direction (a degenerate Lagrangian's primary constraint).
const SINGULAR_PIVOT: f64 = 1e-13;

/// The derivative `∂y/∂z = −J_y⁻¹ J_z` of the solution of `F(y; z) = 0`
/// (implicit function theorem), by LU with full pivoting (faer's, blocked:
/// the tangent of a circuit of a few hundred branches is dominated by it).
///
/// # Errors
/// The ratio of the smallest to the largest pivot when `J_y` is singular
/// (below 1e-13, or not finite).
pub fn implicit_derivative(jy: DMatrix<f64>, jz: &DMatrix<f64>) -> Result<DMatrix<f64>, f64> {
    use faer::linalg::solvers::Solve;
    let (n, cols) = (jy.nrows(), jz.ncols());
    if n == 0 {
        return Ok(DMatrix::zeros(0, cols));
    }
    let a = faer::MatRef::from_column_major_slice(jy.as_slice(), n, n);
    let lu = a.full_piv_lu();
    let u = lu.U();
    let (mut lo, mut hi) = (f64::INFINITY, 0.0_f64);
    for i in 0..n {
        let p = u[(i, i)].abs();
        lo = lo.min(p);
        hi = hi.max(p);
    }
    let ratio = lo / hi;
    if ratio.is_nan() || ratio <= SINGULAR_PIVOT {
        return Err(ratio);
    }
    let mut x = faer::Mat::<f64>::from_fn(n, cols, |i, j| jz[(i, j)]);
    lu.solve_in_place(x.as_mut());
    let y = DMatrix::from_fn(n, cols, |i, j| -x[(i, j)]);
    if y.iter().all(|v| v.is_finite()) {
        Ok(y)
    } else {
        Err(ratio)
    }
}

impl<Sy, LS> DynLagrangeDirac<Sy, LS>
where
    Sy: DynSystem,
    LS: LinearSolver,
    LS::Jacobian: crate::assembly::StepJacobian,
{
    /// The tangent map of the oriented step from `a` with step `h` whose
    /// solution is the increment `d` and the reaction `A(a)ᵀ μ` (as in a
    /// [`DynOrientedStep`](super::DynOrientedStep) or [`DynSubStep`](super::DynSubStep)).
    ///
    /// A step whose Jacobian is singular (a degenerate Lagrangian, solved
    /// with the next step's hidden constraints) gets the tangent map of
    /// the equations it solves (docs/theory.md §12.8).
    ///
    /// # Errors
    /// [`StepError::Unsupported`] when the step Jacobian is singular and so
    /// are the degenerate step's equations; [`StepError::Geometry`] when a
    /// derivative cannot be evaluated.
    pub fn oriented_tangent(
        &self,
        t: f64,
        a: &DVector<f64>,
        d: &DVector<f64>,
        reaction: &DVector<f64>,
        h: f64,
    ) -> Result<DynStepTangent, StepError> {
        self.oriented_derivative(t, a, d, reaction, h, None, true)
            .map(|s| s.tangent)
    }

    /// The tangent map of the oriented step (as
    /// [`oriented_tangent`](Self::oriented_tangent)) together with the
    /// derivative of `(b, π_b)` in the parameter directions `directions`
    /// (`P × r`, `P =` [`DynSystem::parameter_count`]; docs/theory.md
    /// §12.4), from the step equations differentiated in `θ` through the
    /// system's `…_with` hooks ([`ParamLifted`]).
    ///
    /// # Errors
    /// As [`oriented_tangent`](Self::oriented_tangent);
    /// [`StepError::Unsupported`] when `directions` does not have one row
    /// per parameter of the system.
    #[allow(clippy::too_many_arguments)]
    pub fn oriented_sensitivity(
        &self,
        t: f64,
        a: &DVector<f64>,
        d: &DVector<f64>,
        reaction: &DVector<f64>,
        h: f64,
        directions: &DMatrix<f64>,
    ) -> Result<DynStepSensitivity, StepError> {
        self.oriented_derivative(t, a, d, reaction, h, Some(directions), true)
    }

    /// [`oriented_sensitivity`](Self::oriented_sensitivity) (with
    /// `directions`) or [`oriented_tangent`](Self::oriented_tangent)
    /// (without; no parameter columns), and without `with_h` for a step
    /// whose length does not depend on the data (every step of a run but
    /// those after an impact): `∂(b, π_b)/∂(a, π_a)` and the parameter
    /// columns bit for bit the same, the `h` column (`step`) left zero,
    /// from second derivatives in `2n` directions instead of `2n + 1`
    /// ([`DynDiscreteLagrangian::second_over`]).
    ///
    /// # Errors
    /// As [`oriented_sensitivity`](Self::oriented_sensitivity).
    #[allow(clippy::too_many_arguments)]
    pub fn oriented_derivative(
        &self,
        t: f64,
        a: &DVector<f64>,
        d: &DVector<f64>,
        reaction: &DVector<f64>,
        h: f64,
        directions: Option<&DMatrix<f64>>,
        with_h: bool,
    ) -> Result<DynStepSensitivity, StepError> {
        if self.system().time_dependent() && with_h {
            return Err(StepError::Unsupported(format!(
                "at t = {t}: the derivative of a step of a time-dependent system in \
                 its length (after an impact, or asked for) is not supported (the step's time \
                 would have to be a variable); in its start and the parameters it is"
            )));
        }
        let Some(directions) = directions else {
            return self.tangent_over(self.system(), 0, None, t, a, d, reaction, h, with_h);
        };
        check_directions(self.system(), directions)?;
        let (system, r) = (self.system(), directions.ncols());
        if self.parameter_rows_apply(a, d) {
            let geo = |source: GeometryError| StepError::Geometry { t, source };
            let ld = DynDiscreteLagrangian::new(system, self.map())
                .oriented(self.orientation())
                .starting_at(self.orientation().interval_start(t, h));
            let rows = times_sparse(&ld.parameter_rows(a, d, h).map_err(geo)?, directions);
            let given = Some((&rows, directions));
            return self.tangent_over(system, 0, given, t, a, d, reaction, h, with_h);
        }
        let lifted = ParamLifted::new(system, directions);
        self.tangent_over(&lifted, r, None, t, a, d, reaction, h, with_h)
    }

    /// Whether the parameter columns of a step from `a` (increment `d`)
    /// come from [`DynDiscreteLagrangian::parameter_rows`] (the derivatives
    /// of `L` in `θ` alone): without constraint rows and without a
    /// gyroscopic force, the step equations `π_a + D1 L_d = 0`,
    /// `π_b = D2 L_d` depend on `θ` through `L` only; and an autonomous
    /// system (the rows take `L` at no particular time). Otherwise the
    /// lifted system ([`ParamLifted`]) differentiates the constraint,
    /// reaction and force terms too, and a time-dependent `L` at the step's
    /// time ([`DynSystem::lagrangian_with_at`]).
    fn parameter_rows_apply(&self, a: &DVector<f64>, d: &DVector<f64>) -> bool {
        let system = self.system();
        if system.constraint_count() > 0 || system.time_dependent() {
            return false;
        }
        let mut f = vec![0.0; a.len()];
        !system.gyroscopic_force(a.as_slice(), d.as_slice(), &mut f)
    }

    /// The step's derivative in its data `(a, π_a, h)` and in `r` parameter
    /// directions, with the step quantities' second derivatives taken over
    /// `lifted`: the system itself (`r = 0`) or its [`ParamLifted`] (the
    /// last `r` coordinates are the directions, held at `0` on both ends).
    /// With `rows` (`lifted` the system itself, `r = 0`; only without
    /// constraint rows and forces), the parameter columns are instead
    /// `rows = ∂(D1 L_d, D2 L_d, D3 L_d)/∂θ · D` (`(2n + 1) × r'`), given
    /// with the directions `D` (for the next step's rows of a degenerate
    /// step). Without `with_h` the `h` column is left zero (see
    /// [`oriented_derivative`](Self::oriented_derivative)).
    #[allow(clippy::too_many_arguments)]
    fn tangent_over<Ly: DynSystem>(
        &self,
        lifted: &Ly,
        r: usize,
        rows_and_directions: Option<(&DMatrix<f64>, &DMatrix<f64>)>,
        t: f64,
        a: &DVector<f64>,
        d: &DVector<f64>,
        reaction: &DVector<f64>,
        h: f64,
        with_h: bool,
    ) -> Result<DynStepSensitivity, StepError> {
        let geo = |source: GeometryError| StepError::Geometry { t, source };
        let rows = rows_and_directions.map(|(rows, _)| rows);
        let system = self.system();
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        let np = n + r;
        // lifted z' = (a, s_a, b, s_b, h); the data z = (a, π_a, h, s).
        let (col_b, col_sa, col_sb, col_h) = (np, n, np + n, 2 * np);
        let row_p2 = np;
        // the parameter columns: lifted (r) or given (rows)
        let rc = rows.map_or(r, DMatrix::ncols);
        let nz = 2 * n + 1 + rc;
        let lift = |x: &DVector<f64>| {
            let mut y = DVector::zeros(np);
            y.rows_mut(0, n).copy_from(x);
            y
        };
        let (al, dl) = (lift(a), lift(d));
        // A time-dependent system's L at the time of the step's
        // discretization point, held fixed (the step's length is).
        let ld = DynDiscreteLagrangian::new(lifted, self.map())
            .oriented(self.orientation())
            .starting_at(self.orientation().interval_start(t, h));
        let (second, w) = second_data(&ld, self.constraint(), &al, &dl, h, with_h).map_err(geo)?;
        // μ from the reaction `A(a)ᵀ μ` (A has full row rank on a step).
        let (a_forms, mu) = multipliers_from_reaction(system, a, reaction).ok_or_else(|| {
            StepError::Unsupported(format!(
                "at t = {t}: the constraint rows A(q) are dependent; \
                 the tangent map needs independent rows"
            ))
        })?;
        let reaction_a = reaction_jacobian_dyn(lifted, &al, &mu).map_err(geo)?;
        let p = &second.jacobian;
        // ∂F/∂y, y = (b, μ).
        let mut jy = DMatrix::zeros(n + m, n + m);
        jy.view_mut((0, 0), (n, n))
            .copy_from(&p.view((0, col_b), (n, n)));
        jy.view_mut((0, n), (n, m))
            .copy_from(&(-a_forms.transpose()));
        jy.view_mut((n, 0), (m, n))
            .copy_from(&w.view((0, col_b), (m, n)));
        // ∂F/∂z, z = (a, π_a, h, s).
        let mut jz = DMatrix::zeros(n + m, nz);
        jz.view_mut((0, 0), (n, n))
            .copy_from(&(p.view((0, 0), (n, n)) - reaction_a.view((0, 0), (n, n))));
        for i in 0..n {
            jz[(i, n + i)] = 1.0;
            jz[(i, 2 * n)] = p[(i, col_h)];
            match rows {
                Some(rows) => {
                    for s in 0..rc {
                        jz[(i, 2 * n + 1 + s)] = rows[(i, s)];
                    }
                }
                None => {
                    for s in 0..r {
                        jz[(i, 2 * n + 1 + s)] =
                            p[(i, col_sa + s)] + p[(i, col_sb + s)] - reaction_a[(i, n + s)];
                    }
                }
            }
        }
        jz.view_mut((n, 0), (m, n))
            .copy_from(&w.view((0, 0), (m, n)));
        for c in 0..m {
            jz[(n + c, 2 * n)] = w[(c, col_h)];
            for s in 0..r {
                jz[(n + c, 2 * n + 1 + s)] = w[(c, col_sa + s)] + w[(c, col_sb + s)];
            }
        }
        // A step with hidden constraints supplied by the system solved the
        // equations with theirs in place (docs/theory.md §8.2, §12.8),
        // whatever the pivots of `∂F/∂y` say.
        let supplied = !system.hidden_constraints(self.map()).is_empty();
        let regular = if supplied {
            Err(0.0)
        } else {
            implicit_derivative(jy.clone(), &jz)
        };
        let y = match regular {
            Ok(y) => y,
            // A degenerate step (docs/theory.md §3.9, §12.8): the
            // equations it solved are `U_rᵀ F = 0` and the next step's
            // hidden constraints `Yᵀ F_next = 0` (or, with supplied ones,
            // `F` with each supplied `yᵀ F_next` in place of the equation
            // it replaces).
            Err(_) => {
                let next = NextStep {
                    lifted,
                    r,
                    rows_and_directions,
                    a,
                    d,
                    mu: &mu,
                    h,
                    with_h,
                    t,
                };
                let (gy, gz) = self.degenerate_equations(&next, &jy, &jz, p)?;
                implicit_derivative(gy, &gz).map_err(|ratio| {
                    StepError::Unsupported(format!(
                        "at t = {t}: the step Jacobian is singular and so are the \
                         degenerate step's equations (the independent rows and the next step's \
                         hidden constraints; pivot ratio {ratio:.1e}): the step has no tangent map"
                    ))
                })?
            }
        };
        let yb = y.rows(0, n);
        // ∂π_b/∂z = ∂P₂/∂z|_b + ∂P₂/∂b ∂b/∂z.
        let mut pi_z = DMatrix::zeros(n, nz);
        for i in 0..n {
            for j in 0..n {
                pi_z[(i, j)] = p[(row_p2 + i, j)];
            }
            pi_z[(i, 2 * n)] = p[(row_p2 + i, col_h)];
            match rows {
                Some(rows) => {
                    for s in 0..rc {
                        pi_z[(i, 2 * n + 1 + s)] = rows[(n + i, s)];
                    }
                }
                None => {
                    for s in 0..r {
                        pi_z[(i, 2 * n + 1 + s)] =
                            p[(row_p2 + i, col_sa + s)] + p[(row_p2 + i, col_sb + s)];
                    }
                }
            }
        }
        pi_z += p.view((row_p2, col_b), (n, n)) * yb;
        if self.is_symmetric() && m > 0 {
            let b = a + d;
            let mut b_rows = vec![0.0; m * n];
            system.constraint_forms(b.as_slice(), &mut b_rows);
            let b_forms = DMatrix::from_row_slice(m, n, &b_rows);
            let reaction_b = reaction_jacobian_dyn(lifted, &lift(&b), &mu).map_err(geo)?;
            pi_z -= reaction_b.view((0, 0), (n, n)) * yb + b_forms.transpose() * y.rows(n, m);
            for i in 0..n {
                for s in 0..r {
                    pi_z[(i, 2 * n + 1 + s)] -= reaction_b[(i, n + s)];
                }
            }
        }
        let mut start = DMatrix::zeros(2 * n, 2 * n);
        start
            .view_mut((0, 0), (n, 2 * n))
            .copy_from(&yb.columns(0, 2 * n));
        start
            .view_mut((n, 0), (n, 2 * n))
            .copy_from(&pi_z.columns(0, 2 * n));
        let mut step = DVector::zeros(2 * n);
        step.rows_mut(0, n).copy_from(&yb.column(2 * n));
        step.rows_mut(n, n).copy_from(&pi_z.column(2 * n));
        let mut parameters = DMatrix::zeros(2 * n, rc);
        parameters
            .view_mut((0, 0), (n, rc))
            .copy_from(&yb.columns(2 * n + 1, rc));
        parameters
            .view_mut((n, 0), (n, rc))
            .copy_from(&pi_z.columns(2 * n + 1, rc));
        Ok(DynStepSensitivity {
            tangent: DynStepTangent { start, step },
            parameters,
        })
    }
}

/// The second derivatives of `L_d` and the derivatives of the discrete
/// constraint of the step `a → a + d`, in `(a, b, h)` or (without
/// `with_h`) in `(a, b)`.
fn second_data<Ly: DynSystem>(
    ld: &DynDiscreteLagrangian<'_, Ly>,
    cd: diracvi_geometry::ConstraintDiscretization,
    a: &DVector<f64>,
    d: &DVector<f64>,
    h: f64,
    with_h: bool,
) -> Result<(DynLdSecond, DMatrix<f64>), GeometryError> {
    Ok((
        ld.second_over(a, d, h, with_h)?,
        constraint_second_over(cd, ld, a, d, h, with_h)?.1,
    ))
}

/// The data of a degenerate step that its next step's hidden constraints
/// are evaluated from (see [`DynLagrangeDirac::degenerate_equations`]).
struct NextStep<'x, Ly> {
    lifted: &'x Ly,
    r: usize,
    rows_and_directions: Option<(&'x DMatrix<f64>, &'x DMatrix<f64>)>,
    a: &'x DVector<f64>,
    d: &'x DVector<f64>,
    mu: &'x DVector<f64>,
    h: f64,
    with_h: bool,
    t: f64,
}

impl<Sy, LS> DynLagrangeDirac<Sy, LS>
where
    Sy: DynSystem,
    LS: LinearSolver,
    LS::Jacobian: crate::assembly::StepJacobian,
{
    /// The derivatives `(∂G/∂y, ∂G/∂z)` of the equations a degenerate step
    /// solves (docs/theory.md §3.9, §12.8), `y = (b, μ)`, `z = (a, π_a, h, s)`:
    /// ```text
    /// G = [U_rᵀ F(y; z); Yᵀ F_next(y; z)],
    /// F_next = [D2 L_d(a, b, h) + D1 L_d(b, c, h) − A(b)ᵀ μ; ω(b, c, h)],  c = 2b − a,
    /// ```
    /// `U_r`, `Y` the range and left null space of the step Jacobian
    /// `J = ∂F/∂y` (`jy`, SVD) at the solution, held fixed. A system that
    /// supplies its hidden constraints ([`DynSystem::hidden_constraints`])
    /// gets the equations its step solved instead: `F` with the equation
    /// each supplied `y` replaces swapped for `yᵀ F_next`. `∂F/∂z` is `jz`;
    /// `p` is the step's `second_increment` Jacobian over `(a, s_a, b, s_b, h)`.
    fn degenerate_equations<Ly: DynSystem>(
        &self,
        next: &NextStep<'_, Ly>,
        jy: &DMatrix<f64>,
        jz: &DMatrix<f64>,
        p: &DMatrix<f64>,
    ) -> Result<(DMatrix<f64>, DMatrix<f64>), StepError> {
        let NextStep {
            lifted,
            r,
            rows_and_directions,
            a,
            d,
            mu,
            h,
            with_h,
            t,
        } = *next;
        let geo = |source: GeometryError| StepError::Geometry { t, source };
        let system = self.system();
        let (n, m) = (system.coordinate_count(), system.constraint_count());
        let (size, nz) = (n + m, jz.ncols());
        let np = n + r;
        let (col_b, col_sa, col_sb, col_h) = (np, n, np + n, 2 * np);
        let row_p2 = np;
        let b: DVector<f64> = a + d;
        let lift = |x: &DVector<f64>| {
            let mut y = DVector::zeros(np);
            y.rows_mut(0, n).copy_from(x);
            y
        };
        let (bl, dl) = (lift(&b), lift(d));
        // The next step from b with the same increment: c = b + d, its
        // interval next to this one's (as the step takes it).
        let t_lo = self.orientation().interval_start(t, h);
        let start_next = match self.orientation() {
            Orientation::Forward => t_lo + h,
            Orientation::Reversed => t_lo - h,
        };
        let ld = DynDiscreteLagrangian::new(lifted, self.map())
            .oriented(self.orientation())
            .starting_at(start_next);
        let (q, w) = second_data(&ld, self.constraint(), &bl, &dl, h, with_h).map_err(geo)?;
        let q = &q.jacobian;
        let reaction_b = reaction_jacobian_dyn(lifted, &bl, mu).map_err(geo)?;
        let mut b_rows = vec![0.0; m * n];
        system.constraint_forms(b.as_slice(), &mut b_rows);
        let next_rows = match rows_and_directions {
            Some((_, directions)) => {
                let ld = DynDiscreteLagrangian::new(system, self.map())
                    .oriented(self.orientation())
                    .starting_at(start_next);
                Some(times_sparse(
                    &ld.parameter_rows(&b, d, h).map_err(geo)?,
                    directions,
                ))
            }
            None => None,
        };
        // ∂F_next/∂y and ∂F_next/∂z.
        let mut ny = DMatrix::zeros(size, size);
        let mut nzm = DMatrix::zeros(size, nz);
        for i in 0..n {
            for j in 0..n {
                ny[(i, j)] = p[(row_p2 + i, col_b + j)] + q[(i, j)] + 2.0 * q[(i, col_b + j)]
                    - reaction_b[(i, j)];
                nzm[(i, j)] = p[(row_p2 + i, j)] - q[(i, col_b + j)];
            }
            for c in 0..m {
                ny[(i, n + c)] = -b_rows[c * n + i];
            }
            nzm[(i, 2 * n)] = p[(row_p2 + i, col_h)] + q[(i, col_h)];
            match (rows_and_directions, &next_rows) {
                (Some((rows, _)), Some(next_rows)) => {
                    for s in 0..rows.ncols() {
                        nzm[(i, 2 * n + 1 + s)] = rows[(n + i, s)] + next_rows[(i, s)];
                    }
                }
                _ => {
                    for s in 0..r {
                        nzm[(i, 2 * n + 1 + s)] = p[(row_p2 + i, col_sa + s)]
                            + p[(row_p2 + i, col_sb + s)]
                            + q[(i, col_sa + s)]
                            + q[(i, col_sb + s)]
                            - reaction_b[(i, n + s)];
                    }
                }
            }
        }
        for c in 0..m {
            for j in 0..n {
                ny[(n + c, j)] = w[(c, j)] + 2.0 * w[(c, col_b + j)];
                nzm[(n + c, j)] = -w[(c, col_b + j)];
            }
            nzm[(n + c, 2 * n)] = w[(c, col_h)];
            for s in 0..r {
                nzm[(n + c, 2 * n + 1 + s)] = w[(c, col_sa + s)] + w[(c, col_sb + s)];
            }
        }
        let supplied = system.hidden_constraints(self.map());
        if !supplied.is_empty() {
            // `F` with each equation a supplied `y` replaces swapped for
            // `yᵀ F_next` (docs/theory.md §8.2).
            let (mut gy, mut gz) = (jy.clone(), jz.clone());
            for hidden in supplied {
                let row = hidden.replaces;
                gy.row_mut(row).fill(0.0);
                gz.row_mut(row).fill(0.0);
                let entries = hidden
                    .q
                    .iter()
                    .copied()
                    .chain(hidden.mu.iter().map(|&(r, w)| (n + r, w)));
                for (e, w) in entries {
                    for j in 0..size {
                        gy[(row, j)] += w * ny[(e, j)];
                    }
                    for j in 0..nz {
                        gz[(row, j)] += w * nzm[(e, j)];
                    }
                }
            }
            return Ok((gy, gz));
        }
        let split =
            SvdSplit::new(jy, self.params().singular_threshold).ok_or(StepError::NonFinite {
                t,
                what: "Jacobian",
                iterations: 0,
            })?;
        let (ur, y) = (&split.range, &split.left_null);
        let rank = ur.ncols();
        let mut gy = DMatrix::zeros(size, size);
        let mut gz = DMatrix::zeros(size, nz);
        gy.rows_mut(0, rank).copy_from(&(ur.transpose() * jy));
        gy.rows_mut(rank, size - rank)
            .copy_from(&(y.transpose() * &ny));
        gz.rows_mut(0, rank).copy_from(&(ur.transpose() * jz));
        gz.rows_mut(rank, size - rank)
            .copy_from(&(y.transpose() * &nzm));
        Ok((gy, gz))
    }
}

/// The derivative of one oriented step in its data and in `r` parameter
/// directions (docs/theory.md §12.4).
#[derive(Debug, Clone, PartialEq)]
pub struct DynStepSensitivity {
    /// `∂(b, π_b)/∂(a, π_a)` and `∂(b, π_b)/∂h`.
    pub tangent: DynStepTangent,
    /// `∂(b, π_b)/∂θ · D`: `2n × r`, positions first, then momenta.
    pub parameters: DMatrix<f64>,
}

impl DynStepSensitivity {
    /// The same derivative between physical states `(q, p)`, `p = σ π`
    /// (see [`DynStepTangent::physical`]).
    pub fn physical(self, sign: f64) -> Self {
        let mut parameters = self.parameters;
        if sign < 0.0 {
            let n = parameters.nrows() / 2;
            parameters.rows_mut(n, n).neg_mut();
        }
        Self {
            tangent: self.tangent.physical(sign),
            parameters,
        }
    }
}

/// `x · d`, skipping the zero entries of `d` (parameter directions are
/// mostly unit vectors: one entry per asked parameter).
///
/// Over the column-major storage: the scan of `d` (`P × r` entries per
/// step, `10⁴` for 100 parameters) is most of the work, and nalgebra's
/// column iterators cost several times the comparisons.
fn times_sparse(x: &DMatrix<f64>, d: &DMatrix<f64>) -> DMatrix<f64> {
    let (rows, count) = (x.nrows(), d.nrows());
    let mut out = DMatrix::zeros(rows, d.ncols());
    if count == 0 || rows == 0 {
        return out;
    }
    let xs = x.as_slice();
    for (column, o) in d
        .as_slice()
        .chunks_exact(count)
        .zip(out.as_mut_slice().chunks_exact_mut(rows))
    {
        // Blocks of 16 entries, skipped at once when all are zero (the
        // or of their bits without the sign vectorizes).
        for (b, block) in column.chunks(16).enumerate() {
            if block.iter().fold(0u64, |acc, w| acc | (w.to_bits() << 1)) == 0 {
                continue;
            }
            for (i, &w) in block.iter().enumerate() {
                if w != 0.0 {
                    let p = 16 * b + i;
                    for (oi, &xi) in o.iter_mut().zip(&xs[p * rows..(p + 1) * rows]) {
                        *oi += w * xi;
                    }
                }
            }
        }
    }
    out
}

/// [`StepError::Unsupported`] unless `directions` has one row per
/// parameter of `system` and the system has parameters.
pub fn check_directions<Sy: DynSystem>(
    system: &Sy,
    directions: &DMatrix<f64>,
) -> Result<(), StepError> {
    let count = system.parameter_count();
    if count == 0 || directions.nrows() != count {
        return Err(StepError::Unsupported(format!(
            "parameter sensitivities need a system differentiable in its parameters \
             ({count} declared) and one direction entry per parameter ({} given)",
            directions.nrows()
        )));
    }
    Ok(())
}
