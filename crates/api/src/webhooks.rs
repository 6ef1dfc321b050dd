//! Announcing each waiting call to the webhooks of `runtime.webhooks` (docs/phone.md, "Webhooks"): the
//! call as a notification renders it, with a signed link that opens its card on a paired phone. Each call is
//! announced once per webhook; an attempt that fails is tried again later, a few times, and a process that
//! stops mid-post leaves the call to be announced by the next.

use crate::deciding::ShownCall;
use crate::{Api, ApiError};
use connectors::config::{Webhook, WebhookFormat};
use serde::Serialize;
use serde_json::json;
use std::time::Duration;

/// Attempts at announcing one call to one webhook.
pub const WEBHOOK_ATTEMPTS: u32 = 5;

/// How long a webhook may take to answer.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// When attempt `n` is tried again if it did not arrive: 30 s, 1, 2, 4 minutes.
fn retry_after(attempt: u32) -> Duration {
    Duration::from_secs(15 << attempt.min(5))
}

/// One attempt at announcing one call to one webhook.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Announcement {
    pub execution_id: String,
    pub seq: u64,
    pub url: String,
    /// 1 for the first attempt.
    pub attempt: u32,
    /// Why it did not arrive; `None` when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Api {
    /// Announces every waiting call not yet announced (or due another attempt) to each webhook, with a
    /// signed link into the phone page at `page_url` (`https://host:port`). What was attempted, arrived or not.
    pub async fn announce_waiting(&self, page_url: &str) -> Result<Vec<Announcement>, ApiError> {
        let webhooks: Vec<Webhook> = self
            .home
            .config
            .as_ref()
            .map(|c| c.webhooks.clone())
            .unwrap_or_default();
        if webhooks.is_empty() {
            return Ok(Vec::new());
        }
        // Most rounds find every waiting call announced: one read says so, and nothing is written for them.
        let settled = self.home.runtime.settled_announcements(WEBHOOK_ATTEMPTS)?;
        let mut attempts = Vec::new();
        for queued in self.approval_queue()? {
            let action = &queued.action;
            for webhook in &webhooks {
                let key = (action.execution_id.clone(), action.seq, webhook.url.clone());
                if settled.contains(&key) {
                    continue;
                }
                let Some(attempt) = self.home.runtime.claim_announcement(
                    &action.execution_id,
                    action.seq,
                    &webhook.url,
                    &retry_after,
                    WEBHOOK_ATTEMPTS,
                )?
                else {
                    continue;
                };
                let card = self.notification_card(action).await;
                let shown = ShownCall {
                    execution_id: action.execution_id.clone(),
                    seq: action.seq,
                    digest: action.digest.clone(),
                };
                let link = self.sign_link(&shown)?;
                let message = Message {
                    summary: &card.summary,
                    text: &card.body,
                    link: &format!("{page_url}/link?{}", link.query()),
                    link_expires_at: link.expires_at,
                    shown: &shown,
                    connector: &action.connector,
                    method: &action.method,
                    source: queued.source.as_deref(),
                    expires_at: queued.expires_at,
                    confirm_in_app: card.confirm_in_app,
                };
                let error = post(webhook, &message).await.err();
                self.home.runtime.announcement_result(
                    &action.execution_id,
                    action.seq,
                    &webhook.url,
                    error.as_deref().map_or(Ok(()), Err),
                )?;
                attempts.push(Announcement {
                    execution_id: action.execution_id.clone(),
                    seq: action.seq,
                    url: webhook.url.clone(),
                    attempt,
                    error,
                });
            }
        }
        Ok(attempts)
    }
}

/// What an announcement says, whatever its format.
struct Message<'a> {
    summary: &'a str,
    text: &'a str,
    link: &'a str,
    link_expires_at: i64,
    shown: &'a ShownCall,
    connector: &'a str,
    method: &'a str,
    source: Option<&'a str>,
    expires_at: i64,
    confirm_in_app: bool,
}

async fn post(webhook: &Webhook, message: &Message<'_>) -> Result<(), String> {
    let client = reqwest::Client::builder()
        .timeout(WEBHOOK_TIMEOUT)
        .build()
        .map_err(|e| e.to_string())?;
    let request = match webhook.format {
        WebhookFormat::Json => client
            .post(&webhook.url)
            .header("content-type", "application/json")
            .body(
                json!({
                    "event": "paused",
                    "executionId": message.shown.execution_id,
                    "seq": message.shown.seq,
                    "digest": message.shown.digest,
                    "connector": message.connector,
                    "method": message.method,
                    "source": message.source,
                    "summary": message.summary,
                    "text": message.text,
                    "expiresAt": message.expires_at,
                    "confirmInApp": message.confirm_in_app,
                    "link": message.link,
                    "linkExpiresAt": message.link_expires_at,
                })
                .to_string(),
            ),
        WebhookFormat::Slack => client
            .post(&webhook.url)
            .header("content-type", "application/json")
            .body(
                json!({
                    "text": format!(
                        "*{}*\n```\n{}\n```\n<{}|Open on your phone> (once, within 15 minutes)",
                        slack_escaped(message.summary),
                        slack_escaped(message.text),
                        message.link
                    )
                })
                .to_string(),
            ),
        // ntfy: the text is the body; title and click action are headers, which carry no line breaks.
        WebhookFormat::Ntfy => client
            .post(&webhook.url)
            .header("content-type", "text/plain; charset=utf-8")
            .header("Title", one_line(message.summary))
            .header("Click", one_line(message.link))
            .header("Tags", "hourglass_flowing_sand")
            .header("Actions", format!("view, Open, {}", one_line(message.link)))
            .body(message.text.to_owned()),
    };
    let response = request.send().await.map_err(|e| e.to_string())?;
    let status = response.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(format!("the webhook answered {status}"))
    }
}

/// Slack's three characters with a meaning in message text.
fn slack_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Printable ASCII only: what an HTTP header can carry.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_back_off_from_thirty_seconds() {
        let waits: Vec<u64> = (1..WEBHOOK_ATTEMPTS)
            .map(|n| retry_after(n).as_secs())
            .collect();
        assert_eq!(waits, [30, 60, 120, 240]);
    }

    #[test]
    fn a_header_never_carries_a_line_break() {
        assert_eq!(one_line("a\r\nb é"), "a??b ?");
    }
}
