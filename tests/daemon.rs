//! The real daemon, driven by the real `memctl` and by raw sockets: saves of
//! every style, broken files, bad frames, silent clients, locking, restarts.

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use common::{
    eventually, gotcha, inner, json_frame, read_json_frame, read_raw_frame, stderr, stdout,
    title_of, Daemon, Sandbox,
};
use serde_json::Value;

fn wait_title(daemon: &Daemon, id: &str, want: Option<&str>) {
    eventually(&format!("{id} has title {want:?}"), || {
        title_of(daemon, id).as_deref() == want
    });
}

#[test]
fn every_save_style_becomes_visible() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("g.yaml", gotcha("G-1", "first"));
    let daemon = Daemon::start(&sandbox);
    wait_title(&daemon, "G-1", Some("first"));

    // In-place write.
    std::fs::write(&file, gotcha("G-1", "in place")).unwrap();
    wait_title(&daemon, "G-1", Some("in place"));

    // Write to a temporary name, then rename over.
    let tmp = sandbox.root().join(".g.yaml.tmp");
    std::fs::write(&tmp, gotcha("G-1", "renamed over")).unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    wait_title(&daemon, "G-1", Some("renamed over"));

    // vim's default: a probe file, the original renamed to a backup, a new
    // file written, the backup removed.
    std::fs::write(sandbox.root().join("4913"), "").unwrap();
    std::fs::remove_file(sandbox.root().join("4913")).unwrap();
    let backup = sandbox.root().join("g.yaml~");
    std::fs::rename(&file, &backup).unwrap();
    std::fs::write(&file, gotcha("G-1", "vim saved")).unwrap();
    std::fs::remove_file(&backup).unwrap();
    wait_title(&daemon, "G-1", Some("vim saved"));

    // sed -i (its own temporary file and rename).
    let sed = std::process::Command::new("sed")
        .args(["-i", "s/vim saved/sed edited/"])
        .arg(&file)
        .status()
        .unwrap();
    assert!(sed.success());
    wait_title(&daemon, "G-1", Some("sed edited"));

    // Delete.
    std::fs::remove_file(&file).unwrap();
    wait_title(&daemon, "G-1", None);

    // A directory moved in from outside the root.
    let outside = sandbox.dir.path().join("outside");
    std::fs::create_dir_all(outside.join("nested")).unwrap();
    std::fs::write(outside.join("nested/more.yaml"), gotcha("G-2", "moved in")).unwrap();
    std::fs::rename(&outside, sandbox.root().join("team")).unwrap();
    wait_title(&daemon, "G-2", Some("moved in"));

    // The root deleted, then recreated.
    std::fs::remove_dir_all(sandbox.root()).unwrap();
    wait_title(&daemon, "G-2", None);
    sandbox.write("back.yaml", gotcha("G-3", "recreated"));
    wait_title(&daemon, "G-3", Some("recreated"));
    let status = daemon.json(&["status"]);
    assert_eq!(status["ok"]["status"]["errors"], Value::Array(vec![]));
}

#[test]
fn a_broken_file_keeps_its_last_good_items_and_status_locates_the_error() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("g.yaml", gotcha("G-1", "good"));
    let daemon = Daemon::start(&sandbox);
    wait_title(&daemon, "G-1", Some("good"));
    std::fs::write(
        &file,
        "gotchas:\n  - id: G-1\n    title: [unclosed\n    fix: x\n",
    )
    .unwrap();
    eventually("status reports the broken file", || {
        let status = daemon.json(&["status"]);
        status["ok"]["status"]["errors"]
            .as_array()
            .is_some_and(|e| {
                e.iter()
                    .any(|e| e.as_str().is_some_and(|s| s.contains("g.yaml:4:")))
            })
    });
    assert_eq!(title_of(&daemon, "G-1").as_deref(), Some("good"));
    let text = stdout(&daemon.memctl(&["status"]));
    assert!(text.contains("g.yaml:4:"), "{text}");
    std::fs::write(&file, gotcha("G-1", "fixed")).unwrap();
    wait_title(&daemon, "G-1", Some("fixed"));
}

/// Sends raw bytes and reads one frame back: (encoding byte, body).
fn raw_exchange(socket: &std::path::Path, bytes: &[u8]) -> (u8, Vec<u8>) {
    let mut stream = UnixStream::connect(socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(bytes).unwrap();
    read_raw_frame(&mut stream)
}

fn error_kind(encoding: u8, body: &[u8]) -> String {
    assert_eq!(encoding, 2, "errors about unreadable frames come as JSON");
    let v: Value = serde_json::from_slice(body).unwrap();
    v["outcome"]["error"]["kind"].as_str().unwrap().to_string()
}

#[test]
fn bad_frames_get_typed_errors_and_others_keep_being_served() {
    let sandbox = Sandbox::new();
    sandbox.write("g.yaml", gotcha("G-1", "good"));
    let daemon = Daemon::start(&sandbox);
    // A second client, connected throughout.
    let mut other = UnixStream::connect(&daemon.socket).unwrap();
    other
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut ping_other = || {
        other
            .write_all(&json_frame(r#"{"version": 1, "request": "ping"}"#))
            .unwrap();
        let v = read_json_frame(&mut other);
        assert!(v["outcome"]["ok"]["pong"].is_object(), "{v}");
    };
    ping_other();

    // Garbage: an unknown encoding byte.
    let (enc, body) = raw_exchange(&daemon.socket, &[0, 0, 0, 3, 9, 9, 9]);
    assert_eq!(error_kind(enc, &body), "bad_request");
    ping_other();

    // An oversized length, refused before anything is read or allocated.
    let (enc, body) = raw_exchange(&daemon.socket, &u32::MAX.to_be_bytes());
    assert_eq!(error_kind(enc, &body), "too_large");
    ping_other();

    // A wrong protocol version: the message names both.
    let (enc, body) = raw_exchange(
        &daemon.socket,
        &json_frame(r#"{"version": 99, "request": "ping"}"#),
    );
    assert_eq!(error_kind(enc, &body), "unsupported_version");
    let message: Value = serde_json::from_slice(&body).unwrap();
    let message = message["outcome"]["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("99") && message.contains("version 1"),
        "{message}"
    );
    ping_other();

    // Undecodable JSON in a well-formed frame: a typed error, and the same
    // connection still works afterwards.
    let mut stream = UnixStream::connect(&daemon.socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    for (request, want) in [
        (r#"{"version": 1, "request": {"nonsense": 1}}"#, "error"),
        (
            r#"{"version": 1, "request": {"get": {"id": "G-1", "query": {}}}}"#,
            "ok",
        ),
    ] {
        stream.write_all(&json_frame(request)).unwrap();
        let (encoding, body) = read_raw_frame(&mut stream);
        assert_eq!(encoding, 2, "answered in the request's encoding");
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert!(v["outcome"][want].is_object(), "{request} -> {v}");
    }

    // A JSON query gets a JSON answer with the block.
    let (enc, body) = raw_exchange(
        &daemon.socket,
        &json_frame(
            r#"{"version": 1, "request": {"query": {"task": "fix the db", "kinds": ["gotcha"]}}}"#,
        ),
    );
    assert_eq!(enc, 2);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        v["outcome"]["ok"]["answer"]["block"]
            .as_str()
            .unwrap()
            .contains("good"),
        "{v}"
    );
    ping_other();
}

#[test]
fn a_silent_client_does_not_delay_others() {
    let sandbox = Sandbox::new();
    let daemon = Daemon::start(&sandbox);
    // One client says nothing; another sends half a frame and stops.
    let _silent = UnixStream::connect(&daemon.socket).unwrap();
    let mut half = UnixStream::connect(&daemon.socket).unwrap();
    half.write_all(&[0, 0, 0, 50, 2, b'{']).unwrap();
    for _ in 0..20 {
        let out = daemon.memctl(&["ping"]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

#[test]
fn one_daemon_per_socket_and_a_stale_socket_is_recovered() {
    let sandbox = Sandbox::new();
    // A stale socket file, as a crashed daemon leaves it.
    let run = sandbox.dir.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    drop(std::os::unix::net::UnixListener::bind(run.join("memd.sock")).unwrap());
    assert!(run.join("memd.sock").exists());
    let daemon = Daemon::start(&sandbox);
    // A second daemon on the same socket is refused, clearly.
    let mut second = Daemon::spawn(&sandbox, &[]);
    let status = second.child.wait().unwrap();
    assert!(!status.success());
    let log = std::fs::read_to_string(sandbox.dir.path().join("memd.log")).unwrap();
    assert!(log.contains("another memd is already running"), "{log}");
    assert!(daemon.memctl(&["ping"]).status.success());
    // The socket, the data directory and the database are private.
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&daemon.socket), 0o600);
    assert_eq!(mode(&daemon.data_dir), 0o700);
    assert_eq!(mode(&daemon.data_dir.join("memd.redb")), 0o600);
}

#[test]
fn sigterm_removes_the_socket() {
    let sandbox = Sandbox::new();
    let mut daemon = Daemon::start(&sandbox);
    let status = daemon.stop();
    assert!(status.success(), "{status:?}");
    assert!(!daemon.socket.exists());
}

#[test]
fn a_restart_serves_the_same_answers_without_reparsing() {
    let sandbox = Sandbox::new();
    sandbox.write("g.yaml", gotcha("G-1", "kept"));
    sandbox.write("more/h.yaml", gotcha("G-2", "also kept"));
    let query = [
        "query",
        "--task",
        "fix the db",
        "--now",
        "2026-11-22T12:00:00Z",
    ];
    let (first, files) = {
        let mut daemon = Daemon::start(&sandbox);
        let answer = daemon.json(&query);
        let status = daemon.json(&["status"]);
        assert_eq!(status["ok"]["status"]["startup"]["parsed"], 2);
        daemon.stop();
        (answer, status["ok"]["status"]["files"].clone())
    };
    // One file changes while the daemon is down.
    sandbox.write("more/h.yaml", gotcha("G-2", "changed offline"));
    let daemon = Daemon::start(&sandbox);
    let status = daemon.json(&["status"]);
    assert_eq!(
        status["ok"]["status"]["startup"]["from_store"], 1,
        "{status}"
    );
    assert_eq!(status["ok"]["status"]["startup"]["parsed"], 1, "{status}");
    assert_eq!(status["ok"]["status"]["files"], files);
    assert_eq!(title_of(&daemon, "G-2").as_deref(), Some("changed offline"));
    let again = daemon.json(&query);
    assert_eq!(
        again["ok"]["answer"]["items"][0],
        first["ok"]["answer"]["items"][0]
    );
}

#[test]
fn a_corrupt_database_is_rebuilt_from_the_files() {
    let sandbox = Sandbox::new();
    sandbox.write("g.yaml", gotcha("G-1", "survives"));
    std::fs::create_dir_all(sandbox.dir.path().join("data")).unwrap();
    std::fs::write(sandbox.dir.path().join("data/memd.redb"), b"not a database").unwrap();
    let daemon = Daemon::start(&sandbox);
    assert_eq!(title_of(&daemon, "G-1").as_deref(), Some("survives"));
    let log = std::fs::read_to_string(sandbox.dir.path().join("memd.log")).unwrap();
    assert!(
        log.contains("the database was rebuilt from the knowledge files"),
        "{log}"
    );
}

#[test]
fn a_session_is_not_shown_the_same_item_twice() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "g.yaml",
        format!(
            "{}{}",
            gotcha("G-1", "one"),
            "  - {id: G-2, title: two, fix: f, category: db}\n"
        ),
    );
    let daemon = Daemon::start(&sandbox);
    let ids = |v: &Value| -> Vec<String> {
        v["ok"]["answer"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap().to_string())
            .collect()
    };
    let q = ["query", "--task", "fix the db", "--session", "s-1"];
    assert_eq!(ids(&daemon.json(&q)), ["G-1", "G-2"]);
    assert!(ids(&daemon.json(&q)).is_empty());
    // Another session still sees them.
    let other = ["query", "--task", "fix the db", "--session", "s-2"];
    assert_eq!(ids(&daemon.json(&other)), ["G-1", "G-2"]);
    assert_eq!(daemon.json(&["status"])["ok"]["status"]["sessions"], 2);
}

/// A repository at `src/app` in the sandbox, its `.memd/local.yaml`
/// holding `knowledge`.
fn repo_with_knowledge(sandbox: &Sandbox, knowledge: &str) -> std::path::PathBuf {
    let repo = sandbox.dir.path().join("src/app");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join(".memd")).unwrap();
    std::fs::write(repo.join(".memd/local.yaml"), knowledge).unwrap();
    repo
}

#[test]
fn project_knowledge_stays_in_its_project() {
    let sandbox = Sandbox::new();
    let repo = repo_with_knowledge(&sandbox, &gotcha("APP-1", "app only"));
    let elsewhere = sandbox.dir.path().join("src/other");
    std::fs::create_dir_all(elsewhere.join(".git")).unwrap();
    let daemon = Daemon::start(&sandbox);
    let inside = repo.join("sub/dir");
    std::fs::create_dir_all(&inside).unwrap();
    let q = |cwd: &std::path::Path| {
        let v = daemon.json(&[
            "query",
            "--task",
            "fix the db",
            "--cwd",
            cwd.to_str().unwrap(),
        ]);
        v["ok"]["answer"]["block"].as_str().unwrap().to_string()
    };
    assert!(q(&inside).contains("app only"));
    assert!(!q(&elsewhere).contains("app only"));
    // Registered for good: edits are watched and it survives a restart.
    std::fs::write(repo.join(".memd/local.yaml"), gotcha("APP-1", "app edited")).unwrap();
    eventually("the project edit is visible", || {
        q(&inside).contains("app edited")
    });
    let status = daemon.json(&["status"]);
    let roots = status["ok"]["status"]["roots"].as_array().unwrap();
    assert!(roots
        .iter()
        .any(|r| r["scope"] == repo.to_str().unwrap()
            && r["path"].as_str().unwrap().ends_with(".memd")));
    drop(daemon);
    let daemon = Daemon::start(&sandbox);
    let v = daemon.json(&["get", "APP-1", "--cwd", repo.to_str().unwrap()]);
    assert_eq!(v["ok"]["item"]["id"], "APP-1");
    let out = daemon.memctl(&["get", "APP-1", "--cwd", elsewhere.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("NotFound"), "{}", stderr(&out));
}

#[test]
fn a_global_item_hides_a_projects_item_with_its_id_while_it_lasts() {
    let sandbox = Sandbox::new();
    let repo = repo_with_knowledge(&sandbox, &gotcha("APP-1", "app's own"));
    let daemon = Daemon::start(&sandbox);
    // The titles of the items the project's queries see for the db.
    let seen = || -> Vec<String> {
        let v = daemon.json(&["search", "fix the db", "--cwd", repo.to_str().unwrap()]);
        v["ok"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["title"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(seen(), ["app's own"]);
    // A global file claims the id: the project sees the global item only.
    let global = sandbox.write("shared.yaml", gotcha("APP-1", "the global one"));
    eventually("the global item hides the project's", || {
        seen() == ["the global one"]
    });
    // The project's file changes meanwhile (a save is visible within
    // 150 ms): still hidden.
    std::fs::write(
        repo.join(".memd/local.yaml"),
        gotcha("APP-1", "app's, edited"),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(seen(), ["the global one"]);
    // The global file goes: the project's own item is back, as edited.
    std::fs::remove_file(global).unwrap();
    eventually("the project's item is back", || seen() == ["app's, edited"]);
}

#[test]
fn polling_takes_over_when_native_watching_is_unavailable() {
    let sandbox = Sandbox::new();
    let file = sandbox.write("g.yaml", gotcha("G-1", "polled"));
    let daemon = Daemon::start_with(&sandbox, &[("MEMD_FORCE_POLL", "1")]);
    let status = daemon.json(&["status"]);
    assert_eq!(
        status["ok"]["status"]["roots"][0]["watch"], "polling",
        "{status}"
    );
    std::fs::write(&file, gotcha("G-1", "polled again, longer")).unwrap();
    wait_title(&daemon, "G-1", Some("polled again, longer"));
}

#[test]
fn memctl_commands_answer_as_text_and_json() {
    let sandbox = Sandbox::new();
    sandbox.write("g.yaml", gotcha("G-1", "Postgres unique violations"));
    let daemon = Daemon::start(&sandbox);
    let text = stdout(&daemon.memctl(&["status"]));
    for needle in [
        "memd 0.1.0",
        "socket:",
        "data dir:",
        "roots:",
        "inotify",
        "items:    1 (gotcha 1)",
        "queries:",
    ] {
        assert!(text.contains(needle), "`{needle}` in\n{text}");
    }
    let search = stdout(&daemon.memctl(&["search", "postgres", "violations"]));
    assert!(search.contains("G-1"), "{search}");
    let explain = stdout(&daemon.memctl(&[
        "explain",
        "G-1",
        "--task",
        "add a column",
        "--agent",
        "designer",
    ]));
    assert!(explain.contains("G-1 (gotcha): not shown"), "{explain}");
    let reload = daemon.json(&["reload"]);
    assert!(reload["ok"]["reloaded"]["millis"].is_number());
    let missing = daemon.memctl(&["get", "NOPE"]);
    assert_eq!(missing.status.code(), Some(1));
    let block = stdout(&daemon.memctl(&["query", "--task", "fix the db unique violation"]));
    assert!(
        inner(&block).starts_with("## Gotchas\n- \"Postgres unique violations\""),
        "{block}"
    );
    let latency = daemon.json(&["status"]);
    assert!(
        latency["ok"]["status"]["query_latency"]["count"]
            .as_u64()
            .unwrap()
            >= 1
    );
}

#[test]
fn connections_over_the_cap_are_told_so() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.config(),
        "roots = []\n[daemon]\nmax_connections = 2\n",
    )
    .unwrap();
    let daemon = Daemon::start(&sandbox);
    // Accepted in order: the first two hold both places, and the third is
    // told so. The connection `Daemon::start` checked readiness with may
    // still hold a place for a moment when the machine is loaded; then a
    // place frees while the three connect, and the third is served (and,
    // sent nothing, closed): connect the three again.
    let mut refused = None;
    for _ in 0..50 {
        let a = UnixStream::connect(&daemon.socket).unwrap();
        let b = UnixStream::connect(&daemon.socket).unwrap();
        let mut c = UnixStream::connect(&daemon.socket).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut header = [0u8; 4];
        if c.read_exact(&mut header).is_ok() {
            let mut payload = vec![0u8; u32::from_be_bytes(header) as usize];
            c.read_exact(&mut payload).unwrap();
            let v: Value = serde_json::from_slice(&payload[1..]).unwrap();
            refused = Some((a, b, v));
            break;
        }
        drop((a, b));
        std::thread::sleep(Duration::from_millis(100));
    }
    let (_a, _b, v) = refused.expect("the third connection was never refused");
    assert_eq!(v["outcome"]["error"]["kind"], "busy", "{v}");
    let message = v["outcome"]["error"]["message"].as_str().unwrap();
    assert!(message.contains("maximum of 2 connections"), "{message}");
    drop(_a);
    eventually("a freed place serves again", || {
        daemon.memctl(&["ping"]).status.success()
    });
}

#[test]
fn a_socket_path_too_long_for_the_platform_is_a_clear_error() {
    let sandbox = Sandbox::new();
    let long = sandbox.dir.path().join("x".repeat(120)).join("memd.sock");
    let out = common::memd()
        .args(["serve", "--config", &sandbox.config(), "--socket"])
        .arg(&long)
        .arg("--data-dir")
        .arg(sandbox.dir.path().join("data"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("Unix sockets allow at most 103"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn query_and_explain_in_a_repository_see_what_its_hooks_see() {
    let sandbox = Sandbox::new();
    sandbox.write(
        "lessons.yaml",
        "lessons:\n  - id: L-1\n    text: Restart the tokio runtime tests one at a time\n",
    );
    let repo = sandbox.dir.path().join("search-engine");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"search-engine\"\n\n[dependencies]\ntokio = \"1\"\n",
    )
    .unwrap();
    let daemon = Daemon::start(&sandbox);
    let cwd = repo.join("src").display().to_string();
    let explain = |extra: &[&str]| {
        let mut args = vec![
            "explain",
            "L-1",
            "--task",
            "tokio runtime tests",
            "--cwd",
            &cwd,
        ];
        args.extend_from_slice(extra);
        stdout(&daemon.memctl(&args))
    };
    let explained = explain(&[]);
    for tag in ["rust x", "tokio x", "search-engine x"] {
        assert!(explained.contains(tag), "{tag} missing: {explained}");
    }
    // Tags given on the command line are the query's, as given.
    let explain = explain(&["--tags", "python"]);
    assert!(
        explain.contains("[python x") && !explain.contains("tokio x"),
        "{explain}"
    );
}
