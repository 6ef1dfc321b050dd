//! The `files` connector: every method, every escape attempt, idempotent effects per (execution id, seq), and
//! rollback of each write kind — after completion, and after the runtime was reopened — through a real runtime.

use codemode::{Actor, CallContext, Connector, Runtime, RuntimeOptions};
use connectors::FilesConnector;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod support;
use support::worker;

struct Place {
    root: PathBuf,
    state: PathBuf,
    db: PathBuf,
    outside: PathBuf,
}

fn place() -> Place {
    let base = std::env::temp_dir().join(format!("codemode-files-{}", uuid::Uuid::new_v4()));
    let outside = base.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    Place {
        root: base.join("workspace"),
        state: base.join("state"),
        db: base.join("codemode.db"),
        outside,
    }
}

fn files(place: &Place) -> FilesConnector {
    FilesConnector::new("files", &place.root, &place.state, None).expect("files connector")
}

/// No temporary file of a write or a restore is left in the workspace.
fn assert_no_temporaries(root: &Path) {
    let leftovers: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".codemode-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn ctx(seq: u64) -> CallContext {
    CallContext {
        execution_id: "exec_0000000000000001_test".into(),
        seq,
    }
}

async fn call(
    files: &FilesConnector,
    method: &str,
    args: Value,
    seq: u64,
) -> Result<Value, String> {
    files
        .execute(method, Some(args), ctx(seq))
        .await
        .map(|v| v.unwrap_or(Value::Null))
}

async fn runtime(place: &Place) -> Runtime {
    let options = RuntimeOptions {
        worker: Some(worker()),
        ..RuntimeOptions::default()
    };
    let connector: Arc<dyn Connector> = Arc::new(files(place));
    Runtime::open(&place.db, options, vec![connector])
        .await
        .expect("runtime")
}

#[tokio::test]
async fn every_method_works_with_the_documented_shapes() {
    let place = place();
    let f = files(&place);
    assert_eq!(
        call(
            &f,
            "write_file",
            json!({"path": "a.txt", "content": "hello"}),
            0
        )
        .await
        .unwrap(),
        json!({"path": "a.txt", "size": 5, "created": true})
    );
    assert_eq!(
        call(
            &f,
            "write_file",
            json!({"path": "a.txt", "content": "hello!"}),
            1
        )
        .await
        .unwrap(),
        json!({"path": "a.txt", "size": 6, "created": false})
    );
    assert_eq!(
        call(&f, "read_file", json!({"path": "a.txt"}), 2)
            .await
            .unwrap(),
        json!({"path": "a.txt", "content": "hello!", "size": 6})
    );
    call(
        &f,
        "write_file",
        json!({"path": "bin.dat", "content": "AP8=", "encoding": "base64"}),
        3,
    )
    .await
    .unwrap();
    assert_eq!(
        call(
            &f,
            "read_file",
            json!({"path": "bin.dat", "encoding": "base64"}),
            4
        )
        .await
        .unwrap()["content"],
        "AP8="
    );
    let not_utf8 = call(&f, "read_file", json!({"path": "bin.dat"}), 5)
        .await
        .unwrap_err();
    assert_eq!(
        not_utf8,
        "bin.dat is not valid UTF-8; read it with encoding: \"base64\""
    );
    std::fs::create_dir_all(place.root.join("sub")).unwrap();
    call(
        &f,
        "write_file",
        json!({"path": "sub/b.txt", "content": "b"}),
        6,
    )
    .await
    .unwrap();
    let listing = call(&f, "list_dir", json!({}), 7).await.unwrap();
    assert_eq!(
        listing,
        json!({"path": ".", "entries": [
        {"name": "a.txt", "type": "file", "size": 6}, {"name": "bin.dat", "type": "file", "size": 2}, {"name": "sub", "type": "dir", "size": 0}]})
    );
    assert_eq!(
        call(&f, "list_dir", json!({"path": "sub"}), 8)
            .await
            .unwrap()["entries"][0]["name"],
        "b.txt"
    );
    let stat = call(&f, "stat", json!({"path": "a.txt"}), 9).await.unwrap();
    assert_eq!(
        (stat["type"].clone(), stat["size"].clone()),
        (json!("file"), json!(6))
    );
    assert!(stat["modifiedMs"].as_u64().unwrap() > 1_600_000_000_000);
    let refused = call(
        &f,
        "move_file",
        json!({"from": "a.txt", "to": "sub/b.txt"}),
        10,
    )
    .await
    .unwrap_err();
    assert_eq!(
        refused,
        "sub/b.txt: already exists (pass overwrite: true to replace it)"
    );
    assert_eq!(
        call(&f, "move_file", json!({"from": "a.txt", "to": "c.txt"}), 11)
            .await
            .unwrap(),
        json!({"from": "a.txt", "to": "c.txt"})
    );
    assert_eq!(
        call(&f, "delete_file", json!({"path": "c.txt"}), 12)
            .await
            .unwrap(),
        json!({"path": "c.txt", "deleted": true})
    );
    assert_eq!(
        call(&f, "delete_file", json!({"path": "c.txt"}), 13)
            .await
            .unwrap(),
        json!({"path": "c.txt", "deleted": false})
    );
    assert_eq!(
        call(&f, "read_file", json!({"path": "c.txt"}), 14)
            .await
            .unwrap_err(),
        "c.txt: no such file or directory"
    );
    assert!(
        call(&f, "write_file", json!({"path": "x"}), 15)
            .await
            .unwrap_err()
            .starts_with("files.write_file: invalid arguments: missing field `content`")
    );
    assert_eq!(
        call(&f, "nope", json!({}), 16).await.unwrap_err(),
        "Tool \"nope\" not found on files"
    );
    let tools = f.tools().await.unwrap();
    let gated: Vec<&str> = tools
        .iter()
        .filter(|t| t.requires_approval)
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(gated, vec!["write_file", "delete_file", "move_file"]);
}

#[tokio::test]
async fn every_escape_is_refused() {
    use std::os::unix::fs::symlink;
    let place = place();
    let f = files(&place);
    symlink(
        place.outside.join("secret.txt"),
        place.root.join("link.txt"),
    )
    .unwrap();
    symlink(&place.outside, place.root.join("linkdir")).unwrap();
    std::fs::create_dir(place.root.join("a")).unwrap();
    let absolute = place.outside.join("secret.txt").display().to_string();
    for (method, args) in [
        ("read_file", json!({"path": "../outside/secret.txt"})),
        ("read_file", json!({"path": absolute})),
        ("read_file", json!({"path": "a/../../outside/secret.txt"})),
        ("read_file", json!({"path": "link.txt"})),
        ("read_file", json!({"path": "linkdir/secret.txt"})),
        (
            "write_file",
            json!({"path": "linkdir/new.txt", "content": "x"}),
        ),
        (
            "write_file",
            json!({"path": "../escape.txt", "content": "x"}),
        ),
        ("delete_file", json!({"path": "linkdir/secret.txt"})),
        (
            "move_file",
            json!({"from": "linkdir/secret.txt", "to": "stolen.txt"}),
        ),
        ("list_dir", json!({"path": "linkdir"})),
        ("list_dir", json!({"path": ".."})),
        ("stat", json!({"path": "../outside"})),
    ] {
        let error = call(&f, method, args.clone(), 0)
            .await
            .expect_err(&format!("{method} {args} must be refused"));
        assert!(
            error.ends_with("refused, the path leads outside the workspace"),
            "{method} {args}: {error}"
        );
    }
    // A folder swapped for a symlink after it was seen: the next operation still cannot leave the root.
    std::fs::create_dir(place.root.join("swap")).unwrap();
    call(
        &f,
        "write_file",
        json!({"path": "swap/ok.txt", "content": "inside"}),
        1,
    )
    .await
    .unwrap();
    std::fs::remove_dir_all(place.root.join("swap")).unwrap();
    symlink(&place.outside, place.root.join("swap")).unwrap();
    let error = call(
        &f,
        "write_file",
        json!({"path": "swap/ok.txt", "content": "escaped"}),
        2,
    )
    .await
    .unwrap_err();
    assert!(error.contains("outside the workspace"), "{error}");
    assert_eq!(
        std::fs::read_to_string(place.outside.join("secret.txt")).unwrap(),
        "secret"
    );
    assert!(!place.outside.join("ok.txt").exists());
    assert!(!place.outside.join("new.txt").exists());
}

#[tokio::test]
async fn a_repeated_call_with_the_same_seq_applies_once() {
    let place = place();
    let f = files(&place);
    let first = call(
        &f,
        "write_file",
        json!({"path": "once.txt", "content": "v1"}),
        5,
    )
    .await
    .unwrap();
    std::fs::write(place.root.join("once.txt"), "edited by a person").unwrap();
    let again = call(
        &f,
        "write_file",
        json!({"path": "once.txt", "content": "v1"}),
        5,
    )
    .await
    .unwrap();
    assert_eq!(first, again);
    assert_eq!(
        std::fs::read_to_string(place.root.join("once.txt")).unwrap(),
        "edited by a person"
    );
}

/// A process killed inside a revert, after the file was put back but before that was noted, leaves the
/// record saying "not reverted": the next revert must see the file already restored and succeed, not fail
/// with "changed since" (and a move put back must not be moved again).
#[tokio::test]
async fn a_revert_interrupted_after_restoring_succeeds_when_retried() {
    let place = place();
    let f = files(&place);
    std::fs::create_dir_all(&place.root).unwrap();
    std::fs::write(place.root.join("kept.txt"), "original").unwrap();
    std::fs::write(place.root.join("from.txt"), "moved content").unwrap();
    std::fs::write(place.root.join("to.txt"), "replaced").unwrap();
    call(
        &f,
        "write_file",
        json!({"path": "kept.txt", "content": "new"}),
        0,
    )
    .await
    .unwrap();
    call(
        &f,
        "write_file",
        json!({"path": "fresh.txt", "content": "x"}),
        1,
    )
    .await
    .unwrap();
    call(
        &f,
        "move_file",
        json!({"from": "from.txt", "to": "to.txt", "overwrite": true}),
        2,
    )
    .await
    .unwrap();
    // What the interrupted reverts had already done.
    std::fs::write(place.root.join("kept.txt"), "original").unwrap();
    std::fs::remove_file(place.root.join("fresh.txt")).unwrap();
    std::fs::rename(place.root.join("to.txt"), place.root.join("from.txt")).unwrap();
    for seq in [2, 1, 0] {
        let method = if seq == 2 { "move_file" } else { "write_file" };
        assert_eq!(
            f.revert(method, None, None, ctx(seq)).await,
            Ok(true),
            "seq {seq}"
        );
    }
    let read = |name: &str| std::fs::read_to_string(place.root.join(name)).ok();
    assert_eq!(read("kept.txt").as_deref(), Some("original"));
    assert_eq!(read("fresh.txt"), None);
    assert_eq!(read("from.txt").as_deref(), Some("moved content"));
    assert_eq!(read("to.txt").as_deref(), Some("replaced"));
    assert_no_temporaries(&place.root);
}

#[tokio::test]
async fn writes_replace_whole_files_keeping_their_permissions_and_leave_no_temporaries() {
    use std::os::unix::fs::PermissionsExt;
    let place = place();
    let f = files(&place);
    std::fs::create_dir_all(place.root.join("folder")).unwrap();
    std::fs::write(place.root.join("run.sh"), "old").unwrap();
    std::fs::set_permissions(
        place.root.join("run.sh"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    call(
        &f,
        "write_file",
        json!({"path": "run.sh", "content": "new"}),
        0,
    )
    .await
    .unwrap();
    let script = place.root.join("run.sh");
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "new");
    let mode = std::fs::metadata(&script).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o750);
    let refused = call(
        &f,
        "write_file",
        json!({"path": "folder", "content": "x"}),
        1,
    )
    .await;
    assert!(refused.is_err(), "a folder is not overwritten: {refused:?}");
    assert!(place.root.join("folder").is_dir());
    assert_no_temporaries(&place.root);
}

#[tokio::test]
async fn a_call_the_host_died_in_before_it_touched_the_workspace_has_nothing_to_undo() {
    let place = place();
    let f = files(&place);
    // No result recorded: the host died during the call, before the connector kept its undo record.
    assert_eq!(f.revert("write_file", None, None, ctx(7)).await, Ok(true));
    // A call recorded as applied without an undo record is a loss to report, not a success.
    let applied = Some(json!({"path": "a.txt", "size": 1, "created": true}));
    assert_eq!(
        f.revert("write_file", None, applied, ctx(7)).await,
        Err("nothing was recorded for this call, so it cannot be undone".to_owned())
    );
    assert!(!place.root.join("a.txt").exists());
}

const WRITES: &str = "async () => {
  await files.write_file({ path: 'new.txt', content: 'brand new' });
  await files.write_file({ path: 'existing.txt', content: 'overwritten' });
  await files.delete_file({ path: 'doomed.txt' });
  await files.move_file({ from: 'moving.txt', to: 'target.txt', overwrite: true });
  return 'done';
}";

async fn approve_all(runtime: &Runtime, mut outcome: codemode::Outcome) -> codemode::Outcome {
    while outcome.status() == "paused" {
        outcome = runtime
            .approve(outcome.execution_id(), Actor::Console, None)
            .await
            .unwrap();
    }
    outcome
}

fn seed(place: &Place) {
    std::fs::create_dir_all(&place.root).unwrap();
    std::fs::write(place.root.join("existing.txt"), "original").unwrap();
    std::fs::write(place.root.join("doomed.txt"), [0u8, 159, 146, 150]).unwrap();
    std::fs::write(place.root.join("moving.txt"), "moving").unwrap();
    std::fs::write(place.root.join("target.txt"), "replaced target").unwrap();
}

fn assert_seeded(place: &Place) {
    assert!(!place.root.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(place.root.join("existing.txt")).unwrap(),
        "original"
    );
    assert_eq!(
        std::fs::read(place.root.join("doomed.txt")).unwrap(),
        vec![0u8, 159, 146, 150]
    );
    assert_eq!(
        std::fs::read_to_string(place.root.join("moving.txt")).unwrap(),
        "moving"
    );
    assert_eq!(
        std::fs::read_to_string(place.root.join("target.txt")).unwrap(),
        "replaced target"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rollback_restores_every_write_kind_even_after_a_restart() {
    let place = place();
    seed(&place);
    let first = runtime(&place).await;
    let done = approve_all(&first, first.execute(WRITES).await.unwrap()).await;
    assert_eq!(done.status(), "completed", "{done:?}");
    assert_eq!(
        std::fs::read_to_string(place.root.join("target.txt")).unwrap(),
        "moving"
    );
    let id = done.execution_id().to_owned();
    drop(first);

    let reopened = runtime(&place).await;
    let report = reopened.rollback(&id).await.unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    assert_eq!(report.reverted.len(), 4);
    assert_seeded(&place);
    // What the reverts needed is dropped when the execution is deleted.
    assert!(place.state.read_dir().unwrap().next().is_some());
    reopened.delete_execution(&id).await.unwrap();
    assert!(place.state.read_dir().unwrap().next().is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_edited_since_our_write_is_kept_and_the_revert_fails_with_changed_since() {
    let place = place();
    seed(&place);
    let runtime = runtime(&place).await;
    let done = approve_all(&runtime, runtime.execute(WRITES).await.unwrap()).await;
    std::fs::write(place.root.join("existing.txt"), "a person's edit").unwrap();
    let report = runtime.rollback(done.execution_id()).await.unwrap();
    assert_eq!(report.failed.len(), 1, "{report:?}");
    assert_eq!(report.failed[0].method, "write_file");
    assert_eq!(
        report.failed[0].error,
        "existing.txt changed since this call; the current content is kept"
    );
    assert_eq!(
        report.reverted.len(),
        3,
        "the other writes are still undone"
    );
    assert_eq!(
        std::fs::read_to_string(place.root.join("existing.txt")).unwrap(),
        "a person's edit"
    );
    assert!(!place.root.join("new.txt").exists());
    let paused = runtime
        .execute("async () => files.write_file({ path: 'x.txt', content: 'x' })")
        .await
        .unwrap();
    let json = serde_json::to_value(&paused).unwrap();
    assert_eq!(
        json["pending"][0]["method"], "write_file",
        "writes wait for approval by default"
    );
    assert!(!place.root.join("x.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_create_missing_folders_and_rollback_removes_them_unless_used_since() {
    let place = place();
    std::fs::create_dir_all(&place.root).unwrap();
    let runtime = runtime(&place).await;
    let code = r#"async () => {
      await files.write_file({ path: "notes/2026/plan.txt", content: "plan" });
      await files.write_file({ path: "drafts/a.txt", content: "a" });
      await files.move_file({ from: "drafts/a.txt", to: "archive/old/a.txt" });
      return (await files.read_file({ path: "notes/2026/plan.txt" })).content;
    }"#;
    let done = approve_all(&runtime, runtime.execute(code).await.unwrap()).await;
    assert_eq!(done.status(), "completed", "{done:?}");
    assert!(place.root.join("archive/old/a.txt").exists());
    // Someone else puts a file in one of the created folders: that folder stays.
    std::fs::write(place.root.join("notes/mine.txt"), "mine").unwrap();
    let report = runtime.rollback(done.execution_id()).await.unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    assert!(!place.root.join("notes/2026").exists());
    assert!(place.root.join("notes/mine.txt").exists());
    assert!(!place.root.join("archive").exists());
    assert!(!place.root.join("drafts").exists());
}

/// Every undo record the connector keeps, without the result it returned (which echoes the arguments).
fn records(state: &Path) -> Vec<String> {
    let mut texts = Vec::new();
    for execution in std::fs::read_dir(state).unwrap().flatten() {
        for record in std::fs::read_dir(execution.path()).unwrap().flatten() {
            let text = std::fs::read_to_string(record.path()).unwrap();
            let mut record: Value = serde_json::from_str(&text).unwrap();
            record.as_object_mut().unwrap().remove("result");
            texts.push(record.to_string());
        }
    }
    texts
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rollback_of_a_dotdot_write_keeps_the_folder_it_did_not_create() {
    let place = place();
    std::fs::create_dir_all(place.root.join("keep")).unwrap();
    std::fs::write(place.root.join("moving.txt"), "moving").unwrap();
    let runtime = runtime(&place).await;
    let code = r#"async () => {
      await files.write_file({ path: "n/../keep/f.txt", content: "f" });
      await files.move_file({ from: "./moving.txt", to: "m/./../keep/moved.txt" });
    }"#;
    let done = approve_all(&runtime, runtime.execute(code).await.unwrap()).await;
    assert_eq!(done.status(), "completed", "{done:?}");
    for never_made in ["n", "m"] {
        assert!(!place.root.join(never_made).exists(), "{never_made}");
    }
    for record in records(&place.state) {
        assert!(!record.contains(".."), "{record}");
    }
    let report = runtime.rollback(done.execution_id()).await.unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    assert!(place.root.join("keep").is_dir(), "keep/ was there before");
    assert_eq!(
        std::fs::read_dir(place.root.join("keep")).unwrap().count(),
        0
    );
    assert_eq!(
        std::fs::read_to_string(place.root.join("moving.txt")).unwrap(),
        "moving"
    );
    // Every method reads `..` the same way, whether or not the folder before it exists.
    let f = files(&place);
    call(
        &f,
        "write_file",
        json!({"path": "k/../keep/g.txt", "content": "g"}),
        0,
    )
    .await
    .unwrap();
    let listing = call(&f, "list_dir", json!({"path": "x/../keep"}), 1)
        .await
        .unwrap();
    assert_eq!(listing["entries"][0]["name"], "g.txt", "{listing}");
    let stat = call(&f, "stat", json!({"path": "./keep/./g.txt"}), 2)
        .await
        .unwrap();
    assert_eq!(stat["size"], 1, "{stat}");
    let deleted = call(&f, "delete_file", json!({"path": "d/../keep/g.txt"}), 3)
        .await
        .unwrap();
    assert_eq!(deleted["deleted"], true, "{deleted}");
    for never_made in ["k", "x", "d"] {
        assert!(!place.root.join(never_made).exists(), "{never_made}");
    }
}

#[tokio::test]
async fn a_failed_write_leaves_no_folder_behind() {
    let place = place();
    let f = files(&place);
    for (seq, path) in ["new/../../x.txt", "a/b/../../../x.txt", "/new/x.txt"]
        .into_iter()
        .enumerate()
    {
        let error = call(
            &f,
            "write_file",
            json!({"path": path, "content": "x"}),
            seq as u64,
        )
        .await
        .unwrap_err();
        assert!(
            error.ends_with("refused, the path leads outside the workspace"),
            "{error}"
        );
    }
    let refused = call(
        &f,
        "write_file",
        json!({"path": "new/..", "content": "x"}),
        3,
    )
    .await;
    assert_eq!(
        refused,
        Err("new/..: is the workspace folder, not a file".to_owned())
    );
    // Fails after its first folder was made: a name longer than the filesystem allows.
    let long = "l".repeat(300);
    call(
        &f,
        "write_file",
        json!({"path": format!("deep/{long}/f.txt"), "content": "x"}),
        4,
    )
    .await
    .unwrap_err();
    std::fs::write(place.root.join("a.txt"), "a").unwrap();
    call(
        &f,
        "move_file",
        json!({"from": "a.txt", "to": format!("far/{long}/a.txt")}),
        5,
    )
    .await
    .unwrap_err();
    let left: Vec<_> = std::fs::read_dir(&place.root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("a.txt")]);
    assert!(!place.root.parent().unwrap().join("x.txt").exists());
}
