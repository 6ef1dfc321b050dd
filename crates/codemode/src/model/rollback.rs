//! What a rollback reports, call by call.

use super::ExecutionStatus;
use serde::{Deserialize, Serialize};

/// What a rollback did, call by call (docs/design.md, difference 3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RollbackReport {
    pub execution_id: String,
    /// The execution's status after the rollback.
    pub status: Option<ExecutionStatus>,
    pub reverted: Vec<RevertedCall>,
    pub skipped: Vec<SkippedCall>,
    pub failed: Vec<FailedRevert>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RevertedCall {
    pub seq: u64,
    pub connector: String,
    pub method: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SkippedCall {
    pub seq: u64,
    pub connector: String,
    pub method: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FailedRevert {
    pub seq: u64,
    pub connector: String,
    pub method: String,
    pub error: String,
}
