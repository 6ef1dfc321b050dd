//! A connector that keeps its own ledger of every input it received and every revert it was asked for, so
//! tests can compare what a connector really saw with what the log says was approved, applied and reverted.

use codemode::{BoxFuture, CallContext, Connector, Replay, ToolDescriptor};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// A database path in a fresh temporary folder.
pub fn temp_db() -> std::path::PathBuf {
    std::env::temp_dir()
        .join(format!("codemode-ledger-{}", uuid::Uuid::new_v4()))
        .join("codemode.db")
}

/// One input the connector received.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    pub execution_id: String,
    pub seq: u64,
    pub method: String,
    pub args: Option<Value>,
}

#[derive(Default, Debug)]
pub struct LedgerState {
    /// Every `execute`, in order.
    pub received: Vec<Received>,
    /// Every `revert`, in order: (execution id, seq, method).
    pub reverted: Vec<(String, u64, String)>,
    /// The arguments each revert was given, in the same order.
    pub reverted_args: Vec<Option<Value>>,
    /// Named entities (`create` / `remove`), as a server's store.
    pub entities: BTreeMap<String, Value>,
    /// Payments applied by `pay` and `charge` (their effect happens before they fail).
    pub payments: Vec<Value>,
    /// What the re-executed `mode` read returns; tests change it between passes.
    pub mode: Value,
    /// Characters of padding in the next `write` / `read` result (then back to none): a result whose record
    /// must grow the database.
    pub pad_next_result: usize,
}

/// Methods:
/// - `write` (approval, revertible): records its input, returns `{ok: true}`.
/// - `pay` (approval, revertible): applies a payment, then fails (a call timeout after the effect).
/// - `charge` (no approval, revertible): applies a payment, then fails (an `isError` after the effect).
/// - `create` (no approval, revertible): creates `{name}`; refused when it exists (a validation error).
/// - `mode` (re-executed read): the value tests set, read again on every pass.
/// - `read` (logged read): `{ok: true}`.
/// - `hold` (logged read): waits until the test opens the gate, so a pass stays live as long as a test needs.
pub struct Ledger {
    pub state: Mutex<LedgerState>,
    /// Permits for `hold`: one a call.
    pub gate: tokio::sync::Semaphore,
    /// Run once, right after the next effect (before the runtime can record it): how a test fails the store
    /// between a connector acting and its record.
    pub after_effect: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl Ledger {
    pub fn new() -> Arc<Self> {
        Arc::new(Ledger {
            state: Mutex::default(),
            gate: tokio::sync::Semaphore::new(0),
            after_effect: Mutex::default(),
        })
    }

    /// Whether a `hold` call has been received (and so is waiting at the gate, until opened).
    pub fn holding(&self) -> bool {
        self.with(|s| s.received.iter().any(|r| r.method == "hold"))
    }

    pub fn with<T>(&self, f: impl FnOnce(&mut LedgerState) -> T) -> T {
        f(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// A runtime over a fresh database in a temporary folder, with this ledger as its connector.
    pub async fn runtime(self: &Arc<Self>) -> codemode::Runtime {
        self.runtime_with(Arc::new(codemode::SystemClock)).await
    }

    /// The same, on `clock`.
    pub async fn runtime_with(
        self: &Arc<Self>,
        clock: Arc<dyn codemode::Clock>,
    ) -> codemode::Runtime {
        self.runtime_at(&temp_db(), clock).await
    }

    /// A runtime over `db`, with this ledger as its connector.
    pub async fn runtime_at(
        self: &Arc<Self>,
        db: &std::path::Path,
        clock: Arc<dyn codemode::Clock>,
    ) -> codemode::Runtime {
        let options = codemode::RuntimeOptions {
            worker: Some(super::worker_path()),
            clock,
            ..codemode::RuntimeOptions::default()
        };
        let connectors: Vec<Arc<dyn Connector>> = vec![self.clone()];
        codemode::Runtime::open(super::store_at(db), options, connectors)
            .await
            .expect("runtime opens")
    }

    /// Inputs received for one execution.
    pub fn received_by(&self, execution_id: &str) -> Vec<Received> {
        self.with(|s| {
            s.received
                .iter()
                .filter(|r| r.execution_id == execution_id)
                .cloned()
                .collect()
        })
    }
}

fn tool(name: &str) -> ToolDescriptor {
    ToolDescriptor {
        name: name.to_owned(),
        description: Some(format!("ledger {name}")),
        ..ToolDescriptor::default()
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
                    requires_approval: true,
                    revertible: true,
                    input_schema: Some(json!({
                        "type": "object",
                        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                        "required": ["path"]
                    })),
                    ..tool("write")
                },
                ToolDescriptor {
                    requires_approval: true,
                    revertible: true,
                    ..tool("pay")
                },
                ToolDescriptor {
                    revertible: true,
                    ..tool("charge")
                },
                ToolDescriptor {
                    revertible: true,
                    ..tool("create")
                },
                ToolDescriptor {
                    replay: Replay::Reexecute,
                    ..tool("mode")
                },
                tool("read"),
                tool("hold"),
            ])
        })
    }

    fn execute<'a>(
        &'a self,
        method: &'a str,
        args: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            self.with(|s| {
                s.received.push(Received {
                    execution_id: ctx.execution_id.clone(),
                    seq: ctx.seq,
                    method: method.to_owned(),
                    args: args.clone(),
                })
            });
            if method == "hold" {
                let permit = self.gate.acquire().await.map_err(|e| e.to_string())?;
                permit.forget();
                return Ok(Some(json!({"held": true})));
            }
            let answer = self.with(|s| match method {
                "write" | "read" => Ok(Some(match std::mem::take(&mut s.pad_next_result) {
                    0 => json!({"ok": true}),
                    pad => json!({"ok": true, "pad": "x".repeat(pad)}),
                })),
                "pay" => {
                    s.payments.push(args.clone().unwrap_or(Value::Null));
                    Err("ledger.pay timed out after 1000 ms".to_owned())
                }
                "charge" => {
                    s.payments.push(args.clone().unwrap_or(Value::Null));
                    Err("charge failed: upstream returned 502".to_owned())
                }
                "create" => {
                    let name = args
                        .as_ref()
                        .and_then(|a| a["name"].as_str())
                        .unwrap_or_default()
                        .to_owned();
                    if s.entities.contains_key(&name) {
                        return Err(format!("Entity with name {name} already exists"));
                    }
                    s.entities
                        .insert(name.clone(), json!({"by": ctx.execution_id}));
                    Ok(Some(json!({"name": name})))
                }
                "mode" => Ok(Some(s.mode.clone())),
                other => Err(format!("Tool \"{other}\" not found on ledger")),
            });
            if method != "mode" {
                let hook = self
                    .after_effect
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take();
                if let Some(hook) = hook {
                    hook();
                }
            }
            answer
        })
    }

    fn revert<'a>(
        &'a self,
        method: &'a str,
        args: Option<Value>,
        _result: Option<Value>,
        ctx: CallContext,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            if !matches!(method, "write" | "pay" | "charge" | "create") {
                return Ok(false);
            }
            self.with(|s| {
                s.reverted
                    .push((ctx.execution_id.clone(), ctx.seq, method.to_owned()));
                s.reverted_args.push(args.clone());
                if method == "create"
                    && let Some(name) = args.as_ref().and_then(|a| a["name"].as_str())
                {
                    s.entities.remove(name);
                }
                Ok(true)
            })
        })
    }
}
