//! Executor benchmark: per-pass time for N sequential awaited calls to an in-memory echo connector — fresh
//! (each call answered by the host over the pipe) and replayed (each call served from the log inside the
//! worker) — beside `node` running the same program with an in-process echo, plus the host round trip and a
//! short pass on a warm worker. Prints a table; never asserts a time.
//!
//! `cargo bench -p codemode --bench executor` (builds the worker in release first).

use codemode::protocol::{ReplayEntry, raw};
use codemode::{
    CallAnswer, ConnectorCall, Executor, ExecutorOptions, PassEnd, PassHost, PassRequest,
    SnippetAnswer, StepAnswer,
};
use serde_json::json;
use serde_json::value::RawValue;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

struct Echo;

impl PassHost for Echo {
    fn call(&mut self, call: ConnectorCall) -> CallAnswer {
        CallAnswer::Value(call.args)
    }
    fn step_decide(&mut self, _: u64, _: &str) -> StepAnswer {
        StepAnswer::Execute
    }
    fn step_record(&mut self, _: u64, _: Result<Option<Box<RawValue>>, String>) -> bool {
        true
    }
    fn search(&mut self, _: &str) -> Result<Box<RawValue>, String> {
        Ok(raw(&json!({"results": []})))
    }
    fn describe(&mut self, _: &str) -> Result<Box<RawValue>, String> {
        Ok(raw(&json!({})))
    }
    fn snippet(&mut self, _: &str) -> SnippetAnswer {
        SnippetAnswer::Stop
    }
}

fn program(n: usize) -> String {
    format!(
        "async () => {{ let t = 0; for (let i = 0; i < {n}; i++) t += (await echo.call({{i}})).i; return t; }}"
    )
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// `idle` leaves the worker time to prepare its next context, as it has between an agent's calls.
fn time_pass(executor: &Executor, request: &PassRequest, reps: usize, idle: Duration) -> Duration {
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps + 1 {
        std::thread::sleep(idle);
        let started = Instant::now();
        let outcome = executor.run(request, &mut Echo).expect("worker starts");
        samples.push(started.elapsed());
        assert!(
            matches!(outcome.end, PassEnd::Completed { .. }),
            "{:?}",
            outcome.end
        );
    }
    samples.remove(0); // warm-up
    median(samples)
}

/// Median per-pass time of the same program under node, measured inside node (no process start).
fn node_pass(n: usize, reps: usize) -> Option<Duration> {
    let script = format!(
        "const echo = {{ call: async (a) => a }};\nconst run = {};\nconst s = [];\n(async () => {{ for (let r = 0; r < {}; r++) {{ const t = process.hrtime.bigint(); await run(); s.push(Number(process.hrtime.bigint() - t)); }} s.shift(); s.sort((a, b) => a - b); console.log(s[Math.floor(s.length / 2)]); }})();",
        program(n),
        reps + 1
    );
    let output = Command::new("node").arg("-e").arg(script).output().ok()?;
    let nanos: u64 = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_nanos(nanos))
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn main() {
    let worker = std::env::var_os("CODEMODE_WORKER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_codemode-worker")));
    let executor = Executor::new(ExecutorOptions {
        worker: Some(worker),
        timeout: Duration::from_secs(120),
        keep_warm: true,
        ..ExecutorOptions::default()
    });
    let connectors = vec!["echo".to_owned()];
    let short = PassRequest {
        code: "async () => 1".to_owned(),
        connectors: connectors.clone(),
        log: Vec::new(),
    };
    let warm_short = time_pass(&executor, &short, 200, Duration::from_millis(5));
    let busy_short = time_pass(&executor, &short, 200, Duration::ZERO);

    println!("executor benchmark (median per pass, ms; ratio = ours / node)");
    println!(
        "{:<8} {:>10} {:>10} {:>10} {:>9} {:>9}",
        "N", "fresh", "replayed", "node", "fresh/x", "replay/x"
    );
    let mut rows = Vec::new();
    let mut fresh_1000 = Duration::ZERO;
    let mut replay_1000 = Duration::ZERO;
    for (n, reps) in [(1usize, 100usize), (100, 30), (1000, 9), (10_000, 3)] {
        let fresh_request = PassRequest {
            code: program(n),
            connectors: connectors.clone(),
            log: Vec::new(),
        };
        let replay_request = PassRequest {
            code: program(n),
            connectors: connectors.clone(),
            log: (0..n as u64)
                .map(|i| ReplayEntry {
                    seq: i,
                    connector: "echo".to_owned(),
                    method: "call".to_owned(),
                    args: Some(raw(&json!({"i": i}))),
                    result: Some(raw(&json!({"i": i}))),
                })
                .collect(),
        };
        let fresh = time_pass(&executor, &fresh_request, reps, Duration::ZERO);
        let replayed = time_pass(&executor, &replay_request, reps, Duration::ZERO);
        let node = node_pass(n, reps.max(5));
        if n == 1000 {
            fresh_1000 = fresh;
            replay_1000 = replayed;
        }
        let ratio = |ours: Duration| match node {
            Some(node) if !node.is_zero() => {
                format!("{:.1}", ours.as_secs_f64() / node.as_secs_f64())
            }
            _ => "n/a".to_owned(),
        };
        println!(
            "{:<8} {:>10} {:>10} {:>10} {:>9} {:>9}",
            n,
            ms(fresh),
            ms(replayed),
            node.map(ms).unwrap_or_else(|| "n/a".to_owned()),
            ratio(fresh),
            ratio(replayed)
        );
        rows.push(json!({"n": n, "freshMs": fresh.as_secs_f64() * 1e3, "replayedMs": replayed.as_secs_f64() * 1e3,
            "nodeMs": node.map(|d| d.as_secs_f64() * 1e3)}));
    }
    let round_trip = fresh_1000.saturating_sub(replay_1000) / 1000;
    println!();
    println!(
        "host round trip per fresh call (fresh − replayed at N=1000): {:.1} µs",
        round_trip.as_secs_f64() * 1e6
    );
    println!(
        "short pass (async () => 1) on a warm, idle worker: {} ms",
        ms(warm_short)
    );
    println!(
        "short pass back to back (worker still preparing): {} ms",
        ms(busy_short)
    );
    let report = json!({"rows": rows, "roundTripMicros": round_trip.as_secs_f64() * 1e6, "warmShortPassMs": warm_short.as_secs_f64() * 1e3, "backToBackShortPassMs": busy_short.as_secs_f64() * 1e3});
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench");
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("executor.json"), report.to_string());
    }
}
