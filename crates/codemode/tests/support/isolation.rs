//! Runs belong to their runtime (docs/shared-store.md, "Runs belong to their runtime"): what a runtime of
//! another name sharing the same store can do to a run it names by id — nothing. Used on SQLite
//! (`tests/runtime.rs`) and on PostgreSQL (`tests/shared_store.rs`).

use codemode::RefusalKind;
use codemode::{
    Actor, Adoption, Deletion, ExecutionQuery, ExecutionState, Recover, Retention, RollbackClaim,
    Runtime, RuntimeError, Store,
};
use serde_json::json;

/// A program that pauses on `items.create_item` (approval-gated, revertible).
pub const CREATE: &str = "async () => items.create_item({ title: 'mine' })";

/// Two runs of `owner`: one paused on its gated call, one whose approved call was applied.
pub async fn paused_and_done(owner: &Runtime) -> (String, String) {
    let done = owner.execute(CREATE).await.unwrap();
    let done = done.execution_id().to_owned();
    let outcome = owner.approve(&done, Actor::Console, None).await.unwrap();
    assert_eq!(outcome.status(), "completed", "{outcome:?}");
    let paused = owner.execute(CREATE).await.unwrap();
    assert_eq!(paused.status(), "paused", "{paused:?}");
    (paused.execution_id().to_owned(), done)
}

fn not_found<T: std::fmt::Debug>(what: &str, result: Result<T, RuntimeError>) {
    assert!(
        matches!(&result, Err(e) if e.refusal() == Some(RefusalKind::NotFound)),
        "{what}: {result:?}"
    );
}

/// Everything `intruder` (a runtime of another name on the owner's store) and `intruder_store` (a store opened
/// under that other name) may try on the owner's runs `paused` and `done`: each is refused as not found, or
/// changes nothing. Returns nothing; the caller then checks the owner's runs are as they were.
pub async fn another_runtime_cannot_touch(
    intruder: &Runtime,
    intruder_store: &Store,
    paused: &str,
    done: &str,
) {
    // Reads by id: not found.
    for id in [paused, done] {
        assert_eq!(intruder.execution(id).unwrap(), None, "execution {id}");
        assert_eq!(intruder.execution_head(id).unwrap(), None, "head {id}");
        assert!(
            intruder.pending(Some(id)).unwrap().is_empty(),
            "pending {id}"
        );
        assert_eq!(intruder_store.status(id).unwrap(), None, "status {id}");
        let (replay, end) = intruder_store.replay_log(id).unwrap();
        assert!(replay.is_empty() && end == 0, "replay log {id}");
        assert!(intruder_store.actions_to_revert(id).unwrap().is_empty());
        assert_eq!(intruder_store.handed_decision(id).unwrap(), None);
        not_found("rollback plan", intruder.rollback_plan(id).await);
    }
    // Lists: none of the owner's runs.
    assert!(intruder.pending(None).unwrap().is_empty());
    assert!(intruder.executions(None).unwrap().is_empty());
    assert!(intruder.paused_executions().unwrap().is_empty());
    let page = intruder
        .list_executions(&ExecutionQuery::default())
        .unwrap();
    assert!(page.executions.is_empty());
    let after_paused = ExecutionQuery {
        before: Some(paused.to_owned()),
        ..ExecutionQuery::default()
    };
    assert!(
        intruder
            .list_executions(&after_paused)
            .unwrap()
            .executions
            .is_empty()
    );

    // Decisions and operations through the runtime: not found.
    not_found(
        "approve",
        intruder.approve(paused, Actor::Console, None).await,
    );
    not_found(
        "approve edited",
        intruder
            .approve(paused, Actor::Console, Some(json!({"title": "theirs"})))
            .await,
    );
    not_found(
        "reject",
        intruder.reject(paused, 0, Actor::Console, Some("no")).await,
    );
    not_found("preview", intruder.preview(paused, 0).await);
    for id in [paused, done] {
        not_found("rollback", intruder.rollback(id).await);
        not_found("recover", intruder.recover(id).await);
        not_found("delete", intruder.delete_execution(id).await);
    }
    // Sweeps of the other runtime pass the owner's runs by.
    assert!(
        intruder
            .expire_paused(std::time::Duration::ZERO)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(intruder.prune_executions(0).await.unwrap(), 0);

    // Every transition of the store, named by id: refused, or nothing changes.
    let now = i64::MAX / 2;
    assert_eq!(
        intruder_store.delete(paused).unwrap(),
        Deletion::Missing,
        "delete"
    );
    assert_eq!(
        intruder_store.claim_rollback(done, now).unwrap(),
        RollbackClaim::Missing
    );
    assert_eq!(intruder_store.recover(done, now).unwrap(), Recover::Missing);
    if intruder_store.is_shared() {
        assert_eq!(
            intruder_store.adopt(paused, &["items".to_owned()]).unwrap(),
            Adoption::Missing
        );
    }
    intruder_store.withdraw_handed(paused, "refused").unwrap();
    assert!(
        !intruder_store
            .record_shown(paused, 0, r#"{"digest":"x","at":0}"#)
            .unwrap()
    );
    // Written without reading the entry first (one round trip on PostgreSQL): that it changed nothing is
    // what the snapshot below checks.
    intruder_store
        .record_result(paused, 0, Some(&json!("forged")), now)
        .unwrap();
    intruder_store
        .record_error(paused, 0, "forged error", now)
        .unwrap();
    assert!(
        !intruder_store
            .record_step(paused, 1, "forged", Ok(Some(&json!(1))), now)
            .unwrap()
    );
    // Steps told together (one statement on PostgreSQL) are held to the same condition.
    assert!(
        !intruder_store
            .record_steps(paused, &two_steps_told(), now)
            .unwrap()
    );
    intruder_store
        .fail_unrecordable(paused, 0, "forged failure", now)
        .unwrap();
    assert_eq!(
        intruder_store
            .complete(paused, Some(&json!("forged")), &[], now, true, None)
            .unwrap(),
        None
    );
    intruder_store.fail(paused, "forged failure", now).unwrap();
    intruder_store.mark_reverted(done, 0, now).unwrap();
    intruder_store.finish_rollback(done, true, now).unwrap();
    assert!(intruder_store.expire(i64::MAX, now).unwrap().is_empty());
    assert!(
        intruder_store
            .prune(Retention::count(0))
            .unwrap()
            .is_empty()
    );
}

/// The owner's runs, to compare before and after.
/// Two new steps' values, told together, for a run that must not take them.
pub fn two_steps_told() -> [codemode::ToldStep; 2] {
    [1, 2].map(|seq| codemode::ToldStep {
        seq,
        name: "forged".to_owned(),
        value: Some(json!(seq)),
    })
}

pub fn snapshot(owner: &Runtime, ids: [&str; 2]) -> Vec<ExecutionState> {
    ids.iter()
        .map(|id| {
            owner
                .execution(id)
                .unwrap()
                .expect("the owner sees its run")
        })
        .collect()
}
