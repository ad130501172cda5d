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
    let added = daemon.json(&[
        "add",
        "lesson",
        "--text",
        "Run the payment webhooks' tests against the sandbox account, never live keys.",
        "--tags",
        "stripe,ci",
        "--cwd",
        &cwd,
    ])["ok"]["added"]
        .clone();
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
    // The same text again gets its own id.
    let again = daemon.json(&[
        "add",
        "lesson",
        "--text",
        "Run the payment webhooks' tests against the sandbox account, never live keys.",
        "--cwd",
        &cwd,
    ])["ok"]["added"]
        .clone();
    assert_eq!(again["id"], format!("{id}-2").as_str());
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
