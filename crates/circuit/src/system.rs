//! A circuit as a [`DynSystem`]: the same branch terms and Kirchhoff rows,
//! seen by the run-time-sized core of every model (docs/theory.md §8.7,
//! §11), which composes its symmetric step to orders 4 and 6.
//!
//! The run-time core's systems are autonomous (`L(q, v)`, `A(q) v = 0`), so
//! a circuit has this form when its sources do not depend on time: no
//! current source (its prescribed charge `∫ I dt` moves the constraint,
//! `A v + I = 0`) and only DC voltage sources (`−E q`, a constant force).
//! Time-dependent sources run on the sparse stepper
//! ([`Circuit::stepper`]), at order 2.

use crate::circuit::Circuit;
use crate::element::CircuitElement;
use crate::error::CircuitError;
use crate::netlist::{Kind, Value, Waveform};
use diracvi_discrete_dirac::sparse::Element;
use diracvi_geometry::AdScalar;
use diracvi_geometry::dynamic::{DynSystem, LagrangianTerms};

/// A circuit without time-dependent sources as a [`DynSystem`]: coordinates
/// the branch charges, the Lagrangian the sum of the branch terms (one
/// [`LagrangianTerms`] term per branch), the constraint forms the Kirchhoff
/// rows, declared on the branches each names (so the step Jacobian is
/// sparse, and stored so); no Hamiltonian (the Lagrangian is degenerate). Built by [`Circuit::dyn_system`].
#[derive(Debug, Clone)]
pub struct CircuitSystem {
    name: String,
    coordinate_names: Vec<String>,
    /// Branch term of each coordinate, in coordinate order.
    elements: Vec<CircuitElement>,
    /// Kirchhoff rows, each as `(coordinate, ±1)`.
    rows: Vec<Vec<(usize, f64)>>,
    terms: LagrangianTerms,
    /// The stencils of the Kirchhoff rows (their coordinates, increasing)…
    row_stencils: LagrangianTerms,
    /// …and each row's coefficients at them.
    row_values: Vec<Vec<f64>>,
}

impl CircuitSystem {
    /// The circuit's name (given to [`Circuit::dyn_system`]).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The coordinate names `q_<element>`.
    pub fn coordinate_names(&self) -> &[String] {
        &self.coordinate_names
    }
}

impl Circuit {
    /// The circuit as a [`DynSystem`] named `name` (see [`CircuitSystem`]).
    ///
    /// # Errors
    /// [`CircuitError::TimeDependentSource`] for a current source or a
    /// voltage source that is not DC.
    pub fn dyn_system(&self, name: &str) -> Result<CircuitSystem, CircuitError> {
        if let Some(e) = self.netlist().elements.iter().find(|e| {
            e.kind == Kind::CurrentSource
                || (e.kind == Kind::VoltageSource
                    && !matches!(e.value, Value::Source(Waveform::Dc(_))))
        }) {
            return Err(CircuitError::TimeDependentSource {
                line: e.line,
                name: e.name.clone(),
            });
        }
        let n = self.coordinates();
        let elements = self.branch_elements();
        let terms = LagrangianTerms::new(n, (0..n).map(|i| [i]))
            .expect("one term per coordinate, in range");
        let rows = self.kirchhoff_rows().to_vec();
        // Each row's coordinates in increasing order, repeated ones merged.
        let sorted: Vec<Vec<(usize, f64)>> = rows
            .iter()
            .map(|row| {
                let mut row = row.clone();
                row.sort_by_key(|&(c, _)| c);
                let mut merged: Vec<(usize, f64)> = Vec::with_capacity(row.len());
                for (c, v) in row {
                    match merged.last_mut() {
                        Some(last) if last.0 == c => last.1 += v,
                        _ => merged.push((c, v)),
                    }
                }
                merged
            })
            .collect();
        let row_stencils =
            LagrangianTerms::new(n, sorted.iter().map(|row| row.iter().map(|&(c, _)| c)))
                .expect("Kirchhoff rows name coordinates in range, increasing");
        let row_values = sorted
            .into_iter()
            .map(|row| row.into_iter().map(|(_, v)| v).collect())
            .collect();
        Ok(CircuitSystem {
            name: name.to_owned(),
            coordinate_names: self.coordinate_names(),
            elements,
            rows,
            terms,
            row_stencils,
            row_values,
        })
    }
}

impl DynSystem for CircuitSystem {
    fn coordinate_count(&self) -> usize {
        self.elements.len()
    }

    fn constraint_count(&self) -> usize {
        self.rows.len()
    }

    #[inline]
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.elements
            .iter()
            .enumerate()
            .fold(S::from(0.0), |acc, (i, e)| {
                acc + e.lagrangian(&[q[i]], &[v[i]], 0.0)
            })
    }

    fn constraint_forms<S: AdScalar>(&self, _q: &[S], a: &mut [S]) {
        let n = self.elements.len();
        a.fill(S::from(0.0));
        for (r, row) in self.rows.iter().enumerate() {
            for &(c, v) in row {
                a[r * n + c] = S::from(v);
            }
        }
    }

    fn lagrangian_terms(&self) -> Option<&LagrangianTerms> {
        Some(&self.terms)
    }

    /// Each Kirchhoff row on the branches it names: the step of a large
    /// circuit stores its rows sparsely (docs/theory.md §11.4).
    fn constraint_stencils(&self) -> Option<&LagrangianTerms> {
        Some(&self.row_stencils)
    }

    #[inline]
    fn constraint_row<S: AdScalar>(&self, r: usize, _q: &[S], a: &mut [S]) {
        for (x, &v) in a.iter_mut().zip(&self.row_values[r]) {
            *x = S::from(v);
        }
    }

    #[inline]
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        self.elements[e].lagrangian(&[q[0]], &[v[0]], 0.0)
    }
}
