//! Turning on Codex CLI's hooks in its `config.toml`: hooks run only with
//! `[features] codex_hooks = true`. The file is the user's: it is edited as
//! text, one line added, so comments and layout stay as they are; where the
//! setting is written in a way a line edit cannot safely change (an inline
//! `features = {...}` table, or `codex_hooks` set to something else), the
//! user is told what to write instead.

use std::path::Path;

use super::files::write_file;
use super::{Outcome, Step};

/// The setting that turns hooks on.
const SETTING: &str = "codex_hooks = true";

/// What the edit comes to.
#[derive(Debug, PartialEq, Eq)]
pub enum Edit {
    /// Hooks are on already.
    Unchanged,
    /// The new text of the file.
    Changed(String),
    /// Left alone, for this reason.
    Refused(String),
}

/// The key of a `key = value` line, and its value without a comment.
fn key_value(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once('=')?;
    let value = value.split('#').next().unwrap_or("").trim();
    Some((key.trim(), value))
}

/// The table a header line opens (`[features]` is `features`).
fn header(line: &str) -> Option<String> {
    let t = line.split('#').next().unwrap_or("").trim();
    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
    Some(inner.chars().filter(|c| !c.is_whitespace()).collect())
}

/// Turns hooks on in `text`, the current `config.toml` (empty if none).
pub fn enable_hooks(text: &str) -> Edit {
    let mut lines: Vec<&str> = text.lines().collect();
    // None: the top level, before any table.
    let mut table: Option<String> = None;
    let mut features_at = None;
    for (i, line) in lines.iter().enumerate() {
        if let Some(name) = header(line) {
            if name == "features" {
                features_at = Some(i);
            }
            table = Some(name);
            continue;
        }
        let Some((key, value)) = key_value(line) else {
            continue;
        };
        let setting = match (table.as_deref(), key) {
            (Some("features"), "codex_hooks") | (None, "features.codex_hooks") => value,
            (None, "features") => {
                return Edit::Refused(format!(
                    "`features` is an inline table (line {}): add `{SETTING}` to it",
                    i + 1
                ))
            }
            _ => continue,
        };
        return if setting == "true" {
            Edit::Unchanged
        } else {
            Edit::Refused(format!(
                "codex_hooks is set to `{setting}` (line {}): set it to true for memd's hooks to run",
                i + 1
            ))
        };
    }
    match features_at {
        Some(i) => lines.insert(i + 1, SETTING),
        None => {
            if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                lines.push("");
            }
            lines.push("[features]");
            lines.push(SETTING);
        }
    }
    Edit::Changed(lines.join("\n") + "\n")
}

/// Turns Codex CLI's hooks on in its config, which they need to run.
pub fn enable_codex_hooks(path: &Path, dry_run: bool) -> Result<Step, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(format!("{}: {err}", path.display())),
    };
    match enable_hooks(&text) {
        Edit::Unchanged => Ok(Step::new(path, Outcome::HooksOn)),
        Edit::Changed(new) => write_file(path, &new, dry_run),
        Edit::Refused(why) => Ok(Step {
            detail: Some(why),
            ..Step::new(path, Outcome::LeftAlone)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_or_missing_file_gets_the_table() {
        assert_eq!(
            enable_hooks(""),
            Edit::Changed("[features]\ncodex_hooks = true\n".into())
        );
    }

    #[test]
    fn the_setting_joins_an_existing_features_table_and_nothing_else_moves() {
        let text = "model = \"gpt-5-codex\" # mine\n\n[features] # flags\nweb_search = true\n\n[projects.\"/src/a\"]\ntrust_level = \"trusted\"\n";
        let Edit::Changed(new) = enable_hooks(text) else {
            panic!()
        };
        assert_eq!(
            new,
            "model = \"gpt-5-codex\" # mine\n\n[features] # flags\ncodex_hooks = true\nweb_search = true\n\n[projects.\"/src/a\"]\ntrust_level = \"trusted\"\n"
        );
        assert_eq!(enable_hooks(&new), Edit::Unchanged);
    }

    #[test]
    fn a_file_without_the_table_gets_it_at_the_end() {
        let text = "model = \"o3\"\n[mcp_servers.docs]\ncommand = \"docs\"";
        assert_eq!(
            enable_hooks(text),
            Edit::Changed(
                "model = \"o3\"\n[mcp_servers.docs]\ncommand = \"docs\"\n\n[features]\ncodex_hooks = true\n"
                    .into()
            )
        );
    }

    #[test]
    fn hooks_already_on_in_any_spelling_change_nothing() {
        assert_eq!(
            enable_hooks("[ features ]\ncodex_hooks = true # on\n"),
            Edit::Unchanged
        );
        assert_eq!(
            enable_hooks("features.codex_hooks = true\n[x]\n"),
            Edit::Unchanged
        );
    }

    #[test]
    fn what_a_line_edit_cannot_change_safely_is_left_to_the_user() {
        assert!(matches!(
            enable_hooks("[features]\ncodex_hooks = false\n"),
            Edit::Refused(why) if why.contains("line 2")
        ));
        assert!(matches!(
            enable_hooks("features = { web_search = true }\n"),
            Edit::Refused(why) if why.contains("inline table")
        ));
        // A key of the same name in another table is not the setting.
        assert!(matches!(
            enable_hooks("[profiles.fast]\ncodex_hooks = false\n"),
            Edit::Changed(_)
        ));
    }
}
