//! `codemode mcp`: the stdio MCP server agents connect to (README "The command line", docs/api.md). Two tools: `codemode` runs a program and
//! returns its Outcome (a pause included); `codemode_wait` waits until a person has decided, from any process
//! that shares the database. Only protocol goes to stdout; diagnostics go to stderr.

use crate::framing::{MAX_MESSAGE_BYTES, StdioLines};
use codemode::Outcome;
use codemode_api::{Api, ApiError};
use connectors::Home;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, ErrorCode, Implementation, InitializeRequestParams, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
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
    api: Arc<Api>,
    tools: Vec<Tool>,
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

impl CodemodeServer {
    fn new(api: Arc<Api>) -> Self {
        let description = api.tool_description();
        let codemode = Tool::new(
            "codemode",
            description,
            schema(json!({
                "type": "object",
                "properties": {"code": {"type": "string", "description": "An async arrow function to execute"}},
                "required": ["code"]
            })),
        );
        let wait = Tool::new(
            "codemode_wait",
            "Wait for a paused or running execution to be decided by a person (approved, rejected or rolled back) and return its outcome. Returns the current paused outcome, or {status: \"running\"}, if nothing was decided within timeoutSeconds (default 50, at most 600).",
            schema(json!({
                "type": "object",
                "properties": {
                    "executionId": {"type": "string", "description": "The executionId of a paused outcome"},
                    "timeoutSeconds": {"type": "number", "description": "How long to wait (default 50, at most 600)"}
                },
                "required": ["executionId"]
            })),
        );
        CodemodeServer {
            api,
            tools: vec![codemode, wait],
        }
    }

    async fn run_code(&self, args: &JsonObject, client: Option<String>) -> CallToolResult {
        // A broken config is said before anything else: no call can succeed until it is fixed.
        if let Err(error) = self.api.usable() {
            return misuse(&error);
        }
        let Some(code) = args.get("code").and_then(Value::as_str) else {
            return misuse_text("Missing required argument \"code\" (a string)");
        };
        match self.api.run(code, client.as_deref().unwrap_or("mcp")).await {
            Ok(outcome) => answer(&outcome),
            Err(error) => misuse(&error),
        }
    }

    async fn wait(
        &self,
        args: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
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
        let timeout = Duration::from_secs_f64(seconds);
        // A cancelled request is answered with where the run stands now.
        let waited = tokio::select! {
            waited = self.api.wait(id, timeout) => waited,
            () = context.ct.cancelled() => self.api.wait(id, Duration::ZERO).await,
        };
        match waited {
            Ok(waited) => {
                CallToolResult::structured(serde_json::to_value(&waited).unwrap_or(Value::Null))
            }
            Err(error) => misuse(&error),
        }
    }
}

/// Outcomes, error outcomes included, are ordinary results.
fn answer(outcome: &Outcome) -> CallToolResult {
    CallToolResult::structured(serde_json::to_value(outcome).unwrap_or(Value::Null))
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
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
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

/// Serves on stdin/stdout until the client goes away, sweeping expired paused runs on the configured interval.
pub async fn serve(home: Home) -> Result<(), String> {
    let api = Arc::new(Api::new(home));
    if let Some(error) = api.config_error() {
        eprintln!("codemode mcp: connectors.json is invalid, every call will say so: {error}");
    }
    let sweeper = {
        let api = api.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(api.sweep_interval());
            loop {
                ticks.tick().await;
                match api.sweep().await {
                    Ok(expired) if !expired.is_empty() => {
                        eprintln!("codemode mcp: expired {} paused run(s)", expired.len());
                    }
                    Ok(_) => {}
                    Err(error) => eprintln!("codemode mcp: expiry sweep failed: {error}"),
                }
            }
        })
    };
    let server = CodemodeServer::new(api.clone());
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
