//! Settings: the runtime block of `connectors.json` and the window's own preferences.

use crate::console::{CommandResult, Console, Preferences};
use codemode_api::RuntimeForm;
use connectors::config::{self, RuntimeSettings};
use serde::Serialize;
use tauri::State;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    runtime: RuntimeForm,
    preferences: Preferences,
    data_dir: String,
    config_path: String,
}

#[tauri::command]
pub async fn settings(console: State<'_, Console>) -> CommandResult<SettingsView> {
    let runtime = match console.api().await {
        Ok(api) => api.runtime_settings(),
        Err(_) => RuntimeForm::from(&RuntimeSettings::default()),
    };
    Ok(SettingsView {
        runtime,
        preferences: console.preferences(),
        data_dir: console.dir.display().to_string(),
        config_path: console.dir.join(config::FILE_NAME).display().to_string(),
    })
}

/// Writes the runtime settings to `connectors.json` (shared with the CLI and `codemode mcp`) and reopens the
/// data directory with them.
#[tauri::command]
pub async fn save_runtime_settings(
    console: State<'_, Console>,
    runtime: RuntimeForm,
) -> CommandResult<SettingsView> {
    console.api().await?.save_runtime_settings(&runtime)?;
    console.reopen().await;
    settings(console).await
}

#[tauri::command]
pub async fn save_preferences(
    console: State<'_, Console>,
    preferences: Preferences,
) -> CommandResult<Preferences> {
    console.save_preferences(&preferences)?;
    Ok(console.preferences())
}
