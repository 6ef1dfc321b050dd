//! Golden tests for policy rules: `tests/rules/<case>/` holds `rules.json` (in precedence order), `call.json`
//! (`{call, args?, source?, now?, requiresApproval}`) and `expected.json` (`{effect, rule?, reason?, hides?}`):
//! every matcher, precedence, source, `until`, path normalisation for globs, and a `deny` that hides a method.

mod support;

use codemode::rules::{Call, CompiledRule, Rule, evaluate};
use serde_json::{Value, json};

fn read(path: &std::path::Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn rules_decide_calls_as_the_golden_files_say() {
    let cases = support::case_dirs("rules");
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let rules: Vec<Rule> =
            serde_json::from_value(read(&case.join("rules.json"))).expect("rules");
        let compiled: Vec<CompiledRule> = rules
            .into_iter()
            .map(|rule| CompiledRule::new(rule).expect("a valid rule"))
            .collect();
        let call = read(&case.join("call.json"));
        let path = call["call"].as_str().expect("call");
        let verdict = evaluate(
            &compiled,
            &Call {
                path,
                args: call.get("args"),
                source: call["source"].as_str(),
                now: call["now"].as_i64().unwrap_or(0),
            },
            call["requiresApproval"] == true,
        );
        let mut actual = serde_json::to_value(&verdict).expect("serialises");
        let expected = read(&case.join("expected.json"));
        if let Some(hides) = expected.get("hides") {
            let (connector, method) = path.split_once('.').expect("connector.method");
            let hidden = compiled.iter().any(|rule| rule.hides(connector, method));
            actual["hides"] = json!(hidden);
            let _ = hides;
        }
        if actual != expected {
            failures.push(format!(
                "{}: expected {expected}, got {actual}",
                case.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
