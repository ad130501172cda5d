//! memd's MCP server (`memctl mcp`) registered with the agents, as their
//! own commands would: Claude Code's user scope (`mcpServers.memd` in
//! `~/.claude.json`, what `claude mcp add --scope user` writes) and Codex's
//! `[mcp_servers.memd]` table in `~/.codex/config.toml`, which
//! `codex_config` edits as a TOML document in the same write as Codex's
//! hooks feature.
//!
//! memd's tools run without asking, except `remember`, which writes into
//! the repository (its `.memd/`) and so is the user's to approve: in Codex,
//! the server's `default_tools_approval_mode = "approve"` with `remember`
//! set to `"prompt"` (written with the table, then left to the user); in
//! Claude Code, the other four tools in the user settings'
//! `permissions.allow`.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::files::{self, json_text, read_json, Place, Plan};
use super::{Options, Outcome, Step};

/// The name memd's server is registered under.
pub const NAME: &str = "memd";
/// The tools that run without asking: they read, or change only what memd
/// has learned.
pub const APPROVED: [&str; 4] = ["search", "get", "explain", "feedback"];
/// The tool that asks first: it writes into the repository.
pub const ASKS: &str = "remember";

/// The command an agent runs to start memd's MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub command: String,
    pub args: Vec<String>,
}

impl Server {
    /// `memctl mcp`, with `--socket` when the install is for a socket
    /// other than the default (the agents' environment may not carry
    /// `MEMD_SOCKET`).
    pub fn for_install(options: &Options) -> Server {
        let mut args = vec!["mcp".to_string()];
        if let Some(socket) = &options.hook_socket {
            args.push("--socket".into());
            args.push(socket.to_string_lossy().into_owned());
        }
        Server {
            command: options.memctl.to_string_lossy().into_owned(),
            args,
        }
    }

    /// The server an entry (Claude Code's JSON, or Codex's table read as
    /// JSON) describes, if it has a command.
    fn from_entry(entry: &Value) -> Option<Server> {
        let command = entry.get("command")?.as_str()?.to_string();
        let args = entry
            .get("args")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default();
        Some(Server { command, args })
    }

    /// The socket this server's `memctl mcp` talks to: its `--socket`, else
    /// the default.
    pub fn socket(&self) -> std::path::PathBuf {
        let given = self
            .args
            .iter()
            .position(|a| a == "--socket")
            .and_then(|i| self.args.get(i + 1))
            .map(std::path::PathBuf::from);
        memd::protocol::socket_path(given)
    }
}

/// memd's server in Claude Code's user configuration (`~/.claude.json`).
pub fn in_claude(doc: &Value) -> Option<Server> {
    Server::from_entry(doc.get("mcpServers")?.get(NAME)?)
}

/// memd's server in Codex's `config.toml`; `Err` when the file is not TOML.
pub fn in_codex(text: &str) -> Result<Option<Server>, String> {
    let table = text
        .parse::<toml::Table>()
        .map_err(super::codex_config::first_line)?;
    let entry = table.get("mcp_servers").and_then(|s| s.get(NAME));
    let entry = entry.and_then(|e| serde_json::to_value(e).ok());
    Ok(entry.as_ref().and_then(Server::from_entry))
}

/// Registers the server in Claude Code's `~/.claude.json`, keeping every
/// other key (and an `env` the user gave memd's entry).
pub fn register_claude(path: &Path, options: &Options) -> Result<Plan, String> {
    let server = Server::for_install(options);
    let (read, mut doc) = read_json(path, Place::User)?;
    if in_claude(&doc).as_ref() == Some(&server) {
        return Ok(Plan::Done(Step::new(path, Outcome::Registered)));
    }
    let root = doc
        .as_object_mut()
        .ok_or(format!("{}: not a JSON object", path.display()))?;
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or(format!("{}: `mcpServers` is not an object", path.display()))?;
    let env = servers
        .get(NAME)
        .and_then(|e| e.get("env"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    servers.insert(
        NAME.to_string(),
        json!({"type": "stdio", "command": server.command, "args": server.args, "env": env}),
    );
    files::plan(read, json_text(&doc)?, files::PRIVATE, files::is_json)
}

/// Lets Claude Code run memd's [`APPROVED`] tools without asking: each
/// one in the settings' `permissions.allow` (a user settings document).
/// Returns whether anything changed.
pub fn allow_in_claude(doc: &mut Value) -> Result<bool, String> {
    let root = doc
        .as_object_mut()
        .ok_or("the settings file is not a JSON object")?;
    let permissions = root
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or("`permissions` is not a JSON object")?;
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or("`permissions.allow` is not a list")?;
    let mut changed = false;
    for tool in APPROVED {
        let rule = Value::String(format!("mcp__{NAME}__{tool}"));
        if !allow.contains(&rule) {
            allow.push(rule);
            changed = true;
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_may_run_the_tools_that_do_not_write_into_the_repository() {
        let mut doc = json!({"permissions": {"allow": ["Bash(ls)", "mcp__memd__search"]}});
        assert!(allow_in_claude(&mut doc).unwrap());
        assert_eq!(
            doc["permissions"]["allow"],
            json!([
                "Bash(ls)",
                "mcp__memd__search",
                "mcp__memd__get",
                "mcp__memd__explain",
                "mcp__memd__feedback"
            ])
        );
        assert!(!allow_in_claude(&mut doc).unwrap());
        assert!(allow_in_claude(&mut json!({"permissions": []})).is_err());
    }

    #[test]
    fn claudes_entry_is_read_back() {
        let doc =
            json!({"mcpServers": {"memd": {"type": "stdio", "command": "/m", "args": ["mcp"]}}});
        assert_eq!(
            in_claude(&doc),
            Some(Server {
                command: "/m".into(),
                args: vec!["mcp".into()]
            })
        );
        assert_eq!(in_claude(&json!({"mcpServers": {}})), None);
    }
}
