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

mod remembered {
    //! Property (docs/design.md, "Remembered decisions are literal"): the rule a remembered approval becomes
    //! (`codemode::allowing::allowing`) matches the remembered call — its method, its arguments as the connector
    //! reads them, its source — and nothing else, for generated values that include objects shaped like
    //! matchers (`{"exists": true}`, `{"glob": "*"}`) and sources and method names holding glob syntax. It
    //! does so after a trip through its stored JSON, scanned and through the call index alike.

    use codemode::allowing::{AllowIntent, Approved, allowing};
    use codemode::rules::{Call, CompiledRule, Effect, Rule, RuleIndex};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    use serde_json::{Map, Value, json};

    /// Text that means something to a glob, a regex or a matcher, beside plain text.
    fn tricky_text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                4 => proptest::char::range('a', 'e'),
                1 => prop::sample::select(vec![
                    '*', '?', '[', ']', '{', '}', ',', '!', '\\', '.', '/', ' ', '^', '$', '\u{202e}',
                ]),
            ],
            0..6,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    /// An argument value: plain JSON, or an object that reads like matcher syntax.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3i64..4).prop_map(Value::from),
            prop::sample::select(vec![0.5f64, -2.25, 1e3]).prop_map(Value::from),
            tricky_text().prop_map(Value::from),
            Just(json!({"exists": true})),
            Just(json!({"exists": false})),
            Just(json!({"glob": "*"})),
            Just(json!({"prefix": ""})),
            Just(json!({"regex": ".*"})),
            Just(json!({"gte": 0})),
            Just(json!({"exact": "a"})),
            Just(json!({"maxLength": 100})),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec((tricky_text(), inner), 0..3)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    /// A call's arguments: mostly an object of a few keys, sometimes none or another value.
    fn arguments() -> impl Strategy<Value = Option<Value>> {
        prop_oneof![
            6 => prop::collection::vec(
                (prop::sample::select(vec!["path", "content", "exists", "glob", "a.b", ""]), value()),
                0..4,
            )
            .prop_map(|pairs| Some(Value::Object(
                pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            ))),
            1 => Just(None),
            1 => value().prop_map(Some),
        ]
    }

    fn method() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => Just("files.write_file".to_owned()),
            1 => Just("files.delete_file".to_owned()),
            1 => tricky_text().prop_map(|name| format!("files.{name}")),
        ]
    }

    fn source() -> impl Strategy<Value = Option<String>> {
        prop_oneof![
            1 => Just(None),
            1 => Just(Some("*".to_owned())),
            1 => Just(Some("Claude Code".to_owned())),
            3 => tricky_text().prop_map(Some),
        ]
    }

    /// A call, and another that shares each part (method, arguments, source) with it or not.
    #[derive(Debug, Clone)]
    struct Pair {
        method: String,
        args: Option<Value>,
        source: Option<String>,
        other_method: String,
        other_args: Option<Value>,
        other_source: Option<String>,
    }

    fn pair() -> impl Strategy<Value = Pair> {
        (
            (method(), any::<bool>(), method()),
            (arguments(), any::<bool>(), arguments()),
            (source(), any::<bool>(), source()),
        )
            .prop_map(|((m, same_m, om), (a, same_a, oa), (s, same_s, os))| Pair {
                other_method: if same_m { m.clone() } else { om },
                other_args: if same_a { a.clone() } else { oa },
                other_source: if same_s { s.clone() } else { os },
                method: m,
                args: a,
                source: s,
            })
    }

    /// Whether `rule` allows the call, scanned and through the index (which must agree).
    fn allows(
        rule: &CompiledRule,
        method: &str,
        args: Option<&Value>,
        source: Option<&str>,
    ) -> bool {
        let call = Call {
            path: method,
            args,
            source,
            now: 1_000,
        };
        let scanned = rule.matches(&call);
        let indexed = RuleIndex::new(vec![rule.clone()]).evaluate(&call, true);
        assert_eq!(
            indexed.effect == Effect::Allow,
            scanned,
            "the index and a scan disagree on {call:?}"
        );
        scanned
    }

    #[test]
    fn a_remembered_approval_matches_its_call_and_nothing_else() {
        let mut runner = TestRunner::new(Config {
            cases: 3_000,
            failure_persistence: None,
            ..Config::default()
        });
        let strategy = (pair(), any::<bool>(), any::<bool>());
        runner
            .run(&strategy, |(pair, exact, for_source)| {
                // The source is the run's, when it has one.
                let remembered_source = pair.source.as_deref().filter(|_| for_source);
                let rule = allowing(
                    "remember-files".to_owned(),
                    Approved {
                        call: &pair.method,
                        args: pair.args.as_ref(),
                        source: pair.source.as_deref(),
                    },
                    &AllowIntent {
                        exact,
                        only_source: for_source,
                        for_ms: Some(1_500),
                        ..AllowIntent::default()
                    },
                    500,
                    "allowed from an approval by cli".to_owned(),
                );
                prop_assert_eq!(
                    rule.until,
                    Some(2_000),
                    "for 1.5 s from 0.5 s on the host's clock"
                );
                // As stored and loaded again.
                let stored = serde_json::to_value(&rule).expect("serialises");
                let loaded = Rule::from_value(stored.clone())
                    .unwrap_or_else(|e| panic!("a remembered rule is refused: {e}: {stored}"));
                prop_assert_eq!(&loaded, &rule);
                let compiled = CompiledRule::new(loaded).unwrap_or_else(|e| {
                    panic!("a remembered rule does not compile: {e}: {stored}")
                });

                // A call without arguments reads as `null` to a rule on the whole arguments.
                let args_of = |args: &Option<Value>| args.clone().unwrap_or(Value::Null);
                prop_assert!(
                    allows(
                        &compiled,
                        &pair.method,
                        pair.args.as_ref(),
                        pair.source.as_deref()
                    ),
                    "the rule does not match the call it was made from: {}",
                    stored
                );
                let expected = pair.other_method == pair.method
                    && (!exact || args_of(&pair.other_args) == args_of(&pair.args))
                    // A run without a source reads as the empty source, as to every rule.
                    && remembered_source
                        .is_none_or(|source| pair.other_source.as_deref().unwrap_or("") == source);
                prop_assert_eq!(
                    allows(
                        &compiled,
                        &pair.other_method,
                        pair.other_args.as_ref(),
                        pair.other_source.as_deref()
                    ),
                    expected,
                    "rule {} on {} {:?} from {:?}",
                    stored,
                    pair.other_method,
                    pair.other_args,
                    pair.other_source
                );
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
        println!("properties: a_remembered_approval_matches_its_call_and_nothing_else: 3000 cases");
    }
}
