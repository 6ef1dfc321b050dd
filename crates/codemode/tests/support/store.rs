//! Where a test's store is: the SQLite file it names or, with `CODEMODE_TEST_STORE=postgres`, a database of
//! its own on the server `CODEMODE_TEST_POSTGRES` names (scripts/lib/postgres.sh starts a throwaway one),
//! named after the file's path — so the runtime's whole suite runs on both stores, and a helper process given
//! the same path opens the same database (docs/shared-store.md, "Testing").

use codemode::StoreLocation;
use sha2::Digest;
use std::path::Path;
use std::process::Command;

/// The PostgreSQL server the tests may use, if any. `CODEMODE_REQUIRE_POSTGRES=1` (the suite's script sets
/// it) makes a missing one a failure rather than a skipped test.
pub fn postgres_server() -> Option<String> {
    let server = std::env::var("CODEMODE_TEST_POSTGRES")
        .ok()
        .filter(|url| !url.is_empty());
    if server.is_none() && std::env::var("CODEMODE_REQUIRE_POSTGRES").is_ok_and(|v| v == "1") {
        panic!("CODEMODE_REQUIRE_POSTGRES=1 but CODEMODE_TEST_POSTGRES names no server");
    }
    server
}

/// Whether the runtime's suite runs on PostgreSQL (`CODEMODE_TEST_STORE=postgres`).
pub fn on_postgres() -> bool {
    std::env::var("CODEMODE_TEST_STORE").is_ok_and(|store| store == "postgres")
}

/// The store for the file `db`: that file, or its own PostgreSQL database.
pub fn store_at(db: &Path) -> StoreLocation {
    if !on_postgres() {
        return StoreLocation::File(db.to_owned());
    }
    let server =
        postgres_server().expect("CODEMODE_TEST_STORE=postgres needs CODEMODE_TEST_POSTGRES");
    // Tests keep other files beside the store (effects logs), as they would beside an SQLite file.
    if let Some(folder) = db.parent() {
        std::fs::create_dir_all(folder).expect("the test's folder");
    }
    let digest = sha2::Sha256::digest(db.as_os_str().as_encoded_bytes());
    let name: String = digest[..10].iter().map(|b| format!("{b:02x}")).collect();
    let name = format!("cm_{name}");
    psql(&server, &format!("CREATE DATABASE {name}"), true);
    StoreLocation::Postgres(database_url(&server, &name))
}

/// A fresh database of its own on the test server (for tests of the shared store itself), or `None` (the
/// test is skipped, saying so) when there is no server.
pub fn fresh_postgres(name: &str) -> Option<String> {
    let Some(server) = postgres_server() else {
        eprintln!("skipped: CODEMODE_TEST_POSTGRES names no PostgreSQL server");
        return None;
    };
    let database = format!("cm_{name}_{}", uuid::Uuid::new_v4().simple());
    psql(&server, &format!("CREATE DATABASE {database}"), false);
    Some(database_url(&server, &database))
}

fn database_url(server: &str, database: &str) -> String {
    let (base, _) = server
        .rsplit_once('/')
        .expect("the server URL names a database");
    format!("{base}/{database}")
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

/// Runs `sql` with psql on `url`; with `may_exist`, "already exists" is not a failure.
pub fn psql(url: &str, sql: &str, may_exist: bool) {
    psql_output(url, sql, may_exist);
}

/// Runs `sql` with psql on `url` and returns what it printed (unaligned, tuples only).
pub fn psql_output(url: &str, sql: &str, may_exist: bool) -> String {
    let output = Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-Aqtc", sql])
        .output()
        .expect("psql runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() || (may_exist && stderr.contains("already exists")),
        "psql {sql}: {stderr}"
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Makes a PostgreSQL database refuse every write to the runtime's tables, as a read-only one does.
pub const PG_REFUSE_WRITES: &str = "
CREATE FUNCTION cm_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
  RAISE EXCEPTION 'cannot execute % in a read-only transaction', TG_OP USING ERRCODE = 'read_only_sql_transaction';
END $$;
CREATE TRIGGER cm_test_refuse_log BEFORE INSERT OR UPDATE OR DELETE ON cm_log
  FOR EACH STATEMENT EXECUTE FUNCTION cm_test_refuse();
CREATE TRIGGER cm_test_refuse_runs BEFORE INSERT OR UPDATE OR DELETE ON cm_executions
  FOR EACH STATEMENT EXECUTE FUNCTION cm_test_refuse();";

pub const PG_TAKE_WRITES: &str = "
DROP TRIGGER IF EXISTS cm_test_refuse_log ON cm_log;
DROP TRIGGER IF EXISTS cm_test_refuse_runs ON cm_executions;
DROP FUNCTION IF EXISTS cm_test_refuse();";
