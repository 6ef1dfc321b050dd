//! Saved programs (snippets), and how a front end asks to save one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A completed program promoted to a reusable recipe (docs/semantics.md §8.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Snippet {
    pub name: String,
    pub description: String,
    pub code: String,
    pub saved_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connectors: Option<Vec<String>>,
}

/// How to save a snippet: from which execution, with what description and input schema.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveSnippet {
    pub execution_id: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub input_schema: Option<Value>,
}
