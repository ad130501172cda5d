//! The safe write path: `memctl add` through the real daemon appends to a
//! knowledge file, keeps what was there byte for byte, and the next query
//! sees the item.

mod common;

use common::*;

/// A repository (a `.git` directory) inside the sandbox.
fn repo(sandbox: &Sandbox) -> std::path::PathBuf {
    let repo = sandbox.dir.path().join("shop");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    repo
}

#[test]
fn an_added_lesson_lands_in_the_project_and_the_next_query_has_it() {
    let sandbox = Sandbox::new();
    let repo = repo(&sandbox);
    let cwd = repo.display().to_string();
    let daemon = Daemon::start(&sandbox);
    let add = || {
        daemon.json(&[
            "add",
            "lesson",
            "--text",
            "Run the payment webhooks' tests against the sandbox account, never live keys.",
            "--tags",
            "stripe,ci",
            "--cwd",
            &cwd,
        ])["ok"]["added"]
            .clone()
    };
    let added = add();
    let id = added["id"].as_str().unwrap().to_string();
    assert_eq!(id, "lesson-run-the-payment-webhooks-tests-against");
    let file = repo.join(".memd").join("lessons.yaml");
    assert_eq!(added["file"].as_str().unwrap(), file.display().to_string());
    // The next query from the project has it, with no wait.
    let hits = daemon.json(&["search", "payment webhooks sandbox account", "--cwd", &cwd]);
    let hits = &hits["ok"]["hits"];
    assert!(
        hits.as_array()
            .unwrap()
            .iter()
            .any(|h| h["id"] == id.as_str()),
        "{hits}"
    );
    let item = daemon.json(&["get", &id, "--cwd", &cwd]);
    let item = &item["ok"]["item"];
    assert_eq!(item["tags"], serde_json::json!(["stripe", "ci"]), "{item}");
    // Not from elsewhere: it is the project's.
    assert!(!daemon.memctl(&["get", &id]).status.success());
    // The loader accepts the file as written.
    let out = run(&["validate", &file.display().to_string()]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    // The same item again (a `remember` retried after a time-out) lands
    // once: the file is not written.
    let written = std::fs::read(&file).unwrap();
    let again = add();
    assert_eq!(again["id"], id.as_str());
    assert_eq!(std::fs::read(&file).unwrap(), written);
    // The same text with other tags is another item, with its own id.
    let other = daemon.json(&[
        "add",
        "lesson",
        "--text",
        "Run the payment webhooks' tests against the sandbox account, never live keys.",
        "--cwd",
        &cwd,
    ])["ok"]["added"]
        .clone();
    assert_eq!(other["id"], format!("{id}-2").as_str());
}

#[test]
fn an_existing_file_keeps_its_bytes_and_a_broken_one_is_not_touched() {
    let sandbox = Sandbox::new();
    let existing = "# Gotchas we hit. Keep this comment.\ngotchas:\n    - id: G-1   # the first\n      title: 'Pool exhausted'\n      fix: \"Shorter transactions\"\n\n# trailing comment\n";
    let path = sandbox.write("gotchas.yaml", existing);
    let broken = "lessons: [unclosed\n";
    let broken_path = sandbox.write("lessons.yaml", broken);
    let daemon = Daemon::start(&sandbox);
    let added = daemon.json(&[
        "add",
        "gotcha",
        "--title",
        "Redis eviction drops sessions",
        "--fix",
        "Give sessions their own Redis with noeviction.",
        "--category",
        "cache",
        "--personal",
    ])["ok"]["added"]
        .clone();
    assert_eq!(added["file"].as_str().unwrap(), path.display().to_string());
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.starts_with(existing), "{after}");
    assert!(after.len() > existing.len());
    let id = added["id"].as_str().unwrap();
    assert_eq!(
        title_of(&daemon, id).as_deref(),
        Some("Redis eviction drops sessions")
    );
    assert_eq!(title_of(&daemon, "G-1").as_deref(), Some("Pool exhausted"));

    // A file that does not parse is never written to; the call says why.
    let out = daemon.memctl(&["add", "lesson", "--text", "anything", "--personal"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("lessons.yaml:1:"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&broken_path).unwrap(), broken);

    // Missing and unknown fields are refused before anything is touched.
    let out = daemon.memctl(&["add", "gotcha", "--title", "t", "--personal"]);
    assert!(stderr(&out).contains("needs `fix`"), "{}", stderr(&out));
    let out = daemon.memctl(&["add", "observation", "--text", "t", "--personal"]);
    assert!(stderr(&out).contains("cannot be added"), "{}", stderr(&out));
    // No temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(sandbox.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("memd-tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `memctl add lesson` from `dir`, which must fail.
fn refused_lesson_from(daemon: &Daemon, dir: &std::path::Path) -> std::process::Output {
    let cwd = dir.display().to_string();
    let out = daemon.memctl(&["add", "lesson", "--text", "t", "--cwd", &cwd]);
    assert!(!out.status.success(), "{}", stdout(&out));
    out
}

#[test]
fn outside_a_repository_the_project_scope_is_refused() {
    let sandbox = Sandbox::new();
    let daemon = Daemon::start(&sandbox);
    let nowhere = sandbox.dir.path().join("plain");
    std::fs::create_dir_all(&nowhere).unwrap();
    let out = refused_lesson_from(&daemon, &nowhere);
    assert!(
        stderr(&out).contains("not inside a repository"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_linked_project_directory_is_not_written_through() {
    let sandbox = Sandbox::new();
    let repo = repo(&sandbox);
    let elsewhere = sandbox.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.join(".memd")).unwrap();
    let daemon = Daemon::start(&sandbox);
    let out = refused_lesson_from(&daemon, &repo);
    assert!(stderr(&out).contains("a symbolic link"), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// The text of lesson `id` as the daemon serves it, if any.
fn text_of(daemon: &Daemon, id: &str) -> Option<String> {
    let item = daemon.json(&["get", id])["ok"]["item"].clone();
    item["fields"]
        .as_array()?
        .iter()
        .find(|f| f[0] == "text")
        .map(|f| f[1].as_str().unwrap_or_default().to_string())
}

/// Adds a personal lesson; the answer's id, or the error.
fn add_personal(daemon: &Daemon, text: &str) -> Result<String, String> {
    add_lesson(daemon, text, &["--personal"])
}

#[test]
fn files_as_editors_leave_them_are_appended_to_as_they_are() {
    for (name, existing) in [
        ("bom", "\u{feff}lessons:\n  - id: L-1\n    text: old\n"),
        ("cr", "lessons:\r  - id: L-1\r    text: old\r"),
        ("crlf", "lessons:\r\n  - id: L-1\r\n    text: old\r\n"),
    ] {
        let sandbox = Sandbox::new();
        let path = sandbox.write("lessons.yaml", existing);
        let daemon = Daemon::start(&sandbox);
        let id = add_personal(&daemon, &format!("new lesson for {name}"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(after.starts_with(existing), "{name}: {after:?}");
        let eol = if name == "cr" {
            "\r"
        } else if name == "crlf" {
            "\r\n"
        } else {
            "\n"
        };
        let added = &after[existing.len()..];
        assert!(added.ends_with(eol), "{name}: {added:?}");
        assert_eq!(
            added.matches(['\r', '\n']).count(),
            added.matches(eol).count() * eol.len(),
            "{name}: the item's lines end as the file's: {added:?}"
        );
        assert_eq!(text_of(&daemon, "L-1").as_deref(), Some("old"), "{name}");
        assert_eq!(
            text_of(&daemon, &id).as_deref(),
            Some(format!("new lesson for {name}").as_str()),
            "{name}"
        );
    }
}

/// Adding a lesson is refused, the error says `why`, and the file at
/// `path` is still `existing`, byte for byte.
fn assert_add_refused(daemon: &Daemon, path: &std::path::Path, existing: &str, why: &str) {
    let err = add_personal(daemon, "a new lesson").unwrap_err();
    assert!(err.contains(why), "{err}");
    assert_eq!(std::fs::read_to_string(path).unwrap(), existing);
}

#[test]
fn an_item_at_the_end_without_a_final_newline_keeps_its_value() {
    let sandbox = Sandbox::new();
    // A kept block scalar (`|+`) whose last line holds only spaces, and no
    // final newline: a newline after it would add a line to its value.
    let existing = "lessons:\n  - id: L-1\n    text: |+\n      keep exactly this\n      ";
    let path = sandbox.write("lessons.yaml", existing);
    let daemon = Daemon::start(&sandbox);
    let before = daemon.json(&["get", "L-1"])["ok"]["item"].clone();
    assert_add_refused(&daemon, &path, existing, "cannot be appended");
    assert_eq!(daemon.json(&["get", "L-1"])["ok"]["item"], before);
}

#[test]
fn text_with_any_control_or_noncharacter_is_added_as_it_is() {
    let sandbox = Sandbox::new();
    let daemon = Daemon::start(&sandbox);
    let odd = "del \u{7f} c1 \u{85}\u{9b} nonchar \u{ffff} bom \u{feff} bell \u{7} end";
    let id = add_personal(&daemon, odd).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text_of(&daemon, &id).as_deref(), Some(odd));
    let text = std::fs::read_to_string(sandbox.root().join("lessons.yaml")).unwrap();
    assert!(
        !text.contains(['\u{7f}', '\u{85}', '\u{9b}', '\u{ffff}', '\u{feff}', '\u{7}']),
        "{text:?}"
    );
}

#[test]
fn a_read_only_knowledge_file_is_respected_and_said() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    let existing = "lessons:\n  - id: L-1\n    text: old\n";
    let path = sandbox.write("lessons.yaml", existing);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let daemon = Daemon::start(&sandbox);
    assert_add_refused(&daemon, &path, existing, "read-only");
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o444
    );
}

#[test]
fn a_credential_in_what_is_added_is_refused_before_anything_is_written() {
    let sandbox = Sandbox::new();
    let repo = repo(&sandbox);
    let cwd = repo.display().to_string();
    let daemon = Daemon::start(&sandbox);
    let file = repo.join(".memd").join("gotchas.yaml");
    for (field, value, what) in [
        (
            "--fix",
            "export GITHUB_TOKEN=ghp_R9k2LmQ8vX4tY7wZ1aB3cD5eF6gH8iJ0kL2m first",
            "a GitHub token",
        ),
        (
            "--title",
            "DATABASE_URL=postgres://app:s3cretPass@db.internal/app fails on deploy",
            "a password in a URL",
        ),
    ] {
        let mut args = vec![
            "add",
            "gotcha",
            "--title",
            "Deploy fails",
            "--fix",
            "Retry",
            "--cwd",
            &cwd,
        ];
        let at = args.iter().position(|a| *a == field).unwrap();
        args[at + 1] = value;
        let out = daemon.memctl(&args);
        assert!(!out.status.success(), "{}", stdout(&out));
        let said = stderr(&out);
        assert!(
            said.contains(&format!("looks like it holds {what}")),
            "{said}"
        );
        assert!(
            !said.contains("s3cretPass") && !said.contains("ghp_R9k2"),
            "{said}"
        );
        assert!(!file.exists(), "nothing is written");
    }
    // The same gotcha naming where the credential is kept is written.
    let ok = daemon.memctl(&[
        "add",
        "gotcha",
        "--title",
        "Deploy fails without the token",
        "--fix",
        "export GITHUB_TOKEN from the team's vault first",
        "--cwd",
        &cwd,
    ]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(file.exists());
}
