//! Checks a value against a tool's JSON Schema input schema, for arguments a person edited before approving
//! (docs/design.md, "Decisions"). Only the schema itself is read: remote `$ref`s are never fetched.

use serde_json::Value;

/// The problems that keep `value` from matching `schema`, as one readable line; a schema that cannot be
/// compiled accepts nothing it cannot check and says why.
pub fn check(schema: &Value, value: &Value) -> Result<(), String> {
    let validator = jsonschema::validator_for(schema)
        .map_err(|e| format!("the tool's input schema cannot be used ({e})"))?;
    let problems: Vec<String> = validator
        .iter_errors(value)
        .take(5)
        .map(|error| {
            let at = error.instance_path().to_string();
            if at.is_empty() {
                error.to_string()
            } else {
                format!("{at}: {error}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_missing_required_field_and_a_wrong_type_are_named() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}, "size": {"type": "integer"}}, "required": ["path"]});
        assert!(check(&schema, &json!({"path": "a.txt"})).is_ok());
        let problems = check(&schema, &json!({"size": "big"})).unwrap_err();
        assert!(
            problems.contains("\"path\" is a required property"),
            "{problems}"
        );
        assert!(problems.contains("/size"), "{problems}");
    }
}
