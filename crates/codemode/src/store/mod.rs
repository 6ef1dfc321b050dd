//! The durable store: executions, their per-call log, snippets and rules, in one SQLite file (WAL) or in a
//! shared PostgreSQL database (docs/shared-store.md). Every state change is one transaction whose update is
//! conditional on the state it observed, so two processes sharing the store (on one machine or several) can
//! never both resume, both reject, or both execute an approved call. The statements are written once
//! ([`sql`]) and run on either database.

mod call_log;
mod changes;
mod claims;
mod devices_table;
mod error;
mod faults;
mod fresh_call;
mod hosts;
mod location;
mod migrations;
mod people;
mod permissions;
mod postgres;
mod postgres_tls;
mod queries;
mod quorum;
mod reruns;
mod retention;
mod rollback;
mod rows;
mod rules_table;
mod runs;
mod snippets_table;
pub(crate) mod sql;
mod transactions;

pub use call_log::{CallPlan, ToldStep, unserialisable};
pub use claims::{Claim, Recover, Rejection, Resume};
pub use devices_table::{Device, Redeemed};
pub use error::StoreError;
pub use faults::StoreFault;
pub use hosts::{Adoption, HEARTBEAT_EVERY, HOST_TIMEOUT_MS, HostIdentity};
pub use location::StoreLocation;
pub use migrations::SCHEMA_VERSION;
pub use permissions::{StoreRole, grant_sql};
pub use postgres::Handed;
pub use queries::{RecentCallRow, ReplayLog};
pub use quorum::Tally;
pub use retention::{Deletion, Retention};
pub use rollback::RollbackClaim;
pub use sql::DbError;

use crate::clock::Clock;
use crate::owner::ProcessIdentity;
use std::sync::{Arc, Mutex};
use transactions::Database;

type Result<T, E = DbError> = std::result::Result<T, E>;

/// A runtime's store: its database and who this process is in it.
pub struct Store {
    database: Database,
    runtime: String,
    owner: ProcessIdentity,
    /// This process's host, on a shared store (docs/shared-store.md, "Hosts"); `None` on an SQLite file.
    host: Option<HostIdentity>,
    /// Tells how old a host's heartbeat is.
    clock: Arc<dyn Clock>,
    /// The database server's clock minus this process's, as last measured (ms; 0 on SQLite): heartbeats are
    /// written and judged in the server's time, so hosts whose clocks disagree still agree on who is alive
    /// (docs/shared-store.md, "Hosts").
    server_offset: std::sync::atomic::AtomicI64,
    /// When the offset was measured (real time: the injected clock may stand still or jump in tests).
    offset_measured: Mutex<Option<std::time::Instant>>,
    /// The server lets this connection's role delete runs (retention is the admins' once permissions are
    /// enforced: docs/shared-store.md, "People and permissions"); read with the clock's offset. Always so on
    /// SQLite.
    may_delete_runs: std::sync::atomic::AtomicBool,
    /// The role the shared store's server authenticated this connection as (empty on SQLite), for messages.
    login: Mutex<String>,
    /// This machine, as hosts record theirs: a process of a host on this machine is looked up by its pid.
    machine: String,
    /// The advisory lock a PostgreSQL write transaction holds: one per runtime, as SQLite's write lock is one
    /// per file (docs/shared-store.md, "Transactions").
    write_lock: i64,
}
