//! Circuits (a netlist or `lc-ladder`) through the runner: at order 2 the
//! sparse (±) Lagrange–Dirac stepper of `diracvi-circuit` (docs/theory.md
//! §8) driven step by step; at orders 4 and 6 the circuit as a
//! [`DynSystem`](diracvi_geometry::dynamic::DynSystem) on the run-time core
//! of every model ([`DynRunner`]: the composed symmetric midpoint step,
//! docs/theory.md §8.7, §9). Records go into the same [`RecordSink`], the
//! same [`RunOutcome`] and summary as every model, with the core that ran.
//!
//! What cannot run is refused, never relabelled: the Hamiltonian stepper (a
//! circuit's Lagrangian is degenerate), tangents (degenerate steps),
//! reduction (no symmetry), and at orders 4 and 6 loops of capacitors and
//! voltage sources. Sources are time-dependent terms and drives of the
//! circuit's `DynSystem` (docs/theory.md §8.8). At every size: the
//! composed step and its energy measure (the constrained Legendre map)
//! both follow the circuit's sparse structure (docs/theory.md §8.7, §11.4).

use crate::dyn_runner::DynRunner;
use crate::{
    Core, Method, ModelSummary, RecordSink, RecordView, RunError, RunOutcome, RunPlan, Stepper,
};
use diracvi_circuit::Circuit;
use diracvi_discrete_dirac::StepError;
use diracvi_discrete_dirac::dynamic::DynConstrainedLegendre;
use diracvi_geometry::dynamic::drive_rate_dyn;
use diracvi_geometry::{ConstraintDiscretization, Discretization};
use diracvi_impact::ImpactError;
use diracvi_models::Scenario;
use diracvi_models::{DynModelVisitor, DynRunSetup};
use nalgebra::DVector;
use std::time::Instant;

/// Describe a circuit: its branch-charge coordinates, no boundary, its
/// Kirchhoff rows; no Hamiltonian (the Lagrangian is degenerate).
pub(crate) fn describe(circuit: &Circuit) -> ModelSummary {
    ModelSummary {
        coordinates: circuit.coordinate_names(),
        boundary_names: Vec::new(),
        constraints: circuit.node_count(),
        has_hamiltonian: false,
        regular_lagrangian: false,
    }
}

/// A circuit at orders 4 and 6: its [`DynSystem`](diracvi_geometry::dynamic::DynSystem)
/// form on the run-time core, from the circuit's initial charges and
/// momenta (the currents of capacitors and sources solved from Kirchhoff's
/// law, as the constrained Legendre map gives them).
fn composed(
    scenario: &Scenario,
    circuit: &Circuit,
    plan: RunPlan,
    sink: &mut dyn RecordSink,
    progress: &mut dyn FnMut(usize),
) -> Result<RunOutcome, RunError> {
    let name = &scenario.model;
    let system = circuit.dyn_system(name);
    if circuit.loop_count() > 0 {
        return Err(RunError::CircuitUnsupported {
            model: name.clone(),
            what: "orders 4 and 6 for a circuit with loops of capacitors and voltage sources \
                   (the composed step's energy needs the constrained Legendre map, which such \
                   a loop makes singular; use order 2)",
        });
    }
    let start = circuit.initial_state();
    // The velocity passes the current sources' currents at the start.
    let rate = drive_rate_dyn(&system, 0.0);
    let (v0, _) = DynConstrainedLegendre::new(&system)
        .velocity_driven(&system, &start.q, &start.p, &rate)
        .map_err(|error| RunError::InitialState { error })?;
    let setup = DynRunSetup {
        q0: start.q,
        v0,
        h: scenario.h,
        t_end: scenario.t_end,
        discretization: Discretization::Midpoint,
        constraint: ConstraintDiscretization::Midpoint,
    };
    DynRunner {
        plan,
        sink,
        progress,
    }
    .visit(&system, &setup)
}

/// Run a circuit scenario as `plan` says.
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
    if plan.jacobian || plan.tangents {
        return Err(RunError::JacobianUnsupported {
            model: name.clone(),
            what: "for circuits (a degenerate Lagrangian; the sparse stepper has no tangent map)"
                .to_owned(),
        });
    }
    if !plan.sensitivity.is_empty() {
        return Err(RunError::SensitivityUnsupported {
            model: name.clone(),
            what: "for circuits (a degenerate Lagrangian; the sparse stepper has no tangent map)"
                .to_owned(),
        });
    }
    if plan.reduce {
        return Err(unsupported(
            "--reduce: a circuit declares no symmetry to reduce by",
        ));
    }
    // Kirchhoff's law is linear in the currents: every discrete constraint
    // is `A (q1 − q0) = 0`, which is the midpoint one.
    let method = Method::planned(
        &plan,
        scenario.discretization,
        ConstraintDiscretization::Midpoint,
        true,
        Core::Sparse,
    );
    method.check()?;
    if method.order.is_composed() {
        return composed(scenario, circuit, plan, sink, progress);
    }
    let failed = |error: StepError| RunError::Integration {
        model: name.clone(),
        error: ImpactError::Step(error),
    };
    let mut stepper = circuit
        .stepper(method.discretization, method.direction)
        .map_err(|error| {
            RunError::Model(diracvi_models::ModelError::Circuit {
                source_name: name.clone(),
                error,
            })
        })?;
    let mut state = circuit.initial_state();
    let mut next = state.clone();
    let h = scenario.h;
    let start = Instant::now();
    let v0 = DVector::from_column_slice(&scenario.initial.v);
    // A run of zero steps reports the energy of the initial data.
    let rest_energy = circuit
        .system(method.discretization)
        .map(|s| s.energy(&state.q, &v0, state.t))
        .unwrap_or(f64::NAN);
    let mut o = RunOutcome {
        steps: plan.steps,
        initial_energy: rest_energy,
        final_energy: rest_energy,
        max_abs_energy_deviation: 0.0,
        energy_scale: rest_energy.abs(),
        driven: {
            use diracvi_geometry::dynamic::DynSystem;
            circuit.dyn_system(&scenario.model).time_dependent()
        },
        max_constraint_residual: 0.0,
        final_t: state.t,
        final_q: Vec::new(),
        final_p: Vec::new(),
        newton_iterations: 0,
        jacobian_evaluations: 0,
        root_iterations: 0,
        post_impact_iterations: 0,
        degenerate_steps: 0,
        impacts: Vec::new(),
        wall_time: Default::default(),
        reduction: None,
        method,
        jacobian: None,
        sensitivity: Vec::new(),
        tangents: None,
        accounting: None,
        invariants: Vec::new(),
    };
    let record = |sink: &mut dyn RecordSink, k, s: &diracvi_discrete_dirac::DynState, e, r| {
        sink.record(&RecordView {
            k,
            t: s.t,
            q: s.q.as_slice(),
            p: s.p.as_slice(),
            energy: e,
            constraint_residual: r,
        })
    };
    let every = plan.every;
    if plan.steps == 0 && every > 0 {
        record(sink, 0, &state, rest_energy, 0.0);
    }
    for k in 0..plan.steps {
        let info = stepper.step_into(k, &state, h, &mut next).map_err(failed)?;
        if k == 0 {
            o.initial_energy = info.energy;
            o.energy_scale = info.energy.abs();
            if every > 0 {
                record(sink, 0, &state, info.energy, 0.0);
            }
        }
        std::mem::swap(&mut state, &mut next);
        o.final_energy = info.energy;
        o.max_abs_energy_deviation = o
            .max_abs_energy_deviation
            .max((info.energy - o.initial_energy).abs());
        let residual = info.constraint_residual / state.q.amax().max(1.0);
        o.max_constraint_residual = o.max_constraint_residual.max(residual);
        o.newton_iterations += info.stats.iterations;
        o.jacobian_evaluations += info.stats.jacobian_evaluations;
        if every > 0 && ((k + 1) % every == 0 || k + 1 == plan.steps) {
            record(sink, k + 1, &state, info.energy, residual);
        }
        progress(k + 1);
    }
    o.final_t = state.t;
    o.final_q = state.q.as_slice().to_vec();
    o.final_p = state.p.as_slice().to_vec();
    o.wall_time = start.elapsed();
    Ok(o)
}
