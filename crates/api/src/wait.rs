//! `codemode_wait`: waiting for a person's decision on a run, from any process that shares the database, and
//! turning the stored run into the outcome an agent gets (README "The command line", docs/api.md).

use codemode::{ExecutionState, ExecutionStatus, Outcome, Runtime};
use serde::Serialize;

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
