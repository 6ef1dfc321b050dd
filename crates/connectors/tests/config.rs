//! `connectors.json`: the first-run default, every field of README "Configuration", Claude Desktop `mcpServers` entries,
//! name sanitising and collisions, paths, errors with file:line:column, secrets kept out of errors and debug
//! output, revert templates — and no panic on arbitrary bytes.

use connectors::config;
use connectors::config::{
    Approval, ConnectorKind, DEFAULT_CONFIG, load, parse, parse_age_text, render_template,
};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn data_dir() -> PathBuf {
    std::env::temp_dir().join(format!("codemode-config-{}", uuid::Uuid::new_v4()))
}

fn parsed(text: &str) -> Result<connectors::config::Config, connectors::config::ConfigError> {
    parse(text, Path::new("/data/connectors.json"), Path::new("/data"))
}

const SPEC_EXAMPLE: &str = r#"{
  "runtime": { "name": "default", "maxExecutions": 50, "timeoutMs": 60000, "memoryLimitMb": 512,
               "pausedTtl": "24h", "expirySweepMinutes": 10 },
  "connectors": {
    "files":  { "type": "files", "root": "~/agent-workspace" },
    "github": { "type": "mcp", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                "env": { "GITHUB_TOKEN": "ghp_SECRET_TOKEN_VALUE" }, "hint": "issues and pull requests of our repos",
                "approval": ["create_issue"], "reexecute": ["search_code"], "hidden": ["update_issue"],
                "callTimeoutMs": 30000, "revertTimeoutMs": 30000,
                "revert": { "create_issue": { "method": "update_issue",
                            "args": { "owner": "{{args.owner}}", "repo": "{{args.repo}}",
                                      "issue_number": "{{result.number}}", "state": "closed" } } } },
    "remote": { "type": "mcp", "url": "http://127.0.0.1:8931/mcp", "headers": { "Authorization": "Bearer SECRET_BEARER" } }
  },
  "mcpServers": { "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },
                  "brave-search": { "command": "npx", "args": ["-y", "brave"] } }
}"#;

#[test]
fn the_first_run_creates_an_owner_only_default_with_a_files_workspace() {
    use std::os::unix::fs::PermissionsExt;
    let dir = data_dir();
    let config = load(&dir).unwrap();
    let written = std::fs::read_to_string(dir.join("connectors.json")).unwrap();
    assert_eq!(written, DEFAULT_CONFIG);
    assert_eq!(
        std::fs::metadata(dir.join("connectors.json"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(config.connectors.len(), 1);
    assert_eq!(config.connectors[0].name, "files");
    assert_eq!(
        config.connectors[0].kind,
        ConnectorKind::Files {
            root: dir.join("workspace")
        }
    );
    assert_eq!(config.connectors[0].approval, Approval::Default);
    assert_eq!(config.runtime.paused_ttl, Duration::from_secs(86_400));
    // A second load reads what is there and does not rewrite it.
    std::fs::write(dir.join("connectors.json"), r#"{"connectors": {}}"#).unwrap();
    assert!(load(&dir).unwrap().connectors.is_empty());
}

#[test]
fn the_spec_example_parses_with_every_field() {
    let config = parsed(SPEC_EXAMPLE).unwrap();
    let names: Vec<&str> = config.connectors.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["files", "github", "remote", "memory", "brave_search"],
        "file order, sanitised"
    );
    let home = PathBuf::from(std::env::var("HOME").unwrap());
    assert_eq!(
        config.connectors[0].kind,
        ConnectorKind::Files {
            root: home.join("agent-workspace")
        }
    );
    let github = &config.connectors[1];
    match &github.kind {
        ConnectorKind::Stdio {
            command, args, env, ..
        } => {
            assert_eq!(command, "npx");
            assert_eq!(
                args,
                &vec![
                    "-y".to_owned(),
                    "@modelcontextprotocol/server-github".to_owned()
                ]
            );
            assert_eq!(env["GITHUB_TOKEN"], "ghp_SECRET_TOKEN_VALUE");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        github.approval,
        Approval::Methods(vec!["create_issue".into()])
    );
    assert_eq!(github.reexecute, vec!["search_code"]);
    assert_eq!(github.hidden, vec!["update_issue"]);
    assert_eq!(
        github.hint.as_deref(),
        Some("issues and pull requests of our repos")
    );
    assert_eq!(github.call_timeout, Duration::from_secs(30));
    assert_eq!(github.revert["create_issue"].method, "update_issue");
    assert!(
        matches!(&config.connectors[2].kind, ConnectorKind::Http { url, headers, .. } if url == "http://127.0.0.1:8931/mcp" && headers.len() == 1)
    );
    assert_eq!(config.connectors[4].key, "brave-search");
    assert!(
        github
            .approval
            .requires("create_issue", "create_issue", &[])
    );
    assert!(
        !config.connectors[3]
            .approval
            .requires("anything", "anything", &[])
    );
}

#[test]
fn secrets_never_appear_in_debug_output_or_errors() {
    let config = parsed(SPEC_EXAMPLE).unwrap();
    let debug = format!("{config:?}");
    assert!(
        !debug.contains("ghp_SECRET_TOKEN_VALUE") && !debug.contains("SECRET_BEARER"),
        "{debug}"
    );
    assert!(debug.contains("GITHUB_TOKEN=…"));
    let wrong = r#"{"connectors": {"gh": {"command": "npx", "env": {"TOKEN": 12345678}, "headers": "Bearer SECRET"}}}"#;
    let error = parsed(wrong).unwrap_err().to_string();
    assert!(
        !error.contains("12345678") && !error.contains("SECRET"),
        "{error}"
    );
    assert_eq!(
        error,
        "/data/connectors.json:1:17: gh.env.TOKEN must be a string"
    );
}

#[test]
fn errors_name_the_file_line_and_column() {
    let syntax = parsed(
        "{\n  \"connectors\": {\n    \"files\": { \"type\": \"files\" \"root\": \"x\" }\n  }\n}",
    )
    .unwrap_err();
    assert_eq!((syntax.line, syntax.column), (3, 32));
    assert!(
        syntax
            .to_string()
            .starts_with("/data/connectors.json:3:32: expected `,` or `}`"),
        "{syntax}"
    );
    let wrong_type = parsed("{\n  \"runtime\": { \"maxExecutions\": \"fifty\" }\n}").unwrap_err();
    assert_eq!(
        wrong_type.to_string(),
        "/data/connectors.json:2:39: invalid type: string \"fifty\", expected usize"
    );
    let unknown =
        parsed("{\"connectors\": {\n  \"x\": {\"command\": \"a\", \"aproval\": []}}}").unwrap_err();
    assert_eq!(unknown.line, 2);
    assert!(
        unknown.message.contains("unknown field `aproval`"),
        "{unknown}"
    );
    let reserved = parsed(r#"{"connectors": {"codemode": {"command": "x"}}}"#).unwrap_err();
    assert_eq!(
        reserved.message,
        "Connector name \"codemode\" is reserved for the codemode platform SDK."
    );
    let collision = parsed(r#"{"connectors": {"brave-search": {"command": "x"}}, "mcpServers": {"brave_search": {"command": "y"}}}"#).unwrap_err();
    assert_eq!(
        collision.message,
        "Connectors \"brave-search\" and \"brave_search\" both map to \"brave_search\"; rename one of them"
    );
    let no_transport = parsed(r#"{"mcpServers": {"x": {"args": []}}}"#).unwrap_err();
    assert_eq!(
        no_transport.message,
        "x: an MCP connector needs a \"command\" or a \"url\""
    );
    let approval =
        parsed(r#"{"mcpServers": {"x": {"command": "a", "approval": "all"}}}"#).unwrap_err();
    assert_eq!(
        approval.message,
        "x.approval must be \"*\", \"writes\", \"destructive\" or a list of method names"
    );
    let ttl = parsed(r#"{"runtime": {"pausedTtl": "tomorrow"}}"#).unwrap_err();
    assert_eq!(
        ttl.message,
        "pausedTtl must be a duration such as \"0s\", \"90m\", \"24h\" or \"7d\""
    );
    // Found by the property test: minutes × 60 overflowed and panicked.
    let sweep = parsed(r#"{"runtime": {"expirySweepMinutes": 18446744073709551615}}"#).unwrap_err();
    assert_eq!(sweep.message, "expirySweepMinutes is too large");
}

#[test]
fn approval_star_paths_and_claude_desktop_entries() {
    let config = parsed(r#"{"connectors": {"w": {"type": "files", "root": "ws", "approval": "*"}, "a": {"type": "files", "root": "/abs"}},
                            "mcpServers": {"h": {"type": "http", "url": "http://127.0.0.1:1/mcp"}, "s": {"type": "stdio", "command": "srv", "cwd": "work"}}}"#).unwrap();
    assert_eq!(config.connectors[0].approval, Approval::All);
    assert_eq!(
        config.connectors[0].kind,
        ConnectorKind::Files {
            root: PathBuf::from("/data/ws")
        }
    );
    assert_eq!(
        config.connectors[1].kind,
        ConnectorKind::Files {
            root: PathBuf::from("/abs")
        }
    );
    assert!(matches!(
        config.connectors[2].kind,
        ConnectorKind::Http { .. }
    ));
    assert!(
        matches!(&config.connectors[3].kind, ConnectorKind::Stdio { cwd: Some(c), .. } if c == Path::new("/data/work"))
    );
    assert_eq!(parse_age_text("0s"), Some(Duration::ZERO));
    assert_eq!(parse_age_text("90m"), Some(Duration::from_secs(5400)));
    assert_eq!(parse_age_text("7d"), Some(Duration::from_secs(604_800)));
    assert_eq!(parse_age_text("7w"), None);
}

#[test]
fn a_per_tool_list_names_a_tool_by_its_original_or_its_sanitised_name() {
    let config = parsed(
        r#"{"mcpServers": {"gh": {"command": "srv", "approval": ["delete-repo"], "confirmInApp": ["create-issue"]}}}"#,
    )
    .unwrap();
    let gh = &config.connectors[0];
    // A pending call carries only the sanitised name; the original one in the list still covers it.
    assert!(gh.confirm_in_app.lists("create_issue"));
    assert!(
        gh.confirm_in_app
            .requires("create-issue", "create_issue", &[])
    );
    assert!(!gh.confirm_in_app.lists("create_comment"));
    assert!(gh.approval.lists("delete_repo"));
    let sanitised =
        parsed(r#"{"mcpServers": {"gh": {"command": "srv", "confirmInApp": ["create_issue"]}}}"#)
            .unwrap();
    assert!(sanitised.connectors[0].confirm_in_app.lists("create_issue"));
}

#[test]
fn revert_templates_keep_types_interpolate_text_and_name_missing_paths() {
    let template = json!({"owner": "{{args.owner}}", "number": "{{result.number}}", "title": "Revert of #{{result.number}} by {{args.owner}}",
                          "first": "{{args.items.0.id}}", "list": ["{{result.number}}", 1], "fixed": true});
    let args = json!({"owner": "acme", "items": [{"id": 7}]});
    let result = json!({"number": 42});
    assert_eq!(
        render_template(&template, &args, &result).unwrap(),
        json!({"owner": "acme", "number": 42, "title": "Revert of #42 by acme", "first": 7, "list": [42, 1], "fixed": true})
    );
    assert_eq!(
        render_template(&json!({"n": "{{result.missing}}"}), &args, &result).unwrap_err(),
        "revert template {{result.missing}}: no value at \"missing\""
    );
    assert!(render_template(&json!("{{other.x}}"), &args, &result).is_err());
}

#[test]
fn arbitrary_bytes_are_an_error_never_a_panic() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let base = SPEC_EXAMPLE.as_bytes();
    for round in 0..5_000 {
        let bytes: Vec<u8> = if round % 2 == 0 {
            // Mutations of a valid file: flips, deletions and insertions.
            let mut b = base.to_vec();
            for _ in 0..(1 + next() % 8) {
                let i = (next() as usize) % b.len().max(1);
                match next() % 3 {
                    0 => b[i] = (next() % 256) as u8,
                    1 => {
                        b.remove(i);
                    }
                    _ => {
                        let alphabet = b"{}[]\",:~\\0-9azZ";
                        b.insert(i, alphabet[(next() as usize) % alphabet.len()]);
                    }
                }
            }
            b
        } else {
            (0..(next() % 200)).map(|_| (next() % 256) as u8).collect()
        };
        let text = String::from_utf8_lossy(&bytes);
        let _ = parsed(&text);
    }
}

#[tokio::test]
async fn entries_become_connectors_in_file_order_with_their_approval_policy() {
    let dir = data_dir();
    let config = parse(
        r#"{"connectors": {"files": {"type": "files", "root": "workspace"}, "open": {"type": "files", "root": "open", "approval": []}, "strict": {"type": "files", "root": "strict", "approval": "*"}}, "mcpServers": {"m": {"command": "x"}}}"#,
        &dir.join("connectors.json"),
        &dir,
    )
    .unwrap();
    let built = connectors::Connectors::build(&config, &dir).unwrap();
    let names: Vec<&str> = built.all.iter().map(|c| c.name()).collect();
    assert_eq!(names, vec!["files", "open", "strict", "m"]);
    assert_eq!(
        built.servers.len(),
        1,
        "the MCP entry is built, not started"
    );
    let built = built.all;
    let gated = |i: usize| {
        let c = built[i].clone();
        async move {
            c.tools()
                .await
                .unwrap()
                .into_iter()
                .filter(|t| t.requires_approval)
                .count()
        }
    };
    assert_eq!((gated(0).await, gated(1).await, gated(2).await), (3, 0, 6));
    assert!(dir.join("workspace").is_dir() && dir.join("state").join("files").is_dir());
}

#[test]
fn runtime_settings_are_written_back_keeping_the_rest_of_the_file() {
    let dir = data_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("connectors.json");
    std::fs::write(
        &path,
        r#"{"connectors": {"files": {"type": "files", "root": "ws"}}, "mcpServers": {"m": {"command": "x", "env": {"TOKEN": "s3cret"}}}}"#,
    )
    .unwrap();
    let settings = config::RuntimeSettings {
        max_executions: 7,
        paused_ttl: std::time::Duration::from_secs(90 * 60),
        keep_decided_for: std::time::Duration::from_secs(7 * 24 * 3600),
        ..config::RuntimeSettings::default()
    };
    connectors::editing::save_runtime_settings(&dir, &settings).unwrap();
    let loaded = config::load(&dir).unwrap();
    assert_eq!(loaded.runtime, settings);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"pausedTtl\": \"90m\""), "{text}");
    assert!(text.contains("\"keepDecidedFor\": \"7d\""), "{text}");
    assert!(text.contains("s3cret"), "the rest of the file is kept");
    assert_eq!(loaded.connectors.len(), 2);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let bad = config::RuntimeSettings {
        max_executions: 0,
        ..settings
    };
    let error = connectors::editing::save_runtime_settings(&dir, &bad).unwrap_err();
    assert!(error.message.contains("maxExecutions"), "{error}");
    assert_eq!(config::load(&dir).unwrap().runtime.max_executions, 7);
}

/// `memoryLimitMb: 0` used to load and fail much later as "worker did not start: Gone:".
#[test]
fn runtime_settings_the_runtime_cannot_use_are_refused_on_load_naming_the_field() {
    for (field, value, message) in [
        (
            "memoryLimitMb",
            json!(0),
            "memoryLimitMb must be at least 16",
        ),
        ("timeoutMs", json!(0), "timeoutMs must be at least 100"),
        (
            "maxExecutions",
            json!(0),
            "maxExecutions must be at least 1",
        ),
        (
            "expirySweepMinutes",
            json!(0),
            "expirySweepMinutes must be at least 1",
        ),
        (
            "name",
            json!("two words"),
            "runtime name \"two words\": use letters, digits, \"_\", \"-\" or \".\"",
        ),
    ] {
        // A connector with the same key comes first: the position is the runtime's field.
        let text = format!(
            "{{\n  \"connectors\": {{ \"{field}\": {{ \"command\": \"x\" }} }},\n  \"runtime\": {{\n    \"{field}\": {value}\n  }}\n}}"
        );
        let dir = data_dir();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("connectors.json"), &text).unwrap();
        let error = load(&dir).unwrap_err();
        assert_eq!(error.message, message, "{text}");
        assert_eq!((error.line, error.column), (4, 5), "{error}");
        assert!(
            error
                .to_string()
                .starts_with(&format!("{}:4:5: ", dir.join("connectors.json").display())),
            "{error}"
        );
    }
    let zero_call =
        parsed(r#"{"mcpServers": {"m": {"command": "x", "callTimeoutMs": 0}}}"#).unwrap_err();
    assert_eq!(zero_call.message, "m.callTimeoutMs must be at least 1");
    let zero_revert =
        parsed(r#"{"mcpServers": {"m": {"command": "x", "revertTimeoutMs": 0}}}"#).unwrap_err();
    assert_eq!(zero_revert.message, "m.revertTimeoutMs must be at least 1");
}

#[test]
fn an_oauth_client_is_checked_without_echoing_its_secret() {
    let ok = r#"{"mcpServers": {"t": {"url": "https://t.example/mcp",
        "oauth": {"clientId": "app", "clientSecret": "OAUTH_SECRET_1", "scopes": ["a", "b"]}}}}"#;
    let config = parsed(ok).unwrap();
    assert!(!format!("{config:?}").contains("OAUTH_SECRET_1"));
    for (oauth, says) in [
        (r#""OAUTH_SECRET_2""#, "t.oauth must be an object"),
        (
            r#"{"clientSecret": "OAUTH_SECRET_2"}"#,
            "t.oauth: a clientSecret needs its clientId",
        ),
        (
            r#"{"clientId": "app", "clientSecret": 7}"#,
            "t.oauth.clientSecret must be a non-empty string",
        ),
        (
            r#"{"clientId": "app", "secret": "OAUTH_SECRET_2"}"#,
            "t.oauth: unknown field \"secret\"",
        ),
        (
            r#"{"clientId": "app", "scopes": "a b"}"#,
            "t.oauth.scopes must be a list of strings",
        ),
    ] {
        let text = format!(
            r#"{{"mcpServers": {{"t": {{"url": "https://t.example/mcp", "oauth": {oauth}}}}}}}"#
        );
        let error = parsed(&text).unwrap_err().to_string();
        assert!(
            error.contains(says) && !error.contains("OAUTH_SECRET_2"),
            "{error}"
        );
    }
}

#[test]
fn a_shared_store_is_a_postgresql_url_in_runtime_store() {
    let shared =
        parsed(r#"{"runtime": {"store": "postgres://ann:pw@db.example:5432/codemode"}}"#).unwrap();
    assert_eq!(
        shared.store.as_deref(),
        Some("postgres://ann:pw@db.example:5432/codemode")
    );
    assert_eq!(
        connectors::home::store_location(Path::new("/data"), Some(&shared)),
        codemode::StoreLocation::Postgres("postgres://ann:pw@db.example:5432/codemode".into())
    );
    let local = parsed("{}").unwrap();
    assert_eq!(local.store, None);
    let error = parsed(r#"{"runtime": {"store": "/srv/codemode.db"}}"#).unwrap_err();
    assert_eq!(
        error.message,
        "store must be a PostgreSQL URL such as \"postgres://user@host:5432/codemode\"; without it the store is codemode.db in the data directory"
    );
}

#[test]
fn keep_decided_for_is_a_duration_that_defaults_to_ninety_days() {
    let default = parsed(r#"{"runtime": {"maxExecutions": 50}}"#).unwrap();
    assert_eq!(
        default.runtime.keep_decided_for,
        Duration::from_secs(90 * 24 * 3600)
    );
    assert_eq!(
        parsed("{}").unwrap().runtime.keep_decided_for,
        Duration::from_secs(90 * 24 * 3600)
    );
    let week = parsed(r#"{"runtime": {"keepDecidedFor": "7d"}}"#).unwrap();
    assert_eq!(
        week.runtime.keep_decided_for,
        Duration::from_secs(7 * 24 * 3600)
    );
    let millis = parsed(r#"{"runtime": {"keepDecidedFor": 1500}}"#).unwrap();
    assert_eq!(millis.runtime.keep_decided_for, Duration::from_millis(1500));
    let wrong = parsed("{\n  \"runtime\": { \"keepDecidedFor\": \"forever\" }\n}").unwrap_err();
    assert_eq!(
        wrong.message,
        "keepDecidedFor must be a duration such as \"90d\", \"24h\" or \"0s\""
    );
    assert_eq!((wrong.line, wrong.column), (2, 16));
}

#[test]
fn a_preview_template_naming_a_gated_method_is_refused_on_load() {
    // A preview runs without a person every time a card is shown (docs/design.md, "Previews only read").
    let gated = parsed(
        r#"{"connectors": {"notes": {"command": "srv", "approval": ["create_note", "delete_note"],
            "preview": {"create_note": {"method": "delete_note", "args": {"id": "{{args.id}}"}}}}}}"#,
    )
    .unwrap_err();
    assert!(
        gated
            .to_string()
            .contains("notes.preview.create_note: names delete_note, which needs approval"),
        "{gated}"
    );
    let all_gated = parsed(
        r#"{"connectors": {"notes": {"command": "srv", "approval": "*",
            "preview": {"create_note": {"method": "read_note"}}}}}"#,
    )
    .unwrap_err();
    assert!(
        all_gated.to_string().contains("needs approval"),
        "{all_gated}"
    );
    let reads = parsed(
        r#"{"connectors": {"notes": {"command": "srv", "approval": ["create_note"], "readOnly": ["read_note"],
            "preview": {"create_note": {"method": "read_note", "args": {"id": "{{args.id}}"}}}}}}"#,
    )
    .expect("a read-only preview is kept");
    assert_eq!(reads.connectors[0].read_only, ["read_note"]);
}
