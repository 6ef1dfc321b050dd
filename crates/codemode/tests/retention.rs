//! Retention (reference §6) with an injected clock: automatic pruning when a run begins, explicit pruning,
//! expiry of stale paused and running runs, deletion — and `forget_execution` whenever a run is removed.

mod support;

use codemode::{Actor, Connector, ExecutionStatus, Runtime, RuntimeOptions};
use std::sync::Arc;
use std::time::Duration;
use support::TestClock;
use support::items::Items;

async fn open(items: &Arc<Items>, clock: &Arc<TestClock>, max_executions: usize) -> Runtime {
    let db = std::env::temp_dir()
        .join(format!("codemode-test-{}", uuid::Uuid::new_v4()))
        .join("codemode.db");
    let options = RuntimeOptions {
        worker: Some(support::worker_path()),
        clock: clock.clone(),
        max_executions,
        ..RuntimeOptions::default()
    };
    let connector: Arc<dyn Connector> = items.clone();
    Runtime::open(support::store_at(&db), options, vec![connector])
        .await
        .expect("runtime opens")
}

const CREATE: &str = "async () => items.create_item({ title: 't' })";

#[tokio::test(flavor = "multi_thread")]
async fn a_new_run_prunes_terminal_runs_beyond_the_limit() {
    let (items, clock) = (Items::new(), TestClock::at(1_000));
    let runtime = open(&items, &clock, 2).await;
    let paused = runtime.execute(CREATE).await.unwrap();
    let mut ids = Vec::new();
    for _ in 0..5 {
        clock.advance(10);
        ids.push(
            runtime
                .execute("async () => 1")
                .await
                .unwrap()
                .execution_id()
                .to_owned(),
        );
    }
    let kept: Vec<String> = runtime
        .executions(None)
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    // The newest two terminal runs survive each prune, plus the run that was just inserted, plus the paused one.
    assert_eq!(
        kept,
        vec![
            ids[4].clone(),
            ids[3].clone(),
            ids[2].clone(),
            paused.execution_id().to_owned()
        ]
    );
    assert_eq!(
        items.with(|s| s.forgotten.clone()),
        vec![ids[0].clone(), ids[1].clone()]
    );
    assert_eq!(runtime.prune_executions(1).await.unwrap(), 2);
    assert_eq!(
        runtime.executions(None).unwrap().len(),
        2,
        "paused runs are never pruned"
    );
    assert_eq!(runtime.pending(None).unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn expiry_rejects_stale_paused_runs_strictly_older_than_the_age() {
    let (items, clock) = (Items::new(), TestClock::at(5_000_000));
    let runtime = open(&items, &clock, 50).await;
    let paused = runtime.execute(CREATE).await.unwrap();
    let id = paused.execution_id().to_owned();
    assert!(
        runtime
            .expire_paused(Duration::from_secs(60))
            .await
            .unwrap()
            .is_empty(),
        "young pause kept"
    );
    assert!(
        runtime
            .expire_paused(Duration::ZERO)
            .await
            .unwrap()
            .is_empty(),
        "strict: not older than now"
    );
    clock.advance(1);
    assert_eq!(
        runtime.expire_paused(Duration::ZERO).await.unwrap(),
        vec![id.clone()]
    );
    let execution = runtime.execution(&id).unwrap().unwrap();
    assert_eq!(execution.status, ExecutionStatus::Rejected);
    assert_eq!(
        execution.error.as_deref(),
        Some("Expired awaiting approval")
    );
    assert!(runtime.pending(None).unwrap().is_empty());
    assert_eq!(
        items.with(|s| s.disposes.clone()),
        vec![(id.clone(), ExecutionStatus::Rejected)]
    );
    let late = serde_json::json!({"error": runtime.approve(&id, Actor::Console, None).await.unwrap_err().to_string()});
    assert_eq!(
        late["error"],
        format!(
            "Execution \"{id}\" is not paused (status: rejected); only a paused run can be approved."
        )
    );
    assert!(
        runtime
            .expire_paused(Duration::ZERO)
            .await
            .unwrap()
            .is_empty(),
        "a second sweep finds nothing"
    );
    assert_eq!(items.with(|s| s.items.len()), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_paused_run_disposes_and_forgets_it() {
    let (items, clock) = (Items::new(), TestClock::at(1));
    let runtime = open(&items, &clock, 50).await;
    let paused = runtime.execute(CREATE).await.unwrap();
    let id = paused.execution_id().to_owned();
    runtime.delete_execution(&id).await.unwrap();
    assert!(runtime.execution(&id).unwrap().is_none());
    assert!(runtime.pending(None).unwrap().is_empty());
    assert_eq!(
        items.with(|s| s.disposes.clone()),
        vec![(id.clone(), ExecutionStatus::Rejected)]
    );
    assert_eq!(items.with(|s| s.forgotten.clone()), vec![id.clone()]);
    assert!(matches!(
        runtime.delete_execution(&id).await,
        Err(codemode::RuntimeError::NotFound(_))
    ));
    let done = runtime.execute("async () => 1").await.unwrap();
    runtime.delete_execution(done.execution_id()).await.unwrap();
    assert_eq!(
        items.with(|s| s.disposes.len()),
        2,
        "a completed run was disposed once, on completion"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unbounded_limit_keeps_everything() {
    let items = Arc::new(Items::default());
    let clock = TestClock::at(1_000);
    let runtime = open(&items, &clock, usize::MAX).await;
    for _ in 0..3 {
        clock.advance(1);
        runtime.execute("async () => 1").await.unwrap();
    }
    assert_eq!(runtime.executions(None).unwrap().len(), 3);
    assert_eq!(runtime.prune_executions(usize::MAX).await.unwrap(), 0);
    assert_eq!(runtime.executions(None).unwrap().len(), 3);
}
