//! Finding the knowledge files under a root.

use std::path::{Path, PathBuf};

use super::file::Format;

/// True for names editors and tools use for temporary or backup copies
/// (`.#x`, `#x#`, `x~`, `.x.swp`, `x.tmp`, dot-files): never knowledge.
pub fn is_temporary_name(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return true;
    };
    name.starts_with('.')
        || name.starts_with('#')
        || name.ends_with('~')
        || [".swp", ".swx", ".tmp", ".bak", ".orig"]
            .iter()
            .any(|ext| name.ends_with(ext))
}

/// True when a path is one memd would load: a known extension and not a
/// temporary name, nor a team's verdicts ([`is_team_dir`]).
pub fn is_knowledge_path(path: &Path) -> bool {
    !is_temporary_name(path)
        && Format::of(path).is_some()
        && !path.parent().is_some_and(is_team_dir)
}

/// True for a project's `.memd/learned`: its team's verdicts
/// (`crate::learning::team`), not knowledge.
pub fn is_team_dir(dir: &Path) -> bool {
    let named = |p: &Path, name: &str| p.file_name().is_some_and(|n| n == name);
    named(dir, "learned") && dir.parent().is_some_and(|memd| named(memd, ".memd"))
}

/// Every knowledge file under `root`, sorted. Hidden directories inside the
/// root are skipped and directory symlinks are not followed (no cycles).
/// Anything else with a knowledge file's name is listed, symlinks and
/// special files included: reading it decides ([`super::read`]), and says
/// why it refuses. A missing root yields nothing.
pub fn knowledge_files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            if file_type.is_dir() {
                if !is_temporary_name(&path) && !is_team_dir(&path) {
                    pending.push(path);
                }
            } else if is_knowledge_path(&path) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_recognised() {
        for name in [
            "a.yaml~",
            ".a.yaml.swp",
            "#a.yaml#",
            ".#a.yaml",
            "a.yaml.tmp",
            "4913",
        ] {
            assert!(!is_knowledge_path(Path::new(name)), "{name}");
        }
        assert!(is_knowledge_path(Path::new("dir/patterns.yaml")));
        assert!(is_knowledge_path(Path::new("obs.jsonl")));
    }

    #[test]
    fn walks_recursively_and_skips_hidden_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("a/b/x.yaml"), "patterns: []").unwrap();
        std::fs::write(root.join("y.json"), "{}").unwrap();
        std::fs::write(root.join(".git/z.yaml"), "patterns: []").unwrap();
        std::fs::write(root.join("notes.md"), "#").unwrap();
        let files = knowledge_files(root);
        assert_eq!(files, vec![root.join("a/b/x.yaml"), root.join("y.json")]);
    }
}
