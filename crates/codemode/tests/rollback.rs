//! Rollback (docs/semantics.md §5; docs/design.md, difference 3): compensation newest first for every applied
//! call with a revert, a report instead of an exception, and the reference's status rule.

mod support;

use codemode::{Actor, Connector, EntryState, ExecutionStatus, Runtime, RuntimeOptions};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use support::items::Items;

fn temp_db() -> PathBuf {
    std::env::temp_dir()
        .join(format!("codemode-test-{}", uuid::Uuid::new_v4()))
        .join("codemode.db")
}

async fn open(db: &Path, connectors: Vec<Arc<dyn Connector>>) -> Runtime {
    let options = RuntimeOptions {
        worker: Some(support::worker_path()),
        revert_timeout: Duration::from_millis(200),
        ..RuntimeOptions::default()
    };
    Runtime::open(support::store_at(db), options, connectors)
        .await
        .expect("runtime opens")
}

#[tokio::test(flavor = "multi_thread")]
async fn rollback_reverts_newest_first_and_reports_what_it_did() {
    let items = Items::new();
    let runtime = open(&temp_db(), vec![items.clone()]).await;
    let code = "async () => { await items.list_items(); await items.add_note({ text: 'n' }); const item = await items.create_item({ title: 't' }); return item.id }";
    let paused = runtime.execute(code).await.unwrap();
    let id = paused.execution_id().to_owned();
    assert_eq!(
        runtime
            .approve(&id, Actor::Console, None)
            .await
            .unwrap()
            .status(),
        "completed"
    );
    assert_eq!(
        items.with(|s| (s.items.len(), s.notes.clone())),
        (1, vec!["n".to_owned()])
    );

    let report = serde_json::to_value(runtime.rollback(&id).await.unwrap()).unwrap();
    assert_eq!(
        report,
        json!({"executionId": id, "status": "rolled_back",
               "reverted": [{"seq": 2, "connector": "items", "method": "create_item"}, {"seq": 1, "connector": "items", "method": "add_note"}],
               "skipped": [{"seq": 0, "connector": "items", "method": "list_items", "reason": "no revert"}],
               "failed": []})
    );
    assert_eq!(
        items.with(|s| (s.items.len(), s.notes.clone(), s.deleted.len())),
        (0, vec!["__reverted__".to_owned()], 1)
    );
    let execution = runtime.execution(&id).unwrap().unwrap();
    assert_eq!(execution.status, ExecutionStatus::RolledBack);
    assert_eq!(
        execution.result,
        Some(json!(1)),
        "the result stays in the audit trail"
    );
    let states: Vec<EntryState> = execution.log.iter().map(|e| e.state).collect();
    assert_eq!(
        states,
        vec![
            EntryState::Applied,
            EntryState::Reverted,
            EntryState::Reverted
        ]
    );
    assert_eq!(
        items.with(|s| s.disposes.iter().map(|d| d.1).collect::<Vec<_>>()),
        vec![ExecutionStatus::Completed, ExecutionStatus::RolledBack]
    );

    let again = runtime.rollback(&id).await.unwrap();
    assert!(
        again.reverted.is_empty() && again.failed.is_empty(),
        "a second rollback is a no-op"
    );
    assert_eq!(items.with(|s| s.disposes.len()), 2);
    let unknown = runtime.rollback("exec_nope").await.unwrap_err();
    assert_eq!(unknown.refusal(), Some(codemode::RefusalKind::NotFound));
    assert_eq!(
        unknown.to_string(),
        "No execution \"exec_nope\" to roll back."
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rolling_back_a_paused_run_ends_it_only_when_something_was_reverted() {
    let items = Items::new();
    let runtime = open(&temp_db(), vec![items.clone()]).await;
    let read_only = runtime
        .execute(
            "async () => { await items.list_items(); await items.create_item({ title: 'a' }) }",
        )
        .await
        .unwrap();
    let report = runtime.rollback(read_only.execution_id()).await.unwrap();
    assert_eq!(
        report.status,
        Some(ExecutionStatus::Paused),
        "nothing reverted: still paused"
    );

    let with_note = runtime.execute("async () => { await items.add_note({ text: 'x' }); await items.create_item({ title: 'b' }) }").await.unwrap();
    let id = with_note.execution_id().to_owned();
    let report = runtime.rollback(&id).await.unwrap();
    assert_eq!(report.status, Some(ExecutionStatus::RolledBack));
    assert_eq!(
        runtime.execution(&id).unwrap().unwrap().log[1].state,
        EntryState::Pending
    );
    let late =
        json!({"error": runtime.approve(&id, Actor::Console, None).await.unwrap_err().to_string()});
    assert!(
        late["error"]
            .as_str()
            .unwrap()
            .contains("is not paused (status: rolled_back)")
    );
    assert_eq!(items.with(|s| s.items.len()), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn failing_and_hanging_reverts_do_not_stop_the_rest() {
    let items = Items::new();
    let runtime = open(&temp_db(), vec![items.clone()]).await;
    let done = runtime
        .execute("async () => { await items.add_note({ text: 'keep going' }); await items.stuck(); await items.fragile() }")
        .await
        .unwrap();
    let report =
        serde_json::to_value(runtime.rollback(done.execution_id()).await.unwrap()).unwrap();
    assert_eq!(
        report["failed"],
        json!([
            {"seq": 2, "connector": "items", "method": "fragile", "error": "revert boom"},
            {"seq": 1, "connector": "items", "method": "stuck", "error": "revert timed out after 200 ms"}
        ])
    );
    assert_eq!(
        report["reverted"],
        json!([{"seq": 0, "connector": "items", "method": "add_note"}])
    );
    assert_eq!(report["status"], "rolled_back");
    let log = runtime.execution(done.execution_id()).unwrap().unwrap().log;
    assert_eq!(
        log[2].state,
        EntryState::Applied,
        "a failed revert leaves the call applied"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_of_a_connector_that_is_no_longer_configured_are_skipped() {
    let db = temp_db();
    let items = Items::new();
    let runtime = open(&db, vec![items.clone()]).await;
    let done = runtime
        .execute("async () => items.add_note({ text: 'x' })")
        .await
        .unwrap();
    let bare = open(&db, vec![]).await;
    let report = serde_json::to_value(bare.rollback(done.execution_id()).await.unwrap()).unwrap();
    assert_eq!(
        report["skipped"],
        json!([{"seq": 0, "connector": "items", "method": "add_note", "reason": "connector not configured"}])
    );
    assert_eq!(report["status"], "completed");
}
