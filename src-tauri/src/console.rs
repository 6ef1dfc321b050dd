//! The app's state: the data directory opened as every host opens it, what keeps the window usable when it
//! cannot be opened, and the UI preferences kept in the data directory's `settings.json`.

use codemode_api::{Api, ApiError, FollowingApi};
use connectors::HomeOptions;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::settings_file::SettingsFile;

/// What a command answers: the UI gets failures as `{code, message}` ([`ApiError`]).
pub type CommandResult<T> = Result<T, ApiError>;

/// UI preferences (not shared with the CLI): kept in `<data dir>/settings.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Preferences {
    pub notifications: bool,
    /// `system`, `light` or `dark`.
    pub theme: String,
    /// Closing the window keeps the app in the tray (its web view is destroyed), so notifications and the
    /// expiry sweep go on.
    pub close_to_tray: bool,
    /// An XDG autostart entry starts the app at login, in the tray. Read from the entry itself, so removing
    /// the file by hand turns it off.
    pub start_at_login: bool,
}

impl Default for Preferences {
    fn default() -> Self {
        Preferences {
            notifications: true,
            theme: "system".to_owned(),
            close_to_tray: true,
            start_at_login: false,
        }
    }
}

pub struct Console {
    pub dir: PathBuf,
    /// `--home` as given, kept for the autostart entry.
    pub home_flag: Option<PathBuf>,
    /// The opened data directory (or why it could not be opened: a database from a newer version…), opened
    /// again when connectors.json changes.
    api: Arc<FollowingApi>,
    /// The phone page, while Settings → "Approve from a phone" is on (docs/phone.md).
    phone: tokio::sync::Mutex<Option<codemode_phone::PhoneServer>>,
    /// `<data dir>/settings.json`: the preferences below and whether the phone page was on.
    settings: SettingsFile,
    /// Set when another console already has this data directory open.
    pub other_instance: Option<String>,
    /// Held for the life of the app: other consoles see it taken.
    _instance_lock: Option<File>,
}

impl Console {
    pub async fn open(dir: PathBuf, home_flag: Option<PathBuf>) -> Console {
        let (instance_lock, other_instance) = take_instance_lock(&dir);
        let api = FollowingApi::open(
            &dir,
            HomeOptions {
                keep_warm: true,
                serve_host: true,
                ..HomeOptions::default()
            },
        )
        .await;
        Console {
            settings: SettingsFile::in_dir(&dir),
            dir,
            home_flag,
            api: Arc::new(api),
            phone: tokio::sync::Mutex::new(None),
            other_instance,
            _instance_lock: instance_lock,
        }
    }

    /// The API over the opened data directory, or an `internal` error saying why there is none.
    /// The expiry sweep, for as long as the app runs ([`codemode_api::FollowingApi::keep_sweeping`]).
    pub async fn keep_sweeping(&self, host: &str) {
        self.api.keep_sweeping(host).await
    }

    pub async fn api(&self) -> CommandResult<Arc<Api>> {
        self.api.current().await
    }

    /// Why the data directory could not be opened, if it could not.
    pub async fn fatal(&self) -> Option<String> {
        self.api.current().await.err().map(|e| e.message)
    }

    /// How many times the data directory was opened again (connectors.json changed).
    pub fn generation(&self) -> u64 {
        self.api.generation()
    }

    /// Opens the data directory again now, without waiting for the next operation to see the change.
    pub async fn reopen(&self) {
        self.api.reopen().await;
    }

    /// Where the phone page is served, while it is.
    pub async fn phone_serving(&self) -> Option<codemode_phone::Serving> {
        self.phone.lock().await.as_ref().map(|p| p.serving.clone())
    }

    /// Serves the phone page on [`codemode_phone::NETWORK_LISTEN`], or stops it; remembered in
    /// `settings.json` so the app serves it again when it starts.
    pub async fn set_phone(&self, on: bool) -> CommandResult<()> {
        let mut phone = self.phone.lock().await;
        if on && phone.is_none() {
            let listen = codemode_phone::NETWORK_LISTEN
                .parse()
                .map_err(|_| ApiError::internal("the phone page's address"))?;
            let server = codemode_phone::PhoneServer::start(self.api.clone(), listen)
                .await
                .map_err(|e| ApiError::new(codemode_api::ErrorCode::Unavailable, e.to_string()))?;
            *phone = Some(server);
        } else if !on && let Some(server) = phone.take() {
            server.stop();
        }
        self.settings
            .set(&[("phone", on.into())])
            .map_err(ApiError::internal)
    }

    /// Whether the phone page was on when the app last ran.
    pub fn phone_wanted(&self) -> bool {
        self.settings
            .get("phone")
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    }

    pub fn preferences(&self) -> Preferences {
        let store = &self.settings;
        let defaults = Preferences::default();
        Preferences {
            notifications: store
                .get("notifications")
                .and_then(|v| v.as_bool())
                .unwrap_or(defaults.notifications),
            theme: store
                .get("theme")
                .and_then(|v| v.as_str().map(str::to_owned))
                .filter(|t| matches!(t.as_str(), "system" | "light" | "dark"))
                .unwrap_or(defaults.theme),
            close_to_tray: store
                .get("closeToTray")
                .and_then(|v| v.as_bool())
                .unwrap_or(defaults.close_to_tray),
            start_at_login: crate::autostart::autostart_file().is_some_and(|f| f.exists()),
        }
    }

    pub fn save_preferences(&self, preferences: &Preferences) -> CommandResult<()> {
        if !matches!(preferences.theme.as_str(), "system" | "light" | "dark") {
            return Err(ApiError::invalid_args(format!(
                "theme \"{}\": use system, light or dark",
                preferences.theme
            )));
        }
        if preferences.start_at_login != self.preferences().start_at_login {
            let home = self
                .home_flag
                .as_ref()
                .map(|_| std::path::absolute(&self.dir).unwrap_or_else(|_| self.dir.clone()));
            crate::autostart::set_autostart(preferences.start_at_login, home.as_deref())
                .map_err(|e| ApiError::internal(format!("Start at login: {e}")))?;
        }
        self.settings
            .set(&[
                ("notifications", preferences.notifications.into()),
                ("theme", preferences.theme.clone().into()),
                ("closeToTray", preferences.close_to_tray.into()),
            ])
            .map_err(ApiError::internal)
    }
}

/// An advisory lock on `<data dir>/console.lock`: a second console still opens (the database is shared safely
/// between processes) but says that another one is running, with its pid.
fn take_instance_lock(dir: &Path) -> (Option<File>, Option<String>) {
    use std::io::{Read, Seek, Write};
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    // Owner-only, as every folder of ours: the app may be the first to create the data directory.
    let _ = connectors::owner_only::create_dir_all(dir);
    let path = dir.join("console.lock");
    let Ok(mut file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&path)
    else {
        return (None, None);
    };
    // SAFETY: flock on a descriptor this function owns.
    let taken = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    if taken {
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = write!(file, "{}", std::process::id());
        (Some(file), None)
    } else {
        let mut pid = String::new();
        let _ = file.read_to_string(&mut pid);
        let pid = pid.trim();
        let who = if pid.is_empty() {
            "another Codemode Console".to_owned()
        } else {
            format!("another Codemode Console (pid {pid})")
        };
        (
            None,
            Some(format!(
                "{who} has this data directory open. Both windows see the same runs; decisions are safe from either."
            )),
        )
    }
}
