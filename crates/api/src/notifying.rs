//! What a desktop notification says about a waiting call, and which answers it may offer (docs/desktop.md,
//! "Notifications"): Approve and Reject decide exactly as the window does, unless the call is marked
//! `confirmInApp` by its connector's configuration or by the rule that paused it; then only Open. The body is
//! the one rendering of the call every surface shows ([`crate::display`]); an answer counts only when the
//! notification server that was sent the notification gives it ([`SentNotification`]).

use crate::display;
use crate::{Api, ApiError};
use codemode::{Actor, PendingAction};
use std::borrow::Cow;

/// The capability a notification server advertises (`GetCapabilities`) when it interprets markup in bodies.
pub const BODY_MARKUP: &str = "body-markup";

/// One waiting call as a notification presents it.
#[derive(Debug, Clone, PartialEq)]
pub struct NotificationCard {
    pub execution_id: String,
    pub seq: u64,
    /// `connector.method awaits approval`.
    pub summary: String,
    /// Plain text: the arguments as [`display::notification_body`] renders them (what names the target first
    /// and whole), then where the run came from. Send it with [`NotificationCard::body_for`].
    pub body: String,
    /// Only Open is offered: the person decides in the window.
    pub confirm_in_app: bool,
}

impl NotificationCard {
    /// The body for a server with these capabilities: escaped for markup where it advertises `body-markup`, so
    /// a value holding `<!--` shows as text rather than hiding the lines after it.
    pub fn body_for(&self, capabilities: &[String]) -> Cow<'_, str> {
        notification_body_for(&self.body, capabilities)
    }
}

/// Any text for a notification's body, escaped for markup where the server advertises `body-markup`.
pub fn notification_body_for<'a>(text: &'a str, capabilities: &[String]) -> Cow<'a, str> {
    if capabilities.iter().any(|c| c == BODY_MARKUP) {
        display::markup_escaped(text)
    } else {
        Cow::Borrowed(text)
    }
}

/// A notification this process sent, and who may answer it.
#[derive(Debug, Clone, PartialEq)]
pub struct SentNotification {
    pub execution_id: String,
    pub seq: u64,
    /// The id the notification server gave it (the reply to `Notify`).
    pub id: u32,
    /// The unique bus name (`:1.5`) that owned `org.freedesktop.Notifications` when it was sent (GetNameOwner).
    /// Any connection on the session bus can emit a signal that looks like the server's; only this one's
    /// counts.
    pub server: String,
}

/// A signal about a notification as it arrived on the bus: who sent it, and what it says.
#[derive(Debug, Clone, PartialEq)]
pub struct NotificationSignal<'a> {
    /// The unique bus name of the connection that emitted it (`None` when the bus did not say).
    pub sender: Option<&'a str>,
    /// The notification it names.
    pub id: u32,
    /// The action's key for `ActionInvoked` (`default`, `approve`, `reject`).
    pub key: &'a str,
}

/// What a person did on a notification, once the signal is known to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotificationAction {
    /// The default action (a click on the notification): show the run in the window.
    Open,
    Approve,
    Reject,
}

impl SentNotification {
    /// Whether a signal comes from the server that was sent this notification and names it: a signal from
    /// any other connection, or about another notification, is none of this notification's business.
    pub fn is_from_its_server(&self, signal: &NotificationSignal<'_>) -> bool {
        signal.sender == Some(self.server.as_str()) && signal.id == self.id
    }

    /// The action an `ActionInvoked` signal stands for, or `None` when it does not count: not from the server
    /// this notification was sent to, about another notification, or a key no notification offers. (Approve on
    /// a call decided in the window only is refused by [`Api::answer_notification`], which asks again.)
    pub fn action(&self, signal: &NotificationSignal<'_>) -> Option<NotificationAction> {
        if !self.is_from_its_server(signal) {
            return None;
        }
        match signal.key {
            "default" => Some(NotificationAction::Open),
            "approve" => Some(NotificationAction::Approve),
            "reject" => Some(NotificationAction::Reject),
            _ => None,
        }
    }
}

/// What an `ActionInvoked` signal came to.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionOutcome {
    /// It does not count (see [`SentNotification::action`]): nothing was decided, and the notification still
    /// waits for its server.
    Ignored,
    /// The person asked to see the run: the host opens its window on it.
    Open,
    /// Approve or Reject was answered.
    Answered(NotificationAnswer),
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
        NotificationCard {
            execution_id: action.execution_id.clone(),
            seq: action.seq,
            summary: display::visible(&format!(
                "{}.{} awaits approval",
                action.connector, action.method
            ))
            .into_owned(),
            body: match action.quorum_line() {
                // Four eyes: the next person sees they would be the second, before the arguments.
                Some(line) => format!(
                    "{}\n{}",
                    display::visible(&line),
                    display::notification_body(
                        action.args.as_ref(),
                        action.canonical.as_ref(),
                        source.as_deref(),
                    )
                ),
                None => display::notification_body(
                    action.args.as_ref(),
                    action.canonical.as_ref(),
                    source.as_deref(),
                ),
            },
            confirm_in_app: self.confirm_in_app(action),
        }
    }

    /// The reminder for a waiting call whose `decideWithin` is 80% spent (docs/design.md, "Deciding in
    /// time"): the same card, its summary saying how long is left. `None` while no reminder is due (no
    /// deadline, or less than 80% of the time has passed) and once the deadline has passed.
    pub async fn reminder_card(
        &self,
        action: &PendingAction,
        now: i64,
    ) -> Option<NotificationCard> {
        let left = reminder_due(action, now)?;
        let mut card = self.notification_card(action).await;
        let minutes = ((left + 59_999) / 60_000).max(1);
        card.summary = display::visible(&format!(
            "{}.{}: {minutes} min left to decide",
            action.connector, action.method
        ))
        .into_owned();
        Some(card)
    }

    /// An `ActionInvoked` signal on a notification this process sent: Approve and Reject decide as
    /// [`Api::answer_notification`] does; Open is for the host to do. A signal that does not count — from
    /// another connection than the notification server's, about another notification, or with a key that was
    /// not offered — decides nothing.
    pub async fn action_invoked(
        &self,
        sent: &SentNotification,
        signal: &NotificationSignal<'_>,
    ) -> Result<ActionOutcome, ApiError> {
        let approve = match sent.action(signal) {
            None => return Ok(ActionOutcome::Ignored),
            Some(NotificationAction::Open) => return Ok(ActionOutcome::Open),
            Some(NotificationAction::Approve) => true,
            Some(NotificationAction::Reject) => false,
        };
        self.answer_notification(&sent.execution_id, sent.seq, approve)
            .await
            .map(ActionOutcome::Answered)
    }

    /// Whether the call must be decided in the window: its connector lists the method under `confirmInApp`,
    /// or the `ask` rule that asked for it said `confirmInApp: true` (recorded with the call when it asked,
    /// so nothing is judged again here and no connector is started to find out).
    pub fn confirm_in_app(&self, action: &PendingAction) -> bool {
        action.confirm_in_app
            || self.home.config.as_ref().is_some_and(|config| {
                config
                    .connectors
                    .iter()
                    .find(|c| c.name == action.connector)
                    .is_some_and(|c| c.confirm_in_app.lists(&action.method))
            })
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
        if self.confirm_in_app(&action) {
            return Err(ApiError::invalid_args(
                "This call is decided in the app's window only (confirmInApp).",
            ));
        }
        let decided = if approve {
            // Bound to the call the notification named: if the run moved on, the answer is stale.
            let shown = codemode::CallRef {
                seq,
                digest: Some(action.digest.clone()),
            };
            self.approve_call(id, Some(&shown), Actor::Notification, None)
                .await
                .map(|outcome| outcome_status(&outcome))
        } else {
            self.reject_call(id, seq, Some(&action.digest), Actor::Notification, None)
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
    pub(crate) fn source_of(&self, id: &str) -> Option<String> {
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

/// How long is left (ms) before a waiting call's `decideWithin` deadline, once 80% of that time has passed;
/// `None` before then, without a deadline, and after it.
pub fn reminder_due(action: &PendingAction, now: i64) -> Option<i64> {
    let (by, within) = (action.decide_by?, action.decide_within?);
    let left = by - now;
    (left > 0 && left * 5 <= within).then_some(left)
}
