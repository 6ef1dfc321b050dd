//! The window's commands: each a few lines over the runtime. Decisions made here are recorded as `console`.

use crate::console::{CommandError, CommandResult, Console, Preferences};
use codemode::{
    Actor, ExecutionPage, ExecutionQuery, ExecutionState, Outcome, PendingAction, RollbackReport,
    SaveSnippet, Snippet, ToolLogEntry,
};
use connectors::config::{self, ConnectorKind, RuntimeSettings};
use connectors::mcp::ServerState;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;
use tauri::{AppHandle, State};

fn not_found(id: &str) -> CommandError {
    CommandError::new("not_found", format!("No execution \"{id}\""))
}

/// Everything the frame shows: counts for the sidebar, the data directory, and what is wrong, if anything.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Overview {
    data_dir: String,
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
        fatal: console.fatal().await,
        config_error: None,
        other_instance: console.other_instance.clone(),
        counts: BTreeMap::new(),
        mcp_config: mcp_config(&codemode_path, &console.dir),
        codemode_path,
    };
    if let Ok(home) = console.home().await {
        overview.config_error = home.config_error.clone();
        for (status, count) in home.runtime.status_counts()? {
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

/// One card of the approval queue: the pending call and the run it belongs to.
#[derive(Serialize)]
pub struct PendingCard {
    action: PendingAction,
    execution: ExecutionState,
    /// When the run will be expired (epoch ms), given the configured paused TTL.
    #[serde(rename = "expiresAt")]
    expires_at: i64,
}

#[tauri::command]
pub async fn pending(console: State<'_, Console>) -> CommandResult<Vec<PendingCard>> {
    let home = console.home().await?;
    let ttl = home.settings.paused_ttl.as_millis() as i64;
    let mut cards = Vec::new();
    for action in home.runtime.pending(None)? {
        if let Some(execution) = home.runtime.execution(&action.execution_id)? {
            cards.push(PendingCard {
                expires_at: execution.updated_at + ttl,
                action,
                execution,
            });
        }
    }
    Ok(cards)
}

#[tauri::command]
pub async fn execution(console: State<'_, Console>, id: String) -> CommandResult<ExecutionState> {
    let home = console.home().await?;
    home.runtime.execution(&id)?.ok_or_else(|| not_found(&id))
}

#[tauri::command]
pub async fn list_executions(
    console: State<'_, Console>,
    query: ExecutionQuery,
) -> CommandResult<ExecutionPage> {
    Ok(console.home().await?.runtime.list_executions(&query)?)
}

#[tauri::command]
pub async fn approve(console: State<'_, Console>, id: String) -> CommandResult<Outcome> {
    let home = console.home().await?;
    home.usable().map_err(|m| CommandError::new("config", m))?;
    Ok(home.runtime.approve(&id, Actor::Console).await?)
}

#[tauri::command]
pub async fn reject(console: State<'_, Console>, id: String, seq: u64) -> CommandResult<bool> {
    let home = console.home().await?;
    let rejected = home.runtime.reject(&id, seq, Actor::Console).await?;
    if !rejected {
        let status = home.runtime.execution(&id)?.map(|e| e.status);
        return Err(CommandError::new(
            "stale",
            match status {
                None => format!("No execution \"{id}\""),
                Some(status) => format!(
                    "Execution {id} is {} — nothing was rejected",
                    status.as_str()
                ),
            },
        ));
    }
    Ok(true)
}

#[tauri::command]
pub async fn rollback_preview(
    console: State<'_, Console>,
    id: String,
) -> CommandResult<Vec<ToolLogEntry>> {
    Ok(console.home().await?.runtime.rollback_plan(&id).await?)
}

#[tauri::command]
pub async fn rollback(console: State<'_, Console>, id: String) -> CommandResult<RollbackReport> {
    let home = console.home().await?;
    home.runtime.execution(&id)?.ok_or_else(|| not_found(&id))?;
    Ok(home.runtime.rollback(&id).await?)
}

#[tauri::command]
pub async fn recover(console: State<'_, Console>, id: String) -> CommandResult<Outcome> {
    let home = console.home().await?;
    home.usable().map_err(|m| CommandError::new("config", m))?;
    Ok(home.runtime.recover(&id).await?)
}

#[tauri::command]
pub async fn delete_execution(console: State<'_, Console>, id: String) -> CommandResult<bool> {
    Ok(console.home().await?.runtime.delete_execution(&id).await?)
}

/// The Playground: the same path an agent's program takes.
#[tauri::command]
pub async fn run_program(console: State<'_, Console>, code: String) -> CommandResult<Outcome> {
    let home = console.home().await?;
    home.usable().map_err(|m| CommandError::new("config", m))?;
    Ok(home.runtime.execute_from(&code, Some("Playground")).await?)
}

#[tauri::command]
pub async fn snippets(console: State<'_, Console>) -> CommandResult<Vec<Snippet>> {
    Ok(console.home().await?.runtime.snippets()?)
}

#[tauri::command]
pub async fn save_snippet(
    console: State<'_, Console>,
    name: String,
    execution_id: String,
    description: Option<String>,
) -> CommandResult<Snippet> {
    let home = console.home().await?;
    home.runtime
        .execution(&execution_id)?
        .ok_or_else(|| not_found(&execution_id))?;
    Ok(home.runtime.save_snippet(
        &name,
        SaveSnippet {
            execution_id,
            description: description.filter(|d| !d.trim().is_empty()),
            input_schema: None,
        },
    )?)
}

#[tauri::command]
pub async fn delete_snippet(console: State<'_, Console>, name: String) -> CommandResult<bool> {
    Ok(console.home().await?.runtime.delete_snippet(&name)?)
}

/// A connector card: its kind, where it runs (secrets masked), whether it is up, and its methods.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorCard {
    name: String,
    kind: &'static str,
    endpoint: String,
    status: &'static str,
    error: Option<String>,
    hint: Option<String>,
    methods: Vec<MethodRow>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MethodRow {
    name: String,
    description: Option<String>,
    requires_approval: bool,
    reexecute: bool,
    revertible: bool,
    hidden: bool,
}

/// Lists every connector with its methods; MCP servers that have not started yet are started to list theirs.
#[tauri::command]
pub async fn connectors(console: State<'_, Console>) -> CommandResult<Vec<ConnectorCard>> {
    let home = console.home().await?;
    let listing = home.runtime.connectors().await;
    let entries = home
        .config
        .as_ref()
        .map(|c| c.connectors.clone())
        .unwrap_or_default();
    let cards = listing
        .into_iter()
        .map(|c| {
            let entry = entries.iter().find(|e| e.name == c.name);
            let server = home.connectors.servers.iter().find(|s| {
                use codemode::Connector;
                s.name() == c.name
            });
            let (status, server_error) = match (server.map(|s| s.state()), &c.error) {
                (_, Some(_)) => ("error", None),
                (Some(ServerState::Failed { error }), None) => ("error", Some(error)),
                (Some(ServerState::NotStarted), None) => ("stopped", None),
                _ => ("ready", None),
            };
            ConnectorCard {
                kind: home.kind_of(&c.name),
                endpoint: entry.map(|e| endpoint(&e.kind)).unwrap_or_default(),
                status,
                error: c.error.or(server_error),
                hint: entry.and_then(|e| e.hint.clone()),
                methods: c
                    .methods
                    .into_iter()
                    .map(|m| MethodRow {
                        reexecute: m.replay == codemode::Replay::Reexecute,
                        name: m.name,
                        description: m.description,
                        requires_approval: m.requires_approval,
                        revertible: m.revertible,
                        hidden: m.hidden,
                    })
                    .collect(),
                name: c.name,
            }
        })
        .collect();
    Ok(cards)
}

/// Where a connector runs, with the values of `env` and `headers` masked.
fn endpoint(kind: &ConnectorKind) -> String {
    match kind {
        ConnectorKind::Files { root } => root.display().to_string(),
        ConnectorKind::Stdio {
            command, args, env, ..
        } => {
            let mut text: Vec<String> = env.keys().map(|k| format!("{k}=•••")).collect();
            text.push(command.clone());
            text.extend(args.iter().cloned());
            text.join(" ")
        }
        ConnectorKind::Http { url, headers } => {
            let mut text = url.clone();
            for name in headers.keys() {
                text.push_str(&format!("  {name}: •••"));
            }
            text
        }
    }
}

/// Runtime settings as `connectors.json` spells them.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeForm {
    name: String,
    max_executions: usize,
    timeout_ms: u64,
    memory_limit_mb: u64,
    paused_ttl: String,
    expiry_sweep_minutes: u64,
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
    let settings = match console.home().await {
        Ok(home) => home.settings.clone(),
        Err(_) => RuntimeSettings::default(),
    };
    Ok(SettingsView {
        runtime: RuntimeForm {
            name: settings.name,
            max_executions: settings.max_executions,
            timeout_ms: settings.timeout.as_millis() as u64,
            memory_limit_mb: settings.memory_limit_mb,
            paused_ttl: config::format_age(settings.paused_ttl),
            expiry_sweep_minutes: settings.expiry_sweep.as_secs() / 60,
        },
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
    let paused_ttl = config::parse_age_text(&runtime.paused_ttl).ok_or_else(|| {
        CommandError::new(
            "invalid",
            format!(
                "pausedTtl \"{}\" is not a duration such as 0s, 90m, 24h or 7d",
                runtime.paused_ttl
            ),
        )
    })?;
    let chosen = RuntimeSettings {
        name: runtime.name,
        max_executions: runtime.max_executions,
        timeout: Duration::from_millis(runtime.timeout_ms),
        memory_limit_mb: runtime.memory_limit_mb,
        paused_ttl,
        expiry_sweep: Duration::from_secs(runtime.expiry_sweep_minutes.saturating_mul(60)),
    };
    config::save_runtime_settings(&console.dir, &chosen)
        .map_err(|e| CommandError::new("invalid", e.to_string()))?;
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

#[cfg(test)]
mod tests {
    use super::endpoint;
    use connectors::config::ConnectorKind;

    #[test]
    fn the_connectors_view_shows_env_and_header_names_never_their_values() {
        let stdio = ConnectorKind::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "@modelcontextprotocol/server-github".into()],
            env: [("GITHUB_TOKEN".to_owned(), "ghp_secret123".to_owned())].into(),
            cwd: None,
        };
        assert_eq!(
            endpoint(&stdio),
            "GITHUB_TOKEN=••• npx -y @modelcontextprotocol/server-github"
        );
        let http = ConnectorKind::Http {
            url: "http://127.0.0.1:8931/mcp".into(),
            headers: [("Authorization".to_owned(), "Bearer secret456".to_owned())].into(),
        };
        assert_eq!(
            endpoint(&http),
            "http://127.0.0.1:8931/mcp  Authorization: •••"
        );
    }
}
