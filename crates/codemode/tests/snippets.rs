//! Snippets (docs/semantics.md §8.1–§8.2): saved from any execution, listed by name, replaced by name,
//! deleted; run with `codemode.run` as a nested run whose calls join the current execution's log, pause and
//! replay.

mod support;

use codemode::{Actor, Connector, Runtime, RuntimeOptions, SaveSnippet};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use support::items::Items;

fn temp_db() -> PathBuf {
    std::env::temp_dir()
        .join(format!("codemode-test-{}", uuid::Uuid::new_v4()))
        .join("codemode.db")
}

async fn open(db: &Path, connectors: Vec<Arc<dyn Connector>>) -> Runtime {
    let options = RuntimeOptions {
        worker: Some(support::worker_path()),
        ..RuntimeOptions::default()
    };
    Runtime::open(support::store_at(db), options, connectors)
        .await
        .expect("runtime opens")
}

fn save(runtime: &Runtime, name: &str, id: &str, description: &str) -> Value {
    let save = SaveSnippet {
        execution_id: id.to_owned(),
        description: Some(description.to_owned()),
        input_schema: None,
    };
    serde_json::to_value(runtime.save_snippet(name, save).unwrap()).unwrap()
}

async fn result(runtime: &Runtime, code: &str) -> Value {
    serde_json::to_value(runtime.execute(code).await.unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_saved_run_is_listed_and_runs_with_input() {
    let runtime = open(&temp_db(), vec![Items::new()]).await;
    let source = runtime
        .execute("async (name) => 'ran:' + name")
        .await
        .unwrap();
    let snippet = save(&runtime, "greet", source.execution_id(), "Greets someone.");
    assert_eq!(snippet["name"], "greet");
    assert_eq!(snippet["code"], "async (name) => 'ran:' + name");
    assert_eq!(snippet["connectors"], json!(["items"]));
    assert!(snippet["savedAt"].is_i64());
    assert_eq!(runtime.snippets().unwrap().len(), 1);
    let ran = result(&runtime, "async () => codemode.run('greet', 'world')").await;
    assert_eq!(ran["result"], "ran:world");

    let fenced = runtime.execute("```js\nasync () => 42\n```").await.unwrap();
    save(&runtime, "fenced", fenced.execution_id(), "");
    let block = runtime.execute("let a = 0;\na").await.unwrap();
    save(&runtime, "block", block.execution_id(), "");
    assert_eq!(
        result(
            &runtime,
            "async () => [await codemode.run('fenced'), await codemode.run('block', 9)]"
        )
        .await["result"],
        json!([42, 0])
    );

    // Same name replaces; names are listed in order; delete says whether there was one.
    save(&runtime, "greet", fenced.execution_id(), "replaced");
    let names: Vec<String> = runtime
        .snippets()
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, vec!["block", "fenced", "greet"]);
    assert_eq!(runtime.snippets().unwrap()[2].description, "replaced");
    assert!(runtime.delete_snippet("block").unwrap());
    assert!(!runtime.delete_snippet("block").unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_snippets_and_connectors_resolve_to_an_error_object() {
    let db = temp_db();
    let runtime = open(&db, vec![Items::new()]).await;
    let missing = result(&runtime, "async () => codemode.run('nope')").await;
    assert_eq!(missing["status"], "completed");
    assert_eq!(
        missing["result"],
        json!({"error": "Snippet \"nope\" not found."})
    );

    let source = runtime
        .execute("async () => items.list_items()")
        .await
        .unwrap();
    save(&runtime, "list", source.execution_id(), "");
    let bare = open(&db, vec![]).await;
    let without = result(&bare, "async () => codemode.run('list')").await;
    assert_eq!(without["status"], "completed");
    assert_eq!(
        without["result"],
        json!({"error": "Snippet \"list\" requires connector(s) \"items\" that are not configured on this runtime."})
    );

    let unknown = runtime.save_snippet(
        "x",
        SaveSnippet {
            execution_id: "exec_nope".into(),
            ..Default::default()
        },
    );
    assert_eq!(
        unknown.err().unwrap().to_string(),
        "No execution \"exec_nope\" to save from"
    );
    let schema = json!({"type": "string", "description": "x".repeat(1_000_001)});
    let huge = runtime.save_snippet(
        "y",
        SaveSnippet {
            execution_id: source.execution_id().into(),
            description: None,
            input_schema: Some(schema),
        },
    );
    assert!(
        huge.err()
            .unwrap()
            .to_string()
            .starts_with("The snippet input schema is too large to record durably")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_snippets_calls_join_the_log_pause_and_replay() {
    let items = Items::new();
    let runtime = open(&temp_db(), vec![items.clone()]).await;
    let source = runtime
        .execute("async (input) => { const before = await items.list_items(); return await items.create_item({ title: input.title }) }")
        .await
        .unwrap();
    save(
        &runtime,
        "open-ticket",
        source.execution_id(),
        "Opens an item.",
    );

    let paused = runtime
        .execute("async () => { await items.add_note({ text: 'outer' }); const item = await codemode.run('open-ticket', { title: 'from snippet' }); return item.id }")
        .await
        .unwrap();
    let paused_json = serde_json::to_value(&paused).unwrap();
    assert_eq!(paused_json["status"], "paused");
    assert_eq!(paused_json["pending"][0]["seq"], 2);
    assert_eq!(
        paused_json["pending"][0]["args"],
        json!({"title": "from snippet"})
    );
    let done = serde_json::to_value(
        runtime
            .approve(paused.execution_id(), Actor::Console, None)
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(done["status"], "completed", "{done}");
    let methods: Vec<&str> = done["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, vec!["add_note", "list_items", "create_item"]);
    assert_eq!(
        items.with(|s| (s.notes.len(), s.items.len())),
        (1, 1),
        "each applied once"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn programs_discover_methods_and_snippets_from_inside_the_sandbox() {
    let runtime = open(&temp_db(), vec![Items::new()]).await;
    let source = runtime
        .execute("async (input) => items.list_items()")
        .await
        .unwrap();
    save(
        &runtime,
        "list-everything",
        source.execution_id(),
        "List every item in the store",
    );
    let found = result(
        &runtime,
        "async () => { const s = await codemode.search('create item'); const d = await codemode.describe(s.results[0].path); const n = await codemode.search('list everything'); return { first: s.results[0], types: d.types, approval: d.requiresApproval, snippet: n.results[0].kind, hidden: (await codemode.search('secret')).total } }",
    )
    .await;
    assert_eq!(found["status"], "completed", "{found}");
    assert_eq!(found["result"]["first"]["path"], "items.create_item");
    assert_eq!(found["result"]["first"]["requiresApproval"], true);
    assert_eq!(found["result"]["approval"], true);
    assert_eq!(
        found["result"]["types"],
        "type CreateItemInput = Record<string, unknown>\ntype CreateItemOutput = unknown"
    );
    assert_eq!(found["result"]["snippet"], "snippet");
    assert_eq!(
        found["result"]["hidden"], 0,
        "hidden methods are not discoverable"
    );
    assert_eq!(
        found["calls"],
        json!([]),
        "discovery is not sequenced or logged"
    );
    assert_eq!(
        runtime.search("create item").await.unwrap().results[0].path,
        "items.create_item"
    );
    assert_eq!(runtime.describe("items").await.unwrap().kind, "connector");
    let hints =
        std::collections::HashMap::from([("items".to_owned(), "manage the item store".to_owned())]);
    assert!(
        runtime
            .tool_description(&hints)
            .contains("- `items` — manage the item store")
    );
}
