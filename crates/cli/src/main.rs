//! `codemode`: the command line over a data directory (SPEC §5) — run code, answer the approval queue, read the
//! audit log, manage snippets — and `codemode mcp`, the stdio MCP server agents connect to.

mod render;

use clap::{Parser, Subcommand};
use codemode::{Actor, ExecutionStatus, Outcome, SaveSnippet};
use codemode_cli::mcp_server;
use connectors::config::parse_age_text;
use connectors::{Home, HomeOptions};
use serde::Serialize;
use serde_json::{Value, json};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "codemode",
    version,
    about = "Durable Code Mode: run agent programs with a human approval gate, an audit log and rollback",
    after_help = "Data directory: --home DIR, else $CODEMODE_HOME, else ~/.local/share/codemode-console.\nExit codes: 0 success, 1 an error outcome or a failed operation, 2 bad usage."
)]
struct Cli {
    /// The data directory (database, connectors.json, workspace).
    #[arg(long, global = true, value_name = "DIR")]
    home: Option<PathBuf>,
    /// Print JSON on stdout instead of tables.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Execute a program (an async arrow function) from a file, or from stdin with `-`.
    Run {
        /// The program's file, or `-` for stdin.
        file: String,
    },
    /// Approve the pending call of a paused execution and resume it.
    Approve { id: String },
    /// Reject the pending call SEQ of a paused execution.
    Reject { id: String, seq: u64 },
    /// Undo the applied calls of an execution that have a revert; prints what was reverted, skipped, failed.
    Rollback { id: String },
    /// Re-run an execution interrupted by a crash (its unfinished call runs again).
    Recover { id: String },
    /// The approval queue: pending calls of paused executions, newest first.
    Pending { id: Option<String> },
    /// The audit log, newest first.
    Executions {
        /// At most N executions (after the status filter).
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Only executions with this status: running, paused, completed, error, rejected, rolled_back.
        #[arg(long, value_name = "S")]
        status: Option<String>,
    },
    /// One execution with its call log.
    Show { id: String },
    /// Delete one execution and what its connectors kept for rollback.
    Delete { id: String },
    /// Keep the newest N executions and delete the rest.
    Prune {
        /// Defaults to runtime.maxExecutions of connectors.json.
        #[arg(long, value_name = "N")]
        keep: Option<usize>,
    },
    /// Reject paused executions older than an age.
    Expire {
        /// `0s`, `90m`, `24h`, `7d`; defaults to runtime.pausedTtl of connectors.json.
        #[arg(long, value_name = "AGE")]
        max_age: Option<String>,
    },
    /// The snippet library.
    Snippets,
    /// Save or delete a snippet.
    #[command(subcommand)]
    Snippet(SnippetCommand),
    /// Search connector methods and snippets.
    Search { query: String },
    /// A connector, method or snippet with its TypeScript declarations.
    Describe { target: String },
    /// The configured connectors and their methods (starts MCP servers to list their tools).
    Connectors,
    /// Serve agents over MCP on stdin/stdout (tools `codemode` and `codemode_wait`).
    Mcp,
}

#[derive(Subcommand)]
enum SnippetCommand {
    /// Save the code of an execution as a reusable snippet.
    Save {
        name: String,
        /// The execution whose code is saved.
        #[arg(long, value_name = "ID")]
        from: String,
        #[arg(long, value_name = "D")]
        description: Option<String>,
    },
    /// Delete a snippet.
    Delete { name: String },
}

/// What a command produced: a JSON value for `--json`, a text for people, and whether it succeeded.
struct Report {
    json: Value,
    text: String,
    ok: bool,
}

impl Report {
    fn new(value: &impl Serialize, text: String, ok: bool) -> Self {
        Report {
            json: serde_json::to_value(value).unwrap_or(Value::Null),
            text,
            ok,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match codemode_cli::async_runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("codemode: cannot start: {e}");
            return ExitCode::from(1);
        }
    };
    let json = cli.json;
    let outcome = runtime.block_on(dispatch(cli));
    let report = match outcome {
        Ok(report) => report,
        Err(message) => Report {
            json: json!({ "error": message }),
            text: format!("error: {message}"),
            ok: false,
        },
    };
    if report.text.is_empty() && report.json.is_null() {
        // `codemode mcp`: stdout carried the protocol and nothing else.
    } else if json {
        println!("{}", report.json);
    } else if report.ok {
        println!("{}", render::visible(&report.text));
    } else {
        eprintln!("{}", render::visible(&report.text));
    }
    // Do not wait for MCP servers that ignore their closed stdin: they are in their own process groups and
    // are killed with them.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

async fn dispatch(cli: Cli) -> Result<Report, String> {
    let dir = connectors::home::resolve_dir(cli.home.as_deref());
    let keep_warm = matches!(cli.command, Command::Mcp);
    let home = Home::open(
        &dir,
        HomeOptions {
            keep_warm,
            ..HomeOptions::default()
        },
    )
    .await
    .map_err(|e| e.to_string())?;
    if let Command::Mcp = cli.command {
        mcp_server::serve(home).await?;
        return Ok(Report {
            json: Value::Null,
            text: String::new(),
            ok: true,
        });
    }
    let report = command(&home, cli.command).await;
    home.connectors.shutdown().await;
    report
}

async fn command(home: &Home, command: Command) -> Result<Report, String> {
    let runtime = &home.runtime;
    let error = |e: codemode::RuntimeError| e.to_string();
    Ok(match command {
        Command::Run { file } => {
            home.usable()?;
            let code = if file == "-" {
                let mut code = String::new();
                std::io::stdin()
                    .read_to_string(&mut code)
                    .map_err(|e| format!("cannot read the program from stdin: {e}"))?;
                code
            } else {
                std::fs::read_to_string(&file).map_err(|e| format!("cannot read {file}: {e}"))?
            };
            outcome_report(
                runtime
                    .execute_from(&code, Some("cli"))
                    .await
                    .map_err(error)?,
            )
        }
        Command::Approve { id } => {
            home.usable()?;
            outcome_report(runtime.approve(&id, Actor::Cli).await.map_err(error)?)
        }
        Command::Recover { id } => {
            home.usable()?;
            outcome_report(runtime.recover(&id).await.map_err(error)?)
        }
        Command::Reject { id, seq } => {
            known(home, &id)?;
            let rejected = runtime.reject(&id, seq, Actor::Cli).await.map_err(error)?;
            let text = if rejected {
                format!("rejected {id} call {seq}")
            } else {
                format!("{id} has no pending call {seq}: nothing rejected")
            };
            Report::new(
                &json!({ "executionId": id, "seq": seq, "rejected": rejected }),
                text,
                rejected,
            )
        }
        Command::Rollback { id } => {
            home.usable()?;
            known(home, &id)?;
            let report = runtime.rollback(&id).await.map_err(error)?;
            let ok = report.failed.is_empty();
            Report::new(&report, render::rollback(&report), ok)
        }
        Command::Pending { id } => {
            let pending = runtime.pending(id.as_deref()).map_err(error)?;
            Report::new(&pending, render::pending(&pending), true)
        }
        Command::Executions { limit, status } => {
            let status = match status {
                Some(s) => Some(parse_status(&s)?),
                None => None,
            };
            let mut executions: Vec<_> = runtime
                .executions(None)
                .map_err(error)?
                .into_iter()
                .filter(|e| status.is_none_or(|s| e.status == s))
                .collect();
            if let Some(limit) = limit {
                executions.truncate(limit);
            }
            Report::new(&executions, render::executions(&executions), true)
        }
        Command::Show { id } => {
            let execution = known(home, &id)?;
            Report::new(&execution, render::execution(&execution), true)
        }
        Command::Delete { id } => {
            let deleted = runtime.delete_execution(&id).await.map_err(error)?;
            let text = if deleted {
                format!("deleted {id}")
            } else {
                format!("no execution \"{id}\"")
            };
            Report::new(&json!({ "deleted": deleted }), text, deleted)
        }
        Command::Prune { keep } => {
            let keep = keep.unwrap_or(home.settings.max_executions);
            let deleted = runtime.prune_executions(keep).await.map_err(error)?;
            Report::new(
                &json!({ "deleted": deleted }),
                format!("deleted {deleted} execution(s), kept the newest {keep}"),
                true,
            )
        }
        Command::Expire { max_age } => {
            let age = match max_age {
                None => home.settings.paused_ttl,
                Some(text) => parse_age_text(&text).ok_or_else(|| {
                    format!("--max-age \"{text}\" is not a duration such as 0s, 90m, 24h or 7d")
                })?,
            };
            let expired = runtime.expire_paused(age).await.map_err(error)?;
            let text = if expired.is_empty() {
                "no paused execution is that old".to_owned()
            } else {
                format!("expired {}", expired.join(", "))
            };
            Report::new(&json!({ "expired": expired }), text, true)
        }
        Command::Snippets => {
            let snippets = runtime.snippets().map_err(error)?;
            Report::new(&snippets, render::snippets(&snippets), true)
        }
        Command::Snippet(SnippetCommand::Save {
            name,
            from,
            description,
        }) => {
            known(home, &from)?;
            let snippet = runtime
                .save_snippet(
                    &name,
                    SaveSnippet {
                        execution_id: from,
                        description,
                        input_schema: None,
                    },
                )
                .map_err(error)?;
            let text = format!("saved snippet \"{}\"", snippet.name);
            Report::new(&snippet, text, true)
        }
        Command::Snippet(SnippetCommand::Delete { name }) => {
            let deleted = runtime.delete_snippet(&name).map_err(error)?;
            let text = if deleted {
                format!("deleted snippet \"{name}\"")
            } else {
                format!("no snippet \"{name}\"")
            };
            Report::new(&json!({ "deleted": deleted }), text, deleted)
        }
        Command::Search { query } => {
            home.usable()?;
            let found = runtime.search(&query).await.map_err(error)?;
            Report::new(&found, render::search(&found), true)
        }
        Command::Describe { target } => {
            home.usable()?;
            let described = runtime.describe(&target).await.map_err(error)?;
            let text = serde_json::to_string_pretty(&described).unwrap_or_default();
            Report::new(&described, text, true)
        }
        Command::Connectors => {
            home.usable()?;
            let listing = render::connector_listing(home).await;
            let text = render::connectors(&listing);
            Report::new(&listing, text, true)
        }
        Command::Mcp => unreachable!("served by dispatch"),
    })
}

/// The execution, or the error every command gives for an unknown id.
fn known(home: &Home, id: &str) -> Result<codemode::ExecutionState, String> {
    home.runtime
        .execution(id)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("No execution \"{id}\""))
}

fn parse_status(text: &str) -> Result<ExecutionStatus, String> {
    serde_json::from_value(Value::String(text.to_owned())).map_err(|_| {
        format!(
            "unknown status \"{text}\" (running, paused, completed, error, rejected, rolled_back)"
        )
    })
}

fn outcome_report(outcome: Outcome) -> Report {
    let ok = !matches!(outcome, Outcome::Error { .. });
    Report::new(&outcome, render::outcome(&outcome), ok)
}
