//! Rules indexed by the call they name and prefiltered on one argument condition, so a call is checked only
//! against the rules that can match it.

use super::matching::{Condition, Test, is_pattern, lookup, normal_path};
use super::{Call, CompiledRule, Verdict, evaluate};
use globset::{GlobMatcher, GlobSet, GlobSetBuilder};
use serde_json::Value;
use std::collections::HashMap;

/// Rules indexed by the call they name, so a call is checked only against the rules that can match it (those
/// naming exactly its `connector.method`, and those whose pattern has a `*`), in their precedence order.
/// Within each group a prefilter on one argument condition per rule (an exact string, or a glob, looked up
/// in a hash map or one combined `GlobSet`) leaves out the rules whose condition cannot hold, so 100 rules on
/// one method cost one lookup and one set match rather than 100 checks (docs/performance.md, "Rules").
#[derive(Debug, Clone, Default)]
pub struct RuleIndex {
    rules: Vec<CompiledRule>,
    exact: HashMap<String, Candidates>,
    patterns: Candidates,
    /// The rules that hide what they name.
    hiding: Vec<usize>,
}

/// One group of rules, split by what can rule each out before it is checked in full.
#[derive(Debug, Clone, Default)]
struct Candidates {
    /// Rules no prefilter applies to: always checked.
    unfiltered: Vec<usize>,
    /// Per argument path, the rules that require an exact string there.
    literals: Vec<(ArgumentPath, RulesByText)>,
    /// Per argument path, the rules that require a glob to match there, as one set (pattern `i` is rule
    /// `ids[i]`).
    globs: Vec<(Vec<String>, GlobSet, Vec<usize>)>,
}

/// An argument path, split at its dots.
type ArgumentPath = Vec<String>;

/// Rule indices by the exact string their condition requires.
type RulesByText = HashMap<String, Vec<usize>>;

/// The one condition of a rule a prefilter checks: a condition every match must meet.
enum Key<'a> {
    Literal(&'a str),
    Glob(&'a GlobMatcher),
}

impl Candidates {
    fn new(rules: &[CompiledRule], ids: impl IntoIterator<Item = usize>) -> Self {
        let mut unfiltered = Vec::new();
        let mut literals: Vec<(ArgumentPath, RulesByText)> = Vec::new();
        let mut globs: Vec<(Vec<String>, GlobSetBuilder, Vec<usize>)> = Vec::new();
        for id in ids {
            let keyed = rules[id].when.iter().find_map(|(path, condition)| {
                let key = match condition {
                    Condition::Equals(Value::String(text)) => Key::Literal(text),
                    Condition::All(tests) => tests.iter().find_map(|test| match test {
                        Test::Glob(glob) => Some(Key::Glob(glob)),
                        Test::Exact(Value::String(text)) => Some(Key::Literal(text)),
                        _ => None,
                    })?,
                    Condition::Equals(_) => return None,
                };
                Some((path, key))
            });
            match keyed {
                None => unfiltered.push(id),
                Some((path, Key::Literal(text))) => {
                    let at = match literals.iter().position(|(p, _)| p == path) {
                        Some(at) => at,
                        None => {
                            literals.push((path.clone(), HashMap::new()));
                            literals.len() - 1
                        }
                    };
                    literals[at].1.entry(text.to_owned()).or_default().push(id);
                }
                Some((path, Key::Glob(glob))) => {
                    let at = match globs.iter().position(|(p, _, _)| p == path) {
                        Some(at) => at,
                        None => {
                            globs.push((path.clone(), GlobSetBuilder::new(), Vec::new()));
                            globs.len() - 1
                        }
                    };
                    globs[at].1.add(glob.glob().clone());
                    globs[at].2.push(id);
                }
            }
        }
        let globs = globs
            .into_iter()
            .filter_map(|(path, builder, ids)| match builder.build() {
                Ok(set) => Some((path, set, ids)),
                // Each glob compiled alone; should the set not build, check its rules in full.
                Err(_) => {
                    unfiltered.extend(&ids);
                    None
                }
            })
            .collect();
        unfiltered.sort_unstable();
        Candidates {
            unfiltered,
            literals,
            globs,
        }
    }

    /// Adds the rules the call could match: a superset of those that do.
    fn collect(&self, args: Option<&Value>, out: &mut Vec<usize>) {
        out.extend_from_slice(&self.unfiltered);
        for (path, by_text) in &self.literals {
            if let Some(Value::String(text)) = lookup(args, path)
                && let Some(ids) = by_text.get(text.as_str())
            {
                out.extend_from_slice(ids);
            }
        }
        for (path, set, ids) in &self.globs {
            if let Some(Value::String(text)) = lookup(args, path) {
                // As `passes` does: the value is matched as a normal path.
                let matched = if text.split('/').any(|part| matches!(part, "" | "." | "..")) {
                    normal_path(text).map(|path| set.matches(path))
                } else {
                    Some(set.matches(text))
                };
                out.extend(matched.into_iter().flatten().map(|i| ids[i]));
            }
        }
    }
}

impl RuleIndex {
    pub fn new(rules: Vec<CompiledRule>) -> Self {
        let mut exact: HashMap<String, Vec<usize>> = HashMap::new();
        let mut patterns = Vec::new();
        let hiding = (0..rules.len())
            .filter(|&i| rules[i].hides_what_it_names())
            .collect();
        for (index, rule) in rules.iter().enumerate() {
            if is_pattern(&rule.rule.call) {
                patterns.push(index);
            } else {
                exact.entry(rule.rule.call.clone()).or_default().push(index);
            }
        }
        let exact = exact
            .into_iter()
            .map(|(name, ids)| (name, Candidates::new(&rules, ids)))
            .collect();
        let patterns = Candidates::new(&rules, patterns);
        RuleIndex {
            rules,
            exact,
            patterns,
            hiding,
        }
    }

    /// Whether an unconditional `deny` hides `connector.method`.
    pub fn hides(&self, connector: &str, method: &str) -> bool {
        self.hiding
            .iter()
            .any(|&i| self.rules[i].hides(connector, method))
    }

    pub fn rules(&self) -> &[CompiledRule] {
        &self.rules
    }

    /// [`evaluate`] over the rules that can match `call`.
    pub fn evaluate(&self, call: &Call<'_>, requires_approval: bool) -> Verdict {
        let mut candidates = Vec::new();
        if let Some(named) = self.exact.get(call.path) {
            named.collect(call.args, &mut candidates);
        }
        self.patterns.collect(call.args, &mut candidates);
        // Back into precedence order, so "the first among equals" stays the first.
        candidates.sort_unstable();
        evaluate(
            candidates.iter().map(|&i| &self.rules[i]),
            call,
            requires_approval,
        )
    }
}
