//! The window's own settings, `<data dir>/settings.json`: its preferences and whether the phone page was on.
//!
//! A JSON object of a few keys (`notifications`, `theme`, `closeToTray`, `phone`), the shape
//! tauri-plugin-store wrote before it left the build (docs/performance.md, "Build"), so a file from then is
//! read as it is. Each change reads the file, sets its keys and replaces it atomically, owner-only; keys this
//! version does not know are kept, and a file that is not a JSON object is refused, never overwritten.

use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub struct SettingsFile {
    path: PathBuf,
    /// One change at a time within the app, so two saves cannot each drop the other's key.
    writing: Mutex<()>,
}

impl SettingsFile {
    pub fn in_dir(dir: &Path) -> SettingsFile {
        SettingsFile {
            path: dir.join("settings.json"),
            writing: Mutex::new(()),
        }
    }

    /// The value of `key`, or `None` when the file, the key or a readable file is missing.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.read().ok()?.remove(key)
    }

    /// Sets each key to its value and writes the file. A file that cannot be read as a JSON object is left
    /// as it is, and the error says where it is.
    pub fn set(&self, entries: &[(&str, Value)]) -> Result<(), String> {
        let _one_at_a_time = self
            .writing
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut settings = self.read()?;
        for (key, value) in entries {
            settings.insert((*key).to_owned(), value.clone());
        }
        let mut bytes = serde_json::to_vec_pretty(&Value::Object(settings))
            .map_err(|e| format!("{}: {e}", self.path.display()))?;
        bytes.push(b'\n');
        connectors::owner_only::replace(&self.path, &bytes)
            .map_err(|e| format!("Could not write {}: {e}", self.path.display()))
    }

    fn read(&self) -> Result<Map<String, Value>, String> {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(e) => return Err(format!("Could not read {}: {e}", self.path.display())),
        };
        match serde_json::from_slice(&bytes) {
            Ok(Value::Object(settings)) => Ok(settings),
            Ok(_) => Err(format!(
                "{} is not a JSON object: fix it or remove it (the window's preferences live there)",
                self.path.display()
            )),
            Err(e) => Err(format!(
                "{} is not valid JSON ({e}): fix it or remove it (the window's preferences live there)",
                self.path.display()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dir() -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("settings-file-{}-{}", std::process::id(), line!()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        dir
    }

    #[test]
    fn keys_are_kept_across_saves_and_unknown_ones_survive() {
        let dir = dir().join("keys");
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        std::fs::write(
            dir.join("settings.json"),
            r#"{"theme":"dark","fromLater":1}"#,
        )
        .expect("written");
        let file = SettingsFile::in_dir(&dir);
        assert_eq!(file.get("theme"), Some(json!("dark")));
        file.set(&[("phone", json!(true))]).expect("saved");
        file.set(&[("theme", json!("light"))]).expect("saved");
        let saved: Value =
            serde_json::from_slice(&std::fs::read(dir.join("settings.json")).expect("read"))
                .expect("JSON");
        assert_eq!(
            saved,
            json!({"theme": "light", "fromLater": 1, "phone": true})
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("settings.json"))
            .expect("there")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_broken_file_is_refused_and_left_as_it_was() {
        let dir = dir().join("broken");
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        std::fs::write(dir.join("settings.json"), "{\"theme\": ").expect("written");
        let file = SettingsFile::in_dir(&dir);
        assert_eq!(file.get("theme"), None);
        let refused = file.set(&[("theme", json!("dark"))]).expect_err("refused");
        assert!(refused.contains("is not valid JSON"), "{refused}");
        assert_eq!(
            std::fs::read_to_string(dir.join("settings.json")).expect("read"),
            "{\"theme\": "
        );
    }
}
