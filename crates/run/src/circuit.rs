//! Circuits (a netlist or `lc-ladder`) through the runner: the circuit as
//! a [`DynSystem`](diracvi_geometry::dynamic::DynSystem) on the run-time
//! core of every model ([`DynRunner`]; docs/theory.md §8, §11): at order 2
//! the (±) Lagrange–Dirac step, degenerate with the forward map where the
//! circuit has loops of capacitors and voltage sources (their hidden
//! constraints come from the circuit graph), at orders 4 and 6 the
//! composed symmetric midpoint step (docs/theory.md §8.7, §9). Records go
//! into the same [`RecordSink`], the same [`RunOutcome`] and summary as
//! every model.
//!
//! What cannot run is refused, never relabelled: the Hamiltonian stepper (a
//! circuit's Lagrangian is degenerate), reduction (no symmetry), at orders
//! 4 and 6 loops of capacitors and voltage sources, derivatives of circuits
//! with sources that vary in time, and sensitivities to an element on a
//! loop (docs/theory.md §12.8). `--jacobian` and `--sensitivity` take the
//! element values (`L1`, `C2`, `V1`) as parameters. Sources are time-dependent terms and
//! drives of the circuit's `DynSystem` (docs/theory.md §8.8). At every
//! size the step, its energy measure and the constrained Legendre map
//! follow the circuit's sparse structure (docs/theory.md §8.7, §11.4).

use crate::dyn_runner::DynRunner;
use crate::start::INCONSISTENT_START_ABOVE;
use crate::{ModelSummary, RecordSink, RunError, RunOutcome, RunPlan, Stepper};
use diracvi_circuit::Circuit;
use diracvi_discrete_dirac::dynamic::DynConstrainedLegendre;
use diracvi_geometry::ConstraintDiscretization;
use diracvi_geometry::dynamic::drive_rate_dyn;
use diracvi_models::Scenario;
use diracvi_models::{DynModelVisitor, DynRunSetup};
use nalgebra::DVector;

/// Describe a circuit: its branch-charge coordinates, no boundary, its
/// Kirchhoff rows; no Hamiltonian (the Lagrangian is degenerate); algebraic
/// variables where it has loops of capacitors and voltage sources.
pub(crate) fn describe(circuit: &Circuit) -> ModelSummary {
    ModelSummary {
        coordinates: circuit.coordinate_names(),
        boundary_names: Vec::new(),
        constraints: circuit.node_count(),
        has_hamiltonian: false,
        regular_lagrangian: false,
        algebraic_variables: circuit.loop_count() > 0,
    }
}

/// Run a circuit scenario as `plan` says: the circuit as a
/// [`DynSystem`](diracvi_geometry::dynamic::DynSystem) on the run-time core
/// of every model ([`DynRunner`]), at order 2 from the netlist's charges
/// and inductor currents, at orders 4 and 6 (the composed symmetric
/// midpoint step) from the currents Kirchhoff's law gives every branch
/// (the constrained Legendre map).
pub(crate) fn execute(
    scenario: &Scenario,
    circuit: &Circuit,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
    progress: &mut dyn FnMut(usize),
) -> Result<RunOutcome, RunError> {
    let name = &scenario.model;
    let unsupported = |what: &'static str| RunError::CircuitUnsupported {
        model: name.clone(),
        what,
    };
    if plan.stepper == Stepper::Hamiltonian {
        return Err(RunError::NoHamiltonian {
            model: name.clone(),
        });
    }
    if plan.reduce {
        return Err(unsupported(
            "--reduce: a circuit declares no symmetry to reduce by",
        ));
    }
    let system = circuit.dyn_system(name);
    let start = circuit.initial_state();
    // Orders 4 and 6 start from the velocity the constrained Legendre map
    // gives (it passes the current sources' currents); order 2 from the
    // netlist's momenta (a loop's capacitor currents are left open).
    let (v0, momentum) = if plan.order.is_composed() {
        if circuit.loop_count() > 0 {
            return Err(unsupported(
                "orders 4 and 6 for a circuit with loops of capacitors and voltage sources \
                 (the composed step's energy needs the constrained Legendre map, which such \
                 a loop makes singular; use order 2)",
            ));
        }
        let rate = drive_rate_dyn(&system, 0.0);
        let (v0, _) = DynConstrainedLegendre::new(&system)
            .velocity_driven(&system, &start.q, &start.p, &rate)
            .map_err(|error| RunError::InitialState { error })?;
        (v0, None)
    } else {
        (
            DVector::from_column_slice(&scenario.initial.v),
            Some(start.p),
        )
    };
    // Kirchhoff's law is linear in the currents: every discrete constraint
    // is `A (q1 − q0) = 0`, which is the midpoint one.
    let setup = DynRunSetup {
        q0: start.q,
        v0,
        h: scenario.h,
        t_end: scenario.t_end,
        discretization: scenario.discretization,
        constraint: ConstraintDiscretization::Midpoint,
    };
    // Every run starts on the loops' voltage law (the forward map's (+)
    // step holds it to its Newton tolerance by itself; the (−) step and
    // the midpoint map would start from a violated loop without a word).
    let loops = violated_loops(circuit, setup.q0.as_slice(), INCONSISTENT_START_ABOVE);
    if !loops.is_empty() {
        return Err(RunError::InconsistentLoop {
            model: name.clone(),
            loops,
        });
    }
    DynRunner {
        plan,
        sink,
        progress,
        momentum,
    }
    .visit(&system, &setup)
    .map_err(|e| inconsistent_loops(e, circuit, name, setup.q0.as_slice()))
}

/// `e`, or — when the first step found its equations inconsistent and the
/// initial charges violate a loop's voltage law — the input error that
/// names the loop ([`RunError::InconsistentLoop`]).
fn inconsistent_loops(e: RunError, circuit: &Circuit, model: &str, q0: &[f64]) -> RunError {
    use diracvi_discrete_dirac::StepError;
    use diracvi_impact::ImpactError;
    let at_start = matches!(
        &e,
        RunError::Integration { error, .. }
            if error.step == 0
                && matches!(error.error, ImpactError::Step(StepError::Inconsistent { .. }))
    );
    if !at_start {
        return e;
    }
    let loops = violated_loops(circuit, q0, 1e-12);
    if loops.is_empty() {
        return e;
    }
    RunError::InconsistentLoop {
        model: model.to_owned(),
        loops,
    }
}

/// The loops of capacitors and voltage sources whose voltages at the
/// charges `q0` (and `t = 0`) sum to more than `relative` of the largest
/// of them (and of 1 V), each as its branches' voltages along the loop and
/// the sum; empty when none is.
fn violated_loops(circuit: &Circuit, q0: &[f64], relative: f64) -> String {
    let violated: Vec<String> = circuit
        .loop_voltages(q0, 0.0)
        .iter()
        .filter_map(|branches| {
            let sum: f64 = branches.iter().map(|(_, v)| v).sum();
            let scale = branches.iter().fold(0.0_f64, |m, (_, v)| m.max(v.abs()));
            (sum.abs() > relative * scale.max(1.0)).then(|| {
                let terms: Vec<String> = branches
                    .iter()
                    .map(|(name, v)| format!("{name} {v:+} V"))
                    .collect();
                format!("{} (sum {sum:+} V)", terms.join(", "))
            })
        })
        .collect();
    violated.join("; ")
}
