//! The operations the Codemode front ends perform — the app's commands, the `codemode` subcommands and the
//! `codemode mcp` tools — in one place, so each front end only parses its input, calls [`Api`] and renders
//! the result. Failures are [`ApiError`]s with a stable [`ErrorCode`]. Every operation that changes the
//! database or `connectors.json` first passes the same gate: it is refused with `config` while
//! `connectors.json` is broken; reading keeps working.

mod asking;
mod bounded;
mod cards;
mod catalog;
mod deciding;
mod devices;
pub mod display;
mod error;
mod export;
mod following;
mod history;
mod library;
mod listing;
mod managing;
mod notifying;
mod permissions;
mod preview;
mod reading;
mod reruns;
mod retention;
mod runs;
mod settings;
pub mod types;
mod wait;
mod webhooks;

pub use asking::{ClientAnswer, ClientDecision, ClientQuestion, question_text};
pub use bounded::{DEFAULT_MAX_OUTPUT_CHARS, MIN_MAX_OUTPUT_CHARS, OutputBudget, bound_outcome};
pub use cards::{ApprovalCard, QueuedCall};
pub use deciding::{
    AllowPreview, AllowReport, DecisionResult, RECENT_CALLS, RecentCall, RuleReach, ShownCall,
};
pub use devices::{LINK_VALID, PAIRING_VALID, PairedDevice, Pairing, SignedLink};
pub use display::ArgumentRow;
pub use error::{ApiError, ErrorCode};
pub use export::{ExportFormat, Exported};
pub use following::FollowingApi;
pub use history::HistoryFilter;
pub use listing::{ConnectorInfo, ConnectorStatus, MethodInfo, endpoint};
pub use managing::{MethodFlag, ServerDraft, TemplateField, TestReport, TestTarget};
pub use notifying::{
    ActionOutcome, BODY_MARKUP, NotificationAction, NotificationAnswer, NotificationCard,
    NotificationSignal, SentNotification, notification_body_for, reminder_due,
};
pub use permissions::Grant;
pub use preview::{DiffLine, Hunk, LinePart, LineTag, PendingPreview, PreviewView};
pub use reruns::Rerun;
pub use retention::DEADLINE_LOOK;
pub use settings::RuntimeForm;
pub use wait::{Running, WaitOutcome};
pub use webhooks::{Announcement, WEBHOOK_ATTEMPTS};

use connectors::config::RuntimeSettings;
use connectors::{Home, HomeOptions};
use std::path::Path;

/// An opened data directory and everything a front end may do with it.
pub struct Api {
    home: Home,
}

impl Api {
    /// Opens a data directory as every host does. A broken `connectors.json` does not stop it from opening:
    /// reads work, and mutating operations answer `config`.
    pub async fn open(dir: &Path, options: HomeOptions) -> Result<Api, ApiError> {
        Ok(Api::new(Home::open(dir, options).await?))
    }

    /// Over a data directory the host opened itself.
    pub fn new(home: Home) -> Api {
        Api { home }
    }

    pub fn dir(&self) -> &Path {
        &self.home.dir
    }

    /// Why `connectors.json` cannot be used, if it cannot.
    pub fn config_error(&self) -> Option<&str> {
        self.home.config_error.as_deref()
    }

    /// The runtime settings in force (defaults when `connectors.json` is broken).
    pub fn settings(&self) -> &RuntimeSettings {
        &self.home.settings
    }

    /// Stops the MCP servers this host started; call it before the host exits or drops the `Api`.
    pub async fn shutdown(&self) {
        self.home.connectors.shutdown().await;
    }

    /// The gate of every mutating operation: `config` while `connectors.json` is broken.
    pub fn usable(&self) -> Result<(), ApiError> {
        self.home
            .usable()
            .map_err(|message| ApiError::new(ErrorCode::Config, message))
    }

    /// The app closed to the tray stands by: no warm sandbox worker is kept until it is back
    /// (docs/desktop.md, "Closed to the tray"); a pass meanwhile starts its own.
    pub fn stand_by(&self, standing_by: bool) {
        self.home.runtime.set_warm(!standing_by);
    }

    /// How much an outcome for the model may say (`runtime.maxOutputChars`), listing its calls or not.
    pub fn output_budget(&self, include_calls: bool) -> OutputBudget {
        OutputBudget {
            max_chars: self
                .home
                .config
                .as_ref()
                .map_or(DEFAULT_MAX_OUTPUT_CHARS, |c| c.max_output_chars),
            include_calls,
        }
    }
}

#[cfg(test)]
mod tests;
