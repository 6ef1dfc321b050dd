//! The connectors as every front end lists them: one shape for the CLI's table and `--json` and the app's
//! Connectors view — where each runs (secrets masked), whether it is up, and its methods with their flags.

use codemode::{Connector, Replay};
use connectors::Home;
use connectors::config::ConnectorKind;
use connectors::mcp::ServerState;
use serde::Serialize;

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
    pub methods: Vec<MethodInfo>,
}

/// Whether a connector can be called right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum ConnectorStatus {
    Ready,
    /// An MCP server that has not started yet.
    Stopped,
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
        }
    }
}

/// Every connector with its methods; MCP servers that have not started yet are started to list theirs.
pub(crate) async fn list(home: &Home) -> Vec<ConnectorInfo> {
    let entries = home
        .config
        .as_ref()
        .map(|c| c.connectors.as_slice())
        .unwrap_or_default();
    home.runtime
        .connectors()
        .await
        .into_iter()
        .map(|c| {
            let entry = entries.iter().find(|e| e.name == c.name);
            let server = home.connectors.servers.iter().find(|s| s.name() == c.name);
            let (status, server_error) = match (server.map(|s| s.state()), &c.error) {
                (_, Some(_)) => (ConnectorStatus::Error, None),
                (Some(ServerState::Failed { error }), None) => {
                    (ConnectorStatus::Error, Some(error))
                }
                (Some(ServerState::NotStarted), None) => (ConnectorStatus::Stopped, None),
                _ => (ConnectorStatus::Ready, None),
            };
            ConnectorInfo {
                kind: home.kind_of(&c.name).to_owned(),
                endpoint: entry.map(|e| endpoint(&e.kind)),
                status,
                error: c.error.or(server_error),
                hint: entry.and_then(|e| e.hint.clone()),
                signed_in: server
                    .and_then(|s| s.credentials())
                    .map(connectors::remote::signed_in),
                methods: c.methods.into_iter().map(MethodInfo::from).collect(),
                name: c.name,
            }
        })
        .collect()
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
        };
        assert_eq!(
            endpoint(&http),
            "http://127.0.0.1:8931/mcp  Authorization: •••"
        );
    }
}
