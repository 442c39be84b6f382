//! A progress bar on stderr for long runs.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Runs shorter than this never show a bar.
const DELAY: Duration = Duration::from_secs(1);
/// Minimum time between redraws.
const REDRAW: Duration = Duration::from_millis(100);
/// Width of the bar in characters.
const WIDTH: usize = 30;

/// A progress bar over a known number of steps, drawn on stderr only when
/// stderr is a terminal, the run has lasted about a second, and it is not
/// disabled (`--quiet`).
#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    total: usize,
    start: Instant,
    last_draw: Option<Instant>,
}

impl Progress {
    /// A bar over `total` steps; `quiet` disables it.
    pub fn new(total: usize, quiet: bool) -> Self {
        Self {
            enabled: !quiet && std::io::stderr().is_terminal(),
            total,
            start: Instant::now(),
            last_draw: None,
        }
    }

    /// Step `k` (of `total`) is done.
    pub fn tick(&mut self, k: usize) {
        if !self.enabled || (!k.is_multiple_of(32) && k != self.total) {
            return;
        }
        let now = Instant::now();
        let elapsed = now - self.start;
        if elapsed < DELAY || self.last_draw.is_some_and(|t| now - t < REDRAW) {
            return;
        }
        self.last_draw = Some(now);
        let fraction = if self.total == 0 {
            1.0
        } else {
            k as f64 / self.total as f64
        };
        let filled = ((fraction * WIDTH as f64) as usize).min(WIDTH);
        let eta = if fraction > 0.0 {
            elapsed.as_secs_f64() * (1.0 - fraction) / fraction
        } else {
            f64::NAN
        };
        let mut err = std::io::stderr().lock();
        // Progress is best effort: a failed write to stderr is ignored.
        let _ = write!(
            err,
            "\r[{}{}] {:5.1}% {k}/{} steps, {:.0} s left \x1b[K",
            "#".repeat(filled),
            " ".repeat(WIDTH - filled),
            100.0 * fraction,
            self.total,
            eta
        );
        let _ = err.flush();
    }

    /// Erase the bar, if one was drawn.
    pub fn finish(&mut self) {
        if self.last_draw.take().is_some() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
