//! Undoing a write, delete or move from its undo record, refused when the file changed since.

use super::FilesConnector;
use super::WRITE_METHODS;
use super::operations::replace;
use super::paths::{io_error, remove_created};
use super::records::{UndoRecord, content_hash, snapshot};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use cap_std::fs::Dir;
use codemode::CallContext;
use serde_json::Value;
use std::io::ErrorKind;

impl FilesConnector {
    pub(super) fn revert_call(
        &self,
        method: &str,
        result: Option<&Value>,
        ctx: &CallContext,
    ) -> Result<bool, String> {
        if !WRITE_METHODS.contains(&method) {
            return Ok(false);
        }
        let Some(record) = self.load_record(ctx) else {
            // No result: the host died during the call. The record is kept before the workspace changes, so
            // without one the call never touched it and there is nothing left to undo.
            if result.is_none() {
                return Ok(true);
            }
            return Err("nothing was recorded for this call, so it cannot be undone".to_owned());
        };
        if record.reverted {
            return Ok(true);
        }
        let dir = self.dir()?;
        match record.method.as_str() {
            "write_file" | "delete_file" => {
                let current = snapshot(&dir, &record.path)?;
                // A revert interrupted after restoring but before noting it finds the file as it was.
                if current != record.before {
                    if current.as_deref().map(content_hash) != record.after {
                        return Err(format!(
                            "{} changed since this call; the current content is kept",
                            record.path
                        ));
                    }
                    restore(&dir, &record.path, record.before.as_deref())?;
                }
            }
            _ => {
                let to = record.to.clone().unwrap_or_default();
                let current = snapshot(&dir, &to)?;
                let source = snapshot(&dir, &record.path)?;
                // A revert interrupted after moving the file back finds it at its source already.
                let moved_back = source.as_deref().map(content_hash) == record.after
                    && (current.is_none() || current == record.before);
                if !moved_back {
                    if current.as_deref().map(content_hash) != record.after {
                        return Err(format!("{to} changed since it was moved there; it is kept"));
                    }
                    if source.is_some() {
                        return Err(format!(
                            "{} exists again since the move; it is kept",
                            record.path
                        ));
                    }
                    dir.rename(&to, &dir, &record.path)
                        .map_err(|e| io_error(&to, e))?;
                }
                restore(&dir, &to, record.before.as_deref())?;
            }
        }
        remove_created(&dir, &record.created_dirs);
        self.save_record(
            ctx,
            &UndoRecord {
                reverted: true,
                ..record
            },
        )?;
        Ok(true)
    }
}

/// Puts `before` back at `path` (or removes it), all or nothing.
fn restore(dir: &Dir, path: &str, before: Option<&str>) -> Result<(), String> {
    match before {
        Some(content) => {
            let bytes = BASE64.decode(content).map_err(|e| e.to_string())?;
            replace(dir, path, &bytes).map_err(|e| io_error(path, e))
        }
        None => match dir.remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_error(path, e)),
        },
    }
}
