//! What a call would change, as a person is shown it before deciding, and what of it is kept with the decision.

use super::is_false;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a call would change, computed before a person decides (docs/design.md, "Previews"). Texts longer than
/// [`PREVIEW_TEXT_LIMIT`] are cut, with `cut` set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Preview {
    /// A text file written: its content now (`None` for a new file) and after the call.
    Diff {
        path: String,
        before: Option<String>,
        after: String,
        #[serde(default, skip_serializing_if = "is_false")]
        cut: bool,
    },
    /// A file deleted: what will be lost (`None` when there is no such file).
    Delete {
        path: String,
        before: Option<String>,
        #[serde(default, skip_serializing_if = "is_false")]
        cut: bool,
    },
    /// A file moved; `overwrites` is the destination's content that the move replaces.
    Move {
        from: String,
        to: String,
        overwrites: Option<String>,
        #[serde(default, skip_serializing_if = "is_false")]
        cut: bool,
    },
    /// Content that is not text: sizes and SHA-256 digests (before: `None` for a new file).
    Binary {
        path: String,
        before_size: Option<u64>,
        after_size: u64,
        before_sha256: Option<String>,
        after_sha256: String,
    },
    /// No preview could be computed (the connector failed or took too long): why.
    Unavailable { message: String },
    /// The present state of what the call changes, as a read-only call returned it.
    Current {
        value: Value,
        #[serde(default, skip_serializing_if = "is_false")]
        cut: bool,
    },
}

impl Preview {
    /// The preview with every text cut to [`PREVIEW_TEXT_LIMIT`] bytes (`cut` set when one was).
    pub fn bounded(self) -> Preview {
        fn cut_text(text: &mut String, cut: &mut bool) {
            if text.len() > PREVIEW_TEXT_LIMIT {
                let mut end = PREVIEW_TEXT_LIMIT;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.truncate(end);
                *cut = true;
            }
        }
        let mut preview = self;
        match &mut preview {
            Preview::Diff {
                before, after, cut, ..
            } => {
                if let Some(before) = before {
                    cut_text(before, cut);
                }
                cut_text(after, cut);
            }
            Preview::Delete { before, cut, .. }
            | Preview::Move {
                overwrites: before,
                cut,
                ..
            } => {
                if let Some(before) = before {
                    cut_text(before, cut);
                }
            }
            Preview::Current { value, cut } => {
                let text = value.to_string();
                if text.len() > PREVIEW_TEXT_LIMIT {
                    let mut text = text;
                    cut_text(&mut text, cut);
                    *value = Value::String(text);
                }
            }
            Preview::Binary { .. } => {}
            Preview::Unavailable { message } => {
                let mut ignored = false;
                cut_text(message, &mut ignored);
            }
        }
        preview
    }
}

/// The longest text a preview carries, in bytes; longer texts are cut at a character boundary.
pub const PREVIEW_TEXT_LIMIT: usize = 256 * 1024;

/// The largest preview kept whole with a decision (JSON bytes); a larger one keeps only its digest.
pub const SHOWN_PREVIEW_LIMIT: usize = 64 * 1024;

/// The preview a person was shown, kept with the decision for the audit log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Shown {
    /// SHA-256 of the preview's JSON.
    pub digest: String,
    /// When it was computed for display (epoch ms).
    pub at: i64,
    /// The preview itself, when its JSON is at most [`SHOWN_PREVIEW_LIMIT`] bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<Preview>,
}
