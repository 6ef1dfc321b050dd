//! The XDG autostart entry that starts the console at login, in the tray (docs/desktop.md).

use std::path::PathBuf;

/// The XDG autostart entry that starts the console at login, in the tray.
pub fn autostart_file() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(config.join("autostart").join("codemode-console.desktop"))
}

/// Writes or removes the autostart entry; `home` is the `--home` this app was started with, kept so that a
/// start at login opens the same data directory.
pub fn set_autostart(enabled: bool, home: Option<&std::path::Path>) -> std::io::Result<()> {
    let Some(file) = autostart_file() else {
        return Err(std::io::Error::other(
            "neither XDG_CONFIG_HOME nor HOME is set",
        ));
    };
    if !enabled {
        return match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    let exe = std::env::current_exe()?;
    let mut exec = format!("{} --hidden", desktop_quote(&exe.display().to_string()));
    if let Some(home) = home {
        exec.push_str(&format!(
            " --home {}",
            desktop_quote(&home.display().to_string())
        ));
    }
    let entry = format!(
        "[Desktop Entry]\nType=Application\nName=Codemode Console\nComment=Approve what AI agents do\n\
         Exec={exec}\nIcon=codemode-console\nTerminal=false\nStartupNotify=false\nX-GNOME-Autostart-enabled=true\n"
    );
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let partial = file.with_extension("desktop.partial");
    std::fs::write(&partial, entry)?;
    std::fs::rename(&partial, &file)
}

/// An `Exec` argument quoted as the Desktop Entry specification asks.
fn desktop_quote(arg: &str) -> String {
    if arg
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        return arg.to_owned();
    }
    let mut quoted = String::from("\"");
    for c in arg.chars() {
        if matches!(c, '"' | '`' | '$' | '\\') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted.replace('%', "%%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_arguments_are_quoted() {
        assert_eq!(
            desktop_quote("/usr/bin/codemode-console"),
            "/usr/bin/codemode-console"
        );
        assert_eq!(desktop_quote("/home/a b/x"), "\"/home/a b/x\"");
        assert_eq!(desktop_quote("/x/$y\"%"), "\"/x/\\$y\\\"%%\"");
    }
}
