//! Owner-only modes under the most permissive umask: a data directory codemode creates, `connectors.json`, the
//! undo state and the undo records (which hold a file's previous bytes) are 0700 / 0600 even with `umask 000`;
//! a data directory that already existed keeps its mode (docs/design.md, "The data directory"). Its own test
//! binary: the umask is per process, and no other test may create files while it is 000 (the tests here take
//! turns).

use codemode::CallContext;
use connectors::owner_only::{self, DataDir};
use connectors::{Home, HomeOptions};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

mod support;
use support::{scratch, worker};

/// The tests of this binary change the process's umask: one at a time.
static UMASK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

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

/// Opens a home in `data` under `umask 000`, has the files connector write over a workspace file (an undo
/// record keeps its previous bytes), and checks that everything codemode keeps inside is owner-only.
async fn open_and_write_under_umask_000(data: &Path) {
    std::fs::create_dir_all(data.join("workspace")).unwrap();
    std::fs::write(data.join("workspace/notes.txt"), "private notes").unwrap();
    let options = HomeOptions {
        worker: Some(worker()),
        ..HomeOptions::default()
    };
    let home = Home::open(data, options).await.expect("home");
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
    for folder in [&state, &state.join("files"), &execution] {
        assert_eq!(mode(folder), 0o700, "{}", folder.display());
    }
    for file in [
        &record,
        &data.join("connectors.json"),
        &data.join("codemode.db"),
    ] {
        assert_eq!(mode(file), 0o600, "{}", file.display());
    }
}

#[tokio::test]
async fn a_created_data_directory_is_owner_only() {
    let _turn = UMASK.lock().await;
    let base = scratch("modes");
    // SAFETY: umask only swaps the process's file creation mask; the tests of this binary take turns.
    let _restore = Umask(unsafe { libc::umask(0) });
    // Two levels that do not exist yet: both are codemode's to create.
    let data = base.join("fresh/data");
    assert_eq!(owner_only::data_dir(&data).unwrap(), DataDir::Created);
    for folder in [&base.join("fresh"), &data] {
        assert_eq!(mode(folder), 0o700, "{}", folder.display());
    }
    open_and_write_under_umask_000(&data).await;
    assert_eq!(mode(&data), 0o700);
}

/// A person may point the runtime at a folder others use too, such as a shared temporary folder: tightening it
/// would lock every other user out of it.
#[tokio::test]
async fn an_existing_data_directory_keeps_its_permissions() {
    let _turn = UMASK.lock().await;
    let base = scratch("modes");
    // SAFETY: as above.
    let _restore = Umask(unsafe { libc::umask(0) });
    let shared = base.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let found = owner_only::data_dir(&shared).unwrap();
    assert_eq!(found, DataDir::Existing { mode: 0o1777 });
    assert!(found.others_can_write(), "what the warning is about");
    open_and_write_under_umask_000(&shared).await;
    assert_eq!(
        std::fs::metadata(&shared).unwrap().permissions().mode() & 0o7777,
        0o1777,
        "the shared folder keeps its mode"
    );
    // A folder only its owner writes to is not warned about, and keeps its mode too.
    let readable = base.join("readable");
    std::fs::create_dir(&readable).unwrap();
    std::fs::set_permissions(&readable, std::fs::Permissions::from_mode(0o755)).unwrap();
    let found = owner_only::data_dir(&readable).unwrap();
    assert_eq!(found, DataDir::Existing { mode: 0o755 });
    assert!(!found.others_can_write());
    open_and_write_under_umask_000(&readable).await;
    assert_eq!(mode(&readable), 0o755);
}
