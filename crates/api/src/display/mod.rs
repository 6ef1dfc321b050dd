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
mod tests;
