//! Where a run came from, as rules match it and people read it: the sources a host sets itself, and an MCP
//! client's self-declared name made into a label that can never pass for one of them (docs/design.md,
//! "Sources are labels, not identities").

/// The sources a host sets itself, never an MCP client's (compared without regard to case).
pub const RESERVED_SOURCES: &[&str] = &[
    "cli",
    "console",
    "playground",
    "notification",
    "rule",
    "expiry",
    "api",
    "mcp",
    "client",
    "device",
];

/// The longest client name kept, in characters.
const MAX_CLIENT_NAME: usize = 100;

/// What an MCP client's name (from `initialize`, chosen by the client) becomes as a run's source: control,
/// bidirectional and invisible characters written as `\u{…}` escapes, so a newline cannot forge a row of a
/// listing; cut to [`MAX_CLIENT_NAME`] characters; and a name equal to a reserved source (`cli`,
/// `Playground`…) or empty marked as a client's (`cli (MCP client)`), so a rule written for the host's own
/// front ends never matches it. The result is a fixed point: applying it again changes nothing.
pub fn client_source(name: &str) -> String {
    let mut label = String::new();
    for c in name.trim().chars().take(MAX_CLIENT_NAME) {
        if hides_itself(c) {
            label.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            label.push(c);
        }
    }
    let label = label.trim().to_owned();
    if label.is_empty() {
        return "MCP client".to_owned();
    }
    if RESERVED_SOURCES
        .iter()
        .any(|reserved| reserved.eq_ignore_ascii_case(&label))
    {
        return format!("{label} (MCP client)");
    }
    label
}

/// Whether a character changes how the text around it reads without showing itself: controls (newline
/// included: a source is one line), bidirectional controls, and every Unicode default-ignorable code point
/// (zero-width characters, soft hyphen, tag characters, variation selectors…).
pub fn hides_itself(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00ad}' | '\u{034f}' | '\u{061c}' | '\u{115f}'..='\u{1160}' | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}' | '\u{ffa0}'
            | '\u{fff0}'..='\u{fff8}' | '\u{1bca0}'..='\u{1bca3}' | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_can_never_name_itself_as_the_host() {
        assert_eq!(client_source("cli"), "cli (MCP client)");
        assert_eq!(client_source("Playground"), "Playground (MCP client)");
        assert_eq!(client_source("  "), "MCP client");
        assert_eq!(client_source("Claude Code"), "Claude Code");
    }

    #[test]
    fn a_newline_in_a_client_name_cannot_forge_a_row() {
        let label = client_source("agent\nabc  completed  cli");
        assert!(!label.contains('\n'));
        assert_eq!(label, "agent\\u{a}abc  completed  cli");
        assert_eq!(client_source(&label), label);
    }
}
