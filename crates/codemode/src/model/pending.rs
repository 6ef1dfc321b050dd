//! Calls waiting for a person: what the queue shows of them, and how a decision names the call it was given for.

use super::{ToolLogEntry, Vote, is_false, quorum_line};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A call waiting for a human decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PendingAction {
    pub execution_id: String,
    pub seq: u64,
    pub connector: String,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// What the connector will read, where it differs from `args` (see [`ToolLogEntry::canonical`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<Value>,
    /// [`args_digest`] of `args`: a decision sends it back, so it lands only on the call that was shown.
    pub digest: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
    /// The `ask` rule that asked for this call ([`ToolLogEntry::asked_by`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_by: Option<String>,
    /// The rule that asked wants the call decided in the window, not from a notification: recorded when it
    /// asked, so no surface judges the call again to find out.
    #[serde(default, skip_serializing_if = "is_false")]
    pub confirm_in_app: bool,
    /// The call is asked in the agent's MCP client as well, when that client can ask (docs/design.md,
    /// "Asking in the client"); never with `confirm_in_app`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ask_in_client: bool,
    /// How long the call may wait for a person, in ms (`decideWithin` of the rule or connector that asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub decide_within: Option<i64>,
    /// When the call is rejected as expired if nobody decided (epoch ms): `decide_within` after it paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub decide_by: Option<i64>,
    /// How many different people must approve the call, when more than one ([`ToolLogEntry::quorum`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<u32>,
    /// The approvals given so far to a call that needs several (never the last one: it runs the call).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<Vote>,
}

impl PendingAction {
    /// `1 of 2 — approved by alice via console` for a call that needs several people; `None` otherwise.
    pub fn quorum_line(&self) -> Option<String> {
        self.quorum.map(|need| quorum_line(need, &self.approvals))
    }
}

/// A waiting call with what the queue shows of its run, read without the run's code or log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WaitingCall {
    pub action: PendingAction,
    /// The run's source (who started it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When the run started (epoch ms).
    pub created_at: i64,
    /// When the run last changed (epoch ms): the queue re-reads a run's whole card only when this moves.
    pub updated_at: i64,
}

impl PendingAction {
    /// The waiting call `entry` of run `execution_id`.
    pub fn of(execution_id: &str, entry: &ToolLogEntry) -> Self {
        PendingAction {
            execution_id: execution_id.to_owned(),
            seq: entry.seq,
            connector: entry.connector.clone(),
            method: entry.method.clone(),
            args: entry.args.clone(),
            canonical: entry.canonical.clone(),
            digest: args_digest(entry.args.as_ref()),
            interrupted: entry.interrupted,
            asked_by: entry.asked_by.clone(),
            confirm_in_app: entry.confirm_in_app,
            ask_in_client: entry.ask_in_client,
            decide_within: entry.decide_within,
            decide_by: entry.decide_by,
            quorum: entry.quorum,
            approvals: entry.approvals.clone(),
        }
    }
}

/// The call a person was shown, as a decision names it: its seq in the run and the [`args_digest`] of the
/// arguments shown. A decision that names a call no longer waiting is `stale`, and nothing runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CallRef {
    pub seq: u64,
    /// The digest of the arguments shown; `None` binds the seq only (`codemode approve ID:SEQ`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// The digest that binds a decision to the arguments a person was shown (docs/design.md, "A decision names
/// its call"): SHA-256 of the arguments' JSON with object keys sorted, so it does not depend on how a store
/// or a front end ordered them; `-` hashed for no arguments.
pub fn args_digest(args: Option<&Value>) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let text = match args {
        Some(value) => sorted(value).to_string(),
        None => "-".to_owned(),
    };
    crate::codec::sha256_hex(text.as_bytes())
}
