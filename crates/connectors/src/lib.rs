//! Connectors for the Codemode runtime: the built-in reversible `files` workspace (MCP servers and the
//! `connectors.json` configuration follow).

pub mod files;

pub use files::FilesConnector;
