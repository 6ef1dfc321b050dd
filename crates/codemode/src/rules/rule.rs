//! A rule as written and stored: its fields, how its JSON is read, and the errors that name the field at fault.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
