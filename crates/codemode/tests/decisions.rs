//! Decisions as records (docs/design.md, "Decisions"): every call a person, a rule or expiry decided carries
//! `decision {kind, by, at, reason?, rule?, args?}`; a rejection is told apart from a rollback by it, never by
//! guessing from `state`; a reason reaches the agent; an edited approval runs the edited arguments while the
//! log keeps what the program sent; several decisions at once stand alone; refusals are typed; and a database
//! written by schema 4 upgrades with the decisions its calls imply.

mod support;

use codemode::RefusalKind;
use codemode::{
    Actor, DecisionKind, EntryState, ExecutionStatus, Outcome, Runtime, RuntimeError,
    RuntimeOptions,
};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use support::ledger::{Ledger, temp_db};

/// Runs `code` and returns its execution id.
async fn run_id(runtime: &codemode::Runtime, code: &str) -> String {
    runtime
        .execute(code)
        .await
        .expect("runs")
        .execution_id()
        .to_owned()
}

fn json_of(outcome: &Outcome) -> Value {
    serde_json::to_value(outcome).expect("outcome serialises")
}

const WRITE: &str = "async () => { await ledger.read(); return await ledger.write({ path: 'notes/a.txt', content: 'hello' }); }";

#[tokio::test(flavor = "multi_thread")]
async fn a_rejection_carries_its_reason_to_the_agent_and_is_told_apart_from_a_rollback() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let rejected = run_id(&runtime, WRITE).await;
    runtime
        .reject(
            &rejected,
            1,
            Actor::Cli,
            Some("write under drafts/ instead"),
        )
        .await
        .unwrap();
    let stored = runtime.execution(&rejected).unwrap().unwrap();
    assert_eq!(stored.status, ExecutionStatus::Rejected);
    assert_eq!(
        stored.error.as_deref(),
        Some("Action ledger.write rejected by user: write under drafts/ instead")
    );
    let decision = stored.log[1].decision.clone().expect("a decision");
    assert_eq!(decision.kind, DecisionKind::Rejected);
    assert_eq!(decision.by, Actor::Cli);
    assert_eq!(
        decision.reason.as_deref(),
        Some("write under drafts/ instead")
    );
    assert_eq!(stored.log[1].state, EntryState::Reverted);
    assert!(
        stored.log[0].decision.is_none(),
        "nobody had to decide the read"
    );

    let rolled = run_id(&runtime, WRITE).await;
    runtime
        .approve(&rolled, Actor::Console, None)
        .await
        .unwrap();
    runtime.rollback(&rolled).await.unwrap();
    let stored = runtime.execution(&rolled).unwrap().unwrap();
    assert_eq!(
        stored.log[1].state,
        EntryState::Reverted,
        "same state as the rejected call"
    );
    let decision = stored.log[1].decision.clone().expect("a decision");
    assert_eq!(
        decision.kind,
        DecisionKind::Approved,
        "but it was approved, then rolled back"
    );
    assert_eq!(decision.by, Actor::Console);
    assert_eq!(decision.reason, None);

    let blank = run_id(&runtime, WRITE).await;
    runtime
        .reject(&blank, 1, Actor::Api, Some("  "))
        .await
        .unwrap();
    assert_eq!(
        runtime.execution(&blank).unwrap().unwrap().error.as_deref(),
        Some("Action ledger.write rejected by user"),
        "a blank reason is no reason"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_approval_runs_the_edited_arguments_and_keeps_what_the_program_sent() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let id = run_id(&runtime, WRITE).await;
    let edited = json!({"path": "drafts/a.txt", "content": "hello"});
    let done = json_of(
        &runtime
            .approve(&id, Actor::Console, Some(edited.clone()))
            .await
            .unwrap(),
    );
    assert_eq!(done["status"], "completed", "{done}");
    let writes: Vec<_> = ledger
        .received_by(&id)
        .into_iter()
        .filter(|r| r.method == "write")
        .collect();
    assert_eq!(writes.len(), 1);
    assert_eq!(
        writes[0].args.as_ref(),
        Some(&edited),
        "what ran is the edit"
    );
    assert_eq!(
        done["calls"][1]["args"],
        json!({"path": "notes/a.txt", "content": "hello"}),
        "the log keeps what the program sent"
    );
    assert_eq!(done["calls"][1]["decision"]["kind"], "edited");
    assert_eq!(done["calls"][1]["decision"]["args"], edited);
    assert_eq!(done["calls"][1]["decision"]["by"], "console");

    // A rollback undoes what ran: the revert gets the edited arguments.
    let report = runtime.rollback(&id).await.unwrap();
    assert_eq!(report.reverted.len(), 1, "{report:?}");
    assert_eq!(ledger.with(|s| s.reverted_args.clone()), [Some(edited)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn edited_arguments_that_do_not_fit_the_input_schema_change_nothing() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let id = run_id(&runtime, WRITE).await;
    let refused = runtime
        .approve(&id, Actor::Console, Some(json!({"content": 3})))
        .await
        .unwrap_err();
    let RuntimeError::InvalidArgs(message) = &refused else {
        panic!("{refused:?}");
    };
    assert!(
        message.starts_with("Edited arguments for ledger.write do not match its input schema: ")
            && message.contains("\"path\" is a required property")
            && message.contains("/content"),
        "{message}"
    );
    assert_eq!(
        runtime.pending(Some(&id)).unwrap().len(),
        1,
        "still waiting"
    );
    assert!(!ledger.received_by(&id).iter().any(|r| r.method == "write"));
}

#[tokio::test(flavor = "multi_thread")]
async fn expiry_is_recorded_as_an_expired_decision() {
    let ledger = Ledger::new();
    let clock = support::TestClock::at(1_700_000_000_000);
    let runtime = ledger.runtime_with(clock.clone()).await;
    let id = run_id(&runtime, WRITE).await;
    clock.advance(25 * 3_600_000);
    assert_eq!(
        runtime
            .expire_paused(Duration::from_secs(24 * 3_600))
            .await
            .unwrap(),
        std::slice::from_ref(&id)
    );
    let stored = runtime.execution(&id).unwrap().unwrap();
    let decision = stored.log[1].decision.clone().expect("a decision");
    assert_eq!(decision.kind, DecisionKind::Expired);
    assert_eq!(decision.by, Actor::Expiry);
    assert_eq!(stored.log[1].decided_by.as_deref(), Some("expiry"));
}

#[tokio::test(flavor = "multi_thread")]
async fn several_decisions_at_once_each_stand_alone() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let a = run_id(&runtime, WRITE).await;
    let done = run_id(&runtime, "async () => 1").await;
    let b = run_id(&runtime, WRITE).await;
    let outcomes = runtime
        .approve_each(
            &[a.clone(), done.clone(), "exec_nope".to_owned(), b.clone()],
            Actor::Cli,
        )
        .await;
    assert_eq!(outcomes.len(), 4);
    assert_eq!(outcomes[0].as_ref().unwrap().status(), "completed");
    assert!(
        matches!(&outcomes[1], Err(e) if e.refusal() == Some(RefusalKind::Stale)),
        "{:?}",
        outcomes[1]
    );
    assert!(
        matches!(&outcomes[2], Err(e) if e.refusal() == Some(RefusalKind::NotFound)),
        "{:?}",
        outcomes[2]
    );
    assert_eq!(outcomes[3].as_ref().unwrap().status(), "completed");

    let c = run_id(&runtime, WRITE).await;
    let d = run_id(&runtime, WRITE).await;
    let results = runtime
        .reject_each(
            &[(c.clone(), 1), (d.clone(), 7), (d.clone(), 1)],
            Actor::Cli,
            Some("not now"),
        )
        .await;
    assert!(results[0].is_ok());
    assert!(
        matches!(&results[1], Err(e) if e.refusal() == Some(RefusalKind::Stale)),
        "{:?}",
        results[1]
    );
    assert!(results[2].is_ok());
    for id in [&c, &d] {
        assert_eq!(
            runtime.execution(id).unwrap().unwrap().error.as_deref(),
            Some("Action ledger.write rejected by user: not now")
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_written_by_schema_4_upgrades_with_the_decisions_its_calls_imply() {
    // Written by the runtime at commit 0f587ef (schema 4): a completed approved run, a rejected one, one
    // approved then rolled back, one expired, one still paused and one that needed no decision.
    if support::on_postgres() {
        // An SQLite file from before PostgreSQL stores existed: there is no such PostgreSQL database.
        return;
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema-4.db");
    let db = temp_db();
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::copy(&fixture, &db).unwrap();
    let ledger = Ledger::new();
    let options = RuntimeOptions {
        worker: Some(support::worker_path()),
        ..RuntimeOptions::default()
    };
    let notes: Arc<dyn codemode::Connector> = Arc::new(Notes);
    let runtime = Runtime::open(support::store_at(&db), options, vec![notes, ledger.clone()])
        .await
        .unwrap();
    let version: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, codemode::SCHEMA_VERSION);

    let executions = runtime.executions(None).unwrap();
    assert_eq!(executions.len(), 6);
    let by_text = |text: &str| {
        executions
            .iter()
            .find(|e| e.code.contains(text))
            .unwrap_or_else(|| panic!("{text}"))
    };
    let kind = |text: &str| {
        by_text(text).log[1].decision.as_ref().map(|d| {
            (
                d.kind,
                d.by,
                d.at == by_text(text).log[1].decided_at.unwrap_or(-1),
            )
        })
    };
    assert_eq!(
        kind("'approved'"),
        Some((DecisionKind::Approved, Actor::Console, true))
    );
    assert_eq!(
        kind("'rejected'"),
        Some((DecisionKind::Rejected, Actor::Cli, true))
    );
    assert_eq!(
        kind("'rolled back'"),
        Some((DecisionKind::Approved, Actor::Api, true))
    );
    assert_eq!(
        kind("'expired'"),
        Some((DecisionKind::Expired, Actor::Expiry, true))
    );
    assert_eq!(kind("'still paused'"), None);
    assert!(by_text("k: 2").log[0].decision.is_none());
    for execution in &executions {
        assert!(
            execution.log[0].decision.is_none(),
            "the read needed no decision"
        );
    }

    // The paused run from the old database is still approvable, and its decision is recorded.
    let paused = by_text("'still paused'").id.clone();
    let done = json_of(&runtime.approve(&paused, Actor::Cli, None).await.unwrap());
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["calls"][1]["decision"]["kind"], "approved");
}

/// The connector the schema-4 fixture was written with.
struct Notes;

impl codemode::Connector for Notes {
    fn name(&self) -> &str {
        "notes"
    }
    fn tools(&self) -> codemode::BoxFuture<'_, Result<Vec<codemode::ToolDescriptor>, String>> {
        Box::pin(async {
            Ok(vec![
                codemode::ToolDescriptor {
                    name: "write".into(),
                    requires_approval: true,
                    revertible: true,
                    ..Default::default()
                },
                codemode::ToolDescriptor {
                    name: "read".into(),
                    ..Default::default()
                },
            ])
        })
    }
    fn execute<'a>(
        &'a self,
        method: &'a str,
        args: Option<Value>,
        _: codemode::CallContext,
    ) -> codemode::BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move { Ok(Some(json!({"method": method, "args": args}))) })
    }
}
