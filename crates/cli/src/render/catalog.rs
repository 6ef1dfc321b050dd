//! What a program can call and what governs it: snippets, rules, search results and connectors.

use super::{table, time, visible};
use codemode::discovery::SearchOutput;
use codemode::{Replay, Snippet};
use codemode_api::ConnectorInfo;

pub fn snippets(snippets: &[Snippet]) -> String {
    if snippets.is_empty() {
        return "no snippets".to_owned();
    }
    let rows: Vec<Vec<String>> = snippets
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                s.connectors.clone().unwrap_or_default().join(", "),
                s.description.clone(),
            ]
        })
        .collect();
    table(&["NAME", "CONNECTORS", "DESCRIPTION"], &rows)
}

/// The rules in force, in precedence order, with where each lives and how often it decided.
pub fn rules(rules: &[codemode::RuleListing]) -> String {
    if rules.is_empty() {
        return "no rules: each connector's approval list decides".to_owned();
    }
    let rows: Vec<Vec<String>> = rules
        .iter()
        .map(|r| {
            let rule = &r.rule;
            let when = if rule.when.is_empty() {
                "-".to_owned()
            } else {
                serde_json::Value::Object(rule.when.clone()).to_string()
            };
            let origin = match r.origin {
                codemode::RuleOrigin::Database => {
                    format!(
                        "{} ({})",
                        r.created_by.as_deref().unwrap_or("?"),
                        "database"
                    )
                }
                codemode::RuleOrigin::File => "connectors.json".to_owned(),
            };
            vec![
                rule.id.clone(),
                rule.effect.as_str().to_owned(),
                rule.call.clone(),
                when,
                rule.source.clone().unwrap_or_else(|| "-".to_owned()),
                rule.until.map_or("-".to_owned(), time),
                origin,
                r.hits.to_string(),
                r.last_hit.map_or("-".to_owned(), time),
            ]
        })
        .collect();
    table(
        &[
            "ID", "EFFECT", "CALL", "WHEN", "SOURCE", "UNTIL", "ORIGIN", "HITS", "LAST HIT",
        ],
        &rows,
    )
}

pub fn search(found: &SearchOutput) -> String {
    if found.results.is_empty() {
        return "nothing found".to_owned();
    }
    let rows: Vec<Vec<String>> = found
        .results
        .iter()
        .map(|r| {
            vec![
                r.path.clone(),
                r.kind.clone(),
                if r.requires_approval {
                    "approval".to_owned()
                } else {
                    String::new()
                },
                r.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let mut text = table(&["PATH", "KIND", "GATE", "DESCRIPTION"], &rows);
    if found.truncated {
        text.push_str(&format!(
            "\n… {} results in all; refine the query",
            found.total
        ));
    }
    text
}

/// The connectors as `codemode_api` lists them; a broken `connectors.json` is said first, since it is why
/// connectors are missing.
pub fn connectors(listing: &[ConnectorInfo], config_error: Option<&str>) -> String {
    let mut blocks = Vec::new();
    if let Some(error) = config_error {
        blocks.push(format!("connectors.json is invalid: {error}"));
    }
    if listing.is_empty() {
        blocks.push("no connectors: add them to connectors.json".to_owned());
    }
    for c in listing {
        let mut block = format!("{} ({})", c.name, c.kind);
        if let Some(endpoint) = c.endpoint.as_deref().filter(|e| !e.is_empty()) {
            block.push_str(&format!("\n  at {endpoint}"));
        }
        if c.signed_in == Some(true) {
            block.push_str(&format!(
                "\n  signed in (codemode logout {} to forget it)",
                c.name
            ));
        }
        if let Some(error) = &c.error {
            block.push_str(&format!("\n  unavailable: {error}"));
        }
        for m in &c.methods {
            let mut flags = Vec::new();
            if m.requires_approval {
                flags.push("approval");
            }
            if m.replay == Replay::Reexecute {
                flags.push("reexecute");
            }
            if m.revertible {
                flags.push("revert");
            }
            if m.hidden {
                flags.push("hidden");
            }
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!(" [{}]", flags.join(", "))
            };
            let description = m
                .description
                .as_deref()
                .and_then(|d| d.lines().next())
                .map(|d| format!(" — {d}"))
                .unwrap_or_default();
            block.push_str(&format!("\n  {}{flags}{description}", m.name));
            // Gated by what the server declares: say what it declared, so a change between its versions shows.
            if let Some(gate) = m
                .gate
                .as_deref()
                .filter(|g| g.starts_with("approval \"w") || g.starts_with("approval \"d"))
            {
                let verdict = if m.requires_approval { "asks" } else { "runs" };
                block.push_str(&format!("\n      {verdict}: {}", visible(gate)));
                if let Some(was) = &m.gate_changed {
                    let then = if was.asked { "asked" } else { "ran" };
                    block.push_str(&format!(
                        "\n      gate moved {} UTC: the server declares this tool differently than before, when it {then} ({})",
                        time(was.at),
                        visible(&was.gate)
                    ));
                }
            }
        }
        blocks.push(block);
    }
    blocks.join("\n\n")
}
