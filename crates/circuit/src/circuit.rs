//! A netlist analysed into branch coordinates, Kirchhoff rows and the
//! loops of capacitors and voltage sources, and its runs.

use crate::element::{CircuitElement, CircuitStepper};
use crate::error::CircuitError;
use crate::netlist::{self, Kind, NetElement, Netlist, Value, Waveform, is_ground};
use diracvi_discrete_dirac::dynamic::{DynLagrangeDirac, dyn_advance};
use diracvi_discrete_dirac::{Direction, DynState, Located};
use diracvi_geometry::dynamic::HiddenConstraint;
use diracvi_geometry::{ConstraintDiscretization, Discretization};
use nalgebra::DVector;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A netlist analysed: branch coordinates, node rows, capacitor/voltage
/// loops.
#[derive(Debug, Clone)]
pub struct Circuit {
    netlist: Netlist,
    /// Netlist index of each coordinate's element.
    coords: Vec<usize>,
    /// Non-ground nodes in order of first appearance.
    nodes: Vec<String>,
    /// KCL rows.
    rows: Vec<Vec<(usize, f64)>>,
    drives: Vec<(usize, f64, Waveform)>,
    /// Capacitor/voltage-source loops as signed coordinates, with the
    /// chord's coordinate.
    loops: Vec<(usize, Vec<(usize, f64)>)>,
    /// Initial charge of each coordinate (capacitors with `IC=`; zero
    /// otherwise).
    charges: Vec<f64>,
}

/// Union–find with path halving.
fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

impl Circuit {
    /// Analyse a netlist.
    ///
    /// # Errors
    /// [`CircuitError::Shorted`], [`CircuitError::FloatingNode`],
    /// [`CircuitError::CurrentSourceCutSet`],
    /// [`CircuitError::VoltageSourceLoop`].
    pub fn new(netlist: Netlist) -> Result<Self, CircuitError> {
        // Nodes: ground is index 0.
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut names = vec!["0".to_string()];
        let mut first_line = vec![0usize];
        let mut ends = Vec::with_capacity(netlist.elements.len());
        for e in &netlist.elements {
            let mut id = |node: &str| -> usize {
                if is_ground(node) {
                    return 0;
                }
                *index.entry(node.to_string()).or_insert_with(|| {
                    names.push(node.to_string());
                    first_line.push(e.line);
                    names.len() - 1
                })
            };
            let (a, b) = (id(&e.n1), id(&e.n2));
            if a == b {
                return Err(CircuitError::Shorted {
                    line: e.line,
                    name: e.name.clone(),
                    node: e.n1.clone(),
                });
            }
            ends.push((a, b));
        }
        let nn = names.len();
        // Connectivity to ground: through all elements, and without the
        // current sources.
        let mut all: Vec<usize> = (0..nn).collect();
        let mut no_i: Vec<usize> = (0..nn).collect();
        for (e, &(a, b)) in netlist.elements.iter().zip(&ends) {
            let (ra, rb) = (find(&mut all, a), find(&mut all, b));
            all[ra] = rb;
            if e.kind != Kind::CurrentSource {
                let (ra, rb) = (find(&mut no_i, a), find(&mut no_i, b));
                no_i[ra] = rb;
            }
        }
        for node in 1..nn {
            if find(&mut all, node) != find(&mut all, 0) {
                return Err(CircuitError::FloatingNode {
                    node: names[node].clone(),
                    line: first_line[node],
                });
            }
            if find(&mut no_i, node) != find(&mut no_i, 0) {
                return Err(CircuitError::CurrentSourceCutSet {
                    node: names[node].clone(),
                    line: first_line[node],
                });
            }
        }
        // Coordinates and KCL rows (+1 into a node, −1 out of it).
        let mut coords = Vec::new();
        let mut coord_of = vec![usize::MAX; netlist.elements.len()];
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nn - 1];
        let mut drives = Vec::new();
        for (k, (e, &(a, b))) in netlist.elements.iter().zip(&ends).enumerate() {
            if e.kind == Kind::CurrentSource {
                let Value::Source(w) = e.value.clone() else {
                    unreachable!("sources carry waveforms")
                };
                if a != 0 {
                    drives.push((a - 1, -1.0, w));
                }
                if b != 0 {
                    drives.push((b - 1, 1.0, w));
                }
                continue;
            }
            let c = coords.len();
            coords.push(k);
            coord_of[k] = c;
            if a != 0 {
                rows[a - 1].push((c, -1.0));
            }
            if b != 0 {
                rows[b - 1].push((c, 1.0));
            }
        }
        // Loops of capacitors and voltage sources: fundamental cycles of a
        // spanning forest of their subgraph (its edges chosen in file
        // order), each closed by a chord.
        let mut parent: Vec<usize> = (0..nn).collect();
        let mut adjacency: Vec<Vec<(usize, usize)>> = vec![Vec::new(); nn];
        let mut chords = Vec::new();
        for (k, (e, &(a, b))) in netlist.elements.iter().zip(&ends).enumerate() {
            if !matches!(e.kind, Kind::Capacitor | Kind::VoltageSource) {
                continue;
            }
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            if ra != rb {
                parent[ra] = rb;
                adjacency[a].push((b, k));
                adjacency[b].push((a, k));
            } else {
                chords.push(k);
            }
        }
        let forest = RootedForest::new(&adjacency);
        let mut loops = Vec::new();
        for k in chords {
            let e = &netlist.elements[k];
            let (a, b) = ends[k];
            // Tree path from b back to a; the chord runs a → b.
            let path = forest.path(b, a);
            let mut cycle = vec![(coord_of[k], 1.0)];
            let mut only_sources = e.kind == Kind::VoltageSource;
            let mut at = b;
            for &k2 in &path {
                let (x, y) = ends[k2];
                let (sign, next) = if x == at { (1.0, y) } else { (-1.0, x) };
                cycle.push((coord_of[k2], sign));
                only_sources &= netlist.elements[k2].kind == Kind::VoltageSource;
                at = next;
            }
            if only_sources {
                let mut names: Vec<String> = path
                    .iter()
                    .map(|&k2| netlist.elements[k2].name.clone())
                    .collect();
                names.push(e.name.clone());
                return Err(CircuitError::VoltageSourceLoop {
                    names,
                    line: e.line,
                });
            }
            loops.push((coord_of[k], cycle));
        }
        // Initial charges: `c · v0`, or `U′(q) = v0` solved.
        let mut charges = vec![0.0; coords.len()];
        for (q, &k) in charges.iter_mut().zip(&coords) {
            let e = &netlist.elements[k];
            match (&e.value, e.ic) {
                (Value::Number(c), Some(v0)) if e.kind == Kind::Capacitor => *q = c * v0,
                (Value::Energy(law), Some(v0)) => {
                    *q = law
                        .charge_for_voltage(v0)
                        .ok_or_else(|| CircuitError::InitialCharge {
                            line: e.line,
                            name: e.name.clone(),
                            voltage: v0,
                        })?;
                }
                _ => {}
            }
        }
        Ok(Self {
            netlist,
            coords,
            nodes: names[1..].to_vec(),
            rows,
            drives,
            loops,
            charges,
        })
    }

    /// Parse and analyse netlist text.
    ///
    /// # Errors
    /// As [`netlist::parse`] and [`Circuit::new`].
    pub fn parse(text: &str) -> Result<Self, CircuitError> {
        Self::new(netlist::parse(text)?)
    }

    /// The netlist.
    pub fn netlist(&self) -> &Netlist {
        &self.netlist
    }

    /// Number of coordinates (branch charges).
    pub fn coordinates(&self) -> usize {
        self.coords.len()
    }

    /// Number of Kirchhoff rows (non-ground nodes).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Number of independent capacitor/voltage-source loops.
    pub fn loop_count(&self) -> usize {
        self.loops.len()
    }

    /// The loops as hidden constraints of the forward map's step: each
    /// loop's signed branches, replacing its chord's equation.
    pub(crate) fn loop_constraints(&self) -> Vec<HiddenConstraint> {
        self.loops
            .iter()
            .map(|(chord, cycle)| HiddenConstraint {
                replaces: *chord,
                q: cycle.clone(),
                mu: Vec::new(),
            })
            .collect()
    }

    /// The voltage of coordinate `i`'s branch at charge `q` and time `t`
    /// (`−∂L/∂q` of its term): `q/c` for a capacitor, `U′(q)` for a
    /// nonlinear one, `E(t)` for a voltage source, zero for the rest.
    pub fn branch_voltage(&self, i: usize, q: f64, t: f64) -> f64 {
        let e = self.element_of(i);
        match (e.kind, &e.value) {
            (Kind::Capacitor, Value::Number(c)) => q / c,
            (_, Value::Energy(law)) => law.jet(q).1,
            (Kind::VoltageSource, Value::Source(w)) => w.value(t),
            _ => 0.0,
        }
    }

    /// Kirchhoff's voltage law around each loop of capacitors and voltage
    /// sources at the charges `q` and time `t` (the loop's hidden
    /// constraint, docs/theory.md §8.2): per loop, its branches as
    /// `(name, voltage taken along the loop)`, whose sum a consistent
    /// state makes zero.
    pub fn loop_voltages(&self, q: &[f64], t: f64) -> Vec<Vec<(String, f64)>> {
        self.loops
            .iter()
            .map(|(_, cycle)| {
                cycle
                    .iter()
                    .map(|&(i, sign)| {
                        let name = self.element_of(i).name.clone();
                        (name, sign * self.branch_voltage(i, q[i], t))
                    })
                    .collect()
            })
            .collect()
    }

    /// Coordinate names `q_<element>`.
    pub fn coordinate_names(&self) -> Vec<String> {
        self.coords
            .iter()
            .map(|&k| format!("q_{}", self.netlist.elements[k].name))
            .collect()
    }

    /// The element of coordinate `i`.
    pub fn element_of(&self, i: usize) -> &NetElement {
        &self.netlist.elements[self.coords[i]]
    }

    /// The Kirchhoff rows `A` (each as `(coordinate, ±1)`).
    pub fn kirchhoff_rows(&self) -> &[Vec<(usize, f64)>] {
        &self.rows
    }

    /// The current sources as drives of the Kirchhoff rows:
    /// `(row, coefficient, ∫ I dt)`, the row's constraint reading
    /// `A v + Σ coefficient · I(t) = 0`.
    pub fn drives(&self) -> &[(usize, f64, Waveform)] {
        &self.drives
    }

    /// The branch term of each coordinate, in coordinate order.
    pub(crate) fn branch_elements(&self) -> Vec<CircuitElement> {
        self.coords
            .iter()
            .enumerate()
            .map(|(coord, &k)| {
                let e = &self.netlist.elements[k];
                match (e.kind, &e.value) {
                    (Kind::Inductor, &Value::Number(l)) => CircuitElement::Inductor { coord, l },
                    (Kind::Capacitor, &Value::Number(c)) => CircuitElement::Capacitor { coord, c },
                    (Kind::Capacitor, Value::Energy(law)) => CircuitElement::NonlinearCapacitor {
                        coord,
                        energy: law.clone(),
                    },
                    (Kind::VoltageSource, &Value::Source(waveform)) => {
                        CircuitElement::VoltageSource { coord, waveform }
                    }
                    _ => unreachable!("the parser pairs kinds and values"),
                }
            })
            .collect()
    }

    /// A stepper for the circuit: the run-time core's (±) Lagrange–Dirac
    /// stepper over [`dyn_system`](Self::dyn_system), (+) forward, (−)
    /// backward in time. With the forward map a loop of capacitors and
    /// voltage sources makes the step degenerate; its hidden constraints
    /// come from the circuit graph (docs/theory.md §8.3). Kirchhoff's law
    /// is linear, so the discrete constraint is `A (q_{k+1} − q_k) = 0`
    /// whatever its name: the midpoint one is used.
    pub fn stepper(&self, discretization: Discretization, direction: Direction) -> CircuitStepper {
        DynLagrangeDirac::new(
            self.dyn_system("circuit"),
            discretization,
            ConstraintDiscretization::Midpoint,
            direction,
        )
    }

    /// The initial state at `t = 0` from the `IC=` values: capacitor charges
    /// `c · v0` (nonlinear: `U′(q) = v0`), inductor momenta `ℓ · i0` (flux
    /// linkages); the rest zero.
    pub fn initial_state(&self) -> DynState {
        let n = self.coords.len();
        let q = DVector::from_column_slice(&self.charges);
        let mut p = DVector::zeros(n);
        for (i, &k) in self.coords.iter().enumerate() {
            let e = &self.netlist.elements[k];
            if let (Kind::Inductor, &Value::Number(l), Some(i0)) = (e.kind, &e.value, e.ic) {
                p[i] = l * i0;
            }
        }
        DynState { t: 0.0, q, p }
    }

    /// Run `steps` steps of `h` forward from [`initial_state`](Self::initial_state)
    /// with the (+) [`stepper`](Self::stepper), calling `observe(state)` every `every` steps
    /// (`0`: never; the initial state is observed first).
    ///
    /// # Errors
    /// [`CircuitError::Step`] with the step index and time.
    pub fn simulate(
        &self,
        discretization: Discretization,
        h: f64,
        steps: usize,
        every: usize,
        mut observe: impl FnMut(&DynState),
    ) -> Result<CircuitRun, CircuitError> {
        let setup = Instant::now();
        let mut stepper = self.stepper(discretization, Direction::Forward);
        let setup_time = setup.elapsed();
        let mut state = self.initial_state();
        if every > 0 {
            observe(&state);
        }
        let start = Instant::now();
        let mut run = CircuitRun {
            steps,
            h,
            energy_initial: f64::NAN,
            energy_min: f64::INFINITY,
            energy_max: f64::NEG_INFINITY,
            energy_final: f64::NAN,
            max_kirchhoff_residual: 0.0,
            newton_iterations: 0,
            jacobian_evaluations: 0,
            setup_time,
            solve_time: Duration::ZERO,
            final_state: state.clone(),
        };
        for k in 0..steps {
            let out = dyn_advance(&mut stepper, &state, h).map_err(|e| Located::new(k, e))?;
            state = out.to;
            if k == 0 {
                run.energy_initial = out.energy;
            }
            run.energy_min = run.energy_min.min(out.energy);
            run.energy_max = run.energy_max.max(out.energy);
            run.energy_final = out.energy;
            run.max_kirchhoff_residual = run.max_kirchhoff_residual.max(out.constraint_residual);
            run.newton_iterations += out.stats.iterations;
            run.jacobian_evaluations += out.stats.jacobian_evaluations;
            if every > 0 && (k + 1) % every == 0 {
                observe(&state);
            }
        }
        run.solve_time = start.elapsed();
        run.final_state = state;
        Ok(run)
    }
}

/// Summary of [`Circuit::simulate`].
#[derive(Debug, Clone, PartialEq)]
pub struct CircuitRun {
    /// Steps taken.
    pub steps: usize,
    /// Step size.
    pub h: f64,
    /// Discrete energy of the first step.
    pub energy_initial: f64,
    /// Smallest discrete energy.
    pub energy_min: f64,
    /// Largest discrete energy.
    pub energy_max: f64,
    /// Discrete energy of the last step.
    pub energy_final: f64,
    /// Largest Kirchhoff residual `max |A Δq + Δg| / max(1, |q|)`.
    pub max_kirchhoff_residual: f64,
    /// Newton iterations in all.
    pub newton_iterations: usize,
    /// Jacobian evaluations in all.
    pub jacobian_evaluations: usize,
    /// Building the stepper (pattern, ordering).
    pub setup_time: Duration,
    /// The steps.
    pub solve_time: Duration,
    /// The last state.
    pub final_state: DynState,
}

/// A spanning forest rooted once (each tree at its first node): the parent
/// of every node with the element joining them, and its depth.
struct RootedForest {
    up: Vec<Option<(usize, usize)>>,
    depth: Vec<usize>,
}

impl RootedForest {
    fn new(adjacency: &[Vec<(usize, usize)>]) -> Self {
        let n = adjacency.len();
        let (mut up, mut depth, mut seen) = (vec![None; n], vec![0; n], vec![false; n]);
        let mut queue = std::collections::VecDeque::new();
        for root in 0..n {
            if seen[root] {
                continue;
            }
            seen[root] = true;
            queue.push_back(root);
            while let Some(u) = queue.pop_front() {
                for &(w, k) in &adjacency[u] {
                    if !seen[w] {
                        seen[w] = true;
                        up[w] = Some((u, k));
                        depth[w] = depth[u] + 1;
                        queue.push_back(w);
                    }
                }
            }
        }
        Self { up, depth }
    }

    /// The element indices of the tree path from `from` to `to` (in one
    /// tree), in order, found by walking up from both ends to where they
    /// meet: the cost is the path's length, not the tree's size.
    fn path(&self, from: usize, to: usize) -> Vec<usize> {
        let (mut x, mut y) = (from, to);
        let (mut head, mut tail) = (Vec::new(), Vec::new());
        let step = |node: usize, out: &mut Vec<usize>| {
            let (parent, k) = self.up[node].expect("a node below another has a parent");
            out.push(k);
            parent
        };
        while self.depth[x] > self.depth[y] {
            x = step(x, &mut head);
        }
        while self.depth[y] > self.depth[x] {
            y = step(y, &mut tail);
        }
        while x != y {
            x = step(x, &mut head);
            y = step(y, &mut tail);
        }
        tail.reverse();
        head.extend(tail);
        head
    }
}
