//! MCP servers as connectors, against servers we did not write: `@modelcontextprotocol/server-memory` and
//! `@modelcontextprotocol/server-filesystem` from npm, and a misbehaving server on the official Python SDK
//! (`tests/servers/trouble.py`). Everything goes through `connectors.json`, as a user configures it.

use codemode::{Actor, Runtime};
use connectors::Connectors;
use connectors::config;
use serde_json::{Value, json};
use std::path::Path;

mod support;
use support::{npm_server, scratch, trouble_server};

/// A runtime over the connectors a `connectors.json` text declares.
async fn open(dir: &Path, config_text: &str) -> (Runtime, Connectors) {
    support::open_runtime(dir, config_text).await
}

fn outcome(o: &codemode::Outcome) -> Value {
    serde_json::to_value(o).expect("outcome")
}

fn stdio_entry(server: (String, Vec<String>), extra: Value) -> Value {
    let mut entry = json!({"command": server.0, "args": server.1});
    if let (Value::Object(entry), Value::Object(extra)) = (&mut entry, extra) {
        entry.extend(extra);
    }
    entry
}

fn memory_and_filesystem(dir: &Path) -> String {
    let docs = dir.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let mut fs_server = npm_server("@modelcontextprotocol/server-filesystem");
    fs_server.1.push(docs.display().to_string());
    json!({
        "mcpServers": {
            "memory": stdio_entry(npm_server("@modelcontextprotocol/server-memory"), json!({
                "env": {"MEMORY_FILE_PATH": dir.join("memory.jsonl").display().to_string()},
                "approval": ["create_entities"],
                "revert": {"create_entities": {"method": "delete_entities",
                           "args": {"entityNames": ["{{args.entities.0.name}}"]}}}
            })),
            "docs-fs": stdio_entry(fs_server, json!({}))
        }
    })
    .to_string()
}

const READ_THEN_REMEMBER: &str = r#"async () => {
  const read = await docs_fs.read_text_file({ path: DOCS + "/plan.txt" });
  const text = typeof read === "string" ? read : read.content;
  await memory.create_entities({ entities: [{ name: "plan", entityType: "document", observations: [text] }] });
  const graph = await memory.read_graph();
  return { text, names: graph.entities.map((e) => e.name) };
}"#;

fn memory_file(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("memory.jsonl")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn reads_through_one_server_writes_through_another_with_approval_and_rolls_back() {
    let dir = scratch("mcp-e2e");
    let (runtime, built) = open(&dir, &memory_and_filesystem(&dir)).await;
    let docs = dir.join("docs");
    std::fs::write(docs.join("plan.txt"), "ship on friday").unwrap();
    let code = READ_THEN_REMEMBER.replace("DOCS", &json!(docs.display().to_string()).to_string());

    let paused = outcome(&runtime.execute(&code).await.unwrap());
    assert_eq!(paused["status"], "paused", "{paused}");
    let id = paused["executionId"].as_str().unwrap().to_owned();
    let pending = &paused["pending"][0];
    assert_eq!(
        (pending["connector"].as_str(), pending["method"].as_str()),
        (Some("memory"), Some("create_entities"))
    );
    assert_eq!(
        pending["args"]["entities"][0]["observations"][0],
        "ship on friday"
    );
    assert!(
        !memory_file(&dir).contains("plan"),
        "nothing is written before approval"
    );

    // The read was recorded: approval replays it, even though the file changed in between.
    std::fs::write(docs.join("plan.txt"), "ship on monday").unwrap();
    let done = outcome(&runtime.approve(&id, Actor::Cli, None).await.unwrap());
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"],
        json!({"text": "ship on friday", "names": ["plan"]})
    );
    assert!(memory_file(&dir).contains("\"plan\""));

    // Rollback after a restart of everything: the revert template calls delete_entities on a fresh server.
    built.shutdown().await;
    drop(runtime);
    let (runtime, built) = open(&dir, &memory_and_filesystem(&dir)).await;
    let report = serde_json::to_value(runtime.rollback(&id).await.unwrap()).unwrap();
    assert_eq!(
        report["reverted"],
        json!([{"seq": 1, "connector": "memory", "method": "create_entities"}]),
        "{report}"
    );
    assert_eq!(report["status"], "rolled_back");
    assert!(
        !memory_file(&dir).contains("\"plan\""),
        "{}",
        memory_file(&dir)
    );
    let graph = outcome(
        &runtime
            .execute("async () => (await memory.read_graph()).entities.length")
            .await
            .unwrap(),
    );
    assert_eq!(graph["result"], 0, "{graph}");
    built.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_become_methods_with_schemas_in_search_and_describe() {
    let dir = scratch("mcp-discovery");
    let (runtime, built) = open(&dir, &memory_and_filesystem(&dir)).await;
    let listing = runtime.connectors().await;
    let memory = listing.iter().find(|c| c.name == "memory").unwrap();
    assert!(memory.error.is_none(), "{:?}", memory.error);
    let create = memory
        .methods
        .iter()
        .find(|m| m.name == "create_entities")
        .unwrap();
    assert!(create.requires_approval && create.revertible);
    assert!(create.input_schema.is_some());
    let fs = listing.iter().find(|c| c.name == "docs_fs").unwrap();
    assert!(fs.methods.iter().any(|m| m.name == "read_text_file"));
    assert!(fs.methods.iter().all(|m| !m.requires_approval));

    let found = runtime.search("delete entities").await.unwrap();
    let found = serde_json::to_value(found).unwrap();
    assert_eq!(
        found["results"][0]["path"], "memory.delete_entities",
        "{found}"
    );
    let described =
        serde_json::to_value(runtime.describe("memory.create_entities").await.unwrap()).unwrap();
    assert!(
        described.to_string().contains("entityType"),
        "declarations come from the server's schema: {described}"
    );
    built.shutdown().await;
}

fn trouble(dir: &Path, name: &str, extra_args: &[&str], extra: Value) -> String {
    let _ = dir;
    json!({"mcpServers": {name: stdio_entry(trouble_server(extra_args), extra)}}).to_string()
}

async fn run(runtime: &Runtime, code: &str) -> Value {
    outcome(&runtime.execute(code).await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn error_results_crashes_and_hangs_are_errors_of_the_call_and_the_server_comes_back() {
    let dir = scratch("mcp-trouble");
    let config = trouble(
        &dir,
        "t",
        &[],
        json!({"callTimeoutMs": 3000, "env": {"TROUBLE_TOKEN": "tok-0123456789"}}),
    );
    let (runtime, built) = open(&dir, &config).await;

    let failed = run(
        &runtime,
        r#"async () => { try { await t.fail({ message: "boom" }); } catch (e) { return e.message; } }"#,
    )
    .await;
    assert!(
        failed["result"] == "Error executing tool fail: boom",
        "{failed}"
    );

    let crashed = run(
        &runtime,
        r#"async () => {
          const before = (await t.pid()).pid;
          let error;
          try { await t.crash(); } catch (e) { error = e.message; }
          const after = (await t.pid()).pid;
          return { error, restarted: before !== after };
        }"#,
    )
    .await;
    let error = crashed["result"]["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("MCP server \"t\" stopped during t.crash"),
        "{crashed}"
    );
    assert!(
        error.contains("crashing on purpose"),
        "the server's last words explain it: {error}"
    );
    assert_eq!(crashed["result"]["restarted"], true, "{crashed}");

    let hung = run(
        &runtime,
        r#"async () => {
          let error;
          try { await t.hang(); } catch (e) { error = e.message; }
          return { error, echo: await t.echo({ text: "back" }) };
        }"#,
    )
    .await;
    assert_eq!(
        hung["result"],
        json!({"error": "MCP server \"t\" did not answer t.hang within 3000 ms; it is stopped and will be restarted on the next call", "echo": "back"}),
        "{hung}"
    );

    let big = run(
        &runtime,
        "async () => (await t.huge({ size: 300000 })).length",
    )
    .await;
    assert_eq!(big["result"], 300000, "{big}");
    let too_big = run(
        &runtime,
        "async () => (await t.huge({ size: 3000000 })).length",
    )
    .await;
    assert_eq!(too_big["status"], "error", "{too_big}");
    assert!(
        too_big["error"].as_str().unwrap().contains("too large"),
        "{too_big}"
    );
    assert!(!too_big.to_string().contains("tok-0123456789"));
    built.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_cannot_start_fails_the_call_naming_the_connector_without_its_secrets() {
    let dir = scratch("mcp-start");
    let config = json!({"mcpServers": {
        "gone": {"command": "/nonexistent/mcp-server"},
        "broken": stdio_entry(trouble_server(&["--fail-start"]), json!({"env": {"TROUBLE_TOKEN": "tok-secret-4242"}})),
        "fine": stdio_entry(trouble_server(&[]), json!({}))
    }})
    .to_string();
    let (runtime, built) = open(&dir, &config).await;
    let gone = run(&runtime, "async () => gone.anything()").await;
    assert_eq!(gone["status"], "error");
    assert!(
        gone["error"].as_str().unwrap().contains(
            "MCP server \"gone\" failed to start: cannot run \"/nonexistent/mcp-server\""
        ),
        "{gone}"
    );
    let broken = run(&runtime, "async () => broken.echo({ text: 'x' })").await;
    let message = broken["error"].as_str().unwrap();
    assert!(
        message.contains("MCP server \"broken\" failed to start")
            && message.contains("cannot authenticate with token [redacted]"),
        "{message}"
    );
    assert!(!broken.to_string().contains("tok-secret-4242"));
    // One broken server leaves the others usable, in programs and in search.
    let fine = run(&runtime, "async () => fine.echo({ text: 'ok' })").await;
    assert_eq!(fine["result"], "ok", "{fine}");
    let found = serde_json::to_value(runtime.search("echo").await.unwrap()).unwrap();
    assert_eq!(found["results"][0]["path"], "fine.echo", "{found}");
    let listing = runtime.connectors().await;
    assert!(
        listing
            .iter()
            .find(|c| c.name == "broken")
            .unwrap()
            .error
            .as_deref()
            .unwrap()
            .contains("[redacted]")
    );
    built.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn colliding_names_are_refused_with_the_reference_message() {
    let dir = scratch("mcp-collide");
    let (runtime, built) = open(&dir, &trouble(&dir, "t", &["--collide"], json!({}))).await;
    let collided = run(&runtime, "async () => t.echo({ text: 'x' })").await;
    assert_eq!(
        collided["error"],
        "Code execution failed: MCP tools \"get-item\" and \"get_item\" on t both map to \"get_item\". Override toolName() to disambiguate.",
        "{collided}"
    );
    built.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn policy_lists_take_original_or_sanitised_names_and_reverts_use_templates() {
    let dir = scratch("mcp-policy");
    let config = trouble(
        &dir,
        "t",
        &[],
        json!({
            "approval": ["get-item", "remember"],
            "hidden": ["forget"],
            "reexecute": ["pid"],
            "revert": {
                "remember": {"method": "forget", "args": {"id": "{{result.id}}"}},
                "get_item": {"method": "forget", "args": {"id": "{{result.missing.path}}"}}
            }
        }),
    );
    let (runtime, built) = open(&dir, &config).await;
    let listing = runtime.connectors().await;
    let methods = &listing[0].methods;
    let flags = |name: &str| {
        let m = methods.iter().find(|m| m.name == name).unwrap();
        (m.requires_approval, m.hidden, m.revertible, m.replay)
    };
    assert_eq!(
        flags("get_item"),
        (true, false, true, codemode::Replay::Log)
    );
    assert_eq!(flags("forget"), (false, true, false, codemode::Replay::Log));
    assert_eq!(
        flags("pid"),
        (false, false, false, codemode::Replay::Reexecute)
    );

    let hidden = run(&runtime, "async () => t.forget({ id: '1' })").await;
    assert_eq!(
        hidden["error"], "Code execution failed: Tool \"forget\" not found on t",
        "{hidden}"
    );

    let paused = run(
        &runtime,
        "async () => [await t.get_item({ id: '7' }), await t.remember({ id: '7' })]",
    )
    .await;
    assert_eq!(paused["pending"][0]["method"], "get_item", "{paused}");
    let id = paused["executionId"].as_str().unwrap().to_owned();
    let next = outcome(&runtime.approve(&id, Actor::Cli, None).await.unwrap());
    assert_eq!(next["pending"][0]["method"], "remember", "{next}");
    let done = outcome(&runtime.approve(&id, Actor::Cli, None).await.unwrap());
    assert_eq!(
        done["result"],
        json!([{"id": "7", "name": "item 7"}, {"id": "7", "stored": true}])
    );

    // remember is undone through the hidden forget; get_item's template names a path its result lacks.
    let report = serde_json::to_value(runtime.rollback(&id).await.unwrap()).unwrap();
    assert_eq!(
        report["reverted"],
        json!([{"seq": 1, "connector": "t", "method": "remember"}]),
        "{report}"
    );
    assert_eq!(
        report["failed"][0]["error"],
        "revert template {{result.missing.path}}: no value at \"missing\"",
        "{report}"
    );
    built.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn approval_and_reexecute_on_one_tool_is_refused() {
    let dir = scratch("mcp-conflict");
    let config = trouble(
        &dir,
        "t",
        &[],
        json!({"approval": "*", "reexecute": ["echo"]}),
    );
    let (runtime, built) = open(&dir, &config).await;
    let refused = run(&runtime, "async () => t.echo({ text: 'x' })").await;
    assert_eq!(
        refused["error"],
        "Code execution failed: Connector \"t\" tool \"echo\" cannot combine requiresApproval with replay: \"reexecute\" — approved actions must be logged, not re-executed.",
        "{refused}"
    );
    built.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn streamable_http_servers_are_connectors_too() {
    let dir = scratch("mcp-http");
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (python, mut args) = trouble_server(&["--http", &port.to_string()]);
    args.insert(0, "-u".into());
    let mut server = std::process::Command::new(python)
        .args(&args)
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let config = json!({"connectors": {"remote": {"type": "mcp", "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": {"Authorization": "Bearer http-secret-99"}}}})
    .to_string();
    let (runtime, built) = open(&dir, &config).await;
    let echoed = run(&runtime, "async () => remote.echo({ text: 'over http' })").await;
    assert_eq!(echoed["result"], "over http", "{echoed}");

    server.kill().unwrap();
    server.wait().unwrap();
    let down = run(&runtime, "async () => remote.echo({ text: 'again' })").await;
    assert_eq!(down["status"], "error", "{down}");
    let message = down["error"].as_str().unwrap();
    assert!(message.contains("\"remote\""), "{message}");
    assert!(!message.contains("http-secret-99"));
    built.shutdown().await;
}

/// A token with what JSON escapes (`"`, `\`, non-ASCII), printed by the server across the place where a
/// stderr line is cut and in JSON strings (`tests/servers/trouble.py`, `leak_token`).
const LEAKY_TOKEN: &str = "tok\"Se\\cr\u{e9}t-0123456789-abcdef";

/// The token nor any 8+ character prefix of it, as it is or JSON-escaped, is in `text`.
fn assert_no_token(text: &str) {
    let escaped = serde_json::to_string(LEAKY_TOKEN).unwrap();
    let escaped = escaped.trim_matches('"');
    let ascii = escaped.replace('\u{e9}', "\\u00e9");
    for form in [LEAKY_TOKEN, escaped, &ascii] {
        for (end, _) in form.char_indices().skip(8) {
            assert!(
                !text.contains(&form[..end]),
                "{:?} leaks in {text}",
                &form[..end]
            );
        }
        assert!(!text.contains(form), "{form:?} leaks in {text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_printed_to_stderr_cut_or_json_escaped_never_reaches_an_error() {
    let dir = scratch("mcp-leak");
    let env = json!({"env": {"TROUBLE_TOKEN": LEAKY_TOKEN}});
    let config = json!({"mcpServers": {
        "starting": stdio_entry(trouble_server(&["--leak-start"]), env.clone()),
        "calling": stdio_entry(trouble_server(&[]), env)
    }})
    .to_string();
    let (runtime, built) = open(&dir, &config).await;
    let started = run(&runtime, "async () => starting.echo({ text: 'x' })").await;
    let start_error = started["error"].as_str().unwrap_or_default();
    assert!(
        start_error.contains("failed to start") && start_error.contains("[redacted]"),
        "the stderr lines are there, without the token: {started}"
    );
    assert!(
        start_error.contains(&format!("{}[reda |", "x".repeat(395))),
        "a line is cut after the token is removed: {start_error}"
    );
    assert_no_token(&started.to_string());
    let listing = runtime.connectors().await;
    let state = listing.iter().find(|c| c.name == "starting").unwrap();
    assert_no_token(state.error.as_deref().unwrap_or_default());

    let leaked = runtime.execute("async () => calling.leak()").await.unwrap();
    let crashed = outcome(&leaked);
    let crash_error = crashed["error"].as_str().unwrap_or_default();
    assert!(
        crash_error.contains("stopped during calling.leak") && crash_error.contains("[redacted]"),
        "{crashed}"
    );
    assert_no_token(&crashed.to_string());
    let stored = runtime.execution(leaked.execution_id()).unwrap();
    let stored = serde_json::to_string(&stored).unwrap();
    assert!(stored.contains("[redacted]"), "{stored}");
    assert_no_token(&stored);
    built.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_preview_template_shows_the_present_state_through_a_read_only_call_never_recorded() {
    let dir = scratch("mcp-preview");
    let config_text = json!({
        "mcpServers": {
            "memory": stdio_entry(npm_server("@modelcontextprotocol/server-memory"), json!({
                "env": {"MEMORY_FILE_PATH": dir.join("memory.jsonl").display().to_string()},
                "approval": ["create_entities", "add_observations"],
                "preview": {"add_observations": {"method": "open_nodes",
                            "args": {"names": ["{{args.observations.0.entityName}}"]}}}
            }))
        }
    })
    .to_string();
    let (runtime, built) = open(&dir, &config_text).await;
    let created = outcome(
        &runtime
            .execute(r#"async () => memory.create_entities({ entities: [{ name: "plan", entityType: "doc", observations: ["ship on friday"] }] })"#)
            .await
            .unwrap(),
    );
    let id = created["executionId"].as_str().unwrap().to_owned();
    // No template for create_entities: nothing to show.
    assert_eq!(runtime.preview(&id, 0).await.unwrap(), None);
    runtime.approve(&id, Actor::Cli, None).await.unwrap();

    let paused = outcome(
        &runtime
            .execute(r#"async () => memory.add_observations({ observations: [{ entityName: "plan", contents: ["or monday"] }] })"#)
            .await
            .unwrap(),
    );
    let id = paused["executionId"].as_str().unwrap().to_owned();
    let Some(codemode::Preview::Current { value, .. }) = runtime.preview(&id, 0).await.unwrap()
    else {
        panic!("a current-state preview");
    };
    let text = value.to_string();
    assert!(
        text.contains("ship on friday") && !text.contains("or monday"),
        "{text}"
    );
    let log = runtime.execution(&id).unwrap().unwrap().log;
    assert_eq!(
        log.len(),
        1,
        "the preview's call is not a call of the run: {log:?}"
    );
    built.shutdown().await;

    // A preview template cannot use the result: there is none yet.
    let bad = json!({"mcpServers": {"memory": {"command": "x", "preview": {"add_observations": {
        "method": "open_nodes", "args": {"names": ["{{result.name}}"]}}}}}})
    .to_string();
    let error = config::parse(&bad, &dir.join("connectors.json"), &dir).unwrap_err();
    assert!(
        error.message.contains("preview.add_observations"),
        "{error}"
    );
}

/// `"approval": "writes"` gates every tool server-memory does not annotate read-only; `"destructive"` only the
/// ones it annotates destructive (its `delete_*`): reads run, writes (or deletes) pause, and the listing says why.
#[tokio::test(flavor = "multi_thread")]
async fn approval_by_annotations_gates_what_the_server_declares() {
    const READ_WRITE_DELETE: &str = r#"async () => {
  await memory.read_graph();
  await memory.create_entities({ entities: [{ name: "a", entityType: "t", observations: ["x"] }] });
  await memory.delete_entities({ entityNames: ["a"] });
  return "done";
}"#;
    for (gate, paused_at, gated, ungated) in [
        (
            "writes",
            "create_entities",
            ["create_entities", "delete_entities"],
            ["read_graph", "open_nodes"],
        ),
        (
            "destructive",
            "delete_entities",
            ["delete_entities", "delete_observations"],
            ["read_graph", "create_entities"],
        ),
    ] {
        let dir = scratch(&format!("mcp-annotations-{gate}"));
        let config_text = json!({
            "mcpServers": {
                "memory": stdio_entry(npm_server("@modelcontextprotocol/server-memory"), json!({
                    "env": {"MEMORY_FILE_PATH": dir.join("memory.jsonl").display().to_string()},
                    "approval": gate
                }))
            }
        })
        .to_string();
        let (runtime, built) = open(&dir, &config_text).await;
        let listing = runtime.connectors().await;
        let methods = &listing.iter().find(|c| c.name == "memory").unwrap().methods;
        let method = |name: &str| methods.iter().find(|m| m.name == name).unwrap().clone();
        for name in gated {
            assert!(method(name).requires_approval, "{gate}: {name} is gated");
        }
        for name in ungated {
            assert!(!method(name).requires_approval, "{gate}: {name} runs");
        }
        let read = method("read_graph");
        assert_eq!(
            (read.read_only_hint, read.gate.as_deref()),
            (
                Some(true),
                Some(
                    format!("approval \"{gate}\": readOnlyHint: true, destructiveHint: false")
                        .as_str()
                )
            )
        );
        assert_eq!(
            method("delete_entities").gate.as_deref(),
            Some(
                format!("approval \"{gate}\": readOnlyHint: false, destructiveHint: true").as_str()
            )
        );

        let paused = outcome(&runtime.execute(READ_WRITE_DELETE).await.unwrap());
        assert_eq!(paused["status"], "paused", "{gate}: {paused}");
        assert_eq!(
            paused["pending"][0]["method"], paused_at,
            "{gate}: {paused}"
        );
        let id = paused["executionId"].as_str().unwrap().to_owned();
        let mut done = outcome(&runtime.approve(&id, Actor::Cli, None).await.unwrap());
        if done["status"] == "paused" {
            assert_eq!(done["pending"][0]["method"], "delete_entities");
            done = outcome(&runtime.approve(&id, Actor::Cli, None).await.unwrap());
        }
        assert_eq!(done["result"], "done", "{gate}: {done}");
        built.shutdown().await;
    }
}

#[test]
fn approval_by_annotations_is_for_mcp_connectors() {
    let refused = config::parse(
        r#"{"connectors": {"files": {"type": "files", "root": "w", "approval": "writes"}}}"#,
        Path::new("/tmp/connectors.json"),
        Path::new("/tmp"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        refused.contains(
            "files.approval \"writes\" reads the tool annotations an MCP server declares"
        ),
        "{refused}"
    );
    let refused = config::parse(
        r#"{"mcpServers": {"m": {"command": "x", "approval": "reads"}}}"#,
        Path::new("/tmp/connectors.json"),
        Path::new("/tmp"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        refused.contains(
            "m.approval must be \"*\", \"writes\", \"destructive\" or a list of method names"
        ),
        "{refused}"
    );
}

/// A gate read from annotations is remembered between starts: when the server declares a tool differently (a
/// new version), the listing shows the gate it had before, beside the one it has now.
#[tokio::test(flavor = "multi_thread")]
async fn a_gate_the_server_moves_by_declaring_a_tool_differently_is_shown_as_moved() {
    let dir = scratch("mcp-gate-moved");
    let config_text = json!({
        "mcpServers": {
            "memory": stdio_entry(npm_server("@modelcontextprotocol/server-memory"), json!({
                "env": {"MEMORY_FILE_PATH": dir.join("memory.jsonl").display().to_string()},
                "approval": "writes"
            }))
        }
    })
    .to_string();
    let read_graph = |listing: &[codemode::ConnectorListing]| {
        listing[0]
            .methods
            .iter()
            .find(|m| m.name == "read_graph")
            .cloned()
            .unwrap()
    };
    let (runtime, built) = open(&dir, &config_text).await;
    let first = read_graph(&runtime.connectors().await);
    assert_eq!(
        (first.requires_approval, first.gate_changed.clone()),
        (false, None)
    );
    built.shutdown().await;
    drop(runtime);

    // What an older version of the server declared: read_graph without annotations, so it was asked about.
    let gates = dir.join("state/memory/gates.json");
    let mut remembered: Value =
        serde_json::from_str(&std::fs::read_to_string(&gates).unwrap()).unwrap();
    remembered["read_graph"] = json!({"asked": true, "gate": "approval \"writes\": not annotated"});
    std::fs::write(&gates, remembered.to_string()).unwrap();

    let (runtime, built) = open(&dir, &config_text).await;
    let moved = read_graph(&runtime.connectors().await);
    assert!(!moved.requires_approval);
    let change = moved.gate_changed.expect("shown as moved");
    assert_eq!(
        (change.asked, change.gate.as_str()),
        (true, "approval \"writes\": not annotated")
    );
    built.shutdown().await;
    drop(runtime);
    // Still shown on the next start, until a week has passed.
    let (runtime, built) = open(&dir, &config_text).await;
    assert!(
        read_graph(&runtime.connectors().await)
            .gate_changed
            .is_some()
    );
    built.shutdown().await;
}
