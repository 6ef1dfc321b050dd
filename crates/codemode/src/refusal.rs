//! Why an operation on a run or a rule was refused with nothing changed: one typed value from the store's
//! answer through the runtime to the API's `{code, message}`, each message written here once (docs/api.md,
//! "Errors").

use crate::model::ExecutionStatus;

/// What was asked of a run, as a refusal says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Approve,
    Reject,
    Recover,
    RollBack,
    Delete,
    Adopt,
    SaveSnippet,
    Rerun,
    /// Reading, previewing or anything else that needs the run to exist and says no more.
    Read,
}

impl Operation {
    /// The past participle a sentence needs: "it can no longer be approved".
    fn done(self) -> &'static str {
        match self {
            Operation::Approve => "approved",
            Operation::Reject => "rejected",
            Operation::Recover => "recovered",
            Operation::RollBack => "rolled back",
            Operation::Delete => "deleted",
            Operation::Adopt => "adopted",
            Operation::SaveSnippet => "saved",
            Operation::Rerun => "rerun",
            Operation::Read => "read",
        }
    }

    /// How `No execution "<id>"` ends for this operation (the reference runtime's words where it has them).
    fn missing_suffix(self) -> &'static str {
        match self {
            Operation::Approve => " to resume.",
            Operation::Recover => " to recover.",
            Operation::RollBack => " to roll back.",
            Operation::Adopt => " to adopt.",
            Operation::SaveSnippet => " to save from",
            Operation::Rerun => " to rerun.",
            Operation::Reject | Operation::Delete | Operation::Read => "",
        }
    }
}

/// What a refusal means to whoever asked, and so the API's error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// Nothing by that id or name.
    NotFound,
    /// The run is no longer as the request assumed: decided, not paused, not the call shown.
    Stale,
    /// Another live process or host holds the run; it may be possible later.
    Busy,
    /// The decision stands but runs on the run's own host, which has not finished resuming it.
    Handed,
}

/// An operation refused, nothing changed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error("No execution \"{run}\"{}", op.missing_suffix())]
    NoRun { run: String, op: Operation },
    #[error("No rule \"{rule}\"")]
    NoRule { rule: String },
    #[error("No snippet \"{name}\"")]
    NoSnippet { name: String },
    #[error("No connector \"{connector}\"")]
    NoConnector { connector: String },
    /// A method its connector does not list (now: its server may be down and list nothing).
    #[error("No method \"{method}\" on \"{connector}\" (is its server running?)")]
    NoMethod { connector: String, method: String },
    /// Replacing rule `rule` by one with id `new_id`: either the first is gone or the second is another's.
    #[error("No rule \"{rule}\", or \"{new_id}\" is taken by another rule")]
    NoRuleOrTaken { rule: String, new_id: String },
    #[error("Execution \"{run}\" is not paused (status: {status}); only a paused run can be {}.", op.done())]
    NotPaused {
        run: String,
        status: ExecutionStatus,
        op: Operation,
    },
    #[error(
        "Execution \"{run}\" is not interrupted (status: {status}); only an interrupted run can be recovered."
    )]
    NotInterrupted {
        run: String,
        status: ExecutionStatus,
    },
    #[error("Call {seq} of execution \"{run}\" is not waiting for a decision.")]
    NotWaiting { run: String, seq: u64 },
    #[error("Execution \"{run}\" has no call waiting for a decision.")]
    NothingWaiting { run: String },
    #[error("{}", rolling_back(run, *pid, *op))]
    RollingBack {
        run: String,
        pid: u32,
        op: Operation,
    },
    #[error("{}", running(run, *pid, *op))]
    Running {
        run: String,
        pid: u32,
        op: Operation,
    },
    #[error(
        "Execution \"{run}\" was already approved on another host; it waits for its own host to resume it."
    )]
    ApprovedElsewhere { run: String },
    /// A decision bound to a call that no longer waits as it was shown (docs/design.md, "A decision names its
    /// call"); `why` says what changed.
    #[error("Not decided: {why}. Look at the call again before deciding.")]
    NotTheCallShown { why: String },
    /// A second approval by the same person of a call that needs several (docs/design.md, "Four eyes").
    #[error(
        "{person} already approved the call waiting in execution \"{run}\": it needs {need} different people to approve it."
    )]
    ApprovedAlready {
        run: String,
        person: String,
        need: u32,
    },
    /// The others approved the arguments they were shown; an edit would run what they never saw.
    #[error(
        "The call waiting in execution \"{run}\" needs {need} people to approve it as it is, so it cannot be approved with edits: approve it as shown, or reject it with the change as the reason."
    )]
    EditNeedsQuorum { run: String, need: u32 },
    #[error("Execution \"{run}\" has no approval waiting for this host.")]
    NoHandedApproval { run: String },
    #[error(
        "Execution \"{run}\" belongs to host {host}, which is gone (no heartbeat for {silent_s} s): it waits for its host, or for a host with its connectors to adopt it."
    )]
    HostGone {
        run: String,
        host: String,
        silent_s: i64,
    },
    /// What runs a run's connectors (recovery, rollback) happens on its own host (docs/shared-store.md,
    /// "Hosts").
    #[error("{}", other_host(run, host, *alive, *op))]
    OtherHost {
        run: String,
        host: String,
        alive: bool,
        op: Operation,
    },
    #[error("Execution \"{run}\" already belongs to this host.")]
    AlreadyHere { run: String },
    #[error("Execution \"{run}\" belongs to host {host}, which is alive: it resumes its own runs.")]
    HostAlive { run: String, host: String },
    #[error("Execution \"{run}\" has no host to adopt it from: its store is not shared.")]
    NotShared { run: String },
    #[error(
        "Approved: execution \"{run}\" runs on host {host}, which has not finished resuming it yet; `codemode wait {run}` returns its outcome."
    )]
    StillResuming { run: String, host: String },
}

impl Refusal {
    pub fn kind(&self) -> RefusalKind {
        match self {
            Refusal::NoRun { .. }
            | Refusal::NoRule { .. }
            | Refusal::NoRuleOrTaken { .. }
            | Refusal::NoSnippet { .. }
            | Refusal::NoConnector { .. }
            | Refusal::NoMethod { .. } => RefusalKind::NotFound,
            // A person deciding learns the run moved on; a maintenance operation learns to wait.
            Refusal::RollingBack { op, .. } => match op {
                Operation::Approve | Operation::Reject => RefusalKind::Stale,
                _ => RefusalKind::Busy,
            },
            Refusal::Running { .. } | Refusal::HostAlive { .. } => RefusalKind::Busy,
            Refusal::OtherHost { alive, .. } => {
                if *alive {
                    RefusalKind::Busy
                } else {
                    RefusalKind::Stale
                }
            }
            Refusal::StillResuming { .. } => RefusalKind::Handed,
            Refusal::NotPaused { .. }
            | Refusal::NotInterrupted { .. }
            | Refusal::NotWaiting { .. }
            | Refusal::NothingWaiting { .. }
            | Refusal::ApprovedElsewhere { .. }
            | Refusal::NotTheCallShown { .. }
            | Refusal::ApprovedAlready { .. }
            | Refusal::EditNeedsQuorum { .. }
            | Refusal::NoHandedApproval { .. }
            | Refusal::HostGone { .. }
            | Refusal::AlreadyHere { .. }
            | Refusal::NotShared { .. } => RefusalKind::Stale,
        }
    }
}

fn rolling_back(run: &str, pid: u32, op: Operation) -> String {
    let held = format!("Execution \"{run}\" is being rolled back by process {pid}");
    match op {
        Operation::RollBack => {
            format!("Execution \"{run}\" is already being rolled back by process {pid}.")
        }
        Operation::Recover => format!("{held}; it cannot be recovered."),
        Operation::Delete => format!("{held}; it can be deleted once the rollback ends."),
        other => format!("{held}; it can no longer be {}.", other.done()),
    }
}

fn running(run: &str, pid: u32, op: Operation) -> String {
    match op {
        Operation::Recover => format!(
            "Execution \"{run}\" is still running in process {pid}; only an interrupted run can be recovered."
        ),
        other => format!(
            "Execution \"{run}\" is running in process {pid}; it can be {} once its pass ends.",
            other.done()
        ),
    }
}

fn other_host(run: &str, host: &str, alive: bool, op: Operation) -> String {
    let done = op.done();
    if alive {
        format!(
            "Execution \"{run}\" belongs to host {host}: it can be {done} there, with the connectors that ran it."
        )
    } else {
        format!(
            "Execution \"{run}\" belongs to host {host}, which is gone: it can be {done} there, or here once this host adopts it."
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words the reference runtime uses, and that agents and scripts already match on.
    #[test]
    fn reference_wording() {
        let run = || "exec_1".to_owned();
        assert_eq!(
            Refusal::NoRun {
                run: run(),
                op: Operation::Approve
            }
            .to_string(),
            "No execution \"exec_1\" to resume."
        );
        assert_eq!(
            Refusal::NoRun {
                run: run(),
                op: Operation::SaveSnippet
            }
            .to_string(),
            "No execution \"exec_1\" to save from"
        );
        assert_eq!(
            Refusal::NotPaused {
                run: run(),
                status: ExecutionStatus::Rejected,
                op: Operation::Approve
            }
            .to_string(),
            "Execution \"exec_1\" is not paused (status: rejected); only a paused run can be approved."
        );
        assert_eq!(
            Refusal::RollingBack {
                run: run(),
                pid: 7,
                op: Operation::Reject
            }
            .to_string(),
            "Execution \"exec_1\" is being rolled back by process 7; it can no longer be rejected."
        );
        assert_eq!(
            Refusal::RollingBack {
                run: run(),
                pid: 7,
                op: Operation::Reject
            }
            .kind(),
            RefusalKind::Stale
        );
        assert_eq!(
            Refusal::RollingBack {
                run: run(),
                pid: 7,
                op: Operation::Delete
            }
            .kind(),
            RefusalKind::Busy
        );
    }
}
