//! `connectors.json`: runtime settings and connectors, the one source of truth shared by the app, the CLI and
//! `codemode mcp` (README "Configuration"). Errors name the file, line and column; values from `env` and `headers` are secrets
//! and never appear in an error or a debug print.

use crate::owner_only;
use codemode::names::{check_connector_name, sanitize_tool_name};
use serde::Deserialize;
use serde_json::{Map, Value};
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

/// `runtime.maxOutputChars` when the file does not set it: the reference's 24,000 characters.
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 24_000;
/// The least `runtime.maxOutputChars`: room for a paused call and the notes that say what was cut.
pub const MIN_MAX_OUTPUT_CHARS: usize = 2_000;

#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeSettings {
    pub name: String,
    pub max_executions: usize,
    pub timeout: Duration,
    pub memory_limit_mb: u64,
    pub paused_ttl: Duration,
    pub expiry_sweep: Duration,
    /// `runtime.keepDecidedFor`: how long a run holding a record (a person's or expiry's decision, an applied
    /// gated call, a revert) is kept whatever `maxExecutions` says (docs/design.md, "Retention").
    pub keep_decided_for: Duration,
}

impl Default for RuntimeSettings {
    fn default() -> Self {
        RuntimeSettings {
            name: "default".to_owned(),
            max_executions: 50,
            timeout: Duration::from_secs(60),
            memory_limit_mb: 512,
            paused_ttl: Duration::from_secs(24 * 3600),
            expiry_sweep: Duration::from_secs(600),
            keep_decided_for: codemode::Retention::DEFAULT_KEEP_DECIDED_FOR,
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

/// How a connector's paused calls are asked, from its `askInClient` and `decideWithin` (docs/design.md,
/// "Asking in the client" and "Deciding in time"). A rule that asks may say its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Asking {
    /// Methods whose pauses are asked in the agent's MCP client too (never one also under `confirmInApp`).
    pub in_client: Approval,
    pub confirm_in_app: Approval,
    pub decide_within: Option<Duration>,
}

impl Default for Asking {
    fn default() -> Self {
        Asking {
            in_client: Approval::Methods(Vec::new()),
            confirm_in_app: Approval::Methods(Vec::new()),
            decide_within: None,
        }
    }
}

impl Asking {
    /// Marks a method's descriptor with how its pauses are asked.
    pub fn mark(&self, descriptor: &mut codemode::ToolDescriptor, original: &str) {
        let sanitised = descriptor.name.clone();
        descriptor.ask_in_client = self.in_client.requires(original, &sanitised, &[])
            && !self.confirm_in_app.requires(original, &sanitised, &[]);
        descriptor.decide_within_ms = self.decide_within.map(|d| d.as_millis() as i64);
    }
}

/// Which methods need a person's approval.
#[derive(Debug, Clone, PartialEq)]
pub enum Approval {
    /// No `approval` key: `files` gates its writes, an MCP connector gates nothing.
    Default,
    All,
    Methods(Vec<String>),
    /// `"writes"` (MCP connectors): every tool its server does not annotate `readOnlyHint: true`.
    Writes,
    /// `"destructive"` (MCP connectors): every tool annotated `destructiveHint: true`, or not annotated at all
    /// (the MCP default: a tool that is not read-only may destroy).
    Destructive,
}

/// What a server declares of a tool (MCP tool annotations), as far as gating goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToolHints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
}

impl ToolHints {
    /// Whether the tool may destroy, by the MCP spec's defaults: a read-only tool does not; otherwise
    /// `destructiveHint`, which defaults to true.
    pub fn destructive(&self) -> bool {
        self.read_only != Some(true) && self.destructive != Some(false)
    }
}

impl Approval {
    /// Whether `method` (original or sanitised name) needs approval, given the connector's defaults. A listed
    /// name matches as written or sanitised, as every per-tool list does (`create-issue` names the tool exposed
    /// as `create_issue`).
    pub fn requires(&self, original: &str, sanitised: &str, default_gated: &[&str]) -> bool {
        match self {
            Approval::Default => {
                default_gated.contains(&original) || default_gated.contains(&sanitised)
            }
            Approval::All => true,
            Approval::Methods(methods) => methods
                .iter()
                .any(|m| m == original || m == sanitised || sanitize_tool_name(m) == sanitised),
            // Without the server's annotations at hand, a tool is taken as not annotated: gated.
            Approval::Writes | Approval::Destructive => true,
        }
    }

    /// Whether a tool the server describes with `hints` needs approval, and why, in words a listing shows
    /// (`codemode connectors`, the Connectors view).
    pub fn gate(&self, original: &str, sanitised: &str, hints: ToolHints) -> (bool, String) {
        let annotated = match (hints.read_only, hints.destructive) {
            (None, None) => "not annotated".to_owned(),
            (read_only, destructive) => {
                let mut said = Vec::new();
                if let Some(read_only) = read_only {
                    said.push(format!("readOnlyHint: {read_only}"));
                }
                if let Some(destructive) = destructive {
                    said.push(format!("destructiveHint: {destructive}"));
                }
                said.join(", ")
            }
        };
        match self {
            Approval::Writes => {
                let gated = hints.read_only != Some(true);
                (gated, format!("approval \"writes\": {annotated}"))
            }
            Approval::Destructive => (
                hints.destructive(),
                format!("approval \"destructive\": {annotated}"),
            ),
            Approval::Default => (false, "no approval list".to_owned()),
            Approval::All => (true, "approval \"*\"".to_owned()),
            Approval::Methods(_) => {
                let listed = self.requires(original, sanitised, &[]);
                let why = if listed {
                    "listed under approval"
                } else {
                    "not listed under approval"
                };
                (listed, why.to_owned())
            }
        }
    }

    /// Whether the method a pending call names (the sanitised name, the only one a call carries) is listed,
    /// under that name or under the server's original one. For `confirmInApp`, which is asked after the call
    /// paused, when the original name is no longer at hand.
    pub fn lists(&self, sanitised: &str) -> bool {
        self.requires(sanitised, sanitised, &[])
    }
}

/// `"*"` or a list of method names, as `approval` and `confirmInApp` take them; `None` for anything else.
fn method_list(value: &Value) -> Option<Approval> {
    match value {
        Value::String(all) if all == "*" => Some(Approval::All),
        Value::Array(items) if items.iter().all(Value::is_string) => Some(Approval::Methods(
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        )),
        _ => None,
    }
}

/// Method → template, as written under `revert` or `preview`.
fn templates(raw: BTreeMap<String, RawRevert>) -> BTreeMap<String, RevertTemplate> {
    raw.into_iter()
        .map(|(method, r)| {
            (
                method,
                RevertTemplate {
                    method: r.method,
                    args: r.args,
                },
            )
        })
        .collect()
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

/// The `runtime` block's fields as the file spells them.
pub(crate) fn runtime_fields(settings: &RuntimeSettings) -> [(&'static str, Value); 7] {
    [
        ("name", Value::from(settings.name.clone())),
        ("maxExecutions", Value::from(settings.max_executions)),
        (
            "timeoutMs",
            Value::from(settings.timeout.as_millis() as u64),
        ),
        ("memoryLimitMb", Value::from(settings.memory_limit_mb)),
        ("pausedTtl", Value::from(format_age(settings.paused_ttl))),
        (
            "expirySweepMinutes",
            Value::from(settings.expiry_sweep.as_secs() / 60),
        ),
        (
            "keepDecidedFor",
            Value::from(format_age(settings.keep_decided_for)),
        ),
    ]
}

/// Replaces `<data dir>/connectors.json` with `text` atomically: written owner-only beside it, then renamed
/// over it, so a host reading it sees the old file or the new, never half of one.
pub(crate) fn replace_file(data_dir: &Path, text: &str) -> Result<(), String> {
    owner_only::replace(&data_dir.join(FILE_NAME), text.as_bytes())
        .map_err(|e| format!("cannot replace it: {e}"))
}

/// Settings a person can type that the runtime cannot use, with the field at fault. Checked when the file is
/// read as well as when settings are saved: a value the runtime cannot use otherwise surfaces much later, as
/// an unrelated failure (a sandbox worker that cannot start with `memoryLimitMb: 0`).
pub(crate) fn check_settings(settings: &RuntimeSettings) -> Result<(), (&'static str, String)> {
    if !codemode::names::is_runtime_name(&settings.name) {
        return Err((
            "name",
            format!(
                "runtime name \"{}\": use letters, digits, \"_\", \"-\" or \".\"",
                settings.name
            ),
        ));
    }
    let minimums = [
        ("maxExecutions", settings.max_executions as u128, 1),
        ("timeoutMs", settings.timeout.as_millis(), 100),
        ("memoryLimitMb", u128::from(settings.memory_limit_mb), 16),
        (
            "expirySweepMinutes",
            u128::from(settings.expiry_sweep.as_secs() / 60),
            1,
        ),
    ];
    match minimums.into_iter().find(|(_, value, least)| value < least) {
        Some((field, _, least)) => Err((field, format!("{field} must be at least {least}"))),
        None => Ok(()),
    }
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

/// The file as written, before defaults and resolution.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    runtime: Option<RawRuntime>,
    #[serde(default)]
    connectors: Option<Map<String, Value>>,
    #[serde(default, rename = "mcpServers")]
    mcp_servers: Option<Map<String, Value>>,
    #[serde(default)]
    rules: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawRuntime {
    name: Option<String>,
    max_executions: Option<usize>,
    timeout_ms: Option<u64>,
    memory_limit_mb: Option<u64>,
    paused_ttl: Option<Value>,
    expiry_sweep_minutes: Option<u64>,
    max_output_chars: Option<usize>,
    store: Option<String>,
    keep_decided_for: Option<Value>,
    webhooks: Option<Vec<Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWebhook {
    url: String,
    format: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawConnector {
    #[serde(rename = "type")]
    kind: Option<String>,
    root: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    /// Checked by hand so that a wrong value is never echoed.
    env: Option<Value>,
    cwd: Option<String>,
    url: Option<String>,
    headers: Option<Value>,
    ca_file: Option<String>,
    /// Checked by hand so that a wrong value is never echoed.
    oauth: Option<Value>,
    approval: Option<Value>,
    confirm_in_app: Option<Value>,
    ask_in_client: Option<Value>,
    decide_within: Option<String>,
    #[serde(default)]
    reexecute: Vec<String>,
    #[serde(default)]
    hidden: Vec<String>,
    hint: Option<String>,
    call_timeout_ms: Option<u64>,
    revert_timeout_ms: Option<u64>,
    #[serde(default)]
    revert: BTreeMap<String, RawRevert>,
    #[serde(default)]
    preview: BTreeMap<String, RawRevert>,
    #[serde(default)]
    read_only: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRevert {
    method: String,
    #[serde(default = "empty_object")]
    args: Value,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// Parses a configuration; `path` names it in errors and `data_dir` anchors relative paths.
pub fn parse(text: &str, path: &Path, data_dir: &Path) -> Result<Config, ConfigError> {
    let file = path.display().to_string();
    let at_path = |needles: &[&str], message: String| {
        let (line, column) = locate(text, needles);
        ConfigError {
            file: file.clone(),
            line,
            column,
            message,
        }
    };
    let at = |needle: &str, message: String| at_path(&[needle], message);
    // A connector may use the same key: the runtime's is the one after `"runtime"`.
    let in_runtime =
        |field: &str, message: String| at_path(&["\"runtime\"", &format!("\"{field}\"")], message);
    let raw: RawFile = serde_json::from_str(text).map_err(|e| ConfigError {
        file: file.clone(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })?;
    let mut webhooks = Vec::new();
    for value in raw
        .runtime
        .as_ref()
        .and_then(|r| r.webhooks.clone())
        .unwrap_or_default()
    {
        webhooks.push(webhook(value).map_err(|message| in_runtime("webhooks", message))?);
    }
    let defaults = RuntimeSettings::default();
    let max_output_chars = raw
        .runtime
        .as_ref()
        .and_then(|r| r.max_output_chars)
        .unwrap_or(DEFAULT_MAX_OUTPUT_CHARS);
    if max_output_chars < MIN_MAX_OUTPUT_CHARS {
        return Err(in_runtime(
            "maxOutputChars",
            format!("maxOutputChars must be at least {MIN_MAX_OUTPUT_CHARS}"),
        ));
    }
    let store = match raw.runtime.as_ref().and_then(|r| r.store.as_deref()) {
        None => None,
        Some(url) => match codemode::StoreLocation::parse(url) {
            codemode::StoreLocation::Postgres(url) => Some(url),
            codemode::StoreLocation::File(_) => {
                return Err(in_runtime(
                    "store",
                    "store must be a PostgreSQL URL such as \"postgres://user@host:5432/codemode\"; \
                     without it the store is codemode.db in the data directory"
                        .to_owned(),
                ));
            }
        },
    };
    let runtime = match raw.runtime {
        None => defaults,
        Some(r) => RuntimeSettings {
            name: r.name.unwrap_or(defaults.name),
            max_executions: r.max_executions.unwrap_or(defaults.max_executions),
            timeout: r.timeout_ms.map_or(defaults.timeout, Duration::from_millis),
            memory_limit_mb: r.memory_limit_mb.unwrap_or(defaults.memory_limit_mb),
            paused_ttl: match r.paused_ttl {
                None => defaults.paused_ttl,
                Some(value) => parse_age(&value).ok_or_else(|| {
                    in_runtime(
                        "pausedTtl",
                        "pausedTtl must be a duration such as \"0s\", \"90m\", \"24h\" or \"7d\""
                            .to_owned(),
                    )
                })?,
            },
            expiry_sweep: match r.expiry_sweep_minutes {
                None => defaults.expiry_sweep,
                Some(minutes) => minutes
                    .checked_mul(60)
                    .map(Duration::from_secs)
                    .ok_or_else(|| {
                        in_runtime(
                            "expirySweepMinutes",
                            "expirySweepMinutes is too large".to_owned(),
                        )
                    })?,
            },
            keep_decided_for: match r.keep_decided_for {
                None => defaults.keep_decided_for,
                Some(value) => parse_age(&value).ok_or_else(|| {
                    in_runtime(
                        "keepDecidedFor",
                        "keepDecidedFor must be a duration such as \"90d\", \"24h\" or \"0s\""
                            .to_owned(),
                    )
                })?,
            },
        },
    };
    check_settings(&runtime).map_err(|(field, message)| in_runtime(field, message))?;
    let mut connectors: Vec<ConnectorConfig> = Vec::new();
    let sections = [
        ("connectors", raw.connectors),
        ("mcpServers", raw.mcp_servers),
    ];
    for (section, entries) in sections {
        for (key, value) in entries.into_iter().flatten() {
            let needle = format!("\"{key}\"");
            let entry: RawConnector = serde_json::from_value(value).map_err(|e| {
                at(
                    &needle,
                    format!("{section}.{key}: {}", strip_position(&e.to_string())),
                )
            })?;
            let name = sanitize_tool_name(&key);
            check_connector_name(&name).map_err(|message| at(&needle, message))?;
            if let Some(other) = connectors.iter().find(|c| c.name == name) {
                return Err(at(
                    &needle,
                    format!(
                        "Connectors \"{}\" and \"{key}\" both map to \"{name}\"; rename one of them",
                        other.key
                    ),
                ));
            }
            let kind =
                connector_kind(section, &key, &entry, data_dir).map_err(|m| at(&needle, m))?;
            let approval = match &entry.approval {
                None => Approval::Default,
                Some(Value::String(gate)) if gate == "writes" || gate == "destructive" => {
                    if matches!(kind, ConnectorKind::Files { .. }) {
                        return Err(at(
                            &needle,
                            format!(
                                "{key}.approval \"{gate}\" reads the tool annotations an MCP server declares; a files connector has none: list its methods instead"
                            ),
                        ));
                    }
                    if gate == "writes" {
                        Approval::Writes
                    } else {
                        Approval::Destructive
                    }
                }
                Some(value) => method_list(value).ok_or_else(|| {
                    at(
                        &needle,
                        format!(
                            "{key}.approval must be \"*\", \"writes\", \"destructive\" or a list of method names"
                        ),
                    )
                })?,
            };
            let confirm_in_app = match &entry.confirm_in_app {
                None | Some(Value::Bool(false)) => Approval::Methods(Vec::new()),
                Some(Value::Bool(true)) => Approval::All,
                Some(value) => method_list(value).ok_or_else(|| {
                    at(
                        &needle,
                        format!("{key}.confirmInApp must be true, \"*\" or a list of method names"),
                    )
                })?,
            };
            let ask_in_client = match &entry.ask_in_client {
                None | Some(Value::Bool(false)) => Approval::Methods(Vec::new()),
                Some(Value::Bool(true)) => Approval::All,
                Some(value) => method_list(value).ok_or_else(|| {
                    at(
                        &needle,
                        format!("{key}.askInClient must be true, \"*\" or a list of method names"),
                    )
                })?,
            };
            let decide_within = match &entry.decide_within {
                None => None,
                Some(text) => Some(
                    parse_age_text(text)
                        .filter(|d| !d.is_zero())
                        .ok_or_else(|| {
                            at_path(
                                &[&needle, "\"decideWithin\""],
                                format!("{key}.decideWithin: \"{text}\" is not a duration (write 30m, 2h, 1d…)"),
                            )
                        })?,
                ),
            };
            // A preview is made before the call runs: it has arguments, and no result yet.
            if let Some(method) = entry
                .preview
                .iter()
                .find(|(_, template)| template.args.to_string().contains("{{result."))
                .map(|(method, _)| method)
            {
                return Err(at_path(
                    &[&needle, "\"preview\""],
                    format!(
                        "{key}.preview.{method}: a preview runs before the call, so its args may use {{{{args.…}}}} but not {{{{result.…}}}}"
                    ),
                ));
            }
            // A preview runs without a person, every time a card is shown: it may only read. A gated method is
            // refused here; one the server does not annotate read-only (nor `readOnly` lists) is refused when
            // the preview would run (docs/design.md, "Previews only read").
            let gates = |method: &str| match &approval {
                Approval::All => true,
                Approval::Methods(_) => approval.requires(method, &sanitize_tool_name(method), &[]),
                // Known only from the server's annotations: a preview naming a gated tool is refused when it
                // would run (it must be annotated read-only, or listed under readOnly).
                Approval::Default | Approval::Writes | Approval::Destructive => false,
            };
            if let Some((method, template)) = entry
                .preview
                .iter()
                .find(|(_, template)| gates(&template.method))
            {
                return Err(at_path(
                    &[&needle, "\"preview\""],
                    format!(
                        "{key}.preview.{method}: names {}, which needs approval; a preview runs without a person, so it may only name a read-only method (annotated readOnlyHint by the server, or listed under readOnly)",
                        template.method
                    ),
                ));
            }
            // 0 would report every call as hung and stop the server.
            let timeouts = [
                ("callTimeoutMs", entry.call_timeout_ms),
                ("revertTimeoutMs", entry.revert_timeout_ms),
            ];
            if let Some((field, _)) = timeouts.iter().find(|(_, ms)| *ms == Some(0)) {
                return Err(at_path(
                    &[&needle, &format!("\"{field}\"")],
                    format!("{key}.{field} must be at least 1"),
                ));
            }
            connectors.push(ConnectorConfig {
                name,
                key: key.clone(),
                kind,
                approval,
                asking: Asking {
                    in_client: ask_in_client,
                    confirm_in_app: confirm_in_app.clone(),
                    decide_within,
                },
                confirm_in_app,
                reexecute: entry.reexecute,
                hidden: entry.hidden,
                hint: entry.hint,
                call_timeout: Duration::from_millis(entry.call_timeout_ms.unwrap_or(30_000)),
                revert_timeout: Duration::from_millis(entry.revert_timeout_ms.unwrap_or(30_000)),
                revert: templates(entry.revert),
                preview: templates(entry.preview),
                read_only: entry.read_only,
            });
        }
    }
    let mut rules: Vec<codemode::Rule> = Vec::with_capacity(raw.rules.len());
    for (index, value) in raw.rules.into_iter().enumerate() {
        let id = value["id"].as_str().map(str::to_owned);
        let needle = id
            .as_ref()
            .map_or("\"rules\"".to_owned(), |id| format!("\"{id}\""));
        let rule = codemode::Rule::from_value(value)
            .map_err(|e| at(&needle, format!("rules[{index}]: {e}")))?;
        codemode::rules::CompiledRule::new(rule.clone())
            .map_err(|e| at(&needle, format!("rules[{index}]: {e}")))?;
        if rules.iter().any(|r| r.id == rule.id) {
            return Err(at(
                &needle,
                format!("rules[{index}]: rule {}: id: used twice", rule.id),
            ));
        }
        rules.push(rule);
    }
    Ok(Config {
        runtime,
        connectors,
        rules,
        max_output_chars,
        store,
        webhooks,
    })
}

/// One `runtime.webhooks` entry, checked: an http(s) URL with a host, and a known format.
fn webhook(value: Value) -> Result<Webhook, String> {
    let raw: RawWebhook = serde_json::from_value(value).map_err(|e| {
        format!(
            "a webhook is {{\"url\": \"https://…\", \"format\": \"json\" | \"slack\" | \"ntfy\"}}: {}",
            strip_position(&e.to_string())
        )
    })?;
    let parsed = url::Url::parse(&raw.url)
        .map_err(|e| format!("webhook url \"{}\" is not a URL: {e}", raw.url))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(format!(
            "webhook url \"{}\" must be an http or https URL with a host",
            raw.url
        ));
    }
    let format = match raw.format.as_deref().unwrap_or("json") {
        "json" => WebhookFormat::Json,
        "slack" => WebhookFormat::Slack,
        "ntfy" => WebhookFormat::Ntfy,
        other => {
            return Err(format!(
                "webhook format \"{other}\" is not one of \"json\", \"slack\", \"ntfy\""
            ));
        }
    };
    Ok(Webhook {
        url: raw.url,
        format,
    })
}

fn connector_kind(
    section: &str,
    key: &str,
    entry: &RawConnector,
    data_dir: &Path,
) -> Result<ConnectorKind, String> {
    let kind = match (
        entry.kind.as_deref(),
        &entry.command,
        &entry.url,
        &entry.root,
    ) {
        (Some("files"), ..) => "files",
        (Some("mcp" | "stdio"), Some(_), _, _) | (None, Some(_), None, _) => "stdio",
        (Some("mcp" | "http" | "streamable-http" | "sse"), None, Some(_), _)
        | (None, None, Some(_), _) => "http",
        (None, None, None, Some(_)) if section == "connectors" => "files",
        (Some(other), ..)
            if !matches!(other, "mcp" | "stdio" | "http" | "streamable-http" | "sse") =>
        {
            return Err(format!(
                "{key}: unknown type \"{other}\" (use \"files\" or \"mcp\")"
            ));
        }
        _ => {
            return Err(format!(
                "{key}: an MCP connector needs a \"command\" or a \"url\""
            ));
        }
    };
    match kind {
        "files" => {
            let root = entry
                .root
                .as_deref()
                .ok_or_else(|| format!("{key}: a files connector needs a \"root\""))?;
            Ok(ConnectorKind::Files {
                root: resolve_path(root, data_dir),
            })
        }
        "stdio" => Ok(ConnectorKind::Stdio {
            command: entry.command.clone().unwrap_or_default(),
            args: entry.args.clone(),
            env: secrets(key, "env", entry.env.as_ref())?,
            cwd: entry.cwd.as_deref().map(|c| resolve_path(c, data_dir)),
        }),
        _ => Ok(ConnectorKind::Http {
            url: entry.url.clone().unwrap_or_default(),
            headers: secrets(key, "headers", entry.headers.as_ref())?,
            ca_file: entry.ca_file.as_deref().map(|c| resolve_path(c, data_dir)),
            oauth: entry
                .oauth
                .as_ref()
                .map(|o| oauth_client(key, o))
                .transpose()?,
        }),
    }
}

/// `oauth` of a remote connector; a wrong value is described, never echoed (it may hold the secret).
fn oauth_client(key: &str, value: &Value) -> Result<OAuthClient, String> {
    let Value::Object(map) = value else {
        return Err(format!(
            "{key}.oauth must be an object: {{\"clientId\", \"clientSecret\", \"scopes\"}}"
        ));
    };
    let text = |field: &str| match map.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_owned())),
        Some(_) => Err(format!("{key}.oauth.{field} must be a non-empty string")),
    };
    if let Some(unknown) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "clientId" | "clientSecret" | "scopes"))
    {
        return Err(format!(
            "{key}.oauth: unknown field \"{unknown}\" (use clientId, clientSecret, scopes)"
        ));
    }
    let client = OAuthClient {
        client_id: text("clientId")?,
        client_secret: text("clientSecret")?,
        scopes: match map.get("scopes") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(_) => return Err(format!("{key}.oauth.scopes must be a list of strings")),
        },
    };
    if client.client_secret.is_some() && client.client_id.is_none() {
        return Err(format!("{key}.oauth: a clientSecret needs its clientId"));
    }
    Ok(client)
}

/// A map of strings whose values must never be shown, even when they are of the wrong type.
fn secrets(
    key: &str,
    field: &str,
    value: Option<&Value>,
) -> Result<BTreeMap<String, String>, String> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let Value::Object(map) = value else {
        return Err(format!("{key}.{field} must be an object of strings"));
    };
    map.iter()
        .map(|(name, v)| match v {
            Value::String(s) => Ok((name.clone(), s.clone())),
            _ => Err(format!("{key}.{field}.{name} must be a string")),
        })
        .collect()
}

/// `~` is the home directory; relative paths are relative to the data directory.
pub fn resolve_path(path: &str, data_dir: &Path) -> PathBuf {
    if path == "~" || path.starts_with("~/") {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        return home.join(path.trim_start_matches('~').trim_start_matches('/'));
    }
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_owned()
    } else {
        data_dir.join(path)
    }
}

/// `0s`, `90m`, `24h`, `7d`, `500ms`, or a number of milliseconds.
pub fn parse_age(value: &Value) -> Option<Duration> {
    match value {
        Value::Number(n) => n.as_u64().map(Duration::from_millis),
        Value::String(text) => parse_age_text(text),
        _ => None,
    }
}

/// serde's messages end with " at line L column C"; the position is reported separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// The 1-based line and column of the first occurrence of the last needle, each needle searched after the
/// one before it (1:1 when one is absent).
fn locate(text: &str, needles: &[&str]) -> (usize, usize) {
    let mut offset = 0;
    for needle in needles {
        let Some(found) = text[offset..].find(needle) else {
            return (1, 1);
        };
        offset += found;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Renders a revert template: a string that is exactly one `{{path}}` becomes that value with its JSON type; a
/// template inside a longer string interpolates as text; a missing path is an error naming it.
pub fn render_template(template: &Value, args: &Value, result: &Value) -> Result<Value, String> {
    match template {
        Value::String(text) => render_string(text, args, result),
        Value::Array(items) => items
            .iter()
            .map(|i| render_template(i, args, result))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| render_template(v, args, result).map(|v| (k.clone(), v)))
            .collect::<Result<Map<_, _>, _>>()
            .map(Value::Object),
        other => Ok(other.clone()),
    }
}

fn render_string(text: &str, args: &Value, result: &Value) -> Result<Value, String> {
    let trimmed = text.trim();
    if let Some(inner) = trimmed
        .strip_prefix("{{")
        .and_then(|t| t.strip_suffix("}}"))
        && !inner.contains("{{")
        && !inner.contains("}}")
    {
        return lookup(inner.trim(), args, result).cloned();
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(end) = rest[start..].find("}}") else {
            break;
        };
        out.push_str(&rest[..start]);
        let value = lookup(rest[start + 2..start + end].trim(), args, result)?;
        match value {
            Value::String(s) => out.push_str(s),
            other => out.push_str(&other.to_string()),
        }
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    Ok(Value::String(out))
}

fn lookup<'a>(path: &str, args: &'a Value, result: &'a Value) -> Result<&'a Value, String> {
    let mut parts = path.split('.');
    let mut current = match parts.next() {
        Some("args") => args,
        Some("result") => result,
        _ => {
            return Err(format!(
                "revert template {{{{{path}}}}} must start with args. or result."
            ));
        }
    };
    for part in parts {
        let next = match current {
            Value::Object(map) => map.get(part),
            Value::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        current =
            next.ok_or_else(|| format!("revert template {{{{{path}}}}}: no value at \"{part}\""))?;
    }
    Ok(current)
}
