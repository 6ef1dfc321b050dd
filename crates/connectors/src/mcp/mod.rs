//! MCP servers as connectors: every tool of a server becomes a method, with approval, replay and revert decided
//! per tool in `connectors.json` (README "Configuration", docs/semantics.md §11.1). Servers start on first
//! use, are restarted after they die or hang, and their tool lists are cached per start.

mod calling;
mod gates;
mod launch;
mod stderr;

pub use calling::unwrap_result;

use crate::config::{Approval, ConnectorConfig, ConnectorKind, RevertTemplate};
use crate::remote;
use codemode::ToolDescriptor;
use codemode::names::sanitize_tool_name;
use launch::stop;
use rmcp::RoleClient;
use rmcp::model::ClientConfig;
use rmcp::service::RunningService;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use stderr::{printed_forms, redact};

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
}
