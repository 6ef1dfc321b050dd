//! Each subcommand's handling: parse what the API cannot (files, statuses, durations), call it, render the
//! result.

mod arguments;
mod report;

pub(crate) use arguments::reject_targets;
pub(crate) use report::Report;

use crate::render;
use crate::{Command, DevicesCommand, RememberScope, RulesCommand, SnippetCommand, StoreCommand};
use arguments::{call_target, edited_args, json_argument, parse_duration};
use codemode::{Actor, ExecutionQuery, Outcome, SaveSnippet};
use codemode_api::{Api, ApiError};
use connectors::config::parse_age_text;
use report::{outcome_report, several};
use serde_json::{Value, json};
use std::io::Read;

/// Each subcommand: parse what the API cannot (files, statuses, durations), call it, render the result.
pub(crate) async fn command(api: &Api, command: Command) -> Result<Report, ApiError> {
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
