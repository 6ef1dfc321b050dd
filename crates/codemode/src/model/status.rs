//! Where a run is in its life and where each of its calls stands: the statuses, as stored and shown.

use serde::{Deserialize, Serialize};

/// Where an execution is in its life (docs/semantics.md §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ExecutionStatus {
    Running,
    Paused,
    Completed,
    Error,
    Rejected,
    RolledBack,
}

impl ExecutionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionStatus::Running => "running",
            ExecutionStatus::Paused => "paused",
            ExecutionStatus::Completed => "completed",
            ExecutionStatus::Error => "error",
            ExecutionStatus::Rejected => "rejected",
            ExecutionStatus::RolledBack => "rolled_back",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "running" => ExecutionStatus::Running,
            "paused" => ExecutionStatus::Paused,
            "completed" => ExecutionStatus::Completed,
            "error" => ExecutionStatus::Error,
            "rejected" => ExecutionStatus::Rejected,
            "rolled_back" => ExecutionStatus::RolledBack,
            _ => return None,
        })
    }

    /// Terminal statuses are the ones `disposeExecution` receives and retention may prune.
    pub fn is_terminal(self) -> bool {
        !matches!(self, ExecutionStatus::Running | ExecutionStatus::Paused)
    }
}

impl std::fmt::Display for ExecutionStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The state of one recorded call (docs/semantics.md §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum EntryState {
    Executing,
    Applied,
    Pending,
    Reverted,
    Error,
}

impl EntryState {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryState::Executing => "executing",
            EntryState::Applied => "applied",
            EntryState::Pending => "pending",
            EntryState::Reverted => "reverted",
            EntryState::Error => "error",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "executing" => EntryState::Executing,
            "applied" => EntryState::Applied,
            "pending" => EntryState::Pending,
            "reverted" => EntryState::Reverted,
            "error" => EntryState::Error,
            _ => return None,
        })
    }
}
