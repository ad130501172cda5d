//! The real binaries a bench runs: `memctl`, built from the current
//! sources, and `memd serve` on the bench's own config, data directory,
//! socket and root.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The release `memctl`, built first: cargo builds a bench's own binaries
/// only, so a `memctl` left from an earlier build would be measured
/// otherwise.
pub fn memctl_path() -> PathBuf {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "-q", "-p", "memctl"])
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building memctl failed");
    PathBuf::from(env!("CARGO_BIN_EXE_memd")).with_file_name("memctl")
}

/// `memd serve` with these paths, ready for its output and to spawn.
pub fn memd_serve(config: &Path, data_dir: &Path, socket: &Path, root: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_memd"));
    command
        .arg("serve")
        .arg("--config")
        .arg(config)
        .arg("--data-dir")
        .arg(data_dir)
        .arg("--socket")
        .arg(socket)
        .arg("--root")
        .arg(root);
    command
}

/// Runs `hook` (a `memctl hook claude EVENT` with its environment) with
/// `input` on stdin, as an agent does; returns the context it injected
/// (empty when none).
#[allow(dead_code)] // not every bench runs a hook
pub fn hook_context(hook: &mut Command, input: &serde_json::Value) -> String {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = hook
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("memctl runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.to_string().as_bytes())
        .expect("the hook reads its input");
    let out = child.wait_with_output().expect("the hook ends");
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .ok()
        .and_then(|v| {
            v["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_default()
}
