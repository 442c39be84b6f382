//! Trajectory writers (docs/theory.md §6): CSV with a header, or JSON; streamed to a
//! temporary file in the target directory and renamed at the end, so an
//! interrupted or failed run never leaves a file that looks complete.

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

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

/// A file written atomically: a temporary file in the target's directory,
/// renamed onto the target by [`persist`](AtomicFile::persist). Dropping it
/// without persisting removes the temporary file.
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    tmp: NamedTempFile,
}

impl AtomicFile {
    /// Create the temporary file next to `target` (checks early that the
    /// directory exists and is writable).
    pub fn create(target: &Path) -> Result<Self> {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if target.is_dir() {
            bail!("cannot write '{}': it is a directory", target.display());
        }
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // An ordinary file (0666 less the umask), not tempfile's private 0600.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let tmp = builder
            .tempfile_in(&dir)
            .with_context(|| format!("cannot write '{}'", target.display()))?;
        Ok(Self {
            target: target.to_path_buf(),
            tmp,
        })
    }

    /// The target path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The temporary file, for writing.
    pub fn file(&mut self) -> &mut File {
        self.tmp.as_file_mut()
    }

    /// Flush to disk and rename onto the target.
    pub fn persist(self) -> Result<()> {
        let target = self.target;
        self.tmp
            .as_file()
            .sync_all()
            .with_context(|| format!("cannot write '{}'", target.display()))?;
        self.tmp
            .persist(&target)
            .map_err(|e| anyhow!("cannot write '{}': {}", target.display(), e.error))?;
        Ok(())
    }
}

/// `--out`: streams records as they are produced, then writes the impacts
/// and renames the files into place.
#[derive(Debug)]
pub struct TrajectoryWriter {
    format: Format,
    out: BufWriter<File>,
    file: AtomicFile,
    impacts: Option<AtomicFile>,
    dimension: Option<usize>,
    records: usize,
    error: Option<io::Error>,
    line: String,
}

impl TrajectoryWriter {
    /// Open `path` (format from its extension) and, for CSV, the sibling
    /// `<stem>.impacts.csv`. `model` and `coordinates` go into the JSON
    /// document's header fields.
    pub fn create(path: &Path, model: &str, coordinates: &[String]) -> Result<Self> {
        let format = match extension(path).as_deref() {
            Some("csv") => Format::Csv,
            Some("json") => Format::Json,
            _ => bail!(
                "cannot tell the output format of '{}': --out needs a .csv or .json file",
                path.display()
            ),
        };
        let mut file = AtomicFile::create(path)?;
        let impacts = match format {
            Format::Csv => Some(AtomicFile::create(&impacts_path(path))?),
            Format::Json => None,
        };
        let out = BufWriter::new(
            file.file()
                .try_clone()
                .with_context(|| format!("cannot write '{}'", path.display()))?,
        );
        let mut w = Self {
            format,
            out,
            file,
            impacts,
            dimension: None,
            records: 0,
            error: None,
            line: String::new(),
        };
        if format == Format::Json {
            let head = format!(
                "{{\"model\": {}, \"coordinates\": {}, \"records\": [",
                serde_json::to_string(model)?,
                serde_json::to_string(coordinates)?
            );
            w.write(head.as_bytes());
        }
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
            self.error = Some(e);
        }
    }

    fn csv_header(&mut self, n: usize) {
        let mut h = String::from("k,t");
        for i in 0..n {
            let _ = write!(h, ",q{i}");
        }
        for i in 0..n {
            let _ = write!(h, ",p{i}");
        }
        h.push_str(",energy,constraint_residual\n");
        self.write(h.as_bytes());
    }

    /// Write the impacts, close the document and rename the files into
    /// place (the impacts file first; if the trajectory's rename fails, the
    /// impacts file is removed again).
    pub fn finish(mut self, dimension: usize, impacts: &[ImpactRecord]) -> Result<()> {
        match self.format {
            Format::Csv => {
                if self.dimension.is_none() {
                    self.csv_header(dimension);
                }
            }
            Format::Json => {
                let mut tail = String::from("\n], \"impacts\": [");
                for (i, imp) in impacts.iter().enumerate() {
                    tail.push_str(if i == 0 { "\n" } else { ",\n" });
                    tail.push_str(&serde_json::to_string(imp)?);
                }
                tail.push_str("\n]}\n");
                self.write(tail.as_bytes());
            }
        }
        if self.error.is_none()
            && let Err(e) = self.out.flush()
        {
            self.error = Some(e);
        }
        if let Some(e) = self.error.take() {
            return Err(anyhow!("cannot write '{}': {e}", self.path().display()));
        }
        let impacts_target = match self.impacts.take() {
            Some(mut file) => {
                let target = file.target().to_path_buf();
                let mut w = BufWriter::new(file.file());
                write_impacts_csv(&mut w, dimension, impacts)
                    .and_then(|()| w.flush())
                    .with_context(|| format!("cannot write '{}'", target.display()))?;
                drop(w);
                file.persist()?;
                Some(target)
            }
            None => None,
        };
        let Self { out, file, .. } = self;
        drop(out);
        if let Err(e) = file.persist() {
            if let Some(t) = impacts_target {
                let _ = std::fs::remove_file(t);
            }
            return Err(e);
        }
        Ok(())
    }
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
                if self.dimension.is_none() {
                    self.dimension = Some(r.q.len());
                    self.csv_header(r.q.len());
                }
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

/// `<dir>/<stem>.impacts.csv` next to `path`.
pub fn impacts_path(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{stem}.impacts.csv"))
}

fn write_impacts_csv(w: &mut impl Write, n: usize, impacts: &[ImpactRecord]) -> io::Result<()> {
    let mut h = String::from("step,alpha,t,piece");
    for prefix in ["q", "p_before", "p_after"] {
        for i in 0..n {
            let _ = write!(h, ",{prefix}{i}");
        }
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
