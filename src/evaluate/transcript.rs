//! Session transcripts (JSON Lines) of the agents:
//!
//! - Claude Code: user lines with text or tool results, assistant lines with
//!   text and `tool_use` blocks. Sidechain, meta and compact-summary lines
//!   are skipped.
//! - Codex CLI rollouts: `response_item` lines whose payload is a user or
//!   assistant `message`, a tool call (`function_call`, `custom_tool_call`,
//!   `local_shell_call`) or a tool's output. Developer messages, reasoning,
//!   `event_msg` lines (which repeat the response items) and the context
//!   Codex wraps in a tag of its own (`<environment_context>...`, AGENTS.md
//!   instructions) are skipped.
//! - Gemini CLI's chat records: `user` and `gemini` messages (`content` a
//!   string or a list of parts; a model message's `toolCalls` beside it; a
//!   function's response as the user's part). A message is appended again
//!   when it changes, under the same `id`: the last record read wins. The
//!   first line (the session's metadata), `$set` patches and the context
//!   Gemini CLI wraps in a tag of its own (`<session_context>`, hooks'
//!   `<hook_context>`, memd's block among them) are skipped.
//! - OpenCode's messages as memd's plugin writes them, one `{info, parts}`
//!   a line: the role in `info`, text parts (but synthetic ones, memd's
//!   block among them) and tool parts (`[tool] input`, then its output).
//!
//! Reading starts at a byte offset and stops after the last complete line,
//! so each evaluation reads only what was added since the previous one.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// One message's text.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub role: Role,
    pub text: String,
}

/// What was read: the turns and the offset to start from next time.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub turns: Vec<Turn>,
    pub next_offset: u64,
}

/// Reads the complete lines of `path` from byte `offset`. The path comes
/// from a hook's input, so it is opened without blocking and read only if
/// it is a regular file of this user's that others cannot write to (a FIFO
/// there must not hold up the evaluation).
pub fn read_from(path: &Path, offset: u64) -> std::io::Result<Chunk> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        let kind = crate::safe_file::type_name(&meta);
        return Err(std::io::Error::other(format!(
            "not a regular file but {kind}"
        )));
    }
    if let Some(why) = crate::knowledge::trust::distrust(&meta) {
        return Err(std::io::Error::other(why));
    }
    let len = meta.len();
    // A transcript that shrank was rewritten: start over.
    let offset = if offset > len { 0 } else { offset };
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let text = String::from_utf8_lossy(&bytes[..complete]);
    // A record appended again under its id replaces the one before.
    let mut turns: Vec<(Option<String>, Turn)> = Vec::new();
    for (id, turn) in text.lines().filter_map(parse_record) {
        if let Some(id) = &id {
            turns.retain(|(earlier, _)| earlier.as_ref() != Some(id));
        }
        turns.push((id, turn));
    }
    Ok(Chunk {
        turns: turns.into_iter().map(|(_, turn)| turn).collect(),
        next_offset: offset + complete as u64,
    })
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// One transcript line as a turn, or `None` for lines that are not one.
pub fn parse_line(line: &str) -> Option<Turn> {
    parse_record(line).map(|(_, turn)| turn)
}

/// One transcript line as a turn, with the id under which a later line may
/// replace it (Gemini CLI's records).
fn parse_record(line: &str) -> Option<(Option<String>, Turn)> {
    let v: Value = serde_json::from_str(line).ok()?;
    if flag(&v, "isSidechain") || flag(&v, "isMeta") || flag(&v, "isCompactSummary") {
        return None;
    }
    if let (Some(info), Some(parts)) = (v.get("info"), v.get("parts")) {
        let id = info.get("id").and_then(Value::as_str).map(str::to_string);
        return opencode_message(info, parts).map(|t| (id, t));
    }
    let id = || v.get("id").and_then(Value::as_str).map(str::to_string);
    let role = match v.get("type")?.as_str()? {
        "user" if v.get("message").is_none() => {
            return gemini_message(&v, Role::User).map(|t| (id(), t))
        }
        "gemini" => return gemini_message(&v, Role::Assistant).map(|t| (id(), t)),
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "response_item" => return codex_item(v.get("payload")?).map(|t| (None, t)),
        _ => return None,
    };
    let content = v.get("message")?.get("content")?;
    let mut text = String::new();
    collect_text(content, &mut text);
    (!text.trim().is_empty()).then_some((None, Turn { role, text }))
}

/// An OpenCode message as a turn: its text parts (not the synthetic ones
/// a plugin added) and its tool calls with their output.
fn opencode_message(info: &Value, parts: &Value) -> Option<Turn> {
    let role = match info.get("role")?.as_str()? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => return None,
    };
    let mut text = String::new();
    for part in parts.as_array()? {
        match part.get("type").and_then(Value::as_str) {
            Some("text") if !flag(part, "synthetic") => {
                if let Some(t) = part.get("text").and_then(Value::as_str) {
                    push_line(&mut text, t);
                }
            }
            Some("tool") => {
                let name = part.get("tool").and_then(Value::as_str).unwrap_or("tool");
                let state = part.get("state").unwrap_or(&Value::Null);
                let input = state.get("input").map(Value::to_string).unwrap_or_default();
                push_line(&mut text, &format!("[{name}] {input}"));
                if let Some(output) = state.get("output").and_then(Value::as_str) {
                    push_line(&mut text, &format!("[{name} result] {output}"));
                }
            }
            _ => {}
        }
    }
    (!text.trim().is_empty()).then_some(Turn { role, text })
}

/// A Gemini CLI message as a turn: its text (but what Gemini CLI wraps in
/// a tag of its own), a function's response on the user's side, and the
/// model's tool calls as `[name] arguments`.
fn gemini_message(v: &Value, role: Role) -> Option<Turn> {
    let mut text = String::new();
    match v.get("content")? {
        Value::String(s) => push_line(&mut text, s),
        Value::Array(parts) => {
            for part in parts {
                if let Some(t) = part.get("text").and_then(Value::as_str) {
                    if !harness_context(t) {
                        push_line(&mut text, t);
                    }
                } else if let Some(response) = part.get("functionResponse") {
                    let name = response
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("tool");
                    let output = response.get("response").map_or(String::new(), |r| {
                        r.get("output")
                            .and_then(Value::as_str)
                            .map_or_else(|| r.to_string(), str::to_string)
                    });
                    push_line(&mut text, &format!("[{name} result] {output}"));
                }
            }
        }
        _ => {}
    }
    for call in v
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = call.get("name").and_then(Value::as_str).unwrap_or("tool");
        let args = call.get("args").map(Value::to_string).unwrap_or_default();
        push_line(&mut text, &format!("[{name}] {args}"));
    }
    (!text.trim().is_empty()).then_some(Turn { role, text })
}

/// A Codex CLI rollout's response item as a turn.
fn codex_item(item: &Value) -> Option<Turn> {
    let str_of = |key: &str| item.get(key).and_then(Value::as_str);
    let (role, text) = match str_of("type")? {
        "message" => {
            let role = match str_of("role")? {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                _ => return None,
            };
            let mut text = String::new();
            for part in item.get("content")?.as_array()? {
                let Some(t) = part.get("text").and_then(Value::as_str) else {
                    continue;
                };
                if role == Role::User && harness_context(t) {
                    continue;
                }
                push_line(&mut text, t);
            }
            (role, text)
        }
        "function_call" => (
            Role::Assistant,
            format!(
                "[{}] {}",
                str_of("name")?,
                str_of("arguments").unwrap_or("")
            ),
        ),
        "custom_tool_call" => (
            Role::Assistant,
            format!("[{}] {}", str_of("name")?, str_of("input").unwrap_or("")),
        ),
        "local_shell_call" => {
            let command = item.get("action")?.get("command")?.as_array()?;
            let words: Vec<&str> = command.iter().filter_map(Value::as_str).collect();
            (Role::Assistant, format!("[shell] {}", words.join(" ")))
        }
        "function_call_output" | "custom_tool_call_output" => {
            let mut text = String::new();
            collect_output(item.get("output")?, &mut text);
            (Role::User, text)
        }
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(Turn { role, text })
}

/// Text Codex adds to the user's side itself: its environment context and
/// instructions, each wrapped in a tag of its own, and AGENTS.md.
fn harness_context(text: &str) -> bool {
    let t = text.trim();
    if t.starts_with("# AGENTS.md instructions") {
        return true;
    }
    let Some(rest) = t.strip_prefix('<') else {
        return false;
    };
    let Some(end) = rest.find('>') else {
        return false;
    };
    let tag = &rest[..end];
    !tag.is_empty()
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && t.ends_with(&format!("</{tag}>"))
}

/// A tool's output: a string, a list of content items, or an object with
/// `content`.
fn collect_output(output: &Value, out: &mut String) {
    match output {
        Value::String(s) => push_line(out, s),
        Value::Array(parts) => {
            for part in parts {
                if let Some(t) = part.get("text").and_then(Value::as_str) {
                    push_line(out, t);
                }
            }
        }
        Value::Object(map) => {
            if let Some(content) = map.get("content") {
                collect_output(content, out);
            }
        }
        _ => {}
    }
}

fn push_line(out: &mut String, s: &str) {
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(s);
}

fn collect_text(content: &Value, out: &mut String) {
    let mut push = |s: &str| push_line(out, s);
    match content {
        Value::String(s) => push(s),
        Value::Array(blocks) => {
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = block.get("text").and_then(Value::as_str) {
                            push(t);
                        }
                    }
                    Some("tool_use") => {
                        let name = block.get("name").and_then(Value::as_str).unwrap_or("tool");
                        let input = block.get("input").map(Value::to_string).unwrap_or_default();
                        push(&format!("[{name}] {input}"));
                    }
                    Some("tool_result") => {
                        let mut inner = String::new();
                        if let Some(c) = block.get("content") {
                            collect_text(c, &mut inner);
                        }
                        push(&inner);
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const FIXTURE: &str = include_str!("../../tests/fixtures/transcript.jsonl");

    #[test]
    fn reads_user_and_assistant_turns_and_skips_the_rest() {
        let turns: Vec<Turn> = FIXTURE.lines().filter_map(parse_line).collect();
        assert!(turns
            .iter()
            .any(|t| t.role == Role::User && t.text.contains("webhook")));
        assert!(turns
            .iter()
            .any(|t| t.role == Role::Assistant && t.text.contains("[Edit]")));
        assert!(
            turns.iter().any(|t| t.text.contains("23505")),
            "tool results are read"
        );
        assert!(!turns.iter().any(|t| t.text.contains("SIDECHAIN")));
        assert!(!turns.iter().any(|t| t.text.contains("COMPACT SUMMARY")));
        assert!(!turns.iter().any(|t| t.text.contains("META")));
    }

    #[test]
    fn reads_a_codex_rollout_and_skips_what_codex_adds_itself() {
        let rollout = include_str!("../../tests/fixtures/codex-rollout.jsonl");
        let turns: Vec<Turn> = rollout.lines().filter_map(parse_line).collect();
        let has = |role: Role, needle: &str| {
            turns
                .iter()
                .any(|t| t.role == role && t.text.contains(needle))
        };
        assert!(has(Role::User, "Add idempotency to the webhook handler"));
        assert!(has(
            Role::Assistant,
            "unique constraint before acknowledging"
        ));
        assert!(has(Role::Assistant, "[shell] {\"command\""), "{turns:?}");
        assert!(has(Role::Assistant, "[apply_patch] *** Begin Patch"));
        assert!(has(Role::Assistant, "[shell] pnpm test webhooks"));
        assert!(has(Role::User, "Success. Updated the following files"));
        assert!(has(Role::User, "SQLSTATE 23505"), "tool output as a list");
        for absent in [
            "environment_context",
            "AGENTS",
            "DEVELOPER",
            "REASONING",
            "EVENT_MSG",
        ] {
            assert!(!turns.iter().any(|t| t.text.contains(absent)), "{absent}");
        }
        assert_eq!(turns.len(), 9);
    }

    #[test]
    fn reads_gemini_clis_chat_records_the_last_of_each_id_winning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        std::fs::write(
            &path,
            include_str!("../../tests/fixtures/gemini-chat.jsonl"),
        )
        .unwrap();
        let turns = read_from(&path, 0).unwrap().turns;
        let texts: Vec<(Role, &str)> = turns.iter().map(|t| (t.role, t.text.as_str())).collect();
        assert_eq!(
            texts,
            [
                (Role::User, "Add idempotency to the webhook handler"),
                (
                    Role::Assistant,
                    "[run_shell_command] {\"command\":\"pnpm test webhooks\"}"
                ),
                (
                    Role::User,
                    "[run_shell_command result] duplicate key value violates unique constraint (SQLSTATE 23505)"
                ),
                (
                    Role::Assistant,
                    "I added a unique constraint on the event id before acknowledging."
                ),
            ]
        );
    }

    #[test]
    fn reads_opencodes_messages_as_memds_plugin_writes_them() {
        let lines = [
            json!({"info": {"id": "msg_1", "role": "user"}, "parts": [
                {"type": "text", "text": "Add idempotency to the webhook handler"},
                {"type": "text", "text": "## Gotchas MEMD BLOCK", "synthetic": true}
            ]}),
            json!({"info": {"id": "msg_2", "role": "assistant"}, "parts": [
                {"type": "step-start"},
                {"type": "tool", "tool": "bash", "state": {"status": "completed", "input": {"command": "pnpm test"}, "output": "SQLSTATE 23505"}},
                {"type": "text", "text": "I added a unique constraint."},
                {"type": "step-finish"}
            ]}),
        ];
        let turns: Vec<Turn> = lines
            .iter()
            .filter_map(|l| parse_line(&l.to_string()))
            .collect();
        assert_eq!(
            turns,
            [
                Turn {
                    role: Role::User,
                    text: "Add idempotency to the webhook handler".into()
                },
                Turn {
                    role: Role::Assistant,
                    text: "[bash] {\"command\":\"pnpm test\"}\n[bash result] SQLSTATE 23505\nI added a unique constraint.".into()
                }
            ]
        );
    }

    #[test]
    fn only_a_whole_tagged_text_counts_as_harness_context() {
        assert!(harness_context(
            "<environment_context>\n <cwd>/x</cwd>\n</environment_context>"
        ));
        assert!(!harness_context(
            "<b>bold</b> is how I would write it, then more"
        ));
        assert!(!harness_context("use <T> generics"));
        assert!(!harness_context("plain prompt"));
    }

    #[test]
    fn a_transcript_that_is_not_a_regular_file_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("t.jsonl");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let err = read_from(&fifo, 0).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        assert!(read_from(dir.path(), 0).is_err());
    }

    #[test]
    fn reads_only_new_complete_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let first = r#"{"type":"user","message":{"role":"user","content":"one"}}"#;
        let second = r#"{"type":"user","message":{"role":"user","content":"two"}}"#;
        std::fs::write(&path, format!("{first}\n{}", &second[..10])).unwrap();
        let chunk = read_from(&path, 0).unwrap();
        assert_eq!(chunk.turns.len(), 1);
        assert_eq!(chunk.next_offset, first.len() as u64 + 1);
        std::fs::write(&path, format!("{first}\n{second}\n")).unwrap();
        let chunk = read_from(&path, chunk.next_offset).unwrap();
        assert_eq!(
            chunk.turns,
            vec![Turn {
                role: Role::User,
                text: "two".into()
            }]
        );
    }
}
