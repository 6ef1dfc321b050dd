//! The durable store: executions, their per-call log, snippets and rules, in one SQLite file (WAL) or in a
//! shared PostgreSQL database (docs/shared-store.md). Every state change is one transaction whose update is
//! conditional on the state it observed, so two processes sharing the store (on one machine or several) can
//! never both resume, both reject, or both execute an approved call. The statements are written once
//! ([`sql`]) and run on either database.

mod hosts;
mod postgres;
pub(crate) mod sql;

use crate::codec::{MAX_DURABLE_VALUE, not_serializable_message, too_large_message, utf16_len};
use crate::model::{
    Actor, CallRef, Decision, DecisionKind, EntryState, ExecutionState, ExecutionStatus,
    PendingAction, ToolLogEntry,
};
use crate::model::{ExecutionPage, ExecutionQuery, ExecutionSummary, Snippet};
use crate::owner::ProcessIdentity;
use crate::protocol::ReplayEntry;
use crate::rules::{Effect, Rule, Verdict};
use crate::runtime::Clock;
use crate::transitions::{
    self, Attempt, CallStep, DeleteStep, Recorded, RecoverStep, RejectStep, ResumeStep,
    RevertFacts, RollbackStep,
};
pub use hosts::{Adoption, HEARTBEAT_EVERY, HOST_TIMEOUT_MS, HandOff, HostIdentity};
pub use postgres::{Handed, masked as masked_store_address};
use rusqlite::TransactionBehavior;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
pub use sql::DbError;
use sql::{Dialect, Row, Sql, args};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Result<T, E = DbError> = std::result::Result<T, E>;

/// How often a wait on an SQLite store looks again: another process's commit has no notification.
const SQLITE_POLL: Duration = Duration::from_millis(100);

/// The schema version this build writes; older files are migrated forward on open.
pub const SCHEMA_VERSION: i64 = 11;

const MIGRATIONS: &[&str] = &[
    // 1: executions, the per-call log, snippets.
    "CREATE TABLE cm_executions (
        id TEXT PRIMARY KEY,
        runtime TEXT NOT NULL,
        code TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        logs TEXT,
        connectors TEXT NOT NULL,
        source TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE INDEX cm_executions_by_status ON cm_executions (runtime, status, created_at DESC, id DESC);
    CREATE INDEX cm_executions_by_time ON cm_executions (runtime, created_at DESC, id DESC);
    CREATE TABLE cm_log (
        execution_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        connector TEXT NOT NULL,
        method TEXT NOT NULL,
        args TEXT,
        result TEXT,
        requires_approval INTEGER NOT NULL,
        ephemeral INTEGER NOT NULL,
        state TEXT NOT NULL,
        decided_by TEXT,
        decided_at INTEGER,
        interrupted INTEGER NOT NULL DEFAULT 0,
        divergence TEXT,
        PRIMARY KEY (execution_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE cm_snippets (
        runtime TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        code TEXT NOT NULL,
        saved_at INTEGER NOT NULL,
        input_schema TEXT,
        connectors TEXT NOT NULL,
        PRIMARY KEY (runtime, name)
    );",
    // 2: the process that owns a running pass, to tell an interrupted run from a live one.
    "ALTER TABLE cm_executions ADD COLUMN owner_pid INTEGER;
     ALTER TABLE cm_executions ADD COLUMN owner_started INTEGER;",
    // 3: the process rolling a run back, so that no approval or recovery applies anything meanwhile and two
    // rollbacks never revert the same call twice.
    "ALTER TABLE cm_executions ADD COLUMN rollback_pid INTEGER;
     ALTER TABLE cm_executions ADD COLUMN rollback_started INTEGER;",
    // 4: when a rollback reverted a call, so that a call which may have been applied before a crash (and was
    // then rejected) is told apart from one a rollback already undid.
    "ALTER TABLE cm_log ADD COLUMN reverted_at INTEGER;",
    // 5: the error a connector answered a call with, so that replay gives the program the same error instead
    // of running the call again (docs/design.md, "A call's outcome is recorded, errors included").
    "ALTER TABLE cm_log ADD COLUMN error TEXT;",
    // 6: what was decided about a call, by whom and why (docs/design.md, "Decisions"). Calls decided before
    // get the decision their state, `decided_by` and their run imply: a reverted call of a run rejected for it
    // was rejected; a call still pending when its run expired, expired; any other decided call, approved.
    "ALTER TABLE cm_log ADD COLUMN decision TEXT;
     UPDATE cm_log SET decision = json_object('kind', 'rejected', 'by', decided_by, 'at', decided_at)
      WHERE decided_by IS NOT NULL AND state = 'reverted' AND reverted_at IS NULL
        AND EXISTS (SELECT 1 FROM cm_executions e WHERE e.id = cm_log.execution_id
                    AND e.error LIKE 'Action ' || cm_log.connector || '.' || cm_log.method || ' rejected by user%');
     UPDATE cm_log SET decision = json_object('kind', 'approved', 'by', decided_by, 'at', decided_at)
      WHERE decided_by IS NOT NULL AND decision IS NULL;
     UPDATE cm_log SET decided_by = 'expiry',
            decided_at = (SELECT e.updated_at FROM cm_executions e WHERE e.id = cm_log.execution_id),
            decision = json_object('kind', 'expired', 'by', 'expiry', 'at',
                         (SELECT e.updated_at FROM cm_executions e WHERE e.id = cm_log.execution_id))
      WHERE decided_by IS NULL AND requires_approval = 1 AND state = 'reverted' AND reverted_at IS NULL
        AND EXISTS (SELECT 1 FROM cm_executions e WHERE e.id = cm_log.execution_id
                    AND e.error = 'Expired awaiting approval');",
    // 7: policy rules (docs/design.md, "Rules"), in creation order, with who added each and how often it
    // decided; the version moves on every change so every process reloads them within a second.
    "CREATE TABLE cm_rules (
        runtime TEXT NOT NULL,
        id TEXT NOT NULL,
        rule TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        hits INTEGER NOT NULL DEFAULT 0,
        last_hit INTEGER,
        PRIMARY KEY (runtime, id)
    );
    CREATE TABLE cm_rules_version (runtime TEXT PRIMARY KEY, version INTEGER NOT NULL);",
    // 8: the preview last computed for display of a pending call; the decision keeps it as what the person
    // was shown (docs/design.md, "Previews").
    "ALTER TABLE cm_log ADD COLUMN shown TEXT;",
    // 9: the rules' creation order as a column, which PostgreSQL (with no rowid) keeps too.
    "ALTER TABLE cm_rules ADD COLUMN position INTEGER;
     UPDATE cm_rules SET position = rowid;",
    // 10: the hosts sharing a store, the host that owns each run and each rollback, and the decision handed
    // to a run's host by another (docs/shared-store.md, "Hosts"); NULL on a store only one machine uses.
    "CREATE TABLE cm_hosts (
        id TEXT PRIMARY KEY,
        runtime TEXT NOT NULL,
        name TEXT NOT NULL,
        connectors TEXT NOT NULL,
        machine TEXT NOT NULL,
        pid INTEGER NOT NULL,
        began_at INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
    );
    ALTER TABLE cm_executions ADD COLUMN owner_host TEXT;
    ALTER TABLE cm_executions ADD COLUMN rollback_host TEXT;
    ALTER TABLE cm_executions ADD COLUMN handed TEXT;",
    // 11: the arguments as the connector reads them, where that differs from what the program sent
    // (docs/design.md, "What a call means").
    "ALTER TABLE cm_log ADD COLUMN canonical TEXT;",
];

/// The same schema on PostgreSQL, each step with the version it reaches: a new database starts at the
/// version the first step reaches (no PostgreSQL store predates it); later steps follow SQLite's one for one.
/// Integers are BIGINT (times are epoch milliseconds); text compares byte-wise (`COLLATE "C"`), as SQLite's
/// does, so ids and names sort the same on both.
const POSTGRES_MIGRATIONS: &[(i64, &str)] = &[
    (
        9,
        r#"CREATE TABLE cm_executions (
        id TEXT COLLATE "C" PRIMARY KEY,
        runtime TEXT COLLATE "C" NOT NULL,
        code TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        logs TEXT,
        connectors TEXT NOT NULL,
        source TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        owner_pid BIGINT,
        owner_started BIGINT,
        rollback_pid BIGINT,
        rollback_started BIGINT
    );
    CREATE INDEX cm_executions_by_status ON cm_executions (runtime, status, created_at DESC, id DESC);
    CREATE INDEX cm_executions_by_time ON cm_executions (runtime, created_at DESC, id DESC);
    CREATE TABLE cm_log (
        execution_id TEXT COLLATE "C" NOT NULL,
        seq BIGINT NOT NULL,
        connector TEXT NOT NULL,
        method TEXT NOT NULL,
        args TEXT,
        result TEXT,
        requires_approval BIGINT NOT NULL,
        ephemeral BIGINT NOT NULL,
        state TEXT NOT NULL,
        decided_by TEXT,
        decided_at BIGINT,
        interrupted BIGINT NOT NULL DEFAULT 0,
        divergence TEXT,
        reverted_at BIGINT,
        error TEXT,
        decision TEXT,
        shown TEXT,
        PRIMARY KEY (execution_id, seq)
    );
    CREATE TABLE cm_snippets (
        runtime TEXT COLLATE "C" NOT NULL,
        name TEXT COLLATE "C" NOT NULL,
        description TEXT NOT NULL,
        code TEXT NOT NULL,
        saved_at BIGINT NOT NULL,
        input_schema TEXT,
        connectors TEXT NOT NULL,
        PRIMARY KEY (runtime, name)
    );
    CREATE TABLE cm_rules (
        runtime TEXT COLLATE "C" NOT NULL,
        id TEXT COLLATE "C" NOT NULL,
        rule TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        hits BIGINT NOT NULL DEFAULT 0,
        last_hit BIGINT,
        position BIGINT,
        PRIMARY KEY (runtime, id)
    );
    CREATE TABLE cm_rules_version (runtime TEXT COLLATE "C" PRIMARY KEY, version BIGINT NOT NULL);"#,
    ),
    (
        10,
        r#"CREATE TABLE cm_hosts (
        id TEXT COLLATE "C" PRIMARY KEY,
        runtime TEXT COLLATE "C" NOT NULL,
        name TEXT NOT NULL,
        connectors TEXT NOT NULL,
        machine TEXT NOT NULL,
        pid BIGINT NOT NULL,
        began_at BIGINT NOT NULL,
        heartbeat_at BIGINT NOT NULL
    );
    ALTER TABLE cm_executions ADD COLUMN owner_host TEXT COLLATE "C";
    ALTER TABLE cm_executions ADD COLUMN rollback_host TEXT COLLATE "C";
    ALTER TABLE cm_executions ADD COLUMN handed TEXT;"#,
    ),
    (11, "ALTER TABLE cm_log ADD COLUMN canonical TEXT;"),
];

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

/// Store failures that are not runtime outcomes.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] DbError),
    #[error(
        "the database {path} was written by a newer version of Codemode (schema {found}; this build reads up to {SCHEMA_VERSION})"
    )]
    NewerSchema { path: String, found: i64 },
    #[error("cannot create {path}: {source}")]
    Folder {
        path: String,
        source: std::io::Error,
    },
    /// The shared store's server could not be reached or refused this host; nothing was written.
    #[error("cannot reach the shared store {address}: {reason}")]
    Unreachable { address: String, reason: String },
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        StoreError::Database(DbError::Sqlite(error))
    }
}

/// A failure a test makes the store suffer (`Runtime::inject_store_fault_for_tests`).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreFault {
    /// Every write refused, as by a read-only database.
    ReadOnly,
    /// Every write that grows the database refused, as by a full disk.
    Full,
}

/// Where a runtime's store is (docs/shared-store.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// An SQLite file: the default, `<data dir>/codemode.db`.
    File(PathBuf),
    /// A PostgreSQL database that every host naming it shares: `postgres://user@host:5432/db`.
    Postgres(String),
}

impl StoreLocation {
    /// A `postgres://` or `postgresql://` URL is a shared store; anything else is a file path.
    pub fn parse(text: &str) -> StoreLocation {
        let text = text.trim();
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            StoreLocation::Postgres(text.to_owned())
        } else {
            StoreLocation::File(PathBuf::from(text))
        }
    }

    /// Whether several machines may share it.
    pub fn is_shared(&self) -> bool {
        matches!(self, StoreLocation::Postgres(_))
    }
}

/// The location as it may be shown: a file's path, or the URL with its password masked.
impl std::fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreLocation::File(path) => write!(f, "{}", path.display()),
            StoreLocation::Postgres(url) => f.write_str(&postgres::masked(url)),
        }
    }
}

impl From<&Path> for StoreLocation {
    fn from(path: &Path) -> Self {
        StoreLocation::File(path.to_owned())
    }
}

impl From<PathBuf> for StoreLocation {
    fn from(path: PathBuf) -> Self {
        StoreLocation::File(path)
    }
}

impl From<&PathBuf> for StoreLocation {
    fn from(path: &PathBuf) -> Self {
        StoreLocation::File(path.clone())
    }
}

/// What `decide` tells the pass to do with a call (reference §3.3).
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

/// The result of trying to claim a paused run for approval.
#[derive(Debug, Clone, PartialEq)]
pub enum Resume {
    Resumed,
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

/// The result of trying to claim a run for rollback.
#[derive(Debug, Clone, PartialEq)]
pub enum RollbackClaim {
    Claimed,
    /// A live process is running a pass of it.
    Running(u32),
    /// A live process is already rolling it back.
    RollingBack(u32),
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

/// A runtime's store: its database and who this process is in it.
pub struct Store {
    database: Database,
    runtime: String,
    owner: ProcessIdentity,
    /// This process's host, on a shared store (docs/shared-store.md, "Hosts"); `None` on an SQLite file.
    host: Option<HostIdentity>,
    /// Tells how old a host's heartbeat is.
    clock: Arc<dyn Clock>,
    /// This machine, as hosts record theirs: a process of a host on this machine is looked up by its pid.
    machine: String,
    /// The advisory lock a PostgreSQL write transaction holds: one per runtime, as SQLite's write lock is one
    /// per file (docs/shared-store.md, "Transactions").
    write_lock: i64,
}

enum Database {
    /// One connection, shared by the runtime's threads.
    Sqlite(Mutex<rusqlite::Connection>),
    Postgres(postgres::Postgres),
}

impl Store {
    /// Opens (creating and migrating) the store for the runtime `name`, in a file or on a PostgreSQL server;
    /// on a server this process is the host `host`, or when `None` this machine's host for that server (every
    /// process of one machine on one store is then one host, as processes sharing an SQLite file are).
    pub fn open(
        location: &StoreLocation,
        runtime: &str,
        host: Option<HostIdentity>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, StoreError> {
        let (database, host) = match location {
            StoreLocation::File(path) => (Database::Sqlite(Mutex::new(open_sqlite(path)?)), None),
            StoreLocation::Postgres(url) => {
                let host = host.unwrap_or_else(|| hosts::machine_host(url));
                (
                    Database::Postgres(open_postgres(url, runtime, &host.id)?),
                    Some(host),
                )
            }
        };
        Ok(Store {
            database,
            runtime: runtime.to_owned(),
            owner: ProcessIdentity::current(),
            host,
            clock,
            machine: hosts::this_machine(),
            write_lock: advisory_key("codemode runtime", runtime),
        })
    }

    /// Every statement runs here: off the async worker threads (SQLite blocks, for up to its busy timeout
    /// when another process holds the write lock, and PostgreSQL waits on the network), so one request
    /// waiting on the database never stalls the others — `codemode mcp` runs a single worker thread.
    fn with<T>(&self, mut f: impl FnMut(&dyn Sql) -> Result<T>) -> Result<T, StoreError> {
        off_async_workers(|| match &self.database {
            Database::Sqlite(connection) => {
                let connection = connection.lock().unwrap_or_else(|p| p.into_inner());
                Ok(f(&*connection)?)
            }
            Database::Postgres(postgres) => Ok(postgres.read(|connection| f(connection))?),
        })
    }

    /// One write transaction: SQLite's `BEGIN IMMEDIATE` takes the file's write lock first; on PostgreSQL the
    /// runtime's advisory lock does the same, so every transition reads what the last one committed.
    fn write<T>(&self, mut f: impl FnMut(&dyn Sql) -> Result<T>) -> Result<T, StoreError> {
        off_async_workers(|| match &self.database {
            Database::Sqlite(connection) => {
                let mut connection = connection.lock().unwrap_or_else(|p| p.into_inner());
                let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let value = f(&*tx)?;
                tx.commit()?;
                Ok(value)
            }
            Database::Postgres(postgres) => Ok(postgres.transaction(
                &[postgres::Lock::Exclusive(self.write_lock)],
                &self.runtime,
                |connection| f(connection),
            )?),
        })
    }

    /// A write transaction that touches one run's rows only (a call's record, the run's end): on PostgreSQL it
    /// shares the runtime's lock with other such transactions and takes the run's own, so different runs'
    /// calls commit side by side while every other transition still excludes them all (docs/shared-store.md,
    /// "Transactions"). On SQLite it is [`Store::write`].
    fn write_run<T>(
        &self,
        id: &str,
        mut f: impl FnMut(&dyn Sql) -> Result<T>,
    ) -> Result<T, StoreError> {
        match &self.database {
            Database::Sqlite(_) => self.write(f),
            Database::Postgres(postgres) => off_async_workers(|| {
                Ok(postgres.transaction(
                    &[
                        postgres::Lock::Shared(self.write_lock),
                        postgres::Lock::Exclusive(advisory_key("codemode run", id)),
                    ],
                    &self.runtime,
                    |connection| f(connection),
                )?)
            }),
        }
    }

    /// Inserts a new running execution, then prunes terminal ones beyond the newest `retention.keep`
    /// (reference §6), never one holding a record that `retention` still keeps.
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
        self.write(|tx| {
            tx.execute(
                "INSERT INTO cm_executions
                   (id, runtime, code, status, connectors, source, created_at, updated_at, owner_pid, owner_started,
                    owner_host)
                 VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?6, ?7, ?8, ?9)",
                args![id, self.runtime, code, connectors, source, now, self.owner.pid, self.owner.started as i64, self.host_id()],
            )?;
            prune(self, tx, retention, now, Some(id))
        })
    }

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
        self.write_run(id, |tx| {
            let status = status_of(tx, &self.runtime, id)?;
            let existing = match status {
                Some(ExecutionStatus::Running) => recorded_call(tx, id, seq)?,
                _ => None,
            };
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
            let attempt = Attempt { connector, method, args, requires_approval };
            let step = transitions::call_step(status, recorded.as_ref(), &attempt);
            let Some(existing) = existing else {
                return match step {
                    CallStep::Missing => Ok(CallPlan::Missing),
                    CallStep::Record { .. } => {
                        self.record_call(tx, id, seq, &attempt, canonical, verdict, ephemeral, now)
                    }
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
                CallStep::Replay => Ok(CallPlan::Replay(existing.result)),
                CallStep::ReplayError => Ok(CallPlan::ReplayError(existing.error.unwrap_or_default())),
                CallStep::Execute => Ok(CallPlan::Execute),
                CallStep::ExecuteAfterError => {
                    tx.execute(
                        "UPDATE cm_log SET state = 'executing', error = NULL WHERE execution_id = ?1 AND seq = ?2 AND state = 'error'",
                        args![id, seq as i64],
                    )?;
                    Ok(CallPlan::Execute)
                }
                CallStep::ExecuteApproved { .. } => {
                    tx.execute(
                        "UPDATE cm_log SET state = 'executing' WHERE execution_id = ?1 AND seq = ?2 AND state = 'pending'",
                        args![id, seq as i64],
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
    fn record_call(
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
        let decision = verdict.rule.as_ref().and_then(|rule| {
            let kind = match verdict.effect {
                Effect::Allow => DecisionKind::Allowed,
                Effect::Deny => DecisionKind::Denied,
                Effect::Ask => return None,
            };
            Some(Decision {
                kind,
                by: "rule".to_owned(),
                at: now,
                reason: verdict.reason.clone(),
                rule: Some(rule.clone()),
                args: None,
                shown: None,
            })
        });
        let denied = (verdict.effect == Effect::Deny).then(|| {
            crate::rules::denied_message(
                connector,
                method,
                verdict.rule.as_deref().unwrap_or_default(),
                verdict.reason.as_deref(),
            )
        });
        let state = match verdict.effect {
            Effect::Ask => "pending",
            Effect::Allow => "executing",
            Effect::Deny => "error",
        };
        tx.execute(
            // A new entry, or one replaced whole (what SQLite's INSERT OR REPLACE did): every column is set.
            "INSERT INTO cm_log
               (execution_id, seq, connector, method, args, result, requires_approval, ephemeral, state,
                error, decision, decided_by, decided_at, interrupted, divergence, reverted_at, shown, canonical)
             VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0, NULL, NULL, NULL, ?13)
             ON CONFLICT (execution_id, seq) DO UPDATE SET
               connector = excluded.connector, method = excluded.method, args = excluded.args, result = NULL,
               requires_approval = excluded.requires_approval, ephemeral = excluded.ephemeral,
               state = excluded.state, error = excluded.error, decision = excluded.decision,
               decided_by = excluded.decided_by, decided_at = excluded.decided_at, interrupted = 0,
               divergence = NULL, reverted_at = NULL, shown = NULL, canonical = excluded.canonical",
            args![
                id,
                seq as i64,
                connector,
                method,
                args_text,
                verdict.effect == Effect::Ask,
                ephemeral,
                state,
                denied,
                decision.as_ref().map(|d| serde_json::to_string(d).unwrap_or_default()),
                decision.as_ref().map(|_| "rule"),
                decision.as_ref().map(|_| now),
                canonical.map(|c| serde_json::to_string(c).unwrap_or_default()),
            ],
        )?;
        if let Some(rule) = &verdict.rule {
            tx.execute(
                "UPDATE cm_rules SET hits = hits + 1, last_hit = ?3 WHERE runtime = ?1 AND id = ?2",
                args![self.runtime, rule, now],
            )?;
        }
        match verdict.effect {
            Effect::Ask => {
                tx.execute(
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
                Ok(CallPlan::Execute)
            }
        }
    }

    /// The rules stored for this runtime, in creation order, with who added each and how often it decided.
    pub fn rules(&self) -> Result<Vec<StoredRule>, StoreError> {
        self.with(|connection| {
            let rows = connection.query_map(
                "SELECT rule, created_by, created_at, hits, last_hit FROM cm_rules WHERE runtime = ?1
                 ORDER BY position, id",
                args![self.runtime],
                |row| {
                    let text: String = row.get(0)?;
                    Ok((text, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?))
                },
            )?;
            let mut rules = Vec::new();
            for row in rows {
                let (text, created_by, created_at, hits, last_hit): (String, String, i64, i64, Option<i64>) = row;
                // A rule written by a newer build that this one cannot read is left out, not fatal.
                if let Ok(rule) = serde_json::from_str::<Rule>(&text) {
                    rules.push(StoredRule { rule, created_by, created_at, hits: hits.max(0) as u64, last_hit });
                }
            }
            Ok(rules)
        })
    }

    /// A value that moves whenever a rule is added or removed, by any process.
    pub fn rules_version(&self) -> Result<i64, StoreError> {
        self.with(|connection| {
            Ok(connection
                .query_row_opt(
                    "SELECT version FROM cm_rules_version WHERE runtime = ?1",
                    args![self.runtime],
                    |row| row.get(0),
                )?
                .unwrap_or(0))
        })
    }

    /// Adds a rule (already validated); false when one with that id exists.
    pub fn add_rule(&self, rule: &Rule, by: &str, now: i64) -> Result<bool, StoreError> {
        let text = serde_json::to_string(rule).unwrap_or_default();
        self.write(|tx| {
            let added = tx.execute(
                "INSERT INTO cm_rules (runtime, id, rule, created_by, created_at, position)
                 SELECT ?1, ?2, ?3, ?4, ?5, coalesce(max(position), 0) + 1 FROM cm_rules WHERE runtime = ?1
                 ON CONFLICT DO NOTHING",
                args![self.runtime, rule.id, text, by, now],
            )?;
            if added == 1 {
                bump_rules_version(tx, &self.runtime)?;
            }
            Ok(added == 1)
        })
    }

    /// Replaces the rule `id` with `rule` (which may carry a new id), keeping who added it, when, and its hits;
    /// false when there is no rule `id`, or the new id is another rule's.
    pub fn replace_rule(&self, id: &str, rule: &Rule) -> Result<bool, StoreError> {
        let text = serde_json::to_string(rule).unwrap_or_default();
        self.write(|tx| {
            let taken = rule.id != id
                && tx
                    .query_opt(
                        "SELECT id FROM cm_rules WHERE runtime = ?1 AND id = ?2",
                        args![self.runtime, rule.id],
                    )?
                    .is_some();
            if taken {
                return Ok(false);
            }
            let replaced = tx.execute(
                "UPDATE cm_rules SET id = ?3, rule = ?4 WHERE runtime = ?1 AND id = ?2",
                args![self.runtime, id, rule.id, text],
            )?;
            if replaced == 1 {
                bump_rules_version(tx, &self.runtime)?;
            }
            Ok(replaced == 1)
        })
    }

    /// Removes a rule; false when there was none by that id.
    pub fn remove_rule(&self, id: &str) -> Result<bool, StoreError> {
        self.write(|tx| {
            let removed = tx.execute(
                "DELETE FROM cm_rules WHERE runtime = ?1 AND id = ?2",
                args![self.runtime, id],
            )?;
            if removed == 1 {
                bump_rules_version(tx, &self.runtime)?;
            }
            Ok(removed == 1)
        })
    }

    /// Records a call's (or step's) result; an oversized result fails the run. Returns false when the run
    /// failed because of it.
    pub fn record_result(
        &self,
        id: &str,
        seq: u64,
        result: Option<&Value>,
        now: i64,
    ) -> Result<bool, StoreError> {
        self.write_run(id, |tx| {
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
            let text = if ephemeral {
                None
            } else {
                result.map(|r| serde_json::to_string(r).unwrap_or_default())
            };
            if let Some(text) = &text {
                let size = utf16_len(text);
                if size > MAX_DURABLE_VALUE {
                    let message = too_large_message(&format!("The result of {connector}.{method}"), size);
                    tx.execute(
                        "UPDATE cm_log SET state = 'error' WHERE execution_id = ?1 AND seq = ?2",
                        args![id, seq as i64],
                    )?;
                    fail_in(tx, &self.runtime, id, &message, now)?;
                    return Ok(false);
                }
            }
            tx.execute(
                "UPDATE cm_log SET result = ?3, state = 'applied' WHERE execution_id = ?1 AND seq = ?2",
                args![id, seq as i64, text],
            )?;
            touch(tx, &self.runtime, id, now)?;
            Ok(true)
        })
    }

    /// Fault injection for the tests of docs/design.md, "When the store fails": this process's SQLite
    /// connection refuses every write as a read-only database does (`PRAGMA query_only`), or every write that
    /// grows the file as a full disk does (`PRAGMA max_page_count` at its size); `None` heals it. Not for use
    /// outside tests; a no-op on PostgreSQL, whose tests fail the database itself (a trigger refusing
    /// writes, its connections terminated).
    #[doc(hidden)]
    pub fn fault_for_tests(&self, fault: Option<StoreFault>) {
        if let Database::Sqlite(connection) = &self.database {
            let connection = connection.lock().unwrap_or_else(|p| p.into_inner());
            let _ =
                connection.pragma_update(None, "query_only", fault == Some(StoreFault::ReadOnly));
            let pages: i64 = match fault {
                Some(StoreFault::Full) => connection
                    .query_row("PRAGMA page_count", [], |row| row.get(0))
                    .unwrap_or(1),
                _ => u32::MAX as i64 - 1,
            };
            let _ =
                connection.query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()));
        }
    }

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
                    "UPDATE cm_log SET state = 'error', error = ?3
                     WHERE execution_id = ?1 AND seq = ?2 AND state = 'executing' AND {}",
                    of_runtime("?4")
                ),
                args![id, seq as i64, cap(message), self.runtime],
            )?;
            touch(tx, &self.runtime, id, now)
        })
    }

    /// Records a step that ran without a decision first (nothing was recorded at `seq`): its entry, applied
    /// with its value, in one transaction. A value that cannot be stored (`Err` with the message, or too
    /// large) leaves the entry in `error` and fails the run. Returns false when the run is not running or
    /// failed because of it.
    pub fn record_step(
        &self,
        id: &str,
        seq: u64,
        name: &str,
        value: Result<Option<&Value>, &str>,
        now: i64,
    ) -> Result<bool, StoreError> {
        self.write_run(id, |tx| {
            if status_of(tx, &self.runtime, id)? != Some(ExecutionStatus::Running) {
                return Ok(false);
            }
            let text = value.map(|v| v.map(|v| serde_json::to_string(v).unwrap_or_default()));
            let failure = match &text {
                Err(message) => Some((*message).to_owned()),
                Ok(Some(text)) if utf16_len(text) > MAX_DURABLE_VALUE => Some(too_large_message(
                    &format!("The result of {}.{name}", crate::STEP_CONNECTOR),
                    utf16_len(text),
                )),
                Ok(_) => None,
            };
            let (state, result) = match (&failure, &text) {
                (None, Ok(text)) => ("applied", text.as_deref()),
                _ => ("error", None),
            };
            tx.execute(
                "INSERT INTO cm_log
                   (execution_id, seq, connector, method, args, result, requires_approval, ephemeral, state)
                 VALUES (?1, ?2, ?3, ?4, NULL, ?5, 0, 0, ?6)",
                args![id, seq as i64, crate::STEP_CONNECTOR, name, result, state],
            )?;
            match failure {
                Some(message) => {
                    fail_in(tx, &self.runtime, id, &message, now)?;
                    Ok(false)
                }
                None => {
                    touch(tx, &self.runtime, id, now)?;
                    Ok(true)
                }
            }
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

    /// Completes a running run with its (raw) result and console lines, and returns its call log as the
    /// outcome shows it (empty without reading it when the caller knows there is none: `read_log` false);
    /// `None` when the run was no longer running (nothing changed).
    pub fn complete(
        &self,
        id: &str,
        result: Option<&Value>,
        logs: &[String],
        now: i64,
        read_log: bool,
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

    /// Fails a running run with a program error.
    pub fn fail(&self, id: &str, message: &str, now: i64) -> Result<(), StoreError> {
        self.write_run(id, |tx| fail_in(tx, &self.runtime, id, message, now))
    }

    /// Claims a paused run for approval ([`transitions::resume_step`]): the run becomes `running` and its
    /// pending call is decided by `actor`, in one transaction (so a later reject, which needs a paused run,
    /// finds nothing to reject). The call stays `pending` until the pass reaches it: a replay that diverges
    /// before it leaves it never run, and a rollback then has nothing of it to undo.
    ///
    /// `handed` resumes with a decision another host handed to this one ([`Store::hand_off`]), which the run
    /// must still hold; otherwise the run must hold none.
    pub fn resume(
        &self,
        id: &str,
        decision: &Decision,
        handed: bool,
        expected: Option<&CallRef>,
    ) -> Result<Resume, StoreError> {
        let (by, now) = (decision.by.as_str(), decision.at);
        let decision = serde_json::to_string(decision).unwrap_or_default();
        self.write(|tx| {
            let Some(run) = run_row(tx, &self.runtime, id)? else {
                return Ok(Resume::Missing);
            };
            match transitions::resume_step(run.status, self.holders(&run)) {
                ResumeStep::NotPaused(status) => return Ok(Resume::NotPaused(status)),
                ResumeStep::RollingBack(pid) => return Ok(Resume::RollingBack(pid)),
                ResumeStep::Claim => {}
            }
            if let Some(other) = other_call(tx, id, expected)? {
                return Ok(Resume::OtherCall(other));
            }
            let changed = tx.execute(
                &format!(
                    "UPDATE cm_executions SET status = 'running', updated_at = ?2, owner_pid = ?3, owner_started = ?4,
                         owner_host = ?5, rollback_pid = NULL, rollback_started = NULL, rollback_host = NULL,
                         handed = NULL
                     WHERE id = ?1 AND status = 'paused' AND handed IS {}NULL",
                    if handed { "NOT " } else { "" }
                ),
                args![id, now, self.owner.pid, self.owner.started as i64, self.host_id()],
            )?;
            if changed == 0 {
                if !handed && run.status == ExecutionStatus::Paused {
                    return Ok(Resume::AlreadyDecided);
                }
                return Ok(Resume::NotPaused(run.status));
            }
            tx.execute(
                &format!(
                    "UPDATE cm_log SET decided_by = ?2, decided_at = ?3, decision = {}
                     WHERE execution_id = ?1 AND state = 'pending'",
                    decision_with_shown(tx.dialect(), "?4")
                ),
                args![id, by, now, decision],
            )?;
            Ok(Resume::Resumed)
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

    /// Reclaims stale non-terminal runs (reference §6, [`transitions::expiry_step`]): `paused` → `rejected`
    /// ("Expired awaiting approval"), `running` → `error`; strictly older than `cutoff`. A run whose pass or
    /// rollback a live process holds is never touched, however old. Returns the expired ids.
    pub fn expire(&self, cutoff: i64, now: i64) -> Result<Vec<String>, StoreError> {
        self.write(|tx| {
            let stale: Vec<String> = tx.query_map(
                "SELECT id FROM cm_executions
                 WHERE runtime = ?1 AND status IN ('paused', 'running') AND updated_at < ?2
                 ORDER BY created_at, id",
                args![self.runtime, cutoff],
                |row| row.get(0),
            )?;
            let decision = Decision {
                kind: DecisionKind::Expired,
                by: Actor::Expiry.as_str().to_owned(),
                at: now,
                reason: None,
                rule: None,
                args: None,
                shown: None,
            };
            let decision = serde_json::to_string(&decision).unwrap_or_default();
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

    /// Deletes terminal executions beyond the newest `retention.keep`, never one holding a record that
    /// `retention` still keeps (by this store's clock); returns the deleted ids.
    pub fn prune(&self, retention: Retention) -> Result<Vec<String>, StoreError> {
        let now = self.clock.now_ms();
        self.write(|tx| prune(self, tx, retention, now, None))
    }

    /// Deletes one execution and its log, unless a live process holds its pass or its rollback
    /// ([`transitions::delete_step`]): the audit row of a run that is still acting must not disappear.
    pub fn delete(&self, id: &str) -> Result<Deletion, StoreError> {
        self.write(|tx| {
            let Some(run) = run_row(tx, &self.runtime, id)? else {
                return Ok(Deletion::Missing);
            };
            match transitions::delete_step(run.status, self.holders(&run)) {
                DeleteStep::Running(pid) => Ok(Deletion::Running(pid)),
                DeleteStep::RollingBack(pid) => Ok(Deletion::RollingBack(pid)),
                DeleteStep::Delete => {
                    tx.execute("DELETE FROM cm_log WHERE execution_id = ?1", args![id])?;
                    tx.execute("DELETE FROM cm_executions WHERE id = ?1", args![id])?;
                    Ok(Deletion::Deleted(run.status))
                }
            }
        })
    }

    /// What a rollback compensates, newest first ([`transitions::revertible`]): the applied calls
    /// (reference §5) and the ones that may have been applied before a crash; never a step, a call that
    /// failed, or one never reached.
    pub fn actions_to_revert(&self, id: &str) -> Result<Vec<ToolLogEntry>, StoreError> {
        self.with(|connection| {
            let reverted: std::collections::HashSet<u64> = connection
                .query_map(
                    &format!(
                        "SELECT seq FROM cm_log WHERE execution_id = ?1 AND reverted_at IS NOT NULL AND {}",
                        of_runtime("?2")
                    ),
                    args![id, self.runtime],
                    |row| row.get(0),
                )?
                .into_iter()
                .collect();
            let mut log = log_of(connection, &self.runtime, id)?;
            log.retain(|entry| {
                transitions::revertible(RevertFacts {
                    state: entry.state,
                    interrupted: entry.interrupted,
                    reverted: reverted.contains(&entry.seq),
                    is_step: entry.connector == crate::STEP_CONNECTOR,
                })
            });
            log.reverse();
            Ok(log)
        })
    }

    /// Marks one call reverted and, in the same transaction, the run `rolled_back` (reference §5: a
    /// rollback that reverted something): a rollback killed after its last revert but before it finished
    /// still leaves the run rolled back, and a retry reverts whatever the killed one had not reached. The
    /// update is conditional on the state read, which [`transitions::revertible`] accepted.
    pub fn mark_reverted(&self, id: &str, seq: u64, now: i64) -> Result<(), StoreError> {
        self.write(|tx| {
            let facts = tx.query_row_opt(
                &format!(
                    "SELECT state, interrupted, reverted_at IS NOT NULL, connector FROM cm_log
                     WHERE execution_id = ?1 AND seq = ?2 AND {}",
                    of_runtime("?3")
                ),
                args![id, seq as i64, self.runtime],
                |row| {
                    let state: String = row.get(0)?;
                    Ok(RevertFacts {
                        state: EntryState::parse(&state).unwrap_or(EntryState::Error),
                        interrupted: row.get(1)?,
                        reverted: row.get(2)?,
                        is_step: row.get::<String>(3)? == crate::STEP_CONNECTOR,
                    })
                },
            )?;
            let Some(facts) = facts.filter(|facts| transitions::revertible(*facts)) else {
                return touch(tx, &self.runtime, id, now);
            };
            let reverted = tx.execute(
                "UPDATE cm_log SET state = 'reverted', reverted_at = ?3
                 WHERE execution_id = ?1 AND seq = ?2 AND state = ?4 AND reverted_at IS NULL",
                args![id, seq as i64, now, facts.state.as_str()],
            )?;
            if reverted == 1 {
                tx.execute(
                    "UPDATE cm_executions SET status = 'rolled_back'
                     WHERE id = ?1 AND runtime = ?5 AND rollback_pid IS NOT DISTINCT FROM ?2
                       AND rollback_started IS NOT DISTINCT FROM ?3 AND rollback_host IS NOT DISTINCT FROM ?4",
                    args![id, self.owner.pid, self.owner.started as i64, self.host_id(), self.runtime],
                )?;
            }
            touch(tx, &self.runtime, id, now)
        })
    }

    /// Claims a run for rollback ([`transitions::rollback_step`]): refused while a live process runs a pass
    /// of it or rolls it back; the claim of a process that died mid-rollback is taken over (its reverts are
    /// retried: connectors make them idempotent).
    pub fn claim_rollback(&self, id: &str, now: i64) -> Result<RollbackClaim, StoreError> {
        self.write(|tx| {
            let Some(run) = run_row(tx, &self.runtime, id)? else {
                return Ok(RollbackClaim::Missing);
            };
            match transitions::rollback_step(run.status, self.holders(&run)) {
                RollbackStep::Running(pid) => return Ok(RollbackClaim::Running(pid)),
                RollbackStep::RollingBack(pid) => return Ok(RollbackClaim::RollingBack(pid)),
                RollbackStep::Claim => {}
            }
            let holder = &run.rollback;
            let claimed = tx.execute(
                "UPDATE cm_executions SET rollback_pid = ?5, rollback_started = ?6, rollback_host = ?8, updated_at = ?7
                 WHERE id = ?1 AND status = ?2 AND rollback_pid IS NOT DISTINCT FROM ?3
                   AND rollback_started IS NOT DISTINCT FROM ?4 AND rollback_host IS NOT DISTINCT FROM ?9",
                args![
                    id,
                    run.status.as_str(),
                    holder.pid,
                    holder.started,
                    self.owner.pid,
                    self.owner.started as i64,
                    now,
                    self.host_id(),
                    holder.host
                ],
            )?;
            Ok(if claimed == 1 {
                RollbackClaim::Claimed
            } else {
                RollbackClaim::RollingBack(holder.pid.unwrap_or(0))
            })
        })
    }

    /// Ends this process's rollback claim; with `rolled_back`, the run becomes `rolled_back` (whatever it
    /// was: reference §5) in the same transaction.
    pub fn finish_rollback(&self, id: &str, rolled_back: bool, now: i64) -> Result<(), StoreError> {
        let status = if rolled_back {
            "'rolled_back'"
        } else {
            "status"
        };
        self.write(|tx| {
            tx.execute(
                &format!(
                    "UPDATE cm_executions SET status = {status}, rollback_pid = NULL, rollback_started = NULL,
                         rollback_host = NULL, updated_at = ?2
                     WHERE id = ?1 AND runtime = ?6 AND rollback_pid IS NOT DISTINCT FROM ?3
                       AND rollback_started IS NOT DISTINCT FROM ?4 AND rollback_host IS NOT DISTINCT FROM ?5"
                ),
                args![id, now, self.owner.pid, self.owner.started as i64, self.host_id(), self.runtime],
            )?;
            Ok(())
        })
    }

    /// Saves (or replaces) a snippet from an execution's raw code and recorded connectors.
    pub fn save_snippet(&self, snippet: &Snippet) -> Result<(), StoreError> {
        let schema = snippet.input_schema.as_ref().map(Value::to_string);
        let connectors = serde_json::to_string(&snippet.connectors.clone().unwrap_or_default())
            .unwrap_or_default();
        self.write(|tx| {
            tx.execute(
                "INSERT INTO cm_snippets (runtime, name, description, code, saved_at, input_schema, connectors)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (runtime, name) DO UPDATE SET description = excluded.description,
                   code = excluded.code, saved_at = excluded.saved_at, input_schema = excluded.input_schema,
                   connectors = excluded.connectors",
                args![self.runtime, snippet.name, snippet.description, snippet.code, snippet.saved_at, schema, connectors],
            )?;
            Ok(())
        })
    }

    /// Snippets by name (all, or the one named).
    pub fn snippets(&self, name: Option<&str>) -> Result<Vec<Snippet>, StoreError> {
        self.with(|connection| {
            let rows = connection.query_map(
                "SELECT name, description, code, saved_at, input_schema, connectors FROM cm_snippets
                 WHERE runtime = ?1 AND (CAST(?2 AS TEXT) IS NULL OR name = ?2) ORDER BY name", args![self.runtime, name], |row| {
                Ok(Snippet {
                    name: row.get(0)?,
                    description: row.get(1)?,
                    code: row.get(2)?,
                    saved_at: row.get(3)?,
                    input_schema: parse_json(row.get(4)?),
                    connectors: parse_json(row.get(5)?)
                        .and_then(|v| serde_json::from_value(v).ok()),
                })
            })?;
            Ok(rows)
        })
    }

    pub fn delete_snippet(&self, name: &str) -> Result<bool, StoreError> {
        self.write(|tx| {
            let deleted = tx.execute(
                "DELETE FROM cm_snippets WHERE runtime = ?1 AND name = ?2",
                args![self.runtime, name],
            )?;
            Ok(deleted > 0)
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

    /// Rejects the pending call at `seq` of a paused run (reference §2.5), with an optional reason appended to
    /// the run's error for the agent to read. A run that is not paused (a terminal run's status never changes
    /// back), one a live process is rolling back, or a `seq` that is not pending is refused.
    pub fn reject(
        &self,
        id: &str,
        seq: u64,
        digest: Option<&str>,
        actor: Actor,
        reason: Option<&str>,
        now: i64,
    ) -> Result<Rejection, StoreError> {
        self.write(|tx| {
            let Some(run) = run_row(tx, &self.runtime, id)? else {
                return Ok(Rejection::Missing);
            };
            let call = tx
                .query_row_opt(
                    "SELECT connector, method, state FROM cm_log WHERE execution_id = ?1 AND seq = ?2",
                    args![id, seq as i64],
                    |row| {
                        let state: String = row.get(2)?;
                        Ok((row.get::<String>(0)?, row.get::<String>(1)?, EntryState::parse(&state)))
                    },
                )?;
            match transitions::reject_step(run.status, self.holders(&run), call.as_ref().and_then(|c| c.2)) {
                RejectStep::NotPaused(status) => return Ok(Rejection::NotPaused(status)),
                RejectStep::RollingBack(pid) => return Ok(Rejection::RollingBack(pid)),
                RejectStep::NotPending => return Ok(Rejection::NotPending),
                RejectStep::Reject => {}
            }
            let Some((connector, method, _)) = call else {
                return Ok(Rejection::NotPending);
            };
            if run.handed {
                return Ok(Rejection::AlreadyDecided);
            }
            if let Some(digest) = digest
                && let Some(other) = other_call(tx, id, Some(&CallRef { seq, digest: Some(digest.to_owned()) }))?
            {
                return Ok(Rejection::OtherCall(other));
            }
            let decision = Decision {
                kind: DecisionKind::Rejected,
                by: actor.as_str().to_owned(),
                at: now,
                reason: reason.map(str::to_owned),
                rule: None,
                args: None,
                shown: None,
            };
            tx.execute(
                &format!(
                    "UPDATE cm_log SET state = 'reverted', decided_by = ?3, decided_at = ?4, decision = {}
                     WHERE execution_id = ?1 AND seq = ?2 AND state = 'pending'",
                    decision_with_shown(tx.dialect(), "?5")
                ),
                args![id, seq as i64, actor.as_str(), now, serde_json::to_string(&decision).unwrap_or_default()],
            )?;
            let error = match reason {
                Some(reason) => format!("Action {connector}.{method} rejected by user: {reason}"),
                None => format!("Action {connector}.{method} rejected by user"),
            };
            tx.execute(
                "UPDATE cm_executions SET status = 'rejected', error = ?2, updated_at = ?3 WHERE id = ?1 AND status = 'paused'",
                args![id, cap(&error), now],
            )?;
            Ok(Rejection::Rejected)
        })
    }

    pub fn status(&self, id: &str) -> Result<Option<ExecutionStatus>, StoreError> {
        self.with(|connection| status_of(connection, &self.runtime, id))
    }

    /// Changes whenever the store changed, through this process or any other. On SQLite `PRAGMA
    /// data_version` moves on other connections' commits and `total_changes` on ours; on PostgreSQL the
    /// count of notifications received moves on every commit anywhere, and the count of this store's
    /// commits at once on ours (docs/shared-store.md, "Live updates").
    pub fn change_token(&self) -> Result<(i64, u64), StoreError> {
        match &self.database {
            Database::Sqlite(connection) => off_async_workers(|| {
                let connection = connection.lock().unwrap_or_else(|p| p.into_inner());
                let version: i64 =
                    connection.query_row("PRAGMA data_version", [], |row| row.get(0))?;
                Ok((version, connection.total_changes()))
            }),
            Database::Postgres(postgres) => Ok((postgres.announced() as i64, postgres.commits())),
        }
    }

    /// Waits for a change after `seen` (a [`Store::change_token`]), up to `timeout`: on PostgreSQL until a
    /// notification arrives; on SQLite, whose file has no notifications, for a short poll interval.
    pub async fn changed(&self, seen: (i64, u64), timeout: Duration) {
        match &self.database {
            Database::Sqlite(_) => tokio::time::sleep(timeout.min(SQLITE_POLL)).await,
            Database::Postgres(postgres) => {
                postgres.changed(seen.0.max(0) as u64, timeout).await;
            }
        }
    }

    /// What the listener hears of runs other hosts handed to this one; `None` on SQLite, or once taken.
    pub fn take_hand_offs(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<Handed>> {
        match &self.database {
            Database::Postgres(postgres) => postgres.take_hand_offs(),
            Database::Sqlite(_) => None,
        }
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
                        oh.name, e.handed,
                        l.seq, l.connector, l.method, l.args, l.result, l.requires_approval, l.ephemeral, l.state,
                        l.decided_by, l.decided_at, l.interrupted, l.divergence, l.error, l.decision, l.canonical
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
                 ORDER BY e.created_at DESC, e.id DESC
                 LIMIT ?5"),
                args![self.runtime, status, query.before, pattern, limit as i64 + 1, PREVIEW],
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

    /// Pending calls of paused runs, newest run first (reference §2.6).
    pub fn pending(&self, id: Option<&str>) -> Result<Vec<PendingAction>, StoreError> {
        self.with(|connection| {
            let sql = "SELECT l.execution_id, l.seq, l.connector, l.method, l.args, l.interrupted, l.canonical
                 FROM cm_executions e JOIN cm_log l ON l.execution_id = e.id
                 WHERE e.runtime = ?1 AND e.status = 'paused' AND l.state = 'pending'
                   AND (CAST(?2 AS TEXT) IS NULL OR e.id = ?2)
                 ORDER BY e.created_at DESC, e.id DESC, l.seq ASC";
            connection.query_map(sql, args![self.runtime, id], |row| {
                let args = parse_json(row.get::<Option<String>>(4)?);
                Ok(PendingAction {
                    execution_id: row.get(0)?,
                    seq: row.get::<i64>(1)? as u64,
                    connector: row.get(2)?,
                    method: row.get(3)?,
                    digest: crate::model::args_digest(args.as_ref()),
                    args,
                    canonical: parse_json(row.get::<Option<String>>(6)?),
                    interrupted: row.get(5)?,
                })
            })
        })
    }

    /// The entries a pass may answer without asking the host (applied, not ephemeral), and one past the
    /// highest seq recorded in any state.
    pub fn replay_log(&self, id: &str) -> Result<(Vec<ReplayEntry>, u64), StoreError> {
        self.with(|connection| {
            let rows = connection.query_map(
                &format!(
                    "SELECT seq, connector, method, args, result FROM cm_log
                     WHERE execution_id = ?1 AND state = 'applied' AND ephemeral = 0 AND {} ORDER BY seq",
                    of_runtime("?2")
                ),
                args![id, self.runtime],
                |row| {
                    Ok(ReplayEntry {
                        seq: row.get::<i64>(0)? as u64,
                        connector: row.get(1)?,
                        method: row.get(2)?,
                        args: raw(row.get::<Option<String>>(3)?),
                        result: raw(row.get::<Option<String>>(4)?),
                    })
                },
            )?;
            let entries = rows;
            let end: i64 = connection.query_row(
                &format!(
                    "SELECT coalesce(max(seq) + 1, 0) FROM cm_log WHERE execution_id = ?1 AND {}",
                    of_runtime("?2")
                ),
                args![id, self.runtime],
                |row| row.get(0),
            )?;
            Ok((entries, end.max(0) as u64))
        })
    }
}

/// Runs blocking work without holding an async worker thread: on a multi-threaded tokio runtime the worker
/// hands its other tasks to another thread for the duration (a no-op when the caller already left the
/// worker, as a pass does); elsewhere (no runtime, a current-thread runtime) it simply runs.
fn off_async_workers<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

fn raw(text: Option<String>) -> Option<Box<serde_json::value::RawValue>> {
    text.and_then(|t| serde_json::value::RawValue::from_string(t).ok())
}

fn parse_decision(text: Option<String>) -> Option<Decision> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

fn parse_json(text: Option<String>) -> Option<Value> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

/// A run's columns as [`execution_row`] reads them, from `cm_executions e` and its owner's host.
const EXECUTION_COLUMNS: &str =
    "SELECT e.id, e.code, e.status, e.result, e.error, e.logs, e.connectors, e.source, e.created_at,
            e.updated_at, e.owner_pid, e.owner_started, e.owner_host, oh.heartbeat_at, oh.machine, oh.name,
            e.handed
     FROM cm_executions e LEFT JOIN cm_hosts oh ON oh.id = e.owner_host";

fn owner_of(pid: Option<u32>, started: Option<i64>) -> Option<ProcessIdentity> {
    Some(ProcessIdentity {
        pid: pid?,
        started: started.unwrap_or(0) as u64,
    })
}

fn execution_row(store: &Store, row: &Row) -> Result<ExecutionState> {
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
    })
}

fn log_of(connection: &dyn Sql, runtime: &str, id: &str) -> Result<Vec<ToolLogEntry>> {
    let rows = connection.query_map(
        "SELECT seq, connector, method, args, result, requires_approval, ephemeral, state, decided_by, decided_at,
                interrupted, divergence, error, decision, canonical
         FROM cm_log WHERE execution_id = ?1
           AND EXISTS (SELECT 1 FROM cm_executions r WHERE r.id = ?1 AND r.runtime = ?2)
         ORDER BY seq", args![id, runtime], |row| log_entry(row, 0))?;
    Ok(rows)
}

/// Where the log columns start in the rows of [`Store::paused_executions`]: after [`EXECUTION_COLUMNS`].
const LOG_AT: usize = 17;

/// A log entry from the 15 columns of `cm_log` that start at `at` (in the order `log_of` selects them).
fn log_entry(row: &Row, at: usize) -> Result<ToolLogEntry> {
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
    })
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

fn recorded_call(tx: &dyn Sql, id: &str, seq: u64) -> Result<Option<RecordedRow>> {
    tx.query_row_opt(
        "SELECT connector, method, args, result, ephemeral, state, error, decision FROM cm_log
         WHERE execution_id = ?1 AND seq = ?2",
        args![id, seq as i64],
        |row| {
            let state: String = row.get(5)?;
            Ok(RecordedRow {
                connector: row.get(0)?,
                method: row.get(1)?,
                args: parse_json(row.get(2)?),
                result: parse_json(row.get(3)?),
                ephemeral: row.get(4)?,
                state: EntryState::parse(&state).unwrap_or(EntryState::Error),
                error: row.get(6)?,
                decision: parse_decision(row.get(7)?),
            })
        },
    )
}

/// Why the calls waiting in run `id` do not include the one `expected` names — another seq waits, or the
/// call at that seq has other arguments than the ones shown — or `None` when it waits as shown
/// (docs/design.md, "A decision names its call").
pub(super) fn other_call(
    tx: &dyn Sql,
    id: &str,
    expected: Option<&CallRef>,
) -> Result<Option<String>> {
    let Some(expected) = expected else {
        return Ok(None);
    };
    let waiting = tx.query_map(
        "SELECT seq, args FROM cm_log WHERE execution_id = ?1 AND state = 'pending' ORDER BY seq",
        args![id],
        |row| {
            Ok((
                row.get::<i64>(0)? as u64,
                parse_json(row.get::<Option<String>>(1)?),
            ))
        },
    )?;
    Ok(match waiting.iter().find(|(seq, _)| *seq == expected.seq) {
        Some((_, args))
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
            Some((seq, _)) => format!(
                "execution \"{id}\" now waits on call {seq}, not on call {} that was shown",
                expected.seq
            ),
            None => format!(
                "call {} of execution \"{id}\" is no longer waiting for a decision",
                expected.seq
            ),
        }),
    })
}

fn bump_rules_version(tx: &dyn Sql, runtime: &str) -> Result<()> {
    tx.execute(
        "INSERT INTO cm_rules_version (runtime, version) VALUES (?1, 1)
         ON CONFLICT (runtime) DO UPDATE SET version = cm_rules_version.version + 1",
        args![runtime],
    )?;
    Ok(())
}

/// A rule as the database keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredRule {
    pub rule: Rule,
    pub created_by: String,
    pub created_at: i64,
    pub hits: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_hit: Option<i64>,
}

/// A run's status and who holds it, as the transitions need them.
struct RunRow {
    status: ExecutionStatus,
    /// The process running its pass (or that last ran one), and the one rolling it back.
    owner: Holder,
    rollback: Holder,
    /// Another host's decision waits for this run's host ([`Store::hand_off`]).
    handed: bool,
}

/// A process holding a run (its pass or its rollback) as stored: for updates conditional on it, and to tell
/// whether it still lives.
#[derive(Debug, Clone, PartialEq)]
struct Holder {
    pid: Option<u32>,
    started: Option<i64>,
    /// On a shared store, its host, that host's last heartbeat and its machine.
    host: Option<String>,
    heartbeat: Option<i64>,
    machine: Option<String>,
}

impl Holder {
    /// The holder in columns `at..at + 5`: pid, start time, host, the host's heartbeat and machine.
    fn read(row: &Row, at: usize) -> Result<Holder> {
        Ok(Holder {
            pid: row.get(at)?,
            started: row.get(at + 1)?,
            host: row.get(at + 2)?,
            heartbeat: row.get(at + 3)?,
            machine: row.get(at + 4)?,
        })
    }

    fn process(&self) -> Option<ProcessIdentity> {
        owner_of(self.pid, self.started)
    }
}

/// The columns [`Holder::read`] reads for a run's owner and its rollback, from `cm_executions e` joined
/// with [`HOLDER_HOSTS`].
const OWNER_COLUMNS: &str =
    "e.owner_pid, e.owner_started, e.owner_host, oh.heartbeat_at, oh.machine";
const ROLLBACK_COLUMNS: &str =
    "e.rollback_pid, e.rollback_started, e.rollback_host, rh.heartbeat_at, rh.machine";
const HOLDER_HOSTS: &str = "LEFT JOIN cm_hosts oh ON oh.id = e.owner_host
     LEFT JOIN cm_hosts rh ON rh.id = e.rollback_host";

/// The run `id` of `runtime`; `None` when there is none, or it is another runtime's.
fn run_row(connection: &dyn Sql, runtime: &str, id: &str) -> Result<Option<RunRow>> {
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

fn status_of(connection: &dyn Sql, runtime: &str, id: &str) -> Result<Option<ExecutionStatus>> {
    let status: Option<String> = connection.query_row_opt(
        "SELECT status FROM cm_executions WHERE id = ?1 AND runtime = ?2",
        args![id, runtime],
        |row| row.get(0),
    )?;
    Ok(status.and_then(|s| ExecutionStatus::parse(&s)))
}

fn touch(tx: &dyn Sql, runtime: &str, id: &str, now: i64) -> Result<()> {
    tx.execute(
        "UPDATE cm_executions SET updated_at = ?2 WHERE id = ?1 AND runtime = ?3",
        args![id, now, runtime],
    )?;
    Ok(())
}

/// The condition that the `cm_log` rows of a statement belong to a run of the runtime in parameter `param`.
/// Every statement that names a run by id is scoped to this store's runtime, so a host of another runtime
/// sharing the database can neither read nor change its runs (docs/shared-store.md, "Runs belong to their
/// runtime").
fn of_runtime(param: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM cm_executions r WHERE r.id = cm_log.execution_id AND r.runtime = {param})"
    )
}

/// The internal fail path: the run becomes `error` with the message (capped at the durable limit).
fn fail_in(tx: &dyn Sql, runtime: &str, id: &str, message: &str, now: i64) -> Result<()> {
    tx.execute(
        "UPDATE cm_executions SET status = 'error', error = ?2, updated_at = ?3
         WHERE id = ?1 AND runtime = ?4 AND status = 'running'",
        args![id, cap(message), now, runtime],
    )?;
    Ok(())
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

fn cap(message: &str) -> String {
    message.chars().take(MAX_DURABLE_VALUE).collect()
}

/// Console lines as stored: while too large, the older half is dropped behind a marker (reference §7.2).
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

/// Deletes terminal executions beyond the newest `retention.keep` (never `except`); returns the deleted ids.
/// A run holding a record ([`HOLDS_A_RECORD`]) is deleted only once it is older than
/// `retention.keep_decided_for`: otherwise an agent's trivial runs would push a person's decision, or what was
/// done and undone after it, out of the log (docs/design.md, "Retention").
fn prune(
    store: &Store,
    tx: &dyn Sql,
    retention: Retention,
    now: i64,
    except: Option<&str>,
) -> Result<Vec<String>> {
    let ids: Vec<String> = {
        let rows = tx.query_map(
            &format!(
                "SELECT e.id, {ROLLBACK_COLUMNS}
                 FROM (SELECT id FROM cm_executions
                       WHERE runtime = ?1 AND status IN ('completed', 'error', 'rejected', 'rolled_back')
                         AND id IS DISTINCT FROM ?2
                       ORDER BY created_at DESC, id DESC LIMIT 9223372036854775807 OFFSET ?3) beyond
                 JOIN cm_executions e ON e.id = beyond.id {HOLDER_HOSTS}
                 WHERE e.updated_at < ?4 OR NOT ({HOLDS_A_RECORD})
                 ORDER BY e.created_at DESC, e.id DESC"
            ),
            args![
                store.runtime,
                except,
                i64::try_from(retention.keep).unwrap_or(i64::MAX),
                retention.record_cutoff(now)
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
        ids
    };
    for id in &ids {
        tx.execute("DELETE FROM cm_log WHERE execution_id = ?1", args![id])?;
        tx.execute("DELETE FROM cm_executions WHERE id = ?1", args![id])?;
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

/// Opens (creating and migrating) an SQLite store file, owner-only.
fn open_sqlite(path: &Path) -> Result<rusqlite::Connection, StoreError> {
    if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_private_folder(folder).map_err(|source| StoreError::Folder {
            path: folder.display().to_string(),
            source,
        })?;
    }
    create_private_file(path).map_err(|source| StoreError::Folder {
        path: path.display().to_string(),
        source,
    })?;
    let mut connection = rusqlite::Connection::open(path)?;
    connection.busy_timeout(Duration::from_secs(10))?;
    connection.set_prepared_statement_cache_capacity(256);
    // A newer build's database is refused before anything (even the journal mode) is written to it.
    let version: i64 = connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: path.display().to_string(),
            found: version,
        });
    }
    connection.pragma_update(None, "journal_mode", "WAL")?;
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    connection.pragma_update(None, "foreign_keys", "ON")?;
    migrate(&mut connection, path)?;
    Ok(connection)
}

/// Connects to a PostgreSQL store and brings its schema up to this build's. A server that cannot be reached,
/// or whose schema is newer, is refused before anything is written to it.
fn open_postgres(url: &str, runtime: &str, host: &str) -> Result<postgres::Postgres, StoreError> {
    let address = postgres::masked(url);
    let unreachable = |error: DbError| StoreError::Unreachable {
        address: address.clone(),
        reason: error.to_string(),
    };
    let database = postgres::Postgres::connect(url, runtime, host).map_err(unreachable)?;
    let newer = |found: i64| StoreError::NewerSchema {
        path: address.clone(),
        found,
    };
    let found = postgres_schema_version(&database.connection()?)?;
    if found > SCHEMA_VERSION {
        return Err(newer(found));
    }
    if found == SCHEMA_VERSION {
        return Ok(database);
    }
    // Hosts starting together migrate one at a time; each reads the version again under the lock.
    let schema_lock = [postgres::Lock::Exclusive(advisory_key(
        "codemode schema",
        "",
    ))];
    let found = database.transaction(&schema_lock, "", |tx| {
        tx.batch("CREATE TABLE IF NOT EXISTS cm_schema (version BIGINT NOT NULL)")?;
        let found = postgres_schema_version(tx)?;
        if found >= SCHEMA_VERSION {
            return Ok(found);
        }
        for (reaches, migration) in POSTGRES_MIGRATIONS {
            if *reaches > found {
                tx.batch(migration)?;
            }
        }
        tx.execute("DELETE FROM cm_schema", args![])?;
        tx.execute(
            "INSERT INTO cm_schema (version) VALUES (?1)",
            args![SCHEMA_VERSION],
        )?;
        Ok(found)
    })?;
    if found > SCHEMA_VERSION {
        return Err(newer(found));
    }
    Ok(database)
}

/// The schema version a PostgreSQL store holds; 0 for an empty database.
fn postgres_schema_version(connection: &dyn Sql) -> Result<i64> {
    let exists: bool = connection.query_row(
        "SELECT to_regclass('cm_schema') IS NOT NULL",
        args![],
        |row| row.get(0),
    )?;
    if !exists {
        return Ok(0);
    }
    connection.query_row(
        "SELECT coalesce(max(version), 0) FROM cm_schema",
        args![],
        |row| row.get(0),
    )
}

/// A PostgreSQL advisory lock's key for `name` in `space`: the first 8 bytes of their SHA-256.
fn advisory_key(space: &str, name: &str) -> i64 {
    use sha2::Digest;
    let digest = sha2::Sha256::new()
        .chain_update(space)
        .chain_update([0])
        .chain_update(name)
        .finalize();
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(bytes)
}

fn migrate(connection: &mut rusqlite::Connection, path: &Path) -> Result<(), StoreError> {
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: path.display().to_string(),
            found: version,
        });
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(migration)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
    }
    tx.commit()?;
    Ok(())
}

/// Values that cannot be recorded at all (a cycle, a throwing getter): the reference's message.
pub fn unserialisable(what: &str, reason: &str) -> String {
    not_serializable_message(what, reason)
}

fn create_private_folder(folder: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if folder.exists() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)
}

/// Creates the database file owner-only before SQLite opens it (its WAL files take the same mode).
fn create_private_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if path.exists() {
        return Ok(());
    }
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
        .map(drop)
}
