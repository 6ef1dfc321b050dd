//! What the window shows as it opens: the frame's overview and the run it was opened for.

use crate::console::{CommandResult, Console};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use tauri::{AppHandle, Manager, State};

/// Everything the frame shows: counts for the sidebar, the data directory, and what is wrong, if anything.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Overview {
    data_dir: String,
    /// The user's home folder, which the window shows as `~`.
    home_dir: Option<String>,
    fatal: Option<String>,
    config_error: Option<String>,
    other_instance: Option<String>,
    counts: BTreeMap<&'static str, u64>,
    mcp_config: String,
    codemode_path: String,
}

#[tauri::command]
pub async fn overview(console: State<'_, Console>) -> CommandResult<Overview> {
    let codemode_path = codemode_binary();
    let mut overview = Overview {
        data_dir: console.dir.display().to_string(),
        home_dir: std::env::var("HOME").ok().filter(|home| home.len() > 1),
        fatal: console.fatal().await,
        config_error: None,
        other_instance: console.other_instance.clone(),
        counts: BTreeMap::new(),
        mcp_config: mcp_config(&codemode_path, &console.dir),
        codemode_path,
    };
    if let Ok(api) = console.api().await {
        overview.config_error = api.config_error().map(str::to_owned);
        for (status, count) in api.status_counts()? {
            overview.counts.insert(status.as_str(), count);
        }
    }
    Ok(overview)
}

/// The `codemode` CLI installed beside this app, which MCP clients start as `codemode mcp`.
fn codemode_binary() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("codemode")))
        .filter(|path| path.exists())
        .map(|path| path.display().to_string())
        .unwrap_or_else(|| "codemode".to_owned())
}

fn mcp_config(binary: &str, dir: &std::path::Path) -> String {
    let mut args = vec![Value::from("mcp")];
    if std::env::var_os("CODEMODE_HOME").is_some() || dir != connectors::home::resolve_dir(None) {
        args = vec![
            Value::from("--home"),
            Value::from(dir.display().to_string()),
            Value::from("mcp"),
        ];
    }
    let config = json!({"mcpServers": {"codemode": {"command": binary, "args": args}}});
    serde_json::to_string_pretty(&config).unwrap_or_default()
}

/// The run the window should show as it starts (it was opened by a link, the tray or a notification). With
/// `CODEMODE_TIMINGS=<file>`, how long the window took to become usable is appended there (the app's benchmark).
#[tauri::command]
pub fn take_open_request(app: AppHandle) -> Option<crate::desktop::OpenRun> {
    let desktop = app.try_state::<crate::desktop::Desktop>()?;
    if let Some(took) = desktop.window_ready()
        && let Some(file) = std::env::var_os("CODEMODE_TIMINGS")
    {
        use std::io::Write;
        let line = format!("window ready in {} ms\n", took.as_millis());
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .and_then(|mut f| f.write_all(line.as_bytes()));
    }
    desktop.take_open_request()
}
