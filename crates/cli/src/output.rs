//! Trajectory writers (docs/theory.md §6): CSV with a header naming the
//! model's coordinates, or JSON; streamed into staged files (temporaries
//! next to the targets, [`mod@commit`]) that the run renames into place only
//! when everything succeeded.

pub mod commit;

pub use commit::{
    Staged, Target, available_space, commit, remove_temporaries, remove_temporaries_waiting,
};

use crate::OutputFailure;
use anyhow::{Result, bail};
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

pub use diracvi_run::{ImpactRecord, RecordSink, RecordView};
use diracvi_run::{TrajectoryFormat, TrajectoryWriter as RunWriter, write_impacts_csv};

/// Output format of `--out`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values (plus `<stem>.impacts.csv`).
    Csv,
    /// One JSON document `{"records": [...], "impacts": [...]}`.
    Json,
}

/// The lower-case extension of `path`, if any.
pub fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

/// Check an SVG output path given to `flag` (before the run): a `.svg`
/// extension, then [`Target::check`]; `verb` says what the flag does
/// ("plot", "animate").
///
/// # Errors
/// A usage error naming the path.
pub fn check_svg(path: &Path, flag: &str, verb: &str) -> Result<Target> {
    if extension(path).as_deref() != Some("svg") {
        bail!(
            "cannot {verb} to '{}': {flag} writes SVG, use a .svg file",
            path.display()
        );
    }
    Target::check(path, flag)
}

/// `<dir>/<stem>.impacts.csv` next to `path`, keeping the stem's bytes as
/// they are (any file name the OS accepts, UTF-8 or not).
pub fn impacts_path(path: &Path) -> PathBuf {
    let mut name = path.file_stem().map(OsString::from).unwrap_or_default();
    name.push(".impacts.csv");
    path.with_file_name(name)
}

/// Set when a record could not be written, so the step loop can stop the
/// run at once instead of integrating to the end for nothing.
static WRITE_FAILED: AtomicBool = AtomicBool::new(false);
/// The message of that failure.
static WRITE_FAILURE: Mutex<Option<String>> = Mutex::new(None);

fn note_write_failure(message: String) {
    let mut slot = WRITE_FAILURE.lock().unwrap_or_else(PoisonError::into_inner);
    slot.get_or_insert(message);
    WRITE_FAILED.store(true, Ordering::Relaxed);
}

/// If writing an output failed during the run: remove the temporary files,
/// report it and exit with status 1 (called from the step loop).
pub fn exit_if_write_failed() {
    if WRITE_FAILED.load(Ordering::Relaxed) {
        let message = WRITE_FAILURE
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_else(|| "cannot write an output".into());
        remove_temporaries();
        crate::error_line(&message);
        std::process::exit(1);
    }
}

/// The checked targets of `--out`: the trajectory and, for CSV, its
/// impacts file.
#[derive(Debug, Clone)]
pub struct OutTargets {
    format: Format,
    trajectory: Target,
    impacts: Option<Target>,
}

impl OutTargets {
    /// Check `--out PATH`: the format from the extension, and both paths.
    ///
    /// # Errors
    /// A usage error naming the path.
    pub fn check(path: &Path) -> Result<OutTargets> {
        let format = match extension(path).as_deref() {
            Some("csv") => Format::Csv,
            Some("json") => Format::Json,
            _ => bail!(
                "cannot tell the output format of '{}': --out needs a .csv or .json file",
                path.display()
            ),
        };
        let trajectory = Target::check(path, "--out")?;
        let impacts = match format {
            Format::Csv => Some(Target::check(
                &impacts_path(path),
                "--out (its impacts file)",
            )?),
            Format::Json => None,
        };
        Ok(OutTargets {
            format,
            trajectory,
            impacts,
        })
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The trajectory's target.
    pub fn trajectory(&self) -> &Target {
        &self.trajectory
    }

    /// The impacts file's target (CSV).
    pub fn impacts(&self) -> Option<&Target> {
        self.impacts.as_ref()
    }
}

/// `--out`: streams records as they are produced into staged files, in
/// the formats of [`diracvi_run::TrajectoryWriter`] (shared with library
/// runs, so both write the same bytes).
#[derive(Debug)]
pub struct TrajectoryWriter {
    inner: RunWriter<BufWriter<File>>,
    file: Staged,
    impacts: Option<Staged>,
    coordinates: Vec<String>,
}

impl TrajectoryWriter {
    /// Stage the files of `targets`. `model` and `coordinates` go into the
    /// JSON document's header fields and the CSV header.
    ///
    /// # Errors
    /// A usage error when a file cannot be created; an [`OutputFailure`]
    /// when the header cannot be written.
    pub fn create(targets: &OutTargets, model: &str, coordinates: &[String]) -> Result<Self> {
        let mut file = Staged::create(targets.trajectory())?;
        let impacts = targets.impacts().map(Staged::create).transpose()?;
        let handle = file
            .file()
            .try_clone()
            .map_err(|e| output_failure(targets.trajectory().path(), e))?;
        let format = match targets.format() {
            Format::Csv => TrajectoryFormat::Csv,
            Format::Json => TrajectoryFormat::Json,
        };
        let w = Self {
            inner: RunWriter::new(BufWriter::new(handle), format, model, coordinates),
            file,
            impacts,
            coordinates: coordinates.to_vec(),
        };
        w.note_error();
        Ok(w)
    }

    /// The trajectory file's path.
    pub fn path(&self) -> &Path {
        self.file.target()
    }

    /// Note a write error of the trajectory (so the step loop stops).
    fn note_error(&self) {
        if let Some(e) = self.inner.error() {
            note_write_failure(format!("cannot write '{}': {e}", self.path().display()));
        }
    }

    /// Write the impacts, close the document, flush everything to disk and
    /// hand back the staged files to commit (the impacts file first).
    ///
    /// # Errors
    /// An [`OutputFailure`] naming the file that could not be written.
    pub fn finish(self, impacts: &[ImpactRecord]) -> Result<Vec<Staged>> {
        let Self {
            inner,
            mut file,
            impacts: impacts_file,
            coordinates,
        } = self;
        let out = inner
            .finish(impacts)
            .map_err(|e| output_failure(file.target(), e))?;
        drop(out);
        let mut staged = Vec::new();
        if let Some(mut imp) = impacts_file {
            let target = imp.target().to_path_buf();
            let mut w = BufWriter::new(imp.file());
            write_impacts_csv(&mut w, &coordinates, impacts)
                .and_then(|()| w.flush())
                .map_err(|e| output_failure(&target, e))?;
            drop(w);
            imp.sync()?;
            staged.push(imp);
        }
        file.sync()?;
        staged.push(file);
        Ok(staged)
    }
}

/// An [`OutputFailure`] for `path`.
pub fn output_failure(path: &Path, e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(OutputFailure(format!(
        "cannot write '{}': {e}",
        path.display()
    )))
}

impl RecordSink for TrajectoryWriter {
    fn record(&mut self, r: &RecordView<'_>) {
        if self.inner.error().is_some() {
            return;
        }
        self.inner.record(r);
        self.note_error();
    }
}

/// A lower bound on the bytes of `records` records of `n` coordinates in
/// `format` (each number at least 8 characters with its separator, JSON
/// keys besides), for the free-space check before a run.
pub fn min_bytes(format: Format, records: f64, n: usize) -> f64 {
    let numbers = (2 * n + 4) as f64;
    let per_record = match format {
        Format::Csv => 8.0 * numbers,
        Format::Json => 8.0 * numbers + 60.0,
    };
    records * per_record
}
