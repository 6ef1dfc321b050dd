//! How every statement reaches the database: a read, a write transaction, or one that touches a single
//! run's rows, always off the async worker threads.

use super::postgres;
use super::sql::Sql;
use super::{Result, Store, StoreError};
use rusqlite::TransactionBehavior;
use std::sync::Mutex;

pub(super) enum Database {
    /// One connection, shared by the runtime's threads.
    Sqlite(Mutex<rusqlite::Connection>),
    Postgres(postgres::Postgres),
}

impl Store {
    /// Every statement runs here: off the async worker threads (SQLite blocks, for up to its busy timeout
    /// when another process holds the write lock, and PostgreSQL waits on the network), so one request
    /// waiting on the database never stalls the others — `codemode mcp` runs a single worker thread.
    pub(super) fn with<T>(
        &self,
        mut f: impl FnMut(&dyn Sql) -> Result<T>,
    ) -> Result<T, StoreError> {
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
    pub(super) fn write<T>(
        &self,
        mut f: impl FnMut(&dyn Sql) -> Result<T>,
    ) -> Result<T, StoreError> {
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
    pub(super) fn write_run<T>(
        &self,
        id: &str,
        mut f: impl FnMut(&dyn Sql) -> Result<T>,
    ) -> Result<T, StoreError> {
        match &self.database {
            Database::Sqlite(_) => self.write(f),
            Database::Postgres(postgres) => off_async_workers(|| {
                // A run's writes are taken in the order they were made: one sent ahead lands first.
                postgres.land(id);
                Ok(
                    postgres.transaction(&self.run_locks(id), &self.runtime, |connection| {
                        f(connection)
                    })?,
                )
            }),
        }
    }
}

/// Runs blocking work without holding an async worker thread: on a multi-threaded tokio runtime the worker
/// hands its other tasks to another thread for the duration (a no-op when the caller already left the
/// worker, as a pass does); elsewhere (no runtime, a current-thread runtime) it simply runs.
pub(super) fn off_async_workers<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

/// A PostgreSQL advisory lock's key for `name` in `space`: the first 8 bytes of their SHA-256.
pub(super) fn advisory_key(space: &str, name: &str) -> i64 {
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
