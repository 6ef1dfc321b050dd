//! Owner-only folders and files for what codemode keeps (the data directory, `connectors.json`, undo records
//! holding a file's previous bytes): modes are set explicitly after creation, so no umask, not even 000,
//! widens them.

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

const FOLDER: u32 = 0o700;
const FILE: u32 = 0o600;

/// Creates `path` and its missing parents, each 0700. Folders that exist are left as they are: one may be a
/// person's (a workspace they chose).
pub fn create_dir_all(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir_all(parent)?;
    }
    match DirBuilder::new().mode(FOLDER).create(path) {
        // The umask applied to `mode`; the folder gets 0700 whatever it was.
        Ok(()) => std::fs::set_permissions(path, Permissions::from_mode(FOLDER)),
        // Created by another process in between.
        Err(e) if e.kind() == ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

/// A folder that is codemode's own, inside the data directory (the undo state): created like
/// [`create_dir_all`], and made 0700 if it existed wider (an older version created it with the default mode).
pub(crate) fn own_dir(path: &Path) -> std::io::Result<()> {
    create_dir_all(path)?;
    std::fs::set_permissions(path, Permissions::from_mode(FOLDER))
}

/// What [`data_dir`] found at the data directory's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataDir {
    /// It did not exist: it was created 0700 (with any missing parents).
    Created,
    /// It existed, and keeps this mode (the permission bits).
    Existing { mode: u32 },
}

impl DataDir {
    /// Whether users other than its owner may add, rename or (without the sticky bit) remove its files.
    pub fn others_can_write(self) -> bool {
        matches!(self, DataDir::Existing { mode } if mode & 0o022 != 0)
    }
}

/// Prepares the data directory. One that is missing is created 0700; one that exists is a folder a person
/// chose (perhaps a shared, world-writable temporary folder) and keeps its mode: tightening it would lock every
/// other user out of it. What codemode keeps inside is owner-only either way (docs/design.md, "The data
/// directory").
pub fn data_dir(path: &Path) -> std::io::Result<DataDir> {
    if !path.is_dir() {
        create_dir_all(path)?;
        return Ok(DataDir::Created);
    }
    let mode = std::fs::metadata(path)?.permissions().mode() & 0o7777;
    Ok(DataDir::Existing { mode })
}

/// Writes `bytes` to `path`, created or truncated, 0600 even when a file left there had a wider mode.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(OpenOptions::new().create(true).truncate(true), path, bytes)
}

/// Writes `bytes` to a new file at `path`, 0600; an existing file is an error, never replaced.
pub fn create(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(OpenOptions::new().create_new(true), path, bytes)
}

fn write_with(options: &mut OpenOptions, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = options.write(true).mode(FILE).open(path)?;
    // On the open file (fchmod), before any byte is written: nothing is ever readable by others.
    file.set_permissions(Permissions::from_mode(FILE))?;
    file.write_all(bytes)
}

/// Replaces `path` with `bytes` atomically: written to a new owner-only file beside it, then renamed over it,
/// so a reader sees the old contents or the new, never half of them. The folder is created if missing.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let folder = path.parent().unwrap_or(Path::new("."));
    create_dir_all(folder)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let staging = folder.join(format!(
        ".{name}.{}.{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    create(&staging, bytes)
        .and_then(|()| std::fs::rename(&staging, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&staging);
        })
}

/// Opens (creating it owner-only) the lock file at `path` and waits for an exclusive `flock` on it, held until
/// the returned file is closed. Blocking: call it off the async threads.
pub fn lock_exclusive(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::io::AsRawFd;
    if let Some(folder) = path.parent() {
        create_dir_all(folder)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(FILE)
        .open(path)?;
    // SAFETY: flock on a descriptor this function owns; released when the file is closed.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(file)
}
