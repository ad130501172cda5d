//! The agents memd works with, each in one file behind one type
//! ([`Harness`]): its hook events and what memd does on each ([`Action`]),
//! the hook entry and the output that injects context, how much context
//! it keeps, where its user settings are and what install adds to them
//! (and uninstall takes out), its MCP registration, and what doctor checks
//! that only it has.
//!
//! - [`claude`]: Claude Code.
//! - [`codex`]: Codex CLI (its `config.toml` edited in [`codex::config`]).
//! - [`gemini`]: Gemini CLI.
//! - [`opencode`]: OpenCode (a plugin instead of command hooks).
//!
//! What they share lives where it is done: the hook commands and the
//! `hooks.<Event>[].hooks[]` settings shape in `install::hooks`, the safe
//! writes in `install::files`, the evaluator's transcript readers in
//! `memd::evaluate::transcript`. Adding an agent is one file here, its
//! entry in [`ALL`], and its tests.

pub mod claude;
pub mod codex;
pub mod gemini;
pub mod opencode;

use std::path::{Path, PathBuf};

use memd::protocol::StatusReport;
use serde_json::{json, Value};

use crate::doctor::Check;
use crate::install::files::Plan;
use crate::install::json_doc::Dialect;
use crate::install::mcp_servers::Server;
use crate::install::Options;

/// What memd does on one of an agent's hook events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A session starts, resumes or comes back from a compaction: what
    /// qualifies without a task (experience, pinned lessons, role), and the
    /// line on memd's tools.
    Start,
    /// The user sent a prompt: what it is about.
    Prompt,
    /// A turn ended: the session is recorded for evaluation, its transcript
    /// read on from where the last evaluation stopped (agents without a
    /// session end).
    TurnEnd,
    /// The session ended: recorded for evaluation.
    End,
}

/// One hook event of an agent's, by its name there.
#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub name: &'static str,
    pub action: Action,
}

/// Claude Code's and Codex's SessionStart (Codex took Claude Code's names).
pub(crate) const SESSION_START: Event = Event {
    name: "SessionStart",
    action: Action::Start,
};

/// Claude Code's and Codex's UserPromptSubmit.
pub(crate) const USER_PROMPT_SUBMIT: Event = Event {
    name: "UserPromptSubmit",
    action: Action::Prompt,
};

/// The timeout (seconds) memd's hooks are installed with.
pub const HOOK_TIMEOUT_SECS: u64 = 5;

/// One agent, as memd wires into it.
pub trait Harness: Sync {
    /// The name in hook commands and `memctl status` (`claude`).
    fn name(&self) -> &'static str;

    /// What people call it (`Claude Code`).
    fn label(&self) -> &'static str;

    /// The command that starts it, for doctor's hints.
    fn command(&self) -> &'static str;

    /// Its hook events memd is installed for.
    fn events(&self) -> &'static [Event];

    /// What memd does on `event`, if it is one of memd's.
    fn action(&self, event: &str) -> Option<Action> {
        self.events()
            .iter()
            .find(|e| e.name == event)
            .map(|e| e.action)
    }

    /// How its settings files are read.
    fn dialect(&self) -> Dialect {
        Dialect::Json
    }

    /// Whether a session's start comes with its first prompt instead of at
    /// its own event (Gemini CLI: context given at its SessionStart is put
    /// in front of the first prompt's text, and a resumed session then
    /// drops that prompt with it).
    fn start_with_first_prompt(&self) -> bool {
        false
    }

    /// The most context it keeps from one hook, in characters.
    fn context_cap(&self) -> u32 {
        10_000
    }

    /// memd's entry in its settings for a hook running `command`.
    fn hook_entry(&self, command: &str) -> Value {
        json!({"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECS})
    }

    /// What a hook prints to put `block` into its context on `event`.
    fn inject(&self, event: &str, block: &str) -> Value {
        json!({
            "hookSpecificOutput": {
                "hookEventName": event,
                "additionalContext": block,
            }
        })
    }

    /// The user's file that calls memd: its settings with the hooks, or
    /// memd's plugin.
    fn hooks_file(&self, home: &Path) -> PathBuf;

    /// Whether [`Harness::hooks_file`] holds command hooks in the
    /// `hooks.<Event>[].hooks[]` shape (doctor checks them alike), rather
    /// than being a plugin of memd's (checked by its own
    /// [`Harness::checks`]).
    fn command_hooks(&self) -> bool {
        true
    }

    /// What install does to the user's configuration, planned.
    fn install(&self, options: &Options) -> Result<Vec<Plan>, String>;

    /// What uninstall does: exactly what install added taken out again.
    fn uninstall(&self, options: &Options) -> Result<Vec<Plan>, String>;

    /// memd's MCP server as registered with it: the file, and the server
    /// (`Err` when the file cannot be read as the agent reads it).
    fn mcp_server(&self, home: &Path) -> (PathBuf, Result<Option<Server>, String>);

    /// Doctor's checks of what only this agent has, run in `cwd`.
    fn checks(&self, _home: &Path, _cwd: &Path, _status: Option<&StatusReport>) -> Vec<Check> {
        Vec::new()
    }

    /// Whether it is on this machine, for install to wire it (Claude Code
    /// and Codex are wired either way, as before there were others).
    fn detected(&self, _home: &Path) -> bool {
        true
    }

    /// What is left for the user to do after an install of their
    /// configuration.
    fn next_steps(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Every agent memd wires into.
pub static ALL: [&dyn Harness; 4] = [
    &claude::Claude,
    &codex::Codex,
    &gemini::Gemini,
    &opencode::OpenCode,
];

/// The agent named `name` in a hook command.
pub fn named(name: &str) -> Option<&'static dyn Harness> {
    ALL.iter().copied().find(|h| h.name() == name)
}

/// Every agent's name, for messages.
pub fn names() -> String {
    ALL.iter().map(|h| h.name()).collect::<Vec<_>>().join(", ")
}

/// Whether `program` is a file in a directory of the `PATH`.
pub(crate) fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// The agents' labels, for messages (`Claude Code, Codex CLI`).
pub fn labels() -> String {
    ALL.iter().map(|h| h.label()).collect::<Vec<_>>().join(", ")
}
