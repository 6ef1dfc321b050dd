//! Codemode Console: the desktop app. A thin Tauri layer over `crates/api` (`codemode_api`) — commands that
//! parse, call the API and return its answer or its `{code, message}` error, and a watcher that pushes changes
//! made by any process to the window.

// The console is a windowed app on every platform.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod console;
mod live;

use console::Console;
use std::path::PathBuf;

fn main() {
    let home_flag = home_flag();
    let dir = connectors::home::resolve_dir(home_flag.as_deref());
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("codemode-console: cannot start: {e}");
            std::process::exit(1);
        }
    };
    tauri::async_runtime::set(runtime.handle().clone());
    let console = runtime.block_on(Console::open(dir));
    let result = tauri::Builder::default()
        .plugin(tauri_plugin_store::Builder::new().build())
        .manage(console)
        .setup(|app| {
            live::start(app.handle().clone());
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::overview,
            commands::pending,
            commands::execution,
            commands::list_executions,
            commands::approve,
            commands::reject,
            commands::rollback,
            commands::recover,
            commands::delete_execution,
            commands::run_program,
            commands::snippets,
            commands::save_snippet,
            commands::delete_snippet,
            commands::connectors,
            commands::settings,
            commands::save_runtime_settings,
            commands::save_preferences,
            commands::rollback_preview,
            commands::preview,
            commands::approve_many,
            commands::reject_many,
            commands::check_edit,
            commands::rule_reach,
            commands::approve_allowing,
            commands::rules,
            commands::add_rule,
            commands::replace_rule,
            commands::remove_rule,
            commands::test_rules,
            commands::recent_calls,
            commands::render_preview,
        ])
        .run(tauri::generate_context!());
    if let Err(error) = result {
        eprintln!("codemode-console: {error}");
        std::process::exit(1);
    }
}

/// `--home DIR` (or `--home=DIR`), as the CLI takes it.
fn home_flag() -> Option<PathBuf> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--home" {
            return args.next().map(PathBuf::from);
        }
        if let Some(dir) = arg.strip_prefix("--home=") {
            return Some(PathBuf::from(dir));
        }
    }
    None
}
