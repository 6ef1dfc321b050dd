//! What a desktop notification says about a waiting call, and which answers it may offer (docs/desktop.md,
//! "Notifications"): Approve and Reject decide exactly as the window does, unless the call is marked
//! `confirmInApp` by its connector's configuration or by the rule that paused it; then only Open.

use crate::{Api, ApiError};
use codemode::{Actor, Effect, PendingAction};

/// Characters of the arguments a notification's body shows; the window shows them whole.
const BODY_CHARS: usize = 140;

/// One waiting call as a notification presents it.
#[derive(Debug, Clone, PartialEq)]
pub struct NotificationCard {
    pub execution_id: String,
    pub seq: u64,
    /// `connector.method awaits approval`.
    pub summary: String,
    /// The arguments on one line, shortened, and where the run came from.
    pub body: String,
    /// Only Open is offered: the person decides in the window.
    pub confirm_in_app: bool,
}

/// What answering from a notification came to.
#[derive(Debug, Clone, PartialEq)]
pub enum NotificationAnswer {
    /// The decision was recorded (`by: "notification"`); the run went on to this status.
    Decided { status: String },
    /// Somebody (or something) decided first; the message says what the run is now.
    Stale(String),
}

impl Api {
    /// The notification for a waiting call: its text, and whether it may be answered from the notification.
    pub async fn notification_card(&self, action: &PendingAction) -> NotificationCard {
        let source = self.source_of(&action.execution_id);
        let args = action
            .args
            .as_ref()
            .map(|args| shorten(&args.to_string(), BODY_CHARS))
            .unwrap_or_default();
        let body = match &source {
            Some(source) => format!("{args}\nfrom {source}"),
            None => args,
        };
        NotificationCard {
            execution_id: action.execution_id.clone(),
            seq: action.seq,
            summary: format!("{}.{} awaits approval", action.connector, action.method),
            body: body.trim().to_owned(),
            confirm_in_app: self.confirm_in_app(action, source.as_deref()).await,
        }
    }

    /// Whether the call must be decided in the window: its connector lists the method under `confirmInApp`,
    /// or the `ask` rule that matches it says `confirmInApp: true`.
    pub async fn confirm_in_app(&self, action: &PendingAction, source: Option<&str>) -> bool {
        let configured = self.home.config.as_ref().is_some_and(|config| {
            config
                .connectors
                .iter()
                .find(|c| c.name == action.connector)
                .is_some_and(|c| {
                    c.confirm_in_app
                        .requires(&action.method, &action.method, &[])
                })
        });
        if configured {
            return true;
        }
        let call = format!("{}.{}", action.connector, action.method);
        let Ok(verdict) = self.test_rules(&call, action.args.as_ref(), source).await else {
            return false;
        };
        let (Effect::Ask, Some(rule)) = (verdict.effect, verdict.rule) else {
            return false;
        };
        self.rules()
            .unwrap_or_default()
            .iter()
            .any(|listing| listing.rule.id == rule && listing.rule.confirm_in_app)
    }

    /// Approve or Reject pressed on the notification of call `seq` of run `id`. A call marked `confirmInApp`
    /// is refused (the notification never offers these buttons for it, but a stale one might).
    pub async fn answer_notification(
        &self,
        id: &str,
        seq: u64,
        approve: bool,
    ) -> Result<NotificationAnswer, ApiError> {
        let Some(action) = self
            .pending(Some(id))?
            .into_iter()
            .find(|action| action.seq == seq)
        else {
            let now = match self.home.runtime.execution_head(id) {
                Ok(Some(run)) => run.status.to_string(),
                _ => "gone".to_owned(),
            };
            return Ok(NotificationAnswer::Stale(format!(
                "Already decided: the run is {now}."
            )));
        };
        let source = self.source_of(id);
        if self.confirm_in_app(&action, source.as_deref()).await {
            return Err(ApiError::invalid_args(
                "This call is decided in the app's window only (confirmInApp).",
            ));
        }
        let decided = if approve {
            self.approve(id, Actor::Notification, None)
                .await
                .map(|outcome| outcome_status(&outcome))
        } else {
            self.reject(id, seq, Actor::Notification, None)
                .await
                .map(|()| "rejected".to_owned())
        };
        match decided {
            Ok(status) => Ok(NotificationAnswer::Decided { status }),
            Err(error) if error.code == crate::ErrorCode::Stale => {
                Ok(NotificationAnswer::Stale(error.message))
            }
            Err(error) => Err(error),
        }
    }
}

impl Api {
    fn source_of(&self, id: &str) -> Option<String> {
        self.home
            .runtime
            .execution_head(id)
            .ok()
            .flatten()
            .and_then(|run| run.source)
    }
}

fn outcome_status(outcome: &codemode::Outcome) -> String {
    serde_json::to_value(outcome)
        .ok()
        .and_then(|v| v["status"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}
