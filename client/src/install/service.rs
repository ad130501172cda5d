//! The service unit for the platform: systemd user units (socket
//! activation) on Linux, a LaunchAgent (launchd socket activation) on
//! macOS. Files are planned and written like any other; the service
//! manager is then told, and a command that fails is reported, not fatal.

use std::path::Path;
use std::process::Command;

use super::files::{plan_file, plan_file_removal, Plan, SHARED};
use super::{Options, Outcome, Step};

/// The unit files for this platform, planned.
pub fn plan_units(options: &Options) -> Result<Vec<Plan>, String> {
    if cfg!(target_os = "macos") {
        let plist = launch_agent(&options.memd, &options.socket, &log(options));
        return Ok(vec![plan_file(&plist_path(options), &plist, SHARED)?]);
    }
    let dir = options.home.join(".config/systemd/user");
    let service = include_str!("../../../systemd/memd.service")
        .replace("%h/.cargo/bin/memd", &options.memd.display().to_string());
    Ok(vec![
        plan_file(
            &dir.join("memd.socket"),
            include_str!("../../../systemd/memd.socket"),
            SHARED,
        )?,
        plan_file(&dir.join("memd.service"), &service, SHARED)?,
    ])
}

/// The unit files for this platform, planned for removal (uninstall).
pub fn plan_removal(options: &Options) -> Result<Vec<Plan>, String> {
    if cfg!(target_os = "macos") {
        return Ok(vec![plan_file_removal(&plist_path(options))?]);
    }
    let dir = options.home.join(".config/systemd/user");
    Ok(vec![
        plan_file_removal(&dir.join("memd.socket"))?,
        plan_file_removal(&dir.join("memd.service"))?,
    ])
}

/// Tells the service manager to stop memd and forget it, before its units
/// are removed (reported, not fatal, like [`start`]).
pub fn stop(options: &Options) -> Vec<Step> {
    if cfg!(target_os = "macos") {
        let target = plist_path(options).display().to_string();
        return vec![run("launchctl", &["unload", "-w", &target])];
    }
    vec![run(
        "systemctl",
        &["--user", "disable", "--now", "memd.socket", "memd.service"],
    )]
}

/// Tells the service manager, once the units are written: systemd always
/// (enabling is idempotent), launchd when the LaunchAgent changed.
pub fn start(options: &Options, done: &[Step]) -> Vec<Step> {
    if cfg!(target_os = "macos") {
        let path = plist_path(options);
        let target = path.display().to_string();
        let changed = done
            .iter()
            .any(|s| s.target == target && s.outcome == Outcome::Written);
        if !changed {
            return Vec::new();
        }
        // An older version may be loaded: unload it first (failing is fine
        // when none is).
        let _ = Command::new("launchctl").args(["unload", &target]).output();
        return vec![run("launchctl", &["load", "-w", &target])];
    }
    vec![
        run("systemctl", &["--user", "daemon-reload"]),
        run("systemctl", &["--user", "enable", "--now", "memd.socket"]),
    ]
}

fn plist_path(options: &Options) -> std::path::PathBuf {
    options.home.join("Library/LaunchAgents/dev.memd.plist")
}

fn log(options: &Options) -> std::path::PathBuf {
    options.home.join("Library/Logs/memd.log")
}

/// The LaunchAgent template and the values in it that are replaced by the
/// user's paths.
const PLIST: &str = include_str!("../../../launchd/dev.memd.plist");
const PLIST_MEMD: &str = "<string>/usr/local/bin/memd</string>";
const PLIST_SOCKET: &str = "<string>/tmp/memd.sock</string>";
const PLIST_LOG: &str = "<string>/tmp/memd.log</string>";

/// The LaunchAgent for this user: memd's binary, the socket launchd
/// creates for it, and its log.
pub fn launch_agent(memd: &Path, socket: &Path, log: &Path) -> String {
    let string = |path: &Path| {
        format!(
            "<string>{}</string>",
            xml_escape(&path.display().to_string())
        )
    };
    PLIST
        .replace(PLIST_MEMD, &string(memd))
        .replace(PLIST_SOCKET, &string(socket))
        .replace(PLIST_LOG, &string(log))
}

fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Runs a service-manager command, reporting rather than failing: the
/// files are in place either way.
fn run(program: &str, args: &[&str]) -> Step {
    let line = format!("{program} {}", args.join(" "));
    match Command::new(program).args(args).output() {
        Ok(out) if out.status.success() => Step::new(line, Outcome::Ran),
        Ok(out) => Step {
            detail: Some(format!(
                "{}: run it yourself once a user session is up",
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            ..Step::new(line, Outcome::CouldNotRun)
        },
        Err(err) => Step {
            detail: Some(format!("{err}: run it yourself")),
            ..Step::new(line, Outcome::CouldNotRun)
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launch_agent_gets_the_users_paths() {
        for placeholder in [PLIST_MEMD, PLIST_SOCKET, PLIST_LOG] {
            assert_eq!(PLIST.matches(placeholder).count(), 1, "{placeholder}");
        }
        let plist = launch_agent(
            Path::new("/Users/me/.cargo/bin/memd"),
            Path::new("/var/folders/x1/T/memd.sock"),
            Path::new("/Users/me/Library/Logs/memd.log"),
        );
        assert!(plist.contains("<string>/Users/me/.cargo/bin/memd</string>"));
        assert!(plist.contains(
            "<key>SockPathName</key>\n      <string>/var/folders/x1/T/memd.sock</string>"
        ));
        assert!(plist.contains("<string>/Users/me/Library/Logs/memd.log</string>"));
        assert!(!plist.contains("/tmp/memd"), "{plist}");
    }

    #[test]
    fn paths_are_escaped_in_the_launch_agent() {
        let plist = launch_agent(
            Path::new("/Users/R&D <team>/memd"),
            Path::new("/tmp/s.sock"),
            Path::new("/tmp/l.log"),
        );
        assert!(plist.contains("<string>/Users/R&amp;D &lt;team&gt;/memd</string>"));
    }
}
