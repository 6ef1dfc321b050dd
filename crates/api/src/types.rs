//! TypeScript declarations of the shapes the UI reads, generated from the Rust types with ts-rs into
//! `ui/src/types/` (committed). The test below regenerates them into a temporary folder and fails when the
//! committed files differ; `CODEMODE_WRITE_TYPES=1 cargo test -p codemode-api types` rewrites them.

use crate::{
    AllowReport, ApiError, ApprovalCard, ConnectorInfo, DecisionResult, PreviewView, RuleReach,
    RuntimeForm, WaitOutcome,
};
use codemode::{
    ExecutionPage, ExecutionQuery, ExecutionState, Outcome, RollbackReport, Snippet, ToolLogEntry,
};
use std::path::{Path, PathBuf};
use ts_rs::{Config, ExportError, TS};

/// Where the committed declarations live, from this crate's folder.
pub fn committed_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/types")
}

/// Writes the declarations (with those of every type they use) into `dir`. Integers are `number`: that is
/// how they reach the UI as JSON.
pub fn export(dir: &Path) -> Result<(), ExportError> {
    let config = Config::new().with_out_dir(dir).with_large_int("number");
    ApiError::export_all(&config)?;
    ApprovalCard::export_all(&config)?;
    crate::QueuedCall::export_all(&config)?;
    ConnectorInfo::export_all(&config)?;
    PreviewView::export_all(&config)?;
    DecisionResult::export_all(&config)?;
    RuleReach::export_all(&config)?;
    AllowReport::export_all(&config)?;
    crate::AllowPreview::export_all(&config)?;
    codemode::AllowIntent::export_all(&config)?;
    crate::RecentCall::export_all(&config)?;
    codemode::RuleListing::export_all(&config)?;
    RuntimeForm::export_all(&config)?;
    crate::ServerDraft::export_all(&config)?;
    crate::TestTarget::export_all(&config)?;
    crate::TestReport::export_all(&config)?;
    crate::MethodFlag::export_all(&config)?;
    crate::TemplateField::export_all(&config)?;
    WaitOutcome::export_all(&config)?;
    crate::Rerun::export_all(&config)?;
    ExecutionPage::export_all(&config)?;
    ExecutionQuery::export_all(&config)?;
    ExecutionState::export_all(&config)?;
    Outcome::export_all(&config)?;
    RollbackReport::export_all(&config)?;
    Snippet::export_all(&config)?;
    ToolLogEntry::export_all(&config)?;
    codemode::Device::export_all(&config)?;
    crate::Pairing::export_all(&config)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Every file under `dir`, by its path relative to `dir`.
    fn files(dir: &Path) -> BTreeMap<PathBuf, String> {
        let mut found = BTreeMap::new();
        let mut folders = vec![dir.to_path_buf()];
        while let Some(folder) = folders.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    folders.push(path);
                } else if let (Ok(relative), Ok(text)) =
                    (path.strip_prefix(dir), std::fs::read_to_string(&path))
                {
                    found.insert(relative.to_path_buf(), text);
                }
            }
        }
        found
    }

    #[test]
    fn committed_typescript_declarations_match_the_rust_types() {
        let fresh = std::env::temp_dir().join(format!("codemode-api-types-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&fresh);
        export(&fresh).expect("export the declarations");
        let generated = files(&fresh);
        let _ = std::fs::remove_dir_all(&fresh);
        assert!(generated.contains_key(Path::new("ApprovalCard.ts")));
        if std::env::var_os("CODEMODE_WRITE_TYPES").is_some() {
            let _ = std::fs::remove_dir_all(committed_dir());
            export(&committed_dir()).expect("write the declarations");
        }
        let committed = files(&committed_dir());
        let stale: Vec<String> = generated
            .keys()
            .chain(committed.keys())
            .filter(|path| generated.get(*path) != committed.get(*path))
            .map(|path| path.display().to_string())
            .collect();
        assert!(
            stale.is_empty(),
            "ui/src/types is out of date ({}): run CODEMODE_WRITE_TYPES=1 cargo test -p codemode-api types",
            stale.join(", ")
        );
    }
}
