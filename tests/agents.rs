//! The real agents: Claude Code, Codex CLI and Gemini CLI, pinned,
//! installed from npm into a cache under the build directory, run
//! non-interactively against a fake model server on loopback (Anthropic
//! Messages; OpenAI Responses through a `model_providers` entry; the Gemini
//! API through `GOOGLE_GEMINI_BASE_URL`), in a scratch home where `memctl
//! install` put memd's hooks for the test's daemon (its socket in the hook
//! commands, no `MEMD_SOCKET` in the agent's environment).
//!
//! Where npm cannot be reached the test says so and passes, unless
//! `MEMD_REQUIRE_AGENTS` is set (`.ci/run` sets it: CI must prove the
//! agents).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{memctl_path, stdout, Daemon, Sandbox};
use serde_json::{json, Value};

/// The Claude Code the test runs.
const CLAUDE_CODE: &str = "@anthropic-ai/claude-code@2.1.197";
/// The Codex CLI the test runs.
const CODEX_CLI: &str = "@openai/codex@0.169.0";
/// The Gemini CLI the test runs.
const GEMINI_CLI: &str = "@google/gemini-cli@0.61.0";
/// The OpenCode the test runs.
const OPENCODE: &str = "opencode-ai@1.18.33";
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

/// The API a fake model server speaks.
#[derive(Clone, Copy)]
enum Api {
    /// Anthropic Messages (`/v1/messages`), streamed when asked.
    Anthropic,
    /// OpenAI Responses (`/v1/responses`), streamed.
    OpenAi,
    /// The Gemini API (`/v1beta/models/M:streamGenerateContent`).
    Gemini,
    /// OpenAI Chat Completions (`/v1/chat/completions`), streamed.
    OpenAiChat,
}

/// A fake model server: every request's path and body kept, each answered
/// with one text message, [`REPLY`]; except a request whose prompt holds
/// [`MCP_MARKER`] and that has no tool result yet: that one is answered
/// with calls of memd's MCP tools `feedback` and `remember`, as the agent
/// offered them (see [`mcp_calls`]).
struct FakeModel {
    url: String,
    requests: Arc<Mutex<Vec<(String, String)>>>,
}

impl FakeModel {
    fn start(api: Api) -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let kept = kept.clone();
                std::thread::spawn(move || serve(stream, &kept, api));
            }
        });
        FakeModel { url, requests }
    }

    /// The bodies of the model requests (`/v1/messages`, `/v1/responses`).
    fn messages(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(path, body)| {
                (path.starts_with("/v1/messages") && !path.contains("count_tokens"))
                    || path.starts_with("/v1/responses")
                    || path.contains(":streamGenerateContent")
                    // A turn, not the title a new session gets (no tools).
                    || (path.starts_with("/v1/chat/completions") && body.contains("\"tools\""))
            })
            .map(|(_, body)| body.clone())
            .collect()
    }
}

/// A prompt holding this gets memd's MCP tools called.
const MCP_MARKER: &str = "memd-mcp-turn";
/// The prompt of the scripted turn.
const MCP_PROMPT: &str = "memd-mcp-turn: rate the pool gotcha, and remember the resets";
/// The gotcha the scripted turn remembers.
const REMEMBERED: &str = "Connection resets from the pooler after a deploy";

/// A tool as the agent offered it: its name, and the namespace Codex puts
/// an MCP server's tools in (`mcp__memd`), if any.
#[derive(Clone)]
struct Offered {
    name: String,
    namespace: Option<String>,
}

/// The calls of the scripted turn, by the names the agent gave memd's
/// tools (Claude Code names them `mcp__memd__feedback`; Codex offers
/// `feedback` in a namespace `mcp__memd`). `None` when the request does not
/// offer them.
fn mcp_calls(request: &Value) -> Option<Vec<(Offered, Value)>> {
    let mut offered = Vec::new();
    for tool in request["tools"].as_array()? {
        let name = tool["name"].as_str().unwrap_or_default();
        match tool["tools"].as_array() {
            Some(inner) if name.contains("memd") => offered.extend(inner.iter().filter_map(|t| {
                Some(Offered {
                    name: t["name"].as_str()?.to_string(),
                    namespace: Some(name.to_string()),
                })
            })),
            Some(_) => {}
            None if name.contains("memd") => offered.push(Offered {
                name: name.to_string(),
                namespace: None,
            }),
            None => {}
        }
    }
    let named = |tool: &str| offered.iter().find(|o| o.name.ends_with(tool)).cloned();
    Some(vec![
        (named("search")?, json!({"text": "pool max_connections"})),
        (
            named("feedback")?,
            json!({"id": "G-POOL", "relevant": true, "note": "it was the pool"}),
        ),
        (
            named("remember")?,
            json!({"kind": "gotcha", "title": REMEMBERED, "fix": "Set server_reset_query and retry once on reset."}),
        ),
    ])
}

/// Whether a request should be answered with the scripted tool calls: its
/// prompt asks for them, and it carries no tool result yet.
fn wants_mcp_calls(body: &str) -> bool {
    body.contains(MCP_MARKER)
        && !body.contains("tool_result")
        && !body.contains("function_call_output")
        && !body.contains("functionResponse")
        && !body.contains("\"role\":\"tool\"")
}

/// The scripted calls as Chat Completions offers tools (`memd_feedback`).
fn chat_calls(request: &Value) -> Option<Vec<(Offered, Value)>> {
    let tools: Vec<Value> = request["tools"]
        .as_array()?
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .map(|name| json!({"name": name}))
        .collect();
    mcp_calls(&json!({ "tools": tools }))
}

/// The Chat Completions stream for one answer: text, or tool calls.
fn chat_stream(request: &Value, body: &str) -> String {
    let chunk = |delta: Value, finish: Value| {
        let chunk = json!({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": request["model"], "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}});
        format!("data: {chunk}\n\n")
    };
    let calls = wants_mcp_calls(body).then(|| chat_calls(request)).flatten();
    let mut stream = match calls {
        Some(calls) => {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (tool, args))| json!({"index": i, "id": format!("call_{i}"), "type": "function", "function": {"name": tool.name, "arguments": args.to_string()}}))
                .collect();
            chunk(
                json!({"role": "assistant", "tool_calls": calls}),
                Value::Null,
            ) + &chunk(json!({}), json!("tool_calls"))
        }
        None => {
            chunk(json!({"role": "assistant", "content": REPLY}), Value::Null)
                + &chunk(json!({}), json!("stop"))
        }
    };
    stream.push_str("data: [DONE]\n\n");
    stream
}

/// The scripted calls as the Gemini API offers tools: each a function
/// declaration (`mcp_memd_feedback`). `None` when the request does not
/// offer them.
fn gemini_calls(request: &Value) -> Option<Vec<(Offered, Value)>> {
    let declared: Vec<String> = request["tools"]
        .as_array()?
        .iter()
        .flat_map(|t| {
            t["functionDeclarations"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|f| f["name"].as_str().map(str::to_string))
        .collect();
    let offered = declared
        .into_iter()
        .map(|name| Offered {
            name,
            namespace: None,
        })
        .collect::<Vec<_>>();
    let request =
        json!({"tools": offered.iter().map(|o| json!({"name": o.name})).collect::<Vec<_>>()});
    mcp_calls(&request)
}

/// The Gemini API's envelope around one model turn.
fn gemini_turn(parts: Value) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    })
}

/// A value of the shape a JSON schema asks for (the CLI's side requests
/// that want JSON back).
fn from_schema(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match schema["type"]
        .as_str()
        .unwrap_or("object")
        .to_ascii_lowercase()
        .as_str()
    {
        "object" => Value::Object(
            schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), from_schema(v)))
                .collect(),
        ),
        "array" => json!([]),
        "integer" | "number" => json!(10),
        "boolean" => json!(false),
        _ => json!("fake"),
    }
}

/// The Gemini API's answer to one request on `path`.
fn gemini_answer(path: &str, request: &Value, body: &str) -> (&'static str, String) {
    if path.contains(":countTokens") {
        return ("application/json", json!({"totalTokens": 10}).to_string());
    }
    let schema = &request["generationConfig"];
    let schema = if schema["responseJsonSchema"].is_object() {
        &schema["responseJsonSchema"]
    } else {
        &schema["responseSchema"]
    };
    let parts = match wants_mcp_calls(body)
        .then(|| gemini_calls(request))
        .flatten()
    {
        Some(calls) => Value::Array(
            calls
                .iter()
                .map(|(tool, args)| json!({"functionCall": {"name": tool.name, "args": args}}))
                .collect(),
        ),
        None if schema.is_object() && !path.contains(":streamGenerateContent") => {
            json!([{"text": from_schema(schema).to_string()}])
        }
        None => json!([{"text": REPLY}]),
    };
    let turn = gemini_turn(parts);
    if path.contains(":streamGenerateContent") {
        ("text/event-stream", format!("data: {turn}\n\n"))
    } else {
        ("application/json", turn.to_string())
    }
}

/// Server-sent events, each named by its type.
fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
        .collect()
}

/// The Responses API's stream for one assistant message.
fn openai_stream() -> String {
    let item = json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": REPLY, "annotations": []}]});
    sse(&[
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        ),
        (
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}}),
        ),
        (
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": REPLY}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": [item], "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 22}}}),
        ),
    ])
}

/// The Responses API's stream for function calls.
fn openai_calls_stream(calls: &[(Offered, Value)]) -> String {
    let items: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (tool, arguments))| {
            let mut item = json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"), "name": tool.name, "arguments": arguments.to_string(), "status": "completed"});
            if let Some(namespace) = &tool.namespace {
                item["namespace"] = json!(namespace);
            }
            item
        })
        .collect();
    let mut events = vec![(
        "response.created",
        json!({"type": "response.created", "response": {"id": "resp_2", "status": "in_progress", "output": []}}),
    )];
    for (i, item) in items.iter().enumerate() {
        events.push((
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": i, "item": item}),
        ));
        events.push((
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": i, "item": item}),
        ));
    }
    events.push((
        "response.completed",
        json!({"type": "response.completed", "response": {"id": "resp_2", "status": "completed", "output": items, "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 12, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 22}}}),
    ));
    sse(&events)
}

/// The Messages API's stream for tool uses.
fn anthropic_calls_stream(model: &str, calls: &[(Offered, Value)]) -> String {
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_2", "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    )];
    for (i, (tool, input)) in calls.iter().enumerate() {
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": format!("toolu_{i}"), "name": tool.name, "input": {}}}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        ));
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": i}),
        ));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 12}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    sse(&events)
}

/// Serves one keep-alive connection.
fn serve(stream: TcpStream, kept: &Mutex<Vec<(String, String)>>, api: Api) {
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
        let calls = wants_mcp_calls(&body)
            .then(|| mcp_calls(&request))
            .flatten();
        let (kind, payload) = if matches!(api, Api::Gemini) {
            gemini_answer(&path, &request, &body)
        } else if matches!(api, Api::OpenAiChat) {
            ("text/event-stream", chat_stream(&request, &body))
        } else if let Some(calls) = calls.filter(|_| {
            path.starts_with("/v1/responses")
                || (path.starts_with("/v1/messages") && request["stream"] == true)
        }) {
            let stream = match api {
                Api::OpenAi => openai_calls_stream(&calls),
                _ => anthropic_calls_stream(&model, &calls),
            };
            ("text/event-stream", stream)
        } else if matches!(api, Api::OpenAi) {
            if path.starts_with("/v1/responses") {
                ("text/event-stream", openai_stream())
            } else {
                (
                    "application/json",
                    json!({"object": "list", "data": []}).to_string(),
                )
            }
        } else if path.contains("count_tokens") {
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
            ("text/event-stream", sse(&events))
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

/// The gotcha every agent's prompt should get.
const GOTCHA: &str = "the pool runs dry under load";
/// The prompt that asks for it.
const PROMPT: &str = "how do we fix the db pool exhaustion in this service";
/// A later prompt of the same session, resumed.
const RESUMED_PROMPT: &str = "the db pool is exhausted again, what now";

/// A daemon with one gotcha, a Rust repository to work in, and a scratch
/// home where `memctl install` put the hooks for the daemon's socket.
struct World {
    /// Kept for its directory's life.
    _sandbox: Sandbox,
    daemon: Daemon,
    repo: PathBuf,
    home: PathBuf,
}

impl World {
    fn new() -> World {
        World::new_with(|_| {})
    }

    /// A world whose scratch home `prepare` fills before the install.
    fn new_with(prepare: impl FnOnce(&Path)) -> World {
        let sandbox = Sandbox::new();
        sandbox.write(
            "g.yaml",
            format!("gotchas:\n  - id: G-POOL\n    title: {GOTCHA}\n    fix: raise max_connections and close idle connections\n    category: db\n"),
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
        prepare(&home);
        let world = World {
            _sandbox: sandbox,
            daemon,
            repo,
            home,
        };
        let socket = world.daemon.socket.to_str().unwrap().to_string();
        world.run(
            &memctl_path(),
            &["install", "--no-service", "--socket", &socket],
            &[],
        );
        world
    }

    /// Runs `program ARGS` in the repository as the user of the scratch
    /// home, with `env` and without `MEMD_SOCKET` (the hooks must find the
    /// daemon by themselves); returns its output, whatever its exit code.
    fn output(&self, program: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
        Command::new(program)
            .current_dir(&self.repo)
            .args(args)
            // As a shell would set it: OpenCode takes its project from it.
            .env("PWD", &self.repo)
            .env("HOME", &self.home)
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .envs(env.iter().copied())
            .env_remove("MEMD_SOCKET")
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap()
    }

    /// [`World::output`] of a run that must succeed: its stdout.
    fn run(&self, program: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
        let out = self.output(program, args, env);
        assert!(
            out.status.success(),
            "{} failed: {}{}",
            program.display(),
            stdout(&out),
            String::from_utf8_lossy(&out.stderr)
        );
        stdout(&out)
    }

    /// `memctl ARGS --json` on the daemon, parsed.
    fn memctl(&self, args: &[&str]) -> Value {
        let socket = self.daemon.socket.to_str().unwrap();
        let mut all = args.to_vec();
        all.extend(["--json", "--socket", socket]);
        let out = self.output(&memctl_path(), &all, &[]);
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)))
    }

    /// `claude -p --output-format json ARGS` against `api`: its result.
    fn claude(&self, claude: &Path, api: &FakeModel, args: &[&str]) -> Value {
        let mut all = vec!["-p", "--output-format", "json"];
        all.extend_from_slice(args);
        let out = self.run(
            claude,
            &all,
            &[
                ("ANTHROPIC_BASE_URL", &api.url),
                ("ANTHROPIC_API_KEY", "sk-test-not-a-key"),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                ("DISABLE_AUTOUPDATER", "1"),
            ],
        );
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    }

    /// `codex exec --json --skip-git-repo-check ARGS` (the home's config
    /// names the fake provider): its JSON events.
    fn codex_exec(&self, codex: &Path, args: &[&str]) -> Vec<Value> {
        let mut all = vec!["exec", "--json", "--skip-git-repo-check"];
        all.extend_from_slice(args);
        self.run(codex, &all, &[("FAKE_OPENAI_KEY", "not-a-key")])
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// `gemini -p PROMPT -o json ARGS` against `api`: its exit code and
    /// result (`Null` when it printed none).
    fn gemini(
        &self,
        gemini: &Path,
        api: &FakeModel,
        prompt: &str,
        args: &[&str],
    ) -> (Option<i32>, Value) {
        let mut all = vec!["-p", prompt, "-o", "json"];
        all.extend_from_slice(args);
        let out = self.output(
            gemini,
            &all,
            &[
                ("GOOGLE_GEMINI_BASE_URL", &api.url),
                ("GEMINI_API_KEY", "not-a-key"),
                ("GEMINI_CLI_NO_RELAUNCH", "true"),
                ("NO_COLOR", "1"),
            ],
        );
        let text = stdout(&out);
        let result = text
            .find('{')
            .and_then(|start| serde_json::from_str(&text[start..]).ok())
            .unwrap_or(Value::Null);
        (out.status.code(), result)
    }

    /// `opencode run -m fake/m --format json PROMPT ARGS` (the prompt's
    /// words as words of their own): its exit code and the session it ran.
    fn opencode(
        &self,
        opencode: &Path,
        prompt: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (Option<i32>, String) {
        let mut all = vec!["run", "-m", "fake/m", "--format", "json"];
        all.extend_from_slice(args);
        all.extend(prompt.split_whitespace());
        let mut env = env.to_vec();
        env.extend([
            ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
            ("OPENCODE_DISABLE_SHARE", "1"),
            ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
        ]);
        let out = self.output(opencode, &all, &env);
        let session = stdout(&out)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|e| e["sessionID"].as_str().map(str::to_string))
            .unwrap_or_default();
        (out.status.code(), session)
    }

    /// An agent's first session where the start comes with the first
    /// prompt: the prompt's block and the line on memd's tools reached the
    /// model, the prompt's hook injected and the end one recorded, and the
    /// evaluation judged the session and moved the learned score. Returns
    /// how often the gotcha is in the last request.
    fn assert_first_session(
        &self,
        api: &FakeModel,
        harness: &str,
        [prompt, end]: [&str; 2],
        session: &str,
    ) -> usize {
        let copies = copies_in_last(api);
        assert!(copies >= 1, "memd's block is not in the model request");
        let request = api.messages().pop().unwrap();
        assert!(
            request.contains("memd's MCP tools"),
            "no tools line: {request}"
        );
        assert!(self.hook_outcome(harness, prompt)["injected"].is_object());
        assert_eq!(self.hook_outcome(harness, end), "recorded");
        let unjudged = self.pool_score();
        assert!(self.judged(session) >= 1);
        assert_ne!(self.pool_score(), unjudged, "the verdict moved nothing");
        copies
    }

    /// What the last call of a hook event came to (panics if there was
    /// none).
    fn hook_outcome(&self, harness: &str, event: &str) -> Value {
        let status = self.memctl(&["status"]);
        status["ok"]["status"]["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["harness"] == harness && c["event"] == event)
            .map(|c| c["outcome"].clone())
            .unwrap_or_else(|| panic!("no {harness} {event} call: {status}"))
    }

    /// How many items the evaluator judged for `session`.
    fn judged(&self, session: &str) -> u64 {
        let evaluated = self.memctl(&["evaluate"]);
        evaluated["ok"]["evaluated"]["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["session_id"] == session)
            .map(|s| s["judged"].as_u64().unwrap_or(0))
            .sum()
    }

    /// The learned relevance of the gotcha for the repository's own tag.
    fn pool_score(&self) -> f64 {
        let log = self.memctl(&["log", "G-POOL"]);
        let tags = log["ok"]["log"][0]["tags"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        tags.iter()
            .find(|t| t["tag"] == "service")
            .and_then(|t| t["score"].as_f64())
            .unwrap_or(0.0)
    }

    /// What the scripted turn's calls of memd's MCP tools did: the search's
    /// hits sent back to the model; seed 001's
    /// direct feedback from the score `before` (EMA, alpha 0.3, weight 2.0
    /// for a relevant verdict), the gotcha remembered in the repository's
    /// `.memd/` and found from there, and both tools' answers sent back to
    /// the model.
    fn assert_mcp_turn_took_effect(&self, api: &FakeModel, before: f64) {
        let expected = 0.7 * before + 0.3 * 2.0;
        let after = self.pool_score();
        assert!(
            (after - expected).abs() < 1e-9,
            "feedback through MCP: {before} -> {after}, not {expected}"
        );
        let repo = self.repo.to_str().unwrap();
        let hits = self.memctl(&["search", REMEMBERED, "--cwd", repo]);
        let first = &hits["ok"]["hits"][0];
        assert_eq!(first["kind"], "gotcha", "{hits}");
        assert!(
            first["source"]
                .as_str()
                .unwrap()
                .starts_with(&self.repo.join(".memd/gotchas.yaml").display().to_string()),
            "{hits}"
        );
        let last = api.messages().pop().unwrap_or_default();
        assert!(
            last.contains("Remembered as"),
            "the tool's answer reached the model"
        );
        assert!(
            last.contains("Recorded"),
            "the tool's answer reached the model"
        );
        assert!(
            last.contains("G-POOL"),
            "the search's answer reached the model"
        );
    }

    /// `memctl doctor`'s exit code and text, from the repository.
    fn doctor(&self) -> (Option<i32>, String) {
        let socket = self.daemon.socket.to_str().unwrap();
        let out = self.output(&memctl_path(), &["doctor", "--socket", socket], &[]);
        (out.status.code(), stdout(&out))
    }
}

/// How often the gotcha appears in the last model request.
fn copies_in_last(api: &FakeModel) -> usize {
    api.messages()
        .last()
        .map_or(0, |b| b.matches(GOTCHA).count())
}

#[test]
fn claude_code_gets_memds_block_through_its_real_hooks() {
    let Some(claude_bin) = npm_binary(CLAUDE_CODE, "claude") else {
        return;
    };
    let world = World::new();
    let api = FakeModel::start(Api::Anthropic);

    // A session: the prompt's block reaches the model.
    let first = world.claude(&claude_bin, &api, &[PROMPT]);
    assert_eq!(first["result"], REPLY, "{first}");
    let session = first["session_id"].as_str().unwrap().to_string();
    let copies = copies_in_last(&api);
    assert!(copies >= 1, "memd's block is not in the model request");

    // Every hook event fired and said what it did.
    world.hook_outcome("claude", "SessionStart");
    assert!(world.hook_outcome("claude", "UserPromptSubmit")["injected"].is_object());
    assert_eq!(world.hook_outcome("claude", "SessionEnd"), "recorded");

    // The evaluator reads the real transcript.
    assert!(world.judged(&session) >= 1);

    // The session resumed: the block is in its history, not added again.
    let resumed = world.claude(&claude_bin, &api, &["--resume", &session, RESUMED_PROMPT]);
    assert_eq!(resumed["session_id"], session.as_str(), "{resumed}");
    assert_eq!(
        copies_in_last(&api),
        copies,
        "the resumed session got the block again"
    );

    // A turn where the model calls memd's MCP tools through Claude Code:
    // `feedback` runs as install allowed it; `remember`, which writes into
    // the repository, is allowed for this run as a user would.
    let before = world.pool_score();
    let turn = world.claude(
        &claude_bin,
        &api,
        &[MCP_PROMPT, "--allowedTools", "mcp__memd__remember"],
    );
    assert_eq!(turn["result"], REPLY, "{turn}");
    world.assert_mcp_turn_took_effect(&api, before);

    // And doctor finds every link in place.
    let (code, shown) = world.doctor();
    assert_eq!(code, Some(0), "{shown}");
}

#[test]
fn codex_cli_gets_memds_block_through_its_real_hooks() {
    let Some(codex_bin) = npm_binary(CODEX_CLI, "codex") else {
        return;
    };
    let world = World::new();
    let api = FakeModel::start(Api::OpenAi);
    // The fake server as Codex's model provider; top-level keys go before
    // the tables install wrote.
    let config = world.home.join(".codex/config.toml");
    let installed = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!(
            "model = \"gpt-test\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"FAKE_OPENAI_KEY\"\n\n{installed}",
            api.url
        ),
    )
    .unwrap();
    let exec = |args: &[&str]| world.codex_exec(&codex_bin, args);

    // Untrusted, Codex skips memd's hooks without a word: no block; doctor
    // tells from the session Codex wrote.
    let (_, before) = world.doctor();
    assert!(before.contains("?    codex hook trust"), "{before}");
    exec(&[PROMPT]);
    assert_eq!(copies_in_last(&api), 0, "untrusted hooks ran");
    let (code, shown) = world.doctor();
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("FAIL codex hook trust: Codex ran a session since memd started, and none of memd's hooks was called"),
        "{shown}"
    );

    // Trusted for this run: the prompt's block reaches the model.
    let events = exec(&["--dangerously-bypass-hook-trust", PROMPT]);
    let thread = events
        .iter()
        .find_map(|e| e["thread_id"].as_str())
        .expect("a thread id")
        .to_string();
    let copies = copies_in_last(&api);
    assert!(copies >= 1, "memd's block is not in the model request");
    assert!(world.hook_outcome("codex", "UserPromptSubmit")["injected"].is_object());
    assert_eq!(world.hook_outcome("codex", "Stop"), "recorded");
    world.hook_outcome("codex", "SessionStart");

    // The evaluator reads the real rollout.
    assert!(world.judged(&thread) >= 1);

    // Resumed: the block is in the history, not added again.
    exec(&[
        "resume",
        "--dangerously-bypass-hook-trust",
        &thread,
        RESUMED_PROMPT,
    ]);
    assert_eq!(
        copies_in_last(&api),
        copies,
        "the resumed session got the block again"
    );

    // A turn where the model calls memd's MCP tools through Codex:
    // `feedback` runs as install approved it; `remember`, which writes into
    // the repository, asks first, so this run approves it as a user would.
    let before = world.pool_score();
    exec(&[
        "--dangerously-bypass-hook-trust",
        "-c",
        "mcp_servers.memd.tools.remember.approval_mode=\"approve\"",
        MCP_PROMPT,
    ]);
    world.assert_mcp_turn_took_effect(&api, before);

    let (code, shown) = world.doctor();
    assert_eq!(code, Some(0), "{shown}");
}

#[test]
fn gemini_cli_gets_memds_block_through_its_real_hooks() {
    let Some(gemini_bin) = npm_binary(GEMINI_CLI, "gemini") else {
        return;
    };
    // Gemini CLI's own settings, as a user of the API would have them: the
    // API key's auth, a model (no routing call), no usage statistics, and
    // its session cleanup off (it can remove a resumed session's file).
    let world = World::new_with(|home| {
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        std::fs::write(
            home.join(".gemini/settings.json"),
            "{\n  // the user's own\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n  \"model\": {\"name\": \"gemini-2.5-flash\"},\n  \"privacy\": {\"usageStatisticsEnabled\": false},\n  \"general\": {\"sessionRetention\": {\"enabled\": false}},\n  \"tools\": {\"useRipgrep\": false}\n}\n",
        )
        .unwrap();
    });
    let api = FakeModel::start(Api::Gemini);
    let settings = std::fs::read_to_string(world.home.join(".gemini/settings.json")).unwrap();
    assert!(settings.contains("// the user's own"), "{settings}");
    assert!(settings.contains("hook gemini BeforeAgent"), "{settings}");

    // The repository is not trusted yet: Gemini CLI would load no hook;
    // doctor says so and how to trust it.
    let (code, shown) = world.doctor();
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("FAIL gemini folder trust in") && shown.contains("TRUST_FOLDER"),
        "{shown}"
    );
    let (code, _) = world.gemini(&gemini_bin, &api, PROMPT, &[]);
    assert_ne!(code, Some(0), "an untrusted folder ran headless");
    std::fs::write(
        world.home.join(".gemini/trustedFolders.json"),
        json!({world.repo.to_str().unwrap(): "TRUST_FOLDER"}).to_string(),
    )
    .unwrap();

    // A session: the prompt's block, and the session's start with the line
    // on memd's tools, reach the model with the first prompt.
    let (code, first) = world.gemini(&gemini_bin, &api, PROMPT, &[]);
    assert_eq!(code, Some(0), "{first}");
    assert_eq!(first["response"], REPLY, "{first}");
    let session = first["session_id"].as_str().unwrap().to_string();
    // The evaluator reads Gemini CLI's own transcript.
    let copies =
        world.assert_first_session(&api, "gemini", ["BeforeAgent", "SessionEnd"], &session);

    // Resumed: the block is in the history, not added again, and the
    // first prompt is still there.
    let (code, resumed) = world.gemini(&gemini_bin, &api, RESUMED_PROMPT, &["--resume", "latest"]);
    assert_eq!(code, Some(0), "{resumed}");
    assert_eq!(resumed["session_id"], session.as_str(), "{resumed}");
    assert_eq!(
        copies_in_last(&api),
        copies,
        "the resumed session got the block again"
    );
    assert!(api.messages().pop().unwrap().contains(PROMPT));

    // A turn where the model calls memd's MCP tools: `feedback` runs as
    // install's policy allows it; `remember`, which writes into the
    // repository, is allowed by a rule of the user's own, as a user would.
    std::fs::write(
        world.home.join(".gemini/policies/mine.toml"),
        "[[rule]]\nmcpName = \"memd\"\ntoolName = \"mcp_memd_remember\"\ndecision = \"allow\"\npriority = 100\n",
    )
    .unwrap();
    let before = world.pool_score();
    let (code, turn) = world.gemini(&gemini_bin, &api, MCP_PROMPT, &[]);
    assert_eq!(code, Some(0), "{turn}");
    world.assert_mcp_turn_took_effect(&api, before);

    let (code, shown) = world.doctor();
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("ok   gemini folder trust"), "{shown}");

    // A hook taken out by hand: doctor names it and the fix.
    let settings = world.home.join(".gemini/settings.json");
    let installed = std::fs::read_to_string(&settings).unwrap();
    let mut doc: Value = serde_json::from_str(
        &installed
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    doc["hooks"].as_object_mut().unwrap().remove("BeforeAgent");
    std::fs::write(&settings, doc.to_string()).unwrap();
    let (code, shown) = world.doctor();
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("no memd hook for BeforeAgent\n     fix: run `memctl install`"),
        "{shown}"
    );
    std::fs::write(&settings, installed).unwrap();

    // memd down: Gemini CLI runs as before, and nothing of memd's reaches
    // the model.
    let mut world = world;
    world.daemon.stop();
    let (code, alone) = world.gemini(&gemini_bin, &api, PROMPT, &[]);
    assert_eq!(code, Some(0), "{alone}");
    assert_eq!(alone["response"], REPLY, "{alone}");
    assert_eq!(copies_in_last(&api), 0, "memd's block without memd");
}

#[test]
fn opencode_gets_memds_block_through_its_plugin() {
    let Some(opencode_bin) = npm_binary(OPENCODE, "opencode") else {
        return;
    };
    let api = FakeModel::start(Api::OpenAiChat);
    // OpenCode's own config, as a user of an OpenAI-compatible provider
    // would have it (the provider's package ships inside OpenCode); the
    // package OpenCode installs for plugins marked as present, so the run
    // needs no registry.
    let url = api.url.clone();
    let world = World::new_with(|home| {
        let dir = home.join(".config/opencode");
        std::fs::create_dir_all(dir.join("node_modules")).unwrap();
        std::fs::write(
            dir.join("package-lock.json"),
            json!({"packages": {"": {"dependencies": {"@opencode-ai/plugin": "1.18.33"}}}})
                .to_string(),
        )
        .unwrap();
        std::fs::write(
            dir.join("opencode.jsonc"),
            format!("{{\n  // the user's own\n  \"provider\": {{\n    \"fake\": {{\"npm\": \"@ai-sdk/openai-compatible\", \"name\": \"Fake\", \"options\": {{\"baseURL\": \"{url}/v1\", \"apiKey\": \"not-a-key\"}}, \"models\": {{\"m\": {{\"name\": \"Fake M\"}}}}}}\n  }},\n  \"autoupdate\": false\n}}\n"),
        )
        .unwrap();
    });
    let config =
        std::fs::read_to_string(world.home.join(".config/opencode/opencode.jsonc")).unwrap();
    assert!(
        config.contains("// the user's own") && config.contains("\"memd_remember\": \"ask\""),
        "{config}"
    );
    assert!(world
        .home
        .join(".config/opencode/plugins/memd.js")
        .is_file());

    // A session: the prompt's block, and the session's start with the line
    // on memd's tools, reach the model with the first prompt.
    let (code, session) = world.opencode(&opencode_bin, PROMPT, &[], &[]);
    assert_eq!(code, Some(0));
    assert!(session.starts_with("ses_"), "{session}");
    // The evaluator reads the session's messages as the plugin wrote them.
    let copies =
        world.assert_first_session(&api, "opencode", ["chat.message", "session.idle"], &session);

    // Resumed: the block is in the history, not added again.
    let (code, resumed) =
        world.opencode(&opencode_bin, RESUMED_PROMPT, &["--session", &session], &[]);
    assert_eq!(code, Some(0));
    assert_eq!(resumed, session);
    assert_eq!(
        copies_in_last(&api),
        copies,
        "the resumed session got the block again"
    );

    // A turn where the model calls memd's MCP tools: `feedback` runs;
    // `remember`, which asks (and which `opencode run` refuses), is
    // allowed for this run as a user would.
    let before = world.pool_score();
    let (code, _) = world.opencode(
        &opencode_bin,
        MCP_PROMPT,
        &[],
        &[("OPENCODE_PERMISSION", "{\"memd_remember\": \"allow\"}")],
    );
    assert_eq!(code, Some(0));
    world.assert_mcp_turn_took_effect(&api, before);

    let (code, shown) = world.doctor();
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("ok   plugin "), "{shown}");

    // The plugin taken away by hand: doctor names it and the fix.
    let plugin = world.home.join(".config/opencode/plugins/memd.js");
    let installed = std::fs::read(&plugin).unwrap();
    std::fs::remove_file(&plugin).unwrap();
    let (code, shown) = world.doctor();
    assert_eq!(code, Some(1), "{shown}");
    assert!(
        shown.contains("memd.js: missing, while OpenCode has memd's MCP server")
            && shown.contains("fix: run `memctl install`"),
        "{shown}"
    );
    std::fs::write(&plugin, installed).unwrap();

    // memd down: OpenCode runs as before, and nothing of memd's reaches
    // the model.
    let mut world = world;
    world.daemon.stop();
    let (code, _) = world.opencode(&opencode_bin, PROMPT, &[], &[]);
    assert_eq!(code, Some(0));
    assert_eq!(copies_in_last(&api), 0, "memd's block without memd");
}
