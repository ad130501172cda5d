//! Gemini CLI.
//!
//! - Hooks in `~/.gemini/settings.json` (JSON with comments; the same
//!   `hooks.<Event>[].hooks[]` shape as Claude Code's, timeouts in
//!   milliseconds): BeforeAgent (after the prompt, carries `prompt`) and
//!   SessionEnd (which the CLI awaits on exit, headless too). Context goes
//!   back as `hookSpecificOutput.additionalContext`; Gemini CLI escapes it
//!   (`<` and `>` as entities), wraps it in `<hook_context>`, tells the
//!   model it is data, not instructions, and adds it to the prompt's turn
//!   as a part of its own.
//! - A session's start comes with its first prompt, not at SessionStart:
//!   Gemini CLI puts SessionStart's context in front of the first prompt's
//!   text, and when a session is resumed it drops every user turn that
//!   starts with `<hook_context>`, so the first prompt would be lost with
//!   it. The BeforeAgent hook asks for the start first (on later prompts it
//!   holds only what the session has not been shown) and the line on
//!   memd's tools when memd had not heard of the session before.
//! - memd's MCP server is `mcpServers.memd` in the same file. Its tools but
//!   `remember` (which writes into the repository) run without asking by a
//!   rule of Gemini CLI's policy engine in a file memd owns,
//!   `~/.gemini/policies/memd.toml` (a headless run offers the model no
//!   tool that nothing allows; `tools.allowed` would do it too, but it is
//!   deprecated). The server is not marked `trust`, which would let
//!   `remember` run unasked too.
//! - Folder trust is on by default: in a folder the user has not trusted,
//!   Gemini CLI loads no hooks and no MCP server (a headless run fails
//!   outright). Doctor reads `~/.gemini/trustedFolders.json` and says so.
//! - Its transcript is its own JSON Lines (read by
//!   `memd::evaluate::transcript`).

use std::path::{Path, PathBuf};

use memd::protocol::StatusReport;
use serde_json::{json, Value};

use super::{Action, Event, Harness};
use crate::doctor::Check;
use crate::install::files::{self, Place, Plan};
use crate::install::hooks::{install_hooks, memd_hooks, uninstall_hooks};
use crate::install::json_doc::{Dialect, Doc};
use crate::install::mcp_servers::{
    in_json, register_json, unregister_json, Server, APPROVED, NAME,
};
use crate::install::Options;

/// Gemini CLI.
pub struct Gemini;

/// Where Gemini CLI keeps MCP servers.
const SERVERS: &str = "mcpServers";

/// The timeout memd's hooks are installed with, in milliseconds.
const HOOK_TIMEOUT_MS: u64 = super::HOOK_TIMEOUT_SECS * 1000;

impl Harness for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn label(&self) -> &'static str {
        "Gemini CLI"
    }

    fn command(&self) -> &'static str {
        "gemini"
    }

    fn events(&self) -> &'static [Event] {
        &[
            Event {
                name: "BeforeAgent",
                action: Action::Prompt,
            },
            Event {
                name: "SessionEnd",
                action: Action::End,
            },
        ]
    }

    fn dialect(&self) -> Dialect {
        Dialect::Jsonc
    }

    fn start_with_first_prompt(&self) -> bool {
        true
    }

    fn hook_entry(&self, command: &str) -> Value {
        json!({"type": "command", "command": command, "timeout": HOOK_TIMEOUT_MS})
    }

    fn hooks_file(&self, home: &Path) -> PathBuf {
        home.join(".gemini/settings.json")
    }

    fn detected(&self, home: &Path) -> bool {
        home.join(".gemini").is_dir() || super::on_path("gemini")
    }

    fn install(&self, options: &Options) -> Result<Vec<Plan>, String> {
        let server = Server::for_install(options);
        let entry = json!({"command": server.command, "args": server.args});
        let extra = |doc: &Doc| register_json(doc, SERVERS, &entry, &["command", "args"]);
        Ok(vec![
            install_hooks(
                &self.hooks_file(&options.home),
                options,
                self,
                Place::User,
                &extra,
            )?,
            files::plan_file(&policy_file(&options.home), &policy(), files::PRIVATE)?,
        ])
    }

    fn uninstall(&self, options: &Options) -> Result<Vec<Plan>, String> {
        let extra = |doc: &Doc| unregister_json(doc, SERVERS);
        Ok(vec![
            uninstall_hooks(&self.hooks_file(&options.home), self, Place::User, &extra)?,
            files::plan_file_removal(&policy_file(&options.home))?,
        ])
    }

    fn mcp_server(&self, home: &Path) -> (PathBuf, Result<Option<Server>, String>) {
        let path = self.hooks_file(home);
        let server = match std::fs::read_to_string(&path) {
            Ok(text) => Dialect::Jsonc
                .check(&text)
                .map(|doc| in_json(&doc, SERVERS)),
            Err(_) => Ok(None),
        };
        (path, server)
    }

    /// Folder trust, where memd's hooks are installed: whether Gemini CLI
    /// runs them in the repository doctor runs in.
    fn checks(&self, home: &Path, cwd: &Path, _status: Option<&StatusReport>) -> Vec<Check> {
        let settings = std::fs::read_to_string(self.hooks_file(home))
            .ok()
            .and_then(|t| Dialect::Jsonc.check(&t).ok());
        let Some(settings) = settings else {
            return Vec::new();
        };
        if memd_hooks(&settings, self).is_empty() {
            return Vec::new();
        }
        let folder = crate::env_tags::repository_of(cwd).unwrap_or_else(|| cwd.to_path_buf());
        vec![folder_trust(home, &settings, &folder)]
    }

    fn next_steps(&self) -> Vec<String> {
        vec![format!(
            "Gemini CLI runs memd's hooks and MCP server only in folders you trust: run `gemini` in a repository and trust it (or add it to ~/.gemini/trustedFolders.json); headless runs in an untrusted folder fail. `memctl doctor` in the repository tells."
        )]
    }
}

/// The policy file memd owns.
fn policy_file(home: &Path) -> PathBuf {
    home.join(".gemini/policies/memd.toml")
}

/// The policy rule that lets memd's [`APPROVED`] tools run
/// (`mcp_memd_search`...) without asking.
fn policy() -> String {
    let tools: Vec<String> = APPROVED
        .iter()
        .map(|t| format!("\"mcp_{NAME}_{t}\""))
        .collect();
    format!(
        "# Written by `memctl install`, removed by `memctl uninstall`: memd's MCP tools\n# that only read, or change only what memd has learned, run without asking.\n# `remember` writes into the repository, so it is not here: it asks first.\n[[rule]]\nmcpName = \"{NAME}\"\ntoolName = [{}]\ndecision = \"allow\"\npriority = 100\n",
        tools.join(", ")
    )
}

/// How Gemini CLI decides whether `folder` is trusted: folder trust off
/// (`security.folderTrust.enabled: false`) trusts every folder; else the
/// longest rule of `~/.gemini/trustedFolders.json` whose folder holds it
/// (`TRUST_PARENT` standing for the folder's parent).
fn folder_trust(home: &Path, settings: &Value, folder: &Path) -> Check {
    let name = format!("gemini folder trust in {}", folder.display());
    let fix = format!(
        "run `gemini` in {} and trust the folder, or add {{\"{}\": \"TRUST_FOLDER\"}} to ~/.gemini/trustedFolders.json (for one headless run: GEMINI_CLI_TRUST_WORKSPACE=true)",
        folder.display(),
        folder.display()
    );
    if settings["security"]["folderTrust"]["enabled"] == Value::Bool(false) {
        return Check::pass(name, "folder trust is off in ~/.gemini/settings.json");
    }
    let path = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".gemini/trustedFolders.json"));
    let rules = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| Dialect::Jsonc.check(&t).ok());
    let folder = folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf());
    let mut best: Option<(usize, String)> = None;
    for (rule, level) in rules
        .as_ref()
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let Some(level) = level.as_str() else {
            continue;
        };
        let base = Path::new(rule);
        let base = if level == "TRUST_PARENT" {
            base.parent().unwrap_or(base)
        } else {
            base
        };
        let base = base.canonicalize().unwrap_or_else(|_| base.to_path_buf());
        if folder.starts_with(&base) && best.as_ref().is_none_or(|(len, _)| rule.len() > *len) {
            best = Some((rule.len(), level.to_string()));
        }
    }
    match best.map(|(_, level)| level) {
        Some(level) if level == "TRUST_FOLDER" || level == "TRUST_PARENT" => {
            Check::pass(name, "trusted: Gemini CLI runs memd's hooks and MCP server here")
        }
        Some(_) => Check::fail(
            name,
            "marked not to be trusted: Gemini CLI loads no hooks and no MCP server here",
            fix,
        ),
        None => Check::fail(
            name,
            "not trusted: Gemini CLI loads no hooks and no MCP server here, and a headless run stops",
            fix,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_allows_the_tools_that_do_not_write_into_the_repository() {
        let policy: toml::Table = policy().parse().unwrap();
        let rule = &policy["rule"][0];
        assert_eq!(rule["mcpName"].as_str(), Some("memd"));
        assert_eq!(rule["decision"].as_str(), Some("allow"));
        let tools: Vec<&str> = rule["toolName"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t.as_str())
            .collect();
        assert_eq!(
            tools,
            [
                "mcp_memd_search",
                "mcp_memd_get",
                "mcp_memd_explain",
                "mcp_memd_feedback"
            ]
        );
    }

    #[test]
    fn a_folder_is_trusted_by_its_longest_rule() {
        let home = tempfile::tempdir().unwrap();
        let repo = home.path().join("src/app");
        std::fs::create_dir_all(&repo).unwrap();
        let check = |rules: Value| {
            std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
            std::fs::write(
                home.path().join(".gemini/trustedFolders.json"),
                rules.to_string(),
            )
            .unwrap();
            folder_trust(home.path(), &json!({}), &repo).ok
        };
        let src = home.path().join("src").display().to_string();
        let app = repo.display().to_string();
        assert_eq!(check(json!({})), Some(false));
        assert_eq!(check(json!({&src: "TRUST_FOLDER"})), Some(true));
        assert_eq!(
            check(json!({&src: "TRUST_FOLDER", &app: "DO_NOT_TRUST"})),
            Some(false)
        );
        assert_eq!(
            check(json!({format!("{app}/x"): "TRUST_PARENT"})),
            Some(true)
        );
        let off = json!({"security": {"folderTrust": {"enabled": false}}});
        assert_eq!(folder_trust(home.path(), &off, &repo).ok, Some(true));
    }

    #[test]
    fn install_then_uninstall_gives_back_a_settings_file_with_comments() {
        let text = "{\n  // my theme\n  \"ui\": {\"theme\": \"GitHub\"},\n  \"tools\": {\n    \"allowed\": [\"run_shell_command(git)\"], // mine\n  },\n}\n";
        let doc = Doc::parse(text, Dialect::Jsonc).unwrap();
        let options = Options::for_tests();
        assert!(crate::install::hooks::merge_hooks(&doc, &options, &Gemini).unwrap());
        let server = json!({"command": "/usr/bin/memctl", "args": ["mcp"]});
        assert!(register_json(&doc, SERVERS, &server, &["command", "args"]).unwrap());
        let value = doc.value();
        assert_eq!(
            value["hooks"]["BeforeAgent"][0]["hooks"][0],
            json!({"type": "command", "command": "/usr/bin/memctl hook gemini BeforeAgent", "timeout": 5000})
        );
        assert_eq!(value["mcpServers"]["memd"], server);
        assert!(doc.text().contains("// my theme"));
        assert!(crate::install::hooks::remove_hooks(&doc, "gemini"));
        assert!(unregister_json(&doc, SERVERS));
        assert_eq!(doc.text(), text);
    }
}
