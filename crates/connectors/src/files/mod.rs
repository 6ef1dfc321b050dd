//! The built-in `files` connector: a workspace folder whose writes can be undone. Every path resolves beneath
//! the root (cap-std: `..`, absolute paths and symlinks that leave the root are refused on each operation, so a
//! swap between check and use cannot escape). What a revert needs — the previous bytes or their absence, and a
//! hash of what we wrote — is kept per `(execution id, seq)` in the state folder, which also makes a repeated
//! call (a re-execution after a crash) return its first result instead of applying twice.

mod operations;
mod paths;
mod preview;
mod records;
mod revert;

use crate::owner_only;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use codemode::{BoxFuture, CallContext, Connector, Preview, ToolDescriptor};
use operations::parse;
use paths::resolve;
use records::{UndoRecord, hash};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

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
