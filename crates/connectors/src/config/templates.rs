//! Revert and preview templates: `{{args.…}}` and `{{result.…}}` filled in from a call.

use serde_json::{Map, Value};

/// Renders a revert template: a string that is exactly one `{{path}}` becomes that value with its JSON type; a
/// template inside a longer string interpolates as text; a missing path is an error naming it.
pub fn render_template(template: &Value, args: &Value, result: &Value) -> Result<Value, String> {
    match template {
        Value::String(text) => render_string(text, args, result),
        Value::Array(items) => items
            .iter()
            .map(|i| render_template(i, args, result))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| render_template(v, args, result).map(|v| (k.clone(), v)))
            .collect::<Result<Map<_, _>, _>>()
            .map(Value::Object),
        other => Ok(other.clone()),
    }
}

fn render_string(text: &str, args: &Value, result: &Value) -> Result<Value, String> {
    let trimmed = text.trim();
    if let Some(inner) = trimmed
        .strip_prefix("{{")
        .and_then(|t| t.strip_suffix("}}"))
        && !inner.contains("{{")
        && !inner.contains("}}")
    {
        return lookup(inner.trim(), args, result).cloned();
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(end) = rest[start..].find("}}") else {
            break;
        };
        out.push_str(&rest[..start]);
        let value = lookup(rest[start + 2..start + end].trim(), args, result)?;
        match value {
            Value::String(s) => out.push_str(s),
            other => out.push_str(&other.to_string()),
        }
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    Ok(Value::String(out))
}

fn lookup<'a>(path: &str, args: &'a Value, result: &'a Value) -> Result<&'a Value, String> {
    let mut parts = path.split('.');
    let mut current = match parts.next() {
        Some("args") => args,
        Some("result") => result,
        _ => {
            return Err(format!(
                "revert template {{{{{path}}}}} must start with args. or result."
            ));
        }
    };
    for part in parts {
        let next = match current {
            Value::Object(map) => map.get(part),
            Value::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        current =
            next.ok_or_else(|| format!("revert template {{{{{path}}}}}: no value at \"{part}\""))?;
    }
    Ok(current)
}
