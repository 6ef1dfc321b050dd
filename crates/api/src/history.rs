//! Which runs the history reads, as a person writes it (docs/history.md, "Filters"), turned into the store's
//! query in one place for the command line and the Executions view; and insights over a stretch of it.

use crate::{Api, ApiError};
use codemode::{ExecutionQuery, ExecutionStatus};
use serde::{Deserialize, Serialize};

/// Which runs the history reads, as a person writes it — on the command line or in the Executions view
/// (docs/history.md, "Filters"): moments as RFC 3339 or a time back from now, globs for calls and sources.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(optional_fields = nullable)]
pub struct HistoryFilter {
    #[serde(default)]
    pub since: Option<String>,
    #[serde(default)]
    pub until: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub call: Option<String>,
    #[serde(default)]
    pub decided_by: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
}

impl HistoryFilter {
    /// The query this filter makes at `now` (epoch ms), or which field is wrong and why. Empty fields are
    /// no filter.
    pub fn query(&self, now: i64) -> Result<ExecutionQuery, ApiError> {
        let given = |text: &Option<String>| {
            text.as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        let moment = |flag: &str, text: &Option<String>| {
            given(text)
                .map(|t| {
                    codemode::parse_moment(&t, now).ok_or_else(|| {
                        ApiError::invalid_args(format!(
                            "--{flag} {t:?} is neither a moment (2026-12-01T09:00:00Z, 2026-12-01) nor a time back from now (7d, 12h)"
                        ))
                    })
                })
                .transpose()
        };
        let status = given(&self.status)
            .map(|s| {
                ExecutionStatus::parse(&s).ok_or_else(|| {
                    ApiError::invalid_args(format!(
                        "unknown status \"{s}\" (running, paused, completed, error, rejected, rolled_back)"
                    ))
                })
            })
            .transpose()?;
        Ok(ExecutionQuery {
            status,
            since: moment("since", &self.since)?,
            until: moment("until", &self.until)?,
            call: given(&self.call),
            decided_by: given(&self.decided_by),
            source: given(&self.source),
            ..ExecutionQuery::default()
        })
    }
}

impl Api {
    /// How people decided on the calls of runs begun since `since` (RFC 3339 or `7d`; all runs when `None`):
    /// counts, approval rate, time to decide, and the shapes approved most often with the rule that would
    /// allow each (docs/history.md, "Insights").
    pub fn insights_since(&self, since: Option<String>) -> Result<codemode::Insights, ApiError> {
        let query = HistoryFilter {
            since,
            ..HistoryFilter::default()
        }
        .query(self.now_ms())?;
        self.insights(query.since)
    }
}
