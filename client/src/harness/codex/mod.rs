//! Codex CLI.
//!
//! - Hooks in `~/.codex/hooks.json` (the same shape as Claude Code's,
//!   timeouts in seconds): SessionStart, UserPromptSubmit and Stop. Codex
//!   has no SessionEnd: its Stop (the end of each turn) records the session
//!   instead, so a session is ready for evaluation after any turn and its
//!   transcript is read on from where the last evaluation stopped. The
//!   input may carry a null `transcript_path`.
//! - The hooks run only with its hooks feature on and once the user
//!   trusted them; memd's MCP server is `[mcp_servers.memd]`. Both are in
//!   `~/.codex/config.toml`, edited as a TOML document ([`config`]).
//! - Its transcript is its rollout file (read by
//!   `memd::evaluate::transcript`).

pub mod config;

use std::path::{Path, PathBuf};

use memd::protocol::StatusReport;
use serde_json::Value;

use super::{Action, Event, Harness, SESSION_START, USER_PROMPT_SUBMIT};
use crate::doctor::Check;
use crate::install::files::{Place, Plan};
use crate::install::hooks::{install_hooks, memd_hooks, uninstall_hooks};
use crate::install::mcp_servers::{in_codex, Server};
use crate::install::Options;

/// Codex CLI.
pub struct Codex;

impl Harness for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn label(&self) -> &'static str {
        "Codex CLI"
    }

    fn command(&self) -> &'static str {
        "codex"
    }

    fn events(&self) -> &'static [Event] {
        &[
            SESSION_START,
            USER_PROMPT_SUBMIT,
            Event {
                name: "Stop",
                action: Action::TurnEnd,
            },
        ]
    }

    fn hooks_file(&self, home: &Path) -> PathBuf {
        home.join(".codex/hooks.json")
    }

    fn install(&self, options: &Options) -> Result<Vec<Plan>, String> {
        let home = &options.home;
        Ok(vec![
            install_hooks(&self.hooks_file(home), options, self, Place::User, &|_| {
                Ok(false)
            })?,
            config::configure_codex(
                &home.join(".codex/config.toml"),
                options.codex_key,
                &Server::for_install(options),
            )?,
        ])
    }

    fn uninstall(&self, options: &Options) -> Result<Vec<Plan>, String> {
        let home = &options.home;
        Ok(vec![
            uninstall_hooks(&self.hooks_file(home), self, Place::User, &|_| false)?,
            config::unconfigure_codex(&home.join(".codex/config.toml"))?,
        ])
    }

    fn mcp_server(&self, home: &Path) -> (PathBuf, Result<Option<Server>, String>) {
        let path = home.join(".codex/config.toml");
        let server = match std::fs::read_to_string(&path) {
            Ok(text) => in_codex(&text),
            Err(_) => Ok(None),
        };
        (path, server)
    }

    /// Its hooks feature, and its trust, where memd's hooks are installed.
    fn checks(&self, home: &Path, _cwd: &Path, status: Option<&StatusReport>) -> Vec<Check> {
        let hooks = std::fs::read_to_string(self.hooks_file(home))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|doc| !memd_hooks(&doc, self).is_empty());
        if !hooks {
            return Vec::new();
        }
        let text = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap_or_default();
        let version = config::installed_version();
        let key = config::key_for(version);
        let name = "codex hooks feature";
        let feature = match config::setting(&text) {
            Some(true) => Check::pass(name, "on in ~/.codex/config.toml"),
            Some(false) => Check::fail(
                name,
                "turned off in ~/.codex/config.toml",
                format!("set `{key} = true` under [features]"),
            ),
            None if key == config::KEY && version.is_some() => {
                Check::pass(name, "not set; on by default in this Codex")
            }
            None => Check::fail(
                name,
                "not turned on in ~/.codex/config.toml",
                "run `memctl install`",
            ),
        };
        vec![feature, trust(home, status)]
    }

    fn next_steps(&self) -> Vec<String> {
        let version = config::installed_version()
            .map_or("Codex (not installed yet)".to_string(), |(a, b, c)| {
                format!("Codex {a}.{b}.{c}")
            });
        vec![format!(
            "{version} runs memd's hooks only once you trust them, and skips them without a word until then: run `codex` once and choose \"Trust all and continue\" at \"Hooks need review\" (again after any install that changes a hook command); or pass --dangerously-bypass-hook-trust to `codex exec`. memd never trusts them for you."
        )]
    }
}

/// The newest Codex session (rollout) file's modification time.
fn newest_session(home: &Path) -> Option<std::time::SystemTime> {
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
fn trust(home: &Path, status: Option<&StatusReport>) -> Check {
    let trust = "run `codex` once and choose \"Trust all and continue\" at \"Hooks need review\" (again after a hook command changes)";
    let heard = status.is_some_and(|s| s.hooks.iter().any(|c| c.harness == "codex"));
    if heard {
        return Check::pass("codex hook trust", "Codex has called memd's hooks");
    }
    let started = status.map(|s| {
        std::time::SystemTime::now() - std::time::Duration::from_secs_f64(s.uptime_secs.max(0.0))
    });
    match (newest_session(home), started) {
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
