//! Who decided a call and what they decided: actors, decisions, the votes of a quorum, and the words every
//! surface uses for them.

use super::Shown;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who decided on a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Actor {
    Console,
    Cli,
    Api,
    Expiry,
    /// An answer given from a desktop notification's action.
    Notification,
    /// A rule that allowed or denied the call without asking (`Decision::rule` names it).
    Rule,
    /// An answer given in the agent's own MCP client (elicitation); `Decision::client` names the client.
    Client,
    /// An answer given on a paired phone's approval page; `Decision::device` names the device.
    Device,
}

impl Actor {
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Console => "console",
            Actor::Cli => "cli",
            Actor::Api => "api",
            Actor::Expiry => "expiry",
            Actor::Notification => "notification",
            Actor::Rule => "rule",
            Actor::Client => "client",
            Actor::Device => "device",
        }
    }

    /// Whether a person gave this answer (through some front end), so the decision names who they are
    /// (`Decision::person`); expiry and rules are nobody.
    pub fn is_person(self) -> bool {
        !matches!(self, Actor::Expiry | Actor::Rule)
    }
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What was decided about a call (docs/design.md, "Decisions").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum DecisionKind {
    Approved,
    /// Approved with arguments a person changed: `Decision::args` is what ran.
    Edited,
    Rejected,
    /// Let through by a rule, without asking.
    Allowed,
    /// Refused by a rule.
    Denied,
    /// Nobody decided before the paused run expired.
    Expired,
}

/// A decision on one call, kept on its log entry: who decided what, when, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Decision {
    pub kind: DecisionKind,
    pub by: Actor,
    pub at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The rule's id, for `allowed` and `denied`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// For `edited`: the arguments that ran (the entry's `args` stay what the program sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// The preview the person was shown before deciding, when one was (docs/design.md, "Previews").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown: Option<Shown>,
    /// For a decision `by: "client"`: the name the MCP client gave itself (self-declared, shown escaped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// For a decision `by: "device"`: the name the device was paired under (docs/phone.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Who decided, as the store authenticated them — never what a front end said: on PostgreSQL the
    /// server's `session_user`, written by a trigger; on SQLite the operating-system user (docs/design.md,
    /// "Who decided"). `None` for expiry and rules, and for decisions recorded before schema 15.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    /// On a call that needed several people (a rule's `quorum`): every approval that counted, in order, the
    /// last one this decision's own (docs/design.md, "Four eyes").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<Vote>,
}

/// One person's approval of a call that needs several (a rule's `quorum`): who, as the store authenticated
/// them, the way they answered, and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Vote {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    pub by: Actor,
    pub at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
}

impl Vote {
    /// The approval `decision` counts as.
    pub fn of(decision: &Decision) -> Self {
        Vote {
            person: decision.person.clone(),
            by: decision.by,
            at: decision.at,
            client: decision.client.clone(),
            device: decision.device.clone(),
        }
    }

    /// Who approved, as a person reads it: `alice via console`.
    pub fn who(&self) -> String {
        who(
            self.person.as_deref(),
            None,
            self.by,
            self.client.as_deref(),
            self.device.as_deref(),
        )
    }
}

/// Who answered, as every surface writes it: the person the store authenticated, then the way they answered
/// (`alice via console`, `bob via device "Pixel 8"`, `rule notes`). A client's and a device's names are
/// quoted: a client names itself (docs/design.md, "Decisions").
fn who(
    person: Option<&str>,
    rule: Option<&str>,
    by: Actor,
    client: Option<&str>,
    device: Option<&str>,
) -> String {
    let way = match (rule, device, client) {
        (Some(rule), _, _) => format!("rule {rule}"),
        (None, Some(device), _) => format!("device {device:?}"),
        (None, None, Some(client)) => format!("{by} {client:?}"),
        (None, None, None) => by.to_string(),
    };
    match person {
        Some(person) => format!("{person} via {way}"),
        None => way,
    }
}

/// Where a call that needs several people stands: `1 of 2 — approved by alice via console`, or `0 of 2` before
/// anyone approved (docs/design.md, "Four eyes").
pub fn quorum_line(need: u32, approvals: &[Vote]) -> String {
    let have = approvals.len();
    if approvals.is_empty() {
        return format!("0 of {need} approvals");
    }
    let names: Vec<String> = approvals.iter().map(Vote::who).collect();
    format!("{have} of {need} — approved by {}", names.join(" and "))
}

/// Who answered a call from outside the console, under the name that identifies them there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answerer {
    /// The agent's own MCP client, by the name it gave itself.
    Client(String),
    /// A paired phone, by the name it was paired under.
    Device(String),
}

impl Answerer {
    pub fn actor(&self) -> Actor {
        match self {
            Answerer::Client(_) => Actor::Client,
            Answerer::Device(_) => Actor::Device,
        }
    }

    /// A decision `kind` by this answerer at `at`, naming them.
    pub fn decision(&self, kind: DecisionKind, at: i64) -> Decision {
        let mut decision = Decision::plain(kind, self.actor(), at);
        match self {
            Answerer::Client(name) => decision.client = Some(name.clone()),
            Answerer::Device(name) => decision.device = Some(name.clone()),
        }
        decision
    }
}

impl Decision {
    /// Who decided, as a person reads it ([`Vote::who`]); for a decision several people made, all of them.
    pub fn who(&self) -> String {
        if self.approvals.len() > 1 {
            let names: Vec<String> = self.approvals.iter().map(Vote::who).collect();
            return names.join(" and ");
        }
        who(
            self.person.as_deref(),
            self.rule.as_deref(),
            self.by,
            self.client.as_deref(),
            self.device.as_deref(),
        )
    }

    /// Nobody decided in time: the call was rejected `by: "expiry"` at `at` (docs/design.md, "Deciding in time").
    pub fn expired(at: i64) -> Self {
        Decision::plain(DecisionKind::Expired, Actor::Expiry, at)
    }

    /// `kind` by `by` at `at`, with nothing else said.
    pub fn plain(kind: DecisionKind, by: Actor, at: i64) -> Self {
        Decision {
            kind,
            by,
            at,
            reason: None,
            rule: None,
            args: None,
            shown: None,
            client: None,
            device: None,
            person: None,
            approvals: Vec::new(),
        }
    }
}

/// The error a run ends with when its waiting call was rejected: the reference's words for a person's
/// rejection (with the reason after `: `), and for a call nobody decided in time what says so, so an agent
/// can tell the two apart (docs/semantics.md, "Deciding in time").
pub fn rejected_message(
    connector: &str,
    method: &str,
    decision: &Decision,
    decide_within_ms: Option<i64>,
) -> String {
    match (decision.kind, &decision.reason) {
        (DecisionKind::Expired, _) => {
            let within = decide_within_ms
                .map(|ms| {
                    crate::clock::format_duration(
                        std::time::Duration::from_millis(ms.max(0) as u64),
                    )
                })
                .unwrap_or_else(|| "the time allowed".to_owned());
            format!("Action {connector}.{method} expired: nobody decided within {within}")
        }
        (_, Some(reason)) => format!("Action {connector}.{method} rejected by user: {reason}"),
        (_, None) => format!("Action {connector}.{method} rejected by user"),
    }
}

/// The longest reason a person may give with a decision, in UTF-16 units: enough for a paragraph the agent
/// reads, small enough to stay readable in every outcome.
pub const MAX_REASON: usize = 4_000;
