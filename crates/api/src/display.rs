//! What a person sees of a call, rendered once for every surface (docs/api.md, "What a person sees"): the CLI's
//! `pending` and `show`, the app's approval card and the desktop notification all show these rows. Every key
//! is shown; the keys that name the target (`path`, `from`, `to`, `url`, `name`, `id`) come first and their
//! values are never cut; other long values are folded to their start and a count of what is left out; every
//! character that could hide or reorder text is written as an escape (`\u{200b}`).

use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;

/// The arguments that name what a call acts on, in the order they are shown: before every other key, and whole.
pub const IDENTIFYING_KEYS: [&str; 6] = ["path", "from", "to", "url", "name", "id"];

/// Strings longer than `FOLD_OVER` characters show their first `FOLD_KEEP` and how many more there are.
const FOLD_OVER: usize = 120;
const FOLD_KEEP: usize = 80;

/// A notification is read at a glance: the values that do not name the target are folded sooner there…
const NOTE_FOLD_OVER: usize = 60;
const NOTE_FOLD_KEEP: usize = 40;
/// …and once the body's other lines have used this many characters, the keys after them are listed with
/// the size of their value only. The identifying lines are never counted nor cut.
const NOTE_BUDGET: usize = 600;
/// A key longer than this is folded in a notification (nowhere else): a notification server is no place
/// for a megabyte of key, and the window shows it whole.
const NOTE_KEY_OVER: usize = 200;

/// Unicode's default-ignorable code points (DerivedCoreProperties.txt, `Default_Ignorable_Code_Point`):
/// characters a renderer shows as nothing at all — zero-width spaces and joiners, the soft hyphen, the
/// bidirectional controls, variation selectors, tag characters, Hangul fillers. Any of them can make two
/// different values look alike.
pub fn is_default_ignorable(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{034f}' | '\u{061c}' | '\u{115f}'..='\u{1160}' | '\u{17b4}'..='\u{17b5}'
        | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}' | '\u{ffa0}'
        | '\u{fff0}'..='\u{fff8}' | '\u{1bca0}'..='\u{1bca3}' | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0000}'..='\u{e0fff}')
}

/// Whether a character would change how the text around it reads without showing itself: C0/C1 controls (a
/// carriage return or an escape sequence can overwrite what a terminal shows), the line and paragraph
/// separators (a line break where none is expected), and every default-ignorable code point — among them the
/// bidirectional controls, which reorder text so that `report\u{202e}fdp.exe` displays as `reportexe.pdf`.
/// Newline and tab only lay text out, so they stay.
pub fn disguises(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{2028}' | '\u{2029}')
        || is_default_ignorable(c)
}

/// Text as a person may be shown it: every character that could disguise the text is written as an escape
/// (`\u{202e}`). Escapes are plain ASCII, so escaping twice changes nothing.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(disguises) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if disguises(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text for a notification server that interprets markup (`body-markup`): `&`, `<` and `>` as entities, so
/// no part of a value can open a tag or a comment and hide what follows it.
pub fn markup_escaped(text: &str) -> Cow<'_, str> {
    if !text.contains(['&', '<', '>']) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// One top-level argument of a call, as every surface shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ArgumentRow {
    /// The key: bare when it is a plain word, JSON-quoted otherwise (so a key holding `: ` cannot pass for a
    /// value); marked. Empty when the arguments are a single value rather than an object.
    pub key: String,
    /// The value: a scalar as JSON, a long string folded (unless `identifying`); an object or array opened out,
    /// one entry a line, two spaces a level deeper; marked.
    pub value: String,
    /// `value` is an opened-out object or array (several lines) rather than one scalar.
    pub nested: bool,
    /// One of [`IDENTIFYING_KEYS`]: shown first and never folded.
    pub identifying: bool,
    /// What the program sent for this key, where the connector reads it differently (`scratch/../keep.txt`
    /// for `keep.txt`); `value` is what the connector will act on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<String>,
}

/// The rows of a call's arguments: the identifying keys first (in [`IDENTIFYING_KEYS`] order), then the rest in
/// their order. `canonical` is the connector's reading of `args` where it differs; its values are shown, with
/// what was sent beside them. Arguments that are not an object are one row without a key (an array's items
/// are rows `[0]`, `[1]`, …).
pub fn argument_rows(args: Option<&Value>, canonical: Option<&Value>) -> Vec<ArgumentRow> {
    let Some(shown) = canonical.or(args) else {
        return Vec::new();
    };
    // What was sent is shown as whole as what will be read: an identifying value is never folded.
    let sent_for = |name: &str, identifying: bool| -> Option<String> {
        let sent = args?.get(name)?;
        (canonical?.get(name)? != sent).then(|| opened(sent, !identifying).0)
    };
    match shown {
        Value::Object(map) => {
            let mut rows: Vec<ArgumentRow> = IDENTIFYING_KEYS
                .iter()
                .filter_map(|name| map.get(*name).map(|value| (*name, value)))
                .map(|(name, value)| row(name, value, true, sent_for(name, true)))
                .collect();
            rows.extend(
                map.iter()
                    .filter(|(name, _)| !IDENTIFYING_KEYS.contains(&name.as_str()))
                    .map(|(name, value)| row(name, value, false, sent_for(name, false))),
            );
            // A key the program sent that the connector's reading left out is still what was asked for.
            if let (Some(Value::Object(sent)), Some(_)) = (args, canonical) {
                rows.extend(
                    sent.iter()
                        .filter(|(name, _)| !map.contains_key(*name))
                        .map(|(name, value)| row(name, value, false, None)),
                );
            }
            rows
        }
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .enumerate()
            .map(|(i, value)| {
                let (value, nested) = opened(value, true);
                ArgumentRow {
                    key: format!("[{i}]"),
                    value,
                    nested,
                    identifying: false,
                    sent: None,
                }
            })
            .collect(),
        scalar => vec![ArgumentRow {
            key: String::new(),
            value: visible(&leaf(scalar, true)).into_owned(),
            nested: false,
            identifying: false,
            sent: None,
        }],
    }
}

fn row(name: &str, value: &Value, identifying: bool, sent: Option<String>) -> ArgumentRow {
    let (text, nested) = opened(value, !identifying);
    ArgumentRow {
        key: visible(&key(name)).into_owned(),
        value: text,
        nested,
        identifying,
        sent,
    }
}

/// A value as a row shows it (marked), and whether it is opened out over several lines.
fn opened(value: &Value, fold: bool) -> (String, bool) {
    let mut lines = Vec::new();
    let nested = match value {
        Value::Object(map) => !map.is_empty(),
        Value::Array(items) => !items.is_empty(),
        _ => false,
    };
    if nested {
        tree(value, 0, fold, &mut lines);
    } else {
        lines.push(leaf(value, fold));
    }
    (visible(&lines.join("\n")).into_owned(), nested)
}

/// A call's arguments as text (the CLI's `pending`, `show`, a paused outcome): every row on its own line,
/// opened-out values beneath their key, everything `indent` spaces in.
pub fn arguments_text(args: Option<&Value>, canonical: Option<&Value>, indent: usize) -> String {
    let rows = argument_rows(args, canonical);
    if rows.is_empty() {
        return format!("{:indent$}(no arguments)", "");
    }
    let mut lines = Vec::new();
    for row in &rows {
        let sent = row
            .sent
            .as_deref()
            .map(|sent| format!(" (sent as {})", one_line(sent)))
            .unwrap_or_default();
        match (row.key.is_empty(), row.nested) {
            (true, _) => lines.push(format!("{:indent$}{}", "", row.value)),
            (false, false) => lines.push(format!("{:indent$}{}: {}{sent}", "", row.key, row.value)),
            (false, true) => {
                lines.push(format!("{:indent$}{}:{sent}", "", row.key));
                let deeper = indent + 2;
                lines.extend(
                    row.value
                        .lines()
                        .map(|line| format!("{:deeper$}{line}", "")),
                );
            }
        }
    }
    lines.join("\n")
}

/// A notification's body, as plain text (escape it with [`markup_escaped`] for a server that interprets
/// markup): one line a key, the identifying ones first and whole; the other values folded sooner than in the
/// window, and once [`NOTE_BUDGET`] characters are used, only their size; then where the run came from.
pub fn notification_body(
    args: Option<&Value>,
    canonical: Option<&Value>,
    source: Option<&str>,
) -> String {
    let Some(shown) = canonical.or(args) else {
        return source
            .map(|source| format!("no arguments\nfrom {}", visible(source)))
            .unwrap_or_else(|| "no arguments".to_owned());
    };
    let mut lines = Vec::new();
    let mut spent = 0;
    let entries: Vec<(Option<&str>, &Value, bool)> = match shown {
        Value::Object(map) => {
            let mut entries: Vec<(Option<&str>, &Value, bool)> = IDENTIFYING_KEYS
                .iter()
                .filter_map(|name| map.get(*name).map(|value| (Some(*name), value, true)))
                .collect();
            entries.extend(
                map.iter()
                    .filter(|(name, _)| !IDENTIFYING_KEYS.contains(&name.as_str()))
                    .map(|(name, value)| (Some(name.as_str()), value, false)),
            );
            if let (Some(Value::Object(sent)), Some(_)) = (args, canonical) {
                entries.extend(
                    sent.iter()
                        .filter(|(name, _)| !map.contains_key(*name))
                        .map(|(name, value)| (Some(name.as_str()), value, false)),
                );
            }
            entries
        }
        other => vec![(None, other, false)],
    };
    for (name, value, identifying) in entries {
        let label = name.map(|name| {
            let label = key(name);
            match label.chars().count() {
                n if n > NOTE_KEY_OVER => folded_text(&label, NOTE_KEY_OVER, NOTE_KEY_OVER),
                _ => label,
            }
        });
        let text = if identifying {
            compact(value, usize::MAX, usize::MAX)
        } else if spent >= NOTE_BUDGET {
            format!(
                "… ({} characters)",
                compact(value, usize::MAX, usize::MAX).chars().count()
            )
        } else {
            compact(value, NOTE_FOLD_OVER, NOTE_FOLD_KEEP)
        };
        let sent = name
            .filter(|_| canonical.is_some())
            .and_then(|name| Some((args?.get(name)?, canonical?.get(name)?)))
            .filter(|(sent, read)| sent != read)
            .map(|(sent, _)| {
                let (over, keep) = if identifying {
                    (usize::MAX, usize::MAX)
                } else {
                    (NOTE_FOLD_OVER, NOTE_FOLD_KEEP)
                };
                format!(" (sent as {})", compact(sent, over, keep))
            })
            .unwrap_or_default();
        let line = match label {
            Some(label) => format!("{label}: {text}{sent}"),
            None => text,
        };
        if !identifying {
            spent += line.chars().count();
        }
        lines.push(visible(&line).into_owned());
    }
    if let Some(source) = source {
        lines.push(format!("from {}", visible(source)));
    }
    lines.join("\n")
}

/// A value on one line as JSON; a string longer than `over` characters (or a container whose JSON is) keeps
/// its first `keep` and says how many more there are.
fn compact(value: &Value, over: usize, keep: usize) -> String {
    match value {
        Value::String(text) if text.chars().count() > over => {
            let total = text.chars().count();
            let kept: String = text.chars().take(keep).collect();
            format!("{}… ({} more characters)", quoted(&kept), total - keep)
        }
        Value::Object(_) | Value::Array(_) => {
            let text = value.to_string();
            if text.chars().count() > over {
                folded_text(&text, over, keep)
            } else {
                text
            }
        }
        other => other.to_string(),
    }
}

fn folded_text(text: &str, over: usize, keep: usize) -> String {
    let total = text.chars().count();
    if total <= over {
        return text.to_owned();
    }
    let kept: String = text.chars().take(keep).collect();
    format!("{kept}… ({} more characters)", total - keep)
}

/// The rows' text folded onto one line, for a note beside a value.
fn one_line(text: &str) -> String {
    text.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

fn quoted(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// A scalar (or empty container) as JSON; with `fold`, a long string folded to its start and a count of
/// what is left out, so one long value cannot push the values after it out of sight.
fn leaf(value: &Value, fold: bool) -> String {
    match value {
        Value::String(text) if fold => {
            let total = text.chars().count();
            if total <= FOLD_OVER {
                return quoted(text);
            }
            let kept: String = text.chars().take(FOLD_KEEP).collect();
            format!("{}… ({} more characters)", quoted(&kept), total - FOLD_KEEP)
        }
        other => other.to_string(),
    }
}

/// An object key as written in the argument tree: bare when it is a plain word, JSON-quoted otherwise so a
/// key holding `: ` or spaces cannot pass for a value.
fn key(name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '-'));
    if plain { name.to_owned() } else { quoted(name) }
}

/// Nested objects and arrays opened out, one entry a line, in their own order (only the top level puts the
/// identifying keys first).
fn tree(value: &Value, indent: usize, fold: bool, lines: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match value {
        Value::Object(map) if !map.is_empty() => map.iter().map(|(k, v)| (key(k), v)).collect(),
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("[{i}]"), v))
            .collect(),
        scalar => {
            lines.push(format!("{:indent$}{}", "", leaf(scalar, fold)));
            return;
        }
    };
    for (label, child) in children {
        let opens = match child {
            Value::Object(map) => !map.is_empty(),
            Value::Array(items) => !items.is_empty(),
            _ => false,
        };
        if opens {
            lines.push(format!("{:indent$}{label}:", ""));
            tree(child, indent + 2, fold, lines);
        } else {
            lines.push(format!("{:indent$}{label}: {}", "", leaf(child, fold)));
        }
    }
}

#[cfg(test)]
mod tests {
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
            folded.starts_with("text: \"line\\nline\\n")
                && folded.ends_with("… (120 more characters)"),
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
            body.contains(
                "k1: \"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\"… (160 more characters)"
            )
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
}
