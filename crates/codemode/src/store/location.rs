//! Where a store lives and how it is opened: a file path or a PostgreSQL URL, the file created owner-only
//! and the server's schema brought up to this build's before anything else is written.

use super::hosts::{self, HostIdentity};
use super::migrations::{POSTGRES_MIGRATIONS, SCHEMA_VERSION, migrate, postgres_schema_version};
use super::postgres;
use super::sql::{DbError, Sql, args};
use super::transactions::{Database, advisory_key};
use super::{Store, StoreError};
use crate::clock::Clock;
use crate::owner::ProcessIdentity;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
        let store = Store {
            database,
            runtime: runtime.to_owned(),
            owner: ProcessIdentity::current(),
            host,
            clock,
            machine: hosts::this_machine(),
            write_lock: advisory_key("codemode runtime", runtime),
            server_offset: std::sync::atomic::AtomicI64::new(0),
            offset_measured: Mutex::new(None),
            may_delete_runs: std::sync::atomic::AtomicBool::new(true),
            login: Mutex::new(String::new()),
        };
        // The server's clock is measured once at open, so the first heartbeat is already in its time.
        store.server_now();
        Ok(store)
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
