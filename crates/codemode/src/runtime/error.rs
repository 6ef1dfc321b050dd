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
    /// Refused with nothing changed: no such run or rule, a run not as the request assumed, or held by
    /// another process or host.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// Edited arguments (or another input) that cannot be used: nothing was changed.
    #[error("{0}")]
    InvalidArgs(String),
    /// A connector's server could not be started or reached, or would not list its tools.
    #[error("{0}")]
    Unavailable(String),
    #[error("a pass was interrupted: {0}")]
    Interrupted(String),
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
pub(super) fn not_the_call_shown(why: String) -> RuntimeError {
    Refusal::NotTheCallShown { why }.into()
}

pub(super) fn already_decided(id: &str) -> RuntimeError {
    Refusal::ApprovedElsewhere { run: id.to_owned() }.into()
}

/// Shorthand for the refusal that names no run at all.
pub(super) fn no_run(id: &str, op: Operation) -> RuntimeError {
    Refusal::NoRun {
        run: id.to_owned(),
        op,
    }
    .into()
}

impl RuntimeError {
    /// What kind of refusal this is, when the operation was refused with nothing changed.
    pub fn refusal(&self) -> Option<crate::refusal::RefusalKind> {
        match self {
            RuntimeError::Refused(refusal) => Some(refusal.kind()),
            _ => None,
        }
    }
}
