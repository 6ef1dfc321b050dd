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

    fn check_type(&mut self, keywords: &Map<String, Value>, value: &Value, at: &str) -> Readable {
        let Some(wanted) = keywords.get("type") else {
            return Ok(());
        };
        let names: Vec<&str> = match wanted {
            Value::String(name) => vec![name.as_str()],
            Value::Array(names) => names
                .iter()
                .map(|n| n.as_str().ok_or("\"type\" must name types"))
                .collect::<Result<_, _>>()?,
            _ => return Err("\"type\" must be a string or an array".to_owned()),
        };
        if !names.iter().any(|name| is_of_type(name, value)) {
            let listed = names
                .iter()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", ");
            let kind = if names.len() == 1 { "type" } else { "types" };
            self.problem(at, format!("{} is not of {kind} {listed}", brief(value)));
        }
        Ok(())
    }

    fn check_number(&mut self, keywords: &Map<String, Value>, value: &Value, at: &str) -> Readable {
        let number = value.as_f64().unwrap_or(f64::NAN);
        let bound = |name: &str| -> Result<Option<f64>, String> {
            keywords
                .get(name)
                .map(|b| {
                    b.as_f64()
                        .ok_or_else(|| format!("\"{name}\" must be a number"))
                })
                .transpose()
        };
        let shown = brief(value);
        if let Some(min) = bound("minimum")?
            && number < min
        {
            self.problem(
                at,
                format!("{shown} is less than the minimum of {}", plain(min)),
            );
        }
        if let Some(max) = bound("maximum")?
            && number > max
        {
            self.problem(
                at,
                format!("{shown} is greater than the maximum of {}", plain(max)),
            );
        }
        if let Some(min) = bound("exclusiveMinimum")?
            && number <= min
        {
            self.problem(
                at,
                format!(
                    "{shown} is less than or equal to the minimum of {}",
                    plain(min)
                ),
            );
        }
        if let Some(max) = bound("exclusiveMaximum")?
            && number >= max
        {
            self.problem(
                at,
                format!(
                    "{shown} is greater than or equal to the maximum of {}",
                    plain(max)
                ),
            );
        }
        if let Some(step) = bound("multipleOf")? {
            if step <= 0.0 {
                return Err("\"multipleOf\" must be greater than 0".to_owned());
            }
            let quotient = number / step;
            if (quotient - quotient.round()).abs() > 1e-9 {
                self.problem(at, format!("{shown} is not a multiple of {}", plain(step)));
            }
        }
        Ok(())
    }

    fn check_string(
        &mut self,
        keywords: &Map<String, Value>,
        text: &str,
        value: &Value,
        at: &str,
    ) -> Readable {
        // Lengths count characters (code points), as the specification says.
        let length = text.chars().count() as u64;
        if let Some(min) = count(keywords, "minLength")?
            && length < min
        {
            self.problem(
                at,
                format!(
                    "{} is shorter than {min} character{}",
                    brief(value),
                    plural(min)
                ),
            );
        }
        if let Some(max) = count(keywords, "maxLength")?
            && length > max
        {
            self.problem(
                at,
                format!(
                    "{} is longer than {max} character{}",
                    brief(value),
                    plural(max)
                ),
            );
        }
        if let Some(pattern) = keywords.get("pattern") {
            let pattern = pattern.as_str().ok_or("\"pattern\" must be a string")?;
            if !compile(pattern)?.is_match(text) {
                self.problem(at, format!("{} does not match \"{pattern}\"", brief(value)));
            }
        }
        Ok(())
    }

    fn check_array(
        &mut self,
        keywords: &'a Map<String, Value>,
        items: &[Value],
        value: &Value,
        at: &str,
        depth: usize,
    ) -> Readable {
        let length = items.len() as u64;
        if let Some(min) = count(keywords, "minItems")?
            && length < min
        {
            self.problem(
                at,
                format!("{} has less than {min} item{}", brief(value), plural(min)),
            );
        }
        if let Some(max) = count(keywords, "maxItems")?
            && length > max
        {
            self.problem(
                at,
                format!("{} has more than {max} item{}", brief(value), plural(max)),
            );
        }
        if keywords.get("uniqueItems") == Some(&Value::Bool(true))
            && items
                .iter()
                .enumerate()
                .any(|(i, a)| items[..i].iter().any(|b| same(a, b)))
        {
            self.problem(at, format!("{} has non-unique elements", brief(value)));
        }
        // 2020-12's prefixItems + items, or draft 7's items as an array + additionalItems.
        let (prefix, rest) = match (keywords.get("prefixItems"), keywords.get("items")) {
            (Some(prefix), rest) => (
                prefix
                    .as_array()
                    .ok_or("\"prefixItems\" must be an array")?
                    .as_slice(),
                rest,
            ),
            (None, Some(Value::Array(prefix))) => {
                (prefix.as_slice(), keywords.get("additionalItems"))
            }
            (None, rest) => (&[][..], rest),
        };
        for (index, item) in items.iter().enumerate() {
            let schema = match prefix.get(index) {
                Some(schema) => schema,
                None => match rest {
                    Some(schema) => schema,
                    None => break,
                },
            };
            self.check(schema, item, &format!("{at}/{index}"), depth + 1)?;
        }
        if let Some(contains) = keywords.get("contains") {
            let mut found = 0u64;
            for item in items {
                if self.matches(contains, item, depth + 1)? {
                    found += 1;
                }
            }
            let min = count(keywords, "minContains")?.unwrap_or(1);
            if found < min {
                self.problem(
                    at,
                    format!("None of {} are valid under the given schema", brief(value)),
                );
            }
            if let Some(max) = count(keywords, "maxContains")?
                && found > max
            {
                self.problem(
                    at,
                    format!("{} contains more than {max} matching items", brief(value)),
                );
            }
        }
        Ok(())
    }

    fn check_object(
        &mut self,
        keywords: &'a Map<String, Value>,
        members: &Map<String, Value>,
        value: &Value,
        at: &str,
        depth: usize,
    ) -> Readable {
        if let Some(required) = keywords.get("required") {
            let required = required.as_array().ok_or("\"required\" must be an array")?;
            for name in required {
                let name = name.as_str().ok_or("\"required\" must list names")?;
                if !members.contains_key(name) {
                    self.problem(at, format!("\"{name}\" is a required property"));
                }
            }
        }
        if let Some(dependent) = keywords.get("dependentRequired") {
            let dependent = dependent
                .as_object()
                .ok_or("\"dependentRequired\" must be an object")?;
            for (present, needed) in dependent {
                if !members.contains_key(present) {
                    continue;
                }
                for name in needed
                    .as_array()
                    .ok_or("\"dependentRequired\" must list names")?
                {
                    let name = name
                        .as_str()
                        .ok_or("\"dependentRequired\" must list names")?;
                    if !members.contains_key(name) {
                        self.problem(at, format!("\"{name}\" is a dependency of \"{present}\""));
                    }
                }
            }
        }
        let size = members.len() as u64;
        if let Some(min) = count(keywords, "minProperties")?
            && size < min
        {
            self.problem(
                at,
                format!(
                    "{} has less than {min} propert{}",
                    brief(value),
                    if min == 1 { "y" } else { "ies" }
                ),
            );
        }
        if let Some(max) = count(keywords, "maxProperties")?
            && size > max
        {
            self.problem(
                at,
                format!(
                    "{} has more than {max} propert{}",
                    brief(value),
                    if max == 1 { "y" } else { "ies" }
                ),
            );
        }
        let properties = match keywords.get("properties") {
            Some(properties) => Some(
                properties
                    .as_object()
                    .ok_or("\"properties\" must be an object")?,
            ),
            None => None,
        };
        let mut patterns = Vec::new();
        if let Some(pattern_properties) = keywords.get("patternProperties") {
            let pattern_properties = pattern_properties
                .as_object()
                .ok_or("\"patternProperties\" must be an object")?;
            for (pattern, schema) in pattern_properties {
                patterns.push((compile(pattern)?, schema));
            }
        }
        let mut unexpected = Vec::new();
        for (name, member) in members {
            let here = format!("{at}/{}", name.replace('~', "~0").replace('/', "~1"));
            let mut described = false;
            if let Some(schema) = properties.and_then(|p| p.get(name)) {
                described = true;
                self.check(schema, member, &here, depth + 1)?;
            }
            for (pattern, schema) in &patterns {
                if pattern.is_match(name) {
                    described = true;
                    self.check(schema, member, &here, depth + 1)?;
                }
            }
            if let Some(names) = keywords.get("propertyNames")
                && !self.matches(names, &Value::String(name.clone()), depth + 1)?
            {
                self.problem(at, format!("\"{name}\" is not a valid property name"));
            }
            if described {
                continue;
            }
            match keywords.get("additionalProperties") {
                Some(Value::Bool(false)) => unexpected.push(format!("'{name}'")),
                Some(schema) => self.check(schema, member, &here, depth + 1)?,
                None => {}
            }
        }
        if !unexpected.is_empty() {
            let verb = if unexpected.len() == 1 { "was" } else { "were" };
            self.problem(
                at,
                format!(
                    "Additional properties are not allowed ({} {verb} unexpected)",
                    unexpected.join(", ")
                ),
            );
        }
        Ok(())
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
