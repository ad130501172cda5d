//! OpenCode.
//!
//! - No command hooks: a plugin, `$XDG_CONFIG_HOME/opencode/plugins/memd.js`,
//!   a file memd owns whole ([`PLUGIN`], with the `memctl` to run and its
//!   arguments written in). In its `chat.message` hook it runs `memctl hook
//!   opencode chat.message` and adds what memd answers to the user's
//!   message as a text part of its own; on `session.idle` (the end of a
//!   turn) it writes the session's messages it has not written yet to
//!   `$XDG_STATE_HOME/memd/opencode/<session>.jsonl` and runs `memctl hook
//!   opencode session.idle` with that file as the transcript. OpenCode does
//!   not wait for its plugins' event handlers on exit but does await their
//!   `dispose`, which waits (5 s at most) for what is under way. Every call
//!   is bounded (2 s) and fails open: whatever goes wrong, the turn goes on
//!   without memd.
//! - A session's start comes with its first prompt, as for Gemini CLI: a
//!   plugin has no way to add context at a session's creation.
//! - memd's MCP server is `mcp.memd` (`type: "local"`) in the user's config
//!   (`opencode.jsonc`, `opencode.json` or `config.json`, whichever is
//!   there, else a new `opencode.json`; JSON with comments, edited as
//!   text). OpenCode runs MCP tools without asking; `remember`, which
//!   writes into the repository, asks: `"permission": {"memd_remember":
//!   "ask"}` (`opencode run` refuses it).
//! - Its transcript is the plugin's file: one `{info, parts}` message a
//!   line, as OpenCode's client returns them (read by
//!   `memd::evaluate::transcript`).

use std::path::{Path, PathBuf};

use memd::protocol::StatusReport;
use serde_json::{json, Value};

use super::{Action, Event, Harness};
use crate::doctor::Check;
use crate::install::files::{self, Place, Plan};
use crate::install::json_doc::{self, object_in, Dialect, Doc};
use crate::install::mcp_servers::{register_json, unregister_json, Server, ASKS, NAME};
use crate::install::{Options, Outcome, Step};

/// OpenCode.
pub struct OpenCode;

/// Where OpenCode keeps MCP servers.
const SERVERS: &str = "mcp";

/// The plugin, with `__MEMD__` standing for its settings.
const PLUGIN: &str = include_str!("opencode_plugin.js");

/// The line of the plugin that holds its settings starts so.
const SETTINGS: &str = "const MEMD = ";

impl Harness for OpenCode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn label(&self) -> &'static str {
        "OpenCode"
    }

    fn command(&self) -> &'static str {
        "opencode"
    }

    fn events(&self) -> &'static [Event] {
        &[
            Event {
                name: "chat.message",
                action: Action::Prompt,
            },
            Event {
                name: "session.idle",
                action: Action::TurnEnd,
            },
        ]
    }

    fn dialect(&self) -> Dialect {
        Dialect::Jsonc
    }

    fn start_with_first_prompt(&self) -> bool {
        true
    }

    fn command_hooks(&self) -> bool {
        false
    }

    fn inject(&self, _event: &str, block: &str) -> Value {
        json!({ "additionalContext": block })
    }

    fn hooks_file(&self, home: &Path) -> PathBuf {
        config_dir(home).join("plugins/memd.js")
    }

    fn next_steps(&self) -> Vec<String> {
        vec!["OpenCode installs the package its plugins build on (@opencode-ai/plugin) into its config directory the first time it starts with memd's plugin: that start needs the npm registry once.".to_string()]
    }

    fn detected(&self, home: &Path) -> bool {
        config_dir(home).is_dir() || super::on_path("opencode")
    }

    fn install(&self, options: &Options) -> Result<Vec<Plan>, String> {
        let server = Server::for_install(options);
        let mut command = vec![server.command.clone()];
        command.extend(server.args.iter().cloned());
        let entry = json!({"type": "local", "command": command});
        let path = config_file(&options.home);
        let (read, doc) = files::read_doc(&path, Place::User, Dialect::Jsonc)?;
        let named = |e: String| format!("{}: {e}; left as it is", path.display());
        let mut changed =
            register_json(&doc, SERVERS, &entry, &["type", "command"]).map_err(named)?;
        changed |= ask_before_remember(&doc).map_err(named)?;
        let config = match changed {
            true => files::plan_doc(read, &doc, Place::User, Dialect::Jsonc)?,
            false => Plan::Done(Step::new(&path, Outcome::Registered)),
        };
        Ok(vec![
            files::plan_file(
                &self.hooks_file(&options.home),
                &plugin(options),
                files::PRIVATE,
            )?,
            config,
        ])
    }

    fn uninstall(&self, options: &Options) -> Result<Vec<Plan>, String> {
        let path = config_file(&options.home);
        let (read, doc) = files::read_doc(&path, Place::User, Dialect::Jsonc)?;
        let mut changed = unregister_json(&doc, SERVERS);
        changed |= json_doc::remove_key_if(&doc, "permission", &remember_tool(), &json!("ask"));
        let config = match changed && read.current.is_some() {
            true => files::plan_doc(read, &doc, Place::User, Dialect::Jsonc)?,
            false => Plan::Done(Step::new(&path, Outcome::NotThere)),
        };
        Ok(vec![
            files::plan_file_removal(&self.hooks_file(&options.home))?,
            config,
        ])
    }

    fn mcp_server(&self, home: &Path) -> (PathBuf, Result<Option<Server>, String>) {
        let path = config_file(home);
        let server = match std::fs::read_to_string(&path) {
            Ok(text) => Dialect::Jsonc.check(&text).map(|doc| {
                let words: Vec<String> = doc[SERVERS][NAME]["command"]
                    .as_array()?
                    .iter()
                    .map(|w| w.as_str().map(str::to_string))
                    .collect::<Option<_>>()?;
                let (command, args) = words.split_first()?;
                Some(Server {
                    command: command.clone(),
                    args: args.to_vec(),
                })
            }),
            Err(_) => Ok(None),
        };
        (path, server)
    }

    /// The plugin, where it is installed: the `memctl` it runs exists, and
    /// a memd of the user's answers on its socket.
    fn checks(&self, home: &Path, _cwd: &Path, _status: Option<&StatusReport>) -> Vec<Check> {
        let path = self.hooks_file(home);
        let name = format!("plugin {}", path.display());
        let Ok(text) = std::fs::read_to_string(&path) else {
            // memd's MCP server without the plugin: half an install.
            if matches!(self.mcp_server(home).1, Ok(Some(_))) {
                return vec![Check::fail(
                    name,
                    "missing, while OpenCode has memd's MCP server: no prompt gets memd's block",
                    "run `memctl install`",
                )];
            }
            return Vec::new();
        };
        let Some(settings) = settings_of(&text) else {
            return vec![Check::fail(
                name,
                "not memd's plugin as install writes it",
                "run `memctl install`",
            )];
        };
        let memctl = settings["memctl"].as_str().unwrap_or_default();
        if !Path::new(memctl).is_file() {
            return vec![Check::fail(
                name,
                format!("it runs {memctl}, which does not exist"),
                "run `memctl install` with the memctl you use now",
            )];
        }
        let args: Vec<String> = settings["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_string))
            .collect();
        let socket = crate::doctor::hook_socket(&args);
        vec![crate::doctor::socket_check(&name, &socket)]
    }
}

/// OpenCode's configuration directory: `$XDG_CONFIG_HOME/opencode`, else
/// `~/.config/opencode`.
fn config_dir(home: &Path) -> PathBuf {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .unwrap_or_else(|| home.join(".config"))
        .join("opencode")
}

/// The user's config file memd edits: the one of OpenCode's names that is
/// there (read last by OpenCode, so it wins), else a new `opencode.json`.
fn config_file(home: &Path) -> PathBuf {
    let dir = config_dir(home);
    ["opencode.jsonc", "opencode.json", "config.json"]
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.exists())
        .unwrap_or_else(|| dir.join("opencode.json"))
}

/// The tool that asks first, as OpenCode names it (`memd_remember`).
fn remember_tool() -> String {
    format!("{NAME}_{ASKS}")
}

/// `permission.memd_remember = "ask"`, where the user has no rule for it.
/// Returns whether anything changed.
fn ask_before_remember(doc: &Doc) -> Result<bool, String> {
    let permission = object_in(&doc.object(), "permission", "permission")?;
    if permission.get(&remember_tool()).is_some() {
        return Ok(false);
    }
    permission.append(&remember_tool(), "ask".into());
    Ok(true)
}

/// The plugin for this install: the `memctl` to run and its arguments.
fn plugin(options: &Options) -> String {
    let mut args = Vec::new();
    if let Some(agent) = &options.agent {
        args.extend(["--agent".to_string(), agent.clone()]);
    }
    if let Some(socket) = &options.hook_socket {
        args.extend(["--socket".to_string(), socket.display().to_string()]);
    }
    let settings = json!({"memctl": options.memctl.display().to_string(), "args": args});
    PLUGIN.replace("__MEMD__", &settings.to_string())
}

/// The settings a plugin of memd's was written with.
fn settings_of(text: &str) -> Option<Value> {
    let line = text.lines().find(|l| l.starts_with(SETTINGS))?;
    serde_json::from_str(line[SETTINGS.len()..].trim_end().trim_end_matches(';')).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Options {
        Options {
            agent: Some("qa".into()),
            memctl: PathBuf::from("/opt/my \"bin\"/memctl"),
            hook_socket: Some(PathBuf::from("/tmp/m.sock")),
            ..Options::for_tests()
        }
    }

    #[test]
    fn the_plugin_carries_its_settings_as_json() {
        let plugin = plugin(&options());
        assert!(!plugin.contains("__MEMD__"));
        assert_eq!(
            settings_of(&plugin),
            Some(
                json!({"memctl": "/opt/my \"bin\"/memctl", "args": ["--agent", "qa", "--socket", "/tmp/m.sock"]})
            )
        );
    }

    #[test]
    fn remember_asks_unless_the_user_has_a_rule_and_comes_out_again() {
        let text = "{\n  // mine\n  \"permission\": {\n    \"bash\": \"ask\",\n  },\n}\n";
        let doc = Doc::parse(text, Dialect::Jsonc).unwrap();
        assert!(ask_before_remember(&doc).unwrap());
        assert_eq!(doc.value()["permission"]["memd_remember"], "ask");
        assert!(!ask_before_remember(&doc).unwrap());
        assert!(json_doc::remove_key_if(
            &doc,
            "permission",
            &remember_tool(),
            &json!("ask")
        ));
        assert_eq!(doc.text(), text);
        let theirs = Doc::parse(
            "{\"permission\": {\"memd_remember\": \"allow\"}}",
            Dialect::Jsonc,
        )
        .unwrap();
        assert!(!ask_before_remember(&theirs).unwrap());
        assert!(!json_doc::remove_key_if(
            &theirs,
            "permission",
            &remember_tool(),
            &json!("ask")
        ));
    }
}
