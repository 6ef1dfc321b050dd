//! Codemode Console: the desktop app. A thin Tauri layer over `crates/api` (`codemode_api`) — commands that
//! parse, call the API and return its answer or its `{code, message}` error, and a watcher that pushes changes
//! made by any process to the window.

// The console is a windowed app on every platform.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod autostart;
mod commands;
mod console;
mod desktop;
mod live;
mod notifications;
mod settings_file;

use console::Console;
use std::path::PathBuf;
use tauri::Manager;

fn main() {
    // Without a display GTK cannot start, and tao would panic with a backtrace (over SSH, in a container);
    // say what is missing instead.
    if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        eprintln!(
            "codemode-console: no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is \
             set). Start it in a desktop session; agents can use `codemode mcp` meanwhile."
        );
        std::process::exit(1);
    }
    // GTK's own OpenGL is not needed to show the page (WebKit renders in its web process) and costs the main
    // process a GL driver (~30 MiB with Mesa) for as long as it lives, the tray included (docs/desktop.md).
    if std::env::var_os("GDK_GL").is_none() {
        // SAFETY: first thing in main, before any thread exists.
        unsafe { std::env::set_var("GDK_GL", "disable") };
    }
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
    let args: Vec<String> = std::env::args().collect();
    let hidden = args.iter().any(|a| a == "--hidden");
    let link = desktop::run_link(&args);
    let console = runtime.block_on(Console::open(dir, home_flag));
    let built = tauri::Builder::default()
        // First, so that a second start hands its arguments to this one and exits before doing anything.
        .plugin(tauri_plugin_single_instance::init(
            |app, args, _cwd| match desktop::run_link(&args) {
                Some(id) => desktop::open_run(app, &id),
                None => desktop::show_window(app, None),
            },
        ))
        .manage(console)
        .on_window_event(|window, event| {
            if window.label() == desktop::WINDOW && matches!(event, tauri::WindowEvent::Destroyed) {
                desktop::window_gone(window.app_handle());
            }
        })
        .setup(move |app| {
            let handle = app.handle().clone();
            let tray = match desktop::install(&handle) {
                Ok(tray) => {
                    app.manage(tray);
                    true
                }
                // Without a tray (no appindicator library) the app still works; closing its window then
                // quits it, and `--hidden` is ignored (an app with neither would be out of reach).
                Err(error) => {
                    eprintln!("codemode-console: no tray icon: {error}");
                    false
                }
            };
            live::start(handle.clone());
            // The phone page, if it was on when the app last ran.
            let phone_app = handle.clone();
            tauri::async_runtime::spawn(async move {
                let console = phone_app.state::<Console>();
                if console.phone_wanted()
                    && let Err(error) = console.set_phone(true).await
                {
                    eprintln!("codemode-console: the phone page: {}", error.message);
                }
            });
            match link {
                Some(id) => desktop::open_run(&handle, &id),
                None if !hidden || !tray => desktop::show_window(&handle, None),
                None => {}
            }
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::overview,
            commands::pending,
            commands::approval_card,
            commands::execution,
            commands::list_executions,
            commands::export_executions,
            commands::rerun_execution,
            commands::insights,
            commands::approve,
            commands::reject,
            commands::rollback,
            commands::recover,
            commands::adopt,
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
            commands::allow_reach,
            commands::approve_allowing,
            commands::rules,
            commands::add_rule,
            commands::replace_rule,
            commands::remove_rule,
            commands::test_rules,
            commands::recent_calls,
            commands::render_preview,
            commands::take_open_request,
            commands::phone,
            commands::set_phone,
            commands::pair_phone,
            commands::revoke_phone,
            commands::add_server,
            commands::configured_connectors,
            commands::add_pasted,
            commands::remove_connector,
            commands::test_server,
            commands::set_method_flag,
            commands::set_template,
            commands::sign_in,
            commands::sign_out,
        ])
        .build(tauri::generate_context!());
    let app = match built {
        Ok(app) => app,
        Err(error) => {
            eprintln!("codemode-console: {error}");
            std::process::exit(1);
        }
    };
    app.run(|app, event| {
        // The last window closed: stay in the tray (the window and its web view are gone; the tray opens a
        // new one) unless the person turned that off or there is no tray. Quit from the tray exits with a code.
        if let tauri::RunEvent::ExitRequested {
            code: None, api, ..
        } = event
        {
            let console = app.state::<Console>();
            if app.try_state::<desktop::Desktop>().is_some() && console.preferences().close_to_tray
            {
                api.prevent_exit();
            }
        }
    });
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
