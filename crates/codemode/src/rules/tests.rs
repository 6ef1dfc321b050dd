//! Known answers for rules that cannot be used and for paths that climb out of their glob.

use super::matching::normal_path;
use super::*;
use serde_json::{Value, json};

fn rule(value: Value) -> Result<CompiledRule, RuleError> {
    CompiledRule::new(serde_json::from_value(value).expect("a rule's shape"))
}

#[test]
fn bad_rules_name_the_field() {
    let cases = [
        (
            json!({"id": "r", "effect": "allow", "call": "files"}),
            "call",
        ),
        (
            json!({"id": "r", "effect": "allow", "call": "files.[x"}),
            "call",
        ),
        (
            json!({"id": "r", "effect": "allow", "call": "files.*", "when": {"path": {"glob": "a/[b"}}}),
            "when.path.glob",
        ),
        (
            json!({"id": "r", "effect": "allow", "call": "files.*", "when": {"path": {"regex": "("}}}),
            "when.path.regex",
        ),
        (
            json!({"id": "r", "effect": "allow", "call": "files.*", "when": {"path": {"glob": "a", "near": 1}}}),
            "when.path.near",
        ),
        (
            json!({"id": "r", "effect": "allow", "call": "files.*", "when": {"size": {"lt": "big"}}}),
            "when.size.lt",
        ),
        (
            json!({"id": "", "effect": "allow", "call": "files.*"}),
            "id",
        ),
    ];
    for (value, field) in cases {
        let error = rule(value.clone()).expect_err(&value.to_string());
        assert_eq!(error.field, field, "{error}");
    }
    let unknown_effect =
        Rule::from_value(json!({"id": "r", "effect": "maybe", "call": "a.b"})).unwrap_err();
    assert_eq!(unknown_effect.field, "effect");
    assert_eq!(
        unknown_effect.to_string(),
        "rule r: effect: unknown value \"maybe\", expected allow, ask or deny"
    );
}

#[test]
fn a_path_that_climbs_out_never_matches_a_glob() {
    assert_eq!(normal_path("notes/../secret").as_deref(), Some("secret"));
    assert_eq!(normal_path("notes/./a//b").as_deref(), Some("notes/a/b"));
    assert_eq!(normal_path("../x"), None);
}
