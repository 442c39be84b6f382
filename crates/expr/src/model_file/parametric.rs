//! A model file compiled with its parameters as variables, for derivatives
//! of a run with respect to them (docs/theory.md §12.4): `L(q, v; θ)`,
//! `A(q; θ)`, `g_j(q; θ)`, `H(q, p; θ)`, the parameters written as
//! expressions as functions of the others, and the initial data as functions
//! of the parameters.
//!
//! Slots: the Lagrangian over `[q.., v.., θ..]`, constraint entries and
//! boundaries over `[q.., θ..]`, the Hamiltonian over `[q.., p.., θ..]`,
//! parameter expressions and initial data over `[θ..]`, with `θ` every
//! parameter of the file in file order.

use super::error::{ModelFileError, ModelFileErrorKind as K};
use super::{InitialValue, ModelExpressions, ModelFile};
use crate::expr::{Expr, Scope, ScopeError};
use diracvi_geometry::AdScalar;
use diracvi_geometry::dynamic::LagrangianParamSecond;
use nalgebra::{DMatrix, DVector};
use num_dual::Dual64;

type Result<T> = std::result::Result<T, ModelFileError>;

/// An initial entry over the parameters.
#[derive(Clone, Debug)]
enum Entry {
    /// A number: does not move with `θ`.
    Number,
    /// An expression of the parameters.
    Expression(Expr),
    /// A velocity solved from `A(q0; θ) v0 = 0`.
    Solve,
}

/// A model file with every parameter an automatic-differentiation variable
/// ([`ModelFile::compile_parametric`]).
#[derive(Clone, Debug)]
pub struct ParametricModel {
    n: usize,
    names: Vec<String>,
    values: Vec<f64>,
    lagrangian: Expr,
    constraints: Vec<Vec<Expr>>,
    boundaries: Vec<Expr>,
    hamiltonian: Option<Expr>,
    /// Parameters written as expressions and not overridden: (index, `θ_i(θ)`).
    derived: Vec<(usize, Expr)>,
    initial_q: Vec<Entry>,
    initial_v: Vec<Entry>,
    /// `[forces]` as (coordinate, `F_i(t; θ)` over `[t, θ..]`).
    forces: Vec<(usize, Expr)>,
    /// Whether a drive `g_r(t)` of `model.drives` depends on a parameter.
    drives_follow_parameters: bool,
}

/// `first`, `second` and `theta` in one buffer.
fn joined<S: AdScalar>(first: &[S], second: &[S], theta: &[S]) -> Vec<S> {
    let mut out = Vec::with_capacity(first.len() + second.len() + theta.len());
    out.extend_from_slice(first);
    out.extend_from_slice(second);
    out.extend_from_slice(theta);
    out
}

impl ModelFile {
    /// Compile the file's expressions with its parameters as variables,
    /// at the values after `overrides` (as [`compile`](Self::compile)); a
    /// parameter written as an expression stays a function of the others
    /// unless it is overridden.
    ///
    /// # Errors
    /// As [`compile`](Self::compile) for the overrides and expressions.
    pub fn compile_parametric(&self, overrides: &[(String, f64)]) -> Result<ParametricModel> {
        let values = self.parameter_values(overrides)?;
        let names: Vec<String> = values.iter().map(|(n, _)| n.clone()).collect();
        let scope_error = |e: ScopeError| self.error("model.coordinates".into(), K::Scope(e));
        let scope = |second: &[String]| -> Result<Scope> {
            let mut scope =
                Scope::with_variables(self.coordinates.iter().chain(second).chain(&names))
                    .map_err(scope_error)?;
            for (name, text) in &self.definitions {
                scope.add_definition(name, text).map_err(scope_error)?;
            }
            Ok(scope)
        };
        let compile = |key: String, text: &str, scope: &Scope| {
            Expr::compile(text, scope).map_err(|e| self.expression_error(key, text, e))
        };
        let ModelExpressions {
            lagrangian,
            constraints,
            boundaries,
            hamiltonian,
            ..
        } = self.compile_model_expressions(scope)?;
        // parameters and initial data over θ only (no definitions: they may
        // use coordinates)
        let theta_scope = Scope::with_variables(&names).map_err(scope_error)?;
        let mut derived = Vec::new();
        for (name, text) in &self.parameter_expressions {
            if overrides.iter().any(|(n, _)| n == name) {
                continue;
            }
            if let Some(i) = names.iter().position(|n| n == name) {
                derived.push((
                    i,
                    compile(format!("parameters.{name}"), text, &theta_scope)?,
                ));
            }
        }
        let entry = |key: String, value: &InitialValue| -> Result<Entry> {
            Ok(match value {
                InitialValue::Number(_) => Entry::Number,
                InitialValue::Expression(text) => {
                    Entry::Expression(compile(key, text, &theta_scope)?)
                }
                InitialValue::Solve => Entry::Solve,
            })
        };
        let (mut initial_q, mut initial_v) = (Vec::new(), Vec::new());
        if let Some(initial) = &self.initial {
            for (i, e) in initial.q.iter().enumerate() {
                initial_q.push(entry(format!("initial.q[{i}]"), e)?);
            }
            for (i, e) in initial.v.iter().enumerate() {
                initial_v.push(entry(format!("initial.v[{i}]"), e)?);
            }
        }
        let (forces, drives) = self.compile_forcing_over(&names, &[])?;
        let drives_follow_parameters = drives
            .iter()
            .any(|g| (1..=names.len()).any(|slot| g.reads_variable(slot)));
        Ok(ParametricModel {
            forces,
            drives_follow_parameters,
            n: self.n(),
            names,
            values: values.iter().map(|&(_, v)| v).collect(),
            lagrangian,
            constraints,
            boundaries,
            hamiltonian,
            derived,
            initial_q,
            initial_v,
        })
    }
}

impl ParametricModel {
    /// The parameter names `θ`, in file order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The parameter values (file values with overrides applied).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// `L(q, v; θ)` (without the forces: see
    /// [`lagrangian_at`](Self::lagrangian_at)).
    pub fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S]) -> S {
        self.lagrangian.eval(&joined(q, v, theta))
    }

    /// `L(q, v; θ) + Σ_i F_i(t; θ) q_i`, the file's `[forces]` with their
    /// parameters as variables ([`CompiledModel::lagrangian_at`](super::CompiledModel::lagrangian_at)
    /// at `θ`).
    pub fn lagrangian_at<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S], t: f64) -> S {
        let l = self.lagrangian(q, v, theta);
        if self.forces.is_empty() {
            return l;
        }
        // `t` as a scalar whose derivative parts are present (`θ₀ · 0 + t`).
        let time = [theta.first().map_or(S::from(t), |&x| x * 0.0 + t)];
        self.forces
            .iter()
            .fold(l, |acc, (i, f)| acc + q[*i] * f.eval_split(&time, theta))
    }

    /// Whether a drive of `model.drives` depends on a parameter: the
    /// derivatives of a run in the parameters then need the drive's, which
    /// are not taken.
    pub fn drives_follow_parameters(&self) -> bool {
        self.drives_follow_parameters
    }

    /// `∂L/∂θ`, `∂²L/∂θ∂q` and `∂²L/∂θ∂v` at `(q, v)` and the parameter
    /// values, by reverse mode over the Lagrangian's tape with dual values
    /// (reverse over forward): `2n` sweeps, one per direction of `(q, v)`,
    /// each giving the gradient in every slot at once, so the cost does not
    /// grow with the number of parameters (docs/theory.md §12.5).
    pub fn lagrangian_parameter_second(&self, q: &[f64], v: &[f64]) -> LagrangianParamSecond {
        let (n, p) = (self.n, self.values.len());
        let mut out = LagrangianParamSecond {
            theta: DVector::zeros(p),
            theta_q: DMatrix::zeros(p, n),
            theta_v: DMatrix::zeros(p, n),
        };
        let mut vars: Vec<Dual64> = q
            .iter()
            .chain(v)
            .chain(&self.values)
            .map(|&x| Dual64::from(x))
            .collect();
        for j in 0..2 * n {
            vars[j].eps = 1.0;
            let (_, bars) = self.lagrangian.eval_gradient(&vars);
            vars[j].eps = 0.0;
            for t in 0..p {
                let b = bars[2 * n + t];
                out.theta[t] = b.re;
                if j < n {
                    out.theta_q[(t, j)] = b.eps;
                } else {
                    out.theta_v[(t, j - n)] = b.eps;
                }
            }
        }
        if n == 0 {
            let (_, bars) = self.lagrangian.eval_gradient(&vars);
            for (t, b) in bars.iter().enumerate() {
                out.theta[t] = b.re;
            }
        }
        out
    }

    /// `A(q; θ)`, row-major (`m × n`) into `a`.
    pub fn constraint_forms<S: AdScalar>(&self, q: &[S], theta: &[S], a: &mut [S]) {
        let x = joined(q, &[], theta);
        for (r, row) in self.constraints.iter().enumerate() {
            for (c, e) in row.iter().enumerate() {
                a[r * self.n + c] = e.eval(&x);
            }
        }
    }

    /// `g_j(q; θ)`.
    pub fn boundary<S: AdScalar>(&self, j: usize, q: &[S], theta: &[S]) -> S {
        self.boundaries[j].eval(&joined(q, &[], theta))
    }

    /// `H(q, p; θ)`, or `None` without a Hamiltonian.
    pub fn hamiltonian<S: AdScalar>(&self, q: &[S], p: &[S], theta: &[S]) -> Option<S> {
        Some(self.hamiltonian.as_ref()?.eval(&joined(q, p, theta)))
    }

    /// The change of every parameter value (`P` entries) per unit change of
    /// parameter `name` set on its own (as `--set name=…` sets it): `1` for
    /// `name`, the total derivative for the parameters written as
    /// expressions of it (directly or through others) and not overridden,
    /// `0` for the others. `None` for an unknown name.
    pub fn direction(&self, name: &str) -> Option<Vec<f64>> {
        let k = self.names.iter().position(|n| n == name)?;
        let mut d = vec![0.0; self.names.len()];
        d[k] = 1.0;
        // the parameters form an acyclic graph: P passes reach a fixed point
        for _ in 0..self.names.len() {
            let theta = self.seeded(&d);
            let mut changed = false;
            for (i, e) in &self.derived {
                if *i == k {
                    continue;
                }
                let value = e.eval(&theta).eps;
                if value.to_bits() != d[*i].to_bits() {
                    d[*i] = value;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        Some(d)
    }

    /// `θ + ε d` as duals.
    fn seeded(&self, d: &[f64]) -> Vec<Dual64> {
        self.values
            .iter()
            .zip(d)
            .map(|(&v, &e)| Dual64::new(v, e))
            .collect()
    }

    /// The change of the initial data `(q(0), v(0))` along the parameter
    /// change `d` (from [`direction`](Self::direction)): the entries written
    /// as expressions of the parameters move, numbers do not, and the
    /// velocities marked `"solve"` follow from `A(q0; θ) v0 = 0` (least
    /// squares as when they were solved). `q_follows`/`v_follows`: whether
    /// the run's `q(0)`/`v(0)` are still the file's (not set with
    /// `--set q=…`, `v=…`); data that do not follow the file do not move.
    /// `q0`, `v0` are the run's initial data.
    pub fn initial_direction(
        &self,
        d: &[f64],
        q0: &[f64],
        v0: &[f64],
        q_follows: bool,
        v_follows: bool,
    ) -> (Vec<f64>, Vec<f64>) {
        let n = self.n;
        let theta = self.seeded(d);
        let moved = |entries: &[Entry], follows: bool| -> Vec<f64> {
            (0..n)
                .map(|i| match entries.get(i) {
                    Some(Entry::Expression(e)) if follows => e.eval(&theta).eps,
                    _ => 0.0,
                })
                .collect()
        };
        let dq = moved(&self.initial_q, q_follows);
        let mut dv = moved(&self.initial_v, v_follows);
        let solved: Vec<usize> = (0..n)
            .filter(|&i| matches!(self.initial_v.get(i), Some(Entry::Solve)))
            .collect();
        let m = self.constraints.len();
        if v_follows && !solved.is_empty() && m > 0 {
            // A(q0; θ) along the change, as duals
            let qd: Vec<Dual64> = q0
                .iter()
                .zip(&dq)
                .map(|(&x, &e)| Dual64::new(x, e))
                .collect();
            let mut a = vec![Dual64::from(0.0); m * n];
            self.constraint_forms(&qd, &theta, &mut a);
            let re = DMatrix::from_fn(m, n, |r, c| a[r * n + c].re);
            let eps = DMatrix::from_fn(m, n, |r, c| a[r * n + c].eps);
            let k = solved.len();
            let a_s = DMatrix::from_fn(m, k, |r, j| re[(r, solved[j])]);
            let da_s = DMatrix::from_fn(m, k, |r, j| eps[(r, solved[j])]);
            let x = DVector::from_fn(k, |j, _| v0[solved[j]]);
            // rhs = −A_F v_F and its change
            let free: Vec<usize> = (0..n).filter(|c| !solved.contains(c)).collect();
            let rhs = DVector::from_fn(m, |r, _| {
                -free.iter().map(|&c| re[(r, c)] * v0[c]).sum::<f64>()
            });
            let drhs = DVector::from_fn(m, |r, _| {
                -free
                    .iter()
                    .map(|&c| eps[(r, c)] * v0[c] + re[(r, c)] * dv[c])
                    .sum::<f64>()
            });
            // x = argmin |A_S x − rhs|: (A_SᵀA_S) dx = dA_Sᵀ(rhs − A_S x) + A_Sᵀ(drhs − dA_S x)
            let normal = a_s.transpose() * &a_s;
            let right =
                da_s.transpose() * (&rhs - &a_s * &x) + a_s.transpose() * (drhs - &da_s * &x);
            if let Some(dx) = normal.lu().solve(&right) {
                for (j, &i) in solved.iter().enumerate() {
                    dv[i] = dx[j];
                }
            } else {
                for &i in &solved {
                    dv[i] = f64::NAN;
                }
            }
        }
        (dq, dv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
[model]
name = "t"
coordinates = ["x", "y"]
lagrangian = "0.5*m*(x_dot^2 + y_dot^2) - m*g*y"
constraints = [["k", "-1"]]
boundaries = ["y - c"]
[parameters]
m = 2.0
g = 9.8
k = 0.5
c = "-m/4"
[initial]
q = ["g/10", 1.0]
v = [1.0, "solve"]
"#;

    #[test]
    fn parametric_model_agrees_and_differentiates() {
        let file = ModelFile::from_toml_str(FILE, "t.toml").unwrap();
        let p = file.compile_parametric(&[]).unwrap();
        let compiled = file.compile(&[]).unwrap();
        assert_eq!(p.names(), ["m", "g", "k", "c"]);
        let theta = p.values().to_vec();
        let (q, v) = ([0.3, 0.7], [-0.2, 1.1]);
        let a = p.lagrangian(&q, &v, &theta);
        assert!((a - compiled.lagrangian(&q, &v)).abs() < 1e-14);
        assert!((p.boundary(0, &q, &theta) - compiled.boundary(0, &q)).abs() < 1e-15);
        // c = −m/4 follows m, not g
        assert_eq!(p.direction("m").unwrap(), vec![1.0, 0.0, 0.0, -0.25]);
        assert_eq!(p.direction("g").unwrap(), vec![0.0, 1.0, 0.0, 0.0]);
        assert_eq!(p.direction("c").unwrap(), vec![0.0, 0.0, 0.0, 1.0]);
        assert!(p.direction("nope").is_none());
        // overridden: c no longer follows m
        let p2 = file.compile_parametric(&[("c".to_owned(), -1.0)]).unwrap();
        assert_eq!(p2.direction("m").unwrap(), vec![1.0, 0.0, 0.0, 0.0]);
        // q0 = (g/10, 1), v0 = (1, k·1): dq/dg = (0.1, 0), dv/dk = (0, 1)
        let init = file.initial_values(&compiled, None).unwrap();
        let (dq, dv) =
            p.initial_direction(&p.direction("g").unwrap(), &init.q, &init.v, true, true);
        assert!((dq[0] - 0.1).abs() < 1e-15 && dq[1] == 0.0 && dv == vec![0.0, 0.0]);
        let (dq, dv) =
            p.initial_direction(&p.direction("k").unwrap(), &init.q, &init.v, true, true);
        assert_eq!(dq, vec![0.0, 0.0]);
        assert!(dv[0] == 0.0 && (dv[1] - 1.0).abs() < 1e-14, "{dv:?}");
        // data set on the command line do not move
        let (dq, _) =
            p.initial_direction(&p.direction("g").unwrap(), &init.q, &init.v, false, true);
        assert_eq!(dq, vec![0.0, 0.0]);
    }
}
