//! The Rules view: the rules in force, adding, replacing and removing them, and testing a call against them.

use crate::console::{CommandResult, Console};
use codemode::Actor;
use serde_json::Value;
use tauri::State;

#[tauri::command]
pub async fn rules(console: State<'_, Console>) -> CommandResult<Vec<codemode::RuleListing>> {
    console.api().await?.rules()
}

#[tauri::command]
pub async fn add_rule(console: State<'_, Console>, rule: codemode::Rule) -> CommandResult<()> {
    console.api().await?.add_rule(rule, Actor::Console)
}

#[tauri::command]
pub async fn replace_rule(
    console: State<'_, Console>,
    id: String,
    rule: codemode::Rule,
) -> CommandResult<()> {
    console.api().await?.replace_rule(&id, rule)
}

#[tauri::command]
pub async fn remove_rule(console: State<'_, Console>, id: String) -> CommandResult<()> {
    console.api().await?.remove_rule(&id)
}

/// Recent distinct calls, for the rules view's test box.
#[tauri::command]
pub async fn recent_calls(
    console: State<'_, Console>,
) -> CommandResult<Vec<codemode_api::RecentCall>> {
    console.api().await?.recent_calls(30)
}

/// What the rules would do with a call, without running it.
#[tauri::command]
pub async fn test_rules(
    console: State<'_, Console>,
    call: String,
    args: Option<Value>,
    source: Option<String>,
) -> CommandResult<codemode::Verdict> {
    console
        .api()
        .await?
        .test_rules(&call, args.as_ref(), source.as_deref())
        .await
}
