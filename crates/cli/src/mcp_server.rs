//! `codemode mcp`: the stdio MCP server agents connect to (README "The command line", docs/api.md). Two tools: `codemode` runs a program and
//! returns its Outcome (a pause included); `codemode_wait` waits until a person has decided, from any process
//! that shares the database. Only protocol goes to stdout; diagnostics go to stderr.

use crate::framing::{MAX_MESSAGE_BYTES, StdioLines};
use codemode_api::{Api, ApiError, FollowingApi, WaitOutcome, bound_outcome};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, InitializeRequestParams, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::io::StdioReader;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

const DEFAULT_WAIT_SECONDS: f64 = 50.0;
const MAX_WAIT_SECONDS: f64 = 600.0;

struct CodemodeServer {
    /// Opened again when connectors.json changes, so a connector added from the app is usable at once.
    api: Arc<FollowingApi>,
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The two tools, described with the connectors and budget of the configuration in force.
fn tools(api: &Api) -> Vec<Tool> {
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

impl CodemodeServer {
    async fn run_code(&self, args: &JsonObject, client: Option<String>) -> CallToolResult {
        let api = match self.api.current().await {
            Ok(api) => api,
            Err(error) => return misuse(&error),
        };
        // A broken config is said before anything else: no call can succeed until it is fixed.
        if let Err(error) = api.usable() {
            return misuse(&error);
        }
        let Some(code) = args.get("code").and_then(Value::as_str) else {
            return misuse_text("Missing required argument \"code\" (a string)");
        };
        let include_calls = match include_calls(args) {
            Ok(include) => include,
            Err(refusal) => return misuse_text(refusal),
        };
        // The client's name is self-declared: it becomes a label that can never pass for a source the host
        // sets itself, nor carry a line break into a listing (docs/design.md, "Sources are labels").
        let source = match &client {
            Some(name) => codemode::sources::client_source(name),
            None => "mcp".to_owned(),
        };
        let ran = match api.run(code, &source).await {
            Ok(outcome) if include_calls => api.with_calls(outcome),
            ran => ran,
        };
        match ran {
            Ok(outcome) => answer(
                &api,
                serde_json::to_value(&outcome).unwrap_or(Value::Null),
                include_calls,
            ),
            Err(error) => misuse(&error),
        }
    }

    async fn wait(
        &self,
        args: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let api = match self.api.current().await {
            Ok(api) => api,
            Err(error) => return misuse(&error),
        };
        let Some(id) = args.get("executionId").and_then(Value::as_str) else {
            return misuse_text("Missing required argument \"executionId\" (a string)");
        };
        let seconds = match args.get("timeoutSeconds") {
            None | Some(Value::Null) => DEFAULT_WAIT_SECONDS,
            Some(value) => match value.as_f64() {
                Some(s) if s >= 0.0 => s.min(MAX_WAIT_SECONDS),
                _ => {
                    return misuse_text("timeoutSeconds must be a non-negative number of seconds");
                }
            },
        };
        let include_calls = match include_calls(args) {
            Ok(include) => include,
            Err(refusal) => return misuse_text(refusal),
        };
        let timeout = Duration::from_secs_f64(seconds);
        // A cancelled request is answered with where the run stands now.
        let waited = tokio::select! {
            waited = api.wait(id, timeout) => waited,
            () = context.ct.cancelled() => api.wait(id, Duration::ZERO).await,
        };
        let waited = match waited {
            Ok(WaitOutcome::Outcome(outcome)) if include_calls => {
                api.with_calls(outcome).map(WaitOutcome::Outcome)
            }
            waited => waited,
        };
        match waited {
            Ok(waited) => answer(
                &api,
                serde_json::to_value(&waited).unwrap_or(Value::Null),
                include_calls,
            ),
            Err(error) => misuse(&error),
        }
    }
}

/// Outcomes, error outcomes included, are ordinary results, bounded to what the model can use
/// (`runtime.maxOutputChars`); the audit log keeps everything.
fn answer(api: &Api, outcome: Value, include_calls: bool) -> CallToolResult {
    CallToolResult::structured(bound_outcome(outcome, api.output_budget(include_calls)))
}

/// The optional `includeCalls` flag; anything but a boolean is misuse (the refusal's text).
fn include_calls(args: &JsonObject) -> Result<bool, &'static str> {
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
fn misuse_text(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// A failed operation as `isError` with the API's message (its code is for front ends that branch on it).
fn misuse(error: &ApiError) -> CallToolResult {
    misuse_text(&error.message)
}

impl ServerHandler for CodemodeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("codemode", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Run JavaScript programs that call the configured connectors with the `codemode` tool. Calls that need a person's approval pause the run; call `codemode_wait` with its executionId to learn the outcome once it was decided.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let api = self
            .api
            .current()
            .await
            .map_err(|e| ErrorData::internal_error(e.message, None))?;
        Ok(ListToolsResult::with_all_items(tools(&api)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "codemode" => {
                let client = context
                    .peer
                    .peer_info()
                    .map(|info| info.client_info.name.clone())
                    .filter(|n| !n.is_empty());
                self.run_code(&args, client).await
            }
            "codemode_wait" => self.wait(&args, &context).await,
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "Unknown tool \"{other}\": this server offers codemode and codemode_wait"
                    ),
                    None,
                ));
            }
        };
        Ok(CallToolResponse::Complete(result))
    }

    /// rmcp reads a request whose params do not fit its method's type as a custom request; for a method this
    /// server answers, that is Invalid params (-32602), not an unknown method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let fits = match request.method.as_str() {
            "tools/call" => request
                .params_as::<CallToolRequestParams>()
                .map(|p| p.is_some()),
            "tools/list" => request.params_as::<PaginatedRequestParams>().map(|_| true),
            "initialize" => request
                .params_as::<InitializeRequestParams>()
                .map(|p| p.is_some()),
            "ping" => Ok(true),
            _ => {
                return Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("Method not found: {}", request.method),
                    None,
                ));
            }
        };
        let why = match fits {
            Err(error) => error.to_string(),
            Ok(false) => "params are required".to_owned(),
            Ok(true) => "params do not fit the method".to_owned(),
        };
        Err(ErrorData::invalid_params(
            format!("Invalid params for {}: {why}", request.method),
            None,
        ))
    }
}

/// stdin/stdout framed by `StdioLines`, which answers what rmcp's own stdio transport would drop.
fn stdio() -> StdioLines<StdioReader> {
    let (read, write) = rmcp::transport::io::stdio_pipes();
    StdioLines::new(read, write, MAX_MESSAGE_BYTES)
}

/// Serves a data directory opened with `options`, following its connectors.json from then on.
pub async fn serve_home(
    home: connectors::Home,
    options: connectors::HomeOptions,
) -> Result<(), String> {
    serve(FollowingApi::from_api(Api::new(home), options)).await
}

/// Serves on stdin/stdout until the client goes away, sweeping expired paused runs on the configured interval.
pub async fn serve(api: FollowingApi) -> Result<(), String> {
    let api = Arc::new(api);
    if let Ok(current) = api.current().await
        && let Some(error) = current.config_error()
    {
        eprintln!("codemode mcp: connectors.json is invalid, every call will say so: {error}");
    }
    let sweeper = {
        let api = api.clone();
        tokio::spawn(async move { api.keep_sweeping("codemode mcp").await })
    };
    let server = CodemodeServer { api: api.clone() };
    let served = server
        .serve(stdio())
        .await
        .map_err(|e| format!("MCP initialisation failed: {e}"));
    let result = match served {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("MCP server stopped: {e}")),
        Err(e) => Err(e),
    };
    sweeper.abort();
    api.shutdown().await;
    result
}
