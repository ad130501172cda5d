//! Service-manager integration: systemd socket activation (through the
//! real `systemd-socket-activate`) and the READY notification.

mod common;

use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{memctl_path, stdout, Daemon, Sandbox};

#[test]
fn socket_activation_answers_the_first_connection() {
    let tool = std::path::Path::new("/usr/bin/systemd-socket-activate");
    if !tool.exists() {
        eprintln!("skipped: systemd-socket-activate is not installed");
        return;
    }
    let sandbox = Sandbox::new();
    sandbox.write(
        "g.yaml",
        "gotchas:\n  - {id: G-1, title: activated, fix: f}\n",
    );
    let socket = sandbox.dir.path().join("activated.sock");
    let mut child = Command::new(tool)
        .arg("-l")
        .arg(&socket)
        .arg(env!("CARGO_BIN_EXE_memd"))
        .args(["serve", "--config", &sandbox.config(), "--data-dir"])
        .arg(sandbox.dir.path().join("data"))
        .arg("--root")
        .arg(sandbox.root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    common::eventually("the activation socket exists", || socket.exists());
    // The first connection starts memd, which answers it.
    let out = Command::new(memctl_path())
        .args(["get", "G-1", "--socket"])
        .arg(&socket)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout(&out).contains("activated"));
    let status = Command::new(memctl_path())
        .args(["status", "--socket"])
        .arg(&socket)
        .output()
        .unwrap();
    assert!(stdout(&status).contains(&socket.display().to_string()));
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let _ = child.wait();
    assert!(
        socket.exists(),
        "an activated socket belongs to the service manager and stays"
    );
}

#[test]
fn an_inherited_descriptor_that_is_no_listener_is_refused_clearly() {
    let sandbox = Sandbox::new();
    let not_a_socket = sandbox.write("plain.txt", "not a socket");
    let socket = sandbox.dir.path().join("own.sock");
    // LISTEN_FDS=1 with a regular file on fd 3: memd must say so, not
    // quietly bind a socket of its own that systemd knows nothing about.
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"exec "$@" 3<"$FILE""#)
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_memd"))
        .args(["serve", "--config", &sandbox.config(), "--data-dir"])
        .arg(sandbox.dir.path().join("data"))
        .arg("--socket")
        .arg(&socket)
        .env("FILE", &not_a_socket)
        .env("LISTEN_FDS", "1")
        .env_remove("LISTEN_PID")
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(
        err.contains("cannot use the socket passed by systemd"),
        "{err}"
    );
    assert_eq!(err.matches("not a socket").count(), 1, "said once: {err}");
    assert!(!socket.exists());
}

#[test]
fn ready_is_sent_once_the_index_is_loaded() {
    let sandbox = Sandbox::new();
    sandbox.write("g.yaml", "gotchas:\n  - {id: G-1, title: ready, fix: f}\n");
    let notify = sandbox.dir.path().join("notify.sock");
    let receiver = UnixDatagram::bind(&notify).unwrap();
    receiver
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let daemon = Daemon::start_with(&sandbox, &[("NOTIFY_SOCKET", notify.to_str().unwrap())]);
    let mut buf = [0u8; 256];
    let n = receiver.recv(&mut buf).expect("a notification");
    let message = String::from_utf8_lossy(&buf[..n]).to_string();
    assert!(message.contains("READY=1"), "{message}");
    // Ready means ready: the item is served.
    let out = daemon.memctl(&["get", "G-1"]);
    assert!(stdout(&out).contains("ready"));
}

#[test]
fn the_units_pass_systemd_analyze_verify() {
    let tool = std::path::Path::new("/usr/bin/systemd-analyze");
    if !tool.exists() {
        eprintln!("skipped: systemd-analyze is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let runtime = dir.path().join("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let units = concat!(env!("CARGO_MANIFEST_DIR"), "/systemd");
    let mut paths = Vec::new();
    for name in ["memd.socket", "memd.service"] {
        let text = std::fs::read_to_string(format!("{units}/{name}")).unwrap();
        // ExecStart must name an existing binary for verify: use the one built.
        let text = text.replace("%h/.cargo/bin/memd", env!("CARGO_BIN_EXE_memd"));
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        paths.push(path);
    }
    let out = Command::new(tool)
        .args(["verify", "--user"])
        .args(&paths)
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The LaunchAgent runs `memd serve` and has launchd create a private Unix
/// stream socket under the name memd asks launchd for.
const PLIST_CHECK: &str = "
import plistlib, sys
d = plistlib.load(open(sys.argv[1], 'rb'))
assert d['Label'] == 'dev.memd', d
assert d['ProgramArguments'][1:] == ['serve'], d
s = d['Sockets'][sys.argv[2]]
assert s['SockPathName'].startswith('/'), s
assert s['SockPathMode'] == 0o600, s
assert s['SockFamily'] == 'Unix' and s['SockType'] == 'stream', s
";

#[test]
fn the_launch_agent_is_a_valid_property_list() {
    let plist = concat!(env!("CARGO_MANIFEST_DIR"), "/launchd/dev.memd.plist");
    let check = Command::new("python3")
        .args(["-c", PLIST_CHECK])
        .arg(plist)
        .arg(memd::daemon::activation::LAUNCHD_SOCKET_NAME)
        .output();
    match check {
        Ok(out) => assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => eprintln!("skipped: python3 is not installed"),
    }
}
