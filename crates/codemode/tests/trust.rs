//! The runtime's promises, each as the reproduction that once broke it: what a person approves is what runs,
//! a rollback undoes only what happened, and the record never changes behind anyone's back
//! (docs/design.md, "Trust"). The `ledger` connector keeps its own record of every input it received, so
//! each test checks what the connector saw, not only what the log says.

mod support;

use codemode::RefusalKind;
use codemode::{Actor, ExecutionStatus, Outcome};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use support::TestClock;
use support::ledger::{Ledger, temp_db};

fn json_of(outcome: &Outcome) -> Value {
    serde_json::to_value(outcome).expect("outcome serialises")
}

fn methods_received(ledger: &Ledger, id: &str) -> Vec<String> {
    ledger
        .received_by(id)
        .into_iter()
        .map(|r| r.method)
        .collect()
}

// What is approved is what runs --------------------------------------------------------------------------

/// `mode` is re-executed on every pass, so a test changes what the program does after the pause.
const NO_ARGS_THEN_ARGS: &str = "async () => {
  const mode = await ledger.mode();
  if (mode === 'quiet') return await ledger.write();
  return await ledger.write({ path: 'evil.txt', content: 'pwned' });
}";

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_call_without_arguments_never_runs_with_arguments() {
    let ledger = Ledger::new();
    ledger.with(|s| s.mode = json!("quiet"));
    let runtime = ledger.runtime().await;
    let paused = json_of(&runtime.execute(NO_ARGS_THEN_ARGS).await.unwrap());
    assert_eq!(paused["status"], "paused", "{paused}");
    assert!(paused["pending"][0].get("args").is_none(), "{paused}");
    let id = paused["executionId"].as_str().unwrap().to_owned();

    ledger.with(|s| s.mode = json!("loud"));
    let outcome = json_of(&runtime.approve(&id, Actor::Console, None).await.unwrap());
    assert_eq!(outcome["status"], "error", "{outcome}");
    assert!(
        outcome["error"].as_str().unwrap().starts_with(
            "Codemode replay divergence at step 1: ledger.write was called with different arguments"
        ),
        "{outcome}"
    );
    assert_eq!(
        outcome["calls"][1]["divergence"],
        json!({"recorded": {"connector": "ledger", "method": "write", "args": null},
               "attempted": {"connector": "ledger", "method": "write",
                             "args": {"path": "evil.txt", "content": "pwned"}}})
    );
    assert_eq!(
        methods_received(&ledger, &id),
        ["mode", "mode"],
        "no write ran"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_call_with_arguments_never_runs_without_them() {
    let ledger = Ledger::new();
    ledger.with(|s| s.mode = json!("loud"));
    let runtime = ledger.runtime().await;
    let paused = runtime.execute(NO_ARGS_THEN_ARGS).await.unwrap();
    let id = paused.execution_id().to_owned();
    ledger.with(|s| s.mode = json!("quiet"));
    let outcome = json_of(&runtime.approve(&id, Actor::Console, None).await.unwrap());
    assert_eq!(outcome["status"], "error", "{outcome}");
    assert_eq!(
        methods_received(&ledger, &id),
        ["mode", "mode"],
        "no write ran"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn undefined_and_an_undefined_to_json_are_both_no_arguments() {
    // Both serialise to nothing: approving one and replaying the other is the same call.
    let ledger = Ledger::new();
    ledger.with(|s| s.mode = json!("undefined"));
    let runtime = ledger.runtime().await;
    let code = "async () => {
      const mode = await ledger.mode();
      return await ledger.write(mode === 'undefined' ? undefined : { toJSON() { return undefined } });
    }";
    let id = runtime
        .execute(code)
        .await
        .unwrap()
        .execution_id()
        .to_owned();
    ledger.with(|s| s.mode = json!("toJSON"));
    let outcome = json_of(&runtime.approve(&id, Actor::Console, None).await.unwrap());
    assert_eq!(outcome["status"], "completed", "{outcome}");
    let writes: Vec<_> = ledger
        .received_by(&id)
        .into_iter()
        .filter(|r| r.method == "write")
        .collect();
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].args, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_function_argument_is_no_arguments_and_never_matches_some() {
    // Arguments keep JSON's semantics (the reference's): a function alone serialises to nothing, which is a
    // call of its own on replay.
    let ledger = Ledger::new();
    ledger.with(|s| s.mode = json!("function"));
    let runtime = ledger.runtime().await;
    let code = "async () => {
      const mode = await ledger.mode();
      return await ledger.write(mode === 'function' ? () => 1 : { path: 'a' });
    }";
    let paused = json_of(&runtime.execute(code).await.unwrap());
    assert!(paused["pending"][0].get("args").is_none(), "{paused}");
    ledger.with(|s| s.mode = json!("object"));
    let id = paused["executionId"].as_str().unwrap();
    let outcome = json_of(&runtime.approve(id, Actor::Console, None).await.unwrap());
    assert_eq!(outcome["status"], "error", "{outcome}");
    assert_eq!(
        methods_received(&ledger, id),
        ["mode", "mode"],
        "no write ran"
    );
}

const PAY_THEN_WRITE: &str = "async () => {
  let first;
  try { await ledger.pay({ amount: 5 }); } catch (e) { first = e.message; }
  await ledger.write({ path: 'receipt.txt' });
  return first;
}";

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_call_that_failed_after_its_effect_is_replayed_as_its_error_not_run_again() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let id = runtime
        .execute(PAY_THEN_WRITE)
        .await
        .unwrap()
        .execution_id()
        .to_owned();
    let second = json_of(&runtime.approve(&id, Actor::Console, None).await.unwrap());
    assert_eq!(
        second["status"], "paused",
        "the program caught the error and went on: {second}"
    );
    assert_eq!(second["calls"][0]["state"], "error");
    assert_eq!(
        second["calls"][0]["error"],
        "ledger.pay timed out after 1000 ms"
    );
    assert_eq!(second["pending"][0]["method"], "write");

    let done = json_of(&runtime.approve(&id, Actor::Console, None).await.unwrap());
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"], "ledger.pay timed out after 1000 ms",
        "the replay gave the program the same error"
    );
    assert_eq!(ledger.with(|s| s.payments.len()), 1, "paid once");
    assert_eq!(methods_received(&ledger, &id), ["pay", "write"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_that_failed_after_its_effect_without_approval_is_not_run_again() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let code = "async () => {
      let first;
      try { await ledger.charge({ amount: 7 }); } catch (e) { first = e.message; }
      await ledger.write({ path: 'receipt.txt' });
      return first;
    }";
    let id = runtime
        .execute(code)
        .await
        .unwrap()
        .execution_id()
        .to_owned();
    let done = json_of(&runtime.approve(&id, Actor::Console, None).await.unwrap());
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"], "charge failed: upstream returned 502");
    assert_eq!(ledger.with(|s| s.payments.len()), 1, "charged once");
    assert_eq!(methods_received(&ledger, &id), ["charge", "write"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_step_value_json_cannot_carry_is_refused_when_recorded() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    for (value, what) in [
        (
            "new Map([[1, 2]])",
            "a Map cannot be carried through JSON: it would become {}",
        ),
        (
            "Symbol('s')",
            "a Symbol cannot be carried through JSON: it would be dropped",
        ),
        (
            "({ when: Infinity })",
            "Infinity (at key \"when\") cannot be carried through JSON: it would become null",
        ),
    ] {
        let code = format!(
            "async () => {{ const v = await codemode.step('v', () => {value}); await ledger.write({{ path: 'x' }}); return typeof v; }}"
        );
        let outcome = json_of(&runtime.execute(&code).await.unwrap());
        assert_eq!(outcome["status"], "error", "{value}: {outcome}");
        let error = outcome["error"].as_str().unwrap();
        assert!(
            error.starts_with(
                "The result of __step.v could not be recorded durably (not serializable: "
            ) && error.contains(what),
            "{value}: {error}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_step_returns_in_its_first_pass_what_replay_will_return() {
    // A Date crosses JSON as its ISO string: the program sees that string from the first pass on, so what it
    // passes to an approved call does not change on replay.
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let code = "async () => {
      const when = await codemode.step('when', () => new Date(0));
      await ledger.write({ kind: typeof when, when });
      return when;
    }";
    let paused = json_of(&runtime.execute(code).await.unwrap());
    assert_eq!(
        paused["pending"][0]["args"],
        json!({"kind": "string", "when": "1970-01-01T00:00:00.000Z"})
    );
    let id = paused["executionId"].as_str().unwrap();
    let done = json_of(&runtime.approve(id, Actor::Console, None).await.unwrap());
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"], "1970-01-01T00:00:00.000Z");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_final_result_with_a_lone_surrogate_is_an_error_not_an_empty_success() {
    let runtime = Ledger::new().runtime().await;
    for code in [
        "async () => 'report' + String.fromCharCode(0xD800)",
        "async () => { const a = {}; a.self = a; return a; }",
    ] {
        let outcome = json_of(&runtime.execute(code).await.unwrap());
        assert_eq!(outcome["status"], "error", "{code}: {outcome}");
        assert!(
            outcome["error"]
                .as_str()
                .unwrap()
                .starts_with("The final result could not be recorded durably (not serializable: "),
            "{code}: {outcome}"
        );
        let id = outcome["executionId"].as_str().unwrap();
        let stored = runtime.execution(id).unwrap().unwrap();
        assert_eq!(stored.status, ExecutionStatus::Error);
        assert_eq!(stored.error.as_deref(), outcome["error"].as_str());
    }
    let surrogate = json_of(
        &runtime
            .execute("async () => ledger.write({ name: String.fromCharCode(0xDC00) })")
            .await
            .unwrap(),
    );
    assert!(
        surrogate["error"]
            .as_str()
            .unwrap()
            .contains("lone surrogate"),
        "{surrogate}"
    );
}

// A rollback undoes only what happened --------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_rollback_leaves_what_a_refused_call_did_not_create() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let a = runtime
        .execute("async () => ledger.create({ name: 'alice' })")
        .await
        .unwrap();
    assert_eq!(json_of(&a)["status"], "completed");
    let b = json_of(
        &runtime
            .execute("async () => { try { await ledger.create({ name: 'alice' }); } catch (e) { return e.message; } }")
            .await
            .unwrap(),
    );
    assert_eq!(b["result"], "Entity with name alice already exists");
    assert_eq!(b["calls"][0]["state"], "error");
    let report = runtime
        .rollback(b["executionId"].as_str().unwrap())
        .await
        .unwrap();
    assert!(report.reverted.is_empty(), "{report:?}");
    assert!(ledger.with(|s| s.reverted.is_empty()));
    assert!(
        ledger.with(|s| s.entities.contains_key("alice")),
        "run A's alice is still there"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_call_a_diverged_replay_never_reached_is_not_reverted() {
    let ledger = Ledger::new();
    ledger.with(|s| s.mode = json!("one"));
    let runtime = ledger.runtime().await;
    let code = "async () => {
      const mode = await ledger.mode();
      await ledger.create({ name: 'x-' + mode });
      return await ledger.write({ path: 'p' });
    }";
    let id = runtime
        .execute(code)
        .await
        .unwrap()
        .execution_id()
        .to_owned();
    ledger.with(|s| s.mode = json!("two"));
    let diverged = json_of(&runtime.approve(&id, Actor::Console, None).await.unwrap());
    assert_eq!(diverged["status"], "error", "{diverged}");
    assert_eq!(
        diverged["calls"][2]["state"], "pending",
        "approved, never reached: {diverged}"
    );
    assert_eq!(diverged["calls"][2]["decidedBy"], "console");

    let report = runtime.rollback(&id).await.unwrap();
    let reverted: Vec<u64> = report.reverted.iter().map(|r| r.seq).collect();
    assert_eq!(reverted, [1], "only the create that happened: {report:?}");
    assert_eq!(
        ledger.with(|s| s.reverted.clone()),
        [(id.clone(), 1, "create".to_owned())]
    );
    assert!(!methods_received(&ledger, &id).contains(&"write".to_owned()));
}

// The record never changes behind anyone's back ------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn reject_after_rollback_leaves_the_run_rolled_back() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let id = runtime
        .execute("async () => { await ledger.create({ name: 'bob' }); await ledger.write({ path: 'w' }); }")
        .await
        .unwrap()
        .execution_id()
        .to_owned();
    let report = runtime.rollback(&id).await.unwrap();
    assert_eq!(report.status, Some(ExecutionStatus::RolledBack));
    assert!(matches!(
        runtime.reject(&id, 1, Actor::Cli, None).await,
        Err(e) if e.refusal() == Some(RefusalKind::Stale)
    ));
    let stored = runtime.execution(&id).unwrap().unwrap();
    assert_eq!(stored.status, ExecutionStatus::RolledBack);
    assert_eq!(stored.log[1].decided_by, None, "no decision was recorded");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_live_pass_can_be_neither_deleted_nor_expired() {
    let ledger = Ledger::new();
    let clock = TestClock::at(1_700_000_000_000);
    let runtime = ledger.runtime_with(clock.clone()).await;
    let running = {
        let runtime = runtime.clone();
        tokio::spawn(async move {
            runtime
                .execute("async () => { await ledger.hold(); return 'done'; }")
                .await
        })
    };
    while !ledger.holding() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let id = runtime.executions(None).unwrap()[0].id.clone();
    assert_eq!(
        runtime.execution(&id).unwrap().unwrap().status,
        ExecutionStatus::Running
    );

    let deleted = runtime.delete_execution(&id).await;
    assert!(
        matches!(&deleted, Err(e) if e.refusal() == Some(RefusalKind::Busy) && e.to_string().contains("is running in process")),
        "{deleted:?}"
    );
    clock.advance(48 * 3_600_000);
    assert!(
        runtime
            .expire_paused(Duration::ZERO)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(runtime.prune_executions(0).await.unwrap(), 0);

    ledger.gate.add_permits(1);
    let outcome = json_of(&running.await.unwrap().unwrap());
    assert_eq!(outcome["status"], "completed", "{outcome}");
    assert_eq!(outcome["result"], "done");
    runtime
        .delete_execution(&id)
        .await
        .expect("deletable once ended");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rollback_left_by_a_dead_process_can_be_retried() {
    let ledger = Ledger::new();
    let db = temp_db();
    let runtime = ledger
        .runtime_at(&db, Arc::new(codemode::SystemClock))
        .await;
    let id = runtime
        .execute("async () => { await ledger.create({ name: 'carol' }); await ledger.create({ name: 'dave' }); }")
        .await
        .unwrap()
        .execution_id()
        .to_owned();
    // A rollback process that died and was not reaped yet holds the claim, as a zombie.
    let mut zombie = std::process::Command::new("true").spawn().unwrap();
    let pid = zombie.id();
    while !std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .unwrap_or_default()
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    support::store::execute_sql(
        &support::store_at(&db),
        &format!(
            "UPDATE cm_executions SET rollback_pid = {pid}, rollback_started = 0 WHERE id = '{id}'"
        ),
    );
    let report = runtime.rollback(&id).await.unwrap();
    assert_eq!(report.reverted.len(), 2, "{report:?}");
    assert!(ledger.with(|s| s.entities.is_empty()));
    zombie.wait().unwrap();
}
