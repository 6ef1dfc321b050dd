//! The workspace's methods: reading, listing and stat, and the writes, deletes and moves that keep an undo
//! record before they touch anything.

use super::FilesConnector;
use super::paths::{file_path, io_error, missing_parents, normalise, with_parents};
use super::records::{UndoRecord, content_hash, hash, snapshot};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use cap_std::fs::Dir;
use codemode::CallContext;
use serde::Deserialize;
use serde_json::{Value, json};
use std::io::ErrorKind;
use std::path::Path;

impl FilesConnector {
    pub(super) fn read_file(&self, args: ReadArgs) -> Result<Value, String> {
        let bytes = self
            .dir()?
            .read(normalise(&args.path)?)
            .map_err(|e| io_error(&args.path, e))?;
        let content = encode(&args.path, &bytes, args.encoding)?;
        Ok(json!({"path": args.path, "content": content, "size": bytes.len()}))
    }

    pub(super) fn write_file(
        &self,
        dir: &Dir,
        args: WriteArgs,
        prior: Option<UndoRecord>,
        ctx: &CallContext,
    ) -> Result<(UndoRecord, Value), String> {
        let bytes = decode(&args.content, args.encoding)?;
        let path = file_path(&args.path)?;
        let (before, created_dirs) = match prior {
            Some(prior) => (prior.before, prior.created_dirs),
            None => (snapshot(dir, &path)?, missing_parents(dir, &path)),
        };
        let record = UndoRecord {
            method: "write_file".into(),
            path: path.clone(),
            before,
            after: Some(hash(&bytes)),
            created_dirs,
            ..UndoRecord::default()
        };
        self.save_record(ctx, &record)?;
        with_parents(dir, &path, &record.created_dirs, |dir| {
            replace(dir, &path, &bytes).map_err(|e| io_error(&args.path, e))
        })?;
        let created = record.before.is_none();
        Ok((
            record,
            json!({"path": args.path, "size": bytes.len(), "created": created}),
        ))
    }

    pub(super) fn delete_file(
        &self,
        dir: &Dir,
        args: PathArgs,
        prior: Option<UndoRecord>,
        ctx: &CallContext,
    ) -> Result<(UndoRecord, Value), String> {
        let path = file_path(&args.path)?;
        let before = match prior {
            Some(prior) => prior.before,
            None => snapshot(dir, &path)?,
        };
        let deleted = before.is_some();
        let record = UndoRecord {
            method: "delete_file".into(),
            path,
            before,
            after: None,
            ..UndoRecord::default()
        };
        self.save_record(ctx, &record)?;
        if deleted {
            match dir.remove_file(&record.path) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(io_error(&args.path, e)),
            }
        }
        Ok((record, json!({"path": args.path, "deleted": deleted})))
    }

    pub(super) fn move_file(
        &self,
        dir: &Dir,
        args: MoveArgs,
        prior: Option<UndoRecord>,
        ctx: &CallContext,
    ) -> Result<(UndoRecord, Value), String> {
        let (from, to) = (file_path(&args.from)?, file_path(&args.to)?);
        let record = match prior {
            Some(prior) => prior,
            None => {
                let moved =
                    snapshot(dir, &from)?.ok_or_else(|| format!("{}: no such file", args.from))?;
                let replaced = snapshot(dir, &to)?;
                if replaced.is_some() && !args.overwrite {
                    return Err(format!(
                        "{}: already exists (pass overwrite: true to replace it)",
                        args.to
                    ));
                }
                UndoRecord {
                    method: "move_file".into(),
                    path: from.clone(),
                    to: Some(to.clone()),
                    after: Some(content_hash(&moved)),
                    before: replaced,
                    created_dirs: missing_parents(dir, &to),
                    ..UndoRecord::default()
                }
            }
        };
        self.save_record(ctx, &record)?;
        // After a crash the move may already have happened: the source is gone and the destination holds it.
        let already = snapshot(dir, &from)?.is_none()
            && snapshot(dir, &to)?.as_deref().map(content_hash) == record.after;
        if !already {
            with_parents(dir, &to, &record.created_dirs, |dir| {
                dir.rename(&from, dir, &to)
                    .map_err(|e| io_error(&args.from, e))
            })?;
        }
        Ok((record, json!({"from": args.from, "to": args.to})))
    }

    pub(super) fn list_dir(&self, args: ListArgs) -> Result<Value, String> {
        let path = args.path.unwrap_or_else(|| ".".to_owned());
        let dir = self.dir()?;
        let mut entries = Vec::new();
        for entry in dir
            .read_dir(normalise(&path)?)
            .map_err(|e| io_error(&path, e))?
        {
            let entry = entry.map_err(|e| io_error(&path, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let metadata = entry.metadata().map_err(|e| io_error(&name, e))?;
            let kind = file_type(entry.file_type().map_err(|e| io_error(&name, e))?);
            let size = if kind == "file" { metadata.len() } else { 0 };
            entries.push(json!({"name": name, "type": kind, "size": size}));
        }
        entries.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        Ok(json!({"path": path, "entries": entries}))
    }

    pub(super) fn stat(&self, args: PathArgs) -> Result<Value, String> {
        let metadata = self
            .dir()?
            .symlink_metadata(normalise(&args.path)?)
            .map_err(|e| io_error(&args.path, e))?;
        let modified = metadata
            .modified()
            .ok()
            .and_then(|m| m.into_std().duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as u64);
        let kind = file_type(metadata.file_type());
        Ok(json!({"path": args.path, "type": kind, "size": metadata.len(), "modifiedMs": modified}))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Encoding {
    Utf8,
    Base64,
}

#[derive(Deserialize)]
pub(super) struct ReadArgs {
    pub(super) path: String,
    #[serde(default)]
    pub(super) encoding: Option<Encoding>,
}

#[derive(Deserialize)]
pub(super) struct WriteArgs {
    pub(super) path: String,
    pub(super) content: String,
    #[serde(default)]
    pub(super) encoding: Option<Encoding>,
}

#[derive(Deserialize)]
pub(super) struct PathArgs {
    pub(super) path: String,
}

#[derive(Deserialize)]
pub(super) struct MoveArgs {
    pub(super) from: String,
    pub(super) to: String,
    #[serde(default)]
    pub(super) overwrite: bool,
}

#[derive(Deserialize)]
pub(super) struct ListArgs {
    #[serde(default)]
    pub(super) path: Option<String>,
}

pub(super) fn parse<T: for<'de> Deserialize<'de>>(method: &str, args: Value) -> Result<T, String> {
    serde_json::from_value(args).map_err(|e| format!("files.{method}: invalid arguments: {e}"))
}

fn encode(path: &str, bytes: &[u8], encoding: Option<Encoding>) -> Result<String, String> {
    match encoding {
        Some(Encoding::Base64) => Ok(BASE64.encode(bytes)),
        _ => String::from_utf8(bytes.to_vec())
            .map_err(|_| format!("{path} is not valid UTF-8; read it with encoding: \"base64\"")),
    }
}

pub(super) fn decode(content: &str, encoding: Option<Encoding>) -> Result<Vec<u8>, String> {
    match encoding {
        Some(Encoding::Base64) => BASE64
            .decode(content.as_bytes())
            .map_err(|e| format!("content is not valid base64: {e}")),
        _ => Ok(content.as_bytes().to_vec()),
    }
}

/// Replaces the content at `path` through a temporary file renamed over it, keeping an existing file's
/// permissions: a crash leaves the old content or the new, never half of either, so an interrupted call is
/// one that happened or one that did not.
pub(super) fn replace(dir: &Dir, path: &str, bytes: &[u8]) -> std::io::Result<()> {
    let name = Path::new(path)
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let temporary = Path::new(path).with_file_name(format!(".{name}.codemode-partial"));
    let permissions = match dir.symlink_metadata(path) {
        // Written through, as before: cap_std refuses a link that leads out of the workspace.
        Ok(metadata) if metadata.file_type().is_symlink() => return dir.write(path, bytes),
        Ok(metadata) if metadata.is_file() => Some(metadata.permissions()),
        _ => None,
    };
    let replaced = dir.write(&temporary, bytes).and_then(|()| {
        if let Some(permissions) = permissions {
            dir.set_permissions(&temporary, permissions)?;
        }
        dir.rename(&temporary, dir, path)
    });
    if replaced.is_err() {
        let _ = dir.remove_file(&temporary);
    }
    replaced
}

fn file_type(kind: cap_std::fs::FileType) -> &'static str {
    if kind.is_symlink() {
        "symlink"
    } else if kind.is_dir() {
        "dir"
    } else {
        "file"
    }
}
