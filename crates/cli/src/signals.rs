//! Signals: SIGINT, SIGTERM and SIGHUP set a flag that the step loop (the
//! progress callback of every run) and the stages of a run check; a run that
//! sees it removes its temporary files and exits with 128 + the signal
//! number (130, 143, 129), leaving no target file. A second signal while the
//! first is being handled ends the process at once.
//!
//! SIGXFSZ (a write over the file-size limit, `ulimit -f`) is caught and
//! ignored, so the write fails with EFBIG and the run reports it (exit 1,
//! temporary files removed) instead of being killed with a partial file.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The exit status asked for by the last signal (128 + its number), 0 when
/// none arrived.
static PENDING: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// Install the handlers (once, first thing in `main`).
#[cfg(unix)]
pub fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
    use signal_hook::flag;
    use std::sync::atomic::AtomicBool;

    let pending = PENDING.get_or_init(|| Arc::new(AtomicUsize::new(0)));
    let seen = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        let status = 128 + signal;
        // Registered first, so it sees `seen` still false the first time.
        flag::register_conditional_shutdown(signal, status, Arc::clone(&seen))?;
        flag::register_usize(signal, Arc::clone(pending), status as usize)?;
        flag::register(signal, Arc::clone(&seen))?;
    }
    // Caught, not fatal: the write that crosses the limit returns EFBIG.
    flag::register(SIGXFSZ, Arc::new(AtomicBool::new(false)))?;
    Ok(())
}

/// Install the handlers (no signals to handle on this platform).
#[cfg(not(unix))]
pub fn install() -> std::io::Result<()> {
    PENDING.get_or_init(|| Arc::new(AtomicUsize::new(0)));
    Ok(())
}

/// The exit status of a signal that arrived (`128 + number`), if any.
pub fn pending() -> Option<u8> {
    let status = PENDING.get()?.load(Ordering::Relaxed);
    u8::try_from(status).ok().filter(|&s| s != 0)
}

/// The signal's name for the message.
fn name(status: u8) -> &'static str {
    match status {
        130 => "SIGINT",
        143 => "SIGTERM",
        129 => "SIGHUP",
        _ => "a signal",
    }
}

/// If a signal arrived: remove every temporary file, say so on stderr and
/// exit with its status. Called from the step loop and between the stages
/// of a run (the main thread only).
pub fn exit_if_interrupted() {
    if let Some(status) = pending() {
        exit(status);
    }
}

/// Remove every temporary file, say that the run was interrupted and exit
/// with `status`.
pub fn exit(status: u8) -> ! {
    crate::output::remove_temporaries();
    crate::error_line(&format!(
        "interrupted by {}: no output written",
        name(status)
    ));
    std::process::exit(i32::from(status));
}
