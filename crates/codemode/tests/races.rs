//! Two processes on one database file, racing over the same paused run, 500 rounds of each pair:
//! approve/approve, approve/reject, reject/expire and rollback/approve. Exactly one decision wins each round,
//! and the effects — lines in a file both processes append to, not the log — happen at most once: an approved
//! write exactly once when an approval won, and a rolled-back run keeps none of its effects.

mod support;

use codemode::RefusalKind;
use codemode::{
    Actor, BoxFuture, CallContext, Clock, Connector, Runtime, RuntimeOptions, SystemClock,
    ToolDescriptor,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;

/// `ledger.note` (ungated) and `ledger.write` (approval-gated): each effect is a line `apply <id> <seq>`
/// appended to a file shared by every process; a revert appends `revert <id> <seq>`.
struct Ledger {
    effects: PathBuf,
}

impl Ledger {
    fn append(&self, what: &str, ctx: &CallContext) -> Result<(), String> {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.effects)
            .map_err(|e| e.to_string())?;
        writeln!(file, "{what} {} {}", ctx.execution_id, ctx.seq).map_err(|e| e.to_string())
    }
}

impl Connector for Ledger {
    fn name(&self) -> &str {
        "ledger"
    }
    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        Box::pin(async {
            Ok(vec![
                ToolDescriptor {
                    name: "note".into(),
                    revertible: true,
                    ..Default::default()
                },
                ToolDescriptor {
                    name: "write".into(),
                    requires_approval: true,
                    revertible: true,
                    ..Default::default()
                },
            ])
        })
    }
    fn execute<'a>(
        &'a self,
        _: &'a str,
        _: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            self.append("apply", &ctx)?;
            Ok(Some(json!({"written": true})))
        })
    }
    fn revert<'a>(
        &'a self,
        _: &'a str,
        _: Option<Value>,
        _: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            self.append("revert", &ctx)?;
            Ok(true)
        })
    }
}

/// A clock `offset_ms` ahead of the wall clock: the peer told to expire sees every paused run as stale.
struct AheadClock(i64);

impl Clock for AheadClock {
    fn now_ms(&self) -> i64 {
        SystemClock.now_ms() + self.0
    }
}

async fn open(db: &Path, effects: &Path, clock_ahead_ms: i64) -> Runtime {
    let options = RuntimeOptions {
        worker: Some(support::worker_path()),
        keep_warm: true,
        max_executions: 10_000,
        clock: Arc::new(AheadClock(clock_ahead_ms)),
        ..RuntimeOptions::default()
    };
    let ledger: Arc<dyn Connector> = Arc::new(Ledger {
        effects: effects.to_owned(),
    });
    Runtime::open(support::store_at(db), options, vec![ledger])
        .await
        .expect("runtime opens")
}

/// The peer process: decides what it is told on stdin, one JSON answer per line.
#[test]
#[ignore = "helper process for the race tests, started by them"]
fn race_peer() {
    let (Some(db), Some(effects)) = (
        std::env::var_os("RACE_DB"),
        std::env::var_os("RACE_EFFECTS"),
    ) else {
        return;
    };
    let tokio = tokio::runtime::Runtime::new().expect("tokio");
    let ahead = std::env::var("RACE_CLOCK_AHEAD_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let runtime = tokio.block_on(open(Path::new(&db), Path::new(&effects), ahead));
    let stdout = std::io::stdout();
    println!("ready");
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("command");
        let parts: Vec<&str> = line.split_whitespace().collect();
        let answer = match parts.as_slice() {
            // A refused decision (the run is no longer paused) is the race's loser: its message, as an error.
            ["approve", id] => match tokio.block_on(runtime.approve(id, Actor::Api, None)) {
                Ok(outcome) => serde_json::to_value(&outcome).expect("json"),
                Err(error) if error.refusal() == Some(RefusalKind::Stale) => {
                    json!({"status": "error", "error": error.to_string()})
                }
                Err(other) => panic!("approve: {other}"),
            },
            ["reject", id, seq] => {
                let seq = seq.parse().expect("seq");
                match tokio.block_on(runtime.reject(id, seq, Actor::Cli, None)) {
                    Ok(()) => json!({"rejected": true}),
                    Err(error) if error.refusal() == Some(RefusalKind::Stale) => {
                        json!({"rejected": false, "error": error.to_string()})
                    }
                    Err(other) => panic!("reject: {other}"),
                }
            }
            ["expire"] => {
                let expired = tokio
                    .block_on(runtime.expire_paused(std::time::Duration::ZERO))
                    .expect("expire");
                json!({"expired": expired})
            }
            ["rollback", id] => match tokio.block_on(runtime.rollback(id)) {
                Ok(report) => serde_json::to_value(&report).expect("json"),
                Err(error) if error.refusal() == Some(RefusalKind::Busy) => {
                    json!({"busy": error.to_string()})
                }
                Err(other) => panic!("rollback: {other}"),
            },
            _ => json!({"unknown": line}),
        };
        let mut out = stdout.lock();
        writeln!(out, "{answer}").expect("answer");
        out.flush().expect("flush");
    }
}

struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Peer {
    fn start(db: &Path, effects: &Path, clock_ahead_ms: i64) -> Peer {
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "race_peer",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("RACE_DB", db)
            .env("RACE_EFFECTS", effects)
            .env("RACE_CLOCK_AHEAD_MS", clock_ahead_ms.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("peer starts");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        while !line.trim_end().ends_with("ready") {
            line.clear();
            assert!(
                stdout.read_line(&mut line).expect("peer output") > 0,
                "peer exited before ready"
            );
        }
        Peer {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").expect("command");
        self.stdin.flush().expect("flush");
    }

    fn answer(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("answer");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("peer answered {line:?}: {e}"))
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Per seq of one execution: (applies, reverts) counted in the shared effects file.
fn effects_of(effects: &Path, id: &str) -> BTreeMap<u64, (usize, usize)> {
    let mut counts = BTreeMap::new();
    for line in std::fs::read_to_string(effects).unwrap_or_default().lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let [what, line_id, seq] = parts.as_slice()
            && *line_id == id
        {
            let entry: &mut (usize, usize) = counts.entry(seq.parse().expect("seq")).or_default();
            if *what == "apply" {
                entry.0 += 1;
            } else {
                entry.1 += 1;
            }
        }
    }
    counts
}

const ROUNDS: usize = 500;
const GATED: &str = "async () => (await ledger.write({ n: 1 })).written";
const NOTE_THEN_GATED: &str =
    "async () => { await ledger.note({ n: 0 }); return (await ledger.write({ n: 1 })).written; }";

struct Race {
    runtime: Runtime,
    a: Peer,
    b: Peer,
    effects: PathBuf,
}

impl Race {
    /// Peer `b`'s clock runs an hour ahead, so its `expire` finds every paused run stale.
    async fn start() -> Race {
        let dir = std::env::temp_dir().join(format!("codemode-race-{}", uuid::Uuid::new_v4()));
        let db = dir.join("codemode.db");
        let effects = dir.join("effects.log");
        let runtime = open(&db, &effects, 0).await;
        let a = Peer::start(&db, &effects, 0);
        let b = Peer::start(&db, &effects, 3_600_000);
        Race {
            runtime,
            a,
            b,
            effects,
        }
    }

    async fn paused(&self, code: &str) -> String {
        let outcome = self.runtime.execute(code).await.expect("execute");
        assert_eq!(serde_json::to_value(&outcome).unwrap()["status"], "paused");
        outcome.execution_id().to_owned()
    }

    fn both(&mut self, a: &str, b: &str) -> (Value, Value) {
        self.a.send(a);
        self.b.send(b);
        (self.a.answer(), self.b.answer())
    }

    fn effects(&self, id: &str) -> BTreeMap<u64, (usize, usize)> {
        effects_of(&self.effects, id)
    }
}

fn error_of(outcome: &Value) -> &str {
    outcome["error"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_against_approve_applies_once() {
    let mut race = Race::start().await;
    for round in 0..ROUNDS {
        let id = race.paused(GATED).await;
        let (first, second) = race.both(&format!("approve {id}"), &format!("approve {id}"));
        let (first_won, second_won) = (
            first["status"] == "completed",
            second["status"] == "completed",
        );
        assert!(
            first_won ^ second_won,
            "round {round}: one winner: {first} / {second}"
        );
        let loser = if first_won { &second } else { &first };
        assert!(error_of(loser).contains("is not paused"), "{loser}");
        assert_eq!(race.effects(&id).get(&0), Some(&(1, 0)), "round {round}");
    }
    println!("races: approve/approve: {ROUNDS} rounds, one winner and one effect each");
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_against_reject_has_one_winner() {
    let mut race = Race::start().await;
    let (mut approve_won, mut reject_won) = (0, 0);
    for round in 0..ROUNDS {
        let id = race.paused(GATED).await;
        let (first, second) = race.both(&format!("approve {id}"), &format!("reject {id} 0"));
        let approved = first["status"] == "completed";
        let rejected = second["rejected"] == true;
        assert!(
            approved ^ rejected,
            "round {round}: one winner: {first} / {second}"
        );
        if rejected {
            assert!(
                error_of(&first).contains("is not paused (status: rejected)"),
                "{first}"
            );
            reject_won += 1;
        } else {
            approve_won += 1;
        }
        let applied = race.effects(&id).get(&0).map_or(0, |e| e.0);
        assert_eq!(applied, usize::from(approved), "round {round}");
    }
    println!(
        "races: approve/reject: {ROUNDS} rounds, approve won {approve_won}, reject won {reject_won}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn reject_against_expire_has_one_winner() {
    let mut race = Race::start().await;
    let (mut reject_won, mut expire_won) = (0, 0);
    for round in 0..ROUNDS {
        let id = race.paused(GATED).await;
        let (first, second) = race.both(&format!("reject {id} 0"), "expire");
        let rejected = first["rejected"] == true;
        let expired = second["expired"]
            .as_array()
            .is_some_and(|ids| ids.iter().any(|e| e == id.as_str()));
        assert!(
            rejected ^ expired,
            "round {round}: one winner: {first} / {second}"
        );
        let execution = race.runtime.execution(&id).expect("read").expect("exists");
        let error = execution.error.unwrap_or_default();
        if rejected {
            reject_won += 1;
            assert_eq!(error, "Action ledger.write rejected by user");
        } else {
            expire_won += 1;
            assert_eq!(error, "Expired awaiting approval");
        }
        assert!(
            race.effects(&id).is_empty(),
            "round {round}: nothing applied"
        );
    }
    println!(
        "races: reject/expire: {ROUNDS} rounds, reject won {reject_won}, expire won {expire_won}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rollback_against_approve_never_leaves_an_effect_in_a_rolled_back_run() {
    let mut race = Race::start().await;
    let (mut rolled_back_first, mut approved_then_rolled_back, mut refused_while_running) =
        (0, 0, 0);
    for round in 0..ROUNDS {
        let id = race.paused(NOTE_THEN_GATED).await;
        let (approve, rollback) = race.both(&format!("approve {id}"), &format!("rollback {id}"));
        let effects = race.effects(&id);
        let status = race
            .runtime
            .execution(&id)
            .expect("read")
            .expect("exists")
            .status;
        let status = serde_json::to_value(status).unwrap();
        for (seq, (applied, reverted)) in &effects {
            assert!(
                *applied <= 1 && reverted <= applied,
                "round {round}: seq {seq}: {effects:?}"
            );
        }
        let write = effects.get(&1).copied().unwrap_or_default();
        if approve["status"] == "completed" {
            assert_eq!(write.0, 1, "round {round}: the approved write applied once");
            if rollback.get("busy").is_some() {
                refused_while_running += 1;
                assert_eq!(status, "completed", "round {round}");
                assert!(
                    rollback["busy"]
                        .as_str()
                        .unwrap()
                        .contains("once its pass ends"),
                    "{rollback}"
                );
            } else {
                approved_then_rolled_back += 1;
                assert_eq!(status, "rolled_back", "round {round}");
            }
        } else {
            rolled_back_first += 1;
            assert!(
                error_of(&approve).contains("is being rolled back")
                    || error_of(&approve).contains("is not paused (status: rolled_back)"),
                "round {round}: {approve}"
            );
            assert_eq!(write.0, 0, "round {round}: the write never ran");
            assert_eq!(status, "rolled_back", "round {round}");
        }
        if status == "rolled_back" {
            for (seq, (applied, reverted)) in &effects {
                assert_eq!(
                    applied, reverted,
                    "round {round}: seq {seq} left applied: {effects:?}"
                );
            }
        }
    }
    println!(
        "races: rollback/approve: {ROUNDS} rounds; rollback first {rolled_back_first}, approve then rollback {approved_then_rolled_back}, rollback refused while the pass ran {refused_while_running}"
    );
}
