//! Golden tests for TypeScript generation: each folder under `tests/typegen/` holds `input.json` — either
//! `{schema, name}` for one declaration or `{tools}` for a connector's methods — beside `expected.ts`, the exact
//! text the reference produces (its own test expectations, plus every rule of docs/semantics.md §1.5).

mod support;

use codemode::typegen::{TypedTool, generate_types, type_declaration};
use serde_json::{Value, json};

#[test]
fn generated_types_match_the_golden_files() {
    let mut failures = Vec::new();
    let cases = support::case_dirs("typegen");
    assert!(cases.len() >= 20);
    for case in &cases {
        let input: Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("input.json")).unwrap())
                .unwrap();
        let expected = std::fs::read_to_string(case.join("expected.ts")).unwrap();
        let actual = if let Some(schema) = input.get("schema") {
            type_declaration(schema, input["name"].as_str().unwrap())
        } else {
            let default_schema = json!({"type": "object"});
            let tools = input["tools"].as_object().unwrap();
            let typed: Vec<TypedTool<'_>> = tools
                .iter()
                .map(|(name, tool)| TypedTool {
                    name,
                    description: tool["description"].as_str(),
                    input_schema: tool.get("inputSchema").unwrap_or(&default_schema),
                    output_schema: tool.get("outputSchema"),
                })
                .collect();
            generate_types(&typed, "codemode")
        };
        if actual != expected {
            failures.push(format!(
                "{}:\n--- expected\n{expected}\n--- actual\n{actual}",
                case.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
