//! How a rerun names the run it came from and where its program left that run's calls (docs/history.md,
//! "Rerun from a step"): plain records, read by the model and written by reruns.

use serde::{Deserialize, Serialize};

/// The run and call a rerun began from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ForkedFrom {
    pub execution_id: String,
    /// The first call that runs anew: the old run's calls before it are served from its record, never run
    /// again.
    pub seq: u64,
    /// Where the program stopped making the old run's calls before `seq`: it ran fresh from there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diverged: Option<Departure>,
}

/// The call at which a rerun's program left the old run's calls, and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Departure {
    pub seq: u64,
    /// What differed, in a sentence: "expected github.get_issue, got github.create_issue".
    pub detail: String,
}

impl Departure {
    /// How a person is told: "it diverged from the old run at call 2 (…) and ran fresh from there".
    pub fn sentence(&self) -> String {
        format!(
            "The program diverged from the old run at call {} ({}); it ran fresh from there.",
            self.seq, self.detail
        )
    }
}
