//! The runtime's public data: statuses, log entries, executions, pending actions and the model-facing
//! outcome, serialised exactly as the reference emits them (camelCase, storage-codec values).

mod audit;
mod decision;
mod outcome;
mod pending;
mod preview;
mod rollback;
mod run_log;
mod snippet;
mod status;

pub use audit::{ExecutionPage, ExecutionQuery, ExecutionSummary};
pub use decision::{
    Actor, Answerer, Decision, DecisionKind, MAX_REASON, Vote, quorum_line, rejected_message,
};
pub use outcome::Outcome;
pub use pending::{CallRef, PendingAction, WaitingCall, args_digest};
pub use preview::{PREVIEW_TEXT_LIMIT, Preview, SHOWN_PREVIEW_LIMIT, Shown};
pub use rollback::{FailedRevert, RevertedCall, RollbackReport, SkippedCall};
pub use run_log::{ExecutionState, RunHost, ToolLogEntry};
pub use snippet::{SaveSnippet, Snippet};
pub use status::{EntryState, ExecutionStatus};

fn is_false(value: &bool) -> bool {
    !*value
}
