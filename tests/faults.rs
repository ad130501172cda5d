//! Faults and abuse, against the real daemon: another user on the socket
//! path or on the other end, clients that stall, special and hostile files,
//! huge tasks, a corrupt or full store. Each test here failed before the
//! fix it covers.

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{
    eventually, gotcha, json_frame, memctl_path, read_json_frame, serve_args, spawn_prompt_hook,
    stderr, stdout, title_of, Daemon, Rng, Sandbox,
};
use serde_json::Value;

/// The uid the tests act as when they play another user.
const OTHER_UID: u32 = 65534;

/// A command run as [`OTHER_UID`], or `None` (and the test says it is
/// skipped) when this process cannot switch users: that needs root and
/// `setpriv`. CI runs as root.
fn as_other_user(program: &Path) -> Option<Command> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| stdout(&o).trim() == "0");
    let setpriv = Path::new("/usr/bin/setpriv");
    if !root || !setpriv.exists() {
        eprintln!("skipped: needs root and setpriv to act as another user");
        return None;
    }
    let mut cmd = Command::new(setpriv);
    cmd.arg(format!("--reuid={OTHER_UID}"))
        .arg(format!("--regid={OTHER_UID}"))
        .arg("--clear-groups")
        .arg(program);
    Some(cmd)
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `memd serve` on `socket` with the sandbox's config, data dir and root.
fn serve_on(sandbox: &Sandbox, socket: &Path) -> std::process::Output {
    serve_args(
        &mut common::memd(),
        sandbox,
        &sandbox.dir.path().join("data"),
        socket,
    )
    .output()
    .unwrap()
}

#[test]
fn a_socket_directory_another_user_could_use_is_refused() {
    let sandbox = Sandbox::new();
    let dir = sandbox.dir.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o777);
    let out = serve_on(&sandbox, &dir.join("memd.sock"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("group or others have access to it (mode 0777)")
            && err.contains(&format!("chmod 700 {}", dir.display())),
        "{err}"
    );
    assert!(!dir.join("memd.sock").exists());
    // Group access alone is refused too.
    chmod(&dir, 0o750);
    let out = serve_on(&sandbox, &dir.join("memd.sock"));
    assert!(stderr(&out).contains("mode 0750"), "{}", stderr(&out));

    // A private directory made by another user (the shared /tmp case).
    if as_other_user(Path::new("true")).is_some() {
        chmod(&dir, 0o700);
        chown(&dir, OTHER_UID);
        let out = serve_on(&sandbox, &dir.join("memd.sock"));
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains(&format!("owned by uid {OTHER_UID}, not by you")),
            "{}",
            stderr(&out)
        );
    }
}

/// Another user's daemon on the socket path: memctl and the hook send it
/// nothing and say who answered.
#[test]
fn memctl_and_the_hook_refuse_a_daemon_run_by_another_user() {
    let Some(mut other) = as_other_user(Path::new(env!("CARGO_BIN_EXE_memd"))) else {
        return;
    };
    let sandbox = Sandbox::new();
    chmod(sandbox.dir.path(), 0o755);
    let run = sandbox.dir.path().join("run");
    let data = sandbox.dir.path().join("data");
    for dir in [&run, &data] {
        std::fs::create_dir(dir).unwrap();
        chmod(dir, 0o700);
        chown(dir, OTHER_UID);
    }
    let socket = run.join("memd.sock");
    let mut child = serve_args(&mut other, &sandbox, &data, &socket)
        .env("HOME", &data)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _other = KillOnDrop(&mut child);
    // As root we can reach the socket whatever its mode.
    eventually("the other user's daemon listens", || {
        UnixStream::connect(&socket).is_ok()
    });
    let out = Command::new(memctl_path())
        .args(["ping", "--socket"])
        .arg(&socket)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&format!("served by uid {OTHER_UID}, not by you (uid 0)")),
        "{}",
        stderr(&out)
    );
    let mut hook = spawn_prompt_hook(&socket, &sandbox.dir.path().join("hook-state"));
    hook.stdin
        .take()
        .unwrap()
        .write_all(br#"{"session_id": "s", "prompt": "how do we fix the flaky database tests"}"#)
        .unwrap();
    let out = hook.wait_with_output().unwrap();
    assert!(out.status.success(), "a hook never breaks the agent");
    assert_eq!(stdout(&out), "", "nothing reaches the agent");
    assert!(stderr(&out).contains("served by uid"), "{}", stderr(&out));
}

/// Peer credentials: with the socket opened up to everyone, another user's
/// connection is refused with a message it can print.
#[test]
fn another_users_connection_is_refused_with_a_reason() {
    let Some(mut other) = as_other_user(Path::new("/usr/bin/python3")) else {
        return;
    };
    let sandbox = Sandbox::new();
    let daemon = Daemon::start(&sandbox);
    daemon.memctl(&["ping"]);
    // The daemon checked its directory at start; open it up afterwards.
    for dir in [sandbox.dir.path(), daemon.socket.parent().unwrap()] {
        chmod(dir, 0o755);
    }
    chmod(&daemon.socket, 0o666);
    let read_one_frame = "import socket, sys\n\
        s = socket.socket(socket.AF_UNIX)\n\
        s.connect(sys.argv[1])\n\
        data = b''\n\
        while True:\n\
        \x20   chunk = s.recv(65536)\n\
        \x20   if not chunk: break\n\
        \x20   data += chunk\n\
        print(data[5:].decode())\n";
    let out = other
        .arg("-c")
        .arg(read_one_frame)
        .arg(&daemon.socket)
        .output()
        .unwrap();
    let v: Value = serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&out), stderr(&out)));
    assert_eq!(v["outcome"]["error"]["kind"], "forbidden", "{v}");
    let message = v["outcome"]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("serves uid 0 only; you are uid 65534"),
        "{message}"
    );
    eventually("the daemon logs the refusal", || {
        std::fs::read_to_string(sandbox.dir.path().join("memd.log"))
            .unwrap_or_default()
            .contains("refused a connection from uid 65534")
    });
    assert!(daemon.memctl(&["ping"]).status.success());
}

/// Clients that send requests and never read the answers hold every
/// ordinary place: each is closed once its answer has waited past the
/// write timeout, and others are served meanwhile.
#[test]
fn clients_that_never_read_do_not_lock_others_out() {
    let sandbox = Sandbox::new();
    for i in 0..40 {
        sandbox.write(
            &format!("g{i}.yaml"),
            format!(
                "gotchas:\n  - id: G-{i}\n    title: database gotcha {i}\n    category: db\n    fix: {}\n",
                "the database connection pool runs dry under load ".repeat(20)
            ),
        );
    }
    std::fs::write(
        sandbox.config(),
        "roots = []\n[daemon]\nmax_connections = 4\nwrite_timeout_ms = 300\n",
    )
    .unwrap();
    let daemon = Daemon::start(&sandbox);
    let request = json_frame(
        r#"{"version": 1, "request": {"search": {"text": "database pool", "limit": 40, "query": {}}}}"#,
    );
    let mut stalled = Vec::new();
    for _ in 0..4 {
        let stream = UnixStream::connect(&daemon.socket).unwrap();
        stream
            .set_write_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let writer = stream.try_clone().unwrap();
        let request = request.clone();
        // Writes until the daemon stops reading (its answers back up) or
        // closes the connection.
        std::thread::spawn(move || {
            let mut writer = writer;
            while writer.write_all(&request).is_ok() {}
        });
        stalled.push(stream);
    }
    std::thread::sleep(Duration::from_millis(200));
    eventually("a hook gets through", || {
        daemon.memctl(&["ping"]).status.success()
    });
    // Each stalled client was closed: after its buffered answers, EOF.
    for mut stream in stalled {
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut sink = Vec::new();
        let read = stream.read_to_end(&mut sink);
        assert!(
            read.is_ok()
                || matches!(read, Err(ref e) if e.kind() == std::io::ErrorKind::ConnectionReset),
            "{read:?}"
        );
    }
}

/// Silent clients take every place, the reserve included: the one in the
/// reserve is closed within a second, so a fresh connection is soon served
/// although the ordinary places stay held for a minute; past the reserve,
/// `busy`.
#[test]
fn a_fresh_connection_is_served_from_the_reserve() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.config(),
        "roots = []\n[daemon]\nmax_connections = 8\nread_timeout_ms = 60000\n",
    )
    .unwrap();
    let daemon = Daemon::start(&sandbox);
    let mut silent = Vec::new();
    for _ in 0..8 {
        silent.push(UnixStream::connect(&daemon.socket).unwrap());
    }
    let started = std::time::Instant::now();
    eventually("a fresh connection is served", || {
        daemon.memctl(&["ping"]).status.success()
    });
    assert!(started.elapsed() < Duration::from_secs(5));
    // The reserve taken, the next one is told `busy`. The reserve closes
    // its silent connection within a second, so on a loaded machine the
    // next one may find it free again: then it is served (and closed in
    // turn, unanswered), and the check is made again.
    let mut told = None;
    for _ in 0..5 {
        let held = hold_the_reserve(&daemon.socket);
        let mut next = UnixStream::connect(&daemon.socket).unwrap();
        next.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut header = [0u8; 4];
        if next.read_exact(&mut header).is_ok() {
            told = Some(read_json_frame(&mut header.as_slice().chain(next)));
            break;
        }
        drop(held);
    }
    let v = told.expect("a connection past the reserve was answered");
    assert_eq!(v["outcome"]["error"]["kind"], "busy", "{v}");
    eventually("the reserve serves again", || {
        daemon.memctl(&["ping"]).status.success()
    });
    drop(silent);
}

/// A connection in the reserve: one the daemon neither answers nor closes
/// at once (past the reserve, `busy` is answered at once). The reserve's
/// last user (a `memctl ping`) may hold it a moment after its answer, so a
/// connection told `busy` then is dropped and another made.
fn hold_the_reserve(socket: &Path) -> UnixStream {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut stream = UnixStream::connect(socket).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(150)))
            .unwrap();
        if let Err(e) = stream.read(&mut [0u8; 1]) {
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) {
                return stream;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the reserve was never free"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn status_text(daemon: &Daemon) -> String {
    stdout(&daemon.memctl(&["status"]))
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn special_files_in_a_root_are_reported_never_read() {
    let sandbox = Sandbox::new();
    // One present at start, one made while running, and a symlink to an
    // endless device.
    mkfifo(&sandbox.root().join("at-start.yaml"));
    let mut daemon = Daemon::start(&sandbox);
    mkfifo(&sandbox.root().join("hang.yaml"));
    std::os::unix::fs::symlink("/dev/zero", sandbox.root().join("big.yaml")).unwrap();
    // The indexer is not stuck: a later save is served.
    sandbox.write("g.yaml", gotcha("G-1", "after the fifo"));
    eventually("a save after the FIFO is served", || {
        title_of(&daemon, "G-1").as_deref() == Some("after the fifo")
    });
    eventually("status reports both", || {
        let status = status_text(&daemon);
        status.contains("hang.yaml:1:1: not a regular file (a FIFO)")
            && status.contains("at-start.yaml:1:1: not a regular file (a FIFO)")
    });
    // /dev/zero lies outside the root; allowed out, it is a device.
    assert!(status_text(&daemon).contains("big.yaml:1:1: a symlink to a file outside its root"));
    let out = daemon.memctl(&["query", "fix the database"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let started = std::time::Instant::now();
    let status = daemon.stop();
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(10));

    std::fs::write(
        sandbox.config(),
        "roots = []\n[daemon]\nfollow_symlinks_out_of_roots = true\n",
    )
    .unwrap();
    let daemon = Daemon::start(&sandbox);
    assert!(
        status_text(&daemon).contains("big.yaml:1:1: not a regular file (a character device)"),
        "{}",
        status_text(&daemon)
    );
}

#[test]
fn symlinks_out_of_a_root_are_not_followed_unless_allowed() {
    let sandbox = Sandbox::new();
    let outside = sandbox.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("o.yaml"), gotcha("OUT-1", "from outside")).unwrap();
    std::fs::write(
        outside.join("d.yaml"),
        gotcha("DIR-1", "through a directory link"),
    )
    .unwrap();
    std::fs::write(
        outside.join("secret.yaml"),
        "hunter2_password: x\nsecond_secret_key: y\n",
    )
    .unwrap();
    sandbox.write("in.yaml", gotcha("IN-1", "inside"));
    std::os::unix::fs::symlink(
        sandbox.root().join("in.yaml"),
        sandbox.root().join("alias.yaml"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.join("o.yaml"), sandbox.root().join("o.yaml")).unwrap();
    // A file in the root whose keys are not knowledge: status does not echo them.
    sandbox.write("notes.yaml", "hunter2_password: x\n");
    let mut daemon = Daemon::start(&sandbox);
    assert_eq!(title_of(&daemon, "IN-1").as_deref(), Some("inside"));
    assert_eq!(title_of(&daemon, "OUT-1"), None);
    let status = status_text(&daemon);
    assert!(
        status.contains("o.yaml:1:1: a symlink to a file outside its root"),
        "{status}"
    );
    assert!(!status.contains("hunter2"), "{status}");
    // Made while running: a file symlink out, and a directory symlink.
    std::os::unix::fs::symlink(outside.join("secret.yaml"), sandbox.root().join("s.yaml")).unwrap();
    std::os::unix::fs::symlink(&outside, sandbox.root().join("linked")).unwrap();
    sandbox.write("later.yaml", gotcha("LATER-1", "later"));
    eventually("the later save is served", || {
        title_of(&daemon, "LATER-1").is_some()
    });
    assert_eq!(
        title_of(&daemon, "DIR-1"),
        None,
        "a directory symlink is not walked"
    );
    let status = status_text(&daemon);
    assert!(
        status.contains("s.yaml:1:1: a symlink to a file outside its root"),
        "{status}"
    );
    assert!(!status.contains("hunter2"), "{status}");
    // The same after a restart.
    daemon.stop();
    let mut daemon = Daemon::start(&sandbox);
    assert_eq!(title_of(&daemon, "DIR-1"), None);
    assert_eq!(title_of(&daemon, "OUT-1"), None);
    daemon.stop();
    std::fs::write(
        sandbox.config(),
        "roots = []\n[daemon]\nfollow_symlinks_out_of_roots = true\n",
    )
    .unwrap();
    let daemon = Daemon::start(&sandbox);
    assert_eq!(title_of(&daemon, "OUT-1").as_deref(), Some("from outside"));
    assert_eq!(
        title_of(&daemon, "DIR-1"),
        None,
        "directory links are never walked"
    );
}

/// Sets a file's modification time to `secs` since the epoch, whole: what a
/// file system with one-second timestamps records.
fn set_mtime(path: &Path, secs: u64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(std::time::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Saves of the same size within one timestamp tick: size and time say
/// nothing changed, the content does.
#[test]
fn same_size_saves_within_a_timestamp_tick_are_seen() {
    let sandbox = Sandbox::new();
    let path = sandbox.write("g.yaml", gotcha("G-1", "version-1"));
    let second = now_secs();
    set_mtime(&path, second);
    let mut daemon = Daemon::start(&sandbox);
    assert_eq!(title_of(&daemon, "G-1").as_deref(), Some("version-1"));
    for version in ["version-2", "version-3"] {
        std::fs::write(&path, gotcha("G-1", version)).unwrap();
        set_mtime(&path, second);
        eventually("the save is served", || {
            title_of(&daemon, "G-1").as_deref() == Some(version)
        });
    }
    // Long after, a tool rewrites it keeping size and time (rsync -t,
    // a restore): `memctl reload` compares contents.
    let old = second - 3600;
    set_mtime(&path, old);
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&path, gotcha("G-1", "version-4")).unwrap();
    set_mtime(&path, old);
    std::thread::sleep(Duration::from_millis(300));
    assert!(daemon.memctl(&["reload"]).status.success());
    assert_eq!(title_of(&daemon, "G-1").as_deref(), Some("version-4"));
    // Read in the tick it was saved in; saved again in that tick while the
    // daemon is down; restarted: the stored record must not be trusted.
    let now = now_secs();
    std::fs::write(&path, gotcha("G-1", "version-5")).unwrap();
    set_mtime(&path, now);
    eventually("the save is served", || {
        title_of(&daemon, "G-1").as_deref() == Some("version-5")
    });
    daemon.stop();
    std::fs::write(&path, gotcha("G-1", "version-6")).unwrap();
    set_mtime(&path, now);
    let daemon = Daemon::start(&sandbox);
    assert_eq!(title_of(&daemon, "G-1").as_deref(), Some("version-6"));
}

/// A prompt after a pasted 2 MiB log (tens of thousands of distinct words):
/// answered, with what is asked at the end considered, while another client
/// is served. Before, a 1 MiB task was not answered within a minute.
#[test]
fn a_huge_task_is_answered_by_its_start_and_end() {
    let sandbox = Sandbox::new();
    sandbox.write("g.yaml", gotcha("G-1", "flaky database pool"));
    sandbox.write(
        "p.yaml",
        "gotchas:\n  - id: G-2\n    title: zebra crossing\n    fix: feed the quokka first\n    category: quokka\n",
    );
    let daemon = Daemon::start(&sandbox);
    let mut task = String::new();
    let mut n = 0u64;
    while task.len() < 2 * 1024 * 1024 {
        n += 1;
        task.push_str(&format!("w{n}q{} ", n * 7919 % 1_000_003));
    }
    task.push_str("why is the quokka marmoset handling broken");
    let body = serde_json::json!({"version": 1, "request": {"query": {"task": task}}}).to_string();
    let mut stream = UnixStream::connect(&daemon.socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream.write_all(&json_frame(&body)).unwrap();
    assert!(daemon.memctl(&["ping"]).status.success());
    let v = read_json_frame(&mut stream);
    let block = v["outcome"]["ok"]["answer"]["block"]
        .as_str()
        .unwrap_or_default();
    assert!(block.contains("zebra crossing"), "{v}");
}

/// An idle daemon does nothing: its own reads of a root (directory walks,
/// file reads) are not taken for changes. Before, they woke it ~20 times a
/// second, each time re-watching and re-walking the root.
#[test]
fn an_idle_daemon_is_not_woken_by_its_own_reads() {
    let sandbox = Sandbox::new();
    for i in 0..20 {
        sandbox.write(
            &format!("d{}/g{i}.yaml", i % 4),
            gotcha(&format!("G-{i}"), "idle"),
        );
    }
    let daemon = Daemon::start(&sandbox);
    let log = sandbox.dir.path().join("memd.log");
    let applied = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("applying events on")
            .count()
    };
    // Queries and status read through the daemon, not the files.
    for _ in 0..5 {
        assert!(daemon.memctl(&["status"]).status.success());
        assert!(daemon.memctl(&["reload"]).status.success());
    }
    std::thread::sleep(Duration::from_secs(2));
    let idle = applied();
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(applied(), idle, "woken while idle");
    assert!(idle <= 1, "{idle} wake-ups after a reload");
    sandbox.write("d0/new.yaml", gotcha("NEW-1", "a change"));
    eventually("a change wakes it", || applied() > idle);
}

/// Sends `body` as a JSON frame and reads the answer, on one connection.
fn exchange(stream: &mut UnixStream, body: &str) -> Value {
    stream.write_all(&json_frame(body)).unwrap();
    read_json_frame(stream)
}

/// Under a sustained query load (every query from a new session, each
/// recorded), a save is served promptly and SIGTERM stops the daemon:
/// records are written in batches, apart from file events. Before, each
/// query queued its own commit ahead of file events.
#[test]
fn a_query_load_delays_neither_saves_nor_shutdown() {
    let sandbox = Sandbox::new();
    for i in 0..30 {
        sandbox.write(
            &format!("g{i}.yaml"),
            gotcha(&format!("G-{i}"), "database pool"),
        );
    }
    let mut daemon = Daemon::start(&sandbox);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut load = Vec::new();
    for t in 0..4 {
        let socket = daemon.socket.clone();
        let stop = stop.clone();
        let answered = answered.clone();
        load.push(std::thread::spawn(move || {
            let mut stream = UnixStream::connect(&socket).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(30)))
                .unwrap();
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                n += 1;
                let body = format!(
                    r#"{{"version": 1, "request": {{"query": {{"task": "fix the database pool", "kinds": ["gotcha"], "session_id": "load-{t}-{n}", "tags": ["t{}"]}}}}}}"#,
                    n % 50
                );
                let v = exchange(&mut stream, &body);
                assert!(v["outcome"]["ok"].is_object(), "{v}");
                answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }));
    }
    eventually("the load is under way", || {
        answered.load(std::sync::atomic::Ordering::Relaxed) > 200
    });
    std::thread::sleep(Duration::from_secs(2));
    sandbox.write("saved.yaml", gotcha("SAVED-1", "saved under load"));
    eventually("the save is served under load", || {
        title_of(&daemon, "SAVED-1").is_some()
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for thread in load {
        thread.join().unwrap();
    }
    eprintln!(
        "{} queries answered",
        answered.load(std::sync::atomic::Ordering::Relaxed)
    );
    // SIGTERM: the daemon writes what is queued and exits.
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(daemon.child.id().to_string())
        .status();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while daemon.child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "memd did not stop within 10 s of SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Every session was recorded.
    let daemon = Daemon::start(&sandbox);
    let status = daemon.json(&["status"]);
    assert!(
        status["ok"]["status"]["sessions"].as_u64().unwrap() > 200,
        "{status}"
    );
}

/// A sandbox with `n` gotchas in as many files, something learned, and
/// the daemon's database written and closed.
fn populated(n: usize) -> (Sandbox, std::path::PathBuf) {
    let sandbox = Sandbox::new();
    for i in 0..n {
        sandbox.write(
            &format!("g{i:03}.yaml"),
            gotcha(&format!("G-{i}"), &format!("title {i}")),
        );
    }
    let mut daemon = Daemon::start(&sandbox);
    daemon.json(&["feedback", "G-7", "--relevant", "--tags", "rust"]);
    daemon.stop();
    let db = daemon.data_dir.join("memd.redb");
    (sandbox, db)
}

/// Every gotcha is served with its own title, and nothing else.
fn serves_the_files(daemon: &Daemon, n: usize) {
    for i in 0..n {
        assert_eq!(
            title_of(daemon, &format!("G-{i}")).as_deref(),
            Some(format!("title {i}").as_str())
        );
    }
    let hits = daemon.json(&["search", "title", "--limit", "100"]);
    let hits = hits["ok"]["hits"].as_array().unwrap();
    assert_eq!(hits.len(), n.min(100), "{hits:?}");
}

/// Random corruptions of the database (pages overwritten, bits flipped,
/// the file cut short): memd always starts, serves exactly what the files
/// say, and says what it did. Before, many made it panic at every start or
/// serve garbled ids.
#[test]
fn a_corrupt_database_never_crashes_memd_nor_serves_wrong_items() {
    let (sandbox, db) = populated(40);
    let pristine = std::fs::read(&db).unwrap();
    let mut rng = Rng(0x5eed);
    for round in 0..24 {
        let mut bytes = pristine.clone();
        match round % 3 {
            0 => {
                let page = rng.below(bytes.len() / 4096) * 4096;
                for b in &mut bytes[page..(page + 4096).min(pristine.len())] {
                    *b = rng.next() as u8;
                }
            }
            1 => {
                for _ in 0..8 {
                    let at = rng.below(bytes.len());
                    bytes[at] ^= 1 << rng.below(8);
                }
            }
            _ => bytes.truncate(rng.below(bytes.len())),
        }
        // Earlier rounds' files set aside are cleared away.
        for entry in std::fs::read_dir(db.parent().unwrap()).unwrap() {
            let path = entry.unwrap().path();
            if path.to_string_lossy().contains(".broken-") {
                std::fs::remove_file(path).unwrap();
            }
        }
        std::fs::write(&db, &bytes).unwrap();
        let mut daemon = Daemon::start(&sandbox);
        serves_the_files(&daemon, 40);
        assert!(daemon.stop().success(), "round {round}");
    }
    let log = std::fs::read_to_string(sandbox.dir.path().join("memd.log")).unwrap();
    eprintln!("{log}");
}

/// A corrupt page redb cannot open the database past: it is set aside, the
/// index rebuilt from the files, and what was learned, read back from the
/// old file where it still verifies, carried over.
#[test]
fn a_database_that_cannot_be_opened_keeps_what_still_verifies() {
    // Enough files for their records to fill pages of their own.
    let (sandbox, db) = populated(300);
    let mut bytes = std::fs::read(&db).unwrap();
    // The page holding a file record's key: its header zeroed.
    let needle = sandbox.root().join("g150.yaml");
    let needle = needle.to_string_lossy();
    // The last copy written is the live one; earlier ones are in pages
    // redb has freed and may have reused for anything.
    let at = bytes
        .windows(needle.len())
        .rposition(|w| w == needle.as_bytes())
        .expect("the record is in the file");
    let page = at / 4096 * 4096;
    bytes[page..page + 64].fill(0xff);
    std::fs::write(&db, &bytes).unwrap();
    let daemon = Daemon::start(&sandbox);
    serves_the_files(&daemon, 300);
    let memd_log = std::fs::read_to_string(sandbox.dir.path().join("memd.log")).unwrap();
    assert!(memd_log.contains("rebuilt"), "{memd_log}");
    let log = daemon.json(&["log", "G-7"]);
    assert!(log.to_string().contains("rust"), "{log}\n{memd_log}");
}

/// A small file system mounted for a test, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// A tmpfs of `size` (e.g. "4m"), or `None` (and the test says it is
    /// skipped) where this process may not mount one.
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: cannot mount a tmpfs here (needs root)");
            return None;
        }
        Some(SmallDisk { dir })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// A full disk makes learning fail, not stop: once space is back the
/// database is reopened and feedback is committed again. Before, every
/// write failed with "Previous I/O error" until memd was restarted.
#[test]
fn learning_resumes_once_a_full_disk_has_space_again() {
    let Some(disk) = SmallDisk::mount("3m") else {
        return;
    };
    let sandbox = Sandbox::new();
    for i in 0..20 {
        sandbox.write(&format!("g{i}.yaml"), gotcha(&format!("G-{i}"), "pool"));
    }
    let socket = sandbox.dir.path().join("run").join("memd.sock");
    let data = disk.dir.path().join("data");
    let log = std::fs::File::create(sandbox.dir.path().join("memd.log")).unwrap();
    let mut child = serve_args(&mut common::memd(), &sandbox, &data, &socket)
        .arg("--root")
        .arg(sandbox.root())
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let _daemon = KillOnDrop(&mut child);
    let feedback = |i: usize| {
        Command::new(memctl_path())
            .args(["feedback", &format!("G-{}", i % 20), "--relevant", "--tags"])
            .arg(format!("tag-{i}"))
            .arg("--socket")
            .arg(&socket)
            .output()
            .unwrap()
    };
    eventually("memd is up", || feedback(0).status.success());
    // Fill the disk.
    let filler = disk.dir.path().join("filler");
    {
        let mut file = std::fs::File::create(&filler).unwrap();
        let chunk = vec![0u8; 64 * 1024];
        while file.write_all(&chunk).is_ok() {}
        let _ = file.sync_all();
    }
    let mut failed = None;
    for i in 1..2000 {
        let out = feedback(i);
        if !out.status.success() {
            failed = Some(stderr(&out));
            break;
        }
    }
    let failed = failed.expect("feedback fails on a full disk");
    assert!(failed.contains("could not commit"), "{failed}");
    std::fs::remove_file(&filler).unwrap();
    let out = feedback(5000);
    assert!(
        out.status.success(),
        "after space is back: {}",
        stderr(&out)
    );
    let out = Command::new(memctl_path())
        .args(["log", "G-0", "--json", "--socket"])
        .arg(&socket)
        .output()
        .unwrap();
    assert!(stdout(&out).contains("tag-5000"), "{}", stdout(&out));
}

/// Stops a child process however the test ends.
struct KillOnDrop<'a>(&'a mut std::process::Child);

impl Drop for KillOnDrop<'_> {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Feedback or tracking on an id nothing defines is refused, not
/// acknowledged (a typo used to be recorded against nothing).
#[test]
fn feedback_on_an_unknown_id_is_not_found() {
    let sandbox = Sandbox::new();
    sandbox.write("g.yaml", gotcha("G-1", "known"));
    let daemon = Daemon::start(&sandbox);
    for args in [
        &["feedback", "G-404", "--relevant", "--tags", "rust"][..],
        &["track", "G-404", "--applied"][..],
    ] {
        let out = daemon.memctl(args);
        assert!(!out.status.success(), "{args:?} was acknowledged");
        assert!(
            stderr(&out).contains("no item `G-404` is loaded"),
            "{}",
            stderr(&out)
        );
    }
    let out = daemon.memctl(&["feedback", "G-1", "--relevant", "--tags", "rust"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Session audits do not pile up for ever: beyond `max_sessions` the oldest
/// are forgotten, in memory and in the store.
#[test]
fn session_audits_are_bounded() {
    let sandbox = Sandbox::new();
    sandbox.write("g.yaml", gotcha("G-1", "database pool"));
    std::fs::write(
        sandbox.config(),
        "roots = []\n[daemon]\nmax_sessions = 5\nsession_days = 7\n",
    )
    .unwrap();
    let mut daemon = Daemon::start(&sandbox);
    for i in 0..12 {
        let out = daemon.memctl(&[
            "query",
            "fix the database pool",
            "--session",
            &format!("s-{i}"),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    // A flood of new sessions is trimmed while it comes.
    eventually("the oldest are forgotten", || {
        daemon.json(&["status"])["ok"]["status"]["sessions"] == 5
    });
    daemon.stop();
    let daemon = Daemon::start(&sandbox);
    eventually("the store kept only the newest", || {
        daemon.json(&["status"])["ok"]["status"]["sessions"] == 5
    });
}

/// The daemon's resident memory, from `/proc`.
fn rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Large requests give their memory back once answered. Before, 30 frames
/// of 12 MiB left 116 MiB resident.
#[test]
fn memory_is_returned_after_large_frames() {
    let sandbox = Sandbox::new();
    sandbox.write("g.yaml", gotcha("G-1", "database pool"));
    let daemon = Daemon::start(&sandbox);
    let pid = daemon.child.id();
    let before = rss_mib(pid);
    let mut task = String::new();
    let mut n = 0u64;
    while task.len() < 12 * 1024 * 1024 {
        n += 1;
        task.push_str(&format!("w{} ", n * 2_654_435_761 % 1_000_000_007));
    }
    let body = serde_json::json!({"version": 1, "request": {"query": {"task": task}}}).to_string();
    let frame = json_frame(&body);
    for _ in 0..30 {
        let mut stream = UnixStream::connect(&daemon.socket).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        stream.write_all(&frame).unwrap();
        let v = read_json_frame(&mut stream);
        assert!(v["outcome"]["ok"].is_object(), "{v}");
    }
    let after = rss_mib(pid);
    assert!(
        after - before < 40.0,
        "resident memory went from {before:.1} to {after:.1} MiB"
    );
}

/// A hook whose reader has gone (stdout closed) still exits 0, without a
/// panic: before, printing the context panicked with "Broken pipe".
#[test]
fn a_hook_with_its_output_closed_exits_0_without_a_panic() {
    let sandbox = Sandbox::new();
    sandbox.write("g.yaml", gotcha("G-1", "database pool"));
    let daemon = Daemon::start(&sandbox);
    let mut hook = spawn_prompt_hook(&daemon.socket, &sandbox.dir.path().join("hook-state"));
    drop(hook.stdout.take());
    hook.stdin
        .take()
        .unwrap()
        .write_all(br#"{"session_id": "s", "prompt": "how do we fix the db pool exhaustion"}"#)
        .unwrap();
    let out = hook.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    // The same for a command's answer.
    let mut status = Command::new(memctl_path())
        .args(["status", "--socket"])
        .arg(&daemon.socket)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(status.stdout.take());
    let out = status.wait_with_output().unwrap();
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}
