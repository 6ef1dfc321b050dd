//! Which connector names can become sandbox globals, with the reference's messages for those that cannot.

/// Names a connector may not take: the engine's standard globals, the sandbox's own, and the reference
/// executor's reserved names.
pub const RESERVED_GLOBALS: &[&str] = &[
    "globalThis",
    "Infinity",
    "NaN",
    "undefined",
    "eval",
    "isFinite",
    "isNaN",
    "parseFloat",
    "parseInt",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "unescape",
    "AggregateError",
    "Array",
    "ArrayBuffer",
    "Atomics",
    "BigInt",
    "BigInt64Array",
    "BigUint64Array",
    "Boolean",
    "DataView",
    "Date",
    "Error",
    "EvalError",
    "FinalizationRegistry",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "Function",
    "Int8Array",
    "Int16Array",
    "Int32Array",
    "Intl",
    "Iterator",
    "JSON",
    "Map",
    "Math",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "RangeError",
    "ReferenceError",
    "Reflect",
    "RegExp",
    "Set",
    "SharedArrayBuffer",
    "String",
    "Symbol",
    "SyntaxError",
    "Temporal",
    "TypeError",
    "Uint8Array",
    "Uint8ClampedArray",
    "Uint16Array",
    "Uint32Array",
    "URIError",
    "WeakMap",
    "WeakRef",
    "WeakSet",
    "console",
    "setTimeout",
    "setInterval",
    "clearTimeout",
    "clearInterval",
    "queueMicrotask",
    "structuredClone",
    "fetch",
    "__dispatchers",
    "__connectors",
    "__logs",
    "WorkerEntrypoint",
    "CodeExecutor",
];

/// JavaScript's reserved words (and the Java-era ones), which can never be a binding name.
pub const RESERVED_WORDS: &[&str] = &[
    "abstract",
    "arguments",
    "await",
    "boolean",
    "break",
    "byte",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "eval",
    "export",
    "extends",
    "false",
    "final",
    "finally",
    "float",
    "for",
    "function",
    "goto",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "int",
    "interface",
    "let",
    "long",
    "native",
    "new",
    "null",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "short",
    "static",
    "super",
    "switch",
    "synchronized",
    "this",
    "throw",
    "throws",
    "transient",
    "true",
    "try",
    "typeof",
    "undefined",
    "var",
    "void",
    "volatile",
    "while",
    "with",
    "yield",
];

/// Turns a tool name into a JavaScript identifier (docs/semantics.md §1.5): `-`, `.` and whitespace become
/// `_`, other characters outside `[a-zA-Z0-9_$]` are dropped, a leading digit gets a `_` prefix, a reserved
/// word a `_` suffix, and nothing left is `_`.
pub fn sanitize_tool_name(name: &str) -> String {
    let mut sanitized: String = name
        .chars()
        .filter_map(|c| match c {
            '-' | '.' => Some('_'),
            c if is_js_regex_whitespace(c) => Some('_'),
            c if c.is_ascii_alphanumeric() || c == '_' || c == '$' => Some(c),
            _ => None,
        })
        .collect();
    if sanitized.is_empty() {
        return "_".to_owned();
    }
    if sanitized.starts_with(|c: char| c.is_ascii_digit()) {
        sanitized.insert(0, '_');
    }
    if RESERVED_WORDS.contains(&sanitized.as_str()) {
        sanitized.push('_');
    }
    sanitized
}

/// What JavaScript's `\s` matches.
fn is_js_regex_whitespace(c: char) -> bool {
    crate::normalize::is_js_whitespace(c)
}

/// `^[a-zA-Z_$][a-zA-Z0-9_$]*$`
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// Checks one connector name; the error is the reference's message.
pub fn check_connector_name(name: &str) -> Result<(), String> {
    if name == "codemode" {
        return Err(format!(
            "Connector name \"{name}\" is reserved for the codemode platform SDK."
        ));
    }
    if !is_identifier(name) {
        return Err(format!(
            "Connector name \"{name}\" is not a valid JavaScript identifier"
        ));
    }
    if RESERVED_GLOBALS.contains(&name) || RESERVED_WORDS.contains(&name) {
        return Err(format!("Connector name \"{name}\" is reserved"));
    }
    Ok(())
}

/// Checks a whole connector list: each name, then uniqueness.
pub fn check_connector_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for name in names {
        check_connector_name(name)?;
        if !seen.insert(name) {
            return Err(format!(
                "Duplicate connector name \"{name}\" — each connector needs a unique namespace (pass a distinct `name` option)."
            ));
        }
    }
    Ok(())
}

/// Whether `name` can name a runtime (separate histories per name): letters, digits, `_`, `-` and `.`.
pub fn is_runtime_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitising_follows_the_reference() {
        for (name, expected) in [
            ("my-tool", "my_tool"),
            ("a.b", "a_b"),
            ("with space", "with_space"),
            ("3d-render", "_3d_render"),
            ("delete", "delete_"),
            ("class", "class_"),
            ("héllo!", "hllo"),
            ("", "_"),
            ("!!!", "_"),
            ("valid_$Name1", "valid_$Name1"),
        ] {
            assert_eq!(sanitize_tool_name(name), expected, "{name:?}");
        }
    }

    #[test]
    fn reference_messages() {
        assert_eq!(
            check_connector_name("codemode").unwrap_err(),
            "Connector name \"codemode\" is reserved for the codemode platform SDK."
        );
        assert_eq!(
            check_connector_name("brave-search").unwrap_err(),
            "Connector name \"brave-search\" is not a valid JavaScript identifier"
        );
        assert_eq!(
            check_connector_name("Promise").unwrap_err(),
            "Connector name \"Promise\" is reserved"
        );
        assert_eq!(
            check_connector_name("delete").unwrap_err(),
            "Connector name \"delete\" is reserved"
        );
        assert!(check_connector_name("github").is_ok());
        assert!(check_connector_name("$_x9").is_ok());
        assert_eq!(
            check_connector_names(["state", "state"]).unwrap_err(),
            "Duplicate connector name \"state\" — each connector needs a unique namespace (pass a distinct `name` option)."
        );
    }
}
