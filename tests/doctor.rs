//! `memctl doctor` against the real daemon and a real `memctl install` in a
//! scratch home: it passes when every link holds, and catches each broken
//! one with its fix.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{memctl_path, stdout, Daemon, Sandbox};

/// A scratch home inside the sandbox, with its own state directory.
fn home(sandbox: &Sandbox) -> PathBuf {
    let home = sandbox.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// `memctl ARGS` as the user of `home`, from the sandbox (no repository).
fn memctl(sandbox: &Sandbox, home: &Path, args: &[&str]) -> Output {
    Command::new(memctl_path())
        .current_dir(sandbox.dir.path())
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env_remove("MEMD_SOCKET")
        .output()
        .unwrap()
}

fn install(sandbox: &Sandbox, home: &Path, socket: &Path) {
    let out = memctl(
        sandbox,
        home,
        &[
            "install",
            "--no-service",
            "--socket",
            socket.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stdout(&out));
}

fn doctor(sandbox: &Sandbox, home: &Path, socket: &Path) -> (Option<i32>, String) {
    let out = memctl(
        sandbox,
        home,
        &["doctor", "--socket", socket.to_str().unwrap()],
    );
    (out.status.code(), stdout(&out))
}

#[test]
fn doctor_passes_when_memd_and_the_hooks_are_in_place() {
    let sandbox = Sandbox::new();
    sandbox.write("g.yaml", common::gotcha("G-1", "database pool"));
    let daemon = Daemon::start(&sandbox);
    let home = home(&sandbox);
    install(&sandbox, &home, &daemon.socket);
    let (code, shown) = doctor(&sandbox, &home, &daemon.socket);
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("ok   daemon: memd"), "{shown}");
    assert!(
        shown.contains(&format!(
            "ok   hooks in {} talks to {}: a memd of yours answers there",
            home.join(".claude/settings.json").display(),
            daemon.socket.display()
        )),
        "{shown}"
    );
    assert!(shown.contains("ok   codex hooks feature"), "{shown}");
    assert!(shown.contains("?    codex hook trust"), "{shown}");
    assert!(shown.contains("ok   knowledge files: no errors"), "{shown}");
    assert!(
        shown.contains(
            "ok   judge: 0 of the 100 pairs of verdicts (on one lesson in one repository) needed"
        ),
        "{shown}"
    );
    // memd's MCP server, registered with both agents, started and spoken to.
    for file in [home.join(".claude.json"), home.join(".codex/config.toml")] {
        assert!(
            shown.contains(&format!(
                "ok   mcp server in {}: `{} mcp --socket {}` answers with memd's tools and reaches memd on {}",
                file.display(),
                memctl_path().display(),
                daemon.socket.display(),
                daemon.socket.display()
            )),
            "{shown}"
        );
    }
    let json = memctl(
        &sandbox,
        &home,
        &[
            "doctor",
            "--json",
            "--socket",
            daemon.socket.to_str().unwrap(),
        ],
    );
    let checks: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert!(
        checks.as_array().unwrap().iter().all(|c| c["ok"] != false),
        "{checks}"
    );
}

#[test]
fn doctor_catches_each_broken_link_with_its_fix() {
    let sandbox = Sandbox::new();
    let home = home(&sandbox);
    let elsewhere = sandbox.dir.path().join("elsewhere.sock");

    // Nothing installed, no daemon.
    let (code, shown) = doctor(&sandbox, &home, &elsewhere);
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("FAIL daemon: memd is not running on"),
        "{shown}"
    );
    assert!(
        shown.contains("fix: start it: `memd serve --socket"),
        "{shown}"
    );
    assert!(
        shown.contains("FAIL hooks: no memd hooks") && shown.contains("fix: run `memctl install`"),
        "{shown}"
    );
    assert!(
        shown.contains("FAIL mcp server: memd's MCP server is registered with none of"),
        "{shown}"
    );

    // The hooks installed for a socket no daemon serves, while memd runs
    // on another: the custom-socket mistake.
    let daemon = Daemon::start(&sandbox);
    install(&sandbox, &home, &elsewhere);
    let (code, shown) = doctor(&sandbox, &home, &daemon.socket);
    assert_eq!(code, Some(1), "{shown}");
    assert!(shown.contains("ok   daemon"), "{shown}");
    assert!(
        shown.contains(&format!(
            "FAIL hooks in {} talks to {}",
            home.join(".claude/settings.json").display(),
            elsewhere.display()
        )),
        "{shown}"
    );
    assert!(shown.contains("memctl install --socket PATH"), "{shown}");
    assert!(
        shown.contains(&format!(
            "FAIL mcp server in {}: its search failed: memd is not running (nothing listens on {})",
            home.join(".claude.json").display(),
            elsewhere.display()
        )),
        "{shown}"
    );

    // Fixed by installing for the daemon's socket; then Codex's feature
    // turned off by hand.
    install(&sandbox, &home, &daemon.socket);
    std::fs::write(
        home.join(".codex/config.toml"),
        "[features]\nhooks = false\n",
    )
    .unwrap();
    let (code, shown) = doctor(&sandbox, &home, &daemon.socket);
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("FAIL codex hooks feature: turned off"),
        "{shown}"
    );
    std::fs::write(
        home.join(".codex/config.toml"),
        "[features]\nhooks = true\n",
    )
    .unwrap();

    // A hook that found no daemon: its kept call is reported.
    let mut hook = Command::new(memctl_path())
        .args(["hook", "claude", "UserPromptSubmit", "--socket"])
        .arg(&elsewhere)
        .env("HOME", &home)
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    hook.stdin
        .take()
        .unwrap()
        .write_all(br#"{"session_id": "s", "prompt": "how do we fix the db pool"}"#)
        .unwrap();
    assert!(hook.wait().unwrap().success());
    let (code, shown) = doctor(&sandbox, &home, &daemon.socket);
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("FAIL hook activity: the last hook call memd did not answer: claude UserPromptSubmit: daemon unreachable"),
        "{shown}"
    );
}

/// The README's quick start: no `roots` in the configuration, so memd
/// reads its defaults (`~/.claude/memory`, where the examples were copied,
/// and `<data dir>/knowledge`, which nothing has created yet). memd makes
/// its own directory, private, and doctor finds every root.
#[test]
fn the_default_roots_pass_doctor_on_a_new_machine() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.config(), "# the defaults\n").unwrap();
    let home = home(&sandbox);
    let memory = home.join(".claude/memory");
    std::fs::create_dir_all(&memory).unwrap();
    std::fs::write(
        memory.join("gotchas.yaml"),
        common::gotcha("G-1", "database pool"),
    )
    .unwrap();
    let socket = sandbox.dir.path().join("run").join("memd.sock");
    let data_dir = sandbox.dir.path().join("data");
    let mut cmd = common::memd();
    common::serve_args(&mut cmd, &sandbox, &data_dir, &socket)
        .env("HOME", &home)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let daemon = common::Daemon {
        child: cmd.spawn().expect("memd serve starts"),
        socket,
        data_dir: data_dir.clone(),
    };
    daemon.wait_ready();
    let own = data_dir.join("knowledge");
    let mode = std::fs::metadata(&own)
        .expect("memd made it")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    install(&sandbox, &home, &daemon.socket);
    let (code, shown) = doctor(&sandbox, &home, &daemon.socket);
    assert_eq!(code, Some(0), "{shown}");
    assert!(
        shown.contains("ok   knowledge roots: 2 roots, 1 files"),
        "{shown}"
    );
}
