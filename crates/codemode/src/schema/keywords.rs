//! The assertions a schema makes on one kind of value: its type, and the keywords of numbers, strings, arrays
//! and objects.

use super::{Checker, Readable, brief, compile, count, is_of_type, plain, plural, same};
use serde_json::{Map, Value};

impl<'a> Checker<'a> {
    pub(super) fn check_type(
        &mut self,
        keywords: &Map<String, Value>,
        value: &Value,
        at: &str,
    ) -> Readable {
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

    pub(super) fn check_number(
        &mut self,
        keywords: &Map<String, Value>,
        value: &Value,
        at: &str,
    ) -> Readable {
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

    pub(super) fn check_string(
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

    pub(super) fn check_array(
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

    pub(super) fn check_object(
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
}
