//! A parsed document as a tree of values that remember their line and column,
//! so that an error in one item can point at it and the rest of the file can
//! still load.
//!
//! YAML is parsed by serde-saphyr under a [`Budget`](serde_saphyr::Budget)
//! (a billion-laughs file is refused in milliseconds). JSON is first checked
//! by serde_json, whose errors speak JSON, then read through the same YAML
//! path (JSON is YAML 1.2 flow syntax) to get the positions.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// A 1-based line and column in a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Pos {
    /// Line, 1-based (0 when unknown).
    pub line: u32,
    /// Column, 1-based (0 when unknown).
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// The 1-based line and column (in characters) of a byte offset.
pub fn pos_of_offset(bytes: &[u8], offset: usize) -> Pos {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let col = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    Pos {
        line: line.try_into().unwrap_or(u32::MAX),
        col: col.try_into().unwrap_or(u32::MAX),
    }
}

/// A value of the document tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`, `~` or an empty value.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A floating-point number (also integers beyond i64).
    Float(f64),
    /// A string.
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order. Keys are scalars rendered as text.
    Map(Vec<(String, Node)>),
}

/// A value with the position where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// Where it starts.
    pub pos: Pos,
}

impl Node {
    /// The entry `key` of a mapping node.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The keys of a mapping node (empty for anything else).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        let entries: &[(String, Node)] = match &self.value {
            Value::Map(entries) => entries,
            _ => &[],
        };
        entries.iter().map(|(k, _)| k.as_str())
    }

    /// A short name of the value's type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// Converts a serde_json value (from a JSON Lines record) into a node
    /// whose every position is `pos`.
    pub fn from_json(value: serde_json::Value, pos: Pos) -> Node {
        use serde_json::Value as J;
        let value = match value {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(b),
            J::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            J::String(s) => Value::Str(s),
            J::Array(items) => {
                Value::Seq(items.into_iter().map(|v| Node::from_json(v, pos)).collect())
            }
            J::Object(map) => Value::Map(
                map.into_iter()
                    .map(|(k, v)| (k, Node::from_json(v, pos)))
                    .collect(),
            ),
        };
        Node { value, pos }
    }
}

/// Limits of the YAML budget: generous for real knowledge files, far below
/// what an alias bomb needs.
const MAX_DEPTH: usize = 64;
const MAX_NODES: usize = 500_000;
const MAX_ALIASES: usize = 1_000;
const MAX_EVENTS: usize = 2_000_000;
/// Events replayed through aliases in one file. Knowledge files rarely use
/// aliases at all; a bomb needs millions.
const MAX_REPLAYED_EVENTS: usize = 10_000;

/// Why a document could not be parsed at all.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    /// Where, when known.
    pub pos: Pos,
    /// What went wrong, on one line.
    pub message: String,
}

/// Parses YAML text into a node tree, or `None` for an empty document.
pub fn parse_yaml(text: &str) -> Result<Option<Node>, SyntaxError> {
    let budget = serde_saphyr::budget! {
        max_depth: MAX_DEPTH,
        max_nodes: MAX_NODES,
        max_aliases: MAX_ALIASES,
        max_events: MAX_EVENTS,
    };
    let options = serde_saphyr::options! {
        budget: budget,
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: MAX_REPLAYED_EVENTS,
        },
    };
    serde_saphyr::from_str_with_options::<Option<SpannedNode>>(text, options)
        .map(|node| node.map(|n| n.0))
        .map_err(|err| {
            let pos = err
                .location()
                .map(|loc| Pos {
                    line: loc.line().try_into().unwrap_or(u32::MAX),
                    col: loc.column().try_into().unwrap_or(u32::MAX),
                })
                .unwrap_or_default();
            SyntaxError {
                pos,
                message: first_line_of(&err.to_string()),
            }
        })
}

/// Parses JSON text into a node tree: strict JSON syntax first, then the
/// positions.
pub fn parse_json(text: &str) -> Result<Option<Node>, SyntaxError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    if let Err(err) = serde_json::from_str::<de::IgnoredAny>(text) {
        return Err(SyntaxError {
            pos: Pos {
                line: err.line().try_into().unwrap_or(u32::MAX),
                col: err.column().try_into().unwrap_or(u32::MAX),
            },
            message: strip_json_position(&err.to_string()),
        });
    }
    // Valid JSON that YAML cannot read (tabs used for indentation, say):
    // keep the data, without positions.
    match parse_yaml(text) {
        Ok(node) => Ok(node),
        Err(_) => {
            let value: serde_json::Value = serde_json::from_str(text).map_err(|e| SyntaxError {
                pos: Pos::default(),
                message: e.to_string(),
            })?;
            Ok(Some(Node::from_json(value, Pos { line: 1, col: 1 })))
        }
    }
}

/// serde_json ends its messages with " at line L column C"; the position is
/// reported separately.
fn strip_json_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// The first meaningful line of a possibly multi-line error (serde-saphyr
/// appends a source snippet).
fn first_line_of(message: &str) -> String {
    let line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("invalid document");
    // "error: line 3 column 5: message" -> "message"
    let line = line.strip_prefix("error:").map(str::trim).unwrap_or(line);
    if let Some(rest) = line.strip_prefix("line ") {
        if let Some((_, msg)) = rest.split_once(": ") {
            return msg.trim().to_string();
        }
    }
    line.to_string()
}

/// A node read with its position through serde-saphyr's `Spanned`.
struct SpannedNode(Node);

impl<'de> Deserialize<'de> for SpannedNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<RawValue>::deserialize(deserializer)?;
        let loc = spanned.referenced;
        Ok(SpannedNode(Node {
            value: spanned.value.0,
            pos: Pos {
                line: loc.line().try_into().unwrap_or(u32::MAX),
                col: loc.column().try_into().unwrap_or(u32::MAX),
            },
        }))
    }
}

/// The value part of a node; its children are [`SpannedNode`]s.
struct RawValue(Value);

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor).map(RawValue)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML or JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Ok(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        Ok(i64::try_from(v).map_or(Value::Float(v as f64), Value::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Str(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(SpannedNode(node)) = seq.next_element()? {
            items.push(node);
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries: Vec<(String, Node)> = Vec::new();
        while let Some(RawValue(key)) = map.next_key()? {
            let key = match key {
                Value::Str(s) => s,
                Value::Int(i) => i.to_string(),
                Value::Float(f) => f.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Null => "null".to_string(),
                Value::Seq(_) | Value::Map(_) => {
                    return Err(de::Error::custom("a mapping key must be a scalar"))
                }
            };
            let SpannedNode(value) = map.next_value()?;
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
            entries.push((key, value));
        }
        Ok(Value::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_nodes_carry_positions() {
        let text = "patterns:\n  - id: P-1\n    name: x\n  - id: P-2\n";
        let root = parse_yaml(text).unwrap().unwrap();
        let Value::Seq(items) = &root.get("patterns").unwrap().value else {
            panic!("not a list")
        };
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].get("id").unwrap().pos.line, 4);
        assert_eq!(items[0].get("name").unwrap().pos, Pos { line: 3, col: 11 });
    }

    #[test]
    fn json_nodes_carry_positions() {
        let text =
            "{\n  \"common_mistakes\": [\n    {\"mistake\": \"a\", \"fix\": \"b\"}\n  ]\n}\n";
        let root = parse_json(text).unwrap().unwrap();
        let Value::Seq(items) = &root.get("common_mistakes").unwrap().value else {
            panic!("not a list")
        };
        assert_eq!(items[0].pos.line, 3);
    }

    #[test]
    fn tab_indented_json_still_loads() {
        let text = "{\n\t\"agent\": \"qa\",\n\t\"common_mistakes\": [\"x\"]\n}\n";
        let root = parse_json(text).unwrap().unwrap();
        assert_eq!(root.get("agent").unwrap().value, Value::Str("qa".into()));
    }

    #[test]
    fn json_syntax_error_has_position() {
        let err = parse_json("{\n  \"a\": 1,\n}\n").unwrap_err();
        assert_eq!(err.pos.line, 3);
        assert!(!err.message.contains("at line"), "{}", err.message);
    }

    #[test]
    fn yaml_syntax_error_has_position() {
        let err = parse_yaml("a: [1, 2\nb: c\n").unwrap_err();
        assert!(err.pos.line >= 1, "{err:?}");
        assert!(!err.message.is_empty());
    }

    #[test]
    fn duplicate_keys_are_refused() {
        let err = parse_yaml("a: 1\na: 2\n").unwrap_err();
        assert!(err.message.contains("duplicate"), "{}", err.message);
    }

    #[test]
    fn billion_laughs_is_refused() {
        let mut text = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let names = ["b", "c", "d", "e", "f", "g", "h", "i"];
        let mut prev = "a";
        for n in names {
            text.push_str(&format!(
                "{n}: &{n} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
            ));
            prev = n;
        }
        let err = parse_yaml(&text).unwrap_err();
        assert!(
            err.message.to_lowercase().contains("alias") || err.message.contains("budget"),
            "{}",
            err.message
        );
    }
}
