//! What a desktop notification shows and who may answer it (docs/desktop.md, "Notifications"), over a real
//! data directory: the body is the API's rendering with the target first and whole, escaped for servers that
//! read markup; only the server the notification was sent to decides; `confirmInApp` names a tool by its
//! original name as well as its sanitised one.

use codemode::{Actor, ExecutionStatus, PendingAction};
use codemode_api::{ActionOutcome, Api, NotificationAnswer, NotificationSignal, SentNotification};
use connectors::HomeOptions;
use serde_json::json;
use std::path::{Path, PathBuf};

mod support;
use support::worker;

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "codemode-api-notifications-{name}-{}",
        std::process::id()
    ));
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

/// Runs `code` from `source`; the call it waits on.
async fn waiting(api: &Api, code: &str, source: &str) -> PendingAction {
    let outcome = api.run(code, source).await.expect("runs");
    assert_eq!(outcome.status(), "paused", "{outcome:?}");
    api.pending(Some(outcome.execution_id()))
        .expect("pending")
        .remove(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_notification_never_hides_the_path_behind_markup() {
    let api = open(&fresh_dir("markup")).await;
    // As reported on dunst: a comment opened in one value and closed in another, and a key that looks like
    // `path`, made the notification read as a write of scratch/notes.txt.
    let action = waiting(
        &api,
        r#"async () => files.write_file({ a: "<!--", n: "", "pa\u200bth": "scratch/notes.txt", b: "-->", content: "x".repeat(500), path: "keep.txt" })"#,
        "agent<b>\u{202e}",
    )
    .await;
    let card = api.notification_card(&action).await;
    assert!(
        card.body.starts_with("path: \"keep.txt\"\n"),
        "{}",
        card.body
    );
    let markup = card.body_for(&["body".to_owned(), "body-markup".to_owned()]);
    assert!(markup.starts_with("path: \"keep.txt\"\n"), "{markup}");
    assert!(!markup.contains('<') && !markup.contains('>'), "{markup}");
    assert!(markup.contains("\na: \"&lt;!--\"\n"), "{markup}");
    assert!(markup.contains("\nb: \"--&gt;\"\n"), "{markup}");
    assert!(
        markup.contains("\n\"pa\\u{200b}th\": \"scratch/notes.txt\"\n"),
        "the look-alike key is marked: {markup}"
    );
    assert!(markup.contains("… (460 more characters)"), "{markup}");
    assert!(
        markup.ends_with("\nfrom agent&lt;b&gt;\\u{202e}"),
        "{markup}"
    );
    // A server that shows text as it is gets it as it is.
    assert_eq!(
        card.body_for(&["body".to_owned(), "actions".to_owned()]),
        card.body
    );
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_first_argument_cannot_push_the_path_out_of_the_notification() {
    let api = open(&fresh_dir("long-first")).await;
    let action = waiting(
        &api,
        r#"async () => files.write_file({ content: "y".repeat(5000), path: "deploy/prod.yaml\u202e" })"#,
        "test",
    )
    .await;
    let card = api.notification_card(&action).await;
    assert!(
        card.body
            .starts_with("path: \"deploy/prod.yaml\\u{202e}\"\ncontent: \"yyyy"),
        "{}",
        card.body
    );
    assert!(card.body.chars().count() < 300, "{}", card.body);
    // The window's card: the same rows.
    let queue = api.approval_queue().expect("queue");
    let rows = &queue[0].arguments;
    let card = api
        .approval_card(&queue[0].action.execution_id, queue[0].action.seq)
        .expect("card");
    assert_eq!(
        &card.arguments, rows,
        "the list and the card show the same rows"
    );
    assert_eq!(
        (
            rows[0].key.as_str(),
            rows[0].value.as_str(),
            rows[0].identifying
        ),
        ("path", "\"deploy/prod.yaml\\u{202e}\"", true)
    );
    assert!(rows[1].value.ends_with("… (4920 more characters)"));
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forged_action_invoked_decides_nothing() {
    let api = open(&fresh_dir("forged")).await;
    let action = waiting(
        &api,
        r#"async () => files.write_file({ path: "forged.txt", content: "x" })"#,
        "test",
    )
    .await;
    let sent = SentNotification {
        execution_id: action.execution_id.clone(),
        seq: action.seq,
        id: 7,
        server: ":1.5".to_owned(),
    };
    let signal = |sender: Option<&'static str>, id: u32, key: &'static str| NotificationSignal {
        sender,
        id,
        key,
    };
    for forged in [
        // Another connection on the bus, naming this notification.
        signal(Some(":1.9"), 7, "approve"),
        signal(Some(":1.9"), 7, "reject"),
        signal(Some(":1.9"), 7, "default"),
        // The well-known name is never a signal's sender; the bus did not say who sent it.
        signal(Some("org.freedesktop.Notifications"), 7, "approve"),
        signal(None, 7, "approve"),
        // The server, about a notification this process did not send, or with a key it never offered.
        signal(Some(":1.5"), 8, "approve"),
        signal(Some(":1.5"), 7, "approve-all"),
    ] {
        assert_eq!(
            api.action_invoked(&sent, &forged).await.expect("no error"),
            ActionOutcome::Ignored,
            "{forged:?}"
        );
        let run = api.execution(&action.execution_id).expect("run");
        assert_eq!(run.status, ExecutionStatus::Paused, "{forged:?}");
    }
    assert_eq!(
        api.action_invoked(&sent, &signal(Some(":1.5"), 7, "default"))
            .await
            .expect("no error"),
        ActionOutcome::Open
    );
    // The server it was sent to: decided, by the notification.
    assert_eq!(
        api.action_invoked(&sent, &signal(Some(":1.5"), 7, "approve"))
            .await
            .expect("answered"),
        ActionOutcome::Answered(NotificationAnswer::Decided {
            status: "completed".to_owned()
        })
    );
    let run = api.execution(&action.execution_id).expect("run");
    let decision = run.log[action.seq as usize]
        .decision
        .clone()
        .expect("a decision");
    assert_eq!(decision.by, Actor::Notification);
    api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn confirm_in_app_names_an_mcp_tool_by_its_original_name() {
    let dir = fresh_dir("confirm-original");
    drop(open(&dir).await);
    let path = dir.join("connectors.json");
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("config")).expect("json");
    // The server is never started: which calls are decided in the window is read from the configuration.
    config["mcpServers"] = json!({
        "gh": { "command": "codemode-test-never-started", "confirmInApp": ["create-issue"] }
    });
    std::fs::write(&path, config.to_string()).expect("written");
    let api = open(&dir).await;
    assert_eq!(api.config_error(), None);
    // A pending call carries the sanitised name the sandbox exposes.
    let action: PendingAction = serde_json::from_value(json!({
        "executionId": "exec_none", "seq": 0, "connector": "gh", "method": "create_issue", "digest": "-"
    }))
    .expect("a pending call");
    assert!(api.confirm_in_app(&action));
    assert!(api.notification_card(&action).await.confirm_in_app);
    api.shutdown().await;
}
