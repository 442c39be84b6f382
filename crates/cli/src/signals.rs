//! Signals: SIGINT, SIGTERM and SIGHUP set a flag that the step loop (the
//! progress callback of every run) and the stages of a run check; a run that
//! sees it removes its temporary files and exits with 128 + the signal
//! number (130, 143, 129), leaving no target file. A second signal while the
//! first is being handled ends the process at once.
//!
//! The step loop sees the flag within a step, but the setup of a large run
//! (building a 10⁶-cell ladder takes seconds) has no loop to check it: a
//! watcher thread ([`install`]) ends the process within about a quarter of
//! a second of the signal at any stage, removing the temporary files the
//! same way. The commit of the outputs (renames, summary) must not be cut in
//! half: the main thread holds [`commit_guard`] over it, and the watcher
//! waits for it — after a commit that went through ([`mark_done`]) the
//! signal changes nothing, as when it arrives after the run.
//!
//! SIGXFSZ (a write over the file-size limit, `ulimit -f`) is caught and
//! ignored, so the write fails with EFBIG and the run reports it (exit 1,
//! temporary files removed) instead of being killed with a partial file.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

/// The exit status asked for by the last signal (128 + its number), 0 when
/// none arrived.
static PENDING: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// Held by the main thread while it commits a run's outputs.
static COMMIT: Mutex<()> = Mutex::new(());
/// Set once a run's outputs are committed and its summary printed.
static DONE: AtomicBool = AtomicBool::new(false);
/// Taken (and never released) by the thread that ends the process.
static EXITING: Mutex<()> = Mutex::new(());

/// How often the watcher looks at the flag.
const WATCH_INTERVAL: Duration = Duration::from_millis(10);
/// How long the watcher leaves the main thread to stop by itself (its step
/// loop checks the flag after every step and tidies its progress bar).
const GRACE: Duration = Duration::from_millis(200);

/// Hold this over the commit of a run's outputs (renames and summary):
/// until it is dropped, a signal ends the process only through the main
/// thread's own checks, never half-way.
pub fn commit_guard() -> MutexGuard<'static, ()> {
    COMMIT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The run's outputs are committed and its summary printed: a signal from
/// now on leaves the process to end by itself (call under [`commit_guard`]).
pub fn mark_done() {
    DONE.store(true, Ordering::SeqCst);
}

/// The watcher thread: once a signal is pending and the main thread has
/// not ended the process within [`GRACE`], wait for any commit in progress,
/// then end the process as the main thread would (temporaries removed).
fn watch() {
    loop {
        std::thread::sleep(WATCH_INTERVAL);
        let Some(status) = pending() else { continue };
        std::thread::sleep(GRACE);
        let _commit = commit_guard();
        if DONE.load(Ordering::SeqCst) {
            return;
        }
        crate::output::remove_temporaries_waiting();
        exit_now(status);
    }
}

/// Install the handlers and start the watcher (once, first thing in
/// `main`).
#[cfg(unix)]
pub fn install() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
    use signal_hook::flag;

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
    std::thread::Builder::new()
        .name("signal watcher".into())
        .spawn(watch)?;
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
/// with `status` (the main thread).
pub fn exit(status: u8) -> ! {
    crate::output::remove_temporaries();
    exit_now(status)
}

/// Say that the run was interrupted and exit with `status`; the first
/// thread to get here ends the process, another one waits for it.
fn exit_now(status: u8) -> ! {
    std::mem::forget(EXITING.lock().unwrap_or_else(PoisonError::into_inner));
    crate::error_line(&format!(
        "interrupted by {}: no output written",
        name(status)
    ));
    std::process::exit(i32::from(status));
}
