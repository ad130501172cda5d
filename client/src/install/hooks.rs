//! memd's hooks in a harness's JSON settings: Claude Code's
//! `settings.json` and Codex CLI's `hooks.json` have the same shape (event,
//! then groups of `{"type": "command", ...}` hooks). Merged, never
//! replaced: other hooks and settings stay as they are.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::files::{self, json_text, read_json, Place, Plan};
use super::{Options, Outcome, Step};

/// The timeout (seconds) the harness allows a hook.
const HOOK_TIMEOUT_SECS: u64 = 5;

/// The hook events memd is installed for in each harness. Codex CLI has no
/// SessionEnd; its Stop ends each turn, and records the session.
pub fn events(harness: &str) -> &'static [&'static str] {
    match harness {
        "codex" => &["SessionStart", "UserPromptSubmit", "Stop"],
        _ => &["SessionStart", "UserPromptSubmit", "SessionEnd"],
    }
}

/// Whether a hook command is memd's for this harness and event.
pub fn is_memd_command(command: &str, harness: &str, event: &str) -> bool {
    command.contains("memctl") && command.contains(&format!("hook {harness} {event}"))
}

/// Whether a hook entry is memd's for this harness and event.
fn is_ours(hook: &Value, harness: &str, event: &str) -> bool {
    hook["command"]
        .as_str()
        .is_some_and(|c| is_memd_command(c, harness, event))
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

/// Adds memd's hooks to a settings document, keeping everything else.
/// Returns whether anything changed.
pub fn merge_hooks(doc: &mut Value, options: &Options, harness: &str) -> Result<bool, String> {
    let root = doc
        .as_object_mut()
        .ok_or("the settings file is not a JSON object")?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks
        .as_object_mut()
        .ok_or("`hooks` is not a JSON object")?;
    let mut changed = false;
    for &event in events(harness) {
        let list = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let list = list
            .as_array_mut()
            .ok_or(format!("`hooks.{event}` is not a list"))?;
        let wanted = command(options, harness, event);
        let mut present = false;
        for group in list.iter_mut() {
            let Some(hs) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                continue;
            };
            for hook in hs.iter_mut().filter(|h| is_ours(h, harness, event)) {
                present = true;
                // Another socket, binary or role than this install's:
                // brought in line.
                if hook["command"] != wanted {
                    hook["command"] = Value::String(wanted.clone());
                    changed = true;
                }
            }
        }
        if !present {
            list.push(json!({
                "hooks": [{"type": "command", "command": wanted, "timeout": HOOK_TIMEOUT_SECS}]
            }));
            changed = true;
        }
    }
    // memd's hooks for events this harness does not have (an earlier
    // version installed SessionEnd for Codex) are taken out; nobody else's.
    let mut emptied = Vec::new();
    for (event, list) in hooks.iter_mut() {
        if events(harness).contains(&event.as_str()) {
            continue;
        }
        let Some(list) = list.as_array_mut() else {
            continue;
        };
        let mut removed = false;
        list.retain_mut(|group| {
            let Some(hs) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = hs.len();
            hs.retain(|h| !is_ours(h, harness, event));
            if hs.len() == before {
                return true;
            }
            removed = true;
            // A group that held only memd's hook goes with it.
            !hs.is_empty()
        });
        changed |= removed;
        if removed && list.is_empty() {
            emptied.push(event.clone());
        }
    }
    for event in emptied {
        hooks.remove(&event);
    }
    Ok(changed)
}

/// Merges the hooks into one JSON settings file: the user's, or the
/// project's (in `repo`).
pub fn install_hooks(
    path: &Path,
    options: &Options,
    harness: &str,
    place: Place<'_>,
) -> Result<Plan, String> {
    let (read, mut doc) = read_json(path, place)?;
    let named = |e: String| format!("{}: {e}; left as it is", path.display());
    let mut changed = merge_hooks(&mut doc, options, harness).map_err(named)?;
    // The user's Claude Code settings also let memd's MCP tools run.
    if harness == "claude" && options.project.is_none() {
        changed |= super::mcp_servers::allow_in_claude(&mut doc).map_err(named)?;
    }
    if !changed {
        return Ok(Plan::Done(Step::new(path, Outcome::AlreadyThere)));
    }
    let mode = match place {
        Place::User => files::PRIVATE,
        Place::Project(_) => files::SHARED,
    };
    files::plan(read, json_text(&doc)?, mode, files::is_json)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn options() -> Options {
        Options {
            home: PathBuf::from("/home/me"),
            project: None,
            dry_run: true,
            service: false,
            agent: Some("backend-engineer".into()),
            memctl: PathBuf::from("/usr/bin/memctl"),
            memd: PathBuf::from("/usr/bin/memd"),
            socket: PathBuf::from("/run/user/1000/memd/memd.sock"),
            hook_socket: None,
            codex_key: "hooks",
        }
    }

    #[test]
    fn a_socket_other_than_the_default_is_in_every_command_and_updates_old_ones() {
        let mut doc = json!({});
        merge_hooks(&mut doc, &options(), "claude").unwrap();
        let custom = Options {
            hook_socket: Some(PathBuf::from("/tmp/my sockets/it's.sock")),
            ..options()
        };
        assert!(merge_hooks(&mut doc, &custom, "claude").unwrap());
        for event in events("claude") {
            let hooks = doc["hooks"][event].as_array().unwrap();
            assert_eq!(hooks.len(), 1, "updated in place, not added");
            assert_eq!(
                hooks[0]["hooks"][0]["command"],
                format!("/usr/bin/memctl hook claude {event} --agent backend-engineer --socket '/tmp/my sockets/it'\\''s.sock'")
            );
        }
        assert!(!merge_hooks(&mut doc, &custom, "claude").unwrap());
        // Back to the default socket: the flag goes.
        assert!(merge_hooks(&mut doc, &options(), "claude").unwrap());
        assert!(!doc.to_string().contains("--socket"));
    }

    #[test]
    fn merging_keeps_other_hooks_and_is_idempotent() {
        let mut doc = json!({
            "model": "opus",
            "hooks": {
                "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}],
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]
            }
        });
        assert!(merge_hooks(&mut doc, &options(), "claude").unwrap());
        assert_eq!(doc["model"], "opus");
        assert_eq!(
            doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "guard.sh"
        );
        let prompt = doc["hooks"]["UserPromptSubmit"].as_array().unwrap();
        assert_eq!(prompt.len(), 2);
        assert_eq!(prompt[0]["hooks"][0]["command"], "date");
        assert_eq!(
            prompt[1]["hooks"][0]["command"],
            "/usr/bin/memctl hook claude UserPromptSubmit --agent backend-engineer"
        );
        let once = doc.clone();
        assert!(!merge_hooks(&mut doc, &options(), "claude").unwrap());
        assert_eq!(doc, once);
    }

    #[test]
    fn codex_gets_stop_instead_of_session_end_and_loses_the_old_one() {
        // As an earlier memd left it: SessionEnd, which Codex never sends,
        // once alone and once beside somebody else's hook.
        let mut doc = json!({
            "hooks": {
                "SessionEnd": [
                    {"hooks": [{"type": "command", "command": "/usr/bin/memctl hook codex SessionEnd"}]},
                    {"hooks": [{"type": "command", "command": "/usr/bin/memctl hook codex SessionEnd"}, {"type": "command", "command": "notify.sh"}]}
                ],
                "PreCompact": []
            }
        });
        assert!(merge_hooks(&mut doc, &options(), "codex").unwrap());
        let hooks = doc["hooks"].as_object().unwrap();
        for event in ["SessionStart", "UserPromptSubmit", "Stop"] {
            assert!(
                hooks[event][0]["hooks"][0]["command"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("hook codex {event}")),
                "{doc}"
            );
        }
        let end = hooks["SessionEnd"].as_array().unwrap();
        assert_eq!(end.len(), 1, "{doc}");
        assert_eq!(
            end[0]["hooks"],
            json!([{"type": "command", "command": "notify.sh"}])
        );
        assert_eq!(
            hooks["PreCompact"],
            json!([]),
            "other lists are left as they are"
        );
        let once = doc.clone();
        assert!(!merge_hooks(&mut doc, &options(), "codex").unwrap());
        assert_eq!(doc, once);
        // Claude Code keeps its SessionEnd.
        let mut claude = json!({});
        merge_hooks(&mut claude, &options(), "claude").unwrap();
        assert!(claude["hooks"]["SessionEnd"].is_array());
        assert!(claude["hooks"].get("Stop").is_none());
    }

    #[test]
    fn a_settings_file_of_the_wrong_shape_is_refused() {
        assert!(merge_hooks(&mut json!([1]), &options(), "claude").is_err());
        assert!(merge_hooks(&mut json!({"hooks": 3}), &options(), "claude").is_err());
    }
}
