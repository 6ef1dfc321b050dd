//! What a write, delete or move would change, read from the workspace as it is now.

use super::FilesConnector;
use super::operations::{MoveArgs, PathArgs, WriteArgs, decode, parse};
use super::paths::{file_path, io_error, resolve};
use super::records::hash;
use cap_std::fs::Dir;
use codemode::Preview;
use serde_json::Value;
use std::io::ErrorKind;

impl FilesConnector {
    /// What a write, delete or move would change, read from the workspace as it is now (docs/design.md,
    /// "Previews"): text as a before/after pair, anything else as sizes and digests.
    pub(super) fn preview_call(
        &self,
        method: &str,
        args: Value,
    ) -> Result<Option<Preview>, String> {
        let current = |dir: &Dir, path: &str| -> Result<Option<Vec<u8>>, String> {
            match dir.read(path) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
                Err(e) => Err(io_error(path, e)),
            }
        };
        let dir = self.dir()?;
        Ok(Some(match method {
            "write_file" => {
                let args: WriteArgs = parse(method, args)?;
                let after = decode(&args.content, args.encoding)?;
                // The file the write lands in, symlinks followed: what the person must see.
                let path = file_path(&resolve(&dir, &args.path)?)?;
                let before = current(&dir, &path)?;
                // Text on both sides (or a new text file) reads as a diff; anything else as digests.
                let before_text = match &before {
                    None => Some(None),
                    Some(bytes) => as_text(bytes).map(|text| Some(text.to_owned())),
                };
                match (before_text, as_text(&after)) {
                    (Some(before), Some(after)) => Preview::Diff {
                        path,
                        before,
                        after: after.to_owned(),
                        cut: false,
                    },
                    _ => Preview::Binary {
                        path,
                        before_size: before.as_ref().map(|b| b.len() as u64),
                        after_size: after.len() as u64,
                        before_sha256: before.as_deref().map(hash),
                        after_sha256: hash(&after),
                    },
                }
            }
            "delete_file" => {
                let args: PathArgs = parse(method, args)?;
                let path = file_path(&resolve(&dir, &args.path)?)?;
                let before = current(&dir, &path)?.map(|bytes| described(&bytes));
                Preview::Delete {
                    path,
                    before,
                    cut: false,
                }
            }
            "move_file" => {
                let args: MoveArgs = parse(method, args)?;
                let from = file_path(&resolve(&dir, &args.from)?)?;
                let to = file_path(&resolve(&dir, &args.to)?)?;
                let overwrites = current(&dir, &to)?.map(|bytes| described(&bytes));
                Preview::Move {
                    from,
                    to,
                    overwrites,
                    cut: false,
                }
            }
            _ => return Ok(None),
        }))
    }
}

/// The bytes as text, when they are UTF-8 without NUL (what a person can read in a diff).
fn as_text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes)
        .ok()
        .filter(|text| !text.contains('\0'))
}

/// Text as it is; anything else as its size and digest.
fn described(bytes: &[u8]) -> String {
    match as_text(bytes) {
        Some(text) => text.to_owned(),
        None => format!(
            "(binary content: {} bytes, SHA-256 {})",
            bytes.len(),
            hash(bytes)
        ),
    }
}
