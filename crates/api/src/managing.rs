//! Connectors managed from a front end (docs/api.md, "Managing connectors"): a server added by its fields or
//! pasted as Claude Desktop's `mcpServers`, tested before it is saved, a tool's flags and templates set, a
//! connector removed. Every change is an edit of `connectors.json` (`connectors::editing`), which every
//! process picks up on its next operation ([`crate::FollowingApi`]).

use crate::listing::MethodInfo;
use crate::{Api, ApiError};
use codemode::{Connector, Replay};
use connectors::McpConnector;
use connectors::config::{self, ConfigError};
use connectors::editing::{self, Edit, MethodList, TemplateKind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A server as a person describes it in the app: a command line or a URL.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerDraft {
    pub name: String,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    pub headers: BTreeMap<String, String>,
    pub ca_file: Option<String>,
}

impl ServerDraft {
    /// The `connectors.json` entry, with only the fields given.
    fn entry(&self) -> Value {
        let mut entry = Map::new();
        let text = |s: &Option<String>| {
            s.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        if let Some(url) = text(&self.url) {
            entry.insert("url".into(), url.into());
            if !self.headers.is_empty() {
                entry.insert("headers".into(), serde_json::json!(self.headers));
            }
            if let Some(ca) = text(&self.ca_file) {
                entry.insert("caFile".into(), ca.into());
            }
        } else {
            entry.insert(
                "command".into(),
                text(&self.command).unwrap_or_default().into(),
            );
            if !self.args.is_empty() {
                entry.insert("args".into(), serde_json::json!(self.args));
            }
            if !self.env.is_empty() {
                entry.insert("env".into(), serde_json::json!(self.env));
            }
            if let Some(cwd) = text(&self.cwd) {
                entry.insert("cwd".into(), cwd.into());
            }
        }
        Value::Object(entry)
    }
}

/// What to test: a server not saved yet, or a configured connector (restarted for it).
#[derive(Debug, Clone, PartialEq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum TestTarget {
    Draft { draft: ServerDraft },
    Pasted { text: String },
    Configured { name: String },
}

/// How a test went: the server's tools, or why it failed (its stderr's last lines included).
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct TestReport {
    pub name: String,
    pub ok: bool,
    pub error: Option<String>,
    pub tools: Vec<MethodInfo>,
}

/// A per-tool switch of the Connectors view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum MethodFlag {
    Approval,
    Reexecute,
    Hidden,
}

/// Which template of a tool: the call that undoes it, or the read-only call that shows what it would change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub enum TemplateField {
    Revert,
    Preview,
}

fn config_error(error: ConfigError) -> ApiError {
    ApiError::invalid_args(error.to_string())
}

impl Api {
    /// Adds a server to `connectors.json` (under `mcpServers`); a name in use is refused.
    pub fn add_server(&self, draft: &ServerDraft) -> Result<(), ApiError> {
        self.usable()?;
        let name = draft.name.trim();
        if name.is_empty() {
            return Err(ApiError::invalid_args("give the server a name"));
        }
        if draft.url.as_deref().is_none_or(|u| u.trim().is_empty())
            && draft.command.as_deref().is_none_or(|c| c.trim().is_empty())
        {
            return Err(ApiError::invalid_args("give the server a command or a URL"));
        }
        let edit = Edit::Add {
            key: name.to_owned(),
            entry: draft.entry(),
        };
        editing::edit_file(self.dir(), &[edit]).map_err(config_error)?;
        Ok(())
    }

    /// Adds every server of a pasted Claude Desktop configuration, or none of them; returns their names.
    pub fn add_pasted(&self, text: &str) -> Result<Vec<String>, ApiError> {
        self.usable()?;
        let servers = editing::pasted_servers(text).map_err(ApiError::invalid_args)?;
        let names = servers.iter().map(|(key, _)| key.clone()).collect();
        let edits: Vec<Edit> = servers
            .into_iter()
            .map(|(key, entry)| Edit::Add { key, entry })
            .collect();
        editing::edit_file(self.dir(), &edits).map_err(config_error)?;
        Ok(names)
    }

    /// Removes a connector from `connectors.json`; its server stops with this process's next reopen.
    pub fn remove_connector(&self, name: &str) -> Result<(), ApiError> {
        self.usable()?;
        let key = self.key_of(name)?;
        editing::edit_file(self.dir(), &[Edit::Remove { key }]).map_err(config_error)?;
        Ok(())
    }

    /// Starts a server and lists its tools, without keeping it: a draft or pasted entry before it is saved,
    /// or a configured connector afresh.
    pub async fn test_server(&self, target: &TestTarget) -> Result<TestReport, ApiError> {
        let (name, entry) = match target {
            TestTarget::Draft { draft } => (draft.name.trim().to_owned(), draft.entry()),
            TestTarget::Pasted { text } => editing::pasted_servers(text)
                .map_err(ApiError::invalid_args)?
                .into_iter()
                .next()
                .ok_or_else(|| ApiError::invalid_args("the pasted text names no server"))?,
            TestTarget::Configured { name } => {
                self.restart(name).await;
                let listing = self.connectors().await;
                let connector = listing
                    .into_iter()
                    .find(|c| &c.name == name)
                    .ok_or_else(|| ApiError::no_connector(name))?;
                return Ok(TestReport {
                    name: connector.name,
                    ok: connector.error.is_none(),
                    error: connector.error,
                    tools: connector.methods,
                });
            }
        };
        let name = if name.is_empty() {
            "draft".to_owned()
        } else {
            name
        };
        let text = serde_json::json!({ "mcpServers": { name.clone(): entry } }).to_string();
        let path = self.dir().join(config::FILE_NAME);
        let parsed = config::parse(&text, &path, self.dir())
            .map_err(|e| ApiError::invalid_args(e.message))?;
        let Some(server) = parsed
            .connectors
            .first()
            .and_then(|entry| McpConnector::from_config(entry, self.dir()))
        else {
            return Err(ApiError::invalid_args("only MCP servers can be tested"));
        };
        let listed = server.tools().await;
        server.shutdown().await;
        Ok(match listed {
            Ok(tools) => TestReport {
                name,
                ok: true,
                error: None,
                tools: tools.into_iter().map(MethodInfo::from).collect(),
            },
            Err(error) => TestReport {
                name,
                ok: false,
                error: Some(error),
                tools: Vec::new(),
            },
        })
    }

    /// Turns one tool's approval, reexecute or hidden flag on or off: the connector's list is written out
    /// whole, as it now stands.
    pub async fn set_method_flag(
        &self,
        connector: &str,
        method: &str,
        flag: MethodFlag,
        on: bool,
    ) -> Result<(), ApiError> {
        self.usable()?;
        let key = self.key_of(connector)?;
        let listing = self.connectors().await;
        let methods = listing
            .iter()
            .find(|c| c.name == connector)
            .map(|c| c.methods.as_slice())
            .unwrap_or_default();
        if !methods.iter().any(|m| m.name == method) {
            return Err(ApiError::refused(codemode::Refusal::NoMethod {
                connector: connector.to_owned(),
                method: method.to_owned(),
            }));
        }
        let has = |m: &MethodInfo| match flag {
            MethodFlag::Approval => m.requires_approval,
            MethodFlag::Reexecute => m.replay == Replay::Reexecute,
            MethodFlag::Hidden => m.hidden,
        };
        let list: Vec<String> = methods
            .iter()
            .filter(|m| if m.name == method { on } else { has(m) })
            .map(|m| m.name.clone())
            .collect();
        let field = match flag {
            MethodFlag::Approval => MethodList::Approval,
            MethodFlag::Reexecute => MethodList::Reexecute,
            MethodFlag::Hidden => MethodList::Hidden,
        };
        let edit = Edit::SetList {
            key,
            field,
            methods: list,
        };
        editing::edit_file(self.dir(), &[edit]).map_err(config_error)?;
        Ok(())
    }

    /// Sets a tool's revert or preview template (`{"method", "args"}`), or removes it with `None`; checked as
    /// the file's own templates are.
    pub fn set_template(
        &self,
        connector: &str,
        method: &str,
        field: TemplateField,
        template: Option<Value>,
    ) -> Result<(), ApiError> {
        self.usable()?;
        let key = self.key_of(connector)?;
        let edit = Edit::SetTemplate {
            key,
            field: match field {
                TemplateField::Revert => TemplateKind::Revert,
                TemplateField::Preview => TemplateKind::Preview,
            },
            method: method.to_owned(),
            template,
        };
        editing::edit_file(self.dir(), &[edit]).map_err(config_error)?;
        Ok(())
    }

    /// The key a connector is written under in `connectors.json`.
    fn key_of(&self, name: &str) -> Result<String, ApiError> {
        self.home
            .entry(name)
            .map(|c| c.key.clone())
            .ok_or_else(|| ApiError::no_connector(name))
    }
}
