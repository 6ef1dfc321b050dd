//! MCP servers as connectors: every tool of a server becomes a method, with approval, replay and revert decided
//! per tool in `connectors.json` (README "Configuration", docs/semantics.md §11.1). Servers start on first
//! use, are restarted after they die or hang, and their tool lists are cached per start.

use crate::config::{Approval, ConnectorConfig, ConnectorKind, RevertTemplate, render_template};
use crate::remote;
use codemode::names::sanitize_tool_name;
use codemode::{BoxFuture, CallContext, Connector, Replay, ToolDescriptor};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    Implementation,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Starting a server may take longer than one call (`npx` fetching a package, a slow interpreter): it gets at
/// least this long, or the call timeout if that is longer.
const MIN_START_TIMEOUT: Duration = Duration::from_secs(30);
/// How many lines of a server's stderr are kept to explain why it failed.
const STDERR_LINES: usize = 20;
/// Longer stderr lines are cut (after secrets are removed: a cut through a secret would keep its prefix).
const STDERR_LINE_CHARS: usize = 400;

/// Per-tool policy from `connectors.json`; every list accepts the original or the sanitised tool name.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub approval: Option<Approval>,
    pub reexecute: Vec<String>,
    pub hidden: Vec<String>,
    /// Method (as written) → the call that undoes it.
    pub revert: BTreeMap<String, RevertTemplate>,
    /// Method (as written) → the read-only call that shows what it would change.
    pub preview: BTreeMap<String, RevertTemplate>,
    /// Methods previews may call besides those the server annotates read-only.
    pub read_only: Vec<String>,
    pub asking: crate::config::Asking,
}

impl Policy {
    fn lists(list: &[String], original: &str, sanitised: &str) -> bool {
        list.iter()
            .any(|m| m == original || m == sanitised || sanitize_tool_name(m) == sanitised)
    }

    fn revert_for(&self, original: &str, sanitised: &str) -> Option<&RevertTemplate> {
        Self::template_for(&self.revert, original, sanitised)
    }

    fn preview_for(&self, original: &str, sanitised: &str) -> Option<&RevertTemplate> {
        Self::template_for(&self.preview, original, sanitised)
    }

    fn template_for<'a>(
        templates: &'a BTreeMap<String, RevertTemplate>,
        original: &str,
        sanitised: &str,
    ) -> Option<&'a RevertTemplate> {
        templates
            .iter()
            .find(|(m, _)| *m == original || *m == sanitised || sanitize_tool_name(m) == sanitised)
            .map(|(_, template)| template)
    }
}

/// What the app shows about a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    NotStarted,
    /// Starting now (a first call, a listing, a test).
    Starting,
    Running {
        pid: Option<u32>,
        tools: usize,
    },
    Failed {
        error: String,
    },
}

/// An MCP server as a connector.
pub struct McpConnector {
    name: String,
    /// Where the server runs: `Stdio` or `Http`.
    endpoint: ConnectorKind,
    policy: Policy,
    call_timeout: Duration,
    revert_timeout: Duration,
    /// The running server; a tokio lock so that one start is awaited by every caller that needs it.
    session: tokio::sync::Mutex<Option<Arc<Session>>>,
    /// Bumped on every start, so the runtime asks for the tools again.
    generation: AtomicU64,
    state: Mutex<ServerState>,
    /// Values of `env` and `headers` as a server may print them, removed from every message.
    secrets: Arc<[String]>,
    /// Where a remote server's sign-in is kept (`remote::credentials_path`); `None` for local servers.
    credentials: Option<PathBuf>,
    /// Where the gates its tools' annotations produced are remembered between starts, so a gate a new version
    /// of the server moves is shown as moved (`<data dir>/state/<name>/gates.json`).
    gates_file: Option<PathBuf>,
}

/// How long a moved gate is shown as moved.
const GATE_CHANGE_SHOWN_MS: i64 = 7 * 24 * 3600 * 1000;

/// One tool's gate as remembered in `gates.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct RememberedGate {
    asked: bool,
    gate: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    changed: Option<codemode::GateChange>,
}

/// One start of a server.
struct Session {
    generation: u64,
    service: RunningService<RoleClient, ClientConfig>,
    pid: Option<u32>,
    methods: Vec<Method>,
    /// Sanitised names that collide; reported on use, as the reference throws when it builds the methods.
    collision: Option<String>,
    instructions: Option<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

struct Method {
    original: String,
    descriptor: ToolDescriptor,
    /// The server annotates the tool `readOnlyHint: true`.
    read_only: bool,
}

impl Session {
    fn original(&self, method: &str) -> Option<&str> {
        self.methods
            .iter()
            .find(|m| m.descriptor.name == method || m.original == method)
            .map(|m| m.original.as_str())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl McpConnector {
    pub fn new(
        name: &str,
        endpoint: ConnectorKind,
        policy: Policy,
        call_timeout: Duration,
        revert_timeout: Duration,
    ) -> Self {
        let secrets: Vec<String> = match &endpoint {
            ConnectorKind::Files { .. } => Vec::new(),
            ConnectorKind::Stdio { env, .. } => env.values().cloned().collect(),
            ConnectorKind::Http { headers, oauth, .. } => headers
                .values()
                .flat_map(|v| {
                    // `Bearer <token>`: the token alone may also be echoed back.
                    let mut parts = vec![v.clone()];
                    parts.extend(v.split_whitespace().skip(1).map(str::to_owned));
                    parts
                })
                .chain(oauth.as_ref().and_then(|o| o.client_secret.clone()))
                .collect(),
        };
        let secrets = printed_forms(secrets.into_iter().filter(|s| s.len() >= 4));
        McpConnector {
            name: name.to_owned(),
            endpoint,
            policy,
            call_timeout,
            revert_timeout,
            session: tokio::sync::Mutex::new(None),
            generation: AtomicU64::new(0),
            state: Mutex::new(ServerState::NotStarted),
            secrets,
            credentials: None,
            gates_file: None,
        }
    }

    /// Remembers the gates its tools' annotations produce under `data_dir`, to show one a server moves.
    pub fn with_gates_file(mut self, data_dir: &Path) -> Self {
        self.gates_file = Some(data_dir.join("state").join(&self.name).join("gates.json"));
        self
    }

    /// Compares the gates the server's annotations produce now with those of its last start: a tool whose gate
    /// moved (same `approval` mode, other verdict or other annotations) carries the old one for
    /// [`GATE_CHANGE_SHOWN_MS`]. Only gates read from annotations are remembered: a list is the person's own.
    fn remember_gates(&self, methods: &mut [Method]) {
        let Some(file) = &self.gates_file else {
            return;
        };
        let by_hints = |gate: &str| {
            gate.starts_with("approval \"writes\"") || gate.starts_with("approval \"destructive\"")
        };
        let mut remembered: BTreeMap<String, RememberedGate> = std::fs::read(file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let mode = |gate: &str| gate.split(':').next().unwrap_or_default().to_owned();
        for method in methods.iter_mut() {
            let descriptor = &mut method.descriptor;
            let Some(gate) = descriptor.gate.clone().filter(|g| by_hints(g)) else {
                continue;
            };
            let asked = descriptor.requires_approval;
            let changed = match remembered.get(&method.original) {
                Some(before)
                    if mode(&before.gate) == mode(&gate)
                        && (before.asked != asked || before.gate != gate) =>
                {
                    Some(codemode::GateChange {
                        asked: before.asked,
                        gate: before.gate.clone(),
                        at: now,
                    })
                }
                Some(before) if before.gate == gate && before.asked == asked => before
                    .changed
                    .clone()
                    .filter(|c| now - c.at < GATE_CHANGE_SHOWN_MS),
                _ => None,
            };
            descriptor.gate_changed = changed.clone();
            remembered.insert(
                method.original.clone(),
                RememberedGate {
                    asked,
                    gate,
                    changed,
                },
            );
        }
        if let Ok(text) = serde_json::to_vec_pretty(&remembered) {
            // Best effort: without the file a moved gate is simply not shown as moved.
            if let Some(folder) = file.parent() {
                let _ = crate::owner_only::create_dir_all(folder);
            }
            let _ = std::fs::write(file, text);
        }
    }

    /// Keeps a remote server's sign-in at `path`, as `codemode login` saves it.
    pub fn with_credentials(mut self, path: PathBuf) -> Self {
        self.credentials = Some(path);
        self
    }

    /// Where this server's sign-in is kept, for a remote server.
    pub fn credentials(&self) -> Option<&Path> {
        self.credentials.as_deref()
    }

    /// The MCP connector a `connectors.json` entry describes; `None` for other kinds.
    pub fn from_config(entry: &ConnectorConfig, data_dir: &Path) -> Option<Self> {
        if let ConnectorKind::Files { .. } = entry.kind {
            return None;
        }
        let policy = Policy {
            approval: match &entry.approval {
                Approval::Default => None,
                other => Some(other.clone()),
            },
            reexecute: entry.reexecute.clone(),
            hidden: entry.hidden.clone(),
            revert: entry.revert.clone(),
            preview: entry.preview.clone(),
            read_only: entry.read_only.clone(),
            asking: entry.asking.clone(),
        };
        let connector = McpConnector::new(
            &entry.name,
            entry.kind.clone(),
            policy,
            entry.call_timeout,
            entry.revert_timeout,
        );
        Some(
            match entry.kind {
                ConnectorKind::Http { .. } => {
                    connector.with_credentials(remote::credentials_path(data_dir, &entry.name))
                }
                _ => connector,
            }
            .with_gates_file(data_dir),
        )
    }

    /// The tool's name as the server spells it (methods are sanitised names), which policy lists may use.
    async fn original_name(&self, method: &str) -> Result<String, String> {
        let session = self.session().await?;
        Ok(session.original(method).unwrap_or(method).to_owned())
    }

    /// Whether the server is running, and if not, why.
    pub fn state(&self) -> ServerState {
        lock(&self.state).clone()
    }

    /// Stops the server, if it runs; the next call starts it again.
    pub async fn shutdown(&self) {
        let session = self.session.lock().await.take();
        if let Some(session) = session {
            *lock(&self.state) = ServerState::NotStarted;
            stop(session).await;
        }
    }

    fn redact(&self, message: String) -> String {
        redact(&self.secrets, message)
    }

    /// The running server, started (or restarted) when there is none.
    async fn session(&self) -> Result<Arc<Session>, String> {
        let mut current = self.session.lock().await;
        if let Some(session) = current.as_ref()
            && !session.service.is_closed()
        {
            return Ok(session.clone());
        }
        if let Some(dead) = current.take() {
            stop(dead).await;
        }
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        *lock(&self.state) = ServerState::Starting;
        let start_timeout = self.call_timeout.max(MIN_START_TIMEOUT);
        let started = tokio::time::timeout(start_timeout, self.start(generation)).await;
        let result = match started {
            Ok(Ok(session)) => Ok(Arc::new(session)),
            // A reason that already names the server (a sign-in it needs) is said as it is.
            Ok(Err(reason)) if reason.starts_with(&format!("MCP server \"{}\"", self.name)) => {
                Err(reason)
            }
            Ok(Err(reason)) => Err(format!(
                "MCP server \"{}\" failed to start: {reason}",
                self.name
            )),
            Err(_) => Err(format!(
                "MCP server \"{}\" did not start within {} ms",
                self.name,
                start_timeout.as_millis()
            )),
        };
        match result {
            Ok(session) => {
                *lock(&self.state) = ServerState::Running {
                    pid: session.pid,
                    tools: session.methods.len(),
                };
                *current = Some(session.clone());
                Ok(session)
            }
            Err(message) => {
                let message = self.redact(message);
                *lock(&self.state) = ServerState::Failed {
                    error: message.clone(),
                };
                Err(message)
            }
        }
    }

    /// Forgets a session that died or hung, unless it was already replaced.
    async fn discard(&self, session: &Arc<Session>, why: String) {
        let mut current = self.session.lock().await;
        if current
            .as_ref()
            .is_some_and(|s| s.generation == session.generation)
            && let Some(old) = current.take()
        {
            *lock(&self.state) = ServerState::Failed { error: why };
            drop(current);
            stop(old).await;
        }
    }

    async fn start(&self, generation: u64) -> Result<Session, String> {
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("codemode-console", env!("CARGO_PKG_VERSION")),
        );
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let (service, pid) = match &self.endpoint {
            ConnectorKind::Files { .. } => {
                return Err("a files connector is not an MCP server".to_owned());
            }
            ConnectorKind::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut cmd = tokio::process::Command::new(command);
                cmd.args(args).envs(env).kill_on_drop(true);
                if let Some(cwd) = cwd {
                    cmd.current_dir(cwd);
                }
                let mut wrapped = process_wrap::tokio::CommandWrap::from(cmd);
                // Its own process group, so that stopping it also stops what it started (`npx` → `node`).
                wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
                let (transport, child_stderr) =
                    rmcp::transport::TokioChildProcess::builder(wrapped)
                        .stderr(std::process::Stdio::piped())
                        .spawn()
                        .map_err(|e| format!("cannot run \"{command}\": {e}"))?;
                let pid = transport.id();
                if let Some(child_stderr) = child_stderr {
                    tokio::spawn(keep_tail(
                        child_stderr,
                        stderr.clone(),
                        self.secrets.clone(),
                    ));
                }
                match client.serve(transport).await {
                    Ok(service) => (service, pid),
                    Err(e) => {
                        // Give the reader a moment to collect the dying server's last words.
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        return Err(with_tail(e.to_string(), &stderr));
                    }
                }
            }
            ConnectorKind::Http {
                url,
                headers,
                ca_file,
                oauth,
            } => (
                self.connect(client, url, headers, ca_file.as_deref(), oauth.as_ref())
                    .await?,
                None,
            ),
        };
        let tools = match service.peer().list_all_tools().await {
            Ok(tools) => tools,
            Err(e) => {
                let message = with_tail(format!("listing its tools failed: {e}"), &stderr);
                let _ = service.cancel().await;
                return Err(message);
            }
        };
        let instructions = service
            .peer_info()
            .and_then(|info| info.instructions.clone())
            .filter(|i| !i.trim().is_empty());
        let mut methods: Vec<Method> = Vec::with_capacity(tools.len());
        let mut collision = None;
        for tool in tools {
            let original = tool.name.to_string();
            let sanitised = sanitize_tool_name(&original);
            if let Some(other) = methods.iter().find(|m| m.descriptor.name == sanitised) {
                collision.get_or_insert(self.redact(format!(
                    "MCP tools \"{}\" and \"{original}\" on {} both map to \"{sanitised}\". Override toolName() to disambiguate.",
                    other.original, self.name
                )));
                continue;
            }
            let policy = &self.policy;
            let hints = crate::config::ToolHints {
                read_only: tool.annotations.as_ref().and_then(|a| a.read_only_hint),
                destructive: tool.annotations.as_ref().and_then(|a| a.destructive_hint),
            };
            let (requires_approval, gate) = match &policy.approval {
                None => (false, "no approval list".to_owned()),
                Some(approval) => approval.gate(&original, &sanitised, hints),
            };
            let mut descriptor = ToolDescriptor {
                name: sanitised.clone(),
                description: tool.description.as_deref().map(str::to_owned),
                input_schema: Some(Value::Object((*tool.input_schema).clone())),
                output_schema: tool
                    .output_schema
                    .as_deref()
                    .map(|s| Value::Object(s.clone())),
                requires_approval,
                replay: if Policy::lists(&policy.reexecute, &original, &sanitised) {
                    Replay::Reexecute
                } else {
                    Replay::Log
                },
                hidden: Policy::lists(&policy.hidden, &original, &sanitised),
                revertible: policy.revert_for(&original, &sanitised).is_some(),
                read_only_hint: hints.read_only,
                destructive_hint: hints.destructive,
                gate: Some(gate),
                ..ToolDescriptor::default()
            };
            policy.asking.mark(&mut descriptor, &original);
            let read_only = tool
                .annotations
                .as_ref()
                .and_then(|annotations| annotations.read_only_hint)
                == Some(true);
            methods.push(Method {
                original,
                descriptor,
                read_only,
            });
        }
        self.remember_gates(&mut methods);
        Ok(Session {
            generation,
            service,
            pid,
            methods,
            collision,
            instructions,
            stderr,
        })
    }

    /// Connects to a remote server over streamable HTTP(S), with its sign-in's token when one is kept (refreshed
    /// before it expires). A server that asks for a sign-in nobody gave gets a message naming how to give it.
    async fn connect(
        &self,
        client: ClientConfig,
        url: &str,
        headers: &BTreeMap<String, String>,
        ca_file: Option<&Path>,
        oauth: Option<&crate::config::OAuthClient>,
    ) -> Result<RunningService<RoleClient, ClientConfig>, String> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::auth::AuthClient;
        let http = remote::http_client(&self.name, ca_file)?;
        let config = http_config(url, headers)?;
        let authorization = match &self.credentials {
            Some(path) => remote::stored_authorization(&self.name, url, &http, path, oauth).await?,
            None => None,
        };
        let signed_in = authorization.is_some();
        let served = match authorization {
            Some(manager) => {
                let transport = StreamableHttpClientTransport::with_client(
                    AuthClient::new(http, manager),
                    config,
                );
                client.serve(transport).await
            }
            None => {
                client
                    .serve(StreamableHttpClientTransport::with_client(http, config))
                    .await
            }
        };
        served.map_err(|e| {
            if e.auth_challenge().is_some() {
                remote::sign_in_needed(
                    &self.name,
                    if signed_in {
                        "refused its sign-in (it expired or was revoked)"
                    } else {
                        "needs a sign-in"
                    },
                )
            } else {
                remote::describe_connect_error(url, &e)
            }
        })
    }

    /// One `tools/call`, unwrapped as the reference does; `what` names the call in messages.
    async fn call(
        &self,
        method: &str,
        args: Option<Value>,
        limit: Duration,
    ) -> Result<Option<Value>, String> {
        let session = self.session().await?;
        if let Some(collision) = &session.collision {
            return Err(collision.clone());
        }
        let Some(original) = session.original(method) else {
            return Err(format!("Tool \"{method}\" not found on {}", self.name));
        };
        let mut params = CallToolRequestParams::new(original.to_owned());
        match args {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => params = params.with_arguments(map),
            Some(_) => {
                return Err(format!(
                    "Arguments to {}.{method} must be an object",
                    self.name
                ));
            }
        }
        let answer =
            tokio::time::timeout(limit, session.service.peer().call_tool_once(params)).await;
        match answer {
            Err(_) => {
                let message = format!(
                    "MCP server \"{}\" did not answer {}.{method} within {} ms; it is stopped and will be restarted on the next call",
                    self.name,
                    self.name,
                    limit.as_millis()
                );
                self.discard(&session, message.clone()).await;
                Err(message)
            }
            Ok(Err(ServiceError::McpError(error))) => Err(self.redact(error.message.to_string())),
            Ok(Err(error)) if error.auth_challenge().is_some() => {
                let message = remote::sign_in_needed(
                    &self.name,
                    "refused its sign-in (it expired or was revoked)",
                );
                self.discard(&session, message.clone()).await;
                Err(message)
            }
            Ok(Err(error)) => {
                let message = self.redact(with_tail(
                    format!(
                        "MCP server \"{}\" stopped during {}.{method} ({error}); it will be restarted on the next call",
                        self.name, self.name
                    ),
                    &session.stderr,
                ));
                self.discard(&session, message.clone()).await;
                Err(message)
            }
            Ok(Ok(CallToolResponse::Complete(result))) => {
                unwrap_result(result).map_err(|e| self.redact(e))
            }
            Ok(Ok(CallToolResponse::InputRequired(_))) => Err(format!(
                "MCP server \"{}\" asked for more input during {}.{method}, which codemode does not support",
                self.name, self.name
            )),
            Ok(Ok(_)) => Err(format!(
                "MCP server \"{}\" answered {}.{method} with a task, which codemode does not support",
                self.name, self.name
            )),
        }
    }
}

/// docs/semantics.md §11.1: `isError` throws the text; then `structuredContent`; then all-text content (JSON
/// when it parses); otherwise the whole result.
pub fn unwrap_result(result: CallToolResult) -> Result<Option<Value>, String> {
    let texts: Option<Vec<&str>> = result
        .content
        .iter()
        .map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    if result.is_error == Some(true) {
        let text = texts.map(|t| t.join("\n")).unwrap_or_default();
        return Err(if text.is_empty() {
            "Tool call failed".to_owned()
        } else {
            text
        });
    }
    if let Some(structured) = result.structured_content.as_ref().filter(|s| !s.is_null()) {
        return Ok(Some(structured.clone()));
    }
    if let Some(texts) = texts.filter(|t| !t.is_empty()) {
        let text = texts.join("\n");
        return Ok(Some(
            serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text)),
        ));
    }
    let mut whole = serde_json::to_value(&result).map_err(|e| e.to_string())?;
    if let Value::Object(map) = &mut whole {
        map.remove("resultType");
    }
    Ok(Some(whole))
}

async fn stop(session: Arc<Session>) {
    match Arc::try_unwrap(session) {
        Ok(session) => {
            let _ = session.service.cancel().await;
        }
        // Still in use by a call in flight: cancelling the token closes the transport all the same.
        Err(shared) => shared.service.cancellation_token().cancel(),
    }
}

/// Keeps the last lines of a server's stderr, each redacted and then cut.
async fn keep_tail(
    stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
    secrets: Arc<[String]>,
) {
    use tokio::io::AsyncBufReadExt;
    let mut reader = tokio::io::BufReader::new(stderr);
    let mut bytes = Vec::new();
    // Bytes, not `lines()`: one line that is not UTF-8 would end the reading, and a server writing to the
    // closed pipe after that would fail.
    while reader
        .read_until(b'\n', &mut bytes)
        .await
        .is_ok_and(|n| n > 0)
    {
        let text = String::from_utf8_lossy(&bytes);
        let line = redact(&secrets, text.trim_end_matches(['\n', '\r']).to_owned());
        bytes.clear();
        let line: String = line.chars().take(STDERR_LINE_CHARS).collect();
        let mut tail = lock(&tail);
        if tail.len() == STDERR_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

/// Every way a server may print each secret: as it is, inside a JSON string (`"` and `\` escaped), the same
/// with non-ASCII as `\uXXXX` (Python's `json.dumps`) in either case of hex, and JSON-escaped twice (a JSON
/// document logged as a string). Longest first, so a form that contains another is removed whole.
fn printed_forms(secrets: impl Iterator<Item = String>) -> Arc<[String]> {
    let json = |text: &str| {
        let quoted = Value::from(text).to_string();
        quoted
            .strip_prefix('"')
            .and_then(|q| q.strip_suffix('"'))
            .map_or_else(|| quoted.clone(), str::to_owned)
    };
    let ascii = |text: &str, upper: bool| {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            if c.is_ascii() {
                out.push(c);
                continue;
            }
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&if upper {
                    format!("\\u{unit:04X}")
                } else {
                    format!("\\u{unit:04x}")
                });
            }
        }
        out
    };
    let mut all: Vec<String> = Vec::new();
    for secret in secrets {
        let mut forms = vec![secret];
        // Once for a JSON string, once more for a JSON document logged as a string.
        for _ in 0..2 {
            let escaped: Vec<String> = forms
                .iter()
                .flat_map(|form| {
                    let escaped = json(form);
                    [ascii(&escaped, false), ascii(&escaped, true), escaped]
                })
                .collect();
            forms.extend(escaped);
        }
        all.extend(forms);
    }
    all.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    all.dedup();
    all.into()
}

/// `text` without any printed form of a secret.
fn redact(secrets: &[String], text: String) -> String {
    secrets.iter().fold(text, |text, secret| {
        text.replace(secret.as_str(), "[redacted]")
    })
}

fn with_tail(message: String, tail: &Mutex<VecDeque<String>>) -> String {
    let tail = lock(tail);
    let lines: Vec<&str> = tail
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        message
    } else {
        format!("{message}; its stderr ended with: {}", lines.join(" | "))
    }
}

/// The transport's settings: the server's address and the configured headers.
fn http_config(
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig, String> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let mut custom = std::collections::HashMap::new();
    for (name, value) in headers {
        let header = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("\"{name}\" is not a valid HTTP header name"))?;
        let value = http::HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header \"{name}\" is not valid in HTTP"))?;
        custom.insert(header, value);
    }
    Ok(StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom))
}

impl Connector for McpConnector {
    fn name(&self) -> &str {
        &self.name
    }

    fn instructions(&self) -> Option<String> {
        self.session
            .try_lock()
            .ok()
            .and_then(|s| s.as_ref().and_then(|s| s.instructions.clone()))
    }

    fn lazy(&self) -> bool {
        true
    }

    fn tools_generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        Box::pin(async move {
            let session = self.session().await?;
            if let Some(collision) = &session.collision {
                return Err(collision.clone());
            }
            Ok(session
                .methods
                .iter()
                .map(|m| m.descriptor.clone())
                .collect())
        })
    }

    fn execute<'a>(
        &'a self,
        method: &'a str,
        args: Option<Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(self.call(method, args, self.call_timeout))
    }

    /// From a `preview` template in `connectors.json`: the read-only call it names, made now and never
    /// recorded; its answer is the present state of what the method would change.
    fn preview<'a>(
        &'a self,
        method: &'a str,
        args: Option<Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<codemode::Preview>, String>> {
        Box::pin(async move {
            let original = self.original_name(method).await?;
            let Some(template) = self.policy.preview_for(&original, method) else {
                return Ok(None);
            };
            // Made without a person every time a card is shown: only a method that reads may be called
            // (docs/design.md, "Previews only read").
            let session = self.session().await?;
            let reads = Policy::lists(&self.policy.read_only, &template.method, &template.method)
                || session.methods.iter().any(|m| {
                    m.read_only
                        && (m.original == template.method
                            || m.descriptor.name == sanitize_tool_name(&template.method))
                });
            let gated = self.policy.approval.as_ref().is_some_and(|approval| {
                approval.requires(&template.method, &sanitize_tool_name(&template.method), &[])
            });
            if !reads || gated {
                return Err(format!(
                    "the preview template for {method} names {}, which {} not declared read-only (the server's readOnlyHint, or readOnly in connectors.json): it was not called",
                    template.method,
                    if gated { "needs approval and is" } else { "is" }
                ));
            }
            let args = args.unwrap_or(Value::Object(Map::new()));
            let preview_args = render_template(&template.args, &args, &Value::Null)
                .map_err(|e| e.replace("revert template", "preview template"))?;
            let value = self
                .call(&template.method, Some(preview_args), self.call_timeout)
                .await?
                .unwrap_or(Value::Null);
            Ok(Some(codemode::Preview::Current { value, cut: false }))
        })
    }

    fn revert<'a>(
        &'a self,
        method: &'a str,
        args: Option<Value>,
        result: Option<Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let original = self.original_name(method).await?;
            let Some(template) = self.policy.revert_for(&original, method) else {
                return Ok(false);
            };
            let args = args.unwrap_or(Value::Object(Map::new()));
            let result = result.unwrap_or(Value::Null);
            let revert_args = render_template(&template.args, &args, &result)?;
            self.call(&template.method, Some(revert_args), self.revert_timeout)
                .await?;
            Ok(true)
        })
    }
}
