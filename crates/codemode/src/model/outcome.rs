//! What a pass (or an approval) returns to the model.

use super::{PendingAction, ToolLogEntry};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a pass (or an approval) returns to the model: docs/semantics.md §1.2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "status",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Outcome {
    Completed {
        execution_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        logs: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        calls: Option<Vec<ToolLogEntry>>,
    },
    Paused {
        execution_id: String,
        pending: Vec<PendingAction>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        calls: Option<Vec<ToolLogEntry>>,
    },
    Error {
        execution_id: String,
        error: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        logs: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        calls: Option<Vec<ToolLogEntry>>,
    },
}

impl Outcome {
    /// An error outcome produced before any pass ran (no `calls`).
    pub fn early_error(execution_id: impl Into<String>, error: impl Into<String>) -> Self {
        Outcome::Error {
            execution_id: execution_id.into(),
            error: error.into(),
            logs: None,
            calls: None,
        }
    }

    pub fn execution_id(&self) -> &str {
        match self {
            Outcome::Completed { execution_id, .. }
            | Outcome::Paused { execution_id, .. }
            | Outcome::Error { execution_id, .. } => execution_id,
        }
    }

    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Completed { .. } => "completed",
            Outcome::Paused { .. } => "paused",
            Outcome::Error { .. } => "error",
        }
    }
}
