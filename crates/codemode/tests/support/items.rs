//! The reference's `items` fixture connector: logged reads, a re-executed read, binary and oversized results,
//! an approval-gated revertible write, a throwing method, a revertible write without approval, and hooks that
//! record what they saw.

use codemode::{BoxFuture, CallContext, Connector, ExecutionStatus, Replay, ToolDescriptor};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

#[derive(Default, Debug)]
pub struct ItemsState {
    pub items: Vec<Value>,
    pub notes: Vec<String>,
    pub deleted: Vec<Value>,
    pub list_calls: usize,
    pub reads: usize,
    pub sessions: Vec<(String, u64)>,
    pub disposes: Vec<(String, ExecutionStatus)>,
    pub pass_ends: Vec<(String, ExecutionStatus)>,
    pub forgotten: Vec<String>,
}

#[derive(Default)]
pub struct Items {
    pub state: Mutex<ItemsState>,
}

impl Items {
    pub fn new() -> Arc<Self> {
        Arc::new(Items::default())
    }

    pub fn with<T>(&self, f: impl FnOnce(&mut ItemsState) -> T) -> T {
        f(&mut self.state.lock().expect("items state"))
    }
}

fn tool(name: &str) -> ToolDescriptor {
    ToolDescriptor {
        name: name.to_owned(),
        description: Some(format!("items {name}")),
        ..ToolDescriptor::default()
    }
}

impl Connector for Items {
    fn name(&self) -> &str {
        "items"
    }

    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        Box::pin(async {
            Ok(vec![
                tool("list_items"),
                ToolDescriptor {
                    replay: Replay::Reexecute,
                    ..tool("read_counter")
                },
                tool("get_bytes"),
                tool("big_result"),
                tool("session_id"),
                ToolDescriptor {
                    requires_approval: true,
                    revertible: true,
                    ..tool("create_item")
                },
                tool("boom"),
                ToolDescriptor {
                    revertible: true,
                    ..tool("add_note")
                },
                ToolDescriptor {
                    hidden: true,
                    ..tool("secret")
                },
                ToolDescriptor {
                    revertible: true,
                    ..tool("fragile")
                },
                ToolDescriptor {
                    revertible: true,
                    ..tool("stuck")
                },
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
            let args = args.unwrap_or(Value::Null);
            self.with(|s| match method {
                "list_items" => {
                    s.list_calls += 1;
                    Ok(Some(Value::Array(s.items.clone())))
                }
                "read_counter" => {
                    s.reads += 1;
                    Ok(Some(json!({"reads": s.reads})))
                }
                "get_bytes" => Ok(Some(
                    json!({"__codemode_binary_v1__": "Uint8Array", "data": "AQIDBAU="}),
                )),
                "big_result" => Ok(Some(Value::String("x".repeat(1_100_000)))),
                "session_id" => {
                    s.sessions.push((ctx.execution_id.clone(), ctx.seq));
                    Ok(Some(Value::String(ctx.execution_id.clone())))
                }
                "create_item" => {
                    let item = json!({"id": s.items.len() + 1, "title": args["title"]});
                    s.items.push(item.clone());
                    Ok(Some(item))
                }
                "boom" => Err("connector boom".to_owned()),
                "fragile" | "stuck" => Ok(Some(json!({"ok": true}))),
                "add_note" => {
                    s.notes
                        .push(args["text"].as_str().unwrap_or_default().to_owned());
                    Ok(Some(json!({"index": s.notes.len() - 1})))
                }
                other => Err(format!("Tool \"{other}\" not found on items")),
            })
        })
    }

    fn revert<'a>(
        &'a self,
        method: &'a str,
        _args: Option<Value>,
        result: Option<Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            if method == "stuck" {
                tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            }
            let result = result.unwrap_or(Value::Null);
            self.with(|s| match method {
                "create_item" => {
                    s.items.retain(|item| item["id"] != result["id"]);
                    s.deleted.push(result);
                    Ok(true)
                }
                "add_note" => {
                    if let Some(index) = result["index"].as_u64()
                        && let Some(note) = s.notes.get_mut(index as usize)
                    {
                        *note = "__reverted__".to_owned();
                    }
                    Ok(true)
                }
                "fragile" => Err("revert boom".to_owned()),
                _ => Ok(false),
            })
        })
    }

    fn on_pass_end<'a>(
        &'a self,
        execution_id: &'a str,
        status: ExecutionStatus,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move { self.with(|s| s.pass_ends.push((execution_id.to_owned(), status))) })
    }

    fn forget_execution<'a>(&'a self, execution_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move { self.with(|s| s.forgotten.push(execution_id.to_owned())) })
    }

    fn dispose_execution<'a>(
        &'a self,
        execution_id: &'a str,
        status: ExecutionStatus,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move { self.with(|s| s.disposes.push((execution_id.to_owned(), status))) })
    }
}
