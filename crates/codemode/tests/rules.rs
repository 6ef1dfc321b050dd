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

mod precedence {
    //! Property: over random rule sets and calls, the verdict is the strongest matching effect (deny > ask >
    //! allow), recorded as the first rule of that effect in precedence order; with no match the approval list
    //! decides; and the call index gives exactly the verdict a scan of every rule gives.

    use codemode::rules::{Call, CompiledRule, Effect, Rule, RuleIndex, evaluate};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    use serde_json::{Value, json};

    fn arb_rule() -> impl Strategy<Value = Value> {
        (
            prop_oneof![Just("allow"), Just("ask"), Just("deny")],
            prop_oneof![
                Just("a.b"),
                Just("a.*"),
                Just("*"),
                Just("b.c"),
                Just("a.?")
            ],
            prop::option::of(0u8..3),
            // A string condition the index prefilters on: a literal or a glob.
            prop::option::of(prop_oneof![
                Just(json!("d/f")),
                Just(json!("e")),
                Just(json!({"glob": "d/*"})),
                Just(json!({"glob": "e"})),
                Just(json!({"glob": "**", "maxLength": 3})),
            ]),
            prop::option::of(prop_oneof![Just("Claude *"), Just("cli")]),
            prop::option::of(prop_oneof![Just(0i64), Just(10)]),
        )
            .prop_map(|(effect, call, x, p, source, until)| {
                let mut rule = json!({"effect": effect, "call": call, "when": {}});
                if let Some(x) = x {
                    rule["when"]["x"] = json!(x);
                }
                if let Some(p) = p {
                    rule["when"]["p"] = p;
                }
                if let Some(source) = source {
                    rule["source"] = json!(source);
                }
                if let Some(until) = until {
                    rule["until"] = json!(until);
                }
                rule
            })
    }

    #[test]
    fn the_strongest_match_decides_and_the_index_agrees_with_a_scan() {
        let mut runner = TestRunner::new(Config {
            cases: 2_000,
            failure_persistence: None,
            ..Config::default()
        });
        let strategy = (
            prop::collection::vec(arb_rule(), 0..12),
            prop_oneof![Just("a.b"), Just("b.c"), Just("a.x")],
            prop::option::of(0u8..3),
            prop::option::of(prop_oneof![
                Just("d/f"),
                Just("d/../e"),
                Just("e"),
                Just("d/./f"),
                Just("../e"),
                Just("d/f/g"),
            ]),
            prop::option::of(prop_oneof![Just("Claude Code"), Just("cli")]),
            prop_oneof![Just(5i64), Just(15)],
            any::<bool>(),
        );
        runner
            .run(&strategy, |(rules, path, x, p, source, now, gated)| {
                let compiled: Vec<CompiledRule> = rules
                    .into_iter()
                    .enumerate()
                    .map(|(i, mut rule)| {
                        rule["id"] = json!(format!("r{i}"));
                        let rule: Rule = serde_json::from_value(rule).expect("shape");
                        CompiledRule::new(rule).expect("valid")
                    })
                    .collect();
                let mut args = json!({});
                if let Some(x) = x {
                    args["x"] = json!(x);
                }
                if let Some(p) = p {
                    args["p"] = json!(p);
                }
                let args = (x.is_some() || p.is_some()).then_some(args);
                let call = Call {
                    path,
                    args: args.as_ref(),
                    source,
                    now,
                };
                let verdict = evaluate(&compiled, &call, gated);
                let matching: Vec<&CompiledRule> =
                    compiled.iter().filter(|r| r.matches(&call)).collect();
                match matching.iter().map(|r| r.rule.effect).max() {
                    None => {
                        prop_assert_eq!(&verdict.rule, &None);
                        prop_assert_eq!(
                            verdict.effect,
                            if gated { Effect::Ask } else { Effect::Allow }
                        );
                    }
                    Some(strongest) => {
                        let first = matching
                            .iter()
                            .find(|r| r.rule.effect == strongest)
                            .expect("one");
                        prop_assert_eq!(verdict.effect, strongest);
                        prop_assert_eq!(verdict.rule.as_deref(), Some(first.rule.id.as_str()));
                    }
                }
                let indexed = RuleIndex::new(compiled.clone()).evaluate(&call, gated);
                prop_assert_eq!(indexed, verdict);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
    }
}
