//! Saved snippets (`cm_snippets`).

use super::rows::parse_json;
use super::sql::args;
use super::{Store, StoreError};
use crate::model::Snippet;
use serde_json::Value;

impl Store {
    /// Saves (or replaces) a snippet from an execution's raw code and recorded connectors.
    pub fn save_snippet(&self, snippet: &Snippet) -> Result<(), StoreError> {
        let schema = snippet.input_schema.as_ref().map(Value::to_string);
        let connectors = serde_json::to_string(&snippet.connectors.clone().unwrap_or_default())
            .unwrap_or_default();
        self.write(|tx| {
            tx.execute(
                "INSERT INTO cm_snippets (runtime, name, description, code, saved_at, input_schema, connectors)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (runtime, name) DO UPDATE SET description = excluded.description,
                   code = excluded.code, saved_at = excluded.saved_at, input_schema = excluded.input_schema,
                   connectors = excluded.connectors",
                args![self.runtime, snippet.name, snippet.description, snippet.code, snippet.saved_at, schema, connectors],
            )?;
            Ok(())
        })
    }

    /// Snippets by name (all, or the one named).
    pub fn snippets(&self, name: Option<&str>) -> Result<Vec<Snippet>, StoreError> {
        self.with(|connection| {
            let rows = connection.query_map(
                "SELECT name, description, code, saved_at, input_schema, connectors FROM cm_snippets
                 WHERE runtime = ?1 AND (CAST(?2 AS TEXT) IS NULL OR name = ?2) ORDER BY name", args![self.runtime, name], |row| {
                Ok(Snippet {
                    name: row.get(0)?,
                    description: row.get(1)?,
                    code: row.get(2)?,
                    saved_at: row.get(3)?,
                    input_schema: parse_json(row.get(4)?),
                    connectors: parse_json(row.get(5)?)
                        .and_then(|v| serde_json::from_value(v).ok()),
                })
            })?;
            Ok(rows)
        })
    }

    pub fn delete_snippet(&self, name: &str) -> Result<bool, StoreError> {
        self.write(|tx| {
            let deleted = tx.execute(
                "DELETE FROM cm_snippets WHERE runtime = ?1 AND name = ?2",
                args![self.runtime, name],
            )?;
            Ok(deleted > 0)
        })
    }
}
