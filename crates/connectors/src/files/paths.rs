//! Paths beneath the workspace root: normalised by name, symlinks resolved without leaving the root, the
//! folders a write creates and removes again, and I/O failures in words a model can act on.

use cap_std::fs::Dir;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// `path` relative to the root with `.` and `..` resolved by name, as a person reads it (`.` for the root):
/// `n/../keep/f.txt` is `keep/f.txt`, so a write never makes `n` and its undo record names only folders it
/// really creates. A `..` above the root and an absolute path are refused, before anything is touched.
pub(super) fn normalise(path: &str) -> Result<String, String> {
    let refused = || format!("{path}: refused, the path leads outside the workspace");
    let mut parts: Vec<&str> = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str().ok_or_else(refused)?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop().ok_or_else(refused)?;
            }
            Component::RootDir | Component::Prefix(_) => return Err(refused()),
        }
    }
    Ok(if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    })
}

/// How many symlinks one path may pass through, as Linux allows (`ELOOP` past it).
const MAX_LINKS: usize = 40;

/// `path` as the workspace resolves it: [`normalise`]d by name first (as every operation does), then each
/// symlink inside the workspace followed, its `..` resolved where the link is; `.` for the root. A link that
/// leads outside the workspace (absolute, or climbing above the root) is refused, as the operation itself
/// would refuse it. Parts that do not exist are kept as written.
pub(super) fn resolve(dir: &Dir, path: &str) -> Result<String, String> {
    let refused = || format!("{path}: refused, the path leads outside the workspace");
    let normal = normalise(path)?;
    let mut pending: std::collections::VecDeque<String> = if normal == "." {
        Default::default()
    } else {
        normal.split('/').map(str::to_owned).collect()
    };
    let mut resolved: Vec<String> = Vec::new();
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                resolved.pop().ok_or_else(refused)?;
                continue;
            }
            _ => {}
        }
        let candidate = if resolved.is_empty() {
            part.clone()
        } else {
            format!("{}/{part}", resolved.join("/"))
        };
        let is_link = dir
            .symlink_metadata(&candidate)
            .is_ok_and(|metadata| metadata.file_type().is_symlink());
        if !is_link {
            resolved.push(part);
            continue;
        }
        links += 1;
        if links > MAX_LINKS {
            return Err(format!("{path}: too many levels of symbolic links"));
        }
        let target = dir.read_link(&candidate).map_err(|_| refused())?;
        if target.is_absolute() {
            return Err(refused());
        }
        let mut parts: Vec<String> = Vec::new();
        for component in target.components() {
            match component {
                Component::Normal(name) => {
                    parts.push(name.to_str().ok_or_else(refused)?.to_owned())
                }
                Component::ParentDir => parts.push("..".to_owned()),
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) => return Err(refused()),
            }
        }
        for part in parts.into_iter().rev() {
            pending.push_front(part);
        }
    }
    Ok(if resolved.is_empty() {
        ".".to_owned()
    } else {
        resolved.join("/")
    })
}

/// [`normalise`]d, for a call that writes a file: the root is not one.
pub(super) fn file_path(path: &str) -> Result<String, String> {
    match normalise(path)? {
        root if root == "." => Err(format!("{path}: is the workspace folder, not a file")),
        normal => Ok(normal),
    }
}

/// The folders above `path` (normalised by [`file_path`]) that do not exist yet, outermost first.
pub(super) fn missing_parents(dir: &Dir, path: &str) -> Vec<String> {
    let Some(parent) = Path::new(path).parent() else {
        return Vec::new();
    };
    let mut prefix = PathBuf::new();
    let mut missing = Vec::new();
    for component in parent.components() {
        prefix.push(component);
        if !dir.exists(&prefix) {
            missing.push(prefix.display().to_string());
        }
    }
    missing
}

/// Creates the folders above `path`, then runs `apply`; when either fails, the folders in `created` (what
/// [`missing_parents`] found) are removed again, so a failed call leaves the workspace as it found it.
pub(super) fn with_parents(
    dir: &Dir,
    path: &str,
    created: &[String],
    apply: impl FnOnce(&Dir) -> Result<(), String>,
) -> Result<(), String> {
    let parents = match Path::new(path).parent() {
        Some(parent) if !parent.as_os_str().is_empty() => dir
            .create_dir_all(parent)
            .map_err(|e| io_error(&parent.display().to_string(), e)),
        _ => Ok(()),
    };
    let applied = parents.and_then(|()| apply(dir));
    if applied.is_err() {
        remove_created(dir, created);
    }
    applied
}

/// Removes folders a call created, deepest first, unless something else was put in them since. Only names
/// as [`normalise`] writes them count: a record kept before paths were normalised may list `n/../keep`,
/// which is a folder the call did not create.
pub(super) fn remove_created(dir: &Dir, created: &[String]) {
    for folder in created.iter().rev() {
        if normalise(folder).as_deref() == Ok(folder.as_str()) {
            let _ = dir.remove_dir(folder);
        }
    }
}

/// An I/O failure in words a model can act on; an escape attempt says so.
pub(super) fn io_error(path: &str, error: std::io::Error) -> String {
    match error.kind() {
        ErrorKind::NotFound => format!("{path}: no such file or directory"),
        ErrorKind::PermissionDenied if error.to_string().contains("outside") => {
            format!("{path}: refused, the path leads outside the workspace")
        }
        _ if error.to_string().contains("outside") => {
            format!("{path}: refused, the path leads outside the workspace")
        }
        _ => format!("{path}: {error}"),
    }
}
