//! Policy rules: allow, ask or deny a call by connector, method, arguments and source (docs/design.md,
//! "Rules"). A rule is parsed and compiled once (globs with `globset`, regular expressions with `regex`);
//! evaluating a call against a rule set is a pure function of the call, its source and the time.

mod index;
mod matching;
mod rule;
mod verdict;

pub use index::RuleIndex;
pub use matching::{Call, CompiledRule};
pub use rule::{Effect, MAX_QUORUM, Rule, RuleError, exact, literal_source};
pub use verdict::{Verdict, denied_message, evaluate};

#[cfg(test)]
mod tests;
