//! An agent's JSON settings file edited as a document (`jsonc-parser`'s
//! concrete syntax tree): what memd adds goes in beside the user's text
//! without re-laying out the rest (comments, key order, indentation,
//! spacing and line ends kept), and what memd takes out leaves the rest as
//! it was, so an install followed by an uninstall gives back the file to
//! the byte. The one exception: an object written on one line with
//! properties in it, which memd's addition breaks onto lines (a list on
//! one line closes on its line again).
//!
//! Two dialects: plain JSON, for agents that read their settings with a
//! strict parser (Claude Code, Codex), where a file that is not strict
//! JSON is left alone; and JSON with comments, for agents that allow them
//! (Gemini CLI, OpenCode).

use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::Value;

/// How the agent reads the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Strict JSON.
    Json,
    /// JSON with comments and trailing commas.
    Jsonc,
}

impl Dialect {
    /// What the file is called in a refusal.
    fn name(self) -> &'static str {
        match self {
            Dialect::Json => "JSON",
            Dialect::Jsonc => "JSON with comments",
        }
    }

    /// Whether `text` reads in this dialect, as the agent would read it.
    pub fn check(self, text: &str) -> Result<Value, String> {
        let fail = |e: String| format!("not {} ({e})", self.name());
        match self {
            Dialect::Json => serde_json::from_str(text).map_err(|e| fail(e.to_string())),
            Dialect::Jsonc => CstRootNode::parse(text, &ParseOptions::default())
                .map_err(|e| fail(e.to_string()))?
                .to_serde_value()
                .ok_or_else(|| fail("empty".into())),
        }
    }

    /// The check for a written file, as install's read-back wants it.
    pub fn reads(self) -> fn(&[u8]) -> Result<(), String> {
        match self {
            Dialect::Json => |b| {
                let t = std::str::from_utf8(b).map_err(|e| e.to_string())?;
                Dialect::Json.check(t).map(drop)
            },
            Dialect::Jsonc => |b| {
                let t = std::str::from_utf8(b).map_err(|e| e.to_string())?;
                Dialect::Jsonc.check(t).map(drop)
            },
        }
    }
}

/// The text a file memd creates starts from.
pub const EMPTY: &str = "{}\n";

/// A settings document being edited.
pub struct Doc {
    root: CstRootNode,
}

impl Doc {
    /// Parses `text` (blank: an empty object); an error, saying why, when
    /// the agent could not read it either, or its top is not an object.
    pub fn parse(text: &str, dialect: Dialect) -> Result<Doc, String> {
        let text = if text.trim().is_empty() { EMPTY } else { text };
        let value = dialect.check(text)?;
        if !value.is_object() {
            return Err("not a JSON object".into());
        }
        let root = CstRootNode::parse(text, &ParseOptions::default())
            .map_err(|e| format!("not {} ({e})", dialect.name()))?;
        Ok(Doc { root })
    }

    /// The top object.
    pub fn object(&self) -> CstObject {
        self.root.object_value_or_set()
    }

    /// The document as a value.
    #[cfg(test)]
    pub fn value(&self) -> Value {
        self.root.to_serde_value().unwrap_or(Value::Null)
    }

    /// The document's text.
    pub fn text(&self) -> String {
        self.root.to_string()
    }
}

/// The object under `key` in `parent`, made when absent; an error naming
/// `path` when it holds something else.
pub fn object_in(parent: &CstObject, key: &str, path: &str) -> Result<CstObject, String> {
    parent
        .object_value_or_create(key)
        .ok_or_else(|| format!("`{path}` is not a JSON object"))
}

/// The list under `key` in `parent`, made when absent; an error naming
/// `path` when it holds something else.
pub fn array_in(parent: &CstObject, key: &str, path: &str) -> Result<CstArray, String> {
    parent
        .array_value_or_create(key)
        .ok_or_else(|| format!("`{path}` is not a list"))
}

/// Takes out `node` (an element of a list, or an object's property); where
/// the list or object it was in opens on the line of its bracket, as one
/// written on one line does, the line break that memd's addition had put
/// before the closing bracket goes with it.
pub fn remove(node: CstNode) {
    let parent = node.parent();
    node.remove();
    if let Some(parent) = parent {
        close_inline(parent.children());
    }
}

/// Removes the line breaks before a container's closing bracket when it
/// opens inline (`[` or `{` followed by something other than a line break).
fn close_inline(children: Vec<CstNode>) {
    let opens_on_its_line = match (children.get(1), children.get(2)) {
        (Some(a), _) if a.is_newline() => false,
        (Some(a), Some(b)) if a.is_whitespace() && b.is_newline() => false,
        _ => true,
    };
    if !opens_on_its_line || children.len() < 3 {
        return;
    }
    let close = children.len() - 1;
    let mut start = close;
    while start > 1 && (children[start - 1].is_newline() || children[start - 1].is_whitespace()) {
        start -= 1;
    }
    for child in &children[start..close] {
        if child.is_newline() {
            child.clone().remove();
        }
    }
}

/// Takes `key` out of `parent` when it holds an empty object or list
/// (what is left once memd's entries are out of one it made).
pub fn drop_if_empty(parent: &CstObject, key: &str) {
    let Some(prop) = parent.get(key) else { return };
    let empty = match prop.value() {
        Some(v) => match (v.as_object(), v.as_array()) {
            (Some(o), _) => o.properties().is_empty(),
            (_, Some(a)) => a.elements().is_empty(),
            _ => false,
        },
        None => false,
    };
    if empty {
        remove(prop.into());
    }
}

/// Adds each of `items` that is missing to the list at `parent.key` (both
/// made when absent). Returns whether anything changed.
pub fn list_add(doc: &Doc, parent: &str, key: &str, items: &[String]) -> Result<bool, String> {
    let object = object_in(&doc.object(), parent, parent)?;
    let list = array_in(&object, key, &format!("{parent}.{key}"))?;
    let present: Vec<Value> = list
        .elements()
        .iter()
        .filter_map(|e| e.to_serde_value())
        .collect();
    let mut changed = false;
    for item in items {
        if !present.contains(&Value::String(item.clone())) {
            list.append(item.clone().into());
            changed = true;
        }
    }
    Ok(changed)
}

/// Takes `items` out of the list at `parent.key` (and the list and
/// `parent` where they held nothing else). Returns whether anything
/// changed.
pub fn list_remove(doc: &Doc, parent: &str, key: &str, items: &[String]) -> bool {
    let top = doc.object();
    let Some(object) = top.object_value(parent) else {
        return false;
    };
    let Some(list) = object.array_value(key) else {
        return false;
    };
    let mut changed = false;
    for element in list.elements() {
        let ours = element
            .to_serde_value()
            .is_some_and(|v| v.as_str().is_some_and(|s| items.iter().any(|i| i == s)));
        if ours {
            remove(element);
            changed = true;
        }
    }
    if changed {
        drop_if_empty(&object, key);
        drop_if_empty(&top, parent);
    }
    changed
}

/// Takes `parent.key` out where it holds `value` (and `parent` where it
/// held nothing else). Returns whether anything changed.
pub fn remove_key_if(doc: &Doc, parent: &str, key: &str, value: &Value) -> bool {
    let top = doc.object();
    let Some(object) = top.object_value(parent) else {
        return false;
    };
    let Some(prop) = object.get(key) else {
        return false;
    };
    if prop.value().and_then(|v| v.to_serde_value()).as_ref() != Some(value) {
        return false;
    }
    remove(prop.into());
    drop_if_empty(&top, parent);
    true
}

/// The string value of `key` in `object`, if it is one.
pub fn string_at(object: &CstObject, key: &str) -> Option<String> {
    object
        .get(key)?
        .value()?
        .as_string_lit()?
        .decoded_value()
        .ok()
}

/// A value as the tree takes it.
pub fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn what_is_added_and_taken_out_again_leaves_the_text_as_it_was() {
        let text = "{\n  // mine\n  \"model\": \"opus\", /* keep */\n\n  \"list\": [1,  2]\n}\n";
        let doc = Doc::parse(text, Dialect::Jsonc).unwrap();
        let servers = object_in(&doc.object(), "mcpServers", "mcpServers").unwrap();
        servers.append("memd", input(&json!({"command": "m", "args": ["mcp"]})));
        let added = doc.text();
        assert!(added.starts_with("{\n  // mine\n  \"model\": \"opus\", /* keep */\n\n  \"list\": [1,  2],\n  \"mcpServers\": {\n    \"memd\": {"), "{added}");
        let doc = Doc::parse(&added, Dialect::Jsonc).unwrap();
        let top = doc.object();
        remove(
            top.object_value("mcpServers")
                .unwrap()
                .get("memd")
                .unwrap()
                .into(),
        );
        drop_if_empty(&top, "mcpServers");
        assert_eq!(doc.text(), text);
    }

    #[test]
    fn a_list_or_object_on_one_line_closes_on_its_line_again() {
        for text in [
            "{\"a\": [{\"b\": 1}], \"o\": {}}\n",
            "{\"a\": [ {\"b\": 1} ], \"o\": {}}\n",
            "{\"a\": [1, 2], \"o\": {}}\n",
            "{\n  \"a\": [\n    {\"b\": 1}\n  ],\n  \"o\": {\n    \"k\": 1\n  }\n}\n",
        ] {
            let doc = Doc::parse(text, Dialect::Json).unwrap();
            let top = doc.object();
            top.array_value("a")
                .unwrap()
                .append(input(&json!({"hooks": [{"x": 1}]})));
            top.object_value("o")
                .unwrap()
                .append("memd", input(&json!({"command": "m"})));
            let doc = Doc::parse(&doc.text(), Dialect::Json).unwrap();
            let top = doc.object();
            remove(top.array_value("a").unwrap().elements().pop().unwrap());
            remove(top.object_value("o").unwrap().get("memd").unwrap().into());
            assert_eq!(doc.text(), text);
        }
    }

    #[test]
    fn a_file_the_agent_cannot_read_is_refused() {
        assert!(Doc::parse("{\"a\": 1, // no\n}", Dialect::Json).is_err());
        assert!(Doc::parse("{\"a\": 1, // yes\n}", Dialect::Jsonc).is_ok());
        assert!(Doc::parse("[1]", Dialect::Json).is_err());
        assert!(Doc::parse("{\"a\": ", Dialect::Jsonc).is_err());
        assert_eq!(Doc::parse("  \n", Dialect::Json).unwrap().text(), EMPTY);
        let doc = Doc::parse("{\"a\": 3}", Dialect::Json).unwrap();
        assert!(object_in(&doc.object(), "a", "a").is_err());
        assert!(array_in(&doc.object(), "a", "a").is_err());
        assert_eq!(string_at(&doc.object(), "a"), None);
    }
}
