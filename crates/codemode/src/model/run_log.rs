//! A run and the log of its calls, as the store records them and every front end reads them.

// Only the documentation links name it.
#[cfg(doc)]
use super::PendingAction;
use super::{Decision, EntryState, ExecutionStatus, Vote, is_false};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A call as recorded in the durable log (`ToolLogEntry`), plus our attribution and divergence detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolLogEntry {
    pub seq: u64,
    pub connector: String,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// The arguments as the connector reads them ([`crate::Connector::canonical`]: for `files`, paths with
    /// `..` and symlinks resolved, base64 content decoded), where that differs from what the program sent.
    /// Rules decided on this form, and displays show it (docs/design.md, "What a call means").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    pub requires_approval: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub ephemeral: bool,
    pub state: EntryState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<i64>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
    /// `{recorded: {connector, method, args}, attempted: {connector, method, args}}` on a divergence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divergence: Option<Value>,
    /// The error the connector answered with (state `error`): replay gives the program this error again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What a person (or a rule, or expiry) decided about this call; none when no one had to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The `ask` rule that had a person asked about this call; none when the connector's approval list did,
    /// or no one was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_by: Option<String>,
    /// The rule that asked wants the call decided in the window ([`PendingAction::confirm_in_app`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub confirm_in_app: bool,
    /// The call is asked in the agent's client too ([`PendingAction::ask_in_client`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ask_in_client: bool,
    /// How long the call could wait for a person, in ms ([`PendingAction::decide_within`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decide_within: Option<i64>,
    /// When nobody deciding by then rejects the call as expired (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decide_by: Option<i64>,
    /// How many different people must approve the call (the `quorum` of the rule that asked), when more than
    /// one (docs/design.md, "Four eyes").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<u32>,
    /// While the call waits: the approvals it has so far, when it needs several people. (Once decided, the
    /// decision lists them all.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<Vote>,
    /// When a person was asked about the call (it paused), epoch ms: with `decision.at`, how long they took
    /// (docs/history.md, "Timings").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub asked_at: Option<i64>,
    /// When the call began to run (after its approval, for a gated call), epoch ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub started_at: Option<i64>,
    /// When its outcome (result or error) was recorded, epoch ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub finished_at: Option<i64>,
    /// Served from the record of the run this one reruns ([`ExecutionState::forked_from`]): it did not run
    /// here, and rolling this run back leaves it alone (docs/history.md, "Rerun from a step").
    #[serde(default, skip_serializing_if = "is_false")]
    pub inherited: bool,
}

/// One execution with its log (`ExecutionState`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExecutionState {
    pub id: String,
    pub code: String,
    pub status: ExecutionStatus,
    pub log: Vec<ToolLogEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<Vec<String>>,
    pub connectors: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Left `running` by a process that died mid-pass: `recover` can take it over.
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
    pub created_at: i64,
    pub updated_at: i64,
    /// On a shared store, the host the run belongs to (docs/shared-store.md, "Hosts").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<RunHost>,
    /// Approved on another host: the decision waiting for this run's host to resume it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handed: Option<Decision>,
    /// The run and call this run reruns from (docs/history.md, "Rerun from a step").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<crate::lineage::ForkedFrom>,
    /// The runs rerun from this one, oldest first (read with one run, empty in lists).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reruns: Vec<String>,
}

/// The host a run belongs to, on a shared store: the machine (and data directory) that began it, whose
/// connectors run its calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RunHost {
    pub id: String,
    /// How people know it: `ann@laptop` (its user and machine) unless its configuration names it.
    pub name: String,
    /// Its heartbeat is recent: it resumes what is approved for it. A host that is gone leaves its runs
    /// "waiting for its host" until it is back, or until a host with the same connectors recovers them.
    pub alive: bool,
    /// This process is that host.
    #[serde(default, skip_serializing_if = "is_false")]
    pub here: bool,
}
