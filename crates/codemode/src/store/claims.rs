//! Who may act on a run: resuming a paused run for an approval, rejecting its pending call, taking over an
//! interrupted run, letting go of a pass. Each claim is conditional on the holder it read, so two processes
//! never both win it.

use super::postgres;
use super::queries::{ReplayLog, replay_log_of, replay_log_sql};
use super::quorum::{self, Counted, Tally};
use super::rows::{
    EXECUTION_COLUMNS, Waiting, execution_row, run_and_waiting, run_and_waiting_of,
    run_and_waiting_sql, run_row,
};
use super::runs::cap;
use super::sql::{DbError, Dialect, Row, args};
use super::{Result, Store, StoreError};
use crate::model::{
    CallRef, Decision, DecisionKind, EntryState, ExecutionState, ExecutionStatus, RunHost,
};
use crate::transitions::{self, RecoverStep, RejectStep, ResumeStep};

/// Whose decision a claim records ([`Store::resume`]).
#[derive(Debug, Clone, Copy)]
pub enum Claim<'a> {
    /// A person's (or a rule's) decision given on this host: the run is resumed here when it is this host's
    /// (or has none), else the decision is handed to its host.
    Approve(&'a Decision),
    /// The decision another host handed to this one, read with the run. `checked`: its edited arguments, if
    /// any, were checked against the tool here; unchecked, an edited decision comes back to be checked.
    Handed { checked: bool },
}

/// The result of trying to claim a paused run for approval.
#[derive(Debug, Clone)]
pub enum Resume {
    /// The run is claimed here: its head, what its pass replays from (read with the run), and the call it
    /// decided.
    Resumed {
        execution: Box<ExecutionState>,
        log: ReplayLog,
        decided: Option<u64>,
    },
    /// The decision is written for the run's host, which resumes it; with the seq of the call it decided.
    Handed(RunHost, Option<u64>),
    /// The run's host is gone: nothing was written.
    HostGone(RunHost),
    /// The run needs connectors this host does not have: nothing was written.
    Unconfigured(Vec<String>),
    /// A handed decision with edited arguments, to check before it is claimed ([`Claim::Handed`]).
    Edited(Box<Decision>),
    /// No decision waits for this host on the run ([`Claim::Handed`]).
    NoneHanded,
    /// The call needs several people and this approval did not make them all (docs/design.md, "Four eyes").
    Short(Tally),
    /// The call waiting is not the one the decision names (another seq, other arguments): nothing changed.
    OtherCall(String),
    /// Another host's approval waits for this run's host to resume it.
    AlreadyDecided,
    NotPaused(ExecutionStatus),
    /// A live process is rolling the run back.
    RollingBack(u32),
    Missing,
}

/// The result of trying to reject a pending call.
#[derive(Debug, Clone, PartialEq)]
pub enum Rejection {
    Rejected,
    NotPaused(ExecutionStatus),
    /// A live process is rolling the run back.
    RollingBack(u32),
    /// Nothing at that `seq` waits for a decision.
    NotPending,
    /// The call at that `seq` has other arguments than the ones the decision names.
    OtherCall(String),
    /// Another host's approval waits for this run's host to resume it.
    AlreadyDecided,
    Missing,
}

/// The result of trying to recover an interrupted run.
#[derive(Debug, Clone, PartialEq)]
pub enum Recover {
    /// An approved call was mid-execution: it waits for a human decision again.
    Repaused,
    /// Nothing approved was in flight: run the pass again.
    Rerun,
    NotInterrupted(ExecutionStatus),
    StillRunning(u32),
    /// A live process is rolling the run back.
    RollingBack(u32),
    Missing,
}

impl Store {
    /// Lets go of this process's running pass of run `id`, whose calls could not all be recorded: the run is
    /// then `interrupted` (its holder is no process), so `recover` takes it over and asks again about a gated
    /// call left `executing`. Conditional on the run still running under this process; true when released.
    pub fn release_pass(&self, id: &str) -> Result<bool, StoreError> {
        self.write_run(id, |tx| {
            let released = tx.execute(
                "UPDATE cm_executions SET owner_pid = NULL, owner_started = NULL
                 WHERE id = ?1 AND runtime = ?2 AND status = 'running' AND owner_pid = ?3 AND owner_started = ?4",
                args![id, self.runtime, self.owner.pid, self.owner.started as i64],
            )?;
            Ok(released > 0)
        })
    }

    /// Claims a paused run for approval ([`transitions::resume_step`]): the run becomes `running` and its
    /// pending call is decided, in one transaction (so a later reject, which needs a paused run, finds nothing
    /// to reject). The call stays `pending` until the pass reaches it: a replay that diverges before it leaves
    /// it never run, and a rollback then has nothing of it to undo.
    ///
    /// On a shared store a run of another live host is not claimed: the decision is handed to that host
    /// (`handed`, told on commit), which resumes the run with its own connectors (docs/shared-store.md,
    /// "Approving another host's run"). The run's head, its waiting calls and the log its pass replays are
    /// read in one flight on PostgreSQL, and the writes leave with COMMIT: two round trips either way
    /// (docs/shared-store.md, "Fewer round trips"). `configured` are this host's connectors: a run that
    /// needs others is not claimed here.
    pub fn resume(
        &self,
        id: &str,
        claim: Claim<'_>,
        expected: Option<&CallRef>,
        configured: &[String],
    ) -> Result<Resume, StoreError> {
        self.write(|tx| {
            let (head_sql, run_sql, log_sql) = (
                format!("{EXECUTION_COLUMNS} WHERE e.id = ?1 AND e.runtime = ?2"),
                run_and_waiting_sql(),
                replay_log_sql(),
            );
            let params = args![id, self.runtime];
            let read = tx.query_together(&[(&head_sql, params), (&run_sql, params), (&log_sql, params)])?;
            let [head, run, log] = <[Vec<Row>; 3]>::try_from(read).map_err(|_| DbError::NoRow)?;
            let (Some(head), Some((run, waiting))) = (head.first(), run_and_waiting_of(&run)?) else {
                return Ok(Resume::Missing);
            };
            let execution = execution_row(self, head)?;
            let here = execution.host.as_ref().is_none_or(|host| host.here);
            let (decision, handed) = match claim {
                Claim::Approve(decision) => (decision.clone(), false),
                Claim::Handed { checked } => {
                    let Some(decision) = execution.handed.clone().filter(|_| {
                        here && execution.host.is_some() && execution.status == ExecutionStatus::Paused
                    }) else {
                        return Ok(Resume::NoneHanded);
                    };
                    if !checked && decision.kind == DecisionKind::Edited {
                        return Ok(Resume::Edited(Box::new(decision)));
                    }
                    (decision, true)
                }
            };
            match transitions::resume_step(run.status, self.holders(&run)) {
                ResumeStep::NotPaused(status) => return Ok(Resume::NotPaused(status)),
                ResumeStep::RollingBack(pid) => return Ok(Resume::RollingBack(pid)),
                ResumeStep::Claim => {}
            }
            if !here && let Some(host) = execution.host.clone().filter(|host| !host.alive) {
                return Ok(Resume::HostGone(host));
            }
            if let Some(other) = other_call(id, expected, &waiting) {
                return Ok(Resume::OtherCall(other));
            }
            if !handed && run.handed {
                return Ok(Resume::AlreadyDecided);
            }
            let missing: Vec<String> = execution
                .connectors
                .iter()
                .filter(|name| here && !configured.contains(name))
                .cloned()
                .collect();
            if !missing.is_empty() {
                return Ok(Resume::Unconfigured(missing));
            }
            let (by, now) = (decision.by.as_str(), decision.at);
            let text = self.attributed(&decision);
            // A handed decision was counted by the host that handed it.
            let text = if handed {
                text
            } else {
                match quorum::count_approval(tx, id, &decision, &text, waiting.first())? {
                    Counted::Alone => text,
                    Counted::Reached(votes) => quorum::with_votes(&text, votes),
                    Counted::Short(tally) => return Ok(Resume::Short(tally)),
                }
            };
            let decided = waiting.first().map(|waiting| waiting.seq);
            // Under the runtime's exclusive lock the run is as just read (paused, its handed decision as
            // required), so the writes' conditions hold and they leave with COMMIT: one round trip less on
            // PostgreSQL (docs/shared-store.md, "Fewer round trips"); a person who may not decide is refused
            // there by the server ("People and permissions"). The conditions stay in the SQL.
            if let Some(host) = execution.host.clone().filter(|_| !here) {
                tx.execute_later(
                    "UPDATE cm_executions SET handed = ?2, handed_refused = NULL, updated_at = ?3,
                       handed_seq = (SELECT min(l.seq) FROM cm_log l WHERE l.execution_id = ?1 AND l.state = 'pending')
                     WHERE id = ?1 AND runtime = ?4 AND status = 'paused' AND handed IS NULL",
                    args![id, text, now, self.runtime],
                )?;
                if tx.dialect() == Dialect::Postgres {
                    // Delivered at COMMIT, so the host hears of it only if it was written.
                    tx.execute_later(
                        "SELECT pg_notify(?1, ?2)",
                        args![postgres::CHANNEL, postgres::hand_off_payload(&self.runtime, &host.id, id)],
                    )?;
                }
                return Ok(Resume::Handed(host, decided));
            }
            tx.execute_later(
                &format!(
                    "UPDATE cm_executions SET status = 'running', updated_at = ?2, owner_pid = ?3, owner_started = ?4,
                         owner_host = ?5, rollback_pid = NULL, rollback_started = NULL, rollback_host = NULL
                     WHERE id = ?1 AND status = 'paused' AND handed IS {}NULL",
                    if handed { "NOT " } else { "" }
                ),
                args![id, now, self.owner.pid, self.owner.started as i64, self.host_id()],
            )?;
            tx.execute_later(
                &format!(
                    "UPDATE cm_log SET decided_by = ?2, decided_at = ?3, decision = {}
                     WHERE execution_id = ?1 AND state = 'pending'",
                    decision_with_shown(tx.dialect(), "?4")
                ),
                args![id, by, now, text],
            )?;
            if handed {
                // Cleared only now: the decision's trigger on PostgreSQL takes the person from the handed
                // decision, which the approver's own connection wrote (migration 15).
                tx.execute_later(
                    "UPDATE cm_executions SET handed = NULL, handed_seq = NULL WHERE id = ?1 AND runtime = ?2",
                    args![id, self.runtime],
                )?;
            }
            Ok(Resume::Resumed {
                execution: Box::new(execution),
                log: replay_log_of(&log)?,
                decided,
            })
        })
    }

    /// Takes over a run whose owning process died mid-pass ([`transitions::recover_step`]): an approved call
    /// that was executing is paused again, marked interrupted, for a person to decide; otherwise the pass runs
    /// again.
    pub fn recover(&self, id: &str, now: i64) -> Result<Recover, StoreError> {
        self.write(|tx| {
            let Some(run) = run_row(tx, &self.runtime, id)? else {
                return Ok(Recover::Missing);
            };
            let in_doubt: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM cm_log
                  WHERE execution_id = ?1 AND state = 'executing' AND requires_approval = 1)",
                args![id],
                |row| row.get(0),
            )?;
            let repause = match transitions::recover_step(run.status, self.holders(&run), in_doubt) {
                RecoverStep::NotInterrupted(status) => return Ok(Recover::NotInterrupted(status)),
                RecoverStep::StillRunning(pid) => return Ok(Recover::StillRunning(pid)),
                RecoverStep::RollingBack(pid) => return Ok(Recover::RollingBack(pid)),
                RecoverStep::TakeOver { repause } => repause,
            };
            let holder = &run.owner;
            let claimed = tx.execute(
                "UPDATE cm_executions SET owner_pid = ?4, owner_started = ?5, owner_host = ?7, updated_at = ?6
                 WHERE id = ?1 AND status = 'running' AND owner_pid IS NOT DISTINCT FROM ?2
                   AND owner_started IS NOT DISTINCT FROM ?3 AND owner_host IS NOT DISTINCT FROM ?8",
                args![
                    id,
                    holder.pid,
                    holder.started,
                    self.owner.pid,
                    self.owner.started as i64,
                    now,
                    self.host_id(),
                    holder.host
                ],
            )?;
            if claimed == 0 {
                return Ok(Recover::StillRunning(holder.pid.unwrap_or(0)));
            }
            if !repause {
                return Ok(Recover::Rerun);
            }
            tx.execute(
                "UPDATE cm_log SET state = 'pending', interrupted = 1
                 WHERE execution_id = ?1 AND state = 'executing' AND requires_approval = 1",
                args![id],
            )?;
            tx.execute(
                "UPDATE cm_executions SET status = 'paused' WHERE id = ?1",
                args![id],
            )?;
            Ok(Recover::Repaused)
        })
    }

    /// Rejects the pending call at `seq` of a paused run (docs/semantics.md §2.5), with an optional reason
    /// appended to the run's error for the agent to read. A run that is not paused (a terminal run's status
    /// never changes back), one a live process is rolling back, or a `seq` that is not pending is refused.
    pub fn reject(
        &self,
        id: &str,
        seq: u64,
        digest: Option<&str>,
        decision: &Decision,
    ) -> Result<Rejection, StoreError> {
        let now = decision.at;
        self.write(|tx| {
            let Some((run, waiting)) = run_and_waiting(tx, &self.runtime, id)? else {
                return Ok(Rejection::Missing);
            };
            let call = tx
                .query_row_opt(
                    "SELECT connector, method, state, decide_within FROM cm_log WHERE execution_id = ?1 AND seq = ?2",
                    args![id, seq as i64],
                    |row| {
                        let state: String = row.get(2)?;
                        Ok((
                            row.get::<String>(0)?,
                            row.get::<String>(1)?,
                            EntryState::parse(&state),
                            row.get::<Option<i64>>(3)?,
                        ))
                    },
                )?;
            match transitions::reject_step(run.status, self.holders(&run), call.as_ref().and_then(|c| c.2)) {
                RejectStep::NotPaused(status) => return Ok(Rejection::NotPaused(status)),
                RejectStep::RollingBack(pid) => return Ok(Rejection::RollingBack(pid)),
                RejectStep::NotPending => return Ok(Rejection::NotPending),
                RejectStep::Reject => {}
            }
            let Some((connector, method, _, decide_within)) = call else {
                return Ok(Rejection::NotPending);
            };
            if run.handed {
                return Ok(Rejection::AlreadyDecided);
            }
            if let Some(digest) = digest
                && let Some(other) = other_call(id, Some(&CallRef { seq, digest: Some(digest.to_owned()) }), &waiting)
            {
                return Ok(Rejection::OtherCall(other));
            }
            let actor = decision.by;
            // Both writes are conditional on what was read under the lock; they leave with COMMIT.
            tx.execute_later(
                &format!(
                    "UPDATE cm_log SET state = 'reverted', decided_by = ?3, decided_at = ?4, decision = {}
                     WHERE execution_id = ?1 AND seq = ?2 AND state = 'pending'",
                    decision_with_shown(tx.dialect(), "?5")
                ),
                args![id, seq as i64, actor.as_str(), now, self.attributed(decision)],
            )?;
            let error = crate::model::rejected_message(&connector, &method, decision, decide_within);
            tx.execute_later(
                "UPDATE cm_executions SET status = 'rejected', error = ?2, updated_at = ?3 WHERE id = ?1 AND status = 'paused'",
                args![id, cap(&error), now],
            )?;
            Ok(Rejection::Rejected)
        })
    }
}

/// Why the calls waiting in run `id` do not include the one `expected` names — another seq waits, or the
/// call at that seq has other arguments than the ones shown — or `None` when it waits as shown
/// (docs/design.md, "A decision names its call").
pub(super) fn other_call(
    id: &str,
    expected: Option<&CallRef>,
    waiting: &[Waiting],
) -> Option<String> {
    let expected = expected?;
    match waiting.iter().find(|w| w.seq == expected.seq) {
        Some(Waiting { args, .. })
            if expected
                .digest
                .as_ref()
                .is_none_or(|digest| *digest == crate::model::args_digest(args.as_ref())) =>
        {
            None
        }
        Some(_) => Some(format!(
            "call {} of execution \"{id}\" now has other arguments than the ones shown",
            expected.seq
        )),
        None => Some(match waiting.first() {
            Some(Waiting { seq, .. }) => format!(
                "execution \"{id}\" now waits on call {seq}, not on call {} that was shown",
                expected.seq
            ),
            None => format!(
                "call {} of execution \"{id}\" is no longer waiting for a decision",
                expected.seq
            ),
        }),
    }
}

/// The decision JSON in parameter `param`, with the call's `shown` (what the person was shown) merged in as
/// its `shown` field when there is one.
fn decision_with_shown(dialect: Dialect, param: &str) -> String {
    match dialect {
        Dialect::Sqlite => {
            format!(
                "CASE WHEN shown IS NULL THEN {param} ELSE json_set({param}, '$.shown', json(shown)) END"
            )
        }
        Dialect::Postgres => format!(
            "CASE WHEN shown IS NULL THEN {param}
                  ELSE jsonb_set(CAST({param} AS TEXT)::jsonb, '{{shown}}', shown::jsonb)::text END"
        ),
    }
}
