//! `diracvi.ensemble`: many runs of one scenario with per-run overrides, on
//! all cores (rayon, GIL released), keeping only what `keep` asks for.

use crate::convert::{impact_table, indices, matrix, scenario_summary, summary_dict, vector};
use crate::errors::{model_error, run_error};
use crate::scenario::{PyScenario, RunChoice, Walls, run_result};
use diracvi_models::Scenario;
use diracvi_run::{
    Discard, ImpactRecord, ModelSummary, RecordBuffer, RecordSink, RunError, RunOutcome, Summary,
    describe,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What each run of an ensemble keeps.
#[derive(Debug, Clone, Copy, Default)]
pub struct Keep {
    final_state: bool,
    impact_times: bool,
    impacts: bool,
    summary: bool,
    trajectory: bool,
}

/// The valid `keep` selectors.
const SELECTORS: [&str; 5] = [
    "final_state",
    "impact_times",
    "impacts",
    "summary",
    "trajectory",
];

impl Keep {
    /// The selectors of `keep` (a str or a sequence of str); `None`: the
    /// final state, the impact times and the summary.
    pub fn parse(keep: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let Some(keep) = keep else {
            return Ok(Keep {
                final_state: true,
                impact_times: true,
                summary: true,
                ..Keep::default()
            });
        };
        let names: Vec<String> = if keep.is_instance_of::<PyString>() {
            vec![keep.extract()?]
        } else {
            keep.extract()
                .map_err(|_| PyTypeError::new_err("keep must be a str or a sequence of str"))?
        };
        let mut k = Keep::default();
        for name in names {
            match name.as_str() {
                "final_state" => k.final_state = true,
                "impact_times" => k.impact_times = true,
                "impacts" => k.impacts = true,
                "summary" => k.summary = true,
                "trajectory" => k.trajectory = true,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "unknown keep selector '{other}' (valid: {})",
                        SELECTORS.join(", ")
                    )));
                }
            }
        }
        Ok(k)
    }

    /// The selectors in use, in [`SELECTORS`] order.
    fn names(&self) -> Vec<&'static str> {
        SELECTORS
            .iter()
            .zip([
                self.final_state,
                self.impact_times,
                self.impacts,
                self.summary,
                self.trajectory,
            ])
            .filter(|(_, on)| *on)
            .map(|(s, _)| *s)
            .collect()
    }

    /// Whether a run records its trajectory.
    pub fn trajectory(&self) -> bool {
        self.trajectory
    }

    /// Whether a run needs its summary (kept alone or in its result).
    pub fn summary(&self) -> bool {
        self.summary || self.trajectory
    }
}

/// What one run of an ensemble produced (only what [`Keep`] asked for).
pub struct Kept {
    /// The recorded steps (`keep` "trajectory").
    records: Option<RecordBuffer>,
    /// The outcome (impact vectors dropped unless kept).
    outcome: RunOutcome,
    /// The summary ("summary" or "trajectory").
    summary: Option<Summary>,
    /// The walls of the result ("trajectory").
    walls: Option<Walls>,
}

impl Kept {
    /// What `keep` keeps of a finished run: its recorded steps, its
    /// outcome, its summary and its walls (computed only when kept).
    pub fn new(
        keep: Keep,
        records: RecordBuffer,
        mut outcome: RunOutcome,
        summary: impl FnOnce(&RunOutcome) -> Summary,
        walls: impl FnOnce() -> Walls,
    ) -> Self {
        let summary = keep.summary().then(|| summary(&outcome));
        if !(keep.impacts || keep.trajectory) {
            // Only the times (and count) are needed: drop the vectors.
            for i in &mut outcome.impacts {
                *i = ImpactRecord {
                    q: Vec::new(),
                    p_before: Vec::new(),
                    p_after: Vec::new(),
                    ..*i
                };
            }
        }
        Kept {
            records: keep.trajectory.then_some(records),
            outcome,
            summary,
            walls: keep.trajectory.then(walls),
        }
    }
}

/// The worker threads of `threads=` (`None`: rayon's global pool).
pub fn parse_threads(threads: Option<i64>) -> PyResult<Option<usize>> {
    threads
        .map(|n| {
            usize::try_from(n)
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| PyValueError::new_err(format!("threads must be >= 1, got {n}")))
        })
        .transpose()
}

/// Run `run` on every member in parallel with the GIL released, on
/// `threads` worker threads (`None`: all cores), results in member order.
/// The lowest failing index wins: later members are skipped once one
/// failed, earlier ones still run, so the error raised (with `run_index`)
/// is the same whatever the scheduling.
pub fn run_members<T: Send>(
    py: Python<'_>,
    members: Vec<T>,
    threads: Option<usize>,
    run: impl Fn(T) -> Result<(Kept, ModelSummary), RunError> + Sync + Send,
) -> PyResult<Vec<(Kept, ModelSummary)>> {
    let results = py.detach(move || {
        let first_failure = AtomicUsize::new(usize::MAX);
        let work = || {
            members
                .into_par_iter()
                .enumerate()
                .map(|(i, member)| {
                    if i > first_failure.load(Ordering::Relaxed) {
                        return None;
                    }
                    let r = run(member);
                    if r.is_err() {
                        first_failure.fetch_min(i, Ordering::Relaxed);
                    }
                    Some(r)
                })
                .collect::<Vec<_>>()
        };
        match threads {
            None => Ok(work()),
            Some(n) => rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map(|pool| pool.install(work))
                .map_err(|e| e.to_string()),
        }
    });
    let results = results.map_err(|e| PyValueError::new_err(format!("threads: {e}")))?;
    let mut runs = Vec::with_capacity(results.len());
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Some(Ok(run)) => runs.push(run),
            Some(Err(e)) => return Err(run_error(py, &e, Some(i))),
            None => {}
        }
    }
    Ok(runs)
}

/// One copy of `base` per override of `overrides` (an iterable of dicts),
/// each key and value applied in dict order by `set(copy, index, key,
/// value)`. Overrides are read and applied with the GIL held: they are
/// Python objects, and applying them is cheap next to a run.
///
/// # Errors
/// `TypeError` for overrides that are not dicts or keys that are not str;
/// `set`'s errors.
pub fn with_overrides<T: Clone>(
    base: &T,
    overrides: &Bound<'_, PyAny>,
    mut set: impl FnMut(&mut T, usize, &str, &Bound<'_, PyAny>) -> PyResult<()>,
) -> PyResult<Vec<T>> {
    let iter = overrides
        .try_iter()
        .map_err(|_| PyTypeError::new_err("overrides must be an iterable of dicts"))?;
    let mut out = Vec::new();
    for (i, item) in iter.enumerate() {
        let item = item?;
        let dict = item.cast::<PyDict>().map_err(|_| {
            PyTypeError::new_err(format!(
                "overrides[{i}] must be a dict of scenario keys, got '{}'",
                item.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        let mut copy = base.clone();
        for (key, value) in dict.iter() {
            let key: String = key
                .extract()
                .map_err(|_| PyTypeError::new_err(format!("overrides[{i}]: keys must be str")))?;
            set(&mut copy, i, &key, &value)?;
        }
        out.push(copy);
    }
    Ok(out)
}

/// One run of a scenario: build the plan, integrate, keep what `keep` asks.
fn run_one(
    scenario: Scenario,
    choice: RunChoice,
    keep: Keep,
) -> Result<(Kept, ModelSummary), RunError> {
    let info = describe(&scenario)?;
    let mut choice = choice;
    if !keep.trajectory {
        choice.every = 0;
    }
    choice.account = keep.summary();
    let mut buffer = RecordBuffer::new();
    let sink: &mut dyn RecordSink = if keep.trajectory {
        &mut buffer
    } else {
        &mut Discard
    };
    let (scenario, outcome, tolerance) = choice.execute(&scenario, &[], sink)?;
    let kept = Kept::new(
        keep,
        buffer,
        outcome,
        |o| {
            scenario_summary(
                &scenario,
                &info,
                o,
                choice.energy_tolerance,
                tolerance.as_ref(),
            )
        },
        || Walls::of(&scenario, &info.coordinates),
    );
    Ok((kept, info))
}

/// Run ``scenario`` once per override (a dict of ``Scenario.set`` keys) in
/// parallel, GIL released; returns the fields of a ``diracvi.EnsembleResult``
/// as a dict. Called by ``diracvi.ensemble``, which documents it.
#[pyfunction]
#[pyo3(signature = (scenario, overrides, *, keep=None, threads=None, stepper="lagrange", impacts="elastic", backward=false, steps=None, every=1, order=2, reduce=false, energy_tolerance=0.01, tol=None))]
#[allow(clippy::too_many_arguments)]
pub fn ensemble<'py>(
    py: Python<'py>,
    scenario: PyRef<'py, PyScenario>,
    overrides: &Bound<'py, PyAny>,
    keep: Option<&Bound<'py, PyAny>>,
    threads: Option<i64>,
    stepper: &str,
    impacts: &str,
    backward: bool,
    steps: Option<i64>,
    every: i64,
    order: i64,
    reduce: bool,
    energy_tolerance: f64,
    tol: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let keep = Keep::parse(keep)?;
    let choice = RunChoice::parse(
        stepper,
        impacts,
        backward,
        steps,
        every,
        order,
        reduce,
        false,
        energy_tolerance,
        tol,
    )?;
    let threads = parse_threads(threads)?;
    let base = scenario.inner.clone();
    drop(scenario);

    let scenarios = with_overrides(&base, overrides, |sc, i, key, value| {
        let text = crate::convert::set_text(key, value)?;
        sc.set(key, &text)
            .map_err(|e| run_error(py, &RunError::Model(e), Some(i)))?;
        Ok(())
    })?;
    for sc in &scenarios {
        choice.tolerance(sc)?;
    }

    let runs = run_members(py, scenarios, threads, |sc| run_one(sc, choice, keep))?;
    // Every run succeeded here (a skipped run implies an earlier failure).
    let coordinates = match runs.first() {
        Some((_, info)) => info.coordinates.clone(),
        None => describe(&base)
            .map(|d| d.coordinates)
            .map_err(|e| model_error(py, e))?,
    };
    ensemble_dict(py, &base.model, &coordinates, keep, runs)
}

/// The fields of a `diracvi.EnsembleResult` of the runs `runs` of `model`.
pub fn ensemble_dict<'py>(
    py: Python<'py>,
    model: &str,
    coordinates: &[String],
    keep: Keep,
    runs: Vec<(Kept, ModelSummary)>,
) -> PyResult<Bound<'py, PyDict>> {
    let n = coordinates.len();
    let d = PyDict::new(py);
    d.set_item("model", model)?;
    d.set_item("coordinates", coordinates)?;
    d.set_item("keep", keep.names())?;
    d.set_item(
        "impact_counts",
        indices(py, runs.iter().map(|(k, _)| k.outcome.impacts.len())),
    )?;
    if keep.final_state {
        d.set_item(
            "final_t",
            vector(py, runs.iter().map(|(k, _)| k.outcome.final_t).collect()),
        )?;
        let q: Vec<f64> = runs
            .iter()
            .flat_map(|(k, _)| k.outcome.final_q.iter().copied())
            .collect();
        let p: Vec<f64> = runs
            .iter()
            .flat_map(|(k, _)| k.outcome.final_p.iter().copied())
            .collect();
        d.set_item("final_q", matrix(py, q, n)?)?;
        d.set_item("final_p", matrix(py, p, n)?)?;
    }
    if keep.impact_times {
        let list = PyList::empty(py);
        for (k, _) in &runs {
            list.append(vector(py, k.outcome.impact_times()))?;
        }
        d.set_item("impact_times", list)?;
    }
    if keep.impacts {
        let list = PyList::empty(py);
        for (k, _) in &runs {
            list.append(impact_table(py, &k.outcome.impacts, coordinates)?)?;
        }
        d.set_item("impacts", list)?;
    }
    if keep.summary {
        let list = PyList::empty(py);
        for (k, _) in &runs {
            if let Some(summary) = &k.summary {
                list.append(summary_dict(py, summary)?)?;
            }
        }
        d.set_item("summaries", list)?;
    }
    if keep.trajectory {
        let list = PyList::empty(py);
        for (k, info) in runs {
            if let (Some(summary), Some(records), Some(walls)) = (&k.summary, k.records, k.walls) {
                list.append(run_result(
                    py,
                    model,
                    &info.coordinates,
                    records,
                    &k.outcome,
                    summary,
                    walls,
                )?)?;
            }
        }
        d.set_item("results", list)?;
    }
    Ok(d)
}
