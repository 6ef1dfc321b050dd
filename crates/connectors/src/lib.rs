//! Connectors for the Codemode runtime: existing MCP servers, the built-in reversible `files` workspace, and the
//! `connectors.json` configuration that declares them.

pub mod config;
pub mod editing;
pub mod files;
pub mod home;
pub mod mcp;
pub mod owner_only;
pub mod remote;

pub use files::FilesConnector;
pub use home::{Home, HomeOptions};
pub use mcp::McpConnector;

use codemode::Connector;
use config::{Approval, Config, ConnectorKind};
use std::path::Path;
use std::sync::Arc;

/// The connectors a configuration declares, in the file's order, ready to register; MCP servers are kept
/// apart too, for their status and for stopping them with the host.
#[derive(Clone, Default)]
pub struct Connectors {
    pub all: Vec<Arc<dyn Connector>>,
    pub servers: Vec<Arc<McpConnector>>,
}

impl Connectors {
    /// Builds every connector. What `files` reverts need is kept under `<data dir>/state/<connector>`; MCP
    /// servers do not start until first used.
    pub fn build(config: &Config, data_dir: &Path) -> Result<Self, String> {
        let mut built = Connectors::default();
        for entry in &config.connectors {
            if let ConnectorKind::Files { root } = &entry.kind {
                let approval = match &entry.approval {
                    Approval::Default => None,
                    Approval::All => Some(vec!["*".to_owned()]),
                    Approval::Methods(methods) => Some(methods.clone()),
                    // Refused for files when the configuration is read.
                    Approval::Writes | Approval::Destructive => None,
                };
                let state = data_dir.join("state").join(&entry.name);
                let connector = FilesConnector::new(&entry.name, root, &state, approval)
                    .map_err(|e| {
                        format!(
                            "connector \"{}\": the workspace {} cannot be used: {e}",
                            entry.key,
                            root.display()
                        )
                    })?
                    .with_asking(entry.asking.clone());
                built.all.push(Arc::new(connector));
            } else if let Some(server) = McpConnector::from_config(entry, data_dir) {
                let server = Arc::new(server);
                built.all.push(server.clone());
                built.servers.push(server);
            }
        }
        Ok(built)
    }

    /// Stops every MCP server that runs; call it before the host exits.
    pub async fn shutdown(&self) {
        for server in &self.servers {
            server.shutdown().await;
        }
    }
}
