//! Loading one knowledge file: its kind is decided by its content, each item
//! is read on its own so one bad item does not drop the rest, and every
//! problem becomes a [`Diagnostic`] with `file:line:col`.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::protocol::Kind;

use super::fields::FieldError;
use super::item::{normalize_role, Body, ExperienceKind, Item, Source};
use super::kinds::{check_index_metadata, peek_id, read_experience, read_item, COLLECTION_KEYS};
use super::node::{parse_json, parse_yaml, pos_of_offset, Node, Pos, SyntaxError, Value};

/// Files larger than this are refused (SPEC section 3).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// A problem found in a knowledge file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostic {
    /// The file.
    pub file: Arc<Path>,
    /// Where in it.
    pub pos: Pos,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    /// `file:line:col: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.pos, self.message)
    }
}

/// What a file turned out to hold.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FileKind {
    /// A mapping with one or more collection keys.
    Collections,
    /// An agent's `common_mistakes` / `preferred_approaches`.
    Experience,
    /// `*.jsonl` observations, one per line.
    ObservationLog,
    /// Not a knowledge file; the reason says why.
    Ignored(String),
    /// Could not be read or parsed at all.
    Unreadable,
}

/// The outcome of loading one file.
#[derive(Debug, Clone)]
pub struct FileLoad {
    /// The file.
    pub path: Arc<Path>,
    /// What it holds.
    pub kind: FileKind,
    /// The items that loaded.
    pub items: Vec<Item>,
    /// Every problem, item-level or file-level.
    pub errors: Vec<Diagnostic>,
}

impl FileLoad {
    /// True when the file as a whole could not be read or parsed; its last
    /// good items should stay live.
    pub fn failed(&self) -> bool {
        self.kind == FileKind::Unreadable
    }
}

/// The text formats memd reads, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `.yaml`, `.yml`.
    Yaml,
    /// `.json`.
    Json,
    /// `.jsonl`.
    JsonLines,
}

impl Format {
    /// The format of a path, or `None` when memd does not read it.
    pub fn of(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "yaml" | "yml" => Some(Format::Yaml),
            "json" => Some(Format::Json),
            "jsonl" => Some(Format::JsonLines),
            _ => None,
        }
    }
}

/// Reads and loads a file from disk: only a regular file, within the size
/// limit ([`super::read::read_regular`]).
pub fn load_file(path: &Path) -> FileLoad {
    let shared: Arc<Path> = Arc::from(path);
    match super::read::read_regular(path) {
        Ok(read) => parse_file(shared, &read.bytes),
        Err(err) => unreadable_because(shared, &err),
    }
}

/// The load of a file that could not be read.
pub fn unreadable_because(path: Arc<Path>, err: &super::read::ReadError) -> FileLoad {
    let pos = match err {
        super::read::ReadError::Io(_) => Pos::default(),
        _ => Pos { line: 1, col: 1 },
    };
    unreadable(path, pos, err.to_string())
}

/// Loads a file's bytes (the size check is the caller's).
pub fn parse_file(path: Arc<Path>, bytes: &[u8]) -> FileLoad {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return unreadable(
            path,
            Pos { line: 1, col: 1 },
            format!(
                "file is over the {} MiB limit; refused",
                MAX_FILE_BYTES / (1024 * 1024)
            ),
        );
    }
    let Some(format) = Format::of(&path) else {
        return ignored(path, "not a .yaml, .yml, .json or .jsonl file");
    };
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text.strip_prefix('\u{feff}').unwrap_or(text),
        Err(err) => {
            let pos = pos_of_offset(bytes, err.valid_up_to());
            return unreadable(
                path,
                pos,
                "invalid UTF-8: knowledge files must be UTF-8 text".into(),
            );
        }
    };
    match format {
        Format::JsonLines => load_observation_log(path, text),
        Format::Yaml => load_document(path, parse_yaml(text)),
        Format::Json => load_document(path, parse_json(text)),
    }
}

fn unreadable(path: Arc<Path>, pos: Pos, message: String) -> FileLoad {
    FileLoad {
        errors: vec![Diagnostic {
            file: path.clone(),
            pos,
            message,
        }],
        path,
        kind: FileKind::Unreadable,
        items: Vec::new(),
    }
}

fn ignored(path: Arc<Path>, why: &str) -> FileLoad {
    FileLoad {
        path,
        kind: FileKind::Ignored(why.to_string()),
        items: Vec::new(),
        errors: Vec::new(),
    }
}

/// Collects items and diagnostics for one file.
struct Loader {
    path: Arc<Path>,
    items: Vec<Item>,
    errors: Vec<Diagnostic>,
}

impl Loader {
    fn new(path: Arc<Path>) -> Self {
        Loader {
            path,
            items: Vec::new(),
            errors: Vec::new(),
        }
    }

    fn error(&mut self, pos: Pos, message: String) {
        self.errors.push(Diagnostic {
            file: self.path.clone(),
            pos,
            message,
        });
    }

    fn push(&mut self, id: String, tags: Vec<String>, body: Body, pos: Pos) {
        self.items.push(Item {
            id,
            tags,
            source: Source {
                file: self.path.clone(),
                pos,
            },
            body,
        });
    }

    /// Reads one collection item, reporting it by id (or position in its
    /// list) when it is invalid.
    fn collection_item(&mut self, kind: Kind, index: usize, node: &Node) {
        match read_item(kind, node) {
            Ok(item) => self.push(item.id, item.tags, item.body, node.pos),
            Err(FieldError { pos, message }) => {
                let who = match peek_id(kind, node) {
                    Some(id) => format!("{kind} `{id}`"),
                    None => format!("{kind} #{}", index + 1),
                };
                self.error(pos, format!("{who}: {message}"));
            }
        }
    }

    fn finish(self, kind: FileKind) -> FileLoad {
        FileLoad {
            path: self.path,
            kind,
            items: self.items,
            errors: self.errors,
        }
    }
}

fn load_document(path: Arc<Path>, parsed: Result<Option<Node>, SyntaxError>) -> FileLoad {
    let root = match parsed {
        Ok(Some(root)) => root,
        Ok(None) => return ignored(path, "empty document"),
        Err(SyntaxError { pos, message }) => return unreadable(path, pos, message),
    };
    if !matches!(root.value, Value::Map(_)) {
        return ignored(path, "top level is not a mapping");
    }
    let is_collections = COLLECTION_KEYS.iter().any(|(k, _)| root.get(k).is_some());
    let is_experience = ["common_mistakes", "preferred_approaches"]
        .iter()
        .any(|k| root.get(k).is_some());
    if !is_collections && !is_experience {
        // The file's own keys are not repeated: status must never echo the
        // content of a file that is not knowledge.
        let expected: Vec<_> = COLLECTION_KEYS.iter().map(|(k, _)| *k).collect();
        return ignored(
            path,
            &format!(
                "none of its {} top-level keys is a knowledge key ({}, common_mistakes, preferred_approaches)",
                root.keys().count(),
                expected.join(", ")
            ),
        );
    }
    let mut loader = Loader::new(path);
    if is_collections {
        for (key, kind) in COLLECTION_KEYS {
            let Some(section) = root.get(key) else {
                continue;
            };
            match &section.value {
                Value::Seq(items) => {
                    for (i, node) in items.iter().enumerate() {
                        loader.collection_item(kind, i, node);
                    }
                }
                Value::Null => {}
                _ => loader.error(
                    section.pos,
                    format!("`{key}` must be a list, found {}", section.type_name()),
                ),
            }
        }
        for FieldError { pos, message } in check_index_metadata(&root) {
            loader.error(pos, message);
        }
    }
    if is_experience {
        load_experience(&mut loader, &root);
    }
    let kind = if is_collections {
        FileKind::Collections
    } else {
        FileKind::Experience
    };
    loader.finish(kind)
}

fn load_experience(loader: &mut Loader, root: &Node) {
    let named = root.get("agent").and_then(super::fields::scalar_text);
    let stem = loader
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let agent = normalize_role(named.as_deref().unwrap_or(&stem));
    for (key, kind, label) in [
        ("common_mistakes", ExperienceKind::Mistake, "mistake"),
        ("preferred_approaches", ExperienceKind::Approach, "approach"),
    ] {
        let Some(list) = root.get(key) else { continue };
        let entries = match &list.value {
            Value::Seq(entries) => entries,
            Value::Null => continue,
            _ => {
                loader.error(
                    list.pos,
                    format!("`{key}` must be a list, found {}", list.type_name()),
                );
                continue;
            }
        };
        for (i, node) in entries.iter().enumerate() {
            match read_experience(&agent, kind, node) {
                Ok(entry) => {
                    let id = format!("{agent}/{label}-{}", i + 1);
                    loader.push(id, Vec::new(), Body::Experience(entry), node.pos);
                }
                Err(FieldError { pos, message }) => {
                    loader.error(pos, format!("{key} #{}: {message}", i + 1))
                }
            }
        }
    }
}

fn load_observation_log(path: Arc<Path>, text: &str) -> FileLoad {
    let mut loader = Loader::new(path);
    for (index, line) in text.lines().enumerate() {
        let line_no: u32 = (index + 1).try_into().unwrap_or(u32::MAX);
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(value) => {
                let node = Node::from_json(
                    value,
                    Pos {
                        line: line_no,
                        col: 1,
                    },
                );
                loader.collection_item(Kind::Observation, index, &node);
            }
            Err(err) => loader.error(
                Pos {
                    line: line_no,
                    col: err.column().try_into().unwrap_or(u32::MAX),
                },
                format!("invalid JSON line: {}", strip_position(&err.to_string())),
            ),
        }
    }
    loader.finish(FileKind::ObservationLog)
}

fn strip_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |i| &message[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str, text: &str) -> FileLoad {
        parse_file(Arc::from(Path::new(name)), text.as_bytes())
    }

    #[test]
    fn one_bad_item_keeps_the_rest() {
        let text = "patterns:\n  - id: P-1\n    name: a\n    problem: b\n    solution: c\n  - id: P-2\n    name: a\n    problem: b\n";
        let file = load("k.yaml", text);
        assert_eq!(file.items.len(), 1);
        assert_eq!(file.errors.len(), 1);
        let shown = file.errors[0].to_string();
        assert_eq!(
            shown,
            "k.yaml:6:5: pattern `P-2`: missing required field `solution`"
        );
    }

    #[test]
    fn wrong_type_points_at_the_field() {
        let text = "gotchas:\n  - id: G-1\n    title: t\n    fix: f\n    category: [a, b]\n";
        let file = load("g.yml", text);
        assert!(file.items.is_empty());
        assert_eq!(file.errors[0].pos.line, 5);
        assert!(
            file.errors[0].message.contains("`category` must be text"),
            "{}",
            file.errors[0]
        );
    }

    #[test]
    fn experience_agent_comes_from_field_or_stem() {
        let file = load(
            "agent-experiences/backend_engineer.json",
            r#"{"common_mistakes": [{"mistake": "m", "fix": "f"}, "plain"], "preferred_approaches": [{"context": "API routes", "approach": "Route -> Schema"}]}"#,
        );
        assert_eq!(file.kind, FileKind::Experience);
        let ids: Vec<_> = file.items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "backend-engineer/mistake-1",
                "backend-engineer/mistake-2",
                "backend-engineer/approach-1"
            ]
        );
    }

    #[test]
    fn observation_log_skips_bad_lines() {
        let text = concat!(
            r#"{"id":"o1","type":"decision","content":"use redb","created_at":"2026-02-01T00:00:00Z"}"#,
            "\n{not json\n",
            r#"{"id":"o2","type":"nonsense","content":"x","created_at":"2026-02-01"}"#,
            "\n"
        );
        let file = load("obs.jsonl", text);
        assert_eq!(file.items.len(), 1);
        assert_eq!(file.errors.len(), 2);
        assert_eq!(file.errors[0].pos.line, 2);
        assert!(
            file.errors[1].message.contains("must be one of decision"),
            "{}",
            file.errors[1]
        );
    }

    #[test]
    fn invalid_utf8_is_located() {
        let mut bytes = b"patterns:\n  - id: \xff\n".to_vec();
        bytes.push(b'\n');
        let file = parse_file(Arc::from(Path::new("bad.yaml")), &bytes);
        assert!(file.failed());
        assert_eq!(file.errors[0].pos, Pos { line: 2, col: 9 });
    }

    #[test]
    fn unrelated_documents_are_ignored() {
        let file = load("package.json", r#"{"name": "x", "version": "1.0.0"}"#);
        assert!(matches!(file.kind, FileKind::Ignored(_)));
        assert!(file.errors.is_empty());
    }
}
