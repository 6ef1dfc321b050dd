//! The undo record kept per `(execution id, seq)`: what a revert needs and what a repeated call returns, with
//! the snapshots and digests it holds.

use super::FilesConnector;
use super::paths::io_error;
use crate::owner_only;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use cap_std::fs::Dir;
use codemode::CallContext;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::ErrorKind;
use std::path::PathBuf;

impl FilesConnector {
    pub(super) fn record_path(&self, ctx: &CallContext) -> PathBuf {
        let id: String = ctx
            .execution_id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
            .collect();
        self.state.join(id).join(format!("{}.json", ctx.seq))
    }

    pub(super) fn load_record(&self, ctx: &CallContext) -> Option<UndoRecord> {
        let text = std::fs::read_to_string(self.record_path(ctx)).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub(super) fn save_record(&self, ctx: &CallContext, record: &UndoRecord) -> Result<(), String> {
        let path = self.record_path(ctx);
        if let Some(folder) = path.parent() {
            owner_only::create_dir_all(folder)
                .map_err(|e| format!("cannot keep undo data: {e}"))?;
        }
        let text = serde_json::to_vec(record).map_err(|e| e.to_string())?;
        let temporary = path.with_extension("tmp");
        owner_only::write(&temporary, &text)
            .and_then(|()| std::fs::rename(&temporary, &path))
            .map_err(|e| format!("cannot keep undo data: {e}"))
    }
}

/// What undoing one call needs.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct UndoRecord {
    pub(super) method: String,
    /// The written or deleted file; for a move, its source.
    pub(super) path: String,
    /// For a move, its destination.
    #[serde(default)]
    pub(super) to: Option<String>,
    /// The previous content (base64) of the file the call replaced, or `None` when there was none.
    pub(super) before: Option<String>,
    /// SHA-256 of what the call left in place (`None`: it left nothing).
    pub(super) after: Option<String>,
    /// Folders the call created for its file, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) created_dirs: Vec<String>,
    /// What the call returned, so a repeat returns it again.
    #[serde(default)]
    pub(super) result: Option<Value>,
    #[serde(default)]
    pub(super) reverted: bool,
}

/// The file's bytes (base64) if it exists as a regular file, `None` if it does not exist.
pub(super) fn snapshot(dir: &Dir, path: &str) -> Result<Option<String>, String> {
    match dir.read(path) {
        Ok(bytes) => Ok(Some(BASE64.encode(bytes))),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path, e)),
    }
}

pub(super) fn content_hash(base64: &str) -> String {
    hash(&BASE64.decode(base64).unwrap_or_default())
}

pub(super) fn hash(bytes: &[u8]) -> String {
    codemode::codec::sha256_hex(bytes)
}
