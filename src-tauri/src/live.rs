//! Live updates across processes: the database's change token is polled a few times a second; any change (a
//! pause written by `codemode mcp`, a decision from the CLI, our own writes) is pushed to the window as a
//! `changed` event, and each newly paused run raises a desktop notification when they are enabled. Paused runs
//! past their TTL are expired on the configured interval, as `codemode mcp` does.

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
    tauri::async_runtime::spawn(async move {
        let mut last_token = None;
        let mut known: Option<HashSet<(String, u64)>> = None;
        let mut next_sweep = tokio::time::Instant::now();
        let mut ticks = tokio::time::interval(POLL);
        loop {
            ticks.tick().await;
            let console = app.state::<Console>();
            let Ok(api) = console.api().await else {
                continue;
            };
            if tokio::time::Instant::now() >= next_sweep {
                next_sweep = tokio::time::Instant::now() + api.sweep_interval();
                if let Err(error) = api.sweep().await {
                    eprintln!("codemode-console: expiry sweep failed: {error}");
                }
            }
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
            known = Some(now);
            let fresh_ids: Vec<&str> = fresh.iter().map(|p| p.execution_id.as_str()).collect();
            let _ = app.emit(
                "changed",
                json!({"pending": pending.len(), "fresh": fresh_ids}),
            );
            if !fresh.is_empty() && console.preferences(&app).notifications {
                for action in fresh {
                    notify(&app, action);
                }
            }
        }
    });
}

/// One notification per newly paused run; clicking it brings the window to that run. A failure to notify is
/// logged, never fatal.
fn notify(app: &AppHandle, action: &PendingAction) {
    let summary = format!("{}.{} awaits approval", action.connector, action.method);
    let body = action
        .args
        .as_ref()
        .map(|args| preview(&args.to_string(), 140))
        .unwrap_or_default();
    let app = app.clone();
    let id = action.execution_id.clone();
    tauri::async_runtime::spawn_blocking(move || {
        let shown = notify_rust::Notification::new()
            .appname("Codemode Console")
            .summary(&summary)
            .body(&body)
            .action("default", "Review")
            .show();
        match shown {
            // Waits (on this blocking thread) until the notification is clicked or closed.
            Ok(handle) => handle.wait_for_action(|clicked| {
                if clicked == "default" {
                    if let Some(window) = app.get_webview_window("main") {
                        let _ = window.unminimize();
                        let _ = window.set_focus();
                    }
                    let _ = app.emit("open-run", json!({ "id": id }));
                }
            }),
            Err(error) => eprintln!("codemode-console: could not show a notification: {error}"),
        }
    });
}

fn preview(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}
