//! The connectors as every front end lists them: one shape for the CLI's table and `--json` and the app's
//! Connectors view — where each runs (secrets masked), whether it is up, and its methods with their flags.

use codemode::names::sanitize_tool_name;
use codemode::{Connector, Replay};
use connectors::Home;
use connectors::config::{ConnectorKind, RevertTemplate};
use connectors::mcp::ServerState;
use serde::Serialize;
use std::collections::BTreeMap;

/// One configured connector.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorInfo {
    pub name: String,
    /// `files` or `mcp`, as `connectors.json` declares it.
    pub kind: String,
    /// Where it runs: a workspace folder, a command line or a URL, with `env` and header values masked.
    pub endpoint: Option<String>,
    pub status: ConnectorStatus,
    /// Why its methods could not be listed, or why its server failed.
    pub error: Option<String>,
    /// The configured hint shown to the model.
    pub hint: Option<String>,
    /// For a remote server (a `url`): whether an OAuth sign-in is kept for it. `None` for the others.
    pub signed_in: Option<bool>,
    /// Revert templates (`{"method", "args"}`) by method, as the app edits them.
    pub reverts: BTreeMap<String, serde_json::Value>,
    /// Preview templates by method.
    pub previews: BTreeMap<String, serde_json::Value>,
    pub methods: Vec<MethodInfo>,
}

/// Whether a connector can be called right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum ConnectorStatus {
    Ready,
    /// An MCP server that has not started yet.
    Stopped,
    /// An MCP server starting now.
    Starting,
    Error,
}

/// One method of a connector, with the flags that decide how a call to it is gated, replayed and undone.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct MethodInfo {
    pub name: String,
    pub description: Option<String>,
    pub requires_approval: bool,
    pub replay: Replay,
    pub revertible: bool,
    pub hidden: bool,
    /// The names of its arguments (the input schema's properties), for an editor's completion.
    pub arguments: Vec<String>,
    /// What its server declares: `readOnlyHint` and `destructiveHint` (MCP tool annotations), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Why it is gated or not, from the connector's `approval` and the annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// The gate before the server's annotations moved it (shown for a week after it moved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_changed: Option<codemode::GateChange>,
}

impl From<codemode::ToolDescriptor> for MethodInfo {
    fn from(m: codemode::ToolDescriptor) -> Self {
        MethodInfo {
            arguments: m
                .input_schema
                .as_ref()
                .and_then(|schema| schema.get("properties"))
                .and_then(|properties| properties.as_object())
                .map(|properties| properties.keys().cloned().collect())
                .unwrap_or_default(),
            name: m.name,
            description: m.description,
            requires_approval: m.requires_approval,
            replay: m.replay,
            revertible: m.revertible,
            hidden: m.hidden,
            read_only_hint: m.read_only_hint,
            destructive_hint: m.destructive_hint,
            gate: m.gate,
            gate_changed: m.gate_changed,
        }
    }
}

/// Every connector with its methods; MCP servers that have not started yet are started to list theirs.
pub(crate) async fn list(home: &Home) -> Vec<ConnectorInfo> {
    home.runtime
        .connectors()
        .await
        .into_iter()
        .map(|c| {
            let methods = c.methods.into_iter().map(MethodInfo::from).collect();
            info(home, c.name, c.error, methods)
        })
        .collect()
}

/// The configured connectors as they stand, without starting any server: what a view shows while the full
/// listing starts them.
pub(crate) fn configured(home: &Home) -> Vec<ConnectorInfo> {
    home.config
        .iter()
        .flat_map(|c| c.connectors.iter())
        .map(|entry| info(home, entry.name.clone(), None, Vec::new()))
        .collect()
}

fn info(
    home: &Home,
    name: String,
    error: Option<String>,
    methods: Vec<MethodInfo>,
) -> ConnectorInfo {
    let entry = home.entry(&name);
    let server = home.connectors.servers.iter().find(|s| s.name() == name);
    let (status, server_error) = match (server.map(|s| s.state()), &error) {
        (_, Some(_)) => (ConnectorStatus::Error, None),
        (Some(ServerState::Failed { error }), None) => (ConnectorStatus::Error, Some(error)),
        (Some(ServerState::NotStarted), None) => (ConnectorStatus::Stopped, None),
        (Some(ServerState::Starting), None) => (ConnectorStatus::Starting, None),
        _ => (ConnectorStatus::Ready, None),
    };
    let templates =
        |of: fn(&connectors::config::ConnectorConfig) -> &BTreeMap<String, RevertTemplate>| {
            entry
                .map(|e| {
                    of(e)
                        .iter()
                        .map(|(method, t)| {
                            (
                                sanitize_tool_name(method),
                                serde_json::json!({"method": t.method, "args": t.args}),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
    ConnectorInfo {
        kind: home.kind_of(&name).to_owned(),
        endpoint: entry.map(|e| endpoint(&e.kind)),
        status,
        error: error.or(server_error),
        hint: entry.and_then(|e| e.hint.clone()),
        signed_in: server
            .and_then(|s| s.credentials())
            .map(connectors::remote::signed_in),
        reverts: templates(|e| &e.revert),
        previews: templates(|e| &e.preview),
        methods,
        name,
    }
}
/// Where a connector runs, with the values of `env` and `headers` masked: only their names are shown.
pub fn endpoint(kind: &ConnectorKind) -> String {
    match kind {
        ConnectorKind::Files { root } => root.display().to_string(),
        ConnectorKind::Stdio {
            command, args, env, ..
        } => {
            let mut text: Vec<String> = env.keys().map(|k| format!("{k}=•••")).collect();
            text.push(command.clone());
            text.extend(args.iter().cloned());
            text.join(" ")
        }
        ConnectorKind::Http { url, headers, .. } => {
            let mut text = url.clone();
            for name in headers.keys() {
                text.push_str(&format!("  {name}: •••"));
            }
            text
        }
    }
}

#[cfg(test)]
mod tests {
    use super::endpoint;
    use connectors::config::ConnectorKind;

    #[test]
    fn endpoints_show_env_and_header_names_never_their_values() {
        let stdio = ConnectorKind::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "@modelcontextprotocol/server-github".into()],
            env: [("GITHUB_TOKEN".to_owned(), "ghp_secret123".to_owned())].into(),
            cwd: None,
        };
        assert_eq!(
            endpoint(&stdio),
            "GITHUB_TOKEN=••• npx -y @modelcontextprotocol/server-github"
        );
        let http = ConnectorKind::Http {
            url: "http://127.0.0.1:8931/mcp".into(),
            headers: [("Authorization".to_owned(), "Bearer secret456".to_owned())].into(),
            ca_file: None,
            oauth: None,
        };
        assert_eq!(
            endpoint(&http),
            "http://127.0.0.1:8931/mcp  Authorization: •••"
        );
    }
}
