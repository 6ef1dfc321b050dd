//! Known answers for each keyword the schema check reads, and for schemas it cannot read.

use super::*;
use serde_json::json;

#[test]
fn a_missing_required_field_and_a_wrong_type_are_named() {
    let schema = json!({"type": "object", "properties": {"path": {"type": "string"}, "size": {"type": "integer"}}, "required": ["path"]});
    assert!(check(&schema, &json!({"path": "a.txt"})).is_ok());
    let problems = check(&schema, &json!({"size": "big"})).unwrap_err();
    assert_eq!(
        problems,
        "\"path\" is a required property; /size: \"big\" is not of type \"integer\""
    );
}

#[test]
fn each_assertion_refuses_what_it_should_and_only_that() {
    let cases = [
        (
            json!({"type": ["string", "null"]}),
            json!(null),
            json!(3),
            "3 is not of types \"string\", \"null\"",
        ),
        (
            json!({"type": "integer"}),
            json!(2.0),
            json!(2.5),
            "2.5 is not of type \"integer\"",
        ),
        (
            json!({"enum": ["a", 1]}),
            json!(1.0),
            json!("b"),
            "\"b\" is not one of [\"a\",1]",
        ),
        (
            json!({"const": {"k": [1]}}),
            json!({"k": [1]}),
            json!({"k": [2]}),
            "{\"k\":[1]} was expected",
        ),
        (
            json!({"minimum": 2, "maximum": 4}),
            json!(4),
            json!(5),
            "5 is greater than the maximum of 4",
        ),
        (
            json!({"exclusiveMinimum": 2}),
            json!(2.5),
            json!(2),
            "2 is less than or equal to the minimum of 2",
        ),
        (
            json!({"multipleOf": 0.5}),
            json!(1.5),
            json!(1.25),
            "1.25 is not a multiple of 0.5",
        ),
        (
            json!({"minLength": 2, "maxLength": 3}),
            json!("éé"),
            json!("abcd"),
            "\"abcd\" is longer than 3 characters",
        ),
        (
            json!({"pattern": "^exec_"}),
            json!("exec_1"),
            json!("run_1"),
            "\"run_1\" does not match \"^exec_\"",
        ),
        (
            json!({"minItems": 1}),
            json!([0]),
            json!([]),
            "[] has less than 1 item",
        ),
        (
            json!({"uniqueItems": true}),
            json!([1, "1"]),
            json!([1, 1.0]),
            "[1,1.0] has non-unique elements",
        ),
        (
            json!({"items": {"type": "string"}}),
            json!(["a"]),
            json!(["a", 2]),
            "/1: 2 is not of type \"string\"",
        ),
        (
            json!({"prefixItems": [{"type": "string"}], "items": false}),
            json!(["a"]),
            json!(["a", 1]),
            "/1: False schema does not allow 1",
        ),
        (
            json!({"contains": {"type": "number"}}),
            json!(["a", 1]),
            json!(["a"]),
            "None of [\"a\"] are valid under the given schema",
        ),
        (
            json!({"properties": {"a": true}, "additionalProperties": false}),
            json!({"a": 1}),
            json!({"a": 1, "b": 2}),
            "Additional properties are not allowed ('b' was unexpected)",
        ),
        (
            json!({"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false}),
            json!({"x-a": "s"}),
            json!({"x-a": 1}),
            "/x-a: 1 is not of type \"string\"",
        ),
        (
            json!({"propertyNames": {"maxLength": 2}}),
            json!({"ab": 1}),
            json!({"abc": 1}),
            "\"abc\" is not a valid property name",
        ),
        (
            json!({"dependentRequired": {"a": ["b"]}}),
            json!({"a": 1, "b": 2}),
            json!({"a": 1}),
            "\"b\" is a dependency of \"a\"",
        ),
        (
            json!({"anyOf": [{"type": "string"}, {"minimum": 3}]}),
            json!(4),
            json!(2),
            "2 is not valid under any of the schemas listed in the 'anyOf' keyword",
        ),
        (
            json!({"oneOf": [{"type": "number"}, {"minimum": 3}]}),
            json!(2),
            json!(4),
            "4 is valid under more than one of the schemas listed in the 'oneOf' keyword",
        ),
        (
            json!({"not": {"type": "string"}}),
            json!(1),
            json!("s"),
            "{\"type\":\"string\"} is not allowed for \"s\"",
        ),
        (
            json!({"if": {"minimum": 10}, "then": {"multipleOf": 10}}),
            json!(20),
            json!(15),
            "15 is not a multiple of 10",
        ),
        (
            json!({"$defs": {"n": {"type": "number"}}, "properties": {"v": {"$ref": "#/$defs/n"}}}),
            json!({"v": 1}),
            json!({"v": "1"}),
            "/v: \"1\" is not of type \"number\"",
        ),
        (
            json!({"format": "email", "title": "anything"}),
            json!("not an email"),
            json!(false),
            "",
        ),
    ];
    for (schema, fits, misfits, message) in cases {
        assert_eq!(
            check(&schema, &fits),
            Ok(()),
            "{schema} should accept {fits}"
        );
        match message {
            "" => assert_eq!(
                check(&schema, &misfits),
                Ok(()),
                "{schema} asserts nothing of {misfits}"
            ),
            message => assert_eq!(
                check(&schema, &misfits),
                Err(message.to_owned()),
                "{schema} on {misfits}"
            ),
        }
    }
}

#[test]
fn a_schema_that_cannot_be_read_accepts_nothing_and_says_why() {
    for (schema, reason) in [
        (
            json!({"$ref": "https://example.com/s.json"}),
            "points outside the schema",
        ),
        (json!({"$ref": "#/$defs/missing"}), "points at nothing"),
        (
            json!({"pattern": "(?<=a)b"}),
            "is not a regular expression this can check",
        ),
        (
            json!({"$defs": {"loop": {"$ref": "#/$defs/loop"}}, "$ref": "#/$defs/loop"}),
            "more than 64 levels",
        ),
        (json!({"type": 3}), "\"type\" must be"),
        (json!([1]), "must be an object or a boolean"),
    ] {
        let refused = check(&schema, &json!("x")).unwrap_err();
        assert!(
            refused.starts_with("the tool's input schema cannot be used ("),
            "{refused}"
        );
        assert!(refused.contains(reason), "{schema}: {refused}");
    }
}

#[test]
fn a_refusal_names_at_most_five_problems() {
    let schema = json!({"required": ["a", "b", "c", "d", "e", "f", "g"]});
    let refused = check(&schema, &json!({})).unwrap_err();
    assert_eq!(refused.matches("is a required property").count(), 5);
}
