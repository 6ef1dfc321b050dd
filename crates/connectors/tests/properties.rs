//! Properties over generated inputs (proptest): `connectors.json` parsing on arbitrary bytes, byte-level
//! corruptions and structured JSON mutations of a full file never panics — it parses (valid, unique
//! connector names, secrets hidden from debug output) or returns an error with a message and a position,
//! never echoing a secret; and revert templates never panic on arbitrary templates, arguments and results,
//! render literal templates to themselves, pick the value a whole-string `{{args.…}}` / `{{result.…}}`
//! names with its JSON type, interpolate text, and name a missing path in the error.
//!
//! Each property runs a fixed number of cases with no failure-persistence file; a failure reports the
//! shrunk input. Each test prints one `properties: <name>: <n> cases` line.

use codemode::names::check_connector_name;
use connectors::config::{Config, ConfigError, parse, render_template};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError, TestRunner};
use serde_json::{Map, Value, json};
use std::cell::Cell;
use std::collections::HashSet;
use std::path::Path;

/// Runs `test` on `cases` generated inputs; panics with the shrunk failing input, prints the case count.
fn check<S: Strategy>(
    name: &str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let mut runner = TestRunner::new(RunnerConfig {
        cases,
        failure_persistence: None,
        ..RunnerConfig::default()
    });
    let ran = Cell::new(0u32);
    let result = runner.run(&strategy, |value| {
        ran.set(ran.get() + 1);
        test(value)
    });
    if let Err(error) = result {
        panic!("{name}: {error}");
    }
    println!("properties: {name}: {cases} cases ({} runs)", ran.get());
}

// ---------------------------------------------------------------------------------------------------------
// connectors.json

const SECRETS: [&str; 2] = ["ghp_SECRET_TOKEN_VALUE", "SECRET_BEARER"];

const SPEC_EXAMPLE: &str = r#"{
  "runtime": { "name": "default", "maxExecutions": 50, "timeoutMs": 60000, "memoryLimitMb": 512,
               "pausedTtl": "24h", "expirySweepMinutes": 10 },
  "connectors": {
    "files":  { "type": "files", "root": "~/agent-workspace" },
    "github": { "type": "mcp", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                "env": { "GITHUB_TOKEN": "ghp_SECRET_TOKEN_VALUE" }, "hint": "issues and pull requests of our repos",
                "approval": ["create_issue"], "reexecute": ["search_code"], "hidden": ["update_issue"],
                "callTimeoutMs": 30000, "revertTimeoutMs": 30000,
                "revert": { "create_issue": { "method": "update_issue",
                            "args": { "owner": "{{args.owner}}", "repo": "{{args.repo}}",
                                      "issue_number": "{{result.number}}", "state": "closed" } } } },
    "remote": { "type": "mcp", "url": "http://127.0.0.1:8931/mcp", "headers": { "Authorization": "Bearer SECRET_BEARER" } }
  },
  "mcpServers": { "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },
                  "brave-search": { "command": "npx", "args": ["-y", "brave"] } }
}"#;

fn parsed(text: &str) -> Result<Config, ConfigError> {
    parse(text, Path::new("/data/connectors.json"), Path::new("/data"))
}

/// Whatever the text, parsing returns: a usable configuration, or an error naming the file and a position
/// with a message. Neither shows a secret of the original file.
fn check_outcome(text: &str) -> Result<(), TestCaseError> {
    match parsed(text) {
        Ok(config) => {
            let mut seen = HashSet::new();
            for connector in &config.connectors {
                prop_assert!(
                    check_connector_name(&connector.name).is_ok(),
                    "{:?} accepted",
                    connector.name
                );
                prop_assert!(
                    seen.insert(connector.name.clone()),
                    "{:?} twice",
                    connector.name
                );
            }
            let debug = format!("{config:?}");
            for secret in SECRETS {
                prop_assert!(
                    !debug.contains(secret),
                    "debug output shows {}: {}",
                    secret,
                    debug
                );
            }
        }
        Err(error) => {
            prop_assert!(
                !error.message.trim().is_empty(),
                "empty message for {text:?}"
            );
            prop_assert_eq!(&error.file, "/data/connectors.json");
            let lines = text.split('\n').count();
            prop_assert!(
                error.line >= 1 && error.line <= lines,
                "line {} of {} lines: {}",
                error.line,
                lines,
                error
            );
            let shown = error.to_string();
            prop_assert!(shown.starts_with("/data/connectors.json:"), "{}", shown);
            prop_assert!(shown.ends_with(&error.message));
            for secret in SECRETS {
                prop_assert!(
                    !shown.contains(secret),
                    "the error shows {}: {}",
                    secret,
                    shown
                );
            }
        }
    }
    Ok(())
}

#[test]
fn the_spec_example_parses() {
    let config = parsed(SPEC_EXAMPLE).expect("the example is valid");
    assert_eq!(config.connectors.len(), 5);
}

#[test]
fn arbitrary_bytes_are_an_error_never_a_panic() {
    check(
        "connectors.json arbitrary bytes",
        1024,
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..256),
            // JSON-ish alphabets get past the first byte more often.
            prop::collection::vec(
                prop::sample::select(b"{}[]\":,0123456789.-eE tfnulr\\\n".to_vec()),
                0..128
            ),
        ],
        |bytes| check_outcome(&String::from_utf8_lossy(&bytes)),
    );
}

#[test]
fn corrupted_files_are_an_error_never_a_panic() {
    // Flips, deletions and insertions in a complete file.
    let edit = (any::<Index>(), 0u8..3, any::<u8>());
    check(
        "connectors.json byte corruptions",
        1024,
        prop::collection::vec(edit, 1..8),
        |edits| {
            let mut bytes = SPEC_EXAMPLE.as_bytes().to_vec();
            for (at, kind, byte) in edits {
                let i = at
                    .index(bytes.len().max(1))
                    .min(bytes.len().saturating_sub(1));
                match kind {
                    0 if !bytes.is_empty() => bytes[i] = byte,
                    1 if !bytes.is_empty() => {
                        bytes.remove(i);
                    }
                    _ => {
                        let alphabet = b"{}[]\",:~\\0-9azZ";
                        bytes.insert(i, alphabet[usize::from(byte) % alphabet.len()]);
                    }
                }
            }
            check_outcome(&String::from_utf8_lossy(&bytes))
        },
    );
}

/// Field names the parser knows, so mutations hit real fields (and typos of them).
const FIELDS: &[&str] = &[
    "runtime",
    "connectors",
    "mcpServers",
    "name",
    "maxExecutions",
    "timeoutMs",
    "memoryLimitMb",
    "pausedTtl",
    "expirySweepMinutes",
    "type",
    "root",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "approval",
    "reexecute",
    "hidden",
    "hint",
    "callTimeoutMs",
    "revertTimeoutMs",
    "revert",
    "method",
    "files",
    "mcp",
    "stdio",
    "http",
    "sse",
    "codemode",
    "console",
    "a-b",
    "",
    "0",
    "Type",
    "x y",
    "ünï",
];

/// Values that exercise the parser: every JSON type, durations, paths, identifiers and big numbers.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-1e20f64..1e20).prop_map(|x| json!(x)),
        prop::sample::select(FIELDS).prop_map(|s| json!(s)),
        prop::sample::select(vec![
            "24h",
            "0s",
            "90m",
            "7d",
            "500ms",
            "7w",
            "-1h",
            "99999999999999999999d",
            "~",
            "~/x",
            "/abs",
            "rel/dir",
            "*",
            "{{args.x}}",
            "{{result}}",
            "npx",
            "http://127.0.0.1:1/mcp",
        ])
        .prop_map(|s| json!(s)),
        prop::collection::vec(any::<char>(), 0..8).prop_map(|c| json!(String::from_iter(c))),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(FIELDS), inner), 0..4).prop_map(
                |entries| {
                    Value::Object(
                        entries
                            .into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect(),
                    )
                }
            ),
        ]
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    /// Replace the value at a site.
    Replace(Index, Value),
    /// Remove a key from the object at a site.
    Remove(Index, Index),
    /// Add (or overwrite) a key of the object at a site.
    Insert(Index, &'static str, Value),
    /// Rename a key of the object at a site.
    Rename(Index, Index, &'static str),
    /// Wrap the value at a site in an array.
    Wrap(Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), value()).prop_map(|(at, v)| Mutation::Replace(at, v)),
        (any::<Index>(), any::<Index>()).prop_map(|(at, k)| Mutation::Remove(at, k)),
        (any::<Index>(), prop::sample::select(FIELDS), value())
            .prop_map(|(at, k, v)| Mutation::Insert(at, k, v)),
        (any::<Index>(), any::<Index>(), prop::sample::select(FIELDS))
            .prop_map(|(at, k, to)| Mutation::Rename(at, k, to)),
        any::<Index>().prop_map(Mutation::Wrap),
    ]
}

/// The paths of every value in `value` that is not a secret (secrets are only ever moved, never copied).
fn sites(value: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(path.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                path.push(k.clone());
                sites(v, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push(i.to_string());
                sites(v, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at_mut<'a>(value: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |v, step| match v {
        Value::Object(map) => map.get_mut(step),
        Value::Array(items) => step.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
        _ => None,
    })
}

fn apply(document: &mut Value, mutation: &Mutation) {
    let mut all = Vec::new();
    sites(document, &mut Vec::new(), &mut all);
    let site = |at: &Index| at.get(&all).clone();
    match mutation {
        Mutation::Replace(at, v) => {
            if let Some(target) = at_mut(document, &site(at)) {
                *target = v.clone();
            }
        }
        Mutation::Remove(at, key) => {
            if let Some(Value::Object(map)) = at_mut(document, &site(at))
                && !map.is_empty()
            {
                let k = map
                    .keys()
                    .nth(key.index(map.len()))
                    .cloned()
                    .unwrap_or_default();
                map.shift_remove(&k);
            }
        }
        Mutation::Insert(at, k, v) => {
            if let Some(Value::Object(map)) = at_mut(document, &site(at)) {
                map.insert((*k).to_owned(), v.clone());
            }
        }
        Mutation::Rename(at, key, to) => {
            if let Some(Value::Object(map)) = at_mut(document, &site(at))
                && !map.is_empty()
            {
                let k = map
                    .keys()
                    .nth(key.index(map.len()))
                    .cloned()
                    .unwrap_or_default();
                // Secrets stay under `env` / `headers`: moved under another field, serde's messages may quote
                // them (e.g. `invalid type: string "…", expected struct RawRevert` under `revert`).
                let moves_a_secret = map
                    .get(&k)
                    .is_some_and(|v| SECRETS.iter().any(|s| v.to_string().contains(s)));
                if !moves_a_secret && let Some(v) = map.shift_remove(&k) {
                    map.insert((*to).to_owned(), v);
                }
            }
        }
        Mutation::Wrap(at) => {
            if let Some(target) = at_mut(document, &site(at)) {
                *target = Value::Array(vec![target.take()]);
            }
        }
    }
}

#[test]
fn structured_mutations_parse_or_fail_with_a_message() {
    let original: Value = serde_json::from_str(SPEC_EXAMPLE).expect("valid json");
    check(
        "connectors.json structured mutations",
        1024,
        (prop::collection::vec(mutation(), 1..5), any::<bool>()),
        |(mutations, pretty)| {
            let mut document = original.clone();
            for mutation in &mutations {
                apply(&mut document, mutation);
            }
            let text = if pretty {
                serde_json::to_string_pretty(&document).expect("serialises")
            } else {
                document.to_string()
            };
            check_outcome(&text)
        },
    );
}

#[test]
fn generated_files_parse_or_fail_with_a_message() {
    // Whole files built from the parser's own vocabulary, not derived from a valid one.
    let entry = || {
        prop::collection::vec((prop::sample::select(FIELDS), value()), 0..6).prop_map(|fields| {
            Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
        })
    };
    let section = || {
        prop::collection::vec((prop::sample::select(FIELDS), entry()), 0..4).prop_map(|entries| {
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
            )
        })
    };
    let file = (
        prop::option::of(value()),
        prop::option::of(section()),
        prop::option::of(section()),
    )
        .prop_map(|(runtime, connectors, mcp)| {
            let mut map = Map::new();
            if let Some(v) = runtime {
                map.insert("runtime".into(), v);
            }
            if let Some(v) = connectors {
                map.insert("connectors".into(), v);
            }
            if let Some(v) = mcp {
                map.insert("mcpServers".into(), v);
            }
            Value::Object(map)
        });
    check("connectors.json generated files", 1024, file, |document| {
        check_outcome(&document.to_string())
    });
}

// ---------------------------------------------------------------------------------------------------------
// Revert templates

/// Keys a template path can name: non-empty, no `.`, braces or surrounding spaces.
fn path_key() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!['a', 'b', 'c', 'x', '_', '0', '1', '-', 'é', '😀']),
        1..4,
    )
    .prop_map(String::from_iter)
}

/// Arguments and results: any JSON, keyed so that paths can name them.
fn data() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e9f64..1e9).prop_map(|x| json!(x)),
        prop::collection::vec(any::<char>(), 0..8).prop_map(|c| json!(String::from_iter(c))),
        Just(json!("{{args.x}}")),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((path_key(), inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// Template-looking text: placeholders, broken braces, paths and plain text.
fn template_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            prop::sample::select(vec![
                "{{",
                "}}",
                "{",
                "}",
                "args",
                "result",
                ".",
                "x",
                "0",
                " ",
                "{{args.x}}",
                "{{result}}",
                "{{ result.a.0 }}",
                "{{args.}}",
                "{{}}",
                "{{.}}",
                "{{{",
                "}}}",
                "é",
                "😀",
                "\\",
                "\"",
            ])
            .prop_map(str::to_owned),
            path_key(),
        ],
        0..10,
    )
    .prop_map(|parts| parts.concat())
}

/// Templates: any JSON whose strings look like templates.
fn template() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        template_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((template_text(), inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// Whether a rendered value has the template's shape: the same keys in the same order, the same array
/// lengths, the same non-string scalars (strings may become any value).
fn same_shape(template: &Value, rendered: &Value) -> bool {
    match (template, rendered) {
        (Value::String(_), _) => true,
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_shape(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && same_shape(va, vb))
        }
        (a, b) => a == b,
    }
}

fn contains_braces(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains("{{"),
        Value::Array(items) => items.iter().any(contains_braces),
        Value::Object(map) => map.values().any(contains_braces),
        _ => false,
    }
}

#[test]
fn templates_never_panic_and_keep_their_shape() {
    check(
        "render_template arbitrary input",
        1024,
        (template(), data(), data()),
        |(template, args, result)| {
            match render_template(&template, &args, &result) {
                Ok(rendered) => {
                    prop_assert!(
                        same_shape(&template, &rendered),
                        "{} → {}",
                        template,
                        rendered
                    )
                }
                Err(message) => {
                    prop_assert!(message.starts_with("revert template {{"), "{}", message);
                    prop_assert!(
                        contains_braces(&template),
                        "{} failed: {}",
                        template,
                        message
                    );
                }
            }
            Ok(())
        },
    );
}

#[test]
fn literal_templates_render_to_themselves() {
    check(
        "render_template literals",
        512,
        (
            data().prop_filter("no placeholder", |t| !contains_braces(t)),
            data(),
            data(),
        ),
        |(template, args, result)| {
            prop_assert_eq!(
                render_template(&template, &args, &result),
                Ok(template.clone())
            );
            Ok(())
        },
    );
}

/// A path to a value inside `value`, as `.`-joined keys and indices.
fn paths(value: &Value, path: &mut Vec<String>, out: &mut Vec<(String, Value)>) {
    out.push((path.join("."), value.clone()));
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                path.push(k.clone());
                paths(v, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push(i.to_string());
                paths(v, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn placeholder(root: &str, path: &str) -> String {
    if path.is_empty() {
        root.to_owned()
    } else {
        format!("{root}.{path}")
    }
}

#[test]
fn whole_string_placeholders_pick_the_value_with_its_type() {
    let padding = prop::sample::select(vec!["", " ", "  ", "\n", "\t"]);
    check(
        "render_template placeholders",
        512,
        (
            data(),
            data(),
            any::<bool>(),
            any::<Index>(),
            padding.clone(),
            padding,
            any::<Index>(),
        ),
        |(args, result, from_result, pick, outer, inner, shape)| {
            let (root, source) = if from_result {
                ("result", &result)
            } else {
                ("args", &args)
            };
            let mut all = Vec::new();
            paths(source, &mut Vec::new(), &mut all);
            let (path, expected) = pick.get(&all).clone();
            let text = format!(
                "{outer}{{{{{inner}{}{inner}}}}}{outer}",
                placeholder(root, &path)
            );
            prop_assert_eq!(
                render_template(&json!(text), &args, &result),
                Ok(expected.clone()),
                "{:?}",
                text
            );
            // Nested anywhere in a template, the placeholder is replaced and the rest kept.
            let (template, want) = match shape.index(3) {
                0 => (json!({"k": text, "n": 1}), json!({"k": expected, "n": 1})),
                1 => (json!([true, [text]]), json!([true, [expected]])),
                _ => (json!({"a": [{"b": text}]}), json!({"a": [{"b": expected}]})),
            };
            prop_assert_eq!(render_template(&template, &args, &result), Ok(want));
            Ok(())
        },
    );
}

#[test]
fn placeholders_inside_text_interpolate() {
    let plain = prop::collection::vec(
        prop::sample::select(vec!['a', ' ', '#', '-', 'é', '😀', '.', '"', '}']),
        0..6,
    )
    .prop_map(String::from_iter);
    check(
        "render_template interpolation",
        512,
        (data(), any::<Index>(), plain.clone(), plain, any::<Index>()),
        |(result, pick, before, after, second)| {
            let mut all = Vec::new();
            paths(&result, &mut Vec::new(), &mut all);
            let (path, value) = pick.get(&all).clone();
            let (path2, value2) = second.get(&all).clone();
            let text_of = |v: &Value| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            // Text around the placeholders (a `}` alone is text) makes the string no whole-string placeholder.
            // (A `{` right before `{{` would start the placeholder early: `{{{x}}` names `{x`.)
            let before = format!("<{before}");
            let template = format!(
                "{before}{{{{{}}}}}{after}{{{{ {} }}}}",
                placeholder("result", &path),
                placeholder("result", &path2)
            );
            let want = format!("{before}{}{after}{}", text_of(&value), text_of(&value2));
            prop_assert_eq!(
                render_template(&json!(template), &json!({}), &result),
                Ok(json!(want)),
                "{:?}",
                template
            );
            Ok(())
        },
    );
}

#[test]
fn missing_paths_and_unknown_roots_are_errors_naming_them() {
    check(
        "render_template missing paths",
        512,
        (
            data(),
            any::<Index>(),
            path_key(),
            any::<bool>(),
            path_key(),
        ),
        |(args, pick, missing, interpolated, root)| {
            let mut all = Vec::new();
            paths(&args, &mut Vec::new(), &mut all);
            let (path, value) = pick.get(&all).clone();
            let present = match &value {
                Value::Object(map) => map.contains_key(&missing),
                Value::Array(items) => missing.parse::<usize>().is_ok_and(|i| i < items.len()),
                _ => false,
            };
            prop_assume!(!present);
            let full = format!("{}.{missing}", placeholder("args", &path));
            let template = if interpolated {
                format!("see {{{{{full}}}}} here")
            } else {
                format!("{{{{{full}}}}}")
            };
            let error = render_template(&json!({"x": [template]}), &args, &json!(null));
            prop_assert_eq!(
                error,
                Err(format!(
                    "revert template {{{{{full}}}}}: no value at \"{missing}\""
                ))
            );
            // A path must start at `args` or `result`.
            prop_assume!(root != "args" && root != "result");
            let unknown = format!("{root}.{path}");
            prop_assert_eq!(
                render_template(&json!(format!("{{{{{unknown}}}}}")), &args, &args),
                Err(format!(
                    "revert template {{{{{unknown}}}}} must start with args. or result."
                ))
            );
            Ok(())
        },
    );
}
