//! The energy of each part and the work through each port along a discrete
//! trajectory (docs/systems.md, docs/theory.md §15.1), computed from the
//! recorded states alone — the runner knows nothing of parts and ports.
//!
//! Write the assembled Lagrangian as the sum of its components `L = Σ L_c`
//! (each part's own Lagrangian; a gyrator's `Bl·a·ḃ`; an inductance port's
//! magnetic co-energy `½ L(q) ḃ²`), so `L_d = Σ L_d^c` with the same map
//! `Ψ` (`L_d^c = h L_c(Ψ(q_k, q_{k+1}))`). At an interior node `k` the
//! stepper solved `D2 L_d(q_{k−1}, q_k) + D1 L_d(q_k, q_{k+1}) = A(q_k)ᵀ μ`.
//! On a part `P` the other components act with the **discrete impulse**
//!
//! ```text
//! I_c = D2 L_d^c(q_{k−1}, q_k) + D1 L_d^c(q_k, q_{k+1})     (a Lagrangian port c)
//! I_c = −μ_r A_r(q_k)                                       (a port row r: transformer, joint)
//! ```
//!
//! (the forced discrete Euler–Lagrange equation of `P` alone reads
//! `D2 L_d^P + D1 L_d^P + Σ_c I_c|_P = 0`), and the work port `c` does on
//! `P` over the node is `W_{c,P} = ⟨I_c|_P, v̄_P⟩` with the central
//! velocity `v̄ = (q_{k+1} − q_{k−1})/(2h)`. The multipliers `μ` are not
//! recorded: they are recovered from the recorded momentum,
//! `A(q_k)ᵀ μ = p_k + D1 L_d(q_k, q_{k+1})`, by least squares.
//!
//! For a gyrator with the midpoint map the impulses are
//! `½ Bl (Δb_{k−1} + Δb_k)` on `a` and `−½ Bl (Δa_{k−1} + Δa_k)` on `b`, so
//! the work done on one side is the work taken from the other to round-off;
//! for a transformer or a joint with constant rows, `W_a + W_b = −μ A v̄`
//! vanishes with the discrete constraint `A Δq = 0` of both steps (a joint
//! with rows that vary, and an inductance port, which stores energy, balance
//! to `O(h³)` a node). Each
//! part's energy `E_P = ⟨∂L_P/∂v, v⟩ − L_P` at `Ψ` (these sum to the
//! recorded discrete energy `E_d = −D3 L_d`) changes by the work of its
//! ports to the accuracy of the method (`O(h²)` over a run).
//!
//! Steps with an impact (sub-steps of other lengths) are found by
//! `p_{k+1} ≠ D2 L_d(q_k, q_{k+1})`; the nodes next to them are skipped and
//! counted, so a part's `unaccounted` energy includes what moved across
//! those steps.
//!
//! **Composed runs** (orders 4 and 6) are read stage by stage: each stage is
//! a symmetric midpoint step of signed duration `τ_i = γ_i h`, sharing its
//! reaction between its ends, so between stages
//! `D2 L_d(·, τ_{i−1}) + D1 L_d(·, τ_i) = A(q_i)ᵀ μ` and the formulas above
//! hold with `h → τ`, `v̄ = (q_{i+1} − q_{i−1})/(τ_{i−1} + τ_i)` and the
//! multipliers from that node equation (docs/theory.md §15.1).
//!
//! **Backward runs** (the (−) stepper) are read in the order they ran: the
//! (−) step from `(q_k, p_k)` to the earlier `q_{k+1}` is the (+) step of
//! the reversed `L_d^*(a, b) = L_d(b, a)` with the momentum negated,
//! `π = −p` (docs/theory.md §3.4), so every formula above holds with
//! `L_d^*` and `π`: `D1 L_d^*(q_k, q_{k+1}) = D2 L_d(q_{k+1}, q_k)`, and
//! so on. Energies are the physical ones (`Ψ` is evaluated in the order of
//! time); `energy_initial` is that of the run's first step (its latest
//! time), and a port's work is counted along the run: over the interval,
//! minus the work it did forward in time.

use crate::{Component, System};
use diracvi_expr::{CompiledModel, Expr, ModelFileError};
use nalgebra::{DMatrix, DVector};
use num_dual::Dual64;
use serde::Serialize;

/// Relative mismatch of `p_{k+1}` and `D2 L_d(q_k, q_{k+1})` above which a
/// step is taken for one with an impact.
const IRREGULAR: f64 = 1e-8;

/// One step's values of every component at `Ψ(q_k, q_{k+1})`.
#[derive(Debug, Clone)]
struct StepValues {
    /// `D1 L_d^c` per component, on the component's coordinates
    /// ([`Accounting::coordinates`]).
    d1: Vec<Vec<f64>>,
    /// `D2 L_d^c` per component, on the component's coordinates.
    d2: Vec<Vec<f64>>,
    /// `D1 L_d = Σ_c D1 L_d^c` on every coordinate.
    d1_total: Vec<f64>,
    /// `D2 L_d = Σ_c D2 L_d^c` on every coordinate.
    d2_total: Vec<f64>,
    /// The step's duration: `h` of a grid step (read forward through
    /// `L_d^*` in a backward run), the signed `τ` of a composed step's
    /// stage.
    tau: f64,
    /// A stage of a composed step (the node's reactions then come from
    /// the node equation, not from the recorded momentum).
    stage: bool,
    /// `E_c` per component.
    energy: Vec<f64>,
    /// `D1 L_d^F`, `D2 L_d^F` of the forces' term `L^F = Σ_i F_i(t) q_i`
    /// on every coordinate (empty without forces).
    force_d1: Vec<f64>,
    force_d2: Vec<f64>,
    /// `−Σ_i F_i(t_s) Ψ_q,i`: the forces' part of the runner's energy.
    force_energy: f64,
    /// Whether `p_{k+1} = D2 L_d` (no impact in the step).
    regular: bool,
}

/// A record `(k, t, q, p)` the accounting keeps (`k` is `None` for the
/// end of a composed step's stage).
type Recorded = (Option<usize>, f64, Vec<f64>, Vec<f64>);

/// Constraint rows whose multipliers the accounting needs, with the
/// coordinates they read: rows of components that share parts, closed
/// under sharing, so `A(q)ᵀ μ = r` splits into one small least-squares
/// problem per group.
#[derive(Debug, Clone)]
struct RowGroup {
    /// Global row indices.
    rows: Vec<usize>,
    /// Global coordinate indices (the group's parts' ranges).
    coordinates: Vec<usize>,
}

/// What a part's entry of the summary holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartReport {
    /// `E_P` of the first step (`None` for a run of no step).
    pub energy_initial: Option<f64>,
    /// `E_P` of the last step.
    pub energy_final: Option<f64>,
    /// `Σ_nodes Σ_ports W_{c,P}`: the work its ports did on it.
    pub port_work: f64,
    /// The work its sources did on it: its forces `F_i(t)` (a netlist's
    /// voltage sources) and its driven rows (current sources), summed over
    /// the nodes like a port's (0 for a part without sources).
    pub source_work: f64,
    /// `energy_final − energy_initial − port_work − source_work`: the
    /// method's energy error of the part, and what moved across skipped
    /// (impact) nodes.
    pub unaccounted: Option<f64>,
}

/// What a port's entry of the summary holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortReport {
    /// `gyrator`, `transformer`, `inductance`, `joint`.
    pub kind: &'static str,
    /// The parts it touches (side `a` first).
    pub parts: Vec<String>,
    /// The work it did on each of them over the run (`parts` order).
    pub work: Vec<f64>,
    /// The energy it stores (an inductance's magnetic co-energy; 0 for the
    /// others) at the first step.
    pub energy_initial: Option<f64>,
    /// ... and at the last.
    pub energy_final: Option<f64>,
    /// `max_k |W_{c,a}| / h`: the largest power through it (into its first
    /// part).
    pub power_max: f64,
    /// `max_k |Σ_P W_{c,P} + ΔE_c|`: per node, the work done on one side
    /// against the work taken from the other (and the energy stored);
    /// round-off for a gyrator with the midpoint map and for constant rows.
    pub balance_max: f64,
    /// `max_k Σ_P |W_{c,P}|`, the scale of `balance_max`.
    pub work_scale: f64,
}

/// The accounting of a run: per part, per port, and how many nodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AccountingReport {
    /// By part name, in file order.
    pub parts: Vec<(String, PartReport)>,
    /// By port name, in file order.
    pub ports: Vec<(String, PortReport)>,
    /// Interior nodes accounted.
    pub nodes: usize,
    /// Interior nodes skipped (next to a step with an impact, or a gap in
    /// the records).
    pub nodes_skipped: usize,
    /// `max_k |Σ_c E_c − E_d|`: the parts' and ports' energies against the
    /// runner's discrete energy of each step (steps without an impact);
    /// `None` for a composed run (the runner's energy is the composed
    /// step's, the parts' are the stages') or a run of no regular step.
    pub energy_sum_deviation_max: Option<f64>,
}

/// Feed it every recorded step of a run of the assembled system (the
/// Lagrange–Dirac stepper of order 2, forward or backward in time,
/// [`record`](Self::record)), or every stage of a composed run
/// ([`start`](Self::start), [`stage`](Self::stage)), then
/// [`report`](Self::report).
#[derive(Debug, Clone)]
pub struct Accounting {
    components: Vec<Component>,
    compiled: Vec<Expr>,
    full: CompiledModel,
    ranges: Vec<std::ops::Range<usize>>,
    /// Per component, the coordinates of its parts (in `parts` order):
    /// its Lagrangian and its rows read these only (the system's
    /// assembly qualifies every name by its part), so it is
    /// differentiated on them alone.
    coordinates: Vec<Vec<usize>>,
    /// The row groups of the ports with rows (transformers, joints).
    groups: Vec<RowGroup>,
    part_names: Vec<String>,
    h: f64,
    /// Where `Ψ` evaluates positions: `q_k + w (q_{k+1} − q_k)`.
    w: f64,
    /// Whether the records come from a backward run (read through
    /// `L_d^*` and `π = −p`, see the module documentation).
    reversed: bool,
    /// The last two records `(k, t, q, p)` (`k` is `None` for the ends of
    /// a composed step's stages).
    window: Vec<Recorded>,
    /// Whether the model has forces `F_i(t)`.
    forced: bool,
    /// The driven rows, each with the part it belongs to.
    driven: Vec<(usize, usize)>,
    /// Per part: the work of its sources.
    source_work: Vec<f64>,
    /// The values of the last step.
    last: Option<StepValues>,
    first_energy: Option<Vec<f64>>,
    last_energy: Option<Vec<f64>>,
    /// Per component, per touched part: the work summed.
    work: Vec<Vec<f64>>,
    power_max: Vec<f64>,
    balance_max: Vec<f64>,
    work_scale: Vec<f64>,
    nodes: usize,
    skipped: usize,
    sum_deviation: Option<f64>,
}

impl Accounting {
    /// The accounting of `system` run with parameter values `overrides`
    /// (as `--set` gives them), step `h`, and the midpoint (`midpoint`) or
    /// the forward discretization map; `backward` for a run of the (−)
    /// stepper, backward in time (records in the order the run made them).
    ///
    /// # Errors
    /// A component's Lagrangian does not compile with these values.
    pub fn new(
        system: &System,
        overrides: &[(String, f64)],
        h: f64,
        midpoint: bool,
        backward: bool,
    ) -> Result<Accounting, ModelFileError> {
        let model = system.model();
        let full = model.compile(overrides)?;
        // The components' Lagrangians in one scope: neither the rows and
        // walls (m·n entries) nor the scope are built once per component.
        let sources: Vec<(String, String)> = system
            .components()
            .iter()
            .map(|c| (format!("component {}", c.name), c.lagrangian.clone()))
            .collect();
        let compiled = model.compile_velocity_functions(overrides, &sources)?;
        let components = system.components().to_vec();
        let parts = components.iter().filter(|c| c.port.is_none()).count();
        let ranges = system.part_ranges().to_vec();
        let coordinates = components
            .iter()
            .map(|c| c.parts.iter().flat_map(|&p| ranges[p].clone()).collect())
            .collect();
        let driven: Vec<(usize, usize)> = components[..parts]
            .iter()
            .enumerate()
            .flat_map(|(part, c)| {
                c.rows
                    .iter()
                    .filter(|&&r| full.row_driven(r))
                    .map(move |&r| (r, part))
            })
            .collect();
        let driven_parts: Vec<usize> = driven.iter().map(|&(_, p)| p).collect();
        let groups = row_groups(&components, &ranges, &driven_parts);
        Ok(Accounting {
            forced: !model.forces.is_empty(),
            driven,
            source_work: vec![0.0; parts],
            work: components
                .iter()
                .map(|c| vec![0.0; c.parts.len()])
                .collect(),
            power_max: vec![0.0; components.len()],
            balance_max: vec![0.0; components.len()],
            work_scale: vec![0.0; components.len()],
            part_names: components[..parts].iter().map(|c| c.name.clone()).collect(),
            components,
            compiled,
            full,
            ranges,
            coordinates,
            groups,
            h,
            w: if midpoint { 0.5 } else { 0.0 },
            reversed: backward,
            window: Vec::with_capacity(2),
            last: None,
            first_energy: None,
            last_energy: None,
            nodes: 0,
            skipped: 0,
            sum_deviation: None,
        })
    }

    /// The values of every component on the step `q0 → q1` of the run,
    /// oriented (`D1`, `D2` of `L_d^*` for a backward run), and whether it
    /// was a regular step (`π1 = D2 L_d`). Each component is
    /// differentiated by forward-mode passes over its own coordinates
    /// only, seeding one dual direction in place, so a step costs the sum
    /// of the components' sizes, not `n` passes over every component.
    ///
    /// A composed step's stage (`stage`) is a step of signed duration
    /// `tau` read in the order it was taken (`L_d(q0, q1, τ) = τ L(Ψ)`,
    /// never reversed), and regular: the stages of a step with an impact
    /// never reach the accounting.
    fn step(
        &self,
        (t0, q0): (f64, &[f64]),
        (t1, q1): (f64, &[f64]),
        p1: &[f64],
        stage: Option<f64>,
    ) -> StepValues {
        let reversed = self.reversed && stage.is_none();
        // `Ψ` in the order of time: a backward run's step ends earlier
        let (q0, q1) = if reversed { (q1, q0) } else { (q0, q1) };
        let n = q0.len();
        let h = stage.unwrap_or(self.h);
        let q: Vec<f64> = (0..n).map(|i| q0[i] + self.w * (q1[i] - q0[i])).collect();
        let v: Vec<f64> = (0..n).map(|i| (q1[i] - q0[i]) / h).collect();
        let mut qd: Vec<Dual64> = q.iter().map(|&x| Dual64::from(x)).collect();
        let mut vd: Vec<Dual64> = v.iter().map(|&x| Dual64::from(x)).collect();
        let mut out = StepValues {
            d1: Vec::with_capacity(self.components.len()),
            d2: Vec::with_capacity(self.components.len()),
            d1_total: vec![0.0; n],
            d2_total: vec![0.0; n],
            tau: h,
            stage: stage.is_some(),
            energy: Vec::with_capacity(self.components.len()),
            force_d1: Vec::new(),
            force_d2: Vec::new(),
            force_energy: 0.0,
            regular: true,
        };
        // The forces' term `h Σ_i F_i(t_s) Ψ_q,i`, sampled at the step's
        // discretization point in time (as the stepper samples it): in the
        // step equations like a Lagrangian term, its `−F·q` in the
        // runner's discrete energy.
        let mut force_energy = 0.0;
        if self.forced {
            let mut f = vec![0.0; n];
            self.full
                .force_values(t0.min(t1) + self.w * h.abs(), &mut f);
            out.force_d1 = vec![0.0; n];
            out.force_d2 = vec![0.0; n];
            for i in 0..n {
                let (mut a, mut b) = (h * (1.0 - self.w) * f[i], h * self.w * f[i]);
                if reversed {
                    (a, b) = (b, a);
                }
                out.force_d1[i] = a;
                out.force_d2[i] = b;
                out.d1_total[i] += a;
                out.d2_total[i] += b;
                force_energy -= f[i] * q[i];
            }
        }
        for ((c, model), coordinates) in self
            .components
            .iter()
            .zip(&self.compiled)
            .zip(&self.coordinates)
        {
            let size = coordinates.len();
            if c.lagrangian == "0" {
                // a port of rows only: no Lagrangian term, no energy
                out.d1.push(vec![0.0; size]);
                out.d2.push(vec![0.0; size]);
                out.energy.push(0.0);
                continue;
            }
            let value = model.eval_split(&q, &v);
            let (mut d1, mut d2) = (Vec::with_capacity(size), Vec::with_capacity(size));
            let mut kinetic = 0.0;
            for &i in coordinates {
                qd[i] = qd[i].derivative();
                let lq = model.eval_split(&qd, &vd).eps;
                qd[i] = Dual64::from(q[i]);
                vd[i] = vd[i].derivative();
                let lv = model.eval_split(&qd, &vd).eps;
                vd[i] = Dual64::from(v[i]);
                kinetic += lv * v[i];
                let (mut a, mut b) = (h * (1.0 - self.w) * lq - lv, h * self.w * lq + lv);
                if reversed {
                    (a, b) = (b, a);
                }
                d1.push(a);
                d2.push(b);
                out.d1_total[i] += a;
                out.d2_total[i] += b;
            }
            out.d1.push(d1);
            out.d2.push(d2);
            out.energy.push(kinetic - value);
        }
        let scale = p1
            .iter()
            .chain(&out.d2_total)
            .fold(f64::MIN_POSITIVE, |m, x| m.max(x.abs()));
        let sign = self.sign();
        let mismatch = p1
            .iter()
            .zip(&out.d2_total)
            .fold(0.0f64, |m, (a, b)| m.max((sign * a - b).abs()));
        out.regular = stage.is_some() || mismatch <= IRREGULAR * scale;
        out.force_energy = force_energy;
        out
    }

    /// The next recorded step: step index `k`, time `t`, configuration
    /// `q`, momentum `p` and the runner's discrete energy of the step
    /// ending at `k`. Records must come every step; a gap starts the
    /// accounting afresh (the nodes missed are counted as skipped).
    pub fn record(&mut self, k: usize, t: f64, q: &[f64], p: &[f64], energy: f64) {
        if let Some((k_last, ..)) = self.window.last()
            && k_last.is_none_or(|k_last| k_last + 1 != k)
        {
            let missed = k_last.map_or(0, |k_last| k.saturating_sub(k_last + 1));
            self.skipped += missed + usize::from(self.last.is_some());
            self.window.clear();
            self.last = None;
        }
        let Some((_, t_prev, q_prev, _)) = self.window.last() else {
            self.window.push((Some(k), t, q.to_vec(), p.to_vec()));
            return;
        };
        let step = self.step((*t_prev, q_prev), (t, q), p, None);
        if step.regular {
            let total: f64 = step.energy.iter().sum::<f64>() + step.force_energy;
            let deviation = (total - energy).abs();
            self.sum_deviation = Some(self.sum_deviation.map_or(deviation, |d| d.max(deviation)));
        }
        self.take(step, Some(k), t, q, p);
    }

    /// Start a chain of a composed run's stages at the state `(t, q, p)`
    /// (the start of the run, or the end of a step with an impact, whose
    /// stages the accounting does not see): the last chain's end and
    /// this start are not interior nodes of either chain, so a restart
    /// counts them as skipped.
    pub fn start(&mut self, t: f64, q: &[f64], p: &[f64]) {
        if self.last.take().is_some() {
            self.skipped += 2;
        }
        self.window.clear();
        self.window.push((None, t, q.to_vec(), p.to_vec()));
    }

    /// The end `(t, q, p)` of the next stage of a composed step (orders 4
    /// and 6), of signed duration `tau`: the stages form a variational
    /// trajectory with steps of varying length and sign, accounted node by
    /// node like a run of order 2 (docs/theory.md §15.1). The runner's
    /// energy is that of the composed step, not of its stages: it is not
    /// compared with the parts' (`energy_sum_deviation_max`).
    pub fn stage(&mut self, tau: f64, t: f64, q: &[f64], p: &[f64]) {
        let Some((_, t_prev, q_prev, _)) = self.window.last() else {
            self.start(t, q, p);
            return;
        };
        let step = self.step((*t_prev, q_prev), (t, q), p, Some(tau));
        self.take(step, None, t, q, p);
    }

    /// Account the step `step` that ends at the record `(k, t, q, p)`.
    fn take(&mut self, step: StepValues, k: Option<usize>, t: f64, q: &[f64], p: &[f64]) {
        if self.first_energy.is_none() {
            self.first_energy = Some(step.energy.clone());
        }
        self.last_energy = Some(step.energy.clone());
        if let Some(before) = self.last.take() {
            if before.regular && step.regular {
                self.node(&before, &step, q);
            } else {
                self.skipped += 1;
            }
        }
        self.last = Some(step);
        if self.window.len() == 2 {
            self.window.remove(0);
        }
        self.window.push((k, t, q.to_vec(), p.to_vec()));
    }

    /// The node between the steps `before` (`q_{k−1} → q_k`) and `after`
    /// (`q_k → q_{k+1}`, `q_next = q_{k+1}`); the window holds `k−1`, `k`.
    fn node(&mut self, before: &StepValues, after: &StepValues, q_next: &[f64]) {
        let (q_back, (q_k, p_k)) = (&self.window[0].2, (&self.window[1].2, &self.window[1].3));
        let n = q_k.len();
        // the node's share of time: `h` (`(τ_− + τ_+)/2` between stages)
        let span = before.tau + after.tau;
        let vbar: Vec<f64> = (0..n).map(|i| (q_next[i] - q_back[i]) / span).collect();
        // the multipliers of the ports' row groups:
        // `A(q_k)ᵀ μ = π_k + D1 L_d(q_k, q_{k+1})`, group by group; between
        // stages, whose symmetric steps share their reactions between
        // both ends, the node's whole reaction
        // `A(q_k)ᵀ μ = D2 L_d(q_{k−1}, q_k) + D1 L_d(q_k, q_{k+1})`
        let mut mu = vec![0.0; self.full.m()];
        for group in &self.groups {
            let a = DMatrix::from_fn(group.coordinates.len(), group.rows.len(), |i, r| {
                self.full
                    .constraint(group.rows[r], group.coordinates[i], q_k)
            });
            let rhs = DVector::from_iterator(
                group.coordinates.len(),
                group.coordinates.iter().map(|&i| {
                    if after.stage {
                        before.d2_total[i] + after.d1_total[i]
                    } else {
                        self.sign() * p_k[i] + after.d1_total[i]
                    }
                }),
            );
            if let Ok(solved) = a.svd(true, true).solve(&rhs, 1e-13) {
                for (&r, x) in group.rows.iter().zip(solved.iter()) {
                    mu[r] = *x;
                }
            }
        }
        for (ci, c) in self.components.iter().enumerate() {
            if c.port.is_none() {
                continue;
            }
            let coordinates = &self.coordinates[ci];
            let impulse: Vec<f64> = if c.rows.is_empty() {
                (0..coordinates.len())
                    .map(|j| before.d2[ci][j] + after.d1[ci][j])
                    .collect()
            } else {
                coordinates
                    .iter()
                    .map(|&i| {
                        -c.rows
                            .iter()
                            .map(|&r| mu[r] * self.full.constraint(r, i, q_k))
                            .sum::<f64>()
                    })
                    .collect()
            };
            let mut sum = after.energy[ci] - before.energy[ci];
            let mut abs = 0.0;
            let mut at = 0;
            for (j, &part) in c.parts.iter().enumerate() {
                let range = self.ranges[part].clone();
                let w: f64 = range
                    .clone()
                    .zip(&impulse[at..at + range.len()])
                    .map(|(i, f)| f * vbar[i])
                    .sum();
                at += range.len();
                self.work[ci][j] += w;
                sum += w;
                abs += w.abs();
                if j == 0 {
                    self.power_max[ci] = self.power_max[ci].max(w.abs() / (0.5 * span.abs()));
                }
            }
            self.balance_max[ci] = self.balance_max[ci].max(sum.abs());
            self.work_scale[ci] = self.work_scale[ci].max(abs);
        }
        // The sources' work on their parts: the forces' impulse
        // `D2 L_d^F + D1 L_d^F`, a driven row's reaction `−μ_r A_r(q_k)`
        // (`A_r v̄ ≈ −ġ_r`: the work `μ_r ġ_r h` a current source does).
        if self.forced {
            for (part, range) in self.ranges.iter().enumerate() {
                self.source_work[part] += range
                    .clone()
                    .map(|i| (before.force_d2[i] + after.force_d1[i]) * vbar[i])
                    .sum::<f64>();
            }
        }
        for &(r, part) in &self.driven {
            self.source_work[part] -= mu[r]
                * self.ranges[part]
                    .clone()
                    .map(|i| self.full.constraint(r, i, q_k) * vbar[i])
                    .sum::<f64>();
        }
        self.nodes += 1;
    }

    /// `π = sign · p`: −1 for a backward run.
    fn sign(&self) -> f64 {
        if self.reversed { -1.0 } else { 1.0 }
    }

    /// The report over the steps recorded so far.
    pub fn report(&self) -> AccountingReport {
        let parts = self.part_names.len();
        let mut port_work = vec![0.0; parts];
        for (ci, c) in self.components.iter().enumerate() {
            if c.port.is_some() {
                for (j, &part) in c.parts.iter().enumerate() {
                    port_work[part] += self.work[ci][j];
                }
            }
        }
        let at = |e: &Option<Vec<f64>>, ci: usize| e.as_ref().map(|e| e[ci]);
        AccountingReport {
            parts: (0..parts)
                .map(|ci| {
                    let (e0, e1) = (at(&self.first_energy, ci), at(&self.last_energy, ci));
                    (
                        self.part_names[ci].clone(),
                        PartReport {
                            energy_initial: e0,
                            energy_final: e1,
                            port_work: port_work[ci],
                            source_work: self.source_work[ci],
                            unaccounted: e0
                                .zip(e1)
                                .map(|(a, b)| b - a - port_work[ci] - self.source_work[ci]),
                        },
                    )
                })
                .collect(),
            ports: self
                .components
                .iter()
                .enumerate()
                .filter_map(|(ci, c)| {
                    let kind = c.port?;
                    Some((
                        c.name.clone(),
                        PortReport {
                            kind: kind.as_str(),
                            parts: c
                                .parts
                                .iter()
                                .map(|&p| self.part_names[p].clone())
                                .collect(),
                            work: self.work[ci].clone(),
                            energy_initial: at(&self.first_energy, ci),
                            energy_final: at(&self.last_energy, ci),
                            power_max: self.power_max[ci],
                            balance_max: self.balance_max[ci],
                            work_scale: self.work_scale[ci],
                        },
                    ))
                })
                .collect(),
            nodes: self.nodes,
            nodes_skipped: self.skipped,
            energy_sum_deviation_max: self.sum_deviation,
        }
    }
}

/// The row groups of the ports with rows and of the driven rows: the parts
/// joined by components with rows (parts with constraints, transformers,
/// joints) fall into connected sets; each set's rows and coordinates form
/// one group, and only the sets holding a port's row or a part of
/// `driven_parts` (with a driven row) are kept.
fn row_groups(
    components: &[Component],
    ranges: &[std::ops::Range<usize>],
    driven_parts: &[usize],
) -> Vec<RowGroup> {
    fn find(root: &mut [usize], mut x: usize) -> usize {
        while root[x] != x {
            root[x] = root[root[x]];
            x = root[x];
        }
        x
    }
    let mut root: Vec<usize> = (0..ranges.len()).collect();
    for c in components.iter().filter(|c| !c.rows.is_empty()) {
        for pair in c.parts.windows(2) {
            let (a, b) = (find(&mut root, pair[0]), find(&mut root, pair[1]));
            root[a] = b;
        }
    }
    let of: Vec<usize> = (0..ranges.len()).map(|p| find(&mut root, p)).collect();
    // the group index of each needed root
    let mut index = vec![None; ranges.len()];
    let mut groups = Vec::new();
    let holding = components
        .iter()
        .filter(|c| c.port.is_some() && !c.rows.is_empty())
        .map(|c| c.parts[0])
        .chain(driven_parts.iter().copied());
    for part in holding {
        index[of[part]].get_or_insert_with(|| {
            groups.push(RowGroup {
                rows: Vec::new(),
                coordinates: Vec::new(),
            });
            groups.len() - 1
        });
    }
    for c in components {
        if let Some(g) = c.parts.first().and_then(|&p| index[of[p]]) {
            groups[g].rows.extend(&c.rows);
        }
    }
    for (p, range) in ranges.iter().enumerate() {
        if let Some(g) = index[of[p]] {
            groups[g].coordinates.extend(range.clone());
        }
    }
    groups
}
