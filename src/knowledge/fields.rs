//! Typed reads of an item's fields from a [`Node`], each failure naming the
//! field, what was expected and where.

use super::node::{Node, Pos, Value};

/// A field that is missing or has the wrong shape.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// Where: the field's value, or the item when the field is missing.
    pub pos: Pos,
    /// What was expected.
    pub message: String,
}

/// Result of a field read.
pub type FieldResult<T> = Result<T, FieldError>;

/// The fields of one mapping node.
pub struct Fields<'a> {
    node: &'a Node,
}

impl<'a> Fields<'a> {
    /// Reads `node` as a mapping.
    pub fn new(node: &'a Node) -> FieldResult<Self> {
        match node.value {
            Value::Map(_) => Ok(Fields { node }),
            _ => Err(FieldError {
                pos: node.pos,
                message: format!("expected a mapping, found {}", node.type_name()),
            }),
        }
    }

    /// Where the mapping starts.
    pub fn pos(&self) -> Pos {
        self.node.pos
    }

    /// The raw node of a field, if present and not null.
    pub fn raw(&self, key: &str) -> Option<&'a Node> {
        self.node.get(key).filter(|n| n.value != Value::Null)
    }

    fn missing(&self, key: &str) -> FieldError {
        FieldError {
            pos: self.node.pos,
            message: format!("missing required field `{key}`"),
        }
    }

    /// A required, non-empty text field.
    pub fn req_str(&self, key: &str) -> FieldResult<String> {
        let text = self.opt_str(key)?.ok_or_else(|| self.missing(key))?;
        if text.trim().is_empty() {
            let pos = self.raw(key).map_or(self.node.pos, |n| n.pos);
            return Err(FieldError {
                pos,
                message: format!("field `{key}` must not be empty"),
            });
        }
        Ok(text)
    }

    /// An optional text field. Numbers are accepted and read as text
    /// (`id: 14`).
    pub fn opt_str(&self, key: &str) -> FieldResult<Option<String>> {
        let Some(node) = self.raw(key) else {
            return Ok(None);
        };
        scalar_text(node)
            .map(Some)
            .ok_or_else(|| wrong_type(key, node, "text"))
    }

    /// A list of text; a single text value is read as a list of one.
    pub fn str_list(&self, key: &str) -> FieldResult<Vec<String>> {
        let Some(node) = self.raw(key) else {
            return Ok(Vec::new());
        };
        match &node.value {
            Value::Seq(items) => items
                .iter()
                .map(|item| scalar_text(item).ok_or_else(|| wrong_type(key, item, "text")))
                .collect(),
            _ => scalar_text(node)
                .map(|s| vec![s])
                .ok_or_else(|| wrong_type(key, node, "a list of text")),
        }
    }

    /// A non-negative integer.
    pub fn opt_u32(&self, key: &str) -> FieldResult<Option<u32>> {
        let Some(node) = self.raw(key) else {
            return Ok(None);
        };
        match node.value {
            Value::Int(i) => u32::try_from(i)
                .map(Some)
                .map_err(|_| wrong_type(key, node, "a non-negative integer")),
            _ => Err(wrong_type(key, node, "a non-negative integer")),
        }
    }

    /// A number, checked to lie in `min..=max`.
    pub fn opt_f64(&self, key: &str, min: f64, max: f64) -> FieldResult<Option<f64>> {
        let Some(node) = self.raw(key) else {
            return Ok(None);
        };
        let value = match node.value {
            Value::Int(i) => i as f64,
            Value::Float(f) => f,
            _ => return Err(wrong_type(key, node, "a number")),
        };
        if !(min..=max).contains(&value) {
            return Err(FieldError {
                pos: node.pos,
                message: format!("field `{key}` must be between {min} and {max}, found {value}"),
            });
        }
        Ok(Some(value))
    }

    /// A boolean.
    pub fn opt_bool(&self, key: &str) -> FieldResult<Option<bool>> {
        let Some(node) = self.raw(key) else {
            return Ok(None);
        };
        match node.value {
            Value::Bool(b) => Ok(Some(b)),
            _ => Err(wrong_type(key, node, "true or false")),
        }
    }

    /// One of a fixed set of names, compared case-insensitively.
    pub fn opt_enum<T: Copy>(&self, key: &str, choices: &[(&str, T)]) -> FieldResult<Option<T>> {
        let Some(node) = self.raw(key) else {
            return Ok(None);
        };
        let names = || {
            choices
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(text) = scalar_text(node) else {
            return Err(wrong_type(key, node, &format!("one of {}", names())));
        };
        let wanted = text.trim().to_ascii_lowercase();
        choices
            .iter()
            .find(|(name, _)| *name == wanted)
            .map(|(_, v)| Some(*v))
            .ok_or_else(|| FieldError {
                pos: node.pos,
                message: format!("field `{key}` must be one of {}, found `{text}`", names()),
            })
    }

    /// A required choice among a fixed set of names.
    pub fn req_enum<T: Copy>(&self, key: &str, choices: &[(&str, T)]) -> FieldResult<T> {
        self.opt_enum(key, choices)?
            .ok_or_else(|| self.missing(key))
    }

    /// An instant (see [`crate::time::parse_instant`]) or Unix seconds.
    pub fn opt_time(&self, key: &str) -> FieldResult<Option<i64>> {
        let Some(node) = self.raw(key) else {
            return Ok(None);
        };
        match &node.value {
            Value::Int(secs) => Ok(Some(*secs)),
            Value::Str(text) => crate::time::parse_instant(text)
                .map(Some)
                .map_err(|message| FieldError {
                    pos: node.pos,
                    message: format!("field `{key}`: {message}"),
                }),
            _ => Err(wrong_type(key, node, "a date")),
        }
    }

    /// A required instant.
    pub fn req_time(&self, key: &str) -> FieldResult<i64> {
        self.opt_time(key)?.ok_or_else(|| self.missing(key))
    }

    /// A nested mapping, if present.
    pub fn sub(&self, key: &str) -> FieldResult<Option<Fields<'a>>> {
        match self.raw(key) {
            None => Ok(None),
            Some(node) => Fields::new(node)
                .map(Some)
                .map_err(|_| wrong_type(key, node, "a mapping")),
        }
    }
}

/// The text of a scalar node; `None` for lists, mappings and null.
pub fn scalar_text(node: &Node) -> Option<String> {
    match &node.value {
        Value::Str(s) => Some(s.clone()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Seq(_) | Value::Map(_) => None,
    }
}

fn wrong_type(key: &str, node: &Node, expected: &str) -> FieldError {
    FieldError {
        pos: node.pos,
        message: format!(
            "field `{key}` must be {expected}, found {}",
            node.type_name()
        ),
    }
}
