//! `codemode mcp`: the stdio MCP server agents connect to (SPEC §5). Two tools: `codemode` runs a program and
//! returns its Outcome (a pause included); `codemode_wait` waits until a person has decided, from any process
//! that shares the database. Only protocol goes to stdout; diagnostics go to stderr.

use crate::framing::{MAX_MESSAGE_BYTES, StdioLines};
use codemode::{ExecutionStatus, Outcome};
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
/// How often `codemode_wait` looks at the database; decisions may come from another process.
const WAIT_POLL: Duration = Duration::from_millis(100);

struct CodemodeServer {
    home: Arc<Home>,
    tools: Vec<Tool>,
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

impl CodemodeServer {
    fn new(home: Arc<Home>) -> Self {
        let description = home.runtime.tool_description(&home.hints());
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
            home,
            tools: vec![codemode, wait],
        }
    }

    async fn run_code(&self, args: &JsonObject, client: Option<String>) -> CallToolResult {
        if let Err(message) = self.home.usable() {
            return misuse(message);
        }
        let Some(code) = args.get("code").and_then(Value::as_str) else {
            return misuse("Missing required argument \"code\" (a string)".to_owned());
        };
        match self
            .home
            .runtime
            .execute_from(code, Some(client.as_deref().unwrap_or("mcp")))
            .await
        {
            Ok(outcome) => answer(&outcome),
            Err(error) => misuse(error.to_string()),
        }
    }

    async fn wait(
        &self,
        args: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Some(id) = args.get("executionId").and_then(Value::as_str) else {
            return misuse("Missing required argument \"executionId\" (a string)".to_owned());
        };
        let seconds = match args.get("timeoutSeconds") {
            None | Some(Value::Null) => DEFAULT_WAIT_SECONDS,
            Some(value) => match value.as_f64() {
                Some(s) if s >= 0.0 => s.min(MAX_WAIT_SECONDS),
                _ => {
                    return misuse(
                        "timeoutSeconds must be a non-negative number of seconds".to_owned(),
                    );
                }
            },
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(seconds);
        loop {
            let execution = match self.home.runtime.execution(id) {
                Ok(Some(execution)) => execution,
                Ok(None) => return misuse(format!("No execution \"{id}\"")),
                Err(error) => return misuse(error.to_string()),
            };
            let settled = !matches!(
                execution.status,
                ExecutionStatus::Paused | ExecutionStatus::Running
            );
            if settled || tokio::time::Instant::now() >= deadline || context.ct.is_cancelled() {
                return CallToolResult::structured(self.waited(execution));
            }
            tokio::select! {
                () = tokio::time::sleep(WAIT_POLL) => {}
                () = context.ct.cancelled() => {}
            }
        }
    }

    /// SPEC §5: completed → the completed Outcome; error, rejected, rolled back → an error outcome with the
    /// stored text; still undecided → the paused Outcome, or `{status: "running"}`.
    fn waited(&self, execution: codemode::ExecutionState) -> Value {
        let id = execution.id.clone();
        let outcome = match execution.status {
            ExecutionStatus::Completed => Outcome::Completed {
                execution_id: id,
                result: execution.result,
                logs: execution.logs,
                calls: Some(execution.log),
            },
            ExecutionStatus::RolledBack => Outcome::early_error(id, "Execution was rolled back"),
            ExecutionStatus::Error | ExecutionStatus::Rejected => {
                Outcome::early_error(id, execution.error.unwrap_or_default())
            }
            ExecutionStatus::Paused => match self.home.runtime.paused_outcome(&id) {
                Ok(outcome) => outcome,
                Err(error) => Outcome::early_error(id, error.to_string()),
            },
            ExecutionStatus::Running => {
                return json!({"status": "running", "executionId": id});
            }
        };
        serde_json::to_value(&outcome).unwrap_or(Value::Null)
    }
}

/// Outcomes, error outcomes included, are ordinary results.
fn answer(outcome: &Outcome) -> CallToolResult {
    CallToolResult::structured(serde_json::to_value(outcome).unwrap_or(Value::Null))
}

/// `isError: true` is for misuse: bad arguments, an unknown id, a broken config.
fn misuse(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
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
    let home = Arc::new(home);
    if let Some(error) = &home.config_error {
        eprintln!("codemode mcp: connectors.json is invalid, every call will say so: {error}");
    }
    let sweeper = {
        let home = home.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(home.settings.expiry_sweep);
            loop {
                ticks.tick().await;
                match home.runtime.expire_paused(home.settings.paused_ttl).await {
                    Ok(expired) if !expired.is_empty() => {
                        eprintln!("codemode mcp: expired {} paused run(s)", expired.len());
                    }
                    Ok(_) => {}
                    Err(error) => eprintln!("codemode mcp: expiry sweep failed: {error}"),
                }
            }
        })
    };
    let server = CodemodeServer::new(home.clone());
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
    home.connectors.shutdown().await;
    result
}
