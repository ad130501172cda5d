//! memd's hooks in an agent's JSON settings: Claude Code's
//! `settings.json`, Codex CLI's `hooks.json` and Gemini CLI's
//! `settings.json` have the same shape (event, then groups of
//! `{"type": "command", ...}` hooks). Merged, never replaced: other hooks
//! and settings stay as they are, to the byte ([`json_doc`]); and taken out
//! again the same way.

use std::path::Path;

use serde_json::{json, Value};

use super::files::{self, Place, Plan};
use super::json_doc::{self, array_in, drop_if_empty, input, object_in, string_at, Doc};
use super::{Options, Outcome, Step};
use crate::harness::Harness;

/// Whether a hook command is memd's for this harness and event.
pub fn is_memd_command(command: &str, harness: &str, event: &str) -> bool {
    command.contains("memctl") && command.contains(&format!("hook {harness} {event}"))
}

/// Whether a hook command is memd's for this harness, any event.
fn is_memd_hook(command: &str, harness: &str) -> bool {
    command.contains("memctl") && command.contains(&format!("hook {harness} "))
}

/// `word` as one word for the shell the harness runs hook commands with:
/// as it is when it holds nothing the shell treats specially, else in
/// single quotes.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%=,".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The hook command for one harness and event: with `--socket` when the
/// install was made for a socket other than the default, since the agent's
/// environment may not carry `MEMD_SOCKET` (Codex's interactive mode keeps
/// the environment of its first launch).
pub fn command(options: &Options, harness: &str, event: &str) -> String {
    let mut cmd = format!(
        "{} hook {harness} {event}",
        shell_word(&options.memctl.to_string_lossy())
    );
    if let Some(agent) = &options.agent {
        cmd.push_str(&format!(" --agent {}", shell_word(agent)));
    }
    if let Some(socket) = &options.hook_socket {
        cmd.push_str(&format!(
            " --socket {}",
            shell_word(&socket.to_string_lossy())
        ));
    }
    cmd
}

/// memd's hook commands in a settings document, by event, for doctor.
pub fn memd_hooks(doc: &Value, harness: &dyn Harness) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for event in harness.events() {
        let commands = doc["hooks"][event.name]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|group| group["hooks"].as_array().into_iter().flatten())
            .filter_map(|h| h["command"].as_str())
            .filter(|c| is_memd_command(c, harness.name(), event.name));
        for command in commands {
            found.push((event.name.to_string(), command.to_string()));
        }
    }
    found
}

/// Takes memd's hooks that `ours` picks out of one event's list: a group
/// left with no hook goes too, and the list with it when memd emptied it.
/// Returns whether anything was taken out.
fn take_out(
    hooks: &jsonc_parser::cst::CstObject,
    event: &str,
    ours: &dyn Fn(&str) -> bool,
) -> bool {
    let Some(list) = hooks.array_value(event) else {
        return false;
    };
    let mut removed = false;
    for group in list.elements() {
        let Some(hs) = group.as_object().and_then(|g| g.array_value("hooks")) else {
            continue;
        };
        let mut taken = false;
        for hook in hs.elements() {
            let command = hook.as_object().and_then(|h| string_at(&h, "command"));
            if command.is_some_and(|c| ours(&c)) {
                json_doc::remove(hook);
                taken = true;
            }
        }
        if taken && hs.elements().is_empty() {
            json_doc::remove(group);
        }
        removed |= taken;
    }
    if removed {
        drop_if_empty(hooks, event);
    }
    removed
}

/// Adds memd's hooks to a settings document, keeping everything else.
/// Returns whether anything changed.
pub fn merge_hooks(doc: &Doc, options: &Options, harness: &dyn Harness) -> Result<bool, String> {
    let name = harness.name();
    let hooks = object_in(&doc.object(), "hooks", "hooks")?;
    let mut changed = false;
    for event in harness.events().iter().map(|e| e.name) {
        let list = array_in(&hooks, event, &format!("hooks.{event}"))?;
        let wanted = command(options, name, event);
        let mut present = false;
        for group in list.elements() {
            let Some(hs) = group.as_object().and_then(|g| g.array_value("hooks")) else {
                continue;
            };
            for hook in hs.elements().iter().filter_map(|h| h.as_object()) {
                let Some(current) = string_at(&hook, "command") else {
                    continue;
                };
                if !is_memd_command(&current, name, event) {
                    continue;
                }
                present = true;
                // Another socket, binary or role than this install's:
                // brought in line.
                if current != wanted {
                    if let Some(prop) = hook.get("command") {
                        prop.set_value(wanted.clone().into());
                    }
                    changed = true;
                }
            }
        }
        if !present {
            list.append(input(&json!({"hooks": [harness.hook_entry(&wanted)]})));
            changed = true;
        }
    }
    // memd's hooks for events this harness does not have (an earlier
    // version installed SessionEnd for Codex) are taken out; nobody else's.
    let installed: Vec<&str> = harness.events().iter().map(|e| e.name).collect();
    for prop in hooks.properties() {
        let Some(event) = prop.decoded_name() else {
            continue;
        };
        if !installed.contains(&event.as_str()) {
            changed |= take_out(&hooks, &event, &|c| is_memd_command(c, name, &event));
        }
    }
    Ok(changed)
}

/// Takes every hook of memd's for this harness out of a settings document
/// (and what memd's alone filled: a group, an event's list, `hooks`).
/// Returns whether anything changed.
pub fn remove_hooks(doc: &Doc, harness: &str) -> bool {
    let top = doc.object();
    let Some(hooks) = top.object_value("hooks") else {
        return false;
    };
    let mut changed = false;
    for prop in hooks.properties() {
        if let Some(event) = prop.decoded_name() {
            changed |= take_out(&hooks, &event, &|c| is_memd_hook(c, harness));
        }
    }
    if changed {
        drop_if_empty(&top, "hooks");
    }
    changed
}

/// Merges the hooks into one settings file: the user's, or the project's
/// (in `repo`); `extra` makes the agent's other settings in the same file
/// (Claude Code's permissions, Gemini CLI's MCP server).
pub fn install_hooks(
    path: &Path,
    options: &Options,
    harness: &dyn Harness,
    place: Place<'_>,
    extra: &dyn Fn(&Doc) -> Result<bool, String>,
) -> Result<Plan, String> {
    let (read, doc) = files::read_doc(path, place, harness.dialect())?;
    let named = |e: String| format!("{}: {e}; left as it is", path.display());
    let mut changed = merge_hooks(&doc, options, harness).map_err(named)?;
    changed |= extra(&doc).map_err(named)?;
    if !changed {
        return Ok(Plan::Done(Step::new(path, Outcome::AlreadyThere)));
    }
    files::plan_doc(read, &doc, place, harness.dialect())
}

/// Takes memd's hooks (and what `extra` takes out beside them) out of one
/// settings file; a file memd is not in is left alone.
pub fn uninstall_hooks(
    path: &Path,
    harness: &dyn Harness,
    place: Place<'_>,
    extra: &dyn Fn(&Doc) -> bool,
) -> Result<Plan, String> {
    let (read, doc) = files::read_doc(path, place, harness.dialect())?;
    if read.current.is_none() {
        return Ok(Plan::Done(Step::new(path, Outcome::NotThere)));
    }
    let mut changed = remove_hooks(&doc, harness.name());
    changed |= extra(&doc);
    if !changed {
        return Ok(Plan::Done(Step::new(path, Outcome::NotThere)));
    }
    files::plan_doc(read, &doc, place, harness.dialect())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::harness::{claude::Claude, codex::Codex};
    use crate::install::json_doc::Dialect;

    fn options() -> Options {
        Options {
            agent: Some("backend-engineer".into()),
            ..Options::for_tests()
        }
    }

    fn doc(value: Value) -> Doc {
        Doc::parse(
            &serde_json::to_string_pretty(&value).unwrap(),
            Dialect::Json,
        )
        .unwrap()
    }

    #[test]
    fn a_socket_other_than_the_default_is_in_every_command_and_updates_old_ones() {
        let doc = doc(json!({}));
        merge_hooks(&doc, &options(), &Claude).unwrap();
        let custom = Options {
            hook_socket: Some(PathBuf::from("/tmp/my sockets/it's.sock")),
            ..options()
        };
        assert!(merge_hooks(&doc, &custom, &Claude).unwrap());
        let value = doc.value();
        for event in Claude.events() {
            let hooks = value["hooks"][event.name].as_array().unwrap();
            assert_eq!(hooks.len(), 1, "updated in place, not added");
            assert_eq!(
                hooks[0]["hooks"][0]["command"],
                format!("/usr/bin/memctl hook claude {} --agent backend-engineer --socket '/tmp/my sockets/it'\\''s.sock'", event.name)
            );
        }
        assert!(!merge_hooks(&doc, &custom, &Claude).unwrap());
        // Back to the default socket: the flag goes.
        assert!(merge_hooks(&doc, &options(), &Claude).unwrap());
        assert!(!doc.text().contains("--socket"));
    }

    #[test]
    fn merging_keeps_other_hooks_is_idempotent_and_comes_out_again_to_the_byte() {
        let text = "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"UserPromptSubmit\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"date\"}]}],\n    \"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"guard.sh\"}]}]\n  }\n}\n";
        let doc = Doc::parse(text, Dialect::Json).unwrap();
        assert!(merge_hooks(&doc, &options(), &Claude).unwrap());
        let value = doc.value();
        assert_eq!(value["model"], "opus");
        assert_eq!(
            value["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "guard.sh"
        );
        let prompt = value["hooks"]["UserPromptSubmit"].as_array().unwrap();
        assert_eq!(prompt.len(), 2);
        assert_eq!(prompt[0]["hooks"][0]["command"], "date");
        assert_eq!(
            prompt[1]["hooks"][0],
            json!({"type": "command", "command": "/usr/bin/memctl hook claude UserPromptSubmit --agent backend-engineer", "timeout": 5})
        );
        let once = doc.text();
        assert!(!merge_hooks(&doc, &options(), &Claude).unwrap());
        assert_eq!(doc.text(), once);
        assert!(remove_hooks(&doc, "claude"));
        assert_eq!(doc.text(), text);
        assert!(!remove_hooks(&doc, "claude"));
    }

    #[test]
    fn codex_gets_stop_instead_of_session_end_and_loses_the_old_one() {
        // As an earlier memd left it: SessionEnd, which Codex never sends,
        // once alone and once beside somebody else's hook.
        let doc = doc(json!({
            "hooks": {
                "SessionEnd": [
                    {"hooks": [{"type": "command", "command": "/usr/bin/memctl hook codex SessionEnd"}]},
                    {"hooks": [{"type": "command", "command": "/usr/bin/memctl hook codex SessionEnd"}, {"type": "command", "command": "notify.sh"}]}
                ],
                "PreCompact": []
            }
        }));
        assert!(merge_hooks(&doc, &options(), &Codex).unwrap());
        let value = doc.value();
        let hooks = value["hooks"].as_object().unwrap();
        for event in ["SessionStart", "UserPromptSubmit", "Stop"] {
            assert!(
                hooks[event][0]["hooks"][0]["command"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("hook codex {event}")),
                "{value}"
            );
        }
        let end = hooks["SessionEnd"].as_array().unwrap();
        assert_eq!(end.len(), 1, "{value}");
        assert_eq!(
            end[0]["hooks"],
            json!([{"type": "command", "command": "notify.sh"}])
        );
        assert_eq!(
            hooks["PreCompact"],
            json!([]),
            "other lists are left as they are"
        );
        let once = doc.text();
        assert!(!merge_hooks(&doc, &options(), &Codex).unwrap());
        assert_eq!(doc.text(), once);
        // Claude Code keeps its SessionEnd.
        let claude = super::super::json_doc::Doc::parse("{}", Dialect::Json).unwrap();
        merge_hooks(&claude, &options(), &Claude).unwrap();
        assert!(claude.value()["hooks"]["SessionEnd"].is_array());
        assert!(claude.value()["hooks"].get("Stop").is_none());
    }

    #[test]
    fn a_settings_file_of_the_wrong_shape_is_refused() {
        assert!(merge_hooks(&doc(json!({"hooks": 3})), &options(), &Claude).is_err());
        assert!(merge_hooks(&doc(json!({"hooks": {"Stop": 3}})), &options(), &Codex).is_err());
    }
}
