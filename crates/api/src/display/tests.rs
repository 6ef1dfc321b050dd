//! The renderer's promises checked: escapes, ordering, folding, and by property that every display shows every
//! key and the whole target and hides nothing.

use super::*;
use proptest::prelude::*;
use serde_json::json;

#[test]
fn bidi_control_and_invisible_characters_are_written_as_escapes() {
    assert_eq!(visible("report\u{202e}fdp.exe"), "report\\u{202e}fdp.exe");
    for (raw, shown) in [
        ("a\u{202a}b\u{202d}c", "a\\u{202a}b\\u{202d}c"),
        ("\u{2066}\u{2069}", "\\u{2066}\\u{2069}"),
        ("\u{200e}\u{200f}\u{61c}", "\\u{200e}\\u{200f}\\u{61c}"),
        ("ok\rfake", "ok\\u{d}fake"),
        ("\u{1b}[2J", "\\u{1b}[2J"),
        ("del\u{7f} nel\u{85}", "del\\u{7f} nel\\u{85}"),
        // Invisible: zero-width space, word joiner, BOM, soft hyphen, a tag character, a variation
        // selector, a Hangul filler, a line separator.
        ("a\u{200b}b\u{2060}c", "a\\u{200b}b\\u{2060}c"),
        ("\u{feff}keep\u{ad}.txt", "\\u{feff}keep\\u{ad}.txt"),
        (
            "x\u{e0041}\u{fe0f}\u{3164}\u{2028}",
            "x\\u{e0041}\\u{fe0f}\\u{3164}\\u{2028}",
        ),
    ] {
        assert_eq!(visible(raw), shown);
    }
    assert_eq!(
        visible("two\n\tlines, café ⏸ 👍🏽"),
        "two\n\tlines, café ⏸ 👍🏽"
    );
    let once = visible("x\u{202e}y\u{e007f}").into_owned();
    assert_eq!(visible(&once), once, "escaping is idempotent");
}

#[test]
fn every_default_ignorable_code_point_is_marked() {
    let ranges: [(u32, u32); 18] = [
        (0xad, 0xad),
        (0x34f, 0x34f),
        (0x61c, 0x61c),
        (0x115f, 0x1160),
        (0x17b4, 0x17b5),
        (0x180b, 0x180f),
        (0x200b, 0x200f),
        (0x202a, 0x202e),
        (0x2060, 0x206f),
        (0x3164, 0x3164),
        (0xfe00, 0xfe0f),
        (0xfeff, 0xfeff),
        (0xffa0, 0xffa0),
        (0xfff0, 0xfff8),
        (0x1bca0, 0x1bca3),
        (0x1d173, 0x1d17a),
        (0xe0000, 0xe0fff),
        (0x2028, 0x2029),
    ];
    for (first, last) in ranges {
        for c in (first..=last).filter_map(char::from_u32) {
            assert!(disguises(c), "U+{:04X} is marked", u32::from(c));
        }
    }
    for c in [
        'a',
        'é',
        ' ',
        '\n',
        '\t',
        '€',
        '中',
        '\u{200a}',
        '\u{1f600}',
    ] {
        assert!(!disguises(c), "U+{:04X} shows itself", u32::from(c));
    }
}

#[test]
fn every_argument_key_shows_the_target_first_and_only_long_leaves_fold() {
    let content = format!("Meeting notes, {}", "blah ".repeat(200));
    let args = json!({
        "content": content,
        "path": "deploy/prod-config.yaml",
        "options": {"mode": "0644", "tags": ["a", {"deep": true}], "empty": {}},
        "odd key": 1
    });
    let shown = arguments_text(Some(&args), None, 2);
    let remaining = content.chars().count() - 80;
    let folded: String = content.chars().take(80).collect();
    assert_eq!(
        shown,
        format!(
            "  path: \"deploy/prod-config.yaml\"
  content: {}… ({remaining} more characters)
  options:
    mode: \"0644\"
    tags:
      [0]: \"a\"
      [1]:
        deep: true
    empty: {{}}
  \"odd key\": 1",
            Value::String(folded)
        )
    );
    let multiline = "line\n".repeat(40);
    let folded = arguments_text(Some(&json!({ "text": multiline })), None, 0);
    assert!(!folded.contains('\n'), "{folded}");
    assert!(
        folded.starts_with("text: \"line\\nline\\n") && folded.ends_with("… (120 more characters)"),
        "{folded}"
    );
    assert_eq!(arguments_text(None, None, 2), "  (no arguments)");
    assert_eq!(
        arguments_text(Some(&json!("just text")), None, 0),
        "\"just text\""
    );
}

#[test]
fn identifying_values_come_first_in_their_order_and_are_never_cut() {
    let long_path = format!("{}/keep.txt", "deep/".repeat(100));
    let args = json!({
        "content": "x".repeat(500), "id": 7, "to": "b.txt", "from": "a.txt",
        "url": "https://example.org/", "name": "n", "path": long_path,
    });
    let rows = argument_rows(Some(&args), None);
    let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, ["path", "from", "to", "url", "name", "id", "content"]);
    assert_eq!(rows[0].value, Value::String(long_path.clone()).to_string());
    assert!(rows[..6].iter().all(|r| r.identifying));
    assert!(rows[6].value.ends_with("… (420 more characters)"));
    // The notification too: the long path whole, on the first line.
    let body = notification_body(Some(&args), None, Some("cli"));
    assert!(
        body.starts_with(&format!("path: \"{long_path}\"\nfrom: \"a.txt\"\n")),
        "{body}"
    );
    assert!(body.ends_with("\nfrom cli"), "{body}");
}

#[test]
fn a_look_alike_key_is_shown_quoted_and_marked_after_the_real_one() {
    let args = json!({"n": "", "path\u{200b}": "scratch/notes.txt", "path": "keep.txt"});
    let rows = argument_rows(Some(&args), None);
    assert_eq!(rows[0].key, "path");
    assert_eq!(rows[0].value, "\"keep.txt\"");
    assert_eq!(rows[2].key, "\"path\\u{200b}\"");
    assert!(!rows[2].identifying);
}

#[test]
fn what_the_connector_reads_is_shown_with_what_was_sent_beside_it() {
    let args = json!({"path": "scratch/../keep.txt", "content": "x"});
    let canonical = json!({"path": "keep.txt", "content": "x"});
    let rows = argument_rows(Some(&args), Some(&canonical));
    assert_eq!(rows[0].value, "\"keep.txt\"");
    assert_eq!(rows[0].sent.as_deref(), Some("\"scratch/../keep.txt\""));
    assert_eq!(rows[1].sent, None);
    assert_eq!(
        arguments_text(Some(&args), Some(&canonical), 0),
        "path: \"keep.txt\" (sent as \"scratch/../keep.txt\")\ncontent: \"x\""
    );
    assert!(
        notification_body(Some(&args), Some(&canonical), None)
            .starts_with("path: \"keep.txt\" (sent as \"scratch/../keep.txt\")\n")
    );
}

#[test]
fn a_notification_folds_the_rest_but_lists_every_key() {
    let mut args = serde_json::Map::new();
    args.insert("path".into(), json!("keep.txt"));
    for i in 0..40 {
        args.insert(format!("k{i}"), json!("v".repeat(200)));
    }
    let body = notification_body(Some(&Value::Object(args)), None, None);
    for i in 0..40 {
        assert!(body.contains(&format!("\nk{i}: ")), "k{i} in {body}");
    }
    assert!(
        body.contains("k1: \"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\"… (160 more characters)")
    );
    assert!(body.contains("k39: … (202 characters)"), "{body}");
    assert!(body.chars().count() < 2000, "{}", body.chars().count());
}

#[test]
fn markup_cannot_open_a_tag_or_a_comment() {
    assert_eq!(
        markup_escaped("<!-- a & b -->path: <b>x</b>"),
        "&lt;!-- a &amp; b --&gt;path: &lt;b&gt;x&lt;/b&gt;"
    );
    assert_eq!(markup_escaped("plain"), "plain");
}

/// Characters an agent might use to hide or disguise text, and characters markup gives meaning to.
fn tricky_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::char::range('a', 'z'),
        1 => proptest::sample::select(vec![
            '\u{200b}', '\u{2060}', '\u{feff}', '\u{ad}', '\u{e0041}', '\u{fe0f}', '\u{202e}',
            '\u{2066}', '\u{61c}', '\u{0}', '\u{1b}', '\r', '\n', '\t', '\u{7f}', '\u{85}',
            '\u{2028}', '<', '>', '&', '"', '\\', ' ', ':', 'é', '中', '/', '.', '\u{1d173}',
        ]),
    ]
}

fn tricky_text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(tricky_char(), 0..max).prop_map(|c| c.into_iter().collect())
}

fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        tricky_text(300).prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((tricky_text(12), inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// Arguments as agents send them: some identifying keys (strings, of any length), other keys of any text.
fn any_arguments() -> impl Strategy<Value = serde_json::Map<String, Value>> {
    let identifying = proptest::collection::vec(
        (
            proptest::sample::select(IDENTIFYING_KEYS.to_vec()),
            tricky_text(400),
        ),
        0..4,
    );
    let others = proptest::collection::vec(
        (
            prop_oneof![tricky_text(20), Just("path\u{200b}".to_owned())],
            any_value(),
        ),
        0..6,
    );
    (identifying, others).prop_map(|(identifying, others)| {
        let mut map = serde_json::Map::new();
        // Mixed in: the identifying keys must come first whatever order the agent sent them in.
        for (key, value) in others {
            if !IDENTIFYING_KEYS.contains(&key.as_str()) {
                map.insert(key, value);
            }
        }
        for (key, value) in identifying {
            map.insert(key.to_owned(), Value::String(value));
        }
        map
    })
}

fn raw_disguise(text: &str) -> Option<char> {
    text.chars().find(|&c| c != '\n' && disguises(c))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Property (c): every display — the CLI's text, the card's rows, the notification with and without
    /// markup — has every top-level key, the identifying values whole, and no raw character that hides.
    #[test]
    fn every_display_shows_every_key_and_the_whole_target_and_hides_nothing(map in any_arguments()) {
        let args = Value::Object(map.clone());
        let text = arguments_text(Some(&args), None, 2);
        let rows = argument_rows(Some(&args), None);
        let plain = notification_body(Some(&args), None, Some("agent\u{202e}"));
        let markup = markup_escaped(&plain).into_owned();
        prop_assert_eq!(rows.len(), map.len());
        let present: Vec<&str> = IDENTIFYING_KEYS.iter().copied().filter(|k| map.contains_key(*k)).collect();
        let first: Vec<&str> = rows.iter().take(present.len()).map(|r| r.key.as_str()).collect();
        prop_assert_eq!(first, present.clone());
        for (name, value) in &map {
            let shown_key = visible(&key(name)).into_owned();
            prop_assert!(rows.iter().any(|r| r.key == shown_key), "row for {:?}", name);
            prop_assert!(text.contains(&format!("{shown_key}:")), "{:?} in {}", name, text);
            prop_assert!(plain.contains(&format!("{shown_key}: ")), "{:?} in {}", name, plain);
            let markup_key = markup_escaped(&shown_key).into_owned();
            prop_assert!(markup.contains(&format!("{markup_key}: ")), "{:?} in {}", name, markup);
            if IDENTIFYING_KEYS.contains(&name.as_str()) {
                let whole = visible(&value.to_string()).into_owned();
                let line = format!("{shown_key}: {whole}");
                prop_assert!(rows.iter().any(|r| r.key == shown_key && r.value == whole));
                prop_assert!(text.contains(&line), "{} in {}", line, text);
                prop_assert!(plain.lines().any(|l| l == line), "{} in {}", line, plain);
                let escaped_line = markup_escaped(&line).into_owned();
                prop_assert!(markup.lines().any(|l| l == escaped_line));
            }
        }
        if let Some(first) = present.first() {
            let line = format!("{first}: {}", visible(&map[*first].to_string()));
            prop_assert!(plain.starts_with(&line), "{} first in {}", line, plain);
        }
        for shown in [&text, &plain, &markup] {
            prop_assert_eq!(raw_disguise(shown), None, "in {}", shown);
        }
        for row in &rows {
            prop_assert_eq!(raw_disguise(&row.key), None);
            prop_assert_eq!(raw_disguise(&row.value), None);
            prop_assert!(row.nested || !row.value.contains('\n'));
        }
        prop_assert!(!markup.contains('<') && !markup.contains('>'));
    }
}
