//! What a person keeps between runs: the policy rules and the snippet library.

use crate::{Api, ApiError};
use codemode::{Actor, SaveSnippet, Snippet};

impl Api {
    /// Every rule in force: the database's, then the read-only ones of `connectors.json`.
    pub fn rules(&self) -> Result<Vec<codemode::RuleListing>, ApiError> {
        Ok(self.home.runtime.rules()?)
    }

    /// Adds a rule, recorded as added by `actor`; a bad rule is `invalid_args` naming the field.
    pub fn add_rule(&self, rule: codemode::Rule, actor: Actor) -> Result<(), ApiError> {
        self.usable()?;
        Ok(self.home.runtime.add_rule(rule, actor.as_str())?)
    }

    /// Removes a database rule.
    pub fn remove_rule(&self, id: &str) -> Result<(), ApiError> {
        self.usable()?;
        Ok(self.home.runtime.remove_rule(id)?)
    }

    /// What the rules would do with `connector.method` called with `args` from `source`; runs nothing.
    pub async fn test_rules(
        &self,
        call: &str,
        args: Option<&serde_json::Value>,
        source: Option<&str>,
    ) -> Result<codemode::Verdict, ApiError> {
        Ok(self.home.runtime.test_rules(call, args, source).await?)
    }

    pub fn snippets(&self) -> Result<Vec<Snippet>, ApiError> {
        Ok(self.home.runtime.snippets()?)
    }

    /// Saves a run's code as a snippet (an empty description counts as none); a name in use is replaced.
    pub fn save_snippet(&self, name: &str, mut save: SaveSnippet) -> Result<Snippet, ApiError> {
        self.usable()?;
        self.execution(&save.execution_id)?;
        save.description = save.description.filter(|d| !d.trim().is_empty());
        Ok(self.home.runtime.save_snippet(name, save)?)
    }

    /// Deletes a snippet; `not_found` when there is none by that name.
    pub fn delete_snippet(&self, name: &str) -> Result<(), ApiError> {
        self.usable()?;
        if self.home.runtime.delete_snippet(name)? {
            Ok(())
        } else {
            Err(ApiError::refused(codemode::Refusal::NoSnippet {
                name: name.to_owned(),
            }))
        }
    }
}
