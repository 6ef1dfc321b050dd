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

#[cfg(test)]
mod tests {
    use super::*;

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
