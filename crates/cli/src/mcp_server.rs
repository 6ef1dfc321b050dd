//! `codemode mcp`: the stdio MCP server agents connect to (README "The command line", docs/api.md). Two tools: `codemode` runs a program and
//! returns its Outcome (a pause included); `codemode_wait` waits until a person has decided, from any process
//! that shares the database. Only protocol goes to stdout; diagnostics go to stderr.

use crate::framing::{MAX_MESSAGE_BYTES, StdioLines};
use codemode_api::{
    Api, ApiError, ClientAnswer, ClientDecision, ClientQuestion, FollowingApi, ShownCall,
    WaitOutcome, bound_outcome,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientResult, ContentBlock,
    CustomRequest, CustomResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorCode, Implementation, InitializeRequestParams, InputRequest,
    InputRequiredResult, InputResponses, JsonObject, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, ServerRequest, Tool, ToolAnnotations,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use rmcp::transport::io::StdioReader;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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

/// The key of the one input request an `input_required` result carries.
const APPROVAL_INPUT: &str = "approval";

/// What asking in a handshake-era client came to.
enum Asked {
    /// The client answered (accept with a decision) or declined / cancelled (`None`).
    Answer(Option<ClientAnswer>),
    /// Decided elsewhere first, or the request was cancelled: the question was withdrawn.
    Withdrawn,
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

    /// Asks the client about the call run `id` waits on, when that call is marked `askInClient` and the
    /// client can be asked (it declared elicitation): a `2026-07-28` client gets an `input_required` result
    /// and answers by retrying; an earlier one gets `elicitation/create` while this watches for an answer from
    /// anywhere else, the first answer winning. `None` when the client is not asked: the paused outcome stands.
    async fn ask_in_client(
        &self,
        api: &Api,
        id: &str,
        client: &str,
        context: &RequestContext<RoleServer>,
    ) -> Option<Reply> {
        let form = context
            .client_capabilities()
            .and_then(|capabilities| capabilities.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        if !form {
            return None;
        }
        let modern = context
            .protocol_version()
            .is_some_and(|version| !version.has_initialize());
        let mut question = api.client_question(id).await.ok().flatten()?;
        if modern {
            return self.input_required(question).map(Reply::Ask);
        }
        loop {
            let asked = self.elicit(api, &question, context).await;
            let decided = match asked {
                Asked::Answer(Some(answer)) => {
                    api.answer_in_client(&question.call, client, answer).await
                }
                // Declined or cancelled: the call waits for the console, as if the client had not been asked.
                Asked::Answer(None) | Asked::Withdrawn => {
                    return Some(Reply::Now(id.to_owned()));
                }
            };
            match decided {
                Ok(ClientDecision::Decided(WaitOutcome::Outcome(outcome)))
                    if outcome.status() == "paused" =>
                {
                    // The run went on and waits on its next call: asked about in turn, when that one is asked too.
                    match api.client_question(id).await.ok().flatten() {
                        Some(next) => question = next,
                        None => return Some(Reply::Now(id.to_owned())),
                    }
                }
                Ok(ClientDecision::Decided(waited)) => return Some(Reply::Settled(waited)),
                // Somebody answered first: the client gets the run as it is now.
                Ok(ClientDecision::Stale(_)) => return Some(Reply::Now(id.to_owned())),
                Err(error) => return Some(Reply::Misuse(error)),
            }
        }
    }

    /// `elicitation/create` for `question`, withdrawn (`notifications/cancelled`) when the call is decided
    /// elsewhere first or the tool call itself is cancelled.
    async fn elicit(
        &self,
        api: &Api,
        question: &ClientQuestion,
        context: &RequestContext<RoleServer>,
    ) -> Asked {
        let Some(params) = question_params(question) else {
            return Asked::Answer(None);
        };
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        let Ok(mut handle) = context
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        else {
            return Asked::Answer(None);
        };
        let answered = tokio::select! {
            response = &mut handle.rx => Some(response),
            () = api.until_decided_elsewhere(&question.call) => None,
            () = context.ct.cancelled() => None,
        };
        match answered {
            Some(Ok(Ok(ClientResult::ElicitResult(result)))) => {
                Asked::Answer(client_answer(&result))
            }
            Some(_) => Asked::Answer(None),
            None => {
                let _ = handle
                    .cancel(Some("decided elsewhere first".to_owned()))
                    .await;
                Asked::Withdrawn
            }
        }
    }

    /// The `input_required` result asking a `2026-07-28` client about `question`; its `requestState` is a
    /// handle to the call asked about, kept here.
    fn input_required(&self, question: ClientQuestion) -> Option<InputRequiredResult> {
        let request = InputRequest::Elicitation(ElicitRequest::new(question_params(&question)?));
        let handle = format!(
            "{}:{}:{}",
            question.call.execution_id,
            question.call.seq,
            uuid::Uuid::new_v4().simple()
        );
        if let Ok(mut open) = self.questions.lock() {
            open.insert(handle.clone(), question.call);
        }
        Some(InputRequiredResult::new(
            Some(BTreeMap::from([(APPROVAL_INPUT.to_owned(), request)])),
            Some(handle),
        ))
    }

    /// A `2026-07-28` client's retry with its answer to an `input_required` question: the call it was asked
    /// about is decided (or found decided by someone else first), then the run is answered as it stands,
    /// asking again when it waits on another call that is to be asked in the client. The program is not run
    /// again.
    async fn answered(
        &self,
        responses: Option<InputResponses>,
        state: Option<String>,
        client: Option<String>,
        include_calls: bool,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let api = match self.api.current().await {
            Ok(api) => api,
            Err(error) => return misuse(&error).into(),
        };
        let Some(state) = state else {
            return misuse_text("inputResponses came without the requestState they answer").into();
        };
        let call = self
            .questions
            .lock()
            .ok()
            .and_then(|mut open| open.remove(&state));
        let Some(call) = call else {
            // Not a question this server has open (answered already, or asked before a restart): the answer
            // decides nothing; the run, when the handle names one, is told as it stands.
            return match state.split(':').next().filter(|id| id.starts_with("exec_")) {
                Some(id) => {
                    self.respond(&api, Reply::Now(id.to_owned()), include_calls)
                        .await
                }
                None => misuse_text("This requestState names no question of this server").into(),
            };
        };
        let answer = responses
            .as_ref()
            .and_then(|r| r.get(APPROVAL_INPUT))
            .and_then(|value| serde_json::from_value::<ElicitResult>(value.clone()).ok())
            .and_then(|result| client_answer(&result));
        let id = call.execution_id.clone();
        let Some(answer) = answer else {
            // Declined or cancelled: the call waits for the console.
            return self.respond(&api, Reply::Now(id), include_calls).await;
        };
        // Recorded under the same label as the run's source: self-declared, never a host's own source.
        let client = client
            .as_deref()
            .map_or_else(|| "mcp".to_owned(), codemode::sources::client_source);
        let reply = match api.answer_in_client(&call, &client, answer).await {
            Ok(ClientDecision::Decided(WaitOutcome::Outcome(outcome)))
                if outcome.status() == "paused" =>
            {
                match self.ask_in_client(&api, &id, &client, context).await {
                    Some(reply) => reply,
                    None => Reply::Now(id),
                }
            }
            Ok(ClientDecision::Decided(waited)) => Reply::Settled(waited),
            Ok(ClientDecision::Stale(_)) => Reply::Now(id),
            Err(error) => Reply::Misuse(error),
        };
        self.respond(&api, reply, include_calls).await
    }

    /// A [`Reply`] as the tool's response: outcomes bounded as every outcome is.
    async fn respond(&self, api: &Api, reply: Reply, include_calls: bool) -> CallToolResponse {
        let waited = match reply {
            Reply::Ask(result) => return CallToolResponse::InputRequired(result),
            Reply::Misuse(error) => return misuse(&error).into(),
            Reply::Settled(waited) => Ok(waited),
            // Where the run stands; a pass another process is finishing is given a moment to end.
            Reply::Now(id) => match api.wait(&id, Duration::ZERO).await {
                Ok(WaitOutcome::Running(_)) => api.wait(&id, SETTLE).await,
                now => now,
            },
        };
        answer_waited(api, waited, include_calls).into()
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

/// How long an answer from the client waits for a run another process is resuming before saying where it
/// stands: the pass after an approval from elsewhere is usually this quick.
const SETTLE: Duration = Duration::from_secs(5);

/// What a tool call asking in the client answers with.
enum Reply {
    /// Ask (again) with an `input_required` result.
    Ask(InputRequiredResult),
    /// The run, settled after the client's answer.
    Settled(WaitOutcome),
    /// The run as it stands now (still waiting, decided elsewhere, …).
    Now(String),
    Misuse(ApiError),
}

/// The elicitation form: the question's text, a decision and an optional reason. Only what the person
/// decides is asked for; nothing secret (MCP forbids asking secrets in form mode).
fn question_params(question: &ClientQuestion) -> Option<ElicitRequestParams> {
    let schema = json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "description": "approve runs this call once; reject stops the run",
                "enum": ["approve", "reject"]
            },
            "reason": {
                "type": "string",
                "title": "Reason (optional)",
                "description": "For a rejection: passed to the agent"
            }
        },
        "required": ["decision"]
    });
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.message.clone(),
        requested_schema: serde_json::from_value(schema).ok()?,
    })
}

/// The person's answer in an elicitation result: accept with `decision` approve or reject (and a reason);
/// `None` for decline, cancel, or an accept without a decision this server offered.
fn client_answer(result: &ElicitResult) -> Option<ClientAnswer> {
    if result.action != ElicitationAction::Accept {
        return None;
    }
    let content = result.content.as_ref()?;
    let reason = content
        .get("reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_owned);
    match content.get("decision").and_then(Value::as_str) {
        Some("approve") => Some(ClientAnswer::Approve),
        Some("reject") => Some(ClientAnswer::Reject(reason)),
        _ => None,
    }
}

/// Outcomes, error outcomes included, are ordinary results, bounded to what the model can use
/// (`runtime.maxOutputChars`); the audit log keeps everything.
fn answer(api: &Api, outcome: Value, include_calls: bool) -> CallToolResult {
    CallToolResult::structured(bound_outcome(outcome, api.output_budget(include_calls)))
}

/// What `codemode_wait` (or a client's answer) came to, as the tool's result: the outcome with its calls when
/// they were asked for, bounded; a failure as misuse.
fn answer_waited(
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
