//! TypeScript declarations from JSON Schema, character for character as the reference generates them
//! (docs/semantics.md §1.5): how a model learns a method's input and output without the whole catalogue.

use crate::names::sanitize_tool_name;
use serde_json::{Map, Value};

const MAX_DEPTH: usize = 20;

/// One method to declare.
pub struct TypedTool<'a> {
    pub name: &'a str,
    pub description: Option<&'a str>,
    pub input_schema: &'a Value,
    pub output_schema: Option<&'a Value>,
}

/// `type <T>Input = …`/`type <T>Output = …` for every tool, then `declare const <namespace>: { … }`.
pub fn generate_types(tools: &[TypedTool<'_>], namespace: &str) -> String {
    let mut types = String::new();
    let mut declarations = String::new();
    for tool in tools {
        let safe = sanitize_tool_name(tool.name);
        let type_name = to_pascal_case(&safe);
        types.push('\n');
        types.push_str(type_declaration(tool.input_schema, &format!("{type_name}Input")).trim());
        types.push('\n');
        match tool.output_schema {
            Some(schema) => {
                types.push_str(type_declaration(schema, &format!("{type_name}Output")).trim())
            }
            None => types.push_str(&format!("type {type_name}Output = unknown")),
        }
        let mut doc = Vec::new();
        match tool.description.map(str::trim).filter(|d| !d.is_empty()) {
            Some(description) => doc.push(escape_js_doc(&newlines_to_spaces(description))),
            None => doc.push(escape_js_doc(tool.name)),
        }
        if let Some(Value::Object(properties)) = tool.input_schema.get("properties") {
            for (field, schema) in js_entries(properties) {
                if let Some(description) = schema
                    .get("description")
                    .and_then(Value::as_str)
                    .filter(|d| !d.is_empty())
                {
                    doc.push(escape_js_doc(&newlines_to_spaces(&format!(
                        "@param input.{field} - {description}"
                    ))));
                }
            }
        }
        let body: Vec<String> = doc.iter().map(|line| format!("\t * {line}")).collect();
        declarations.push_str(&format!("\n\t/**\n{}\n\t */", body.join("\n")));
        declarations.push_str(&format!(
            "\n\t{safe}: (input: {type_name}Input) => Promise<{type_name}Output>;\n"
        ));
    }
    let text = format!("\n{types}\n\ndeclare const {namespace}: {{{declarations}}}\n  ");
    js_trim(&text).to_owned()
}

/// `type <name> = <T>`
pub fn type_declaration(schema: &Value, name: &str) -> String {
    let mut seen = Vec::new();
    format!(
        "type {name} = {}",
        to_type(schema, "", schema, 0, &mut seen)
    )
}

/// One JSON Schema as a TypeScript type (`jsonSchemaToTypeString`).
fn to_type<'a>(
    schema: &'a Value,
    indent: &str,
    root: &'a Value,
    depth: usize,
    seen: &mut Vec<*const Value>,
) -> String {
    let object = match schema {
        Value::Bool(true) => return "unknown".to_owned(),
        Value::Bool(false) => return "never".to_owned(),
        Value::Object(object) => object,
        _ => return "unknown".to_owned(),
    };
    if depth >= MAX_DEPTH {
        return "unknown".to_owned();
    }
    let identity = schema as *const Value;
    if seen.contains(&identity) {
        return "unknown".to_owned();
    }
    seen.push(identity);
    let result = object_type(schema, object, indent, root, depth + 1, seen);
    seen.pop();
    result
}

fn object_type<'a>(
    schema: &'a Value,
    object: &'a Map<String, Value>,
    indent: &str,
    root: &'a Value,
    next: usize,
    seen: &mut Vec<*const Value>,
) -> String {
    let nullable = |text: String| {
        if text != "unknown"
            && text != "never"
            && schema.get("nullable") == Some(&Value::Bool(true))
        {
            format!("{text} | null")
        } else {
            text
        }
    };
    let truthy = |key: &str| object.get(key).is_some_and(is_truthy);
    if let Some(reference) = object.get("$ref").filter(|r| is_truthy(r)) {
        return match reference.as_str().and_then(|r| resolve_ref(r, root)) {
            Some(resolved) => nullable(to_type(resolved, indent, root, next, seen)),
            None => "unknown".to_owned(),
        };
    }
    for (key, separator) in [("anyOf", " | "), ("oneOf", " | "), ("allOf", " & ")] {
        if truthy(key) {
            let parts: Vec<String> = match object.get(key) {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|s| to_type(s, indent, root, next, seen))
                    .collect(),
                _ => Vec::new(),
            };
            return nullable(parts.join(separator));
        }
    }
    if truthy("enum") {
        let Some(Value::Array(values)) = object.get("enum") else {
            return "unknown".to_owned();
        };
        if values.is_empty() {
            return "never".to_owned();
        }
        return nullable(values.iter().map(literal).collect::<Vec<_>>().join(" | "));
    }
    if let Some(constant) = object.get("const") {
        return nullable(literal(constant));
    }
    match object.get("type") {
        Some(Value::String(t)) if t == "string" => return nullable("string".to_owned()),
        Some(Value::String(t)) if t == "number" || t == "integer" => {
            return nullable("number".to_owned());
        }
        Some(Value::String(t)) if t == "boolean" => return nullable("boolean".to_owned()),
        Some(Value::String(t)) if t == "null" => return "null".to_owned(),
        Some(Value::String(t)) if t == "array" => {
            if let Some(Value::Array(items)) = object.get("prefixItems") {
                let parts: Vec<String> = items
                    .iter()
                    .map(|s| to_type(s, indent, root, next, seen))
                    .collect();
                return nullable(format!("[{}]", parts.join(", ")));
            }
            return match object.get("items") {
                Some(Value::Array(items)) => {
                    let parts: Vec<String> = items
                        .iter()
                        .map(|s| to_type(s, indent, root, next, seen))
                        .collect();
                    nullable(format!("[{}]", parts.join(", ")))
                }
                Some(items) if is_truthy(items) => {
                    nullable(format!("{}[]", to_type(items, indent, root, next, seen)))
                }
                _ => nullable("unknown[]".to_owned()),
            };
        }
        _ => {}
    }
    let is_object_type = object.get("type") == Some(&Value::String("object".to_owned()));
    if is_object_type || truthy("properties") {
        let empty = Map::new();
        let properties = match object.get("properties") {
            Some(Value::Object(properties)) => properties,
            _ => &empty,
        };
        let required: Vec<&str> = match object.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let inner = format!("{indent}    ");
        let mut lines = Vec::new();
        for (name, property) in js_entries(properties) {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            if let Value::Bool(b) = property {
                let t = if *b { "unknown" } else { "never" };
                lines.push(format!("{inner}{}{optional}: {t};", quote_prop(name)));
                continue;
            }
            let property_type = to_type(property, &inner, root, next, seen);
            let description = property
                .get("description")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
                .map(|d| escape_js_doc(&newlines_to_spaces(d)));
            let format_tag = property
                .get("format")
                .and_then(Value::as_str)
                .filter(|f| !f.is_empty())
                .map(|f| format!("@format {}", escape_js_doc(f)));
            match (description, format_tag) {
                (Some(d), Some(f)) => {
                    lines.push(format!("{inner}/**"));
                    lines.push(format!("{inner} * {d}"));
                    lines.push(format!("{inner} * {f}"));
                    lines.push(format!("{inner} */"));
                }
                (Some(text), None) | (None, Some(text)) => {
                    lines.push(format!("{inner}/** {text} */"))
                }
                (None, None) => {}
            }
            lines.push(format!(
                "{inner}{}{optional}: {property_type};",
                quote_prop(name)
            ));
        }
        match object.get("additionalProperties") {
            Some(Value::Bool(true)) => lines.push(format!("{inner}[key: string]: unknown;")),
            Some(additional) if is_truthy(additional) => lines.push(format!(
                "{inner}[key: string]: {};",
                to_type(additional, &inner, root, next, seen)
            )),
            _ => {}
        }
        if lines.is_empty() {
            return if object.get("additionalProperties") == Some(&Value::Bool(false)) {
                nullable("{}".to_owned())
            } else {
                nullable("Record<string, unknown>".to_owned())
            };
        }
        return nullable(format!("{{\n{}\n{indent}}}", lines.join("\n")));
    }
    if let Some(Value::Array(types)) = object.get("type") {
        let parts: Vec<&str> = types
            .iter()
            .map(|t| match t.as_str() {
                Some("string") => "string",
                Some("number" | "integer") => "number",
                Some("boolean") => "boolean",
                Some("null") => "null",
                Some("array") => "unknown[]",
                Some("object") => "Record<string, unknown>",
                _ => "unknown",
            })
            .collect();
        return nullable(parts.join(" | "));
    }
    "unknown".to_owned()
}

/// JavaScript truthiness of a JSON value.
fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// `#` or a local JSON pointer, resolved against the root; anything else is unresolvable.
fn resolve_ref<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    if reference == "#" {
        return Some(root);
    }
    let path = reference.strip_prefix("#/")?;
    let mut current = root;
    for segment in path.split('/') {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        current = match current {
            Value::Object(map) => map.get(&segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    match current {
        Value::Bool(_) | Value::Object(_) => Some(current),
        _ => None,
    }
}

/// An enum or const member as a TypeScript literal.
fn literal(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::String(s) => format!("\"{}\"", escape_string_literal(s)),
        Value::Array(_) | Value::Object(_) => value.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => js_number(n),
    }
}

fn js_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{f:.0}")
    } else {
        format!("{f}")
    }
}

/// `Object.entries` order: array-index keys ascending, then the rest in insertion order.
fn js_entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let index = |k: &str| -> Option<u32> {
        let n: u32 = k.parse().ok()?;
        (n.to_string() == k && n != u32::MAX).then_some(n)
    };
    let mut indexed: Vec<(u32, (&String, &Value))> = map
        .iter()
        .filter_map(|(k, v)| index(k).map(|i| (i, (k, v))))
        .collect();
    indexed.sort_by_key(|(i, _)| *i);
    indexed
        .into_iter()
        .map(|(_, entry)| entry)
        .chain(map.iter().filter(|(k, _)| index(k).is_none()))
        .collect()
}

/// `_x` → `X`, and the first letter upper-cased.
pub fn to_pascal_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '_'
            && let Some(next) = chars.peek().copied()
            && next.is_ascii_lowercase()
        {
            out.push(next.to_ascii_uppercase());
            chars.next();
            continue;
        }
        out.push(c);
    }
    if let Some(first) = out.chars().next()
        && first.is_ascii_lowercase()
    {
        out.replace_range(0..1, &first.to_ascii_uppercase().to_string());
    }
    out
}

fn quote_prop(name: &str) -> String {
    if crate::names::is_identifier(name) {
        name.to_owned()
    } else {
        format!("\"{}\"", escape_string_literal(name))
    }
}

fn escape_string_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) <= 0x1f || c as u32 == 0x7f => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

fn escape_js_doc(text: &str) -> String {
    text.replace("*/", "*\\/")
}

/// `/\r?\n/g` → a space.
fn newlines_to_spaces(text: &str) -> String {
    text.replace("\r\n", " ").replace('\n', " ")
}

fn js_trim(text: &str) -> &str {
    text.trim_matches(crate::normalize::is_js_whitespace)
}
