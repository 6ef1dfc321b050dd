//! What a server prints on stderr, its last lines kept to explain a failure, and every printed form of a
//! secret removed from it and from every other message.

use super::lock;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// How many lines of a server's stderr are kept to explain why it failed.
const STDERR_LINES: usize = 20;
/// Longer stderr lines are cut (after secrets are removed: a cut through a secret would keep its prefix).
const STDERR_LINE_CHARS: usize = 400;

/// Keeps the last lines of a server's stderr, each redacted and then cut.
pub(super) async fn keep_tail(
    stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
    secrets: Arc<[String]>,
) {
    use tokio::io::AsyncBufReadExt;
    let mut reader = tokio::io::BufReader::new(stderr);
    let mut bytes = Vec::new();
    // Bytes, not `lines()`: one line that is not UTF-8 would end the reading, and a server writing to the
    // closed pipe after that would fail.
    while reader
        .read_until(b'\n', &mut bytes)
        .await
        .is_ok_and(|n| n > 0)
    {
        let text = String::from_utf8_lossy(&bytes);
        let line = redact(&secrets, text.trim_end_matches(['\n', '\r']).to_owned());
        bytes.clear();
        let line: String = line.chars().take(STDERR_LINE_CHARS).collect();
        let mut tail = lock(&tail);
        if tail.len() == STDERR_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

/// Every way a server may print each secret: as it is, inside a JSON string (`"` and `\` escaped), the same
/// with non-ASCII as `\uXXXX` (Python's `json.dumps`) in either case of hex, and JSON-escaped twice (a JSON
/// document logged as a string). Longest first, so a form that contains another is removed whole.
pub(super) fn printed_forms(secrets: impl Iterator<Item = String>) -> Arc<[String]> {
    let json = |text: &str| {
        let quoted = Value::from(text).to_string();
        quoted
            .strip_prefix('"')
            .and_then(|q| q.strip_suffix('"'))
            .map_or_else(|| quoted.clone(), str::to_owned)
    };
    let ascii = |text: &str, upper: bool| {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            if c.is_ascii() {
                out.push(c);
                continue;
            }
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&if upper {
                    format!("\\u{unit:04X}")
                } else {
                    format!("\\u{unit:04x}")
                });
            }
        }
        out
    };
    let mut all: Vec<String> = Vec::new();
    for secret in secrets {
        let mut forms = vec![secret];
        // Once for a JSON string, once more for a JSON document logged as a string.
        for _ in 0..2 {
            let escaped: Vec<String> = forms
                .iter()
                .flat_map(|form| {
                    let escaped = json(form);
                    [ascii(&escaped, false), ascii(&escaped, true), escaped]
                })
                .collect();
            forms.extend(escaped);
        }
        all.extend(forms);
    }
    all.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    all.dedup();
    all.into()
}

/// `text` without any printed form of a secret.
pub(super) fn redact(secrets: &[String], text: String) -> String {
    secrets.iter().fold(text, |text, secret| {
        text.replace(secret.as_str(), "[redacted]")
    })
}

pub(super) fn with_tail(message: String, tail: &Mutex<VecDeque<String>>) -> String {
    let tail = lock(tail);
    let lines: Vec<&str> = tail
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        message
    } else {
        format!("{message}; its stderr ended with: {}", lines.join(" | "))
    }
}
