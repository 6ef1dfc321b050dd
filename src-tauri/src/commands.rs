//! The window's commands: each parses its arguments, calls `codemode_api` and returns what it answers; failures
//! reach the UI as `{code, message}`. Decisions made here are recorded as `console`.

use crate::console::{CommandResult, Console, Preferences};
use codemode::{
    Actor, CallRef, ExecutionPage, ExecutionQuery, ExecutionState, Outcome, RollbackReport,
    SaveSnippet, Snippet, ToolLogEntry,
};
use codemode_api::{
    AllowPreview, AllowReport, ApiError, ApprovalCard, ConnectorInfo, DecisionResult, ExportFormat,
    HistoryFilter, MethodFlag, PreviewView, QueuedCall, Rerun, RuntimeForm, ServerDraft, ShownCall,
    TemplateField, TestReport, TestTarget,
};
use connectors::config::{self, RuntimeSettings};
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

/// The Playground: the same path an agent's program takes.
#[tauri::command]
pub async fn run_program(console: State<'_, Console>, code: String) -> CommandResult<Outcome> {
    console.api().await?.run(&code, "Playground").await
}

/// "Rerun from here" on a timeline entry: the same API call as `codemode rerun ID --from SEQ`.
#[tauri::command]
pub async fn rerun_execution(
    console: State<'_, Console>,
    id: String,
    from: Option<u64>,
) -> CommandResult<Rerun> {
    console.api().await?.rerun(&id, from, None).await
}

#[tauri::command]
pub async fn snippets(console: State<'_, Console>) -> CommandResult<Vec<Snippet>> {
    console.api().await?.snippets()
}

#[tauri::command]
pub async fn save_snippet(
    console: State<'_, Console>,
    name: String,
    execution_id: String,
    description: Option<String>,
) -> CommandResult<Snippet> {
    let save = SaveSnippet {
        execution_id,
        description,
        input_schema: None,
    };
    console.api().await?.save_snippet(&name, save)
}

#[tauri::command]
pub async fn delete_snippet(console: State<'_, Console>, name: String) -> CommandResult<()> {
    console.api().await?.delete_snippet(&name)
}

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

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    runtime: RuntimeForm,
    preferences: Preferences,
    data_dir: String,
    config_path: String,
}

#[tauri::command]
pub async fn settings(app: AppHandle, console: State<'_, Console>) -> CommandResult<SettingsView> {
    let runtime = match console.api().await {
        Ok(api) => api.runtime_settings(),
        Err(_) => RuntimeForm::from(&RuntimeSettings::default()),
    };
    Ok(SettingsView {
        runtime,
        preferences: console.preferences(&app),
        data_dir: console.dir.display().to_string(),
        config_path: console.dir.join(config::FILE_NAME).display().to_string(),
    })
}

/// Writes the runtime settings to `connectors.json` (shared with the CLI and `codemode mcp`) and reopens the
/// data directory with them.
#[tauri::command]
pub async fn save_runtime_settings(
    app: AppHandle,
    console: State<'_, Console>,
    runtime: RuntimeForm,
) -> CommandResult<SettingsView> {
    console.api().await?.save_runtime_settings(&runtime)?;
    console.reopen().await;
    settings(app, console).await
}

#[tauri::command]
pub async fn save_preferences(
    app: AppHandle,
    console: State<'_, Console>,
    preferences: Preferences,
) -> CommandResult<Preferences> {
    console.save_preferences(&app, &preferences)?;
    Ok(console.preferences(&app))
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

/// Settings → "Approve from a phone": whether the page is served and where, and the paired devices.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhoneView {
    serving: Option<codemode_phone::Serving>,
    devices: Vec<codemode::Device>,
    /// The authority's fingerprint, which the phone's pairing page shows too.
    fingerprint: Option<String>,
    listen: &'static str,
}

#[tauri::command]
pub async fn phone(console: State<'_, Console>) -> CommandResult<PhoneView> {
    let api = console.api().await?;
    let serving = console.phone_serving().await;
    Ok(PhoneView {
        fingerprint: serving.as_ref().map(|s| s.fingerprint.clone()),
        serving,
        devices: api.devices()?,
        listen: codemode_phone::NETWORK_LISTEN,
    })
}

#[tauri::command]
pub async fn set_phone(
    app: AppHandle,
    console: State<'_, Console>,
    on: bool,
) -> CommandResult<PhoneView> {
    console.set_phone(&app, on).await?;
    phone(console).await
}

/// A one-time pairing code for a device, with its link and the link as a QR code to scan.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairingView {
    pairing: codemode_api::Pairing,
    link: String,
    qr_svg: Option<String>,
}

#[tauri::command]
pub async fn pair_phone(console: State<'_, Console>, name: String) -> CommandResult<PairingView> {
    let serving = console.phone_serving().await.ok_or_else(|| {
        ApiError::invalid_args(
            "Turn on \"Approve from a phone\" first: the link points to its page.",
        )
    })?;
    let pairing = console.api().await?.pair_device(&name)?;
    let link = codemode_phone::pairing_link(&serving.url, &pairing.code);
    Ok(PairingView {
        qr_svg: codemode_phone::qr_svg(&link),
        pairing,
        link,
    })
}

#[tauri::command]
pub async fn revoke_phone(console: State<'_, Console>, name: String) -> CommandResult<PhoneView> {
    console.api().await?.revoke_device(&name)?;
    phone(console).await
}
