//! `codemode mcp`: the stdio MCP server agents connect to (README "The command line", docs/api.md). Two tools: `codemode` runs a program and
//! returns its Outcome (a pause included); `codemode_wait` waits until a person has decided, from any process
//! that shares the database. Only protocol goes to stdout; diagnostics go to stderr.

mod asking;
mod tools;

use crate::framing::{MAX_MESSAGE_BYTES, StdioLines};
use codemode_api::{Api, FollowingApi, ShownCall};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult,
    ErrorCode, Implementation, InitializeRequestParams, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::io::StdioReader;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tools::{answer, answer_waited, include_calls, misuse, misuse_text, tools};

const DEFAULT_WAIT_SECONDS: f64 = 50.0;
const MAX_WAIT_SECONDS: f64 = 600.0;

struct CodemodeServer {
    /// Opened again when connectors.json changes, so a connector added from the app is usable at once.
    api: Arc<FollowingApi>,
    /// Questions put to `2026-07-28` clients as `input_required`, by the opaque `requestState` handed out with
    /// each: the call asked about stays here, so a client's retry can answer that call and no other
    /// (docs/design.md, "Asking in the client"). A handle is used once.
    questions: Mutex<HashMap<String, ShownCall>>,
}

impl CodemodeServer {
    async fn run_code(
        &self,
        args: &JsonObject,
        client: Option<String>,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let api = match self.api.current().await {
            Ok(api) => api,
            Err(error) => return misuse(&error).into(),
        };
        // A broken config is said before anything else: no call can succeed until it is fixed.
        if let Err(error) = api.usable() {
            return misuse(&error).into();
        }
        let Some(code) = args.get("code").and_then(Value::as_str) else {
            return misuse_text("Missing required argument \"code\" (a string)").into();
        };
        let include_calls = match include_calls(args) {
            Ok(include) => include,
            Err(refusal) => return misuse_text(refusal).into(),
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
            Ok(outcome) if outcome.status() == "paused" => {
                let id = outcome.execution_id().to_owned();
                match self.ask_in_client(&api, &id, &source, context).await {
                    Some(response) => self.respond(&api, response, include_calls).await,
                    None => answer(
                        &api,
                        serde_json::to_value(&outcome).unwrap_or(Value::Null),
                        include_calls,
                    )
                    .into(),
                }
            }
            Ok(outcome) => answer(
                &api,
                serde_json::to_value(&outcome).unwrap_or(Value::Null),
                include_calls,
            )
            .into(),
            Err(error) => misuse(&error).into(),
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
        answer_waited(&api, waited, include_calls)
    }
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
                // Per request in the 2026-07-28 era, from the handshake before it.
                let client = context
                    .client_info()
                    .map(|info| info.name)
                    .filter(|n| !n.is_empty());
                if request.input_responses.is_some() || request.request_state.is_some() {
                    let include = include_calls(&args).unwrap_or(false);
                    return Ok(self
                        .answered(
                            request.input_responses,
                            request.request_state,
                            client,
                            include,
                            &context,
                        )
                        .await);
                }
                return Ok(self.run_code(&args, client, &context).await);
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
    let server = CodemodeServer {
        api: api.clone(),
        questions: Mutex::new(HashMap::new()),
    };
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
