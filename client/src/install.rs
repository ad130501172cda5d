//! `memctl install`: memd's hooks into Claude Code's `settings.json` (user
//! or project) and Codex CLI's hooks file, merged with what is there, and
//! the service unit for the platform. Idempotent: a second run changes
//! nothing. A file that is changed is backed up first; `--dry-run` prints
//! the changes and writes nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Map, Value};

use crate::codex_config;

/// The timeout (seconds) the harness allows a hook.
const HOOK_TIMEOUT_SECS: u64 = 5;

/// The hook events memd is installed for in each harness. Codex CLI has no
/// SessionEnd; its Stop ends each turn, and records the session.
fn events(harness: &str) -> &'static [&'static str] {
    match harness {
        "codex" => &["SessionStart", "UserPromptSubmit", "Stop"],
        _ => &["SessionStart", "UserPromptSubmit", "SessionEnd"],
    }
}

/// Whether a hook command is memd's for this harness and event.
fn is_ours(hook: &Value, harness: &str, event: &str) -> bool {
    hook["command"]
        .as_str()
        .is_some_and(|c| c.contains("memctl") && c.contains(&format!("hook {harness} {event}")))
}

/// What to install.
pub struct Options {
    pub home: PathBuf,
    /// Project-level Claude Code settings in this repository, instead of
    /// the user's.
    pub project: Option<PathBuf>,
    pub dry_run: bool,
    pub service: bool,
    /// `--agent ROLE` passed to the hooks.
    pub agent: Option<String>,
    /// The `memctl` and `memd` the hooks and units should run.
    pub memctl: PathBuf,
    pub memd: PathBuf,
    /// The socket `memctl` talks to, which the LaunchAgent has launchd
    /// create.
    pub socket: PathBuf,
}

/// The hook command for one harness and event.
fn command(options: &Options, harness: &str, event: &str) -> String {
    let mut cmd = format!("{} hook {harness} {event}", options.memctl.display());
    if let Some(agent) = &options.agent {
        cmd.push_str(&format!(" --agent {agent}"));
    }
    cmd
}

/// Adds memd's hooks to a settings document, keeping everything else.
/// Returns whether anything changed.
pub fn merge_hooks(doc: &mut Value, options: &Options, harness: &str) -> Result<bool, String> {
    let root = doc
        .as_object_mut()
        .ok_or("the settings file is not a JSON object")?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks
        .as_object_mut()
        .ok_or("`hooks` is not a JSON object")?;
    let mut changed = false;
    for &event in events(harness) {
        let list = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let list = list
            .as_array_mut()
            .ok_or(format!("`hooks.{event}` is not a list"))?;
        let present = list.iter().any(|group| {
            group["hooks"]
                .as_array()
                .is_some_and(|hs| hs.iter().any(|h| is_ours(h, harness, event)))
        });
        if !present {
            list.push(json!({
                "hooks": [{"type": "command", "command": command(options, harness, event), "timeout": HOOK_TIMEOUT_SECS}]
            }));
            changed = true;
        }
    }
    // memd's hooks for events this harness does not have (an earlier
    // version installed SessionEnd for Codex) are taken out; nobody else's.
    let mut emptied = Vec::new();
    for (event, list) in hooks.iter_mut() {
        if events(harness).contains(&event.as_str()) {
            continue;
        }
        let Some(list) = list.as_array_mut() else {
            continue;
        };
        let mut removed = false;
        list.retain_mut(|group| {
            let Some(hs) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = hs.len();
            hs.retain(|h| !is_ours(h, harness, event));
            if hs.len() == before {
                return true;
            }
            removed = true;
            // A group that held only memd's hook goes with it.
            !hs.is_empty()
        });
        changed |= removed;
        if removed && list.is_empty() {
            emptied.push(event.clone());
        }
    }
    for event in emptied {
        hooks.remove(&event);
    }
    Ok(changed)
}

/// Writes `content` to `path` unless it is already that: backs up an
/// existing file first. Returns a line describing what happened.
fn write_file(path: &Path, content: &str, dry_run: bool) -> Result<String, String> {
    let old = std::fs::read_to_string(path).ok();
    if old.as_deref() == Some(content) {
        return Ok(format!("{}: unchanged", path.display()));
    }
    if dry_run {
        return Ok(format!("{}: would write\n{content}", path.display()));
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let mut line = format!("{}: written", path.display());
    if old.is_some() {
        let backup = PathBuf::from(format!("{}.memd-backup-{}", path.display(), now_stamp()));
        std::fs::copy(path, &backup).map_err(|e| format!("backing up {}: {e}", path.display()))?;
        line.push_str(&format!(" (backup: {})", backup.display()));
    }
    // Atomic: a temporary file beside it, renamed over.
    let tmp = path.with_extension("memd-tmp");
    std::fs::write(&tmp, content).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(line)
}

fn now_stamp() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Merges the hooks into one JSON settings file.
fn install_hooks(path: &Path, options: &Options, harness: &str) -> Result<String, String> {
    let mut doc: Value = match std::fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => serde_json::from_str(&text)
            .map_err(|e| format!("{}: not JSON ({e}); left as it is", path.display()))?,
        _ => json!({}),
    };
    if !merge_hooks(&mut doc, options, harness)? {
        return Ok(format!(
            "{}: memd's hooks are already there",
            path.display()
        ));
    }
    let content = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
    write_file(path, &content, options.dry_run)
}

/// Turns Codex CLI's hooks on in its config, which they need to run.
fn enable_codex_hooks(path: &Path, dry_run: bool) -> Result<String, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(format!("{}: {err}", path.display())),
    };
    match codex_config::enable_hooks(&text) {
        codex_config::Edit::Unchanged => {
            Ok(format!("{}: Codex hooks are on already", path.display()))
        }
        codex_config::Edit::Changed(new) => write_file(path, &new, dry_run),
        codex_config::Edit::Refused(why) => Ok(format!("{}: left as it is: {why}", path.display())),
    }
}

/// Runs the whole install; returns what it did, line by line.
pub fn install(options: &Options) -> Result<Vec<String>, String> {
    let mut done = Vec::new();
    let claude = match &options.project {
        Some(repo) => repo.join(".claude/settings.json"),
        None => options.home.join(".claude/settings.json"),
    };
    done.push(install_hooks(&claude, options, "claude")?);
    if options.project.is_none() {
        done.push(install_hooks(
            &options.home.join(".codex/hooks.json"),
            options,
            "codex",
        )?);
        done.push(enable_codex_hooks(
            &options.home.join(".codex/config.toml"),
            options.dry_run,
        )?);
    }
    if options.service {
        done.extend(install_service(options)?);
    }
    Ok(done)
}

fn install_service(options: &Options) -> Result<Vec<String>, String> {
    if cfg!(target_os = "macos") {
        return install_launch_agent(options);
    }
    let mut done = Vec::new();
    let dir = options.home.join(".config/systemd/user");
    let service = include_str!("../../systemd/memd.service")
        .replace("%h/.cargo/bin/memd", &options.memd.display().to_string());
    done.push(write_file(
        &dir.join("memd.socket"),
        include_str!("../../systemd/memd.socket"),
        options.dry_run,
    )?);
    done.push(write_file(
        &dir.join("memd.service"),
        &service,
        options.dry_run,
    )?);
    if !options.dry_run {
        done.push(run("systemctl", &["--user", "daemon-reload"]));
        done.push(run(
            "systemctl",
            &["--user", "enable", "--now", "memd.socket"],
        ));
    }
    Ok(done)
}

/// The LaunchAgent template and the values in it that are replaced by the
/// user's paths.
const PLIST: &str = include_str!("../../launchd/dev.memd.plist");
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

/// Writes the LaunchAgent and (re)loads it when it changed.
fn install_launch_agent(options: &Options) -> Result<Vec<String>, String> {
    let path = options.home.join("Library/LaunchAgents/dev.memd.plist");
    let log = options.home.join("Library/Logs/memd.log");
    let plist = launch_agent(&options.memd, &options.socket, &log);
    let changed = std::fs::read_to_string(&path).ok().as_deref() != Some(plist.as_str());
    let mut done = vec![write_file(&path, &plist, options.dry_run)?];
    if changed && !options.dry_run {
        let path = path.display().to_string();
        // An older version may be loaded: unload it first (failing is fine
        // when none is).
        let _ = Command::new("launchctl").args(["unload", &path]).output();
        done.push(run("launchctl", &["load", "-w", &path]));
    }
    Ok(done)
}

/// Runs a service-manager command, reporting rather than failing: the
/// files are in place either way.
fn run(program: &str, args: &[&str]) -> String {
    let line = format!("{program} {}", args.join(" "));
    match Command::new(program).args(args).output() {
        Ok(out) if out.status.success() => format!("ran: {line}"),
        Ok(out) => format!(
            "could not run `{line}` ({}): run it yourself once a user session is up",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(err) => format!("could not run `{line}` ({err}): run it yourself"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Options {
        Options {
            home: PathBuf::from("/home/me"),
            project: None,
            dry_run: true,
            service: false,
            agent: Some("backend-engineer".into()),
            memctl: PathBuf::from("/usr/bin/memctl"),
            memd: PathBuf::from("/usr/bin/memd"),
            socket: PathBuf::from("/run/user/1000/memd/memd.sock"),
        }
    }

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

    #[test]
    fn merging_keeps_other_hooks_and_is_idempotent() {
        let mut doc = json!({
            "model": "opus",
            "hooks": {
                "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]
            }
        });
        assert!(merge_hooks(&mut doc, &options(), "claude").unwrap());
        assert_eq!(doc["model"], "opus");
        assert_eq!(
            doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "guard.sh"
        );
        let prompt = doc["hooks"]["UserPromptSubmit"].as_array().unwrap();
        assert_eq!(prompt.len(), 2);
        assert_eq!(prompt[0]["hooks"][0]["command"], "date");
        assert_eq!(
            prompt[1]["hooks"][0]["command"],
            "/usr/bin/memctl hook claude UserPromptSubmit --agent backend-engineer"
        );
        let once = doc.clone();
        assert!(!merge_hooks(&mut doc, &options(), "claude").unwrap());
        assert_eq!(doc, once);
    }

    #[test]
    fn codex_gets_stop_instead_of_session_end_and_loses_the_old_one() {
        // As an earlier memd left it: SessionEnd, which Codex never sends,
        // once alone and once beside somebody else's hook.
        let mut doc = json!({
            "hooks": {
                "SessionEnd": [
                    {"hooks": [{"type": "command", "command": "/usr/bin/memctl hook codex SessionEnd"}]},
                    {"hooks": [{"type": "command", "command": "/usr/bin/memctl hook codex SessionEnd"}, {"type": "command", "command": "notify.sh"}]}
                ],
                "PreCompact": []
            }
        });
        assert!(merge_hooks(&mut doc, &options(), "codex").unwrap());
        let hooks = doc["hooks"].as_object().unwrap();
        for event in ["SessionStart", "UserPromptSubmit", "Stop"] {
            assert!(
                hooks[event][0]["hooks"][0]["command"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("hook codex {event}")),
                "{doc}"
            );
        }
        let end = hooks["SessionEnd"].as_array().unwrap();
        assert_eq!(end.len(), 1, "{doc}");
        assert_eq!(
            end[0]["hooks"],
            json!([{"type": "command", "command": "notify.sh"}])
        );
        assert_eq!(
            hooks["PreCompact"],
            json!([]),
            "other lists are left as they are"
        );
        let once = doc.clone();
        assert!(!merge_hooks(&mut doc, &options(), "codex").unwrap());
        assert_eq!(doc, once);
        // Claude Code keeps its SessionEnd.
        let mut claude = json!({});
        merge_hooks(&mut claude, &options(), "claude").unwrap();
        assert!(claude["hooks"]["SessionEnd"].is_array());
        assert!(claude["hooks"].get("Stop").is_none());
    }

    #[test]
    fn a_settings_file_of_the_wrong_shape_is_refused() {
        assert!(merge_hooks(&mut json!([1]), &options(), "claude").is_err());
        assert!(merge_hooks(&mut json!({"hooks": 3}), &options(), "claude").is_err());
    }
}
