//! Adding one item to a knowledge file's text by appending to it: the
//! existing text, comments and formatting stay byte for byte, and the
//! result is accepted only when the loader reads it back with the new item
//! as given and every old item as it was. Writing the file is the daemon's
//! part (`daemon::writer`).

use std::path::Path;
use std::sync::Arc;

use crate::protocol::Kind;

use super::file::{parse_file, FileKind, FileLoad};
use super::kinds::COLLECTION_KEYS;
use super::Item;

/// The kinds that can be added, each with its required and optional
/// fields (SPEC section 3), all text.
pub const ADDABLE: [(Kind, &[&str], &[&str]); 4] = [
    (Kind::Lesson, &["text"], &["category"]),
    (Kind::Gotcha, &["title", "fix"], &["category"]),
    (
        Kind::AntiPattern,
        &["name", "problem", "instead"],
        &["category"],
    ),
    (
        Kind::Pattern,
        &["name", "problem", "solution"],
        &["when_to_use", "code", "category"],
    ),
];

/// Why an item cannot be added.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AppendError {
    #[error("a {0} cannot be added; lesson, gotcha, anti_pattern and pattern can")]
    Kind(Kind),
    #[error("a {kind} needs `{field}`")]
    Missing { kind: Kind, field: &'static str },
    #[error("a {kind} has no field `{field}`; it takes {allowed}")]
    Unknown {
        kind: Kind,
        field: String,
        allowed: String,
    },
    #[error("`{0}` is given twice")]
    Twice(String),
    #[error("{0}: it is not written to until it is fixed")]
    Broken(String),
    #[error("{0} is not a collections document (it holds {1}): it is not written to")]
    NotCollections(String, String),
    #[error(
        "{0}: the new item cannot be appended without rewriting the file ({1}); add it by hand"
    )]
    CannotAppend(String, String),
}

/// The file name a kind's items are added to.
pub fn file_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Pattern => "patterns.yaml",
        Kind::AntiPattern => "anti-patterns.yaml",
        Kind::Gotcha => "gotchas.yaml",
        _ => "lessons.yaml",
    }
}

/// Checks `fields` against `kind`'s: every required one present and not
/// blank, no unknown or repeated one.
pub fn check_fields(kind: Kind, fields: &[(String, String)]) -> Result<(), AppendError> {
    let Some(&(_, required, optional)) = ADDABLE.iter().find(|(k, _, _)| *k == kind) else {
        return Err(AppendError::Kind(kind));
    };
    for (i, (name, _)) in fields.iter().enumerate() {
        if !required.contains(&name.as_str()) && !optional.contains(&name.as_str()) {
            let allowed: Vec<&str> = required.iter().chain(optional).copied().collect();
            return Err(AppendError::Unknown {
                kind,
                field: name.clone(),
                allowed: allowed.join(", "),
            });
        }
        if fields[..i].iter().any(|(n, _)| n == name) {
            return Err(AppendError::Twice(name.clone()));
        }
    }
    for &field in required {
        if !fields
            .iter()
            .any(|(n, v)| n == field && !v.trim().is_empty())
        {
            return Err(AppendError::Missing { kind, field });
        }
    }
    Ok(())
}

/// The items of `existing` (the file's current bytes; `None` when it does
/// not exist yet), refusing a file that does not load cleanly.
fn current_items(path: &Path, existing: Option<&[u8]>) -> Result<Vec<Item>, AppendError> {
    let blank = |b: &[u8]| {
        let b = b.strip_prefix("\u{feff}".as_bytes()).unwrap_or(b);
        b.iter().all(u8::is_ascii_whitespace)
    };
    let Some(bytes) = existing.filter(|b| !blank(b)) else {
        return Ok(Vec::new());
    };
    let load = parse_file(Arc::from(path), bytes);
    loaded_cleanly(path, load)
}

fn loaded_cleanly(path: &Path, load: FileLoad) -> Result<Vec<Item>, AppendError> {
    if let Some(first) = load.errors.first() {
        return Err(AppendError::Broken(first.to_string()));
    }
    match &load.kind {
        FileKind::Collections => Ok(load.items),
        other => Err(AppendError::NotCollections(
            path.display().to_string(),
            format!("{other:?}").to_lowercase(),
        )),
    }
}

/// `existing` with the item `id` of `kind` appended, its `fields` and
/// `tags` as given (the tests' way in; [`add`] also makes the id).
#[cfg(test)]
fn append(
    path: &Path,
    existing: Option<&str>,
    kind: Kind,
    id: &str,
    fields: &[(String, String)],
    tags: &[String],
) -> Result<String, AppendError> {
    let before = current_items(path, existing.map(str::as_bytes))?;
    append_to(path, existing, &before, kind, id, fields, tags)
}

/// What [`add`] comes to.
#[derive(Debug, PartialEq)]
pub enum Added {
    /// The new item's id and the file's new text.
    New { id: String, text: String },
    /// The file holds this very item already (same kind, fields and tags),
    /// under this id: nothing to write. A `remember` that timed out and is
    /// made again lands once.
    There { id: String },
}

/// `existing` with a new item of `kind` appended, its `fields` and `tags`
/// as given, under a new id ([`new_id`] from the title, name or text, free
/// by `taken` and in the file itself). The caller has checked the fields
/// ([`check_fields`]).
pub fn add(
    path: &Path,
    existing: Option<&str>,
    kind: Kind,
    fields: &[(String, String)],
    tags: &[String],
    taken: impl Fn(&str) -> bool,
) -> Result<Added, AppendError> {
    let before = current_items(path, existing.map(str::as_bytes))?;
    let title = ["title", "name", "text"]
        .iter()
        .find_map(|f| fields.iter().find(|(n, _)| n == f))
        .map_or("", |(_, v)| v.as_str());
    let id = new_id(kind, title, |id| {
        taken(id) || before.iter().any(|i| i.id == id)
    });
    let text = append_to(path, existing, &before, kind, &id, fields, tags)?;
    let items = current_items(path, Some(text.as_bytes()))?;
    if let Some(new) = items.iter().find(|i| i.id == id) {
        if let Some(same) = before
            .iter()
            .find(|old| old.body == new.body && old.tags == new.tags)
        {
            return Ok(Added::There {
                id: same.id.clone(),
            });
        }
    }
    Ok(Added::New { id, text })
}

/// The text with the item appended, given the items `existing` holds.
fn append_to(
    path: &Path,
    existing: Option<&str>,
    before: &[Item],
    kind: Kind,
    id: &str,
    fields: &[(String, String)],
    tags: &[String],
) -> Result<String, AppendError> {
    let key = COLLECTION_KEYS
        .iter()
        .find(|(_, k)| *k == kind)
        .map(|(key, _)| *key)
        .ok_or(AppendError::Kind(kind))?;
    let text = existing.unwrap_or("");
    // A byte order mark stays where it is; the item's lines end as the
    // file's do (CRLF, or CR alone, as some editors write).
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let eol = line_ending(body);
    let mut out = String::with_capacity(text.len() + 256);
    out.push_str(text);
    if !body.is_empty() && !body.ends_with(['\n', '\r']) {
        out.push_str(eol);
    }
    let blank = body.trim().is_empty();
    match (!blank).then(|| list_indent(body, key)).flatten() {
        // The kind's list is there: the item goes at its end, which must
        // be the end of the file (checked below by reading it back).
        Some(indent) => out.push_str(&with_ending(&entry(&indent, id, fields, tags), eol)),
        None => {
            if blank {
                out.clear();
                out.push_str(&text[..text.len() - body.len()]);
            }
            out.push_str(key);
            out.push(':');
            out.push_str(eol);
            out.push_str(&with_ending(&entry("  ", id, fields, tags), eol));
        }
    }
    let after = loaded_cleanly(path, parse_file(Arc::from(path), out.as_bytes()))
        .map_err(|e| AppendError::CannotAppend(path.display().to_string(), e.to_string()))?;
    // Every old item reads back the same: its id, tags, place and every
    // value (a block scalar at the end of a file with no final newline
    // would otherwise gain one).
    let unchanged = after.len() == before.len() + 1 && before.iter().all(|a| after.contains(a));
    let added = after.iter().find(|i| i.id == id);
    match added {
        Some(item) if unchanged && item.kind() == kind => Ok(out),
        _ => Err(AppendError::CannotAppend(
            path.display().to_string(),
            format!("its `{key}` list is not the last thing in it"),
        )),
    }
}

/// The line ending `text` uses: that of its first line break, LF when it
/// has none.
fn line_ending(text: &str) -> &'static str {
    match text.find(['\n', '\r']) {
        Some(i) if text[i..].starts_with("\r\n") => "\r\n",
        Some(i) if text[i..].starts_with('\r') => "\r",
        _ => "\n",
    }
}

/// `lines` (each ending in LF) with each line ending in `eol` instead.
fn with_ending(lines: &str, eol: &str) -> String {
    if eol == "\n" {
        lines.to_string()
    } else {
        lines.replace('\n', eol)
    }
}

/// The lines of `text`, whichever of CRLF, CR or LF ends them.
fn lines_of(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n')
        .flat_map(|l| l.split('\r'))
        .filter(|l| !l.is_empty())
}

/// The indentation of the items of the top-level `key:` list, when the
/// file has one in block style.
fn list_indent(text: &str, key: &str) -> Option<String> {
    let mut lines = lines_of(text);
    lines.find(|line| {
        line.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(':'))
            .is_some_and(|rest| {
                let rest = rest.trim();
                rest.is_empty() || rest.starts_with('#')
            })
    })?;
    let first = lines.find(|l| {
        let t = l.trim_start();
        !t.is_empty() && !t.starts_with('#')
    })?;
    let indent = &first[..first.len() - first.trim_start().len()];
    first
        .trim_start()
        .starts_with("- ")
        .then(|| indent.to_string())
}

/// `text` as a YAML double-quoted scalar: every character YAML does not
/// allow in a document as it is (C0 and C1 controls, DEL, U+FFFE, U+FFFF,
/// a byte order mark) escaped, as are the quote and the backslash, so no
/// text can change the document's structure or make it unreadable.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() || matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}') => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One item as YAML, every value a double-quoted scalar ([`quote`]), so no
/// text can change the document's structure.
fn entry(indent: &str, id: &str, fields: &[(String, String)], tags: &[String]) -> String {
    let mut out = format!("{indent}- id: {}\n", quote(id));
    for (name, value) in fields {
        out.push_str(&format!("{indent}  {name}: {}\n", quote(value)));
    }
    if !tags.is_empty() {
        let tags: Vec<String> = tags.iter().map(|t| quote(t)).collect();
        out.push_str(&format!("{indent}  tags: [{}]\n", tags.join(", ")));
    }
    out
}

/// An id for a new item: the kind and the first words of its title (or
/// text), then `-2`, `-3`... until `taken` says no.
pub fn new_id(kind: Kind, title: &str, taken: impl Fn(&str) -> bool) -> String {
    let mut slug = String::new();
    for word in title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(6)
    {
        if slug.len() + word.len() > 40 {
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(&word.to_ascii_lowercase());
    }
    let prefix = kind.to_string().replace('_', "-");
    let base = if slug.is_empty() {
        prefix
    } else {
        format!("{prefix}-{slug}")
    };
    let mut id = base.clone();
    let mut n = 2;
    while taken(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    const LESSONS: &str = "# Our lessons. Keep this comment.\nlessons:\n    # the first one\n    - id: L-1\n      text: \"first\"   # trailing comment\n\n";

    #[test]
    fn appending_keeps_the_file_byte_for_byte() {
        let path = Path::new("lessons.yaml");
        let tags = vec!["ci".to_string()];
        let out = append(
            path,
            Some(LESSONS),
            Kind::Lesson,
            "lesson-x",
            &fields(&[("text", "Say \"why\":\n- not a list")]),
            &tags,
        )
        .unwrap();
        assert!(out.starts_with(LESSONS), "{out}");
        let items = current_items(path, Some(out.as_bytes())).unwrap();
        assert_eq!(items.len(), 2);
        let Body::Lesson(l) = &items[1].body else {
            panic!()
        };
        assert_eq!(l.text, "Say \"why\":\n- not a list");
        assert_eq!(items[1].tags, tags);
        assert!(out.ends_with("    - id: \"lesson-x\"\n      text: \"Say \\\"why\\\":\\n- not a list\"\n      tags: [\"ci\"]\n"), "{out}");
    }

    use crate::knowledge::Body;

    #[test]
    fn a_new_file_or_a_new_key_gets_the_list() {
        let path = Path::new("x.yaml");
        let f = fields(&[("title", "T"), ("fix", "F")]);
        let out = append(path, None, Kind::Gotcha, "g", &f, &[]).unwrap();
        assert_eq!(
            out,
            "gotchas:\n  - id: \"g\"\n    title: \"T\"\n    fix: \"F\"\n"
        );
        let out = append(path, Some(LESSONS.trim_end()), Kind::Gotcha, "g", &f, &[]).unwrap();
        assert!(out.starts_with(LESSONS.trim_end()));
        assert_eq!(current_items(path, Some(out.as_bytes())).unwrap().len(), 2);
    }

    #[test]
    fn a_file_it_cannot_append_to_is_left_alone() {
        let path = Path::new("x.yaml");
        let f = fields(&[("text", "t")]);
        // The list is not at the end.
        let text = "lessons:\n  - id: a\n    text: b\ngotchas: []\n";
        let err = append(path, Some(text), Kind::Lesson, "n", &f, &[]).unwrap_err();
        assert!(matches!(err, AppendError::CannotAppend(..)), "{err}");
        // Flow style.
        let err = append(path, Some("lessons: []\n"), Kind::Lesson, "n", &f, &[]).unwrap_err();
        assert!(matches!(err, AppendError::CannotAppend(..)), "{err}");
        // A file that does not parse.
        let err = append(path, Some("lessons: [\n"), Kind::Lesson, "n", &f, &[]).unwrap_err();
        assert!(matches!(err, AppendError::Broken(_)), "{err}");
        assert!(err.to_string().starts_with("x.yaml:"), "{err}");
        // An item with an error is a broken file too.
        let err = append(
            path,
            Some("lessons:\n  - id: a\n"),
            Kind::Lesson,
            "n",
            &f,
            &[],
        )
        .unwrap_err();
        assert!(matches!(err, AppendError::Broken(_)), "{err}");
    }

    #[test]
    fn fields_are_checked_against_the_kind() {
        assert_eq!(
            check_fields(Kind::Lesson, &fields(&[("text", "t")])),
            Ok(())
        );
        assert_eq!(
            check_fields(Kind::Gotcha, &fields(&[("title", "t"), ("fix", " ")])),
            Err(AppendError::Missing {
                kind: Kind::Gotcha,
                field: "fix"
            })
        );
        assert!(matches!(
            check_fields(Kind::Lesson, &fields(&[("text", "t"), ("body", "b")])),
            Err(AppendError::Unknown { .. })
        ));
        assert!(matches!(
            check_fields(Kind::Lesson, &fields(&[("text", "t"), ("text", "u")])),
            Err(AppendError::Twice(_))
        ));
        assert_eq!(
            check_fields(Kind::Observation, &[]),
            Err(AppendError::Kind(Kind::Observation))
        );
    }

    #[test]
    fn a_bom_and_cr_or_crlf_line_ends_are_kept() {
        let path = Path::new("lessons.yaml");
        let f = fields(&[("text", "new one")]);
        for text in [
            "\u{feff}lessons:\n  - id: L-1\n    text: old\n",
            "lessons:\r  - id: L-1\r    text: old\r",
            "lessons:\r\n  - id: L-1\r\n    text: old",
            "\u{feff}",
        ] {
            let out = append(path, Some(text), Kind::Lesson, "n", &f, &[])
                .unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert!(out.starts_with(text), "{out:?}");
            let items = current_items(path, Some(out.as_bytes())).unwrap();
            assert_eq!(items.last().unwrap().id, "n", "{out:?}");
            let eol = line_ending(text.trim_start_matches('\u{feff}'));
            if text.len() > 3 {
                assert!(
                    out[text.len()..]
                        .split(eol)
                        .all(|l| !l.contains(['\r', '\n'])),
                    "the item's lines end as the file's: {out:?}"
                );
            }
        }
    }

    #[test]
    fn an_item_whose_value_would_change_is_not_appended_after() {
        // A kept block scalar ending in a blank line and no final newline:
        // a newline after it would add one to its value.
        let path = Path::new("lessons.yaml");
        let text = "lessons:\n  - id: L-1\n    text: |+\n      keep exactly\n      ";
        let before = current_items(path, Some(text.as_bytes())).unwrap();
        let f = fields(&[("text", "t")]);
        assert_eq!(before.len(), 1);
        let err = append(path, Some(text), Kind::Lesson, "n", &f, &[]).unwrap_err();
        assert!(matches!(err, AppendError::CannotAppend(..)), "{err}");
    }

    #[test]
    fn controls_yaml_does_not_allow_are_escaped() {
        let path = Path::new("lessons.yaml");
        let odd = "del \u{7f} c1 \u{85}\u{9b} nonchar \u{ffff} bom \u{feff} nul \u{0} bell \u{7}";
        let out = append(
            path,
            None,
            Kind::Lesson,
            "n",
            &fields(&[("text", odd)]),
            &[],
        )
        .unwrap();
        assert!(
            out.is_ascii() || !out.contains(['\u{7f}', '\u{85}', '\u{ffff}']),
            "{out:?}"
        );
        let items = current_items(path, Some(out.as_bytes())).unwrap();
        let Body::Lesson(l) = &items[0].body else {
            panic!()
        };
        assert_eq!(l.text, odd);
    }

    #[test]
    fn the_same_item_added_twice_lands_once() {
        let path = Path::new("lessons.yaml");
        let f = fields(&[("text", "Retry with jitter")]);
        let tags = vec!["net".to_string()];
        let Added::New { id, text } = add(path, None, Kind::Lesson, &f, &tags, |_| false).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            add(path, Some(&text), Kind::Lesson, &f, &tags, |_| false).unwrap(),
            Added::There { id }
        );
        // Other tags or another text: a new item.
        assert!(matches!(
            add(path, Some(&text), Kind::Lesson, &f, &[], |_| false).unwrap(),
            Added::New { .. }
        ));
    }

    #[test]
    fn ids_are_made_from_the_title_and_kept_unique() {
        let taken = ["gotcha-redb-compaction-stalls".to_string()];
        let id = new_id(Kind::Gotcha, "redb: compaction stalls!", |id| {
            taken.contains(&id.to_string())
        });
        assert_eq!(id, "gotcha-redb-compaction-stalls-2");
        assert_eq!(new_id(Kind::AntiPattern, "¿?", |_| false), "anti-pattern");
    }
}
