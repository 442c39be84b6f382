//! Trajectory writers (docs/theory.md §6): CSV with a header naming the
//! model's coordinates, or JSON; streamed into staged files (temporaries
//! next to the targets, [`mod@commit`]) that the run renames into place only
//! when everything succeeded.

pub mod commit;

pub use commit::{Staged, Target, available_space, commit, remove_temporaries};

use crate::OutputFailure;
use anyhow::{Result, bail};
use serde::Serialize;
use std::collections::HashSet;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

pub use diracvi_run::{ImpactRecord, RecordSink, RecordView};

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

/// The CSV columns of `n` coordinates named `names`: each name, then
/// `p_<name>` for the trajectory, or `<name>`, `p_before_<name>`,
/// `p_after_<name>` for the impacts. Falls back to `q0, …, p0, …` when the
/// names do not fit a CSV header (wrong count, empty, a comma, a quote or a
/// line break, two equal columns).
fn columns(names: &[String], n: usize, prefixes: &[(&str, &str)], fixed: &[&str]) -> Vec<String> {
    let named: Vec<String> = prefixes
        .iter()
        .flat_map(|(named, _)| names.iter().map(move |c| format!("{named}{c}")))
        .collect();
    let usable = names.len() == n
        && names
            .iter()
            .all(|c| !c.is_empty() && !c.contains([',', '"', '\n', '\r']))
        && {
            let mut seen: HashSet<&str> = fixed.iter().copied().collect();
            named.iter().all(|c| seen.insert(c))
        };
    if usable {
        named
    } else {
        prefixes
            .iter()
            .flat_map(|(_, indexed)| (0..n).map(move |i| format!("{indexed}{i}")))
            .collect()
    }
}

/// `--out`: streams records as they are produced into staged files.
#[derive(Debug)]
pub struct TrajectoryWriter {
    format: Format,
    out: BufWriter<File>,
    file: Staged,
    impacts: Option<Staged>,
    coordinates: Vec<String>,
    records: usize,
    error: Option<io::Error>,
    line: String,
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
        let mut w = Self {
            format: targets.format(),
            out: BufWriter::new(handle),
            file,
            impacts,
            coordinates: coordinates.to_vec(),
            records: 0,
            error: None,
            line: String::new(),
        };
        let head = match w.format {
            Format::Json => format!(
                "{{\"model\": {}, \"coordinates\": {}, \"records\": [",
                serde_json::to_string(model)?,
                serde_json::to_string(coordinates)?
            ),
            Format::Csv => {
                let n = coordinates.len();
                let mut h = String::from("k,t");
                for c in columns(
                    coordinates,
                    n,
                    &[("", "q"), ("p_", "p")],
                    &["k", "t", "energy", "constraint_residual"],
                ) {
                    let _ = write!(h, ",{c}");
                }
                h.push_str(",energy,constraint_residual\n");
                h
            }
        };
        w.write(head.as_bytes());
        Ok(w)
    }

    /// The trajectory file's path.
    pub fn path(&self) -> &Path {
        self.file.target()
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.out.write_all(bytes)
        {
            note_write_failure(format!("cannot write '{}': {e}", self.path().display()));
            self.error = Some(e);
        }
    }

    /// Write the impacts, close the document, flush everything to disk and
    /// hand back the staged files to commit (the impacts file first).
    ///
    /// # Errors
    /// An [`OutputFailure`] naming the file that could not be written.
    pub fn finish(mut self, impacts: &[ImpactRecord]) -> Result<Vec<Staged>> {
        if self.format == Format::Json {
            let mut tail = String::from("\n], \"impacts\": [");
            for (i, imp) in impacts.iter().enumerate() {
                tail.push_str(if i == 0 { "\n" } else { ",\n" });
                tail.push_str(&serde_json::to_string(imp)?);
            }
            tail.push_str("\n]}\n");
            self.write(tail.as_bytes());
        }
        if self.error.is_none()
            && let Err(e) = self.out.flush()
        {
            self.error = Some(e);
        }
        if let Some(e) = self.error.take() {
            return Err(output_failure(self.path(), e));
        }
        let mut staged = Vec::new();
        if let Some(mut file) = self.impacts.take() {
            let target = file.target().to_path_buf();
            let mut w = BufWriter::new(file.file());
            write_impacts_csv(&mut w, &self.coordinates, impacts)
                .and_then(|()| w.flush())
                .map_err(|e| output_failure(&target, e))?;
            drop(w);
            file.sync()?;
            staged.push(file);
        }
        let Self { out, mut file, .. } = self;
        drop(out);
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
        if self.error.is_some() {
            return;
        }
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        match self.format {
            Format::Csv => {
                let _ = write!(line, "{},{:?}", r.k, r.t);
                for x in r.q.iter().chain(r.p) {
                    let _ = write!(line, ",{x:?}");
                }
                let _ = writeln!(line, ",{:?},{:?}", r.energy, r.constraint_residual);
            }
            Format::Json => {
                #[derive(Serialize)]
                struct Json<'a> {
                    k: usize,
                    t: f64,
                    q: &'a [f64],
                    p: &'a [f64],
                    energy: f64,
                    constraint_residual: f64,
                }
                line.push_str(if self.records == 0 { "\n" } else { ",\n" });
                let json = serde_json::to_string(&Json {
                    k: r.k,
                    t: r.t,
                    q: r.q,
                    p: r.p,
                    energy: r.energy,
                    constraint_residual: r.constraint_residual,
                });
                match json {
                    Ok(s) => line.push_str(&s),
                    Err(e) => {
                        note_write_failure(format!(
                            "cannot write '{}': {e}",
                            self.path().display()
                        ));
                        self.error = Some(io::Error::other(e));
                        return;
                    }
                }
            }
        }
        self.records += 1;
        self.write(line.as_bytes());
        self.line = line;
    }
}

fn write_impacts_csv(
    w: &mut impl Write,
    coordinates: &[String],
    impacts: &[ImpactRecord],
) -> io::Result<()> {
    let n = coordinates.len();
    let mut h = String::from("step,alpha,t,piece");
    for c in columns(
        coordinates,
        n,
        &[
            ("", "q"),
            ("p_before_", "p_before"),
            ("p_after_", "p_after"),
        ],
        &[
            "step",
            "alpha",
            "t",
            "piece",
            "energy_before",
            "energy_after",
        ],
    ) {
        let _ = write!(h, ",{c}");
    }
    h.push_str(",energy_before,energy_after\n");
    w.write_all(h.as_bytes())?;
    for imp in impacts {
        let mut line = format!("{},{:?},{:?},{}", imp.step, imp.alpha, imp.t, imp.piece);
        for x in imp.q.iter().chain(&imp.p_before).chain(&imp.p_after) {
            let _ = write!(line, ",{x:?}");
        }
        let _ = writeln!(line, ",{:?},{:?}", imp.energy_before, imp.energy_after);
        w.write_all(line.as_bytes())?;
    }
    Ok(())
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
