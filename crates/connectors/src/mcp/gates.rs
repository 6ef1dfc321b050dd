//! The gates a server's tool annotations produce, remembered between starts so that a gate a new version of
//! the server moves is shown as moved.

use super::{McpConnector, Method};
use std::collections::BTreeMap;
use std::path::Path;

/// How long a moved gate is shown as moved.
const GATE_CHANGE_SHOWN_MS: i64 = 7 * 24 * 3600 * 1000;

/// One tool's gate as remembered in `gates.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct RememberedGate {
    asked: bool,
    gate: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    changed: Option<codemode::GateChange>,
}

impl McpConnector {
    /// Remembers the gates its tools' annotations produce under `data_dir`, to show one a server moves.
    pub fn with_gates_file(mut self, data_dir: &Path) -> Self {
        self.gates_file = Some(data_dir.join("state").join(&self.name).join("gates.json"));
        self
    }

    /// Compares the gates the server's annotations produce now with those of its last start: a tool whose gate
    /// moved (same `approval` mode, other verdict or other annotations) carries the old one for
    /// [`GATE_CHANGE_SHOWN_MS`]. Only gates read from annotations are remembered: a list is the person's own.
    pub(super) fn remember_gates(&self, methods: &mut [Method]) {
        let Some(file) = &self.gates_file else {
            return;
        };
        let by_hints = |gate: &str| {
            gate.starts_with("approval \"writes\"") || gate.starts_with("approval \"destructive\"")
        };
        let mut remembered: BTreeMap<String, RememberedGate> = std::fs::read(file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let mode = |gate: &str| gate.split(':').next().unwrap_or_default().to_owned();
        for method in methods.iter_mut() {
            let descriptor = &mut method.descriptor;
            let Some(gate) = descriptor.gate.clone().filter(|g| by_hints(g)) else {
                continue;
            };
            let asked = descriptor.requires_approval;
            let changed = match remembered.get(&method.original) {
                Some(before)
                    if mode(&before.gate) == mode(&gate)
                        && (before.asked != asked || before.gate != gate) =>
                {
                    Some(codemode::GateChange {
                        asked: before.asked,
                        gate: before.gate.clone(),
                        at: now,
                    })
                }
                Some(before) if before.gate == gate && before.asked == asked => before
                    .changed
                    .clone()
                    .filter(|c| now - c.at < GATE_CHANGE_SHOWN_MS),
                _ => None,
            };
            descriptor.gate_changed = changed.clone();
            remembered.insert(
                method.original.clone(),
                RememberedGate {
                    asked,
                    gate,
                    changed,
                },
            );
        }
        if let Ok(text) = serde_json::to_vec_pretty(&remembered) {
            // Best effort: without the file a moved gate is simply not shown as moved.
            if let Some(folder) = file.parent() {
                let _ = crate::owner_only::create_dir_all(folder);
            }
            let _ = std::fs::write(file, text);
        }
    }
}
