//! What the agent reads: an outcome cut to a character budget, by structure, so that what remains is valid JSON
//! a model can use and says where the whole is (docs/api.md, "Bounded outcomes"). The audit log, the CLI and
//! the app keep and show everything; only `codemode mcp` answers through this.

use codemode::codec::{BIGINT_ENVELOPE, BINARY_ENVELOPE};
use serde_json::{Map, Value, json};

pub use connectors::config::{DEFAULT_MAX_OUTPUT_CHARS, MIN_MAX_OUTPUT_CHARS};

/// How much an outcome may say, and whether it lists its calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputBudget {
    /// Characters of the outcome's JSON text.
    pub max_chars: usize,
    /// A summary of the calls (`seq`, `call`, `state`) within the budget; left out otherwise.
    pub include_calls: bool,
}

impl Default for OutputBudget {
    fn default() -> Self {
        OutputBudget {
            max_chars: DEFAULT_MAX_OUTPUT_CHARS,
            include_calls: false,
        }
    }
}

/// The shrink levels tried in turn, from barely cut to skeletal: the longest string kept (characters), the
/// items kept of an array or object, and the depth below which values are only described.
const LEVELS: &[(usize, usize, usize)] = &[
    (4000, 200, 16),
    (2000, 100, 12),
    (1000, 50, 10),
    (400, 20, 8),
    (200, 10, 6),
    (100, 5, 4),
    (50, 3, 3),
    (20, 2, 2),
    (10, 1, 1),
];

/// Characters of a value's compact JSON text: what a client shows the model.
fn size(value: &Value) -> usize {
    serde_json::to_string(value)
        .map(|text| text.chars().count())
        .unwrap_or(0)
}

/// An outcome (or `codemode_wait`'s answer) as the model gets it: within `budget.max_chars` characters of JSON,
/// keeping, in this order, `status`, `executionId`, `error`, `pending` (whole), `result`, `logs`, `calls`.
/// Anything cut is said: `truncated: true` and `whole`, the command that shows all of it.
pub fn bound_outcome(outcome: Value, budget: OutputBudget) -> Value {
    let Value::Object(mut fields) = outcome else {
        return outcome;
    };
    let calls = fields.remove("calls");
    let id = fields
        .get("executionId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut bounded = Map::new();
    for key in ["status", "executionId", "pending"] {
        if let Some(value) = fields.remove(key) {
            bounded.insert(key.to_owned(), value);
        }
    }
    let error = fields.remove("error");
    let result = fields.remove("result");
    let logs = fields.remove("logs");
    // Anything else an outcome may carry, whole (small: flags and ids).
    bounded.extend(fields);
    let notes = json!({
        "truncated": true,
        "whole": format!("codemode show {id} (or this run in the Codemode Console app) has all of it"),
    });
    // Kept back for the notes, should anything be cut, and the commas and keys that join the parts.
    let reserve = size(&notes) + 40;
    let mut left = budget
        .max_chars
        .saturating_sub(size(&Value::Object(bounded.clone())) + reserve);
    let mut cut = false;

    if let Some(error) = error {
        let (text, shortened) = match error {
            Value::String(text) => {
                let (text, shortened) = shorten_middle(&text, left.saturating_sub(16));
                (Value::String(text), shortened)
            }
            other => (other, false),
        };
        cut |= shortened;
        left = left.saturating_sub(size(&text) + 10);
        bounded.insert("error".to_owned(), text);
    }
    if let Some(result) = result {
        let (value, shrunk) = shrink_to(&result, left.saturating_sub(12), &id);
        cut |= shrunk;
        left = left.saturating_sub(size(&value) + 12);
        bounded.insert("result".to_owned(), value);
    }
    if let Some(Value::Array(lines)) = logs {
        let (kept, shortened) = fit_lines(&lines, left.saturating_sub(10));
        cut |= shortened;
        left = left.saturating_sub(size(&kept) + 10);
        bounded.insert("logs".to_owned(), kept);
    }
    if budget.include_calls
        && let Some(Value::Array(entries)) = calls
    {
        let summary: Vec<Value> = entries.iter().map(call_summary).collect();
        let (kept, shortened) = fit_items(summary, left.saturating_sub(12));
        cut |= shortened;
        bounded.insert("calls".to_owned(), kept);
    }
    if cut && let Value::Object(notes) = notes {
        bounded.extend(notes);
    }
    Value::Object(bounded)
}

/// A call as the summary lists it.
fn call_summary(entry: &Value) -> Value {
    json!({
        "seq": entry.get("seq").cloned().unwrap_or(Value::Null),
        "call": format!(
            "{}.{}",
            entry.get("connector").and_then(Value::as_str).unwrap_or("?"),
            entry.get("method").and_then(Value::as_str).unwrap_or("?")
        ),
        "state": entry.get("state").cloned().unwrap_or(Value::Null),
    })
}

/// A text cut in its middle to at most `max` characters, saying how much was left out; the start (what
/// happened) and the end (where) are what a reader needs most.
fn shorten_middle(text: &str, max: usize) -> (String, bool) {
    let count = text.chars().count();
    if count <= max {
        return (text.to_owned(), false);
    }
    let note = |left_out: usize| format!(" […{left_out} characters left out…] ");
    let room = max.saturating_sub(note(count).chars().count());
    let head = room * 2 / 3;
    let tail = room - head;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(count - tail).collect();
    (format!("{start}{}{end}", note(count - head - tail)), true)
}

/// `value` shrunk by structure until its JSON fits `max` characters; whether anything was cut.
fn shrink_to(value: &Value, max: usize, id: &str) -> (Value, bool) {
    if size(value) <= max {
        return (value.clone(), false);
    }
    for &(chars, items, depth) in LEVELS {
        let shrunk = shrink(value, chars, items, depth, 0);
        if size(&shrunk) <= max {
            return (shrunk, true);
        }
    }
    (
        Value::String(format!(
            "[a result of {} characters, left out: codemode show {id}]",
            size(value)
        )),
        true,
    )
}

fn shrink(value: &Value, chars: usize, items: usize, depth: usize, at: usize) -> Value {
    match value {
        Value::String(text) => {
            let count = text.chars().count();
            if count <= chars {
                value.clone()
            } else {
                let kept: String = text.chars().take(chars).collect();
                Value::String(format!("{kept}…[{} more characters]", count - chars))
            }
        }
        Value::Array(list) => {
            if at >= depth {
                return Value::String(format!("[array of {} items]", list.len()));
            }
            let mut kept: Vec<Value> = list
                .iter()
                .take(items)
                .map(|v| shrink(v, chars, items, depth, at + 1))
                .collect();
            if list.len() > items {
                kept.push(Value::String(format!(
                    "[…{} more items]",
                    list.len() - items
                )));
            }
            Value::Array(kept)
        }
        Value::Object(map) => {
            // Binary and BigInt envelopes are described, never cut into invalid encodings.
            if let Some(Value::String(kind)) = map.get(BINARY_ENVELOPE) {
                let data = map.get("data").and_then(Value::as_str).unwrap_or_default();
                if data.chars().count() > chars {
                    return Value::String(format!(
                        "[binary value: {kind} of {} bytes]",
                        data.len() / 4 * 3
                    ));
                }
                return value.clone();
            }
            if map.len() == 1 && map.contains_key(BIGINT_ENVELOPE) {
                return value.clone();
            }
            if at >= depth {
                return Value::String(format!("[object with {} keys]", map.len()));
            }
            let mut kept: Map<String, Value> = map
                .iter()
                .take(items)
                .map(|(k, v)| (k.clone(), shrink(v, chars, items, depth, at + 1)))
                .collect();
            if map.len() > items {
                kept.insert(
                    "…".to_owned(),
                    Value::String(format!("{} more keys", map.len() - items)),
                );
            }
            Value::Object(kept)
        }
        other => other.clone(),
    }
}

/// Console lines within `max` characters: the first and the last that fit, long lines shortened, and a line
/// saying how many were left out between them.
fn fit_lines(lines: &[Value], max: usize) -> (Value, bool) {
    if size(&Value::Array(lines.to_vec())) <= max {
        return (Value::Array(lines.to_vec()), false);
    }
    let line_max = (max / 4).clamp(80, 2000);
    let short: Vec<Value> = lines
        .iter()
        .map(|line| match line {
            Value::String(text) => Value::String(shorten_middle(text, line_max).0),
            other => other.clone(),
        })
        .collect();
    let (head, tail, left_out) = take_both_ends(&short, max, |n| format!("[…{n} lines left out…]"));
    let mut kept = head;
    if left_out > 0 {
        kept.push(Value::String(format!("[…{left_out} lines left out…]")));
    }
    kept.extend(tail);
    (Value::Array(kept), true)
}

/// A list within `max` characters: its first and last items that fit, with a marker for those left out.
fn fit_items(items: Vec<Value>, max: usize) -> (Value, bool) {
    if size(&Value::Array(items.clone())) <= max {
        return (Value::Array(items), false);
    }
    let (head, tail, left_out) = take_both_ends(&items, max, |n| format!("[…{n} calls left out…]"));
    let mut kept = head;
    kept.push(Value::String(format!("[…{left_out} calls left out…]")));
    kept.extend(tail);
    (Value::Array(kept), true)
}

/// Items taken alternately from the start and the end while they fit `max` with the marker `note` would
/// add; returns the start, the end (in order) and how many were left out.
fn take_both_ends(
    items: &[Value],
    max: usize,
    note: impl Fn(usize) -> String,
) -> (Vec<Value>, Vec<Value>, usize) {
    let (mut head, mut tail) = (Vec::new(), Vec::new());
    let (mut front, mut back) = (0, items.len());
    // Brackets, and the marker at its longest.
    let mut used = 2 + note(items.len()).chars().count() + 3;
    let mut from_front = true;
    while front < back {
        let item = if from_front {
            &items[front]
        } else {
            &items[back - 1]
        };
        let cost = size(item) + 1;
        if used + cost > max {
            break;
        }
        used += cost;
        if from_front {
            head.push(item.clone());
            front += 1;
        } else {
            tail.push(item.clone());
            back -= 1;
        }
        from_front = !from_front;
    }
    tail.reverse();
    (head, tail, back - front)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounded(outcome: Value, max_chars: usize) -> Value {
        let out = bound_outcome(
            outcome,
            OutputBudget {
                max_chars,
                include_calls: true,
            },
        );
        let text = serde_json::to_string(&out).expect("JSON");
        assert!(
            text.chars().count() <= max_chars,
            "{} > {max_chars}: {text}",
            text.chars().count()
        );
        out
    }

    #[test]
    fn a_small_outcome_is_unchanged_but_for_its_calls() {
        let outcome = json!({"status": "completed", "executionId": "e1", "result": {"a": 1}, "logs": ["hi"],
            "calls": [{"seq": 0, "connector": "files", "method": "read_file", "state": "applied", "args": {"path": "x"}}]});
        let out = bound_outcome(outcome.clone(), OutputBudget::default());
        assert_eq!(
            out,
            json!({"status": "completed", "executionId": "e1", "result": {"a": 1}, "logs": ["hi"]})
        );
        let with_calls = bounded(outcome, 24_000);
        assert_eq!(
            with_calls["calls"],
            json!([{"seq": 0, "call": "files.read_file", "state": "applied"}])
        );
        assert!(with_calls.get("truncated").is_none());
    }

    #[test]
    fn a_long_string_is_shortened_and_says_so() {
        let out = bounded(
            json!({"status": "completed", "executionId": "e1", "result": "x".repeat(5_000_000)}),
            24_000,
        );
        let result = out["result"].as_str().expect("a string");
        assert!(
            result.ends_with("more characters]"),
            "{}",
            &result[result.len() - 40..]
        );
        assert_eq!(out["truncated"], json!(true));
        assert!(
            out["whole"]
                .as_str()
                .expect("where")
                .contains("codemode show e1")
        );
    }

    #[test]
    fn a_long_array_keeps_its_first_items_and_counts_the_rest() {
        let items: Vec<Value> = (0..100_000)
            .map(|i| json!({"id": i, "name": format!("item {i}")}))
            .collect();
        let out = bounded(
            json!({"status": "completed", "executionId": "e1", "result": items}),
            24_000,
        );
        let kept = out["result"].as_array().expect("an array");
        assert_eq!(kept[0], json!({"id": 0, "name": "item 0"}));
        assert!(
            kept.last()
                .and_then(Value::as_str)
                .expect("a marker")
                .contains("more items")
        );
    }

    #[test]
    fn a_deep_object_is_described_below_the_depth_kept() {
        // serde_json reads at most 128 levels, so a recorded result is never deeper.
        let mut deep = json!("bottom");
        for i in 0..100 {
            deep = json!({ format!("level{i}"): deep, "padding": "y".repeat(50) });
        }
        let out = bounded(
            json!({"status": "completed", "executionId": "e1", "result": deep}),
            2_000,
        );
        let text = out["result"].to_string();
        assert!(text.contains("[object with 2 keys]"), "{text}");
    }

    #[test]
    fn binary_is_described_not_cut() {
        let data = "QUJD".repeat(100_000);
        let out = bounded(
            json!({"status": "completed", "executionId": "e1",
            "result": {"bytes": {BINARY_ENVELOPE: "Uint8Array", "data": data}}}),
            24_000,
        );
        assert_eq!(
            out["result"]["bytes"],
            json!("[binary value: Uint8Array of 300000 bytes]")
        );
    }

    #[test]
    fn logs_keep_their_first_and_last_lines() {
        let lines: Vec<Value> = (0..1_000_000)
            .map(|i| Value::String(format!("line {i}")))
            .collect();
        let out = bounded(
            json!({"status": "completed", "executionId": "e1", "result": 1, "logs": lines}),
            24_000,
        );
        let kept = out["logs"].as_array().expect("lines");
        assert_eq!(kept[0], json!("line 0"));
        assert_eq!(kept[kept.len() - 1], json!("line 999999"));
        assert!(
            kept.iter()
                .any(|l| l.as_str().is_some_and(|l| l.contains("lines left out")))
        );
    }

    #[test]
    fn an_error_keeps_its_start_and_end_and_the_pending_call_stays_whole() {
        let message = format!("Code execution failed: {}END", "e".repeat(1_000_000));
        let out = bounded(
            json!({"status": "error", "executionId": "e1", "error": message}),
            24_000,
        );
        let error = out["error"].as_str().expect("text");
        assert!(
            error.starts_with("Code execution failed: ") && error.ends_with("END"),
            "{error:.80}"
        );
        assert!(error.contains("characters left out"));
        let pending = json!([{"executionId": "e1", "seq": 3, "connector": "files", "method": "write_file",
            "args": {"path": "a", "content": "z".repeat(10_000)}}]);
        let out = bounded(
            json!({"status": "paused", "executionId": "e1", "pending": pending.clone(),
            "calls": (0..100_000).map(|i| json!({"seq": i, "connector": "kb", "method": "echo", "state": "applied"})).collect::<Vec<_>>()}),
            24_000,
        );
        assert_eq!(out["pending"], pending);
        let calls = out["calls"].as_array().expect("a summary");
        assert_eq!(calls[0]["seq"], json!(0));
        assert!(
            calls
                .iter()
                .any(|c| c.as_str().is_some_and(|c| c.contains("calls left out")))
        );
    }
}
