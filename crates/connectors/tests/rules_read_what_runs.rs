//! A rule means what the `files` connector will do, not how the program spelled it (docs/design.md, "What a
//! call means"): each test is a way an agent's program once walked past a rule — `..`, another spelling of a
//! folder, base64 content, a symlink inside the workspace, a method hidden by a deny — and checks both what the
//! runtime decided and what the workspace holds afterwards.

use codemode::{Connector, Outcome, Rule, Runtime, RuntimeOptions};
use connectors::FilesConnector;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;

mod support;
use support::worker;

struct Workspace {
    root: PathBuf,
    runtime: Runtime,
}

/// A workspace holding `keep.txt` ("kept") and the folders `scratch/` and `vault/`, under `rules` (added to
/// the database, so their hits are counted). Only `write_file`, `delete_file` and `move_file` are gated.
async fn workspace(rules: Value) -> Workspace {
    let base = std::env::temp_dir().join(format!("codemode-rules-{}", uuid::Uuid::new_v4()));
    let root = base.join("workspace");
    std::fs::create_dir_all(root.join("scratch")).unwrap();
    std::fs::create_dir_all(root.join("vault")).unwrap();
    std::fs::write(root.join("keep.txt"), "kept").unwrap();
    let files = FilesConnector::new("files", &root, &base.join("state"), None).unwrap();
    let connector: Arc<dyn Connector> = Arc::new(files);
    let options = RuntimeOptions {
        worker: Some(worker()),
        ..RuntimeOptions::default()
    };
    let runtime = Runtime::open(&base.join("codemode.db"), options, vec![connector])
        .await
        .expect("runtime");
    for rule in rules.as_array().cloned().unwrap_or_default() {
        let rule = Rule::from_value(rule).expect("a valid rule");
        runtime.add_rule(rule, "test").expect("rule added");
    }
    Workspace { root, runtime }
}

impl Workspace {
    async fn run(&self, code: &str) -> Value {
        let outcome: Outcome = self.runtime.execute(code).await.expect("runs");
        serde_json::to_value(outcome).unwrap()
    }

    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root.join(path)).unwrap_or_else(|e| format!("<{e}>"))
    }

    fn hits(&self, id: &str) -> u64 {
        self.runtime
            .rules()
            .unwrap()
            .into_iter()
            .find(|listing| listing.rule.id == id)
            .map_or(0, |listing| listing.hits)
    }
}

fn write(path: &str, content: &str) -> String {
    format!(
        "async () => files.write_file({{ path: {}, content: {} }})",
        json!(path),
        json!(content)
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn an_allow_rule_on_a_folder_never_lets_dotdot_out_of_it() {
    let ws = workspace(json!([
        {"id": "scratch-prefix", "effect": "allow", "call": "files.write_file", "when": {"path": {"prefix": "scratch/"}}},
        {"id": "scratch-regex", "effect": "allow", "call": "files.write_file", "when": {"path": {"regex": "scratch/.*"}}}
    ]))
    .await;
    let inside = ws.run(&write("scratch/notes.txt", "ok")).await;
    assert_eq!(inside["status"], "completed", "{inside}");

    for spelled in [
        "scratch/../keep.txt",
        "scratch/./../keep.txt",
        "scratch//../keep.txt",
    ] {
        let outcome = ws.run(&write(spelled, "overwritten")).await;
        assert_eq!(outcome["status"], "paused", "{spelled}: {outcome}");
        assert_eq!(
            outcome["pending"][0]["canonical"]["path"], "keep.txt",
            "the person is shown the file it writes: {outcome}"
        );
        assert_eq!(outcome["pending"][0]["args"]["path"], spelled);
    }
    assert_eq!(ws.read("keep.txt"), "kept");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deny_rule_on_a_folder_is_not_beaten_by_another_spelling_of_it() {
    let ws = workspace(json!([
        {"id": "no-vault", "effect": "deny", "call": "files.*", "when": {"path": {"prefix": "vault/"}}, "reason": "the vault is read-only"}
    ]))
    .await;
    for spelled in [
        "./vault/x.txt",
        "vault//x.txt",
        "scratch/../vault/x.txt",
        "vault/./x.txt",
    ] {
        let outcome = ws.run(&write(spelled, "leak")).await;
        assert_eq!(outcome["status"], "error", "{spelled}: {outcome}");
        assert!(
            outcome["error"]
                .as_str()
                .unwrap()
                .contains("denied by rule \"no-vault\": the vault is read-only"),
            "{spelled}: {outcome}"
        );
    }
    assert!(!ws.root.join("vault/x.txt").exists());
    assert_eq!(ws.hits("no-vault"), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_content_rule_reads_base64_content_decoded() {
    let ws = workspace(json!([
        {"id": "no-keys", "effect": "deny", "call": "files.write_file", "when": {"content": {"regex": "(?s).*PRIVATE KEY.*"}}}
    ]))
    .await;
    // "-----BEGIN PRIVATE KEY-----\nabc" in base64.
    let code = r#"async () => files.write_file({ path: "scratch/id", content: "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCmFiYw==", encoding: "base64" })"#;
    let outcome = ws.run(code).await;
    assert_eq!(outcome["status"], "error", "{outcome}");
    assert!(
        outcome["error"]
            .as_str()
            .unwrap()
            .contains("denied by rule \"no-keys\""),
        "{outcome}"
    );
    assert!(!ws.root.join("scratch/id").exists());

    // Bytes that are not text match no text matcher: the deny does not apply, and neither does an allow.
    let ws = workspace(json!([
        {"id": "text-only", "effect": "allow", "call": "files.write_file", "when": {"content": {"regex": ".*"}}}
    ]))
    .await;
    let binary = r#"async () => files.write_file({ path: "scratch/b.bin", content: "//79/A==", encoding: "base64" })"#;
    let outcome = ws.run(binary).await;
    assert_eq!(outcome["status"], "paused", "{outcome}");
    assert_eq!(outcome["pending"][0]["canonical"]["content"]["bytes"], 4);
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_symlink_inside_the_workspace_never_carries_an_allow_rule_outside_its_folder() {
    let ws = workspace(json!([
        {"id": "scratch", "effect": "allow", "call": "files.write_file", "when": {"path": {"glob": "scratch/**"}}}
    ]))
    .await;
    std::os::unix::fs::symlink("../keep.txt", ws.root.join("scratch/link.txt")).unwrap();
    std::os::unix::fs::symlink("..", ws.root.join("scratch/up")).unwrap();
    for spelled in ["scratch/link.txt", "scratch/up/keep.txt"] {
        let outcome = ws.run(&write(spelled, "overwritten")).await;
        assert_eq!(outcome["status"], "paused", "{spelled}: {outcome}");
        assert_eq!(outcome["pending"][0]["canonical"]["path"], "keep.txt");
    }
    assert_eq!(ws.read("keep.txt"), "kept");
    assert_eq!(ws.hits("scratch"), 0);

    // A link whose target is really inside the folder is still the folder's.
    std::fs::write(ws.root.join("scratch/real.txt"), "r").unwrap();
    std::os::unix::fs::symlink("real.txt", ws.root.join("scratch/alias.txt")).unwrap();
    let outcome = ws.run(&write("scratch/alias.txt", "new")).await;
    assert_eq!(outcome["status"], "completed", "{outcome}");
    assert_eq!(ws.read("scratch/real.txt"), "new");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_path_that_ends_outside_the_workspace_is_refused_before_any_rule_or_person() {
    let ws = workspace(json!([
        {"id": "everything", "effect": "allow", "call": "files.*"}
    ]))
    .await;
    let outside = ws.root.parent().unwrap().join("outside.txt");
    std::fs::write(&outside, "outside").unwrap();
    std::os::unix::fs::symlink(&outside, ws.root.join("scratch/out.txt")).unwrap();
    let outcome = ws.run(&write("scratch/out.txt", "pwned")).await;
    assert_eq!(outcome["status"], "error", "{outcome}");
    assert!(
        outcome["error"]
            .as_str()
            .unwrap()
            .contains("refused, the path leads outside the workspace"),
        "{outcome}"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside");
    assert_eq!(ws.hits("everything"), 0, "no rule was asked");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_method_hidden_by_a_deny_answers_with_the_reason_and_counts_the_hit() {
    let ws = workspace(json!([
        {"id": "no-deletes", "effect": "deny", "call": "files.delete_file", "reason": "deleting is for people"}
    ]))
    .await;
    let description = ws.runtime.tool_description(&Default::default());
    assert!(
        !description.contains("delete_file"),
        "hidden from the agent"
    );
    let outcome = ws
        .run(r#"async () => files.delete_file({ path: "keep.txt" })"#)
        .await;
    assert_eq!(outcome["status"], "error", "{outcome}");
    assert!(
        outcome["error"].as_str().unwrap().contains(
            "Action files.delete_file denied by rule \"no-deletes\": deleting is for people"
        ),
        "{outcome}"
    );
    let id = outcome["executionId"].as_str().unwrap();
    let run = ws.runtime.execution(id).unwrap().unwrap();
    let decision = serde_json::to_value(run.log[0].decision.as_ref().unwrap()).unwrap();
    assert_eq!(decision["kind"], "denied", "{decision}");
    assert_eq!(decision["rule"], "no-deletes");
    assert_eq!(ws.hits("no-deletes"), 1);
    assert_eq!(ws.read("keep.txt"), "kept");
}

#[tokio::test(flavor = "multi_thread")]
async fn rules_test_judges_a_call_as_the_connector_reads_it() {
    let ws = workspace(json!([
        {"id": "scratch", "effect": "allow", "call": "files.write_file", "when": {"path": {"prefix": "scratch/"}}}
    ]))
    .await;
    let verdict = ws
        .runtime
        .test_rules(
            "files.write_file",
            Some(&json!({"path": "scratch/../keep.txt", "content": "x"})),
            None,
        )
        .await
        .unwrap();
    assert_eq!(verdict.effect, codemode::Effect::Ask, "{verdict:?}");
}
