//! The two tools as clients see them (descriptions, schemas, annotations) and how their results are shaped:
//! outcomes bounded to the budget, misuse as `isError`.

use codemode_api::{Api, ApiError, WaitOutcome, bound_outcome};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::Arc;

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The two tools, described with the connectors and budget of the configuration in force.
pub(super) fn tools(api: &Api) -> Vec<Tool> {
    {
        let budget = api.output_budget(false).max_chars;
        let bounded = format!(
            "\n\nOutputs are bounded to {budget} characters of JSON (docs: \"Bounded outcomes\"): a long result is shrunk by structure (long strings shortened, long arrays and objects cut with a marker saying how many items were left out), console logs keep their first and last lines, and `calls` are left out unless you pass includeCalls: true (then a summary: seq, call, state). A cut outcome says \"truncated\": true and where the whole is. To get less cut, return only what you need: select fields, slice arrays, summarise in the program."
        );
        let mut codemode = Tool::new(
            "codemode",
            format!("{}{bounded}", api.tool_description()),
            schema(json!({
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "An async arrow function to execute"},
                    "includeCalls": {"type": "boolean", "description": "Add a summary of the calls made (seq, connector.method, state), within the output budget"}
                },
                "required": ["code"]
            })),
        )
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(true),
        );
        codemode.output_schema = Some(outcome_schema());
        let mut wait = Tool::new(
            "codemode_wait",
            format!("Wait for a paused or running execution to be decided by a person (approved, rejected or rolled back) and return its outcome. Returns the current paused outcome, or {{status: \"running\"}}, if nothing was decided within timeoutSeconds (default 50, at most 600).{bounded}"),
            schema(json!({
                "type": "object",
                "properties": {
                    "executionId": {"type": "string", "description": "The executionId of a paused outcome"},
                    "timeoutSeconds": {"type": "number", "description": "How long to wait (default 50, at most 600)"},
                    "includeCalls": {"type": "boolean", "description": "Add a summary of the calls made (seq, connector.method, state), within the output budget"}
                },
                "required": ["executionId"]
            })),
        )
        .with_annotations(
            ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        );
        wait.output_schema = Some(outcome_schema());
        vec![codemode, wait]
    }
}

/// Outcomes, error outcomes included, are ordinary results, bounded to what the model can use
/// (`runtime.maxOutputChars`); the audit log keeps everything.
pub(super) fn answer(api: &Api, outcome: Value, include_calls: bool) -> CallToolResult {
    CallToolResult::structured(bound_outcome(outcome, api.output_budget(include_calls)))
}

/// What `codemode_wait` (or a client's answer) came to, as the tool's result: the outcome with its calls when
/// they were asked for, bounded; a failure as misuse.
pub(super) fn answer_waited(
    api: &Api,
    waited: Result<WaitOutcome, ApiError>,
    include_calls: bool,
) -> CallToolResult {
    let waited = match waited {
        Ok(WaitOutcome::Outcome(outcome)) if include_calls => {
            api.with_calls(outcome).map(WaitOutcome::Outcome)
        }
        waited => waited,
    };
    match waited {
        Ok(waited) => answer(
            api,
            serde_json::to_value(&waited).unwrap_or(Value::Null),
            include_calls,
        ),
        Err(error) => misuse(&error),
    }
}

/// The optional `includeCalls` flag; anything but a boolean is misuse (the refusal's text).
pub(super) fn include_calls(args: &JsonObject) -> Result<bool, &'static str> {
    match args.get("includeCalls") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(include)) => Ok(*include),
        Some(_) => Err("includeCalls must be true or false"),
    }
}

/// What both tools return as `structuredContent` (an Outcome, bounded), declared as the MCP spec asks of tools
/// that return structured content.
fn outcome_schema() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["completed", "paused", "error", "running"]},
            "executionId": {"type": "string"},
            "result": {"description": "What the program returned (shrunk to the budget when truncated)"},
            "error": {"type": "string"},
            "logs": {"type": "array", "items": {"type": "string"}},
            "pending": {"type": "array", "items": {"type": "object"}, "description": "The call waiting for a person, whole"},
            "calls": {"type": "array", "description": "With includeCalls: seq, call (connector.method) and state of each call"},
            "truncated": {"type": "boolean", "description": "Something was cut to fit the budget"},
            "whole": {"type": "string", "description": "Where the whole outcome is"}
        },
        "required": ["status", "executionId"]
    }))
}

/// `isError: true` is for misuse: bad arguments, an unknown id, a broken config.
pub(super) fn misuse_text(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// A failed operation as `isError` with the API's message (its code is for front ends that branch on it).
pub(super) fn misuse(error: &ApiError) -> CallToolResult {
    misuse_text(&error.message)
}
