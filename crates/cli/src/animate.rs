//! `--animate FILE.svg` and `--poster FILE.svg|FILE.png`: the checks of the
//! paths and of the model before the run, and the staged files of the
//! pictures `diracvi-plot` draws ([`diracvi_plot::animate`]).

use crate::output::{Staged, Target, output_failure};
use anyhow::{Result, anyhow, bail};
use diracvi_models::{Scenario, catalogue};
pub use diracvi_plot::animate::{AnimationCollector, DEFAULT_POSTER_FRAMES, MAX_POSTER_FRAMES};
use diracvi_plot::animate::{PosterFormat, render_animation};
use diracvi_run::ImpactRecord;
use std::io::Write as _;
use std::path::Path;

/// Check `--animate`'s extension and path (before the run).
///
/// # Errors
/// A usage error naming the path.
pub fn check(path: &Path) -> Result<Target> {
    crate::output::check_svg(path, "--animate", "animate")
}

/// Check `--poster`'s extension (`.svg` or `.png`) and path (before the
/// run), and that it is not the animation's path.
///
/// # Errors
/// A usage error naming the path.
pub fn check_poster(path: &Path, animation: Option<&Path>, frames: usize) -> Result<Target> {
    if !(1..=MAX_POSTER_FRAMES).contains(&frames) {
        bail!("--poster-frames must be between 1 and {MAX_POSTER_FRAMES}, got {frames}");
    }
    if animation == Some(path) {
        bail!(
            "--poster '{}' is also the --animate file: give the poster its own file",
            path.display()
        );
    }
    match crate::output::extension(path).as_deref() {
        Some("svg" | "png") => Target::check(path, "--poster"),
        _ => bail!(
            "cannot draw a poster to '{}': --poster writes SVG or PNG, use a .svg or .png file",
            path.display()
        ),
    }
}

/// Refuse `--animate` (a usage error) for a model without a drawing.
///
/// # Errors
/// A usage error naming the model and how to give it a drawing (a model
/// file) or the models that can be animated (the catalogue).
pub fn check_drawable(scenario: &Scenario) -> Result<()> {
    if scenario.circuit.is_some() {
        return Err(no_circuits());
    }
    if scenario.has_picture()? {
        return Ok(());
    }
    if let Some(file) = &scenario.file {
        bail!(
            "--animate: model file '{}' has no [drawing] table, no orientation and no coordinates named x and y to show: declare a drawing, e.g. [[drawing.body]] with kind = \"point\", x = \"l*sin(theta)\", y = \"-l*cos(theta)\" (see docs/model-files.md, section Drawing)",
            file.path
        );
    }
    let drawable: Vec<&str> = catalogue()
        .iter()
        .filter(|m| {
            Scenario::defaults(m.name)
                .and_then(|s| s.has_picture())
                .unwrap_or(false)
        })
        .map(|m| m.name)
        .collect();
    bail!(
        "--animate: model '{}' has no planar drawing (models with one: {})",
        scenario.model,
        drawable.join(", ")
    )
}

/// The error of `--animate` with a circuit.
fn no_circuits() -> anyhow::Error {
    anyhow!("--animate is not available for circuits (a circuit has no planar drawing)")
}

/// Write `bytes` into a staged file and flush it to disk.
fn write_staged(mut file: Staged, bytes: &[u8]) -> Result<Staged> {
    let target = file.target().to_path_buf();
    file.file()
        .write_all(bytes)
        .and_then(|()| file.file().flush())
        .map_err(|e| output_failure(&target, e))?;
    file.sync()?;
    Ok(file)
}

/// Draw the collected frames and the impacts of `scenario`'s run into
/// `file` (and a strip of `poster.1` frames into `poster.0`: SVG, or PNG
/// for a `.png` target), flushed to disk, ready to commit.
///
/// # Errors
/// An [`OutputFailure`](crate::OutputFailure): a model whose body changes
/// shape between frames, a non-finite coordinate, a write that fails.
pub fn render(
    collector: AnimationCollector,
    scenario: &Scenario,
    impacts: &[ImpactRecord],
    file: Staged,
    poster: Option<(Staged, usize)>,
) -> Result<Vec<Staged>> {
    let format = poster.as_ref().map(|(file, count)| {
        let format = match crate::output::extension(file.target()).as_deref() {
            Some("png") => PosterFormat::Png,
            _ => PosterFormat::Svg,
        };
        (format, *count)
    });
    let pictures = render_animation(collector, &scenario.model, scenario, impacts, format)
        .map_err(|e| anyhow::Error::new(crate::OutputFailure(e.to_string())))?;
    let mut out = vec![write_staged(file, pictures.svg.as_bytes())?];
    if let (Some((file, _)), Some(bytes)) = (poster, pictures.poster) {
        out.push(write_staged(file, &bytes)?);
    }
    Ok(out)
}
