//! The built-in `files` connector: a workspace folder whose writes can be undone. Every path resolves beneath
//! the root (cap-std: `..`, absolute paths and symlinks that leave the root are refused on each operation, so a
//! swap between check and use cannot escape). What a revert needs — the previous bytes or their absence, and a
//! hash of what we wrote — is kept per `(execution id, seq)` in the state folder, which also makes a repeated
//! call (a re-execution after a crash) return its first result instead of applying twice.

use crate::owner_only;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use codemode::{BoxFuture, CallContext, Connector, Preview, ToolDescriptor};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// The methods that change the workspace, approval-gated unless configured otherwise.
pub const WRITE_METHODS: [&str; 3] = ["write_file", "delete_file", "move_file"];

/// A workspace folder as a connector.
pub struct FilesConnector {
    name: String,
    root: PathBuf,
    state: PathBuf,
    approval: Vec<String>,
    asking: crate::config::Asking,
}

impl FilesConnector {
    /// `root` is the workspace (created owner-only if missing); `state` holds what reverts need.
    /// `approval` lists the gated methods; `None` gates the three writes.
    pub fn new(
        name: &str,
        root: &Path,
        state: &Path,
        approval: Option<Vec<String>>,
    ) -> std::io::Result<Self> {
        owner_only::create_dir_all(root)?;
        // The state holds previous contents of the workspace's files: ours, owner-only even if it existed wider.
        owner_only::own_dir(state)?;
        Ok(FilesConnector {
            name: name.to_owned(),
            root: root.to_owned(),
            state: state.to_owned(),
            approval: approval
                .unwrap_or_else(|| WRITE_METHODS.iter().map(|m| (*m).to_owned()).collect()),
            asking: crate::config::Asking::default(),
        })
    }

    /// How its paused calls are asked (`askInClient`, `decideWithin` in its configuration).
    pub fn with_asking(mut self, asking: crate::config::Asking) -> Self {
        self.asking = asking;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir(&self) -> Result<Dir, String> {
        Dir::open_ambient_dir(&self.root, ambient_authority()).map_err(|e| {
            format!(
                "the workspace {} cannot be opened: {e}",
                self.root.display()
            )
        })
    }

    fn record_path(&self, ctx: &CallContext) -> PathBuf {
        let id: String = ctx
            .execution_id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
            .collect();
        self.state.join(id).join(format!("{}.json", ctx.seq))
    }

    fn load_record(&self, ctx: &CallContext) -> Option<UndoRecord> {
        let text = std::fs::read_to_string(self.record_path(ctx)).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn save_record(&self, ctx: &CallContext, record: &UndoRecord) -> Result<(), String> {
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

    fn run(&self, method: &str, args: Value, ctx: &CallContext) -> Result<Value, String> {
        match method {
            "read_file" => self.read_file(parse(method, args)?),
            "list_dir" => self.list_dir(parse(method, args)?),
            "stat" => self.stat(parse(method, args)?),
            "write_file" | "delete_file" | "move_file" => {
                // A call repeated with the same (execution, seq) returns what it returned the first time.
                // A record without a result was written just before a crash: it holds the true previous
                // content, which a fresh snapshot (possibly of our own write) would not.
                let prior = self.load_record(ctx);
                if let Some(result) = prior.as_ref().and_then(|r| r.result.clone()) {
                    return Ok(result);
                }
                let dir = self.dir()?;
                let (record, result) = match method {
                    "write_file" => self.write_file(&dir, parse(method, args)?, prior, ctx)?,
                    "delete_file" => self.delete_file(&dir, parse(method, args)?, prior, ctx)?,
                    _ => self.move_file(&dir, parse(method, args)?, prior, ctx)?,
                };
                let record = UndoRecord {
                    result: Some(result.clone()),
                    ..record
                };
                self.save_record(ctx, &record)?;
                Ok(result)
            }
            other => Err(format!("Tool \"{other}\" not found on {}", self.name)),
        }
    }

    fn read_file(&self, args: ReadArgs) -> Result<Value, String> {
        let bytes = self
            .dir()?
            .read(normalise(&args.path)?)
            .map_err(|e| io_error(&args.path, e))?;
        let content = encode(&args.path, &bytes, args.encoding)?;
        Ok(json!({"path": args.path, "content": content, "size": bytes.len()}))
    }

    fn write_file(
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

    fn delete_file(
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

    fn move_file(
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

    /// What a write, delete or move would change, read from the workspace as it is now (docs/design.md,
    /// "Previews"): text as a before/after pair, anything else as sizes and digests.
    fn preview_call(&self, method: &str, args: Value) -> Result<Option<Preview>, String> {
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

    fn list_dir(&self, args: ListArgs) -> Result<Value, String> {
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

    fn stat(&self, args: PathArgs) -> Result<Value, String> {
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

    fn revert_call(
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

/// What undoing one call needs.
#[derive(Debug, Default, Serialize, Deserialize)]
struct UndoRecord {
    method: String,
    /// The written or deleted file; for a move, its source.
    path: String,
    /// For a move, its destination.
    #[serde(default)]
    to: Option<String>,
    /// The previous content (base64) of the file the call replaced, or `None` when there was none.
    before: Option<String>,
    /// SHA-256 of what the call left in place (`None`: it left nothing).
    after: Option<String>,
    /// Folders the call created for its file, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    created_dirs: Vec<String>,
    /// What the call returned, so a repeat returns it again.
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    reverted: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Encoding {
    Utf8,
    Base64,
}

#[derive(Deserialize)]
struct ReadArgs {
    path: String,
    #[serde(default)]
    encoding: Option<Encoding>,
}

#[derive(Deserialize)]
struct WriteArgs {
    path: String,
    content: String,
    #[serde(default)]
    encoding: Option<Encoding>,
}

#[derive(Deserialize)]
struct PathArgs {
    path: String,
}

#[derive(Deserialize)]
struct MoveArgs {
    from: String,
    to: String,
    #[serde(default)]
    overwrite: bool,
}

#[derive(Deserialize)]
struct ListArgs {
    #[serde(default)]
    path: Option<String>,
}

fn parse<T: for<'de> Deserialize<'de>>(method: &str, args: Value) -> Result<T, String> {
    serde_json::from_value(args).map_err(|e| format!("files.{method}: invalid arguments: {e}"))
}

fn encode(path: &str, bytes: &[u8], encoding: Option<Encoding>) -> Result<String, String> {
    match encoding {
        Some(Encoding::Base64) => Ok(BASE64.encode(bytes)),
        _ => String::from_utf8(bytes.to_vec())
            .map_err(|_| format!("{path} is not valid UTF-8; read it with encoding: \"base64\"")),
    }
}

fn decode(content: &str, encoding: Option<Encoding>) -> Result<Vec<u8>, String> {
    match encoding {
        Some(Encoding::Base64) => BASE64
            .decode(content.as_bytes())
            .map_err(|e| format!("content is not valid base64: {e}")),
        _ => Ok(content.as_bytes().to_vec()),
    }
}

/// The file's bytes (base64) if it exists as a regular file, `None` if it does not exist.
fn snapshot(dir: &Dir, path: &str) -> Result<Option<String>, String> {
    match dir.read(path) {
        Ok(bytes) => Ok(Some(BASE64.encode(bytes))),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path, e)),
    }
}

fn content_hash(base64: &str) -> String {
    hash(&BASE64.decode(base64).unwrap_or_default())
}

/// Replaces the content at `path` through a temporary file renamed over it, keeping an existing file's
/// permissions: a crash leaves the old content or the new, never half of either, so an interrupted call is
/// one that happened or one that did not.
fn replace(dir: &Dir, path: &str, bytes: &[u8]) -> std::io::Result<()> {
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

/// `path` relative to the root with `.` and `..` resolved by name, as a person reads it (`.` for the root):
/// `n/../keep/f.txt` is `keep/f.txt`, so a write never makes `n` and its undo record names only folders it
/// really creates. A `..` above the root and an absolute path are refused, before anything is touched.
fn normalise(path: &str) -> Result<String, String> {
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
fn resolve(dir: &Dir, path: &str) -> Result<String, String> {
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
fn file_path(path: &str) -> Result<String, String> {
    match normalise(path)? {
        root if root == "." => Err(format!("{path}: is the workspace folder, not a file")),
        normal => Ok(normal),
    }
}

/// The folders above `path` (normalised by [`file_path`]) that do not exist yet, outermost first.
fn missing_parents(dir: &Dir, path: &str) -> Vec<String> {
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
fn with_parents(
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
fn remove_created(dir: &Dir, created: &[String]) {
    for folder in created.iter().rev() {
        if normalise(folder).as_deref() == Ok(folder.as_str()) {
            let _ = dir.remove_dir(folder);
        }
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

fn hash(bytes: &[u8]) -> String {
    codemode::codec::sha256_hex(bytes)
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

/// An I/O failure in words a model can act on; an escape attempt says so.
fn io_error(path: &str, error: std::io::Error) -> String {
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

fn descriptor(
    name: &str,
    description: &str,
    schema: Value,
    gated: bool,
    revertible: bool,
) -> ToolDescriptor {
    ToolDescriptor {
        name: name.to_owned(),
        description: Some(description.to_owned()),
        input_schema: Some(schema),
        requires_approval: gated,
        revertible,
        ..ToolDescriptor::default()
    }
}

impl Connector for FilesConnector {
    fn name(&self) -> &str {
        &self.name
    }

    fn instructions(&self) -> Option<String> {
        Some("A workspace folder. Paths are relative to its root; writes can be undone.".to_owned())
    }

    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        let gated = |m: &str| self.approval.iter().any(|a| a == m || a == "*");
        let encoding = json!({"type": "string", "enum": ["utf8", "base64"], "description": "utf8 (default) or base64 for binary content"});
        let tools = vec![
            descriptor(
                "read_file",
                "Read a file from the workspace",
                json!({"type": "object", "properties": {"path": {"type": "string", "description": "Path relative to the workspace root"}, "encoding": encoding}, "required": ["path"]}),
                gated("read_file"),
                false,
            ),
            descriptor(
                "write_file",
                "Create or replace a file in the workspace (missing folders are created)",
                json!({"type": "object", "properties": {"path": {"type": "string", "description": "Path relative to the workspace root"}, "content": {"type": "string"}, "encoding": encoding}, "required": ["path", "content"]}),
                gated("write_file"),
                true,
            ),
            descriptor(
                "delete_file",
                "Delete a file from the workspace",
                json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
                gated("delete_file"),
                true,
            ),
            descriptor(
                "move_file",
                "Move or rename a file within the workspace",
                json!({"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "overwrite": {"type": "boolean", "description": "Replace an existing destination (default false)"}}, "required": ["from", "to"]}),
                gated("move_file"),
                true,
            ),
            descriptor(
                "list_dir",
                "List a directory of the workspace",
                json!({"type": "object", "properties": {"path": {"type": "string", "description": "Defaults to the root"}}}),
                gated("list_dir"),
                false,
            ),
            descriptor(
                "stat",
                "Type, size and modification time of a path",
                json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
                gated("stat"),
                false,
            ),
        ];
        let tools = tools
            .into_iter()
            .map(|mut tool| {
                let name = tool.name.clone();
                self.asking.mark(&mut tool, &name);
                tool
            })
            .collect();
        Box::pin(async move { Ok(tools) })
    }

    fn execute<'a>(
        &'a self,
        method: &'a str,
        args: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            self.run(method, args.unwrap_or(Value::Null), &ctx)
                .map(Some)
        })
    }

    /// Paths as the workspace will resolve them (`.`/`..`, repeated separators and every symlink inside the
    /// workspace followed; one that ends outside is refused), and base64 content decoded: as text when it is
    /// UTF-8, else as `{bytes, sha256}`, which no text matcher matches (docs/design.md, "What a call means").
    fn canonical(&self, method: &str, args: Option<&Value>) -> Result<Option<Value>, String> {
        if !matches!(
            method,
            "read_file" | "write_file" | "delete_file" | "move_file" | "list_dir" | "stat"
        ) {
            return Ok(None);
        }
        let Some(Value::Object(sent)) = args else {
            return Ok(None);
        };
        let dir = self.dir()?;
        let mut read = sent.clone();
        for key in ["path", "from", "to"] {
            if let Some(Value::String(path)) = sent.get(key) {
                read.insert(key.to_owned(), Value::String(resolve(&dir, path)?));
            }
        }
        if method == "write_file"
            && sent.get("encoding").and_then(Value::as_str) == Some("base64")
            && let Some(Value::String(content)) = sent.get("content")
            && let Ok(bytes) = BASE64.decode(content.as_bytes())
        {
            read.remove("encoding");
            let decoded = match String::from_utf8(bytes) {
                Ok(text) => Value::String(text),
                Err(e) => {
                    let bytes = e.into_bytes();
                    json!({"bytes": bytes.len(), "sha256": hash(&bytes)})
                }
            };
            read.insert("content".to_owned(), decoded);
        }
        Ok((&read != sent).then_some(Value::Object(read)))
    }

    fn preview<'a>(
        &'a self,
        method: &'a str,
        args: Option<Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<Preview>, String>> {
        Box::pin(async move { self.preview_call(method, args.unwrap_or(Value::Null)) })
    }

    fn revert<'a>(
        &'a self,
        method: &'a str,
        _args: Option<Value>,
        result: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move { self.revert_call(method, result.as_ref(), &ctx) })
    }

    fn forget_execution<'a>(&'a self, execution_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let ctx = CallContext {
                execution_id: execution_id.to_owned(),
                seq: 0,
            };
            if let Some(folder) = self.record_path(&ctx).parent() {
                let _ = std::fs::remove_dir_all(folder);
            }
        })
    }
}
