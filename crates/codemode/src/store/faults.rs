//! Failures a test makes the store suffer, to check what a run does when its writes are refused
//! (docs/design.md, "When the store fails").

use super::Store;
use super::transactions::Database;

/// A failure a test makes the store suffer (`Runtime::inject_store_fault_for_tests`).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreFault {
    /// Every write refused, as by a read-only database.
    ReadOnly,
    /// Every write that grows the database refused, as by a full disk.
    Full,
}

impl Store {
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
}
