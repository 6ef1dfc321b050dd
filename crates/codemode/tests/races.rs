//! Two processes on one database file, racing to decide the same paused run: 200 rounds of approve/approve
//! and 200 of approve/reject. Exactly one decision wins each round, and the approved call's effect — counted
//! in a file both processes append to, not in the log — happens at most once, and exactly once when an
//! approval won.

mod support;

use codemode::{Actor, BoxFuture, CallContext, Connector, Runtime, RuntimeOptions, ToolDescriptor};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;

/// An approval-gated write whose effect is a line appended to a file shared by every process.
struct Ledger {
    effects: PathBuf,
}

impl Connector for Ledger {
    fn name(&self) -> &str {
        "ledger"
    }
    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        Box::pin(async {
            Ok(vec![ToolDescriptor {
                name: "write".into(),
                requires_approval: true,
                ..Default::default()
            }])
        })
    }
    fn execute<'a>(
        &'a self,
        _: &'a str,
        _: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.effects)
                .map_err(|e| e.to_string())?;
            writeln!(file, "{} {}", ctx.execution_id, ctx.seq).map_err(|e| e.to_string())?;
            Ok(Some(json!({"written": true})))
        })
    }
}

async fn open(db: &Path, effects: &Path) -> Runtime {
    let options = RuntimeOptions {
        worker: Some(support::worker_path()),
        keep_warm: true,
        ..RuntimeOptions::default()
    };
    let ledger: Arc<dyn Connector> = Arc::new(Ledger {
        effects: effects.to_owned(),
    });
    Runtime::open(db, options, vec![ledger])
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
    let runtime = tokio.block_on(open(Path::new(&db), Path::new(&effects)));
    let stdout = std::io::stdout();
    println!("ready");
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("command");
        let parts: Vec<&str> = line.split_whitespace().collect();
        let answer = match parts.as_slice() {
            ["approve", id] => {
                let outcome = tokio
                    .block_on(runtime.approve(id, Actor::Api))
                    .expect("approve");
                serde_json::to_value(&outcome).expect("json")
            }
            ["reject", id, seq] => {
                let rejected = tokio
                    .block_on(runtime.reject(id, seq.parse().expect("seq"), Actor::Cli))
                    .expect("reject");
                json!({"rejected": rejected})
            }
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
    fn start(db: &Path, effects: &Path) -> Peer {
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

fn effects_of(effects: &Path, id: &str) -> usize {
    std::fs::read_to_string(effects)
        .unwrap_or_default()
        .lines()
        .filter(|line| line.split_whitespace().next() == Some(id))
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_processes_racing_to_decide_never_both_win() {
    let dir = std::env::temp_dir().join(format!("codemode-race-{}", uuid::Uuid::new_v4()));
    let db = dir.join("codemode.db");
    let effects = dir.join("effects.log");
    let runtime = open(&db, &effects).await;
    let mut a = Peer::start(&db, &effects);
    let mut b = Peer::start(&db, &effects);
    let rounds = 200;
    let (mut double_approvals, mut approve_won, mut reject_won) = (0, 0, 0);
    for round in 0..rounds * 2 {
        let paused = runtime
            .execute("async () => (await ledger.write({ n: 1 })).written")
            .await
            .expect("execute");
        let id = paused.execution_id().to_owned();
        let with_reject = round >= rounds;
        a.send(&format!("approve {id}"));
        if with_reject {
            b.send(&format!("reject {id} 0"));
        } else {
            b.send(&format!("approve {id}"));
        }
        let (first, second) = (a.answer(), b.answer());
        let first_won = first["status"] == "completed";
        let effects_here = effects_of(&effects, &id);
        if with_reject {
            let second_won = second["rejected"] == true;
            assert!(
                first_won ^ second_won,
                "round {round}: exactly one winner: {first} / {second}"
            );
            if first_won {
                approve_won += 1;
            } else {
                reject_won += 1;
                assert!(
                    first["error"]
                        .as_str()
                        .unwrap()
                        .contains("is not paused (status: rejected)"),
                    "{first}"
                );
            }
            assert_eq!(
                effects_here,
                usize::from(first_won),
                "round {round}: effect count"
            );
        } else {
            let second_won = second["status"] == "completed";
            assert!(
                first_won ^ second_won,
                "round {round}: exactly one winner: {first} / {second}"
            );
            let loser = if first_won { &second } else { &first };
            assert!(
                loser["error"].as_str().unwrap().contains("is not paused"),
                "{loser}"
            );
            assert_eq!(effects_here, 1, "round {round}: applied exactly once");
            double_approvals += 1;
        }
    }
    println!(
        "races: {double_approvals} approve/approve rounds with one winner each; approve/reject: approve won {approve_won}, reject won {reject_won}"
    );
    let total_effects = std::fs::read_to_string(&effects)
        .unwrap_or_default()
        .lines()
        .count();
    assert_eq!(total_effects, double_approvals + approve_won);
}
