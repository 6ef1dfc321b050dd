//! Policy rules: allow, ask or deny a call by connector, method, arguments and source (docs/design.md,
//! "Rules"). A rule is parsed and compiled once (globs with `globset`, regular expressions with `regex`);
//! evaluating a call against a rule set is a pure function of the call, its source and the time.

use crate::codec::utf16_len;
use globset::{GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// What a rule does with the calls it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Runs without asking.
    Allow,
    /// Pauses for a person.
    Ask,
    /// The call fails inside the program.
    Deny,
}

/// Read by hand so that an unknown value is said in the rule editor's words (`unknown value "maybe", expected
/// allow, ask or deny`), and [`Rule::from_value`] names the field.
impl<'de> Deserialize<'de> for Effect {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Effect::parse(&text).ok_or_else(|| serde::de::Error::custom(unknown_effect(&text)))
    }
}

fn unknown_effect(text: &str) -> String {
    format!(
        "unknown value {}, expected allow, ask or deny",
        Value::String(text.to_owned())
    )
}

impl Effect {
    pub fn parse(text: &str) -> Option<Effect> {
        match text {
            "allow" => Some(Effect::Allow),
            "ask" => Some(Effect::Ask),
            "deny" => Some(Effect::Deny),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Ask => "ask",
            Effect::Deny => "deny",
        }
    }
}

/// A rule as written (in `connectors.json`, `codemode rules add`, or the app): the shape that is stored and
/// shown. Unknown fields are refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Rule {
    pub id: String,
    pub effect: Effect,
    /// `connector.method`, where `*` matches any run of characters.
    pub call: String,
    /// Argument path → a JSON literal or one matcher object; all must hold. The empty path `""` is the whole
    /// arguments (`null` for a call that has none).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub when: Map<String, Value>,
    /// A glob over the run's source (`Claude Code`, `cli`, `playground`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Epoch ms after which the rule no longer applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<i64>,
    /// Shown to the person, and to the agent when the rule denies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Kept, but deciding nothing (switched off in the app's rules view).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// A call this `ask` rule pauses is decided in the app's window only: its desktop notification offers
    /// Open, not Approve or Reject (docs/desktop.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirm_in_app: bool,
    /// A call this `ask` rule pauses is also asked in the agent's MCP client, when the client can ask
    /// (elicitation); never a call that is `confirmInApp` (docs/design.md, "Asking in the client").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ask_in_client: bool,
    /// How long a call this `ask` rule pauses may wait for a person (`30m`, `2h`): then it is rejected as
    /// expired, and the agent is told nobody decided (docs/design.md, "Deciding in time").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decide_within: Option<String>,
    /// How many different people must approve a call this `ask` rule pauses (2 for four eyes); a rejection by
    /// anyone ends it (docs/design.md, "Four eyes").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<u32>,
}

/// The most people a rule's `quorum` may ask for.
pub const MAX_QUORUM: u64 = 9;

impl Rule {
    /// [`Rule::decide_within`] in milliseconds (validated when the rule was read).
    pub fn decide_within_ms(&self) -> Option<i64> {
        self.decide_within
            .as_deref()
            .and_then(crate::clock::parse_duration)
            .map(|d| d.as_millis() as i64)
    }

    /// A rule from its JSON, refused with the field at fault (`effect: unknown value "maybe", expected allow,
    /// ask or deny`; `when: must be an object`) rather than serde's words without a place.
    pub fn from_value(value: Value) -> Result<Rule, RuleError> {
        let id = value
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("(no id)")
            .to_owned();
        let fail = |field: &str, problem: String| RuleError {
            rule: id.clone(),
            field: field.to_owned(),
            problem,
        };
        let Value::Object(object) = &value else {
            return Err(fail("rule", "must be a JSON object".to_owned()));
        };
        const FIELDS: [(&str, &str); 12] = [
            ("id", "string"),
            ("effect", "string"),
            ("call", "string"),
            ("when", "object"),
            ("source", "string"),
            ("until", "number"),
            ("reason", "string"),
            ("disabled", "boolean"),
            ("confirmInApp", "boolean"),
            ("askInClient", "boolean"),
            ("decideWithin", "string"),
            ("quorum", "number"),
        ];
        for (key, field) in object {
            let Some((_, kind)) = FIELDS.iter().find(|(name, _)| name == key) else {
                let known: Vec<&str> = FIELDS.iter().map(|(name, _)| *name).collect();
                return Err(fail(
                    key,
                    format!("unknown field (a rule has {})", known.join(", ")),
                ));
            };
            let fits = match *kind {
                "string" => field.is_string(),
                "object" => field.is_object(),
                "number" => field.is_i64() || field.is_u64(),
                _ => field.is_boolean(),
            };
            // `null` stands for "not given" in the optional fields.
            let absent = field.is_null() && !matches!(key.as_str(), "id" | "effect" | "call");
            if !fits && !absent {
                return Err(fail(key, format!("must be a {kind}")));
            }
        }
        for required in ["id", "effect", "call"] {
            if !object.contains_key(required) {
                return Err(fail(required, "is missing".to_owned()));
            }
        }
        if let Some(effect) = object.get("effect").and_then(Value::as_str)
            && Effect::parse(effect).is_none()
        {
            return Err(fail("effect", unknown_effect(effect)));
        }
        if let Some(within) = object.get("decideWithin").and_then(Value::as_str)
            && crate::clock::parse_duration(within).is_none_or(|d| d.is_zero())
        {
            return Err(fail(
                "decideWithin",
                format!("\"{within}\" is not a duration (write 30m, 2h, 1d…)"),
            ));
        }
        if let Some(quorum) = object.get("quorum").filter(|v| !v.is_null())
            && !quorum
                .as_u64()
                .is_some_and(|n| (1..=MAX_QUORUM).contains(&n))
        {
            return Err(fail(
                "quorum",
                format!("must be a number of people from 1 to {MAX_QUORUM}, not {quorum}"),
            ));
        }
        let asks = object.get("effect").and_then(Value::as_str) == Some("ask");
        for key in ["askInClient", "decideWithin", "quorum"] {
            let given = object
                .get(key)
                .is_some_and(|v| !v.is_null() && *v != Value::Bool(false));
            if given && !asks {
                return Err(fail(key, "only an ask rule asks anyone".to_owned()));
            }
        }
        serde_json::from_value(value).map_err(|e| fail("rule", e.to_string()))
    }
}

/// A source as a pattern that matches exactly that source and nothing else, whatever it holds (`*`, `?`,
/// brackets, braces, backslashes): how a remembered decision keeps "only from this source" literal
/// (docs/design.md, "Remembered decisions are literal").
pub fn literal_source(source: &str) -> String {
    let mut pattern = String::with_capacity(source.len() + 4);
    for c in source.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\' | '!' | ',') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

/// A `when` value that matches exactly `value`, whatever it looks like: `{"exact": value}`. A value that is an
/// object of matcher names (`{"exists": true}`) stays a value this way, never matcher syntax.
pub fn exact(value: Value) -> Value {
    serde_json::json!({ "exact": value })
}

/// A rule that cannot be used, with the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rule {rule}: {field}: {problem}")]
pub struct RuleError {
    /// The rule's id, or its position when it has none.
    pub rule: String,
    /// The field at fault: `effect`, `call`, `when.path.glob`, `source`…
    pub field: String,
    pub problem: String,
}

/// The matcher keys a `when` object may hold.
const MATCHERS: &[&str] = &[
    "exact",
    "glob",
    "regex",
    "prefix",
    "oneOf",
    "lt",
    "lte",
    "gt",
    "gte",
    "maxLength",
    "exists",
];

/// One condition on one argument path.
#[derive(Debug, Clone)]
enum Condition {
    /// Equal after canonical comparison (JSON values, key order ignored).
    Equals(Value),
    /// All of these hold.
    All(Vec<Test>),
}

#[derive(Debug, Clone)]
enum Test {
    /// Equal to this value after canonical comparison, whatever the value looks like.
    Exact(Value),
    /// `*` within one path segment, `**` across; the value is normalised as a path first.
    Glob(GlobMatcher),
    /// The whole string matches.
    Regex(Regex),
    Prefix(String),
    OneOf(Vec<Value>),
    Lt(f64),
    Lte(f64),
    Gt(f64),
    Gte(f64),
    MaxLength(usize),
    Exists(bool),
}

/// A rule ready to evaluate.
#[derive(Debug, Clone)]
pub struct CompiledRule {
    pub rule: Rule,
    call: GlobMatcher,
    /// The call pattern when it names one method exactly: compared as a string, not through the glob.
    exact_call: Option<String>,
    source: Option<GlobMatcher>,
    when: Vec<(Vec<String>, Condition)>,
}

impl CompiledRule {
    /// Validates and compiles a rule; the error names the field at fault.
    pub fn new(rule: Rule) -> Result<Self, RuleError> {
        let fail = |field: &str, problem: String| RuleError {
            rule: rule.id.clone(),
            field: field.to_owned(),
            problem,
        };
        if rule.id.trim().is_empty() || rule.id.len() > 200 {
            return Err(fail("id", "must be 1 to 200 characters".to_owned()));
        }
        if rule.call.is_empty() || !rule.call.contains('.') && rule.call != "*" {
            return Err(fail(
                "call",
                format!(
                    "\"{}\" is not connector.method (`*` matches any run of characters)",
                    rule.call
                ),
            ));
        }
        let call = name_glob(&rule.call).map_err(|e| fail("call", e))?;
        let source = rule
            .source
            .as_deref()
            .map(name_glob)
            .transpose()
            .map_err(|e| fail("source", e))?;
        if let Some(reason) = &rule.reason
            && utf16_len(reason) > crate::model::MAX_REASON
        {
            return Err(fail(
                "reason",
                format!("at most {} characters", crate::model::MAX_REASON),
            ));
        }
        let mut when = Vec::with_capacity(rule.when.len());
        for (path, value) in &rule.when {
            let field = format!("when.{path}");
            // The empty path is the whole arguments (a remembered exact call).
            let segments: Vec<String> = if path.is_empty() {
                Vec::new()
            } else {
                path.split('.').map(str::to_owned).collect()
            };
            if segments.iter().any(String::is_empty) {
                return Err(fail(
                    &field,
                    "is not an argument path (`a.b.0.c`)".to_owned(),
                ));
            }
            let condition = condition(value).map_err(|(key, problem)| {
                fail(
                    &match key {
                        Some(key) => format!("{field}.{key}"),
                        None => field.clone(),
                    },
                    problem,
                )
            })?;
            when.push((segments, condition));
        }
        let exact_call = (!is_pattern(&rule.call)).then(|| rule.call.clone());
        Ok(CompiledRule {
            rule,
            call,
            exact_call,
            source,
            when,
        })
    }

    /// Whether this rule decides the call: its pattern, source, time and every condition hold.
    pub fn matches(&self, call: &Call<'_>) -> bool {
        if self.rule.disabled || self.rule.until.is_some_and(|until| call.now > until) {
            return false;
        }
        let named = match &self.exact_call {
            Some(exact) => exact == call.path,
            None => self.call.is_match(call.path),
        };
        if !named {
            return false;
        }
        if let Some(source) = &self.source
            && !source.is_match(call.source.unwrap_or(""))
        {
            return false;
        }
        self.when.iter().all(|(path, condition)| {
            // The whole arguments of a call that has none read as `null`, so a remembered call without
            // arguments matches itself again.
            let value = match call.args {
                None if path.is_empty() => Some(&NO_ARGUMENTS),
                args => lookup(args, path),
            };
            holds(condition, value)
        })
    }

    /// A `deny` with no conditions, source or expiry: it hides the methods it names everywhere, as `hidden`
    /// does.
    pub fn hides_what_it_names(&self) -> bool {
        self.rule.effect == Effect::Deny
            && !self.rule.disabled
            && self.when.is_empty()
            && self.source.is_none()
            && self.rule.until.is_none()
    }

    /// Whether this rule hides `connector.method`.
    pub fn hides(&self, connector: &str, method: &str) -> bool {
        self.hides_what_it_names() && self.call.is_match(format!("{connector}.{method}"))
    }
}

/// A call as rules see it.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// `connector.method`.
    pub path: &'a str,
    pub args: Option<&'a Value>,
    pub source: Option<&'a str>,
    pub now: i64,
}

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
    /// The call is asked in the agent's client too ([`Rule::ask_in_client`], or its connector's setting).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ask_in_client: bool,
    /// How long the call may wait for a person, in ms ([`Rule::decide_within`], or its connector's).
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

/// Rules indexed by the call they name, so a call is checked only against the rules that can match it (those
/// naming exactly its `connector.method`, and those whose pattern has a `*`), in their precedence order.
/// Within each group a prefilter on one argument condition per rule (an exact string, or a glob, looked up
/// in a hash map or one combined `GlobSet`) leaves out the rules whose condition cannot hold, so 100 rules on
/// one method cost one lookup and one set match rather than 100 checks (docs/performance.md, "Rules").
#[derive(Debug, Clone, Default)]
pub struct RuleIndex {
    rules: Vec<CompiledRule>,
    exact: HashMap<String, Candidates>,
    patterns: Candidates,
    /// The rules that hide what they name.
    hiding: Vec<usize>,
}

/// One group of rules, split by what can rule each out before it is checked in full.
#[derive(Debug, Clone, Default)]
struct Candidates {
    /// Rules no prefilter applies to: always checked.
    unfiltered: Vec<usize>,
    /// Per argument path, the rules that require an exact string there.
    literals: Vec<(ArgumentPath, RulesByText)>,
    /// Per argument path, the rules that require a glob to match there, as one set (pattern `i` is rule
    /// `ids[i]`).
    globs: Vec<(Vec<String>, GlobSet, Vec<usize>)>,
}

/// An argument path, split at its dots.
type ArgumentPath = Vec<String>;

/// Rule indices by the exact string their condition requires.
type RulesByText = HashMap<String, Vec<usize>>;

/// The one condition of a rule a prefilter checks: a condition every match must meet.
enum Key<'a> {
    Literal(&'a str),
    Glob(&'a GlobMatcher),
}

impl Candidates {
    fn new(rules: &[CompiledRule], ids: impl IntoIterator<Item = usize>) -> Self {
        let mut unfiltered = Vec::new();
        let mut literals: Vec<(ArgumentPath, RulesByText)> = Vec::new();
        let mut globs: Vec<(Vec<String>, GlobSetBuilder, Vec<usize>)> = Vec::new();
        for id in ids {
            let keyed = rules[id].when.iter().find_map(|(path, condition)| {
                let key = match condition {
                    Condition::Equals(Value::String(text)) => Key::Literal(text),
                    Condition::All(tests) => tests.iter().find_map(|test| match test {
                        Test::Glob(glob) => Some(Key::Glob(glob)),
                        Test::Exact(Value::String(text)) => Some(Key::Literal(text)),
                        _ => None,
                    })?,
                    Condition::Equals(_) => return None,
                };
                Some((path, key))
            });
            match keyed {
                None => unfiltered.push(id),
                Some((path, Key::Literal(text))) => {
                    let at = match literals.iter().position(|(p, _)| p == path) {
                        Some(at) => at,
                        None => {
                            literals.push((path.clone(), HashMap::new()));
                            literals.len() - 1
                        }
                    };
                    literals[at].1.entry(text.to_owned()).or_default().push(id);
                }
                Some((path, Key::Glob(glob))) => {
                    let at = match globs.iter().position(|(p, _, _)| p == path) {
                        Some(at) => at,
                        None => {
                            globs.push((path.clone(), GlobSetBuilder::new(), Vec::new()));
                            globs.len() - 1
                        }
                    };
                    globs[at].1.add(glob.glob().clone());
                    globs[at].2.push(id);
                }
            }
        }
        let globs = globs
            .into_iter()
            .filter_map(|(path, builder, ids)| match builder.build() {
                Ok(set) => Some((path, set, ids)),
                // Each glob compiled alone; should the set not build, check its rules in full.
                Err(_) => {
                    unfiltered.extend(&ids);
                    None
                }
            })
            .collect();
        unfiltered.sort_unstable();
        Candidates {
            unfiltered,
            literals,
            globs,
        }
    }

    /// Adds the rules the call could match: a superset of those that do.
    fn collect(&self, args: Option<&Value>, out: &mut Vec<usize>) {
        out.extend_from_slice(&self.unfiltered);
        for (path, by_text) in &self.literals {
            if let Some(Value::String(text)) = lookup(args, path)
                && let Some(ids) = by_text.get(text.as_str())
            {
                out.extend_from_slice(ids);
            }
        }
        for (path, set, ids) in &self.globs {
            if let Some(Value::String(text)) = lookup(args, path) {
                // As `passes` does: the value is matched as a normal path.
                let matched = if text.split('/').any(|part| matches!(part, "" | "." | "..")) {
                    normal_path(text).map(|path| set.matches(path))
                } else {
                    Some(set.matches(text))
                };
                out.extend(matched.into_iter().flatten().map(|i| ids[i]));
            }
        }
    }
}

impl RuleIndex {
    pub fn new(rules: Vec<CompiledRule>) -> Self {
        let mut exact: HashMap<String, Vec<usize>> = HashMap::new();
        let mut patterns = Vec::new();
        let hiding = (0..rules.len())
            .filter(|&i| rules[i].hides_what_it_names())
            .collect();
        for (index, rule) in rules.iter().enumerate() {
            if is_pattern(&rule.rule.call) {
                patterns.push(index);
            } else {
                exact.entry(rule.rule.call.clone()).or_default().push(index);
            }
        }
        let exact = exact
            .into_iter()
            .map(|(name, ids)| (name, Candidates::new(&rules, ids)))
            .collect();
        let patterns = Candidates::new(&rules, patterns);
        RuleIndex {
            rules,
            exact,
            patterns,
            hiding,
        }
    }

    /// Whether an unconditional `deny` hides `connector.method`.
    pub fn hides(&self, connector: &str, method: &str) -> bool {
        self.hiding
            .iter()
            .any(|&i| self.rules[i].hides(connector, method))
    }

    pub fn rules(&self) -> &[CompiledRule] {
        &self.rules
    }

    /// [`evaluate`] over the rules that can match `call`.
    pub fn evaluate(&self, call: &Call<'_>, requires_approval: bool) -> Verdict {
        let mut candidates = Vec::new();
        if let Some(named) = self.exact.get(call.path) {
            named.collect(call.args, &mut candidates);
        }
        self.patterns.collect(call.args, &mut candidates);
        // Back into precedence order, so "the first among equals" stays the first.
        candidates.sort_unstable();
        evaluate(
            candidates.iter().map(|&i| &self.rules[i]),
            call,
            requires_approval,
        )
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

/// Whether a call pattern has glob syntax (otherwise it names one method exactly).
fn is_pattern(call: &str) -> bool {
    call.contains(['*', '?', '[', '{', '\\'])
}

/// A glob over a name (`files.*`, `Claude *`): `*` is any run of characters.
fn name_glob(pattern: &str) -> Result<GlobMatcher, String> {
    GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| e.to_string())
}

/// A `when` value: a literal, or an object whose keys are all matcher names.
fn condition(value: &Value) -> Result<Condition, (Option<String>, String)> {
    let Value::Object(object) = value else {
        return Ok(Condition::Equals(value.clone()));
    };
    if object.is_empty() || !object.keys().all(|k| MATCHERS.contains(&k.as_str())) {
        if let Some(unknown) = object.keys().find(|k| !MATCHERS.contains(&k.as_str()))
            && object.keys().any(|k| MATCHERS.contains(&k.as_str()))
        {
            return Err((
                Some(unknown.clone()),
                format!("unknown matcher (use one of {})", MATCHERS.join(", ")),
            ));
        }
        // An object of plain keys is a literal to compare with.
        return Ok(Condition::Equals(value.clone()));
    }
    let mut tests = Vec::with_capacity(object.len());
    for (key, argument) in object {
        let bad = |problem: &str| (Some(key.clone()), problem.to_owned());
        let number = || argument.as_f64().ok_or_else(|| bad("must be a number"));
        tests.push(match key.as_str() {
            "exact" => Test::Exact(argument.clone()),
            "glob" => {
                let pattern = argument.as_str().ok_or_else(|| bad("must be a string"))?;
                let glob = GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| (Some(key.clone()), e.to_string()))?;
                Test::Glob(glob.compile_matcher())
            }
            "regex" => {
                let pattern = argument.as_str().ok_or_else(|| bad("must be a string"))?;
                let whole = format!("^(?:{pattern})$");
                Test::Regex(Regex::new(&whole).map_err(|e| (Some(key.clone()), e.to_string()))?)
            }
            "prefix" => Test::Prefix(
                argument
                    .as_str()
                    .ok_or_else(|| bad("must be a string"))?
                    .to_owned(),
            ),
            "oneOf" => Test::OneOf(
                argument
                    .as_array()
                    .ok_or_else(|| bad("must be a list of values"))?
                    .clone(),
            ),
            "lt" => Test::Lt(number()?),
            "lte" => Test::Lte(number()?),
            "gt" => Test::Gt(number()?),
            "gte" => Test::Gte(number()?),
            "maxLength" => Test::MaxLength(
                argument
                    .as_u64()
                    .ok_or_else(|| bad("must be a whole number"))? as usize,
            ),
            "exists" => Test::Exists(
                argument
                    .as_bool()
                    .ok_or_else(|| bad("must be true or false"))?,
            ),
            _ => return Err(bad("unknown matcher")),
        });
    }
    Ok(Condition::All(tests))
}

/// The value at a revert-template style path (`entities.0.name`), if there is one.
fn lookup<'a>(args: Option<&'a Value>, path: &[String]) -> Option<&'a Value> {
    let mut value = args?;
    for segment in path {
        value = match value {
            Value::Object(map) => map.get(segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(value)
}

/// What a rule on the whole arguments (the path `""`) reads for a call that has none.
static NO_ARGUMENTS: Value = Value::Null;

fn holds(condition: &Condition, value: Option<&Value>) -> bool {
    match condition {
        Condition::Equals(expected) => value == Some(expected),
        Condition::All(tests) => tests.iter().all(|test| passes(test, value)),
    }
}

fn passes(test: &Test, value: Option<&Value>) -> bool {
    if let Test::Exists(wanted) = test {
        return value.is_some() == *wanted;
    }
    let Some(value) = value else {
        return false;
    };
    match test {
        Test::Exact(expected) => value == expected,
        Test::Glob(glob) => value.as_str().is_some_and(|text| {
            // Most paths are already normal: match them as they are, without building a new string.
            if text.split('/').any(|part| matches!(part, "" | "." | "..")) {
                normal_path(text).is_some_and(|path| glob.is_match(path))
            } else {
                glob.is_match(text)
            }
        }),
        Test::Regex(regex) => value.as_str().is_some_and(|s| regex.is_match(s)),
        Test::Prefix(prefix) => value
            .as_str()
            .is_some_and(|s| s.starts_with(prefix.as_str())),
        Test::OneOf(values) => values.contains(value),
        Test::Lt(n) => value.as_f64().is_some_and(|v| v < *n),
        Test::Lte(n) => value.as_f64().is_some_and(|v| v <= *n),
        Test::Gt(n) => value.as_f64().is_some_and(|v| v > *n),
        Test::Gte(n) => value.as_f64().is_some_and(|v| v >= *n),
        Test::MaxLength(max) => match value {
            Value::String(s) => utf16_len(s) <= *max,
            Value::Array(items) => items.len() <= *max,
            _ => false,
        },
        Test::Exists(_) => true,
    }
}

/// A path as a glob sees it: `.` and empty segments dropped and `..` resolved by name, so `notes/../secret`
/// is `secret` and never matches `notes/**`. A path that climbs above its start matches no glob.
fn normal_path(text: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    Some(if text.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(value: Value) -> Result<CompiledRule, RuleError> {
        CompiledRule::new(serde_json::from_value(value).expect("a rule's shape"))
    }

    #[test]
    fn bad_rules_name_the_field() {
        let cases = [
            (
                json!({"id": "r", "effect": "allow", "call": "files"}),
                "call",
            ),
            (
                json!({"id": "r", "effect": "allow", "call": "files.[x"}),
                "call",
            ),
            (
                json!({"id": "r", "effect": "allow", "call": "files.*", "when": {"path": {"glob": "a/[b"}}}),
                "when.path.glob",
            ),
            (
                json!({"id": "r", "effect": "allow", "call": "files.*", "when": {"path": {"regex": "("}}}),
                "when.path.regex",
            ),
            (
                json!({"id": "r", "effect": "allow", "call": "files.*", "when": {"path": {"glob": "a", "near": 1}}}),
                "when.path.near",
            ),
            (
                json!({"id": "r", "effect": "allow", "call": "files.*", "when": {"size": {"lt": "big"}}}),
                "when.size.lt",
            ),
            (
                json!({"id": "", "effect": "allow", "call": "files.*"}),
                "id",
            ),
        ];
        for (value, field) in cases {
            let error = rule(value.clone()).expect_err(&value.to_string());
            assert_eq!(error.field, field, "{error}");
        }
        let unknown_effect =
            Rule::from_value(json!({"id": "r", "effect": "maybe", "call": "a.b"})).unwrap_err();
        assert_eq!(unknown_effect.field, "effect");
        assert_eq!(
            unknown_effect.to_string(),
            "rule r: effect: unknown value \"maybe\", expected allow, ask or deny"
        );
    }

    #[test]
    fn a_path_that_climbs_out_never_matches_a_glob() {
        assert_eq!(normal_path("notes/../secret").as_deref(), Some("secret"));
        assert_eq!(normal_path("notes/./a//b").as_deref(), Some("notes/a/b"));
        assert_eq!(normal_path("../x"), None);
    }
}
