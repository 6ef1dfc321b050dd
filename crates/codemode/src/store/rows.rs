//! Stored rows decoded into the public types (runs, log entries) and into the holders the transitions check.
//! Each column list sits next to the code that decodes it, so that the two change together.

use super::sql::{Row, Sql, args};
use super::{Result, Store};
use crate::lineage::{Departure, ForkedFrom};
use crate::model::{Decision, EntryState, ExecutionState, ExecutionStatus, ToolLogEntry};
use crate::owner::ProcessIdentity;
use serde_json::Value;

pub(super) fn raw(text: Option<String>) -> Option<Box<serde_json::value::RawValue>> {
    text.and_then(|t| serde_json::value::RawValue::from_string(t).ok())
}

pub(super) fn parse_decision(text: Option<String>) -> Option<Decision> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

pub(super) fn parse_json(text: Option<String>) -> Option<Value> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

/// A run's columns as [`execution_row`] reads them, from `cm_executions e` and its owner's host.
pub(super) const EXECUTION_COLUMNS: &str =
    "SELECT e.id, e.code, e.status, e.result, e.error, e.logs, e.connectors, e.source, e.created_at,
            e.updated_at, e.owner_pid, e.owner_started, e.owner_host, oh.heartbeat_at, oh.machine, oh.name,
            e.handed, e.forked_from, e.forked_seq, e.diverged_at, e.diverged
     FROM cm_executions e LEFT JOIN cm_hosts oh ON oh.id = e.owner_host";

fn owner_of(pid: Option<u32>, started: Option<i64>) -> Option<ProcessIdentity> {
    Some(ProcessIdentity {
        pid: pid?,
        started: started.unwrap_or(0) as u64,
    })
}

pub(super) fn execution_row(store: &Store, row: &Row) -> Result<ExecutionState> {
    let status: String = row.get(2)?;
    let status = ExecutionStatus::parse(&status).unwrap_or(ExecutionStatus::Error);
    let owner = Holder::read(row, 10)?;
    Ok(ExecutionState {
        interrupted: status == ExecutionStatus::Running && !store.holder_alive(&owner),
        host: store.run_host(&owner, row.get(15)?),
        handed: parse_decision(row.get(16)?),
        id: row.get(0)?,
        code: row.get(1)?,
        status,
        log: Vec::new(),
        result: parse_json(row.get(3)?),
        error: row.get(4)?,
        logs: parse_json(row.get(5)?).and_then(|v| serde_json::from_value(v).ok()),
        connectors: parse_json(row.get(6)?)
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default(),
        source: row.get(7)?,
        created_at: row.get(8)?,
        updated_at: row.get(9)?,
        forked_from: forked_from(row)?,
        reruns: Vec::new(),
    })
}

/// The run a rerun came from, from columns 17–20 of [`EXECUTION_COLUMNS`].
fn forked_from(row: &Row) -> Result<Option<ForkedFrom>> {
    let Some(execution_id) = row.get::<Option<String>>(17)? else {
        return Ok(None);
    };
    let diverged = match (row.get::<Option<i64>>(19)?, row.get::<Option<String>>(20)?) {
        (Some(seq), Some(detail)) => Some(Departure {
            seq: seq.max(0) as u64,
            detail,
        }),
        _ => None,
    };
    Ok(Some(ForkedFrom {
        execution_id,
        seq: row.get::<Option<i64>>(18)?.unwrap_or(0).max(0) as u64,
        diverged,
    }))
}

/// The columns of `cm_log` that [`log_entry`] reads, in its order.
pub(super) const LOG_COLUMNS: &str = "seq, connector, method, args, result, requires_approval, ephemeral, state,
    decided_by, decided_at, interrupted, divergence, error, decision, canonical, asked_by, confirm_in_app,
    ask_in_client, decide_within, decide_by, quorum, asked_at, started_at, finished_at, inherited";

pub(super) fn log_of(connection: &dyn Sql, runtime: &str, id: &str) -> Result<Vec<ToolLogEntry>> {
    let rows = connection.query(&log_sql(""), args![id, runtime])?;
    log_from(connection, id, &rows)
}

/// The query of [`log_of`] (`?1` the run, `?2` its runtime), its run also meeting `condition` (SQL on
/// `cm_executions r`, starting with `AND`), to send with others ([`Sql::query_together`]).
pub(super) fn log_sql(condition: &str) -> String {
    format!(
        "SELECT {LOG_COLUMNS} FROM cm_log WHERE execution_id = ?1
           AND EXISTS (SELECT 1 FROM cm_executions r WHERE r.id = ?1 AND r.runtime = ?2 {condition})
         ORDER BY seq"
    )
}

/// A run's log from the rows of [`log_sql`], with who approved each call that needs several people.
pub(super) fn log_from(connection: &dyn Sql, id: &str, rows: &[Row]) -> Result<Vec<ToolLogEntry>> {
    let mut entries = rows
        .iter()
        .map(|row| log_entry(row, 0))
        .collect::<Result<Vec<_>>>()?;
    super::quorum::fill_approvals(connection, id, &mut entries)?;
    Ok(entries)
}

/// Where the log columns start in the rows of [`Store::paused_executions`]: after [`EXECUTION_COLUMNS`].
pub(super) const LOG_AT: usize = 21;

/// A log entry from the 25 columns of `cm_log` that start at `at` (in the order `log_of` selects them).
pub(super) fn log_entry(row: &Row, at: usize) -> Result<ToolLogEntry> {
    let state: String = row.get(at + 7)?;
    let state = EntryState::parse(&state).unwrap_or(EntryState::Error);
    let connector: String = row.get(at + 1)?;
    let mut result = parse_json(row.get(at + 4)?);
    // A step whose function returned `undefined` shows `null`, as the reference's log does (the stored
    // value stays absent, so replay still hands back `undefined`).
    if result.is_none() && state == EntryState::Applied && connector == crate::STEP_CONNECTOR {
        result = Some(Value::Null);
    }
    Ok(ToolLogEntry {
        seq: row.get::<i64>(at)? as u64,
        connector,
        method: row.get(at + 2)?,
        args: parse_json(row.get(at + 3)?),
        result,
        requires_approval: row.get(at + 5)?,
        ephemeral: row.get(at + 6)?,
        state,
        decided_by: row.get(at + 8)?,
        decided_at: row.get(at + 9)?,
        interrupted: row.get(at + 10)?,
        divergence: parse_json(row.get(at + 11)?),
        error: row.get(at + 12)?,
        decision: parse_decision(row.get(at + 13)?),
        canonical: parse_json(row.get(at + 14)?),
        asked_by: row.get(at + 15)?,
        confirm_in_app: row.get(at + 16)?,
        ask_in_client: row.get(at + 17)?,
        decide_within: row.get(at + 18)?,
        decide_by: row.get(at + 19)?,
        quorum: row
            .get::<Option<i64>>(at + 20)?
            .and_then(|n| u32::try_from(n).ok()),
        approvals: Vec::new(),
        asked_at: row.get(at + 21)?,
        started_at: row.get(at + 22)?,
        finished_at: row.get(at + 23)?,
        inherited: row.get(at + 24)?,
    })
}

/// A run's status and who holds it, as the transitions need them.
pub(super) struct RunRow {
    pub(super) status: ExecutionStatus,
    /// The process running its pass (or that last ran one), and the one rolling it back.
    pub(super) owner: Holder,
    pub(super) rollback: Holder,
    /// Another host's decision waits for this run's host ([`Store::resume`] handing it off).
    pub(super) handed: bool,
}

/// A process holding a run (its pass or its rollback) as stored: for updates conditional on it, and to tell
/// whether it still lives.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Holder {
    pub(super) pid: Option<u32>,
    pub(super) started: Option<i64>,
    /// On a shared store, its host, that host's last heartbeat and its machine.
    pub(super) host: Option<String>,
    pub(super) heartbeat: Option<i64>,
    pub(super) machine: Option<String>,
}

impl Holder {
    /// The holder in columns `at..at + 5`: pid, start time, host, the host's heartbeat and machine.
    pub(super) fn read(row: &Row, at: usize) -> Result<Holder> {
        Ok(Holder {
            pid: row.get(at)?,
            started: row.get(at + 1)?,
            host: row.get(at + 2)?,
            heartbeat: row.get(at + 3)?,
            machine: row.get(at + 4)?,
        })
    }

    pub(super) fn process(&self) -> Option<ProcessIdentity> {
        owner_of(self.pid, self.started)
    }
}

/// The columns [`Holder::read`] reads for a run's owner and its rollback, from `cm_executions e` joined
/// with [`HOLDER_HOSTS`].
const OWNER_COLUMNS: &str =
    "e.owner_pid, e.owner_started, e.owner_host, oh.heartbeat_at, oh.machine";
pub(super) const ROLLBACK_COLUMNS: &str =
    "e.rollback_pid, e.rollback_started, e.rollback_host, rh.heartbeat_at, rh.machine";
pub(super) const HOLDER_HOSTS: &str = "LEFT JOIN cm_hosts oh ON oh.id = e.owner_host
     LEFT JOIN cm_hosts rh ON rh.id = e.rollback_host";

/// The run `id` of `runtime`; `None` when there is none, or it is another runtime's.
pub(super) fn run_row(connection: &dyn Sql, runtime: &str, id: &str) -> Result<Option<RunRow>> {
    connection.query_row_opt(
        &format!(
            "SELECT e.status, {OWNER_COLUMNS}, {ROLLBACK_COLUMNS}, e.handed
             FROM cm_executions e {HOLDER_HOSTS} WHERE e.id = ?1 AND e.runtime = ?2"
        ),
        args![id, runtime],
        |row| {
            let status: String = row.get(0)?;
            Ok(RunRow {
                status: ExecutionStatus::parse(&status).unwrap_or(ExecutionStatus::Error),
                owner: Holder::read(row, 1)?,
                rollback: Holder::read(row, 6)?,
                handed: row.get::<Option<String>>(11)?.is_some(),
            })
        },
    )
}

/// A call waiting for a decision, as a claim checks it against what was shown and counts its quorum.
pub(super) struct Waiting {
    pub(super) seq: u64,
    pub(super) args: Option<Value>,
    /// How many people must approve it, when a rule asked for several.
    pub(super) quorum: Option<i64>,
}

/// [`run_row`] and the run's calls waiting for a decision, in seq order, read by one statement: what every
/// decision checks first, in one round trip on PostgreSQL.
pub(super) fn run_and_waiting(
    connection: &dyn Sql,
    runtime: &str,
    id: &str,
) -> Result<Option<(RunRow, Vec<Waiting>)>> {
    run_and_waiting_of(&connection.query(&run_and_waiting_sql(), args![id, runtime])?)
}

/// The query of [`run_and_waiting`] (`?1` the run, `?2` its runtime), to send with others
/// ([`Sql::query_together`]).
pub(super) fn run_and_waiting_sql() -> String {
    format!(
        "SELECT e.status, {OWNER_COLUMNS}, {ROLLBACK_COLUMNS}, e.handed, l.seq, l.args, l.quorum
         FROM cm_executions e {HOLDER_HOSTS}
         LEFT JOIN cm_log l ON l.execution_id = e.id AND l.state = 'pending'
         WHERE e.id = ?1 AND e.runtime = ?2 ORDER BY l.seq"
    )
}

/// The run and its waiting calls, from the rows of [`run_and_waiting_sql`].
pub(super) fn run_and_waiting_of(rows: &[Row]) -> Result<Option<(RunRow, Vec<Waiting>)>> {
    let rows = rows
        .iter()
        .map(|row| {
            let status: String = row.get(0)?;
            let run = RunRow {
                status: ExecutionStatus::parse(&status).unwrap_or(ExecutionStatus::Error),
                owner: Holder::read(row, 1)?,
                rollback: Holder::read(row, 6)?,
                handed: row.get::<Option<String>>(11)?.is_some(),
            };
            let waiting = match row.get::<Option<i64>>(12)? {
                Some(seq) => Some(Waiting {
                    seq: seq as u64,
                    args: parse_json(row.get::<Option<String>>(13)?),
                    quorum: row.get::<Option<i64>>(14)?,
                }),
                None => None,
            };
            Ok((run, waiting))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut rows = rows.into_iter();
    let Some((run, first)) = rows.next() else {
        return Ok(None);
    };
    let waiting = first
        .into_iter()
        .chain(rows.filter_map(|(_, waiting)| waiting))
        .collect();
    Ok(Some((run, waiting)))
}

pub(super) fn status_of(
    connection: &dyn Sql,
    runtime: &str,
    id: &str,
) -> Result<Option<ExecutionStatus>> {
    let status: Option<String> = connection.query_row_opt(
        "SELECT status FROM cm_executions WHERE id = ?1 AND runtime = ?2",
        args![id, runtime],
        |row| row.get(0),
    )?;
    Ok(status.and_then(|s| ExecutionStatus::parse(&s)))
}
