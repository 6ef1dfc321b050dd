//! Deciding from the console: several calls at once with one report, an edit checked before it is sent, and
//! "approve and allow" — an approval that adds the rule a person shaped from the call, with how far that rule
//! would reach before it is added (docs/api.md, "Deciding in the app").

use crate::{Api, ApiError};
use codemode::rules::{Call, CompiledRule};
use codemode::{Actor, CallRef, Outcome, Rule};
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
        // Every waiting call counts, however old its run (the approval queue is one query).
        let waiting = self
            .approval_cards()?
            .into_iter()
            .filter(|card| {
                let path = format!("{}.{}", card.action.connector, card.action.method);
                compiled.matches(&Call {
                    path: &path,
                    args: card.action.args.as_ref(),
                    source: card.execution.source.as_deref(),
                    now,
                })
            })
            .map(|card| card.action.execution_id)
            .collect();
        Ok(RuleReach {
            waiting,
            recent,
            recent_calls,
        })
    }

    /// Approves run `id` and adds `rule` (an `allow` the person shaped from the call), then, when asked,
    /// approves the waiting calls the rule matches, each its own decision by that rule. The rule is added
    /// only when the approval went through.
    pub async fn approve_allowing(
        &self,
        id: &str,
        shown: Option<&CallRef>,
        actor: Actor,
        rule: Rule,
        approve_waiting: bool,
    ) -> Result<AllowReport, ApiError> {
        self.usable()?;
        if rule.effect != codemode::Effect::Allow {
            return Err(ApiError::invalid_args(
                "approve and allow adds an allow rule".to_owned(),
            ));
        }
        CompiledRule::new(rule.clone()).map_err(|e| ApiError::invalid_args(e.to_string()))?;
        let outcome = self.approve_call(id, shown, actor, None).await?;
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
