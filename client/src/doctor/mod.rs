//! `memctl doctor`: every link from an agent's hook to the daemon checked,
//! each failure with a one-line fix: the daemon answers; each installed
//! hook runs an existing `memctl` on a socket a daemon serves; what only
//! one agent has (Codex's hooks feature and trust: each agent's file in
//! `crate::harness`); the hooks have been heard from; memd's MCP server,
//! where an agent has it registered, answers with its tools and reaches
//! memd ([`mcp`]); the knowledge roots exist and parse; the judge's
//! verdicts say more than coin flips would; the service unit.
//! Some things memd cannot know (whether Codex trusts its hooks: Codex
//! computes that): those say so rather than pass or fail.

use std::path::{Path, PathBuf};

use memd::protocol::{Outcome, Reply, RequestBody, StatusReport};
use serde_json::{json, Value};

use crate::activity;
use crate::client::{Client, ClientError};
use crate::harness::{self, Harness};
use crate::install;
use crate::install::hooks::memd_hooks;

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
    pub fn pass(name: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            ok: Some(true),
            detail: detail.into(),
            fix: None,
        }
    }

    pub fn fail(
        name: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            name: name.into(),
            ok: Some(false),
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    pub fn unknown(
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

/// The socket a hook command talks to: its `--socket`, else the default
/// (`MEMD_SOCKET` in the agent's environment would change that; memd
/// cannot see the agent's environment).
pub(crate) fn hook_socket(words: &[String]) -> PathBuf {
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
    for harness in harness::ALL {
        checks.extend(harness.checks(home, cwd, status.as_deref()));
    }
    checks.push(activity_check(status.as_deref()));
    checks.extend(mcp::checks(home, cwd));
    if let Some(status) = &status {
        checks.extend(knowledge_checks(status));
        checks.push(judge_check(status));
    }
    checks.push(service_check());
    checks
}

/// Each settings file with memd's hooks: every event there, an existing
/// `memctl`, a socket a daemon answers on.
fn hook_checks(home: &Path, cwd: &Path) -> Vec<Check> {
    let mut files: Vec<(PathBuf, &dyn Harness)> = harness::ALL
        .iter()
        .filter(|h| h.command_hooks())
        .map(|h| (h.hooks_file(home), *h))
        .collect();
    if let Some(repo) = crate::env_tags::repository_of(cwd) {
        files.push((repo.join(".claude/settings.json"), &harness::claude::Claude));
    }
    let mut checks = Vec::new();
    let mut any = false;
    for (file, harness) in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let name = format!("hooks in {}", file.display());
        let doc = match harness.dialect().check(&text) {
            Ok(doc) => doc,
            Err(err) => {
                checks.push(Check::fail(
                    name,
                    err,
                    "fix the file, then `memctl install`",
                ));
                continue;
            }
        };
        let hooks = memd_hooks(&doc, harness);
        if hooks.is_empty() {
            continue;
        }
        any = true;
        let missing: Vec<&str> = harness
            .events()
            .iter()
            .map(|e| e.name)
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
            checks.push(socket_check(&name, &socket));
        }
    }
    // A plugin of memd's (checked by its agent's own checks) is hooks too.
    any |= harness::ALL
        .iter()
        .any(|h| !h.command_hooks() && h.hooks_file(home).is_file());
    if !any {
        checks.push(Check::fail(
            "hooks",
            format!("no memd hooks in the settings of {}", harness::labels()),
            "run `memctl install`",
        ));
    }
    checks
}

/// Whether a memd of the user's answers on the socket `what` (hooks in a
/// file, a plugin) talks to.
pub(crate) fn socket_check(what: &str, socket: &Path) -> Check {
    let name = format!("{what} talks to {}", socket.display());
    match answers(socket) {
        Ok(()) => Check::pass(name, "a memd of yours answers there"),
        Err(err) => Check::fail(
            name,
            err.to_string(),
            format!(
                "start memd on that socket (`memd serve --socket {0}`), or install the hooks for the socket memd serves (`memctl install --socket PATH`)",
                install::shell_word(&socket.to_string_lossy())
            ),
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
            format!(
                "start a session ({}) in a repository, then run `memctl doctor` again",
                harness::ALL
                    .iter()
                    .map(|h| format!("`{}`", h.command()))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        ),
    }
}

/// Whether the judge's verdicts say more than coin flips would: how often
/// two verdicts on one lesson in one repository disagree
/// ([`memd::learning::noise`]).
fn judge_check(status: &StatusReport) -> Check {
    let j = &status.judge;
    match j.error {
        None => Check::pass(
            "judge",
            format!(
                "{} of the {} pairs of verdicts (on one lesson in one repository) needed to read how often the judge errs",
                j.pairs.min(j.pairs_needed),
                j.pairs_needed
            ),
        ),
        Some(e) if !j.near_coin => Check::pass(
            "judge",
            format!(
                "{} of {} pairs of verdicts disagree, as from a judge wrong {:.0}% of the time; filter line {:.2}",
                j.disagreeing,
                j.pairs,
                100.0 * e,
                j.filter_line
            ),
        ),
        Some(e) => Check::fail(
            "judge",
            format!(
                "{} of {} pairs of verdicts on one lesson in one repository disagree, as often as coin flips would (a judge wrong {:.0}% of the time): learning filters almost nothing (filter line {:.2})",
                j.disagreeing,
                j.pairs,
                100.0 * e,
                j.filter_line
            ),
            "check what judges: `[evaluator] command` in memd.toml (or the built-in judge), and the `memctl feedback` your agents send; `memctl log ID` lists a lesson's verdicts",
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
