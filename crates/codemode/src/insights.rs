//! What the history says about how people decide (docs/history.md, "Insights"): how many calls ran without
//! asking, were asked about, denied or expired; how often the asked ones were approved; how long people took;
//! and the call shapes approved most often, each with the `allow` rule that would let it through.

use crate::model::{Decision, DecisionKind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// One recorded call, as insights read it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallFact {
    pub connector: String,
    pub method: String,
    /// What the connector read (its canonical arguments), else what the program sent.
    pub args: Option<Value>,
    pub requires_approval: bool,
    pub decision: Option<Decision>,
    pub asked_at: Option<i64>,
}

/// The figures of a stretch of history.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Insights {
    /// Calls that ran without anyone being asked (steps not counted).
    pub allowed: u64,
    /// Calls a person was asked about.
    pub asked: u64,
    /// Calls a rule refused.
    pub denied: u64,
    /// Asked calls nobody decided in time.
    pub expired: u64,
    /// Asked calls approved (as they were, or edited), and rejected.
    pub approved: u64,
    pub rejected: u64,
    /// Approved among the asked calls that were decided (approved, rejected or expired); `None` before any.
    pub approval_rate: Option<f64>,
    /// How long a person took, from the pause to the decision (ms): median and 90th percentile.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub decide_median_ms: Option<i64>,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub decide_p90_ms: Option<i64>,
    /// The shapes of call approved most often, most first.
    pub shapes: Vec<ApprovedShape>,
}

/// Calls of one connector and method whose arguments share a pattern, and how often people approved them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ApprovedShape {
    /// `connector.method`.
    pub call: String,
    /// Argument path → the matcher the calls share (`{"glob": "notes/**"}`, or a value).
    pub when: Map<String, Value>,
    pub approved: u64,
    pub rejected: u64,
    /// The `allow` rule that would let these calls through without asking (for "make a rule").
    pub rule: Value,
}

/// How many shapes insights list.
const SHAPES: usize = 5;

/// Insights of `calls`.
pub fn insights(calls: impl IntoIterator<Item = CallFact>) -> Insights {
    let mut figures = Insights::default();
    let mut waits = Vec::new();
    let mut shapes: HashMap<String, Shape> = HashMap::new();
    for call in calls {
        if call.connector == crate::STEP_CONNECTOR {
            continue;
        }
        let kind = call.decision.as_ref().map(|d| d.kind);
        if kind == Some(DecisionKind::Denied) {
            figures.denied += 1;
            continue;
        }
        if !call.requires_approval {
            figures.allowed += 1;
            continue;
        }
        figures.asked += 1;
        let approved = matches!(kind, Some(DecisionKind::Approved | DecisionKind::Edited));
        match kind {
            Some(DecisionKind::Approved | DecisionKind::Edited) => figures.approved += 1,
            Some(DecisionKind::Rejected) => figures.rejected += 1,
            Some(DecisionKind::Expired) => figures.expired += 1,
            _ => {}
        }
        if let (Some(decision), Some(asked)) = (&call.decision, call.asked_at)
            && decision.by.is_person()
        {
            waits.push((decision.at - asked).max(0));
        }
        if approved || kind == Some(DecisionKind::Rejected) {
            let (globs, scalars) = pattern(call.args.as_ref());
            let path = format!("{}.{}", call.connector, call.method);
            let key = format!("{path}\u{0}{}", Value::Object(globs.clone()));
            let shape = shapes.entry(key).or_insert_with(|| Shape {
                call: path,
                globs,
                common: None,
                approved: 0,
                rejected: 0,
            });
            if approved {
                shape.approved += 1;
                // What every approved call of the shape had in common, beyond its paths.
                shape.common = Some(match shape.common.take() {
                    None => scalars,
                    Some(mut common) => {
                        common.retain(|k, v| scalars.get(k) == Some(v));
                        common
                    }
                });
            } else {
                shape.rejected += 1;
            }
        }
    }
    let decided = figures.approved + figures.rejected + figures.expired;
    figures.approval_rate = (decided > 0).then(|| figures.approved as f64 / decided as f64);
    waits.sort_unstable();
    figures.decide_median_ms = rank(&waits, 50);
    figures.decide_p90_ms = rank(&waits, 90);
    let mut shapes: Vec<ApprovedShape> = shapes
        .into_values()
        .filter(|s| s.approved > 0)
        .map(Shape::offered)
        .collect();
    shapes.sort_by(|a, b| {
        b.approved
            .cmp(&a.approved)
            .then(a.rejected.cmp(&b.rejected))
            .then(a.call.cmp(&b.call))
            .then(
                Value::Object(a.when.clone())
                    .to_string()
                    .cmp(&Value::Object(b.when.clone()).to_string()),
            )
    });
    shapes.truncate(SHAPES);
    figures.shapes = shapes;
    figures
}

/// A shape while the history is read.
struct Shape {
    call: String,
    globs: Map<String, Value>,
    /// The plain values every approved call of the shape shared (`None` before the first).
    common: Option<Map<String, Value>>,
    approved: u64,
    rejected: u64,
}

impl Shape {
    /// The shape as offered: its paths' globs, and the values its approvals shared — only once there were
    /// two or more, so one approval's content does not become a rule.
    fn offered(self) -> ApprovedShape {
        let mut when = self.globs;
        if self.approved >= 2 {
            when.extend(self.common.unwrap_or_default());
        }
        ApprovedShape {
            rule: serde_json::json!({
                "id": rule_id(&self.call),
                "effect": "allow",
                "call": self.call.clone(),
                "when": when.clone(),
            }),
            call: self.call,
            when,
            approved: self.approved,
            rejected: self.rejected,
        }
    }
}

/// The nearest-rank `percent`th percentile of sorted `values`.
fn rank(values: &[i64], percent: usize) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    let index = (percent * values.len()).div_ceil(100).max(1) - 1;
    values.get(index).copied()
}

/// A call's arguments as a shape reads them: path-like strings (with `/`) as a glob over their first folder
/// (`notes/a.txt` → `notes/**`), which makes the shape; and the short word-like values (no space, at most 64
/// characters), numbers and booleans, kept when every approval of the shape shares them. Free text and
/// nested values are left out, so two issues with different titles are one shape.
fn pattern(args: Option<&Value>) -> (Map<String, Value>, Map<String, Value>) {
    let (mut globs, mut scalars) = (Map::new(), Map::new());
    let Some(Value::Object(args)) = args else {
        return (globs, scalars);
    };
    for (key, value) in args {
        match value {
            Value::String(text) if text.contains('/') => {
                let folder = text
                    .trim_start_matches("./")
                    .split('/')
                    .next()
                    .unwrap_or_default();
                if !folder.is_empty() && !folder.contains(['*', '?', '[', '{', '\\']) {
                    globs.insert(
                        key.clone(),
                        serde_json::json!({"glob": format!("{folder}/**")}),
                    );
                }
            }
            Value::String(text)
                if text.chars().count() <= 64 && !text.contains(char::is_whitespace) =>
            {
                scalars.insert(key.clone(), value.clone());
            }
            Value::Number(_) | Value::Bool(_) => {
                scalars.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    (globs, scalars)
}

/// A rule id for calls to `path`: `allow-files-write_file`.
fn rule_id(path: &str) -> String {
    let id: String = path
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("allow-{id}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Actor;

    fn call(
        method: &str,
        args: Value,
        asked: bool,
        decision: Option<(DecisionKind, Actor, i64)>,
    ) -> CallFact {
        CallFact {
            connector: "files".into(),
            method: method.into(),
            args: Some(args),
            requires_approval: asked,
            decision: decision.map(|(kind, by, at)| Decision::plain(kind, by, at)),
            asked_at: asked.then_some(1_000),
        }
    }

    #[test]
    fn a_known_history_gives_known_figures() {
        use DecisionKind::*;
        let mut calls = Vec::new();
        // 10 approvals of writes under notes/, taking 1..=10 s; 2 under secrets/ rejected; one expired.
        for n in 1..=10 {
            let args = serde_json::json!({"path": format!("notes/{n}.txt"), "content": format!("text{n}"), "mode": "append"});
            calls.push(call(
                "write_file",
                args,
                true,
                Some((Approved, Actor::Console, 1_000 + n * 1000)),
            ));
        }
        for _ in 0..2 {
            let args = serde_json::json!({"path": "secrets/key", "content": "x"});
            calls.push(call(
                "write_file",
                args,
                true,
                Some((Rejected, Actor::Cli, 61_000)),
            ));
        }
        calls.push(call(
            "delete_file",
            serde_json::json!({"path": "a.txt"}),
            true,
            Some((Expired, Actor::Expiry, 999_999)),
        ));
        calls.push(call(
            "list_dir",
            serde_json::json!({"path": "."}),
            false,
            None,
        ));
        calls.push(call(
            "delete_file",
            serde_json::json!({"path": "b"}),
            false,
            Some((Denied, Actor::Rule, 5)),
        ));
        calls.push(call(
            "write_file",
            serde_json::json!({"path": "notes/w.txt"}),
            true,
            None,
        ));
        calls.push(CallFact {
            connector: crate::STEP_CONNECTOR.into(),
            method: "plan".into(),
            args: None,
            requires_approval: false,
            decision: None,
            asked_at: None,
        });

        let figures = insights(calls);
        assert_eq!(
            (
                figures.allowed,
                figures.asked,
                figures.denied,
                figures.expired
            ),
            (1, 14, 1, 1)
        );
        assert_eq!((figures.approved, figures.rejected), (10, 2));
        assert_eq!(figures.approval_rate, Some(10.0 / 13.0));
        // Waits: 1..=10 s and two of 60 s; expiry is nobody's wait.
        assert_eq!(figures.decide_median_ms, Some(6_000));
        assert_eq!(figures.decide_p90_ms, Some(60_000));
        assert_eq!(
            figures.shapes.len(),
            1,
            "the rejected shape is not offered: {:?}",
            figures.shapes
        );
        let shape = &figures.shapes[0];
        assert_eq!(shape.call, "files.write_file");
        // What all ten shared: the folder and the mode; not their contents.
        assert_eq!(
            Value::Object(shape.when.clone()),
            serde_json::json!({"path": {"glob": "notes/**"}, "mode": "append"})
        );
        assert_eq!((shape.approved, shape.rejected), (10, 0));
        let rule = crate::Rule::from_value(shape.rule.clone()).expect("a rule that can be added");
        assert_eq!(rule.id, "allow-files-write_file");
        assert!(insights(Vec::new()).approval_rate.is_none());
    }
}
