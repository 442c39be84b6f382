//! A circuit as a [`DynSystem`]: the same branch terms and Kirchhoff rows,
//! seen by the run-time-sized core of every model (docs/theory.md §8.7,
//! §11), which composes its symmetric step to orders 4 and 6.
//!
//! A voltage source is the term `−E(t) q` of its branch, so a circuit with
//! time-dependent voltage sources is a time-dependent
//! [`DynSystem`] ([`DynSystem::time_dependent`]: `L(q, v, t)`, evaluated by
//! the steps at the time of the discretization point, docs/theory.md §8.8).
//! A current source is not a term of `L`: its prescribed charge `∫ I dt`
//! drives the Kirchhoff rows it touches (`A v + I(t) = 0`,
//! [`DynSystem::constraint_drive`]).

use crate::circuit::Circuit;
use crate::element::CircuitElement;
use crate::netlist::{Kind, Value, Waveform};
use diracvi_geometry::dynamic::{DynSystem, HiddenConstraint, LagrangianTerms};
use diracvi_geometry::{AdScalar, Discretization};

/// A circuit as a [`DynSystem`]: coordinates
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
    /// Whether a voltage source is not DC (`L` depends on time) or a
    /// current source drives a row.
    time_dependent: bool,
    /// The current sources: `(row, coefficient, waveform)`, the row reading
    /// `A v + Σ coefficient · I(t) = 0`.
    drives: Vec<(usize, f64, Waveform)>,
    /// The hidden constraints of the forward map: one per independent loop
    /// of capacitors and voltage sources, replacing its chord's equation.
    loops: Vec<HiddenConstraint>,
    /// The parameters `θ`: the coordinate of each element with a value
    /// ([`CircuitElement::value`]), in coordinate order…
    parameter_coordinates: Vec<usize>,
    /// …and each coordinate's parameter, if it has one.
    parameter_of: Vec<Option<usize>>,
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

    /// The derivative of the initial charges `q` (from the netlist's `IC=`
    /// voltages: a linear capacitor starts at `c · V`) in parameter `k`,
    /// the voltages held fixed: `V = q_i / c` on a capacitance's own branch,
    /// zero elsewhere. `None` for a source's voltage on a loop of
    /// capacitors and voltage sources: the loop's voltage law
    /// (`Σ ± V_C = Σ ± E` around it) ties it to the capacitors' initial
    /// voltages, so it cannot change alone.
    pub fn initial_charges_along(&self, k: usize, q: &[f64]) -> Option<Vec<f64>> {
        let i = self.parameter_coordinates[k];
        let mut dq = vec![0.0; q.len()];
        match self.elements[i] {
            CircuitElement::Capacitor { c, .. } => dq[i] = q[i] / c,
            CircuitElement::VoltageSource { .. }
                if self.loops.iter().any(|l| l.q.iter().any(|&(b, _)| b == i)) =>
            {
                return None;
            }
            _ => {}
        }
        Some(dq)
    }
}

impl Circuit {
    /// The circuit as a [`DynSystem`] named `name` (see [`CircuitSystem`]).
    ///
    pub fn dyn_system(&self, name: &str) -> CircuitSystem {
        let drives = self.drives().to_vec();
        let time_dependent = !drives.is_empty()
            || self.netlist().elements.iter().any(|e| {
                e.kind == Kind::VoltageSource && !matches!(e.value, Value::Source(Waveform::Dc(_)))
            });
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
        let parameter_coordinates: Vec<usize> = elements
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.value().map(|_| i))
            .collect();
        let mut parameter_of = vec![None; n];
        for (k, &i) in parameter_coordinates.iter().enumerate() {
            parameter_of[i] = Some(k);
        }
        CircuitSystem {
            parameter_coordinates,
            parameter_of,
            name: name.to_owned(),
            coordinate_names: self.coordinate_names(),
            elements,
            rows,
            terms,
            row_stencils,
            row_values,
            time_dependent,
            drives,
            loops: self.loop_constraints(),
        }
    }
}

impl DynSystem for CircuitSystem {
    fn coordinate_count(&self) -> usize {
        self.elements.len()
    }

    fn constraint_count(&self) -> usize {
        self.rows.len()
    }

    /// `L(q, v, 0)` (see [`lagrangian_at`](DynSystem::lagrangian_at)).
    #[inline]
    fn lagrangian<S: AdScalar>(&self, q: &[S], v: &[S]) -> S {
        self.lagrangian_at(q, v, 0.0)
    }

    fn time_dependent(&self) -> bool {
        self.time_dependent
    }

    /// The current sources' charges `∫ I dt` on the rows they touch.
    fn constraint_drive(&self, t: f64, g: &mut [f64], rate: &mut [f64]) -> bool {
        if self.drives.is_empty() {
            return false;
        }
        g.fill(0.0);
        rate.fill(0.0);
        for &(row, coefficient, waveform) in &self.drives {
            g[row] += coefficient * waveform.integral(t);
            rate[row] += coefficient * waveform.value(t);
        }
        true
    }

    /// `Σ_e L_e(q_e, v_e, t)`: the voltage sources' `−E(t) q` at `t`.
    #[inline]
    fn lagrangian_at<S: AdScalar>(&self, q: &[S], v: &[S], t: f64) -> S {
        self.elements
            .iter()
            .enumerate()
            .fold(S::from(0.0), |acc, (i, e)| {
                acc + e.lagrangian(q[i], v[i], t)
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

    /// Kirchhoff's rows are constant.
    fn constant_constraint_forms(&self) -> bool {
        true
    }

    /// With the forward map, the step equations of a loop of capacitors
    /// and voltage sources sum (with the loop's orientations) to the
    /// loop's voltage law at the current charges, which no unknown enters
    /// (docs/theory.md §8.3): one hidden constraint per independent loop,
    /// from the circuit graph. With the midpoint map the step is regular.
    fn hidden_constraints(&self, map: Discretization) -> &[HiddenConstraint] {
        match map {
            Discretization::Forward => &self.loops,
            Discretization::Midpoint => &[],
        }
    }

    #[inline]
    fn constraint_row<S: AdScalar>(&self, r: usize, _q: &[S], a: &mut [S]) {
        for (x, &v) in a.iter_mut().zip(&self.row_values[r]) {
            *x = S::from(v);
        }
    }

    #[inline]
    fn lagrangian_term<S: AdScalar>(&self, e: usize, q: &[S], v: &[S]) -> S {
        self.lagrangian_term_at(e, q, v, 0.0)
    }

    #[inline]
    fn lagrangian_term_at<S: AdScalar>(&self, e: usize, q: &[S], v: &[S], t: f64) -> S {
        self.elements[e].lagrangian(q[0], v[0], t)
    }

    /// One parameter per element with a value (an inductance, a linear
    /// capacitance, a DC source's voltage; [`CircuitElement::value`]),
    /// named as the element in the netlist (`L1`, `C2`, `V1`).
    fn parameter_count(&self) -> usize {
        self.parameter_coordinates.len()
    }

    fn parameter_names(&self) -> Vec<String> {
        self.parameter_coordinates
            .iter()
            .map(|&i| {
                let name = &self.coordinate_names[i];
                name.strip_prefix("q_").unwrap_or(name).to_owned()
            })
            .collect()
    }

    fn parameter_values(&self) -> Vec<f64> {
        self.parameter_coordinates
            .iter()
            .map(|&i| self.elements[i].value().unwrap_or(f64::NAN))
            .collect()
    }

    /// Each branch's term carries its own element value: the derivatives in
    /// the values are taken branch by branch.
    fn parameter_terms(&self) -> bool {
        true
    }

    #[inline]
    fn lagrangian_term_with<S: AdScalar>(
        &self,
        e: usize,
        q: &[S],
        v: &[S],
        theta: &[S],
        t: f64,
    ) -> S {
        match self.parameter_of[e] {
            Some(k) => self.elements[e].lagrangian_with(q[0], v[0], t, theta[k]),
            None => self.elements[e].lagrangian(q[0], v[0], t),
        }
    }

    /// `L(q, v; θ)` at `t = 0` (a sine source is not a parameter:
    /// [`DynSystem::lagrangian_with_at`] adds it at `t`).
    fn lagrangian_with<S: AdScalar>(&self, q: &[S], v: &[S], theta: &[S]) -> S {
        self.elements
            .iter()
            .enumerate()
            .fold(S::from(0.0), |acc, (i, e)| {
                acc + match self.parameter_of[i] {
                    Some(k) => e.lagrangian_with(q[i], v[i], 0.0, theta[k]),
                    None => e.lagrangian(q[i], v[i], 0.0),
                }
            })
    }
}
