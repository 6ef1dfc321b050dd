//! The audit log: runs read, filtered and exported, insights, and what is done to a run afterwards (rollback,
//! recover, adopt, delete).

use crate::console::{CommandResult, Console};
use codemode::{
    ExecutionPage, ExecutionQuery, ExecutionState, Outcome, RollbackReport, ToolLogEntry,
};
use codemode_api::{ApiError, ExportFormat, HistoryFilter};
use serde::Serialize;
use tauri::State;

#[tauri::command]
pub async fn execution(console: State<'_, Console>, id: String) -> CommandResult<ExecutionState> {
    console.api().await?.execution(&id)
}

#[tauri::command]
pub async fn list_executions(
    console: State<'_, Console>,
    query: ExecutionQuery,
    filter: Option<HistoryFilter>,
) -> CommandResult<ExecutionPage> {
    let api = console.api().await?;
    api.executions(&filtered(&api, query, filter)?)
}

/// `query` (status, text, page) with the history filter's fields, when the view has one.
fn filtered(
    api: &codemode_api::Api,
    query: ExecutionQuery,
    filter: Option<HistoryFilter>,
) -> Result<ExecutionQuery, ApiError> {
    let Some(filter) = filter else {
        return Ok(query);
    };
    let from_filter = filter.query(api.now_ms())?;
    Ok(ExecutionQuery {
        since: from_filter.since,
        until: from_filter.until,
        call: from_filter.call,
        decided_by: from_filter.decided_by,
        source: from_filter.source,
        ..query
    })
}

/// Where an export was written, and what it holds.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportReport {
    path: String,
    runs: u64,
    calls: u64,
}

#[tauri::command]
/// Every run the view's filters select, written through the same API call as `codemode export` to a new file
/// in the user's downloads folder (or the data directory's `exports/` when there is none).
pub async fn export_executions(
    console: State<'_, Console>,
    query: ExecutionQuery,
    filter: Option<HistoryFilter>,
    format: String,
) -> CommandResult<ExportReport> {
    let api = console.api().await?;
    let format = ExportFormat::parse(&format)?;
    let query = filtered(&api, query, filter)?;
    let folder = downloads().unwrap_or_else(|| console.dir.join("exports"));
    let failed = |e: std::io::Error| {
        ApiError::internal(format!(
            "Could not write the export in {}: {e}",
            folder.display()
        ))
    };
    std::fs::create_dir_all(&folder).map_err(failed)?;
    let stamp = codemode::format_moment(api.now_ms()).replace([':', '.'], "-");
    let extension = match format {
        ExportFormat::Jsonl => "jsonl",
        ExportFormat::Csv => "csv",
    };
    let path = folder.join(format!("codemode-export-{stamp}.{extension}"));
    let file = std::fs::File::create(&path).map_err(failed)?;
    let mut out = std::io::BufWriter::new(file);
    let exported = api.export(&query, format, &mut out)?;
    Ok(ExportReport {
        path: path.display().to_string(),
        runs: exported.runs,
        calls: exported.calls,
    })
}

/// The user's downloads folder: `$XDG_DOWNLOAD_DIR`, else `~/Downloads` when it exists.
fn downloads() -> Option<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_DOWNLOAD_DIR").filter(|d| !d.is_empty()) {
        return Some(dir.into());
    }
    let home = std::path::PathBuf::from(std::env::var_os("HOME")?);
    Some(home.join("Downloads")).filter(|d| d.is_dir())
}

#[tauri::command]
/// How people decided on the calls of runs begun since `since` (7d, RFC 3339; all when empty).
pub async fn insights(
    console: State<'_, Console>,
    since: Option<String>,
) -> CommandResult<codemode::Insights> {
    console.api().await?.insights_since(since)
}

#[tauri::command]
pub async fn rollback_preview(
    console: State<'_, Console>,
    id: String,
) -> CommandResult<Vec<ToolLogEntry>> {
    console.api().await?.rollback_plan(&id).await
}

#[tauri::command]
pub async fn rollback(console: State<'_, Console>, id: String) -> CommandResult<RollbackReport> {
    console.api().await?.rollback(&id).await
}

#[tauri::command]
pub async fn recover(console: State<'_, Console>, id: String) -> CommandResult<Outcome> {
    console.api().await?.recover(&id).await
}

#[tauri::command]
pub async fn adopt(console: State<'_, Console>, id: String) -> CommandResult<ExecutionState> {
    console.api().await?.adopt(&id)
}

#[tauri::command]
pub async fn delete_execution(console: State<'_, Console>, id: String) -> CommandResult<()> {
    console.api().await?.delete(&id).await
}
