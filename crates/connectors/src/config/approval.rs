//! Which methods need a person's approval, and how their paused calls are asked.

use codemode::names::sanitize_tool_name;
use serde_json::Value;
use std::time::Duration;

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
pub(super) fn method_list(value: &Value) -> Option<Approval> {
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
