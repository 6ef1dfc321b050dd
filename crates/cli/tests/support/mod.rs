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
