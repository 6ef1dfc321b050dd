//! Starting a server (a local process or a remote one over HTTP), listing its tools, and stopping it.

use super::stderr::{keep_tail, with_tail};
use super::{McpConnector, Method, Policy, ServerState, Session, lock};
use crate::config::ConnectorKind;
use crate::remote;
use codemode::names::sanitize_tool_name;
use codemode::{Replay, ToolDescriptor};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Starting a server may take longer than one call (`npx` fetching a package, a slow interpreter): it gets at
/// least this long, or the call timeout if that is longer.
const MIN_START_TIMEOUT: Duration = Duration::from_secs(30);

impl McpConnector {
    /// The running server, started (or restarted) when there is none.
    pub(super) async fn session(&self) -> Result<Arc<Session>, String> {
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
    pub(super) async fn discard(&self, session: &Arc<Session>, why: String) {
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
}
pub(super) async fn stop(session: Arc<Session>) {
    match Arc::try_unwrap(session) {
        Ok(session) => {
            let _ = session.service.cancel().await;
        }
        // Still in use by a call in flight: cancelling the token closes the transport all the same.
        Err(shared) => shared.service.cancellation_token().cancel(),
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
