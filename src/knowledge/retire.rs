//! Retiring an item: its lines taken out of its knowledge file's text, the
//! rest byte for byte, accepted only when the loader reads the result back
//! with every other item as it was and this one gone. Writing the file is
//! the daemon's part (`daemon::writer::retire`).

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use super::file::{parse_file, FileKind};

/// Why an item cannot be retired from its file's text.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RetireError {
    #[error("{0}: memd does not take items out of such a file; edit it by hand")]
    Format(String),
    #[error(
        "{file}:{line} is not where an item starts as memd reads it now; reload and try again"
    )]
    NotThere { file: String, line: usize },
    #[error("{0}: without the item's lines the file does not read back as the other items; edit it by hand")]
    NotClean(String),
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty()
}

/// The lines (0-based, end exclusive) of the item that starts at 1-based
/// `line` of `text`: in YAML the list entry from its `- ` to the last line
/// indented deeper (blank lines after it stay); in JSON Lines its line.
pub fn lines_of(text: &str, path: &Path, line: usize) -> Result<Range<usize>, RetireError> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let file = path.display().to_string();
    let not_there = || RetireError::NotThere {
        file: file.clone(),
        line,
    };
    let start = line
        .checked_sub(1)
        .filter(|&i| i < lines.len())
        .ok_or_else(not_there)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".jsonl") {
        return Ok(start..start + 1);
    }
    if !(name.ends_with(".yaml") || name.ends_with(".yml")) {
        return Err(RetireError::Format(file));
    }
    let first = lines[start];
    let dash = indent(first);
    if !first[dash..].starts_with("- ") && first[dash..].trim_end() != "-" {
        return Err(not_there());
    }
    let mut last = start;
    for (i, l) in lines.iter().enumerate().skip(start + 1) {
        if blank(l) || l.trim_start().starts_with('#') && indent(l) > dash {
            continue;
        }
        if indent(l) > dash {
            last = i;
        } else {
            break;
        }
    }
    // Comments between the entry's last line and the next one stay.
    Ok(start..last + 1)
}

/// `text` without the item `id` that starts at `line`, checked: the loader
/// reads it back with the same items, this one gone.
pub fn without(
    text: &str,
    path: &Path,
    id: &str,
    line: usize,
) -> Result<(String, Range<usize>), RetireError> {
    let range = lines_of(text, path, line)?;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len());
    for (i, l) in lines.iter().enumerate() {
        if !range.contains(&i) {
            out.push_str(l);
        }
    }
    let path: Arc<Path> = Arc::from(path);
    let before = parse_file(path.clone(), text.as_bytes());
    let after = parse_file(path.clone(), out.as_bytes());
    let clean = |kind: &FileKind| matches!(kind, FileKind::Collections | FileKind::ObservationLog);
    let same_others = clean(&before.kind)
        && clean(&after.kind)
        && before.items.iter().any(|i| i.id == id)
        && after.items.iter().all(|i| i.id != id)
        && after.items.len() + 1 == before.items.len()
        && after.errors.len() <= before.errors.len()
        && before
            .items
            .iter()
            .filter(|i| i.id != id)
            .zip(&after.items)
            .all(|(b, a)| b.id == a.id && b.tags == a.tags && b.body == a.body);
    if !same_others {
        return Err(RetireError::NotClean(path.display().to_string()));
    }
    Ok((out, range))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# the team's lessons\nlessons:\n  - id: L-1\n    text: one\n\n  # about two\n  - id: L-2\n    text: >\n      two,\n      folded\n    tags: [a]\n  - id: L-3\n    text: three\n";

    #[test]
    fn an_entry_goes_with_its_deeper_lines_and_the_rest_stays_byte_for_byte() {
        let path = Path::new("/k/lessons.yaml");
        let (out, range) = without(TEXT, path, "L-2", 7).unwrap();
        assert_eq!(range, 6..11);
        assert_eq!(
            out,
            "# the team's lessons\nlessons:\n  - id: L-1\n    text: one\n\n  # about two\n  - id: L-3\n    text: three\n"
        );
        let (out, _) = without(TEXT, path, "L-3", 12).unwrap();
        assert!(out.ends_with("tags: [a]\n"));
        let (out, range) = without(TEXT, path, "L-1", 3).unwrap();
        assert_eq!(range, 2..4);
        assert!(out.starts_with("# the team's lessons\nlessons:\n\n  # about two\n  - id: L-2"));
    }

    #[test]
    fn a_wrong_line_or_format_is_refused() {
        let path = Path::new("/k/lessons.yaml");
        assert!(matches!(
            without(TEXT, path, "L-2", 8),
            Err(RetireError::NotThere { .. })
        ));
        assert!(matches!(
            without(TEXT, path, "L-9", 3),
            Err(RetireError::NotClean(_))
        ));
        assert!(matches!(
            without("{}", Path::new("/k/x.json"), "X", 1),
            Err(RetireError::Format(_))
        ));
    }
}
