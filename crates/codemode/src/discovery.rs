//! How a model finds its way: ranked search over connector methods and snippets, `describe` with generated
//! TypeScript, and the tool description that lists the connectors (docs/semantics.md §1.3, §8.3, §8.4).

use crate::connector::ToolDescriptor;
use crate::model::Snippet;
use crate::names::sanitize_tool_name;
use crate::typegen::{TypedTool, generate_types};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const SEARCH_RESULT_LIMIT: usize = 50;

/// A connector as discovery sees it: visible methods only, in order.
pub struct Catalog<'a> {
    pub name: &'a str,
    pub instructions: Option<&'a str>,
    pub tools: Vec<&'a ToolDescriptor>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    pub path: String,
    pub connector: String,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub requires_approval: bool,
    pub kind: String,
    /// The ranking score (docs/semantics.md §8.3); 0.5.6 returns it with each result.
    #[serde(default)]
    pub score: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOutput {
    pub results: Vec<SearchResult>,
    pub total: usize,
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DescribeOutput {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub requires_approval: bool,
    pub types: String,
    pub kind: String,
}

/// Ranked search (docs/semantics.md §8.3): weights path 12, method 10, connector 8, description 5; ties
/// broken by path compared case-insensitively, then bytewise (docs/design.md).
pub fn search(query: &str, catalogs: &[Catalog<'_>], snippets: &[Snippet]) -> SearchOutput {
    let mut index = SearchIndex::new(catalogs);
    index.add_snippets(snippets);
    index.search(query)
}

/// Searches several indexes as one (the runtime keeps its methods indexed and adds snippets per query).
pub fn search_indexes(indexes: &[&SearchIndex], query: &str) -> SearchOutput {
    let normalized = normalize(query);
    let query_tokens = tokenize_normalized(&normalized);
    let mut ranked: Vec<(i64, &SearchResult)> = if normalized.is_empty() || query_tokens.is_empty()
    {
        Vec::new()
    } else {
        indexes
            .iter()
            .flat_map(|index| index.items.iter())
            .filter_map(|item| score(item, &normalized, &query_tokens).map(|s| (s, &item.result)))
            .collect()
    };
    ranked.sort_by(|(a_score, a), (b_score, b)| {
        b_score
            .cmp(a_score)
            .then_with(|| a.path.to_lowercase().cmp(&b.path.to_lowercase()))
            .then_with(|| a.path.cmp(&b.path))
    });
    let total = ranked.len();
    SearchOutput {
        results: ranked
            .into_iter()
            .take(SEARCH_RESULT_LIMIT)
            .map(|(score, r)| SearchResult { score, ..r.clone() })
            .collect(),
        total,
        truncated: total > SEARCH_RESULT_LIMIT,
    }
}

/// Searchable items with their fields normalised and tokenised once, so a query only scores.
#[derive(Default)]
pub struct SearchIndex {
    items: Vec<PreparedItem>,
}

struct PreparedItem {
    result: SearchResult,
    /// path, connector, method, description — with their weights.
    fields: [(PreparedField, i64); 4],
    path_first_token: Option<String>,
    method_first_token: Option<String>,
}

struct PreparedField {
    raw: String,
    tokens: Vec<String>,
}

impl PreparedField {
    fn new(value: Option<&str>) -> Self {
        let raw = normalize(value.unwrap_or(""));
        let tokens = tokenize_normalized(&raw);
        PreparedField { raw, tokens }
    }
}

impl SearchIndex {
    /// An index of every visible connector method.
    pub fn new(catalogs: &[Catalog<'_>]) -> Self {
        let mut index = SearchIndex::default();
        for catalog in catalogs {
            for tool in &catalog.tools {
                index.push(SearchResult {
                    path: format!("{}.{}", catalog.name, tool.name),
                    connector: catalog.name.to_owned(),
                    method: tool.name.clone(),
                    description: tool.description.clone(),
                    requires_approval: tool.requires_approval,
                    kind: "method".to_owned(),
                    score: 0,
                });
            }
        }
        index
    }

    /// Adds snippets as `kind: "snippet"` items under the connector name `snippet`.
    pub fn add_snippets(&mut self, snippets: &[Snippet]) {
        for snippet in snippets {
            self.push(SearchResult {
                path: snippet.name.clone(),
                connector: "snippet".to_owned(),
                method: snippet.name.clone(),
                description: Some(snippet.description.clone()),
                requires_approval: false,
                kind: "snippet".to_owned(),
                score: 0,
            });
        }
    }

    fn push(&mut self, result: SearchResult) {
        let path = PreparedField::new(Some(&result.path));
        let method = PreparedField::new(Some(&result.method));
        let path_first_token = path.tokens.first().cloned();
        let method_first_token = method.tokens.first().cloned();
        let connector = PreparedField::new(Some(&result.connector));
        let description = PreparedField::new(result.description.as_deref());
        self.items.push(PreparedItem {
            result,
            fields: [(path, 12), (connector, 8), (method, 10), (description, 5)],
            path_first_token,
            method_first_token,
        });
    }

    pub fn search(&self, query: &str) -> SearchOutput {
        search_indexes(&[self], query)
    }
}

/// camelCase boundaries and `_ . / : -` become spaces; lower-cased and trimmed.
fn normalize(text: &str) -> String {
    let mut spaced = String::with_capacity(text.len() + 8);
    let mut previous: Option<char> = None;
    for c in text.chars() {
        if c.is_ascii_uppercase()
            && previous.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
        {
            spaced.push(' ');
        }
        spaced.push(c);
        previous = Some(c);
    }
    let mut collapsed = String::with_capacity(spaced.len());
    let mut in_run = false;
    for c in spaced.chars() {
        if matches!(c, '_' | '.' | '/' | ':' | '-') {
            if !in_run {
                collapsed.push(' ');
            }
            in_run = true;
        } else {
            collapsed.push(c);
            in_run = false;
        }
    }
    collapsed
        .to_lowercase()
        .trim_matches(crate::normalize::is_js_whitespace)
        .to_owned()
}

/// Tokens of already-normalised text: runs of `[a-z0-9]`.
fn tokenize_normalized(normalized: &str) -> Vec<String> {
    normalized
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

fn score_field(
    query: &str,
    query_tokens: &[String],
    field: &PreparedField,
    weight: i64,
    matched: &mut Vec<usize>,
) -> (i64, bool) {
    if field.raw.is_empty() {
        return (0, false);
    }
    let mut score = 0;
    let exact_phrase = !query.is_empty() && field.raw.contains(query);
    if !query.is_empty() {
        if field.raw == query {
            score += weight * 14;
        } else if field.raw.starts_with(query) {
            score += weight * 9;
        } else if exact_phrase {
            score += weight * 6;
        }
    }
    for (i, token) in query_tokens.iter().enumerate() {
        if field.tokens.contains(token) {
            score += weight * 4;
        } else if field
            .tokens
            .iter()
            .any(|c| c.starts_with(token.as_str()) || token.starts_with(c.as_str()))
        {
            score += weight * 2;
        } else if field.raw.contains(token.as_str()) {
            score += weight;
        } else {
            continue;
        }
        if !matched.iter().any(|&m| query_tokens[m] == *token) {
            matched.push(i);
        }
    }
    (score, exact_phrase)
}

fn score(item: &PreparedItem, normalized: &str, query_tokens: &[String]) -> Option<i64> {
    let mut matched = Vec::new();
    let mut total = 0;
    let mut exact_phrase = false;
    for (field, weight) in &item.fields {
        let (score, phrase) = score_field(normalized, query_tokens, field, *weight, &mut matched);
        total += score;
        exact_phrase |= phrase;
    }
    if matched.is_empty() {
        return None;
    }
    // The denominator counts every query token, repeats included, as the reference does.
    let coverage = matched.len() as f64 / query_tokens.len() as f64;
    let minimum = if query_tokens.len() <= 2 { 1.0 } else { 0.6 };
    if coverage < minimum && !exact_phrase {
        return None;
    }
    if coverage == 1.0 {
        total += 25;
    } else {
        total += (coverage * 10.0).round() as i64;
    }
    let first = query_tokens.first();
    if item.path_first_token.as_ref() == first || item.method_first_token.as_ref() == first {
        total += 8;
    }
    if item.fields[0].0.raw == normalized || item.fields[2].0.raw == normalized {
        total += 20;
    }
    Some(total)
}

fn typed<'a>(tools: &[&'a ToolDescriptor], default_schema: &'a Value) -> Vec<TypedTool<'a>> {
    tools
        .iter()
        .map(|tool| TypedTool {
            name: &tool.name,
            description: tool.description.as_deref(),
            input_schema: tool
                .input_schema
                .as_ref()
                .filter(|s| looks_like_schema(s))
                .unwrap_or(default_schema),
            output_schema: tool.output_schema.as_ref(),
        })
        .collect()
}

/// An object with `type`, `properties` or `$ref` (docs/semantics.md §1.5).
fn looks_like_schema(schema: &Value) -> bool {
    schema.is_object()
        && ["type", "properties", "$ref"]
            .iter()
            .any(|k| schema.get(*k).is_some())
}

/// `describe(target)` (docs/semantics.md §8.4): a snippet by exact name, then a connector, then a method.
pub fn describe(target: &str, catalogs: &[Catalog<'_>], snippets: &[Snippet]) -> DescribeOutput {
    if let Some(snippet) = snippets.iter().find(|s| s.name == target) {
        return DescribeOutput {
            path: snippet.name.clone(),
            description: Some(snippet.description.clone()),
            requires_approval: false,
            types: format!("{}\n\n```ts\n{}\n```", snippet.description, snippet.code),
            kind: "snippet".to_owned(),
        };
    }
    let default_schema = json!({"type": "object"});
    let mut pieces = target.splitn(3, '.');
    let first = pieces.next().unwrap_or_default();
    let method_piece = pieces.next();
    let connector = catalogs.iter().find(|c| c.name == first);
    if let (Some(connector), None) = (connector, method_piece) {
        let generated = generate_types(&typed(&connector.tools, &default_schema), "codemode")
            .replacen(
                "declare const codemode",
                &format!("declare const {}", sanitize_tool_name(connector.name)),
                1,
            );
        let types = [connector.instructions.unwrap_or_default(), &generated]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
        return DescribeOutput {
            path: connector.name.to_owned(),
            description: connector.instructions.map(str::to_owned),
            requires_approval: false,
            types,
            kind: "connector".to_owned(),
        };
    }
    let method = method_piece.unwrap_or(target);
    let candidates: Vec<&Catalog<'_>> = match connector {
        Some(connector) => vec![connector],
        None => catalogs.iter().collect(),
    };
    for candidate in candidates {
        if let Some(tool) = candidate.tools.iter().find(|t| t.name == method) {
            let generated = generate_types(&typed(&[tool], &default_schema), "codemode");
            let types = generated
                .find("declare const codemode")
                .map_or(generated.as_str(), |i| &generated[..i])
                .trim_matches(crate::normalize::is_js_whitespace)
                .to_owned();
            return DescribeOutput {
                path: format!("{}.{method}", candidate.name),
                description: tool.description.clone(),
                requires_approval: tool.requires_approval,
                types,
                kind: "method".to_owned(),
            };
        }
    }
    DescribeOutput {
        path: target.to_owned(),
        description: None,
        requires_approval: false,
        types: format!("\"{target}\" not found."),
        kind: "method".to_owned(),
    }
}

/// The model-facing description of the `codemode` tool (docs/semantics.md §1.3: upstream's points in
/// upstream's order, in our words), naming the configured connectors with their optional hints.
pub fn tool_description(connectors: &[(&str, Option<&str>)]) -> String {
    let names: Vec<String> = connectors
        .iter()
        .map(|(name, _)| format!("`{name}`"))
        .collect();
    let globals = if names.is_empty() {
        "`codemode`".to_owned()
    } else {
        format!("{} and `codemode`", names.join(", "))
    };
    let mut text = String::from(
        "Runs a JavaScript program in a sandbox that can call the SDKs of the connectors listed below. Write it as an async arrow function: `async () => { ... }`.\n\n\
## Workflow\n\
1. Find what you need: `const matches = await codemode.search(\"short intent phrase\");`\n\
2. Read its declaration: `const docs = await codemode.describe(matches.results[0].path);`\n\
3. Call it: `await <connector>.<method>(args);`\n\n\
## Rules\n",
    );
    text.push_str(&format!(
        "- The ONLY globals are {globals} plus standard JavaScript. There is no `host`, `fs`, `require`, `process` or any other Node API.\n"
    ));
    text.push_str(
        "- Never guess method names: run a discovery pass with `codemode.search` first.\n\
- `codemode.describe(\"connector.method\")` returns TypeScript declarations of the method's input and output.\n\
- Wrap side effects and nondeterministic work outside connector calls (random numbers, the current time, raw network access) in `codemode.step(name, fn)`: it runs once and its value is replayed when the program resumes.\n\
- Some methods require a person's approval. The run then pauses and resumes on its own once approved: write the code as if the call simply returns.\n\
- Policy rules set by the user may let a call through, make it wait for a person, or refuse it. A refused call throws an error whose message says which rule refused it and why: read it, and do not retry the same call.\n\
- A result with `status: \"paused\"` means the run is waiting for human approval. Tell the user and wait; do NOT send the code again.\n\
- Everything outside connector calls and steps must be deterministic, because the program is replayed from the top when it resumes.\n\
- Do not use `fetch`.\n\n\
## Snippets\n\
- `await codemode.run(\"name\", input)` runs a saved snippet; snippets appear in search results.\n\
- Write programs as `async (input) => { ... }` so that they can take input once saved as snippets.\n\n\
## Available connectors\n",
    );
    for (name, hint) in connectors {
        match hint {
            Some(hint) => text.push_str(&format!("- `{name}` — {hint}\n")),
            None => text.push_str(&format!("- `{name}`\n")),
        }
    }
    text.trim_end().to_owned()
}
