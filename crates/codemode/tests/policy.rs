//! Rules in the runtime (docs/design.md, "Rules"): a fresh call is decided once, on its real arguments, and
//! the verdict is recorded as the call's decision; `deny` throws into the program (catchable) and, without
//! conditions, hides the method; a rule changed while a run is paused never changes its replay; a rule added
//! by another process applies within a second.

mod support;

use codemode::RefusalKind;
use codemode::{Actor, Effect, Rule, RuntimeError};
use serde_json::{Value, json};
use std::sync::Arc;
use support::ledger::{Ledger, temp_db};

fn rule(value: Value) -> Rule {
    serde_json::from_value(value).expect("a rule")
}

fn json_of(outcome: &codemode::Outcome) -> Value {
    serde_json::to_value(outcome).expect("serialises")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_allow_rule_lets_a_gated_call_through_and_records_why() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    runtime
        .add_rule(
            rule(json!({"id": "scratch", "effect": "allow", "call": "ledger.write",
                        "when": {"path": {"glob": "notes/**"}}, "reason": "notes are scratch space"})),
            "cli",
        )
        .unwrap();
    let done = json_of(
        &runtime
            .execute("async () => ledger.write({ path: 'notes/today.md' })")
            .await
            .unwrap(),
    );
    assert_eq!(done["status"], "completed", "{done}");
    let call = &done["calls"][0];
    assert_eq!(call["requiresApproval"], false, "nobody had to decide");
    assert_eq!(
        call["decision"],
        json!({"kind": "allowed", "by": "rule", "at": call["decision"]["at"], "rule": "scratch",
               "reason": "notes are scratch space"})
    );
    let outside = json_of(
        &runtime
            .execute("async () => ledger.write({ path: 'notes/../secret.md' })")
            .await
            .unwrap(),
    );
    assert_eq!(
        outside["status"], "paused",
        "a path that leaves notes/ waits: {outside}"
    );
    let listed = runtime.rules().unwrap();
    assert_eq!(listed[0].hits, 1);
    assert!(listed[0].last_hit.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deny_rule_throws_into_the_program_and_a_program_may_catch_it() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    runtime
        .add_rule(
            rule(
                json!({"id": "no-secrets", "effect": "deny", "call": "ledger.*",
                        "when": {"path": {"prefix": "secret/"}}, "reason": "secrets stay put"}),
            ),
            "cli",
        )
        .unwrap();
    let uncaught = json_of(
        &runtime
            .execute("async () => ledger.write({ path: 'secret/key' })")
            .await
            .unwrap(),
    );
    assert_eq!(uncaught["status"], "error");
    assert_eq!(
        uncaught["error"],
        "Code execution failed: Action ledger.write denied by rule \"no-secrets\": secrets stay put"
    );
    assert_eq!(uncaught["calls"][0]["state"], "error");
    assert_eq!(uncaught["calls"][0]["decision"]["kind"], "denied");
    let caught = json_of(
        &runtime
            .execute("async () => { try { await ledger.write({ path: 'secret/key' }); } catch (e) { return 'caught: ' + e.message; } }")
            .await
            .unwrap(),
    );
    assert_eq!(
        caught["result"],
        "caught: Action ledger.write denied by rule \"no-secrets\": secrets stay put"
    );
    assert!(
        ledger.with(|s| !s.received.iter().any(|r| r.method == "write")),
        "never sent"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ask_rule_pauses_an_ungated_call() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    runtime
        .add_rule(
            rule(
                json!({"id": "big-charges", "effect": "ask", "call": "ledger.charge",
                        "when": {"amount": {"gte": 100}}}),
            ),
            "cli",
        )
        .unwrap();
    let paused = json_of(
        &runtime
            .execute("async () => { try { await ledger.charge({ amount: 250 }); } catch (e) {} return 1; }")
            .await
            .unwrap(),
    );
    assert_eq!(paused["status"], "paused", "{paused}");
    assert_eq!(paused["calls"][0]["requiresApproval"], true);
    let small = json_of(
        &runtime
            .execute("async () => { try { await ledger.charge({ amount: 5 }); } catch (e) {} return 1; }")
            .await
            .unwrap(),
    );
    assert_eq!(small["status"], "completed", "{small}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_changed_while_a_run_is_paused_does_not_change_its_replay() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    runtime
        .add_rule(
            rule(json!({"id": "reads", "effect": "allow", "call": "ledger.charge"})),
            "cli",
        )
        .unwrap();
    let code = "async () => { try { await ledger.charge({ amount: 1 }); } catch (e) {} return await ledger.write({ path: 'w' }); }";
    let id = runtime
        .execute(code)
        .await
        .unwrap()
        .execution_id()
        .to_owned();
    // Deny what already ran, and allow what waits: neither changes the recorded run.
    runtime.remove_rule("reads").unwrap();
    runtime
        .add_rule(
            rule(json!({"id": "no-charges", "effect": "deny", "call": "ledger.charge"})),
            "cli",
        )
        .unwrap();
    let done = json_of(&runtime.approve(&id, Actor::Console, None).await.unwrap());
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["calls"][0]["decision"]["rule"], "reads",
        "the verdict recorded then"
    );
    assert_eq!(done["calls"][1]["decision"]["kind"], "approved");
    assert_eq!(
        ledger.with(|s| s.payments.len()),
        1,
        "charged once, never again"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unconditional_deny_hides_the_method_from_discovery_and_says_why_when_called() {
    let ledger = Ledger::new();
    let runtime = ledger.runtime().await;
    let before = runtime.search("ledger pay").await.unwrap();
    assert!(before.results.iter().any(|r| r.method == "pay"));
    runtime
        .add_rule(
            rule(json!({"id": "no-pay", "effect": "deny", "call": "ledger.pay"})),
            "cli",
        )
        .unwrap();
    let after = runtime.search("ledger pay").await.unwrap();
    assert!(
        !after.results.iter().any(|r| r.method == "pay"),
        "{after:?}"
    );
    let described = runtime.describe("ledger.pay").await.unwrap();
    assert!(described.types.contains("not found"), "{described:?}");
    let called = json_of(
        &runtime
            .execute("async () => ledger.pay({ amount: 1 })")
            .await
            .unwrap(),
    );
    // Hidden from discovery, but a program that calls it anyway reads why (docs/design.md, "Rules").
    assert_eq!(
        called["error"],
        "Code execution failed: Action ledger.pay denied by rule \"no-pay\""
    );
    assert_eq!(called["calls"][0]["decision"]["kind"], "denied", "{called}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_added_by_another_process_applies_to_the_next_call() {
    let ledger = Ledger::new();
    let db = temp_db();
    let runtime = ledger
        .runtime_at(&db, Arc::new(codemode::SystemClock))
        .await;
    let other = Ledger::new()
        .runtime_at(&db, Arc::new(codemode::SystemClock))
        .await;
    let first = json_of(
        &runtime
            .execute("async () => ledger.write({ path: 'a' })")
            .await
            .unwrap(),
    );
    assert_eq!(first["status"], "paused");
    other
        .add_rule(
            rule(json!({"id": "writes", "effect": "allow", "call": "ledger.write"})),
            "cli",
        )
        .unwrap();
    // Within a second, without a restart.
    let mut status = String::new();
    for _ in 0..40 {
        let outcome = json_of(
            &runtime
                .execute("async () => ledger.write({ path: 'b' })")
                .await
                .unwrap(),
        );
        status = outcome["status"].as_str().unwrap_or_default().to_owned();
        if status == "completed" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(status, "completed");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_rules_and_taken_ids_are_refused_naming_the_field() {
    let runtime = Ledger::new().runtime().await;
    let bad = runtime
        .add_rule(rule(json!({"id": "x", "effect": "allow", "call": "ledger.write", "when": {"path": {"regex": "("}}})), "cli")
        .unwrap_err();
    assert!(
        matches!(&bad, RuntimeError::InvalidArgs(m) if m.starts_with("rule x: when.path.regex: ")),
        "{bad}"
    );
    runtime
        .add_rule(
            rule(json!({"id": "x", "effect": "allow", "call": "ledger.write"})),
            "cli",
        )
        .unwrap();
    let taken = runtime
        .add_rule(
            rule(json!({"id": "x", "effect": "deny", "call": "ledger.write"})),
            "cli",
        )
        .unwrap_err();
    assert_eq!(taken.to_string(), "rule x: id: a rule with this id exists");
    assert!(matches!(
        runtime.remove_rule("nope"),
        Err(e) if e.refusal() == Some(RefusalKind::NotFound)
    ));
    let verdict = runtime
        .test_rules("ledger.write", Some(&json!({"path": "a"})), None)
        .await
        .unwrap();
    assert_eq!(
        (verdict.effect, verdict.rule.as_deref()),
        (Effect::Allow, Some("x"))
    );
}
