//! Errors of the command line itself (clap): one `error:` line and one
//! `hint:` line on stderr, exit code 2, whatever went wrong (unknown flag or
//! subcommand, missing or bad value, conflicting options). `--help` and
//! `--version` print in full on stdout and exit 0, or 1 when stdout cannot
//! be written.

use crate::{EXIT_FAILURE, EXIT_USAGE, one_line};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::io::Write;
use std::process::ExitCode;

/// Report a clap error (or print the help / version it carries) and give
/// the exit code.
pub fn report(err: &clap::Error) -> ExitCode {
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let printed = err.print().and_then(|()| std::io::stdout().flush());
            match printed {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    crate::error_line(&format!("cannot write to stdout: {e}"));
                    ExitCode::from(EXIT_FAILURE)
                }
            }
        }
        _ => {
            let (message, tips) = message(err);
            let mut hint = tips.join("; ");
            if !hint.is_empty() {
                hint.push_str("; ");
            }
            let command = command_path(err);
            let mut stderr = std::io::stderr().lock();
            // Nowhere to report a failure to write to stderr.
            let _ = writeln!(
                stderr,
                "error: {message}\nhint: {hint}see `{command} --help`"
            );
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// The error as one line, and clap's tips (suggestions) separately.
fn message(err: &clap::Error) -> (String, Vec<String>) {
    if matches!(
        err.kind(),
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        // clap renders the whole help here.
        let cmd = command_path(err);
        return (
            format!("`{cmd}` needs a command: list, show, run or convergence"),
            Vec::new(),
        );
    }
    let text = err.render().to_string();
    let mut parts = Vec::new();
    let mut tips = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if line.is_empty() {
            continue;
        }
        if let Some(tip) = line.strip_prefix("tip:") {
            tips.push(one_line(tip));
        } else {
            parts.push(
                line.strip_prefix("error:")
                    .unwrap_or(line)
                    .trim()
                    .to_string(),
            );
        }
    }
    let message = one_line(&parts.join(" "));
    if message.is_empty() {
        (format!("{:?}", err.kind()), tips)
    } else {
        (message, tips)
    }
}

/// `diracvi` or `diracvi <subcommand>`, from the usage line clap attached.
fn command_path(err: &clap::Error) -> String {
    let usage = match err.get(ContextKind::Usage) {
        Some(ContextValue::StyledStr(s)) => s.to_string(),
        // No usage attached (bad or missing values): the subcommand named
        // on the command line, if any.
        _ => {
            let cli = <crate::args::Cli as clap::CommandFactory>::command();
            let names: Vec<String> = cli
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let sub = std::env::args_os()
                .skip(1)
                .take_while(|a| a != "--")
                .find_map(|a| {
                    a.to_str()
                        .filter(|a| names.iter().any(|n| n == a))
                        .map(String::from)
                });
            match sub {
                Some(sub) => format!("diracvi {sub}"),
                None => String::new(),
            }
        }
    };
    let usage = usage.trim();
    let usage = usage.strip_prefix("Usage:").unwrap_or(usage);
    let words: Vec<&str> = usage
        .split_whitespace()
        .take_while(|w| {
            w.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !w.starts_with('-')
        })
        .collect();
    if words.first() == Some(&"diracvi") {
        words.join(" ")
    } else {
        "diracvi".to_string()
    }
}
