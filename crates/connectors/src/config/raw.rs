//! The file's shapes as serde reads them, before defaults, checks and resolution.

use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The file as written, before defaults and resolution.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    #[serde(default)]
    pub(super) runtime: Option<RawRuntime>,
    #[serde(default)]
    pub(super) connectors: Option<Map<String, Value>>,
    #[serde(default, rename = "mcpServers")]
    pub(super) mcp_servers: Option<Map<String, Value>>,
    #[serde(default)]
    pub(super) rules: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawRuntime {
    pub(super) name: Option<String>,
    pub(super) max_executions: Option<usize>,
    pub(super) timeout_ms: Option<u64>,
    pub(super) memory_limit_mb: Option<u64>,
    pub(super) paused_ttl: Option<Value>,
    pub(super) expiry_sweep_minutes: Option<u64>,
    pub(super) max_output_chars: Option<usize>,
    pub(super) store: Option<String>,
    pub(super) keep_decided_for: Option<Value>,
    pub(super) webhooks: Option<Vec<Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWebhook {
    pub(super) url: String,
    pub(super) format: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawConnector {
    #[serde(rename = "type")]
    pub(super) kind: Option<String>,
    pub(super) root: Option<String>,
    pub(super) command: Option<String>,
    #[serde(default)]
    pub(super) args: Vec<String>,
    /// Checked by hand so that a wrong value is never echoed.
    pub(super) env: Option<Value>,
    pub(super) cwd: Option<String>,
    pub(super) url: Option<String>,
    pub(super) headers: Option<Value>,
    pub(super) ca_file: Option<String>,
    /// Checked by hand so that a wrong value is never echoed.
    pub(super) oauth: Option<Value>,
    pub(super) approval: Option<Value>,
    pub(super) confirm_in_app: Option<Value>,
    pub(super) ask_in_client: Option<Value>,
    pub(super) decide_within: Option<String>,
    #[serde(default)]
    pub(super) reexecute: Vec<String>,
    #[serde(default)]
    pub(super) hidden: Vec<String>,
    pub(super) hint: Option<String>,
    pub(super) call_timeout_ms: Option<u64>,
    pub(super) revert_timeout_ms: Option<u64>,
    #[serde(default)]
    pub(super) revert: BTreeMap<String, RawRevert>,
    #[serde(default)]
    pub(super) preview: BTreeMap<String, RawRevert>,
    #[serde(default)]
    pub(super) read_only: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRevert {
    pub(super) method: String,
    #[serde(default = "empty_object")]
    pub(super) args: Value,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}
