//! Helpers shared by the integration tests: run the real `memd` binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The example config shipped in `config/`.
pub fn example_config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config/memd.toml")
}

/// A `memd` command with a clean environment for paths.
pub fn memd() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memd"));
    cmd.env_remove("MEMD_CONFIG").env_remove("MEMD_DATA_DIR");
    cmd
}

/// Runs `memd` with `args`; panics if it could not be started.
pub fn run(args: &[&str]) -> Output {
    memd().args(args).output().expect("memd runs")
}

/// A temporary directory with an empty config (no default roots), so a test
/// sees only the roots it adds.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("memd.toml"), "roots = []\n").unwrap();
        std::fs::create_dir_all(dir.path().join("knowledge")).unwrap();
        Sandbox { dir }
    }

    pub fn config(&self) -> String {
        self.dir.path().join("memd.toml").display().to_string()
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("knowledge")
    }

    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// Runs `memd query` over this sandbox's root with `args`.
    pub fn query(&self, args: &[&str]) -> Output {
        let root = self.root().display().to_string();
        let config = self.config();
        let mut all = vec![
            "query",
            "--config",
            config.as_str(),
            "--root",
            root.as_str(),
        ];
        all.extend_from_slice(args);
        run(&all)
    }
}

/// The sections of a block, without the element memd wraps them in (the
/// seeds' formats are what is inside it). Panics when `block` is not
/// wrapped.
pub fn inner(block: &str) -> &str {
    let block = block.trim_end();
    block
        .strip_prefix(memd::render::OPEN)
        .and_then(|b| b.strip_suffix(memd::render::CLOSE))
        .unwrap_or_else(|| panic!("not a memd block: {block}"))
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The `memctl` binary, built beside `memd` by `cargo test --workspace`.
pub fn memctl_path() -> PathBuf {
    let memd = PathBuf::from(env!("CARGO_BIN_EXE_memd"));
    let path = memd.with_file_name("memctl");
    assert!(
        path.exists(),
        "{} is missing: run the tests with `cargo test --workspace`",
        path.display()
    );
    path
}

/// `memctl hook claude UserPromptSubmit` on `socket`, started with its
/// state under `state_home` and every stream piped.
pub fn spawn_prompt_hook(socket: &Path, state_home: &Path) -> std::process::Child {
    Command::new(memctl_path())
        .args(["hook", "claude", "UserPromptSubmit", "--socket"])
        .arg(socket)
        .env("XDG_STATE_HOME", state_home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs [`spawn_prompt_hook`] with `input` (the agent's hook JSON) on its
/// stdin, to the end; its output.
pub fn run_prompt_hook(
    socket: &Path,
    state_home: &Path,
    input: &serde_json::Value,
) -> std::process::Output {
    use std::io::Write;
    let mut child = spawn_prompt_hook(socket, state_home);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Appends `serve --config CONFIG --data-dir DATA --socket SOCKET` to a
/// command that runs `memd` (directly, or through `setpriv`).
pub fn serve_args<'c>(
    cmd: &'c mut Command,
    sandbox: &Sandbox,
    data_dir: &Path,
    socket: &Path,
) -> &'c mut Command {
    cmd.arg("serve")
        .arg("--config")
        .arg(sandbox.config())
        .arg("--data-dir")
        .arg(data_dir)
        .arg("--socket")
        .arg(socket)
}

/// A running `memd serve` on a sandbox's socket, data dir and root; stopped
/// with SIGTERM when dropped.
pub struct Daemon {
    pub child: std::process::Child,
    pub socket: PathBuf,
    pub data_dir: PathBuf,
}

impl Daemon {
    /// Starts the daemon and waits until it answers `ping`.
    pub fn start(sandbox: &Sandbox) -> Daemon {
        Self::start_with(sandbox, &[])
    }

    /// Starts it with extra environment variables.
    pub fn start_with(sandbox: &Sandbox, env: &[(&str, &str)]) -> Daemon {
        let daemon = Self::spawn(sandbox, env);
        daemon.wait_ready();
        daemon
    }

    /// Spawns it without waiting.
    pub fn spawn(sandbox: &Sandbox, env: &[(&str, &str)]) -> Daemon {
        let socket = sandbox.dir.path().join("run").join("memd.sock");
        let data_dir = sandbox.dir.path().join("data");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(sandbox.dir.path().join("memd.log"))
            .unwrap();
        let mut cmd = memd();
        serve_args(&mut cmd, sandbox, &data_dir, &socket)
            .arg("--root")
            .arg(sandbox.root())
            .env("RUST_LOG", "debug")
            .stdout(std::process::Stdio::null())
            .stderr(log);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("memd serve starts");
        Daemon {
            child,
            socket,
            data_dir,
        }
    }

    /// Waits (up to 20 s) until `memctl ping` succeeds.
    pub fn wait_ready(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if self.memctl(&["ping"]).status.success() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("memd did not come up on {}", self.socket.display());
    }

    /// Runs `memctl` against this daemon, from the sandbox (no repository,
    /// so no environment tags unless a test gives `--cwd` or `--tags`).
    pub fn memctl(&self, args: &[&str]) -> Output {
        Command::new(memctl_path())
            .current_dir(self.data_dir.parent().expect("the sandbox"))
            .args(args)
            .arg("--socket")
            .arg(&self.socket)
            .output()
            .expect("memctl runs")
    }

    /// `memctl ... --json`, parsed; panics unless it succeeded.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.memctl(&all);
        assert!(
            out.status.success(),
            "memctl {args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        serde_json::from_str(&stdout(&out)).expect("memctl prints JSON")
    }

    /// Waits until the recorder thread has applied every showing the
    /// daemon answered so far (`memctl status`: none waiting): what it
    /// keeps (sessions counted in their contexts, match counts, held-back
    /// evidence aged, audits in the store) comes after the reply.
    pub fn recorded(&self) {
        eventually("the recorder has applied every showing", || {
            self.json(&["status"])["ok"]["status"]["recorder"]["waiting"] == 0
        });
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        self.child.wait().expect("memd exits")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(self.child.id().to_string())
                .status();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while std::time::Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The ids of the items of a `memctl query --json` answer, in order.
pub fn item_ids(answer: &serde_json::Value) -> Vec<String> {
    answer["ok"]["answer"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect()
}

/// Polls `check` until it holds, for up to 10 s; panics with `what`
/// otherwise. (Visibility is eventual; the latency budget is measured by
/// the benchmarks, not here.)
pub fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if check() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("timed out waiting until {what}");
}

/// A gotcha file with one item.
pub fn gotcha(id: &str, title: &str) -> String {
    format!("gotchas:\n  - id: {id}\n    title: {title}\n    fix: do the right thing\n    category: db\n")
}

/// The tags of a learned-state entry (`memctl log --json`, or the `judged`
/// of feedback), as listed.
pub fn tag_names(entry: &serde_json::Value) -> Vec<String> {
    entry["tags"]
        .as_array()
        .expect("an entry's tags")
        .iter()
        .map(|t| t["tag"].as_str().unwrap().to_string())
        .collect()
}

/// `memctl add lesson --text TEXT` with `scope` (`--personal`, or `--cwd
/// DIR`): the new id when acknowledged, else what was said.
pub fn add_lesson(daemon: &Daemon, text: &str, scope: &[&str]) -> Result<String, String> {
    let mut args = vec!["add", "lesson", "--text", text, "--json"];
    args.extend_from_slice(scope);
    let out = daemon.memctl(&args);
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap_or_default();
    match answer["ok"]["added"]["id"].as_str() {
        Some(id) => Ok(id.to_string()),
        None => Err(format!("{answer}{}", stderr(&out))),
    }
}

/// The title of gotcha `id` as the daemon serves it, if any.
pub fn title_of(daemon: &Daemon, id: &str) -> Option<String> {
    let out = daemon.memctl(&["get", id, "--json"]);
    if !out.status.success() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).ok()?;
    v["ok"]["item"]["fields"]
        .as_array()?
        .iter()
        .find(|f| f[0] == "title")
        .map(|f| f[1].as_str().unwrap_or_default().to_string())
}

/// A small deterministic generator (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Flips, inserts, deletes and duplicates bytes.
pub fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(out.len() + 1);
        match rng.below(5) {
            0 if at < out.len() => out[at] = rng.next() as u8,
            1 => {
                let specials = b"{}[]:,-\"'&*!|> \n\t";
                out.insert(at, specials[rng.below(specials.len())]);
            }
            2 if at < out.len() => {
                out.remove(at);
            }
            3 => {
                let end = (at + rng.below(40)).min(out.len());
                let chunk = out[at..end].to_vec();
                out.splice(at..at, chunk);
            }
            _ => out.insert(at, rng.next() as u8),
        }
    }
    out
}

/// A frame: the payload's length, its encoding byte (`1` postcard, `2`
/// JSON), the body.
pub fn frame(encoding: u8, body: &[u8]) -> Vec<u8> {
    let mut frame = ((body.len() + 1) as u32).to_be_bytes().to_vec();
    frame.push(encoding);
    frame.extend_from_slice(body);
    frame
}

/// A JSON frame.
pub fn json_frame(body: &str) -> Vec<u8> {
    frame(2, body.as_bytes())
}

/// Reads one frame: (encoding byte, body).
pub fn read_raw_frame(stream: &mut impl std::io::Read) -> (u8, Vec<u8>) {
    let mut header = [0u8; 4];
    stream.read_exact(&mut header).unwrap();
    let mut payload = vec![0u8; u32::from_be_bytes(header) as usize];
    stream.read_exact(&mut payload).unwrap();
    (payload[0], payload[1..].to_vec())
}

/// Reads one frame, which must be JSON, parsed.
pub fn read_json_frame(stream: &mut impl std::io::Read) -> serde_json::Value {
    let (encoding, body) = read_raw_frame(stream);
    assert_eq!(encoding, 2, "answered as JSON");
    serde_json::from_slice(&body).unwrap()
}
