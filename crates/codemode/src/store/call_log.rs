//! Writes to a run's call log (`cm_log`): what each call does and how it ended, a step's value, and what a
//! person is shown while a call waits.

use super::fresh_call::{ENTRY_COLUMNS, ENTRY_VALUES, NewEntry};
use super::reruns::Inheriting;
use super::rows::{parse_decision, parse_json, status_of};
use super::runs::{cap, fail_in, of_runtime, touch};
use super::sql::{DbError, Sql, args};
use super::{Result, Store, StoreError};
use crate::codec::{MAX_DURABLE_VALUE, not_serializable_message, too_large_message, utf16_len};
use crate::model::{Decision, DecisionKind, EntryState, ExecutionStatus};
use crate::rules::{Effect, Verdict};
use crate::transitions::{self, Attempt, CallStep, Recorded};
use serde_json::{Value, json};

/// Whether a value's JSON is small enough to record.
fn fits_durably(text: &str) -> bool {
    utf16_len(text) <= MAX_DURABLE_VALUE
}

/// A new step's value the worker told without waiting for its record ([`Store::record_steps`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ToldStep {
    pub seq: u64,
    pub name: String,
    pub value: Option<Value>,
}

/// What `decide` tells the pass to do with a call (docs/semantics.md §3.3).
#[derive(Debug, Clone, PartialEq)]
pub enum CallPlan {
    Execute,
    /// Run the approved call with the arguments a person edited instead of the program's.
    ExecuteEdited(Value),
    Replay(Option<Value>),
    /// The call was answered with this error when it ran: the program gets the same error again.
    ReplayError(String),
    /// The run is not running (it paused or failed): end the pass.
    Pause,
    /// The execution does not exist.
    Missing,
}

impl Store {
    /// Decides what a call at `seq` does ([`transitions::call_step`]) and records it, in one transaction.
    #[allow(clippy::too_many_arguments)]
    pub fn decide(
        &self,
        id: &str,
        seq: u64,
        connector: &str,
        method: &str,
        args: Option<&Value>,
        canonical: Option<&Value>,
        verdict: &Verdict,
        ephemeral: bool,
        now: i64,
    ) -> Result<CallPlan, StoreError> {
        let requires_approval = verdict.effect == Effect::Ask;
        let attempt = Attempt {
            connector,
            method,
            args,
            requires_approval,
        };
        if let Some(plan) =
            self.record_allowed_at_once(id, seq, &attempt, canonical, verdict, ephemeral, now)?
        {
            return Ok(plan);
        }
        // The fast path's SQL holds this condition itself (docs/semantics.md §3.6).
        if self.outcome_failed(id) {
            return Err(StoreError::Database(DbError::Pool(
                "the outcome of the call before was not recorded".to_owned(),
            )));
        }
        self.write_run(id, |tx| {
            // The run's status and what is recorded at `seq`, in one statement: on PostgreSQL it travels with
            // BEGIN, and the writes below with COMMIT — two round trips (docs/shared-store.md, "Transactions").
            let (status, existing, inheriting) = status_and_recorded(tx, &self.runtime, id, seq)?;
            let existing = existing.filter(|_| status == Some(ExecutionStatus::Running));
            let edited = existing.as_ref().and_then(|e| match &e.decision {
                Some(Decision { kind: DecisionKind::Edited, args, .. }) => args.clone(),
                _ => None,
            });
            let recorded = existing.as_ref().map(|e| Recorded {
                connector: &e.connector,
                method: &e.method,
                args: e.args.as_ref(),
                ephemeral: e.ephemeral,
                state: e.state,
                has_error: e.error.is_some(),
                edited: edited.as_ref(),
            });
            let step = transitions::call_step(status, recorded.as_ref(), &attempt);
            let Some(existing) = existing else {
                return match step {
                    CallStep::Missing => Ok(CallPlan::Missing),
                    CallStep::Record { .. } => match &inheriting {
                        // A rerun before its step: served the old run's outcome, not run again.
                        Some(inheriting) => self.inherit_call(
                            tx, id, seq, inheriting, &attempt, canonical, verdict, ephemeral, now,
                        ),
                        None => self.record_call(tx, id, seq, &attempt, canonical, verdict, ephemeral, now),
                    },
                    _ => Ok(CallPlan::Pause),
                };
            };
            match step {
                CallStep::Missing => Ok(CallPlan::Missing),
                CallStep::Stop => Ok(CallPlan::Pause),
                CallStep::Diverge { detail } => {
                    let recorded = json!({"connector": existing.connector, "method": existing.method, "args": existing.args});
                    let attempted = json!({"connector": connector, "method": method, "args": args});
                    diverge(tx, &self.runtime, id, seq, &detail, recorded, attempted, now)?;
                    Ok(CallPlan::Pause)
                }
                CallStep::Replay => {
                    tx.quiet();
                    Ok(CallPlan::Replay(existing.result))
                }
                CallStep::ReplayError => Ok(CallPlan::ReplayError(existing.error.unwrap_or_default())),
                CallStep::Execute => Ok(CallPlan::Execute),
                CallStep::ExecuteAfterError => {
                    tx.execute_later(
                        "UPDATE cm_log SET state = 'executing', error = NULL, started_at = ?3, finished_at = NULL
                         WHERE execution_id = ?1 AND seq = ?2 AND state = 'error'",
                        args![id, seq as i64, now],
                    )?;
                    Ok(CallPlan::Execute)
                }
                CallStep::ExecuteApproved { .. } => {
                    tx.execute_later(
                        "UPDATE cm_log SET state = 'executing', started_at = ?3
                         WHERE execution_id = ?1 AND seq = ?2 AND state = 'pending'",
                        args![id, seq as i64, now],
                    )?;
                    touch(tx, &self.runtime, id, now)?;
                    Ok(match edited {
                        Some(args) => CallPlan::ExecuteEdited(args),
                        None => CallPlan::Execute,
                    })
                }
                CallStep::Record { .. } => self.record_call(tx, id, seq, &attempt, canonical, verdict, ephemeral, now),
            }
        })
    }

    /// Records a new call as its verdict says: `pending` (pausing the run) when a person must decide,
    /// `executing` when it may run, `error` with the rule's message when a rule denies it. A rule's verdict is
    /// its decision (`allowed` / `denied` by `rule`) and counts as a hit of that rule.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_call(
        &self,
        tx: &dyn Sql,
        id: &str,
        seq: u64,
        attempt: &Attempt<'_>,
        canonical: Option<&Value>,
        verdict: &Verdict,
        ephemeral: bool,
        now: i64,
    ) -> Result<CallPlan> {
        let (connector, method) = (attempt.connector, attempt.method);
        let args_text = attempt
            .args
            .map(|a| serde_json::to_string(a).unwrap_or_default());
        if let Some(text) = &args_text {
            let size = utf16_len(text);
            if size > MAX_DURABLE_VALUE {
                let message =
                    too_large_message(&format!("Arguments to {connector}.{method}"), size);
                fail_in(tx, &self.runtime, id, &message, now)?;
                return Ok(CallPlan::Pause);
            }
        }
        let entry = NewEntry::new(
            id, seq, attempt, args_text, canonical, verdict, ephemeral, now,
        );
        tx.execute_later(
            // A new entry, or one replaced whole (what SQLite's INSERT OR REPLACE did): every column is set.
            &format!(
                "INSERT INTO cm_log {ENTRY_COLUMNS} VALUES ({ENTRY_VALUES})
                 ON CONFLICT (execution_id, seq) DO UPDATE SET
                   connector = excluded.connector, method = excluded.method, args = excluded.args, result = NULL,
                   requires_approval = excluded.requires_approval, ephemeral = excluded.ephemeral,
                   state = excluded.state, error = excluded.error, decision = excluded.decision,
                   decided_by = excluded.decided_by, decided_at = excluded.decided_at, interrupted = 0,
                   divergence = NULL, reverted_at = NULL, shown = NULL, canonical = excluded.canonical,
                   asked_by = excluded.asked_by, confirm_in_app = excluded.confirm_in_app,
                   ask_in_client = excluded.ask_in_client, decide_within = excluded.decide_within,
                   decide_by = excluded.decide_by, quorum = excluded.quorum, asked_at = excluded.asked_at,
                   started_at = excluded.started_at, finished_at = excluded.finished_at"
            ),
            &entry.params(),
        )?;
        let denied = entry.error;
        if let Some(rule) = &verdict.rule {
            tx.execute_later(
                "UPDATE cm_rules SET hits = hits + 1, last_hit = ?3 WHERE runtime = ?1 AND id = ?2",
                args![self.runtime, rule, now],
            )?;
        }
        match verdict.effect {
            Effect::Ask => {
                tx.execute_later(
                    "UPDATE cm_executions SET status = 'paused', updated_at = ?2 WHERE id = ?1 AND status = 'running'",
                    args![id, now],
                )?;
                Ok(CallPlan::Pause)
            }
            Effect::Deny => {
                touch(tx, &self.runtime, id, now)?;
                Ok(CallPlan::ReplayError(denied.unwrap_or_default()))
            }
            Effect::Allow => {
                touch(tx, &self.runtime, id, now)?;
                tx.quiet();
                Ok(CallPlan::Execute)
            }
        }
    }

    /// Records a call's (or step's) result; an oversized result fails the run. Returns false when the run
    /// failed because of it. A result that fits is written without reading the entry first (on PostgreSQL,
    /// one round trip), by a statement that changes nothing when the entry is not this runtime's.
    pub fn record_result(
        &self,
        id: &str,
        seq: u64,
        result: Option<&Value>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let text = result.map(|r| serde_json::to_string(r).unwrap_or_default());
        let fits = text
            .as_ref()
            .is_none_or(|t| utf16_len(t) <= MAX_DURABLE_VALUE);
        self.write_run(id, |tx| {
            if fits {
                // The common case in one flight with BEGIN and COMMIT on PostgreSQL: nothing to read first
                // (an ephemeral call's result is dropped by the statement itself).
                tx.execute_later(
                    &format!(
                        "UPDATE cm_log SET result = CASE WHEN ephemeral <> 0 THEN NULL ELSE ?3 END, state = 'applied',
                                finished_at = ?5
                         WHERE execution_id = ?1 AND seq = ?2 AND {}",
                        of_runtime("?4")
                    ),
                    args![id, seq as i64, text, self.runtime, now],
                )?;
                touch(tx, &self.runtime, id, now)?;
                tx.quiet();
                return Ok(true);
            }
            let Some((connector, method, ephemeral)) = tx
                .query_row_opt(
                    &format!(
                        "SELECT connector, method, ephemeral FROM cm_log WHERE execution_id = ?1 AND seq = ?2 AND {}",
                        of_runtime("?3")
                    ),
                    args![id, seq as i64, self.runtime],
                    |row| Ok((row.get::<String>(0)?, row.get::<String>(1)?, row.get::<bool>(2)?)),
                )?
            else {
                return Ok(false);
            };
            if ephemeral {
                tx.execute_later(
                    "UPDATE cm_log SET result = NULL, state = 'applied', finished_at = ?3 WHERE execution_id = ?1 AND seq = ?2",
                    args![id, seq as i64, now],
                )?;
                touch(tx, &self.runtime, id, now)?;
                return Ok(true);
            }
            let size = text.as_deref().map(utf16_len).unwrap_or_default();
            let message = too_large_message(&format!("The result of {connector}.{method}"), size);
            tx.execute(
                "UPDATE cm_log SET state = 'error' WHERE execution_id = ?1 AND seq = ?2",
                args![id, seq as i64],
            )?;
            fail_in(tx, &self.runtime, id, &message, now)?;
            Ok(false)
        })
    }

    /// Records the error a connector answered a call with: the call has an outcome, so replay gives the
    /// program the same error and a rollback has nothing of it to undo. The run goes on.
    pub fn record_error(
        &self,
        id: &str,
        seq: u64,
        message: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        self.write_run(id, |tx| {
            tx.execute(
                &format!(
                    "UPDATE cm_log SET state = 'error', error = ?3, finished_at = ?5
                     WHERE execution_id = ?1 AND seq = ?2 AND state = 'executing' AND {}",
                    of_runtime("?4")
                ),
                args![id, seq as i64, cap(message), self.runtime, now],
            )?;
            touch(tx, &self.runtime, id, now)
        })
    }

    /// Records a step that ran without a decision first (nothing was recorded at `seq`): its entry, applied
    /// with its value ([`Store::record_step_values`]). A value that cannot be stored (`Err` with the message,
    /// or too large) leaves the entry in `error` and fails the run. Returns false when the run is not running
    /// or failed because of it.
    pub fn record_step(
        &self,
        id: &str,
        seq: u64,
        name: &str,
        value: Result<Option<&Value>, &str>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let text = value.map(|v| v.map(|v| serde_json::to_string(v).unwrap_or_default()));
        let message = match &text {
            Ok(text) if text.as_deref().is_none_or(fits_durably) => {
                return self.record_step_values(id, &[(seq, name, text.as_deref())], now);
            }
            Ok(text) => too_large_message(
                &format!("The result of {}.{name}", crate::STEP_CONNECTOR),
                text.as_deref().map(utf16_len).unwrap_or_default(),
            ),
            Err(message) => (*message).to_owned(),
        };
        self.write_run(id, |tx| {
            if status_of(tx, &self.runtime, id)? != Some(ExecutionStatus::Running) {
                return Ok(false);
            }
            tx.execute_later(
                "INSERT INTO cm_log
                   (execution_id, seq, connector, method, args, result, requires_approval, ephemeral, state,
                    started_at, finished_at)
                 VALUES (?1, ?2, ?3, ?4, NULL, NULL, 0, 0, 'error', ?5, ?5)",
                args![id, seq as i64, crate::STEP_CONNECTOR, name, now],
            )?;
            fail_in(tx, &self.runtime, id, &message, now)?;
            Ok(false)
        })
    }

    /// Records new steps' values that the worker told without waiting (docs/semantics.md §3.6), all in one
    /// transaction or none of them. Returns false when the run is not running, or when a value could not be
    /// stored (which fails the run, as [`Store::record_step`] does, after the steps before it).
    pub fn record_steps(&self, id: &str, steps: &[ToldStep], now: i64) -> Result<bool, StoreError> {
        let texts: Vec<Option<String>> = steps
            .iter()
            .map(|step| {
                step.value
                    .as_ref()
                    .map(|v| serde_json::to_string(v).unwrap_or_default())
            })
            .collect();
        if !texts.iter().flatten().all(|text| fits_durably(text)) {
            for step in steps {
                if !self.record_step(id, step.seq, &step.name, Ok(step.value.as_ref()), now)? {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        let values: Vec<(u64, &str, Option<&str>)> = steps
            .iter()
            .zip(&texts)
            .map(|(step, text)| (step.seq, step.name.as_str(), text.as_deref()))
            .collect();
        self.record_step_values(id, &values, now)
    }

    /// New steps' entries, applied with their values (`seq`, name, JSON that fits), in one transaction that
    /// holds the run's condition — on PostgreSQL one statement, one round trip
    /// ([`Store::record_step_values_at_once`]). False when the run is not running (then none is recorded).
    fn record_step_values(
        &self,
        id: &str,
        values: &[(u64, &str, Option<&str>)],
        now: i64,
    ) -> Result<bool, StoreError> {
        if let Some(recorded) = self.record_step_values_at_once(id, values, now)? {
            return Ok(recorded);
        }
        self.write_run(id, |tx| {
            if status_of(tx, &self.runtime, id)? != Some(ExecutionStatus::Running) {
                return Ok(false);
            }
            for (seq, name, text) in values {
                tx.execute_later(
                    "INSERT INTO cm_log
                       (execution_id, seq, connector, method, args, result, requires_approval, ephemeral, state,
                        started_at, finished_at)
                     VALUES (?1, ?2, ?3, ?4, NULL, ?5, 0, 0, 'applied', ?6, ?6)",
                    args![id, *seq as i64, crate::STEP_CONNECTOR, *name, *text, now],
                )?;
            }
            touch(tx, &self.runtime, id, now)?;
            tx.quiet();
            Ok(true)
        })
    }

    /// Fails a running run because a value at `seq` could not be recorded.
    pub fn fail_unrecordable(
        &self,
        id: &str,
        seq: u64,
        message: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        self.write_run(id, |tx| {
            tx.execute(
                &format!(
                    "UPDATE cm_log SET state = 'error'
                     WHERE execution_id = ?1 AND seq = ?2 AND state IN ('executing', 'pending') AND {}",
                    of_runtime("?3")
                ),
                args![id, seq as i64, self.runtime],
            )?;
            fail_in(tx, &self.runtime, id, message, now)
        })
    }

    /// Keeps `shown` (a [`crate::Shown`] as JSON) as what a person is shown of the call at `seq` while it
    /// waits; the decision takes it along. `false` when that call no longer waits.
    pub fn record_shown(&self, id: &str, seq: u64, shown: &str) -> Result<bool, StoreError> {
        self.write_run(id, |tx| {
            Ok(tx.execute(
                &format!(
                    "UPDATE cm_log SET shown = ?3 WHERE execution_id = ?1 AND seq = ?2 AND state = 'pending' AND {}",
                    of_runtime("?4")
                ),
                args![id, seq as i64, shown, self.runtime],
            )? == 1)
        })
    }
}

/// A recorded call, as `decide` compares it.
struct RecordedRow {
    connector: String,
    method: String,
    args: Option<Value>,
    result: Option<Value>,
    ephemeral: bool,
    state: EntryState,
    error: Option<String>,
    decision: Option<Decision>,
}

/// The status of run `id` (when it is this runtime's), the call recorded at `seq` if any, and whether the
/// run is a rerun still served the old run's calls at `seq`.
fn status_and_recorded(
    tx: &dyn Sql,
    runtime: &str,
    id: &str,
    seq: u64,
) -> Result<(
    Option<ExecutionStatus>,
    Option<RecordedRow>,
    Option<Inheriting>,
)> {
    let found = tx.query_row_opt(
        "SELECT e.status, e.forked_from, e.forked_seq, e.diverged_at,
                l.connector, l.method, l.args, l.result, l.ephemeral, l.state, l.error, l.decision
         FROM cm_executions e LEFT JOIN cm_log l ON l.execution_id = e.id AND l.seq = ?3
         WHERE e.id = ?1 AND e.runtime = ?2",
        args![id, runtime, seq as i64],
        |row| {
            let status = ExecutionStatus::parse(&row.get::<String>(0)?);
            let inheriting = Inheriting::at(seq, row.get(1)?, row.get(2)?, row.get(3)?);
            let Some(connector) = row.get::<Option<String>>(4)? else {
                return Ok((status, None, inheriting));
            };
            let state: String = row.get(9)?;
            Ok((
                status,
                Some(RecordedRow {
                    connector,
                    method: row.get(5)?,
                    args: parse_json(row.get(6)?),
                    result: parse_json(row.get(7)?),
                    ephemeral: row.get(8)?,
                    state: EntryState::parse(&state).unwrap_or(EntryState::Error),
                    error: row.get(10)?,
                    decision: parse_decision(row.get(11)?),
                }),
                inheriting,
            ))
        },
    )?;
    Ok(found.unwrap_or((None, None, None)))
}

#[allow(clippy::too_many_arguments)]
fn diverge(
    tx: &dyn Sql,
    runtime: &str,
    id: &str,
    seq: u64,
    detail: &str,
    recorded: Value,
    attempted: Value,
    now: i64,
) -> Result<()> {
    let divergence = json!({"recorded": recorded, "attempted": attempted}).to_string();
    tx.execute(
        &format!(
            "UPDATE cm_log SET state = CASE WHEN state IN ('executing', 'pending') THEN 'error' ELSE state END,
                    divergence = ?3
             WHERE execution_id = ?1 AND seq = ?2 AND {}",
            of_runtime("?4")
        ),
        args![id, seq as i64, divergence, runtime],
    )?;
    fail_in(
        tx,
        runtime,
        id,
        &format!("Codemode replay divergence at step {seq}: {detail}"),
        now,
    )
}

/// Values that cannot be recorded at all (a cycle, a throwing getter): the reference's message.
pub fn unserialisable(what: &str, reason: &str) -> String {
    not_serializable_message(what, reason)
}
