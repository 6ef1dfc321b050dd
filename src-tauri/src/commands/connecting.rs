//! The Connectors view: listing, adding, testing and removing servers, a tool's flags and templates, and
//! signing in to remote ones.

use crate::console::{CommandResult, Console};
use codemode_api::{
    ApiError, ConnectorInfo, MethodFlag, ServerDraft, TemplateField, TestReport, TestTarget,
};
use serde_json::Value;
use tauri::State;

/// Lists every connector with its methods; MCP servers that have not started yet are started to list theirs.
#[tauri::command]
pub async fn connectors(console: State<'_, Console>) -> CommandResult<Vec<ConnectorInfo>> {
    Ok(console.api().await?.connectors().await)
}

/// Adds a server described by its fields; every process uses it from its next operation.
#[tauri::command]
pub async fn add_server(console: State<'_, Console>, draft: ServerDraft) -> CommandResult<()> {
    console.api().await?.add_server(&draft)
}

/// Adds the servers of a pasted Claude Desktop configuration (all or none); their names.
#[tauri::command]
pub async fn add_pasted(console: State<'_, Console>, text: String) -> CommandResult<Vec<String>> {
    console.api().await?.add_pasted(&text)
}

#[tauri::command]
pub async fn remove_connector(console: State<'_, Console>, name: String) -> CommandResult<()> {
    console.api().await?.remove_connector(&name)
}

/// Starts a server (a draft, a paste, or a configured one afresh) and lists its tools.
#[tauri::command]
pub async fn test_server(
    console: State<'_, Console>,
    target: TestTarget,
) -> CommandResult<TestReport> {
    console.api().await?.test_server(&target).await
}

#[tauri::command]
pub async fn set_method_flag(
    console: State<'_, Console>,
    connector: String,
    method: String,
    flag: MethodFlag,
    on: bool,
) -> CommandResult<()> {
    console
        .api()
        .await?
        .set_method_flag(&connector, &method, flag, on)
        .await
}

#[tauri::command]
pub async fn set_template(
    console: State<'_, Console>,
    connector: String,
    method: String,
    field: TemplateField,
    template: Option<Value>,
) -> CommandResult<()> {
    console
        .api()
        .await?
        .set_template(&connector, &method, field, template)
}

/// Signs in to a remote server: its authorization page opens in the system browser (`$BROWSER`, else
/// xdg-open), and this answers once the browser came back.
#[tauri::command]
pub async fn sign_in(console: State<'_, Console>, connector: String) -> CommandResult<()> {
    let mut opened = Ok(());
    console
        .api()
        .await?
        .sign_in(&connector, |address| opened = open_in_browser(address))
        .await?;
    opened
}

#[tauri::command]
pub async fn sign_out(console: State<'_, Console>, connector: String) -> CommandResult<bool> {
    console.api().await?.sign_out(&connector).await
}

fn open_in_browser(address: &str) -> CommandResult<()> {
    let browser = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| "xdg-open".to_owned());
    std::process::Command::new(&browser)
        .arg(address)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|mut child| {
            // Reaped when it exits (xdg-open hands the address on and ends).
            std::thread::spawn(move || child.wait());
        })
        .map_err(|e| ApiError::internal(format!("cannot open a browser ({browser}): {e}")))
}

/// The configured connectors without starting any server, shown while [`connectors`] starts them.
#[tauri::command]
pub async fn configured_connectors(
    console: State<'_, Console>,
) -> CommandResult<Vec<ConnectorInfo>> {
    Ok(console.api().await?.configured_connectors())
}
