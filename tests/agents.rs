//! The real agents: Claude Code, pinned, installed from npm into a cache
//! under the build directory, run non-interactively against a fake
//! Anthropic Messages server on loopback, in a scratch home where
//! `memctl install` put memd's hooks for the test's daemon (its socket in
//! the hook commands, no `MEMD_SOCKET` in the agent's environment).
//!
//! Where npm cannot be reached the test says so and passes, unless
//! `MEMD_REQUIRE_AGENTS` is set (`.ci/run` sets it: CI must prove the
//! agents).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{memctl_path, stdout, Daemon, Sandbox};
use serde_json::{json, Value};

/// The Claude Code the test runs.
const CLAUDE_CODE: &str = "@anthropic-ai/claude-code@2.1.197";
/// What the fake model answers.
const REPLY: &str = "I raised max_connections and the pool no longer runs dry.";

/// An npm package's binary, installed once into a cache under the build
/// directory; `None` (said) when npm cannot install it and CI does not
/// require it.
fn npm_binary(spec: &str, bin: &str) -> Option<PathBuf> {
    let name: String = spec
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("npm-{name}"));
    let binary = prefix.join("node_modules/.bin").join(bin);
    if binary.exists() {
        return Some(binary);
    }
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&prefix)
        .arg(spec)
        .output();
    match out {
        Ok(out) if out.status.success() && binary.exists() => Some(binary),
        other => {
            let why = match other {
                Ok(out) => String::from_utf8_lossy(&out.stderr).into_owned(),
                Err(err) => err.to_string(),
            };
            if std::env::var_os("MEMD_REQUIRE_AGENTS").is_some() {
                panic!("cannot install {spec} from npm, and MEMD_REQUIRE_AGENTS is set: {why}");
            }
            eprintln!("skipped: cannot install {spec} from npm: {why}");
            None
        }
    }
}

/// A fake Anthropic Messages API: every request's path and body kept, each
/// answered with one text message (streamed as server-sent events when
/// asked).
struct FakeAnthropic {
    url: String,
    requests: Arc<Mutex<Vec<(String, String)>>>,
}

impl FakeAnthropic {
    fn start() -> FakeAnthropic {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let kept = kept.clone();
                std::thread::spawn(move || serve(stream, &kept));
            }
        });
        FakeAnthropic { url, requests }
    }

    /// The bodies of the requests to `/v1/messages`.
    fn messages(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(path, _)| path.starts_with("/v1/messages") && !path.contains("count_tokens"))
            .map(|(_, body)| body.clone())
            .collect()
    }
}

/// Serves one keep-alive connection.
fn serve(stream: TcpStream, kept: &Mutex<Vec<(String, String)>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let body = String::from_utf8_lossy(&body).into_owned();
        kept.lock().unwrap().push((path.clone(), body.clone()));
        let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let model = request["model"].as_str().unwrap_or("claude").to_string();
        let (kind, payload) = if path.contains("count_tokens") {
            ("application/json", json!({"input_tokens": 10}).to_string())
        } else if request["stream"] == true {
            let events = [
                (
                    "message_start",
                    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
                ),
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": REPLY}}),
                ),
                (
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 0}),
                ),
                (
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 12}}),
                ),
                ("message_stop", json!({"type": "message_stop"})),
            ];
            let stream: String = events
                .iter()
                .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
                .collect();
            ("text/event-stream", stream)
        } else {
            (
                "application/json",
                json!({"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": [{"type": "text", "text": REPLY}], "stop_reason": "end_turn", "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 12}}).to_string(),
            )
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n",
            payload.len()
        );
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(payload.as_bytes()).is_err()
        {
            return;
        }
    }
}

/// Runs `claude -p PROMPT` (more arguments before it) in `repo`, as the
/// user of `home`, against `api`; returns its JSON result.
fn claude(claude: &Path, home: &Path, repo: &Path, api: &FakeAnthropic, args: &[&str]) -> Value {
    let out = Command::new(claude)
        .current_dir(repo)
        .args(["-p", "--output-format", "json"])
        .args(args)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("ANTHROPIC_BASE_URL", &api.url)
        .env("ANTHROPIC_API_KEY", "sk-test-not-a-key")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env_remove("MEMD_SOCKET")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "claude failed: {}{}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)))
}

/// `memctl ARGS --json` as the user of `home`.
fn memctl_json(home: &Path, socket: &Path, args: &[&str]) -> Value {
    let out = Command::new(memctl_path())
        .args(args)
        .args(["--json", "--socket"])
        .arg(socket)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .output()
        .unwrap();
    serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)))
}

#[test]
fn claude_code_gets_memds_block_through_its_real_hooks() {
    let Some(claude_bin) = npm_binary(CLAUDE_CODE, "claude") else {
        return;
    };
    let sandbox = Sandbox::new();
    sandbox.write(
        "g.yaml",
        "gotchas:\n  - id: G-POOL\n    title: the pool runs dry under load\n    fix: raise max_connections and close idle connections\n    category: db\n",
    );
    let repo = sandbox.dir.path().join("service");
    std::fs::create_dir_all(&repo).unwrap();
    assert!(Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .status()
        .unwrap()
        .success());
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"service\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    let daemon = Daemon::start(&sandbox);
    let home = sandbox.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let install = Command::new(memctl_path())
        .args(["install", "--no-service", "--socket"])
        .arg(&daemon.socket)
        .env("HOME", &home)
        .env_remove("MEMD_SOCKET")
        .output()
        .unwrap();
    assert!(install.status.success(), "{}", stdout(&install));
    let api = FakeAnthropic::start();

    // A session: the prompt's block reaches the model.
    let first = claude(
        &claude_bin,
        &home,
        &repo,
        &api,
        &["how do we fix the db pool exhaustion in this service"],
    );
    assert_eq!(first["result"], REPLY, "{first}");
    let session = first["session_id"].as_str().unwrap().to_string();
    let messages = api.messages();
    assert!(
        messages
            .iter()
            .any(|b| b.contains("the pool runs dry under load")),
        "memd's block is not in any model request"
    );

    // Every hook event fired and said what it did.
    let status = memctl_json(&home, &daemon.socket, &["status"]);
    let hooks = status["ok"]["status"]["hooks"].as_array().unwrap();
    for (event, outcome) in [
        ("SessionStart", None),
        ("UserPromptSubmit", Some("injected")),
        ("SessionEnd", Some("recorded")),
    ] {
        let call = hooks
            .iter()
            .find(|c| c["harness"] == "claude" && c["event"] == event)
            .unwrap_or_else(|| panic!("no {event} call: {status}"));
        if let Some(outcome) = outcome {
            assert!(
                call["outcome"].get(outcome).is_some() || call["outcome"] == outcome,
                "{call}"
            );
        }
    }

    // The evaluator reads the real transcript.
    let evaluated = memctl_json(&home, &daemon.socket, &["evaluate"]);
    let judged: u64 = evaluated["ok"]["evaluated"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["session_id"] == session.as_str())
        .map(|s| s["judged"].as_u64().unwrap_or(0))
        .sum();
    assert!(judged >= 1, "{evaluated}");

    // The session resumed: the same item is not injected again.
    let before = api.messages().len();
    let resumed = claude(
        &claude_bin,
        &home,
        &repo,
        &api,
        &[
            "--resume",
            &session,
            "the db pool is exhausted again, what now",
        ],
    );
    assert_eq!(resumed["session_id"], session.as_str(), "{resumed}");
    let later = api.messages();
    let new_requests = &later[before..];
    assert!(!new_requests.is_empty());
    let last = new_requests.last().unwrap();
    assert_eq!(
        last.matches("the pool runs dry under load").count(),
        messages
            .last()
            .unwrap()
            .matches("the pool runs dry under load")
            .count(),
        "the resumed session's new prompt got the block again"
    );

    // And doctor finds every link in place.
    let doctor = Command::new(memctl_path())
        .args(["doctor", "--socket"])
        .arg(&daemon.socket)
        .current_dir(&repo)
        .env("HOME", &home)
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .output()
        .unwrap();
    assert_eq!(doctor.status.code(), Some(0), "{}", stdout(&doctor));
}
