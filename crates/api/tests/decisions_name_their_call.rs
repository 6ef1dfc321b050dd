//! A decision lands on the call the person saw, and a remembered decision means exactly that call
//! (docs/design.md, "A decision names its call" and "Remembered decisions are literal"): each test is a
//! reproduction of a decision that once reached further than what was shown.

use codemode::AllowIntent;
use codemode::{Actor, CallRef, ExecutionStatus, Outcome};
use codemode_api::{Api, ErrorCode, ShownCall};
use connectors::HomeOptions;
use std::path::PathBuf;

mod support;
use support::worker;

/// A fresh data directory with the default `connectors.json` (a `files` workspace whose writes are gated).
async fn open(name: &str) -> (Api, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "codemode-decisions-{name}-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).expect("a data directory");
    let options = HomeOptions {
        worker: Some(worker()),
        ..HomeOptions::default()
    };
    let api = Api::open(&dir, options).await.expect("opens");
    (api, dir)
}

fn shown(api: &Api, id: &str) -> CallRef {
    let action = api.pending(Some(id)).expect("pending").remove(0);
    CallRef {
        seq: action.seq,
        digest: Some(action.digest),
    }
}

fn paused(outcome: &Outcome) -> String {
    assert_eq!(outcome.status(), "paused", "{outcome:?}");
    outcome.execution_id().to_owned()
}

const TWO_WRITES: &str = r#"async () => {
  await files.write_file({ path: "first.txt", content: "1" });
  await files.write_file({ path: "second.txt", content: "2" });
  return "both";
}"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_second_approver_never_approves_a_call_they_did_not_see() {
    let (api, _dir) = open("moved-on").await;
    let id = paused(&api.run(TWO_WRITES, "test").await.unwrap());
    // Two people look at the same card: the first write.
    let seen = shown(&api, &id);
    let first = api
        .approve_call(&id, Some(&seen), Actor::Console, None)
        .await
        .unwrap();
    assert_eq!(
        first.status(),
        "paused",
        "the run moved on to the second write"
    );

    let second = api.approve_call(&id, Some(&seen), Actor::Cli, None).await;
    let error = second.expect_err("the second person saw the first write only");
    assert_eq!(error.code, ErrorCode::Stale, "{error:?}");
    assert!(
        error.message.contains("now waits on call"),
        "{}",
        error.message
    );
    let run = api.execution(&id).unwrap();
    assert_eq!(run.status, ExecutionStatus::Paused);
    assert!(
        !api.dir().join("workspace/second.txt").exists(),
        "the unseen write did not run"
    );

    // Rejecting the first write again is stale too, and leaves the second waiting.
    let rejected = api
        .reject_call(
            &id,
            seen.seq,
            seen.digest.as_deref(),
            Actor::Console,
            Some("no"),
        )
        .await;
    assert_eq!(rejected.unwrap_err().code, ErrorCode::Stale);
    assert_eq!(api.execution(&id).unwrap().status, ExecutionStatus::Paused);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_on_other_arguments_than_shown_is_stale() {
    let (api, _dir) = open("digest").await;
    let id = paused(
        &api.run(
            r#"async () => files.write_file({ path: "a.txt", content: "x" })"#,
            "test",
        )
        .await
        .unwrap(),
    );
    let seen = shown(&api, &id);
    let forged = CallRef {
        seq: seen.seq,
        digest: Some(codemode::args_digest(Some(
            &serde_json::json!({"path": "b.txt", "content": "x"}),
        ))),
    };
    let error = api
        .approve_call(&id, Some(&forged), Actor::Console, None)
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Stale);
    let many = api
        .approve_many(
            &[ShownCall {
                execution_id: id.clone(),
                seq: seen.seq,
                digest: forged.digest.clone().unwrap(),
            }],
            Actor::Console,
        )
        .await;
    assert_eq!(
        many[0].error.as_ref().map(|e| e.code),
        Some(ErrorCode::Stale)
    );
    assert_eq!(api.execution(&id).unwrap().status, ExecutionStatus::Paused);
    let approved = api
        .approve_call(&id, Some(&seen), Actor::Console, None)
        .await
        .unwrap();
    assert_eq!(approved.status(), "completed");
}

#[tokio::test(flavor = "multi_thread")]
async fn remembering_an_approval_never_turns_its_values_into_matchers() {
    let (api, _dir) = open("literal").await;
    // Arguments shaped like a matcher object: remembered as the value they are.
    let id = paused(
        &api.run(r#"async () => files.write_file({ exists: true })"#, "test")
            .await
            .unwrap(),
    );
    let remember = AllowIntent {
        exact: true,
        ..AllowIntent::default()
    };
    let seen = shown(&api, &id);
    let rule = api
        .approve_allowing(&id, Some(&seen), Actor::Cli, None, &remember, false)
        .await
        .unwrap()
        .rule;
    assert_eq!(
        serde_json::to_value(&rule.when).unwrap(),
        serde_json::json!({"": {"exact": {"exists": true}}})
    );
    let next = api
        .run(
            r#"async () => files.write_file({ path: "any.txt", content: "y" })"#,
            "test",
        )
        .await
        .unwrap();
    assert_eq!(
        next.status(),
        "paused",
        "only the remembered call is allowed"
    );
    let same = api
        .run(r#"async () => files.write_file({ exists: true })"#, "test")
        .await
        .unwrap();
    assert_ne!(
        same.status(),
        "paused",
        "the remembered call itself is allowed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_source_that_looks_like_a_pattern_is_remembered_as_itself() {
    let (api, _dir) = open("source").await;
    let write =
        |path: &str| format!(r#"async () => files.write_file({{ path: "{path}", content: "z" }})"#);
    let id = paused(&api.run(&write("s.txt"), "*").await.unwrap());
    let remember = AllowIntent {
        only_source: true,
        ..AllowIntent::default()
    };
    let rule = api
        .approve_allowing(&id, None, Actor::Cli, None, &remember, false)
        .await
        .unwrap()
        .rule;
    assert_eq!(rule.source.as_deref(), Some("\\*"));
    let from_cli = api.run(&write("t.txt"), "cli").await.unwrap();
    assert_eq!(
        from_cli.status(),
        "paused",
        "`*` named itself, not every source"
    );
    let from_star = api.run(&write("u.txt"), "*").await.unwrap();
    assert_eq!(from_star.status(), "completed");
}
