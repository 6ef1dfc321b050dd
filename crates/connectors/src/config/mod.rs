//! `connectors.json`: runtime settings and connectors, the one source of truth shared by the app, the CLI and
//! `codemode mcp` (README "Configuration"). Errors name the file, line and column; values from `env` and `headers` are secrets
//! and never appear in an error or a debug print.

mod approval;
mod parse;
mod raw;
mod runtime;
mod templates;

pub use approval::{Approval, Asking, ToolHints};
pub use parse::{parse, parse_age, resolve_path};
pub use runtime::{DEFAULT_MAX_OUTPUT_CHARS, MIN_MAX_OUTPUT_CHARS, RuntimeSettings};
pub(crate) use runtime::{check_settings, runtime_fields};
pub use templates::render_template;

use crate::owner_only;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The configuration file's name in the data directory.
pub const FILE_NAME: &str = "connectors.json";

/// The file written on first run: the `files` workspace, nothing else.
pub const DEFAULT_CONFIG: &str = r#"{
  "runtime": {
    "name": "default",
    "maxExecutions": 50,
    "timeoutMs": 60000,
    "memoryLimitMb": 512,
    "pausedTtl": "24h",
    "expirySweepMinutes": 10
  },
  "connectors": {
    "files": { "type": "files", "root": "workspace" }
  },
  "mcpServers": {}
}
"#;

/// The whole file, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub runtime: RuntimeSettings,
    /// In file order: `connectors` first, then `mcpServers`.
    pub connectors: Vec<ConnectorConfig>,
    /// Read-only policy rules (`"rules"`), after the database's in precedence (docs/design.md, "Rules").
    pub rules: Vec<codemode::Rule>,
    /// `runtime.maxOutputChars`: the characters of an outcome `codemode mcp` hands the model (docs/api.md,
    /// "Bounded outcomes").
    pub max_output_chars: usize,
    /// `runtime.store`: a PostgreSQL URL every host of a team names (docs/shared-store.md); the data
    /// directory's SQLite file when absent. `$CODEMODE_STORE` overrides it.
    pub store: Option<String>,
    /// `runtime.webhooks`: where each new pause is announced with a signed link (docs/phone.md, "Webhooks").
    pub webhooks: Vec<Webhook>,
}

/// One `runtime.webhooks` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    /// An `http` or `https` URL.
    pub url: String,
    pub format: WebhookFormat,
}

/// What a webhook's body looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WebhookFormat {
    /// `{"event": "paused", …, "link"}` for a script of one's own.
    Json,
    /// A Slack incoming webhook's `{"text"}`.
    Slack,
    /// An ntfy topic: the text as the body, the link as the click action.
    Ntfy,
}

impl WebhookFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookFormat::Json => "json",
            WebhookFormat::Slack => "slack",
            WebhookFormat::Ntfy => "ntfy",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorConfig {
    /// The sandbox global (the key, sanitised like a tool name).
    pub name: String,
    /// The key as written.
    pub key: String,
    pub kind: ConnectorKind,
    pub approval: Approval,
    /// Methods whose pauses are decided in the app's window only: their notifications offer Open, not
    /// Approve or Reject (docs/desktop.md). `Approval::Default` never occurs here.
    pub confirm_in_app: Approval,
    /// How its paused calls are asked: in the agent's client too, and within how long.
    pub asking: Asking,
    /// Methods whose calls run again on replay (`replay: "reexecute"`).
    pub reexecute: Vec<String>,
    pub hidden: Vec<String>,
    pub hint: Option<String>,
    pub call_timeout: Duration,
    pub revert_timeout: Duration,
    /// Method (as written) → the call that undoes it.
    pub revert: BTreeMap<String, RevertTemplate>,
    /// Method (as written) → the read-only call whose answer shows a person what the method would change
    /// (docs/design.md, "Previews"); its args templates may use `{{args.…}}` only.
    pub preview: BTreeMap<String, RevertTemplate>,
    /// Methods a preview template may call besides those the server annotates `readOnlyHint: true`.
    pub read_only: Vec<String>,
}

#[derive(Clone, PartialEq)]
pub enum ConnectorKind {
    Files {
        root: PathBuf,
    },
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        /// PEM certificates trusted for this server besides the system's (`caFile`, a private CA).
        ca_file: Option<PathBuf>,
        /// A client registered with the server's authorization server beforehand (`oauth`), for servers
        /// without dynamic registration; `None` registers dynamically at sign-in.
        oauth: Option<OAuthClient>,
    },
}

/// `"oauth": {"clientId", "clientSecret"?, "scopes"?}` of a remote connector (docs/remote-servers.md).
#[derive(Clone, PartialEq, Default)]
pub struct OAuthClient {
    pub client_id: Option<String>,
    /// A secret: never shown, and removed from every message.
    pub client_secret: Option<String>,
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// Secrets stay out of logs: `env` and `headers` show their names only.
impl std::fmt::Debug for ConnectorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectorKind::Files { root } => f.debug_struct("Files").field("root", root).finish(),
            ConnectorKind::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field(
                    "env",
                    &env.keys().map(|k| format!("{k}=…")).collect::<Vec<_>>(),
                )
                .field("cwd", cwd)
                .finish(),
            ConnectorKind::Http {
                url,
                headers,
                ca_file,
                oauth,
            } => f
                .debug_struct("Http")
                .field("url", url)
                .field("ca_file", ca_file)
                .field("oauth", oauth)
                .field(
                    "headers",
                    &headers
                        .keys()
                        .map(|k| format!("{k}: …"))
                        .collect::<Vec<_>>(),
                )
                .finish(),
        }
    }
}

/// A call made on behalf of another: a method and an args tree with `{{args.x}}` / `{{result.y}}` templates
/// (the call that undoes it, or the read-only call that previews it).
#[derive(Debug, Clone, PartialEq)]
pub struct RevertTemplate {
    pub method: String,
    pub args: Value,
}

/// A configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl ConfigError {
    /// An error about the file as a whole (reading or writing it), with no position.
    pub fn whole_file(path: &Path, message: String) -> Self {
        ConfigError {
            file: path.display().to_string(),
            line: 0,
            column: 0,
            message,
        }
    }
}

/// Reads `<data dir>/connectors.json`, creating it (owner-only) with the default when it is missing.
pub fn load(data_dir: &Path) -> Result<Config, ConfigError> {
    let path = data_dir.join(FILE_NAME);
    let io_error = |message: String| ConfigError::whole_file(&path, message);
    if !path.exists() {
        create_private(&path, DEFAULT_CONFIG)
            .map_err(|e| io_error(format!("cannot create it: {e}")))?;
    }
    let text =
        std::fs::read_to_string(&path).map_err(|e| io_error(format!("cannot read it: {e}")))?;
    parse(&text, &path, data_dir)
}

/// Replaces `<data dir>/connectors.json` with `text` atomically: written owner-only beside it, then renamed
/// over it, so a host reading it sees the old file or the new, never half of one.
pub(crate) fn replace_file(data_dir: &Path, text: &str) -> Result<(), String> {
    owner_only::replace(&data_dir.join(FILE_NAME), text.as_bytes())
        .map_err(|e| format!("cannot replace it: {e}"))
}

/// Durations are read and written as the runtime's rules write them (`decideWithin`), so one syntax holds.
pub use codemode::clock::{format_duration as format_age, parse_duration as parse_age_text};

/// Creates the file owner-only, with its folder; a file that appeared meanwhile is never replaced.
fn create_private(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(folder) = path.parent() {
        owner_only::create_dir_all(folder)?;
    }
    owner_only::create(path, text.as_bytes())
}
