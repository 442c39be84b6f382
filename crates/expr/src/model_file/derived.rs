//! What a model file computes from what it says: parameters written as
//! expressions, initial data (expressions, velocities solved from the
//! constraints), and the check of a given Hamiltonian against the Legendre
//! transform of the Lagrangian.

use super::error::{ModelFileError, ModelFileErrorKind as K};
use super::{CompiledModel, InitialValue, InitialValues, ModelFile, Position, position};
use crate::expr::{Expr, ExprErrorKind, Scope};
use nalgebra::{DMatrix, DVector};
use num_dual::Dual64;
use std::collections::{HashMap, HashSet};

/// Relative tolerance of the Legendre check of a given Hamiltonian:
/// `|H(q, p) − (p·v − L(q, v))| ≤ LEGENDRE_TOLERANCE · (1 + |p·v| + |L(q, v)|)`
/// with `p = ∂L/∂v(q, v)`.
pub const LEGENDRE_TOLERANCE: f64 = 1e-9;

/// Columns of `A(q0)` selected for the velocities to solve for are taken as
/// singular when their smallest singular value is below this fraction of
/// the largest singular value of the whole `A(q0)`.
const SINGULAR_RATIO: f64 = 1e-10;

type Result<T> = std::result::Result<T, ModelFileError>;

impl ModelFile {
    /// The position in the file of the value of `key`, when it is a string
    /// read from there.
    fn value_position(&self, key: &str) -> Option<Position> {
        let o = self.origin.as_ref()?;
        let (span, _) = o.strings.get(key)?;
        Some(Position::of_offset(
            &o.source,
            position::string_char_offset(&o.source, span.clone(), 1),
        ))
    }

    fn located(&self, key: &str, kind: K) -> ModelFileError {
        ModelFileError::new(
            self.path.clone(),
            key.to_owned(),
            self.value_position(key),
            kind,
        )
    }

    /// The values of every parameter, in file order: the file's numbers,
    /// changed by `overrides` (name, value; later entries win), then the
    /// parameters written as expressions that are not overridden, evaluated
    /// from the others in the order their dependencies need (an expression
    /// may use any other parameter and `pi`).
    ///
    /// # Errors
    /// An override naming no parameter or not finite; a parameter expression
    /// that does not compile or evaluate (an unknown name, a value that is
    /// not finite); parameter expressions that use each other in a cycle
    /// ([`ModelFileErrorKind::ParameterCycle`](K::ParameterCycle)).
    pub fn parameter_values(&self, overrides: &[(String, f64)]) -> Result<Vec<(String, f64)>> {
        // names to positions: a system file has parameters by the thousand
        let derived: HashSet<&str> = self
            .parameter_expressions
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        let mut values: Vec<(String, Option<f64>)> = self
            .parameters
            .iter()
            .map(|(name, value)| {
                let derived = derived.contains(name.as_str());
                (name.clone(), (!derived).then_some(*value))
            })
            .collect();
        let mut at: HashMap<&str, usize> = HashMap::with_capacity(self.parameters.len());
        for (i, (n, _)) in self.parameters.iter().enumerate() {
            at.entry(n.as_str()).or_insert(i);
        }
        for (name, value) in overrides {
            let key = format!("parameters.{name}");
            let Some(slot) = at.get(name.as_str()).map(|&i| &mut values[i]) else {
                return Err(self.error(
                    key,
                    K::UnknownParameter {
                        name: name.clone(),
                        known: self.parameters.iter().map(|(n, _)| n.clone()).collect(),
                    },
                ));
            };
            if !value.is_finite() {
                return Err(self.error(key, K::NonFinite { value: *value }));
            }
            slot.1 = Some(*value);
        }
        let text_of = |name: &str| {
            self.parameter_expressions
                .iter()
                .find(|(n, _)| n == name)
                .map_or("", |(_, t)| t.as_str())
        };
        // passes until every expression is evaluated or none can be
        let mut blocked: Vec<(String, String)> = Vec::new();
        loop {
            let mut progressed = false;
            blocked.clear();
            for i in 0..values.len() {
                if values[i].1.is_some() {
                    continue;
                }
                let name = values[i].0.clone();
                let text = text_of(&name);
                let mut scope = Scope::new();
                for (n, v) in &values {
                    if let Some(v) = v {
                        scope
                            .add_parameter(n, *v)
                            .map_err(|e| self.error(format!("parameters.{n}"), K::Scope(e)))?;
                    }
                }
                let key = format!("parameters.{name}");
                match Expr::compile(text, &scope) {
                    Ok(e) => {
                        // no variables: the expression folds to its value
                        let value = e.constant_value().unwrap_or(f64::NAN);
                        if !value.is_finite() {
                            return Err(self.located(&key, K::NonFinite { value }));
                        }
                        values[i].1 = Some(value);
                        progressed = true;
                    }
                    Err(e) => match &e.kind {
                        ExprErrorKind::UnknownName { name: used, .. }
                            if values.iter().any(|(n, v)| n == used && v.is_none()) =>
                        {
                            blocked.push((name, used.clone()));
                        }
                        _ => return Err(self.expression_error(key, text, e)),
                    },
                }
            }
            if !progressed {
                break;
            }
        }
        if let Some((first, _)) = blocked.first() {
            // follow "waits for" from the first blocked parameter to a repeat
            let mut chain = vec![first.clone()];
            loop {
                let last = chain.last().map_or("", String::as_str);
                let Some((_, next)) = blocked.iter().find(|(n, _)| n == last) else {
                    break;
                };
                if let Some(start) = chain.iter().position(|c| c == next) {
                    let mut cycle = chain.split_off(start);
                    cycle.push(next.clone());
                    let key = format!("parameters.{}", cycle[0]);
                    return Err(self.located(&key, K::ParameterCycle { cycle }));
                }
                chain.push(next.clone());
            }
            // every blocked parameter waits for another one: unreachable, but typed
            let key = format!("parameters.{first}");
            return Err(self.located(&key, K::ParameterCycle { cycle: chain }));
        }
        Ok(values
            .into_iter()
            .map(|(n, v)| (n, v.unwrap_or(f64::NAN)))
            .collect())
    }

    /// The initial data as numbers, with the parameter values of `compiled`
    /// (this file compiled with [`compile`](Self::compile)): expressions
    /// evaluated, and the velocities marked `"solve"` solved from
    /// `A(q0) v0 = 0` given the others (least squares over the selected
    /// columns of `A(q0)`, which must have full column rank). `q`, when
    /// given, replaces the file's `initial.q`. Without an `[initial]`
    /// section: zeros.
    ///
    /// # Errors
    /// An expression that does not compile or evaluate to a finite number
    /// (key `initial.q[i]` or `initial.v[i]`);
    /// [`ModelFileErrorKind::VelocitiesNotDetermined`](K::VelocitiesNotDetermined) when more velocities
    /// are marked than there are constraint rows, or when their columns of
    /// `A(q0)` are singular.
    pub fn initial_values(
        &self,
        compiled: &CompiledModel,
        q: Option<&[f64]>,
    ) -> Result<InitialValues> {
        let n = self.n();
        let Some(initial) = &self.initial else {
            return Ok(InitialValues {
                q: q.map_or_else(|| vec![0.0; n], <[f64]>::to_vec),
                v: vec![0.0; n],
                solved: Vec::new(),
            });
        };
        let mut scope = Scope::new();
        for (name, value) in compiled.parameters() {
            scope
                .add_parameter(name, *value)
                .map_err(|e| self.error(format!("parameters.{name}"), K::Scope(e)))?;
        }
        let number = |key: String, entry: &InitialValue| -> Result<f64> {
            let value = match entry {
                InitialValue::Number(x) => *x,
                InitialValue::Expression(text) => Expr::compile(text, &scope)
                    .map_err(|e| self.expression_error(key.clone(), text, e))?
                    .constant_value()
                    .unwrap_or(f64::NAN),
                InitialValue::Solve => 0.0,
            };
            if value.is_finite() {
                Ok(value)
            } else {
                Err(self.located(&key, K::NonFinite { value }))
            }
        };
        let q = match q {
            Some(q) => q.to_vec(),
            None => (initial.q.iter().enumerate())
                .map(|(i, e)| number(format!("initial.q[{i}]"), e))
                .collect::<Result<Vec<_>>>()?,
        };
        let mut v = (initial.v.iter().enumerate())
            .map(|(i, e)| number(format!("initial.v[{i}]"), e))
            .collect::<Result<Vec<_>>>()?;
        let solved = initial.solved();
        if !solved.is_empty() {
            self.solve_velocities(compiled, &q, &mut v, &solved)?;
        }
        Ok(InitialValues { q, v, solved })
    }

    /// Solve `A_S(q) v_S = −A_F(q) v_F − ġ(0)` for the velocities `solved`
    /// (`S`) given the others (`F`) and the drives' rates at `t = 0`, by
    /// least squares over the columns `S`.
    fn solve_velocities(
        &self,
        compiled: &CompiledModel,
        q: &[f64],
        v: &mut [f64],
        solved: &[usize],
    ) -> Result<()> {
        let (n, m, k) = (self.n(), compiled.m(), solved.len());
        let names: Vec<String> = solved
            .iter()
            .map(|&i| format!("{}_dot", self.coordinates[i]))
            .collect();
        let refuse = |reason: String| {
            self.error(
                "initial.v".into(),
                K::VelocitiesNotDetermined {
                    names: names.clone(),
                    q: q.to_vec(),
                    reason,
                },
            )
        };
        if k > m {
            return Err(refuse(format!(
                "{k} velocit{} marked \"solve\" but the model has {m} constraint row{}, so A(q0) v0 = 0 cannot determine them",
                if k == 1 { "y is" } else { "ies are" },
                if m == 1 { "" } else { "s" }
            )));
        }
        let a = DMatrix::from_fn(m, n, |r, c| compiled.constraint(r, c, q));
        let a_s = DMatrix::from_fn(m, k, |r, j| a[(r, solved[j])]);
        let (mut g, mut rate) = (vec![0.0; m], vec![0.0; m]);
        compiled.constraint_drive(0.0, &mut g, &mut rate);
        let rhs = DVector::from_fn(m, |r, _| {
            -(0..n)
                .filter(|c| !solved.contains(c))
                .map(|c| a[(r, c)] * v[c])
                .sum::<f64>()
                - rate[r]
        });
        if !a_s.iter().chain(rhs.iter()).all(|x| x.is_finite()) {
            return Err(refuse(
                "A(q0) or the given velocities are not finite".into(),
            ));
        }
        let reference = a.clone().singular_values().max();
        let svd = a_s.svd(true, true);
        let smallest = svd.singular_values.min();
        if reference.is_nan() || reference <= 0.0 || smallest <= SINGULAR_RATIO * reference {
            return Err(refuse(format!(
                "their columns of A(q0) are singular (smallest singular value {smallest:e}, against {reference:e} for the whole A(q0)): choose other velocities to solve for"
            )));
        }
        let x = svd
            .solve(&rhs, 0.0)
            .map_err(|e| refuse(format!("the least-squares solve failed: {e}")))?;
        for (j, &i) in solved.iter().enumerate() {
            v[i] = x[j];
        }
        Ok(())
    }

    /// Check the Hamiltonian of `compiled` against the Legendre transform
    /// of its Lagrangian: at `(q0, v0)` and two points near it, with
    /// `p = ∂L/∂v(q, v)` (automatic differentiation),
    /// `|H(q, p) − (p·v − L)| ≤ LEGENDRE_TOLERANCE · (1 + |p·v| + |L|)`.
    /// Points where `L` or `H` is not finite (outside their domain) are
    /// skipped.
    pub(super) fn check_hamiltonian(
        &self,
        compiled: &CompiledModel,
        q0: &[f64],
        v0: &[f64],
    ) -> Result<()> {
        let n = self.n();
        let vscale = v0.iter().fold(1.0_f64, |a, x| a.max(x.abs()));
        let sign = |i: usize| if i.is_multiple_of(2) { 1.0 } else { -1.0 };
        let dv: Vec<f64> = (0..n)
            .map(|i| sign(i) * (0.5 + 0.25 * i as f64) * vscale)
            .collect();
        let points = [
            (q0.to_vec(), v0.to_vec()),
            (q0.to_vec(), (0..n).map(|i| v0[i] + dv[i]).collect()),
            (
                (0..n)
                    .map(|i| q0[i] - sign(i) * 0.05 * (1.0 + 0.5 * i as f64))
                    .collect(),
                (0..n).map(|i| v0[i] - 0.5 * dv[i]).collect::<Vec<_>>(),
            ),
        ];
        for (q, v) in points {
            let qd: Vec<Dual64> = q.iter().map(|&x| Dual64::from(x)).collect();
            let p: Vec<f64> = (0..n)
                .map(|i| {
                    let vd: Vec<Dual64> = (0..n)
                        .map(|j| {
                            let x = Dual64::from(v[j]);
                            if i == j { x.derivative() } else { x }
                        })
                        .collect();
                    compiled.lagrangian(&qd, &vd).eps
                })
                .collect();
            let l = compiled.lagrangian(&q, &v);
            let Some(h) = compiled.hamiltonian(&q, &p) else {
                return Ok(());
            };
            let pv: f64 = p.iter().zip(&v).map(|(a, b)| a * b).sum();
            let legendre = pv - l;
            if !(h.is_finite() && legendre.is_finite() && p.iter().all(|x| x.is_finite())) {
                continue;
            }
            if (h - legendre).abs() > LEGENDRE_TOLERANCE * (1.0 + pv.abs() + l.abs()) {
                return Err(self.located(
                    "model.hamiltonian",
                    K::HamiltonianMismatch {
                        q,
                        v,
                        p,
                        hamiltonian: h,
                        legendre,
                    },
                ));
            }
        }
        Ok(())
    }
}
