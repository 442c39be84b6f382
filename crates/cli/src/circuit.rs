//! `diracvi run --netlist FILE.cir`: a SPICE-subset netlist as a scenario
//! ([`Scenario::from_netlist_file`]), then the same run as every model
//! (`diracvi-run`: the run-time core's Lagrange–Dirac stepper, the usual
//! outputs and summary). `lc-ladder` needs nothing here: it is a scenario by name.

use crate::args::RunArgs;
use anyhow::{Result, anyhow, bail};
use diracvi_models::Scenario;

/// The scenario of `--netlist`: a general circuit has no default step, so
/// `--h` is required, with `--t-end` or `--steps` (then `t_end = steps·h`);
/// with `--tol`, `--h` is the step the pilot runs start from (as a
/// scenario file's `h` beside its `tol`).
///
/// # Errors
/// A usage error for a missing `--h`/`--t-end`, a model or `--set`
/// alongside, or a netlist that cannot be read or solved (with its line).
pub fn netlist_scenario(args: &RunArgs) -> Result<Option<Scenario>> {
    let Some(path) = &args.netlist else {
        return Ok(None);
    };
    let h = args.h.ok_or_else(|| {
        anyhow!(
            "--netlist needs --h (and --t-end or --steps): a general circuit has no default step \
             (with --tol, --h is the step the pilot runs start from)"
        )
    })?;
    let t_end = match (args.t_end, args.steps) {
        (Some(t), _) => t,
        (None, Some(n)) => n as f64 * h,
        (None, None) => bail!("--netlist needs --t-end or --steps"),
    };
    Ok(Some(Scenario::from_netlist_file(path, h, t_end)?))
}
