//! The runtime's public data: statuses, log entries, executions, pending actions and the model-facing
//! outcome, serialised exactly as the reference emits them (camelCase, storage-codec values).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where an execution is in its life (docs/semantics.md §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ExecutionStatus {
    Running,
    Paused,
    Completed,
    Error,
    Rejected,
    RolledBack,
}

impl ExecutionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionStatus::Running => "running",
            ExecutionStatus::Paused => "paused",
            ExecutionStatus::Completed => "completed",
            ExecutionStatus::Error => "error",
            ExecutionStatus::Rejected => "rejected",
            ExecutionStatus::RolledBack => "rolled_back",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "running" => ExecutionStatus::Running,
            "paused" => ExecutionStatus::Paused,
            "completed" => ExecutionStatus::Completed,
            "error" => ExecutionStatus::Error,
            "rejected" => ExecutionStatus::Rejected,
            "rolled_back" => ExecutionStatus::RolledBack,
            _ => return None,
        })
    }

    /// Terminal statuses are the ones `disposeExecution` receives and retention may prune.
    pub fn is_terminal(self) -> bool {
        !matches!(self, ExecutionStatus::Running | ExecutionStatus::Paused)
    }
}

impl std::fmt::Display for ExecutionStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The state of one recorded call (docs/semantics.md §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum EntryState {
    Executing,
    Applied,
    Pending,
    Reverted,
    Error,
}

impl EntryState {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryState::Executing => "executing",
            EntryState::Applied => "applied",
            EntryState::Pending => "pending",
            EntryState::Reverted => "reverted",
            EntryState::Error => "error",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "executing" => EntryState::Executing,
            "applied" => EntryState::Applied,
            "pending" => EntryState::Pending,
            "reverted" => EntryState::Reverted,
            "error" => EntryState::Error,
            _ => return None,
        })
    }
}

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

/// What a call would change, computed before a person decides (docs/design.md, "Previews"). Texts longer than
/// [`PREVIEW_TEXT_LIMIT`] are cut, with `cut` set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Preview {
    /// A text file written: its content now (`None` for a new file) and after the call.
    Diff {
        path: String,
        before: Option<String>,
        after: String,
        #[serde(default, skip_serializing_if = "is_false")]
        cut: bool,
    },
    /// A file deleted: what will be lost (`None` when there is no such file).
    Delete {
        path: String,
        before: Option<String>,
        #[serde(default, skip_serializing_if = "is_false")]
        cut: bool,
    },
    /// A file moved; `overwrites` is the destination's content that the move replaces.
    Move {
        from: String,
        to: String,
        overwrites: Option<String>,
        #[serde(default, skip_serializing_if = "is_false")]
        cut: bool,
    },
    /// Content that is not text: sizes and SHA-256 digests (before: `None` for a new file).
    Binary {
        path: String,
        before_size: Option<u64>,
        after_size: u64,
        before_sha256: Option<String>,
        after_sha256: String,
    },
    /// No preview could be computed (the connector failed or took too long): why.
    Unavailable { message: String },
    /// The present state of what the call changes, as a read-only call returned it.
    Current {
        value: Value,
        #[serde(default, skip_serializing_if = "is_false")]
        cut: bool,
    },
}

impl Preview {
    /// The preview with every text cut to [`PREVIEW_TEXT_LIMIT`] bytes (`cut` set when one was).
    pub fn bounded(self) -> Preview {
        fn cut_text(text: &mut String, cut: &mut bool) {
            if text.len() > PREVIEW_TEXT_LIMIT {
                let mut end = PREVIEW_TEXT_LIMIT;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.truncate(end);
                *cut = true;
            }
        }
        let mut preview = self;
        match &mut preview {
            Preview::Diff {
                before, after, cut, ..
            } => {
                if let Some(before) = before {
                    cut_text(before, cut);
                }
                cut_text(after, cut);
            }
            Preview::Delete { before, cut, .. }
            | Preview::Move {
                overwrites: before,
                cut,
                ..
            } => {
                if let Some(before) = before {
                    cut_text(before, cut);
                }
            }
            Preview::Current { value, cut } => {
                let text = value.to_string();
                if text.len() > PREVIEW_TEXT_LIMIT {
                    let mut text = text;
                    cut_text(&mut text, cut);
                    *value = Value::String(text);
                }
            }
            Preview::Binary { .. } => {}
            Preview::Unavailable { message } => {
                let mut ignored = false;
                cut_text(message, &mut ignored);
            }
        }
        preview
    }
}

/// The longest text a preview carries, in bytes; longer texts are cut at a character boundary.
pub const PREVIEW_TEXT_LIMIT: usize = 256 * 1024;

/// The largest preview kept whole with a decision (JSON bytes); a larger one keeps only its digest.
pub const SHOWN_PREVIEW_LIMIT: usize = 64 * 1024;

/// The preview a person was shown, kept with the decision for the audit log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Shown {
    /// SHA-256 of the preview's JSON.
    pub digest: String,
    /// When it was computed for display (epoch ms).
    pub at: i64,
    /// The preview itself, when its JSON is at most [`SHOWN_PREVIEW_LIMIT`] bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<Preview>,
}

/// A call as recorded in the durable log (`ToolLogEntry`), plus our attribution and divergence detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolLogEntry {
    pub seq: u64,
    pub connector: String,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// The arguments as the connector reads them ([`crate::Connector::canonical`]: for `files`, paths with
    /// `..` and symlinks resolved, base64 content decoded), where that differs from what the program sent.
    /// Rules decided on this form, and displays show it (docs/design.md, "What a call means").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    pub requires_approval: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub ephemeral: bool,
    pub state: EntryState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<i64>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
    /// `{recorded: {connector, method, args}, attempted: {connector, method, args}}` on a divergence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divergence: Option<Value>,
    /// The error the connector answered with (state `error`): replay gives the program this error again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What a person (or a rule, or expiry) decided about this call; none when no one had to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The `ask` rule that had a person asked about this call; none when the connector's approval list did,
    /// or no one was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_by: Option<String>,
    /// The rule that asked wants the call decided in the window ([`PendingAction::confirm_in_app`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub confirm_in_app: bool,
    /// The call is asked in the agent's client too ([`PendingAction::ask_in_client`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ask_in_client: bool,
    /// How long the call could wait for a person, in ms ([`PendingAction::decide_within`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decide_within: Option<i64>,
    /// When nobody deciding by then rejects the call as expired (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decide_by: Option<i64>,
    /// How many different people must approve the call (the `quorum` of the rule that asked), when more than
    /// one (docs/design.md, "Four eyes").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<u32>,
    /// While the call waits: the approvals it has so far, when it needs several people. (Once decided, the
    /// decision lists them all.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<Vote>,
    /// When a person was asked about the call (it paused), epoch ms: with `decision.at`, how long they took
    /// (docs/history.md, "Timings").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub asked_at: Option<i64>,
    /// When the call began to run (after its approval, for a gated call), epoch ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub started_at: Option<i64>,
    /// When its outcome (result or error) was recorded, epoch ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub finished_at: Option<i64>,
    /// Served from the record of the run this one reruns ([`ExecutionState::forked_from`]): it did not run
    /// here, and rolling this run back leaves it alone (docs/history.md, "Rerun from a step").
    #[serde(default, skip_serializing_if = "is_false")]
    pub inherited: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// One execution with its log (`ExecutionState`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExecutionState {
    pub id: String,
    pub code: String,
    pub status: ExecutionStatus,
    pub log: Vec<ToolLogEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<Vec<String>>,
    pub connectors: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Left `running` by a process that died mid-pass: `recover` can take it over.
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
    pub created_at: i64,
    pub updated_at: i64,
    /// On a shared store, the host the run belongs to (docs/shared-store.md, "Hosts").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<RunHost>,
    /// Approved on another host: the decision waiting for this run's host to resume it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handed: Option<Decision>,
    /// The run and call this run reruns from (docs/history.md, "Rerun from a step").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<crate::lineage::ForkedFrom>,
    /// The runs rerun from this one, oldest first (read with one run, empty in lists).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reruns: Vec<String>,
}

/// The host a run belongs to, on a shared store: the machine (and data directory) that began it, whose
/// connectors run its calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RunHost {
    pub id: String,
    /// How people know it: `ann@laptop` (its user and machine) unless its configuration names it.
    pub name: String,
    /// Its heartbeat is recent: it resumes what is approved for it. A host that is gone leaves its runs
    /// "waiting for its host" until it is back, or until a host with the same connectors recovers them.
    pub alive: bool,
    /// This process is that host.
    #[serde(default, skip_serializing_if = "is_false")]
    pub here: bool,
}

/// What the app asks of the audit log: a status, a text to find (in ids, code, errors and called
/// `connector.method`s), a cursor (the last id of the previous page) and a page size.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(optional_fields = nullable))]
pub struct ExecutionQuery {
    #[serde(default)]
    pub status: Option<ExecutionStatus>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub before: Option<String>,
    #[serde(default)]
    pub limit: Option<usize>,
    /// Only runs begun at or after this moment (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub since: Option<i64>,
    /// Only runs begun before this moment (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub until: Option<i64>,
    /// Only runs that made a call whose `connector.method` matches this glob (`*` any run of characters,
    /// `?` one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// Only runs with a call decided by this person (as the store authenticated them) or this way
    /// (`console`, `cli`, `device`, `rule`, `expiry`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// Only runs whose source matches this glob.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// One row of the audit log, without the call log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExecutionSummary {
    pub id: String,
    pub status: ExecutionStatus,
    pub created_at: i64,
    pub updated_at: i64,
    /// Recorded calls and steps.
    pub calls: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
    /// `connector.method` of the call waiting for approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
    /// The start of the error text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The start of the result's JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_preview: Option<String>,
    /// On a shared store, the host the run belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<RunHost>,
}

/// A page of summaries, newest first; `next` is the cursor for the following page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ExecutionPage {
    pub executions: Vec<ExecutionSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// A completed program promoted to a reusable recipe (docs/semantics.md §8.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Snippet {
    pub name: String,
    pub description: String,
    pub code: String,
    pub saved_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connectors: Option<Vec<String>>,
}

/// How to save a snippet: from which execution, with what description and input schema.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveSnippet {
    pub execution_id: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub input_schema: Option<Value>,
}

/// What a rollback did, call by call (docs/design.md, difference 3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RollbackReport {
    pub execution_id: String,
    /// The execution's status after the rollback.
    pub status: Option<ExecutionStatus>,
    pub reverted: Vec<RevertedCall>,
    pub skipped: Vec<SkippedCall>,
    pub failed: Vec<FailedRevert>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RevertedCall {
    pub seq: u64,
    pub connector: String,
    pub method: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SkippedCall {
    pub seq: u64,
    pub connector: String,
    pub method: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FailedRevert {
    pub seq: u64,
    pub connector: String,
    pub method: String,
    pub error: String,
}

/// A call waiting for a human decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PendingAction {
    pub execution_id: String,
    pub seq: u64,
    pub connector: String,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// What the connector will read, where it differs from `args` (see [`ToolLogEntry::canonical`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<Value>,
    /// [`args_digest`] of `args`: a decision sends it back, so it lands only on the call that was shown.
    pub digest: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
    /// The `ask` rule that asked for this call ([`ToolLogEntry::asked_by`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_by: Option<String>,
    /// The rule that asked wants the call decided in the window, not from a notification: recorded when it
    /// asked, so no surface judges the call again to find out.
    #[serde(default, skip_serializing_if = "is_false")]
    pub confirm_in_app: bool,
    /// The call is asked in the agent's MCP client as well, when that client can ask (docs/design.md,
    /// "Asking in the client"); never with `confirm_in_app`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ask_in_client: bool,
    /// How long the call may wait for a person, in ms (`decideWithin` of the rule or connector that asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub decide_within: Option<i64>,
    /// When the call is rejected as expired if nobody decided (epoch ms): `decide_within` after it paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub decide_by: Option<i64>,
    /// How many different people must approve the call, when more than one ([`ToolLogEntry::quorum`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<u32>,
    /// The approvals given so far to a call that needs several (never the last one: it runs the call).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<Vote>,
}

impl PendingAction {
    /// `1 of 2 — approved by alice via console` for a call that needs several people; `None` otherwise.
    pub fn quorum_line(&self) -> Option<String> {
        self.quorum.map(|need| quorum_line(need, &self.approvals))
    }
}

/// A waiting call with what the queue shows of its run, read without the run's code or log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WaitingCall {
    pub action: PendingAction,
    /// The run's source (who started it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When the run started (epoch ms).
    pub created_at: i64,
    /// When the run last changed (epoch ms): the queue re-reads a run's whole card only when this moves.
    pub updated_at: i64,
}

impl PendingAction {
    /// The waiting call `entry` of run `execution_id`.
    pub fn of(execution_id: &str, entry: &ToolLogEntry) -> Self {
        PendingAction {
            execution_id: execution_id.to_owned(),
            seq: entry.seq,
            connector: entry.connector.clone(),
            method: entry.method.clone(),
            args: entry.args.clone(),
            canonical: entry.canonical.clone(),
            digest: args_digest(entry.args.as_ref()),
            interrupted: entry.interrupted,
            asked_by: entry.asked_by.clone(),
            confirm_in_app: entry.confirm_in_app,
            ask_in_client: entry.ask_in_client,
            decide_within: entry.decide_within,
            decide_by: entry.decide_by,
            quorum: entry.quorum,
            approvals: entry.approvals.clone(),
        }
    }
}

/// The call a person was shown, as a decision names it: its seq in the run and the [`args_digest`] of the
/// arguments shown. A decision that names a call no longer waiting is `stale`, and nothing runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CallRef {
    pub seq: u64,
    /// The digest of the arguments shown; `None` binds the seq only (`codemode approve ID:SEQ`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// The digest that binds a decision to the arguments a person was shown (docs/design.md, "A decision names
/// its call"): SHA-256 of the arguments' JSON with object keys sorted, so it does not depend on how a store
/// or a front end ordered them; `-` hashed for no arguments.
pub fn args_digest(args: Option<&Value>) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let text = match args {
        Some(value) => sorted(value).to_string(),
        None => "-".to_owned(),
    };
    crate::codec::sha256_hex(text.as_bytes())
}

/// What a pass (or an approval) returns to the model: docs/semantics.md §1.2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "status",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Outcome {
    Completed {
        execution_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        logs: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        calls: Option<Vec<ToolLogEntry>>,
    },
    Paused {
        execution_id: String,
        pending: Vec<PendingAction>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        calls: Option<Vec<ToolLogEntry>>,
    },
    Error {
        execution_id: String,
        error: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        logs: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        calls: Option<Vec<ToolLogEntry>>,
    },
}

impl Outcome {
    /// An error outcome produced before any pass ran (no `calls`).
    pub fn early_error(execution_id: impl Into<String>, error: impl Into<String>) -> Self {
        Outcome::Error {
            execution_id: execution_id.into(),
            error: error.into(),
            logs: None,
            calls: None,
        }
    }

    pub fn execution_id(&self) -> &str {
        match self {
            Outcome::Completed { execution_id, .. }
            | Outcome::Paused { execution_id, .. }
            | Outcome::Error { execution_id, .. } => execution_id,
        }
    }

    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Completed { .. } => "completed",
            Outcome::Paused { .. } => "paused",
            Outcome::Error { .. } => "error",
        }
    }
}

/// The longest reason a person may give with a decision, in UTF-16 units: enough for a paragraph the agent
/// reads, small enough to stay readable in every outcome.
pub const MAX_REASON: usize = 4_000;
