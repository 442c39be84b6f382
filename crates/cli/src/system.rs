//! `diracvi run --system FILE.toml` and `diracvi show --system FILE.toml`:
//! a system file assembled into one model file (`diracvi-system`), then the
//! same run as every model file; the runner accounts the energy of the
//! parts and the work of the ports (`diracvi_run::PartsAccounting`), and
//! the text summary prints them ([`text_lines`]).

use anyhow::Result;
use diracvi_models::Scenario;
use diracvi_system::{AccountingReport, System};
use std::path::Path;

/// The scenario of a system file: the assembled model, its `[run]` and
/// `[initial]` as the defaults, keeping the system (its parts and ports)
/// for the runner's energy accounting.
///
/// # Errors
/// A usage error naming the system file (or a part's file), key, line and
/// column.
pub fn scenario(path: &Path) -> Result<Scenario> {
    Ok(Scenario::from_system(System::from_path(path)?)?)
}

/// `diracvi show --system FILE`: the parts and ports, then the assembled
/// model file.
///
/// # Errors
/// As [`scenario`], or when stdout cannot be written.
pub fn show(path: &Path) -> Result<()> {
    crate::emit(&System::from_path(path)?.describe())
}

/// The text summary's lines of the parts and ports.
pub fn text_lines(r: &AccountingReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let num = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |x| format!("{x:.6e}"));
    for (name, p) in &r.parts {
        let sources = if p.source_work == 0.0 {
            String::new()
        } else {
            format!(", work of its sources {:.6e}", p.source_work)
        };
        let _ = writeln!(
            s,
            "part {name}: energy {} -> {}, work of its ports {:.6e}{sources}, unaccounted {}",
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
