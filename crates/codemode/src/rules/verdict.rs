//! What the rules say about a call: the precedence among the rules that match, and the verdict it gives.

// Only the documentation links name it.
#[cfg(doc)]
use super::Rule;
use super::{Call, CompiledRule, Effect};
use serde::{Deserialize, Serialize};

/// What the rules say about a call: the effect, and the rule that decided it (none when no rule matched and
/// the connector's `approval` list decided).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub effect: Effect,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// An `ask` rule that wants the call decided in the window, never from a notification (docs/desktop.md).
    /// Recorded with the call, so whoever shows it later need not judge it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirm_in_app: bool,
    /// The call is asked in the agent's client too ([`Rule::ask_in_client`], or
    /// its connector's setting).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ask_in_client: bool,
    /// How long the call may wait for a person, in ms ([`Rule::decide_within`],
    /// or its connector's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decide_within_ms: Option<i64>,
    /// How many different people must approve, when more than one: the largest `quorum` among the `ask`
    /// rules that match, so a second rule cannot lower what the first asks (docs/design.md, "Four eyes").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<u32>,
}

impl Verdict {
    /// Runs without asking, no rule involved: a step, or a call no person could change the fate of.
    pub fn allow() -> Self {
        Verdict {
            effect: Effect::Allow,
            rule: None,
            reason: None,
            confirm_in_app: false,
            ask_in_client: false,
            decide_within_ms: None,
            quorum: None,
        }
    }

    /// The connector's own asking settings for the method, where the rule that asked said nothing of its own:
    /// a call the approval list pauses takes them whole; an `ask` rule's own word wins.
    pub fn with_connector_asking(
        mut self,
        ask_in_client: bool,
        decide_within_ms: Option<i64>,
    ) -> Self {
        if self.effect == Effect::Ask {
            self.ask_in_client |= ask_in_client;
            self.decide_within_ms = self.decide_within_ms.or(decide_within_ms);
        }
        // A call decided in the window only is never asked where a client's hooks could answer for the person.
        if self.confirm_in_app {
            self.ask_in_client = false;
        }
        self
    }
}

/// Among the rules that match, `deny` beats `ask` beats `allow`; among equals, the first in `rules` order.
/// With none, the connector's approval list decides (`requires_approval` → ask, else allow).
pub fn evaluate<'a>(
    rules: impl IntoIterator<Item = &'a CompiledRule>,
    call: &Call<'_>,
    requires_approval: bool,
) -> Verdict {
    let mut best: Option<&CompiledRule> = None;
    let mut quorum: Option<u32> = None;
    for rule in rules {
        let asks_more =
            rule.rule.effect == Effect::Ask && rule.rule.quorum.unwrap_or(1) > quorum.unwrap_or(1);
        if best.is_some_and(|b| b.rule.effect >= rule.rule.effect) && !asks_more {
            continue;
        }
        if rule.matches(call) {
            if asks_more {
                quorum = rule.rule.quorum;
            }
            if best.is_some_and(|b| b.rule.effect >= rule.rule.effect) {
                continue;
            }
            let deny = rule.rule.effect == Effect::Deny;
            best = Some(rule);
            if deny {
                break;
            }
        }
    }
    match best {
        Some(rule) => Verdict {
            effect: rule.rule.effect,
            rule: Some(rule.rule.id.clone()),
            reason: rule.rule.reason.clone(),
            confirm_in_app: rule.rule.effect == Effect::Ask && rule.rule.confirm_in_app,
            ask_in_client: rule.rule.effect == Effect::Ask && rule.rule.ask_in_client,
            decide_within_ms: rule
                .rule
                .decide_within_ms()
                .filter(|_| rule.rule.effect == Effect::Ask),
            quorum: quorum.filter(|n| *n > 1 && rule.rule.effect == Effect::Ask),
        },
        None => Verdict {
            effect: if requires_approval {
                Effect::Ask
            } else {
                Effect::Allow
            },
            rule: None,
            reason: None,
            confirm_in_app: false,
            ask_in_client: false,
            decide_within_ms: None,
            quorum: None,
        },
    }
}

/// The message a denied call throws into the program.
pub fn denied_message(connector: &str, method: &str, rule: &str, reason: Option<&str>) -> String {
    match reason {
        Some(reason) => format!("Action {connector}.{method} denied by rule \"{rule}\": {reason}"),
        None => format!("Action {connector}.{method} denied by rule \"{rule}\""),
    }
}
