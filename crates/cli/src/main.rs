//! `diracvi` — the command-line program of the diracvi workspace.
//!
//! A thin layer (DESIGN.md): it maps names to models (`diracvi-models`),
//! reads scenario files, runs the integrators (`diracvi-discrete-dirac`,
//! `diracvi-impact`) and writes results (CSV/JSON trajectories, SVG plots,
//! summaries). No numerics live here.
//!
//! ```text
//! diracvi list
//! diracvi show <model>
//! diracvi run [<model>] [--h H] [--t-end T | --steps N] [--set key=value ...]
//!             [--scenario FILE.toml] [--discretization forward|midpoint]
//!             [--constraint retraction|midpoint|model] [--stepper lagrange|hamiltonian]
//!             [--backward] [--out FILE.csv|FILE.json] [--every K] [--plot FILE.svg]
//!             [--plot-panels energy,coords,momenta,residual,xy,phase]
//!             [--animate FILE.svg [--poster FILE.svg|FILE.png] [--poster-frames K]]
//!             [--summary json|text] [--energy-tolerance FRACTION] [--quiet]
//! diracvi convergence <model> [--h-list H1,H2,...] [--t-end T] [--summary json|text]
//! diracvi periodic [<model>] [--model-file FILE] [--section PIECE [--impact K]] [--period T | --steps N]
//!                  [--continue PARAM=a:b:n [--out FILE.csv|FILE.json]] [--summary json|text]
//! ```
//!
//! Errors are one line on stderr starting with `error: ` (usage errors of
//! the command line add a `hint: ` line). Exit codes: 0 success, 1 a failure
//! during the run (a step that does not converge, too many impacts in one
//! step, a non-finite result, a write that fails: disk full, file too large,
//! stdout closed with an error), 2 usage or input errors (unknown model or
//! key, bad values, unreadable scenario, inadmissible initial data, unusable
//! output path, a request over the limits), 130/143/129 when interrupted by
//! SIGINT/SIGTERM/SIGHUP.
//!
//! Outputs are all or nothing (`output`): the trajectory, its impacts file,
//! the plot, the animation and its poster are written to temporary files next to their
//! targets and renamed into place together once everything succeeded, the
//! summary is printed after the renames and a failure to print it undoes
//! them; a failed or interrupted run leaves none of its files and every file
//! that was there before as it was.

mod animate;
mod args;
mod circuit;
mod convergence;
mod output;
mod periodic;
mod progress;
mod run;
mod signals;
mod system;
mod usage;

use args::{Cli, Command};
use clap::Parser;
use diracvi_plot as plot;
use std::fmt;
use std::process::ExitCode;

/// A failure of the numerics during an integration (exit code 1), as
/// opposed to usage and input errors (exit code 2).
#[derive(Debug)]
pub struct NumericalFailure(pub String);

impl fmt::Display for NumericalFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NumericalFailure {}

/// An output that could not be produced during the run (exit code 1): a
/// write to an output file or stdout that failed (disk full, file too
/// large, …), a plot that could not be drawn. The message names the path.
#[derive(Debug)]
pub struct OutputFailure(pub String);

impl fmt::Display for OutputFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OutputFailure {}

/// Exit code of a usage or input error.
const EXIT_USAGE: u8 = 2;
/// Exit code of a failure during the run (numerics or writing).
const EXIT_FAILURE: u8 = 1;

fn main() -> ExitCode {
    // A bug must still end in one `error:` line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        output::remove_temporaries();
        error_line(&format!("internal error{at}: {}", one_line(&msg)));
    }));
    if let Err(e) = signals::install() {
        error_line(&format!("cannot install the signal handlers: {e}"));
        return ExitCode::from(EXIT_FAILURE);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage::report(&e),
    };
    let result = match cli.command {
        Command::List => run::list(),
        Command::Show {
            model,
            model_file,
            system,
        } => match system {
            Some(path) => system::show(&path),
            None => run::show(model.as_deref(), model_file.as_deref()),
        },
        Command::Run(args) => run::run(&args),
        Command::Convergence(args) => convergence::convergence(&args),
        Command::Periodic(args) => periodic::periodic(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // Every temporary is owned by a value dropped by now; this only
            // catches what a bug could have left registered.
            output::remove_temporaries();
            error_line(&one_line(&format!("{err:#}")));
            if err
                .chain()
                .any(|e| e.is::<NumericalFailure>() || e.is::<OutputFailure>())
            {
                ExitCode::from(EXIT_FAILURE)
            } else {
                ExitCode::from(EXIT_USAGE)
            }
        }
    }
}

/// Write `text` to stdout and flush it. A closed pipe (`diracvi list | head
/// -1`) is not an error: the reader wanted no more, and the rest is dropped
/// quietly. Any other failure (`> /dev/full`) is a [`OutputFailure`].
pub fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(anyhow::Error::new(OutputFailure(format!(
            "cannot write to stdout: {e}"
        )))),
    }
}

/// Write `error: <message>` on stderr, best effort (`eprintln!` would
/// panic when stderr cannot be written).
pub fn error_line(message: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: {message}");
    let _ = err.flush();
}

/// Write a line (a note about the outputs) on stderr, best effort.
pub fn note_line(message: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{message}");
    let _ = err.flush();
}

/// Collapse a message onto one line.
fn one_line(msg: &str) -> String {
    msg.split_whitespace().collect::<Vec<_>>().join(" ")
}
