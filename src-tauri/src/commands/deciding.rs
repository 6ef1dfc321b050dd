//! The approval queue and its decisions: cards, previews, approve and reject (one or many), edits, and approve
//! and allow.

use crate::console::{CommandResult, Console};
use codemode::{Actor, CallRef, Outcome};
use codemode_api::{
    AllowPreview, AllowReport, ApprovalCard, DecisionResult, PreviewView, QueuedCall, ShownCall,
};
use serde_json::Value;
use tauri::State;

#[tauri::command]
pub async fn pending(console: State<'_, Console>) -> CommandResult<Vec<QueuedCall>> {
    console.api().await?.approval_queue()
}

#[tauri::command]
pub async fn approval_card(
    console: State<'_, Console>,
    id: String,
    seq: u64,
) -> CommandResult<ApprovalCard> {
    console.api().await?.approval_card(&id, seq)
}

#[tauri::command]
/// Bound to the call the card showed (`seq` and `digest`): a call that changed meanwhile is `stale`.
pub async fn approve(
    console: State<'_, Console>,
    id: String,
    seq: u64,
    digest: String,
    args: Option<serde_json::Value>,
) -> CommandResult<Outcome> {
    console
        .api()
        .await?
        .approve_call(
            &id,
            Some(&CallRef {
                seq,
                digest: Some(digest),
            }),
            Actor::Console,
            args,
        )
        .await
}

#[tauri::command]
pub async fn reject(
    console: State<'_, Console>,
    id: String,
    seq: u64,
    digest: String,
    reason: Option<String>,
) -> CommandResult<()> {
    console
        .api()
        .await?
        .reject_call(&id, seq, Some(&digest), Actor::Console, reason.as_deref())
        .await
}

/// Approves several runs' waiting calls, each its own decision, with one report.
#[tauri::command]
pub async fn approve_many(
    console: State<'_, Console>,
    calls: Vec<ShownCall>,
) -> CommandResult<Vec<DecisionResult>> {
    Ok(console
        .api()
        .await?
        .approve_many(&calls, Actor::Console)
        .await)
}

/// Rejects several waiting calls, each as shown, with one reason, each its own decision.
#[tauri::command]
pub async fn reject_many(
    console: State<'_, Console>,
    calls: Vec<ShownCall>,
    reason: Option<String>,
) -> CommandResult<Vec<DecisionResult>> {
    Ok(console
        .api()
        .await?
        .reject_many(&calls, Actor::Console, reason.as_deref())
        .await)
}

#[tauri::command]
pub async fn check_edit(console: State<'_, Console>, id: String, args: Value) -> CommandResult<()> {
    console.api().await?.check_edit(&id, &args).await
}

#[tauri::command]
pub async fn approve_allowing(
    console: State<'_, Console>,
    id: String,
    seq: u64,
    digest: String,
    intent: codemode::AllowIntent,
    approve_waiting: bool,
) -> CommandResult<AllowReport> {
    console
        .api()
        .await?
        .approve_allowing(
            &id,
            Some(&CallRef {
                seq,
                digest: Some(digest),
            }),
            Actor::Console,
            None,
            &intent,
            approve_waiting,
        )
        .await
}

/// The rule "Approve and allow" would add for the call shown, and how far it would reach.
#[tauri::command]
pub async fn allow_reach(
    console: State<'_, Console>,
    id: String,
    seq: u64,
    digest: String,
    intent: codemode::AllowIntent,
) -> CommandResult<AllowPreview> {
    console.api().await?.allow_reach(
        &id,
        Some(&CallRef {
            seq,
            digest: Some(digest),
        }),
        &intent,
        Actor::Console,
    )
}

/// What a waiting call would change, shown above its arguments; kept as what the person was shown.
#[tauri::command]
pub async fn preview(
    console: State<'_, Console>,
    id: String,
    seq: u64,
) -> CommandResult<Option<PreviewView>> {
    console.api().await?.preview(&id, seq).await
}

/// A kept preview (what a person was shown) with its diff, for the audit log.
#[tauri::command]
pub fn render_preview(preview: codemode::Preview) -> PreviewView {
    PreviewView::new(preview)
}
