//! Desktop notifications over the session bus (`org.freedesktop.Notifications`; docs/desktop.md,
//! "Notifications"), spoken with zbus directly so that an answer is taken only from the server the
//! notification was sent to. Any connection on the session bus may emit a signal that looks like that server's
//! `ActionInvoked`; so the server's unique name is looked up (GetNameOwner) first, the notification is sent to
//! that name, and only its signals naming the id it gave are read ([`codemode_api::SentNotification`]).

use crate::console::Console;
use codemode_api::{
    ActionOutcome, NotificationAnswer, NotificationCard, NotificationSignal, SentNotification,
};
use futures_lite::StreamExt;
use std::collections::HashMap;
use tauri::{AppHandle, Manager};

const SERVICE: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";
const APP_NAME: &str = "Codemode Console";
/// The server decides how long a notification stays (the specification's `-1`).
const SERVER_TIMEOUT: i32 = -1;

/// The notification server on the session bus now: the connection to it, its unique name, what it can do.
struct NotificationServer {
    connection: zbus::Connection,
    /// The unique bus name (`:1.5`) owning `org.freedesktop.Notifications`.
    owner: String,
    capabilities: Vec<String>,
}

impl NotificationServer {
    async fn connect() -> zbus::Result<NotificationServer> {
        let connection = zbus::Connection::session().await?;
        let bus = zbus::fdo::DBusProxy::new(&connection).await?;
        let owner = bus
            .get_name_owner(zbus::names::BusName::try_from(SERVICE)?)
            .await?
            .to_string();
        let capabilities: Vec<String> = connection
            .call_method(
                Some(owner.as_str()),
                PATH,
                Some(SERVICE),
                "GetCapabilities",
                &(),
            )
            .await?
            .body()
            .deserialize()?;
        Ok(NotificationServer {
            connection,
            owner,
            capabilities,
        })
    }

    fn offers(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
    }

    /// The server's signals about its notifications, as the bus routes them to this connection. Subscribed
    /// before `Notify`, so that an answer given at once is not missed; the rule names the server's unique
    /// name, and each signal's sender is checked again when it is read.
    async fn signals(&self) -> zbus::Result<zbus::MessageStream> {
        let rule = zbus::MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .sender(self.owner.as_str())?
            .interface(SERVICE)?
            .path(PATH)?
            .build();
        zbus::MessageStream::for_match_rule(rule, &self.connection, None).await
    }

    /// Sends a notification to the server (by its unique name) and returns the id it gave it.
    async fn notify(
        &self,
        summary: &str,
        body: &str,
        actions: &[(&str, &str)],
    ) -> zbus::Result<u32> {
        let actions: Vec<&str> = actions
            .iter()
            .flat_map(|(key, label)| [*key, *label])
            .collect();
        let hints: HashMap<&str, zbus::zvariant::Value<'_>> = HashMap::new();
        self.connection
            .call_method(
                Some(self.owner.as_str()),
                PATH,
                Some(SERVICE),
                "Notify",
                &(
                    APP_NAME,
                    0u32,
                    "",
                    summary,
                    body,
                    actions,
                    hints,
                    SERVER_TIMEOUT,
                ),
            )
            .await?
            .body()
            .deserialize()
    }
}

/// The notification of a waiting call. Where the server advertises `actions` it offers Approve, Reject and
/// Open (its default action), or only Open for a call marked `confirmInApp`, and this waits for the answer
/// until the notification is closed; without `actions` it is text only. The body is escaped for a server that
/// advertises `body-markup`.
pub async fn show_waiting(app: &AppHandle, card: &NotificationCard) -> zbus::Result<()> {
    let server = NotificationServer::connect().await?;
    let body = card.body_for(&server.capabilities);
    if !server.offers("actions") {
        server.notify(&card.summary, &body, &[]).await?;
        return Ok(());
    }
    let offered: &[(&str, &str)] = if card.confirm_in_app {
        &[("default", "Open")]
    } else {
        &[
            ("default", "Open"),
            ("approve", "Approve"),
            ("reject", "Reject"),
        ]
    };
    let mut signals = server.signals().await?;
    let id = server.notify(&card.summary, &body, offered).await?;
    let sent = SentNotification {
        execution_id: card.execution_id.clone(),
        seq: card.seq,
        id,
        server: server.owner.clone(),
    };
    while let Some(message) = signals.next().await {
        let Ok(message) = message else { continue };
        let header = message.header();
        let sender = header.sender().map(|name| name.as_str());
        match header.member().map(|member| member.as_str()) {
            Some("ActionInvoked") => {
                let Ok((nid, key)) = message.body().deserialize::<(u32, String)>() else {
                    continue;
                };
                let signal = NotificationSignal {
                    sender,
                    id: nid,
                    key: &key,
                };
                if answered(app, card, &sent, &signal).await {
                    break;
                }
            }
            Some("NotificationClosed") => {
                let Ok((nid, _reason)) = message.body().deserialize::<(u32, u32)>() else {
                    continue;
                };
                let signal = NotificationSignal {
                    sender,
                    id: nid,
                    key: "",
                };
                // A close from anyone else would only stop this listening early; it is ignored too.
                if sent.is_from_its_server(&signal) {
                    break;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Acts on an `ActionInvoked` signal; whether the notification is done with (decided, or found stale).
async fn answered(
    app: &AppHandle,
    card: &NotificationCard,
    sent: &SentNotification,
    signal: &NotificationSignal<'_>,
) -> bool {
    let outcome = match app.state::<Console>().api().await {
        Ok(api) => api.action_invoked(sent, signal).await,
        Err(error) => Err(error),
    };
    let (summary, body) = match outcome {
        Ok(ActionOutcome::Ignored) => return false,
        Ok(ActionOutcome::Open) => {
            crate::desktop::open_run(app, &card.execution_id);
            return false;
        }
        Ok(ActionOutcome::Answered(NotificationAnswer::Decided { .. })) => return true,
        Ok(ActionOutcome::Answered(NotificationAnswer::Stale(message))) => {
            tell(
                &format!(
                    "{} was not decided from here",
                    card.summary.trim_end_matches(" awaits approval")
                ),
                &message,
            )
            .await;
            return true;
        }
        // Refused (a call decided in the window only, a broken connectors.json): it still waits, and Open
        // still works.
        Err(error) => (
            "Codemode Console could not decide".to_owned(),
            error.message,
        ),
    };
    tell(&summary, &body).await;
    false
}

/// A notification that only tells (a decision that came too late, a refusal); a failure is logged.
async fn tell(summary: &str, body: &str) {
    let told = async {
        let server = NotificationServer::connect().await?;
        let body = codemode_api::notification_body_for(body, &server.capabilities);
        server.notify(summary, &body, &[]).await
    };
    if let Err(error) = told.await {
        eprintln!("codemode-console: could not show a notification: {error}");
    }
}
