//! Deciding from the console: several calls at once with one report, an edit checked before it is sent, and
//! "approve and allow" — an approval that adds the rule a person shaped from the call, with how far that rule
//! would reach before it is added (docs/api.md, "Deciding in the app").

use crate::{Api, ApiError};
use codemode::allowing::{AllowIntent, Approved, allowing};
use codemode::rules::{Call, CompiledRule};
use codemode::{Actor, CallRef, ExecutionStatus, Operation, Outcome, PendingAction, Refusal, Rule};
use serde::{Deserialize, Serialize};

/// A waiting call as a person was shown it, named by a decision made from a list: the run, the seq and the
/// digest of the arguments shown ([`codemode::PendingAction::digest`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ShownCall {
    pub execution_id: String,
    pub seq: u64,
    pub digest: String,
}

impl ShownCall {
    pub fn call_ref(&self) -> CallRef {
        CallRef {
            seq: self.seq,
            digest: Some(self.digest.clone()),
        }
    }
}

/// What happened to one of several decisions made at once.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct DecisionResult {
    pub execution_id: String,
    /// The call decided, for a rejection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// For an approval: how the run went on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// Why this one was not decided; the others were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
}

/// The rule "approve and allow" would add, before it is added, and how far it would reach.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AllowPreview {
    pub rule: Rule,
    pub reach: RuleReach,
}

/// How many calls a rule would match: among the waiting ones, and among the recent runs' calls.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct RuleReach {
    /// Waiting calls it matches, as `executionId` (what "approve the waiting ones" would approve).
    pub waiting: Vec<String>,
    /// Of the newest [`RECENT_CALLS`] decided or finished calls, how many it matches.
    pub recent: usize,
    /// How many calls were looked at.
    pub recent_calls: usize,
}

/// How many of the newest calls "recent calls" looks at.
pub const RECENT_CALLS: usize = 2_000;

/// A call made recently, as the rules view offers it for a test.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct RecentCall {
    /// `connector.method`.
    pub call: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub at: i64,
}

/// An approval that added a rule: how the run went on, the rule, and the waiting calls it also approved.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AllowReport {
    pub outcome: Outcome,
    pub rule: Rule,
    pub also_approved: Vec<DecisionResult>,
}

impl Api {
    /// Approves each run's waiting call, each its own decision; one report, in the given order.
    /// Each is bound to the call shown: one that changed meanwhile is `stale` and not decided.
    pub async fn approve_many(&self, calls: &[ShownCall], actor: Actor) -> Vec<DecisionResult> {
        let mut results = Vec::with_capacity(calls.len());
        for call in calls {
            let outcome = self
                .approve_call(&call.execution_id, Some(&call.call_ref()), actor, None)
                .await;
            let (outcome, error) = split(outcome);
            results.push(DecisionResult {
                execution_id: call.execution_id.clone(),
                seq: Some(call.seq),
                outcome,
                error,
            });
        }
        results
    }

    /// Rejects each call, each its own decision, with one reason for all; one report, in the given order.
    pub async fn reject_many(
        &self,
        calls: &[ShownCall],
        actor: Actor,
        reason: Option<&str>,
    ) -> Vec<DecisionResult> {
        let mut results = Vec::with_capacity(calls.len());
        for call in calls {
            let result = self
                .reject_call(
                    &call.execution_id,
                    call.seq,
                    Some(&call.digest),
                    actor,
                    reason,
                )
                .await;
            results.push(DecisionResult {
                execution_id: call.execution_id.clone(),
                seq: Some(call.seq),
                outcome: None,
                error: result.err(),
            });
        }
        results
    }

    /// Whether `edited` could replace the arguments of run `id`'s waiting call: `invalid_args` says why not.
    pub async fn check_edit(&self, id: &str, edited: &serde_json::Value) -> Result<(), ApiError> {
        self.execution(id)?;
        Ok(self.home.runtime.check_edit(id, edited).await?)
    }

    /// What `rule` would match if it were added: the waiting calls, and the newest [`RECENT_CALLS`] calls.
    pub fn rule_reach(&self, rule: &Rule) -> Result<RuleReach, ApiError> {
        let compiled =
            CompiledRule::new(rule.clone()).map_err(|e| ApiError::invalid_args(e.to_string()))?;
        let now = self.home.runtime.now_ms();
        let matches = |row: &codemode::RecentCallRow| {
            let path = format!("{}.{}", row.connector, row.method);
            compiled.matches(&Call {
                path: &path,
                args: row.args.as_ref(),
                source: row.source.as_deref(),
                now,
            })
        };
        let (mut recent, mut recent_calls) = (0, 0);
        for row in self.home.runtime.recent_calls(RECENT_CALLS)? {
            if !row.pending {
                recent_calls += 1;
                recent += usize::from(matches(&row));
            }
        }
        // Every waiting call counts, however old its run.
        let waiting = self
            .home
            .runtime
            .waiting_matching(&compiled)?
            .into_iter()
            .map(|call| call.execution_id)
            .collect();
        Ok(RuleReach {
            waiting,
            recent,
            recent_calls,
        })
    }

    /// The call run `id` waits on that a person was shown (`shown`), or the one waiting now, with its run's
    /// source; refused as stale when the run no longer waits on it.
    fn waiting_call(
        &self,
        id: &str,
        shown: Option<&CallRef>,
    ) -> Result<(PendingAction, Option<String>), ApiError> {
        let Some(run) = self.home.runtime.execution_head(id)? else {
            return Err(ApiError::no_execution(id));
        };
        let waiting = self.home.runtime.pending(Some(id))?;
        let call = match shown {
            Some(shown) => waiting.into_iter().find(|call| {
                call.seq == shown.seq && shown.digest.as_ref().is_none_or(|d| *d == call.digest)
            }),
            None => waiting.into_iter().next(),
        };
        let refused = |refusal| Err(ApiError::refused(refusal));
        match (call, shown) {
            (Some(call), _) => Ok((call, run.source)),
            (None, _) if run.status != ExecutionStatus::Paused => refused(Refusal::NotPaused {
                run: id.to_owned(),
                status: run.status,
                op: Operation::Approve,
            }),
            (None, Some(shown)) => refused(Refusal::NotWaiting {
                run: id.to_owned(),
                seq: shown.seq,
            }),
            (None, None) => refused(Refusal::NothingWaiting { run: id.to_owned() }),
        }
    }

    /// The `allow` rule a person's choice (`intent`) makes of the call of run `id` they were shown: built by
    /// [`codemode::allowing::allowing`] from the call's arguments as its connector reads them (or `edited`,
    /// which is what will run) and its run's source, on the host's clock (docs/design.md, "Remembered
    /// decisions are literal"). Neither front end builds a rule itself.
    pub fn allow_rule(
        &self,
        id: &str,
        shown: Option<&CallRef>,
        edited: Option<&serde_json::Value>,
        intent: &AllowIntent,
        actor: Actor,
    ) -> Result<Rule, ApiError> {
        let (call, source) = self.waiting_call(id, shown)?;
        let path = format!("{}.{}", call.connector, call.method);
        let rule = allowing(
            format!(
                "allow-{}-{}-{}",
                call.connector,
                call.method,
                &uuid::Uuid::new_v4().simple().to_string()[..8]
            ),
            Approved {
                call: &path,
                args: edited.or(call.canonical.as_ref()).or(call.args.as_ref()),
                source: source.as_deref(),
            },
            intent,
            self.home.runtime.now_ms(),
            format!("allowed from an approval by {actor}"),
        );
        CompiledRule::new(rule.clone()).map_err(|e| ApiError::invalid_args(e.to_string()))?;
        Ok(rule)
    }

    /// The rule `intent` makes of run `id`'s call, and how far it would reach ([`Api::rule_reach`]).
    pub fn allow_reach(
        &self,
        id: &str,
        shown: Option<&CallRef>,
        intent: &AllowIntent,
        actor: Actor,
    ) -> Result<AllowPreview, ApiError> {
        let rule = self.allow_rule(id, shown, None, intent, actor)?;
        let reach = self.rule_reach(&rule)?;
        Ok(AllowPreview { rule, reach })
    }

    /// Approves run `id` (with `edited` arguments when given) and adds the `allow` rule `intent` makes of the
    /// call ([`Api::allow_rule`]), then, when asked, approves the waiting calls the rule matches, each its
    /// own decision by that rule. The rule is added only when the approval went through.
    pub async fn approve_allowing(
        &self,
        id: &str,
        shown: Option<&CallRef>,
        actor: Actor,
        edited: Option<serde_json::Value>,
        intent: &AllowIntent,
        approve_waiting: bool,
    ) -> Result<AllowReport, ApiError> {
        self.usable()?;
        let rule = self.allow_rule(id, shown, edited.as_ref(), intent, actor)?;
        let outcome = self.approve_call(id, shown, actor, edited).await?;
        self.add_rule(rule.clone(), actor)?;
        let also_approved = if approve_waiting {
            self.approve_waiting(&rule.id)
                .await?
                .into_iter()
                .map(|(execution_id, outcome)| {
                    let (outcome, error) = split(outcome);
                    DecisionResult {
                        execution_id,
                        seq: None,
                        outcome,
                        error,
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(AllowReport {
            outcome,
            rule,
            also_approved,
        })
    }

    /// The newest `limit` distinct calls of recent runs (steps left out), newest first.
    pub fn recent_calls(&self, limit: usize) -> Result<Vec<RecentCall>, ApiError> {
        let mut calls: Vec<RecentCall> = Vec::new();
        for row in self.home.runtime.recent_calls(RECENT_CALLS)? {
            let call = RecentCall {
                call: format!("{}.{}", row.connector, row.method),
                args: row.args,
                source: row.source,
                at: row.at,
            };
            if !calls
                .iter()
                .any(|c| c.call == call.call && c.args == call.args && c.source == call.source)
            {
                calls.push(call);
                if calls.len() >= limit {
                    break;
                }
            }
        }
        Ok(calls)
    }

    /// Replaces the database rule `id` (an edit, or switching it off or on).
    pub fn replace_rule(&self, id: &str, rule: Rule) -> Result<(), ApiError> {
        self.usable()?;
        Ok(self.home.runtime.replace_rule(id, rule)?)
    }
}

fn split(result: Result<Outcome, ApiError>) -> (Option<Outcome>, Option<ApiError>) {
    match result {
        Ok(outcome) => (Some(outcome), None),
        Err(error) => (None, Some(error)),
    }
}
