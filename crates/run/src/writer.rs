//! The trajectory and impact files of a run (docs/theory.md §6), written to
//! any [`Write`]: the formats of `diracvi run --out FILE.csv|FILE.json` (the
//! command line streams them into its staged files, so a library run
//! writes the very same bytes), and the one naming of their columns, shared
//! with Python's `to_pandas()`.
//!
//! ## Column names
//!
//! A coordinate named `c` gives the columns `q_c` (its value) and `p_c` (its
//! momentum) in the trajectory, and `q_c`, `p_before_c`, `p_after_c` in the
//! impacts; every other column has a fixed name without an underscore
//! prefix of those (`k`, `t`, `energy`, `constraint_residual`; `step`,
//! `alpha`, `t`, `piece`, `energy_before`, `energy_after`), so no
//! coordinate name can clash with another column (a coordinate called
//! `energy`, `alpha` or `t` gives `q_energy`, `q_alpha`, `q_t`):
//!
//! ```text
//! trajectory:  k,t,q_<c>…,p_<c>…,energy,constraint_residual
//! impacts:     step,alpha,t,piece,q_<c>…,p_before_<c>…,p_after_<c>…,energy_before,energy_after
//! ```
//!
//! Names that cannot stand in a CSV header (wrong count, empty, two equal,
//! or holding a comma, a quote or a line break; no model file or catalogued
//! model has such names) are replaced by the indices: `q_0, q_1, …`.

use crate::{ImpactRecord, RecordSink, RecordView};
use serde::Serialize;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::{self, Write};

/// The fixed columns of the trajectory file, before and after the
/// coordinates' columns.
pub const TRAJECTORY_FIXED: ([&str; 2], [&str; 2]) =
    (["k", "t"], ["energy", "constraint_residual"]);

/// The fixed columns of the impacts file, before and after the
/// coordinates' columns.
pub const IMPACT_FIXED: ([&str; 4], [&str; 2]) = (
    ["step", "alpha", "t", "piece"],
    ["energy_before", "energy_after"],
);

/// The names the columns of coordinates `coordinates` are built from: the
/// names themselves, or `0, 1, …` when one of them cannot stand in a CSV
/// header (empty, a comma, a quote or a line break, two equal).
fn column_stems(coordinates: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    let usable = coordinates
        .iter()
        .all(|c| !c.is_empty() && !c.contains([',', '"', '\n', '\r']) && seen.insert(c));
    if usable {
        coordinates.to_vec()
    } else {
        (0..coordinates.len()).map(|i| i.to_string()).collect()
    }
}

fn columns(fixed: (&[&str], &[&str]), prefixes: &[&str], coordinates: &[String]) -> Vec<String> {
    let stems = column_stems(coordinates);
    fixed
        .0
        .iter()
        .map(|c| c.to_string())
        .chain(
            prefixes
                .iter()
                .flat_map(|p| stems.iter().map(move |c| format!("{p}{c}"))),
        )
        .chain(fixed.1.iter().map(|c| c.to_string()))
        .collect()
}

/// The columns of the trajectory CSV for coordinates named `coordinates`:
/// `k, t, q_<c>…, p_<c>…, energy, constraint_residual` (the
/// rule: coordinate `c` gives `q_c` and `p_c`; README "Output columns").
pub fn trajectory_columns(coordinates: &[String]) -> Vec<String> {
    columns(
        (&TRAJECTORY_FIXED.0, &TRAJECTORY_FIXED.1),
        &["q_", "p_"],
        coordinates,
    )
}

/// The columns of the impacts CSV for coordinates named `coordinates`:
/// `step, alpha, t, piece, q_<c>…, p_before_<c>…, p_after_<c>…,
/// energy_before, energy_after` (README "Output columns").
pub fn impact_columns(coordinates: &[String]) -> Vec<String> {
    columns(
        (&IMPACT_FIXED.0, &IMPACT_FIXED.1),
        &["q_", "p_before_", "p_after_"],
        coordinates,
    )
}

/// The format of a trajectory file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrajectoryFormat {
    /// Comma-separated values, one line per record under the header of
    /// [`trajectory_columns`]; the impacts go to a second file
    /// ([`write_impacts_csv`]).
    Csv,
    /// One JSON document `{"model", "coordinates", "records": [...],
    /// "impacts": [...]}`.
    Json,
}

/// A [`RecordSink`] writing the records of a run as they come, in the
/// format of `diracvi run --out`.
///
/// Records cannot fail, so the first write error is kept (the later
/// records are dropped) and returned by [`finish`](Self::finish);
/// [`error`](Self::error) shows it during the run.
#[derive(Debug)]
pub struct TrajectoryWriter<W: Write> {
    format: TrajectoryFormat,
    out: W,
    records: usize,
    error: Option<io::Error>,
    line: String,
}

impl<W: Write> TrajectoryWriter<W> {
    /// Start the file on `out`: the CSV header naming `coordinates`, or the
    /// JSON document's head with `model` and `coordinates`.
    pub fn new(out: W, format: TrajectoryFormat, model: &str, coordinates: &[String]) -> Self {
        let mut w = Self {
            format,
            out,
            records: 0,
            error: None,
            line: String::new(),
        };
        let head = match format {
            TrajectoryFormat::Json => {
                let json = serde_json::to_string(model).and_then(|model| {
                    serde_json::to_string(coordinates).map(|c| {
                        format!("{{\"model\": {model}, \"coordinates\": {c}, \"records\": [")
                    })
                });
                match json {
                    Ok(head) => head,
                    Err(e) => {
                        w.error = Some(io::Error::other(e));
                        return w;
                    }
                }
            }
            TrajectoryFormat::Csv => {
                let mut h = trajectory_columns(coordinates).join(",");
                h.push('\n');
                h
            }
        };
        w.write(head.as_bytes());
        w
    }

    /// The format.
    pub fn format(&self) -> TrajectoryFormat {
        self.format
    }

    /// The first write error, if one happened.
    pub fn error(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }

    /// Number of records written.
    pub fn records(&self) -> usize {
        self.records
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.out.write_all(bytes)
        {
            self.error = Some(e);
        }
    }

    /// Close the file: the impacts (JSON; a CSV trajectory's impacts go to
    /// their own file, [`write_impacts_csv`]) and the document's end, then
    /// flush; hand back the writer.
    ///
    /// # Errors
    /// The first error of any write.
    pub fn finish(mut self, impacts: &[ImpactRecord]) -> io::Result<W> {
        if self.format == TrajectoryFormat::Json {
            let mut tail = String::from("\n], \"impacts\": [");
            for (i, imp) in impacts.iter().enumerate() {
                tail.push_str(if i == 0 { "\n" } else { ",\n" });
                tail.push_str(&serde_json::to_string(imp).map_err(io::Error::other)?);
            }
            tail.push_str("\n]}\n");
            self.write(tail.as_bytes());
        }
        if self.error.is_none()
            && let Err(e) = self.out.flush()
        {
            self.error = Some(e);
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }
}

impl<W: Write> RecordSink for TrajectoryWriter<W> {
    fn record(&mut self, r: &RecordView<'_>) {
        if self.error.is_some() {
            return;
        }
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        match self.format {
            TrajectoryFormat::Csv => {
                let _ = write!(line, "{},{:?}", r.k, r.t);
                for x in r.q.iter().chain(r.p) {
                    let _ = write!(line, ",{x:?}");
                }
                let _ = writeln!(line, ",{:?},{:?}", r.energy, r.constraint_residual);
            }
            TrajectoryFormat::Json => {
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

/// Write the impacts file of `diracvi run --out FILE.csv`
/// (`FILE.impacts.csv`): the header of [`impact_columns`], then one line
/// per impact.
///
/// # Errors
/// The first write error.
pub fn write_impacts_csv(
    w: &mut impl Write,
    coordinates: &[String],
    impacts: &[ImpactRecord],
) -> io::Result<()> {
    let mut h = impact_columns(coordinates).join(",");
    h.push('\n');
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
