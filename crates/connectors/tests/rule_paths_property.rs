//! Property (docs/design.md, "What a call means"): over generated paths — `.`, `..`, repeated, leading and
//! trailing separators, look-alike and invisible characters, and symlinks made on disk (to a parent, to
//! itself, in a loop, out of the workspace, absolute) — and generated content in both encodings, the verdict
//! the runtime gives a `files.write_file` call equals the verdict of a model that first resolves the path
//! as the kernel does (`std::fs::canonicalize`, after the by-name normalisation every files operation does)
//! and decodes the content. Then the call is run: an allowed write changes exactly the file the model named
//! and nothing else; an asked one pauses and a denied or refused one errs, changing nothing.
//!
//! The model shares no code with the connector: it reads the disk through the kernel. Prints one
//! `properties: <name>: <n> cases` line.

use base64::Engine;
use codemode::{Connector, Effect, Rule, Runtime, RuntimeOptions};
use connectors::FilesConnector;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::json;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod support;

/// Symlinks a case may make inside the workspace: (where, target).
const LINKS: [(&str, &str); 9] = [
    ("scratch/up", ".."),
    ("scratch/v", "../vault"),
    ("scratch/self", "."),
    ("scratch/loop", "loop"),
    ("scratch/out", "../../outside"),
    ("scratch/abs", "ABSOLUTE"),
    ("vault/s", "../scratch"),
    ("scratch/k", "../keep.txt"),
    ("link.txt", "keep.txt"),
];

/// The parts generated paths are made of.
const PARTS: [&str; 20] = [
    "scratch",
    "vault",
    "up",
    "v",
    "self",
    "loop",
    "out",
    "abs",
    "s",
    "k",
    "x.txt",
    "keep.txt",
    "link.txt",
    ".",
    "..",
    "",
    "scrat\u{0441}h", // Cyrillic es
    "x\u{200b}.txt",
    "new",
    "vault ",
];

#[derive(Debug, Clone)]
struct Case {
    links: Vec<bool>,
    path: String,
    text: String,
    base64: Option<bool>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(any::<bool>(), LINKS.len()),
        prop::collection::vec(prop::sample::select(PARTS.to_vec()), 1..6),
        prop_oneof![
            3 => Just(""),
            4 => Just("scratch/"),
            1 => Just("./"),
            1 => Just("/"),
            1 => Just("//")
        ],
        prop_oneof![4 => Just(""), 1 => Just("/"), 1 => Just("/.")],
        prop::sample::select(vec![
            "notes",
            "-----BEGIN PRIVATE KEY-----",
            "PRIVATE  KEY",
            "private key",
        ]),
        // None: text; Some(true): base64 of the text; Some(false): base64 of bytes that are not UTF-8.
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(links, parts, lead, tail, text, base64)| Case {
            links,
            path: format!("{lead}{}{tail}", parts.join("/")),
            text: text.to_owned(),
            base64,
        })
}

/// What the model expects of a call.
#[derive(Debug, Clone, PartialEq)]
enum Expected {
    Refused,
    Verdict(Effect, String),
}

/// The path as the kernel resolves it inside `root` (canonical), after the by-name normalisation every files
/// operation starts with; `None` when it leads outside, loops, or passes a link with an absolute target
/// (which the workspace, a `cap_std` directory, never follows).
fn kernel_path(root: &Path, path: &str) -> Option<String> {
    if path.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    for end in 1..=parts.len() {
        let prefix = root.join(parts[..end].join("/"));
        if let Ok(metadata) = std::fs::symlink_metadata(&prefix)
            && metadata.file_type().is_symlink()
            && std::fs::read_link(&prefix).ok()?.is_absolute()
        {
            return None;
        }
    }
    for end in (0..=parts.len()).rev() {
        match std::fs::canonicalize(root.join(parts[..end].join("/"))) {
            Ok(real) => {
                let inside = real.strip_prefix(root).ok()?;
                let mut resolved: Vec<String> = inside
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                resolved.extend(parts[end..].iter().map(|p| (*p).to_owned()));
                return Some(if resolved.is_empty() {
                    ".".to_owned()
                } else {
                    resolved.join("/")
                });
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) => {}
            Err(_) => return None,
        }
    }
    None
}

/// The rules under test, as a person reads them: writes under `scratch/` need nobody, anything under
/// `vault/` and any key material is denied, the rest is asked (write_file is gated).
fn model(root: &Path, case: &Case) -> Expected {
    let Some(path) = kernel_path(root, &case.path) else {
        return Expected::Refused;
    };
    let key = case.base64 != Some(false) && case.text.contains("PRIVATE KEY");
    let effect = if path.starts_with("vault/") || key {
        Effect::Deny
    } else if path.starts_with("scratch/") {
        Effect::Allow
    } else {
        Effect::Ask
    };
    Expected::Verdict(effect, path)
}

fn rules() -> Vec<Rule> {
    [
        json!({"id": "scratch", "effect": "allow", "call": "files.write_file", "when": {"path": {"prefix": "scratch/"}}}),
        json!({"id": "vault", "effect": "deny", "call": "files.*", "when": {"path": {"prefix": "vault/"}}}),
        json!({"id": "keys", "effect": "deny", "call": "files.write_file", "when": {"content": {"regex": "[\\s\\S]*PRIVATE KEY[\\s\\S]*"}}}),
    ]
    .into_iter()
    .map(|rule| Rule::from_value(rule).expect("a valid rule"))
    .collect()
}

/// Every regular file of the workspace and of the folder beside it (links not followed), with its content.
fn snapshot(base: &Path, root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![root.to_owned(), base.join("outside")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                files.insert(entry.path(), std::fs::read(entry.path()).expect("readable"));
            }
        }
    }
    files
}

/// Empties `base/workspace` and `base/outside` and lays out the case's tree.
fn lay_out(base: &Path, root: &Path, case: &Case) {
    for folder in [root, &base.join("outside")] {
        if folder.exists() {
            for entry in std::fs::read_dir(folder).expect("readable") {
                let entry = entry.expect("entry");
                if entry.file_type().expect("type").is_dir() {
                    std::fs::remove_dir_all(entry.path()).expect("removed");
                } else {
                    std::fs::remove_file(entry.path()).expect("removed");
                }
            }
        }
        std::fs::create_dir_all(folder).expect("made");
    }
    std::fs::create_dir_all(root.join("scratch")).unwrap();
    std::fs::create_dir_all(root.join("vault")).unwrap();
    std::fs::write(root.join("keep.txt"), "kept").unwrap();
    std::fs::write(root.join("vault/secret.txt"), "secret").unwrap();
    std::fs::write(base.join("outside/x.txt"), "outside").unwrap();
    for ((at, target), made) in LINKS.iter().zip(&case.links) {
        if *made {
            let target = if *target == "ABSOLUTE" {
                root.join("vault").to_string_lossy().into_owned()
            } else {
                (*target).to_owned()
            };
            std::os::unix::fs::symlink(target, root.join(at)).expect("link made");
        }
    }
}

#[test]
fn a_rule_judges_the_file_the_kernel_would_write() {
    let base = std::env::temp_dir().join(format!("codemode-rule-paths-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(base.join("workspace")).unwrap();
    // The model compares with the kernel's canonical names, so the root is canonical too.
    let root = std::fs::canonicalize(base.join("workspace")).unwrap();
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let runtime = tokio.block_on(async {
        let files = FilesConnector::new("files", &root, &base.join("state"), None).unwrap();
        let connector: Arc<dyn Connector> = Arc::new(files);
        let options = RuntimeOptions {
            worker: Some(support::worker()),
            ..RuntimeOptions::default()
        };
        Runtime::open(&base.join("codemode.db"), options, vec![connector])
            .await
            .expect("runtime")
    });
    for rule in rules() {
        runtime.add_rule(rule, "test").expect("rule added");
    }
    let cases = 256;
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let seen: RefCell<BTreeMap<String, u32>> = RefCell::default();
    let result = runner.run(&case(), |case| {
        lay_out(&base, &root, &case);
        let expected = model(&root, &case);
        let content = match case.base64 {
            None => json!({"content": case.text}),
            Some(true) => json!({"content": base64::engine::general_purpose::STANDARD.encode(&case.text), "encoding": "base64"}),
            Some(false) => json!({"content": base64::engine::general_purpose::STANDARD.encode([0xff, 0xfe, b'P']), "encoding": "base64"}),
        };
        let mut args = json!({"path": case.path});
        args.as_object_mut()
            .unwrap()
            .extend(content.as_object().unwrap().clone());

        let judged = tokio.block_on(runtime.test_rules("files.write_file", Some(&args), None));
        let actual = match &judged {
            Err(_) => Expected::Refused,
            Ok(verdict) => match &expected {
                Expected::Verdict(_, path) => Expected::Verdict(verdict.effect, path.clone()),
                Expected::Refused => Expected::Verdict(verdict.effect, "?".to_owned()),
            },
        };
        prop_assert_eq!(&actual, &expected, "rules test on {}: {:?}", args, judged);
        *seen
            .borrow_mut()
            .entry(match &expected {
                Expected::Refused => "refused".to_owned(),
                Expected::Verdict(effect, _) => format!("{effect:?}").to_lowercase(),
            })
            .or_default() += 1;

        // And run: what the rule let through is what happened on disk.
        let before = snapshot(&base, &root);
        let code = format!("async () => files.write_file({args})");
        let outcome = tokio
            .block_on(runtime.execute(&code))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let outcome = serde_json::to_value(outcome).unwrap();
        let after = snapshot(&base, &root);
        let changed: Vec<&PathBuf> = after
            .iter()
            .filter(|(path, content)| before.get(*path) != Some(content))
            .map(|(path, _)| path)
            .chain(before.keys().filter(|path| !after.contains_key(*path)))
            .collect();
        let status = outcome["status"].as_str().unwrap_or("");
        match &expected {
            Expected::Verdict(Effect::Allow, path) if status == "completed" => {
                let written = root.join(path);
                prop_assert_eq!(
                    changed,
                    vec![&written],
                    "an allowed write of {} changed other files than {}: {}",
                    case.path,
                    path,
                    outcome
                );
            }
            Expected::Verdict(Effect::Allow, _) => {
                // The operation itself failed (a folder where a file was meant): nothing changed.
                prop_assert_eq!(status, "error", "{}", outcome);
                prop_assert!(changed.is_empty(), "{:?}: {}", changed, outcome);
            }
            Expected::Verdict(Effect::Ask, _) => {
                prop_assert_eq!(status, "paused", "{}", outcome);
                prop_assert!(changed.is_empty(), "{:?}", changed);
            }
            Expected::Verdict(Effect::Deny, _) | Expected::Refused => {
                prop_assert_eq!(status, "error", "{}", outcome);
                prop_assert!(changed.is_empty(), "{:?}", changed);
            }
        }
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    let seen = seen.into_inner();
    println!("properties: a_rule_judges_the_file_the_kernel_would_write: {cases} cases {seen:?}");
    // Every verdict was reached, or the generator tests less than it claims.
    for verdict in ["allow", "ask", "deny", "refused"] {
        assert!(
            seen.contains_key(verdict),
            "no case was {verdict}: {seen:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&base);
}
