//! Live updates across processes: the database's change token is polled a few times a second; any change (a
//! pause written by `codemode mcp`, a decision from the CLI, our own writes) is pushed to the window as a
//! `changed` event, and each newly paused run raises a desktop notification when they are enabled. Paused runs
//! past their TTL are expired on the configured interval, by the loop `codemode mcp` runs too. A change of connectors.json
//! (the data directory opened again) is pushed as `connectors-changed`.

use crate::console::Console;
use codemode::PendingAction;
use serde_json::json;
use std::collections::HashSet;
use std::time::Duration;
use tauri::{AppHandle, Emitter, Manager};

/// How often the database is looked at (one `PRAGMA data_version`); a pause from another process shows within
/// this plus the UI's fetch and render, which together stay under 100 ms.
const POLL: Duration = Duration::from_millis(50);

pub fn start(app: AppHandle) {
    let sweeping = app.clone();
    tauri::async_runtime::spawn(async move {
        sweeping
            .state::<Console>()
            .keep_sweeping("codemode-console")
            .await
    });
    tauri::async_runtime::spawn(async move {
        let mut last_token = None;
        let mut last_generation = None;
        let mut known: Option<HashSet<(String, u64)>> = None;
        // The waiting calls as last read, for the reminders that fall due between changes.
        let mut waiting: Vec<PendingAction> = Vec::new();
        let mut reminded: HashSet<(String, u64)> = HashSet::new();
        let mut ticks = tokio::time::interval(POLL);
        loop {
            ticks.tick().await;
            let console = app.state::<Console>();
            let Ok(api) = console.api().await else {
                continue;
            };
            remind(&app, &api, &console, &waiting, &mut reminded);
            // connectors.json changed (here, in the CLI, by hand): the Connectors view lists them again.
            let generation = console.generation();
            if last_generation.is_some_and(|g| g != generation) {
                let _ = app.emit("connectors-changed", json!({}));
            }
            last_generation = Some(generation);
            let token = match api.change_token() {
                Ok(token) => token,
                Err(error) => {
                    eprintln!("codemode-console: cannot read the database: {error}");
                    continue;
                }
            };
            if last_token == Some(token) {
                continue;
            }
            last_token = Some(token);
            let pending = api.pending(None).unwrap_or_default();
            let now: HashSet<(String, u64)> = pending
                .iter()
                .map(|p| (p.execution_id.clone(), p.seq))
                .collect();
            let fresh: Vec<&PendingAction> = match &known {
                // What was already waiting when the app opened is in the queue, not news.
                None => Vec::new(),
                Some(known) => pending
                    .iter()
                    .filter(|p| !known.contains(&(p.execution_id.clone(), p.seq)))
                    .collect(),
            };
            reminded.retain(|call| now.contains(call));
            known = Some(now);
            let fresh_ids: Vec<&str> = fresh.iter().map(|p| p.execution_id.as_str()).collect();
            let _ = app.emit(
                "changed",
                json!({"pending": pending.len(), "fresh": fresh_ids}),
            );
            let desktop = app.try_state::<crate::desktop::Desktop>();
            if let Some(desktop) = &desktop {
                desktop.show_waiting(&app, &pending);
            }
            let held = desktop.is_some_and(|d| d.notifications_paused());
            if !fresh.is_empty() && !held && console.preferences().notifications {
                for action in fresh {
                    notify(&app, action);
                }
            }
            waiting = pending;
        }
    });
}

/// A reminder for each waiting call whose `decideWithin` is 80% spent, once per call (docs/desktop.md,
/// "Deciding in time"); held like any notification while notifications are paused or off.
fn remind(
    app: &AppHandle,
    api: &codemode_api::Api,
    console: &Console,
    waiting: &[PendingAction],
    reminded: &mut HashSet<(String, u64)>,
) {
    let now = api.now_ms();
    for action in waiting {
        let call = (action.execution_id.clone(), action.seq);
        if reminded.contains(&call) || codemode_api::reminder_due(action, now).is_none() {
            continue;
        }
        reminded.insert(call);
        let held = app
            .try_state::<crate::desktop::Desktop>()
            .is_some_and(|d| d.notifications_paused());
        if held || !console.preferences().notifications {
            continue;
        }
        let app = app.clone();
        let action = action.clone();
        tauri::async_runtime::spawn(async move {
            let Ok(api) = app.state::<Console>().api().await else {
                return;
            };
            let Some(card) = api.reminder_card(&action, api.now_ms()).await else {
                return;
            };
            drop(api);
            if let Err(error) = crate::notifications::show_waiting(&app, &card).await {
                eprintln!("codemode-console: could not show a reminder: {error}");
            }
        });
    }
}

/// One notification per newly paused run (notifications.rs): where the notification server advertises
/// `actions`, it offers Approve, Reject and Open (its default action), or only Open for a call marked
/// `confirmInApp`; without `actions` it is text only. Approve and Reject decide as the window does, recorded
/// `by: "notification"`, and only when the server the notification was sent to says so; a decision that came
/// too late is answered with a notification saying so (docs/desktop.md). A failure to notify is logged, never
/// fatal.
fn notify(app: &AppHandle, action: &PendingAction) {
    let app = app.clone();
    let action = action.clone();
    tauri::async_runtime::spawn(async move {
        let Ok(api) = app.state::<Console>().api().await else {
            return;
        };
        let card = api.notification_card(&action).await;
        // The API is not held while the notification waits for an answer: connectors.json may change meanwhile.
        drop(api);
        if let Err(error) = crate::notifications::show_waiting(&app, &card).await {
            eprintln!("codemode-console: could not show a notification: {error}");
        }
    });
}
