//! Claude Code.
//!
//! - Hooks in `~/.claude/settings.json` (or a repository's
//!   `.claude/settings.json` with `memctl install --project`): SessionStart
//!   (`source`: startup, resume, clear, compact), UserPromptSubmit
//!   (`prompt`), SessionEnd; the input carries `session_id`,
//!   `transcript_path` and `cwd`; context goes back as
//!   `hookSpecificOutput.additionalContext`, of which it keeps 10,000
//!   characters. Timeouts are in seconds.
//! - memd's MCP server in the user scope (`mcpServers.memd` in
//!   `~/.claude.json`, what `claude mcp add --scope user` writes), and its
//!   tools but `remember` (which writes into the repository) in the user
//!   settings' `permissions.allow`, so they run without asking.
//! - Its transcript is Claude Code's JSON Lines (read by
//!   `memd::evaluate::transcript`).

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{Action, Event, Harness, SESSION_START, USER_PROMPT_SUBMIT};
use crate::install::files::{self, Place, Plan};
use crate::install::hooks::{install_hooks, uninstall_hooks};
use crate::install::json_doc::{list_add, list_remove, Dialect, Doc};
use crate::install::mcp_servers::{
    in_json, register_json, unregister_json, Server, APPROVED, NAME,
};
use crate::install::{Options, Outcome, Step};

/// Claude Code.
pub struct Claude;

/// Where Claude Code keeps the user-scope MCP servers.
const SERVERS: &str = "mcpServers";

impl Harness for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn label(&self) -> &'static str {
        "Claude Code"
    }

    fn command(&self) -> &'static str {
        "claude"
    }

    fn events(&self) -> &'static [Event] {
        &[
            SESSION_START,
            USER_PROMPT_SUBMIT,
            Event {
                name: "SessionEnd",
                action: Action::End,
            },
        ]
    }

    fn hooks_file(&self, home: &Path) -> PathBuf {
        home.join(".claude/settings.json")
    }

    fn install(&self, options: &Options) -> Result<Vec<Plan>, String> {
        let home = &options.home;
        Ok(vec![
            install_hooks(
                &self.hooks_file(home),
                options,
                self,
                Place::User,
                &allow_tools,
            )?,
            register(&home.join(".claude.json"), options)?,
        ])
    }

    fn uninstall(&self, options: &Options) -> Result<Vec<Plan>, String> {
        let home = &options.home;
        let path = home.join(".claude.json");
        let (read, doc) = files::read_doc(&path, Place::User, Dialect::Json)?;
        let server = if unregister_json(&doc, SERVERS) {
            files::plan_doc(read, &doc, Place::User, Dialect::Json)?
        } else {
            Plan::Done(Step::new(&path, Outcome::NotThere))
        };
        Ok(vec![
            uninstall_hooks(&self.hooks_file(home), self, Place::User, &disallow_tools)?,
            server,
        ])
    }

    fn mcp_server(&self, home: &Path) -> (PathBuf, Result<Option<Server>, String>) {
        let path = home.join(".claude.json");
        let server = match std::fs::read_to_string(&path) {
            Ok(text) => Dialect::Json.check(&text).map(|doc| in_json(&doc, SERVERS)),
            Err(_) => Ok(None),
        };
        (path, server)
    }
}

/// The hooks in a repository's own settings (`memctl install --project`).
pub fn install_project(repo: &Path, options: &Options) -> Result<Plan, String> {
    install_hooks(
        &repo.join(".claude/settings.json"),
        options,
        &Claude,
        Place::Project(repo),
        &|_| Ok(false),
    )
}

/// The hooks taken out of a repository's own settings.
pub fn uninstall_project(repo: &Path) -> Result<Plan, String> {
    uninstall_hooks(
        &repo.join(".claude/settings.json"),
        &Claude,
        Place::Project(repo),
        &|_| false,
    )
}

/// Registers memd's server in `~/.claude.json` as `claude mcp add --scope
/// user` would, keeping every other key (and an `env` the user gave memd's
/// entry).
fn register(path: &Path, options: &Options) -> Result<Plan, String> {
    let server = Server::for_install(options);
    let (read, doc) = files::read_doc(path, Place::User, Dialect::Json)?;
    let entry = json!({"type": "stdio", "command": server.command, "args": server.args, "env": {}});
    let changed = register_json(&doc, SERVERS, &entry, &["command", "args"])
        .map_err(|e| format!("{}: {e}; left as it is", path.display()))?;
    if !changed {
        return Ok(Plan::Done(Step::new(path, Outcome::Registered)));
    }
    files::plan_doc(read, &doc, Place::User, Dialect::Json)
}

/// The permission rules that let memd's [`APPROVED`] tools run.
fn rules() -> Vec<String> {
    APPROVED
        .iter()
        .map(|t| format!("mcp__{NAME}__{t}"))
        .collect()
}

/// Lets Claude Code run memd's [`APPROVED`] tools without asking: each
/// one in the settings' `permissions.allow`. Returns whether anything
/// changed.
fn allow_tools(doc: &Doc) -> Result<bool, String> {
    list_add(doc, "permissions", "allow", &rules())
}

/// Takes memd's rules out of `permissions.allow` (and what they alone
/// filled). Returns whether anything changed.
fn disallow_tools(doc: &Doc) -> bool {
    list_remove(doc, "permissions", "allow", &rules())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_may_run_the_tools_that_do_not_write_into_the_repository() {
        let text = "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls)\", \"mcp__memd__search\"]\n  }\n}\n";
        let doc = Doc::parse(text, Dialect::Json).unwrap();
        assert!(allow_tools(&doc).unwrap());
        assert_eq!(
            doc.value()["permissions"]["allow"],
            json!([
                "Bash(ls)",
                "mcp__memd__search",
                "mcp__memd__get",
                "mcp__memd__explain",
                "mcp__memd__feedback"
            ])
        );
        assert!(!allow_tools(&doc).unwrap());
        assert!(disallow_tools(&doc));
        assert_eq!(doc.value()["permissions"]["allow"], json!(["Bash(ls)"]));
        let bad = Doc::parse("{\"permissions\": []}", Dialect::Json).unwrap();
        assert!(allow_tools(&bad).is_err());
    }

    #[test]
    fn rules_memd_added_to_a_file_without_any_go_with_what_held_them() {
        let text = "{\n  \"model\": \"opus\"\n}\n";
        let doc = Doc::parse(text, Dialect::Json).unwrap();
        assert!(allow_tools(&doc).unwrap());
        assert!(disallow_tools(&doc));
        assert_eq!(doc.text(), text);
    }
}
