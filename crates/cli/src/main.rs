//! `codemode`: the command line over a data directory (README "The command line", docs/api.md) — run code, answer the approval queue, read the
//! audit log, manage snippets — and `codemode mcp`, the stdio MCP server agents connect to.

mod render;

use clap::{Parser, Subcommand};
use codemode::{Actor, CallRef, ExecutionQuery, Outcome, SaveSnippet};
use codemode_api::{Api, ApiError};
use codemode_cli::{mcp_server, phone_server};
use connectors::config::parse_age_text;
use connectors::{Home, HomeOptions};
use serde::Serialize;
use serde_json::{Value, json};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

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

    /// A failed operation: `{"error": message, "code": code}` with `--json`, the message on stderr otherwise.
    fn failed(error: &ApiError) -> Self {
        Report {
            json: json!({ "error": error.message, "code": error.code }),
            text: format!("error: {}", error.message),
            ok: false,
        }
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

/// Each subcommand: parse what the API cannot (files, statuses, durations), call it, render the result.
async fn command(api: &Api, command: Command) -> Result<Report, ApiError> {
    Ok(match command {
        Command::Run { file } => {
            let code = if file == "-" {
                let mut code = String::new();
                std::io::stdin().read_to_string(&mut code).map_err(|e| {
                    ApiError::invalid_args(format!("cannot read the program from stdin: {e}"))
                })?;
                code
            } else {
                std::fs::read_to_string(&file)
                    .map_err(|e| ApiError::invalid_args(format!("cannot read {file}: {e}")))?
            };
            outcome_report(api.run(&code, "cli").await?)
        }
        Command::Rerun { id, from, code } => {
            let code = match code.as_deref().map(|c| (c, c.strip_prefix('@'))) {
                None => None,
                Some((_, Some(file))) => Some(
                    std::fs::read_to_string(file)
                        .map_err(|e| ApiError::invalid_args(format!("cannot read {file}: {e}")))?,
                ),
                Some((code, None)) => Some(code.to_owned()),
            };
            let rerun = api.rerun(&id, from, code.as_deref()).await?;
            let ok = !matches!(rerun.outcome, Outcome::Error { .. });
            Report::new(&rerun, render::rerun(&rerun), ok)
        }
        Command::Approve {
            ids,
            args,
            remember,
            for_source,
            for_duration,
        } => {
            let edited = args.as_deref().map(edited_args).transpose()?;
            let remember = match remember {
                None => None,
                Some(scope) => Some(codemode::AllowIntent {
                    exact: matches!(scope, RememberScope::Exact),
                    only_source: for_source,
                    for_ms: for_duration
                        .as_deref()
                        .map(parse_duration)
                        .transpose()?
                        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                    ..codemode::AllowIntent::default()
                }),
            };
            let targets = ids
                .iter()
                .map(|word| call_target(word))
                .collect::<Result<Vec<_>, _>>()?;
            match targets.as_slice() {
                [(id, shown)] if remember.is_some() => {
                    let remember = remember.unwrap_or_default();
                    let allowed = api
                        .approve_allowing(id, shown.as_ref(), Actor::Cli, edited, &remember, false)
                        .await?;
                    let rule = allowed.rule;
                    let mut report = outcome_report(allowed.outcome);
                    if let Value::Object(object) = &mut report.json {
                        object.insert("remembered".to_owned(), json!(rule));
                    }
                    report
                        .text
                        .push_str(&format!("\nremembered as rule \"{}\"", rule.id));
                    report
                }
                [(id, shown)] => outcome_report(
                    api.approve_call(id, shown.as_ref(), Actor::Cli, edited)
                        .await?,
                ),
                _ if remember.is_some() => {
                    return Err(ApiError::invalid_args(
                        "--remember remembers one call: give one execution id with it",
                    ));
                }
                _ if edited.is_some() => {
                    return Err(ApiError::invalid_args(
                        "--args edits one call: give one execution id with it",
                    ));
                }
                _ => {
                    let mut outcomes = Vec::with_capacity(targets.len());
                    for (id, shown) in &targets {
                        outcomes.push(api.approve_call(id, shown.as_ref(), Actor::Cli, None).await);
                    }
                    several(
                        targets
                            .iter()
                            .zip(outcomes)
                            .map(|((id, _), outcome)| (id.as_str(), outcome.map(outcome_report))),
                    )
                }
            }
        }
        Command::Recover { id } => outcome_report(api.recover(&id).await?),
        Command::Adopt { id } => {
            let execution = api.adopt(&id)?;
            Report::new(
                &execution,
                format!("adopted {id}: it now belongs to this host"),
                true,
            )
        }
        Command::Reject { calls, reason } => {
            let calls = reject_targets(&calls)?;
            let mut results = Vec::with_capacity(calls.len());
            for (id, seq, digest) in &calls {
                let rejected = api
                    .reject_call(id, *seq, digest.as_deref(), Actor::Cli, reason.as_deref())
                    .await;
                results.push(rejected);
            }
            let reports = calls.iter().zip(results).map(|((id, seq, _), result)| {
                let report = result.map(|()| {
                    Report::new(
                        &json!({ "executionId": id, "seq": seq, "rejected": true }),
                        format!("rejected {id} call {seq}"),
                        true,
                    )
                });
                (id.as_str(), report)
            });
            match calls.as_slice() {
                [_] => reports
                    .map(|(_, report)| report)
                    .next()
                    .unwrap_or_else(|| Err(ApiError::invalid_args("nothing to reject")))?,
                _ => several(reports),
            }
        }
        Command::Login { connector } => {
            api.sign_in(&connector, |address| {
                // On stderr, so that stdout keeps only the result (and `--json` stays one document).
                eprintln!(
                    "Open this address in a browser to sign in to \"{connector}\":\n\n  {address}\n"
                );
                eprintln!("Waiting for the browser to come back…");
            })
            .await?;
            Report::new(
                &json!({ "connector": connector, "signedIn": true }),
                format!("signed in to \"{connector}\""),
                true,
            )
        }
        Command::Logout { connector } => {
            let was = api.sign_out(&connector).await?;
            let text = if was {
                format!("signed out of \"{connector}\"")
            } else {
                format!("\"{connector}\" was not signed in")
            };
            Report::new(
                &json!({ "connector": connector, "signedOut": was }),
                text,
                true,
            )
        }
        Command::Rollback { id } => {
            let report = api.rollback(&id).await?;
            let ok = report.failed.is_empty();
            Report::new(&report, render::rollback(&report), ok)
        }
        Command::Pending { id, preview: false } => {
            let pending = api.pending(id.as_deref())?;
            Report::new(&pending, render::pending(&pending), true)
        }
        Command::Pending { id, preview: true } => {
            let pending = api.pending_previews(id.as_deref()).await?;
            Report::new(&pending, render::pending_previews(&pending), true)
        }
        Command::Executions { limit, filter } => {
            let query = ExecutionQuery {
                limit,
                ..filter.query(api.now_ms())?
            };
            let executions = api.executions_with_logs(&query)?;
            Report::new(&executions, render::executions(&executions), true)
        }
        Command::Insights { since } => {
            let insights = api.insights_since(since)?;
            Report::new(&insights, render::insights(&insights), true)
        }
        Command::Export { format, filter } => {
            let format = codemode_api::ExportFormat::parse(&format)?;
            let query = filter.query(api.now_ms())?;
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            let exported = api.export(&query, format, &mut out)?;
            drop(out);
            eprintln!("exported {} runs, {} calls", exported.runs, exported.calls);
            // stdout carried the export and nothing else.
            Report {
                json: Value::Null,
                text: String::new(),
                ok: true,
            }
        }
        Command::Show { id } => {
            let execution = api.execution(&id)?;
            Report::new(&execution, render::execution(&execution), true)
        }
        Command::Delete { id } => {
            api.delete(&id).await?;
            Report::new(&json!({ "deleted": true }), format!("deleted {id}"), true)
        }
        Command::Prune { keep } => {
            let deleted = api.prune(keep).await?;
            let keep = keep.unwrap_or(api.settings().max_executions);
            Report::new(
                &json!({ "deleted": deleted }),
                format!("deleted {deleted} execution(s), kept the newest {keep}"),
                true,
            )
        }
        Command::Expire { max_age } => {
            let max_age = match max_age {
                None => None,
                Some(text) => Some(parse_age_text(&text).ok_or_else(|| {
                    ApiError::invalid_args(format!(
                        "--max-age \"{text}\" is not a duration such as 0s, 90m, 24h or 7d"
                    ))
                })?),
            };
            let expired = api.expire(max_age).await?;
            let text = if expired.is_empty() {
                "no paused execution is that old".to_owned()
            } else {
                format!("expired {}", expired.join(", "))
            };
            Report::new(&json!({ "expired": expired }), text, true)
        }
        Command::Snippets => {
            let snippets = api.snippets()?;
            Report::new(&snippets, render::snippets(&snippets), true)
        }
        Command::Snippet(SnippetCommand::Save {
            name,
            from,
            description,
        }) => {
            let snippet = api.save_snippet(
                &name,
                SaveSnippet {
                    execution_id: from,
                    description,
                    input_schema: None,
                },
            )?;
            let text = format!("saved snippet \"{}\"", snippet.name);
            Report::new(&snippet, text, true)
        }
        Command::Snippet(SnippetCommand::Delete { name }) => {
            api.delete_snippet(&name)?;
            Report::new(
                &json!({ "deleted": true }),
                format!("deleted snippet \"{name}\""),
                true,
            )
        }
        Command::Rules { action: None } => {
            let rules = api.rules()?;
            Report::new(&rules, render::rules(&rules), true)
        }
        Command::Rules {
            action:
                Some(RulesCommand::Add {
                    rule,
                    approve_waiting,
                }),
        } => {
            let value = json_argument("the rule", &rule)?;
            let rule = codemode::Rule::from_value(value)
                .map_err(|e| ApiError::invalid_args(e.to_string()))?;
            let id = rule.id.clone();
            api.add_rule(rule, Actor::Cli)?;
            if !approve_waiting {
                return Ok(Report::new(
                    &json!({ "added": id }),
                    format!("added rule \"{id}\""),
                    true,
                ));
            }
            let decided = api.approve_waiting(&id).await?;
            let approved = several(
                decided
                    .iter()
                    .map(|(run, outcome)| (run.as_str(), outcome.clone().map(outcome_report))),
            );
            Report {
                json: json!({ "added": id, "approved": approved.json }),
                text: format!(
                    "added rule \"{id}\"; approved {} waiting call(s){}{}",
                    decided.len(),
                    if decided.is_empty() { "" } else { ":\n" },
                    approved.text
                ),
                ok: approved.ok,
            }
        }
        Command::Rules {
            action: Some(RulesCommand::Remove { id }),
        } => {
            api.remove_rule(&id)?;
            Report::new(
                &json!({ "removed": id }),
                format!("removed rule \"{id}\""),
                true,
            )
        }
        Command::Rules {
            action: Some(RulesCommand::Test { call, args, source }),
        } => {
            let args = args
                .as_deref()
                .map(|a| json_argument("ARGS_JSON", a))
                .transpose()?;
            let verdict = api
                .test_rules(&call, args.as_ref(), source.as_deref())
                .await?;
            let text = match &verdict.rule {
                Some(rule) => format!("{} (rule \"{rule}\")", verdict.effect.as_str()),
                None => format!(
                    "{} (no rule matches: the connector's approval list decides)",
                    verdict.effect.as_str()
                ),
            };
            Report::new(&verdict, text, true)
        }
        Command::Search { query } => {
            let found = api.search(&query).await?;
            Report::new(&found, render::search(&found), true)
        }
        Command::Describe { target } => {
            let described = api.describe(&target).await?;
            let text = serde_json::to_string_pretty(&described).unwrap_or_default();
            Report::new(&described, text, true)
        }
        Command::Connectors => {
            let listing = api.connectors().await;
            let text = render::connectors(&listing, api.config_error());
            Report::new(&listing, text, true)
        }
        Command::Store(StoreCommand::Grant { role, user, apply }) => {
            let grant = api.store_grant(&role, &user, apply)?;
            let text = if grant.applied {
                format!("\"{}\" is now {} on this store", grant.user, grant.role)
            } else {
                grant.sql.clone()
            };
            Report::new(&grant, text, true)
        }
        Command::Devices { action: None } => {
            let devices = api.devices()?;
            Report::new(&devices, render::devices(&devices), true)
        }
        Command::Devices {
            action: Some(DevicesCommand::Pair { name }),
        } => {
            let pairing = api.pair_device(&name)?;
            let serving = codemode_phone::Serving::of(api.dir());
            let url = match &serving {
                Some(serving) => serving.url.clone(),
                None => codemode_phone::url_for(everywhere()),
            };
            let fingerprint = codemode_phone::Authority::of(api.dir())
                .map_err(|e| ApiError::internal(e.to_string()))?
                .fingerprint();
            let link = codemode_phone::pairing_link(&url, &pairing.code);
            let text = render::pairing(&pairing, &link, &fingerprint, serving.is_none());
            Report::new(
                &json!({
                    "name": pairing.name,
                    "code": pairing.code,
                    "expiresAt": pairing.expires_at,
                    "link": link,
                    "fingerprint": fingerprint,
                    "served": serving.is_some(),
                }),
                text,
                true,
            )
        }
        Command::Devices {
            action: Some(DevicesCommand::Revoke { name }),
        } => {
            api.revoke_device(&name)?;
            Report::new(
                &json!({ "revoked": name }),
                format!("revoked \"{name}\": its next request is refused"),
                true,
            )
        }
        Command::Mcp | Command::Serve { .. } => unreachable!("served by dispatch"),
    })
}

/// Every interface on the default port: where `codemode serve --listen 0.0.0.0:8443` would be reached.
fn everywhere() -> std::net::SocketAddr {
    std::net::SocketAddr::from(([0, 0, 0, 0], 8443))
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

/// Several decisions: a JSON array in the given order (a refused one as `{executionId, error, code}`), one
/// line each in text; not ok if any failed.
fn several<'a>(reports: impl Iterator<Item = (&'a str, Result<Report, ApiError>)>) -> Report {
    let (mut json, mut text, mut ok) = (Vec::new(), Vec::new(), true);
    for (id, report) in reports {
        match report {
            Ok(report) => {
                ok &= report.ok;
                json.push(report.json);
                text.push(report.text);
            }
            Err(error) => {
                ok = false;
                json.push(json!({ "executionId": id, "error": error.message, "code": error.code }));
                text.push(format!("{id}: error: {}", error.message));
            }
        }
    }
    Report {
        json: Value::Array(json),
        text: text.join("\n"),
        ok,
    }
}

/// `ID SEQ`, or `ID:SEQ…` (ids hold no `:`).
/// `ID`, `ID:SEQ` or `ID:SEQ:DIGEST`: the run, and the call a person saw in `codemode pending` — a decision
/// on a call that no longer waits as seen is `stale` (docs/design.md, "A decision names its call").
fn call_target(word: &str) -> Result<(String, Option<CallRef>), ApiError> {
    let mut parts = word.splitn(3, ':');
    let id = parts.next().unwrap_or_default().to_owned();
    let bad = || {
        ApiError::invalid_args(format!(
            "\"{word}\" is not ID, ID:SEQ or ID:SEQ:DIGEST (as `codemode pending --json` gives them)"
        ))
    };
    let seq = match parts.next() {
        None => return Ok((id, None)),
        Some(seq) => seq.parse::<u64>().map_err(|_| bad())?,
    };
    let digest = parts.next().map(str::to_owned);
    if id.is_empty() || digest.as_deref().is_some_and(str::is_empty) {
        return Err(bad());
    }
    Ok((id, Some(CallRef { seq, digest })))
}

/// `ID SEQ`, or one or more `ID:SEQ[:DIGEST]`.
fn reject_targets(words: &[String]) -> Result<Vec<(String, u64, Option<String>)>, ApiError> {
    if let [id, seq] = words
        && !id.contains(':')
        && let Ok(seq) = seq.parse()
    {
        return Ok(vec![(id.clone(), seq, None)]);
    }
    words
        .iter()
        .map(|word| match call_target(word)? {
            (id, Some(call)) => Ok((id, call.seq, call.digest)),
            (_, None) => Err(ApiError::invalid_args(format!(
                "\"{word}\" is not ID:SEQ (or give one ID and its SEQ)"
            ))),
        })
        .collect()
}

/// `90m`, `24h`, `7d`.
fn parse_duration(text: &str) -> Result<Duration, ApiError> {
    parse_age_text(text).ok_or_else(|| {
        ApiError::invalid_args(format!(
            "\"{text}\" is not a duration such as 90m, 24h or 7d"
        ))
    })
}

/// `--args`: JSON, or `@FILE` holding JSON.
fn edited_args(text: &str) -> Result<Value, ApiError> {
    json_argument("--args", text)
}

/// An argument that is JSON, or `@FILE` holding JSON; `what` names it in errors.
fn json_argument(what: &str, text: &str) -> Result<Value, ApiError> {
    let (what, json) = match text.strip_prefix('@') {
        Some(file) => (
            file.to_owned(),
            std::fs::read_to_string(file)
                .map_err(|e| ApiError::invalid_args(format!("cannot read {file}: {e}")))?,
        ),
        None => (what.to_owned(), text.to_owned()),
    };
    serde_json::from_str(&json)
        .map_err(|e| ApiError::invalid_args(format!("{what} is not JSON: {e}")))
}

fn outcome_report(outcome: Outcome) -> Report {
    let ok = !matches!(outcome, Outcome::Error { .. });
    Report::new(&outcome, render::outcome(&outcome), ok)
}
