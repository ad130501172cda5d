//! Turning on Codex CLI's hooks in its `config.toml`: `[features] hooks =
//! true` (Codex 0.169 and later, where `codex_hooks` is deprecated and
//! warned about on every run), or `codex_hooks = true` for the versions
//! before, read from `codex --version`. The file is the user's: it is edited
//! as text, one line added (or the deprecated key renamed), so comments and
//! layout stay as they are; where the setting is written in a way a line
//! edit cannot safely change (an inline `features = {...}` table, or the key
//! set to something else), the user is told what to write instead.

use std::path::Path;
use std::process::Command;

use super::files::write_file;
use super::mcp_servers::{codex_edit, Server};
use super::{Outcome, Step};

/// The feature key hooks have had since Codex 0.169.
pub const KEY: &str = "hooks";
/// The key before, deprecated in 0.169.
pub const LEGACY_KEY: &str = "codex_hooks";
/// The first Codex version that names the feature `hooks`... as far as
/// memd knows: 0.169 deprecates the old name, so from there on the new one
/// is certain, and before it the old one still works.
const FIRST_WITH_KEY: (u32, u32, u32) = (0, 169, 0);

/// The installed Codex's version, from `codex --version`
/// (`codex-cli 0.169.0`); `None` when Codex is not installed or says
/// something else.
pub fn installed_version() -> Option<(u32, u32, u32)> {
    let out = Command::new("codex").arg("--version").output().ok()?;
    parse_version(&String::from_utf8_lossy(&out.stdout))
}

/// The first `X.Y.Z` in `text`.
fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    text.split(|c: char| c.is_whitespace() || c == 'v')
        .find_map(|word| {
            let mut parts = word.split('.').map(|p| p.parse::<u32>().ok());
            match (parts.next(), parts.next(), parts.next()) {
                (Some(Some(a)), Some(Some(b)), Some(Some(c))) => Some((a, b, c)),
                _ => None,
            }
        })
}

/// The key to write for a Codex version: the new one, unless an older
/// Codex is installed.
pub fn key_for(version: Option<(u32, u32, u32)>) -> &'static str {
    match version {
        Some(v) if v < FIRST_WITH_KEY => LEGACY_KEY,
        _ => KEY,
    }
}

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
pub(super) fn key_value(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once('=')?;
    let value = value.split('#').next().unwrap_or("").trim();
    Some((key.trim(), value))
}

/// The table a header line opens (`[features]` is `features`).
pub(super) fn header(line: &str) -> Option<String> {
    let t = line.split('#').next().unwrap_or("").trim();
    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
    Some(inner.chars().filter(|c| !c.is_whitespace()).collect())
}

/// A line of Codex's config that bears on its hooks feature.
enum Found<'a> {
    /// `[features]` opens here.
    FeaturesTable,
    /// `features = {...}`: an inline table, which a line edit cannot
    /// safely change.
    InlineFeatures,
    /// `hooks` or `codex_hooks` under `[features]` (or dotted), and its
    /// value.
    Setting { feature: &'a str, value: &'a str },
}

/// The lines of `text` that bear on the hooks feature, in order, with
/// their indexes.
fn scan(text: &str) -> Vec<(usize, Found<'_>)> {
    let mut found = Vec::new();
    // None: the top level, before any table.
    let mut table: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(name) = header(line) {
            if name == "features" {
                found.push((i, Found::FeaturesTable));
            }
            table = Some(name);
            continue;
        }
        let Some((name, value)) = key_value(line) else {
            continue;
        };
        let feature = match (table.as_deref(), name) {
            (Some("features"), name) => name,
            (None, "features") => {
                found.push((i, Found::InlineFeatures));
                continue;
            }
            (None, name) => match name.strip_prefix("features.") {
                Some(name) => name,
                None => continue,
            },
            _ => continue,
        };
        if feature == KEY || feature == LEGACY_KEY {
            found.push((i, Found::Setting { feature, value }));
        }
    }
    found
}

/// Turns hooks on in `text`, the current `config.toml` (empty if none),
/// with the feature named `key`. The other name, set to true, is renamed.
pub fn enable_hooks(text: &str, key: &str) -> Edit {
    let mut features_at = None;
    let mut other_at = None;
    for (i, found) in scan(text) {
        match found {
            Found::FeaturesTable => features_at = Some(i),
            Found::InlineFeatures => {
                return Edit::Refused(format!(
                    "`features` is an inline table (line {}): add `{key} = true` to it",
                    i + 1
                ))
            }
            Found::Setting { feature, value } if value != "true" => {
                return Edit::Refused(format!(
                    "{feature} is set to `{value}` (line {}): set `{key} = true` for memd's hooks to run",
                    i + 1
                ))
            }
            Found::Setting { feature, .. } if feature == key => return Edit::Unchanged,
            Found::Setting { feature, .. } => other_at = Some((i, feature.to_string())),
        }
    }
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if let Some((i, other)) = other_at {
        // `codex_hooks = true` under a Codex that calls it `hooks` (or the
        // reverse): the same setting, under the name this Codex reads.
        lines[i] = lines[i].replacen(&other, key, 1);
        return Edit::Changed(lines.join("\n") + "\n");
    }
    let setting = format!("{key} = true");
    match features_at {
        Some(i) => lines.insert(i + 1, setting),
        None => {
            if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                lines.push(String::new());
            }
            lines.push("[features]".into());
            lines.push(setting);
        }
    }
    Edit::Changed(lines.join("\n") + "\n")
}

/// Whether `text` (Codex's `config.toml`) sets the hooks feature, under
/// either name, to true; `None` when it does not set it (or sets it in a
/// way memd does not read: an inline table).
pub fn setting(text: &str) -> Option<bool> {
    scan(text)
        .into_iter()
        .rev()
        .find_map(|(_, found)| match found {
            Found::Setting { value, .. } => Some(value == "true"),
            _ => None,
        })
}

/// Codex CLI's `config.toml` in one write (one backup): its hooks turned
/// on under the name `key`, and memd's MCP server registered.
pub fn configure_codex(
    path: &Path,
    key: &str,
    server: &Server,
    dry_run: bool,
) -> Result<Step, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(format!("{}: {err}", path.display())),
    };
    let hooks = enable_hooks(&text, key);
    let with_hooks = match &hooks {
        Edit::Changed(changed) => changed.clone(),
        _ => text.clone(),
    };
    let server = codex_edit(&with_hooks, server);
    let new = match &server {
        Edit::Changed(changed) => changed.clone(),
        _ => with_hooks,
    };
    let refused: Vec<String> = [hooks, server]
        .into_iter()
        .filter_map(|edit| match edit {
            Edit::Refused(why) => Some(why),
            _ => None,
        })
        .collect();
    let detail = (!refused.is_empty()).then(|| refused.join("; "));
    let step = if new != text {
        write_file(path, &new, dry_run)?
    } else if detail.is_some() {
        Step::new(path, Outcome::LeftAlone)
    } else {
        Step::new(path, Outcome::HooksOn)
    };
    Ok(Step { detail, ..step })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_or_missing_file_gets_the_table() {
        assert_eq!(
            enable_hooks("", LEGACY_KEY),
            Edit::Changed("[features]\ncodex_hooks = true\n".into())
        );
    }

    #[test]
    fn the_setting_joins_an_existing_features_table_and_nothing_else_moves() {
        let text = "model = \"gpt-5-codex\" # mine\n\n[features] # flags\nweb_search = true\n\n[projects.\"/src/a\"]\ntrust_level = \"trusted\"\n";
        let Edit::Changed(new) = enable_hooks(text, LEGACY_KEY) else {
            panic!()
        };
        assert_eq!(
            new,
            "model = \"gpt-5-codex\" # mine\n\n[features] # flags\ncodex_hooks = true\nweb_search = true\n\n[projects.\"/src/a\"]\ntrust_level = \"trusted\"\n"
        );
        assert_eq!(enable_hooks(&new, LEGACY_KEY), Edit::Unchanged);
    }

    #[test]
    fn a_file_without_the_table_gets_it_at_the_end() {
        let text = "model = \"o3\"\n[mcp_servers.docs]\ncommand = \"docs\"";
        assert_eq!(
            enable_hooks(text, LEGACY_KEY),
            Edit::Changed(
                "model = \"o3\"\n[mcp_servers.docs]\ncommand = \"docs\"\n\n[features]\ncodex_hooks = true\n"
                    .into()
            )
        );
    }

    #[test]
    fn hooks_already_on_in_any_spelling_change_nothing() {
        assert_eq!(
            enable_hooks("[ features ]\ncodex_hooks = true # on\n", LEGACY_KEY),
            Edit::Unchanged
        );
        assert_eq!(
            enable_hooks("features.codex_hooks = true\n[x]\n", LEGACY_KEY),
            Edit::Unchanged
        );
    }

    #[test]
    fn what_a_line_edit_cannot_change_safely_is_left_to_the_user() {
        assert!(matches!(
            enable_hooks("[features]\ncodex_hooks = false\n", LEGACY_KEY),
            Edit::Refused(why) if why.contains("line 2")
        ));
        assert!(matches!(
            enable_hooks("features = { web_search = true }\n", LEGACY_KEY),
            Edit::Refused(why) if why.contains("inline table")
        ));
        // A key of the same name in another table is not the setting.
        assert!(matches!(
            enable_hooks("[profiles.fast]\ncodex_hooks = false\n", LEGACY_KEY),
            Edit::Changed(_)
        ));
    }

    #[test]
    fn the_key_follows_the_installed_codex_and_the_deprecated_one_is_renamed() {
        assert_eq!(parse_version("codex-cli 0.169.0\n"), Some((0, 169, 0)));
        assert_eq!(parse_version("codex-cli v0.120.3"), Some((0, 120, 3)));
        assert_eq!(parse_version("nothing here"), None);
        assert_eq!(key_for(Some((0, 169, 0))), KEY);
        assert_eq!(key_for(Some((1, 0, 0))), KEY);
        assert_eq!(key_for(Some((0, 168, 9))), LEGACY_KEY);
        assert_eq!(key_for(None), KEY, "no Codex yet: the current name");
        assert_eq!(
            enable_hooks("", KEY),
            Edit::Changed("[features]\nhooks = true\n".into())
        );
        assert_eq!(
            enable_hooks(
                "[features]\ncodex_hooks = true # on\nweb_search = true\n",
                KEY
            ),
            Edit::Changed("[features]\nhooks = true # on\nweb_search = true\n".into())
        );
        assert_eq!(
            enable_hooks("features.hooks = true\n", KEY),
            Edit::Unchanged
        );
        assert!(matches!(
            enable_hooks("[features]\nhooks = false\n", KEY),
            Edit::Refused(why) if why.contains("hooks = true")
        ));
    }
}
