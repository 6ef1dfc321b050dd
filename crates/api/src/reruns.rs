//! Rerunning a run from a step, for every front end (docs/history.md, "Rerun from a step"): the new run's
//! outcome with where it came from, and whether its program kept to the old run's calls.

use crate::{Api, ApiError, ErrorCode};
use codemode::{ForkedFrom, Outcome};
use serde::Serialize;

/// A rerun as it ended its first pass, with its link to the run it came from.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Rerun {
    pub outcome: Outcome,
    /// The old run and step; `diverged` when the program left the old run's calls before the step.
    pub forked_from: ForkedFrom,
}

impl Api {
    /// Reruns run `id` from call `from` (from the start when `None`), with `code` instead of its program when
    /// given: a new run linked to the old one, served the old run's outcomes for the calls before `from`
    /// while its program makes the same calls. A step past a call without an outcome on record is
    /// `invalid_args`, an unknown run `not_found`; nothing is begun then.
    pub async fn rerun(
        &self,
        id: &str,
        from: Option<u64>,
        code: Option<&str>,
    ) -> Result<Rerun, ApiError> {
        self.usable()?;
        let outcome = self.home.runtime.rerun(id, from, code).await?;
        let forked_from = self
            .home
            .runtime
            .execution(outcome.execution_id())?
            .and_then(|run| run.forked_from)
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::NotFound,
                    format!(
                        "the rerun \"{}\" was deleted as it ran",
                        outcome.execution_id()
                    ),
                )
            })?;
        Ok(Rerun {
            outcome,
            forked_from,
        })
    }
}
