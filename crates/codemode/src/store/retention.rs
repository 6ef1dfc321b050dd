//! How runs leave the store or stop waiting: expiry of stale runs, pruning beyond the retention, deletion by
//! a person (docs/design.md, "Retention").

use super::rows::{HOLDER_HOSTS, Holder, ROLLBACK_COLUMNS, run_row};
use super::sql::{Sql, args};
use super::{Result, Store, StoreError};
use crate::model::{Actor, Decision, ExecutionStatus};
use crate::transitions::{self, DeleteStep};
use std::time::Duration;

/// How long finished runs are kept (docs/design.md, "Retention").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Finished runs beyond the newest `keep` are deleted ...
    pub keep: usize,
    /// ... except a run that holds a record: a decision by a person or by expiry, an applied call that asked
    /// for approval, or a revert. Retention by count never removes one; it goes once it is older than this
    /// (since it last changed), or when a person deletes it.
    pub keep_decided_for: Duration,
}

impl Retention {
    /// The default of `runtime.keepDecidedFor`: 90 days.
    pub const DEFAULT_KEEP_DECIDED_FOR: Duration = Duration::from_secs(90 * 24 * 3600);

    /// The newest `keep` finished runs, and every run holding a record for the default 90 days.
    pub fn count(keep: usize) -> Retention {
        Retention {
            keep,
            keep_decided_for: Retention::DEFAULT_KEEP_DECIDED_FOR,
        }
    }

    /// The last change (epoch ms) before which a run holding a record may go, at `now`.
    fn record_cutoff(&self, now: i64) -> i64 {
        let age = i64::try_from(self.keep_decided_for.as_millis()).unwrap_or(i64::MAX);
        now.saturating_sub(age)
    }
}

/// The result of trying to delete one execution.
#[derive(Debug, Clone, PartialEq)]
pub enum Deletion {
    /// Deleted; it had this status.
    Deleted(ExecutionStatus),
    /// A live process is running a pass of it: nothing was deleted.
    Running(u32),
    /// A live process is rolling it back: nothing was deleted.
    RollingBack(u32),
    Missing,
}

impl Store {
    /// Reclaims stale non-terminal runs (docs/semantics.md §6, [`transitions::expiry_step`]): `paused` →
    /// `rejected` ("Expired awaiting approval"), `running` → `error`; strictly older than `cutoff`. A run
    /// whose pass or rollback a live process holds is never touched, however old. Returns the expired ids.
    pub fn expire(&self, cutoff: i64, now: i64) -> Result<Vec<String>, StoreError> {
        self.write(|tx| {
            let stale: Vec<String> = tx.query_map(
                "SELECT id FROM cm_executions
                 WHERE runtime = ?1 AND status IN ('paused', 'running') AND updated_at < ?2
                 ORDER BY created_at, id",
                args![self.runtime, cutoff],
                |row| row.get(0),
            )?;
            let decision = serde_json::to_string(&Decision::expired(now)).unwrap_or_default();
            let mut expired = Vec::new();
            for id in stale {
                let Some(run) = run_row(tx, &self.runtime, &id)? else {
                    continue;
                };
                let Some((to, error)) = transitions::expiry_step(run.status, self.holders(&run)) else {
                    continue;
                };
                let changed = tx.execute(
                    "UPDATE cm_executions SET status = ?2, error = ?3, updated_at = ?4 WHERE id = ?1 AND status = ?5",
                    args![id, to.as_str(), error, now, run.status.as_str()],
                )?;
                if changed == 0 {
                    continue;
                }
                if run.status == ExecutionStatus::Paused {
                    tx.execute(
                        "UPDATE cm_log SET state = 'reverted', decided_by = ?2, decided_at = ?3, decision = ?4
                         WHERE execution_id = ?1 AND state = 'pending'",
                        args![id, Actor::Expiry.as_str(), now, decision],
                    )?;
                }
                expired.push(id);
            }
            Ok(expired)
        })
    }

    /// The waiting calls of this runtime whose `decide_by` is at or before `now`, oldest deadline first
    /// (docs/design.md, "Deciding in time").
    pub fn overdue(&self, now: i64) -> Result<Vec<(String, u64)>, StoreError> {
        self.with(|connection| {
            connection.query_map(
                "SELECT l.execution_id, l.seq FROM cm_log l CROSS JOIN cm_executions e
                 WHERE e.id = l.execution_id AND e.runtime = ?1 AND e.status = 'paused' AND l.state = 'pending'
                   AND l.decide_by IS NOT NULL AND l.decide_by <= ?2
                 ORDER BY l.decide_by, l.execution_id, l.seq",
                args![self.runtime, now],
                |row| Ok((row.get::<String>(0)?, row.get::<i64>(1)? as u64)),
            )
        })
    }

    /// The earliest deadline among this runtime's waiting calls, if any has one.
    pub fn next_deadline(&self) -> Result<Option<i64>, StoreError> {
        self.with(|connection| {
            connection.query_row(
                "SELECT min(l.decide_by) FROM cm_log l CROSS JOIN cm_executions e
                 WHERE e.id = l.execution_id AND e.runtime = ?1 AND e.status = 'paused' AND l.state = 'pending'",
                args![self.runtime],
                |row| row.get::<Option<i64>>(0),
            )
        })
    }

    /// Deletes terminal executions beyond the newest `retention.keep`, never one holding a record that
    /// `retention` still keeps (by this store's clock); returns the deleted ids.
    pub fn prune(&self, retention: Retention) -> Result<Vec<String>, StoreError> {
        let now = self.clock.now_ms();
        self.write(|tx| prune(self, tx, retention, now, None, None))
            .map_err(|error| self.admins_only(error, "Pruning runs"))
    }

    /// Whether this connection may delete runs: on a shared store, what the server last said of its role.
    pub(super) fn may_delete_runs(&self) -> bool {
        self.may_delete_runs
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// A deletion the server refused this role, said as the role it needs (the server's own words name only
    /// a table).
    fn admins_only(&self, error: StoreError, what: &str) -> StoreError {
        if !error.is_permission_denied() {
            return error;
        }
        let login = self.login.lock().unwrap_or_else(|p| p.into_inner()).clone();
        StoreError::NeedsRole {
            message: format!(
                "{login} may not delete runs: {what} needs the role codemode_admin (an admin runs: codemode store grant admin {login})"
            ),
        }
    }

    /// Deletes one execution and its log, unless a live process holds its pass or its rollback
    /// ([`transitions::delete_step`]): the audit row of a run that is still acting must not disappear.
    pub fn delete(&self, id: &str) -> Result<Deletion, StoreError> {
        self.delete_run(id)
            .map_err(|error| self.admins_only(error, "Deleting a run"))
    }

    fn delete_run(&self, id: &str) -> Result<Deletion, StoreError> {
        self.write(|tx| {
            let Some(run) = run_row(tx, &self.runtime, id)? else {
                return Ok(Deletion::Missing);
            };
            match transitions::delete_step(run.status, self.holders(&run)) {
                DeleteStep::Running(pid) => Ok(Deletion::Running(pid)),
                DeleteStep::RollingBack(pid) => Ok(Deletion::RollingBack(pid)),
                DeleteStep::Delete => {
                    tx.execute("DELETE FROM cm_log WHERE execution_id = ?1", args![id])?;
                    tx.execute(
                        "DELETE FROM cm_approvals WHERE execution_id = ?1",
                        args![id],
                    )?;
                    tx.execute("DELETE FROM cm_executions WHERE id = ?1", args![id])?;
                    Ok(Deletion::Deleted(run.status))
                }
            }
        })
    }
}

/// How many of the runs just beyond the newest `retention.keep` the prune at each run's start looks at for
/// runs that hold no record. A run falls beyond the window one at a time, as newer ones start, and is looked at
/// then; the ones further beyond were looked at before and kept because they hold a record, so they go only by
/// age, which [`prune`] finds through the time index. A backlog (a lower `maxExecutions`) goes this many a run.
pub(super) const PRUNE_SLICE: i64 = 64;

/// Deletes terminal executions beyond the newest `retention.keep` (never `except`); returns the deleted ids.
/// A run holding a record ([`HOLDS_A_RECORD`]) is deleted only once it is older than
/// `retention.keep_decided_for`: otherwise an agent's trivial runs would push a person's decision, or what was
/// done and undone after it, out of the log (docs/design.md, "Retention"). `slice` bounds how many runs beyond
/// the window are checked for a record ([`PRUNE_SLICE`] at each run's start, so its cost does not grow with the
/// decided runs kept; `None` for an explicit prune, which looks at them all); runs past their time are found
/// through the `(runtime, created_at)` index whatever `slice` says (docs/performance.md, "Retention at each run").
pub(super) fn prune(
    store: &Store,
    tx: &dyn Sql,
    retention: Retention,
    now: i64,
    except: Option<&str>,
    slice: Option<i64>,
) -> Result<Vec<String>> {
    const TERMINAL: &str = "status IN ('completed', 'error', 'rejected', 'rolled_back')";
    let keep = i64::try_from(retention.keep).unwrap_or(i64::MAX);
    // The oldest run the window keeps: everything after it in (created_at, id) order is beyond.
    let edge: Option<(i64, String)> = match keep {
        0 => Some((i64::MAX, String::new())),
        _ => tx.query_row_opt(
            &format!(
                "SELECT created_at, id FROM cm_executions
                 WHERE runtime = ?1 AND {TERMINAL} AND id IS DISTINCT FROM ?2
                 ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?3"
            ),
            args![store.runtime, except, keep - 1],
            |row| Ok((row.get::<i64>(0)?, row.get::<String>(1)?)),
        )?,
    };
    let Some((edge_at, edge_id)) = edge else {
        return Ok(Vec::new());
    };
    let beyond = "(e.created_at < ?3 OR (e.created_at = ?3 AND e.id < ?4))";
    let cutoff = retention.record_cutoff(now);
    let rows = tx.query_map(
        &format!(
            "SELECT e.id, {ROLLBACK_COLUMNS} FROM (
                 SELECT id FROM (SELECT e.id, e.created_at FROM cm_executions e
                                 WHERE e.runtime = ?1 AND e.{TERMINAL} AND e.id IS DISTINCT FROM ?2 AND {beyond}
                                 ORDER BY e.created_at DESC, e.id DESC LIMIT ?5) front
                 UNION
                 SELECT e.id FROM cm_executions e
                 WHERE e.runtime = ?1 AND e.{TERMINAL} AND e.id IS DISTINCT FROM ?2 AND {beyond}
                   AND e.created_at < ?6 AND e.updated_at < ?6
             ) candidate JOIN cm_executions e ON e.id = candidate.id {HOLDER_HOSTS}
             WHERE e.updated_at < ?6 OR NOT ({HOLDS_A_RECORD})
             ORDER BY e.created_at DESC, e.id DESC"
        ),
        args![
            store.runtime,
            except,
            edge_at,
            edge_id,
            slice.unwrap_or(i64::MAX),
            cutoff
        ],
        |row| Ok((row.get::<String>(0)?, Holder::read(row, 1)?)),
    )?;
    let mut ids = Vec::new();
    for (id, rollback) in rows {
        // A run being rolled back by a live process keeps its audit row until the rollback ends.
        if !store.holder_alive(&rollback) {
            ids.push(id);
        }
    }
    // Nothing reads what they changed: on PostgreSQL they leave with COMMIT.
    for id in &ids {
        tx.execute_later("DELETE FROM cm_log WHERE execution_id = ?1", args![id])?;
        tx.execute_later(
            "DELETE FROM cm_approvals WHERE execution_id = ?1",
            args![id],
        )?;
        tx.execute_later("DELETE FROM cm_executions WHERE id = ?1", args![id])?;
    }
    Ok(ids)
}

/// Whether the run `e` holds a record that retention by count never removes: a call decided by a person or
/// by expiry (`decided_by` is then neither NULL nor `rule`), a call that asked for approval and was applied,
/// or a revert.
const HOLDS_A_RECORD: &str = "e.status = 'rolled_back'
     OR EXISTS (SELECT 1 FROM cm_log l WHERE l.execution_id = e.id
                AND (l.reverted_at IS NOT NULL OR (l.requires_approval = 1 AND l.state = 'applied')
                     OR (l.decided_by IS NOT NULL AND l.decided_by <> 'rule')))";
