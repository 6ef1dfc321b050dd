//! Golden tests for code normalisation: each folder under `tests/normalize/` holds `input.js` (what a model
//! sent) beside `expected.js` (the exact code the sandbox evaluates), covering the reference's checklist.
//! `UPDATE_GOLDEN=1` rewrites the expectations from the current output.

mod support;

use codemode::normalize::normalize_code;

#[test]
fn normalisation_matches_the_golden_files() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let cases = support::case_dirs("normalize");
    assert!(
        cases.len() >= 40,
        "the checklist has at least 40 cases, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let input = std::fs::read_to_string(case.join("input.js")).expect("input.js");
        let actual = normalize_code(&input).code;
        let expected_path = case.join("expected.js");
        if update {
            std::fs::write(&expected_path, &actual).expect("write expected.js");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).expect("expected.js");
        if actual != expected {
            failures.push(format!(
                "{}:\n  input:    {input:?}\n  expected: {expected:?}\n  actual:   {actual:?}",
                case.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn normalised_code_is_always_one_arrow_function() {
    // Whatever normalisation does to valid code, the result must still be one arrow function.
    for input in [
        "1",
        "x => x",
        "let a = 1; a",
        "export default 1",
        "function f() {}",
        "class A {}",
    ] {
        let code = normalize_code(input).code;
        assert!(
            code.starts_with("async () =>") || code.starts_with("x =>"),
            "{input:?} → {code:?}"
        );
    }
}
