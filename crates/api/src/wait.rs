//! `codemode_wait`: waiting for a person's decision on a run, from any process that shares the database, and
//! turning the stored run into the outcome an agent gets (README "The command line", docs/api.md).

use crate::{Api, ApiError};
use codemode::{ExecutionState, ExecutionStatus, Outcome, Runtime};
use serde::Serialize;
use std::time::Duration;

/// What a wait returns: the run's outcome once decided, its paused outcome if still undecided, or
/// `{status: "running", executionId}` while a pass is still under way.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(untagged)]
pub enum WaitOutcome {
    Outcome(Outcome),
    Running(Running),
}

/// A run whose pass has not ended yet.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Running {
    /// Always `"running"`.
    #[ts(type = "\"running\"")]
    pub status: &'static str,
    pub execution_id: String,
}

impl WaitOutcome {
    /// Whether a person has decided (or the run ended): nothing more will change by waiting.
    pub(crate) fn settled(execution: &ExecutionState) -> bool {
        !matches!(
            execution.status,
            ExecutionStatus::Paused | ExecutionStatus::Running
        )
    }

    /// README "The command line": completed → the completed Outcome; error, rejected, rolled back → an error outcome with the
    /// stored text; still undecided → the paused Outcome, or `{status: "running"}`.
    pub(crate) fn of(runtime: &Runtime, execution: ExecutionState) -> WaitOutcome {
        let id = execution.id.clone();
        let outcome = match execution.status {
            ExecutionStatus::Running => {
                return WaitOutcome::Running(Running {
                    status: "running",
                    execution_id: id,
                });
            }
            _ => match runtime.outcome_of(execution) {
                Ok(outcome) => outcome,
                Err(error) => Outcome::early_error(id, error.to_string()),
            },
        };
        WaitOutcome::Outcome(outcome)
    }
}

impl Api {
    /// Waits up to `timeout` for a person to decide on a run (from any process) and returns what
    /// `codemode_wait` answers: the outcome once decided, else the paused outcome or `{status: "running"}`.
    pub async fn wait(&self, id: &str, timeout: Duration) -> Result<WaitOutcome, ApiError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let token = self.home.runtime.change_token()?;
            // The run's row only: its log is read once, for the outcome, when the run has settled.
            let execution = self
                .home
                .runtime
                .execution_head(id)?
                .ok_or_else(|| ApiError::no_execution(id))?;
            if WaitOutcome::settled(&execution) || tokio::time::Instant::now() >= deadline {
                return Ok(WaitOutcome::of(&self.home.runtime, execution));
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            // A shared store wakes this on its next notification; an SQLite file is looked at again shortly.
            self.home.runtime.changed(token, left).await;
        }
    }
}
