//! Reading `connectors.json`: defaults, checks with the file, line and column at fault, paths and secrets.

use super::approval::method_list;
use super::raw::{RawConnector, RawFile, RawRevert, RawWebhook};
use super::{
    Approval, Asking, Config, ConfigError, ConnectorConfig, ConnectorKind,
    DEFAULT_MAX_OUTPUT_CHARS, MIN_MAX_OUTPUT_CHARS, OAuthClient, RevertTemplate, RuntimeSettings,
    Webhook, WebhookFormat, check_settings, parse_age_text,
};
use codemode::names::{check_connector_name, sanitize_tool_name};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Parses a configuration; `path` names it in errors and `data_dir` anchors relative paths.
pub fn parse(text: &str, path: &Path, data_dir: &Path) -> Result<Config, ConfigError> {
    let file = path.display().to_string();
    let at_path = |needles: &[&str], message: String| {
        let (line, column) = locate(text, needles);
        ConfigError {
            file: file.clone(),
            line,
            column,
            message,
        }
    };
    let at = |needle: &str, message: String| at_path(&[needle], message);
    // A connector may use the same key: the runtime's is the one after `"runtime"`.
    let in_runtime =
        |field: &str, message: String| at_path(&["\"runtime\"", &format!("\"{field}\"")], message);
    let raw: RawFile = serde_json::from_str(text).map_err(|e| ConfigError {
        file: file.clone(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })?;
    let mut webhooks = Vec::new();
    for value in raw
        .runtime
        .as_ref()
        .and_then(|r| r.webhooks.clone())
        .unwrap_or_default()
    {
        webhooks.push(webhook(value).map_err(|message| in_runtime("webhooks", message))?);
    }
    let defaults = RuntimeSettings::default();
    let max_output_chars = raw
        .runtime
        .as_ref()
        .and_then(|r| r.max_output_chars)
        .unwrap_or(DEFAULT_MAX_OUTPUT_CHARS);
    if max_output_chars < MIN_MAX_OUTPUT_CHARS {
        return Err(in_runtime(
            "maxOutputChars",
            format!("maxOutputChars must be at least {MIN_MAX_OUTPUT_CHARS}"),
        ));
    }
    let store = match raw.runtime.as_ref().and_then(|r| r.store.as_deref()) {
        None => None,
        Some(url) => match codemode::StoreLocation::parse(url) {
            codemode::StoreLocation::Postgres(url) => Some(url),
            codemode::StoreLocation::File(_) => {
                return Err(in_runtime(
                    "store",
                    "store must be a PostgreSQL URL such as \"postgres://user@host:5432/codemode\"; \
                     without it the store is codemode.db in the data directory"
                        .to_owned(),
                ));
            }
        },
    };
    let runtime = match raw.runtime {
        None => defaults,
        Some(r) => RuntimeSettings {
            name: r.name.unwrap_or(defaults.name),
            max_executions: r.max_executions.unwrap_or(defaults.max_executions),
            timeout: r.timeout_ms.map_or(defaults.timeout, Duration::from_millis),
            memory_limit_mb: r.memory_limit_mb.unwrap_or(defaults.memory_limit_mb),
            paused_ttl: match r.paused_ttl {
                None => defaults.paused_ttl,
                Some(value) => parse_age(&value).ok_or_else(|| {
                    in_runtime(
                        "pausedTtl",
                        "pausedTtl must be a duration such as \"0s\", \"90m\", \"24h\" or \"7d\""
                            .to_owned(),
                    )
                })?,
            },
            expiry_sweep: match r.expiry_sweep_minutes {
                None => defaults.expiry_sweep,
                Some(minutes) => minutes
                    .checked_mul(60)
                    .map(Duration::from_secs)
                    .ok_or_else(|| {
                        in_runtime(
                            "expirySweepMinutes",
                            "expirySweepMinutes is too large".to_owned(),
                        )
                    })?,
            },
            keep_decided_for: match r.keep_decided_for {
                None => defaults.keep_decided_for,
                Some(value) => parse_age(&value).ok_or_else(|| {
                    in_runtime(
                        "keepDecidedFor",
                        "keepDecidedFor must be a duration such as \"90d\", \"24h\" or \"0s\""
                            .to_owned(),
                    )
                })?,
            },
        },
    };
    check_settings(&runtime).map_err(|(field, message)| in_runtime(field, message))?;
    let mut connectors: Vec<ConnectorConfig> = Vec::new();
    let sections = [
        ("connectors", raw.connectors),
        ("mcpServers", raw.mcp_servers),
    ];
    for (section, entries) in sections {
        for (key, value) in entries.into_iter().flatten() {
            let needle = format!("\"{key}\"");
            let entry: RawConnector = serde_json::from_value(value).map_err(|e| {
                at(
                    &needle,
                    format!("{section}.{key}: {}", strip_position(&e.to_string())),
                )
            })?;
            let name = sanitize_tool_name(&key);
            check_connector_name(&name).map_err(|message| at(&needle, message))?;
            if let Some(other) = connectors.iter().find(|c| c.name == name) {
                return Err(at(
                    &needle,
                    format!(
                        "Connectors \"{}\" and \"{key}\" both map to \"{name}\"; rename one of them",
                        other.key
                    ),
                ));
            }
            let kind =
                connector_kind(section, &key, &entry, data_dir).map_err(|m| at(&needle, m))?;
            let approval = match &entry.approval {
                None => Approval::Default,
                Some(Value::String(gate)) if gate == "writes" || gate == "destructive" => {
                    if matches!(kind, ConnectorKind::Files { .. }) {
                        return Err(at(
                            &needle,
                            format!(
                                "{key}.approval \"{gate}\" reads the tool annotations an MCP server declares; a files connector has none: list its methods instead"
                            ),
                        ));
                    }
                    if gate == "writes" {
                        Approval::Writes
                    } else {
                        Approval::Destructive
                    }
                }
                Some(value) => method_list(value).ok_or_else(|| {
                    at(
                        &needle,
                        format!(
                            "{key}.approval must be \"*\", \"writes\", \"destructive\" or a list of method names"
                        ),
                    )
                })?,
            };
            let confirm_in_app = match &entry.confirm_in_app {
                None | Some(Value::Bool(false)) => Approval::Methods(Vec::new()),
                Some(Value::Bool(true)) => Approval::All,
                Some(value) => method_list(value).ok_or_else(|| {
                    at(
                        &needle,
                        format!("{key}.confirmInApp must be true, \"*\" or a list of method names"),
                    )
                })?,
            };
            let ask_in_client = match &entry.ask_in_client {
                None | Some(Value::Bool(false)) => Approval::Methods(Vec::new()),
                Some(Value::Bool(true)) => Approval::All,
                Some(value) => method_list(value).ok_or_else(|| {
                    at(
                        &needle,
                        format!("{key}.askInClient must be true, \"*\" or a list of method names"),
                    )
                })?,
            };
            let decide_within = match &entry.decide_within {
                None => None,
                Some(text) => Some(
                    parse_age_text(text)
                        .filter(|d| !d.is_zero())
                        .ok_or_else(|| {
                            at_path(
                                &[&needle, "\"decideWithin\""],
                                format!("{key}.decideWithin: \"{text}\" is not a duration (write 30m, 2h, 1d…)"),
                            )
                        })?,
                ),
            };
            // A preview is made before the call runs: it has arguments, and no result yet.
            if let Some(method) = entry
                .preview
                .iter()
                .find(|(_, template)| template.args.to_string().contains("{{result."))
                .map(|(method, _)| method)
            {
                return Err(at_path(
                    &[&needle, "\"preview\""],
                    format!(
                        "{key}.preview.{method}: a preview runs before the call, so its args may use {{{{args.…}}}} but not {{{{result.…}}}}"
                    ),
                ));
            }
            // A preview runs without a person, every time a card is shown: it may only read. A gated method is
            // refused here; one the server does not annotate read-only (nor `readOnly` lists) is refused when
            // the preview would run (docs/design.md, "Previews only read").
            let gates = |method: &str| match &approval {
                Approval::All => true,
                Approval::Methods(_) => approval.requires(method, &sanitize_tool_name(method), &[]),
                // Known only from the server's annotations: a preview naming a gated tool is refused when it
                // would run (it must be annotated read-only, or listed under readOnly).
                Approval::Default | Approval::Writes | Approval::Destructive => false,
            };
            if let Some((method, template)) = entry
                .preview
                .iter()
                .find(|(_, template)| gates(&template.method))
            {
                return Err(at_path(
                    &[&needle, "\"preview\""],
                    format!(
                        "{key}.preview.{method}: names {}, which needs approval; a preview runs without a person, so it may only name a read-only method (annotated readOnlyHint by the server, or listed under readOnly)",
                        template.method
                    ),
                ));
            }
            // 0 would report every call as hung and stop the server.
            let timeouts = [
                ("callTimeoutMs", entry.call_timeout_ms),
                ("revertTimeoutMs", entry.revert_timeout_ms),
            ];
            if let Some((field, _)) = timeouts.iter().find(|(_, ms)| *ms == Some(0)) {
                return Err(at_path(
                    &[&needle, &format!("\"{field}\"")],
                    format!("{key}.{field} must be at least 1"),
                ));
            }
            connectors.push(ConnectorConfig {
                name,
                key: key.clone(),
                kind,
                approval,
                asking: Asking {
                    in_client: ask_in_client,
                    confirm_in_app: confirm_in_app.clone(),
                    decide_within,
                },
                confirm_in_app,
                reexecute: entry.reexecute,
                hidden: entry.hidden,
                hint: entry.hint,
                call_timeout: Duration::from_millis(entry.call_timeout_ms.unwrap_or(30_000)),
                revert_timeout: Duration::from_millis(entry.revert_timeout_ms.unwrap_or(30_000)),
                revert: templates(entry.revert),
                preview: templates(entry.preview),
                read_only: entry.read_only,
            });
        }
    }
    let mut rules: Vec<codemode::Rule> = Vec::with_capacity(raw.rules.len());
    for (index, value) in raw.rules.into_iter().enumerate() {
        let id = value["id"].as_str().map(str::to_owned);
        let needle = id
            .as_ref()
            .map_or("\"rules\"".to_owned(), |id| format!("\"{id}\""));
        let rule = codemode::Rule::from_value(value)
            .map_err(|e| at(&needle, format!("rules[{index}]: {e}")))?;
        codemode::rules::CompiledRule::new(rule.clone())
            .map_err(|e| at(&needle, format!("rules[{index}]: {e}")))?;
        if rules.iter().any(|r| r.id == rule.id) {
            return Err(at(
                &needle,
                format!("rules[{index}]: rule {}: id: used twice", rule.id),
            ));
        }
        rules.push(rule);
    }
    Ok(Config {
        runtime,
        connectors,
        rules,
        max_output_chars,
        store,
        webhooks,
    })
}

/// Method → template, as written under `revert` or `preview`.
fn templates(raw: BTreeMap<String, RawRevert>) -> BTreeMap<String, RevertTemplate> {
    raw.into_iter()
        .map(|(method, r)| {
            (
                method,
                RevertTemplate {
                    method: r.method,
                    args: r.args,
                },
            )
        })
        .collect()
}

/// One `runtime.webhooks` entry, checked: an http(s) URL with a host, and a known format.
fn webhook(value: Value) -> Result<Webhook, String> {
    let raw: RawWebhook = serde_json::from_value(value).map_err(|e| {
        format!(
            "a webhook is {{\"url\": \"https://…\", \"format\": \"json\" | \"slack\" | \"ntfy\"}}: {}",
            strip_position(&e.to_string())
        )
    })?;
    let parsed = url::Url::parse(&raw.url)
        .map_err(|e| format!("webhook url \"{}\" is not a URL: {e}", raw.url))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(format!(
            "webhook url \"{}\" must be an http or https URL with a host",
            raw.url
        ));
    }
    let format = match raw.format.as_deref().unwrap_or("json") {
        "json" => WebhookFormat::Json,
        "slack" => WebhookFormat::Slack,
        "ntfy" => WebhookFormat::Ntfy,
        other => {
            return Err(format!(
                "webhook format \"{other}\" is not one of \"json\", \"slack\", \"ntfy\""
            ));
        }
    };
    Ok(Webhook {
        url: raw.url,
        format,
    })
}

fn connector_kind(
    section: &str,
    key: &str,
    entry: &RawConnector,
    data_dir: &Path,
) -> Result<ConnectorKind, String> {
    let kind = match (
        entry.kind.as_deref(),
        &entry.command,
        &entry.url,
        &entry.root,
    ) {
        (Some("files"), ..) => "files",
        (Some("mcp" | "stdio"), Some(_), _, _) | (None, Some(_), None, _) => "stdio",
        (Some("mcp" | "http" | "streamable-http" | "sse"), None, Some(_), _)
        | (None, None, Some(_), _) => "http",
        (None, None, None, Some(_)) if section == "connectors" => "files",
        (Some(other), ..)
            if !matches!(other, "mcp" | "stdio" | "http" | "streamable-http" | "sse") =>
        {
            return Err(format!(
                "{key}: unknown type \"{other}\" (use \"files\" or \"mcp\")"
            ));
        }
        _ => {
            return Err(format!(
                "{key}: an MCP connector needs a \"command\" or a \"url\""
            ));
        }
    };
    match kind {
        "files" => {
            let root = entry
                .root
                .as_deref()
                .ok_or_else(|| format!("{key}: a files connector needs a \"root\""))?;
            Ok(ConnectorKind::Files {
                root: resolve_path(root, data_dir),
            })
        }
        "stdio" => Ok(ConnectorKind::Stdio {
            command: entry.command.clone().unwrap_or_default(),
            args: entry.args.clone(),
            env: secrets(key, "env", entry.env.as_ref())?,
            cwd: entry.cwd.as_deref().map(|c| resolve_path(c, data_dir)),
        }),
        _ => Ok(ConnectorKind::Http {
            url: entry.url.clone().unwrap_or_default(),
            headers: secrets(key, "headers", entry.headers.as_ref())?,
            ca_file: entry.ca_file.as_deref().map(|c| resolve_path(c, data_dir)),
            oauth: entry
                .oauth
                .as_ref()
                .map(|o| oauth_client(key, o))
                .transpose()?,
        }),
    }
}

/// `oauth` of a remote connector; a wrong value is described, never echoed (it may hold the secret).
fn oauth_client(key: &str, value: &Value) -> Result<OAuthClient, String> {
    let Value::Object(map) = value else {
        return Err(format!(
            "{key}.oauth must be an object: {{\"clientId\", \"clientSecret\", \"scopes\"}}"
        ));
    };
    let text = |field: &str| match map.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_owned())),
        Some(_) => Err(format!("{key}.oauth.{field} must be a non-empty string")),
    };
    if let Some(unknown) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "clientId" | "clientSecret" | "scopes"))
    {
        return Err(format!(
            "{key}.oauth: unknown field \"{unknown}\" (use clientId, clientSecret, scopes)"
        ));
    }
    let client = OAuthClient {
        client_id: text("clientId")?,
        client_secret: text("clientSecret")?,
        scopes: match map.get("scopes") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(_) => return Err(format!("{key}.oauth.scopes must be a list of strings")),
        },
    };
    if client.client_secret.is_some() && client.client_id.is_none() {
        return Err(format!("{key}.oauth: a clientSecret needs its clientId"));
    }
    Ok(client)
}

/// A map of strings whose values must never be shown, even when they are of the wrong type.
fn secrets(
    key: &str,
    field: &str,
    value: Option<&Value>,
) -> Result<BTreeMap<String, String>, String> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let Value::Object(map) = value else {
        return Err(format!("{key}.{field} must be an object of strings"));
    };
    map.iter()
        .map(|(name, v)| match v {
            Value::String(s) => Ok((name.clone(), s.clone())),
            _ => Err(format!("{key}.{field}.{name} must be a string")),
        })
        .collect()
}

/// `~` is the home directory; relative paths are relative to the data directory.
pub fn resolve_path(path: &str, data_dir: &Path) -> PathBuf {
    if path == "~" || path.starts_with("~/") {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        return home.join(path.trim_start_matches('~').trim_start_matches('/'));
    }
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_owned()
    } else {
        data_dir.join(path)
    }
}

/// `0s`, `90m`, `24h`, `7d`, `500ms`, or a number of milliseconds.
pub fn parse_age(value: &Value) -> Option<Duration> {
    match value {
        Value::Number(n) => n.as_u64().map(Duration::from_millis),
        Value::String(text) => parse_age_text(text),
        _ => None,
    }
}

/// serde's messages end with " at line L column C"; the position is reported separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// The 1-based line and column of the first occurrence of the last needle, each needle searched after the
/// one before it (1:1 when one is absent).
fn locate(text: &str, needles: &[&str]) -> (usize, usize) {
    let mut offset = 0;
    for needle in needles {
        let Some(found) = text[offset..].find(needle) else {
            return (1, 1);
        };
        offset += found;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
