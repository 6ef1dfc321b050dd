//! Snippets: completed runs saved as named, reusable recipes.

use super::*;

impl Runtime {
    /// Promotes an execution's code to a snippet (docs/semantics.md §8.1). Any status is accepted: the caller
    /// decides what to offer. Saving under an existing name replaces it.
    pub fn save_snippet(&self, name: &str, save: SaveSnippet) -> Result<Snippet, RuntimeError> {
        let Some(execution) = self.inner.store.execution(&save.execution_id)? else {
            return Err(no_run(&save.execution_id, Operation::SaveSnippet));
        };
        if let Some(schema) = &save.input_schema {
            let size = utf16_len(&schema.to_string());
            if size > MAX_DURABLE_VALUE {
                return Err(RuntimeError::InvalidArgs(too_large_message(
                    "The snippet input schema",
                    size,
                )));
            }
        }
        let snippet = Snippet {
            name: name.to_owned(),
            description: save.description.unwrap_or_default(),
            code: execution.code,
            saved_at: self.inner.now(),
            input_schema: save.input_schema,
            connectors: Some(execution.connectors),
        };
        self.inner.store.save_snippet(&snippet)?;
        Ok(snippet)
    }

    /// Every snippet, by name.
    pub fn snippets(&self) -> Result<Vec<Snippet>, RuntimeError> {
        Ok(self.inner.store.snippets(None)?)
    }

    /// Deletes a snippet; false when there was none by that name.
    pub fn delete_snippet(&self, name: &str) -> Result<bool, RuntimeError> {
        Ok(self.inner.store.delete_snippet(name)?)
    }
}
