//! Codex CLI's `config.toml`, edited as a TOML document (`toml_edit`):
//! comments, order, quoting and layout stay as the user wrote them, and
//! every valid way of writing a table is understood (a `[features]` header,
//! dotted `features.x = ...` keys, an inline `features = {...}`). Two
//! settings are made, in one write: the hooks feature on (`[features] hooks
//! = true` for Codex 0.169 and later, where `codex_hooks` is deprecated and
//! warned about on every run; `codex_hooks` before, read from `codex
//! --version`), and memd's MCP server registered (`[mcp_servers.memd]`).
//! A file that does not parse is left as it is, with the reason; a result
//! that does not read back as the same settings plus memd's is never
//! written; a file with CRLF line ends keeps them.
//!
//! Uninstall ([`remove`]) takes out memd's server table and the feature
//! setting where memd turned it on: that line carries [`MARK`] as its
//! comment, so a setting the user had (or renamed from the old key) stays.
//! An inline `features = {...}` holds no comment: memd's setting there is
//! left in place by uninstall.

use std::path::Path;
use std::process::Command;

use toml_edit::{value, Array, DocumentMut, Item, Table, TableLike};

use crate::install::files::{self, Place, Plan, Write};
use crate::install::mcp_servers::{in_codex, Server, ASKS, NAME};
use crate::install::{Outcome, Step};

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

/// The comment on the feature setting where memd turned it on.
pub const MARK: &str = "# memctl install";

/// Whether a setting carries [`MARK`]: memd turned it on.
fn marked(item: &Item) -> bool {
    item.as_value().is_some_and(|v| {
        v.decor()
            .suffix()
            .and_then(|s| s.as_str())
            .is_some_and(|s| s.trim() == MARK)
    })
}

/// What the edit comes to.
#[derive(Debug, PartialEq, Eq)]
pub struct Edit {
    /// The new text of the file, when anything changes.
    pub new: Option<String>,
    /// What memd did not change, and why (what to write instead).
    pub refused: Option<String>,
}

impl Edit {
    fn refused(why: String) -> Edit {
        Edit {
            new: None,
            refused: Some(why),
        }
    }
}

/// The first line of a TOML parser's message.
pub(crate) fn first_line(err: impl std::fmt::Display) -> String {
    err.to_string()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Whether `text` (Codex's `config.toml`) sets the hooks feature, under
/// either name, to true; `None` when it does not set it or does not parse.
pub fn setting(text: &str) -> Option<bool> {
    let table: toml::Table = text.parse().ok()?;
    let features = table.get("features")?;
    [KEY, LEGACY_KEY]
        .iter()
        .filter_map(|k| features.get(k))
        .map(|v| v.as_bool() == Some(true))
        .reduce(|a, b| a || b)
}

/// The table under `key` in `parent`, created (as a `[header]` table at the
/// end of the document) when absent; `Err` when `key` holds something that
/// is not a table.
fn table_in<'a>(
    parent: &'a mut dyn TableLike,
    key: &str,
    path: &str,
) -> Result<&'a mut dyn TableLike, String> {
    if parent.get(key).is_none() {
        let mut table = Table::new();
        table.set_implicit(true);
        parent.insert(key, Item::Table(table));
    }
    match parent.get_mut(key) {
        Some(item) => item
            .as_table_like_mut()
            .ok_or_else(|| format!("`{path}` is not a table")),
        None => Err(format!("`{path}` cannot be made a table")),
    }
}

/// Turns the hooks feature on in `doc` under `key`. Returns whether
/// anything changed.
fn enable_hooks_in(doc: &mut DocumentMut, key: &str) -> Result<bool, String> {
    // An inline table holds no comment: the setting goes in unmarked there.
    let inline = matches!(doc.get("features"), Some(Item::Value(_)));
    let features = table_in(doc.as_table_mut(), "features", "features")?;
    let other = if key == KEY { LEGACY_KEY } else { KEY };
    // A name set to something other than true: the user's to change.
    let set_otherwise = |name: &str, value: &Item| {
        format!(
            "`features.{name}` is set to `{}`: set `{key} = true` for memd's hooks to run",
            value.to_string().trim()
        )
    };
    match features.get(key) {
        // The other name left beside it is the same setting: left as the
        // user wrote it.
        Some(value) if value.as_bool() == Some(true) => return Ok(false),
        Some(value) => return Err(set_otherwise(key, value)),
        None => {}
    }
    match features.get(other).map(|v| (v.as_bool(), v)) {
        Some((Some(false) | None, value)) => return Err(set_otherwise(other, value)),
        // `codex_hooks = true` under a Codex that calls it `hooks` (or the
        // reverse): the same setting, under the name this Codex reads.
        // The setting renamed: still whoever's it was, so marked only
        // where memd had turned it on.
        Some((Some(true), old)) => {
            let ours = marked(old);
            features.remove(other);
            if !ours {
                features.insert(key, value(true));
                return Ok(true);
            }
        }
        None => {}
    }
    let on = toml_edit::Value::from(true);
    let on = if inline {
        on
    } else {
        on.decorated(" ", format!(" {MARK}"))
    };
    features.insert(key, Item::Value(on));
    Ok(true)
}

/// Registers `server` in `doc`: its `command` and `args` set in
/// `[mcp_servers.memd]` (every other key there kept), and, for a new
/// table, the approvals. Returns whether anything changed.
fn register_in(doc: &mut DocumentMut, server: &Server) -> Result<bool, String> {
    let servers = table_in(doc.as_table_mut(), "mcp_servers", "mcp_servers")?;
    let new = servers.get(NAME).is_none();
    let path = format!("mcp_servers.{NAME}");
    let entry = table_in(servers, NAME, &path)?;
    let args: Array = server.args.iter().map(String::as_str).collect();
    let same_command = entry.get("command").and_then(Item::as_str) == Some(server.command.as_str());
    let same_args = entry.get("args").and_then(Item::as_array).is_some_and(|a| {
        a.iter()
            .map(|v| v.as_str())
            .eq(server.args.iter().map(|s| Some(s.as_str())))
    });
    if same_command && same_args {
        return Ok(false);
    }
    if !same_command {
        entry.insert("command", value(server.command.as_str()));
    }
    if !same_args {
        entry.insert("args", value(args));
    }
    if new {
        entry.insert("default_tools_approval_mode", value("approve"));
        let tools = table_in(entry, "tools", &format!("{path}.tools"))?;
        let asks = table_in(tools, ASKS, &format!("{path}.tools.{ASKS}"))?;
        asks.insert("approval_mode", value("prompt"));
    }
    Ok(true)
}

/// Gives tables memd created a header line of their own, after a blank
/// line, and a comment on the one that sets the approvals.
fn lay_out_new(doc: &mut DocumentMut, before: &DocumentMut) {
    // The first table of an empty file starts on its first line.
    let mut gap = if before.to_string().trim().is_empty() {
        ""
    } else {
        "\n"
    };
    if before.get("features").is_none() {
        if let Some(Item::Table(features)) = doc.get_mut("features") {
            features.set_implicit(false);
            features.decor_mut().set_prefix(gap);
            gap = "\n";
        }
    }
    let had_server = before
        .get("mcp_servers")
        .and_then(|s| s.get(NAME))
        .is_some();
    if !had_server {
        if let Some(Item::Table(entry)) = doc.get_mut("mcp_servers").and_then(|s| s.get_mut(NAME)) {
            entry.set_implicit(false);
            entry.decor_mut().set_prefix(gap);
            if let Some(mut key) = entry.key_mut("default_tools_approval_mode") {
                key.leaf_decor_mut().set_prefix(format!(
                    "# memd's tools run without asking, except `{ASKS}`, which writes into the repository.\n"
                ));
            }
            if let Some(Item::Table(tools)) = entry.get_mut("tools") {
                if let Some(Item::Table(asks)) = tools.get_mut(ASKS) {
                    asks.set_implicit(false);
                    asks.decor_mut().set_prefix("\n");
                }
            }
        }
    }
}

/// `text` (the current `config.toml`, empty if none) with the hooks
/// feature on under `key` and `server` registered; refused, with the
/// reason, when the file does not parse, a setting is written as something
/// memd must not change, or the result would not read back as the same
/// settings plus memd's.
pub fn edit(text: &str, key: &str, server: &Server) -> Edit {
    let before: DocumentMut = match text.parse() {
        Ok(doc) => doc,
        Err(err) => {
            return Edit::refused(format!(
                "not valid TOML ({}); left as it is",
                first_line(err)
            ))
        }
    };
    let mut doc = before.clone();
    let mut refused = Vec::new();
    let mut changed = false;
    match enable_hooks_in(&mut doc, key) {
        Ok(c) => changed |= c,
        Err(why) => refused.push(why),
    }
    match register_in(&mut doc, server) {
        Ok(c) => changed |= c,
        Err(why) => refused.push(format!(
            "{why}: write `[mcp_servers.{NAME}]` with `command = {}` and `args = {}` yourself",
            value(server.command.as_str()).to_string().trim(),
            value(server.args.iter().map(String::as_str).collect::<Array>())
                .to_string()
                .trim()
        )),
    }
    let refusal = (!refused.is_empty()).then(|| refused.join("; "));
    if !changed {
        return Edit {
            new: None,
            refused: refusal,
        };
    }
    lay_out_new(&mut doc, &before);
    let mut new = doc.to_string();
    if text.contains("\r\n") {
        new = new.replace("\r\n", "\n").replace('\n', "\r\n");
    }
    // Where part of it was refused, the rest is written and the refusal
    // told.
    match reads_back(text, &new, key, server, refused.is_empty()) {
        Ok(()) => Edit {
            new: Some(new),
            refused: refusal,
        },
        Err(why) => Edit::refused(format!(
            "the edit would not read back ({why}); left as it is"
        )),
    }
}

/// Checks that `new` parses, says everything `old` said (but for the keys
/// memd sets), and says memd's settings.
fn reads_back(old: &str, new: &str, key: &str, server: &Server, all: bool) -> Result<(), String> {
    let parse = |t: &str| t.parse::<toml::Table>().map_err(first_line);
    let mut old = parse(old)?;
    let mut read = parse(new)?;
    if all {
        let on = read
            .get("features")
            .and_then(|f| f.get(key))
            .and_then(toml::Value::as_bool);
        if on != Some(true) {
            return Err(format!("features.{key} is not true"));
        }
        if in_codex(new)?.as_ref() != Some(server) {
            return Err(format!("mcp_servers.{NAME} is not memd's server"));
        }
    }
    // What memd sets, taken out of both: the rest must be equal.
    for table in [&mut old, &mut read] {
        if let Some(toml::Value::Table(f)) = table.get_mut("features") {
            f.remove(KEY);
            f.remove(LEGACY_KEY);
            if f.is_empty() {
                table.remove("features");
            }
        }
        if let Some(toml::Value::Table(s)) = table.get_mut("mcp_servers") {
            if let Some(toml::Value::Table(m)) = s.get_mut(NAME) {
                m.remove("command");
                m.remove("args");
                m.remove("default_tools_approval_mode");
                m.remove("tools");
                if m.is_empty() {
                    s.remove(NAME);
                }
            }
            if s.is_empty() {
                table.remove("mcp_servers");
            }
        }
    }
    if old != read {
        return Err("another setting would change".into());
    }
    Ok(())
}

/// `text` without what memd added: its server table, and the feature
/// setting where it carries [`MARK`] (with `[features]` or `[mcp_servers]`
/// where memd's was all they held). `Ok(None)` when memd is not in it;
/// `Err` when it does not parse.
pub fn remove(text: &str) -> Result<Option<String>, String> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| format!("not valid TOML ({}); left as it is", first_line(e)))?;
    let mut changed = false;
    for (table, keys) in [
        ("features", vec![KEY, LEGACY_KEY]),
        ("mcp_servers", vec![NAME]),
    ] {
        let Some(parent) = doc.get_mut(table).and_then(Item::as_table_like_mut) else {
            continue;
        };
        let mut removed = false;
        for key in keys {
            let ours = table != "features" || parent.get(key).is_some_and(marked);
            if ours && parent.remove(key).is_some() {
                removed = true;
            }
        }
        if removed && parent.is_empty() {
            doc.remove(table);
        }
        changed |= removed;
    }
    if !changed {
        return Ok(None);
    }
    let mut new = doc.to_string();
    if text.contains("\r\n") {
        new = new.replace("\r\n", "\n").replace('\n', "\r\n");
    }
    Ok(Some(new))
}

/// Codex CLI's `config.toml` without memd's settings, planned.
pub fn unconfigure_codex(path: &Path) -> Result<Plan, String> {
    let read = files::read(path, Place::User)?;
    match remove(read.text()?).map_err(|e| format!("{}: {e}", path.display()))? {
        Some(new) if new.trim().is_empty() => files::plan_removal(read),
        Some(new) => files::plan(read, new, files::PRIVATE, files::is_toml),
        None => Ok(Plan::Done(Step::new(path, Outcome::NotThere))),
    }
}

/// Codex CLI's `config.toml`, planned in one write (one backup): its
/// hooks turned on under the name `key`, and memd's MCP server registered.
pub fn configure_codex(path: &Path, key: &str, server: &Server) -> Result<Plan, String> {
    let read = files::read(path, Place::User)?;
    let edit = edit(read.text()?, key, server);
    Ok(match edit.new {
        Some(new) => match files::plan(read, new, files::PRIVATE, files::is_toml)? {
            Plan::Write(write) => Plan::Write(Write {
                detail: edit.refused,
                ..write
            }),
            done => done,
        },
        None => Plan::Done(Step {
            detail: edit.refused.clone(),
            ..Step::new(
                path,
                match edit.refused {
                    Some(_) => Outcome::LeftAlone,
                    None => Outcome::HooksOn,
                },
            )
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a new server table says, after its header.
    const SERVER: &str = "[mcp_servers.memd]\ncommand = \"/opt/memd bin/memctl\"\nargs = [\"mcp\"]\n# memd's tools run without asking, except `remember`, which writes into the repository.\ndefault_tools_approval_mode = \"approve\"\n\n[mcp_servers.memd.tools.remember]\napproval_mode = \"prompt\"\n";

    fn server(socket: Option<&str>) -> Server {
        let mut args = vec!["mcp".to_string()];
        if let Some(s) = socket {
            args.extend(["--socket".to_string(), s.to_string()]);
        }
        Server {
            command: "/opt/memd bin/memctl".into(),
            args,
        }
    }

    fn changed(text: &str, key: &str) -> String {
        let edit = edit(text, key, &server(None));
        assert_eq!(edit.refused, None, "{text}");
        let new = edit.new.unwrap_or_else(|| panic!("no change: {text}"));
        assert_eq!(setting(&new), Some(true), "{new}");
        assert_eq!(in_codex(&new).unwrap(), Some(server(None)), "{new}");
        let again = super::edit(&new, key, &server(None));
        assert_eq!(
            again,
            Edit {
                new: None,
                refused: None
            },
            "idempotent: {new}"
        );
        new
    }

    #[test]
    fn an_empty_or_missing_file_gets_both_tables() {
        assert_eq!(
            changed("", LEGACY_KEY),
            format!("[features]\ncodex_hooks = true # memctl install\n\n{SERVER}")
        );
    }

    #[test]
    fn the_setting_joins_an_existing_features_table_and_nothing_else_moves() {
        let text = "model = \"gpt-5-codex\" # mine\n\n[features] # flags\nweb_search = true\n\n[projects.\"/src/a\"]\ntrust_level = \"trusted\"\n";
        let new = changed(text, KEY);
        assert!(
            new.starts_with("model = \"gpt-5-codex\" # mine\n\n[features] # flags\nweb_search = true\nhooks = true # memctl install\n\n[projects.\"/src/a\"]\ntrust_level = \"trusted\"\n"),
            "{new}"
        );
        assert!(new.ends_with(&format!("\n\n{SERVER}")), "{new}");
    }

    #[test]
    fn every_valid_way_of_writing_the_tables_is_understood() {
        // Each of these was turned into invalid TOML by the line edit
        // before: a dotted key at the top, a quoted key, a multi-line
        // string holding a header line, a `#` in a quoted table name, an
        // inline table.
        for text in [
            "features.web_search = true\n",
            "[features]\n\"web_search\" = true\n",
            "notes = \"\"\"\n[features]\nnot a table\n\"\"\"\n",
            "[projects.\"/src/#1\"]\ntrust_level = \"trusted\"\n",
            "features = { web_search = true }\n",
            "[mcp_servers]\ndocs = { command = \"docs\" }\n",
        ] {
            let new = changed(text, KEY);
            let old: toml::Table = text.parse().unwrap();
            let read: toml::Table = new.parse().unwrap();
            for (key, value) in &old {
                if key != "features" && key != "mcp_servers" {
                    assert_eq!(read.get(key), Some(value), "{new}");
                }
            }
        }
        // The quoted key names the same setting: already on.
        let new = changed("[features]\n\"hooks\" = true\n", KEY);
        assert!(new.starts_with("[features]\n\"hooks\" = true\n"), "{new}");
        assert_eq!(new.matches("hooks\" = true").count(), 1, "{new}");
        assert!(!new.contains("\nhooks = true"), "{new}");
    }

    #[test]
    fn a_file_that_is_not_valid_toml_or_an_array_of_features_is_left_alone() {
        for text in [
            "not = [toml\n",
            "[[features]]\nhooks = true\n",
            "features = 3\n",
        ] {
            let edit = edit(text, KEY, &server(None));
            assert!(edit.refused.is_some(), "{text}");
            if let Some(new) = edit.new {
                // The server registered, the rest as it was.
                assert!(new.starts_with(text), "{new}");
                assert_eq!(in_codex(&new).unwrap(), Some(server(None)));
            }
        }
        let edit = edit("not = [toml\n", KEY, &server(None));
        assert!(edit.refused.unwrap().contains("not valid TOML"));
    }

    #[test]
    fn crlf_files_stay_crlf() {
        let text = "model = \"o3\"\r\n\r\n[features]\r\nweb_search = true\r\n";
        let new = changed(text, KEY);
        assert!(!new.replace("\r\n", "").contains('\n'), "{new:?}");
        assert!(
            new.starts_with(
                "model = \"o3\"\r\n\r\n[features]\r\nweb_search = true\r\nhooks = true # memctl install\r\n"
            ),
            "{new:?}"
        );
    }

    #[test]
    fn a_setting_memd_must_not_change_is_left_to_the_user_and_the_rest_done() {
        let e = edit(
            "[features]\ncodex_hooks = false\n",
            LEGACY_KEY,
            &server(None),
        );
        assert!(
            e.refused.as_deref().unwrap().contains("codex_hooks"),
            "{e:?}"
        );
        let new = e.new.unwrap();
        assert!(
            new.starts_with("[features]\ncodex_hooks = false\n"),
            "{new}"
        );
        assert_eq!(in_codex(&new).unwrap(), Some(server(None)));
        let e = edit("[features]\nhooks = \"yes\"\n", KEY, &server(None));
        assert!(e.refused.unwrap().contains("hooks = true"));
        // A key of the same name in another table is not the setting.
        assert!(
            changed("[profiles.fast]\ncodex_hooks = false\n", LEGACY_KEY)
                .contains("[features]\ncodex_hooks = true # memctl install\n")
        );
        // memd's server written as something else than a table.
        let e = edit("mcp_servers = 3\n", KEY, &server(None));
        assert!(e.refused.unwrap().contains("write `[mcp_servers.memd]`"));
    }

    #[test]
    fn an_older_registration_is_brought_in_line_in_place() {
        let text = "[mcp_servers.memd] # ours\ncommand = \"/old/memctl\"\nargs = [\"mcp\"]\nstartup_timeout_sec = 20\n\n[features]\nhooks = true\n";
        let socket = "/run/user/1000/my \"memd\".sock";
        let e = edit(text, KEY, &server(Some(socket)));
        let new = e.new.unwrap();
        assert_eq!(
            new,
            "[mcp_servers.memd] # ours\ncommand = \"/opt/memd bin/memctl\"\nargs = [\"mcp\", \"--socket\", '/run/user/1000/my \"memd\".sock']\nstartup_timeout_sec = 20\n\n[features]\nhooks = true\n"
        );
        assert_eq!(
            in_codex(&new).unwrap().unwrap().socket(),
            std::path::Path::new(socket)
        );
        // An inline registration is edited in place too.
        let e = edit(
            "mcp_servers = { memd = { command = \"/old\" } }\n[features]\nhooks = true\n",
            KEY,
            &server(None),
        );
        assert_eq!(in_codex(&e.new.unwrap()).unwrap(), Some(server(None)));
    }

    #[test]
    fn the_deprecated_key_is_renamed_for_the_installed_codex() {
        let new = changed(
            "[features]\ncodex_hooks = true # on\nweb_search = true\n",
            KEY,
        );
        assert!(
            new.starts_with("[features]\nweb_search = true\nhooks = true\n"),
            "{new}"
        );
        assert!(!new.contains("codex_hooks"), "{new}");
        assert_eq!(
            edit("features.hooks = true\n[mcp_servers.memd]\ncommand = \"/opt/memd bin/memctl\"\nargs = [\"mcp\"]\n", KEY, &server(None)),
            Edit { new: None, refused: None }
        );
    }

    #[test]
    fn what_install_added_is_taken_out_to_the_byte_and_the_users_settings_stay() {
        for text in [
            "",
            "model = \"gpt-5-codex\" # mine\n\n[features] # flags\nweb_search = true\n\n[projects.\"/src/a\"]\ntrust_level = \"trusted\"\n",
            "[mcp_servers.docs]\ncommand = \"docs\"\n",
            "model = \"o3\"\r\n\r\n[features]\r\nweb_search = true\r\n",
            "features.web_search = true\n",
        ] {
            let new = changed(text, KEY);
            let back = remove(&new).unwrap().unwrap();
            assert_eq!(back.trim(), text.trim(), "{new}");
            assert_eq!(back, text, "{new}");
            assert_eq!(remove(&back).unwrap(), None);
        }
        // A setting the user made stays: memd did not add it.
        let mine = "[features]\nhooks = true\n";
        let new = changed(mine, KEY);
        assert_eq!(remove(&new).unwrap().unwrap(), mine);
        let renamed = changed("[features]\ncodex_hooks = true\n", KEY);
        assert_eq!(
            remove(&renamed).unwrap().unwrap(),
            "[features]\nhooks = true\n"
        );
        assert!(remove("not = [toml\n").is_err());
    }

    #[test]
    fn the_key_follows_the_installed_codex() {
        assert_eq!(parse_version("codex-cli 0.169.0\n"), Some((0, 169, 0)));
        assert_eq!(parse_version("codex-cli v0.120.3"), Some((0, 120, 3)));
        assert_eq!(parse_version("nothing here"), None);
        assert_eq!(key_for(Some((0, 169, 0))), KEY);
        assert_eq!(key_for(Some((1, 0, 0))), KEY);
        assert_eq!(key_for(Some((0, 168, 9))), LEGACY_KEY);
        assert_eq!(key_for(None), KEY, "no Codex yet: the current name");
    }
}
