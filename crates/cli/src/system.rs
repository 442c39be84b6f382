//! `diracvi run --system FILE.toml` and `diracvi show --system FILE.toml`:
//! a system file assembled into one model file (`diracvi-system`), then the
//! same run as every model file.

use anyhow::Result;
use diracvi_models::Scenario;
use diracvi_system::System;
use std::path::Path;

/// The scenario of a system file: the assembled model, its `[run]` and
/// `[initial]` as the defaults.
///
/// # Errors
/// A usage error naming the system file (or a part's file), key, line and
/// column.
pub fn scenario(path: &Path) -> Result<Scenario> {
    Ok(Scenario::from_model(System::from_path(path)?.into_model())?)
}

/// `diracvi show --system FILE`: the parts and ports, then the assembled
/// model file.
///
/// # Errors
/// As [`scenario`], or when stdout cannot be written.
pub fn show(path: &Path) -> Result<()> {
    crate::emit(&System::from_path(path)?.describe())
}
