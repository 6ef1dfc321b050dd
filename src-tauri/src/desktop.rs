//! The app on the desktop beyond its window (docs/desktop.md): the tray icon with the waiting count and the
//! newest waiting calls, the window that closes to the tray (its web view destroyed, so a hidden console stays
//! light) and opens again on a run, and `codemode://run/<id>` links.

use crate::console::Console;
use codemode::PendingAction;
use serde::Serialize;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Emitter, Manager, Wry};

/// The tray icon's id (its D-Bus item path on Linux ends in it).
pub const TRAY: &str = "main";
/// The main window's label, as in tauri.conf.json.
pub const WINDOW: &str = "main";
/// Waiting calls listed in the tray menu, newest first.
const TRAY_CALLS: usize = 5;
/// How long "Pause notifications" lasts.
pub const NOTIFICATION_PAUSE: Duration = Duration::from_secs(3600);

/// A run the window should show: `approvals` while it waits for a decision, else `executions`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct OpenRun {
    pub id: String,
    pub view: &'static str,
}

/// What the desktop side keeps between events.
pub struct Desktop {
    menu: Menu<Wry>,
    /// The menu items of the waiting calls now listed (each item's id names the run it opens).
    calls: Mutex<Vec<MenuItem<Wry>>>,
    /// The queue the tray last showed.
    last_shown: Mutex<Option<Vec<(String, u64)>>>,
    pause_item: MenuItem<Wry>,
    /// Notifications are held back until then ("Pause notifications for 1 hour").
    paused_until: Mutex<Option<(Instant, SystemTime)>>,
    /// A run asked for before the window's page could listen (a link, a tray or notification click that
    /// created the window); the page takes it when it starts.
    open_request: Mutex<Option<OpenRun>>,
    /// When the window was last asked for, to report how long it took to become usable.
    window_asked: Mutex<Option<Instant>>,
}

/// Builds the tray icon and its menu; the waiting calls are filled in by [`Desktop::show_waiting`].
pub fn install(app: &AppHandle) -> tauri::Result<Desktop> {
    let pause_item = MenuItem::with_id(
        app,
        "pause",
        "Pause notifications for 1 hour",
        true,
        None::<&str>,
    )?;
    let open = MenuItem::with_id(app, "open", "Open Codemode Console", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &PredefinedMenuItem::separator(app)?,
            &pause_item,
            &open,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    let mut tray = TrayIconBuilder::with_id(TRAY)
        .menu(&menu)
        .tooltip("Codemode Console")
        .on_menu_event(|app, event| menu_clicked(app, event.id().as_ref()));
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.build(app)?;
    Ok(Desktop {
        menu,
        calls: Mutex::new(Vec::new()),
        last_shown: Mutex::new(None),
        pause_item,
        paused_until: Mutex::new(None),
        open_request: Mutex::new(None),
        window_asked: Mutex::new(None),
    })
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Desktop {
    /// The tray's label shows how many calls wait (nothing when none), and its menu the newest of them.
    pub fn show_waiting(&self, app: &AppHandle, pending: &[PendingAction]) {
        // The database moves with every call an agent makes; the tray changes only when the queue does.
        let shown: Vec<(String, u64)> = pending
            .iter()
            .map(|p| (p.execution_id.clone(), p.seq))
            .collect();
        {
            let mut last = lock(&self.last_shown);
            if last.as_ref() == Some(&shown) {
                return;
            }
            *last = Some(shown);
        }
        if let Some(tray) = app.tray_by_id(TRAY) {
            let label = (!pending.is_empty()).then(|| pending.len().to_string());
            let _ = tray.set_title(label.as_deref());
        }
        let mut calls = lock(&self.calls);
        // A menu cannot be replaced once the tray has it (Linux): its items are removed and inserted instead.
        for item in calls.drain(..) {
            let _ = self.menu.remove(&item);
        }
        for (position, action) in pending.iter().take(TRAY_CALLS).enumerate() {
            let text = format!("{}.{} — waiting", action.connector, action.method);
            let id = format!("run:{}", action.execution_id);
            if let Ok(item) = MenuItem::with_id(app, id, text, true, None::<&str>)
                && self.menu.insert(&item, position).is_ok()
            {
                calls.push(item);
            }
        }
        if pending.is_empty()
            && let Ok(item) =
                MenuItem::with_id(app, "none", "Nothing waits for you", false, None::<&str>)
            && self.menu.insert(&item, 0).is_ok()
        {
            calls.push(item);
        }
    }

    /// Whether notifications are held back now; an expired pause is cleared (and the menu says so again).
    pub fn notifications_paused(&self) -> bool {
        let mut paused = lock(&self.paused_until);
        match *paused {
            Some((until, _)) if Instant::now() < until => true,
            Some(_) => {
                *paused = None;
                let _ = self.pause_item.set_text("Pause notifications for 1 hour");
                false
            }
            None => false,
        }
    }

    fn toggle_pause(&self) {
        let mut paused = lock(&self.paused_until);
        if paused.is_some() {
            *paused = None;
            let _ = self.pause_item.set_text("Pause notifications for 1 hour");
        } else {
            let until = SystemTime::now() + NOTIFICATION_PAUSE;
            *paused = Some((Instant::now() + NOTIFICATION_PAUSE, until));
            let _ = self.pause_item.set_text(format!(
                "Resume notifications (paused until {})",
                clock_time(until)
            ));
        }
    }

    /// The run the page should open when it starts, if one was asked for.
    pub fn take_open_request(&self) -> Option<OpenRun> {
        lock(&self.open_request).take()
    }

    /// How long since the window was asked for, once (for `CODEMODE_TIMINGS`).
    pub fn window_ready(&self) -> Option<Duration> {
        lock(&self.window_asked).take().map(|at| at.elapsed())
    }
}

/// `HH:MM` of a wall-clock time, in UTC when the local offset is unknown.
fn clock_time(at: SystemTime) -> String {
    let secs = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as libc::time_t)
        .unwrap_or_default();
    // SAFETY: localtime_r writes only into the struct it is given.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    if unsafe { libc::localtime_r(&secs, &mut tm) }.is_null() {
        return format!("{:02}:{:02} UTC", (secs / 3600) % 24, (secs / 60) % 60);
    }
    format!("{:02}:{:02}", tm.tm_hour, tm.tm_min)
}

fn menu_clicked(app: &AppHandle, id: &str) {
    match id {
        "open" => show_window(app, None),
        "quit" => app.exit(0),
        "pause" => {
            if let Some(desktop) = app.try_state::<Desktop>() {
                desktop.toggle_pause();
            }
        }
        other => {
            if let Some(run) = other.strip_prefix("run:") {
                open_run(app, run);
            }
        }
    }
}

/// Shows the window on run `id` (approvals while it waits, executions otherwise).
pub fn open_run(app: &AppHandle, id: &str) {
    // On a runtime worker: the store's calls expect one (this may be the GTK thread or a blocking one).
    let asking = app.clone();
    let run = id.to_owned();
    let waiting = tauri::async_runtime::block_on(tauri::async_runtime::spawn(async move {
        match asking.state::<Console>().api().await {
            Ok(api) => api
                .pending(Some(&run))
                .map(|p| !p.is_empty())
                .unwrap_or(false),
            Err(_) => false,
        }
    }))
    .unwrap_or(false);
    let view = if waiting { "approvals" } else { "executions" };
    show_window(
        app,
        Some(OpenRun {
            id: id.to_owned(),
            view,
        }),
    );
}

/// Brings the window to the front, creating it (and its web view) when it was closed to the tray.
pub fn show_window(app: &AppHandle, run: Option<OpenRun>) {
    if let Some(window) = app.get_webview_window(WINDOW) {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
        if let Some(run) = run {
            let _ = app.emit("open-run", run);
        }
        return;
    }
    if let Some(desktop) = app.try_state::<Desktop>() {
        *lock(&desktop.open_request) = run;
        *lock(&desktop.window_asked) = Some(Instant::now());
    }
    if let Err(error) = create_window(app) {
        eprintln!("codemode-console: cannot open the window: {error}");
    }
}

/// The window closed to the tray: the app stands by (no warm sandbox worker), and the memory the web view
/// used is handed back to the system once WebKit has let go of it.
pub fn window_gone(app: &AppHandle) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        if let Ok(api) = app.state::<Console>().api().await {
            api.stand_by(true);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        if app.get_webview_window(WINDOW).is_none() {
            // SAFETY: malloc_trim only returns free heap pages to the system.
            unsafe { libc::malloc_trim(0) };
            release_file_pages();
        }
    });
}

/// Hands back to the kernel the pages of mapped files (WebKit's, Mesa's and LLVM's code, this binary's) that
/// only the window touched: with no web view they would sit resident all day. They are clean copies of files,
/// so nothing is lost: a page is read again when touched, as when the window opens next. Pages that another
/// process maps too are left alone by the kernel. See docs/desktop.md, "Closed to the tray".
fn release_file_pages() {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return;
    };
    for line in maps.lines() {
        // start-end perms offset dev inode path
        let mut fields = line.split_whitespace();
        let (Some(range), Some(_), Some(_), Some(_), Some(inode)) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            continue;
        };
        let path = fields.collect::<Vec<_>>().join(" ");
        if inode == "0"
            || !path.starts_with('/')
            || path.starts_with("/dev/")
            || path.ends_with("(deleted)")
        {
            continue;
        }
        let Some((start, end)) = range.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end)) = (
            usize::from_str_radix(start, 16),
            usize::from_str_radix(end, 16),
        ) else {
            continue;
        };
        // SAFETY: the range is a whole mapping of this process as the kernel lists it; MADV_PAGEOUT is advice
        // that leaves every byte as it was (an older kernel refuses it with EINVAL, which changes nothing).
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_PAGEOUT) };
    }
}

/// The main window as tauri.conf.json describes it (which does not create it at start, so that a start at
/// login can stay in the tray).
pub fn create_window(app: &AppHandle) -> tauri::Result<()> {
    let Some(config) = app.config().app.windows.iter().find(|w| w.label == WINDOW) else {
        return Ok(());
    };
    let window = tauri::WebviewWindowBuilder::from_config(app, config)?.build()?;
    let _ = window.set_focus();
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        if let Ok(api) = app.state::<Console>().api().await {
            api.stand_by(false);
        }
    });
    Ok(())
}

/// A `codemode://run/<id>` link among the arguments, as a desktop's URL handler passes it.
pub fn run_link(args: &[String]) -> Option<String> {
    args.iter().find_map(|arg| {
        let rest = arg.strip_prefix("codemode://")?;
        let id = rest.strip_prefix("run/")?.trim_end_matches('/');
        (!id.is_empty() && !id.contains('/')).then(|| id.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_links() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            run_link(&args(&["codemode-console", "codemode://run/exec_1_a"])),
            Some("exec_1_a".to_owned())
        );
        assert_eq!(
            run_link(&args(&["x", "codemode://run/exec_1_a/"])),
            Some("exec_1_a".to_owned())
        );
        assert_eq!(run_link(&args(&["x", "codemode://run/"])), None);
        assert_eq!(run_link(&args(&["x", "codemode://run/a/b"])), None);
        assert_eq!(run_link(&args(&["x", "--home", "/tmp/x"])), None);
    }
}
