//! Reads for the views and listings: one run, pages of runs, counts, pending and recent calls, and what a
//! replay may answer without asking.

use super::rows::{
    EXECUTION_COLUMNS, Holder, LOG_AT, execution_row, log_entry, log_from, log_of, log_sql,
    parse_json, raw, status_of,
};
use super::runs::of_runtime;
use super::sql::{DbError, Dialect, Row, args};
use super::{Store, StoreError};
use crate::model::{
    ExecutionPage, ExecutionQuery, ExecutionState, ExecutionStatus, ExecutionSummary,
    PendingAction, WaitingCall,
};
use crate::protocol::ReplayEntry;
use serde_json::Value;

/// One call of a recent run, as [`Store::recent_calls`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecentCallRow {
    pub execution_id: String,
    pub status: ExecutionStatus,
    pub source: Option<String>,
    /// When its run last changed (epoch ms).
    pub at: i64,
    pub connector: String,
    pub method: String,
    /// The arguments as rules read them: the connector's canonical form where it differs from what was sent.
    pub args: Option<Value>,
    /// The call waits for a decision.
    pub pending: bool,
}

impl Store {
    pub fn status(&self, id: &str) -> Result<Option<ExecutionStatus>, StoreError> {
        self.with(|connection| status_of(connection, &self.runtime, id))
    }

    /// How many executions of this runtime are in each status.
    pub fn status_counts(&self) -> Result<Vec<(ExecutionStatus, u64)>, StoreError> {
        self.with(|connection| {
            let rows = connection.query_map(
                "SELECT status, count(*) FROM cm_executions WHERE runtime = ?1 GROUP BY status",
                args![self.runtime],
                |row| Ok((row.get::<String>(0)?, row.get::<i64>(1)?)),
            )?;
            let mut counts = Vec::new();
            for row in rows {
                let (status, count) = row;
                if let Some(status) = ExecutionStatus::parse(&status) {
                    counts.push((status, count as u64));
                }
            }
            Ok(counts)
        })
    }

    /// One execution with its log, if it belongs to this runtime.
    pub fn execution(&self, id: &str) -> Result<Option<ExecutionState>, StoreError> {
        self.with(|connection| {
            let execution = connection.query_row_opt(
                &format!("{EXECUTION_COLUMNS} WHERE e.id = ?1 AND e.runtime = ?2"),
                args![id, self.runtime],
                |row| execution_row(self, row),
            )?;
            let Some(mut execution) = execution else {
                return Ok(None);
            };
            execution.log = log_of(connection, &self.runtime, id)?;
            execution.reruns = super::reruns::reruns_in(connection, &self.runtime, id)?;
            Ok(Some(execution))
        })
    }

    /// A run's call log alone, in one statement (empty when this runtime has no such run): what an outcome
    /// carries, without reading the run again.
    pub fn call_log(&self, id: &str) -> Result<Vec<crate::model::ToolLogEntry>, StoreError> {
        self.with(|connection| log_of(connection, &self.runtime, id))
    }

    /// One execution's head, with its call log once it has settled — neither running nor waiting for the host
    /// a decision was handed to — when `with_log`: what an approver waiting on another host reads at each
    /// change, one flight on PostgreSQL (docs/shared-store.md, "Approving another host's run").
    pub fn execution_if_settled(
        &self,
        id: &str,
        with_log: bool,
    ) -> Result<Option<ExecutionState>, StoreError> {
        self.with(|connection| {
            let head_sql = format!("{EXECUTION_COLUMNS} WHERE e.id = ?1 AND e.runtime = ?2");
            let log_sql = log_sql("AND r.status <> 'running' AND r.handed IS NULL");
            let params = args![id, self.runtime];
            let mut queries = vec![(head_sql.as_str(), params)];
            if with_log {
                queries.push((log_sql.as_str(), params));
            }
            let mut read = connection.query_together(&queries)?.into_iter();
            let Some(head) = read
                .next()
                .unwrap_or_default()
                .first()
                .map(|row| execution_row(self, row))
                .transpose()?
            else {
                return Ok(None);
            };
            let mut execution = head;
            execution.log = log_from(connection, id, &read.next().unwrap_or_default())?;
            Ok(Some(execution))
        })
    }

    /// One execution without its log (`log` empty): what resuming needs (its code, source and connectors)
    /// without reading every recorded call, which replay reads once anyway.
    pub fn execution_head(&self, id: &str) -> Result<Option<ExecutionState>, StoreError> {
        self.with(|connection| {
            connection.query_row_opt(
                &format!("{EXECUTION_COLUMNS} WHERE e.id = ?1 AND e.runtime = ?2"),
                args![id, self.runtime],
                |row| execution_row(self, row),
            )
        })
    }

    /// Executions newest first, with their logs (reference `executions(limit)`).
    pub fn executions(&self, limit: Option<usize>) -> Result<Vec<ExecutionState>, StoreError> {
        self.executions_with_status(None, limit)
    }

    /// Executions newest first, with their logs, only those in `status` when given: the status and the limit
    /// are applied in SQL, so only the rows asked for are read.
    pub fn executions_with_status(
        &self,
        status: Option<ExecutionStatus>,
        limit: Option<usize>,
    ) -> Result<Vec<ExecutionState>, StoreError> {
        self.with(|connection| {
            let limit = limit.map_or(i64::MAX, |l| l.min(i64::MAX as usize) as i64);
            let status = status.map(ExecutionStatus::as_str);
            let mut executions = connection.query_map(
                &format!(
                    "{EXECUTION_COLUMNS} WHERE e.runtime = ?1 AND (CAST(?3 AS TEXT) IS NULL OR e.status = ?3)
                     ORDER BY e.created_at DESC, e.id DESC LIMIT ?2"
                ),
                args![self.runtime, limit, status],
                |row| execution_row(self, row),
            )?;
            for execution in &mut executions {
                execution.log = log_of(connection, &self.runtime, &execution.id)?;
            }
            Ok(executions)
        })
    }

    /// The newest `limit` calls of the newest runs (steps left out), newest run first and each run's calls
    /// newest first: what a rule under construction would have matched, read in one bounded query.
    pub fn recent_calls(&self, limit: usize) -> Result<Vec<RecentCallRow>, StoreError> {
        self.with(|connection| {
            connection.query_map(
                "SELECT e.id, e.status, e.source, e.updated_at, l.connector, l.method,
                        COALESCE(l.canonical, l.args), l.state
                 FROM cm_executions e JOIN cm_log l ON l.execution_id = e.id
                 WHERE e.runtime = ?1 AND l.connector != ?3
                 ORDER BY e.created_at DESC, e.id DESC, l.seq DESC LIMIT ?2",
                args![
                    self.runtime,
                    limit.min(i64::MAX as usize) as i64,
                    crate::STEP_CONNECTOR
                ],
                |row| {
                    Ok(RecentCallRow {
                        execution_id: row.get(0)?,
                        status: ExecutionStatus::parse(&row.get::<String>(1)?)
                            .unwrap_or(ExecutionStatus::Error),
                        source: row.get(2)?,
                        at: row.get(3)?,
                        connector: row.get(4)?,
                        method: row.get(5)?,
                        args: parse_json(row.get(6)?),
                        pending: row.get::<String>(7)? == "pending",
                    })
                },
            )
        })
    }

    /// Every paused execution with its whole log, newest first, read in one query: what the approval queue
    /// shows for each pending call (the program and the calls before it).
    pub fn paused_executions(&self) -> Result<Vec<ExecutionState>, StoreError> {
        self.with(|connection| {
            let rows = connection.query(
                "SELECT e.id, e.code, e.status, e.result, e.error, e.logs, e.connectors, e.source, e.created_at,
                        e.updated_at, e.owner_pid, e.owner_started, e.owner_host, oh.heartbeat_at, oh.machine,
                        oh.name, e.handed, e.forked_from, e.forked_seq, e.diverged_at, e.diverged,
                        l.seq, l.connector, l.method, l.args, l.result, l.requires_approval, l.ephemeral, l.state,
                        l.decided_by, l.decided_at, l.interrupted, l.divergence, l.error, l.decision, l.canonical,
                        l.asked_by, l.confirm_in_app, l.ask_in_client, l.decide_within, l.decide_by, l.quorum,
                        l.asked_at, l.started_at, l.finished_at, l.inherited
                 FROM cm_executions e LEFT JOIN cm_hosts oh ON oh.id = e.owner_host
                      LEFT JOIN cm_log l ON l.execution_id = e.id
                 WHERE e.runtime = ?1 AND e.status = 'paused'
                 ORDER BY e.created_at DESC, e.id DESC, l.seq ASC",
                args![self.runtime],
            )?;
            let mut executions: Vec<ExecutionState> = Vec::new();
            for row in &rows {
                let id: String = row.get(0)?;
                if executions.last().is_none_or(|e| e.id != id) {
                    executions.push(execution_row(self, row)?);
                }
                // The LEFT JOIN gives one row of NULLs for a run without calls.
                if row.get::<Option<i64>>(LOG_AT)?.is_some()
                    && let Some(execution) = executions.last_mut()
                {
                    execution.log.push(log_entry(row, LOG_AT)?);
                }
            }
            for execution in &mut executions {
                super::quorum::fill_approvals(connection, &execution.id, &mut execution.log)?;
            }
            Ok(executions)
        })
    }

    /// A page of execution summaries, newest first, filtered by status and text.
    pub fn list_executions(&self, query: &ExecutionQuery) -> Result<ExecutionPage, StoreError> {
        const PREVIEW: i64 = 200;
        let limit = query.limit.unwrap_or(100).clamp(1, 1000);
        let pattern = query.text.as_deref().filter(|t| !t.is_empty()).map(|text| {
            let escaped = text
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            format!("%{escaped}%")
        });
        self.with(|connection| {
            // SQLite's LIKE ignores ASCII case; PostgreSQL's ILIKE does that.
            let like = match connection.dialect() {
                Dialect::Sqlite => "LIKE",
                Dialect::Postgres => "ILIKE",
            };
            let status = query.status.map(ExecutionStatus::as_str);
            // Globs: SQLite's GLOB is `*` and `?` already; on PostgreSQL they become LIKE's `%` and `_`.
            let (matches, call, source) = match connection.dialect() {
                Dialect::Sqlite => ("GLOB", query.call.clone(), query.source.clone()),
                Dialect::Postgres => (
                    "LIKE",
                    query.call.as_deref().map(glob_to_like),
                    query.source.as_deref().map(glob_to_like),
                ),
            };
            let person = match connection.dialect() {
                Dialect::Sqlite => "json_extract(l.decision, '$.person')",
                Dialect::Postgres => "(CAST(l.decision AS jsonb) ->> 'person')",
            };
            let mut executions = connection.query_map(
                &format!("SELECT e.id, e.status, e.created_at, e.updated_at, e.source,
                        e.owner_pid, e.owner_started, e.owner_host, oh.heartbeat_at, oh.machine, oh.name,
                        substr(e.error, 1, ?6), substr(e.result, 1, ?6),
                        (SELECT count(*) FROM cm_log l WHERE l.execution_id = e.id),
                        (SELECT l.connector || '.' || l.method FROM cm_log l
                          WHERE e.status = 'paused' AND l.execution_id = e.id AND l.state = 'pending'
                          ORDER BY l.seq LIMIT 1)
                 FROM cm_executions e LEFT JOIN cm_hosts oh ON oh.id = e.owner_host
                 WHERE e.runtime = ?1
                   AND (CAST(?2 AS TEXT) IS NULL OR e.status = ?2)
                   AND (CAST(?3 AS TEXT) IS NULL OR (e.created_at, e.id) <
                        (SELECT c.created_at, c.id FROM cm_executions c WHERE c.id = ?3 AND c.runtime = ?1))
                   AND (CAST(?4 AS TEXT) IS NULL OR e.id {like} ?4 ESCAPE '\\' OR e.code {like} ?4 ESCAPE '\\'
                        OR e.error {like} ?4 ESCAPE '\\'
                        OR EXISTS (SELECT 1 FROM cm_log l WHERE l.execution_id = e.id
                                   AND l.connector || '.' || l.method {like} ?4 ESCAPE '\\'))
                   AND (CAST(?7 AS BIGINT) IS NULL OR e.created_at >= ?7)
                   AND (CAST(?8 AS BIGINT) IS NULL OR e.created_at < ?8)
                   AND (CAST(?9 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM cm_log l WHERE l.execution_id = e.id
                        AND l.connector || '.' || l.method {matches} ?9))
                   AND (CAST(?10 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM cm_log l WHERE l.execution_id = e.id
                        AND (l.decided_by = ?10 OR {person} = ?10)))
                   AND (CAST(?11 AS TEXT) IS NULL OR e.source {matches} ?11)
                 ORDER BY e.created_at DESC, e.id DESC
                 LIMIT ?5"),
                args![
                    self.runtime,
                    status,
                    query.before,
                    pattern,
                    limit as i64 + 1,
                    PREVIEW,
                    query.since,
                    query.until,
                    call,
                    query.decided_by,
                    source
                ],
                |row| {
                    let status: String = row.get(1)?;
                    let status = ExecutionStatus::parse(&status).unwrap_or(ExecutionStatus::Error);
                    let owner = Holder::read(row, 5)?;
                    Ok(ExecutionSummary {
                        id: row.get(0)?,
                        status,
                        created_at: row.get(2)?,
                        updated_at: row.get(3)?,
                        source: row.get(4)?,
                        interrupted: status == ExecutionStatus::Running && !self.holder_alive(&owner),
                        host: self.run_host(&owner, row.get(10)?),
                        error: row.get(11)?,
                        result_preview: row.get(12)?,
                        calls: row.get::<i64>(13)? as u64,
                        pending: row.get(14)?,
                    })
                },
            )?;
            let next = if executions.len() > limit {
                executions.truncate(limit);
                executions.last().map(|e| e.id.clone())
            } else {
                None
            };
            Ok(ExecutionPage { executions, next })
        })
    }

    /// Pending calls of paused runs, newest run first (docs/semantics.md §2.6).
    pub fn pending(&self, id: Option<&str>) -> Result<Vec<PendingAction>, StoreError> {
        Ok(self
            .waiting_calls(id)?
            .into_iter()
            .map(|waiting| waiting.action)
            .collect())
    }

    /// [`Store::pending`], each call with its run's source and times: what a rule reads of a waiting call, and
    /// what the approval queue lists (no run's code or log is read: docs/performance.md, "Lean reads"). It
    /// starts from the waiting rows (`cm_log_waiting`, a partial index; `CROSS JOIN` keeps SQLite from starting
    /// at the runs and walking each one's log instead).
    pub fn waiting_calls(&self, id: Option<&str>) -> Result<Vec<WaitingCall>, StoreError> {
        self.with(|connection| {
            let sql = "SELECT l.execution_id, l.seq, l.connector, l.method, l.args, l.interrupted, l.canonical,
                        l.asked_by, l.confirm_in_app, e.source, e.created_at, e.updated_at,
                        l.ask_in_client, l.decide_within, l.decide_by, l.quorum
                 FROM cm_log l CROSS JOIN cm_executions e
                 WHERE e.id = l.execution_id AND e.runtime = ?1 AND e.status = 'paused' AND l.state = 'pending'
                   AND (CAST(?2 AS TEXT) IS NULL OR e.id = ?2)
                 ORDER BY e.created_at DESC, e.id DESC, l.seq ASC";
            let mut waiting = connection.query_map(sql, args![self.runtime, id], |row| {
                let args = parse_json(row.get::<Option<String>>(4)?);
                let action = PendingAction {
                    execution_id: row.get(0)?,
                    seq: row.get::<i64>(1)? as u64,
                    connector: row.get(2)?,
                    method: row.get(3)?,
                    digest: crate::model::args_digest(args.as_ref()),
                    args,
                    canonical: parse_json(row.get::<Option<String>>(6)?),
                    interrupted: row.get(5)?,
                    asked_by: row.get(7)?,
                    confirm_in_app: row.get(8)?,
                    ask_in_client: row.get(12)?,
                    decide_within: row.get(13)?,
                    decide_by: row.get(14)?,
                    quorum: row
                        .get::<Option<i64>>(15)?
                        .and_then(|n| u32::try_from(n).ok()),
                    approvals: Vec::new(),
                };
                Ok(WaitingCall {
                    action,
                    source: row.get(9)?,
                    created_at: row.get(10)?,
                    updated_at: row.get(11)?,
                })
            })?;
            for call in waiting.iter_mut().filter(|w| w.action.quorum.is_some()) {
                let action = &mut call.action;
                action.approvals = super::quorum::approvals_of(
                    connection,
                    &action.execution_id,
                    action.seq,
                    &action.digest,
                )?;
            }
            Ok(waiting)
        })
    }

    /// The entries a pass may answer without asking the host (applied, not ephemeral), and one past the
    /// highest seq recorded in any state (for a rerun still served the old run's calls, at least its step).
    pub fn replay_log(&self, id: &str) -> Result<ReplayLog, StoreError> {
        self.with(|connection| {
            replay_log_of(&connection.query(&replay_log_sql(), args![id, self.runtime])?)
        })
    }
}

/// What a pass replays from: the entries it may answer without asking the host, and the seq past the log.
pub type ReplayLog = (Vec<ReplayEntry>, u64);

/// The query of [`Store::replay_log`] (`?1` the run, `?2` its runtime): one statement, so one round trip
/// on PostgreSQL — the bounds in a row of their own, joined with the entries (none when nothing is applied).
pub(super) fn replay_log_sql() -> String {
    format!(
        "SELECT b.end_seq, b.inheriting_until, l.seq, l.connector, l.method, l.args, l.result
         FROM (SELECT (SELECT coalesce(max(seq) + 1, 0) FROM cm_log
                       WHERE execution_id = ?1 AND {runtime}) AS end_seq,
                      (SELECT forked_seq FROM cm_executions
                       WHERE id = ?1 AND diverged_at IS NULL) AS inheriting_until) b
         LEFT JOIN cm_log l ON l.execution_id = ?1 AND l.state = 'applied' AND l.ephemeral = 0
                               AND {runtime}
         ORDER BY l.seq",
        runtime = of_runtime("?2")
    )
}

/// The replay log from the rows of [`replay_log_sql`].
pub(super) fn replay_log_of(rows: &[Row]) -> Result<ReplayLog, DbError> {
    let rows = rows
        .iter()
        .map(|row| {
            let bounds: (i64, Option<i64>) = (row.get(0)?, row.get(1)?);
            let entry = match row.get::<Option<i64>>(2)? {
                Some(seq) => Some(ReplayEntry {
                    seq: seq as u64,
                    connector: row.get(3)?,
                    method: row.get(4)?,
                    args: raw(row.get::<Option<String>>(5)?),
                    result: raw(row.get::<Option<String>>(6)?),
                }),
                None => None,
            };
            Ok((bounds, entry))
        })
        .collect::<Result<Vec<_>, DbError>>()?;
    // A rerun still served the old run's calls asks for everything before its step, steps included.
    let (end, inheriting_until) = rows.first().map(|(bounds, _)| *bounds).unwrap_or((0, None));
    let end = end.max(inheriting_until.unwrap_or(0));
    let entries = rows.into_iter().filter_map(|(_, entry)| entry).collect();
    Ok((entries, end.max(0) as u64))
}

/// A glob (`*` any run of characters, `?` one) as a LIKE pattern, escaped with a backslash.
fn glob_to_like(glob: &str) -> String {
    let mut like = String::with_capacity(glob.len());
    for c in glob.chars() {
        match c {
            '*' => like.push('%'),
            '?' => like.push('_'),
            '%' | '_' | '\\' => {
                like.push('\\');
                like.push(c);
            }
            _ => like.push(c),
        }
    }
    like
}

impl Store {
    /// Every call of runs begun since `since` (epoch ms), as insights read it: what was asked, decided and
    /// when (docs/history.md, "Insights").
    pub fn call_facts(
        &self,
        since: Option<i64>,
    ) -> Result<Vec<crate::insights::CallFact>, StoreError> {
        self.with(|connection| {
            connection.query_map(
                "SELECT l.connector, l.method, coalesce(l.canonical, l.args), l.requires_approval, l.decision,
                        l.asked_at
                 FROM cm_log l JOIN cm_executions e ON e.id = l.execution_id
                 WHERE e.runtime = ?1 AND (CAST(?2 AS BIGINT) IS NULL OR e.created_at >= ?2) AND l.inherited = 0",
                args![self.runtime, since],
                |row| {
                    Ok(crate::insights::CallFact {
                        connector: row.get(0)?,
                        method: row.get(1)?,
                        args: parse_json(row.get::<Option<String>>(2)?),
                        requires_approval: row.get(3)?,
                        decision: super::rows::parse_decision(row.get(4)?),
                        asked_at: row.get(5)?,
                    })
                },
            )
        })
    }
}
