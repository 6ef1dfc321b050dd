//! The runtime's own failures (not a program's, which are outcomes), and the refusals written once.

use super::*;

/// Failures of the runtime itself (not of a program, which are outcomes).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Configuration(String),
    #[error(transparent)]
    Executor(#[from] ExecutorError),
    /// No such execution (or snippet).
    #[error("{0}")]
    NotFound(String),
    /// A decision or operation that no longer applies: the run is not paused, the call is not pending, the
    /// run is not interrupted. Nothing was changed; the message is the reference's text.
    #[error("{0}")]
    Stale(String),
    /// Edited arguments (or another input) that cannot be used: nothing was changed.
    #[error("{0}")]
    InvalidArgs(String),
    #[error("a pass was interrupted: {0}")]
    Interrupted(String),
    /// Another live process holds the run (a pass or a rollback): nothing was changed.
    #[error("{0}")]
    Busy(String),
    /// Approved on a shared store for another host, which has not resumed the run yet: the decision stands
    /// (docs/shared-store.md, "Approving another host's run").
    #[error("{0}")]
    Handed(String),
}

/// A rule id already used (by the database or `connectors.json`), said as rule validation says it.
pub(super) fn id_taken(id: &str) -> RuntimeError {
    RuntimeError::InvalidArgs(
        RuleError {
            rule: id.to_owned(),
            field: "id".to_owned(),
            problem: "a rule with this id exists".to_owned(),
        }
        .to_string(),
    )
}

pub(super) fn file_rule(id: &str) -> RuntimeError {
    RuntimeError::InvalidArgs(format!(
        "Rule \"{id}\" comes from connectors.json: edit the file to change it."
    ))
}

/// A decision on a call that no longer waits as it was shown (docs/design.md, "A decision names its call").
pub(super) fn not_the_call_shown(why: &str) -> RuntimeError {
    RuntimeError::Stale(format!(
        "Not decided: {why}. Look at the call again before deciding."
    ))
}

pub(super) fn already_decided(id: &str) -> RuntimeError {
    RuntimeError::Stale(format!(
        "Execution \"{id}\" was already approved on another host; it waits for its own host to resume it."
    ))
}
