//! Asking the agent's client about a paused call: `input_required` for `2026-07-28` clients, answered by a
//! retry; `elicitation/create` for earlier ones, withdrawn when the call is decided elsewhere first.

use super::CodemodeServer;
use super::tools::{answer_waited, misuse, misuse_text};
use codemode_api::{Api, ApiError, ClientAnswer, ClientDecision, ClientQuestion, WaitOutcome};
use rmcp::RoleServer;
use rmcp::model::{
    CallToolResponse, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, InputRequest, InputRequiredResult, InputResponses, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

/// The key of the one input request an `input_required` result carries.
const APPROVAL_INPUT: &str = "approval";

/// What asking in a handshake-era client came to.
enum Asked {
    /// The client answered (accept with a decision) or declined / cancelled (`None`).
    Answer(Option<ClientAnswer>),
    /// Decided elsewhere first, or the request was cancelled: the question was withdrawn.
    Withdrawn,
}

impl CodemodeServer {
    /// Asks the client about the call run `id` waits on, when that call is marked `askInClient` and the
    /// client can be asked (it declared elicitation): a `2026-07-28` client gets an `input_required` result
    /// and answers by retrying; an earlier one gets `elicitation/create` while this watches for an answer from
    /// anywhere else, the first answer winning. `None` when the client is not asked: the paused outcome stands.
    pub(super) async fn ask_in_client(
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
    pub(super) async fn answered(
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
    pub(super) async fn respond(
        &self,
        api: &Api,
        reply: Reply,
        include_calls: bool,
    ) -> CallToolResponse {
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
}

/// How long an answer from the client waits for a run another process is resuming before saying where it
/// stands: the pass after an approval from elsewhere is usually this quick.
const SETTLE: Duration = Duration::from_secs(5);

/// What a tool call asking in the client answers with.
pub(super) enum Reply {
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
