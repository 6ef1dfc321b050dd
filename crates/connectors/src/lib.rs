//! Connectors for the Codemode runtime: the built-in reversible `files` workspace and the `connectors.json`
//! configuration (MCP servers follow).

pub mod config;
pub mod files;

pub use files::FilesConnector;

use codemode::Connector;
use config::{Approval, Config, ConnectorKind};
use std::path::Path;
use std::sync::Arc;

/// The `files` connectors a configuration declares, ready to register. What their reverts need is kept under
/// `<data dir>/state/<connector>`.
pub fn files_connectors(
    config: &Config,
    data_dir: &Path,
) -> Result<Vec<Arc<dyn Connector>>, String> {
    let mut built: Vec<Arc<dyn Connector>> = Vec::new();
    for entry in &config.connectors {
        let ConnectorKind::Files { root } = &entry.kind else {
            continue;
        };
        let approval = match &entry.approval {
            Approval::Default => None,
            Approval::All => Some(vec!["*".to_owned()]),
            Approval::Methods(methods) => Some(methods.clone()),
        };
        let state = data_dir.join("state").join(&entry.name);
        let connector = FilesConnector::new(&entry.name, root, &state, approval).map_err(|e| {
            format!(
                "connector \"{}\": the workspace {} cannot be used: {e}",
                entry.key,
                root.display()
            )
        })?;
        built.push(Arc::new(connector));
    }
    Ok(built)
}
