//! What the CLI's integration tests share: the built `codemode` binary and the sandbox worker beside it.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const BINARY: &str = env!("CARGO_BIN_EXE_codemode");

/// The sandbox worker sits beside the binary once the workspace is built; build it if it is not.
pub fn worker() -> PathBuf {
    let worker = Path::new(BINARY).with_file_name("codemode-worker");
    if !worker.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "codemode", "--bin", "codemode-worker"])
            .status()
            .expect("cargo builds the worker");
        assert!(status.success());
    }
    worker
}

/// A fresh database on the PostgreSQL server the shared-store tests use (scripts/lib/postgres.sh starts one,
/// `CODEMODE_TEST_POSTGRES`), as a URL; `None` skips the test, unless `CODEMODE_REQUIRE_POSTGRES=1`
/// (scripts/test) makes a missing server a failure.
#[allow(dead_code)]
pub fn fresh_postgres(label: &str) -> Option<String> {
    let Some(server) = std::env::var("CODEMODE_TEST_POSTGRES")
        .ok()
        .filter(|s| !s.is_empty())
    else {
        assert!(
            std::env::var("CODEMODE_REQUIRE_POSTGRES").as_deref() != Ok("1"),
            "CODEMODE_REQUIRE_POSTGRES=1 but CODEMODE_TEST_POSTGRES names no server"
        );
        eprintln!("skipped: CODEMODE_TEST_POSTGRES names no PostgreSQL server");
        return None;
    };
    let database = format!("cm_{label}_{}", uuid::Uuid::new_v4().simple());
    let created = Command::new("psql")
        .args([
            server.as_str(),
            "-qc",
            &format!("CREATE DATABASE {database}"),
        ])
        .status()
        .expect("psql runs");
    assert!(created.success(), "CREATE DATABASE {database}");
    let (base, _) = server
        .rsplit_once('/')
        .expect("the server URL names a database");
    Some(format!("{base}/{database}"))
}
