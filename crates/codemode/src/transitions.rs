//! The replay state machine: which transition a call or a run takes, as plain functions over plain data
//! (docs/design.md, "Replay" and "Approval and rollback"). The store reads the rows, asks here, and writes
//! what the answer says in the same transaction, conditional on the state it read; nothing here touches
//! SQL, a clock or the process table (liveness arrives as data: the pid of a live holder, or none).

use crate::model::{EntryState, ExecutionStatus};
use serde_json::Value;

/// A call as the log recorded it at some `seq`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recorded<'a> {
    pub connector: &'a str,
    pub method: &'a str,
    /// The recorded arguments; `None` is "no arguments".
    pub args: Option<&'a Value>,
    /// Re-executed on every pass (`replay: reexecute`).
    pub ephemeral: bool,
    pub state: EntryState,
    /// The connector answered with an error, recorded.
    pub has_error: bool,
    /// A person approved it with these arguments instead of the program's.
    pub edited: Option<&'a Value>,
}

/// The call the program makes now at that `seq`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Attempt<'a> {
    pub connector: &'a str,
    pub method: &'a str,
    pub args: Option<&'a Value>,
    pub requires_approval: bool,
}

/// What a pass does with a call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CallStep {
    /// No such run.
    Missing,
    /// The run is not running (it paused, failed or was reclaimed): end the pass, change nothing.
    Stop,
    /// Another call than the recorded one: the run fails with the reference's divergence message.
    Diverge { detail: String },
    /// Answer with the recorded result.
    Replay,
    /// Throw the recorded error again.
    ReplayError,
    /// Run it (again): an in-doubt call after a crash (at-least-once), or a re-executed tool.
    Execute,
    /// A re-executed tool whose last run failed: clear the error and run it again.
    ExecuteAfterError,
    /// The approved call, reached: mark it executing and run it — with the edited arguments if any.
    ExecuteApproved { edited: bool },
    /// A new call: record it `pending` (and pause the run) when it needs a person, else `executing` and run it.
    Record { pending: bool },
}

/// The decision for a call at a `seq` (docs/semantics.md §3.3, with docs/design.md's differences:
/// "no arguments" is a call of its own, a recorded error is replayed, an approved call stays pending until
/// reached).
pub(crate) fn call_step(
    run: Option<ExecutionStatus>,
    recorded: Option<&Recorded<'_>>,
    attempt: &Attempt<'_>,
) -> CallStep {
    let Some(run) = run else {
        return CallStep::Missing;
    };
    if run != ExecutionStatus::Running {
        return CallStep::Stop;
    }
    let Some(recorded) = recorded else {
        return CallStep::Record {
            pending: attempt.requires_approval,
        };
    };
    let (connector, method) = (attempt.connector, attempt.method);
    if recorded.connector != connector || recorded.method != method {
        return CallStep::Diverge {
            detail: format!(
                "expected {}.{}, got {connector}.{method}. Code must be deterministic up to tool calls and steps. Wrap nondeterministic work in codemode.step(name, fn).",
                recorded.connector, recorded.method
            ),
        };
    }
    if recorded.args != attempt.args {
        return CallStep::Diverge {
            detail: format!(
                "{connector}.{method} was called with different arguments than the recorded run. Arguments must be deterministic across replays. Wrap nondeterministic inputs in codemode.step(name, fn)."
            ),
        };
    }
    match recorded.state {
        EntryState::Applied if recorded.ephemeral => CallStep::Execute,
        EntryState::Applied => CallStep::Replay,
        // Only `resume` turns a paused run into a running one, so a pending call in a running run was
        // approved; the pass has now reached it.
        EntryState::Pending => CallStep::ExecuteApproved {
            edited: recorded.edited.is_some(),
        },
        EntryState::Executing => CallStep::Execute,
        EntryState::Error if recorded.has_error && recorded.ephemeral => {
            CallStep::ExecuteAfterError
        }
        EntryState::Error if recorded.has_error => CallStep::ReplayError,
        // Diverged or unrecordable: the run already failed on it.
        EntryState::Error => CallStep::Stop,
        // Rejected or rolled back earlier: a new call in its place.
        EntryState::Reverted => CallStep::Record {
            pending: attempt.requires_approval,
        },
    }
}

/// Who holds a run right now: the pid of a live process running its pass, and of one rolling it back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Holders {
    pub pass: Option<u32>,
    pub rollback: Option<u32>,
}

/// What approving a run does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResumeStep {
    /// Claim it: `paused` → `running`, the pending call decided.
    Claim,
    NotPaused(ExecutionStatus),
    RollingBack(u32),
}

pub(crate) fn resume_step(status: ExecutionStatus, holders: Holders) -> ResumeStep {
    if let Some(pid) = holders.rollback {
        return ResumeStep::RollingBack(pid);
    }
    match status {
        ExecutionStatus::Paused => ResumeStep::Claim,
        other => ResumeStep::NotPaused(other),
    }
}

/// What rejecting a call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RejectStep {
    /// The call becomes `reverted` with its decision, the run `rejected`.
    Reject,
    /// A terminal run's status never changes back (only to `rolled_back`).
    NotPaused(ExecutionStatus),
    RollingBack(u32),
    NotPending,
}

pub(crate) fn reject_step(
    status: ExecutionStatus,
    holders: Holders,
    call: Option<EntryState>,
) -> RejectStep {
    if status != ExecutionStatus::Paused {
        return RejectStep::NotPaused(status);
    }
    if let Some(pid) = holders.rollback {
        return RejectStep::RollingBack(pid);
    }
    match call {
        Some(EntryState::Pending) => RejectStep::Reject,
        _ => RejectStep::NotPending,
    }
}

/// What recovering a run does (docs/design.md, "Live runs").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecoverStep {
    /// Take it over, then: an approved call that was executing waits for a person again (it may have been
    /// applied); otherwise the pass runs again.
    TakeOver {
        repause: bool,
    },
    NotInterrupted(ExecutionStatus),
    StillRunning(u32),
    RollingBack(u32),
}

pub(crate) fn recover_step(
    status: ExecutionStatus,
    holders: Holders,
    approved_call_in_doubt: bool,
) -> RecoverStep {
    if status != ExecutionStatus::Running {
        return RecoverStep::NotInterrupted(status);
    }
    if let Some(pid) = holders.pass {
        return RecoverStep::StillRunning(pid);
    }
    if let Some(pid) = holders.rollback {
        return RecoverStep::RollingBack(pid);
    }
    RecoverStep::TakeOver {
        repause: approved_call_in_doubt,
    }
}

/// What claiming a run for rollback does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RollbackStep {
    /// Claim it (taking over the claim of a process that died mid-rollback).
    Claim,
    Running(u32),
    RollingBack(u32),
}

pub(crate) fn rollback_step(status: ExecutionStatus, holders: Holders) -> RollbackStep {
    if status == ExecutionStatus::Running
        && let Some(pid) = holders.pass
    {
        return RollbackStep::Running(pid);
    }
    match holders.rollback {
        Some(pid) => RollbackStep::RollingBack(pid),
        None => RollbackStep::Claim,
    }
}

/// What expiry does to a run last touched before the cutoff: the status and error it ends with, or nothing
/// (terminal, or held by a live process: its audit row stays while it can act).
pub(crate) fn expiry_step(
    status: ExecutionStatus,
    holders: Holders,
) -> Option<(ExecutionStatus, &'static str)> {
    if holders.rollback.is_some() {
        return None;
    }
    match status {
        ExecutionStatus::Paused => Some((ExecutionStatus::Rejected, "Expired awaiting approval")),
        ExecutionStatus::Running if holders.pass.is_none() => Some((
            ExecutionStatus::Error,
            "Expired while running — the host never completed the pass",
        )),
        _ => None,
    }
}

/// What deleting a run does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeleteStep {
    Delete,
    Running(u32),
    RollingBack(u32),
}

pub(crate) fn delete_step(status: ExecutionStatus, holders: Holders) -> DeleteStep {
    if status == ExecutionStatus::Running
        && let Some(pid) = holders.pass
    {
        return DeleteStep::Running(pid);
    }
    match holders.rollback {
        Some(pid) => DeleteStep::RollingBack(pid),
        None => DeleteStep::Delete,
    }
}

/// A call as a rollback sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RevertFacts {
    pub state: EntryState,
    /// Paused again by `recover` because it may have been applied before a crash.
    pub interrupted: bool,
    /// A rollback already reverted it.
    pub reverted: bool,
    pub is_step: bool,
    /// Served from the run this one reruns: its effect is that run's to undo, not this one's.
    pub inherited: bool,
}

/// Whether a rollback reverts this call: an applied one (docs/semantics.md §5), or one in doubt after a
/// crash — still `executing`, or paused again as interrupted (then perhaps rejected). Never a call the
/// connector answered with an error, one never reached (`pending`), or a step.
pub(crate) fn revertible(facts: RevertFacts) -> bool {
    if facts.is_step || facts.reverted || facts.inherited {
        return false;
    }
    match facts.state {
        EntryState::Applied | EntryState::Executing => true,
        EntryState::Pending | EntryState::Reverted => facts.interrupted,
        EntryState::Error => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const STATUSES: [ExecutionStatus; 6] = [
        ExecutionStatus::Running,
        ExecutionStatus::Paused,
        ExecutionStatus::Completed,
        ExecutionStatus::Error,
        ExecutionStatus::Rejected,
        ExecutionStatus::RolledBack,
    ];
    const STATES: [EntryState; 5] = [
        EntryState::Executing,
        EntryState::Applied,
        EntryState::Pending,
        EntryState::Reverted,
        EntryState::Error,
    ];

    fn holders() -> [Holders; 4] {
        [
            Holders::default(),
            Holders {
                pass: Some(7),
                rollback: None,
            },
            Holders {
                pass: None,
                rollback: Some(8),
            },
            Holders {
                pass: Some(7),
                rollback: Some(8),
            },
        ]
    }

    fn attempt<'a>(args: Option<&'a Value>) -> Attempt<'a> {
        Attempt {
            connector: "files",
            method: "write_file",
            args,
            requires_approval: true,
        }
    }

    fn recorded<'a>(state: EntryState, args: Option<&'a Value>) -> Recorded<'a> {
        Recorded {
            connector: "files",
            method: "write_file",
            args,
            ephemeral: false,
            state,
            has_error: false,
            edited: None,
        }
    }

    #[test]
    fn a_call_of_a_run_that_is_not_running_stops_the_pass_whatever_is_recorded() {
        let args = json!({"path": "a"});
        for status in STATUSES
            .into_iter()
            .filter(|s| *s != ExecutionStatus::Running)
        {
            assert_eq!(
                call_step(Some(status), None, &attempt(Some(&args))),
                CallStep::Stop
            );
            for state in STATES {
                let entry = recorded(state, Some(&args));
                assert_eq!(
                    call_step(Some(status), Some(&entry), &attempt(Some(&args))),
                    CallStep::Stop,
                    "{status} {state:?}"
                );
            }
        }
        assert_eq!(call_step(None, None, &attempt(None)), CallStep::Missing);
    }

    #[test]
    fn a_new_call_is_recorded_pending_only_when_it_needs_a_person() {
        let running = Some(ExecutionStatus::Running);
        assert_eq!(
            call_step(running, None, &attempt(None)),
            CallStep::Record { pending: true }
        );
        let ungated = Attempt {
            requires_approval: false,
            ..attempt(None)
        };
        assert_eq!(
            call_step(running, None, &ungated),
            CallStep::Record { pending: false }
        );
    }

    #[test]
    fn every_recorded_state_maps_to_its_step_when_the_call_matches() {
        let args = json!({"path": "a"});
        let running = Some(ExecutionStatus::Running);
        for ephemeral in [false, true] {
            for has_error in [false, true] {
                for edited in [None, Some(&args)] {
                    for state in STATES {
                        let entry = Recorded {
                            ephemeral,
                            has_error,
                            edited,
                            ..recorded(state, Some(&args))
                        };
                        let step = call_step(running, Some(&entry), &attempt(Some(&args)));
                        let expected = match state {
                            EntryState::Applied if ephemeral => CallStep::Execute,
                            EntryState::Applied => CallStep::Replay,
                            EntryState::Pending => CallStep::ExecuteApproved {
                                edited: edited.is_some(),
                            },
                            EntryState::Executing => CallStep::Execute,
                            EntryState::Error if has_error && ephemeral => {
                                CallStep::ExecuteAfterError
                            }
                            EntryState::Error if has_error => CallStep::ReplayError,
                            EntryState::Error => CallStep::Stop,
                            EntryState::Reverted => CallStep::Record { pending: true },
                        };
                        assert_eq!(
                            step, expected,
                            "{state:?} ephemeral {ephemeral} error {has_error}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn any_difference_in_the_call_diverges_in_every_state() {
        let (a, b, empty) = (json!({"path": "a"}), json!({"path": "b"}), json!({}));
        let running = Some(ExecutionStatus::Running);
        let pairs: [(Option<&Value>, Option<&Value>); 5] = [
            (Some(&a), Some(&b)),
            (None, Some(&a)),
            (Some(&a), None),
            (None, Some(&empty)),
            (Some(&empty), None),
        ];
        for state in STATES {
            for (old, new) in pairs {
                let step = call_step(running, Some(&recorded(state, old)), &attempt(new));
                assert!(
                    matches!(&step, CallStep::Diverge { detail } if detail.starts_with("files.write_file was called with different arguments")),
                    "{state:?} {old:?} → {new:?}: {step:?}"
                );
            }
            let other = Attempt {
                method: "delete_file",
                ..attempt(Some(&a))
            };
            let step = call_step(running, Some(&recorded(state, Some(&a))), &other);
            assert!(
                matches!(&step, CallStep::Diverge { detail } if detail.starts_with("expected files.write_file, got files.delete_file.")),
                "{step:?}"
            );
        }
        assert_eq!(
            call_step(
                running,
                Some(&recorded(EntryState::Applied, None)),
                &attempt(None)
            ),
            CallStep::Replay,
            "no arguments matches no arguments"
        );
    }

    #[test]
    fn only_a_paused_run_that_nobody_rolls_back_can_be_approved() {
        for status in STATUSES {
            for h in holders() {
                let expected = match (h.rollback, status) {
                    (Some(pid), _) => ResumeStep::RollingBack(pid),
                    (None, ExecutionStatus::Paused) => ResumeStep::Claim,
                    (None, other) => ResumeStep::NotPaused(other),
                };
                assert_eq!(resume_step(status, h), expected, "{status} {h:?}");
            }
        }
    }

    #[test]
    fn only_a_pending_call_of_a_paused_run_can_be_rejected() {
        for status in STATUSES {
            for h in holders() {
                for call in STATES.map(Some).into_iter().chain([None]) {
                    let expected = if status != ExecutionStatus::Paused {
                        RejectStep::NotPaused(status)
                    } else if let Some(pid) = h.rollback {
                        RejectStep::RollingBack(pid)
                    } else if call == Some(EntryState::Pending) {
                        RejectStep::Reject
                    } else {
                        RejectStep::NotPending
                    };
                    assert_eq!(
                        reject_step(status, h, call),
                        expected,
                        "{status} {h:?} {call:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn only_a_running_run_whose_process_died_can_be_recovered() {
        for status in STATUSES {
            for h in holders() {
                for in_doubt in [false, true] {
                    let expected = match (status, h.pass, h.rollback) {
                        (s, _, _) if s != ExecutionStatus::Running => {
                            RecoverStep::NotInterrupted(s)
                        }
                        (_, Some(pid), _) => RecoverStep::StillRunning(pid),
                        (_, None, Some(pid)) => RecoverStep::RollingBack(pid),
                        (_, None, None) => RecoverStep::TakeOver { repause: in_doubt },
                    };
                    assert_eq!(recover_step(status, h, in_doubt), expected);
                }
            }
        }
    }

    #[test]
    fn a_rollback_waits_for_a_live_pass_and_never_runs_twice() {
        for status in STATUSES {
            for h in holders() {
                let expected = match (status, h.pass, h.rollback) {
                    (ExecutionStatus::Running, Some(pid), _) => RollbackStep::Running(pid),
                    (_, _, Some(pid)) => RollbackStep::RollingBack(pid),
                    _ => RollbackStep::Claim,
                };
                assert_eq!(rollback_step(status, h), expected, "{status} {h:?}");
            }
        }
    }

    #[test]
    fn expiry_and_deletion_never_touch_a_live_run() {
        for status in STATUSES {
            for h in holders() {
                let live = h.rollback.is_some()
                    || (status == ExecutionStatus::Running && h.pass.is_some());
                let expired = expiry_step(status, h);
                match status {
                    _ if live => assert_eq!(expired, None, "{status} {h:?}"),
                    ExecutionStatus::Paused => assert_eq!(
                        expired,
                        Some((ExecutionStatus::Rejected, "Expired awaiting approval"))
                    ),
                    ExecutionStatus::Running => {
                        assert_eq!(expired.map(|e| e.0), Some(ExecutionStatus::Error))
                    }
                    _ => assert_eq!(expired, None, "terminal runs do not expire"),
                }
                let deleted = delete_step(status, h);
                assert_eq!(deleted == DeleteStep::Delete, !live, "{status} {h:?}");
            }
        }
    }

    #[test]
    fn a_rollback_reverts_what_ran_or_may_have_run_and_nothing_else() {
        for state in STATES {
            for interrupted in [false, true] {
                for reverted in [false, true] {
                    for (is_step, inherited) in [(false, false), (true, false), (false, true)] {
                        let facts = RevertFacts {
                            state,
                            interrupted,
                            reverted,
                            is_step,
                            inherited,
                        };
                        let expected = !is_step
                            && !reverted
                            && !inherited
                            && match state {
                                EntryState::Applied | EntryState::Executing => true,
                                EntryState::Pending | EntryState::Reverted => interrupted,
                                EntryState::Error => false,
                            };
                        assert_eq!(revertible(facts), expected, "{facts:?}");
                    }
                }
            }
        }
    }
}
