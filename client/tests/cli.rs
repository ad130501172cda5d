//! `memctl` without a daemon: clear messages, the right exit codes. (The
//! daemon's own tests in the root package drive `memctl` against a real
//! `memd`.)

use std::process::Command;

fn memctl() -> Command {
    Command::new(env!("CARGO_BIN_EXE_memctl"))
}

#[test]
fn without_a_daemon_it_says_how_to_start_one() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("absent.sock");
    let out = memctl()
        .args(["ping", "--socket"])
        .arg(&socket)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("memd is not running"), "{err}");
    assert!(err.contains("memd serve"), "{err}");
    assert!(err.contains(&socket.display().to_string()), "{err}");
}

#[test]
fn help_version_and_bad_commands() {
    let out = memctl().arg("--help").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("memctl status"));
    let out = memctl().arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("memctl "));
    let out = memctl().arg("frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = memctl()
        .args(["explain"])
        .env("MEMD_SOCKET", "/nonexistent/x.sock")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs an item id"));
}
