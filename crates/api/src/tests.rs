//! The API's contract: error codes, the config gate, the approval cards and the connector listing, over a
//! real data directory (the default `connectors.json` with its `files` connector).

use super::*;
use codemode::{Actor, ExecutionQuery, ExecutionStatus, Outcome, PendingAction, SaveSnippet};
use serde_json::json;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The sandbox worker: beside the test binary's folder once the workspace is built; built if it is not.
fn worker() -> PathBuf {
    let worker = codemode::executor::default_worker_path();
    if !worker.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "codemode", "--bin", "codemode-worker"])
            .status()
            .expect("cargo builds the worker");
        assert!(status.success());
    }
    worker
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("codemode-api-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary data directory");
    dir
}

async fn open(dir: &Path) -> Api {
    let options = HomeOptions {
        worker: Some(worker()),
        ..HomeOptions::default()
    };
    Api::open(dir, options)
        .await
        .expect("the data directory opens")
}

const LIST_THEN_WRITE: &str = r#"async () => {
  await files.list_dir({ path: "." });
  await files.write_file({ path: "a.txt", content: "one" });
  return "written";
}"#;

fn paused_id(outcome: &Outcome) -> String {
    assert_eq!(outcome.status(), "paused", "{outcome:?}");
    outcome.execution_id().to_owned()
}

fn code_of<T: std::fmt::Debug>(result: Result<T, ApiError>) -> ErrorCode {
    match result {
        Ok(value) => panic!("expected an error, got {value:?}"),
        Err(error) => error.code,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_ids_are_not_found_everywhere() {
    let api = open(&fresh_dir("unknown")).await;
    let id = "exec_nope";
    assert_eq!(code_of(api.execution(id)), ErrorCode::NotFound);
    assert_eq!(
        api.execution(id).err().map(|e| e.message),
        Some("No execution \"exec_nope\"".to_owned())
    );
    assert_eq!(
        code_of(api.approve(id, Actor::Api, None).await),
        ErrorCode::NotFound
    );
    assert_eq!(
        code_of(api.reject(id, 0, Actor::Api, None).await),
        ErrorCode::NotFound
    );
    assert_eq!(code_of(api.rollback(id).await), ErrorCode::NotFound);
    assert_eq!(code_of(api.rollback_plan(id).await), ErrorCode::NotFound);
    assert_eq!(code_of(api.recover(id).await), ErrorCode::NotFound);
    assert_eq!(code_of(api.delete(id).await), ErrorCode::NotFound);
    assert_eq!(
        code_of(api.wait(id, Duration::ZERO).await),
        ErrorCode::NotFound
    );
    let save = SaveSnippet {
        execution_id: id.to_owned(),
        ..SaveSnippet::default()
    };
    assert_eq!(code_of(api.save_snippet("s", save)), ErrorCode::NotFound);
    assert_eq!(code_of(api.delete_snippet("s")), ErrorCode::NotFound);
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn decisions_approve_reject_and_wait() {
    let api = open(&fresh_dir("decide")).await;
    let done = api.run("async () => 6 * 7", "test").await.expect("runs");
    assert_eq!(done.status(), "completed");
    // A stale approval changes nothing and says so with its code.
    let again = api.approve(done.execution_id(), Actor::Api, None).await;
    assert_eq!(code_of(again), ErrorCode::Stale);

    let id = paused_id(&api.run(LIST_THEN_WRITE, "test").await.expect("runs"));
    let waited = api.wait(&id, Duration::ZERO).await.expect("waits");
    assert!(
        matches!(&waited, WaitOutcome::Outcome(Outcome::Paused { pending, .. }) if pending[0].seq == 1),
        "{waited:?}"
    );
    assert_eq!(
        code_of(api.reject(&id, 7, Actor::Api, None).await),
        ErrorCode::Stale
    );
    api.reject(&id, 1, Actor::Api, None)
        .await
        .expect("rejected");
    assert_eq!(
        code_of(api.reject(&id, 1, Actor::Api, None).await),
        ErrorCode::Stale
    );
    let waited = serde_json::to_value(api.wait(&id, Duration::from_secs(5)).await.expect("waits"))
        .expect("serialises");
    assert_eq!(waited["status"], "error", "{waited}");
    assert_eq!(waited["executionId"], id.as_str());

    let id = paused_id(&api.run(LIST_THEN_WRITE, "test").await.expect("runs"));
    let approved = api.approve(&id, Actor::Api, None).await.expect("approves");
    assert_eq!(approved.status(), "completed", "{approved:?}");
    let waited = serde_json::to_value(api.wait(&id, Duration::ZERO).await.expect("waits"))
        .expect("serialises");
    assert_eq!(
        (&waited["status"], &waited["result"]),
        (&json!("completed"), &json!("written"))
    );
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_queue_lists_calls_without_their_runs_and_a_card_brings_code_and_earlier_calls() {
    let api = open(&fresh_dir("cards")).await;
    assert!(api.approval_queue().expect("queue").is_empty());
    let first = paused_id(&api.run(LIST_THEN_WRITE, "first").await.expect("runs"));
    let second = paused_id(&api.run(LIST_THEN_WRITE, "second").await.expect("runs"));
    let done = api.run("async () => 1", "done").await.expect("runs");
    assert_eq!(done.status(), "completed");

    let queue = api.approval_queue().expect("queue");
    let ids: Vec<&str> = queue
        .iter()
        .map(|c| c.action.execution_id.as_str())
        .collect();
    assert_eq!(
        ids,
        vec![second.as_str(), first.as_str()],
        "newest run first"
    );
    assert_eq!(queue[0].source.as_deref(), Some("second"));
    let card = &api
        .approval_card(&second, queue[0].action.seq)
        .expect("card");
    assert_eq!(card.action, queue[0].action);
    assert_eq!(card.arguments, queue[0].arguments);
    assert_eq!(card.expires_at, queue[0].expires_at);
    assert_eq!(
        (
            card.action.seq,
            card.action.connector.as_str(),
            card.action.method.as_str()
        ),
        (1, "files", "write_file")
    );
    assert_eq!(
        card.action.args,
        Some(json!({"path": "a.txt", "content": "one"}))
    );
    assert_eq!(card.execution.code, LIST_THEN_WRITE);
    assert_eq!(card.execution.source.as_deref(), Some("second"));
    let earlier: Vec<(u64, &str)> = card
        .execution
        .log
        .iter()
        .map(|e| (e.seq, e.method.as_str()))
        .collect();
    assert_eq!(earlier, vec![(0, "list_dir"), (1, "write_file")]);
    let ttl = api.settings().paused_ttl.as_millis() as i64;
    assert_eq!(card.expires_at, card.execution.updated_at + ttl);
    // The same pending calls as the runtime lists them, in the same order.
    let pending: Vec<PendingAction> = queue.iter().map(|c| c.action.clone()).collect();
    assert_eq!(pending, api.pending(None).expect("pending"));
    let shown = serde_json::to_value(card).expect("serialises");
    assert!(shown.get("expiresAt").is_some() && shown["execution"]["log"].is_array());
    // A call that no longer waits has no card: the window says so instead of showing an old one.
    api.reject(&second, 1, Actor::Api, None)
        .await
        .expect("rejects");
    let gone = api.approval_card(&second, 1).expect_err("not waiting");
    assert_eq!(gone.code, ErrorCode::Stale);
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn executions_with_logs_filter_and_limit() {
    let api = open(&fresh_dir("pages")).await;
    let mut paused = Vec::new();
    for _ in 0..3 {
        paused.push(paused_id(
            &api.run(LIST_THEN_WRITE, "t").await.expect("runs"),
        ));
    }
    api.run("async () => 1", "t").await.expect("runs");
    let all = api
        .executions_with_logs(&ExecutionQuery::default())
        .expect("all");
    assert_eq!(all.len(), 4);
    let two = api
        .executions_with_logs(&ExecutionQuery {
            status: Some(ExecutionStatus::Paused),
            limit: Some(2),
            ..ExecutionQuery::default()
        })
        .expect("paused");
    let ids: Vec<&str> = two.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, vec![paused[2].as_str(), paused[1].as_str()]);
    assert_eq!(two[0].log.len(), 2, "with the log");
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_config_refuses_every_mutation_with_config_and_reads_still_work() {
    let dir = fresh_dir("broken");
    let good = open(&dir).await;
    let id = paused_id(&good.run(LIST_THEN_WRITE, "t").await.expect("runs"));
    good.shutdown().await;
    drop(good);
    std::fs::write(
        dir.join("connectors.json"),
        "{\n  \"connectors\": {\n    \"files\": { \"type\": \"files\", \"root\": 5 }\n  }\n}\n",
    )
    .expect("write the broken file");
    let api = open(&dir).await;
    assert!(api.config_error().is_some());
    let config = ErrorCode::Config;
    assert_eq!(code_of(api.run("async () => 1", "t").await), config);
    assert_eq!(code_of(api.approve(&id, Actor::Api, None).await), config);
    assert_eq!(code_of(api.reject(&id, 1, Actor::Api, None).await), config);
    assert_eq!(code_of(api.rollback(&id).await), config);
    assert_eq!(code_of(api.recover(&id).await), config);
    assert_eq!(code_of(api.delete(&id).await), config);
    assert_eq!(code_of(api.prune(Some(0)).await), config);
    assert_eq!(code_of(api.expire(Some(Duration::ZERO)).await), config);
    assert_eq!(
        api.sweep().await,
        Ok(Vec::new()),
        "the timer's round expires nothing"
    );
    let save = SaveSnippet {
        execution_id: id.clone(),
        ..SaveSnippet::default()
    };
    assert_eq!(code_of(api.save_snippet("s", save)), config);
    assert_eq!(code_of(api.delete_snippet("s")), config);
    assert_eq!(
        code_of(api.save_runtime_settings(&api.runtime_settings())),
        config
    );
    let message = api.run("async () => 1", "t").await.err().map(|e| e.message);
    assert!(
        message.is_some_and(|m| m.starts_with("connectors.json is invalid: ")),
        "the message says why"
    );

    // Reading works, and nothing was changed by the refused operations.
    assert_eq!(
        api.execution(&id).expect("reads").status,
        ExecutionStatus::Paused
    );
    assert_eq!(api.approval_queue().expect("queue").len(), 1);
    assert_eq!(api.pending(None).expect("pending").len(), 1);
    assert_eq!(
        api.executions(&ExecutionQuery::default())
            .expect("page")
            .executions
            .len(),
        1
    );
    assert!(api.snippets().expect("snippets").is_empty());
    assert!(api.rollback_plan(&id).await.expect("plan").is_empty());
    assert!(api.connectors().await.is_empty());
    assert_eq!(api.runtime_settings().paused_ttl, "1d");
    let waited = api.wait(&id, Duration::ZERO).await.expect("waits");
    assert!(matches!(
        waited,
        WaitOutcome::Outcome(Outcome::Paused { .. })
    ));
    api.shutdown().await;
}

/// An object's keys, in order.
fn keys(value: &serde_json::Value) -> Vec<&str> {
    value
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn connectors_are_listed_in_one_shape() {
    let dir = fresh_dir("listing");
    let api = open(&dir).await;
    let listing = serde_json::to_value(api.connectors().await).expect("serialises");
    let files = &listing[0];
    assert_eq!(
        keys(files),
        vec![
            "name", "kind", "endpoint", "status", "error", "hint", "signedIn", "reverts",
            "previews", "methods"
        ]
    );
    assert_eq!(
        (
            &files["name"],
            &files["kind"],
            &files["status"],
            &files["error"]
        ),
        (
            &json!("files"),
            &json!("files"),
            &json!("ready"),
            &json!(null)
        )
    );
    assert!(
        files["endpoint"]
            .as_str()
            .is_some_and(|e| e.ends_with("workspace")),
        "{files}"
    );
    let write = files["methods"]
        .as_array()
        .and_then(|methods| methods.iter().find(|m| m["name"] == "write_file"))
        .cloned()
        .expect("write_file is listed");
    assert_eq!(write["arguments"], json!(["path", "content", "encoding"]));
    assert_eq!(
        keys(&write),
        vec![
            "name",
            "description",
            "requiresApproval",
            "replay",
            "revertible",
            "hidden",
            "arguments"
        ]
    );
    assert_eq!(
        (
            &write["requiresApproval"],
            &write["replay"],
            &write["revertible"],
            &write["hidden"]
        ),
        (&json!(true), &json!("log"), &json!(true), &json!(false))
    );
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn runtime_settings_are_read_and_written_through_connectors_json() {
    let dir = fresh_dir("settings");
    let api = open(&dir).await;
    let mut form = api.runtime_settings();
    assert_eq!(
        (form.paused_ttl.as_str(), form.expiry_sweep_minutes),
        ("1d", 10)
    );
    form.paused_ttl = "soon".to_owned();
    assert_eq!(
        code_of(api.save_runtime_settings(&form)),
        ErrorCode::InvalidArgs
    );
    form.paused_ttl = "90m".to_owned();
    // How long decided runs are kept is set in the same form (docs/design.md, "Retention").
    assert_eq!(form.keep_decided_for, "90d");
    form.keep_decided_for = "forever".to_owned();
    let refused = api
        .save_runtime_settings(&form)
        .expect_err("not a duration");
    assert_eq!(refused.code, ErrorCode::InvalidArgs);
    assert!(
        refused.message.contains("keepDecidedFor"),
        "{}",
        refused.message
    );
    form.keep_decided_for = "30d".to_owned();
    api.save_runtime_settings(&form).expect("saved");
    api.shutdown().await;
    drop(api);
    let reopened = open(&dir).await;
    assert_eq!(reopened.runtime_settings().paused_ttl, "90m");
    assert_eq!(reopened.runtime_settings().keep_decided_for, "30d");
    assert_eq!(reopened.sweep_interval(), Duration::from_secs(600));
    reopened.shutdown().await;
}

/// The run's only waiting call, as `(id, seq)`.
async fn waiting(api: &Api, code: &str) -> (String, u64) {
    let outcome = api.run(code, "test").await.expect("runs");
    let id = paused_id(&outcome);
    let seq = api.pending(Some(&id)).expect("pending")[0].seq;
    (id, seq)
}

/// The call run `id` waits on, as a card shows it.
fn shown(api: &Api, id: &str) -> ShownCall {
    let action = api.pending(Some(id)).expect("pending").remove(0);
    ShownCall {
        execution_id: id.to_owned(),
        seq: action.seq,
        digest: action.digest,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_preview_shows_the_change_and_the_decision_keeps_what_was_shown() {
    let api = open(&fresh_dir("preview")).await;
    let (id, seq) = waiting(
        &api,
        r#"async () => files.write_file({ path: "notes/a.md", content: "one\ntwo\n" })"#,
    )
    .await;
    let view = api
        .preview(&id, seq)
        .await
        .expect("previews")
        .expect("files previews a write");
    // A new file: everything is inserted.
    assert_eq!(
        serde_json::to_value(&view.preview).expect("json"),
        json!({"kind": "diff", "path": "notes/a.md", "before": null, "after": "one\ntwo\n"})
    );
    assert!(view.hunks[0].lines.iter().all(|l| l.tag == LineTag::Insert));
    api.approve(&id, Actor::Api, None).await.expect("approves");
    let entry = api.execution(&id).expect("run").log.remove(0);
    let shown = entry
        .decision
        .and_then(|d| d.shown)
        .expect("the decision keeps the preview");
    assert_eq!(shown.preview.as_ref(), Some(&view.preview));
    assert_eq!(shown.digest.len(), 64);

    // Changing the file: the old and the new line, the changed word marked.
    let (id, seq) = waiting(
        &api,
        r#"async () => files.write_file({ path: "notes/a.md", content: "one\n2\n" })"#,
    )
    .await;
    let view = api
        .preview(&id, seq)
        .await
        .expect("previews")
        .expect("a diff");
    let changed: Vec<_> = view.hunks[0]
        .lines
        .iter()
        .filter(|l| l.tag != LineTag::Equal)
        .collect();
    assert_eq!(changed.len(), 2, "{changed:?}");
    assert_eq!((changed[0].tag, changed[0].old), (LineTag::Delete, Some(2)));
    assert_eq!((changed[1].tag, changed[1].new), (LineTag::Insert, Some(2)));
    assert!(view.unified().expect("text").contains("-two\n+2"));
    api.reject(&id, seq, Actor::Api, Some("not now"))
        .await
        .expect("rejects");
    let entry = api.execution(&id).expect("run").log.remove(0);
    let decision = entry.decision.expect("decided");
    assert_eq!(decision.reason.as_deref(), Some("not now"));
    assert_eq!(decision.shown.and_then(|s| s.preview), Some(view.preview));

    // A delete shows what will be lost; a move what it overwrites; binary content its sizes and digests.
    let (id, seq) = waiting(
        &api,
        r#"async () => files.delete_file({ path: "notes/a.md" })"#,
    )
    .await;
    let view = api
        .preview(&id, seq)
        .await
        .expect("previews")
        .expect("a delete");
    assert_eq!(
        serde_json::to_value(&view.preview).expect("json"),
        json!({"kind": "delete", "path": "notes/a.md", "before": "one\ntwo\n"})
    );
    assert!(view.hunks[0].lines.iter().all(|l| l.tag == LineTag::Delete));
    api.reject(&id, seq, Actor::Api, None)
        .await
        .expect("rejects");
    let (id, seq) = waiting(
        &api,
        r#"async () => files.write_file({ path: "b.bin", content: "AAEC", encoding: "base64" })"#,
    )
    .await;
    let view = api
        .preview(&id, seq)
        .await
        .expect("previews")
        .expect("binary");
    assert!(
        matches!(
            view.preview,
            codemode::Preview::Binary {
                after_size: 3,
                before_size: None,
                ..
            }
        ),
        "{view:?}"
    );
    assert!(view.hunks.is_empty());
    api.reject(&id, seq, Actor::Api, None)
        .await
        .expect("rejects");

    // A call no longer waiting has no preview to give.
    assert_eq!(code_of(api.preview(&id, seq).await), ErrorCode::Stale);
    assert_eq!(
        code_of(api.preview("exec_nope", 0).await),
        ErrorCode::NotFound
    );
    api.shutdown().await;
}

fn write_to(path: &str) -> String {
    format!(r#"async () => files.write_file({{ path: "{path}", content: "x" }})"#)
}

#[tokio::test(flavor = "multi_thread")]
async fn several_decisions_report_each_and_a_stale_one_fails_alone() {
    let api = open(&fresh_dir("many")).await;
    let (a, _) = waiting(&api, &write_to("a.txt")).await;
    let (b, seq_b) = waiting(&api, &write_to("b.txt")).await;
    let (c, _) = waiting(&api, &write_to("c.txt")).await;
    let (shown_a, shown_b, shown_c) = (shown(&api, &a), shown(&api, &b), shown(&api, &c));
    api.reject(&b, seq_b, Actor::Api, None)
        .await
        .expect("rejected");
    let results = api.approve_many(&[shown_a, shown_b], Actor::Console).await;
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[0].outcome.as_ref().map(Outcome::status),
        Some("completed")
    );
    assert_eq!(
        results[1].error.as_ref().map(|e| e.code),
        Some(ErrorCode::Stale)
    );
    let rejected = api
        .reject_many(&[shown_c.clone(), shown_c], Actor::Console, Some("no"))
        .await;
    assert!(rejected[0].error.is_none());
    assert_eq!(
        rejected[1].error.as_ref().map(|e| e.code),
        Some(ErrorCode::Stale)
    );
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_and_allow_adds_the_rule_approves_the_waiting_it_matches_and_lets_the_next_through()
{
    let api = open(&fresh_dir("allow")).await;
    let (first, _) = waiting(&api, &write_to("scratch/1.txt")).await;
    let (second, _) = waiting(&api, &write_to("scratch/2.txt")).await;
    let (elsewhere, _) = waiting(&api, &write_to("notes/3.txt")).await;
    // Written otherwise, the same folder: the rule reads the path the connector will write.
    let (dotted, _) = waiting(&api, &write_to("./scratch/5.txt")).await;
    // What the window sends: the path as a glob, any content; the rule is built from it here.
    let intent: codemode::AllowIntent = serde_json::from_value(json!({
        "args": {"path": {"mode": "glob", "pattern": "scratch/**"}}
    }))
    .expect("an intent");
    let preview = api
        .allow_reach(&first, None, &intent, Actor::Console)
        .expect("reach");
    assert_eq!(
        serde_json::to_value(&preview.rule.when).expect("json"),
        json!({"path": {"glob": "scratch/**"}})
    );
    assert_eq!(preview.rule.call, "files.write_file");
    let reach = preview.reach;
    assert_eq!(reach.waiting.len(), 3, "{reach:?}");
    assert!(reach.waiting.contains(&first) && reach.waiting.contains(&second));
    assert!(reach.waiting.contains(&dotted));
    assert!(!reach.waiting.contains(&elsewhere));

    let report = api
        .approve_allowing(&first, None, Actor::Console, None, &intent, true)
        .await
        .expect("approved and allowed");
    assert_eq!(report.outcome.status(), "completed");
    let also: Vec<&str> = report
        .also_approved
        .iter()
        .map(|a| a.execution_id.as_str())
        .collect();
    assert_eq!(also, [dotted.as_str(), second.as_str()], "newest run first");
    assert_eq!(
        api.execution(&second).expect("run").status,
        ExecutionStatus::Completed
    );
    assert_eq!(
        api.execution(&elsewhere).expect("run").status,
        ExecutionStatus::Paused
    );
    let next = api
        .run(&write_to("scratch/4.txt"), "test")
        .await
        .expect("runs");
    assert_eq!(
        next.status(),
        "completed",
        "the rule lets it through: {next:?}"
    );
    let listing = api.rules().expect("rules");
    assert_eq!(listing[0].created_by.as_deref(), Some("console"));
    // The four calls it let through are recent calls it matches; a waiting call is not a recent one.
    let reach = api.rule_reach(&listing[0].rule).expect("reach");
    assert_eq!((reach.recent, reach.recent_calls), (4, 4), "{reach:?}");
    assert!(
        reach.waiting.is_empty(),
        "notes/3.txt waits, and is not in scratch/: {reach:?}"
    );

    // Switched off, the rule decides nothing: the next call waits again; switched on, it passes again.
    let mut off = listing[0].rule.clone();
    let id = off.id.clone();
    assert!(id.starts_with("allow-files-write_file-"), "{id}");
    off.disabled = true;
    api.replace_rule(&id, off.clone()).expect("switched off");
    let paused = api
        .run(&write_to("scratch/6.txt"), "test")
        .await
        .expect("runs");
    assert_eq!(paused.status(), "paused");
    off.disabled = false;
    api.replace_rule(&id, off).expect("switched on");
    assert_eq!(
        api.rules().expect("rules")[0].hits,
        listing[0].hits,
        "hits survive an edit"
    );
    let passed = api
        .run(&write_to("scratch/6.txt"), "test")
        .await
        .expect("runs");
    assert_eq!(passed.status(), "completed");
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_is_checked_before_it_is_sent() {
    let api = open(&fresh_dir("check-edit")).await;
    let (id, _) = waiting(&api, &write_to("a.txt")).await;
    api.check_edit(&id, &json!({"path": "b.txt", "content": "y"}))
        .await
        .expect("fits");
    assert_eq!(
        code_of(api.check_edit(&id, &json!({"path": 5})).await),
        ErrorCode::InvalidArgs
    );
    assert_eq!(
        api.execution(&id).expect("run").status,
        ExecutionStatus::Paused,
        "a check decides nothing"
    );
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_notification_decides_as_the_window_does_unless_the_call_is_confirmed_in_the_app() {
    let dir = fresh_dir("notification");
    let api = open(&dir).await;
    // Approve from the notification: recorded by "notification", the run goes on.
    let (id, seq) = waiting(&api, &write_to("n1.txt")).await;
    let action = api.pending(Some(&id)).expect("pending").remove(0);
    let card = api.notification_card(&action).await;
    assert_eq!(card.summary, "files.write_file awaits approval");
    assert!(
        card.body.contains("n1.txt") && card.body.ends_with("from test"),
        "{}",
        card.body
    );
    assert!(!card.confirm_in_app);
    let answered = api
        .answer_notification(&id, seq, true)
        .await
        .expect("answered");
    assert_eq!(
        answered,
        NotificationAnswer::Decided {
            status: "completed".to_owned()
        }
    );
    let entry = api.execution(&id).expect("run").log.remove(seq as usize);
    let decision = entry.decision.expect("a decision");
    assert_eq!(
        (decision.kind, decision.by.as_str()),
        (codemode::DecisionKind::Approved, "notification")
    );
    // Answered again: stale, and nothing changes.
    let again = api
        .answer_notification(&id, seq, false)
        .await
        .expect("answered");
    assert_eq!(
        again,
        NotificationAnswer::Stale("Already decided: the run is completed.".to_owned())
    );

    // Reject from the notification.
    let (id, seq) = waiting(&api, &write_to("n2.txt")).await;
    let answered = api
        .answer_notification(&id, seq, false)
        .await
        .expect("answered");
    assert_eq!(
        answered,
        NotificationAnswer::Decided {
            status: "rejected".to_owned()
        }
    );
    assert_eq!(
        api.execution(&id).expect("run").status,
        ExecutionStatus::Rejected
    );

    // An `ask` rule with confirmInApp: the notification offers Open only, and an answer is refused.
    api.add_rule(
        serde_json::from_value(json!({
            "id": "in-the-app", "effect": "ask", "call": "files.write_file",
            "when": { "path": { "glob": "secret/**" } }, "confirmInApp": true
        }))
        .expect("a rule"),
        Actor::Cli,
    )
    .expect("added");
    let (id, seq) = waiting(&api, &write_to("secret/n3.txt")).await;
    let action = api.pending(Some(&id)).expect("pending").remove(0);
    // The call names the rule that asked, and carries its confirmInApp: nothing is judged again to show it.
    assert_eq!(action.asked_by.as_deref(), Some("in-the-app"));
    assert!(api.notification_card(&action).await.confirm_in_app);
    assert_eq!(
        code_of(api.answer_notification(&id, seq, true).await),
        ErrorCode::InvalidArgs
    );
    assert_eq!(
        api.execution(&id).expect("run").status,
        ExecutionStatus::Paused
    );
    // The same method elsewhere is not covered by that rule.
    let (other, _) = waiting(&api, &write_to("n4.txt")).await;
    let action = api.pending(Some(&other)).expect("pending").remove(0);
    assert!(!api.notification_card(&action).await.confirm_in_app);
    drop(api);

    // confirmInApp in connectors.json: every listed method of that connector.
    let path = dir.join("connectors.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("config")).expect("json");
    config["connectors"]["files"]["confirmInApp"] = json!(["write_file"]);
    std::fs::write(&path, config.to_string()).expect("written");
    let api = open(&dir).await;
    let action = api.pending(Some(&other)).expect("pending").remove(0);
    assert!(api.notification_card(&action).await.confirm_in_app);
    config["connectors"]["files"]["confirmInApp"] = json!(7);
    std::fs::write(&path, config.to_string()).expect("written");
    let api = open(&dir).await;
    let error = api
        .config_error()
        .expect("a bad confirmInApp is a config error");
    assert!(
        error.contains("confirmInApp must be true, \"*\" or a list of method names"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_output_budget_comes_from_connectors_json_and_has_a_floor() {
    let dir = fresh_dir("budget");
    assert_eq!(
        open(&dir).await.output_budget(false).max_chars,
        DEFAULT_MAX_OUTPUT_CHARS
    );
    let path = dir.join("connectors.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("config")).expect("json");
    config["runtime"] = json!({"maxOutputChars": 5000});
    std::fs::write(&path, config.to_string()).expect("written");
    let api = open(&dir).await;
    assert_eq!(
        api.output_budget(true),
        OutputBudget {
            max_chars: 5000,
            include_calls: true
        }
    );
    // Saving the runtime settings from the app keeps it.
    api.save_runtime_settings(&api.runtime_settings())
        .expect("saved");
    assert_eq!(open(&dir).await.output_budget(false).max_chars, 5000);
    config["runtime"] = json!({"maxOutputChars": 100});
    std::fs::write(&path, config.to_string()).expect("written");
    let error = open(&dir)
        .await
        .config_error()
        .map(str::to_owned)
        .expect("refused");
    assert!(
        error.contains("maxOutputChars must be at least 2000"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn connectors_edited_by_one_process_are_used_by_another_on_its_next_operation() {
    let dir = fresh_dir("managing");
    let options = HomeOptions {
        worker: Some(worker()),
        ..HomeOptions::default()
    };
    // Two hosts on one data directory: "the app" edits, "codemode mcp" follows.
    let app = FollowingApi::open(&dir, options.clone()).await;
    let agent_host = FollowingApi::open(&dir, options).await;
    let before = app.generation();

    // write_file is gated by default; the app turns its approval off, then on again.
    let api = app.current().await.unwrap();
    api.set_method_flag("files", "write_file", MethodFlag::Approval, false)
        .await
        .unwrap();
    let text = std::fs::read_to_string(dir.join("connectors.json")).unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        file["connectors"]["files"]["approval"],
        json!(["delete_file", "move_file"])
    );
    assert_eq!(
        keys(&file),
        vec!["runtime", "connectors", "mcpServers"],
        "the rest of the file stays"
    );
    let followed = agent_host.current().await.unwrap();
    let outcome = followed
        .run(
            r#"async () => files.write_file({ path: "free.txt", content: "x" })"#,
            "mcp",
        )
        .await
        .unwrap();
    assert_eq!(outcome.status(), "completed", "{outcome:?}");
    assert!(agent_host.generation() > before);

    // A server added and removed; a bad one is refused and the file is left as it was.
    let api = app.current().await.unwrap();
    let draft = ServerDraft {
        name: "ledger".into(),
        command: Some("python3".into()),
        args: vec!["ledger.py".into()],
        env: [("TOKEN".to_owned(), "t0ken-value".to_owned())].into(),
        ..ServerDraft::default()
    };
    api.add_server(&draft).unwrap();
    assert_eq!(code_of(api.add_server(&draft)), ErrorCode::InvalidArgs);
    let pasted = api
        .add_pasted(r#"{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "m"]}, "bad": {"command": "x", "colour": "red"}}}"#)
        .unwrap_err();
    assert!(pasted.message.contains("colour"), "{pasted:?}");
    let listed: Vec<String> = agent_host
        .current()
        .await
        .unwrap()
        .connectors()
        .await
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(
        listed,
        vec!["files", "ledger"],
        "nothing of the refused paste was written"
    );
    let api = app.current().await.unwrap();
    api.remove_connector("ledger").unwrap();
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("connectors.json")).unwrap())
            .unwrap();
    assert_eq!(file["mcpServers"], json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_draft_server_is_tested_without_being_saved() {
    let dir = fresh_dir("testing");
    let api = open(&dir).await;
    let missing = ServerDraft {
        name: "nowhere".into(),
        command: Some("/nonexistent/mcp-server".into()),
        ..ServerDraft::default()
    };
    let report = api
        .test_server(&TestTarget::Draft { draft: missing })
        .await
        .unwrap();
    assert!(!report.ok);
    assert!(
        report
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("cannot run \"/nonexistent/mcp-server\""),
        "{report:?}"
    );
    let text = std::fs::read_to_string(dir.join("connectors.json")).unwrap();
    assert!(!text.contains("nowhere"), "a test saves nothing");
}

/// Time as a test sets it, so a deadline passes without sleeping.
struct SetClock(std::sync::atomic::AtomicI64);

/// The API on `dir` with a clock that stands at `start` until the test moves it.
async fn open_at(dir: &Path, start: i64) -> (Api, std::sync::Arc<SetClock>) {
    let clock = std::sync::Arc::new(SetClock(start.into()));
    let options = HomeOptions {
        worker: Some(worker()),
        clock: Some(clock.clone()),
        ..HomeOptions::default()
    };
    (Api::open(dir, options).await.expect("opens"), clock)
}

impl codemode::Clock for SetClock {
    fn now_ms(&self) -> i64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_nobody_decides_within_decide_within_expires_with_an_outcome_that_says_so() {
    let dir = fresh_dir("decide-within");
    std::fs::write(
        dir.join("connectors.json"),
        r#"{
  "connectors": {
    "files": { "type": "files", "root": "workspace", "decideWithin": "1h" }
  },
  "rules": [
    { "id": "timed-notes", "effect": "ask", "call": "files.write_file",
      "when": { "path": { "glob": "notes/**" } }, "decideWithin": "10m" }
  ]
}
"#,
    )
    .unwrap();
    let start = 1_800_000_000_000;
    let (api, clock) = open_at(&dir, start).await;
    let set = |ms: i64| {
        clock
            .0
            .store(start + ms, std::sync::atomic::Ordering::SeqCst)
    };
    let minute = 60_000;

    // The rule's own time wins over the connector's; the connector's holds for every other gated call.
    let (timed, seq) = waiting(&api, &write_to("notes/a.txt")).await;
    let (other, _) = waiting(&api, r#"async () => files.delete_file({ path: "x.txt" })"#).await;
    let action = api.pending(Some(&timed)).expect("pending").remove(0);
    assert_eq!(
        (action.decide_within, action.decide_by),
        (Some(10 * minute), Some(start + 10 * minute))
    );
    let queue = api.approval_queue().expect("queue");
    let row = queue
        .iter()
        .find(|q| q.action.execution_id == timed)
        .unwrap();
    assert_eq!(
        row.expires_at,
        start + 10 * minute,
        "the card counts down to the deadline"
    );
    let other_action = api.pending(Some(&other)).expect("pending").remove(0);
    assert_eq!(other_action.decide_by, Some(start + 60 * minute));
    assert_eq!(
        api.next_deadline_in(),
        Duration::from_secs(30),
        "looks again within 30 s"
    );

    // The reminder: due once 80% of the time has passed, not before, not after the deadline.
    set(8 * minute - 1);
    assert!(api.reminder_card(&action, api.now_ms()).await.is_none());
    set(8 * minute);
    let reminder = api
        .reminder_card(&action, api.now_ms())
        .await
        .expect("a reminder");
    assert_eq!(reminder.summary, "files.write_file: 2 min left to decide");
    assert!(reminder.body.contains("notes/a.txt"), "{}", reminder.body);

    // Before the deadline nothing expires; at it, the call is rejected as expired, by expiry.
    set(10 * minute - 1);
    assert!(api.expire_overdue().await.expect("sweeps").is_empty());
    set(10 * minute);
    assert_eq!(
        api.expire_overdue().await.expect("sweeps"),
        vec![timed.clone()]
    );
    let waited = serde_json::to_value(api.wait(&timed, Duration::ZERO).await.expect("waits"))
        .expect("serialises");
    assert_eq!(waited["status"], "error", "{waited}");
    assert_eq!(
        waited["error"],
        "Action files.write_file expired: nobody decided within 10m"
    );
    let entry = api.execution(&timed).expect("run").log.remove(seq as usize);
    let decision = entry.decision.expect("a decision");
    assert_eq!(
        (decision.kind, decision.by.as_str()),
        (codemode::DecisionKind::Expired, "expiry")
    );
    assert!(api.reminder_card(&action, api.now_ms()).await.is_none());
    // A late answer is stale; the other call still waits for its own hour.
    assert_eq!(
        code_of(api.approve(&timed, Actor::Api, None).await),
        ErrorCode::Stale
    );
    assert_eq!(api.pending(Some(&other)).expect("pending").len(), 1);
    set(60 * minute);
    assert_eq!(api.sweep().await.expect("sweeps"), vec![other.clone()]);
    api.shutdown().await;
}

#[test]
fn decide_within_and_ask_in_client_are_refused_where_they_cannot_mean_anything() {
    let refused =
        |rule: serde_json::Value| codemode::Rule::from_value(rule).unwrap_err().to_string();
    assert_eq!(
        refused(json!({"id": "r", "effect": "ask", "call": "files.*", "decideWithin": "soon"})),
        "rule r: decideWithin: \"soon\" is not a duration (write 30m, 2h, 1d…)"
    );
    assert_eq!(
        refused(json!({"id": "r", "effect": "allow", "call": "files.*", "askInClient": true})),
        "rule r: askInClient: only an ask rule asks anyone"
    );
    let config = connectors::config::parse(
        r#"{"connectors": {"files": {"type": "files", "root": "w", "decideWithin": "0m"}}}"#,
        Path::new("/tmp/connectors.json"),
        Path::new("/tmp"),
    );
    assert!(config.is_err_and(|e| {
        e.to_string()
            .contains("files.decideWithin: \"0m\" is not a duration")
    }),);
}

/// Four eyes on one machine: a rule's `quorum: 2` holds the call after the first approval, says so on every
/// surface, refuses the same person's second approval, and a rejection by anyone ends it. (Two people
/// approving is the shared store's test: crates/codemode/tests/shared_store.rs.)
#[tokio::test(flavor = "multi_thread")]
async fn a_call_a_rule_gives_a_quorum_waits_for_a_second_person() {
    let dir = fresh_dir("quorum");
    std::fs::write(
        dir.join("connectors.json"),
        r#"{
  "connectors": { "files": { "type": "files", "root": "workspace" } },
  "rules": [
    { "id": "notes", "effect": "ask", "call": "files.write_file", "when": { "path": { "glob": "notes/**" } } },
    { "id": "four-eyes", "effect": "ask", "call": "files.write_file", "quorum": 2 }
  ]
}
"#,
    )
    .unwrap();
    let api = open(&dir).await;
    let (id, seq) = waiting(&api, &write_to("notes/a.txt")).await;
    let action = api.pending(Some(&id)).expect("pending").remove(0);
    assert_eq!(
        (action.asked_by.as_deref(), action.quorum),
        (Some("notes"), Some(2)),
        "the largest quorum among the ask rules that match holds, whichever rule asked"
    );
    assert_eq!(action.quorum_line().as_deref(), Some("0 of 2 approvals"));

    // The first approval is counted; the call still waits, and every surface says who approved.
    let outcome = api
        .approve_call(
            &id,
            Some(&shown(&api, &id).call_ref()),
            Actor::Console,
            None,
        )
        .await
        .expect("counted");
    let Outcome::Paused { pending, .. } = &outcome else {
        panic!("still paused: {outcome:?}");
    };
    let me = pending[0].approvals[0].person.clone().expect("a person");
    let line = format!("1 of 2 — approved by {me} via console");
    assert_eq!(pending[0].quorum_line().as_deref(), Some(line.as_str()));
    assert!(!dir.join("workspace/notes/a.txt").exists(), "nothing ran");
    let queue = api.approval_queue().expect("queue");
    assert_eq!(queue[0].quorum.as_deref(), Some(line.as_str()));
    assert_eq!(
        api.approval_card(&id, seq).expect("card").quorum.as_deref(),
        Some(line.as_str())
    );
    let card = api.notification_card(&pending[0]).await;
    assert!(card.body.starts_with(&line), "{}", card.body);

    // The same person again counts for nothing, through any front end; an edit is refused as well.
    let again = api.approve(&id, Actor::Cli, None).await.unwrap_err();
    assert_eq!(again.code, ErrorCode::Stale);
    assert_eq!(
        again.message,
        format!(
            "{me} already approved the call waiting in execution \"{id}\": it needs 2 different people to approve it."
        )
    );
    let edited = api
        .approve(
            &id,
            Actor::Console,
            Some(json!({"path": "notes/b.txt", "content": "x"})),
        )
        .await
        .unwrap_err();
    assert!(
        edited.message.contains("cannot be approved with edits"),
        "{}",
        edited.message
    );
    assert_eq!(
        api.pending(Some(&id)).expect("pending")[0].approvals.len(),
        1
    );

    // A rule that would let such calls through approves none of those waiting for people.
    let rule = codemode::Rule::from_value(
        json!({"id": "let-notes", "effect": "allow", "call": "files.write_file"}),
    )
    .unwrap();
    api.add_rule(rule, Actor::Cli).expect("adds");
    assert!(
        api.approve_waiting("let-notes")
            .await
            .expect("approves")
            .is_empty()
    );
    assert_eq!(api.pending(Some(&id)).expect("pending").len(), 1);

    // A rejection by anyone ends it, and the run's log keeps the approval it had.
    api.reject(&id, seq, Actor::Cli, Some("not this week"))
        .await
        .expect("rejects");
    let run = api.execution(&id).expect("run");
    assert_eq!(run.status, codemode::ExecutionStatus::Rejected);
    assert!(!dir.join("workspace/notes/a.txt").exists());

    // A quorum means nothing on a rule that does not ask, and is a number of people.
    let refused =
        |rule: serde_json::Value| codemode::Rule::from_value(rule).unwrap_err().to_string();
    assert_eq!(
        refused(json!({"id": "r", "effect": "allow", "call": "files.*", "quorum": 2})),
        "rule r: quorum: only an ask rule asks anyone"
    );
    assert_eq!(
        refused(json!({"id": "r", "effect": "ask", "call": "files.*", "quorum": 0})),
        "rule r: quorum: must be a number of people from 1 to 9, not 0"
    );
    api.shutdown().await;
}

/// The history an auditor asks (docs/history.md): filters by time, call, who decided and source, and the
/// export of what they select — JSON lines (each checked against docs/export.schema.json) and CSV — compared
/// with golden files (crates/api/tests/export/; `CODEMODE_WRITE_GOLDEN=1` writes them).
#[tokio::test(flavor = "multi_thread")]
async fn history_filters_select_runs_and_export_writes_them_as_jsonl_and_csv() {
    let dir = fresh_dir("export");
    let start = 1_800_000_000_000;
    let (api, clock) = open_at(&dir, start).await;
    let at = |s: i64| {
        clock
            .0
            .store(start + s * 1000, std::sync::atomic::Ordering::SeqCst)
    };
    let list = r#"async () => files.list_dir({ path: "." })"#;

    at(0);
    let listed = api.run(list, "test").await.expect("runs");
    at(60);
    let (approved, _) = waiting(&api, &write_to("notes/a.txt")).await;
    at(90);
    api.approve(&approved, Actor::Console, None)
        .await
        .expect("approves");
    at(120);
    let (rejected, seq) = waiting(
        &api,
        r#"async () => files.write_file({ path: "b.txt", content: "=SUM(A1), \"x\"\nnext" })"#,
    )
    .await;
    at(150);
    api.reject(&rejected, seq, Actor::Cli, Some("not today"))
        .await
        .expect("rejects");
    at(180);
    let claude = api.run(list, "Claude Code").await.expect("runs");
    let ids = |query: ExecutionQuery| -> Vec<String> {
        api.executions_with_logs(&query)
            .expect("lists")
            .into_iter()
            .map(|run| run.id)
            .collect()
    };
    let (listed, claude) = (
        listed.execution_id().to_owned(),
        claude.execution_id().to_owned(),
    );
    assert_eq!(
        ids(ExecutionQuery {
            call: Some("files.write_*".into()),
            ..Default::default()
        }),
        [rejected.clone(), approved.clone()]
    );
    assert_eq!(
        ids(ExecutionQuery {
            decided_by: Some("cli".into()),
            ..Default::default()
        }),
        [rejected.as_str()]
    );
    let me = api.execution(&approved).unwrap().log[0]
        .decision
        .clone()
        .unwrap()
        .person
        .unwrap();
    assert_eq!(
        ids(ExecutionQuery {
            decided_by: Some(me.clone()),
            ..Default::default()
        }),
        [rejected.clone(), approved.clone()]
    );
    assert_eq!(
        ids(ExecutionQuery {
            source: Some("Claude*".into()),
            ..Default::default()
        }),
        [claude.as_str()]
    );
    assert_eq!(
        ids(ExecutionQuery {
            since: codemode::parse_moment("2027-01-15T08:01:00Z", 0),
            until: Some(start + 150_000),
            ..Default::default()
        }),
        [rejected.clone(), approved.clone()]
    );
    assert_eq!(
        ids(ExecutionQuery {
            since: codemode::parse_moment("1m", api.now_ms()),
            ..Default::default()
        }),
        [claude.clone(), rejected.clone()]
    );

    // A rerun of the approved write from after it: the write is served from that run's record, and both
    // runs name each other in the export.
    at(240);
    let rerun = api
        .rerun(&approved, Some(1), None)
        .await
        .expect("reruns")
        .outcome
        .execution_id()
        .to_owned();

    // The export of everything, newest first, in both formats, with ids and the user name made stable.
    let stable = |text: String| {
        // Only where the user's name stands as a person, so a short name cannot change other text.
        let mut text = text
            .replace(&format!("\"person\":\"{me}\""), "\"person\":\"<user>\"")
            .replace(&format!(",{me},"), ",<user>,");
        for (n, id) in [&listed, &approved, &rejected, &claude, &rerun]
            .iter()
            .enumerate()
        {
            text = text.replace(id.as_str(), &format!("run-{}", n + 1));
        }
        text
    };
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../docs/export.schema.json")).expect("a schema");
    let mut jsonl = Vec::new();
    let exported = api
        .export(
            &ExecutionQuery::default(),
            crate::ExportFormat::Jsonl,
            &mut jsonl,
        )
        .expect("exports");
    assert_eq!((exported.runs, exported.calls), (5, 5));
    let jsonl = String::from_utf8(jsonl).unwrap();
    for line in jsonl.lines() {
        let run: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        codemode::schema::check(&schema, &run).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    let mut csv = Vec::new();
    api.export(
        &ExecutionQuery::default(),
        crate::ExportFormat::Csv,
        &mut csv,
    )
    .expect("exports");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/export");
    for (name, text) in [
        ("all.jsonl", stable(jsonl)),
        ("all.csv", stable(String::from_utf8(csv).unwrap())),
    ] {
        let path = golden.join(name);
        if std::env::var_os("CODEMODE_WRITE_GOLDEN").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        let expected = std::fs::read_to_string(&path).expect("the golden file");
        assert_eq!(text, expected, "{name} differs from {}", path.display());
    }
    api.shutdown().await;
}
