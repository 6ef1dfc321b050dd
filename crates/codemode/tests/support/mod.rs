//! A scripted host for executor tests: an `items` connector whose methods echo, fail, pause, or return
//! binary, plus steps, search, describe and snippets — every request recorded in a transcript.

#![allow(dead_code)]

pub mod isolation;
pub mod items;
pub mod ledger;
pub mod store;

#[allow(unused_imports)]
pub use store::{on_postgres, store_at};

use codemode::protocol::{ReplayEntry, raw};
use codemode::{
    CallAnswer, ConnectorCall, Executor, ExecutorOptions, PassEnd, PassHost, PassOutcome,
    PassRequest, SnippetAnswer, StepAnswer,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The case folders under `tests/<dir>/`, sorted.
pub fn case_dirs(dir: &str) -> Vec<PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(dir);
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    cases.sort();
    cases
}

pub fn worker_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_codemode-worker"))
}

pub fn executor(timeout: Duration, memory_limit_mb: u64) -> Executor {
    Executor::new(ExecutorOptions {
        worker: Some(worker_path()),
        timeout,
        memory_limit_mb,
        keep_warm: false,
    })
}

pub fn parse(raw: Option<&RawValue>) -> Option<Value> {
    raw.and_then(|r| serde_json::from_str(r.get()).ok())
}

#[derive(Default)]
pub struct ItemsHost {
    pub transcript: Vec<Value>,
    pub snippets: BTreeMap<String, String>,
}

impl PassHost for ItemsHost {
    fn call(&mut self, call: ConnectorCall) -> CallAnswer {
        let args = parse(call.args.as_deref());
        let mut entry = Map::new();
        entry.insert("seq".into(), json!(call.seq));
        entry.insert("connector".into(), json!(call.connector));
        entry.insert("method".into(), json!(call.method));
        if let Some(args) = &args {
            entry.insert("args".into(), args.clone());
        }
        if let Some(error) = &call.args_error {
            entry.insert("argsError".into(), json!(error));
            self.transcript.push(Value::Object(entry));
            return CallAnswer::Stop;
        }
        self.transcript.push(Value::Object(entry));
        if call.connector != "items" {
            return CallAnswer::Error(format!(
                "Connector \"{}\" is not configured",
                call.connector
            ));
        }
        match call.method.as_str() {
            "echo" => CallAnswer::Value(args.map(|a| raw(&a))),
            "fail" => CallAnswer::Error(
                args.as_ref()
                    .and_then(|a| a["message"].as_str())
                    .unwrap_or("items failed")
                    .to_owned(),
            ),
            "gate" => CallAnswer::Stop,
            "bytes" => CallAnswer::Value(Some(raw(
                &json!({"__codemode_binary_v1__": "Uint8Array", "data": "AQIDBAU="}),
            ))),
            "count" => CallAnswer::Value(Some(raw(&json!(self.transcript.len())))),
            other => CallAnswer::Error(format!("Tool \"{other}\" not found on items")),
        }
    }

    fn step_decide(&mut self, seq: u64, name: &str) -> StepAnswer {
        self.transcript
            .push(json!({"seq": seq, "connector": "__step", "method": name}));
        StepAnswer::Execute
    }

    fn step_record(&mut self, seq: u64, value: Result<Option<Box<RawValue>>, String>) -> bool {
        match value {
            Ok(value) => {
                self.transcript
                    .push(json!({"seq": seq, "record": parse(value.as_deref())}));
                true
            }
            Err(error) => {
                self.transcript
                    .push(json!({"seq": seq, "recordError": error}));
                false
            }
        }
    }

    fn search(&mut self, query: &str) -> Result<Box<RawValue>, String> {
        Ok(raw(&json!({"query": query})))
    }

    fn describe(&mut self, target: &str) -> Result<Box<RawValue>, String> {
        Ok(raw(&json!({"target": target})))
    }

    fn snippet(&mut self, name: &str) -> SnippetAnswer {
        match self.snippets.get(name) {
            Some(code) => SnippetAnswer::Code(code.clone()),
            None => SnippetAnswer::Value(raw(
                &json!({"error": format!("Snippet \"{name}\" not found.")}),
            )),
        }
    }
}

/// Runs `code` with the `items` connector and returns the outcome as JSON plus the host's transcript.
pub fn run(
    executor: &Executor,
    code: &str,
    log: Vec<ReplayEntry>,
    host: &mut ItemsHost,
) -> (Value, PassOutcome) {
    let request = PassRequest {
        code: code.to_owned(),
        connectors: vec!["items".to_owned()],
        log,
        log_end: None,
    };
    let outcome = executor.run(&request, host).expect("the worker starts");
    let summary = match &outcome.end {
        PassEnd::Completed {
            result,
            result_error,
        } => {
            let mut v = json!({"status": "completed", "logs": outcome.logs});
            if let Some(result) = parse(result.as_deref()) {
                v["result"] = result;
            }
            if let Some(e) = result_error {
                v["resultError"] = json!(e);
            }
            v
        }
        PassEnd::Failed { error } => json!({"status": "error", "error": error}),
        PassEnd::Stopped => json!({"status": "stopped", "logs": outcome.logs}),
    };
    (summary, outcome)
}

/// A clock the test moves by hand.
#[derive(Default)]
pub struct TestClock(pub std::sync::atomic::AtomicI64);

impl TestClock {
    pub fn at(ms: i64) -> std::sync::Arc<Self> {
        std::sync::Arc::new(TestClock(std::sync::atomic::AtomicI64::new(ms)))
    }
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, std::sync::atomic::Ordering::SeqCst);
    }
}

impl codemode::Clock for TestClock {
    fn now_ms(&self) -> i64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}
