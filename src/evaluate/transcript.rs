//! Claude Code transcripts (JSON Lines): user lines with text or tool
//! results, assistant lines with text and `tool_use` blocks. Sidechain,
//! meta and compact-summary lines are skipped. Reading starts at a byte
//! offset and stops after the last complete line, so each evaluation reads
//! only what was added since the previous one.

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

/// Reads the complete lines of `path` from byte `offset`.
pub fn read_from(path: &Path, offset: u64) -> std::io::Result<Chunk> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    // A transcript that shrank was rewritten: start over.
    let offset = if offset > len { 0 } else { offset };
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let text = String::from_utf8_lossy(&bytes[..complete]);
    Ok(Chunk {
        turns: text.lines().filter_map(parse_line).collect(),
        next_offset: offset + complete as u64,
    })
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// One transcript line as a turn, or `None` for lines that are not one.
pub fn parse_line(line: &str) -> Option<Turn> {
    let v: Value = serde_json::from_str(line).ok()?;
    if flag(&v, "isSidechain") || flag(&v, "isMeta") || flag(&v, "isCompactSummary") {
        return None;
    }
    let role = match v.get("type")?.as_str()? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => return None,
    };
    let content = v.get("message")?.get("content")?;
    let mut text = String::new();
    collect_text(content, &mut text);
    (!text.trim().is_empty()).then_some(Turn { role, text })
}

fn collect_text(content: &Value, out: &mut String) {
    let mut push = |s: &str| {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(s);
    };
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
