//! Rules in force (the database's, cached and rechecked, then `connectors.json`'s) and their administration:
//! listing, adding, replacing, removing, testing a call, and approving the waiting calls a rule matches.

use super::*;

/// Where a rule lives.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RuleOrigin {
    #[serde(rename = "database")]
    Database,
    #[serde(rename = "connectors.json")]
    File,
}

/// A rule as listings show it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RuleListing {
    #[serde(flatten)]
    pub rule: Rule,
    pub origin: RuleOrigin,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<i64>,
    pub hits: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_hit: Option<i64>,
}

/// How often a process looks for rule changes made by others.
pub(super) const RULES_RECHECK: Duration = Duration::from_millis(250);

/// Compiled rules in precedence order (the database's in creation order, then the file's), with the database
/// version they were read at.
#[derive(Default)]
pub(super) struct RuleSet {
    pub(super) version: i64,
    pub(super) rules: crate::rules::RuleIndex,
}

impl RuleSet {
    pub(super) fn evaluate(
        &self,
        call: &crate::rules::Call<'_>,
        requires_approval: bool,
    ) -> Verdict {
        self.rules.evaluate(call, requires_approval)
    }

    pub(super) fn hides(&self, connector: &str, method: &str) -> bool {
        self.rules.hides(connector, method)
    }
}

pub(super) struct RuleCache {
    pub(super) checked: Option<std::time::Instant>,
    pub(super) set: Arc<RuleSet>,
}

impl Inner {
    /// The rules in force. The database's version is checked at most every [`RULES_RECHECK`], so a rule added
    /// by another process applies to this one's next call within a second, at no cost per call.
    pub(super) fn rules(&self) -> Arc<RuleSet> {
        let mut cache = lock(&self.rules);
        if cache
            .checked
            .is_some_and(|checked| checked.elapsed() < RULES_RECHECK)
        {
            return cache.set.clone();
        }
        cache.checked = Some(std::time::Instant::now());
        let Ok(version) = self.store.rules_version() else {
            return cache.set.clone();
        };
        let stale = version != cache.set.version
            || cache.set.rules.rules().is_empty() && !self.file_rules.is_empty();
        if stale && let Ok(stored) = self.store.rules() {
            let mut rules: Vec<CompiledRule> = stored
                .into_iter()
                .filter_map(|stored| CompiledRule::new(stored.rule).ok())
                .collect();
            rules.extend(self.file_rules.iter().cloned());
            cache.set = Arc::new(RuleSet {
                version,
                rules: crate::rules::RuleIndex::new(rules),
            });
        }
        cache.set.clone()
    }

    /// Whether `id` names a read-only rule of `connectors.json`.
    pub(super) fn is_file_rule(&self, id: &str) -> bool {
        self.file_rules.iter().any(|r| r.rule.id == id)
    }

    /// After this process changed the rules: the next call reads them again.
    pub(super) fn rules_changed(&self) {
        lock(&self.rules).checked = None;
    }
}

impl Runtime {
    /// Every rule in force, in precedence order: the database's (with who added it, when, and how often it
    /// decided), then the read-only ones from `connectors.json`.
    pub fn rules(&self) -> Result<Vec<RuleListing>, RuntimeError> {
        let mut listing: Vec<RuleListing> = self
            .inner
            .store
            .rules()?
            .into_iter()
            .map(|stored| RuleListing {
                rule: stored.rule,
                origin: RuleOrigin::Database,
                created_by: Some(stored.created_by),
                created_at: Some(stored.created_at),
                hits: stored.hits,
                last_hit: stored.last_hit,
            })
            .collect();
        listing.extend(self.inner.file_rules.iter().map(|compiled| RuleListing {
            rule: compiled.rule.clone(),
            origin: RuleOrigin::File,
            created_by: None,
            created_at: None,
            hits: 0,
            last_hit: None,
        }));
        Ok(listing)
    }

    /// Adds a rule to the database, recorded as added by `by`; every process applies it within a second.
    /// A rule that cannot be used, or whose id is taken, is [`RuntimeError::InvalidArgs`] naming the field.
    pub fn add_rule(&self, rule: Rule, by: &str) -> Result<(), RuntimeError> {
        let compiled =
            CompiledRule::new(rule).map_err(|e| RuntimeError::InvalidArgs(e.to_string()))?;
        if self.inner.is_file_rule(&compiled.rule.id)
            || !self
                .inner
                .store
                .add_rule(&compiled.rule, by, self.inner.now())?
        {
            return Err(id_taken(&compiled.rule.id));
        }
        self.inner.rules_changed();
        Ok(())
    }

    /// Replaces the database rule `id` with `rule` (an edit in the app, switching it off or on); who added it,
    /// when, and its hits stay. Validated as [`add_rule`](Self::add_rule) validates.
    pub fn replace_rule(&self, id: &str, rule: Rule) -> Result<(), RuntimeError> {
        let compiled =
            CompiledRule::new(rule).map_err(|e| RuntimeError::InvalidArgs(e.to_string()))?;
        if self.inner.is_file_rule(id) {
            return Err(file_rule(id));
        }
        if compiled.rule.id != id && self.inner.is_file_rule(&compiled.rule.id) {
            return Err(id_taken(&compiled.rule.id));
        }
        if !self.inner.store.replace_rule(id, &compiled.rule)? {
            return Err(Refusal::NoRuleOrTaken {
                rule: id.to_owned(),
                new_id: compiled.rule.id.clone(),
            }
            .into());
        }
        self.inner.rules_changed();
        Ok(())
    }

    /// Removes a database rule; a rule from `connectors.json` is changed in the file.
    pub fn remove_rule(&self, id: &str) -> Result<(), RuntimeError> {
        if self.inner.is_file_rule(id) {
            return Err(file_rule(id));
        }
        if !self.inner.store.remove_rule(id)? {
            return Err(Refusal::NoRule {
                rule: id.to_owned(),
            }
            .into());
        }
        self.inner.rules_changed();
        Ok(())
    }

    /// The newest `limit` calls of recent runs, steps left out (the console's rule tools).
    pub fn recent_calls(
        &self,
        limit: usize,
    ) -> Result<Vec<crate::store::RecentCallRow>, RuntimeError> {
        Ok(self.inner.store.recent_calls(limit)?)
    }

    /// What the rules would do with a call (`connector.method` with these arguments, from `source`), without
    /// running anything.
    pub async fn test_rules(
        &self,
        call: &str,
        args: Option<&Value>,
        source: Option<&str>,
    ) -> Result<Verdict, RuntimeError> {
        let Some((connector, method)) = call.split_once('.') else {
            return Err(RuntimeError::InvalidArgs(format!(
                "\"{call}\" is not connector.method"
            )));
        };
        let (tool, canonical) = match self.inner.connector(connector) {
            Some(registered) => {
                let tool = registered
                    .methods()
                    .await
                    .map_err(RuntimeError::Unavailable)?
                    .tool(method)
                    .cloned();
                // As a real call is judged: on the connector's reading of the arguments.
                let canonical = registered
                    .connector
                    .canonical(method, args)
                    .map_err(RuntimeError::InvalidArgs)?;
                (tool, canonical)
            }
            None => (None, None),
        };
        let rules = self.inner.rules();
        let (ask_in_client, decide_within_ms) = tool
            .as_ref()
            .map_or((false, None), |t| (t.ask_in_client, t.decide_within_ms));
        Ok(rules
            .evaluate(
                &crate::rules::Call {
                    path: call,
                    args: canonical.as_ref().or(args),
                    source,
                    now: self.inner.now(),
                },
                tool.is_some_and(|t| t.requires_approval),
            )
            .with_connector_asking(ask_in_client, decide_within_ms))
    }

    /// The waiting calls `rule` would match, in queue order (newest run first): each read as the rule would
    /// have read it when it was made, on the connector's reading of its arguments and its run's source. The
    /// one answer to "which waiting calls does this rule cover", for approving them and for showing a rule's
    /// reach before it is added.
    pub fn waiting_matching(
        &self,
        rule: &CompiledRule,
    ) -> Result<Vec<PendingAction>, RuntimeError> {
        let now = self.inner.now();
        Ok(self
            .inner
            .store
            .waiting_calls(None)?
            .into_iter()
            .filter(|waiting| {
                let call = &waiting.action;
                let path = format!("{}.{}", call.connector, call.method);
                rule.matches(&crate::rules::Call {
                    path: &path,
                    args: call.canonical.as_ref().or(call.args.as_ref()),
                    source: waiting.source.as_deref(),
                    now,
                })
            })
            .map(|waiting| waiting.action)
            .collect())
    }

    /// Approves, as the `allow` rule `rule` says, every waiting call that rule matches (each its own decision,
    /// `allowed` by `rule`); returns what happened to each, in queue order.
    pub async fn approve_waiting(
        &self,
        rule: &str,
    ) -> Result<Vec<(String, Result<Outcome, RuntimeError>)>, RuntimeError> {
        let rules = self.inner.rules();
        let Some(compiled) = rules.rules.rules().iter().find(|r| r.rule.id == rule) else {
            return Err(Refusal::NoRule {
                rule: rule.to_owned(),
            }
            .into());
        };
        if compiled.rule.effect != crate::rules::Effect::Allow {
            return Err(RuntimeError::InvalidArgs(format!(
                "Rule \"{rule}\" does not allow: only an allow rule approves waiting calls."
            )));
        }
        let mut decided = Vec::new();
        // A call that needs several people waits for them: a rule is nobody (docs/design.md, "Four eyes").
        let waiting = self.waiting_matching(compiled)?;
        for waiting in waiting.into_iter().filter(|w| w.quorum.is_none()) {
            let execution_id = waiting.execution_id;
            let decision = Decision {
                reason: compiled.rule.reason.clone(),
                rule: Some(rule.to_owned()),
                ..Decision::plain(DecisionKind::Allowed, Actor::Rule, self.inner.now())
            };
            let outcome = self.resume_with(&execution_id, decision, None).await;
            decided.push((execution_id, outcome));
        }
        Ok(decided)
    }
}
