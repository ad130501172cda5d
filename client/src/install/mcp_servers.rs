//! memd's MCP server (`memctl mcp`) as the agents register it: the server
//! (command and arguments), read back from a JSON settings document or
//! Codex's `config.toml`, and registered in (or taken out of) a JSON
//! settings document. Each agent's file in `crate::harness` says where.
//!
//! memd's tools run without asking, except `remember`, which writes into
//! the repository (its `.memd/`) and so is the user's to approve: each
//! agent's file says how it is told.

use serde_json::Value;

use super::json_doc::{self, drop_if_empty, input, object_in, Doc};
use super::Options;

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

/// memd's server in Codex's `config.toml`; `Err` when the file is not TOML.
pub fn in_codex(text: &str) -> Result<Option<Server>, String> {
    let table = text
        .parse::<toml::Table>()
        .map_err(crate::harness::codex::config::first_line)?;
    let entry = table.get("mcp_servers").and_then(|s| s.get(NAME));
    let entry = entry.and_then(|e| serde_json::to_value(e).ok());
    Ok(entry.as_ref().and_then(Server::from_entry))
}

/// memd's server in a JSON settings document, under `container`
/// (`mcpServers`).
pub fn in_json(doc: &Value, container: &str) -> Option<Server> {
    Server::from_entry(doc.get(container)?.get(NAME)?)
}

/// Registers memd's server in a JSON settings document: `entry` under
/// `container` (`mcpServers`) when there is none; when there is one, the
/// `managed` keys of it brought in line with `entry` and every other key
/// (an `env` the user gave it) kept. Returns whether anything changed.
pub fn register_json(
    doc: &Doc,
    container: &str,
    entry: &Value,
    managed: &[&str],
) -> Result<bool, String> {
    let servers = object_in(&doc.object(), container, container)?;
    let Some(prop) = servers.get(NAME) else {
        servers.append(NAME, input(entry));
        return Ok(true);
    };
    let current = prop
        .object_value()
        .ok_or(format!("`{container}.{NAME}` is not a JSON object"))?;
    let mut changed = false;
    for &key in managed {
        let Some(wanted) = entry.get(key) else {
            continue;
        };
        match current.get(key) {
            Some(p) if p.value().and_then(|v| v.to_serde_value()).as_ref() == Some(wanted) => {}
            Some(p) => {
                p.set_value(input(wanted));
                changed = true;
            }
            None => {
                current.append(key, input(wanted));
                changed = true;
            }
        }
    }
    Ok(changed)
}

/// Takes memd's server out of a JSON settings document (and `container`,
/// when memd's was all it held). Returns whether anything changed.
pub fn unregister_json(doc: &Doc, container: &str) -> bool {
    let top = doc.object();
    let Some(prop) = top.object_value(container).and_then(|s| s.get(NAME)) else {
        return false;
    };
    json_doc::remove(prop.into());
    drop_if_empty(&top, container);
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::install::json_doc::Dialect;

    #[test]
    fn a_registration_is_made_brought_in_line_and_taken_out_keeping_the_rest() {
        let text = "{\n  \"mcpServers\": {\n    \"docs\": {\"command\": \"d\"}\n  }\n}\n";
        let doc = Doc::parse(text, Dialect::Json).unwrap();
        let entry = json!({"type": "stdio", "command": "/m", "args": ["mcp"], "env": {}});
        assert!(register_json(&doc, "mcpServers", &entry, &["command", "args"]).unwrap());
        assert_eq!(
            in_json(&doc.value(), "mcpServers"),
            Some(Server {
                command: "/m".into(),
                args: vec!["mcp".into()]
            })
        );
        assert!(!register_json(&doc, "mcpServers", &entry, &["command", "args"]).unwrap());
        // Another binary: the command follows, the user's env stays.
        let doc = Doc::parse(
            &doc.text().replace("\"env\": {}", "\"env\": {\"A\": \"1\"}"),
            Dialect::Json,
        )
        .unwrap();
        let moved = json!({"type": "stdio", "command": "/n", "args": ["mcp"], "env": {}});
        assert!(register_json(&doc, "mcpServers", &moved, &["command", "args"]).unwrap());
        let value = doc.value();
        assert_eq!(value["mcpServers"]["memd"]["command"], "/n");
        assert_eq!(value["mcpServers"]["memd"]["env"]["A"], "1");
        assert!(unregister_json(&doc, "mcpServers"));
        assert_eq!(doc.text(), text);
        assert!(!unregister_json(&doc, "mcpServers"));
        let bad = Doc::parse("{\"mcpServers\": {\"memd\": 3}}", Dialect::Json).unwrap();
        assert!(register_json(&bad, "mcpServers", &entry, &["command"]).is_err());
    }
}
