//! Previews as the front ends show them: the connector's preview of a waiting call, with its text as a line
//! diff whose changed words are marked (docs/design.md, "Previews").

use codemode::{PendingAction, Preview};
use serde::Serialize;
use similar::{ChangeTag, TextDiff};

/// A waiting call with what it would change (`codemode pending --preview`): the call's fields and `preview`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingPreview {
    #[serde(flatten)]
    pub action: PendingAction,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<Preview>,
    /// The same preview with its diff, for a terminal.
    #[serde(skip)]
    pub view: Option<PreviewView>,
}

/// Lines of unchanged context around each change.
const CONTEXT: usize = 3;

/// A preview, and for text the diff a person reads.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct PreviewView {
    pub preview: Preview,
    /// The text's change: a write's before → after; a delete's content, or what a move overwrites, as lines
    /// that go. Empty when there is no text to compare.
    pub hunks: Vec<Hunk>,
}

/// A run of changed lines with their context.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    pub lines: Vec<DiffLine>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum LineTag {
    Equal,
    Delete,
    Insert,
}

/// One line: its numbers before and after (1-based), and its text in parts, `changed` marking the words
/// that differ from the line it replaces.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    pub tag: LineTag,
    pub old: Option<usize>,
    pub new: Option<usize>,
    pub parts: Vec<LinePart>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct LinePart {
    pub text: String,
    pub changed: bool,
}

impl PreviewView {
    pub fn new(preview: Preview) -> Self {
        let hunks = match texts(&preview) {
            Some((before, after)) => hunks(before, after),
            None => Vec::new(),
        };
        PreviewView { preview, hunks }
    }

    /// The change as a unified diff (`---`/`+++` headers and `@@` hunks), for a terminal.
    pub fn unified(&self) -> Option<String> {
        let (before, after) = texts(&self.preview)?;
        let (from, to) = names(&self.preview);
        let diff = TextDiff::from_lines(before, after);
        Some(
            diff.unified_diff()
                .context_radius(CONTEXT)
                .header(&from, &to)
                .to_string(),
        )
    }
}

/// The two texts a preview compares, when it has text.
fn texts(preview: &Preview) -> Option<(&str, &str)> {
    match preview {
        Preview::Diff { before, after, .. } => Some((before.as_deref().unwrap_or(""), after)),
        Preview::Delete {
            before: Some(before),
            ..
        } => Some((before, "")),
        Preview::Move {
            overwrites: Some(replaced),
            ..
        } => Some((replaced, "")),
        _ => None,
    }
}

fn names(preview: &Preview) -> (String, String) {
    match preview {
        Preview::Diff { path, before, .. } => (
            if before.is_some() {
                format!("a/{path}")
            } else {
                "/dev/null".to_owned()
            },
            format!("b/{path}"),
        ),
        Preview::Delete { path, .. } => (format!("a/{path}"), "/dev/null".to_owned()),
        Preview::Move { to, .. } => (format!("a/{to} (overwritten)"), format!("b/{to}")),
        _ => (String::new(), String::new()),
    }
}

fn hunks(before: &str, after: &str) -> Vec<Hunk> {
    let diff = TextDiff::from_lines(before, after);
    diff.grouped_ops(CONTEXT)
        .iter()
        .map(|group| Hunk {
            lines: group
                .iter()
                .flat_map(|op| diff.iter_inline_changes(op))
                .map(|change| DiffLine {
                    tag: match change.tag() {
                        ChangeTag::Equal => LineTag::Equal,
                        ChangeTag::Delete => LineTag::Delete,
                        ChangeTag::Insert => LineTag::Insert,
                    },
                    old: change.old_index().map(|i| i + 1),
                    new: change.new_index().map(|i| i + 1),
                    parts: change
                        .iter_strings_lossy()
                        .map(|(changed, text)| LinePart {
                            text: text.trim_end_matches(['\n', '\r']).to_owned(),
                            changed,
                        })
                        .filter(|part| !part.text.is_empty())
                        .collect(),
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_is_a_delete_and_an_insert_with_the_changed_word_marked() {
        let view = PreviewView::new(Preview::Diff {
            path: "notes/a.md".into(),
            before: Some("one\ntwo\nthree\n".into()),
            after: "one\n2\nthree\n".into(),
            cut: false,
        });
        assert_eq!(view.hunks.len(), 1);
        let lines = &view.hunks[0].lines;
        let changed: Vec<_> = lines.iter().filter(|l| l.tag != LineTag::Equal).collect();
        assert_eq!(changed.len(), 2);
        assert_eq!(
            (changed[0].tag, changed[0].old, changed[0].new),
            (LineTag::Delete, Some(2), None)
        );
        assert_eq!(
            (changed[1].tag, changed[1].old, changed[1].new),
            (LineTag::Insert, None, Some(2))
        );
        assert!(changed[1].parts.iter().any(|p| p.changed && p.text == "2"));
        let unified = view.unified().expect("text");
        assert!(
            unified.contains("--- a/notes/a.md")
                && unified.contains("-two")
                && unified.contains("+2")
        );
    }

    #[test]
    fn a_new_file_is_all_insertions_and_a_delete_all_deletions() {
        let new = PreviewView::new(Preview::Diff {
            path: "n.txt".into(),
            before: None,
            after: "a\nb\n".into(),
            cut: false,
        });
        assert!(new.hunks[0].lines.iter().all(|l| l.tag == LineTag::Insert));
        assert!(new.unified().expect("text").contains("--- /dev/null"));
        let gone = PreviewView::new(Preview::Delete {
            path: "n.txt".into(),
            before: Some("a\nb\n".into()),
            cut: false,
        });
        assert!(gone.hunks[0].lines.iter().all(|l| l.tag == LineTag::Delete));
    }
}
