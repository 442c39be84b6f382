//! All-or-nothing outputs, for any file a run writes.
//!
//! * [`Target`]: an output path checked before the run — it ends in a file
//!   name (no trailing slash), its directory exists, it is not a directory.
//! * [`Staged`]: the file being written — a temporary file in the target's
//!   directory (registered, so a signal handler's path can remove it), or,
//!   for a FIFO or character device, the target itself.
//! * [`commit`]: under an exclusive lock on a lock file next to the first
//!   target, rename every staged file onto its target, keeping a hard link
//!   to each file it replaces; [`Committed::finish`] drops those, and
//!   dropping a [`Committed`] without finishing puts every old file back
//!   (and removes the files the run created), so a failure after the
//!   renames (a rename, the summary on stdout) leaves the directory as it
//!   was. No file the run did not create is ever removed.

use crate::OutputFailure;
use anyhow::{Context, Result, anyhow, bail};
use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use tempfile::NamedTempFile;

/// Temporary files not yet renamed or removed, for [`remove_temporaries`].
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARIES.lock().unwrap_or_else(PoisonError::into_inner)
}

fn unregister(path: &Path) {
    temporaries().retain(|p| p != path);
}

/// Remove every temporary file still registered (before `process::exit`,
/// which runs no destructor: a signal, a panic).
pub fn remove_temporaries() {
    let mut list = match TEMPORARIES.try_lock() {
        Ok(list) => list,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        // Held by this very thread (the only one touching it): a panic
        // inside the registry; the temporaries' owners remove them.
        Err(TryLockError::WouldBlock) => return,
    };
    for path in list.drain(..) {
        let _ = fs::remove_file(path);
    }
}

/// [`remove_temporaries`] from another thread than the one writing the
/// files (the signal watcher): waits for a registration in progress (a
/// temporary being created or removed) instead of skipping.
pub fn remove_temporaries_waiting() {
    let mut list = temporaries();
    for path in list.drain(..) {
        let _ = fs::remove_file(path);
    }
}

/// An [`OutputFailure`] naming `path`.
fn failure(path: &Path, e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(OutputFailure(format!(
        "cannot write '{}': {e}",
        path.display()
    )))
}

/// An output path, checked before the run.
#[derive(Debug, Clone)]
pub struct Target {
    path: PathBuf,
    dir: PathBuf,
    special: bool,
    option: String,
}

impl Target {
    /// Check `path` for `option` (`--out`, `--plot`, …): it ends in a file
    /// name, its directory exists and is a directory, and it is not itself a
    /// directory (nor a block device or socket). An existing FIFO or
    /// character device is written in place ([`Staged`]).
    ///
    /// # Errors
    /// A usage error naming the option and the path.
    pub fn check(path: &Path, option: &str) -> Result<Target> {
        let shown = path.display();
        let Some(name) = path.file_name() else {
            bail!("{option} '{shown}': not a file name");
        };
        // "t.csv/" and "t.csv/." parse to the file name "t.csv", but name a
        // directory: the path must end in the name itself.
        if !path
            .as_os_str()
            .as_encoded_bytes()
            .ends_with(name.as_encoded_bytes())
        {
            bail!(
                "{option} '{shown}': a trailing slash names a directory, give a file name (e.g. '{}')",
                Path::new(name).display()
            );
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        match fs::metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => bail!("{option} '{shown}': '{}' is not a directory", dir.display()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => bail!(
                "{option} '{shown}': directory '{}' does not exist",
                dir.display()
            ),
            Err(e) => bail!(
                "{option} '{shown}': cannot use directory '{}': {e}",
                dir.display()
            ),
        }
        let special = match fs::metadata(path) {
            Ok(m) if m.is_dir() => bail!("{option} '{shown}': is a directory"),
            Ok(m) if m.is_file() => false,
            Ok(m) if is_stream(&m) => true,
            Ok(_) => bail!(
                "{option} '{shown}': exists and is not a regular file (nor a FIFO or character device)"
            ),
            // A dangling symbolic link is replaced like a missing file.
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => bail!("{option} '{shown}': {e}"),
        };
        Ok(Target {
            path: path.to_path_buf(),
            dir,
            special,
            option: option.to_string(),
        })
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The directory the file goes to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the target is a FIFO or character device, written in place.
    pub fn is_special(&self) -> bool {
        self.special
    }
}

#[cfg(unix)]
fn is_stream(m: &fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    m.file_type().is_fifo() || m.file_type().is_char_device()
}

#[cfg(not(unix))]
fn is_stream(_m: &fs::Metadata) -> bool {
    false
}

/// A file system's free space for unprivileged users, in bytes, if known
/// (not for pseudo file systems such as /proc, which report no blocks).
#[cfg(unix)]
pub fn available_space(dir: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    (s.f_blocks > 0).then(|| s.f_bavail.saturating_mul(s.f_frsize))
}

/// A file system's free space, if known (unknown on this platform).
#[cfg(not(unix))]
pub fn available_space(_dir: &Path) -> Option<u64> {
    None
}

/// The file an output is written to until [`commit`].
#[derive(Debug)]
pub struct Staged {
    target: PathBuf,
    file: Option<StagedFile>,
}

#[derive(Debug)]
enum StagedFile {
    /// A temporary file next to the target.
    Temporary(NamedTempFile),
    /// The target itself (a FIFO or character device).
    InPlace(File),
}

impl Staged {
    /// Create the temporary file for `target` (in its directory, named
    /// `.<name>.XXXXXX.tmp`), or open a FIFO or character device.
    ///
    /// # Errors
    /// A usage error when the directory is not writable.
    pub fn create(target: &Target) -> Result<Staged> {
        let path = target.path();
        if target.is_special() {
            let file = OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("cannot write '{}'", path.display()))?;
            return Ok(Staged {
                target: path.to_path_buf(),
                file: Some(StagedFile::InPlace(file)),
            });
        }
        let mut prefix = OsString::from(".");
        prefix.push(path.file_name().unwrap_or(OsStr::new("output")));
        prefix.push(".");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // An ordinary file (0666 less the umask), not tempfile's private 0600.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(fs::Permissions::from_mode(0o666));
        }
        // Created and registered under the registry's lock, so the signal
        // watcher never sees the file without its registration.
        let mut registry = temporaries();
        let tmp = builder.tempfile_in(target.dir()).map_err(|e| {
            // tempfile adds the temporary's path: report the OS error alone.
            let full = e.to_string();
            let cause = full.split(" at path ").next().unwrap_or(&full);
            anyhow!(
                "{} '{}': cannot create a file in '{}': {cause}",
                target.option,
                path.display(),
                target.dir().display()
            )
        })?;
        registry.push(tmp.path().to_path_buf());
        drop(registry);
        Ok(Staged {
            target: path.to_path_buf(),
            file: Some(StagedFile::Temporary(tmp)),
        })
    }

    /// The target path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The file to write to.
    pub fn file(&mut self) -> &mut File {
        match self.file.as_mut() {
            Some(StagedFile::Temporary(t)) => t.as_file_mut(),
            Some(StagedFile::InPlace(f)) => f,
            None => unreachable!("a staged file is only taken by its commit"),
        }
    }

    /// Flush the written data to disk (a temporary file; a FIFO or device
    /// has nothing to sync).
    ///
    /// # Errors
    /// An [`OutputFailure`] naming the target.
    pub fn sync(&mut self) -> Result<()> {
        if let Some(StagedFile::Temporary(t)) = self.file.as_ref() {
            t.as_file()
                .sync_all()
                .map_err(|e| failure(&self.target, e))?;
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(StagedFile::Temporary(t)) = self.file.take() {
            // Unregistered and removed under the registry's lock (see
            // `Staged::create`).
            let mut registry = temporaries();
            registry.retain(|p| p != t.path());
            // Dropping the temporary file removes it.
            drop(t);
            drop(registry);
        }
    }
}

/// What a commit did to one target.
#[derive(Debug)]
struct Installed {
    target: PathBuf,
    backup: Option<Backup>,
}

/// The file a commit replaced.
#[derive(Debug)]
enum Backup {
    /// A hard link to it (the target's old contents).
    Linked(PathBuf),
    /// It, moved aside (a file system without hard links).
    Moved(PathBuf),
}

impl Backup {
    fn path(&self) -> &Path {
        match self {
            Backup::Linked(p) | Backup::Moved(p) => p,
        }
    }
}

/// Renamed outputs, undone when dropped unless [`finish`](Self::finish)ed.
#[derive(Debug)]
pub struct Committed {
    installed: Vec<Installed>,
    finished: bool,
    _lock: Option<Lock>,
}

impl Committed {
    /// Keep the new files: drop the links to the old ones and release the
    /// lock.
    pub fn finish(mut self) {
        for i in &self.installed {
            if let Some(b) = &i.backup {
                let _ = fs::remove_file(b.path());
            }
        }
        self.finished = true;
    }

    /// Put back what was there before, newest first: the old file where
    /// there was one, nothing where the run created the file.
    fn undo(&mut self) {
        for i in self.installed.drain(..).rev() {
            match i.backup {
                Some(b) => {
                    let _ = fs::rename(b.path(), &i.target);
                }
                None => {
                    let _ = fs::remove_file(&i.target);
                }
            }
        }
    }
}

impl Drop for Committed {
    fn drop(&mut self) {
        if !self.finished {
            self.undo();
        }
    }
}

/// Rename every staged file onto its target, in order, under a lock on
/// `.<first target's name>.lock` next to the first target, so two runs
/// writing the same outputs never leave a mix of both. Files written in
/// place (FIFOs, devices) need nothing.
///
/// # Errors
/// An [`OutputFailure`] naming the target when a rename (or the lock)
/// fails; the renames done are undone.
pub fn commit(files: Vec<Staged>) -> Result<Committed> {
    let lock = match files
        .iter()
        .find(|f| matches!(f.file, Some(StagedFile::Temporary(_))))
    {
        Some(first) => Some(Lock::acquire(&first.target)?),
        None => None,
    };
    let mut committed = Committed {
        installed: Vec::new(),
        finished: false,
        _lock: lock,
    };
    for (i, mut staged) in files.into_iter().enumerate() {
        if i > 0 {
            test_pause();
        }
        let Some(StagedFile::Temporary(tmp)) = staged.file.take() else {
            continue;
        };
        let target = staged.target.clone();
        let tmp_path = tmp.path().to_path_buf();
        let backup = match backup(&target) {
            Ok(b) => b,
            Err(e) => {
                drop(tmp);
                unregister(&tmp_path);
                return Err(failure(&target, e));
            }
        };
        match tmp.persist(&target) {
            Ok(_) => {
                unregister(&tmp_path);
                committed.installed.push(Installed { target, backup });
            }
            Err(e) => {
                // The target was not replaced: drop the link, or move the
                // old file back.
                match &backup {
                    Some(Backup::Linked(p)) => {
                        let _ = fs::remove_file(p);
                    }
                    Some(Backup::Moved(p)) => {
                        let _ = fs::rename(p, &target);
                    }
                    None => {}
                }
                // `e.file` (the temporary) is dropped, hence removed.
                unregister(&tmp_path);
                return Err(failure(&target, e.error));
            }
        }
    }
    Ok(committed)
}

/// A pause between two renames of a commit, for the concurrency test
/// (debug builds only).
fn test_pause() {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("DIRACVI_TEST_COMMIT_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// `<dir>/.<name><suffix>` next to `target`.
fn sibling(target: &Path, suffix: &str) -> PathBuf {
    let mut name = OsString::from(".");
    name.push(target.file_name().unwrap_or(OsStr::new("output")));
    name.push(suffix);
    target.with_file_name(name)
}

/// Keep the file at `target` (if any) under a fresh name beside it: a hard
/// link, or the file itself moved aside where hard links are unsupported.
fn backup(target: &Path) -> io::Result<Option<Backup>> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    match fs::symlink_metadata(target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    for _ in 0..100 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = sibling(target, &format!(".{}-{n}.old", std::process::id()));
        match fs::hard_link(target, &path) {
            Ok(()) => return Ok(Some(Backup::Linked(path))),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(_) => {
                if fs::symlink_metadata(&path).is_ok() {
                    continue;
                }
                fs::rename(target, &path)?;
                return Ok(Some(Backup::Moved(path)));
            }
        }
    }
    Err(io::Error::other("no free name to keep the old file under"))
}

/// An exclusive lock on `.<name>.lock` next to a target, removed on release
/// while still held (waiters that then get a removed file try again).
#[derive(Debug)]
struct Lock {
    path: PathBuf,
    file: File,
}

impl Lock {
    fn acquire(target: &Path) -> Result<Lock> {
        let path = sibling(target, ".lock");
        for _ in 0..1000 {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                // Another user's lock file: a read-only descriptor locks too.
                .or_else(|_| File::open(&path))
                .map_err(|e| failure(target, anyhow!("cannot lock '{}': {e}", path.display())))?;
            file.lock()
                .map_err(|e| failure(target, anyhow!("cannot lock '{}': {e}", path.display())))?;
            // The holder before us removes the file it locked: only the file
            // still at the path counts.
            if same_file(&file, &path) {
                return Ok(Lock { path, file });
            }
        }
        Err(failure(
            target,
            anyhow!("cannot lock '{}': it keeps being replaced", path.display()),
        ))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Removed while held, and only if it is still the file we locked;
        // the lock goes with the descriptor.
        #[cfg(unix)]
        if same_file(&self.file, &self.path) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, _path: &Path) -> bool {
    // No inode to compare; lock files are never removed there.
    true
}
