//! How a process learns that the store changed, through itself or any other process
//! (docs/shared-store.md, "Live updates").

use super::postgres::Handed;
use super::transactions::{Database, off_async_workers};
use super::{Store, StoreError};
use std::time::Duration;

/// How often a wait on an SQLite store looks again: another process's commit has no notification.
const SQLITE_POLL: Duration = Duration::from_millis(100);

impl Store {
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
}
