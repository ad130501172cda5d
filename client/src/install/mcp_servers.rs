//! memd's MCP server (`memctl mcp`) registered with the agents, as their
//! own commands would: Claude Code's user scope (`mcpServers.memd` in
//! `~/.claude.json`, what `claude mcp add --scope user` writes) and Codex's
//! `[mcp_servers.memd]` table in `~/.codex/config.toml`. The TOML file is
//! the user's and is edited as text (the table appended, or its `command`
//! and `args` lines replaced), then read back: an edit that would not read
//! as memd's server is not made, and the user is told what to write.
//!
//! memd's tools run without asking, except `remember`, which writes into
//! the repository (its `.memd/`) and so is the user's to approve: in Codex,
//! the server's `default_tools_approval_mode = "approve"` with `remember`
//! set to `"prompt"` (written with the table, then left to the user); in
//! Claude Code, the other four tools in the user settings'
//! `permissions.allow`.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::codex_config::{header, key_value, Edit};
use super::files::{read_json, write_json};
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
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        e.to_string().lines().next().unwrap_or_default().to_string()
    })?;
    let entry = table.get("mcp_servers").and_then(|s| s.get(NAME));
    let entry = entry.and_then(|e| serde_json::to_value(e).ok());
    Ok(entry.as_ref().and_then(Server::from_entry))
}

/// Registers the server in Claude Code's `~/.claude.json`, keeping every
/// other key (and an `env` the user gave memd's entry).
pub fn register_claude(path: &Path, options: &Options) -> Result<Step, String> {
    let server = Server::for_install(options);
    let mut doc = read_json(path)?;
    if in_claude(&doc).as_ref() == Some(&server) {
        return Ok(Step::new(path, Outcome::Registered));
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
    write_json(path, &doc, options.dry_run)
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

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn command_line(server: &Server) -> String {
    format!("command = {}", toml_string(&server.command))
}

fn args_line(server: &Server) -> String {
    let args: Vec<String> = server.args.iter().map(|a| toml_string(a)).collect();
    format!("args = [{}]", args.join(", "))
}

/// Replaces the `key = ...` line of the table whose header is at `at`, or
/// adds one under the header.
fn set_in_table(lines: &mut Vec<String>, at: usize, key: &str, line: String) {
    let end = lines[at + 1..]
        .iter()
        .position(|l| header(l).is_some())
        .map_or(lines.len(), |i| at + 1 + i);
    match (at + 1..end).find(|&i| key_value(&lines[i]).is_some_and(|(k, _)| k == key)) {
        Some(i) => lines[i] = line,
        None => lines.insert(at + 1, line),
    }
}

/// Registers `server` in `text`, Codex's `config.toml` (empty if none).
pub fn codex_edit(text: &str, server: &Server) -> Edit {
    let refuse = |why: String| {
        Edit::Refused(format!(
            "{why}: write `[mcp_servers.{NAME}]` with `{}` and `{}` yourself",
            command_line(server),
            args_line(server)
        ))
    };
    let current = match in_codex(text) {
        Ok(current) => current,
        Err(err) => return refuse(format!("not valid TOML ({err})")),
    };
    if current.as_ref() == Some(server) {
        return Edit::Unchanged;
    }
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let table = format!("mcp_servers.{NAME}");
    match lines
        .iter()
        .position(|l| header(l).as_deref() == Some(&table))
    {
        None if current.is_some() => {
            return refuse("memd's server is written there in a form memd does not edit".into())
        }
        None => {
            if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                lines.push(String::new());
            }
            lines.push(format!("[{table}]"));
            lines.push(command_line(server));
            lines.push(args_line(server));
            lines.push(format!(
                "# memd's tools run without asking, except `{ASKS}`, which writes into the repository."
            ));
            lines.push("default_tools_approval_mode = \"approve\"".into());
            lines.push(String::new());
            lines.push(format!("[{table}.tools.{ASKS}]"));
            lines.push("approval_mode = \"prompt\"".into());
        }
        Some(at) => {
            set_in_table(&mut lines, at, "args", args_line(server));
            set_in_table(&mut lines, at, "command", command_line(server));
        }
    }
    let new = lines.join("\n") + "\n";
    match in_codex(&new) {
        Ok(Some(read)) if read == *server => Edit::Changed(new),
        _ => refuse(format!(
            "the `[{table}]` table is written in a form memd does not edit"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a new table says of approvals, after its command and args.
    const APPROVALS: &str = "# memd's tools run without asking, except `remember`, which writes into the repository.\ndefault_tools_approval_mode = \"approve\"\n\n[mcp_servers.memd.tools.remember]\napproval_mode = \"prompt\"\n";

    fn server(socket: Option<&str>) -> Server {
        let mut args = vec!["mcp".to_string()];
        if let Some(s) = socket {
            args.extend(["--socket".to_string(), s.to_string()]);
        }
        Server {
            command: "/opt/memd bin/memctl".into(),
            args,
        }
    }

    #[test]
    fn the_table_is_appended_and_nothing_else_moves() {
        let text = "model = \"o3\" # mine\n\n[mcp_servers.docs]\ncommand = \"docs\"\n";
        let Edit::Changed(new) = codex_edit(text, &server(None)) else {
            panic!()
        };
        assert_eq!(
            new,
            format!("model = \"o3\" # mine\n\n[mcp_servers.docs]\ncommand = \"docs\"\n\n[mcp_servers.memd]\ncommand = \"/opt/memd bin/memctl\"\nargs = [\"mcp\"]\n{APPROVALS}")
        );
        assert_eq!(codex_edit(&new, &server(None)), Edit::Unchanged);
        assert_eq!(in_codex(&new).unwrap(), Some(server(None)));
        assert_eq!(
            codex_edit("", &server(None)),
            Edit::Changed(format!(
                "[mcp_servers.memd]\ncommand = \"/opt/memd bin/memctl\"\nargs = [\"mcp\"]\n{APPROVALS}"
            ))
        );
    }

    #[test]
    fn an_older_registration_is_brought_in_line_in_place() {
        let text = "[mcp_servers.memd] # ours\ncommand = \"/old/memctl\"\nargs = [\"mcp\"]\nstartup_timeout_sec = 20\n\n[features]\nhooks = true\n";
        let socket = "/run/user/1000/my \"memd\".sock";
        let Edit::Changed(new) = codex_edit(text, &server(Some(socket))) else {
            panic!()
        };
        assert_eq!(
            new,
            "[mcp_servers.memd] # ours\ncommand = \"/opt/memd bin/memctl\"\nargs = [\"mcp\", \"--socket\", \"/run/user/1000/my \\\"memd\\\".sock\"]\nstartup_timeout_sec = 20\n\n[features]\nhooks = true\n"
        );
        assert_eq!(in_codex(&new).unwrap().unwrap().socket(), Path::new(socket));
        // No args line: added under the header.
        let Edit::Changed(new) =
            codex_edit("[mcp_servers.memd]\ncommand = \"/old\"\n", &server(None))
        else {
            panic!()
        };
        assert_eq!(in_codex(&new).unwrap(), Some(server(None)));
    }

    #[test]
    fn forms_a_line_edit_cannot_change_are_left_with_what_to_write() {
        for text in [
            "mcp_servers = { memd = { command = \"/old\" } }\n",
            "[mcp_servers.memd]\ncommand = \"/old\"\nargs = [\n  \"mcp\",\n  \"--x\",\n]\n",
            "not = [toml\n",
        ] {
            let Edit::Refused(why) = codex_edit(text, &server(None)) else {
                panic!("{text}")
            };
            assert!(why.contains("command = \"/opt/memd bin/memctl\""), "{why}");
        }
    }

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
