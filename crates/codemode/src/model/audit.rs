//! The audit log's list of runs: what a front end asks for, and the page of rows it gets back.

use super::{ExecutionStatus, RunHost, is_false};
use serde::{Deserialize, Serialize};

/// What the app asks of the audit log: a status, a text to find (in ids, code, errors and called
/// `connector.method`s), a cursor (the last id of the previous page) and a page size.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(optional_fields = nullable))]
pub struct ExecutionQuery {
    #[serde(default)]
    pub status: Option<ExecutionStatus>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub before: Option<String>,
    #[serde(default)]
    pub limit: Option<usize>,
    /// Only runs begun at or after this moment (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub since: Option<i64>,
    /// Only runs begun before this moment (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub until: Option<i64>,
    /// Only runs that made a call whose `connector.method` matches this glob (`*` any run of characters,
    /// `?` one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// Only runs with a call decided by this person (as the store authenticated them) or this way
    /// (`console`, `cli`, `device`, `rule`, `expiry`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// Only runs whose source matches this glob.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// One row of the audit log, without the call log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExecutionSummary {
    pub id: String,
    pub status: ExecutionStatus,
    pub created_at: i64,
    pub updated_at: i64,
    /// Recorded calls and steps.
    pub calls: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
    /// `connector.method` of the call waiting for approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
    /// The start of the error text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The start of the result's JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_preview: Option<String>,
    /// On a shared store, the host the run belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<RunHost>,
}

/// A page of summaries, newest first; `next` is the cursor for the following page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExecutionPage {
    pub executions: Vec<ExecutionSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}
