//! Golden tests for discovery: `tests/discovery/catalog.json` is a catalogue of connectors and snippets; each
//! folder holds one `request.json` (`{search}` or `{describe}`) beside `expected.json`, the exact output.
//! `UPDATE_GOLDEN=1` rewrites the expectations (then read the diff before committing it).

mod support;

use codemode::connector::{Replay, ToolDescriptor};
use codemode::discovery::{Catalog, describe, search};
use codemode::{Snippet, discovery::tool_description};
use serde_json::Value;

#[test]
fn discovery_matches_the_golden_files() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/discovery");
    let catalog: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("catalog.json")).unwrap()).unwrap();
    let connectors: Vec<(String, Option<String>, Vec<ToolDescriptor>)> = catalog["connectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let tools = c["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| ToolDescriptor {
                    name: t["name"].as_str().unwrap().to_owned(),
                    description: t["description"].as_str().map(str::to_owned),
                    input_schema: t.get("inputSchema").cloned(),
                    output_schema: None,
                    requires_approval: t["requiresApproval"] == true,
                    replay: Replay::Log,
                    hidden: t["hidden"] == true,
                    ..ToolDescriptor::default()
                })
                .collect();
            (
                c["name"].as_str().unwrap().to_owned(),
                c["instructions"].as_str().map(str::to_owned),
                tools,
            )
        })
        .collect();
    let catalogs: Vec<Catalog<'_>> = connectors
        .iter()
        .map(|(name, instructions, tools)| Catalog {
            name,
            instructions: instructions.as_deref(),
            tools: tools.iter().filter(|t| !t.hidden).collect(),
        })
        .collect();
    let snippets: Vec<Snippet> = serde_json::from_value(catalog["snippets"].clone()).unwrap();
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    let cases = support::case_dirs("discovery");
    assert!(cases.len() >= 15);
    for case in &cases {
        let request: Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("request.json")).unwrap())
                .unwrap();
        let actual = if let Some(query) = request["search"].as_str() {
            serde_json::to_value(search(query, &catalogs, &snippets)).unwrap()
        } else {
            serde_json::to_value(describe(
                request["describe"].as_str().unwrap(),
                &catalogs,
                &snippets,
            ))
            .unwrap()
        };
        let path = case.join("expected.json");
        if update {
            std::fs::write(&path, serde_json::to_string_pretty(&actual).unwrap() + "\n").unwrap();
            continue;
        }
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if actual != expected {
            failures.push(format!(
                "{}:\nexpected {expected:#}\nactual   {actual:#}",
                case.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_tool_description_names_the_globals_and_hints() {
    let one = tool_description(&[("items", None)]);
    assert!(
        one.contains("The ONLY globals are `items` and `codemode`"),
        "{one}"
    );
    assert!(one.contains("- `items`"));
    let hinted = tool_description(&[("items", Some("manage the item store")), ("files", None)]);
    assert!(
        hinted.contains("The ONLY globals are `items`, `files` and `codemode`"),
        "{hinted}"
    );
    assert!(hinted.contains("- `items` — manage the item store"));
    assert!(hinted.ends_with("- `files`"));
    // The points of docs/semantics.md §1.3, in upstream's order.
    let order = [
        "codemode.search(",
        "codemode.describe(",
        "ONLY globals",
        "Never guess",
        "TypeScript",
        "codemode.step(",
        "approval",
        "status: \"paused\"",
        "deterministic",
        "`fetch`",
        "codemode.run(",
        "async (input)",
        "Available connectors",
    ];
    let mut at = 0;
    for point in order {
        let found = one[at..]
            .find(point)
            .unwrap_or_else(|| panic!("{point:?} missing or out of order"));
        at += found;
    }
}
