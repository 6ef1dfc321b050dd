//! Owner-only modes under the most permissive umask: the data directory, `connectors.json`, the undo state and
//! the undo records (which hold a file's previous bytes) are 0700 / 0600 even with `umask 000`, and a data
//! directory a host created with the default mode is tightened. Its own test binary: the umask is per process,
//! and no other test may create files while it is 000.

use codemode::CallContext;
use connectors::{Home, HomeOptions};
use serde_json::json;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;

mod support;
use support::{scratch, worker};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// Restores the umask when the test ends, even by a failed assertion.
struct Umask(libc::mode_t);

impl Drop for Umask {
    fn drop(&mut self) {
        // SAFETY: umask only swaps the process's file creation mask.
        unsafe { libc::umask(self.0) };
    }
}

#[tokio::test]
async fn undo_data_and_the_data_dir_stay_owner_only_under_umask_000() {
    let base = scratch("modes");
    // SAFETY: as above; this binary runs no other test that could create files meanwhile.
    let _restore = Umask(unsafe { libc::umask(0) });
    let data = base.join("data");
    // A host that created the data directory the default way before opening it.
    std::fs::DirBuilder::new()
        .mode(0o755)
        .create(&data)
        .unwrap();
    std::fs::create_dir_all(data.join("workspace")).unwrap();
    std::fs::write(data.join("workspace/notes.txt"), "private notes").unwrap();
    let options = HomeOptions {
        worker: Some(worker()),
        ..HomeOptions::default()
    };
    let home = Home::open(&data, options).await.expect("home");
    assert_eq!(home.config_error, None);
    let files = home
        .connectors
        .all
        .iter()
        .find(|c| c.name() == "files")
        .expect("the default files connector")
        .clone();
    let ctx = CallContext {
        execution_id: "exec_0000000000000001_modes".into(),
        seq: 0,
    };
    files
        .execute(
            "write_file",
            Some(json!({"path": "notes.txt", "content": "overwritten"})),
            ctx,
        )
        .await
        .expect("write");
    let state = data.join("state");
    let execution = state.join("files/exec_0000000000000001_modes");
    let record = execution.join("0.json");
    assert!(
        std::fs::read_to_string(&record)
            .unwrap()
            .contains("cHJpdmF0ZSBub3Rlcw=="),
        "the record holds the previous bytes"
    );
    for folder in [&data, &state, &state.join("files"), &execution] {
        assert_eq!(mode(folder), 0o700, "{}", folder.display());
    }
    for file in [&record, &data.join("connectors.json")] {
        assert_eq!(mode(file), 0o600, "{}", file.display());
    }
}
