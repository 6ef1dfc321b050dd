//! The crash harness: 200 executions through the real `codemode` binary against a `files` workspace and an MCP
//! server (`ledger_server.py`, whose effects are lines in a file), with the CLI process `kill -9`ed at random
//! moments of `run`, `approve`, `recover` and `rollback` — the ledger answers a few milliseconds after its
//! effect is on disk, so many kills land between an effect and its record. Every execution is then driven to
//! an end and the effects are checked, not just the log: an approval-gated call is applied at most once per
//! human approval, a rolled-back run leaves nothing applied, the workspace holds exactly what finished runs
//! wrote, paused runs stay approvable, interrupted ones are recovered or reclaimed by `expire`, and the
//! database passes `PRAGMA integrity_check`. Seeded (`CRASH_SEED`); prints its counts. It runs twice: on the
//! data directory's SQLite file, and on a PostgreSQL database (`runtime.store`, docs/shared-store.md), where a
//! killed process's transaction is rolled back by the server and the log must keep no orphan rows.

use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

mod support;

use support::{BINARY, worker};

const EXECUTIONS: usize = 200;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() % 10_000) as f64 / 10_000.0 < p
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What one CLI invocation came to.
enum Ran {
    Finished { code: i32, out: Value },
    Killed,
}

#[derive(Default)]
struct Counts {
    invocations: usize,
    killed: BTreeMap<&'static str, usize>,
    never_recorded: usize,
    recovered: usize,
    approvals: usize,
    ungated_rerun: usize,
    gated_reapproved: usize,
    by_status: BTreeMap<String, usize>,
    reclaimed_by_expire: usize,
    /// Calls a crash left in doubt (the host died while applying them) in runs that were then rolled back.
    in_doubt_rolled_back: usize,
}

struct Harness {
    home: PathBuf,
    ledger: PathBuf,
    rng: Rng,
    counts: Counts,
}

impl Harness {
    fn new(seed: u64, store: Option<&str>) -> Harness {
        let home =
            std::env::temp_dir().join(format!("codemode-crash-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(home.join("programs")).unwrap();
        let ledger = home.join("ledger.txt");
        let python = ["python3", "/usr/bin/python3"]
            .into_iter()
            .find(|p| Command::new(p).arg("-V").output().is_ok())
            .expect("python3 runs the ledger server");
        let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ledger_server.py");
        let mut runtime = json!({"maxExecutions": 1000});
        if let Some(url) = store {
            runtime["store"] = json!(url);
        }
        let config = json!({
            "runtime": runtime,
            "connectors": {
                "files": {"type": "files", "root": "workspace"},
                "ledger": {
                    "type": "mcp", "command": python,
                    "args": [server, ledger],
                    "approval": ["record"],
                    "revert": {
                        "note": {"method": "erase", "args": {"token": "{{args.token}}"}},
                        "record": {"method": "erase", "args": {"token": "{{args.token}}"}}
                    }
                }
            }
        });
        std::fs::write(home.join("connectors.json"), format!("{config:#}")).unwrap();
        Harness {
            home,
            ledger,
            rng: Rng(seed | 1),
            counts: Counts::default(),
        }
    }

    /// Runs `codemode --json ARGS`; with `kill`, sends SIGKILL after a random delay unless it ended first.
    fn cli(&mut self, args: &[&str], kill: Option<&'static str>) -> Ran {
        self.counts.invocations += 1;
        let mut child = Command::new(BINARY)
            .arg("--home")
            .arg(&self.home)
            .arg("--json")
            .args(args)
            .env("CODEMODE_WORKER", worker())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("codemode starts");
        if let Some(what) = kill {
            let delay = Duration::from_millis(self.rng.below(400));
            std::thread::sleep(delay);
            if child.try_wait().expect("wait").is_none() {
                child.kill().expect("kill -9");
                child.wait().expect("reaped");
                *self.counts.killed.entry(what).or_default() += 1;
                return Ran::Killed;
            }
        }
        let output = child.wait_with_output().expect("codemode ends");
        let code = output.status.code().unwrap_or(-1);
        let out = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
            json!({"unparsed": String::from_utf8_lossy(&output.stdout),
                   "stderr": String::from_utf8_lossy(&output.stderr)})
        });
        Ran::Finished { code, out }
    }

    fn maybe(&mut self, p: f64, what: &'static str) -> Option<&'static str> {
        self.rng.chance(p).then_some(what)
    }

    fn show(&mut self, id: &str) -> Value {
        match self.cli(&["show", id], None) {
            Ran::Finished { code: 0, out } => out,
            Ran::Finished { out, .. } => panic!("show {id}: {out}"),
            Ran::Killed => unreachable!(),
        }
    }

    /// The execution whose program holds `marker`, when the killed `run` got as far as recording it.
    fn find(&mut self, marker: &str) -> Option<String> {
        let Ran::Finished { out, .. } = self.cli(&["executions", "--limit", "10000"], None) else {
            unreachable!()
        };
        out.as_array()
            .expect("executions is a list")
            .iter()
            .find(|e| e["code"].as_str().is_some_and(|c| c.contains(marker)))
            .map(|e| e["id"].as_str().unwrap_or_default().to_owned())
    }

    /// Every call the ledger server received: its tool and its arguments as sent.
    fn inputs(&self) -> Vec<(String, Value)> {
        let path = format!("{}.inputs", self.ledger.display());
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let input: Value = serde_json::from_str(line).expect("an input line");
                (
                    input["tool"].as_str().unwrap_or_default().to_owned(),
                    input["arguments"].clone(),
                )
            })
            .collect()
    }

    /// Per token: how many times it was applied, and whether it is in the ledger now.
    fn ledger(&self) -> HashMap<String, Effect> {
        let text = std::fs::read_to_string(&self.ledger).unwrap_or_default();
        let mut effects: HashMap<String, Effect> = HashMap::new();
        for line in text.lines() {
            let (kind, token) = line.split_once(' ').expect("ledger line");
            let entry = effects.entry(token.to_owned()).or_default();
            match kind {
                "apply" => {
                    entry.applied += 1;
                    entry.present = true;
                }
                "erase" => entry.present = false,
                other => panic!("ledger line {other}"),
            }
        }
        effects
    }
}

/// A note (ungated, revertible), a workspace write (gated by `files`' default), a gated ledger record, a read.
fn program(run: &str) -> String {
    format!(
        "async () => {{\n  const run = \"{run}\";\n  await ledger.note({{ token: run + \"-0\" }});\n  \
         await files.write_file({{ path: run + \".txt\", content: run }});\n  \
         await ledger.record({{ token: run + \"-2\" }});\n  \
         const back = await files.read_file({{ path: run + \".txt\" }});\n  return back.content;\n}}\n"
    )
}

fn pending_seq(execution: &Value) -> Option<u64> {
    execution["log"]
        .as_array()?
        .iter()
        .find(|e| e["state"] == "pending")
        .and_then(|e| e["seq"].as_u64())
}

#[derive(Default, Clone, Copy)]
struct Effect {
    applied: usize,
    present: bool,
}

/// What the harness did to one execution, for checking its effects.
#[derive(Default)]
struct Track {
    id: Option<String>,
    /// Approvals given while the gated ledger call (seq 2) was the pending one.
    record_approvals: usize,
    left_for_expiry: bool,
    rollback_tried: bool,
}

#[test]
fn kill_9_at_random_points_loses_nothing_and_applies_nothing_twice() {
    harness(None);
}

#[test]
fn kill_9_at_random_points_loses_nothing_and_applies_nothing_twice_on_postgresql() {
    let Some(url) = support::fresh_postgres("crash") else {
        return;
    };
    harness(Some(url));
}

fn harness(store: Option<String>) {
    let seed = std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_c0de_2026_u64);
    let mut h = Harness::new(seed, store.as_deref());
    let mut tracks: Vec<Track> = Vec::new();

    for n in 0..EXECUTIONS {
        let run = format!("r{n}");
        let file = h.home.join("programs").join(format!("{run}.js"));
        std::fs::write(&file, program(&run)).unwrap();
        let mut track = Track::default();
        let kill = h.maybe(0.35, "run");
        let file_arg = file.to_string_lossy().into_owned();
        track.id = match h.cli(&["run", &file_arg], kill) {
            Ran::Finished { out, .. } => out["executionId"].as_str().map(str::to_owned),
            Ran::Killed => h.find(&format!("\"{run}\"")),
        };
        let Some(id) = track.id.clone() else {
            h.counts.never_recorded += 1;
            tracks.push(track);
            continue;
        };
        // Up to six random decisions, each possibly killed.
        for _ in 0..6 {
            let execution = h.show(&id);
            let status = execution["status"].as_str().unwrap_or_default().to_owned();
            match status.as_str() {
                "paused" => {
                    let seq = pending_seq(&execution).expect("a paused run has a pending call");
                    let roll = h.rng.below(100);
                    if roll < 65 {
                        if seq == 2 {
                            track.record_approvals += 1;
                        }
                        h.counts.approvals += 1;
                        let kill = h.maybe(0.4, "approve");
                        h.cli(&["approve", &id], kill);
                    } else if roll < 75 {
                        let kill = h.maybe(0.3, "reject");
                        h.cli(&["reject", &id, &seq.to_string()], kill);
                    } else if roll < 85 {
                        track.rollback_tried = true;
                        let kill = h.maybe(0.4, "rollback");
                        h.cli(&["rollback", &id], kill);
                    } else {
                        track.left_for_expiry = true;
                        break;
                    }
                }
                "running" => {
                    assert_eq!(
                        execution["interrupted"], true,
                        "{id}: a running run with no live owner: {execution}"
                    );
                    if h.rng.chance(0.7) {
                        h.counts.recovered += 1;
                        let kill = h.maybe(0.3, "recover");
                        h.cli(&["recover", &id], kill);
                    } else {
                        track.left_for_expiry = true;
                        break;
                    }
                }
                "completed" | "error" | "rejected" => {
                    if !h.rng.chance(0.3) {
                        break;
                    }
                    track.rollback_tried = true;
                    let kill = h.maybe(0.4, "rollback");
                    h.cli(&["rollback", &id], kill);
                }
                "rolled_back" => break,
                other => panic!("{id}: invalid status {other:?}"),
            }
        }
        tracks.push(track);
    }

    // Drive every run to an end, with no more kills: approve what is paused, recover what was interrupted,
    // finish rollbacks that were killed; then `expire` reclaims what was left waiting.
    for track in &mut tracks {
        let Some(id) = track.id.clone() else { continue };
        if track.left_for_expiry {
            continue;
        }
        for _ in 0..8 {
            let execution = h.show(&id);
            match execution["status"].as_str().unwrap_or_default() {
                "paused" => {
                    if pending_seq(&execution) == Some(2) {
                        track.record_approvals += 1;
                    }
                    h.counts.approvals += 1;
                    let Ran::Finished { out, .. } = h.cli(&["approve", &id], None) else {
                        unreachable!()
                    };
                    assert!(
                        out["status"].is_string(),
                        "{id}: a paused run is approvable: {out}"
                    );
                }
                "running" => {
                    h.counts.recovered += 1;
                    let Ran::Finished { out, .. } = h.cli(&["recover", &id], None) else {
                        unreachable!()
                    };
                    assert!(
                        out["status"].is_string(),
                        "{id}: an interrupted run is recoverable: {out}"
                    );
                }
                _ if track.rollback_tried => {
                    let Ran::Finished { code, out } = h.cli(&["rollback", &id], None) else {
                        unreachable!()
                    };
                    assert_eq!(code, 0, "{id}: a retried rollback succeeds: {out}");
                    break;
                }
                _ => break,
            }
        }
    }
    let Ran::Finished { out: expired, .. } = h.cli(&["expire", "--max-age", "0s"], None) else {
        unreachable!()
    };
    h.counts.reclaimed_by_expire = expired["expired"].as_array().map_or(0, Vec::len);

    // Invariants, on the effects.
    let effects = h.ledger();
    let inputs = h.inputs();
    let token = |arguments: &Value| arguments["token"].as_str().unwrap_or_default().to_owned();
    let workspace = h.home.join("workspace");
    // Tokens of calls a crash left in doubt, and of calls reverted since (a rollback marks what it reverted,
    // in doubt or not): the host may have died before the server received them.
    let mut in_doubt_tokens = HashSet::new();
    for (n, track) in tracks.iter().enumerate() {
        let run = format!("r{n}");
        let note = effects
            .get(&format!("{run}-0"))
            .copied()
            .unwrap_or_default();
        let record = effects
            .get(&format!("{run}-2"))
            .copied()
            .unwrap_or_default();
        let written = std::fs::read_to_string(workspace.join(format!("{run}.txt"))).ok();
        let sent: Vec<&(String, Value)> = inputs
            .iter()
            .filter(|(tool, arguments)| {
                tool != "erase" && token(arguments).starts_with(&format!("{run}-"))
            })
            .collect();
        let Some(id) = &track.id else {
            assert!(
                sent.is_empty(),
                "{run}: never recorded, yet the server was called: {sent:?}"
            );
            assert_eq!(
                record.applied, 0,
                "{run}: never recorded, yet its gated call was applied"
            );
            assert_eq!(written, None, "{run}: never recorded, yet it wrote");
            continue;
        };
        let execution = h.show(id);
        let status = execution["status"].as_str().unwrap_or_default().to_owned();
        *h.counts.by_status.entry(status.clone()).or_default() += 1;
        assert!(
            ["completed", "error", "rejected", "rolled_back"].contains(&status.as_str()),
            "{run} {id}: still {status} after being driven to an end"
        );
        assert!(
            record.applied <= track.record_approvals,
            "{run} {id}: the gated call was applied {} times for {} approvals",
            record.applied,
            track.record_approvals
        );
        if note.applied > 1 {
            h.counts.ungated_rerun += 1;
        }
        if record.applied > 1 {
            h.counts.gated_reapproved += 1;
        }
        let log = execution["log"].as_array().cloned().unwrap_or_default();
        in_doubt_tokens.extend(
            log.iter()
                .filter(|e| {
                    e["interrupted"] == true
                        || e["state"] == "executing"
                        || e["state"] == "reverted"
                })
                .map(|e| token(&e["args"])),
        );
        // What the server received is what the log recorded (and, for the gated call, what was approved),
        // and every call the log shows applied reached the server with exactly those arguments.
        for (tool, arguments) in &sent {
            let entry = log.iter().find(|e| {
                e["connector"] == "ledger"
                    && e["method"] == tool.as_str()
                    && e["args"] == *arguments
            });
            let entry = entry.unwrap_or_else(|| {
                panic!("{run} {id}: the server received {tool} {arguments}, which no call of the log records: {execution}")
            });
            if tool == "record" {
                assert!(
                    entry["decidedBy"].is_string(),
                    "{run} {id}: the gated record ran undecided: {entry}"
                );
            }
        }
        for entry in log
            .iter()
            .filter(|e| e["connector"] == "ledger" && e["state"] == "applied")
        {
            assert!(
                sent.iter()
                    .any(|(tool, arguments)| entry["method"] == tool.as_str()
                        && entry["args"] == *arguments),
                "{run} {id}: applied, yet the server never received it: {entry}"
            );
        }
        let entry_state = |seq: u64| {
            log.iter()
                .find(|e| e["seq"] == seq)
                .and_then(|e| e["state"].as_str())
                .unwrap_or("absent")
                .to_owned()
        };
        match status.as_str() {
            "rolled_back" => {
                h.counts.in_doubt_rolled_back += log
                    .iter()
                    .filter(|e| e["interrupted"] == true || e["state"] == "executing")
                    .count();
                assert!(
                    !note.present,
                    "{run} {id}: rolled back, yet its note stays applied"
                );
                assert!(
                    !record.present,
                    "{run} {id}: rolled back, yet its record stays applied"
                );
                assert_eq!(written, None, "{run} {id}: rolled back, yet its file stays");
            }
            "completed" => {
                assert_eq!(execution["result"], json!(run), "{run} {id}");
                assert!(
                    record.present,
                    "{run} {id}: completed, yet its record is not in the ledger"
                );
                assert_eq!(
                    written.as_deref(),
                    Some(run.as_str()),
                    "{run} {id}: completed: its file"
                );
            }
            _ => {
                // rejected or error: a call that never became applied has no effect left behind, unless a
                // crash left it in doubt (approved, then the host died applying it: still `executing`, or
                // paused again as interrupted) and the run was then rejected or reclaimed by expiry.
                let in_doubt = log.iter().any(|e| {
                    e["seq"] == 1 && (e["state"] == "executing" || e["interrupted"] == true)
                });
                if entry_state(1) != "applied" && !in_doubt {
                    assert_eq!(
                        written, None,
                        "{run} {id}: {status} before its write, yet it wrote: {execution}"
                    );
                }
                if entry_state(2) == "absent" {
                    assert_eq!(
                        record.applied, 0,
                        "{run} {id}: {status} before its record, yet applied"
                    );
                }
            }
        }
    }
    // Every revert the server received undid a call it had received (applied, or in doubt after a crash),
    // or a call in doubt that the crash cut off before it reached the server: rollback reverts what it cannot
    // know did not happen (docs/design.md, "Approval and rollback"), and such a revert finds nothing to undo.
    for (tool, arguments) in inputs.iter().filter(|(tool, _)| tool == "erase") {
        let received = inputs
            .iter()
            .any(|(other, applied)| other != "erase" && token(applied) == token(arguments));
        assert!(
            received || in_doubt_tokens.contains(&token(arguments)),
            "{tool} {arguments}: reverted a call the server never received and the log never left in doubt"
        );
    }
    let integrity = match &store {
        None => {
            let connection = rusqlite::Connection::open(h.home.join("codemode.db")).unwrap();
            let integrity: String = connection
                .query_row("PRAGMA integrity_check", [], |row| row.get(0))
                .unwrap();
            assert_eq!(integrity, "ok");
            "integrity_check ok"
        }
        Some(url) => {
            // Every kill's open transaction was rolled back whole: no call is logged for a run that is not.
            let orphans = Command::new("psql")
                .args([
                    url.as_str(),
                    "-Atc",
                    "SELECT count(*) FROM cm_log l LEFT JOIN cm_executions e ON e.id = l.execution_id \
                     WHERE e.id IS NULL",
                ])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&orphans.stdout).trim(), "0");
            "no orphan log rows"
        }
    };

    let c = &h.counts;
    println!(
        "crash harness (seed {seed}): {EXECUTIONS} executions, {} codemode processes, killed {:?}; \
         {} runs killed before they were recorded; {} approvals, {} recovers, {} reclaimed by expire; \
         {} ungated notes re-run after a crash, {} gated records applied again after a second approval; \
         {} calls left in doubt by a crash in runs rolled back since; final statuses {:?}; {} ({})",
        c.invocations,
        c.killed,
        c.never_recorded,
        c.approvals,
        c.recovered,
        c.reclaimed_by_expire,
        c.ungated_rerun,
        c.gated_reapproved,
        c.in_doubt_rolled_back,
        c.by_status,
        integrity,
        if store.is_some() {
            "PostgreSQL"
        } else {
            "SQLite"
        }
    );
    let _ = std::fs::remove_dir_all(&h.home);
}
