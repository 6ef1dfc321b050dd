//! Asking a waiting call in the agent's own MCP client (docs/design.md, "Asking in the client"): the question, in
//! text, rendered as every surface renders a call; and the client's answer, decided as the window decides,
//! bound to the call that was asked about and recorded `by: "client"` with the client's name. The first answer
//! wins: a client answering after the console (or a notification, or the CLI) is told it is stale.

use crate::deciding::ShownCall;
use crate::{Api, ApiError, ErrorCode, PreviewView, WaitOutcome, display};
use codemode::{Answerer, PendingAction, Preview};
use std::time::Duration;

/// How many lines of a diff the question carries; the window shows the whole change.
const QUESTION_DIFF_LINES: usize = 40;

/// A waiting call as the agent's client is asked about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientQuestion {
    /// The call asked about: an answer decides this call with these arguments, or nothing.
    pub call: ShownCall,
    /// What the person reads: the call, every argument, what it would change, who asked and until when.
    pub message: String,
}

/// What the person answered in the client.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientAnswer {
    Approve,
    /// With the reason the agent reads in the outcome, when one was given.
    Reject(Option<String>),
}

/// What an answer from the client came to.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientDecision {
    /// Recorded; the run went on to this (it may wait on its next call).
    Decided(WaitOutcome),
    /// Somebody decided first, or the call is no longer waiting: nothing was decided here; why.
    Stale(String),
}

impl Api {
    /// The question for the call run `id` waits on, when that call is to be asked in the client: marked
    /// `askInClient` by the rule or connector that asked, and not to be decided in the window only
    /// (`confirmInApp`, by rule or by connector). `None` otherwise, or when nothing waits.
    pub async fn client_question(&self, id: &str) -> Result<Option<ClientQuestion>, ApiError> {
        let Some(action) = self
            .pending(Some(id))?
            .into_iter()
            .find(|a| a.ask_in_client)
        else {
            return Ok(None);
        };
        if self.confirm_in_app(&action) {
            return Ok(None);
        }
        // Computed as the window computes it, and kept as what was shown with the decision.
        let preview = self.preview(id, action.seq).await.ok().flatten();
        let source = self.source_of(id);
        let message = question_text(&action, source.as_deref(), preview.as_ref(), self.now_ms());
        Ok(Some(ClientQuestion {
            call: ShownCall {
                execution_id: action.execution_id.clone(),
                seq: action.seq,
                digest: action.digest.clone(),
            },
            message,
        }))
    }

    /// Returns once `call` no longer waits: decided by someone (any process on this data directory),
    /// expired, or its run gone. What a host asking the client watches, so a question answered elsewhere
    /// first is withdrawn rather than left open.
    pub async fn until_decided_elsewhere(&self, call: &ShownCall) {
        loop {
            let Ok(token) = self.home.runtime.change_token() else {
                return;
            };
            let waits = self.pending(Some(&call.execution_id)).is_ok_and(|pending| {
                pending
                    .iter()
                    .any(|p| p.seq == call.seq && p.digest == call.digest)
            });
            if !waits {
                return;
            }
            self.home
                .runtime
                .changed(token, Duration::from_secs(60))
                .await;
        }
    }

    /// The client's answer to `question`: approve or reject the call it asked about, recorded `by: "client"`
    /// with `client` (the name the client gave itself). A call decided meanwhile, or changed, is
    /// [`ClientDecision::Stale`] and nothing is decided.
    pub async fn answer_in_client(
        &self,
        call: &ShownCall,
        client: &str,
        answer: ClientAnswer,
    ) -> Result<ClientDecision, ApiError> {
        self.answer_as(call, &Answerer::Client(client.to_owned()), answer)
            .await
    }

    /// An answer from outside the console (the agent's client, a paired phone) to `call`, recorded under
    /// `answerer`'s name; a call decided meanwhile, or changed, is [`ClientDecision::Stale`].
    pub(crate) async fn answer_as(
        &self,
        call: &ShownCall,
        answerer: &Answerer,
        answer: ClientAnswer,
    ) -> Result<ClientDecision, ApiError> {
        self.usable()?;
        let runtime = &self.home.runtime;
        let shown = call.call_ref();
        let decided = match answer {
            ClientAnswer::Approve => runtime
                .approve_answered(&call.execution_id, &shown, answerer)
                .await
                .map(Some),
            ClientAnswer::Reject(reason) => runtime
                .reject_answered(&call.execution_id, &shown, answerer, reason.as_deref())
                .await
                .map(|()| None),
        };
        match decided.map_err(ApiError::from) {
            Ok(Some(outcome)) => Ok(ClientDecision::Decided(WaitOutcome::Outcome(outcome))),
            Ok(None) => Ok(ClientDecision::Decided(
                self.wait(&call.execution_id, Duration::ZERO).await?,
            )),
            Err(error) if matches!(error.code, ErrorCode::Stale) => {
                Ok(ClientDecision::Stale(error.message))
            }
            Err(error) => Err(error),
        }
    }
}

/// The question's text: the call and every argument as the CLI shows them (long values folded, characters
/// that could disguise text escaped), what it would change, who asked and from where, and the time left.
pub fn question_text(
    action: &PendingAction,
    source: Option<&str>,
    preview: Option<&PreviewView>,
    now: i64,
) -> String {
    let mut lines = vec![format!(
        "{}.{} awaits your approval",
        display::visible(&action.connector),
        display::visible(&action.method)
    )];
    lines.push(display::arguments_text(
        action.args.as_ref(),
        action.canonical.as_ref(),
        2,
    ));
    if let Some(preview) = preview {
        lines.extend(preview_lines(preview));
    }
    let mut about = Vec::new();
    if let Some(rule) = &action.asked_by {
        about.push(format!("asked by rule \"{}\"", display::visible(rule)));
    }
    if let Some(source) = source {
        about.push(format!("from {}", display::visible(source)));
    }
    about.push(format!("run {} call {}", action.execution_id, action.seq));
    lines.push(about.join(" · "));
    if let Some(line) = action.quorum_line() {
        lines.push(format!("Approvals: {}", display::visible(&line)));
    }
    if let Some(by) = action.decide_by {
        let minutes = ((by - now).max(0) + 59_999) / 60_000;
        lines.push(format!(
            "Decide within {minutes} min, or the call is rejected as expired."
        ));
    }
    lines.push(
        "Approve runs this call once. Reject stops the run; a reason, if you give one, is passed to the agent."
            .to_owned(),
    );
    lines.join("\n")
}

/// What the call would change, in a few lines: the diff's first lines for text, a line for the rest.
fn preview_lines(view: &PreviewView) -> Vec<String> {
    let head = match &view.preview {
        Preview::Diff { path, before, .. } => match before {
            None => format!("It would create {}:", display::visible(path)),
            Some(_) => format!("It would change {}:", display::visible(path)),
        },
        Preview::Delete { path, before, .. } => match before {
            Some(_) => format!("It would delete {}:", display::visible(path)),
            None => format!(
                "It would delete {} (no such file now).",
                display::visible(path)
            ),
        },
        Preview::Move {
            from,
            to,
            overwrites,
            ..
        } => match overwrites {
            Some(_) => format!(
                "It would move {} to {}, replacing it:",
                display::visible(from),
                display::visible(to)
            ),
            None => format!(
                "It would move {} to {}.",
                display::visible(from),
                display::visible(to)
            ),
        },
        Preview::Binary {
            path,
            before_size,
            after_size,
            ..
        } => match before_size {
            Some(before) => format!(
                "It would replace {} ({before} bytes) with {after_size} bytes of binary content.",
                display::visible(path)
            ),
            None => format!(
                "It would create {} with {after_size} bytes of binary content.",
                display::visible(path)
            ),
        },
        Preview::Current { value, .. } => {
            let text = serde_json::to_string(value).unwrap_or_default();
            let cut: String = text.chars().take(400).collect();
            let more = if cut.len() < text.len() { "…" } else { "" };
            format!("What it changes is now: {}{more}", display::visible(&cut))
        }
        Preview::Unavailable { message } => {
            format!("No preview: {}", display::visible(message))
        }
    };
    let mut lines = vec![head];
    if let Some(diff) = view.unified() {
        let all: Vec<&str> = diff.lines().collect();
        for line in all.iter().take(QUESTION_DIFF_LINES) {
            lines.push(format!("  {}", display::visible(line)));
        }
        if all.len() > QUESTION_DIFF_LINES {
            lines.push(format!(
                "  … {} more lines (the console shows the whole change)",
                all.len() - QUESTION_DIFF_LINES
            ));
        }
    }
    lines
}
