//! Calling a server's tools: a method, its preview and its revert, and the answer unwrapped as the reference
//! does.

use super::stderr::with_tail;
use super::{McpConnector, Policy};
use crate::config::render_template;
use crate::remote;
use codemode::names::sanitize_tool_name;
use codemode::{BoxFuture, CallContext, Connector, ToolDescriptor};
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult};
use rmcp::service::ServiceError;
use serde_json::{Map, Value};
use std::sync::atomic::Ordering;
use std::time::Duration;

impl McpConnector {
    /// One `tools/call`, unwrapped as the reference does; `what` names the call in messages.
    async fn call(
        &self,
        method: &str,
        args: Option<Value>,
        limit: Duration,
    ) -> Result<Option<Value>, String> {
        let session = self.session().await?;
        if let Some(collision) = &session.collision {
            return Err(collision.clone());
        }
        let Some(original) = session.original(method) else {
            return Err(format!("Tool \"{method}\" not found on {}", self.name));
        };
        let mut params = CallToolRequestParams::new(original.to_owned());
        match args {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => params = params.with_arguments(map),
            Some(_) => {
                return Err(format!(
                    "Arguments to {}.{method} must be an object",
                    self.name
                ));
            }
        }
        let answer =
            tokio::time::timeout(limit, session.service.peer().call_tool_once(params)).await;
        match answer {
            Err(_) => {
                let message = format!(
                    "MCP server \"{}\" did not answer {}.{method} within {} ms; it is stopped and will be restarted on the next call",
                    self.name,
                    self.name,
                    limit.as_millis()
                );
                self.discard(&session, message.clone()).await;
                Err(message)
            }
            Ok(Err(ServiceError::McpError(error))) => Err(self.redact(error.message.to_string())),
            Ok(Err(error)) if error.auth_challenge().is_some() => {
                let message = remote::sign_in_needed(
                    &self.name,
                    "refused its sign-in (it expired or was revoked)",
                );
                self.discard(&session, message.clone()).await;
                Err(message)
            }
            Ok(Err(error)) => {
                let message = self.redact(with_tail(
                    format!(
                        "MCP server \"{}\" stopped during {}.{method} ({error}); it will be restarted on the next call",
                        self.name, self.name
                    ),
                    &session.stderr,
                ));
                self.discard(&session, message.clone()).await;
                Err(message)
            }
            Ok(Ok(CallToolResponse::Complete(result))) => {
                unwrap_result(result).map_err(|e| self.redact(e))
            }
            Ok(Ok(CallToolResponse::InputRequired(_))) => Err(format!(
                "MCP server \"{}\" asked for more input during {}.{method}, which codemode does not support",
                self.name, self.name
            )),
            Ok(Ok(_)) => Err(format!(
                "MCP server \"{}\" answered {}.{method} with a task, which codemode does not support",
                self.name, self.name
            )),
        }
    }
}

/// docs/semantics.md §11.1: `isError` throws the text; then `structuredContent`; then all-text content (JSON
/// when it parses); otherwise the whole result.
pub fn unwrap_result(result: CallToolResult) -> Result<Option<Value>, String> {
    let texts: Option<Vec<&str>> = result
        .content
        .iter()
        .map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    if result.is_error == Some(true) {
        let text = texts.map(|t| t.join("\n")).unwrap_or_default();
        return Err(if text.is_empty() {
            "Tool call failed".to_owned()
        } else {
            text
        });
    }
    if let Some(structured) = result.structured_content.as_ref().filter(|s| !s.is_null()) {
        return Ok(Some(structured.clone()));
    }
    if let Some(texts) = texts.filter(|t| !t.is_empty()) {
        let text = texts.join("\n");
        return Ok(Some(
            serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text)),
        ));
    }
    let mut whole = serde_json::to_value(&result).map_err(|e| e.to_string())?;
    if let Value::Object(map) = &mut whole {
        map.remove("resultType");
    }
    Ok(Some(whole))
}

impl Connector for McpConnector {
    fn name(&self) -> &str {
        &self.name
    }

    fn instructions(&self) -> Option<String> {
        self.session
            .try_lock()
            .ok()
            .and_then(|s| s.as_ref().and_then(|s| s.instructions.clone()))
    }

    fn lazy(&self) -> bool {
        true
    }

    fn tools_generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    fn tools(&self) -> BoxFuture<'_, Result<Vec<ToolDescriptor>, String>> {
        Box::pin(async move {
            let session = self.session().await?;
            if let Some(collision) = &session.collision {
                return Err(collision.clone());
            }
            Ok(session
                .methods
                .iter()
                .map(|m| m.descriptor.clone())
                .collect())
        })
    }

    fn execute<'a>(
        &'a self,
        method: &'a str,
        args: Option<Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(self.call(method, args, self.call_timeout))
    }

    /// From a `preview` template in `connectors.json`: the read-only call it names, made now and never
    /// recorded; its answer is the present state of what the method would change.
    fn preview<'a>(
        &'a self,
        method: &'a str,
        args: Option<Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'a, Result<Option<codemode::Preview>, String>> {
        Box::pin(async move {
            let original = self.original_name(method).await?;
            let Some(template) = self.policy.preview_for(&original, method) else {
                return Ok(None);
            };
            // Made without a person every time a card is shown: only a method that reads may be called
            // (docs/design.md, "Previews only read").
            let session = self.session().await?;
            let reads = Policy::lists(&self.policy.read_only, &template.method, &template.method)
                || session.methods.iter().any(|m| {
                    m.read_only
                        && (m.original == template.method
                            || m.descriptor.name == sanitize_tool_name(&template.method))
                });
            let gated = self.policy.approval.as_ref().is_some_and(|approval| {
                approval.requires(&template.method, &sanitize_tool_name(&template.method), &[])
            });
            if !reads || gated {
                return Err(format!(
                    "the preview template for {method} names {}, which {} not declared read-only (the server's readOnlyHint, or readOnly in connectors.json): it was not called",
                    template.method,
                    if gated { "needs approval and is" } else { "is" }
                ));
            }
            let args = args.unwrap_or(Value::Object(Map::new()));
            let preview_args = render_template(&template.args, &args, &Value::Null)
                .map_err(|e| e.replace("revert template", "preview template"))?;
            let value = self
                .call(&template.method, Some(preview_args), self.call_timeout)
                .await?
                .unwrap_or(Value::Null);
            Ok(Some(codemode::Preview::Current { value, cut: false }))
        })
    }

    fn revert<'a>(
        &'a self,
        method: &'a str,
        args: Option<Value>,
        result: Option<Value>,
        _ctx: CallContext,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let original = self.original_name(method).await?;
            let Some(template) = self.policy.revert_for(&original, method) else {
                return Ok(false);
            };
            let args = args.unwrap_or(Value::Object(Map::new()));
            let result = result.unwrap_or(Value::Null);
            let revert_args = render_template(&template.args, &args, &result)?;
            self.call(&template.method, Some(revert_args), self.revert_timeout)
                .await?;
            Ok(true)
        })
    }
}
