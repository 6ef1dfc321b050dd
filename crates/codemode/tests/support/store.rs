//! Where a test's store is: the SQLite file it names or, when `CODEMODE_TEST_POSTGRES` names a PostgreSQL
//! server (scripts/lib/postgres.sh starts a throwaway one), a database of its own on that server, named after
//! the file's path — so the runtime's whole suite runs on both stores, and a helper process given the same
//! path opens the same database (docs/shared-store.md, "Testing").

use codemode::StoreLocation;
use sha2::Digest;
use std::path::Path;
use std::process::Command;

/// The PostgreSQL server the suite runs on, if any.
pub fn postgres_server() -> Option<String> {
    std::env::var("CODEMODE_TEST_POSTGRES")
        .ok()
        .filter(|url| !url.is_empty())
}

pub fn on_postgres() -> bool {
    postgres_server().is_some()
}

/// The store for the file `db`: that file, or its own PostgreSQL database.
pub fn store_at(db: &Path) -> StoreLocation {
    let Some(server) = postgres_server() else {
        return StoreLocation::File(db.to_owned());
    };
    // Tests keep other files beside the store (effects logs), as they would beside an SQLite file.
    if let Some(folder) = db.parent() {
        std::fs::create_dir_all(folder).expect("the test's folder");
    }
    let digest = sha2::Sha256::digest(db.as_os_str().as_encoded_bytes());
    let name: String = digest[..10].iter().map(|b| format!("{b:02x}")).collect();
    let name = format!("cm_{name}");
    psql(&server, &format!("CREATE DATABASE {name}"), true);
    let (base, _) = server
        .rsplit_once('/')
        .expect("the server URL names a database");
    StoreLocation::Postgres(format!("{base}/{name}"))
}

/// Runs `sql` on the store directly, as another program sharing it would.
pub fn execute_sql(store: &StoreLocation, sql: &str) {
    match store {
        StoreLocation::File(path) => {
            rusqlite::Connection::open(path)
                .expect("the store file opens")
                .execute_batch(sql)
                .expect("the statement runs");
        }
        StoreLocation::Postgres(url) => psql(url, sql, false),
    }
}

fn psql(url: &str, sql: &str, may_exist: bool) {
    let output = Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-qc", sql])
        .output()
        .expect("psql runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() || (may_exist && stderr.contains("already exists")),
        "psql {sql}: {stderr}"
    );
}
