//! Runs a program through the sandboxed executor with an in-memory `echo` connector and prints the outcome.
//!
//! `cargo run -p codemode --example run -- program.js` (or `-` / nothing for stdin).
//! Every `echo.<method>(args)` call answers with `{method, args}`; `echo.fail({message})` throws.

use codemode::{
    CallAnswer, ConnectorCall, Executor, ExecutorOptions, PassEnd, PassHost, PassRequest,
    SnippetAnswer, StepAnswer, protocol::raw,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::io::Read;

struct EchoHost;

impl PassHost for EchoHost {
    fn call(&mut self, call: ConnectorCall) -> CallAnswer {
        if let Some(error) = call.args_error {
            return CallAnswer::Error(error);
        }
        let args: Value = call
            .args
            .as_deref()
            .and_then(|a| serde_json::from_str(a.get()).ok())
            .unwrap_or(Value::Null);
        if call.method == "fail" {
            let message = args["message"].as_str().unwrap_or("echo failed").to_owned();
            return CallAnswer::Error(message);
        }
        CallAnswer::Value(Some(raw(&json!({"method": call.method, "args": args}))))
    }
    fn step_decide(&mut self, _seq: u64, _name: &str) -> StepAnswer {
        StepAnswer::Execute
    }
    fn step_record(&mut self, _seq: u64, _value: Result<Option<Box<RawValue>>, String>) -> bool {
        true
    }
    fn search(&mut self, _query: &str) -> Result<Box<RawValue>, String> {
        Ok(raw(&json!({"results": [], "total": 0, "truncated": false})))
    }
    fn describe(&mut self, target: &str) -> Result<Box<RawValue>, String> {
        Ok(raw(
            &json!({"path": target, "types": format!("\"{target}\" not found."), "kind": "method"}),
        ))
    }
    fn snippet(&mut self, name: &str) -> SnippetAnswer {
        SnippetAnswer::Value(raw(
            &json!({"error": format!("Snippet \"{name}\" not found.")}),
        ))
    }
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| "-".to_owned());
    let code = if path == "-" {
        let mut code = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut code) {
            eprintln!("cannot read stdin: {e}");
            std::process::exit(2);
        }
        code
    } else {
        match std::fs::read_to_string(&path) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("cannot read {path}: {e}");
                std::process::exit(2);
            }
        }
    };
    let executor = Executor::new(ExecutorOptions::default());
    let request = PassRequest {
        code,
        connectors: vec!["echo".to_owned()],
        log: Vec::new(),
    };
    let outcome = match executor.run(&request, &mut EchoHost) {
        Ok(outcome) => outcome,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let parse =
        |raw: Option<Box<RawValue>>| raw.and_then(|r| serde_json::from_str::<Value>(r.get()).ok());
    let printed = match outcome.end {
        PassEnd::Completed { result, .. } => {
            json!({"status": "completed", "result": parse(result), "logs": outcome.logs})
        }
        PassEnd::Failed { error } => json!({"status": "error", "error": error}),
        PassEnd::Stopped => json!({"status": "stopped"}),
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&printed).unwrap_or_default()
    );
    if printed["status"] != "completed" {
        std::process::exit(1);
    }
}
