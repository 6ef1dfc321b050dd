//! A rule compiled for evaluation, and whether it matches a call: its call pattern, source, expiry and
//! argument conditions.

use super::{Effect, Rule, RuleError};
use crate::codec::utf16_len;
use globset::{GlobBuilder, GlobMatcher};
use regex::Regex;
use serde_json::Value;

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
pub(super) enum Condition {
    /// Equal after canonical comparison (JSON values, key order ignored).
    Equals(Value),
    /// All of these hold.
    All(Vec<Test>),
}

#[derive(Debug, Clone)]
pub(super) enum Test {
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
    pub(super) when: Vec<(Vec<String>, Condition)>,
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

/// Whether a call pattern has glob syntax (otherwise it names one method exactly).
pub(super) fn is_pattern(call: &str) -> bool {
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
pub(super) fn lookup<'a>(args: Option<&'a Value>, path: &[String]) -> Option<&'a Value> {
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
pub(super) fn normal_path(text: &str) -> Option<String> {
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
