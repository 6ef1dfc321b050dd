//! Checks a value against a JSON Schema — a tool's input schema, for arguments a person edited before approving
//! (docs/design.md, "Decisions"), and the export's schema in its tests. Only the schema itself is read: a `$ref`
//! must point inside it (`#`, `#/$defs/…`, `#/definitions/…`); remote ones are never fetched.
//!
//! The assertions of JSON Schema 2020-12 (and draft 7's spellings of them) that tools' input schemas use are
//! checked: `type`, `enum`, `const`, the numeric and length bounds, `pattern`, `multipleOf`, `required`,
//! `properties`, `patternProperties`, `additionalProperties`, `propertyNames`, `min`/`maxProperties`,
//! `dependentRequired`, `items`/`prefixItems`/`additionalItems`, `contains`, `min`/`maxItems`, `uniqueItems`,
//! `allOf`/`anyOf`/`oneOf`/`not`, `if`/`then`/`else` and `$ref`. Annotations (`format`, `title`,
//! `description`, `default`, `examples`…) assert nothing, as the specification says of `format` by default.
//! A schema this cannot read (a `$ref` it cannot resolve, a `pattern` that is not a regular expression, a
//! keyword of the wrong shape) makes the check fail with the reason rather than accept what it cannot check.

mod keywords;

use serde_json::{Map, Value};

/// How deep `$ref`s may lead before the schema is taken to refer to itself without end.
const MAX_DEPTH: usize = 64;
/// How many problems a refusal names.
const MAX_PROBLEMS: usize = 5;

/// The problems that keep `value` from matching `schema`, as one readable line (at most five, each with the
/// JSON pointer of where it is); a schema that cannot be read accepts nothing and says why.
pub fn check(schema: &Value, value: &Value) -> Result<(), String> {
    let mut checker = Checker {
        root: schema,
        problems: Vec::new(),
    };
    checker
        .check(schema, value, "", 0)
        .map_err(|reason| format!("the tool's input schema cannot be used ({reason})"))?;
    if checker.problems.is_empty() {
        Ok(())
    } else {
        checker.problems.truncate(MAX_PROBLEMS);
        Err(checker.problems.join("; "))
    }
}

struct Checker<'a> {
    root: &'a Value,
    problems: Vec<String>,
}

/// `Err` is a schema that cannot be read; problems with the value are collected.
type Readable = Result<(), String>;

impl<'a> Checker<'a> {
    fn problem(&mut self, at: &str, message: String) {
        self.problems.push(if at.is_empty() {
            message
        } else {
            format!("{at}: {message}")
        });
    }

    /// Whether `value` matches `schema`, without keeping its problems (for `anyOf`, `oneOf`, `not`, `if`,
    /// `contains`).
    fn matches(&mut self, schema: &'a Value, value: &Value, depth: usize) -> Result<bool, String> {
        let kept = std::mem::take(&mut self.problems);
        let checked = self.check(schema, value, "", depth);
        let matched = self.problems.is_empty();
        self.problems = kept;
        checked.map(|()| matched)
    }

    fn check(&mut self, schema: &'a Value, value: &Value, at: &str, depth: usize) -> Readable {
        if depth > MAX_DEPTH {
            return Err("its $refs lead more than 64 levels deep".to_owned());
        }
        let keywords = match schema {
            Value::Bool(true) => return Ok(()),
            Value::Bool(false) => {
                self.problem(at, format!("False schema does not allow {}", brief(value)));
                return Ok(());
            }
            Value::Object(keywords) => keywords,
            other => {
                return Err(format!(
                    "a schema must be an object or a boolean, not {other}"
                ));
            }
        };
        if let Some(reference) = keywords.get("$ref") {
            let target = self.resolve(reference)?;
            self.check(target, value, at, depth + 1)?;
        }
        self.check_type(keywords, value, at)?;
        if let Some(allowed) = keywords.get("enum") {
            let allowed = allowed.as_array().ok_or("\"enum\" must be an array")?;
            if !allowed.iter().any(|candidate| same(candidate, value)) {
                self.problem(
                    at,
                    format!(
                        "{} is not one of {}",
                        brief(value),
                        brief(&Value::Array(allowed.clone()))
                    ),
                );
            }
        }
        if let Some(expected) = keywords.get("const")
            && !same(expected, value)
        {
            self.problem(at, format!("{} was expected", brief(expected)));
        }
        match value {
            Value::Number(_) => self.check_number(keywords, value, at)?,
            Value::String(text) => self.check_string(keywords, text, value, at)?,
            Value::Array(items) => self.check_array(keywords, items, value, at, depth)?,
            Value::Object(members) => self.check_object(keywords, members, value, at, depth)?,
            _ => {}
        }
        self.check_combined(keywords, value, at, depth)
    }

    /// A `$ref` inside this schema, by its JSON pointer.
    fn resolve(&self, reference: &Value) -> Result<&'a Value, String> {
        let reference = reference.as_str().ok_or("\"$ref\" must be a string")?;
        let Some(pointer) = reference.strip_prefix('#') else {
            return Err(format!(
                "\"$ref\": \"{reference}\" points outside the schema, which is never fetched"
            ));
        };
        let decoded = percent_decode(pointer);
        self.root
            .pointer(&decoded)
            .ok_or_else(|| format!("\"$ref\": \"{reference}\" points at nothing in the schema"))
    }

    fn check_combined(
        &mut self,
        keywords: &'a Map<String, Value>,
        value: &Value,
        at: &str,
        depth: usize,
    ) -> Readable {
        let list = |name: &str| -> Result<Option<&'a Vec<Value>>, String> {
            keywords
                .get(name)
                .map(|v| {
                    v.as_array()
                        .ok_or_else(|| format!("\"{name}\" must be an array"))
                })
                .transpose()
        };
        if let Some(all) = list("allOf")? {
            for schema in all {
                self.check(schema, value, at, depth + 1)?;
            }
        }
        if let Some(any) = list("anyOf")? {
            let mut matched = false;
            for schema in any {
                matched |= self.matches(schema, value, depth + 1)?;
            }
            if !matched {
                self.problem(
                    at,
                    format!(
                        "{} is not valid under any of the schemas listed in the 'anyOf' keyword",
                        brief(value)
                    ),
                );
            }
        }
        if let Some(one) = list("oneOf")? {
            let mut matched = 0;
            for schema in one {
                matched += usize::from(self.matches(schema, value, depth + 1)?);
            }
            match matched {
                1 => {}
                0 => self.problem(
                    at,
                    format!("{} is not valid under any of the schemas listed in the 'oneOf' keyword", brief(value)),
                ),
                _ => self.problem(
                    at,
                    format!("{} is valid under more than one of the schemas listed in the 'oneOf' keyword", brief(value)),
                ),
            }
        }
        if let Some(not) = keywords.get("not")
            && self.matches(not, value, depth + 1)?
        {
            self.problem(
                at,
                format!("{} is not allowed for {}", brief(not), brief(value)),
            );
        }
        if let Some(condition) = keywords.get("if") {
            let branch = if self.matches(condition, value, depth + 1)? {
                "then"
            } else {
                "else"
            };
            if let Some(schema) = keywords.get(branch) {
                self.check(schema, value, at, depth + 1)?;
            }
        }
        Ok(())
    }
}

fn is_of_type(name: &str, value: &Value) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        // 1.0 is an integer too (JSON Schema 2020-12 §6.1.1).
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|n| n.fract() == 0.0)
        }
        _ => false,
    }
}

/// Equality as JSON Schema means it: numbers by value (1 and 1.0 are the same), objects by members.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn count(keywords: &Map<String, Value>, name: &str) -> Result<Option<u64>, String> {
    keywords
        .get(name)
        .map(|v| {
            v.as_u64()
                .or_else(|| {
                    v.as_f64()
                        .filter(|n| *n >= 0.0 && n.fract() == 0.0)
                        .map(|n| n as u64)
                })
                .ok_or_else(|| format!("\"{name}\" must be a non-negative integer"))
        })
        .transpose()
}

fn compile(pattern: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(pattern)
        .map_err(|e| format!("\"{pattern}\" is not a regular expression this can check: {e}"))
}

/// A value in a message: its JSON, cut after 80 characters.
fn brief(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// A bound as written: `3`, not `3.0`.
fn plain(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{}", number as i64)
    } else {
        number.to_string()
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A `$ref`'s fragment with `%XX` escapes decoded (RFC 3986), ready for a JSON pointer.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests;
