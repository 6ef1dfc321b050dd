//! An approval turned into an `allow` rule: what a person chose (the window's "Approve and allow", the CLI's
//! `--remember`) is sent as an [`AllowIntent`], and [`allowing`] builds the rule from it against the call they
//! were shown, on the host's clock — the one place an approval becomes a rule (docs/design.md, "Remembered
//! decisions are literal").

use crate::rules::{Effect, Rule, exact, literal_source};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// What a person chose when allowing calls like the one they approve.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AllowIntent {
    /// The calls to allow, as a `connector.method` pattern (`*` matches any run of characters); none: the
    /// approved call's own method and nothing else, however its name reads as a pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// The whole arguments, exactly as the connector reads them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
    /// By top-level argument name, how it must match; an argument not named may be anything.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, ArgumentMatch>,
    /// Only calls from the approved run's source (none if it has none).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only_source: bool,
    /// For this many milliseconds from now on the host's clock; for good when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_ms: Option<u64>,
}

/// How one argument of an allowed call must match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ArgumentMatch {
    /// Exactly `value`, whatever it looks like (an object shaped like a matcher stays a value); when none,
    /// the argument as the connector reads it — what the person was shown.
    Exact {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<Value>,
    },
    Glob {
        pattern: String,
    },
    Prefix {
        prefix: String,
    },
}

/// The approved call, as a rule will read its like: `connector.method`, its arguments as the connector reads
/// them (the edited ones when a person changed them), its run's source.
#[derive(Debug, Clone, Copy)]
pub struct Approved<'a> {
    pub call: &'a str,
    pub args: Option<&'a Value>,
    pub source: Option<&'a str>,
}

/// The `allow` rule `intent` asks for, for calls like `approved`. The method, the values taken from the
/// call and the source are literal: a method or source holding glob syntax, or an argument shaped like a
/// matcher, matches only itself. A call without arguments is remembered as `null`, as rules read it.
pub fn allowing(
    id: String,
    approved: Approved<'_>,
    intent: &AllowIntent,
    now: i64,
    reason: String,
) -> Rule {
    let mut when = Map::new();
    if intent.exact {
        when.insert(
            String::new(),
            exact(approved.args.cloned().unwrap_or(Value::Null)),
        );
    }
    for (name, how) in &intent.args {
        let matcher = match how {
            ArgumentMatch::Exact { value } => exact(
                value
                    .clone()
                    .or_else(|| approved.args.and_then(|args| args.get(name)).cloned())
                    .unwrap_or(Value::Null),
            ),
            ArgumentMatch::Glob { pattern } => json!({ "glob": pattern }),
            ArgumentMatch::Prefix { prefix } => json!({ "prefix": prefix }),
        };
        when.insert(name.clone(), matcher);
    }
    let for_ms = |ms: u64| i64::try_from(ms).unwrap_or(i64::MAX);
    Rule {
        id,
        effect: Effect::Allow,
        call: intent
            .call
            .clone()
            .unwrap_or_else(|| literal_source(approved.call)),
        when,
        source: approved
            .source
            .filter(|_| intent.only_source)
            .map(literal_source),
        until: intent.for_ms.map(|ms| now.saturating_add(for_ms(ms))),
        reason: Some(reason),
        disabled: false,
        confirm_in_app: false,
        ask_in_client: false,
        decide_within: None,
        quorum: None,
    }
}
