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
//!             [--summary json|text] [--quiet]
//! diracvi convergence <model> [--h-list H1,H2,...] [--t-end T] [--summary json|text]
//! ```
//!
//! Errors are one line on stderr starting with `error: `. Exit codes: 0
//! success, 1 numerical failure during an integration (a step that does not
//! converge, too many impacts in one step, …), 2 usage or input errors
//! (unknown model or key, bad values, unreadable scenario, inadmissible
//! initial data, unusable output path). Output files are written to a
//! temporary file in the target directory and renamed at the end, so a failed
//! run leaves no file behind.

mod args;
mod convergence;
mod output;
mod plot;
mod progress;
mod run;

use args::{Cli, Command};
use clap::Parser;
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

/// Exit code of a usage or input error.
const EXIT_USAGE: u8 = 2;
/// Exit code of a numerical failure.
const EXIT_NUMERICAL: u8 = 1;

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
        eprintln!("error: internal error{at}: {}", one_line(&msg));
    }));
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    let result = match cli.command {
        Command::List => run::list(),
        Command::Show { model, model_file } => run::show(model.as_deref(), model_file.as_deref()),
        Command::Run(args) => run::run(&args),
        Command::Convergence(args) => convergence::convergence(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", one_line(&format!("{err:#}")));
            if err.chain().any(|e| e.is::<NumericalFailure>()) {
                ExitCode::from(EXIT_NUMERICAL)
            } else {
                ExitCode::from(EXIT_USAGE)
            }
        }
    }
}

/// What a command-line parse error (or a help/version request) ends with.
///
/// `--help` and `--version` print to stdout and exit 0, unless stdout cannot
/// be written (`diracvi --help > /dev/full`: exit 2 with a message). A
/// missing subcommand prints the full help on stderr (exit 2). Every other
/// usage error is one line on stderr, the parser's message with its tip,
/// and a hint naming the help to read (exit 2).
fn clap_exit(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind as K;
    let text = e.render().to_string();
    match e.kind() {
        K::DisplayHelp | K::DisplayVersion => match emit(&text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("error: {}", one_line(&format!("{err:#}")));
                ExitCode::from(EXIT_USAGE)
            }
        },
        K::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprint!("{text}");
            ExitCode::from(EXIT_USAGE)
        }
        _ => {
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let first = lines.next().unwrap_or("error: invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            let tip = lines
                .find_map(|l| l.strip_prefix("tip: "))
                .map(|t| format!(" ({t})"))
                .unwrap_or_default();
            let command = std::env::args()
                .nth(1)
                .filter(|a| ["list", "show", "run", "convergence"].contains(&a.as_str()))
                .map(|a| format!(" {a}"))
                .unwrap_or_default();
            eprintln!("error: {first}{tip}; see `diracvi{command} --help`");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Write `text` to stdout. A closed pipe (`diracvi list | head -1`) is not
/// an error worth a message: the process exits quietly with status 0.
pub fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to stdout")),
    }
}

/// Collapse a message onto one line.
fn one_line(msg: &str) -> String {
    msg.split_whitespace().collect::<Vec<_>>().join(" ")
}
