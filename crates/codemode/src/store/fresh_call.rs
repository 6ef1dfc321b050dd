//! A new call's entry in the call log: its columns as every path writes them, and on PostgreSQL the common
//! cases — a call the rules allow, past everything recorded, and a step's value — decided and recorded by
//! one statement whose conditions are in its SQL, so it travels with BEGIN and COMMIT in one round trip
//! (docs/shared-store.md, "Fewer round trips").

use super::Store;
use super::call_log::CallPlan;
use super::postgres::{Lock, Postgres};
use super::sql::{Param, args};
use super::transactions::{Database, advisory_key, off_async_workers};
use super::{Result, StoreError};
use crate::model::{Actor, Decision, DecisionKind};
use crate::rules::{Effect, Verdict};
use crate::transitions::Attempt;
use serde_json::Value;

/// The columns of a new entry, in the order of [`ENTRY_VALUES`].
pub(super) const ENTRY_COLUMNS: &str = "(execution_id, seq, connector, method, args, result, requires_approval,
    ephemeral, state, error, decision, decided_by, decided_at, interrupted, divergence, reverted_at, shown,
    canonical, asked_by, confirm_in_app, ask_in_client, decide_within, decide_by, quorum, asked_at, started_at,
    finished_at)";

/// A new entry's values: [`NewEntry::params`] as `?1`…`?22`.
pub(super) const ENTRY_VALUES: &str =
    "?1, ?2, ?3, ?4, ?5, NULL, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0, NULL, NULL, NULL,
    ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22";

/// What a new entry holds, as its verdict says: `pending` when a person must decide, `executing` when it may
/// run, `error` with the rule's message when a rule denies it; a rule's verdict is its decision.
pub(super) struct NewEntry<'a> {
    id: &'a str,
    seq: i64,
    connector: &'a str,
    method: &'a str,
    args: Option<String>,
    asks: bool,
    ephemeral: bool,
    state: &'static str,
    pub(super) error: Option<String>,
    decision: Option<String>,
    decided_by: Option<&'static str>,
    decided_at: Option<i64>,
    canonical: Option<String>,
    asked_by: Option<&'a str>,
    confirm_in_app: bool,
    ask_in_client: bool,
    decide_within: Option<i64>,
    decide_by: Option<i64>,
    quorum: Option<i64>,
    asked_at: Option<i64>,
    started_at: Option<i64>,
    finished_at: Option<i64>,
}

impl<'a> NewEntry<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        id: &'a str,
        seq: u64,
        attempt: &Attempt<'a>,
        args: Option<String>,
        canonical: Option<&Value>,
        verdict: &'a Verdict,
        ephemeral: bool,
        now: i64,
    ) -> NewEntry<'a> {
        let (connector, method) = (attempt.connector, attempt.method);
        let decision = verdict.rule.as_ref().and_then(|rule| {
            let kind = match verdict.effect {
                Effect::Allow => DecisionKind::Allowed,
                Effect::Deny => DecisionKind::Denied,
                Effect::Ask => return None,
            };
            Some(Decision {
                reason: verdict.reason.clone(),
                rule: Some(rule.clone()),
                ..Decision::plain(kind, Actor::Rule, now)
            })
        });
        let asks = verdict.effect == Effect::Ask;
        let decide_within = verdict.decide_within_ms.filter(|_| asks);
        NewEntry {
            id,
            seq: seq as i64,
            connector,
            method,
            args,
            asks,
            ephemeral,
            state: match verdict.effect {
                Effect::Ask => "pending",
                Effect::Allow => "executing",
                Effect::Deny => "error",
            },
            error: (verdict.effect == Effect::Deny).then(|| {
                crate::rules::denied_message(
                    connector,
                    method,
                    verdict.rule.as_deref().unwrap_or_default(),
                    verdict.reason.as_deref(),
                )
            }),
            decided_by: decision.as_ref().map(|_| Actor::Rule.as_str()),
            decided_at: decision.as_ref().map(|_| now),
            decision: decision.map(|d| serde_json::to_string(&d).unwrap_or_default()),
            canonical: canonical.map(|c| serde_json::to_string(c).unwrap_or_default()),
            asked_by: verdict.rule.as_deref().filter(|_| asks),
            confirm_in_app: verdict.confirm_in_app,
            ask_in_client: asks && verdict.ask_in_client,
            decide_within,
            decide_by: decide_within.map(|ms| now.saturating_add(ms)),
            quorum: verdict.quorum.filter(|_| asks).map(i64::from),
            asked_at: asks.then_some(now),
            started_at: (verdict.effect == Effect::Allow).then_some(now),
            finished_at: (verdict.effect == Effect::Deny).then_some(now),
        }
    }

    /// `?1`…`?22` of [`ENTRY_VALUES`].
    pub(super) fn params(&self) -> Vec<Param<'_>> {
        args![
            self.id,
            self.seq,
            self.connector,
            self.method,
            self.args,
            self.asks,
            self.ephemeral,
            self.state,
            self.error,
            self.decision,
            self.decided_by,
            self.decided_at,
            self.canonical,
            self.asked_by,
            self.confirm_in_app,
            self.ask_in_client,
            self.decide_within,
            self.decide_by,
            self.quorum,
            self.asked_at,
            self.started_at,
            self.finished_at,
        ]
        .to_vec()
    }
}

impl Store {
    /// On PostgreSQL, a call the rules allow with nothing recorded at `seq` (past the log, as every fresh
    /// call is): its entry, its rule's hit and the run's touch by one statement, in one round trip. `None`
    /// when the statement's conditions did not hold — the run is not running here, something is recorded at
    /// `seq`, a rerun inherits it — and always on SQLite (nothing to save there): then [`Store::decide`]
    /// reads and decides as it always does.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_allowed_at_once(
        &self,
        id: &str,
        seq: u64,
        attempt: &Attempt<'_>,
        canonical: Option<&Value>,
        verdict: &Verdict,
        ephemeral: bool,
        now: i64,
    ) -> Result<Option<CallPlan>, StoreError> {
        let Database::Postgres(postgres) = &self.database else {
            return Ok(None);
        };
        if verdict.effect != Effect::Allow {
            return Ok(None);
        }
        let args = attempt
            .args
            .map(|a| serde_json::to_string(a).unwrap_or_default());
        if args
            .as_deref()
            .is_some_and(|text| crate::codec::utf16_len(text) > crate::codec::MAX_DURABLE_VALUE)
        {
            // Too large to record: the usual path fails the run with the reason.
            return Ok(None);
        }
        let entry = NewEntry::new(id, seq, attempt, args, canonical, verdict, ephemeral, now);
        let mut params = entry.params();
        params.extend_from_slice(args![self.runtime, verdict.rule]);
        let sql = format!(
            "WITH run AS (
               SELECT 1 FROM cm_executions e
                WHERE e.id = ?1 AND e.runtime = ?23 AND e.status = 'running'
                  AND (e.forked_from IS NULL OR e.diverged_at IS NOT NULL OR ?2 >= COALESCE(e.forked_seq, 0))
                  AND NOT EXISTS (SELECT 1 FROM cm_log l WHERE l.execution_id = ?1 AND l.seq = ?2)
                  -- The call before, whose outcome was sent ahead in this flight, is on record.
                  AND NOT EXISTS (SELECT 1 FROM cm_log l
                                   WHERE l.execution_id = ?1 AND l.seq = ?2 - 1 AND l.state = 'executing')),
             recorded AS (INSERT INTO cm_log {ENTRY_COLUMNS} SELECT {ENTRY_VALUES} FROM run RETURNING 1),
             hit AS (UPDATE cm_rules SET hits = hits + 1, last_hit = ?21
                      WHERE runtime = ?23 AND id = ?24 AND EXISTS (SELECT 1 FROM recorded))
             UPDATE cm_executions SET updated_at = ?21
              WHERE id = ?1 AND runtime = ?23 AND EXISTS (SELECT 1 FROM recorded)"
        );
        let changed = self.commit_progress(postgres, id, &sql, &params)?;
        Ok((changed == 1).then_some(CallPlan::Execute))
    }

    /// On PostgreSQL, the approved call a resumed pass reached at `seq` as it was recorded (same connector,
    /// method and arguments, still `pending`, its run running): marked executing by one statement, in one
    /// round trip, returning the decision (edited arguments run instead). `None` when the statement's
    /// conditions did not hold, and always on SQLite: then [`Store::decide`] reads and decides as it always
    /// does — a divergence, a stopped run or a rerun's inheritance is its to say (docs/shared-store.md,
    /// "Fewer round trips").
    pub fn execute_approved_at_once(
        &self,
        id: &str,
        seq: u64,
        connector: &str,
        method: &str,
        args: Option<&Value>,
        now: i64,
    ) -> Result<Option<CallPlan>, StoreError> {
        let Database::Postgres(postgres) = &self.database else {
            return Ok(None);
        };
        // The text the entry was recorded with (`record_call`): equal text is an equal call, and a call
        // written otherwise only misses this path.
        let args = args.map(|a| serde_json::to_string(a).unwrap_or_default());
        let sql = "WITH approved AS (
               UPDATE cm_log l SET state = 'executing', started_at = ?6
                WHERE l.execution_id = ?1 AND l.seq = ?2 AND l.state = 'pending'
                  AND l.connector = ?3 AND l.method = ?4 AND l.args IS NOT DISTINCT FROM ?5
                  AND EXISTS (SELECT 1 FROM cm_executions e
                               WHERE e.id = ?1 AND e.runtime = ?7 AND e.status = 'running')
                  -- The call before, whose outcome may have been sent ahead in this flight, is on record.
                  AND NOT EXISTS (SELECT 1 FROM cm_log b
                                   WHERE b.execution_id = ?1 AND b.seq = ?2 - 1 AND b.state = 'executing')
               RETURNING l.decision),
             touched AS (UPDATE cm_executions SET updated_at = ?6
                          WHERE id = ?1 AND runtime = ?7 AND EXISTS (SELECT 1 FROM approved))
             SELECT decision FROM approved";
        let seq = seq as i64;
        let params = args![id, seq, connector, method, args, now, self.runtime];
        let locks = self.run_locks(id);
        let rows = off_async_workers(|| {
            postgres.commit_query_after(id, &locks, &self.runtime, true, sql, params)
        })?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        Ok(Some(
            match super::rows::parse_decision(row.get::<Option<String>>(0)?) {
                Some(Decision {
                    kind: DecisionKind::Edited,
                    args: Some(edited),
                    ..
                }) => CallPlan::ExecuteEdited(edited),
                _ => CallPlan::Execute,
            },
        ))
    }

    /// On PostgreSQL, new steps' values (`seq`, name, JSON) recorded by one statement that holds the run's
    /// condition: `Some(true)` when all were recorded, `Some(false)` when the run is not running (then none
    /// is). The values travel as one JSON parameter, so the statement is the same for any number of steps.
    /// `None` on SQLite, where [`Store::record_step_values`] reads and writes as it always does.
    pub(super) fn record_step_values_at_once(
        &self,
        id: &str,
        values: &[(u64, &str, Option<&str>)],
        now: i64,
    ) -> Result<Option<bool>, StoreError> {
        let Database::Postgres(postgres) = &self.database else {
            return Ok(None);
        };
        // PostgreSQL's text cannot hold NUL: a name with one is written as the parameters are (flights.rs).
        let rows: Vec<Value> = values
            .iter()
            .map(|(seq, name, text)| {
                serde_json::json!({
                    "seq": seq,
                    "name": name.replace('\0', "\u{FFFD}"),
                    "result": text,
                })
            })
            .collect();
        let rows = Value::Array(rows).to_string();
        let sql = "WITH run AS (
               SELECT 1 FROM cm_executions e WHERE e.id = ?1 AND e.runtime = ?2 AND e.status = 'running'),
             recorded AS (
               INSERT INTO cm_log
                 (execution_id, seq, connector, method, args, result, requires_approval, ephemeral, state,
                  started_at, finished_at)
               SELECT ?1, s.seq, ?3, s.name, NULL, s.result, 0, 0, 'applied', ?4, ?4
                 FROM run, json_to_recordset(CAST(?5 AS TEXT)::json) AS s(seq BIGINT, name TEXT, result TEXT)
               RETURNING 1)
             UPDATE cm_executions SET updated_at = ?4
              WHERE id = ?1 AND runtime = ?2 AND EXISTS (SELECT 1 FROM recorded)";
        let params = args![id, self.runtime, crate::STEP_CONNECTOR, now, rows];
        let changed = self.commit_progress(postgres, id, sql, params)?;
        Ok(Some(changed == 1))
    }

    /// On PostgreSQL, a call's outcome — its result, or the error its connector answered — sent to be
    /// committed without waiting for the answer, so the program goes on while it travels: true when sent.
    /// What it came to is read by [`Store::outcome_landed`] before anything the program does next leaves the
    /// host, or with the next record of the run, which travels in the same flight behind it
    /// (docs/shared-store.md, "A call's outcome is sent, not waited for"). False on SQLite, for a result too
    /// large to record, or when nothing could be sent: then `record_result` or `record_error` records it.
    pub fn send_outcome(
        &self,
        id: &str,
        seq: u64,
        outcome: Result<Option<&Value>, &str>,
        now: i64,
    ) -> bool {
        let Database::Postgres(postgres) = &self.database else {
            return false;
        };
        let (set, value) = match outcome {
            Ok(result) => {
                let text = result.map(|r| serde_json::to_string(r).unwrap_or_default());
                if text
                    .as_deref()
                    .is_some_and(|t| crate::codec::utf16_len(t) > crate::codec::MAX_DURABLE_VALUE)
                {
                    return false;
                }
                (
                    "result = CASE WHEN ephemeral <> 0 THEN NULL ELSE ?3 END, state = 'applied'",
                    text,
                )
            }
            Err(message) => (
                "state = 'error', error = ?3",
                Some(super::runs::cap(message)),
            ),
        };
        // As `record_result` and `record_error`, in one statement.
        let only_executing = if outcome.is_err() {
            "AND state = 'executing'"
        } else {
            ""
        };
        let sql = format!(
            "WITH outcome AS (
               UPDATE cm_log SET {set}, finished_at = ?5
                WHERE execution_id = ?1 AND seq = ?2 {only_executing} AND {}
               RETURNING 1)
             UPDATE cm_executions SET updated_at = ?5 WHERE id = ?1 AND runtime = ?4",
            super::runs::of_runtime("?4")
        );
        let seq = seq as i64;
        let params = args![id, seq, value, self.runtime, now];
        let locks = self.run_locks(id);
        off_async_workers(|| postgres.send_one(id, &locks, &self.runtime, true, &sql, params))
            .is_ok()
    }

    /// What the outcome [`Store::send_outcome`] sent for run `id` came to: an error when it could not be
    /// recorded (the call is then in doubt). Nothing sent is nothing to say.
    pub fn outcome_landed(&self, id: &str) -> Result<(), StoreError> {
        let Database::Postgres(postgres) = &self.database else {
            return Ok(());
        };
        match off_async_workers(|| postgres.landed(id)) {
            Some(Err(error)) => Err(error.into()),
            Some(Ok(_)) | None => Ok(()),
        }
    }

    /// Whether the outcome sent ahead for run `id` did not land, and the host has not read so yet: then
    /// nothing more is recorded for the run (its pass stops with that call in doubt).
    pub(super) fn outcome_failed(&self, id: &str) -> bool {
        match &self.database {
            Database::Postgres(postgres) => off_async_workers(|| postgres.failed_to_land(id)),
            Database::Sqlite(_) => false,
        }
    }

    /// The locks a write of run `id` holds: the runtime's shared, and the run's own.
    pub(super) fn run_locks(&self, id: &str) -> [Lock; 2] {
        [
            Lock::Shared(self.write_lock),
            Lock::Exclusive(advisory_key("codemode run", id)),
        ]
    }

    /// One statement that records a running run's progress, in a transaction of its own under the run's lock
    /// and with the runtime's shared, sent with BEGIN and COMMIT in one flight — behind the outcome sent for
    /// the run, when one is in the air; quiet, as every such record (docs/shared-store.md, "Live updates").
    /// How many rows its last part changed.
    fn commit_progress(
        &self,
        postgres: &Postgres,
        id: &str,
        sql: &str,
        params: &[Param<'_>],
    ) -> Result<u64, StoreError> {
        let locks = self.run_locks(id);
        Ok(off_async_workers(|| {
            postgres.commit_one_after(id, &locks, &self.runtime, true, sql, params)
        })?)
    }
}
