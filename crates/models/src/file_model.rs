//! Models read from files: a [`CompiledModel`] (diracvi-expr) seen as a
//! [`DynSystem`], so it runs on the run-time-sized core (docs/theory.md §11)
//! whatever its number of coordinates `n` and constraint rows `m`.
//!
//! The expressions are compiled once to tapes and evaluated over the
//! automatic-differentiation scalar the integrators ask for, so every
//! derivative is exact; the core seeds them in chunks of directions, one
//! chunk for the small systems of the papers.

use crate::{NamedDynSystem, ParameterSeed, ParameterSeedError};
use diracvi_expr::{CompiledModel, ModelFile, ParametricModel};
use diracvi_geometry::AdScalar;
use diracvi_geometry::dynamic::{DynSystem, LagrangianParamSecond, LagrangianTerms};
use nalgebra::DVector;
use std::sync::{Arc, OnceLock};

/// A model read from a file: a [`DynSystem`] whose Lagrangian, constraint
/// one-forms, boundary pieces and Hamiltonian are the file's compiled
/// expressions.
///
/// Built by [`Scenario::visit_dyn`](crate::Scenario::visit_dyn) for a
/// scenario read with [`Scenario::from_model_file`](crate::Scenario::from_model_file);
/// [`FileModel::new`] builds one directly.
#[derive(Debug, Clone)]
pub struct FileModel {
    compiled: Arc<CompiledModel>,
    text: Arc<FileText>,
    /// The file and the run's overrides, to differentiate in the
    /// parameters ([`with_parameters`](Self::with_parameters)).
    parametric: Option<Arc<Parametric>>,
}

/// Whether a run's `q(0)` and `v(0)` are still the file's (written as
/// expressions or solved from the constraints, they then follow the
/// parameters).
pub(crate) type Follows = Box<dyn Fn() -> (bool, bool) + Send + Sync>;

/// What a model file needs to be differentiated in its parameters: the
/// file, the run's parameter values and whether its initial data are still
/// the file's; the parametric compilation and that test are worked out on
/// first use (docs/theory.md §12.4).
struct Parametric {
    file: Arc<ModelFile>,
    overrides: Vec<(String, f64)>,
    initial_follows: Follows,
    follows: OnceLock<(bool, bool)>,
    model: OnceLock<Option<ParametricModel>>,
}

impl std::fmt::Debug for Parametric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parametric")
            .field("overrides", &self.overrides)
            .field("follows", &self.follows)
            .finish_non_exhaustive()
    }
}

/// What a file says besides its expressions' tapes: for messages.
#[derive(Debug, Clone, Default)]
pub struct FileText {
    /// `model.description`.
    pub description: String,
    /// `model.boundaries`, as written.
    pub boundaries: Vec<String>,
}

impl FileModel {
    /// Wrap a compiled model; `text` gives the description and the boundary
    /// pieces as written.
    pub fn new(compiled: Arc<CompiledModel>, text: Arc<FileText>) -> Self {
        Self {
            compiled,
            text,
            parametric: None,
        }
    }

    /// The same model, differentiable in the parameters of `file` (the
    /// file it was compiled from, with the parameter values `overrides`):
    /// its `…_with` hooks evaluate the file's expressions with the
    /// parameters as automatic-differentiation variables, and
    /// [`NamedDynSystem::parameter_seed`] follows parameters written as
    /// expressions and, while `follows()` says the run's `q(0)`/`v(0)` are
    /// still the file's, the initial data written as expressions or solved
    /// from the constraints.
    pub(crate) fn with_parameters(
        mut self,
        file: Arc<ModelFile>,
        overrides: Vec<(String, f64)>,
        follows: Follows,
    ) -> Self {
        self.parametric = Some(Arc::new(Parametric {
            file,
            overrides,
            initial_follows: follows,
            follows: OnceLock::new(),
            model: OnceLock::new(),
        }));
        self
    }

    /// The parametric compilation, compiled on first use; `None` without
    /// [`with_parameters`](Self::with_parameters) (or if it does not
    /// compile, which the plain compilation rules out).
    fn parametric(&self) -> Option<&ParametricModel> {
        let p = self.parametric.as_ref()?;
        p.model
            .get_or_init(|| p.file.compile_parametric(&p.overrides).ok())
            .as_ref()
    }

    /// The compiled expressions.
    pub fn compiled(&self) -> &CompiledModel {
        &self.compiled
    }
}

impl DynSystem for FileModel {
    fn coordinate_count(&self) -> usize {
        self.compiled.n()
    }

    fn constraint_count(&self) -> usize {
        self.compiled.m()
    }

    #[inline]
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.compiled.lagrangian_at(q, v, 0.0)
    }

    fn time_dependent(&self) -> bool {
        self.compiled.time_dependent()
    }

    /// `L(q, v) + Σ F_i(t) q_i` (the file's `[forces]`).
    #[inline]
    fn lagrangian_at<S: AdScalar>(&self, q: &[S], v: &[S], t: f64) -> S {
        self.compiled.lagrangian_at(q, v, t)
    }

    fn constraint_drive(&self, t: f64, g: &mut [f64], rate: &mut [f64]) -> bool {
        self.compiled.constraint_drive(t, g, rate)
    }

    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        self.compiled.lagrangian_terms()
    }

    #[inline]
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        self.compiled.lagrangian_term_at(e, q, v, 0.0)
    }

    #[inline]
    fn lagrangian_term_at<S: AdScalar>(&self, e: usize, q: &[S], v: &[S], t: f64) -> S {
        self.compiled.lagrangian_term_at(e, q, v, t)
    }

    fn constraint_stencils(&self) -> Option<&LagrangianTerms> {
        self.compiled.row_stencils()
    }

    #[inline]
    fn constraint_row<S: AdScalar>(&self, r: usize, q: &[S], a: &mut [S]) {
        self.compiled.constraint_row(r, q, a);
    }

    #[inline]
    fn constraint_forms<S: AdScalar>(&self, q: &[S], a: &mut [S]) {
        let n = self.compiled.n();
        for (k, x) in a.iter_mut().enumerate() {
            *x = self.compiled.constraint(k / n, k % n, q);
        }
    }

    fn boundary_count(&self) -> usize {
        self.compiled.boundary_count()
    }

    #[inline]
    fn boundary<S: AdScalar>(&self, j: usize, q: &[S]) -> S {
        self.compiled.boundary(j, q)
    }

    #[inline]
    fn hamiltonian<S: AdScalar>(&self, q: &[S], p: &[S]) -> Option<S> {
        self.compiled.hamiltonian(q, p)
    }

    fn parameter_count(&self) -> usize {
        self.parametric().map_or(0, |p| p.names().len())
    }

    fn parameter_names(&self) -> Vec<String> {
        self.parametric()
            .map_or_else(Vec::new, |p| p.names().to_vec())
    }

    fn parameter_values(&self) -> Vec<f64> {
        self.parametric()
            .map_or_else(Vec::new, |p| p.values().to_vec())
    }

    /// `L(q, v; θ)`, with the forces at `t = 0` as
    /// [`lagrangian`](DynSystem::lagrangian) has them.
    fn lagrangian_with<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S]) -> S {
        match self.parametric() {
            Some(p) => p.lagrangian_at(q, v, theta, 0.0),
            None => self.lagrangian(q, v),
        }
    }

    /// `L(q, v; θ) + Σ F_i(t; θ) q_i`: the forces' expressions are
    /// differentiated in the parameters too.
    fn lagrangian_with_at<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S], t: f64) -> S {
        match self.parametric() {
            Some(p) => p.lagrangian_at(q, v, theta, t),
            None => self.lagrangian_at(q, v, t),
        }
    }

    fn lagrangian_parameter_second(&self, q: &[f64], v: &[f64]) -> LagrangianParamSecond {
        match self.parametric() {
            // the reverse sweeps cover `L` alone, not the forces
            Some(p) if !self.compiled.time_dependent() => p.lagrangian_parameter_second(q, v),
            _ => diracvi_geometry::dynamic::lagrangian_parameter_second_forward(self, q, v),
        }
    }

    fn constraint_forms_with<S: AdScalar>(&self, q: &[S], theta: &[S], a: &mut [S]) {
        match self.parametric() {
            Some(p) => p.constraint_forms(q, theta, a),
            None => self.constraint_forms(q, a),
        }
    }

    fn boundary_with<S: AdScalar>(&self, j: usize, q: &[S], theta: &[S]) -> S {
        match self.parametric() {
            Some(p) => p.boundary(j, q, theta),
            None => self.boundary(j, q),
        }
    }

    fn hamiltonian_with<S: AdScalar>(&self, q: &[S], p: &[S], theta: &[S]) -> Option<S> {
        match self.parametric() {
            Some(model) => model.hamiltonian(q, p, theta),
            None => self.hamiltonian(q, p),
        }
    }
}

impl NamedDynSystem for FileModel {
    fn name(&self) -> &str {
        self.compiled.name()
    }
    fn description(&self) -> &str {
        &self.text.description
    }
    fn coordinates(&self) -> Vec<String> {
        self.compiled.coordinates().to_vec()
    }
    fn piece_name(&self, j: usize) -> String {
        match self.text.boundaries.get(j) {
            Some(g) => format!("model.boundaries[{j}]: {g} >= 0"),
            None => format!("model.boundaries[{j}]"),
        }
    }
    fn constraint_name(&self, a: usize) -> String {
        crate::file_model::constraint_row_name(&self.compiled, a)
    }
    fn invariant_names(&self) -> Vec<String> {
        self.compiled.invariant_names().map(String::from).collect()
    }
    fn invariants(&self, q: &[f64], p: &[f64], out: &mut [f64]) {
        file_invariants(self, q, p, out);
    }
    fn parameter_seed(
        &self,
        name: &str,
        q0: &DVector<f64>,
        v0: &DVector<f64>,
    ) -> Result<ParameterSeed, ParameterSeedError> {
        let (Some(source), Some(model)) = (self.parametric.as_ref(), self.parametric()) else {
            return Err(ParameterSeedError::NotDifferentiable);
        };
        if model.drives_follow_parameters() {
            return Err(ParameterSeedError::Undefined {
                reason: "a drive of model.drives depends on a parameter: the drives are not \
                         differentiated in the parameters (--jacobian is available; [forces] are)"
                    .to_owned(),
            });
        }
        let direction = model
            .direction(name)
            .ok_or_else(|| ParameterSeedError::Unknown {
                valid: model.names().to_vec(),
            })?;
        let (q_follows, v_follows) = *source.follows.get_or_init(|| (source.initial_follows)());
        let (dq, dv) = model.initial_direction(
            &direction,
            q0.as_slice(),
            v0.as_slice(),
            q_follows,
            v_follows,
        );
        Ok(ParameterSeed {
            direction,
            q0: dq,
            v0: dv,
        })
    }
}

/// A model file's `[invariants]` (expressions of `q` and `v`) at the state
/// `(q, p)`: the velocity of the momentum is solved from the constrained
/// inverse Legendre map `∂L/∂v(q, v) = p + A(q)ᵀμ`, `A(q) v = 0` (Newton
/// from `v = 0`, exact in one iteration for `L` quadratic in `v`; the
/// reaction `A(q)ᵀμ` absorbs the part of `p` the constraints leave
/// undetermined), and each expression is evaluated at `(q, v)`. `NaN` where
/// the solve fails (a Lagrangian singular on `ker A(q)`).
pub(crate) fn file_invariants(model: &FileModel, q: &[f64], p: &[f64], out: &mut [f64]) {
    let compiled = model.compiled();
    match constrained_velocity(model, q, p) {
        Some(v) => {
            for (i, x) in out.iter_mut().enumerate().take(compiled.invariant_count()) {
                *x = compiled.invariant(i, q, v.as_slice());
            }
        }
        None => out.fill(f64::NAN),
    }
}

/// The velocity `v ∈ ker A(q)` with `∂L/∂v(q, v) = p + A(q)ᵀμ` for some
/// `μ`, by Newton's method on the KKT system
/// `[[∂²L/∂v², −Aᵀ], [A, 0]]`; converged when the correction is below
/// `1e-14 max(1, |v|, |μ|)`; `None` when it does not in 30 iterations.
fn constrained_velocity(model: &FileModel, q: &[f64], p: &[f64]) -> Option<DVector<f64>> {
    let n = model.coordinate_count();
    let m = model.constraint_count();
    if q.len() != n || p.len() != n {
        return None;
    }
    let mut a = vec![0.0; m * n];
    if m > 0 {
        model.constraint_forms(q, &mut a);
    }
    let qd = DVector::from_column_slice(q);
    let mut x = DVector::<f64>::zeros(n + m);
    for _ in 0..30 {
        let v = x.rows(0, n).clone_owned();
        let (pv, hess) = diracvi_geometry::dynamic::legendre_jet_dyn(model, &qd, &v);
        let mut kkt = nalgebra::DMatrix::<f64>::zeros(n + m, n + m);
        kkt.view_mut((0, 0), (n, n)).copy_from(&hess);
        let mut r = DVector::<f64>::zeros(n + m);
        for i in 0..n {
            r[i] = pv[i] - p[i];
        }
        for row in 0..m {
            for col in 0..n {
                let entry = a[row * n + col];
                kkt[(col, n + row)] = -entry;
                kkt[(n + row, col)] = entry;
                r[col] -= entry * x[n + row];
                r[n + row] += entry * x[col];
            }
        }
        let dx = kkt.lu().solve(&r)?;
        if !dx.iter().all(|d| d.is_finite()) {
            return None;
        }
        x -= &dx;
        if dx.amax() <= 1e-14 * x.amax().max(1.0) {
            return Some(x.rows(0, n).clone_owned());
        }
    }
    None
}

/// Constraint row `a` of a file model as its expression,
/// `model.constraints[a]: (-sin(theta))*x_dot + (cos(theta))*y_dot = 0`
/// (entries that are a constant zero left out; simple entries without
/// parentheses).
pub(crate) fn constraint_row_name(compiled: &CompiledModel, a: usize) -> String {
    let Some(row) = compiled.constraint_exprs().get(a) else {
        return format!("model.constraints[{a}]");
    };
    let terms: Vec<String> = row
        .iter()
        .zip(compiled.coordinates())
        .filter(|(e, _)| e.constant_value() != Some(0.0))
        .map(|(e, c)| {
            let text = e.source().trim();
            let simple = text
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '.');
            match e.constant_value() {
                Some(1.0) => format!("{c}_dot"),
                _ if simple => format!("{text}*{c}_dot"),
                _ => format!("({text})*{c}_dot"),
            }
        })
        .collect();
    let sum = if terms.is_empty() {
        "0".to_owned()
    } else {
        terms.join(" + ")
    };
    format!("model.constraints[{a}]: {sum} = 0")
}
