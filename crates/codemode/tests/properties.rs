//! Properties over generated inputs (a small deterministic generator; no extra dependency): code
//! normalisation never panics on arbitrary text, argument comparison ignores key order and nothing else, and
//! the storage codec's values survive the store unchanged.

use codemode::codec::same_arguments;
use codemode::normalize::{LineColumn, normalize_code};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

struct Generator(u64);

impl Generator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn value(&mut self, depth: u32) -> Value {
        match self.below(if depth > 3 { 5 } else { 8 }) {
            0 => Value::Null,
            1 => Value::Bool(self.below(2) == 1),
            2 => json!(self.below(1 << 40) as i64 - (1 << 39)),
            3 => json!((self.next() >> 11) as f64 / (1u64 << 53) as f64 * 1e6),
            4 => Value::String(
                (0..self.below(6))
                    .map(|_| ['a', 'é', '"', '\\', '\n', '😀', 'z'][self.below(7) as usize])
                    .collect(),
            ),
            5 => Value::Array((0..self.below(4)).map(|_| self.value(depth + 1)).collect()),
            6 => json!({"__codemode_binary_v1__": "Uint8Array", "data": "AQID"}),
            _ => {
                let mut map = Map::new();
                for i in 0..self.below(5) {
                    map.insert(format!("k{}{}", i, self.below(3)), self.value(depth + 1));
                }
                Value::Object(map)
            }
        }
    }
}

/// The same value with every object's keys in another order.
fn reordered(value: &Value, generator: &mut Generator) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map
                .iter()
                .map(|(k, v)| (k.clone(), reordered(v, generator)))
                .collect();
            for i in (1..entries.len()).rev() {
                let j = generator.below(i as u64 + 1) as usize;
                entries.swap(i, j);
            }
            Value::Object(entries.into_iter().collect())
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| reordered(v, generator)).collect())
        }
        other => other.clone(),
    }
}

fn raw(value: &Value) -> Box<RawValue> {
    RawValue::from_string(value.to_string()).expect("valid json")
}

#[test]
fn argument_comparison_ignores_key_order_and_nothing_else() {
    let mut generator = Generator(0x1234_5678_9abc_def1);
    for _ in 0..3_000 {
        let value = json!({"payload": generator.value(0), "id": generator.below(100)});
        let shuffled = reordered(&value, &mut generator);
        assert!(
            same_arguments(Some(&raw(&value)), Some(&raw(&shuffled))),
            "{value} vs {shuffled}"
        );
        let mut changed = value.clone();
        changed["id"] = json!(changed["id"].as_u64().unwrap_or(0) + 1);
        assert!(
            !same_arguments(Some(&raw(&value)), Some(&raw(&changed))),
            "{value} vs {changed}"
        );
    }
}

#[test]
fn stored_values_read_back_unchanged() {
    let mut generator = Generator(0xfeed_beef_dead_cafe);
    for _ in 0..3_000 {
        let value = generator.value(0);
        let text = serde_json::to_string(&value).expect("serialises");
        let back: Value = serde_json::from_str(&text).expect("parses");
        assert_eq!(back, value);
        assert_eq!(
            serde_json::to_string(&back).expect("serialises"),
            text,
            "byte-identical round trip"
        );
    }
}

#[test]
fn normalisation_never_panics_on_arbitrary_text() {
    let mut generator = Generator(0x0bad_c0de_0bad_c0de);
    let fragments = [
        "async",
        "()",
        "=>",
        "{",
        "}",
        "(",
        ")",
        "return",
        "export default",
        "function",
        "f",
        "class",
        " ",
        "\n",
        "\r\n",
        "```",
        "```js\n",
        ";",
        "await",
        "1 + 2",
        "'",
        "\"",
        "`",
        "${",
        "/*",
        "*/",
        "//",
        "é",
        "😀",
        "\u{2028}",
        "\\",
        "[",
        "]",
        "import(",
        "x.y",
        ",",
        "...",
        "?.",
        "#",
        "@",
        "\0",
    ];
    for _ in 0..5_000 {
        let text: String = (0..generator.below(24))
            .map(|_| fragments[generator.below(fragments.len() as u64) as usize])
            .collect();
        let normalized = normalize_code(&text);
        // Every position in the output maps back somewhere in the input.
        for line in 1..4 {
            let _ = normalized.original_position(LineColumn {
                line,
                column: 1 + generator.below(40) as u32,
            });
        }
        let _ = normalized.end_position();
    }
    for _ in 0..2_000 {
        let bytes: Vec<u8> = (0..generator.below(64))
            .map(|_| generator.below(256) as u8)
            .collect();
        let _ = normalize_code(&String::from_utf8_lossy(&bytes));
    }
}
