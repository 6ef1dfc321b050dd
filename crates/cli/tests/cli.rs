//! Every `codemode` command, run as a user runs it: the built binary on a fresh data directory, `--json` shapes
//! and exit codes of README "The command line", and `codemode mcp` driven by the official Python MCP SDK.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod support;

use support::{BINARY, worker};

fn home(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("codemode-cli-{label}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", self.stdout, self.stderr))
    }
}

fn codemode_with_input(home: &Path, args: &[&str], input: Option<&str>) -> Ran {
    let mut child = Command::new(BINARY)
        .arg("--home")
        .arg(home)
        .args(args)
        .env("CODEMODE_WORKER", worker())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("codemode runs");
    let mut stdin = child.stdin.take().unwrap();
    if let Some(input) = input {
        stdin.write_all(input.as_bytes()).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn codemode(home: &Path, args: &[&str]) -> Ran {
    codemode_with_input(home, args, None)
}

fn json(home: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let ran = codemode(home, &all);
    let value = ran.json();
    (ran.code, value)
}

fn program(home: &Path, name: &str, code: &str) -> String {
    let path = home.join(name);
    std::fs::write(&path, code).unwrap();
    path.display().to_string()
}

const WRITE: &str = r#"async () => {
  await files.write_file({ path: "out/report.txt", content: "quarterly" });
  return (await files.read_file({ path: "out/report.txt" })).content;
}"#;

#[test]
fn run_pending_approve_show_and_rollback() {
    let home = home("approve");
    let file = program(&home, "write.js", WRITE);
    let (code, paused) = json(&home, &["run", &file]);
    assert_eq!((code, paused["status"].as_str()), (0, Some("paused")));
    let id = paused["executionId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("exec_") && id.len() == "exec_".len() + 16 + 1 + 36);
    assert!(
        home.join("connectors.json").exists(),
        "the default config is created"
    );

    let (_, pending) = json(&home, &["pending"]);
    assert_eq!(
        pending,
        json!([{"executionId": id, "seq": 0, "connector": "files", "method": "write_file",
                "args": {"path": "out/report.txt", "content": "quarterly"},
                "digest": codemode::args_digest(Some(&json!({"path": "out/report.txt", "content": "quarterly"})))}])
    );
    let (_, only) = json(&home, &["pending", &id]);
    assert_eq!(only, pending);
    let table = codemode(&home, &["pending"]);
    assert!(table.stdout.contains("files.write_file") && table.stdout.contains(&id));

    let (code, done) = json(&home, &["approve", &id]);
    assert_eq!(code, 0);
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"], "quarterly");
    assert_eq!(
        std::fs::read_to_string(home.join("workspace/out/report.txt")).unwrap(),
        "quarterly"
    );

    let (_, shown) = json(&home, &["show", &id]);
    assert_eq!(shown["status"], "completed");
    assert_eq!(shown["log"][0]["decidedBy"], "cli");
    assert_eq!(shown["source"], "cli");
    let human = codemode(&home, &["show", &id]);
    assert_eq!(human.code, 0);
    for needle in [
        "DECISION",
        "files.write_file",
        "applied",
        // Who decided, as the operating system knows them on SQLite, then the way they answered.
        "via cli",
        "\"quarterly\"",
    ] {
        assert!(human.stdout.contains(needle), "{needle}: {}", human.stdout);
    }

    let (code, again) = json(&home, &["approve", &id]);
    assert_eq!(code, 1, "a stale approval is refused: {again}");
    assert_eq!(again["code"], "stale", "{again}");

    let (code, report) = json(&home, &["rollback", &id]);
    assert_eq!(code, 0);
    assert_eq!(
        report,
        json!({"executionId": id, "status": "rolled_back",
               "reverted": [{"seq": 0, "connector": "files", "method": "write_file"}],
               "skipped": [{"seq": 1, "connector": "files", "method": "read_file", "reason": "no revert"}],
               "failed": []})
    );
    assert!(!home.join("workspace/out").exists());
}

/// A long first argument must not push the path out of sight, and a right-to-left override must not let
/// `report\u{202e}fdp.exe` pass for a PDF: `pending`, `show` and the paused outcome print every key, the path
/// first, fold long values and escape what would disguise the text — invisible characters too; `--json` stays
/// exact.
#[test]
fn pending_and_show_print_every_argument_key_with_disguising_characters_escaped() {
    let home = home("whole-args");
    let code = "async () => {
  await files.write_file({ content: \"Meeting notes, \" + \"lorem ipsum \".repeat(40), path: \"deploy/prod-config.yaml\" });
  await files.write_file({ content: \"x\u{200b}\u{e0041}\u{ad}\u{2060}\u{feff}\", path: \"report\u{202e}fdp.exe\" });
}";
    let file = program(&home, "notes.js", code);
    let ran = codemode(&home, &["run", &file]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let path_line = "path: \"deploy/prod-config.yaml\"";
    assert!(ran.stdout.contains(path_line), "{}", ran.stdout);
    let (_, paused) = json(&home, &["pending"]);
    let id = paused[0]["executionId"].as_str().unwrap().to_owned();
    let long = format!("Meeting notes, {}", "lorem ipsum ".repeat(40));
    assert_eq!(
        paused[0]["args"]["content"],
        long.as_str(),
        "--json is exact"
    );

    let folded = format!("… ({} more characters)", long.chars().count() - 80);
    for args in [vec!["pending"], vec!["show", &id]] {
        let shown = codemode(&home, &args).stdout;
        assert!(shown.contains(path_line), "{args:?}: {shown}");
        let content = shown.find("content: \"Meeting notes, lorem");
        assert!(
            content.is_some_and(|at| shown.find(path_line) < Some(at)),
            "{args:?}: the path first, then the content: {shown}"
        );
        assert!(shown.contains(&folded), "{args:?}: {shown}");
    }

    let (code, _) = json(&home, &["approve", &id]);
    assert_eq!(code, 0);
    let (_, pending) = json(&home, &["pending"]);
    assert_eq!(
        pending[0]["args"]["path"], "report\u{202e}fdp.exe",
        "--json is exact"
    );
    for args in [vec!["pending"], vec!["show", &id]] {
        let shown = codemode(&home, &args).stdout;
        assert!(
            shown.contains("path: \"report\\u{202e}fdp.exe\""),
            "{args:?}: {shown}"
        );
        assert!(
            !shown.contains('\u{202e}'),
            "{args:?} printed the override raw: {shown}"
        );
        assert!(
            shown.contains("content: \"x\\u{200b}\\u{e0041}\\u{ad}\\u{2060}\\u{feff}\""),
            "{args:?}: invisible characters are marked: {shown}"
        );
    }
}

#[test]
fn run_reads_stdin_and_error_outcomes_exit_1() {
    let home = home("stdin");
    let ran = codemode_with_input(&home, &["--json", "run", "-"], Some("async () => 6 * 7"));
    assert_eq!(ran.code, 0);
    assert_eq!(ran.json()["result"], 42);
    let ran = codemode_with_input(
        &home,
        &["run", "-", "--json"],
        Some("async () => { throw new Error('nope'); }"),
    );
    assert_eq!(ran.code, 1, "flags are accepted after the subcommand too");
    assert_eq!(ran.json()["error"], "Code execution failed: nope");
    let human = codemode_with_input(&home, &["run", "-"], Some("async () => ({ a: [1, 2] })"));
    assert_eq!(human.code, 0);
    assert!(
        human.stdout.starts_with("completed  exec_"),
        "{}",
        human.stdout
    );
    let missing = codemode(&home, &["--json", "run", "/nonexistent.js"]);
    assert_eq!(missing.code, 1);
    assert!(
        missing.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("cannot read /nonexistent.js")
    );
}

#[test]
fn several_decisions_at_once_each_stand_alone_and_a_stale_one_fails_alone() {
    let home = home("several");
    let file = program(&home, "write.js", WRITE);
    let (_, a) = json(&home, &["run", &file]);
    let (_, done) = json(&home, &["run", &program(&home, "one.js", "async () => 1")]);
    let (_, b) = json(&home, &["run", &file]);
    let (a, done, b) = (
        a["executionId"].as_str().unwrap().to_owned(),
        done["executionId"].as_str().unwrap().to_owned(),
        b["executionId"].as_str().unwrap().to_owned(),
    );
    let (code, outcomes) = json(&home, &["approve", &a, &done, &b]);
    assert_eq!(code, 1, "one of them was refused: {outcomes}");
    assert_eq!(outcomes[0]["status"], "completed", "{outcomes}");
    assert_eq!(outcomes[0]["executionId"], a);
    assert_eq!(
        outcomes[1],
        json!({"executionId": done, "code": "stale",
               "error": format!("Execution \"{done}\" is not paused (status: completed); only a paused run can be approved.")})
    );
    assert_eq!(outcomes[2]["status"], "completed", "{outcomes}");

    let (_, c) = json(&home, &["run", &file]);
    let (_, d) = json(&home, &["run", &file]);
    let (c, d) = (
        c["executionId"].as_str().unwrap().to_owned(),
        d["executionId"].as_str().unwrap().to_owned(),
    );
    let (code, rejected) = json(
        &home,
        &[
            "reject",
            &format!("{c}:0"),
            &format!("{d}:0"),
            "--reason",
            "not today",
        ],
    );
    assert_eq!(code, 0, "{rejected}");
    assert_eq!(
        rejected,
        json!([{"executionId": c, "seq": 0, "rejected": true}, {"executionId": d, "seq": 0, "rejected": true}])
    );
    let (_, shown) = json(&home, &["show", &d]);
    assert_eq!(
        shown["error"],
        "Action files.write_file rejected by user: not today"
    );
    assert_eq!(shown["log"][0]["decision"]["reason"], "not today");
    let text = codemode(&home, &["approve", &a, "--args", "{}", &b]);
    assert_eq!(text.code, 1, "--args edits one call: {}", text.stderr);
}

#[test]
fn rules_are_listed_added_tested_and_removed_and_decide_the_next_call() {
    let home = home("rules");
    std::fs::write(
        home.join("connectors.json"),
        r#"{
  "connectors": { "files": { "type": "files", "root": "workspace" } },
  "rules": [ { "id": "no-deletes", "effect": "deny", "call": "files.delete_file", "reason": "deletes are for people" } ]
}
"#,
    )
    .unwrap();
    let (code, listed) = json(&home, &["rules"]);
    assert_eq!(code, 0, "{listed}");
    assert_eq!(listed[0]["id"], "no-deletes");
    assert_eq!(listed[0]["origin"], "connectors.json");
    let rule = r#"{"id": "scratch", "effect": "allow", "call": "files.write_file", "when": {"path": {"glob": "scratch/**"}}}"#;
    let (code, added) = json(&home, &["rules", "add", rule]);
    assert_eq!((code, added), (0, json!({"added": "scratch"})));
    let (code, verdict) = json(
        &home,
        &[
            "rules",
            "test",
            "files.write_file",
            r#"{"path": "scratch/a.txt"}"#,
        ],
    );
    assert_eq!(
        (code, verdict),
        (0, json!({"effect": "allow", "rule": "scratch"}))
    );
    let (_, verdict) = json(
        &home,
        &[
            "rules",
            "test",
            "files.write_file",
            r#"{"path": "scratch/../etc.txt"}"#,
        ],
    );
    assert_eq!(
        verdict,
        json!({"effect": "ask"}),
        "the approval list decides"
    );
    let file = program(
        &home,
        "scratch.js",
        "async () => (await files.write_file({ path: 'scratch/a.txt', content: 'x' })).created",
    );
    let (code, done) = json(&home, &["run", &file]);
    assert_eq!((code, &done["result"]), (0, &json!(true)), "{done}");
    assert_eq!(done["calls"][0]["decision"]["rule"], "scratch");
    let (_, listed) = json(&home, &["rules"]);
    assert_eq!(
        (listed[0]["id"].clone(), listed[0]["hits"].clone()),
        (json!("scratch"), json!(1))
    );
    assert_eq!(listed[0]["createdBy"], "cli");
    let human = codemode(&home, &["rules"]);
    assert!(
        human.stdout.contains("scratch")
            && human.stdout.contains("connectors.json")
            && human.stdout.contains("HITS"),
        "{}",
        human.stdout
    );
    let (code, bad) = json(
        &home,
        &[
            "rules",
            "add",
            r#"{"id": "b", "effect": "allow", "call": "files.*", "when": {"path": {"glob": "a/[b"}}}"#,
        ],
    );
    assert_eq!(code, 1);
    assert_eq!(bad["code"], "invalid_args");
    assert!(
        bad["error"]
            .as_str()
            .unwrap()
            .starts_with("rule b: when.path.glob: "),
        "{bad}"
    );
    let (code, refused) = json(&home, &["rules", "remove", "no-deletes"]);
    assert_eq!(
        (code, &refused["code"]),
        (1, &json!("invalid_args")),
        "{refused}"
    );
    let (code, removed) = json(&home, &["rules", "remove", "scratch"]);
    assert_eq!((code, removed), (0, json!({"removed": "scratch"})));
    let (_, paused) = json(&home, &["run", &file]);
    assert_eq!(
        paused["status"], "paused",
        "without the rule, the write waits again"
    );
}

#[test]
fn a_remembered_approval_lets_the_same_call_through_and_a_new_rule_can_approve_the_queue() {
    let home = home("remember");
    let file = program(&home, "write.js", WRITE);
    let (_, paused) = json(&home, &["run", &file]);
    let id = paused["executionId"].as_str().unwrap().to_owned();
    let (code, done) = json(
        &home,
        &["approve", &id, "--remember", "exact", "--for", "1h"],
    );
    assert_eq!(code, 0, "{done}");
    assert_eq!(done["status"], "completed");
    let rule = &done["remembered"];
    assert_eq!(rule["effect"], "allow");
    assert_eq!(rule["call"], "files.write_file");
    assert_eq!(
        rule["when"][""],
        json!({"exact": {"path": "out/report.txt", "content": "quarterly"}})
    );
    assert!(rule["until"].as_i64().is_some(), "{rule}");
    // The same call again runs without asking; another one still waits.
    let (_, again) = json(&home, &["run", &file]);
    assert_eq!(again["status"], "completed", "{again}");
    assert_eq!(again["calls"][0]["decision"]["kind"], "allowed");
    let other = program(
        &home,
        "other.js",
        "async () => files.write_file({ path: 'out/other.txt', content: 'x' })",
    );
    let (_, waiting_a) = json(&home, &["run", &other]);
    let (_, waiting_b) = json(&home, &["run", &other]);
    assert_eq!(waiting_a["status"], "paused");
    let (code, added) = json(
        &home,
        &[
            "rules",
            "add",
            r#"{"id": "out", "effect": "allow", "call": "files.write_file", "when": {"path": {"glob": "out/**"}}}"#,
            "--approve-waiting",
        ],
    );
    assert_eq!(code, 0, "{added}");
    let approved = added["approved"].as_array().unwrap();
    assert_eq!(approved.len(), 2, "{added}");
    for (outcome, waiting) in approved.iter().zip([&waiting_b, &waiting_a]) {
        assert_eq!(outcome["executionId"], waiting["executionId"]);
        assert_eq!(outcome["status"], "completed");
        assert_eq!(
            outcome["calls"][0]["decision"],
            json!({"kind": "allowed", "by": "rule", "at": outcome["calls"][0]["decision"]["at"], "rule": "out"})
        );
    }
    let (_, pending) = json(&home, &["pending"]);
    assert_eq!(pending, json!([]));
}

#[test]
fn reject_and_its_exit_codes() {
    let home = home("reject");
    let file = program(&home, "write.js", WRITE);
    let (_, paused) = json(&home, &["run", &file]);
    let id = paused["executionId"].as_str().unwrap().to_owned();
    let (code, wrong_seq) = json(&home, &["reject", &id, "5"]);
    assert_eq!(
        (code, wrong_seq),
        (
            1,
            json!({"error": format!("Call 5 of execution \"{id}\" is not waiting for a decision."), "code": "stale"})
        )
    );
    let (code, rejected) = json(&home, &["reject", &id, "0"]);
    assert_eq!(
        (code, rejected),
        (0, json!({"executionId": id, "seq": 0, "rejected": true}))
    );
    let (_, shown) = json(&home, &["show", &id]);
    assert_eq!(shown["status"], "rejected");
    assert_eq!(shown["log"][0]["decidedBy"], "cli");
    let (code, unknown) = json(&home, &["reject", "exec_nope", "0"]);
    assert_eq!(
        (code, unknown),
        (
            1,
            json!({"error": "No execution \"exec_nope\"", "code": "not_found"})
        )
    );
}

#[test]
fn executions_filters_limits_deletes_prunes_and_expires() {
    let home = home("list");
    let file = program(&home, "write.js", WRITE);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let (_, paused) = json(&home, &["run", &file]);
        ids.push(paused["executionId"].as_str().unwrap().to_owned());
    }
    let (_, done) = json(&home, &["run", &program(&home, "one.js", "async () => 1")]);
    let done_id = done["executionId"].as_str().unwrap().to_owned();

    let (_, all) = json(&home, &["executions"]);
    assert_eq!(all.as_array().unwrap().len(), 4);
    assert_eq!(all[0]["id"], done_id.as_str(), "newest first");
    assert!(all[1]["log"].is_array(), "with its log");
    let (_, paused) = json(&home, &["executions", "--status", "paused", "--limit", "2"]);
    let paused: Vec<&str> = paused
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(paused, vec![ids[2].as_str(), ids[1].as_str()]);
    let bad = codemode(&home, &["--json", "executions", "--status", "sleeping"]);
    assert_eq!(bad.code, 1);
    assert!(
        bad.json()["error"]
            .as_str()
            .unwrap()
            .contains("unknown status")
    );
    assert_eq!(bad.json()["code"], "invalid_args");
    let table = codemode(&home, &["executions"]);
    assert!(table.stdout.lines().next().unwrap().starts_with("ID"));

    let (code, deleted) = json(&home, &["delete", &ids[0]]);
    assert_eq!((code, deleted), (0, json!({"deleted": true})));
    let (code, deleted) = json(&home, &["delete", &ids[0]]);
    assert_eq!(
        (code, deleted),
        (
            1,
            json!({"error": format!("No execution \"{}\"", ids[0]), "code": "not_found"})
        )
    );

    let (code, expired) = json(&home, &["expire", "--max-age", "0s"]);
    assert_eq!(code, 0);
    let mut expired: Vec<String> = serde_json::from_value(expired["expired"].clone()).unwrap();
    expired.sort();
    let mut expected = vec![ids[1].clone(), ids[2].clone()];
    expected.sort();
    assert_eq!(expired, expected);
    let (_, shown) = json(&home, &["show", &ids[1]]);
    assert_eq!(shown["status"], "rejected");
    let bad_age = codemode(&home, &["--json", "expire", "--max-age", "soon"]);
    assert_eq!(bad_age.code, 1);

    // Expired runs carry a decision (by expiry): pruning by count keeps them, as it keeps every record; they
    // go by age (runtime.keepDecidedFor) or by a person's delete (docs/design.md, "Retention").
    let (code, pruned) = json(&home, &["prune", "--keep", "1"]);
    assert_eq!((code, pruned), (0, json!({"deleted": 0})));
    for expired in [&ids[1], &ids[2]] {
        let (code, _) = json(&home, &["delete", expired]);
        assert_eq!(code, 0);
    }
    let (_, left) = json(&home, &["executions"]);
    assert_eq!(left[0]["id"], done_id.as_str());
    assert_eq!(left.as_array().unwrap().len(), 1);
}

#[test]
fn snippets_search_describe_and_connectors() {
    let home = home("snippets");
    let (_, done) = json(
        &home,
        &[
            "run",
            &program(
                &home,
                "list.js",
                "async () => (await files.list_dir({})).entries.length",
            ),
        ],
    );
    let id = done["executionId"].as_str().unwrap().to_owned();
    let (code, saved) = json(
        &home,
        &[
            "snippet",
            "save",
            "count-files",
            "--from",
            &id,
            "--description",
            "How many files the workspace holds",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(saved["name"], "count-files");
    assert_eq!(saved["connectors"], json!(["files"]));
    let (_, listed) = json(&home, &["snippets"]);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(
        listed[0]["description"],
        "How many files the workspace holds"
    );
    let (_, found) = json(&home, &["search", "how many files"]);
    assert_eq!(found["results"][0]["path"], "count-files", "{found}");
    assert_eq!(found["results"][0]["kind"], "snippet");
    let (_, found) = json(&home, &["search", "write file"]);
    assert_eq!(found["results"][0]["path"], "files.write_file");
    let (code, described) = json(&home, &["describe", "files.write_file"]);
    assert_eq!(code, 0);
    assert!(described.to_string().contains("content"), "{described}");
    let (code, deleted) = json(&home, &["snippet", "delete", "count-files"]);
    assert_eq!((code, deleted), (0, json!({"deleted": true})));
    let (code, deleted) = json(&home, &["snippet", "delete", "count-files"]);
    assert_eq!(
        (code, deleted),
        (
            1,
            json!({"error": "No snippet \"count-files\"", "code": "not_found"})
        )
    );
    let (code, unknown) = json(&home, &["snippet", "save", "x", "--from", "exec_nope"]);
    assert_eq!(
        (code, unknown),
        (
            1,
            json!({"error": "No execution \"exec_nope\"", "code": "not_found"})
        )
    );

    let (code, listing) = json(&home, &["connectors"]);
    assert_eq!(code, 0);
    assert_eq!(listing[0]["name"], "files");
    assert_eq!(listing[0]["kind"], "files");
    assert_eq!(listing[0]["status"], "ready");
    // The shape itself is codemode-api's (its tests check every field); the CLI prints it as it is.
    assert!(
        listing[0]["methods"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == "write_file" && m["requiresApproval"] == true)
    );
    let human = codemode(&home, &["connectors"]);
    assert!(human.stdout.contains("write_file [approval, revert]"));
}

#[test]
fn recover_takes_over_a_run_whose_process_was_killed() {
    let home = home("recover");
    let deadline = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        + 1500;
    // The first pass spins until killed; by the time recover runs, the deadline has passed.
    let code = format!(
        "async () => {{ const seen = await files.list_dir({{}}); while (Date.now() < {deadline}) {{}} return seen.entries.length; }}"
    );
    let file = program(&home, "spin.js", &code);
    let mut child = Command::new(BINARY)
        .args(["--home", home.to_str().unwrap(), "--json", "run", &file])
        .env("CODEMODE_WORKER", worker())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let id = loop {
        let (_, running) = json(&home, &["executions", "--status", "running"]);
        if let Some(id) = running[0]["id"].as_str()
            && !running[0]["log"].as_array().unwrap().is_empty()
        {
            break id.to_owned();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let (_, shown) = json(&home, &["show", &id]);
    assert_eq!(shown["status"], "running");
    assert_eq!(shown["interrupted"], true, "its process is gone: {shown}");
    while std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (code, recovered) = json(&home, &["recover", &id]);
    assert_eq!(code, 0, "{recovered}");
    assert_eq!(recovered["status"], "completed");
    assert_eq!(recovered["result"], 0, "the list_dir result was replayed");
    let (code, again) = json(&home, &["recover", &id]);
    assert_eq!(code, 1, "{again}");
}

#[test]
fn bad_usage_exits_2_with_clap_message_and_help_exists_for_every_command() {
    let home = home("usage");
    let ran = codemode(&home, &["frobnicate"]);
    assert_eq!(ran.code, 2);
    assert!(ran.stderr.contains("unrecognized subcommand"));
    let ran = codemode(&home, &["reject", "exec_x", "not-a-number"]);
    assert_eq!(ran.code, 2);
    for command in [
        "run",
        "approve",
        "reject",
        "rollback",
        "recover",
        "pending",
        "executions",
        "show",
        "delete",
        "prune",
        "expire",
        "snippets",
        "snippet",
        "search",
        "describe",
        "connectors",
        "mcp",
    ] {
        let help = codemode(&home, &[command, "--help"]);
        assert_eq!(help.code, 0, "{command}");
        assert!(help.stdout.contains("Usage: codemode"), "{command}");
    }
}

#[test]
fn a_broken_config_is_reported_with_its_position_and_read_only_commands_still_work() {
    let home = home("broken");
    std::fs::write(
        home.join("connectors.json"),
        "{\n  \"connectors\": {\n    \"files\": { \"type\": \"files\", \"root\": 5 }\n  }\n}\n",
    )
    .unwrap();
    let ran = codemode_with_input(&home, &["--json", "run", "-"], Some("async () => 1"));
    assert_eq!(ran.code, 1);
    let error = ran.json()["error"].as_str().unwrap().to_owned();
    assert!(
        error.starts_with("connectors.json is invalid: ") && error.contains("connectors.json:3:"),
        "{error}"
    );
    assert_eq!(ran.json()["code"], "config");
    // The same gate for every mutating command, rollback included.
    let (code, refused) = json(&home, &["rollback", "exec_x"]);
    assert_eq!((code, &refused["code"]), (1, &json!("config")), "{refused}");
    let (code, pending) = json(&home, &["pending"]);
    assert_eq!((code, pending), (0, json!([])));
}

/// The Python that has the official MCP SDK, as scripts/test installs it.
fn python_with_the_mcp_sdk() -> PathBuf {
    let deps = std::env::var_os("CODEMODE_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.test-deps"));
    let python = deps.join("venv/bin/python");
    assert!(
        python.exists(),
        "the Python MCP SDK is missing from {}: run scripts/test, which installs it",
        deps.display()
    );
    python
}

/// `codemode mcp` with the official Python SDK as the client: see `tests/mcp_client.py`.
#[test]
fn mcp_server_round_trips_with_the_official_python_client() {
    worker();
    let python = python_with_the_mcp_sdk();
    let good = home("mcp");
    let broken = home("mcp-broken");
    std::fs::write(
        broken.join("connectors.json"),
        "{\n  \"connectors\": {\n    \"files\": { \"type\": \"files\", \"root\": 5 }\n  }\n}\n",
    )
    .unwrap();
    let stderr = python_client(&python, "mcp_client.py", &[&good, &broken]);
    assert!(
        !stderr.contains("Failed to parse"),
        "only protocol on stdout: {stderr}"
    );
}

/// Asking in the agent's own client, in both protocol eras, with the official Python SDK: see
/// `tests/mcp_ask_in_client.py` (its transcript is printed).
#[test]
fn mcp_asks_in_the_client_in_both_protocol_eras() {
    worker();
    let python = python_with_the_mcp_sdk();
    let dir = home("mcp-ask");
    std::fs::write(
        dir.join("connectors.json"),
        r#"{
  "connectors": { "files": { "type": "files", "root": "workspace" } },
  "rules": [
    { "id": "notes-in-client", "effect": "ask", "call": "files.write_file",
      "when": { "path": { "glob": "notes/**" } }, "askInClient": true },
    { "id": "deletes-in-window", "effect": "ask", "call": "files.delete_file",
      "askInClient": true, "confirmInApp": true }
  ]
}
"#,
    )
    .unwrap();
    python_client(&python, "mcp_ask_in_client.py", &[&dir]);
}

/// Runs the client script `tests/<script>` (`codemode` binary, then `homes`), which prints a transcript and
/// ends with ALL GOOD; returns its stderr.
fn python_client(python: &Path, script: &str, homes: &[&Path]) -> String {
    let out = Command::new(python)
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests")
                .join(script),
        )
        .arg(BINARY)
        .args(homes)
        .env("CODEMODE_WORKER", worker())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("ALL GOOD"),
        "{stdout}\n{stderr}"
    );
    stderr
}

/// `codemode mcp` on `home`, spoken to over raw pipes.
fn mcp_server(home: &Path) -> std::process::Child {
    Command::new(BINARY)
        .args(["--home", home.to_str().unwrap(), "mcp"])
        .env("CODEMODE_WORKER", worker())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Malformed and oversized JSON-RPC lines do not stop the server; it keeps answering.
#[test]
fn mcp_server_survives_malformed_and_oversized_messages() {
    let home = home("mcp-raw");
    let mut child = mcp_server(&home);
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{{\"name\":\"codemode\",\"arguments\":{{\"code\":\"{}\"}}}}}}\n",
        "x".repeat(4_000_000)
    );
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    for line in [
        "this is not json\n",
        "{\"jsonrpc\":\"2.0\",\"id\":\n",
        "[1,2,3]\n",
    ] {
        stdin.write_all(line.as_bytes()).unwrap();
    }
    stdin.write_all(init.as_bytes()).unwrap();
    stdin.write_all(b"\n").unwrap();
    stdin.flush().unwrap();
    let mut answered_init = false;
    for line in lines.by_ref() {
        let message: Value = serde_json::from_str(&line.unwrap()).expect("only JSON on stdout");
        if message["id"] == 1 {
            answered_init = true;
            break;
        }
    }
    assert!(answered_init);
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .unwrap();
    stdin.write_all(huge.as_bytes()).unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"codemode\",\"arguments\":{\"code\":\"async () => 'alive'\"}}}\n")
        .unwrap();
    stdin.flush().unwrap();
    let mut alive = false;
    for line in lines.by_ref() {
        let message: Value = serde_json::from_str(&line.unwrap()).expect("only JSON on stdout");
        if message["id"] == 9 {
            // The oversized program is an ordinary error outcome.
            let outcome = &message["result"]["structuredContent"];
            assert_eq!(outcome["status"], "error", "{outcome}");
        }
        if message["id"] == 2 {
            assert_eq!(message["result"]["structuredContent"]["result"], "alive");
            alive = true;
            break;
        }
    }
    assert!(alive);
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// Every request gets an answer (README "The command line", JSON-RPC 2.0 §5): a line past the size limit, whatever its size, is
/// skipped without being held in memory and answered as too large, naming its id when it comes first; malformed
/// JSON (NaN included) is a parse error with id null; params that do not fit are Invalid params; and the next
/// request is served as usual.
#[test]
fn mcp_server_answers_oversized_malformed_and_invalid_requests_and_keeps_serving() {
    let home = home("mcp-answers");
    let mut child = mcp_server(&home);
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    // Read on a thread, so a request left unanswered fails the test instead of hanging it.
    let (answers, answered) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if answers.send(line).is_err() {
                break;
            }
        }
    });
    let mut exchange = |request: &[u8]| -> Value {
        stdin.write_all(request).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        let line = answered
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no answer to {:.200}", String::from_utf8_lossy(request)));
        serde_json::from_str(&line).expect("only JSON on stdout")
    };
    // The `initialized` notification rides with the request: it gets no answer of its own.
    let init = exchange(concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    ).as_bytes());
    assert_eq!(init["id"], 1, "{init}");

    let limit = 16 * 1024 * 1024;
    let call = |id: &str, code: &str| {
        format!(
            r#"{{"jsonrpc":"2.0",{id}"method":"tools/call","params":{{"name":"codemode","arguments":{{"code":"{code}"}}}}}}"#
        )
    };
    let too_large = format!("too large (limit {limit} bytes)");
    for (size, id, expected_id) in [
        (17_000_000, r#""id":5,"#, json!(5)),
        (50_000_000, "", Value::Null),
    ] {
        // The second one names its id only after the program, past the limit: it cannot be read.
        let mut request = call(id, &"x".repeat(size));
        if id.is_empty() {
            request.insert_str(request.len() - 1, r#","id":6"#);
        }
        let answer = exchange(request.as_bytes());
        assert_eq!(answer["id"], expected_id, "{size}: {answer:.300}");
        assert_eq!(answer["error"]["code"], -32600, "{size}: {answer:.300}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(&too_large), "{message}");
    }
    for malformed in [
        "this is not json".to_owned(),
        call(r#""id":7,"#, "x").replace(r#""x""#, "NaN"),
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"#.to_owned(),
    ] {
        let answer = exchange(malformed.as_bytes());
        assert_eq!(
            (&answer["id"], &answer["error"]["code"]),
            (&Value::Null, &json!(-32700)),
            "{malformed}: {answer}"
        );
    }
    let answer = exchange(br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"codemode","arguments":"str"}}"#);
    assert_eq!(
        (&answer["id"], &answer["error"]["code"]),
        (&json!(9), &json!(-32602)),
        "{answer}"
    );
    let answer = exchange(br#"{"jsonrpc":"2.0","id":10,"method":"no/such"}"#);
    assert_eq!(answer["error"]["code"], -32601, "{answer}");

    let alive = exchange(call(r#""id":11,"#, "async () => 'alive'").as_bytes());
    assert_eq!(alive["id"], 11, "{alive}");
    assert_eq!(
        alive["result"]["structuredContent"]["result"], "alive",
        "{alive}"
    );
    let peak = peak_memory_kib(pid);
    println!("codemode mcp peak memory after a 50 MB line: {peak:?} KiB");
    if let Some(peak) = peak {
        // About 31 MiB in a debug build: the 16 MiB kept of a line past the limit, never the 50 MB line.
        assert!(
            peak < 64 * 1024,
            "the 50 MB line was held in memory: {peak} KiB"
        );
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// The process's peak resident memory (Linux), to see that a huge line was not held whole.
fn peak_memory_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn secrets_in_connectors_json_reach_their_server_and_no_surface_of_ours() {
    const ENV_SECRET: &str = "env-secret-5d1c7a";
    const DOWN_SECRET: &str = "down-secret-93be02";
    const HEADER_SECRET: &str = "header-secret-4f8e61";
    let home = home("secrets");
    let ledger = home.join("ledger.txt");
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ledger_server.py");
    let config = json!({"connectors": {
        "ledger": {"type": "mcp", "command": "python3", "args": [server, &ledger],
                   "env": {"LEDGER_SECRET": ENV_SECRET}},
        "down": {"type": "mcp", "command": "/nonexistent/mcp-server", "env": {"TOKEN": DOWN_SECRET}},
        "web": {"type": "mcp", "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": format!("Bearer {HEADER_SECRET}")}}
    }});
    std::fs::write(home.join("connectors.json"), format!("{config:#}")).unwrap();
    let code = r#"async () => {
  const noted = await ledger.note({ token: "t1" });
  const failure = async (call) => { try { await call(); return "no error"; } catch (e) { return String(e); } };
  return { noted, down: await failure(() => down.ping({})), web: await failure(() => web.ping({})) };
}"#;
    let ran = codemode(
        &home,
        &["--json", "run", &program(&home, "secrets.js", code)],
    );
    let outcome = ran.json();
    assert_eq!(outcome["status"], "completed", "{outcome}");
    assert_eq!(outcome["result"]["noted"]["token"], "t1", "{outcome}");
    assert_ne!(outcome["result"]["down"], "no error", "{outcome}");
    assert_ne!(outcome["result"]["web"], "no error", "{outcome}");
    let id = outcome["executionId"].as_str().unwrap().to_owned();
    let mut seen = vec![format!("{}{}", ran.stdout, ran.stderr)];
    for args in [
        vec!["--json", "executions"],
        vec!["--json", "show", &id],
        vec!["--json", "connectors"],
        vec!["--json", "search", "ping"],
        vec!["--json", "describe", "down"],
        vec!["--json", "describe", "web"],
        vec!["connectors"],
        vec!["show", &id],
    ] {
        let ran = codemode(&home, &args);
        seen.push(format!("{}{}", ran.stdout, ran.stderr));
    }
    for name in ["codemode.db", "codemode.db-wal"] {
        if let Ok(bytes) = std::fs::read(home.join(name)) {
            seen.push(String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    for secret in [ENV_SECRET, DOWN_SECRET, HEADER_SECRET] {
        for (i, text) in seen.iter().enumerate() {
            assert!(
                !text.contains(secret),
                "{secret} leaked into surface {i}: {text:.2000}"
            );
        }
    }
    let ledger = std::fs::read_to_string(&ledger).unwrap();
    assert!(
        ledger.contains(&format!("secret {ENV_SECRET}")),
        "the server got its env: {ledger}"
    );
    println!(
        "secrets: 3 secrets (env, env of a server that cannot start, header), {} surfaces checked, none leaked",
        seen.len()
    );
}

#[test]
fn pending_preview_shows_the_diff_of_a_write_and_keeps_it_with_the_decision() {
    let home = home("preview");
    std::fs::create_dir_all(home.join("workspace/notes")).unwrap();
    std::fs::write(
        home.join("workspace/notes/plan.md"),
        "# Plan\nship on Friday\n",
    )
    .unwrap();
    let file = program(
        &home,
        "edit.js",
        r##"async () => files.write_file({ path: "notes/plan.md", content: "# Plan\nship on Monday\n" })"##,
    );
    let (_, paused) = json(&home, &["run", &file]);
    let id = paused["executionId"].as_str().unwrap().to_owned();

    let (code, pending) = json(&home, &["pending", "--preview"]);
    assert_eq!(code, 0);
    assert_eq!(
        pending[0]["preview"],
        json!({"kind": "diff", "path": "notes/plan.md", "before": "# Plan\nship on Friday\n",
               "after": "# Plan\nship on Monday\n"})
    );
    let table = codemode(&home, &["pending", "--preview"]);
    assert!(
        table.stdout.contains("changes notes/plan.md"),
        "{}",
        table.stdout
    );
    assert!(
        table.stdout.contains("-ship on Friday") && table.stdout.contains("+ship on Monday"),
        "{}",
        table.stdout
    );

    let (code, _) = json(&home, &["reject", &id, "0", "--reason", "keep Friday"]);
    assert_eq!(code, 0);
    let (_, shown) = json(&home, &["show", &id]);
    let decision = &shown["log"][0]["decision"];
    assert_eq!(decision["kind"], "rejected");
    assert_eq!(decision["shown"]["preview"], pending[0]["preview"]);
    assert_eq!(decision["shown"]["digest"].as_str().map(str::len), Some(64));
    assert_eq!(
        std::fs::read_to_string(home.join("workspace/notes/plan.md")).unwrap(),
        "# Plan\nship on Friday\n"
    );
}

/// What the model reads is bounded (`tests/mcp_bounds.py`): a long string, a long array, a deep object, binary,
/// a million log lines, 100,000 calls and an error of 1 MB, each within `runtime.maxOutputChars` as valid JSON,
/// with the audit log unchanged.
#[test]
fn mcp_outcomes_stay_within_the_output_budget() {
    worker();
    let python = python_with_the_mcp_sdk();
    let dir = home("mcp-bounds");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_bounds.py");
    let out = Command::new(python)
        .arg(script)
        .arg(BINARY)
        .arg(&dir)
        .env("CODEMODE_WORKER", worker())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("ALL GOOD"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The remote test server of the connectors crate (`remote_mcp.py` on the official Python SDK, over TLS with a
/// CA made by `make_certs.sh`), behind OAuth; killed when dropped.
struct RemoteServer {
    child: std::process::Child,
    url: String,
    ca: PathBuf,
}

impl RemoteServer {
    fn start(dir: &Path) -> RemoteServer {
        Self::start_with(dir, &["--oauth"])
    }

    fn start_with(dir: &Path, extra: &[&str]) -> RemoteServer {
        let servers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../connectors/tests/servers");
        let certs = dir.join("certs");
        let made = Command::new("bash")
            .arg(servers.join("make_certs.sh"))
            .arg(&certs)
            .status()
            .unwrap();
        assert!(made.success());
        let mut child = Command::new(python_with_the_mcp_sdk())
            .arg(servers.join("remote_mcp.py"))
            .args(extra)
            .arg("--certfile")
            .arg(certs.join("server.pem"))
            .arg("--keyfile")
            .arg(certs.join("server.key"))
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join("server.log")).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().strip_prefix("ready ").expect(&line).to_owned();
        RemoteServer {
            child,
            url,
            ca: certs.join("ca.pem"),
        }
    }
}

impl Drop for RemoteServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a person's browser does with the authorization address: the test server approves at once and
/// redirects to `codemode login`'s loopback address, which is then visited.
const BROWSER: &str = r#"
import http.client, ssl, sys, urllib.parse, urllib.request
at = urllib.parse.urlsplit(sys.argv[1])
web = http.client.HTTPSConnection(at.hostname, at.port, context=ssl.create_default_context(cafile=sys.argv[2]))
web.request("GET", at.path + "?" + at.query)
back = web.getresponse().getheader("location")
print(urllib.request.urlopen(back).read().decode())
"#;

#[test]
fn codemode_login_signs_in_to_a_remote_server_and_its_tokens_reach_no_surface_of_ours() {
    let home = home("login");
    let server = RemoteServer::start(&home);
    let config =
        json!({"connectors": {"remote": {"type": "mcp", "url": server.url, "caFile": server.ca}}});
    std::fs::write(home.join("connectors.json"), format!("{config:#}")).unwrap();
    let whoami = program(&home, "whoami.js", "async () => remote.whoami({})");

    let (code, before) = json(&home, &["run", &whoami]);
    assert_eq!(code, 1, "{before}");
    let error = before["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("needs a sign-in") && error.contains("`codemode login remote`"),
        "{before}"
    );

    let mut login = Command::new(BINARY)
        .args(["--home"])
        .arg(&home)
        .args(["--json", "login", "remote"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut stderr = BufReader::new(login.stderr.take().unwrap());
    let address = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "no address: {said}"
        );
        said.push_str(&line);
        if let Some(address) = line.trim().strip_prefix("https://") {
            break format!("https://{address}");
        }
    };
    let browsed = Command::new(python_with_the_mcp_sdk())
        .args(["-c", BROWSER, &address])
        .arg(&server.ca)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&browsed.stdout).contains("Signed in"),
        "{browsed:?}"
    );
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    said.push_str(&rest);
    let out = login.wait_with_output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{printed}{said}");
    assert_eq!(
        serde_json::from_str::<Value>(&printed).unwrap(),
        json!({"connector": "remote", "signedIn": true})
    );

    let ran = codemode(&home, &["--json", "run", &whoami]);
    let after = ran.json();
    assert_eq!(after["status"], "completed", "{after}");
    let listed = codemode(&home, &["connectors"]);
    assert!(listed.stdout.contains("signed in"), "{}", listed.stdout);
    let (_, as_json) = json(&home, &["connectors"]);
    assert_eq!(as_json[0]["signedIn"], true);

    // The tokens are where the sign-in keeps them, owner-only, and nowhere else of ours.
    let kept_at = home.join("sign-in/remote.json");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&kept_at).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let kept: Value = serde_json::from_slice(&std::fs::read(&kept_at).unwrap()).unwrap();
    let secrets: Vec<String> = ["access_token", "refresh_token"]
        .iter()
        .map(|k| kept["token_response"][k].as_str().expect(k).to_owned())
        .collect();
    let id = after["executionId"].as_str().unwrap().to_owned();
    let mut seen = vec![
        said,
        printed,
        format!("{}{}", ran.stdout, ran.stderr),
        format!("{}{}", listed.stdout, listed.stderr),
    ];
    for args in [
        vec!["--json", "executions"],
        vec!["--json", "show", &id],
        vec!["--json", "connectors"],
        vec!["--json", "describe", "remote"],
        vec!["show", &id],
    ] {
        let ran = codemode(&home, &args);
        seen.push(format!("{}{}", ran.stdout, ran.stderr));
    }
    for name in ["codemode.db", "codemode.db-wal", "connectors.json"] {
        if let Ok(bytes) = std::fs::read(home.join(name)) {
            seen.push(String::from_utf8_lossy(&bytes).into_owned());
        }
    }
    for secret in &secrets {
        for (i, text) in seen.iter().enumerate() {
            assert!(
                !text.contains(secret.as_str()),
                "a token leaked into surface {i}: {text:.2000}"
            );
        }
    }

    let (code, out) = json(&home, &["logout", "remote"]);
    assert_eq!(
        (code, out),
        (0, json!({"connector": "remote", "signedOut": true}))
    );
    assert!(!kept_at.exists());
    let (code, again) = json(&home, &["run", &whoami]);
    assert_eq!(code, 1);
    assert!(
        again["error"]
            .as_str()
            .unwrap_or_default()
            .contains("codemode login remote"),
        "{again}"
    );
    let (code, not_remote) = json(&home, &["login", "files"]);
    assert_ne!(code, 0, "{not_remote}");
}

/// Without a `caFile`, a server's certificate is checked against the system's trust store: the one that
/// `SSL_CERT_FILE` names here, as OpenSSL-based tools read it, so the test need not change the machine's.
#[test]
fn https_trusts_what_the_system_store_trusts() {
    let home = home("system-store");
    let server = RemoteServer::start_with(&home, &[]);
    let config = json!({"connectors": {"remote": {"type": "mcp", "url": server.url}}});
    std::fs::write(home.join("connectors.json"), format!("{config:#}")).unwrap();
    let echo = program(
        &home,
        "echo.js",
        r#"async () => remote.echo({ text: "trusted" })"#,
    );
    let refused = codemode(&home, &["--json", "run", &echo]).json();
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .contains("the certificate of localhost was refused"),
        "{refused}"
    );
    let run = Command::new(BINARY)
        .arg("--home")
        .arg(&home)
        .args(["--json", "run", &echo])
        .env("CODEMODE_WORKER", worker())
        .env("SSL_CERT_FILE", &server.ca)
        .output()
        .unwrap();
    let trusted: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(trusted["result"], "trusted", "{trusted}");
}

/// Two "machines" (two data directories with different connectors) on one PostgreSQL store: a pause on A,
/// approved from B's CLI, is executed by A, and A's `codemode_wait` returns it. See `tests/two_machines.py`.
#[test]
fn a_pause_on_one_machine_approved_from_another_runs_where_it_began() {
    let Some(url) = support::fresh_postgres("two") else {
        return;
    };
    worker();
    let python = python_with_the_mcp_sdk();
    let (a, b) = (home("machine-a"), home("machine-b"));
    for (home, connector, folder) in [(&a, "files", "workspace"), (&b, "notes", "notes")] {
        std::fs::write(
            home.join("connectors.json"),
            serde_json::to_string_pretty(&json!({
                "runtime": { "store": url },
                "connectors": { connector: { "type": "files", "root": home.join(folder) } }
            }))
            .unwrap(),
        )
        .unwrap();
    }
    python_client(&python, "two_machines.py", &[&a, &b]);
}

/// The history commands through the binary (docs/history.md): a filtered list, both export formats on stdout
/// with the count on stderr, insights, and each call's times in `show --json`.
#[test]
fn history_filters_export_and_insights_from_the_command_line() {
    let home = home("history");
    let write = program(
        &home,
        "write.js",
        r#"async () => files.write_file({ path: "notes/a.txt", content: "hi" })"#,
    );
    let list = program(
        &home,
        "list.js",
        r#"async () => files.list_dir({ path: "." })"#,
    );
    let (_, paused) = json(&home, &["run", &write]);
    let id = paused["executionId"].as_str().unwrap().to_owned();
    let (code, _) = json(&home, &["approve", &id]);
    assert_eq!(code, 0);
    json(&home, &["run", &list]);

    let (code, listed) = json(
        &home,
        &["executions", "--call", "files.write_*", "--since", "1h"],
    );
    assert_eq!(code, 0, "{listed}");
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids, [id.as_str()]);
    let (code, none) = json(&home, &["executions", "--until", "2000-01-01"]);
    assert_eq!((code, none), (0, json!([])));
    let refused = codemode(&home, &["executions", "--since", "last tuesday"]);
    assert_eq!(refused.code, 1);
    assert!(
        refused
            .stderr
            .contains("--since \"last tuesday\" is neither"),
        "{}",
        refused.stderr
    );

    let jsonl = codemode(&home, &["export"]);
    assert_eq!(jsonl.code, 0, "{}", jsonl.stderr);
    assert_eq!(jsonl.stdout.lines().count(), 2);
    assert!(
        jsonl.stderr.contains("exported 2 runs, 2 calls"),
        "{}",
        jsonl.stderr
    );
    let csv = codemode(&home, &["export", "--format", "csv", "--decided-by", "cli"]);
    let rows: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(
        rows.len(),
        2,
        "a header and the approved call: {}",
        csv.stdout
    );
    assert!(
        rows[1].starts_with(&format!("{id},completed,cli,")),
        "{}",
        rows[1]
    );
    assert!(
        rows[1].contains(",write_file,applied,true,approved,cli,"),
        "{}",
        rows[1]
    );

    let (code, insights) = json(&home, &["insights", "--since", "1d"]);
    assert_eq!(code, 0, "{insights}");
    assert_eq!(
        (insights["allowed"].as_u64(), insights["asked"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(insights["approvalRate"], json!(1.0));
    assert_eq!(
        insights["shapes"][0]["rule"]["when"],
        json!({"path": {"glob": "notes/**"}})
    );

    let (_, shown) = json(&home, &["show", &id]);
    let call = &shown["log"][0];
    let (asked, started, finished) = (
        call["askedAt"].as_i64().unwrap(),
        call["startedAt"].as_i64().unwrap(),
        call["finishedAt"].as_i64().unwrap(),
    );
    let decided = call["decision"]["at"].as_i64().unwrap();
    assert!(
        asked <= decided && decided <= started && started <= finished,
        "{call}"
    );
}

/// `codemode rerun` through the binary against a real MCP server whose effects are lines in a file
/// (docs/history.md, "Rerun from a step"): nothing before the step reaches the server again, the step runs
/// once after its approval, an edited program that leaves the old calls says where, and `show` links both runs.
#[test]
fn rerun_from_a_step_reaches_the_server_only_from_that_step() {
    let home = home("rerun");
    let ledger = home.join("ledger.txt");
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ledger_server.py");
    let config = json!({"connectors": {"ledger": {
        "type": "mcp", "command": "python3", "args": [server, &ledger], "approval": ["record"]
    }}});
    std::fs::write(home.join("connectors.json"), format!("{config:#}")).unwrap();
    let code = r#"async () => {
  await ledger.note({ token: "a" });
  await ledger.note({ token: "b" });
  await ledger.record({ token: "c" });
  return "done";
}"#;
    let file = program(&home, "three.js", code);
    let (_, paused) = json(&home, &["run", &file]);
    let old = paused["executionId"].as_str().unwrap().to_owned();
    assert_eq!(json(&home, &["approve", &old]).0, 0);
    let effects = || std::fs::read_to_string(&ledger).unwrap_or_default();
    assert_eq!(effects(), "apply a\napply b\napply c\n");

    let (code_rc, rerun) = json(&home, &["rerun", &old, "--from", "2"]);
    assert_eq!(code_rc, 0, "{rerun}");
    assert_eq!(rerun["outcome"]["status"], "paused", "{rerun}");
    assert_eq!(rerun["forkedFrom"], json!({"executionId": old, "seq": 2}));
    let new = rerun["outcome"]["executionId"].as_str().unwrap().to_owned();
    assert_eq!(
        effects(),
        "apply a\napply b\napply c\n",
        "nothing before the step ran"
    );
    assert_eq!(json(&home, &["approve", &new]).0, 0);
    assert_eq!(
        effects(),
        "apply a\napply b\napply c\napply c\n",
        "the step ran once"
    );

    let shown = codemode(&home, &["show", &new]);
    assert!(
        shown
            .stdout
            .contains(&format!("rerun:    rerun of {old} from call 2")),
        "{}",
        shown.stdout
    );
    assert!(
        shown.stdout.contains("served from the old run"),
        "{}",
        shown.stdout
    );
    let shown_old = codemode(&home, &["show", &old]);
    assert!(
        shown_old.stdout.contains(&format!("reruns:   {new}")),
        "{}",
        shown_old.stdout
    );

    // An edited program that calls otherwise before the step runs fresh from there, and says so.
    let edited = program(
        &home,
        "edited.js",
        &code.replace("token: \"b\"", "token: \"x\""),
    );
    let ran = codemode(
        &home,
        &[
            "rerun",
            &old,
            "--from",
            "2",
            "--code",
            &format!("@{edited}"),
        ],
    );
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(
        ran.stdout.contains(
            "The program diverged from the old run at call 1 (ledger.note was called with other arguments); it ran fresh from there."
        ),
        "{}",
        ran.stdout
    );
    assert_eq!(effects(), "apply a\napply b\napply c\napply c\napply x\n");

    let refused = codemode(&home, &["rerun", &old, "--from", "7"]);
    assert_eq!(refused.code, 1);
    assert!(
        refused
            .stderr
            .contains("a rerun can begin at 3 at the latest"),
        "{}",
        refused.stderr
    );
}
