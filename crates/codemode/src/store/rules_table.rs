//! The policy rules table (`cm_rules`) and the version that tells every process to reload it.

use super::sql::{Sql, args};
use super::{Result, Store, StoreError};
use crate::rules::Rule;
use serde::{Deserialize, Serialize};

/// A rule as the database keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredRule {
    pub rule: Rule,
    pub created_by: String,
    pub created_at: i64,
    pub hits: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_hit: Option<i64>,
}

impl Store {
    /// The rules stored for this runtime, in creation order, with who added each and how often it decided.
    pub fn rules(&self) -> Result<Vec<StoredRule>, StoreError> {
        self.with(|connection| {
            let rows = connection.query_map(
                "SELECT rule, created_by, created_at, hits, last_hit FROM cm_rules WHERE runtime = ?1
                 ORDER BY position, id",
                args![self.runtime],
                |row| {
                    let text: String = row.get(0)?;
                    Ok((text, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?))
                },
            )?;
            let mut rules = Vec::new();
            for row in rows {
                let (text, created_by, created_at, hits, last_hit): (String, String, i64, i64, Option<i64>) = row;
                // A rule written by a newer build that this one cannot read is left out, not fatal.
                if let Ok(rule) = serde_json::from_str::<Rule>(&text) {
                    rules.push(StoredRule { rule, created_by, created_at, hits: hits.max(0) as u64, last_hit });
                }
            }
            Ok(rules)
        })
    }

    /// A value that moves whenever a rule is added or removed, by any process.
    pub fn rules_version(&self) -> Result<i64, StoreError> {
        self.with(|connection| {
            Ok(connection
                .query_row_opt(
                    "SELECT version FROM cm_rules_version WHERE runtime = ?1",
                    args![self.runtime],
                    |row| row.get(0),
                )?
                .unwrap_or(0))
        })
    }

    /// Adds a rule (already validated); false when one with that id exists.
    pub fn add_rule(&self, rule: &Rule, by: &str, now: i64) -> Result<bool, StoreError> {
        let text = serde_json::to_string(rule).unwrap_or_default();
        self.write(|tx| {
            let added = tx.execute(
                "INSERT INTO cm_rules (runtime, id, rule, created_by, created_at, position)
                 SELECT ?1, ?2, ?3, ?4, ?5, coalesce(max(position), 0) + 1 FROM cm_rules WHERE runtime = ?1
                 ON CONFLICT DO NOTHING",
                args![self.runtime, rule.id, text, by, now],
            )?;
            if added == 1 {
                bump_rules_version(tx, &self.runtime)?;
            }
            Ok(added == 1)
        })
    }

    /// Replaces the rule `id` with `rule` (which may carry a new id), keeping who added it, when, and its hits;
    /// false when there is no rule `id`, or the new id is another rule's.
    pub fn replace_rule(&self, id: &str, rule: &Rule) -> Result<bool, StoreError> {
        let text = serde_json::to_string(rule).unwrap_or_default();
        self.write(|tx| {
            let taken = rule.id != id
                && tx
                    .query_opt(
                        "SELECT id FROM cm_rules WHERE runtime = ?1 AND id = ?2",
                        args![self.runtime, rule.id],
                    )?
                    .is_some();
            if taken {
                return Ok(false);
            }
            let replaced = tx.execute(
                "UPDATE cm_rules SET id = ?3, rule = ?4 WHERE runtime = ?1 AND id = ?2",
                args![self.runtime, id, rule.id, text],
            )?;
            if replaced == 1 {
                bump_rules_version(tx, &self.runtime)?;
            }
            Ok(replaced == 1)
        })
    }

    /// Removes a rule; false when there was none by that id.
    pub fn remove_rule(&self, id: &str) -> Result<bool, StoreError> {
        self.write(|tx| {
            let removed = tx.execute(
                "DELETE FROM cm_rules WHERE runtime = ?1 AND id = ?2",
                args![self.runtime, id],
            )?;
            if removed == 1 {
                bump_rules_version(tx, &self.runtime)?;
            }
            Ok(removed == 1)
        })
    }
}

fn bump_rules_version(tx: &dyn Sql, runtime: &str) -> Result<()> {
    tx.execute(
        "INSERT INTO cm_rules_version (runtime, version) VALUES (?1, 1)
         ON CONFLICT (runtime) DO UPDATE SET version = cm_rules_version.version + 1",
        args![runtime],
    )?;
    Ok(())
}
