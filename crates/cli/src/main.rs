//! `codemode`: the command line over a data directory (README "The command line", docs/api.md) — run code, answer the approval queue, read the
//! audit log, manage snippets — and `codemode mcp`, the stdio MCP server agents connect to.

mod commands;
mod render;

use clap::{Parser, Subcommand};
use codemode::ExecutionQuery;
use codemode_api::{Api, ApiError};
use codemode_cli::{mcp_server, phone_server};
use commands::{Report, command, reject_targets};
use connectors::{Home, HomeOptions};
use serde_json::{Value, json};
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
    /// Rerun an execution as a new one linked to it: the calls before --from are served the old run's
    /// recorded outcomes (nothing before it runs again) while the program makes the same calls; from there
    /// on it runs under today's rules and approvals.
    Rerun {
        id: String,
        /// The first call (its seq, as `show` numbers them) that runs anew; from the start without it.
        #[arg(long, value_name = "SEQ")]
        from: Option<u64>,
        /// Run this program instead of the old one (@FILE, or the code itself).
        #[arg(long, value_name = "@FILE")]
        code: Option<String>,
    },
    /// Approve the pending call of paused executions and resume them (several ids: each its own decision).
    /// `ID` decides the call waiting now; `ID:SEQ` (or `ID:SEQ:DIGEST`, from `pending --json`) only the call
    /// seen, and answers stale if the run now waits on another.
    Approve {
        #[arg(required = true, value_name = "ID")]
        ids: Vec<String>,
        /// Run the call with these arguments instead (JSON, or @FILE), checked against the tool's input
        /// schema; one execution only. The log keeps what the program sent.
        #[arg(long, value_name = "JSON|@FILE")]
        args: Option<String>,
        /// Also add an allow rule for this method: with these exact arguments, or any (one execution only).
        #[arg(long, value_name = "exact|method")]
        remember: Option<RememberScope>,
        /// With --remember: only for calls from the run's source.
        #[arg(long, requires = "remember")]
        for_source: bool,
        /// With --remember: for this long (`90m`, `24h`, `7d`); for good otherwise.
        #[arg(long = "for", value_name = "DURATION", requires = "remember")]
        for_duration: Option<String>,
    },
    /// Reject a pending call: `reject ID SEQ`, or several as `reject ID:SEQ [ID:SEQ…]`.
    Reject {
        #[arg(required = true, value_name = "ID SEQ | ID:SEQ…")]
        calls: Vec<String>,
        /// Why: appended to the run's error, which the agent reads ("… rejected by user: <reason>").
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
    /// Undo the applied calls of an execution that have a revert; prints what was reverted, skipped, failed.
    Rollback { id: String },
    /// Re-run an execution interrupted by a crash (its unfinished call runs again).
    Recover { id: String },
    /// On a shared store: take over a run whose host is gone, to decide and resume it on this host (which needs
    /// every connector the run was begun with).
    Adopt { id: String },
    /// The approval queue: pending calls of paused executions, newest first.
    Pending {
        id: Option<String>,
        /// Also show what each call would change (a diff for a file write).
        #[arg(long)]
        preview: bool,
    },
    /// The audit log, newest first.
    Executions {
        /// At most N executions (after the filters).
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        #[command(flatten)]
        filter: HistoryFilter,
    },
    /// How people decided: calls allowed, asked, denied and expired, the approval rate, the time to decide,
    /// and the calls approved most often with the rule that would let them through.
    Insights {
        /// Runs begun since this moment: RFC 3339 or a time back from now (7d, 12h). All runs by default.
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
    },
    /// Every run the filters select, with its calls and decisions, to stdout: JSON lines (one run a line,
    /// described by docs/export.schema.json) or CSV (one call a row).
    Export {
        /// jsonl or csv.
        #[arg(long, value_name = "F", default_value = "jsonl")]
        format: String,
        #[command(flatten)]
        filter: HistoryFilter,
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
    /// Policy rules: list them, or add, remove and test one (allow, ask or deny calls by connector, method,
    /// arguments and source).
    Rules {
        #[command(subcommand)]
        action: Option<RulesCommand>,
    },
    /// Search connector methods and snippets.
    Search { query: String },
    /// A connector, method or snippet with its TypeScript declarations.
    Describe { target: String },
    /// The configured connectors and their methods (starts MCP servers to list their tools).
    Connectors,
    /// Sign in to a remote MCP server with OAuth: prints the address to open in a browser and waits (up to
    /// 5 minutes) for it to come back; the tokens are kept owner-only in the data directory.
    Login {
        /// The connector's name in connectors.json.
        connector: String,
    },
    /// Forget a remote MCP server's sign-in.
    Logout {
        /// The connector's name in connectors.json.
        connector: String,
    },
    /// Serve agents over MCP on stdin/stdout (tools `codemode` and `codemode_wait`).
    Mcp,
    /// Serve the phone page over HTTPS until interrupted: paired phones see the queue and decide
    /// (docs/phone.md). Prints the address and the certificate authority's fingerprint.
    Serve {
        /// Where to listen; `0.0.0.0:8443` for phones on this network.
        #[arg(long, value_name = "ADDR:PORT", default_value = codemode_phone::DEFAULT_LISTEN)]
        listen: String,
    },
    /// The shared PostgreSQL store's people and permissions.
    #[command(subcommand)]
    Store(StoreCommand),
    /// Phones paired to approve from: list them, pair one, or revoke one.
    Devices {
        #[command(subcommand)]
        action: Option<DevicesCommand>,
    },
}

#[derive(Subcommand)]
enum StoreCommand {
    /// Make a PostgreSQL login an agent (runs programs, never decides), an approver (decides) or an admin
    /// (rules and retention too): prints the SQL, or runs it with --apply (as the tables' owner). From the
    /// first grant on, the server refuses a decision from anyone who is not an approver.
    Grant {
        #[arg(value_name = "agent|approver|admin")]
        role: String,
        /// The PostgreSQL login.
        user: String,
        /// Run the SQL on the store now instead of printing it.
        #[arg(long)]
        apply: bool,
    },
}

#[derive(Subcommand)]
enum DevicesCommand {
    /// A one-time code (and the link with it) that pairs a phone as NAME; it lasts 10 minutes.
    Pair { name: String },
    /// End a device's pairing: its next request is refused.
    Revoke { name: String },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum RememberScope {
    /// These exact arguments.
    Exact,
    /// Any arguments of the method.
    Method,
}

#[derive(Subcommand)]
enum RulesCommand {
    /// Add a rule: its JSON, or @FILE (`{"id", "effect": "allow"|"ask"|"deny", "call", "when"?, "source"?,
    /// "until"?, "reason"?}`).
    Add {
        #[arg(value_name = "JSON|@FILE")]
        rule: String,
        /// Also approve the calls already waiting that this (allow) rule matches, each its own decision.
        #[arg(long)]
        approve_waiting: bool,
    },
    /// Remove a rule added to the database.
    Remove { id: String },
    /// What the rules would do with a call, without running anything.
    Test {
        /// `connector.method`.
        call: String,
        /// The call's arguments as JSON (none when left out).
        #[arg(value_name = "ARGS_JSON")]
        args: Option<String>,
        /// The source the call would come from (`Claude Code`, `cli`…).
        #[arg(long, value_name = "S")]
        source: Option<String>,
    },
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

/// Which runs the history commands read (docs/history.md, "Filters").
#[derive(clap::Args, Debug)]
struct HistoryFilter {
    /// Only runs begun at or after this moment: RFC 3339 (2026-12-01T09:00:00Z, 2026-12-01) or a time back
    /// from now (7d, 12h, 30m).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only runs begun before this moment (the same forms).
    #[arg(long, value_name = "WHEN")]
    until: Option<String>,
    /// Only executions with this status: running, paused, completed, error, rejected, rolled_back.
    #[arg(long, value_name = "S")]
    status: Option<String>,
    /// Only runs that made a call matching CONNECTOR.METHOD, a glob (github.*, files.write_*).
    #[arg(long, value_name = "CONNECTOR.METHOD")]
    call: Option<String>,
    /// Only runs with a call decided by this person (alice) or this way (console, cli, device, rule, expiry).
    #[arg(long, value_name = "WHO")]
    decided_by: Option<String>,
    /// Only runs from this source, a glob ("Claude *", cli).
    #[arg(long, value_name = "SOURCE")]
    source: Option<String>,
}

impl HistoryFilter {
    fn query(&self, now: i64) -> Result<ExecutionQuery, ApiError> {
        codemode_api::HistoryFilter {
            since: self.since.clone(),
            until: self.until.clone(),
            status: self.status.clone(),
            call: self.call.clone(),
            decided_by: self.decided_by.clone(),
            source: self.source.clone(),
        }
        .query(now)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `reject`'s words are checked here so a malformed call is bad usage (exit 2), as clap reports its own.
    if let Command::Reject { calls, .. } = &cli.command
        && let Err(error) = reject_targets(calls)
    {
        use clap::CommandFactory;
        Cli::command()
            .error(clap::error::ErrorKind::ValueValidation, error.message)
            .exit();
    }
    let runtime = match codemode_cli::async_runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("codemode: cannot start: {e}");
            return ExitCode::from(1);
        }
    };
    let json = cli.json;
    let report = match runtime.block_on(dispatch(cli)) {
        Ok(report) => report,
        Err(error) => Report::failed(&error),
    };
    if report.text.is_empty() && report.json.is_null() {
        // `codemode mcp` and `codemode export`: stdout carried the protocol or the export, nothing else.
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

async fn dispatch(cli: Cli) -> Result<Report, ApiError> {
    let dir = connectors::home::resolve_dir(cli.home.as_deref());
    // `codemode mcp` lives as long as its client: it keeps a worker warm and serves as this machine's host
    // on a shared store. A one-shot command leaves both to such a process.
    let long_lived = matches!(cli.command, Command::Mcp | Command::Serve { .. });
    let options = HomeOptions {
        keep_warm: long_lived,
        serve_host: long_lived,
        // A command's JSON outcome lists the calls; `codemode mcp` reads them only for `includeCalls`.
        outcome_calls: !long_lived,
        ..HomeOptions::default()
    };
    let home = Home::open(&dir, options.clone()).await?;
    if let Command::Mcp = cli.command {
        mcp_server::serve_home(home, options)
            .await
            .map_err(ApiError::internal)?;
        return Ok(Report {
            json: Value::Null,
            text: String::new(),
            ok: true,
        });
    }
    if let Command::Serve { listen } = cli.command {
        let address = listen.parse().map_err(|_| {
            ApiError::invalid_args(format!(
                "--listen \"{listen}\" is not an address and port such as 127.0.0.1:8443 or 0.0.0.0:8443"
            ))
        })?;
        phone_server::serve(home, options, address).await?;
        return Ok(Report::new(
            &json!({ "stopped": true }),
            "codemode serve: stopped".to_owned(),
            true,
        ));
    }
    let api = Api::new(home);
    let report = command(&api, cli.command).await;
    api.shutdown().await;
    report
}
