//! Where recorded steps go: the [`RecordSink`] trait and two sinks, one that
//! keeps the records in vectors and one that drops them.

/// One recorded step (docs/theory.md §6), dimension-erased.
#[derive(Debug, Clone, Copy)]
pub struct RecordView<'a> {
    /// Step index.
    pub k: usize,
    /// Time `t_k`.
    pub t: f64,
    /// Configuration `q_k`.
    pub q: &'a [f64],
    /// Momentum `p_k`.
    pub p: &'a [f64],
    /// Discrete energy of the step ending at `k` (of the first step for
    /// `k = 0`).
    pub energy: f64,
    /// Constraint residual of the step ending at `k`.
    pub constraint_residual: f64,
}

/// The end of one stage of a composed step (orders 4 and 6), for a sink
/// that asked for them ([`RecordSink::stage`]).
#[derive(Debug, Clone, Copy)]
pub struct StageView<'a> {
    /// Signed duration in time of the stage (negative for a stage that goes
    /// back in time).
    pub tau: f64,
    /// Time at its end.
    pub t: f64,
    /// Configuration at its end.
    pub q: &'a [f64],
    /// Momentum at its end.
    pub p: &'a [f64],
}

/// Something that consumes the recorded steps of a run as they come.
pub trait RecordSink {
    /// One recorded step.
    fn record(&mut self, r: &RecordView<'_>);

    /// The stages of the composed step that ends at the next record, in
    /// the order taken, for a run that logs them (the energy accounting of
    /// a system's parts); a step with an impact passes none. Ignored by
    /// default.
    fn stage(&mut self, s: &StageView<'_>) {
        let _ = s;
    }
}

/// Fan-out to several sinks, in order.
impl RecordSink for Vec<&mut dyn RecordSink> {
    fn record(&mut self, r: &RecordView<'_>) {
        for sink in self.iter_mut() {
            sink.record(r);
        }
    }

    fn stage(&mut self, s: &StageView<'_>) {
        for sink in self.iter_mut() {
            sink.stage(s);
        }
    }
}

/// A sink that drops every record (for runs that only need the summary).
#[derive(Debug, Clone, Copy, Default)]
pub struct Discard;

impl RecordSink for Discard {
    fn record(&mut self, _r: &RecordView<'_>) {}
}

/// A sink that keeps every record it is given, column by column; `q` and
/// `p` are stored row-major (`dimension` values per record).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordBuffer {
    /// Step indices.
    pub k: Vec<usize>,
    /// Times `t_k`.
    pub t: Vec<f64>,
    /// Configurations, row-major: record `i` is `q[i·n .. (i+1)·n]`.
    pub q: Vec<f64>,
    /// Momenta, row-major like `q`.
    pub p: Vec<f64>,
    /// Discrete energies.
    pub energy: Vec<f64>,
    /// Constraint residuals.
    pub constraint_residual: Vec<f64>,
    /// Number of coordinates `n` (0 until the first record).
    pub dimension: usize,
}

impl RecordBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty buffer with room for `records` records of `dimension`
    /// coordinates.
    pub fn with_capacity(records: usize, dimension: usize) -> Self {
        Self {
            k: Vec::with_capacity(records),
            t: Vec::with_capacity(records),
            q: Vec::with_capacity(records * dimension),
            p: Vec::with_capacity(records * dimension),
            energy: Vec::with_capacity(records),
            constraint_residual: Vec::with_capacity(records),
            dimension,
        }
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// Whether no record was kept.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }
}

impl RecordSink for RecordBuffer {
    fn record(&mut self, r: &RecordView<'_>) {
        self.dimension = r.q.len();
        self.k.push(r.k);
        self.t.push(r.t);
        self.q.extend_from_slice(r.q);
        self.p.extend_from_slice(r.p);
        self.energy.push(r.energy);
        self.constraint_residual.push(r.constraint_residual);
    }
}
