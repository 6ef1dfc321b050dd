//! Retention (docs/semantics.md §6) with an injected clock: automatic pruning when a run begins, explicit
//! pruning, expiry of stale paused and running runs, deletion — and `forget_execution` whenever a run is
//! removed. Runs holding a record (a person's decision, an applied gated call, a revert) outlive retention by
//! count and go by age (docs/design.md, "Retention").

mod support;

use codemode::{Actor, Connector, ExecutionStatus, Runtime, RuntimeOptions};
use std::sync::Arc;
use std::time::Duration;
use support::TestClock;
use support::items::Items;

async fn open(items: &Arc<Items>, clock: &Arc<TestClock>, max_executions: usize) -> Runtime {
    open_keeping(
        items,
        clock,
        max_executions,
        RuntimeOptions::default().keep_decided_for,
    )
    .await
}

/// A runtime keeping `max_executions` finished runs, and runs holding a record for `keep_decided_for`.
async fn open_keeping(
    items: &Arc<Items>,
    clock: &Arc<TestClock>,
    max_executions: usize,
    keep_decided_for: Duration,
) -> Runtime {
    let db = std::env::temp_dir()
        .join(format!("codemode-test-{}", uuid::Uuid::new_v4()))
        .join("codemode.db");
    let options = RuntimeOptions {
        worker: Some(support::worker_path()),
        clock: clock.clone(),
        max_executions,
        keep_decided_for,
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
        Err(e) if e.refusal() == Some(codemode::RefusalKind::NotFound)
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

const NOTE: &str = "async () => items.add_note({ text: 'n' })";

/// Runs `code`, which pauses on its gated call, and returns the run's id.
async fn paused(runtime: &Runtime, code: &str) -> String {
    let outcome = runtime.execute(code).await.unwrap();
    assert_eq!(
        runtime.pending(Some(outcome.execution_id())).unwrap().len(),
        1
    );
    outcome.execution_id().to_owned()
}

/// Runs `count` trivial programs, one millisecond apart; returns their ids.
async fn trivial_runs(runtime: &Runtime, clock: &TestClock, count: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for _ in 0..count {
        clock.advance(1);
        let outcome = runtime.execute("async () => 1").await.unwrap();
        ids.push(outcome.execution_id().to_owned());
    }
    ids
}

fn ids_of(runtime: &Runtime) -> Vec<String> {
    runtime
        .executions(None)
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn fifty_five_trivial_runs_never_erase_an_approved_write_and_its_rollback() {
    let (items, clock) = (Items::new(), TestClock::at(1_000_000));
    let runtime = open(&items, &clock, 50).await;
    // What people decided and undid: an approved write rolled back, an approved write kept, a rejected call,
    // a call nobody decided before it expired, and an ungated write rolled back.
    let rolled_back = paused(&runtime, CREATE).await;
    runtime
        .approve(&rolled_back, Actor::Console, None)
        .await
        .unwrap();
    let report = runtime.rollback(&rolled_back).await.unwrap();
    assert_eq!(report.reverted.len(), 1);
    clock.advance(1);
    let approved = paused(&runtime, CREATE).await;
    runtime.approve(&approved, Actor::Cli, None).await.unwrap();
    clock.advance(1);
    let rejected = paused(&runtime, CREATE).await;
    runtime
        .reject(&rejected, 0, Actor::Console, Some("not now"))
        .await
        .unwrap();
    clock.advance(1);
    let expired = paused(&runtime, CREATE).await;
    clock.advance(1);
    assert_eq!(
        runtime.expire_paused(Duration::ZERO).await.unwrap(),
        vec![expired.clone()]
    );
    clock.advance(1);
    let note_undone = runtime
        .execute(NOTE)
        .await
        .unwrap()
        .execution_id()
        .to_owned();
    assert_eq!(
        runtime.rollback(&note_undone).await.unwrap().reverted.len(),
        1
    );
    // What nobody decided: an ungated write and a trivial run.
    clock.advance(1);
    let note_kept = runtime
        .execute(NOTE)
        .await
        .unwrap()
        .execution_id()
        .to_owned();
    clock.advance(1);
    let early = runtime
        .execute("async () => 0")
        .await
        .unwrap()
        .execution_id()
        .to_owned();
    let records = [&rolled_back, &approved, &rejected, &expired, &note_undone];

    let trivial = trivial_runs(&runtime, &clock, 55).await;
    let kept = ids_of(&runtime);
    for id in records {
        assert!(kept.contains(id), "{id} holds a record and stays");
    }
    for id in [&note_kept, &early] {
        assert!(!kept.contains(id), "{id} decided nothing and goes by count");
    }
    // The newest 50 finished runs, the one just begun, and the five records.
    assert_eq!(kept.len(), 51 + records.len());
    assert_eq!(
        kept[..51],
        trivial[trivial.len() - 51..]
            .iter()
            .rev()
            .cloned()
            .collect::<Vec<_>>()[..]
    );
    // An explicit prune by count keeps them too.
    runtime.prune_executions(0).await.unwrap();
    let kept = ids_of(&runtime);
    assert_eq!(kept.len(), records.len());
    for id in records {
        assert!(
            kept.contains(id),
            "{id} survives an explicit prune by count"
        );
    }
    let forgotten = items.with(|s| s.forgotten.clone());
    for id in records {
        assert!(!forgotten.contains(id), "{id} was never forgotten");
    }
    // The record is whole: who approved the write, and that it was undone.
    let run = runtime.execution(&rolled_back).unwrap().unwrap();
    assert_eq!(run.status, ExecutionStatus::RolledBack);
    let call = &run.log[0];
    assert_eq!(call.state, codemode::EntryState::Reverted);
    let decision = call.decision.as_ref().expect("the person's decision");
    assert_eq!(
        (decision.kind, decision.by.as_str()),
        (codemode::DecisionKind::Approved, "console")
    );
    let run = runtime.execution(&rejected).unwrap().unwrap();
    assert_eq!(
        run.log[0].decision.as_ref().map(|d| d.kind),
        Some(codemode::DecisionKind::Rejected)
    );
    let run = runtime.execution(&expired).unwrap().unwrap();
    assert_eq!(
        run.log[0].decision.as_ref().map(|d| d.kind),
        Some(codemode::DecisionKind::Expired)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_holding_a_record_goes_by_age_or_by_a_persons_delete() {
    let (items, clock) = (Items::new(), TestClock::at(1_000_000));
    let hour = Duration::from_secs(3600);
    let runtime = open_keeping(&items, &clock, 1, hour).await;
    let approved = paused(&runtime, CREATE).await;
    runtime
        .approve(&approved, Actor::Console, None)
        .await
        .unwrap();
    let deleted = paused(&runtime, CREATE).await;
    runtime
        .approve(&deleted, Actor::Console, None)
        .await
        .unwrap();
    trivial_runs(&runtime, &clock, 3).await;
    assert!(ids_of(&runtime).contains(&approved));
    // A person's delete removes a record at once.
    runtime.delete_execution(&deleted).await.unwrap();
    assert!(runtime.execution(&deleted).unwrap().is_none());
    // Exactly `keepDecidedFor` since its last change: still kept. A millisecond more: it goes, by count
    // (here on an explicit prune, and on the next run's begin alike).
    let last_change = runtime.execution(&approved).unwrap().unwrap().updated_at;
    clock.0.store(
        last_change + hour.as_millis() as i64,
        std::sync::atomic::Ordering::SeqCst,
    );
    runtime.prune_executions(1).await.unwrap();
    assert!(
        ids_of(&runtime).contains(&approved),
        "not older than an hour yet"
    );
    trivial_runs(&runtime, &clock, 1).await;
    assert!(
        !ids_of(&runtime).contains(&approved),
        "older than an hour: gone"
    );
    assert!(items.with(|s| s.forgotten.contains(&approved)));
    // A young record among the newest runs stays whatever its age says later: the count keeps it too.
    clock.advance(1);
    let recent = paused(&runtime, CREATE).await;
    runtime
        .approve(&recent, Actor::Console, None)
        .await
        .unwrap();
    clock.advance(2 * hour.as_millis() as i64);
    runtime.prune_executions(1).await.unwrap();
    assert_eq!(ids_of(&runtime), vec![recent]);
}

/// The prune at each run's start looks at a bounded slice just beyond the window for runs holding no record
/// (docs/performance.md, "Retention at each run"), so a backlog — a lower limit than the runs kept — goes a
/// slice per run, and an explicit prune takes it all at once; runs past their time go whatever their place.
#[tokio::test(flavor = "multi_thread")]
async fn a_backlog_beyond_a_lowered_limit_goes_a_slice_per_run_and_at_once_when_asked() {
    let (items, clock) = (Items::new(), TestClock::at(1_000));
    let count = |runtime: &Runtime| runtime.executions(None).unwrap().len();
    let db = std::env::temp_dir()
        .join(format!("codemode-test-{}", uuid::Uuid::new_v4()))
        .join("codemode.db");
    let open_reopened = |max_executions: usize| {
        let options = RuntimeOptions {
            worker: Some(support::worker_path()),
            clock: clock.clone(),
            max_executions,
            ..RuntimeOptions::default()
        };
        let connector: Arc<dyn Connector> = items.clone();
        Runtime::open(support::store_at(&db), options, vec![connector])
    };
    let runtime = open_reopened(1_000).await.unwrap();
    for _ in 0..150 {
        clock.advance(1);
        runtime.execute("async () => 1").await.unwrap();
    }
    drop(runtime);
    // maxExecutions lowered to 10: 140 trivial runs now lie beyond the window.
    let runtime = open_reopened(10).await.unwrap();
    clock.advance(1);
    runtime.execute("async () => 1").await.unwrap();
    assert_eq!(
        count(&runtime),
        151 - 64,
        "one slice of 64 went with the first run"
    );
    clock.advance(1);
    runtime.execute("async () => 1").await.unwrap();
    assert_eq!(count(&runtime), 152 - 128);
    clock.advance(1);
    runtime.execute("async () => 1").await.unwrap();
    assert_eq!(count(&runtime), 11, "the window and the run just begun");
    drop(runtime);

    let runtime = open_reopened(1_000).await.unwrap();
    for _ in 0..100 {
        clock.advance(1);
        runtime.execute("async () => 1").await.unwrap();
    }
    assert_eq!(
        runtime.prune_executions(5).await.unwrap(),
        106,
        "an explicit prune takes all at once"
    );
    assert_eq!(count(&runtime), 5);
}
