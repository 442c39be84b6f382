//! `diracvi run --system FILE.toml` and `diracvi show --system FILE.toml`:
//! a system file assembled into one model file (`diracvi-system`), then the
//! same run as every model file; the run's records also feed the energy
//! accounting of the parts and ports ([`Accounting`]).

use crate::output::{RecordSink, RecordView};
use anyhow::Result;
use diracvi_models::Scenario;
use diracvi_system::{Accounting, AccountingReport, System};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use std::path::Path;

/// The scenario of a system file: the assembled model, its `[run]` and
/// `[initial]` as the defaults; and the system (its parts and ports).
///
/// # Errors
/// A usage error naming the system file (or a part's file), key, line and
/// column.
pub fn scenario(path: &Path) -> Result<(Scenario, System)> {
    let system = System::from_path(path)?;
    Ok((Scenario::from_model(system.model().clone())?, system))
}

/// `diracvi show --system FILE`: the parts and ports, then the assembled
/// model file.
///
/// # Errors
/// As [`scenario`], or when stdout cannot be written.
pub fn show(path: &Path) -> Result<()> {
    crate::emit(&System::from_path(path)?.describe())
}

/// The accounting of a run of `system` as `scenario` sets it (its
/// parameters, step and discretization).
///
/// # Errors
/// A part's or port's Lagrangian does not compile with the scenario's
/// parameters.
pub fn accounting(system: &System, scenario: &Scenario) -> Result<Accounting> {
    let overrides: Vec<(String, f64)> = scenario
        .parameters
        .iter()
        .filter_map(|(name, value)| value.as_float().map(|v| (name.clone(), v)))
        .collect();
    let midpoint = scenario.discretization == diracvi_models::Discretization::Midpoint;
    Ok(Accounting::new(system, &overrides, scenario.h, midpoint)?)
}

impl RecordSink for AccountingSink {
    fn record(&mut self, r: &RecordView<'_>) {
        self.0.record(r.k, r.q, r.p, r.energy);
    }
}

/// A [`RecordSink`] feeding an [`Accounting`] (it needs every step).
pub struct AccountingSink(pub Accounting);

/// The sinks of a run recorded every `every` steps, fed from a run that
/// records every step (for the accounting): records `k` with
/// `k % every == 0` and the last (`k == steps`), as the runner would.
pub struct Decimate<'a> {
    /// The sinks.
    pub inner: Vec<&'a mut dyn RecordSink>,
    /// Every how many steps.
    pub every: usize,
    /// The number of steps.
    pub steps: usize,
}

impl RecordSink for Decimate<'_> {
    fn record(&mut self, r: &RecordView<'_>) {
        if r.k.is_multiple_of(self.every) || r.k == self.steps {
            self.inner.record(r);
        }
    }
}

/// The summary's `parts`, `ports` and `accounting` keys
/// (docs/summary.schema.json).
pub struct AccountingJson<'a>(pub &'a AccountingReport);

/// A list of `(name, value)` as a JSON object in that order.
struct Named<'a, T>(&'a [(String, T)]);

impl<T: Serialize> Serialize for Named<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl AccountingJson<'_> {
    /// `parts`: by part name.
    pub fn parts(&self) -> serde_json::Value {
        serde_json::to_value(Named(&self.0.parts)).unwrap_or_default()
    }

    /// `ports`: by port name, the work by part name.
    pub fn ports(&self) -> serde_json::Value {
        let ports: Vec<(String, serde_json::Value)> = self
            .0
            .ports
            .iter()
            .map(|(name, p)| {
                let work: Vec<(String, f64)> = p
                    .parts
                    .iter()
                    .cloned()
                    .zip(p.work.iter().copied())
                    .collect();
                let mut v = serde_json::to_value(p).unwrap_or_default();
                if let Some(o) = v.as_object_mut() {
                    o.remove("parts");
                    o.insert(
                        "work".to_owned(),
                        serde_json::to_value(Named(&work)).unwrap_or_default(),
                    );
                }
                (name.clone(), v)
            })
            .collect();
        serde_json::to_value(Named(&ports)).unwrap_or_default()
    }

    /// `accounting`: the nodes counted and skipped, the energies' sum.
    pub fn accounting(&self) -> serde_json::Value {
        serde_json::json!({
            "nodes": self.0.nodes,
            "nodes_skipped": self.0.nodes_skipped,
            "energy_sum_deviation_max": self.0.energy_sum_deviation_max,
        })
    }
}

/// The text summary's lines of the parts and ports.
pub fn text_lines(r: &AccountingReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let num = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |x| format!("{x:.6e}"));
    for (name, p) in &r.parts {
        let _ = writeln!(
            s,
            "part {name}: energy {} -> {}, work of its ports {:.6e}, unaccounted {}",
            num(p.energy_initial),
            num(p.energy_final),
            p.port_work,
            num(p.unaccounted)
        );
    }
    for (name, p) in &r.ports {
        let work: Vec<String> = p
            .parts
            .iter()
            .zip(&p.work)
            .map(|(part, w)| format!("{w:.6e} on {part}"))
            .collect();
        let _ = writeln!(
            s,
            "port {name} ({}): work {}, max power {:.6e}, balance {:.3e} of {:.3e} per step",
            p.kind,
            work.join(", "),
            p.power_max,
            p.balance_max,
            p.work_scale
        );
    }
    if r.nodes_skipped > 0 {
        let _ = writeln!(
            s,
            "parts and ports: {} steps accounted, {} next to impacts not",
            r.nodes, r.nodes_skipped
        );
    }
    s
}
