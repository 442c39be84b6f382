//! What the circuit benches share: the ladder they time.

use diracvi_circuit::netlist::Netlist;
use std::f64::consts::PI;

/// The LC ladder of `cells` cells (unit elements) started in its first
/// mode: capacitor voltages `sin(jπ/(cells + 1))`.
pub fn ladder(cells: usize) -> Netlist {
    let v0: Vec<f64> = (1..=cells)
        .map(|j| (j as f64 * PI / (cells as f64 + 1.0)).sin())
        .collect();
    Netlist::ladder(cells, 1.0, 1.0, &v0)
}
