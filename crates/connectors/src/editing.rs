//! Changes to `connectors.json` made from the app (README "Configuration", docs/api.md "Managing
//! connectors"): a server added or removed, a tool's flags or templates set. Each edit touches only what it
//! names: other entries, key order and the runtime block stay as they were. The result must parse before it
//! replaces the file, the file is replaced atomically (owner-only), and edits from several processes are
//! serialised by a lock file, so none is lost.

use crate::config::{self, Config, ConfigError, FILE_NAME, RuntimeSettings};
use crate::owner_only;
use serde_json::{Map, Value};
use std::path::Path;

/// One change to the file.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// The `runtime` block's settings (other keys of the block, such as `maxOutputChars`, stay).
    Runtime(config::RuntimeSettings),
    /// A new MCP server under `mcpServers`; an existing key (in either section) is refused.
    Add { key: String, entry: Value },
    /// A connector removed from whichever section holds it.
    Remove { key: String },
    /// One of a connector's method lists (`approval`, `reexecute`, `hidden`) set to exactly these methods.
    SetList {
        key: String,
        field: MethodList,
        methods: Vec<String>,
    },
    /// A method's `revert` or `preview` template set, or removed with `None`.
    SetTemplate {
        key: String,
        field: TemplateKind,
        method: String,
        template: Option<Value>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodList {
    Approval,
    Reexecute,
    Hidden,
}

impl MethodList {
    fn key(self) -> &'static str {
        match self {
            MethodList::Approval => "approval",
            MethodList::Reexecute => "reexecute",
            MethodList::Hidden => "hidden",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateKind {
    Revert,
    Preview,
}

impl TemplateKind {
    fn key(self) -> &'static str {
        match self {
            TemplateKind::Revert => "revert",
            TemplateKind::Preview => "preview",
        }
    }
}

/// The servers of a pasted Claude Desktop configuration: the whole file (`{"mcpServers": {…}}`) or its
/// `mcpServers` object (`{"name": {"command": …}}`), in the order given.
pub fn pasted_servers(text: &str) -> Result<Vec<(String, Value)>, String> {
    let value: Value = serde_json::from_str(text.trim())
        .map_err(|e| format!("the pasted text is not JSON: {e}"))?;
    let Value::Object(mut top) = value else {
        return Err("paste a JSON object: {\"mcpServers\": {\"name\": {…}}}".to_owned());
    };
    if top.contains_key("command") || top.contains_key("url") {
        return Err("this is one server without a name: paste it as {\"name\": {…}}".to_owned());
    }
    let servers = match top.remove("mcpServers") {
        Some(Value::Object(servers)) => servers,
        Some(_) => return Err("\"mcpServers\" must be an object of servers".to_owned()),
        None => top,
    };
    if servers.is_empty() {
        return Err("the pasted text names no server".to_owned());
    }
    servers
        .into_iter()
        .map(|(key, entry)| match entry {
            Value::Object(_) => Ok((key, entry)),
            _ => Err(format!(
                "\"{key}\" must be an object with a \"command\" or a \"url\""
            )),
        })
        .collect()
}

/// Applies `edit` to the file's text; the result is not yet checked (see [`edit_file`]).
pub fn apply(text: &str, edit: &Edit) -> Result<String, String> {
    let mut document: Value =
        serde_json::from_str(text).map_err(|e| format!("{FILE_NAME} is not JSON: {e}"))?;
    let Value::Object(top) = &mut document else {
        return Err(format!("{FILE_NAME} is not a JSON object"));
    };
    match edit {
        Edit::Runtime(settings) => {
            let runtime = top
                .entry("runtime")
                .or_insert_with(|| Value::Object(Map::new()));
            if !runtime.is_object() {
                *runtime = Value::Object(Map::new());
            }
            if let Value::Object(runtime) = runtime {
                for (key, value) in config::runtime_fields(settings) {
                    runtime.insert(key.to_owned(), value);
                }
            }
        }
        Edit::Add { key, entry } => {
            if find(top, key).is_some() {
                return Err(format!("a connector named \"{key}\" already exists"));
            }
            let servers = top
                .entry("mcpServers")
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(servers) = servers else {
                return Err("\"mcpServers\" is not an object".to_owned());
            };
            servers.insert(key.clone(), entry.clone());
        }
        Edit::Remove { key } => {
            let section = find(top, key).ok_or_else(|| no_connector(key))?;
            if let Some(Value::Object(entries)) = top.get_mut(section) {
                entries.shift_remove(key);
            }
        }
        Edit::SetList {
            key,
            field,
            methods,
        } => {
            let entry = entry_mut(top, key)?;
            entry.insert(
                field.key().to_owned(),
                Value::Array(methods.iter().cloned().map(Value::String).collect()),
            );
        }
        Edit::SetTemplate {
            key,
            field,
            method,
            template,
        } => {
            let entry = entry_mut(top, key)?;
            let templates = entry
                .entry(field.key())
                .or_insert_with(|| Value::Object(Map::new()));
            if !templates.is_object() {
                *templates = Value::Object(Map::new());
            }
            if let Value::Object(templates) = templates {
                match template {
                    Some(template) => {
                        templates.insert(method.clone(), template.clone());
                    }
                    None => {
                        templates.shift_remove(method);
                    }
                }
                if templates.is_empty() {
                    entry.shift_remove(field.key());
                }
            }
        }
    }
    let mut text = serde_json::to_string_pretty(&document).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}

/// Edits `<data dir>/connectors.json` (all of `edits`, or none): read under the edit lock, changed, checked (the result must parse as
/// every host will read it), then replaced atomically. A broken file is left alone and reported; so is an
/// edit whose result would not parse, with the reason.
pub fn edit_file(data_dir: &Path, edits: &[Edit]) -> Result<Config, ConfigError> {
    let path = data_dir.join(FILE_NAME);
    let error = |message: String| ConfigError::whole_file(&path, message);
    let _lock = owner_only::lock_exclusive(&data_dir.join(format!(".{FILE_NAME}.lock")))
        .map_err(|e| error(format!("cannot lock it: {e}")))?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => config::DEFAULT_CONFIG.to_owned(),
        Err(e) => return Err(error(format!("cannot read it: {e}"))),
    };
    config::parse(&text, &path, data_dir)?;
    let mut changed = text;
    for edit in edits {
        changed = apply(&changed, edit).map_err(error)?;
    }
    let parsed = config::parse(&changed, &path, data_dir)?;
    config::replace_file(data_dir, &changed).map_err(error)?;
    Ok(parsed)
}

/// Which section (`connectors` or `mcpServers`) holds `key`.
fn find(top: &Map<String, Value>, key: &str) -> Option<&'static str> {
    ["connectors", "mcpServers"]
        .into_iter()
        .find(|section| top.get(*section).and_then(|s| s.get(key)).is_some())
}

fn entry_mut<'a>(
    top: &'a mut Map<String, Value>,
    key: &str,
) -> Result<&'a mut Map<String, Value>, String> {
    let section = find(top, key).ok_or_else(|| no_connector(key))?;
    match top.get_mut(section).and_then(|s| s.get_mut(key)) {
        Some(Value::Object(entry)) => Ok(entry),
        _ => Err(format!("connector \"{key}\" is not an object")),
    }
}

fn no_connector(key: &str) -> String {
    format!("No connector \"{key}\" in {FILE_NAME}")
}

/// Writes runtime settings back into `<data dir>/connectors.json`, keeping everything else in the file as it is
/// (an [`Edit`], with its lock and atomic replace); a file that does not parse is left alone
/// and reported.
pub fn save_runtime_settings(
    data_dir: &Path,
    settings: &RuntimeSettings,
) -> Result<(), ConfigError> {
    config::check_settings(settings)
        .map_err(|(_, message)| ConfigError::whole_file(&data_dir.join(FILE_NAME), message))?;
    edit_file(data_dir, &[Edit::Runtime(settings.clone())]).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FILE: &str = r#"{
  "runtime": { "name": "team", "timeoutMs": 30000 },
  "connectors": {
    "files": { "type": "files", "root": "workspace" },
    "web": { "type": "mcp", "url": "http://127.0.0.1:9/mcp", "hint": "the wiki" }
  },
  "mcpServers": {
    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "approval": "*" }
  },
  "rules": [{ "id": "r", "effect": "deny", "call": "files.delete_file" }]
}"#;

    fn keys(value: &Value) -> Vec<String> {
        value.as_object().unwrap().keys().cloned().collect()
    }

    #[test]
    fn an_added_server_goes_last_under_mcp_servers_and_nothing_else_moves() {
        let edit = Edit::Add {
            key: "github".into(),
            entry: json!({"command": "gh-mcp", "env": {"TOKEN": "t"}}),
        };
        let out: Value = serde_json::from_str(&apply(FILE, &edit).unwrap()).unwrap();
        let before: Value = serde_json::from_str(FILE).unwrap();
        assert_eq!(keys(&out), keys(&before));
        assert_eq!(keys(&out["mcpServers"]), vec!["memory", "github"]);
        assert_eq!(out["connectors"], before["connectors"]);
        assert_eq!(out["runtime"], before["runtime"]);
        assert_eq!(out["rules"], before["rules"]);
        let again = apply(
            FILE,
            &Edit::Add {
                key: "web".into(),
                entry: json!({"command": "x"}),
            },
        );
        assert_eq!(
            again.unwrap_err(),
            "a connector named \"web\" already exists"
        );
    }

    #[test]
    fn lists_and_templates_are_set_in_place_and_removed_cleanly() {
        let gated = Edit::SetList {
            key: "web".into(),
            field: MethodList::Approval,
            methods: vec!["publish".into()],
        };
        let out: Value = serde_json::from_str(&apply(FILE, &gated).unwrap()).unwrap();
        assert_eq!(
            keys(&out["connectors"]["web"]),
            vec!["type", "url", "hint", "approval"]
        );
        assert_eq!(out["connectors"]["web"]["approval"], json!(["publish"]));

        let template = json!({"method": "unpublish", "args": {"id": "{{result.id}}"}});
        let set = Edit::SetTemplate {
            key: "memory".into(),
            field: TemplateKind::Revert,
            method: "publish".into(),
            template: Some(template.clone()),
        };
        let text = apply(FILE, &set).unwrap();
        let out: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(out["mcpServers"]["memory"]["revert"]["publish"], template);
        let unset = Edit::SetTemplate {
            key: "memory".into(),
            field: TemplateKind::Revert,
            method: "publish".into(),
            template: None,
        };
        let out: Value = serde_json::from_str(&apply(&text, &unset).unwrap()).unwrap();
        assert!(out["mcpServers"]["memory"].get("revert").is_none(), "{out}");
    }

    #[test]
    fn removing_takes_one_entry_from_its_section() {
        let out: Value =
            serde_json::from_str(&apply(FILE, &Edit::Remove { key: "web".into() }).unwrap())
                .unwrap();
        assert_eq!(keys(&out["connectors"]), vec!["files"]);
        assert_eq!(keys(&out["mcpServers"]), vec!["memory"]);
        assert_eq!(
            apply(FILE, &Edit::Remove { key: "nope".into() }).unwrap_err(),
            "No connector \"nope\" in connectors.json"
        );
    }

    #[test]
    fn claude_desktop_configurations_paste_whole_or_as_their_servers() {
        let whole = r#"{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "m"]},
                        "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}, "globalShortcut": ""}"#;
        let servers = pasted_servers(whole).unwrap();
        assert_eq!(
            servers.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            vec!["memory", "fetch"]
        );
        let inner = r#"{"remote": {"url": "https://mcp.example/mcp"}}"#;
        assert_eq!(pasted_servers(inner).unwrap()[0].0, "remote");
        assert!(
            pasted_servers(r#"{"command": "npx"}"#)
                .unwrap_err()
                .contains("without a name")
        );
        assert!(pasted_servers("not json").unwrap_err().contains("not JSON"));
        assert!(
            pasted_servers(r#"{"mcpServers": {}}"#)
                .unwrap_err()
                .contains("no server")
        );
    }
}
