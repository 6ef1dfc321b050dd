//! A data directory as the app, the CLI and `codemode mcp` all open it: where it is, its `connectors.json`, and
//! the runtime over its database with the connectors the file declares (README "Configuration").

use crate::Connectors;
use crate::config::{self, Config, RuntimeSettings};
use crate::owner_only;
use codemode::{
    Clock, Connector, HostIdentity, Runtime, RuntimeError, RuntimeOptions, StoreLocation,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The database's file name in the data directory.
pub const DATABASE: &str = "codemode.db";

/// `--home DIR` if given, else `$CODEMODE_HOME`, else the platform data directory + `codemode-console`.
pub fn resolve_dir(flag: Option<&Path>) -> PathBuf {
    if let Some(dir) = flag {
        return dir.to_path_buf();
    }
    if let Some(dir) = std::env::var_os("CODEMODE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data.join("codemode-console")
}

/// `$CODEMODE_STORE` if set (a PostgreSQL URL, or an SQLite file's path), else `runtime.store` from
/// connectors.json, else `codemode.db` in the data directory (docs/shared-store.md).
pub fn store_location(dir: &Path, config: Option<&Config>) -> StoreLocation {
    if let Some(store) = std::env::var("CODEMODE_STORE")
        .ok()
        .filter(|s| !s.trim().is_empty())
    {
        return StoreLocation::parse(&store);
    }
    match config.and_then(|c| c.store.as_deref()) {
        Some(url) => StoreLocation::Postgres(url.to_owned()),
        None => StoreLocation::File(dir.join(DATABASE)),
    }
}

/// The file holding this data directory's host id on a shared store.
pub const HOST_ID: &str = "host-id";

/// This data directory's host on a shared store: an id kept in `<data dir>/host-id` (made on first use), so
/// the app and `codemode mcp` on one machine are one host across restarts, and a name people recognise:
/// `user@machine`, with the data directory when it is not the default one (docs/shared-store.md, "Hosts").
pub fn host_identity(dir: &Path) -> std::io::Result<HostIdentity> {
    let file = dir.join(HOST_ID);
    let id = match std::fs::read_to_string(&file) {
        Ok(text) if !text.trim().is_empty() => text.trim().to_owned(),
        _ => {
            let id = uuid::Uuid::new_v4().to_string();
            owner_only::replace(&file, format!("{id}\n").as_bytes())?;
            id
        }
    };
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|name| !name.is_empty())
        .or_else(user_of_this_process)
        .unwrap_or_else(|| "someone".to_owned());
    let machine = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "this machine".to_owned());
    let mut name = format!("{user}@{machine}");
    if dir != resolve_dir(None) {
        name.push_str(&format!(" ({})", dir.display()));
    }
    Ok(HostIdentity { id, name })
}

/// This process's user name from /etc/passwd, where the environment does not say it (a service, a test).
fn user_of_this_process() -> Option<String> {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() }.to_string();
    std::fs::read_to_string("/etc/passwd")
        .ok()?
        .lines()
        .find_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next()?;
            (fields.nth(1)? == uid).then(|| name.to_owned())
        })
}

/// How a host opens its data directory.
#[derive(Clone, Default)]
pub struct HomeOptions {
    /// Keep a sandbox worker warm (long-lived hosts: the app, `codemode mcp`).
    pub keep_warm: bool,
    /// On a shared store, serve as this machine's host: heartbeat, and resume the runs other hosts approve
    /// for it (long-lived hosts: the app, `codemode mcp`; docs/shared-store.md, "Hosts").
    pub serve_host: bool,
    /// The source of time; the wall clock when `None`.
    pub clock: Option<Arc<dyn Clock>>,
    /// The sandbox worker binary; found beside the executable when `None`.
    pub worker: Option<PathBuf>,
    /// Connectors the host brings itself (an embedder's in-process services), after those of
    /// `connectors.json`.
    pub extra_connectors: Vec<Arc<dyn Connector>>,
    /// Outcomes carry the run's calls, read when a pass ends (the `codemode` command line's JSON shows them).
    /// Off, a front end that is asked for them reads them then ([`codemode::Runtime::with_calls`]; the app
    /// never shows them, `codemode mcp` only with `includeCalls`).
    pub outcome_calls: bool,
}

/// An opened data directory. A broken `connectors.json` does not stop it from opening: the runtime then has
/// no connectors, the error is kept, and whatever would need the connectors reports it.
pub struct Home {
    pub dir: PathBuf,
    /// Where the runtime keeps its executions: the data directory's SQLite file, or a shared PostgreSQL.
    pub store: StoreLocation,
    pub settings: RuntimeSettings,
    pub config: Option<Config>,
    pub config_error: Option<String>,
    pub runtime: Runtime,
    pub connectors: Connectors,
}

impl Home {
    pub async fn open(dir: &Path, options: HomeOptions) -> Result<Home, RuntimeError> {
        // It holds the database and the configuration's secrets: created owner-only when missing. One that
        // exists keeps its mode (docs/design.md, "The data directory"); the files inside are owner-only anyway,
        // but a folder others can write to lets them add files beside them, which the person should hear of.
        let found = owner_only::data_dir(dir)
            .map_err(|e| RuntimeError::Configuration(format!("{}: {e}", dir.display())))?;
        if found.others_can_write()
            && let owner_only::DataDir::Existing { mode } = found
        {
            eprintln!(
                "codemode: warning: other users can write to the data directory {} (mode {mode:04o}); what \
                 Codemode keeps there stays owner-only, but a folder only you can write to is safer.",
                dir.display()
            );
        }
        let (config, config_error) = match config::load(dir) {
            Ok(config) => (Some(config), None),
            Err(error) => (None, Some(error.to_string())),
        };
        let (mut connectors, config_error) = match &config {
            Some(config) => match Connectors::build(config, dir) {
                Ok(built) => (built, config_error),
                Err(message) => (Connectors::default(), Some(message)),
            },
            None => (Connectors::default(), config_error),
        };
        connectors.all.extend(options.extra_connectors);
        let settings = config
            .as_ref()
            .map(|c| c.runtime.clone())
            .unwrap_or_default();
        let mut runtime_options = RuntimeOptions {
            name: settings.name.clone(),
            max_executions: settings.max_executions,
            keep_decided_for: settings.keep_decided_for,
            timeout: settings.timeout,
            memory_limit_mb: settings.memory_limit_mb,
            keep_warm: options.keep_warm,
            worker: options.worker,
            rules: config.as_ref().map(|c| c.rules.clone()).unwrap_or_default(),
            outcome_calls: options.outcome_calls,
            ..RuntimeOptions::default()
        };
        if let Some(clock) = options.clock {
            runtime_options.clock = clock;
        }
        let store = store_location(dir, config.as_ref());
        if store.is_shared() {
            runtime_options.host = Some(host_identity(dir).map_err(|e| {
                RuntimeError::Configuration(format!("{}: {e}", dir.join(HOST_ID).display()))
            })?);
            runtime_options.serve_host = options.serve_host;
        }
        let runtime = Runtime::open(store.clone(), runtime_options, connectors.all.clone()).await?;
        Ok(Home {
            dir: dir.to_path_buf(),
            store,
            settings,
            config,
            config_error,
            runtime,
            connectors,
        })
    }

    /// The configuration error, if any: what every operation that needs the connectors answers.
    pub fn usable(&self) -> Result<(), String> {
        match &self.config_error {
            Some(error) => Err(format!("connectors.json is invalid: {error}")),
            None => Ok(()),
        }
    }

    /// Connector hints for the `codemode` tool description.
    pub fn hints(&self) -> HashMap<String, String> {
        self.config
            .iter()
            .flat_map(|c| c.connectors.iter())
            .filter_map(|c| c.hint.clone().map(|h| (c.name.clone(), h)))
            .collect()
    }

    /// The declared type of each connector: `files` or `mcp`.
    pub fn kind_of(&self, name: &str) -> &'static str {
        match self.entry(name).map(|e| &e.kind) {
            Some(config::ConnectorKind::Files { .. }) => "files",
            _ => "mcp",
        }
    }

    /// A connector's entry in `connectors.json`, by its name, else by its key as written.
    pub fn entry(&self, name: &str) -> Option<&config::ConnectorConfig> {
        let entries = || self.config.iter().flat_map(|c| c.connectors.iter());
        entries()
            .find(|c| c.name == name)
            .or_else(|| entries().find(|c| c.key == name))
    }
}
