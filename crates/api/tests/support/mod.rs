//! What the API's integration tests share: the sandbox worker their data directories run programs in.

use std::path::PathBuf;

/// The sandbox worker: beside the test binary's folder once the workspace is built; built if it is not.
pub fn worker() -> PathBuf {
    let worker = codemode::executor::default_worker_path();
    if !worker.exists() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "-p", "codemode", "--bin", "codemode-worker"])
            .status()
            .expect("cargo builds the worker");
        assert!(status.success());
    }
    worker
}
