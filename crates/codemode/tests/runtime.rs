//! Conformance of the durable runtime with the reference's own runtime tests (`runtime.test.ts` and
//! `codemode-eviction.test.ts` under `packages/codemode/src/runtime-tests` in cloudflare/agents) that need
//! neither rollback, retention nor snippets: pauses, approvals, rejection, replay, divergence, steps,
//! ephemeral reads, value limits, hooks, runtime names and restarts — against a real SQLite file and real
//! worker processes. The behaviour is stated in docs/semantics.md.

mod support;

use codemode::RefusalKind;
use codemode::{
    Actor, Connector, EntryState, ExecutionQuery, ExecutionStatus, Outcome, Runtime, RuntimeError,
    RuntimeOptions,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use support::items::Items;

fn temp_db() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("codemode-test-{}", uuid::Uuid::new_v4()));
    dir.join("codemode.db")
}

fn options() -> RuntimeOptions {
    RuntimeOptions {
        worker: Some(support::worker_path()),
        ..RuntimeOptions::default()
    }
}

async fn open(db: &Path, items: &Arc<Items>) -> Runtime {
    open_with(db, options(), vec![items.clone()]).await
}

async fn open_with(
    db: &Path,
    options: RuntimeOptions,
    connectors: Vec<Arc<dyn Connector>>,
) -> Runtime {
    Runtime::open(support::store_at(db), options, connectors)
        .await
        .expect("runtime opens")
}

fn json_of(outcome: &Outcome) -> Value {
    serde_json::to_value(outcome).expect("outcome serialises")
}

const CREATE: &str = "async () => { const before = await items.list_items(); const item = await items.create_item({ title: 'first' }); return { before, item }; }";

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_call_completes() {
    let db = temp_db();
    let runtime = open(&db, &Items::new()).await;
    let outcome = json_of(
        &runtime
            .execute("async () => await items.list_items()")
            .await
            .unwrap(),
    );
    assert_eq!(outcome["status"], "completed");
    assert_eq!(outcome["result"], json!([]));
    assert!(outcome.get("logs").is_none());
    assert!(
        outcome["executionId"]
            .as_str()
            .unwrap()
            .starts_with("exec_")
    );
    let id = outcome["executionId"].as_str().unwrap();
    let (millis, uuid) = id["exec_".len()..].split_once('_').unwrap();
    assert_eq!(millis.len(), 16);
    assert!(uuid::Uuid::parse_str(uuid).is_ok());
    assert_eq!(outcome["calls"][0]["method"], "list_items");

    let quiet = json_of(&runtime.execute("async () => 6 * 7").await.unwrap());
    assert_eq!(quiet["status"], "completed");
    assert_eq!(quiet["result"], 42);
    assert_eq!(quiet["calls"], json!([]), "a run that called nothing");
    let stored = runtime
        .execution(quiet["executionId"].as_str().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(stored.status, ExecutionStatus::Completed);
    assert_eq!(stored.result, Some(json!(42)));
}

/// A host that shows calls only on request (the app; `codemode mcp` without `includeCalls`) gets outcomes
/// without them, and the same calls when it asks.
#[tokio::test(flavor = "multi_thread")]
async fn outcomes_without_calls_read_them_only_when_asked() {
    let items = Items::new();
    let lean = RuntimeOptions {
        outcome_calls: false,
        ..options()
    };
    let runtime = open_with(&temp_db(), lean, vec![items.clone()]).await;
    let paused = runtime.execute(CREATE).await.unwrap();
    assert_eq!(paused.status(), "paused");
    assert!(json_of(&paused).get("calls").is_none());
    let asked = json_of(&runtime.with_calls(paused.clone()).unwrap());
    assert_eq!(asked["calls"][0]["method"], "list_items");
    assert_eq!(asked["calls"][1]["state"], "pending");
    let id = paused.execution_id().to_owned();
    let done = runtime.approve(&id, Actor::Console, None).await.unwrap();
    assert_eq!(done.status(), "completed");
    assert!(json_of(&done).get("calls").is_none());
    let asked = json_of(&runtime.with_calls(done).unwrap());
    assert_eq!(asked["calls"][1]["state"], "applied");
    assert_eq!(asked["calls"][1]["decidedBy"], "console");
    let failed = runtime
        .execute("async () => { await items.list_items(); throw new Error('no'); }")
        .await
        .unwrap();
    assert_eq!(failed.status(), "error");
    assert!(json_of(&failed).get("calls").is_none());
    assert_eq!(
        json_of(&runtime.with_calls(failed).unwrap())["calls"][0]["method"],
        "list_items"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_global_names_the_available_ones() {
    let runtime = open(&temp_db(), &Items::new()).await;
    let outcome = json_of(
        &runtime
            .execute("async () => await host.writeFile('x')")
            .await
            .unwrap(),
    );
    assert_eq!(outcome["status"], "error");
    assert_eq!(
        outcome["error"],
        "Code execution failed: host is not defined (the only globals available in the sandbox are: items, codemode)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_gated_call_pauses_and_approval_applies_it_exactly_once() {
    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    let paused = json_of(&runtime.execute(CREATE).await.unwrap());
    assert_eq!(paused["status"], "paused");
    let id = paused["executionId"].as_str().unwrap().to_owned();
    assert_eq!(
        paused["pending"],
        json!([{"executionId": id, "seq": 1, "connector": "items", "method": "create_item", "args": {"title": "first"},
                 "digest": codemode::args_digest(Some(&json!({"title": "first"})))}])
    );
    assert!(paused.get("logs").is_none());
    assert_eq!(paused["calls"][0]["state"], "applied");
    assert_eq!(paused["calls"][1]["state"], "pending");
    assert_eq!(paused["calls"][1]["requiresApproval"], true);
    assert!(paused["calls"][1].get("result").is_none());
    assert_eq!(
        items.with(|s| s.items.len()),
        0,
        "nothing applied while paused"
    );
    assert_eq!(runtime.pending(None).unwrap().len(), 1);

    // Someone else changes the state meanwhile: the replay must still see the recorded (empty) list.
    items.with(|s| s.items.push(json!({"id": 99, "title": "outside"})));
    let done = json_of(&runtime.approve(&id, Actor::Console, None).await.unwrap());
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["before"], json!([]));
    assert_eq!(done["result"]["item"], json!({"id": 2, "title": "first"}));
    assert_eq!(done["calls"][1]["state"], "applied");
    assert_eq!(
        done["calls"][1]["result"],
        json!({"id": 2, "title": "first"})
    );
    assert_eq!(done["calls"][1]["decidedBy"], "console");
    assert!(done["calls"][1]["decidedAt"].is_i64());
    assert_eq!(
        items.with(|s| (s.items.len(), s.list_calls)),
        (2, 1),
        "created once, read once"
    );
    assert!(runtime.pending(None).unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn reject_ends_the_run_and_a_later_approval_is_stale() {
    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    let paused = runtime.execute(CREATE).await.unwrap();
    let id = paused.execution_id().to_owned();
    let not_pending = runtime.reject(&id, 999, Actor::Cli, None).await;
    assert!(
        matches!(&not_pending, Err(e) if e.refusal() == Some(RefusalKind::Stale) && e.to_string() == format!("Call 999 of execution \"{id}\" is not waiting for a decision.")),
        "a seq that is not pending: {not_pending:?}"
    );
    assert!(items.with(|s| s.disposes.is_empty()));
    runtime.reject(&id, 1, Actor::Cli, None).await.unwrap();
    let again = runtime.reject(&id, 1, Actor::Cli, None).await;
    assert!(
        matches!(&again, Err(e) if e.refusal() == Some(RefusalKind::Stale) && e.to_string().contains("is not paused (status: rejected)")),
        "a second reject: {again:?}"
    );
    let execution = runtime.execution(&id).unwrap().unwrap();
    assert_eq!(execution.status, ExecutionStatus::Rejected);
    assert_eq!(
        execution.error.as_deref(),
        Some("Action items.create_item rejected by user")
    );
    assert_eq!(execution.log[1].state, EntryState::Reverted);
    assert_eq!(execution.log[1].decided_by.as_deref(), Some("cli"));
    assert_eq!(
        items.with(|s| s.disposes.clone()),
        vec![(id.clone(), ExecutionStatus::Rejected)]
    );

    let stale = runtime.approve(&id, Actor::Console, None).await;
    assert!(
        matches!(&stale, Err(e) if e.refusal() == Some(RefusalKind::Stale) && e.to_string() == format!("Execution \"{id}\" is not paused (status: rejected); only a paused run can be approved.")),
        "{stale:?}"
    );
    assert!(runtime.pending(None).unwrap().is_empty());
    assert_eq!(items.with(|s| s.items.len()), 0);
    assert_eq!(
        runtime.execution(&id).unwrap().unwrap().status,
        ExecutionStatus::Rejected
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn approving_an_unknown_or_completed_run_changes_nothing() {
    let runtime = open(&temp_db(), &Items::new()).await;
    let unknown = runtime.approve("exec_nope", Actor::Api, None).await;
    assert!(
        matches!(&unknown, Err(e) if e.refusal() == Some(RefusalKind::NotFound) && e.to_string() == "No execution \"exec_nope\" to resume."),
        "{unknown:?}"
    );
    let done = runtime.execute("async () => 1").await.unwrap();
    let id = done.execution_id();
    let again = runtime.approve(id, Actor::Api, None).await;
    assert!(
        matches!(&again, Err(e) if e.refusal() == Some(RefusalKind::Stale) && e.to_string() == format!(
            "Execution \"{id}\" is not paused (status: completed); only a paused run can be approved."
        )),
        "{again:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_program_that_swallows_the_pause_is_still_paused_with_one_pending_call() {
    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    let code = "async () => { try { await items.create_item({ title: 'a' }) } catch (e) {} try { await items.create_item({ title: 'b' }) } catch (e) {} return 'escaped' }";
    let outcome = json_of(&runtime.execute(code).await.unwrap());
    assert_eq!(outcome["status"], "paused");
    assert_eq!(outcome["pending"].as_array().unwrap().len(), 1);
    assert_eq!(items.with(|s| s.items.len()), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn pending_lists_every_paused_run_newest_first() {
    let runtime = open(&temp_db(), &Items::new()).await;
    let first = runtime.execute(CREATE).await.unwrap();
    let second = runtime.execute(CREATE).await.unwrap();
    let pending = runtime.pending(None).unwrap();
    let ids: Vec<&str> = pending.iter().map(|p| p.execution_id.as_str()).collect();
    assert_eq!(ids, vec![second.execution_id(), first.execution_id()]);
    assert_eq!(
        runtime.pending(Some(first.execution_id())).unwrap().len(),
        1
    );
    // Either can be approved first.
    assert_eq!(
        runtime
            .approve(first.execution_id(), Actor::Api, None)
            .await
            .unwrap()
            .status(),
        "completed"
    );
    assert_eq!(
        runtime
            .approve(second.execution_id(), Actor::Api, None)
            .await
            .unwrap()
            .status(),
        "completed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn random_arguments_diverge_on_resume_and_nothing_is_applied() {
    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    let paused = runtime
        .execute("async () => items.create_item({ title: 'r' + Math.random() })")
        .await
        .unwrap();
    let id = paused.execution_id().to_owned();
    let outcome = json_of(&runtime.approve(&id, Actor::Api, None).await.unwrap());
    assert_eq!(outcome["status"], "error");
    assert_eq!(
        outcome["error"],
        "Codemode replay divergence at step 0: items.create_item was called with different arguments than the recorded run. Arguments must be deterministic across replays. Wrap nondeterministic inputs in codemode.step(name, fn)."
    );
    let entry = &outcome["calls"][0];
    assert_eq!(entry["state"], "error");
    assert_eq!(entry["divergence"]["recorded"]["method"], "create_item");
    assert_ne!(
        entry["divergence"]["recorded"]["args"],
        entry["divergence"]["attempted"]["args"]
    );
    assert_eq!(items.with(|s| s.items.len()), 0);
    assert!(runtime.pending(None).unwrap().is_empty());
    assert!(runtime.pending(Some(&id)).unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_different_method_at_the_same_position_diverges() {
    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    // The re-executed counter reads 1 on the first pass and 2 on the replay, so the program takes the other
    // branch and calls a different method at seq 1.
    let code = "async () => { const r = await items.read_counter(); if (r.reads === 1) await items.list_items(); else await items.session_id(); return items.create_item({ title: 'y' }) }";
    let paused = runtime.execute(code).await.unwrap();
    assert_eq!(paused.status(), "paused");
    let outcome = json_of(
        &runtime
            .approve(paused.execution_id(), Actor::Api, None)
            .await
            .unwrap(),
    );
    assert_eq!(
        outcome["error"],
        "Codemode replay divergence at step 1: expected items.list_items, got items.session_id. Code must be deterministic up to tool calls and steps. Wrap nondeterministic work in codemode.step(name, fn)."
    );
    assert_eq!(
        outcome["calls"][1]["divergence"]["attempted"]["method"],
        "session_id"
    );
    assert_eq!(items.with(|s| s.items.len()), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_step_keeps_a_random_value_stable_across_the_approval() {
    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    let code = "async () => { console.log('pass start'); const r = await codemode.step('rand', () => { console.log('in step'); return Math.random() }); await items.create_item({ title: 'r' + r }); console.log('after approval'); return r }";
    let paused = runtime.execute(code).await.unwrap();
    let done = json_of(
        &runtime
            .approve(paused.execution_id(), Actor::Api, None)
            .await
            .unwrap(),
    );
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["logs"],
        json!(["pass start", "after approval"]),
        "the step's closure does not run again"
    );
    assert_eq!(done["calls"][0]["connector"], "__step");
    assert_eq!(done["calls"][0]["method"], "rand");
    assert!(done["calls"][0].get("args").is_none());
    assert_eq!(items.with(|s| s.items.len()), 1);
}

/// A step beyond everything recorded runs without asking the host first and is recorded whole with its
/// value; the next resume replays it like any other.
#[tokio::test(flavor = "multi_thread")]
async fn a_step_that_returns_undefined_shows_null_in_calls() {
    // As the reference's log shows it (0.5.6); replay still hands the program `undefined`.
    let runtime = open(&temp_db(), &Items::new()).await;
    let paused = json_of(
        &runtime
            .execute("async () => { const v = await codemode.step('nothing', () => undefined); await items.create_item({ title: typeof v }); return typeof v; }")
            .await
            .unwrap(),
    );
    assert_eq!(paused["calls"][0]["result"], json!(null), "{paused}");
    assert!(paused["calls"][0].get("result").is_some());
    let id = paused["executionId"].as_str().unwrap();
    let done = json_of(&runtime.approve(id, Actor::Console, None).await.unwrap());
    assert_eq!(done["result"], "undefined", "{done}");
}

#[tokio::test(flavor = "multi_thread")]
async fn steps_recorded_on_a_resumed_pass_replay_on_the_next() {
    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    let code = "async () => { \
        const a = await codemode.step('a', () => { console.log('ran a'); return 1 }); \
        await items.create_item({ title: 'one' }); \
        const b = await codemode.step('b', () => { console.log('ran b'); return { b: a + 1 } }); \
        await items.create_item({ title: 'two' }); \
        return [a, b] }";
    let paused = runtime.execute(code).await.unwrap();
    let id = paused.execution_id().to_owned();
    let second = json_of(&runtime.approve(&id, Actor::Api, None).await.unwrap());
    assert_eq!(second["status"], "paused", "{second}");
    assert_eq!(second["calls"][2]["method"], "b");
    assert_eq!(second["calls"][2]["state"], "applied");
    assert_eq!(second["calls"][2]["result"], json!({"b": 2}));
    let done = json_of(&runtime.approve(&id, Actor::Api, None).await.unwrap());
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"], json!([1, {"b": 2}]));
    assert_eq!(
        done["logs"],
        Value::Null,
        "neither closure ran on the last pass"
    );
    let states: Vec<_> = done["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["seq"].clone(), c["method"].clone(), c["state"].clone()))
        .collect();
    assert_eq!(
        states,
        [
            (json!(0), json!("a"), json!("applied")),
            (json!(1), json!("create_item"), json!("applied")),
            (json!(2), json!("b"), json!("applied")),
            (json!(3), json!("create_item"), json!("applied")),
        ]
    );
    assert_eq!(items.with(|s| s.items.len()), 2);
}

/// A step run without asking the host leaves the same log as a decided one: a closure that throws leaves its
/// entry executing (docs/semantics.md §3.6), and a call made inside it finds the step already recorded as
/// executing.
#[tokio::test(flavor = "multi_thread")]
async fn steps_run_without_asking_log_what_decided_steps_log() {
    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    let thrown = json_of(
        &runtime
            .execute("async () => { try { await codemode.step('boom', () => { throw new Error('no') }) } catch (e) { return e.message } }")
            .await
            .unwrap(),
    );
    assert_eq!(thrown["status"], "completed", "{thrown}");
    assert_eq!(thrown["result"], "no");
    assert_eq!(thrown["calls"][0]["method"], "boom");
    assert_eq!(thrown["calls"][0]["state"], "executing");

    let code = "async () => codemode.step('wrap', async () => { const item = await items.create_item({ title: 'in a step' }); return item.id })";
    let paused = json_of(&runtime.execute(code).await.unwrap());
    assert_eq!(paused["status"], "paused", "{paused}");
    assert_eq!(paused["calls"][0]["connector"], "__step");
    assert_eq!(paused["calls"][0]["method"], "wrap");
    assert_eq!(paused["calls"][0]["state"], "executing");
    assert_eq!(paused["calls"][1]["method"], "create_item");
    assert_eq!(paused["calls"][1]["state"], "pending");
    let id = paused["executionId"].as_str().unwrap();
    let done = json_of(&runtime.approve(id, Actor::Api, None).await.unwrap());
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["calls"][0]["state"], "applied");
    assert_eq!(done["calls"][0]["result"], done["result"]);
    assert_eq!(items.with(|s| s.items.len()), 1);
}

/// A step value that cannot be recorded ends the run there: nothing after it runs, its entry says `error`.
#[tokio::test(flavor = "multi_thread")]
async fn a_step_value_that_cannot_be_recorded_ends_the_run() {
    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    let big = json_of(
        &runtime
            .execute("async () => { await codemode.step('big', () => 'x'.repeat(1100000)); await items.add_note({ text: 'after' }); return 1 }")
            .await
            .unwrap(),
    );
    assert_eq!(big["status"], "error", "{big}");
    assert_eq!(
        big["error"],
        "The result of __step.big is too large to record durably (1100002 bytes > 1000000 byte limit). Write large data to a file or workspace instead and pass/return a small reference (such as a path)."
    );
    assert_eq!(big["calls"].as_array().unwrap().len(), 1, "{big}");
    assert_eq!(big["calls"][0]["state"], "error");

    let cycle = json_of(
        &runtime
            .execute("async () => { await codemode.step('cycle', () => { const a = {}; a.a = a; return a }); await items.add_note({ text: 'after' }); return 1 }")
            .await
            .unwrap(),
    );
    assert_eq!(cycle["status"], "error", "{cycle}");
    assert!(
        cycle["error"].as_str().unwrap().starts_with(
            "The result of __step.cycle could not be recorded durably (not serializable: "
        ),
        "{}",
        cycle["error"]
    );
    assert_eq!(cycle["calls"].as_array().unwrap().len(), 1, "{cycle}");
    assert_eq!(cycle["calls"][0]["state"], "error");
    assert_eq!(
        items.with(|s| s.notes.len()),
        0,
        "nothing after the step ran"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_throwing_connector_is_an_error_outcome_and_its_call_records_the_error() {
    let runtime = open(&temp_db(), &Items::new()).await;
    let outcome = json_of(
        &runtime
            .execute("async () => await items.boom()")
            .await
            .unwrap(),
    );
    assert_eq!(outcome["status"], "error");
    assert_eq!(outcome["error"], "Code execution failed: connector boom");
    assert_eq!(outcome["calls"][0]["state"], "error");
    assert_eq!(outcome["calls"][0]["error"], "connector boom");
    let id = outcome["executionId"].as_str().unwrap();
    assert_eq!(
        runtime.execution(id).unwrap().unwrap().status,
        ExecutionStatus::Error
    );
    let caught = json_of(
        &runtime
            .execute("async () => { try { await items.boom() } catch (e) { return e.message } }")
            .await
            .unwrap(),
    );
    assert_eq!(caught["result"], "connector boom");
}

#[tokio::test(flavor = "multi_thread")]
async fn hidden_and_unknown_methods_are_not_callable() {
    let runtime = open(&temp_db(), &Items::new()).await;
    for method in ["secret", "nope"] {
        let outcome = json_of(
            &runtime
                .execute(&format!("async () => await items.{method}()"))
                .await
                .unwrap(),
        );
        assert_eq!(
            outcome["error"],
            format!("Code execution failed: Tool \"{method}\" not found on items")
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_runs_complete_independently() {
    let runtime = open(&temp_db(), &Items::new()).await;
    let (a, b) = tokio::join!(
        runtime.execute("async () => { await items.list_items(); return 'a' }"),
        runtime.execute("async () => { await items.list_items(); return 'b' }")
    );
    let (a, b) = (json_of(&a.unwrap()), json_of(&b.unwrap()));
    assert_eq!(
        (a["result"].clone(), b["result"].clone()),
        (json!("a"), json!("b"))
    );
    assert_ne!(a["executionId"], b["executionId"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ephemeral_read_runs_again_on_replay_and_keeps_no_result() {
    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    let code = "async () => { const r = await items.read_counter(); await items.create_item({ title: 'x' }); return r }";
    let paused = runtime.execute(code).await.unwrap();
    let done = json_of(
        &runtime
            .approve(paused.execution_id(), Actor::Api, None)
            .await
            .unwrap(),
    );
    assert_eq!(done["result"], json!({"reads": 2}));
    let entry = &done["calls"][0];
    assert_eq!(entry["state"], "applied");
    assert_eq!(entry["ephemeral"], true);
    assert!(entry.get("result").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_binary_result_replays_as_a_real_uint8array() {
    let runtime = open(&temp_db(), &Items::new()).await;
    let code = "async () => { const b = await items.get_bytes(); await items.create_item({ title: 'x' }); return [b instanceof Uint8Array, Array.from(b)] }";
    let paused = runtime.execute(code).await.unwrap();
    let done = json_of(
        &runtime
            .approve(paused.execution_id(), Actor::Api, None)
            .await
            .unwrap(),
    );
    assert_eq!(done["result"], json!([true, [1, 2, 3, 4, 5]]));
}

#[tokio::test(flavor = "multi_thread")]
async fn value_limits_follow_the_reference() {
    let runtime = open(&temp_db(), &Items::new()).await;
    let big = json_of(
        &runtime
            .execute("async () => { await items.big_result(); return 1 }")
            .await
            .unwrap(),
    );
    assert_eq!(big["status"], "error");
    assert_eq!(
        big["error"],
        "The result of items.big_result is too large to record durably (1100002 bytes > 1000000 byte limit). Write large data to a file or workspace instead and pass/return a small reference (such as a path)."
    );
    assert_eq!(big["calls"][0]["state"], "error");

    let final_result = runtime
        .execute("async () => 'y'.repeat(1100000)")
        .await
        .unwrap();
    let final_json = json_of(&final_result);
    assert_eq!(final_json["status"], "completed");
    assert_eq!(final_json["result"].as_str().unwrap().len(), 1_100_000);
    let audit = runtime
        .execution(final_result.execution_id())
        .unwrap()
        .unwrap();
    let stored = audit.result.unwrap();
    assert!(
        stored
            .as_str()
            .unwrap()
            .contains("result omitted from the audit trail"),
        "{stored}"
    );

    let args = json_of(
        &runtime
            .execute("async () => items.add_note({ text: 'z'.repeat(1100000) })")
            .await
            .unwrap(),
    );
    assert_eq!(args["status"], "error");
    assert!(args["error"].as_str().unwrap().starts_with("Arguments to items.add_note is too large to record durably (1100011 bytes > 1000000 byte limit)."), "{}", args["error"]);
    assert_eq!(args["calls"], json!([]));

    let code = format!("async () => {{ /*{}*/ return 1 }}", "c".repeat(1_000_000));
    let before = runtime.executions(None).unwrap().len();
    let huge = json_of(&runtime.execute(&code).await.unwrap());
    assert_eq!(huge["executionId"], "");
    assert!(
        huge["error"]
            .as_str()
            .unwrap()
            .starts_with("The execution code is too large to record durably")
    );
    assert_eq!(
        runtime.executions(None).unwrap().len(),
        before,
        "nothing recorded"
    );

    let cycle = json_of(
        &runtime
            .execute("async () => { const a = {}; a.a = a; await items.add_note(a) }")
            .await
            .unwrap(),
    );
    assert_eq!(cycle["status"], "error");
    assert!(
        cycle["error"].as_str().unwrap().starts_with(
            "Arguments to items.add_note could not be recorded durably (not serializable: "
        ),
        "{}",
        cycle["error"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn runtime_names_keep_separate_histories() {
    let db = temp_db();
    let items = Items::new();
    let default = open(&db, &items).await;
    let other = open_with(
        &db,
        RuntimeOptions {
            name: "other".into(),
            ..options()
        },
        vec![items.clone()],
    )
    .await;
    default.execute("async () => 1").await.unwrap();
    assert_eq!(default.executions(None).unwrap().len(), 1);
    assert!(other.executions(None).unwrap().is_empty());
    let bad = Runtime::open(
        support::store_at(&db),
        RuntimeOptions {
            name: "bad name".into(),
            ..options()
        },
        vec![],
    )
    .await;
    assert_eq!(
        bad.err().unwrap().to_string(),
        "Invalid codemode runtime name \"bad name\" — use letters, digits, \"_\", \"-\" or \".\""
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn approval_needs_every_recorded_connector() {
    let db = temp_db();
    let items = Items::new();
    let runtime = open(&db, &items).await;
    let paused = runtime.execute(CREATE).await.unwrap();
    let id = paused.execution_id().to_owned();
    assert_eq!(
        runtime.execution(&id).unwrap().unwrap().connectors,
        vec!["items"]
    );
    let bare = open_with(&db, options(), vec![]).await;
    let refused = bare.approve(&id, Actor::Api, None).await.unwrap_err();
    assert!(matches!(refused, RuntimeError::Configuration(_)));
    assert_eq!(
        refused.to_string(),
        format!(
            "Execution \"{id}\" requires connector(s) \"items\" that are not configured on this runtime."
        )
    );
    assert_eq!(
        runtime.pending(Some(&id)).unwrap().len(),
        1,
        "still approvable"
    );
    assert_eq!(
        runtime
            .approve(&id, Actor::Api, None)
            .await
            .unwrap()
            .status(),
        "completed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ctx_carries_the_execution_id_and_seq() {
    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    let outcome = runtime
        .execute("async () => { await items.list_items(); return await items.session_id() }")
        .await
        .unwrap();
    let id = outcome.execution_id().to_owned();
    assert_eq!(json_of(&outcome)["result"], json!(id));
    assert_eq!(items.with(|s| s.sessions.clone()), vec![(id, 1)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn hooks_fire_as_the_reference_says() {
    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    let done = runtime.execute("async () => 1").await.unwrap();
    let id = done.execution_id().to_owned();
    assert_eq!(
        items.with(|s| s.disposes.clone()),
        vec![(id.clone(), ExecutionStatus::Completed)]
    );
    assert_eq!(
        items.with(|s| s.pass_ends.clone()),
        vec![(id, ExecutionStatus::Completed)]
    );

    let items = Items::new();
    let runtime = open(&temp_db(), &items).await;
    let paused = runtime.execute(CREATE).await.unwrap();
    let id = paused.execution_id().to_owned();
    assert!(
        items.with(|s| s.disposes.is_empty()),
        "no dispose while paused"
    );
    runtime.approve(&id, Actor::Api, None).await.unwrap();
    assert_eq!(
        items.with(|s| s.disposes.clone()),
        vec![(id.clone(), ExecutionStatus::Completed)]
    );
    assert_eq!(
        items.with(|s| s.pass_ends.clone()),
        vec![
            (id.clone(), ExecutionStatus::Paused),
            (id, ExecutionStatus::Completed)
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn transform_result_shapes_what_the_model_sees_and_the_audit_keeps_the_raw_value() {
    let db = temp_db();
    let options = RuntimeOptions {
        transform_result: Some(Arc::new(|value| Ok(json!({"shaped": value})))),
        ..options()
    };
    let runtime = open_with(&db, options, vec![Items::new()]).await;
    let done = runtime.execute("async () => 7").await.unwrap();
    assert_eq!(json_of(&done)["result"], json!({"shaped": 7}));
    let audit = runtime.execution(done.execution_id()).unwrap().unwrap();
    assert_eq!(audit.result, Some(json!(7)));
    let paused = runtime
        .execute("async () => (await items.create_item({ title: 't' })).id")
        .await
        .unwrap();
    let resumed = runtime
        .approve(paused.execution_id(), Actor::Api, None)
        .await
        .unwrap();
    assert_eq!(json_of(&resumed)["result"], json!({"shaped": 1}));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_runtime_on_the_same_file_replays_and_approves() {
    // The reference's eviction tests: a new process (here a new runtime and fresh connector) must replay the
    // recorded reads without executing them, list the pending call, and apply it once.
    let db = temp_db();
    let first_items = Items::new();
    let first = open(&db, &first_items).await;
    let code = "async () => { const list = await items.list_items(); const b = await items.get_bytes(); const item = await items.create_item({ title: 'evicted' }); return { list, bytes: Array.from(b), item } }";
    let paused = first.execute(code).await.unwrap();
    let id = paused.execution_id().to_owned();
    drop(first);

    let items = Items::new();
    let fresh = open(&db, &items).await;
    assert_eq!(fresh.pending(None).unwrap().len(), 1);
    let done = json_of(&fresh.approve(&id, Actor::Api, None).await.unwrap());
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"],
        json!({"list": [], "bytes": [1, 2, 3, 4, 5], "item": {"id": 1, "title": "evicted"}})
    );
    assert_eq!(
        items.with(|s| (s.list_calls, s.items.len())),
        (0, 1),
        "reads replayed, item created once"
    );
    assert_eq!(
        items.with(|s| s.disposes.clone()),
        vec![(id.clone(), ExecutionStatus::Completed)]
    );

    let paused = fresh.execute(CREATE).await.unwrap();
    let again = open(&db, &Items::new()).await;
    again
        .reject(paused.execution_id(), 1, Actor::Api, None)
        .await
        .unwrap();
    assert!(again.pending(None).unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn connector_names_and_policies_are_checked_when_the_runtime_opens() {
    struct Named(&'static str, bool);
    impl Connector for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn tools(&self) -> codemode::BoxFuture<'_, Result<Vec<codemode::ToolDescriptor>, String>> {
            let conflict = self.1;
            Box::pin(async move {
                Ok(vec![codemode::ToolDescriptor {
                    name: "write".into(),
                    requires_approval: conflict,
                    replay: if conflict {
                        codemode::Replay::Reexecute
                    } else {
                        codemode::Replay::Log
                    },
                    ..Default::default()
                }])
            })
        }
        fn execute<'a>(
            &'a self,
            _: &'a str,
            _: Option<Value>,
            _: codemode::CallContext,
        ) -> codemode::BoxFuture<'a, Result<Option<Value>, String>> {
            Box::pin(async { Ok(None) })
        }
    }
    let db = temp_db();
    let reserved = Runtime::open(
        support::store_at(&db),
        options(),
        vec![Arc::new(Named("codemode", false))],
    )
    .await;
    assert_eq!(
        reserved.err().unwrap().to_string(),
        "Connector name \"codemode\" is reserved for the codemode platform SDK."
    );
    let duplicate = Runtime::open(
        support::store_at(&db),
        options(),
        vec![
            Arc::new(Named("state", false)),
            Arc::new(Named("state", false)),
        ],
    )
    .await;
    assert_eq!(
        duplicate.err().unwrap().to_string(),
        "Duplicate connector name \"state\" — each connector needs a unique namespace (pass a distinct `name` option)."
    );
    let conflict = Runtime::open(
        support::store_at(&db),
        options(),
        vec![Arc::new(Named("crm", true))],
    )
    .await;
    assert_eq!(
        conflict.err().unwrap().to_string(),
        "Connector \"crm\" tool \"write\" cannot combine requiresApproval with replay: \"reexecute\" — approved actions must be logged, not re-executed."
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_database_is_owner_only_and_refuses_a_newer_schema() {
    use std::os::unix::fs::PermissionsExt;
    if support::on_postgres() {
        // A file's mode and PRAGMA user_version: the shared store's counterpart is in tests/shared_store.rs.
        return;
    }
    let db = temp_db();
    open(&db, &Items::new()).await;
    let mode = std::fs::metadata(&db).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let folder_mode = std::fs::metadata(db.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(folder_mode, 0o700);
    let connection = rusqlite::Connection::open(&db).unwrap();
    connection.pragma_update(None, "user_version", 99).unwrap();
    connection
        .pragma_update(None, "journal_mode", "DELETE")
        .unwrap();
    drop(connection);
    let before = std::fs::read(&db).unwrap();
    let newer = Runtime::open(support::store_at(&db), options(), vec![]).await;
    assert!(
        newer
            .err()
            .unwrap()
            .to_string()
            .contains("written by a newer version of Codemode (schema 99")
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "a newer database is left exactly as it was"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn list_executions_pages_filters_and_searches_without_logs() {
    let runtime = open(&temp_db(), &Items::new()).await;
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(
            runtime
                .execute(&format!(
                    "async () => {{ await items.list_items(); return {i} }}"
                ))
                .await
                .unwrap()
                .execution_id()
                .to_owned(),
        );
    }
    let failed = runtime
        .execute("async () => { throw new Error('needle_in_error') }")
        .await
        .unwrap();
    let paused = runtime.execute(CREATE).await.unwrap();

    let all = runtime.list_executions(&ExecutionQuery::default()).unwrap();
    assert_eq!(all.executions.len(), 7);
    assert_eq!(all.executions[0].id, paused.execution_id(), "newest first");
    assert_eq!(
        all.executions[0].pending.as_deref(),
        Some("items.create_item")
    );
    assert_eq!(all.executions[0].calls, 2);
    assert_eq!(
        all.executions[1].error.as_deref(),
        Some("Code execution failed: needle_in_error")
    );
    assert_eq!(all.executions[2].result_preview.as_deref(), Some("4"));
    assert!(all.next.is_none());

    let first = runtime
        .list_executions(&ExecutionQuery {
            limit: Some(3),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(first.executions.len(), 3);
    let second = runtime
        .list_executions(&ExecutionQuery {
            limit: Some(3),
            before: first.next.clone(),
            ..Default::default()
        })
        .unwrap();
    let third = runtime
        .list_executions(&ExecutionQuery {
            limit: Some(3),
            before: second.next.clone(),
            ..Default::default()
        })
        .unwrap();
    let paged: Vec<String> = [first, second, third]
        .iter()
        .flat_map(|p| p.executions.iter().map(|e| e.id.clone()))
        .collect();
    let everything: Vec<String> = all.executions.iter().map(|e| e.id.clone()).collect();
    assert_eq!(paged, everything, "pages cover every row once, in order");

    let paused_only = runtime
        .list_executions(&ExecutionQuery {
            status: Some(ExecutionStatus::Paused),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(paused_only.executions.len(), 1);
    let by_error = runtime
        .list_executions(&ExecutionQuery {
            text: Some("needle_in".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        by_error
            .executions
            .iter()
            .map(|e| e.id.as_str())
            .collect::<Vec<_>>(),
        vec![failed.execution_id()]
    );
    let by_method = runtime
        .list_executions(&ExecutionQuery {
            text: Some("items.create_item".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(by_method.executions.len(), 1);
    let by_code = runtime
        .list_executions(&ExecutionQuery {
            text: Some("return 3".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(by_code.executions[0].id, ids[3]);
    let wildcard = runtime
        .list_executions(&ExecutionQuery {
            text: Some("%".into()),
            ..Default::default()
        })
        .unwrap();
    assert!(wildcard.executions.is_empty(), "% is literal");

    // The history's filters (docs/history.md), the same on both stores: a call glob, who decided, a source
    // glob, a time window.
    let ids_of = |query: ExecutionQuery| -> Vec<String> {
        let page = runtime.list_executions(&query).unwrap();
        page.executions.into_iter().map(|e| e.id).collect()
    };
    let rejected = runtime.execute(CREATE).await.unwrap();
    runtime
        .reject(rejected.execution_id(), 1, Actor::Cli, Some("no"))
        .await
        .unwrap();
    assert_eq!(
        ids_of(ExecutionQuery {
            call: Some("items.create_*".into()),
            ..Default::default()
        }),
        [rejected.execution_id(), paused.execution_id()]
    );
    assert_eq!(
        ids_of(ExecutionQuery {
            call: Some("items.?ist_items".into()),
            ..Default::default()
        })
        .len(),
        7,
        "every run but the one that threw lists items"
    );
    assert!(
        ids_of(ExecutionQuery {
            call: Some("items.list".into()),
            ..Default::default()
        })
        .is_empty()
    );
    assert_eq!(
        ids_of(ExecutionQuery {
            decided_by: Some("cli".into()),
            ..Default::default()
        }),
        [rejected.execution_id()]
    );
    assert!(
        ids_of(ExecutionQuery {
            decided_by: Some("nobody-at-all".into()),
            ..Default::default()
        })
        .is_empty()
    );
    assert_eq!(
        ids_of(ExecutionQuery {
            source: Some("*".into()),
            ..Default::default()
        })
        .len(),
        0,
        "runs started here have no source"
    );
    let newest = runtime
        .list_executions(&ExecutionQuery::default())
        .unwrap()
        .executions[0]
        .created_at;
    assert_eq!(
        ids_of(ExecutionQuery {
            since: Some(newest),
            ..Default::default()
        }),
        [rejected.execution_id()]
    );
    assert_eq!(
        ids_of(ExecutionQuery {
            until: Some(newest),
            ..Default::default()
        })
        .len(),
        7
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_change_token_moves_on_writes_from_this_and_other_connections() {
    let db = temp_db();
    let items = Arc::new(Items::default());
    let watcher = open(&db, &items).await;
    let other = open(&db, &items).await;
    let before = watcher.change_token().unwrap();
    assert_eq!(watcher.change_token().unwrap(), before, "stable while idle");
    other.execute("async () => 1").await.unwrap();
    // Another connection's commit reaches a PostgreSQL store as a notification, asynchronously: the token
    // moves when it arrives, which is what `changed` waits for (docs/shared-store.md, "Live updates").
    watcher
        .changed(before, std::time::Duration::from_secs(10))
        .await;
    let after_other = watcher.change_token().unwrap();
    assert_ne!(after_other, before, "another connection's commit");
    watcher.execute("async () => 2").await.unwrap();
    assert_ne!(
        watcher.change_token().unwrap(),
        after_other,
        "our own commit"
    );
    let counts = watcher.status_counts().unwrap();
    assert_eq!(counts, vec![(codemode::ExecutionStatus::Completed, 2)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn null_stays_null_across_the_worker_boundary_and_on_replay() {
    let db = temp_db();
    let runtime = open(&db, &Items::new()).await;
    let bare = json_of(&runtime.execute("async () => null").await.unwrap());
    assert_eq!(bare["status"], "completed");
    assert_eq!(bare.get("result"), Some(&Value::Null), "{bare}");
    let code = "async () => { const s = await codemode.step('s', () => null); \
                const item = await items.create_item({ title: 'x' }); \
                return [s === null, s === undefined, item.title]; }";
    let paused = runtime.execute(code).await.unwrap();
    assert_eq!(json_of(&paused)["status"], "paused");
    let done = json_of(
        &runtime
            .approve(paused.execution_id(), Actor::Api, None)
            .await
            .unwrap(),
    );
    assert_eq!(done["result"], json!([true, false, "x"]), "{done}");
}

#[tokio::test(flavor = "multi_thread")]
async fn arguments_too_deep_to_record_end_the_run_instead_of_calling_with_nothing() {
    let db = temp_db();
    let items = Items::new();
    let runtime = open(&db, &items).await;
    let code = "async () => { let a = 0; for (let i = 0; i < 200; i++) a = [a]; \
                return await items.create_item({ title: 'deep', nested: a }); }";
    let outcome = json_of(&runtime.execute(code).await.unwrap());
    assert_eq!(outcome["status"], "error", "{outcome}");
    let error = outcome["error"].as_str().unwrap_or_default();
    assert!(error.contains("Arguments to items.create_item"), "{error}");
    assert!(
        runtime.pending(None).unwrap().is_empty(),
        "nothing waits for approval"
    );
}

#[test]
fn a_request_waiting_on_a_busy_database_stalls_no_other_task() {
    if support::on_postgres() {
        // Another process holding SQLite's write lock; the shared store's counterpart is in tests/shared_store.rs.
        return;
    }
    // `codemode mcp` runs one async worker thread: a request waiting (up to the busy timeout) for another
    // process's write lock must not hold it.
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    tokio.block_on(async {
        let db = temp_db();
        let runtime = open(&db, &Items::new()).await;
        let other_process = rusqlite::Connection::open(&db).unwrap();
        other_process.execute_batch("BEGIN IMMEDIATE").unwrap();
        let waiting = tokio::spawn({
            let runtime = runtime.clone();
            async move { runtime.expire_paused(std::time::Duration::ZERO).await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let other = tokio::spawn(async { "answered" });
        let answered = tokio::time::timeout(std::time::Duration::from_secs(5), other).await;
        assert_eq!(answered.expect("not stalled").unwrap(), "answered");
        assert!(!waiting.is_finished(), "still waiting for the lock");
        other_process.execute_batch("COMMIT").unwrap();
        assert!(waiting.await.unwrap().unwrap().is_empty());
    });
}

/// Runs belong to their runtime (docs/shared-store.md, "Runs belong to their runtime"): a runtime of another
/// name on the same file neither reads, decides, rejects, previews, rolls back, recovers nor deletes a run it
/// names by id, and the run is as it was. `tests/shared_store.rs` does the same on one PostgreSQL database.
#[tokio::test(flavor = "multi_thread")]
async fn a_runtime_of_another_name_can_neither_read_decide_nor_undo_a_run_by_id() {
    use support::isolation;
    let db = temp_db();
    let (mine, theirs) = (Items::new(), Items::new());
    let owner = open(&db, &mine).await;
    let intruder = open_with(
        &db,
        RuntimeOptions {
            name: "other".into(),
            ..options()
        },
        vec![theirs.clone()],
    )
    .await;
    let intruder_store = codemode::Store::open(
        &support::store_at(&db),
        "other",
        None,
        Arc::new(codemode::SystemClock),
    )
    .expect("the other runtime's store opens");
    let (paused, done) = isolation::paused_and_done(&owner).await;
    let before = isolation::snapshot(&owner, [&paused, &done]);

    isolation::another_runtime_cannot_touch(&intruder, &intruder_store, &paused, &done).await;
    // Steps told for a run that is not running are not recorded, by its own runtime either.
    let owner_store = codemode::Store::open(
        &support::store_at(&db),
        &options().name,
        None,
        Arc::new(codemode::SystemClock),
    )
    .expect("the owner's store opens");
    assert!(
        !owner_store
            .record_steps(&paused, &isolation::two_steps_told(), 0)
            .unwrap()
    );

    assert_eq!(isolation::snapshot(&owner, [&paused, &done]), before);
    assert_eq!(
        mine.with(|s| s.items.len()),
        1,
        "only the owner's approved call ran"
    );
    assert!(
        theirs.with(|s| s.items.is_empty()),
        "the other runtime's connector never ran"
    );
    // The owner decides and undoes its runs as before.
    let approved = owner.approve(&paused, Actor::Console, None).await.unwrap();
    assert_eq!(approved.status(), "completed", "{approved:?}");
    assert_eq!(owner.rollback(&done).await.unwrap().reverted.len(), 1);
    assert_eq!(mine.with(|s| s.items.len()), 1);
}
