//! Reruns in the store: beginning one linked to the run it came from, serving it that run's recorded outcomes
//! for the calls before its step, and the links both ways (docs/history.md, "Rerun from a step").

use super::call_log::CallPlan;
use super::rows::parse_json;
use super::runs::{fail_in, of_runtime, touch};
use super::sql::{Sql, args};
use super::{Result, Store, StoreError};
use crate::model::EntryState;
use crate::rerun::{self, Inheritance, OldCall, Served};
use crate::rules::Verdict;
use crate::transitions::Attempt;
use serde_json::Value;

/// A rerun whose program has not yet left the old run's calls, at a call before its step.
pub(super) struct Inheriting {
    /// The run it reruns.
    pub(super) old: String,
}

impl Inheriting {
    /// From a run's `forked_from`, `forked_seq` and `diverged_at`: inheriting at `seq` while the program has
    /// kept to the old run's calls and `seq` is before the step.
    pub(super) fn at(
        seq: u64,
        forked_from: Option<String>,
        forked_seq: Option<i64>,
        diverged_at: Option<i64>,
    ) -> Option<Inheriting> {
        let old = forked_from?;
        let from = forked_seq.unwrap_or(0).max(0) as u64;
        (diverged_at.is_none() && seq < from).then_some(Inheriting { old })
    }
}

impl Store {
    /// Records a new running execution that reruns `old` from call `from`. Nothing is pruned here (the next
    /// run's start does that): the old run must still be there while the rerun's first pass is served.
    #[allow(clippy::too_many_arguments)]
    pub fn begin_rerun(
        &self,
        id: &str,
        code: &str,
        connectors: &[String],
        source: Option<&str>,
        now: i64,
        old: &str,
        from: u64,
    ) -> Result<(), StoreError> {
        let connectors = serde_json::to_string(connectors).unwrap_or_else(|_| "[]".to_owned());
        self.write(|tx| self.insert_run(tx, id, code, &connectors, source, now, Some((old, from))))
    }

    /// The runs rerun from `id`, oldest first.
    pub fn reruns_of(&self, id: &str) -> Result<Vec<String>, StoreError> {
        self.with(|connection| reruns_in(connection, &self.runtime, id))
    }

    /// A call before a rerun's step ([`Inheriting`]): served the old run's outcome when the program makes the
    /// same call, else the rerun departs from the old run here (noted on the run) and the call is recorded
    /// as a new one, under today's rules. An outcome the old run no longer holds fails the rerun: running
    /// the call would break its promise that nothing before the step runs again.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn inherit_call(
        &self,
        tx: &dyn Sql,
        id: &str,
        seq: u64,
        inheriting: &Inheriting,
        attempt: &Attempt<'_>,
        canonical: Option<&Value>,
        verdict: &Verdict,
        ephemeral: bool,
        now: i64,
    ) -> Result<CallPlan> {
        let old = old_call(tx, &self.runtime, &inheriting.old, seq)?;
        let inheritance = rerun::inherit(
            &inheriting.old,
            seq,
            old.as_ref(),
            attempt.connector,
            attempt.method,
            attempt.args,
        );
        let served = |state: &str, result: Option<&Value>, error: Option<&str>| {
            tx.execute_later(
                "INSERT INTO cm_log
                   (execution_id, seq, connector, method, args, result, requires_approval, ephemeral, state,
                    error, canonical, started_at, finished_at, inherited)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, 0, ?7, ?8, ?9, ?10, ?10, 1)",
                args![
                    id,
                    seq as i64,
                    attempt.connector,
                    attempt.method,
                    attempt.args.map(json_text),
                    result.map(json_text),
                    state,
                    error,
                    canonical.map(json_text),
                    now
                ],
            )?;
            touch(tx, &self.runtime, id, now)
        };
        match inheritance {
            Inheritance::Serve(Served::Result(result)) => {
                served(EntryState::Applied.as_str(), result.as_ref(), None)?;
                tx.quiet();
                Ok(CallPlan::Replay(result))
            }
            Inheritance::Serve(Served::Error(message)) => {
                served(EntryState::Error.as_str(), None, Some(&message))?;
                Ok(CallPlan::ReplayError(message))
            }
            // Re-executed on every pass anyway: it runs again here too, as a call of this run.
            Inheritance::Serve(Served::Reexecuted) => {
                self.record_call(tx, id, seq, attempt, canonical, verdict, ephemeral, now)
            }
            Inheritance::Depart(departure) => {
                tx.execute_later(
                    "UPDATE cm_executions SET diverged_at = ?2, diverged = ?3 WHERE id = ?1 AND diverged_at IS NULL",
                    args![id, departure.seq as i64, departure.detail],
                )?;
                self.record_call(tx, id, seq, attempt, canonical, verdict, ephemeral, now)
            }
            Inheritance::Lost(message) => {
                fail_in(tx, &self.runtime, id, &message, now)?;
                Ok(CallPlan::Pause)
            }
        }
    }
}

fn json_text(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

pub(super) fn reruns_in(connection: &dyn Sql, runtime: &str, id: &str) -> Result<Vec<String>> {
    connection.query_map(
        "SELECT id FROM cm_executions WHERE forked_from = ?1 AND runtime = ?2 ORDER BY created_at, id",
        args![id, runtime],
        |row| row.get(0),
    )
}

/// The old run's call at `seq`, if it holds one.
fn old_call(tx: &dyn Sql, runtime: &str, old: &str, seq: u64) -> Result<Option<OldCall>> {
    tx.query_row_opt(
        &format!(
            "SELECT connector, method, args, state, ephemeral, result, error, divergence IS NOT NULL
             FROM cm_log WHERE execution_id = ?1 AND seq = ?2 AND {}",
            of_runtime("?3")
        ),
        args![old, seq as i64, runtime],
        |row| {
            Ok(OldCall {
                connector: row.get(0)?,
                method: row.get(1)?,
                args: parse_json(row.get(2)?),
                state: EntryState::parse(&row.get::<String>(3)?).unwrap_or(EntryState::Error),
                ephemeral: row.get(4)?,
                result: parse_json(row.get(5)?),
                error: row.get(6)?,
                divergence: row.get(7)?,
            })
        },
    )
}
