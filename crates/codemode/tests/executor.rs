//! Golden tests for one sandboxed pass: each folder under `tests/executor/` holds `program.js` beside
//! `expected.json` — the outcome (`status`, `result`, `logs`, `error` or `errorContains`), optionally the
//! host's transcript of calls (`calls`), a replay log to start from (`replayLog`), snippets, and limits.
//! The `hostile-*` folders are the hostile-code corpus: each must end as a clean outcome with the host alive.

mod support;

use codemode::protocol::ReplayEntry;
use serde_json::Value;
use std::time::{Duration, Instant};
use support::{ItemsHost, executor, run};

#[test]
fn passes_match_the_golden_files() {
    let cases = support::case_dirs("executor");
    let only = std::env::var("CASE").ok();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in &cases {
        let name = case
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if only.as_deref().is_some_and(|only| !name.contains(only)) {
            continue;
        }
        let program = std::fs::read_to_string(case.join("program.js")).expect("program.js");
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(case.join("expected.json")).expect("expected.json"),
        )
        .unwrap_or_else(|e| panic!("{name}/expected.json: {e}"));
        let timeout = Duration::from_millis(expected["timeoutMs"].as_u64().unwrap_or(10_000));
        let memory = expected["memoryLimitMb"].as_u64().unwrap_or(512);
        let executor = executor(timeout, memory);
        let log: Vec<ReplayEntry> =
            serde_json::from_value(expected["replayLog"].clone()).unwrap_or_default();
        let mut host = ItemsHost::default();
        if let Some(snippets) = expected["snippets"].as_object() {
            for (k, v) in snippets {
                host.snippets
                    .insert(k.clone(), v.as_str().unwrap_or_default().to_owned());
            }
        }
        let started = Instant::now();
        let (actual, outcome) = run(&executor, &program, log, &mut host);
        ran += 1;
        if std::env::var_os("CASE_TIMES").is_some() {
            eprintln!("{:>8.1?}  {name}", started.elapsed());
        }
        let mut problems = Vec::new();
        if actual["status"] != expected["status"] {
            problems.push(format!(
                "status {} (expected {})",
                actual["status"], expected["status"]
            ));
        }
        if let Some(result) = expected.get("result") {
            if actual.get("result") != Some(result) {
                problems.push(format!(
                    "result {:?} (expected {result})",
                    actual.get("result")
                ));
            }
        } else if expected["status"] == "completed" && actual.get("result").is_some() {
            problems.push(format!("result {} (expected undefined)", actual["result"]));
        }
        for key in ["logs", "error", "resultError"] {
            if let Some(want) = expected.get(key)
                && actual.get(key) != Some(want)
            {
                problems.push(format!("{key} {:?} (expected {want})", actual.get(key)));
            }
        }
        if let Some(want) = expected["errorContains"].as_str() {
            let error = actual["error"].as_str().unwrap_or_default();
            if !error.contains(want) {
                problems.push(format!("error {error:?} lacks {want:?}"));
            }
        }
        if let Some(calls) = expected.get("calls")
            && &Value::Array(host.transcript.clone()) != calls
        {
            problems.push(format!(
                "calls {} (expected {calls})",
                Value::Array(host.transcript.clone())
            ));
        }
        if let Some(replayed) = expected["replayed"].as_u64()
            && outcome.replayed != replayed
        {
            problems.push(format!(
                "replayed {} (expected {replayed})",
                outcome.replayed
            ));
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{name} ({:?}): {}",
                started.elapsed(),
                problems.join("; ")
            ));
        }
    }
    assert!(ran > 0, "no case ran");
    // The host outlived every hostile program and can still run one.
    let (after, _) = run(
        &executor(Duration::from_secs(10), 512),
        "1 + 1",
        Vec::new(),
        &mut ItemsHost::default(),
    );
    assert_eq!(after["result"], 2);
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
