//! The errors a store call ends with that are not a run's outcome.

use super::migrations::SCHEMA_VERSION;
use super::sql::DbError;

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
    /// The shared store's server refused an operation to this role; the message names the role it needs.
    #[error("{message}")]
    NeedsRole { message: String },
}

impl StoreError {
    /// The shared store's server refused this for the role connected (SQLSTATE 42501).
    pub fn is_permission_denied(&self) -> bool {
        match self {
            StoreError::Database(error) => error.is_permission_denied(),
            StoreError::NeedsRole { .. } => true,
            _ => false,
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        StoreError::Database(DbError::Sqlite(error))
    }
}
