//! A run's own row from its beginning to its end, and the small updates every transition of a run shares.

use super::retention::{Retention, prune};
use super::rows::{LOG_COLUMNS, log_entry, log_of};
use super::sql::{Sql, args};
use super::transactions::{Database, off_async_workers};
use super::{Result, Store, StoreError};
use crate::codec::{MAX_DURABLE_VALUE, too_large_message, utf16_len};
use crate::model::ToolLogEntry;
use serde_json::Value;

impl Store {
    /// Inserts a new running execution, then prunes terminal ones beyond the newest `retention.keep`
    /// (docs/semantics.md §6), never one holding a record that `retention` still keeps. On a shared store
    /// whose server keeps deleting runs to admins, a host of another role only inserts (docs/shared-store.md,
    /// "People and permissions"); one that learns so from a refusal begins the run again without pruning.
    pub fn begin(
        &self,
        id: &str,
        code: &str,
        connectors: &[String],
        source: Option<&str>,
        now: i64,
        retention: Retention,
    ) -> Result<Vec<String>, StoreError> {
        let connectors = serde_json::to_string(connectors).unwrap_or_else(|_| "[]".to_owned());
        let begin = |pruning: bool| {
            self.write(|tx| {
                self.insert_run(tx, id, code, &connectors, source, now, None)?;
                if !pruning {
                    return Ok(Vec::new());
                }
                prune(
                    self,
                    tx,
                    retention,
                    now,
                    Some(id),
                    Some(super::retention::PRUNE_SLICE),
                )
            })
        };
        let pruning = self.may_delete_runs();
        match begin(pruning) {
            Err(error) if pruning && error.is_permission_denied() => {
                self.may_delete_runs
                    .store(false, std::sync::atomic::Ordering::SeqCst);
                begin(false)
            }
            begun => begun,
        }
    }

    /// A new running run's row, this process its owner; a rerun's names the run and call it reruns from.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn insert_run(
        &self,
        tx: &dyn Sql,
        id: &str,
        code: &str,
        connectors: &str,
        source: Option<&str>,
        now: i64,
        forked_from: Option<(&str, u64)>,
    ) -> Result<()> {
        // Sent with what follows (the prune's first read, or COMMIT): one round trip less on PostgreSQL.
        tx.execute_later(
            "INSERT INTO cm_executions
               (id, runtime, code, status, connectors, source, created_at, updated_at, owner_pid, owner_started,
                owner_host, forked_from, forked_seq)
             VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?6, ?7, ?8, ?9, ?10, ?11)",
            args![
                id,
                self.runtime,
                code,
                connectors,
                source,
                now,
                self.owner.pid,
                self.owner.started as i64,
                self.host_id(),
                forked_from.map(|(old, _)| old),
                forked_from.map(|(_, seq)| seq as i64)
            ],
        )?;
        Ok(())
    }

    /// Completes a running run with its (raw) result and console lines, and returns its call log as the
    /// outcome shows it (empty without reading it when the caller knows there is none: `read_log` false);
    /// `None` when the run was no longer running (nothing changed).
    ///
    /// `behind` is the seq of a call whose outcome this thread sent and has not read yet
    /// ([`Store::send_outcome`]): on PostgreSQL the completion goes in the same flight behind it, and
    /// commits only if that outcome did (docs/shared-store.md, "A call's outcome is sent, not waited for");
    /// the caller then reads what the outcome came to ([`Store::outcome_landed`]).
    pub fn complete(
        &self,
        id: &str,
        result: Option<&Value>,
        logs: &[String],
        now: i64,
        read_log: bool,
        behind: Option<u64>,
    ) -> Result<Option<Vec<ToolLogEntry>>, StoreError> {
        let result_text = result.map(|r| {
            let text = serde_json::to_string(r).unwrap_or_default();
            let size = utf16_len(&text);
            if size > MAX_DURABLE_VALUE {
                let message = too_large_message("The final result", size);
                Value::String(format!(
                    "[codemode: result omitted from the audit trail — {message}]"
                ))
                .to_string()
            } else {
                text
            }
        });
        let logs_text = logs_for_storage(logs);
        if let Some(log) = self.complete_at_once(
            id,
            result_text.as_deref(),
            logs_text.as_deref(),
            now,
            read_log,
            behind,
        )? {
            return Ok(log);
        }
        self.write_run(id, |tx| {
            let changed = tx.execute(
                "UPDATE cm_executions SET status = 'completed', result = ?2, logs = ?3, updated_at = ?4
                 WHERE id = ?1 AND runtime = ?5 AND status = 'running'",
                args![id, result_text, logs_text, now, self.runtime],
            )?;
            if changed == 0 {
                return Ok(None);
            }
            if !read_log {
                return Ok(Some(Vec::new()));
            }
            log_of(tx, &self.runtime, id).map(Some)
        })
    }

    /// On PostgreSQL, [`Store::complete`] in one round trip, behind the outcome parked under the run when
    /// one is (docs/shared-store.md, "Fewer round trips"): the run's update (and the read of its log when
    /// `read_log`) is one statement, sent with BEGIN, the locks and COMMIT. `None` on SQLite, where
    /// `complete` does it as two statements.
    fn complete_at_once(
        &self,
        id: &str,
        result: Option<&str>,
        logs: Option<&str>,
        now: i64,
        read_log: bool,
        behind: Option<u64>,
    ) -> Result<Option<Option<Vec<ToolLogEntry>>>, StoreError> {
        let Database::Postgres(postgres) = &self.database else {
            return Ok(None);
        };
        // The run completes only once the outcome sent ahead of it is on record: an outcome that failed
        // leaves its call `executing`, in doubt, and the run must not end over it.
        let done =
            "UPDATE cm_executions SET status = 'completed', result = ?2, logs = ?3, updated_at = ?4
                WHERE id = ?1 AND runtime = ?5 AND status = 'running'
                  AND NOT EXISTS (SELECT 1 FROM cm_log o WHERE o.execution_id = ?1 AND o.seq = ?6
                                  AND o.state = 'executing')";
        let behind = behind.map_or(-1, |seq| seq as i64);
        let locks = self.run_locks(id);
        let params = args![id, result, logs, now, self.runtime, behind];
        if !read_log {
            let changed = off_async_workers(|| {
                postgres.commit_one_after(id, &locks, &self.runtime, false, done, params)
            })?;
            return Ok(Some((changed > 0).then(Vec::new)));
        }
        let sql = format!(
            // The log is read in the statement's snapshot, which the update does not change: it writes
            // cm_executions only. One row with no entry when the log is empty; no row when not running.
            "WITH done AS ({done} RETURNING id AS done_id)
             SELECT d.done_id, {LOG_COLUMNS} FROM done d LEFT JOIN cm_log l ON l.execution_id = d.done_id
             ORDER BY seq"
        );
        let rows = off_async_workers(|| {
            postgres.commit_query_after(id, &locks, &self.runtime, false, &sql, params)
        })?;
        if rows.is_empty() {
            return Ok(Some(None));
        }
        // No call of a completed run waits, so no approvals to fill in (as `log_of` does for waiting calls).
        let mut log = Vec::new();
        for row in &rows {
            if row.get::<Option<i64>>(1)?.is_some() {
                log.push(log_entry(row, 1)?);
            }
        }
        Ok(Some(Some(log)))
    }

    /// Fails a running run with a program error.
    pub fn fail(&self, id: &str, message: &str, now: i64) -> Result<(), StoreError> {
        self.write_run(id, |tx| fail_in(tx, &self.runtime, id, message, now))
    }
}

pub(super) fn touch(tx: &dyn Sql, runtime: &str, id: &str, now: i64) -> Result<()> {
    tx.execute_later(
        "UPDATE cm_executions SET updated_at = ?2 WHERE id = ?1 AND runtime = ?3",
        args![id, now, runtime],
    )?;
    Ok(())
}

/// The condition that the run a statement names by id in `?1` belongs to the runtime in parameter `param`.
/// Every statement that names a run by id is scoped to this store's runtime, so a host of another runtime
/// sharing the database can neither read nor change its runs (docs/shared-store.md, "Runs belong to their
/// runtime"). Written as a comparison with the run's runtime rather than an `EXISTS` over `cm_executions`:
/// SQLite (built with STAT4) plans that `EXISTS` around the bound values and re-prepares the statement each
/// time one changes — a parse on every recorded call (docs/performance.md, "Statements planned once").
pub(super) fn of_runtime(param: &str) -> String {
    format!("(SELECT r.runtime FROM cm_executions r WHERE r.id = ?1) = {param}")
}

/// The internal fail path: the run becomes `error` with the message (capped at the durable limit).
pub(super) fn fail_in(
    tx: &dyn Sql,
    runtime: &str,
    id: &str,
    message: &str,
    now: i64,
) -> Result<()> {
    tx.execute(
        "UPDATE cm_executions SET status = 'error', error = ?2, updated_at = ?3
         WHERE id = ?1 AND runtime = ?4 AND status = 'running'",
        args![id, cap(message), now, runtime],
    )?;
    Ok(())
}

pub(super) fn cap(message: &str) -> String {
    message.chars().take(MAX_DURABLE_VALUE).collect()
}

/// Console lines as stored: while too large, the older half is dropped behind a marker
/// (docs/semantics.md §7.2).
fn logs_for_storage(logs: &[String]) -> Option<String> {
    if logs.is_empty() {
        return None;
    }
    let mut kept: Vec<String> = logs.to_vec();
    loop {
        let text = serde_json::to_string(&kept).unwrap_or_default();
        if utf16_len(&text) <= MAX_DURABLE_VALUE {
            return Some(text);
        }
        if kept.len() <= 2 {
            return None;
        }
        let newer = kept.split_off(kept.len() / 2);
        kept = std::iter::once(
            "[codemode: earlier console output dropped — too large to record]".to_owned(),
        )
        .chain(
            newer
                .into_iter()
                .filter(|l| !l.starts_with("[codemode: earlier console output dropped")),
        )
        .collect();
    }
}
