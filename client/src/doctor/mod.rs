//! `memctl doctor`: every link from an agent's hook to the daemon checked,
//! each failure with a one-line fix: the daemon answers; each installed
//! hook runs an existing `memctl` on a socket a daemon serves; Codex's hooks
//! feature is on; the hooks have been heard from; memd's MCP server, where
//! an agent has it registered, answers with its tools and reaches memd
//! ([`mcp`]); the knowledge roots exist and parse; the service unit. Some things memd cannot know (whether
//! Codex trusts its hooks: Codex computes that): those say so rather than
//! pass or fail.

use std::path::{Path, PathBuf};

use memd::protocol::{Outcome, Reply, RequestBody, StatusReport};
use serde_json::{json, Value};

use crate::activity;
use crate::client::{Client, ClientError};
use crate::install;

mod mcp;

/// One check.
pub struct Check {
    pub name: String,
    /// `None`: memd cannot tell.
    pub ok: Option<bool>,
    pub detail: String,
    /// What to do when it failed (or cannot be told).
    pub fix: Option<String>,
}

impl Check {
    fn pass(name: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            ok: Some(true),
            detail: detail.into(),
            fix: None,
        }
    }

    fn fail(name: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            ok: Some(false),
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    fn unknown(
        name: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            name: name.into(),
            ok: None,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    /// The check for `--json`.
    pub fn to_json(&self) -> Value {
        json!({
            "check": self.name,
            "ok": self.ok,
            "detail": self.detail,
            "fix": self.fix,
        })
    }

    /// A line for people (and its fix on the next).
    pub fn line(&self) -> String {
        let mark = match self.ok {
            Some(true) => "ok  ",
            Some(false) => "FAIL",
            None => "?   ",
        };
        let mut line = format!("{mark} {}: {}", self.name, self.detail);
        if let (Some(fix), false) = (&self.fix, self.ok == Some(true)) {
            line.push_str(&format!("\n     fix: {fix}"));
        }
        line
    }
}

/// Splits a hook command into words as a POSIX shell would for the plain
/// forms install writes (spaces, single and double quotes, backslashes).
fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// memd's hook commands in a settings file, by event.
fn memd_hooks(doc: &Value, harness: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for &event in install::hook_events(harness) {
        let commands = doc["hooks"][event]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|group| group["hooks"].as_array().into_iter().flatten())
            .filter_map(|h| h["command"].as_str())
            .filter(|c| install::is_memd_command(c, harness, event));
        for command in commands {
            found.push((event.to_string(), command.to_string()));
        }
    }
    found
}

/// The socket a hook command talks to: its `--socket`, else the default
/// (`MEMD_SOCKET` in the agent's environment would change that; memd
/// cannot see the agent's environment).
fn hook_socket(words: &[String]) -> PathBuf {
    words
        .iter()
        .position(|w| w == "--socket")
        .and_then(|i| words.get(i + 1))
        .map(PathBuf::from)
        .unwrap_or_else(memd::protocol::default_socket_path)
}

/// Whether a memd of this user answers on `socket`.
fn answers(socket: &Path) -> Result<(), ClientError> {
    let mut client = Client::connect(socket)?;
    client.request(RequestBody::Ping).map(|_| ())
}

/// Runs every check. `socket` is the one this `memctl` talks to, `home`
/// the user's home, `cwd` where it runs (a repository's own Claude Code
/// settings are checked too).
pub fn run(socket: &Path, home: &Path, cwd: &Path) -> Vec<Check> {
    let mut checks = Vec::new();
    let status = match Client::connect(socket).and_then(|mut c| c.request(RequestBody::Status)) {
        Ok(response) => match response.outcome {
            Outcome::Ok(Reply::Status(status)) => {
                checks.push(Check::pass(
                    "daemon",
                    format!(
                        "memd {} answers on {}",
                        status.daemon_version,
                        socket.display()
                    ),
                ));
                Some(status)
            }
            other => {
                checks.push(Check::fail(
                    "daemon",
                    format!("memd on {} answered {other:?}", socket.display()),
                    "restart it: stop the running memd, then `memd serve`",
                ));
                None
            }
        },
        Err(err) => {
            let serve = if socket == memd::protocol::default_socket_path() {
                "memd serve".to_string()
            } else {
                format!(
                    "memd serve --socket {}",
                    install::shell_word(&socket.to_string_lossy())
                )
            };
            checks.push(Check::fail(
                "daemon",
                err.to_string(),
                format!("start it: `{serve}` (or `systemctl --user start memd.socket` where the service is installed)"),
            ));
            None
        }
    };
    checks.extend(hook_checks(home, cwd));
    checks.extend(codex_feature(home, status.as_deref()));
    checks.push(activity_check(status.as_deref()));
    checks.extend(mcp::checks(home, cwd));
    if let Some(status) = &status {
        checks.extend(knowledge_checks(status));
    }
    checks.push(service_check());
    checks
}

/// Each settings file with memd's hooks: every event there, an existing
/// `memctl`, a socket a daemon answers on.
fn hook_checks(home: &Path, cwd: &Path) -> Vec<Check> {
    let mut files = vec![
        (home.join(".claude/settings.json"), "claude"),
        (home.join(".codex/hooks.json"), "codex"),
    ];
    if let Some(repo) = crate::env_tags::repository_of(cwd) {
        files.push((repo.join(".claude/settings.json"), "claude"));
    }
    let mut checks = Vec::new();
    let mut any = false;
    for (file, harness) in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let name = format!("hooks in {}", file.display());
        let Ok(doc) = serde_json::from_str::<Value>(&text) else {
            checks.push(Check::fail(
                name,
                "not JSON",
                "fix the file, then `memctl install`",
            ));
            continue;
        };
        let hooks = memd_hooks(&doc, harness);
        if hooks.is_empty() {
            continue;
        }
        any = true;
        let missing: Vec<&str> = install::hook_events(harness)
            .iter()
            .copied()
            .filter(|e| !hooks.iter().any(|(event, _)| event == e))
            .collect();
        if !missing.is_empty() {
            checks.push(Check::fail(
                name.clone(),
                format!("no memd hook for {}", missing.join(", ")),
                "run `memctl install`",
            ));
        }
        let mut problems = Vec::new();
        let mut sockets = Vec::new();
        for (event, command) in &hooks {
            let words = shell_words(command);
            let binary = words.first().map(PathBuf::from).unwrap_or_default();
            if !binary.is_file() {
                problems.push(format!(
                    "{event} runs {}, which does not exist",
                    binary.display()
                ));
            }
            let socket = hook_socket(&words);
            if !sockets.contains(&socket) {
                sockets.push(socket);
            }
        }
        if problems.is_empty() {
            checks.push(Check::pass(
                name.clone(),
                "every event runs an existing memctl",
            ));
        } else {
            checks.push(Check::fail(
                name.clone(),
                problems.join("; "),
                "run `memctl install` with the memctl you use now",
            ));
        }
        for socket in sockets {
            let what = format!("{} talks to {}", name, socket.display());
            match answers(&socket) {
                Ok(()) => checks.push(Check::pass(what, "a memd of yours answers there")),
                Err(err) => checks.push(Check::fail(
                    what,
                    err.to_string(),
                    format!(
                        "start memd on that socket (`memd serve --socket {0}`), or install the hooks for the socket memd serves (`memctl install --socket PATH`)",
                        install::shell_word(&socket.to_string_lossy())
                    ),
                )),
            }
        }
    }
    if !any {
        checks.push(Check::fail(
            "hooks",
            "no memd hooks in Claude Code's or Codex's settings",
            "run `memctl install`",
        ));
    }
    checks
}

/// Codex's hooks feature, and its trust, where memd's Codex hooks are
/// installed.
fn codex_feature(home: &Path, status: Option<&StatusReport>) -> Vec<Check> {
    let hooks = std::fs::read_to_string(home.join(".codex/hooks.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|doc| !memd_hooks(&doc, "codex").is_empty());
    if !hooks {
        return Vec::new();
    }
    let config = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap_or_default();
    let version = install::codex_version();
    let key = install::codex_key(version);
    let mut checks = Vec::new();
    match install::codex_hooks_setting(&config) {
        Some(true) => checks.push(Check::pass(
            "codex hooks feature",
            "on in ~/.codex/config.toml",
        )),
        Some(false) => checks.push(Check::fail(
            "codex hooks feature",
            "turned off in ~/.codex/config.toml",
            format!("set `{key} = true` under [features]"),
        )),
        None if key == install::CODEX_KEY && version.is_some() => checks.push(Check::pass(
            "codex hooks feature",
            "not set; on by default in this Codex",
        )),
        None => checks.push(Check::fail(
            "codex hooks feature",
            "not turned on in ~/.codex/config.toml",
            "run `memctl install`",
        )),
    }
    checks.push(codex_trust(home, status));
    checks
}

/// The newest Codex session (rollout) file's modification time.
fn newest_codex_session(home: &Path) -> Option<std::time::SystemTime> {
    let mut newest = None;
    let mut pending = vec![home.join(".codex/sessions")];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                pending.push(entry.path());
            } else if let Ok(modified) = meta.modified() {
                newest = newest.max(Some(modified));
            }
        }
    }
    newest
}

/// Whether Codex trusts memd's hooks. Codex keeps the trust and computes
/// it, so memd judges from the evidence: a Codex session since this memd
/// started with no Codex hook call heard of means Codex skipped them.
fn codex_trust(home: &Path, status: Option<&StatusReport>) -> Check {
    let trust = "run `codex` once and choose \"Trust all and continue\" at \"Hooks need review\" (again after a hook command changes)";
    let heard = status.is_some_and(|s| s.hooks.iter().any(|c| c.harness == "codex"));
    if heard {
        return Check::pass("codex hook trust", "Codex has called memd's hooks");
    }
    let started = status.map(|s| {
        std::time::SystemTime::now() - std::time::Duration::from_secs_f64(s.uptime_secs.max(0.0))
    });
    match (newest_codex_session(home), started) {
        (Some(ran), Some(started)) if ran > started => Check::fail(
            "codex hook trust",
            "Codex ran a session since memd started, and none of memd's hooks was called: Codex skips hooks it does not trust",
            trust,
        ),
        _ => Check::unknown(
            "codex hook trust",
            "no Codex session since memd started to tell from (Codex keeps the trust; until memd's hooks are trusted it skips them without a word)",
            trust,
        ),
    }
}

/// Whether the hooks have been heard from, and how their last calls went.
fn activity_check(status: Option<&StatusReport>) -> Check {
    let recent_local = activity::latest(1)
        .pop()
        .filter(|c| activity::now() - c.at < 24 * 3600);
    if let Some(call) = recent_local {
        return Check::fail(
            "hook activity",
            format!("the last hook call memd did not answer: {call}"),
            "see the checks above; `memctl status` lists the calls",
        );
    }
    if let Some(call) = status.and_then(|s| s.hook_failures.last()) {
        return Check::fail(
            "hook activity",
            format!("a recent hook call failed: {call}"),
            "see `memctl status`",
        );
    }
    match status {
        Some(s) if !s.hooks.is_empty() => Check::pass(
            "hook activity",
            format!(
                "{} kinds of hook call since memd started, none failed",
                s.hooks.len()
            ),
        ),
        _ => Check::unknown(
            "hook activity",
            "no hook call heard of since memd started",
            "start a session (`claude` or `codex`) in a repository, then run `memctl doctor` again",
        ),
    }
}

/// The knowledge roots exist and their files parse.
fn knowledge_checks(status: &StatusReport) -> Vec<Check> {
    let mut checks = Vec::new();
    let missing: Vec<&str> = status
        .roots
        .iter()
        .filter(|r| !r.exists && r.scope == "global")
        .map(|r| r.path.as_str())
        .collect();
    if missing.is_empty() {
        checks.push(Check::pass(
            "knowledge roots",
            format!("{} roots, {} files", status.roots.len(), status.files),
        ));
    } else {
        checks.push(Check::fail(
            "knowledge roots",
            format!("missing: {}", missing.join(", ")),
            "create them, or change `roots` in memd.toml",
        ));
    }
    if status.errors.is_empty() {
        checks.push(Check::pass("knowledge files", "no errors"));
    } else {
        checks.push(Check::fail(
            "knowledge files",
            format!(
                "{} errors, the first: {}",
                status.errors.len(),
                status.errors[0]
            ),
            "fix them (`memctl status` lists each with file:line:col)",
        ));
    }
    checks
}

/// The service unit, where a user service manager runs.
fn service_check() -> Check {
    if cfg!(target_os = "macos") {
        return Check::unknown(
            "service",
            "launchd's state is not checked",
            "`launchctl list dev.memd` shows the job",
        );
    }
    let out = std::process::Command::new("systemctl")
        .args(["--user", "is-enabled", "memd.socket"])
        .output();
    match out {
        Ok(out) if out.status.success() => Check::pass("service", "memd.socket is enabled"),
        Ok(out) if !String::from_utf8_lossy(&out.stdout).trim().is_empty() => Check::fail(
            "service",
            format!(
                "memd.socket is {}",
                String::from_utf8_lossy(&out.stdout).trim()
            ),
            "`systemctl --user enable --now memd.socket` (or `memctl install`)",
        ),
        _ => Check::unknown(
            "service",
            "no user service manager answers (a container, CI?)",
            "keep `memd serve` running yourself",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_commands_are_split_as_the_shell_splits_them() {
        assert_eq!(
            shell_words("/usr/bin/memctl hook claude Stop --socket '/tmp/my run/it'\\''s.sock'"),
            [
                "/usr/bin/memctl",
                "hook",
                "claude",
                "Stop",
                "--socket",
                "/tmp/my run/it's.sock"
            ]
        );
        assert_eq!(shell_words(r#"a "b c" d\ e"#), ["a", "b c", "d e"]);
        assert_eq!(
            hook_socket(&shell_words("memctl hook codex Stop --socket /s.sock")),
            PathBuf::from("/s.sock")
        );
    }
}
